/* SPDX-License-Identifier: MIT
 *
 * crdt_table.c: a user table's shape as the merge needs it (column names
 * in table order, declared PRIMARY KEY columns in key order), read with
 * PRAGMA table_info. The engine keys a row by its declared PRIMARY KEY,
 * else by its rowid (engine.h, "What a change says"); the merge passes
 * keys through unchanged, so it only needs the key columns to read a row
 * back.
 *
 * Shapes are kept in the crdt state (replication__crdt_shape): every
 * commit and merge needs the shapes of the tables it touches, and a
 * PRAGMA per table per transaction would cost more than many small
 * transactions' own work. The engine's schema version says when they are
 * stale: any DDL, also one rolled back or run by another handle, changes
 * it, and then all of them are learned again.
 */
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"
#include "replication.h"

#define TABLE_INFO_SQL_SIZE 512

void replication__crdt_table_free(struct replication__crdt_table *table)
{
    size_t i;

    if (table == NULL) {
        return;
    }
    for (i = 0; i < table->column_count; i++) {
        common_free(table->columns[i]);
    }
    common_free(table->columns);
    common_free(table->key_columns);
    common_free(table->name);
    common_free(table);
}

static char *dup_string(const char *s)
{
    size_t size = strlen(s) + 1;
    char *copy = common_malloc(size);

    if (copy != NULL) {
        memcpy(copy, s, size);
    }
    return copy;
}

/* Appends the current row of PRAGMA table_info (cid, name, type, notnull,
 * dflt_value, pk) to table. */
static int add_column(struct replication__crdt_table *table,
                      struct engine_stmt *stmt)
{
    size_t n = table->column_count;
    int64_t pk = engine_column_int64(stmt, 5);
    char **columns;
    size_t *keys;

    columns = common_realloc_array(table->columns, n + 1, sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    table->columns = columns;
    keys = common_realloc_array(table->key_columns, n + 1, sizeof(*keys));
    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    table->key_columns = keys;
    columns[n] = dup_string(engine_column_text(stmt, 1));
    if (columns[n] == NULL) {
        return COMMON_ENOMEM;
    }
    table->column_count++;
    /* The column's rank in the key for now; order_key() sorts it out. */
    keys[n] = pk > 0 ? (size_t)pk : 0;
    return 0;
}

/* Turns key_columns from a rank per column into the key's columns in key
 * order. */
static int order_key(struct replication__crdt_table *table)
{
    size_t i, count = 0;
    size_t *ranks = table->key_columns;
    size_t *keys;

    for (i = 0; i < table->column_count; i++) {
        count += ranks[i] > 0;
    }
    keys = common_calloc(count + 1, sizeof(*keys));
    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < table->column_count; i++) {
        if (ranks[i] > count) {
            common_free(keys);
            return REPLICATION_ESCHEMA;
        }
        if (ranks[i] > 0) {
            keys[ranks[i] - 1] = i;
        }
    }
    common_free(ranks);
    table->key_columns = keys;
    table->key_count = count;
    return 0;
}

static int read_columns(struct engine_db *db,
                        struct replication__crdt_table *table)
{
    char sql[TABLE_INFO_SQL_SIZE];
    struct engine_stmt *stmt = NULL;
    int rc;

    if (strchr(table->name, '"') != NULL ||
        (size_t)snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")",
                         table->name) >= sizeof(sql)) {
        return REPLICATION_ESCHEMA;
    }
    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = add_column(table, stmt);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

int replication__crdt_table_load(struct engine_db *db, const char *name,
                                 struct replication__crdt_table **out)
{
    struct replication__crdt_table *table = common_calloc(1, sizeof(*table));
    int rc = COMMON_ENOMEM;

    if (table == NULL) {
        return rc;
    }
    table->name = dup_string(name);
    if (table->name != NULL) {
        rc = read_columns(db, table);
    }
    if (rc == 0 && table->column_count == 0) {
        rc = REPLICATION_ESCHEMA;
    }
    if (rc == 0) {
        rc = order_key(table);
    }
    if (rc != 0) {
        replication__crdt_table_free(table);
        return rc;
    }
    *out = table;
    return 0;
}

long replication__crdt_table_column(const struct replication__crdt_table *t,
                                    const char *name)
{
    size_t i;

    for (i = 0; i < t->column_count; i++) {
        if (strcmp(t->columns[i], name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

void replication__crdt_shapes_free(struct replication__crdt *crdt)
{
    size_t i;

    for (i = 0; i < crdt->shape_count; i++) {
        replication__crdt_table_free(crdt->shapes[i]);
    }
    common_free(crdt->shapes);
    crdt->shapes = NULL;
    crdt->shape_count = 0;
}

int replication__crdt_shape(struct replication__crdt *crdt, const char *name,
                            struct replication__crdt_table **out)
{
    uint64_t version = engine_schema_version(crdt->db);
    struct replication__crdt_table **grown, *table;
    size_t i;
    int rc;

    ASSERT(name != NULL);
    if (version != crdt->shapes_version) {
        replication__crdt_shapes_free(crdt);
        crdt->shapes_version = version;
    }
    for (i = 0; i < crdt->shape_count; i++) {
        if (strcmp(crdt->shapes[i]->name, name) == 0) {
            *out = crdt->shapes[i];
            return 0;
        }
    }
    grown = common_realloc_array(crdt->shapes, crdt->shape_count + 1,
                                 sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    crdt->shapes = grown;
    rc = replication__crdt_table_load(crdt->db, name, &table);
    if (rc != 0) {
        return rc;
    }
    crdt->shapes[crdt->shape_count++] = table;
    *out = table;
    return 0;
}
