/* SPDX-License-Identifier: MIT
 *
 * test_window.c: window functions against libsqlite3 3.40.
 *
 * Method: the same tables are made in SQLite and in sinew (sqlite_pair.h),
 * then each query runs in both; the result column names, every row in
 * order with each value's storage class, and the error message if any
 * must be the same. The cases reach SQLite's rules: every built-in window
 * function, every aggregate used with OVER, partitions and peers with
 * NULLs and collations in the keys, frames of each type with offsets and
 * EXCLUDE, the sticky REAL of a sliding sum (sumInverse), lag/lead/
 * nth_value offsets of every storage class, named windows and their
 * inheritance, windows over GROUP BY, ORDER BY and LIMIT over window
 * results, and the errors of prepare and of the first step.
 */
#include "sqlite_pair.h"

static const char *const setup[] = {
    "CREATE TABLE t(a, b, c)",
    "INSERT INTO t VALUES (1, 'x', 1.5), (2, 'x', 2.5), (2, 'y', NULL), "
    "(NULL, 'y', 4), (5, 'z', 3), ('t', 'z', 1)",
    "CREATE TABLE s(id INTEGER PRIMARY KEY, g TEXT COLLATE NOCASE, v INT, "
    "r REAL)",
    "INSERT INTO s(g, v, r) VALUES ('a', 3, 0.1), ('A', 1, 0.2), "
    "('b', NULL, 0.3), ('a', 3, 0.7), ('B', 7, NULL), ('c', -2, 1e300), "
    "('a', 9, -0.1), ('b', 4, 0.25), ('C', 4, 2.5), (NULL, 0, 0.5)",
    "CREATE TABLE big(i INTEGER PRIMARY KEY, k INT, x REAL)",
    "CREATE TABLE d(v)",
    "INSERT INTO d VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)",
    "INSERT INTO big SELECT n, n % 7, n * 0.37 FROM (SELECT x.v * 100 + "
    "y.v * 10 + z.v + 1 AS n FROM d x, d y, d z) WHERE n <= 300",
    "CREATE TABLE e(v)",
    NULL,
};

static int pair_setup(void **state)
{
    return pair_state_open(state, setup);
}

/* row_number, rank, dense_rank, percent_rank, cume_dist, ntile. */
static void ranking_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a, row_number() OVER (ORDER BY a) FROM t",
        "SELECT b, a, row_number() OVER (PARTITION BY b ORDER BY a DESC), "
        "rank() OVER (ORDER BY b), dense_rank() OVER (ORDER BY b), "
        "percent_rank() OVER (ORDER BY b), cume_dist() OVER (ORDER BY b) "
        "FROM t ORDER BY b, a",
        "SELECT percent_rank() OVER (), cume_dist() OVER (), rank() OVER (), "
        "dense_rank() OVER () FROM t",
        "SELECT g, v, rank() OVER (PARTITION BY g ORDER BY v), "
        "dense_rank() OVER (PARTITION BY g ORDER BY v DESC NULLS FIRST) "
        "FROM s ORDER BY id",
        "SELECT rank() OVER (ORDER BY g) FROM s ORDER BY id",
        "SELECT rank() OVER (ORDER BY b COLLATE NOCASE) FROM t",
        "SELECT v, ntile(4) OVER (ORDER BY v, id) FROM s",
        "SELECT v, ntile(3) OVER (PARTITION BY g ORDER BY id) FROM s",
        "SELECT ntile(20) OVER (ORDER BY id) FROM s",
        "SELECT ntile(2.5) OVER (ORDER BY a) FROM t",
        "SELECT ntile('3x') OVER (ORDER BY a) FROM t",
        "SELECT ntile(1) OVER () FROM e",
        "SELECT row_number() OVER (ORDER BY 1) FROM t",
        "SELECT k, row_number() OVER (PARTITION BY k ORDER BY i DESC) "
        "FROM big WHERE i < 40",
        NULL,
    };

    pair_run_all(state, queries);
}

