/* SPDX-License-Identifier: MIT
 *
 * check_test.h: what the checker's tests share: builders for hand-written
 * operations, and a generator of histories recorded from a simulated
 * linearizable register map (generate.c), with a mutation that makes one
 * read stale so that no linearization can exist.
 */
#ifndef SINEW_CHECK_TEST_H
#define SINEW_CHECK_TEST_H

#include "check.h"
#include "common_test.h"

/* Builders: a completed operation over [invoke, complete]. */
static inline struct check_op check_test_read(int64_t client, int64_t key,
                                              int64_t value, int64_t invoke,
                                              int64_t complete)
{
    return (struct check_op){.client_id = client,
                             .kind = CHECK_READ,
                             .key = key,
                             .value = value,
                             .invoke_ns = invoke,
                             .complete_ns = complete,
                             .outcome = CHECK_OUTCOME_OK};
}

static inline struct check_op check_test_write(int64_t client, int64_t key,
                                               int64_t value, int64_t invoke,
                                               int64_t complete)
{
    return (struct check_op){.client_id = client,
                             .kind = CHECK_WRITE,
                             .key = key,
                             .value = value,
                             .invoke_ns = invoke,
                             .complete_ns = complete,
                             .outcome = CHECK_OUTCOME_OK};
}

static inline struct check_op check_test_cas(int64_t client, int64_t key,
                                             int64_t expected, int64_t value,
                                             bool succeeded, int64_t invoke,
                                             int64_t complete)
{
    return (struct check_op){.client_id = client,
                             .kind = CHECK_CAS,
                             .key = key,
                             .value = value,
                             .expected = expected,
                             .invoke_ns = invoke,
                             .complete_ns = complete,
                             .outcome = CHECK_OUTCOME_OK,
                             .cas_succeeded = succeeded};
}

/* op with its outcome made unknown (and its result cleared). */
static inline struct check_op check_test_unknown(struct check_op op)
{
    op.outcome = CHECK_OUTCOME_UNKNOWN;
    op.complete_ns = CHECK_TIME_NONE;
    op.cas_succeeded = false;
    return op;
}

/* Checks ops with defaults and initial value; returns the result and
 * closes the verdict (unless kept is not NULL: then it is stored there). */
static inline enum check_result check_test_run(const struct check_op *ops,
                                               size_t count, int64_t initial,
                                               struct check_verdict *kept)
{
    struct check_options options;
    struct check_verdict verdict;

    check_options_init(&options);
    options.initial_value = initial;
    assert_int_equal(check_linearizable(ops, count, &options, &verdict), 0);
    if (kept != NULL) {
        *kept = verdict;
        return verdict.result;
    }
    check_verdict_close(&verdict);
    return verdict.result;
}

/* The shape of a generated history. */
struct check_test_config {
    size_t ops_count;         /* operations */
    size_t clients;           /* concurrent clients, >= 1 */
    size_t keys;              /* keys 0 .. keys - 1, >= 1 */
    unsigned read_percent;    /* reads; the rest splits writes/cas */
    unsigned cas_percent;     /* cas (of all operations) */
    unsigned unknown_percent; /* outcomes made unknown */
    int64_t duration_max;     /* longest operation, >= 1 */
    int64_t gap_max;          /* longest pause of a client, beyond 1 */
};

/* Fills ops (config->ops_count entries) with a history a linearizable map
 * of registers (initial value CHECK_ABSENT) could produce: each client runs
 * operations one after the other, each takes effect at a random instant of
 * its interval (an unknown write or cas: at a random instant after its
 * invocation, possibly after the client gave up, or never). Written values
 * are unique and positive. Deterministic in seed. */
void check_test_generate(const struct check_test_config *config, uint64_t seed,
                         struct check_op *ops);

/* Changes one completed read of ops to return a stale value: one that was
 * overwritten by a write that completed before the read was invoked, so no
 * linearization exists. Picks the read from rng; returns its index, or
 * SIZE_MAX when no read has a stale value. Only keys in [key_min, key_max]
 * are considered. */
size_t check_test_corrupt_read(struct check_op *ops, size_t count,
                               struct common_test_rng *rng, int64_t key_min,
                               int64_t key_max);

#endif /* SINEW_CHECK_TEST_H */
