/* SPDX-License-Identifier: MIT
 *
 * test_consensus.c: quorum mode's Raft, deterministic, on the simulated
 * cluster (raft_cluster.h): elections, commits, partitions of the leader,
 * minority and majority, a killed leader, restarts from disk, reads,
 * refusals on followers, unknown outcomes.
 */
#include "raft_cluster.h"

#include <string.h>

static void setup_three(struct rc_cluster *c, uint64_t seed)
{
    rc_init(c, 3, seed);
    rc_bootstrap(c, 3);
    rc_start_all(c);
}

/* A leader is elected and a command is applied on every member, in one
 * entry, with the state machine's result handed to the proposer. */
static void test_commit(void **state)
{
    struct rc_cluster c;
    uint64_t index;

    (void)state;
    setup_three(&c, 1);
    rc_wait_leader(&c, 5000);
    index = rc_commit(&c, 42);
    assert_true(index > 1);
    rc_run(&c, 500);
    for (unsigned i = 0; i < 3; i++) {
        assert_true(rc_has_value(&c, i, 42));
        assert_true(c.nodes[i].machine.applied_index >= index);
    }
    rc_check_safety(&c);
    rc_free(&c);
}

/* Commands proposed before one tick share one entry (group proposal), in
 * the order proposed, each with its own result. */
static void test_group_proposal(void **state)
{
    struct rc_cluster c;
    struct rc_op ops[20];
    unsigned leader;

    (void)state;
    setup_three(&c, 2);
    leader = rc_wait_leader(&c, 5000);
    for (unsigned k = 0; k < 20; k++) {
        assert_int_equal(rc_propose(&c, leader, 100 + k, &ops[k]), 0);
    }
    rc_run(&c, 1000);
    for (unsigned k = 0; k < 20; k++) {
        assert_true(ops[k].done);
        assert_int_equal(ops[k].status, 0);
        assert_int_equal(ops[k].index, ops[0].index);
        assert_int_equal(ops[k].result, (int)k + 1);
    }
    for (unsigned i = 0; i < 3; i++) {
        const struct rc_machine *m = &c.nodes[i].machine;
        assert_int_equal(m->count, 20);
        for (unsigned k = 0; k < 20; k++) {
            assert_int_equal(m->applied[k].value, 100 + k);
        }
    }
    rc_free(&c);
}

/* A follower refuses and names the leader. */
static void test_follower_refuses(void **state)
{
    struct rc_cluster c;
    struct consensus_status status;
    struct rc_op op;
    unsigned leader, follower;

    (void)state;
    setup_three(&c, 3);
    leader = rc_wait_leader(&c, 5000);
    rc_run(&c, 300);
    follower = (leader + 1) % 3;
    assert_int_equal(rc_propose(&c, follower, 7, &op), CONSENSUS_ENOTLEADER);
    assert_int_equal(
        consensus_read_barrier(c.nodes[follower].consensus, NULL, NULL),
        CONSENSUS_ENOTLEADER);
    consensus_status_get(c.nodes[follower].consensus, &status);
    assert_int_equal(status.state, CONSENSUS_FOLLOWER);
    assert_int_equal(status.leader_id, c.nodes[leader].id);
    assert_string_equal(status.leader_address, c.nodes[leader].address);
    rc_free(&c);
}

/* The leader cut off from both followers: the majority elects another,
 * the old leader's pending command ends unknown (or never commits), it
 * steps down, and after healing it follows and catches up. */
static void test_leader_partitioned(void **state)
{
    struct rc_cluster c;
    struct consensus_status status;
    struct rc_op stranded;
    unsigned old, next;

    (void)state;
    setup_three(&c, 4);
    old = rc_wait_leader(&c, 5000);
    rc_commit(&c, 1);
    rc_isolate(&c, old);
    assert_int_equal(rc_propose(&c, old, 666, &stranded), 0);
    rc_run(&c, 5000);
    assert_true(stranded.done);
    assert_int_equal(stranded.status, CONSENSUS_EUNKNOWN);
    next = (unsigned)rc_leader(&c);
    assert_int_not_equal(next, old);
    consensus_status_get(c.nodes[old].consensus, &status);
    assert_int_not_equal(status.state, CONSENSUS_LEADER);
    rc_commit(&c, 2);
    rc_rejoin(&c, old);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, old, 2));
    /* Never committed: a majority never had it, and the new leader's
     * entries replaced it in the old leader's log. */
    for (unsigned i = 0; i < 3; i++) {
        assert_false(rc_has_value(&c, i, 666));
    }
    rc_check_safety(&c);
    rc_free(&c);
}

