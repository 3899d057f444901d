/* SPDX-License-Identifier: MIT
 *
 * Goal: a database on a file keeps exactly what was committed: after close
 * and reopen it equals an in-memory database that ran the same statements
 * (values and storage classes, schema, rolled-back work absent); a torn
 * WAL tail is cut at the last whole commit; damaged files are refused with
 * a clear code and never crash; another process is locked out; a failed
 * write or fsync fails the commit and loses nothing committed; opening
 * survives every allocation failure.
 * Method: scripted and seeded random workloads run side by side on a file
 * database and an in-memory one, compared by a full dump; byte surgery on
 * the files; fault hooks on pwrite/fsync; cmocka's heap for leaks.
 */
#include "storage_test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>

static void exec_both(struct engine_db *file, struct engine_db *memory,
                      const char *sql)
{
    int rc_file = engine_exec(file, sql, NULL, NULL);
    int rc_memory = engine_exec(memory, sql, NULL, NULL);

    if (rc_file != rc_memory) {
        fail_msg("%s: file %d (%s), memory %d (%s)", sql, rc_file,
                 engine_errmsg(file), rc_memory, engine_errmsg(memory));
    }
}

static const char *const schema_script =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB, e);"
    "CREATE TABLE u(k TEXT UNIQUE, v, PRIMARY KEY(v, k));"
    "CREATE INDEX tb ON t(b);"
    "CREATE UNIQUE INDEX tc ON t(c);";

static const char *const rows_script =
    "INSERT INTO t VALUES(1, 'one', 1.5, x'00ff', NULL);"
    "INSERT INTO t VALUES(-5, '', -0.0, x'', 'text');"
    "INSERT INTO t(b, e) VALUES('auto', x'0102');"
    "INSERT INTO t VALUES(9223372036854775807, 'max', 1e300, NULL, 2.0);"
    "INSERT INTO u VALUES('k1', 1), ('k2', 'two'), ('k3', NULL);"
    "BEGIN; UPDATE t SET e = 42 WHERE a = 1; DELETE FROM t WHERE a = -5;"
    "INSERT INTO t VALUES(7, 'seven', 7, NULL, NULL); COMMIT;"
    "BEGIN; INSERT INTO t VALUES(8, 'gone', 8, NULL, NULL); ROLLBACK;"
    "UPDATE t SET a = 100 WHERE a = 7;"
    "CREATE TABLE dropped(x); INSERT INTO dropped VALUES(1); DROP TABLE "
    "dropped;"
    "BEGIN; CREATE TABLE temp1(x); INSERT INTO temp1 VALUES(1); ROLLBACK;"
    "BEGIN; DROP INDEX tb; ROLLBACK;"
    "BEGIN; DROP INDEX tc; COMMIT; CREATE UNIQUE INDEX tc2 ON t(c);";

static void storage_reopen_finds_data(void **state)
{
    struct scratch_dir dir;
    struct engine_db *file, *memory = storage_open(NULL);

    (void)state;
    scratch_dir_make(&dir);
    file = storage_open(dir.db);
    exec_both(file, memory, schema_script);
    exec_both(file, memory, rows_script);
    /* A failing statement inside a transaction undoes only itself. */
    exec_both(file, memory, "BEGIN");
    exec_both(file, memory, "INSERT INTO t VALUES(200, 'x', 200, NULL, 1)");
    exec_both(file, memory, "INSERT INTO t VALUES(201, 'y', 1.5, NULL, 1)");
    exec_both(file, memory, "COMMIT");
    assert_same_db(file, memory);
    engine_close(file);
    file = storage_open(dir.db);
    assert_same_db(file, memory);
    /* The indexes came back: the UNIQUE one still refuses duplicates. */
    assert_int_equal(
        engine_exec(file, "INSERT INTO t(c) VALUES(1.5)", NULL, NULL),
        ENGINE_ECONSTRAINT);
    engine_close(file);
    engine_close(memory);
    scratch_dir_remove(&dir);
}

