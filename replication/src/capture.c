/* SPDX-License-Identifier: MIT
 *
 * capture.c: the commit hook that turns each local transaction into one
 * change set (crdt.md §6.1, §6.4 "Local commit path"; changeset.h):
 * INSERT gives ALIVE and a SET of every column, UPDATE a SET of each
 * changed column, DELETE gives DEAD, a primary key change arrives from the
 * engine as DELETE(old) + INSERT(new) and so becomes DEAD + ALIVE + SETs,
 * DDL gives SCHEMA. The change set gets one HLC (hlc_now(): Kulkarni et
 * al. 2014, a send event), which is also the commit's stamp, and the next
 * gapless local version; the local registers, the version vector, the
 * clock's high-water mark and the change log are written in the committing
 * transaction, so they commit or roll back with the data.
 *
 * A commit that changes the schema is first checked against crdt mode's
 * schema rules (capture_schema.c), then the registers' column catalog is
 * brought in line with it (crdt_schema.c); every change set carries the
 * schema hash that results.
 *
 * The hook first copies every change out of the commit (the engine's
 * pointers die when the hook runs SQL), then looks up column names, then
 * writes. Any failure vetoes the commit: a write that replication cannot
 * record must not happen.
 */
#include <string.h>

#include "crdt_int.h"
#include "replication.h"

static int add_row_change(struct replication__crdt_builder *b,
                          const struct engine_change *change)
{
    struct replication__record rec;
    size_t i;
    int rc;

    memset(&rec, 0, sizeof(rec));
    rec.value.type = ENGINE_NULL;
    rc = replication__crdt_builder_table(b, change->table,
                                         strlen(change->table), &rec.table);
    if (rc != 0) {
        return rc;
    }
    rec.key = change->key;
    rec.key_count = change->key_count;
    if (change->kind != ENGINE_CHANGE_UPDATE) {
        rec.op = change->kind == ENGINE_CHANGE_DELETE ? REPLICATION__OP_DEAD
                                                      : REPLICATION__OP_ALIVE;
        rc = replication__crdt_builder_add(b, &rec);
    }
    rec.op = REPLICATION__OP_SET;
    for (i = 0; rc == 0 && i < change->value_count; i++) {
        rec.column = (uint32_t)(change->columns ? change->columns[i] : i);
        rec.value = change->values[i];
        rc = replication__crdt_builder_add(b, &rec);
    }
    return rc;
}

int replication__crdt_collect(struct engine_commit *commit,
                              struct replication__crdt_builder *b)
{
    struct replication__record rec;
    struct engine_change change;
    int rc;

