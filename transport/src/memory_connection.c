/* SPDX-License-Identifier: MIT
 *
 * memory_connection.c: connections of the in-memory network: dialing a
 * kept peer (with the TCP transport's identity check and backoff), sending
 * under the link's faults, delivering, and tearing down.
 *
 * Order on a connection: each direction remembers the latest due time of
 * its in-order messages (last_due); a new one is due no earlier, and equal
 * due times run in schedule order, so messages arrive as they were sent
 * however the delays were drawn. The connected notice of each end is the
 * first thing of the direction towards it, so nothing arrives before the
 * end was told connected(). A reordered message skips last_due (neither
 * waits nor holds others back) but still not before that notice.
 *
 * Callbacks: every function here that runs one (arrive, notice, dial) is
 * called by step with the event already off the queue, and finishes its
 * bookkeeping before the callback, which may close the endpoint, forget
 * the peer or reset the connection and so free what the event pointed to.
 */
#include <string.h>

#include "memory.h"

/* The event objects embedded in a connection: notice[2], writable[2]. */
#define CONNECTION_EVENTS 4

struct transport__memory_connection *
transport__memory_connection_find(struct transport__memory_endpoint *endpoint,
                                  const struct transport_node_id *peer,
                                  unsigned *side)
{
    struct transport__memory_list *node;

    for (node = endpoint->connections.next; node != &endpoint->connections;
         node = node->next) {
        struct transport__memory_connection *connection =
            TRANSPORT__MEMORY_CONTAINER_OF(
                node, struct transport__memory_connection, links[0]);
        unsigned s = 0;

        if (connection->ends[0] != endpoint) {
            connection = TRANSPORT__MEMORY_CONTAINER_OF(
                node, struct transport__memory_connection, links[1]);
            s = 1;
        }
        ASSERT(connection->open);
        ASSERT(connection->ends[s] == endpoint);
        if (transport_node_id_equal(&connection->ids[1 - s], peer)) {
            *side = s;
            return connection;
        }
    }
    return NULL;
}

/* delay_ms plus a uniform draw in [0, jitter_ms]. */
static uint64_t link_delay(struct transport_memory_network *network,
                           const struct transport_memory_link_faults *faults)
{
    uint64_t delay = faults->delay_ms;

    if (faults->jitter_ms > 0) {
        delay += transport__memory_below(network, faults->jitter_ms + 1u);
    }
    return delay;
}

/* The wait before the next dial after keep->failures failed ones. */
static uint64_t backoff_ms(struct transport_memory_network *network,
                           uint32_t failures)
{
    uint64_t ceiling = TRANSPORT_MEMORY_RECONNECT_MIN_MS;

    for (uint32_t i = 0;
         i < failures && ceiling < TRANSPORT_MEMORY_RECONNECT_MAX_MS; i++) {
        ceiling *= 2;
    }
    if (ceiling > TRANSPORT_MEMORY_RECONNECT_MAX_MS) {
        ceiling = TRANSPORT_MEMORY_RECONNECT_MAX_MS;
    }
    return ceiling / 2 + transport__memory_below(network, ceiling / 2 + 1);
}

void transport__memory_dial_later(struct transport_memory_network *network,
                                  struct transport__memory_keep *keep)
{
    if (keep->dial.state != TRANSPORT__MEMORY_IDLE) {
        return;
    }
    transport__memory_schedule(network, &keep->dial,
                               transport__memory_now(network) +
                                   backoff_ms(network, keep->failures));
}

/* A new open connection from dialer (side 0) to listener (side 1), both
 * ends told connected() after the handshake's delays; COMMON_ENOMEM. */
static int connection_open(struct transport__memory_endpoint *dialer,
                           struct transport__memory_endpoint *listener)
{
    struct transport_memory_network *network = dialer->network;
    struct transport__memory_connection *connection;
    struct transport__memory_endpoint *ends[2] = {dialer, listener};
    uint64_t now_ms = transport__memory_now(network);
    int rc;

