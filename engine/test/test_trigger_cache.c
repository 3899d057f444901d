/* SPDX-License-Identifier: MIT
 *
 * test_trigger_cache.c: trigger programs planned once per top-level
 * statement and shared by every statement in it that fires them
 * (trigger_plan.c, as SQLite's getRowTrigger shares a TriggerPrg), and the
 * one plan-memory budget of a statement and its programs (arena.h).
 *
 * Method: scripts whose outcome depends on a shared program behaving as if
 * planned at each firing site run in libsqlite3 3.40 and in sinew
 * (sqlite_pair.h), every outcome compared: a chain of triggers each firing
 * the next twice (planned per site it took 2^22 plans; no timing is
 * asserted, only that it finishes and agrees), cycles of triggers whose
 * recursion is cut where the program runs, a step's OR clause given way to
 * the firing statement's and inherited below it, UPDATE OF triggers fired
 * by statements setting different columns, a CTE chain referencing each
 * level twice. Then what the oracle cannot show: the budget of shared
 * arenas, that nested plans count against the top-level statement's, and
 * that failing any allocation of a shared program frees everything.
 */
#include "sqlite_pair.h"

#include <stdlib.h>

#include "arena.h"
#include "engine_int.h"
#include "trigger.h"

#define CHAIN 22

static int pair_setup(void **state)
{
    return pair_state_open(state, NULL);
}

/* Runs every statement of script in both; each outcome must be equal. */
static void run_all(struct pair *p, const char *const *script)
{
    for (size_t i = 0; script[i] != NULL; i++) {
        (void)pair_run(p, script[i]);
    }
}

/* Tables a0..aCHAIN; a_i's trigger inserts new.x into a_{i+1} twice (the
 * second a no-op), so each level fires the next one from two sites. */
static void make_chain(struct pair *p)
{
    char sql[512];

    for (int i = 0; i <= CHAIN; i++) {
        snprintf(sql, sizeof(sql), "CREATE TABLE a%d(x)", i);
        pair_same(p, sql);
    }
    for (int i = 0; i < CHAIN; i++) {
        snprintf(sql, sizeof(sql),
                 "CREATE TRIGGER t_%d AFTER INSERT ON a%d BEGIN INSERT INTO "
                 "a%d VALUES(new.x); INSERT INTO a%d SELECT new.x WHERE 0; "
                 "END",
                 i, i, i + 1, i + 1);
        pair_same(p, sql);
    }
}

static void chain_of_triggers_matches_sqlite(void **state)
{
    struct pair *p = *state;
    char sql[128];

    make_chain(p);
    pair_same(p, "INSERT INTO a0 VALUES(1)");
    pair_same(p, "INSERT INTO a0 VALUES(2), ('x')");
    for (int i = 0; i <= CHAIN; i++) {
        snprintf(sql, sizeof(sql), "SELECT x, typeof(x) FROM a%d ORDER BY x",
                 i);
        pair_same(p, sql);
    }
    pair_same(p, "SELECT changes(), total_changes()");
}

/* Each program of a top-level statement's cache, and the bytes its
 * statements' plan arenas hold. */
static size_t programs_bytes(const struct engine_trigger_cache *cache,
                             size_t *count)
{
    size_t bytes = 0;

    *count = 0;
    for (const struct engine_trigger_program *program = cache->programs;
         program != NULL; program = program->next) {
        (*count)++;
        if (program->when != NULL) {
            bytes += program->when->plan_arena.allocated;
        }
        for (size_t s = 0; s < program->step_count; s++) {
            bytes += program->steps[s]->plan_arena.allocated;
        }
    }
    return bytes;
}

static void chain_plans_each_trigger_once(void **state)
{
    struct pair *p = *state;
    struct engine_stmt *stmt = NULL;
    const struct engine_trigger_cache *cache;
    size_t count, nested;

    make_chain(p);
    assert_int_equal(
        engine_prepare(p->db, "INSERT INTO a0 VALUES(7)", -1, &stmt, NULL), 0);
    assert_non_null(stmt->dml);
    assert_non_null(stmt->dml->triggers);
    assert_int_equal(stmt->dml->triggers->count, 1);
    cache = stmt->dml->triggers->programs[0]->scope.cache;
    nested = programs_bytes(cache, &count);
    assert_int_equal(count, CHAIN);
    /* The nested statements' plans count against the top-level one's. */
    assert_true(nested > 0);
    assert_int_equal(stmt->plan_budget.allocated,
                     stmt->plan_arena.allocated + nested);
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
    pair_same(p, "SELECT 1"); /* the handle is still sound */
}

