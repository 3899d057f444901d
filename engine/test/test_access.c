/* SPDX-License-Identifier: MIT
 *
 * Goal: a SELECT, UPDATE or DELETE whose WHERE the planner answers by a
 * lookup (rowid equality, every column of a UNIQUE key or of a CREATE
 * INDEX, a rowid range; access.h) gives SQLite's results: the same rows in
 * the same order with the same types, the same errors, and the other terms
 * of the WHERE run on the rows SQLite visits, no others. Where SQLite may
 * not use an index (another collation, an affinity the index does not
 * have, "+col"), neither does sinew, which shows when another term fails
 * on a row only a scan reads. Indexes stay right through INSERT, UPDATE,
 * DELETE, ROLLBACK, CREATE and DROP INDEX, and out of memory.
 * Method: every statement runs in libsqlite3 and in the engine, with the
 * same bound parameters; rows are compared in order, value by value and
 * type by type, and a failure must be a failure in both with the same
 * message. Tables after DML are compared whole.
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

/* A parameter value, bound alike in both engines. */
struct arg {
    int type; /* SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB or _NULL */
    int64_t i;
    double r;
    const char *text; /* TEXT and BLOB */
};

#define INT(v)                                                                 \
    {                                                                          \
        .type = SQLITE_INTEGER, .i = (v)                                       \
    }
#define REAL(v)                                                                \
    {                                                                          \
        .type = SQLITE_FLOAT, .r = (v)                                         \
    }
#define TEXT(v)                                                                \
    {                                                                          \
        .type = SQLITE_TEXT, .text = (v)                                       \
    }
#define BLOB(v)                                                                \
    {                                                                          \
        .type = SQLITE_BLOB, .text = (v)                                       \
    }
#define NUL                                                                    \
    {                                                                          \
        .type = SQLITE_NULL                                                    \
    }

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

static void bind_args(sqlite3_stmt *o, struct engine_stmt *e,
                      const struct arg *args, int count)
{
    for (int i = 0; i < count; i++) {
        const struct arg *a = &args[i];
        int n = a->text != NULL ? (int)strlen(a->text) : 0;

        switch (a->type) {
        case SQLITE_INTEGER:
            sqlite3_bind_int64(o, i + 1, a->i);
            engine_bind_int64(e, i + 1, a->i);
            break;
        case SQLITE_FLOAT:
            sqlite3_bind_double(o, i + 1, a->r);
            engine_bind_double(e, i + 1, a->r);
            break;
        case SQLITE_TEXT:
            sqlite3_bind_text(o, i + 1, a->text, n, SQLITE_TRANSIENT);
            engine_bind_text(e, i + 1, a->text, n);
            break;
        case SQLITE_BLOB:
            sqlite3_bind_blob(o, i + 1, a->text, n, SQLITE_TRANSIENT);
            engine_bind_blob(e, i + 1, a->text, n);
            break;
        default:
            sqlite3_bind_null(o, i + 1);
            engine_bind_null(e, i + 1);
            break;
        }
    }
}

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

/* Steps both to the end comparing rows; both must end alike: done, or the
 * same error message. */
static void step_both(struct pair *p, sqlite3_stmt *o, struct engine_stmt *e,
                      const char *sql)
{
    int row = 0;
    int orc, erc;

    do {
        orc = sqlite3_step(o);
        erc = engine_step(e);
        if (orc == SQLITE_ROW && erc == ENGINE_ROW) {
            compare_row(o, e, sql, row++);
        }
    } while (orc == SQLITE_ROW && erc == ENGINE_ROW);
    if ((orc == SQLITE_DONE) != (erc == ENGINE_DONE) ||
        (orc != SQLITE_DONE &&
         strcmp(sqlite3_errmsg(p->oracle), engine_errmsg(p->db)) != 0)) {
        fail_msg("%s\nafter %d rows: sqlite %d (%s), sinew %d (%s)", sql, row,
                 orc, sqlite3_errmsg(p->oracle), erc, engine_errmsg(p->db));
    }
    if (orc == SQLITE_DONE &&
        (strncmp(sql, "UPDATE", 6) == 0 || strncmp(sql, "DELETE", 6) == 0) &&
        sqlite3_changes(p->oracle) != (int)engine_changes(p->db)) {
        fail_msg("%s\nchanges: sqlite %d, sinew %d", sql,
                 sqlite3_changes(p->oracle), (int)engine_changes(p->db));
    }
}

/* Runs sql with args in both engines: the same rows, or the same error. */
static void same_args(struct pair *p, const char *sql, const struct arg *args,
                      int count)
{
    sqlite3_stmt *o = NULL;
    struct engine_stmt *e = NULL;

    assert_int_equal(sqlite3_prepare_v2(p->oracle, sql, -1, &o, NULL),
                     SQLITE_OK);
    if (engine_prepare(p->db, sql, -1, &e, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(p->db));
    }
    bind_args(o, e, args, count);
    step_both(p, o, e, sql);
    sqlite3_finalize(o);
    engine_finalize(e);
}

static void same(struct pair *p, const char *sql)
{
    same_args(p, sql, NULL, 0);
}

