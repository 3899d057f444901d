/* SPDX-License-Identifier: MIT
 *
 * tcp_conn.c: one TCP connection of the transport, dialed or accepted. It
 * runs a session (session.h) over the socket: bytes read are fed to it,
 * bytes it produces are written, and messages it delivers go to the
 * caller once the handshake has proved who the peer is.
 *
 * Writing: at most one uv_write is in flight (writing); what is sealed
 * meanwhile accumulates in pending and goes out as one write when the
 * first finishes. Small messages sent in one loop turn so share a system
 * call, and the queue's size (writing + pending) is what send() bounds.
 *
 * Timers: one per connection. Until the handshake is done it is the
 * handshake timeout (counted from the dial or the accept); then it ticks
 * every third of the idle timeout: a connection that received nothing for
 * the whole idle timeout is closed, and one that wrote nothing since the
 * last tick sends a ping, so a live peer always hears from us in time.
 *
 * Failures: EAUTH and EPROTO from the session (an unknown or lying peer, a
 * tampered, replayed or oversize frame) close the connection and are
 * logged as WARN with the peer's address and the identity it claimed when
 * known. Socket errors close it quietly (DEBUG).
 */
#include "tcp.h"

#include <string.h>

static void conn_closed_cb(uv_handle_t *handle)
{
    struct transport__tcp_conn *conn = handle->data;
    struct transport__tcp *tcp = conn->tcp;

    ASSERT(conn->handles_open > 0);
    conn->handles_open--;
    if (conn->handles_open == 0) {
        if (conn->prev != NULL) {
            conn->prev->next = conn->next;
        } else {
            tcp->conns = conn->next;
        }
        if (conn->next != NULL) {
            conn->next->prev = conn->prev;
        }
        if (conn->session != NULL) {
            transport__session_free(conn->session);
        }
        common_buf_close(&conn->writing);
        common_buf_close(&conn->pending);
        common_free(conn);
    }
    transport__tcp_handle_closed(tcp);
}

void transport__tcp_conn_close(struct transport__tcp_conn *conn, int reason)
{
    struct transport__tcp *tcp = conn->tcp;
    struct transport__tcp_peer *peer = conn->peer;
    struct transport_node_id id;
    bool was_active = false;

    if (conn->is_closing) {
        return;
    }
    conn->is_closing = true;
    conn->peer = NULL;
    if (!conn->is_outbound && conn->is_started && !conn->is_established) {
        ASSERT(tcp->handshakes > 0);
        tcp->handshakes--;
    }
    if (peer != NULL) {
        if (peer->active == conn ||
            (conn->is_refused_dial && peer->active == NULL)) {
            id = peer->id;
            was_active = true;
        }
        if (peer->active == conn) {
            peer->active = NULL;
            peer->is_refused = false;
        }
        if (peer->dialing == conn) {
            peer->dialing = NULL;
        }
        transport__tcp_peer_lost(peer, conn->is_established);
    }
    uv_close((uv_handle_t *)&conn->handle, conn_closed_cb);
    uv_close((uv_handle_t *)&conn->timer, conn_closed_cb);
    if (was_active) {
        LOGF(tcp->config.log, COMMON_LOG_INFO,
             "peer disconnected address=%s reason=%s", conn->address,
             transport_strerror(reason));
        if (!tcp->is_closing) {
            tcp->callbacks.disconnected(tcp->callbacks.ctx, &id, reason);
        }
    }
}

static void conn_fail_cb(uv_timer_t *timer)
{
    struct transport__tcp_conn *conn = timer->data;

    transport__tcp_conn_close(conn, conn->fail_rc);
}

/* Closes conn from the loop, not now: for failures met inside send(),
 * which must not call back. */
static void conn_fail_later(struct transport__tcp_conn *conn, int rc)
{
    conn->fail_rc = rc;
    uv_timer_start(&conn->timer, conn_fail_cb, 0, 0);
}

