/* SPDX-License-Identifier: MIT
 *
 * memory_endpoint.c: one endpoint of the in-memory network, the struct
 * transport the caller holds: the ops (listen, connect, forget, send,
 * close) and the endpoint's lifetime.
 *
 * No op runs a callback: whatever the caller should hear about becomes an
 * event that a later step runs, as transport.h promises. close() cuts the
 * endpoint off at once (its connections end, its address and identity are
 * free for a restarted node) and frees it at the next step, which then
 * calls done.
 */
#include <string.h>

#include "memory.h"

static struct transport__memory_endpoint *endpoint_of(struct transport *t)
{
    ASSERT(t != NULL);
    ASSERT(t->impl != NULL);
    return t->impl;
}

/* Whether address is a name an endpoint may listen on or dial. */
static bool address_is_valid(const char *address)
{
    size_t length = 0;

    while (length < TRANSPORT_MEMORY_ADDRESS_SIZE_MAX &&
           address[length] != '\0') {
        length++;
    }
    return length > 0 && length < TRANSPORT_MEMORY_ADDRESS_SIZE_MAX;
}

struct transport__memory_endpoint *
transport__memory_listener(struct transport_memory_network *network,
                           const char *address)
{
    struct transport__memory_list *node;

    for (node = network->endpoints.next; node != &network->endpoints;
         node = node->next) {
        struct transport__memory_endpoint *endpoint =
            TRANSPORT__MEMORY_CONTAINER_OF(
                node, struct transport__memory_endpoint, link);

        if (!endpoint->closing && strcmp(endpoint->address, address) == 0) {
            return endpoint;
        }
    }
    return NULL;
}

static int memory_listen(struct transport *t, const char *address)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);

    ASSERT(address != NULL);
    if (endpoint->closing) {
        return TRANSPORT_ECLOSED;
    }
    if (!address_is_valid(address) || endpoint->address[0] != '\0' ||
        transport__memory_listener(endpoint->network, address) != NULL) {
        return TRANSPORT_EADDRESS;
    }
    strcpy(endpoint->address, address);
    return 0;
}

static int memory_listen_address(struct transport *t, char *out, size_t size)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);
    size_t length = strlen(endpoint->address);

    ASSERT(out != NULL);
    if (endpoint->closing) {
        return TRANSPORT_ECLOSED;
    }
    if (length == 0) {
        return TRANSPORT_EADDRESS;
    }
    if (length >= size) {
        return COMMON_ETOOBIG;
    }
    memcpy(out, endpoint->address, length + 1);
    return 0;
}

struct transport__memory_keep *
transport__memory_keep_find(struct transport__memory_endpoint *endpoint,
                            const struct transport_node_id *peer)
{
    struct transport__memory_list *node;

    for (node = endpoint->keeps.next; node != &endpoint->keeps;
         node = node->next) {
        struct transport__memory_keep *keep = TRANSPORT__MEMORY_CONTAINER_OF(
            node, struct transport__memory_keep, link);

        if (transport_node_id_equal(&keep->peer, peer)) {
            return keep;
        }
    }
    return NULL;
}

static void keep_free(struct transport__memory_endpoint *endpoint,
                      struct transport__memory_keep *keep)
{
    transport__memory_unschedule(endpoint->network, &keep->dial);
    transport__memory_list_remove(&keep->link);
    transport__memory_slots_remove(endpoint->network, 1);
    common_free(keep);
}

/* A connect() to a peer already kept only changes the address: a dial
 * already planned keeps its time. */
