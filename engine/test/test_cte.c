/* SPDX-License-Identifier: MIT
 *
 * test_cte.c: WITH and WITH RECURSIVE (common table expressions) against
 * libsqlite3 3.40.
 *
 * Method: the same tables are made in SQLite and in sinew (sqlite_pair.h),
 * then each statement runs in both, in order; the result column names,
 * every row in order with each value's storage class, and the error
 * message if any must be the same. DML statements are followed by a
 * SELECT of the table they change. The cases reach SQLite's rules: name
 * lookup (CTEs first, inner WITH shadowing outer, later CTEs of the same
 * WITH visible), column lists, CTEs in every kind of subquery and in DML,
 * the recursion's queue (first in first out; UNION dropping rows seen;
 * ORDER BY making it a priority queue, ties in arrival order), LIMIT and
 * OFFSET on the recursion, several recursive terms, affinities of the
 * rows read back, and the errors of prepare.
 */
#include "sqlite_pair.h"

static const char *const setup[] = {
    "CREATE TABLE t(a INTEGER, b TEXT COLLATE NOCASE, c REAL)",
    "INSERT INTO t VALUES (1, 'x', 1.5), (2, 'Y', 2), (3, 'z', NULL), "
    "(4, 'X', 4.25)",
    "CREATE TABLE tree(id INTEGER PRIMARY KEY, parent INTEGER, name TEXT)",
    "INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), "
    "(4, 2, 'a1'), (5, 2, 'a2'), (6, 3, 'b1'), (7, 6, 'b1x'), "
    "(8, NULL, 'other')",
    "CREATE TABLE c(x)",
    "INSERT INTO c VALUES ('table c')",
    NULL,
};

static int pair_setup(void **state)
{
    return pair_state_open(state, setup);
}

static void plain_ctes_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "WITH x AS (SELECT a, b FROM t WHERE a > 1) SELECT * FROM x",
        "WITH x AS (SELECT a, b FROM t) SELECT b FROM x WHERE a = 2",
        "WITH x(p, q) AS (SELECT a, b FROM t) SELECT * FROM x ORDER BY q",
        "WITH x(p, q) AS (SELECT a, b FROM t) SELECT q, p FROM x WHERE "
        "q = 'x'",
        "WITH x(p) AS (VALUES (1), (2)) SELECT * FROM x",
        "WITH x AS (VALUES (1, 'a'), (2, 'b')) SELECT * FROM x",
        "WITH x AS (SELECT 1 AS a, 2 AS a) SELECT * FROM x",
        "WITH x(a, a) AS (SELECT 1, 2) SELECT * FROM x",
        "WITH x AS (SELECT * FROM t) SELECT x.* FROM x",
        "WITH x AS (SELECT * FROM t) SELECT * FROM x AS y WHERE y.a < 3",
        "WITH x AS (SELECT b FROM t) SELECT b FROM x ORDER BY b",
        "WITH x AS (SELECT c FROM t) SELECT c, typeof(c) FROM x",
        "WITH x AS (SELECT a FROM t UNION SELECT 10) SELECT * FROM x",
        "WITH x AS (SELECT a FROM t ORDER BY a DESC LIMIT 2) SELECT * FROM x",
        "WITH x AS (SELECT b, count(*) AS n FROM t GROUP BY b) "
        "SELECT * FROM x",
        "WITH x AS (SELECT 1 AS v), y AS (SELECT v + 1 AS v FROM x) "
        "SELECT * FROM x, y",
        "WITH y AS (SELECT v + 1 AS v FROM x), x AS (SELECT 1 AS v) "
        "SELECT * FROM y",
        "WITH x AS (SELECT a FROM t) SELECT * FROM x AS p JOIN x AS q "
        "ON p.a = q.a + 1",
        "WITH x AS (SELECT a FROM t) SELECT * FROM x LEFT JOIN t USING (a)",
        "WITH x AS (SELECT a FROM t) SELECT * FROM t, x WHERE t.a = x.a",
        "WITH x AS MATERIALIZED (SELECT 1 AS v) SELECT * FROM x",
        "WITH x AS NOT MATERIALIZED (SELECT 1 AS v) SELECT * FROM x",
        "WITH x AS (SELECT 1 AS v) VALUES (2)",
        "WITH x AS (SELECT 1 AS v) SELECT 5 UNION ALL SELECT v FROM x",
        "WITH nosuch AS (SELECT * FROM nothing) SELECT 1",
        NULL,
    };

    pair_run_all(state, queries);
}

