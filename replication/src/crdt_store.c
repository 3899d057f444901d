/* SPDX-License-Identifier: MIT
 *
 * crdt_store.c: the crdt metadata in the engine's hidden system tables
 * (crdt.h lists them; crdt.md §6.3 is the model) and the register merge
 * rules of crdt.md §6.4, shared by the local capture and the remote merge:
 *
 *   EXIST:  if K >= exist[k].K: exist[k] = (op, K);
 *           if dead: drop the cells of k with cell.K <= K
 *   SET:    if exist[k] is dead and K <= exist[k].K: discard (it can never
 *           become visible: a later INSERT rewrites every column)
 *           if cell[k,c] absent or K >= cell[k,c].K: cell[k,c] = (K, value)
 *
 * (>= rather than >: equal K comes only from one transaction, whose later
 * record is the later write; a change set is never applied twice.) Every
 * statement runs inside the caller's transaction: the commit being
 * captured or the merge's engine_apply_transaction().
 */
#include <string.h>

#include "crdt_int.h"

static const char *const create_sql =
    "CREATE TABLE IF NOT EXISTS sinew_crdt_meta(name TEXT PRIMARY KEY,"
    " value);"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_row(tbl TEXT NOT NULL,"
    " pk BLOB NOT NULL, alive INTEGER, hlc INTEGER, site BLOB,"
    " PRIMARY KEY(tbl, pk));"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_cell(tbl TEXT NOT NULL,"
    " pk BLOB NOT NULL, col TEXT NOT NULL, hlc INTEGER, site BLOB,"
    " has_shadow INTEGER, shadow, PRIMARY KEY(tbl, pk, col));"
    /* The engine looks a key up only whole, so a row's cells (the
     * statements that name tbl and pk but no col) need their own index. */
    "CREATE INDEX IF NOT EXISTS sinew_crdt_cell_row ON"
    " sinew_crdt_cell(tbl, pk);"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_vv(site BLOB PRIMARY KEY,"
    " head INTEGER);"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_log(origin BLOB NOT NULL,"
    " version INTEGER NOT NULL, chunk INTEGER NOT NULL, hlc INTEGER,"
    " bytes BLOB NOT NULL, PRIMARY KEY(origin, version, chunk));"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_pending(origin BLOB NOT NULL,"
    " version INTEGER NOT NULL, deferred INTEGER, bytes BLOB NOT NULL,"
    " reason TEXT NOT NULL DEFAULT 'wait', PRIMARY KEY(origin, version));"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_column(tbl TEXT NOT NULL,"
    " col TEXT NOT NULL, PRIMARY KEY(tbl, col));"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_floor(origin BLOB PRIMARY KEY,"
    " floor INTEGER);";

/* The site tie-break of the cell guards (K = (hlc, site), as
 * replication__crdt_k_cmp() orders it), or in the chaos suite's mutant
 * (SINEW_MUTATION_NO_SITE_TIEBREAK, see crdt_key.c) none: at equal HLCs a
 * write always lands. The mutant keeps ?4 in the statement, so binding
 * stays the same. */
#ifdef SINEW_MUTATION_NO_SITE_TIEBREAK
#define CRDT_STORE_TIE_PUT "(excluded.site >= site OR 1)"
#define CRDT_STORE_TIE_DROP "(site <= ?4 OR 1)"
#else
#define CRDT_STORE_TIE_PUT "excluded.site >= site"
#define CRDT_STORE_TIE_DROP "site <= ?4"
#endif

static const char *const stmt_sql[CRDT_STMT_COUNT] = {
    [CRDT_ROW_GET] = "SELECT alive, hlc, site FROM sinew_crdt_row"
                     " WHERE tbl = ?1 AND pk = ?2",
    /* The writes of rows that are rewritten again and again (registers,
     * version vector, meta) update them in place when they exist: an
     * upsert touches no key, where INSERT OR REPLACE deletes the row and
     * inserts another, and a deleted row that held the table's largest
     * rowid makes the engine look for the next one across the table. A
     * cell is written only when K = (?4, ?5) is at least its own: the
     * SQL comparison of an INTEGER hlc (below 2^63) and a 16-byte site
     * orders as replication__crdt_k_cmp() does. */
    [CRDT_ROW_PUT] = "INSERT INTO sinew_crdt_row VALUES (?1, ?2, ?3, ?4, ?5)"
                     " ON CONFLICT(tbl, pk) DO UPDATE SET"
                     " alive = excluded.alive, hlc = excluded.hlc,"
                     " site = excluded.site",
    [CRDT_CELL_PUT] = "INSERT INTO sinew_crdt_cell"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                      " ON CONFLICT(tbl, pk, col) DO UPDATE SET"
                      " hlc = excluded.hlc, site = excluded.site,"
                      " has_shadow = excluded.has_shadow,"
                      " shadow = excluded.shadow"
                      " WHERE excluded.hlc > hlc OR (excluded.hlc = hlc"
                      " AND " CRDT_STORE_TIE_PUT ")",
    [CRDT_CELL_DROP] = "DELETE FROM sinew_crdt_cell WHERE tbl = ?1"
                       " AND pk = ?2 AND (hlc < ?3 OR (hlc = ?3"
                       " AND " CRDT_STORE_TIE_DROP "))",
    [CRDT_CELL_SHADOWS] = "SELECT col, has_shadow, shadow FROM"
                          " sinew_crdt_cell WHERE tbl = ?1 AND pk = ?2",
    [CRDT_CELL_SHADOW_SET] = "UPDATE sinew_crdt_cell SET has_shadow = 1,"
                             " shadow = ?4 WHERE tbl = ?1 AND pk = ?2"
                             " AND col = ?3",
    /* Rows already clear are left alone: the same result, fewer writes. */
    [CRDT_CELL_UNSHADOW] = "UPDATE sinew_crdt_cell SET has_shadow = 0,"
                           " shadow = NULL WHERE tbl = ?1 AND pk = ?2"
                           " AND (has_shadow IS NOT 0 OR shadow IS NOT NULL)",
    [CRDT_VV_GET] = "SELECT head FROM sinew_crdt_vv WHERE site = ?1",
    [CRDT_VV_PUT] = "INSERT INTO sinew_crdt_vv VALUES (?1, ?2)"
                    " ON CONFLICT(site) DO UPDATE SET head = excluded.head",
    [CRDT_META_GET] = "SELECT value FROM sinew_crdt_meta WHERE name = ?1",
    [CRDT_META_PUT] = "INSERT INTO sinew_crdt_meta VALUES (?1, ?2)"
                      " ON CONFLICT(name) DO UPDATE SET value = excluded.value",
    [CRDT_LOG_PUT] = "INSERT INTO sinew_crdt_log VALUES (?1, ?2, ?3, ?4, ?5)",
    [CRDT_PENDING_PUT] = "INSERT OR REPLACE INTO sinew_crdt_pending"
                         " VALUES (?1, ?2, ?3, ?4, 'wait')",
    [CRDT_PENDING_MARK] = "UPDATE sinew_crdt_pending SET deferred = ?3"
                          " WHERE origin = ?1 AND version = ?2"
                          " AND reason = 'wait'",
    [CRDT_PENDING_DROP] = "DELETE FROM sinew_crdt_pending WHERE origin = ?1"
                          " AND version = ?2 AND reason = 'wait'",
};

int replication__crdt_store_create(struct engine_db *db)
{
    return engine_exec_system(db, create_sql, NULL, NULL);
}

int replication__crdt_stmt(struct replication__crdt *crdt,
                           enum replication__crdt_stmt id,
                           struct engine_stmt **out)
{
    struct engine_stmt **stmt = &crdt->stmts[id];
    int rc;

    ASSERT(id < CRDT_STMT_COUNT);
    if (*stmt == NULL) {
        rc = engine_prepare(crdt->db, stmt_sql[id], -1, stmt, NULL);
        if (rc != 0) {
            return rc;
        }
    } else {
        /* What reset returns is the last step's error, already handed to
         * whoever ran it: not this use's business. */
        (void)engine_reset(*stmt);
        rc = engine_clear_bindings(*stmt);
        if (rc != 0) {
            return rc;
        }
    }
    *out = *stmt;
    return 0;
}

/* The statements stay prepared from one transaction to the next (the
 * engine plans a statement again when the schema changed since: DDL,
 * another handle's, a rollback's), which spares a prepare of each at
 * every commit and merge. Resetting them when a transaction ends leaves
 * none running, so none holds a read snapshot of a file database, and
 * clearing the bindings lets go of large values (log chunks). */
void replication__crdt_stmts_close(struct replication__crdt *crdt)
{
    size_t i;

    crdt->exist.valid = false;
    for (i = 0; i < CRDT_STMT_COUNT; i++) {
        if (crdt->stmts[i] != NULL) {
            (void)engine_reset(crdt->stmts[i]);
            (void)engine_clear_bindings(crdt->stmts[i]);
        }
    }
}

void replication__crdt_stmts_free(struct replication__crdt *crdt)
{
    size_t i;

    for (i = 0; i < CRDT_STMT_COUNT; i++) {
        engine_finalize(crdt->stmts[i]);
        crdt->stmts[i] = NULL;
    }
}

int replication__crdt_step_done(struct replication__crdt *crdt,
                                struct engine_stmt *stmt)
{
    int rc = engine_step(stmt);

    (void)crdt;
    return rc == ENGINE_DONE ? 0 : rc < 0 ? rc : ENGINE_EMISUSE;
}

/* Steps a one-row lookup: *found says whether it has a row. */
static int step_row(struct engine_stmt *stmt, bool *found)
{
    int rc = engine_step(stmt);

    *found = rc == ENGINE_ROW;
    return rc == ENGINE_ROW || rc == ENGINE_DONE ? 0 : rc;
}

int replication__crdt_meta_get(struct replication__crdt *crdt, const char *name,
                               uint64_t *out)
{
    struct engine_stmt *stmt;
    bool found;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_META_GET, &stmt);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, name, -1);
    }
    if (rc == 0) {
        rc = step_row(stmt, &found);
    }
    if (rc == 0) {
        *out = found ? (uint64_t)engine_column_int64(stmt, 0) : 0;
    }
    return rc;
}

int replication__crdt_meta_put(struct replication__crdt *crdt, const char *name,
                               uint64_t value)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_META_PUT, &stmt);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, name, -1);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)value);
    }
    return rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
}

