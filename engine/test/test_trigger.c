/* SPDX-License-Identifier: MIT
 *
 * test_trigger.c: CREATE TRIGGER, DROP TRIGGER and trigger execution
 * against libsqlite3 3.40.
 *
 * Method: the same tables are made in SQLite and in sinew (sqlite_pair.h),
 * then each script runs statement by statement in both; every outcome
 * (result column names, rows with each value's storage class, the error
 * message) must be equal. The scripts reach each timing (BEFORE, AFTER)
 * and event (INSERT, UPDATE, UPDATE OF, DELETE), WHEN, NEW and OLD (the
 * rowid and an INTEGER PRIMARY KEY too), triggers writing other tables and
 * firing theirs, recursion off, RAISE in each form, the outer statement's
 * conflict clause, changes() and total_changes(), errors at CREATE and at
 * prepare, sqlite_schema, DROP TABLE taking its triggers, and ROLLBACK.
 * Then what the oracle cannot show: triggers survive a reopen of a file
 * database, and prepared statements follow trigger DDL.
 */
#include "sqlite_pair.h"
#include "storage_test.h"

static const char *const setup[] = {
    "CREATE TABLE t(a INT, b TEXT COLLATE NOCASE, c)",
    "INSERT INTO t VALUES (1, 'x', 1.5), (2, 'Y', NULL), (3, 'y', 'z')",
    "CREATE TABLE u(k INTEGER PRIMARY KEY, v REAL, w)",
    "INSERT INTO u VALUES (1, 10, 'one'), (2, 2.5, 'two'), (5, NULL, 'five')",
    "CREATE TABLE log(seq INTEGER PRIMARY KEY, what, x, y)",
    NULL,
};

static int pair_setup(void **state)
{
    return pair_state_open(state, setup);
}

#define LOG "SELECT * FROM log ORDER BY seq"

static void insert_triggers_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER bi BEFORE INSERT ON t BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('bi', new.a, new.rowid); END",
        "CREATE TRIGGER ai AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO "
        "log(what, x, y) VALUES ('ai', NEW.b, NEW.rowid); END",
        "INSERT INTO t VALUES ('7', 'q', 0)",
        "INSERT INTO t(rowid, a) VALUES (20, 8)",
        "INSERT INTO t SELECT a + 10, b, c FROM t WHERE a < 3",
        LOG,
        "SELECT rowid, * FROM t",
        "CREATE TRIGGER ui BEFORE INSERT ON u BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('ui', new.k, typeof(new.v)); END",
        "CREATE TRIGGER ua AFTER INSERT ON u BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('ua', new.k, new.rowid); END",
        "INSERT INTO u(v, w) VALUES (1, 'a')",
        "INSERT INTO u VALUES (10, '3', 'b')",
        "INSERT OR IGNORE INTO u VALUES (10, 4, 'c')",
        LOG,
        "SELECT changes(), total_changes()",
        NULL,
    };

    pair_run_all(state, script);
}

static void update_delete_triggers_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER bu BEFORE UPDATE ON t BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('bu', old.a, new.a); END",
        "CREATE TRIGGER au AFTER UPDATE OF c ON t BEGIN INSERT INTO log(what, "
        "x, y) VALUES ('au', old.c, new.c); END",
        "CREATE TRIGGER bd BEFORE DELETE ON t BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('bd', old.rowid, old.b); END",
        "CREATE TRIGGER ad AFTER DELETE ON t WHEN old.a > 1 BEGIN INSERT INTO "
        "log(what, x) VALUES ('ad', (SELECT count(*) FROM t)); END",
        "UPDATE t SET a = a * 2",
        "UPDATE t SET c = 'c' || a WHERE a > 2",
        "UPDATE t SET b = upper(b), c = NULL WHERE a = 2",
        "DELETE FROM t WHERE a = 6",
        "DELETE FROM t",
        LOG,
        "SELECT changes(), total_changes()",
        "CREATE TRIGGER uu AFTER UPDATE ON u WHEN new.v > old.v BEGIN UPDATE "
        "log SET y = 'grew' WHERE x = new.k; INSERT INTO log(what, x) VALUES "
        "('uu', changes()); END",
        "INSERT INTO log(what, x) VALUES ('k', 1), ('k', 2)",
        "UPDATE u SET v = v + 1",
        "UPDATE u SET k = k + 100 WHERE k = 1",
        LOG,
        "SELECT changes(), last_insert_rowid()",
        NULL,
    };

    pair_run_all(state, script);
}

