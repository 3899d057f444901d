/* SPDX-License-Identifier: MIT
 *
 * tcp.c: the TCP transport's ops (transport.h, "TCP on libuv") and its
 * lifetime. It owns the listener, the peer table and every connection
 * (tcp.h); the work of one socket is in tcp_conn.c, dialing and the
 * duplicate rule in tcp_peer.c.
 *
 * Lifetime: every uv handle the transport opens is counted, and each close
 * callback uncounts it. close() closes them all and, when the count reaches
 * zero, frees the transport and calls done. The anchor timer is always
 * open, so done always comes from the loop, never from inside close().
 */
#include "tcp.h"

#include <sodium.h>
#include <string.h>

#define TCP_RECONNECT_MIN_MS_DEFAULT 100
#define TCP_RECONNECT_MAX_MS_DEFAULT 10000
#define TCP_IDLE_TIMEOUT_MS_DEFAULT 15000
#define TCP_HANDSHAKE_TIMEOUT_MS_DEFAULT 5000
#define TCP_COMPRESS_MIN_BYTES_DEFAULT 4096

static const struct transport_ops tcp_ops;

static struct transport__tcp *tcp_of(struct transport *transport)
{
    ASSERT(transport != NULL);
    ASSERT(transport->ops == &tcp_ops);
    return transport->impl;
}

void transport__tcp_handle_opened(struct transport__tcp *tcp)
{
    tcp->handles_open++;
}

void transport__tcp_handle_closed(struct transport__tcp *tcp)
{
    void (*done)(void *ctx);
    void *ctx;

    ASSERT(tcp->handles_open > 0);
    tcp->handles_open--;
    if (tcp->handles_open > 0) {
        return;
    }
    /* The anchor keeps the count above zero until close() closes it. */
    ASSERT(tcp->is_closing);
    ASSERT(tcp->conns == NULL);
    ASSERT(tcp->peers == NULL);
    done = tcp->done;
    ctx = tcp->done_ctx;
    common_buf_close(&tcp->reply);
    common_free(tcp->read_buffer);
    common_free(tcp);
    if (done != NULL) {
        done(ctx);
    }
}

uint64_t transport__tcp_random(struct transport__tcp *tcp)
{
    if (tcp->config.random.next != NULL) {
        return tcp->config.random.next(tcp->config.random.ctx);
    }
    return ((uint64_t)randombytes_random() << 32) | randombytes_random();
}

static void config_fill_defaults(struct transport_tcp_config *config)
{
    if (config->limits.max_message_bytes == 0) {
        config->limits.max_message_bytes = TRANSPORT_MESSAGE_MAX_BYTES_DEFAULT;
    }
    if (config->limits.send_queue_max_bytes == 0) {
        config->limits.send_queue_max_bytes =
            TRANSPORT_SEND_QUEUE_MAX_BYTES_DEFAULT;
    }
    if (config->reconnect_min_ms == 0) {
        config->reconnect_min_ms = TCP_RECONNECT_MIN_MS_DEFAULT;
    }
    if (config->reconnect_max_ms == 0) {
        config->reconnect_max_ms = TCP_RECONNECT_MAX_MS_DEFAULT;
    }
    if (config->reconnect_max_ms < config->reconnect_min_ms) {
        config->reconnect_max_ms = config->reconnect_min_ms;
    }
    if (config->idle_timeout_ms == 0) {
        config->idle_timeout_ms = TCP_IDLE_TIMEOUT_MS_DEFAULT;
    }
    if (config->idle_timeout_ms < 3) {
        config->idle_timeout_ms = 3;
    }
    if (config->handshake_timeout_ms == 0) {
        config->handshake_timeout_ms = TCP_HANDSHAKE_TIMEOUT_MS_DEFAULT;
    }
    if (config->compress_min_bytes == 0) {
        config->compress_min_bytes = TCP_COMPRESS_MIN_BYTES_DEFAULT;
    }
}

