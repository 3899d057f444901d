/* SPDX-License-Identifier: MIT
 *
 * Goal: values are rendered, sorted and recognised exactly as upstream's
 * sqllogictest runner does for SQLite (slt_sqlite.c, sqllogictest.c).
 * Method: exact cases for each type letter (I keeps the low 32 bits; R is
 * "%.3f" with SQLite 3.47's 16 significant digits, values taken from
 * evidence/slt_lang_aggfunc.test's expected results; T maps bytes outside
 * 0x20..0x7e to '@'); seeded random k/16, k/1000, k/3, where 3.40's printf
 * agrees with 3.47's, against libsqlite3's sqlite3_snprintf("%.3f");
 * rowsort and valuesort on small sets; the hash-line recogniser.
 */
#include "common_test.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "slt.h"

static void expect_integer(int64_t value, const char *expected)
{
    char out[SLT_NUMBER_TEXT_SIZE];

    slt_render_integer(value, out);
    assert_string_equal(out, expected);
}

static void expect_real(double value, const char *expected)
{
    char out[SLT_NUMBER_TEXT_SIZE];

    slt_render_real(value, out);
    assert_string_equal(out, expected);
}

static void test_integer(void **state)
{
    (void)state;
    expect_integer(0, "0");
    expect_integer(-1, "-1");
    expect_integer(2147483647, "2147483647");
    expect_integer(2147483648, "-2147483648");
    expect_integer(4294967297, "1");
    expect_integer(INT64_MIN, "0");
    expect_integer(INT64_MAX, "-1");
}

static void test_real(void **state)
{
    (void)state;
    expect_real(1.5, "1.500");
    expect_real(0.0, "0.000");
    expect_real(-0.0, "0.000");
    expect_real(-0.0001, "-0.000");
    expect_real(2.0 / 3.0, "0.667");
    expect_real(0.0625, "0.063");
    expect_real(-0.0625, "-0.063");
    expect_real(0.0005, "0.001");
    expect_real(0.9996, "1.000");
    expect_real(999.9995, "1000.000");
    expect_real(123456789012.3456, "123456789012.346");
    expect_real(9999999999999.0, "9999999999999.000");
    expect_real(1e13, "10000000000000.000");
    expect_real(123456789012345.67, "123456789012345.700");
    /* evidence/slt_lang_aggfunc.test lines 487 and 499, 492. */
    expect_real(-9223372036854775808.0, "-9223372036854776000.000");
    expect_real(-18446744073709551616.0, "-18446744073709550000.000");
    expect_real(INFINITY, "Inf");
    expect_real(-INFINITY, "-Inf");

    char out[SLT_NUMBER_TEXT_SIZE];
    slt_render_real(-1.7976931348623157e308, out);
    assert_int_equal(strlen(out), 1 + 309 + 4);
    assert_memory_equal(out, "-1797693134862316000", 20);
}

/* Values whose "%.3f" needs no digit past the 16th: k/16 (exact ties at
 * the fourth decimal, where SQLite rounds half up and C's printf to even)
 * and k/1000, k/3 up to 1e12. On these 3.40's printf and 3.47's agree. */
static void test_real_against_sqlite(void **state)
{
    static const double divisors[] = {16.0, 1000.0, 3.0, 1.0, 128.0};
    struct common_test_rng rng;
    char ours[SLT_NUMBER_TEXT_SIZE];
    char theirs[SLT_NUMBER_TEXT_SIZE];

    (void)state;
    common_test_rng_seed(&rng, "test_real_against_sqlite");
    for (int i = 0; i < 100000; i++) {
        int64_t range = (int64_t)1 << common_test_rng_below(&rng, 40);
        int64_t k =
            (int64_t)common_test_rng_below(&rng, (uint64_t)range * 2) - range;
        double value = (double)k / divisors[common_test_rng_below(&rng, 5)];
        slt_render_real(value, ours);
        sqlite3_snprintf(sizeof(theirs), theirs, "%.3f", value);
        if (strcmp(ours, theirs) != 0) {
            print_error("value %.17g: ours %s, sqlite %s\n", value, ours,
                        theirs);
        }
        assert_string_equal(ours, theirs);
    }
}

