/* SPDX-License-Identifier: MIT
 *
 * Goal: a snapshot install is a join (crdt_snapshot_join.c, crdt.h
 * "snapshots"; ../shared/reference/crdt.md §6.1, §6.7): two nodes that
 * each hold versions the other lacks and has pruned from its log (the two
 * halves of a relay line with log retention, the simulator's crdt seeds
 * 0x43 and 0x13d) install each other's snapshots, and both end with every
 * write either side had merged: byte-identical to each other and to a node
 * that merged every change set the ordinary way. Before the join, each
 * refused the other's snapshot (REPLICATION_EBEHIND) forever.
 *
 * Method: five engines in memory in one process (crdt_test.h: fake clocks
 * moved by hand, fixed site ids): origins C and D write, A gets only C's
 * later versions and B only D's, each prunes what the other lacks from
 * its log (as retention would: log rows gone, floor raised), and both
 * write of their own; E receives every change set. Nodes are compared by
 * crdt_test.h's canonical dump (every user table, the schema, the
 * registers, the column catalog, the version vector).
 */
#include <stdio.h>
#include <string.h>

#include "crdt_test.h"

#define SITE_A 0xaa
#define SITE_B 0xbb
#define SITE_C 0xcc
#define SITE_D 0xdd
#define SITE_E 0xee
#define NODES 5

/* b is NOT NULL: a row the join makes visible must come whole. r is keyed
 * by rowid. */
static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b NOT NULL DEFAULT 'dflt');"
    "CREATE TABLE r(x, y);";

static struct crdt_test_node nodes[NODES];
static struct crdt_test_node *const a = &nodes[0];
static struct crdt_test_node *const b = &nodes[1];
static struct crdt_test_node *const c = &nodes[2];
static struct crdt_test_node *const d = &nodes[3];
static struct crdt_test_node *const e = &nodes[4];

static int setup(void **state)
{
    (void)state;
    memset(nodes, 0, sizeof(nodes));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    crdt_test_close_all(nodes, NODES);
    return 0;
}

static void snapshot_of(struct crdt_test_node *node, struct common_buf *out)
{
    common_buf_init(out, SIZE_MAX);
    assert_int_equal(replication__crdt_snapshot_build(node->crdt, out), 0);
}

static void install(struct crdt_test_node *node, const struct common_buf *snap,
                    struct replication__crdt_install *stats)
{
    int rc = replication__crdt_snapshot_install(node->crdt, snap->data,
                                                snap->size, stats);

    if (rc != 0) {
        fail_msg("install: %s: %s", replication_strerror(rc),
                 engine_errmsg(node->db));
    }
}

/* What retention does to node's log of origin: every version it holds
 * leaves the log and the floor says so (sync_history.c's prune_origin). */
static void prune(struct crdt_test_node *node, uint8_t site_byte)
{
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    char sql[256], hex[2 * REPLICATION__SITE_ID_BYTES + 1];
    uint64_t head;
    size_t i;

    memset(site, site_byte, sizeof(site));
    assert_int_equal(replication__crdt_head(node->crdt, site, &head), 0);
    for (i = 0; i < REPLICATION__SITE_ID_BYTES; i++) {
        snprintf(&hex[2 * i], 3, "%02x", site_byte);
    }
    snprintf(sql, sizeof(sql),
             "DELETE FROM sinew_crdt_log WHERE origin = x'%s';"
             "INSERT OR REPLACE INTO sinew_crdt_floor VALUES (x'%s', %llu)",
             hex, hex, (unsigned long long)head);
    crdt_test_exec(node, sql);
}

