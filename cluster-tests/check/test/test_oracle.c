/* SPDX-License-Identifier: MIT
 *
 * Goal: the checker's verdict equals the definition of linearizability on
 * every small history, whatever mix of reads, writes, cas, failed cas,
 * unknown outcomes, repeated values, touching intervals and initial
 * values it holds. This is what proves the search's prunings (forced
 * reads, doomed values, gated and pinned unknown writes) exact: each one
 * cuts branches, and a wrong cut shows up here as a false alarm or a
 * missed violation.
 * Method: an independent brute-force oracle that tries every order
 * allowed by real time (no memo, no pruning) on thousands of random
 * histories of up to 7 operations over tiny value and time domains, so
 * that collisions and overlaps are the rule.
 */
#include "check_test.h"

/* Histories per run, and the most operations in one. */
#define ORACLE_HISTORIES 20000
#define ORACLE_OPS_MAX 7

/* Whether ops[i] may be placed now: every required operation that
 * completed before it was invoked is already placed (touching intervals
 * are concurrent). */
static bool oracle_is_ready(const struct check_op *ops, size_t n,
                            unsigned placed, size_t i)
{
    for (size_t j = 0; j < n; j++) {
        if (j != i && !(placed & (1u << j)) &&
            ops[j].outcome == CHECK_OUTCOME_OK &&
            ops[j].complete_ns < ops[i].invoke_ns) {
            return false;
        }
    }
    return true;
}

/* The register's rule, written from check.h rather than shared with the
 * checker: whether op may take effect in state, and the value after. */
static bool oracle_step(const struct check_op *op, int64_t state, int64_t *next)
{
    *next = state;
    if (op->kind == CHECK_READ) {
        return op->value == state;
    }
    if (op->kind == CHECK_WRITE) {
        *next = op->value;
        return true;
    }
    if (op->outcome == CHECK_OUTCOME_OK && !op->cas_succeeded) {
        return op->expected != state;
    }
    if (op->expected != state) {
        return false;
    }
    *next = op->value;
    return true;
}

/* Whether the unplaced operations of ops can be linearized from state:
 * every completed one placed, unknown ones placed or left out. */
static bool oracle_search(const struct check_op *ops, size_t n, unsigned placed,
                          int64_t state)
{
    bool done = true;

    for (size_t i = 0; i < n; i++) {
        if (!(placed & (1u << i)) && ops[i].outcome == CHECK_OUTCOME_OK) {
            done = false;
        }
    }
    if (done) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t next;

        if ((placed & (1u << i)) || !oracle_is_ready(ops, n, placed, i) ||
            !oracle_step(&ops[i], state, &next)) {
            continue;
        }
        if (oracle_search(ops, n, placed | (1u << i), next)) {
            return true;
        }
    }
    return false;
}

/* A value from a tiny domain: nil, 1, 2, 3. */
static int64_t oracle_value(struct common_test_rng *rng)
{
    uint64_t v = common_test_rng_below(rng, 4);

    return v == 0 ? CHECK_ABSENT : (int64_t)v;
}

static struct check_op oracle_op(struct common_test_rng *rng)
{
    struct check_op op = {0};

    op.client_id = (int64_t)common_test_rng_below(rng, 4);
    op.kind = (enum check_kind)common_test_rng_below(rng, 3);
    op.value = oracle_value(rng);
    op.expected = oracle_value(rng);
    op.invoke_ns = (int64_t)common_test_rng_below(rng, 12);
    op.complete_ns = op.invoke_ns + (int64_t)common_test_rng_below(rng, 8);
    op.cas_succeeded = common_test_rng_below(rng, 2) == 0;
    if (common_test_rng_below(rng, 4) == 0) {
        op = check_test_unknown(op);
    }
    return op;
}

/* Whether the unknown reads left out, ops is linearizable by the oracle. */
static bool oracle_is_linearizable(const struct check_op *ops, size_t n,
                                   int64_t initial)
{
    struct check_op kept[ORACLE_OPS_MAX];
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind != CHECK_READ || ops[i].outcome == CHECK_OUTCOME_OK) {
            kept[m++] = ops[i];
        }
    }
    return oracle_search(kept, m, 0, initial);
}

static void checker_agrees_with_brute_force(void **state)
{
    struct common_test_rng rng;
    size_t violations = 0;

    (void)state;
    common_test_rng_seed(&rng, __func__);
    for (int h = 0; h < ORACLE_HISTORIES; h++) {
        struct check_op ops[ORACLE_OPS_MAX];
        size_t n = 1 + (size_t)common_test_rng_below(&rng, ORACLE_OPS_MAX);
        int64_t initial = oracle_value(&rng);
        bool expected;
        enum check_result result;

        for (size_t i = 0; i < n; i++) {
            ops[i] = oracle_op(&rng);
            ops[i].key = 1;
        }
        expected = oracle_is_linearizable(ops, n, initial);
        result = check_test_run(ops, n, initial, NULL);
        if (result !=
            (expected ? CHECK_LINEARIZABLE : CHECK_NOT_LINEARIZABLE)) {
            check_history_write(stderr, ops, n, initial);
            fail_msg("history %d: oracle says %s, checker %s", h,
                     expected ? "linearizable" : "not",
                     check_result_name(result));
        }
        violations += expected ? 0 : 1;
    }
    /* Both verdicts are well represented. */
    assert_true(violations > ORACLE_HISTORIES / 10);
    assert_true(violations < ORACLE_HISTORIES * 9 / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checker_agrees_with_brute_force),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