int replication__crdt_vv_get(struct replication__crdt *crdt,
                             const uint8_t *site, uint64_t *head)
{
    struct engine_stmt *stmt;
    bool found;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_VV_GET, &stmt);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, site, REPLICATION__SITE_ID_BYTES);
    }
    if (rc == 0) {
        rc = step_row(stmt, &found);
    }
    if (rc == 0) {
        *head = found ? (uint64_t)engine_column_int64(stmt, 0) : 0;
    }
    return rc;
}

int replication__crdt_vv_put(struct replication__crdt *crdt,
                             const uint8_t *site, uint64_t head)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_VV_PUT, &stmt);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, site, REPLICATION__SITE_ID_BYTES);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)head);
    }
    return rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
}

static int bind_row(struct engine_stmt *stmt,
                    const struct replication__crdt_row *row)
{
    int rc = engine_bind_text(stmt, 1, row->table, -1);

    if (rc == 0) {
        rc = engine_bind_blob(stmt, 2, row->pk, (int)row->pk_size);
    }
    return rc;
}

/* Reads a K from columns (hlc, site) of stmt's row. */
static void column_k(struct engine_stmt *stmt, int column,
                     struct replication__crdt_k *k)
{
    const void *site = engine_column_blob(stmt, column + 1);

    memset(k, 0, sizeof(*k));
    k->hlc = (uint64_t)engine_column_int64(stmt, column);
    if (site != NULL &&
        engine_column_bytes(stmt, column + 1) == REPLICATION__SITE_ID_BYTES) {
        memcpy(k->site, site, sizeof(k->site));
    }
}