/* The whole table, in rowid order. */
static void same_table(struct pair *p, const char *table)
{
    char sql[128];

    snprintf(sql, sizeof(sql), "SELECT rowid, * FROM %s ORDER BY rowid", table);
    same(p, sql);
}

/* n rows of (k, g, s): k = i, g = i % groups, s = text of i, rowids
 * given in a scrambled order so that the table is not in rowid order. */
static void fill(struct pair *p, const char *table, int n, int groups,
                 bool scrambled)
{
    same(p, "BEGIN");
    for (int i = 1; i <= n; i++) {
        char sql[160];
        int rowid = scrambled ? (int)(((int64_t)i * 7919) % n) + 1 : i;

        snprintf(sql, sizeof(sql),
                 "INSERT INTO %s(rowid, k, g, s) VALUES (%d, %d, %d, 's%d')",
                 table, rowid, rowid, rowid % groups, rowid % 97);
        same(p, sql);
    }
    same(p, "COMMIT");
}

static void access_rowid_equality_matches_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM t WHERE rowid = 5",
        "SELECT * FROM t WHERE oid = '5'",
        "SELECT * FROM t WHERE _rowid_ = 5.0",
        "SELECT * FROM t WHERE rowid = 5.5",
        "SELECT * FROM t WHERE rowid = 'abc'",
        "SELECT * FROM t WHERE rowid = ' 7 '",
        "SELECT * FROM t WHERE rowid = '7.0'",
        "SELECT * FROM t WHERE rowid = '1e1'",
        "SELECT * FROM t WHERE rowid = x'35'",
        "SELECT * FROM t WHERE rowid = NULL",
        "SELECT * FROM t WHERE rowid IS 6",
        "SELECT * FROM t WHERE rowid IS NULL",
        "SELECT * FROM t WHERE 8 = rowid",
        "SELECT * FROM t WHERE rowid = 8 AND rowid = 9",
        "SELECT * FROM t WHERE rowid = 8 AND k = 8",
        "SELECT * FROM t WHERE rowid = 8 AND k = 9",
        "SELECT * FROM t WHERE rowid = -9223372036854775808",
        "SELECT * FROM t WHERE rowid = -9223372036854775808.0",
        "SELECT * FROM t WHERE rowid = 9223372036854775807",
        "SELECT * FROM t WHERE rowid = 9223372036854775808.0",
        "SELECT * FROM t WHERE rowid = (SELECT max(rowid) FROM t)",
        "SELECT * FROM t WHERE rowid = (SELECT 3 WHERE 0)",
        "SELECT * FROM t WHERE rowid = 2 + 3 ORDER BY rowid DESC",
        "SELECT count(*), sum(k) FROM t WHERE rowid = 10",
        "SELECT * FROM t WHERE rowid COLLATE NOCASE = '11'",
        "SELECT * FROM t WHERE rowid = k",
        "SELECT * FROM t WHERE +rowid = 12",
        "SELECT * FROM i WHERE id = 3",
        "SELECT * FROM i WHERE id = '3'",
        "SELECT * FROM i WHERE rowid = 4 AND id = 4",
        "SELECT * FROM i WHERE id = 4.25",
        "SELECT rowid, k FROM t WHERE rowid = 5 LIMIT 1 OFFSET 0",
        "SELECT EXISTS (SELECT 1 FROM t WHERE rowid = 5)",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k, g, s TEXT)");
    fill(&p, "t", 50, 7, true);
    same(&p, "INSERT INTO t(rowid, k) VALUES (-9223372036854775808, 'min'), "
             "(9223372036854775807, 'max')");
    same(&p, "CREATE TABLE i(id INTEGER PRIMARY KEY, v)");
    same(&p, "INSERT INTO i VALUES (1, 'a'), (3, 'c'), (4, 'd')");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

