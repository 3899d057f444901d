/* SPDX-License-Identifier: MIT
 *
 * Goal: a statement that writes a table while another statement of the
 * same handle is part-way through reading it (SQLite allows this on one
 * connection) never makes the reader crash or hand out freed bytes, and
 * the reader goes on as SQLite's isolation.html describes: deleting or
 * updating the current row or rows already read is safe, and every row
 * not yet read that the write left alone is still read, once. Whether
 * rows changed or deleted ahead of the reader are seen with their new or
 * old values, or at all, SQLite leaves undefined; here they must at least
 * be rows the table held before or after the write. A rollback that
 * destroys a table being read stops the reader with SQLite's error.
 * Method: the same interleaving (step the reader k times, run the write,
 * read the rest) in libsqlite3 and in the engine; each row is compared by
 * rowid, storage class and bytes (hex), so freed or reused bytes show up
 * even without a sanitizer. Run under ASan (SANITIZE=address) too.
 */
#include "common_test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define ROW_TEXT 160

/* Result rows, each written as text (row_text). */
struct rows {
    char (*text)[ROW_TEXT];
    size_t count;
    size_t capacity;
};

static void rows_add(struct rows *rows, const char *text)
{
    if (rows->count == rows->capacity) {
        rows->capacity = rows->capacity ? rows->capacity * 2 : 64;
        rows->text = realloc(rows->text, rows->capacity * ROW_TEXT);
        assert_non_null(rows->text);
    }
    snprintf(rows->text[rows->count++], ROW_TEXT, "%s", text);
}

static bool rows_have(const struct rows *rows, const char *text)
{
    for (size_t i = 0; i < rows->count; i++) {
        if (strcmp(rows->text[i], text) == 0) {
            return true;
        }
    }
    return false;
}

static void rows_free(struct rows *rows)
{
    free(rows->text);
    memset(rows, 0, sizeof(*rows));
}

/* Appends " <type>:<hex of the bytes>" for one value. */
static void value_text(char *out, int type, const unsigned char *bytes,
                       int size)
{
    size_t used = strlen(out);

    used += (size_t)snprintf(out + used, ROW_TEXT - used, " %d:", type);
    for (int i = 0; bytes != NULL && i < size && used + 3 < ROW_TEXT; i++) {
        used += (size_t)snprintf(out + used, ROW_TEXT - used, "%02x", bytes[i]);
    }
}

static void oracle_row(sqlite3_stmt *stmt, char *out)
{
    out[0] = '\0';
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
        int type = sqlite3_column_type(stmt, c);
        const unsigned char *bytes = type == SQLITE_BLOB
                                         ? sqlite3_column_blob(stmt, c)
                                         : sqlite3_column_text(stmt, c);

        value_text(out, type, bytes, sqlite3_column_bytes(stmt, c));
    }
}

static void engine_row(struct engine_stmt *stmt, char *out)
{
    out[0] = '\0';
    for (int c = 0; c < engine_column_count(stmt); c++) {
        int type = engine_column_type(stmt, c);
        const void *bytes = type == ENGINE_BLOB ? engine_column_blob(stmt, c)
                                                : engine_column_text(stmt, c);

        value_text(out, type, bytes, engine_column_bytes(stmt, c));
    }
}

/* One interleaving: setup, then the reader's first k rows, the write
 * (several statements allowed), and the reader's remaining rows. */
struct interleaving {
    const char *setup;
    const char *read;
    int k;
    const char *write;
    bool defined; /* SQLite's rows after the write are the only answer */
};

struct outcome {
    struct rows first;  /* the reader's rows before the write */
    struct rows rest;   /* and after */
    struct rows before; /* the whole result before the write */
    struct rows after;  /* and after it */
};

static void outcome_free(struct outcome *o)
{
    rows_free(&o->first);
    rows_free(&o->rest);
    rows_free(&o->before);
    rows_free(&o->after);
}

static void oracle_exec(sqlite3 *db, const char *sql)
{
    char *error = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
        fail_msg("sqlite: %s: %s", sql, error);
    }
}

static void oracle_read_all(sqlite3 *db, const char *sql, struct rows *out)
{
    sqlite3_stmt *stmt = NULL;
    char row[ROW_TEXT];

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        oracle_row(stmt, row);
        rows_add(out, row);
    }
    sqlite3_finalize(stmt);
}

