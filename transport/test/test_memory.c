/* SPDX-License-Identifier: MIT
 *
 * test_memory.c: the in-memory network (transport.h, "In-memory network").
 *
 * Goal: every promise of the interface holds for two and five endpoints
 * (connect, order per connection, identity check, reconnect after a
 * restart, backpressure, oversize messages, clean close), each fault does
 * what the header says, and a run is a function of its seed.
 *
 * Method: a fake clock that the test advances to the network's next due
 * time, and a splitmix64 source with a fixed seed per test, so every check
 * is exact and every statistical bound was met by a fixed draw (the bounds
 * are still wide, about four standard deviations). Every callback is
 * recorded into a text trace, which the reproducibility tests compare byte
 * for byte; messages carry a sequence number and a pattern that the
 * receiver checks. cmocka's heap catches every leak; one test walks every
 * allocation failure of a whole scenario.
 */
#include "common_test.h"

#include <errno.h>
#include <string.h>

#include "transport.h"

#define NODES_MAX 5
#define TRACE_SIZE_MAX (8u << 20)
#define MESSAGE_SIZE_MAX 4096

struct harness;

/* What one endpoint saw. from[p] counts per sender p. */
struct node {
    struct harness *harness;
    unsigned index;
    struct transport_node_id id;
    struct transport *transport; /* NULL once closed */
    bool up[NODES_MAX];          /* between connected and disconnected */
    unsigned connected[NODES_MAX];
    unsigned disconnected[NODES_MAX];
    int last_reason[NODES_MAX];
    unsigned writable[NODES_MAX];
    uint32_t received[NODES_MAX]; /* messages */
    uint32_t next_seq[NODES_MAX]; /* the next in-order sequence number */
    uint32_t max_seq[NODES_MAX];  /* the highest seen, plus one */
    unsigned out_of_order;        /* messages below the highest seen */
    uint64_t last_arrival_ms;
    uint64_t delay_min_ms; /* arrival - the sender's stamp */
    uint64_t delay_max_ms;
    uint32_t sent_seq[NODES_MAX]; /* what we sent to each peer */
    bool closed;                  /* done ran */
};

struct harness {
    uint64_t now_ms;
    struct common_test_rng rng;      /* the network's random source */
    struct common_test_rng workload; /* the test's own choices */
    struct transport_memory_network *network;
    struct node nodes[NODES_MAX];
    unsigned count;
    bool quiet; /* no trace (the allocation failure test) */
    struct common_buf trace;
};

static uint64_t clock_now(void *ctx)
{
    return ((struct harness *)ctx)->now_ms;
}

static uint64_t random_next(void *ctx)
{
    return common_test_rng_next(&((struct harness *)ctx)->rng);
}

static unsigned peer_index(const struct transport_node_id *peer)
{
    unsigned index = (unsigned)peer->key[0] - 1;

    assert_true(index < NODES_MAX);
    return index;
}

