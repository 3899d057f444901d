/* SPDX-License-Identifier: MIT
 *
 * Goal: the TCP transport keeps its promises over real sockets: messages
 * arrive whole and in order per connection between two and five endpoints;
 * a peer that restarts on its port is reconnected; a full send queue says
 * EFULL and writable() once drained; exactly one of two crossing
 * connections survives; strangers, impostors and another cluster secret
 * are refused and logged; a tampered frame closes the connection with
 * EPROTO and delivers nothing; oversize messages are refused on send and
 * close the connection on receive; handshake and idle timeouts close;
 * close() releases everything (cmocka's heap and ASan check leaks) and no
 * callback runs after done.
 * Method: every endpoint on one libuv loop over 127.0.0.1 with ports
 * picked by the system. Where a misbehaving peer is needed, the test plays
 * it with a raw socket (a session from session.h driven by hand, a proxy
 * that flips a byte, plaintext framing with a crafted length). Nothing is
 * timed: the loop runs until the expected event, and a generous guard
 * timer only turns a hang into a failure. Message sizes are random from a
 * printed seed.
 */
#include "common_test.h"

#include <string.h>

#include <uv.h>

#include "tcp.h"
#include "transport.h"

#define NODES_MAX 6
#define UNKNOWN NODES_MAX /* index of an id no node has */
#define GUARD_MS 30000
#define LOG_TEXT_SIZE 16384

struct world;

struct node {
    struct world *world;
    int index;
    struct transport_identity identity;
    struct transport *transport;
    struct transport_tcp_config config;
    struct common_log log;
    char address[64];
    bool is_closing;                  /* close() was called */
    bool is_closed;                   /* done ran */
    int connected[NODES_MAX + 1];     /* connected() per sender */
    int disconnected[NODES_MAX + 1];  /* disconnected() per sender */
    int last_reason[NODES_MAX + 1];   /* its last reason */
    int refused[NODES_MAX + 1];       /* dials refused in handshake */
    uint64_t next_seq[NODES_MAX + 1]; /* the next message expected */
    uint64_t received[NODES_MAX + 1]; /* messages received */
    uint64_t sent_seq[NODES_MAX + 1]; /* the next message to send */
    int bad;                          /* wrong order or content, or a
                                         callback after close */
    int writable;
    bool close_on_receive;
    char log_text[LOG_TEXT_SIZE]; /* every line logged */
    size_t log_size;
};

struct world {
    uv_loop_t loop;
    struct node nodes[NODES_MAX];
    size_t count;
    struct transport_node_id authorized[NODES_MAX];
    struct common_test_rng rng;
};

/* ---- the world: nodes, callbacks, running the loop ---- */

static uint64_t world_random(void *ctx)
{
    return common_test_rng_next(ctx);
}

static int world_index_of(struct world *world,
                          const struct transport_node_id *id)
{
    for (size_t i = 0; i < world->count; i++) {
        if (transport_node_id_equal(&world->nodes[i].identity.id, id)) {
            return (int)i;
        }
    }
    return UNKNOWN;
}

static void node_log_emit(void *ctx, int level, const char *file, int line,
                          const char *msg)
{
    struct node *node = ctx;
    int n;

    (void)file;
    (void)line;
    n = snprintf(node->log_text + node->log_size,
                 sizeof(node->log_text) - node->log_size, "%s %s\n",
                 common_log_level_name(level), msg);
    if (n > 0 && node->log_size + (size_t)n < sizeof(node->log_text)) {
        node->log_size += (size_t)n;
    }
}

static bool node_logged(const struct node *node, const char *text)
{
    return strstr(node->log_text, text) != NULL;
}

static void node_close(struct node *node);

static void message_fill(uint8_t *bytes, size_t size, uint64_t seq, int from)
{
    if (size >= 8) {
        common_put_u64le(bytes, seq);
    }
    for (size_t i = 8; i < size; i++) {
        bytes[i] = (uint8_t)(seq * 7 + i + (size_t)from);
    }
}

static bool message_check(const uint8_t *bytes, size_t size, uint16_t type,
                          uint64_t seq, int from)
{
    if (size < 8 || common_get_u64le(bytes) != seq ||
        type != (uint16_t)(seq & 0xffff)) {
        return false;
    }
    for (size_t i = 8; i < size; i++) {
        if (bytes[i] != (uint8_t)(seq * 7 + i + (size_t)from)) {
            return false;
        }
    }
    return true;
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct node *node = ctx;
    int from = world_index_of(node->world, peer);

    if (node->is_closing ||
        !message_check(bytes, size, type, node->next_seq[from], from)) {
        node->bad++;
    }
    node->next_seq[from]++;
    node->received[from]++;
    if (node->close_on_receive) {
        node->close_on_receive = false;
        node_close(node);
    }
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;
    int from = world_index_of(node->world, peer);

    node->bad += node->is_closing;
    /* connected() and disconnected() alternate per peer. */
    node->bad += node->connected[from] != node->disconnected[from];
    node->connected[from]++;
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct node *node = ctx;
    int from = world_index_of(node->world, peer);

    node->bad += node->is_closing;
    node->last_reason[from] = reason;
    if (node->connected[from] == node->disconnected[from]) {
        /* Without connected() first: only a dial refused in its
         * handshake. */
        node->bad += reason != TRANSPORT_EAUTH && reason != TRANSPORT_EPROTO;
        node->refused[from]++;
        return;
    }
    node->bad += node->connected[from] != node->disconnected[from] + 1;
    node->disconnected[from]++;
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;

    (void)peer;
    node->bad += node->is_closing;
    node->writable++;
}

