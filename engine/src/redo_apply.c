/* SPDX-License-Identifier: MIT
 *
 * redo_apply.c: applying a committed transaction's payload (redo.c's
 * encoding) to a database, as opening does for each WAL record. Row
 * entries are written straight into the tables, without constraint checks
 * or affinity: they record what a transaction that passed those checks
 * wrote. Schema entries run their DDL text again; key entries (P, K) are
 * for change capture and change nothing. Anything that does not
 * decode, or names a table or row that is not there, means the log does
 * not belong to this database: ENGINE_ECORRUPT.
 */
#include <math.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

struct apply {
    struct engine_db *db;
    struct common_reader reader;
    struct engine_table *table;
    struct engine_value *values; /* column_count of table */
    size_t values_capacity;
};

int engine__storage_get_value(struct common_reader *reader,
                              struct engine_value *out)
{
    uint8_t type;
    uint64_t word;
    const uint8_t *bytes;

    if (common_reader_byte(reader, &type) != 0) {
        return ENGINE_ECORRUPT;
    }
    memset(out, 0, sizeof(*out));
    out->type = type;
    switch (type) {
    case ENGINE_NULL:
        return 0;
    case ENGINE_INTEGER:
        if (common_reader_varint(reader, &word) != 0) {
            return ENGINE_ECORRUPT;
        }
        out->u.i = common_zigzag_decode(word);
        return 0;
    case ENGINE_FLOAT:
        if (common_reader_u64le(reader, &word) != 0) {
            return ENGINE_ECORRUPT;
        }
        memcpy(&out->u.r, &word, sizeof(word));
        /* The engine never stores a NaN (it becomes NULL, as in SQLite):
         * one in a file is damage, and comparing it undefined. */
        return isnan(out->u.r) ? ENGINE_ECORRUPT : 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        if (common_reader_varint(reader, &word) != 0 ||
            word > ENGINE_MAX_LENGTH ||
            common_reader_bytes(reader, (size_t)word, &bytes) != 0) {
            return ENGINE_ECORRUPT;
        }
        out->u.s.bytes = bytes;
        out->u.s.size = (size_t)word;
        return 0;
    default:
        return ENGINE_ECORRUPT;
    }
}

static int get_rowid(struct common_reader *reader, int64_t *out)
{
    uint64_t word;

    if (common_reader_varint(reader, &word) != 0) {
        return ENGINE_ECORRUPT;
    }
    *out = common_zigzag_decode(word);
    return 0;
}