static void trace_add(struct harness *h, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void trace_add(struct harness *h, const char *format, ...)
{
    char line[160];
    va_list args;
    int n;

    if (h->quiet) {
        return;
    }
    va_start(args, format);
    n = vsnprintf(line, sizeof(line), format, args);
    va_end(args);
    assert_true(n > 0 && (size_t)n < sizeof(line));
    assert_int_equal(common_buf_append(&h->trace, line, (size_t)n), 0);
}

/* A message: seq (u32le), the sender's clock (u64le), then bytes that
 * follow from seq, so a torn or mixed-up message shows. */
static void message_fill(uint8_t *bytes, size_t size, uint32_t seq,
                         uint64_t now_ms)
{
    assert_true(size >= 12);
    common_put_u32le(bytes, seq);
    common_put_u64le(bytes + 4, now_ms);
    for (size_t i = 12; i < size; i++) {
        bytes[i] = (uint8_t)(seq * 31u + i);
    }
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct node *node = ctx;
    struct harness *h = node->harness;
    unsigned p = peer_index(peer);
    uint32_t seq;
    uint64_t delay;

    assert_true(node->up[p]);
    assert_int_equal(type, 7);
    assert_true(size >= 12);
    seq = common_get_u32le(bytes);
    delay = h->now_ms - common_get_u64le(bytes + 4);
    for (size_t i = 12; i < size; i++) {
        assert_int_equal(bytes[i], (uint8_t)(seq * 31u + i));
    }
    if (seq + 1 < node->max_seq[p]) { /* a copy of the latest is not */
        node->out_of_order++;
    } else {
        node->max_seq[p] = seq + 1;
    }
    node->next_seq[p] = seq + 1;
    node->received[p]++;
    node->last_arrival_ms = h->now_ms;
    if (delay < node->delay_min_ms) {
        node->delay_min_ms = delay;
    }
    if (delay > node->delay_max_ms) {
        node->delay_max_ms = delay;
    }
    trace_add(h, "%" PRIu64 " n%u recv n%u seq=%" PRIu32 " size=%zu\n",
              h->now_ms, node->index, p, seq, size);
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;
    unsigned p = peer_index(peer);

    assert_false(node->up[p]);
    node->up[p] = true;
    node->connected[p]++;
    node->next_seq[p] = 0;
    node->max_seq[p] = 0;
    node->sent_seq[p] = 0;
    trace_add(node->harness, "%" PRIu64 " n%u up n%u\n", node->harness->now_ms,
              node->index, p);
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct node *node = ctx;
    unsigned p = peer_index(peer);

    /* Alternation: only EAUTH comes without a connected() before it. */
    assert_true(node->up[p] || reason == TRANSPORT_EAUTH);
    node->up[p] = false;
    node->disconnected[p]++;
    node->last_reason[p] = reason;
    trace_add(node->harness, "%" PRIu64 " n%u down n%u reason=%d\n",
              node->harness->now_ms, node->index, p, reason);
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;
    unsigned p = peer_index(peer);

    node->writable[p]++;
    trace_add(node->harness, "%" PRIu64 " n%u writable n%u\n",
              node->harness->now_ms, node->index, p);
}

static void on_closed(void *ctx)
{
    struct node *node = ctx;

    node->closed = true;
    trace_add(node->harness, "%" PRIu64 " n%u closed\n", node->harness->now_ms,
              node->index);
}

static void address_of(unsigned index, char *out)
{
    snprintf(out, 8, "n%u", index);
}

/* A new endpoint for node index, listening on "n<index>". */
static void node_open(struct harness *h, unsigned index,
                      const struct transport_limits *limits)
{
    struct node *node = &h->nodes[index];
    struct transport_callbacks callbacks = {
        .received = on_received,
        .connected = on_connected,
        .disconnected = on_disconnected,
        .writable = on_writable,
        .ctx = node,
    };
    char address[8];

    assert_null(node->transport);
    memset(node, 0, sizeof(*node));
    node->harness = h;
    node->index = index;
    node->id.key[0] = (uint8_t)(index + 1);
    node->delay_min_ms = UINT64_MAX;
    assert_int_equal(transport_memory_new(h->network, &node->id, &callbacks,
                                          limits, &node->transport),
                     0);
    address_of(index, address);
    assert_int_equal(transport_listen(node->transport, address), 0);
}

static void harness_init(struct harness *h, unsigned count, uint64_t seed)
{
    struct transport_clock clock = {.now_ms = clock_now, .ctx = h};
    struct transport_random random = {.next = random_next, .ctx = h};

    memset(h, 0, sizeof(*h));
    h->now_ms = 1000;
    h->rng.state = seed;
    h->workload.state = seed ^ UINT64_C(0x5eed);
    h->count = count;
    common_buf_init(&h->trace, TRACE_SIZE_MAX);
    assert_int_equal(transport_memory_network_new(&clock, &random, &h->network),
                     0);
    for (unsigned i = 0; i < count; i++) {
        node_open(h, i, NULL);
    }
}

/* Steps until nothing is due before until_ms, moving the clock to each
 * next due time; leaves the clock at until_ms. */
static void run_until(struct harness *h, uint64_t until_ms)
{
    uint64_t due_ms;

    for (;;) {
        transport_memory_network_step(h->network);
        if (!transport_memory_network_next_due(h->network, &due_ms) ||
            due_ms > until_ms) {
            break;
        }
        if (due_ms > h->now_ms) {
            h->now_ms = due_ms;
        }
    }
    if (until_ms > h->now_ms) {
        h->now_ms = until_ms;
    }
}

static void run_for(struct harness *h, uint64_t ms)
{
    run_until(h, h->now_ms + ms);
}

static void node_close(struct harness *h, unsigned index)
{
    struct node *node = &h->nodes[index];

    transport_close(node->transport, on_closed, node);
    node->transport = NULL;
    memset(node->up, 0, sizeof(node->up));
}

static void harness_close(struct harness *h)
{
    for (unsigned i = 0; i < h->count; i++) {
        if (h->nodes[i].transport != NULL) {
            node_close(h, i);
        }
    }
    run_for(h, 1);
    for (unsigned i = 0; i < h->count; i++) {
        assert_true(h->nodes[i].closed);
    }
    assert_false(transport_memory_network_next_due(h->network, &h->now_ms));
    transport_memory_network_free(h->network);
    common_buf_close(&h->trace);
}

static void connect_pair(struct harness *h, unsigned from, unsigned to)
{
    char address[8];

    address_of(to, address);
    assert_int_equal(
        transport_connect(h->nodes[from].transport, &h->nodes[to].id, address),
        0);
}

/* Every node keeps a connection to every other one. */
static void connect_all(struct harness *h)
{
    for (unsigned i = 0; i < h->count; i++) {
        for (unsigned j = 0; j < h->count; j++) {
            if (i != j) {
                connect_pair(h, i, j);
            }
        }
    }
}

/* Sends one message of size bytes (>= 12) from node `from` to `to`. */
static int send_one(struct harness *h, unsigned from, unsigned to, size_t size)
{
    static uint8_t bytes[MESSAGE_SIZE_MAX];
    struct node *node = &h->nodes[from];
    int rc;

    assert_true(size <= sizeof(bytes));
    message_fill(bytes, size, node->sent_seq[to], h->now_ms);
    rc = transport_send(node->transport, &h->nodes[to].id, 7, bytes, size);
    if (rc == 0) {
        node->sent_seq[to]++;
    }
    return rc;
}

static void faults_set(struct harness *h, unsigned from, unsigned to,
                       const struct transport_memory_link_faults *faults)
{
    assert_int_equal(
        transport_memory_network_set_link(h->network, &h->nodes[from].id,
                                          &h->nodes[to].id, faults),
        0);
}

/* ---- connecting ---- */

static void test_connect_two(void **state)
{
    struct harness h;
    char address[16];

    (void)state;
    harness_init(&h, 2, 1);
    connect_pair(&h, 1, 0);
    /* Nothing runs inside connect: no callback yet. */
    assert_int_equal(h.nodes[0].connected[1], 0);
    assert_int_equal(send_one(&h, 1, 0, 12), TRANSPORT_ENOPEER);
    run_for(&h, 10);
    assert_true(h.nodes[0].up[1]);
    assert_true(h.nodes[1].up[0]);
    assert_int_equal(send_one(&h, 1, 0, 100), 0);
    assert_int_equal(send_one(&h, 0, 1, 200), 0);
    assert_int_equal(h.nodes[0].received[1], 0); /* not inside send */
    run_for(&h, 10);
    assert_int_equal(h.nodes[0].received[1], 1);
    assert_int_equal(h.nodes[1].received[0], 1);
    assert_int_equal(transport_listen_address(h.nodes[0].transport, address,
                                              sizeof(address)),
                     0);
    assert_string_equal(address, "n0");
    assert_int_equal(transport_listen_address(h.nodes[0].transport, address, 2),
                     COMMON_ETOOBIG);
    harness_close(&h);
}

/* Five endpoints, every pair connected both ways (one connection each),
 * with delay and jitter; many messages of random sizes arrive in order. */
static void test_order_five(void **state)
{
    const struct transport_memory_link_faults faults = {
        .delay_ms = 5,
        .jitter_ms = 20,
    };
    struct harness h;

    (void)state;
    harness_init(&h, 5, 2);
    assert_int_equal(
        transport_memory_network_set_default_link(h.network, &faults), 0);
    connect_all(&h);
    run_for(&h, 100);
    for (unsigned round = 0; round < 200; round++) {
        for (unsigned i = 0; i < 5; i++) {
            for (unsigned j = 0; j < 5; j++) {
                size_t size = 12 + (size_t)common_test_rng_below(
                                       &h.workload, MESSAGE_SIZE_MAX - 11);

                if (i != j) {
                    assert_int_equal(send_one(&h, i, j, size), 0);
                }
            }
        }
        run_for(&h, common_test_rng_below(&h.workload, 3));
    }
    run_for(&h, 100);
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(h.nodes[i].out_of_order, 0);
        for (unsigned j = 0; j < 5; j++) {
            if (i != j) {
                assert_int_equal(h.nodes[i].connected[j], 1);
                assert_int_equal(h.nodes[i].received[j], 200);
                assert_int_equal(h.nodes[i].next_seq[j], 200);
            }
        }
    }
    harness_close(&h);
}

