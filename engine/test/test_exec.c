/* SPDX-License-Identifier: MIT
 *
 * Goal: the vectorized operators give SQLite's results across batch
 * boundaries (tables of several batches, filters that empty whole batches,
 * LIMIT/OFFSET straddling batches, many groups, multi-key sorts with NULLs
 * and collations), and no statement crashes or leaks when any allocation
 * fails.
 * Method: the same scripts run in libsqlite3 and in the engine; every row
 * is compared value by value and type by type. The out-of-memory walk
 * fails each allocation of a script in turn under cmocka's leak-checking
 * heap.
 */
#include "common_test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

struct pair {
    sqlite3 *oracle;
    struct engine_db *db;
};

static void pair_open(struct pair *p)
{
    assert_int_equal(sqlite3_open(":memory:", &p->oracle), SQLITE_OK);
    assert_int_equal(engine_open(NULL, &p->db), 0);
}

static void pair_close(struct pair *p)
{
    sqlite3_close(p->oracle);
    engine_close(p->db);
}

/* Compares the current rows of both statements column by column. */
static void compare_row(sqlite3_stmt *o, struct engine_stmt *e, const char *sql,
                        int row)
{
    for (int c = 0; c < sqlite3_column_count(o); c++) {
        /* Types first: sqlite3_column_text() converts a value in place. */
        int otype = sqlite3_column_type(o, c);
        int etype = engine_column_type(e, c);
        const char *ot = (const char *)sqlite3_column_text(o, c);
        const char *et = engine_column_text(e, c);

        if (otype != etype || (ot == NULL) != (et == NULL) ||
            (ot != NULL && strcmp(ot, et) != 0)) {
            fail_msg("%s\nrow %d column %d: sqlite %d '%s', sinew %d '%s'", sql,
                     row, c, otype, ot ? ot : "NULL", etype, et ? et : "NULL");
        }
    }
}

/* Runs one statement in both; both must succeed and give the same rows. */
static void same(struct pair *p, const char *sql)
{
    sqlite3_stmt *o = NULL;
    struct engine_stmt *e = NULL;
    int orc;
    int erc;
    int row = 0;

    assert_int_equal(sqlite3_prepare_v2(p->oracle, sql, -1, &o, NULL),
                     SQLITE_OK);
    if (engine_prepare(p->db, sql, -1, &e, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(p->db));
    }
    assert_int_equal(sqlite3_column_count(o), engine_column_count(e));
    do {
        orc = sqlite3_step(o);
        erc = engine_step(e);
        if (orc == SQLITE_ROW && erc == ENGINE_ROW) {
            compare_row(o, e, sql, row++);
        }
    } while (orc == SQLITE_ROW && erc == ENGINE_ROW);
    if (orc != SQLITE_DONE || erc != ENGINE_DONE) {
        fail_msg("%s\nafter %d rows: sqlite %d (%s), sinew %d (%s)", sql, row,
                 orc, sqlite3_errmsg(p->oracle), erc, engine_errmsg(p->db));
    }
    sqlite3_finalize(o);
    engine_finalize(e);
}

/* Runs one statement in both; both must fail with the same message. */
static void same_error(struct pair *p, const char *sql)
{
    int orc = sqlite3_exec(p->oracle, sql, NULL, NULL, NULL);
    int erc = engine_exec(p->db, sql, NULL, NULL);

    if (orc == SQLITE_OK || erc == 0) {
        fail_msg("%s\nexpected both to fail: sqlite %d, sinew %d (%s)", sql,
                 orc, erc, engine_errmsg(p->db));
    }
    if (strcmp(sqlite3_errmsg(p->oracle), engine_errmsg(p->db)) != 0) {
        fail_msg("%s\nsqlite: %s\nsinew:  %s", sql, sqlite3_errmsg(p->oracle),
                 engine_errmsg(p->db));
    }
}

/* A table of 5,000 rows (five batches) with every storage class. */
static void fill_big_table(struct pair *p)
{
    same(p, "CREATE TABLE big(id INTEGER PRIMARY KEY, n INT, r REAL, "
            "t TEXT COLLATE NOCASE, x)");
    same(p, "BEGIN");
    for (int i = 1; i <= 5000; i++) {
        char sql[256];

        snprintf(sql, sizeof(sql),
                 "INSERT INTO big(n, r, t, x) VALUES (%d, %d.25, '%c%d', %s)",
                 (i * 7919) % 1000 - 500, i % 97, "aBcD"[i % 4], i % 13,
                 i % 5 == 0   ? "NULL"
                 : i % 5 == 1 ? "'txt'"
                 : i % 5 == 2 ? "x'0102'"
                 : i % 5 == 3 ? "1.5"
                              : "42");
        same(p, sql);
    }
    same(p, "COMMIT");
}