/* A minority partition (one follower) changes nothing for the others;
 * the follower catches up after healing. */
static void test_minority_partition(void **state)
{
    struct rc_cluster c;
    unsigned leader, lone;

    (void)state;
    setup_three(&c, 5);
    leader = rc_wait_leader(&c, 5000);
    lone = (leader + 2) % 3;
    rc_isolate(&c, lone);
    for (uint64_t v = 1; v <= 10; v++) {
        rc_commit(&c, v);
    }
    assert_int_equal(rc_leader(&c), (int)leader);
    assert_false(rc_has_value(&c, lone, 10));
    rc_rejoin(&c, lone);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, lone, 10));
    /* Pre-vote: the returning member did not depose the leader. */
    assert_int_equal(rc_leader(&c), (int)leader);
    rc_check_safety(&c);
    rc_free(&c);
}

/* With a majority partitioned away nothing commits; a proposal made
 * meanwhile completes unknown or after healing, never lost silently. */
static void test_majority_partition(void **state)
{
    struct rc_cluster c;
    struct rc_op op;
    unsigned leader;

    (void)state;
    rc_init(&c, 5, 6);
    rc_bootstrap(&c, 5);
    rc_start_all(&c);
    leader = rc_wait_leader(&c, 5000);
    /* The leader keeps one follower: 2 of 5. */
    for (unsigned i = 0; i < 5; i++) {
        for (unsigned j = i + 1; j < 5; j++) {
            bool left_i = i == leader || i == (leader + 1) % 5;
            bool left_j = j == leader || j == (leader + 1) % 5;
            if (left_i != left_j) {
                rc_partition(&c, i, j);
            }
        }
    }
    assert_int_equal(rc_propose(&c, leader, 77, &op), 0);
    rc_run(&c, 1000);
    assert_false(rc_has_value(&c, leader, 77));
    rc_run(&c, 6000);
    /* The three elected their own leader and commit. */
    assert_true(rc_leader(&c) >= 0);
    assert_int_not_equal(rc_leader(&c), (int)leader);
    assert_true(op.done);
    assert_int_equal(op.status, CONSENSUS_EUNKNOWN);
    rc_commit(&c, 78);
    for (unsigned i = 0; i < 5; i++) {
        for (unsigned j = i + 1; j < 5; j++) {
            rc_heal(&c, i, j);
        }
    }
    rc_run(&c, 3000);
    for (unsigned i = 0; i < 5; i++) {
        assert_true(rc_has_value(&c, i, 78));
    }
    rc_check_safety(&c);
    rc_free(&c);
}

/* The leader is killed (stopped): a new one takes over and nothing
 * committed is lost; the old one restarts from its log and catches up. */
static void test_leader_killed(void **state)
{
    struct rc_cluster c;
    unsigned old;

    (void)state;
    setup_three(&c, 7);
    old = rc_wait_leader(&c, 5000);
    for (uint64_t v = 1; v <= 5; v++) {
        rc_commit(&c, v);
    }
    rc_stop(&c, old);
    rc_wait_leader(&c, 5000);
    rc_commit(&c, 6);
    rc_start(&c, old);
    rc_run(&c, 3000);
    for (unsigned i = 0; i < 3; i++) {
        for (uint64_t v = 1; v <= 6; v++) {
            assert_true(rc_has_value(&c, i, v));
        }
    }
    rc_check_safety(&c);
    rc_free(&c);
}

/* Every member stops and starts again from disk: the log, term and vote
 * survive, the machines skip what they already applied, and the group
 * goes on. */
