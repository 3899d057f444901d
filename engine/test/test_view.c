/* SPDX-License-Identifier: MIT
 *
 * test_view.c: CREATE VIEW and DROP VIEW against libsqlite3 3.40.
 *
 * Method: the same tables are made in SQLite and in sinew (sqlite_pair.h),
 * then each script runs statement by statement in both: DDL, queries and
 * failing statements alike must give the same outcome (result column
 * names, every row with each value's storage class, the error message).
 * The scripts reach SQLite's rules for views: the stored text in
 * sqlite_schema, a view's SELECT resolved only when used (a missing table
 * then named "main.t"), column lists, views of joins, aggregates,
 * compounds, VALUES and other views, circular definitions, the shared name
 * space with tables and indexes, writes to a view, ROLLBACK of view DDL,
 * and PRAGMA table_info. Then what the oracle cannot show: views survive
 * a reopen of a file database, and prepared statements follow view DDL.
 */
#include "sqlite_pair.h"
#include "storage_test.h"

static const char *const setup[] = {
    "CREATE TABLE t(a INT, b TEXT COLLATE NOCASE, c)",
    "INSERT INTO t VALUES (1, 'x', 1.5), (2, 'Y', NULL), (3, 'y', 'z'), "
    "(NULL, 'w', 4)",
    "CREATE TABLE u(k INTEGER PRIMARY KEY, v REAL, w)",
    "INSERT INTO u VALUES (1, 10, 'one'), (2, 2.5, 'two'), (5, NULL, 'five')",
    /* Partial: no query here reads it (SQLite would scan a covering index
     * in its order). */
    "CREATE INDEX t_a ON t(c) WHERE c > 100",
    NULL,
};

static int pair_setup(void **state)
{
    return pair_state_open(state, setup);
}

static void create_use_drop_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1",
        "SELECT * FROM v",
        "SELECT b, a FROM v ORDER BY b",
        "SELECT v.a FROM v WHERE v.b = 'y'",
        "SELECT x.a, x.b FROM v AS x ORDER BY 1 DESC",
        "SELECT rowid, a FROM v",
        "SELECT count(*), max(b) FROM v",
        "SELECT * FROM t WHERE a IN (SELECT a FROM v)",
        "SELECT * FROM t WHERE a IN v",
        "SELECT (SELECT max(a) FROM v), EXISTS (SELECT 1 FROM v)",
        "SELECT * FROM (SELECT * FROM v) WHERE a = 3",
        "CREATE VIEW IF NOT EXISTS v AS SELECT 1",
        "SELECT * FROM v",
        "DROP VIEW v",
        "SELECT * FROM v",
        "DROP VIEW IF EXISTS v",
        "DROP VIEW v",
        "CREATE VIEW \"odd name\" AS SELECT c FROM t",
        "SELECT * FROM \"odd name\"",
        "DROP VIEW [odd name]",
        "CREATE VIEW main.m AS SELECT 2 AS two",
        "SELECT m.two, m2.two FROM m, m AS m2",
        "DROP VIEW main.m",
        "CREATE TEMP VIEW tv AS SELECT a FROM t",
        "SELECT * FROM tv",
        "DROP VIEW tv",
        NULL,
    };

    pair_run_all(state, script);
}

static void column_lists_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW v(x, y) AS SELECT a, b FROM t",
        "SELECT * FROM v",
        "SELECT x FROM v WHERE y = 'Y'",
        "SELECT a FROM v",
        "CREATE VIEW w(x, y) AS SELECT a, b, c FROM t",
        "SELECT * FROM w",
        "CREATE VIEW w1(x) AS SELECT a, b FROM t",
        "SELECT * FROM w1",
        "CREATE VIEW dup(p, p) AS SELECT 1, 2",
        "SELECT * FROM dup",
        "CREATE VIEW dup2 AS SELECT 1 AS a, 2 AS a, 3",
        "SELECT * FROM dup2",
        "CREATE VIEW f(x) AS VALUES (1), (2), (3)",
        "SELECT * FROM f",
        "SELECT x FROM f WHERE x > 1 ORDER BY x DESC",
        "CREATE VIEW bad(a COLLATE NOCASE) AS SELECT 1",
        "CREATE VIEW bad(a DESC) AS SELECT 1",
        NULL,
    };

    pair_run_all(state, script);
}

