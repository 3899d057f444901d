/* SPDX-License-Identifier: MIT
 *
 * verdict.c: what a run's history says. quorum: the history is
 * linearizable (check_linearizable, which also covers acknowledged writes
 * lost, since a later read must see them), and no read returned a value
 * nobody wrote (a phantom). crdt: check_set on the converged state: every
 * acknowledged insert is there (none lost), and every id there was
 * acknowledged or has an unknown outcome (no phantom; a refused insert
 * that shows up is one). Recovery: for each healed fault, the time from
 * the heal to the completion of the first acknowledged operation invoked
 * after it; and the longest time without any acknowledged completion.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"
#include "common.h"

void chaos_result_fail(struct chaos_run_result *r, const char *format, ...)
{
    r->is_passed = false;
    if (r->failure_count >= sizeof r->failures / sizeof r->failures[0]) {
        return;
    }
    va_list args;
    va_start(args, format);
    vsnprintf(r->failures[r->failure_count++], CHAOS_NOTE_SIZE, format, args);
    va_end(args);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool contains(const int64_t *sorted, size_t count, int64_t value)
{
    return bsearch(&value, sorted, count, sizeof *sorted, compare_i64) != NULL;
}

static void write_history(const struct chaos_run_result *r,
                          const struct chaos_workload *w)
{
    char path[CHAOS_PATH_SIZE + 16];
    snprintf(path, sizeof path, "%s/history.txt", r->config.dir);
    FILE *out = fopen(path, "w");
    if (out != NULL) {
        (void)check_history_write(out, w->ops, w->op_count, 0);
        fclose(out);
    }
}

static void write_violation(const struct chaos_run_result *r,
                            const struct chaos_workload *w,
                            const struct check_verdict *verdict)
{
    char path[CHAOS_PATH_SIZE + 16];
    snprintf(path, sizeof path, "%s/violation.txt", r->config.dir);
    FILE *out = fopen(path, "w");
    if (out != NULL) {
        (void)check_verdict_print(verdict, w->ops, w->op_count, out);
        fclose(out);
    }
}

static size_t count_phantom_reads(const struct chaos_workload *w)
{
    int64_t *written = common_malloc_array(w->op_count + 1, sizeof *written);
    size_t count = 0, phantoms = 0;
    written[count++] = 0; /* every key's initial value */
    for (size_t i = 0; i < w->op_count; i++) {
        if (w->ops[i].kind != CHECK_READ) {
            written[count++] = w->ops[i].value;
        }
    }
    qsort(written, count, sizeof *written, compare_i64);
    for (size_t i = 0; i < w->op_count; i++) {
        const struct check_op *op = &w->ops[i];
        phantoms += op->kind == CHECK_READ && op->outcome == CHECK_OUTCOME_OK &&
                    !contains(written, count, op->value);
    }
    common_free(written);
    return phantoms;
}

void chaos_verdict_quorum(struct chaos_run_result *r,
                          const struct chaos_workload *w)
{
    write_history(r, w);
    struct check_options options;
    check_options_init(&options);
    options.initial_value = 0;
    struct check_verdict verdict;
    r->has_linearizable = true;
    if (check_linearizable(w->ops, w->op_count, &options, &verdict) != 0) {
        r->linearizable = CHECK_UNKNOWN;
        chaos_result_fail(r, "the linearizability checker failed to run");
        return;
    }
    r->linearizable = verdict.result;
    snprintf(r->linearizable_note, sizeof r->linearizable_note,
             "%zu keys, %zu operations, %llu search steps", verdict.keys_count,
             w->op_count, (unsigned long long)verdict.steps);
    if (verdict.result == CHECK_NOT_LINEARIZABLE) {
        write_violation(r, w, &verdict);
        chaos_result_fail(r, "not linearizable: key %lld (violation.txt)",
                          (long long)verdict.key);
    } else if (verdict.result == CHECK_UNKNOWN) {
        chaos_result_fail(r,
                          "linearizability undecided: a budget ran out "
                          "on key %lld",
                          (long long)verdict.key);
    }
    check_verdict_close(&verdict);
    r->phantom_reads = count_phantom_reads(w);
    if (r->phantom_reads > 0) {
        chaos_result_fail(r, "%zu reads returned a value nobody wrote",
                          r->phantom_reads);
    }
}