/* lag, lead, first_value, last_value, nth_value. */
static void navigation_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a, lag(a) OVER (ORDER BY a), lead(a) OVER (ORDER BY a) "
        "FROM t",
        "SELECT a, lag(a) OVER () FROM t",
        "SELECT lag(a, 2, 'd') OVER (ORDER BY a), "
        "lead(a, 2, a) OVER (ORDER BY a) FROM t",
        "SELECT lag(a, -1) OVER (ORDER BY a), lag(a, 1.5) OVER (ORDER BY a), "
        "lag(a, NULL, 9) OVER (ORDER BY a), lag(a, '1') OVER (ORDER BY a), "
        "lag(a, 'x') OVER (ORDER BY a), lag(a, 1.0) OVER (ORDER BY a), "
        "lag(a, '1.0') OVER (ORDER BY a) FROM t",
        "SELECT lag(a, 9223372036854775807) OVER (ORDER BY a), "
        "lead(a, -9223372036854775808) OVER (ORDER BY a) FROM t",
        "SELECT g, lead(v, 1, -1) OVER (PARTITION BY g ORDER BY id) FROM s",
        "SELECT a, first_value(a) OVER (ORDER BY a), "
        "last_value(a) OVER (ORDER BY a), nth_value(a, 2) OVER (ORDER BY a) "
        "FROM t",
        "SELECT nth_value(a, 2.0) OVER (ORDER BY a), "
        "nth_value(a, '2') OVER (ORDER BY a), "
        "nth_value(a, '1.0') OVER (ORDER BY a) FROM t",
        "SELECT a, first_value(a) OVER (ORDER BY a ROWS BETWEEN 2 FOLLOWING "
        "AND 3 FOLLOWING) FROM t",
        "SELECT a, first_value(a) OVER (ORDER BY a ROWS BETWEEN 3 PRECEDING "
        "AND 2 PRECEDING), last_value(a) OVER (ORDER BY a ROWS BETWEEN 3 "
        "PRECEDING AND 2 PRECEDING) FROM t",
        "SELECT a, nth_value(b, 2) OVER (ORDER BY a ROWS BETWEEN 2 PRECEDING "
        "AND 2 FOLLOWING) FROM t",
        "SELECT nth_value(a, 2) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING "
        "AND 1 FOLLOWING EXCLUDE CURRENT ROW), first_value(a) OVER (ORDER BY "
        "a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW), "
        "last_value(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 "
        "FOLLOWING EXCLUDE CURRENT ROW) FROM t",
        "SELECT g, last_value(v) OVER (PARTITION BY g), "
        "first_value(r) OVER (PARTITION BY g ORDER BY r DESC) FROM s "
        "ORDER BY id",
        NULL,
    };

    pair_run_all(state, queries);
}

/* Aggregates with OVER: default frames, partitions, FILTER. */
static void aggregates_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a, sum(a) OVER (ORDER BY a), count(*) OVER (ORDER BY a), "
        "count(a) OVER (), total(a) OVER (ORDER BY a), avg(c) OVER "
        "(ORDER BY a) FROM t",
        "SELECT b, sum(a) OVER (PARTITION BY b), min(c) OVER (PARTITION BY "
        "b), max(a) OVER (PARTITION BY b) FROM t",
        "SELECT max(a) OVER (), min(a) OVER (PARTITION BY b) FROM t",
        "SELECT group_concat(a, '-') OVER (ORDER BY a), "
        "group_concat(b) OVER (PARTITION BY b ORDER BY a), "
        "group_concat(a, ';') OVER () FROM t",
        "SELECT json_group_array(a) OVER (ORDER BY a), "
        "json_group_object(b, a) OVER (PARTITION BY b) FROM t",
        "SELECT count() OVER (), count(*) FILTER (WHERE a > 1) OVER () "
        "FROM t",
        "SELECT sum(a) FILTER (WHERE b = 'x') OVER (ORDER BY a) FROM t",
        "SELECT g, v, sum(v) OVER (PARTITION BY g ORDER BY v), "
        "avg(v) OVER (PARTITION BY g), total(r) OVER (ORDER BY id) FROM s "
        "ORDER BY id",
        "SELECT sum(a) OVER () FROM (SELECT 1 AS a UNION ALL "
        "SELECT 9223372036854775807)",
        "SELECT sum(1) OVER () FROM t WHERE 0",
        "SELECT k, sum(i) OVER (PARTITION BY k ORDER BY i), "
        "avg(x) OVER (PARTITION BY k ORDER BY i) FROM big ORDER BY i",
        NULL,
    };

    pair_run_all(state, queries);
}

