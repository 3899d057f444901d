/* SPDX-License-Identifier: MIT
 *
 * test_quorum.c: quorum mode end to end on engine databases, on the
 * simulated cluster: SQL commits everywhere, conflicts, a killed leader
 * loses no acknowledged write, unknown outcomes resolved by transaction
 * id, restarts from disk, snapshot catch-up, membership under load.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "quorum_test.h"

#define SCHEMA "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INTEGER NOT NULL)"

static void setup(struct rc_cluster *c, size_t n, size_t voters, uint64_t seed)
{
    rc_init(c, n, seed);
    qt_use_quorum_members(c);
    rc_bootstrap(c, voters);
    for (unsigned i = 0; i < voters; i++) {
        rc_start(c, i);
    }
    qt_exec(c, SCHEMA);
}

static void test_sql_commits_everywhere(void **state)
{
    struct rc_cluster c;

    (void)state;
    setup(&c, 3, 3, 21);
    qt_exec(&c, "INSERT INTO kv VALUES (1, 10), (2, 20)");
    qt_exec(&c, "UPDATE kv SET v = v + 1 WHERE k = 1");
    rc_run(&c, 500);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(
            qt_query_int(&c, i, "SELECT v FROM kv WHERE k = 1", -1), 11);
        assert_int_equal(qt_query_int(&c, i, "SELECT count(*) FROM kv", -1), 2);
    }
    rc_free(&c);
}

/* Nothing is visible before commit; a follower refuses; two transactions
 * writing one row in flight: the second conflicts; a constraint failure
 * at apply fails that transaction alone. */
static void test_refusals_and_conflicts(void **state)
{
    struct rc_cluster c;
    struct qt_write a, b, dup;
    unsigned leader, follower;

    (void)state;
    setup(&c, 3, 3, 22);
    leader = rc_wait_leader(&c, 5000);
    follower = (leader + 1) % 3;
    assert_int_equal(
        qt_write_start(&c, follower, "INSERT INTO kv VALUES (5, 1)", &a),
        CONSENSUS_ENOTLEADER);
    assert_int_equal(
        qt_write_start(&c, leader, "INSERT INTO kv VALUES (5, 1)", &a), 0);
    assert_int_equal(qt_query_int(&c, leader, "SELECT count(*) FROM kv", -1),
                     0);
    assert_int_equal(
        qt_write_start(&c, leader, "UPDATE kv SET v = 2 WHERE k = 5", &b), 0);
    assert_int_equal(
        qt_write_start(&c, leader, "INSERT INTO kv VALUES (5, 3)", &dup),
        REPLICATION_ECONFLICT);
    assert_true(qt_wait(&c, &a, 5000));
    assert_int_equal(a.status, 0);
    /* b executed before a applied: it saw no row, updated nothing, and was
     * a read. */
    assert_true(qt_wait(&c, &b, 5000));
    assert_int_equal(b.status, 0);
    assert_int_equal(
        qt_write_start(&c, leader, "INSERT INTO kv VALUES (5, 9)", &dup),
        ENGINE_ECONSTRAINT);
    rc_run(&c, 300);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(
            qt_query_int(&c, i, "SELECT v FROM kv WHERE k = 5", -1), 1);
    }
    rc_free(&c);
}

/* Writes flow while the leader is killed: every acknowledged write is on
 * the survivors, and every unknown one is resolved by its transaction id
 * on the new leader: committed and present, or absent. */
static void test_leader_killed_under_load(void **state)
{
    enum { WRITES = 60 };
    static struct qt_write writes[WRITES];
    struct rc_cluster c;
    unsigned killed = 0, acked = 0, unknown = 0;
    int leader = -1;

    (void)state;
    setup(&c, 3, 3, 23);
    for (unsigned k = 0; k < WRITES; k++) {
        char sql[128];
        writes[k].status = -1;
        leader = rc_leader(&c);
        if (k == WRITES / 2) {
            killed = (unsigned)leader;
            rc_stop(&c, killed);
            leader = -1;
        }
        if (leader >= 0) {
            snprintf(sql, sizeof sql, "INSERT INTO kv VALUES (%u, %u)", k, k);
            if (qt_write_start(&c, (unsigned)leader, sql, &writes[k]) != 0) {
                writes[k].done = true;
                writes[k].status = CONSENSUS_ENOTLEADER;
            }
        } else {
            writes[k].done = true;
            writes[k].status = CONSENSUS_ENOTLEADER;
        }
        rc_run(&c, 20);
    }
    leader = (int)rc_wait_leader(&c, 5000);
    rc_run(&c, 1000);
    for (unsigned k = 0; k < WRITES; k++) {
        char sql[128];
        uint64_t index;
        int result;
        int64_t present;

        if (!writes[k].done) {
            fail_msg("write %u never completed", k);
        }
        snprintf(sql, sizeof sql, "SELECT count(*) FROM kv WHERE k = %u", k);
        present = qt_query_int(&c, (unsigned)leader, sql, -1);
        if (writes[k].status == 0) {
            acked++;
            assert_int_equal(present, 1);
        } else if (writes[k].status == CONSENSUS_EUNKNOWN) {
            int rc = node_quorum_txn_status(qt_member(&c, (unsigned)leader),
                                            writes[k].txn_id, &index, &result);
            unknown++;
            assert_int_equal(present, rc == 0 ? 1 : 0);
        } else {
            assert_int_equal(writes[k].status, CONSENSUS_ENOTLEADER);
            assert_int_equal(present, 0);
        }
    }
    assert_true(acked >= WRITES / 3);
    rc_start(&c, killed);
    rc_run(&c, 2000);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(
            qt_query_int(&c, i, "SELECT count(*) FROM kv", -1),
            qt_query_int(&c, (unsigned)leader, "SELECT count(*) FROM kv", -1));
    }
    printf("  %u acknowledged, %u unknown of %d writes\n", acked, unknown,
           WRITES);
    rc_free(&c);
}

