/* SPDX-License-Identifier: MIT
 *
 * serve_node.c: the node thread: its loop, the peer transport, the mode's
 * replication or Raft member and the writing handle (serve_node.h).
 */
#include "serve_node_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "node.h"
#include "replication.h"

uint64_t serve_raft_id(const struct transport_node_id *id)
{
    uint64_t value = 0;

    for (int i = 0; i < 8; i++) {
        value = value << 8 | id->key[i];
    }
    value &= ~(UINT64_C(1) << 63);
    return value != 0 ? value : 1;
}

uint64_t serve_node__monotonic_ms(void *ctx)
{
    (void)ctx;
    return uv_hrtime() / 1000000u;
}

/* The HLC is built on the wall clock (hlc.h): replication's clock. */
uint64_t serve_node__wall_ms(void *ctx)
{
    struct timespec now;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

uint64_t serve_node__random(void *ctx)
{
    uint64_t value;

    (void)ctx;
    uv_random(NULL, NULL, &value, sizeof value, 0, NULL);
    return value;
}

/* ---- ticking ---- */

static void tick_cb(uv_timer_t *timer);

void serve_node_kick(struct serve_node *node)
{
    if (!node->stopping) {
        uv_timer_start(&node->tick_timer, tick_cb, 0, 0);
    }
}

static void tick_cb(uv_timer_t *timer)
{
    struct serve_node *node = timer->data;
    uint64_t next_ms = 0, now_ms;
    int rc = 0;

    if (node->stopping || node->holds > 0) {
        return; /* serve_node_release() kicks */
    }
    if (node->quorum != NULL) {
        now_ms = serve_node__monotonic_ms(NULL);
        rc = node_quorum_tick(node->quorum, &next_ms);
    } else if (node->replication != NULL) {
        now_ms = serve_node__wall_ms(NULL);
        rc = replication_tick(node->replication, &next_ms);
    } else {
        return;
    }
    if (rc != 0) {
        LOGF(&node->log, COMMON_LOG_ERROR, "tick failed error=\"%s\"",
             node_strerror(rc));
        next_ms = now_ms + 100;
    }
    uv_timer_start(&node->tick_timer, tick_cb,
                   next_ms > now_ms ? next_ms - now_ms : 0, 0);
}

/* ---- the transport's events ---- */

static void deliver(struct serve_node *node, enum serve_event_kind kind,
                    const struct transport_node_id *peer, uint16_t type,
                    const uint8_t *bytes, size_t size)
{
    struct consensus *c =
        node->quorum != NULL ? node_quorum_consensus(node->quorum) : NULL;
    struct replication *r = node->replication;

    switch (kind) {
    case SERVE_EVENT_RECEIVED:
        if (r != NULL && type >= REPLICATION_MESSAGE_FIRST &&
            type <= REPLICATION_MESSAGE_LAST) {
            replication_received(r, peer, type, bytes, size);
        } else if (c != NULL) {
            consensus_received(c, peer, type, bytes, size);
        }
        break;
    case SERVE_EVENT_CONNECTED:
        if (r != NULL) {
            replication_connected(r, peer);
        } else if (c != NULL) {
            consensus_connected(c, peer);
        }
        break;
    case SERVE_EVENT_DISCONNECTED:
        if (r != NULL) {
            replication_disconnected(r, peer);
        } else if (c != NULL) {
            consensus_disconnected(c, peer);
        }
        break;
    case SERVE_EVENT_WRITABLE:
        if (r != NULL) {
            replication_writable(r, peer);
        } else if (c != NULL) {
            consensus_writable(c, peer);
        }
        break;
    }
    serve_node_kick(node);
}

/* Queues an event while held. Out of memory drops it: replication's
 * protocol tolerates lost messages (a later summary asks again), and a
 * lost connect or disconnect is logged. */
static void hold_event(struct serve_node *node, enum serve_event_kind kind,
                       const struct transport_node_id *peer, uint16_t type,
                       const uint8_t *bytes, size_t size)
{
    struct serve_event *event = common_malloc(sizeof *event + size);

    if (event == NULL) {
        LOGF(&node->log, COMMON_LOG_ERROR,
             "peer event dropped while a transaction holds the database "
             "error=\"out of memory\"");
        return;
    }
    *event = (struct serve_event){
        .kind = kind, .peer = *peer, .type = type, .size = size};
    if (size > 0) {
        memcpy(event->bytes, bytes, size);
    }
    if (node->held_tail != NULL) {
        node->held_tail->next = event;
    } else {
        node->held_head = event;
    }
    node->held_tail = event;
}

static void on_event(struct serve_node *node, enum serve_event_kind kind,
                     const struct transport_node_id *peer, uint16_t type,
                     const uint8_t *bytes, size_t size)
{
    if (node->stopping) {
        return;
    }
    if (node->holds > 0) {
        hold_event(node, kind, peer, type, bytes, size);
        return;
    }
    deliver(node, kind, peer, type, bytes, size);
}

void serve_node__on_received(void *ctx, const struct transport_node_id *peer,
                             uint16_t type, const uint8_t *bytes, size_t size)
{
    on_event(ctx, SERVE_EVENT_RECEIVED, peer, type, bytes, size);
}

void serve_node__on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct serve_node *node = ctx;
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];

    transport_node_id_format(peer, hex);
    LOGF(&node->log, COMMON_LOG_INFO, "peer connected peer=%.16s", hex);
    on_event(node, SERVE_EVENT_CONNECTED, peer, 0, NULL, 0);
}

void serve_node__on_disconnected(void *ctx,
                                 const struct transport_node_id *peer,
                                 int reason)
{
    struct serve_node *node = ctx;
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];

    transport_node_id_format(peer, hex);
    LOGF(&node->log,
         reason == TRANSPORT_EAUTH ? COMMON_LOG_ERROR : COMMON_LOG_INFO,
         "peer disconnected peer=%.16s reason=\"%s\"", hex,
         reason == 0 ? "closed" : node_strerror(reason));
    on_event(node, SERVE_EVENT_DISCONNECTED, peer, 0, NULL, 0);
}

void serve_node__on_writable(void *ctx, const struct transport_node_id *peer)
{
    on_event(ctx, SERVE_EVENT_WRITABLE, peer, 0, NULL, 0);
}

void serve_node_hold(struct serve_node *node)
{
    node->holds++;
}

void serve_node_release(struct serve_node *node)
{
    ASSERT(node->holds > 0);
    if (--node->holds > 0) {
        return;
    }
    while (node->held_head != NULL && node->holds == 0) {
        struct serve_event *event = node->held_head;
        node->held_head = event->next;
        if (node->held_head == NULL) {
            node->held_tail = NULL;
        }
        if (!node->stopping) {
            deliver(node, event->kind, &event->peer, event->type, event->bytes,
                    event->size);
        }
        common_free(event);
    }
    serve_node_kick(node);
}

/* ---- accessors ---- */

enum serve_mode serve_node_mode(const struct serve_node *node)
{
    return node->config->mode;
}

struct engine_db *serve_node_db(struct serve_node *node)
{
    return node->quorum != NULL ? node_quorum_db(node->quorum) : node->db;
}

struct node_quorum *serve_node_quorum(struct serve_node *node)
{
    return node->quorum;
}

int serve_node_post(struct serve_node *node, serve_mail_fn fn, void *ctx)
{
    return serve_mailbox_post(&node->box, fn, ctx);
}

void serve_node_status(struct serve_node *node, struct serve_status *out)
{
    uv_mutex_lock(&node->status_lock);
    *out = node->status;
    uv_mutex_unlock(&node->status_lock);
}