static void oracle_run(const struct interleaving *t, struct outcome *o)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *reader = NULL;
    char row[ROW_TEXT];
    int rc;

    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    oracle_exec(db, t->setup);
    oracle_read_all(db, t->read, &o->before);
    assert_int_equal(sqlite3_prepare_v2(db, t->read, -1, &reader, NULL),
                     SQLITE_OK);
    for (int i = 0; i < t->k; i++) {
        assert_int_equal(sqlite3_step(reader), SQLITE_ROW);
        oracle_row(reader, row);
        rows_add(&o->first, row);
    }
    oracle_exec(db, t->write);
    oracle_read_all(db, t->read, &o->after);
    while ((rc = sqlite3_step(reader)) == SQLITE_ROW) {
        oracle_row(reader, row);
        rows_add(&o->rest, row);
    }
    assert_int_equal(rc, SQLITE_DONE);
    sqlite3_finalize(reader);
    sqlite3_close(db);
}

static void engine_exec_ok(struct engine_db *db, const char *sql)
{
    if (engine_exec(db, sql, NULL, NULL) != 0) {
        fail_msg("sinew: %s: %s", sql, engine_errmsg(db));
    }
}

static struct engine_stmt *engine_prepare_ok(struct engine_db *db,
                                             const char *sql)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(db, sql, -1, &stmt, NULL) != 0) {
        fail_msg("sinew: %s: %s", sql, engine_errmsg(db));
    }
    return stmt;
}

static void engine_run(const struct interleaving *t, struct outcome *o)
{
    struct engine_db *db = NULL;
    struct engine_stmt *reader;
    char row[ROW_TEXT];
    int rc;

    assert_int_equal(engine_open(NULL, &db), 0);
    engine_exec_ok(db, t->setup);
    reader = engine_prepare_ok(db, t->read);
    for (int i = 0; i < t->k; i++) {
        assert_int_equal(engine_step(reader), ENGINE_ROW);
        engine_row(reader, row);
        rows_add(&o->first, row);
    }
    engine_exec_ok(db, t->write);
    while ((rc = engine_step(reader)) == ENGINE_ROW) {
        engine_row(reader, row);
        rows_add(&o->rest, row);
    }
    assert_int_equal(rc, ENGINE_DONE);
    engine_finalize(reader);
    engine_close(db);
}

static void fail_rows(const struct interleaving *t, const char *why,
                      const char *row)
{
    fail_msg("%s\n  read %s, %d rows, then %s:\n  %s:%s", t->setup, t->read,
             t->k, t->write, why, row);
}

/* The reader's rows in sinew, checked against SQLite's (see the Goal). */
static void check(const struct interleaving *t)
{
    struct outcome want = {0}, got = {0};

    oracle_run(t, &want);
    engine_run(t, &got);
    for (size_t i = 0; i < want.first.count; i++) {
        if (strcmp(want.first.text[i], got.first.text[i]) != 0) {
            fail_rows(t, "before the write, sinew read", got.first.text[i]);
        }
    }
    for (size_t i = 0; i < got.rest.count; i++) {
        if (!rows_have(&want.before, got.rest.text[i]) &&
            !rows_have(&want.after, got.rest.text[i])) {
            fail_rows(t, "a row neither before nor after", got.rest.text[i]);
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(got.rest.text[i], got.rest.text[j]) == 0) {
                fail_rows(t, "a row read twice", got.rest.text[i]);
            }
        }
    }
    for (size_t i = 0; i < want.rest.count; i++) {
        bool untouched = rows_have(&want.before, want.rest.text[i]) &&
                         rows_have(&want.after, want.rest.text[i]);

        if ((untouched || t->defined) &&
            !rows_have(&got.rest, want.rest.text[i])) {
            fail_rows(t, "sinew missed", want.rest.text[i]);
        }
    }
    if (t->defined && want.rest.count != got.rest.count) {
        fail_rows(t, "row counts differ", "");
    }
    outcome_free(&want);
    outcome_free(&got);
}

static const char small[] =
    "CREATE TABLE t(a TEXT, b BLOB, c);"
    "INSERT INTO t VALUES ('one', x'01aa', 1), ('two', x'02bb', 'x'),"
    " ('three', x'03cc', 2.5), ('four', x'04dd', NULL)";