static void access_unique_key_equality_matches_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM u WHERE a = 'x'",
        "SELECT * FROM u WHERE a = 'X'",
        "SELECT * FROM u WHERE a = 5",
        "SELECT * FROM u WHERE a = '5'",
        "SELECT * FROM u WHERE a = NULL",
        "SELECT * FROM u WHERE a IS NULL",
        "SELECT * FROM u WHERE n = '2'",
        "SELECT * FROM u WHERE n = 2.0",
        "SELECT * FROM u WHERE n = 2.5",
        "SELECT * FROM u WHERE n = ' 3 '",
        "SELECT * FROM u WHERE r = 1",
        "SELECT * FROM u WHERE r = '1.5'",
        "SELECT * FROM u WHERE c = 'abc'",
        "SELECT * FROM u WHERE c = 'ABC'",
        "SELECT * FROM u WHERE c = 'abc' COLLATE BINARY",
        "SELECT * FROM u WHERE c COLLATE BINARY = 'ABC'",
        "SELECT * FROM u WHERE p = 1 AND q = 'one'",
        "SELECT * FROM u WHERE q = 'one' AND p = '1'",
        "SELECT * FROM u WHERE p = 1",
        "SELECT * FROM u WHERE p = 1 AND q = 'ONE'",
        "SELECT * FROM u WHERE b = x'0102'",
        "SELECT * FROM u WHERE b = 7",
        "SELECT * FROM u WHERE b = '7'",
        "SELECT * FROM u WHERE a = 'x' AND n = 3",
        "SELECT * FROM u WHERE rowid = 2 AND a = 'x'",
        "SELECT * FROM u WHERE a = (SELECT a FROM u WHERE n = 3)",
        "SELECT * FROM u WHERE a = 'x' ORDER BY rowid DESC",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE u(a TEXT UNIQUE, n INT UNIQUE, r REAL UNIQUE, "
             "c TEXT COLLATE NOCASE UNIQUE, p, q, b UNIQUE, "
             "PRIMARY KEY (p, q))");
    same(&p, "INSERT INTO u VALUES ('x', 1, 1.0, 'abc', 1, 'one', x'0102'), "
             "('5', 2, 1.5, 'def', 1, 'two', 7), "
             "(NULL, 3, NULL, NULL, 2, 'one', '7'), "
             "(NULL, NULL, 2.0, 'ghi', 2, 'two', NULL)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

static void access_index_equality_matches_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM t WHERE g = 3",
        "SELECT * FROM t WHERE g = '3'",
        "SELECT * FROM t WHERE g = 3.0",
        "SELECT * FROM t WHERE g = 3 ORDER BY rowid DESC",
        "SELECT rowid, * FROM t WHERE g = 0 AND s = 's5'",
        "SELECT rowid, * FROM t WHERE s = 's5' AND g = 4",
        "SELECT rowid, * FROM t WHERE s = 's5' AND g = 4 AND k > 100",
        "SELECT count(*), min(k), max(k), sum(k) FROM t WHERE g = 1",
        "SELECT k FROM t WHERE g = 2 LIMIT 5 OFFSET 1000",
        "SELECT * FROM t WHERE g = 99",
        "SELECT * FROM t WHERE g = NULL",
        "SELECT * FROM t WHERE s = 'S5'",
        "SELECT * FROM t WHERE s = 'S5' COLLATE NOCASE AND g = 1",
        "SELECT * FROM t WHERE s COLLATE NOCASE = 'S7'",
        "SELECT * FROM t WHERE g IN (SELECT g FROM t WHERE rowid = 3) AND "
        "g = 3",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT, g INT, s TEXT)");
    fill(&p, "t", 3000, 5, true);
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "CREATE INDEX tsg ON t(s, g)");
    same(&p, "CREATE INDEX ts ON t(s COLLATE NOCASE)");
    same(&p, "INSERT INTO t(rowid, k, g, s) VALUES (-5, 1, 3, 's5'), "
             "(9000, 2, 3, 'S5'), (8000, NULL, NULL, NULL)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

/* Terms an index cannot serve in SQLite: "abs(n) > 0" fails on row 1,
 * which only a scan reads. */
static void access_affinity_and_collation_decide_use(void **state)
{
    static const char *queries[] = {
        /* usable: only the looked-up rows run abs(n) */
        "SELECT id FROM e WHERE abs(n) > 0 AND u = 'b'",
        "SELECT id FROM e WHERE abs(n) > 0 AND u = 'B'",
        "SELECT id FROM e WHERE abs(n) > 0 AND g = 2",
        "SELECT id FROM e WHERE abs(n) > 0 AND g = '2'",
        "SELECT id FROM e WHERE abs(n) > 0 AND id = 2",
        "SELECT id FROM e WHERE abs(n) > 0 AND rowid > 1",
        "SELECT id FROM e WHERE abs(n) > 0 AND rowid BETWEEN 2 AND 3",
        "SELECT id FROM e WHERE abs(n) > 0 AND t = 5",
        "SELECT id FROM e WHERE abs(n) > 0 AND t = CAST(5 AS TEXT)",
        "SELECT id FROM e WHERE abs(n) > 0 AND g = CAST('2' AS TEXT)",
        "SELECT id FROM e WHERE abs(n) > 0 AND x = 'q'",
        "SELECT id FROM e WHERE abs(n) > 0 AND g IS 2",
        "SELECT id FROM e WHERE abs(n) > 0 AND k = 'b'",
        /* not usable: the scan reaches row 1 */
        "SELECT id FROM e WHERE abs(n) > 0 AND u = 'b' COLLATE BINARY",
        "SELECT id FROM e WHERE abs(n) > 0 AND +u = 'b'",
        "SELECT id FROM e WHERE abs(n) > 0 AND t = CAST(5 AS INTEGER)",
        "SELECT id FROM e WHERE abs(n) > 0 AND x = CAST(5 AS INTEGER)",
        "SELECT id FROM e WHERE abs(n) > 0 AND g + 0 = 2",
        "SELECT id FROM e WHERE abs(n) > 0 AND g = n",
        "SELECT id FROM e WHERE abs(n) > 0 AND g = random()",
        "SELECT id FROM e WHERE abs(n) > 0 AND k = 'b' COLLATE RTRIM",
        "SELECT id FROM e WHERE abs(n) > 0 AND k = 'b' COLLATE BINARY",
        "SELECT id FROM e WHERE abs(n) > 0 AND g <> 2",
        "SELECT id FROM e WHERE abs(n) > 0 AND rowid <> 1",
        "SELECT id FROM e WHERE abs(n) > 0 AND rowid NOT BETWEEN 0 AND 1",
        "SELECT id FROM e WHERE abs(n) > 0 AND v = 'p'",
        /* results that differ if the index were used wrongly */
        "SELECT id FROM e WHERE t = CAST(5 AS INTEGER) ORDER BY id",
        "SELECT id FROM e WHERE u = 'B' COLLATE BINARY ORDER BY id",
        "SELECT id FROM e WHERE k = 'B' COLLATE NOCASE ORDER BY id",
        "SELECT id FROM e WHERE k = 'B' ORDER BY id",
        "SELECT id FROM e WHERE x = '5' ORDER BY id",
        "SELECT id FROM e WHERE x = 5 ORDER BY id",
        "SELECT id FROM e WHERE v = 'P' ORDER BY id",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE e(id INTEGER PRIMARY KEY, u TEXT COLLATE NOCASE "
             "UNIQUE, n INT, g INT, t TEXT UNIQUE, x, k TEXT, v TEXT)");
    same(&p, "CREATE INDEX eg ON e(g)");
    same(&p, "CREATE INDEX ex ON e(x)");
    same(&p, "CREATE UNIQUE INDEX ek ON e(k COLLATE NOCASE)");
    same(&p, "CREATE INDEX ev ON e(v) WHERE v > 'a'");
    same(&p, "INSERT INTO e VALUES (1, 'a', -9223372036854775808, 1, '5.0', "
             "5, 'a', 'P'), (2, 'b', 5, 2, '5', 'q', 'B', 'p'), "
             "(3, 'c', 7, 2, 'z', '5', 'c', 'p')");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

/* When SQLite evaluates a lookup's values: at the loop's start, after the
 * WHERE's constant terms, even over an empty table; a range's end bound
 * only once its start found a row. */
static void access_values_evaluate_when_sqlite_does(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM z WHERE rowid = abs(-9223372036854775808)",
        "SELECT * FROM z WHERE u = abs(-9223372036854775808)",
        "SELECT * FROM z WHERE g = abs(-9223372036854775808)",
        "SELECT * FROM z WHERE rowid > abs(-9223372036854775808)",
        "SELECT * FROM z WHERE rowid < abs(-9223372036854775808)",
        "SELECT * FROM t WHERE rowid < abs(-9223372036854775808)",
        "SELECT * FROM t WHERE rowid > 100 AND rowid < "
        "abs(-9223372036854775808)",
        "SELECT * FROM t WHERE rowid > 1 AND rowid < "
        "abs(-9223372036854775808)",
        "SELECT * FROM t WHERE rowid > 100 AND rowid < "
        "abs(-9223372036854775808) ORDER BY rowid DESC",
        "SELECT * FROM t WHERE rowid = abs(-9223372036854775808) AND 1 = 2",
        "SELECT * FROM t WHERE u = NULL AND g = abs(-9223372036854775808)",
        "SELECT * FROM t WHERE p = NULL AND q = abs(-9223372036854775808)",
        "SELECT * FROM t WHERE q = abs(-9223372036854775808) AND p = NULL",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE z(u UNIQUE, g)");
    same(&p, "CREATE INDEX zg ON z(g)");
    same(&p, "CREATE TABLE t(u UNIQUE, g, p, q, UNIQUE (p, q))");
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "INSERT INTO t VALUES (1, 1, 1, 1), (2, 2, 2, 2)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

/* Lookups in subqueries, FROM subqueries SQLite flattens, aliases. */
static void access_subqueries_and_aliases_match_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM (SELECT * FROM t) WHERE k = 7",
        "SELECT * FROM (SELECT k, g FROM t WHERE g = 2) WHERE k > 100",
        "SELECT * FROM (SELECT k AS z, g FROM t) WHERE z = 9",
        "SELECT x.k FROM t AS x WHERE x.rowid = 5",
        "SELECT k FROM t x WHERE x.g = 1 AND x.k < 20",
        "SELECT k AS z FROM t WHERE z = 11",
        "SELECT k FROM t WHERE k IN (SELECT k FROM t WHERE g = 3) AND g = 3",
        "SELECT EXISTS (SELECT 1 FROM t WHERE g = 4 AND k = 9)",
        "SELECT (SELECT s FROM t WHERE rowid = 7), (SELECT count(*) FROM t "
        "WHERE g = 1)",
        "SELECT k FROM t WHERE g = (SELECT g FROM t WHERE k = 13)",
        "SELECT k FROM t WHERE rowid > (SELECT count(*) FROM t WHERE g = 1)",
        "SELECT g, count(*) FROM t WHERE g = 2 GROUP BY g",
        "SELECT DISTINCT g FROM t WHERE g = 2",
        "SELECT k FROM t WHERE g = 2 ORDER BY s, k LIMIT 3",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT UNIQUE, g INT, s TEXT)");
    fill(&p, "t", 400, 5, true);
    same(&p, "CREATE INDEX tg ON t(g)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    pair_close(&p);
}

static void check_ranges(struct pair *p)
{
    static const char *queries[] = {
        "SELECT rowid, k FROM t WHERE rowid > 2990",
        "SELECT rowid, k FROM t WHERE rowid >= 2990.5",
        "SELECT rowid, k FROM t WHERE rowid < 12",
        "SELECT rowid, k FROM t WHERE rowid <= '12'",
        "SELECT rowid, k FROM t WHERE rowid < 11.5",
        "SELECT rowid, k FROM t WHERE rowid <= -11.5",
        "SELECT rowid, k FROM t WHERE rowid BETWEEN 1000 AND 1010",
        "SELECT rowid, k FROM t WHERE rowid BETWEEN 1010 AND 1000",
        "SELECT rowid, k FROM t WHERE 1500 < rowid AND 1503 >= rowid",
        "SELECT rowid, k FROM t WHERE rowid > 'abc'",
        "SELECT count(*) FROM t WHERE rowid < 'abc'",
        "SELECT count(*) FROM t WHERE rowid < x'00'",
        "SELECT rowid, k FROM t WHERE rowid > NULL",
        "SELECT rowid, k FROM t WHERE rowid > 1e300",
        "SELECT count(*) FROM t WHERE rowid > -1e300",
        "SELECT count(*) FROM t WHERE rowid < 1e300",
        "SELECT rowid, k FROM t WHERE rowid < -1e300",
        "SELECT rowid FROM t WHERE rowid >= -9223372036854775808.0 "
        "AND rowid < 3",
        "SELECT rowid FROM t WHERE rowid > -9223372036854775808.0 "
        "AND rowid < 3",
        "SELECT rowid FROM t WHERE rowid < -9223372036854775808.0",
        "SELECT rowid FROM t WHERE rowid <= -9223372036854775808.0",
        "SELECT rowid FROM t WHERE rowid > 9223372036854775807",
        "SELECT rowid FROM t WHERE rowid >= 9223372036854775807",
        "SELECT rowid FROM t WHERE rowid < -9223372036854775808",
        "SELECT rowid FROM t WHERE rowid > 9223372036854775806.0",
        "SELECT rowid, k FROM t WHERE rowid > 2990 ORDER BY rowid DESC",
        "SELECT rowid, k FROM t WHERE rowid < 5 ORDER BY rowid DESC",
        "SELECT rowid, k FROM t WHERE rowid BETWEEN 20 AND 30 "
        "ORDER BY rowid DESC LIMIT 3",
        "SELECT rowid FROM t WHERE rowid > 5 AND rowid > 2995",
        "SELECT rowid FROM t WHERE rowid > 2995 AND rowid >= 5",
        "SELECT rowid FROM t WHERE rowid BETWEEN 1 AND 2999 AND "
        "rowid BETWEEN 2990 AND 3000 AND rowid < 2995",
        "SELECT rowid FROM t WHERE rowid > 100 AND rowid < 2000 AND g = 1 "
        "AND k % 100 = 0",
        "SELECT count(*), sum(k) FROM t WHERE rowid > 1000",
        "SELECT rowid FROM t WHERE rowid > (SELECT max(rowid) - 3 FROM t)",
    };

    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(p, queries[q]);
    }
}

static void access_rowid_ranges_match_sqlite(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k, g, s)");
    fill(&p, "t", 3000, 4, false); /* in rowid order */
    check_ranges(&p);
    same(&p, "INSERT INTO t(rowid, k) VALUES (-9223372036854775808, 'min'), "
             "(9223372036854775807, 'max')");
    check_ranges(&p);
    same(&p, "DELETE FROM t WHERE rowid % 3 = 0 OR rowid > 2995");
    check_ranges(&p);
    /* the largest rowid deleted, then smaller ones added after it */
    same(&p, "INSERT INTO t(rowid, k) VALUES (2993, 'a'), (2996, 'b')");
    check_ranges(&p);
    same(&p, "UPDATE t SET rowid = -rowid WHERE rowid % 5 = 0");
    check_ranges(&p);
    pair_close(&p);
}

static void access_parameters_match_sqlite(void **state)
{
    static const struct arg args[] = {
        INT(5),    INT(1002),  REAL(5.0),   REAL(5.5),   TEXT("5"),
        TEXT("x"), TEXT("s5"), TEXT("S5"),  TEXT(" 6"),  BLOB("5"),
        NUL,       INT(-1),    REAL(1e300), TEXT("1e3"), INT(INT64_MIN),
        INT(2),    INT(3),     TEXT("s7"),  REAL(2.0),   TEXT("2.0"),
    };
    static const char *queries[] = {
        "SELECT rowid, * FROM t WHERE rowid = ?",
        "SELECT rowid, * FROM t WHERE rowid IS ?",
        "SELECT rowid, * FROM t WHERE k = ?",
        "SELECT rowid, * FROM t WHERE g = ?",
        "SELECT rowid, * FROM t WHERE s = ?",
        "SELECT rowid, * FROM t WHERE s IS ?",
        "SELECT rowid, * FROM t WHERE g IS ?",
        "SELECT rowid, * FROM t WHERE rowid > ? AND rowid < 10",
        "SELECT rowid, * FROM t WHERE rowid <= ? ORDER BY rowid DESC LIMIT 4",
        "SELECT rowid, * FROM t WHERE rowid BETWEEN ? AND 1003",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT UNIQUE, g INT, s TEXT)");
    fill(&p, "t", 1200, 3, true);
    same(&p, "INSERT INTO t(rowid, k, g, s) VALUES (5000, NULL, NULL, NULL), "
             "(5001, NULL, NULL, 'x'), (5002, 'x', NULL, NULL)");
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "CREATE INDEX ts ON t(s)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        for (size_t a = 0; a < sizeof(args) / sizeof(args[0]); a++) {
            same_args(&p, queries[q], &args[a], 1);
        }
    }
    pair_close(&p);
}

