/* SPDX-License-Identifier: MIT
 *
 * replication.c: the embedded API's life (replication.h): open, close,
 * the transport's events, the tick, stats, and the commit gate that keeps
 * leader mode's followers from writing.
 */
#include <string.h>

#include "sync_int.h"

static uint64_t now_ms(const struct replication *r)
{
    return r->config.clock.now_ms(r->config.clock.ctx);
}

static uint64_t hlc_clock_now(void *ctx)
{
    struct replication *r = ctx;

    return now_ms(r);
}

/* Leader mode's gate (crdt.h): only the writer that took over at the
 * current epoch commits (the takeover itself happens in a tick). */
static int gate(void *ctx, uint64_t *epoch)
{
    struct replication *r = ctx;
    uint64_t claimed = 0;

    if (r->config.is_writer(r->config.is_writer_ctx, &claimed) && r->writer &&
        claimed == r->epoch) {
        *epoch = r->epoch;
        return 0;
    }
    return REPLICATION_ENOTWRITER;
}

/* Leader mode's admission (crdt.h): the fence again, at merge time. */
static int admit(void *ctx, const struct replication__changeset *cs)
{
    const struct replication *r = ctx;

    return replication__leader_admits(r, cs->origin, cs->version, cs->epoch);
}

static int check_config(const struct replication_config *config)
{
    if (config->db == NULL || config->transport == NULL ||
        config->clock.now_ms == NULL) {
        return REPLICATION_ECONFIG;
    }
    if (config->mode == REPLICATION_MODE_LEADER) {
        return config->is_writer != NULL ? 0 : REPLICATION_ECONFIG;
    }
    return config->mode == REPLICATION_MODE_CRDT ? 0 : REPLICATION_ECONFIG;
}

static void fill_defaults(struct replication_config *config)
{
    if (config->max_offset_ms == 0) {
        config->max_offset_ms = HLC_MAX_OFFSET_MS_DEFAULT;
    }
    if (config->sync_interval_ms == 0) {
        config->sync_interval_ms = REPLICATION_SYNC_INTERVAL_MS_DEFAULT;
    }
    if (config->batch_bytes == 0) {
        config->batch_bytes = REPLICATION_BATCH_BYTES_DEFAULT;
    }
    if (config->evict_after_ms == 0) {
        config->evict_after_ms = REPLICATION_EVICT_AFTER_MS_DEFAULT;
    }
}

static int open_crdt(struct replication *r)
{
    struct replication__crdt_config cc = {0};
    struct hlc_config hc;

    hc.clock.ctx = r;
    hc.clock.now_ms = hlc_clock_now;
    hc.max_offset_ms = r->config.max_offset_ms;
    hlc_init(&r->clock, &hc);
    cc.db = r->config.db;
    cc.clock = &r->clock;
    cc.random_bytes = r->config.random_bytes;
    cc.random_ctx = r->config.random_ctx;
    cc.log = r->config.log;
    if (r->config.mode == REPLICATION_MODE_LEADER) {
        cc.gate = gate;
        cc.gate_ctx = r;
        cc.admit = admit;
        cc.admit_ctx = r;
    }
    return replication__crdt_open(&cc, &r->crdt);
}

int replication_open(const struct replication_config *config,
                     struct replication **out)
{
    const struct replication__chunks_config chunks = {
        .bytes_max = REPLICATION__CHANGESET_BODY_MAX, .sets_max = 64};
    struct replication *r;
    int rc;