/* Both handles answer sql with the same rows, in order. */
static void assert_same_query(struct engine_db *file, struct engine_db *memory,
                              const char *sql)
{
    struct common_buf left, right;

    common_buf_init(&left, SIZE_MAX);
    common_buf_init(&right, SIZE_MAX);
    dump_query(file, sql, &left);
    dump_query(memory, sql, &right);
    if (left.size != right.size ||
        (left.size > 0 && memcmp(left.data, right.data, left.size) != 0)) {
        fail_msg("%s: the file database answers differently", sql);
    }
    common_buf_close(&left);
    common_buf_close(&right);
}

/* Lookups through every key and index of the indexed-table schema. */
static void lookups_agree(struct engine_db *file, struct engine_db *memory)
{
    static const char *const lookups[] = {
        "SELECT rowid, * FROM p WHERE name = 'n17'",
        "SELECT rowid, * FROM p WHERE name = 'n4' ORDER BY rowid",
        "SELECT rowid, * FROM p WHERE code = 33",
        "SELECT rowid, * FROM p WHERE grp = 3 ORDER BY rowid",
        "SELECT rowid, * FROM p WHERE grp = 5 AND tag = 't2' ORDER BY rowid",
        "SELECT rowid, * FROM p WHERE tag = 'T1' ORDER BY rowid",
        "SELECT count(*) FROM p WHERE grp = 0",
        "SELECT rowid FROM p WHERE code IS NULL ORDER BY rowid",
    };

    for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
        assert_same_query(file, memory, lookups[i]);
    }
}

/* The main file keeps every key's and index's hash (formats.md, "Index
 * section"): after a checkpoint and reopen, lookups through each one give
 * what they gave before, the keys still refuse duplicates, and the adopted
 * structures take later changes. Rows come out of rowid order, indexes
 * move in memory (DROP INDEX undone), so slots are renumbered on writing. */
static void storage_indexes_survive_checkpoints(void **state)
{
    struct scratch_dir dir;
    struct engine_db *file, *memory = storage_open(NULL);
    char sql[256];

    (void)state;
    scratch_dir_make(&dir);
    file = storage_open(dir.db);
    exec_both(file, memory,
              "CREATE TABLE p(name TEXT PRIMARY KEY, code INTEGER UNIQUE,"
              " grp, tag TEXT COLLATE NOCASE);"
              "CREATE INDEX p_grp ON p(grp);"
              "CREATE INDEX p_grp_tag ON p(grp, tag);"
              "CREATE UNIQUE INDEX p_tag_code ON p(tag, code);"
              "CREATE INDEX p_tag ON p(tag)");
    for (int i = 0; i < 300; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO p(rowid, name, code, grp, tag) "
                 "VALUES(%d, 'n%d', %s, %d, '%s%d')",
                 (i * 37) % 1000 + 1, i, i % 10 == 0 ? "NULL" : "?", i % 7,
                 i % 2 ? "t" : "T", i % 3);
        if (i % 10 != 0) {
            char *mark = strchr(sql, '?');

            snprintf(mark, sizeof(sql) - (size_t)(mark - sql),
                     "%d, %d, '%s%d')", i * 3, i % 7, i % 2 ? "t" : "T", i % 3);
        }
        exec_both(file, memory, sql);
    }
    exec_both(file, memory,
              "DELETE FROM p WHERE rowid % 5 = 0;"
              "UPDATE p SET grp = grp + 10 WHERE code % 4 = 1;"
              "UPDATE p SET name = name || 'x' WHERE rowid % 9 = 0;"
              "BEGIN; DROP INDEX p_grp; DROP INDEX p_tag_code; ROLLBACK");
    for (int round = 0; round < 3; round++) {
        lookups_agree(file, memory);
        exec_both(file, memory, "VACUUM");
        engine_close(file);
        file = storage_open(dir.db);
        assert_same_db(file, memory);
        assert_integrity_ok(file);
        lookups_agree(file, memory);
        /* The keys still hold: the first row's name and code again. */
        assert_int_equal(engine_exec(file,
                                     "INSERT INTO p(name) SELECT name FROM p "
                                     "ORDER BY rowid LIMIT 1",
                                     NULL, NULL),
                         ENGINE_ECONSTRAINT);
        assert_int_equal(engine_exec(file,
                                     "INSERT INTO p(name, code) SELECT 'new', "
                                     "code FROM p WHERE code IS NOT NULL "
                                     "ORDER BY rowid LIMIT 1",
                                     NULL, NULL),
                         ENGINE_ECONSTRAINT);
        /* And take changes: removals through the adopted chains too. */
        snprintf(sql, sizeof(sql),
                 "DELETE FROM p WHERE grp = %d;"
                 "UPDATE p SET tag = 'moved', grp = 3 WHERE rowid %% 4 = %d;"
                 "INSERT INTO p VALUES('r%d', %d, 3, 't1')",
                 round, round, round, 5000 + round);
        exec_both(file, memory, sql);
        assert_integrity_ok(file);
    }
    lookups_agree(file, memory);
    engine_close(file);
    engine_close(memory);
    scratch_dir_remove(&dir);
}