/* The same rows put in out of rowid order: scans read a rowid-sorted
 * permutation of the slots rather than the slots themselves. */
static const char shuffled[] =
    "CREATE TABLE t(a TEXT, b BLOB, c);"
    "INSERT INTO t(rowid, a, b, c) VALUES (4, 'four', x'04dd', NULL),"
    " (2, 'two', x'02bb', 'x'), (1, 'one', x'01aa', 1),"
    " (3, 'three', x'03cc', 2.5)";

static void interleave_delete_small(void **state)
{
    static const struct interleaving cases[] = {
        {small, "SELECT rowid, * FROM t", 1, "DELETE FROM t", false},
        {small, "SELECT rowid, * FROM t", 1, "DELETE FROM t WHERE rowid = 1",
         true},
        {small, "SELECT rowid, * FROM t", 2, "DELETE FROM t WHERE rowid <= 2",
         true},
        {small, "SELECT rowid, * FROM t", 1, "DELETE FROM t WHERE rowid = 3",
         false},
        {small, "SELECT a, b FROM t WHERE c IS NOT NULL", 1,
         "DELETE FROM t WHERE a = 'one'", true},
        {small, "SELECT rowid, * FROM t ORDER BY rowid DESC", 1,
         "DELETE FROM t WHERE rowid = 4", true},
        {small, "SELECT rowid, * FROM t ORDER BY a", 2, "DELETE FROM t", true},
        {small, "SELECT rowid, * FROM t WHERE rowid > 1", 1,
         "DELETE FROM t WHERE rowid = 2", true},
        {shuffled, "SELECT rowid, * FROM t", 2,
         "DELETE FROM t WHERE rowid <= 2", true},
        {shuffled, "SELECT rowid, * FROM t", 1, "DELETE FROM t", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check(&cases[i]);
    }
}

static void interleave_update_small(void **state)
{
    static const struct interleaving cases[] = {
        {small, "SELECT rowid, * FROM t", 1,
         "UPDATE t SET a = a || a, b = b || b WHERE rowid = 1", true},
        {small, "SELECT rowid, * FROM t", 2,
         "UPDATE t SET a = upper(a) WHERE rowid <= 2", true},
        {small, "SELECT rowid, * FROM t", 1, "UPDATE t SET a = upper(a)",
         false},
        {small, "SELECT rowid, * FROM t", 1, "UPDATE t SET b = zeroblob(3)",
         false},
        {small, "SELECT rowid, * FROM t", 1,
         "UPDATE t SET rowid = rowid + 10 WHERE rowid = 1", false},
        {small, "SELECT rowid, * FROM t ORDER BY rowid DESC", 1,
         "UPDATE t SET a = 'x' || a", false},
        {shuffled, "SELECT rowid, * FROM t", 2,
         "UPDATE t SET a = upper(a) WHERE rowid <= 2", true},
        {small, "SELECT rowid, * FROM t", 1,
         "BEGIN; DELETE FROM t WHERE rowid = 1; UPDATE t SET a = 'gone';"
         " ROLLBACK",
         true},
        {small, "SELECT rowid, * FROM t", 1,
         "INSERT INTO t VALUES ('five', x'05ee', 5)", false},
        {small, "SELECT rowid, * FROM t", 1,
         "REPLACE INTO t(rowid, a, b) VALUES (2, 'deux', x'02')", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check(&cases[i]);
    }
}

/* Tables larger than a batch (1024 rows): the reader is between two
 * batches of its scan when the write comes, so where it goes on from
 * matters. */
static void interleave_across_batches(void **state)
{
    static const char ordered[] =
        "CREATE TABLE t(a TEXT, b BLOB);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
        " WHERE i < 3000) INSERT INTO t(rowid, a, b)"
        " SELECT i, 'row ' || i, x'abcd' FROM n";
    static const char unordered[] =
        "CREATE TABLE t(a TEXT, b BLOB);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
        " WHERE i < 3000) INSERT INTO t(rowid, a, b)"
        " SELECT (i * 7919) % 3001, 'row ' || i, x'abcd' FROM n";
    static const struct interleaving cases[] = {
        {ordered, "SELECT rowid, * FROM t", 1500,
         "DELETE FROM t WHERE rowid <= 1500", true},
        {ordered, "SELECT rowid, * FROM t", 1500,
         "UPDATE t SET a = a || '!' WHERE rowid <= 1500", true},
        {ordered, "SELECT rowid, * FROM t", 1500,
         "DELETE FROM t WHERE rowid % 2 = 0", false},
        {ordered, "SELECT rowid, * FROM t ORDER BY rowid DESC", 1500,
         "DELETE FROM t WHERE rowid > 1500", true},
        {ordered, "SELECT rowid, * FROM t ORDER BY rowid DESC", 1500,
         "INSERT INTO t(a, b) VALUES ('new', x'00')", false},
        {ordered, "SELECT rowid, * FROM t WHERE rowid > 100", 1500,
         "DELETE FROM t WHERE rowid <= 1600", true},
        {ordered, "SELECT rowid, * FROM t", 1500,
         "INSERT INTO t(rowid, a, b) VALUES (0, 'first', x'00')", false},
        {unordered, "SELECT rowid, * FROM t", 1500,
         "DELETE FROM t WHERE rowid <= 1500", true},
        {unordered, "SELECT rowid, * FROM t", 1500,
         "UPDATE t SET a = a || '!' WHERE rowid <= 1500", true},
        {unordered, "SELECT rowid, * FROM t ORDER BY rowid DESC", 1500,
         "DELETE FROM t WHERE rowid > 1500", true},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check(&cases[i]);
    }
}

/* Readers whose batches come from other operators than a plain scan: a
 * join holds its outer row's batch while it reads the inner table. */
static void interleave_joins_and_subqueries(void **state)
{
    static const char two[] =
        "CREATE TABLE t(a TEXT, b BLOB); CREATE TABLE u(k, v TEXT);"
        "INSERT INTO t VALUES ('one', x'01'), ('two', x'02'), ('three', x'03');"
        "INSERT INTO u VALUES (1, 'uno'), (2, 'dos'), (3, 'tres')";
    static const struct interleaving cases[] = {
        {two, "SELECT t.a, t.b, u.v FROM t, u", 2, "DELETE FROM u", false},
        {two, "SELECT t.a, t.b, u.v FROM t, u", 2, "DELETE FROM t", false},
        {two, "SELECT t.a, u.v FROM t JOIN u ON u.k = t.rowid", 1,
         "UPDATE u SET v = v || v; UPDATE t SET a = a || a", false},
        {two, "SELECT a, (SELECT v FROM u WHERE k = t.rowid) FROM t", 1,
         "DELETE FROM u WHERE k = 1", true},
        {two,
         "SELECT a, b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE k = "
         "t.rowid)",
         1, "DELETE FROM u WHERE k = 1", true},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check(&cases[i]);
    }
}

/* Whether text is one of the words of list (separated by spaces). */
static bool one_of(const char *text, const char *list)
{
    size_t size = strlen(text);
    const char *at = list;

    for (;;) {
        size_t word = strcspn(at, " ");

        if (word == size && strncmp(at, text, size) == 0) {
            return true;
        }
        if (at[word] == '\0') {
            return false;
        }
        at += word + 1;
    }
}

/* Several statements in flight at once: two readers and a prepared
 * writer whose RETURNING rows are handed out between their steps. Every
 * byte still in use is kept until the last of them ends. */
static void interleave_many_statements(void **state)
{
    struct engine_db *db = NULL;
    struct engine_stmt *r1, *r2, *w;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    engine_exec_ok(db, small);
    r1 = engine_prepare_ok(db, "SELECT a, b FROM t");
    r2 = engine_prepare_ok(db, "SELECT a FROM t ORDER BY rowid DESC");
    w = engine_prepare_ok(db, "UPDATE t SET a = a || '+' RETURNING a");
    assert_int_equal(engine_step(r1), ENGINE_ROW);
    assert_string_equal(engine_column_text(r1, 0), "one");
    assert_int_equal(engine_step(w), ENGINE_ROW);
    assert_string_equal(engine_column_text(w, 0), "one+");
    assert_int_equal(engine_step(r2), ENGINE_ROW);
    assert_string_equal(engine_column_text(r2, 0), "four+");
    engine_exec_ok(db, "DELETE FROM t WHERE rowid = 3");
    assert_int_equal(engine_step(r1), ENGINE_ROW);
    assert_true(one_of(engine_column_text(r1, 0), "two two+"));
    assert_int_equal(engine_column_bytes(r1, 1), 2);
    assert_memory_equal(engine_column_blob(r1, 1), "\x02\xbb", 2);
    assert_int_equal(engine_step(w), ENGINE_ROW);
    assert_string_equal(engine_column_text(w, 0), "two+");
    engine_finalize(w);
    engine_exec_ok(db, "UPDATE t SET a = 'z', b = x'ff'");
    assert_int_equal(engine_step(r2), ENGINE_ROW);
    assert_true(one_of(engine_column_text(r2, 0), "three+ two+ z"));
    engine_finalize(r2);
    while (engine_step(r1) == ENGINE_ROW) {
        assert_true(
            one_of(engine_column_text(r1, 0), "three three+ four four+ z"));
    }
    engine_finalize(r1);
    engine_close(db);
}

/* A reader left in the middle (never reset) until the handle closes,
 * while a loop of writes replaces every row's bytes many times. */
static void interleave_reader_left_running(void **state)
{
    struct engine_db *db = NULL;
    struct engine_stmt *reader;

    (void)state;
    assert_int_equal(engine_open(NULL, &db), 0);
    engine_exec_ok(db, small);
    reader = engine_prepare_ok(db, "SELECT a, b FROM t");
    assert_int_equal(engine_step(reader), ENGINE_ROW);
    for (int i = 0; i < 50; i++) {
        engine_exec_ok(db, "UPDATE t SET a = a || 'x', b = b || x'00'");
    }
    engine_exec_ok(db, "DELETE FROM t");
    assert_string_equal(engine_column_text(reader, 0), "one");
    assert_int_equal(engine_step(reader), ENGINE_ROW);
    assert_string_equal(engine_column_text(reader, 0), "two");
    engine_close(db);
}

/* A rollback that destroys a table a statement is reading (created, or
 * altered, in the transaction) stops that statement with SQLite's error,
 * rather than leaving it reading a freed table. */
static void interleave_rollback_destroys_table(void **state)
{
    static const char *const cases[][2] = {
        {"BEGIN; CREATE TABLE n(a); INSERT INTO n VALUES ('x'), ('y')",
         "ROLLBACK"},
        {"CREATE TABLE n(a); INSERT INTO n VALUES ('x'), ('y');"
         "BEGIN; ALTER TABLE n ADD COLUMN b",
         "ROLLBACK"},
        {"BEGIN; SAVEPOINT s; CREATE TABLE n(a);"
         "INSERT INTO n VALUES ('x'), ('y')",
         "ROLLBACK TO s"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sqlite3 *oracle = NULL;
        sqlite3_stmt *want = NULL;
        struct engine_db *db = NULL;
        struct engine_stmt *got;

        assert_int_equal(sqlite3_open(":memory:", &oracle), SQLITE_OK);
        oracle_exec(oracle, cases[i][0]);
        assert_int_equal(
            sqlite3_prepare_v2(oracle, "SELECT a FROM n", -1, &want, NULL),
            SQLITE_OK);
        assert_int_equal(sqlite3_step(want), SQLITE_ROW);
        oracle_exec(oracle, cases[i][1]);
        assert_int_equal(sqlite3_step(want), SQLITE_ABORT);

        assert_int_equal(engine_open(NULL, &db), 0);
        engine_exec_ok(db, cases[i][0]);
        got = engine_prepare_ok(db, "SELECT a FROM n");
        assert_int_equal(engine_step(got), ENGINE_ROW);
        assert_string_equal(engine_column_text(got, 0), "x");
        engine_exec_ok(db, cases[i][1]);
        assert_int_equal(engine_step(got), ENGINE_EABORT);
        assert_string_equal(engine_errmsg(db), sqlite3_errmsg(oracle));
        assert_int_equal(engine_reset(got), ENGINE_EABORT);
        engine_finalize(got);
        engine_close(db);
        sqlite3_finalize(want);
        sqlite3_close(oracle);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interleave_delete_small),
        cmocka_unit_test(interleave_update_small),
        cmocka_unit_test(interleave_across_batches),
        cmocka_unit_test(interleave_joins_and_subqueries),
        cmocka_unit_test(interleave_many_statements),
        cmocka_unit_test(interleave_reader_left_running),
        cmocka_unit_test(interleave_rollback_destroys_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