static int conn_new(struct transport__tcp *tcp, bool is_outbound,
                    struct transport__tcp_conn **out)
{
    struct transport__tcp_conn *conn;
    int rc;

    conn = common_calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return COMMON_ENOMEM;
    }
    rc = uv_tcp_init(tcp->loop, &conn->handle);
    if (rc != 0) {
        common_free(conn);
        return rc;
    }
    transport__tcp_handle_opened(tcp);
    uv_timer_init(tcp->loop, &conn->timer);
    transport__tcp_handle_opened(tcp);
    conn->handles_open = 2;
    conn->tcp = tcp;
    conn->is_outbound = is_outbound;
    conn->handle.data = conn;
    conn->timer.data = conn;
    conn->connect_req.data = conn;
    conn->write_req.data = conn;
    snprintf(conn->address, sizeof(conn->address), "?");
    common_buf_init(&conn->writing, SIZE_MAX);
    common_buf_init(&conn->pending, SIZE_MAX);
    conn->next = tcp->conns;
    if (tcp->conns != NULL) {
        tcp->conns->prev = conn;
    }
    tcp->conns = conn;
    *out = conn;
    return 0;
}

static void conn_write_cb(uv_write_t *req, int status);

/* Starts a write of everything pending unless one is in flight. */
static void conn_flush(struct transport__tcp_conn *conn)
{
    struct common_buf swap;
    uv_buf_t buf;
    int rc;

    if (conn->is_closing || conn->is_writing || conn->pending.size == 0) {
        return;
    }
    ASSERT(conn->writing.size == 0);
    swap = conn->writing;
    conn->writing = conn->pending;
    conn->pending = swap;
    buf = uv_buf_init((char *)conn->writing.data,
                      (unsigned int)conn->writing.size);
    rc = uv_write(&conn->write_req, (uv_stream_t *)&conn->handle, &buf, 1,
                  conn_write_cb);
    if (rc != 0) {
        conn_fail_later(conn, TRANSPORT_EIO);
        return;
    }
    conn->is_writing = true;
    conn->has_sent = true;
}

static void conn_check_writable(struct transport__tcp_conn *conn)
{
    struct transport__tcp *tcp = conn->tcp;
    struct transport__tcp_peer *peer = conn->peer;

    if (peer == NULL || peer->active != conn || !peer->is_refused) {
        return;
    }
    if (transport__tcp_conn_queued(conn) >=
        tcp->config.limits.send_queue_max_bytes / 2) {
        return;
    }
    peer->is_refused = false;
    if (tcp->callbacks.writable != NULL && !tcp->is_closing) {
        tcp->callbacks.writable(tcp->callbacks.ctx, &peer->id);
    }
}

static void conn_write_cb(uv_write_t *req, int status)
{
    struct transport__tcp_conn *conn = req->data;

    conn->is_writing = false;
    if (conn->is_closing) {
        return;
    }
    if (status < 0) {
        LOGF(conn->tcp->config.log, COMMON_LOG_DEBUG,
             "write failed address=%s reason=%s", conn->address,
             uv_strerror(status));
        transport__tcp_conn_close(conn, TRANSPORT_EIO);
        return;
    }
    common_buf_truncate(&conn->writing, 0);
    if (conn->writing.capacity > TRANSPORT__TCP_KEEP_BUFFER_BYTES) {
        common_buf_close(&conn->writing);
        common_buf_init(&conn->writing, SIZE_MAX);
    }
    conn_flush(conn);
    conn_check_writable(conn);
}

size_t transport__tcp_conn_queued(const struct transport__tcp_conn *conn)
{
    return conn->writing.size + conn->pending.size;
}

