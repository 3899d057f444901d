/* SPDX-License-Identifier: MIT
 *
 * test_alter.c: ALTER TABLE (RENAME TO, RENAME COLUMN, ADD COLUMN, DROP
 * COLUMN) against libsqlite3 3.40.
 *
 * Method: each script runs statement by statement in SQLite and in sinew
 * (sqlite_pair.h): outcomes (rows, storage classes, error messages) must
 * match, and after every statement so must sqlite_schema (the edited
 * CREATE texts) and the rows of the altered table. Then: ROLLBACK and
 * ROLLBACK TO undo an ALTER; a file database keeps it across a reopen (WAL
 * replay) and a checkpoint; a replicated database (a commit hook set)
 * refuses RENAME and DROP COLUMN and lets ADD COLUMN through; and every
 * allocation failure of a script leaves a sound database.
 */
#include "sqlite_pair.h"
#include "storage_test.h"

#include <strings.h>

/* An ALTER's outcome without its column names: SQLite's ALTER reports
 * those of the SELECT it runs inside ("raise(...)"), sinew's none. */
static const char *without_columns(const char *sql, const char *outcome)
{
    const char *line_end = strchr(outcome, '\n');

    if (strncasecmp(sql, "ALTER", 5) == 0 &&
        strncmp(outcome, "columns ", 8) == 0) {
        return line_end != NULL ? line_end : "";
    }
    return outcome;
}

/* Runs sql in both; counts and prints a difference. */
static void compare(struct pair *p, const char *sql, int *differences)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];

    oracle_outcome(p->oracle, sql, expected);
    engine_outcome(p->db, sql, got);
    if (strcmp(without_columns(sql, expected), without_columns(sql, got)) !=
        0) {
        print_message("%s\n-- sqlite:\n%s\n-- sinew:\n%s\n", sql, expected,
                      got);
        (*differences)++;
    }
}

/* Runs each statement in both, then compares the schema and the rows of
 * table (NULL: none). */
static void run_script(const char *const *script, const char *table)
{
    char rows[128];
    struct pair p;
    int differences = 0;

    pair_open(&p);
    for (size_t i = 0; script[i] != NULL; i++) {
        compare(&p, script[i], &differences);
        compare(&p, "SELECT type, name, tbl_name, sql FROM sqlite_schema",
                &differences);
        if (table != NULL) {
            snprintf(rows, sizeof(rows), "SELECT * FROM %s", table);
            compare(&p, rows, &differences);
        }
    }
    pair_close(&p);
    assert_int_equal(differences, 0);
}

static void rename_table_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c, "
        "CHECK (0 <> t.c))",
        "CREATE INDEX i ON t(c) WHERE t.c > 1",
        "INSERT INTO t VALUES (1, 'x', 2), (5, 'y', 3)",
        "CREATE TABLE other(z)",
        "CREATE INDEX oi ON other(z)",
        "ALTER TABLE t RENAME TO u",
        "SELECT * FROM u WHERE c > 1",
        "SELECT * FROM t",
        "ALTER TABLE u RENAME TO other",
        "ALTER TABLE u RENAME TO OI",
        "ALTER TABLE u RENAME TO U",
        "ALTER TABLE u RENAME TO sqlite_x",
        "ALTER TABLE nosuch RENAME TO v",
        "ALTER TABLE main.nosuch RENAME TO v",
        "ALTER TABLE temp.u RENAME TO v",
        "ALTER TABLE main.u RENAME TO \"x y\"",
        "ALTER TABLE [x y] RENAME TO 'q'",
        "INSERT INTO q VALUES (7, 'z', 9)",
        "INSERT INTO q VALUES (8, 'z', 9)",
        "INSERT INTO q VALUES (9, 'w', 0)",
        "SELECT * FROM q ORDER BY c",
        "PRAGMA index_list(q)",
        NULL,
    };

    (void)state;
    run_script(script, NULL);
}

