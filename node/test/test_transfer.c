/* SPDX-License-Identifier: MIT
 *
 * test_transfer.c: `sinew import` and `sinew export` (transfer.h) keep
 * every row, rowid, value and storage class, and leave nothing behind
 * when they fail.
 *
 * Method: a C SQLite database is built in a temporary directory with the
 * awkward cases: an INTEGER PRIMARY KEY table with gaps and a deleted row,
 * a table without declared types holding every storage class (NULL,
 * INT64_MIN/MAX, -0.0, 1e308, the smallest subnormal, infinities, UTF-8,
 * text with a NUL byte, an empty blob beside NULL), a composite PRIMARY
 * KEY, a column named rowid, an identifier with quotes and spaces, 25,001
 * rows (three import transactions), unique and non-unique indexes, a
 * view, a trigger, AUTOINCREMENT (sqlite_sequence) and ANALYZE
 * (sqlite_stat1). It is imported, and the engine's rows are compared with
 * the source's, value by value and type by type (doubles bit for bit);
 * the result is exported to a second SQLite file, compared the same way,
 * and the table and index definitions of all three must agree. The
 * failures: a target that exists (untouched), a source that is not a
 * database, a table the engine refuses (WITHOUT ROWID), a stop request
 * mid-copy: each fails with its message and no target file or -wal left.
 */
#include "common_test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "transfer.h"
#include "transfer_int.h"

#define TEST_PATH_SIZE 512
#define TEST_MANY_ROWS 25001

struct test_dir {
    char path[TEST_PATH_SIZE / 2]; /* room for a file name after it */
};

static void dir_make(struct test_dir *dir)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir->path, sizeof(dir->path), "%s/sinew-transfer-XXXXXX",
             base != NULL && base[0] != '\0' ? base : "/tmp");
    assert_non_null(mkdtemp(dir->path));
}

static void dir_remove(const struct test_dir *dir)
{
    DIR *handle = opendir(dir->path);
    assert_non_null(handle);
    struct dirent *entry;
    char path[TEST_PATH_SIZE];
    while ((entry = readdir(handle)) != NULL) {
        if (strcmp(entry->d_name, ".") != 0 &&
            strcmp(entry->d_name, "..") != 0) {
            snprintf(path, sizeof(path), "%s/%s", dir->path, entry->d_name);
            unlink(path);
        }
    }
    closedir(handle);
    assert_int_equal(rmdir(dir->path), 0);
}

/* Each test that writes files gets its own directory, removed also when
 * the test fails. */
static int dir_setup(void **state)
{
    static struct test_dir dir;
    dir_make(&dir);
    *state = &dir;
    return 0;
}

static int dir_teardown(void **state)
{
    dir_remove(*state);
    return 0;
}

