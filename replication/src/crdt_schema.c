/* SPDX-License-Identifier: MIT
 *
 * crdt_schema.c: what the registers know of the schema (crdt.md §6.8).
 *
 * The schema hash. Every change set carries its origin's schema as a
 * 64-bit hash of the user tables and indexes (type, name and SQL text of
 * sqlite_schema, in name order): "every envelope carries schema_version".
 * It is a hash, not a counter, so two nodes can tell they have the same
 * schema without asking each other; schemas made by different statements
 * (even differing in spacing) hash differently. It is used for logs and
 * for noticing that the local schema changed (crdt_quarantine.c), never to
 * decide a merge: records are matched to tables and columns by name.
 *
 * The column catalog, sinew_crdt_column(tbl, col): the columns the
 * registers of each table cover, kept in step with the tables after every
 * schema change (the commit hook's, a merged SCHEMA record's, or one made
 * behind crdt's back and noticed by its hash). It exists for one rule,
 * crdt.md §6.8's "an INSERT coming from a schema that lacks column c is
 * treated as also writing c = DEFAULT at the insert's K": a replica that
 * has c applies it as each such INSERT arrives (replication__crdt_aside_
 * fill); a replica that gains c later applies it then, to every alive
 * row, at the row's existence K, which is the K of the INSERT that made
 * it alive (an INSERT writes every column, so a cell below it can only
 * come from a schema without the column). Both ways every alive row ends
 * with a register for every column, the same on every replica, and a late
 * write of c older than that INSERT loses everywhere, as it would have
 * had c been there all along. The cost is one register per alive row,
 * local only (nothing is shipped), when a table gains a column.
 *
 * A table that disappears (DROP TABLE, local or merged, or noticed by the
 * catalog) loses its registers: a table made later under its name starts
 * empty rather than with registers of rows it never had.
 */
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"

#define SCHEMA_HASH_SEED UINT64_C(0x73696e6577736368)
#define PRAGMA_SQL_SIZE 512

/* The receiver columns a set's table lacks, with their DEFAULT values:
 * what an INSERT of that set is treated as writing. */
struct replication__crdt_fill {
    size_t count;
    char **columns;
    struct engine_change_value *values;
};

int replication__crdt_schema_hash_of(struct engine_db *db, uint64_t *out)
{
    struct engine_stmt *stmt = NULL;
    uint64_t hash = SCHEMA_HASH_SEED;
    const char *text;
    int rc, i;

    rc = engine_prepare(db,
                        "SELECT type, name, sql FROM sqlite_schema"
                        " ORDER BY type, name",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = 0;
        for (i = 0; i < 3; i++) {
            text = engine_column_text(stmt, i);
            text = text != NULL ? text : "";
            /* The NUL separates fields: ("ab", "c") is not ("a", "bc"). */
            hash = common_checksum64(text, strlen(text) + 1, hash);
        }
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        return rc;
    }
    *out = hash != 0 ? hash : 1;
    return 0;
}

/* Runs sql (no rows) with ?1 and ?2 bound to a and b (b may be NULL). */
static int exec2(struct replication__crdt *crdt, const char *sql, const char *a,
                 const char *b)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db, sql, -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, a, -1);
    }
    if (rc == 0 && b != NULL) {
        rc = engine_bind_text(stmt, 2, b, -1);
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(crdt, stmt);
    }
    engine_finalize(stmt);
    return rc;
}

/* The first column of every row of sql (?1 bound to arg when given), as
 * NUL-terminated strings one after the other, into out. */