static void rename_column_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a, b CHECK (a < b), c, \"d\", [e], "
        "UNIQUE (c, a), CHECK (t.b <> t.c))",
        "CREATE INDEX i ON t(a, b COLLATE NOCASE DESC) WHERE b > 0 AND t.b < 9",
        "CREATE UNIQUE INDEX j ON t(e)",
        "INSERT INTO t VALUES (1, 2, 3, 4, 5)",
        "ALTER TABLE t RENAME COLUMN b TO bb",
        "ALTER TABLE t RENAME a TO A",
        "ALTER TABLE t RENAME COLUMN bb TO [q r]",
        "ALTER TABLE t RENAME COLUMN d TO dd",
        "ALTER TABLE t RENAME COLUMN e TO \"x\"\"y\"",
        "ALTER TABLE t RENAME COLUMN c TO A",
        "ALTER TABLE t RENAME COLUMN nosuch TO z",
        "ALTER TABLE t RENAME COLUMN [nosuch] TO z",
        "ALTER TABLE t RENAME COLUMN rowid TO z",
        "ALTER TABLE t RENAME COLUMN A TO a",
        "ALTER TABLE nosuch RENAME COLUMN a TO z",
        "INSERT INTO t VALUES (1, 0, 3, 4, 6)",
        "INSERT INTO t VALUES (1, 2, 3, 4, 5)",
        "SELECT \"q r\", dd FROM t WHERE a = 1",
        "CREATE TABLE k(id INTEGER PRIMARY KEY, v)",
        "INSERT INTO k VALUES (5, 'x')",
        "ALTER TABLE k RENAME COLUMN id TO key",
        "SELECT key FROM k WHERE rowid = 5",
        NULL,
    };

    (void)state;
    run_script(script, "t");
}

static void add_column_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t  ( a  INT ,  b , CHECK (a > 0) ) ;",
        "INSERT INTO t VALUES (1, 'x'), (2, NULL)",
        "ALTER TABLE t ADD COLUMN c INT DEFAULT '5'",
        "ALTER TABLE t ADD d TEXT NOT NULL DEFAULT 7",
        "ALTER TABLE t ADD e NOT NULL",
        "ALTER TABLE t ADD e DEFAULT NULL NOT NULL",
        "ALTER TABLE t ADD f PRIMARY KEY",
        "ALTER TABLE t ADD g UNIQUE",
        "ALTER TABLE t ADD h DEFAULT (1 + 1)",
        "ALTER TABLE t ADD h DEFAULT CURRENT_TIME",
        "ALTER TABLE t ADD h DEFAULT (random())",
        "ALTER TABLE t ADD a",
        "ALTER TABLE t ADD A TEXT",
        "ALTER TABLE t ADD i COLLATE NOCASE CHECK (i > 0)",
        "ALTER TABLE t ADD j DEFAULT -1",
        "ALTER TABLE t ADD k REAL DEFAULT +2",
        "ALTER TABLE t ADD l DEFAULT x'01'",
        "ALTER TABLE t ADD m DEFAULT TRUE",
        "ALTER TABLE t ADD n DEFAULT 0 CHECK (n > 0)",
        "ALTER TABLE t ADD n DEFAULT 0 CHECK (n >= a - 1)",
        "ALTER TABLE t ADD o DEFAULT 'Q' COLLATE NOCASE",
        "ALTER TABLE t ADD COLUMN",
        "ALTER TABLE t ADD p q r s",
        "ALTER TABLE nosuch ADD x",
        "INSERT INTO t(a) VALUES (3)",
        "INSERT INTO t(a, d) VALUES (4, NULL)",
        "SELECT * FROM t WHERE o = 'q'",
        "SELECT typeof(c), typeof(d), typeof(j), typeof(k) FROM t",
        "CREATE TABLE e(x)",
        "ALTER TABLE e ADD y NOT NULL DEFAULT 1 CHECK (y > 5)",
        "ALTER TABLE e ADD z DEFAULT 0 CHECK (z > 5)",
        /* The definition's text runs to the statement's end, comments in
         * (sqlite3AlterFinishAddColumn): a "--" one leaves the new CREATE
         * TABLE text incomplete. */
        "ALTER TABLE e ADD COLUMN c1 -- comment",
        "ALTER TABLE e ADD COLUMN c2 INT /* kept */",
        "ALTER TABLE e ADD COLUMN c3 /* unterminated",
        "ALTER TABLE e ADD COLUMN c4 -- a\n /* b */ ",
        "ALTER TABLE e ADD COLUMN c5 -- a\n",
        "ALTER TABLE e ADD c6;  -- after",
        "ALTER TABLE e ADD c7 \t\n ;",
        NULL,
    };

    (void)state;
    run_script(script, "t");
}