static int memory_connect(struct transport *t,
                          const struct transport_node_id *peer,
                          const char *address)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);
    struct transport_memory_network *network = endpoint->network;
    struct transport__memory_keep *keep;
    int rc;

    ASSERT(peer != NULL);
    ASSERT(address != NULL);
    if (endpoint->closing) {
        return TRANSPORT_ECLOSED;
    }
    if (!address_is_valid(address) ||
        transport_node_id_equal(peer, &endpoint->self)) {
        return TRANSPORT_EADDRESS;
    }
    keep = transport__memory_keep_find(endpoint, peer);
    if (keep != NULL) {
        strcpy(keep->address, address);
        return 0;
    }
    keep = common_calloc(1, sizeof(*keep));
    if (keep == NULL) {
        return COMMON_ENOMEM;
    }
    rc = transport__memory_slots_add(network, 1);
    if (rc != 0) {
        goto err_after_keep;
    }
    keep->peer = *peer;
    strcpy(keep->address, address);
    transport__memory_event_init(&keep->dial, TRANSPORT__MEMORY_DIAL, endpoint);
    keep->dial.keep = keep;
    transport__memory_list_append(&endpoint->keeps, &keep->link);
    transport__memory_schedule(network, &keep->dial,
                               transport__memory_now(network));
    return 0;

err_after_keep:
    common_free(keep);
    return rc;
}

static void memory_forget(struct transport *t,
                          const struct transport_node_id *peer)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);
    struct transport__memory_keep *keep;
    struct transport__memory_connection *connection;
    unsigned side;

    ASSERT(peer != NULL);
    if (endpoint->closing) {
        return;
    }
    keep = transport__memory_keep_find(endpoint, peer);
    if (keep != NULL) {
        keep_free(endpoint, keep);
    }
    connection = transport__memory_connection_find(endpoint, peer, &side);
    if (connection != NULL) {
        transport__memory_connection_teardown(connection, 0, 0);
    }
}

static int memory_send(struct transport *t,
                       const struct transport_node_id *peer, uint16_t type,
                       const void *bytes, size_t size)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);
    struct transport__memory_connection *connection;
    unsigned side;

    ASSERT(peer != NULL);
    ASSERT(bytes != NULL || size == 0);
    if (endpoint->closing) {
        return TRANSPORT_ECLOSED;
    }
    if (size > endpoint->limits.max_message_bytes) {
        return TRANSPORT_ETOOBIG;
    }
    connection = transport__memory_connection_find(endpoint, peer, &side);
    if (connection == NULL || !connection->up[side]) {
        return TRANSPORT_ENOPEER;
    }
    return transport__memory_connection_send(connection, side, type, bytes,
                                             size);
}

static void memory_close(struct transport *t, void (*done)(void *ctx),
                         void *ctx)
{
    struct transport__memory_endpoint *endpoint = endpoint_of(t);
    struct transport_memory_network *network = endpoint->network;

    ASSERT(!endpoint->closing);
    endpoint->closing = true;
    endpoint->done = done;
    endpoint->done_ctx = ctx;
    endpoint->address[0] = '\0';
    while (!transport__memory_list_is_empty(&endpoint->keeps)) {
        keep_free(endpoint, TRANSPORT__MEMORY_CONTAINER_OF(
                                endpoint->keeps.next,
                                struct transport__memory_keep, link));
    }
    while (!transport__memory_list_is_empty(&endpoint->connections)) {
        struct transport__memory_list *node = endpoint->connections.next;
        struct transport__memory_connection *connection;

        /* The node is links[0] or links[1] of its connection. */
        connection = TRANSPORT__MEMORY_CONTAINER_OF(
            node, struct transport__memory_connection, links[0]);
        if (connection->ends[0] != endpoint) {
            connection = TRANSPORT__MEMORY_CONTAINER_OF(
                node, struct transport__memory_connection, links[1]);
        }
        transport__memory_connection_teardown(connection, 0, 0);
    }
    transport__memory_discard_endpoint(network, endpoint);
    transport__memory_schedule(network, &endpoint->closed,
                               transport__memory_now(network));
}

static const struct transport_ops memory_ops = {
    .listen = memory_listen,
    .listen_address = memory_listen_address,
    .connect = memory_connect,
    .forget = memory_forget,
    .send = memory_send,
    .close = memory_close,
};