static void cycles_match_sqlite(void **state)
{
    /* c's trigger inserts into b: planned once for the whole statement,
     * it fires b's trigger when reached from a's but not when reached
     * from b's (which is then running). */
    static const char *const script[] = {
        "CREATE TABLE a(x)",
        "CREATE TABLE b(x)",
        "CREATE TABLE c(x)",
        "CREATE TABLE log(seq INTEGER PRIMARY KEY, what, x)",
        "CREATE TRIGGER ta AFTER INSERT ON a BEGIN INSERT INTO log(what, x) "
        "VALUES ('a', new.x); INSERT INTO b VALUES (new.x + 1); INSERT INTO "
        "c VALUES (new.x + 2); END",
        "CREATE TRIGGER tb AFTER INSERT ON b BEGIN INSERT INTO log(what, x) "
        "VALUES ('b', new.x); INSERT INTO c VALUES (new.x * 10); END",
        "CREATE TRIGGER tc AFTER INSERT ON c BEGIN INSERT INTO log(what, x) "
        "VALUES ('c', new.x); INSERT INTO b VALUES (new.x + 100); INSERT "
        "INTO a VALUES (new.x + 1000); END",
        "INSERT INTO a VALUES (1), (2)",
        "SELECT * FROM log ORDER BY seq",
        "SELECT 'a', * FROM a UNION ALL SELECT 'b', * FROM b UNION ALL "
        "SELECT 'c', * FROM c",
        "DELETE FROM log",
        "INSERT INTO c VALUES (5)",
        "INSERT INTO b VALUES (6)",
        "SELECT * FROM log ORDER BY seq",
        "SELECT changes(), total_changes()",
        /* A trigger writing its own table, before and after. */
        "CREATE TABLE s(x)",
        "CREATE TRIGGER sb BEFORE INSERT ON s BEGIN INSERT INTO s VALUES "
        "(new.x + 1); INSERT INTO s VALUES (new.x + 2); END",
        "CREATE TRIGGER sa AFTER INSERT ON s WHEN new.x < 10 BEGIN INSERT "
        "INTO s SELECT x + 10 FROM s; END",
        "INSERT INTO s VALUES (1)",
        "SELECT * FROM s ORDER BY rowid",
        NULL,
    };

    run_all(*state, script);
}

static void conflict_modes_match_sqlite(void **state)
{
    /* b's trigger is fired from an OR IGNORE step and a plain one: the
     * programs differ (the mode is inherited by c's insert below it), and
     * the top-level statement's OR clause overrides them all. */
    static const char *const script[] = {
        "CREATE TABLE a(x)",
        "CREATE TABLE b(x)",
        "CREATE TABLE c(x UNIQUE)",
        "CREATE TABLE d(x UNIQUE)",
        "INSERT INTO c VALUES (1)",
        "INSERT INTO d VALUES (1)",
        "CREATE TRIGGER tb AFTER INSERT ON b BEGIN INSERT INTO c VALUES "
        "(new.x); END",
        "CREATE TRIGGER tc AFTER INSERT ON c BEGIN INSERT INTO d VALUES "
        "(new.x); END",
        "CREATE TRIGGER ta AFTER INSERT ON a BEGIN INSERT OR IGNORE INTO b "
        "VALUES (new.x); INSERT INTO b VALUES (new.x + 1); END",
        "INSERT INTO a VALUES (1)",
        "INSERT INTO a VALUES (0)",
        "SELECT * FROM b ORDER BY rowid",
        "SELECT * FROM c ORDER BY rowid",
        "SELECT * FROM d ORDER BY rowid",
        "INSERT OR REPLACE INTO a VALUES (0)",
        "INSERT OR IGNORE INTO a VALUES (0)",
        "INSERT OR FAIL INTO a VALUES (0)",
        "SELECT * FROM b ORDER BY rowid",
        "SELECT * FROM c ORDER BY rowid",
        "SELECT * FROM d ORDER BY rowid",
        "DROP TRIGGER ta",
        "CREATE TRIGGER ta AFTER INSERT ON a BEGIN INSERT INTO b VALUES "
        "(new.x + 1); INSERT OR IGNORE INTO b VALUES (new.x); END",
        "INSERT INTO a VALUES (5)",
        "INSERT INTO a VALUES (0)",
        "SELECT * FROM c ORDER BY rowid",
        NULL,
    };

    run_all(*state, script);
}

