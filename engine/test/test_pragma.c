/* SPDX-License-Identifier: MIT
 *
 * Goal: the PRAGMA statements sinew has (table_info, index_list,
 * index_info, user_version, synchronous, journal_mode, integrity_check,
 * quick_check) and VACUUM give SQLite's result columns, rows and errors;
 * unknown pragmas do nothing, as in SQLite.
 * Method: each statement runs in libsqlite3 and in the engine on a memory
 * database (sqlite_pair.h) and the outcomes are compared whole: column
 * names, every value with its storage class, error messages, and whether a
 * transaction is open. The schemas exercise what SQLite's printing
 * depends on: declared types (standard names, quoting), DEFAULT texts,
 * composite and INTEGER primary keys, duplicate constraints, REPLACE
 * ordering and CREATE INDEX order across DROP INDEX and ROLLBACK. The few
 * deliberate differences are checked against sinew alone.
 */
#include "sqlite_pair.h"
#include "storage_test.h"

static const char *const schemas[] = {
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 'x', "
    "c REAL DEFAULT (1 + 2), d BLOB, e)",
    "CREATE TABLE t2(a, b, c, PRIMARY KEY(c, a))",
    "CREATE TABLE t3(a INT PRIMARY KEY DESC, b int UNIQUE, c Integer, "
    "d VARCHAR(30) COLLATE NOCASE UNIQUE ON CONFLICT REPLACE)",
    "CREATE TABLE t4(x UNIQUE ON CONFLICT REPLACE, y UNIQUE, "
    "z UNIQUE ON CONFLICT REPLACE, w UNIQUE, UNIQUE(y, x))",
    "CREATE TABLE t5(a UNIQUE PRIMARY KEY, b, c, UNIQUE(a), UNIQUE(b, a), "
    "UNIQUE(c COLLATE nocase), UNIQUE(c), UNIQUE(c COLLATE binary), "
    "UNIQUE(b, a) ON CONFLICT REPLACE)",
    "CREATE TABLE t6(a INTEGER, b, PRIMARY KEY(a DESC))",
    "CREATE TABLE t7(\"Mixed Case\" \"my type\" DEFAULT -5, "
    "[b c] 'int' DEFAULT + 7, f DEFAULT abc, g DEFAULT \"q\", "
    "h DEFAULT - 3.5, i \"x\" \"y\", j DEFAULT CURRENT_TIME, "
    "k DEFAULT x'0a', l DEFAULT TRUE, m DEFAULT NULL, "
    "n [br] DEFAULT (/*c*/ 1 ), o character varying(10, 2) "
    "DEFAULT 'it''s', p DEFAULT 0x1F, q text DEFAULT ( lower('A') ), "
    "r \"real\", s `Blob`, t ANY, u 'a''b', v DEFAULT false)",
    "CREATE TABLE t8(a INTEGER PRIMARY KEY UNIQUE, b UNIQUE COLLATE nocase, "
    "c NOT NULL, UNIQUE(b COLLATE NOCASE), UNIQUE(c, b), UNIQUE(c, b))",
    "CREATE TABLE t9(a PRIMARY KEY ON CONFLICT REPLACE, b UNIQUE, "
    "c UNIQUE ON CONFLICT REPLACE)",
};

/* index_info for every index SQLite lists for table. */
static void same_index_infos(struct pair *p, const char *table)
{
    char sql[256];
    sqlite3_stmt *stmt;

    snprintf(sql, sizeof(sql), "PRAGMA index_list(%s)", table);
    pair_same(p, sql);
    assert_int_equal(sqlite3_prepare_v2(p->oracle, sql, -1, &stmt, NULL),
                     SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        char info[256];

        snprintf(info, sizeof(info), "PRAGMA index_info('%s')",
                 (const char *)sqlite3_column_text(stmt, 1));
        pair_same(p, info);
    }
    sqlite3_finalize(stmt);
}

static void pragma_table_info_matches_sqlite(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
        char sql[64];

        pair_same(&p, schemas[i]);
        snprintf(sql, sizeof(sql), "PRAGMA table_info(t%zu)", i + 1);
        pair_same(&p, sql);
    }
    pair_same(&p, "PRAGMA table_info('t1')");
    pair_same(&p, "PRAGMA TABLE_INFO = T2");
    pair_same(&p, "PRAGMA main.table_info(t3)");
    pair_same(&p, "PRAGMA \"table_info\"(\"t7\")");
    pair_same(&p, "PRAGMA table_info(nosuch)");
    pair_same(&p, "PRAGMA table_info");
    pair_same(&p, "PRAGMA table_info(sqlite_master)");
    pair_same(&p, "PRAGMA table_info(SQLITE_SCHEMA)");
    pair_close(&p);
}