/* Dialing "n0" expecting node 2's key reaches node 0: never connects,
 * reported as EAUTH, retried with backoff. */
static void test_identity_mismatch(void **state)
{
    struct harness h;

    (void)state;
    harness_init(&h, 3, 3);
    assert_int_equal(
        transport_connect(h.nodes[1].transport, &h.nodes[2].id, "n0"), 0);
    run_for(&h, 1);
    assert_int_equal(h.nodes[1].disconnected[2], 1);
    assert_int_equal(h.nodes[1].last_reason[2], TRANSPORT_EAUTH);
    run_for(&h, 5000);
    assert_true(h.nodes[1].disconnected[2] >= 3);
    assert_true(h.nodes[1].disconnected[2] <= 12);
    for (unsigned i = 0; i < 3; i++) {
        for (unsigned j = 0; j < 3; j++) {
            assert_int_equal(h.nodes[i].connected[j], 0);
        }
    }
    transport_forget(h.nodes[1].transport, &h.nodes[2].id);
    harness_close(&h);
}

/* Node 0 restarts (closed, then a new endpoint with its identity): node 1
 * hears disconnected(0), then reconnects after its backoff. */
static void test_restart(void **state)
{
    struct harness h;

    (void)state;
    harness_init(&h, 2, 4);
    connect_pair(&h, 1, 0);
    run_for(&h, 10);
    assert_true(h.nodes[1].up[0]);
    node_close(&h, 0);
    assert_int_equal(send_one(&h, 1, 0, 12), TRANSPORT_ENOPEER);
    run_for(&h, 1);
    assert_true(h.nodes[0].closed);
    assert_int_equal(h.nodes[1].disconnected[0], 1);
    assert_int_equal(h.nodes[1].last_reason[0], 0);
    node_open(&h, 0, NULL);
    run_for(&h, 200);
    assert_int_equal(h.nodes[1].connected[0], 2);
    assert_true(h.nodes[0].up[1]);
    assert_int_equal(send_one(&h, 1, 0, 40), 0);
    assert_int_equal(send_one(&h, 0, 1, 40), 0);
    run_for(&h, 1);
    assert_int_equal(h.nodes[0].received[1], 1);
    assert_int_equal(h.nodes[1].received[0], 1);
    harness_close(&h);
}

