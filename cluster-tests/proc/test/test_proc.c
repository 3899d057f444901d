/* SPDX-License-Identifier: MIT
 *
 * test_proc.c: the parts of chaos-proc that need no processes, root or
 * network: the fault schedule (a function of the seed; faults never
 * overlap; the last one lasts to the end of the workload) and the
 * verdicts, which must fail when the history says so (a lost
 * acknowledged insert, a phantom row, a refused insert that shows up, a
 * stale read in quorum mode, a read of a value nobody wrote).
 */
#include "common_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_proc.h"

static struct chaos_fault faults_a[CHAOS_FAULTS_MAX];
static struct chaos_fault faults_b[CHAOS_FAULTS_MAX];
static struct chaos_run_result result;

static void test_schedule(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 300; seed++) {
        int64_t duration_ms = 15000 + (int64_t)(seed % 7) * 30000;
        size_t nodes = 3 + seed % 3;
        size_t count = chaos_schedule_plan(seed, duration_ms, nodes, faults_a);
        assert_int_equal(
            chaos_schedule_plan(seed, duration_ms, nodes, faults_b), count);
        assert_true(count >= 1);
        int64_t free_from_ms = 2000;
        for (size_t i = 0; i < count; i++) {
            const struct chaos_fault *f = &faults_a[i];
            assert_memory_equal(f, &faults_b[i], sizeof *f);
            assert_true(f->start_ms >= free_from_ms);
            assert_true(f->length_ms >= 3000 || i + 1 == count);
            assert_true(f->kind < CHAOS_FAULT_KIND_COUNT);
            assert_true(f->target >= 0 && (size_t)f->target < nodes);
            assert_true(f->other >= 0 && (size_t)f->other < nodes);
            assert_int_not_equal(f->other, f->target);
            free_from_ms = f->start_ms + f->length_ms + 3000;
        }
        const struct chaos_fault *last = &faults_a[count - 1];
        assert_int_equal(last->start_ms + last->length_ms, duration_ms);
    }
}

static void result_reset(const char *dir)
{
    memset(&result, 0, sizeof result);
    result.is_passed = true;
    snprintf(result.config.dir, sizeof result.config.dir, "%s", dir);
}

static void test_crdt_verdict(void **state)
{
    (void)state;
    struct chaos_insert inserts[] = {
        {.id = 1, .outcome = CHAOS_SQL_OK},
        {.id = 2, .outcome = CHAOS_SQL_OK},
        {.id = 3, .outcome = CHAOS_SQL_FAILED},
        {.id = 4, .outcome = CHAOS_SQL_UNKNOWN},
    };
    struct chaos_workload w = {.inserts = inserts, .insert_count = 4};
    const int64_t good[] = {1, 2, 4}, good_without_unknown[] = {1, 2};
    const int64_t lost[] = {1, 4}, refused[] = {1, 2, 3}, alien[] = {1, 2, 9};

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, good, 3);
    assert_true(result.is_passed);
    chaos_verdict_crdt(&result, &w, good_without_unknown, 2);
    assert_true(result.is_passed);

    chaos_verdict_crdt(&result, &w, lost, 2);
    assert_false(result.is_passed);
    assert_int_equal(result.lost, 1);
    assert_int_equal(result.phantoms, 0);

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, refused, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, alien, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);
    assert_int_equal(result.lost, 0);
}

static void op(struct check_op *out, enum check_kind kind, int64_t value,
               int64_t invoke_ns, int64_t complete_ns)
{
    *out = (struct check_op){.client_id = 1,
                             .kind = kind,
                             .key = 0,
                             .value = value,
                             .invoke_ns = invoke_ns,
                             .complete_ns = complete_ns,
                             .outcome = CHECK_OUTCOME_OK};
}

static void test_quorum_verdict(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    char dir[512];

    snprintf(dir, sizeof(dir), "%s/test_proc_XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    struct check_op ops[3];
    struct chaos_workload w = {.ops = ops, .op_count = 3};

    op(&ops[0], CHECK_WRITE, 5, 10, 20);
    op(&ops[1], CHECK_READ, 5, 30, 40);
    op(&ops[2], CHECK_READ, 5, 50, 60);
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_true(result.is_passed);
    assert_int_equal(result.linearizable, CHECK_LINEARIZABLE);

    op(&ops[2], CHECK_READ, 0, 50, 60); /* stale: 5 was read before */
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_false(result.is_passed);
    assert_int_equal(result.linearizable, CHECK_NOT_LINEARIZABLE);

    op(&ops[2], CHECK_READ, 77, 50, 60); /* nobody wrote 77 */
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_false(result.is_passed);
    assert_int_equal(result.phantom_reads, 1);

    char path[sizeof dir + 32];
    snprintf(path, sizeof path, "%s/history.txt", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/violation.txt", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_crdt_verdict),
        cmocka_unit_test(test_quorum_verdict),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