    connection = common_calloc(1, sizeof(*connection));
    if (connection == NULL) {
        return COMMON_ENOMEM;
    }
    rc = transport__memory_slots_add(network, CONNECTION_EVENTS);
    if (rc != 0) {
        goto err_after_connection;
    }
    connection->network = network;
    connection->open = true;
    for (unsigned s = 0; s < 2; s++) {
        connection->ends[s] = ends[s];
        connection->ids[s] = ends[s]->self;
        transport__memory_list_append(&ends[s]->connections,
                                      &connection->links[s]);
        transport__memory_event_init(&connection->notice[s],
                                     TRANSPORT__MEMORY_CONNECTED, ends[s]);
        transport__memory_event_init(&connection->writable[s],
                                     TRANSPORT__MEMORY_WRITABLE, ends[s]);
        connection->notice[s].connection = connection;
        connection->notice[s].side = s;
        connection->writable[s].connection = connection;
        connection->writable[s].side = s;
    }
    transport__memory_list_append(&network->connections, &connection->all);
    /* The listener hears of it one delay after the dial, the dialer one
     * delay after that; each notice opens its direction (last_due). */
    connection->up_due[1] =
        now_ms +
        link_delay(network, transport__memory_faults(network, &dialer->self,
                                                     &listener->self));
    connection->up_due[0] =
        connection->up_due[1] +
        link_delay(network, transport__memory_faults(network, &listener->self,
                                                     &dialer->self));
    connection->last_due[0] = connection->up_due[1];
    connection->last_due[1] = connection->up_due[0];
    transport__memory_schedule(network, &connection->notice[1],
                               connection->up_due[1]);
    transport__memory_schedule(network, &connection->notice[0],
                               connection->up_due[0]);
    return 0;

err_after_connection:
    common_free(connection);
    return rc;
}

/* Whether a handshake between a and b could cross the network now. */
static bool handshake_can_pass(struct transport_memory_network *network,
                               const struct transport__memory_endpoint *a,
                               const struct transport__memory_endpoint *b)
{
    return !transport__memory_is_partitioned(network, &a->self, &b->self) &&
           !transport__memory_is_partitioned(network, &b->self, &a->self) &&
           !transport__memory_is_paused(network, &b->self);
}

void transport__memory_dial(struct transport__memory_keep *keep)
{
    struct transport__memory_endpoint *endpoint = keep->dial.endpoint;
    struct transport_memory_network *network = endpoint->network;
    struct transport__memory_endpoint *listener;
    struct transport_node_id peer = keep->peer;
    unsigned side;

    ASSERT(!endpoint->closing);
    if (transport__memory_connection_find(endpoint, &peer, &side) != NULL) {
        keep->failures = 0;
        return;
    }
    listener = transport__memory_listener(network, keep->address);
    if (listener != NULL && listener != endpoint &&
        handshake_can_pass(network, endpoint, listener) &&
        transport_node_id_equal(&listener->self, &peer) &&
        connection_open(endpoint, listener) == 0) {
        keep->failures = 0;
        return;
    }
    if (keep->failures < UINT32_MAX) {
        keep->failures++;
    }
    transport__memory_dial_later(network, keep);
    /* A listener with another identity, reached: the handshake proved the
     * wrong key, which TCP reports. The callback comes last: it may forget
     * the peer, which frees keep. */
    if (listener != NULL && handshake_can_pass(network, endpoint, listener) &&
        !transport_node_id_equal(&listener->self, &peer)) {
        endpoint->callbacks.disconnected(endpoint->callbacks.ctx, &peer,
                                         TRANSPORT_EAUTH);
    }
}

