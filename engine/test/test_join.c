/* SPDX-License-Identifier: MIT
 *
 * test_join.c: joins (plan_join.c, op_join.c) against libsqlite3.
 *
 * Goal: every join form SQLite 3.40 has (comma, CROSS, INNER, LEFT,
 * RIGHT, FULL, USING, NATURAL) gives SQLite's result, value by value and
 * type by type, and SQLite's errors. Method: each query runs in
 * libsqlite3 and in sinew on the same tables; their outcomes (column
 * names, rows with storage classes, error message) must be equal. A query
 * without ORDER BY has no defined row order, so its rows are compared
 * sorted; a query written with a leading '!' is compared in order.
 */
#include <stdlib.h>

#include "sqlite_pair.h"

/* Runs every statement of sqls (NULL-terminated) in both, comparing. */
static void run_all(const char *const *sqls)
{
    struct pair p;

    pair_open(&p);
    pair_run_rows(&p, sqls);
    pair_close(&p);
}

#define SCHEMA_SMALL                                                           \
    "create table a(x int, y text)", "create table b(x int, z text)",          \
        "create table c(x, w)",                                                \
        "insert into a values(1,'a1'),(2,'a2'),(null,'an')",                   \
        "insert into b values(1,'b1'),(3,'b3'),(null,'bn')",                   \
        "insert into c values(1,'c1'),(2,'c2')"

