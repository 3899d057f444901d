/* SPDX-License-Identifier: MIT
 *
 * serve_readers.c: the reading handles' pool (serve_readers.h).
 */
#include "serve_readers.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "node.h"

/* How long a reading handle waits for the write lock when a single-mode
 * transaction writes on it (replicated modes refuse that at commit). */
#define SERVE_READERS_BUSY_TIMEOUT_MS 5000

struct serve_readers {
    pthread_mutex_t lock;
    pthread_cond_t freed;
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
    pthread_cond_init(&readers->freed, NULL);
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

static void deadline_after(struct timespec *deadline, int wait_ms)
{
    clock_gettime(CLOCK_REALTIME, deadline);
    deadline->tv_sec += wait_ms / 1000;
    deadline->tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

int serve_readers_take(struct serve_readers *readers, int wait_ms,
                       struct engine_db **out)
{
    struct timespec deadline;
    bool open_new = false;
    int rc = 0;

    *out = NULL;
    deadline_after(&deadline, wait_ms);
    pthread_mutex_lock(&readers->lock);
    while (readers->idle_count == 0 && readers->opened == readers->count &&
           rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&readers->freed, &readers->lock, &deadline);
    }
    if (readers->idle_count > 0) {
        *out = readers->idle[--readers->idle_count];
    } else if (readers->opened < readers->count) {
        readers->opened++;
        open_new = true;
    }
    pthread_mutex_unlock(&readers->lock);
    if (*out != NULL) {
        return 0;
    }
    if (!open_new) {
        return NODE_EBUSY;
    }
    rc = open_handle(readers, out);
    if (rc != 0) {
        pthread_mutex_lock(&readers->lock);
        readers->opened--;
        pthread_cond_signal(&readers->freed);
        pthread_mutex_unlock(&readers->lock);
    }
    return rc;
}

void serve_readers_put(struct serve_readers *readers, struct engine_db *db)
{
    pthread_mutex_lock(&readers->lock);
    ASSERT(readers->idle_count < readers->count);
    readers->idle[readers->idle_count++] = db;
    pthread_cond_signal(&readers->freed);
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
    pthread_cond_destroy(&readers->freed);
    pthread_mutex_destroy(&readers->lock);
    common_free(readers->idle);
    common_free(readers->path);
    common_free(readers);
}
