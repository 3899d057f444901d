/* SPDX-License-Identifier: MIT
 *
 * capture.c: the commit hook (engine.h, "Change capture"). At commit,
 * inside the transaction, the hook reads the transaction's changes through
 * a struct engine_commit, which decodes them one at a time from the redo
 * log (redo.c; docs/formats.md, "Commit payload") rather than copying them:
 * the log already holds them in order, undone statements and savepoints
 * cut out, an UPDATE with only its changed columns, each row's key beside
 * it.
 *
 * The hook runs with the transaction open (also for an autocommit
 * statement, whose commit this is), so SQL it runs joins the transaction
 * and commits with it. What it writes lands in the redo log after the
 * point the commit's reader stops at, so it is never shown to the hook.
 * Changes to system tables (system_table.c) are skipped as they are read.
 * A hook that fails, or that ends the transaction itself, makes the whole
 * transaction roll back here, before anything is written.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"
#include "storage.h"
#include "storage_int.h"

/* The committing transaction as the hook reads it. The change handed out
 * points into the redo log and into the arrays below. */
struct engine_commit {
    struct engine_db *db;
    size_t offset; /* the next entry in db->redo */
    size_t end;    /* db->redo's size when the hook was called */
    /* From the last table entry (T, then P). */
    struct common_buf table; /* its name, NUL-terminated */
    bool table_is_system;
    size_t *key_columns;     /* the declared PRIMARY KEY's columns */
    size_t key_column_count; /* 0: keyed by rowid */
    /* The key of the next row entry: a K entry's values, the key columns
     * of an insert, or the rowid. */
    struct engine_change_value *key;
    size_t key_count;
    bool has_key_entry; /* a K entry is waiting for its U or D */
    /* The columns and values of the change handed out. */
    size_t *columns;
    struct engine_change_value *values;
    size_t capacity;       /* of key_columns, key, columns and values */
    struct common_buf sql; /* a schema change's text, NUL-terminated */
    uint64_t stamp;
    bool has_message;
    char message[ENGINE__ERRMSG_SIZE];
};

const struct engine_unique_key *
engine__capture_primary_key(const struct engine_table *table)
{
    for (size_t k = 0; k < table->key_count; k++) {
        if (table->keys[k].primary) {
            return &table->keys[k];
        }
    }
    return NULL;
}

int engine_commit_hook_set(struct engine_db *db, engine_commit_hook_cb hook,
                           void *ctx)
{
    struct engine_capture *capture = &db->change_capture;

    ASSERT(db != NULL);
    if (db->in_transaction || capture->committing || capture->applying) {
        return engine__db_error(db, ENGINE_EMISUSE,
                                "cannot change the commit hook within a "
                                "transaction");
    }
    capture->hook = hook;
    capture->hook_ctx = ctx;
    /* A file database records its changes for the WAL anyway; a ":memory:"
     * one only for the hook. */
    db->capture = hook != NULL || engine__storage_is_file(db);
    return 0;
}

/* ---- reading the redo log ---- */

/* Grows one array to capacity items of size bytes. */
static int grow(void **array, size_t capacity, size_t size)
{
    void *grown = common_realloc_array(*array, capacity, size);

    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    *array = grown;
    return 0;
}

static int reserve(struct engine_commit *commit, uint64_t count)
{
    size_t capacity = commit->capacity ? commit->capacity : 16;
    int rc;

    if (count > ENGINE_MAX_COLUMNS + 1) {
        return ENGINE_ECORRUPT;
    }
    if (count <= commit->capacity) {
        return 0;
    }
    while (capacity < count) {
        capacity *= 2;
    }
    /* Each array keeps its old items when a later one cannot grow. */
    rc = grow((void **)&commit->key_columns, capacity,
              sizeof(*commit->key_columns));
    rc = rc ? rc : grow((void **)&commit->key, capacity, sizeof(*commit->key));
    rc = rc ? rc
            : grow((void **)&commit->columns, capacity,
                   sizeof(*commit->columns));
    rc = rc ? rc
            : grow((void **)&commit->values, capacity, sizeof(*commit->values));
    if (rc == 0) {
        commit->capacity = capacity;
    }
    return rc;
}

static int get_value(struct common_reader *reader,
                     struct engine_change_value *out)
{
    struct engine_value v;

    if (engine__storage_get_value(reader, &v) != 0) {
        return ENGINE_ECORRUPT;
    }
    memset(out, 0, sizeof(*out));
    out->type = v.type;
    if (v.type == ENGINE_INTEGER) {
        out->integer = v.u.i;
    } else if (v.type == ENGINE_FLOAT) {
        out->real = v.u.r;
    } else if (v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) {
        out->bytes = v.u.s.bytes;
        out->size = v.u.s.size;
    }
    return 0;
}

