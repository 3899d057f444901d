/* SPDX-License-Identifier: MIT
 *
 * test_jit_diff.c: the JIT's differential test (issue 11). Random
 * filter/aggregate queries run three ways: sinew with the JIT on, the same
 * prepared statement again with PRAGMA jit = off (the interpreter), and C
 * SQLite. All three outcomes (column names, every value with its storage
 * class, or the error message) must be equal.
 *
 * The tables are built to reach every path of op_jit.c: more rows than
 * one zone block (65,536) so a query spans blocks, clean blocks (no
 * deleted row, no NULL) and checked ones, values near the int64 limits so
 * sum() overflows (an error in SQLite, a bail-out in the kernel) or only
 * its positive part does, a column that stops being all integers (the
 * kernel must step aside), a table below the JIT's size threshold, and
 * parameters that are not integers. The test also requires that the JIT
 * really served a share of the queries and really fell back on others, so
 * it cannot pass by never running compiled code.
 */
#include "common_test.h"

#include <inttypes.h>

#include "sqlite_pair.h"

#define MAX_PARAMS 16
#define SQL_SIZE 4096

struct param {
    int type; /* ENGINE_INTEGER, ENGINE_FLOAT, ENGINE_TEXT, ENGINE_NULL */
    int64_t i;
    double r;
    char text[24];
};

struct query {
    char sql[SQL_SIZE];
    struct param params[MAX_PARAMS];
    int param_count;
};

struct run {
    struct pair pair;
    struct common_test_rng rng;
    uint64_t compiled;  /* queries the JIT answered with code */
    uint64_t fell_back; /* queries of a JIT plan it left to the interpreter */
    uint64_t queries;
};

/* ---- tables ---- */

/* The columns a query reads: id is the rowid, d has no declared type
 * (BLOB affinity), e is TEXT (the JIT leaves it to the interpreter). */
static const char *const columns[] = {"id", "a", "b", "c", "d", "e"};
#define COLUMN_COUNT (sizeof(columns) / sizeof(columns[0]))

enum value_style { SMALL, EXTREME, ALTERNATING };

static void exec_both(struct run *r, const char *sql)
{
    char *error = NULL;

    assert_int_equal(sqlite3_exec(r->pair.oracle, sql, NULL, NULL, &error),
                     SQLITE_OK);
    if (engine_exec(r->pair.db, sql, NULL, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(r->pair.db));
    }
}

static int64_t value_for(struct run *r, enum value_style style, int64_t row)
{
    switch (style) {
    case EXTREME:
        return (int64_t)(common_test_rng_below(&r->rng, 2) ? 1 : -1) *
               (INT64_MAX / 4 + (int64_t)common_test_rng_below(&r->rng, 1000));
    case ALTERNATING: /* running sums stay in range, the positives do not */
        return row % 2 ? INT64_MAX - 5 : -(INT64_MAX - 5);
    default:
        return (int64_t)common_test_rng_below(&r->rng, 2001) - 1000;
    }
}

/* Binds one value of the row in both; NULL with probability nulls%. */
static void bind_both(struct run *r, sqlite3_stmt *oracle,
                      struct engine_stmt *stmt, int index, int64_t value,
                      unsigned nulls)
{
    if (nulls > 0 && common_test_rng_below(&r->rng, 100) < nulls) {
        sqlite3_bind_null(oracle, index);
        engine_bind_null(stmt, index);
        return;
    }
    sqlite3_bind_int64(oracle, index, value);
    engine_bind_int64(stmt, index, value);
}

/* t(id, a, b, c, d, e) with rows rows; nulls% of a, c and d NULL. */
static void build_table(struct run *r, int64_t rows, unsigned nulls,
                        enum value_style c_style)
{
    static const char *const insert =
        "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, 'row' || ?1)";
    sqlite3_stmt *oracle = NULL;
    struct engine_stmt *stmt = NULL;

    exec_both(r, "DROP TABLE IF EXISTS t");
    exec_both(r, "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, "
                 "b INT, c INTEGER, d, e TEXT)");
    exec_both(r, "BEGIN");
    assert_int_equal(
        sqlite3_prepare_v2(r->pair.oracle, insert, -1, &oracle, NULL),
        SQLITE_OK);
    assert_int_equal(engine_prepare(r->pair.db, insert, -1, &stmt, NULL), 0);
    for (int64_t row = 1; row <= rows; row++) {
        bind_both(r, oracle, stmt, 1, row, 0);
        bind_both(r, oracle, stmt, 2, value_for(r, SMALL, row), nulls);
        bind_both(r, oracle, stmt, 3,
                  (int64_t)common_test_rng_below(&r->rng, 20), 0);
        bind_both(r, oracle, stmt, 4, value_for(r, c_style, row),
                  c_style == ALTERNATING ? 0 : nulls);
        bind_both(r, oracle, stmt, 5, value_for(r, SMALL, row), nulls);
        assert_int_equal(sqlite3_step(oracle), SQLITE_DONE);
        assert_int_equal(engine_step(stmt), ENGINE_DONE);
        sqlite3_reset(oracle);
        engine_reset(stmt);
    }
    sqlite3_finalize(oracle);
    engine_finalize(stmt);
    exec_both(r, "COMMIT");
}

