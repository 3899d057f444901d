/* SPDX-License-Identifier: MIT
 *
 * common_test.h: what every module's cmocka tests share.
 *
 * common_test_install() routes sinew's heap to cmocka's test_malloc, so a
 * test that leaks a block fails, and routes ASSERT to mock_assert(), so
 * expect_assert_failure() can prove that an invariant check fires.
 *
 * struct common_test_rng is the seeded generator of randomized tests
 * (splitmix64, Steele et al. 2014). The seed comes from SINEW_TEST_SEED
 * when set, else from the clock; it is printed, so any failure replays.
 *
 * Include after <cmocka.h>'s prerequisites; this header brings cmocka in.
 */
#ifndef SINEW_COMMON_TEST_H
#define SINEW_COMMON_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

static inline void common_test_assert_handler(const char *expression,
                                              const char *file, int line)
{
    mock_assert(0, expression, file, line);
}

static inline void *common_test_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return test_malloc(size);
}

static inline void *common_test_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return test_realloc(ptr, size);
}

static inline void common_test_free(void *ctx, void *ptr)
{
    (void)ctx;
    test_free(ptr);
}

static inline void common_test_install(void)
{
    static const struct common_heap heap = {
        .ctx = NULL,
        .malloc = common_test_malloc,
        .realloc = common_test_realloc,
        .free = common_test_free,
    };

    common_heap_set(&heap);
    common_assert_handler_set(common_test_assert_handler);
}

/* A cmocka group setup that installs the above. */
static inline int common_test_group_setup(void **state)
{
    (void)state;
    common_test_install();
    return 0;
}

struct common_test_rng {
    uint64_t state;
};

static inline uint64_t common_test_rng_next(struct common_test_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A value in [0, bound), bound > 0. The slight modulo bias is harmless for
 * test schedules. */
static inline uint64_t common_test_rng_below(struct common_test_rng *rng,
                                             uint64_t bound)
{
    return common_test_rng_next(rng) % bound;
}

/* Seeds rng from SINEW_TEST_SEED or the clock and prints the seed with the
 * test's name. */
static inline void common_test_rng_seed(struct common_test_rng *rng,
                                        const char *test_name)
{
    const char *text = getenv("SINEW_TEST_SEED");
    uint64_t seed;

    if (text != NULL && text[0] != '\0') {
        seed = strtoull(text, NULL, 0);
    } else {
        seed = (uint64_t)time(NULL) ^ (uint64_t)clock();
    }
    printf("%s: seed=%" PRIu64 " (replay with SINEW_TEST_SEED=%" PRIu64 ")\n",
           test_name, seed, seed);
    rng->state = seed;
}

#endif /* SINEW_COMMON_TEST_H */