static void pragma_index_list_matches_sqlite(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
        char table[16];

        pair_same(&p, schemas[i]);
        snprintf(table, sizeof(table), "t%zu", i + 1);
        same_index_infos(&p, table);
    }
    pair_same(&p, "PRAGMA index_list");
    pair_same(&p, "PRAGMA index_info");
    pair_same(&p, "PRAGMA index_list(nosuch)");
    pair_same(&p, "PRAGMA index_info(nosuch)");
    pair_same(&p, "PRAGMA index_info(t1)");
    pair_same(&p, "PRAGMA index_info(SQLITE_AUTOINDEX_T2_1)");
    pair_close(&p);
}

/* CREATE INDEX order, through DROP INDEX and a rolled back CREATE. */
static void pragma_index_list_follows_create_index(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a, b UNIQUE, c UNIQUE ON CONFLICT REPLACE)",
        "CREATE INDEX i1 ON t(b, a DESC)",
        "CREATE UNIQUE INDEX i2 ON t(c COLLATE nocase)",
        "CREATE INDEX i3 ON t(a) WHERE b > 0",
        "CREATE INDEX i4 ON t(c)",
        "DROP INDEX i2",
        "CREATE INDEX i5 ON t(a, b, c)",
        "BEGIN",
        "CREATE UNIQUE INDEX i6 ON t(a, b)",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    for (size_t i = 0; script[i] != NULL; i++) {
        pair_same(&p, script[i]);
        same_index_infos(&p, "t");
    }
    pair_same(&p, "ROLLBACK");
    same_index_infos(&p, "t");
    pair_same(&p, "DROP INDEX i1");
    same_index_infos(&p, "t");
    pair_close(&p);
}

static void pragma_user_version_matches_sqlite(void **state)
{
    static const char *const values[] = {
        "7",    "'12abc'",     "3000000000", "-0x10",      "0x7fffffff",
        "1.9",  "-2147483648", "abc",        "' 5'",       "'+5'",
        "+42",  "-1e3",        "0x80000000", "ON",         "DEFAULT",
        "'-3'", "00000000012", "-0",         "2147483648",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same(&p, "PRAGMA user_version");
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char sql[64];

        snprintf(sql, sizeof(sql), "PRAGMA user_version = %s", values[i]);
        pair_same(&p, sql);
        pair_same(&p, "PRAGMA user_version");
        snprintf(sql, sizeof(sql), "PRAGMA main.user_version(%s)", values[i]);
        pair_same(&p, sql);
        pair_same(&p, "PRAGMA USER_VERSION");
    }
    pair_same(&p, "PRAGMA user_version = 5");
    pair_same(&p, "BEGIN");
    pair_same(&p, "PRAGMA user_version = 6");
    pair_same(&p, "PRAGMA user_version");
    pair_same(&p, "ROLLBACK");
    pair_same(&p, "PRAGMA user_version");
    pair_same(&p, "SAVEPOINT a");
    pair_same(&p, "PRAGMA user_version = 8");
    pair_same(&p, "SAVEPOINT b");
    pair_same(&p, "PRAGMA user_version = 9");
    pair_same(&p, "ROLLBACK TO b");
    pair_same(&p, "PRAGMA user_version");
    pair_same(&p, "RELEASE a");
    pair_same(&p, "PRAGMA user_version");
    pair_close(&p);
}

static void pragma_synchronous_matches_sqlite(void **state)
{
    static const char *const values[] = {
        "off",  "NORMAL", "Full", "extra", "0",       "1",      "2",
        "3",    "yes",    "no",   "true",  "false",   "on",     "'full'",
        "junk", "0x2",    "-1",   "7",     "8",       "9",      "10",
        "11",   "1.5",    "+3",   "''",    "DEFAULT", "DELETE", "\"off\"",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same(&p, "PRAGMA synchronous");
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char sql[64];

        snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s", values[i]);
        pair_same(&p, sql);
        pair_same(&p, "PRAGMA synchronous");
    }
    pair_same(&p, "BEGIN");
    pair_same(&p, "PRAGMA synchronous");
    pair_same_error(&p, "PRAGMA synchronous = 1");
    pair_same_error(&p, "PRAGMA main.synchronous(OFF)");
    pair_same(&p, "COMMIT");
    pair_close(&p);
}

static void pragma_journal_mode_and_checks_match_sqlite(void **state)
{
    static const char *const script[] = {
        "PRAGMA journal_mode",
        "PRAGMA journal_mode = wal",
        "PRAGMA journal_mode = delete",
        "PRAGMA journal_mode(junk)",
        "PRAGMA main.journal_mode",
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)",
        "INSERT INTO t VALUES (1, 'one'), (2, 'two')",
        "PRAGMA integrity_check",
        "PRAGMA integrity_check(5)",
        "PRAGMA integrity_check(-1)",
        "PRAGMA integrity_check = 0",
        "PRAGMA integrity_check(t)",
        "PRAGMA integrity_check('5')",
        "PRAGMA quick_check",
        "PRAGMA QUICK_CHECK(1)",
        "PRAGMA main.quick_check(t)",
        "PRAGMA integrity_check(sqlite_master)",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same_all(&p, script);
    pair_same_error(&p, "PRAGMA integrity_check(nosuch)");
    pair_same_error(&p, "PRAGMA main.quick_check(nosuch)");
    pair_close(&p);
}