/* ---- queries ---- */

static void add(struct query *q, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void add(struct query *q, const char *format, ...)
{
    size_t used = strlen(q->sql);
    va_list args;

    va_start(args, format);
    vsnprintf(q->sql + used, sizeof(q->sql) - used, format, args);
    va_end(args);
}

/* A column; rarely e, which keeps the query in the interpreter. */
static const char *column(struct run *r)
{
    return common_test_rng_below(&r->rng, 20) == 0
               ? columns[COLUMN_COUNT - 1]
               : columns[common_test_rng_below(&r->rng, COLUMN_COUNT - 1)];
}

/* A value: a literal or a new parameter, mostly an integer. */
static void value(struct run *r, struct query *q)
{
    uint64_t pick = common_test_rng_below(&r->rng, 100);
    int64_t i = (int64_t)common_test_rng_below(&r->rng, 2401) - 1200;

    if (pick < 30 || q->param_count == MAX_PARAMS) {
        add(q, "%" PRId64, i);
        return;
    }
    if (pick < 32) {
        add(q, "%s", pick < 31 ? "NULL" : "'7'");
        return;
    }
    struct param *p = &q->params[q->param_count++];

    p->type = ENGINE_INTEGER;
    p->i = i;
    if (pick > 96) {
        p->type = pick == 97   ? ENGINE_NULL
                  : pick == 98 ? ENGINE_FLOAT
                               : ENGINE_TEXT;
        p->r = (double)i + 0.5;
        snprintf(p->text, sizeof(p->text), "%" PRId64, i);
    }
    add(q, "?%d", q->param_count);
}

static void predicate(struct run *r, struct query *q, int depth)
{
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">=", "!="};
    uint64_t pick = common_test_rng_below(&r->rng, depth > 0 ? 10 : 7);

    switch (pick) {
    case 0:
    case 1:
        add(q, "%s %s ", column(r), ops[common_test_rng_below(&r->rng, 7)]);
        value(r, q);
        return;
    case 2:
        add(q, "%s %s %s", column(r), ops[common_test_rng_below(&r->rng, 7)],
            column(r));
        return;
    case 3:
        add(q, "%s IS %sNULL", column(r),
            common_test_rng_below(&r->rng, 2) ? "NOT " : "");
        return;
    case 4:
        add(q, "%s %sIN (", column(r),
            common_test_rng_below(&r->rng, 3) == 0 ? "NOT " : "");
        for (uint64_t n = 1 + common_test_rng_below(&r->rng, 4); n > 0; n--) {
            value(r, q);
            add(q, "%s", n > 1 ? ", " : ")");
        }
        return;
    case 5:
        add(q, "%s %sBETWEEN ", column(r),
            common_test_rng_below(&r->rng, 4) == 0 ? "NOT " : "");
        value(r, q);
        add(q, " AND ");
        value(r, q);
        return;
    case 6:
        add(q, "%d < %s", (int)common_test_rng_below(&r->rng, 20), column(r));
        return;
    case 7:
        add(q, "NOT (");
        predicate(r, q, depth - 1);
        add(q, ")");
        return;
    default:
        add(q, "(");
        predicate(r, q, depth - 1);
        add(q, pick == 8 ? ") AND (" : ") OR (");
        predicate(r, q, depth - 1);
        add(q, ")");
        return;
    }
}

static void make_query(struct run *r, struct query *q)
{
    static const char *const aggregates[] = {
        "count(*)", "count", "sum", "min", "max", "sum", "max", "total"};
    uint64_t n = 1 + common_test_rng_below(&r->rng, 3);

    q->sql[0] = '\0';
    q->param_count = 0;
    add(q, "SELECT ");
    for (uint64_t i = 0; i < n; i++) {
        const char *agg = aggregates[common_test_rng_below(&r->rng, 8)];

        if (strcmp(agg, "count(*)") == 0) {
            add(q, "%scount(*)", i ? ", " : "");
        } else {
            add(q, "%s%s(%s)", i ? ", " : "", agg, column(r));
        }
    }
    add(q, " FROM t");
    if (common_test_rng_below(&r->rng, 8) != 0) {
        add(q, " WHERE ");
        predicate(r, q, (int)common_test_rng_below(&r->rng, 4));
    }
}

