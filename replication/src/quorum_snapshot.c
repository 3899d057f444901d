/* SPDX-License-Identifier: MIT
 *
 * quorum_snapshot.c: the whole database as bytes, for Raft's snapshots
 * (Raft §7: a follower too far behind installs the leader's state instead
 * of replaying the log it no longer has). The layout is in quorum.h.
 *
 * Everything is read in one read transaction, so the schema, the rows and
 * the applied index that labels them belong to the same state. Rows keep
 * their rowids (a rowid table's key is its rowid, and later change sets
 * name rows by it) and their exact storage classes (crdt_key.c's value
 * bytes), so the restored database answers every query alike.
 */
#include <string.h>
#include <strings.h>

#include "quorum.h"

int replication__quorum_rowid_name(const struct common_buf *names, size_t count,
                                   const char **out)
{
    static const char *const candidates[] = {"rowid", "_rowid_", "oid"};

    for (size_t c = 0; c < 3; c++) {
        size_t at = 0;
        size_t i;
        for (i = 0; i < count; i++) {
            const char *name = (const char *)names->data + at;
            if (strcasecmp(name, candidates[c]) == 0) {
                break;
            }
            at += strlen(name) + 1;
        }
        if (i == count) {
            *out = candidates[c];
            return 0;
        }
    }
    return REPLICATION_ESCHEMA; /* every alias is a column: no rowid */
}

static int put_text(struct common_buf *out, const char *text)
{
    size_t size = text != NULL ? strlen(text) : 0;
    int rc = common_buf_append_varint(out, size);

    return rc == 0 ? common_buf_append(out, text, size) : rc;
}

/* The schema objects (tables, indexes) in creation order; the names of the
 * tables, NUL-terminated, into tables. */
static int put_objects(struct engine_db *db, struct common_buf *out,
                       struct common_buf *tables)
{
    struct engine_stmt *stmt = NULL;
    struct common_buf objects;
    uint64_t count = 0;
    int rc;

    common_buf_init(&objects, SIZE_MAX);
    rc = engine_prepare(db,
                        "SELECT type = 'table', name, sql FROM sqlite_schema"
                        " WHERE sql IS NOT NULL",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        bool is_table = engine_column_int64(stmt, 0) != 0;
        const char *name = engine_column_text(stmt, 1);
        const char *sql = engine_column_text(stmt, 2);
        if (name == NULL || sql == NULL) {
            rc = COMMON_ENOMEM; /* sqlite_schema's names and SQL are text */
            break;
        }
        rc = common_buf_append_byte(
            &objects, is_table ? REPLICATION__QUORUM_OBJECT_TABLE
                               : REPLICATION__QUORUM_OBJECT_INDEX);
        rc = rc == 0 ? put_text(&objects, name) : rc;
        rc = rc == 0 ? put_text(&objects, sql) : rc;
        if (rc == 0 && is_table) {
            rc = common_buf_append(tables, name, strlen(name) + 1);
        }
        count++;
    }
    engine_finalize(stmt);
    rc = rc == ENGINE_DONE ? common_buf_append_varint(out, count) : rc;
    rc = rc == 0 ? common_buf_append(out, objects.data, objects.size) : rc;
    common_buf_close(&objects);
    return rc;
}

/* SELECT <rowid>, * FROM "table" ORDER BY <rowid>, into sql. */
static int rows_sql(struct engine_db *db, const char *table,
                    struct common_buf *sql, size_t *column_count)
{
    struct common_buf names;
    const char *rowid = NULL;
    int rc;

    common_buf_init(&names, SIZE_MAX);
    rc = replication__quorum_table_columns(db, table, &names, column_count);
    rc = rc == 0 ? replication__quorum_rowid_name(&names, *column_count, &rowid)
                 : rc;
    rc = rc == 0 ? common_buf_append(sql, "SELECT ", 7) : rc;
    rc = rc == 0 ? common_buf_append(sql, rowid, strlen(rowid)) : rc;
    rc = rc == 0 ? common_buf_append(sql, ", * FROM ", 9) : rc;
    rc = rc == 0 ? replication__quorum_quote(sql, table) : rc;
    rc = rc == 0 ? common_buf_append(sql, " ORDER BY ", 10) : rc;
    rc = rc == 0 ? common_buf_append(sql, rowid, strlen(rowid) + 1) : rc;
    common_buf_close(&names);
    return rc;
}

/* One row: its size, then rowid and columns as canonical value bytes. */
static int put_row(struct engine_stmt *stmt, size_t column_count,
                   struct common_buf *row, struct common_buf *out)
{
    struct engine_change_value value;
    int rc = 0;

    common_buf_truncate(row, 0);
    for (size_t c = 0; rc == 0 && c <= column_count; c++) {
        replication__crdt_column_value(stmt, (int)c, &value);
        if (value.size > 0 && value.bytes == NULL) {
            return COMMON_ENOMEM; /* the engine could not convert it */
        }
        rc = replication__crdt_key_encode(&value, 1, row);
    }
    rc = rc == 0 ? common_buf_append_varint(out, row->size) : rc;
    return rc == 0 ? common_buf_append(out, row->data, row->size) : rc;
}