static void drop_column_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c, d, e, "
        "f CHECK (f > 0), g, h, CHECK (h IS NOT 5))",
        "CREATE INDEX i ON t(d)",
        "CREATE INDEX j ON t(c) WHERE e > 0",
        "CREATE UNIQUE INDEX k ON t(g)",
        "INSERT INTO t VALUES (1, 2, 3, 4, 5, 6, 7, 8), "
        "(2, 3, 4, 5, 6, 7, 8, 9)",
        "ALTER TABLE t DROP COLUMN a",
        "ALTER TABLE t DROP b",
        "ALTER TABLE t DROP COLUMN d",
        "ALTER TABLE t DROP e",
        "ALTER TABLE t DROP g",
        "ALTER TABLE t DROP h",
        "ALTER TABLE t DROP COLUMN zz",
        "ALTER TABLE t DROP COLUMN [zz]",
        "ALTER TABLE t DROP COLUMN rowid",
        "ALTER TABLE t DROP COLUMN f",
        "DROP INDEX i",
        "ALTER TABLE t DROP COLUMN D",
        "INSERT INTO t VALUES (3, 4, 5, 6, 8, 9)",
        "SELECT * FROM t WHERE e > 5",
        "CREATE TABLE one(a)",
        "ALTER TABLE one DROP COLUMN a",
        "CREATE TABLE pk(a, b, c, PRIMARY KEY (a, b), UNIQUE (b, c))",
        "ALTER TABLE pk DROP COLUMN b",
        "ALTER TABLE pk DROP COLUMN c",
        "CREATE TABLE last(a, b, c, CHECK (a > 0))",
        "ALTER TABLE last DROP COLUMN c",
        "ALTER TABLE last DROP COLUMN b",
        NULL,
    };

    (void)state;
    run_script(script, "t");
}

static void rollback_undoes_alter(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a, b, c)",
        "CREATE INDEX i ON t(b)",
        "INSERT INTO t VALUES (1, 2, 3), (4, 5, 6)",
        "BEGIN",
        "INSERT INTO t VALUES (7, 8, 9)",
        "ALTER TABLE t ADD d DEFAULT 'x'",
        "UPDATE t SET d = 'y' WHERE a = 4",
        "ALTER TABLE t RENAME COLUMN b TO bb",
        "ALTER TABLE t DROP COLUMN c",
        "ALTER TABLE t RENAME TO u",
        "INSERT INTO u VALUES (10, 11, 12)",
        "SELECT * FROM u",
        "ROLLBACK",
        "SELECT * FROM t WHERE b = 5",
        "SAVEPOINT s",
        "ALTER TABLE t ADD e DEFAULT 1",
        "SAVEPOINT s2",
        "ALTER TABLE t RENAME TO w",
        "DROP TABLE w",
        "ROLLBACK TO s2",
        "SELECT * FROM t",
        "ROLLBACK TO s",
        "RELEASE s",
        "BEGIN",
        "ALTER TABLE t ADD f DEFAULT 2",
        "ALTER TABLE t DROP COLUMN a",
        "COMMIT",
        NULL,
    };

    (void)state;
    run_script(script, "t");
}

/* The ALTERs reach the WAL and are replayed at a reopen; a checkpoint
 * writes the altered tables. */
