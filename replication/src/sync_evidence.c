/* SPDX-License-Identifier: MIT
 *
 * sync_evidence.c: when a tombstone can go (crdt.md §6.7, causal
 * stability), and collecting it.
 *
 * A dead existence register may be dropped once no write older than it
 * can still arrive: otherwise a late older INSERT would find no tombstone
 * and bring the row back on this node only. Older writes come from two
 * places: ones already made somewhere and not yet here, and ones a site
 * whose clock is still behind could make. Both are ruled out by clock
 * evidence: "site S's HLC had passed h when it had made v change sets".
 * Every write S makes afterwards is stamped above h (its HLC never goes
 * back), and every write of S below h is among its versions 1..v.
 *
 * Every node puts its own evidence (a fresh stamp of its HLC, its own
 * version count) in each SUMMARY, and forwards the latest it heard of
 * every other site, so evidence crosses a line A - B - C like change sets
 * do. Evidence (h, v) of S covers a point below h once this node holds
 * S's versions 1..v and every member has acknowledged them too, so a
 * tombstone goes only when every member has seen the delete (the issue's
 * rule) and nothing older can come. A few recent entries are kept per
 * site, since the newest is rarely acknowledged yet. The stable point is
 * the smallest covered evidence over every site this node knows (its
 * version vector's origins, the sites it heard evidence of); a site or
 * member silent for evict_after_ms is left out (evicted: it must be
 * rebuilt before it rejoins, crdt.md §6.7), and a configured member never
 * heard from holds everything back until that long after open. Below the
 * stable point tombstones go, and so do the invisible cells (a dead
 * row's, or one whose row never came): any later INSERT of the key writes
 * every column above it. Evidence lives in memory: after a restart
 * collection waits for fresh summaries, which only delays it.
 */
#include <string.h>

#include "sync_int.h"

static struct replication__site_clock *clock_find(struct replication *r,
                                                  const uint8_t *site)
{
    size_t i;

    for (i = 0; i < r->clock_count; i++) {
        if (memcmp(r->clocks[i].recent[0].site, site,
                   REPLICATION_SITE_ID_BYTES) == 0) {
            return &r->clocks[i];
        }
    }
    return NULL;
}

