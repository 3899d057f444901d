/* SPDX-License-Identifier: MIT
 *
 * invariants_repl.c: what must hold at every instant of a crdt or leader
 * run, checked inline (chaos.md §3.1: invariants are checked where they
 * can break, not only in the final state, so a seed fails at the instant
 * the product went wrong and its trace ends there).
 *
 * While a node stays up:
 *  - its version vector never goes back (an origin's head is "versions
 *    1..head applied", DESIGN.md; a merge, a retry or a snapshot install
 *    may only add to it);
 *  - leader mode: the highest epoch it has seen never goes back, and once
 *    it says it diverged it keeps saying so (a deposed writer's change
 *    sets, once applied, never leave; replication.h, stats.diverged).
 * A crash forgets what was seen: an unsynced commit may be lost with it,
 * which the end-of-run checkers judge against what was acknowledged.
 */
#include <string.h>

#include "repl.h"

void repl_invariants_forget(struct sim *sim, unsigned i)
{
    struct repl *repl = sim->mode_state;
    struct repl_node *rn;

    if (repl == NULL) {
        return;
    }
    rn = &repl->nodes[i];
    common_free(rn->seen);
    rn->seen = NULL;
    rn->seen_count = 0;
    rn->seen_valid = false;
}

/* origin's head in stats, 0 when it does not name it. */
static uint64_t head_in(const struct replication_stats *stats,
                        const uint8_t *site)
{
    for (size_t i = 0; i < stats->origin_count; i++) {
        if (memcmp(stats->origins[i].site, site, REPLICATION_SITE_ID_BYTES) ==
            0) {
            return stats->origins[i].head;
        }
    }
    return 0;
}

static int compare(struct sim *sim, unsigned i, const struct repl_node *rn,
                   const struct replication_stats *now)
{
    for (size_t k = 0; k < rn->seen_count; k++) {
        uint64_t head = head_in(now, rn->seen[k].site);

        if (head < rn->seen[k].head) {
            return sim_fail(sim, "heads", -1,
                            "n%u: an origin's head went back from %llu to "
                            "%llu while up",
                            i, (unsigned long long)rn->seen[k].head,
                            (unsigned long long)head);
        }
    }
    if (now->epoch < rn->seen_epoch) {
        return sim_fail(sim, "epoch", -1,
                        "n%u: epoch went back from %llu to %llu while up", i,
                        (unsigned long long)rn->seen_epoch,
                        (unsigned long long)now->epoch);
    }
    if (rn->seen_diverged && !now->diverged) {
        return sim_fail(sim, "diverged", -1,
                        "n%u: no longer says it diverged, while up", i);
    }
    return 0;
}

/* Keeps now's version vector, epoch and divergence as node i's seen. */
static void remember(struct repl_node *rn, struct replication_stats *now)
{
    common_free(rn->seen);
    rn->seen = now->origins; /* taken over: released without it below */
    rn->seen_count = now->origin_count;
    now->origins = NULL;
    now->origin_count = 0;
    rn->seen_epoch = now->epoch;
    rn->seen_diverged = now->diverged;
    rn->seen_valid = true;
}

int repl_invariants(struct sim *sim)
{
    struct repl *repl = sim->mode_state;

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct repl_node *rn = &repl->nodes[i];
        struct replication_stats now;
        int rc;

        if (!sim->nodes[i].up || rn->r == NULL ||
            replication_stats_get(rn->r, &now) != 0) {
            continue; /* down, or no memory for stats: nothing to judge */
        }
        rc = rn->seen_valid ? compare(sim, i, rn, &now) : 0;
        if (rc == 0) {
            remember(rn, &now);
        }
        replication_stats_release(&now);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