static void exec_scans_filters_and_limits(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    fill_big_table(&p);
    same(&p, "SELECT * FROM big");
    same(&p, "SELECT id, n * 2, r + n, t || x FROM big WHERE n > 400");
    same(&p, "SELECT id FROM big WHERE n = 12345"); /* every batch empty */
    same(&p, "SELECT id, t FROM big LIMIT 10 OFFSET 1020");
    same(&p, "SELECT id FROM big WHERE id % 3 = 0 LIMIT 700 OFFSET 900");
    same(&p, "SELECT id, x FROM big WHERE x IS NULL OR x > 10 LIMIT -1 "
             "OFFSET 4990");
    same(&p, "SELECT count(*) FROM big WHERE t = 'a1'");
    pair_close(&p);
}

static void exec_aggregates_and_groups(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    fill_big_table(&p);
    same(&p, "SELECT count(*), count(x), sum(n), total(r), avg(n), min(t), "
             "max(t), min(x), max(x) FROM big");
    same(&p, "SELECT t, count(*), sum(n), group_concat(DISTINCT typeof(x)) "
             "FROM big GROUP BY t");
    same(&p, "SELECT n % 7, count(DISTINCT t), avg(r) FROM big GROUP BY 1 "
             "HAVING count(*) > 100");
    same(&p, "SELECT x, count(*) FROM big GROUP BY x ORDER BY 2 DESC, 1");
    same(&p, "SELECT count(*) FILTER (WHERE n > 0), sum(n) FILTER (WHERE "
             "x IS NULL) FROM big");
    same(&p, "SELECT count(*), sum(n) FROM big WHERE 0");
    same(&p, "SELECT t, count(*) FROM big WHERE 0 GROUP BY t");
    pair_close(&p);
}

static void exec_sorts_and_distinct(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    fill_big_table(&p);
    same(&p, "SELECT t, n, id FROM big ORDER BY t, n DESC, id");
    same(&p, "SELECT x, id FROM big ORDER BY x NULLS LAST, id DESC");
    same(&p, "SELECT x, id FROM big ORDER BY x DESC NULLS FIRST, id");
    same(&p, "SELECT DISTINCT t FROM big");
    same(&p, "SELECT DISTINCT t COLLATE BINARY FROM big ORDER BY 1");
    same(&p, "SELECT DISTINCT x, r > 50 FROM big ORDER BY 2, 1");
    same(&p, "SELECT id FROM big ORDER BY r DESC, id LIMIT 5 OFFSET 3");
    /* top-N: ties across many batches resolve in input order */
    same(&p, "SELECT id, t FROM big ORDER BY t LIMIT 7 OFFSET 2500");
    same(&p, "SELECT id, x FROM big ORDER BY x DESC LIMIT 3000");
    same(&p, "SELECT id FROM big ORDER BY n LIMIT 0");
    same(&p, "SELECT DISTINCT t FROM big ORDER BY 1 DESC LIMIT 3");
    same(&p, "SELECT id FROM big ORDER BY r LIMIT -1 OFFSET 4998");
    pair_close(&p);
}

static void exec_subqueries_and_dml(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    fill_big_table(&p);
    same(&p, "SELECT count(*) FROM big WHERE n IN (SELECT n FROM big WHERE "
             "t = 'a1')");
    same(&p, "SELECT (SELECT max(id) FROM big), EXISTS (SELECT 1 FROM big "
             "WHERE n > 1000), 3 NOT IN (SELECT x FROM big)");
    same(&p, "SELECT * FROM (SELECT t, count(*) AS c FROM big GROUP BY t) "
             "WHERE c > 300");
    same(&p, "UPDATE big SET n = n + 1, t = upper(t) WHERE id % 2 = 0");
    same(&p, "DELETE FROM big WHERE id % 3 = 0");
    same(&p, "INSERT INTO big(n, t) SELECT n, t FROM big WHERE id < 50");
    same(&p, "SELECT * FROM big ORDER BY id");
    same(&p, "UPDATE big SET id = id + 100000 WHERE id > 4990");
    same(&p, "SELECT id, n FROM big WHERE id > 4900");
    pair_close(&p);
}

/* Rows that tie on every ORDER BY key come out in SQLite's order: input
 * order for a plain sort, the GROUP BY's order (which takes ORDER BY's
 * directions when both have as many terms) after an aggregation, and a
 * FROM subquery's own ORDER BY is dropped under an outer ORDER BY. */