/* Lookup: CTE names before tables, the innermost WITH first. */
static void scoping_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT * FROM c",
        "WITH c AS (SELECT 'cte c' AS x) SELECT * FROM c",
        "WITH c AS (SELECT 'cte c' AS x) SELECT (SELECT x FROM c)",
        "WITH c AS (SELECT 'cte c' AS x) SELECT * FROM (SELECT * FROM c)",
        "WITH c AS (SELECT 'outer' AS x) SELECT (WITH c AS (SELECT 'inner' "
        "AS x) SELECT x FROM c), x FROM c",
        "SELECT * FROM (WITH c AS (SELECT 7 AS x) SELECT * FROM c), c",
        "SELECT (WITH d AS (SELECT 7) SELECT * FROM d)",
        "WITH d AS (SELECT 2 AS k) SELECT * FROM t WHERE a IN (SELECT k FROM "
        "d)",
        "WITH d AS (SELECT 2 AS k) SELECT * FROM t WHERE a IN d",
        "WITH d AS (SELECT 2 AS k) SELECT a, EXISTS (SELECT 1 FROM d WHERE "
        "k = a) FROM t",
        "WITH d AS (SELECT 2 AS k) SELECT * FROM t WHERE a IN (WITH e AS "
        "(SELECT k + 1 AS k FROM d) SELECT k FROM e)",
        "WITH d AS (SELECT a FROM t), e AS (SELECT * FROM d WHERE a > 2) "
        "SELECT * FROM e",
        "WITH t AS (SELECT 5 AS q) SELECT * FROM t",
        "WITH d AS (SELECT 1 AS v) SELECT * FROM d WHERE v IN (WITH d AS "
        "(SELECT 2 AS v) SELECT v FROM d)",
        "WITH x AS (WITH y AS (SELECT 5 AS q) SELECT q + 1 AS q FROM y) "
        "SELECT * FROM x",
        "WITH x AS (SELECT a FROM t) SELECT a, (SELECT count(*) FROM x AS y "
        "WHERE y.a < x.a) FROM x",
        "WITH x AS (SELECT 0 AS n UNION SELECT 2) SELECT x.n, t.a FROM x "
        "JOIN t ON t.b = x.n",
        "CREATE VIEW v AS WITH x AS (SELECT a * 10 AS k FROM t) SELECT * "
        "FROM x",
        "SELECT * FROM v",
        "WITH v AS (SELECT 'cte' AS k) SELECT * FROM v",
        "DROP VIEW v",
        NULL,
    };

    pair_run_all(state, queries);
}

static void dml_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "CREATE TABLE w(k, v)",
        "WITH x AS (SELECT a, b FROM t) INSERT INTO w SELECT * FROM x",
        "SELECT * FROM w",
        "INSERT INTO w WITH x AS (SELECT 9 AS k) SELECT k, 'nine' FROM x",
        "SELECT * FROM w",
        "WITH RECURSIVE s(n) AS (SELECT 10 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 12) INSERT INTO w SELECT n, 'n' FROM s",
        "SELECT * FROM w",
        "WITH x AS (SELECT 2 AS k) UPDATE w SET v = 'two' WHERE k IN "
        "(SELECT k FROM x)",
        "WITH x AS (SELECT 'new' AS s) UPDATE w SET v = (SELECT s FROM x) "
        "WHERE k = 3 RETURNING *",
        "SELECT * FROM w",
        "WITH x AS (SELECT 1 AS k UNION SELECT 4) DELETE FROM w WHERE k IN x",
        "WITH x(k) AS (SELECT 11) DELETE FROM w WHERE k IN (SELECT k FROM "
        "x) RETURNING k",
        "SELECT * FROM w",
        "WITH w AS (SELECT 1) INSERT INTO w VALUES (100, 'into the table')",
        "SELECT * FROM w",
        "DROP TABLE w",
        NULL,
    };

    pair_run_all(state, queries);
}

