/* SPDX-License-Identifier: MIT
 *
 * test_value_real_text.c: engine__real_to_text() and engine_real_to_text()
 * render every REAL exactly as SQLite 3.40 does.
 *
 * Method: the oracle is libsqlite3 itself, SELECT CAST(?1 AS TEXT) with
 * the double bound, compared byte for byte with our rendering. Fixed cases
 * pin the rules (".0" on integral values, the exponent form, -0.0, Inf,
 * the halfway cases where SQLite's long double digits differ from libc's
 * "%.15g"); then 100,000 random bit patterns and 100,000 random
 * decimal-looking values (short decimal literals read with strtod, and
 * integers and halves around the 15-digit boundary) must show no mismatch.
 */
#include "test_value_oracle.h"

#include <stdlib.h>

#define RANDOM_BITS_COUNT 100000
#define RANDOM_DECIMAL_COUNT 100000

struct fixture {
    sqlite3 *db;
    sqlite3_stmt *cast;
};

static int fixture_setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));

    f->db = oracle_open();
    f->cast = oracle_prepare(f->db, "SELECT CAST(?1 AS TEXT)");
    *state = f;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;

    sqlite3_finalize(f->cast);
    sqlite3_close(f->db);
    test_free(f);
    return 0;
}

/* Renders value both ways; fails on any difference. */
static void check_one(struct fixture *f, double value)
{
    char ours[ENGINE_REAL_TEXT_SIZE];
    size_t size = engine__real_to_text(value, ours);
    const char *oracle;

    assert_true(size < ENGINE_REAL_TEXT_SIZE);
    assert_int_equal(ours[size], '\0');
    assert_int_equal(sqlite3_bind_double(f->cast, 1, value), SQLITE_OK);
    oracle_step_row(f->cast);
    oracle = (const char *)sqlite3_column_text(f->cast, 0);
    if (oracle == NULL || strcmp(ours, oracle) != 0) {
        fail_msg("%.17g (%a): ours '%s', sqlite '%s'", value, value, ours,
                 oracle != NULL ? oracle : "(null)");
    }
    oracle_reset(f->cast);
}

static void real_text_fixed(void **state)
{
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "0.0"},
        {1.0, "1.0"},
        {-1.0, "-1.0"},
        {3.0, "3.0"},
        {0.1, "0.1"},
        {1e20, "1.0e+20"},
        {1e15, "1.0e+15"},
        {1e14, "100000000000000.0"},
        {123456789012345678.0, "1.23456789012346e+17"},
        {106086564139.8125, "106086564139.813"},
        {1e-4, "0.0001"},
        {1e-5, "1.0e-05"},
        {1.5e-300, "1.5e-300"},
        {4.9e-324, "4.94065645841247e-324"},
        {DBL_MAX, "1.79769313486232e+308"},
        {INFINITY, "Inf"},
        {-INFINITY, "-Inf"},
        {9223372036854775808.0, "9.22337203685478e+18"},
        {0.3, "0.3"},
        {2.5, "2.5"},
        {100.0, "100.0"},
        {999999999999999.9, "1.0e+15"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[ENGINE_REAL_TEXT_SIZE];
        size_t size = engine_real_to_text(cases[i].value, out);
        assert_string_equal(out, cases[i].text);
        assert_int_equal(size, strlen(cases[i].text));
        check_one(*state, cases[i].value);
    }
}

/* NaN never reaches a REAL value (SQLite makes it NULL), but the
 * renderer called directly answers as SQLite's printf does. */
static void real_text_nan(void **state)
{
    char out[ENGINE_REAL_TEXT_SIZE];
    char *oracle = sqlite3_mprintf("%!.15g", NAN);

    (void)state;
    assert_int_equal(engine__real_to_text(NAN, out), 3);
    assert_string_equal(out, oracle);
    sqlite3_free(oracle);
}

static void real_text_random_bits(void **state)
{
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "real_text_random_bits");
    for (int i = 0; i < RANDOM_BITS_COUNT; i++) {
        check_one(*state, gen_bits_double(&rng));
    }
    printf("real_text_random_bits: %d doubles, 0 mismatches\n",
           RANDOM_BITS_COUNT);
}

/* A decimal-looking double: a literal of 1 to 17 digits with a decimal
 * exponent near the fixed/exponent switch, an integer near 10^15, or a
 * value ending in .5 at the 15th digit (the halfway cases). */
static double gen_decimal(struct common_test_rng *rng)
{
    char text[64];
    uint64_t mantissa =
        common_test_rng_next(rng) %
        (uint64_t)pow(10.0, (double)(1 + common_test_rng_below(rng, 17)));
    int exponent = (int)common_test_rng_below(rng, 50) - 25;

    switch (common_test_rng_below(rng, 4)) {
    case 0:
        exponent = (int)common_test_rng_below(rng, 640) - 330;
        break;
    case 1:
        return (double)(mantissa % 2000000000000000) - 1e15;
    case 2:
        return (double)(mantissa % 1000000000000000) / 10.0 + 0.05;
    default:
        break;
    }
    snprintf(text, sizeof(text), "%s%" PRIu64 "e%d",
             common_test_rng_below(rng, 2) ? "-" : "", mantissa, exponent);
    return strtod(text, NULL);
}

static void real_text_random_decimal(void **state)
{
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "real_text_random_decimal");
    for (int i = 0; i < RANDOM_DECIMAL_COUNT; i++) {
        check_one(*state, gen_decimal(&rng));
    }
    printf("real_text_random_decimal: %d doubles, 0 mismatches\n",
           RANDOM_DECIMAL_COUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(real_text_fixed, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test(real_text_nan),
        cmocka_unit_test_setup_teardown(real_text_random_bits, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(real_text_random_decimal, fixture_setup,
                                        fixture_teardown),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
