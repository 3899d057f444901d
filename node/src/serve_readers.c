/* SPDX-License-Identifier: MIT
 *
 * serve_readers.c: the reading handles' pool (serve_readers.h).
 */
#include "serve_readers.h"

#include <pthread.h>
#include <string.h>

#include "node.h"

/* How long a reading handle waits for the write lock when a single-mode
 * transaction writes on it (replicated modes refuse that at commit). */
#define SERVE_READERS_BUSY_TIMEOUT_MS 5000

struct serve_readers {
    pthread_mutex_t lock;
    char *path;
    bool refuse_writes;
    size_t count;  /* the pool's size */
    size_t opened; /* handles opened so far */
    struct engine_db **idle;
    size_t idle_count;
};

static int refuse_commit(void *ctx, struct engine_db *db,
                         struct engine_commit *commit)
{
    (void)ctx;
    (void)db;
    return engine_commit_veto(
        commit, ENGINE_EBUSY,
        "this transaction began as a read and cannot commit a write: "
        "begin transactions that write with BEGIN IMMEDIATE, or write "
        "first");
}

int serve_readers_new(const char *path, size_t count, bool refuse_writes,
                      struct serve_readers **out)
{
    struct serve_readers *readers = common_calloc(1, sizeof *readers);

    *out = NULL;
    if (readers == NULL) {
        return COMMON_ENOMEM;
    }
    size_t path_size = strlen(path) + 1;
    readers->path = common_malloc(path_size);
    readers->idle = common_calloc(count, sizeof *readers->idle);
    if (readers->path == NULL || readers->idle == NULL) {
        common_free(readers->path);
        common_free(readers->idle);
        common_free(readers);
        return COMMON_ENOMEM;
    }
    memcpy(readers->path, path, path_size);
    pthread_mutex_init(&readers->lock, NULL);
    readers->count = count;
    readers->refuse_writes = refuse_writes;
    *out = readers;
    return 0;
}

static int open_handle(struct serve_readers *readers, struct engine_db **out)
{
    int rc = engine_open(readers->path, out);

    if (rc != 0) {
        return rc;
    }
    engine_busy_timeout(*out, SERVE_READERS_BUSY_TIMEOUT_MS);
    if (readers->refuse_writes) {
        rc = engine_commit_hook_set(*out, refuse_commit, NULL);
    }
    if (rc != 0) {
        engine_close(*out);
        *out = NULL;
    }
    return rc;
}

int serve_readers_take(struct serve_readers *readers, struct engine_db **out)
{
    int rc = 0;

    *out = NULL;
    pthread_mutex_lock(&readers->lock);
    if (readers->idle_count > 0) {
        *out = readers->idle[--readers->idle_count];
    } else if (readers->opened < readers->count) {
        readers->opened++; /* the slot: serve_readers_open() fills it */
    } else {
        rc = NODE_EBUSY;
    }
    pthread_mutex_unlock(&readers->lock);
    return rc;
}

int serve_readers_open(struct serve_readers *readers, struct engine_db **out)
{
    int rc = open_handle(readers, out);

    if (rc != 0) {
        pthread_mutex_lock(&readers->lock);
        readers->opened--;
        pthread_mutex_unlock(&readers->lock);
    }
    return rc;
}

void serve_readers_put(struct serve_readers *readers, struct engine_db *db)
{
    pthread_mutex_lock(&readers->lock);
    ASSERT(readers->idle_count < readers->count);
    readers->idle[readers->idle_count++] = db;
    pthread_mutex_unlock(&readers->lock);
}

void serve_readers_free(struct serve_readers *readers)
{
    if (readers == NULL) {
        return;
    }
    ASSERT(readers->idle_count == readers->opened);
    for (size_t i = 0; i < readers->idle_count; i++) {
        engine_close(readers->idle[i]);
    }
    pthread_mutex_destroy(&readers->lock);
    common_free(readers->idle);
    common_free(readers->path);
    common_free(readers);
}
