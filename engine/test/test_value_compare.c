/* SPDX-License-Identifier: MIT
 *
 * test_value_compare.c: engine__value_compare (the order of datatype3
 * §4.1, with BINARY, NOCASE and RTRIM) and engine__comparison_prepare (the
 * affinity conversions of §4.2) agree with SQLite 3.40.
 *
 * Method: for the order, two bound parameters (no affinity, so SQLite
 * converts nothing) are compared with <, = and > under each collation;
 * for NULL, whose comparisons are NULL in SQL, ORDER BY decides. For the
 * affinity rules, a value is stored in a table whose columns have each
 * affinity (INT, TEXT, REAL, NUMERIC, BLOB, none), and the column is
 * compared with a bound parameter (no affinity) and with each other
 * column; we store with engine__value_apply_affinity, prepare with the
 * columns' affinities and compare. Fixed edge pairs, then 30,000 random
 * pairs for the order and 4,000 stored pairs for the affinities.
 */
#include "test_value_oracle.h"

#define RANDOM_ORDER_COUNT 30000
#define RANDOM_STORED_COUNT 4000

static const char *const collation_names[] = {"BINARY", "NOCASE", "RTRIM"};

/* Column name, affinity we give to engine__comparison_prepare. value.h's
 * BLOB means "no affinity" (an expression), which SQLite 3.40 tells apart
 * from a column of BLOB affinity (e BLOB, f untyped): TEXT column against
 * BLOB column converts nothing, TEXT column against an expression renders
 * numbers. value.h cannot express the first, so that pair is skipped
 * (see engine__comparison_prepare). */
static const struct {
    const char *name;
    enum engine_affinity affinity;
} columns[] = {
    {"a", ENGINE_AFFINITY_INTEGER}, {"b", ENGINE_AFFINITY_TEXT},
    {"c", ENGINE_AFFINITY_REAL},    {"d", ENGINE_AFFINITY_NUMERIC},
    {"e", ENGINE_AFFINITY_BLOB},    {"f", ENGINE_AFFINITY_BLOB},
};
#define COLUMN_COUNT 6

struct fixture {
    sqlite3 *db;
    sqlite3_stmt *order[3]; /* ?1 < ?2, ?1 = ?2, ?1 > ?2 per collation */
    sqlite3_stmt *sort;     /* which of ?1, ?2 sorts first */
    sqlite3_stmt *insert;   /* one value into every column */
    sqlite3_stmt *versus[COLUMN_COUNT]; /* column vs ?1 and vs others */
    struct engine_arena arena;
};

static int fixture_setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));
    char sql[512];

    f->db = oracle_open();
    for (int c = 0; c < 3; c++) {
        snprintf(sql, sizeof(sql),
                 "SELECT ?1 < ?2 COLLATE %s, ?1 = ?2 COLLATE %s, "
                 "?1 > ?2 COLLATE %s",
                 collation_names[c], collation_names[c], collation_names[c]);
        f->order[c] = oracle_prepare(f->db, sql);
    }
    f->sort = oracle_prepare(f->db, "SELECT k FROM (SELECT 1 AS k, ?1 AS v "
                                    "UNION ALL SELECT 2, ?2) ORDER BY v, k");
    oracle_exec(f->db, "CREATE TABLE t(a INT, b TEXT, c REAL, d NUMERIC, "
                       "e BLOB, f); CREATE TABLE u(a INT, b TEXT, c REAL, "
                       "d NUMERIC, e BLOB, f)");
    f->insert =
        oracle_prepare(f->db, "INSERT INTO t VALUES(?1,?1,?1,?1,?1,?1)");
    for (int c = 0; c < COLUMN_COUNT; c++) {
        const char *n = columns[c].name;
        snprintf(sql, sizeof(sql),
                 "SELECT t.%s < ?1, t.%s = ?1, t.%s > ?1, t.%s < u.a, "
                 "t.%s < u.b, t.%s < u.c, t.%s < u.d, t.%s = u.a, t.%s = u.b, "
                 "t.%s = u.c, t.%s = u.d FROM t, u",
                 n, n, n, n, n, n, n, n, n, n, n);
        f->versus[c] = oracle_prepare(f->db, sql);
    }
    engine__arena_init(&f->arena);
    *state = f;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;

    engine__arena_close(&f->arena);
    for (int c = 0; c < 3; c++) {
        sqlite3_finalize(f->order[c]);
    }
    for (int c = 0; c < COLUMN_COUNT; c++) {
        sqlite3_finalize(f->versus[c]);
    }
    sqlite3_finalize(f->sort);
    sqlite3_finalize(f->insert);
    sqlite3_close(f->db);
    test_free(f);
    return 0;
}

