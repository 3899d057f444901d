/* SPDX-License-Identifier: MIT
 *
 * session.c: one connection's security protocol without I/O (session.h):
 * the state machine, and the receive loop that cuts the bytes received,
 * split anyhow, into units (a handshake message, a frame header, a frame
 * body) and hands each whole unit to handshake.c or frame.c.
 *
 * Every unit has a size known before its first byte arrives: handshake
 * messages are fixed, a header is fixed, and a body's size comes from its
 * header, which is authenticated and checked against the bound first. So
 * the receive buffer never holds more than one unit, at most the largest
 * frame body a peer may send (max_message_bytes padded, plus a tag),
 * whatever the input. The first unit that fails latches the session in
 * FAILED, and every later call returns that code: nothing after a bad
 * byte is ever delivered.
 */
#include "session.h"

#include <string.h>

#include "session_int.h"

int transport__session_new(const struct transport__session_config *config,
                           struct transport__session **out)
{
    struct transport__session *session;
    size_t message_max;
    size_t rx_max;

    ASSERT(config != NULL);
    ASSERT(out != NULL);
    ASSERT(config->identity != NULL);
    ASSERT(config->plaintext || config->admission != NULL);
    ASSERT(config->plaintext || config->admission->authorized != NULL ||
           config->admission->cluster_secret != NULL);
    ASSERT(!config->initiator || config->expected_peer != NULL);
    ASSERT(config->max_message_bytes <= SESSION_MESSAGE_MAX_BYTES);
    if (sodium_init() < 0) {
        return TRANSPORT_EIO;
    }
    session = common_calloc(1, sizeof(*session));
    if (session == NULL) {
        return COMMON_ENOMEM;
    }
    session->config = *config;
    session->state = config->initiator ? SESSION_START : SESSION_WAIT_HELLO;
    session->body_max = transport__frame_padded_size(config->max_message_bytes);
    message_max = config->max_message_bytes > 0 ? config->max_message_bytes : 1;
    rx_max = session->body_max + SESSION_TAG_BYTES;
    common_buf_init(&session->rx,
                    rx_max > SESSION_REPLY_SIZE ? rx_max : SESSION_REPLY_SIZE);
    common_buf_init(&session->message, message_max);
    common_buf_init(&session->tx, session->body_max);
    *out = session;
    return 0;
}

/* Wipes what the handshake left: none of it is needed once the traffic
 * keys are derived, and none should outlive a failure. */
static void handshake_wipe(struct transport__session *session)
{
    sodium_memzero(session->ephemeral_secret,
                   sizeof(session->ephemeral_secret));
    sodium_memzero(session->handshake_root, sizeof(session->handshake_root));
    sodium_memzero(session->proof_key, sizeof(session->proof_key));
}

void transport__session_free(struct transport__session *session)
{
    if (session == NULL) {
        return;
    }
    common_buf_close(&session->rx);
    common_buf_close(&session->message);
    common_buf_close(&session->tx);
    sodium_memzero(session, sizeof(*session));
    common_free(session);
}

/* Every state change goes through here, with the allowed transitions. */
static void session_state_set(struct transport__session *session,
                              enum session_state next)
{
    enum session_state from = session->state;

    ASSERT(next == SESSION_FAILED ||
           (from == SESSION_START && next == SESSION_WAIT_REPLY) ||
           (from == SESSION_WAIT_HELLO &&
            next == (session->config.plaintext ? SESSION_ESTABLISHED
                                               : SESSION_WAIT_PROOF)) ||
           (from == SESSION_WAIT_REPLY && next == SESSION_ESTABLISHED) ||
           (from == SESSION_WAIT_PROOF && next == SESSION_ESTABLISHED));
    if (next == SESSION_ESTABLISHED || next == SESSION_FAILED) {
        handshake_wipe(session);
    }
    if (next == SESSION_ESTABLISHED) {
        session->has_peer = true;
    }
    if (next == SESSION_FAILED) {
        sodium_memzero(&session->send, sizeof(session->send));
        sodium_memzero(&session->recv, sizeof(session->recv));
        session->rx.size = 0;
    }
    session->state = next;
}

static int session_fail(struct transport__session *session, int rc)
{
    ASSERT(rc < 0);
    session->failure = rc;
    session_state_set(session, SESSION_FAILED);
    return rc;
}

int transport__session_start(struct transport__session *session,
                             struct common_buf *out)
{
    int rc;

    ASSERT(session != NULL);
    ASSERT(out != NULL);
    if (!session->config.initiator) {
        return 0; /* the acceptor speaks second */
    }
    ASSERT(session->state == SESSION_START);
    rc = session->config.plaintext
             ? transport__handshake_plain_start(session, out)
             : transport__handshake_start(session, out);
    if (rc != 0) {
        return session_fail(session, rc);
    }
    session_state_set(session, SESSION_WAIT_REPLY);
    return 0;
}