/* ---- running ---- */

static void bind_oracle(sqlite3_stmt *stmt, const void *ctx)
{
    const struct query *q = ctx;

    for (int i = 0; i < q->param_count; i++) {
        const struct param *p = &q->params[i];

        if (p->type == ENGINE_INTEGER) {
            sqlite3_bind_int64(stmt, i + 1, p->i);
        } else if (p->type == ENGINE_FLOAT) {
            sqlite3_bind_double(stmt, i + 1, p->r);
        } else if (p->type == ENGINE_TEXT) {
            sqlite3_bind_text(stmt, i + 1, p->text, -1, SQLITE_TRANSIENT);
        }
    }
}

static void bind_engine(struct engine_stmt *stmt, const struct query *q)
{
    for (int i = 0; i < q->param_count; i++) {
        const struct param *p = &q->params[i];

        if (p->type == ENGINE_INTEGER) {
            engine_bind_int64(stmt, i + 1, p->i);
        } else if (p->type == ENGINE_FLOAT) {
            engine_bind_double(stmt, i + 1, p->r);
        } else if (p->type == ENGINE_TEXT) {
            engine_bind_text(stmt, i + 1, p->text, -1);
        }
    }
}

/* One execution of the prepared statement; its JIT use in *use. */
static void engine_run(struct engine_db *db, struct engine_stmt *stmt,
                       char *out, enum engine_jit_use *use)
{
    int rc;

    out[0] = '\0';
    for (int c = 0; c < engine_column_count(stmt); c++) {
        outcome_add(out, "%s%s", c ? "|" : "columns ",
                    engine_column_name(stmt, c));
    }
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        outcome_add(out, "\nrow");
        for (int c = 0; c < engine_column_count(stmt); c++) {
            int type = engine_column_type(stmt, c);

            outcome_value(out, type, engine_column_text(stmt, c));
        }
    }
    if (rc != ENGINE_DONE) {
        outcome_add(out, "\nerror: %s", engine_errmsg(db));
    }
    *use = engine_stmt_jit_use(stmt);
    engine_reset(stmt);
}

static void set_jit(struct run *r, bool on)
{
    assert_int_equal(engine_exec(r->pair.db,
                                 on ? "PRAGMA jit = on" : "PRAGMA jit = off",
                                 NULL, NULL),
                     0);
}

/* The query three ways; fails on any difference. */
static void run_three_ways(struct run *r, const struct query *q)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char jit[PAIR_OUTCOME_SIZE];
    static char interpreter[PAIR_OUTCOME_SIZE];
    struct engine_stmt *stmt = NULL;
    struct engine_jit_stats before, after;
    enum engine_jit_use use, unused;

    oracle_outcome_bound(r->pair.oracle, q->sql, bind_oracle, q, expected);
    if (engine_prepare(r->pair.db, q->sql, -1, &stmt, NULL) != 0) {
        fail_msg("%s: %s", q->sql, engine_errmsg(r->pair.db));
    }
    bind_engine(stmt, q);
    engine_jit_stats(r->pair.db, &before);
    set_jit(r, true);
    engine_run(r->pair.db, stmt, jit, &use);
    engine_jit_stats(r->pair.db, &after);
    set_jit(r, false);
    engine_run(r->pair.db, stmt, interpreter, &unused);
    set_jit(r, true);
    engine_finalize(stmt);
    if (strcmp(expected, jit) != 0 || strcmp(expected, interpreter) != 0) {
        fail_msg("%s\n-- sqlite:%s\n-- sinew JIT (%d):%s\n-- sinew "
                 "interpreter:%s",
                 q->sql, expected, (int)use, jit, interpreter);
    }
    assert_int_equal(unused, ENGINE_JIT_UNUSED);
    r->queries++;
    r->compiled += use == ENGINE_JIT_COMPILED;
    r->fell_back += after.runs_interpreted - before.runs_interpreted;
}

static void run_queries(struct run *r, int count)
{
    struct query q;

    for (int i = 0; i < count; i++) {
        make_query(r, &q);
        run_three_ways(r, &q);
    }
}

static void run_open(struct run *r, const char *name)
{
    memset(r, 0, sizeof(*r));
    pair_open(&r->pair);
    common_test_rng_seed(&r->rng, name);
}

/* ---- tests ---- */

