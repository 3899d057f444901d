/* SPDX-License-Identifier: MIT
 *
 * transport.h: framed messages between node identities, and its manual.
 *
 * Nodes exchange change sets, sync requests and Raft messages as messages:
 * a type (uint16_t, the caller's) and up to max_message_bytes of bytes, sent
 * to a peer named by its identity (an ed25519 public key). A transport is an
 * ops struct and an implementation pointer, so users can bring their own
 * network; two implementations come with sinew:
 *
 *  - TCP on libuv (transport_tcp_new()): every connection is mutually
 *    authenticated and every frame encrypted (libsodium; the handshake and
 *    frame format are in docs/formats.md, "Transport");
 *  - an in-memory network (transport_memory_*()): every endpoint in one
 *    process, driven by the caller's clock and random source, with faults
 *    per link (drop, delay, duplicate, reorder, partition, reset, pause),
 *    reproducible from its seed: what tests and the simulator use.
 *
 * What a caller may assume, for every implementation:
 *
 *  - A message is delivered whole or not at all, at most once per send
 *    (the in-memory network's duplicate fault aside: it models a
 *    retransmitting network and is off unless asked for), and messages on
 *    one connection arrive in the order they were sent.
 *  - connected() says a connection to a peer is up (authenticated, for
 *    TCP); disconnected() that it is down. After a disconnect NOTHING is
 *    known about messages sent before it: any of them may or may not have
 *    been delivered. Protocols above (replication, Raft) resend or
 *    reconcile; the transport never does.
 *  - Every queue has a bound. send() on a peer whose send queue is full
 *    returns TRANSPORT_EFULL and queues nothing (backpressure); writable()
 *    is called once the queue has drained below half, so the sender can go
 *    on. A message larger than max_message_bytes is refused by send() with
 *    TRANSPORT_ETOOBIG; a peer that sends one is disconnected.
 *  - Callbacks run on the transport's thread (the libuv loop for TCP, the
 *    caller's step for the in-memory network), never inside send(). The
 *    bytes handed to received() are borrowed for the call.
 *  - Time and randomness come from the caller (struct transport_clock,
 *    struct transport_random), so a simulated clock drives everything.
 *
 * Errors are negative codes: common's, or TRANSPORT_* below.
 */
#ifndef SINEW_TRANSPORT_H
#define SINEW_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define TRANSPORT_ERROR_MAP(X)                                                 \
    X(TRANSPORT_EFULL, -10100, "send queue full")                              \
    X(TRANSPORT_ETOOBIG, -10101, "message too large")                          \
    X(TRANSPORT_ENOPEER, -10102, "no connection to that peer")                 \
    X(TRANSPORT_ECLOSED, -10103, "transport closed")                           \
    X(TRANSPORT_EAUTH, -10104, "peer failed authentication")                   \
    X(TRANSPORT_EPROTO, -10105, "malformed or tampered frame")                 \
    X(TRANSPORT_EADDRESS, -10106, "bad address")                               \
    X(TRANSPORT_EIO, -10107, "network error")                                  \
    X(TRANSPORT_EKEYFILE, -10108, "bad key file")

enum transport_error { TRANSPORT_ERROR_MAP(COMMON_ERROR_ENUM) };

#define TRANSPORT_ERROR_FIRST (-10199)
#define TRANSPORT_ERROR_LAST (-10100)

/* The message for a transport code; common_strerror()'s answer otherwise. */
const char *transport_strerror(int rc);

/* ---- identities and keys ---- */

#define TRANSPORT_PUBLIC_KEY_BYTES 32 /* ed25519 public key */
#define TRANSPORT_SECRET_KEY_BYTES 64 /* ed25519 secret key (seed + public) */
#define TRANSPORT_CLUSTER_SECRET_BYTES 32

/* A node's name on the network: its ed25519 public key. */
struct transport_node_id {
    uint8_t key[TRANSPORT_PUBLIC_KEY_BYTES];
};

/* A node's identity: its key pair. The secret never leaves the node. */
struct transport_identity {
    struct transport_node_id id;
    uint8_t secret[TRANSPORT_SECRET_KEY_BYTES];
};

/* The node id as 64 lowercase hex digits and a NUL (65 bytes), and back
 * (TRANSPORT_EKEYFILE when text is not that). */
#define TRANSPORT_NODE_ID_TEXT_SIZE 65
void transport_node_id_format(const struct transport_node_id *id, char *out);
int transport_node_id_parse(const char *text, struct transport_node_id *out);

bool transport_node_id_equal(const struct transport_node_id *a,
                             const struct transport_node_id *b);