    while ((rc = engine_commit_next(commit, &change)) == ENGINE_ROW) {
        if (change.kind != ENGINE_CHANGE_SCHEMA) {
            rc = add_row_change(b, &change);
        } else {
            memset(&rec, 0, sizeof(rec));
            rec.op = REPLICATION__OP_SCHEMA;
            rec.value.type = ENGINE_NULL;
            rec.sql = change.sql;
            rc = replication__crdt_builder_add(b, &rec);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Names the columns of every table the change set touches. */
static int name_columns(struct replication__crdt *crdt,
                        struct replication__crdt_builder *b)
{
    struct replication__crdt_table *table;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < b->cs.table_count; i++) {
        rc = replication__crdt_shape(crdt, b->tables[i].name, &table);
        if (rc != 0) {
            return rc;
        }
        rc = replication__crdt_builder_columns(
            b, (uint32_t)i, (const char *const *)table->columns,
            table->column_count);
    }
    for (i = 0; rc == 0 && i < b->cs.record_count; i++) {
        const struct replication__record *rec = &b->records[i];
        if (rec->op == REPLICATION__OP_SET &&
            rec->column >= b->tables[rec->table].column_count) {
            rc = REPLICATION_ESCHEMA;
        }
    }
    return rc;
}

int replication__crdt_write_record(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs,
                                   const struct replication__record *rec,
                                   const struct replication__crdt_k *k)
{
    const struct replication__table *t = &cs->tables[rec->table];
    struct replication__crdt_row row = {.table = t->name};
    struct common_buf pk;
    int rc;

    common_buf_init(&pk, SIZE_MAX);
    rc = replication__crdt_key_encode(rec->key, rec->key_count, &pk);
    row.pk = pk.data ? (const void *)pk.data : "";
    row.pk_size = pk.size;
    if (rc == 0 && rec->op == REPLICATION__OP_SET) {
        rc = replication__crdt_merge_cell(crdt, &row, t->columns[rec->column],
                                          &rec->value, false, k);
    } else if (rc == 0) {
        rc = replication__crdt_merge_exist(crdt, &row,
                                           rec->op == REPLICATION__OP_ALIVE, k);
    }
    common_buf_close(&pk);
    return rc;
}

/* The last version this node gave a change set of its own: the larger of
 * what it recorded and what its version vector holds of its own site. A
 * node started from an older copy of its database gets its later sets
 * back from peers (merged like any origin's, crdt_merge.c); numbering
 * past them keeps (origin, version) naming one set only. */
static int last_own_version(struct replication__crdt *crdt, uint64_t *version)
{
    uint64_t head;
    int rc = replication__crdt_meta_get(crdt, "version", version);

    if (rc == 0) {
        rc = replication__crdt_vv_get(crdt, crdt->site, &head);
    }
    if (rc == 0 && head > *version) {
        *version = head;
    }
    return rc;
}

/* Stamps and numbers the change set and writes everything it implies. */
static int record(struct replication__crdt *crdt,
                  struct replication__crdt_builder *b)
{
    struct replication__crdt_k k;
    uint64_t version;
    size_t i;
    int rc;

    rc = last_own_version(crdt, &version);
    if (rc == 0) {
        rc = hlc_now(crdt->clock, &b->cs.hlc);
    }
    if (rc != 0) {
        return rc;
    }
    memcpy(b->cs.origin, crdt->site, sizeof(b->cs.origin));
    b->cs.version = version + 1;
    k.hlc = b->cs.hlc;
    memcpy(k.site, crdt->site, sizeof(k.site));
    for (i = 0; rc == 0 && i < b->cs.record_count; i++) {
        /* A DROP TABLE forgets the registers written before it
         * (crdt_schema.c), as a merge of this set will. */
        rc = b->records[i].op != REPLICATION__OP_SCHEMA
                 ? replication__crdt_write_record(crdt, &b->cs, &b->records[i],
                                                  &k)
                 : replication__crdt_schema_dropped(crdt, b->records[i].sql);
    }
    if (rc == 0) {
        rc = replication__crdt_log_append(crdt, &b->cs);
    }
    if (rc == 0) {
        rc = replication__crdt_vv_put(crdt, crdt->site, b->cs.version);
    }
    if (rc == 0) {
        rc = replication__crdt_meta_put(crdt, "version", b->cs.version);
    }
    if (rc == 0) {
        rc = replication__crdt_meta_put(crdt, "hlc",
                                        hlc_high_water(crdt->clock));
    }
    return rc;
}

static bool has_schema(const struct replication__crdt_builder *b)
{
    size_t i;

    for (i = 0; i < b->cs.record_count; i++) {
        if (b->records[i].op == REPLICATION__OP_SCHEMA) {
            return true;
        }
    }
    return false;
}

/* The message for rc, whichever module's code it is. */
static const char *error_message(struct engine_db *db, int rc)
{
    if (rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST) {
        return engine_errmsg(db);
    }
    if (rc >= HLC_ERROR_FIRST && rc <= HLC_ERROR_LAST) {
        return hlc_strerror(rc);
    }
    return replication_strerror(rc);
}

int replication__crdt_capture_hook(void *ctx, struct engine_db *db,
                                   struct engine_commit *commit)
{
    struct replication__crdt *crdt = ctx;
    struct replication__crdt_builder b;
    char message[256] = "";
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(db == crdt->db);
    replication__crdt_builder_init(&b);
    rc = crdt->gate != NULL ? crdt->gate(crdt->gate_ctx, &b.cs.epoch) : 0;
    if (rc != 0) {
        replication__crdt_builder_close(&b);
        return engine_commit_veto(commit, rc, "%s", error_message(db, rc));
    }
    rc = replication__crdt_collect(commit, &b);
    b.cs.schema_hash = crdt->schema_hash;
    if (rc == 0 && has_schema(&b)) {
        rc = replication__crdt_schema_check(db, message, sizeof(message));
        rc = rc == 0 ? replication__crdt_schema_hash_of(db, &b.cs.schema_hash)
                     : rc;
    }
    if (rc == 0) {
        rc = name_columns(crdt, &b);
    }
    if (rc == 0) {
        rc = record(crdt, &b);
    }
    if (rc == 0 && has_schema(&b)) {
        /* The register catalog follows the new schema (crdt_schema.c). */
        rc = replication__crdt_schema_sync(crdt);
    }
    replication__crdt_stmts_close(crdt);
    if (rc == 0) {
        engine_commit_set_stamp(commit, b.cs.hlc);
    }
    replication__crdt_builder_close(&b);
    if (rc != 0 && message[0] != '\0') {
        return engine_commit_veto(commit, rc, "%s", message);
    }
    if (rc != 0) {
        return engine_commit_veto(commit, rc, "replication capture: %s",
                                  error_message(db, rc));
    }
    return 0;
}
