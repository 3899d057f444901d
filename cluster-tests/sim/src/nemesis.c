/* SPDX-License-Identifier: MIT
 *
 * nemesis.c: the fault schedule (chaos-design.md §6). The whole fault
 * phase's schedule is drawn up front from the nemesis stream, as (t, seq)
 * sorted actions; targets such as "the leader" are resolved when an
 * action runs. Healing undoes everything at once (the healed phase).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

enum action_kind {
    ACTION_PARTITION = 0,
    ACTION_UNPARTITION,
    ACTION_RESET,
    ACTION_CRASH,
    ACTION_CRASH_ALL,
    ACTION_POINT_CRASH,
    ACTION_PAUSE,
    ACTION_RESUME,
    ACTION_CLOCK_BUMP,
    ACTION_DRIFT,
    ACTION_FAILOVER,
    ACTION_WIPE,
};

struct action {
    uint64_t t;
    uint64_t seq;
    enum action_kind kind;
    int node;    /* -1: draw (or the leader) when run */
    int64_t arg; /* ms, ppm, shape */
};

struct sim_nemesis {
    struct action *actions;
    size_t count;
    size_t capacity;
    size_t next;
};

static void add(struct sim_nemesis *n, uint64_t t, enum action_kind kind,
                int node, int64_t arg)
{
    if (n->count == n->capacity) {
        size_t capacity = n->capacity ? n->capacity * 2 : 64;
        struct action *grown =
            common_realloc(n->actions, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        n->actions = grown;
        n->capacity = capacity;
    }
    n->actions[n->count] = (struct action){
        .t = t, .seq = n->count, .kind = kind, .node = node, .arg = arg};
    n->count++;
}

static int action_cmp(const void *a, const void *b)
{
    const struct action *x = a, *y = b;

    if (x->t != y->t) {
        return x->t < y->t ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Exponential-ish gaps: uniform in [mean/2, 3mean/2]. */
static uint64_t gap(struct sim_rng *rng, uint64_t mean_ms)
{
    return sim_rng_range(rng, mean_ms / 2, mean_ms + mean_ms / 2) + 1;
}

static unsigned pick_shape(struct sim_rng *rng, unsigned shapes)
{
    unsigned options[8], count = 0;

    for (unsigned bit = 0; bit < 8; bit++) {
        if (shapes & (1u << bit)) {
            options[count++] = 1u << bit;
        }
    }
    return options[sim_rng_below(rng, count)];
}

static void plan_partitions(struct sim *sim, struct sim_nemesis *n,
                            uint64_t start, uint64_t end)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_NEMESIS];

    for (uint64_t t = start + gap(rng, 1500); t < end; t += gap(rng, 2000)) {
        uint64_t hold =
            sim_rng_range(rng, 200, sim->config.partition_hold_ms_max);

        add(n, t, ACTION_PARTITION, -1,
            (int64_t)pick_shape(rng, sim->config.partitions));
        add(n, t + hold, ACTION_UNPARTITION, -1, 0);
        if (sim_rng_chance(rng, 0.5)) {
            add(n, t, ACTION_RESET, -1, 0);
        }
        t += hold;
    }
}

static void plan_crashes(struct sim *sim, struct sim_nemesis *n, uint64_t start,
                         uint64_t end)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_NEMESIS];
    uint64_t mean = sim->config.crash_interval_ms;

    for (uint64_t t = start + gap(rng, mean); t < end; t += gap(rng, mean)) {
        uint64_t roll = sim_rng_below(rng, 10);

        if (roll == 0 && sim->config.crash_all) {
            add(n, t, ACTION_CRASH_ALL, -1, 0);
        } else if (roll <= 3 && sim->config.point_crashes) {
            add(n, t, ACTION_POINT_CRASH, -1,
                (int64_t)sim_rng_range(rng, 1, 20));
        } else {
            add(n, t, ACTION_CRASH, roll == 9 ? -2 : -1, 0);
        }
    }
}