/* NEW.x and OLD.x carry their column's affinity and collation. */
static void references_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER aff AFTER INSERT ON t BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('aff', new.a = '5', new.b = 'ABC'); INSERT INTO log(what, "
        "x, y) VALUES ('typ', typeof(new.a), new.c > 1); END",
        "INSERT INTO t VALUES (5, 'abc', 2), ('5', 'x', '1')",
        "CREATE TRIGGER real_v BEFORE UPDATE ON u WHEN new.v = 3 OR old.k = "
        "'5' BEGIN INSERT INTO log(what, x, y) VALUES ('rv', new.v, "
        "typeof(old.v)); END",
        "UPDATE u SET v = 3 WHERE k = 1",
        "UPDATE u SET w = w || '!'",
        "CREATE TRIGGER sub AFTER DELETE ON u BEGIN INSERT INTO log(what, x) "
        "SELECT 'sub', count(*) FROM t WHERE t.a > old.k; UPDATE log SET y = "
        "(SELECT max(k) FROM u) WHERE what = 'sub'; END",
        "DELETE FROM u WHERE k < 3",
        LOG,
        "CREATE TRIGGER bad AFTER INSERT ON u BEGIN INSERT INTO nope VALUES "
        "(new.k); END",
        "INSERT INTO u VALUES (30, 1, 1)",
        "DELETE FROM u",
        "SELECT count(*) FROM u",
        NULL,
    };

    pair_run_all(state, script);
}

/* A trigger's SELECT step, and its INSERT's SELECT, may have a WITH
 * (parse.y's select); WITH before INSERT, UPDATE or DELETE is a syntax
 * error there. RETURNING: "cannot use RETURNING in a trigger" on an
 * INSERT (sqlite3AddReturning), a syntax error on UPDATE and DELETE. */
static void with_and_returning_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER w1 BEFORE DELETE ON u BEGIN WITH c AS (SELECT 1) "
        "SELECT * FROM c; END",
        "CREATE TRIGGER w2 BEFORE DELETE ON u BEGIN INSERT INTO log(what, x) "
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
        "WHERE n < 3) SELECT 'w2', n * old.k FROM c; END",
        "CREATE TRIGGER w3 AFTER DELETE ON u BEGIN WITH c(p) AS (SELECT old.w) "
        "VALUES (1); INSERT INTO log(what, x) WITH c(p) AS (SELECT old.w) "
        "SELECT 'w3', p FROM c; END",
        "DELETE FROM u WHERE k < 3",
        LOG,
        "CREATE TRIGGER e1 BEFORE DELETE ON u BEGIN WITH c AS (SELECT 1) "
        "INSERT INTO log(what) SELECT * FROM c; END",
        "CREATE TRIGGER e2 BEFORE DELETE ON u BEGIN WITH c AS (SELECT 1) "
        "DELETE FROM log; END",
        "CREATE TRIGGER e3 BEFORE DELETE ON u BEGIN WITH c AS (SELECT 1) "
        "UPDATE log SET x = 1; END",
        "CREATE TRIGGER e4 BEFORE DELETE ON u BEGIN INSERT INTO log(what) "
        "VALUES (1) RETURNING *; END",
        "CREATE TRIGGER e5 BEFORE DELETE ON u BEGIN INSERT INTO log(what) "
        "SELECT 1 ON CONFLICT DO NOTHING RETURNING what; END",
        "CREATE TRIGGER e6 BEFORE DELETE ON u BEGIN UPDATE log SET x = 1 "
        "RETURNING *; END",
        "CREATE TRIGGER e7 BEFORE DELETE ON u BEGIN DELETE FROM log "
        "RETURNING *; END",
        "CREATE TRIGGER e8 BEFORE DELETE ON u BEGIN WITH c AS (SELECT 1) "
        "SELECT * FROM c RETURNING *; END",
        NULL,
    };

    pair_run_all(state, script);
}

