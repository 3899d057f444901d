/* SPDX-License-Identifier: MIT
 *
 * clock.c: the hybrid logical clock's two events, after Kulkarni et al.,
 * "Logical Physical Clocks" (OPODIS 2014), Figure 5. With l in the high 48
 * bits and c in the low 16 bits of one integer, the paper's case analysis
 * (keep l and bump c, or take the newer l and reset c) is exactly "the
 * maximum of the candidates, where last + 1 and m + 1 bump c", and a c that
 * would overflow carries into l instead of wrapping (hlc.h).
 *
 * The maximum-offset rule follows the paper's assumption that clocks stay
 * within epsilon of each other: a stamp beyond it is evidence of a broken
 * clock, so it is refused before it can move ours.
 */
#include "hlc.h"

#include <time.h>

static uint64_t system_now_ms(void *ctx)
{
    struct timespec now;
    int rc;

    (void)ctx;
    rc = clock_gettime(CLOCK_REALTIME, &now);
    /* CLOCK_REALTIME cannot fail with a valid clock id and pointer. */
    ASSERT(rc == 0);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

struct hlc_clock_source hlc_clock_source_system(void)
{
    struct hlc_clock_source source = {.ctx = NULL, .now_ms = system_now_ms};

    return source;
}

void hlc_init(struct hlc *clock, const struct hlc_config *config)
{
    ASSERT(clock != NULL);
    ASSERT(config != NULL);
    ASSERT(config->clock.now_ms != NULL);
    /* Keeps physical + max_offset_ms far from overflowing 64 bits. */
    ASSERT(config->max_offset_ms <= HLC_PHYSICAL_MS_MAX);
    clock->clock = config->clock;
    clock->max_offset_ms = config->max_offset_ms;
    clock->last = 0;
}

/* Reads the physical clock as a stamp with counter 0. */
static int physical_stamp(const struct hlc *clock, hlc_ts *out)
{
    uint64_t physical_ms = clock->clock.now_ms(clock->clock.ctx);

    if (physical_ms > HLC_PHYSICAL_MS_MAX) {
        return HLC_ECLOCK;
    }
    *out = hlc_pack(physical_ms, 0);
    return 0;
}

/* The next stamp above floor, or above physical if that is later. */
static int advance(struct hlc *clock, hlc_ts floor, hlc_ts physical,
                   hlc_ts *out)
{
    hlc_ts next;

    if (floor == UINT64_MAX) {
        return HLC_EOVERFLOW;
    }
    next = floor + 1 > physical ? floor + 1 : physical;
    ASSERT(next > clock->last);
    clock->last = next;
    *out = next;
    return 0;
}

int hlc_now(struct hlc *clock, hlc_ts *out)
{
    hlc_ts physical;
    int rc;

    ASSERT(clock != NULL);
    ASSERT(out != NULL);
    rc = physical_stamp(clock, &physical);
    if (rc != 0) {
        return rc;
    }
    return advance(clock, clock->last, physical, out);
}

int hlc_update(struct hlc *clock, hlc_ts remote, hlc_ts *out)
{
    hlc_ts physical;
    int rc;

    ASSERT(clock != NULL);
    ASSERT(out != NULL);
    rc = physical_stamp(clock, &physical);
    if (rc != 0) {
        return rc;
    }
    if (hlc_physical_ms(remote) >
        hlc_physical_ms(physical) + clock->max_offset_ms) {
        return HLC_EAHEAD;
    }
    return advance(clock, remote > clock->last ? remote : clock->last, physical,
                   out);
}

hlc_ts hlc_high_water(const struct hlc *clock)
{
    ASSERT(clock != NULL);
    return clock->last;
}

void hlc_restore(struct hlc *clock, hlc_ts high_water)
{
    ASSERT(clock != NULL);
    if (high_water > clock->last) {
        clock->last = high_water;
    }
}
