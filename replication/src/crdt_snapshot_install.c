/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot_install.c: installing a peer's snapshot as a join with
 * this node's replicated state, then carrying on (crdt.h has the rules;
 * crdt.md §6.7: "a node whose summary is behind the watermark ...
 * restores a snapshot, then re-applies its own unacknowledged local
 * transactions"; §5 #26: the row deleted and collected elsewhere does not
 * reappear).
 *
 * The snapshot is the sender's state: per origin, every version up to the
 * sender's head. This node may hold versions above those heads (its own
 * unacknowledged ones above all, and others' the sender had not seen, even
 * ones pruned from its log since). Its version vector must say only what
 * its registers hold, and its own head can never go back (a version number
 * once used names one change set forever: peers that already have it
 * would ignore a different one under the same number). So the install
 * builds the snapshot's state, then merges into it, in its transaction,
 * the change sets of its log above the snapshot's heads and, for an origin
 * whose log lost some of them (pruned before the sender had them), this
 * node's registers of that origin (crdt_snapshot_join.c). The state is
 * then the join of both, what each side will have once the other's writes
 * reach it, and each origin's head is the higher of the two. For the other
 * origins the snapshot's registers stand alone: it already has every
 * write of theirs this node has, or collected it.
 *
 * Everything is checked before the transaction starts (crdt_snapshot_
 * check.c), and what cannot be (the schema's statements making tables
 * that fit the rows) fails inside it, rolled back: an install happens
 * whole or not at all. The transaction is engine_apply_transaction()'s,
 * which the commit hook never sees: nothing of the snapshot is captured as
 * a local change set.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "changeset_codec.h"
#include "crdt_int.h"
#include "crdt_snapshot_int.h"
#include "replication.h"

/* The install's own statements over the system tables. */
enum install_stmt {
    PUT_EXIST,
    PUT_CELL,
    PUT_COLUMN,
    PUT_KEPT,
    INSTALL_STMT_COUNT
};

static const char *const install_sql[INSTALL_STMT_COUNT] = {
    [PUT_EXIST] = "INSERT OR REPLACE INTO sinew_crdt_row"
                  " VALUES (?1, ?2, ?3, ?4, ?5)",
    [PUT_CELL] = "INSERT OR REPLACE INTO sinew_crdt_cell"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [PUT_COLUMN] = "INSERT OR REPLACE INTO sinew_crdt_column VALUES (?1, ?2)",
    [PUT_KEPT] = "INSERT OR REPLACE INTO sinew_crdt_pending"
                 " VALUES (?1, ?2, 0, ?3, 'schema')",
};

/* An origin's versions after the install. */
struct install_origin {
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    uint64_t head;  /* max(this node's, the snapshot's) */
    uint64_t floor; /* another origin's: max(this node's, snapshot's head) */
};

struct install {
    struct replication__crdt *crdt;
    const struct replication__snapshot_body *body;
    const struct replication__snapshot_info *info;
    uint64_t local_version;         /* sinew_crdt_meta 'version' before */
    uint64_t own_snapshot;          /* the snapshot's head of this site */
    struct common_buf kept;         /* local tables it lacks, NUL-terminated */
    size_t kept_count;              /* names in kept */
    struct install_origin *origins; /* the version vector after */
    size_t origin_count;
    struct replication__changeset **runs; /* owned: merged back, hlc order */
    size_t run_count;
    size_t run_capacity;
    struct replication__snapshot_join join; /* this node's registers */
    struct engine_stmt *stmts[INSTALL_STMT_COUNT];
    /* The table whose rows the walk is at, and a key buffer for them. */
    struct replication__crdt_table *shape;
    struct engine_change_value *key;
    struct replication__crdt_install stats;
};

/* ---- before the transaction: what this node has ---- */

static bool is_own(const struct install *ins, const uint8_t *origin)
{
    return memcmp(origin, ins->crdt->site, REPLICATION__SITE_ID_BYTES) == 0;
}