/* A new message event for side s's peer; NULL when out of memory. */
static struct transport__memory_message *
message_new(struct transport__memory_connection *connection, unsigned side,
            uint16_t type, const void *bytes, size_t size)
{
    struct transport__memory_message *message;

    message = common_malloc(sizeof(*message) + size);
    if (message == NULL) {
        return NULL;
    }
    if (transport__memory_slots_add(connection->network, 1) != 0) {
        common_free(message);
        return NULL;
    }
    transport__memory_event_init(&message->event, TRANSPORT__MEMORY_MESSAGE,
                                 connection->ends[1 - side]);
    message->event.connection = connection;
    message->event.side = 1 - side;
    message->type = type;
    message->counted = false;
    message->size = size;
    if (size > 0) {
        memcpy(message->bytes, bytes, size);
    }
    return message;
}

/* Schedules message, sent by side, under faults. */
static void message_schedule(struct transport__memory_connection *connection,
                             unsigned side,
                             struct transport__memory_message *message,
                             const struct transport_memory_link_faults *faults)
{
    struct transport_memory_network *network = connection->network;
    uint64_t due_ms =
        transport__memory_now(network) + link_delay(network, faults);

    if (transport__memory_chance(network, faults->reorder_probability)) {
        if (faults->reorder_window_ms > 0) {
            due_ms += transport__memory_below(
                network, (uint64_t)faults->reorder_window_ms + 1);
        }
        if (due_ms < connection->up_due[1 - side]) {
            due_ms = connection->up_due[1 - side];
        }
    } else {
        if (due_ms < connection->last_due[side]) {
            due_ms = connection->last_due[side];
        }
        connection->last_due[side] = due_ms;
    }
    transport__memory_schedule(network, &message->event, due_ms);
}

int transport__memory_connection_send(
    struct transport__memory_connection *connection, unsigned side,
    uint16_t type, const void *bytes, size_t size)
{
    struct transport_memory_network *network = connection->network;
    const struct transport_memory_link_faults *faults;
    struct transport__memory_message *original;
    struct transport__memory_message *copy = NULL;
    size_t queued = connection->queued_bytes[side];
    size_t max = connection->ends[side]->limits.send_queue_max_bytes;

    ASSERT(connection->open);
    if (queued > 0 && (size > max || queued > max - size)) {
        connection->blocked[side] = true;
        return TRANSPORT_EFULL;
    }
    faults = transport__memory_faults(network, &connection->ids[side],
                                      &connection->ids[1 - side]);
    if (transport__memory_chance(network, faults->drop_probability)) {
        return 0;
    }
    original = message_new(connection, side, type, bytes, size);
    if (original == NULL) {
        return COMMON_ENOMEM;
    }
    if (transport__memory_chance(network, faults->duplicate_probability)) {
        copy = message_new(connection, side, type, bytes, size);
        if (copy == NULL) {
            transport__memory_slots_remove(network, 1);
            common_free(original);
            return COMMON_ENOMEM;
        }
    }
    original->counted = true;
    connection->queued_bytes[side] += size;
    message_schedule(connection, side, original, faults);
    if (copy != NULL) {
        message_schedule(connection, side, copy, faults);
    }
    return 0;
}

void transport__memory_connection_maybe_free(
    struct transport__memory_connection *connection)
{
    if (connection->open ||
        connection->notice[0].state != TRANSPORT__MEMORY_IDLE ||
        connection->notice[1].state != TRANSPORT__MEMORY_IDLE) {
        return;
    }
    ASSERT(connection->writable[0].state == TRANSPORT__MEMORY_IDLE);
    ASSERT(connection->writable[1].state == TRANSPORT__MEMORY_IDLE);
    transport__memory_list_remove(&connection->all);
    transport__memory_slots_remove(connection->network, CONNECTION_EVENTS);
    common_free(connection);
}

void transport__memory_connection_teardown(
    struct transport__memory_connection *connection, int reason0, int reason1)
{
    struct transport_memory_network *network = connection->network;
    int reasons[2] = {reason0, reason1};

