/* SPDX-License-Identifier: MIT
 *
 * crdt_bootstrap.c: registers for the rows that were in the user tables
 * before crdt mode first opened on this database (crdt.md §5 #32: "two
 * replicas that already held divergent data before replication was
 * enabled: deterministic winner per cell; no per-row storm on the network
 * beyond one version").
 *
 * Such a row has no existence register and no cells, so no merge could
 * ever decide between it and another replica's row under the same key.
 * On the first open every such row is recorded as if it had been INSERTed
 * by this site at HLC 0: an existence register ALIVE and a register per
 * column, all at K = (0, local site), values in the user table as they
 * are. The rows go out as ordinary local change sets (stamp 0), one per
 * REPLICATION__CRDT_BOOTSTRAP_ROWS rows (or bytes of values), so a table
 * of any size costs a handful of versions, not one per row.
 *
 * What wins: any real write has an HLC above 0, so it beats a bootstrap
 * register of any site. Between two bootstrap rows under one key (both
 * replicas held it), K compares (0, site A) with (0, site B): the larger
 * site id's row wins, whole (all its cells carry the same K; an INSERT's
 * columns never mix, §5 #10). That winner is arbitrary but the same on
 * every replica in every delivery order, which is all convergence asks;
 * an application that cares which copy survives rewrites the row after
 * enabling replication.
 *
 * Runs once per database ('bootstrap' in sinew_crdt_meta, written with the
 * last batch); a crash in between resumes, since rows that got registers
 * are skipped. Rows written later while crdt mode was not open (another
 * program on the file) are not found: they bypass replication. Not in
 * leader mode (a commit gate is set): there only the writer's commits
 * replicate, and no node is the writer when it opens.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"

/* Rows read per query: bounds the statement, not the batch. */
#define BOOT_PAGE_ROWS 1024
/* Value bytes per change set, beside REPLICATION__CRDT_BOOTSTRAP_ROWS:
 * keeps a batch of large rows far below the body limit. */
#define BOOT_BATCH_BYTES ((size_t)16 << 20)
#define BOOT_SQL_SIZE 768

struct boot {
    struct replication__crdt *crdt;
    struct replication__crdt_builder b; /* the batch being built */
    size_t rows;                        /* rows in the batch */
    size_t bytes;                       /* value bytes in the batch */
    bool final;                         /* the last batch: mark done */
};

/* The batch as the next local version: registers, log, version vector. */
static int record_batch(struct boot *bt)
{
    struct replication__crdt *crdt = bt->crdt;
    struct replication__changeset *cs = &bt->b.cs;
    struct replication__crdt_k k = {.hlc = 0};
    uint64_t version;
    size_t i;
    int rc;

    rc = replication__crdt_meta_get(crdt, "version", &version);
    if (rc != 0) {
        return rc;
    }
    memcpy(cs->origin, crdt->site, sizeof(cs->origin));
    memcpy(k.site, crdt->site, sizeof(k.site));
    cs->version = version + 1;
    cs->hlc = 0;
    cs->schema_hash = crdt->schema_hash;
    for (i = 0; rc == 0 && i < cs->record_count; i++) {
        rc = replication__crdt_write_record(crdt, cs, &cs->records[i], &k);
    }
    rc = rc == 0 ? replication__crdt_log_append(crdt, cs) : rc;
    rc = rc == 0 ? replication__crdt_vv_put(crdt, crdt->site, cs->version) : rc;
    return rc == 0 ? replication__crdt_meta_put(crdt, "version", cs->version)
                   : rc;
}

static int flush_cb(void *ctx, struct engine_db *db)
{
    struct boot *bt = ctx;
    int rc = 0;

    (void)db;
    if (bt->b.cs.record_count > 0) {
        rc = record_batch(bt);
    }
    if (rc == 0 && bt->final) {
        rc = replication__crdt_meta_put(bt->crdt, "bootstrap", 1);
    }
    replication__crdt_stmts_close(bt->crdt);
    return rc;
}

/* Commits the batch (and, when final, the mark) and starts a new one. */
static int flush(struct boot *bt, bool final)
{
    int rc;

    bt->final = final;
    rc = engine_apply_transaction(bt->crdt->db, 0, flush_cb, bt);
    if (rc == 0 && bt->b.cs.record_count > 0) {
        LOGF(&bt->crdt->log, COMMON_LOG_INFO,
             "rows from before replication registered version=%" PRIu64
             " rows=%zu",
             bt->b.cs.version, bt->rows);
    }
    replication__crdt_builder_close(&bt->b);
    replication__crdt_builder_init(&bt->b);
    bt->rows = 0;
    bt->bytes = 0;
    return rc;
}

/* Whether the row keyed key already has an existence register. */
static int is_registered(struct replication__crdt *crdt, const char *table,
                         const struct engine_change_value *key,
                         size_t key_count, bool *out)
{
    struct replication__crdt_row row = {.table = table};
    struct replication__crdt_k k;
    struct common_buf pk;
    bool alive;
    int rc;

    common_buf_init(&pk, SIZE_MAX);
    rc = replication__crdt_key_encode(key, key_count, &pk);
    row.pk = pk.data ? (const void *)pk.data : "";
    row.pk_size = pk.size;
    if (rc == 0) {
        rc = replication__crdt_row_get(crdt, &row, out, &alive, &k);
    }
    common_buf_close(&pk);
    return rc;
}