static void world_init(struct world *world, size_t count)
{
    memset(world, 0, sizeof(*world));
    assert_int_equal(uv_loop_init(&world->loop), 0);
    common_test_rng_seed(&world->rng, "transport_tcp");
    world->count = count;
    for (size_t i = 0; i < NODES_MAX; i++) {
        struct node *node = &world->nodes[i];

        node->world = world;
        node->index = (int)i;
        assert_int_equal(transport_identity_generate(&node->identity), 0);
        world->authorized[i] = node->identity.id;
        node->log = (struct common_log){node, COMMON_LOG_DEBUG, node_log_emit};
        node->config = (struct transport_tcp_config){
            .identity = &node->identity,
            .admission = {.authorized = world->authorized,
                          .authorized_count = count},
            .reconnect_min_ms = 10,
            .reconnect_max_ms = 200,
            .random = {world_random, &world->rng},
            .log = &node->log,
        };
    }
}

static void node_start_with(struct node *node, bool plaintext)
{
    struct transport_callbacks callbacks = {
        .received = on_received,
        .connected = on_connected,
        .disconnected = on_disconnected,
        .writable = on_writable,
        .ctx = node,
    };

    node->is_closed = false;
    node->is_closing = false;
    assert_int_equal(transport__tcp_new(&node->world->loop, &node->config,
                                        &callbacks, plaintext,
                                        &node->transport),
                     0);
    if (node->address[0] == '\0') {
        snprintf(node->address, sizeof(node->address), "127.0.0.1:0");
    }
    assert_int_equal(transport_listen(node->transport, node->address), 0);
    assert_int_equal(transport_listen_address(node->transport, node->address,
                                              sizeof(node->address)),
                     0);
}

static void node_start(struct node *node)
{
    node_start_with(node, false);
}

static void node_closed(void *ctx)
{
    struct node *node = ctx;

    node->is_closed = true;
}

static void node_close(struct node *node)
{
    node->is_closing = true;
    if (node->transport != NULL) {
        transport_close(node->transport, node_closed, node);
        node->transport = NULL;
    } else {
        node->is_closed = true;
    }
}

struct until {
    bool (*done)(struct world *world, void *arg);
    void *arg;
};

static void guard_cb(uv_timer_t *timer)
{
    *(bool *)timer->data = true;
}

/* Runs the loop until done holds; false if the guard fired first. */
static bool run_until(struct world *world,
                      bool (*done)(struct world *world, void *arg), void *arg)
{
    uv_timer_t guard;
    bool expired = false;

    uv_timer_init(&world->loop, &guard);
    guard.data = &expired;
    uv_timer_start(&guard, guard_cb, GUARD_MS, 0);
    while (!done(world, arg) && !expired) {
        uv_run(&world->loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&guard, NULL);
    uv_run(&world->loop, UV_RUN_NOWAIT);
    return !expired;
}

static bool all_closed(struct world *world, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < NODES_MAX; i++) {
        if (world->nodes[i].transport != NULL || !world->nodes[i].is_closed) {
            return false;
        }
    }
    return true;
}

/* Closes every node, checks nothing ran after done and the loop is
 * empty, so every handle was closed. */
static void world_close(struct world *world)
{
    for (size_t i = 0; i < NODES_MAX; i++) {
        node_close(&world->nodes[i]);
    }
    assert_true(run_until(world, all_closed, NULL));
    assert_int_equal(uv_run(&world->loop, UV_RUN_DEFAULT), 0);
    for (size_t i = 0; i < NODES_MAX; i++) {
        assert_int_equal(world->nodes[i].bad, 0);
    }
    assert_int_equal(uv_loop_close(&world->loop), 0);
}

static bool pair_connected(struct world *world, void *arg)
{
    const int *pair = arg;
    struct node *a = &world->nodes[pair[0]];
    struct node *b = &world->nodes[pair[1]];

    return a->connected[pair[1]] > a->disconnected[pair[1]] &&
           b->connected[pair[0]] > b->disconnected[pair[0]];
}

static bool mesh_connected(struct world *world, void *arg)
{
    (void)arg;
    for (int i = 0; i < (int)world->count; i++) {
        for (int j = i + 1; j < (int)world->count; j++) {
            int pair[2] = {i, j};

            if (!pair_connected(world, pair)) {
                return false;
            }
        }
    }
    return true;
}

/* Sends count messages of random sizes (up to size_max) from a to b; a
 * message refused with EFULL is retried after the loop ran. */
static void send_many(struct world *world, int a, int b, int count,
                      size_t size_max)
{
    struct node *from = &world->nodes[a];
    uint8_t *bytes = test_malloc(size_max);

    for (int i = 0; i < count; i++) {
        uint64_t seq = from->sent_seq[b];
        size_t size = 8 + common_test_rng_below(&world->rng, size_max - 7);
        int rc;

        message_fill(bytes, size, seq, a);
        rc = transport_send(from->transport, &world->nodes[b].identity.id,
                            (uint16_t)(seq & 0xffff), bytes, size);
        if (rc == TRANSPORT_EFULL) {
            uv_run(&world->loop, UV_RUN_ONCE);
            i--;
            continue;
        }
        assert_int_equal(rc, 0);
        from->sent_seq[b]++;
    }
    test_free(bytes);
}

static bool mesh_delivered(struct world *world, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < world->count; i++) {
        for (size_t j = 0; j < world->count; j++) {
            if (world->nodes[j].received[i] != world->nodes[i].sent_seq[j]) {
                return false;
            }
        }
    }
    return true;
}

