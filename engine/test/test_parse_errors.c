/* SPDX-License-Identifier: MIT
 *
 * test_parse_errors.c: the parser against SQLite's own, in-process.
 *
 * Goal: for malformed statements our message is exactly the one
 * sqlite3_prepare_v2() leaves in sqlite3_errmsg(), and every valid
 * statement of the supported subset that SQLite's parser accepts, ours
 * accepts too, ending at the same byte.
 *
 * Method: each statement is prepared by libsqlite3 on a connection whose
 * schema holds the tables the statements name (so that only syntax
 * decides), and parsed by engine__parse(). The error list holds statements
 * whose error is purely syntactic (tokens, grammar, incomplete input, and
 * the few errors SQLite raises while parsing); the test first checks that
 * SQLite does reject each one, so the list cannot silently rot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <string.h>

#include "ast.h"
#include "common_test.h"

static const char *const schema =
    "CREATE TABLE t(a, b, c);"
    "CREATE TABLE u(x UNIQUE, y);"
    "CREATE TABLE kw(\"key\", action, \"replace\", \"filter\", rowid_, "
    "\"end\", \"first\", \"last\");"
    "CREATE INDEX ti ON t(a);";

static const char *const bad_statements[] = {
    /* tokens */
    "SELECT #",
    "SELECT 1 # 2",
    "SELECT 'abc",
    "SELECT \"abc",
    "SELECT [abc",
    "SELECT `abc",
    "SELECT x'abc'",
    "SELECT x'0g'",
    "SELECT X'123'",
    "SELECT 12abc",
    "SELECT 1e",
    "SELECT 1e+",
    "SELECT 0x",
    "SELECT 1.2.3",
    "SELECT $",
    "SELECT :",
    "SELECT @",
    "SELECT $a(b c)",
    "SELECT :a(",
    "SELECT 1 ! 2",
    "SELECT \\",
    "SELECT ^1",
    "SELECT {1}",
    "SELECT 1 /*",
    "SELECT ?0",
    "SELECT #1",
    "SELECT 0x1FFFFFFFFFFFFFFFF",
    "SELECT -0x8000000000000000",
    "SELECT 1 FROM t WHERE a = -0x10000000000000000",
    /* incomplete input */
    "SELECT",
    "SELECT 1,",
    "SELECT 1 +",
    "SELECT (1",
    "SELECT * FROM",
    "SELECT * FROM t WHERE",
    "SELECT * FROM t ORDER",
    "SELECT * FROM t ORDER BY",
    "SELECT * FROM t GROUP BY a HAVING",
    "SELECT * FROM t LIMIT",
    "SELECT * FROM t LIMIT 1 OFFSET",
    "SELECT CASE",
    "SELECT CASE WHEN 1",
    "SELECT CASE WHEN 1 THEN 2",
    "SELECT CAST(1 AS",
    "SELECT a IN (",
    "SELECT a BETWEEN 1",
    "SELECT a BETWEEN 1 AND",
    "SELECT 5 BETWEEN 0 OR 1 AND 2",
    "SELECT count(",
    "SELECT f(1,",
    "SELECT 1 NOT",
    "SELECT 1 IS",
    "SELECT 1 IS NOT",
    "SELECT a COLLATE",
    "SELECT EXISTS",
    "VALUES",
    "VALUES (1",
    "VALUES (1),",
    "CREATE",
    "CREATE TABLE",
    "CREATE TABLE v",
    "CREATE TABLE v(",
    "CREATE TABLE v(a",
    "CREATE TABLE v(a,",
    "CREATE TABLE v(a INT,",
    "CREATE TABLE v(a) WITHOUT",
    "CREATE INDEX",
    "CREATE INDEX i ON",
    "CREATE INDEX i ON t(",
    "CREATE UNIQUE",
    "DROP",
    "DROP TABLE",
    "DROP TABLE IF",
    "INSERT",
    "INSERT INTO",
    "INSERT INTO t",
    "INSERT INTO t VALUES",
    "INSERT INTO t VALUES (1",
    "INSERT INTO t (a",
    "INSERT INTO t DEFAULT",
    "INSERT INTO t VALUES (1) ON CONFLICT",
    "INSERT INTO t VALUES (1) ON CONFLICT DO",
    "INSERT INTO t VALUES (1) ON CONFLICT DO UPDATE SET",
    "UPDATE",
    "UPDATE t",
    "UPDATE t SET",
    "UPDATE t SET a",
    "UPDATE t SET a =",
    "UPDATE t SET (a, b) =",
    "DELETE",
    "DELETE FROM",
    "DELETE FROM t WHERE",
    "DELETE FROM t RETURNING",
    /* near "X" */
    "SELECT FROM t",
    "SELECT * FROM t WHERE FROM",
    "SELECT 1 2",
    "SELECT 1 not 2",
    "SELECT 1 left",
    "SELECT 1 commit",
    "SELECT a FROM t t2 t3",
    "SELECT * FROM t WHERE a = = 1",
    "SELECT * FROM t GROUP a",
    "SELECT * FROM t ORDER a",
    "SELECT * FROM t ORDER BY a NULLS",
    "SELECT * FROM t ORDER BY a NULLS MIDDLE",
    "SELECT * FROM t LIMIT 1 OFFSET 2 OFFSET 3",
    "SELECT a LIKE 'x' ESCAPE 'y' ESCAPE 'z' FROM t",
    "SELECT a = b ESCAPE c FROM t",
    "SELECT CASE END",
    "SELECT CASE 1 END",
    "SELECT CASE WHEN 1 THEN 2 ELSE 3 ELSE 4 END",
    "SELECT CAST 1",
    "SELECT CAST(1)",
    "SELECT CAST(1 AS INT(1, 2, 3))",
    "SELECT CAST(1 AS INT(a))",
    "SELECT EXISTS 1",
    "SELECT EXISTS (1)",
    "SELECT a IS DISTINCT b FROM t",
    "SELECT a IN 1",
    "SELECT count(* 1)",
    "SELECT count(*,1)",
    "SELECT f(DISTINCT *)",
    "SELECT 1 FROM t WHERE",
    "SELECT (SELECT 1",
    "SELECT * FROM t WHERE a IN (SELECT 1",
    "SELECT 1 AS",
    "SELECT 1 AS AS",
    "SELECT t. FROM t",
    "SELECT .5.",
    "SELECT * FROM (SELECT 1) AS",
    "SELECT DISTINCT ALL 1",
    "SELECT ALL",
    "SELECT 1 FROM t HAVING",
    "SELECT 1 WHERE 1 WHERE 2",
    "SELECT +",
    "SELECT NOT",
    "SELECT ~",
    "SELECT 1 ISNULL ISNULL NOT",
    "SELECT 1 COLLATE 1",
    "VALUES (1) ORDER BY 1",
    "VALUES (1) LIMIT 1",
    "VALUES 1",
    "VALUES ()",
    "CREATE TABLE v()",
    "CREATE TABLE v(a) foo bar",
    "CREATE TABLE v(a) STRICT STRICT",
    "CREATE TABLE v(a PRIMARY)",
    "CREATE TABLE v(a PRIMARY KEY ON)",
    "CREATE TABLE v(a PRIMARY KEY ON CONFLICT)",
    "CREATE TABLE v(a PRIMARY KEY ON CONFLICT NOTHING)",
    "CREATE TABLE v(a UNIQUE xyz)",
    "CREATE TABLE v(a NOT NULL xyz)",
    "CREATE TABLE v(a NOT xyz)",
    "CREATE TABLE v(a DEFAULT)",
    "CREATE TABLE v(a DEFAULT 1 abc)",
    "CREATE TABLE v(a DEFAULT -x)",
    "CREATE TABLE v(a DEFAULT 1 + 2)",
    "CREATE TABLE v(a CHECK a)",
    "CREATE TABLE v(a COLLATE)",
    "CREATE TABLE v(a, PRIMARY KEY a)",
    "CREATE TABLE v(a, UNIQUE)",
    "CREATE TABLE v(a, CHECK (a) b)",
    "CREATE TABLE v(a, UNIQUE(a), b)",
    "CREATE TABLE v(a INT(1)",
    "CREATE TABLE v(a INT(x))",
    "CREATE TABLE v(a INT(1) INT)",
    "CREATE TABLE v(a) WITHOUT",
    "CREATE TABLE v(a) WITHOUT foo",
    "CREATE TABLE v(a) xyz",
    "CREATE TABLE if(a)",
    "CREATE TABLE IF EXISTS v(a)",
    "CREATE TABLE v AS",
    "CREATE TABLE v AS VALUES",
    "CREATE TEMP INDEX i ON t(a)",
    "CREATE UNIQUE TABLE v(a)",
    "CREATE INDEX i t(a)",
    "CREATE INDEX i ON t a",
    "CREATE INDEX i ON t()",
    "CREATE INDEX i ON t(a) WHERE",
    "CREATE INDEX i ON t(a NULLS FIRST)",
    "CREATE TABLE v(a, PRIMARY KEY(a NULLS LAST))",
    "DROP t",
    "DROP TABLE IF NOT EXISTS t",
    "DROP TABLE t u",
    "DROP INDEX",
    "INSERT t VALUES (1)",
    "INSERT INTO t VALUES 1",
    "INSERT INTO t VALUES (1) (2)",
    "INSERT INTO t () VALUES (1)",
    "INSERT INTO t (a,) VALUES (1)",
    "INSERT INTO t DEFAULT VALUES ON CONFLICT DO NOTHING",
    "INSERT INTO t SELECT * FROM u ON CONFLICT DO NOTHING",
    "INSERT INTO t VALUES (1, 2, 3) ON CONFLICT DO NOTHING ON CONFLICT "
    "(a) DO NOTHING",
    "INSERT INTO t VALUES (1) ON CONFLICT (a) DO",
    "INSERT INTO t VALUES (1) ON CONFLICT (a) DO UPDATE a = 1",
    "INSERT OR INTO t VALUES (1)",
    "INSERT OR NOTHING INTO t VALUES (1)",
    "REPLACE t VALUES (1)",
    "REPLACE OR IGNORE INTO t VALUES (1)",
    "INSERT INTO t VALUES (1) RETURNING",
    "INSERT INTO t t2 VALUES (1)",
    "UPDATE t a = 1",
    "UPDATE t SET a = 1 b = 2",
    "UPDATE t SET a = 1,",
    "UPDATE t SET (a, b) = (1, 2, 3)",
    "UPDATE t SET (a, b) = 1",
    "UPDATE t SET a = 1 WHERE",
    "UPDATE t SET a = 1 ORDER BY a",
    "UPDATE OR t SET a = 1",
    "DELETE t",
    "DELETE FROM t WHERE a = 1 ORDER BY a",
    "BEGIN foo",
    "BEGIN DEFERRED IMMEDIATE",
    "COMMIT foo",
    "END END",
    "ROLLBACK foo",
    "SELECT 1 FROM t ON 1",
    "VALUES (1), (2, 3)",
    "UPDATE t SET a = 1 RETURNING",
    "SELECT a FROM t WHERE a = 1 GROUP",
    "SELECT 1 + + ",
    "SELECT 1 IS NOT DISTINCT 2",
    "garbage",
    "SELECT 1 FROM t AS",
    "SELECT 1 IN ()()",
    "SELECT (1) (2)",
    /* PRAGMA, SAVEPOINT, RELEASE, ROLLBACK TO, VACUUM */
    "PRAGMA",
    "PRAGMA x =",
    "PRAGMA x = -",
    "PRAGMA x = -abc",
    "PRAGMA x = +'a'",
    "PRAGMA x = -'a'",
    "PRAGMA x = NULL",
    "PRAGMA x = x'00'",
    "PRAGMA x = ?",
    "PRAGMA x(",
    "PRAGMA x(1",
    "PRAGMA x(1,2)",
    "PRAGMA x()",
    "PRAGMA x = 1 2",
    "PRAGMA x = 'a' 'b'",
    "PRAGMA x = a.b",
    "PRAGMA x = select",
    "PRAGMA x = (1)",
    "PRAGMA x = 1 + 1",
    "PRAGMA a.b.c",
    "PRAGMA a.",
    "PRAGMA .x",
    "PRAGMA select",
    "PRAGMA x DESC",
    "PRAGMA x == = 1",
    "PRAGMA x = #",
    "SAVEPOINT",
    "SAVEPOINT ;",
    "SAVEPOINT a b",
    "SAVEPOINT select",
    "SAVEPOINT 1",
    "SAVEPOINT a.b",
    "RELEASE",
    "RELEASE SAVEPOINT",
    "RELEASE savepoint",
    "RELEASE TO a",
    "RELEASE a b",
    "ROLLBACK TO",
    "ROLLBACK TO SAVEPOINT",
    "ROLLBACK TRANSACTION TO",
    "ROLLBACK TO 1",
    "ROLLBACK TO a b",
    "ROLLBACK SAVEPOINT a",
    "ROLLBACK TO SAVEPOINT SAVEPOINT SAVEPOINT",
    "VACUUM x y",
    "VACUUM INTO",
    "VACUUM main INTO",
    "VACUUM INTO 'f' x",
    "VACUUM 1",
    "VACUUM main.x",
};