/* ---- limits ---- */

static void test_backpressure(void **state)
{
    const struct transport_memory_link_faults slow = {.delay_ms = 10};
    const struct transport_limits limits = {.send_queue_max_bytes = 1000};
    struct harness h;
    unsigned sent = 0;
    int rc;

    (void)state;
    harness_init(&h, 1, 5);
    h.count = 2;
    node_open(&h, 1, &limits);
    faults_set(&h, 1, 0, &slow);
    connect_pair(&h, 1, 0);
    run_for(&h, 50);
    while ((rc = send_one(&h, 1, 0, 100)) == 0) {
        sent++;
        h.now_ms++; /* one a millisecond: they drain one by one */
    }
    assert_int_equal(rc, TRANSPORT_EFULL);
    assert_int_equal(sent, 10);
    assert_int_equal(h.nodes[1].writable[0], 0);
    /* Below half: 5 of 10 arrived (sent at t..t+9, due 10 later). */
    run_until(&h, h.now_ms);
    run_for(&h, 5);
    assert_int_equal(h.nodes[1].writable[0], 1);
    assert_true(h.nodes[0].received[1] >= 6);
    assert_int_equal(send_one(&h, 1, 0, 100), 0);
    run_for(&h, 50);
    assert_int_equal(h.nodes[0].received[1], 11);
    assert_int_equal(h.nodes[1].writable[0], 1);
    harness_close(&h);
}

static void test_oversize(void **state)
{
    const struct transport_limits big = {.max_message_bytes = 2000};
    const struct transport_limits small = {.max_message_bytes = 1000};
    struct harness h;

    (void)state;
    harness_init(&h, 0, 6);
    h.count = 2;
    node_open(&h, 0, &small);
    node_open(&h, 1, &big);
    connect_pair(&h, 1, 0);
    run_for(&h, 10);
    assert_int_equal(send_one(&h, 0, 1, 1001), TRANSPORT_ETOOBIG);
    assert_int_equal(send_one(&h, 0, 1, 1000), 0);
    assert_int_equal(send_one(&h, 1, 0, 1000), 0);
    /* Within the sender's limit, over the receiver's: the connection ends. */
    assert_int_equal(send_one(&h, 1, 0, 1500), 0);
    run_for(&h, 1);
    assert_int_equal(h.nodes[1].received[0], 1);
    assert_int_equal(h.nodes[0].received[1], 1);
    assert_int_equal(h.nodes[0].last_reason[1], TRANSPORT_EPROTO);
    assert_int_equal(h.nodes[1].last_reason[0], TRANSPORT_EIO);
    /* Node 1 keeps the connection: back after its backoff. */
    run_for(&h, 200);
    assert_true(h.nodes[1].up[0]);
    harness_close(&h);
}