static void exec_tie_order_matches_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT s FROM v ORDER BY k",
        "SELECT s FROM v ORDER BY k DESC LIMIT 4",
        "SELECT s, count(*) FROM v GROUP BY s ORDER BY 2 DESC",
        "SELECT s, count(*) FROM v GROUP BY s ORDER BY 2 DESC LIMIT 3",
        "SELECT s, k FROM v GROUP BY s ORDER BY k DESC",
        "SELECT s, k, count(*) FROM v GROUP BY s ORDER BY k DESC, 3",
        "SELECT count(*), k FROM v GROUP BY k, s ORDER BY 1 DESC",
        "SELECT DISTINCT s, k FROM v ORDER BY k DESC",
        "SELECT s FROM (SELECT s, k FROM v ORDER BY s DESC) ORDER BY k",
        "SELECT s FROM (SELECT s, k FROM v ORDER BY s DESC LIMIT 5) "
        "ORDER BY k",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE v(k, s)");
    same(&p, "INSERT INTO v VALUES (1,'a'),(1,'b'),(2,'x'),(1,'c'),(2,'y'),"
             "(3,'q')");
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
        same(&p, queries[i]);
    }
    pair_close(&p);
}

/* Constraints and conflict resolution give SQLite's errors and leave
 * SQLite's rows (lang_conflict.html, lang_upsert.html). */
static void exec_constraints_match_sqlite(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE c(id INTEGER PRIMARY KEY, k TEXT COLLATE NOCASE "
             "UNIQUE, n INT NOT NULL DEFAULT 5 CHECK (n < 100), "
             "r REAL, UNIQUE (n, r))");
    same(&p, "INSERT INTO c(k, n, r) VALUES ('a', 1, 1), ('b', 2, 2)");
    same_error(&p, "INSERT INTO c(k, n) VALUES ('A', 3)");
    same_error(&p, "INSERT INTO c(k, n) VALUES ('z', 100)");
    same_error(&p, "INSERT INTO c(k, n) VALUES ('z', NULL)");
    same_error(&p, "INSERT INTO c(id, k) VALUES (1, 'q')");
    same_error(&p, "INSERT INTO c(k, n, r) VALUES ('q', 1, 1.0)");
    same_error(&p, "UPDATE c SET k = 'B' WHERE id = 1");
    same_error(&p, "INSERT INTO c(id, k) VALUES ('x', 'q')");
    same(&p, "INSERT OR REPLACE INTO c(k, n) VALUES ('A', NULL)");
    same(&p, "INSERT OR IGNORE INTO c(k, n) VALUES ('b', 7), ('c', 7)");
    same(&p, "INSERT INTO c(k, n, r) VALUES ('b', 9, 9) ON CONFLICT (k) "
             "DO UPDATE SET n = c.n + excluded.n RETURNING id, k, n");
    same(&p, "INSERT INTO c(k, n) VALUES ('c', 1) ON CONFLICT DO NOTHING");
    same(&p, "INSERT INTO c(k, n) VALUES ('d', 1) ON CONFLICT (k) DO UPDATE "
             "SET n = 0 WHERE n > 50");
    same(&p, "UPDATE OR REPLACE c SET k = 'D' WHERE k = 'c'");
    same(&p, "UPDATE c SET id = id + 10 RETURNING id, k");
    same(&p, "SELECT * FROM c ORDER BY id");
    same(&p, "BEGIN");
    same(&p, "DELETE FROM c WHERE n > 1");
    same(&p, "INSERT INTO c(k, n) VALUES ('zz', 1)");
    same_error(&p, "INSERT OR ROLLBACK INTO c(k, n) VALUES ('ZZ', 1)");
    same(&p, "SELECT * FROM c ORDER BY id");
    same_error(&p, "COMMIT");
    pair_close(&p);
}

/* Bare columns of aggregate queries show SQLite's row: the group's first
 * row, or with min()/max() the row where the last of them last changed
 * (lang_select.html "bare aggregate", select.c updateAccumulator()). */
static void exec_bare_columns_match_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT a, max(b) FROM t",
        "SELECT a, min(b) FROM t",
        "SELECT g, a, max(b) FROM t GROUP BY g",
        "SELECT g, a, min(b), count(*) FROM t GROUP BY g",
        "SELECT a, count(*) FROM t",
        "SELECT g, a, sum(b) FROM t GROUP BY g",
        "SELECT a, max(b), min(b) FROM t",
        "SELECT a, max(b), max(g) FROM t",
        "SELECT a, min(n) FROM t",
        "SELECT g, a, max(n) FROM t GROUP BY g",
        "SELECT a, b FROM t GROUP BY g",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(a, b, g, n)");
    same(&p, "INSERT INTO t VALUES ('x', 1, 1, NULL), ('y', 5, 1, 2), "
             "('z', 3, 1, NULL), ('w', 9, 2, 7), ('v', 2, 2, NULL), "
             "('u', 9, 2, 7)");
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
        same(&p, queries[i]);
    }
    fill_big_table(&p);
    same(&p, "SELECT id, t, max(n) FROM big");
    same(&p, "SELECT t, id, min(r) FROM big GROUP BY t");
    same(&p, "SELECT id, count(*) FROM big");
    pair_close(&p);
}

