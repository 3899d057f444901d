/* SPDX-License-Identifier: MIT
 *
 * Goal: the checker never hangs and never lies about what it could not
 * decide: a history whose search is exponential ends in CHECK_UNKNOWN
 * when the step, memory or time budget runs out, naming the key; a
 * violation on another key still wins; bad arguments are refused; and
 * running out of memory at any allocation returns COMMON_ENOMEM with
 * nothing leaked.
 * Method: a pathological key (many concurrent writes of distinct values,
 * then a read of a value nobody wrote: the memo cannot merge the 2^n
 * orders of the writes, and every one must be refuted), small budgets,
 * and the fault heap failing each allocation in turn.
 */
#include "check_test.h"

#include <errno.h>

/* Concurrent writes in the pathological key: 2^30 subsets to refute. */
#define BUDGET_WRITES 30

/* Fills ops with the pathological history on key; returns the count. */
static size_t budget_pathological(struct check_op *ops, int64_t key)
{
    size_t n = 0;

    for (int64_t i = 0; i < BUDGET_WRITES; i++) {
        ops[n++] = check_test_write(i, key, 100 + i, 0, 100);
    }
    ops[n++] = check_test_read(BUDGET_WRITES, key, 42, 200, 210);
    return n;
}

static int budget_run(const struct check_op *ops, size_t count,
                      uint64_t steps_max, uint64_t time_ms_max,
                      size_t memory_bytes_max, struct check_verdict *out)
{
    struct check_options options;

    check_options_init(&options);
    options.steps_max = steps_max;
    options.time_ms_max = time_ms_max;
    options.memory_bytes_max = memory_bytes_max;
    return check_linearizable(ops, count, &options, out);
}

static void steps_budget_gives_unknown(void **state)
{
    struct check_op ops[BUDGET_WRITES + 1];
    size_t n = budget_pathological(ops, 5);
    struct check_verdict v;

    (void)state;
    assert_int_equal(budget_run(ops, n, 100000, 60000, (size_t)1 << 30, &v), 0);
    assert_int_equal(v.result, CHECK_UNKNOWN);
    assert_int_equal(v.exhausted, CHECK_BUDGET_STEPS);
    assert_int_equal(v.key, 5);
    assert_int_equal(v.steps, 100000);
    assert_int_equal(v.keys_undecided, 1);
    assert_null(v.prefix);
    check_verdict_close(&v);
}

static void memory_budget_gives_unknown(void **state)
{
    struct check_op ops[BUDGET_WRITES + 1];
    size_t n = budget_pathological(ops, 5);
    struct check_verdict v;

    (void)state;
    assert_int_equal(budget_run(ops, n, UINT64_MAX, 60000, 64 << 10, &v), 0);
    assert_int_equal(v.result, CHECK_UNKNOWN);
    assert_int_equal(v.exhausted, CHECK_BUDGET_MEMORY);
    check_verdict_close(&v);
}

static void time_budget_gives_unknown(void **state)
{
    struct check_op ops[BUDGET_WRITES + 1];
    size_t n = budget_pathological(ops, 5);
    struct check_verdict v;

    (void)state;
    assert_int_equal(budget_run(ops, n, UINT64_MAX, 1, (size_t)1 << 40, &v), 0);
    assert_int_equal(v.result, CHECK_UNKNOWN);
    assert_int_equal(v.exhausted, CHECK_BUDGET_TIME);
    check_verdict_close(&v);
}

/* Undecided key 1, violation on key 2: the violation is the verdict; with
 * key 2 linearizable instead, the verdict is UNKNOWN, never a pass. */