/* Calls refused, and close: callbacks stop, done runs at the next step. */
static void test_errors_and_close(void **state)
{
    struct harness h;
    struct transport *other;
    const struct transport_callbacks callbacks = {
        .received = on_received,
        .connected = on_connected,
        .disconnected = on_disconnected,
        .ctx = NULL,
    };
    const struct transport_memory_link_faults bad = {.drop_probability = 1.5};

    (void)state;
    harness_init(&h, 2, 7);
    assert_int_equal(transport_memory_new(h.network, &h.nodes[0].id, &callbacks,
                                          NULL, &other),
                     TRANSPORT_EADDRESS);
    assert_int_equal(transport_listen(h.nodes[1].transport, "n0"),
                     TRANSPORT_EADDRESS);
    assert_int_equal(transport_listen(h.nodes[1].transport, "again"),
                     TRANSPORT_EADDRESS);
    assert_int_equal(
        transport_connect(h.nodes[1].transport, &h.nodes[1].id, "n0"),
        TRANSPORT_EADDRESS);
    assert_int_equal(
        transport_connect(h.nodes[1].transport, &h.nodes[0].id, ""),
        TRANSPORT_EADDRESS);
    assert_int_equal(transport_memory_network_set_default_link(h.network, &bad),
                     -EINVAL);
    assert_int_equal(transport_memory_network_reset(h.network, &h.nodes[0].id,
                                                    &h.nodes[1].id),
                     TRANSPORT_ENOPEER);
    connect_pair(&h, 0, 1);
    run_for(&h, 10);
    assert_int_equal(send_one(&h, 0, 1, 12), 0);
    assert_int_equal(send_one(&h, 1, 0, 12), 0);
    transport_close(h.nodes[0].transport, on_closed, &h.nodes[0]);
    assert_int_equal(send_one(&h, 0, 1, 12), TRANSPORT_ECLOSED);
    assert_int_equal(transport_listen(h.nodes[0].transport, "x"),
                     TRANSPORT_ECLOSED);
    h.nodes[0].transport = NULL;
    assert_false(h.nodes[0].closed);
    run_for(&h, 10);
    assert_true(h.nodes[0].closed);
    /* Node 0 heard nothing after close: not the message, not the end. */
    assert_int_equal(h.nodes[0].received[1], 0);
    assert_int_equal(h.nodes[0].disconnected[1], 0);
    assert_int_equal(h.nodes[1].disconnected[0], 1);
    harness_close(&h);
}

/* An endpoint left open is freed with the network; no callback runs. */
static void test_free_with_open_endpoints(void **state)
{
    struct harness h;
    const struct transport_memory_link_faults slow = {.delay_ms = 50};

    (void)state;
    harness_init(&h, 3, 8);
    assert_int_equal(
        transport_memory_network_set_default_link(h.network, &slow), 0);
    connect_all(&h);
    run_for(&h, 200);
    assert_int_equal(send_one(&h, 0, 1, 100), 0);
    assert_int_equal(transport_memory_network_reset(h.network, &h.nodes[0].id,
                                                    &h.nodes[2].id),
                     0);
    assert_int_equal(transport_memory_network_pause(h.network, &h.nodes[2].id),
                     0);
    run_for(&h, 1);
    transport_memory_network_free(h.network);
    common_buf_close(&h.trace);
}

/* ---- faults ---- */

/* n messages from node 0 to node 1, one a millisecond, then 1 s to land. */
static void stream(struct harness *h, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(send_one(h, 0, 1, 12 + i % 64), 0);
        run_for(h, 1);
    }
    run_for(h, 1000);
}

static void test_drop(void **state)
{
    const struct transport_memory_link_faults faults = {.drop_probability =
                                                            0.3};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 9);
    faults_set(&h, 0, 1, &faults);
    connect_pair(&h, 0, 1);
    run_for(&h, 10);
    stream(&h, 1000);
    /* 700 expected, sd 14.5. */
    assert_true(h.nodes[1].received[0] >= 640);
    assert_true(h.nodes[1].received[0] <= 760);
    assert_int_equal(h.nodes[1].out_of_order, 0);
    assert_int_equal(h.nodes[1].connected[0], 1);
    harness_close(&h);
}

static void test_delay(void **state)
{
    const struct transport_memory_link_faults faults = {.delay_ms = 20,
                                                        .jitter_ms = 10};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 10);
    faults_set(&h, 0, 1, &faults);
    connect_pair(&h, 0, 1);
    run_for(&h, 100);
    stream(&h, 500);
    assert_int_equal(h.nodes[1].received[0], 500);
    assert_int_equal(h.nodes[1].out_of_order, 0);
    assert_true(h.nodes[1].delay_min_ms >= 20);
    assert_true(h.nodes[1].delay_min_ms <= 22);
    assert_true(h.nodes[1].delay_max_ms <= 30);
    assert_true(h.nodes[1].delay_max_ms >= 28);
    harness_close(&h);
}

