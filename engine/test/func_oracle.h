/* SPDX-License-Identifier: MIT
 *
 * func_oracle.h: what the engine_func differential tests share: random
 * values of every storage class with SQLite's edge cases, binding them to a
 * libsqlite3 statement, calling a function through our registry, and
 * comparing our result (value and type, or error message) with SQLite's.
 *
 * Method: the same arguments go to libsqlite3 3.40 (the oracle) and to our
 * function; any difference is printed with the seed and counted, and the
 * test fails if the count is not zero.
 */
#ifndef SINEW_ENGINE_TEST_FUNC_ORACLE_H
#define SINEW_ENGINE_TEST_FUNC_ORACLE_H

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "common_test.h"
#include "func.h"
#include "sqlite_value.h"

#define ORACLE_ARGS_MAX 8
#define ORACLE_REPORT_MAX 25

/* A test's SQLite handle, our arena and context, and the tally. */
struct oracle {
    sqlite3 *db;
    struct engine_arena arena;
    struct engine_func_context ctx;
    uint64_t random_state;
    char errmsg[256];
    uint8_t scratch[ORACLE_ARGS_MAX][64]; /* bytes of generated values */
    long compared;
    long mismatches;
};

static inline void oracle_open(struct oracle *o)
{
    memset(o, 0, sizeof(*o));
    assert_int_equal(sqlite3_open(":memory:", &o->db), SQLITE_OK);
    engine__arena_init(&o->arena);
    o->ctx.arena = &o->arena;
    o->ctx.collation = ENGINE_COLLATION_BINARY;
    o->ctx.random_state = &o->random_state;
    o->ctx.errmsg = o->errmsg;
    o->ctx.errmsg_size = sizeof(o->errmsg);
}

static inline void oracle_close(struct oracle *o)
{
    printf("compared=%ld mismatches=%ld\n", o->compared, o->mismatches);
    engine__arena_close(&o->arena);
    sqlite3_close(o->db);
}

static inline sqlite3_stmt *oracle_prepare(struct oracle *o, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(o->db, sql, -1, &stmt, NULL);

    if (rc != SQLITE_OK) {
        printf("prepare failed: %s: %s\n", sql, sqlite3_errmsg(o->db));
    }
    assert_int_equal(rc, SQLITE_OK);
    return stmt;
}

/* Writes a readable form of v (for mismatch reports). */
static inline void oracle_print_value(const struct engine_value *v)
{
    size_t i;

    switch (v->type) {
    case ENGINE_INTEGER:
        printf("%" PRId64, v->u.i);
        break;
    case ENGINE_FLOAT:
        printf("%.17g", v->u.r);
        break;
    case ENGINE_TEXT:
        printf("'%.*s'", (int)v->u.s.size, (const char *)v->u.s.bytes);
        break;
    case ENGINE_BLOB:
        printf("x'");
        for (i = 0; i < v->u.s.size; i++) {
            printf("%02x", v->u.s.bytes[i]);
        }
        printf("'");
        break;
    default:
        printf("NULL");
        break;
    }
}

/* Same type and value; reals bit for bit except that any two zeros
 * compare equal only when their signs agree. */
static inline bool oracle_same(const struct engine_value *a,
                               const struct engine_value *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case ENGINE_INTEGER:
        return a->u.i == b->u.i;
    case ENGINE_FLOAT:
        return a->u.r == b->u.r && signbit(a->u.r) == signbit(b->u.r);
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        return a->u.s.size == b->u.s.size &&
               (a->u.s.size == 0 ||
                memcmp(a->u.s.bytes, b->u.s.bytes, a->u.s.size) == 0);
    default:
        return true;
    }
}

/* Compares SQLite's step result (row or error) with ours (rc, out). */
static inline bool oracle_check(struct oracle *o, sqlite3_stmt *stmt,
                                int sqlite_rc, int rc,
                                const struct engine_value *out)
{
    o->compared++;
    if (sqlite_rc == SQLITE_ROW) {
        struct engine_value expected = oracle_column(stmt, 0);
        if (rc == 0 && oracle_same(&expected, out)) {
            return true;
        }
        if (o->mismatches < ORACLE_REPORT_MAX) {
            printf("  expected ");
            oracle_print_value(&expected);
            printf(" got rc=%d ", rc);
            if (rc == 0) {
                oracle_print_value(out);
            } else {
                printf("(%s)", o->errmsg);
            }
            printf("\n");
        }
    } else {
        const char *msg = sqlite3_errmsg(o->db);
        if (rc < 0 && strcmp(msg, o->errmsg) == 0) {
            return true;
        }
        if (o->mismatches < ORACLE_REPORT_MAX) {
            printf("  expected error '%s' got rc=%d '%s'\n", msg, rc,
                   rc < 0 ? o->errmsg : "");
        }
    }
    o->mismatches++;
    return false;
}

/* Runs stmt with args bound, and our scalar fn with the same args. */
static inline void oracle_scalar(struct oracle *o, sqlite3_stmt *stmt,
                                 const char *name, int argc,
                                 const struct engine_value *argv)
{
    const struct engine_scalar_def *def =
        engine__scalar_lookup(name, strlen(name));
    struct engine_value out = engine__value_null();
    int sqlite_rc, rc, i;

    assert_non_null(def);
    assert_true(engine__func_arity_ok(def->arg_min, def->arg_max, argc));
    sqlite3_reset(stmt);
    for (i = 0; i < argc; i++) {
        oracle_bind(stmt, i + 1, &argv[i]);
    }
    sqlite_rc = sqlite3_step(stmt);
    o->errmsg[0] = '\0';
    rc = def->fn(&o->ctx, argc, argv, &out);
    if (!oracle_check(o, stmt, sqlite_rc, rc, &out) &&
        o->mismatches <= ORACLE_REPORT_MAX) {
        printf("  in %s(", name);
        for (i = 0; i < argc; i++) {
            printf(i ? ", " : "");
            oracle_print_value(&argv[i]);
        }
        printf(")  [%s]\n", sqlite3_sql(stmt));
    }
    sqlite3_reset(stmt);
    engine__arena_reset(&o->arena);
}