static const char *const good_statements[] = {
    "SELECT 1",
    "select 1;",
    "  SELECT 1 ; SELECT 2",
    ";;SELECT 1",
    "SELECT 1 -- comment",
    "SELECT 1 /* comment */",
    "SELECT 1 /* unterminated",
    "SELECT -9223372036854775808",
    "SELECT 9223372036854775808",
    "SELECT 0x7FFFFFFFFFFFFFFF, 0xffffffffffffffff, 0x00000000000000000001",
    "SELECT 1.5, .5, 5., 1e10, 1E-3, 1.5e+2",
    "SELECT 'it''s', x'', X'0a1B', NULL",
    "SELECT \"a\", [a], `a` FROM t",
    "SELECT ?, ?5, :a, @b, $c, $d::e(f), ?, :a",
    "SELECT #abc",
    "SELECT a + b * c - a / b % c FROM t",
    "SELECT a || b || c FROM t",
    "SELECT a << 1 >> 2 & 3 | 4 FROM t",
    "SELECT -a, +a, ~a, NOT a, - - a, NOT NOT a FROM t",
    "SELECT a = b, a == b, a != b, a <> b, a < b, a <= b, a > b, a >= b "
    "FROM t",
    "SELECT a IS b, a IS NOT b, a IS DISTINCT FROM b, "
    "a IS NOT DISTINCT FROM b FROM t",
    "SELECT a ISNULL, a NOTNULL, a NOT NULL, a IS NULL, a IS NOT NULL FROM t",
    "SELECT a IN (1, 2), a NOT IN (1), a IN (), a IN (SELECT x FROM u) "
    "FROM t",
    "SELECT a LIKE 'x', a NOT LIKE 'y' ESCAPE 'z', a GLOB 'g', "
    "a NOT GLOB 'h' FROM t",
    "SELECT a BETWEEN 1 AND 2, a NOT BETWEEN b AND c FROM t",
    "SELECT 5 BETWEEN 1 = 1 AND 2",
    "SELECT 5 BETWEEN NOT 0 AND 9",
    "SELECT 1 BETWEEN 0 AND 1 BETWEEN 0 AND 1",
    "SELECT 1 BETWEEN 0 NOT NULL AND 2",
    "SELECT a COLLATE nocase, a COLLATE \"binary\" FROM t",
    "SELECT - 1 COLLATE nocase",
    "SELECT CAST(a AS INTEGER), CAST(a AS VARCHAR(10)), "
    "CAST(a AS DECIMAL(10, -2)), CAST(a AS) FROM t",
    "SELECT CAST(1 AS 'int' key(1, +2))",
    "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END "
    "FROM t",
    "SELECT CASE WHEN a THEN 1 END FROM t",
    "SELECT CASE WHEN 1 THEN 2 END end",
    "SELECT EXISTS (SELECT 1), NOT EXISTS (SELECT x FROM u)",
    "SELECT (SELECT 1), (SELECT max(x) FROM u)",
    "SELECT count(*), count(DISTINCT a), count(ALL a), sum(a), random() "
    "FROM t",
    "SELECT count(*) FILTER (WHERE a > 1) FROM t",
    "SELECT sum(a) FILTER (WHERE b) AS s FROM t",
    "SELECT TRUE, FALSE, true AND false",
    "SELECT current_date, current_time, current_timestamp",
    "SELECT replace('a', 'b', 'c'), like('a', 'b'), glob('a', 'b')",
    "SELECT 1 key, 2 action, 3 \"replace\", 4 filter, 5 end, 6 rowid",
    "SELECT 1 AS x, 2 y, 3 'z', 4 [w]",
    "SELECT 1 AS left",
    "SELECT 1 AS rollback",
    "SELECT 1 filter",
    "SELECT 1 window",
    "SELECT key, action, \"replace\", filter, first, last FROM kw",
    "SELECT kw.key, kw.action FROM kw",
    "SELECT * FROM t",
    "SELECT t.* FROM t",
    "SELECT t.*, * FROM t",
    "SELECT x.* FROM t AS x",
    "SELECT DISTINCT a FROM t",
    "SELECT ALL a FROM t",
    "SELECT a FROM t WHERE a > 1 AND b < 2 OR c = 3",
    "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1",
    "SELECT a FROM t ORDER BY a",
    "SELECT a FROM t ORDER BY a DESC, b ASC, c",
    "SELECT a FROM t ORDER BY a NULLS FIRST, b DESC NULLS LAST",
    "SELECT a FROM t ORDER BY a COLLATE nocase DESC",
    "SELECT a FROM t LIMIT 10",
    "SELECT a FROM t LIMIT 10 OFFSET 5",
    "SELECT a FROM t LIMIT 5, 10",
    "SELECT a FROM t AS x WHERE x.a = 1",
    "SELECT a FROM t x",
    "SELECT * FROM (SELECT a FROM t)",
    "SELECT * FROM (SELECT a FROM t) AS s",
    "SELECT * FROM (SELECT a FROM t) s WHERE s.a > 0",
    "SELECT * FROM (VALUES (1), (2))",
    "SELECT * FROM t WHERE a IN (SELECT x FROM u WHERE y > 1)",
    "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.a)",
    "SELECT (1 + 2) * 3",
    "SELECT ((((1))))",
    "SELECT 1 + NOT 2 = 3",
    "SELECT 1 < 2 < 3 = 1",
    "SELECT a = b = c FROM t",
    "SELECT 1 IS 1 IS 1",
    "SELECT 1 LIKE 2 LIKE 3",
    "SELECT 1 IN (1) IN (1)",
    "SELECT a NOT NULL = 1 FROM t",
    "SELECT 1 ISNULL NOTNULL",
    "SELECT 'a' || 'b' COLLATE nocase",
    "SELECT 1 FROM t WHERE a LIKE b ESCAPE c",
    "SELECT a FROM t WHERE a MATCH 'x'",
    "SELECT t.a FROM t",
    "SELECT \"t\".\"a\" FROM t",
    "SELECT 't'.a FROM t",
    "SELECT (SELECT a FROM t ORDER BY a LIMIT 1)",
    "VALUES (1)",
    "VALUES (1, 2), (3, 4)",
    "VALUES (1 + 2, 'x'), (?, NULL)",
    "SELECT 1 WHERE 1",
    "SELECT 1 GROUP BY 1",
    "SELECT 1 ORDER BY 1",
    "CREATE TABLE v(a)",
    "CREATE TABLE v(a, b, c)",
    "CREATE TABLE v(a INTEGER PRIMARY KEY, b TEXT NOT NULL, c REAL)",
    "CREATE TABLE v(a INTEGER PRIMARY KEY AUTOINCREMENT)",
    "CREATE TABLE v(a INTEGER PRIMARY KEY DESC ON CONFLICT REPLACE)",
    "CREATE TABLE v(a VARCHAR(10), b DECIMAL(10, 2), c UNSIGNED BIG INT)",
    "CREATE TABLE v(a DEFAULT 1, b DEFAULT -1, c DEFAULT +1.5, d DEFAULT "
    "'x', e DEFAULT NULL, f DEFAULT (1 + 2), g DEFAULT x'00', "
    "h DEFAULT CURRENT_TIMESTAMP, i DEFAULT abc, j DEFAULT true)",
    "CREATE TABLE v(a UNIQUE ON CONFLICT IGNORE, b NOT NULL ON CONFLICT "
    "FAIL, c NULL, d CHECK (d > 0) CHECK (d < 10))",
    "CREATE TABLE v(a COLLATE nocase, b TEXT COLLATE rtrim)",
    "CREATE TABLE v(a CONSTRAINT c1 NOT NULL CONSTRAINT c2 UNIQUE)",
    "CREATE TABLE v(a constraint c)",
    "CREATE TABLE v(a, b, PRIMARY KEY (a, b))",
    "CREATE TABLE v(a, b, PRIMARY KEY (a DESC, b COLLATE nocase) ON "
    "CONFLICT ROLLBACK)",
    "CREATE TABLE v(a, b, UNIQUE (a), UNIQUE (b) ON CONFLICT ABORT)",
    "CREATE TABLE v(a, CHECK (a > 0), CONSTRAINT named CHECK (a < 9))",
    "CREATE TABLE v(a, UNIQUE (a) CHECK (a) PRIMARY KEY (a))",
    "CREATE TABLE v(a INTEGER, PRIMARY KEY (a AUTOINCREMENT))",
    "CREATE TABLE IF NOT EXISTS v(a)",
    "CREATE TEMP TABLE v(a)",
    "CREATE TEMPORARY TABLE v(a)",
    "CREATE TABLE v(a PRIMARY KEY) WITHOUT ROWID",
    "CREATE TABLE v(a INT) STRICT",
    "CREATE TABLE v(a INT PRIMARY KEY) STRICT, WITHOUT ROWID",
    "CREATE TABLE v AS SELECT * FROM t",
    "CREATE TABLE v AS VALUES (1)",
    "CREATE TABLE v(key, action, \"replace\", filter, first, last, rowid)",
    "CREATE TABLE v(a int key)",
    "CREATE TABLE \"v w\"(\"a b\" [c d])",
    "CREATE TABLE v(current_date, if, glob, like)",
    "CREATE INDEX i ON t(a)",
    "CREATE INDEX i ON t(a, b DESC, c COLLATE nocase ASC)",
    "CREATE UNIQUE INDEX i ON t(a)",
    "CREATE INDEX IF NOT EXISTS i ON t(a)",
    "CREATE INDEX i ON t(a) WHERE b > 0",
    "CREATE INDEX i ON t(a + b, lower(c))",
    "DROP TABLE t",
    "DROP TABLE IF EXISTS t",
    "DROP TABLE IF EXISTS nothere",
    "DROP INDEX ti",
    "DROP INDEX IF EXISTS ti",
    "INSERT INTO t VALUES (1, 2, 3)",
    "INSERT INTO t (a, b) VALUES (1, 2), (3, 4)",
    "INSERT INTO t SELECT x, y, 1 FROM u",
    "INSERT INTO t DEFAULT VALUES",
    "INSERT INTO t DEFAULT VALUES RETURNING a",
    "INSERT OR REPLACE INTO t VALUES (1, 2, 3)",
    "INSERT OR IGNORE INTO t VALUES (1, 2, 3)",
    "INSERT OR ROLLBACK INTO t VALUES (1, 2, 3)",
    "INSERT OR ABORT INTO t VALUES (1, 2, 3)",
    "INSERT OR FAIL INTO t VALUES (1, 2, 3)",
    "REPLACE INTO t VALUES (1, 2, 3)",
    "INSERT INTO t AS x VALUES (1, 2, 3)",
    "INSERT INTO t VALUES (1, 2, 3) RETURNING *",
    "INSERT INTO t VALUES (1, 2, 3) RETURNING a, b + 1 AS bb",
    "INSERT INTO t(a) VALUES (1) ON CONFLICT DO NOTHING",
    "INSERT INTO u(x) VALUES (1) ON CONFLICT (x) DO NOTHING",
    "INSERT INTO u(x) VALUES (1) ON CONFLICT (x) DO UPDATE SET y = 2",
    "INSERT INTO u(x) VALUES (1) ON CONFLICT (x) WHERE x > 0 DO UPDATE "
    "SET y = excluded.y WHERE y IS NULL",
    "INSERT INTO u(x) VALUES (1) ON CONFLICT (x) DO NOTHING ON CONFLICT "
    "DO UPDATE SET y = 1",
    "INSERT INTO u(x) VALUES (1) ON CONFLICT (x) DO NOTHING RETURNING x",
    "INSERT INTO u SELECT a, b FROM t WHERE true ON CONFLICT DO NOTHING",
    "UPDATE t SET a = 1",
    "UPDATE t SET a = 1, b = b + 1 WHERE c > 0",
    "UPDATE t SET (a, b) = (1, 2)",
    "UPDATE t SET (a, b) = (SELECT x, y FROM u)",
    "UPDATE t SET (a) = (1)",
    "UPDATE t SET (a) = (1) + 1",
    "UPDATE OR IGNORE t SET a = 1",
    "UPDATE OR REPLACE t SET a = 1 RETURNING *",
    "UPDATE t AS x SET a = x.b WHERE x.c = 1",
    "UPDATE t SET a = 1 WHERE b = 2 RETURNING a, b",
    "DELETE FROM t",
    "DELETE FROM t WHERE a = 1",
    "DELETE FROM t WHERE a = 1 RETURNING *",
    "DELETE FROM t AS x WHERE x.a = 1",
    "DELETE FROM t RETURNING a",
    "BEGIN",
    "BEGIN TRANSACTION",
    "BEGIN DEFERRED",
    "BEGIN IMMEDIATE TRANSACTION",
    "BEGIN EXCLUSIVE TRANSACTION tx",
    "COMMIT",
    "COMMIT TRANSACTION",
    "END",
    "END TRANSACTION",
    "ROLLBACK",
    "ROLLBACK TRANSACTION",
    "SELECT 1 FROM t WHERE a = ?1 AND b = :name AND c = @other",
    "SELECT ?abc",
    "SELECT 1 /* unterminated comment",
    "SELECT 1;;SELECT",
    "SELECT 'a' 'b'",
    "SELECT abs(ALL a) FROM t",
    "SELECT 1 FROM t WHERE a = ?32766",
    "PRAGMA user_version",
    "PRAGMA user_version = 5",
    "PRAGMA main.user_version(-5)",
    "PRAGMA nosuch = +1.5e3",
    "PRAGMA nosuch = ON",
    "PRAGMA nosuch = delete",
    "PRAGMA nosuch = default",
    "PRAGMA nosuch = 'text'",
    "PRAGMA nosuch(\"name\")",
    "PRAGMA nosuch = left",
    "PRAGMA \"table_info\"('t')",
    "PRAGMA table_info = t;",
    "SAVEPOINT a",
    "SAVEPOINT 'a b'",
    "SAVEPOINT savepoint",
    "SAVEPOINT release",
    "RELEASE a",
    "RELEASE SAVEPOINT a",
    "RELEASE SAVEPOINT savepoint",
    "ROLLBACK TO a",
    "ROLLBACK TO SAVEPOINT a",
    "ROLLBACK TRANSACTION TO SAVEPOINT a",
    "ROLLBACK TRANSACTION tx TO a",
    "VACUUM",
    "VACUUM main",
    "VACUUM 'main'",
    "VACUUM temp",
};

