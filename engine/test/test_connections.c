/* SPDX-License-Identifier: MIT
 *
 * Goal: several handles of one process on one database file behave as
 * SQLite's connections in WAL mode do: a handle sees what others committed
 * when it starts a read; a read transaction (and a statement that is still
 * running) keeps its snapshot; one handle writes at a time (ENGINE_EBUSY,
 * or waiting up to the busy timeout); a write on a stale snapshot is
 * refused; a checkpoint by one handle is picked up by the others; handles
 * in several threads keep an invariant (a bank transfer workload) that
 * every reader checks, never waiting for the writers; under
 * synchronous=NORMAL concurrent committers share fsyncs (group commit) and
 * every acknowledged commit is there after reopening.
 * Method: scripted interleavings of two handles; pthreads for the workload;
 * the engine's I/O hooks count (and slow) fsyncs.
 */
#include "storage_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static int64_t query_int(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;
    int64_t value;

    if (engine_prepare(db, sql, -1, &stmt, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    value = engine_column_int64(stmt, 0);
    engine_finalize(stmt);
    return value;
}

static void connections_see_each_others_commits(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;
    struct engine_stmt *stmt = NULL;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    storage_exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2)");
    b = storage_open(dir.db);
    assert_int_equal(query_int(b, "SELECT sum(x) FROM t"), 3);
    /* A statement B prepared before A's DDL plans again; a table A made
     * later is found by B's next prepare. */
    assert_int_equal(
        engine_prepare(b, "SELECT count(*) FROM t", -1, &stmt, NULL), 0);
    storage_exec(a, "INSERT INTO t VALUES(3); CREATE TABLE u(y);"
                    "INSERT INTO u VALUES('a')");
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 3);
    engine_finalize(stmt);
    assert_int_equal(query_int(b, "SELECT count(*) FROM u"), 1);
    /* And the other way round. */
    storage_exec(b, "UPDATE t SET x = x * 10; DROP TABLE u");
    assert_int_equal(query_int(a, "SELECT sum(x) FROM t"), 60);
    assert_int_not_equal(engine_exec(a, "SELECT * FROM u", NULL, NULL), 0);
    assert_string_equal(engine_errmsg(a), "no such table: u");
    storage_exec(a, "PRAGMA user_version = 7");
    assert_int_equal(query_int(b, "PRAGMA user_version"), 7);
    engine_close(a);
    engine_close(b);
    scratch_dir_remove(&dir);
}

static void connections_snapshot_lasts_the_transaction(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;
    struct engine_stmt *scan = NULL;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    storage_exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2)");
    b = storage_open(dir.db);
    storage_exec(b, "BEGIN");
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 2);
    storage_exec(a, "INSERT INTO t VALUES(3)");
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 2);
    storage_exec(b, "COMMIT");
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 3);

    /* Outside a transaction, a statement still running holds it too. */
    assert_int_equal(engine_prepare(b, "SELECT x FROM t", -1, &scan, NULL), 0);
    assert_int_equal(engine_step(scan), ENGINE_ROW);
    storage_exec(a, "DELETE FROM t");
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 3);
    assert_int_equal(engine_step(scan), ENGINE_ROW);
    assert_int_equal(engine_step(scan), ENGINE_ROW);
    assert_int_equal(engine_step(scan), ENGINE_DONE);
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 0);
    engine_finalize(scan);
    engine_close(a);
    engine_close(b);
    scratch_dir_remove(&dir);
}

static void connections_one_writer_at_a_time(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    storage_exec(a, "CREATE TABLE t(x)");
    b = storage_open(dir.db);
    storage_exec(a, "BEGIN; INSERT INTO t VALUES(1)");
    assert_int_equal(engine_exec(b, "INSERT INTO t VALUES(2)", NULL, NULL),
                     ENGINE_EBUSY);
    assert_string_equal(engine_errmsg(b), "database is locked");
    /* Reading does not wait, and sees nothing uncommitted. */
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 0);
    storage_exec(a, "COMMIT");
    storage_exec(b, "INSERT INTO t VALUES(2)");
    assert_int_equal(query_int(a, "SELECT sum(x) FROM t"), 3);

    /* BEGIN IMMEDIATE takes the lock at once; ROLLBACK gives it back. */
    storage_exec(a, "BEGIN IMMEDIATE");
    assert_int_equal(engine_exec(b, "BEGIN EXCLUSIVE", NULL, NULL),
                     ENGINE_EBUSY);
    assert_false(engine_in_transaction(b));
    storage_exec(a, "ROLLBACK");
    storage_exec(b, "BEGIN EXCLUSIVE; DELETE FROM t WHERE x = 1; COMMIT");
    assert_int_equal(query_int(a, "SELECT sum(x) FROM t"), 2);

    /* A failed write statement releases the lock too. */
    storage_exec(a, "CREATE UNIQUE INDEX tx ON t(x)");
    assert_int_equal(engine_exec(b, "INSERT INTO t VALUES(2)", NULL, NULL),
                     ENGINE_ECONSTRAINT);
    storage_exec(a, "INSERT INTO t VALUES(5)");
    engine_close(a);
    engine_close(b);
    scratch_dir_remove(&dir);
}

