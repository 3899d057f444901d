/* SPDX-License-Identifier: MIT
 *
 * sync_int.h: what the files behind replication.h share (replication.c:
 * open, close, stats, the commit gate; sync.c: peers, summaries, shipping;
 * sync_receive.c: incoming messages, apply, the leader-mode fence).
 *
 * Per peer and per origin a cursor says how far this node has shipped:
 * `sent` is the highest version whose chunks all went out. A peer's
 * SUMMARY moves it forward to the peer's head, and moves it back to that
 * head when the peer made no progress on an origin between two summaries
 * while we had sent more (something was lost: send again). A node's own
 * commits go out as soon as a tick finds them (broadcast); another origin's
 * are shipped up to `target`, this node's head for that origin when the
 * peer's last summary came, so a change set reaches a node once from its
 * origin and is relayed only to peers that still lacked it (crdt.md §6.5).
 */
#ifndef SINEW_REPLICATION_SYNC_INT_H
#define SINEW_REPLICATION_SYNC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "changeset_codec.h"
#include "crdt.h"
#include "hlc.h"
#include "replication.h"
#include "sync_wire.h"

struct replication__cursor {
    uint8_t origin[REPLICATION_SITE_ID_BYTES];
    uint64_t sent;       /* versions up to here went out whole */
    uint64_t their_head; /* from the peer's last summary */
    uint64_t target;     /* relay up to here (not for our own origin) */
    uint64_t acked;      /* their head + 1 as stored in sinew_crdt_ack */
};

struct replication__peer {
    struct transport_node_id id;
    bool connected;
    bool hello;            /* its HELLO arrived (and was accepted) */
    bool refused;          /* its HELLO named our site or another mode */
    bool summary;          /* a SUMMARY arrived since it connected */
    bool blocked;          /* send queue full: wait for writable */
    bool needs_snapshot;   /* lacks versions pruned from our log */
    bool eviction_checked; /* at its first summary since it connected */
    bool evicted;          /* found evicted then: refused till reconnect */
    /* A snapshot going out to it (sync_snapshot.c), and one coming in. */
    uint8_t *snap_out;
    size_t snap_out_size;
    size_t snap_out_sent;
    uint64_t snap_out_id;
    uint64_t snap_out_done_ms; /* when its last slice went; 0: not yet */
    uint8_t *snap_in;
    size_t snap_in_size;
    size_t snap_in_got;
    uint64_t snap_in_id;
    uint64_t stored_seen_ms; /* last_seen_ms last written */
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint64_t last_summary_ms;
    struct replication__cursor *cursors;
    size_t cursor_count;
    uint64_t change_sets_sent;
    uint64_t chunks_received;
};

/* What this node knows of a site's clock (sync_evidence.c). */
#define REPLICATION__EVIDENCE_KEPT 8

struct replication__site_clock {
    /* The latest evidence heard (or, for this node, given), newest last:
     * older entries serve while the newest is not yet acknowledged. */
    struct replication__evidence recent[REPLICATION__EVIDENCE_KEPT];
    size_t recent_count;
    uint64_t covered_hlc; /* the highest evidence hlc held and acknowledged */
    uint64_t updated_ms;  /* when the newest evidence arrived */
};

struct replication {
    struct replication_config config; /* copied; defaults filled in */
    struct hlc clock;
    struct replication__crdt *crdt;
    struct replication__chunks *chunks; /* reassembly of incoming sets */
    struct replication__peer *peers;
    size_t peer_count;
    uint64_t next_summary_ms;
    uint64_t next_prune_ms;
    uint64_t opened_ms;
    bool heard; /* replication__members_heard() at the last prune */
    struct transport_node_id *members; /* config's, copied */
    struct replication__site_clock *clocks;
    size_t clock_count;
    bool more; /* a batch was cut short: tick again now */
    /* Complete change sets received, merged together at the next tick or
     * once REPLICATION__INCOMING_MAX are waiting (sync_receive.c). */
    struct replication__decoded **incoming;
    size_t incoming_count;
    uint64_t applied;
    uint64_t refused;
    /* Leader mode (persisted in sinew_crdt_meta and sinew_crdt_fence). */
    uint64_t epoch;                  /* the highest epoch seen */
    bool writer;                     /* this node is the writer at epoch */
    bool fence_known;                /* fence holds epoch's fence */
    struct replication__head *fence; /* other origins' heads at takeover */
    size_t fence_count;
    bool diverged;
};

/* ---- sync.c ---- */

struct replication__peer *
replication__peer_find(struct replication *r,
                       const struct transport_node_id *id);
/* The cursor of origin at peer, added (zeroed) when new; NULL: no memory. */
struct replication__cursor *
replication__cursor_get(struct replication__peer *peer, const uint8_t *origin);

/* Sends HELLO and SUMMARY to peer (best effort: a full queue or a lost
 * message waits for the next interval). */
void replication__send_summary(struct replication *r,
                               struct replication__peer *peer);

