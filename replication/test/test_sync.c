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
#include <unistd.h>

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

/* Leader mode: the writer's commits reach every follower, in order;
 * followers refuse local writes with "not the writer". */
static void leader_followers_follow(void **state)
{
    struct replication_stats stats;

    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_LEADER, schema, 6, false);
    cl.nodes[0].writer_epoch = 1;
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    for (int i = 0; i < 50; i++) {
        char sql[128];

        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%02d', %d, 0)", i,
                 i);
        cluster_exec(&cl, 0, sql);
    }
    cluster_exec(&cl, 0, "UPDATE t SET b = a * 2 WHERE a % 2 = 0");
    assert_int_equal(
        cluster_exec_rc(&cl, 1, "INSERT INTO t VALUES ('follower', 1, 1)"),
        REPLICATION_ENOTWRITER);
    assert_string_equal(cl.nodes[1].last_error, "not the writer");
    cluster_run(&cl, 1000);
    cluster_assert_query(&cl, 2, "SELECT count(*), sum(b) FROM t", "50|1200");
    cluster_assert_converged(&cl);
    assert_int_equal(replication_stats_get(cl.nodes[2].replication, &stats), 0);
    assert_int_equal(stats.epoch, 1);
    assert_false(stats.diverged);
    replication_stats_release(&stats);
    cluster_free(&cl);
}

/* Leader mode: the writer is cut off and keeps committing; a new writer
 * takes over at a higher epoch. After the partition heals, the deposed
 * writer's late commits are refused everywhere, it knows it diverged and
 * refuses writes, and the followers hold exactly the new writer's state. */
static void leader_deposed_writer_is_fenced(void **state)
{
    struct replication_stats stats;

    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_LEADER, schema, 7, false);
    cl.nodes[0].writer_epoch = 1;
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('before', 1, 1)");
    cluster_run(&cl, 500);
    assert_int_equal(transport_memory_network_partition(cl.net, &cl.nodes[0].id,
                                                        &cl.nodes[1].id, true),
                     0);
    assert_int_equal(transport_memory_network_partition(cl.net, &cl.nodes[0].id,
                                                        &cl.nodes[2].id, true),
                     0);
    (void)transport_memory_network_reset(cl.net, &cl.nodes[0].id,
                                         &cl.nodes[1].id);
    (void)transport_memory_network_reset(cl.net, &cl.nodes[0].id,
                                         &cl.nodes[2].id);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('late', 1, 1)");
    cluster_exec(&cl, 0, "UPDATE t SET a = 'late' WHERE id = 'before'");
    cl.nodes[1].writer_epoch = 2;
    cluster_run(&cl, 500);
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('new', 2, 2)");
    transport_memory_network_heal_all(cl.net);
    cluster_run(&cl, 3000);
    cluster_assert_query(&cl, 2, "SELECT id, a FROM t ORDER BY id",
                         "before|1\nnew|2");
    cluster_assert_query(&cl, 1, "SELECT id, a FROM t ORDER BY id",
                         "before|1\nnew|2");
    assert_int_equal(replication_stats_get(cl.nodes[0].replication, &stats), 0);
    assert_true(stats.diverged);
    assert_int_equal(stats.epoch, 2);
    replication_stats_release(&stats);
    assert_int_equal(
        cluster_exec_rc(&cl, 0, "INSERT INTO t VALUES ('again', 1, 1)"),
        REPLICATION_ENOTWRITER);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM t WHERE id = 'late'",
                         "1");
    assert_int_equal(replication_stats_get(cl.nodes[2].replication, &stats), 0);
    assert_false(stats.diverged);
    replication_stats_release(&stats);
    cluster_free(&cl);
}

/* Leader mode: a change set held (stamped beyond the clock offset: its
 * writer's clock ran 5 s ahead) when its receiver takes over as writer lies
 * beyond the new fence. It must never
 * be merged later, when the clock has caught up, over the new writer's own
 * acknowledged row (the simulator's leader seeds 0x3f, 0x6d, 0xbe: the
 * fence was checked when a chunk arrived, not when a held set was
 * merged). */