/* One prepared statement run again with other values: each execution
 * looks its own rows up. */
static void access_prepared_lookups_rerun(void **state)
{
    sqlite3_stmt *o = NULL;
    struct engine_stmt *e = NULL;
    const char *sql = "SELECT rowid, * FROM t WHERE g = ? AND rowid > ?";
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k, g, s)");
    fill(&p, "t", 2000, 9, true);
    same(&p, "CREATE INDEX tg ON t(g)");
    assert_int_equal(sqlite3_prepare_v2(p.oracle, sql, -1, &o, NULL),
                     SQLITE_OK);
    assert_int_equal(engine_prepare(p.db, sql, -1, &e, NULL), 0);
    for (int i = 0; i < 30; i++) {
        struct arg args[2] = {INT(i % 11), INT(i * 61)};

        bind_args(o, e, args, 2);
        step_both(&p, o, e, sql);
        sqlite3_reset(o);
        engine_reset(e);
    }
    sqlite3_finalize(o);
    engine_finalize(e);
    pair_close(&p);
}

static void access_update_delete_through_lookups(void **state)
{
    static const char *statements[] = {
        "UPDATE t SET g = g + 10 WHERE g = 1",
        "SELECT rowid, * FROM t WHERE g = 1",
        "SELECT rowid, * FROM t WHERE g = 11",
        "UPDATE t SET k = k * 2 WHERE k = 7",
        "SELECT rowid, * FROM t WHERE k = 14",
        "UPDATE t SET rowid = rowid + 10000 WHERE rowid = 20",
        "SELECT rowid, * FROM t WHERE rowid = 10020",
        "UPDATE t SET s = 'new' WHERE rowid BETWEEN 30 AND 40",
        "SELECT rowid, * FROM t WHERE s = 'new' ORDER BY rowid",
        "DELETE FROM t WHERE g = 2",
        "SELECT rowid, * FROM t WHERE g = 2",
        "DELETE FROM t WHERE rowid > 590",
        "DELETE FROM t WHERE k = 3 RETURNING *",
        "UPDATE t SET g = 5 WHERE g = 0 RETURNING rowid, g",
        "UPDATE t SET g = NULL WHERE g = 5",
        "SELECT rowid, * FROM t WHERE g = 5",
        "UPDATE t SET k = k WHERE k = 50",
        "UPDATE OR REPLACE t SET k = 60 WHERE k = 61",
        "SELECT rowid, * FROM t WHERE k = 60",
        "UPDATE t SET k = 62 WHERE k = 63 AND g IN (SELECT g FROM t "
        "WHERE k = 62)",
        "DELETE FROM t WHERE g = 11 AND k IN (SELECT k FROM t WHERE g = 11 "
        "LIMIT 3)",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT UNIQUE, g INT, s TEXT)");
    fill(&p, "t", 600, 4, true);
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "CREATE INDEX ts ON t(s, g)");
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
        same(&p, statements[i]);
        same_table(&p, "t");
    }
    pair_close(&p);
}