static void recursion_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 10) SELECT * FROM s",
        "WITH s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 5) "
        "SELECT * FROM s",
        "WITH s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 3 "
        "OFFSET 2) SELECT * FROM s",
        "WITH s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 0) "
        "SELECT * FROM s",
        "WITH s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT -1 "
        "OFFSET 3) SELECT * FROM s LIMIT 4",
        "WITH s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 'a') "
        "SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 100000) SELECT count(*), sum(n) FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION SELECT n % 3 + 1 FROM s) "
        "SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT 1 UNION SELECT n "
        "FROM s) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT 2 UNION SELECT "
        "n + 1 FROM s WHERE n < 5) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 2 UNION SELECT 1 UNION ALL SELECT "
        "n + 10 FROM s WHERE n < 3) SELECT * FROM s",
        "WITH RECURSIVE s(x) AS (SELECT 'a' UNION ALL SELECT 'A' UNION "
        "SELECT x FROM s) SELECT * FROM s",
        "WITH RECURSIVE s(x) AS (SELECT b FROM t WHERE a = 1 UNION SELECT "
        "upper(x) FROM s) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3) SELECT * FROM s AS p, s AS q",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 5) SELECT n FROM s ORDER BY n DESC",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 5) SELECT n % 2, count(*) FROM s GROUP BY 1",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 5) SELECT * FROM t WHERE a IN s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3) SELECT 2 IN s, 5 IN s, (SELECT max(n) FROM s)",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT DISTINCT n + 1 "
        "FROM s WHERE n < 3) SELECT * FROM s",
        "WITH RECURSIVE s(x) AS (SELECT CAST(1 AS REAL) UNION ALL SELECT 2 "
        "FROM s LIMIT 3) SELECT x, typeof(x) FROM s",
        "WITH RECURSIVE s(x, y) AS (SELECT 1, 'a' UNION ALL SELECT x + 1, "
        "y || 'b' FROM s WHERE x < 4) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "JOIN t ON a = n) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t "
        "JOIN s ON a = n) SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3), u(m) AS (SELECT n FROM s UNION ALL SELECT m * 10 FROM "
        "u WHERE m < 100) SELECT * FROM u",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3) SELECT (WITH RECURSIVE r(k) AS (SELECT n UNION ALL "
        "SELECT k * 2 FROM r WHERE k < 8) SELECT group_concat(k) FROM r) "
        "FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3 UNION ALL SELECT n + 10 FROM s WHERE n < 3) "
        "SELECT * FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION SELECT n + 1 FROM s WHERE "
        "n < 3 UNION SELECT n + 1 FROM s WHERE n < 3) SELECT count(*) FROM s",
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
        "WHERE n < 3 UNION ALL SELECT n + 1 FROM s WHERE n < 3) "
        "SELECT count(*) FROM s",
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s) "
        "SELECT i FROM s WHERE i > 3 LIMIT 2",
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT "
        "abs(-9223372036854775807 "
        "- i) FROM s) SELECT i FROM s LIMIT 3",
        "WITH RECURSIVE s(i) AS (SELECT '1' UNION ALL SELECT i + 1 FROM s "
        "WHERE i < 3) SELECT i, typeof(i) FROM s WHERE i = '2'",
        "WITH RECURSIVE s(i) AS (SELECT CAST(1 AS TEXT) UNION ALL SELECT "
        "i + 1 FROM s WHERE i < 3) SELECT i, typeof(i) FROM s",
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
        "WHERE i < 3) SELECT s.*, s2.* FROM s LEFT JOIN s AS s2 ON s2.i = "
        "s.i + 1",
        "WITH RECURSIVE f(n, v) AS (SELECT 1, 1 UNION ALL SELECT n + 1, "
        "v * (n + 1) FROM f WHERE n < 25) SELECT * FROM f",
        NULL,
    };

    pair_run_all(state, queries);
}

/* Tree walks, and ORDER BY on the recursion (a priority queue). */
static void trees_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "WITH RECURSIVE sub(id, name, depth) AS (SELECT id, name, 0 FROM "
        "tree WHERE parent IS NULL UNION ALL SELECT tree.id, tree.name, "
        "depth + 1 FROM tree JOIN sub ON tree.parent = sub.id) "
        "SELECT * FROM sub",
        "WITH RECURSIVE sub(id, name, depth) AS (SELECT id, name, 0 FROM "
        "tree WHERE id = 1 UNION ALL SELECT tree.id, tree.name, depth + 1 "
        "FROM tree JOIN sub ON tree.parent = sub.id ORDER BY 3 DESC) "
        "SELECT * FROM sub",
        "WITH RECURSIVE sub(id, path) AS (SELECT id, name FROM tree WHERE "
        "id = 1 UNION ALL SELECT tree.id, path || '/' || tree.name FROM "
        "sub, tree WHERE tree.parent = sub.id ORDER BY 2) SELECT * FROM sub",
        "WITH RECURSIVE up(id, parent) AS (SELECT id, parent FROM tree "
        "WHERE name = 'b1x' UNION ALL SELECT tree.id, tree.parent FROM up "
        "JOIN tree ON tree.id = up.parent) SELECT group_concat(id, '<') "
        "FROM up",
        "WITH RECURSIVE c(x, d) AS (SELECT 1, 0 UNION ALL SELECT x * 2, "
        "d + 1 FROM c WHERE d < 3 UNION ALL SELECT x * 2 + 1, d + 1 FROM c "
        "WHERE d < 3 ORDER BY 2 DESC) SELECT * FROM c",
        "WITH RECURSIVE c(x, d) AS (SELECT 1, 0 UNION ALL SELECT x * 2, "
        "d + 1 FROM c WHERE d < 3 UNION ALL SELECT x * 2 + 1, d + 1 FROM c "
        "WHERE d < 3 ORDER BY 2 LIMIT 6) SELECT * FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 'b' UNION ALL SELECT 'A' UNION ALL "
        "SELECT x || 'z' FROM c WHERE length(x) < 3 ORDER BY 1 COLLATE "
        "NOCASE) SELECT * FROM c",
        "WITH RECURSIVE c AS (SELECT 3 AS x UNION ALL SELECT x + 3 FROM c "
        "WHERE x < 7 ORDER BY x) SELECT * FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 5 UNION ALL SELECT x - 1 FROM c "
        "WHERE x > 0 ORDER BY 1 DESC LIMIT 3) SELECT * FROM c",
        NULL,
    };

    pair_run_all(state, queries);
}