/* Rows enough for several segments, with dictionary-friendly text. */
static void insert_many(struct engine_db *db, int count)
{
    struct engine_stmt *stmt = NULL;

    storage_exec(db, "BEGIN");
    assert_int_equal(engine_prepare(db, "INSERT INTO big VALUES(?, ?, ?, ?)",
                                    -1, &stmt, NULL),
                     0);
    for (int i = 0; i < count; i++) {
        char text[32];

        snprintf(text, sizeof(text), "status-%d", i % 7);
        engine_bind_int64(stmt, 1, i * 3);
        engine_bind_text(stmt, 2, text, -1);
        if (i % 5 == 0) {
            engine_bind_null(stmt, 3);
        } else {
            engine_bind_double(stmt, 3, i / 4.0);
        }
        if (i % 3 == 0) {
            engine_bind_text(stmt, 4, "mixed", -1);
        } else {
            engine_bind_int64(stmt, 4, -i);
        }
        assert_int_equal(engine_step(stmt), ENGINE_DONE);
        engine_reset(stmt);
    }
    engine_finalize(stmt);
    storage_exec(db, "COMMIT");
}

static void storage_many_rows_survive_reopen(void **state)
{
    struct scratch_dir dir;
    struct engine_db *file, *memory = storage_open(NULL);

    (void)state;
    scratch_dir_make(&dir);
    file = storage_open(dir.db);
    exec_both(file, memory, "CREATE TABLE big(n INTEGER, s TEXT, r, m)");
    insert_many(file, 70000);
    insert_many(memory, 70000);
    exec_both(file, memory, "DELETE FROM big WHERE n % 11 = 0");
    exec_both(file, memory, "UPDATE big SET r = s WHERE n % 13 = 0");
    engine_close(file);
    file = storage_open(dir.db);
    assert_same_db(file, memory);
    assert_integrity_ok(file);
    assert_integrity_ok(memory);
    engine_close(file);
    engine_close(memory);
    scratch_dir_remove(&dir);
}

/* ---- a seeded random workload, compared after each reopen ---- */

static void random_value(struct common_test_rng *rng, char *out, size_t size)
{
    switch (common_test_rng_below(rng, 6)) {
    case 0:
        snprintf(out, size, "NULL");
        break;
    case 1:
        snprintf(out, size, "%lld",
                 (long long)common_test_rng_below(rng, 50) - 10);
        break;
    case 2:
        snprintf(out, size, "%.3f",
                 (double)common_test_rng_below(rng, 1000) / 7.0);
        break;
    case 3:
        snprintf(out, size, "'v%llu'",
                 (unsigned long long)common_test_rng_below(rng, 30));
        break;
    case 4:
        snprintf(out, size, "x'%02x%02x'",
                 (unsigned)common_test_rng_below(rng, 256),
                 (unsigned)common_test_rng_below(rng, 256));
        break;
    default:
        snprintf(out, size, "%lld", (long long)common_test_rng_next(rng));
        break;
    }
}