/* Undo (ROLLBACK, a failed statement) and schema changes keep every
 * index right. */
static void access_indexes_follow_undo_and_schema(void **state)
{
    static const char *statements[] = {
        "BEGIN",
        "UPDATE t SET g = 100 WHERE g = 1",
        "DELETE FROM t WHERE g = 2",
        "INSERT INTO t(k, g, s) VALUES (9001, 2, 'w'), (9002, 100, 'w')",
        "SELECT rowid, * FROM t WHERE g = 100",
        "ROLLBACK",
        "SELECT rowid, * FROM t WHERE g = 100",
        "SELECT rowid, * FROM t WHERE g = 1",
        "SELECT rowid, * FROM t WHERE g = 2",
        "UPDATE t SET k = 1 WHERE g = 3",
        "SELECT rowid, * FROM t WHERE g = 3",
        "SELECT rowid, * FROM t WHERE k = 1",
        "DROP INDEX tg",
        "SELECT rowid, * FROM t WHERE g = 3",
        "UPDATE t SET g = 7 WHERE g = 3",
        "CREATE INDEX tg2 ON t(g)",
        "SELECT rowid, * FROM t WHERE g = 7",
        "CREATE INDEX tk ON t(k, s)",
        "SELECT rowid, * FROM t WHERE s = 's3' AND k = 3",
        "DROP INDEX tk",
        "CREATE INDEX tk ON t(s)",
        "SELECT rowid, * FROM t WHERE s = 's3'",
        "BEGIN",
        "CREATE INDEX tgs ON t(g, s)",
        "UPDATE t SET s = 'moved' WHERE g = 7 AND s = 's3'",
        "SELECT rowid, * FROM t WHERE g = 7 AND s = 'moved'",
        "ROLLBACK",
        "SELECT rowid, * FROM t WHERE g = 7 AND s = 'moved'",
        "SELECT rowid, * FROM t WHERE g = 7 AND s = 's3'",
        "DROP TABLE t",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT UNIQUE, g INT, s TEXT)");
    fill(&p, "t", 500, 4, true);
    same(&p, "CREATE INDEX tg ON t(g)");
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
        same(&p, statements[i]);
    }
    pair_close(&p);
}

