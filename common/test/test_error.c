/* SPDX-License-Identifier: MIT
 *
 * Goal: every error code has its own value inside common's range and its own
 * message, and common_strerror() decodes -errno and unknown codes sanely.
 * Method: walk the X-macro list, and compare -errno against libc.
 */
#include "common_test.h"

#include <errno.h>
#include <string.h>

#define ROW(name, value, message) {name, #name, message},
static const struct {
    int code;
    const char *name;
    const char *message;
} codes[] = {COMMON_ERROR_MAP(ROW)};
#undef ROW

static void error_codes_are_distinct_and_in_range(void **state)
{
    size_t count = sizeof(codes) / sizeof(codes[0]);

    (void)state;
    for (size_t i = 0; i < count; i++) {
        assert_true(codes[i].code >= COMMON_ERROR_FIRST);
        assert_true(codes[i].code <= COMMON_ERROR_LAST);
        for (size_t j = i + 1; j < count; j++) {
            assert_int_not_equal(codes[i].code, codes[j].code);
        }
    }
}

static void error_messages_come_from_the_list(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        assert_string_equal(common_strerror(codes[i].code), codes[i].message);
    }
    assert_string_equal(common_strerror(COMMON_ENOMEM), "out of memory");
}

static void error_success_and_errno(void **state)
{
    (void)state;
    assert_string_equal(common_strerror(0), "success");
    assert_string_equal(common_strerror(-ENOENT), strerror(ENOENT));
    assert_string_equal(common_strerror(-ENOSPC), strerror(ENOSPC));
}

static void error_unknown_codes(void **state)
{
    (void)state;
    /* Inside common's range but unassigned, another module's range, and
     * positive values are all unknown to common. */
    assert_string_equal(common_strerror(COMMON_ERROR_FIRST), "unknown error");
    assert_string_equal(common_strerror(-10000), "unknown error");
    assert_string_equal(common_strerror(7), "unknown error");
    assert_string_equal(common_strerror(-5000), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_codes_are_distinct_and_in_range),
        cmocka_unit_test(error_messages_come_from_the_list),
        cmocka_unit_test(error_success_and_errno),
        cmocka_unit_test(error_unknown_codes),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