static void dir_file(const struct test_dir *dir, const char *name, char *out)
{
    snprintf(out, TEST_PATH_SIZE, "%s/%s", dir->path, name);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static bool exists_with_suffix(const char *path, const char *suffix)
{
    char side[TEST_PATH_SIZE + 16];
    snprintf(side, sizeof(side), "%s%s", path, suffix);
    return exists(side);
}

/* ------------------------------------------------------------------------
 * The source database
 * ------------------------------------------------------------------------ */

struct test_value {
    int type;
    int64_t integer;
    double real;
    const void *bytes;
    int size;
};

static const uint8_t all_bytes[256] = {
#define B4(n) n, n + 1, n + 2, n + 3
#define B16(n) B4(n), B4(n + 4), B4(n + 8), B4(n + 12)
#define B64(n) B16(n), B16(n + 16), B16(n + 32), B16(n + 48)
    B64(0), B64(64), B64(128), B64(192)};

#define I(v)                                                                   \
    {                                                                          \
        .type = SQLITE_INTEGER, .integer = (v)                                 \
    }
#define F(v)                                                                   \
    {                                                                          \
        .type = SQLITE_FLOAT, .real = (v)                                      \
    }
#define T(s, n)                                                                \
    {                                                                          \
        .type = SQLITE_TEXT, .bytes = (s), .size = (n)                         \
    }
#define L(s, n)                                                                \
    {                                                                          \
        .type = SQLITE_BLOB, .bytes = (s), .size = (n)                         \
    }

/* Every storage class, with the values a copy gets wrong first. */
static const struct test_value awkward[] = {
    {.type = SQLITE_NULL},
    I(0),
    I(1),
    I(-1),
    I(INT64_MIN),
    I(INT64_MAX),
    F(0.0),
    F(-0.0),
    F(1e308),
    F(-1e308),
    F(4.9406564584124654e-324),
    F(2.2250738585072014e-308),
    F(0.1),
    F(3.0),
    F(INFINITY),
    F(-INFINITY),
    T("", 0),
    T("plain", 5),
    T("h\xc3\xa9llo \xe2\x9c\x93 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x99\x82",
      21),
    T("a\0b", 3),
    T("12", 2),
    L("", 0),
    L(all_bytes, 256),
    L("\0", 1),
};
#define AWKWARD_COUNT ((int)(sizeof(awkward) / sizeof(awkward[0])))

static void exec_sqlite(sqlite3 *db, const char *sql)
{
    char *message = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &message);
    if (rc != SQLITE_OK) {
        fail_msg("%s: %s", sql, message);
    }
}

static void bind_test_value(sqlite3_stmt *stmt, int index,
                            const struct test_value *v)
{
    int rc;
    switch (v->type) {
    case SQLITE_INTEGER:
        rc = sqlite3_bind_int64(stmt, index, v->integer);
        break;
    case SQLITE_FLOAT:
        rc = sqlite3_bind_double(stmt, index, v->real);
        break;
    case SQLITE_TEXT:
        rc = sqlite3_bind_text(stmt, index, v->bytes, v->size, SQLITE_STATIC);
        break;
    case SQLITE_BLOB:
        rc = v->size == 0 ? sqlite3_bind_zeroblob(stmt, index, 0)
                          : sqlite3_bind_blob(stmt, index, v->bytes, v->size,
                                              SQLITE_STATIC);
        break;
    default:
        rc = sqlite3_bind_null(stmt, index);
        break;
    }
    assert_int_equal(rc, SQLITE_OK);
}

/* t_any: rowids with gaps and below zero; a holds value i, b value i+5. */
static void fill_awkward(sqlite3 *db)
{
    sqlite3_stmt *stmt;
    exec_sqlite(db, "CREATE TABLE t_any(a, b)");
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO t_any(rowid, a, b) "
                                        "VALUES(?1, ?2, ?3)",
                                        -1, &stmt, NULL),
                     SQLITE_OK);
    for (int i = 0; i < AWKWARD_COUNT; i++) {
        assert_int_equal(sqlite3_bind_int64(stmt, 1, i * 3 - 7), SQLITE_OK);
        bind_test_value(stmt, 2, &awkward[i]);
        bind_test_value(stmt, 3, &awkward[(i + 5) % AWKWARD_COUNT]);
        assert_int_equal(sqlite3_step(stmt), SQLITE_DONE);
        assert_int_equal(sqlite3_reset(stmt), SQLITE_OK);
    }
    sqlite3_finalize(stmt);
}

