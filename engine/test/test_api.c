/* SPDX-License-Identifier: MIT
 *
 * Goal: the C API behaves as documented in engine.h and as sqlite3's does:
 * prepare with tails and empty statements, binding by index and name,
 * stepping, column conversions, reset and re-binding, exec with its
 * callback, error codes and messages, change counters, transactions, and
 * re-planning after a schema change.
 * Method: small scripted scenarios with exact expected values; every
 * allocation goes through cmocka's heap, so leaks fail the test.
 */
#include "common_test.h"

#include <string.h>

#include "engine.h"
#include "sqlite_pair.h"

static struct engine_db *open_db(void)
{
    struct engine_db *db = NULL;

    assert_int_equal(engine_open(NULL, &db), 0);
    assert_non_null(db);
    return db;
}

static void exec_ok(struct engine_db *db, const char *sql)
{
    int rc = engine_exec(db, sql, NULL, NULL);

    if (rc != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
}

static struct engine_stmt *prepare_ok(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_prepare(db, sql, -1, &stmt, NULL);

    if (rc != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
    assert_non_null(stmt);
    return stmt;
}

static void api_open_refuses_files(void **state)
{
    struct engine_db *db = NULL;

    (void)state;
    assert_int_equal(engine_open("/nonexistent-dir/x.db", &db),
                     ENGINE_ECANTOPEN);
    assert_null(db);
    assert_int_equal(engine_open(":memory:", &db), 0);
    assert_string_equal(engine_errmsg(db), "not an error");
    assert_int_equal(engine_errcode(db), 0);
    engine_close(db);
    engine_close(NULL);
}

static void api_prepare_tail_and_empty(void **state)
{
    struct engine_db *db = open_db();
    const char *sql = "SELECT 1; SELECT 2 ; -- comment\n";
    struct engine_stmt *stmt = NULL;
    const char *tail = NULL;

    (void)state;
    assert_int_equal(engine_prepare(db, sql, -1, &stmt, &tail), 0);
    assert_non_null(stmt);
    assert_string_equal(tail, " SELECT 2 ; -- comment\n");
    engine_finalize(stmt);
    assert_int_equal(engine_prepare(db, tail, -1, &stmt, &tail), 0);
    assert_non_null(stmt);
    engine_finalize(stmt);
    assert_int_equal(engine_prepare(db, tail, -1, &stmt, &tail), 0);
    assert_null(stmt); /* only a comment left */
    assert_int_equal(*tail, '\0');
    /* size limits the text: "SELECT 1" of "SELECT 1 garbage" */
    assert_int_equal(engine_prepare(db, "SELECT 12 garbage", 8, &stmt, NULL),
                     0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 1);
    engine_finalize(stmt);
    engine_close(db);
}

static void api_prepare_errors(void **state)
{
    struct engine_db *db = open_db();
    struct engine_stmt *stmt = (void *)1;

    (void)state;
    assert_int_equal(engine_prepare(db, "SELEC 1", -1, &stmt, NULL),
                     ENGINE_ESQL);
    assert_null(stmt);
    assert_string_equal(engine_errmsg(db), "near \"SELEC\": syntax error");
    assert_int_equal(engine_errcode(db), ENGINE_ESQL);
    assert_int_equal(engine_prepare(db, "SELECT * FROM nope", -1, &stmt, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "no such table: nope");
    assert_int_equal(engine_prepare(db, "SELECT nope", -1, &stmt, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "no such column: nope");
    assert_int_equal(engine_prepare(db, "SELECT abs()", -1, &stmt, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "wrong number of arguments to function abs()");
    assert_int_equal(engine_prepare(db, "SELECT 1 ORDER BY 2", -1, &stmt, NULL),
                     ENGINE_ESQL);
    assert_string_equal(
        engine_errmsg(db),
        "1st ORDER BY term out of range - should be between 1 and 1");
    /* A good statement clears the error. */
    stmt = prepare_ok(db, "SELECT 1");
    assert_int_equal(engine_errcode(db), 0);
    engine_finalize(stmt);
    engine_close(db);
}

static void api_bind_by_index_and_name(void **state)
{
    struct engine_db *db = open_db();
    struct engine_stmt *stmt =
        prepare_ok(db, "SELECT ?, ?5, :a, @b, $c, :a, typeof(?2)");

    (void)state;
    assert_int_equal(engine_bind_parameter_count(stmt), 8);
    assert_int_equal(engine_bind_parameter_index(stmt, ":a"), 6);
    assert_int_equal(engine_bind_parameter_index(stmt, "@b"), 7);
    assert_int_equal(engine_bind_parameter_index(stmt, "$c"), 8);
    assert_int_equal(engine_bind_parameter_index(stmt, ":nope"), 0);
    assert_int_equal(engine_bind_int64(stmt, 1, -7), 0);
    assert_int_equal(engine_bind_double(stmt, 5, 2.5), 0);
    assert_int_equal(engine_bind_text(stmt, 6, "hello", 3), 0);
    assert_int_equal(engine_bind_blob(stmt, 7, "\x00\x01", 2), 0);
    assert_int_equal(engine_bind_null(stmt, 8), 0);
    assert_int_equal(engine_bind_int64(stmt, 9, 1), ENGINE_ERANGE);
    assert_int_equal(engine_bind_int64(stmt, 0, 1), ENGINE_ERANGE);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_count(stmt), 7);
    assert_int_equal(engine_column_int64(stmt, 0), -7);
    assert_true(engine_column_double(stmt, 1) == 2.5);
    assert_string_equal(engine_column_text(stmt, 2), "hel");
    assert_int_equal(engine_column_type(stmt, 3), ENGINE_BLOB);
    assert_int_equal(engine_column_bytes(stmt, 3), 2);
    assert_memory_equal(engine_column_blob(stmt, 3), "\x00\x01", 2);
    assert_int_equal(engine_column_type(stmt, 4), ENGINE_NULL);
    assert_string_equal(engine_column_text(stmt, 5), "hel");
    assert_string_equal(engine_column_text(stmt, 6), "null");
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
    engine_close(db);
}

static void api_column_conversions(void **state)
{
    struct engine_db *db = open_db();
    struct engine_stmt *stmt = prepare_ok(
        db, "SELECT 1.0, 0.1, 1e20, 42, '12abc', NULL, x'41', -0.0, 1e999");

    (void)state;
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_string_equal(engine_column_name(stmt, 0), "1.0");
    assert_null(engine_column_name(stmt, 99));
    assert_string_equal(engine_column_text(stmt, 0), "1.0");
    assert_string_equal(engine_column_text(stmt, 1), "0.1");
    assert_string_equal(engine_column_text(stmt, 2), "1.0e+20");
    assert_string_equal(engine_column_text(stmt, 3), "42");
    assert_int_equal(engine_column_bytes(stmt, 3), 2);
    assert_true(engine_column_double(stmt, 3) == 42.0);
    assert_int_equal(engine_column_int64(stmt, 4), 12);
    assert_null(engine_column_text(stmt, 5));
    assert_int_equal(engine_column_int64(stmt, 5), 0);
    assert_string_equal(engine_column_text(stmt, 6), "A");
    assert_string_equal(engine_column_text(stmt, 7), "0.0");
    assert_string_equal(engine_column_text(stmt, 8), "Inf");
    assert_int_equal(engine_column_int64(stmt, 1), 0);
    engine_finalize(stmt);
    engine_close(db);
}

static void api_reset_rebind_and_misuse(void **state)
{
    struct engine_db *db = open_db();
    struct engine_stmt *stmt;

    (void)state;
    exec_ok(db, "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2), (3)");
    stmt = prepare_ok(db, "SELECT count(*) FROM t WHERE a >= ?");
    for (int64_t bound = 1; bound <= 4; bound++) {
        assert_int_equal(engine_bind_int64(stmt, 1, bound), 0);
        assert_int_equal(engine_step(stmt), ENGINE_ROW);
        assert_int_equal(engine_column_int64(stmt, 0), 4 - bound);
        assert_int_equal(engine_step(stmt), ENGINE_DONE);
        assert_int_equal(engine_step(stmt), ENGINE_EMISUSE);
        assert_int_equal(engine_reset(stmt), 0);
    }
    assert_true(engine_stmt_readonly(stmt));
    assert_string_equal(engine_sql(stmt),
                        "SELECT count(*) FROM t WHERE a >= ?");
    assert_int_equal(engine_clear_bindings(stmt), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 0); /* a >= NULL */
    engine_finalize(stmt);
    engine_close(db);
}

static int collect_rows(void *ctx, int count, char **values, char **names)
{
    char *out = ctx;

    for (int i = 0; i < count; i++) {
        strcat(out, names[i]);
        strcat(out, "=");
        strcat(out, values[i] ? values[i] : "NULL");
        strcat(out, i + 1 < count ? "," : ";");
    }
    return 0;
}

static int stop_at_once(void *ctx, int count, char **values, char **names)
{
    (void)values;
    (void)names;
    (void)count;
    ++*(int *)ctx;
    return 1;
}

static void api_exec_callback_and_abort(void **state)
{
    struct engine_db *db = open_db();
    char out[256] = {0};
    int calls = 0;

    (void)state;
    exec_ok(db, "CREATE TABLE t(a, b TEXT); INSERT INTO t VALUES (1, 'x'), "
                "(NULL, 'y');");
    assert_int_equal(engine_exec(db, "SELECT a, b FROM t; SELECT 5 AS five",
                                 collect_rows, out),
                     0);
    assert_string_equal(out, "a=1,b=x;a=NULL,b=y;five=5;");
    assert_int_equal(engine_exec(db, "SELECT * FROM t", stop_at_once, &calls),
                     ENGINE_EABORT);
    assert_int_equal(calls, 1);
    assert_int_equal(
        engine_exec(db, "SELECT 1; SELECT nope; SELECT 2", NULL, NULL),
        ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "no such column: nope");
    engine_close(db);
}

static int64_t query_int(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = prepare_ok(db, sql);
    int64_t value;

    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    value = engine_column_int64(stmt, 0);
    engine_finalize(stmt);
    return value;
}

static void api_changes_and_rowids(void **state)
{
    struct engine_db *db = open_db();

    (void)state;
    exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
    assert_int_equal(engine_last_insert_rowid(db), 0);
    exec_ok(db, "INSERT INTO t(v) VALUES (1), (2), (3)");
    assert_int_equal(engine_changes(db), 3);
    assert_int_equal(engine_last_insert_rowid(db), 3);
    exec_ok(db, "INSERT INTO t VALUES (100, 4)");
    assert_int_equal(engine_last_insert_rowid(db), 100);
    exec_ok(db, "UPDATE t SET v = v + 1 WHERE id < 100");
    assert_int_equal(engine_changes(db), 3);
    exec_ok(db, "DELETE FROM t WHERE id = 100");
    assert_int_equal(engine_changes(db), 1);
    assert_int_equal(engine_total_changes(db), 8);
    /* Without the largest rowid, the next one reuses it (no AUTOINCREMENT). */
    exec_ok(db, "INSERT INTO t(v) VALUES (9)");
    assert_int_equal(engine_last_insert_rowid(db), 4);
    assert_int_equal(query_int(db, "SELECT changes()"), 1);
    assert_int_equal(query_int(db, "SELECT last_insert_rowid()"), 4);
    engine_close(db);
}

static void api_statement_is_atomic(void **state)
{
    struct engine_db *db = open_db();

    (void)state;
    exec_ok(db, "CREATE TABLE t(a UNIQUE)");
    /* The third row fails: ABORT undoes the first two. */
    assert_int_equal(
        engine_exec(db, "INSERT INTO t VALUES (1), (2), (1)", NULL, NULL),
        ENGINE_ECONSTRAINT);
    assert_string_equal(engine_errmsg(db), "UNIQUE constraint failed: t.a");
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 0);
    /* FAIL keeps the rows before the failing one. */
    assert_int_equal(engine_exec(db,
                                 "INSERT OR FAIL INTO t VALUES (1), (2), "
                                 "(1), (3)",
                                 NULL, NULL),
                     ENGINE_ECONSTRAINT);
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 2);
    /* IGNORE skips, REPLACE replaces. */
    exec_ok(db, "INSERT OR IGNORE INTO t VALUES (1), (5)");
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 3);
    exec_ok(db, "INSERT OR REPLACE INTO t VALUES (5)");
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 3);
    engine_close(db);
}

