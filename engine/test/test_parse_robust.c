/* SPDX-License-Identifier: MIT
 *
 * test_parse_robust.c: the parser on hostile input.
 *
 * Goal: any bytes give a parse tree or a clean error (never a crash, a
 * hang, or a read past size), and deep nesting is refused with SQLite's
 * "Expression tree is too large" instead of exhausting the stack.
 *
 * Method: 20,000 seeded inputs (replay with SINEW_TEST_SEED): random bytes,
 * random tokens glued together, and mutations (bytes flipped, inserted,
 * deleted, spliced) of valid statements. Each input sits in a heap block
 * of exactly its size so the sanitizers catch over-reads. Inputs the
 * fuzzer (fuzz_parse.c) found crashing are kept as regression cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ast.h"
#include "common_test.h"

static const char *const seeds[] = {
    "SELECT a, b + 1 AS c FROM t WHERE a > 1 ORDER BY b DESC LIMIT 3",
    "SELECT count(*) FILTER (WHERE a) FROM t GROUP BY b HAVING 1",
    "SELECT CASE a WHEN 1 THEN 'x' ELSE NULL END, CAST(b AS TEXT) FROM t",
    "SELECT * FROM (SELECT 1) WHERE EXISTS (SELECT 1) AND a IN (1, 2)",
    "VALUES (1, 'a'), (2, x'00')",
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 'x', "
    "CHECK (b <> ''), UNIQUE (b)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS i ON t(a DESC, b) WHERE a > 0",
    "INSERT OR REPLACE INTO t (a, b) VALUES (?1, :b) ON CONFLICT (a) DO "
    "UPDATE SET b = excluded.b RETURNING *",
    "UPDATE t SET (a, b) = (1, 2), c = -9223372036854775808 WHERE a "
    "BETWEEN 1 AND 2",
    "DELETE FROM t WHERE a LIKE 'x%' ESCAPE '\\' RETURNING a",
    "BEGIN IMMEDIATE TRANSACTION; COMMIT; ROLLBACK",
    "DROP TABLE IF EXISTS t",
};

static const char *const fragments[] = {
    "SELECT",
    "FROM",
    "WHERE",
    "(",
    ")",
    ",",
    "'",
    "\"",
    "[",
    "`",
    "x'",
    "0x",
    "1",
    "1.5e",
    "?",
    ":a",
    "$",
    "#",
    "--",
    "/*",
    "*/",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "NOT",
    "IN",
    "BETWEEN",
    "AND",
    "OR",
    "IS",
    "NULL",
    "CAST",
    "AS",
    "||",
    "->",
    "-",
    "+",
    "~",
    "COLLATE",
    "ON",
    "CONFLICT",
    "DO",
    "VALUES",
    "CREATE",
    "TABLE",
    "INSERT",
    "INTO",
    ";",
    " ",
    "\n",
    "\0",
    "\xff",
    "\xef\xbb\xbf",
    "9223372036854775808",
};

/* Parses bytes[0..size) from an exact-size heap copy. */
static void parse_bytes(const char *bytes, size_t size)
{
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL;
    size_t tail = 0;
    size_t error_offset = 0;
    char errmsg[128];
    char *copy = test_malloc(size == 0 ? 1 : size);
    int rc;

    if (size > 0) {
        memcpy(copy, bytes, size);
    }
    engine__arena_init(&arena);
    rc = engine__parse(&arena, copy, size, &stmt, &tail, errmsg, sizeof(errmsg),
                       &error_offset);
    if (rc == 0) {
        assert_true(tail <= size);
    } else {
        assert_int_equal(rc, ENGINE_ESQL);
        assert_true(errmsg[0] != '\0');
        assert_true(error_offset <= size);
    }
    engine__arena_close(&arena);
    test_free(copy);
}

static size_t random_bytes(struct common_test_rng *rng, char *out,
                           size_t capacity)
{
    size_t size = (size_t)common_test_rng_below(rng, capacity);

    for (size_t i = 0; i < size; i++) {
        out[i] = (char)common_test_rng_below(rng, 256);
    }
    return size;
}

static size_t random_tokens(struct common_test_rng *rng, char *out,
                            size_t capacity)
{
    size_t count = sizeof(fragments) / sizeof(fragments[0]);
    size_t size = 0;
    size_t pieces = (size_t)common_test_rng_below(rng, 40);

    for (size_t i = 0; i < pieces; i++) {
        const char *f = fragments[common_test_rng_below(rng, count)];
        size_t n = f[0] == '\0' ? 1 : strlen(f);

        if (size + n + 1 > capacity) {
            break;
        }
        memcpy(out + size, f, n);
        size += n;
        if (common_test_rng_below(rng, 2) == 0) {
            out[size++] = ' ';
        }
    }
    return size;
}

