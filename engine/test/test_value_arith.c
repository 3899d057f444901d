/* SPDX-License-Identifier: MIT
 *
 * test_value_arith.c: engine__value_arith, _negate, _bit_not, _concat and
 * _truth give what SQLite 3.40's VDBE gives, storage class and bits.
 *
 * Method: one statement computes every operator on two bound parameters
 * (parameters have no affinity, so SQLite applies no conversion before
 * the operator, exactly like our functions):
 *   ?1+?2 ?1-?2 ?1*?2 ?1/?2 ?1%?2 ?1&?2 ?1|?2 ?1<<?2 ?1>>?2 -?1 ~?1
 *   ?1||?2 and CASE WHEN ?1 THEN 1 WHEN NOT ?1 THEN 0 ELSE -1 END.
 * Fixed pairs pin the brief's rules (overflow to REAL, INT64_MIN / -1,
 * INT64_MIN % -1, division by zero, REAL %, shifts past 63 and negative);
 * then 60,000 random pairs of every storage class, weighted to the edges.
 */
#include "test_value_oracle.h"

#define RANDOM_PAIR_COUNT 60000
#define COLUMN_COUNT 13

static const enum engine_arith_op binary_ops[] = {
    ENGINE_ARITH_ADD,    ENGINE_ARITH_SUBTRACT,   ENGINE_ARITH_MULTIPLY,
    ENGINE_ARITH_DIVIDE, ENGINE_ARITH_REMAINDER,  ENGINE_ARITH_BIT_AND,
    ENGINE_ARITH_BIT_OR, ENGINE_ARITH_SHIFT_LEFT, ENGINE_ARITH_SHIFT_RIGHT,
};
static const char *const column_names[COLUMN_COUNT] = {
    "+",  "-",  "*",       "/", "%",  "&",    "|",
    "<<", ">>", "unary -", "~", "||", "truth"};

struct fixture {
    sqlite3 *db;
    sqlite3_stmt *select;
    struct engine_arena arena;
};

static int fixture_setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));

    f->db = oracle_open();
    f->select = oracle_prepare(
        f->db, "SELECT ?1+?2, ?1-?2, ?1*?2, ?1/?2, ?1%?2, ?1&?2, ?1|?2, "
               "?1<<?2, ?1>>?2, -?1, ~?1, ?1||?2, "
               "CASE WHEN ?1 THEN 1 WHEN NOT ?1 THEN 0 ELSE -1 END");
    engine__arena_init(&f->arena);
    *state = f;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;

    engine__arena_close(&f->arena);
    sqlite3_finalize(f->select);
    sqlite3_close(f->db);
    test_free(f);
    return 0;
}

static void ours_all(struct fixture *f, const struct engine_value *a,
                     const struct engine_value *b,
                     struct engine_value out[COLUMN_COUNT])
{
    for (size_t i = 0; i < sizeof(binary_ops) / sizeof(binary_ops[0]); i++) {
        engine__value_arith(binary_ops[i], a, b, &out[i]);
    }
    engine__value_negate(a, &out[9]);
    engine__value_bit_not(a, &out[10]);
    assert_int_equal(engine__value_concat(a, b, &f->arena, &out[11]), 0);
    out[12] = engine__value_int(engine__value_truth(a));
}

static void check_pair(struct fixture *f, const struct engine_value *a,
                       const struct engine_value *b)
{
    struct engine_value ours[COLUMN_COUNT];
    char buf[2][200];

    ours_all(f, a, b, ours);
    oracle_bind(f->select, 1, a);
    oracle_bind(f->select, 2, b);
    oracle_step_row(f->select);
    for (int i = 0; i < COLUMN_COUNT; i++) {
        struct engine_value oracle = oracle_column(f->select, i);
        VALUE_ASSERT_EQUAL(&ours[i], &oracle, "a=%s b=%s op %s\n",
                           value_describe(a, buf[0], 200),
                           value_describe(b, buf[1], 200), column_names[i]);
    }
    oracle_reset(f->select);
}