static sqlite3 *oracle_open(void)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema, NULL, NULL, NULL), SQLITE_OK);
    /* Debian raises SQLite's default of 32766; ours is SQLite's. */
    sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, ENGINE_MAX_VARIABLE_NUMBER);
    return db;
}

/* SQLite's verdict: 0 and *tail, or its error message in msg (and, in
 * *tail, the error's byte offset, or SIZE_MAX when it gives none). */
static int oracle_prepare(sqlite3 *db, const char *sql, char *msg,
                          size_t msg_size, size_t *tail)
{
    sqlite3_stmt *stmt = NULL;
    const char *end = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, &end);

    if (rc != SQLITE_OK) {
        int offset = sqlite3_error_offset(db);

        snprintf(msg, msg_size, "%s", sqlite3_errmsg(db));
        *tail = offset >= 0 ? (size_t)offset : SIZE_MAX;
        return rc;
    }
    *tail = (size_t)(end - sql);
    sqlite3_finalize(stmt);
    return 0;
}

/* Our verdict, the same way. */
static int ours_parse(const char *sql, char *msg, size_t msg_size, size_t *tail,
                      struct ast_stmt **out)
{
    struct engine_arena arena;
    size_t error_offset = 0;
    int rc;

    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, strlen(sql), out, tail, msg, msg_size,
                       &error_offset);
    engine__arena_close(&arena);
    if (rc != 0) {
        *tail = error_offset;
    }
    return rc;
}

