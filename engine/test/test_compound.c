/* SPDX-License-Identifier: MIT
 *
 * test_compound.c: compound SELECT (UNION, UNION ALL, INTERSECT, EXCEPT)
 * against libsqlite3 3.40.
 *
 * Method: the same tables are made in SQLite and in sinew (sqlite_pair.h),
 * then each query runs in both; the result column names, every row in
 * order with each value's storage class, and the error message if any
 * must be the same. The cases are written by hand to reach SQLite's rules:
 * which of two equal rows a UNION keeps (the last one read without ORDER
 * BY, the right term's with it), the order of the result without ORDER BY
 * (ascending on every column), collations taken from the first term that
 * has one, 1 = 1.0 and NULL = NULL for duplicates, ORDER BY by number, AS
 * name and expression, LIMIT and OFFSET, compounds as FROM, IN, scalar and
 * EXISTS subqueries, and the errors of prepare.
 */
#include "sqlite_pair.h"

static const char *const setup[] = {
    "CREATE TABLE t(a TEXT COLLATE NOCASE, b INTEGER, c)",
    "INSERT INTO t VALUES ('A', 1, 1.0), ('a', 2, 'x'), ('b', 3, NULL), "
    "('B', 4, 2), (NULL, 1, X'01'), ('c ', 2, 1)",
    "CREATE TABLE u(x, y TEXT, z REAL)",
    "INSERT INTO u VALUES (1, 'a', 1), (1.0, 'A', 2.5), (NULL, NULL, NULL), "
    "('1', 'b', 3), (2, 'c', -1), (X'01', 'B', 0)",
    "CREATE TABLE r(k TEXT COLLATE RTRIM, n INT)",
    "INSERT INTO r VALUES ('c', 1), ('c  ', 2), ('d', 3), (NULL, 4)",
    "CREATE TABLE e(v)",
    NULL,
};

static int pair_setup(void **state)
{
    return pair_state_open(state, setup);
}