    ASSERT(config != NULL);
    rc = check_config(config);
    if (rc != 0) {
        return rc;
    }
    r = common_calloc(1, sizeof(*r));
    if (r == NULL) {
        return COMMON_ENOMEM;
    }
    r->config = *config;
    fill_defaults(&r->config);
    r->opened_ms = now_ms(r);
    if (config->member_count > 0) {
        r->members = common_calloc(config->member_count, sizeof(*r->members));
        if (r->members == NULL) {
            common_free(r);
            return COMMON_ENOMEM;
        }
        memcpy(r->members, config->members,
               config->member_count * sizeof(*r->members));
    }
    r->config.members = r->members;
    rc = open_crdt(r);
    if (rc == 0) {
        rc = replication__chunks_create(&chunks, &r->chunks);
    }
    if (rc == 0) {
        rc = replication__history_open(r);
    }
    if (rc == 0) {
        rc = replication__leader_load(r);
    }
    if (rc != 0) {
        replication_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

static void peer_free(struct replication__peer *peer)
{
    replication__snapshot_drop(peer);
    common_free(peer->cursors);
    peer->cursors = NULL;
    peer->cursor_count = 0;
}

void replication_close(struct replication *r)
{
    size_t i;

    if (r == NULL) {
        return;
    }
    replication__drop_incoming(r);
    replication__crdt_close(r->crdt);
    replication__chunks_destroy(r->chunks);
    for (i = 0; i < r->peer_count; i++) {
        peer_free(&r->peers[i]);
    }
    common_free(r->peers);
    common_free(r->fence);
    common_free(r->members);
    common_free(r->clocks);
    common_free(r);
}

const uint8_t *replication_site_id(const struct replication *r)
{
    return replication__crdt_site(r->crdt);
}

void replication_connected(struct replication *r,
                           const struct transport_node_id *peer_id)
{
    struct replication__peer *peer = replication__peer_find(r, peer_id);
    struct replication__peer *grown;

    if (peer == NULL) {
        grown =
            common_realloc_array(r->peers, r->peer_count + 1, sizeof(*grown));
        if (grown == NULL) {
            LOGF(&r->config.log, COMMON_LOG_ERROR,
                 "replication: no memory for a new peer");
            return;
        }
        r->peers = grown;
        peer = &r->peers[r->peer_count++];
        memset(peer, 0, sizeof(*peer));
        peer->id = *peer_id;
    }
    peer_free(peer);
    peer->connected = true;
    peer->hello = false;
    peer->refused = false;
    peer->summary = false;
    peer->blocked = false;
    peer->eviction_checked = false;
    peer->evicted = false;
    replication__send_summary(r, peer);
}

void replication_disconnected(struct replication *r,
                              const struct transport_node_id *peer_id)
{
    struct replication__peer *peer = replication__peer_find(r, peer_id);

    if (peer != NULL) {
        peer->connected = false;
        peer->summary = false;
        peer_free(peer); /* cursors start over from its next summary */
    }
}

void replication_received(struct replication *r,
                          const struct transport_node_id *peer_id,
                          uint16_t type, const uint8_t *bytes, size_t size)
{
    struct replication__peer *peer = replication__peer_find(r, peer_id);

    if (peer == NULL || !peer->connected) {
        return; /* a message before its connection's notice: ignored */
    }
    switch (type) {
    case REPLICATION__MSG_HELLO:
        replication__on_hello(r, peer, bytes, size);
        break;
    case REPLICATION__MSG_SUMMARY:
        replication__on_summary(r, peer, bytes, size);
        break;
    case REPLICATION__MSG_CHUNK:
        replication__on_chunk(r, peer, bytes, size);
        break;
    case REPLICATION__MSG_SNAPSHOT:
        if (peer->hello && !peer->refused) {
            replication__on_snapshot(r, peer, bytes, size);
        }
        break;

    default:
        LOGF(&r->config.log, COMMON_LOG_WARN,
             "replication: unknown message type=%u dropped", (unsigned)type);
    }
}

void replication_writable(struct replication *r,
                          const struct transport_node_id *peer_id)
{
    struct replication__peer *peer = replication__peer_find(r, peer_id);

    if (peer != NULL) {
        peer->blocked = false;
        r->more = true;
    }
}

/* When the held change sets should be looked at again: soon while some
 * wait for the clock. */
#define DEFERRED_RETRY_MS 100u
/* The log is pruned every this many sync intervals. */
#define PRUNE_INTERVALS 10u

/* The clock went back (a wall clock set right, crdt.md §5 #13, #15): what
 * is due by the later reading would otherwise wait as long. */
static void timers_rewind(struct replication *r, uint64_t now)
{
    if (r->next_summary_ms > now + r->config.sync_interval_ms) {
        r->next_summary_ms = now;
    }
    if (r->next_prune_ms > now + PRUNE_INTERVALS * r->config.sync_interval_ms) {
        r->next_prune_ms = now;
    }
}

int replication_tick(struct replication *r, uint64_t *next_ms)
{
    uint64_t now = now_ms(r);
    size_t i;
    int rc = 0;

    ASSERT(r != NULL);
    timers_rewind(r, now);
    replication__flush_incoming(r); /* before summaries report the heads */
    if (r->config.mode == REPLICATION_MODE_LEADER) {
        rc = replication__leader_check(r);
    }
    if (rc == 0 && (replication__crdt_deferred_count(r->crdt) > 0 ||
                    replication__crdt_kept_count(r->crdt) > 0)) {
        rc = replication__crdt_retry(r->crdt);
    }
    if (rc == 0 && now >= r->next_summary_ms) {
        for (i = 0; i < r->peer_count; i++) {
            replication__send_summary(r, &r->peers[i]);
        }
        r->next_summary_ms = now + r->config.sync_interval_ms;
    }
    if (rc == 0 && now >= r->next_prune_ms) {
        rc = replication__history_prune(r, now);
        r->next_prune_ms = now + PRUNE_INTERVALS * r->config.sync_interval_ms;
    }
    if (rc == 0) {
        rc = replication__ship(r);
    }
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_ERROR, "replication: tick: %s (%d)",
             rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST
                 ? engine_errmsg(r->config.db)
                 : replication_strerror(rc),
             rc);
    }
    *next_ms = r->next_summary_ms;
    if (replication__crdt_deferred_count(r->crdt) > 0 &&
        now + DEFERRED_RETRY_MS < *next_ms) {
        *next_ms = now + DEFERRED_RETRY_MS;
    }
    if (r->more) {
        *next_ms = now;
    }
    return rc;
}