static int sign_of(int c)
{
    return (c > 0) - (c < 0);
}

/* The sign SQLite's three comparisons imply. */
static int oracle_order(sqlite3_stmt *stmt)
{
    oracle_step_row(stmt);
    int lt = sqlite3_column_int(stmt, 0);
    int eq = sqlite3_column_int(stmt, 1);
    int gt = sqlite3_column_int(stmt, 2);
    assert_int_equal(lt + eq + gt, 1);
    return gt - lt;
}

static void check_order(struct fixture *f, const struct engine_value *a,
                        const struct engine_value *b)
{
    char buf[2][200];

    for (int c = 0; c < 3; c++) {
        int ours =
            sign_of(engine__value_compare(a, b, (enum engine_collation)c));
        int oracle;
        if (a->type == ENGINE_NULL || b->type == ENGINE_NULL) {
            oracle_bind(f->sort, 1, a);
            oracle_bind(f->sort, 2, b);
            oracle_step_row(f->sort);
            oracle = sqlite3_column_int(f->sort, 0) == 1 ? -1 : 1;
            oracle = (a->type == b->type) ? 0 : oracle;
            oracle_reset(f->sort);
        } else {
            oracle_bind(f->order[c], 1, a);
            oracle_bind(f->order[c], 2, b);
            oracle = oracle_order(f->order[c]);
            oracle_reset(f->order[c]);
        }
        if (ours != oracle) {
            fail_msg("%s vs %s COLLATE %s: ours %d, sqlite %d",
                     value_describe(a, buf[0], 200),
                     value_describe(b, buf[1], 200), collation_names[c], ours,
                     oracle);
        }
    }
}

static void compare_fixed(void **state)
{
    const struct engine_value pairs[][2] = {
        {engine__value_int(INT64_MAX),
         engine__value_real(9223372036854775808.0)},
        {engine__value_int(INT64_MIN),
         engine__value_real(-9223372036854775808.0)},
        {engine__value_int((INT64_C(1) << 53) + 1),
         engine__value_real(9007199254740992.0)},
        {engine__value_int(3), engine__value_real(3.0)},
        {engine__value_real(-0.0), engine__value_int(0)},
        {engine__value_int(1), engine__value_real(INFINITY)},
        {engine__value_int(5), engine__value_text("5", 1)},
        {engine__value_text("abc", 3), engine__value_text("ABD", 3)},
        {engine__value_text("abc  ", 5), engine__value_text("abc", 3)},
        {engine__value_text("a\0b", 3), engine__value_text("A\0c", 3)},
        {engine__value_text("\xc3\xa9", 2), engine__value_text("\xc3\x89", 2)},
        {engine__value_text("z", 1), engine__value_blob("a", 1)},
        {engine__value_blob("ab", 2), engine__value_blob("a", 1)},
        {engine__value_blob("", 0), engine__value_blob("\0", 1)},
        {engine__value_null(), engine__value_int(INT64_MIN)},
        {engine__value_null(), engine__value_null()},
        {engine__value_text("a\t", 2), engine__value_text("a", 1)},
    };

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        check_order(*state, &pairs[i][0], &pairs[i][1]);
        check_order(*state, &pairs[i][1], &pairs[i][0]);
    }
}

static void compare_random(void **state)
{
    struct fixture *f = *state;
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "compare_random");
    for (int i = 0; i < RANDOM_ORDER_COUNT; i++) {
        struct engine_value a = gen_value(&rng, &f->arena);
        struct engine_value b = gen_value(&rng, &f->arena);
        check_order(f, &a, &b);
        engine__arena_reset(&f->arena);
    }
    printf("compare_random: %d pairs x 3 collations, 0 mismatches\n",
           RANDOM_ORDER_COUNT);
}

/* SQL's answer to "x < y" or "x = y" after our conversions: NULL (-1)
 * when either side is NULL. */
static int ours_relation(struct fixture *f, struct engine_value x,
                         enum engine_affinity x_affinity, struct engine_value y,
                         enum engine_affinity y_affinity, bool equal)
{
    if (x.type == ENGINE_NULL || y.type == ENGINE_NULL) {
        return -1;
    }
    assert_int_equal(
        engine__comparison_prepare(&x, x_affinity, &y, y_affinity, &f->arena),
        0);
    int c = engine__value_compare(&x, &y, ENGINE_COLLATION_BINARY);
    return equal ? c == 0 : c < 0;
}

