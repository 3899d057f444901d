/* SPDX-License-Identifier: MIT
 *
 * explain.c: check_verdict_print(), the text a person reads when a chaos
 * run fails. For a violation it follows chaos.md §3.3 and Porcupine's
 * visualizer: the key, the end of the longest linearizable prefix (the
 * history "so far as it makes sense"), the value after it, and every
 * operation that could have come next with why it cannot: that is usually
 * enough to see the stale read or the lost write.
 */
#include "check_int.h"

#include <errno.h>
#include <inttypes.h>

/* How many operations of the prefix, its last ones, are printed: the
 * violation is almost always near its end. */
#define EXPLAIN_PREFIX_LINES 20

/* Room for the text of one value: "-9223372036854775807" and a NUL. */
#define EXPLAIN_VALUE_SIZE 24

static const char *explain_value(int64_t value, char *text)
{
    if (value == CHECK_ABSENT) {
        return "nil";
    }
    snprintf(text, EXPLAIN_VALUE_SIZE, "%" PRId64, value);
    return text;
}

static void explain_interval(const struct check_op *op, FILE *out)
{
    if (op->outcome == CHECK_OUTCOME_OK) {
        fprintf(out, "[%" PRId64 ", %" PRId64 "]", op->invoke_ns,
                op->complete_ns);
    } else {
        fprintf(out, "[%" PRId64 ", ?) outcome unknown", op->invoke_ns);
    }
}

/* One operation, e.g. "#12 client 3 cas(7, 9 -> 5) -> ok [130, 200]". */
static void explain_op(const struct check_op *ops, size_t index, FILE *out)
{
    const struct check_op *op = &ops[index];
    bool known = op->outcome == CHECK_OUTCOME_OK;
    char a[EXPLAIN_VALUE_SIZE];
    char b[EXPLAIN_VALUE_SIZE];

    fprintf(out, "#%zu client %" PRId64 " ", index, op->client_id);
    switch (op->kind) {
    case CHECK_READ:
        fprintf(out, "read(%" PRId64 ") -> %s ", op->key,
                explain_value(op->value, a));
        break;
    case CHECK_WRITE:
        fprintf(out, "write(%" PRId64 ", %s) ", op->key,
                explain_value(op->value, a));
        break;
    case CHECK_CAS:
        fprintf(out, "cas(%" PRId64 ", %s -> %s)%s ", op->key,
                explain_value(op->expected, a), explain_value(op->value, b),
                !known              ? ""
                : op->cas_succeeded ? " -> ok"
                                    : " -> fail");
        break;
    }
    explain_interval(op, out);
}

/* Whether op, which the verdict lists, must see state. */
static bool explain_is_observer(const struct check_op *op, int64_t state)
{
    return (op->kind == CHECK_READ && op->value == state) ||
           (op->kind == CHECK_CAS && op->cas_succeeded &&
            op->expected == state);
}

/* A listed operation invoked after the deadline that must see the value
 * after the prefix, if any: the one an overwrite would doom. */
static const struct check_op *explain_doomed(const struct check_verdict *v,
                                             const struct check_op *ops,
                                             size_t *index)
{
    for (size_t i = 0; i < v->unplaced_count; i++) {
        const struct check_op *op = &ops[v->unplaced[i]];

        if (op->invoke_ns > v->blocking_ns &&
            explain_is_observer(op, v->state)) {
            *index = v->unplaced[i];
            return op;
        }
    }
    return NULL;
}

/* Why a legal op cannot come next when the key holds v->state. */
static void explain_legal(const struct check_verdict *v,
                          const struct check_op *ops, const struct check_op *op,
                          int64_t next, FILE *out)
{
    char a[EXPLAIN_VALUE_SIZE];
    size_t doomed;

    if (op->invoke_ns > v->blocking_ns) {
        fprintf(out,
                "needs the value %s, which is overwritten for good "
                "before it can come",
                explain_value(v->state, a));
    } else if (next != v->state && explain_doomed(v, ops, &doomed) != NULL) {
        fprintf(out, "would overwrite %s for good, which #%zu still needs",
                explain_value(v->state, a), doomed);
    } else {
        fprintf(out, "possible here, but every order continuing with it "
                     "fails later");
    }
}

