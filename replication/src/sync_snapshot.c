/* SPDX-License-Identifier: MIT
 *
 * sync_snapshot.c: bootstrapping a peer from a snapshot (crdt.md §6.5
 * item 6, §6.7) when it needs change sets no longer in this node's log.
 *
 * The sender builds one snapshot of its state (crdt_snapshot.c) and ships
 * it in SNAPSHOT messages: u8 protocol, u64 id, u64 total size, u64
 * offset, then the slice. Slices go in order on the connection, at most
 * batch_bytes per tick like change sets. The receiver accepts only the
 * next slice of the snapshot it is collecting (a new id at offset 0
 * starts over), checks the whole, installs it, and answers with a summary
 * at once. A sender whose peer still lags three sync intervals after the
 * last slice builds a fresh snapshot and starts again; a lost slice costs
 * that much, and a connection lost drops both sides' buffers.
 */
#include <inttypes.h>
#include <string.h>

#include "sync_int.h"

#define SLICE_BYTES ((size_t)60 << 10)
#define SNAPSHOT_MAX_BYTES                                                     \
    (REPLICATION__SNAPSHOT_BODY_MAX + REPLICATION__SNAPSHOT_HEADER_BYTES)
#define HEADER_BYTES 25
#define RESEND_INTERVALS 3u

void replication__snapshot_drop(struct replication__peer *peer)
{
    common_free(peer->snap_out);
    peer->snap_out = NULL;
    peer->snap_out_size = 0;
    peer->snap_out_sent = 0;
    common_free(peer->snap_in);
    peer->snap_in = NULL;
    peer->snap_in_size = 0;
    peer->snap_in_got = 0;
}

static int build(struct replication *r, struct replication__peer *peer,
                 uint64_t now_ms)
{
    struct common_buf buf;
    int rc;

    common_buf_init(&buf, SNAPSHOT_MAX_BYTES);
    rc = replication__crdt_snapshot_build(r->crdt, &buf);
    if (rc != 0) {
        common_buf_close(&buf);
        return rc;
    }
    common_free(peer->snap_out);
    peer->snap_out = common_buf_detach(&buf, &peer->snap_out_size);
    peer->snap_out_sent = 0;
    peer->snap_out_id = now_ms;
    peer->snap_out_done_ms = 0;
    LOGF(&r->config.log, COMMON_LOG_INFO,
         "replication: sending a snapshot of %zu bytes to a peer behind the"
         " log",
         peer->snap_out_size);
    return 0;
}

/* Sends the next slice; false when it did not go (queue full, gone). */
static bool send_slice(struct replication *r, struct replication__peer *peer)
{
    size_t left = peer->snap_out_size - peer->snap_out_sent;
    size_t n = left < SLICE_BYTES ? left : SLICE_BYTES;
    struct common_buf msg;
    int rc;

    common_buf_init(&msg, SIZE_MAX);
    rc = common_buf_append_byte(&msg, REPLICATION__SYNC_PROTOCOL);
    if (rc == 0) {
        rc = common_buf_append_u64le(&msg, peer->snap_out_id);
    }
    if (rc == 0) {
        rc = common_buf_append_u64le(&msg, peer->snap_out_size);
    }
    if (rc == 0) {
        rc = common_buf_append_u64le(&msg, peer->snap_out_sent);
    }
    if (rc == 0) {
        rc = common_buf_append(&msg, peer->snap_out + peer->snap_out_sent, n);
    }
    if (rc == 0) {
        rc = transport_send(r->config.transport, &peer->id,
                            REPLICATION__MSG_SNAPSHOT, msg.data, msg.size);
    }
    common_buf_close(&msg);
    if (rc == TRANSPORT_EFULL) {
        peer->blocked = true;
    }
    if (rc != 0) {
        return false;
    }
    peer->snap_out_sent += n;
    return true;
}

int replication__snapshot_ship(struct replication *r,
                               struct replication__peer *peer, size_t *budget)
{
    uint64_t now = r->config.clock.now_ms(r->config.clock.ctx);
    int rc;

