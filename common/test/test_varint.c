/* SPDX-License-Identifier: MIT
 *
 * Goal: varints encode to the standard LEB128 bytes, round-trip every value,
 * and decoding rejects truncated, overlong, overflowing and non-shortest
 * inputs; zigzag maps small signed values to small unsigned ones.
 * Method: known vectors at every 7-bit boundary, hand-made bad inputs, and
 * a seeded sweep of random values.
 */
#include "common_test.h"

static void check_roundtrip(uint64_t value)
{
    uint8_t bytes[COMMON_VARINT_SIZE_MAX];
    size_t size = common_varint_encode(value, bytes);
    uint64_t decoded = 0;
    size_t consumed = 0;

    assert_int_equal(size, common_varint_size(value));
    assert_int_equal(common_varint_decode(bytes, size, &decoded, &consumed), 0);
    assert_int_equal(consumed, size);
    assert_true(decoded == value);
    /* One byte short is truncated. */
    assert_int_equal(common_varint_decode(bytes, size - 1, &decoded, &consumed),
                     COMMON_ECORRUPT);
}

static void varint_known_vectors(void **state)
{
    static const struct {
        uint64_t value;
        size_t size;
        uint8_t bytes[COMMON_VARINT_SIZE_MAX];
    } vectors[] = {
        {0, 1, {0x00}},
        {1, 1, {0x01}},
        {127, 1, {0x7f}},
        {128, 2, {0x80, 0x01}},
        {300, 2, {0xac, 0x02}},
        {16383, 2, {0xff, 0x7f}},
        {16384, 3, {0x80, 0x80, 0x01}},
        {UINT64_C(1) << 63,
         10,
         {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
        {UINT64_MAX,
         10,
         {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        uint8_t bytes[COMMON_VARINT_SIZE_MAX];

        assert_int_equal(common_varint_encode(vectors[i].value, bytes),
                         vectors[i].size);
        assert_memory_equal(bytes, vectors[i].bytes, vectors[i].size);
        check_roundtrip(vectors[i].value);
    }
}

static void varint_every_boundary_roundtrips(void **state)
{
    (void)state;
    for (unsigned bits = 1; bits < 64; bits++) {
        uint64_t edge = UINT64_C(1) << bits;

        check_roundtrip(edge - 1);
        check_roundtrip(edge);
        check_roundtrip(edge + 1);
    }
}

static void varint_random_values_roundtrip(void **state)
{
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "varint_random_values_roundtrip");
    for (int i = 0; i < 100000; i++) {
        /* Shift so that every length is drawn about equally often. */
        uint64_t value =
            common_test_rng_next(&rng) >> common_test_rng_below(&rng, 64);
        check_roundtrip(value);
    }
}

static void varint_rejects_malformed_input(void **state)
{
    static const struct {
        size_t size;
        uint8_t bytes[12];
    } bad[] = {
        {0, {0}},                /* empty */
        {1, {0x80}},             /* ends inside */
        {2, {0x80, 0x00}},       /* 0 in two bytes */
        {3, {0xff, 0x80, 0x00}}, /* 127 with a zero tail */
        {10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}},
        {11,
         {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
    };
    uint64_t value = 42;
    size_t consumed = 42;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            common_varint_decode(bad[i].bytes, bad[i].size, &value, &consumed),
            COMMON_ECORRUPT);
    }
    /* Outputs are written only on success. */
    assert_int_equal(value, 42);
    assert_int_equal(consumed, 42);
}

static void varint_decode_stops_at_the_end_of_the_varint(void **state)
{
    const uint8_t bytes[] = {0xac, 0x02, 0xff, 0xff};
    uint64_t value;
    size_t consumed;

    (void)state;
    assert_int_equal(
        common_varint_decode(bytes, sizeof(bytes), &value, &consumed), 0);
    assert_int_equal(value, 300);
    assert_int_equal(consumed, 2);
}

static void varint_zigzag(void **state)
{
    static const struct {
        int64_t value;
        uint64_t encoded;
    } vectors[] = {
        {0, 0},
        {-1, 1},
        {1, 2},
        {-2, 3},
        {2147483647, 4294967294u},
        {-2147483648LL, 4294967295u},
        {INT64_MAX, UINT64_MAX - 1},
        {INT64_MIN, UINT64_MAX},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        assert_true(common_zigzag_encode(vectors[i].value) ==
                    vectors[i].encoded);
        assert_true(common_zigzag_decode(vectors[i].encoded) ==
                    vectors[i].value);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varint_known_vectors),
        cmocka_unit_test(varint_every_boundary_roundtrips),
        cmocka_unit_test(varint_random_values_roundtrip),
        cmocka_unit_test(varint_rejects_malformed_input),
        cmocka_unit_test(varint_decode_stops_at_the_end_of_the_varint),
        cmocka_unit_test(varint_zigzag),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