/* A valid statement with a few random edits. */
static size_t mutated_statement(struct common_test_rng *rng, char *out,
                                size_t capacity)
{
    const char *seed =
        seeds[common_test_rng_below(rng, sizeof(seeds) / sizeof(seeds[0]))];
    size_t size = strlen(seed);
    size_t edits = 1 + (size_t)common_test_rng_below(rng, 4);

    memcpy(out, seed, size);
    for (size_t e = 0; e < edits && size > 0; e++) {
        size_t at = (size_t)common_test_rng_below(rng, size);
        uint64_t how = common_test_rng_below(rng, 3);

        if (how == 0) {
            out[at] = (char)common_test_rng_below(rng, 256);
        } else if (how == 1 && size + 1 < capacity) {
            memmove(out + at + 1, out + at, size - at);
            out[at] = (char)common_test_rng_below(rng, 128);
            size++;
        } else {
            memmove(out + at, out + at + 1, size - at - 1);
            size--;
        }
    }
    if (common_test_rng_below(rng, 4) == 0) {
        size = (size_t)common_test_rng_below(rng, size + 1); /* truncate */
    }
    return size;
}

static void parse_random_inputs_fail_cleanly(void **state)
{
    struct common_test_rng rng;
    char buffer[1024];

    (void)state;
    common_test_rng_seed(&rng, "parse_random_inputs_fail_cleanly");
    for (int i = 0; i < 20000; i++) {
        size_t size;

        switch (i % 3) {
        case 0:
            size = random_bytes(&rng, buffer, 200);
            break;
        case 1:
            size = random_tokens(&rng, buffer, sizeof(buffer));
            break;
        default:
            size = mutated_statement(&rng, buffer, sizeof(buffer));
            break;
        }
        parse_bytes(buffer, size);
    }
}

/* 1 MB of one repeated pattern, optionally closed by a suffix. */
static void parse_repeated(const char *unit, size_t total, const char *prefix)
{
    size_t unit_size = strlen(unit);
    size_t prefix_size = strlen(prefix);
    char *text = test_malloc(prefix_size + total);

    memcpy(text, prefix, prefix_size);
    for (size_t i = 0; i < total; i++) {
        text[prefix_size + i] = unit[i % unit_size];
    }
    parse_bytes(text, prefix_size + total);
    test_free(text);
}

static void parse_deep_nesting_is_refused(void **state)
{
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL;
    size_t tail = 0;
    char errmsg[128];
    char sql[4200] = "SELECT ";

    (void)state;
    parse_repeated("(", 1000000, "SELECT ");
    parse_repeated("(", 1000000, "");
    parse_repeated("-~", 1000000, "SELECT ");
    parse_repeated("NOT ", 1000000, "SELECT ");
    parse_repeated("1+", 1000000, "SELECT ");
    parse_repeated("(SELECT ", 1000000, "SELECT ");
    parse_repeated("CASE WHEN ", 1000000, "SELECT ");
    parse_repeated("x IN (", 1000000, "SELECT ");
    for (int i = 0; i < 2000; i++) {
        strcat(sql, "1+");
    }
    strcat(sql, "1");
    engine__arena_init(&arena);
    assert_int_equal(engine__parse(&arena, sql, strlen(sql), &stmt, &tail,
                                   errmsg, sizeof(errmsg), NULL),
                     ENGINE_ESQL);
    assert_string_equal(errmsg,
                        "Expression tree is too large (maximum depth 1000)");
    engine__arena_close(&arena);
}

static void parse_embedded_nul_ends_input(void **state)
{
    static const char sql[] = "SELECT 1\0garbage";
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL;
    size_t tail = 0;
    char errmsg[128];

    (void)state;
    engine__arena_init(&arena);
    assert_int_equal(engine__parse(&arena, sql, sizeof(sql) - 1, &stmt, &tail,
                                   errmsg, sizeof(errmsg), NULL),
                     0);
    assert_non_null(stmt);
    assert_int_equal(tail, 8);
    engine__arena_close(&arena);
}

/* Inputs cut inside a token or a clause, and the inputs fuzz_parse found
 * crashing (none so far; each new one is added here). */
static const char *const regressions[] = {
    "SELECT 1 /*",
    "SELECT -0x",
    "SELECT - -9223372036854775808",
    "SELECT -(0x8000000000000000)",
    "UPDATE t SET (a) = (1",
    "CREATE TABLE t(a DEFAULT -",
    "SELECT $a(",
    "SELECT x'",
    "INSERT INTO t VALUES(1) ON CONFLICT(",
};

static void parse_regressions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(regressions) / sizeof(regressions[0]); i++) {
        parse_bytes(regressions[i], strlen(regressions[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_random_inputs_fail_cleanly),
        cmocka_unit_test(parse_deep_nesting_is_refused),
        cmocka_unit_test(parse_embedded_nul_ends_input),
        cmocka_unit_test(parse_regressions),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