/* Without ORDER BY: which row of an equal class survives, and the order. */
static void unordered_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a FROM t UNION SELECT 'x'",
        "SELECT 'a' UNION SELECT a FROM t",
        "SELECT a FROM t UNION SELECT a FROM t",
        "SELECT a FROM t UNION ALL SELECT 'a'",
        "SELECT a FROM t INTERSECT SELECT 'A'",
        "SELECT 'A' INTERSECT SELECT a FROM t",
        "SELECT a FROM t EXCEPT SELECT 'x'",
        "SELECT a FROM t EXCEPT SELECT 'B'",
        "SELECT 'B' EXCEPT SELECT a FROM t",
        "SELECT 1 UNION SELECT 1.0",
        "SELECT 1.0 UNION SELECT 1",
        "SELECT x FROM u UNION SELECT z FROM u",
        "SELECT x, y FROM u UNION SELECT b, a FROM t",
        "SELECT c FROM t UNION SELECT x FROM u",
        "SELECT c FROM t INTERSECT SELECT x FROM u",
        "SELECT c FROM t EXCEPT SELECT x FROM u",
        "SELECT NULL UNION SELECT NULL",
        "SELECT NULL, 1 UNION SELECT NULL, 1.0 UNION SELECT 2, NULL",
        "SELECT y FROM u UNION SELECT a FROM t",
        "SELECT a FROM t UNION SELECT y FROM u",
        "SELECT k FROM r UNION SELECT 'c '",
        "SELECT 'c ' UNION SELECT k FROM r",
        "SELECT k FROM r INTERSECT SELECT 'c   '",
        "SELECT y COLLATE NOCASE FROM u UNION SELECT a FROM t",
        "SELECT b FROM t UNION ALL SELECT x FROM u UNION SELECT 2",
        "SELECT b FROM t UNION SELECT x FROM u UNION ALL SELECT 2",
        "SELECT b FROM t EXCEPT SELECT 1 UNION SELECT 9 INTERSECT "
        "SELECT b FROM t",
        "SELECT 1 UNION ALL SELECT 2 UNION SELECT 1 EXCEPT SELECT 5 "
        "INTERSECT SELECT 1",
        "SELECT v FROM e UNION SELECT v FROM e",
        "SELECT v FROM e UNION ALL SELECT 1",
        "SELECT 1 EXCEPT SELECT v FROM e",
        "SELECT 1 INTERSECT SELECT v FROM e",
        "SELECT DISTINCT b FROM t UNION ALL SELECT DISTINCT b FROM t",
        "SELECT count(*) FROM t UNION SELECT sum(b) FROM t",
        "SELECT b, count(*) FROM t GROUP BY b UNION SELECT 1, 2",
        "SELECT b FROM t WHERE b > 2 UNION SELECT x FROM u WHERE x < 2",
        "VALUES (3), (1), (2) UNION SELECT 2",
        "SELECT 5 UNION VALUES (3), (1), (3)",
        "VALUES (1, 2) UNION ALL VALUES (3, 4)",
        "SELECT -0.0 UNION SELECT 0",
        "SELECT 'a' UNION SELECT X'61'",
        /* A term feeding a set operator's index drops its DISTINCT. */
        "SELECT 5 UNION SELECT DISTINCT z FROM u",
        "SELECT DISTINCT x FROM u EXCEPT SELECT 5",
        "SELECT 5 UNION ALL SELECT DISTINCT x FROM u",
        "SELECT 5 UNION SELECT DISTINCT x FROM u ORDER BY 1",
        /* EP_Collate does not reach BETWEEN from its bounds. */
        "SELECT 1 UNION SELECT 1 BETWEEN 2 AND ('_' COLLATE NOCASE) UNION "
        "SELECT 'abc' UNION SELECT 'ABC'",
        "SELECT 1 UNION SELECT 1 + ('_' COLLATE NOCASE) UNION "
        "SELECT 'abc' UNION SELECT 'ABC'",
        "SELECT 9, 9 UNION ALL VALUES (2, CAST(0 AS REAL)), (3, 4)",
        "SELECT 9, 9 UNION VALUES (2, 0.5), (3, 4)",
        "SELECT 9, 9 UNION ALL VALUES (2, CAST(0 AS REAL))",
        "VALUES (2, CAST(0 AS REAL)), (3, 4) UNION ALL SELECT 9, 9",
        NULL,
    };

    pair_run_all(state, queries);
}