static void plan_other(struct sim *sim, struct sim_nemesis *n, uint64_t start,
                       uint64_t end)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_NEMESIS];
    const struct sim_config *config = &sim->config;

    if (config->resets) {
        for (uint64_t t = start + gap(rng, 2000); t < end;
             t += gap(rng, 2000)) {
            add(n, t, ACTION_RESET, -1, 0);
        }
    }
    if (config->pause_ms_max > 0) {
        for (uint64_t t = start + gap(rng, 3000); t < end;
             t += gap(rng, 3000)) {
            int node = (int)sim_rng_below(rng, config->nodes);
            uint64_t hold = sim_rng_range(rng, 100, config->pause_ms_max);

            add(n, t, ACTION_PAUSE, node, 0);
            add(n, t + hold, ACTION_RESUME, node, 0);
            t += hold;
        }
    }
    if (config->clock_bump_ms_max > 0) {
        for (uint64_t t = start + gap(rng, 2000); t < end;
             t += gap(rng, 2000)) {
            int64_t bump = (int64_t)sim_rng_range(
                rng, 1, (uint64_t)config->clock_bump_ms_max);

            add(n, t, ACTION_CLOCK_BUMP, (int)sim_rng_below(rng, config->nodes),
                sim_rng_chance(rng, 0.5) ? bump : -bump);
        }
    }
    if (config->drift_ppm_max > 0) {
        for (unsigned i = 0; i < config->nodes; i++) {
            int64_t ppm = (int64_t)sim_rng_range(
                              rng, 0, 2 * (uint64_t)config->drift_ppm_max) -
                          config->drift_ppm_max;

            add(n, start, ACTION_DRIFT, (int)i, ppm);
        }
    }
    if (config->failover) {
        for (uint64_t t = start + gap(rng, 4000); t < end;
             t += gap(rng, 4000)) {
            add(n, t, ACTION_FAILOVER, -1, 0);
        }
    }
}

/* One or two nodes lose their data, in the middle of the fault phase (the
 * mode's wipe op: quorum mode's members rejoin under a new Raft id).
 * Drawn after every other fault, so a seed without wipes keeps the
 * schedule it had before wipes existed. */
static void plan_wipes(struct sim *sim, struct sim_nemesis *n, uint64_t start,
                       uint64_t end)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_NEMESIS];
    unsigned count = sim_rng_chance(rng, 0.3) ? 2 : 1;
    uint64_t span = end - start;

    for (unsigned i = 0; i < count; i++) {
        add(n, start + sim_rng_range(rng, span / 8, span - span / 8),
            ACTION_WIPE, -1, 0);
    }
}

int sim_nemesis_plan(struct sim *sim)
{
    struct sim_nemesis *n = common_calloc(1, sizeof(*n));
    uint64_t start = sim->now_ms, end = sim->now_ms + sim->config.fault_ms;

    if (n == NULL) {
        return COMMON_ENOMEM;
    }
    if (sim->config.partitions != 0) {
        plan_partitions(sim, n, start, end);
    }
    if (sim->config.crash_interval_ms > 0) {
        plan_crashes(sim, n, start, end);
    }
    plan_other(sim, n, start, end);
    if (sim->config.wipes && sim->ops->wipe != NULL) {
        plan_wipes(sim, n, start, end);
    }
    if (n->count > 0) {
        qsort(n->actions, n->count, sizeof(*n->actions), action_cmp);
    }
    sim->nemesis = n;
    return 0;
}

void sim_nemesis_free(struct sim *sim)
{
    if (sim->nemesis != NULL) {
        common_free(sim->nemesis->actions);
        common_free(sim->nemesis);
        sim->nemesis = NULL;
    }
}

static int target(struct sim *sim, int node)
{
    if (node == -2 && sim->ops->leader != NULL) {
        node = sim->ops->leader(sim);
    }
    if (node < 0) {
        node =
            (int)sim_rng_below(&sim->rng[SIM_RNG_NEMESIS], sim->config.nodes);
    }
    return node;
}

static void cut(struct sim *sim, unsigned a, unsigned b, bool both_ways)
{
    int rc = transport_memory_network_partition(sim->net, &sim->nodes[a].id,
                                                &sim->nodes[b].id, both_ways);

    ASSERT(rc == 0);
}

static void partition(struct sim *sim, unsigned shape)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_NEMESIS];
    unsigned n = sim->config.nodes;
    int victim = shape == SIM_PART_LEADER ? target(sim, -2) : target(sim, -1);

    sim_trace(sim, victim, "partition", shape, 0);
    if (sim->result != NULL) {
        sim->result->partitions++;
    }
    for (unsigned a = 0; a < n; a++) {
        for (unsigned b = a + 1; b < n; b++) {
            bool split;

            switch (shape) {
            case SIM_PART_HALVES:
                split = (a < n / 2) != (b < n / 2);
                break;
            case SIM_PART_RING: /* each node sees only its ring neighbours */
                split = b - a != 1 && !(a == 0 && b == n - 1);
                break;
            default: /* isolate, leader, one-way: around victim */
                split = a == (unsigned)victim || b == (unsigned)victim;
                break;
            }
            if (!split) {
                continue;
            }
            if (shape == SIM_PART_ONE_WAY) {
                cut(sim, (unsigned)victim, a == (unsigned)victim ? b : a,
                    false);
            } else {
                cut(sim, a, b, true);
            }
        }
    }
    (void)rng;
}

