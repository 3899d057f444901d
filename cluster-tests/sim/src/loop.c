/* SPDX-License-Identifier: MIT
 *
 * loop.c: the seeded scheduler (chaos-design.md §4). One thread, sim time
 * in ms; at each instant, always in this order: nemesis actions due,
 * one network step (callbacks mark their node "tick now"), due ticks of
 * up and unpaused nodes in index order, due clients in index order,
 * point crashes that hit during the instant, inline invariants. Then the
 * clock moves to the earliest thing due; idle time is skipped. Nothing
 * here reads a real clock or orders by pointer, so a seed replays.
 */
#include "sim_int.h"

#define LOOP_SAME_INSTANT_MAX 100000
/* A tick that failed is retried this much later (on the node's clock), as
 * `sinew serve` does (node/src/serve_node.c tick_cb): a failing tick
 * never asks to be run again at the same instant. */
#define LOOP_TICK_RETRY_MS 100

/* The sim time at which node's next tick is due. */
static uint64_t node_due(const struct sim *sim, const struct sim_node *node)
{
    if (node->tick_now) {
        return sim->now_ms;
    }
    return sim_clock_due(sim, node, node->clock_wall, node->next_ms);
}

static void tick_nodes(struct sim *sim)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct sim_node *node = &sim->nodes[i];
        uint64_t next = 0;
        int rc;

        if (!node->up || node->paused || node->crash_pending ||
            node_due(sim, node) > sim->now_ms) {
            continue;
        }
        node->tick_now = false;
        rc = sim->ops->node_tick(sim, node, &next);
        if (rc != 0) {
            next = LOOP_TICK_RETRY_MS + (node->clock_wall
                                             ? sim_clock_wall_ms(sim, node)
                                             : sim_clock_mono_ms(sim, node));
            sim_trace(sim, (int)i, "tick-error", (uint64_t) - (int64_t)rc, 0);
        }
        node->next_ms = next;
    }
}

static void step_clients(struct sim *sim)
{
    if (sim->phase != SIM_PHASE_FAULT && sim->phase != SIM_PHASE_HEALED) {
        return;
    }
    for (unsigned c = 0; c < sim->config.clients; c++) {
        struct sim_client *client = &sim->clients[c];

        if (client->active && !client->busy && client->due_ms <= sim->now_ms) {
            (void)sim->ops->client_step(sim, client);
            if (client->due_ms <= sim->now_ms) {
                client->due_ms = sim->now_ms + 1;
            }
        }
    }
}

static void finish_point_crashes(struct sim *sim)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct sim_node *node = &sim->nodes[i];

        if (node->up && node->crash_pending) {
            sim_node_stop(sim, i, true);
            node->restart_at_ms =
                sim->now_ms +
                sim_rng_range(&sim->rng[SIM_RNG_NEMESIS], 100, 3000);
        }
    }
}

static void restart_due(struct sim *sim)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct sim_node *node = &sim->nodes[i];

        if (!node->up && node->restart_at_ms != 0 &&
            node->restart_at_ms <= sim->now_ms) {
            node->restart_at_ms = 0;
            node->restarts++;
            if (sim->result != NULL) {
                sim->result->restarts++;
            }
            (void)sim_node_start(sim, i);
        }
    }
}

static uint64_t next_instant(struct sim *sim, uint64_t end_ms,
                             uint64_t nemesis_ms)
{
    uint64_t next = end_ms < nemesis_ms ? end_ms : nemesis_ms, due;

    if (transport_memory_network_next_due(sim->net, &due) && due < next) {
        next = due;
    }
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        const struct sim_node *node = &sim->nodes[i];

        if (node->up && !node->paused) {
            due = node_due(sim, node);
            next = due < next ? due : next;
        }
        if (!node->up && node->restart_at_ms != 0 &&
            node->restart_at_ms < next) {
            next = node->restart_at_ms;
        }
    }
    if (sim->phase == SIM_PHASE_FAULT || sim->phase == SIM_PHASE_HEALED) {
        for (unsigned c = 0; c < sim->config.clients; c++) {
            const struct sim_client *client = &sim->clients[c];

            if (client->active && !client->busy && client->due_ms < next) {
                next = client->due_ms;
            }
        }
    }
    return next;
}

/* One instant; *next_ms: when the next one is. */
static int run_instant(struct sim *sim, uint64_t *next_ms)
{
    uint64_t nemesis_ms = UINT64_MAX;
    int rc;

    sim->seq = 0;
    rc = sim_nemesis_due(sim, &nemesis_ms);
    if (rc != 0) {
        return rc;
    }
    restart_due(sim);
    (void)transport_memory_network_step(sim->net);
    tick_nodes(sim);
    step_clients(sim);
    finish_point_crashes(sim);
    if (sim_failed(sim)) {
        return SIM_EFAILED;
    }
    rc = sim->ops->invariants != NULL ? sim->ops->invariants(sim) : 0;
    if (rc != 0) {
        return rc;
    }
    *next_ms = next_instant(sim, UINT64_MAX, nemesis_ms);
    return 0;
}

static int run(struct sim *sim, uint64_t end_ms, bool until_settled)
{
    unsigned same = 0;

    for (;;) {
        uint64_t next = UINT64_MAX;
        int rc = run_instant(sim, &next);

        if (rc != 0) {
            return rc;
        }
        if (until_settled && sim->ops->settled(sim)) {
            return 0;
        }
        if (next <= sim->now_ms) {
            if (++same >= LOOP_SAME_INSTANT_MAX) {
                return sim_fail(sim, "livelock", -1, "livelock at t=%llu ms",
                                (unsigned long long)sim->now_ms);
            }
            continue;
        }
        same = 0;
        if (sim->now_ms >= end_ms) {
            return until_settled ? 1 : 0;
        }
        sim->now_ms = next < end_ms ? next : end_ms;
    }
}

int sim_loop_run(struct sim *sim, uint64_t end_ms)
{
    return run(sim, end_ms, false);
}

int sim_loop_until_settled(struct sim *sim, uint64_t end_ms)
{
    int rc = run(sim, end_ms, true);

    if (rc == 1) {
        return sim_fail(
            sim, sim->config.mode == SIM_MODE_CRDT ? "convergence" : "liveness",
            -1, "not settled %llu ms after heal",
            (unsigned long long)(sim->now_ms - sim->healed_at_ms));
    }
    return rc;
}
