/* SPDX-License-Identifier: MIT
 *
 * test_value_oracle.h: what the value-layer tests share. They check
 * engine/src/value.h against C SQLite 3.40 in-process: the same values are
 * bound to a libsqlite3 statement and given to our functions, and the
 * results must agree in storage class and in every bit (REAL) or byte
 * (TEXT, BLOB).
 *
 *   oracle_*  open :memory:, prepare, bind an engine_value, read a column
 *             back as an engine_value;
 *   gen_*     seeded random values of every storage class, weighted
 *             towards the edges (0, -0.0, +-1, INT64 limits, 2^53 +- 1,
 *             huge, tiny and subnormal doubles, infinities, numeric-looking
 *             text, blobs), allocated in an arena the caller resets;
 *   value_*   equality and printing for failure messages.
 */
#ifndef SINEW_ENGINE_TEST_VALUE_ORACLE_H
#define SINEW_ENGINE_TEST_VALUE_ORACLE_H

#include <float.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

#include "common_test.h"
#include "sqlite_value.h"
#include "value.h"

/* ---- libsqlite3 ---- */

static inline sqlite3 *oracle_open(void)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    return db;
}

static inline sqlite3_stmt *oracle_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);

    if (rc != SQLITE_OK) {
        fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
    }
    return stmt;
}

static inline void oracle_exec(sqlite3 *db, const char *sql)
{
    char *message = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
        fail_msg("exec %s: %s", sql, message);
    }
}

/* Steps stmt to its single row. */
static inline void oracle_step_row(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);

    if (rc != SQLITE_ROW) {
        fail_msg("step: %d %s", rc, sqlite3_errmsg(sqlite3_db_handle(stmt)));
    }
}

static inline void oracle_reset(sqlite3_stmt *stmt)
{
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
}

/* ---- values ---- */

static inline bool value_equal(const struct engine_value *a,
                               const struct engine_value *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case ENGINE_INTEGER:
        return a->u.i == b->u.i;
    case ENGINE_FLOAT:
        return memcmp(&a->u.r, &b->u.r, sizeof(double)) == 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        return a->u.s.size == b->u.s.size &&
               (a->u.s.size == 0 ||
                memcmp(a->u.s.bytes, b->u.s.bytes, a->u.s.size) == 0);
    default:
        return true;
    }
}

/* Writes a readable form of v (type, value, bytes escaped) to buf. */
static inline const char *value_describe(const struct engine_value *v,
                                         char *buf, size_t size)
{
    size_t n = 0;

    switch (v->type) {
    case ENGINE_INTEGER:
        snprintf(buf, size, "INTEGER %" PRId64, v->u.i);
        return buf;
    case ENGINE_FLOAT:
        snprintf(buf, size, "REAL %.17g (%a)", v->u.r, v->u.r);
        return buf;
    case ENGINE_NULL:
        snprintf(buf, size, "NULL");
        return buf;
    default:
        break;
    }
    n = (size_t)snprintf(buf, size, "%s '",
                         v->type == ENGINE_TEXT ? "TEXT" : "BLOB");
    for (size_t i = 0; i < v->u.s.size && n + 6 < size; i++) {
        uint8_t c = v->u.s.bytes[i];
        if (c >= 0x20 && c < 0x7f) {
            buf[n++] = (char)c;
        } else {
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
        }
    }
    snprintf(buf + n, size - n, "'");
    return buf;
}

/* Fails the test unless ours equals the oracle's, naming what. */
#define VALUE_ASSERT_EQUAL(ours, oracle, ...)                                  \
    do {                                                                       \
        if (!value_equal((ours), (oracle))) {                                  \
            char value_buf_[2][200];                                           \
            print_message(__VA_ARGS__);                                        \
            fail_msg("ours %s, sqlite %s",                                     \
                     value_describe((ours), value_buf_[0], 200),               \
                     value_describe((oracle), value_buf_[1], 200));            \
        }                                                                      \
    } while (0)

/* ---- random values ---- */

static inline double gen_bits_double(struct common_test_rng *rng)
{
    for (;;) {
        uint64_t bits = common_test_rng_next(rng);
        double r;
        memcpy(&r, &bits, sizeof(r));
        if (!isnan(r)) {
            return r;
        }
    }
}

static inline int64_t gen_int(struct common_test_rng *rng)
{
    static const int64_t edges[] = {0,
                                    1,
                                    -1,
                                    2,
                                    -2,
                                    7,
                                    10,
                                    63,
                                    64,
                                    65,
                                    -64,
                                    -65,
                                    INT64_MAX,
                                    INT64_MIN,
                                    INT64_MAX - 1,
                                    INT64_MIN + 1,
                                    (INT64_C(1) << 53) + 1,
                                    (INT64_C(1) << 53) - 1,
                                    -((INT64_C(1) << 53) + 1),
                                    INT64_C(1) << 53,
                                    INT64_C(1) << 31,
                                    INT64_C(3037000499),
                                    INT64_C(-3037000500),
                                    INT64_C(2251799813685248),
                                    INT64_C(-2251799813685248),
                                    INT64_C(1000000000000000000)};
    uint64_t pick = common_test_rng_below(rng, 4);

    if (pick == 0) {
        return edges[common_test_rng_below(rng,
                                           sizeof(edges) / sizeof(edges[0]))];
    }
    if (pick == 1) {
        return (int64_t)common_test_rng_below(rng, 2001) - 1000;
    }
    if (pick == 2) {
        return (int64_t)(common_test_rng_next(rng) >>
                         common_test_rng_below(rng, 64));
    }
    return (int64_t)common_test_rng_next(rng);
}