static struct replication__site_clock *clock_get(struct replication *r,
                                                 const uint8_t *site)
{
    struct replication__site_clock *c = clock_find(r, site), *grown;

    if (c != NULL) {
        return c;
    }
    grown = common_realloc_array(r->clocks, r->clock_count + 1, sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    r->clocks = grown;
    c = &grown[r->clock_count++];
    memset(c, 0, sizeof(*c));
    memcpy(c->recent[0].site, site, REPLICATION_SITE_ID_BYTES);
    return c;
}

static const struct replication__evidence *
newest(const struct replication__site_clock *c)
{
    return c->recent_count > 0 ? &c->recent[c->recent_count - 1] : NULL;
}

/* Appends e when newer than the newest kept, dropping the oldest. */
static void remember(struct replication__site_clock *c,
                     const struct replication__evidence *e, uint64_t now_ms)
{
    const struct replication__evidence *last = newest(c);

    if (last != NULL && e->hlc <= last->hlc) {
        return;
    }
    if (c->recent_count == REPLICATION__EVIDENCE_KEPT) {
        memmove(&c->recent[0], &c->recent[1],
                (REPLICATION__EVIDENCE_KEPT - 1) * sizeof(c->recent[0]));
        c->recent_count--;
    }
    c->recent[c->recent_count++] = *e;
    c->updated_ms = now_ms;
}

static bool is_self(struct replication *r, const uint8_t *site)
{
    return memcmp(site, replication_site_id(r), REPLICATION_SITE_ID_BYTES) == 0;
}

int replication__evidence_merge(struct replication *r,
                                const struct replication__evidence *evidence,
                                size_t count, uint64_t now_ms)
{
    struct replication__site_clock *c;
    size_t i;

    for (i = 0; i < count; i++) {
        if (is_self(r, evidence[i].site)) {
            continue;
        }
        c = clock_get(r, evidence[i].site);
        if (c == NULL) {
            return COMMON_ENOMEM;
        }
        remember(c, &evidence[i], now_ms);
    }
    return 0;
}

/* This node's clock evidence, made binding: a fresh stamp of its own HLC,
 * so an idle node's evidence moves with its physical clock, and every
 * later local write is stamped above it. (After a restart the HLC starts
 * at max(persisted, physical time): a physical clock stepped back across a
 * restart, further than the last summary's time, is the one case that
 * could undercut it.) */
static int own_evidence(struct replication *r,
                        struct replication__evidence *out)
{
    struct replication__site_clock *c;
    uint64_t stamp;
    int rc;

    memcpy(out->site, replication_site_id(r), REPLICATION_SITE_ID_BYTES);
    rc = replication__crdt_head(r->crdt, out->site, &out->version);
    if (rc != 0) {
        return rc;
    }
    out->hlc =
        hlc_now(&r->clock, &stamp) == 0 ? stamp : hlc_high_water(&r->clock);
    c = clock_get(r, out->site);
    if (c == NULL) {
        return COMMON_ENOMEM;
    }
    remember(c, out, r->config.clock.now_ms(r->config.clock.ctx));
    return 0;
}

int replication__evidence_list(struct replication *r,
                               struct replication__evidence **out,
                               size_t *count)
{
    struct replication__evidence *list, mine;
    size_t i, n = 1;
    int rc;

    *out = NULL;
    *count = 0;
    rc = own_evidence(r, &mine);
    if (rc != 0) {
        return rc;
    }
    list = common_calloc(r->clock_count + 1, sizeof(*list));
    if (list == NULL) {
        return COMMON_ENOMEM;
    }
    list[0] = mine;
    for (i = 0; i < r->clock_count; i++) {
        if (!is_self(r, r->clocks[i].recent[0].site) &&
            r->clocks[i].recent_count > 0) {
            list[n++] = *newest(&r->clocks[i]);
        }
    }
    *out = list;
    *count = n;
    return 0;
}

/* The sites of the members (heard from since cutoff), from the ack
 * tables (sync_history.c). */
struct members {
    uint8_t (*sites)[REPLICATION_SITE_ID_BYTES];
    size_t count;
};

/* Whether e's versions are here and acknowledged by every member. */
static int acknowledged(struct replication *r, const struct members *m,
                        const struct replication__evidence *e, bool *out)
{
    uint64_t head = 0;
    size_t i;
    int rc;

    *out = false;
    rc = replication__crdt_head(r->crdt, e->site, &head);
    if (rc != 0 || head < e->version) {
        return rc;
    }
    for (i = 0; i < m->count; i++) {
        rc = replication__history_acked(r, m->sites[i], e->site, &head);
        if (rc != 0 || head < e->version) {
            return rc;
        }
    }
    *out = true;
    return 0;
}

/* Raises c's covered hlc to its newest evidence that is acknowledged. */
static int cover(struct replication *r, const struct members *m,
                 struct replication__site_clock *c)
{
    bool ok = false;
    size_t i;
    int rc = 0;

    for (i = c->recent_count; rc == 0 && !ok && i > 0; i--) {
        if (c->recent[i - 1].hlc <= c->covered_hlc) {
            break;
        }
        rc = acknowledged(r, m, &c->recent[i - 1], &ok);
        if (rc == 0 && ok) {
            c->covered_hlc = c->recent[i - 1].hlc;
        }
    }
    return rc;
}

/* Whether some origin this node holds has no evidence at all yet. */
static int origin_without_evidence(struct replication *r, bool *out)
{
    struct replication__head *heads = NULL;
    size_t count = 0, i;
    int rc;

    *out = false;
    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    for (i = 0; rc == 0 && i < count && !*out; i++) {
        *out = clock_find(r, heads[i].site) == NULL;
    }
    common_free(heads);
    return rc;
}

/* The smallest covered evidence over every site known; 0 when nothing is
 * stable yet. */
static int stable_point(struct replication *r, uint64_t now_ms, uint64_t *out)
{
    struct members m = {0};
    struct replication__site_clock *c;
    uint64_t cutoff = now_ms > r->config.evict_after_ms
                          ? now_ms - r->config.evict_after_ms
                          : 0;
    uint64_t point = UINT64_MAX;
    bool missing = false;
    size_t i;
    int rc;

    *out = 0;
    if (!replication__members_heard(r, now_ms)) {
        return 0;
    }
    rc = replication__history_members(r, cutoff, &m.sites, &m.count);
    if (rc == 0 && m.count > 0) {
        rc = origin_without_evidence(r, &missing);
    }
    for (i = 0; rc == 0 && !missing && m.count > 0 && i < r->clock_count; i++) {
        c = &r->clocks[i];
        if (c->updated_ms < cutoff) {
            continue; /* evicted */
        }
        rc = cover(r, &m, c);
        point = c->covered_hlc < point ? c->covered_hlc : point;
    }
    common_free(m.sites);
    if (rc == 0 && !missing && m.count > 0 && point != UINT64_MAX) {
        *out = point;
    }
    return rc;
}

bool replication__members_heard(struct replication *r, uint64_t now_ms)
{
    size_t i;

    if (now_ms >= r->opened_ms + r->config.evict_after_ms) {
        return true;
    }
    for (i = 0; i < r->config.member_count; i++) {
        struct replication__peer *peer =
            replication__peer_find(r, &r->members[i]);

        if (peer == NULL || !peer->hello || !peer->summary) {
            return false;
        }
    }
    return true;
}

static int exec_point(struct replication *r, const char *sql, uint64_t point)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(r->config.db, sql, -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, (int64_t)point);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

int replication__evidence_collect(struct replication *r, uint64_t now_ms)
{
    uint64_t point = 0;
    int rc;

    rc = stable_point(r, now_ms, &point);
    if (rc != 0 || point == 0) {
        return rc;
    }
    rc = engine_exec(r->config.db, "BEGIN", NULL, NULL);
    if (rc == 0) {
        /* Merging keeps an invisible row's cells, and only those, in
         * shadows. */
        rc = exec_point(r,
                        "DELETE FROM sinew_crdt_cell WHERE has_shadow = 1 AND"
                        " hlc < ?1",
                        point);
    }
    if (rc == 0) {
        rc = exec_point(r,
                        "DELETE FROM sinew_crdt_row WHERE alive = 0 AND"
                        " hlc < ?1",
                        point);
    }
    rc = rc == 0 ? engine_exec(r->config.db, "COMMIT", NULL, NULL) : rc;
    if (rc != 0) {
        (void)engine_exec(r->config.db, "ROLLBACK", NULL, NULL);
    }
    return rc;
}