static void test_duplicate(void **state)
{
    const struct transport_memory_link_faults faults = {
        .duplicate_probability = 0.2, .delay_ms = 1, .jitter_ms = 5};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 11);
    faults_set(&h, 0, 1, &faults);
    connect_pair(&h, 0, 1);
    run_for(&h, 100);
    stream(&h, 1000);
    /* 1200 expected, sd 12.6; copies come right after their original. */
    assert_true(h.nodes[1].received[0] >= 1150);
    assert_true(h.nodes[1].received[0] <= 1250);
    assert_int_equal(h.nodes[1].out_of_order, 0);
    assert_int_equal(h.nodes[1].max_seq[0], 1000);
    harness_close(&h);
}

static void test_reorder(void **state)
{
    const struct transport_memory_link_faults faults = {
        .reorder_probability = 0.2, .reorder_window_ms = 50, .delay_ms = 1};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 12);
    faults_set(&h, 0, 1, &faults);
    connect_pair(&h, 0, 1);
    run_for(&h, 100);
    stream(&h, 1000);
    /* Everything once, but some overtaken. */
    assert_int_equal(h.nodes[1].received[0], 1000);
    assert_true(h.nodes[1].out_of_order >= 100);
    assert_true(h.nodes[1].delay_max_ms <= 51);
    harness_close(&h);
}

static void test_partition_one_way(void **state)
{
    struct harness h;

    (void)state;
    harness_init(&h, 2, 13);
    connect_pair(&h, 0, 1);
    run_for(&h, 10);
    assert_int_equal(transport_memory_network_partition(
                         h.network, &h.nodes[0].id, &h.nodes[1].id, false),
                     0);
    for (unsigned i = 0; i < 10; i++) {
        assert_int_equal(send_one(&h, 0, 1, 20), 0);
        assert_int_equal(send_one(&h, 1, 0, 20), 0);
    }
    run_for(&h, 100);
    assert_int_equal(h.nodes[1].received[0], 0);
    assert_int_equal(h.nodes[0].received[1], 10);
    assert_true(h.nodes[0].up[1]);
    assert_int_equal(transport_memory_network_heal(h.network, &h.nodes[0].id,
                                                   &h.nodes[1].id, false),
                     0);
    assert_int_equal(send_one(&h, 0, 1, 20), 0);
    run_for(&h, 10);
    assert_int_equal(h.nodes[1].received[0], 1);
    assert_int_equal(h.nodes[1].next_seq[0], 11);
    harness_close(&h);
}

/* A both-ways partition plus a reset: no reconnect while it lasts, one
 * after it heals. */
static void test_partition_reset_heal(void **state)
{
    struct harness h;

    (void)state;
    harness_init(&h, 3, 14);
    connect_all(&h);
    run_for(&h, 10);
    assert_int_equal(transport_memory_network_partition(
                         h.network, &h.nodes[0].id, &h.nodes[1].id, true),
                     0);
    assert_int_equal(transport_memory_network_reset(h.network, &h.nodes[1].id,
                                                    &h.nodes[0].id),
                     0);
    run_for(&h, 20000);
    assert_int_equal(h.nodes[0].connected[1], 1);
    assert_int_equal(h.nodes[0].disconnected[1], 1);
    assert_int_equal(h.nodes[1].last_reason[0], TRANSPORT_EIO);
    assert_false(h.nodes[0].up[1]);
    assert_true(h.nodes[0].up[2]);
    assert_true(h.nodes[1].up[2]);
    transport_memory_network_heal_all(h.network);
    /* The backoff is capped at 10 s. */
    run_for(&h, TRANSPORT_MEMORY_RECONNECT_MAX_MS + 100);
    assert_true(h.nodes[0].up[1]);
    assert_true(h.nodes[1].up[0]);
    assert_int_equal(h.nodes[0].connected[1], 2);
    harness_close(&h);
}

static void test_pause(void **state)
{
    const struct transport_memory_link_faults faults = {.delay_ms = 3,
                                                        .jitter_ms = 5};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 15);
    assert_int_equal(
        transport_memory_network_set_default_link(h.network, &faults), 0);
    connect_pair(&h, 0, 1);
    run_for(&h, 100);
    assert_int_equal(transport_memory_network_pause(h.network, &h.nodes[1].id),
                     0);
    for (unsigned i = 0; i < 20; i++) {
        assert_int_equal(send_one(&h, 0, 1, 100), 0);
        run_for(&h, 1);
    }
    run_for(&h, 1000);
    assert_int_equal(h.nodes[1].received[0], 0);
    assert_true(h.nodes[0].up[1]);
    assert_false(transport_memory_network_next_due(h.network, &h.now_ms));
    transport_memory_network_resume(h.network, &h.nodes[1].id);
    run_for(&h, 0);
    assert_int_equal(h.nodes[1].received[0], 20);
    assert_int_equal(h.nodes[1].out_of_order, 0);
    assert_int_equal(h.nodes[1].last_arrival_ms, h.now_ms);
    harness_close(&h);
}