/* ---- two and five endpoints ---- */

static void mesh_run(size_t count, int messages, size_t size_max)
{
    struct world world;

    world_init(&world, count);
    for (size_t i = 0; i < count; i++) {
        node_start(&world.nodes[i]);
    }
    /* The smaller index dials, so no crossing connections (tested apart). */
    for (size_t i = 0; i < count; i++) {
        for (size_t j = i + 1; j < count; j++) {
            assert_int_equal(transport_connect(world.nodes[i].transport,
                                               &world.nodes[j].identity.id,
                                               world.nodes[j].address),
                             0);
        }
    }
    assert_true(run_until(&world, mesh_connected, NULL));
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < count; i++) {
            for (size_t j = 0; j < count; j++) {
                if (i != j) {
                    send_many(&world, (int)i, (int)j, messages / 4, size_max);
                }
            }
        }
    }
    assert_true(run_until(&world, mesh_delivered, NULL));
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < count; j++) {
            assert_int_equal(world.nodes[i].disconnected[j], 0);
        }
        assert_int_equal(world.nodes[i].bad, 0);
    }
    world_close(&world);
}

static void tcp_two_endpoints_ordered(void **state)
{
    (void)state;
    mesh_run(2, 2000, 3000);
}

static void tcp_two_endpoints_large_messages(void **state)
{
    (void)state;
    mesh_run(2, 40, 300000);
}

static void tcp_five_endpoints_mesh(void **state)
{
    (void)state;
    mesh_run(5, 400, 2000);
}

/* ---- crossing connections ---- */

static size_t conns_open(struct node *node)
{
    struct transport__tcp *tcp = node->transport->impl;
    size_t count = 0;

    for (struct transport__tcp_conn *c = tcp->conns; c != NULL; c = c->next) {
        count++;
    }
    return count;
}

static bool one_connection_each(struct world *world, void *arg)
{
    return pair_connected(world, arg) && conns_open(&world->nodes[0]) == 1 &&
           conns_open(&world->nodes[1]) == 1;
}

static void tcp_crossing_connections_one_survives(void **state)
{
    struct world world;
    int pair[2] = {0, 1};
    struct transport__tcp *tcp0;
    struct transport__tcp_peer *peer;
    bool zero_smaller;

    (void)state;
    world_init(&world, 2);
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[1].identity.id,
                                       world.nodes[1].address),
                     0);
    assert_int_equal(transport_connect(world.nodes[1].transport,
                                       &world.nodes[0].identity.id,
                                       world.nodes[0].address),
                     0);
    assert_true(run_until(&world, one_connection_each, pair));
    /* The survivor is the one the smaller id dialed. */
    zero_smaller =
        memcmp(world.nodes[0].identity.id.key, world.nodes[1].identity.id.key,
               TRANSPORT_PUBLIC_KEY_BYTES) < 0;
    tcp0 = world.nodes[0].transport->impl;
    peer = transport__tcp_peer_find(tcp0, &world.nodes[1].identity.id);
    assert_non_null(peer);
    assert_non_null(peer->active);
    assert_int_equal(peer->active->is_outbound, zero_smaller);
    send_many(&world, 0, 1, 100, 500);
    send_many(&world, 1, 0, 100, 500);
    assert_true(run_until(&world, mesh_delivered, NULL));
    world_close(&world);
}

/* ---- reconnect ---- */

static bool node_reconnected(struct world *world, void *arg)
{
    struct node *a = &world->nodes[0];

    (void)arg;
    return a->connected[1] == 2 && a->disconnected[1] == 1;
}

static bool node_lost(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[0].disconnected[1] == 1 && world->nodes[1].is_closed;
}

static void tcp_reconnect_after_restart(void **state)
{
    struct world world;
    struct node *b = &world.nodes[1];
    int pair[2] = {0, 1};

    (void)state;
    world_init(&world, 2);
    node_start(&world.nodes[0]);
    node_start(b);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &b->identity.id, b->address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    send_many(&world, 0, 1, 50, 100);
    assert_true(run_until(&world, mesh_delivered, NULL));

    node_close(b);
    assert_true(run_until(&world, node_lost, NULL));
    /* The same identity on the same port, as after a restart; a fresh
     * sequence on both sides, since nothing is known across a loss. */
    memset(b->connected, 0, sizeof(b->connected));
    memset(b->disconnected, 0, sizeof(b->disconnected));
    memset(b->next_seq, 0, sizeof(b->next_seq));
    memset(b->received, 0, sizeof(b->received));
    world.nodes[0].sent_seq[1] = 0;
    node_start(b);
    assert_true(run_until(&world, node_reconnected, NULL));
    send_many(&world, 0, 1, 50, 100);
    assert_true(run_until(&world, mesh_delivered, NULL));
    world_close(&world);
}

/* ---- raw peers: a session driven by hand, or silence ---- */

struct raw {
    struct world *world;
    uv_tcp_t server;
    uv_tcp_t conn;
    bool has_conn;
    bool answers; /* runs a session; else reads and says nothing */
    bool pause_when_established;
    char address[64];
    const struct transport_identity *identity;
    struct transport__session *session;
    struct common_buf reply;
    uint64_t delivered;
    uint64_t next_seq;
    uint64_t bytes_after_handshake;
    int bad;
    int rc;
    bool eof;
};

static void raw_alloc_cb(uv_handle_t *handle, size_t size, uv_buf_t *buf)
{
    (void)handle;
    buf->base = test_malloc(size);
    buf->len = size;
}