/* A new random identity (libsodium's generator). */
int transport_identity_generate(struct transport_identity *out);

/* Writes identity to a new file at path, readable by its owner only
 * (mode 0600, refused if the file exists: TRANSPORT_EKEYFILE), synced.
 * The format is text: docs/formats.md, "Key files". */
int transport_identity_save(const struct transport_identity *identity,
                            const char *path);

/* Reads an identity written by transport_identity_save(); refuses a file
 * others may read or write, or one whose public key does not match its
 * secret (TRANSPORT_EKEYFILE). */
int transport_identity_load(const char *path, struct transport_identity *out);

/* Who may connect. With an authorized-keys list, a peer must prove it
 * holds the secret of a listed key. With a cluster secret, every node that
 * knows the secret is admitted (whatever its key, which it still proves):
 * the secret keys the session, so a node without it cannot even finish
 * the handshake. At least one of the two is required. */
struct transport_admission {
    const struct transport_node_id *authorized; /* borrowed; or NULL */
    size_t authorized_count;
    const uint8_t *cluster_secret; /* TRANSPORT_CLUSTER_SECRET_BYTES,
                                      borrowed; or NULL */
};

/* Reads an authorized-keys file (one node id in hex per line; '#'
 * comments and blank lines ignored) into *out (common_malloc'd, *count
 * entries). TRANSPORT_EKEYFILE names nothing on a malformed line. */
int transport_authorized_keys_load(const char *path,
                                   struct transport_node_id **out,
                                   size_t *count);

/* ---- the caller's clock and randomness ---- */

struct transport_clock {
    uint64_t (*now_ms)(void *ctx); /* monotonic milliseconds */
    void *ctx;
};

struct transport_random {
    uint64_t (*next)(void *ctx); /* uniform 64-bit values */
    void *ctx;
};

/* ---- the interface ---- */

struct transport;

struct transport_callbacks {
    /* A message from peer: type and bytes (borrowed for the call). */
    void (*received)(void *ctx, const struct transport_node_id *peer,
                     uint16_t type, const uint8_t *bytes, size_t size);
    /* A connection to peer is up (authenticated). */
    void (*connected)(void *ctx, const struct transport_node_id *peer);
    /* The connection to peer is down; reason is a negative code
     * (TRANSPORT_EAUTH, TRANSPORT_EPROTO, TRANSPORT_EIO, ...) or 0 for a
     * clean close. Messages sent before it may or may not have arrived.
     * Also called, with TRANSPORT_EAUTH and no connected() before it, when
     * a peer given to connect() failed authentication (the address answers
     * with another identity, or refuses ours): a misconfiguration the
     * caller should hear of. A dial that merely fails (nothing listening,
     * no route) is retried without a callback. */
    void (*disconnected)(void *ctx, const struct transport_node_id *peer,
                         int reason);
    /* peer's send queue, which refused a message (TRANSPORT_EFULL), has
     * drained below half. May be NULL. */
    void (*writable)(void *ctx, const struct transport_node_id *peer);
    void *ctx;
};

struct transport_ops {
    /* Accepts connections on address ("host:port"; port 0 picks one). */
    int (*listen)(struct transport *transport, const char *address);
    /* The address actually listened on (after port 0), into out. */
    int (*listen_address)(struct transport *transport, char *out, size_t size);
    /* Keeps a connection to peer at address: connects now and reconnects
     * after every loss, until forget(). Only the peer with that identity is
     * accepted at the other end. */
    int (*connect)(struct transport *transport,
                   const struct transport_node_id *peer, const char *address);
    /* Stops reconnecting to peer and closes any connection to it. */
    void (*forget)(struct transport *transport,
                   const struct transport_node_id *peer);
    /* Queues a message to peer (bytes copied). 0, or TRANSPORT_ENOPEER (no
     * connection up), TRANSPORT_EFULL, TRANSPORT_ETOOBIG,
     * TRANSPORT_ECLOSED. */
    int (*send)(struct transport *transport,
                const struct transport_node_id *peer, uint16_t type,
                const void *bytes, size_t size);
    /* Closes every connection and the listener; done(ctx) runs once all is
     * released, after which the transport is freed. No callback runs
     * after done. */
    void (*close)(struct transport *transport, void (*done)(void *ctx),
                  void *ctx);
};

struct transport {
    const struct transport_ops *ops;
    void *impl; /* the implementation's state */
};

/* The calls, through the ops. */
static inline int transport_listen(struct transport *t, const char *address)
{
    return t->ops->listen(t, address);
}