static void cascades_and_recursion_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE a1(x)",
        "CREATE TABLE a2(x)",
        "CREATE TRIGGER r1 AFTER INSERT ON a1 BEGIN INSERT INTO a2 VALUES "
        "(new.x + 1); END",
        "CREATE TRIGGER r2 AFTER INSERT ON a2 WHEN new.x < 10 BEGIN INSERT "
        "INTO a1 VALUES (new.x * 2); END",
        "CREATE TRIGGER self AFTER INSERT ON a1 BEGIN INSERT INTO a1 VALUES "
        "(new.x + 100); END",
        "INSERT INTO a1 VALUES (1)",
        "SELECT rowid, x FROM a1",
        "SELECT rowid, x FROM a2",
        "CREATE TRIGGER gone BEFORE DELETE ON a2 BEGIN DELETE FROM a2 WHERE "
        "x = old.x + 1; END",
        "DELETE FROM a2",
        "SELECT changes()",
        "SELECT * FROM a2",
        "CREATE TRIGGER mv BEFORE UPDATE ON a1 BEGIN UPDATE a1 SET x = -x "
        "WHERE rowid = old.rowid + 1; END",
        "UPDATE a1 SET x = x + 1000",
        "SELECT rowid, x FROM a1",
        NULL,
    };

    pair_run_all(state, script);
}

static void raise_matches_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER chk BEFORE INSERT ON t BEGIN SELECT RAISE(ABORT, "
        "'a must be positive') WHERE new.a <= 0; END",
        "CREATE TRIGGER ign BEFORE INSERT ON t WHEN new.a = 99 BEGIN SELECT "
        "RAISE(IGNORE); END",
        "CREATE TRIGGER fl AFTER INSERT ON t WHEN new.a = 50 BEGIN SELECT "
        "RAISE(FAIL, 'fifty'); END",
        "INSERT INTO t(a) VALUES (0)",
        "INSERT INTO t(a) VALUES (5), (99), (6)",
        "SELECT changes()",
        "INSERT INTO t(a) VALUES (7), (-1)",
        "BEGIN",
        "INSERT INTO t(a) VALUES (8), (50), (9)",
        "SELECT a FROM t ORDER BY rowid",
        "COMMIT",
        "CREATE TRIGGER rb BEFORE DELETE ON t WHEN old.a = 8 BEGIN SELECT "
        "RAISE(ROLLBACK, 'no'); END",
        "BEGIN",
        "DELETE FROM t WHERE a = 1",
        "DELETE FROM t WHERE a > 5",
        "COMMIT",
        "SELECT a FROM t ORDER BY rowid",
        "CREATE TRIGGER ig2 BEFORE UPDATE ON t WHEN old.a = 2 BEGIN SELECT "
        "RAISE(IGNORE); END",
        "UPDATE t SET c = 'u'",
        "SELECT changes(), a, c FROM t ORDER BY rowid",
        "SELECT RAISE(IGNORE)",
        "SELECT RAISE(ABORT, 'x')",
        NULL,
    };

    pair_run_all(state, script);
}

static void conflicts_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE k(id INTEGER PRIMARY KEY, v UNIQUE)",
        "INSERT INTO k VALUES (1, 'one')",
        "CREATE TRIGGER kk AFTER INSERT ON u BEGIN INSERT INTO k VALUES "
        "(new.k, new.w); END",
        "INSERT INTO u VALUES (1, 0, 'dup')",
        "INSERT INTO u VALUES (7, 0, 'one')",
        "SELECT * FROM u",
        "SELECT * FROM k",
        "INSERT OR REPLACE INTO u VALUES (8, 0, 'one')",
        "SELECT * FROM k",
        "BEGIN",
        "INSERT INTO u VALUES (9, 0, 'nine')",
        "INSERT OR FAIL INTO u VALUES (11, 0, 'eleven'), (12, 0, 'nine')",
        "COMMIT",
        "SELECT * FROM u",
        "SELECT * FROM k",
        NULL,
    };

    pair_run_all(state, script);
}