/* Collects one origin's logged change sets (log_since's visit). */
static int run_cb(void *ctx, const struct replication__changeset *cs)
{
    struct install *ins = ctx;
    struct replication__changeset **grown, *copy;
    size_t n = ins->run_capacity ? 2 * ins->run_capacity : 16;
    int rc;

    if (ins->run_count == ins->run_capacity) {
        grown = common_realloc_array(ins->runs, n, sizeof(*grown));
        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        ins->runs = grown;
        ins->run_capacity = n;
    }
    rc = replication__crdt_changeset_clone(cs, &copy);
    if (rc == 0) {
        ins->runs[ins->run_count++] = copy;
    }
    return rc;
}

static int origin_add(struct install *ins, const uint8_t *origin, uint64_t head,
                      uint64_t floor)
{
    struct install_origin *grown;

    grown = common_realloc_array(ins->origins, ins->origin_count + 1,
                                 sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    ins->origins = grown;
    memcpy(grown[ins->origin_count].site, origin, REPLICATION__SITE_ID_BYTES);
    grown[ins->origin_count].head = head;
    grown[ins->origin_count++].floor = floor;
    return 0;
}

/* An origin's head and floor after the install (local: its head here, 0
 * when unknown here). When this node holds versions of it above the
 * snapshot's head, the change sets of its log above that head are merged
 * back; when the log no longer holds them all (its floor is above the
 * snapshot's head: pruned before the sender had them), the registers of
 * that origin are joined too, for they hold what the log lost. */
static int origin_plan(struct install *ins, const uint8_t *origin,
                       uint64_t local)
{
    uint64_t snap = replication__snapshot_head_of(
        ins->info->heads, ins->info->head_count, origin);
    uint64_t floor = 0;
    int rc = replication__crdt_floor(ins->crdt, origin, &floor);

    if (rc == 0 && local > snap) {
        rc = replication__crdt_log_since(ins->crdt, origin, snap, run_cb, ins);
    }
    if (rc == 0 && local > snap && floor > snap) {
        rc = replication__snapshot_join_ahead(&ins->join, origin);
    }
    if (rc != 0) {
        return rc;
    }
    return origin_add(ins, origin, snap > local ? snap : local,
                      snap > floor ? snap : floor);
}

static int run_cmp(const void *a, const void *b)
{
    const struct replication__changeset *x =
        *(const struct replication__changeset *const *)a;
    const struct replication__changeset *y =
        *(const struct replication__changeset *const *)b;
    int c;

    if (x->hlc != y->hlc) {
        return x->hlc < y->hlc ? -1 : 1;
    }
    c = memcmp(x->origin, y->origin, sizeof(x->origin));
    if (c != 0) {
        return c;
    }
    return x->version < y->version ? -1 : x->version > y->version;
}

/* The version vector after (every origin known here or to the snapshot),
 * and the change sets to merge back, in HLC order. */
static int plan_versions(struct install *ins)
{
    const struct replication__snapshot_info *info = ins->info;
    struct replication__head *local = NULL;
    size_t count = 0, i;
    int rc;

    ins->own_snapshot = replication__snapshot_head_of(
        info->heads, info->head_count, ins->crdt->site);
    rc = replication__crdt_vv_list(ins->crdt, &local, &count);
    for (i = 0; rc == 0 && i < count; i++) {
        rc = origin_plan(ins, local[i].site, local[i].head);
    }
    for (i = 0; rc == 0 && i < info->head_count; i++) {
        const uint8_t *origin = info->heads[i].site;
        if (replication__snapshot_head_of(local, count, origin) == 0) {
            rc = origin_plan(ins, origin, 0);
        }
    }
    common_free(local);
    if (rc == 0 && ins->run_count > 1) {
        qsort(ins->runs, ins->run_count, sizeof(*ins->runs), run_cmp);
    }
    return rc;
}

/* The local tables the snapshot lacks: kept, with their rows and
 * registers (a table made here the sender has not seen, or one made
 * outside replication: the snapshot says nothing about them). */
static int plan_kept(struct install *ins)
{
    struct engine_stmt *stmt = NULL;
    const char *name;
    int rc;

    rc = engine_prepare(ins->crdt->db,
                        "SELECT name FROM sqlite_schema WHERE type = 'table'",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        name = engine_column_text(stmt, 0);
        rc = 0;
        if (name != NULL && !replication__snapshot_has_table(ins->info, name)) {
            rc = common_buf_append(&ins->kept, name, strlen(name) + 1);
            ins->kept_count++;
        }
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* ---- in the transaction: the snapshot's parts ---- */

static bool kept_has(const struct install *ins, const char *name)
{
    size_t at = 0;

    while (at < ins->kept.size) {
        const char *item = (const char *)ins->kept.data + at;
        if (replication__snapshot_same_name(item, name)) {
            return true;
        }
        at += strlen(item) + 1;
    }
    return false;
}

/* One of the install's statements, reset and unbound. */
static int stmt_get(struct install *ins, enum install_stmt id,
                    struct engine_stmt **out)
{
    struct engine_stmt **stmt = &ins->stmts[id];
    int rc = 0;

    if (*stmt == NULL) {
        rc = engine_prepare(ins->crdt->db, install_sql[id], -1, stmt, NULL);
    } else {
        (void)engine_reset(*stmt);
        rc = engine_clear_bindings(*stmt);
    }
    *out = *stmt;
    return rc;
}

/* Runs sql with ?1 the blob origin (16 bytes) and ?2, ?3 integers (each
 * bound when the statement has it). */
static int exec_origin(struct install *ins, const char *sql,
                       const uint8_t *origin, uint64_t a, uint64_t b)
{
    struct engine_stmt *stmt = NULL;
    int rc, count;

    rc = engine_prepare(ins->crdt->db, sql, -1, &stmt, NULL);
    count = rc == 0 ? engine_bind_parameter_count(stmt) : 0;
    rc = rc == 0 ? engine_bind_blob(stmt, 1, origin, REPLICATION__SITE_ID_BYTES)
                 : rc;
    rc = rc == 0 && count >= 2 ? engine_bind_int64(stmt, 2, (int64_t)a) : rc;
    rc = rc == 0 && count >= 3 ? engine_bind_int64(stmt, 3, (int64_t)b) : rc;
    rc = rc == 0 ? replication__crdt_step_done(ins->crdt, stmt) : rc;
    engine_finalize(stmt);
    return rc;
}

static int run_ddl(struct install *ins, const char *sql)
{
    struct engine_change change = {.kind = ENGINE_CHANGE_SCHEMA, .sql = sql};

    return engine_apply_change(ins->crdt->db, &change);
}

/* "DROP <TABLE|INDEX> "name"" of the local object the snapshot's object
 * named like it replaces, into sql: a table it has too, or an index in its
 * way (a kept table is never dropped); sql stays empty when there is none. */
static int drop_sql(struct install *ins,
                    const struct replication__snapshot_object *o,
                    struct common_buf *sql)
{
    struct engine_stmt *stmt = NULL;
    const char *name;
    bool table;
    int rc;

    rc = engine_prepare(ins->crdt->db,
                        "SELECT type, name FROM sqlite_schema WHERE"
                        " lower(name) = lower(?1) AND sql IS NOT NULL",
                        -1, &stmt, NULL);
    rc = rc == 0 ? engine_bind_text(stmt, 1, o->name, -1) : rc;
    rc = rc == 0 ? engine_step(stmt) : rc;
    if (rc == ENGINE_ROW) {
        table = strcmp(engine_column_text(stmt, 0), "table") == 0;
        name = engine_column_text(stmt, 1);
        rc = 0;
        if (!table || !kept_has(ins, name)) {
            rc = common_buf_append(sql, table ? "DROP TABLE " : "DROP INDEX ",
                                   11);
            rc = rc == 0 ? replication__snapshot_quote(sql, name) : rc;
            rc = rc == 0 ? common_buf_append_byte(sql, '\0') : rc;
        }
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int drop_named(struct install *ins,
                      const struct replication__snapshot_object *o)
{
    struct common_buf sql;
    int rc;

    common_buf_init(&sql, SIZE_MAX);
    rc = drop_sql(ins, o, &sql);
    if (rc == 0 && sql.size > 0) {
        rc = run_ddl(ins, (const char *)sql.data);
    }
    common_buf_close(&sql);
    return rc;
}

/* Whether sqlite_schema has an object of that type and exact name. */
static int object_made(struct install *ins,
                       const struct replication__snapshot_object *o, bool *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(ins->crdt->db,
                        "SELECT count(*) FROM sqlite_schema WHERE type = ?1"
                        " AND name = ?2",
                        -1, &stmt, NULL);
    rc = rc == 0
             ? engine_bind_text(stmt, 1, o->is_index ? "index" : "table", -1)
             : rc;
    rc = rc == 0 ? engine_bind_text(stmt, 2, o->name, -1) : rc;
    rc = rc == 0 ? engine_step(stmt) : rc;
    if (rc == ENGINE_ROW) {
        *out = engine_column_int64(stmt, 0) == 1;
        rc = 0;
    }
    engine_finalize(stmt);
    return rc;
}

/* A table or index of the snapshot, made by its statement. */
static int install_object(void *ctx,
                          const struct replication__snapshot_object *o)
{
    struct install *ins = ctx;
    bool made = false;
    int rc;

    rc = drop_named(ins, o);
    rc = rc == 0 ? run_ddl(ins, o->sql) : rc;
    if (rc == ENGINE_ESQL || rc == ENGINE_ECONSTRAINT) {
        LOGF(&ins->crdt->log, COMMON_LOG_WARN,
             "snapshot refused: its statement fails here name=%s error=%s",
             o->name, engine_errmsg(ins->crdt->db));
        return REPLICATION_EFORMAT;
    }
    rc = rc == 0 ? object_made(ins, o, &made) : rc;
    return rc == 0 && !made ? REPLICATION_EFORMAT : rc;
}

/* A table whose rows follow: the one its statement made must fit them. */
static int install_table(void *ctx, const struct replication__snapshot_table *t)
{
    struct install *ins = ctx;
    struct replication__crdt_table *shape = NULL;
    size_t i;
    int rc;

    replication__crdt_table_free(ins->shape);
    ins->shape = NULL;
    common_free(ins->key);
    ins->key = NULL;
    rc = replication__crdt_table_load(ins->crdt->db, t->name, &shape);
    if (rc == REPLICATION_ESCHEMA) {
        return REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        return rc;
    }
    ins->shape = shape;
    if (shape->column_count != t->column_count ||
        (shape->key_count == 0) != t->rowid) {
        return REPLICATION_EFORMAT;
    }
    for (i = 0; i < t->column_count; i++) {
        if (strcmp(shape->columns[i], t->columns[i]) != 0) {
            return REPLICATION_EFORMAT;
        }
    }
    ins->key = common_calloc(shape->key_count + 1, sizeof(*ins->key));
    return ins->key == NULL ? COMMON_ENOMEM : 0;
}

static int install_row(void *ctx, const struct replication__snapshot_table *t,
                       const struct engine_change_value *values, size_t count)
{
    struct install *ins = ctx;
    const struct replication__crdt_table *shape = ins->shape;
    struct engine_change change = {.kind = ENGINE_CHANGE_INSERT,
                                   .table = shape->name};
    size_t i;
    int rc;

    ASSERT(count == shape->column_count + (t->rowid ? 1 : 0));
    if (t->rowid) {
        change.key = values++;
        change.key_count = 1;
    } else {
        for (i = 0; i < shape->key_count; i++) {
            ins->key[i] = values[shape->key_columns[i]];
        }
        change.key = ins->key;
        change.key_count = shape->key_count;
    }
    change.values = values;
    change.value_count = shape->column_count;
    rc = engine_apply_change(ins->crdt->db, &change);
    if (rc == ENGINE_ECONSTRAINT || rc == ENGINE_EMISMATCH) {
        LOGF(&ins->crdt->log, COMMON_LOG_WARN,
             "snapshot refused: a row does not fit table=%s error=%s",
             shape->name, engine_errmsg(ins->crdt->db));
        return REPLICATION_EFORMAT;
    }
    return rc;
}

static int install_exist(void *ctx, const struct replication__snapshot_exist *e)
{
    struct install *ins = ctx;
    struct engine_stmt *stmt;
    int rc = stmt_get(ins, PUT_EXIST, &stmt);

    rc = rc == 0 ? engine_bind_text(stmt, 1, e->table, -1) : rc;
    rc = rc == 0 ? engine_bind_blob(stmt, 2, e->pk, (int)e->pk_size) : rc;
    rc = rc == 0 ? engine_bind_int64(stmt, 3, e->alive ? 1 : 0) : rc;
    rc = rc == 0 ? engine_bind_int64(stmt, 4, (int64_t)e->hlc) : rc;
    rc = rc == 0
             ? engine_bind_blob(stmt, 5, e->site, REPLICATION__SITE_ID_BYTES)
             : rc;
    return rc == 0 ? replication__crdt_step_done(ins->crdt, stmt) : rc;
}

static int install_cell(void *ctx, const struct replication__snapshot_cell *c)
{
    struct install *ins = ctx;
    struct engine_stmt *stmt;
    int rc = stmt_get(ins, PUT_CELL, &stmt);

    rc = rc == 0 ? engine_bind_text(stmt, 1, c->table, -1) : rc;
    rc = rc == 0 ? engine_bind_blob(stmt, 2, c->pk, (int)c->pk_size) : rc;
    rc = rc == 0 ? engine_bind_text(stmt, 3, c->column, -1) : rc;
    rc = rc == 0 ? engine_bind_int64(stmt, 4, (int64_t)c->hlc) : rc;
    rc = rc == 0
             ? engine_bind_blob(stmt, 5, c->site, REPLICATION__SITE_ID_BYTES)
             : rc;
    rc = rc == 0 ? engine_bind_int64(stmt, 6, c->has_shadow ? 1 : 0) : rc;
    rc = rc == 0 ? replication__crdt_bind_value(stmt, 7, &c->shadow) : rc;
    return rc == 0 ? replication__crdt_step_done(ins->crdt, stmt) : rc;
}

static int install_column(void *ctx, const char *table, const char *column)
{
    struct install *ins = ctx;
    struct engine_stmt *stmt;
    int rc = stmt_get(ins, PUT_COLUMN, &stmt);

    rc = rc == 0 ? engine_bind_text(stmt, 1, table, -1) : rc;
    rc = rc == 0 ? engine_bind_text(stmt, 2, column, -1) : rc;
    return rc == 0 ? replication__crdt_step_done(ins->crdt, stmt) : rc;
}

static int install_kept(void *ctx, const uint8_t *bytes, size_t size)
{
    struct install *ins = ctx;
    struct replication__chunk_info chunk;
    struct engine_stmt *stmt;
    int rc = replication__chunk_peek(bytes, size, &chunk);

    rc = rc == 0 ? stmt_get(ins, PUT_KEPT, &stmt) : rc;
    rc = rc == 0 ? engine_bind_blob(stmt, 1, chunk.origin,
                                    REPLICATION__SITE_ID_BYTES)
                 : rc;
    rc = rc == 0 ? engine_bind_int64(stmt, 2, (int64_t)chunk.version) : rc;
    rc = rc == 0 ? engine_bind_blob(stmt, 3, bytes, (int)size) : rc;
    return rc == 0 ? replication__crdt_step_done(ins->crdt, stmt) : rc;
}

/* ---- in the transaction: what the snapshot replaces ---- */

/* The registers and catalog rows of every table but the kept ones, each
 * table's read by the join first. */
static int forget_registers(struct install *ins)
{
    static const char *const sql[] = {
        "SELECT DISTINCT tbl FROM sinew_crdt_row",
        "SELECT DISTINCT tbl FROM sinew_crdt_cell",
        "SELECT DISTINCT tbl FROM sinew_crdt_column",
    };
    struct engine_stmt *stmt = NULL;
    struct common_buf names;
    size_t i, at = 0;
    int rc = 0;

    common_buf_init(&names, SIZE_MAX);
    for (i = 0; rc == 0 && i < sizeof(sql) / sizeof(sql[0]); i++) {
        rc = engine_prepare(ins->crdt->db, sql[i], -1, &stmt, NULL);
        while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
            const char *name = engine_column_text(stmt, 0);
            name = name != NULL ? name : "";
            rc = kept_has(ins, name)
                     ? 0
                     : common_buf_append(&names, name, strlen(name) + 1);
        }
        engine_finalize(stmt);
        rc = rc == ENGINE_DONE ? 0 : rc;
    }
    while (rc == 0 && at < names.size) {
        const char *name = (const char *)names.data + at;
        rc = replication__snapshot_join_read(ins->crdt, &ins->join, name);
        rc = rc == 0 ? replication__crdt_schema_forget(ins->crdt, name) : rc;
        at += strlen(name) + 1;
    }
    common_buf_close(&names);
    return rc;
}

/* Per origin: the head, the log kept (above the floor), the floor, the
 * waiting sets now covered; the local counter. */
static int versions_write(struct install *ins)
{
    struct replication__crdt *crdt = ins->crdt;
    size_t i;
    int rc;

    rc = engine_exec(crdt->db, "DELETE FROM sinew_crdt_vv", NULL, NULL);
    for (i = 0; rc == 0 && i < ins->origin_count; i++) {
        const struct install_origin *h = &ins->origins[i];
        rc = h->head > 0 ? replication__crdt_vv_put(crdt, h->site, h->head) : 0;
        rc = rc == 0 ? exec_origin(ins,
                                   "DELETE FROM sinew_crdt_pending WHERE"
                                   " origin = ?1 AND version <= ?2 AND"
                                   " reason = 'wait'",
                                   h->site, h->head, 0)
                     : rc;
        if (rc != 0 || is_own(ins, h->site)) {
            continue; /* its own log and floor stay */
        }
        rc = exec_origin(ins,
                         "DELETE FROM sinew_crdt_log WHERE origin = ?1 AND"
                         " (version <= ?2 OR version > ?3)",
                         h->site, h->floor, h->head);
        rc = rc == 0 ? exec_origin(ins,
                                   h->floor > 0
                                       ? "INSERT OR REPLACE INTO"
                                         " sinew_crdt_floor VALUES (?1, ?2)"
                                       : "DELETE FROM sinew_crdt_floor"
                                         " WHERE origin = ?1",
                                   h->site, h->floor, 0)
                     : rc;
    }
    if (rc == 0 && ins->own_snapshot > ins->local_version) {
        /* The cluster has more of this site than this database (restored
         * from an old copy): never number a new change set twice. */
        rc = replication__crdt_meta_put(crdt, "version", ins->own_snapshot);
    }
    return rc == 0 ? replication__crdt_meta_put(crdt, "hlc",
                                                hlc_high_water(crdt->clock))
                   : rc;
}

/* The kept records (reason 'schema') of versions the snapshot's heads
 * cover: its own list says which of them still wait for a schema. Those
 * of versions only this node has stay (their other records are joined). */
static int forget_kept(struct install *ins)
{
    const struct replication__snapshot_info *info = ins->info;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < info->head_count; i++) {
        rc = exec_origin(ins,
                         "DELETE FROM sinew_crdt_pending WHERE origin = ?1"
                         " AND version <= ?2 AND reason = 'schema'",
                         info->heads[i].site, info->heads[i].head, 0);
    }
    return rc;
}

static int install_cb(void *ctx, struct engine_db *db)
{
    struct install *ins = ctx;
    const struct replication__snapshot_visit visit = {
        .ctx = ins,
        .object = install_object,
        .table = install_table,
        .row = install_row,
        .exist = install_exist,
        .cell = install_cell,
        .column = install_column,
        .kept = install_kept,
    };
    size_t i;
    int rc;

    (void)db;
    rc = forget_registers(ins);
    rc = rc == 0 ? forget_kept(ins) : rc;
    rc = rc == 0 ? replication__snapshot_walk(ins->body, &visit) : rc;
    rc = rc == 0 ? versions_write(ins) : rc;
    for (i = 0; rc == 0 && i < ins->run_count; i++) {
        rc = replication__crdt_merge_within(ins->crdt, ins->runs[i]);
        ins->stats.merged++;
    }
    rc = rc == 0 ? replication__snapshot_join_merge(ins->crdt, &ins->join) : rc;
    ins->stats.joined = ins->join.merged;
    rc = rc == 0 ? replication__crdt_schema_sync(ins->crdt) : rc;
    replication__crdt_stmts_close(ins->crdt);
    return rc;
}

/* ---- the install ---- */

/* The clock receives the snapshot's largest stamp before any local write
 * (crdt.md §6.7), as it would each change set's: one stamped beyond the
 * maximum offset waits. *stamp is the install's own. */
static int clock_receive(struct install *ins, uint64_t *stamp)
{
    struct replication__crdt *crdt = ins->crdt;
    const uint8_t *s = ins->info->site;
    int rc;

    rc = ins->info->hlc_max > 0
             ? hlc_update(crdt->clock, ins->info->hlc_max, stamp)
             : hlc_now(crdt->clock, stamp);
    if (rc == HLC_EAHEAD) {
        LOGF(&crdt->log, COMMON_LOG_WARN,
             "snapshot deferred, stamped beyond the maximum clock offset"
             " from=%02x%02x%02x%02x stamp_ms=%" PRIu64,
             s[0], s[1], s[2], s[3], hlc_physical_ms(ins->info->hlc_max));
        return REPLICATION_EDEFERRED;
    }
    return rc;
}

/* After the transaction, committed or not: the counts and hashes kept in
 * memory follow the database again. */
static int resync_memory(struct install *ins, int rc)
{
    struct replication__crdt *crdt = ins->crdt;
    int load_rc = replication__crdt_kept_load(crdt);

    if (rc != 0) {
        /* The rolled-back schema sync may have moved it. */
        (void)replication__crdt_schema_hash_of(crdt->db, &crdt->schema_hash);
        return rc;
    }
    crdt->kept_hash = 0; /* try the snapshot's kept sets under this schema */
    return load_rc;
}

static void install_log(const struct install *ins)
{
    const uint8_t *s = ins->info->site;

    LOGF(&ins->crdt->log, COMMON_LOG_INFO,
         "snapshot installed from=%02x%02x%02x%02x rows=%zu registers=%zu"
         " kept_tables=%zu merged_back=%zu joined=%zu",
         s[0], s[1], s[2], s[3], ins->info->row_count,
         ins->info->register_count, ins->kept_count, ins->stats.merged,
         ins->stats.joined);
}

static void install_close(struct install *ins)
{
    size_t i;

    for (i = 0; i < INSTALL_STMT_COUNT; i++) {
        engine_finalize(ins->stmts[i]);
    }
    for (i = 0; i < ins->run_count; i++) {
        replication__crdt_changeset_free(ins->runs[i]);
    }
    common_free(ins->runs);
    common_free(ins->origins);
    replication__snapshot_join_close(&ins->join);
    common_free(ins->key);
    replication__crdt_table_free(ins->shape);
    common_buf_close(&ins->kept);
}

int replication__crdt_snapshot_install(struct replication__crdt *crdt,
                                       const uint8_t *bytes, size_t size,
                                       struct replication__crdt_install *stats)
{
    struct replication__snapshot_body body;
    struct replication__snapshot_info info;
    struct install ins = {.crdt = crdt, .body = &body, .info = &info};
    uint64_t stamp = 0;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(bytes != NULL || size == 0);
    ASSERT(!engine_in_transaction(crdt->db));
    common_buf_init(&ins.kept, SIZE_MAX);
    replication__snapshot_join_init(&ins.join);
    rc = replication__snapshot_open(bytes, size, &body);
    if (rc != 0) {
        install_close(&ins);
        return rc;
    }
    rc = replication__snapshot_check_body(&body, &info);
    rc = rc == 0 ? clock_receive(&ins, &stamp) : rc;
    rc = rc == 0 ? replication__crdt_local_version(crdt, &ins.local_version)
                 : rc;
    rc = rc == 0 ? plan_kept(&ins) : rc;
    rc = rc == 0 ? plan_versions(&ins) : rc;
    if (rc == 0) {
        rc = engine_apply_transaction(crdt->db, stamp, install_cb, &ins);
        rc = resync_memory(&ins, rc);
    }
    if (rc == 0) {
        install_log(&ins);
        /* Held sets the new heads cover are dropped, those now next are
         * applied, kept records tried under the new schema. */
        rc = replication__crdt_retry(crdt);
    }
    if (rc == 0 && stats != NULL) {
        *stats = ins.stats;
    }
    install_close(&ins);
    replication__snapshot_info_close(&info);
    replication__snapshot_body_close(&body);
    return rc;
}