static void violation_elsewhere_wins_over_unknown(void **state)
{
    struct check_op ops[BUDGET_WRITES + 3];
    size_t n = budget_pathological(ops, 1);
    struct check_verdict v;

    (void)state;
    ops[n++] = check_test_write(0, 2, 7, 0, 10);
    ops[n++] = check_test_read(1, 2, CHECK_ABSENT, 20, 30);
    assert_int_equal(budget_run(ops, n, 10000, 60000, (size_t)1 << 30, &v), 0);
    assert_int_equal(v.result, CHECK_NOT_LINEARIZABLE);
    assert_int_equal(v.key, 2);
    assert_int_equal(v.keys_count, 2);
    assert_int_equal(v.keys_undecided, 1);
    assert_int_equal(v.blocking, n - 1);
    check_verdict_close(&v);

    ops[n - 1].value = 7;
    assert_int_equal(budget_run(ops, n, 10000, 60000, (size_t)1 << 30, &v), 0);
    assert_int_equal(v.result, CHECK_UNKNOWN);
    assert_int_equal(v.key, 1);
    assert_int_equal(v.keys_checked, 2);
    check_verdict_close(&v);
}

static void bad_arguments_are_refused(void **state)
{
    struct check_op ops[] = {check_test_write(0, 1, 1, 10, 20)};
    struct check_verdict v = {.result = CHECK_UNKNOWN, .key = 77};

    (void)state;
    assert_int_equal(budget_run(ops, 1, 0, 1000, 1 << 20, &v), -EINVAL);
    assert_int_equal(budget_run(ops, 1, 1000, 0, 1 << 20, &v), -EINVAL);
    assert_int_equal(budget_run(ops, 1, 1000, 1000, 0, &v), -EINVAL);
    ops[0].complete_ns = 5;
    assert_int_equal(check_op_validate(&ops[0]), -EINVAL);
    assert_int_equal(budget_run(ops, 1, 1000, 1000, 1 << 20, &v), -EINVAL);
    ops[0].complete_ns = 20;
    ops[0].kind = (enum check_kind)7;
    assert_int_equal(budget_run(ops, 1, 1000, 1000, 1 << 20, &v), -EINVAL);
    ops[0].kind = CHECK_WRITE;
    ops[0].outcome = (enum check_outcome)9;
    assert_int_equal(budget_run(ops, 1, 1000, 1000, 1 << 20, &v), -EINVAL);
    /* Output parameters are written only on success. */
    assert_int_equal(v.key, 77);
}

/* Checks a small violating history with the fault heap failing the
 * fail_at-th allocation; returns the fault heap's failure count. */
static uint64_t budget_check_failing_at(uint64_t fail_at)
{
    const struct check_op ops[] = {
        check_test_write(0, 1, 1, 0, 10),
        check_test_unknown(check_test_write(1, 1, 2, 5, 10)),
        check_test_cas(2, 1, 1, 3, false, 12, 20),
        check_test_read(3, 1, 1, 30, 40),
        check_test_write(0, 2, 1, 0, 10),
        check_test_read(1, 2, 1, 20, 30),
    };
    struct common_heap saved;
    struct common_heap_fault fault;
    struct common_heap heap;
    struct check_verdict v;
    int rc;

    common_heap_get(&saved);
    common_heap_fault_init(&fault, fail_at, 1);
    heap = common_heap_fault_heap(&fault);
    common_heap_set(&heap);
    rc = check_linearizable(ops, 6, NULL, &v);
    common_heap_set(&saved);
    if (fault.failures == 0) {
        assert_int_equal(rc, 0);
        assert_int_equal(v.result, CHECK_NOT_LINEARIZABLE);
        assert_int_equal(v.key, 1);
        check_verdict_close(&v);
    } else {
        assert_int_equal(rc, COMMON_ENOMEM);
    }
    return fault.failures;
}

static void every_allocation_failure_is_survived(void **state)
{
    uint64_t fail_at = 1;

    (void)state;
    while (budget_check_failing_at(fail_at) > 0) {
        fail_at++;
    }
    assert_true(fail_at > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(steps_budget_gives_unknown),
        cmocka_unit_test(memory_budget_gives_unknown),
        cmocka_unit_test(time_budget_gives_unknown),
        cmocka_unit_test(violation_elsewhere_wins_over_unknown),
        cmocka_unit_test(bad_arguments_are_refused),
        cmocka_unit_test(every_allocation_failure_is_survived),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