static int get_varint(struct common_reader *reader, uint64_t *out)
{
    return common_reader_varint(reader, out) != 0 ? ENGINE_ECORRUPT : 0;
}

static int get_rowid(struct common_reader *reader, int64_t *out)
{
    uint64_t word;
    int rc = get_varint(reader, &word);

    *out = common_zigzag_decode(word);
    return rc;
}

/* A length-prefixed text, copied NUL-terminated into buf. */
static int get_text(struct common_reader *reader, struct common_buf *buf)
{
    uint64_t size;
    const uint8_t *bytes;

    if (common_reader_varint(reader, &size) != 0 || size > ENGINE_MAX_LENGTH ||
        common_reader_bytes(reader, (size_t)size, &bytes) != 0) {
        return ENGINE_ECORRUPT;
    }
    common_buf_truncate(buf, 0);
    if (common_buf_append(buf, bytes, (size_t)size) != 0 ||
        common_buf_append_byte(buf, 0) != 0) {
        return COMMON_ENOMEM;
    }
    return 0;
}

static int read_table(struct engine_commit *commit,
                      struct common_reader *reader)
{
    int rc = get_text(reader, &commit->table);

    if (rc == 0) {
        commit->table_is_system =
            engine__system_is_name((const char *)commit->table.data);
        commit->key_column_count = 0;
        commit->has_key_entry = false;
    }
    return rc;
}

static int read_key_columns(struct engine_commit *commit,
                            struct common_reader *reader)
{
    uint64_t count, column;
    int rc = get_varint(reader, &count);

    rc = rc ? rc : reserve(commit, count);
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        rc = get_varint(reader, &column);
        commit->key_columns[i] = (size_t)column;
    }
    commit->key_column_count = rc ? 0 : (size_t)count;
    return rc;
}

static int read_key(struct engine_commit *commit, struct common_reader *reader)
{
    uint64_t count;
    int rc = get_varint(reader, &count);

    rc = rc ? rc : reserve(commit, count);
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        rc = get_value(reader, &commit->key[i]);
    }
    commit->key_count = (size_t)count;
    commit->has_key_entry = rc == 0;
    return rc;
}

/* The key of a U or D entry: the K entry before it, or the rowid. */
static int take_key(struct engine_commit *commit, int64_t rowid)
{
    if (commit->key_column_count > 0) {
        if (!commit->has_key_entry) {
            return ENGINE_ECORRUPT;
        }
        commit->has_key_entry = false;
        return 0;
    }
    memset(&commit->key[0], 0, sizeof(commit->key[0]));
    commit->key[0].type = ENGINE_INTEGER;
    commit->key[0].integer = rowid;
    commit->key_count = 1;
    return 0;
}

static int read_insert(struct engine_commit *commit,
                       struct common_reader *reader, size_t *count_out)
{
    int64_t rowid;
    uint64_t count;
    int rc = get_rowid(reader, &rowid);

    rc = rc ? rc : get_varint(reader, &count);
    rc = rc ? rc : reserve(commit, count + 1);
    for (uint64_t c = 0; rc == 0 && c < count; c++) {
        commit->columns[c] = (size_t)c;
        rc = get_value(reader, &commit->values[c]);
    }
    if (rc != 0) {
        return rc;
    }
    *count_out = (size_t)count;
    for (size_t i = 0; i < commit->key_column_count; i++) {
        if (commit->key_columns[i] >= count) {
            return ENGINE_ECORRUPT;
        }
        commit->key[i] = commit->values[commit->key_columns[i]];
    }
    commit->key_count = commit->key_column_count;
    return commit->key_column_count > 0 ? 0 : take_key(commit, rowid);
}

static int read_update(struct engine_commit *commit,
                       struct common_reader *reader, size_t *count_out)
{
    int64_t old_rowid, new_rowid;
    uint64_t count, column;
    int rc = get_rowid(reader, &old_rowid);

    rc = rc ? rc : get_rowid(reader, &new_rowid);
    rc = rc ? rc : get_varint(reader, &count);
    rc = rc ? rc : reserve(commit, count + 1);
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        rc = get_varint(reader, &column);
        commit->columns[i] = (size_t)column;
        rc = rc ? rc : get_value(reader, &commit->values[i]);
    }
    *count_out = (size_t)count;
    return rc ? rc : take_key(commit, old_rowid);
}

static int read_delete(struct engine_commit *commit,
                       struct common_reader *reader)
{
    int64_t rowid;
    int rc = get_rowid(reader, &rowid);

