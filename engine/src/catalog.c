/* SPDX-License-Identifier: MIT
 *
 * catalog.c: the database's tables, by name (case-insensitive, as SQLite
 * compares identifiers), in creation order (the order sqlite_schema lists
 * them). Every change bumps the schema version, so statements prepared
 * against the old schema are planned again before they run.
 */
#include <strings.h>

#include "engine_int.h"

struct engine_table *engine__catalog_find(const struct engine_db *db,
                                          const char *name)
{
    for (size_t i = 0; i < db->table_count; i++) {
        if (strcasecmp(db->tables[i]->name, name) == 0) {
            return db->tables[i];
        }
    }
    return NULL;
}

int engine__catalog_add(struct engine_db *db, struct engine_table *table)
{
    if (db->table_count == db->table_capacity) {
        size_t capacity = db->table_capacity ? db->table_capacity * 2 : 8;
        struct engine_table **tables =
            common_realloc_array(db->tables, capacity, sizeof(*tables));

        if (tables == NULL) {
            return COMMON_ENOMEM;
        }
        db->tables = tables;
        db->table_capacity = capacity;
    }
    if (table->sequence == 0) {
        table->sequence = ++db->object_sequence;
    }
    table->graveyard = &db->graveyard;
    db->tables[db->table_count++] = table;
    db->schema_version++;
    return 0;
}

void engine__catalog_remove(struct engine_db *db, struct engine_table *table)
{
    for (size_t i = 0; i < db->table_count; i++) {
        if (db->tables[i] == table) {
            for (size_t j = i + 1; j < db->table_count; j++) {
                db->tables[j - 1] = db->tables[j];
            }
            db->table_count--;
            db->schema_version++;
            return;
        }
    }
}

void engine__catalog_replace(struct engine_db *db, struct engine_table *from,
                             struct engine_table *to)
{
    for (size_t i = 0; i < db->table_count; i++) {
        if (db->tables[i] == from) {
            to->graveyard = &db->graveyard;
            db->tables[i] = to;
            db->schema_version++;
            return;
        }
    }
}
