/* SPDX-License-Identifier: MIT
 *
 * test_correlated.c: correlated subqueries (expr_outer.c) against
 * libsqlite3.
 *
 * Goal: a subquery that reads columns of its enclosing queries gives
 * SQLite's result in every clause SQLite allows it (WHERE, result columns,
 * HAVING, ORDER BY, ON, CASE, aggregate arguments, UPDATE, DELETE, INSERT
 * ... SELECT), through scalar, EXISTS, NOT EXISTS, IN and NOT IN, nested
 * two levels deep, with NULLs, joins and aggregates on either side, and
 * SQLite's errors. Method: each statement runs in libsqlite3 and in sinew
 * on the same tables; their outcomes (column names, rows with storage
 * classes, error message) must be equal. A query without ORDER BY has no
 * defined row order, so its rows are compared sorted; a query written
 * with a leading '!' is compared in order.
 */
#include <stdlib.h>

#include "sqlite_pair.h"

#include "semi.h"

/* Runs every statement of sqls (NULL-terminated) in a new pair. */
static void run_all(const char *const *sqls)
{
    struct pair p;

    pair_open(&p);
    pair_run_rows(&p, sqls);
    pair_close(&p);
}

#define SCHEMA                                                                 \
    "create table t1(a integer, b integer, c integer, d text)",                \
        "create table t2(k integer, v integer, w text collate nocase)",        \
        "create table t3(p, q)",                                               \
        "insert into t1 values (1, 10, 1, 'x'), (2, 20, 1, 'y'), "             \
        "(3, 30, 2, 'X'), (4, null, 2, null), (5, 50, null, 'z'), "            \
        "(6, 60, 3, 'y')",                                                     \
        "insert into t2 values (1, 5, 'A'), (1, 15, 'b'), (2, 25, 'a'), "      \
        "(2, null, 'B'), (null, 35, 'c'), (7, 70, null)",                      \
        "insert into t3 values (1, 'x'), (2, 'Y'), (3, null), (null, 'z')"

