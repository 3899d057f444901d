/* SPDX-License-Identifier: MIT
 *
 * Goal: the checker gives the textbook verdict on the classic small
 * histories of the literature (Porcupine's README, Knossos' and Jepsen's
 * register examples, etcd's unknown-outcome rules), and explains a
 * violation by naming the key and the operation that cannot be placed.
 * Method: hand-written histories on one register (key 1) with known
 * answers, drawn as timelines in each test's comment; times are abstract.
 */
#include "check_test.h"

#include <string.h>

#define N(ops) (sizeof(ops) / sizeof((ops)[0]))
#define NIL CHECK_ABSENT

/* Porcupine README, first example (initial 0):
 *   C0: |-- put 100 ----------------------|   [0, 100]
 *   C1:      |-- get -> 100 ------|           [25, 75]
 *   C2:        |-- get -> 0 --|               [30, 60]
 * get 0 at 30, put at 50, get 100 at 70. */
static void porcupine_concurrent_put_get_is_linearizable(void **state)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 100, 0, 100),
        check_test_read(1, 1, 100, 25, 75),
        check_test_read(2, 1, 0, 30, 60),
    };

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), 0, NULL), CHECK_LINEARIZABLE);
}

/* Porcupine README, second example (initial 0): get -> 200 completes at 30
 * before get -> 0 starts at 40, so the put is before both, and the second
 * get's 0 is a stale read.
 *   C0: |-- put 200 ----------------------|   [0, 100]
 *   C1:   |-- get -> 200 --|                  [10, 30]
 *   C2:                       |-- get -> 0 --|  [40, 90] */
static void porcupine_stale_read_is_not_linearizable(void **state)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 200, 0, 100),
        check_test_read(1, 1, 200, 10, 30),
        check_test_read(2, 1, 0, 40, 90),
    };
    struct check_verdict v;

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), 0, &v),
                     CHECK_NOT_LINEARIZABLE);
    assert_int_equal(v.key, 1);
    assert_int_equal(v.blocking, 2);
    assert_int_equal(v.state, 200);
    assert_int_equal(v.prefix_count, 2);
    assert_int_equal(v.prefix[0], 0);
    assert_int_equal(v.prefix[1], 1);
    assert_int_equal(v.unplaced_count, 1);
    assert_int_equal(v.unplaced[0], 2);
    check_verdict_close(&v);
}

/* Two reads during one write may see old then new, never new then old.
 *   W: |-- write 1 -------------------|
 *   A:   |-- read --|   |-- read --|      */