    rc = rc ? rc : reserve(commit, 1);
    return rc ? rc : take_key(commit, rowid);
}

static void row_change(struct engine_commit *commit,
                       enum engine_change_kind kind, size_t value_count,
                       struct engine_change *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    out->table = (const char *)commit->table.data;
    out->key = commit->key;
    out->key_count = commit->key_count;
    out->columns = value_count > 0 ? commit->columns : NULL;
    out->values = value_count > 0 ? commit->values : NULL;
    out->value_count = value_count;
}

static int read_schema(struct engine_commit *commit,
                       struct common_reader *reader, struct engine_change *out,
                       bool *ready)
{
    bool is_system = false;
    int rc = get_text(reader, &commit->sql);

    rc = rc ? rc
            : engine__system_is_ddl((const char *)commit->sql.data,
                                    commit->sql.size - 1, &is_system);
    /* A schema change may drop or recreate the table row entries named:
     * the next one names its table again (redo.c). */
    common_buf_truncate(&commit->table, 0);
    commit->key_column_count = 0;
    if (rc == 0 && !is_system) {
        memset(out, 0, sizeof(*out));
        out->kind = ENGINE_CHANGE_SCHEMA;
        out->sql = (const char *)commit->sql.data;
        *ready = true;
    }
    return rc;
}

/* Decodes one entry; *ready when it is a change to hand out. */
static int read_entry(struct engine_commit *commit,
                      struct common_reader *reader, uint8_t kind,
                      struct engine_change *out, bool *ready)
{
    bool row = kind == ENGINE__REDO_INSERT || kind == ENGINE__REDO_UPDATE ||
               kind == ENGINE__REDO_DELETE;
    size_t count = 0;
    int64_t ignored;
    int rc;

    if ((row || kind == ENGINE__REDO_KEY) && commit->table.size == 0) {
        return ENGINE_ECORRUPT;
    }
    switch (kind) {
    case ENGINE__REDO_TABLE:
        return read_table(commit, reader);
    case ENGINE__REDO_PRIMARY_KEY:
        return read_key_columns(commit, reader);
    case ENGINE__REDO_KEY:
        return read_key(commit, reader);
    case ENGINE__REDO_INSERT:
        rc = read_insert(commit, reader, &count);
        row_change(commit, ENGINE_CHANGE_INSERT, count, out);
        break;
    case ENGINE__REDO_UPDATE:
        rc = read_update(commit, reader, &count);
        row_change(commit, ENGINE_CHANGE_UPDATE, count, out);
        break;
    case ENGINE__REDO_DELETE:
        rc = read_delete(commit, reader);
        row_change(commit, ENGINE_CHANGE_DELETE, 0, out);
        break;
    case ENGINE__REDO_SCHEMA:
        return read_schema(commit, reader, out, ready);
    case ENGINE__REDO_USER_VERSION:
        return get_rowid(reader, &ignored);
    default:
        return ENGINE_ECORRUPT;
    }
    /* An UPDATE that changed no column (only the rowid of a table keyed by
     * its PRIMARY KEY) is no change to the row's key or columns. */
    *ready = rc == 0 && !commit->table_is_system &&
             (kind != ENGINE__REDO_UPDATE || count > 0);
    return rc;
}

int engine_commit_next(struct engine_commit *commit, struct engine_change *out)
{
    struct engine_db *db = commit->db;
    bool ready = false;

    ASSERT(out != NULL);
    while (!ready) {
        struct common_reader reader;
        uint8_t kind;
        int rc;

        if (commit->end > db->redo.size) {
            /* The transaction was rolled back under the hook. */
            return ENGINE_EMISUSE;
        }
        if (commit->offset >= commit->end) {
            return ENGINE_DONE;
        }
        common_reader_init(&reader, db->redo.data + commit->offset,
                           commit->end - commit->offset);
        rc = common_reader_byte(&reader, &kind) != 0
                 ? ENGINE_ECORRUPT
                 : read_entry(commit, &reader, kind, out, &ready);
        if (rc != 0) {
            return rc;
        }
        commit->offset = commit->end - common_reader_remaining(&reader);
    }
    return ENGINE_ROW;
}

void engine_commit_rewind(struct engine_commit *commit)
{
    commit->offset = 0;
    common_buf_truncate(&commit->table, 0);
    commit->key_column_count = 0;
    commit->has_key_entry = false;
}

void engine_commit_set_stamp(struct engine_commit *commit, uint64_t stamp)
{
    commit->stamp = stamp;
}