int transport__tcp_conn_send(struct transport__tcp_conn *conn, uint16_t type,
                             const void *bytes, size_t size)
{
    int rc;

    ASSERT(!conn->is_closing);
    ASSERT(conn->is_established);
    rc = transport__session_seal(conn->session, type, bytes, size,
                                 &conn->pending);
    if (rc != 0) {
        return rc;
    }
    conn_flush(conn);
    return 0;
}

static void id_text(const struct transport_node_id *id, char *out)
{
    if (id != NULL) {
        transport_node_id_format(id, out);
    } else {
        snprintf(out, TRANSPORT_NODE_ID_TEXT_SIZE, "unknown");
    }
}

/* The session refused what the peer sent (or we ran out of memory): log
 * it with what we know of the peer (the identity it proved, the one we
 * dialed), close. */
static void conn_refuse(struct transport__tcp_conn *conn, int rc)
{
    char proven[TRANSPORT_NODE_ID_TEXT_SIZE];
    char claimed[TRANSPORT_NODE_ID_TEXT_SIZE];
    char expected[TRANSPORT_NODE_ID_TEXT_SIZE];
    int level = rc == COMMON_ENOMEM ? COMMON_LOG_ERROR : COMMON_LOG_WARN;

    if (common_log_is_enabled(conn->tcp->config.log, level)) {
        id_text(conn->session != NULL ? transport__session_peer(conn->session)
                                      : NULL,
                proven);
        id_text(conn->session != NULL
                    ? transport__session_claimed_peer(conn->session)
                    : NULL,
                claimed);
        id_text(conn->is_outbound && conn->peer != NULL ? &conn->peer->id
                                                        : NULL,
                expected);
        LOGF(conn->tcp->config.log, level,
             "connection refused address=%s peer=%s claimed=%s expected=%s "
             "dialed=%s reason=%s",
             conn->address, proven, claimed, expected,
             conn->is_outbound ? "here" : "there", transport_strerror(rc));
    }
    conn->is_refused_dial = conn->is_outbound && !conn->is_established &&
                            (rc == TRANSPORT_EAUTH || rc == TRANSPORT_EPROTO);
    transport__tcp_conn_close(conn, rc);
}

/* Moves the session's handshake output into conn's write queue. */
static void conn_take_reply(struct transport__tcp_conn *conn)
{
    struct common_buf *reply = &conn->tcp->reply;
    int rc;

    if (reply->size == 0) {
        return;
    }
    rc = conn->is_closing
             ? 0
             : common_buf_append(&conn->pending, reply->data, reply->size);
    common_buf_truncate(reply, 0);
    if (rc != 0) {
        conn_refuse(conn, rc);
    }
}

static void conn_tick_cb(uv_timer_t *timer)
{
    struct transport__tcp_conn *conn = timer->data;
    struct transport__tcp *tcp = conn->tcp;
    uint64_t now_ms = uv_now(tcp->loop);
    int rc;

    if (now_ms - conn->last_received_ms >= tcp->config.idle_timeout_ms) {
        LOGF(tcp->config.log, COMMON_LOG_INFO,
             "idle timeout address=%s idle_ms=%llu", conn->address,
             (unsigned long long)(now_ms - conn->last_received_ms));
        transport__tcp_conn_close(conn, TRANSPORT_EIO);
        return;
    }
    if (!conn->has_sent) {
        rc = transport__session_seal_ping(conn->session, &conn->pending);
        if (rc != 0) {
            conn_refuse(conn, rc);
            return;
        }
        conn_flush(conn);
    }
    conn->has_sent = false;
}

/* The handshake has proved the peer: identify it, let the peer table
 * decide whether this connection is the one to keep. */
