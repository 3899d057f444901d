/* SPDX-License-Identifier: MIT
 *
 * swarm.c: seed -> configuration (chaos-design.md §6). Swarm testing
 * (Groce et al., "Swarm testing", ISSTA 2012): each fault class is on
 * with p = 0.5 and then gets its own intensity, so seeds explore mixes a
 * single "everything at once" profile would drown.
 */
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

static bool on(struct sim_rng *rng)
{
    return sim_rng_chance(rng, 0.5);
}

static void draw_links(struct sim_rng *rng, struct sim_config *c)
{
    c->link.delay_ms = (uint32_t)sim_rng_range(rng, 1, 50);
    c->link.jitter_ms = (uint32_t)sim_rng_range(rng, 0, c->link.delay_ms);
    if (on(rng)) {
        c->link.drop_probability = sim_rng_unit(rng) * 0.2;
        c->link.duplicate_probability = on(rng) ? sim_rng_unit(rng) * 0.1 : 0;
        c->link.reorder_probability = on(rng) ? sim_rng_unit(rng) * 0.3 : 0;
        c->link.reorder_window_ms = (uint32_t)sim_rng_range(rng, 1, 100);
    }
}

static void draw_faults(struct sim_rng *rng, struct sim_config *c)
{
    if (on(rng)) {
        c->partitions = SIM_PART_ISOLATE | SIM_PART_HALVES;
        c->partitions |= on(rng) ? SIM_PART_LEADER : 0;
        c->partitions |= on(rng) ? SIM_PART_ONE_WAY : 0;
        c->partitions |= c->nodes >= 4 && on(rng) ? SIM_PART_RING : 0;
        c->partition_hold_ms_max = sim_rng_range(rng, 200, 5000);
    }
    c->resets = on(rng);
    if (on(rng)) {
        c->crash_interval_ms = sim_rng_range(rng, 500, 5000);
        c->crash_all = on(rng);
        c->point_crashes = on(rng);
    }
    c->pause_ms_max = on(rng) ? sim_rng_range(rng, 100, 3000) : 0;
    if (c->mode != SIM_MODE_QUORUM && on(rng)) {
        /* Within max_offset or far beyond it. Beyond, every stamp of the
         * node that ran ahead waits until the others' clocks reach it, so
         * a bump costs twice its size in simulated time: one minute is
         * far enough beyond the largest max_offset (1 s). */
        c->clock_bump_ms_max =
            (int64_t)(on(rng) ? sim_rng_range(rng, 1, 1000)
                              : sim_rng_range(rng, 1, 60000));
    }
    if (on(rng)) {
        c->drift_ppm_max = sim_rng_chance(rng, 0.1) ? 50000 : 500;
    }
    c->torn = on(rng) ? SIM_TORN_PREFIX : SIM_TORN_NONE;
    c->synchronous_full = on(rng);
}

static void draw_knobs(struct sim_rng *rng, struct sim_config *c)
{
    c->election_timeout_ms = (uint32_t)sim_rng_range(rng, 100, 1000);
    c->heartbeat_ms = c->election_timeout_ms / 10 + 1;
    c->snapshot_threshold = (uint32_t)sim_rng_range(rng, 8, 1024);
    c->snapshot_trailing =
        (uint32_t)sim_rng_range(rng, 0, c->snapshot_threshold);
    c->sync_interval_ms = (uint32_t)sim_rng_range(rng, 50, 1000);
    c->batch_bytes = (size_t)1 << sim_rng_range(rng, 8, 20);
    c->retention_ms = on(rng) ? sim_rng_range(rng, 1000, 5000) : 0;
    c->max_offset_ms = sim_rng_range(rng, 100, 1000);
}

void sim_swarm_draw(const struct sim_options *options, struct sim_rng *rng,
                    struct sim_config *c)
{
    memset(c, 0, sizeof(*c));
    c->mode = options->mode;
    switch (c->mode) {
    case SIM_MODE_CRDT:
        c->nodes = (unsigned)sim_rng_range(rng, 2, 5);
        c->topology = (enum sim_topology)sim_rng_below(rng, 3);
        break;
    case SIM_MODE_LEADER:
        c->nodes = (unsigned)sim_rng_range(rng, 3, 5);
        break;
    default:
        c->nodes = sim_rng_chance(rng, 0.5) ? 3 : 5;
        break;
    }
    if (options->nodes_override > 0) {
        c->nodes = options->nodes_override;
    }
    draw_links(rng, c);
    draw_faults(rng, c);
    draw_knobs(rng, c);
    /* Few clients and a short fault phase keep a seed near 0.2 s of CPU:
     * breadth comes from many seeds, each with its own fault mix. */
    c->clients = (unsigned)sim_rng_range(rng, 2, 6);
    c->keys = (unsigned)sim_rng_range(rng, 3, 30);
    c->think_ms_max = sim_rng_range(rng, 10, 200);
    c->tie_bursts = c->mode == SIM_MODE_CRDT && on(rng);
    c->failover = c->mode == SIM_MODE_LEADER && on(rng);
    c->fault_ms = sim_rng_range(rng, 3000, 10000);
    c->healed_ms = 1000;
    c->liveness_ms =
        c->sync_interval_ms * 20 > 30000 ? c->sync_interval_ms * 20 : 30000;
    /* Stamps from a clock that ran ahead wait (deferred) until the
     * others' clocks reach them: the bound includes that wait. */
    c->liveness_ms += (uint64_t)c->clock_bump_ms_max * 2;
    /* Drawn last: a draw added here shifts none of the earlier ones, so
     * every other setting of a seed stays what it was. */
    c->wipes = c->mode == SIM_MODE_QUORUM && on(rng);
    if (options->profile == 1) { /* mutants: ties and reordering, no loss */
        c->tie_bursts = true;
        c->keys = 3;
        c->link.reorder_probability = 0.3;
        c->link.reorder_window_ms = 50;
        c->clock_bump_ms_max = 0;
        c->drift_ppm_max = 0;
    }
}

void sim_swarm_format(uint64_t seed, const struct sim_config *c, char *out,
                      size_t size)
{
    snprintf(out, size,
             "SEED=0x%llx mode=%s nodes=%u topo=%d drop=%.2f dup=%.2f "
             "reorder=%.2f delay=%u part=0x%x crash=%llums%s%s pause=%llu "
             "bump=%lld drift=%d disk=%s sync=%s clients=%u keys=%u "
             "ties=%d failover=%d fault=%llums%s",
             (unsigned long long)seed, sim_mode_name(c->mode), c->nodes,
             (int)c->topology, c->link.drop_probability,
             c->link.duplicate_probability, c->link.reorder_probability,
             c->link.delay_ms, c->partitions,
             (unsigned long long)c->crash_interval_ms,
             c->crash_all ? ",all" : "", c->point_crashes ? ",point" : "",
             (unsigned long long)c->pause_ms_max,
             (long long)c->clock_bump_ms_max, (int)c->drift_ppm_max,
             c->torn == SIM_TORN_PREFIX ? "prefix" : "none",
             c->synchronous_full ? "full" : "normal", c->clients, c->keys,
             (int)c->tie_bursts, (int)c->failover,
             (unsigned long long)c->fault_ms, c->wipes ? " wipe" : "");
}