static const char *const source_schema =
    "CREATE TABLE t_ipk(id INTEGER PRIMARY KEY, name TEXT, score REAL);"
    "INSERT INTO t_ipk VALUES(-5, 'minus', 1.5), (1, 'one', 2), (2, 'two',"
    " NULL), (3, 'three', 3.25), (10, 'ten', -0.5), (1000, NULL, 1e-300),"
    " (9223372036854775807, 'max', 7);"
    "DELETE FROM t_ipk WHERE id = 2;"
    "CREATE TABLE t_pk(a TEXT, b INTEGER, c, PRIMARY KEY(a, b));"
    "INSERT INTO t_pk VALUES('x', 1, 'c1'), ('x', 2, NULL), ('y', 1, x'01'),"
    " ('', -9, 4.5);"
    "CREATE TABLE t_named(\"rowid\" TEXT, x);"
    "INSERT INTO t_named(_rowid_, \"rowid\", x) VALUES(7, 'r7', 1), (3, "
    "'r3', 2);"
    "CREATE TABLE \"odd \"\"name\"\" t\"(\"col \"\"q\"\"\" INT);"
    "INSERT INTO \"odd \"\"name\"\" t\" VALUES(1), (2);"
    "CREATE TABLE t_many(n INTEGER, s TEXT);"
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n "
    "< 25001) INSERT INTO t_many SELECT n, printf('row %d', n) FROM c;"
    "CREATE TABLE t_auto(id INTEGER PRIMARY KEY AUTOINCREMENT, v);"
    "INSERT INTO t_auto(v) VALUES('a'), ('b');"
    "CREATE UNIQUE INDEX t_ipk_name ON t_ipk(name);"
    "CREATE INDEX t_pk_c ON t_pk(c);"
    "CREATE INDEX t_any_ab ON t_any(a, b DESC);"
    "CREATE VIEW v_ipk AS SELECT id FROM t_ipk;"
    "CREATE TRIGGER tr_ipk AFTER INSERT ON t_ipk BEGIN SELECT 1; END;"
    /* One the engine refuses (a schema qualifier): the copy names it and
     * goes on. */
    "CREATE TRIGGER tr_odd AFTER DELETE ON t_ipk BEGIN "
    "SELECT * FROM main.t_pk; END;"
    "PRAGMA user_version = 42;"
    "ANALYZE;";

static void make_source(const char *path)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    fill_awkward(db);
    exec_sqlite(db, source_schema);
    sqlite3_close(db);
}

/* Each table's rows, by a rowid name its columns do not hide. */
static const char *const table_queries[] = {
    "SELECT rowid, * FROM t_any ORDER BY rowid",
    "SELECT rowid, * FROM t_ipk ORDER BY rowid",
    "SELECT rowid, * FROM t_pk ORDER BY rowid",
    "SELECT _rowid_, * FROM t_named ORDER BY _rowid_",
    "SELECT rowid, * FROM \"odd \"\"name\"\" t\" ORDER BY rowid",
    "SELECT rowid, * FROM t_many ORDER BY rowid",
    "SELECT rowid, * FROM t_auto ORDER BY rowid",
    "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT "
    "LIKE 'sqlite%' AND name <> 'tr_odd' ORDER BY name",
    "PRAGMA user_version",
    "SELECT id FROM v_ipk ORDER BY id",
};
#define TABLE_QUERY_COUNT (sizeof(table_queries) / sizeof(table_queries[0]))

/* ------------------------------------------------------------------------
 * Comparing rows
 * ------------------------------------------------------------------------ */

static void sqlite_value(sqlite3_stmt *stmt, int column, struct test_value *v)
{
    memset(v, 0, sizeof(*v));
    v->type = sqlite3_column_type(stmt, column);
    v->integer = sqlite3_column_int64(stmt, column);
    v->real = sqlite3_column_double(stmt, column);
    v->bytes = v->type == SQLITE_TEXT
                   ? (const void *)sqlite3_column_text(stmt, column)
                   : sqlite3_column_blob(stmt, column);
    v->size = sqlite3_column_bytes(stmt, column);
}

static void engine_value(struct engine_stmt *stmt, int column,
                         struct test_value *v)
{
    memset(v, 0, sizeof(*v));
    v->type = engine_column_type(stmt, column);
    v->integer = engine_column_int64(stmt, column);
    v->real = engine_column_double(stmt, column);
    v->bytes = v->type == ENGINE_TEXT
                   ? (const void *)engine_column_text(stmt, column)
                   : engine_column_blob(stmt, column);
    v->size = engine_column_bytes(stmt, column);
}