static void pragma_unknown_does_nothing(void **state)
{
    static const char *const script[] = {
        "PRAGMA nosuch",
        "PRAGMA nosuch = 5",
        "PRAGMA nosuch('x')",
        "PRAGMA main.nosuch(-1.5)",
        "PRAGMA left = on",
        "PRAGMA table_xinfo_not_here(t)",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same_all(&p, script);
    pair_same_error(&p, "PRAGMA foo.user_version");
    pair_same_error(&p, "PRAGMA foo.nosuch");
    pair_same_error(&p, "PRAGMA \"x y\".table_info(t)");
    pair_close(&p);
}

static void vacuum_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "VACUUM",
        "VACUUM main",
        "VACUUM 'MAIN'",
        "VACUUM temp",
        "SELECT * FROM t",
        "BEGIN",
        "VACUUM temp",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    pair_same_all(&p, script);
    pair_same_error(&p, "VACUUM");
    pair_same_error(&p, "VACUUM main");
    pair_same(&p, "COMMIT");
    pair_same_error(&p, "VACUUM foo");
    pair_same(&p, "SAVEPOINT s");
    pair_same_error(&p, "VACUUM");
    pair_same(&p, "RELEASE s");
    pair_same(&p, "VACUUM");
    pair_close(&p);
}

/* The first column of the one row sql returns, as text. */
static void expect_first(struct engine_db *db, const char *sql,
                         const char *expected)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(db, sql, -1, &stmt, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_string_equal(engine_column_text(stmt, 0), expected);
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
}

/* Where sinew chooses to differ, and says so. */
static void pragma_differences_are_reported(void **state)
{
    struct engine_db *db;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    assert_int_equal(engine_exec(db, "PRAGMA temp.user_version", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "the temp schema is not supported yet");
    assert_int_equal(engine_exec(db, "VACUUM INTO 'x.db'", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "VACUUM INTO is not supported yet");
    /* Levels past EXTRA sync as FULL in SQLite's pager; sinew keeps FULL. */
    assert_int_equal(engine_exec(db, "PRAGMA synchronous = 5", NULL, NULL), 0);
    expect_first(db, "PRAGMA synchronous", "2");
    engine_close(db);
}

/* On a file database: journal_mode is wal, user_version is kept across a
 * reopen and synchronous is not (as in SQLite), VACUUM keeps the data. */
static void pragma_file_database(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    expect_first(db, "PRAGMA journal_mode", "wal");
    expect_first(db, "PRAGMA journal_mode = memory", "wal");
    expect_first(db, "PRAGMA synchronous", "2");
    storage_exec(db, "PRAGMA synchronous = NORMAL");
    expect_first(db, "PRAGMA synchronous", "1");
    storage_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE);"
                     "INSERT INTO t VALUES (1, 'x'), (2, 'y');"
                     "PRAGMA user_version = 42; BEGIN;"
                     "PRAGMA user_version = 43; ROLLBACK; VACUUM;"
                     "INSERT INTO t VALUES (3, 'z')");
    expect_first(db, "PRAGMA integrity_check", "ok");
    engine_close(db);
    db = storage_open(dir.db);
    expect_first(db, "PRAGMA user_version", "42");
    expect_first(db, "PRAGMA synchronous", "2");
    expect_first(db, "SELECT group_concat(b) FROM t", "x,y,z");
    expect_first(db, "PRAGMA quick_check", "ok");
    engine_close(db);
    scratch_dir_remove(&dir);
}

static void pragma_survives_every_allocation_failure(void **state)
{
    static const char *const script =
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b \"x\" UNIQUE, "
        "c DEFAULT ( 1 + 2 ), UNIQUE(b, c) ON CONFLICT REPLACE);"
        "CREATE INDEX i ON t(c, b) WHERE c > 0;"
        "INSERT INTO t(b) VALUES (1), (2);"
        "PRAGMA table_info(t); PRAGMA index_list(t);"
        "PRAGMA index_info(i); PRAGMA index_info(sqlite_autoindex_t_2);"
        "PRAGMA user_version = 7; PRAGMA user_version;"
        "PRAGMA synchronous = off; PRAGMA synchronous;"
        "PRAGMA journal_mode; PRAGMA integrity_check; VACUUM;";

    (void)state;
    assert_true(pair_oom_walk(script) > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pragma_table_info_matches_sqlite),
        cmocka_unit_test(pragma_index_list_matches_sqlite),
        cmocka_unit_test(pragma_index_list_follows_create_index),
        cmocka_unit_test(pragma_user_version_matches_sqlite),
        cmocka_unit_test(pragma_synchronous_matches_sqlite),
        cmocka_unit_test(pragma_journal_mode_and_checks_match_sqlite),
        cmocka_unit_test(pragma_unknown_does_nothing),
        cmocka_unit_test(vacuum_matches_sqlite),
        cmocka_unit_test(pragma_differences_are_reported),
        cmocka_unit_test(pragma_survives_every_allocation_failure),
        cmocka_unit_test(pragma_file_database),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