int transport__tcp_new(struct uv_loop_s *loop,
                       const struct transport_tcp_config *config,
                       const struct transport_callbacks *callbacks,
                       bool plaintext, struct transport **out)
{
    struct transport__tcp *tcp;

    ASSERT(loop != NULL);
    ASSERT(config != NULL);
    ASSERT(config->identity != NULL);
    ASSERT(callbacks != NULL);
    ASSERT(out != NULL);
    if (config->admission.authorized_count == 0 &&
        config->admission.cluster_secret == NULL) {
        return TRANSPORT_EAUTH;
    }
    if (config->limits.max_message_bytes > TRANSPORT_MESSAGE_MAX_BYTES_LIMIT) {
        return TRANSPORT_ETOOBIG;
    }
    if (sodium_init() < 0) {
        return TRANSPORT_EIO;
    }
    common_sigpipe_ignore_default();
    tcp = common_calloc(1, sizeof(*tcp));
    if (tcp == NULL) {
        return COMMON_ENOMEM;
    }
    tcp->read_buffer = common_malloc(TRANSPORT__TCP_READ_BUFFER_BYTES);
    if (tcp->read_buffer == NULL) {
        goto err_after_tcp;
    }
    tcp->transport.ops = &tcp_ops;
    tcp->transport.impl = tcp;
    tcp->loop = loop;
    tcp->config = *config;
    config_fill_defaults(&tcp->config);
    tcp->callbacks = *callbacks;
    tcp->plaintext = plaintext;
    common_buf_init(&tcp->reply, SIZE_MAX);
    uv_timer_init(loop, &tcp->anchor);
    tcp->anchor.data = tcp;
    transport__tcp_handle_opened(tcp);
    *out = &tcp->transport;
    return 0;

err_after_tcp:
    common_free(tcp);
    return COMMON_ENOMEM;
}

int transport_tcp_new(struct uv_loop_s *loop,
                      const struct transport_tcp_config *config,
                      const struct transport_callbacks *callbacks,
                      struct transport **out)
{
    return transport__tcp_new(loop, config, callbacks, false, out);
}

static void listener_closed_cb(uv_handle_t *handle)
{
    struct transport__tcp *tcp = handle->data;

    transport__tcp_handle_closed(tcp);
}

static void listener_connection_cb(uv_stream_t *server, int status)
{
    struct transport__tcp *tcp = server->data;
    int rc;

    if (tcp->is_closing) {
        return;
    }
    if (status < 0) {
        LOGF(tcp->config.log, COMMON_LOG_WARN, "accept failed reason=%s",
             uv_strerror(status));
        return;
    }
    rc = transport__tcp_conn_accept(tcp);
    if (rc != 0) {
        LOGF(tcp->config.log, COMMON_LOG_WARN, "accept failed reason=%s",
             transport_strerror(rc));
    }
}

static int tcp_listen(struct transport *transport, const char *address)
{
    struct transport__tcp *tcp = tcp_of(transport);
    struct sockaddr_storage bind_address;
    int rc;

    ASSERT(address != NULL);
    if (tcp->is_closing) {
        return TRANSPORT_ECLOSED;
    }
    if (tcp->is_listening) {
        return UV_EALREADY;
    }
    rc = transport__tcp_address_parse(address, &bind_address);
    if (rc != 0) {
        return rc;
    }
    rc = uv_tcp_init(tcp->loop, &tcp->listener);
    if (rc != 0) {
        return rc;
    }
    tcp->listener.data = tcp;
    transport__tcp_handle_opened(tcp);
    tcp->is_listening = true;
    rc = uv_tcp_bind(&tcp->listener, (const struct sockaddr *)&bind_address, 0);
    if (rc != 0) {
        goto err_after_init;
    }
    rc = uv_listen((uv_stream_t *)&tcp->listener, TRANSPORT__TCP_BACKLOG,
                   listener_connection_cb);
    if (rc != 0) {
        goto err_after_init;
    }
    return 0;

err_after_init:
    /* The handle stays is_listening (closing) so a second listen() cannot
     * reuse it before its close callback; the transport listens once. */
    uv_close((uv_handle_t *)&tcp->listener, listener_closed_cb);
    return rc;
}

static int tcp_listen_address(struct transport *transport, char *out,
                              size_t size)
{
    struct transport__tcp *tcp = tcp_of(transport);
    char text[TRANSPORT__TCP_ADDRESS_TEXT_SIZE];
    struct sockaddr_storage address;
    int length = sizeof(address);
    int rc;

    ASSERT(out != NULL);
    if (!tcp->is_listening || uv_is_closing((uv_handle_t *)&tcp->listener)) {
        return TRANSPORT_EADDRESS;
    }
    rc = uv_tcp_getsockname(&tcp->listener, (struct sockaddr *)&address,
                            &length);
    if (rc != 0) {
        return rc;
    }
    transport__tcp_address_format((const struct sockaddr *)&address, text,
                                  sizeof(text));
    if (strlen(text) >= size) {
        return COMMON_ETOOBIG;
    }
    memcpy(out, text, strlen(text) + 1);
    return 0;
}

