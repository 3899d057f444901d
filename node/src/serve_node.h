/* SPDX-License-Identifier: MIT
 *
 * serve_node.h: the node thread of `sinew serve`. It owns a libuv loop
 * of its own with the peer transport (TCP, encrypted), the mode's
 * replication (crdt, leader) or Raft member (quorum), and the database
 * handle every write goes through, whose commits replication captures
 * (serve.c tells why writes and peers share a thread apart from HTTP).
 *
 * Other threads reach it by posting closures (serve_node_post); the calls
 * marked "node thread" may only be made from such a closure. What the HTTP
 * side shows of it (/v1/status, /metrics) is a snapshot it refreshes every
 * second and after changes, read with serve_node_status() from any
 * thread.
 *
 * Holding. While a client's interactive transaction is open on the
 * writing handle (BEGIN IMMEDIATE, then later requests), replication must
 * not merge into it nor read through it: serve_node_hold() stops
 * forwarding the transport's events (they are queued in order, copied)
 * and ticking; serve_node_release() delivers them and ticks.
 */
#ifndef SINEW_NODE_SERVE_NODE_H
#define SINEW_NODE_SERVE_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "consensus.h"
#include "engine.h"
#include "quorum.h"
#include "serve_config.h"
#include "serve_log.h"
#include "serve_mailbox.h"
#include "transport.h"

#define SERVE_STATUS_PEERS_MAX 64

struct serve_peer_status {
    char id[TRANSPORT_NODE_ID_TEXT_SIZE];
    char address[256];
    bool connected;
    bool refused;
    bool needs_snapshot;
    uint64_t last_summary_ms; /* the node clock's ms; 0: never */
    uint64_t change_sets_sent;
    uint64_t chunks_received;
};

struct serve_member_status {
    uint64_t raft_id;
    char id[TRANSPORT_NODE_ID_TEXT_SIZE];
    char address[256];
    enum consensus_role role;
};

struct serve_status {
    bool started;
    /* crdt and leader: replication_stats_get() */
    struct serve_peer_status peers[SERVE_STATUS_PEERS_MAX];
    size_t peer_count;
    size_t origin_count; /* the version vector's size */
    uint64_t versions;   /* the version vector's sum */
    size_t waiting, deferred, quarantined;
    uint64_t applied, refused, epoch;
    bool diverged;
    bool writer; /* leader mode: this node writes */
    /* quorum */
    bool has_consensus;
    struct consensus_status consensus;
    struct serve_member_status members[SERVE_STATUS_PEERS_MAX];
    size_t member_count;
    char leader_node[TRANSPORT_NODE_ID_TEXT_SIZE]; /* "" when unknown */
    uint64_t raft_id;                              /* this member's */
    char advertise[256]; /* quorum: the peer address members reach us at */
};

struct serve_node_config {
    const struct serve_config *config;         /* borrowed while running */
    const struct transport_identity *identity; /* borrowed while running */
    struct transport_admission admission;      /* its pointers borrowed too */
    const char *db_path;                       /* copied */
    const char *raft_dir;                      /* copied */
    struct serve_log *log;                     /* borrowed while running */
    /* quorum mode on a fresh Raft directory: bootstrap the configuration
     * (this node and its --peer list), unless joining. */
    bool bootstrap;
};

struct serve_node;

/* Starts the node thread and waits until it runs (database, transport,
 * replication or Raft open and listening). 0, or an error with its message
 * in error; nothing is left running then. */
int serve_node_start(const struct serve_node_config *config,
                     struct serve_node **out, char *error, size_t error_size);

/* Closes everything on the node thread (replication or Raft, the peers,
 * the writing handle), joins it and frees node. Posts already queued run
 * first; later ones are refused. */
void serve_node_stop(struct serve_node *node);

/* Runs fn(ctx) on the node thread. 0, or NODE_EUNAVAILABLE (stopping:
 * fn will not run), COMMON_ENOMEM. */
int serve_node_post(struct serve_node *node, serve_mail_fn fn, void *ctx);

/* A copy of the latest status snapshot (any thread). */
void serve_node_status(struct serve_node *node, struct serve_status *out);

/* The Raft id of a node id: its key's first 8 bytes (big-endian), top bit
 * cleared, 0 taken as 1: each node has one id, the same on every node. */
uint64_t serve_raft_id(const struct transport_node_id *id);

/* ---- node thread ---- */

enum serve_mode serve_node_mode(const struct serve_node *node);
/* The writing handle (quorum: node_quorum_db). */
struct engine_db *serve_node_db(struct serve_node *node);
/* quorum mode's member; NULL in other modes. */
struct node_quorum *serve_node_quorum(struct serve_node *node);
/* Something was committed or proposed: tick soon. */
void serve_node_kick(struct serve_node *node);
void serve_node_hold(struct serve_node *node);
void serve_node_release(struct serve_node *node);

#endif /* SINEW_NODE_SERVE_NODE_H */