static void assert_same_value(const struct test_value *want,
                              const struct test_value *got, const char *sql,
                              int row, int column)
{
    if (want->type != got->type) {
        fail_msg("%s: row %d column %d: type %d, want %d", sql, row, column,
                 got->type, want->type);
    }
    bool same = true;
    if (want->type == SQLITE_INTEGER) {
        same = want->integer == got->integer;
    } else if (want->type == SQLITE_FLOAT) {
        same = memcmp(&want->real, &got->real, sizeof(double)) == 0;
    } else if (want->type == SQLITE_TEXT || want->type == SQLITE_BLOB) {
        same = want->size == got->size &&
               (want->size == 0 ||
                memcmp(want->bytes, got->bytes, (size_t)want->size) == 0);
    }
    if (!same) {
        fail_msg("%s: row %d column %d differs (type %d)", sql, row, column,
                 want->type);
    }
}

/* Runs sql on both SQLite databases; same rows, values and types. */
static int compare_sqlite(sqlite3 *want_db, sqlite3 *got_db, const char *sql)
{
    sqlite3_stmt *want;
    sqlite3_stmt *got;
    assert_int_equal(sqlite3_prepare_v2(want_db, sql, -1, &want, NULL), 0);
    assert_int_equal(sqlite3_prepare_v2(got_db, sql, -1, &got, NULL), 0);
    assert_int_equal(sqlite3_column_count(want), sqlite3_column_count(got));
    int rows = 0;
    int rc;
    while ((rc = sqlite3_step(want)) == SQLITE_ROW) {
        assert_int_equal(sqlite3_step(got), SQLITE_ROW);
        for (int i = 0; i < sqlite3_column_count(want); i++) {
            struct test_value a;
            struct test_value b;
            sqlite_value(want, i, &a);
            sqlite_value(got, i, &b);
            assert_same_value(&a, &b, sql, rows, i);
        }
        rows++;
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_int_equal(sqlite3_step(got), SQLITE_DONE);
    sqlite3_finalize(want);
    sqlite3_finalize(got);
    return rows;
}

/* The same with the engine's answer in place of the second database. */
static int compare_engine(sqlite3 *want_db, struct engine_db *got_db,
                          const char *sql)
{
    sqlite3_stmt *want;
    struct engine_stmt *got;
    assert_int_equal(sqlite3_prepare_v2(want_db, sql, -1, &want, NULL), 0);
    assert_int_equal(engine_prepare(got_db, sql, -1, &got, NULL), 0);
    assert_int_equal(sqlite3_column_count(want), engine_column_count(got));
    int rows = 0;
    int rc;
    while ((rc = sqlite3_step(want)) == SQLITE_ROW) {
        assert_int_equal(engine_step(got), ENGINE_ROW);
        for (int i = 0; i < sqlite3_column_count(want); i++) {
            struct test_value a;
            struct test_value b;
            sqlite_value(want, i, &a);
            engine_value(got, i, &b);
            assert_same_value(&a, &b, sql, rows, i);
        }
        rows++;
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_int_equal(engine_step(got), ENGINE_DONE);
    sqlite3_finalize(want);
    engine_finalize(got);
    return rows;
}

/* Rows each query of table_queries must return. */
static const int expected_rows[TABLE_QUERY_COUNT] = {
    AWKWARD_COUNT, 6, 4, 2, 2, TEST_MANY_ROWS, 2, 12, 1, 6};

/* ------------------------------------------------------------------------
 * Round trip
 * ------------------------------------------------------------------------ */

static void round_trip_keeps_every_value_and_type(void **state)
{
    const struct test_dir *dir = *state;
    char source[TEST_PATH_SIZE], imported[TEST_PATH_SIZE],
        exported[TEST_PATH_SIZE];
    dir_file(dir, "source.db", source);
    dir_file(dir, "app.sinew", imported);
    dir_file(dir, "back.db", exported);
    make_source(source);

    char *warnings = NULL;
    size_t warnings_size = 0;
    FILE *stream = open_memstream(&warnings, &warnings_size);
    struct transfer_options options = {.warnings = stream};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];
    int rc = transfer_import(source, imported, &options, &summary, error,
                             sizeof(error));
    fclose(stream);
    if (rc != 0) {
        fail_msg("import: %s", error);
    }
    assert_int_equal(summary.tables, 7);
    assert_int_equal(summary.indexes, 3);
    assert_int_equal(summary.views, 1);
    assert_int_equal(summary.triggers, 1);
    assert_int_equal(summary.views_skipped, 0);
    assert_int_equal(summary.triggers_skipped, 1);
    assert_int_equal(summary.rows,
                     AWKWARD_COUNT + 6 + 4 + 2 + 2 + TEST_MANY_ROWS + 2);
    assert_non_null(strstr(warnings, "skipped trigger tr_odd: "));
    free(warnings);

    rc = transfer_export(imported, exported, &options, &summary, error,
                         sizeof(error));
    if (rc != 0) {
        fail_msg("export: %s", error);
    }
    assert_int_equal(summary.tables, 7);
    assert_int_equal(summary.indexes, 3);
    assert_int_equal(summary.views, 1);
    assert_int_equal(summary.triggers, 1);

    sqlite3 *want;
    sqlite3 *back;
    struct engine_db *engine;
    assert_int_equal(sqlite3_open_v2(source, &want, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(
        sqlite3_open_v2(exported, &back, SQLITE_OPEN_READONLY, NULL),
        SQLITE_OK);
    assert_int_equal(engine_open(imported, &engine), 0);
    for (size_t i = 0; i < TABLE_QUERY_COUNT; i++) {
        assert_int_equal(compare_engine(want, engine, table_queries[i]),
                         expected_rows[i]);
        assert_int_equal(compare_sqlite(want, back, table_queries[i]),
                         expected_rows[i]);
    }
    engine_close(engine);
    sqlite3_close(want);
    sqlite3_close(back);
}

/* ------------------------------------------------------------------------
 * Failures leave nothing behind
 * ------------------------------------------------------------------------ */

static void write_file(const char *path, const char *text, size_t repeat)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    for (size_t i = 0; i < repeat; i++) {
        fputs(text, file);
    }
    fclose(file);
}

static void assert_failed_with(int rc, const char *error, const char *text)
{
    assert_true(rc < 0);
    if (strstr(error, text) == NULL) {
        fail_msg("error \"%s\" lacks \"%s\"", error, text);
    }
}

static void assert_no_target(const char *path)
{
    assert_false(exists(path));
    assert_false(exists_with_suffix(path, "-wal"));
    assert_false(exists_with_suffix(path, "-journal"));
}

static void existing_target_is_refused_and_kept(void **state)
{
    const struct test_dir *dir = *state;
    char source[TEST_PATH_SIZE], target[TEST_PATH_SIZE];
    dir_file(dir, "source.db", source);
    dir_file(dir, "taken.sinew", target);
    make_source(source);
    write_file(target, "keep me", 1);
    struct transfer_options options = {0};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];

    int rc = transfer_import(source, target, &options, &summary, error,
                             sizeof(error));
    assert_failed_with(rc, error, "already exists");
    FILE *file = fopen(target, "r");
    char text[16] = {0};
    assert_non_null(fgets(text, sizeof(text), file));
    fclose(file);
    assert_string_equal(text, "keep me");
    assert_false(exists_with_suffix(target, "-wal"));

    /* Export refuses an existing SQLite file the same way. */
    rc = transfer_export(target, source, &options, &summary, error,
                         sizeof(error));
    assert_failed_with(rc, error, "already exists");
}

static void bad_sources_fail_cleanly(void **state)
{
    const struct test_dir *dir = *state;
    char junk[TEST_PATH_SIZE], missing[TEST_PATH_SIZE], target[TEST_PATH_SIZE];
    dir_file(dir, "junk.db", junk);
    dir_file(dir, "missing.db", missing);
    dir_file(dir, "out.sinew", target);
    write_file(junk, "this is not a database, only text.\n", 200);
    struct transfer_options options = {0};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];

    int rc =
        transfer_import(junk, target, &options, &summary, error, sizeof(error));
    assert_failed_with(rc, error, "file is not a database");
    assert_no_target(target);
    rc = transfer_import(missing, target, &options, &summary, error,
                         sizeof(error));
    assert_failed_with(rc, error, "No such file");
    assert_no_target(target);
    /* Export must not create the missing sinew source either. */
    rc = transfer_export(missing, target, &options, &summary, error,
                         sizeof(error));
    assert_failed_with(rc, error, "No such file");
    assert_false(exists(missing));
    assert_no_target(target);
    rc =
        transfer_export(junk, target, &options, &summary, error, sizeof(error));
    assert_failed_with(rc, error, "file is not a database");
    assert_no_target(target);
}