static void update_of_matches_sqlite(void **state)
{
    /* t's UPDATE OF b trigger, fired by steps setting different columns
     * and by an upsert's DO UPDATE in the same statement. */
    static const char *const script[] = {
        "CREATE TABLE t(k INTEGER PRIMARY KEY, b, c)",
        "CREATE TABLE go(x)",
        "CREATE TABLE log(seq INTEGER PRIMARY KEY, what, k, b, c)",
        "INSERT INTO t VALUES (1, 'b1', 'c1'), (2, 'b2', 'c2')",
        "CREATE TRIGGER tu AFTER UPDATE OF b ON t BEGIN INSERT INTO log(what, "
        "k, b, c) VALUES ('b', new.k, new.b, old.b); END",
        "CREATE TRIGGER tu2 AFTER UPDATE ON t BEGIN INSERT INTO log(what, k, "
        "b, c) VALUES ('any', new.k, new.b, new.c); END",
        "CREATE TRIGGER tg AFTER INSERT ON go BEGIN UPDATE t SET c = new.x; "
        "UPDATE t SET b = new.x WHERE k = 1; INSERT INTO t VALUES (2, 'u', "
        "'v') ON CONFLICT (k) DO UPDATE SET b = excluded.b || new.x; END",
        "INSERT INTO go VALUES ('g')",
        "SELECT * FROM log ORDER BY seq",
        "SELECT * FROM t ORDER BY k",
        NULL,
    };

    run_all(*state, script);
}

/* "WITH c0 AS (SELECT 1), c1 AS (SELECT x FROM c0 UNION ALL SELECT x FROM
 * c0), ..." to levels: each level reads the one below it twice. */
static char *cte_chain(int levels)
{
    size_t size = 128 + (size_t)levels * 96;
    char *sql = malloc(size);
    size_t used;

    assert_non_null(sql);
    used = (size_t)snprintf(sql, size, "WITH c0(x) AS (SELECT 1)");
    for (int i = 1; i <= levels; i++) {
        used += (size_t)snprintf(sql + used, size - used,
                                 ", c%d(x) AS (SELECT x FROM c%d UNION ALL "
                                 "SELECT x FROM c%d)",
                                 i, i - 1, i - 1);
    }
    snprintf(sql + used, size - used, " SELECT count(*), sum(x) FROM c%d",
             levels);
    return sql;
}

static void cte_double_references_stay_in_budget(void **state)
{
    /* Planned once per reference, 18 levels take 2^18 plans: within the
     * budget, the result is SQLite's. */
    char *sql = cte_chain(18);

    pair_same(*state, sql);
    free(sql);
}

static void shared_budget_bounds_arenas(void **state)
{
    struct engine_arena_budget budget;
    struct engine_arena a, b;

    (void)state;
    engine__arena_budget_init(&budget, 64 * 1024);
    engine__arena_init(&a);
    engine__arena_init(&b);
    assert_non_null(engine__arena_alloc(&a, 100));
    engine__arena_share(&a, &budget); /* what a holds counts from now */
    assert_int_equal(budget.allocated, a.allocated);
    engine__arena_share(&b, &budget);
    assert_non_null(engine__arena_alloc(&a, 40 * 1024));
    /* Each arena alone is far below its own limit: the budget refuses. */
    assert_null(engine__arena_alloc(&b, 40 * 1024));
    assert_int_equal(budget.allocated, a.allocated + b.allocated);
    engine__arena_reset(&a); /* keeps its newest block */
    assert_int_equal(budget.allocated, a.allocated + b.allocated);
    engine__arena_close(&a);
    assert_int_equal(budget.allocated, b.allocated);
    assert_non_null(engine__arena_alloc(&b, 40 * 1024));
    engine__arena_share(&b, NULL);
    assert_int_equal(budget.allocated, 0);
    engine__arena_close(&b);
    assert_int_equal(budget.allocated, 0);
}

static void shared_programs_survive_oom(void **state)
{
    /* Two sites sharing each program, a cycle and a WHEN: failing any
     * allocation frees every program once. */
    static const char script[] =
        "CREATE TABLE a(x); CREATE TABLE b(x); CREATE TABLE c(x);"
        "CREATE TRIGGER ta AFTER INSERT ON a WHEN new.x > 0 BEGIN INSERT "
        "INTO b VALUES (new.x); INSERT INTO b SELECT new.x WHERE 0; END;"
        "CREATE TRIGGER tb AFTER INSERT ON b BEGIN INSERT INTO c VALUES "
        "(new.x); INSERT INTO a VALUES (new.x - 1); END;"
        "INSERT INTO a VALUES (2);";

    (void)state;
    assert_true(pair_oom_walk(script) > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(chain_of_triggers_matches_sqlite,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(chain_plans_each_trigger_once,
                                        pair_setup, pair_state_close),
        cmocka_unit_test_setup_teardown(cycles_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(conflict_modes_match_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(update_of_matches_sqlite, pair_setup,
                                        pair_state_close),
        cmocka_unit_test_setup_teardown(cte_double_references_stay_in_budget,
                                        pair_setup, pair_state_close),
        cmocka_unit_test(shared_budget_bounds_arenas),
        cmocka_unit_test(shared_programs_survive_oom),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