/* Reset with messages in flight: both ends down, none of them arrives
 * later, and the kept connection comes back for new ones. */
static void test_reset(void **state)
{
    const struct transport_memory_link_faults faults = {.delay_ms = 50};
    struct harness h;

    (void)state;
    harness_init(&h, 2, 16);
    assert_int_equal(
        transport_memory_network_set_default_link(h.network, &faults), 0);
    connect_pair(&h, 0, 1);
    run_for(&h, 200);
    for (unsigned i = 0; i < 10; i++) {
        assert_int_equal(send_one(&h, 0, 1, 30), 0);
        assert_int_equal(send_one(&h, 1, 0, 30), 0);
    }
    run_for(&h, 10);
    assert_int_equal(transport_memory_network_reset(h.network, &h.nodes[0].id,
                                                    &h.nodes[1].id),
                     0);
    run_for(&h, 1);
    assert_int_equal(h.nodes[0].last_reason[1], TRANSPORT_EIO);
    assert_int_equal(h.nodes[1].last_reason[0], TRANSPORT_EIO);
    run_for(&h, 1000);
    assert_int_equal(h.nodes[0].received[1], 0);
    assert_int_equal(h.nodes[1].received[0], 0);
    assert_int_equal(h.nodes[0].connected[1], 2);
    assert_int_equal(send_one(&h, 0, 1, 30), 0);
    run_for(&h, 100);
    assert_int_equal(h.nodes[1].received[0], 1);
    assert_int_equal(h.nodes[1].next_seq[0], 1);
    harness_close(&h);
}

/* ---- reproducibility ---- */

static const struct transport_memory_link_faults chaos_faults = {
    .drop_probability = 0.05,
    .duplicate_probability = 0.05,
    .reorder_probability = 0.05,
    .delay_ms = 2,
    .jitter_ms = 30,
    .reorder_window_ms = 40,
};

/* One step of the workload: mostly sends, sometimes a fault. Errors are
 * expected (no connection, queue full) and recorded. */
static void chaos_act(struct harness *h)
{
    unsigned a = (unsigned)common_test_rng_below(&h->workload, h->count);
    unsigned b = (unsigned)common_test_rng_below(&h->workload, h->count);
    uint64_t what = common_test_rng_below(&h->workload, 100);
    int rc = 0;

    if (a == b) {
        return;
    }
    if (what < 90) {
        rc = send_one(h, a, b, 12 + (size_t)(what * 13));
    } else if (what < 93) {
        rc = transport_memory_network_reset(h->network, &h->nodes[a].id,
                                            &h->nodes[b].id);
    } else if (what < 95) {
        rc = transport_memory_network_partition(h->network, &h->nodes[a].id,
                                                &h->nodes[b].id, what == 93);
    } else if (what < 97) {
        transport_memory_network_heal_all(h->network);
    } else if (what < 99) {
        rc = transport_memory_network_pause(h->network, &h->nodes[a].id);
    } else {
        transport_memory_network_resume(h->network, &h->nodes[a].id);
    }
    trace_add(h, "%" PRIu64 " act %" PRIu64 " n%u n%u rc=%d\n", h->now_ms, what,
              a, b, rc);
}

/* Runs the chaos scenario with seed; the trace is left in *trace. */
static void chaos_run(uint64_t seed, struct common_buf *trace)
{
    struct harness h;

    harness_init(&h, 5, seed);
    assert_int_equal(
        transport_memory_network_set_default_link(h.network, &chaos_faults), 0);
    connect_all(&h);
    for (unsigned i = 0; i < 3000; i++) {
        chaos_act(&h);
        run_for(&h, common_test_rng_below(&h.workload, 4));
    }
    for (unsigned i = 0; i < 5; i++) {
        transport_memory_network_resume(h.network, &h.nodes[i].id);
    }
    transport_memory_network_heal_all(h.network);
    run_for(&h, 30000);
    /* Whatever happened, every pair is connected again at the end. */
    for (unsigned i = 0; i < 5; i++) {
        for (unsigned j = 0; j < 5; j++) {
            assert_true(i == j || h.nodes[i].up[j]);
        }
    }
    *trace = h.trace;
    common_buf_init(&h.trace, TRACE_SIZE_MAX);
    harness_close(&h);
}

static void test_reproducible(void **state)
{
    struct common_buf first;
    struct common_buf second;
    struct common_buf other;

    (void)state;
    chaos_run(42, &first);
    chaos_run(42, &second);
    chaos_run(43, &other);
    assert_true(first.size > 10000);
    assert_int_equal(first.size, second.size);
    assert_memory_equal(first.data, second.data, first.size);
    assert_true(other.size != first.size ||
                memcmp(other.data, first.data, first.size) != 0);
    common_buf_close(&first);
    common_buf_close(&second);
    common_buf_close(&other);
}