static void refused_schema_fails_and_removes_target(void **state)
{
    const struct test_dir *dir = *state;
    char source[TEST_PATH_SIZE], target[TEST_PATH_SIZE];
    dir_file(dir, "source.db", source);
    dir_file(dir, "out.sinew", target);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(source, &db), SQLITE_OK);
    exec_sqlite(db, "CREATE TABLE good(a); INSERT INTO good VALUES(1), (2);"
                    "CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID;"
                    "INSERT INTO w VALUES(1, 2);");
    sqlite3_close(db);
    struct transfer_options options = {0};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];

    int rc = transfer_import(source, target, &options, &summary, error,
                             sizeof(error));
    assert_failed_with(rc, error, "table w: ");
    assert_failed_with(rc, error, "WITHOUT ROWID");
    assert_no_target(target);
}

static void stop_request_fails_and_removes_target(void **state)
{
    const struct test_dir *dir = *state;
    char source[TEST_PATH_SIZE], target[TEST_PATH_SIZE];
    dir_file(dir, "source.db", source);
    dir_file(dir, "out.sinew", target);
    make_source(source);
    volatile sig_atomic_t stop = 1;
    struct transfer_options options = {.stop = &stop};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];

    int rc = transfer_import(source, target, &options, &summary, error,
                             sizeof(error));
    assert_failed_with(rc, error, "interrupted");
    assert_no_target(target);
}