/* ROWS, RANGE and GROUPS frames, offsets, EXCLUDE. */
static void frames_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a, c, sum(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND "
        "1 FOLLOWING), min(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND "
        "1 FOLLOWING), avg(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND "
        "1 FOLLOWING), count(c) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING "
        "AND 1 FOLLOWING) FROM t",
        "SELECT sum(a) OVER (ROWS 1 PRECEDING), sum(a) OVER (ROWS '1' "
        "PRECEDING), sum(a) OVER (ROWS 1.0 PRECEDING), "
        "sum(a) OVER (ROWS 1 + 1 PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 "
        "PRECEDING), sum(a) OVER (ORDER BY a ROWS BETWEEN 2 FOLLOWING AND 3 "
        "FOLLOWING), sum(a) OVER (ORDER BY a ROWS CURRENT ROW), "
        "sum(a) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
        "FOLLOWING) FROM t",
        "SELECT a, sum(c) OVER (ORDER BY a RANGE BETWEEN 1 PRECEDING AND 1 "
        "FOLLOWING), sum(c) OVER (ORDER BY a DESC RANGE BETWEEN 1 PRECEDING "
        "AND 1 FOLLOWING) FROM t",
        "SELECT a, count(*) OVER (ORDER BY a RANGE BETWEEN 0 PRECEDING AND "
        "0 FOLLOWING), count(*) OVER (ORDER BY a NULLS LAST RANGE BETWEEN 1 "
        "PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY a RANGE BETWEEN "
        "UNBOUNDED PRECEDING AND 1 PRECEDING), count(*) OVER (ORDER BY a "
        "RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM t",
        "SELECT c, count(*) OVER (ORDER BY c RANGE BETWEEN 1 PRECEDING AND "
        "1.5 FOLLOWING), count(*) OVER (ORDER BY c RANGE BETWEEN 1 FOLLOWING "
        "AND 2 FOLLOWING), count(*) OVER (ORDER BY c DESC RANGE BETWEEN 1 "
        "FOLLOWING AND 2 FOLLOWING) FROM t",
        "SELECT sum(a) OVER (ORDER BY a RANGE 1.5 PRECEDING), sum(a) OVER "
        "(ORDER BY a RANGE '1' PRECEDING), sum(a) OVER (ORDER BY a RANGE "
        "CURRENT ROW) FROM t",
        "SELECT b, sum(a) OVER (ORDER BY b RANGE BETWEEN 1 PRECEDING AND 1 "
        "FOLLOWING) FROM t",
        "SELECT a, sum(c) OVER (ORDER BY a DESC NULLS FIRST RANGE BETWEEN 2 "
        "PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, count(*) OVER (ORDER BY a GROUPS BETWEEN 1 PRECEDING AND "
        "1 FOLLOWING), count(*) OVER (ORDER BY a GROUPS BETWEEN 1 PRECEDING "
        "AND 1 FOLLOWING EXCLUDE TIES), count(*) OVER (ORDER BY a GROUPS "
        "BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP), count(*) OVER "
        "(ORDER BY a GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE "
        "CURRENT ROW), count(*) OVER (ORDER BY a GROUPS BETWEEN 1 PRECEDING "
        "AND 1 FOLLOWING EXCLUDE NO OTHERS) FROM t",
        "SELECT sum(a) OVER (ORDER BY a GROUPS CURRENT ROW), sum(a) OVER "
        "(ORDER BY a GROUPS 2 PRECEDING), sum(a) OVER (GROUPS 1 PRECEDING) "
        "FROM t",
        "SELECT a, sum(c) OVER (ORDER BY a RANGE BETWEEN 1 PRECEDING AND 1 "
        "FOLLOWING EXCLUDE GROUP), count(*) OVER (ORDER BY a RANGE BETWEEN "
        "UNBOUNDED PRECEDING AND 1 FOLLOWING EXCLUDE TIES), sum(a) OVER "
        "(ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT "
        "ROW) FROM t",
        "SELECT sum(a) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
        "FOLLOWING), sum(a) OVER (RANGE BETWEEN UNBOUNDED PRECEDING AND "
        "UNBOUNDED FOLLOWING), sum(a) OVER (GROUPS BETWEEN 1 PRECEDING AND "
        "1 FOLLOWING) FROM t",
        "SELECT group_concat(a, '-') OVER (ORDER BY a ROWS 1 PRECEDING), "
        "json_group_array(a) OVER (ORDER BY a ROWS 1 PRECEDING), "
        "max(b) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) "
        "FROM t",
        "SELECT b, group_concat(a) OVER (PARTITION BY b ORDER BY a ROWS "
        "BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM t",
        "SELECT i, sum(x) OVER (ORDER BY i ROWS BETWEEN 5 PRECEDING AND 3 "
        "FOLLOWING), avg(x) OVER (PARTITION BY k ORDER BY i ROWS 4 "
        "PRECEDING), total(x) OVER (ORDER BY x RANGE BETWEEN 2.5 PRECEDING "
        "AND 1 FOLLOWING) FROM big ORDER BY i",
        "SELECT id, sum(r) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 "
        "FOLLOWING), sum(v) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND "
        "CURRENT ROW) FROM s",
        "SELECT id, min(v) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 "
        "FOLLOWING), max(g) OVER (ORDER BY id GROUPS BETWEEN CURRENT ROW AND "
        "2 FOLLOWING) FROM s",
        NULL,
    };

    pair_run_all(state, queries);
}

