/* SPDX-License-Identifier: MIT
 *
 * graveyard.c: bytes a table freed while another statement of the handle
 * may still view them (graveyard.h).
 *
 * The writer itself is running when it frees, so deferring starts at two
 * running statements. Any other running statement may hold the bytes in a
 * batch (a scan's, or a join's outer rows while it reads the inner table)
 * or in its current row, until it ends; so the list is emptied only when
 * no statement runs. A statement left running (stepped, never reset)
 * keeps the list growing until it ends, as an unfinished read keeps
 * SQLite's WAL from being checkpointed.
 */
#include "graveyard.h"

#include "engine_int.h"

void engine__graveyard_bury(struct engine_graveyard *graveyard, void *bytes)
{
    if (graveyard == NULL || !graveyard->deferring || bytes == NULL) {
        common_free(bytes);
        return;
    }
    if (graveyard->count == graveyard->capacity) {
        size_t capacity = graveyard->capacity ? graveyard->capacity * 2 : 64;
        void **grown =
            common_realloc_array(graveyard->bytes, capacity, sizeof(*grown));

        if (grown == NULL) {
            /* Out of memory: the bytes are lost rather than freed under
             * a reader (their table no longer knows them). */
            return;
        }
        graveyard->bytes = grown;
        graveyard->capacity = capacity;
    }
    graveyard->bytes[graveyard->count++] = bytes;
}

/* Frees the bytes kept, and the list (a burst of deletes may have made it
 * large). */
static void empty(struct engine_graveyard *graveyard)
{
    for (size_t i = 0; i < graveyard->count; i++) {
        common_free(graveyard->bytes[i]);
    }
    common_free(graveyard->bytes);
    graveyard->bytes = NULL;
    graveyard->count = graveyard->capacity = 0;
}

void engine__graveyard_settle(struct engine_db *db)
{
    size_t running = engine__db_running_statements(db);

    db->graveyard.deferring = running > 1;
    if (running == 0 && db->graveyard.count > 0) {
        empty(&db->graveyard);
    }
}

void engine__graveyard_close(struct engine_graveyard *graveyard)
{
    empty(graveyard);
    graveyard->deferring = false;
}
