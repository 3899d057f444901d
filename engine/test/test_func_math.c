/* SPDX-License-Identifier: MIT
 *
 * test_func_math.c: the math functions (SQLITE_ENABLE_MATH_FUNCTIONS)
 * against libsqlite3 3.40.
 *
 * Method: for each function, thousands of seeded random arguments of
 * every storage class (func_oracle.h's values: NULL, integers with their
 * edges, reals with -0.0, infinities, huge and tiny ones, numeric and
 * other text, blobs) and, half of the time, numbers in the function's
 * domain (e.g. -1..1 for acos) are bound to "SELECT f(?1, ...)" in SQLite
 * and passed to our function through the registry; type and value must
 * agree bit for bit (both call the same libm). Fixed cases pin the rules:
 * ceil/floor/trunc keep integers, NaN becomes NULL, log(B, X)'s 3.40 type
 * checks.
 */
#include <stdlib.h>

#include "func_oracle.h"

struct math_case {
    const char *name;
    int argc;
    double low; /* the domain random numbers are drawn from */
    double high;
};

static const struct math_case math_cases[] = {
    {"acos", 1, -1.2, 1.2},        {"acosh", 1, 0.5, 50.0},
    {"asin", 1, -1.2, 1.2},        {"asinh", 1, -50.0, 50.0},
    {"atan", 1, -50.0, 50.0},      {"atan2", 2, -10.0, 10.0},
    {"atanh", 1, -1.2, 1.2},       {"ceil", 1, -100.0, 100.0},
    {"ceiling", 1, -100.0, 100.0}, {"cos", 1, -10.0, 10.0},
    {"cosh", 1, -800.0, 800.0},    {"degrees", 1, -10.0, 10.0},
    {"exp", 1, -800.0, 800.0},     {"floor", 1, -100.0, 100.0},
    {"ln", 1, -1.0, 100.0},        {"log", 1, -1.0, 1e6},
    {"log", 2, -2.0, 100.0},       {"log10", 1, -1.0, 1e6},
    {"log2", 1, -1.0, 1e6},        {"mod", 2, -20.0, 20.0},
    {"pow", 2, -10.0, 10.0},       {"power", 2, -10.0, 10.0},
    {"radians", 1, -720.0, 720.0}, {"sin", 1, -10.0, 10.0},
    {"sinh", 1, -800.0, 800.0},    {"sqrt", 1, -1.0, 1e6},
    {"tan", 1, -10.0, 10.0},       {"tanh", 1, -30.0, 30.0},
    {"trunc", 1, -100.0, 100.0},   {"pi", 0, 0.0, 0.0},
};

#define MATH_ROUNDS 2500

static void sql_for(char *sql, size_t size, const char *name, int argc)
{
    int n = snprintf(sql, size, "SELECT %s(", name);

    for (int i = 0; i < argc; i++) {
        n += snprintf(sql + n, size - (size_t)n, "%s?%d", i ? ", " : "", i + 1);
    }
    snprintf(sql + n, size - (size_t)n, ")");
}

/* A number in [low, high]: a real, an integer, or either as text. */
static struct engine_value domain_value(struct common_test_rng *rng,
                                        const struct math_case *c, uint8_t *buf)
{
    double unit = (double)common_test_rng_below(rng, 1000001) / 1e6;
    double x = c->low + (c->high - c->low) * unit;
    int n;

    switch (common_test_rng_below(rng, 4)) {
    case 0:
        return engine__value_int((int64_t)x);
    case 1:
        n = snprintf((char *)buf, 64, "%.17g", x);
        return engine__value_text(buf, (size_t)n);
    case 2:
        n = snprintf((char *)buf, 64, " %d ", (int)x);
        return engine__value_text(buf, (size_t)n);
    default:
        return engine__value_real(x);
    }
}

