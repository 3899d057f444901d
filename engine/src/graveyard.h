/* SPDX-License-Identifier: MIT
 *
 * graveyard.h: the text and blob bytes a table lets go of (a row deleted,
 * a value replaced) while another statement of the handle is running.
 *
 * A running statement's batches view the table's bytes rather than copy
 * them (table.h), and so does the current row engine_column_text() hands
 * out. SQLite lets one statement of a connection change a table another
 * is part-way through reading (isolation.html); its reader keeps what it
 * read in its own registers. Here the freed bytes are kept instead: while
 * a statement other than the writer runs, they go to the handle's
 * graveyard, emptied when no statement of the handle runs any more.
 */
#ifndef SINEW_ENGINE_GRAVEYARD_H
#define SINEW_ENGINE_GRAVEYARD_H

#include <stdbool.h>
#include <stddef.h>

struct engine_db;

struct engine_graveyard {
    void **bytes; /* owned, as is every entry */
    size_t count;
    size_t capacity;
    bool deferring; /* two statements or more of the handle run */
};

/* Frees bytes (common_malloc'd), or keeps them in graveyard while it
 * defers. graveyard NULL: a table outside a handle's catalog, freed. */
void engine__graveyard_bury(struct engine_graveyard *graveyard, void *bytes);

/* A statement of db started or ended (or was reset, or finalized): the
 * graveyard defers while two statements or more run, and its bytes are
 * freed once none runs. */
void engine__graveyard_settle(struct engine_db *db);

/* Frees every byte kept and the list itself (the handle closes). */
void engine__graveyard_close(struct engine_graveyard *graveyard);

#endif /* SINEW_ENGINE_GRAVEYARD_H */
