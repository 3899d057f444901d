/* SPDX-License-Identifier: MIT
 *
 * sync.c: the sending side of anti-entropy and broadcast (crdt.md §6.5;
 * the cursor rules are in sync_int.h): greetings, summaries, and shipping
 * the change log's stored chunks to the peers that lack them, bounded per
 * peer per tick.
 */
#include <inttypes.h>
#include <string.h>

#include "sync_int.h"

struct replication__peer *
replication__peer_find(struct replication *r,
                       const struct transport_node_id *id)
{
    size_t i;

    for (i = 0; i < r->peer_count; i++) {
        if (transport_node_id_equal(&r->peers[i].id, id)) {
            return &r->peers[i];
        }
    }
    return NULL;
}

struct replication__cursor *
replication__cursor_get(struct replication__peer *peer, const uint8_t *origin)
{
    struct replication__cursor *grown;
    size_t i;

    for (i = 0; i < peer->cursor_count; i++) {
        if (memcmp(peer->cursors[i].origin, origin,
                   REPLICATION_SITE_ID_BYTES) == 0) {
            return &peer->cursors[i];
        }
    }
    grown = common_realloc_array(peer->cursors, peer->cursor_count + 1,
                                 sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    peer->cursors = grown;
    memset(&grown[peer->cursor_count], 0, sizeof(*grown));
    memcpy(grown[peer->cursor_count].origin, origin, REPLICATION_SITE_ID_BYTES);
    return &grown[peer->cursor_count++];
}

/* Sends buf's bytes as type; a full queue blocks the peer until writable.
 * true when it went out. */
static bool send_message(struct replication *r, struct replication__peer *peer,
                         uint16_t type, const struct common_buf *buf)
{
    int rc = transport_send(r->config.transport, &peer->id, type, buf->data,
                            buf->size);

    if (rc == TRANSPORT_EFULL) {
        peer->blocked = true;
    } else if (rc != 0 && rc != TRANSPORT_ENOPEER) {
        LOGF(&r->config.log, COMMON_LOG_WARN, "replication: send: %s",
             transport_strerror(rc));
    }
    return rc == 0;
}

/* HELLO goes out with every SUMMARY: either may be lost on a live
 * connection, and a peer accepts summaries only after a HELLO. */
static void send_hello(struct replication *r, struct replication__peer *peer)
{
    struct replication__hello hello;
    struct common_buf buf;

    memset(&hello, 0, sizeof(hello));
    memcpy(hello.site, replication_site_id(r), sizeof(hello.site));
    hello.mode = (uint8_t)r->config.mode;
    hello.epoch = r->epoch;
    common_buf_init(&buf, SIZE_MAX);
    if (replication__hello_encode(&hello, &buf) == 0) {
        (void)send_message(r, peer, REPLICATION__MSG_HELLO, &buf);
    }
    common_buf_close(&buf);
}

void replication__send_summary(struct replication *r,
                               struct replication__peer *peer)
{
    struct replication__summary summary = {0};
    struct replication__head *heads = NULL;
    struct replication__evidence *evidence = NULL;
    struct common_buf buf;
    int rc;

    if (!peer->connected || peer->refused) {
        return;
    }
    send_hello(r, peer);
    rc = replication__crdt_vv_list(r->crdt, &heads, &summary.head_count);
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_ERROR, "replication: summary: %s",
             replication_strerror(rc));
        return;
    }
    summary.heads = heads;
    rc = replication__evidence_list(r, &evidence, &summary.evidence_count);
    if (rc != 0) {
        common_free(heads);
        return;
    }
    summary.evidence = evidence;
    summary.epoch = r->epoch;
    summary.flags =
        (uint8_t)((r->writer ? REPLICATION__SUMMARY_WRITER : 0) |
                  (r->fence_known ? REPLICATION__SUMMARY_FENCE_KNOWN : 0));
    if (r->fence_known) {
        summary.fence = r->fence;
        summary.fence_count = r->fence_count;
    }
    common_buf_init(&buf, SIZE_MAX);
    if (replication__summary_encode(&summary, &buf) == 0) {
        (void)send_message(r, peer, REPLICATION__MSG_SUMMARY, &buf);
    }
    common_buf_close(&buf);
    common_free(heads);
    common_free(evidence);
}

