/* SPDX-License-Identifier: MIT
 *
 * Goal: the convergence scenarios of crdt.md §5 hold over a network, through
 * the embedded API alone (replication.h): broadcast, anti-entropy, relay,
 * and the network's faults (delay, drop, duplicate, reorder, partitions)
 * in between. Each test is one scenario, named after its number in the §5
 * table, and asserts the table's expected outcome on the data and then, with
 * cluster_assert_converged(), that every replica holds the same canonical
 * dump of data and metadata (registers, shadows, version vectors) with
 * nothing left waiting. test_crdt.c covers the same rules in process; the
 * scenarios of test_sync.c (#1, #3, #25, #30) are not repeated here.
 *
 * Method: cluster.h's simulated cluster, 2 to 5 nodes over the in-memory
 * network, simulated time. Node i's site id is 0x11 * (i + 1), so the site
 * order is the node order. Writes are concurrent when neither node can have
 * seen the other's: both in the same simulated millisecond (no network step
 * between them), or within a link delay set for the test, or across a
 * partition. Which write is later is decided by the commit stamps the
 * cluster records (cluster_node.last_stamp) and the site, and tests assert
 *  the stamps' order they rely on, so a change of timing fails loudly
 * instead of testing something else. Schemas that differ (#12, #20, #21)
 * are in test_scenarios_schema.c, crashes (#19) in test_scenarios_crash.c;
 * the helpers all three share are scenario.h's.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "hlc.h"
#include "scenario.h"
#include "sync_wire.h" /* the CHUNK message type, for #22's replay */

/* ---- one row, two writers ---- */

/* #2: nodes 0 and 2 commit in the same simulated millisecond with clocks
 * that read the same, ahead of every stamp they have seen, so their
 * commits get equal stamps: the larger site (node 2) wins everywhere, for
 * a whole row inserted by both and then for one column updated by both;
 * neither keeps its own. */
static void scenario_02_equal_stamps_larger_site_wins(void **state)
{
    (void)state;
    start_cluster(3, 21, false);
    cl.nodes[0].skew_ms = cl.nodes[2].skew_ms = 40;
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 'n0', 'n0', 'n0')");
    cluster_exec(&cl, 2, "INSERT INTO t(id, a) VALUES ('k', 'n2')");
    assert_int_equal(cl.nodes[0].last_stamp, cl.nodes[2].last_stamp);
    assert_int_equal(hlc_physical_ms(cl.nodes[2].last_stamp),
                     CLUSTER_T0_MS + cl.now_ms + 40);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT a, b, quote(c) FROM t", "n2|dflt|NULL");

    cl.nodes[0].skew_ms = cl.nodes[2].skew_ms = 80;
    cluster_exec(&cl, 2, "UPDATE t SET a = 'site 33' WHERE id = 'k'");
    cluster_exec(&cl, 0, "UPDATE t SET a = 'site 11' WHERE id = 'k'");
    assert_int_equal(cl.nodes[0].last_stamp, cl.nodes[2].last_stamp);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT a FROM t", "site 33");
    assert_everywhere("SELECT hex(site) FROM sinew_crdt_cell WHERE col = 'a'",
                      "33333333333333333333333333333333");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #4: A updates column a, B column b of the same row at once: both
 * survive. */