/* WINDOW clause, named windows and inheritance. */
static void named_windows_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a, row_number() OVER win FROM t WINDOW win AS ()",
        "SELECT sum(a) OVER w FROM t WINDOW w AS (ORDER BY a), "
        "w AS (ORDER BY b)",
        "SELECT sum(a) OVER (w ROWS 1 PRECEDING) FROM t "
        "WINDOW w AS (ORDER BY a)",
        "SELECT sum(a) OVER (w) FROM t WINDOW w AS (ORDER BY a)",
        "SELECT sum(a) OVER w FROM t WINDOW w AS (x ORDER BY a), "
        "x AS (PARTITION BY b)",
        "SELECT sum(a) OVER w FROM t WINDOW x AS (PARTITION BY b), "
        "w AS (x ORDER BY a)",
        "SELECT b, rank() OVER (p ORDER BY a), count(*) OVER p FROM t "
        "WINDOW p AS (PARTITION BY b) ORDER BY b, a",
        NULL,
    };

    pair_run_all(state, queries);
}

/* Windows over GROUP BY, under DISTINCT, ORDER BY and LIMIT, in
 * subqueries. */
static void queries_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT b, sum(a), rank() OVER (ORDER BY sum(a)) FROM t GROUP BY b",
        "SELECT sum(a), row_number() OVER (ORDER BY sum(a)) FROM t",
        "SELECT b, rank() OVER (ORDER BY b) FROM t GROUP BY b "
        "HAVING count(*) > 1",
        "SELECT g, count(*), sum(count(*)) OVER (ORDER BY g) FROM s "
        "GROUP BY g",
        "SELECT a, row_number() OVER () AS r FROM t ORDER BY r DESC",
        "SELECT row_number() OVER (ORDER BY a) r FROM t ORDER BY r DESC",
        "SELECT a, b FROM t ORDER BY row_number() OVER (ORDER BY b DESC)",
        "SELECT row_number() OVER (ORDER BY a) FROM t ORDER BY 1 LIMIT 2",
        "SELECT sum(a) OVER () FROM t ORDER BY 1 LIMIT 1 OFFSET 1",
        "SELECT DISTINCT b, count(*) OVER (PARTITION BY b) FROM t",
        "SELECT * FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t) "
        "WHERE r > 2",
        "SELECT id FROM s WHERE v > (SELECT count(*) OVER () FROM t LIMIT 1)",
        "SELECT id, v, rank() OVER (ORDER BY v), "
        "sum(v) OVER (PARTITION BY g ORDER BY id) FROM s ORDER BY id",
        "SELECT a, row_number() OVER (ORDER BY a) FROM t LIMIT 3",
        "SELECT x.a, y.b, count(*) OVER (PARTITION BY x.a) FROM t x JOIN t y "
        "ON x.b = y.b ORDER BY 1, 2",
        "SELECT lag(a) OVER (ORDER BY a) + 1, upper(b) || rank() OVER "
        "(ORDER BY b) FROM t",
        "SELECT typeof(rank() OVER ()), typeof(percent_rank() OVER ()), "
        "typeof(avg(a) OVER ()) FROM t",
        "SELECT a, rank() OVER (ORDER BY a) FROM t UNION ALL "
        "SELECT v, row_number() OVER (ORDER BY id) FROM s ORDER BY 1, 2",
        "SELECT sum(x) OVER (ORDER BY i ROWS BETWEEN 9223372036854775807 "
        "PRECEDING AND 9223372036854775807 FOLLOWING) FROM big WHERE i < 4",
        "SELECT CASE WHEN rank() OVER (ORDER BY a) > 2 THEN 'hi' END FROM t",
        "SELECT (SELECT max(v) OVER () FROM s WHERE s.v = t.a) FROM t",
        "DELETE FROM e WHERE rank() OVER () > 0",
        "UPDATE e SET v = row_number() OVER ()",
        /* A window over no columns (op_window.c kept no room for rows). */
        "SELECT row_number() OVER ()",
        "SELECT 1 UNION ALL SELECT row_number() OVER ()",
        "SELECT count(*) OVER (), rank() OVER () FROM (SELECT 1 UNION ALL "
        "SELECT 2)",
        NULL,
    };

    pair_run_all(state, queries);
}