static void ddl_errors_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TRIGGER r AFTER INSERT ON nosuch BEGIN SELECT 1; END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT ?; END",
        "CREATE TRIGGER sqlite_r AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TRIGGER r AFTER INSERT ON sqlite_master BEGIN SELECT 1; END",
        "CREATE TRIGGER r INSTEAD OF INSERT ON t BEGIN SELECT 1; END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1 END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO log DEFAULT "
        "VALUES; END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO nosuch VALUES "
        "(1); END",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TRIGGER IF NOT EXISTS r AFTER INSERT ON t BEGIN SELECT 1; END",
        "INSERT INTO t VALUES (1, 2, 3)",
        "DELETE FROM t WHERE 0",
        "DROP TRIGGER r",
        "DROP TRIGGER r",
        "DROP TRIGGER IF EXISTS r",
        "CREATE TRIGGER r2 AFTER INSERT ON t BEGIN SELECT old.a; END",
        "INSERT INTO t VALUES (1, 2, 3)",
        "DROP TRIGGER r2",
        "CREATE TRIGGER r3 AFTER DELETE ON t BEGIN SELECT new.a; END",
        "DELETE FROM t",
        "DROP TRIGGER main.r3",
        "CREATE TRIGGER main.t AFTER UPDATE OF a, zz ON main.t BEGIN SELECT "
        "1; END",
        "SELECT * FROM sqlite_schema WHERE type = 'trigger'",
        "CREATE TRIGGER x1 AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TRIGGER x2 UPDATE ON t BEGIN SELECT 1; END",
        "SELECT type, name, tbl_name, rootpage FROM sqlite_schema",
        "DROP TABLE t",
        "SELECT type, name, tbl_name FROM sqlite_schema",
        "DROP TRIGGER x1",
        NULL,
    };

    pair_run_all(state, script);
}

static void transactions_match_sqlite(void **state)
{
    static const char *const script[] = {
        "BEGIN",
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO log(what) "
        "VALUES (new.a); END",
        "INSERT INTO t(a) VALUES (42)",
        "ROLLBACK",
        "SELECT name FROM sqlite_schema WHERE type = 'trigger'",
        "INSERT INTO t(a) VALUES (43)",
        LOG,
        "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO log(what) "
        "VALUES (new.a); END",
        "BEGIN",
        "DROP TRIGGER r",
        "ROLLBACK",
        "BEGIN",
        "DROP TABLE t",
        "ROLLBACK",
        "INSERT INTO t(a) VALUES (44)",
        "SAVEPOINT s",
        "INSERT INTO t(a) VALUES (45)",
        "ROLLBACK TO s",
        "RELEASE s",
        LOG,
        NULL,
    };

    pair_run_all(state, script);
}

/* INSTEAD OF triggers make a view writable: each row of the INSERT, and
 * each view row an UPDATE or DELETE matches, goes to them. */