/* Two zone blocks, all clean, then NULLs, deletes and updates. */
static void jit_matches_on_clean_and_checked_blocks(void **state)
{
    struct run r;

    (void)state;
    run_open(&r, "jit_matches_on_clean_and_checked_blocks");
    build_table(&r, 70000, 0, SMALL);
    run_queries(&r, 150);
    exec_both(&r, "UPDATE t SET a = NULL WHERE id % 13 = 0");
    exec_both(&r, "DELETE FROM t WHERE id % 17 = 3");
    exec_both(&r, "UPDATE t SET id = id + 100000 WHERE id % 101 = 7");
    run_queries(&r, 150);
    pair_close(&r.pair);
    printf("%" PRIu64 " queries, %" PRIu64 " compiled, %" PRIu64
           " left to the interpreter\n",
           r.queries, r.compiled, r.fell_back);
    assert_true(r.compiled * 3 >= r.queries);
    assert_true(r.fell_back > 0);
}

/* sum() near the int64 limits: SQLite's overflow error, and sums whose
 * positive part overflows while every running total stays in range. */
static void jit_matches_on_overflowing_sums(void **state)
{
    struct run r;
    struct query q = {0};

    (void)state;
    run_open(&r, "jit_matches_on_overflowing_sums");
    build_table(&r, 5000, 5, EXTREME);
    snprintf(q.sql, sizeof(q.sql), "SELECT sum(c), count(*) FROM t");
    run_three_ways(&r, &q);
    snprintf(q.sql, sizeof(q.sql), "SELECT sum(c) FROM t WHERE c > 0");
    run_three_ways(&r, &q);
    run_queries(&r, 100);
    build_table(&r, 5000, 0, ALTERNATING);
    snprintf(q.sql, sizeof(q.sql), "SELECT sum(c), min(c), max(c) FROM t");
    run_three_ways(&r, &q);
    pair_close(&r.pair);
    assert_true(r.compiled > 0);
    assert_true(r.fell_back > 0);
}

/* A column that takes a REAL, and a table below the size threshold. */
static void jit_steps_aside(void **state)
{
    struct run r;
    struct query q = {0};

    (void)state;
    run_open(&r, "jit_steps_aside");
    build_table(&r, 1000, 10, SMALL);
    snprintf(q.sql, sizeof(q.sql),
             "SELECT count(*), sum(a) FROM t WHERE a > 0");
    run_three_ways(&r, &q);
    assert_int_equal(r.compiled, 0);
    build_table(&r, 20000, 10, SMALL);
    run_three_ways(&r, &q);
    assert_int_equal(r.compiled, 1);
    exec_both(&r, "UPDATE t SET a = 2.5 WHERE id = 77");
    run_three_ways(&r, &q);
    assert_int_equal(r.compiled, 1);
    run_queries(&r, 60);
    pair_close(&r.pair);
}

/* The first column of the single row sql gives, as an integer. */
static int64_t scalar(struct engine_db *db, const char *sql, int column)
{
    struct engine_stmt *stmt = NULL;
    int64_t value;

    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    value = engine_column_int64(stmt, column);
    engine_finalize(stmt);
    return value;
}

/* PRAGMA jit and jit_stats: read back, switch, count, refuse a typo. */
static void jit_pragma(void **state)
{
    struct run r;

    (void)state;
    run_open(&r, "jit_pragma");
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit", 0), 1);
    set_jit(&r, false);
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit", 0), 0);
    assert_true(engine_exec(r.pair.db, "PRAGMA jit = maybe", NULL, NULL) < 0);
    assert_non_null(strstr(engine_errmsg(r.pair.db), "on or off"));
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit", 0), 0);
    build_table(&r, 10000, 0, SMALL);
    assert_true(scalar(r.pair.db, "SELECT count(*) FROM t WHERE a > 0", 0) > 0);
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit_stats", 0),
                     0); /* compiles */
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit_stats", 4), 1); /* interp. */
    set_jit(&r, true);
    assert_true(scalar(r.pair.db, "SELECT count(*) FROM t WHERE a > 0", 0) > 0);
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit_stats", 0), 1);
    assert_true(scalar(r.pair.db, "PRAGMA jit_stats", 1) > 0); /* its ns */
    /* the statement was finalized: its code is freed */
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit_stats", 2), 0);
    assert_int_equal(scalar(r.pair.db, "PRAGMA jit_stats", 3), 1); /* runs */
    pair_close(&r.pair);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jit_matches_on_clean_and_checked_blocks),
        cmocka_unit_test(jit_matches_on_overflowing_sums),
        cmocka_unit_test(jit_steps_aside),
        cmocka_unit_test(jit_pragma),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
