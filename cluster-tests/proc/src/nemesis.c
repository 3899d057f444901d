/* SPDX-License-Identifier: MIT
 *
 * nemesis.c: the fault schedule of a run and the faults themselves.
 *
 * The schedule is a function of the seed alone (chaos.md §3.2: "fault for
 * 5-15 s, heal for 5-15 s", shortened here so a 60 s CI run sees several):
 * alternating faults of 3-8 s and healthy gaps of 3-6 s; the last fault
 * lasts to the end of the workload, so the final heal (after which crdt
 * convergence and quorum recovery are measured) heals something. Targets that
 * depend on the cluster's state (the quorum leader) are chosen when the fault
 * starts, so a seed reproduces the schedule, not the whole run (kernel
 * scheduling is not ours to replay; the simulator is).
 *
 * Faults: KILL (SIGKILL, restart at heal: recovery from real files),
 * PAUSE (SIGSTOP of the node's process group, SIGCONT at heal: a stall
 * longer than the election timeout), HALVES (a random minority cannot
 * reach the majority, both directions), ISOLATE (one node alone; in quorum
 * mode the leader, the case of a client writing to an isolated old
 * leader), ONE_WAY (frames from a to b dropped, b to a flowing; over TCP
 * this stalls the connection both ways, chaos.md §1.4). Partitions need
 * the namespace topology and nft; without them they are skipped, and the
 * report says so.
 */
#include <stdio.h>
#include <string.h>

#include "chaos_proc.h"

uint64_t chaos_rng_next(struct chaos_rng *rng)
{
    /* splitmix64 (Steele, Lea, Flood 2014): tiny, and every seed is good. */
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t chaos_rng_below(struct chaos_rng *rng, uint64_t bound)
{
    return bound == 0 ? 0 : chaos_rng_next(rng) % bound;
}

const char *chaos_fault_kind_name(enum chaos_fault_kind kind)
{
    static const char *const names[CHAOS_FAULT_KIND_COUNT] = {
        "kill", "pause", "partition-halves", "partition-isolate",
        "partition-one-way"};
    return (unsigned)kind < CHAOS_FAULT_KIND_COUNT ? names[kind] : "?";
}

size_t chaos_schedule_plan(uint64_t seed, int64_t duration_ms,
                           size_t node_count, struct chaos_fault *faults)
{
    struct chaos_rng rng = {seed};
    size_t count = 0;
    int64_t at_ms = 2000 + (int64_t)chaos_rng_below(&rng, 2000);
    while (count < CHAOS_FAULTS_MAX) {
        int64_t length_ms = 3000 + (int64_t)chaos_rng_below(&rng, 5001);
        bool is_last = at_ms + length_ms > duration_ms - 8000;
        if (is_last && at_ms > duration_ms - 3000 && count > 0) {
            /* No room for one more: the previous fault runs to the end. */
            faults[count - 1].length_ms =
                duration_ms - faults[count - 1].start_ms;
            break;
        }
        if (is_last) {
            length_ms = duration_ms - at_ms; /* healed by the final heal */
        }
        struct chaos_fault *f = &faults[count++];
        memset(f, 0, sizeof *f);
        f->kind = (enum chaos_fault_kind)chaos_rng_below(
            &rng, CHAOS_FAULT_KIND_COUNT);
        f->start_ms = at_ms;
        f->length_ms = length_ms;
        f->target = (int)chaos_rng_below(&rng, node_count);
        f->other =
            (f->target + 1 + (int)chaos_rng_below(&rng, node_count - 1)) %
            (int)node_count;
        f->recovery_ms = -1;
        at_ms += length_ms + 3000 + (int64_t)chaos_rng_below(&rng, 3001);
        if (is_last) {
            break;
        }
    }
    return count;
}

static void describe_cut(struct chaos_fault *f, size_t n)
{
    if (f->kind == CHAOS_FAULT_ONE_WAY) {
        snprintf(f->what, sizeof f->what, "n%d -> n%d dropped", f->target + 1,
                 f->other + 1);
        return;
    }
    /* "n1 / n2 n3": the target's side, then the rest ('/', not '|',
     * which would split a markdown table cell). */
    size_t used = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t b = 0; b < n && used + 8 < sizeof f->what; b++) {
            bool with_target = !f->cut[(size_t)f->target * n + b];
            if (with_target == (pass == 0)) {
                used += (size_t)snprintf(f->what + used, sizeof f->what - used,
                                         "%sn%zu", used ? " " : "", b + 1);
            }
        }
        if (pass == 0 && used + 8 < sizeof f->what) {
            used +=
                (size_t)snprintf(f->what + used, sizeof f->what - used, " /");
        }
    }
}