static void reads_during_a_write_see_old_then_new(void **state)
{
    const struct check_op old_new[] = {
        check_test_write(0, 1, 1, 0, 100),
        check_test_read(1, 1, NIL, 10, 20),
        check_test_read(1, 1, 1, 30, 40),
    };
    const struct check_op new_old[] = {
        check_test_write(0, 1, 1, 0, 100),
        check_test_read(1, 1, 1, 10, 20),
        check_test_read(2, 1, NIL, 30, 40),
    };

    (void)state;
    assert_int_equal(check_test_run(old_new, N(old_new), NIL, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(new_old, N(new_old), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
}

/* A read of a value nobody wrote (Knossos' "read of 42"). */
static void read_of_value_never_written_is_not_linearizable(void **state)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_read(1, 1, 42, 5, 20),
    };

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
}

/* A cas that succeeds on a value already overwritten (Knossos' cas
 * register): write 1, then write 2, then cas(1 -> 3) ok. */
static void cas_succeeding_on_stale_value_is_not_linearizable(void **state)
{
    const struct check_op stale[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_write(1, 1, 2, 20, 30),
        check_test_cas(2, 1, 1, 3, true, 40, 50),
    };
    const struct check_op concurrent[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_write(1, 1, 2, 20, 45),
        check_test_cas(2, 1, 1, 3, true, 40, 50),
        check_test_read(0, 1, 2, 60, 70),
    };

    (void)state;
    assert_int_equal(check_test_run(stale, N(stale), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
    /* When write 2 overlaps the cas, cas first then write 2 works. */
    assert_int_equal(check_test_run(concurrent, N(concurrent), NIL, NULL),
                     CHECK_LINEARIZABLE);
}

/* A cas that reports failure must have seen another value. */
static void cas_failure_needs_another_value(void **state)
{
    const struct check_op wrong[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_cas(1, 1, 1, 5, false, 20, 30),
    };
    const struct check_op right[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_write(2, 1, 2, 15, 35),
        check_test_cas(1, 1, 1, 5, false, 20, 30),
        check_test_cas(1, 1, 2, 6, true, 40, 50),
        check_test_read(2, 1, 6, 60, 70),
    };

    (void)state;
    assert_int_equal(check_test_run(wrong, N(wrong), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
    assert_int_equal(check_test_run(right, N(right), NIL, NULL),
                     CHECK_LINEARIZABLE);
}

/* An acknowledged write that a later read does not see was lost. */
static void lost_acknowledged_write_is_not_linearizable(void **state)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 7, 0, 10),
        check_test_read(1, 1, NIL, 20, 30),
    };

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
}

/* An unknown-outcome write may appear long after its client gave up, or
 * never; once seen it stays (unless overwritten). */
static void unknown_write_may_appear_late_or_never(void **state)
{
    const struct check_op late[] = {
        check_test_unknown(check_test_write(0, 1, 5, 10, 20)),
        check_test_read(1, 1, NIL, 30, 40),
        check_test_read(1, 1, 5, 1000, 1010),
        check_test_read(2, 1, 5, 2000, 2010),
    };
    const struct check_op never[] = {
        check_test_unknown(check_test_write(0, 1, 5, 10, 20)),
        check_test_read(1, 1, NIL, 1000, 1010),
    };
    const struct check_op flickers[] = {
        check_test_unknown(check_test_write(0, 1, 5, 10, 20)),
        check_test_read(1, 1, 5, 30, 40),
        check_test_read(1, 1, NIL, 50, 60),
    };

    (void)state;
    assert_int_equal(check_test_run(late, N(late), NIL, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(never, N(never), NIL, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(flickers, N(flickers), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
}

/* An unknown write cannot take effect before it was invoked. */
static void unknown_write_cannot_precede_its_invocation(void **state)
{
    const struct check_op ops[] = {
        check_test_read(1, 1, 5, 0, 5),
        check_test_unknown(check_test_write(0, 1, 5, 10, 20)),
    };
    struct check_verdict v;

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), NIL, &v),
                     CHECK_NOT_LINEARIZABLE);
    assert_int_equal(v.blocking, 0);
    assert_int_equal(v.prefix_count, 0);
    check_verdict_close(&v);
}

/* An unknown cas applies only if its expected value was there; an unknown
 * read constrains nothing, even an impossible one. */
static void unknown_cas_and_unknown_read(void **state)
{
    const struct check_op applied[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_unknown(check_test_cas(1, 1, 1, 2, false, 20, 30)),
        check_test_read(2, 1, 2, 100, 110),
    };
    const struct check_op impossible[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_unknown(check_test_cas(1, 1, 9, 2, false, 20, 30)),
        check_test_read(2, 1, 2, 100, 110),
    };
    const struct check_op unknown_read[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_unknown(check_test_read(1, 1, 77, 20, 30)),
    };

    (void)state;
    assert_int_equal(check_test_run(applied, N(applied), NIL, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(impossible, N(impossible), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
    assert_int_equal(check_test_run(unknown_read, N(unknown_read), NIL, NULL),
                     CHECK_LINEARIZABLE);
}

/* Intervals that touch count as concurrent (the conservative choice), and
 * the caller's initial value is what an unwritten key holds. */
static void touching_intervals_and_initial_value(void **state)
{
    const struct check_op touching[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_read(1, 1, NIL, 10, 20),
    };
    const struct check_op initial[] = {
        check_test_read(1, 1, 0, 0, 10),
        check_test_cas(1, 1, 0, 1, true, 20, 30),
    };

    (void)state;
    assert_int_equal(check_test_run(touching, N(touching), NIL, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(initial, N(initial), 0, NULL),
                     CHECK_LINEARIZABLE);
    assert_int_equal(check_test_run(initial, N(initial), NIL, NULL),
                     CHECK_NOT_LINEARIZABLE);
}

/* A write of CHECK_ABSENT deletes; cas from absent inserts. */
static void delete_and_insert_if_absent(void **state)
{
    const struct check_op ops[] = {
        check_test_cas(0, 1, NIL, 4, true, 0, 10),
        check_test_write(1, 1, NIL, 20, 30),
        check_test_read(0, 1, NIL, 40, 50),
        check_test_cas(2, 1, NIL, 8, true, 60, 70),
        check_test_cas(3, 1, NIL, 9, false, 80, 90),
    };

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), NIL, NULL),
                     CHECK_LINEARIZABLE);
}

/* An empty history and a history of only unknown reads are linearizable. */
static void empty_histories(void **state)
{
    const struct check_op ops[] = {
        check_test_unknown(check_test_read(1, 1, 5, 0, 5)),
    };
    struct check_verdict v;

    (void)state;
    assert_int_equal(check_test_run(NULL, 0, NIL, &v), CHECK_LINEARIZABLE);
    assert_int_equal(v.keys_count, 0);
    check_verdict_close(&v);
    assert_int_equal(check_test_run(ops, N(ops), NIL, NULL),
                     CHECK_LINEARIZABLE);
}

/* The explanation names the key, the prefix, the value after it and why
 * the stale read cannot be placed. */
static void explanation_shows_the_stale_read(void **state)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 200, 0, 100),
        check_test_read(1, 1, 200, 10, 30),
        check_test_read(2, 1, 0, 40, 90),
    };
    struct check_verdict v;
    char *text = NULL;
    size_t size = 0;
    FILE *out;

    (void)state;
    assert_int_equal(check_test_run(ops, N(ops), 0, &v),
                     CHECK_NOT_LINEARIZABLE);
    out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(check_verdict_print(&v, ops, N(ops), out), 0);
    fclose(out);
    assert_non_null(strstr(text, "not linearizable: key 1"));
    assert_non_null(strstr(text, "#0 client 0 write(1, 200) [0, 100]"));
    assert_non_null(strstr(text, "value of key 1 after the prefix: 200"));
    assert_non_null(strstr(text, "#2 client 2 read(1) -> 0 [40, 90]"));
    assert_non_null(strstr(text, "returned 0, but the value is 200"));
    free(text);
    check_verdict_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(porcupine_concurrent_put_get_is_linearizable),
        cmocka_unit_test(porcupine_stale_read_is_not_linearizable),
        cmocka_unit_test(reads_during_a_write_see_old_then_new),
        cmocka_unit_test(read_of_value_never_written_is_not_linearizable),
        cmocka_unit_test(cas_succeeding_on_stale_value_is_not_linearizable),
        cmocka_unit_test(cas_failure_needs_another_value),
        cmocka_unit_test(lost_acknowledged_write_is_not_linearizable),
        cmocka_unit_test(unknown_write_may_appear_late_or_never),
        cmocka_unit_test(unknown_write_cannot_precede_its_invocation),
        cmocka_unit_test(unknown_cas_and_unknown_read),
        cmocka_unit_test(touching_intervals_and_initial_value),
        cmocka_unit_test(delete_and_insert_if_absent),
        cmocka_unit_test(empty_histories),
        cmocka_unit_test(explanation_shows_the_stale_read),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