static void conn_establish(struct transport__tcp_conn *conn)
{
    struct transport__tcp *tcp = conn->tcp;
    const struct transport_node_id *id;
    struct transport__tcp_peer *peer = conn->peer;
    uint64_t tick_ms = tcp->config.idle_timeout_ms / 3;
    int rc;

    if (conn->fail_rc != 0) {
        return; /* a failed write closes it from the loop */
    }
    conn->is_established = true;
    id = transport__session_peer(conn->session);
    if (!conn->is_outbound) {
        ASSERT(tcp->handshakes > 0);
        tcp->handshakes--;
        peer = transport__tcp_peer_find(tcp, id);
        if (peer == NULL) {
            rc = transport__tcp_peer_add(tcp, id, &peer);
            if (rc != 0) {
                conn_refuse(conn, rc);
                return;
            }
        }
        conn->peer = peer;
    }
    uv_timer_start(&conn->timer, conn_tick_cb, tick_ms, tick_ms);
    transport__tcp_peer_adopt(peer, conn);
}

static void conn_deliver(void *ctx, uint16_t type, const uint8_t *bytes,
                         size_t size)
{
    struct transport__tcp_conn *conn = ctx;
    struct transport__tcp *tcp = conn->tcp;

    /* Frames can follow the handshake's last bytes in one read: the
     * connection is identified (and its reply queued first) before the
     * first message goes up. */
    if (!conn->is_established && !conn->is_closing) {
        conn_take_reply(conn);
        if (!conn->is_closing) {
            conn_establish(conn);
        }
    }
    if (conn->is_closing || tcp->is_closing) {
        return;
    }
    tcp->callbacks.received(tcp->callbacks.ctx, &conn->peer->id, type, bytes,
                            size);
}

static void conn_alloc_cb(uv_handle_t *handle, size_t suggested_size,
                          uv_buf_t *buf)
{
    struct transport__tcp_conn *conn = handle->data;

    (void)suggested_size;
    buf->base = (char *)conn->tcp->read_buffer;
    buf->len = TRANSPORT__TCP_READ_BUFFER_BYTES;
}

static void conn_read_cb(uv_stream_t *stream, ssize_t nread,
                         const uv_buf_t *buf)
{
    struct transport__tcp_conn *conn = stream->data;
    int rc;

    if (nread == 0 || conn->is_closing) {
        return;
    }
    if (nread < 0) {
        /* A peer that hangs up mid-handshake most likely refused us (an
         * unknown key, another cluster secret): worth an operator's eye. */
        LOGF(conn->tcp->config.log,
             conn->is_established ? COMMON_LOG_DEBUG : COMMON_LOG_INFO,
             "%s address=%s dialed=%s reason=%s",
             conn->is_established ? "connection lost" : "handshake aborted",
             conn->address, conn->is_outbound ? "here" : "there",
             uv_strerror((int)nread));
        transport__tcp_conn_close(conn, nread == UV_EOF ? 0 : TRANSPORT_EIO);
        return;
    }
    conn->last_received_ms = uv_now(conn->tcp->loop);
    rc = transport__session_receive(conn->session, (const uint8_t *)buf->base,
                                    (size_t)nread, &conn->tcp->reply,
                                    conn_deliver, conn);
    conn_take_reply(conn);
    if (conn->is_closing) {
        return;
    }
    if (rc != 0) {
        conn_refuse(conn, rc);
        return;
    }
    if (!conn->is_established &&
        transport__session_established(conn->session)) {
        conn_establish(conn);
    }
    conn_flush(conn);
}

static void conn_handshake_timeout_cb(uv_timer_t *timer)
{
    struct transport__tcp_conn *conn = timer->data;

    LOGF(conn->tcp->config.log, COMMON_LOG_WARN,
         "handshake timeout address=%s dialed=%s", conn->address,
         conn->is_outbound ? "here" : "there");
    transport__tcp_conn_close(conn, TRANSPORT_EIO);
}

