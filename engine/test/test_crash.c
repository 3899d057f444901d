/* SPDX-License-Identifier: MIT
 *
 * Goal: no acknowledged commit is ever lost and no partial transaction is
 * ever visible, whenever the writing process dies.
 * Method: for each round a child process opens the database and commits
 * transactions in a loop (a ledger row plus a transfer between accounts,
 * sometimes a large row, sometimes a delete, sometimes a VACUUM), writing
 * each transaction's number to a pipe once its COMMIT returned. The parent
 * SIGKILLs it at a random moment, reads every acknowledgement that made it
 * into the pipe, reopens the database and checks: every acknowledged
 * number is there, at most one unacknowledged one follows (the commit that
 * was durable when the child died before reporting it), the ledger has no
 * gaps, the accounts still sum to their initial total, and
 * PRAGMA integrity_check says ok. A second test does the same with a child
 * of several threads, each with its own handle, under group commit
 * (synchronous=NORMAL): a commit is acknowledged by the thread whose COMMIT
 * returned, so after the kill every acknowledged number must be there, and
 * at most one more per thread. Rounds: SINEW_CRASH_ROUNDS (default 30);
 * seed: SINEW_TEST_SEED.
 */
#include "storage_test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define ACCOUNTS 10
#define INITIAL_BALANCE 1000

static const char *const setup_sql =
    "CREATE TABLE IF NOT EXISTS ledger(id INTEGER PRIMARY KEY, note TEXT);"
    "CREATE TABLE IF NOT EXISTS acct(id INTEGER PRIMARY KEY, bal INTEGER);"
    "CREATE TABLE IF NOT EXISTS junk(k INTEGER PRIMARY KEY, payload);";

static int64_t query_int(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;
    int64_t value = -1;

    if (engine_prepare(db, sql, -1, &stmt, NULL) == 0 &&
        engine_step(stmt) == ENGINE_ROW) {
        value = engine_column_int64(stmt, 0);
    }
    engine_finalize(stmt);
    return value;
}

/* One transaction numbered id; returns 0 once it committed. */
static int child_transaction(struct engine_db *db, uint64_t id,
                             struct common_test_rng *rng)
{
    char sql[512];
    unsigned from = (unsigned)common_test_rng_below(rng, ACCOUNTS) + 1;
    unsigned to = (unsigned)common_test_rng_below(rng, ACCOUNTS) + 1;
    unsigned amount = (unsigned)common_test_rng_below(rng, 50);
    unsigned size = common_test_rng_below(rng, 8) == 0 ? 200000 : 20;

    snprintf(sql, sizeof(sql),
             "BEGIN;"
             "INSERT INTO ledger VALUES(%llu, 'tx');"
             "UPDATE acct SET bal = bal - %u WHERE id = %u;"
             "UPDATE acct SET bal = bal + %u WHERE id = %u;"
             "INSERT OR REPLACE INTO junk VALUES(%llu %% 50, zeroblob(%u));"
             "DELETE FROM junk WHERE k = %llu %% 37;"
             "COMMIT;",
             (unsigned long long)id, amount, from, amount, to,
             (unsigned long long)id, size, (unsigned long long)id);
    return engine_exec(db, sql, NULL, NULL);
}

static void child_main(const char *path, int ack_fd, uint64_t seed)
{
    struct common_test_rng rng = {.state = seed};
    struct engine_db *db = NULL;
    uint64_t id;

    if (engine_open(path, &db) != 0) {
        _exit(2);
    }
    if (common_test_rng_below(&rng, 2) == 0 &&
        engine_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL) != 0) {
        _exit(2);
    }
    id = (uint64_t)query_int(db, "SELECT coalesce(max(id), 0) FROM ledger");
    for (;;) {
        id++;
        if (child_transaction(db, id, &rng) != 0) {
            _exit(3);
        }
        if (write(ack_fd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
            _exit(4);
        }
        if (common_test_rng_below(&rng, 40) == 0 &&
            engine_exec(db, "VACUUM", NULL, NULL) != 0) {
            _exit(5);
        }
    }
}