/* Why op cannot come next when the key holds v->state. */
static void explain_reason(const struct check_verdict *v,
                           const struct check_op *ops,
                           const struct check_op *op, FILE *out)
{
    char a[EXPLAIN_VALUE_SIZE];
    char b[EXPLAIN_VALUE_SIZE];
    int64_t state = v->state;
    int64_t next;

    if (check__model_step(op, state, &next)) {
        explain_legal(v, ops, op, next, out);
    } else if (op->kind == CHECK_CAS && op->expected != state) {
        fprintf(out, "expects %s, but the value is %s",
                explain_value(op->expected, a), explain_value(state, b));
    } else if (op->outcome == CHECK_OUTCOME_UNKNOWN) {
        fprintf(out, "would change nothing here");
    } else if (op->kind == CHECK_READ) {
        fprintf(out, "returned %s, but the value is %s",
                explain_value(op->value, a), explain_value(state, b));
    } else {
        fprintf(out, "failed, but the value is the expected %s",
                explain_value(state, a));
    }
}

static void explain_violation(const struct check_verdict *v,
                              const struct check_op *ops, FILE *out)
{
    size_t from = v->prefix_count > EXPLAIN_PREFIX_LINES
                      ? v->prefix_count - EXPLAIN_PREFIX_LINES
                      : 0;
    char a[EXPLAIN_VALUE_SIZE];

    fprintf(out, "not linearizable: key %" PRId64 "\n", v->key);
    fprintf(out,
            "  %zu operations on key %" PRId64 "; the longest linearizable "
            "prefix found places %zu of them\n",
            v->key_ops_count, v->key, v->prefix_count);
    if (v->is_prefix_pruned) {
        fprintf(out, "  (the search for a longer prefix ran out of budget: "
                     "this one may stop at an overwrite of a value that a "
                     "later operation still needs)\n");
    }
    if (from > 0) {
        fprintf(out, "  (its first %zu operations are not shown)\n", from);
    }
    for (size_t i = from; i < v->prefix_count; i++) {
        fprintf(out, "  %6zu. ", i + 1);
        explain_op(ops, v->prefix[i], out);
        fputc('\n', out);
    }
    fprintf(out, "  value of key %" PRId64 " after the prefix: %s\n", v->key,
            explain_value(v->state, a));
    fprintf(out, "  the operations that could come next, none of which "
                 "leads to a linearization:\n");
    for (size_t i = 0; i < v->unplaced_count; i++) {
        fprintf(out, "    ");
        explain_op(ops, v->unplaced[i], out);
        fprintf(out, "\n      ");
        explain_reason(v, ops, &ops[v->unplaced[i]], out);
        fputc('\n', out);
    }
    fprintf(out,
            "  #%zu must have taken effect by %" PRId64 "%s, so before any "
            "operation invoked after that\n",
            v->blocking, v->blocking_ns,
            ops[v->blocking].outcome == CHECK_OUTCOME_OK
                ? ""
                : " (a completed operation observed its value then)");
}

static const char *explain_budget(enum check_budget budget)
{
    switch (budget) {
    case CHECK_BUDGET_STEPS:
        return "its step budget (steps_max)";
    case CHECK_BUDGET_TIME:
        return "the time budget (time_ms_max)";
    case CHECK_BUDGET_MEMORY:
        return "its memory budget (memory_bytes_max)";
    case CHECK_BUDGET_NONE:
        break;
    }
    return "no budget";
}

int check_verdict_print(const struct check_verdict *verdict,
                        const struct check_op *ops, size_t count, FILE *out)
{
    const struct check_verdict *v = verdict;

    ASSERT(v->result != CHECK_NOT_LINEARIZABLE || v->blocking < count);
    switch (v->result) {
    case CHECK_LINEARIZABLE:
        fprintf(out,
                "linearizable: %zu operations, %zu keys, %" PRIu64
                " search steps\n",
                count, v->keys_count, v->steps);
        break;
    case CHECK_NOT_LINEARIZABLE:
        explain_violation(v, ops, out);
        break;
    case CHECK_UNKNOWN:
        fprintf(out,
                "unknown: the search of key %" PRId64 " ran out of %s; "
                "%zu of %zu keys undecided, %zu checked, %" PRIu64
                " steps; no violation was found, but this is not a pass\n",
                v->key, explain_budget(v->exhausted), v->keys_undecided,
                v->keys_count, v->keys_checked, v->steps);
        break;
    }
    return ferror(out) ? -EIO : 0;
}