static inline double gen_real(struct common_test_rng *rng)
{
    static const double edges[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   0.5,
                                   -0.5,
                                   1.5,
                                   2.5,
                                   -2.5,
                                   0.1,
                                   1e15,
                                   1e16,
                                   1e20,
                                   -1e20,
                                   1e-5,
                                   1e-4,
                                   9223372036854775808.0,
                                   -9223372036854775808.0,
                                   9223372036854774784.0,
                                   9007199254740992.0,
                                   9007199254740993.0,
                                   4503599627370496.5,
                                   2251799813685248.0,
                                   1e308,
                                   DBL_MAX,
                                   -DBL_MAX,
                                   DBL_MIN,
                                   4.9e-324,
                                   -4.9e-324,
                                   1e-310,
                                   INFINITY,
                                   -INFINITY,
                                   106086564139.8125,
                                   0.3,
                                   100.0,
                                   3.0};
    uint64_t pick = common_test_rng_below(rng, 5);

    if (pick == 0) {
        return edges[common_test_rng_below(rng,
                                           sizeof(edges) / sizeof(edges[0]))];
    }
    if (pick == 1) {
        return (double)gen_int(rng);
    }
    if (pick == 2) {
        return ((double)common_test_rng_below(rng, 200001) - 100000.0) /
               (double)(1 << common_test_rng_below(rng, 12));
    }
    if (pick == 3) {
        return ((double)common_test_rng_below(rng, 2000001) - 1000000.0) *
               pow(10.0, (double)common_test_rng_below(rng, 60) - 30.0);
    }
    return gen_bits_double(rng);
}

/* Text that looks like a number, or nearly: spaces, signs, digits,
 * points, exponents, junk suffixes, hex. Written into buf (size >= 64). */
static inline size_t gen_number_text(struct common_test_rng *rng, char *buf)
{
    static const char *const fixed[] = {
        "  12  ",
        "1e5",
        "0x1A",
        "0x10",
        "-",
        ".",
        "1.",
        ".5",
        "+3",
        "12abc",
        "",
        " ",
        "3.0",
        "1e3",
        " 12 ",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "1e400",
        "-1e400",
        "1e-400",
        "1e",
        "1e+",
        "1ex",
        "1.5e",
        "12.5e5x",
        "\t\n\v\f\r7\t",
        "-0",
        "-0.0",
        "+.5x",
        "00000000000000000000012",
        "1.0e+20",
        "Inf",
        "NaN",
        "1,5",
        "١٢",
        "0000000000000000000009223372036854775807",
        "12 x",
        "\xc2\xa0"
        "5",
        "1e2147483648",
        "123456789012345678901234567890e-10",
        "5\0"
        "7"};
    static const char *const pieces[] = {" ",  "-",  "+",  ".", "e", "E",
                                         "x",  "0",  "00", "1", "9", "12",
                                         "e-", "e+", "\t", "a"};
    uint64_t pick = common_test_rng_below(rng, 4);
    size_t n = 0;

    if (pick == 0) {
        size_t i = common_test_rng_below(rng, sizeof(fixed) / sizeof(*fixed));
        n = strlen(fixed[i]);
        memcpy(buf, fixed[i], n);
        if (i + 1 == sizeof(fixed) / sizeof(*fixed)) {
            n = 3; /* "5\0007": a NUL inside */
        }
        return n;
    }
    if (pick == 1) {
        return (size_t)snprintf(buf, 64, "%s%" PRId64 "%s",
                                common_test_rng_below(rng, 2) ? " " : "",
                                gen_int(rng),
                                common_test_rng_below(rng, 3) ? "" : " ");
    }
    if (pick == 2) {
        return (size_t)snprintf(buf, 64, "%.*g",
                                (int)common_test_rng_below(rng, 18) + 1,
                                gen_real(rng));
    }
    for (uint64_t k = common_test_rng_below(rng, 6) + 1; k > 0; k--) {
        const char *piece = pieces[common_test_rng_below(
            rng, sizeof(pieces) / sizeof(*pieces))];
        size_t len = strlen(piece);
        memcpy(buf + n, piece, len);
        n += len;
    }
    return n;
}

/* A value of any storage class; TEXT and BLOB bytes live in arena. */
static inline struct engine_value gen_value(struct common_test_rng *rng,
                                            struct engine_arena *arena)
{
    static const char alphabet[] = "aAbBzZ _.-+e0123456789x\x7f\xc3\xa9";
    char buf[64];
    size_t n;

    switch (common_test_rng_below(rng, 8)) {
    case 0:
        return engine__value_null();
    case 1:
    case 2:
        return engine__value_int(gen_int(rng));
    case 3:
    case 4:
        return engine__value_real(gen_real(rng));
    case 5:
        n = gen_number_text(rng, buf);
        return engine__value_text(engine__arena_memdup(arena, buf, n), n);
    case 6:
        n = common_test_rng_below(rng, 8);
        for (size_t i = 0; i < n; i++) {
            buf[i] = alphabet[common_test_rng_below(rng, sizeof(alphabet) - 1)];
        }
        return engine__value_text(engine__arena_memdup(arena, buf, n), n);
    default:
        n = common_test_rng_below(rng, 3) == 0 ? gen_number_text(rng, buf)
                                               : common_test_rng_below(rng, 6);
        if (common_test_rng_below(rng, 3) != 0) {
            for (size_t i = 0; i < n; i++) {
                buf[i] = (char)common_test_rng_below(rng, 256);
            }
        }
        return engine__value_blob(engine__arena_memdup(arena, buf, n), n);
    }
}

#endif /* SINEW_ENGINE_TEST_VALUE_ORACLE_H */