static void instead_of_triggers_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW v AS SELECT a, b, a * 10 AS c FROM t",
        "CREATE TRIGGER bad BEFORE INSERT ON v BEGIN SELECT 1; END",
        "CREATE TRIGGER bad AFTER DELETE ON main.v BEGIN SELECT 1; END",
        "CREATE TRIGGER bad INSTEAD OF UPDATE ON t BEGIN SELECT 1; END",
        "INSERT INTO v VALUES (1, 2, 3)",
        "UPDATE v SET a = 1 WHERE nosuch",
        "DELETE FROM v",
        "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t "
        "VALUES (new.a, new.b, new.c); INSERT INTO log(what, x, y) VALUES "
        "('vi', typeof(new.a) || new.a, new.rowid); END",
        "INSERT INTO v VALUES ('5', 'q', 99)",
        "SELECT changes(), total_changes()",
        "INSERT INTO v(c, a) VALUES (1, 6), (2, 7)",
        "INSERT INTO v(rowid, a) VALUES ('12', 8)",
        "INSERT INTO v(rowid, a) VALUES ('x', 9)",
        "INSERT INTO v DEFAULT VALUES",
        "INSERT INTO v SELECT a + 100, b, c FROM v WHERE a < 3",
        "INSERT INTO v VALUES (1, 2)",
        "INSERT INTO v(zz) VALUES (1)",
        "INSERT INTO v VALUES (1, 2, 3) ON CONFLICT DO NOTHING",
        "INSERT INTO v VALUES (4, 'r', 0) RETURNING *, rowid",
        "INSERT OR REPLACE INTO v VALUES (4, 's', 0)",
        LOG,
        "SELECT rowid, * FROM t",
        "UPDATE v SET a = 1",
        "CREATE TRIGGER vu INSTEAD OF UPDATE OF a ON v BEGIN INSERT INTO "
        "log(what, x, y) VALUES ('vu', old.a || '>' || typeof(new.a) || "
        "new.a, old.rowid || '>' || new.rowid || ' ' || new.c); END",
        "UPDATE v SET b = 'z'",
        "UPDATE v SET a = '7' || a WHERE b = 'Y' OR a > 100",
        "SELECT changes()",
        "UPDATE v SET a = a, rowid = 40 WHERE a = 1 RETURNING *, rowid",
        "UPDATE v SET rowid = NULL, a = 0 WHERE a = 1",
        "UPDATE v SET zz = 1",
        "UPDATE v SET a = 1 WHERE zz",
        "UPDATE v AS w SET a = w.a + 1 WHERE a = 2",
        "UPDATE v AS w SET a = 1 WHERE w.a = 2",
        "CREATE TRIGGER vd INSTEAD OF DELETE ON v WHEN old.a <> 3 BEGIN "
        "DELETE FROM t WHERE rowid = (SELECT min(rowid) FROM t WHERE a = "
        "old.a); INSERT INTO log(what, x, y) VALUES ('vd', old.a, "
        "old.rowid || ' ' || old.c); END",
        "DELETE FROM v WHERE b = 'y' RETURNING a, rowid",
        "DELETE FROM v INDEXED BY nope",
        "SELECT changes(), total_changes()",
        LOG,
        "SELECT rowid, * FROM t",
        "SELECT type, name, tbl_name, rootpage FROM sqlite_schema",
        "DROP VIEW v",
        "SELECT type, name, tbl_name FROM sqlite_schema",
        "INSERT INTO v VALUES (1, 2, 3)",
        NULL,
    };

    pair_run_all(state, script);
}

/* RAISE in an INSTEAD OF trigger, the outer conflict clause, a view on a
 * missing table, and a trigger reading a column NEW does not carry. */
static void instead_of_errors_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE VIEW w AS SELECT k, v, w AS label FROM u",
        "CREATE TABLE k(id INTEGER PRIMARY KEY, v UNIQUE)",
        "CREATE TRIGGER wi INSTEAD OF INSERT ON w BEGIN SELECT RAISE(IGNORE) "
        "WHERE new.k = 0; INSERT INTO k VALUES (new.k, new.label); SELECT "
        "RAISE(ABORT, 'too big') WHERE new.k > 100; END",
        "INSERT INTO w VALUES (1, 0, 'a'), (0, 0, 'skip'), (2, 0, 'b') "
        "RETURNING k",
        "INSERT INTO w VALUES (3, 0, 'c'), (200, 0, 'd')",
        "INSERT INTO w VALUES (4, 0, 'a')",
        "INSERT OR REPLACE INTO w VALUES (4, 0, 'a')",
        "INSERT OR IGNORE INTO w VALUES (5, 0, 'b')",
        "SELECT * FROM k",
        "CREATE TRIGGER wu INSTEAD OF UPDATE ON w BEGIN UPDATE u SET v = "
        "new.v WHERE k = old.k; END",
        "UPDATE w SET v = '3.5' WHERE k < 5 RETURNING *",
        "SELECT * FROM u",
        "UPDATE w SET v = v + 1 RETURNING k, v, label",
        "CREATE VIEW broken AS SELECT * FROM nosuch",
        "CREATE TRIGGER bd INSTEAD OF DELETE ON broken BEGIN SELECT 1; END",
        "DELETE FROM broken",
        "UPDATE broken SET a = 1",
        "BEGIN",
        "INSERT INTO w VALUES (6, 0, 'f')",
        "ROLLBACK",
        "SELECT * FROM k",
        "DROP TRIGGER wi",
        "INSERT INTO w VALUES (7, 0, 'g')",
        "CREATE TABLE q(a)",
        "CREATE VIEW qv AS SELECT a FROM q",
        "CREATE TRIGGER qi INSTEAD OF INSERT ON qv BEGIN INSERT INTO q "
        "VALUES (new.a); INSERT INTO qv VALUES (new.a + 1); END",
        "INSERT INTO qv VALUES (1), (5) RETURNING a",
        "CREATE TRIGGER qd INSTEAD OF DELETE ON qv BEGIN DELETE FROM qv "
        "WHERE a = old.a + 4; DELETE FROM q WHERE a = old.a; END",
        "DELETE FROM qv WHERE a < 5",
        "SELECT * FROM q",
        NULL,
    };

    pair_run_all(state, script);
}

