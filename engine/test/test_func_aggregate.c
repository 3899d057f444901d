/* SPDX-License-Identifier: MIT
 *
 * test_func_aggregate.c: count, sum, total, avg, min, max, group_concat
 * and string_agg against libsqlite3 3.40.
 *
 * Method: each trial fills a SQLite table t(x, s) with 0 to 30 seeded
 * random rows (all storage classes mixed, or integers only so that exact
 * sums and int64 overflow get exercised, or reals only), runs
 * "SELECT agg(x) FROM t", and steps our aggregate over the same values in
 * rowid order; value, type and error message must agree. min and max also
 * run under NOCASE; group_concat takes the per-row separator s (NULL
 * included); string_agg is compared with SQLite's group_concat(x, s), as
 * 3.40 has no string_agg.
 */
#include "func_oracle.h"

#define ROWS_MAX 30
#define TRIALS 700

struct table {
    struct engine_value x[ROWS_MAX];
    struct engine_value s[ROWS_MAX];
    uint8_t x_bytes[ROWS_MAX][64];
    uint8_t s_bytes[ROWS_MAX][64];
    int rows;
};

static struct engine_value random_row_value(struct common_test_rng *rng,
                                            int mode, uint8_t *buf)
{
    if (mode == 1) {
        return common_test_rng_below(rng, 8) == 0 ? engine__value_null()
                                                  : oracle_random_int(rng);
    }
    if (mode == 2) {
        return oracle_random_real(rng);
    }
    return oracle_random_value(rng, buf);
}