/* Whether the remembered existence register is row's. */
static bool exist_is(const struct replication__crdt *crdt,
                     const struct replication__crdt_row *row)
{
    const struct replication__crdt_exist *e = &crdt->exist;

    return e->valid && e->schema_version == engine_schema_version(crdt->db) &&
           e->pk_size == row->pk_size && strcmp(e->table, row->table) == 0 &&
           (row->pk_size == 0 || memcmp(e->pk, row->pk, row->pk_size) == 0);
}

/* Remembers row's existence register, when its address fits. */
static void exist_remember(struct replication__crdt *crdt,
                           const struct replication__crdt_row *row, bool found,
                           bool alive, const struct replication__crdt_k *k)
{
    struct replication__crdt_exist *e = &crdt->exist;
    size_t table_size = strlen(row->table);

    e->valid = table_size < sizeof(e->table) && row->pk_size <= sizeof(e->pk);
    if (!e->valid) {
        return;
    }
    e->schema_version = engine_schema_version(crdt->db);
    memcpy(e->table, row->table, table_size + 1);
    if (row->pk_size > 0) {
        memcpy(e->pk, row->pk, row->pk_size);
    }
    e->pk_size = row->pk_size;
    e->found = found;
    e->alive = alive;
    e->k = found ? *k : (struct replication__crdt_k){0};
}

