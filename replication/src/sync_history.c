/* SPDX-License-Identifier: MIT
 *
 * sync_history.c: what peers acknowledged, and pruning the change log by
 * it (crdt.md §6.5, §6.7).
 *
 * Every SUMMARY is a peer's acknowledgement: per origin the head it holds.
 * They are kept, by the peer's site id, in
 *
 *   sinew_crdt_peer(site, last_seen_ms)   every peer ever heard from
 *   sinew_crdt_ack(peer, origin, head)    its last summary's heads
 *   sinew_crdt_floor(origin, floor)       versions 1..floor of origin are
 *                                         no longer in the change log
 *
 * written only when something changed (and last_seen at most once a
 * minute, or a quarter of evict_after_ms if less), so a quiet cluster
 * does not write. A change set leaves the log once every member (a peer
 * heard from within evict_after_ms) has acknowledged it, or, with a
 * retention configured, once it is older than that: a peer that returns
 * after its versions were pruned cannot be served from the log and needs
 * a snapshot. Nothing is pruned by acknowledgement while no member is
 * known, nor while a configured member has not been heard from since
 * open (replication__members_heard): a lone node keeps its history for
 * the peers to come.
 */
#include <inttypes.h>
#include <string.h>

#include "sync_int.h"

#define LAST_SEEN_GRANULARITY_MS 60000u

static const char history_schema[] =
    "CREATE TABLE IF NOT EXISTS sinew_crdt_peer(site BLOB PRIMARY KEY,"
    " last_seen_ms INTEGER);"
    "CREATE TABLE IF NOT EXISTS sinew_crdt_ack(peer BLOB NOT NULL,"
    " origin BLOB NOT NULL, head INTEGER, PRIMARY KEY(peer, origin));";

int replication__history_open(struct replication *r)
{
    return engine_exec_system(r->config.db, history_schema, NULL, NULL);
}

/* Runs sql with up to two blobs and two integers bound (?1 ?2 blobs,
 * ?3 ?4 integers); *out gets the first column of a row if asked. */
struct bound {
    const uint8_t *blob1, *blob2;
    uint64_t int3, int4;
};