/* One origin's shipping to one peer, chunk by chunk from the log. */
struct shipment {
    struct replication *r;
    struct replication__peer *peer;
    struct replication__cursor *cursor;
    uint64_t limit; /* ship versions up to here */
    size_t budget;  /* bytes left this tick */
    bool cut;       /* stopped for the budget or a full queue */
    bool shipped;   /* something went out this tick */
};

#define SHIP_STOP 1 /* a visitor's "enough" */

static int ship_chunk(void *ctx, const uint8_t *bytes, size_t size)
{
    struct shipment *s = ctx;
    struct replication__chunk_info info;
    int rc;

    rc = replication__chunk_peek(bytes, size, &info);
    if (rc != 0) {
        return rc; /* the log's own bytes: corrupt */
    }
    if (info.version > s->limit) {
        return SHIP_STOP;
    }
    if (info.index == 0 && s->budget < size && s->shipped) {
        s->cut = true; /* no room: whole versions only, next tick */
        return SHIP_STOP;
    }
    rc = transport_send(s->r->config.transport, &s->peer->id,
                        REPLICATION__MSG_CHUNK, bytes, size);
    if (rc == TRANSPORT_EFULL) {
        s->peer->blocked = true;
        s->cut = true;
        return SHIP_STOP;
    }
    if (rc != 0) {
        return SHIP_STOP; /* connection gone: its next summary resets */
    }
    s->budget = s->budget > size ? s->budget - size : 0;
    s->shipped = true;
    if (info.index + 1 == info.count) {
        s->cursor->sent = info.version;
        s->peer->change_sets_sent++;
    }
    return 0;
}

/* The highest version of origin this peer should get from us now. */
static uint64_t ship_limit(const struct replication *r,
                           const struct replication__cursor *cursor,
                           const struct replication__head *mine)
{
    uint64_t limit = mine->head;
    uint64_t fence = replication__leader_limit(r, mine->site);

    if (memcmp(mine->site, replication_site_id(r), REPLICATION_SITE_ID_BYTES) !=
            0 &&
        cursor->target < limit) {
        limit = cursor->target; /* relay what it lacked at its summary */
    }
    return fence < limit ? fence : limit;
}

static int ship_to_peer(struct replication *r, struct replication__peer *peer,
                        const struct replication__head *heads, size_t count)
{
    struct shipment s = {.r = r, .peer = peer};
    uint64_t floor = 0;
    bool needs = false;
    size_t i;
    int rc = 0;

    s.budget = r->config.batch_bytes;
    for (i = 0; rc == 0 && i < count && !s.cut; i++) {
        s.cursor = replication__cursor_get(peer, heads[i].site);
        if (s.cursor == NULL) {
            return COMMON_ENOMEM;
        }
        s.limit = ship_limit(r, s.cursor, &heads[i]);
        if (s.cursor->sent >= s.limit) {
            continue;
        }
        rc = replication__crdt_floor(r->crdt, heads[i].site, &floor);
        if (rc == 0 && s.cursor->sent < floor) {
            needs = true; /* pruned: only a snapshot serves it */
            continue;
        }
        rc = replication__crdt_log_bytes_since(r->crdt, heads[i].site,
                                               s.cursor->sent, ship_chunk, &s);
        rc = rc == SHIP_STOP ? 0 : rc;
    }
    if (rc == 0) {
        if (needs && !peer->needs_snapshot) {
            LOGF(&r->config.log, COMMON_LOG_WARN,
                 "replication: a peer needs change sets pruned from the log:"
                 " it bootstraps from a snapshot");
        }
        peer->needs_snapshot = needs || (s.cut && peer->needs_snapshot);
        rc = replication__snapshot_ship(r, peer, &s.budget);
    }
    if (s.cut && !peer->blocked) {
        r->more = true;
    }
    return rc;
}

int replication__ship(struct replication *r)
{
    struct replication__head *heads = NULL;
    size_t count = 0, i;
    int rc;

    r->more = false;
    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    for (i = 0; rc == 0 && i < r->peer_count; i++) {
        struct replication__peer *peer = &r->peers[i];

        if (peer->connected && peer->hello && peer->summary && !peer->refused &&
            !peer->blocked) {
            rc = ship_to_peer(r, peer, heads, count);
        }
    }
    common_free(heads);
    return rc;
}
