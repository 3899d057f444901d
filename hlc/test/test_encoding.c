/* SPDX-License-Identifier: MIT
 *
 * Goal: stamps render as ISO 8601 UTC with milliseconds and counter, dates
 * are right across leap years, centuries and the end of the 48-bit range,
 * and parsing inverts rendering while refusing anything malformed.
 * Method: known renderings (checked against GNU date), a seeded round trip
 * over the whole range, and a list of bad strings.
 */
#include "hlc_test.h"

#include <string.h>

static void check_format(hlc_ts ts, const char *expected)
{
    char text[HLC_FORMAT_SIZE];
    hlc_ts parsed = 0;

    assert_int_equal(hlc_format(ts, text, sizeof(text)), strlen(expected));
    assert_string_equal(text, expected);
    assert_int_equal(hlc_parse(expected, &parsed), 0);
    assert_true(parsed == ts);
}

static void encoding_known_renderings(void **state)
{
    (void)state;
    check_format(0, "1970-01-01T00:00:00.000Z+0");
    check_format(hlc_pack(UINT64_C(1796222386123), 5),
                 "2026-12-02T14:39:46.123Z+5");
    /* Leap day of a leap century, and the day after. */
    check_format(hlc_pack(UINT64_C(951782400000), 0),
                 "2000-02-29T00:00:00.000Z+0");
    check_format(hlc_pack(UINT64_C(951868800000), 1),
                 "2000-03-01T00:00:00.000Z+1");
    /* 2100 is not a leap year. */
    check_format(hlc_pack(UINT64_C(4107542399999), 65535),
                 "2100-02-28T23:59:59.999Z+65535");
    check_format(hlc_pack(UINT64_C(4107542400000), 0),
                 "2100-03-01T00:00:00.000Z+0");
    check_format(UINT64_MAX, "10889-08-02T05:31:50.655Z+65535");
}

static void encoding_parse_without_counter(void **state)
{
    hlc_ts ts;

    (void)state;
    assert_int_equal(hlc_parse("2026-12-02T14:39:46.123Z", &ts), 0);
    assert_true(ts == hlc_pack(UINT64_C(1796222386123), 0));
}

static void encoding_random_roundtrip(void **state)
{
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "encoding_random_roundtrip");
    for (int i = 0; i < 100000; i++) {
        char text[HLC_FORMAT_SIZE];
        hlc_ts ts = common_test_rng_next(&rng);
        hlc_ts parsed = 0;

        hlc_format(ts, text, sizeof(text));
        assert_int_equal(hlc_parse(text, &parsed), 0);
        assert_true(parsed == ts);
    }
}

static void encoding_parse_refuses_malformed(void **state)
{
    static const char *bad[] = {
        "",
        "2026",
        "2026-12-02",
        "2026-12-02T14:39:46Z",
        "2026-12-02T14:39:46.12Z",
        "2026-12-02T14:39:46.123",
        "2026-12-02T14:39:46.123Z+",
        "2026-12-02T14:39:46.123Z+65536",
        "2026-12-02T14:39:46.123Z+123456",
        "2026-12-02T14:39:46.123Z-5",
        "2026-12-02T14:39:46.123Z+5 ",
        " 2026-12-02T14:39:46.123Z",
        "2026-13-02T14:39:46.123Z",
        "2026-00-02T14:39:46.123Z",
        "2026-02-29T00:00:00.000Z", /* not a leap year */
        "2026-04-31T00:00:00.000Z",
        "2026-12-02T24:00:00.000Z",
        "2026-12-02T23:60:00.000Z",
        "2026-12-02T23:59:60.000Z", /* no leap seconds in Unix time */
        "1969-12-31T23:59:59.999Z",
        "10889-08-02T05:31:50.656Z", /* past 48 bits of milliseconds */
        "99999-01-01T00:00:00.000Z",
        "02026-12-02T14:39:46.123Z",
        "2026-1-02T14:39:46.123Z",
        "2026/12/02T14:39:46.123Z",
        "+026-12-02T14:39:46.123Z",
    };
    hlc_ts ts = 42;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (hlc_parse(bad[i], &ts) != HLC_EPARSE) {
            fail_msg("accepted: \"%s\"", bad[i]);
        }
    }
    assert_true(ts == 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoding_known_renderings),
        cmocka_unit_test(encoding_parse_without_counter),
        cmocka_unit_test(encoding_random_roundtrip),
        cmocka_unit_test(encoding_parse_refuses_malformed),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