static void append_text(struct slt_values *values, const char *text,
                        size_t size)
{
    assert_int_equal(slt_values_append_text(values, text, size), 0);
}

static void test_text(void **state)
{
    struct slt_values values;

    (void)state;
    slt_values_init(&values);
    append_text(&values, NULL, 0);
    append_text(&values, "", 0);
    append_text(&values, "plain text ~", 12);
    append_text(&values, "tab\there\n", 9);
    append_text(&values, "caf\xc3\xa9", 5);
    append_text(&values, "cut\0after", 9);
    append_text(&values, "\0", 1);
    assert_int_equal(values.count, 7);
    assert_string_equal(values.items[0], "NULL");
    assert_string_equal(values.items[1], "(empty)");
    assert_string_equal(values.items[2], "plain text ~");
    assert_string_equal(values.items[3], "tab@here@");
    assert_string_equal(values.items[4], "caf@@");
    assert_string_equal(values.items[5], "cut");
    assert_string_equal(values.items[6], "(empty)");
    slt_values_close(&values);
}

static void fill(struct slt_values *values, const char *const *items,
                 size_t count)
{
    slt_values_init(values);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(slt_values_append(values, items[i]), 0);
    }
}

static void expect_items(const struct slt_values *values,
                         const char *const *items, size_t count)
{
    assert_int_equal(values->count, count);
    for (size_t i = 0; i < count; i++) {
        assert_string_equal(values->items[i], items[i]);
    }
}

static void test_sort(void **state)
{
    /* Rows (2 columns): strcmp order, so "10" < "9" and "NULL" < "b". */
    static const char *const rows[] = {"9", "b",    "10", "z",
                                       "9", "NULL", "10", "a"};
    static const char *const by_row[] = {"10", "a",    "10", "z",
                                         "9",  "NULL", "9",  "b"};
    static const char *const by_value[] = {"10",   "10", "9", "9",
                                           "NULL", "a",  "b", "z"};
    struct slt_values values;

    (void)state;
    fill(&values, rows, 8);
    assert_int_equal(slt_values_sort(&values, SLT_SORT_NONE, 2), 0);
    expect_items(&values, rows, 8);
    assert_int_equal(slt_values_sort(&values, SLT_SORT_ROWS, 2), 0);
    expect_items(&values, by_row, 8);
    slt_values_close(&values);

    fill(&values, rows, 8);
    assert_int_equal(slt_values_sort(&values, SLT_SORT_VALUES, 2), 0);
    expect_items(&values, by_value, 8);
    slt_values_close(&values);

    /* A partial last row stays where it is. */
    static const char *const partial[] = {"b", "1", "a", "2", "x"};
    static const char *const partial_sorted[] = {"a", "2", "b", "1", "x"};
    fill(&values, partial, 5);
    assert_int_equal(slt_values_sort(&values, SLT_SORT_ROWS, 2), 0);
    expect_items(&values, partial_sorted, 5);
    slt_values_close(&values);
}

static void test_hash_line(void **state)
{
    char hash[SLT_MD5_HEX_SIZE];

    (void)state;
    assert_true(slt_parse_hash_line(
        "30 values hashing to 3c13dee48d9356ae19af2515e05e6b54", hash));
    assert_string_equal(hash, "3c13dee48d9356ae19af2515e05e6b54");
    assert_false(slt_parse_hash_line(
        "values hashing to 3c13dee48d9356ae19af2515e05e6b54", hash));
    assert_false(slt_parse_hash_line(
        "30 values hashing to 3c13dee48d9356ae19af2515e05e6b5", hash));
    assert_false(slt_parse_hash_line(
        "30 values hashing to 3c13dee48d9356ae19af2515e05e6b54 ", hash));
    assert_false(slt_parse_hash_line(
        "30 values hashing to 3C13DEE48D9356AE19AF2515E05E6B54", hash));
    assert_false(slt_parse_hash_line("", hash));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer),
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_real_against_sqlite),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_hash_line),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