static inline int transport_listen_address(struct transport *t, char *out,
                                           size_t size)
{
    return t->ops->listen_address(t, out, size);
}

static inline int transport_connect(struct transport *t,
                                    const struct transport_node_id *peer,
                                    const char *address)
{
    return t->ops->connect(t, peer, address);
}

static inline void transport_forget(struct transport *t,
                                    const struct transport_node_id *peer)
{
    t->ops->forget(t, peer);
}

static inline int transport_send(struct transport *t,
                                 const struct transport_node_id *peer,
                                 uint16_t type, const void *bytes, size_t size)
{
    return t->ops->send(t, peer, type, bytes, size);
}

static inline void transport_close(struct transport *t, void (*done)(void *ctx),
                                   void *ctx)
{
    t->ops->close(t, done, ctx);
}

/* ---- limits every implementation takes ---- */

#define TRANSPORT_MESSAGE_MAX_BYTES_DEFAULT (16u << 20)    /* 16 MiB */
#define TRANSPORT_MESSAGE_MAX_BYTES_LIMIT (1u << 30)       /* 1 GiB at most */
#define TRANSPORT_SEND_QUEUE_MAX_BYTES_DEFAULT (64u << 20) /* per peer */

struct transport_limits {
    size_t max_message_bytes;    /* 0: the default; at most the limit */
    size_t send_queue_max_bytes; /* 0: the default */
};

/* ---- TCP on libuv (tcp*.c) ---- */

struct uv_loop_s;

struct transport_tcp_config {
    const struct transport_identity *identity; /* borrowed while open */
    struct transport_admission admission;      /* borrowed while open */
    struct transport_limits limits;
    uint32_t reconnect_min_ms; /* first retry after a loss; 0: 100 */
    uint32_t reconnect_max_ms; /* the backoff's cap; 0: 10000 */
    /* A connection silent this long is closed; pings go out at a third of
     * it. 0: 15000. */
    uint32_t idle_timeout_ms;
    uint32_t handshake_timeout_ms; /* 0: 5000 */
    /* Frames of at least this many bytes are lz4-compressed when that
     * shrinks them. 0: 4096; SIZE_MAX: never. */
    size_t compress_min_bytes;
    /* Pad every frame to a size bucket, so lengths tell less (off by
     * default: it costs bandwidth). */
    bool pad_frames;
    /* Jitter for the reconnect backoff; next NULL: libsodium's. */
    struct transport_random random;
    /* Refused peers (unknown key, failed proof, tampered or replayed
     * frame) are logged here with their address; NULL: not logged. */
    const struct common_log *log;
};

/* A TCP transport on the caller's libuv loop (which supplies the time).
 * A peer closing while we write raises SIGPIPE; if the process left it at
 * its default (ending the process), this sets it to ignored, once, so a
 * peer's behaviour never kills the host; a disposition the application
 * chose is left alone.
 * callbacks are copied; config is copied, its pointers borrowed until the
 * transport is closed. 0, or TRANSPORT_EAUTH when admission admits no one,
 * TRANSPORT_ETOOBIG when limits.max_message_bytes passes
 * TRANSPORT_MESSAGE_MAX_BYTES_LIMIT, COMMON_ENOMEM. */
int transport_tcp_new(struct uv_loop_s *loop,
                      const struct transport_tcp_config *config,
                      const struct transport_callbacks *callbacks,
                      struct transport **out);

