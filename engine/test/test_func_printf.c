/* SPDX-License-Identifier: MIT
 *
 * test_func_printf.c: printf()/format() against libsqlite3 3.40's printf.
 *
 * Method: 12,000 seeded random formats, each of literal text and one to
 * three conversions with random flags (- + space # ! 0 ,), widths and
 * precisions (digits or '*'), and types (d i u x X o f e E g G s z q Q w c
 * % n, an 'l'/'ll' size, and now and then an unknown letter, which ends
 * the output), are run with random arguments of every storage class (and
 * sometimes too few) through "SELECT printf(?1, ...)" and our registry;
 * results must be byte-identical. Fixed cases pin the rounding and
 * formatting edges and each mismatch found.
 */
#include "func_oracle.h"

#define ROUNDS 12000

static const char conv_types[] = "diuxXofeEgGszqQwc%nfgdsp";

/* Arguments that a '*' takes: kept small, as a huge width or precision
 * only makes both sides allocate a gigabyte to say NULL. */
static bool is_star[64];

/* Appends one random conversion to fmt; counts the arguments it takes. */
static size_t random_conversion(struct common_test_rng *rng, char *fmt,
                                int *args)
{
    static const char flags[] = "-+ #!0,";
    size_t n = 0, i, k;

    fmt[n++] = '%';
    k = (size_t)common_test_rng_below(rng, 3);
    for (i = 0; i < k; i++) {
        fmt[n++] = flags[common_test_rng_below(rng, sizeof(flags) - 1)];
    }
    if (common_test_rng_below(rng, 2) == 0) {
        if (common_test_rng_below(rng, 5) == 0) {
            fmt[n++] = '*';
            is_star[++(*args)] = true;
        } else {
            n += (size_t)sprintf(fmt + n, "%d",
                                 (int)common_test_rng_below(rng, 26));
        }
    }
    if (common_test_rng_below(rng, 2) == 0) {
        fmt[n++] = '.';
        if (common_test_rng_below(rng, 5) == 0) {
            fmt[n++] = '*';
            is_star[++(*args)] = true;
        } else if (common_test_rng_below(rng, 6) != 0) {
            n += (size_t)sprintf(fmt + n, "%d",
                                 (int)common_test_rng_below(rng, 21));
        }
    }
    if (common_test_rng_below(rng, 12) == 0) {
        fmt[n++] = 'l';
        if (common_test_rng_below(rng, 2) == 0) {
            fmt[n++] = 'l';
        }
    }
    if (common_test_rng_below(rng, 60) == 0) {
        fmt[n++] = 'y';
    } else {
        char type =
            conv_types[common_test_rng_below(rng, sizeof(conv_types) - 1)];
        fmt[n++] = type;
        *args += type != '%' && type != 'n'; /* these take no argument */
    }
    return n;
}

/* An argument: mostly numbers near the interesting range, or any value. */
static struct engine_value random_arg(struct common_test_rng *rng, uint8_t *buf)
{
    switch (common_test_rng_below(rng, 4)) {
    case 0:
        return engine__value_int((int64_t)common_test_rng_below(rng, 41) - 20);
    case 1:
        return oracle_random_real(rng);
    default:
        return oracle_random_value(rng, buf);
    }
}