static int tcp_connect(struct transport *transport,
                       const struct transport_node_id *id, const char *address)
{
    struct transport__tcp *tcp = tcp_of(transport);
    struct transport__tcp_peer *peer;
    struct sockaddr_storage dial_address;
    int rc;

    ASSERT(id != NULL);
    ASSERT(address != NULL);
    if (tcp->is_closing) {
        return TRANSPORT_ECLOSED;
    }
    rc = transport__tcp_address_parse(address, &dial_address);
    if (rc != 0) {
        return rc;
    }
    /* Our own identity: both ends of the connection would be one peer. */
    if (transport_node_id_equal(id, &tcp->config.identity->id)) {
        return TRANSPORT_EADDRESS;
    }
    peer = transport__tcp_peer_find(tcp, id);
    if (peer == NULL) {
        rc = transport__tcp_peer_add(tcp, id, &peer);
        if (rc != 0) {
            return rc;
        }
    }
    peer->address = dial_address;
    peer->has_address = true;
    transport__tcp_peer_dial(peer);
    return 0;
}

static void tcp_forget(struct transport *transport,
                       const struct transport_node_id *id)
{
    struct transport__tcp *tcp = tcp_of(transport);
    struct transport__tcp_peer *peer;

    ASSERT(id != NULL);
    if (tcp->is_closing) {
        return;
    }
    peer = transport__tcp_peer_find(tcp, id);
    if (peer == NULL) {
        return;
    }
    peer->has_address = false;
    uv_timer_stop(&peer->retry_timer);
    if (peer->dialing != NULL) {
        transport__tcp_conn_close(peer->dialing, 0);
    }
    if (peer->active != NULL) {
        transport__tcp_conn_close(peer->active, 0);
    }
    transport__tcp_peer_release(peer);
}

static int tcp_send(struct transport *transport,
                    const struct transport_node_id *id, uint16_t type,
                    const void *bytes, size_t size)
{
    struct transport__tcp *tcp = tcp_of(transport);
    struct transport__tcp_peer *peer;
    size_t queued;
    size_t limit;

    ASSERT(id != NULL);
    ASSERT(bytes != NULL || size == 0);
    if (tcp->is_closing) {
        return TRANSPORT_ECLOSED;
    }
    if (size > tcp->config.limits.max_message_bytes) {
        return TRANSPORT_ETOOBIG;
    }
    peer = transport__tcp_peer_find(tcp, id);
    if (peer == NULL || peer->active == NULL) {
        return TRANSPORT_ENOPEER;
    }
    /* An empty queue takes any message, so a message the limits allow can
     * always be sent, whatever the queue's bound. */
    queued = transport__tcp_conn_queued(peer->active);
    limit = tcp->config.limits.send_queue_max_bytes;
    if (queued > 0 && (queued >= limit || size > limit - queued)) {
        peer->is_refused = true;
        return TRANSPORT_EFULL;
    }
    return transport__tcp_conn_send(peer->active, type, bytes, size);
}

static void anchor_closed_cb(uv_handle_t *handle)
{
    struct transport__tcp *tcp = handle->data;

    transport__tcp_handle_closed(tcp);
}

static void tcp_close(struct transport *transport, void (*done)(void *ctx),
                      void *ctx)
{
    struct transport__tcp *tcp = tcp_of(transport);
    struct transport__tcp_conn *conn;

    ASSERT(!tcp->is_closing);
    tcp->is_closing = true;
    tcp->done = done;
    tcp->done_ctx = ctx;
    if (tcp->is_listening && !uv_is_closing((uv_handle_t *)&tcp->listener)) {
        uv_close((uv_handle_t *)&tcp->listener, listener_closed_cb);
    }
    /* Connections leave the list only in their close callbacks. */
    for (conn = tcp->conns; conn != NULL; conn = conn->next) {
        transport__tcp_conn_close(conn, TRANSPORT_ECLOSED);
    }
    while (tcp->peers != NULL) {
        transport__tcp_peer_release(tcp->peers);
    }
    uv_close((uv_handle_t *)&tcp->anchor, anchor_closed_cb);
}

static const struct transport_ops tcp_ops = {
    .listen = tcp_listen,
    .listen_address = tcp_listen_address,
    .connect = tcp_connect,
    .forget = tcp_forget,
    .send = tcp_send,
    .close = tcp_close,
};