static void api_transactions(void **state)
{
    struct engine_db *db = open_db();

    (void)state;
    exec_ok(db, "CREATE TABLE t(a)");
    exec_ok(db, "BEGIN");
    assert_true(engine_in_transaction(db));
    exec_ok(db, "INSERT INTO t VALUES (1); CREATE TABLE u(b); "
                "INSERT INTO u VALUES (2); UPDATE t SET a = 10; "
                "DELETE FROM t");
    exec_ok(db, "ROLLBACK");
    assert_false(engine_in_transaction(db));
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 0);
    assert_int_equal(engine_exec(db, "SELECT * FROM u", NULL, NULL),
                     ENGINE_ESQL);
    exec_ok(db, "BEGIN; INSERT INTO t VALUES (7); DROP TABLE t; ROLLBACK");
    assert_int_equal(query_int(db, "SELECT count(*) FROM t"), 0);
    exec_ok(db, "BEGIN; INSERT INTO t VALUES (7); COMMIT");
    assert_int_equal(query_int(db, "SELECT a FROM t"), 7);
    assert_int_equal(engine_exec(db, "COMMIT", NULL, NULL), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "cannot commit - no transaction is active");
    assert_int_equal(engine_exec(db, "BEGIN; BEGIN", NULL, NULL), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "cannot start a transaction within a transaction");
    exec_ok(db, "ROLLBACK");
    engine_close(db);
}