static void ordered_matches_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT a FROM t UNION SELECT 'a' ORDER BY 1",
        "SELECT 'a' UNION SELECT a FROM t ORDER BY 1",
        "SELECT a FROM t UNION SELECT a FROM t ORDER BY 1",
        "SELECT a FROM t UNION ALL SELECT 'a' ORDER BY 1",
        "SELECT a FROM t UNION SELECT 'a' ORDER BY 1 DESC",
        "SELECT a, b FROM t UNION SELECT 'a', 2 ORDER BY 1",
        "SELECT a, b FROM t UNION SELECT 'a', 2 ORDER BY 2, 1",
        "SELECT a, b FROM t UNION SELECT 'a', 2 ORDER BY 2 DESC",
        "SELECT 'a' INTERSECT SELECT a FROM t ORDER BY 1",
        "SELECT a FROM t INTERSECT SELECT 'a' ORDER BY 1",
        "SELECT a FROM t EXCEPT SELECT 'x' ORDER BY 1",
        "SELECT a FROM t EXCEPT SELECT 'x' ORDER BY 1 NULLS LAST",
        "SELECT a FROM t UNION SELECT 'zz' ORDER BY 1 COLLATE BINARY",
        "SELECT a AS q, b FROM t UNION SELECT y, x FROM u ORDER BY q",
        "SELECT a, b FROM t UNION SELECT y AS q, x FROM u ORDER BY q",
        "SELECT a, b FROM t UNION ALL SELECT y, x FROM u ORDER BY b, a",
        "SELECT a, b FROM t UNION ALL SELECT y, x FROM u ORDER BY a, b",
        "SELECT b + 1, a FROM t UNION SELECT x, y FROM u ORDER BY b + 1",
        "SELECT x, y FROM u UNION SELECT b, a FROM t ORDER BY b",
        "SELECT x FROM u UNION ALL SELECT b FROM t UNION ALL SELECT c FROM t "
        "ORDER BY 1",
        "SELECT x FROM u UNION SELECT b FROM t UNION ALL SELECT 1 ORDER BY 1",
        "SELECT x FROM u UNION ALL SELECT b FROM t UNION SELECT 1 ORDER BY 1",
        "SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 2 UNION "
        "SELECT 1 ORDER BY 1 DESC",
        "SELECT x FROM u EXCEPT SELECT b FROM t ORDER BY 1",
        "SELECT x FROM u INTERSECT SELECT c FROM t ORDER BY 1",
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY 1 LIMIT 3",
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY 1 LIMIT 3 OFFSET 2",
        "SELECT a FROM t UNION SELECT y FROM u LIMIT 2 OFFSET 1",
        "SELECT a FROM t UNION ALL SELECT y FROM u LIMIT 2, 3",
        "SELECT a FROM t UNION ALL SELECT y FROM u LIMIT -1 OFFSET 4",
        "SELECT a FROM t UNION ALL SELECT y FROM u LIMIT 0",
        "SELECT k FROM r UNION SELECT 'c ' ORDER BY 1",
        "SELECT k, n FROM r UNION ALL SELECT 'c ', 0 ORDER BY 1, 2 DESC",
        "SELECT 2 AS p UNION SELECT 1 ORDER BY p",
        "VALUES ('A', 18), ('_a2' COLLATE NOCASE, 0) UNION ALL SELECT 1, 2 "
        "ORDER BY 1 DESC",
        "VALUES ('A'), ('a' COLLATE NOCASE) UNION SELECT 'a'",
        "SELECT 2 UNION SELECT 1 AS p ORDER BY p",
        "SELECT b FROM t UNION SELECT 2 ORDER BY -1",
        /* A COLLATE in the ORDER BY: the compound becomes a subquery. */
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY a COLLATE binary",
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY 1 COLLATE binary "
        "DESC LIMIT 3",
        "SELECT a FROM t UNION ALL SELECT y FROM u ORDER BY 1 COLLATE binary",
        "SELECT y FROM u UNION SELECT a FROM t ORDER BY 1 COLLATE nocase",
        "SELECT 'q' UNION SELECT a FROM t ORDER BY 1 COLLATE rtrim",
        "SELECT a, b FROM t UNION SELECT y, x FROM u ORDER BY 2, 1 COLLATE "
        "binary",
        "SELECT a, b FROM t INTERSECT SELECT a, b FROM t ORDER BY 1 COLLATE "
        "binary DESC, 2",
        /* The last term's DISTINCT then applies to the whole. */
        "SELECT 1, 1 UNION SELECT 2, 2 UNION ALL SELECT b, b FROM t "
        "UNION ALL SELECT DISTINCT 5, 5 ORDER BY 1, 2 COLLATE binary DESC",
        /* An empty left term: INTERSECT and EXCEPT never run the right. */
        "SELECT v FROM e INTERSECT SELECT abs(-9223372036854775807 - b) "
        "FROM t ORDER BY 1",
        "SELECT v FROM e EXCEPT SELECT abs(-9223372036854775807 - b) "
        "FROM t ORDER BY 1",
        "SELECT v FROM e UNION SELECT abs(-9223372036854775807 - b) "
        "FROM t ORDER BY 1",
        NULL,
    };

    pair_run_all(state, queries);
}

