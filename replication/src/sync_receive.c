/* SPDX-License-Identifier: MIT
 *
 * sync_receive.c: the receiving side (crdt.md §6.5): a peer's HELLO
 * (refused when it names our own site id, crdt.md §5 #30, or another
 * mode), its SUMMARY (moves our shipping cursors, carries leader mode's
 * fence), and change-set chunks: dropped when already covered or fenced,
 * reassembled, then merged (crdt.c holds early and future-stamped ones).
 */
#include <inttypes.h>
#include <string.h>

#include "sync_int.h"

static void site_text(const uint8_t *site, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < 8; i++) {
        out[2 * i] = digits[site[i] >> 4];
        out[2 * i + 1] = digits[site[i] & 15];
    }
    out[16] = '\0';
}

void replication__on_hello(struct replication *r,
                           struct replication__peer *peer, const uint8_t *bytes,
                           size_t size)
{
    struct replication__hello hello;
    char site[17];
    int rc;

    rc = replication__hello_decode(bytes, size, &hello);
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_WARN,
             "replication: malformed hello dropped: %s",
             replication_strerror(rc));
        return;
    }
    memcpy(peer->site, hello.site, sizeof(peer->site));
    site_text(hello.site, site);
    if (memcmp(hello.site, replication_site_id(r), sizeof(hello.site)) == 0) {
        peer->refused = true;
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: peer has this database's own site id %s (a copied"
             " database image?): not syncing with it; give one of the two a"
             " fresh database",
             site);
        return;
    }
    if (hello.mode != (uint8_t)r->config.mode) {
        peer->refused = true;
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: peer site %s runs another replication mode (%u,"
             " ours %u): not syncing with it",
             site, (unsigned)hello.mode, (unsigned)r->config.mode);
        return;
    }
    peer->hello = true;
    peer->refused = peer->evicted; /* a later HELLO does not undo that */
}

/* Moves origin's cursor by the peer's head (sync_int.h). */
static int move_cursor(struct replication *r, struct replication__peer *peer,
                       const struct replication__head *theirs)
{
    struct replication__cursor *c;
    uint64_t mine = 0;
    int rc;

    c = replication__cursor_get(peer, theirs->site);
    if (c == NULL) {
        return COMMON_ENOMEM;
    }
    rc = replication__crdt_head(r->crdt, theirs->site, &mine);
    if (rc != 0) {
        return rc;
    }
    if (theirs->head > c->sent) {
        c->sent = theirs->head;
    } else if (peer->summary && theirs->head == c->their_head &&
               c->sent > theirs->head) {
        c->sent = theirs->head; /* no progress since: resend */
    }
    c->their_head = theirs->head;
    c->target = mine;
    return 0;
}

/* Origins we hold that the summary does not name: the peer has none. */
static int move_absent(struct replication *r, struct replication__peer *peer,
                       const struct replication__summary *summary)
{
    struct replication__head *heads = NULL;
    struct replication__head none;
    size_t count = 0, i, j;
    int rc;

    rc = replication__crdt_vv_list(r->crdt, &heads, &count);
    for (i = 0; rc == 0 && i < count; i++) {
        for (j = 0; j < summary->head_count; j++) {
            if (memcmp(summary->heads[j].site, heads[i].site,
                       REPLICATION_SITE_ID_BYTES) == 0) {
                break;
            }
        }
        if (j == summary->head_count) {
            memcpy(none.site, heads[i].site, sizeof(none.site));
            none.head = 0;
            rc = move_cursor(r, peer, &none);
        }
    }
    common_free(heads);
    return rc;
}

/* At a peer's first summary since it connected: was it evicted (silent
 * past evict_after_ms)? Tombstones may have been collected without it,
 * so its old writes could bring deleted rows back: it is refused until
 * rebuilt from a fresh database (crdt.md §6.7: an evicted member must
 * re-bootstrap), which then joins as a new site through a snapshot. */
static int check_evicted(struct replication *r, struct replication__peer *peer)
{
    uint64_t now = r->config.clock.now_ms(r->config.clock.ctx);
    uint64_t cutoff =
        now > r->config.evict_after_ms ? now - r->config.evict_after_ms : 0;
    bool evicted = false;
    char site[17];
    int rc;

    if (peer->eviction_checked) {
        return 0;
    }
    peer->eviction_checked = true;
    rc = replication__history_evicted(r, peer->site, cutoff, &evicted);
    if (rc == 0 && evicted) {
        peer->evicted = true;
        peer->refused = true;
        site_text(peer->site, site);
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: peer site %s was evicted (silent longer than"
             " evict_after_ms): not syncing with it; rebuild it from an"
             " empty database, and it rejoins through a snapshot",
             site);
    }
    return rc;
}