    if (!peer->needs_snapshot || r->diverged) {
        /* A diverged node (leader mode) holds a deposed writer's change
         * sets beyond the fence: its state must not seed anyone. */
        replication__snapshot_drop(peer);
        return 0;
    }
    if (peer->snap_out != NULL && peer->snap_out_done_ms != 0 &&
        now >= peer->snap_out_done_ms +
                   RESEND_INTERVALS * r->config.sync_interval_ms) {
        common_free(peer->snap_out);
        peer->snap_out = NULL; /* still behind: build afresh */
    }
    if (peer->snap_out == NULL) {
        rc = build(r, peer, now);
        if (rc != 0) {
            return rc;
        }
    }
    while (peer->snap_out_sent<peer->snap_out_size && * budget> 0) {
        if (!send_slice(r, peer)) {
            return 0;
        }
        *budget = *budget > SLICE_BYTES ? *budget - SLICE_BYTES : 0;
    }
    if (peer->snap_out_sent < peer->snap_out_size) {
        r->more = true;
    } else if (peer->snap_out_done_ms == 0) {
        peer->snap_out_done_ms = now;
    }
    return 0;
}

/* Starts collecting snapshot id of total bytes. */
static int start(struct replication__peer *peer, uint64_t id, uint64_t total)
{
    common_free(peer->snap_in);
    peer->snap_in = NULL;
    peer->snap_in_got = 0;
    if (total < REPLICATION__SNAPSHOT_HEADER_BYTES ||
        total > SNAPSHOT_MAX_BYTES) {
        return REPLICATION_EFORMAT;
    }
    peer->snap_in = common_malloc((size_t)total);
    if (peer->snap_in == NULL) {
        return COMMON_ENOMEM;
    }
    peer->snap_in_size = (size_t)total;
    peer->snap_in_id = id;
    return 0;
}

static void install(struct replication *r, struct replication__peer *peer)
{
    struct replication__crdt_install stats = {0};
    size_t i;
    int rc;

    rc = replication__crdt_snapshot_check(peer->snap_in, peer->snap_in_size);
    if (rc == 0) {
        rc = replication__crdt_snapshot_install(r->crdt, peer->snap_in,
                                                peer->snap_in_size, &stats);
    }
    common_free(peer->snap_in);
    peer->snap_in = NULL;
    peer->snap_in_got = 0;
    if (rc != 0) {
        LOGF(&r->config.log,
             rc == REPLICATION_EDEFERRED ? COMMON_LOG_WARN : COMMON_LOG_ERROR,
             "replication: snapshot refused: %s (a later one will do)",
             replication_strerror(rc));
        return;
    }
    LOGF(&r->config.log, COMMON_LOG_INFO,
         "replication: snapshot installed; merged back %zu change sets,"
         " joined %zu registers",
         stats.merged, stats.joined);
    /* Leader mode: a sender that had not learned the fence yet may have
     * shipped a deposed writer's sets beyond it; then this node has
     * diverged and says so. */
    rc = replication__leader_recheck(r);
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: checking the fence after a snapshot: %s",
             replication_strerror(rc));
    }
    for (i = 0; i < r->peer_count; i++) {
        replication__send_summary(r, &r->peers[i]); /* the news at once */
    }
    r->more = true;
}

void replication__on_snapshot(struct replication *r,
                              struct replication__peer *peer,
                              const uint8_t *bytes, size_t size)
{
    struct common_reader reader;
    uint64_t id, total, offset;
    uint8_t protocol;
    size_t n;

    common_reader_init(&reader, bytes, size);
    if (common_reader_byte(&reader, &protocol) != 0 ||
        protocol != REPLICATION__SYNC_PROTOCOL ||
        common_reader_u64le(&reader, &id) != 0 ||
        common_reader_u64le(&reader, &total) != 0 ||
        common_reader_u64le(&reader, &offset) != 0) {
        LOGF(&r->config.log, COMMON_LOG_WARN,
             "replication: malformed snapshot slice dropped");
        return;
    }
    n = common_reader_remaining(&reader);
    if (offset == 0 && (peer->snap_in == NULL || id != peer->snap_in_id)) {
        if (start(peer, id, total) != 0) {
            LOGF(&r->config.log, COMMON_LOG_WARN,
                 "replication: snapshot of %" PRIu64 " bytes refused", total);
            return;
        }
    }
    if (peer->snap_in == NULL || id != peer->snap_in_id ||
        total != peer->snap_in_size || offset != peer->snap_in_got ||
        n > peer->snap_in_size - peer->snap_in_got) {
        return; /* not the next slice: the sender starts over later */
    }
    memcpy(peer->snap_in + peer->snap_in_got, bytes + HEADER_BYTES, n);
    peer->snap_in_got += n;
    if (peer->snap_in_got == peer->snap_in_size) {
        install(r, peer);
    }
}