static void printf_matches_sqlite_on_random_formats(void **state)
{
    struct engine_value argv[ORACLE_ARGS_MAX];
    sqlite3_stmt *stmts[ORACLE_ARGS_MAX];
    struct common_test_rng rng;
    struct oracle o;
    char fmt[128], sql[64];
    int round, i;

    (void)state;
    common_test_rng_seed(&rng, "printf_matches_sqlite_on_random_formats");
    oracle_open(&o);
    for (i = 1; i < ORACLE_ARGS_MAX; i++) {
        int n = snprintf(sql, sizeof(sql), "SELECT printf(?1"), j;
        for (j = 2; j <= i; j++) {
            n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", ?%d", j);
        }
        snprintf(sql + n, sizeof(sql) - (size_t)n, ")");
        stmts[i] = oracle_prepare(&o, sql);
    }
    for (round = 0; round < ROUNDS; round++) {
        int convs = 1 + (int)common_test_rng_below(&rng, 3), args = 0, argc;
        size_t n = 0;
        memset(is_star, 0, sizeof(is_star));
        for (i = 0; i < convs; i++) {
            if (common_test_rng_below(&rng, 2) == 0) {
                fmt[n++] = (char)('A' + i);
            }
            n += random_conversion(&rng, fmt + n, &args);
        }
        argc = args + 1 > ORACLE_ARGS_MAX - 1 ? ORACLE_ARGS_MAX - 1 : args + 1;
        if (common_test_rng_below(&rng, 10) == 0 && argc > 1) {
            argc--;
        }
        argv[0] = engine__value_text(memcpy(o.scratch[0], fmt, n), n);
        for (i = 1; i < argc; i++) {
            argv[i] = is_star[i]
                          ? engine__value_int(
                                (int64_t)common_test_rng_below(&rng, 61) - 30)
                          : random_arg(&rng, o.scratch[i]);
        }
        oracle_scalar(&o, stmts[argc], "printf", argc, argv);
    }
    for (i = 1; i < ORACLE_ARGS_MAX; i++) {
        sqlite3_finalize(stmts[i]);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

struct fixed {
    const char *format;
    double real;
};

/* Reals at rounding and notation edges, each through several formats. */
static void printf_real_edges_match_sqlite(void **state)
{
    static const char *const formats[] = {
        "%f",       "%.2f",   "%.0f",   "%e",   "%.3e",  "%g",
        "%.15g",    "%!.15g", "%!.20e", "%#g",  "%+.1f", "%010.3f",
        "%-12.4e|", "%.30f",  "%G",     "%.0e", "%#.0f", "% g"};
    static const double reals[] = {
        0.0,      -0.0,       1.005,         2.675,
        0.15,     0.25,       1e15,          1e16,
        1e-5,     1e-4,       123456789.125, 9.9999999999999995e-5,
        1e100,    -1e-300,    5e-324,        1.7976931348623157e308,
        0.1,      1.0 / 3.0,  HUGE_VAL,      -HUGE_VAL,
        999999.5, 0.000123456};
    struct engine_value argv[2];
    sqlite3_stmt *stmt;
    struct oracle o;
    size_t f, r;

    (void)state;
    oracle_open(&o);
    stmt = oracle_prepare(&o, "SELECT printf(?1, ?2)");
    for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
        for (r = 0; r < sizeof(reals) / sizeof(reals[0]); r++) {
            argv[0] = engine__value_text(formats[f], strlen(formats[f]));
            argv[1] = engine__value_real(reals[r]);
            oracle_scalar(&o, stmt, "printf", 2, argv);
        }
    }
    sqlite3_finalize(stmt);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* Formats whose output depends on argument order, size limits and
 * quoting. */
static void printf_fixed_cases_match_sqlite(void **state)
{
    static const char *const formats[] = {
        "%*d|%-*d|",   "%.*s|",       "%c%c%c",         "%5c|%-5c|%.3c|%!.3c",
        "%q %Q %w",    "%,d %,i %,u", "%#x %#X %#o %p", "%r %r %r %r",
        "%!5s|%!.1s|", "%",           "abc%",           "%5%|",
        "%T after",    "%llu %ld",    "%*.*f",          "%.1000000001d",
        "%1000000001d"};
    struct engine_value argv[5];
    sqlite3_stmt *stmt;
    struct oracle o;
    size_t f;

    (void)state;
    oracle_open(&o);
    stmt = oracle_prepare(&o, "SELECT printf(?1, ?2, ?3, ?4, ?5)");
    argv[1] = engine__value_int(-7);
    argv[2] = engine__value_int(1234567);
    argv[3] = engine__value_text("é'日\"", 8);
    argv[4] = engine__value_null();
    for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
        argv[0] = engine__value_text(formats[f], strlen(formats[f]));
        oracle_scalar(&o, stmt, "printf", 5, argv);
    }
    sqlite3_finalize(stmt);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printf_real_edges_match_sqlite),
        cmocka_unit_test(printf_fixed_cases_match_sqlite),
        cmocka_unit_test(printf_matches_sqlite_on_random_formats),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