static void arith_fixed(void **state)
{
    struct fixture *f = *state;
    const struct engine_value pairs[][2] = {
        {engine__value_int(INT64_MAX), engine__value_int(1)},
        {engine__value_int(INT64_MIN), engine__value_int(-1)},
        {engine__value_int(INT64_MIN), engine__value_int(1)},
        {engine__value_int(INT64_MAX), engine__value_int(INT64_MAX)},
        {engine__value_int(7), engine__value_int(0)},
        {engine__value_real(7.5), engine__value_real(0.0)},
        {engine__value_real(5.5), engine__value_int(2)},
        {engine__value_int(5), engine__value_real(0.5)},
        {engine__value_int(-7), engine__value_int(2)},
        {engine__value_int(1), engine__value_int(64)},
        {engine__value_int(-8), engine__value_int(-65)},
        {engine__value_int(-8), engine__value_int(1000)},
        {engine__value_int(3), engine__value_int(-2)},
        {engine__value_text("12abc", 5), engine__value_text("1e5", 3)},
        {engine__value_text("1e5", 3), engine__value_int(7)},
        {engine__value_text("abc", 3), engine__value_text("1.5x", 4)},
        {engine__value_text("9223372036854775807", 19), engine__value_int(1)},
        {engine__value_blob("12", 2), engine__value_int(3)},
        {engine__value_real(INFINITY), engine__value_real(-INFINITY)},
        {engine__value_real(0.0), engine__value_real(-0.0)},
        {engine__value_text("0x10", 4), engine__value_null()},
        {engine__value_null(), engine__value_int(1)},
        {engine__value_real(1e300), engine__value_real(1e300)},
        {engine__value_text("1x", 2), engine__value_text("", 0)},
    };

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        check_pair(f, &pairs[i][0], &pairs[i][1]);
        check_pair(f, &pairs[i][1], &pairs[i][0]);
    }
}

/* The brief's rules, spelled out once without the oracle. */
static void arith_rules(void **state)
{
    struct engine_value a = engine__value_int(INT64_MIN);
    struct engine_value b = engine__value_int(-1);
    struct engine_value out;

    (void)state;
    engine__value_arith(ENGINE_ARITH_DIVIDE, &a, &b, &out);
    assert_int_equal(out.type, ENGINE_FLOAT);
    assert_true(out.u.r == 9223372036854775808.0);
    engine__value_arith(ENGINE_ARITH_REMAINDER, &a, &b, &out);
    assert_int_equal(out.type, ENGINE_INTEGER);
    assert_int_equal(out.u.i, 0);
    engine__value_negate(&a, &out);
    assert_int_equal(out.type, ENGINE_FLOAT);
    a = engine__value_text("3x", 2);
    engine__value_negate(&a, &out);
    assert_int_equal(out.type, ENGINE_INTEGER);
    assert_int_equal(out.u.i, -3);
    a = engine__value_text("abc", 3);
    assert_int_equal(engine__value_truth(&a), 0);
    a = engine__value_text("1x", 2);
    assert_int_equal(engine__value_truth(&a), 1);
    a = engine__value_real(0.0);
    assert_int_equal(engine__value_truth(&a), 0);
    a = engine__value_null();
    assert_int_equal(engine__value_truth(&a), -1);
}

static void arith_random(void **state)
{
    struct fixture *f = *state;
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "arith_random");
    for (int i = 0; i < RANDOM_PAIR_COUNT; i++) {
        struct engine_value a = gen_value(&rng, &f->arena);
        struct engine_value b = gen_value(&rng, &f->arena);
        check_pair(f, &a, &b);
        engine__arena_reset(&f->arena);
    }
    printf("arith_random: %d pairs x %d operators, 0 mismatches\n",
           RANDOM_PAIR_COUNT, COLUMN_COUNT);
}

/* a || b past ENGINE_MAX_LENGTH is "too big"; nothing is allocated. */
static void concat_too_big(void **state)
{
    struct fixture *f = *state;
    struct engine_value a = engine__value_blob("x", ENGINE_MAX_LENGTH);
    struct engine_value b = engine__value_text("yz", 2);
    struct engine_value out = engine__value_int(5);

    assert_int_equal(engine__value_concat(&a, &b, &f->arena, &out),
                     ENGINE_ETOOBIG);
    assert_int_equal(out.type, ENGINE_INTEGER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arith_fixed),
        cmocka_unit_test(arith_rules),
        cmocka_unit_test(arith_random),
        cmocka_unit_test(concat_too_big),
    };

    return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