static void subqueries_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT * FROM (SELECT a FROM t UNION SELECT y FROM u)",
        "SELECT q FROM (SELECT a AS q FROM t UNION SELECT y FROM u) "
        "WHERE q = 'B'",
        "SELECT q FROM (SELECT y AS q FROM u UNION SELECT a FROM t) "
        "WHERE q = 'B'",
        "SELECT count(*), sum(b) FROM (SELECT b FROM t UNION ALL "
        "SELECT x FROM u)",
        "SELECT * FROM (SELECT b FROM t UNION SELECT x FROM u) ORDER BY 1 "
        "DESC",
        "SELECT * FROM (SELECT 1 AS o UNION ALL SELECT 2 ORDER BY 1 DESC "
        "LIMIT 1)",
        "SELECT 'B' IN (SELECT a FROM t UNION SELECT 'x'), "
        "'B' IN (SELECT 'x' UNION SELECT a FROM t)",
        "SELECT 5 IN (SELECT y FROM u UNION SELECT 'x'), "
        "1 IN (SELECT 'x' UNION SELECT y FROM u)",
        "SELECT '1' IN (SELECT b FROM t UNION SELECT 'x'), "
        "'1' IN (SELECT 'x' UNION SELECT b FROM t)",
        "SELECT b FROM t WHERE b IN (SELECT 2 UNION SELECT 3)",
        "SELECT b FROM t WHERE b NOT IN (SELECT 2 UNION ALL SELECT NULL)",
        "SELECT (SELECT a FROM t UNION SELECT 'x')",
        "SELECT (SELECT b FROM t UNION SELECT 0 ORDER BY 1 DESC)",
        "SELECT (SELECT 'x' UNION ALL SELECT b FROM t LIMIT 1 OFFSET 2) = 2",
        "SELECT EXISTS (SELECT 1 EXCEPT SELECT 1), "
        "EXISTS (SELECT 1 UNION SELECT 2)",
        "SELECT (SELECT 1 UNION SELECT 2, 3)",
        "SELECT 1 IN (SELECT 1, 2 UNION SELECT 3, 4)",
        "SELECT * FROM (VALUES (1) UNION SELECT 2) AS s",
        /* A FROM subquery's REAL column reads integers as REAL. */
        "SELECT * FROM (SELECT z FROM u UNION SELECT 9)",
        /* Columns of one name are told apart (a, a:1). */
        "SELECT * FROM (SELECT b, b + 1 AS b FROM t UNION ALL SELECT 5, 6)",
        "SELECT * FROM (SELECT 1 AS a, 2 AS a, 3 AS A, 4 AS 'a:1')",
        "SELECT * FROM (SELECT z FROM u UNION ALL SELECT 9) WHERE z > 1",
        "SELECT * FROM (SELECT 9 UNION SELECT z FROM u)",
        "SELECT q, typeof(q) FROM (SELECT y AS q FROM u UNION SELECT 5)",
        "SELECT q FROM (SELECT 'x' AS q UNION ALL SELECT b FROM t) "
        "WHERE q = 2",
        "SELECT x, x = 1 FROM (SELECT c AS x FROM t UNION ALL SELECT x "
        "FROM u)",
        "SELECT 9 IN (SELECT z FROM u UNION SELECT 9)",
        "INSERT INTO e SELECT b FROM t UNION SELECT x FROM u",
        "SELECT v, typeof(v) FROM e",
        "INSERT INTO e SELECT v FROM e UNION ALL SELECT 7",
        "SELECT v, typeof(v) FROM e ORDER BY rowid",
        "DELETE FROM e",
        NULL,
    };

    pair_run_all(state, queries);
}