static void connections_stale_snapshot_cannot_write(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    storage_exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
    b = storage_open(dir.db);
    storage_exec(b, "BEGIN");
    assert_int_equal(query_int(b, "SELECT sum(x) FROM t"), 1);
    storage_exec(a, "UPDATE t SET x = 2");
    /* B's UPDATE would compute from x = 1, which is gone. */
    assert_int_equal(engine_exec(b, "UPDATE t SET x = x + 1", NULL, NULL),
                     ENGINE_EBUSY);
    storage_exec(b, "ROLLBACK");
    storage_exec(b, "UPDATE t SET x = x + 1");
    assert_int_equal(query_int(a, "SELECT x FROM t"), 3);

    /* BEGIN without a statement yet holds no snapshot. */
    storage_exec(b, "BEGIN");
    storage_exec(a, "UPDATE t SET x = 10");
    storage_exec(b, "UPDATE t SET x = x + 1; COMMIT");
    assert_int_equal(query_int(a, "SELECT x FROM t"), 11);
    engine_close(a);
    engine_close(b);
    scratch_dir_remove(&dir);
}

static void connections_follow_a_checkpoint(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;
    struct engine_stmt *stmt = NULL;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    storage_exec(a, "CREATE TABLE t(x TEXT); INSERT INTO t VALUES('a')");
    b = storage_open(dir.db);
    storage_exec(b, "BEGIN");
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 1);
    storage_exec(a, "INSERT INTO t VALUES('b'); VACUUM");
    storage_exec(a, "INSERT INTO t VALUES('c')");
    /* B's snapshot is its own copy: the new files do not disturb it. */
    assert_int_equal(query_int(b, "SELECT count(*) FROM t"), 1);
    assert_int_equal(
        engine_prepare(b, "SELECT group_concat(x) FROM t", -1, &stmt, NULL), 0);
    storage_exec(b, "COMMIT");
    /* Then it loads them: the checkpoint and the commit after it. */
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_string_equal(engine_column_text(stmt, 0), "a,b,c");
    engine_finalize(stmt);
    /* VACUUM waits for no reader but refuses to run under a statement. */
    storage_exec(b, "INSERT INTO t VALUES('d'); VACUUM");
    assert_int_equal(query_int(a, "SELECT count(*) FROM t"), 4);
    engine_close(a);
    engine_close(b);
    a = storage_open(dir.db);
    assert_int_equal(query_int(a, "SELECT count(*) FROM t"), 4);
    engine_close(a);
    scratch_dir_remove(&dir);
}

static int count_commits(void *ctx, struct engine_db *db,
                         struct engine_commit *commit)
{
    (void)db;
    (void)commit;
    (*(int *)ctx)++;
    return 0;
}

/* A handle's commit hook sees its own commits only: what it applies from
 * other handles (and from a reload after a checkpoint) was captured where
 * it was made. */
static void connections_hook_sees_own_commits_only(void **state)
{
    struct scratch_dir dir;
    struct engine_db *a, *b;
    int commits = 0;

    (void)state;
    scratch_dir_make(&dir);
    a = storage_open(dir.db);
    b = storage_open(dir.db);
    assert_int_equal(engine_commit_hook_set(a, count_commits, &commits), 0);
    storage_exec(b, "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2)");
    storage_exec(b, "UPDATE t SET x = 3; VACUUM; INSERT INTO t VALUES(4)");
    assert_int_equal(query_int(a, "SELECT count(*) FROM t"), 3);
    assert_int_equal(commits, 0);
    storage_exec(a, "INSERT INTO t VALUES(5)");
    assert_int_equal(commits, 1);
    engine_close(a);
    engine_close(b);
    scratch_dir_remove(&dir);
}

/* ---- threads ---- */

