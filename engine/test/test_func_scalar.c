/* SPDX-License-Identifier: MIT
 *
 * test_func_scalar.c: every deterministic scalar built-in against
 * libsqlite3 3.40.
 *
 * Method: for each function and argument count, thousands of seeded random
 * argument tuples (every storage class, with edges: NULL, 0, -0.0,
 * INT64_MIN/MAX, 2^53 + 1, huge and tiny reals, '', 'é', '日本', numeric
 * text, blobs) are bound to "SELECT f(?1, ...)" in SQLite and passed to
 * our function through the registry; results must agree in type and value,
 * and errors in message. min, max and nullif also run under NOCASE and
 * RTRIM. Fixed cases pin the regressions found and the functions SQLite
 * 3.40 lacks (unhex) or whose values cannot match (random, randomblob).
 */
#include "func_oracle.h"

struct scalar_case {
    const char *name;
    int argc;
};

static const struct scalar_case random_cases[] = {
    {"abs", 1},      {"char", 0},     {"char", 1},   {"char", 3},
    {"coalesce", 2}, {"coalesce", 3}, {"glob", 2},   {"hex", 1},
    {"ifnull", 2},   {"iif", 3},      {"instr", 2},  {"length", 1},
    {"like", 2},     {"like", 3},     {"lower", 1},  {"ltrim", 1},
    {"ltrim", 2},    {"max", 2},      {"max", 3},    {"min", 2},
    {"min", 3},      {"nullif", 2},   {"quote", 1},  {"replace", 3},
    {"round", 1},    {"round", 2},    {"rtrim", 1},  {"rtrim", 2},
    {"sign", 1},     {"substr", 2},   {"substr", 3}, {"substring", 3},
    {"trim", 1},     {"trim", 2},     {"typeof", 1}, {"unicode", 1},
    {"upper", 1},    {"zeroblob", 1}, {"printf", 1}, {"format", 2},
};

#define RANDOM_ROUNDS 2500

static void sql_for(char *sql, size_t size, const char *name, int argc,
                    const char *collate)
{
    int n = snprintf(sql, size, "SELECT %s(", name), i;

    for (i = 0; i < argc; i++) {
        n += snprintf(sql + n, size - (size_t)n, "%s?%d%s", i ? ", " : "",
                      i + 1, i == 0 ? collate : "");
    }
    snprintf(sql + n, size - (size_t)n, ")");
}

static void run_random(struct oracle *o, struct common_test_rng *rng,
                       const char *name, int argc, const char *collate)
{
    struct engine_value argv[ORACLE_ARGS_MAX];
    sqlite3_stmt *stmt;
    char sql[128];
    int round, i;

    sql_for(sql, sizeof(sql), name, argc, collate);
    stmt = oracle_prepare(o, sql);
    for (round = 0; round < RANDOM_ROUNDS; round++) {
        for (i = 0; i < argc; i++) {
            argv[i] = oracle_random_value(rng, o->scratch[i]);
        }
        oracle_scalar(o, stmt, name, argc, argv);
    }
    sqlite3_finalize(stmt);
}