/* ---- random values ---- */

static const char *const oracle_texts[] = {
    "",
    "a",
    "abc",
    "ABC",
    " abc ",
    "é",
    "日本",
    "x'y",
    "12",
    " 12 ",
    "1.5",
    "1e3",
    "-0",
    "0",
    "12abc",
    "%",
    "_",
    "a%b_c",
    "\"q\"",
    "aé日",
    "9223372036854775808",
    "-9223372036854775808",
    "0x1F",
    "  ",
    "1.0",
    "4.5e-1",
    "Ab Cd",
};

static const char oracle_alphabet[][4] = {
    "a", "b", "A", "B", " ", "'", "%", "_", "1", "0", ".", "é", "日", "x", "-",
};

/* Random text of up to max_chars characters drawn from oracle_alphabet. */
static inline struct engine_value
oracle_random_text(struct common_test_rng *r, uint8_t *buf, size_t max_chars)
{
    size_t n = (size_t)common_test_rng_below(r, max_chars + 1), size = 0, i;

    for (i = 0; i < n; i++) {
        const char *c = oracle_alphabet[common_test_rng_below(
            r, sizeof(oracle_alphabet) / sizeof(oracle_alphabet[0]))];
        memcpy(buf + size, c, strlen(c));
        size += strlen(c);
    }
    return engine__value_text(buf, size);
}

static inline struct engine_value oracle_random_int(struct common_test_rng *r)
{
    static const int64_t edges[] = {0,
                                    1,
                                    -1,
                                    INT64_MIN,
                                    INT64_MAX,
                                    INT64_MIN + 1,
                                    (int64_t)1 << 53,
                                    ((int64_t)1 << 53) + 1,
                                    4294967296,
                                    4294967297,
                                    -4294967295,
                                    2147483647};

    switch (common_test_rng_below(r, 4)) {
    case 0:
        return engine__value_int(
            edges[common_test_rng_below(r, sizeof(edges) / sizeof(edges[0]))]);
    case 1:
        return engine__value_int((int64_t)common_test_rng_next(r));
    default:
        return engine__value_int((int64_t)common_test_rng_below(r, 15) - 7);
    }
}

static inline struct engine_value oracle_random_real(struct common_test_rng *r)
{
    static const double edges[] = {0.0,
                                   -0.0,
                                   1.5,
                                   -2.5,
                                   0.5,
                                   -0.5,
                                   1e308,
                                   -1e308,
                                   5e-324,
                                   1e-300,
                                   0.1,
                                   2.675,
                                   1.005,
                                   123456.789,
                                   4503599627370497.0,
                                   9007199254740993.0,
                                   1e15,
                                   1e16,
                                   -1e20,
                                   9.2233720368547758e18,
                                   HUGE_VAL,
                                   -HUGE_VAL,
                                   0.49999999999999994};
    uint64_t bits;
    double d;

    switch (common_test_rng_below(r, 4)) {
    case 0:
        return engine__value_real(
            edges[common_test_rng_below(r, sizeof(edges) / sizeof(edges[0]))]);
    case 1:
        do {
            bits = common_test_rng_next(r);
            memcpy(&d, &bits, sizeof(d));
        } while (isnan(d));
        return engine__value_real(d);
    case 2:
        return engine__value_real(
            (double)((int64_t)common_test_rng_below(r, 20001) - 10000) /
            (double)(1 << common_test_rng_below(r, 8)));
    default:
        return engine__value_real(
            (double)((int64_t)common_test_rng_below(r, 2000001) - 1000000) /
            1000.0);
    }
}

/* A value of any storage class; text and blob bytes go to buf (64). */
static inline struct engine_value oracle_random_value(struct common_test_rng *r,
                                                      uint8_t *buf)
{
    size_t i, n;
    const char *t;

    switch (common_test_rng_below(r, 9)) {
    case 0:
        return engine__value_null();
    case 1:
    case 2:
        return oracle_random_int(r);
    case 3:
        return oracle_random_real(r);
    case 4:
        t = oracle_texts[common_test_rng_below(r, sizeof(oracle_texts) /
                                                      sizeof(oracle_texts[0]))];
        memcpy(buf, t, strlen(t));
        return engine__value_text(buf, strlen(t));
    case 5:
    case 6:
        return oracle_random_text(r, buf, 8);
    case 7:
        n = (size_t)common_test_rng_below(r, 6);
        for (i = 0; i < n; i++) {
            buf[i] = (uint8_t)common_test_rng_next(r);
        }
        return engine__value_blob(buf, n);
    default:
        t = oracle_texts[common_test_rng_below(r, sizeof(oracle_texts) /
                                                      sizeof(oracle_texts[0]))];
        memcpy(buf, t, strlen(t));
        return engine__value_blob(buf, strlen(t));
    }
}

#endif /* SINEW_ENGINE_TEST_FUNC_ORACLE_H */