static void math_functions_match_sqlite_on_random_args(void **state)
{
    struct engine_value argv[2];
    struct common_test_rng rng;
    struct oracle o;
    char sql[64];

    (void)state;
    common_test_rng_seed(&rng, "math_functions_match_sqlite");
    oracle_open(&o);
    for (size_t c = 0; c < sizeof(math_cases) / sizeof(math_cases[0]); c++) {
        const struct math_case *m = &math_cases[c];
        sqlite3_stmt *stmt;
        sql_for(sql, sizeof(sql), m->name, m->argc);
        stmt = oracle_prepare(&o, sql);
        for (int round = 0; round < MATH_ROUNDS; round++) {
            for (int i = 0; i < m->argc; i++) {
                argv[i] = common_test_rng_below(&rng, 2) == 0
                              ? domain_value(&rng, m, o.scratch[i])
                              : oracle_random_value(&rng, o.scratch[i]);
            }
            oracle_scalar(&o, stmt, m->name, m->argc, argv);
        }
        sqlite3_finalize(stmt);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* A fixed call: "i:5", "r:1.5", "t:abc", "b:abc" (blob of those bytes) or
 * "n" for NULL. */
struct fixed_case {
    const char *name;
    int argc;
    const char *args[2];
};

static const struct fixed_case fixed_cases[] = {
    {"ceil", 1, {"i:-9223372036854775808"}},
    {"floor", 1, {"t: 12 "}},
    {"trunc", 1, {"t:12.5"}},
    {"ceil", 1, {"t:12abc"}},
    {"ceil", 1, {"r:-0.5"}},
    {"floor", 1, {"b:12"}},
    {"sqrt", 1, {"i:-1"}},
    {"acos", 1, {"i:2"}},
    {"mod", 2, {"i:5", "i:0"}},
    {"mod", 2, {"r:-7.5", "i:2"}},
    {"pow", 2, {"i:0", "i:-1"}},
    {"pow", 2, {"i:-8", "r:0.3333333333333333"}},
    {"log", 2, {"i:2", "t:abc"}},
    {"log", 2, {"i:2", "t:8abc"}},
    {"log", 2, {"i:2", "b:8"}},
    {"log", 2, {"i:2", "n"}},
    {"log", 2, {"t:abc", "i:8"}},
    {"log", 2, {"i:1", "i:8"}},
    {"log", 2, {"r:0.5", "i:8"}},
    {"log", 2, {"i:10", "i:1000"}},
    {"log", 1, {"i:0"}},
    {"ln", 1, {"r:-0.0"}},
    {"log2", 1, {"i:1024"}},
    {"exp", 1, {"i:1000"}},
    {"degrees", 1, {"t:3.141592653589793"}},
    {"radians", 1, {"i:180"}},
    {"atan2", 2, {"r:-0.0", "i:-1"}},
    {"atanh", 1, {"i:1"}},
    {"pi", 0, {NULL}},
};

static struct engine_value fixed_arg(const char *spec, uint8_t *buf)
{
    switch (spec[0]) {
    case 'i':
        return engine__value_int(strtoll(spec + 2, NULL, 10));
    case 'r':
        return engine__value_real(strtod(spec + 2, NULL));
    case 't':
        memcpy(buf, spec + 2, strlen(spec + 2));
        return engine__value_text(buf, strlen(spec + 2));
    case 'b':
        memcpy(buf, spec + 2, strlen(spec + 2));
        return engine__value_blob(buf, strlen(spec + 2));
    default:
        return engine__value_null();
    }
}

static void math_fixed_cases_match_sqlite(void **state)
{
    struct engine_value argv[2];
    struct oracle o;
    char sql[64];

    (void)state;
    oracle_open(&o);
    for (size_t c = 0; c < sizeof(fixed_cases) / sizeof(fixed_cases[0]); c++) {
        const struct fixed_case *f = &fixed_cases[c];
        sqlite3_stmt *stmt;
        for (int i = 0; i < f->argc; i++) {
            argv[i] = fixed_arg(f->args[i], o.scratch[i]);
        }
        sql_for(sql, sizeof(sql), f->name, f->argc);
        stmt = oracle_prepare(&o, sql);
        oracle_scalar(&o, stmt, f->name, f->argc, argv);
        sqlite3_finalize(stmt);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* ceil, floor and trunc return an INTEGER argument itself, typed INTEGER
 * (not REAL), also for INT64_MIN where a double would lose it. */
static void rounding_keeps_integers(void **state)
{
    static const char *const names[] = {"ceil", "ceiling", "floor", "trunc"};
    struct engine_value arg = engine__value_int(INT64_MIN), out;
    struct oracle o;

    (void)state;
    oracle_open(&o);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const struct engine_scalar_def *def =
            engine__scalar_lookup(names[i], strlen(names[i]));
        assert_non_null(def);
        assert_int_equal(def->fn(&o.ctx, 1, &arg, &out), 0);
        assert_int_equal(out.type, ENGINE_INTEGER);
        assert_true(out.u.i == INT64_MIN);
    }
    oracle_close(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(math_functions_match_sqlite_on_random_args),
        cmocka_unit_test(math_fixed_cases_match_sqlite),
        cmocka_unit_test(rounding_keeps_integers),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
