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
};

struct replication__peer {
    struct transport_node_id id;
    bool connected;
    bool hello;   /* its HELLO arrived (and was accepted) */
    bool refused; /* its HELLO named our site or another mode */
    bool summary; /* a SUMMARY arrived since it connected */
    bool blocked; /* send queue full: wait for writable */
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint64_t last_summary_ms;
    struct replication__cursor *cursors;
    size_t cursor_count;
    uint64_t change_sets_sent;
    uint64_t chunks_received;
};

struct replication {
    struct replication_config config; /* copied; defaults filled in */
    struct hlc clock;
    struct replication__crdt *crdt;
    struct replication__chunks *chunks; /* reassembly of incoming sets */
    struct replication__peer *peers;
    size_t peer_count;
    uint64_t next_summary_ms;
    bool more; /* a batch was cut short: tick again now */
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

/* ---- sync_receive.c ---- */

void replication__on_hello(struct replication *r,
                           struct replication__peer *peer, const uint8_t *bytes,
                           size_t size);
void replication__on_summary(struct replication *r,
                             struct replication__peer *peer,
                             const uint8_t *bytes, size_t size);
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
 * shipped): 0, REPLICATION_EFENCED. */
int replication__leader_admit(struct replication *r, const uint8_t *origin,
                              uint64_t version, uint64_t epoch);
/* The highest version of origin that may be shipped (UINT64_MAX: all). */
uint64_t replication__leader_limit(const struct replication *r,
                                   const uint8_t *origin);

#endif /* SINEW_REPLICATION_SYNC_INT_H */