/* A NUL-terminated copy of a length-prefixed text, in the arena. */
static int get_text(struct common_reader *reader, struct engine_arena *arena,
                    char **out)
{
    uint64_t size;
    const uint8_t *bytes;

    if (common_reader_varint(reader, &size) != 0 || size > ENGINE_MAX_LENGTH ||
        common_reader_bytes(reader, (size_t)size, &bytes) != 0) {
        return ENGINE_ECORRUPT;
    }
    *out = engine__arena_alloc(arena, (size_t)size + 1);
    if (*out == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(*out, bytes, (size_t)size);
    (*out)[size] = '\0';
    return 0;
}

static int switch_table(struct apply *apply)
{
    struct engine_arena arena;
    char *name;
    int rc;

    engine__arena_init(&arena);
    rc = get_text(&apply->reader, &arena, &name);
    if (rc == 0) {
        apply->table = engine__catalog_find(apply->db, name);
        rc = apply->table == NULL ? ENGINE_ECORRUPT : 0;
    }
    engine__arena_close(&arena);
    if (rc == 0 && apply->values_capacity < apply->table->column_count) {
        size_t capacity = apply->table->column_count;
        struct engine_value *values =
            common_realloc_array(apply->values, capacity, sizeof(*values));

        if (values == NULL) {
            return COMMON_ENOMEM;
        }
        apply->values = values;
        apply->values_capacity = capacity;
    }
    return rc;
}

static int apply_insert(struct apply *apply)
{
    struct engine_table *table = apply->table;
    int64_t rowid;
    uint64_t count;
    size_t slot;
    int rc = get_rowid(&apply->reader, &rowid);

    if (rc != 0 || common_reader_varint(&apply->reader, &count) != 0 ||
        count != table->column_count ||
        engine__table_find_rowid(table, rowid) >= 0) {
        return ENGINE_ECORRUPT;
    }
    for (size_t c = 0; c < table->column_count; c++) {
        rc = engine__storage_get_value(&apply->reader, &apply->values[c]);
        if (rc != 0) {
            return rc;
        }
    }
    return engine__table_insert(table, rowid, apply->values, &slot);
}

static int apply_update(struct apply *apply)
{
    struct engine_table *table = apply->table;
    int64_t old_rowid, new_rowid;
    uint64_t count, column;
    ptrdiff_t slot;

    if (get_rowid(&apply->reader, &old_rowid) != 0 ||
        get_rowid(&apply->reader, &new_rowid) != 0 ||
        common_reader_varint(&apply->reader, &count) != 0 ||
        (slot = engine__table_find_rowid(table, old_rowid)) < 0 ||
        (new_rowid != old_rowid &&
         engine__table_find_rowid(table, new_rowid) >= 0)) {
        return ENGINE_ECORRUPT;
    }
    for (size_t c = 0; c < table->column_count; c++) {
        apply->values[c] = engine__table_get(table, (size_t)slot, c);
    }
    for (uint64_t i = 0; i < count; i++) {
        if (common_reader_varint(&apply->reader, &column) != 0 ||
            column >= table->column_count ||
            engine__storage_get_value(&apply->reader, &apply->values[column]) !=
                0) {
            return ENGINE_ECORRUPT;
        }
    }
    return engine__table_update(table, (size_t)slot, new_rowid, apply->values);
}

static int apply_delete(struct apply *apply)
{
    int64_t rowid;
    ptrdiff_t slot;

    if (get_rowid(&apply->reader, &rowid) != 0 ||
        (slot = engine__table_find_rowid(apply->table, rowid)) < 0) {
        return ENGINE_ECORRUPT;
    }
    engine__table_delete(apply->table, (size_t)slot);
    return 0;
}

static int apply_schema(struct apply *apply)
{
    struct engine_arena arena;
    char *sql;
    int rc;

    engine__arena_init(&arena);
    rc = get_text(&apply->reader, &arena, &sql);
    if (rc == 0) {
        /* System tables are created like any (run_schema). */
        rc = engine__dbfile_run_schema(
            apply->db, sql,
            1u << AST_STMT_CREATE_TABLE | 1u << AST_STMT_DROP_TABLE |
                1u << AST_STMT_CREATE_INDEX | 1u << AST_STMT_DROP_INDEX |
                1u << AST_STMT_CREATE_VIEW | 1u << AST_STMT_DROP_VIEW |
                1u << AST_STMT_ALTER_TABLE | 1u << AST_STMT_CREATE_TRIGGER |
                1u << AST_STMT_DROP_TRIGGER);
    }
    engine__arena_close(&arena);
    apply->table = NULL;
    return rc;
}

/* P and K entries (keys, for change capture) change nothing: they are
 * checked and skipped. */
static int skip_key_columns(struct apply *apply)
{
    uint64_t count, column;

    if (common_reader_varint(&apply->reader, &count) != 0 ||
        count > apply->table->column_count) {
        return ENGINE_ECORRUPT;
    }
    for (uint64_t i = 0; i < count; i++) {
        if (common_reader_varint(&apply->reader, &column) != 0 ||
            column >= apply->table->column_count) {
            return ENGINE_ECORRUPT;
        }
    }
    return 0;
}

static int skip_key(struct apply *apply)
{
    struct engine_value value;
    uint64_t count;

    if (common_reader_varint(&apply->reader, &count) != 0 ||
        count > apply->table->column_count) {
        return ENGINE_ECORRUPT;
    }
    for (uint64_t i = 0; i < count; i++) {
        if (engine__storage_get_value(&apply->reader, &value) != 0) {
            return ENGINE_ECORRUPT;
        }
    }
    return 0;
}

static int apply_entry(struct apply *apply, uint8_t kind)
{
    int64_t version;

    if (kind != ENGINE__REDO_TABLE && kind != ENGINE__REDO_SCHEMA &&
        kind != ENGINE__REDO_USER_VERSION && apply->table == NULL) {
        return ENGINE_ECORRUPT;
    }
    switch (kind) {
    case ENGINE__REDO_TABLE:
        return switch_table(apply);
    case ENGINE__REDO_INSERT:
        return apply_insert(apply);
    case ENGINE__REDO_UPDATE:
        return apply_update(apply);
    case ENGINE__REDO_DELETE:
        return apply_delete(apply);
    case ENGINE__REDO_PRIMARY_KEY:
        return skip_key_columns(apply);
    case ENGINE__REDO_KEY:
        return skip_key(apply);
    case ENGINE__REDO_SCHEMA:
        return apply_schema(apply);
    case ENGINE__REDO_USER_VERSION:
        if (get_rowid(&apply->reader, &version) != 0) {
            return ENGINE_ECORRUPT;
        }
        apply->db->user_version = version;
        return 0;
    default:
        return ENGINE_ECORRUPT;
    }
}

int engine__redo_apply(struct engine_db *db, const uint8_t *payload,
                       size_t size)
{
    struct apply apply = {.db = db};
    bool capture = db->capture;
    uint8_t kind;
    int rc = 0;

    ASSERT(!db->in_transaction);
    db->capture = false;
    common_reader_init(&apply.reader, payload, size);
    while (rc == 0 && common_reader_remaining(&apply.reader) > 0) {
        rc = common_reader_byte(&apply.reader, &kind);
        rc = rc ? ENGINE_ECORRUPT : apply_entry(&apply, kind);
    }
    common_free(apply.values);
    db->capture = capture;
    return rc;
}