static void correlated_where(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select a from t1 where b > (select avg(b) from t1 as x where x.c = "
        "t1.c)",
        "select a from t1 where b >= (select avg(b) from t1 as x "
        "where x.c = t1.c)",
        "select a, b from t1 where exists (select 1 from t2 where t2.k = "
        "t1.c)",
        "select a, b from t1 where not exists (select 1 from t2 where t2.k = "
        "t1.c)",
        "select a from t1 where b in (select v + 5 from t2 where t2.k = t1.c)",
        "select a from t1 where b not in (select v + 5 from t2 where t2.k = "
        "t1.c)",
        "select a from t1 where b not in (select v from t2 where t2.k = t1.c "
        "and v is not null)",
        "select a from t1 where c = (select k from t2 where v = t1.b - 5)",
        "select a from t1 where (select count(*) from t2 where k = c) = 2",
        "select a from t1 where (select count(*) from t2 where k = t1.a) > 0",
        "select a from t1 where (select max(v) from t2 where k <= t1.c) > 20",
        "select a from t1 where d in (select w from t2 where k = t1.c)",
        "select a from t1 where d = (select w from t2 where k = t1.c "
        "order by v limit 1)",
        "select a from t1 where exists (select * from t3 where p = t1.a and "
        "q = t1.d)",
        "select a from t1 where exists (select * from t3 where p = t1.a and "
        "q = t1.d collate nocase)",
        "select * from t3 where exists (select 1 from t1 where t1.d = t3.q)",
        "select * from t3 where p is not (select max(c) from t1 where "
        "t1.d = t3.q)",
        "select a from t1 where (select t1.b)",
        "select a from t1 where (select b) > 25",
        "select a from t1 where exists (select 1 where t1.b > 25)",
        "select a from t1 where (select sum(v) from t2 where t2.k = t1.c) "
        "is null",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_results(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select a, (select count(*) from t2 where k = t1.c) from t1",
        "select a, (select sum(v) from t2 where k = t1.c) as s from t1",
        "select a, (select w from t2 where k = t1.c order by v desc) from t1",
        "select a, exists (select 1 from t2 where k = t1.c) from t1",
        "select a, c in (select k from t2 where v > t1.b) from t1",
        "select a, c not in (select k from t2 where v > t1.b) from t1",
        "select a, (select t1.d) from t1",
        "select a, (select d), (select a + b) from t1",
        "select a, case when exists (select 1 from t2 where k = t1.c) then "
        "'yes' else 'no' end from t1",
        "select a, case (select count(*) from t2 where k = t1.c) when 2 then "
        "'two' when 1 then 'one' else 'other' end from t1",
        "select a, coalesce((select v from t2 where k = t1.a and v > 10), "
        "-1) from t1",
        "select t3.p, (select group_concat(d, ',') from t1 where t1.c = "
        "t3.p) from t3",
        "select p, (select d from t1 where t1.a = t3.p) || q from t3",
        "select (select typeof(t3.q)), typeof((select q)) from t3",
        "select a, (select v from t2 where k = t1.c) from t1 limit 3",
        "!select a, (select count(*) from t1 as x where x.a < t1.a) as rank "
        "from t1 order by 2 desc",
        "select distinct (select count(*) from t2 where k = t1.c) from t1",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_clauses(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "!select a from t1 order by (select count(*) from t2 where k = "
        "t1.c), a",
        "!select a from t1 order by (select max(v) from t2 where k = t1.c) "
        "desc, a",
        "select c, count(*) from t1 group by c having (select count(*) from "
        "t2 where k = t1.c) > 1",
        "select c, count(*) from t1 group by c having exists (select 1 from "
        "t2 where k = c)",
        "select c, (select count(*) from t2 where k = t1.c) from t1 "
        "group by c",
        "select c, sum(b), (select sum(v) from t2 where k = t1.c) from t1 "
        "group by c",
        "select c, (select max(v) from t2 where v < sum(t1.b)) from t1 "
        "group by c",
        "select sum((select count(*) from t2 where k = t1.c)) from t1",
        "select count(*) filter (where exists (select 1 from t2 where k = "
        "t1.c)) from t1",
        "select max((select v from t2 where k = t1.c order by v)) from t1",
        "select t1.a, t3.q from t1 join t3 on t3.p = (select max(k) from t2 "
        "where k <= t1.c)",
        "select t1.a, t3.q from t1 left join t3 on exists (select 1 from t2 "
        "where t2.k = t1.c and t2.k = t3.p)",
        "select t1.a, t3.p from t1, t3 where t3.p = t1.c and exists (select "
        "1 from t2 where t2.k = t3.p and t2.v > t1.b)",
        "select a from t1 where (select count(*) from t2 join t3 on t2.k = "
        "t3.p where t3.p = t1.c) > 0",
        "select a, (select count(*) from t2, t3 where k = p and p = t1.c) "
        "from t1",
        "select a from t1 where b > (select min(b) from t1 as y where "
        "y.c = t1.c)",
        "select x.a, (select count(*) from t2 where k = x.c) from (select * "
        "from t1 where a > 2) as x",
        "select a from t1 where (select count(*) from t2 where k = t1.c) "
        "between 1 and 2",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_nested(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select a from t1 where exists (select 1 from t2 where k = t1.c and "
        "exists (select 1 from t3 where p = t2.k and p = t1.c))",
        "select a, (select count(*) from t2 where exists (select 1 from t3 "
        "where t3.p = t1.c)) from t1",
        "select a, (select (select t1.a + t2.v) from t2 where k = t1.c "
        "order by v) from t1",
        "select a, (select max((select count(*) from t3 where p <= t2.k + "
        "t1.a)) from t2) from t1",
        "select a from t1 where a in (select k from t2 where v in (select "
        "b - 5 from t1 as y where y.a = t1.a))",
        "select (select (select (select t1.a))) from t1",
        "select a, (select count(*) from t1 as y where y.c = t1.c and "
        "y.a < (select max(a) from t1 as z where z.c = y.c)) from t1",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_aggregates(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select (select count(t1.a)) from t1",
        "select (select count(t1.a) from t2) from t1",
        "select (select count(t1.a) from t2 where 0) from t1",
        "select (select sum(t1.b) from t2 where k = 1) from t1",
        "select c, (select sum(t1.b) + count(*) from t2 where k = t1.c) "
        "from t1 group by c",
        "select c, (select max(t1.a + t2.v) from t2) from t1 group by c",
        "select a, (select count(t1.a)) from t1 group by a",
        "select (select (select sum(t1.a))) from t1",
        "select count(*), (select sum(t1.b) from t2 limit 1) from t1",
        "select c from t1 group by c having (select count(t1.a)) > 1",
        "select a from t1 order by (select count(t1.a))",
        "select c, sum(b), (select sum(t1.b)) from t1 group by c",
        "select min(a), (select max(t1.a) from t3 where p = t1.c) from t1",
        "select (select group_concat(t1.d)) from t1 where a < 4",
        "select (select count(*) from t2 where v > avg(t1.b)) from t1",
        "select (select count(t1.a) from t2 group by k) from t1",
        "select c, (select count(t1.a) filter (where t1.b > 15)) from t1 "
        "group by c",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_shapes(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select a, (select v from t2 where k = t1.c union select b from t1 "
        "as y where y.a = t1.a order by 1 limit 1) from t1",
        "select a from t1 where a in (select k from t2 where v > t1.b union "
        "all select p from t3 where q = t1.d)",
        "select a, (select count(*) from (select * from t2 where k = t1.c)) "
        "from t1",
        "select a, (select v from t2 order by abs(v - t1.b), v limit 1) "
        "from t1",
        "select a, (select t1.b as x from t2 order by x limit 1) from t1",
        "select a, (select t1.b from t2 order by 1 limit 1) from t1",
        "select a, (select t1.b + v from t2 order by t1.b limit 1) from t1",
        "select a, (select count(*) from t2 group by t1.c) from t1",
        "select a, (select count(*) from t2 group by k having k = t1.c) "
        "from t1",
        "select a, (select k from t2 group by k order by count(*) + t1.a "
        "desc, k limit 1) from t1",
        "select a, (select v from t2 where k = t1.c limit 1 offset 1) from t1",
        "select a, (select v from t2 limit t1.c) from t1",
        "select a from t1 where a in (select t1.a)",
        "select a from t1 where a not in (select t1.b)",
        "select (select a from t1) from t1",
        "select (select t1.a from t1 as x where x.a = 2) from t1",
        "select (select x.a from t1 as x where x.a = t1.a + 1) from t1",
        "select a, (select count(*) from t2 where w = t1.d) from t1",
        "select a, (select count(*) from t2 where t1.d = w) from t1",
        "select a, (select count(*) from t3 where q = t1.d) from t1",
        "select a, (select count(*) from t3 where t1.d = q) from t1",
        "select a, (select 1 from t2 where k = t1.c and v like '%5') from t1",
        "select a, (select w from t2 where k = t1.c and w like t1.d) from t1",
        "select a, (select rowid from t2 where k = t1.c) from t1",
        "select a, (select t1.rowid) from t1",
        "select a, (select count(*) from t2 where t2.rowid = t1.a) from t1",
        "select a from t1 where exists (select 1 from t2 where k = t1.c) "
        "limit 2",
        "select a, (select v from t2 where k = t1.c) as s from t1 "
        "where s > 10",
        "select a as z from t1 where exists (select 1 from t2 where k = z)",
        "select a, (select sum(v) from t2 where k in (t1.c, t1.a)) from t1",
        "select a, (select sum(v) from t2 where k between t1.c and t1.a) "
        "from t1",
        "select a, (select case when t1.c = k then 'same' end from t2 "
        "where v = 5) from t1",
        "select a, (select json_group_array(v) from t2 where k = t1.c) "
        "from t1",
        "select a, (select typeof(t1.d) || typeof(t1.b)) from t1",
        "select a, (select count(*) from t2 join t3 on t3.p = t2.k and "
        "t3.p = t1.c) from t1",
        "select a, (select count(*) from t2 join t3 on t1.c = 2) from t1",
        "select a, (select count(t3.p) from t2 left join t3 on t3.p = t2.k "
        "and t1.a > 2) from t1",
        "select a, (select count(*) from t2, t3 where t1.c = 1) from t1",
        "select a, (select group_concat(t3.q) from t2 join t3 on "
        "t2.k = t3.p where t2.v > t1.b) from t1",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_indexes(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "create index t2k on t2(k)",
        "create table big(id integer primary key, g integer, v text)",
        "create unique index bigv on big(v)",
        "create table digits(d)",
        "insert into digits values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        "insert into big select n, n % 13, 'v' || n from (select a.d * 1000 "
        "+ b.d * 100 + c.d * 10 + e.d as n from digits a, digits b, "
        "digits c, digits e) where n between 1 and 2000",
        "select a, (select count(*) from t2 where k = t1.c) from t1",
        "select a from t1 where exists (select 1 from t2 where k = t1.c and "
        "v > t1.b)",
        "select count(*), sum((select g from big where id = t1.a * 300)) "
        "from t1",
        "select a, (select id from big where v = 'v' || t1.b) from t1",
        "select g, (select count(*) from big as y where y.g = big.g) from "
        "big where id < 20",
        "select count(*) from big where exists (select 1 from big as y "
        "where y.id = big.id + 1 and y.g = 0)",
        "select count(*) from big where g not in (select g from big as y "
        "where y.id between big.id and big.id + 2)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_dml(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "create table u(k integer, total integer)",
        "insert into u select distinct c, (select sum(b) from t1 as x where "
        "x.c = t1.c) from t1",
        "select * from u",
        "update u set total = (select max(v) from t2 where t2.k = u.k)",
        "select * from u",
        "update u set total = total + 1 where exists (select 1 from t3 "
        "where p = u.k)",
        "select * from u",
        "delete from u where total is null and not exists (select 1 from t1 "
        "where t1.c = u.k)",
        "select * from u",
        "delete from u where k in (select k from t2 where v > u.total)",
        "select * from u",
        "update t1 set b = (select count(*) from t1 as y where y.c = t1.c)",
        "select * from t1",
        "update t1 set b = (select max(b) from t1 as y where y.a < t1.a)",
        "select * from t1",
        "delete from t1 where a = (select max(a) from t1 as y where "
        "y.c = t1.c)",
        "select * from t1",
        "insert into u values (9, 9) returning k, (select count(*) from t1 "
        "where t1.c = k - 8)",
        "create table uk(k integer primary key, n integer)",
        "insert into uk values (1, 0), (2, 0)",
        "insert into uk values (1, 5), (3, 7) on conflict(k) do update set "
        "n = (select count(*) from t1 where t1.c = excluded.k) + uk.n",
        "select * from uk",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated_errors(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "select a from t1 where b > (select avg(b) from t1 as x where x.c = "
        "t9.c)",
        "select a from t1 where exists (select 1 from t2 where k = zz)",
        "select a from t1, t3 where exists (select 1 from t2 where k = p "
        "and v = a)",
        "select (select x.a from t1) from t1 as x, t1 as y where "
        "(select a from t2)",
        "select a from t1 where (select k, v from t2 where k = t1.c)",
        "select * from t1 where (select count(t1.a))",
        "select * from (select t1.a) , t1",
        "select a from t1 as p join t1 as q on (select p.a)",
        "select (select a) from t1 as x, t1 as y",
        "select (select x.zz) from t1 as x",
        "select (select count(t1.a)) from t1 group by (select count(t1.a))",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* ---- decorrelated EXISTS (semi.h, expr_semi.c) ----
 *
 * "EXISTS (SELECT ... FROM u WHERE u.c = <outer> AND <terms over u>)" on
 * a table without a usable index is answered from a hash of u built once
 * per execution. engine__semi_builds() counts the builds. */

#define SEMI_SCHEMA                                                            \
    "create table t(id integer primary key, x integer, y text, z, r real)",    \
        "create table u(k integer, s text, n text collate nocase, v, "         \
        "f real, flag integer)",                                               \
        "create table e(k integer)", "create table w(k text, j integer)",      \
        "insert into t values (1, 1, '1', 1, 1.0), (2, 2, 'a', 'A', 2.5), "    \
        "(3, null, null, null, null), (4, 4, '04', '4', 4.0), "                \
        "(5, 10, 'B', x'01', 10.0), (6, 1, 'b', 1.0, 1.5), "                   \
        "(7, 7, ' 7', '7.0', 7.0)",                                            \
        "insert into u values (1, '1', 'A', 1, 1.0, 1), "                      \
        "(1, 'x', 'b', '1', 2.5, 0), (2, 'a', 'a', null, 4.0, 1), "            \
        "(null, null, null, null, null, 1), (4, '4', 'B', 4.0, 10, 0), "       \
        "(10, '10', 'c', x'01', 1.5, null), (2, '2', 'A', 'a', 2, 1), "        \
        "(7, '7', 'b', 7, 7.0, 1)",                                            \
        "insert into w values ('1', 1), ('2', 2), (null, null), ('10', 10)"

static void correlated_semi(void **state)
{
    static const char *const sqls[] = {
        SEMI_SCHEMA,
        "select id from t where exists (select 1 from u where u.k = t.x)",
        "select id from t where not exists (select 1 from u where u.k = t.x)",
        "select id from t where exists (select * from u where u.k = t.x and "
        "u.flag = 1)",
        "select id from t where exists (select s, n from u where t.x = u.k "
        "and flag)",
        /* affinities of the "=": INTEGER, TEXT, none, REAL */
        "select id from t where exists (select 1 from u where u.k = t.y)",
        "select id from t where exists (select 1 from u where u.s = t.x)",
        "select id from t where exists (select 1 from u where u.s = t.y)",
        "select id from t where exists (select 1 from u where u.v = t.z)",
        "select id from t where exists (select 1 from u where u.v = t.x)",
        "select id from t where exists (select 1 from u where u.v = t.y)",
        "select id from t where exists (select 1 from u where u.k = t.z)",
        "select id from t where exists (select 1 from u where u.f = t.x)",
        "select id from t where exists (select 1 from u where u.f = t.r)",
        "select id from t where exists (select 1 from u where u.k = t.r)",
        "select id from t where exists (select 1 from u where u.s = t.r)",
        "select id from t where exists (select 1 from u where u.v = t.r)",
        "select id from t where exists (select 1 from u where +u.k = t.y)",
        "select id from t where exists (select 1 from u where u.k = +t.y)",
        "select id from t where exists (select 1 from u where "
        "cast(u.s as integer) = t.z)",
        /* collations */
        "select id from t where exists (select 1 from u where u.n = t.y)",
        "select id from t where exists (select 1 from u where t.y = u.n)",
        "select id from t where exists (select 1 from u where u.s = t.y "
        "collate nocase)",
        "select id from t where exists (select 1 from u where u.n = t.y "
        "collate binary)",
        "select id from t where exists (select 1 from u where u.s = t.y "
        "collate rtrim)",
        "select id from t where exists (select 1 from u where u.n = t.z)",
        /* expressions on either side, several equalities */
        "select id from t where exists (select 1 from u where u.k = t.x + 1)",
        "select id from t where exists (select 1 from u where u.k + 1 = t.x)",
        "select id from t where exists (select 1 from u where u.k = -t.x)",
        "select id from t where exists (select 1 from u where u.s = t.y || "
        "'')",
        "select id from t where exists (select 1 from u where u.k * 2 = t.x "
        "* 2 and u.s = t.y)",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "u.k = t.id)",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "u.n = t.y)",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "u.v is null)",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "u.flag between 0 and 1 and u.s in ('1', 'a', 'x'))",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "(u.flag or u.v = 4))",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "case when u.f > 2 then 1 else 0 end)",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "0)",
        "select id from t where exists (select 1 from u where k = x)",
        "select id from t where exists (select 1 from u as q where q.k = t.x "
        "and q.s is not null)",
        "select id from t where exists (select 1 from u where u.k = t.x "
        "and u.k = 1 / 0)",
        "select id from t where exists (select 1 from u where u.k = t.x "
        "and u.k = 9223372036854775807 + 1)",
        /* empty inner table, NULL keys */
        "select id from t where exists (select 1 from e where e.k = t.x)",
        "select id from t where not exists (select 1 from e where e.k = t.x)",
        "select id from t where not exists (select 1 from u where u.k = t.x "
        "and u.flag = 5)",
        "select id from t where exists (select 1 from u where u.k = null + "
        "t.x)",
        /* where EXISTS stands */
        "select id, exists (select 1 from u where u.k = t.x) from t",
        "select id, not exists (select 1 from u where u.k = t.x) from t",
        "select id from t where t.x > 3 or exists (select 1 from u where "
        "u.k = t.x)",
        "select id, case when exists (select 1 from u where u.s = t.y) then "
        "'y' when t.x > 2 then 'z' else 'n' end from t",
        "select x, exists (select 1 from u where u.k = t.x) from t group by "
        "x",
        "select count(*) from t where exists (select 1 from u where u.k = "
        "t.x)",
        "select id from t order by exists (select 1 from u where u.k = t.x), "
        "id",
        "select t.id, w.k from t join w on exists (select 1 from u where "
        "u.k = t.x and u.s = w.k)",
        "select id from t where exists (select 1 from u where u.k = t.x) and "
        "exists (select 1 from u where u.s = t.y)",
        /* nested: the inner EXISTS reads u's row */
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "exists (select 1 from w where w.j = u.k))",
        "select k, s from u where exists (select 1 from w where w.j = u.k and "
        "exists (select 1 from t where t.x = w.j))",
        "select id from t where exists (select 1 from u where u.k = t.x and "
        "u.flag = (select max(flag) from u))",
        "select (select count(*) from t where exists (select 1 from w "
        "where w.j = t.x and w.k = u.s)) from u",
        /* aggregate enclosing queries, views, CTEs, two levels up */
        "select x, count(*) from t group by x having exists (select 1 from "
        "u where u.k = t.x)",
        "select exists (select 1 from u where u.s = t.y) from t group by x",
        "select x, exists (select 1 from u where u.k = t.x) from t group by "
        "x having count(*) > 0",
        "select * from (select id, x from t where exists (select 1 from u "
        "where u.k = t.x)) where id > 1",
        "with c as (select * from t where not exists (select 1 from u where "
        "u.k = t.x)) select id from c",
        "create view vt as select id from t where exists (select 1 from u "
        "where u.n = t.y)",
        "select * from vt",
        "select id from t where exists (select 1 from w where w.j = t.x and "
        "exists (select 1 from u where u.k = t.id and u.s = w.k))",
        "select id, (select count(*) from w where exists (select 1 from u "
        "where u.k = w.j and u.k <> t.id)) from t",
        /* the same table inside and out */
        "select k, s from u where exists (select 1 from u as u2 where u2.s "
        "= u.k and u2.flag = 1)",
        /* shapes left to the correlated path */
        "select id from t where exists (select count(*) from u where u.k = "
        "t.x)",
        "select id from t where exists (select 1 from u where u.k = t.x "
        "limit 0)",
        "select id from t where exists (select 1 from u where u.k = t.x "
        "and abs(u.f) > 2)",
        "select id from t where exists (select 1 from u where u.k > t.x)",
        "select id from t where exists (select 1 from u where u.k = t.x or "
        "u.s = t.y)",
        NULL,
    };
    static const char *const writes[] = {
        "!delete from w where not exists (select 1 from u where u.k = w.j)",
        "select * from w",
        "!update u set flag = 9 where exists (select 1 from u as u2 where "
        "u2.k = u.k + 1)",
        "select * from u",
        "!insert into w select s, k from u where not exists (select 1 from "
        "w where w.j = u.k)",
        "select * from w",
        "!update u set k = k + 1 where exists (select 1 from u as u2 where "
        "u2.k = u.k + 1)",
        "select * from u",
        "!update u set k = k - 1 where not exists (select 1 from u as u2 "
        "where u2.k = u.k - 1 and u2.flag = u.flag)",
        "select * from u",
        "!insert into u(k, flag) select k + 1, 0 from u where not exists "
        "(select 1 from u as u2 where u2.k = u.k + 1)",
        "select * from u",
        "!delete from u where exists (select 1 from u as u2 where u2.k = u.k "
        "and u2.rowid > u.rowid)",
        "select * from u",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_run_rows(&p, sqls);
    assert_true(engine__semi_builds(p.db, "u") > 30);
    assert_true(engine__semi_builds(p.db, "e") > 0);
    pair_run_rows(&p, writes);
    pair_close(&p);
}

/* Many rows, many of them under one key, chained in the same buckets. */
static void correlated_semi_large(void **state)
{
    static const char *const sqls[] = {
        "create table digits(d)",
        "insert into digits values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        "create table o(a integer, b text)",
        "create table i(g integer, h text, m)",
        "insert into o select n, 'k' || (n % 50) from (select a.d * 100 + "
        "b.d * 10 + c.d as n from digits a, digits b, digits c)",
        "insert into i select n % 700, 'K' || (n % 77), case when n % 3 then "
        "n % 700 else null end from (select a.d * 1000 + b.d * 100 + c.d * "
        "10 + e.d as n from digits a, digits b, digits c, digits e)",
        "select count(*), sum(a) from o where exists (select 1 from i where "
        "i.g = o.a)",
        "select count(*), sum(a) from o where not exists (select 1 from i "
        "where i.g = o.a and i.m is null)",
        "select count(*), sum(a) from o where exists (select 1 from i where "
        "i.h = o.b collate nocase and i.g = o.a)",
        "select count(*) from o where exists (select 1 from i where i.m = "
        "o.a * 2)",
        "select count(*) from o where exists (select 1 from i where i.h = "
        "o.b)",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_run_rows(&p, sqls);
    assert_int_equal(engine__semi_builds(p.db, "i"), 5);
    pair_close(&p);
}

/* The hash is built once per execution, at the first row that needs it,
 * and not where the correlated plan is the better one or the only right
 * one. */
static void correlated_semi_builds(void **state)
{
    static const char *const schema[] = {
        SEMI_SCHEMA,
        "create table ix(k integer, s text)",
        "create index ixk on ix(k)",
        "insert into ix select k, s from u",
        NULL,
    };
    static const struct {
        const char *sql;
        const char *table;
        uint64_t builds;
    } cases[] = {
        {"select id from t where exists (select 1 from u where u.k = t.x)", "u",
         1},
        {"select id, exists (select 1 from u where u.k = t.x), not exists "
         "(select 1 from u where u.s = t.y) from t",
         "u", 2},
        /* no row reaches it: never built (SQLite never runs it) */
        {"select id from t where id > 100 and exists (select 1 from u where "
         "u.k = t.x)",
         "u", 0},
        {"select id from t where exists (select 1 from e where e.k = t.x)", "e",
         1},
        /* an index serves "k = t.x": looked up per row instead */
        {"select id from t where exists (select 1 from ix where ix.k = t.x)",
         "ix", 0},
        {"select id from t where exists (select 1 from u where u.rowid = "
         "t.x)",
         "u", 0},
        /* a function may raise an error SQLite would not reach */
        {"select id from t where exists (select 1 from u where u.k = t.x and "
         "abs(u.k) > 0)",
         "u", 0},
        {"select id from t where exists (select 1 from u where u.k = "
         "abs(t.x))",
         "u", 0},
        /* an outer reference outside an equality */
        {"select id from t where exists (select 1 from u where u.k = t.x and "
         "u.f > t.r)",
         "u", 0},
        {"select id from t where exists (select 1 from u indexed by ixk "
         "where u.k = t.x)",
         "u", 0},
        {"select id from t where exists (select 1 from u not indexed where "
         "u.k = t.x)",
         "u", 0},
    };
    static char got[PAIR_OUTCOME_SIZE];
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_run_rows(&p, schema);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t before = engine__semi_builds(p.db, cases[i].table);
        const char *one[] = {cases[i].sql, NULL};

        pair_run_rows(&p, one);
        if (engine__semi_builds(p.db, cases[i].table) - before !=
            cases[i].builds) {
            fail_msg(
                "%s: %llu builds, expected %llu", cases[i].sql,
                (unsigned long long)(engine__semi_builds(p.db, cases[i].table) -
                                     before),
                (unsigned long long)cases[i].builds);
        }
    }
    /* A prepared statement run again builds again (the table may have
     * changed), and sees the new rows. */
    for (int run = 0; run < 2; run++) {
        uint64_t before = engine__semi_builds(p.db, "u");
        const char *one[] = {
            "select id from t where exists (select 1 from u where u.k = t.x)",
            run == 0 ? "insert into u(k) values (3)" : "select 1", NULL};

        pair_run_rows(&p, one);
        assert_int_equal(engine__semi_builds(p.db, "u") - before, 1);
    }
    engine_outcome(p.db, "select 1", got);
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(correlated_where),
        cmocka_unit_test(correlated_results),
        cmocka_unit_test(correlated_clauses),
        cmocka_unit_test(correlated_nested),
        cmocka_unit_test(correlated_aggregates),
        cmocka_unit_test(correlated_shapes),
        cmocka_unit_test(correlated_indexes),
        cmocka_unit_test(correlated_dml),
        cmocka_unit_test(correlated_errors),
        cmocka_unit_test(correlated_semi),
        cmocka_unit_test(correlated_semi_large),
        cmocka_unit_test(correlated_semi_builds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
