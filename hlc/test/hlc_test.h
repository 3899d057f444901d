/* SPDX-License-Identifier: MIT
 *
 * hlc_test.h: the fake physical clock the hlc tests drive by hand.
 */
#ifndef SINEW_HLC_TEST_H
#define SINEW_HLC_TEST_H

#include "common_test.h"
#include "hlc.h"

struct fake_clock {
    uint64_t now_ms; /* what the next reading returns */
    uint64_t reads;  /* how many readings were taken */
};

static inline uint64_t fake_clock_now_ms(void *ctx)
{
    struct fake_clock *fake = ctx;

    fake->reads++;
    return fake->now_ms;
}

/* Initialises clock over fake with the given maximum offset. */
static inline void fake_clock_hlc_init(struct hlc *clock,
                                       struct fake_clock *fake,
                                       uint64_t max_offset_ms)
{
    struct hlc_config config = {
        .clock = {.ctx = fake, .now_ms = fake_clock_now_ms},
        .max_offset_ms = max_offset_ms,
    };

    hlc_init(clock, &config);
}

/* hlc_now() that must succeed. */
static inline hlc_ts must_now(struct hlc *clock)
{
    hlc_ts ts = 0;

    assert_int_equal(hlc_now(clock, &ts), 0);
    return ts;
}

/* hlc_update() that must succeed. */
static inline hlc_ts must_update(struct hlc *clock, hlc_ts remote)
{
    hlc_ts ts = 0;

    assert_int_equal(hlc_update(clock, remote, &ts), 0);
    return ts;
}

#endif /* SINEW_HLC_TEST_H */
