/* SPDX-License-Identifier: MIT
 *
 * Goal: replicas over a network converge (crdt mode) or follow the writer
 * (leader mode) through the embedded API (replication.h) alone: broadcast
 * of fresh commits, anti-entropy by version vectors, relay through nodes
 * that are not the origin, catch-up after downtime, and the refusals
 * (cloned site id, followers' writes, a deposed writer's late commits).
 *
 * Method: cluster.h's simulated cluster, 2 to 5 nodes over the in-memory
 * network with its faults, simulated time; outcomes are checked on the
 * data and on a canonical dump of data and metadata compared across nodes
 * (crdt.md §5 "converge": identical rows, registers, version vectors).
 * Scenario numbers are crdt.md §5's.
 */
#include <string.h>

#include "cluster.h"

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');";

static struct cluster cl;

/* A commit on one node reaches the other by broadcast, within a tick. */
static void sync_broadcast_reaches_peer(void **state)
{
    (void)state;
    cluster_init(&cl, 2, REPLICATION_MODE_CRDT, schema, 1, false);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 1, 2)");
    cluster_run(&cl, 50);
    cluster_assert_query(&cl, 1, "SELECT id, a, b FROM t", "k|1|2");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #1 over the network: concurrent updates of one cell; the larger
 * (hlc, site) wins everywhere. */
static void sync_concurrent_updates_converge(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 2, false);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0)");
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "UPDATE t SET a = 'from0'");
    cluster_exec(&cl, 2, "UPDATE t SET a = 'from2'");
    cluster_run(&cl, 1000);
    cluster_assert_converged(&cl);
    /* Same physical ms on both: the counter and then the site decide. */
    cluster_assert_query(&cl, 1, "SELECT a FROM t", "from2");
    cluster_free(&cl);
}

/* #3, #24: a line A - B - C, never A - C. C gets A's writes through B,
 * and A gets C's; the same value written on A and B converges with the
 * same winner's metadata everywhere. */
static void sync_relay_through_middle_node(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 3, false);
    cluster_link(&cl, 0, 1);
    cluster_link(&cl, 1, 2);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('same', 'v', 'w')");
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('same', 'v', 'w')");
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('a', 1, 1)");
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('c', 3, 3)");
    cluster_run(&cl, 2000);
    cluster_assert_query(&cl, 2, "SELECT id FROM t ORDER BY id", "a\nc\nsame");
    cluster_assert_query(&cl, 0, "SELECT id FROM t ORDER BY id", "a\nc\nsame");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #30: a node whose database is a copy (same site id) is refused. */
static void sync_cloned_site_is_refused(void **state)
{
    struct replication_stats stats;

    (void)state;
    cluster_init(&cl, 2, REPLICATION_MODE_CRDT, schema, 4, false);
    cl.nodes[1].site_byte = 0x11; /* node 0's */
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 1, 2)");
    cluster_run(&cl, 1000);
    cluster_assert_query(&cl, 1, "SELECT count(*) FROM t", "0");
    assert_true(cl.nodes[0].errors > 0);
    assert_int_equal(replication_stats_get(cl.nodes[0].replication, &stats), 0);
    assert_int_equal(stats.peer_count, 1);
    assert_true(stats.peers[0].refused);
    replication_stats_release(&stats);
    cluster_free(&cl);
}

/* #25: a node down while others write catches up when it returns, and
 * ships what it wrote offline. */
static void sync_restarted_node_catches_up(void **state)
{
    char expected[64];

    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 5, true);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_stop(&cl, 2);
    for (int i = 0; i < 200; i++) {
        char sql[128];

        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%03d', %d, %d)", i,
                 i, i % 2);
        cluster_exec(&cl, (unsigned)(i % 2), sql);
    }
    cluster_run(&cl, 500);
    cluster_start(&cl, 2);
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('offline', 1, 1)");
    cluster_run(&cl, 3000);
    snprintf(expected, sizeof(expected), "%d", 201);
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t", expected);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM t", expected);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_broadcast_reaches_peer),
        cmocka_unit_test(sync_concurrent_updates_converge),
        cmocka_unit_test(sync_relay_through_middle_node),
        cmocka_unit_test(sync_cloned_site_is_refused),
        cmocka_unit_test(sync_restarted_node_catches_up),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