/* TEMP triggers: a name space of their own, searched first by DROP
 * TRIGGER; on a main table they fire before its own triggers, oldest
 * first; a trigger on a TEMP view is TEMP; sqlite_schema lists none. */
static void temp_triggers_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TEMP TRIGGER x2 AFTER INSERT ON t BEGIN INSERT INTO "
        "log(what) VALUES ('x2'); END",
        "CREATE TRIGGER m1 AFTER INSERT ON t BEGIN INSERT INTO log(what) "
        "VALUES ('m1'); END",
        "CREATE TRIGGER m2 AFTER INSERT ON t BEGIN INSERT INTO log(what) "
        "VALUES ('m2'); END",
        "CREATE TEMPORARY TRIGGER x3 AFTER INSERT ON main.t BEGIN INSERT "
        "INTO log(what, x) VALUES ('x3', new.a); END",
        "CREATE TEMP TRIGGER x3 AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER IF NOT EXISTS x3 AFTER INSERT ON t BEGIN "
        "SELECT 1; END",
        "CREATE TRIGGER x3 AFTER INSERT ON t BEGIN INSERT INTO log(what) "
        "VALUES ('x3 main'); END",
        "CREATE TRIGGER temp.x4 BEFORE INSERT ON t BEGIN INSERT INTO "
        "log(what) VALUES ('x4'); END",
        "CREATE TEMP TRIGGER main.x5 AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER temp.x5 AFTER INSERT ON t BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER x5 AFTER INSERT ON nosuch BEGIN SELECT 1; END",
        "CREATE TEMP TRIGGER x5 AFTER INSERT ON main.nosuch BEGIN SELECT 1; "
        "END",
        "CREATE TEMP TRIGGER x6 AFTER DELETE ON t BEGIN INSERT INTO nosuch "
        "VALUES (1); END",
        "DELETE FROM t",
        "DROP TRIGGER x6",
        "INSERT INTO t(a) VALUES (1)",
        LOG,
        "SELECT type, name, tbl_name FROM sqlite_schema",
        "DROP TRIGGER x3",
        "DROP TRIGGER main.x2",
        "DROP TRIGGER temp.m1",
        "DROP TRIGGER temp.x2",
        "DELETE FROM log",
        "INSERT INTO t(a) VALUES (2)",
        LOG,
        "CREATE TEMP VIEW tv AS SELECT a FROM t",
        "CREATE TRIGGER tvi INSTEAD OF INSERT ON tv BEGIN INSERT INTO "
        "log(what, x) VALUES ('tvi', new.a); END",
        "CREATE TRIGGER main.tvi2 INSTEAD OF INSERT ON tv BEGIN SELECT 1; END",
        "CREATE TRIGGER tvi3 INSTEAD OF INSERT ON temp.tv BEGIN INSERT INTO "
        "log(what, x) VALUES ('tvi3', new.a); END",
        "INSERT INTO tv VALUES (9)",
        "SELECT * FROM log WHERE what LIKE 'tvi%'",
        "DROP VIEW tv",
        "DROP TRIGGER tvi",
        "BEGIN",
        "CREATE TEMP TRIGGER x7 AFTER INSERT ON t BEGIN INSERT INTO "
        "log(what) VALUES ('x7'); END",
        "ROLLBACK",
        "DROP TABLE t",
        "DROP TRIGGER x4",
        "SELECT type, name, tbl_name FROM sqlite_schema",
        NULL,
    };

    pair_run_all(state, script);
}