static void errors_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "WITH x(a, b) AS (SELECT 1) SELECT * FROM x",
        "WITH x(a) AS (SELECT * FROM t) SELECT * FROM x",
        "WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x",
        "WITH X AS (SELECT 1), x AS (SELECT 2) SELECT 1",
        "WITH x(a COLLATE nocase) AS (SELECT 1) SELECT * FROM x",
        "WITH x(a DESC) AS (SELECT 1) SELECT * FROM x",
        "WITH x() AS (SELECT 1) SELECT * FROM x",
        "WITH x AS (SELECT 1) WITH y AS (SELECT 2) SELECT 1",
        "WITH x AS (SELECT 1)",
        "WITH x AS (SELECT 1) CREATE TABLE z(a)",
        "WITH x AS SELECT 1 SELECT 2",
        "WITH a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a",
        "WITH c AS (SELECT * FROM c) SELECT * FROM c",
        "WITH c(x) AS (SELECT x FROM c UNION ALL SELECT 1) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x IN "
        "(SELECT x FROM c) LIMIT 5) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT c.x + 1 FROM c, c AS d "
        "LIMIT 5) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT (SELECT x FROM c)) "
        "SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM (SELECT * FROM "
        "c) WHERE x < 3) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3 "
        "UNION SELECT x + 10 FROM c WHERE x < 3) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 INTERSECT SELECT x FROM c) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT count(*) FROM c) "
        "SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x FROM c GROUP BY x) "
        "SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1, 2 FROM c) "
        "SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c ORDER BY x "
        "LIMIT 3) SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT nosuch FROM c) "
        "SELECT * FROM c",
        "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT "
        "c.rowid FROM c",
        "WITH x AS (SELECT 1 AS a) SELECT rowid FROM x",
        "WITH x AS (SELECT * FROM nosuch) SELECT * FROM x",
        "WITH x AS (SELECT 1 AS a) SELECT nosuch FROM x",
        "WITH x AS (SELECT 1 AS a) SELECT * FROM x INDEXED BY i",
        NULL,
    };

    pair_run_all(state, queries);
}

/* A failed allocation anywhere in planning or running a recursive CTE,
 * including one that feeds an INSERT, ends in an error with everything
 * freed (an operator whose batch failed to allocate was destroyed before
 * its state was filled in). */
static void recursion_survives_every_allocation_failure(void **state)
{
    static const char *const script =
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);"
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
        "WHERE n < 70) INSERT INTO t SELECT n, 'row ' || n FROM c;"
        "WITH RECURSIVE c(n, s) AS (SELECT 1, 'a' UNION SELECT n + 1, s || "
        "'b' FROM c WHERE n < 5 ORDER BY 2 DESC LIMIT 4 OFFSET 1) "
        "SELECT * FROM c;"
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
        "WHERE n < 3), d(m) AS (SELECT n FROM c UNION ALL SELECT m * 2 FROM "
        "d WHERE m < 10) UPDATE t SET b = 'x' WHERE a IN (SELECT m FROM d);";
    struct common_heap saved;

    (void)state;
    /* Over libc's heap (this file's), then over cmocka's, which reports
     * leaks: installed for the walk only, as the shared pair's tables
     * outlive each test. */
    assert_true(pair_oom_walk(script) > 20);
    common_heap_get(&saved);
    common_test_install();
    assert_true(pair_oom_walk(script) > 20);
    common_heap_set(&saved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_ctes_match_sqlite),
        cmocka_unit_test(scoping_matches_sqlite),
        cmocka_unit_test(dml_matches_sqlite),
        cmocka_unit_test(recursion_matches_sqlite),
        cmocka_unit_test(trees_match_sqlite),
        cmocka_unit_test(errors_match_sqlite),
        cmocka_unit_test(recursion_survives_every_allocation_failure),
    };

    return cmocka_run_group_tests(tests, pair_setup, pair_state_close);
}