static int oracle_relation(sqlite3_stmt *stmt, int column)
{
    if (sqlite3_column_type(stmt, column) == SQLITE_NULL) {
        return -1;
    }
    return sqlite3_column_int(stmt, column);
}

/* Stores v in every column of t (our side: apply_affinity) and w in u,
 * then checks each column of t against ?1 = p and against u's columns. */
static void check_stored(struct fixture *f, const struct engine_value *v,
                         const struct engine_value *w,
                         const struct engine_value *p)
{
    struct engine_value t_stored[COLUMN_COUNT], u_stored[COLUMN_COUNT];
    char buf[3][200];

    oracle_exec(f->db, "DELETE FROM t; DELETE FROM u");
    oracle_bind(f->insert, 1, v);
    assert_int_equal(sqlite3_step(f->insert), SQLITE_DONE);
    oracle_reset(f->insert);
    oracle_exec(f->db, "INSERT INTO u SELECT * FROM t; DELETE FROM t");
    oracle_bind(f->insert, 1, w);
    assert_int_equal(sqlite3_step(f->insert), SQLITE_DONE);
    oracle_reset(f->insert);
    for (int c = 0; c < COLUMN_COUNT; c++) {
        u_stored[c] = *v;
        t_stored[c] = *w;
        assert_int_equal(engine__value_apply_affinity(
                             &u_stored[c], columns[c].affinity, &f->arena),
                         0);
        assert_int_equal(engine__value_apply_affinity(
                             &t_stored[c], columns[c].affinity, &f->arena),
                         0);
    }
    for (int c = 0; c < COLUMN_COUNT; c++) {
        sqlite3_stmt *stmt = f->versus[c];
        oracle_bind(stmt, 1, p);
        oracle_step_row(stmt);
        for (int k = 0; k < 11; k++) {
            bool equal = k == 1 || k >= 7;
            int other = k < 3 ? -1 : (k - 3) % 4;
            int ours = other < 0
                           ? ours_relation(f, t_stored[c], columns[c].affinity,
                                           *p, ENGINE_AFFINITY_BLOB, equal)
                           : ours_relation(f, t_stored[c], columns[c].affinity,
                                           u_stored[other],
                                           columns[other].affinity, equal);
            if (other == 1 && columns[c].affinity == ENGINE_AFFINITY_BLOB) {
                continue; /* a BLOB column is not "no affinity" */
            }
            if (k == 2 && ours >= 0) {
                ours = ours_relation(f, *p, ENGINE_AFFINITY_BLOB, t_stored[c],
                                     columns[c].affinity, false);
            }
            if (ours != oracle_relation(stmt, k)) {
                fail_msg("column %s, term %d: t=%s u=%s ?1=%s: ours %d, "
                         "sqlite %d",
                         columns[c].name, k, value_describe(w, buf[0], 200),
                         value_describe(v, buf[1], 200),
                         value_describe(p, buf[2], 200), ours,
                         oracle_relation(stmt, k));
            }
        }
        oracle_reset(stmt);
    }
}

static void comparison_affinity_random(void **state)
{
    struct fixture *f = *state;
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "comparison_affinity_random");
    for (int i = 0; i < RANDOM_STORED_COUNT; i++) {
        struct engine_value v = gen_value(&rng, &f->arena);
        struct engine_value w = gen_value(&rng, &f->arena);
        struct engine_value p = gen_value(&rng, &f->arena);
        check_stored(f, &v, &w, &p);
        engine__arena_reset(&f->arena);
    }
    printf("comparison_affinity_random: %d triples x 6 columns x 11 "
           "comparisons, 0 mismatches\n",
           RANDOM_STORED_COUNT);
}

static void comparison_affinity_fixed(void **state)
{
    const struct engine_value values[] = {
        engine__value_text("12", 2),  engine__value_int(12),
        engine__value_real(12.0),     engine__value_text(" 12 ", 4),
        engine__value_text("1e1", 3), engine__value_real(0.1),
        engine__value_text("0.1", 3), engine__value_text("abc", 3),
        engine__value_blob("12", 2),
    };
    size_t n = sizeof(values) / sizeof(values[0]);

    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            check_stored(*state, &values[i], &values[j], &values[(i + j) % n]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_fixed),
        cmocka_unit_test(compare_random),
        cmocka_unit_test(comparison_affinity_fixed),
        cmocka_unit_test(comparison_affinity_random),
    };

    return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