void replication__on_summary(struct replication *r,
                             struct replication__peer *peer,
                             const uint8_t *bytes, size_t size)
{
    struct replication__summary summary;
    size_t i;
    int rc;

    if (!peer->hello || peer->refused) {
        return; /* before its hello (reordered): the next one will do */
    }
    if (check_evicted(r, peer) != 0 || peer->refused) {
        return;
    }
    rc = replication__summary_decode(bytes, size, &summary);
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_WARN,
             "replication: malformed summary dropped: %s",
             replication_strerror(rc));
        return;
    }
    if (r->config.mode == REPLICATION_MODE_LEADER) {
        rc = replication__leader_adopt(
            r, summary.epoch, summary.fence, summary.fence_count,
            (summary.flags & REPLICATION__SUMMARY_FENCE_KNOWN) != 0);
    }
    for (i = 0; rc == 0 && i < summary.head_count; i++) {
        rc = move_cursor(r, peer, &summary.heads[i]);
    }
    if (rc == 0) {
        rc = move_absent(r, peer, &summary);
    }
    if (rc == 0) {
        rc = replication__history_ack(
            r, peer, summary.heads, summary.head_count,
            r->config.clock.now_ms(r->config.clock.ctx));
    }
    if (rc == 0) {
        rc = replication__evidence_merge(
            r, summary.evidence, summary.evidence_count,
            r->config.clock.now_ms(r->config.clock.ctx));
    }
    replication__summary_release(&summary);
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_ERROR, "replication: summary: %s",
             replication_strerror(rc));
        return;
    }
    peer->summary = true;
    peer->last_summary_ms = r->config.clock.now_ms(r->config.clock.ctx);
    r->more = true; /* ship what it lacks at the next tick */
}

/* How many complete change sets wait to be merged together: a catching-up
 * node commits once per batch, not once per set. */
#define REPLICATION__INCOMING_MAX 256

/* A set that failed alone: errors are the set's, not the peer's. */
static void apply_failed(void *ctx, const struct replication__changeset *cs,
                         int rc)
{
    struct replication *r = ctx;
    char site[17];

    r->refused++;
    site_text(cs->origin, site);
    LOGF(&r->config.log,
         rc == COMMON_ETOOBIG || rc == REPLICATION_EFENCED ? COMMON_LOG_WARN
                                                           : COMMON_LOG_ERROR,
         "replication: change set origin=%s version=%" PRIu64
         " not applied: %s%s",
         site, cs->version, replication_strerror(rc),
         rc == REPLICATION_EFENCED ? "" : " (anti-entropy sends it again)");
}

void replication__drop_incoming(struct replication *r)
{
    size_t i;

    for (i = 0; i < r->incoming_count; i++) {
        replication__decoded_destroy(r->incoming[i]);
    }
    common_free(r->incoming);
    r->incoming = NULL;
    r->incoming_count = 0;
}

void replication__flush_incoming(struct replication *r)
{
    const struct replication__changeset **sets;
    size_t i, applied = 0;
    int rc;

    if (r->incoming_count == 0) {
        return;
    }
    sets = common_calloc(r->incoming_count, sizeof(*sets));
    if (sets == NULL) {
        replication__drop_incoming(r); /* peers send them again */
        return;
    }
    for (i = 0; i < r->incoming_count; i++) {
        sets[i] = &r->incoming[i]->set;
    }
    rc = replication__crdt_apply_batch(r->crdt, sets, r->incoming_count,
                                       &applied, apply_failed, r);
    r->applied += applied;
    if (rc == 0 && applied > 0) {
        rc = replication__leader_recheck(r);
    }
    if (rc != 0) {
        LOGF(&r->config.log, COMMON_LOG_ERROR,
             "replication: merging received change sets: %s",
             replication_strerror(rc));
    }
    common_free(sets);
    replication__drop_incoming(r);
}

/* Queues a complete set for the next flush (it owns decoded). */
static void receive(struct replication *r, struct replication__decoded *decoded)
{
    struct replication__decoded **grown;

    grown = common_realloc_array(r->incoming, r->incoming_count + 1,
                                 sizeof(*grown));
    if (grown == NULL) {
        replication__decoded_destroy(decoded); /* sent again later */
        return;
    }
    r->incoming = grown;
    r->incoming[r->incoming_count++] = decoded;
    r->more = true;
    if (r->incoming_count >= REPLICATION__INCOMING_MAX) {
        replication__flush_incoming(r);
    }
}

void replication__on_chunk(struct replication *r,
                           struct replication__peer *peer, const uint8_t *bytes,
                           size_t size)
{
    struct replication__chunk_info info;
    struct replication__decoded *decoded = NULL;
    uint64_t head = 0;
    int rc;

    if (!peer->hello || peer->refused || !peer->eviction_checked) {
        return; /* until its first summary says it may sync */
    }
    peer->chunks_received++;
    rc = replication__chunk_peek(bytes, size, &info);
    if (rc == 0) {
        rc = replication__crdt_head(r->crdt, info.origin, &head);
    }
    if (rc == 0 &&
        (info.version <= head ||
         replication__crdt_is_held(r->crdt, info.origin, info.version))) {
        return; /* covered, or already waiting here: a resend or relay */
    }
    if (rc == 0 && r->config.mode == REPLICATION_MODE_LEADER) {
        rc =
            replication__leader_admit(r, info.origin, info.version, info.epoch);
    }
    if (rc == 0) {
        rc = replication__chunks_add(r->chunks, bytes, size, &decoded);
    }
    if (rc != 0) {
        r->refused += rc == REPLICATION_EFENCED;
        LOGF(&r->config.log,
             rc == REPLICATION_EFENCED ? COMMON_LOG_WARN : COMMON_LOG_ERROR,
             "replication: chunk dropped: %s", replication_strerror(rc));
        return;
    }
    if (decoded != NULL) {
        receive(r, decoded);
    }
}