/* generateWithRecursiveQuery refuses window functions in the last
 * recursive term only: the setup and other recursive terms may use them,
 * and so may a subquery of the last term. */
static void recursive_queries_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT row_number() "
        "OVER () FROM c) SELECT * FROM c LIMIT 3",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT sum(x) OVER () FROM c) "
        "SELECT * FROM c LIMIT 3",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT max(x) OVER () "
        "FROM c GROUP BY x) SELECT * FROM c LIMIT 3",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
        "WHERE x < 3 UNION ALL SELECT count(*) OVER () FROM c) SELECT * FROM "
        "c LIMIT 5",
        "WITH RECURSIVE c(x) AS (SELECT row_number() OVER () UNION ALL SELECT "
        "x + 1 FROM c WHERE x < 3) SELECT * FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT row_number() OVER "
        "() FROM c UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT * FROM c "
        "LIMIT 5",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT (SELECT "
        "row_number() OVER ()) FROM c) SELECT * FROM c LIMIT 3",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
        "WINDOW w AS () LIMIT 3) SELECT * FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT max(x) FROM c) "
        "SELECT * FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT nosuch OVER () "
        "FROM c) SELECT * FROM c",
        NULL,
    };

    pair_run_all(state, queries);
}

/* The errors of prepare and of the first step. */
static void errors_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT row_number() FROM t",
        "SELECT row_number(1) OVER () FROM t",
        "SELECT ntile() OVER () FROM t",
        "SELECT ntile(0) OVER () FROM t",
        "SELECT ntile(a) OVER (ORDER BY a) FROM t",
        "SELECT nth_value(a, 0) OVER (ORDER BY a) FROM t",
        "SELECT nth_value(a, 1.5) OVER (ORDER BY a) FROM t",
        "SELECT nth_value(a, NULL) OVER (ORDER BY a) FROM t",
        "SELECT sum(a) OVER (ROWS -1 PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS 1.5 PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS a PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS abs(-1) PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS NULL PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS BETWEEN 1 FOLLOWING AND -1 FOLLOWING) "
        "FROM t",
        "SELECT sum(a) OVER (RANGE 1 PRECEDING) FROM t",
        "SELECT sum(a) OVER (ORDER BY a, b RANGE 1 PRECEDING) FROM t",
        "SELECT sum(a) OVER (ORDER BY a RANGE -1 PRECEDING) FROM t",
        "SELECT sum(a) OVER (ORDER BY a RANGE 'x' PRECEDING) FROM t",
        "SELECT sum(a) OVER (ORDER BY a RANGE x'01' PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED "
        "PRECEDING) FROM t",
        "SELECT sum(a) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) "
        "FROM t",
        "SELECT sum(a) OVER (ROWS UNBOUNDED FOLLOWING) FROM t",
        "SELECT sum(a) OVER (ROWS 1 FOLLOWING) FROM t",
        "SELECT sum(a) OVER w FROM t",
        "SELECT sum(a) OVER (w ORDER BY a) FROM t WINDOW w AS (ORDER BY b)",
        "SELECT sum(a) OVER (w PARTITION BY a) FROM t "
        "WINDOW w AS (ORDER BY b)",
        "SELECT sum(a) OVER (w) FROM t WINDOW w AS (ROWS 1 PRECEDING)",
        "SELECT 1 FROM t WINDOW a AS (), b AS (c)",
        "SELECT sum(sum(a) OVER ()) FROM t",
        "SELECT sum(a) FROM t WHERE row_number() OVER () > 1",
        "SELECT a FROM t GROUP BY a HAVING row_number() OVER () > 1",
        "SELECT a FROM t GROUP BY row_number() OVER ()",
        "SELECT count(DISTINCT a) OVER () FROM t",
        "SELECT row_number() FILTER (WHERE a) OVER () FROM t",
        "SELECT abs(a) OVER () FROM t",
        "SELECT foo(a) OVER () FROM t",
        "SELECT lag() OVER () FROM t",
        "SELECT first_value(a, b) OVER () FROM t",
        "SELECT min(a, b) OVER () FROM t",
        "SELECT percent_rank(1) OVER () FROM t",
        "SELECT sum(a) OVER (ROWS BETWEEN 1 PRECEDING) FROM t",
        "SELECT sum(a) OVER (PARTITION a) FROM t",
        "SELECT sum(a) OVER (ROWS 1 PRECEDING EXCLUDE) FROM t",
        NULL,
    };

    pair_run_all(state, queries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranking_matches_sqlite),
        cmocka_unit_test(navigation_matches_sqlite),
        cmocka_unit_test(aggregates_match_sqlite),
        cmocka_unit_test(frames_match_sqlite),
        cmocka_unit_test(named_windows_match_sqlite),
        cmocka_unit_test(queries_match_sqlite),
        cmocka_unit_test(recursive_queries_match_sqlite),
        cmocka_unit_test(errors_match_sqlite),
    };

    return cmocka_run_group_tests(tests, pair_setup, pair_state_close);
}