/* Ships to every ready peer what it lacks, at most batch_bytes each. */
int replication__ship(struct replication *r);

/* ---- sync_history.c ---- */

int replication__history_open(struct replication *r);
/* Stores what peer's summary (heads, borrowed) acknowledges, if news. */
int replication__history_ack(struct replication *r,
                             struct replication__peer *peer,
                             const struct replication__head *heads,
                             size_t count, uint64_t now_ms);

/* The members: peers heard from since cutoff_ms (*sites common_malloc'd,
 * *count of them). */
int replication__history_members(struct replication *r, uint64_t cutoff_ms,
                                 uint8_t (**sites)[REPLICATION_SITE_ID_BYTES],
                                 size_t *count);
/* Whether peer (a site) was heard from before but not since cutoff_ms:
 * an evicted member coming back. */
int replication__history_evicted(struct replication *r, const uint8_t *peer,
                                 uint64_t cutoff_ms, bool *out);
/* What peer (a site) acknowledged of origin: 0 when nothing. */
int replication__history_acked(struct replication *r, const uint8_t *peer,
                               const uint8_t *origin, uint64_t *head);
/* Prunes the log by the members' acknowledgements and the retention. */
int replication__history_prune(struct replication *r, uint64_t now_ms);

/* ---- sync_evidence.c ---- */

/* Takes in a summary's evidence (borrowed). */
int replication__evidence_merge(struct replication *r,
                                const struct replication__evidence *evidence,
                                size_t count, uint64_t now_ms);
/* The evidence to send: this node's own, current, then the best known of
 * every other site (*out common_malloc'd). */
int replication__evidence_list(struct replication *r,
                               struct replication__evidence **out,
                               size_t *count);
/* Whether every configured member has been heard from in this run (its
 * HELLO and evidence), or evict_after_ms has passed since open. */
bool replication__members_heard(struct replication *r, uint64_t now_ms);
/* Collects the tombstones below the stable point, if any. */
int replication__evidence_collect(struct replication *r, uint64_t now_ms);

/* ---- sync_snapshot.c ---- */

/* Frees peer's snapshot buffers, both ways. */
void replication__snapshot_drop(struct replication__peer *peer);
/* Ships the snapshot to a peer that needs one, within *budget bytes. */
int replication__snapshot_ship(struct replication *r,
                               struct replication__peer *peer, size_t *budget);
void replication__on_snapshot(struct replication *r,
                              struct replication__peer *peer,
                              const uint8_t *bytes, size_t size);

/* ---- sync_receive.c ---- */

void replication__on_hello(struct replication *r,
                           struct replication__peer *peer, const uint8_t *bytes,
                           size_t size);
void replication__on_summary(struct replication *r,
                             struct replication__peer *peer,
                             const uint8_t *bytes, size_t size);
/* Merges the change sets received since the last flush, together. */
void replication__flush_incoming(struct replication *r);
/* Frees them unapplied (closing: peers send them again). */
void replication__drop_incoming(struct replication *r);
void replication__on_chunk(struct replication *r,
                           struct replication__peer *peer, const uint8_t *bytes,
                           size_t size);

/* ---- leader mode (replication_leader.c) ---- */

/* Loads epoch and fence from the database. */
int replication__leader_load(struct replication *r);
/* Asks is_writer; on becoming the writer at a new epoch, takes the fence
 * (our heads of every other origin) and persists it. */
int replication__leader_check(struct replication *r);
/* What a summary says of epochs: a higher epoch is adopted, with its
 * fence (borrowed) when fence_known; ours already known is kept. */
int replication__leader_adopt(struct replication *r, uint64_t epoch,
                              const struct replication__head *fence,
                              size_t fence_count, bool fence_known);
/* Whether a change set of origin, version and epoch may be applied (or
 * shipped): 0, REPLICATION_EFENCED. A higher epoch than any seen is
 * recorded (its fence not known yet). */
int replication__leader_admit(struct replication *r, const uint8_t *origin,
                              uint64_t version, uint64_t epoch);
/* The same question with no side effect, asked again when a set that
 * arrived earlier is merged (crdt.h's admit): 0; REPLICATION_EFENCED,
 * beyond the fence; REPLICATION_EDEFERRED, older than an epoch whose
 * fence is not known yet. */
int replication__leader_admits(const struct replication *r,
                               const uint8_t *origin, uint64_t version,
                               uint64_t epoch);
/* After change sets were merged: those admitted before the current fence
 * was adopted (queued, or held for an earlier version) may lie beyond it,
 * and then this node has diverged (says so, as adopt does). 0 or an
 * engine code. */
int replication__leader_recheck(struct replication *r);
/* The highest version of origin that may be shipped (UINT64_MAX: all). */
uint64_t replication__leader_limit(const struct replication *r,
                                   const uint8_t *origin);

#endif /* SINEW_REPLICATION_SYNC_INT_H */