static void scenario_04_different_columns_both_survive(void **state)
{
    (void)state;
    start_cluster(3, 41, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 1, 1, 1)");
    cluster_run(&cl, 200);
    cluster_exec(&cl, 0, "UPDATE t SET a = 'from 0' WHERE id = 'k'");
    cluster_exec(&cl, 1, "UPDATE t SET b = 'from 1' WHERE id = 'k'");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT a, b, c FROM t", "from 0|from 1|1");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #5: transactions writing the same two columns on two nodes: both columns
 * come from the later transaction (one HLC per transaction), never one
 * from each. The earlier one runs on the larger site, so the site does not
 * decide; its statements come in the other order. */
static void scenario_05_same_columns_tx_no_mixing(void **state)
{
    (void)state;
    start_cluster(2, 51, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0, 0)");
    cluster_run(&cl, 200);
    set_delay(50);
    cluster_exec(&cl, 1,
                 "BEGIN; UPDATE t SET a = 'a1' WHERE id = 'k';"
                 " UPDATE t SET b = 'b1' WHERE id = 'k'; COMMIT");
    cluster_run(&cl, 5);
    cluster_exec(&cl, 0,
                 "BEGIN; UPDATE t SET b = 'b0' WHERE id = 'k';"
                 " UPDATE t SET a = 'a0' WHERE id = 'k'; COMMIT");
    assert_true(later(0, 1));
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT a, b FROM t", "a0|b0");
    assert_everywhere("SELECT count(DISTINCT hlc) FROM sinew_crdt_cell"
                      " WHERE col IN ('a', 'b')",
                      "1");
    assert_int_equal(query_u64(1, "SELECT hlc FROM sinew_crdt_cell"
                                  " WHERE col = 'a'"),
                     cl.nodes[0].last_stamp);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #6: T1 writes (a, b), T2 concurrently (b, c): a from T1, c from T2, b
 * from the later one; once with each node later. */
static void scenario_06_overlapping_tx_partial_mixing(void **state)
{
    uint64_t first[2];

    (void)state;
    start_cluster(2, 61, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0, 0), ('j', 0, 0, 0)");
    cluster_run(&cl, 200);
    set_delay(50);
    /* k: node 1's T1 first, node 0's T2 later; j: the other way. */
    cluster_exec(&cl, 1, "UPDATE t SET a = 'T1', b = 'T1' WHERE id = 'k'");
    first[1] = cl.nodes[1].last_stamp;
    cluster_exec(&cl, 0, "UPDATE t SET b = 'T2', c = 'T2' WHERE id = 'j'");
    first[0] = cl.nodes[0].last_stamp;
    cluster_run(&cl, 5);
    cluster_exec(&cl, 0, "UPDATE t SET b = 'T2', c = 'T2' WHERE id = 'k'");
    cluster_exec(&cl, 1, "UPDATE t SET a = 'T1', b = 'T1' WHERE id = 'j'");
    assert_true(cl.nodes[0].last_stamp > first[1]);
    assert_true(cl.nodes[1].last_stamp > first[0]);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id, a, b, c FROM t ORDER BY id",
                      "j|T1|T1|T2\nk|T1|T2|T2");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #7: a delete and a concurrent update of the same row, in both HLC
 * orders: the row is gone everywhere; the update survives as an invisible
 * shadow only when it is newer than the delete. */
static void scenario_07_delete_vs_update_both_orders(void **state)
{
    uint64_t update_first, delete_first;

    (void)state;
    start_cluster_history_kept(2, 71, false);
    cluster_exec(&cl, 0,
                 "INSERT INTO t VALUES ('upd later', 1, 1, 1),"
                 " ('del later', 1, 1, 1)");
    cluster_run(&cl, 200);
    set_delay(50);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE id = 'upd later'");
    delete_first = cl.nodes[0].last_stamp;
    cluster_exec(&cl, 1, "UPDATE t SET a = 'lost' WHERE id = 'del later'");
    update_first = cl.nodes[1].last_stamp;
    cluster_run(&cl, 5);
    cluster_exec(&cl, 1, "UPDATE t SET a = 'shadow' WHERE id = 'upd later'");
    assert_true(cl.nodes[1].last_stamp > delete_first);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE id = 'del later'");
    assert_true(cl.nodes[0].last_stamp > update_first);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT count(*) FROM t", "0");
    assert_everywhere("SELECT count(*) FROM sinew_crdt_row WHERE alive = 0",
                      "2");
    /* Only the newer update's cell is left, and only as a shadow. */
    assert_everywhere("SELECT col, has_shadow, quote(shadow) FROM"
                      " sinew_crdt_cell WHERE tbl = 't'",
                      "a|1|'shadow'");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #8: A deletes a row B had updated, then inserts it again (sequential):
 * the row holds the re-insert's values only, defaults included, and every
 * cell carries the re-insert's stamp. */
static void scenario_08_delete_then_reinsert_no_stale_cells(void **state)
{
    char sql[128];

    (void)state;
    start_cluster(3, 81, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 'old a', 'old b', 1)");
    cluster_run(&cl, 200);
    cluster_exec(&cl, 1, "UPDATE t SET c = 'b wrote' WHERE id = 'k'");
    cluster_run(&cl, 200);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE id = 'k'");
    cluster_run(&cl, 200);
    cluster_exec(&cl, 0, "INSERT INTO t(id, a) VALUES ('k', 'new a')");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT a, b, quote(c) FROM t", "new a|dflt|NULL");
    snprintf(sql, sizeof(sql),
             "SELECT count(*), sum(has_shadow) FROM sinew_crdt_cell"
             " WHERE tbl = 't' AND hlc = %" PRIu64,
             cl.nodes[0].last_stamp);
    assert_everywhere(sql, "4|0"); /* id, a, b, c: the re-insert's */
    assert_everywhere("SELECT count(*) FROM sinew_crdt_cell WHERE tbl = 't'",
                      "4");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #9: A deletes a row while B deletes and re-inserts it: existence is the
 * later of A's delete and B's insert by (hlc, site), in both orders. */
static void scenario_09_delete_vs_delete_reinsert(void **state)
{
    uint64_t a_first, b_insert_first;

    (void)state;
    start_cluster(2, 91, false);
    cluster_exec(&cl, 0,
                 "INSERT INTO t VALUES ('insert later', 1, 1, 1),"
                 " ('delete later', 1, 1, 1)");
    cluster_run(&cl, 200);
    set_delay(50);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE id = 'insert later'");
    a_first = cl.nodes[0].last_stamp;
    cluster_exec(&cl, 1, "DELETE FROM t WHERE id = 'delete later'");
    cluster_exec(&cl, 1, "INSERT INTO t(id, a) VALUES ('delete later', 'b')");
    b_insert_first = cl.nodes[1].last_stamp;
    cluster_run(&cl, 2);
    cluster_exec(&cl, 1, "DELETE FROM t WHERE id = 'insert later'");
    cluster_run(&cl, 2);
    cluster_exec(&cl, 1, "INSERT INTO t(id, a) VALUES ('insert later', 'b')");
    assert_true(cl.nodes[1].last_stamp > a_first);
    cluster_exec(&cl, 0, "DELETE FROM t WHERE id = 'delete later'");
    assert_true(cl.nodes[0].last_stamp > b_insert_first);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id, a, b FROM t", "insert later|b|dflt");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #10: the same key inserted on two nodes with different values: the
 * whole row of the later insert, in both orders, nothing mixed. */
static void scenario_10_concurrent_inserts_whole_row(void **state)
{
    uint64_t k0, j1;

    (void)state;
    start_cluster(3, 101, false);
    set_delay(50);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 'a0', 'b0', 'c0')");
    k0 = cl.nodes[0].last_stamp;
    cluster_exec(&cl, 1, "INSERT INTO t(id, a) VALUES ('j', 'a1')");
    j1 = cl.nodes[1].last_stamp;
    cluster_run(&cl, 5);
    cluster_exec(&cl, 1, "INSERT INTO t(id, a) VALUES ('k', 'a1')");
    assert_true(cl.nodes[1].last_stamp > k0);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('j', 'a0', 'b0', 'c0')");
    assert_true(cl.nodes[0].last_stamp > j1);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id, a, b, quote(c) FROM t ORDER BY id",
                      "j|a0|b0|'c0'\nk|a1|dflt|NULL");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #11: B's update of A's new row reaches C before A's insert (A and C are
 * cut apart; B relays A's insert only after C's next summary, at 5 s, at
 * its own next tick): C keeps the update invisibly, then shows the row with
 * the update on top. */
static void scenario_11_update_before_its_insert(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, scenario_schema, 111, false);
    cl.sync_interval_ms = 5000; /* summaries at connect, then at 5 s */
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cut(0, 2);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 1, 1, 1)");
    cluster_run(&cl, 1);
    cluster_assert_query(&cl, 1, "SELECT count(*) FROM t", "1");
    cluster_exec(&cl, 1, "UPDATE t SET b = 'b wrote' WHERE id = 'k'");
    cluster_run(&cl, 1);
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t", "0");
    cluster_assert_query(&cl, 2,
                         "SELECT col, has_shadow, quote(shadow) FROM"
                         " sinew_crdt_cell",
                         "b|1|'b wrote'");
    cluster_run(&cl, 11000);
    cluster_assert_query(&cl, 2, "SELECT a, b, c FROM t", "1|b wrote|1");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* ---- clocks ---- */

/* #13: node 0's clock runs 10 minutes ahead (beyond the 500 ms maximum
 * offset). Receivers defer its change sets and warn, merge everything
 * else, and their clocks do not jump (their own writes are stamped at
 * their own time). Correcting node 0's clock does not release them: they
 * carry their stamps, and node 0's later writes are stamped past them too
 * (its HLC never goes back). Once the receivers' clocks reach the stamps,
 * all apply and converge. Node 0 keeps syncing after the correction. */
static void scenario_13_far_ahead_clock_deferred(void **state)
{
    const int64_t ahead_ms = 10 * 60 * 1000;
    struct replication_stats stats;
    uint64_t future, summary_ms;

    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, scenario_schema, 131, false);
    cl.sync_interval_ms = 1000; /* fewer ticks over the 10 minutes */
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 'old', 'old', 'old')");
    cluster_run(&cl, 500);
    cl.nodes[0].skew_ms = ahead_ms;
    cluster_exec(&cl, 0, "UPDATE t SET a = 'future' WHERE id = 'k'");
    future = cl.nodes[0].last_stamp;
    cluster_run(&cl, 1000);
    for (unsigned i = 1; i < 3; i++) {
        stats_of(i, &stats);
        assert_int_equal(stats.deferred, 1);
        replication_stats_release(&stats);
        assert_true(cl.nodes[i].warnings > 0);
        cluster_assert_query(&cl, i, "SELECT a FROM t", "old");
    }
    cluster_exec(&cl, 1, "UPDATE t SET b = 'now' WHERE id = 'k'");
    assert_true(hlc_physical_ms(cl.nodes[1].last_stamp) <=
                CLUSTER_T0_MS + cl.now_ms);
    cluster_run(&cl, 100);
    cluster_assert_query(&cl, 0, "SELECT b FROM t", "now");

    /* The clock is corrected. The caller's timer, armed for the tick the
     * last one asked for, is relative and fires on time (the cluster
     * converts next_tick_ms by the skew, so it is reset here). */
    cl.nodes[0].skew_ms = 0;
    cl.nodes[0].next_tick_ms = 0;
    stats_of(1, &stats);
    summary_ms = peer_of(&stats, 0)->last_summary_ms;
    replication_stats_release(&stats);
    cluster_run(&cl, 2000);
    stats_of(1, &stats);
    assert_true(peer_of(&stats, 0)->last_summary_ms > summary_ms + 1000);
    replication_stats_release(&stats);
    cluster_exec(&cl, 0, "UPDATE t SET c = 'after' WHERE id = 'k'");
    assert_true(cl.nodes[0].last_stamp > future);
    cluster_run(&cl, 1000);
    stats_of(2, &stats);
    assert_int_equal(stats.deferred + stats.waiting, 2);
    assert_true(stats.deferred >= 1);
    replication_stats_release(&stats);
    cluster_exec(&cl, 2, "UPDATE t SET b = 'later now' WHERE id = 'k'");
    assert_true(hlc_physical_ms(cl.nodes[2].last_stamp) <=
                CLUSTER_T0_MS + cl.now_ms);

    cluster_run(&cl, (uint64_t)ahead_ms);
    assert_everywhere("SELECT a, b, c FROM t", "future|later now|after");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #14: node 0's clock runs 200 ms ahead (within the maximum offset). Its
 * change sets are accepted at once; it wins a conflict with a write made
 * after its own in real time but before it arrived; a write made on node 1
 * after seeing node 0's wins over it, though node 1's own clock is still
 * behind node 0's stamp (the HLC moved past it). */
static void scenario_14_near_ahead_clock_accepted(void **state)
{
    struct replication_stats stats;
    uint64_t stamp;

    (void)state;
    start_cluster(2, 141, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0, 0)");
    cluster_run(&cl, 200);
    cl.nodes[0].skew_ms = 200;
    set_delay(50);
    cluster_exec(&cl, 0, "UPDATE t SET a = 'from 0' WHERE id = 'k'");
    cluster_run(&cl, 30);
    cluster_exec(&cl, 1, "UPDATE t SET a = 'from 1' WHERE id = 'k'");
    assert_true(later(0, 1));
    cluster_run(&cl, 500);
    assert_everywhere("SELECT a FROM t", "from 0");

    cluster_exec(&cl, 0, "UPDATE t SET c = 'from 0' WHERE id = 'k'");
    stamp = cl.nodes[0].last_stamp;
    cluster_run(&cl, 51);
    cluster_assert_query(&cl, 1, "SELECT c FROM t", "from 0");
    cluster_exec(&cl, 1, "UPDATE t SET c = 'seen, then 1' WHERE id = 'k'");
    assert_true(hlc_physical_ms(stamp) > CLUSTER_T0_MS + cl.now_ms);
    assert_true(cl.nodes[1].last_stamp > stamp);
    cluster_run(&cl, 500);
    assert_everywhere("SELECT a, c FROM t", "from 0|seen, then 1");
    stats_of(1, &stats);
    assert_int_equal(stats.deferred, 0);
    replication_stats_release(&stats);
    assert_int_equal(cl.nodes[1].warnings, 0);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* Node i's change log (whole: history kept) holds versions versions of
 * origin site_hex, each with a stamp of its own. */
static void assert_one_stamp_per_version(unsigned i, const char *site_hex,
                                         uint64_t versions)
{
    char sql[256], expected[64];

    snprintf(sql, sizeof(sql),
             "SELECT count(DISTINCT version), count(DISTINCT hlc) FROM"
             " sinew_crdt_log WHERE origin = X'%s'",
             site_hex);
    snprintf(expected, sizeof(expected), "%" PRIu64 "|%" PRIu64, versions,
             versions);
    cluster_assert_query(&cl, i, sql, expected);
}

/* #15: node 0's clock steps back an hour while it runs, and another hour
 * while it is down. Each commit after a step is stamped above the last one
 * (the HLC's high-water mark, persisted with the commits), no two of its
 * versions share a stamp, no receiver defers its change sets (their
 * stamps are not ahead), and its writes replicate. */
static void scenario_15_clock_steps_back(void **state)
{
    const int64_t hour_ms = 3600 * 1000;
    static const char *const zero_hex = "11111111111111111111111111111111";
    uint64_t before;

    (void)state;
    start_cluster_history_kept(2, 151, true);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0, 0)");
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('j', 1, 1, 1)");
    cluster_run(&cl, 200);
    before = cl.nodes[0].last_stamp;

    cl.nodes[0].skew_ms -= hour_ms;
    cl.nodes[0].next_tick_ms = 0; /* its timer is relative, see #13 */
    cluster_exec(&cl, 0, "UPDATE t SET a = 'stepped back' WHERE id = 'k'");
    assert_true(cl.nodes[0].last_stamp > before);
    before = cl.nodes[0].last_stamp;
    cluster_exec(&cl, 0, "UPDATE t SET b = 'same ms' WHERE id = 'k'");
    assert_true(cl.nodes[0].last_stamp > before);
    before = cl.nodes[0].last_stamp;
    cluster_run(&cl, 300);
    cluster_exec(&cl, 0, "UPDATE t SET c = 'later' WHERE id = 'j'");
    assert_true(cl.nodes[0].last_stamp > before);
    before = cl.nodes[0].last_stamp;
    cluster_run(&cl, 500);
    assert_everywhere("SELECT a, b, c FROM t WHERE id = 'k'",
                      "stepped back|same ms|0");
    assert_everywhere("SELECT c FROM t WHERE id = 'j'", "later");

    cluster_stop(&cl, 0);
    cl.nodes[0].skew_ms -= hour_ms;
    cluster_start(&cl, 0);
    cluster_run(&cl, 500);
    cluster_exec(&cl, 0, "UPDATE t SET a = 'after restart' WHERE id = 'k'");
    assert_true(cl.nodes[0].last_stamp > before);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('m', 2, 2, 2)");
    cluster_run(&cl, 500);
    assert_everywhere("SELECT id, a FROM t ORDER BY id",
                      "j|1\nk|after restart\nm|2");
    for (unsigned i = 0; i < 2; i++) {
        struct replication_stats stats;

        stats_of(i, &stats);
        assert_int_equal(stats.deferred, 0);
        replication_stats_release(&stats);
        assert_one_stamp_per_version(i, zero_hex, 6);
    }
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* ---- delivery: duplicates, order, chunks, replay ---- */

/* #16: every message arrives twice, and node 1 also gets node 0's change
 * sets relayed by node 2 (its direct link is slower): each change set is
 * merged once, node 1 and node 2 commit nothing of their own, and every
 * replica ends the same. */
static void scenario_16_duplicate_delivery_no_effect(void **state)
{
    struct transport_memory_link_faults faults = {.duplicate_probability = 1};
    struct replication_stats stats;
    char sql[96];
    int n;

    (void)state;
    start_cluster(3, 161, false);
    assert_int_equal(transport_memory_network_set_default_link(cl.net, &faults),
                     0);
    faults.delay_ms = 300;
    assert_int_equal(transport_memory_network_set_link(
                         cl.net, &cl.nodes[0].id, &cl.nodes[1].id, &faults),
                     0);
    for (n = 0; n < 5; n++) {
        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%d', %d, %d, %d)",
                 n, n, n, n);
        cluster_exec(&cl, 0, sql);
        cluster_run(&cl, 20);
    }
    cluster_run(&cl, 3000);
    assert_everywhere("SELECT count(*), sum(a) FROM t", "5|10");
    stats_of(1, &stats);
    assert_int_equal(stats.applied, 5);
    assert_true(peer_of(&stats, 0)->chunks_received >= 10); /* twice each */
    assert_true(peer_of(&stats, 2)->chunks_received >= 2);  /* relayed */
    replication_stats_release(&stats);
    stats_of(2, &stats);
    assert_int_equal(stats.applied, 5);
    replication_stats_release(&stats);
    assert_int_equal(local_version(1), 0);
    assert_int_equal(local_version(2), 0);
    assert_everywhere("SELECT hex(site), head FROM sinew_crdt_vv",
                      "11111111111111111111111111111111|5");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #17's script, step step of node i: conflicts on row 's' (inserted,
 * updated, deleted and inserted again by every node) and rows of its own. */
static void reorder_step(unsigned step, unsigned i, char *sql, size_t size)
{
    switch (step) {
    case 0:
        snprintf(sql, size, "INSERT INTO t VALUES ('s', 'i%u', 'i%u', 'i%u')",
                 i, i, i);
        break;
    case 1:
        snprintf(sql, size, "INSERT INTO t VALUES ('r%u', 1, 1, 1)", i);
        break;
    case 2:
        snprintf(sql, size, "UPDATE t SET a = 'u%u' WHERE id = 's'", i);
        break;
    case 3:
        snprintf(sql, size, "UPDATE t SET b = 'u%u' WHERE id = 'r%u'", i, i);
        break;
    case 4:
        snprintf(sql, size, "DELETE FROM t WHERE id = 's'");
        break;
    case 5:
        snprintf(sql, size, "INSERT INTO t(id, c) VALUES ('s', 'again %u')", i);
        break;
    default:
        snprintf(sql, size, "UPDATE t SET c = 'last %u' WHERE id = 'r%u'", i,
                 i);
    }
}

/* #17's run: nodes 0 to 2 write while cut off from everyone (so their
 * stamps depend on their clocks alone); node 3 only receives. Then every
 * pair is linked. */
static void reorder_script(struct cluster *c)
{
    char sql[128];
    unsigned step, i;

    c->nodes[1].skew_ms = 3;
    c->nodes[2].skew_ms = -2;
    cluster_start_all(c);
    for (step = 0; step < 7; step++) {
        for (i = 0; i < 3; i++) {
            reorder_step(step, i, sql, sizeof(sql));
            cluster_exec(c, i, sql);
            cluster_run(c, 1 + i);
        }
    }
    cluster_link_all(c);
}

/* #17: the same change sets from three origins, delivered in the order of
 * a fault-free network and, for several seeds, with every message
 * reordered: the final state is identical, byte for byte of the dump. */
static void scenario_17_reordered_delivery_same_state(void **state)
{
    static struct cluster reference;
    struct transport_memory_link_faults faults = {
        .reorder_probability = 1, .reorder_window_ms = 40, .delay_ms = 1};
    char *expected, *got;
    uint64_t seed;

    (void)state;
    cluster_init(&reference, 4, REPLICATION_MODE_CRDT, scenario_schema, 170,
                 false);
    reorder_script(&reference);
    cluster_run(&reference, 3000);
    cluster_assert_converged(&reference);
    expected = cluster_dump(&reference, 3);
    cluster_free(&reference);
    for (seed = 171; seed < 175; seed++) {
        cluster_init(&cl, 4, REPLICATION_MODE_CRDT, scenario_schema, seed,
                     false);
        assert_int_equal(
            transport_memory_network_set_default_link(cl.net, &faults), 0);
        reorder_script(&cl);
        cluster_run(&cl, 5000);
        cluster_assert_converged(&cl);
        got = cluster_dump(&cl, 3);
        assert_string_equal(got, expected);
        free(got);
        cluster_free(&cl);
    }
    assert_non_null(strstr(expected, "'again 1'"));
    free(expected);
}

/* #18: a transaction of about 3 MB, shipped in some 50 chunks over a link
 * that drops 30% of messages: the receiver shows none of it while chunks
 * are missing (checked every 5 ms), anti-entropy sends it again until all
 * are in, and then all of it at once. */
static void scenario_18_big_tx_chunks_atomic(void **state)
{
    const struct transport_memory_link_faults lossy = {.drop_probability = 0.3};
    const struct transport_memory_link_faults perfect = {0};
    struct replication_stats stats;
    uint64_t chunks, count = 0, waited_ms;
    bool partial_seen = false;

    (void)state;
    start_cluster(2, 181, false);
    assert_int_equal(transport_memory_network_set_link(cl.net, &cl.nodes[0].id,
                                                       &cl.nodes[1].id, &lossy),
                     0);
    insert_many(0, "big", 200, 16 << 10);
    chunks = query_u64(0, "SELECT count(*) FROM sinew_crdt_log");
    assert_true(chunks > 40);
    for (waited_ms = 0; waited_ms < 30000 && count == 0; waited_ms += 5) {
        cluster_run(&cl, 5);
        count = query_u64(1, "SELECT count(*) FROM t");
        assert_true(count == 0 || count == 200);
        stats_of(1, &stats);
        partial_seen |= count == 0 && peer_of(&stats, 0)->chunks_received > 0;
        if (count == 200) {
            assert_true(peer_of(&stats, 0)->chunks_received > chunks);
        }
        replication_stats_release(&stats);
    }
    assert_true(partial_seen);
    assert_int_equal(count, 200);
    cluster_assert_query(&cl, 1, "SELECT sum(length(a)) FROM t", "3276800");
    assert_int_equal(transport_memory_network_set_link(
                         cl.net, &cl.nodes[0].id, &cl.nodes[1].id, &perfect),
                     0);
    cluster_run(&cl, 1000);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* Stored chunks of change sets, copied out of a change log. */
struct chunk_copies {
    struct {
        uint8_t *bytes;
        size_t size;
    } items[64];
    size_t count;
};

/* Appends a copy of every chunk in node i's change log (every origin's),
 * newest first. */
static void copy_log(unsigned i, struct chunk_copies *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    assert_int_equal(engine_prepare(cl.nodes[i].db,
                                    "SELECT bytes FROM sinew_crdt_log ORDER BY"
                                    " origin DESC, version DESC, chunk DESC",
                                    -1, &stmt, NULL),
                     0);
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        size_t size = (size_t)engine_column_bytes(stmt, 0);

        assert_true(out->count < sizeof(out->items) / sizeof(out->items[0]));
        out->items[out->count].bytes = malloc(size);
        assert_non_null(out->items[out->count].bytes);
        memcpy(out->items[out->count].bytes, engine_column_blob(stmt, 0), size);
        out->items[out->count++].size = size;
    }
    assert_int_equal(rc, ENGINE_DONE);
    engine_finalize(stmt);
}

/* #22: a node that is up to date gets the whole history of every origin
 * again (copied from the logs as the writes were made, before any could
 * be pruned), newest first, as CHUNK messages of a peer: nothing changes,
 * not even its stats. */
static void scenario_22_replay_changes_nothing(void **state)
{
    struct replication_stats before, after;
    struct chunk_copies copies = {.count = 0};
    char *dump_before, *dump_after;
    uint64_t version;
    size_t n;

    (void)state;
    start_cluster_history_kept(3, 221, false);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('a', 1, 1, 1)");
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('b', 2, 2, 2)");
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('a', 3, 3, 3)");
    cluster_run(&cl, 100);
    copy_log(0, &copies);
    cluster_exec(&cl, 0, "UPDATE t SET b = 'x' WHERE id = 'b'");
    cluster_exec(&cl, 1, "DELETE FROM t WHERE id = 'a'");
    copy_log(0, &copies);
    copy_log(1, &copies);
    assert_true(copies.count >= 6);
    cluster_run(&cl, 1000);
    cluster_assert_converged(&cl);
    dump_before = cluster_dump(&cl, 2);
    stats_of(2, &before);
    version = local_version(2);
    for (n = 0; n < copies.count; n++) {
        replication_received(cl.nodes[2].replication, &cl.nodes[0].id,
                             REPLICATION__MSG_CHUNK, copies.items[n].bytes,
                             copies.items[n].size);
        free(copies.items[n].bytes);
    }
    cluster_run(&cl, 1000);
    stats_of(2, &after);
    dump_after = cluster_dump(&cl, 2);
    assert_string_equal(dump_after, dump_before);
    assert_int_equal(after.applied, before.applied);
    assert_int_equal(after.refused, before.refused);
    assert_int_equal(after.waiting, 0);
    assert_int_equal(local_version(2), version);
    replication_stats_release(&before);
    replication_stats_release(&after);
    free(dump_before);
    free(dump_after);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* ---- partitions and relay ---- */

/* #23's writes, on three cut-off nodes with different clocks: all write
 * cell a of row k, nodes 0 and 1 cell b, node 2 cell c, node 1 a row of
 * its own. Returns the per-cell maximum by K as "a|b|c". */
static void partition_writes(char *expected, size_t size)
{
    uint64_t b0;
    unsigned a_winner;

    cluster_exec(&cl, 0, "UPDATE t SET a = 'n0', b = 'n0' WHERE id = 'k'");
    b0 = cl.nodes[0].last_stamp;
    a_winner = 0;
    cluster_run(&cl, 3);
    cluster_exec(&cl, 2, "UPDATE t SET a = 'n2', c = 'n2' WHERE id = 'k'");
    a_winner = later(2, a_winner) ? 2 : a_winner;
    cluster_run(&cl, 4);
    cluster_exec(&cl, 1, "UPDATE t SET a = 'n1' WHERE id = 'k'");
    a_winner = later(1, a_winner) ? 1 : a_winner;
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('own 1', 1, 1, 1)");
    cluster_exec(&cl, 1, "UPDATE t SET b = 'n1' WHERE id = 'k'");
    snprintf(expected, size, "n%u|n%s|n2", a_winner,
             cl.nodes[1].last_stamp >= b0 ? "1" : "0");
}

/* #23: three-way partition {0}, {1}, {2}, all writing the same cells and
 * different ones; healed pairwise, two of the three pairs, in each of the
 * six orders: every replica converges to the per-cell maximum, though two
 * of them never meet. The clocks of nodes 0 and 2 are ahead: node 2 wins
 * cell a and node 0 cell b over node 1's later writes. */
static void scenario_23_three_way_partition_heals(void **state)
{
    static const unsigned pairs[3][2] = {{0, 1}, {1, 2}, {0, 2}};
    static const unsigned orders[6][2] = {{0, 1}, {1, 0}, {0, 2},
                                          {2, 0}, {1, 2}, {2, 1}};
    char expected[64];
    unsigned o, h;

    (void)state;
    for (o = 0; o < 6; o++) {
        start_cluster(3, 230 + o, false);
        cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 0, 0, 0)");
        cluster_run(&cl, 200);
        cut(0, 1);
        cut(1, 2);
        cut(0, 2);
        cl.nodes[0].skew_ms = 20;
        cl.nodes[2].skew_ms = 30;
        partition_writes(expected, sizeof(expected));
        assert_string_equal(expected, "n2|n0|n2");
        cluster_run(&cl, 1000);
        for (h = 0; h < 2; h++) {
            const unsigned *pair = pairs[orders[o][h]];

            heal(pair[0], pair[1]);
            cluster_run(&cl, 12000);
        }
        assert_everywhere("SELECT a || '|' || b || '|' || c FROM t"
                          " WHERE id = 'k'",
                          expected);
        assert_everywhere("SELECT count(*) FROM t", "2");
        cluster_assert_converged(&cl);
        cluster_free(&cl);
    }
}

/* #24: a line 0 - 1 - 2, never 0 - 2. Node 1 inserts row k; node 0 inserts
 * it too, later, and wins every cell. Node 2 gets node 0's row through node
 * 1, and node 1's own change set as well, though everything in it has lost
 * at node 1. */
static void scenario_24_relay_of_superseded_version(void **state)
{
    (void)state;
    cluster_init(&cl, 3, REPLICATION_MODE_CRDT, scenario_schema, 241, false);
    cluster_link(&cl, 0, 1);
    cluster_link(&cl, 1, 2);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
    set_delay(50);
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('k', 'n1', 'n1', 'n1')");
    cluster_run(&cl, 10);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('k', 'n0', 'n0', 'n0')");
    assert_true(later(0, 1));
    cluster_run(&cl, 2000);
    assert_everywhere("SELECT a, b, c FROM t", "n0|n0|n0");
    assert_everywhere("SELECT count(*) FROM sinew_crdt_cell WHERE site ="
                      " X'22222222222222222222222222222222'",
                      "0");
    cluster_assert_query(&cl, 2,
                         "SELECT hex(site), head FROM sinew_crdt_vv"
                         " ORDER BY site",
                         "11111111111111111111111111111111|1\n"
                         "22222222222222222222222222222222|1");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* ---- keys, values, constraints ---- */

/* #28: node 0 changes a row's key while node 1 updates the row under its
 * old key, in both HLC orders; node 2 held the old row before. The old key
 * is gone, the new row complete, node 1's update lost, everywhere. */
static void scenario_28_primary_key_change_vs_update(void **state)
{
    uint64_t move_first, update_first;

    (void)state;
    start_cluster(3, 281, false);
    cluster_exec(&cl, 0,
                 "INSERT INTO t VALUES ('old1', 'x', 'y', 'z'),"
                 " ('old2', 'x', 'y', 'z')");
    cluster_run(&cl, 200);
    cluster_assert_query(&cl, 2, "SELECT count(*) FROM t", "2");
    set_delay(50);
    cluster_exec(&cl, 0, "UPDATE t SET id = 'new1' WHERE id = 'old1'");
    move_first = cl.nodes[0].last_stamp;
    cluster_exec(&cl, 1, "UPDATE t SET a = 'lost' WHERE id = 'old2'");
    update_first = cl.nodes[1].last_stamp;
    cluster_run(&cl, 5);
    cluster_exec(&cl, 1, "UPDATE t SET a = 'lost' WHERE id = 'old1'");
    assert_true(cl.nodes[1].last_stamp > move_first);
    cluster_exec(&cl, 0, "UPDATE t SET id = 'new2' WHERE id = 'old2'");
    assert_true(cl.nodes[0].last_stamp > update_first);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id, a, b, c FROM t ORDER BY id",
                      "new1|x|y|z\nnew2|x|y|z");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #29: a 10,000-row transaction merged on node 1 while node 1 keeps
 * committing rows of its own into the same table: at every step until it
 * shows, node 1 shows none or all of the big transaction, and its own
 * writes all succeed and replicate. */
static void scenario_29_big_merge_while_writing(void **state)
{
    const int rows = 10000, writes = 40;
    uint64_t big = 0;
    char sql[96];
    int n;

    (void)state;
    start_cluster(2, 291, false);
    set_delay(10);
    insert_many(0, "big", rows, 8);
    for (n = 0; n < writes; n++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO t VALUES ('local%03d', %d, 0, 0)", n, n);
        cluster_exec(&cl, 1, sql);
        cluster_run(&cl, 1);
        if (big < (uint64_t)rows) {
            big = query_u64(1, "SELECT count(*) FROM t WHERE id < 'c'");
            assert_true(big == 0 || big == (uint64_t)rows);
        }
    }
    assert_int_equal(big, rows);
    cluster_run(&cl, 1000);
    snprintf(sql, sizeof(sql), "%d|%d", rows + writes, writes);
    assert_everywhere("SELECT count(*), count(*) FILTER (WHERE id LIKE"
                      " 'local%') FROM t",
                      sql);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* The double in v.x of row id on node i. */
static double read_double(unsigned i, const char *id)
{
    struct engine_stmt *stmt = NULL;
    double value;

    assert_int_equal(engine_prepare(cl.nodes[i].db,
                                    "SELECT x FROM v WHERE id = ?1", -1, &stmt,
                                    NULL),
                     0);
    assert_int_equal(engine_bind_text(stmt, 1, id, -1), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_type(stmt, 0), ENGINE_FLOAT);
    value = engine_column_double(stmt, 0);
    engine_finalize(stmt);
    return value;
}

/* Inserts (id, -0.0) into v on node i, bound (SQL text has no -0.0). */
static void insert_negative_zero(unsigned i, const char *id)
{
    struct engine_stmt *stmt = NULL;

    assert_int_equal(engine_prepare(cl.nodes[i].db,
                                    "INSERT INTO v VALUES (?1, ?2)", -1, &stmt,
                                    NULL),
                     0);
    assert_int_equal(engine_bind_text(stmt, 1, id, -1), 0);
    assert_int_equal(engine_bind_double(stmt, 2, -0.0), 0);
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
}

/* #31: values that look alike but differ (NULL and '', 1 and 1.0 and
 * '1', -0.0 and 0.0, X'' and ''), extremes, a 1 MiB blob, text beyond
 * ASCII, and keys of every type, written on three nodes: every replica
 * holds each with its type and bytes. */
static void scenario_31_value_edge_cases(void **state)
{
    static const char *const expected =
        "1|text|'int key'\n"
        "1.5|text|'real key'\n"
        "'1'|text|'text key'\n"
        "'empty'|text|''\n"
        "'emptyblob'|blob|X''\n"
        "'int'|integer|1\n"
        "'max'|integer|9223372036854775807\n"
        "'min'|integer|-9223372036854775808\n"
        "'null'|null|NULL\n"
        "'real'|real|1.0\n"
        "'text'|text|'1'\n"
        "'tiny'|real|4.94065645841247e-324\n"
        "'uni'|text|'h\xc3\xa9llo \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac"
        "\xe8\xaa\x9e \xf0\x9f\x8e\x89 \xce\xa9'\n"
        "'zero'|real|0.0\n"
        "X'01'|text|'blob key'";
    double negative;

    (void)state;
    start_cluster(3, 311, false);
    cluster_exec(&cl, 0,
                 "INSERT INTO v VALUES ('null', NULL), ('empty', ''),"
                 " ('int', 1), ('real', 1.0), ('text', '1'), ('zero', 0.0)");
    cluster_exec(&cl, 1,
                 "INSERT INTO v VALUES ('emptyblob', X''),"
                 " ('max', 9223372036854775807),"
                 " ('min', -9223372036854775807 - 1), ('tiny', 4.9e-324),"
                 " ('uni', 'h\xc3\xa9llo \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac"
                 "\xe8\xaa\x9e \xf0\x9f\x8e\x89 \xce\xa9')");
    cluster_exec(&cl, 1, "INSERT INTO v VALUES ('blob', randomblob(1048576))");
    insert_negative_zero(1, "negzero");
    cluster_exec(&cl, 2,
                 "INSERT INTO v VALUES (1, 'int key'), ('1', 'text key'),"
                 " (X'01', 'blob key'), (1.5, 'real key')");
    cluster_run(&cl, 2000);
    assert_everywhere("SELECT quote(id), typeof(x), quote(x) FROM v WHERE"
                      " id NOT IN ('blob', 'negzero') ORDER BY id",
                      expected);
    assert_everywhere("SELECT typeof(x), length(x) FROM v WHERE id = 'blob'",
                      "blob|1048576");
    negative = read_double(1, "negzero");
    for (unsigned i = 0; i < 3; i++) {
        double got = read_double(i, "negzero");

        assert_true(got == 0.0);
        assert_int_equal(signbit(got) != 0, signbit(negative) != 0);
    }
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #33: node 0 deletes a parent row while node 1 inserts a child pointing
 * at it: both converge to the parent absent and the child present
 * (dangling). The engine has no FOREIGN KEY yet, so the reference is the
 * application's, as a crdt table's would be (crdt.md §6.8: unenforced). */
static void scenario_33_parent_deleted_child_inserted(void **state)
{
    (void)state;
    start_cluster(2, 331, false);
    cluster_exec(&cl, 0, "INSERT INTO parent VALUES ('p', 'parent')");
    cluster_run(&cl, 200);
    set_delay(50);
    cluster_exec(&cl, 0, "DELETE FROM parent WHERE id = 'p'");
    cluster_run(&cl, 5);
    cluster_assert_query(&cl, 1, "SELECT count(*) FROM parent", "1");
    cluster_exec(&cl, 1, "INSERT INTO child VALUES ('c', 'p', 'child')");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT count(*) FROM parent", "0");
    assert_everywhere("SELECT id, parent_id FROM child", "c|p");
    assert_everywhere("SELECT count(*) FROM child WHERE parent_id NOT IN"
                      " (SELECT id FROM parent)",
                      "1");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #34: a UNIQUE constraint beyond the key, as a column, table constraint
 * or index, is refused when created, with a message that says so; nothing
 * of it is committed or shipped, while a plain table created next does
 * replicate. */
static void scenario_34_unique_beyond_key_refused(void **state)
{
    static const char *const refused[] = {
        "CREATE TABLE u1(k PRIMARY KEY, v UNIQUE)",
        "CREATE TABLE u2(k PRIMARY KEY, v, UNIQUE(v))",
        "CREATE UNIQUE INDEX u3 ON t(a)",
    };
    size_t n;

    (void)state;
    start_cluster(2, 341, false);
    for (n = 0; n < sizeof(refused) / sizeof(refused[0]); n++) {
        assert_int_equal(cluster_exec_rc(&cl, 0, refused[n]),
                         ENGINE_ECONSTRAINT);
        assert_non_null(strstr(cl.nodes[0].last_error, "UNIQUE index"));
        assert_non_null(
            strstr(cl.nodes[0].last_error, "beyond the primary key"));
    }
    assert_non_null(strstr(cl.nodes[0].last_error, "index u3"));
    assert_int_equal(local_version(0), 0);
    cluster_exec(&cl, 0, "CREATE TABLE w(k PRIMARY KEY, v)");
    cluster_exec(&cl, 0, "INSERT INTO w VALUES (1, 'one')");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT name FROM sqlite_schema WHERE name LIKE 'u%'",
                      "");
    assert_everywhere("SELECT v FROM w", "one");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* ---- membership ---- */

static void remove_database(unsigned i)
{
    char path[600];

    snprintf(path, sizeof(path), "%s", cl.nodes[i].path);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s-wal", cl.nodes[i].path);
    (void)unlink(path);
}

/* #36: node 2 writes, leaves, and comes back with a fresh database (a new
 * site id, the same network identity). Its old site's change sets are
 * still held and served by the others: it gets them back, with everything
 * written meanwhile, nothing waits for a gap, and its new writes travel
 * under the new site. */
static void scenario_36_rejoin_with_new_site(void **state)
{
    struct replication_stats stats;

    (void)state;
    start_cluster_history_kept(3, 361, true);
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('old 2a', 1, 1, 1)");
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('old 2b', 2, 2, 2)");
    cluster_exec(&cl, 2, "UPDATE t SET a = 'x' WHERE id = 'old 2a'");
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('from 0', 0, 0, 0)");
    cluster_run(&cl, 1000);
    cluster_assert_converged(&cl);
    cluster_stop(&cl, 2);
    remove_database(2);
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('meanwhile', 1, 1, 1)");
    cluster_run(&cl, 500);
    cl.nodes[2].site_byte = 0x99;
    cluster_start(&cl, 2);
    cluster_run(&cl, 3000);
    cluster_assert_query(&cl, 2, "SELECT id, a FROM t ORDER BY id",
                         "from 0|0\nmeanwhile|1\nold 2a|x\nold 2b|2");
    cluster_assert_query(&cl, 2,
                         "SELECT head FROM sinew_crdt_vv WHERE site ="
                         " X'33333333333333333333333333333333'",
                         "3");
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('new 2', 9, 9, 9)");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT hex(site), head FROM sinew_crdt_vv ORDER BY"
                      " site",
                      "11111111111111111111111111111111|1\n"
                      "22222222222222222222222222222222|1\n"
                      "33333333333333333333333333333333|3\n"
                      "99999999999999999999999999999999|1");
    stats_of(0, &stats);
    assert_int_equal(peer_of(&stats, 2)->site[0], 0x99);
    replication_stats_release(&stats);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_02_equal_stamps_larger_site_wins),
        cmocka_unit_test(scenario_04_different_columns_both_survive),
        cmocka_unit_test(scenario_05_same_columns_tx_no_mixing),
        cmocka_unit_test(scenario_06_overlapping_tx_partial_mixing),
        cmocka_unit_test(scenario_07_delete_vs_update_both_orders),
        cmocka_unit_test(scenario_08_delete_then_reinsert_no_stale_cells),
        cmocka_unit_test(scenario_09_delete_vs_delete_reinsert),
        cmocka_unit_test(scenario_10_concurrent_inserts_whole_row),
        cmocka_unit_test(scenario_11_update_before_its_insert),
        cmocka_unit_test(scenario_13_far_ahead_clock_deferred),
        cmocka_unit_test(scenario_14_near_ahead_clock_accepted),
        cmocka_unit_test(scenario_15_clock_steps_back),
        cmocka_unit_test(scenario_16_duplicate_delivery_no_effect),
        cmocka_unit_test(scenario_17_reordered_delivery_same_state),
        cmocka_unit_test(scenario_18_big_tx_chunks_atomic),
        cmocka_unit_test(scenario_22_replay_changes_nothing),
        cmocka_unit_test(scenario_23_three_way_partition_heals),
        cmocka_unit_test(scenario_24_relay_of_superseded_version),
        cmocka_unit_test(scenario_28_primary_key_change_vs_update),
        cmocka_unit_test(scenario_29_big_merge_while_writing),
        cmocka_unit_test(scenario_31_value_edge_cases),
        cmocka_unit_test(scenario_33_parent_deleted_child_inserted),
        cmocka_unit_test(scenario_34_unique_beyond_key_refused),
        cmocka_unit_test(scenario_36_rejoin_with_new_site),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