static int text_list(struct engine_db *db, const char *sql, const char *arg,
                     struct common_buf *out)
{
    struct engine_stmt *stmt = NULL;
    const char *text;
    int rc;

    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    if (rc == 0 && arg != NULL) {
        rc = engine_bind_text(stmt, 1, arg, -1);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        text = engine_column_text(stmt, 0);
        text = text != NULL ? text : "";
        rc = common_buf_append(out, text, strlen(text) + 1);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

bool replication__crdt_names_have(const struct common_buf *list,
                                  const char *name)
{
    size_t at = 0;

    while (at < list->size) {
        const char *item = (const char *)list->data + at;
        if (strcmp(item, name) == 0) {
            return true;
        }
        at += strlen(item) + 1;
    }
    return false;
}

int replication__crdt_schema_forget(struct replication__crdt *crdt,
                                    const char *table)
{
    int rc;

    ASSERT(table != NULL);
    rc = exec2(crdt, "DELETE FROM sinew_crdt_row WHERE tbl = ?1", table, NULL);
    if (rc == 0) {
        rc = exec2(crdt, "DELETE FROM sinew_crdt_cell WHERE tbl = ?1", table,
                   NULL);
    }
    if (rc == 0) {
        rc = exec2(crdt, "DELETE FROM sinew_crdt_column WHERE tbl = ?1", table,
                   NULL);
    }
    return rc;
}

/* A column table gained: its catalog row, and when the table was known
 * before (it has rows with registers) a register per alive row at the
 * row's existence K; the value is the DEFAULT the user table already
 * shows, so no shadow. */
static int column_gained(struct replication__crdt *crdt, const char *table,
                         const char *column, bool known)
{
    int rc = 0;

    if (known) {
        rc = exec2(crdt,
                   "INSERT OR IGNORE INTO sinew_crdt_cell SELECT tbl, pk,"
                   " ?2, hlc, site, 0, NULL FROM sinew_crdt_row"
                   " WHERE tbl = ?1 AND alive = 1",
                   table, column);
    }
    if (rc == 0) {
        rc = exec2(crdt, "INSERT INTO sinew_crdt_column VALUES (?1, ?2)", table,
                   column);
    }
    return rc;
}

/* A column table lost: its cells and catalog row. */
static int column_lost(struct replication__crdt *crdt, const char *table,
                       const char *column)
{
    int rc;

    rc = exec2(crdt, "DELETE FROM sinew_crdt_cell WHERE tbl = ?1 AND col = ?2",
               table, column);
    if (rc == 0) {
        rc = exec2(crdt,
                   "DELETE FROM sinew_crdt_column WHERE tbl = ?1 AND col = ?2",
                   table, column);
    }
    return rc;
}

/* Compares one table's columns with its catalog rows. */
static int sync_table(struct replication__crdt *crdt, const char *table)
{
    struct replication__crdt_table *shape = NULL;
    struct common_buf known;
    size_t i, at = 0;
    int rc;

    common_buf_init(&known, SIZE_MAX);
    rc = replication__crdt_table_load(crdt->db, table, &shape);
    if (rc == REPLICATION_ESCHEMA) {
        rc = 0; /* a name no replicated table can have (crdt_table.c) */
        goto cleanup;
    }
    rc = rc == 0 ? text_list(crdt->db,
                             "SELECT col FROM sinew_crdt_column WHERE tbl = ?1",
                             table, &known)
                 : rc;
    for (i = 0; rc == 0 && i < shape->column_count; i++) {
        if (!replication__crdt_names_have(&known, shape->columns[i])) {
            rc = column_gained(crdt, table, shape->columns[i], known.size > 0);
        }
    }
    while (rc == 0 && at < known.size) {
        const char *column = (const char *)known.data + at;
        if (replication__crdt_table_column(shape, column) < 0) {
            rc = column_lost(crdt, table, column);
        }
        at += strlen(column) + 1;
    }
cleanup:
    replication__crdt_table_free(shape);
    common_buf_close(&known);
    return rc;
}

int replication__crdt_schema_sync(struct replication__crdt *crdt)
{
    struct common_buf tables, known;
    size_t at = 0;
    int rc;

    ASSERT(crdt != NULL);
    common_buf_init(&tables, SIZE_MAX);
    common_buf_init(&known, SIZE_MAX);
    rc = text_list(crdt->db,
                   "SELECT name FROM sqlite_schema WHERE type = 'table'"
                   " ORDER BY name",
                   NULL, &tables);
    rc = rc == 0 ? text_list(crdt->db,
                             "SELECT DISTINCT tbl FROM sinew_crdt_column"
                             " ORDER BY tbl",
                             NULL, &known)
                 : rc;
    while (rc == 0 && at < known.size) {
        const char *table = (const char *)known.data + at;
        if (!replication__crdt_names_have(&tables, table)) {
            rc = replication__crdt_schema_forget(crdt, table);
        }
        at += strlen(table) + 1;
    }
    for (at = 0; rc == 0 && at < tables.size;) {
        const char *table = (const char *)tables.data + at;
        rc = sync_table(crdt, table);
        at += strlen(table) + 1;
    }
    if (rc == 0) {
        rc = replication__crdt_schema_hash_of(crdt->db, &crdt->schema_hash);
    }
    common_buf_close(&tables);
    common_buf_close(&known);
    return rc;
}

static int sync_cb(void *ctx, struct engine_db *db)
{
    struct replication__crdt *crdt = ctx;
    int rc;

    (void)db;
    rc = replication__crdt_schema_sync(crdt);
    replication__crdt_stmts_close(crdt);
    return rc;
}

int replication__crdt_schema_resync(struct replication__crdt *crdt)
{
    ASSERT(crdt != NULL);
    return engine_apply_transaction(crdt->db, 0, sync_cb, crdt);
}

int replication__crdt_schema_dropped(struct replication__crdt *crdt,
                                     const char *sql)
{
    char table[PRAGMA_SQL_SIZE];

    ASSERT(sql != NULL);
    if (!replication__crdt_ddl_drops_table(sql, table, sizeof(table))) {
        return 0;
    }
    return replication__crdt_schema_forget(crdt, table);
}

/* ---- INSERTs from a schema without some of our columns ---- */

/* One receiver column and its DEFAULT's text (NULL: none) from PRAGMA
 * table_info, kept when the set's table lacks it. */
struct fill_column {
    char *name;
    char *dflt;
};

static char *arena_strdup(struct replication__arena *arena, const char *s)
{
    size_t size = strlen(s) + 1;
    char *copy = replication__arena_alloc(arena, size);

    if (copy != NULL) {
        memcpy(copy, s, size);
    }
    return copy;
}

static bool set_has_column(const struct replication__table *t, const char *name)
{
    size_t i;

    for (i = 0; i < t->column_count; i++) {
        if (strcmp(t->columns[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* The receiver's columns that t lacks, into out (count of them), in the
 * arena. */
static int missing_columns(struct engine_db *db,
                           const struct replication__table *t,
                           struct replication__arena *arena,
                           struct fill_column **out, size_t *count)
{
    char sql[PRAGMA_SQL_SIZE];
    struct engine_stmt *stmt = NULL;
    struct fill_column *grown, *cols = NULL;
    const char *name, *dflt;
    size_t n = 0;
    int rc;

    if (strchr(t->name, '"') != NULL ||
        (size_t)snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")",
                         t->name) >= sizeof(sql)) {
        return REPLICATION_ESCHEMA;
    }
    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = 0;
        name = engine_column_text(stmt, 1);
        dflt = engine_column_text(stmt, 4);
        if (name == NULL || set_has_column(t, name)) {
            continue;
        }
        grown = replication__arena_alloc(arena, (n + 1) * sizeof(*grown));
        if (grown == NULL) {
            rc = COMMON_ENOMEM;
            break;
        }
        if (n > 0) {
            memcpy(grown, cols, n * sizeof(*grown));
        }
        cols = grown;
        cols[n].name = arena_strdup(arena, name);
        cols[n].dflt = dflt != NULL ? arena_strdup(arena, dflt) : NULL;
        if (cols[n].name == NULL || (dflt != NULL && cols[n].dflt == NULL)) {
            rc = COMMON_ENOMEM;
            break;
        }
        n++;
    }
    engine_finalize(stmt);
    *out = cols;
    *count = n;
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Evaluates a DEFAULT's text (NULL: none, the value is NULL) into out,
 * bytes copied into the arena. */
static int default_value(struct engine_db *db, const char *dflt,
                         struct replication__arena *arena,
                         struct engine_change_value *out)
{
    struct engine_change_value value;
    struct engine_stmt *stmt = NULL;
    struct common_buf sql;
    int rc;

    memset(out, 0, sizeof(*out));
    out->type = ENGINE_NULL;
    if (dflt == NULL) {
        return 0;
    }
    common_buf_init(&sql, SIZE_MAX);
    rc = common_buf_append(&sql, "SELECT ", 7);
    rc = rc == 0 ? common_buf_append(&sql, dflt, strlen(dflt) + 1) : rc;
    rc = rc == 0 ? engine_prepare(db, (const char *)sql.data, -1, &stmt, NULL)
                 : rc;
    rc = rc == 0 ? engine_step(stmt) : rc;
    if (rc == ENGINE_ROW) {
        replication__crdt_column_value(stmt, 0, &value);
        rc = replication__crdt_value_copy(arena, &value, out);
    }
    engine_finalize(stmt);
    common_buf_close(&sql);
    return rc;
}

/* The fill of the set's table index table, made on first use. */
static int fill_of(struct replication__crdt *crdt,
                   struct replication__crdt_aside *aside,
                   const struct replication__changeset *cs, uint32_t table,
                   struct replication__crdt_fill **out)
{
    struct replication__crdt_fill *fill;
    struct fill_column *cols;
    size_t i, count;
    int rc;

    ASSERT(table < aside->table_count);
    if (aside->fills[table] != NULL) {
        *out = aside->fills[table];
        return 0;
    }
    fill = replication__arena_alloc(&aside->arena, sizeof(*fill));
    if (fill == NULL) {
        return COMMON_ENOMEM;
    }
    rc = missing_columns(crdt->db, &cs->tables[table], &aside->arena, &cols,
                         &count);
    if (rc != 0) {
        return rc;
    }
    fill->count = count;
    fill->columns = replication__arena_alloc(
        &aside->arena, (count + 1) * sizeof(*fill->columns));
    fill->values = replication__arena_alloc(
        &aside->arena, (count + 1) * sizeof(*fill->values));
    if (fill->columns == NULL || fill->values == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; rc == 0 && i < count; i++) {
        fill->columns[i] = cols[i].name;
        rc = default_value(crdt->db, cols[i].dflt, &aside->arena,
                           &fill->values[i]);
    }
    if (rc == 0) {
        aside->fills[table] = fill;
        *out = fill;
    }
    return rc;
}

int replication__crdt_aside_fill(struct replication__crdt *crdt,
                                 struct replication__crdt_aside *aside,
                                 const struct replication__changeset *cs,
                                 uint32_t table,
                                 const struct replication__crdt_row *row,
                                 const struct replication__crdt_k *k)
{
    struct replication__crdt_fill *fill;
    size_t i;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(row != NULL);
    rc = fill_of(crdt, aside, cs, table, &fill);
    for (i = 0; rc == 0 && i < fill->count; i++) {
        rc = replication__crdt_merge_cell(crdt, row, fill->columns[i],
                                          &fill->values[i], true, k);
    }
    return rc;
}
