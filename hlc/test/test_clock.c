/* SPDX-License-Identifier: MIT
 *
 * Goal: hlc_now() follows physical time when it moves forward, counts
 * within a millisecond, stays strictly monotonic when the wall clock steps
 * back, carries a full counter into the next millisecond instead of
 * wrapping, and refuses a physical reading outside the 48-bit range.
 * Method: a fake physical clock driven by hand.
 */
#include "hlc_test.h"

#define T0 UINT64_C(1764686000000) /* 2025-12-02, a plausible wall clock */

static void clock_follows_physical_time(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_true(must_now(&clock) == hlc_pack(T0, 0));
    fake.now_ms = T0 + 7;
    assert_true(must_now(&clock) == hlc_pack(T0 + 7, 0));
    assert_int_equal(fake.reads, 2);
}

static void clock_counts_within_a_millisecond(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    for (uint16_t i = 0; i < 100; i++) {
        assert_true(must_now(&clock) == hlc_pack(T0, i));
    }
    /* Physical time moving on resets the counter (the paper's else-branch). */
    fake.now_ms = T0 + 1;
    assert_true(must_now(&clock) == hlc_pack(T0 + 1, 0));
}

static void clock_is_monotonic_when_wall_clock_steps_back(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts previous;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    previous = must_now(&clock);
    fake.now_ms = T0 - 60000; /* NTP steps the clock back a minute */
    for (int i = 0; i < 1000; i++) {
        hlc_ts ts = must_now(&clock);

        assert_true(ts > previous);
        /* l holds at the largest time seen; only c moves. */
        assert_int_equal(hlc_physical_ms(ts), T0);
        previous = ts;
        fake.now_ms += 1; /* creeping back towards T0 */
    }
    fake.now_ms = T0 + 5;
    assert_true(must_now(&clock) == hlc_pack(T0 + 5, 0));
}

static void clock_counter_overflow_carries_forward(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts previous = 0;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    for (uint64_t i = 0; i <= HLC_COUNTER_MAX; i++) {
        previous = must_now(&clock);
    }
    assert_true(previous == hlc_pack(T0, (uint16_t)HLC_COUNTER_MAX));
    /* The 65537th stamp in one millisecond moves l on rather than wrap. */
    assert_true(must_now(&clock) == hlc_pack(T0 + 1, 0));
    assert_true(must_now(&clock) == hlc_pack(T0 + 1, 1));
    /* When physical time reaches the borrowed millisecond, c keeps going. */
    fake.now_ms = T0 + 1;
    assert_true(must_now(&clock) == hlc_pack(T0 + 1, 2));
}

static void clock_refuses_out_of_range_physical_time(void **state)
{
    struct fake_clock fake = {.now_ms = HLC_PHYSICAL_MS_MAX + 1};
    struct hlc clock;
    hlc_ts ts = 42;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_int_equal(hlc_now(&clock, &ts), HLC_ECLOCK);
    assert_true(ts == 42);
    assert_true(hlc_high_water(&clock) == 0);
    fake.now_ms = HLC_PHYSICAL_MS_MAX;
    assert_true(must_now(&clock) == hlc_pack(HLC_PHYSICAL_MS_MAX, 0));
}

static void clock_reports_exhaustion(void **state)
{
    struct fake_clock fake = {.now_ms = HLC_PHYSICAL_MS_MAX};
    struct hlc clock;
    hlc_ts ts = 42;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    hlc_restore(&clock, UINT64_MAX - 1);
    assert_true(must_now(&clock) == UINT64_MAX);
    assert_int_equal(hlc_now(&clock, &ts), HLC_EOVERFLOW);
    assert_true(ts == 42);
    assert_true(hlc_high_water(&clock) == UINT64_MAX);
}

static void clock_system_source_reads_the_wall_clock(void **state)
{
    struct hlc_config config = {
        .clock = hlc_clock_source_system(),
        .max_offset_ms = HLC_MAX_OFFSET_MS_DEFAULT,
    };
    struct hlc clock;
    uint64_t before = (uint64_t)time(NULL) * 1000u;
    hlc_ts ts;

    (void)state;
    hlc_init(&clock, &config);
    ts = must_now(&clock);
    /* Between the second before and a minute after. */
    assert_true(hlc_physical_ms(ts) >= before);
    assert_true(hlc_physical_ms(ts) < before + 60000u);
    assert_true(must_now(&clock) > ts);
}

static void clock_error_messages(void **state)
{
    (void)state;
    assert_string_equal(
        hlc_strerror(HLC_EAHEAD),
        "remote timestamp is further ahead than the maximum clock offset");
    assert_string_equal(hlc_strerror(HLC_EPARSE), "malformed timestamp text");
    assert_string_equal(hlc_strerror(COMMON_ENOMEM), "out of memory");
    assert_true(HLC_EAHEAD >= HLC_ERROR_FIRST && HLC_EPARSE <= HLC_ERROR_LAST);
}

static void clock_init_refuses_missing_source(void **state)
{
    struct hlc_config config = {.clock = {NULL, NULL}, .max_offset_ms = 500};
    struct hlc clock;

    (void)state;
    expect_assert_failure(hlc_init(&clock, &config));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clock_follows_physical_time),
        cmocka_unit_test(clock_counts_within_a_millisecond),
        cmocka_unit_test(clock_is_monotonic_when_wall_clock_steps_back),
        cmocka_unit_test(clock_counter_overflow_carries_forward),
        cmocka_unit_test(clock_refuses_out_of_range_physical_time),
        cmocka_unit_test(clock_reports_exhaustion),
        cmocka_unit_test(clock_system_source_reads_the_wall_clock),
        cmocka_unit_test(clock_error_messages),
        cmocka_unit_test(clock_init_refuses_missing_source),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