void chaos_verdict_crdt(struct chaos_run_result *r,
                        const struct chaos_workload *w, const int64_t *ids,
                        size_t id_count)
{
    size_t n = w->insert_count + 1, acked_count = 0, unknown_count = 0;
    int64_t *acked = common_malloc_array(n, sizeof *acked);
    int64_t *unknown = common_malloc_array(n, sizeof *unknown);
    size_t refused_present = 0;
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        bool present = contains(ids, id_count, in->id);
        r->lost += in->outcome == CHAOS_SQL_OK && !present;
        refused_present += in->outcome == CHAOS_SQL_FAILED && present;
        if (in->outcome == CHAOS_SQL_OK) {
            acked[acked_count++] = in->id;
        } else if (in->outcome == CHAOS_SQL_UNKNOWN) {
            unknown[unknown_count++] = in->id;
        }
    }
    /* The suite's set checker is the judge; the counts are for the report
     * (it counts lost plus phantoms). A refused insert is neither acked
     * nor unknown, so finding it is a phantom. */
    int64_t first_lost, first_phantom;
    size_t violations = check_set(acked, acked_count, unknown, unknown_count,
                                  ids, id_count, &first_lost, &first_phantom);
    r->phantoms = violations - r->lost;
    common_free(acked);
    common_free(unknown);
    if (r->lost > 0) {
        chaos_result_fail(r, "%zu acknowledged inserts lost (first: id %lld)",
                          r->lost, (long long)first_lost);
    }
    if (r->phantoms > 0) {
        chaos_result_fail(r,
                          "%zu phantom rows, %zu of them refused inserts "
                          "(first: id %lld)",
                          r->phantoms, refused_present,
                          (long long)first_phantom);
    }
}

/* Completion times of acknowledged operations, sorted; *count set. */
static int64_t *ok_completions(const struct chaos_workload *w, size_t *count)
{
    size_t n = 0;
    int64_t *times =
        common_malloc_array(w->op_count + w->insert_count + 1, sizeof *times);
    for (size_t i = 0; i < w->op_count; i++) {
        if (w->ops[i].outcome == CHECK_OUTCOME_OK &&
            w->ops[i].client_id != 999) {
            times[n++] = w->ops[i].complete_ns;
        }
    }
    for (size_t i = 0; i < w->insert_count; i++) {
        if (w->inserts[i].outcome == CHAOS_SQL_OK) {
            times[n++] = w->inserts[i].complete_ns;
        }
    }
    qsort(times, n, sizeof *times, compare_i64);
    *count = n;
    return times;
}

void chaos_verdict_recovery(struct chaos_run_result *r,
                            const struct chaos_workload *w,
                            int64_t workload_start_ns)
{
    size_t count = 0;
    int64_t *times = ok_completions(w, &count);
    int64_t previous = workload_start_ns, longest = 0;
    for (size_t i = 0; i < count; i++) {
        longest = times[i] - previous > longest ? times[i] - previous : longest;
        previous = times[i];
    }
    r->longest_outage_ms = longest / 1000000;
    for (size_t f = 0; f < r->fault_count; f++) {
        struct chaos_fault *fault = &r->faults[f];
        fault->recovery_ms = -1;
        if (fault->healed_ns == 0) {
            continue;
        }
        /* The first acknowledged op invoked after the heal: with the ops
         * unsorted by invocation, scan them all (a run has thousands). */
        int64_t best = INT64_MAX;
        for (size_t i = 0; i < w->op_count; i++) {
            const struct check_op *op = &w->ops[i];
            if (op->outcome == CHECK_OUTCOME_OK &&
                op->invoke_ns >= fault->healed_ns && op->complete_ns < best) {
                best = op->complete_ns;
            }
        }
        for (size_t i = 0; i < w->insert_count; i++) {
            const struct chaos_insert *in = &w->inserts[i];
            if (in->outcome == CHAOS_SQL_OK &&
                in->invoke_ns >= fault->healed_ns && in->complete_ns < best) {
                best = in->complete_ns;
            }
        }
        if (best != INT64_MAX) {
            fault->recovery_ms = (best - fault->healed_ns) / 1000000;
        }
    }
    common_free(times);
}
