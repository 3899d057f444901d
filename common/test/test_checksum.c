/* SPDX-License-Identifier: MIT
 *
 * Goal: the checksum is XXH3-64 exactly (it is written into formats, so its
 * values must never change), it detects every single-bit flip of a frame,
 * and seeds chain pieces.
 * Method: published XXH3 test vectors; flipping each bit of a 256-byte
 * frame.
 */
#include "common_test.h"

#include <string.h>

static void checksum_matches_xxh3_vectors(void **state)
{
    (void)state;
    /* XXH3_64bits of the empty input, from xxHash's own test suite. */
    assert_true(common_checksum64(NULL, 0, 0) == UINT64_C(0x2D06800538D394C2));
    assert_true(common_checksum64("", 0, 0) == UINT64_C(0x2D06800538D394C2));
}

static void checksum_detects_every_bit_flip(void **state)
{
    uint8_t frame[256];
    uint64_t original;

    (void)state;
    for (size_t i = 0; i < sizeof(frame); i++) {
        frame[i] = (uint8_t)(i * 31 + 7);
    }
    original = common_checksum64(frame, sizeof(frame), 0);
    for (size_t bit = 0; bit < sizeof(frame) * 8; bit++) {
        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_true(common_checksum64(frame, sizeof(frame), 0) != original);
        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    assert_true(common_checksum64(frame, sizeof(frame), 0) == original);
}

static void checksum_seed_chains_pieces(void **state)
{
    const char *header = "header";
    const char *body = "body";
    uint64_t chained;

    (void)state;
    chained = common_checksum64(body, strlen(body),
                                common_checksum64(header, strlen(header), 0));
    assert_true(chained != common_checksum64(body, strlen(body), 0));
    assert_true(common_checksum64(body, strlen(body), 1) !=
                common_checksum64(body, strlen(body), 2));
    /* Deterministic: the same input gives the same value. */
    assert_true(chained == common_checksum64(
                               body, strlen(body),
                               common_checksum64(header, strlen(header), 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checksum_matches_xxh3_vectors),
        cmocka_unit_test(checksum_detects_every_bit_flip),
        cmocka_unit_test(checksum_seed_chains_pieces),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