static void views_of_queries_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW j AS SELECT t.a, u.w FROM t JOIN u ON t.a = u.k",
        "SELECT * FROM j",
        "CREATE VIEW lj AS SELECT t.a, u.w FROM t LEFT JOIN u ON t.a = u.k",
        "SELECT * FROM lj ORDER BY a",
        "SELECT * FROM lj JOIN j USING (a)",
        "SELECT * FROM u, j WHERE u.k = j.a",
        "CREATE VIEW g AS SELECT b, count(*) AS n, sum(a) FROM t GROUP BY b",
        "SELECT * FROM g",
        "SELECT b FROM g WHERE n > 1",
        "CREATE VIEW s AS SELECT a FROM t UNION SELECT k FROM u",
        "SELECT * FROM s",
        "SELECT * FROM s ORDER BY a DESC LIMIT 2",
        "CREATE VIEW o AS SELECT a, b FROM t ORDER BY a DESC LIMIT 2",
        "SELECT * FROM o",
        "SELECT * FROM o ORDER BY b",
        "CREATE VIEW d AS SELECT DISTINCT b FROM t",
        "SELECT * FROM d",
        "CREATE VIEW vv AS SELECT * FROM j WHERE a < 2",
        "SELECT * FROM vv",
        "CREATE VIEW vvv AS SELECT a + 1 AS n FROM vv, s",
        "SELECT * FROM vvv",
        "SELECT * FROM t WHERE b = 'Y'",
        "CREATE VIEW coll AS SELECT b FROM t",
        "SELECT * FROM coll WHERE b = 'y' ORDER BY b",
        "CREATE VIEW sq AS SELECT a, (SELECT w FROM u WHERE k = a) FROM t",
        "SELECT * FROM sq",
        NULL,
    };

    pair_run_all(state, script);
}

static void errors_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW v AS SELECT a, b FROM t",
        "CREATE VIEW v AS SELECT 1",
        "CREATE TABLE v(x)",
        "CREATE TABLE IF NOT EXISTS v(x)",
        "CREATE INDEX v ON t(a)",
        "CREATE VIEW t AS SELECT 1",
        "CREATE VIEW t_a AS SELECT 1",
        "CREATE VIEW IF NOT EXISTS t_a AS SELECT 1",
        "CREATE INDEX i ON v(a)",
        "CREATE VIEW sqlite_x AS SELECT 1",
        "CREATE VIEW p AS SELECT ?",
        "CREATE VIEW p AS SELECT a FROM t WHERE a > :x",
        "CREATE VIEW nope.p AS SELECT 1",
        "CREATE TEMP VIEW main.p AS SELECT 1",
        "CREATE VIEW p AS SELECT FROM",
        "CREATE VIEW p AS",
        "INSERT INTO v VALUES (1, 2)",
        "INSERT OR REPLACE INTO v VALUES (1, 2)",
        "UPDATE v SET a = 1",
        "DELETE FROM v WHERE a > 0",
        "DROP TABLE v",
        "DROP TABLE IF EXISTS v",
        "DROP VIEW t",
        "DROP VIEW IF EXISTS t",
        "DROP VIEW t_a",
        "DROP INDEX v",
        "DROP VIEW nope.x",
        "DROP VIEW IF EXISTS nope.x",
        "DROP VIEW main.nothere",
        "CREATE VIEW m AS SELECT * FROM missing",
        "SELECT * FROM m",
        "SELECT 1 FROM t WHERE a IN (SELECT * FROM m)",
        "CREATE VIEW m2 AS SELECT * FROM t WHERE a > (SELECT count(*) FROM "
        "gone)",
        "SELECT * FROM m2",
        "CREATE VIEW nc AS SELECT nocol FROM t",
        "SELECT * FROM nc",
        "CREATE VIEW c1 AS SELECT * FROM c2",
        "CREATE VIEW c2 AS SELECT * FROM c1",
        "SELECT * FROM c1",
        "SELECT * FROM t, c2",
        "CREATE VIEW self AS SELECT * FROM t WHERE a IN (SELECT a FROM self)",
        "SELECT * FROM self",
        "CREATE VIEW tv AS SELECT a FROM t",
        "DROP TABLE t",
        "SELECT * FROM tv",
        "SELECT * FROM v",
        NULL,
    };

    pair_run_all(state, script);
}

