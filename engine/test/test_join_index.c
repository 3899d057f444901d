/* SPDX-License-Identifier: MIT
 *
 * test_join_index.c: index nested loop joins (plan_join_index.c,
 * op_join_index.c) against libsqlite3.
 *
 * Goal: a join whose right item is a table with a rowid, UNIQUE key or
 * index on the join's equality looks the rows up per left row when that is
 * cheaper than hashing the table, and only when the comparison agrees with
 * the index (affinity, collation, "=" not IS, INDEXED BY / NOT INDEXED);
 * either way its result is SQLite's, value by value and type by type:
 * LEFT JOIN's NULL rows, the right item's own terms, NULL keys, duplicate
 * left rows, many rows per key across batches.
 * Method: each query runs in libsqlite3 and in sinew on the same tables;
 * their outcomes (column names, rows with storage classes, error message)
 * must be equal, in order when the query is written with a leading '!'
 * (else sorted). engine__join_probes(), an internal counter of the
 * lookups index joins made in a table, shows which path was taken: a
 * query written with a leading '+' must have made lookups, one with '-'
 * none.
 */
#include <stdlib.h>

#include "sqlite_pair.h"

#include "join.h"

/* The lookups index joins made so far in the tables the tests probe. */
static uint64_t probes(struct engine_db *db)
{
    return engine__join_probes(db, "r") + engine__join_probes(db, "big") +
           engine__join_probes(db, "l");
}

/* Runs every statement of sqls (NULL-terminated) in both, comparing, and
 * checks the path of those marked '+' or '-'. */
static void run_all(const char *const *sqls)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];
    struct pair p;

    pair_open(&p);
    for (size_t i = 0; sqls[i] != NULL; i++) {
        const char *sql = sqls[i];
        char path = *sql == '+' || *sql == '-' ? *sql++ : 0;
        bool ordered = *sql == '!';
        uint64_t before = probes(p.db);
        uint64_t made;

        sql += ordered ? 1 : 0;
        oracle_outcome(p.oracle, sql, expected);
        engine_outcome(p.db, sql, got);
        made = probes(p.db) - before;
        if (!ordered) {
            pair_sort_rows(expected);
            pair_sort_rows(got);
        }
        if (strcmp(expected, got) != 0) {
            fail_msg("%s\n-- sqlite:\n%s\n-- sinew:\n%s", sql, expected, got);
        }
        if ((path == '+' && made == 0) || (path == '-' && made != 0)) {
            fail_msg("%s\n-- expected %s index join, made %llu lookups", sql,
                     path == '+' ? "an" : "no", (unsigned long long)made);
        }
    }
    pair_close(&p);
}

/* r: 1000 rows with a rowid alias, a UNIQUE column, a composite UNIQUE
 * key, and indexes of each affinity and a NOCASE one; l: six left rows of
 * every storage class, a NULL, and a duplicate key. */
#define SCHEMA                                                                 \
    "create table digits(d)",                                                  \
        "insert into digits values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",   \
        "create table r(id integer primary key, u int unique, a text, b int, " \
        "c text collate nocase, n, t text, unique(a, b))",                     \
        "create index r_b on r(b)", "create index r_c on r(c)",                \
        "create index r_n on r(n)", "create index r_t on r(t)",                \
        "insert into r select n, n * 2, 'a' || (n / 20), n % 20, "             \
        "(case n % 3 when 0 then 'X' else 'x' end) || (n % 10), "              \
        "case n % 4 when 0 then n % 10 when 1 then cast(n % 10 as text) "      \
        "when 2 then (n % 10) + 0.0 else null end, "                           \
        "case when n % 5 = 0 then null else n % 10 end "                       \
        "from (select a.d * 100 + b.d * 10 + c.d + 1 as n "                    \
        "from digits a, digits b, digits c)",                                  \
        "create table l(k int, s text, f real, bv, tx text)",                  \
        "insert into l values (5, '5', 5.0, 5, 'x5'), "                        \
        "(7, '14', 7.5, '7', 'X7'), (null, null, null, null, null), "          \
        "(5, '5.0', 5.5, 5.0, 'a7'), (12, 'abc', 12.0, x'05', 'a12'), "        \
        "(3, ' 3', 3.0, '3', '3')"