#define CHILD_THREADS 3

struct child_writer {
    const char *path;
    int ack_fd;
    uint64_t seed;
};

/* One thread of the child: its own handle, transactions numbered by the
 * ledger's next rowid (given out under the write lock, so numbers are
 * gapless across threads), each acknowledged once its COMMIT returned. */
static void *child_writer_main(void *arg)
{
    struct child_writer *writer = arg;
    struct common_test_rng rng = {.state = writer->seed};
    struct engine_db *db = NULL;

    if (engine_open(writer->path, &db) != 0) {
        _exit(2);
    }
    engine_busy_timeout(db, 60000);
    if (engine_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL) != 0) {
        _exit(2);
    }
    for (;;) {
        char sql[512];
        unsigned from = (unsigned)common_test_rng_below(&rng, ACCOUNTS) + 1;
        unsigned to = (unsigned)common_test_rng_below(&rng, ACCOUNTS) + 1;
        unsigned amount = (unsigned)common_test_rng_below(&rng, 50);
        uint64_t id;

        if (engine_exec(db,
                        "BEGIN IMMEDIATE;"
                        "INSERT INTO ledger(note) VALUES('tx')",
                        NULL, NULL) != 0) {
            _exit(3);
        }
        id = (uint64_t)engine_last_insert_rowid(db);
        snprintf(sql, sizeof(sql),
                 "UPDATE acct SET bal = bal - %u WHERE id = %u;"
                 "UPDATE acct SET bal = bal + %u WHERE id = %u;"
                 "INSERT OR REPLACE INTO junk VALUES(%llu %% 50, "
                 "zeroblob(%u));"
                 "COMMIT;",
                 amount, from, amount, to, (unsigned long long)id,
                 common_test_rng_below(&rng, 8) == 0 ? 200000u : 20u);
        if (engine_exec(db, sql, NULL, NULL) != 0) {
            _exit(3);
        }
        /* Eight bytes to a pipe are written whole, whichever thread. */
        if (write(writer->ack_fd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
            _exit(4);
        }
        if (common_test_rng_below(&rng, 60) == 0 &&
            engine_exec(db, "VACUUM", NULL, NULL) != 0) {
            _exit(5);
        }
    }
    return NULL;
}

static void child_threads_main(const char *path, int ack_fd, uint64_t seed)
{
    struct child_writer writers[CHILD_THREADS];
    pthread_t threads[CHILD_THREADS];

    for (int i = 0; i < CHILD_THREADS; i++) {
        writers[i] = (struct child_writer){path, ack_fd, seed + (uint64_t)i};
        if (pthread_create(&threads[i], NULL, child_writer_main, &writers[i]) !=
            0) {
            _exit(2);
        }
    }
    for (int i = 0; i < CHILD_THREADS; i++) {
        pthread_join(threads[i], NULL);
    }
    _exit(6);
}

/* Reads acknowledgements until the pipe closes; returns the largest. */
static uint64_t drain_acks(int fd, uint64_t largest, bool in_order)
{
    uint64_t id;
    ssize_t n;

    while ((n = read(fd, &id, sizeof(id))) == (ssize_t)sizeof(id) ||
           (n < 0 && errno == EINTR)) {
        if (n > 0) {
            /* Threads report in the order their COMMITs returned. */
            assert_true(!in_order || id > largest);
            largest = id > largest ? id : largest;
        }
    }
    return largest;
}

static void sleep_us(uint64_t micros)
{
    struct timespec delay = {.tv_sec = (time_t)(micros / 1000000),
                             .tv_nsec = (long)(micros % 1000000) * 1000};

    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
    }
}

/* After a crash: everything acknowledged, at most one more per writer
 * than was there before (a commit made durable just before the kill, not
 * yet reported), no gaps, the money conserved. Returns the ledger's top. */