static void schema_and_table_info_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW v AS SELECT a, b FROM t",
        "create view   IF NOT EXISTS   w (x)   as   select k from u ;  ",
        "CREATE VIEW main.q AS SELECT 1 -- a comment",
        "CREATE TEMP VIEW \"x y\" AS SELECT 2",
        "CREATE INDEX u_w ON u(w)",
        "CREATE TABLE later(z PRIMARY KEY)",
        "SELECT * FROM sqlite_schema",
        "SELECT name, rootpage FROM sqlite_master WHERE type = 'view'",
        "PRAGMA table_info(v)",
        "PRAGMA table_info(w)",
        "CREATE VIEW e AS SELECT a + 1, b || 'x', count(*), a AS a2, t.c, "
        "rowid FROM t",
        "PRAGMA table_info(e)",
        "CREATE VIEW ev AS SELECT * FROM e",
        "PRAGMA table_info(ev)",
        "CREATE VIEW un AS SELECT a FROM t UNION SELECT b FROM t",
        "PRAGMA table_info(un)",
        "CREATE VIEW sub AS SELECT * FROM (SELECT k AS z, v FROM u)",
        "PRAGMA table_info(sub)",
        "CREATE VIEW bad AS SELECT nocol FROM t",
        "PRAGMA table_info(bad)",
        "CREATE VIEW missing AS SELECT * FROM nothere",
        "PRAGMA table_info(missing)",
        "DROP VIEW v",
        "SELECT type, name, tbl_name, rootpage FROM sqlite_schema",
        NULL,
    };

    pair_run_all(state, script);
}

static void transactions_match_sqlite(void **state)
{
    static const char *const script[] = {
        "BEGIN",
        "CREATE VIEW r AS SELECT 1",
        "SELECT * FROM r",
        "ROLLBACK",
        "SELECT * FROM r",
        "CREATE VIEW k AS SELECT a FROM t",
        "BEGIN",
        "DROP VIEW k",
        "SELECT * FROM k",
        "ROLLBACK",
        "SELECT * FROM k",
        "SELECT name FROM sqlite_schema",
        "BEGIN",
        "CREATE VIEW k2 AS SELECT b FROM t",
        "SAVEPOINT s",
        "DROP VIEW k",
        "CREATE VIEW k AS SELECT 'new'",
        "SELECT * FROM k",
        "ROLLBACK TO s",
        "SELECT * FROM k",
        "COMMIT",
        "SELECT * FROM k2",
        "SELECT name FROM sqlite_schema",
        NULL,
    };

    pair_run_all(state, script);
}

static void expect_text(struct engine_db *db, const char *sql,
                        const char *expected)
{
    struct engine_stmt *stmt = NULL;
    char text[1024] = "";

    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    while (engine_step(stmt) == ENGINE_ROW) {
        for (int c = 0; c < engine_column_count(stmt); c++) {
            const char *value = engine_column_text(stmt, c);

            snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
                     text[0] != '\0' ? "|" : "", value ? value : "NULL");
        }
    }
    engine_finalize(stmt);
    assert_string_equal(text, expected);
}

/* "SELECT 1, 1, ..." of n columns, into a heap block the caller frees. */
static char *wide_select(const char *prefix, size_t n, const char *suffix)
{
    size_t size = strlen(prefix) + 2 * n + strlen(suffix) + 1;
    char *sql = test_malloc(size);
    char *at = sql + strlen(prefix);

    strcpy(sql, prefix);
    for (size_t i = 0; i < n; i++) {
        *at++ = i ? ',' : ' ';
        *at++ = '1';
    }
    strcpy(at, suffix);
    return sql;
}

/* A result row holds at most 2,000 columns (SQLite's SQLITE_MAX_COLUMN,
 * ENGINE_MAX_COLUMNS): wider views, VALUES and "*" expansions fail as in
 * SQLite instead of overrunning the rows operators copy (an INSTEAD OF
 * trigger on a 4,000-column view, a recursive CTE of 2,100 columns). */