/* ---- In-memory network (memory*.c) ----
 *
 * Every endpoint lives in one process, in one struct
 * transport_memory_network, and nothing moves until the caller says so:
 * transport_memory_network_step() runs every event due at the caller's
 * clock's now_ms(), and transport_memory_network_next_due() says when the
 * next one is, so a simulator advances its clock to there and steps again.
 * No wall clock, no threads, no libuv. All randomness (faults, delays,
 * reconnect backoff) is drawn from the caller's struct transport_random,
 * and events due at the same millisecond run in the order they were
 * scheduled: the same seed, the same clock readings and the same calls give
 * the same callbacks in the same order, byte for byte.
 *
 * Addresses are names ("n1", at most TRANSPORT_MEMORY_ADDRESS_SIZE_MAX - 1
 * bytes, no NUL) that endpoints listen() on. connect(peer, "n1") reaches
 * the endpoint listening on "n1" only if its identity is peer, which models
 * the TCP transport's authentication: on a mismatch no connection is made
 * and the dialing endpoint gets disconnected(peer, TRANSPORT_EAUTH) (with
 * no connected() before it), then keeps retrying with backoff like any
 * failed dial. Every endpoint admits every identity (there is no
 * admission list). A dial to a name nobody listens on, across a partition
 * (either way) or to a paused node fails silently and is retried.
 *
 * Connections. There is at most one connection between two endpoints,
 * whichever dialed; both may keep it (connect()), and after a loss every
 * end that keeps it dials again after a backoff: uniform in [b/2, b] with
 * b = TRANSPORT_MEMORY_RECONNECT_MIN_MS doubled per failed dial, capped at
 * TRANSPORT_MEMORY_RECONNECT_MAX_MS. Making a connection takes one link
 * delay each way: the accepting end is told connected() one delay after
 * the dial, the dialing end one delay later. connected() and
 * disconnected() alternate per peer (the EAUTH report above aside).
 *
 * Faults are set per directed link (from node A to node B, by identity,
 * so they outlive endpoints: a restarted node keeps its links' faults) and
 * per node; links without their own faults use the network's default (none
 * at first). What each fault does, and which promise of the interface
 * (top of this file) it breaks on purpose:
 *
 *  - delay_ms + jitter_ms: each message and each connection notice takes
 *    delay_ms plus a uniform draw in [0, jitter_ms]. Order is kept: a
 *    message never arrives before one sent earlier on its connection
 *    (like TCP, a fast one waits behind a slow one). Breaks nothing.
 *  - drop_probability: each message is lost, decided when it is sent,
 *    while the connection stays up. Breaks "a live connection loses
 *    nothing" (at most once still holds); use it to test that upper layers
 *    resend. A lost message takes no room in the send queue.
 *  - duplicate_probability: the message arrives twice, the copy after the
 *    original (in order). Breaks "at most once".
 *  - reorder_probability + reorder_window_ms: the message leaves the
 *    connection's order: it takes its delay plus a uniform draw in
 *    [0, reorder_window_ms], and neither waits for messages sent before it
 *    nor holds back those sent after. Breaks "in order per connection".
 *    Even so, nothing arrives before its end was told connected().
 *  - partition (one way: A to B; or both ways): a message from A that
 *    would arrive at B while the link A to B is partitioned is lost, in
 *    flight ones included; no connection between A and B can be made
 *    while either way is partitioned. An existing connection stays up, so
 *    under a one-way partition B's messages still reach A. Breaks "a live
 *    connection loses nothing". To also break the connection (as TCP's
 *    idle timeout would, later), reset it; after the partition heals, the
 *    ends that keep the connection dial again after their backoff.
 *  - reset: the connection between two nodes goes down at once, and every
 *    message and notice in flight on it is dropped; each end that was told
 *    connected() is told disconnected(TRANSPORT_EIO) at the next step, and
 *    nothing sent before the reset arrives after it. Breaks nothing (a
 *    disconnect promises nothing about what was sent before it).
 *  - pause (per node, like SIGSTOP): the node's events (messages, notices,
 *    writable, its dials) are held when due and run in their original order
 *    at the first step after resume; its connections stay up, what it sent
 *    before still arrives, its senders' queues fill up (TRANSPORT_EFULL).
 *    Dials to a paused node fail. close() completes even while paused. The
 *    caller should not run a paused node's code; send() is still accepted.
 *    Breaks nothing.
 *
 * Handshakes (the connection notices) are delayed but never dropped,
 * duplicated or reordered. Drop, duplicate and reorder are decided in
 * send(), partitions when the message arrives.
 *
 * Queues and limits: send_queue_max_bytes bounds, per peer, the bytes sent
 * and not yet arrived (or lost in a partition). A send() that would pass it
 * returns TRANSPORT_EFULL, unless the queue is empty (so a message of any
 * size up to max_message_bytes can go); writable() follows at the step
 * after the queue drained below half. A message over the sender's
 * max_message_bytes is refused (TRANSPORT_ETOOBIG); one over the
 * receiver's closes the connection: disconnected(TRANSPORT_EPROTO) at the
 * receiver, disconnected(TRANSPORT_EIO) at the sender.
 *
 * forget(peer) and close() end connections cleanly: the other end is told
 * disconnected(0), and so is the end that called forget() (close() runs no
 * callback but done). close(done) frees the endpoint and calls done at a
 * later step; the address and the identity are free again at once, so a
 * restarted node (a new endpoint with the same identity) can listen
 * immediately.
 *
 * Callbacks run only inside transport_memory_network_step(); they may call
 * anything here (send, connect, forget, close, the fault calls) except
 * step, next_due and network_free. Events scheduled by a step for "now"
 * run at the next step, so a step always ends.
 */