/* ------------------------------------------------------------------------
 * Progress bar
 * ------------------------------------------------------------------------ */

static void progress_line_reads_as_documented(void **state)
{
    (void)state;
    char line[TRANSFER_PROGRESS_LINE_SIZE];
    transfer_progress_format(line, sizeof(line), "importing", "t1", 120000,
                             230000);
    assert_string_equal(line, "importing t1  [##########..........]   52%  "
                              "120000/230000 rows");
    transfer_progress_format(line, sizeof(line), "exporting", "empty", 0, 0);
    assert_string_equal(line, "exporting empty  [####################]  100%"
                              "  0/0 rows");
    transfer_progress_format(line, sizeof(line), "importing",
                             "a_table_name_far_longer_than_the_bar_allows", 1,
                             3);
    assert_string_equal(line, "importing a_table_name_far_long...  "
                              "[######..............]   33%  1/3 rows");
}

static void progress_stream_gets_final_lines(void **state)
{
    const struct test_dir *dir = *state;
    char source[TEST_PATH_SIZE], target[TEST_PATH_SIZE];
    dir_file(dir, "source.db", source);
    dir_file(dir, "out.sinew", target);
    make_source(source);
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    struct transfer_options options = {.progress = stream};
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];

    int rc = transfer_import(source, target, &options, &summary, error,
                             sizeof(error));
    fclose(stream);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "\rimporting t_many  [####################]"
                                 "  100%  25001/25001 rows\033[K\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip_keeps_every_value_and_type,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(existing_target_is_refused_and_kept,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(bad_sources_fail_cleanly, dir_setup,
                                        dir_teardown),
        cmocka_unit_test_setup_teardown(refused_schema_fails_and_removes_target,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(stop_request_fails_and_removes_target,
                                        dir_setup, dir_teardown),
        cmocka_unit_test(progress_line_reads_as_documented),
        cmocka_unit_test_setup_teardown(progress_stream_gets_final_lines,
                                        dir_setup, dir_teardown),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
