/* SPDX-License-Identifier: MIT
 *
 * test_json_each.c: json_each() and json_tree() in FROM (tvf.h,
 * plan_tvf.c, func_json_each.c, op_lateral.c) against libsqlite3.
 *
 * Goal: every column of both functions (key, value, type, atom, id,
 * parent, fullkey, path, the hidden json and root, the rowid) has
 * SQLite's value and storage class, for documents of every JSON type, with
 * and without a root path; the functions join to tables (arguments read
 * from the items to their left, per row: comma, JOIN ... ON, LEFT JOIN)
 * and to enclosing queries (correlated subqueries); and the errors are
 * SQLite's. Method: each statement runs in libsqlite3 and in sinew; their
 * outcomes (column names, rows with storage classes, error message) must
 * be equal. A statement written with a leading '~' is compared with its
 * rows sorted (its order is the planner's choice); all others in order.
 */
#include <stdlib.h>

#include "sqlite_pair.h"

/* Runs every statement of sqls (NULL-terminated) in both, comparing; the
 * mismatches are reported together. */
static void run_all(const char *const *sqls)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];
    static char report[4 * PAIR_OUTCOME_SIZE];
    struct pair p;
    int failures = 0;

    report[0] = '\0';
    pair_open(&p);
    for (size_t i = 0; sqls[i] != NULL; i++) {
        bool sorted = sqls[i][0] == '~';
        const char *sql = sorted ? sqls[i] + 1 : sqls[i];

        oracle_outcome(p.oracle, sql, expected);
        engine_outcome(p.db, sql, got);
        if (sorted) {
            pair_sort_rows(expected);
            pair_sort_rows(got);
        }
        if (strcmp(expected, got) != 0 && failures++ < 4) {
            size_t used = strlen(report);

            snprintf(report + used, sizeof(report) - used,
                     "%s\n-- sqlite:\n%s\n-- sinew:\n%s\n\n", sql, expected,
                     got);
        }
    }
    pair_close(&p);
    if (failures > 0) {
        fail_msg("%d mismatches:\n%s", failures, report);
    }
}

#define DOCS                                                                   \
    "create table t(id integer primary key, doc)",                             \
        "insert into t values (1, '[1,2,3]'), "                                \
        "(2, '{\"a\":1,\"b\":[4,5],\"c\":{\"d\":null}}'), (3, '[]'), "         \
        "(4, NULL), (5, '7'), (6, '{}'), (7, '[[1,[2]],{\"x\":\"y\"}]')"