static void leader_held_set_beyond_fence_is_refused(void **state)
{
    struct replication_stats stats;

    (void)state;
    cluster_init(&cl, 2, REPLICATION_MODE_LEADER, schema, 9, false);
    cl.nodes[0].writer_epoch = 1;
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('r1', 1, 1)");
    cluster_run(&cl, 500);
    cl.nodes[0].skew_ms = 5000;
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('r2', 2, 2)");
    cl.nodes[0].skew_ms = 0;
    cluster_run(&cl, 500);
    assert_int_equal(replication_stats_get(cl.nodes[1].replication, &stats), 0);
    assert_int_equal(stats.deferred, 1);
    replication_stats_release(&stats);
    cl.nodes[0].writer_epoch = 0;
    cl.nodes[1].writer_epoch = 2;
    cluster_run(&cl, 500);
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('r2', 20, 20)");
    cluster_run(&cl, 6000); /* the clocks pass the deposed writer's stamp */
    cluster_assert_query(&cl, 1, "SELECT id, a FROM t ORDER BY id",
                         "r1|1\nr2|20");
    assert_int_equal(replication_stats_get(cl.nodes[1].replication, &stats), 0);
    assert_false(stats.diverged);
    assert_int_equal(stats.deferred + stats.waiting, 0);
    assert_true(stats.refused >= 1);
    replication_stats_release(&stats);
    assert_int_equal(replication_stats_get(cl.nodes[0].replication, &stats), 0);
    assert_true(stats.diverged);
    replication_stats_release(&stats);
    cluster_free(&cl);
}

/* Leader mode: a follower down during the writer's commits catches up
 * when it returns, from another follower as well as from the writer. */
static void leader_follower_catches_up(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_LEADER, schema, 8, true);
    cl.nodes[0].writer_epoch = 1;
    cluster_link(&cl, 0, 1);
    cluster_link(&cl, 1, 2); /* node 2 hears only from node 1 */
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_stop(&cl, 2);
    for (int i = 0; i < 100; i++) {
        char sql[128];

        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%03d', %d, 0)", i,
                 i);
        cluster_exec(&cl, 0, sql);
    }
    cluster_run(&cl, 500);
    cluster_start(&cl, 2);
    cluster_run(&cl, 2000);
    cluster_assert_query(&cl, 2, "SELECT count(*), sum(a) FROM t", "100|4950");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

static void insert_many(unsigned node, int first, int count)
{
    for (int i = first; i < first + count; i++) {
        char sql[128];

        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%04d', %d, 0)", i,
                 i);
        cluster_exec(&cl, node, sql);
    }
}

/* History: once every member acknowledged a change set it leaves every
 * log; a member that is down holds the pruning back, and catches up from
 * the log when it returns (#25). */
static void history_pruned_once_acknowledged(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 9, true);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    insert_many(0, 0, 30);
    insert_many(1, 30, 30);
    cluster_run(&cl, 5000);
    for (unsigned i = 0; i < 3; i++) {
        cluster_assert_query(&cl, i, "SELECT count(*) FROM sinew_crdt_log",
                             "0");
    }
    cluster_stop(&cl, 2);
    insert_many(0, 60, 20);
    cluster_run(&cl, 5000);
    /* Node 2 is still a member: its missing versions stay. */
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM sinew_crdt_log", "20");
    cluster_start(&cl, 2);
    cluster_run(&cl, 5000);
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t", "80");
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM sinew_crdt_log", "0");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #27, #26: a member silent past evict_after_ms no longer holds pruning
 * or tombstone collection back; when it returns it is refused (its old
 * writes could revive collected rows), and once rebuilt from an empty
 * database (a new site) it joins through a snapshot. */