static void width_limit_matches_sqlite(void **state)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];
    struct pair *p = *state;
    char *sqls[] = {
        wide_select("SELECT", 2001, ""),
        wide_select("VALUES (", 2001, ")"),
        wide_select("CREATE VIEW wide AS SELECT", 2001, ""),
        wide_select("SELECT count(*) FROM (SELECT", 2000, ")"),
        wide_select("CREATE VIEW w2 AS SELECT", 1500, ""),
        wide_select("SELECT count(*) FROM w2 AS x, w2 AS y", 0, ""),
        wide_select("SELECT * FROM w2 AS x, w2 AS y", 0, ""),
        wide_select("SELECT * FROM wide", 0, ""),
    };

    for (size_t i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
        oracle_outcome(p->oracle, sqls[i], expected);
        engine_outcome(p->db, sqls[i], got);
        assert_string_equal(got, expected);
    }
    for (size_t i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
        test_free(sqls[i]);
    }
}

/* A chain of views is planned recursively: past 1,000 levels it is an
 * error, not a stack overflow (SQLite has no such limit and overflows
 * near 20,000). */
static void view_nesting_is_bounded(void **state)
{
    struct engine_db *db = NULL;
    char sql[128];

    (void)state;
    assert_int_equal(engine_open(":memory:", &db), 0);
    assert_int_equal(engine_exec(db,
                                 "CREATE TABLE t(a); INSERT INTO t "
                                 "VALUES (7); CREATE VIEW v0 AS SELECT a "
                                 "FROM t",
                                 NULL, NULL),
                     0);
    for (int i = 1; i <= 1000; i++) {
        snprintf(sql, sizeof(sql), "CREATE VIEW v%d AS SELECT a FROM v%d", i,
                 i - 1);
        assert_int_equal(engine_exec(db, sql, NULL, NULL), 0);
    }
    expect_text(db, "SELECT a FROM v999", "7");
    assert_int_equal(engine_exec(db, "SELECT a FROM v1000", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "views nested too deeply (maximum depth 1000)");
    engine_close(db);
}

/* Views are in the WAL and, after a checkpoint (VACUUM), in the main
 * file's catalog; a reopen finds them either way, in creation order. */
static void views_survive_reopen(void **state)
{
    static const char *const schema =
        "SELECT type, name, rootpage, sql FROM sqlite_schema";
    static const char *const expected =
        "table|t|2|CREATE TABLE t(a, b)|view|v|0|CREATE VIEW v(x) AS SELECT "
        "a FROM t WHERE a > 1|index|i|3|CREATE INDEX i ON t(b)|view|w|0|"
        "CREATE VIEW w AS SELECT * FROM v";
    struct scratch_dir dir;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(a, b);"
                     "INSERT INTO t VALUES (1, 'p'), (2, 'q'), (3, 'r');"
                     "CREATE VIEW v(x) AS SELECT a FROM t WHERE a > 1;"
                     "CREATE INDEX i ON t(b);"
                     "CREATE VIEW w AS SELECT * FROM v;"
                     "CREATE VIEW gone AS SELECT 1;"
                     "BEGIN; CREATE VIEW undone AS SELECT 2; ROLLBACK;"
                     "DROP VIEW gone");
    engine_close(db);
    db = storage_open(dir.db);
    expect_text(db, schema, expected);
    expect_text(db, "SELECT * FROM w", "2|3");
    storage_exec(db, "VACUUM");
    engine_close(db);
    db = storage_open(dir.db);
    expect_text(db, schema, expected);
    expect_text(db, "SELECT x FROM v ORDER BY x DESC", "3|2");
    assert_integrity_ok(db);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* A statement prepared on a view plans again after view DDL, as on any
 * schema change. */
static void prepared_statements_follow_view_ddl(void **state)
{
    struct engine_db *db = storage_open(NULL);
    struct engine_stmt *stmt = NULL;

    (void)state;
    storage_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2);"
                     "CREATE VIEW v AS SELECT a FROM t");
    assert_int_equal(engine_prepare(db, "SELECT * FROM v", -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 1);
    engine_reset(stmt);
    storage_exec(db, "DROP VIEW v; CREATE VIEW v AS SELECT a * 10 FROM t");
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 10);
    engine_reset(stmt);
    storage_exec(db, "DROP VIEW v");
    assert_int_equal(engine_step(stmt), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "no such table: v");
    engine_finalize(stmt);
    engine_close(db);
}