static void reset_some(struct sim *sim)
{
    unsigned a = (unsigned)target(sim, -1), b = (unsigned)target(sim, -1);

    if (a != b) {
        sim_trace(sim, (int)a, "reset", b, 0);
        (void)transport_memory_network_reset(sim->net, &sim->nodes[a].id,
                                             &sim->nodes[b].id);
    }
}

static void crash(struct sim *sim, int node)
{
    struct sim_node *victim = &sim->nodes[node];

    if (!victim->up) {
        return;
    }
    sim_node_stop(sim, (unsigned)node, true);
    victim->restart_at_ms =
        sim->now_ms + sim_rng_range(&sim->rng[SIM_RNG_NEMESIS], 50, 3000);
}

static void run_action(struct sim *sim, const struct action *a)
{
    switch (a->kind) {
    case ACTION_PARTITION:
        partition(sim, (unsigned)a->arg);
        break;
    case ACTION_UNPARTITION:
        sim_trace(sim, -1, "unpartition", 0, 0);
        transport_memory_network_heal_all(sim->net);
        break;
    case ACTION_RESET:
        reset_some(sim);
        break;
    case ACTION_CRASH:
        crash(sim, target(sim, a->node));
        break;
    case ACTION_CRASH_ALL:
        for (unsigned i = 0; i < sim->config.nodes; i++) {
            crash(sim, (int)i);
        }
        break;
    case ACTION_POINT_CRASH: {
        int node = target(sim, -1);

        if (sim->nodes[node].up) {
            sim_disk_arm_point_crash(sim->disk, (unsigned)node,
                                     (uint64_t)a->arg);
        }
        break;
    }
    case ACTION_PAUSE:
        if (sim->nodes[a->node].up) {
            sim_node_pause(sim, (unsigned)a->node, true);
        }
        break;
    case ACTION_RESUME:
        sim_node_pause(sim, (unsigned)a->node, false);
        break;
    case ACTION_CLOCK_BUMP:
        sim->nodes[a->node].clock.offset_ms += a->arg;
        sim_trace(sim, a->node, "clock", (uint64_t)a->arg, 0);
        break;
    case ACTION_DRIFT:
        sim_clock_set_drift(sim, &sim->nodes[a->node], (int32_t)a->arg);
        break;
    case ACTION_FAILOVER:
        if (sim->ops->failover != NULL) {
            (void)sim->ops->failover(sim);
        }
        break;
    case ACTION_WIPE:
        (void)sim->ops->wipe(sim, (unsigned)target(sim, a->node));
        break;
    }
}

int sim_nemesis_due(struct sim *sim, uint64_t *next_ms)
{
    struct sim_nemesis *n = sim->nemesis;

    *next_ms = UINT64_MAX;
    if (n == NULL) {
        return 0;
    }
    while (n->next < n->count && n->actions[n->next].t <= sim->now_ms) {
        run_action(sim, &n->actions[n->next++]);
    }
    if (n->next < n->count) {
        *next_ms = n->actions[n->next].t;
    }
    return 0;
}

int sim_nemesis_heal(struct sim *sim)
{
    const struct transport_memory_link_faults perfect = {.delay_ms = 1};
    int rc;

    if (sim->nemesis != NULL) {
        sim->nemesis->next = sim->nemesis->count; /* nothing more runs */
    }
    transport_memory_network_heal_all(sim->net);
    rc = transport_memory_network_set_default_link(sim->net, &perfect);
    if (rc != 0) {
        return rc;
    }
    sim_disk_faults(sim->disk, false);
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct sim_node *node = &sim->nodes[i];

        sim_node_pause(sim, i, false);
        /* Ahead clocks step back to true time: a backward jump (§5). */
        sim_clock_set_drift(sim, node, 0);
        node->clock.offset_ms = -node->clock.drift_acc_ms;
        if (node->up && node->crash_pending) {
            sim_node_stop(sim, i, true);
        }
        if (!node->up) {
            node->restart_at_ms = 0;
            node->restarts++;
            rc = sim_node_start(sim, i);
            if (rc != 0) {
                return rc;
            }
        }
    }
    sim_trace(sim, -1, "heal", 0, 0);
    return 0;
}