static void parse_errors_match_sqlite(void **state)
{
    size_t count = sizeof(bad_statements) / sizeof(bad_statements[0]);
    size_t mismatches = 0;
    sqlite3 *db = oracle_open();

    (void)state;
    assert_true(count >= 150);
    for (size_t i = 0; i < count; i++) {
        char expected[512];
        char got[512];
        size_t expected_offset = 0;
        size_t tail = 0;
        struct ast_stmt *stmt = NULL;
        int rc;

        rc = oracle_prepare(db, bad_statements[i], expected, sizeof(expected),
                            &expected_offset);
        if (rc == 0) {
            printf("oracle accepts: %s\n", bad_statements[i]);
            mismatches++;
            continue;
        }
        rc = ours_parse(bad_statements[i], got, sizeof(got), &tail, &stmt);
        if (rc != ENGINE_ESQL || strcmp(expected, got) != 0) {
            printf("mismatch: %s\n  sqlite: %s\n  ours:   %s (rc %d)\n",
                   bad_statements[i], expected, rc == 0 ? "(accepted)" : got,
                   rc);
            mismatches++;
        } else if (expected_offset != SIZE_MAX && expected_offset != tail) {
            /* sqlite3_error_offset(): where the error is, for the shell's
             * "^--- error here" */
            printf("offset mismatch: %s\n  sqlite: %zu  ours: %zu\n",
                   bad_statements[i], expected_offset, tail);
            mismatches++;
        }
    }
    printf("parse errors: %zu statements, %zu mismatches\n", count, mismatches);
    sqlite3_close(db);
    assert_int_equal(mismatches, 0);
}