    ASSERT(connection->open);
    transport__memory_discard_connection(network, connection);
    connection->open = false;
    for (unsigned s = 0; s < 2; s++) {
        struct transport__memory_endpoint *end = connection->ends[s];
        struct transport__memory_event *notice = &connection->notice[s];

        transport__memory_list_remove(&connection->links[s]);
        connection->ends[s] = NULL;
        if (end->closing) {
            continue;
        }
        if (connection->up[s]) {
            notice->kind = TRANSPORT__MEMORY_DISCONNECTED;
            notice->reason = reasons[s];
            transport__memory_schedule(network, notice,
                                       transport__memory_now(network));
        }
        struct transport__memory_keep *keep =
            transport__memory_keep_find(end, &connection->ids[1 - s]);
        if (keep != NULL) {
            keep->failures = 0;
            transport__memory_dial_later(network, keep);
        }
    }
    transport__memory_connection_maybe_free(connection);
}

/* Side `side` of connection got bytes off its sender's queue: writable()
 * is owed once a refused sender's queue is below half. */
static void queue_drained(struct transport__memory_connection *connection,
                          unsigned side, size_t size)
{
    struct transport__memory_endpoint *sender = connection->ends[side];

    ASSERT(connection->queued_bytes[side] >= size);
    connection->queued_bytes[side] -= size;
    if (connection->blocked[side] &&
        connection->queued_bytes[side] <
            sender->limits.send_queue_max_bytes / 2) {
        connection->blocked[side] = false;
        if (connection->writable[side].state == TRANSPORT__MEMORY_IDLE) {
            transport__memory_schedule(
                connection->network, &connection->writable[side],
                transport__memory_now(connection->network));
        }
    }
}

void transport__memory_arrive(struct transport__memory_message *message)
{
    struct transport__memory_event *event = &message->event;
    struct transport__memory_connection *connection = event->connection;
    struct transport_memory_network *network = connection->network;
    struct transport__memory_endpoint *receiver = event->endpoint;
    unsigned s = event->side;
    struct transport_node_id peer = connection->ids[1 - s];

    ASSERT(connection->open);
    ASSERT(connection->up[s]);
    if (message->counted) {
        queue_drained(connection, 1 - s, message->size);
    }
    if (transport__memory_is_partitioned(network, &peer, &receiver->self)) {
        goto done;
    }
    if (message->size > receiver->limits.max_message_bytes) {
        if (s == 0) {
            transport__memory_connection_teardown(connection, TRANSPORT_EPROTO,
                                                  TRANSPORT_EIO);
        } else {
            transport__memory_connection_teardown(connection, TRANSPORT_EIO,
                                                  TRANSPORT_EPROTO);
        }
        goto done;
    }
    receiver->callbacks.received(receiver->callbacks.ctx, &peer, message->type,
                                 message->bytes, message->size);
done:
    transport__memory_slots_remove(network, 1);
    common_free(message);
}

void transport__memory_notice(struct transport__memory_event *event)
{
    struct transport__memory_connection *connection = event->connection;
    struct transport__memory_endpoint *endpoint = event->endpoint;
    struct transport_node_id peer = connection->ids[1 - event->side];
    int reason = event->reason;

    switch (event->kind) {
    case TRANSPORT__MEMORY_CONNECTED:
        ASSERT(connection->open);
        connection->up[event->side] = true;
        endpoint->callbacks.connected(endpoint->callbacks.ctx, &peer);
        break;
    case TRANSPORT__MEMORY_DISCONNECTED:
        /* The connection's last notice frees it: before the callback. */
        transport__memory_connection_maybe_free(connection);
        endpoint->callbacks.disconnected(endpoint->callbacks.ctx, &peer,
                                         reason);
        break;
    case TRANSPORT__MEMORY_WRITABLE:
        ASSERT(connection->open);
        if (endpoint->callbacks.writable != NULL) {
            endpoint->callbacks.writable(endpoint->callbacks.ctx, &peer);
        }
        break;
    default:
        ASSERT(false);
    }
}