static void alter_is_durable(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db;
    struct common_buf before, after;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c);"
                     "CREATE INDEX i ON t(b) WHERE c > 0;"
                     "INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2);"
                     "ALTER TABLE t ADD d DEFAULT 9;"
                     "ALTER TABLE t RENAME COLUMN b TO bb;"
                     "ALTER TABLE t RENAME TO u;"
                     "INSERT INTO u VALUES (3, 'z', 3, 4);"
                     "BEGIN; ALTER TABLE u DROP COLUMN d; ROLLBACK;"
                     "CREATE TABLE gone(x, y); ALTER TABLE gone DROP y");
    dump_db(db, &before);
    engine_close(db);
    db = storage_open(dir.db);
    dump_db(db, &after);
    assert_string_equal((const char *)before.data, (const char *)after.data);
    assert_integrity_ok(db);
    common_buf_close(&after);
    storage_exec(db, "VACUUM");
    engine_close(db);
    db = storage_open(dir.db);
    dump_db(db, &after);
    assert_string_equal((const char *)before.data, (const char *)after.data);
    storage_exec(db, "INSERT INTO u(bb) VALUES ('w');"
                     "ALTER TABLE u ADD e TEXT DEFAULT 'e'");
    assert_integrity_ok(db);
    engine_close(db);
    common_buf_close(&before);
    common_buf_close(&after);
    scratch_dir_remove(&dir);
}

static int allow(void *ctx, struct engine_db *db, struct engine_commit *commit)
{
    (void)ctx;
    (void)db;
    (void)commit;
    return 0;
}

static void expect_error(struct engine_db *db, const char *sql,
                         const char *message)
{
    assert_int_not_equal(engine_exec(db, sql, NULL, NULL), 0);
    assert_string_equal(engine_errmsg(db), message);
}

/* With a commit hook (replication) set, only ADD COLUMN runs; system
 * tables are not altered by user SQL. */
static void replicated_and_system_tables(void **state)
{
    struct engine_db *db;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    assert_int_equal(engine_exec(db, "CREATE TABLE t(a, b)", NULL, NULL), 0);
    assert_int_equal(
        engine_exec_system(db, "CREATE TABLE sinew_x(a)", NULL, NULL), 0);
    expect_error(db, "ALTER TABLE sinew_x ADD b",
                 "table sinew_x may not be "
                 "altered");
    expect_error(db, "ALTER TABLE t RENAME TO sinew_y",
                 "object name reserved for internal use: sinew_y");
    assert_int_equal(
        engine_exec_system(db, "ALTER TABLE sinew_x ADD b", NULL, NULL), 0);
    assert_int_equal(engine_commit_hook_set(db, allow, NULL), 0);
    expect_error(db, "ALTER TABLE t RENAME TO u",
                 "ALTER TABLE RENAME TO is not supported in a replicated "
                 "database");
    expect_error(db, "ALTER TABLE t RENAME a TO c",
                 "ALTER TABLE RENAME COLUMN is not supported in a replicated "
                 "database");
    expect_error(db, "ALTER TABLE t DROP COLUMN b",
                 "ALTER TABLE DROP COLUMN is not supported in a replicated "
                 "database");
    assert_int_equal(
        engine_exec(db, "ALTER TABLE t ADD c DEFAULT 1", NULL, NULL), 0);
    engine_close(db);
}

static void alter_survives_every_allocation_failure(void **state)
{
    static const char *const script =
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c);"
        "CREATE INDEX i ON t(c) WHERE c > 0;"
        "INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2);"
        "ALTER TABLE t ADD d DEFAULT 'q';"
        "ALTER TABLE t RENAME COLUMN c TO cc;"
        "BEGIN; ALTER TABLE t RENAME TO u; ALTER TABLE u DROP COLUMN d;"
        "ROLLBACK; ALTER TABLE t DROP COLUMN d;";

    (void)state;
    assert_true(pair_oom_walk(script) > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rename_table_matches_sqlite),
        cmocka_unit_test(rename_column_matches_sqlite),
        cmocka_unit_test(add_column_matches_sqlite),
        cmocka_unit_test(drop_column_matches_sqlite),
        cmocka_unit_test(rollback_undoes_alter),
        cmocka_unit_test(alter_is_durable),
        cmocka_unit_test(replicated_and_system_tables),
        cmocka_unit_test(alter_survives_every_allocation_failure),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