/* The socket is connected: set it up and start the session. */
static void conn_start(struct transport__tcp_conn *conn)
{
    struct transport__tcp *tcp = conn->tcp;
    struct transport__session_config config = {
        .identity = tcp->config.identity,
        .admission = &tcp->config.admission,
        .initiator = conn->is_outbound,
        .expected_peer = conn->is_outbound ? &conn->peer->id : NULL,
        .max_message_bytes = tcp->config.limits.max_message_bytes,
        .compress_min_bytes = tcp->config.compress_min_bytes,
        .pad_frames = tcp->config.pad_frames,
        .plaintext = tcp->plaintext,
    };
    int rc;

    conn->is_started = true;
    conn->last_received_ms = uv_now(tcp->loop);
    uv_tcp_nodelay(&conn->handle, 1);
    uv_tcp_keepalive(&conn->handle, 1, TRANSPORT__TCP_KEEPALIVE_S);
    rc = transport__session_new(&config, &conn->session);
    if (rc == 0) {
        rc = transport__session_start(conn->session, &conn->pending);
    }
    if (rc == 0) {
        rc = uv_read_start((uv_stream_t *)&conn->handle, conn_alloc_cb,
                           conn_read_cb);
    }
    if (rc != 0) {
        conn_refuse(conn, rc);
        return;
    }
    conn_flush(conn);
    if (!conn->is_closing && transport__session_established(conn->session)) {
        conn_establish(conn);
    }
}

static void conn_connect_cb(uv_connect_t *req, int status)
{
    struct transport__tcp_conn *conn = req->data;

    if (conn->is_closing) {
        return;
    }
    if (status < 0) {
        LOGF(conn->tcp->config.log, COMMON_LOG_DEBUG,
             "dial failed address=%s reason=%s", conn->address,
             uv_strerror(status));
        transport__tcp_conn_close(conn, TRANSPORT_EIO);
        return;
    }
    conn_start(conn);
}

int transport__tcp_conn_dial(struct transport__tcp_peer *peer)
{
    struct transport__tcp *tcp = peer->tcp;
    struct transport__tcp_conn *conn;
    int rc;

    ASSERT(peer->has_address);
    ASSERT(peer->dialing == NULL);
    rc = conn_new(tcp, true, &conn);
    if (rc != 0) {
        return rc;
    }
    transport__tcp_address_format((const struct sockaddr *)&peer->address,
                                  conn->address, sizeof(conn->address));
    rc = uv_tcp_connect(&conn->connect_req, &conn->handle,
                        (const struct sockaddr *)&peer->address,
                        conn_connect_cb);
    if (rc != 0) {
        transport__tcp_conn_close(conn, rc);
        return rc;
    }
    conn->peer = peer;
    peer->dialing = conn;
    uv_timer_start(&conn->timer, conn_handshake_timeout_cb,
                   tcp->config.handshake_timeout_ms, 0);
    return 0;
}

int transport__tcp_conn_accept(struct transport__tcp *tcp)
{
    struct transport__tcp_conn *conn;
    struct sockaddr_storage address;
    int length = sizeof(address);
    int rc;

    rc = conn_new(tcp, false, &conn);
    if (rc != 0) {
        return rc;
    }
    rc = uv_accept((uv_stream_t *)&tcp->listener, (uv_stream_t *)&conn->handle);
    if (rc != 0) {
        transport__tcp_conn_close(conn, rc);
        return rc;
    }
    if (uv_tcp_getpeername(&conn->handle, (struct sockaddr *)&address,
                           &length) == 0) {
        transport__tcp_address_format((const struct sockaddr *)&address,
                                      conn->address, sizeof(conn->address));
    }
    if (tcp->handshakes >= TRANSPORT__TCP_HANDSHAKES_MAX) {
        LOGF(tcp->config.log, COMMON_LOG_WARN,
             "connection refused address=%s reason=too many handshakes",
             conn->address);
        transport__tcp_conn_close(conn, 0);
        return 0;
    }
    tcp->handshakes++;
    uv_timer_start(&conn->timer, conn_handshake_timeout_cb,
                   tcp->config.handshake_timeout_ms, 0);
    conn_start(conn);
    return 0;
}