struct transport_memory_network;

/* A name to listen on holds fewer bytes than this. */
#define TRANSPORT_MEMORY_ADDRESS_SIZE_MAX 64
/* The reconnect backoff: the first retry after a loss (or a failed dial)
 * waits up to the minimum; each failed dial doubles it up to the maximum.
 * The same defaults as the TCP transport. */
#define TRANSPORT_MEMORY_RECONNECT_MIN_MS 100u
#define TRANSPORT_MEMORY_RECONNECT_MAX_MS 10000u

/* One directed link's faults. All zero: a perfect link. Probabilities are
 * in [0, 1]; 0 draws nothing from the random source. */
struct transport_memory_link_faults {
    double drop_probability;      /* a message is lost */
    double duplicate_probability; /* a message arrives twice */
    double reorder_probability;   /* a message leaves the order */
    uint32_t delay_ms;            /* every message and notice */
    uint32_t jitter_ms;           /* plus uniform [0, jitter_ms] */
    uint32_t reorder_window_ms;   /* a reordered one: plus [0, this] */
};

/* A network with no endpoints and no faults. clock and random are copied,
 * their ctx borrowed until transport_memory_network_free(). 0 or
 * COMMON_ENOMEM; *out is written only on success. */
int transport_memory_network_new(const struct transport_clock *clock,
                                 const struct transport_random *random,
                                 struct transport_memory_network **out);

/* Frees the network and everything in it, endpoints not yet closed
 * included (their transports become invalid; no callback runs, done
 * neither). Never from inside a callback. */
void transport_memory_network_free(struct transport_memory_network *network);

/* A new endpoint with identity self (copied) on network (borrowed; the
 * network owns the endpoint). callbacks are copied (received, connected
 * and disconnected required, writable may be NULL); limits copied, NULL or
 * zero fields for the defaults. 0, TRANSPORT_EADDRESS (an endpoint with
 * that identity is open: close it first), COMMON_ENOMEM. */
int transport_memory_new(struct transport_memory_network *network,
                         const struct transport_node_id *self,
                         const struct transport_callbacks *callbacks,
                         const struct transport_limits *limits,
                         struct transport **out);

/* Runs every event due at or before clock->now_ms() that was scheduled
 * before this call, in (due time, schedule order); returns how many ran
 * (messages lost in a partition and events held for a paused node
 * included). */
size_t transport_memory_network_step(struct transport_memory_network *network);

/* true, with the due time of the earliest pending event in *ms (possibly
 * already past), or false when nothing is pending (held events of paused
 * nodes wait for resume, and do not count). */
bool transport_memory_network_next_due(
    const struct transport_memory_network *network, uint64_t *ms);

/* Sets the faults of the link from node `from` to node `to` (both copied;
 * faults copied), or of every link without its own (default_link). 0,
 * -EINVAL (a probability outside [0, 1]), COMMON_ENOMEM. New faults apply
 * to messages sent from then on. */
int transport_memory_network_set_link(
    struct transport_memory_network *network,
    const struct transport_node_id *from, const struct transport_node_id *to,
    const struct transport_memory_link_faults *faults);
int transport_memory_network_set_default_link(
    struct transport_memory_network *network,
    const struct transport_memory_link_faults *faults);

/* Partitions the link from a to b (and b to a when both_ways), or heals
 * it; heal_all heals every link. Other faults stay. 0 or COMMON_ENOMEM. */
int transport_memory_network_partition(struct transport_memory_network *network,
                                       const struct transport_node_id *a,
                                       const struct transport_node_id *b,
                                       bool both_ways);
int transport_memory_network_heal(struct transport_memory_network *network,
                                  const struct transport_node_id *a,
                                  const struct transport_node_id *b,
                                  bool both_ways);
void transport_memory_network_heal_all(
    struct transport_memory_network *network);

/* Resets the connection between nodes a and b (see above). 0, or
 * TRANSPORT_ENOPEER when they have none. */
int transport_memory_network_reset(struct transport_memory_network *network,
                                   const struct transport_node_id *a,
                                   const struct transport_node_id *b);

/* Pauses node (its identity, copied: a node restarted while paused stays
 * paused), or resumes it. Pausing twice is the same as once. 0 or
 * COMMON_ENOMEM. */
int transport_memory_network_pause(struct transport_memory_network *network,
                                   const struct transport_node_id *node);
void transport_memory_network_resume(struct transport_memory_network *network,
                                     const struct transport_node_id *node);

#endif /* SINEW_TRANSPORT_H */
