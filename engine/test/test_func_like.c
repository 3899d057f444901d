/* SPDX-License-Identifier: MIT
 *
 * test_func_like.c: the LIKE and GLOB matchers against libsqlite3 3.40.
 *
 * Method: seeded random patterns and texts over an alphabet dense in
 * wildcards ('%', '_', '*', '?', '[', ']', '^', '-'), ASCII letters of
 * both cases, multi-byte characters and escape candidates are compared
 * with SQLite as like(p, x), glob(p, x), like(p, x, esc) through our
 * registry, as "x LIKE p" with PRAGMA case_sensitive_like on and off, and
 * as "x GLOB p" through engine__like_match / engine__glob_match directly.
 * Texts are often derived from the pattern (wildcards replaced) so that
 * matches are common, not only misses.
 */
#include "func_oracle.h"

#define ROUNDS 6000

static const char like_alphabet[][4] = {
    "a", "b",  "A", "B", "%",  "_", "*", "?", "[", "]", "^",
    "-", "\\", "é", "É", "日", "x", "z", "%", "_", "[",
};

static size_t random_pattern(struct common_test_rng *rng, uint8_t *buf)
{
    size_t n = (size_t)common_test_rng_below(rng, 9), size = 0, i;

    for (i = 0; i < n; i++) {
        const char *c = like_alphabet[common_test_rng_below(
            rng, sizeof(like_alphabet) / sizeof(like_alphabet[0]))];
        memcpy(buf + size, c, strlen(c));
        size += strlen(c);
    }
    return size;
}

/* A text shaped like the pattern: wildcards become random characters,
 * other characters are kept (or flipped in case) most of the time. */
static size_t text_from(struct common_test_rng *rng, const uint8_t *pattern,
                        size_t size, uint8_t *buf)
{
    size_t i, out = 0;

    if (common_test_rng_below(rng, 4) == 0) {
        return random_pattern(rng, buf);
    }
    for (i = 0; i < size; i++) {
        uint8_t c = pattern[i];
        uint64_t roll = common_test_rng_below(rng, 10);
        if (c == '%' || c == '*') {
            size_t k = (size_t)common_test_rng_below(rng, 3);
            while (k-- > 0) {
                buf[out++] = (uint8_t)('a' + common_test_rng_below(rng, 3));
            }
        } else if (c == '_' || c == '?') {
            buf[out++] = roll < 8 ? 'b' : c;
        } else if (roll == 0) {
            continue;
        } else {
            buf[out++] = roll == 1 && c >= 'a' && c <= 'z'
                             ? (uint8_t)(c - 'a' + 'A')
                             : c;
        }
    }
    return out;
}

static const char *const escapes[] = {"\\", "%", "_", "a", "é", "[", "", "ab"};