static void history_evicted_member_rebuilt(void **state)
{
    char path[600];

    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 10, true);
    cl.evict_after_ms = 10000;
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 1000);
    insert_many(0, 0, 5);
    cluster_run(&cl, 1000);
    cluster_stop(&cl, 2);
    insert_many(0, 5, 20);
    cluster_exec(&cl, 1, "DELETE FROM t WHERE a < 3");
    cluster_run(&cl, 5000);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM sinew_crdt_log", "21");
    cluster_assert_query(
        &cl, 0, "SELECT count(*) FROM sinew_crdt_row WHERE alive = 0", "3");
    cluster_run(&cl, 10000);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM sinew_crdt_log", "0");
    cluster_assert_query(
        &cl, 0, "SELECT count(*) FROM sinew_crdt_row WHERE alive = 0", "0");
    /* Node 2 itself waits longer before evicting anyone, so it keeps
     * greeting the others: their refusal must hold all the same. */
    cl.evict_after_ms = 3600000;
    cluster_start(&cl, 2);
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('stale', 9, 9)");
    cluster_run(&cl, 3000);
    assert_true(cl.nodes[0].errors > 0);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM t", "22");
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t WHERE a < 3", "3");
    cluster_stop(&cl, 2);
    snprintf(path, sizeof(path), "%s-wal", cl.nodes[2].path);
    unlink(path);
    unlink(cl.nodes[2].path);
    cl.nodes[2].site_byte = 0x77;
    cluster_start(&cl, 2);
    cluster_run(&cl, 5000);
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t", "22");
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t WHERE a < 3", "0");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #36: a node that joins after the history was pruned (a fresh database,
 * a new site id) bootstraps from a snapshot and then follows. */
static void history_new_node_joins_by_snapshot(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 12, true);
    cluster_link(&cl, 0, 1);
    cluster_start(&cl, 0);
    cluster_start(&cl, 1);
    cluster_run(&cl, 500);
    insert_many(0, 0, 30);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 1, "UPDATE t SET b = 7 WHERE a % 3 = 0");
    cluster_run(&cl, 5000);
    cluster_assert_query(&cl, 0, "SELECT count(*) FROM sinew_crdt_log", "0");
    cluster_link(&cl, 2, 0);
    cluster_start(&cl, 2);
    cluster_run(&cl, 3000);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('after', 1, 1)");
    cluster_run(&cl, 2000);
    cluster_assert_query(&cl, 2, "SELECT count(*), sum(b) FROM t", "31|71");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* Tombstones are collected once causally stable: not while a member is
 * down (it may still send an older write), and once it is back and has
 * caught up; the collected row stays deleted everywhere (#27). */
static void history_tombstones_collected_when_stable(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, schema, 11, true);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    insert_many(0, 0, 10);
    cluster_run(&cl, 1000);
    cluster_stop(&cl, 2);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE a < 5");
    cluster_run(&cl, 5000);
    cluster_assert_query(
        &cl, 0, "SELECT count(*) FROM sinew_crdt_row WHERE alive = 0", "5");
    cluster_start(&cl, 2);
    cluster_run(&cl, 5000);
    for (unsigned i = 0; i < 3; i++) {
        cluster_assert_query(&cl, i,
                             "SELECT count(*) FROM sinew_crdt_row WHERE"
                             " alive = 0",
                             "0");
        cluster_assert_query(&cl, i, "SELECT count(*) FROM t", "5");
    }
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
        cmocka_unit_test(leader_followers_follow),
        cmocka_unit_test(leader_deposed_writer_is_fenced),
        cmocka_unit_test(leader_follower_catches_up),
        cmocka_unit_test(leader_held_set_beyond_fence_is_refused),
        cmocka_unit_test(history_pruned_once_acknowledged),
        cmocka_unit_test(history_evicted_member_rebuilt),
        cmocka_unit_test(history_new_node_joins_by_snapshot),
        cmocka_unit_test(history_tombstones_collected_when_stable),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
