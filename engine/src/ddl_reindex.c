/* SPDX-License-Identifier: MIT
 *
 * ddl_reindex.c: REINDEX, after SQLite 3.40's build.c sqlite3Reindex().
 *
 * sinew's indexes live in memory, built from the table's rows when the
 * database loads and kept up to date by every write (table_key.c,
 * table_index.c); REINDEX builds them again from the rows, as SQLite
 * deletes and recreates its index b-trees. Nothing on disk changes, so
 * the statement writes no WAL record; it still takes the write lock
 * (step.c), so that no other handle reads an index while it is rebuilt.
 *
 * The name is looked up as SQLite does: without a schema, first as a
 * collation (every index with a column of it), then as a table (its
 * indexes), then as an index; otherwise "unable to identify the object
 * to be reindexed".
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "table.h"

/* Whether any column of the key or index uses collation (a NULL
 * collation matches every one). */
static bool key_uses(const struct engine_table *table,
                     const struct engine_unique_key *key,
                     const enum engine_collation *collation)
{
    for (size_t i = 0; collation != NULL && i < key->column_count; i++) {
        if (table->columns[key->columns[i]].collation == *collation) {
            return true;
        }
    }
    return collation == NULL;
}

static bool lookup_uses(const struct engine_table_index *index,
                        const enum engine_collation *collation)
{
    for (size_t i = 0; collation != NULL && i < index->column_count; i++) {
        if (index->collations[i] == *collation) {
            return true;
        }
    }
    return collation == NULL;
}

/* Rebuilds table's keys and index lookups that use collation (NULL:
 * all). */
static int reindex_table(struct engine_table *table,
                         const enum engine_collation *collation)
{
    int rc = 0;

    for (size_t k = 0; rc == 0 && k < table->key_count; k++) {
        if (key_uses(table, &table->keys[k], collation)) {
            rc = engine__table_key_reindex(table, k);
        }
    }
    for (size_t i = 0; rc == 0 && i < table->index_count; i++) {
        const struct engine_table_index *lookup = table->indexes[i].lookup;

        if (lookup != NULL && lookup_uses(lookup, collation)) {
            rc = engine__table_index_reindex(table, i);
        }
    }
    return rc;
}

static int reindex_all(struct engine_db *db,
                       const enum engine_collation *collation)
{
    int rc = 0;

    for (size_t t = 0; rc == 0 && t < db->table_count; t++) {
        rc = reindex_table(db->tables[t], collation);
    }
    return rc;
}

/* What REINDEX [name] means, as sqlite3Reindex() resolves it: every
 * index, a collation's, a table's (NULL: sqlite_schema, which has none),
 * or one index (a UNIQUE one is a key of its table, another one a lookup,
 * none for a partial index, which no lookup uses). */
struct reindex_target {
    bool all; /* REINDEX alone: every index */
    bool is_collation;
    enum engine_collation collation;
    struct engine_table *table; /* NULL: none (sqlite_schema) */
    bool is_index;
    bool is_key;
    size_t position;
};

static bool find_index(struct engine_db *db, const char *name,
                       struct reindex_target *target)
{
    for (size_t t = 0; t < db->table_count; t++) {
        struct engine_table *table = db->tables[t];

        for (size_t k = 0; k < table->key_count; k++) {
            const char *key_name = table->keys[k].index_name;

            if (key_name != NULL && strcasecmp(key_name, name) == 0) {
                *target = (struct reindex_target){.table = table,
                                                  .is_index = true,
                                                  .is_key = true,
                                                  .position = k};
                return true;
            }
        }
        for (size_t i = 0; i < table->index_count; i++) {
            if (strcasecmp(table->indexes[i].name, name) == 0) {
                *target = (struct reindex_target){
                    .table = table, .is_index = true, .position = i};
                return true;
            }
        }
    }
    return false;
}

static int resolve(struct engine_db *db, const struct ast_reindex *ast,
                   struct reindex_target *target)
{
    const char *unknown = "unable to identify the object to be reindexed";

    *target = (struct reindex_target){.all = ast->name == NULL};
    if (ast->schema != NULL && strcasecmp(ast->schema, "main") != 0 &&
        strcasecmp(ast->schema, "temp") != 0) {
        return engine__db_error(db, ENGINE_ESQL, "unknown database %s",
                                ast->schema);
    }
    if (ast->name == NULL) {
        return 0; /* every index */
    }
    if (ast->schema == NULL &&
        engine__collation_by_name(ast->name, strlen(ast->name),
                                  &target->collation) == 0) {
        target->is_collation = true;
        return 0;
    }
    /* The temp schema holds no object here (pragma.c). */
    if (ast->schema != NULL && strcasecmp(ast->schema, "temp") == 0) {
        return engine__db_error(db, ENGINE_ESQL, "%s", unknown);
    }
    target->table = engine__catalog_find(db, ast->name);
    /* sqlite_schema is a table without indexes. */
    if (target->table != NULL || strcasecmp(ast->name, "sqlite_schema") == 0 ||
        strcasecmp(ast->name, "sqlite_master") == 0 ||
        find_index(db, ast->name, target)) {
        return 0;
    }
    return engine__db_error(db, ENGINE_ESQL, "%s", unknown);
}

int engine__reindex_plan(struct engine_stmt *stmt)
{
    struct reindex_target target;

    return resolve(stmt->db, &stmt->ast->u.reindex, &target);
}

static int run(struct engine_db *db, const struct reindex_target *target)
{
    if (target->all || target->is_collation) {
        return reindex_all(db, target->all ? NULL : &target->collation);
    }
    if (target->table == NULL) {
        return 0;
    }
    if (!target->is_index) {
        return reindex_table(target->table, NULL);
    }
    return target->is_key
               ? engine__table_key_reindex(target->table, target->position)
               : engine__table_index_reindex(target->table, target->position);
}

int engine__reindex(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    struct reindex_target target;
    int rc = resolve(db, &stmt->ast->u.reindex, &target);

    rc = rc != 0 ? rc : run(db, &target);
    return rc == COMMON_ENOMEM ? engine__db_error(db, rc, "out of memory") : rc;
}