static void raw_deliver(void *ctx, uint16_t type, const uint8_t *bytes,
                        size_t size)
{
    struct raw *raw = ctx;

    if (!message_check(bytes, size, type, raw->next_seq, 0)) {
        raw->bad++;
    }
    raw->next_seq++;
    raw->delivered++;
}

static void raw_write_reply(struct raw *raw)
{
    if (raw->reply.size > 0) {
        uv_buf_t buf =
            uv_buf_init((char *)raw->reply.data, (unsigned int)raw->reply.size);

        assert_int_equal(uv_try_write((uv_stream_t *)&raw->conn, &buf, 1),
                         (int)raw->reply.size);
        common_buf_truncate(&raw->reply, 0);
    }
}

static void raw_read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct raw *raw = stream->data;

    if (nread < 0) {
        raw->eof = true;
        uv_read_stop(stream);
    } else if (raw->session != NULL && raw->rc == 0) {
        if (transport__session_established(raw->session)) {
            raw->bytes_after_handshake += (uint64_t)nread;
        }
        raw->rc = transport__session_receive(
            raw->session, (const uint8_t *)buf->base, (size_t)nread,
            &raw->reply, raw_deliver, raw);
        raw_write_reply(raw);
        if (raw->pause_when_established &&
            transport__session_established(raw->session)) {
            raw->pause_when_established = false;
            uv_read_stop(stream);
        }
    }
    test_free(buf->base);
}

static void raw_connection_cb(uv_stream_t *server, int status)
{
    struct raw *raw = server->data;
    struct transport__session_config config = {
        .identity = raw->identity,
        .admission = &raw->world->nodes[0].config.admission,
        .max_message_bytes = TRANSPORT_MESSAGE_MAX_BYTES_DEFAULT,
        .compress_min_bytes = 4096,
    };

    assert_int_equal(status, 0);
    assert_false(raw->has_conn);
    uv_tcp_init(&raw->world->loop, &raw->conn);
    raw->conn.data = raw;
    raw->has_conn = true;
    assert_int_equal(uv_accept(server, (uv_stream_t *)&raw->conn), 0);
    if (raw->answers) {
        assert_int_equal(transport__session_new(&config, &raw->session), 0);
    }
    uv_read_start((uv_stream_t *)&raw->conn, raw_alloc_cb, raw_read_cb);
}

static void raw_listen(struct world *world, struct raw *raw, bool answers,
                       const struct transport_identity *identity)
{
    struct sockaddr_in address;
    struct sockaddr_storage bound;
    int length = sizeof(bound);

    memset(raw, 0, sizeof(*raw));
    raw->world = world;
    raw->answers = answers;
    raw->identity = identity;
    common_buf_init(&raw->reply, SIZE_MAX);
    uv_tcp_init(&world->loop, &raw->server);
    raw->server.data = raw;
    uv_ip4_addr("127.0.0.1", 0, &address);
    assert_int_equal(
        uv_tcp_bind(&raw->server, (const struct sockaddr *)&address, 0), 0);
    assert_int_equal(
        uv_listen((uv_stream_t *)&raw->server, 8, raw_connection_cb), 0);
    uv_tcp_getsockname(&raw->server, (struct sockaddr *)&bound, &length);
    transport__tcp_address_format((const struct sockaddr *)&bound, raw->address,
                                  sizeof(raw->address));
}

static void raw_close(struct raw *raw)
{
    uv_close((uv_handle_t *)&raw->server, NULL);
    if (raw->has_conn) {
        uv_close((uv_handle_t *)&raw->conn, NULL);
    }
    uv_run(&raw->world->loop, UV_RUN_NOWAIT);
    transport__session_free(raw->session);
    common_buf_close(&raw->reply);
}

/* ---- backpressure ---- */

struct fill {
    struct raw *raw;
    uint64_t sent;
};

static bool raw_connected(struct world *world, void *arg)
{
    struct raw *raw = arg;

    return world->nodes[0].connected[1] == 1 && raw->session != NULL &&
           transport__session_established(raw->session);
}

static bool writable_fired(struct world *world, void *arg)
{
    return world->nodes[0].writable > *(int *)arg;
}

static bool raw_has_all(struct world *world, void *arg)
{
    struct fill *fill = arg;

    (void)world;
    return fill->raw->delivered == fill->sent;
}

/* Bytes libuv holds because the socket would block: the kernel is full. */
static size_t kernel_refused(struct node *node, struct node *peer_node)
{
    struct transport__tcp *tcp = node->transport->impl;
    struct transport__tcp_peer *peer =
        transport__tcp_peer_find(tcp, &peer_node->identity.id);

    return uv_stream_get_write_queue_size((uv_stream_t *)&peer->active->handle);
}