#define ACCOUNTS 8
#define BALANCE 1000

struct workload {
    const char *path;
    int synchronous; /* 1 NORMAL, 2 FULL */
    int transfers;   /* per writer */
    atomic_bool writers_done;
    atomic_int failures; /* checked in the main thread: cmocka's asserts
                            are not for other threads */
    atomic_int reads;
    char failure[256];
};

static void fail_in_thread(struct workload *work, const char *what,
                           struct engine_db *db)
{
    if (atomic_fetch_add(&work->failures, 1) == 0) {
        snprintf(work->failure, sizeof(work->failure), "%.100s: %.140s", what,
                 db != NULL ? engine_errmsg(db) : "");
    }
}

static int exec_in_thread(struct workload *work, struct engine_db *db,
                          const char *sql)
{
    int rc = engine_exec(db, sql, NULL, NULL);

    if (rc != 0) {
        fail_in_thread(work, sql, db);
    }
    return rc;
}

static struct engine_db *open_in_thread(struct workload *work)
{
    struct engine_db *db = NULL;
    char sql[64];

    if (engine_open(work->path, &db) != 0) {
        fail_in_thread(work, "open", NULL);
        return NULL;
    }
    engine_busy_timeout(db, 30000);
    snprintf(sql, sizeof(sql), "PRAGMA synchronous = %d", work->synchronous);
    (void)exec_in_thread(work, db, sql);
    return db;
}

static void *writer_main(void *arg)
{
    struct workload *work = arg;
    struct engine_db *db = open_in_thread(work);
    unsigned seed = (unsigned)(uintptr_t)&seed;

    for (int i = 0; db != NULL && i < work->transfers; i++) {
        char sql[256];
        int from = (int)(rand_r(&seed) % ACCOUNTS);
        int to = (from + 1 + (int)(rand_r(&seed) % (ACCOUNTS - 1))) % ACCOUNTS;

        snprintf(sql, sizeof(sql),
                 "BEGIN IMMEDIATE;"
                 "UPDATE account SET balance = balance - 7 WHERE id = %d;"
                 "UPDATE account SET balance = balance + 7 WHERE id = %d;"
                 "INSERT INTO transfer(a, b) VALUES(%d, %d);"
                 "COMMIT",
                 from, to, from, to);
        if (exec_in_thread(work, db, sql) != 0) {
            break;
        }
        /* Now and then a checkpoint: readers load the new files. */
        if (i % 50 == 49 && exec_in_thread(work, db, "VACUUM") != 0) {
            break;
        }
    }
    engine_close(db);
    return NULL;
}

/* Reads inside a transaction: two statements must see one state. */
static void *reader_main(void *arg)
{
    struct workload *work = arg;
    struct engine_db *db = open_in_thread(work);

    while (db != NULL && !atomic_load(&work->writers_done)) {
        struct engine_stmt *stmt = NULL;
        int64_t total = -1, transfers = -1, moved = -1;

        if (exec_in_thread(work, db, "BEGIN") != 0 ||
            engine_prepare(db,
                           "SELECT (SELECT sum(balance) FROM account),"
                           " (SELECT count(*) FROM transfer)",
                           -1, &stmt, NULL) != 0 ||
            engine_step(stmt) != ENGINE_ROW) {
            fail_in_thread(work, "read", db);
            engine_finalize(stmt);
            break;
        }
        total = engine_column_int64(stmt, 0);
        transfers = engine_column_int64(stmt, 1);
        engine_finalize(stmt);
        stmt = NULL;
        if (engine_prepare(db, "SELECT sum(abs(balance - 1000)) FROM account",
                           -1, &stmt, NULL) == 0 &&
            engine_step(stmt) == ENGINE_ROW) {
            moved = engine_column_int64(stmt, 0);
        }
        engine_finalize(stmt);
        if (exec_in_thread(work, db, "COMMIT") != 0) {
            break;
        }
        /* Every transfer moves 7 and changes two balances by 7 each. */
        if (total != ACCOUNTS * BALANCE || moved < 0 ||
            moved > transfers * 14) {
            fail_in_thread(work, "the invariant broke", db);
            break;
        }
        atomic_fetch_add(&work->reads, 1);
    }
    engine_close(db);
    return NULL;
}