/* The batch's index of shape's table, added with its columns if new. */
static int batch_table(struct boot *bt,
                       const struct replication__crdt_table *shape,
                       uint32_t *out)
{
    int rc = replication__crdt_builder_table(&bt->b, shape->name,
                                             strlen(shape->name), out);

    if (rc == 0 && bt->b.tables[*out].columns == NULL) {
        rc = replication__crdt_builder_columns(
            &bt->b, *out, (const char *const *)shape->columns,
            shape->column_count);
    }
    return rc;
}

/* Adds the current row of stmt (rowid, then every column of shape) to the
 * batch as ALIVE and a SET per column, unless it has registers. key has
 * room for the row's key values (the key columns, or the rowid). */
static int add_row(struct boot *bt, const struct replication__crdt_table *shape,
                   struct engine_stmt *stmt, struct engine_change_value *key)
{
    struct replication__record rec;
    size_t i, key_count = shape->key_count ? shape->key_count : 1;
    uint32_t table;
    bool registered;
    int rc;

    for (i = 0; i < key_count; i++) {
        int column = shape->key_count ? (int)shape->key_columns[i] + 1 : 0;
        replication__crdt_column_value(stmt, column, &key[i]);
    }
    rc = is_registered(bt->crdt, shape->name, key, key_count, &registered);
    if (rc == 0 && !registered) {
        rc = batch_table(bt, shape, &table);
    }
    if (rc != 0 || registered) {
        return rc;
    }
    memset(&rec, 0, sizeof(rec));
    rec.op = REPLICATION__OP_ALIVE;
    rec.table = table;
    rec.key = key;
    rec.key_count = key_count;
    rec.value.type = ENGINE_NULL;
    rc = replication__crdt_builder_add(&bt->b, &rec);
    rec.op = REPLICATION__OP_SET;
    for (i = 0; rc == 0 && i < shape->column_count; i++) {
        rec.column = (uint32_t)i;
        replication__crdt_column_value(stmt, (int)i + 1, &rec.value);
        bt->bytes += rec.value.size + 16;
        rc = replication__crdt_builder_add(&bt->b, &rec);
    }
    bt->rows++;
    return rc;
}

/* One page of rows after rowid *after; *more when it was full. */
static int boot_page(struct boot *bt,
                     const struct replication__crdt_table *shape,
                     const char *sql, struct engine_change_value *key,
                     int64_t *after, bool *more)
{
    struct engine_stmt *stmt = NULL;
    size_t n = 0;
    int rc;

    rc = engine_prepare(bt->crdt->db, sql, -1, &stmt, NULL);
    rc = rc == 0 ? engine_bind_int64(stmt, 1, *after) : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        *after = engine_column_int64(stmt, 0);
        rc = add_row(bt, shape, stmt, key);
        n++;
    }
    engine_finalize(stmt);
    replication__crdt_stmts_close(bt->crdt);
    *more = n == BOOT_PAGE_ROWS;
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Every unregistered row of table, page by page in rowid order. */
static int boot_table(struct boot *bt, const char *table)
{
    struct replication__crdt_table *shape = NULL;
    struct engine_change_value *key = NULL;
    char sql[BOOT_SQL_SIZE];
    int64_t after = INT64_MIN;
    bool more = true;
    int rc;

    rc = replication__crdt_table_load(bt->crdt->db, table, &shape);
    if (rc == REPLICATION_ESCHEMA) {
        return 0; /* a name no replicated table can have (crdt_table.c) */
    }
    if (rc == 0 &&
        (size_t)snprintf(sql, sizeof(sql),
                         "SELECT rowid, * FROM \"%s\" WHERE rowid > ?1"
                         " ORDER BY rowid LIMIT %d",
                         table, BOOT_PAGE_ROWS) >= sizeof(sql)) {
        rc = REPLICATION_ESCHEMA;
    }
    if (rc == 0) {
        key = common_calloc(shape->key_count + 1, sizeof(*key));
        rc = key == NULL ? COMMON_ENOMEM : 0;
    }
    while (rc == 0 && more) {
        rc = boot_page(bt, shape, sql, key, &after, &more);
        if (rc == 0 && (bt->rows >= REPLICATION__CRDT_BOOTSTRAP_ROWS ||
                        bt->bytes >= BOOT_BATCH_BYTES)) {
            rc = flush(bt, false);
        }
    }
    common_free(key);
    replication__crdt_table_free(shape);
    return rc;
}

int replication__crdt_bootstrap(struct replication__crdt *crdt)
{
    struct boot bt = {.crdt = crdt};
    struct common_buf names;
    uint64_t done = 0;
    size_t at = 0;
    int rc;

    ASSERT(crdt != NULL);
    if (crdt->gate != NULL) {
        /* Leader mode: only the writer's commits replicate, and at open
         * no node is the writer yet; its rows from before are not
         * recorded (docs/replication.md). */
        return 0;
    }
    rc = replication__crdt_meta_get(crdt, "bootstrap", &done);
    replication__crdt_stmts_close(crdt);
    if (rc != 0 || done != 0) {
        return rc;
    }
    common_buf_init(&names, SIZE_MAX);
    replication__crdt_builder_init(&bt.b);
    rc = replication__crdt_table_names(crdt->db, &names);
    while (rc == 0 && at < names.size) {
        const char *table = (const char *)names.data + at;
        rc = boot_table(&bt, table);
        at += strlen(table) + 1;
    }
    if (rc == 0) {
        rc = flush(&bt, true);
    }
    replication__crdt_builder_close(&bt.b);
    common_buf_close(&names);
    return rc;
}
