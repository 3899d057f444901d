/* SPDX-License-Identifier: MIT
 *
 * serve_readers.h: the pool of engine handles `sinew serve` runs reads on,
 * in libuv's worker threads, beside the node thread's one writing handle
 * (serve.c). Each handle sees the database as of its transaction's start
 * and never waits for the writer (engine.h, "Connections"). A handle is
 * opened when first needed, up to the pool's size.
 *
 * In a replicated mode a commit on a reading handle would bypass
 * replication (its capture hooks only the writing handle), so there every
 * reading handle refuses to commit a change: a transaction that began as
 * a read and then wrote fails at COMMIT with ENGINE_EBUSY and a message
 * that says to begin writing transactions with BEGIN IMMEDIATE.
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

/* A handle for the calling thread's exclusive use until put back:
 * waits up to wait_ms for one to come free. 0; NODE_EBUSY when none did;
 * an engine code when opening one failed. */
int serve_readers_take(struct serve_readers *readers, int wait_ms,
                       struct engine_db **out);
void serve_readers_put(struct serve_readers *readers, struct engine_db *db);

/* Closes every handle (all must have been put back). */
void serve_readers_free(struct serve_readers *readers);

#endif /* SINEW_NODE_SERVE_READERS_H */
