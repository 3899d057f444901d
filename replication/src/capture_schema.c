/* SPDX-License-Identifier: MIT
 *
 * capture_schema.c: the schema rules of crdt mode, checked when a local
 * commit changes the schema (crdt.md §6.8, issue 6 "Restrictions"):
 *
 *   - a NOT NULL column outside the primary key needs a DEFAULT: a merge
 *     may have to make a row visible from cells written by a schema that
 *     lacked the column, and must never be rejected (rejection breaks
 *     convergence);
 *   - no UNIQUE constraint or index beyond the primary key: two sites can
 *     insert the same value under different keys, and no merge order can
 *     then satisfy the constraint on every replica (crdt.md §5 #34).
 *
 * Every user table is checked, not only the one the statement named: the
 * check runs once per schema-changing commit, and so also covers tables
 * created before crdt mode was opened. A violation vetoes the commit with
 * a message naming the table and the column or index.
 */
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"

#define SCHEMA_SQL_SIZE 512

/* Runs "PRAGMA <pragma>(\"<table>\")" and calls row for each result row;
 * row returns 0 or a code (and writes message). */
static int
each_pragma_row(struct engine_db *db, const char *pragma, const char *table,
                int (*row)(struct engine_stmt *stmt, const char *table,
                           char *message, size_t size),
                char *message, size_t size)
{
    char sql[SCHEMA_SQL_SIZE];
    struct engine_stmt *stmt = NULL;
    int rc;

    if (strchr(table, '"') != NULL ||
        (size_t)snprintf(sql, sizeof(sql), "PRAGMA %s(\"%s\")", pragma,
                         table) >= sizeof(sql)) {
        return 0; /* such names are not replicated tables' (crdt_table.c) */
    }
    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = row(stmt, table, message, size);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* A PRAGMA table_info row: cid, name, type, notnull, dflt_value, pk. */
static int check_column(struct engine_stmt *stmt, const char *table,
                        char *message, size_t size)
{
    if (engine_column_int64(stmt, 3) != 0 &&
        engine_column_type(stmt, 4) == ENGINE_NULL &&
        engine_column_int64(stmt, 5) == 0) {
        snprintf(message, size,
                 "crdt table %s: column %s is NOT NULL without a DEFAULT",
                 table, engine_column_text(stmt, 1));
        return ENGINE_ECONSTRAINT;
    }
    return 0;
}

/* A PRAGMA index_list row: seq, name, unique, origin, partial. */
static int check_index(struct engine_stmt *stmt, const char *table,
                       char *message, size_t size)
{
    const char *origin = engine_column_text(stmt, 3);

    if (engine_column_int64(stmt, 2) != 0 &&
        (origin == NULL || strcmp(origin, "pk") != 0)) {
        snprintf(message, size,
                 "crdt table %s: UNIQUE index %s beyond the primary key", table,
                 engine_column_text(stmt, 1));
        return ENGINE_ECONSTRAINT;
    }
    return 0;
}

int replication__crdt_table_names(struct engine_db *db,
                                  struct common_buf *names)
{
    struct engine_stmt *stmt = NULL;
    const char *name;
    int rc;

    rc = engine_prepare(db,
                        "SELECT name FROM sqlite_schema WHERE type = 'table'"
                        " ORDER BY name",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        name = engine_column_text(stmt, 0);
        rc = common_buf_append(names, name, strlen(name) + 1);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

int replication__crdt_schema_check(struct engine_db *db, char *message,
                                   size_t size)
{
    struct common_buf names;
    size_t at = 0;
    int rc;

    common_buf_init(&names, SIZE_MAX);
    rc = replication__crdt_table_names(db, &names);
    while (rc == 0 && at < names.size) {
        const char *table = (const char *)names.data + at;
        rc = each_pragma_row(db, "table_info", table, check_column, message,
                             size);
        if (rc == 0) {
            rc = each_pragma_row(db, "index_list", table, check_index, message,
                                 size);
        }
        at += strlen(table) + 1;
    }
    common_buf_close(&names);
    return rc;
}
