/* SPDX-License-Identifier: MIT
 *
 * replication_leader.c: leader mode's epochs and fence.
 *
 * One writer per epoch; is_writer() (the caller's) names it. A node that
 * becomes the writer at an epoch higher than any it has seen takes the
 * fence: its heads of every origin at that moment, its own origin
 * unbounded. From then on a change set stamped with an older epoch is
 * admitted only within the fence, so a deposed writer's late commits
 * (which the new writer never had) are refused everywhere, while the
 * history the new writer did hold still reaches followers that lacked it.
 * The fence travels in summaries; a node that knows a higher epoch but not
 * its fence admits no older-epoch change set until it learns it. A node
 * that already applied change sets beyond the fence (a deposed writer, or
 * a follower that got its late commits first) has diverged: it says so
 * (stats, an ERROR log) and must be rebuilt from the writer's state.
 *
 * Persisted: sinew_crdt_meta 'epoch', 'fence_epoch', 'writer_epoch';
 * the fence in sinew_crdt_fence(origin, head).
 */
#include <inttypes.h>
#include <string.h>

#include "sync_int.h"

static const char fence_schema[] =
    "CREATE TABLE IF NOT EXISTS sinew_crdt_fence(origin BLOB PRIMARY KEY,"
    " head INTEGER)";

static int meta_get(struct replication *r, const char *name, uint64_t *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    *out = 0;
    rc = engine_prepare(r->config.db,
                        "SELECT value FROM sinew_crdt_meta WHERE name = ?1", -1,
                        &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, name, -1);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        *out = (uint64_t)engine_column_int64(stmt, 0);
        rc = ENGINE_DONE;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int exec_bound(struct replication *r, const char *sql, const void *blob,
                      size_t blob_size, const char *text, uint64_t value)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(r->config.db, sql, -1, &stmt, NULL);
    if (rc == 0 && blob != NULL) {
        rc = engine_bind_blob(stmt, 1, blob, (int)blob_size);
    }
    if (rc == 0 && text != NULL) {
        rc = engine_bind_text(stmt, 1, text, -1);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)value);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int meta_put(struct replication *r, const char *name, uint64_t value)
{
    return exec_bound(r,
                      "INSERT OR REPLACE INTO sinew_crdt_meta VALUES (?1, ?2)",
                      NULL, 0, name, value);
}