/* The rowid, INTEGER PRIMARY KEY, UNIQUE and composite UNIQUE lookups,
 * with the conversions SQLite's seek applies to the value. */
static void index_join_keys(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "+!select * from l join r on r.id = l.k",
        "+!select * from l join r on r.rowid = l.k",
        "+!select l.*, r.id from l join r on l.k = r._rowid_",
        "+!select * from l join r on r.id = l.s",
        "+!select * from l join r on r.id = l.f",
        "+!select * from l join r on r.id = l.bv",
        "+!select * from l join r on r.id = l.tx",
        "+!select * from l join r on r.u = l.k * 2",
        "+!select * from l join r on r.u = l.s",
        "+!select * from l join r on r.u = l.f",
        "+!select * from l join r on r.a = l.tx and r.b = l.k",
        "+!select * from l join r on r.b = l.k and l.tx = r.a",
        "+!select * from l, r where r.id = l.k + 1",
        "+!select * from l join r on r.id = l.k and r.u = l.k * 2",
        "!select * from l join r on r.id = l.k and r.u = 10",
        "+!select * from l join r on r.id = l.k and r.b = l.k",
        "+!select l.k, r.id from l join r on r.id = "
        "(select max(k) from l l2 where l2.k < l.k)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* CREATE INDEX lookups: many rows per key, in rowid order for each left
 * row; the comparison's affinity and collation must be the index's. */
static void index_join_semantics(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "+!select l.k, r.id, r.b from l join r on r.b = l.k",
        "+!select l.k, r.id from l join r on r.b = l.s",
        "+!select l.k, r.id from l join r on r.b = l.f",
        "+!select l.k, r.id from l join r on r.b = l.k + 0",
        "+!select l.tx, r.id, r.c from l join r on r.c = l.tx",
        "-select l.tx, r.id, r.c from l join r on l.tx = r.c",
        "-select l.tx, r.id, r.c from l join r on r.c = l.tx collate binary",
        "+!select l.tx, r.id, r.c from l join r "
        "on l.tx collate nocase = r.c",
        "+!select l.tx, r.id from l join r on r.t = l.tx",
        "-select l.k, r.id from l join r on r.t = l.k",
        "-select l.k, r.id from l join r on r.n = l.k",
        "+!select l.bv, r.id, r.n from l join r on r.n = l.bv",
        "+!select l.bv, r.id, r.n from l join r on r.n = l.k + 0",
        "-select l.k, r.id from l join r on r.b is l.k",
        "-select l.k, r.id from l join r on +r.b = l.k",
        "-select l.k, r.id from l join r not indexed on r.b = l.k",
        "+!select l.k, r.id from l join r not indexed on r.id = l.k",
        "-select l.k, r.id from l join r indexed by r_c on r.b = l.k",
        "+!select l.k, r.id from l join r indexed by r_b "
        "on r.b = l.k and r.u = l.k * 2",
        "-select l.k, s.id from l join (select * from r) s on s.b = l.k",
        "-select l.k, r.id from l join r on r.b = r.u",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* LEFT JOIN, the right item's own terms (ON and WHERE), NULL keys,
 * duplicate left rows, several joins, what sits above. */
static void index_join_outer_and_filters(void **state)
{
    static const char *const sqls[] = {
        SCHEMA,
        "+!select * from l left join r on r.id = l.k",
        "+!select * from l left join r on r.id = l.k + 1000",
        "+!select l.k, r.id from l left join r on r.b = l.k and r.u > 1800",
        "+!select l.k, r.id from l left join r on r.b = l.k and l.f > 6",
        "+!select l.k, r.id from l left join r on r.b = l.k where r.id > 950",
        "+!select l.k, r.id from l left join r on r.b = l.k "
        "where r.id is null",
        "+!select l.k, r.id from l join r on r.b = l.k and r.a = 'a7'",
        "+select l.k, r.id from l, r where r.b = l.k and r.c = 'X5' "
        "and l.f < 10",
        "+select l.k, r.id from l join r on r.b = l.k where r.t is null "
        "and r.n is not null",
        "+!select l.k, r.id, r2.id from l join r on r.id = l.k "
        "join r r2 on r2.u = r.id * 4",
        "+!select l.k, r.id, r2.id from l left join r on r.id = l.k "
        "left join r r2 on r2.id = r.b + 100",
        "+select l.k, count(*), sum(r.id) from l join r on r.b = l.k "
        "group by l.k",
        "+!select distinct l.k from l join r on r.b = l.k order by 1 desc",
        "+!select l.k, r.id from l join r on r.b = l.k limit 7 offset 3",
        "+select * from l where exists (select 1 from l l2 join r "
        "on r.id = l2.k + l.k)",
        "+select l.k, r.id from l left join r on r.b = l.k "
        "right join digits on digits.d = l.k",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* A large table and a small left side (the case the lookups are for),
 * then more left rows than one batch and more pairs than one batch; a
 * hash join where the left side is as large as the table. */
static void index_join_batches(void **state)
{
    static const char *const sqls[] = {
        "create table digits(d)",
        "insert into digits values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)",
        "create table big(id integer primary key, g int, v text)",
        "create index big_g on big(g)",
        "insert into big select n, n % 5000, 'v' || n from (select "
        "a.d * 10000 + b.d * 1000 + c.d * 100 + e.d * 10 + f.d + 1 as n "
        "from digits a, digits b, digits c, digits e, digits f) "
        "where n <= 20000",
        "create table few(k int)",
        "insert into few values (17), (19999), (null), (20001), (17)",
        "create table mid(k int)",
        "insert into mid select n * 13 from (select a.d * 1000 + b.d * 100 "
        "+ c.d * 10 + e.d as n from digits a, digits b, digits c, digits e) "
        "where n < 1500",
        "+!select few.k, big.* from few join big on big.id = few.k",
        "+!select few.k, big.* from few left join big on big.id = few.k",
        "+!select few.k, big.id from few join big on big.g = few.k",
        "+select count(*), sum(big.id), max(big.v) from mid "
        "join big on big.id = mid.k",
        "+select count(*), count(big.id), sum(big.id) from mid "
        "left join big on big.g = mid.k",
        "+!select mid.k, big.id from mid join big on big.g = mid.k "
        "where mid.k between 4000 and 6000",
        "-select count(*), sum(a.id) from big a join big b on b.id = a.g",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* FNV-1a of text, continuing from h. */
static uint64_t fnv(uint64_t h, const char *text)
{
    for (; text != NULL && *text != '\0'; text++) {
        h = (h ^ (uint8_t)*text) * 0x100000001b3ull;
    }
    return (h ^ '|') * 0x100000001b3ull;
}

/* An index dropped between two steps is refused as SQLite refuses it
 * ("database table is locked", OP_Destroy while the statement reads):
 * the join goes on through the index, with the rows, in the order, SQLite
 * gives; once the statement is done the drop succeeds. */
static void index_join_index_dropped_between_steps(void **state)
{
    static const char *const setup[] = {
        "create table r(id integer primary key, b int)",
        "create index r_b on r(b)",
        "create table l(k int)",
        "insert into l values (1), (2), (1)",
        "insert into r with recursive n(x) as (select 1 union all "
        "select x + 1 from n where x < 3000) select x, x % 3 from n",
        NULL,
    };
    const char *sql = "select l.k, r.id from l join r on r.b = l.k";
    uint64_t expected = 0xcbf29ce484222325ull;
    uint64_t got = expected;
    struct engine_stmt *stmt = NULL;
    sqlite3_stmt *o = NULL;
    struct pair p;
    int rc;

    (void)state;
    pair_open(&p);
    for (size_t i = 0; setup[i] != NULL; i++) {
        pair_run(&p, setup[i]);
    }
    assert_int_equal(sqlite3_prepare_v2(p.oracle, sql, -1, &o, NULL), 0);
    while (sqlite3_step(o) == SQLITE_ROW) {
        expected = fnv(expected, (const char *)sqlite3_column_text(o, 0));
        expected = fnv(expected, (const char *)sqlite3_column_text(o, 1));
    }
    sqlite3_finalize(o);
    assert_int_equal(engine_prepare(p.db, sql, -1, &stmt, NULL), 0);
    for (int row = 0; (rc = engine_step(stmt)) == ENGINE_ROW; row++) {
        got = fnv(got, engine_column_text(stmt, 0));
        got = fnv(got, engine_column_text(stmt, 1));
        if (row == 0) {
            assert_int_equal(engine_exec(p.db, "drop index r_b", NULL, NULL),
                             ENGINE_EBUSY);
        }
    }
    assert_int_equal(rc, ENGINE_DONE);
    assert_int_equal(engine_exec(p.db, "drop index r_b", NULL, NULL), 0);
    engine_finalize(stmt);
    assert_true(engine__join_probes(p.db, "r") == 3);
    assert_true(got == expected);
    pair_close(&p);
}

/* Out of memory at each allocation of planning and running index joins
 * (several lookups, a LEFT join's NULL row, an index's many rows), the
 * tables loaded beforehand: each run ends in an error or the result, never
 * a crash or a leak (cmocka's heap underneath reports leaks), and leaves
 * the handle usable for the next. */
static void index_join_survives_allocation_failure(void **state)
{
    static const char *const queries =
        "SELECT * FROM l JOIN r ON r.id = l.k;"
        "SELECT * FROM l LEFT JOIN r ON r.u = l.k * 2 AND r.c > 'c1';"
        "SELECT l.s, count(*) FROM l JOIN r ON r.b = l.k GROUP BY l.s;";
    struct engine_db *db = NULL;
    struct common_heap saved;
    uint64_t fail_at;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    assert_int_equal(
        engine_exec(db,
                    "CREATE TABLE r(id INTEGER PRIMARY KEY, u UNIQUE, b, c);"
                    "CREATE INDEX r_b ON r(b);"
                    "CREATE TABLE d(x);"
                    "INSERT INTO d VALUES (0), (1), (2), (3), (4), (5), (6);"
                    "INSERT INTO r SELECT a.x * 7 + b.x + 1, "
                    "(a.x * 7 + b.x) * 2, b.x % 3, 'c' || a.x FROM d a, d b;"
                    "CREATE TABLE l(k, s);"
                    "INSERT INTO l VALUES (1, 'a'), (2, 'b'), (NULL, 'c'), "
                    "(99, 'd');",
                    NULL, NULL),
        0);
    common_heap_get(&saved);
    for (fail_at = 1;; fail_at++) {
        uint64_t before = engine__join_probes(db, "r");
        struct common_heap_fault fault;
        struct common_heap heap;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = engine_exec(db, queries, NULL, NULL);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            /* Every query looked its four left rows up. */
            assert_int_equal(engine__join_probes(db, "r") - before, 12);
            break;
        }
        assert_true(rc < 0);
    }
    assert_true(fail_at > 20);
    engine_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(index_join_keys),
        cmocka_unit_test(index_join_semantics),
        cmocka_unit_test(index_join_outer_and_filters),
        cmocka_unit_test(index_join_batches),
        cmocka_unit_test(index_join_index_dropped_between_steps),
        cmocka_unit_test(index_join_survives_allocation_failure),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