static void constants(void **state)
{
    static const char *const sqls[] = {
        "select * from json_each('[1,2.5,\"x\",true,false,null,[1],{},1e3,"
        "-0,12345678901234567890,\"\\u00e9\\n\"]')",
        "select *, rowid, json, root from json_each('{\"a\":1,\"b\":[2,{\"c\":"
        "3}],\"x y\":null,\"d\":1.5,\"e\":\"s\\u0041\"}')",
        "select key, typeof(key), value, typeof(value), atom, typeof(atom), "
        "type from json_each('[1,2.5,\"x\",true,false,null,[1],{}]')",
        "select key, fullkey from json_each('{\"a\\\"b\":1, \"1x\":2, "
        "\"x1\":3, \"\":4, \"_a\":5, \"\xc3\xa9\":6, \"a_b\":7, \"A9\":8}')",
        "select key, value from json_each('{\"a\":1,\"a\":2}')",
        "select * from json_each('5')",
        "select * from json_each(5.5)",
        "select * from json_each('\"s\"')",
        "select * from json_each('null')",
        "select * from json_each('[]')",
        "select * from json_each('{}')",
        "select * from json_each(NULL)",
        "select * from json_each()",
        "select * from json_each('[1]', NULL)",
        "select * from json_each(x'5b315d')",
        "select json, root from json_each('  [1 , 2] ')",
        "select typeof(json), json from json_each(5)",
        "select rowid, _rowid_, id from json_each('[5,6]')",
        "select json_each.value, json_each.rowid from json_each('[1]')",
        "select j.* from json_each('[1,2]') as j",
        "select j.json, j.root from json_each('[1]') j",
        "select json_array(value), typeof(value) from "
        "json_each('[[1,2],{\"a\":1},\"x\"]')",
        "select json_extract(value, '$.a') from json_each('[{\"a\":1},"
        "{\"a\":[2]}]')",
        "select value -> '$.a', value ->> 'a' from json_each('[{\"a\":[1]}]')",
        "select * from json_each(?)",
        "select * from json_each('[1]', ?)",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void paths(void **state)
{
    static const char *const sqls[] = {
        "select *, rowid from json_each('{\"a\":{\"b\":[5,6]}}', '$.a.b')",
        "select *, rowid from json_each('{\"a\":{\"b\":[5,6]}}', '$.a.b[1]')",
        "select *, rowid from json_each('{\"a\":{\"b\":[5,6]}}', '$.a')",
        "select * from json_each('{\"a\":[1,{\"b\":2}]}', '$.\"a\"')",
        "select * from json_each('{\"a\":[1,{\"b\":2}]}', '$.a[1].b')",
        "select * from json_each('[1,2,3]', '$[#-1]')",
        "select * from json_each('[1]', '$[#]')",
        "select * from json_each('[1,2]', '$.x')",
        "select * from json_each('[1,2]', '$')",
        "select * from json_each('[1,2]', 'x')",
        "select * from json_each('[1,2]', '$[')",
        "select * from json_each('[1,2]', '$.a''b')",
        "select * from json_each('[1]', 5)",
        "select * from json_each(1, 2)",
        "select * from json_each(NULL, 'bad')",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void trees(void **state)
{
    static const char *const sqls[] = {
        "select *, rowid, json, root from json_tree('{\"a\":1,\"b\":[2,{\"c\":"
        "3}],\"x y\":null,\"d\":1.5,\"e\":\"s\\u0041\"}')",
        "select *, rowid from json_tree('[1,[2,[3,4]],{\"q\":[5]}]')",
        "select *, rowid from json_tree('[1,[2,[3,4]],{\"q\":[5]}]', "
        "'$[1][1]')",
        "select *, rowid from json_tree('{\"a\":{\"b\":[5,6]}}', '$.a.b')",
        "select *, rowid from json_tree('{\"a\":{\"b\":[5,6]}}', '$.a')",
        "select * from json_tree('{\"a\":[1,{\"b\":2}]}', '$.a[1]')",
        "select * from json_tree('{\"a\":[1,{\"b\":2}]}', '$.a[1].b')",
        "select * from json_tree('[1,2,3]', '$[#-1]')",
        "select * from json_tree('5')",
        "select * from json_tree('[]')",
        "select * from json_tree('{}')",
        "select * from json_tree(NULL)",
        "select fullkey, path from json_tree('{\"a\\\"b\":{\"c d\":[1]}, "
        "\"1x\":2, \"x1\":3, \"\":4, \"_a\":5}')",
        "select key, type, fullkey from json_tree('[[[[1]]],[[2]]]') "
        "where atom is not null",
        "select count(*) from json_tree('[[[[1]]],[[2]]]')",
        "select fullkey from json_tree('{\"a\":[{\"b\":1},{\"b\":2}]}') "
        "where key = 'b'",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void filters_and_aggregates(void **state)
{
    static const char *const sqls[] = {
        "select * from json_each('{\"a\":1,\"b\":2}') where key = 'a'",
        "select key from json_each('[1,\"x\",null,[2]]') "
        "where type in ('integer', 'array')",
        "select key from json_tree('{\"a\":[1,{\"b\":2}]}') "
        "where type = 'integer'",
        "select key, value from json_each('[3,1,2]') order by value",
        "select key, value from json_each('[1,2]') order by key desc",
        "select count(*), sum(value), avg(value), max(value) from "
        "json_each('[1,2,3.5]')",
        "select type, count(*) from json_tree('[1,[2,\"x\"],{\"y\":3}]') "
        "group by type order by type",
        "select group_concat(key, ',') from json_each('{\"b\":1,\"a\":2}')",
        "select distinct type from json_each('[1,2,\"a\"]')",
        "select value from json_each('[1,2,3,4]') limit 2 offset 1",
        "select value from json_each('[\"5\", 5]') where value = 5",
        "select value from json_each('[\"5\", 5]') where value = '5'",
        "select * from (select key, value from json_each('[1,2]')) "
        "where value > 1",
        "select json_group_array(value) from json_each('[1,[2],{\"a\":3}]')",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void lateral_joins(void **state)
{
    static const char *const sqls[] = {
        DOCS,
        "select t.id, j.key, j.value from t, json_each(t.doc) as j",
        "select t.id, j.* from t, json_each(t.doc) j where j.type = 'integer'",
        "select t.id, j.key from t join json_each(t.doc) j on j.key = 'a' or "
        "j.key = 0",
        "select t.id, j.* from t left join json_each(t.doc) as j",
        "select t.id, j.key from t left join json_each(t.doc) as j "
        "on j.type = 'array'",
        "select t.id, count(j.key) from t left join json_each(t.doc) j "
        "group by t.id",
        "select t.id, j.fullkey, j.id, j.parent from t, json_tree(t.doc) j "
        "where t.id in (2, 7)",
        "select t.id, sum(j.value) from t, json_each(t.doc) j group by t.id",
        "select json_array(j.value) from t, json_each(t.doc) as j "
        "where t.id = 2",
        "select t.id, j.key from t, json_each(t.doc, '$.b') j",
        "select t.id, j.value from t, json_each(t.doc) j where t.id = 1 "
        "and j.value > 1",
        "select a.id, b.id, j.key from t a, t b, json_each(b.doc) j "
        "where a.id = 1 and b.id in (1, 3)",
        "select t.id, j.key, k.key from t, json_each(t.doc) j, "
        "json_each(j.value) k where t.id = 7",
        "select t.id, j.key, k.key from t, json_each(t.doc) j left join "
        "json_each(j.value) k where t.id in (2, 7)",
        "~select t.id, j.value from json_each('[1,3]') as j, t "
        "where t.id = j.value",
        "~select t.id, j.value from json_each('[1,3]') as j join t "
        "on t.id = j.value",
        "select u.id, j.value from (select * from t where id < 3) as u, "
        "json_each(u.doc) j",
        "select t.id, j.key from t, json_each(t.doc) j using (id)",
        "select * from json_each('[1]') natural join json_each('[1]')",
        "select * from json_each('[1]') a join json_each('[1]') b "
        "using (key)",
        "select t.id, j.key from t, json_each(t.doc) j, t as u "
        "where u.id = t.id",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void correlated(void **state)
{
    static const char *const sqls[] = {
        DOCS,
        "select id, (select sum(value) from json_each(t.doc)) from t",
        "select id, (select count(*) from json_tree(t.doc)) from t",
        "select id from t where exists (select 1 from json_each(t.doc) "
        "where value = 2)",
        "select id from t where 4 in (select value from json_each(t.doc, "
        "'$.b'))",
        "select id, (select group_concat(key) from json_each(t.doc) "
        "where type <> 'null') from t",
        "select (select max(j.value) from json_each(doc) j) from t "
        "where id = 1",
        "select id, (select k.key from json_each('[1]') j, "
        "json_each(t.doc) k limit 1) from t",
        "select * from json_each((select doc from t where id = 1))",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void errors(void **state)
{
    static const char *const sqls[] = {
        DOCS,
        "select * from json_each('[1,2')",
        "select * from json_tree('{\"a\":}')",
        "select * from t, json_each(t.doc || ']')",
        "select * from json_each('[1]', '$', 'x')",
        "select * from json_tree('[1]', '$', 'x')",
        "select * from foo(1)",
        "select * from t(1)",
        "select * from json_each('[1]') where nosuch = 1",
        "select x.key from json_each('[1]') j",
        "select * from json_each(nosuch)",
        "select * from json_each(count(*))",
        "select * from json_each('[1]') indexed by i",
        "create view v as select 1",
        "select * from v(1)",
        "with json_each(x) as (select 1) select * from json_each('[1]')",
        "with c(d) as (select '[1,2]') select value from "
        "json_each((select d from c))",
        "create table json_tree(x)",
        "select * from json_tree('[1]')",
        /* selectExpander's "main.json_each.key" names both items' key. */
        "select * from json_each('{\"a\":1}', '$'), json_each('[5]')",
        "select * from json_each('[1]') as j, json_each('[5]') as j",
        "select j.* from json_each('[1]') as j, json_each('[5]') as j",
        "select 1 from json_each('[1]'), json_each('[5]')",
        "select * from json_each('[1]') as t, t",
        "select * from t, t",
        "select * from t, t as T",
        "select t.* from t, t",
        "select * from t as x, t as y, t as x",
        "select y.* from t as x, t as y, t as x",
        "select * from t join t using (id)",
        "select * from t left join t using (id)",
        "select * from t natural join t",
        "select * from t, (select 2 as id) as t",
        "select * from (select 1 as a) as x, (select 2 as a) as x",
        "with c as (select 1 as a) select * from c, c",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

static void statements(void **state)
{
    static const char *const sqls[] = {
        DOCS,
        "create table log(id, k, v)",
        "insert into log select t.id, j.key, j.value from t, json_each(t.doc) "
        "j",
        "select * from log",
        "update log set v = 0 where k in (select key from json_each("
        "'{\"a\":1,\"b\":2}'))",
        "delete from log where id in (select value from json_each('[1,5]'))",
        "select * from log",
        "create view v as select t.id, j.key, j.value from t, "
        "json_tree(t.doc) j",
        "select * from v where id = 7",
        "select count(*) from v",
        "create table docs(doc)",
        "create trigger tr after insert on docs begin insert into log "
        "select 99, key, value from json_each(new.doc); end",
        "insert into docs values ('[\"p\",\"q\"]')",
        "select * from log where id = 99",
        "with c as (select id, doc from t where id < 3) select c.id, j.value "
        "from c, json_each(c.doc) j",
        "select value from json_each('[1,2]') union select value from "
        "json_each('[2,3]')",
        "select value, row_number() over (order by value desc) from "
        "json_each('[1,3,2]')",
        "select json_array(value) from json_each('[[1],{\"a\":2}]') "
        "order by key desc",
        "with recursive n(i) as (select 1 union all select i + 1 from n "
        "where i < 3000) select count(*), sum(j.value), max(j.key) from "
        "json_each((select json_group_array(i) from n)) j",
        "with recursive n(i) as (select 1 union all select i + 1 from n "
        "where i < 2500) select u.k, count(*), sum(j.value) from "
        "(select 1 as k, (select json_group_array(i) from n) as d union all "
        "select 2, '[1]') u, json_each(u.d) j group by u.k",
        "select t.id, j.key from t left join json_each(t.doc) j "
        "where j.key is null",
        "select * from t natural join json_each(t.doc)",
        "select id from t, json_each(t.doc)",
        "select json_each.key, t.id from t, json_each(t.doc) where t.id = 1",
        "select * from json_each('[1]') a, json_each('[2]') b",
        "select * from json_each('[1]'), json_tree('[2]')",
        "select key from json_each('[1]'), json_tree('[2]')",
        "select * from t, json_each(abs(-9223372036854775808))",
        "select * from json_each('[1,2]', '$') where root = '$[0]'",
        "select * from json_each('[1,2]', '$') where json = '[1,2]'",
        "select (select group_concat(j.value) from t u, json_each(u.doc) j "
        "where u.id = t.id) from t",
        "select t.id, j.value from t left join json_each('[1,3]') j "
        "on t.id = j.value",
        "select t.id, j.value from t left join json_each(t.doc) j "
        "on t.id = j.value",
        "select count(*), max(length(fullkey)) from json_tree(printf("
        "'%.1500c%.1500c', '[', ']'))",
        "select count(*) from json_each(printf('%.2001c%.2001c', '[', ']'))",
        NULL,
    };

    (void)state;
    run_all(sqls);
}

/* Queries SQLite answers and sinew refuses with an error of its own. */
static void refused(void **state)
{
    static const char *const sqls[] = {
        "select * from json_each('{\"a\":[1,2]}') where root = '$.a'",
        "select * from json_each() where json = '[1]'",
        "select * from json_each('[1]') j join json_each('[2]') k "
        "on j.root = '$'",
        "select j.value from json_each(t.doc) as j, t",
        "select j.value from t right join json_each(t.doc) as j",
        NULL,
    };
    static char got[PAIR_OUTCOME_SIZE];
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same(&p, "create table t(id integer primary key, doc)");
    for (size_t i = 0; sqls[i] != NULL; i++) {
        engine_outcome(p.db, sqls[i], got);
        if (strstr(got, "is not supported yet") == NULL) {
            fail_msg("%s\n-- sinew:\n%s", sqls[i], got);
        }
    }
    pair_close(&p);
}

/* Each allocation failing in turn: an error, never a crash or a leak. */
static void survives_every_allocation_failure(void **state)
{
    static const char *const script =
        "CREATE TABLE t(id INTEGER PRIMARY KEY, doc);"
        "INSERT INTO t VALUES (1, '[1,{\"a\":[2,3]}]'), (2, '{\"b\":4}');"
        "SELECT t.id, j.fullkey, j.value FROM t LEFT JOIN json_tree(t.doc) j;"
        "SELECT key, value FROM json_each('{\"x\":[1,2]}', '$.x');"
        "SELECT (SELECT sum(value) FROM json_each(doc)) FROM t;";

    (void)state;
    assert_true(pair_oom_walk(script) > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constants),
        cmocka_unit_test(paths),
        cmocka_unit_test(trees),
        cmocka_unit_test(filters_and_aggregates),
        cmocka_unit_test(lateral_joins),
        cmocka_unit_test(correlated),
        cmocka_unit_test(errors),
        cmocka_unit_test(statements),
        cmocka_unit_test(refused),
        cmocka_unit_test(survives_every_allocation_failure),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
