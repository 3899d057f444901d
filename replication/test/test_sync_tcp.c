/* SPDX-License-Identifier: MIT
 *
 * Goal: replication works over the real network as it does over the
 * simulated one: a commit reaches the peers by broadcast; concurrent
 * updates of one cell converge to the larger (hlc, site) (crdt.md §5 #1);
 * a node closed and reopened on its database file catches up and ships
 * what it wrote before it reconnected; in leader mode followers follow the
 * writer and refuse their own writes.
 *
 * Method: three nodes in one process on one libuv loop, each an engine
 * database, a TCP transport (transport_tcp_new) listening on 127.0.0.1
 * with a port picked by the system, admitted by a shared cluster secret
 * (real sockets, real handshake and encryption), and a struct replication.
 * The test plays the embedding program (replication.h, "How it runs"): it
 * forwards the transport's callbacks, and a uv timer per node calls
 * replication_tick() at the time the last tick asked for, right after each
 * local commit, and at the loop's next turn after a message arrives. The clock
 * is the wall clock. Nothing is timed: the loop runs until the expected state
 * holds, and a 10 s guard turns a hang into a failure. Node i's site id is 16
 * bytes of 0x11 * (i + 1), so the site order is the node order. The libuv loop
 * is the one handle an embedder owns (docs/architecture.md), hence this test's
 * libuv link.
 */
#include "common_test.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "engine.h"
#include "replication.h"
#include "transport.h"

#define NODES 3
#define GUARD_MS 10000
#define SYNC_INTERVAL_MS 100

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');";

struct world;

struct node {
    struct world *world;
    unsigned index;
    struct transport_identity identity;
    char address[64];
    char path[512]; /* "" for a database in memory */
    struct engine_db *db;
    struct transport *transport;
    struct replication *replication;
    uv_timer_t timer;      /* the next replication_tick() */
    bool transport_done;   /* its close() finished */
    uint64_t writer_epoch; /* leader mode: > 0 while the writer */
    char last_error[256];  /* exec_rc()'s message */
};

struct world {
    uv_loop_t loop;
    struct node nodes[NODES];
    enum replication_mode mode;
    uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES];
    char dir[256]; /* the databases' directory; "" in memory */
};

static struct world world;

/* ---- the embedding: clock, callbacks, ticks ---- */

static uint64_t wall_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int site_bytes(void *ctx, uint8_t *out, size_t size)
{
    memset(out, (int)(0x11 * (((struct node *)ctx)->index + 1)), size);
    return 0;
}

static bool is_writer(void *ctx, uint64_t *epoch)
{
    struct node *node = ctx;

    *epoch = node->writer_epoch;
    return node->writer_epoch > 0;
}

static void tick(struct node *node);

static void timer_cb(uv_timer_t *timer)
{
    tick(timer->data);
}

/* Ticks node and sets its timer for when the tick asked. */
static void tick(struct node *node)
{
    uint64_t next = 0, now;

    if (node->replication == NULL) {
        return;
    }
    (void)replication_tick(node->replication, &next);
    now = wall_ms(NULL);
    uv_timer_start(&node->timer, timer_cb, next > now ? next - now : 0, 0);
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct node *node = ctx;

    if (node->replication != NULL && type >= REPLICATION_MESSAGE_FIRST &&
        type <= REPLICATION_MESSAGE_LAST) {
        replication_received(node->replication, peer, type, bytes, size);
        /* Tick after receiving (replication.h): at the loop's next turn,
         * so a burst of messages is one tick. */
        uv_timer_start(&node->timer, timer_cb, 0, 0);
    }
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;

    if (node->replication != NULL) {
        replication_connected(node->replication, peer);
    }
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct node *node = ctx;

    (void)reason;
    if (node->replication != NULL) {
        replication_disconnected(node->replication, peer);
    }
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct node *node = ctx;

    if (node->replication != NULL) {
        replication_writable(node->replication, peer);
    }
}

/* ---- nodes ---- */