static void random_statement(struct common_test_rng *rng, char *sql,
                             size_t size)
{
    static const char *const fixed[] = {
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "CREATE INDEX IF NOT EXISTS ry ON r(y)",
        "DROP INDEX IF EXISTS ry",
        "CREATE TABLE IF NOT EXISTS s(p UNIQUE, q)",
        "DROP TABLE IF EXISTS s",
    };
    char a[64], b[64];

    random_value(rng, a, sizeof(a));
    random_value(rng, b, sizeof(b));
    switch (common_test_rng_below(rng, 10)) {
    case 0:
    case 1:
        snprintf(sql, size, "INSERT INTO r(x, y, z) VALUES(%s, %s, %s)", a, b,
                 a);
        break;
    case 2:
        snprintf(sql, size, "INSERT OR REPLACE INTO r VALUES(%llu, %s, %s, 1)",
                 (unsigned long long)common_test_rng_below(rng, 40), a, b);
        break;
    case 3:
        snprintf(sql, size, "UPDATE r SET y = %s WHERE rowid %% 5 = %llu", a,
                 (unsigned long long)common_test_rng_below(rng, 5));
        break;
    case 4:
        snprintf(sql, size, "DELETE FROM r WHERE rowid %% 7 = %llu",
                 (unsigned long long)common_test_rng_below(rng, 7));
        break;
    case 5:
        snprintf(sql, size, "INSERT INTO s VALUES(%s, %s)", a, b);
        break;
    case 6:
        snprintf(sql, size, "UPDATE r SET id = id + 100 WHERE id %% 3 = 0");
        break;
    default:
        snprintf(sql, size, "%s",
                 fixed[common_test_rng_below(rng, sizeof(fixed) /
                                                      sizeof(fixed[0]))]);
        break;
    }
}

static void storage_random_workload_matches_memory(void **state)
{
    struct scratch_dir dir;
    struct common_test_rng rng;
    struct engine_db *file, *memory = storage_open(NULL);
    char sql[256];

    (void)state;
    common_test_rng_seed(&rng, "storage_random_workload_matches_memory");
    scratch_dir_make(&dir);
    file = storage_open(dir.db);
    exec_both(file, memory,
              "CREATE TABLE r(id INTEGER PRIMARY KEY, x, y TEXT, z REAL "
              "UNIQUE)");
    for (int i = 0; i < 1500; i++) {
        random_statement(&rng, sql, sizeof(sql));
        exec_both(file, memory, sql);
        if (common_test_rng_below(&rng, 60) == 0) {
            /* Reopening drops an open transaction, as closing does. */
            if (engine_in_transaction(memory)) {
                exec_both(file, memory, "ROLLBACK");
            }
            engine_close(file);
            file = storage_open(dir.db);
            assert_same_db(file, memory);
            assert_integrity_ok(file);
        }
    }
    exec_both(file, memory, engine_in_transaction(memory) ? "COMMIT" : "");
    engine_close(file);
    file = storage_open(dir.db);
    assert_same_db(file, memory);
    assert_integrity_ok(file);
    assert_integrity_ok(memory);
    engine_close(file);
    engine_close(memory);
    scratch_dir_remove(&dir);
}

/* ---- the WAL's tail and damaged files ---- */

static off_t file_size(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void flip_byte(const char *path, off_t offset)
{
    int fd = open(path, O_RDWR);
    uint8_t byte;

    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &byte, 1, offset), 1);
    byte ^= 0x5a;
    assert_int_equal(pwrite(fd, &byte, 1, offset), 1);
    close(fd);
}