/* The history: C and D reach A and B only in part; each half prunes. */
static void make_halves(void)
{
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_open(c, SITE_C, schema);
    crdt_test_open(d, SITE_D, schema);
    crdt_test_open(e, SITE_E, schema);
    crdt_test_exec(c, "INSERT INTO t VALUES ('c1', 1, 'one');"
                      "INSERT INTO t VALUES ('c2', 2, 'two');"
                      "INSERT INTO r VALUES (1, 'r one')");
    crdt_test_push(c, a);
    crdt_test_push(c, b);
    crdt_test_push(c, d);

    /* D, earlier than C's later writes: deletes c1, updates c2, makes d1
     * and at once updates it (its cell newer than its existence). */
    crdt_test_tick(nodes, NODES, 5);
    crdt_test_exec(d, "DELETE FROM t WHERE id = 'c1';"
                      "UPDATE t SET a = 'd early', b = 'd b' WHERE id = 'c2';"
                      "INSERT INTO t VALUES ('d1', 'd', 'd1 first')");
    crdt_test_tick(nodes, NODES, 1);
    crdt_test_exec(d, "UPDATE t SET b = 'd1 later' WHERE id = 'd1';"
                      "UPDATE r SET y = 'r by d' WHERE x = 1");

    /* C, later, without D's: updates the deleted c1 (an invisible shadow
     * once they meet), updates c2, makes c3. */
    crdt_test_tick(nodes, NODES, 5);
    crdt_test_exec(c, "UPDATE t SET a = 'c late' WHERE id = 'c2';"
                      "UPDATE t SET b = 'c upd' WHERE id = 'c1';"
                      "INSERT INTO t VALUES ('c3', 3, 'three');"
                      "INSERT INTO r VALUES (2, 'r two')");

    crdt_test_push(c, a); /* A: C's later versions, never D's */
    crdt_test_push(d, b); /* B: D's versions, never C's later ones */
    prune(a, SITE_C);
    prune(b, SITE_D);
    crdt_test_assert_query(a,
                           "SELECT count(*) FROM sinew_crdt_log"
                           " WHERE hex(origin) LIKE 'CC%'",
                           "0");
    crdt_test_assert_query(b,
                           "SELECT count(*) FROM sinew_crdt_log"
                           " WHERE hex(origin) LIKE 'DD%'",
                           "0");

    crdt_test_tick(nodes, NODES, 5);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a1', 'a', 'from a')");
    crdt_test_exec(b, "INSERT INTO t (id, a) VALUES ('b1', 'b')");

    /* E merges every change set the ordinary way. */
    crdt_test_push(c, e);
    crdt_test_push(d, e);
    crdt_test_push(a, e);
    crdt_test_push(b, e);
}

/* The two halves swap snapshots (both built before either installs, as
 * they cross on the wire) and each installs the other's: both succeed,
 * and A, B and E are byte-identical, with every write kept. */
static void halves_swap_snapshots_and_converge(void **state)
{
    struct replication__crdt_install stats_a, stats_b;
    struct common_buf snap_a, snap_b;

    (void)state;
    make_halves();
    snapshot_of(a, &snap_a);
    snapshot_of(b, &snap_b);
    install(a, &snap_b, &stats_a);
    install(b, &snap_a, &stats_b);
    assert_true(stats_a.joined > 0);
    assert_true(stats_b.joined > 0);

    crdt_test_assert_same(a, b);
    crdt_test_assert_same(a, e);
    crdt_test_assert_query(a, "SELECT count(*) FROM t WHERE id = 'c1'", "0");
    crdt_test_assert_query(a, "SELECT a || '/' || b FROM t WHERE id = 'c2'",
                           "c late/d b");
    crdt_test_assert_query(a, "SELECT b FROM t WHERE id = 'd1'", "d1 later");
    crdt_test_assert_query(
        a, "SELECT group_concat(id) FROM (SELECT id FROM t ORDER BY id)",
        "a1,b1,c2,c3,d1");
    crdt_test_assert_query(b, "SELECT b FROM t WHERE id = 'b1'", "dflt");
    crdt_test_assert_query(
        b, "SELECT group_concat(y) FROM (SELECT y FROM r ORDER BY x)",
        "r by d,r two");
    /* c1's later update stays, invisible, under D's older delete. */
    crdt_test_assert_query(a,
                           "SELECT count(*) FROM sinew_crdt_cell WHERE"
                           " tbl = 't' AND has_shadow = 1",
                           "1");

    /* Both carry on as usual. */
    crdt_test_tick(nodes, NODES, 5);
    crdt_test_exec(a, "UPDATE t SET a = 'after' WHERE id = 'd1'");
    crdt_test_push(a, b);
    crdt_test_push(a, e);
    crdt_test_assert_same(a, b);
    crdt_test_assert_same(b, e);
    common_buf_close(&snap_a);
    common_buf_close(&snap_b);
    (void)teardown(NULL);
}

/* Installed in one direction only, then the other's fresh snapshot: the
 * second install has nothing to join of its own and ends at the same
 * state (the order of installs does not matter). */
static void join_then_fresh_snapshot(void **state)
{
    struct replication__crdt_install stats;
    struct common_buf snap_a, snap_b;

    (void)state;
    make_halves();
    snapshot_of(b, &snap_b);
    install(a, &snap_b, &stats);
    snapshot_of(a, &snap_a);
    install(b, &snap_a, &stats);
    assert_int_equal(stats.joined, 0);
    crdt_test_assert_same(a, b);
    crdt_test_assert_same(a, e);
    /* Installing again changes nothing more. */
    install(a, &snap_b, &stats);
    crdt_test_assert_same(a, e);
    common_buf_close(&snap_a);
    common_buf_close(&snap_b);
    (void)teardown(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(halves_swap_snapshots_and_converge,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(join_then_fresh_snapshot, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