/* TEMP objects: a main view or trigger does not see a TEMP view
 * (sqlite3FixSrcList's "main." names), a TEMP view and a main object of
 * one name are refused (not supported yet: SQLite keeps them apart), and
 * CREATE TEMP TABLE is refused. */
static void temp_objects_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TEMP VIEW tv AS SELECT * FROM t WHERE a > 1",
        "CREATE VIEW vm AS SELECT * FROM tv",
        "SELECT * FROM vm",
        "CREATE VIEW vm2 AS SELECT * FROM (SELECT 1), tv",
        "SELECT * FROM vm2",
        "CREATE TEMP VIEW tv2 AS SELECT * FROM vm",
        "SELECT * FROM tv2",
        "CREATE TEMP VIEW tv3 AS SELECT a FROM tv ORDER BY a",
        "SELECT * FROM tv3",
        "CREATE TABLE log(x)",
        "CREATE TRIGGER tr AFTER INSERT ON log BEGIN "
        "SELECT * FROM tv; END",
        "INSERT INTO log VALUES (1)",
        "CREATE TEMP TRIGGER ttr AFTER INSERT ON log BEGIN "
        "INSERT INTO log SELECT a FROM tv WHERE a = 2; END",
        "DROP TRIGGER tr",
        "INSERT INTO log VALUES (1)",
        "SELECT * FROM log",
        "CREATE TEMP VIEW tv AS SELECT 2",
        "CREATE TEMP VIEW IF NOT EXISTS tv AS SELECT 2",
        "DROP VIEW tv3",
        "DROP VIEW tv3",
        NULL,
    };

    pair_run_all(state, script);
}

/* What sinew refuses where SQLite would keep a TEMP view apart from a
 * main object of its name: refused alike from either side. */
static void temp_name_clashes_are_refused(void **state)
{
    static const struct {
        const char *first;
        const char *second;
    } cases[] = {
        {"CREATE TEMP VIEW w AS SELECT 1", "CREATE TABLE w(x)"},
        {"CREATE TEMP VIEW w AS SELECT 1", "CREATE VIEW w AS SELECT 2"},
        {"CREATE VIEW w AS SELECT 1", "CREATE TEMP VIEW w AS SELECT 2"},
        {"CREATE TABLE w(x)", "CREATE TEMP VIEW w AS SELECT 2"},
    };
    struct pair *p = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(engine_exec(p->db, cases[i].first, NULL, NULL), 0);
        assert_int_equal(engine_exec(p->db, cases[i].second, NULL, NULL),
                         ENGINE_ESQL);
        assert_string_equal(engine_errmsg(p->db),
                            "a TEMP view and a main table or view both named "
                            "w are not supported yet");
        assert_int_equal(
            engine_exec(p->db,
                        strncmp(cases[i].first, "CREATE TABLE", 12) == 0
                            ? "DROP TABLE w"
                            : "DROP VIEW w",
                        NULL, NULL),
            0);
    }
    /* A TEMP view and an index may share a name (indexes are main). */
    pair_same(p, "CREATE TEMP VIEW t_a2 AS SELECT 1");
    pair_same(p, "CREATE INDEX t_a2 ON t(a)");
    assert_int_equal(engine_exec(p->db, "CREATE TEMP TABLE tt(x)", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(p->db),
                        "TEMP tables are not supported yet");
    assert_int_equal(
        engine_exec(p->db, "CREATE TEMPORARY TABLE tt AS SELECT 1", NULL, NULL),
        ENGINE_ESQL);
    assert_string_equal(engine_errmsg(p->db),
                        "TEMP tables are not supported yet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(create_use_drop_matches_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(column_lists_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(views_of_queries_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(errors_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(schema_and_table_info_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(transactions_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(width_limit_matches_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(temp_objects_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(temp_name_clashes_are_refused,
                                        pair_setup, pair_state_close),
        cmocka_unit_test(view_nesting_is_bounded),
        cmocka_unit_test(views_survive_reopen),
        cmocka_unit_test(prepared_statements_follow_view_ddl),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