static int fence_load(struct replication *r)
{
    struct engine_stmt *stmt = NULL;
    struct replication__head *grown;
    int rc;

    rc = engine_prepare(r->config.db,
                        "SELECT origin, head FROM sinew_crdt_fence", -1, &stmt,
                        NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        if (engine_column_bytes(stmt, 0) != REPLICATION_SITE_ID_BYTES) {
            rc = COMMON_ECORRUPT;
            break;
        }
        grown =
            common_realloc_array(r->fence, r->fence_count + 1, sizeof(*grown));
        if (grown == NULL) {
            rc = COMMON_ENOMEM;
            break;
        }
        r->fence = grown;
        memcpy(grown[r->fence_count].site, engine_column_blob(stmt, 0),
               REPLICATION_SITE_ID_BYTES);
        grown[r->fence_count++].head = (uint64_t)engine_column_int64(stmt, 1);
        rc = 0;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

static int check_diverged(struct replication *r);

int replication__leader_load(struct replication *r)
{
    uint64_t fence_epoch = 0, writer_epoch = 0;
    int rc;

    if (r->config.mode != REPLICATION_MODE_LEADER) {
        return 0;
    }
    rc = engine_exec_system(r->config.db, fence_schema, NULL, NULL);
    if (rc == 0) {
        rc = meta_get(r, "epoch", &r->epoch);
    }
    if (rc == 0) {
        rc = meta_get(r, "fence_epoch", &fence_epoch);
    }
    if (rc == 0) {
        rc = meta_get(r, "writer_epoch", &writer_epoch);
    }
    r->fence_known = rc == 0 && r->epoch > 0 && fence_epoch == r->epoch;
    r->writer = r->fence_known && writer_epoch == r->epoch;
    if (rc == 0 && r->fence_known) {
        rc = fence_load(r);
    }
    /* Divergence is not stored: it is recomputed from the heads and the
     * stored fence, so a diverged node still says so after a restart (the
     * fence it already holds is never adopted again). */
    if (rc == 0 && r->fence_known) {
        rc = check_diverged(r);
    }
    return rc;
}

/* The fence's head for origin; 0 when it does not name it. */
static uint64_t fence_head(const struct replication *r, const uint8_t *origin)
{
    size_t i;

    for (i = 0; i < r->fence_count; i++) {
        if (memcmp(r->fence[i].site, origin, REPLICATION_SITE_ID_BYTES) == 0) {
            return r->fence[i].head;
        }
    }
    return 0;
}

/* Replaces the fence (borrowed) for epoch, in memory and on disk, in one
 * transaction with the epoch. */
static int fence_store(struct replication *r, uint64_t epoch,
                       const struct replication__head *fence, size_t count,
                       bool writer)
{
    struct replication__head *copy = NULL;
    size_t i;
    int rc;

    if (count > 0) {
        copy = common_calloc(count, sizeof(*copy));
        if (copy == NULL) {
            return COMMON_ENOMEM;
        }
        memcpy(copy, fence, count * sizeof(*copy));
    }
    rc = engine_exec(r->config.db, "BEGIN; DELETE FROM sinew_crdt_fence", NULL,
                     NULL);
    for (i = 0; rc == 0 && i < count; i++) {
        rc = exec_bound(r, "INSERT INTO sinew_crdt_fence VALUES (?1, ?2)",
                        fence[i].site, REPLICATION_SITE_ID_BYTES, NULL,
                        fence[i].head);
    }
    if (rc == 0) {
        rc = meta_put(r, "epoch", epoch);
    }
    if (rc == 0) {
        rc = meta_put(r, "fence_epoch", epoch);
    }
    if (rc == 0 && writer) {
        rc = meta_put(r, "writer_epoch", epoch);
    }
    rc = rc == 0 ? engine_exec(r->config.db, "COMMIT", NULL, NULL) : rc;
    if (rc != 0) {
        (void)engine_exec(r->config.db, "ROLLBACK", NULL, NULL);
        common_free(copy);
        return rc;
    }
    common_free(r->fence);
    r->fence = copy;
    r->fence_count = count;
    r->epoch = epoch;
    r->fence_known = true;
    r->writer = writer;
    return 0;
}

/* Whether we hold anything beyond the fence: then we have diverged. */
static int check_diverged(struct replication *r)
{
    struct replication__head *heads = NULL;
    size_t count = 0, i;
    int rc;

    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    for (i = 0; rc == 0 && i < count && !r->diverged; i++) {
        if (heads[i].head > fence_head(r, heads[i].site)) {
            r->diverged = true;
            LOGF(&r->config.log, COMMON_LOG_ERROR,
                 "replication: this node holds %" PRIu64
                 " change sets of a deposed writer that the writer of epoch"
                 " %" PRIu64 " never had; rebuild it from the writer",
                 heads[i].head - fence_head(r, heads[i].site), r->epoch);
        }
    }
    common_free(heads);
    return rc;
}

/* The index of our own origin in heads, or count when it is absent. */
static size_t own_head(const struct replication *r,
                       const struct replication__head *heads, size_t count)
{
    size_t i;

    for (i = 0; i < count; i++) {
        if (memcmp(heads[i].site, replication_site_id(r),
                   REPLICATION_SITE_ID_BYTES) == 0) {
            break;
        }
    }
    return i;
}

/* Becomes the writer at epoch: the fence is our heads, our own unbounded.
 * A node that wrote before (a writer re-promoted at a later epoch) already
 * has its own origin among the heads: that entry becomes unbounded, since
 * the fence holds one row per origin. */
static int take_over(struct replication *r, uint64_t epoch)
{
    struct replication__head *heads = NULL, *grown;
    size_t count = 0, own;
    int rc;

    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    if (rc != 0) {
        return rc;
    }
    own = own_head(r, heads, count);
    if (own == count) {
        grown = common_realloc_array(heads, count + 1, sizeof(*grown));
        if (grown == NULL) {
            common_free(heads);
            return COMMON_ENOMEM;
        }
        heads = grown;
        memcpy(heads[count].site, replication_site_id(r),
               REPLICATION_SITE_ID_BYTES);
        count++;
    }
    heads[own].head = UINT64_MAX;
    rc = fence_store(r, epoch, heads, count, true);
    common_free(heads);
    if (rc == 0) {
        LOGF(&r->config.log, COMMON_LOG_INFO,
             "replication: this node is the writer epoch=%" PRIu64, epoch);
    }
    return rc;
}

int replication__leader_check(struct replication *r)
{
    uint64_t epoch = 0;
    bool writer = r->config.is_writer(r->config.is_writer_ctx, &epoch);

    if (!writer) {
        r->writer = false;
        return 0;
    }
    if (epoch > r->epoch) {
        return take_over(r, epoch);
    }
    if (!r->writer) {
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: is_writer names this node at epoch=%" PRIu64
             " but epoch %" PRIu64 " is known: writes refused; give the"
             " writer a higher epoch",
             epoch, r->epoch);
    }
    return 0;
}

/* A newer writer's epoch, its fence not known yet (it comes with a
 * summary): older-epoch change sets wait for it. */
static int see_epoch(struct replication *r, uint64_t epoch)
{
    int rc = meta_put(r, "epoch", epoch);

    if (rc == 0) {
        r->epoch = epoch;
        r->fence_known = false;
        r->writer = false;
    }
    return rc;
}

int replication__leader_adopt(struct replication *r, uint64_t epoch,
                              const struct replication__head *fence,
                              size_t fence_count, bool fence_known)
{
    int rc;

    if (epoch < r->epoch || (epoch == r->epoch && r->fence_known)) {
        return 0;
    }
    if (!fence_known) {
        return epoch > r->epoch ? see_epoch(r, epoch) : 0;
    }
    rc = fence_store(r, epoch, fence, fence_count, false);
    return rc == 0 ? check_diverged(r) : rc;
}

int replication__leader_admits(const struct replication *r,
                               const uint8_t *origin, uint64_t version,
                               uint64_t epoch)
{
    if (epoch >= r->epoch) {
        return 0;
    }
    if (!r->fence_known) {
        return REPLICATION_EDEFERRED;
    }
    return version <= fence_head(r, origin) ? 0 : REPLICATION_EFENCED;
}

int replication__leader_admit(struct replication *r, const uint8_t *origin,
                              uint64_t version, uint64_t epoch)
{
    int rc;

    if (epoch > r->epoch) {
        return see_epoch(r, epoch);
    }
    rc = replication__leader_admits(r, origin, version, epoch);
    /* Until the fence is known the chunk is dropped: the summary that
     * brings the fence comes first on the next sync, then the chunk. */
    return rc == REPLICATION_EDEFERRED ? REPLICATION_EFENCED : rc;
}

int replication__leader_recheck(struct replication *r)
{
    if (r->config.mode != REPLICATION_MODE_LEADER || !r->fence_known ||
        r->diverged) {
        return 0;
    }
    return check_diverged(r);
}

uint64_t replication__leader_limit(const struct replication *r,
                                   const uint8_t *origin)
{
    if (r->config.mode != REPLICATION_MODE_LEADER || r->epoch == 0) {
        return UINT64_MAX;
    }
    return r->fence_known ? fence_head(r, origin) : UINT64_MAX;
}
