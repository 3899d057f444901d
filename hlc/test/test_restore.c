/* SPDX-License-Identifier: MIT
 *
 * Goal: a persisted high-water mark keeps the clock from going back across a
 * restart, even when the wall clock stepped back while the node was down;
 * restoring never lowers the clock; encoded stamps round-trip and sort
 * bytewise in time order.
 * Method: a "node" stamps events and writes its mark to a file; a new
 * struct hlc over a stepped-back fake clock reads it and must stamp above.
 */
#include "hlc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0 UINT64_C(1764686000000)

static void persist(const char *path, hlc_ts mark)
{
    uint8_t bytes[HLC_ENCODED_SIZE];
    FILE *file = fopen(path, "wb");

    assert_non_null(file);
    hlc_encode(mark, bytes);
    assert_int_equal(fwrite(bytes, 1, sizeof(bytes), file), sizeof(bytes));
    assert_int_equal(fflush(file), 0);
    assert_int_equal(fsync(fileno(file)), 0);
    assert_int_equal(fclose(file), 0);
}

static hlc_ts load(const char *path)
{
    uint8_t bytes[HLC_ENCODED_SIZE];
    FILE *file = fopen(path, "rb");

    assert_non_null(file);
    assert_int_equal(fread(bytes, 1, sizeof(bytes), file), sizeof(bytes));
    assert_int_equal(fclose(file), 0);
    return hlc_decode(bytes);
}

static void restore_survives_restart_with_clock_stepped_back(void **state)
{
    char path[] = "/tmp/sinew-hlc-XXXXXX";
    struct fake_clock fake = {.now_ms = T0};
    struct hlc before_crash;
    struct hlc after_restart;
    hlc_ts last_issued = 0;
    int fd;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    fake_clock_hlc_init(&before_crash, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    for (int i = 0; i < 10; i++) {
        last_issued = must_now(&before_crash);
        persist(path, hlc_high_water(&before_crash));
    }
    /* Down for a while; the wall clock comes back an hour behind. */
    fake.now_ms = T0 - 3600 * 1000;
    fake_clock_hlc_init(&after_restart, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    assert_true(must_now(&after_restart) < last_issued); /* the hazard */
    fake_clock_hlc_init(&after_restart, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    hlc_restore(&after_restart, load(path));
    assert_true(must_now(&after_restart) > last_issued);
    assert_true(must_now(&after_restart) == last_issued + 2);
    unlink(path);
}

static void restore_never_lowers_the_clock(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts issued;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    issued = must_now(&clock);
    hlc_restore(&clock, hlc_pack(T0 - 1000, 3));
    assert_true(hlc_high_water(&clock) == issued);
    assert_true(must_now(&clock) == issued + 1);
}

static void restore_behind_physical_time_follows_physical_time(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    hlc_restore(&clock, hlc_pack(T0 - 5000, 17));
    assert_true(must_now(&clock) == hlc_pack(T0, 0));
}

static void restore_high_water_includes_received_stamps(void **state)
{
    struct fake_clock fake = {.now_ms = T0};
    struct hlc clock;
    hlc_ts received;

    (void)state;
    fake_clock_hlc_init(&clock, &fake, HLC_MAX_OFFSET_MS_DEFAULT);
    received = must_update(&clock, hlc_pack(T0 + 300, 4));
    assert_true(hlc_high_water(&clock) == received);
}

static void restore_encoding_roundtrips_and_sorts(void **state)
{
    static const hlc_ts ascending[] = {0,
                                       1,
                                       HLC_COUNTER_MAX,
                                       HLC_COUNTER_MAX + 1,
                                       UINT64_C(1) << 40,
                                       UINT64_MAX - 1,
                                       UINT64_MAX};
    uint8_t bytes[HLC_ENCODED_SIZE];
    uint8_t next[HLC_ENCODED_SIZE];

    (void)state;
    hlc_encode(hlc_pack(T0, 5), bytes);
    assert_true(hlc_decode(bytes) == hlc_pack(T0, 5));
    for (size_t i = 0; i + 1 < sizeof(ascending) / sizeof(ascending[0]); i++) {
        hlc_encode(ascending[i], bytes);
        hlc_encode(ascending[i + 1], next);
        assert_true(hlc_decode(bytes) == ascending[i]);
        assert_true(memcmp(bytes, next, HLC_ENCODED_SIZE) < 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(restore_survives_restart_with_clock_stepped_back),
        cmocka_unit_test(restore_never_lowers_the_clock),
        cmocka_unit_test(restore_behind_physical_time_follows_physical_time),
        cmocka_unit_test(restore_high_water_includes_received_stamps),
        cmocka_unit_test(restore_encoding_roundtrips_and_sorts),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