static int run(struct replication *r, const char *sql, const struct bound *b,
               uint64_t *out, bool *found)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(r->config.db, sql, -1, &stmt, NULL);
    if (rc == 0 && b->blob1 != NULL) {
        rc = engine_bind_blob(stmt, 1, b->blob1, REPLICATION_SITE_ID_BYTES);
    }
    if (rc == 0 && b->blob2 != NULL) {
        rc = engine_bind_blob(stmt, 2, b->blob2, REPLICATION_SITE_ID_BYTES);
    }
    if (rc == 0 && engine_bind_parameter_count(stmt) >= 3) {
        rc = engine_bind_int64(stmt, 3, (int64_t)b->int3);
    }
    if (rc == 0 && engine_bind_parameter_count(stmt) >= 4) {
        rc = engine_bind_int64(stmt, 4, (int64_t)b->int4);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (found != NULL) {
        *found = rc == ENGINE_ROW;
    }
    if (rc == ENGINE_ROW) {
        if (out != NULL) {
            *out = (uint64_t)engine_column_int64(stmt, 0);
        }
        rc = ENGINE_DONE;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Whether peer's acknowledgement of head for origin is news. */
static bool ack_changed(struct replication__peer *peer,
                        const struct replication__head *head)
{
    struct replication__cursor *c = replication__cursor_get(peer, head->site);

    return c == NULL || c->acked != head->head + 1;
}

static void ack_noted(struct replication__peer *peer,
                      const struct replication__head *head)
{
    struct replication__cursor *c = replication__cursor_get(peer, head->site);

    if (c != NULL) {
        c->acked = head->head + 1; /* 0: not stored yet */
    }
}

int replication__history_ack(struct replication *r,
                             struct replication__peer *peer,
                             const struct replication__head *heads,
                             size_t count, uint64_t now_ms)
{
    struct bound b = {.blob1 = peer->site};
    uint64_t granularity = r->config.evict_after_ms / 4;
    bool touch;
    size_t i, changed = 0;
    int rc;

    if (granularity > LAST_SEEN_GRANULARITY_MS) {
        granularity = LAST_SEEN_GRANULARITY_MS;
    }
    touch = now_ms >= peer->stored_seen_ms + granularity;
    for (i = 0; i < count; i++) {
        changed += ack_changed(peer, &heads[i]);
    }
    if (changed == 0 && !touch) {
        return 0;
    }
    rc = engine_exec(r->config.db, "BEGIN", NULL, NULL);
    b.int3 = now_ms;
    if (rc == 0) {
        rc = run(r, "INSERT OR REPLACE INTO sinew_crdt_peer VALUES (?1, ?3)",
                 &b, NULL, NULL);
    }
    for (i = 0; rc == 0 && i < count; i++) {
        if (ack_changed(peer, &heads[i])) {
            b.blob2 = heads[i].site;
            b.int3 = heads[i].head;
            rc = run(r,
                     "INSERT OR REPLACE INTO sinew_crdt_ack VALUES (?1, ?2,"
                     " ?3)",
                     &b, NULL, NULL);
        }
    }
    rc = rc == 0 ? engine_exec(r->config.db, "COMMIT", NULL, NULL) : rc;
    if (rc != 0) {
        (void)engine_exec(r->config.db, "ROLLBACK", NULL, NULL);
        return rc;
    }
    for (i = 0; i < count; i++) {
        ack_noted(peer, &heads[i]);
    }
    peer->stored_seen_ms = now_ms;
    return 0;
}

int replication__history_evicted(struct replication *r, const uint8_t *peer,
                                 uint64_t cutoff_ms, bool *out)
{
    struct bound b = {.blob1 = peer};
    uint64_t last_seen = 0;
    bool found = false;
    int rc;

    rc = run(r, "SELECT last_seen_ms FROM sinew_crdt_peer WHERE site = ?1", &b,
             &last_seen, &found);
    *out = rc == 0 && found && last_seen < cutoff_ms;
    return rc;
}

int replication__history_acked(struct replication *r, const uint8_t *peer,
                               const uint8_t *origin, uint64_t *head)
{
    struct bound b = {.blob1 = peer, .blob2 = origin};

    *head = 0;
    return run(r,
               "SELECT head FROM sinew_crdt_ack WHERE peer = ?1 AND"
               " origin = ?2",
               &b, head, NULL);
}

int replication__history_members(struct replication *r, uint64_t cutoff_ms,
                                 uint8_t (**sites)[REPLICATION_SITE_ID_BYTES],
                                 size_t *count)
{
    struct engine_stmt *stmt = NULL;
    uint8_t(*grown)[REPLICATION_SITE_ID_BYTES];
    int rc;

    *sites = NULL;
    *count = 0;
    rc = engine_prepare(r->config.db,
                        "SELECT site FROM sinew_crdt_peer WHERE last_seen_ms"
                        " >= ?1",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)cutoff_ms);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = COMMON_ECORRUPT;
        if (engine_column_bytes(stmt, 0) != REPLICATION_SITE_ID_BYTES) {
            break;
        }
        grown = common_realloc_array(*sites, *count + 1, sizeof(*grown));
        rc = COMMON_ENOMEM;
        if (grown == NULL) {
            break;
        }
        *sites = grown;
        memcpy(grown[(*count)++], engine_column_blob(stmt, 0),
               REPLICATION_SITE_ID_BYTES);
        rc = 0;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* How far origin's log may go: the smallest acknowledgement among the
 * members (none: 0), raised by the retention. */
static int prune_point(struct replication *r,
                       const struct replication__head *origin,
                       uint8_t (*sites)[REPLICATION_SITE_ID_BYTES],
                       size_t count, uint64_t now_ms, uint64_t *out)
{
    struct bound b = {.blob2 = origin->site};
    uint64_t point = count > 0 && r->heard ? origin->head : 0, ack, old = 0;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < count && point > 0; i++) {
        ack = 0;
        b.blob1 = sites[i];
        rc = run(r,
                 "SELECT head FROM sinew_crdt_ack WHERE peer = ?1 AND"
                 " origin = ?2",
                 &b, &ack, NULL);
        point = ack < point ? ack : point;
    }
    /* Retention never drops this node's own change sets before every
     * member has them: a snapshot can replace another origin's history,
     * but nothing replaces a write that exists only here. */
    if (rc == 0 && r->config.retention_ms > 0 &&
        now_ms > r->config.retention_ms &&
        memcmp(origin->site, replication_site_id(r),
               REPLICATION_SITE_ID_BYTES) != 0) {
        struct bound t = {.blob1 = origin->site,
                          .int3 = hlc_pack(now_ms - r->config.retention_ms, 0)};

        rc = run(r,
                 "SELECT max(version) FROM sinew_crdt_log WHERE origin = ?1"
                 " AND hlc < ?3",
                 &t, &old, NULL);
        point = old > point ? old : point;
    }
    *out = point < origin->head ? point : origin->head;
    return rc;
}

/* Drops origin's log up to point and raises its floor, in one
 * transaction. */
static int prune_origin(struct replication *r, const uint8_t *origin,
                        uint64_t point)
{
    struct bound b = {.blob1 = origin, .int3 = point};
    int rc;

    rc = engine_exec(r->config.db, "BEGIN", NULL, NULL);
    if (rc == 0) {
        rc = run(r,
                 "DELETE FROM sinew_crdt_log WHERE origin = ?1 AND version"
                 " <= ?3",
                 &b, NULL, NULL);
    }
    if (rc == 0) {
        rc = run(r, "INSERT OR REPLACE INTO sinew_crdt_floor VALUES (?1, ?3)",
                 &b, NULL, NULL);
    }
    rc = rc == 0 ? engine_exec(r->config.db, "COMMIT", NULL, NULL) : rc;
    if (rc != 0) {
        (void)engine_exec(r->config.db, "ROLLBACK", NULL, NULL);
    }
    return rc;
}

int replication__history_prune(struct replication *r, uint64_t now_ms)
{
    struct replication__head *heads = NULL;
    uint8_t(*sites)[REPLICATION_SITE_ID_BYTES] = NULL;
    uint64_t cutoff, point, floor;
    size_t count = 0, site_count = 0, i;
    int rc;

    cutoff = now_ms > r->config.evict_after_ms
                 ? now_ms - r->config.evict_after_ms
                 : 0;
    r->heard = replication__members_heard(r, now_ms);
    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    if (rc == 0) {
        rc = replication__history_members(r, cutoff, &sites, &site_count);
    }
    for (i = 0; rc == 0 && i < count; i++) {
        rc = prune_point(r, &heads[i], sites, site_count, now_ms, &point);
        if (rc == 0) {
            rc = replication__crdt_floor(r->crdt, heads[i].site, &floor);
        }
        if (rc == 0 && point > floor) {
            rc = prune_origin(r, heads[i].site, point);
        }
    }
    if (rc == 0) {
        rc = replication__evidence_collect(r, now_ms);
    }
    common_free(sites);
    common_free(heads);
    return rc;
}