static void join_forms(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_SMALL,
        "select * from a, b",
        "select * from a cross join b where a.x < b.x",
        "select * from a join b on a.x < b.x",
        "select * from a inner join b on a.x = b.x",
        "select * from a left join b on a.x = b.x",
        "select * from a left outer join b on a.x = b.x and b.z = 'b1'",
        "select * from a left join b on a.x = b.x and a.y = 'a1'",
        "select * from a right join b on a.x = b.x",
        "select * from a full join b on a.x = b.x",
        "select * from a full outer join b on a.x = b.x full join c on "
        "c.x = a.x",
        "select * from a right join b on a.x = b.x left join c on c.x = b.x",
        "select * from a, b, c where a.x = b.x and b.x = c.x",
        "select * from a join b on 1",
        "select * from a join b on 0",
        "select * from a join b on null",
        "select * from a left join b on 0",
        "select * from a join c on a.x is c.x",
        "select * from a join b on a.x == b.x or a.y = 'a2'",
        "select * from sqlite_master, a",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* Parenthesized joins SQLite's grammar takes apart (parse.y seltablist):
 * first and bare, their items join the list; a single item keeps only the
 * outer alias. */
static void join_parenthesized(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_SMALL,
        "select * from (a cross join b)",
        "select * from (a, b) where a.x = b.x",
        "select * from (a join b on a.x = b.x) join c on c.x = b.x",
        "select * from (a left join b using (x)), c",
        "select * from ((a)), b",
        "select * from (((a cross join b)))",
        "select * from c, (a as q)",
        "select a.x from c, (a as q)",
        "select q.x from c, (a as q)",
        "select * from (a as q) as r",
        "select r.y from (a as q) as r",
        "select * from c join (b) using (x)",
        "select * from c left join (b as q) as r on r.x = c.x",
        "select count(*) from (a cross join b cross join c)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* Parenthesized joins SQLite makes into subqueries (SF_NestedFrom): with
 * an alias, ON or USING, or after other items. Their columns keep their
 * tables' names, "*" shows the inner join's columns, the subquery's names
 * ("a:1") name what is read from it; SQLite 3.40's own oddities (no
 * "z.*", "t1.*" alone failing on a renamed column) are kept. */
static void join_nested(void **state)
{
    static const char *const sqls[] = {
        "create table t0(a integer, d text)",
        "create table t1(a integer, b text)",
        "create table t2(a integer, c real)",
        "create table t3(b text, a integer)",
        "create table t4(x, y)",
        "create table t5(x, z)",
        "insert into t0 values(1,'d1'),(2,'d2'),(3,'d3'),(null,'dn')",
        "insert into t1 values(1,'b1'),(2,'b2'),(5,'b5')",
        "insert into t2 values(1,1.5),(3,3.5),(5,5.5)",
        "insert into t3 values('b1',7),('b2',8)",
        "insert into t4 values(1,2),(3,4)",
        "insert into t5 values(1,9),(7,8)",
        /* names: inner tables and the outer alias */
        "select * from t0 join (t1 join t2 using(a)) as z using (a)",
        "select z.c, t1.b, t2.c, z.a, t1.a, t2.a from t0 join "
        "(t1 join t2 using(a)) as z using (a)",
        "select * from (t1 join t2 using(a)) as z",
        "select * from (t3 join t2 using(a)) as z",
        "select * from (t1 join t2 using(A)) as z",
        "select * from t0, (t4 join t5 on t4.x = t5.x)",
        "select t4.*, t5.* from t0, (t4 join t5 on t4.x = t5.x) as z",
        "select t4.*, z.x from t0, (t4 join t5 using(x)) as z",
        "select * from (t4 join t5 using(x)) as z",
        "select * from t0, ((t1 join t2 using(a)))",
        "select * from t0 join ((t1 join t2 using(a)) as y) using(a)",
        "select t1.a from t0 join (t1 join t2) as z on t1.a = t0.a",
        "select typeof(a), typeof(c) from t0 join (t1 join t2 using(a)) as z "
        "using(a)",
        /* errors */
        "select x from t0, (t4 join t5 on t4.x = t5.x)",
        "select * from (t4 join t5 on t4.x = t5.x) as z",
        "select z.x, z.* from t0, (t4 join t5 on t4.x = t5.x) as z",
        "select t1.*, t2.* from (t1 join t2 using(a)) as z",
        "select t4.* from (t4 join t5 using(x)) as z",
        "select * from t0 join (t1 join t2 on t1.a = t0.a) on 1",
        "select * from t0 join (t1 join t2 on z.a = 1) as z on 1",
        "select a from (t1 join t2 on t1.a = t2.a) as z join t0 using(a)",
        "select * from (t1 join t4 on 1 join t2 using(a)) as z",
        "select * from (t1 join t2 using(a) join t3 using(a)) as z",
        "select y.b from t0 join ((t1 join t2 using(a)) as y join t3 "
        "using(b)) as z using(a)",
        /* rowid through the group */
        "select t1.rowid from t0, (t1 join t2 using(a))",
        "select z.rowid from t0, (t1 join t2 using(a)) as z",
        "select rowid from (t1 join t2 using(a)) as z",
        /* LEFT JOIN of a group: NULL rows */
        "!select * from t0 left join (t1 join t2 on t1.a = t2.a) "
        "on t0.a = t1.a order by t0.d",
        "!select * from t0 left join (t1 left join t2 on t1.a = t2.a) "
        "on t0.a = t1.a order by t0.d",
        "!select t0.d, t1.b, t2.c, c is null from t0 left join "
        "(t1 join t2 on t1.a = t2.a) on t0.a = t1.a order by t0.d",
        /* RIGHT and FULL, USING and NATURAL against the group */
        "!select * from t0 right join (t1 full join t2 using(a)) as z "
        "using(a) order by 1, 2",
        "!select a, z.a, t1.a, t2.a from t0 right join "
        "(t1 full join t2 using(a)) as z using(a) order by 1, 2",
        "!select * from t0 left join (t1 right join t2 using(a)) using(a) "
        "order by 1, 2",
        "!select * from t0 full join (t1 join t2 using(a)) as z "
        "on t0.a = z.a order by 1, 2",
        "select * from t0 natural join (t1 natural join t2)",
        "select * from t0 join (t1 join t2 on t1.a = t2.a) as z using(a)",
        "select a from t0 join (t1 join t2 on t1.a = t2.a) as z using(a)",
        "select * from (t1 join t2 on t1.a = t2.a) as z join t0 using(a)",
        "select * from (t1 join t2 using(a) join t4 on 1) as z",
        /* two levels */
        "select * from t0 join ((t1 join t2 using(a)) as y join t4 on 1) "
        "as z using(a)",
        "select t1.b, t4.y, z.a from t0 join ((t1 join t2 using(a)) as y "
        "join t4 on 1) as z using(a)",
        "select * from t0 left join (t4 join (t1 join t2 using(a)) "
        "on t4.x = t1.a) on t0.a = t2.a",
        /* above the join */
        "select count(*) from t0 join (t1 join t2 using(a)) using(a) "
        "where t1.b > 'a' group by t2.c",
        "!select t1.b, sum(t0.a) from t0 left join (t1 join t2 using(a)) "
        "on t0.a < t1.a group by t1.b order by 1",
        "select (select count(*) from t0 join (t1 join t2 using(a)) as z "
        "on z.a = t0.a where t0.d = o.y) from t4 as o",
        "select * from t0, (t1 join t2 using(a)) as z where z.rowid is null "
        "and t1.b = 'b1' and z.c > 1 and a = 1",
        "select * from t0, (t1 join t2 using(a)) as z where t2.rowid = 1",
        "!select distinct t1.b as q from t0 join (t1 join t2) on 1 order by q",
        "!select t2.c from t0 join (t1 join t2 using(a)) using(a) "
        "union all select t4.y from (t4 join t5 using(x)) as z order by 1",
        "select * from (t1 join t2 using(a)) as z on 1",
        "select * from (t1 join t2 using(a)) as z using(a)",
        "select * from t0 join (t1 join t2 using(a)) as z natural join t3",
        "select * from t0 join (t1 join t2 on 1) as z join t3 using(a)",
        "select * from t0 join t1 on 1 join t3 using(a)",
        "select * from t0 left join t1 on 1 right join t3 using(a)",
        "select * from t0 join (t1 join json_each('[1,2]') on "
        "t1.a = json_each.value) as z on z.a = t0.a",
        "select * from t0 join (json_each(t0.d) join t1) on 1",
        "create view v as select t1.b, z.c from t0 join "
        "(t1 join t2 using(a)) as z using(a)",
        "select * from v",
        "select * from t0 join (t1 join v using(b)) as z using(a)",
        "create index t2a on t2(a)",
        "select * from t0 left join (t1 join t2 on t2.a = t1.a) "
        "on t1.a = t0.a where t2.a is null",
        "select * from t0 join (nosuch join t1) on 1",
        "select * from (t1 join t2) as z on 1",
        "create view w as select * from t0 join (t1 join t2 using(a)) as z "
        "using(a)",
        "select * from w",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void join_using_natural(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_SMALL,
        "select * from a join b using(x)",
        "select * from a left join b using(x)",
        "select * from a right join b using(x)",
        "select * from a full join b using(x)",
        "select x from a full join b using(x)",
        "select x, a.x, b.x from a right join b using(x)",
        "select * from a natural join b",
        "select * from a natural cross join b",
        "select a.*, b.* from a join b using (x)",
        "select * from a join b using (x) join c using (x)",
        "select * from (select 1 as x) join a using (x)",
        "select * from a join b using (q)",
        "select * from a natural join b on a.x = b.x",
        "select * from a natural join c",
        "select * from a natural left join c",
        "select * from a natural full join c",
        "select x from a natural right join c",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void join_names(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_SMALL,
        "select x from a, b",
        "select t.x from a t, b t",
        "select nosuch from a, b",
        "select a.nosuch from a, b",
        "select zz.x from a, b",
        "select zz.* from a, b",
        "select rowid from a, b",
        "select a.rowid, b.ROWID, a.oid from a, b where a.x = b.x",
        "select s.rowid, s.q from a, (select x as q from b) as s "
        "where s.q = a.x",
        "select A.X, b.X from a, b",
        "select * from a left inner join b",
        "select * from a join b on c.x = a.x join c",
        "select * from a left join b on c.x = a.x join c",
        "select * from a right join b on c.x = a.x join c",
        "select * from a x, a y where x.x = y.x",
        "select * from a join b on a.x = b.x where a.y = 'a1' and b.z = 'b1'",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* A rowid reference to a table with an INTEGER PRIMARY KEY is named for
 * that column, whichever of rowid, oid or _rowid_ it spells, qualified or
 * not, alone or in a join (SQLite's generateColumnNames: iColumn is the
 * IPK's, so zName is its name); a table without one names it "rowid". */
static void join_rowid_names(void **state)
{
    static const char *const sqls[] = {
        "create table r(id integer primary key, v)",
        "create table l(k, rid)",
        "create table n(a)",
        "insert into r values(1, 'x'), (2, 'y')",
        "insert into l values(1, 1), (2, 2)",
        "insert into n values(5)",
        "select rowid from r",
        "select oid from r",
        "select _rowid_ from r",
        "select r.rowid from r",
        "select r.OID from r",
        "select r._ROWID_ from r",
        "select x.rowid from r as x",
        "select rowid, oid, id from r",
        "select (rowid) from r",
        "select rowid + 0 from r",
        "select rowid from r union select 7",
        "select distinct rowid from r",
        "select rowid from r group by v",
        "select rowid from n",
        "select n.oid from n",
        "select r.oid from l join r on l.rid = r.id",
        "select r.rowid, l.rowid from l join r on l.rid = r.id",
        "select l.oid, r._rowid_ from l, r",
        "select r.oid from l left join r on l.rid = r.id",
        "select oid from l join r on l.rid = r.id",
        "create view vr as select * from r",
        "select rowid from vr",
        "select rowid from (select * from r)",
        "select s.rowid from l, (select * from r) as s",
        "with w as (select * from r) select rowid from w",
        "select rowid from r where rowid in (select rowid from r)",
        "!select (select rowid from r where id = l.k) from l order by k",
        "update r set v = v returning rowid",
        "insert into r(v) values('z') returning oid, _rowid_",
        "delete from r where id > 2 returning r.rowid",
        "insert into n values(6) returning rowid, OID, A, n.a, n._rowid_",
        "update r set v = 'w' where id = 1 returning ID, V, (oid)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

#define SCHEMA_TYPES                                                           \
    "create table ti(k integer, v text)", "create table tt(k text, v text)",   \
        "create table tn(k, v)", "create table tr(k real, v)",                 \
        "create table tc(k text collate nocase, v)",                           \
        "create table te(k int, v)",                                           \
        "insert into ti values(1,'i1'),(2,'i2'),(2,'i2b'),(null,'inull'),"     \
        "(10,'i10')",                                                          \
        "insert into tt values('1','t1'),('2','t2'),('02','t02'),"             \
        "(null,'tnull'),('abc','tabc'),('1.0','t1.0')",                        \
        "insert into tn values(1,'n1'),('1','n1s'),(2.0,'n2r'),(x'01','nb'),"  \
        "(null,'nn'),('ABC','nabc')",                                          \
        "insert into tr values(1.0,'r1'),(2.5,'r25'),(10,'r10')",              \
        "insert into tc values('abc','c1'),('ABC','c2'),('x','c3')"

/* Equalities the hash join answers must compare as SQLite does: affinity
 * conversions (INTEGER against TEXT, REAL, none), collations, NULLs. */
static void join_key_semantics(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_TYPES,
        "select * from ti join tt on ti.k = tt.k",
        "select * from ti join tn on ti.k = tn.k",
        "select * from tt join tn on tt.k = tn.k",
        "select * from tn join tt on tn.k = tt.k",
        "select * from ti join tr on ti.k = tr.k",
        "select * from tr join tn on tr.k = tn.k",
        "select * from tc join tn on tc.k = tn.k",
        "select * from tn join tc on tn.k = tc.k",
        "select * from tc join tt on tc.k = tt.k",
        "select * from tt join tc on tt.k = tc.k",
        "select * from tt join tc on tt.k = tc.k collate binary",
        "select * from tt join tn on tt.k = tn.k collate nocase",
        "select * from ti join tt on +ti.k = tt.k",
        "select * from ti join tt on ti.k = +tt.k",
        "select * from ti a join ti b on a.k = b.k",
        "select * from ti a join ti b on a.k = b.k and a.v < b.v",
        "select * from ti join tt on ti.k = tt.k join tn on tn.k = tt.k",
        "select * from ti, tt where ti.k = tt.k and ti.v > tt.v",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void join_outer_and_empty(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_TYPES,
        "select * from ti left join te on ti.k = te.k",
        "select * from te left join ti on ti.k = te.k",
        "select * from te right join ti on ti.k = te.k",
        "select * from te full join ti on ti.k = te.k",
        "select * from te join ti",
        "select * from te left join ti on 1",
        "select * from ti left join tt on ti.k = tt.k where tt.k is null",
        "select * from ti left join tt on ti.k = tt.k "
        "where tt.v is null or tt.v = 't2'",
        "select * from ti left join tt on ti.k = tt.k left join tn "
        "on tn.k = tt.k where tn.k is null",
        "select * from ti left join tt on ti.k = tt.k join tn on tn.k = ti.k",
        "select * from ti a left join ti b on a.k = b.k + 1 left join ti c "
        "on c.k = b.k + 1",
        "select * from ti left join (select * from tt where k > '1') s "
        "on s.k = ti.k",
        "select * from ti full join tt on ti.k = tt.k where tt.k is null",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* What sits above the join: aggregates, GROUP BY, ORDER BY, DISTINCT,
 * LIMIT, subqueries; and many items. */
static void join_above(void **state)
{
    static const char *const sqls[] = {
        SCHEMA_TYPES,
        "select count(*) from ti, tt, tn, tr",
        "select ti.k, group_concat(tt.v) from ti left join tt "
        "on ti.k = tt.k group by ti.k",
        "select ti.k, count(tt.k) from ti left join tt on ti.k = tt.k "
        "group by 1 having count(*) > 1",
        "!select * from ti join tt on ti.k = tt.k order by ti.v, tt.v",
        "!select * from ti, tt order by 1, 2, 3, 4 limit 5 offset 3",
        "select distinct ti.k from ti, tt",
        "select * from ti where k in (select tt.k from tt, tn "
        "where tt.k = tn.k)",
        "select * from ti, tt where ti.k = tt.k and ti.rowid > 1",
        "select * from ti, tt where ti.rowid = 2 and tt.rowid = ti.rowid",
        "select * from ti a, ti b, ti c, tn d where a.k = b.k and "
        "b.k = c.k and c.k = d.k",
        "select * from (select k from ti) a join (select k from tt) b "
        "on a.k = b.k",
        "select (select count(*) from ti x, ti y where x.k = y.k), "
        "exists (select 1 from tt, tn where tt.k = tn.k)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* Joins of many rows: several output batches, chains of one bucket
 * longer than a batch, an outer join's NULL rows across batches. */
static void join_batches(void **state)
{
    static const char *const sqls[] = {
        "create table big(k, v)",
        "create table few(k, w)",
        "create table digits(d)",
        "insert into digits values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        "insert into big select n % 7, n from (select a.d * 1000 + b.d * 100 "
        "+ c.d * 10 + e.d as n from digits a, digits b, digits c, digits e) "
        "where n between 1 and 3000",
        "insert into few values (1, 'one'), (3, 'three'), (9, 'nine')",
        "select count(*), sum(big.v), sum(few.k) from big join few "
        "on big.k = few.k",
        "select count(*), sum(v) from big a join big b on a.k = b.k "
        "where a.v < 200",
        "select count(*), count(w) from big left join few on big.k = few.k",
        "select count(*), count(v), count(w) from big full join few "
        "on big.k = few.k and big.v < 5",
        "select few.*, count(big.v) from few left join big on big.k = few.k "
        "group by few.k",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(join_forms),
        cmocka_unit_test(join_parenthesized),
        cmocka_unit_test(join_nested),
        cmocka_unit_test(join_using_natural),
        cmocka_unit_test(join_names),
        cmocka_unit_test(join_rowid_names),
        cmocka_unit_test(join_key_semantics),
        cmocka_unit_test(join_outer_and_empty),
        cmocka_unit_test(join_above),
        cmocka_unit_test(join_batches),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