static void fill(struct oracle *o, struct common_test_rng *rng, struct table *t)
{
    sqlite3_stmt *insert;
    int mode = (int)common_test_rng_below(rng, 3), i;

    assert_int_equal(sqlite3_exec(o->db, "DELETE FROM t", NULL, NULL, NULL),
                     SQLITE_OK);
    insert = oracle_prepare(o, "INSERT INTO t(x, s) VALUES (?1, ?2)");
    t->rows = (int)common_test_rng_below(rng, ROWS_MAX + 1);
    for (i = 0; i < t->rows; i++) {
        t->x[i] = random_row_value(rng, mode, t->x_bytes[i]);
        t->s[i] = common_test_rng_below(rng, 4) == 0
                      ? oracle_random_value(rng, t->s_bytes[i])
                      : engine__value_text("; ", 2);
        oracle_bind(insert, 1, &t->x[i]);
        oracle_bind(insert, 2, &t->s[i]);
        assert_int_equal(sqlite3_step(insert), SQLITE_DONE);
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
}

/* Steps our aggregate over the table and compares with SQLite's sql. */
static void compare(struct oracle *o, const struct table *t, const char *name,
                    int argc, const char *sql)
{
    const struct engine_aggregate_def *def =
        engine__aggregate_lookup(name, strlen(name));
    struct engine_value argv[2], out = engine__value_null();
    sqlite3_stmt *stmt = oracle_prepare(o, sql);
    uint64_t state[16];
    int rc = 0, i;

    assert_non_null(def);
    assert_true(def->state_size <= sizeof(state));
    assert_true(engine__func_arity_ok(def->arg_min, def->arg_max, argc));
    def->init(state);
    o->errmsg[0] = '\0';
    for (i = 0; i < t->rows && rc == 0; i++) {
        argv[0] = t->x[i];
        argv[1] = t->s[i];
        rc = def->step(&o->ctx, state, argc, argv);
    }
    if (rc == 0) {
        rc = def->final(&o->ctx, state, &out);
    }
    if (def->destroy != NULL) {
        def->destroy(state);
    }
    if (!oracle_check(o, stmt, sqlite3_step(stmt), rc, &out) &&
        o->mismatches <= ORACLE_REPORT_MAX) {
        printf("  in %s over %d rows:", sql, t->rows);
        for (i = 0; i < t->rows; i++) {
            printf(" ");
            oracle_print_value(&t->x[i]);
        }
        printf("\n");
    }
    sqlite3_finalize(stmt);
    engine__arena_reset(&o->arena);
}

static void aggregates_match_sqlite_on_random_tables(void **state)
{
    struct common_test_rng rng;
    struct oracle o;
    struct table *t = common_malloc(sizeof(*t));
    int trial;

    (void)state;
    common_test_rng_seed(&rng, "aggregates_match_sqlite_on_random_tables");
    oracle_open(&o);
    assert_int_equal(
        sqlite3_exec(o.db, "CREATE TABLE t(x, s)", NULL, NULL, NULL),
        SQLITE_OK);
    for (trial = 0; trial < TRIALS; trial++) {
        fill(&o, &rng, t);
        o.ctx.collation = ENGINE_COLLATION_BINARY;
        compare(&o, t, "count", 0, "SELECT count(*) FROM t");
        compare(&o, t, "count", 1, "SELECT count(x) FROM t");
        compare(&o, t, "sum", 1, "SELECT sum(x) FROM t");
        compare(&o, t, "total", 1, "SELECT total(x) FROM t");
        compare(&o, t, "avg", 1, "SELECT avg(x) FROM t");
        compare(&o, t, "min", 1, "SELECT min(x) FROM t");
        compare(&o, t, "max", 1, "SELECT max(x) FROM t");
        compare(&o, t, "group_concat", 1, "SELECT group_concat(x) FROM t");
        compare(&o, t, "group_concat", 2, "SELECT group_concat(x, s) FROM t");
        compare(&o, t, "string_agg", 2, "SELECT group_concat(x, s) FROM t");
        o.ctx.collation = ENGINE_COLLATION_NOCASE;
        compare(&o, t, "min", 1, "SELECT min(x COLLATE NOCASE) FROM t");
        compare(&o, t, "max", 1, "SELECT max(x COLLATE NOCASE) FROM t");
    }
    common_free(t);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

/* Fixed tables for the rules the random runs might miss. */
static void aggregate_edges_match_sqlite(void **state)
{
    static const int64_t overflow[] = {INT64_MAX, 1, -5};
    struct oracle o;
    struct table *t = common_malloc(sizeof(*t));
    sqlite3_stmt *insert;
    int i;

    (void)state;
    oracle_open(&o);
    assert_int_equal(
        sqlite3_exec(o.db, "CREATE TABLE t(x, s)", NULL, NULL, NULL),
        SQLITE_OK);
    insert = oracle_prepare(&o, "INSERT INTO t(x, s) VALUES (?1, ?2)");
    t->rows = 3;
    for (i = 0; i < 3; i++) {
        t->x[i] = engine__value_int(overflow[i]);
        t->s[i] = engine__value_null();
        oracle_bind(insert, 1, &t->x[i]);
        oracle_bind(insert, 2, &t->s[i]);
        assert_int_equal(sqlite3_step(insert), SQLITE_DONE);
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    compare(&o, t, "sum", 1, "SELECT sum(x) FROM t");
    compare(&o, t, "total", 1, "SELECT total(x) FROM t");
    compare(&o, t, "avg", 1, "SELECT avg(x) FROM t");
    compare(&o, t, "group_concat", 2, "SELECT group_concat(x, s) FROM t");
    t->rows = 0;
    assert_int_equal(sqlite3_exec(o.db, "DELETE FROM t", NULL, NULL, NULL),
                     SQLITE_OK);
    compare(&o, t, "sum", 1, "SELECT sum(x) FROM t");
    compare(&o, t, "total", 1, "SELECT total(x) FROM t");
    compare(&o, t, "max", 1, "SELECT max(x) FROM t");
    compare(&o, t, "group_concat", 1, "SELECT group_concat(x) FROM t");
    compare(&o, t, "count", 0, "SELECT count(*) FROM t");
    common_free(t);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aggregate_edges_match_sqlite),
        cmocka_unit_test(aggregates_match_sqlite_on_random_tables),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