static void like_and_glob_match_sqlite_through_registry(void **state)
{
    struct common_test_rng rng;
    struct engine_value argv[3];
    sqlite3_stmt *like2, *like3, *glob;
    struct oracle o;
    int round;

    (void)state;
    common_test_rng_seed(&rng, "like_and_glob_match_sqlite_through_registry");
    oracle_open(&o);
    like2 = oracle_prepare(&o, "SELECT like(?1, ?2)");
    like3 = oracle_prepare(&o, "SELECT like(?1, ?2, ?3)");
    glob = oracle_prepare(&o, "SELECT glob(?1, ?2)");
    for (round = 0; round < ROUNDS; round++) {
        size_t p = random_pattern(&rng, o.scratch[0]);
        size_t t = text_from(&rng, o.scratch[0], p, o.scratch[1]);
        const char *esc = escapes[common_test_rng_below(
            &rng, sizeof(escapes) / sizeof(escapes[0]))];
        argv[0] = engine__value_text(o.scratch[0], p);
        argv[1] = engine__value_text(o.scratch[1], t);
        argv[2] = engine__value_text(esc, strlen(esc));
        oracle_scalar(&o, like2, "like", 2, argv);
        oracle_scalar(&o, like3, "like", 3, argv);
        oracle_scalar(&o, glob, "glob", 2, argv);
    }
    sqlite3_finalize(like2);
    sqlite3_finalize(like3);
    sqlite3_finalize(glob);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* Runs "SELECT ?1 op ?2" and compares with our direct result. */
static void check_operator(struct oracle *o, sqlite3_stmt *stmt,
                           const struct engine_value *text,
                           const struct engine_value *pattern, bool ours)
{
    struct engine_value result = engine__value_int(ours);

    sqlite3_reset(stmt);
    oracle_bind(stmt, 1, text);
    oracle_bind(stmt, 2, pattern);
    if (!oracle_check(o, stmt, sqlite3_step(stmt), 0, &result) &&
        o->mismatches <= ORACLE_REPORT_MAX) {
        printf("  in %s with ", sqlite3_sql(stmt));
        oracle_print_value(text);
        printf(", ");
        oracle_print_value(pattern);
        printf("\n");
    }
    sqlite3_reset(stmt);
}

static void like_operator_matches_sqlite_in_both_cases(void **state)
{
    struct common_test_rng rng;
    struct engine_value text, pattern;
    sqlite3_stmt *like, *glob;
    struct oracle o;
    int round, sensitive;

    (void)state;
    common_test_rng_seed(&rng, "like_operator_matches_sqlite_in_both_cases");
    oracle_open(&o);
    for (sensitive = 0; sensitive < 2; sensitive++) {
        assert_int_equal(sqlite3_exec(o.db,
                                      sensitive
                                          ? "PRAGMA case_sensitive_like=ON"
                                          : "PRAGMA case_sensitive_like=OFF",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        like = oracle_prepare(&o, "SELECT ?1 LIKE ?2");
        glob = oracle_prepare(&o, "SELECT ?1 GLOB ?2");
        for (round = 0; round < ROUNDS; round++) {
            size_t p = random_pattern(&rng, o.scratch[0]);
            size_t t = text_from(&rng, o.scratch[0], p, o.scratch[1]);
            pattern = engine__value_text(o.scratch[0], p);
            text = engine__value_text(o.scratch[1], t);
            check_operator(&o, like, &text, &pattern,
                           engine__like_match(o.scratch[0], p, o.scratch[1], t,
                                              0, sensitive == 1));
            check_operator(
                &o, glob, &text, &pattern,
                engine__glob_match(o.scratch[0], p, o.scratch[1], t));
        }
        sqlite3_finalize(like);
        sqlite3_finalize(glob);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* Fixed cases: the documented rules and every mismatch found. */
static void like_glob_fixed_cases(void **state)
{
    (void)state;
    assert_true(engine__like_match((const uint8_t *)"a%", 2,
                                   (const uint8_t *)"ABC", 3, 0, false));
    assert_false(engine__like_match((const uint8_t *)"a%", 2,
                                    (const uint8_t *)"ABC", 3, 0, true));
    assert_true(engine__like_match((const uint8_t *)"_", 1,
                                   (const uint8_t *)"é", 2, 0, false));
    assert_false(engine__like_match((const uint8_t *)"é", 2,
                                    (const uint8_t *)"É", 2, 0, false));
    assert_true(engine__like_match((const uint8_t *)"a\\%", 3,
                                   (const uint8_t *)"a%", 2, '\\', false));
    assert_false(engine__like_match((const uint8_t *)"a\\%", 3,
                                    (const uint8_t *)"ab", 2, '\\', false));
    assert_true(engine__glob_match((const uint8_t *)"[]a]", 4,
                                   (const uint8_t *)"]", 1));
    assert_true(engine__glob_match((const uint8_t *)"[^a-c]*", 7,
                                   (const uint8_t *)"dog", 3));
    assert_false(engine__glob_match((const uint8_t *)"[a-c", 4,
                                    (const uint8_t *)"a", 1));
    assert_true(engine__glob_match((const uint8_t *)"*[日]", 6,
                                   (const uint8_t *)"x日", 4));
    assert_true(engine__like_match((const uint8_t *)"a%", 2,
                                   (const uint8_t *)"a\0b", 3, 0, false));
    assert_false(engine__like_match((const uint8_t *)"a_", 2,
                                    (const uint8_t *)"a\0b", 3, 0, false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(like_glob_fixed_cases),
        cmocka_unit_test(like_and_glob_match_sqlite_through_registry),
        cmocka_unit_test(like_operator_matches_sqlite_in_both_cases),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