static void tcp_backpressure_full_then_writable(void **state)
{
    enum { SIZE = 64 << 10 };
    struct world world;
    struct node *a = &world.nodes[0];
    struct raw raw;
    struct fill fill = {&raw, 0};
    uint8_t *bytes = test_malloc(SIZE);
    int writable_before;
    int rc = 0;

    (void)state;
    world_init(&world, 2);
    a->config.limits.send_queue_max_bytes = 1 << 20;
    a->config.idle_timeout_ms = 600000;
    node_start(a);
    raw_listen(&world, &raw, true, &world.nodes[1].identity);
    raw.pause_when_established = true;
    assert_int_equal(transport_connect(a->transport,
                                       &world.nodes[1].identity.id,
                                       raw.address),
                     0);
    assert_true(run_until(&world, raw_connected, &raw));
    /* The peer reads nothing now: fill the kernel's buffers, then ours. */
    for (int i = 0; i < 100000; i++) {
        message_fill(bytes, SIZE, fill.sent, 0);
        rc = transport_send(a->transport, &world.nodes[1].identity.id,
                            (uint16_t)(fill.sent & 0xffff), bytes, SIZE);
        if (rc == 0) {
            fill.sent++;
            continue;
        }
        assert_int_equal(rc, TRANSPORT_EFULL);
        if (kernel_refused(a, &world.nodes[1]) > 0) {
            break;
        }
        uv_run(&world.loop, UV_RUN_NOWAIT);
    }
    assert_int_equal(rc, TRANSPORT_EFULL);
    assert_true(kernel_refused(a, &world.nodes[1]) > 0);
    writable_before = a->writable;
    for (int i = 0; i < 20; i++) {
        uv_run(&world.loop, UV_RUN_NOWAIT);
    }
    assert_int_equal(a->writable, writable_before);
    assert_int_equal(transport_send(a->transport, &world.nodes[1].identity.id,
                                    0, bytes, SIZE),
                     TRANSPORT_EFULL);
    /* The peer reads again: the queue drains, writable() says so. */
    uv_read_start((uv_stream_t *)&raw.conn, raw_alloc_cb, raw_read_cb);
    assert_true(run_until(&world, writable_fired, &writable_before));
    assert_true(run_until(&world, raw_has_all, &fill));
    assert_int_equal(raw.bad, 0);
    assert_int_equal(raw.rc, 0);
    test_free(bytes);
    raw_close(&raw);
    world_close(&world);
}

/* ---- timeouts ---- */

static bool logged_handshake_timeout(struct world *world, void *arg)
{
    (void)arg;
    return node_logged(&world->nodes[0], "handshake timeout");
}

static void tcp_handshake_timeout(void **state)
{
    struct world world;
    struct node *a = &world.nodes[0];
    struct raw raw;

    (void)state;
    world_init(&world, 2);
    a->config.handshake_timeout_ms = 50;
    node_start(a);
    raw_listen(&world, &raw, false, &world.nodes[1].identity);
    assert_int_equal(transport_connect(a->transport,
                                       &world.nodes[1].identity.id,
                                       raw.address),
                     0);
    assert_true(run_until(&world, logged_handshake_timeout, NULL));
    assert_int_equal(a->connected[1], 0);
    raw_close(&raw);
    world_close(&world);
}

static bool idle_closed(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[0].disconnected[1] == 1;
}

static void tcp_idle_timeout_after_pings(void **state)
{
    struct world world;
    struct node *a = &world.nodes[0];
    struct raw raw;

    (void)state;
    world_init(&world, 2);
    a->config.idle_timeout_ms = 300;
    node_start(a);
    raw_listen(&world, &raw, true, &world.nodes[1].identity);
    assert_int_equal(transport_connect(a->transport,
                                       &world.nodes[1].identity.id,
                                       raw.address),
                     0);
    assert_true(run_until(&world, raw_connected, &raw));
    /* The raw peer never sends: a pings, then gives up on it. */
    assert_true(run_until(&world, idle_closed, NULL));
    assert_int_equal(a->last_reason[1], TRANSPORT_EIO);
    assert_true(node_logged(a, "idle timeout"));
    assert_true(raw.bytes_after_handshake > 0); /* the pings */
    assert_int_equal(raw.delivered, 0);         /* deliver nothing */
    assert_int_equal(raw.rc, 0);
    raw_close(&raw);
    world_close(&world);
}

/* ---- admission: strangers, impostors, another cluster secret ---- */

static bool logged_refusal(struct world *world, void *arg)
{
    return node_logged(&world->nodes[*(int *)arg], "connection refused");
}

static bool logged_abort(struct world *world, void *arg)
{
    return node_logged(&world->nodes[*(int *)arg], "handshake aborted");
}

static void expect_never_connected(struct world *world)
{
    for (size_t i = 0; i < NODES_MAX; i++) {
        for (size_t j = 0; j <= NODES_MAX; j++) {
            assert_int_equal(world->nodes[i].connected[j], 0);
        }
    }
}

/* Node 2 is not in node 0's list (count 2 admits nodes 0 and 1 only). */
static void tcp_stranger_refused(void **state)
{
    struct world world;
    int acceptor = 0;

    (void)state;
    world_init(&world, 2);
    world.nodes[2].config.admission.authorized_count = 3;
    node_start(&world.nodes[0]);
    node_start(&world.nodes[2]);
    assert_int_equal(transport_connect(world.nodes[2].transport,
                                       &world.nodes[0].identity.id,
                                       world.nodes[0].address),
                     0);
    assert_true(run_until(&world, logged_refusal, &acceptor));
    assert_true(node_logged(&world.nodes[0], "address=127.0.0.1:"));
    assert_true(node_logged(&world.nodes[0], "peer failed authentication"));
    /* The stranger's claimed (unproven) identity is in the line. */
    {
        char claimed[TRANSPORT_NODE_ID_TEXT_SIZE + 16];
        char id[TRANSPORT_NODE_ID_TEXT_SIZE];

        transport_node_id_format(&world.nodes[2].identity.id, id);
        snprintf(claimed, sizeof(claimed), "claimed=%s", id);
        assert_true(node_logged(&world.nodes[0], claimed));
    }
    expect_never_connected(&world);
    world_close(&world);
}

