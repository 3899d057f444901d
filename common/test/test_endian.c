/* SPDX-License-Identifier: MIT
 *
 * Goal: fixed-width helpers write and read the documented byte order
 * whatever the host's, at unaligned addresses, and big-endian bytes sort
 * like the numbers they hold.
 * Method: known byte vectors at an odd offset; memcmp against numeric order.
 */
#include "common_test.h"

#include <string.h>

static void endian_little_known_bytes(void **state)
{
    uint8_t storage[16] = {0};
    uint8_t *p = storage + 1; /* deliberately unaligned */

    (void)state;
    common_put_u16le(p, 0xbeef);
    assert_memory_equal(p, "\xef\xbe", 2);
    assert_int_equal(common_get_u16le(p), 0xbeef);
    common_put_u32le(p, 0xdeadbeefu);
    assert_memory_equal(p, "\xef\xbe\xad\xde", 4);
    assert_true(common_get_u32le(p) == 0xdeadbeefu);
    common_put_u64le(p, UINT64_C(0x0123456789abcdef));
    assert_memory_equal(p, "\xef\xcd\xab\x89\x67\x45\x23\x01", 8);
    assert_true(common_get_u64le(p) == UINT64_C(0x0123456789abcdef));
}

static void endian_big_known_bytes_and_order(void **state)
{
    static const uint64_t ascending[] = {
        0, 1, 255, 256, UINT64_C(1) << 40, UINT64_MAX - 1, UINT64_MAX};
    uint8_t storage[9];
    uint8_t *p = storage + 1;

    (void)state;
    common_put_u64be(p, UINT64_C(0x0123456789abcdef));
    assert_memory_equal(p, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
    assert_true(common_get_u64be(p) == UINT64_C(0x0123456789abcdef));
    for (size_t i = 0; i + 1 < sizeof(ascending) / sizeof(ascending[0]); i++) {
        uint8_t a[8];
        uint8_t b[8];

        common_put_u64be(a, ascending[i]);
        common_put_u64be(b, ascending[i + 1]);
        assert_true(memcmp(a, b, 8) < 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endian_little_known_bytes),
        cmocka_unit_test(endian_big_known_bytes_and_order),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