/* "x IN (SELECT c FROM t)" where CREATE INDEX covers c: SQLite answers it
 * from the index, so a RETURNING of the UPDATE writing t sees each row
 * the statement changed before (in_live.c). */
static void access_in_through_index_sees_changes(void **state)
{
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE w(a, b, c)");
    same(&p, "CREATE INDEX wb ON w(b)");
    same(&p, "CREATE INDEX wc ON w(c COLLATE NOCASE)");
    same(&p, "INSERT INTO w VALUES (1, 1, 'x'), (2, 2, 'y'), (3, 3, 'z')");
    same(&p, "UPDATE w SET b = 0 WHERE a > 0 RETURNING a, 3 IN (SELECT b "
             "FROM w), 0 IN (SELECT b FROM w)");
    same(&p, "UPDATE w SET c = 'q' RETURNING a, 'z' IN (SELECT c FROM w), "
             "'Z' COLLATE NOCASE IN (SELECT c FROM w)");
    same(&p, "DELETE FROM w WHERE a IN (SELECT a FROM w) RETURNING a");
    pair_close(&p);
}

static void exec_or_fail(struct engine_db *db, const char *sql)
{
    if (engine_exec(db, sql, NULL, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
}

/* sql fails to prepare in both, with the same message. */
static void same_prepare_error(struct pair *p, const char *sql)
{
    sqlite3_stmt *o = NULL;
    struct engine_stmt *e = NULL;

    assert_int_not_equal(sqlite3_prepare_v2(p->oracle, sql, -1, &o, NULL),
                         SQLITE_OK);
    assert_int_not_equal(engine_prepare(p->db, sql, -1, &e, NULL), 0);
    assert_string_equal(engine_errmsg(p->db), sqlite3_errmsg(p->oracle));
}

/* INDEXED BY and NOT INDEXED: only the named index, or none, serves a
 * lookup (the other WHERE terms show which rows were read: "1 / (k - 7)"
 * fails only on a row a scan reads); an unknown index is an error. A
 * query SQLite would answer by scanning the whole index is left out: its
 * rows come in index order there, in rowid order here (docs/engine.md). */
static void access_index_hints_match_sqlite(void **state)
{
    static const char *queries[] = {
        "SELECT * FROM t NOT INDEXED WHERE g = 3",
        "SELECT * FROM t INDEXED BY tg WHERE g = 3",
        "SELECT * FROM t INDEXED BY tg WHERE g = 3 AND 1 / (k - 7) IS NULL",
        "SELECT * FROM t NOT INDEXED WHERE g = 2 AND 1 / (k - 7) IS NULL",
        "SELECT * FROM t INDEXED BY tsg WHERE s = 's5' AND g = 4",
        "SELECT * FROM t NOT INDEXED WHERE rowid = 5",
        "SELECT * FROM t INDEXED BY tg WHERE rowid = 5",
        "SELECT * FROM t NOT INDEXED WHERE u = 12",
        "SELECT * FROM t INDEXED BY tu WHERE u = 12",
        "SELECT count(*), sum(k) FROM t INDEXED BY ts WHERE s = 'S5'",
        "SELECT count(*) FROM t AS x INDEXED BY tg JOIN t AS y NOT INDEXED "
        "ON x.g = y.k WHERE x.k < 50",
        "SELECT * FROM (t NOT INDEXED) WHERE g = 1 AND k < 40",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT, g INT, s TEXT, u INT)");
    fill(&p, "t", 1000, 5, true);
    same(&p, "UPDATE t SET u = k * 3");
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "CREATE INDEX tsg ON t(s, g)");
    same(&p, "CREATE INDEX ts ON t(s COLLATE NOCASE)");
    same(&p, "CREATE UNIQUE INDEX tu ON t(u)");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        same(&p, queries[q]);
    }
    same_prepare_error(&p, "SELECT * FROM t INDEXED BY nope WHERE g = 3");
    same_prepare_error(&p, "SELECT * FROM t INDEXED BY WHERE g = 3");
    same_prepare_error(&p, "DELETE FROM t INDEXED BY nope WHERE g = 3");
    same(&p, "UPDATE t INDEXED BY tg SET k = k + 1 WHERE g = 2");
    same(&p, "DELETE FROM t NOT INDEXED WHERE g = 1");
    same(&p, "DELETE FROM t INDEXED BY tu WHERE u = 30");
    same_table(&p, "t");
    pair_close(&p);
}

