/* SPDX-License-Identifier: MIT
 *
 * serve_readers.h: the pool of engine handles `sinew serve` runs reads on,
 * in libuv's worker threads, beside the node thread's one writing handle
 * (serve.c). Each handle sees the database as of its transaction's start
 * and never waits for the writer (engine.h, "Connections"). A handle is
 * opened when first needed, up to the pool's size.
 *
 * The pool is handed out on the HTTP thread without ever blocking it
 * (serve_readers_take answers at once; a read that finds none waits in
 * serve_pipeline.c's queue, not in a worker thread), and opening a
 * handle, which loads the tables, happens in the worker that first uses
 * it (serve_readers_open).
 *
 * In a replicated mode a commit on a reading handle would bypass
 * replication (its capture hooks only the writing handle), so there every
 * reading handle refuses to commit a change, as a last line behind Hrana's
 * read_handle option (statements that can write fail before they run).
 */
#ifndef SINEW_NODE_SERVE_READERS_H
#define SINEW_NODE_SERVE_READERS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

struct serve_readers;

/* path copied. 0 or COMMON_ENOMEM. */
int serve_readers_new(const char *path, size_t count, bool refuse_writes,
                      struct serve_readers **out);

/* An idle handle, or a free slot for a new one (*out NULL: the worker
 * calls serve_readers_open()), for the caller's exclusive use until put
 * back. 0, or NODE_EBUSY when every handle is taken. */
int serve_readers_take(struct serve_readers *readers, struct engine_db **out);

/* Opens a handle for a slot serve_readers_take() gave (any thread). On
 * failure the slot is given back. 0 or an engine code. */
int serve_readers_open(struct serve_readers *readers, struct engine_db **out);

void serve_readers_put(struct serve_readers *readers, struct engine_db *db);

/* Closes every handle (all must have been put back). */
void serve_readers_free(struct serve_readers *readers);

#endif /* SINEW_NODE_SERVE_READERS_H */