static void scalar_matches_sqlite_on_random_args(void **state)
{
    struct common_test_rng rng;
    struct oracle o;
    size_t c;

    (void)state;
    common_test_rng_seed(&rng, "scalar_matches_sqlite_on_random_args");
    oracle_open(&o);
    for (c = 0; c < sizeof(random_cases) / sizeof(random_cases[0]); c++) {
        run_random(&o, &rng, random_cases[c].name, random_cases[c].argc, "");
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

static void min_max_nullif_match_sqlite_under_collations(void **state)
{
    static const char *const names[] = {"min", "max", "nullif"};
    static const char *const collates[] = {" COLLATE NOCASE", " COLLATE RTRIM"};
    static const enum engine_collation collations[] = {ENGINE_COLLATION_NOCASE,
                                                       ENGINE_COLLATION_RTRIM};
    struct common_test_rng rng;
    struct oracle o;
    size_t n, c;

    (void)state;
    common_test_rng_seed(&rng, "min_max_nullif_match_sqlite_under_collations");
    oracle_open(&o);
    for (c = 0; c < 2; c++) {
        o.ctx.collation = collations[c];
        for (n = 0; n < 3; n++) {
            run_random(&o, &rng, names[n], 2, collates[c]);
        }
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* A fixed argument list: "i:5", "r:1.5", "t:abc", "b:616263", "n". */
static struct engine_value parse_arg(const char *spec, uint8_t *buf)
{
    size_t i, n;

    switch (spec[0]) {
    case 'i':
        return engine__value_int(strtoll(spec + 2, NULL, 10));
    case 'r':
        return engine__value_real(strtod(spec + 2, NULL));
    case 't':
        memcpy(buf, spec + 2, strlen(spec + 2));
        return engine__value_text(buf, strlen(spec + 2));
    case 'b':
        n = strlen(spec + 2) / 2;
        for (i = 0; i < n; i++) {
            unsigned byte;
            sscanf(spec + 2 + 2 * i, "%2x", &byte);
            buf[i] = (uint8_t)byte;
        }
        return engine__value_blob(buf, n);
    default:
        return engine__value_null();
    }
}

struct fixed_case {
    const char *name;
    int argc;
    const char *args[3];
};

/* Edges and every mismatch the random runs found, as regression cases. */
static const struct fixed_case fixed_cases[] = {
    {"abs", 1, {"i:-9223372036854775808"}},
    {"abs", 1, {"r:-0.0"}},
    {"abs", 1, {"t:-5"}},
    {"zeroblob", 1, {"i:1000000001"}},
    {"zeroblob", 1, {"i:-3"}},
    {"round", 2, {"r:2.675", "i:2"}},
    {"round", 2, {"r:1.005", "i:2"}},
    {"round", 2, {"r:-2.5", "i:-3"}},
    {"round", 1, {"r:0.49999999999999994"}},
    {"round", 1, {"r:9007199254740993.0"}},
    {"round", 2, {"r:123456.789", "i:4294967298"}},
    {"substr", 3, {"t:日本語", "i:-2", "i:1"}},
    {"substr", 3, {"t:hello", "i:0", "i:2"}},
    {"substr", 3, {"t:hello", "i:3", "i:-2"}},
    {"substr", 3, {"b:0102030405", "i:-2", "i:5"}},
    {"substr", 2, {"b:", "i:1"}},
    {"substr", 2, {"t:hello", "i:4294967298"}},
    {"length", 1, {"r:1e100"}},
    {"upper", 1, {"r:1e100"}},
    {"instr", 2, {"t:aé日b", "t:b"}},
    {"instr", 2, {"b:61c3a962", "t:b"}},
    {"replace", 3, {"i:5", "t:", "n"}},
    {"replace", 3, {"t:abc", "b:00", "t:z"}},
    {"trim", 2, {"t:éaé", "t:é"}},
    {"char", 3, {"i:-1", "i:1114112", "i:55296"}},
    {"unicode", 1, {"b:eda080"}},
    {"quote", 1, {"r:0.1"}},
    {"quote", 1, {"r:0.3333333333333333"}},
    {"quote", 1, {"r:1e999"}},
    {"quote", 1, {"b:00ff"}},
    {"hex", 1, {"n"}},
    {"like", 3, {"t:a%", "t:a%", "t:%"}},
    {"like", 3, {"t:a", "t:a", "t:ab"}},
    {"like", 3, {"t:a", "t:a", "t:"}},
    {"min", 2, {"i:1", "r:1.0"}},
    {"max", 2, {"i:1", "r:1.0"}},
    {"sign", 1, {"t: 5 "}},
    {"sign", 1, {"t:5x"}},
    {"replace", 3, {"b:5f", "t:", "t:"}},
    {"glob", 2, {"b:2a", "n"}},
    {"like", 2, {"t:%", "b:61"}},
    {"printf", 1, {"t:"}},
    {"printf", 1, {"t:%n"}},
    {"printf", 1, {"t:%5n"}},
    {"printf", 2, {"t:%s", "t:"}},
    {"printf", 1, {"t:%T"}},
};

static void scalar_fixed_cases_match_sqlite(void **state)
{
    struct engine_value argv[3];
    struct oracle o;
    size_t c;
    char sql[128];
    int i;

    (void)state;
    oracle_open(&o);
    for (c = 0; c < sizeof(fixed_cases) / sizeof(fixed_cases[0]); c++) {
        const struct fixed_case *f = &fixed_cases[c];
        sqlite3_stmt *stmt;
        for (i = 0; i < f->argc; i++) {
            argv[i] = parse_arg(f->args[i], o.scratch[i]);
        }
        sql_for(sql, sizeof(sql), f->name, f->argc, "");
        stmt = oracle_prepare(&o, sql);
        oracle_scalar(&o, stmt, f->name, f->argc, argv);
        sqlite3_finalize(stmt);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

static int call(struct oracle *o, const char *name, int argc,
                const struct engine_value *argv, struct engine_value *out)
{
    const struct engine_scalar_def *def =
        engine__scalar_lookup(name, strlen(name));

    assert_non_null(def);
    assert_true(engine__func_arity_ok(def->arg_min, def->arg_max, argc));
    return def->fn(&o->ctx, argc, argv, out);
}

static void expect_unhex(struct oracle *o, const char *hex, const char *pass,
                         const char *expected, size_t expected_size)
{
    struct engine_value argv[2], out;

    argv[0] = engine__value_text(hex, strlen(hex));
    argv[1] =
        pass ? engine__value_text(pass, strlen(pass)) : engine__value_null();
    assert_int_equal(call(o, "unhex", 2, argv, &out), 0);
    if (expected == NULL) {
        assert_int_equal(out.type, ENGINE_NULL);
        return;
    }
    assert_int_equal(out.type, ENGINE_BLOB);
    assert_int_equal(out.u.s.size, expected_size);
    assert_memory_equal(out.u.s.bytes, expected, expected_size);
}

/* unhex() is 3.41's: expected values from lang_corefunc.html#unhex. */
static void unhex_follows_sqlite_docs(void **state)
{
    struct engine_value arg, out;
    struct oracle o;

    (void)state;
    oracle_open(&o);
    expect_unhex(&o, "616263", "", "abc", 3);
    expect_unhex(&o, "6A6b", "", "jk", 2);
    expect_unhex(&o, "", "", "", 0);
    expect_unhex(&o, "61 62-63", " -", "abc", 3);
    expect_unhex(&o, "61 62", "", NULL, 0);
    expect_unhex(&o, "6 162", " ", NULL, 0);
    expect_unhex(&o, "616", "", NULL, 0);
    expect_unhex(&o, "61é62", "é", "ab", 2);
    expect_unhex(&o, "61x62", "0x", "ab", 2);
    expect_unhex(&o, "6x162", "0x", NULL, 0);
    expect_unhex(&o, "61", NULL, NULL, 0);
    arg = engine__value_text("4142", 4);
    assert_int_equal(call(&o, "unhex", 1, &arg, &out), 0);
    assert_int_equal(out.type, ENGINE_BLOB);
    assert_memory_equal(out.u.s.bytes, "AB", 2);
    arg = engine__value_null();
    assert_int_equal(call(&o, "UNHEX", 1, &arg, &out), 0);
    assert_int_equal(out.type, ENGINE_NULL);
    oracle_close(&o);
}

/* random() and randomblob(): types, ranges, sizes and determinism; their
 * values cannot match SQLite's. */
static void random_functions_are_seeded_and_typed(void **state)
{
    struct engine_value arg, out, first;
    struct oracle o;
    int i;

    (void)state;
    oracle_open(&o);
    o.random_state = 42;
    assert_int_equal(call(&o, "random", 0, NULL, &first), 0);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(call(&o, "random", 0, NULL, &out), 0);
        assert_int_equal(out.type, ENGINE_INTEGER);
        assert_true(out.u.i != INT64_MIN);
    }
    o.random_state = 42;
    assert_int_equal(call(&o, "random", 0, NULL, &out), 0);
    assert_true(out.u.i == first.u.i);
    arg = engine__value_int(-5);
    assert_int_equal(call(&o, "randomblob", 1, &arg, &out), 0);
    assert_int_equal(out.type, ENGINE_BLOB);
    assert_int_equal(out.u.s.size, 1);
    arg = engine__value_int(37);
    assert_int_equal(call(&o, "randomblob", 1, &arg, &out), 0);
    assert_int_equal(out.u.s.size, 37);
    arg = engine__value_int(1000000001);
    assert_int_equal(call(&o, "randomblob", 1, &arg, &out), ENGINE_ETOOBIG);
    assert_string_equal(o.errmsg, "string or blob too big");
    oracle_close(&o);
}

/* replace() whose result would pass ENGINE_MAX_LENGTH fails before it
 * allocates. */
static void replace_too_big_fails(void **state)
{
    static const size_t size = 1000000;
    struct engine_value argv[3], out;
    struct oracle o;
    char *text = common_malloc(size), *rep = common_malloc(1001);

    (void)state;
    oracle_open(&o);
    memset(text, 'a', size);
    memset(rep, 'b', 1001);
    argv[0] = engine__value_text(text, size);
    argv[1] = engine__value_text("a", 1);
    argv[2] = engine__value_text(rep, 1001);
    assert_int_equal(call(&o, "replace", 3, argv, &out), ENGINE_ETOOBIG);
    assert_string_equal(o.errmsg, "string or blob too big");
    argv[0] = engine__value_text(text, 1000);
    assert_int_equal(call(&o, "replace", 3, argv, &out), 0);
    assert_int_equal(out.u.s.size, 1001000);
    common_free(text);
    common_free(rep);
    oracle_close(&o);
}

static void registry_lookup_and_arity(void **state)
{
    const struct engine_scalar_def *def;
    struct engine_func_context ctx = {0};
    struct engine_value out;

    (void)state;
    def = engine__scalar_lookup("SubStr", 6);
    assert_non_null(def);
    assert_string_equal(def->name, "substr");
    assert_null(engine__scalar_lookup("substrx", 7));
    assert_null(engine__scalar_lookup("subst", 5));
    assert_non_null(engine__scalar_lookup("lengthXX", 6));
    assert_null(engine__scalar_lookup("sum", 3));
    assert_non_null(engine__aggregate_lookup("GROUP_CONCAT", 12));
    assert_null(engine__aggregate_lookup("length", 6));
    assert_true(engine__func_arity_ok(2, -1, 9));
    assert_false(engine__func_arity_ok(2, 3, 4));
    assert_false(engine__func_arity_ok(1, 1, 0));
    assert_false(engine__scalar_lookup("random", 6)->deterministic);
    ctx.changes = 3;
    ctx.total_changes = 9;
    ctx.last_insert_rowid = -4;
    assert_int_equal(
        engine__scalar_lookup("changes", 7)->fn(&ctx, 0, NULL, &out), 0);
    assert_int_equal(out.u.i, 3);
    engine__scalar_lookup("total_changes", 13)->fn(&ctx, 0, NULL, &out);
    assert_int_equal(out.u.i, 9);
    engine__scalar_lookup("last_insert_rowid", 17)->fn(&ctx, 0, NULL, &out);
    assert_int_equal(out.u.i, -4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_lookup_and_arity),
        cmocka_unit_test(scalar_fixed_cases_match_sqlite),
        cmocka_unit_test(scalar_matches_sqlite_on_random_args),
        cmocka_unit_test(min_max_nullif_match_sqlite_under_collations),
        cmocka_unit_test(unhex_follows_sqlite_docs),
        cmocka_unit_test(random_functions_are_seeded_and_typed),
        cmocka_unit_test(replace_too_big_fails),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