/* REINDEX builds the indexes again (all, a collation's, a table's, one);
 * lookups through them still find SQLite's rows; names it cannot place
 * are SQLite's errors. */
static void access_reindex_matches_sqlite(void **state)
{
    static const char *statements[] = {
        "REINDEX",        "REINDEX tg",      "REINDEX t",
        "REINDEX nocase", "REINDEX main.tg", "REINDEX main.t",
        "REINDEX tu",     "REINDEX rtrim",   "REINDEX sqlite_master",
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    same(&p, "CREATE TABLE t(k INT, g INT, s TEXT, u INT)");
    fill(&p, "t", 500, 7, true);
    same(&p, "UPDATE t SET u = k * 3");
    same(&p, "CREATE INDEX tg ON t(g)");
    same(&p, "CREATE INDEX ts ON t(s COLLATE NOCASE)");
    same(&p, "CREATE UNIQUE INDEX tu ON t(u)");
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
        same(&p, statements[i]);
        same(&p, "SELECT * FROM t WHERE g = 3");
        same(&p, "SELECT * FROM t WHERE u = 33");
        same(&p, "SELECT count(*) FROM t WHERE s = 'S5' COLLATE NOCASE");
        same(&p, "DELETE FROM t WHERE rowid % 50 = 1");
        same(&p, "INSERT INTO t(k, g, s, u) SELECT k + 1000, g, s, u + 5000 "
                 "FROM t WHERE rowid % 60 = 2");
    }
    same_prepare_error(&p, "REINDEX main.");
    same_prepare_error(&p, "REINDEX nope");
    same_prepare_error(&p, "REINDEX foo.tg");
    same_prepare_error(&p, "REINDEX temp.tg");
    same_prepare_error(&p, "REINDEX main.nocase");
    same_table(&p, "t");
    pair_close(&p);
}

