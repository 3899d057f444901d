/* SPDX-License-Identifier: MIT
 *
 * tcp_peer.c: the peers of the TCP transport: who we keep a connection to,
 * when we dial them, and which connection survives when there are two.
 *
 * Dialing: connect() dials at once. After a dial fails, or an established
 * connection is lost, the next dial waits a capped exponential backoff
 * with jitter: base = reconnect_min_ms * 2^failures, at most
 * reconnect_max_ms, and the wait is uniform in [base / 2, base] ("equal
 * jitter"), so peers that lost each other at the same moment do not redial
 * in lockstep. A connection that completes its handshake resets failures.
 * No dial starts while the peer has an established connection, whichever
 * side dialed it.
 *
 * The duplicate rule: two nodes that both connect() to each other may end
 * up with two established connections. Both ends apply the same rule to
 * the same two sockets, so they keep the same one: the connection dialed
 * by the node with the smaller id (node ids compared as bytes) survives;
 * of two dialed by the same node (it redialed while its old connection
 * was still open here), the newer one survives. The loser is closed at
 * once. If the loser was the peer's active connection, the caller sees
 * disconnected(peer, 0) then connected(peer): what was sent on the loser
 * may be lost, as after any disconnect.
 */
#include "tcp.h"

#include <string.h>

struct transport__tcp_peer *
transport__tcp_peer_find(struct transport__tcp *tcp,
                         const struct transport_node_id *id)
{
    struct transport__tcp_peer *peer;

    for (peer = tcp->peers; peer != NULL; peer = peer->next) {
        if (transport_node_id_equal(&peer->id, id)) {
            return peer;
        }
    }
    return NULL;
}

int transport__tcp_peer_add(struct transport__tcp *tcp,
                            const struct transport_node_id *id,
                            struct transport__tcp_peer **out)
{
    struct transport__tcp_peer *peer;

    ASSERT(!tcp->is_closing);
    ASSERT(transport__tcp_peer_find(tcp, id) == NULL);
    peer = common_calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return COMMON_ENOMEM;
    }
    peer->tcp = tcp;
    peer->id = *id;
    uv_timer_init(tcp->loop, &peer->retry_timer);
    peer->retry_timer.data = peer;
    transport__tcp_handle_opened(tcp);
    peer->next = tcp->peers;
    tcp->peers = peer;
    *out = peer;
    return 0;
}

static void peer_closed_cb(uv_handle_t *handle)
{
    struct transport__tcp_peer *peer = handle->data;
    struct transport__tcp *tcp = peer->tcp;

    common_free(peer);
    transport__tcp_handle_closed(tcp);
}

void transport__tcp_peer_release(struct transport__tcp_peer *peer)
{
    struct transport__tcp_peer **link;

    if (peer->is_released) {
        return;
    }
    ASSERT(peer->active == NULL);
    ASSERT(peer->dialing == NULL);
    peer->is_released = true;
    for (link = &peer->tcp->peers; *link != peer; link = &(*link)->next) {
        ASSERT(*link != NULL);
    }
    *link = peer->next;
    uv_close((uv_handle_t *)&peer->retry_timer, peer_closed_cb);
}

static uint64_t peer_backoff_ms(struct transport__tcp_peer *peer)
{
    const struct transport_tcp_config *config = &peer->tcp->config;
    uint64_t base = config->reconnect_min_ms;
    uint32_t i;

    for (i = 0; i < peer->failures && base < config->reconnect_max_ms; i++) {
        base *= 2;
    }
    if (base > config->reconnect_max_ms) {
        base = config->reconnect_max_ms;
    }
    return base / 2 + transport__tcp_random(peer->tcp) % (base / 2 + 1);
}

static void peer_retry_cb(uv_timer_t *timer)
{
    transport__tcp_peer_dial(timer->data);
}

