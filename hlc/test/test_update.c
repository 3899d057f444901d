/* SPDX-License-Identifier: MIT
 *
 * Goal: hlc_update() implements each case of the receive rule of Kulkarni et
 * al. (2014), Figure 5, stamps every receive above the stamp received and
 * above everything before, accepts remote stamps up to the maximum offset
 * ahead of the physical clock and refuses those beyond it without moving.
 * Method: a fake physical clock; each case set up by hand.
 */
#include "hlc_test.h"

#define T0 UINT64_C(1764686000000)

static void update_same_l_everywhere_takes_larger_counter(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_true(must_now(&clock) == hlc_pack(T0, 0));
    /* l = l' = l.m: c = max(c, c.m) + 1 */
    assert_true(must_update(&clock, hlc_pack(T0, 9)) == hlc_pack(T0, 10));
    assert_true(must_update(&clock, hlc_pack(T0, 3)) == hlc_pack(T0, 11));
}

static void update_own_l_largest_bumps_own_counter(void **state)
{
    struct fake_clock fake = {.now_ms = T0 + 50};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_true(must_now(&clock) == hlc_pack(T0 + 50, 0));
    fake.now_ms = T0 + 10; /* our wall clock stepped back */
    /* l = l' > l.m, pt: c = c + 1 */
    assert_true(must_update(&clock, hlc_pack(T0 + 20, 400)) ==
                hlc_pack(T0 + 50, 1));
}

static void update_remote_l_largest_takes_remote_counter(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    must_now(&clock);
    /* l = l.m > l', pt: c = c.m + 1. The remote runs 200 ms ahead, inside
     * the 500 ms default offset. */
    assert_true(must_update(&clock, hlc_pack(T0 + 200, 7)) ==
                hlc_pack(T0 + 200, 8));
    /* Local events keep counting from there until physical time passes. */
    fake.now_ms = T0 + 100;
    assert_true(must_now(&clock) == hlc_pack(T0 + 200, 9));
    fake.now_ms = T0 + 201;
    assert_true(must_now(&clock) == hlc_pack(T0 + 201, 0));
}

static void update_physical_largest_resets_counter(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    must_now(&clock);
    fake.now_ms = T0 + 30;
    /* pt > l', l.m: l = pt, c = 0 */
    assert_true(must_update(&clock, hlc_pack(T0 + 29, 65000)) ==
                hlc_pack(T0 + 30, 0));
}

static void update_receive_counter_overflow_carries(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_true(must_update(&clock, hlc_pack(T0, (uint16_t)HLC_COUNTER_MAX)) ==
                hlc_pack(T0 + 1, 0));
}

static void update_accepts_up_to_max_offset(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts remote = hlc_pack(T0 + 500, (uint16_t)HLC_COUNTER_MAX);

    (void)state;
    fake_clock_hlc_init(&clock, &fake, 500);
    assert_true(must_update(&clock, remote) > remote);
    assert_true(hlc_high_water(&clock) == remote + 1);
}

static void update_refuses_beyond_max_offset_without_moving(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts before;
    hlc_ts ts = 42;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, 500);
    before = must_now(&clock);
    assert_int_equal(hlc_update(&clock, hlc_pack(T0 + 501, 0), &ts),
                     HLC_EAHEAD);
    assert_int_equal(hlc_update(&clock, UINT64_MAX, &ts), HLC_EAHEAD);
    assert_true(ts == 42);
    assert_true(hlc_high_water(&clock) == before);
    /* The next local stamp is what it would have been without the
     * refused messages. */
    assert_true(must_now(&clock) == before + 1);
    /* The offset is measured from physical time, not from l. */
    fake.now_ms = T0 + 1;
    assert_true(must_update(&clock, hlc_pack(T0 + 501, 0)) ==
                hlc_pack(T0 + 501, 1));
}

static void update_offset_is_configurable(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc strict;
    struct hlc lenient;
    hlc_ts ts;

    (void)state;
    fake_clock_hlc_init(&strict, &fake, 0);
    fake_clock_hlc_init(&lenient, &fake, 60000);
    assert_int_equal(hlc_update(&strict, hlc_pack(T0 + 1, 0), &ts), HLC_EAHEAD);
    assert_true(must_update(&strict, hlc_pack(T0, 5)) == hlc_pack(T0, 6));
    assert_true(must_update(&lenient, hlc_pack(T0 + 59999, 0)) ==
                hlc_pack(T0 + 59999, 1));
}

static void update_old_remote_never_pulls_clock_back(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts before;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    before = must_now(&clock);
    assert_true(must_update(&clock, 1) == before + 1);
    assert_true(must_update(&clock, 0) == before + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(update_same_l_everywhere_takes_larger_counter),
        cmocka_unit_test(update_own_l_largest_bumps_own_counter),
        cmocka_unit_test(update_remote_l_largest_takes_remote_counter),
        cmocka_unit_test(update_physical_largest_resets_counter),
        cmocka_unit_test(update_receive_counter_overflow_carries),
        cmocka_unit_test(update_accepts_up_to_max_offset),
        cmocka_unit_test(update_refuses_beyond_max_offset_without_moving),
        cmocka_unit_test(update_offset_is_configurable),
        cmocka_unit_test(update_old_remote_never_pulls_clock_back),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