/* A DROP INDEX run between two steps of a statement whose subquery has
 * not looked its rows up yet is refused, as SQLite refuses it while the
 * statement reads; the lookups go on through the index planned. */
static void access_survives_drop_index_between_steps(void **state)
{
    struct engine_db *db = NULL;
    struct engine_stmt *stmt = NULL;
    int row = 0;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    exec_or_fail(db, "CREATE TABLE t(g TEXT); CREATE TABLE big(x);"
                     "INSERT INTO t VALUES ('a'), ('A'), ('a'), ('b');"
                     "CREATE INDEX tg ON t(g);"
                     "CREATE INDEX tn ON t(g COLLATE NOCASE);");
    for (int i = 0; i < 2000; i++) {
        exec_or_fail(db, "INSERT INTO big VALUES (1)");
    }
    assert_int_equal(engine_prepare(db,
                                    "SELECT CASE WHEN rowid > 1500 THEN "
                                    "(SELECT count(*) FROM t WHERE g = 'a') "
                                    "END FROM big",
                                    -1, &stmt, NULL),
                     0);
    while (engine_step(stmt) == ENGINE_ROW) {
        if (++row == 10) {
            /* Refused while the statement reads, as SQLite's OP_Destroy. */
            assert_int_equal(engine_exec(db, "DROP INDEX tg", NULL, NULL),
                             ENGINE_EBUSY);
            assert_string_equal(engine_errmsg(db), "database table is locked");
        }
        if (row > 1500) {
            assert_int_equal(engine_column_int64(stmt, 0), 2);
        }
    }
    assert_int_equal(row, 2000);
    exec_or_fail(db, "DROP INDEX tg");
    engine_finalize(stmt);
    engine_close(db);
}

static const char *oom_script =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c, d);"
    "INSERT INTO t(b, c, d) VALUES ('x', 1, 1), ('y', 2, 1), ('z', 3, 2);"
    "CREATE INDEX tc ON t(c, d);"
    "CREATE INDEX td ON t(d);"
    "SELECT * FROM t WHERE d = 1;"
    "SELECT * FROM t WHERE c = 2 AND d = 1;"
    "SELECT * FROM t WHERE b = 'y';"
    "SELECT * FROM t WHERE a BETWEEN 2 AND 3 ORDER BY a DESC;"
    "UPDATE t SET d = 3 WHERE d = 1;"
    "DELETE FROM t WHERE a = 3;"
    "INSERT INTO t(a, b, c, d) VALUES (0, 'w', 2, 3);"
    "SELECT * FROM t WHERE a > 0 AND d = 3;"
    "DROP INDEX td;"
    "SELECT * FROM t WHERE d = 3;";

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

/* Fails each allocation of the script in turn: every run ends with an
 * error or success, never a crash, and frees everything (cmocka's heap
 * underneath reports any leak). */
static void access_survives_every_allocation_failure(void **state)
{
    struct common_heap saved;
    uint64_t fail_at;

    (void)state;
    common_heap_get(&saved);
    for (fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = run_script(oom_script);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_true(rc < 0);
    }
    assert_true(fail_at > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(access_rowid_equality_matches_sqlite),
        cmocka_unit_test(access_unique_key_equality_matches_sqlite),
        cmocka_unit_test(access_index_equality_matches_sqlite),
        cmocka_unit_test(access_affinity_and_collation_decide_use),
        cmocka_unit_test(access_values_evaluate_when_sqlite_does),
        cmocka_unit_test(access_subqueries_and_aliases_match_sqlite),
        cmocka_unit_test(access_rowid_ranges_match_sqlite),
        cmocka_unit_test(access_parameters_match_sqlite),
        cmocka_unit_test(access_prepared_lookups_rerun),
        cmocka_unit_test(access_update_delete_through_lookups),
        cmocka_unit_test(access_indexes_follow_undo_and_schema),
        cmocka_unit_test(access_in_through_index_sees_changes),
        cmocka_unit_test(access_index_hints_match_sqlite),
        cmocka_unit_test(access_reindex_matches_sqlite),
        cmocka_unit_test(access_survives_drop_index_between_steps),
        cmocka_unit_test(access_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