static void peer_schedule(struct transport__tcp_peer *peer)
{
    uint64_t delay_ms = peer_backoff_ms(peer);

    LOGF(peer->tcp->config.log, COMMON_LOG_DEBUG,
         "redial scheduled delay_ms=%llu failures=%u",
         (unsigned long long)delay_ms, peer->failures);
    uv_timer_start(&peer->retry_timer, peer_retry_cb, delay_ms, 0);
}

void transport__tcp_peer_lost(struct transport__tcp_peer *peer,
                              bool was_established)
{
    if (peer->tcp->is_closing || peer->is_released) {
        return;
    }
    if (peer->active != NULL || peer->dialing != NULL) {
        return;
    }
    if (!peer->has_address) {
        transport__tcp_peer_release(peer);
        return;
    }
    if (!was_established && peer->failures < UINT32_MAX) {
        peer->failures++;
    }
    peer_schedule(peer);
}

void transport__tcp_peer_dial(struct transport__tcp_peer *peer)
{
    int rc;

    if (peer->tcp->is_closing || peer->is_released || !peer->has_address) {
        return;
    }
    if (peer->active != NULL || peer->dialing != NULL) {
        return;
    }
    uv_timer_stop(&peer->retry_timer);
    rc = transport__tcp_conn_dial(peer);
    if (rc != 0) {
        LOGF(peer->tcp->config.log, COMMON_LOG_DEBUG, "dial failed reason=%s",
             transport_strerror(rc));
        if (peer->failures < UINT32_MAX) {
            peer->failures++;
        }
        peer_schedule(peer);
    }
}

static const struct transport_node_id *
conn_dialer(const struct transport__tcp_conn *conn)
{
    if (conn->is_outbound) {
        return &conn->tcp->config.identity->id;
    }
    return &conn->peer->id;
}

/* Whether newer survives against older, both established to one peer. */
static bool conn_wins(const struct transport__tcp_conn *newer,
                      const struct transport__tcp_conn *older)
{
    int order = memcmp(conn_dialer(newer)->key, conn_dialer(older)->key,
                       TRANSPORT_PUBLIC_KEY_BYTES);

    return order <= 0;
}

static void peer_log_connected(struct transport__tcp_peer *peer,
                               struct transport__tcp_conn *conn)
{
    char id_text[TRANSPORT_NODE_ID_TEXT_SIZE];

    if (!common_log_is_enabled(peer->tcp->config.log, COMMON_LOG_INFO)) {
        return;
    }
    transport_node_id_format(&peer->id, id_text);
    LOGF(peer->tcp->config.log, COMMON_LOG_INFO,
         "peer connected peer=%s address=%s dialed=%s", id_text, conn->address,
         conn->is_outbound ? "here" : "there");
}

void transport__tcp_peer_adopt(struct transport__tcp_peer *peer,
                               struct transport__tcp_conn *conn)
{
    struct transport__tcp *tcp = peer->tcp;
    struct transport__tcp_conn *old = peer->active;

    ASSERT(conn->peer == peer);
    ASSERT(conn->is_established);
    if (peer->dialing == conn) {
        peer->dialing = NULL;
    }
    if (old != NULL && !conn_wins(conn, old)) {
        LOGF(tcp->config.log, COMMON_LOG_DEBUG,
             "duplicate connection closed address=%s", conn->address);
        transport__tcp_conn_close(conn, 0);
        return;
    }
    peer->active = conn;
    peer->failures = 0;
    peer->is_refused = false;
    uv_timer_stop(&peer->retry_timer);
    peer_log_connected(peer, conn);
    if (old != NULL) {
        /* old is no longer active, so closing it reports nothing: the
         * replacement is reported here, as a disconnect and a connect. */
        LOGF(tcp->config.log, COMMON_LOG_DEBUG,
             "duplicate connection closed address=%s", old->address);
        transport__tcp_conn_close(old, 0);
        tcp->callbacks.disconnected(tcp->callbacks.ctx, &peer->id, 0);
        if (tcp->is_closing || peer->active != conn) {
            return;
        }
    }
    tcp->callbacks.connected(tcp->callbacks.ctx, &peer->id);
}
