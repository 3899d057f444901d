/* SPDX-License-Identifier: MIT
 *
 * Goal: SAVEPOINT, RELEASE and ROLLBACK TO behave as in SQLite
 * (lang_savepoint.html): nesting, names that repeat or differ in case,
 * ROLLBACK TO that keeps its savepoint and the transaction, RELEASE of
 * the savepoint that began the transaction committing it, COMMIT and
 * ROLLBACK emptying the stack, schema changes undone, and the errors.
 * Method: scripts, then random sequences of transaction statements and
 * row changes (seeded, SINEW_TEST_SEED replays), run in libsqlite3 and in
 * the engine side by side (sqlite_pair.h); after every statement the
 * outcomes, the open-transaction state and the table's rows must agree.
 */
#include "sqlite_pair.h"
#include "storage_test.h"

static void run_script(struct pair *p, const char *const *script)
{
    for (size_t i = 0; script[i] != NULL; i++) {
        (void)pair_run(p, script[i]);
        (void)pair_run(p, "SELECT * FROM t ORDER BY rowid");
    }
}

static void savepoint_nested_rollback_and_release(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)",
        "SAVEPOINT one",
        "INSERT INTO t VALUES (1, 'a')",
        "SAVEPOINT two",
        "INSERT INTO t VALUES (2, 'b')",
        "SAVEPOINT three",
        "UPDATE t SET b = b || '!'",
        "ROLLBACK TO two",
        "INSERT INTO t VALUES (3, 'c')",
        "ROLLBACK TO two",
        "ROLLBACK TO TWO",
        "INSERT INTO t VALUES (4, 'd')",
        "RELEASE SAVEPOINT two",
        "ROLLBACK TO two",
        "ROLLBACK TRANSACTION TO SAVEPOINT one",
        "INSERT INTO t VALUES (5, 'e')",
        "RELEASE one",
        "ROLLBACK",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    run_script(&p, script);
    pair_close(&p);
}

static void savepoint_inside_begin_does_not_commit(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a)",
        "BEGIN",
        "INSERT INTO t VALUES (1)",
        "SAVEPOINT s",
        "INSERT INTO t VALUES (2)",
        "RELEASE s",
        "SAVEPOINT s",
        "DELETE FROM t",
        "ROLLBACK TO s",
        "SAVEPOINT s",
        "INSERT INTO t VALUES (3)",
        "RELEASE s",
        "RELEASE s",
        "RELEASE s",
        "ROLLBACK",
        "SAVEPOINT s",
        "INSERT INTO t VALUES (4)",
        "COMMIT",
        "RELEASE s",
        "SAVEPOINT s",
        "INSERT INTO t VALUES (5)",
        "ROLLBACK",
        "ROLLBACK TO s",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    run_script(&p, script);
    pair_close(&p);
}

/* The most recent of a name wins, in any case; releasing the first
 * savepoint of a transaction SAVEPOINT began commits it. */
static void savepoint_names_repeat_and_ignore_case(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a)",
        "SAVEPOINT x",
        "INSERT INTO t VALUES (1)",
        "SAVEPOINT X",
        "INSERT INTO t VALUES (2)",
        "SAVEPOINT 'y z'",
        "INSERT INTO t VALUES (3)",
        "ROLLBACK TO \"Y Z\"",
        "ROLLBACK TO x",
        "RELEASE x",
        "INSERT INTO t VALUES (4)",
        "RELEASE [x]",
        "ROLLBACK",
        "SAVEPOINT savepoint",
        "SAVEPOINT \"begin\"",
        "INSERT INTO t VALUES (5)",
        "RELEASE SAVEPOINT savepoint",
        "ROLLBACK TO \"begin\"",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    run_script(&p, script);
    pair_close(&p);
}

/* Tables and indexes made after a savepoint go with ROLLBACK TO. */
static void savepoint_rollback_undoes_schema_changes(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a, b)",
        "CREATE INDEX tj ON t(b)",
        "SAVEPOINT s",
        "DROP INDEX tj",
        "CREATE TABLE u(x UNIQUE)",
        "INSERT INTO u VALUES (1)",
        "CREATE UNIQUE INDEX ti ON t(a)",
        "INSERT INTO t VALUES (1, 2)",
        "SELECT name FROM sqlite_schema",
        "ROLLBACK TO s",
        "SELECT name FROM sqlite_schema",
        "PRAGMA index_list(t)",
        "INSERT INTO t VALUES (1, 2), (1, 3)",
        "DROP TABLE t",
        "ROLLBACK TO s",
        "SELECT name FROM sqlite_schema",
        "RELEASE s",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    run_script(&p, script);
    pair_close(&p);
}

/* A failing statement undoes only itself; OR ROLLBACK ends the
 * transaction and with it every savepoint. */
static void savepoint_survives_statement_errors(void **state)
{
    static const char *const script[] = {
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)",
        "SAVEPOINT a",
        "INSERT INTO t VALUES (1, 'x')",
        "SAVEPOINT b",
        "INSERT INTO t VALUES (2, 'y'), (3, 'x')",
        "INSERT INTO t VALUES (4, 'z')",
        "ROLLBACK TO b",
        "INSERT OR FAIL INTO t VALUES (5, 'v'), (6, 'x')",
        "ROLLBACK TO a",
        "INSERT INTO t VALUES (7, 'w')",
        "INSERT OR ROLLBACK INTO t VALUES (8, 'w')",
        "ROLLBACK TO a",
        "RELEASE a",
        "SAVEPOINT c",
        "INSERT INTO t VALUES (9, 'q')",
        "RELEASE c",
        NULL,
    };
    struct pair p;

    (void)state;
    pair_open(&p);
    run_script(&p, script);
    pair_close(&p);
}