/* A table's column count, its rows, and a 0 after the last row. */
static int put_table(struct engine_db *db, const char *table,
                     struct common_buf *out)
{
    struct engine_stmt *stmt = NULL;
    struct common_buf sql;
    struct common_buf row;
    size_t column_count = 0;
    int rc;

    common_buf_init(&sql, SIZE_MAX);
    common_buf_init(&row, SIZE_MAX);
    rc = rows_sql(db, table, &sql, &column_count);
    rc = rc == 0 ? common_buf_append_varint(out, column_count) : rc;
    rc = rc == 0 ? engine_prepare(db, (const char *)sql.data, -1, &stmt, NULL)
                 : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = put_row(stmt, column_count, &row, out);
    }
    engine_finalize(stmt);
    rc = rc == ENGINE_DONE ? common_buf_append_varint(out, 0) : rc;
    common_buf_close(&row);
    common_buf_close(&sql);
    return rc;
}

/* The transaction table by seq (each seq >= 1), and a 0 after it. */
static int put_txns(struct engine_db *db, struct common_buf *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(db,
                        "SELECT seq, id, idx, result FROM sinew_quorum_txn"
                        " ORDER BY seq",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        const void *id = engine_column_blob(stmt, 1);
        if (engine_column_int64(stmt, 0) <= 0 || id == NULL ||
            engine_column_bytes(stmt, 1) != REPLICATION_QUORUM_TXN_ID_BYTES) {
            rc = REPLICATION_ECORRUPT; /* not a row this module wrote */
            break;
        }
        rc = common_buf_append_varint(out,
                                      (uint64_t)engine_column_int64(stmt, 0));
        rc = rc == 0
                 ? common_buf_append(out, id, REPLICATION_QUORUM_TXN_ID_BYTES)
                 : rc;
        rc = rc == 0 ? common_buf_append_varint(
                           out, (uint64_t)engine_column_int64(stmt, 2))
                     : rc;
        rc = rc == 0
                 ? common_buf_append_varint(
                       out, common_zigzag_encode(engine_column_int64(stmt, 3)))
                 : rc;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? common_buf_append_varint(out, 0) : rc;
}

static int put_body(struct engine_db *db,
                    const struct replication__quorum_state *state,
                    struct common_buf *out)
{
    struct common_buf tables;
    size_t at = 0;
    int rc;

    common_buf_init(&tables, SIZE_MAX);
    rc = common_buf_append_varint(out, state->term_base);
    rc = rc == 0 ? common_buf_append_varint(out, state->txn_seq) : rc;
    rc = rc == 0 ? put_objects(db, out, &tables) : rc;
    while (rc == 0 && at < tables.size) {
        const char *table = (const char *)tables.data + at;
        rc = put_table(db, table, out);
        at += strlen(table) + 1;
    }
    rc = rc == 0 ? put_txns(db, out) : rc;
    common_buf_close(&tables);
    return rc;
}

static int put_snapshot(struct engine_db *db, struct common_buf *out)
{
    struct replication__quorum_state state;
    uint8_t header[REPLICATION__QUORUM_SNAPSHOT_HEADER_SIZE];
    size_t start = out->size;
    uint64_t check;
    int rc;

    rc = replication__quorum_state_read(db, &state);
    memcpy(header, REPLICATION__QUORUM_SNAPSHOT_MAGIC, 4);
    common_put_u32le(header + 4, REPLICATION__QUORUM_SNAPSHOT_VERSION);
    common_put_u64le(header + 8, state.applied_index);
    common_put_u64le(header + 16, state.applied_term);
    common_put_u64le(header + 24, 0); /* the body size, once known */
    rc = rc == 0 ? common_buf_append(out, header, sizeof(header)) : rc;
    rc = rc == 0 ? put_body(db, &state, out) : rc;
    if (rc != 0) {
        return rc;
    }
    common_put_u64le(out->data + start + 24,
                     out->size - start - sizeof(header));
    check = common_checksum64(out->data + start, out->size - start,
                              REPLICATION__QUORUM_SNAPSHOT_SEED);
    return common_buf_append_u64le(out, check);
}

int replication_quorum_snapshot(struct replication_quorum *q,
                                struct common_buf *out)
{
    struct engine_stmt *rollback = NULL;
    size_t size_before;
    int rc;

    ASSERT(q != NULL);
    ASSERT(out != NULL);
    if (engine_in_transaction(q->db)) {
        return ENGINE_EMISUSE;
    }
    size_before = out->size;
    rc = replication__quorum_begin(q->db, &rollback);
    if (rc != 0) {
        return rc;
    }
    rc = put_snapshot(q->db, out);
    replication__quorum_end(q->db, rollback); /* it only read */
    if (rc != 0) {
        common_buf_truncate(out, size_before);
    }
    return rc;
}