static void world_init(enum replication_mode mode, bool files)
{
    const char *tmp = getenv("TMPDIR");

    memset(&world, 0, sizeof(world));
    assert_int_equal(uv_loop_init(&world.loop), 0);
    world.mode = mode;
    memset(world.secret, 0x5c, sizeof(world.secret));
    if (files) {
        snprintf(world.dir, sizeof(world.dir), "%s/sinew-tcp-XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        assert_non_null(mkdtemp(world.dir));
    }
    for (unsigned i = 0; i < NODES; i++) {
        struct node *node = &world.nodes[i];

        node->world = &world;
        node->index = i;
        assert_int_equal(transport_identity_generate(&node->identity), 0);
        snprintf(node->address, sizeof(node->address), "127.0.0.1:0");
        if (files) {
            snprintf(node->path, sizeof(node->path), "%s/n%u.sinew", world.dir,
                     i);
        }
        assert_int_equal(uv_timer_init(&world.loop, &node->timer), 0);
        node->timer.data = node;
        node->transport_done = true;
    }
}

static void open_transport(struct node *node)
{
    const struct transport_callbacks callbacks = {
        .received = on_received,
        .connected = on_connected,
        .disconnected = on_disconnected,
        .writable = on_writable,
        .ctx = node,
    };
    const struct transport_tcp_config config = {
        .identity = &node->identity,
        .admission = {.cluster_secret = world.secret},
        .reconnect_min_ms = 10,
        .reconnect_max_ms = 200,
    };

    assert_int_equal(
        transport_tcp_new(&world.loop, &config, &callbacks, &node->transport),
        0);
    node->transport_done = false;
    /* Port 0 the first time; the same port when restarted. */
    assert_int_equal(transport_listen(node->transport, node->address), 0);
    assert_int_equal(transport_listen_address(node->transport, node->address,
                                              sizeof(node->address)),
                     0);
}

/* Opens node i's database (a new one gets the schema), transport and
 * replication, and ticks it once. */
static void node_start(unsigned i)
{
    struct node *node = &world.nodes[i];
    struct replication_config config = {0};
    bool fresh = node->path[0] == '\0' || access(node->path, F_OK) != 0;

    assert_int_equal(
        engine_open(node->path[0] != '\0' ? node->path : NULL, &node->db), 0);
    if (fresh) {
        assert_int_equal(engine_exec(node->db, schema, NULL, NULL), 0);
    }
    open_transport(node);
    config.mode = world.mode;
    config.db = node->db;
    config.transport = node->transport;
    config.clock = (struct transport_clock){.now_ms = wall_ms, .ctx = NULL};
    config.sync_interval_ms = SYNC_INTERVAL_MS;
    config.random_bytes = site_bytes;
    config.random_ctx = node;
    config.is_writer = is_writer;
    config.is_writer_ctx = node;
    assert_int_equal(replication_open(&config, &node->replication), 0);
    tick(node);
}

/* Every node keeps a connection to every node after it. */
static void world_start(void)
{
    for (unsigned i = 0; i < NODES; i++) {
        node_start(i);
    }
    for (unsigned i = 0; i < NODES; i++) {
        for (unsigned j = i + 1; j < NODES; j++) {
            assert_int_equal(transport_connect(world.nodes[i].transport,
                                               &world.nodes[j].identity.id,
                                               world.nodes[j].address),
                             0);
        }
    }
}

static void transport_closed(void *ctx)
{
    ((struct node *)ctx)->transport_done = true;
}

static bool run_until(bool (*done)(void *arg), void *arg);

static bool node_closed(void *arg)
{
    return ((struct node *)arg)->transport_done;
}

/* Closes node i: replication, transport (asynchronously), database. */
static void node_stop(unsigned i)
{
    struct node *node = &world.nodes[i];

    uv_timer_stop(&node->timer);
    replication_close(node->replication);
    node->replication = NULL;
    transport_close(node->transport, transport_closed, node);
    node->transport = NULL;
    engine_close(node->db);
    node->db = NULL;
    assert_true(run_until(node_closed, node));
}

/* ---- running the loop ---- */

static void guard_cb(uv_timer_t *timer)
{
    *(bool *)timer->data = true;
}

/* Runs the loop until done(arg) holds; false if the guard fired first. */
static bool run_until(bool (*done)(void *arg), void *arg)
{
    uv_timer_t guard;
    bool expired = false;

    assert_int_equal(uv_timer_init(&world.loop, &guard), 0);
    guard.data = &expired;
    uv_timer_start(&guard, guard_cb, GUARD_MS, 0);
    while (!done(arg) && !expired) {
        uv_run(&world.loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&guard, NULL);
    uv_run(&world.loop, UV_RUN_NOWAIT);
    return !expired;
}

static bool all_closed(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < NODES; i++) {
        if (!world.nodes[i].transport_done) {
            return false;
        }
    }
    return true;
}

/* Stops every node that runs and checks that the loop ends empty: every
 * handle closed. */
static void world_close(void)
{
    for (unsigned i = 0; i < NODES; i++) {
        if (world.nodes[i].replication != NULL) {
            node_stop(i);
        }
        uv_close((uv_handle_t *)&world.nodes[i].timer, NULL);
    }
    assert_true(run_until(all_closed, NULL));
    assert_int_equal(uv_run(&world.loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&world.loop), 0);
    for (unsigned i = 0; world.dir[0] != '\0' && i < NODES; i++) {
        char wal[600];

        snprintf(wal, sizeof(wal), "%s-wal", world.nodes[i].path);
        (void)unlink(world.nodes[i].path);
        (void)unlink(wal);
    }
    if (world.dir[0] != '\0') {
        assert_int_equal(rmdir(world.dir), 0);
    }
}

/* ---- what nodes hold ---- */

/* Text that grows (malloc'd); text_free() releases it. */
struct text {
    char *data;
    size_t size;
    size_t capacity;
};

static void text_append(struct text *t, const char *s)
{
    size_t n = strlen(s);

    if (t->size + n + 1 > t->capacity) {
        t->capacity = (t->size + n + 1) * 2;
        t->data = realloc(t->data, t->capacity);
        assert_non_null(t->data);
    }
    memcpy(t->data + t->size, s, n + 1);
    t->size += n;
}

static void text_free(struct text *t)
{
    free(t->data);
    memset(t, 0, sizeof(*t));
}

static int rows_cb(void *ctx, int count, char **values, char **names)
{
    struct text *t = ctx;

    (void)names;
    for (int i = 0; i < count; i++) {
        text_append(t, i > 0 ? "|" : "");
        text_append(t, values[i] != NULL ? values[i] : "NULL");
    }
    text_append(t, "\n");
    return 0;
}

/* The rows of sql on node i, as cluster.h prints them, into *out (reset
 * first; the caller frees it with text_free()). */
static void query(unsigned i, const char *sql, struct text *out)
{
    out->size = 0;
    text_append(out, "");
    if (engine_exec(world.nodes[i].db, sql, rows_cb, out) != 0) {
        fail_msg("node %u: %s: %s", i, sql, engine_errmsg(world.nodes[i].db));
    }
    if (out->size > 0) {
        out->data[--out->size] = '\0';
    }
}

/* Data and crdt metadata of node i, canonically ordered. */
static void dump(unsigned i, struct text *out)
{
    query(i,
          "SELECT 'T', id, quote(a), quote(b) FROM t ORDER BY id;"
          " SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM"
          " sinew_crdt_row ORDER BY tbl, pk;"
          " SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
          " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col;"
          " SELECT 'VV', hex(site), head FROM sinew_crdt_vv WHERE head > 0"
          " ORDER BY site",
          out);
}

struct expectation {
    unsigned node;
    const char *sql;
    const char *expected;
};

static bool query_holds(void *arg)
{
    const struct expectation *e = arg;
    struct text got = {0};
    bool holds;

    query(e->node, e->sql, &got);
    holds = strcmp(got.data, e->expected) == 0;
    text_free(&got);
    return holds;
}

/* Runs the loop until node i answers sql with expected. */
static void wait_query(unsigned i, const char *sql, const char *expected)
{
    struct expectation e = {.node = i, .sql = sql, .expected = expected};
    struct text got = {0};

    if (!run_until(query_holds, &e)) {
        query(i, sql, &got);
        fail_msg("node %u: %s: got \"%s\", want \"%s\" after %d ms", i, sql,
                 got.data, expected, GUARD_MS);
    }
}

/* Every node holds the same dump, and nothing waits. */
static bool converged(void *arg)
{
    struct text first = {0}, other = {0};
    struct replication_stats stats;
    bool same = true;

    (void)arg;
    dump(0, &first);
    for (unsigned i = 0; same && i < NODES; i++) {
        assert_int_equal(
            replication_stats_get(world.nodes[i].replication, &stats), 0);
        same = stats.waiting == 0 && stats.deferred == 0;
        replication_stats_release(&stats);
        dump(i, &other);
        same = same && strcmp(first.data, other.data) == 0;
    }
    text_free(&first);
    text_free(&other);
    return same;
}

static void wait_converged(void)
{
    struct text a = {0}, b = {0};

    if (!run_until(converged, NULL)) {
        dump(0, &a);
        dump(NODES - 1, &b);
        fail_msg("no convergence in %d ms:\nnode 0:\n%s\nnode %d:\n%s",
                 GUARD_MS, a.data, NODES - 1, b.data);
    }
}

/* Runs sql on node i and ticks it (ships the commit); returns the code,
 * its message in node->last_error (before the tick's own statements). */
static int exec_rc(unsigned i, const char *sql)
{
    struct node *node = &world.nodes[i];
    int rc = engine_exec(node->db, sql, NULL, NULL);

    snprintf(node->last_error, sizeof(node->last_error), "%s",
             engine_errmsg(node->db));
    tick(node);
    return rc;
}

static void exec(unsigned i, const char *sql)
{
    if (exec_rc(i, sql) != 0) {
        fail_msg("node %u: %s: %s", i, sql, world.nodes[i].last_error);
    }
}

static void wait_everywhere(const char *sql, const char *expected)
{
    for (unsigned i = 0; i < NODES; i++) {
        wait_query(i, sql, expected);
    }
}

/* ---- the scenarios ---- */

/* A commit on one node reaches both others. */
static void tcp_broadcast_reaches_peers(void **state)
{
    (void)state;
    world_init(REPLICATION_MODE_CRDT, false);
    world_start();
    exec(0, "INSERT INTO t VALUES ('k', 1, 2)");
    wait_everywhere("SELECT id, a, b FROM t", "k|1|2");
    wait_converged();
    world_close();
}

/* #1: nodes 0 and 2 update the same cell at once (neither can have seen
 * the other's): every node keeps the value of the larger (hlc, site). */
static void tcp_concurrent_updates_converge(void **state)
{
    uint64_t stamp0, stamp2;
    const char *winner;

    (void)state;
    world_init(REPLICATION_MODE_CRDT, false);
    world_start();
    exec(1, "INSERT INTO t VALUES ('k', 0, 0)");
    wait_everywhere("SELECT a FROM t", "0");
    exec(0, "UPDATE t SET a = 'from 0' WHERE id = 'k'");
    stamp0 = engine_last_stamp(world.nodes[0].db);
    exec(2, "UPDATE t SET a = 'from 2' WHERE id = 'k'");
    stamp2 = engine_last_stamp(world.nodes[2].db);
    assert_true(stamp0 != 0 && stamp2 != 0);
    winner = stamp0 > stamp2 ? "from 0" : "from 2"; /* site 2 wins ties */
    wait_converged();
    wait_everywhere("SELECT a FROM t", winner);
    world_close();
}

/* A node closed while the others write, reopened on its database file
 * (same identity, same port): it ships what it wrote before it reconnects
 * and gets everything it missed. */
static void tcp_reopened_node_catches_up(void **state)
{
    char sql[96];

    (void)state;
    world_init(REPLICATION_MODE_CRDT, true);
    world_start();
    exec(2, "INSERT INTO t VALUES ('before', 2, 2)");
    wait_everywhere("SELECT count(*) FROM t", "1");
    node_stop(2);
    for (int n = 0; n < 50; n++) {
        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%02d', %d, %d)", n,
                 n, n % 2);
        exec((unsigned)(n % 2), sql);
    }
    wait_query(0, "SELECT count(*) FROM t", "51");
    node_start(2);
    exec(2, "INSERT INTO t VALUES ('offline', 1, 1)");
    wait_everywhere("SELECT count(*), sum(a) FROM t", "52|1228");
    wait_converged();
    world_close();
}