/* An upsert's DO UPDATE fires the UPDATE triggers its SET list fires,
 * between the INSERT's BEFORE triggers and no AFTER INSERT. */
static void upsert_triggers_match_sqlite(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE p(id INTEGER PRIMARY KEY, a UNIQUE, b)",
        "INSERT INTO p VALUES (1, 'p', 0), (2, 'q', 0)",
        "CREATE TRIGGER bi BEFORE INSERT ON p BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('bi', new.id, new.a || new.b); END",
        "CREATE TRIGGER ai AFTER INSERT ON p BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('ai', new.id, new.a || new.b); END",
        "CREATE TRIGGER bu BEFORE UPDATE ON p BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('bu', old.id || '>' || new.id, old.b || '>' || new.b); "
        "END",
        "CREATE TRIGGER au AFTER UPDATE ON p BEGIN INSERT INTO log(what, x, "
        "y) VALUES ('au', old.a || '>' || new.a, old.b || '>' || new.b); END",
        "CREATE TRIGGER auo AFTER UPDATE OF a ON p BEGIN INSERT INTO "
        "log(what, x) VALUES ('auo', new.a); END",
        "INSERT INTO p VALUES (3, 'p', 5), (4, 'r', 6) ON CONFLICT(a) DO "
        "UPDATE SET b = b + excluded.b",
        "SELECT changes(), total_changes(), last_insert_rowid()",
        "INSERT INTO p VALUES (5, 'q', 7) ON CONFLICT DO UPDATE SET a = 'qq' "
        "WHERE excluded.b > 100",
        "INSERT INTO p VALUES (6, 'q', 7) ON CONFLICT(id) DO NOTHING ON "
        "CONFLICT DO UPDATE SET a = 'qq' RETURNING *",
        "INSERT INTO p VALUES (1, 'x', 1) ON CONFLICT(a) DO NOTHING ON "
        "CONFLICT(id) DO UPDATE SET b = -1",
        "CREATE TRIGGER stop BEFORE UPDATE ON p WHEN new.b = 99 BEGIN SELECT "
        "RAISE(IGNORE); END",
        "INSERT INTO p VALUES (7, 'r', 99) ON CONFLICT DO UPDATE SET b = "
        "excluded.b",
        "CREATE TRIGGER boom AFTER UPDATE ON p WHEN new.b = 13 BEGIN SELECT "
        "RAISE(ABORT, 'unlucky'); END",
        "INSERT INTO p VALUES (8, 'z', 1), (9, 'r', 13) ON CONFLICT DO "
        "UPDATE SET b = excluded.b",
        LOG,
        "SELECT * FROM p",
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
            const char *value = (const char *)engine_column_text(stmt, c);

            snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
                     text[0] != '\0' ? "|" : "", value ? value : "NULL");
        }
    }
    engine_finalize(stmt);
    assert_string_equal(text, expected);
}

/* Triggers are in the WAL and, after a checkpoint (VACUUM), in the main
 * file's catalog; a reopen finds them either way, and they fire. */
