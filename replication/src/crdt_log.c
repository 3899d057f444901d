/* SPDX-License-Identifier: MIT
 *
 * crdt_log.c: the local change log, the change sets this site committed,
 * by gapless version (crdt.md §6.4 "Local commit path"): what anti-entropy
 * will ship to peers that lack them.
 *
 * Storage, for now: one row per change set in sinew_crdt_log_tx(version,
 * hlc) and one row per record in sinew_crdt_log(version, seq, op, tbl, pk,
 * col, value, sql), with the key in crdt_key.c's encoding and table and
 * column by name. Plain rows keep the log readable with SQL while the wire
 * codec is written; once it lands, a change set's encoded bytes can
 * replace the per-record rows (one row per version), written in the same
 * committing transaction. Pruning acknowledged versions is not done yet.
 */
#include <string.h>

#include "crdt_int.h"

static int put_tx(struct replication__crdt *crdt,
                  const struct replication__changeset *cs)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_LOG_TX_PUT, &stmt);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)cs->version);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)cs->hlc);
    }
    return rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
}

static int bind_record(struct engine_stmt *stmt,
                       const struct replication__changeset *cs,
                       const struct replication__record *rec,
                       const struct common_buf *pk)
{
    const struct replication__table *t = NULL;
    int rc;

    if (rec->op != REPLICATION__OP_SCHEMA) {
        t = &cs->tables[rec->table];
    }
    rc = engine_bind_int64(stmt, 3, rec->op);
    if (rc == 0 && t != NULL) {
        rc = engine_bind_text(stmt, 4, t->name, -1);
    }
    if (rc == 0 && t != NULL) {
        rc = engine_bind_blob(stmt, 5, pk->data ? (void *)pk->data : "",
                              (int)pk->size);
    }
    if (rc == 0 && rec->op == REPLICATION__OP_SET) {
        rc = engine_bind_text(stmt, 6, t->columns[rec->column], -1);
    }
    if (rc == 0 && rec->op == REPLICATION__OP_SET) {
        rc = replication__crdt_bind_value(stmt, 7, &rec->value);
    }
    if (rc == 0 && rec->op == REPLICATION__OP_SCHEMA) {
        rc = engine_bind_text(stmt, 8, rec->sql, -1);
    }
    return rc;
}

static int put_record(struct replication__crdt *crdt,
                      const struct replication__changeset *cs, size_t seq)
{
    const struct replication__record *rec = &cs->records[seq];
    struct common_buf pk;
    struct engine_stmt *stmt;
    int rc;

    common_buf_init(&pk, SIZE_MAX);
    rc = replication__crdt_key_encode(rec->key, rec->key_count, &pk);
    if (rc == 0) {
        rc = replication__crdt_stmt(crdt, CRDT_LOG_PUT, &stmt);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)cs->version);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)seq);
    }
    if (rc == 0) {
        rc = bind_record(stmt, cs, rec, &pk);
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(crdt, stmt);
    }
    common_buf_close(&pk);
    return rc;
}

int replication__crdt_log_append(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs)
{
    size_t i;
    int rc;

    rc = put_tx(crdt, cs);
    for (i = 0; rc == 0 && i < cs->record_count; i++) {
        rc = put_record(crdt, cs, i);
    }
    return rc;
}

/* The index of column name in table index's list of b, added if new. */
static int builder_column(struct replication__crdt_builder *b, uint32_t table,
                          const char *name, uint32_t *index)
{
    const struct replication__table *t = &b->tables[table];
    const char **columns;
    size_t i;
    int rc;

    for (i = 0; i < t->column_count; i++) {
        if (strcmp(t->columns[i], name) == 0) {
            *index = (uint32_t)i;
            return 0;
        }
    }
    columns = common_malloc_array(t->column_count + 1, sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    if (t->column_count > 0) {
        memcpy(columns, t->columns, t->column_count * sizeof(*columns));
    }
    columns[t->column_count] = name;
    *index = (uint32_t)t->column_count;
    rc = replication__crdt_builder_columns(b, table, columns,
                                           t->column_count + 1);
    common_free(columns);
    return rc;
}

/* Adds the log row stmt is on (seq, op, tbl, pk, col, value, sql) to b. */
static int add_row(struct replication__crdt_builder *b,
                   struct engine_stmt *stmt)
{
    struct replication__record rec;
    struct engine_change_value *key = NULL;
    const char *name;
    int rc;

    memset(&rec, 0, sizeof(rec));
    rec.value.type = ENGINE_NULL;
    rec.op = (enum replication__op)engine_column_int64(stmt, 1);
    if (rec.op == REPLICATION__OP_SCHEMA) {
        rec.sql = engine_column_text(stmt, 6);
        return replication__crdt_builder_add(b, &rec);
    }
    name = engine_column_text(stmt, 2);
    rc = replication__crdt_builder_table(b, name, strlen(name), &rec.table);
    if (rc == 0) {
        rc = replication__crdt_key_decode(engine_column_blob(stmt, 3),
                                          (size_t)engine_column_bytes(stmt, 3),
                                          &b->arena, &key, &rec.key_count);
    }
    rec.key = key;
    if (rc == 0 && rec.op == REPLICATION__OP_SET) {
        rc = builder_column(b, rec.table, engine_column_text(stmt, 4),
                            &rec.column);
        replication__crdt_column_value(stmt, 5, &rec.value);
    }
    return rc == 0 ? replication__crdt_builder_add(b, &rec) : rc;
}

static int read_records(struct replication__crdt *crdt, uint64_t version,
                        struct replication__crdt_builder *b)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db,
                        "SELECT seq, op, tbl, pk, col, value, sql FROM"
                        " sinew_crdt_log WHERE version = ?1 ORDER BY seq",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)version);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = add_row(b, stmt);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int visit_version(struct replication__crdt *crdt, uint64_t version,
                         uint64_t hlc, replication__crdt_visit_cb visit,
                         void *ctx)
{
    struct replication__crdt_builder b;
    int rc;

    replication__crdt_builder_init(&b);
    memcpy(b.cs.origin, crdt->site, sizeof(b.cs.origin));
    b.cs.version = version;
    b.cs.hlc = hlc;
    rc = read_records(crdt, version, &b);
    if (rc == 0) {
        rc = visit(ctx, &b.cs);
    }
    replication__crdt_builder_close(&b);
    return rc;
}

int replication__crdt_log_since(struct replication__crdt *crdt, uint64_t after,
                                replication__crdt_visit_cb visit, void *ctx)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(visit != NULL);
    rc = engine_prepare(crdt->db,
                        "SELECT version, hlc FROM sinew_crdt_log_tx"
                        " WHERE version > ?1 ORDER BY version",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)after);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = visit_version(crdt, (uint64_t)engine_column_int64(stmt, 0),
                           (uint64_t)engine_column_int64(stmt, 1), visit, ctx);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}
