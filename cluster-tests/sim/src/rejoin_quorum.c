/* SPDX-License-Identifier: MIT
 *
 * rejoin_quorum.c: quorum mode's wipe fault (chaos-design.md §6): a
 * member loses its whole data dir (Raft log and database: a disk
 * replaced) and comes back as a new member, the way an operator brings
 * such a node back (consensus.h: "the new member starts with an empty
 * data_dir and no bootstrap"; "one node, one id": it cannot come back
 * under its old id, whose log promises it no longer keeps).
 *
 * The wipe crashes the member, deletes its files and gives it the Raft id
 * old + SIM_NODES_MAX; it restarts later (or at the heal) with an empty
 * log and no configuration, so it neither votes nor stands. Then, on
 * whichever member is a ready leader, one change at a time:
 * consensus_remove(old id), consensus_add(new id, voter), and
 * consensus_assign(voter) if the add stopped short (its catch-up ran out,
 * or the leader changed under it). Each step is chosen afresh from the
 * leader's configuration, so a change whose answer was lost with its
 * leader is neither repeated nor skipped. Removing first keeps one node
 * under one id in every configuration (Raft §6: single-server changes).
 *
 * What it proves: the data the old member acknowledged stays on a
 * majority, the new member catches up from the leader (log or snapshot),
 * and the register history stays linearizable across the change
 * (work_quorum.c's checkers run on every member, the new one included).
 * settled() waits for the rejoin to finish.
 */
#include "quorum_int.h"

/* Wait between attempts that could not start or failed (sim ms). */
#define SIMQ_REJOIN_RETRY_MS 100
/* The configuration holds at most every node once, plus slack. */
#define SIMQ_MEMBERS_MAX (2 * SIM_NODES_MAX)

int simq_wipe(struct sim *sim, unsigned node)
{
    struct simq *s = simq_get(sim);
    struct simq_node *qn = &s->nodes[node];
    struct sim_node *victim = &sim->nodes[node];
    int rc;

    if (s->rejoin.active) {
        /* One member away at a time: with two, a three-node group has no
         * majority left to add anyone back. */
        sim_trace(sim, (int)node, "wipe-skip", s->rejoin.node, 0);
        return 0;
    }
    if (victim->up) {
        sim_node_stop(sim, node, true);
        victim->restart_at_ms =
            sim->now_ms + sim_rng_range(&sim->rng[SIM_RNG_NEMESIS], 50, 3000);
    }
    rc = sim_node_wipe(sim, node);
    if (rc != 0) {
        return sim_fail(sim, "setup", -1, "node %u: its dir cannot be made",
                        node);
    }
    s->rejoin = (struct simq_rejoin){
        .active = true, .node = node, .old_id = qn->raft_id};
    qn->raft_id += SIM_NODES_MAX;
    qn->bootstrapped = true; /* it joins: never bootstraps again */
    sim_trace(sim, (int)node, "rejoin-id", s->rejoin.old_id, qn->raft_id);
    return 0;
}

static void change_done(void *ctx, int status)
{
    struct sim *sim = ctx;
    struct simq_rejoin *r = &simq_get(sim)->rejoin;

    r->busy = false;
    sim_trace(sim, (int)r->node, "rejoin-change", (uint64_t) - (int64_t)status,
              0);
    if (status != 0) {
        r->retry_at_ms = sim->now_ms + SIMQ_REJOIN_RETRY_MS;
    }
}

/* Where the rejoin stands in the leader's configuration. */
enum rejoin_step {
    REJOIN_REMOVE_OLD,
    REJOIN_ADD_NEW,
    REJOIN_PROMOTE,
    REJOIN_DONE,
};

static enum rejoin_step next_step(struct consensus *c, uint64_t old_id,
                                  uint64_t new_id)
{
    struct consensus_member members[SIMQ_MEMBERS_MAX];
    size_t count = 0;
    bool has_new = false, new_votes = false;

    consensus_members(c, members, SIMQ_MEMBERS_MAX, &count);
    ASSERT(count <= SIMQ_MEMBERS_MAX);
    for (size_t i = 0; i < count; i++) {
        if (members[i].id == old_id) {
            return REJOIN_REMOVE_OLD;
        }
        if (members[i].id == new_id) {
            has_new = true;
            new_votes = members[i].role == CONSENSUS_VOTER;
        }
    }
    if (!has_new) {
        return REJOIN_ADD_NEW;
    }
    return new_votes ? REJOIN_DONE : REJOIN_PROMOTE;
}

/* Starts the change step on the leader's consensus: 0, or its refusal. */
static int start_change(struct sim *sim, struct consensus *c,
                        enum rejoin_step step)
{
    struct simq_rejoin *r = &simq_get(sim)->rejoin;
    const struct sim_node *node = &sim->nodes[r->node];
    uint64_t new_id = simq_get(sim)->nodes[r->node].raft_id;
    struct consensus_member member = {.id = new_id,
                                      .node = node->id,
                                      .address = node->address,
                                      .role = CONSENSUS_VOTER};

    switch (step) {
    case REJOIN_REMOVE_OLD:
        return consensus_remove(c, r->old_id, change_done, sim);
    case REJOIN_ADD_NEW:
        return consensus_add(c, &member, change_done, sim);
    default:
        return consensus_assign(c, new_id, CONSENSUS_VOTER, change_done, sim);
    }
}

void simq_rejoin_step(struct sim *sim)
{
    struct simq *s = simq_get(sim);
    struct simq_rejoin *r = &s->rejoin;
    struct consensus *c;
    enum rejoin_step step;
    int leader, rc;

    if (!r->active || r->busy || sim->now_ms < r->retry_at_ms) {
        return;
    }
    leader = simq_ready_leader(sim);
    if (leader < 0) {
        return;
    }
    c = node_quorum_consensus(simq_member(sim, (unsigned)leader));
    step = next_step(c, r->old_id, s->nodes[r->node].raft_id);
    if (step == REJOIN_DONE) {
        r->active = false;
        sim_trace(sim, (int)r->node, "rejoined", s->nodes[r->node].raft_id, 0);
        return;
    }
    rc = start_change(sim, c, step);
    sim_trace(sim, leader, "rejoin-step", (uint64_t)step,
              (uint64_t) - (int64_t)rc);
    if (rc != 0) {
        r->retry_at_ms = sim->now_ms + SIMQ_REJOIN_RETRY_MS;
        return;
    }
    r->busy = true;
    sim->nodes[leader].tick_now = true; /* consensus.h: tick after a call */
}
