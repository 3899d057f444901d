/* SPDX-License-Identifier: MIT
 *
 * quorum_restore.c: installing a snapshot (quorum_snapshot.c; layout in
 * quorum.h) in place of the whole database (Raft §7, InstallSnapshot:
 * "if the snapshot is newer, discard the state machine and load it").
 *
 * The bytes are checked (magic, version, sizes, checksum) before anything
 * is touched; a database already at or past the snapshot's index is kept
 * (a re-delivered or older snapshot must never move state back). The
 * replacement is one engine transaction: every user view and table is
 * dropped, the snapshot's schema created (each statement through
 * engine_apply_change(), which accepts exactly one CREATE of a table,
 * index or view), its rows and metadata inserted. Anything malformed past
 * the checksum (a snapshot built by a buggy or hostile peer) rolls the
 * transaction back.
 */
#include <string.h>

#include "quorum.h"

struct restore {
    struct replication_quorum *q;
    struct common_reader body;
    struct replication__quorum_state state;
};

/* A size-prefixed string without NULs, appended NUL-terminated to out. */
static int read_text(struct common_reader *r, struct common_buf *out)
{
    const uint8_t *bytes = NULL;
    uint64_t size;
    int rc;

    rc = common_reader_varint(r, &size);
    if (rc == 0 && size > common_reader_remaining(r)) {
        rc = COMMON_ECORRUPT;
    }
    rc =
        rc == 0 && size > 0 ? common_reader_bytes(r, (size_t)size, &bytes) : rc;
    if (rc == 0 && size > 0 && memchr(bytes, 0, (size_t)size) != NULL) {
        rc = COMMON_ECORRUPT;
    }
    rc = rc == 0 ? common_buf_append(out, bytes, (size_t)size) : rc;
    return rc == 0 ? common_buf_append_byte(out, 0) : rc;
}