static int stats_peers(const struct replication *r,
                       struct replication_stats *out)
{
    size_t i;

    if (r->peer_count == 0) {
        return 0;
    }
    out->peers = common_calloc(r->peer_count, sizeof(*out->peers));
    if (out->peers == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < r->peer_count; i++) {
        const struct replication__peer *p = &r->peers[i];
        struct replication_peer_stats *s = &out->peers[i];

        s->id = p->id;
        s->connected = p->connected;
        s->refused = p->refused;
        memcpy(s->site, p->site, sizeof(s->site));
        s->last_summary_ms = p->last_summary_ms;
        s->needs_snapshot = p->needs_snapshot;
        s->change_sets_sent = p->change_sets_sent;
        s->chunks_received = p->chunks_received;
    }
    out->peer_count = r->peer_count;
    return 0;
}

int replication_stats_get(struct replication *r, struct replication_stats *out)
{
    struct replication__head *heads = NULL;
    size_t count = 0, i;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    if (rc == 0 && count > 0) {
        out->origins = common_calloc(count, sizeof(*out->origins));
        rc = out->origins == NULL ? COMMON_ENOMEM : 0;
    }
    for (i = 0; rc == 0 && i < count; i++) {
        memcpy(out->origins[i].site, heads[i].site, REPLICATION_SITE_ID_BYTES);
        out->origins[i].head = heads[i].head;
    }
    out->origin_count = rc == 0 ? count : 0;
    common_free(heads);
    if (rc == 0) {
        rc = stats_peers(r, out);
    }
    out->deferred = replication__crdt_deferred_count(r->crdt);
    out->quarantined = replication__crdt_kept_count(r->crdt);
    out->waiting = replication__crdt_held_count(r->crdt) - out->deferred;
    out->applied = r->applied;
    out->refused = r->refused + replication__crdt_fenced_count(r->crdt);
    out->epoch = r->epoch;
    out->diverged = r->diverged;
    if (rc != 0) {
        replication_stats_release(out);
    }
    return rc;
}

void replication_stats_release(struct replication_stats *stats)
{
    common_free(stats->origins);
    common_free(stats->peers);
    memset(stats, 0, sizeof(*stats));
}
