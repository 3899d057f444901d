/* SPDX-License-Identifier: MIT
 *
 * rng.c: the simulator's random streams (splitmix64, Steele, Lea and
 * Flood, "Fast splittable pseudorandom number generators", 2014). Every
 * purpose has its own stream split from the seed, so a change in how
 * often one part draws never shifts another part's draws.
 */
#include "sim_int.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t sim_rng_next(struct sim_rng *rng)
{
    rng->state += UINT64_C(0x9e3779b97f4a7c15);
    return mix(rng->state);
}

void sim_rng_split(uint64_t seed, struct sim_rng out[SIM_RNG_COUNT])
{
    for (unsigned i = 0; i < SIM_RNG_COUNT; i++) {
        out[i].state = mix(seed ^ mix(UINT64_C(0x5157) + i));
    }
}

uint64_t sim_rng_below(struct sim_rng *rng, uint64_t n)
{
    ASSERT(n > 0);
    /* Modulo bias is below 2^-40 for the n used here: irrelevant. */
    return sim_rng_next(rng) % n;
}

uint64_t sim_rng_range(struct sim_rng *rng, uint64_t lo, uint64_t hi)
{
    ASSERT(lo <= hi);
    if (hi - lo == UINT64_MAX) {
        return sim_rng_next(rng);
    }
    return lo + sim_rng_below(rng, hi - lo + 1);
}

double sim_rng_unit(struct sim_rng *rng)
{
    return (double)(sim_rng_next(rng) >> 11) * 0x1.0p-53;
}

bool sim_rng_chance(struct sim_rng *rng, double p)
{
    if (p <= 0) {
        return false;
    }
    return sim_rng_unit(rng) < p;
}