/* The user tables' (or views') names, NUL-terminated, into names. */
static int table_names(struct engine_db *db, struct common_buf *names,
                       bool views)
{
    struct engine_stmt *stmt = NULL;
    const char *name;
    int rc;

    rc = engine_prepare(db,
                        views ? "SELECT name FROM sqlite_schema WHERE type = "
                                "'view'"
                              : "SELECT name FROM sqlite_schema WHERE type = "
                                "'table'",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        name = engine_column_text(stmt, 0);
        rc = name != NULL ? common_buf_append(names, name, strlen(name) + 1)
                          : COMMON_ENOMEM;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int drop_tables(struct engine_db *db)
{
    struct common_buf names;
    struct common_buf sql;
    size_t at = 0, views;
    int rc;

    common_buf_init(&names, SIZE_MAX);
    common_buf_init(&sql, SIZE_MAX);
    /* The views first (the snapshot brings its own), then the tables. */
    rc = table_names(db, &names, true);
    views = names.size;
    rc = rc == 0 ? table_names(db, &names, false) : rc;
    while (rc == 0 && at < names.size) {
        const char *name = (const char *)names.data + at;
        common_buf_truncate(&sql, 0);
        rc = common_buf_append(&sql, at < views ? "DROP VIEW " : "DROP TABLE ",
                               at < views ? 10 : 11);
        rc = rc == 0 ? replication__quorum_quote(&sql, name) : rc;
        rc = rc == 0 ? common_buf_append_byte(&sql, 0) : rc;
        rc = rc == 0 ? engine_exec(db, (const char *)sql.data, NULL, NULL) : rc;
        at += strlen(name) + 1;
    }
    common_buf_close(&sql);
    common_buf_close(&names);
    return rc;
}

/* Creates the snapshot's objects; the tables' names into tables. */
static int create_objects(struct restore *x, struct common_buf *tables)
{
    struct engine_change change = {.kind = ENGINE_CHANGE_SCHEMA};
    struct common_buf text;
    uint64_t count;
    uint8_t type;
    int rc;

    common_buf_init(&text, SIZE_MAX);
    rc = common_reader_varint(&x->body, &count);
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        common_buf_truncate(&text, 0);
        rc = common_reader_byte(&x->body, &type);
        if (rc == 0 && type != REPLICATION__QUORUM_OBJECT_TABLE &&
            type != REPLICATION__QUORUM_OBJECT_INDEX) {
            rc = COMMON_ECORRUPT;
        }
        rc = rc == 0 ? read_text(&x->body, &text) : rc;
        if (rc == 0 && type == REPLICATION__QUORUM_OBJECT_TABLE) {
            rc = common_buf_append(tables, text.data, text.size);
        }
        common_buf_truncate(&text, 0);
        rc = rc == 0 ? read_text(&x->body, &text) : rc;
        change.sql = (const char *)text.data;
        rc = rc == 0 ? engine_apply_change(x->q->db, &change) : rc;
    }
    common_buf_close(&text);
    return rc;
}

/* INSERT INTO "table"(<rowid>, "c", ...) VALUES(?, ...) for the count
 * columns in names. */
static int insert_sql(const char *table, const struct common_buf *names,
                      size_t count, struct common_buf *sql)
{
    const char *rowid = NULL;
    size_t at = 0;
    int rc;

    rc = replication__quorum_rowid_name(names, count, &rowid);
    rc = rc == 0 ? common_buf_append(sql, "INSERT INTO ", 12) : rc;
    rc = rc == 0 ? replication__quorum_quote(sql, table) : rc;
    rc = rc == 0 ? common_buf_append_byte(sql, '(') : rc;
    rc = rc == 0 ? common_buf_append(sql, rowid, strlen(rowid)) : rc;
    for (size_t c = 0; rc == 0 && c < count; c++) {
        const char *name = (const char *)names->data + at;
        rc = common_buf_append_byte(sql, ',');
        rc = rc == 0 ? replication__quorum_quote(sql, name) : rc;
        at += strlen(name) + 1;
    }
    rc = rc == 0 ? common_buf_append(sql, ") VALUES(?", 10) : rc;
    for (size_t c = 0; rc == 0 && c < count; c++) {
        rc = common_buf_append(sql, ",?", 2);
    }
    return rc == 0 ? common_buf_append(sql, ")", 2) : rc;
}

/* Reads one row (its values: rowid and count columns) and inserts it. */
static int insert_row(struct common_reader *r, uint64_t size,
                      struct engine_stmt *stmt, size_t count)
{
    struct replication__arena arena = {0};
    struct engine_change_value *values = NULL;
    const uint8_t *bytes = NULL;
    size_t value_count = 0;
    int rc;

    rc = size <= common_reader_remaining(r)
             ? common_reader_bytes(r, (size_t)size, &bytes)
             : COMMON_ECORRUPT;
    rc = rc == 0 ? replication__crdt_key_decode(bytes, (size_t)size, &arena,
                                                &values, &value_count)
                 : rc;
    if (rc == 0 &&
        (value_count != count + 1 || values[0].type != ENGINE_INTEGER)) {
        rc = COMMON_ECORRUPT;
    }
    for (size_t i = 0; rc == 0 && i < value_count; i++) {
        rc = replication__crdt_bind_value(stmt, (int)i + 1, &values[i]);
    }
    rc = rc == 0 ? engine_step(stmt) : rc;
    rc = rc == ENGINE_DONE ? engine_reset(stmt) : rc;
    replication__arena_close(&arena);
    return rc;
}

/* A table's rows, up to the 0 after them. */
static int insert_rows(struct restore *x, const char *table)
{
    struct engine_stmt *stmt = NULL;
    struct common_buf names;
    struct common_buf sql;
    uint64_t column_count;
    uint64_t size = 0;
    size_t count = 0;
    int rc;

    common_buf_init(&names, SIZE_MAX);
    common_buf_init(&sql, SIZE_MAX);
    rc = common_reader_varint(&x->body, &column_count);
    rc = rc == 0 ? replication__quorum_table_columns(x->q->db, table, &names,
                                                     &count)
                 : rc;
    if (rc == 0 && column_count != count) {
        rc = COMMON_ECORRUPT;
    }
    rc = rc == 0 ? insert_sql(table, &names, count, &sql) : rc;
    rc = rc == 0
             ? engine_prepare(x->q->db, (const char *)sql.data, -1, &stmt, NULL)
             : rc;
    while (rc == 0 && (rc = common_reader_varint(&x->body, &size)) == 0 &&
           size > 0) {
        rc = insert_row(&x->body, size, stmt, count);
    }
    engine_finalize(stmt);
    common_buf_close(&sql);
    common_buf_close(&names);
    return rc;
}

static int insert_txns(struct restore *x)
{
    struct engine_change_value values[4] = {{.type = ENGINE_INTEGER},
                                            {.type = ENGINE_BLOB},
                                            {.type = ENGINE_INTEGER},
                                            {.type = ENGINE_INTEGER}};
    uint64_t seq = 0;
    uint64_t index = 0;
    uint64_t result = 0;
    const uint8_t *id = NULL;
    int rc;

    while ((rc = common_reader_varint(&x->body, &seq)) == 0 && seq > 0) {
        rc =
            common_reader_bytes(&x->body, REPLICATION_QUORUM_TXN_ID_BYTES, &id);
        rc = rc == 0 ? common_reader_varint(&x->body, &index) : rc;
        rc = rc == 0 ? common_reader_varint(&x->body, &result) : rc;
        if (rc == 0 && (seq > x->state.txn_seq || index > INT64_MAX ||
                        common_zigzag_decode(result) < INT32_MIN ||
                        common_zigzag_decode(result) > 0)) {
            rc = COMMON_ECORRUPT;
        }
        if (rc != 0) {
            return rc;
        }
        values[0].integer = (int64_t)seq;
        values[1].bytes = id;
        values[1].size = REPLICATION_QUORUM_TXN_ID_BYTES;
        values[2].integer = (int64_t)index;
        values[3].integer = common_zigzag_decode(result);
        rc = replication__quorum_run(x->q->db,
                                     "INSERT INTO sinew_quorum_txn(seq, id,"
                                     " idx, result) VALUES(?1, ?2, ?3, ?4)",
                                     values, 4);
        if (rc != 0) {
            return rc == ENGINE_ECONSTRAINT ? COMMON_ECORRUPT : rc;
        }
    }
    return rc;
}

static int restore_cb(void *ctx, struct engine_db *db)
{
    struct restore *x = ctx;
    struct common_buf tables;
    size_t at = 0;
    int rc;

    common_buf_init(&tables, SIZE_MAX);
    rc = drop_tables(db);
    rc = rc == 0 ? engine_exec_system(db, "DELETE FROM sinew_quorum_txn", NULL,
                                      NULL)
                 : rc;
    rc = rc == 0 ? common_reader_varint(&x->body, &x->state.term_base) : rc;
    rc = rc == 0 ? common_reader_varint(&x->body, &x->state.txn_seq) : rc;
    if (rc == 0 && (x->state.term_base > x->state.applied_index ||
                    x->state.txn_seq > INT64_MAX)) {
        rc = COMMON_ECORRUPT;
    }
    rc = rc == 0 ? create_objects(x, &tables) : rc;
    while (rc == 0 && at < tables.size) {
        const char *table = (const char *)tables.data + at;
        rc = insert_rows(x, table);
        at += strlen(table) + 1;
    }
    rc = rc == 0 ? insert_txns(x) : rc;
    if (rc == 0 && common_reader_remaining(&x->body) != 0) {
        rc = COMMON_ECORRUPT;
    }
    rc = rc == 0 ? replication__quorum_state_write(db, &x->state) : rc;
    common_buf_close(&tables);
    return rc;
}

/* Checks the framing and checksum; fills x's body reader and position. */
static int verify(const uint8_t *bytes, size_t size, struct restore *x)
{
    const size_t framing = REPLICATION__QUORUM_SNAPSHOT_HEADER_SIZE +
                           REPLICATION__QUORUM_SNAPSHOT_CHECK_SIZE;
    uint64_t body_size;
    uint64_t check;

    if (size < framing ||
        memcmp(bytes, REPLICATION__QUORUM_SNAPSHOT_MAGIC, 4) != 0) {
        return REPLICATION_ECORRUPT;
    }
    if (common_get_u32le(bytes + 4) != REPLICATION__QUORUM_SNAPSHOT_VERSION) {
        return REPLICATION_EVERSION;
    }
    body_size = common_get_u64le(bytes + 24);
    if (body_size != size - framing) {
        return REPLICATION_ECORRUPT;
    }
    check =
        common_checksum64(bytes, size - 8, REPLICATION__QUORUM_SNAPSHOT_SEED);
    if (check != common_get_u64le(bytes + size - 8)) {
        return REPLICATION_ECORRUPT;
    }
    x->state.applied_index = common_get_u64le(bytes + 8);
    x->state.applied_term = common_get_u64le(bytes + 16);
    if (x->state.applied_index > INT64_MAX ||
        x->state.applied_term > INT64_MAX) {
        return REPLICATION_ECORRUPT;
    }
    common_reader_init(&x->body,
                       bytes + REPLICATION__QUORUM_SNAPSHOT_HEADER_SIZE,
                       (size_t)body_size);
    return 0;
}

int replication_quorum_restore(struct replication_quorum *q,
                               const uint8_t *bytes, size_t size)
{
    struct restore x = {.q = q};
    int rc;

    ASSERT(q != NULL);
    ASSERT(bytes != NULL || size == 0);
    rc = verify(bytes, size, &x);
    if (rc != 0) {
        return rc;
    }
    if (x.state.applied_index <= q->state.applied_index) {
        return 0; /* this database is as new or newer: keep it */
    }
    rc = replication__quorum_transaction(q->db, restore_cb, &x);
    if (rc == COMMON_ECORRUPT) {
        rc = REPLICATION_ECORRUPT;
    }
    if (rc != 0) {
        LOGF(&q->log, COMMON_LOG_ERROR,
             "quorum restore failed index=%llu rc=%d",
             (unsigned long long)x.state.applied_index, rc);
        return rc;
    }
    q->state = x.state;
    replication_quorum_abandon_all(q);
    LOGF(&q->log, COMMON_LOG_INFO, "quorum restored index=%llu term=%llu",
         (unsigned long long)q->state.applied_index,
         (unsigned long long)q->state.applied_term);
    return 0;
}
