/* SPDX-License-Identifier: MIT
 *
 * nemesis_cut.c: who cannot reach whom in a partition fault, as the cut
 * matrix chaos_topology_partition() turns into nft drop rules (topo.c),
 * and its one-line description for the report.
 *
 * The shapes are Jepsen's (chaos.md §1.4, §4.1): halves (a random
 * minority of n / 2 nodes against the rest), isolate (one node alone),
 * one-way (a -> b dropped), and the majorities ring. The ring, after
 * Jepsen's partition-majorities-ring ("every node can see a majority, but
 * no node sees the same majority as any other"): the nodes sit on a ring
 * in a seeded order and each keeps the links to the nodes at most
 * reach(n) = ceil(floor(n / 2) / 2) steps away, which with itself makes
 * 2 reach + 1 > n / 2 nodes: with 5 nodes each node sees its two
 * neighbours, and its neighbours' majorities differ from its own, so
 * every node can gather a quorum, but no two agree which. Links are
 * symmetric here (a one-way IP drop stalls TCP both ways anyway, §1.7).
 * With 3 nodes the ring is complete (reach 1 reaches everyone), so the
 * rule would cut nothing; there it cuts the one link ring[0]-ring[1]: a
 * bridge, ring[2] sees both sides, each of the other two a different
 * majority, which is the 3-node form of the same property.
 */
#include <stdio.h>
#include <string.h>

#include "chaos_proc.h"

size_t chaos_ring_reach(size_t n)
{
    return (n / 2 + 1) / 2;
}

/* Steps between ring positions a and b, the short way round. */
static size_t ring_distance(size_t a, size_t b, size_t n)
{
    size_t forward = a > b ? a - b : b - a;
    return forward < n - forward ? forward : n - forward;
}

void chaos_ring_cut(struct chaos_fault *f, size_t n, const size_t *ring)
{
    size_t position[CHAOS_NODES_MAX];
    size_t reach = chaos_ring_reach(n);
    bool is_cut = false;
    memset(f->cut, 0, sizeof f->cut);
    for (size_t i = 0; i < n; i++) {
        position[ring[i]] = i;
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            f->cut[a * n + b] =
                ring_distance(position[a], position[b], n) > reach;
            is_cut = is_cut || f->cut[a * n + b];
        }
    }
    if (!is_cut) { /* 3 nodes: the bridge */
        f->cut[ring[0] * n + ring[1]] = true;
        f->cut[ring[1] * n + ring[0]] = true;
    }
}

/* A seeded ring order starting at the target (Fisher-Yates). */
static void ring_order(const struct chaos_fault *f, size_t n,
                       struct chaos_rng *rng, size_t *ring)
{
    for (size_t i = 0; i < n; i++) {
        ring[i] = i;
    }
    ring[0] = (size_t)f->target;
    ring[f->target] = 0;
    for (size_t i = n - 1; i > 1; i--) {
        size_t j = 1 + (size_t)chaos_rng_below(rng, i);
        size_t swap = ring[i];
        ring[i] = ring[j];
        ring[j] = swap;
    }
}

/* "ring n1 n3 n2 n5 n4; cut n1-n2 n1-n5 ..." */
static void describe_ring(struct chaos_fault *f, size_t n, const size_t *ring)
{
    size_t used = (size_t)snprintf(f->what, sizeof f->what, "%s",
                                   n == 3 ? "bridge (3 nodes), ring" : "ring");
    for (size_t i = 0; i < n && used + 8 < sizeof f->what; i++) {
        used += (size_t)snprintf(f->what + used, sizeof f->what - used, " n%zu",
                                 ring[i] + 1);
    }
    if (used + 8 < sizeof f->what) {
        used +=
            (size_t)snprintf(f->what + used, sizeof f->what - used, "; cut");
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t b = a + 1; b < n && used + 12 < sizeof f->what; b++) {
            if (f->cut[a * n + b]) {
                used += (size_t)snprintf(f->what + used, sizeof f->what - used,
                                         " n%zu-n%zu", a + 1, b + 1);
            }
        }
    }
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

void chaos_fault_plan_cut(struct chaos_fault *f, size_t n,
                          struct chaos_rng *rng)
{
    memset(f->cut, 0, sizeof f->cut);
    if (f->kind == CHAOS_FAULT_RING) {
        size_t ring[CHAOS_NODES_MAX];
        ring_order(f, n, rng, ring);
        chaos_ring_cut(f, n, ring);
        describe_ring(f, n, ring);
        return;
    }
    if (f->kind == CHAOS_FAULT_ONE_WAY) {
        f->cut[(size_t)f->target * n + (size_t)f->other] = true;
        describe_cut(f, n);
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
    describe_cut(f, n);
}
