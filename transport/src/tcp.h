/* SPDX-License-Identifier: MIT
 *
 * tcp.h: the TCP transport's state, shared by its files: tcp.c (the ops and
 * the transport's lifetime), tcp_conn.c (one socket: reading, writing, its
 * session and timers), tcp_peer.c (who we keep connections to: dialing,
 * backoff, the duplicate-connection rule) and tcp_address.c ("host:port").
 *
 * Ownership: the transport owns its peers and its connections; a peer
 * points at its connections and a connection back at its peer, and both
 * links are cut together (transport__tcp_conn_close) before either is
 * freed. Memory is freed only in libuv close callbacks, never while a
 * callback of ours or of the caller is on the stack, so a caller may call
 * forget() or close() from inside any callback.
 *
 * Invariants:
 *  - a peer has at most one established connection (active); when a second
 *    one completes its handshake, the duplicate rule closes one of the two
 *    at once (tcp_peer.c);
 *  - disconnected() reports the loss of the active connection, so it
 *    alternates with connected(); the one exception is a dial refused in
 *    its handshake (EAUTH, EPROTO) while the peer has no connection up,
 *    reported as disconnected(peer, code) with no connected() before it
 *    (as the in-memory network does);
 *  - once close() was called, no callback of the caller runs but done.
 */
#ifndef SINEW_TRANSPORT_TCP_H
#define SINEW_TRANSPORT_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "common.h"
#include "session.h"
#include "transport.h"

/* Connections accepted whose handshake has not finished yet: more are
 * closed as soon as they are accepted, so strangers cannot hold unbounded
 * memory with half-open handshakes. */
#define TRANSPORT__TCP_HANDSHAKES_MAX 64

/* One read buffer for every connection (reads never nest on one loop). */
#define TRANSPORT__TCP_READ_BUFFER_BYTES (256u << 10)

/* A connection's emptied write buffer keeps its memory up to this much;
 * a larger one (after a burst) is given back. */
#define TRANSPORT__TCP_KEEP_BUFFER_BYTES (1u << 20)

#define TRANSPORT__TCP_BACKLOG 128
#define TRANSPORT__TCP_KEEPALIVE_S 30
#define TRANSPORT__TCP_ADDRESS_TEXT_SIZE 64 /* "[v6]:port" and a NUL */

struct transport__tcp_peer;

/* One socket, dialed or accepted. Its two handles (tcp, timer) close
 * together; the struct is freed when both have. */
struct transport__tcp_conn {
    struct transport__tcp *tcp;         /* the owner */
    struct transport__tcp_conn *prev;   /* in tcp->conns */
    struct transport__tcp_conn *next;   /* in tcp->conns */
    struct transport__tcp_peer *peer;   /* dialed, or once identified;
                                           NULL after the close */
    uv_tcp_t handle;                    /* the socket */
    uv_timer_t timer;                   /* handshake, then idle ticks */
    uv_connect_t connect_req;           /* dialed only */
    uv_write_t write_req;               /* the one write in flight */
    struct transport__session *session; /* owned; NULL until started */
    struct common_buf writing;          /* bytes handed to uv_write */
    struct common_buf pending;          /* bytes waiting for it to finish */
    char address[TRANSPORT__TCP_ADDRESS_TEXT_SIZE]; /* the other end */
    uint64_t last_received_ms; /* loop time of the last read */
    unsigned handles_open;     /* 2 .. 0: freed at 0 */
    int fail_rc;               /* a deferred failure's reason */
    bool is_outbound;          /* we dialed */
    bool is_started;           /* socket up, session running */
    bool is_established;       /* the handshake proved the peer */
    bool is_writing;           /* write_req is in flight */
    bool has_sent;             /* wrote since the last idle tick */
    bool is_closing;           /* transport__tcp_conn_close ran */
    bool is_refused_dial;      /* our dial's handshake was refused:
                                  reported as disconnected() */
};

/* Someone we keep, or have, a connection to. A peer with an address was
 * named by connect() and is redialed after every loss; one without was
 * only met through an accepted connection and goes when it goes. */
struct transport__tcp_peer {
    struct transport__tcp *tcp;          /* the owner */
    struct transport__tcp_peer *next;    /* in tcp->peers */
    struct transport_node_id id;         /* its identity */
    struct sockaddr_storage address;     /* where to dial it */
    uv_timer_t retry_timer;              /* the next dial */
    struct transport__tcp_conn *active;  /* established, or NULL */
    struct transport__tcp_conn *dialing; /* our dial in progress, or NULL */
    uint32_t failures;                   /* dials failed since the last up */
    bool has_address;                    /* connect() named it */
    bool is_refused;                     /* EFULL returned: writable owed */
    bool is_released;                    /* out of tcp->peers, closing */
};