static int64_t count_rows(struct engine_db *db, const char *table)
{
    struct engine_stmt *stmt = NULL;
    char sql[128];
    int64_t count;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    count = engine_column_int64(stmt, 0);
    engine_finalize(stmt);
    return count;
}

static void storage_torn_tail_is_cut(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db;
    off_t before_last, full;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    before_last = file_size(dir.wal);
    storage_exec(db, "INSERT INTO t VALUES(2), (3)");
    full = file_size(dir.wal);
    engine_close(db);
    /* Every cut inside the last record loses exactly that commit. */
    for (off_t cut = full - 1; cut > before_last; cut -= 7) {
        assert_int_equal(truncate(dir.wal, cut), 0);
        db = storage_open(dir.db);
        assert_int_equal(count_rows(db, "t"), 1);
        storage_exec(db, "INSERT INTO t VALUES(2), (3)");
        engine_close(db);
        assert_int_equal(file_size(dir.wal), full);
    }
    /* Garbage after the last record is a torn append too. */
    {
        int fd = open(dir.wal, O_WRONLY | O_APPEND);
        static const char junk[100] = "SNWRjunk";

        assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
        close(fd);
    }
    db = storage_open(dir.db);
    assert_int_equal(count_rows(db, "t"), 3);
    engine_close(db);
    assert_int_equal(file_size(dir.wal), full);
    scratch_dir_remove(&dir);
}

static void storage_damage_is_refused(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db = NULL;
    off_t first_record;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    first_record = file_size(dir.wal);
    storage_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    engine_close(db);
    /* A damaged record with a whole record after it is not a torn tail. */
    flip_byte(dir.wal, first_record + 40);
    assert_int_equal(engine_open(dir.db, &db), ENGINE_ECORRUPT);
    assert_null(db);
    flip_byte(dir.wal, first_record + 40);
    /* The main file: its body, then its magic. */
    flip_byte(dir.db, 64);
    assert_int_equal(engine_open(dir.db, &db), ENGINE_ECORRUPT);
    flip_byte(dir.db, 64);
    flip_byte(dir.db, 0);
    assert_int_equal(engine_open(dir.db, &db), ENGINE_ENOTADB);
    flip_byte(dir.db, 0);
    db = storage_open(dir.db);
    assert_int_equal(count_rows(db, "t"), 1);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* A deleted main file beside its WAL is not a new database: the open
 * fails and the WAL, which may hold the only copy of commits, stays. */
static void storage_missing_main_file_is_refused(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db, *other = NULL;
    off_t wal_size;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
    engine_close(db);
    wal_size = file_size(dir.wal);
    assert_int_equal(unlink(dir.db), 0);
    assert_int_equal(engine_open(dir.db, &other), ENGINE_ECORRUPT);
    assert_null(other);
    assert_int_equal(file_size(dir.wal), wal_size);
    scratch_dir_remove(&dir);
}

/* The open code another process gets for path. */
static int open_in_child(const char *path)
{
    int status = 0;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        struct engine_db *db = NULL;
        int rc = engine_open(path, &db);

        engine_close(db);
        _exit(rc == ENGINE_EBUSY ? 1 : rc == 0 ? 0 : 2);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status) == 1   ? ENGINE_EBUSY
           : WEXITSTATUS(status) == 0 ? 0
                                      : ENGINE_ECANTOPEN;
}

static void storage_other_process_is_locked_out(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db, *other = NULL;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    assert_int_equal(open_in_child(dir.db), ENGINE_EBUSY);
    /* A second handle of this process shares the files. */
    other = storage_open(dir.db);
    engine_close(db);
    assert_int_equal(open_in_child(dir.db), ENGINE_EBUSY);
    engine_close(other);
    assert_int_equal(open_in_child(dir.db), 0);
    other = storage_open(dir.db);
    engine_close(other);
    assert_int_equal(engine_open("/nonexistent-dir/x.sinew", &other),
                     ENGINE_ECANTOPEN);
    scratch_dir_remove(&dir);
}