static const char *oom_script =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c);"
    "INSERT INTO t(b, c) VALUES ('x', 1), ('y', 2.5), ('z', x'00');"
    "UPDATE t SET c = c || 'q' WHERE a > 1;"
    "SELECT b, count(*), group_concat(c) FROM t GROUP BY b ORDER BY 1 DESC;"
    "SELECT DISTINCT typeof(c) FROM t WHERE b IN (SELECT b FROM t);"
    "DELETE FROM t WHERE a = 2 RETURNING *;";

/* 'now' is read once per step, as SQLite's sqlite3StmtCurrentTime(): a
 * scan over many batches that calls it on every row sees one time (it
 * read the clock per call, and 262,144 rows saw 207 times). */
static void exec_now_is_one_time_per_step(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE n(x)");
    same(&p, "INSERT INTO n VALUES (1)");
    for (int i = 0; i < 18; i++) {
        same(&p, "INSERT INTO n SELECT x FROM n");
    }
    same(&p, "SELECT count(*), count(DISTINCT julianday('now')), "
             "count(DISTINCT strftime('%f', 'now')) FROM n");
    pair_close(&p);
}

static int run_script(const char *sql)
{
    struct engine_db *db = NULL;
    int rc = engine_open(NULL, &db);

    if (rc == 0) {
        rc = engine_exec(db, sql, NULL, NULL);
    }
    engine_close(db);
    return rc;
}

/* Fails each allocation of script in turn: every run must end with an
 * error or success, never a crash, and free everything (cmocka's heap
 * underneath reports any leak). Returns how many allocations it makes. */
static uint64_t oom_walk(const char *script)
{
    struct common_heap saved;
    uint64_t fail_at;

    common_heap_get(&saved);
    for (fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = run_script(script);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            return fail_at - 1;
        }
        assert_true(rc < 0);
    }
}

static void exec_survives_every_allocation_failure(void **state)
{
    (void)state;
    assert_true(oom_walk(oom_script) > 50);
}

/* A row written column by column: when a text copy fails partway, the
 * insert (or an update) undoes exactly the cells it wrote, and never frees
 * cells it had not reached yet. Enough rows that the slot arrays grow, so
 * unwritten cells hold leftover bytes. (No ROLLBACK here: undoing a
 * DELETE or UPDATE copies text back in, and a failure there is an ASSERT
 * in undo.c.) */
static void exec_failed_row_write_undoes_itself(void **state)
{
    static const char *const script =
        "CREATE TABLE u(k INTEGER PRIMARY KEY, v TEXT);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < 70) INSERT INTO u SELECT i, 'row ' || i FROM n;"
        "CREATE TABLE t(a TEXT, b, c BLOB, d TEXT, e INTEGER PRIMARY KEY);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < 64) INSERT INTO t(a, b, c, d) SELECT 'a' || i, i, "
        "x'0102', 'd' || i FROM n;"
        "INSERT INTO t(a, b, c, d) SELECT d, a, c, b FROM t;"
        "DELETE FROM t WHERE e % 3 = 0;"
        "UPDATE t SET a = d, d = 'long text ' || a WHERE e < 40;";
    struct common_heap saved;

    (void)state;
    /* First over libc's heap, whose reused memory holds stale pointers as
     * in production (cmocka's fills new blocks with a pattern that hid the
     * bad free), then over cmocka's, which reports leaks. */
    common_heap_get(&saved);
    common_heap_set(NULL);
    assert_true(oom_walk(script) > 50);
    common_heap_set(&saved);
    assert_true(oom_walk(script) > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exec_scans_filters_and_limits),
        cmocka_unit_test(exec_aggregates_and_groups),
        cmocka_unit_test(exec_sorts_and_distinct),
        cmocka_unit_test(exec_subqueries_and_dml),
        cmocka_unit_test(exec_tie_order_matches_sqlite),
        cmocka_unit_test(exec_constraints_match_sqlite),
        cmocka_unit_test(exec_bare_columns_match_sqlite),
        cmocka_unit_test(exec_now_is_one_time_per_step),
        cmocka_unit_test(exec_survives_every_allocation_failure),
        cmocka_unit_test(exec_failed_row_write_undoes_itself),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