static void run_workload(struct workload *work, int writers, int readers)
{
    pthread_t threads[8];
    int count = 0;

    assert_true(writers + readers <= 8);
    for (int i = 0; i < readers; i++) {
        assert_int_equal(
            pthread_create(&threads[count++], NULL, reader_main, work), 0);
    }
    for (int i = 0; i < writers; i++) {
        assert_int_equal(
            pthread_create(&threads[count++], NULL, writer_main, work), 0);
    }
    for (int i = readers; i < count; i++) {
        pthread_join(threads[i], NULL);
    }
    atomic_store(&work->writers_done, true);
    for (int i = 0; i < readers; i++) {
        pthread_join(threads[i], NULL);
    }
    if (atomic_load(&work->failures) != 0) {
        fail_msg("%d failures, the first: %s", atomic_load(&work->failures),
                 work->failure);
    }
}

static void setup_accounts(const char *path)
{
    struct engine_db *db = storage_open(path);

    storage_exec(db, "CREATE TABLE account(id INTEGER PRIMARY KEY, balance);"
                     "CREATE TABLE transfer(a, b);"
                     "CREATE INDEX transfer_a ON transfer(a)");
    for (int i = 0; i < ACCOUNTS; i++) {
        char sql[96];

        snprintf(sql, sizeof(sql), "INSERT INTO account VALUES(%d, %d)", i,
                 BALANCE);
        storage_exec(db, sql);
    }
    engine_close(db);
}

static void check_after_reopen(const char *path, int64_t transfers)
{
    struct engine_db *db = storage_open(path);

    assert_int_equal(query_int(db, "SELECT sum(balance) FROM account"),
                     ACCOUNTS * BALANCE);
    assert_int_equal(query_int(db, "SELECT count(*) FROM transfer"), transfers);
    assert_integrity_ok(db);
    engine_close(db);
}

static void connections_threads_keep_the_invariant(void **state)
{
    struct scratch_dir dir;
    struct workload work = {.synchronous = 2, .transfers = 150};

    (void)state;
    scratch_dir_make(&dir);
    setup_accounts(dir.db);
    work.path = dir.db;
    run_workload(&work, 3, 3);
    print_message("threads: %d consistent read transactions\n",
                  atomic_load(&work.reads));
    check_after_reopen(dir.db, 3 * work.transfers);
    scratch_dir_remove(&dir);
}

/* fsync through the hook, counted and made slow enough (2 ms, a disk's
 * order) that committers pile up behind it. */
static atomic_int syncs;

static long hook_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                        int64_t offset)
{
    (void)ctx;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int hook_fsync(void *ctx, int fd)
{
    struct timespec pause = {.tv_nsec = 2000000};

    (void)ctx;
    atomic_fetch_add(&syncs, 1);
    nanosleep(&pause, NULL);
    return fsync(fd);
}

static void connections_group_commit_shares_fsyncs(void **state)
{
    static const struct engine_io_hooks hooks = {.pwrite = hook_pwrite,
                                                 .fsync = hook_fsync};
    struct scratch_dir dir;
    struct workload work = {.synchronous = 1, .transfers = 60};
    int commits = 4 * work.transfers;

    (void)state;
    scratch_dir_make(&dir);
    setup_accounts(dir.db);
    work.path = dir.db;
    engine_io_hooks_set(&hooks);
    atomic_store(&syncs, 0);
    run_workload(&work, 4, 0);
    engine_io_hooks_set(NULL);
    print_message("group commit: %d commits, %d fsyncs\n", commits,
                  atomic_load(&syncs));
    /* Each writer waits for its own sync, so while one fsync runs the
     * others append and then share the next one. */
    assert_true(atomic_load(&syncs) < commits);
    check_after_reopen(dir.db, commits);

    /* FULL syncs every commit by itself. */
    work = (struct workload){.path = dir.db, .synchronous = 2, .transfers = 20};
    engine_io_hooks_set(&hooks);
    atomic_store(&syncs, 0);
    run_workload(&work, 2, 0);
    engine_io_hooks_set(NULL);
    assert_true(atomic_load(&syncs) >= 2 * work.transfers);
    check_after_reopen(dir.db, commits + 2 * work.transfers);
    scratch_dir_remove(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(connections_see_each_others_commits),
        cmocka_unit_test(connections_snapshot_lasts_the_transaction),
        cmocka_unit_test(connections_one_writer_at_a_time),
        cmocka_unit_test(connections_stale_snapshot_cannot_write),
        cmocka_unit_test(connections_follow_a_checkpoint),
        cmocka_unit_test(connections_hook_sees_own_commits_only),
        cmocka_unit_test(connections_threads_keep_the_invariant),
        cmocka_unit_test(connections_group_commit_shares_fsyncs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