/* Every member stops and starts from disk; the databases skip what they
 * applied (no duplicate inserts) and the group goes on. */
static void test_restart_all(void **state)
{
    struct rc_cluster c;

    (void)state;
    setup(&c, 3, 3, 24);
    for (int k = 0; k < 10; k++) {
        char sql[64];
        snprintf(sql, sizeof sql, "INSERT INTO kv VALUES (%d, %d)", k, k);
        qt_exec(&c, sql);
    }
    rc_run(&c, 300);
    for (unsigned i = 0; i < 3; i++) {
        rc_stop(&c, i);
    }
    rc_start_all(&c);
    qt_exec(&c, "INSERT INTO kv VALUES (100, 100)");
    rc_run(&c, 500);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(qt_query_int(&c, i, "SELECT count(*) FROM kv", -1),
                         11);
    }
    rc_free(&c);
}

/* A member whose database file is lost and whose log was overtaken by
 * snapshots is rebuilt from a snapshot. */
static void test_snapshot_rebuilds_member(void **state)
{
    struct rc_cluster c;
    char path[700];
    unsigned lost;

    (void)state;
    rc_init(&c, 3, 25);
    qt_use_quorum_members(&c);
    c.snapshot_threshold = 8;
    c.snapshot_trailing = 2;
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    qt_exec(&c, SCHEMA);
    lost = ((unsigned)rc_wait_leader(&c, 5000) + 1) % 3;
    rc_stop(&c, lost);
    snprintf(path, sizeof path, "%s.db", c.nodes[lost].dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s.db-wal", c.nodes[lost].dir);
    unlink(path);
    for (int k = 0; k < 40; k++) {
        char sql[64];
        snprintf(sql, sizeof sql, "INSERT INTO kv VALUES (%d, %d)", k, k);
        qt_exec(&c, sql);
    }
    rc_start(&c, lost);
    rc_run(&c, 3000);
    assert_int_equal(qt_query_int(&c, lost, "SELECT count(*) FROM kv", -1), 40);
    assert_int_equal(qt_query_int(&c, lost, "SELECT sum(v) FROM kv", -1),
                     40 * 39 / 2);
    rc_free(&c);
}

/* Membership changes while writes flow: a fourth member joins as a
 * learner and becomes a voter once caught up; a voter is removed; the
 * leader hands over leadership. */
static void test_membership_under_load(void **state)
{
    struct rc_cluster c;
    struct rc_change ch = {0};
    struct consensus_member member;
    struct consensus_member members[8];
    size_t count;
    unsigned leader;
    int k = 0;

    (void)state;
    setup(&c, 4, 3, 26);
    for (; k < 10; k++) {
        char sql[64];
        snprintf(sql, sizeof sql, "INSERT INTO kv VALUES (%d, %d)", k, k);
        qt_exec(&c, sql);
    }
    rc_start(&c, 3);
    leader = rc_wait_leader(&c, 5000);
    member = (struct consensus_member){.id = c.nodes[3].id,
                                       .node = c.nodes[3].node,
                                       .address = c.nodes[3].address,
                                       .role = CONSENSUS_VOTER};
    assert_int_equal(consensus_add(node_quorum_consensus(qt_member(&c, leader)),
                                   &member, rc_change_done, &ch),
                     0);
    while (!ch.done && k < 200) {
        char sql[64];
        snprintf(sql, sizeof sql, "INSERT INTO kv VALUES (%d, %d)", k, k);
        qt_exec(&c, sql);
        k++;
    }
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 10000));
    assert_int_equal(ch.status, 0);
    consensus_members(node_quorum_consensus(qt_member(&c, leader)), members, 8,
                      &count);
    assert_int_equal(count, 4);
    for (size_t m = 0; m < count; m++) {
        assert_int_equal(members[m].role, CONSENSUS_VOTER);
    }
    rc_run(&c, 500);
    assert_int_equal(qt_query_int(&c, 3, "SELECT count(*) FROM kv", -1), k);

    /* Hand leadership to the new member, then remove the old leader. */
    ch = (struct rc_change){0};
    assert_int_equal(
        consensus_transfer(node_quorum_consensus(qt_member(&c, leader)),
                           c.nodes[3].id, rc_change_done, &ch),
        0);
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 10000));
    leader = rc_wait_leader(&c, 5000);
    assert_int_equal(leader, 3);
    ch = (struct rc_change){0};
    assert_int_equal(consensus_remove(node_quorum_consensus(qt_member(&c, 3)),
                                      c.nodes[0].id, rc_change_done, &ch),
                     0);
    qt_exec(&c, "INSERT INTO kv VALUES (1000, 1)");
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 10000));
    assert_int_equal(ch.status, 0);
    consensus_members(node_quorum_consensus(qt_member(&c, 3)), members, 8,
                      &count);
    assert_int_equal(count, 3);
    qt_exec(&c, "INSERT INTO kv VALUES (1001, 1)");
    rc_run(&c, 500);
    for (unsigned i = 1; i < 4; i++) {
        assert_int_equal(qt_query_int(&c, i, "SELECT count(*) FROM kv", -1),
                         k + 2);
    }
    rc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_commits_everywhere),
        cmocka_unit_test(test_refusals_and_conflicts),
        cmocka_unit_test(test_leader_killed_under_load),
        cmocka_unit_test(test_restart_all),
        cmocka_unit_test(test_snapshot_rebuilds_member),
        cmocka_unit_test(test_membership_under_load),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