/* Leader mode: node 0 writes, the followers apply its commits in order,
 * and refuse writes of their own with "not the writer". */
static void tcp_leader_followers_follow(void **state)
{
    char sql[96];

    (void)state;
    world_init(REPLICATION_MODE_LEADER, false);
    world.nodes[0].writer_epoch = 1;
    world_start();
    for (int n = 0; n < 20; n++) {
        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%02d', %d, 0)", n,
                 n);
        exec(0, sql);
    }
    exec(0, "UPDATE t SET b = a * 2 WHERE a % 2 = 0");
    wait_everywhere("SELECT count(*), sum(b) FROM t", "20|180");
    assert_int_equal(exec_rc(1, "INSERT INTO t VALUES ('follower', 1, 1)"),
                     REPLICATION_ENOTWRITER);
    assert_string_equal(world.nodes[1].last_error, "not the writer");
    assert_int_equal(exec_rc(2, "UPDATE t SET a = 0"), REPLICATION_ENOTWRITER);
    wait_converged();
    wait_everywhere("SELECT count(*), sum(a) FROM t", "20|190");
    world_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tcp_broadcast_reaches_peers),
        cmocka_unit_test(tcp_concurrent_updates_converge),
        cmocka_unit_test(tcp_reopened_node_catches_up),
        cmocka_unit_test(tcp_leader_followers_follow),
    };

    /* A write to a connection the peer has just closed (a node stopping)
     * raises SIGPIPE, whose default action ends the process: libuv leaves
     * it to the program, and an embedder of the TCP transport must ignore
     * it, as sinew's node has to. */
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
