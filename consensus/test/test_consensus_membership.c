/* SPDX-License-Identifier: MIT
 *
 * test_consensus_membership.c: membership changes across a change of
 * leader, on the simulated cluster (raft_cluster.h).
 *
 * Goal: a member that received a configuration entry behind other
 * entries of one AppendEntries (it lagged, so the leader sent it a run
 * of entries) can, once it leads, make the next membership change. With
 * libraft 0.22.1 alone it could not: the follower records the
 * configuration entry as uncommitted under the index of the run's first
 * new entry (replication.c, replicationAppend, which passes `index`, not
 * the entry's own index, to membershipUncommittedChange), so committing
 * the entry never clears it, and as leader it answers every change with
 * RAFT_CANTCHANGE (our CONSENSUS_EBUSY) for good: the chaos simulator's
 * `quorum 0x8b`, a member wiped and added again while the leader
 * crashed. The fix is io_recv.c's configuration-index repair.
 *
 * Method: a follower is cut off while the leader appends commands and
 * then a configuration entry (adding a spare), and healed so that it
 * receives them in one message; leadership is then handed to it, and it
 * must promote the spare. Two variants: the entry already committed
 * when the follower receives it (it commits and applies the run at
 * once), and not yet committed (it commits it on a later message).
 */
#include "raft_cluster.h"

#include <string.h>

/* Node 3 is the member being added; 0..2 are the founding voters. */
#define SPARE 3u

struct leader_wait {
    unsigned want;
};

static bool leads(struct rc_cluster *c, void *arg)
{
    const struct leader_wait *w = arg;

    return rc_leader(c) == (int)w->want;
}

/* Proposes value on member i without waiting. */
static void propose_async(struct rc_cluster *c, unsigned i, uint64_t value,
                          struct rc_op *op)
{
    memset(op, 0, sizeof(*op));
    assert_int_equal(rc_propose(c, i, value, op), 0);
}

/* Starts an add of SPARE as a spare on member leader. */
static void add_spare(struct rc_cluster *c, unsigned leader,
                      struct rc_change *ch)
{
    struct consensus_member member = {.id = c->nodes[SPARE].id,
                                      .node = c->nodes[SPARE].node,
                                      .address = c->nodes[SPARE].address,
                                      .role = CONSENSUS_SPARE};

    *ch = (struct rc_change){0};
    assert_int_equal(
        consensus_add(c->nodes[leader].consensus, &member, rc_change_done, ch),
        0);
}

/* Hands leadership from leader to next, then promotes SPARE to standby
 * on next: the change must be accepted and complete. */
static void transfer_and_promote(struct rc_cluster *c, unsigned leader,
                                 unsigned next)
{
    struct leader_wait w = {.want = next};
    struct rc_change ch = {0};

    assert_int_equal(consensus_transfer(c->nodes[leader].consensus,
                                        c->nodes[next].id, rc_change_done, &ch),
                     0);
    assert_true(rc_run_until(c, rc_change_is_done, &ch, 5000));
    assert_true(rc_run_until(c, leads, &w, 5000));
    ch = (struct rc_change){0};
    assert_int_equal(consensus_assign(c->nodes[next].consensus,
                                      c->nodes[SPARE].id, CONSENSUS_STANDBY,
                                      rc_change_done, &ch),
                     0);
    assert_true(rc_run_until(c, rc_change_is_done, &ch, 10000));
    assert_int_equal(ch.status, 0);
}

/* Three voters and the member to add (up, outside the configuration). */
static unsigned setup(struct rc_cluster *c, uint64_t seed)
{
    rc_init(c, 4, seed);
    rc_bootstrap(c, 3);
    for (unsigned i = 0; i < 4; i++) {
        rc_start(c, i);
    }
    return rc_wait_leader(c, 5000);
}

/* The configuration entry is committed (by the leader and the other
 * follower) before the lagging follower receives it behind three
 * commands: it commits and applies the whole run in one step. */
static void test_change_committed_behind_entries(void **state)
{
    struct rc_cluster c;
    struct rc_change ch;
    unsigned leader, lagging;

    (void)state;
    leader = setup(&c, 61);
    lagging = (leader + 1) % 3;
    rc_commit(&c, 1);
    rc_run(&c, 200);
    rc_isolate(&c, lagging);
    for (uint64_t v = 2; v <= 4; v++) {
        rc_commit(&c, v);
    }
    add_spare(&c, leader, &ch);
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 5000));
    assert_int_equal(ch.status, 0);
    rc_commit(&c, 5);
    rc_rejoin(&c, lagging);
    rc_run(&c, 2000);
    assert_true(rc_has_value(&c, lagging, 5));
    transfer_and_promote(&c, leader, lagging);
    rc_commit(&c, 6);
    rc_check_safety(&c);
    rc_free(&c);
}

/* The configuration entry reaches the follower behind a command before
 * it is committed anywhere but the leader: the follower commits it on a
 * later message. */
static void test_change_uncommitted_behind_entries(void **state)
{
    struct rc_cluster c;
    struct rc_change ch;
    struct rc_op op;
    unsigned leader, lagging, other;

    (void)state;
    leader = setup(&c, 62);
    lagging = (leader + 1) % 3;
    other = (leader + 2) % 3;
    rc_commit(&c, 1);
    rc_run(&c, 200);
    rc_partition(&c, leader, lagging);
    rc_partition(&c, leader, other);
    propose_async(&c, leader, 2, &op);
    rc_run(&c, 5); /* the command's entry comes first */
    add_spare(&c, leader, &ch);
    rc_run(&c, 50);
    assert_false(op.done);
    assert_false(ch.done);
    rc_heal(&c, leader, lagging);
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 5000));
    assert_int_equal(ch.status, 0);
    assert_true(op.done);
    assert_int_equal(op.status, 0);
    rc_heal(&c, leader, other);
    rc_run(&c, 1000);
    assert_true(rc_has_value(&c, lagging, 2));
    transfer_and_promote(&c, leader, lagging);
    rc_commit(&c, 3);
    rc_check_safety(&c);
    rc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_change_committed_behind_entries),
        cmocka_unit_test(test_change_uncommitted_behind_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