int engine_commit_veto(struct engine_commit *commit, int rc, const char *format,
                       ...)
{
    va_list args;

    va_start(args, format);
    vsnprintf(commit->message, sizeof(commit->message), format, args);
    va_end(args);
    commit->has_message = true;
    return rc;
}

/* ---- the commit ---- */

static void commit_init(struct engine_commit *commit, struct engine_db *db)
{
    memset(commit, 0, sizeof(*commit));
    commit->db = db;
    commit->end = db->redo.size;
    common_buf_init(&commit->table, ENGINE_MAX_LENGTH);
    common_buf_init(&commit->sql, ENGINE_MAX_LENGTH);
}

static void commit_close(struct engine_commit *commit)
{
    common_buf_close(&commit->table);
    common_buf_close(&commit->sql);
    common_free(commit->key_columns);
    common_free(commit->key);
    common_free(commit->columns);
    common_free(commit->values);
}

/* The message COMMIT fails with after the hook returned rc. */
static int hook_error(struct engine_db *db, const struct engine_commit *commit,
                      int rc)
{
    char reason[ENGINE__ERRMSG_SIZE];

    if (commit->has_message) {
        return engine__db_error(db, rc, "%s", commit->message);
    }
    /* The hook passed on the error of SQL it ran: that SQL's message. */
    snprintf(reason, sizeof(reason), "%s",
             db->errcode == rc ? db->errmsg : engine_strerror(rc));
    return engine__db_error(db, rc, "commit hook failed: %s", reason);
}

/* Calls the hook when the transaction has a change to show it; *stamp is
 * the stamp it gave. 0, or the error recorded on db. */
static int run_hook(struct engine_db *db, uint64_t *stamp)
{
    struct engine_capture *capture = &db->change_capture;
    struct engine_commit commit;
    struct engine_change change;
    int rc;

    commit_init(&commit, db);
    rc = engine_commit_next(&commit, &change);
    if (rc == ENGINE_ROW) {
        /* The hook's own SQL (a module's bookkeeping rows) is not the
         * user's: changes(), total_changes() and last_insert_rowid() keep
         * what the user's statements left, as SQLite's do across its
         * internal writes. */
        int64_t changes = db->changes, total = db->total_changes;
        int64_t rowid = db->last_insert_rowid;

        engine_commit_rewind(&commit);
        rc = capture->hook(capture->hook_ctx, db, &commit);
        db->changes = changes;
        db->total_changes = total;
        db->last_insert_rowid = rowid;
        rc = rc > 0 ? ENGINE_EABORT : rc;
        rc = rc ? hook_error(db, &commit, rc) : 0;
    } else if (rc == ENGINE_DONE) {
        rc = 0;
    } else {
        rc = engine__db_error(db, rc, "%s", engine_strerror(rc));
    }
    *stamp = commit.stamp;
    commit_close(&commit);
    return rc;
}

/* Ends the transaction without writing anything. */
static int roll_back(struct engine_db *db, int rc)
{
    engine__undo_rollback(db, 0);
    engine__redo_truncate(db, 0);
    db->in_transaction = false;
    return rc;
}

int engine__capture_commit(struct engine_db *db, uint64_t *stamp)
{
    struct engine_capture *capture = &db->change_capture;
    bool in_transaction = db->in_transaction;
    uint64_t commit_stamp = 0;
    int rc = 0;

    *stamp = 0;
    if (capture->committing) {
        return roll_back(db, engine__db_error(db, ENGINE_EMISUSE,
                                              "cannot commit from within a "
                                              "commit hook"));
    }
    if (capture->applying && !capture->apply_commit) {
        return roll_back(db, engine__db_error(db, ENGINE_EMISUSE,
                                              "cannot commit within "
                                              "engine_apply_transaction()"));
    }
    /* Replaying commits another handle made (storage_share.c) or the
     * WAL at open: they were captured where they were made. */
    if (db->replaying || (capture->hook == NULL && !capture->applying)) {
        return 0;
    }
    /* The hook's SQL, and the stamp's write, join the transaction. */
    capture->committing = true;
    db->in_transaction = true;
    if (capture->applying) {
        commit_stamp = capture->apply_stamp;
    } else {
        rc = run_hook(db, &commit_stamp);
    }
    if (rc == 0 && !db->in_transaction) {
        rc = engine__db_error(db, ENGINE_EMISUSE,
                              "the commit hook ended the transaction");
    }
    if (rc == 0 && commit_stamp != 0 && db->undo_count > 0) {
        rc = engine__system_stamp_write(db, commit_stamp);
    }
    capture->committing = false;
    db->in_transaction = in_transaction;
    if (rc != 0) {
        return roll_back(db, rc);
    }
    *stamp = commit_stamp;
    return 0;
}