/* The same scenario seeded from SINEW_TEST_SEED (or the clock), printed,
 * so other schedules get exercised too. */
static void test_chaos_random_seed(void **state)
{
    struct common_test_rng seed;
    struct common_buf trace;

    (void)state;
    common_test_rng_seed(&seed, "transport_memory chaos");
    chaos_run(seed.state, &trace);
    common_buf_close(&trace);
}

/* ---- allocation failures ---- */

/* Opens three endpoints, tolerating allocation failures. */
static void oom_open(struct harness *h)
{
    for (unsigned i = 0; i < 3; i++) {
        struct node *node = &h->nodes[i];
        struct transport_callbacks callbacks = {
            .received = on_received,
            .connected = on_connected,
            .disconnected = on_disconnected,
            .writable = on_writable,
            .ctx = node,
        };
        char address[8];

        node->harness = h;
        node->index = i;
        node->id.key[0] = (uint8_t)(i + 1);
        if (transport_memory_new(h->network, &node->id, &callbacks, NULL,
                                 &node->transport) == 0) {
            address_of(i, address);
            assert_int_equal(transport_listen(node->transport, address), 0);
        }
    }
}

/* A scenario touching every allocation (network, endpoints, dials,
 * connections, messages and copies, link and pause tables), tolerant of
 * COMMON_ENOMEM anywhere; run with each allocation failing in turn, it
 * must neither crash nor leak. Returns the allocations it made. */
static uint64_t oom_scenario(uint64_t fail_at)
{
    const struct transport_memory_link_faults faults = {
        .duplicate_probability = 0.5, .delay_ms = 3, .jitter_ms = 3};
    struct common_heap_fault fault;
    struct common_heap saved;
    struct common_heap heap;
    struct harness h;
    struct transport_clock clock = {.now_ms = clock_now, .ctx = &h};
    struct transport_random random = {.next = random_next, .ctx = &h};

    memset(&h, 0, sizeof(h));
    h.quiet = true;
    h.count = 3;
    h.rng.state = 99;
    common_heap_get(&saved);
    common_heap_fault_init(&fault, fail_at, 1);
    heap = common_heap_fault_heap(&fault);
    common_heap_set(&heap);
    if (transport_memory_network_new(&clock, &random, &h.network) == 0) {
        oom_open(&h);
        for (unsigned i = 0; i < 3; i++) {
            for (unsigned j = 0; j < 3; j++) {
                char address[8];

                address_of(j, address);
                if (i != j && h.nodes[i].transport != NULL) {
                    (void)transport_connect(h.nodes[i].transport,
                                            &h.nodes[j].id, address);
                }
            }
        }
        (void)transport_memory_network_set_link(h.network, &h.nodes[0].id,
                                                &h.nodes[1].id, &faults);
        run_for(&h, 50);
        for (unsigned k = 0; k < 4; k++) {
            for (unsigned i = 0; i < 3; i++) {
                if (h.nodes[i].transport != NULL) {
                    (void)send_one(&h, i, (i + 1) % 3, 40);
                }
            }
        }
        (void)transport_memory_network_pause(h.network, &h.nodes[2].id);
        (void)transport_memory_network_partition(h.network, &h.nodes[1].id,
                                                 &h.nodes[2].id, true);
        run_for(&h, 5);
        (void)transport_memory_network_reset(h.network, &h.nodes[0].id,
                                             &h.nodes[1].id);
        transport_memory_network_resume(h.network, &h.nodes[2].id);
        transport_memory_network_heal_all(h.network);
        run_for(&h, 500);
        for (unsigned i = 0; i < 3; i++) {
            if (h.nodes[i].transport != NULL) {
                node_close(&h, i);
            }
        }
        run_for(&h, 1);
        transport_memory_network_free(h.network);
    }
    common_heap_set(&saved);
    return fault.allocations;
}

static void test_allocation_failures(void **state)
{
    uint64_t allocations;

    (void)state;
    allocations = oom_scenario(0);
    assert_true(allocations > 20);
    for (uint64_t fail_at = 1; fail_at <= allocations; fail_at++) {
        oom_scenario(fail_at);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_two),
        cmocka_unit_test(test_order_five),
        cmocka_unit_test(test_identity_mismatch),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_backpressure),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_errors_and_close),
        cmocka_unit_test(test_free_with_open_endpoints),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_delay),
        cmocka_unit_test(test_duplicate),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_partition_one_way),
        cmocka_unit_test(test_partition_reset_heal),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_chaos_random_seed),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