static int64_t verify(const char *path, uint64_t acked, int64_t before,
                      int writers)
{
    struct engine_db *db = storage_open(path);
    int64_t top = query_int(db, "SELECT coalesce(max(id), 0) FROM ledger");
    int64_t known = (int64_t)acked > before ? (int64_t)acked : before;

    assert_true(top >= known);
    assert_true(top <= known + writers);
    assert_int_equal(query_int(db, "SELECT count(*) FROM ledger"), top);
    assert_int_equal(query_int(db, "SELECT sum(bal) FROM acct"),
                     ACCOUNTS * INITIAL_BALANCE);
    assert_integrity_ok(db);
    engine_close(db);
    return top;
}

static void setup_database(const char *path)
{
    struct engine_db *db = storage_open(path);
    char sql[128];

    storage_exec(db, setup_sql);
    for (int i = 1; i <= ACCOUNTS; i++) {
        snprintf(sql, sizeof(sql), "INSERT INTO acct VALUES(%d, %d)", i,
                 INITIAL_BALANCE);
        storage_exec(db, sql);
    }
    engine_close(db);
}

struct crash_state {
    uint64_t acked; /* the largest acknowledged transaction */
    int64_t top;    /* the largest found after the last crash */
};

static void crash_round(const char *path, struct common_test_rng *rng,
                        struct crash_state *state, bool threads)
{
    int fds[2];
    pid_t child;
    int status;

    assert_int_equal(pipe(fds), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(fds[0]);
        if (threads) {
            child_threads_main(path, fds[1], common_test_rng_next(rng));
        }
        child_main(path, fds[1], common_test_rng_next(rng));
    }
    close(fds[1]);
    sleep_us(common_test_rng_below(rng, 150000));
    kill(child, SIGKILL);
    state->acked = drain_acks(fds[0], state->acked, !threads);
    close(fds[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    /* It must have died by our hand, not failed on its own. */
    assert_true(WIFSIGNALED(status));
    state->top =
        verify(path, state->acked, state->top, threads ? CHILD_THREADS : 1);
}

static int crash_rounds(void)
{
    const char *text = getenv("SINEW_CRASH_ROUNDS");

    return text != NULL ? atoi(text) : 30;
}

static void crash_loses_no_acknowledged_commit(void **state)
{
    struct scratch_dir dir;
    struct common_test_rng rng;
    int rounds = crash_rounds();
    struct crash_state crash = {0, 0};

    (void)state;
    common_test_rng_seed(&rng, "crash_loses_no_acknowledged_commit");
    scratch_dir_make(&dir);
    setup_database(dir.db);
    for (int round = 0; round < rounds; round++) {
        crash_round(dir.db, &rng, &crash, false);
    }
    printf("crash: %d rounds, %llu acknowledged commits, none lost\n", rounds,
           (unsigned long long)crash.acked);
    assert_true(crash.acked > 0);
    scratch_dir_remove(&dir);
}

static void crash_threads_lose_no_acknowledged_commit(void **state)
{
    struct scratch_dir dir;
    struct common_test_rng rng;
    int rounds = crash_rounds();
    struct crash_state crash = {0, 0};

    (void)state;
    common_test_rng_seed(&rng, "crash_threads_lose_no_acknowledged_commit");
    scratch_dir_make(&dir);
    setup_database(dir.db);
    for (int round = 0; round < rounds; round++) {
        crash_round(dir.db, &rng, &crash, true);
    }
    printf("crash, %d threads under group commit: %d rounds, %llu "
           "acknowledged commits, none lost\n",
           CHILD_THREADS, rounds, (unsigned long long)crash.acked);
    assert_true(crash.acked > 0);
    scratch_dir_remove(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crash_loses_no_acknowledged_commit),
        cmocka_unit_test(crash_threads_lose_no_acknowledged_commit),
    };

    /* The child is killed mid-way with its heap in use: cmocka's leak
     * check is for the parent alone, which frees all it takes. */
    common_test_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
