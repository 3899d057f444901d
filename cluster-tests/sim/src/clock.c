/* SPDX-License-Identifier: MIT
 *
 * clock.c: the nodes' clocks, derived from the one sim time t (ms from 0)
 * (chaos-design.md §3): wall_i(t) = T0 + t + offset_i + drift_i(t) and
 * mono_i(t) = T0 + t + drift_i(t), with drift_i(t) = t * ppm_i / 10^6
 * (truncated). Offsets jump by nemesis; the monotonic clock never does.
 * Both are non-decreasing in t between jumps (|ppm| < 10^6), so "the
 * first t at which the clock reads at least x" is well defined, which is
 * when the scheduler ticks a node that asked for x.
 */
#include "sim_int.h"

static int64_t reading(const struct sim_node *node, bool wall, uint64_t t)
{
    int64_t since = (int64_t)node->clock.drift_since_ms;
    int64_t drift = node->clock.drift_acc_ms +
                    ((int64_t)t - since) * node->clock.drift_ppm / 1000000;
    int64_t v = (int64_t)SIM_T0_MS + (int64_t)t + drift;

    return wall ? v + node->clock.offset_ms : v;
}

uint64_t sim_clock_wall_ms(const struct sim *sim, const struct sim_node *node)
{
    return (uint64_t)reading(node, true, sim->now_ms);
}

uint64_t sim_clock_mono_ms(const struct sim *sim, const struct sim_node *node)
{
    return (uint64_t)reading(node, false, sim->now_ms);
}

uint64_t sim_clock_wall_cb(void *ctx)
{
    const struct sim_node *node = ctx;

    return sim_clock_wall_ms(node->sim, node);
}

uint64_t sim_clock_mono_cb(void *ctx)
{
    const struct sim_node *node = ctx;

    return sim_clock_mono_ms(node->sim, node);
}

void sim_clock_set_drift(struct sim *sim, struct sim_node *node, int32_t ppm)
{
    int64_t now = (int64_t)sim->now_ms;

    node->clock.drift_acc_ms += (now - (int64_t)node->clock.drift_since_ms) *
                                node->clock.drift_ppm / 1000000;
    node->clock.drift_since_ms = sim->now_ms;
    node->clock.drift_ppm = ppm;
}

uint64_t sim_clock_due(const struct sim *sim, const struct sim_node *node,
                       bool wall, uint64_t at_ms)
{
    uint64_t since = node->clock.drift_since_ms;
    int64_t base = reading(node, wall, since);
    double rate = 1.0 + (double)node->clock.drift_ppm / 1e6;
    int64_t t;

    (void)sim;
    if ((int64_t)at_ms <= base) {
        return since;
    }
    t = (int64_t)since + (int64_t)((double)((int64_t)at_ms - base) / rate);
    /* The estimate is within a few ms: walk to the exact first t. */
    while (t > (int64_t)since &&
           reading(node, wall, (uint64_t)(t - 1)) >= (int64_t)at_ms) {
        t--;
    }
    while (reading(node, wall, (uint64_t)t) < (int64_t)at_ms) {
        t++;
    }
    return (uint64_t)t;
}