struct transport__memory_endpoint *
transport__memory_endpoint_find(struct transport_memory_network *network,
                                const struct transport_node_id *id)
{
    struct transport__memory_list *node;

    for (node = network->endpoints.next; node != &network->endpoints;
         node = node->next) {
        struct transport__memory_endpoint *endpoint =
            TRANSPORT__MEMORY_CONTAINER_OF(
                node, struct transport__memory_endpoint, link);

        if (!endpoint->closing &&
            transport_node_id_equal(&endpoint->self, id)) {
            return endpoint;
        }
    }
    return NULL;
}

static void limits_fill(struct transport_limits *limits,
                        const struct transport_limits *given)
{
    limits->max_message_bytes = TRANSPORT_MESSAGE_MAX_BYTES_DEFAULT;
    limits->send_queue_max_bytes = TRANSPORT_SEND_QUEUE_MAX_BYTES_DEFAULT;
    if (given != NULL && given->max_message_bytes != 0) {
        limits->max_message_bytes = given->max_message_bytes;
    }
    if (given != NULL && given->send_queue_max_bytes != 0) {
        limits->send_queue_max_bytes = given->send_queue_max_bytes;
    }
}

int transport_memory_new(struct transport_memory_network *network,
                         const struct transport_node_id *self,
                         const struct transport_callbacks *callbacks,
                         const struct transport_limits *limits,
                         struct transport **out)
{
    struct transport__memory_endpoint *endpoint;
    int rc;

    ASSERT(network != NULL);
    ASSERT(self != NULL);
    ASSERT(callbacks != NULL);
    ASSERT(callbacks->received != NULL);
    ASSERT(callbacks->connected != NULL);
    ASSERT(callbacks->disconnected != NULL);
    ASSERT(out != NULL);
    if (transport__memory_endpoint_find(network, self) != NULL) {
        return TRANSPORT_EADDRESS;
    }
    endpoint = common_calloc(1, sizeof(*endpoint));
    if (endpoint == NULL) {
        return COMMON_ENOMEM;
    }
    rc = transport__memory_slots_add(network, 1);
    if (rc != 0) {
        goto err_after_endpoint;
    }
    endpoint->transport.ops = &memory_ops;
    endpoint->transport.impl = endpoint;
    endpoint->network = network;
    endpoint->self = *self;
    endpoint->callbacks = *callbacks;
    limits_fill(&endpoint->limits, limits);
    transport__memory_list_init(&endpoint->keeps);
    transport__memory_list_init(&endpoint->connections);
    transport__memory_event_init(&endpoint->closed, TRANSPORT__MEMORY_CLOSED,
                                 endpoint);
    transport__memory_list_append(&network->endpoints, &endpoint->link);
    *out = &endpoint->transport;
    return 0;

err_after_endpoint:
    common_free(endpoint);
    return rc;
}

void transport__memory_endpoint_free(struct transport__memory_endpoint *ep)
{
    struct transport_memory_network *network = ep->network;

    /* Only from network_free, or once closed: no connection is left. */
    ASSERT(transport__memory_list_is_empty(&ep->connections));
    while (!transport__memory_list_is_empty(&ep->keeps)) {
        keep_free(ep, TRANSPORT__MEMORY_CONTAINER_OF(
                          ep->keeps.next, struct transport__memory_keep, link));
    }
    transport__memory_unschedule(network, &ep->closed);
    transport__memory_list_remove(&ep->link);
    transport__memory_slots_remove(network, 1);
    common_free(ep);
}

void transport__memory_endpoint_closed(struct transport__memory_endpoint *ep)
{
    void (*done)(void *ctx) = ep->done;
    void *ctx = ep->done_ctx;

    ASSERT(ep->closing);
    transport__memory_endpoint_free(ep);
    if (done != NULL) {
        done(ctx);
    }
}
