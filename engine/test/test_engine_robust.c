/* SPDX-License-Identifier: MIT
 *
 * Goal: whatever SQL arrives, the engine answers with rows or an error: it
 * never crashes, hangs or leaks, and the database stays usable.
 * Method: 20,000 seeded inputs (replay with SINEW_TEST_SEED): statements
 * glued from SQL fragments, and mutations (fragments swapped, inserted,
 * deleted) of valid statements, each run against a database with a fixed
 * schema through prepare, step and column access, under cmocka's
 * leak-checking heap. Afterwards the database must still answer a query.
 */
#include "common_test.h"

#include <string.h>

#include "engine_robust.h"

#define INPUTS 20000
#define PIECES_MAX 24

static const char *const fragments[] = {
    "SELECT",
    "*",
    "FROM",
    "t",
    "u",
    "WHERE",
    "a",
    "b",
    "c",
    "d",
    "x",
    "y",
    "rowid",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "||",
    "=",
    "<>",
    "<",
    ">=",
    "AND",
    "OR",
    "NOT",
    "IS",
    "NULL",
    "IN",
    "BETWEEN",
    "LIKE",
    "GLOB",
    "ESCAPE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "AS",
    "TEXT",
    "INTEGER",
    "REAL",
    "COLLATE",
    "NOCASE",
    "GROUP BY",
    "HAVING",
    "ORDER BY",
    "DESC",
    "NULLS FIRST",
    "LIMIT",
    "OFFSET",
    "DISTINCT",
    "count(*)",
    "sum(",
    "min(",
    "max(",
    "avg(",
    "group_concat(",
    "abs(",
    "substr(",
    "printf(",
    "'%d %s'",
    "typeof(",
    "coalesce(",
    "(SELECT",
    "EXISTS",
    "INSERT INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "RETURNING",
    "ON CONFLICT",
    "DO NOTHING",
    "DO UPDATE",
    "excluded.b",
    "OR REPLACE",
    "OR IGNORE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "CREATE TABLE",
    "DROP TABLE",
    "1",
    "0",
    "-1",
    "9223372036854775807",
    "1e308",
    "0.5",
    "'x'",
    "''",
    "x'00ff'",
    "?",
    ":p",
    "@q",
    "$r",
    ";",
    "FILTER (WHERE",
    "sqlite_schema",
};

static const char *const statements[] = {
    "SELECT a, b, c * 2 FROM t WHERE c > 1 ORDER BY b DESC",
    "SELECT b, count(*), sum(c) FROM t GROUP BY b HAVING count(*) > 0",
    "SELECT DISTINCT typeof(d) FROM t LIMIT 2 OFFSET 1",
    "SELECT x, y FROM u WHERE x IN (SELECT b FROM t) OR y = 2.5",
    "INSERT INTO t(b, c) VALUES ('five', 5) ON CONFLICT (b) DO UPDATE SET "
    "c = excluded.c RETURNING *",
    "UPDATE t SET c = c + 1, d = b || d WHERE a > 1 RETURNING a, c",
    "DELETE FROM u WHERE x = 'a' RETURNING y",
    "SELECT (SELECT max(c) FROM t), CASE WHEN 1 THEN 'y' END",
};

static size_t append(char *out, size_t used, size_t size, const char *text)
{
    size_t n = strlen(text);

    if (used + n + 2 < size) {
        memcpy(out + used, text, n);
        out[used + n] = ' ';
        used += n + 1;
    }
    return used;
}

/* A statement glued from random fragments. */
static size_t glued(struct common_test_rng *rng, char *out, size_t size)
{
    size_t count = 1 + common_test_rng_below(rng, PIECES_MAX);
    size_t n = sizeof(fragments) / sizeof(fragments[0]);
    size_t used = 0;

    for (size_t i = 0; i < count; i++) {
        used =
            append(out, used, size, fragments[common_test_rng_below(rng, n)]);
    }
    return used;
}

/* A valid statement, or one with up to two fragments spliced in or bytes
 * removed. */
static size_t mutated(struct common_test_rng *rng, char *out, size_t size)
{
    size_t n = sizeof(statements) / sizeof(statements[0]);
    const char *base = statements[common_test_rng_below(rng, n)];
    size_t used = strlen(base);
    uint64_t edits = common_test_rng_below(rng, 3); /* 0: kept valid */

    memcpy(out, base, used);
    for (uint64_t e = 0; e < edits && used > 0; e++) {
        size_t at = common_test_rng_below(rng, used);
        const char *piece = fragments[common_test_rng_below(
            rng, sizeof(fragments) / sizeof(fragments[0]))];
        size_t len = strlen(piece);

        if (common_test_rng_below(rng, 2) == 0 && used + len < size) {
            memmove(out + at + len, out + at, used - at);
            memcpy(out + at, piece, len);
            used += len;
        } else {
            size_t cut = 1 + common_test_rng_below(rng, 8);

            cut = cut > used - at ? used - at : cut;
            memmove(out + at, out + at + cut, used - at - cut);
            used -= cut;
        }
    }
    return used;
}

static void robust_any_sql_is_answered(void **state)
{
    struct common_test_rng rng;
    struct engine_db *db;
    char sql[2048];
    int64_t count = -1;
    int completed = 0;

    (void)state;
    common_test_rng_seed(&rng, "robust_any_sql_is_answered");
    db = engine_robust_open();
    assert_non_null(db);
    for (int i = 0; i < INPUTS; i++) {
        size_t size = common_test_rng_below(&rng, 2) == 0
                          ? glued(&rng, sql, sizeof(sql))
                          : mutated(&rng, sql, sizeof(sql));

        completed += engine_robust_run(db, sql, size);
        if (i % 1000 == 999) {
            engine_close(db);
            db = engine_robust_open();
            assert_non_null(db);
        }
    }
    {
        struct engine_stmt *stmt = NULL;

        assert_int_equal(engine_exec(db, "ROLLBACK", NULL, NULL) != 0 ||
                             engine_in_transaction(db) == false,
                         1);
        assert_int_equal(
            engine_prepare(db, "SELECT count(*) FROM u", -1, &stmt, NULL), 0);
        assert_int_equal(engine_step(stmt), ENGINE_ROW);
        count = engine_column_int64(stmt, 0);
        engine_finalize(stmt);
    }
    assert_true(count >= 0);
    /* Enough inputs must be valid SQL to reach the executor. */
    printf("statements completed: %d of %d inputs\n", completed, INPUTS);
    assert_true(completed > INPUTS / 20);
    engine_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(robust_any_sql_is_answered),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