static void api_replans_after_schema_change(void **state)
{
    struct engine_db *db = open_db();
    struct engine_stmt *stmt;

    (void)state;
    exec_ok(db, "CREATE TABLE t(a); INSERT INTO t VALUES (1)");
    stmt = prepare_ok(db, "SELECT * FROM t");
    exec_ok(db, "DROP TABLE t; CREATE TABLE t(a, b); "
                "INSERT INTO t VALUES (5, 6)");
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_count(stmt), 2);
    assert_int_equal(engine_column_int64(stmt, 1), 6);
    assert_int_equal(engine_reset(stmt), 0);
    exec_ok(db, "DROP TABLE t");
    assert_int_equal(engine_step(stmt), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "no such table: t");
    assert_int_equal(engine_reset(stmt), ENGINE_ESQL);
    /* close finalizes what is still open */
    engine_close(db);
}

/* One step of a statement in both, the same result and first value. */
static int step_both(struct pair *p, sqlite3_stmt *o, struct engine_stmt *e,
                     const char *sql)
{
    int expected = sqlite3_step(o);
    int got = engine_step(e);

    if ((expected == SQLITE_ROW) != (got == ENGINE_ROW) ||
        (expected == SQLITE_DONE) != (got == ENGINE_DONE)) {
        fail_msg("%s: step: sqlite %d, sinew %d (%s)", sql, expected, got,
                 engine_errmsg(p->db));
    }
    if (got == ENGINE_ROW) {
        const char *text = engine_column_text(e, 0);

        assert_int_equal(engine_column_type(e, 0), sqlite3_column_type(o, 0));
        assert_string_equal(text != NULL ? text : "",
                            sqlite3_column_text(o, 0) != NULL
                                ? (const char *)sqlite3_column_text(o, 0)
                                : "");
    }
    return got;
}

