/* SPDX-License-Identifier: MIT
 *
 * session.h: one connection's security protocol, without any I/O: the
 * mutual handshake (ed25519 identities, X25519 key exchange, the cluster
 * secret when there is one) and then the frames (AEAD-encrypted, in order,
 * replay-protected, lz4-compressed when large, optionally padded). The TCP
 * transport feeds it the bytes a socket reads and writes the bytes it
 * produces; tests and the fuzzer drive it directly. Wire format:
 * docs/formats.md, "Transport".
 *
 * A session is used by one thread. Nothing received is delivered before
 * the handshake has proved the peer's identity, and nothing after the first
 * frame that fails (the connection must then close).
 */
#ifndef SINEW_TRANSPORT_SESSION_H
#define SINEW_TRANSPORT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "transport.h"

struct transport__session;

struct transport__session_config {
    const struct transport_identity *identity;   /* borrowed */
    const struct transport_admission *admission; /* borrowed */
    bool initiator; /* this side connected (the other accepted) */
    /* Initiator: the identity it dialed; the handshake fails
     * (TRANSPORT_EAUTH) if the other side proves another. NULL otherwise. */
    const struct transport_node_id *expected_peer;
    size_t max_message_bytes;  /* messages larger are refused both ways */
    size_t compress_min_bytes; /* SIZE_MAX: never compress */
    bool pad_frames;
    /* Framing without any security, for the benchmark's comparison only:
     * no handshake, plain frames; never reachable from transport.h. */
    bool plaintext;
};

/* 0, or COMMON_ENOMEM. */
int transport__session_new(const struct transport__session_config *config,
                           struct transport__session **out);
void transport__session_free(struct transport__session *session);

/* Appends this side's first handshake bytes to out. */
int transport__session_start(struct transport__session *session,
                             struct common_buf *out);

/* Consumes bytes received (split anyhow), appends to out what must be sent
 * in reply (the handshake's), and calls deliver for each whole message, in
 * order (bytes borrowed for the call). 0, or: TRANSPORT_EAUTH (the peer is
 * not admitted, or failed its proof), TRANSPORT_EPROTO (malformed,
 * tampered, replayed or oversize), COMMON_ENOMEM; the connection must then
 * close. */
int transport__session_receive(struct transport__session *session,
                               const uint8_t *bytes, size_t size,
                               struct common_buf *out,
                               void (*deliver)(void *ctx, uint16_t type,
                                               const uint8_t *bytes,
                                               size_t size),
                               void *ctx);

/* Whether the handshake is done (the peer proved its identity); then
 * transport__session_peer() names it. */
bool transport__session_established(const struct transport__session *session);
const struct transport_node_id *
transport__session_peer(const struct transport__session *session);

/* The identity the peer has claimed so far, proven or not (the acceptor
 * reads it from the initiator's hello): for logging a refusal only; NULL
 * when nothing was claimed yet. */
const struct transport_node_id *
transport__session_claimed_peer(const struct transport__session *session);

/* Appends one message as a frame to out; established only. 0, or
 * TRANSPORT_ETOOBIG, COMMON_ENOMEM. */
int transport__session_seal(struct transport__session *session, uint16_t type,
                            const void *bytes, size_t size,
                            struct common_buf *out);

/* Appends a keepalive frame (authenticated; delivers nothing). */
int transport__session_seal_ping(struct transport__session *session,
                                 struct common_buf *out);

#endif /* SINEW_TRANSPORT_SESSION_H */
