/* SPDX-License-Identifier: MIT
 *
 * Goal: the buffer keeps every byte appended, in order, across growth; it
 * refuses to pass its size_max and survives a failed allocation at every
 * point, in both cases unchanged; detach hands over ownership.
 * Method: byte-exact comparisons, and the fault heap failing each
 * allocation of an append sequence in turn.
 */
#include "common_test.h"

#include <string.h>

static void buf_appends_in_order_across_growth(void **state)
{
    struct common_buf buf;
    uint8_t expected[1000];

    (void)state;
    common_buf_init(&buf, 1 << 20);
    for (size_t i = 0; i < sizeof(expected); i++) {
        expected[i] = (uint8_t)(i * 7);
        assert_int_equal(common_buf_append_byte(&buf, expected[i]), 0);
    }
    assert_int_equal(buf.size, sizeof(expected));
    assert_true(buf.capacity >= buf.size);
    assert_memory_equal(buf.data, expected, sizeof(expected));
    common_buf_close(&buf);
    assert_null(buf.data);
}

static void buf_encodes_fixed_width_and_varints(void **state)
{
    static const uint8_t expected[] = {
        0x78, 0x56, 0x34, 0x12,                         /* u32le */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* u64le */
        0xac, 0x02,                                     /* varint 300 */
        'h',  'i',
    };
    struct common_buf buf;

    (void)state;
    common_buf_init(&buf, 64);
    assert_int_equal(common_buf_append_u32le(&buf, 0x12345678u), 0);
    assert_int_equal(
        common_buf_append_u64le(&buf, UINT64_C(0x0102030405060708)), 0);
    assert_int_equal(common_buf_append_varint(&buf, 300), 0);
    assert_int_equal(common_buf_append(&buf, "hi", 2), 0);
    assert_int_equal(common_buf_append(&buf, NULL, 0), 0);
    assert_int_equal(buf.size, sizeof(expected));
    assert_memory_equal(buf.data, expected, sizeof(expected));
    common_buf_close(&buf);
}

static void buf_refuses_to_pass_size_max(void **state)
{
    struct common_buf buf;
    uint8_t block[40] = {0};

    (void)state;
    common_buf_init(&buf, 100);
    assert_int_equal(common_buf_append(&buf, block, 40), 0);
    assert_int_equal(common_buf_append(&buf, block, 40), 0);
    assert_int_equal(common_buf_append(&buf, block, 40), COMMON_ETOOBIG);
    assert_int_equal(buf.size, 80);
    assert_int_equal(common_buf_append(&buf, block, 20), 0);
    assert_int_equal(buf.size, 100);
    assert_true(buf.capacity <= 100);
    assert_int_equal(common_buf_append_byte(&buf, 1), COMMON_ETOOBIG);
    assert_int_equal(common_buf_reserve(&buf, SIZE_MAX), COMMON_ETOOBIG);
    common_buf_close(&buf);
}

/* Appends 300 bytes in 30 pieces; returns the first error. */
static int append_pieces(struct common_buf *buf)
{
    for (int i = 0; i < 30; i++) {
        uint8_t piece[10];
        int rc;

        memset(piece, i, sizeof(piece));
        rc = common_buf_append(buf, piece, sizeof(piece));
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static void buf_survives_failure_of_every_allocation(void **state)
{
    struct common_heap saved;

    (void)state;
    common_heap_get(&saved);
    for (uint64_t fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        struct common_buf buf;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        common_buf_init(&buf, 4096);
        rc = append_pieces(&buf);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            /* Every allocation of the sequence has been failed once. */
            assert_int_equal(rc, 0);
            assert_int_equal(buf.size, 300);
            common_buf_close(&buf);
            assert_true(fail_at > 2);
            break;
        }
        assert_int_equal(rc, COMMON_ENOMEM);
        /* The bytes before the failure are intact. */
        assert_int_equal(buf.size % 10, 0);
        for (size_t i = 0; i < buf.size; i++) {
            assert_int_equal(buf.data[i], i / 10);
        }
        common_buf_close(&buf);
    }
}

static void buf_truncate_and_detach(void **state)
{
    struct common_buf buf;
    uint8_t *bytes;
    size_t size;

    (void)state;
    common_buf_init(&buf, 64);
    assert_int_equal(common_buf_append(&buf, "abcdef", 6), 0);
    common_buf_truncate(&buf, 3);
    assert_int_equal(common_buf_append(&buf, "XY", 2), 0);
    bytes = common_buf_detach(&buf, &size);
    assert_int_equal(size, 5);
    assert_memory_equal(bytes, "abcXY", 5);
    assert_null(buf.data);
    assert_int_equal(buf.size, 0);
    assert_int_equal(buf.capacity, 0);
    common_free(bytes);
    assert_null(common_buf_detach(&buf, &size));
    assert_int_equal(size, 0);
    expect_assert_failure(common_buf_truncate(&buf, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf_appends_in_order_across_growth),
        cmocka_unit_test(buf_encodes_fixed_width_and_varints),
        cmocka_unit_test(buf_refuses_to_pass_size_max),
        cmocka_unit_test(buf_survives_failure_of_every_allocation),
        cmocka_unit_test(buf_truncate_and_detach),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