/* Node 2 claims node 1's id but holds its own secret. */
static void tcp_impostor_refused(void **state)
{
    struct world world;
    struct node *impostor = &world.nodes[2];
    int acceptor = 0;

    (void)state;
    world_init(&world, 2);
    impostor->identity.id = world.nodes[1].identity.id;
    node_start(&world.nodes[0]);
    node_start(impostor);
    assert_int_equal(transport_connect(impostor->transport,
                                       &world.nodes[0].identity.id,
                                       world.nodes[0].address),
                     0);
    assert_true(run_until(&world, logged_refusal, &acceptor));
    assert_true(node_logged(&world.nodes[0], "peer failed authentication"));
    /* The acceptor never admits it. The impostor itself, as the dialer,
     * may have seen its handshake end (the acceptor proves itself before
     * it checks the dialer's proof): that is the attacker's own view. */
    for (size_t j = 0; j <= NODES_MAX; j++) {
        assert_int_equal(world.nodes[0].connected[j], 0);
        assert_int_equal(world.nodes[0].received[j], 0);
    }
    world_close(&world);
}

/* Node 0 dials node 1's address expecting node 2 there. */
static void tcp_dialed_identity_checked(void **state)
{
    struct world world;
    int dialer = 0;

    (void)state;
    world_init(&world, 3);
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[2].identity.id,
                                       world.nodes[1].address),
                     0);
    assert_true(run_until(&world, logged_refusal, &dialer));
    assert_true(node_logged(&world.nodes[0], "dialed=here"));
    assert_true(node_logged(&world.nodes[0], "expected="));
    assert_int_equal(world.nodes[0].refused[2], 1);
    assert_int_equal(world.nodes[0].last_reason[2], TRANSPORT_EAUTH);
    expect_never_connected(&world);
    world_close(&world);
}

static bool both_logged(struct world *world, void *arg)
{
    int dialer = 1;

    return logged_abort(world, arg) &&
           (logged_refusal(world, &dialer) || logged_abort(world, &dialer));
}

static void tcp_wrong_cluster_secret_refused(void **state)
{
    static const uint8_t secret_a[TRANSPORT_CLUSTER_SECRET_BYTES] = {1};
    static const uint8_t secret_b[TRANSPORT_CLUSTER_SECRET_BYTES] = {2};
    struct world world;
    int acceptor = 0;

    (void)state;
    world_init(&world, 2);
    world.nodes[0].config.admission =
        (struct transport_admission){.cluster_secret = secret_a};
    world.nodes[1].config.admission =
        (struct transport_admission){.cluster_secret = secret_b};
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    assert_int_equal(transport_connect(world.nodes[1].transport,
                                       &world.nodes[0].identity.id,
                                       world.nodes[0].address),
                     0);
    /* The acceptor sees its peer hang up mid-handshake; the dialer cannot
     * open the reply. Either way, each side logs it. */
    assert_true(run_until(&world, both_logged, &acceptor));
    expect_never_connected(&world);
    world_close(&world);
}

