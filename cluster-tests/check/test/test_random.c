/* SPDX-License-Identifier: MIT
 *
 * Goal: no false alarms and no missed violations on realistic histories:
 * every history recorded from a linearizable register map is judged
 * LINEARIZABLE, and the same history with one read made stale is judged
 * NOT_LINEARIZABLE, on the right key, with that read among the operations
 * the explanation says cannot be placed.
 * Method: generate.c's simulated map, many clients with random overlapping
 * intervals and unknown outcomes, hundreds of seeds derived from one
 * printed base seed (SINEW_TEST_SEED replays it).
 */
#include "check_test.h"

#include <stdlib.h>

/* Histories per test: enough shapes to meet the rare interleavings, few
 * enough that the whole file runs in a second or two. */
#define RANDOM_SEEDS 300

struct random_shape {
    size_t ops_count;
    size_t clients;
    size_t keys;
    unsigned unknown_percent;
};

/* Shapes from a hot single key to a spread-out map. */
static const struct random_shape random_shapes[] = {
    {200, 5, 1, 0},   {300, 8, 1, 10}, {400, 16, 4, 5},
    {500, 10, 3, 20}, {300, 3, 1, 40}, {600, 16, 10, 5},
};

static struct check_test_config random_config(const struct random_shape *s,
                                              uint64_t seed)
{
    return (struct check_test_config){
        .ops_count = s->ops_count,
        .clients = s->clients,
        .keys = s->keys,
        .read_percent = 50,
        .cas_percent = (unsigned)(seed % 3) * 15,
        .unknown_percent = s->unknown_percent,
        .duration_max = 10 + (int64_t)(seed % 7) * 300,
        .gap_max = (int64_t)(seed % 5) * 100,
    };
}

static uint64_t random_base_seed(const char *test_name)
{
    struct common_test_rng rng;

    common_test_rng_seed(&rng, test_name);
    return rng.state;
}

static void random_histories_are_linearizable(void **state)
{
    uint64_t base = random_base_seed(__func__);

    (void)state;
    for (uint64_t i = 0; i < RANDOM_SEEDS; i++) {
        const struct random_shape *shape =
            &random_shapes[i %
                           (sizeof(random_shapes) / sizeof(random_shapes[0]))];
        struct check_test_config config = random_config(shape, base + i);
        struct check_op *ops = calloc(config.ops_count, sizeof(*ops));
        enum check_result result;

        assert_non_null(ops);
        check_test_generate(&config, base + i, ops);
        result = check_test_run(ops, config.ops_count, CHECK_ABSENT, NULL);
        if (result != CHECK_LINEARIZABLE) {
            fprintf(stderr, "history %" PRIu64 " (seed %" PRIu64 "): %s\n", i,
                    base + i, check_result_name(result));
        }
        assert_int_equal(result, CHECK_LINEARIZABLE);
        free(ops);
    }
}

/* Corrupts one read of ops on keys [key_min, key_max] and checks that the
 * violation is found there; returns false if no read could be corrupted. */
static bool random_violation_is_found(struct check_op *ops, size_t count,
                                      uint64_t seed, int64_t key_min,
                                      int64_t key_max)
{
    struct common_test_rng rng = {seed ^ UINT64_C(0x5eed)};
    size_t bad = check_test_corrupt_read(ops, count, &rng, key_min, key_max);
    struct check_verdict v;
    bool listed = false;

    if (bad == SIZE_MAX) {
        return false;
    }
    if (check_test_run(ops, count, CHECK_ABSENT, &v) !=
        CHECK_NOT_LINEARIZABLE) {
        fprintf(stderr, "seed %" PRIu64 ": stale read #%zu missed\n", seed,
                bad);
        fail();
    }
    assert_int_equal(v.key, ops[bad].key);
    for (size_t i = 0; i < v.unplaced_count; i++) {
        listed = listed || v.unplaced[i] == bad;
    }
    /* A pruned prefix may stop before the stale read (check.h). */
    listed = listed || v.is_prefix_pruned;
    if (!listed) {
        fprintf(stderr, "seed %" PRIu64 ": #%zu not in the explanation\n", seed,
                bad);
        check_verdict_print(&v, ops, count, stderr);
    }
    assert_true(listed);
    check_verdict_close(&v);
    return true;
}

static void stale_reads_are_found(void **state)
{
    uint64_t base = random_base_seed(__func__);
    size_t corrupted = 0;

    (void)state;
    for (uint64_t i = 0; i < RANDOM_SEEDS; i++) {
        const struct random_shape *shape =
            &random_shapes[i %
                           (sizeof(random_shapes) / sizeof(random_shapes[0]))];
        struct check_test_config config = random_config(shape, base + i);
        struct check_op *ops = calloc(config.ops_count, sizeof(*ops));

        assert_non_null(ops);
        check_test_generate(&config, base + i, ops);
        if (random_violation_is_found(ops, config.ops_count, base + i, 0,
                                      INT64_MAX)) {
            corrupted++;
        }
        free(ops);
    }
    /* Nearly every history has a read with a stale value to corrupt. */
    assert_true(corrupted > RANDOM_SEEDS * 9 / 10);
}

/* Twenty keys, one stale read on key 13: the violation is found and named
 * on key 13, whatever the other keys do. */
static void violation_on_one_key_among_many_is_named(void **state)
{
    uint64_t base = random_base_seed(__func__);
    struct check_test_config config = {
        .ops_count = 4000,
        .clients = 16,
        .keys = 20,
        .read_percent = 50,
        .cas_percent = 15,
        .unknown_percent = 5,
        .duration_max = 100,
        .gap_max = 20,
    };
    struct check_op *ops = calloc(config.ops_count, sizeof(*ops));

    (void)state;
    assert_non_null(ops);
    for (uint64_t i = 0; i < 20; i++) {
        check_test_generate(&config, base + i, ops);
        assert_true(
            random_violation_is_found(ops, config.ops_count, base + i, 13, 13));
    }
    free(ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_histories_are_linearizable),
        cmocka_unit_test(stale_reads_are_found),
        cmocka_unit_test(violation_on_one_key_among_many_is_named),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