/* DROP TABLE and DROP INDEX while another statement of the handle is
 * reading fail as SQLite's OP_Destroy does ("database table is locked",
 * while db->nVdbeRead > 1), and the reader goes on as if nothing
 * happened; DROP VIEW is allowed, and the reader's plan outlives the
 * view. (Dropped tables were freed under the reader: use after free.) */
static void api_drop_waits_for_running_readers(void **state)
{
    static const char *const setup[] = {
        "DROP VIEW IF EXISTS v",
        "DROP TABLE IF EXISTS t",
        "DROP TABLE IF EXISTS u",
        "CREATE TABLE t(a, b)",
        "CREATE INDEX ti ON t(b)",
        "CREATE TABLE u(x TEXT)",
        "CREATE INDEX ui ON u(x)",
        "INSERT INTO t VALUES (1, 2), (3, 4), (5, 6)",
        "INSERT INTO u VALUES ('p'), ('q')",
        "CREATE VIEW v AS SELECT a, 'view ' || b AS w FROM t",
        NULL,
    };
    static const char *const readers[] = {
        "SELECT a FROM t",
        "SELECT b FROM t WHERE b > 0",
        "SELECT w FROM v",
        "SELECT x FROM u ORDER BY x DESC",
        "SELECT count(*) FROM t UNION ALL SELECT 2",
        "SELECT (SELECT max(a) FROM t) UNION ALL SELECT 2",
        "INSERT INTO u VALUES ('r'), ('s') RETURNING x",
        /* Not the view: SQLite's scan of the schema would see it go. */
        "SELECT name FROM sqlite_master WHERE type <> 'view'",
        NULL,
    };
    static const char *const drops[] = {
        "DROP TABLE t",
        "DROP TABLE u",
        "DROP INDEX ti",
        "DROP INDEX ui",
        "DROP VIEW v",
        "DROP TABLE IF EXISTS nosuch",
        "DROP INDEX nosuch",
        "DROP VIEW IF EXISTS nosuch",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    for (size_t r = 0; readers[r] != NULL; r++) {
        for (size_t d = 0; drops[d] != NULL; d++) {
            sqlite3_stmt *o = NULL;
            struct engine_stmt *e = NULL;

            pair_same_all(&p, setup);
            assert_int_equal(
                sqlite3_prepare_v2(p.oracle, readers[r], -1, &o, NULL),
                SQLITE_OK);
            assert_int_equal(engine_prepare(p.db, readers[r], -1, &e, NULL), 0);
            assert_int_equal(step_both(&p, o, e, readers[r]), ENGINE_ROW);
            pair_run(&p, drops[d]);
            while (step_both(&p, o, e, readers[r]) == ENGINE_ROW) {
            }
            sqlite3_finalize(o);
            engine_finalize(e);
            pair_same(&p, "SELECT type, name FROM sqlite_master ORDER BY 2");
        }
    }
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_open_refuses_files),
        cmocka_unit_test(api_prepare_tail_and_empty),
        cmocka_unit_test(api_prepare_errors),
        cmocka_unit_test(api_bind_by_index_and_name),
        cmocka_unit_test(api_column_conversions),
        cmocka_unit_test(api_reset_rebind_and_misuse),
        cmocka_unit_test(api_exec_callback_and_abort),
        cmocka_unit_test(api_changes_and_rowids),
        cmocka_unit_test(api_statement_is_atomic),
        cmocka_unit_test(api_transactions),
        cmocka_unit_test(api_replans_after_schema_change),
        cmocka_unit_test(api_drop_waits_for_running_readers),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