static void tcp_same_cluster_secret_admitted(void **state)
{
    static const uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES] = {7};
    struct world world;
    int pair[2] = {0, 1};

    (void)state;
    world_init(&world, 2);
    for (int i = 0; i < 2; i++) {
        world.nodes[i].config.admission =
            (struct transport_admission){.cluster_secret = secret};
        node_start(&world.nodes[i]);
    }
    assert_int_equal(transport_connect(world.nodes[1].transport,
                                       &world.nodes[0].identity.id,
                                       world.nodes[0].address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    send_many(&world, 0, 1, 20, 100);
    send_many(&world, 1, 0, 20, 100);
    assert_true(run_until(&world, mesh_delivered, NULL));
    world_close(&world);
}

/* ---- a proxy that flips one byte after the handshake ---- */

/* hello (69) and proof (80) go from the dialer before its first frame,
 * whose header takes 11 bytes and a 16-byte tag: flip inside the body. */
#define PROXY_FLIP_AT (69 + 80 + 11 + 16 + 4)

struct proxy {
    struct world *world;
    uv_tcp_t server;
    uv_tcp_t down; /* the dialer's connection, accepted */
    uv_tcp_t up;   /* ours to the target */
    uv_connect_t connect_req;
    struct sockaddr_storage target;
    char address[64];
    uint64_t forwarded; /* bytes down -> up */
    bool flipped;
    bool has_conn;
    bool is_closing;
};

struct proxy_write {
    uv_write_t req;
    uint8_t bytes[];
};

static void proxy_write_cb(uv_write_t *req, int status)
{
    (void)status;
    test_free(req);
}

static void proxy_shut(struct proxy *proxy)
{
    if (!proxy->is_closing) {
        proxy->is_closing = true;
        uv_close((uv_handle_t *)&proxy->down, NULL);
        uv_close((uv_handle_t *)&proxy->up, NULL);
    }
}

static void proxy_read_cb(uv_stream_t *stream, ssize_t nread,
                          const uv_buf_t *buf)
{
    struct proxy *proxy = stream->data;
    bool is_down = stream == (uv_stream_t *)&proxy->down;
    uv_stream_t *to =
        is_down ? (uv_stream_t *)&proxy->up : (uv_stream_t *)&proxy->down;
    struct proxy_write *write;
    uv_buf_t out;

    if (nread < 0) {
        proxy_shut(proxy);
    } else if (nread > 0 && !proxy->is_closing) {
        write = test_malloc(sizeof(*write) + (size_t)nread);
        memcpy(write->bytes, buf->base, (size_t)nread);
        if (is_down && !proxy->flipped &&
            proxy->forwarded + (uint64_t)nread > PROXY_FLIP_AT) {
            write->bytes[PROXY_FLIP_AT - proxy->forwarded] ^= 0x20;
            proxy->flipped = true;
        }
        if (is_down) {
            proxy->forwarded += (uint64_t)nread;
        }
        out = uv_buf_init((char *)write->bytes, (unsigned int)nread);
        assert_int_equal(uv_write(&write->req, to, &out, 1, proxy_write_cb), 0);
    }
    test_free(buf->base);
}

static void proxy_connect_cb(uv_connect_t *req, int status)
{
    struct proxy *proxy = req->data;

    assert_int_equal(status, 0);
    uv_read_start((uv_stream_t *)&proxy->down, raw_alloc_cb, proxy_read_cb);
    uv_read_start((uv_stream_t *)&proxy->up, raw_alloc_cb, proxy_read_cb);
}

static void proxy_connection_cb(uv_stream_t *server, int status)
{
    struct proxy *proxy = server->data;

    assert_int_equal(status, 0);
    assert_false(proxy->has_conn);
    proxy->has_conn = true;
    uv_tcp_init(&proxy->world->loop, &proxy->down);
    uv_tcp_init(&proxy->world->loop, &proxy->up);
    proxy->down.data = proxy;
    proxy->up.data = proxy;
    proxy->connect_req.data = proxy;
    assert_int_equal(uv_accept(server, (uv_stream_t *)&proxy->down), 0);
    assert_int_equal(uv_tcp_connect(&proxy->connect_req, &proxy->up,
                                    (const struct sockaddr *)&proxy->target,
                                    proxy_connect_cb),
                     0);
}

static void proxy_listen(struct world *world, struct proxy *proxy,
                         const char *target)
{
    struct sockaddr_in address;
    struct sockaddr_storage bound;
    int length = sizeof(bound);

    memset(proxy, 0, sizeof(*proxy));
    proxy->world = world;
    assert_int_equal(transport__tcp_address_parse(target, &proxy->target), 0);
    uv_tcp_init(&world->loop, &proxy->server);
    proxy->server.data = proxy;
    uv_ip4_addr("127.0.0.1", 0, &address);
    assert_int_equal(
        uv_tcp_bind(&proxy->server, (const struct sockaddr *)&address, 0), 0);
    assert_int_equal(
        uv_listen((uv_stream_t *)&proxy->server, 8, proxy_connection_cb), 0);
    uv_tcp_getsockname(&proxy->server, (struct sockaddr *)&bound, &length);
    transport__tcp_address_format((const struct sockaddr *)&bound,
                                  proxy->address, sizeof(proxy->address));
}

static bool tamper_seen(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[1].disconnected[0] == 1;
}

static void tcp_tampered_frame_closes(void **state)
{
    struct world world;
    struct proxy proxy;
    int pair[2] = {0, 1};
    uint8_t bytes[64];

    (void)state;
    world_init(&world, 2);
    world.nodes[0].config.reconnect_min_ms = 60000; /* dial once */
    world.nodes[0].config.reconnect_max_ms = 60000;
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    proxy_listen(&world, &proxy, world.nodes[1].address);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[1].identity.id,
                                       proxy.address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    for (uint64_t seq = 0; seq < 10; seq++) {
        message_fill(bytes, sizeof(bytes), seq, 0);
        assert_int_equal(transport_send(world.nodes[0].transport,
                                        &world.nodes[1].identity.id,
                                        (uint16_t)seq, bytes, sizeof(bytes)),
                         0);
    }
    assert_true(run_until(&world, tamper_seen, NULL));
    assert_true(proxy.flipped);
    assert_int_equal(world.nodes[1].last_reason[0], TRANSPORT_EPROTO);
    assert_int_equal(world.nodes[1].received[0], 0);
    assert_true(node_logged(&world.nodes[1], "connection refused"));
    assert_true(node_logged(&world.nodes[1], "malformed or tampered frame"));
    uv_close((uv_handle_t *)&proxy.server, NULL);
    proxy_shut(&proxy);
    world_close(&world);
}

/* ---- oversize messages ---- */

static void tcp_oversize_refused_on_send(void **state)
{
    struct world world;
    int pair[2] = {0, 1};
    size_t max = 1000;
    uint8_t bytes[1001] = {0};

    (void)state;
    world_init(&world, 2);
    world.nodes[0].config.limits.max_message_bytes = max;
    world.nodes[1].config.limits.max_message_bytes = max;
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    assert_int_equal(transport_send(world.nodes[0].transport,
                                    &world.nodes[1].identity.id, 1, bytes,
                                    max + 1),
                     TRANSPORT_ETOOBIG);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[1].identity.id,
                                       world.nodes[1].address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    assert_int_equal(transport_send(world.nodes[0].transport,
                                    &world.nodes[1].identity.id, 1, bytes,
                                    max + 1),
                     TRANSPORT_ETOOBIG);
    message_fill(bytes, max, 0, 0);
    assert_int_equal(transport_send(world.nodes[0].transport,
                                    &world.nodes[1].identity.id, 0, bytes, max),
                     0);
    world.nodes[0].sent_seq[1] = 1;
    assert_true(run_until(&world, mesh_delivered, NULL));
    world_close(&world);
}

struct plain_client {
    uv_tcp_t handle;
    uv_connect_t req;
    bool connected;
};

static void plain_connect_cb(uv_connect_t *req, int status)
{
    struct plain_client *client = req->data;

    assert_int_equal(status, 0);
    client->connected = true;
}

static void plain_write(struct plain_client *client, const uint8_t *bytes,
                        size_t size)
{
    uv_buf_t buf = uv_buf_init((char *)bytes, (unsigned int)size);

    assert_int_equal(uv_try_write((uv_stream_t *)&client->handle, &buf, 1),
                     (int)size);
}

static bool plain_connected(struct world *world, void *arg)
{
    (void)world;
    return ((struct plain_client *)arg)->connected;
}

static bool node0_connected_1(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[0].connected[1] == 1;
}

static bool node0_lost_1(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[0].disconnected[1] == 1;
}

/* A node in plaintext framing (the benchmark's) and a raw client that
 * announces node 1's id, then a header claiming a body past the limit. */
static void tcp_oversize_frame_closes(void **state)
{
    struct world world;
    struct plain_client client = {0};
    struct sockaddr_storage address;
    uint8_t hello[37] = {'S', 'N', 'W', 'P', 1};
    uint8_t header[11] = {0};

    (void)state;
    world_init(&world, 2);
    world.nodes[0].config.limits.max_message_bytes = 4096;
    node_start_with(&world.nodes[0], true);
    assert_int_equal(
        transport__tcp_address_parse(world.nodes[0].address, &address), 0);
    uv_tcp_init(&world.loop, &client.handle);
    client.req.data = &client;
    assert_int_equal(uv_tcp_connect(&client.req, &client.handle,
                                    (const struct sockaddr *)&address,
                                    plain_connect_cb),
                     0);
    assert_true(run_until(&world, plain_connected, &client));
    memcpy(hello + 5, world.nodes[1].identity.id.key, 32);
    plain_write(&client, hello, sizeof(hello));
    assert_true(run_until(&world, node0_connected_1, NULL));
    common_put_u32le(header, 1u << 20);     /* body size */
    common_put_u32le(header + 4, 1u << 20); /* payload size */
    plain_write(&client, header, sizeof(header));
    assert_true(run_until(&world, node0_lost_1, NULL));
    assert_int_equal(world.nodes[0].last_reason[1], TRANSPORT_EPROTO);
    assert_true(node_logged(&world.nodes[0], "connection refused"));
    uv_close((uv_handle_t *)&client.handle, NULL);
    world_close(&world);
}

/* ---- closing ---- */

static bool node1_closed(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[1].is_closed;
}

static bool node0_closed(struct world *world, void *arg)
{
    (void)arg;
    return world->nodes[0].is_closed;
}

/* Closing from inside received(): nothing runs after, nothing leaks,
 * while the other side keeps sending and redialing. */
static void tcp_close_inside_callback(void **state)
{
    struct world world;
    int pair[2] = {0, 1};

    (void)state;
    world_init(&world, 2);
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[1].identity.id,
                                       world.nodes[1].address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    world.nodes[1].close_on_receive = true;
    send_many(&world, 0, 1, 200, 3000);
    assert_true(run_until(&world, node1_closed, NULL));
    assert_int_equal(world.nodes[1].received[0], 1);
    world_close(&world);
}

/* Closing with a dial, a handshake and queued writes all in flight. */
static void tcp_close_while_busy(void **state)
{
    struct world world;
    struct raw raw;
    uint8_t bytes[1000] = {0};
    int pair[2] = {0, 1};

    (void)state;
    world_init(&world, 3);
    node_start(&world.nodes[0]);
    node_start(&world.nodes[1]);
    raw_listen(&world, &raw, false, &world.nodes[2].identity);
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[1].identity.id,
                                       world.nodes[1].address),
                     0);
    assert_true(run_until(&world, pair_connected, pair));
    assert_int_equal(transport_connect(world.nodes[0].transport,
                                       &world.nodes[2].identity.id,
                                       raw.address),
                     0);
    for (uint64_t seq = 0; seq < 100; seq++) {
        message_fill(bytes, sizeof(bytes), seq, 0);
        assert_int_equal(transport_send(world.nodes[0].transport,
                                        &world.nodes[1].identity.id,
                                        (uint16_t)seq, bytes, sizeof(bytes)),
                         0);
    }
    node_close(&world.nodes[0]);
    assert_true(run_until(&world, node0_closed, NULL));
    raw_close(&raw);
    world_close(&world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tcp_two_endpoints_ordered),
        cmocka_unit_test(tcp_two_endpoints_large_messages),
        cmocka_unit_test(tcp_five_endpoints_mesh),
        cmocka_unit_test(tcp_crossing_connections_one_survives),
        cmocka_unit_test(tcp_reconnect_after_restart),
        cmocka_unit_test(tcp_backpressure_full_then_writable),
        cmocka_unit_test(tcp_handshake_timeout),
        cmocka_unit_test(tcp_idle_timeout_after_pings),
        cmocka_unit_test(tcp_stranger_refused),
        cmocka_unit_test(tcp_impostor_refused),
        cmocka_unit_test(tcp_dialed_identity_checked),
        cmocka_unit_test(tcp_wrong_cluster_secret_refused),
        cmocka_unit_test(tcp_same_cluster_secret_admitted),
        cmocka_unit_test(tcp_tampered_frame_closes),
        cmocka_unit_test(tcp_oversize_refused_on_send),
        cmocka_unit_test(tcp_oversize_frame_closes),
        cmocka_unit_test(tcp_close_inside_callback),
        cmocka_unit_test(tcp_close_while_busy),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