static void errors_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "SELECT 1 UNION SELECT 2, 3",
        "SELECT 1, 2 UNION SELECT 1 UNION SELECT 1, 2, 3",
        "SELECT 1 INTERSECT SELECT 2, 3",
        "SELECT 1 EXCEPT SELECT 2, 3",
        "SELECT 1 UNION ALL SELECT 2, 3",
        "SELECT 1 UNION SELECT 2 ORDER BY 3",
        "SELECT 1 UNION SELECT 2 ORDER BY 0",
        "SELECT 1 AS x UNION SELECT 2 ORDER BY y",
        "SELECT 1 UNION SELECT 2 ORDER BY 1, 2",
        "SELECT 1 UNION SELECT 2 ORDER BY 1, 1 + 1",
        "SELECT 1 ORDER BY 1 UNION SELECT 2",
        "SELECT 1 LIMIT 1 UNION SELECT 2",
        "SELECT 1 UNION SELECT 2 ORDER BY 1 UNION SELECT 3",
        "SELECT 1 UNION ALL SELECT 2 LIMIT 1 EXCEPT SELECT 3",
        "SELECT * FROM nosuch1 UNION SELECT * FROM nosuch2",
        "SELECT nosuch FROM t UNION SELECT 1",
        "SELECT 1 UNION SELECT nosuch FROM t",
        "SELECT x FROM t UNION SELECT 1 ORDER BY x",
        "SELECT 1 UNION SELECT 2 ORDER BY 1 COLLATE nosuch",
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY nosuch COLLATE binary",
        "SELECT a, b FROM t UNION SELECT y, x FROM u ORDER BY 2, a || 'x' "
        "COLLATE nocase",
        "SELECT a FROM t UNION SELECT y FROM u ORDER BY 2 COLLATE binary",
        "SELECT 1 UNION VALUES (2) ORDER BY 1",
        "SELECT 1 UNION",
        "SELECT 1 UNION ALL",
        "SELECT 1 UNION WITH x AS (SELECT 1) SELECT 2",
        "SELECT 1 UNION SELECT 2 LIMIT 'a'",
        "SELECT 1 UNION SELECT 2 ORDER BY 1 LIMIT 1 OFFSET 'x'",
        "SELECT b FROM t UNION SELECT abs(-9223372036854775807 - b) FROM t",
        "SELECT a FROM t UNION ALL SELECT abs(-9223372036854775807 - b) "
        "FROM t LIMIT 2",
        NULL,
    };

    pair_run_all(state, queries);
}

/* Two neighbours of compound SELECT: "x IN table" (x IN (SELECT * FROM
 * table)) and DISTINCT aggregates of more than one argument. */
static void in_table_and_distinct_match_sqlite(void **state)
{
    static const char *const queries[] = {
        "CREATE TABLE one(w INTEGER)",
        "INSERT INTO one VALUES (1), (3), (NULL)",
        "SELECT b, b IN one, b NOT IN one FROM t",
        "SELECT x, x IN one FROM u",
        "SELECT a FROM t WHERE b IN one",
        "SELECT 2 IN e, NULL IN e, 2 NOT IN e",
        "SELECT 1 IN t",
        "SELECT 1 IN nosuch",
        "SELECT a IN r FROM t",
        "SELECT group_concat(DISTINCT a, ':') FROM t",
        "SELECT group_concat(DISTINCT a) FROM t",
        "SELECT count(DISTINCT a, b) FROM t",
        "SELECT group_concat(DISTINCT a, ':') FROM t ORDER BY nosuch",
        "SELECT b, group_concat(DISTINCT a, b) FROM t GROUP BY b",
        "SELECT b FROM t GROUP BY b HAVING group_concat(DISTINCT a, 'x') "
        "IS NULL",
        "DROP TABLE one",
        NULL,
    };

    pair_run_all(state, queries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unordered_matches_sqlite),
        cmocka_unit_test(ordered_matches_sqlite),
        cmocka_unit_test(subqueries_match_sqlite),
        cmocka_unit_test(errors_match_sqlite),
        cmocka_unit_test(in_table_and_distinct_match_sqlite),
    };

    return cmocka_run_group_tests(tests, pair_setup, pair_state_close);
}