struct transport__tcp {
    struct transport transport;           /* ops; impl points here */
    uv_loop_t *loop;                      /* borrowed */
    struct transport_tcp_config config;   /* copied, defaults filled in */
    struct transport_callbacks callbacks; /* copied */
    bool plaintext;                       /* benchmark framing only */
    uv_tcp_t listener;                    /* valid when is_listening */
    uv_timer_t anchor;                    /* makes close() complete from
                                             the loop even with no other
                                             handle open */
    struct transport__tcp_peer *peers;    /* owned, singly linked */
    struct transport__tcp_conn *conns;    /* owned, every open socket */
    uint8_t *read_buffer;                 /* owned, shared by all reads */
    struct common_buf reply;              /* handshake bytes to send, moved
                                             to a connection's pending */
    size_t handshakes;                    /* accepted, not established */
    size_t handles_open;                  /* every uv handle not closed */
    bool is_listening;
    bool is_closing;         /* close() was called */
    void (*done)(void *ctx); /* close()'s */
    void *done_ctx;
};

/* transport_tcp_new() with plaintext framing on demand (no handshake, no
 * encryption: for bench/transport only, never reachable from
 * transport.h). Same contract otherwise. */
int transport__tcp_new(struct uv_loop_s *loop,
                       const struct transport_tcp_config *config,
                       const struct transport_callbacks *callbacks,
                       bool plaintext, struct transport **out);

/* tcp.c: every uv handle init is counted, every close callback uncounts;
 * the last one after close() frees the transport and calls done. */
void transport__tcp_handle_opened(struct transport__tcp *tcp);
void transport__tcp_handle_closed(struct transport__tcp *tcp);
uint64_t transport__tcp_random(struct transport__tcp *tcp);

/* tcp_address.c: "a.b.c.d:port" or "[v6]:port" (numeric only) into out,
 * written on success; TRANSPORT_EADDRESS otherwise. And back into text
 * (at least TRANSPORT__TCP_ADDRESS_TEXT_SIZE bytes). */
int transport__tcp_address_parse(const char *text,
                                 struct sockaddr_storage *out);
void transport__tcp_address_format(const struct sockaddr *address, char *out,
                                   size_t size);

/* tcp_peer.c */
struct transport__tcp_peer *
transport__tcp_peer_find(struct transport__tcp *tcp,
                         const struct transport_node_id *id);
/* A new peer in tcp->peers (address unset), or COMMON_ENOMEM. */
int transport__tcp_peer_add(struct transport__tcp *tcp,
                            const struct transport_node_id *id,
                            struct transport__tcp_peer **out);
/* Out of tcp->peers and freed once its timer closes; idempotent. */
void transport__tcp_peer_release(struct transport__tcp_peer *peer);
/* One of peer's connections went (already unlinked): redial later, or
 * release a peer nobody named. */
void transport__tcp_peer_lost(struct transport__tcp_peer *peer,
                              bool was_established);
/* Dials peer now unless it is connected or being dialed. */
void transport__tcp_peer_dial(struct transport__tcp_peer *peer);
/* conn just proved peer's identity: makes it the active connection, or
 * closes it (or the old one) by the duplicate rule; calls connected(). */
void transport__tcp_peer_adopt(struct transport__tcp_peer *peer,
                               struct transport__tcp_conn *conn);

/* tcp_conn.c */
/* Dials peer's address; the connection is peer->dialing on success. */
int transport__tcp_conn_dial(struct transport__tcp_peer *peer);
/* Accepts one connection from the listener. */
int transport__tcp_conn_accept(struct transport__tcp *tcp);
/* Seals a message into conn's queue (bytes copied) and starts a write. */
int transport__tcp_conn_send(struct transport__tcp_conn *conn, uint16_t type,
                             const void *bytes, size_t size);
/* Bytes queued on conn and not yet written to the socket. */
size_t transport__tcp_conn_queued(const struct transport__tcp_conn *conn);
/* Cuts conn from its peer (disconnected(reason) when it was the active
 * one and the transport is open) and closes its handles; idempotent. */
void transport__tcp_conn_close(struct transport__tcp_conn *conn, int reason);

#endif /* SINEW_TRANSPORT_TCP_H */
