/* SPDX-License-Identifier: MIT
 *
 * Goal: slt_md5.c computes MD5 exactly (the corpus stores results as MD5
 * digests, so one wrong bit fails every hashed query).
 * Method: the seven test vectors of RFC 1321 appendix A.5; the same
 * digests fed in every split (block boundaries at 55, 56, 63 and 64
 * bytes are where padding goes wrong); and slt_values_hash() on values
 * whose digests Python's hashlib gave for "value\n..." strings.
 */
#include "common_test.h"

#include <string.h>

#include "slt.h"

static const char *const rfc1321_inputs[] = {
    "",
    "a",
    "abc",
    "message digest",
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "1234567890123456789012345678901234567890123456789012345678901234567890"
    "1234567890",
};

static const char *const rfc1321_digests[] = {
    "d41d8cd98f00b204e9800998ecf8427e", "0cc175b9c0f1b6a831c399e269772661",
    "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0",
    "c3fcd3d76192e4007dfb496cca67e13b", "d174ab98d277d9f5a5611c2c9f419d9f",
    "57edf4a22be3c955ac49da2e2107b67a",
};

static void md5_of(const char *text, size_t split, char *out)
{
    struct slt_md5 md5;
    size_t size = strlen(text);

    if (split > size) {
        split = size;
    }
    slt_md5_init(&md5);
    slt_md5_update(&md5, text, split);
    slt_md5_update(&md5, text + split, size - split);
    slt_md5_final_hex(&md5, out);
}

static void test_rfc1321_vectors(void **state)
{
    char hex[SLT_MD5_HEX_SIZE];

    (void)state;
    for (size_t i = 0; i < sizeof(rfc1321_inputs) / sizeof(*rfc1321_inputs);
         i++) {
        for (size_t split = 0; split <= 81; split++) {
            md5_of(rfc1321_inputs[i], split, hex);
            assert_string_equal(hex, rfc1321_digests[i]);
        }
    }
}

static void test_byte_at_a_time(void **state)
{
    char text[1001];
    char hex[SLT_MD5_HEX_SIZE];
    struct slt_md5 md5;

    (void)state;
    memset(text, 'x', 1000);
    text[1000] = '\0';
    slt_md5_init(&md5);
    for (size_t i = 0; i < 1000; i++) {
        slt_md5_update(&md5, text + i, 1);
    }
    slt_md5_final_hex(&md5, hex);
    assert_string_equal(hex, "398533d48111e9f664b1f64cb10c4b63");
    md5_of(text, 500, hex);
    assert_string_equal(hex, "398533d48111e9f664b1f64cb10c4b63");
}

static void test_values_hash(void **state)
{
    char one[] = "1", two[] = "2", null[] = "NULL", empty[] = "(empty)",
         minus[] = "-3";
    char *pair[] = {one, two};
    char *mixed[] = {null, empty, minus};
    char hex[SLT_MD5_HEX_SIZE];

    (void)state;
    slt_values_hash(pair, 2, hex);
    assert_string_equal(hex, "6ddb4095eb719e2a9f0a3f95677d24e0");
    slt_values_hash(mixed, 3, hex);
    assert_string_equal(hex, "591652aa411c2d38e126d2e1df1dd505");
    slt_values_hash(NULL, 0, hex);
    assert_string_equal(hex, "d41d8cd98f00b204e9800998ecf8427e");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc1321_vectors),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_values_hash),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