static const char *const random_names[] = {"a", "b", "c", "A"};

/* One random statement of the transaction language or a row change. */
static void random_statement(struct common_test_rng *rng, char *sql,
                             size_t size)
{
    const char *name = random_names[common_test_rng_below(rng, 4)];
    int value = (int)common_test_rng_below(rng, 12);

    switch (common_test_rng_below(rng, 12)) {
    case 0:
    case 1:
        snprintf(sql, size, "SAVEPOINT %s", name);
        break;
    case 2:
        snprintf(sql, size, "RELEASE %s", name);
        break;
    case 3:
        snprintf(sql, size, "ROLLBACK TO %s", name);
        break;
    case 4:
        snprintf(sql, size, "%s",
                 common_test_rng_below(rng, 3) == 0 ? "BEGIN"
                 : common_test_rng_below(rng, 2)    ? "COMMIT"
                                                    : "ROLLBACK");
        break;
    case 5:
        snprintf(sql, size, "DELETE FROM t WHERE b %% 3 = %d", value % 3);
        break;
    case 6:
        snprintf(sql, size, "UPDATE t SET b = b + %d WHERE a > %d", value,
                 value);
        break;
    case 7:
        snprintf(sql, size, "INSERT OR ROLLBACK INTO t(b) VALUES (%d)", value);
        break;
    default:
        snprintf(sql, size, "INSERT INTO t(b) VALUES (%d), (%d)", value,
                 value * 7 % 12);
        break;
    }
}

static void savepoint_random_sequences_match_sqlite(void **state)
{
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "savepoint_random_sequences_match_sqlite");
    for (int round = 0; round < 40; round++) {
        struct pair p;

        pair_open(&p);
        pair_same(&p, "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)");
        for (int i = 0; i < 60; i++) {
            char sql[128];

            random_statement(&rng, sql, sizeof(sql));
            (void)pair_run(&p, sql);
            pair_same(&p, "SELECT a, b FROM t ORDER BY a");
        }
        pair_close(&p);
    }
}

/* On a file database, what ROLLBACK TO undid is not in the log: after a
 * reopen the database holds exactly what was committed. */
static void savepoint_rollback_is_durable(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db;
    struct engine_db *model;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b)");
    storage_exec(db, "SAVEPOINT a; INSERT INTO t VALUES (1, 'gone');"
                     "SAVEPOINT b; INSERT INTO t VALUES (2, 'gone');"
                     "CREATE TABLE gone(x); ROLLBACK TO a;"
                     "INSERT INTO t VALUES (3, 'kept'); SAVEPOINT c;"
                     "PRAGMA user_version = 4; RELEASE c; SAVEPOINT d;"
                     "PRAGMA user_version = 5; ROLLBACK TO d; RELEASE a");
    storage_exec(db, "BEGIN; INSERT INTO t VALUES (5, 'kept'); SAVEPOINT e;"
                     "DELETE FROM t; ROLLBACK TO e; UPDATE t SET b = 'new' "
                     "WHERE a = 5; RELEASE e; COMMIT");
    storage_exec(db, "SAVEPOINT f; INSERT INTO t VALUES (6, 'open')");
    engine_close(db);
    db = storage_open(dir.db);
    model = storage_open(NULL);
    storage_exec(model, "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
                        "INSERT INTO t VALUES (3, 'kept'), (5, 'new');"
                        "PRAGMA user_version = 4");
    assert_same_db(db, model);
    engine_close(model);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* The script ends inside a transaction with savepoints open, which
 * engine_close() must free. */
static void savepoint_survives_every_allocation_failure(void **state)
{
    static const char *const script =
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE);"
        "SAVEPOINT a; INSERT INTO t(b) VALUES (1), (2);"
        "SAVEPOINT b; CREATE TABLE u(x); SAVEPOINT c; DELETE FROM t;"
        "ROLLBACK TO b; RELEASE a; SAVEPOINT d; SAVEPOINT e;"
        "SAVEPOINT f; SAVEPOINT g; SAVEPOINT h; SAVEPOINT i; SAVEPOINT j;"
        "SAVEPOINT k; SAVEPOINT l; ROLLBACK TO e; RELEASE e;";

    (void)state;
    assert_true(pair_oom_walk(script) > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(savepoint_nested_rollback_and_release),
        cmocka_unit_test(savepoint_inside_begin_does_not_commit),
        cmocka_unit_test(savepoint_names_repeat_and_ignore_case),
        cmocka_unit_test(savepoint_rollback_undoes_schema_changes),
        cmocka_unit_test(savepoint_survives_statement_errors),
        cmocka_unit_test(savepoint_random_sequences_match_sqlite),
        cmocka_unit_test(savepoint_survives_every_allocation_failure),
        cmocka_unit_test(savepoint_rollback_is_durable),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