/* ---- faults on write and fsync ---- */

struct faults {
    int write_countdown; /* fail the write when it reaches 0; < 0: never */
    int sync_countdown;
    int error;
};

static long faulty_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                          int64_t offset)
{
    struct faults *faults = ctx;

    if (faults->write_countdown >= 0 && faults->write_countdown-- == 0) {
        /* Half the bytes land, then the disk is full. */
        if (size > 1) {
            (void)pwrite(fd, bytes, size / 2, (off_t)offset);
        }
        errno = faults->error;
        return -1;
    }
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int faulty_fsync(void *ctx, int fd)
{
    struct faults *faults = ctx;

    if (faults->sync_countdown >= 0 && faults->sync_countdown-- == 0) {
        errno = faults->error;
        return -1;
    }
    return fsync(fd);
}

static void storage_failed_write_loses_nothing(void **state)
{
    struct scratch_dir dir;
    struct faults faults = {.write_countdown = -1, .sync_countdown = -1};
    struct engine_io_hooks hooks = {faulty_pwrite, faulty_fsync, &faults};
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    engine_io_hooks_set(&hooks);
    faults.write_countdown = 1;
    faults.error = ENOSPC;
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES(2)", NULL, NULL),
                     ENGINE_EFULL);
    assert_string_equal(engine_errmsg(db), "database or disk is full");
    assert_int_equal(count_rows(db, "t"), 1);
    /* The disk has room again: the handle goes on writing. */
    storage_exec(db, "INSERT INTO t VALUES(3)");
    faults.sync_countdown = 0;
    faults.error = EIO;
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES(4)", NULL, NULL),
                     ENGINE_EIO);
    assert_int_equal(count_rows(db, "t"), 2);
    /* After a failed fsync the handle refuses writes, but still reads. */
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES(5)", NULL, NULL),
                     ENGINE_EIO);
    assert_int_equal(count_rows(db, "t"), 2);
    engine_io_hooks_set(NULL);
    engine_close(db);
    db = storage_open(dir.db);
    assert_int_equal(count_rows(db, "t"), 2);
    storage_exec(db, "INSERT INTO t VALUES(6)");
    engine_close(db);
    db = storage_open(dir.db);
    assert_int_equal(count_rows(db, "t"), 3);
    engine_close(db);
    scratch_dir_remove(&dir);
}

static void storage_open_survives_allocation_failures(void **state)
{
    struct scratch_dir dir;
    struct common_heap saved;
    struct engine_db *db;
    uint64_t fail_at;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, schema_script);
    storage_exec(db, rows_script);
    engine_close(db);
    common_heap_get(&saved);
    for (fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        int rc;

        db = NULL;
        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = engine_open(dir.db, &db);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            engine_close(db);
            break;
        }
        assert_true(rc < 0);
        assert_null(db);
    }
    assert_true(fail_at > 20);
    db = storage_open(dir.db);
    assert_int_equal(count_rows(db, "t"), 4);
    engine_close(db);
    scratch_dir_remove(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(storage_reopen_finds_data),
        cmocka_unit_test(storage_many_rows_survive_reopen),
        cmocka_unit_test(storage_indexes_survive_checkpoints),
        cmocka_unit_test(storage_random_workload_matches_memory),
        cmocka_unit_test(storage_torn_tail_is_cut),
        cmocka_unit_test(storage_damage_is_refused),
        cmocka_unit_test(storage_other_process_is_locked_out),
        cmocka_unit_test(storage_missing_main_file_is_refused),
        cmocka_unit_test(storage_failed_write_loses_nothing),
        cmocka_unit_test(storage_open_survives_allocation_failures),
    };

    common_test_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