/* The size of the next unit the state expects. */
static size_t unit_size(const struct transport__session *session)
{
    size_t tag = session->config.plaintext ? 0 : SESSION_TAG_BYTES;

    switch (session->state) {
    case SESSION_WAIT_HELLO:
        return session->config.plaintext ? SESSION_PLAIN_HELLO_SIZE
                                         : SESSION_HELLO_SIZE;
    case SESSION_WAIT_REPLY:
        return session->config.plaintext ? SESSION_PLAIN_HELLO_SIZE
                                         : SESSION_REPLY_SIZE;
    case SESSION_WAIT_PROOF:
        return SESSION_PROOF_SIZE;
    case SESSION_ESTABLISHED:
        return session->in_body ? session->header_body_size + tag
                                : SESSION_HEADER_SIZE + tag;
    default:
        ASSERT(0);
        return 0;
    }
}

/* The handshake unit for the current state; on success, the next state. */
static int handshake_unit(struct transport__session *session,
                          const uint8_t *bytes, struct common_buf *out,
                          enum session_state *next)
{
    bool plain = session->config.plaintext;

    *next = SESSION_ESTABLISHED;
    switch (session->state) {
    case SESSION_WAIT_HELLO:
        if (plain) {
            return transport__handshake_plain_hello(session, bytes, out);
        }
        *next = SESSION_WAIT_PROOF;
        return transport__handshake_hello(session, bytes, out);
    case SESSION_WAIT_REPLY:
        return plain ? transport__handshake_plain_hello(session, bytes, out)
                     : transport__handshake_reply(session, bytes, out);
    case SESSION_WAIT_PROOF:
        return transport__handshake_proof(session, bytes);
    default:
        ASSERT(0);
        return TRANSPORT_EPROTO;
    }
}

static int unit_process(struct transport__session *session, uint8_t *bytes,
                        const struct transport__session_sink *sink)
{
    enum session_state next;
    int rc;

    if (session->state != SESSION_ESTABLISHED) {
        rc = handshake_unit(session, bytes, sink->out, &next);
        if (rc == 0) {
            session_state_set(session, next);
        }
        return rc;
    }
    if (!session->in_body) {
        rc = transport__frame_open_header(session, bytes);
        session->in_body = rc == 0;
        return rc;
    }
    session->in_body = false;
    return transport__frame_open_body(session, bytes, sink);
}

/* Takes units from bytes while whole ones arrive; keeps a partial one in
 * rx for the next call. */
static int units_consume(struct transport__session *session,
                         const uint8_t *bytes, size_t size,
                         const struct transport__session_sink *sink)
{
    for (;;) {
        size_t need = unit_size(session);
        int rc;

        if (session->rx.size < need) {
            size_t take = need - session->rx.size;

            take = take < size ? take : size;
            rc = common_buf_append(&session->rx, bytes, take);
            if (rc != 0) {
                return rc;
            }
            bytes += take;
            size -= take;
            if (session->rx.size < need) {
                return 0;
            }
        }
        rc = unit_process(session, session->rx.data, sink);
        session->rx.size = 0;
        if (rc != 0) {
            return rc;
        }
    }
}

int transport__session_receive(struct transport__session *session,
                               const uint8_t *bytes, size_t size,
                               struct common_buf *out,
                               void (*deliver)(void *ctx, uint16_t type,
                                               const uint8_t *bytes,
                                               size_t size),
                               void *ctx)
{
    struct transport__session_sink sink = {
        .deliver = deliver,
        .ctx = ctx,
        .out = out,
    };
    int rc;

    ASSERT(session != NULL);
    ASSERT(bytes != NULL || size == 0);
    ASSERT(out != NULL);
    ASSERT(deliver != NULL);
    if (session->state == SESSION_FAILED) {
        return session->failure;
    }
    ASSERT(session->state != SESSION_START);
    rc = units_consume(session, bytes, size, &sink);
    if (rc != 0) {
        return session_fail(session, rc);
    }
    return 0;
}

bool transport__session_established(const struct transport__session *session)
{
    ASSERT(session != NULL);
    return session->state == SESSION_ESTABLISHED;
}

const struct transport_node_id *
transport__session_peer(const struct transport__session *session)
{
    ASSERT(session != NULL);
    return session->has_peer ? &session->peer : NULL;
}

const struct transport_node_id *
transport__session_claimed_peer(const struct transport__session *session)
{
    return session->has_peer || session->has_claim ? &session->peer : NULL;
}

int transport__session_seal(struct transport__session *session, uint16_t type,
                            const void *bytes, size_t size,
                            struct common_buf *out)
{
    ASSERT(session != NULL);
    ASSERT(bytes != NULL || size == 0);
    ASSERT(out != NULL);
    if (session->state == SESSION_FAILED) {
        return session->failure;
    }
    ASSERT(session->state == SESSION_ESTABLISHED);
    if (size > session->config.max_message_bytes) {
        return TRANSPORT_ETOOBIG;
    }
    return transport__frame_seal(session, type, 0, bytes, size, out);
}

int transport__session_seal_ping(struct transport__session *session,
                                 struct common_buf *out)
{
    ASSERT(session != NULL);
    ASSERT(out != NULL);
    if (session->state == SESSION_FAILED) {
        return session->failure;
    }
    ASSERT(session->state == SESSION_ESTABLISHED);
    return transport__frame_seal(session, 0, SESSION_FLAG_PING, NULL, 0, out);
}
