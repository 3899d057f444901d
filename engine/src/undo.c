/* SPDX-License-Identifier: MIT
 *
 * undo.c: the undo log of the open transaction. Every change records how
 * to reverse it before (delete, update) or after (insert) it happens;
 * ROLLBACK, and a statement that fails with ABORT, replay the log backwards
 * to a mark. Slots are never reused while a record may name them, so a
 * record's slot still means the same row when it is undone. COMMIT forgets
 * the log and frees dropped tables for good.
 *
 * Each record notes the size the redo log (redo.c) had before the change,
 * so undoing back to a record also cuts the redo log back to it: what the
 * WAL receives at commit is exactly what survived.
 */
#include <string.h>

#include "engine_int.h"

static int copy_row(struct engine_db *db, struct engine_undo *undo)
{
    const struct engine_table *table = undo->table;

    undo->rowid = table->rowids[undo->slot];
    undo->values = engine__arena_alloc(
        &db->undo_arena, (table->column_count + 1) * sizeof(*undo->values));
    if (undo->values == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t c = 0; c < table->column_count; c++) {
        struct engine_value v = engine__table_get(table, undo->slot, c);

        if (v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) {
            void *bytes =
                engine__arena_memdup(&db->undo_arena, v.u.s.bytes, v.u.s.size);

            if (bytes == NULL) {
                return COMMON_ENOMEM;
            }
            v.u.s.bytes = bytes;
        }
        undo->values[c] = v;
    }
    return 0;
}

int engine__undo_record(struct engine_db *db, enum engine_undo_kind kind,
                        struct engine_table *table, size_t slot)
{
    struct engine_undo *undo;

    if (db->undo_count == db->undo_capacity) {
        size_t capacity = db->undo_capacity ? db->undo_capacity * 2 : 64;
        struct engine_undo *records =
            common_realloc_array(db->undo, capacity, sizeof(*records));

        if (records == NULL) {
            return COMMON_ENOMEM;
        }
        db->undo = records;
        db->undo_capacity = capacity;
    }
    undo = &db->undo[db->undo_count];
    memset(undo, 0, sizeof(*undo));
    undo->kind = kind;
    undo->table = table;
    undo->slot = slot;
    undo->redo_size = db->redo.size;
    if ((kind == ENGINE_UNDO_DELETE || kind == ENGINE_UNDO_UPDATE) &&
        copy_row(db, undo) != 0) {
        return COMMON_ENOMEM;
    }
    db->undo_count++;
    return 0;
}

void engine__table_drop_last_index(struct engine_table *table)
{
    struct engine_index_def *index = &table->indexes[--table->index_count];

    for (size_t k = 0; k < table->key_count; k++) {
        struct engine_unique_key *key = &table->keys[k];

        if (key->index_name != NULL &&
            strcmp(key->index_name, index->name) == 0) {
            common_free(key->columns);
            common_free(key->buckets);
            common_free(key->index_name);
            table->keys[k] = table->keys[--table->key_count];
            break;
        }
    }
    common_free(index->name);
    common_free(index->sql);
}

static void undo_one(struct engine_db *db, struct engine_undo *undo)
{
    int rc = 0;

    switch (undo->kind) {
    case ENGINE_UNDO_INSERT:
        engine__table_delete(undo->table, undo->slot);
        break;
    case ENGINE_UNDO_DELETE:
        rc = engine__table_restore(undo->table, undo->slot, undo->rowid,
                                   undo->values);
        break;
    case ENGINE_UNDO_UPDATE:
        rc = engine__table_update(undo->table, undo->slot, undo->rowid,
                                  undo->values);
        break;
    case ENGINE_UNDO_CREATE_TABLE:
        engine__catalog_remove(db, undo->table);
        engine__table_destroy(undo->table);
        db->tables_rolled_back++;
        break;
    case ENGINE_UNDO_DROP_TABLE:
        rc = engine__catalog_add(db, undo->table);
        break;
    case ENGINE_UNDO_CREATE_INDEX:
        engine__table_drop_last_index(undo->table);
        db->schema_version++;
        break;
    case ENGINE_UNDO_DROP_INDEX:
        rc = engine__index_create_sql(db, undo->text, (uint64_t)undo->rowid);
        break;
    case ENGINE_UNDO_USER_VERSION:
        db->user_version = undo->rowid;
        break;
    case ENGINE_UNDO_ALTER_TABLE:
        engine__catalog_replace(db, undo->table, undo->replaced);
        engine__table_destroy(undo->table);
        db->tables_rolled_back++;
        break;
    case ENGINE_UNDO_CREATE_VIEW:
        engine__view_remove(db, undo->view);
        engine__view_destroy(undo->view);
        break;
    case ENGINE_UNDO_DROP_VIEW:
        engine__view_restore(db, undo->view);
        break;
    case ENGINE_UNDO_CREATE_TRIGGER:
        engine__trigger_remove(db, undo->trigger);
        engine__trigger_destroy(undo->trigger);
        break;
    case ENGINE_UNDO_DROP_TRIGGER:
        engine__trigger_restore(db, undo->trigger);
        break;
    }
    /* Undo only gives back memory it took: restoring cannot run out of
     * it unless the heap fails a regrowth, which leaves the database in a
     * state we cannot vouch for. */
    ASSERT(rc == 0);
}

void engine__undo_rollback(struct engine_db *db, size_t to_count)
{
    ASSERT(to_count <= db->undo_count);
    engine__redo_truncate(db, to_count < db->undo_count
                                  ? db->undo[to_count].redo_size
                                  : db->redo.size);
    if (to_count == 0) {
        engine__redo_truncate(db, 0);
    }
    while (db->undo_count > to_count) {
        undo_one(db, &db->undo[--db->undo_count]);
    }
    if (db->undo_count == 0) {
        engine__arena_reset(&db->undo_arena);
    }
}

void engine__undo_commit(struct engine_db *db)
{
    for (size_t i = 0; i < db->undo_count; i++) {
        if (db->undo[i].kind == ENGINE_UNDO_DROP_TABLE) {
            engine__table_destroy(db->undo[i].table);
        } else if (db->undo[i].kind == ENGINE_UNDO_DROP_VIEW) {
            engine__view_destroy(db->undo[i].view);
        } else if (db->undo[i].kind == ENGINE_UNDO_DROP_TRIGGER) {
            engine__trigger_destroy(db->undo[i].trigger);
        } else if (db->undo[i].kind == ENGINE_UNDO_ALTER_TABLE) {
            engine__table_destroy(db->undo[i].replaced);
        }
    }
    db->undo_count = 0;
    engine__arena_reset(&db->undo_arena);
}