static void triggers_survive_reopen(void **state)
{
    static const char *const schema =
        "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema";
    static const char *const expected =
        "table|t|t|2|CREATE TABLE t(a, b)|table|n|n|3|CREATE TABLE n(x)|"
        "trigger|r|t|0|CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO "
        "n VALUES (new.a * 2); END";
    struct scratch_dir dir;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(a, b); CREATE TABLE n(x);"
                     "CREATE TRIGGER IF NOT EXISTS r AFTER INSERT ON t BEGIN "
                     "INSERT INTO n VALUES (new.a * 2); END;"
                     "CREATE TRIGGER gone AFTER DELETE ON t BEGIN SELECT 1; "
                     "END; DROP TRIGGER gone;"
                     "BEGIN; CREATE TRIGGER undone AFTER DELETE ON t BEGIN "
                     "SELECT 1; END; ROLLBACK;"
                     "INSERT INTO t VALUES (1, 'p')");
    engine_close(db);
    db = storage_open(dir.db);
    expect_text(db, schema, expected);
    storage_exec(db, "INSERT INTO t VALUES (2, 'q')");
    expect_text(db, "SELECT x FROM n ORDER BY x", "2|4");
    storage_exec(db, "VACUUM");
    engine_close(db);
    db = storage_open(dir.db);
    expect_text(db, schema, expected);
    storage_exec(db, "INSERT INTO t VALUES (3, 'r')");
    expect_text(db, "SELECT x FROM n ORDER BY x", "2|4|6");
    assert_integrity_ok(db);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* A TEMP trigger is the handle's alone: neither the WAL nor (after a
 * checkpoint) the main file has it, while a view's INSTEAD OF trigger is
 * kept and fires after a reopen. */
static void temp_triggers_are_not_persisted(void **state)
{
    static const char *const schema =
        "SELECT type, name FROM sqlite_schema WHERE type = 'trigger'";
    struct scratch_dir dir;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(a); CREATE TABLE n(x);"
                     "CREATE VIEW v AS SELECT a FROM t;"
                     "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT "
                     "INTO t VALUES (new.a * 10); END;"
                     "CREATE TEMP TRIGGER tmp AFTER INSERT ON t BEGIN INSERT "
                     "INTO n VALUES (new.a); END;"
                     "INSERT INTO v VALUES (1)");
    expect_text(db, "SELECT x FROM n", "10");
    expect_text(db, schema, "trigger|vi");
    engine_close(db);
    db = storage_open(dir.db);
    expect_text(db, schema, "trigger|vi");
    storage_exec(db, "INSERT INTO v VALUES (2);"
                     "CREATE TEMP TRIGGER tmp2 AFTER INSERT ON t BEGIN INSERT "
                     "INTO n VALUES (-new.a); END;"
                     "VACUUM");
    expect_text(db, "SELECT a FROM t ORDER BY a", "10|20");
    expect_text(db, "SELECT x FROM n", "10");
    engine_close(db);
    db = storage_open(dir.db);
    storage_exec(db, "INSERT INTO v VALUES (3)");
    expect_text(db, "SELECT x FROM n", "10");
    expect_text(db, "SELECT a FROM t ORDER BY a", "10|20|30");
    assert_integrity_ok(db);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* A statement prepared before a trigger is created or dropped plans again
 * and fires exactly the triggers there are then. */
static void prepared_statements_follow_trigger_ddl(void **state)
{
    struct engine_db *db = storage_open(NULL);
    struct engine_stmt *stmt = NULL;

    (void)state;
    storage_exec(db, "CREATE TABLE t(a); CREATE TABLE n(x)");
    assert_int_equal(
        engine_prepare(db, "INSERT INTO t VALUES (1)", -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_reset(stmt);
    storage_exec(db, "CREATE TRIGGER r AFTER INSERT ON t BEGIN INSERT INTO n "
                     "VALUES (new.a); END");
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_reset(stmt);
    storage_exec(db, "DROP TRIGGER r");
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
    expect_text(db, "SELECT count(*) FROM t", "3");
    expect_text(db, "SELECT count(*) FROM n", "1");
    engine_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(insert_triggers_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(update_delete_triggers_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(references_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(cascades_and_recursion_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(raise_matches_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(conflicts_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(ddl_errors_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(transactions_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(instead_of_triggers_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(instead_of_errors_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(temp_triggers_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(upsert_triggers_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(with_and_returning_match_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test(triggers_survive_reopen),
        cmocka_unit_test(temp_triggers_are_not_persisted),
        cmocka_unit_test(prepared_statements_follow_trigger_ddl),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
