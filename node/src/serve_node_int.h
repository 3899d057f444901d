/* SPDX-License-Identifier: MIT
 *
 * serve_node_int.h: the node thread's state, shared by serve_node*.c.
 */
#ifndef SINEW_NODE_SERVE_NODE_INT_H
#define SINEW_NODE_SERVE_NODE_INT_H

#include "serve_node.h"

#include "replication.h"

#define SERVE_STATUS_INTERVAL_MS 1000u

/* A transport event queued while the node is held. */
enum serve_event_kind {
    SERVE_EVENT_RECEIVED,
    SERVE_EVENT_CONNECTED,
    SERVE_EVENT_DISCONNECTED,
    SERVE_EVENT_WRITABLE,
};

struct serve_event {
    struct serve_event *next;
    enum serve_event_kind kind;
    struct transport_node_id peer;
    uint16_t type;
    size_t size;
    uint8_t bytes[]; /* size bytes: a received message's */
};

struct serve_node {
    const struct serve_config *config;
    const struct transport_identity *identity;
    struct transport_admission admission; /* pointers borrowed */
    char db_path[4096];
    char raft_dir[4096];
    char listen_address[256]; /* the peer address bound */
    bool bootstrap;
    struct serve_log *log_owner;
    struct common_log log, transport_log, replication_log, consensus_log;

    uv_loop_t loop;
    uv_thread_t thread;
    struct serve_mailbox box;
    uv_timer_t tick_timer, status_timer;
    struct transport *transport;
    struct replication *replication; /* crdt, leader */
    struct node_quorum *quorum;      /* quorum */
    struct engine_db *db;            /* single, crdt, leader */
    bool stopping;

    unsigned holds;
    struct serve_event *held_head, *held_tail;

    /* start handshake with the thread that called serve_node_start() */
    uv_mutex_t start_lock;
    uv_cond_t start_cond;
    bool start_done;
    int start_rc;
    char start_error[512];

    uv_mutex_t status_lock;
    struct serve_status status;
};

/* Clocks and randomness handed to the modules. */
uint64_t serve_node__monotonic_ms(void *ctx);
uint64_t serve_node__wall_ms(void *ctx);
uint64_t serve_node__random(void *ctx);

/* The transport's callbacks (ctx: the node). */
void serve_node__on_received(void *ctx, const struct transport_node_id *peer,
                             uint16_t type, const uint8_t *bytes, size_t size);
void serve_node__on_connected(void *ctx, const struct transport_node_id *peer);
void serve_node__on_disconnected(void *ctx,
                                 const struct transport_node_id *peer,
                                 int reason);
void serve_node__on_writable(void *ctx, const struct transport_node_id *peer);

/* Where other members reach this one: --advertise (default --listen), or
 * with --listen HOST:0 the address bound. */
const char *serve_node__advertised(const struct serve_node *node);

/* Refreshes node->status (node thread). */
void serve_node__refresh_status(struct serve_node *node);

#endif /* SINEW_NODE_SERVE_NODE_INT_H */
