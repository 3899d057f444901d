/* SPDX-License-Identifier: MIT
 *
 * bench_check: how long the checker takes on histories of the sizes the
 * chaos suite records, correct and with one stale read. It measures and
 * prints; it asserts only the verdicts (timings are never test failures).
 *
 *   bench_check [seed]
 */
#include "check_test.h"

#include <stdlib.h>
#include <time.h>

struct bench_case {
    const char *name; /* printed */
    size_t ops_count; /* operations */
    size_t clients;   /* concurrent clients */
    size_t keys;      /* keys */
    unsigned unknown; /* percent of unknown outcomes */
};

static const struct bench_case bench_cases[] = {
    {"10k ops, 10 keys, 16 clients", 10000, 16, 10, 5},
    {"10k ops, 10 keys, 16 clients, 20% unknown", 10000, 16, 10, 20},
    {"100k ops, 100 keys, 16 clients", 100000, 16, 100, 5},
    {"6k ops, 1 key, 10 clients", 6000, 10, 1, 5},
    {"10k ops, 1 key, 16 clients", 10000, 16, 1, 5},
};

static double bench_now_s(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Checks ops, prints the time and verdict; returns the result. */
static enum check_result bench_check(const char *label,
                                     const struct check_op *ops, size_t count)
{
    struct check_verdict v;
    double start = bench_now_s();
    double elapsed;
    enum check_result result;

    if (check_linearizable(ops, count, NULL, &v) != 0) {
        abort();
    }
    elapsed = bench_now_s() - start;
    printf("  %-10s %8.1f ms  %-16s %10" PRIu64 " steps\n", label,
           elapsed * 1e3, check_result_name(v.result), v.steps);
    result = v.result;
    check_verdict_close(&v);
    return result;
}

static void bench_run(const struct bench_case *c, uint64_t seed)
{
    struct check_test_config config = {
        .ops_count = c->ops_count,
        .clients = c->clients,
        .keys = c->keys,
        .read_percent = 50,
        .cas_percent = 15,
        .unknown_percent = c->unknown,
        .duration_max = 1000000,
        .gap_max = 100000,
    };
    struct check_op *ops = calloc(c->ops_count, sizeof(*ops));
    struct common_test_rng rng = {seed};

    if (ops == NULL) {
        abort();
    }
    printf("%s (durations up to 1 ms, gaps up to 0.1 ms):\n", c->name);
    check_test_generate(&config, seed, ops);
    if (bench_check("correct", ops, c->ops_count) != CHECK_LINEARIZABLE) {
        abort();
    }
    if (check_test_corrupt_read(ops, c->ops_count, &rng, 0, INT64_MAX) !=
            SIZE_MAX &&
        bench_check("stale read", ops, c->ops_count) !=
            CHECK_NOT_LINEARIZABLE) {
        abort();
    }
    free(ops);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;

    printf("seed %" PRIu64 "\n", seed);
    for (size_t i = 0; i < sizeof(bench_cases) / sizeof(bench_cases[0]); i++) {
        bench_run(&bench_cases[i], seed + i);
    }
    return 0;
}