static void test_restart_all(void **state)
{
    struct rc_cluster c;

    (void)state;
    setup_three(&c, 8);
    for (uint64_t v = 1; v <= 10; v++) {
        rc_commit(&c, v);
    }
    rc_run(&c, 500);
    for (unsigned i = 0; i < 3; i++) {
        rc_stop(&c, i);
    }
    /* One machine also lost its state: it is rebuilt from the log. */
    rc_wipe_machine(&c, 1);
    rc_start_all(&c);
    rc_commit(&c, 11);
    rc_run(&c, 1000);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(c.nodes[i].machine.count, 11);
    }
    rc_check_safety(&c);
    rc_free(&c);
}

/* A follower down while the others took snapshots and dropped the log it
 * needs catches up from a snapshot. */
static void test_snapshot_catch_up(void **state)
{
    struct rc_cluster c;

    (void)state;
    rc_init(&c, 3, 9);
    c.snapshot_threshold = 8;
    c.snapshot_trailing = 2;
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    rc_wait_leader(&c, 5000);
    unsigned lagging = ((unsigned)rc_leader(&c) + 1) % 3;
    rc_stop(&c, lagging);
    rc_wipe_machine(&c, lagging);
    for (uint64_t v = 1; v <= 40; v++) {
        rc_commit(&c, v);
    }
    rc_start(&c, lagging);
    rc_run(&c, 3000);
    assert_true(c.nodes[lagging].machine.restores >= 1);
    assert_true(rc_has_value(&c, lagging, 40));
    assert_true(c.nodes[(lagging + 1) % 3].machine.snapshots >= 1);
    rc_check_safety(&c);
    rc_free(&c);
}

/* Reads on the leader wait for a barrier; concurrent ones share one. */
static void test_read_barrier(void **state)
{
    struct rc_cluster c;
    struct rc_reads reads = {0};
    struct consensus_status before, after;
    unsigned leader;

    (void)state;
    setup_three(&c, 10);
    leader = rc_wait_leader(&c, 5000);
    rc_commit(&c, 1);
    rc_run(&c, 200);
    consensus_status_get(c.nodes[leader].consensus, &before);
    for (int k = 0; k < 10; k++) {
        assert_int_equal(consensus_read_barrier(c.nodes[leader].consensus,
                                                rc_read_done, &reads),
                         0);
    }
    c.nodes[leader].next_tick_ms = 0;
    rc_run(&c, 500);
    assert_int_equal(reads.done, 10);
    assert_int_equal(reads.status, 0);
    consensus_status_get(c.nodes[leader].consensus, &after);
    /* One barrier entry for the ten reads. */
    assert_int_equal(after.last_index, before.last_index + 1);
    rc_free(&c);
}

/* A leader cut off cannot complete a read: it fails once it steps down,
 * never answers with possibly stale data. */
static void test_read_on_isolated_leader(void **state)
{
    struct rc_cluster c;
    struct rc_reads reads = {0};
    unsigned leader;

    (void)state;
    setup_three(&c, 11);
    leader = rc_wait_leader(&c, 5000);
    rc_commit(&c, 1);
    rc_isolate(&c, leader);
    assert_int_equal(
        consensus_read_barrier(c.nodes[leader].consensus, rc_read_done, &reads),
        0);
    rc_run(&c, 5000);
    assert_int_equal(reads.done, 1);
    assert_int_equal(reads.status, CONSENSUS_ENOTLEADER);
    rc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit),
        cmocka_unit_test(test_group_proposal),
        cmocka_unit_test(test_follower_refuses),
        cmocka_unit_test(test_leader_partitioned),
        cmocka_unit_test(test_minority_partition),
        cmocka_unit_test(test_majority_partition),
        cmocka_unit_test(test_leader_killed),
        cmocka_unit_test(test_restart_all),
        cmocka_unit_test(test_snapshot_catch_up),
        cmocka_unit_test(test_read_barrier),
        cmocka_unit_test(test_read_on_isolated_leader),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