/* Fills f->cut for a partition fault. */
static void plan_cut(struct chaos_fault *f, size_t n, struct chaos_rng *rng)
{
    memset(f->cut, 0, sizeof f->cut);
    if (f->kind == CHAOS_FAULT_ONE_WAY) {
        f->cut[(size_t)f->target * n + (size_t)f->other] = true;
        return;
    }
    bool minority[CHAOS_NODES_MAX] = {false};
    minority[f->target] = true;
    if (f->kind == CHAOS_FAULT_HALVES) {
        /* A random minority of n / 2 nodes, the target among them. */
        for (size_t size = 1; size < n / 2;) {
            size_t pick = (size_t)chaos_rng_below(rng, n);
            if (!minority[pick]) {
                minority[pick] = true;
                size++;
            }
        }
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            f->cut[a * n + b] = minority[a] != minority[b];
        }
    }
}

static bool is_partition(enum chaos_fault_kind kind)
{
    return kind == CHAOS_FAULT_HALVES || kind == CHAOS_FAULT_ISOLATE ||
           kind == CHAOS_FAULT_ONE_WAY;
}

void chaos_fault_apply(struct chaos_fault *f, struct chaos_cluster *c,
                       struct chaos_topology *t, struct chaos_rng *rng)
{
    size_t n = c->count;
    bool to_leader =
        f->kind == CHAOS_FAULT_ISOLATE ||
        (f->kind != CHAOS_FAULT_ONE_WAY && chaos_rng_below(rng, 2) == 0);
    if (c->mode == CHAOS_MODE_QUORUM && to_leader && c->leader_hint >= 0) {
        f->target = c->leader_hint;
        if (f->other == f->target) {
            f->other = (f->target + 1) % (int)n;
        }
    }
    if (is_partition(f->kind)) {
        if (!chaos_topology_can_partition(t)) {
            f->is_skipped = true;
            snprintf(f->skip_reason, sizeof f->skip_reason, "%s",
                     t->kind != CHAOS_TOPOLOGY_NETNS
                         ? "loopback topology: partitions need the "
                           "namespace topology (run as root)"
                         : "nft not installed (apt-get install nftables)");
            return;
        }
        plan_cut(f, n, rng);
        describe_cut(f, n);
        if (chaos_topology_partition(t, f->cut) != 0) {
            f->is_skipped = true;
            snprintf(f->skip_reason, sizeof f->skip_reason,
                     "nft refused the rules (see stderr)");
            return;
        }
    } else if (f->kind == CHAOS_FAULT_KILL) {
        snprintf(f->what, sizeof f->what, "SIGKILL n%d, restart at heal",
                 f->target + 1);
        chaos_node_kill(c, (size_t)f->target);
    } else {
        snprintf(f->what, sizeof f->what, "SIGSTOP n%d, SIGCONT at heal",
                 f->target + 1);
        chaos_node_pause(c, (size_t)f->target);
    }
    f->applied_ns = chaos_now_ns();
}

void chaos_fault_heal(struct chaos_fault *f, struct chaos_cluster *c,
                      struct chaos_topology *t)
{
    if (f->is_skipped || f->applied_ns == 0 || f->healed_ns != 0) {
        return;
    }
    if (is_partition(f->kind)) {
        (void)chaos_topology_heal(t);
    } else if (f->kind == CHAOS_FAULT_KILL) {
        if (chaos_node_start(c, (size_t)f->target) != 0) {
            fprintf(stderr, "chaos-proc: restarting n%d failed\n",
                    f->target + 1);
        }
    } else {
        chaos_node_resume(c, (size_t)f->target);
    }
    f->healed_ns = chaos_now_ns();
}