static void parse_accepts_what_sqlite_accepts(void **state)
{
    size_t count = sizeof(good_statements) / sizeof(good_statements[0]);
    size_t mismatches = 0;
    sqlite3 *db = oracle_open();

    (void)state;
    assert_true(count >= 150);
    for (size_t i = 0; i < count; i++) {
        char msg[512];
        size_t expected_tail = 0;
        size_t tail = 0;
        struct ast_stmt *stmt = NULL;
        int rc = oracle_prepare(db, good_statements[i], msg, sizeof(msg),
                                &expected_tail);

        if (rc != 0) {
            printf("oracle rejects: %s: %s\n", good_statements[i], msg);
            mismatches++;
            continue;
        }
        rc = ours_parse(good_statements[i], msg, sizeof(msg), &tail, &stmt);
        if (rc != 0 || stmt == NULL || tail != expected_tail) {
            printf("mismatch: %s\n  ours: rc %d %s tail %zu (sqlite %zu)\n",
                   good_statements[i], rc, rc != 0 ? msg : "", tail,
                   expected_tail);
            mismatches++;
        }
    }
    printf("parse accepts: %zu statements, %zu mismatches\n", count,
           mismatches);
    sqlite3_close(db);
    assert_int_equal(mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_errors_match_sqlite),
        cmocka_unit_test(parse_accepts_what_sqlite_accepts),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