int replication__crdt_row_get(struct replication__crdt *crdt,
                              const struct replication__crdt_row *row,
                              bool *found, bool *alive,
                              struct replication__crdt_k *k)
{
    struct engine_stmt *stmt;
    int rc;

    if (exist_is(crdt, row)) {
        *found = crdt->exist.found;
        if (*found) {
            *alive = crdt->exist.alive;
            *k = crdt->exist.k;
        }
        return 0;
    }
    rc = replication__crdt_stmt(crdt, CRDT_ROW_GET, &stmt);
    if (rc == 0) {
        rc = bind_row(stmt, row);
    }
    if (rc == 0) {
        rc = step_row(stmt, found);
    }
    if (rc == 0 && *found) {
        *alive = engine_column_int64(stmt, 0) != 0;
        column_k(stmt, 1, k);
    }
    if (rc == 0) {
        exist_remember(crdt, row, *found, *found && *alive, k);
    }
    return rc;
}

static int drop_cells(struct replication__crdt *crdt,
                      const struct replication__crdt_row *row,
                      const struct replication__crdt_k *k)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(crdt, CRDT_CELL_DROP, &stmt);
    if (rc == 0) {
        rc = bind_row(stmt, row);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 3, (int64_t)k->hlc);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 4, k->site, sizeof(k->site));
    }
    return rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
}

int replication__crdt_merge_exist(struct replication__crdt *crdt,
                                  const struct replication__crdt_row *row,
                                  bool alive,
                                  const struct replication__crdt_k *k)
{
    struct replication__crdt_k current;
    struct engine_stmt *stmt;
    bool found, was_alive;
    int rc;

    rc = replication__crdt_row_get(crdt, row, &found, &was_alive, &current);
    if (rc != 0 || (found && replication__crdt_k_cmp(k, &current) < 0)) {
        return rc;
    }
    rc = replication__crdt_stmt(crdt, CRDT_ROW_PUT, &stmt);
    if (rc == 0) {
        rc = bind_row(stmt, row);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 3, alive ? 1 : 0);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 4, (int64_t)k->hlc);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 5, k->site, sizeof(k->site));
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(crdt, stmt);
    }
    if (rc == 0) {
        exist_remember(crdt, row, true, alive, k);
    } else {
        crdt->exist.valid = false; /* the write may have half happened */
    }
    if (rc == 0 && !alive) {
        rc = drop_cells(crdt, row, k);
    }
    return rc;
}

/* Whether a SET at k loses to the row's tombstone (it can never become
 * visible); whether it loses to the cell, CRDT_CELL_PUT decides. */
static int cell_loses(struct replication__crdt *crdt,
                      const struct replication__crdt_row *row,
                      const struct replication__crdt_k *k, bool *loses)
{
    struct replication__crdt_k current;
    bool found, alive;
    int rc;

    rc = replication__crdt_row_get(crdt, row, &found, &alive, &current);
    if (rc == 0) {
        *loses = found && !alive && replication__crdt_k_cmp(k, &current) <= 0;
    }
    return rc;
}

int replication__crdt_merge_cell_won(
    struct replication__crdt *crdt, const struct replication__crdt_row *row,
    const char *column, const struct engine_change_value *value, bool shadow,
    const struct replication__crdt_k *k, bool *won)
{
    static const struct engine_change_value null = {.type = ENGINE_NULL};
    struct engine_stmt *stmt;
    bool loses;
    int rc;

    *won = false;
    rc = cell_loses(crdt, row, k, &loses);
    if (rc != 0 || loses) {
        return rc;
    }
    rc = replication__crdt_stmt(crdt, CRDT_CELL_PUT, &stmt);
    if (rc == 0) {
        rc = bind_row(stmt, row);
    }
    if (rc == 0) {
        rc = engine_bind_text(stmt, 3, column, -1);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 4, (int64_t)k->hlc);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 5, k->site, sizeof(k->site));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 6, shadow ? 1 : 0);
    }
    if (rc == 0) {
        rc = replication__crdt_bind_value(stmt, 7, shadow ? value : &null);
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(crdt, stmt);
    }
    /* The upsert changed no row when the cell's own K was greater. */
    *won = rc == 0 && engine_changes(crdt->db) > 0;
    return rc;
}

int replication__crdt_merge_cell(struct replication__crdt *crdt,
                                 const struct replication__crdt_row *row,
                                 const char *column,
                                 const struct engine_change_value *value,
                                 bool shadow,
                                 const struct replication__crdt_k *k)
{
    bool won;

    return replication__crdt_merge_cell_won(crdt, row, column, value, shadow, k,
                                            &won);
}
