/* SPDX-License-Identifier: MIT
 *
 * Goal: the JIT's scan kernel (jit_kernel.c) computes exactly what a plain
 * C loop computes with SQLite's rules: a NULL fails the predicate, and
 * sum() fails at the first running total outside int64 (the kernel then
 * bails out and leaves its accumulators as they were), scalar and AVX2.
 * Method: kernels for every operator, count and sum, with and without a
 * NULL bitmap, scalar and AVX2 (when the CPU has it) run on random blocks
 * (NULLs, extremes, overflowing sums, accumulators carried in) against a
 * C reference; the seed is printed (SINEW_TEST_SEED replays it). Fixed
 * cases cover where 4 lanes and row order disagree on overflow, and the
 * edges of the proof that lets the AVX2 loop sum without checks.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include "common_test.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit.h"

/* ---- the scan kernel ---- */

static bool is_null(const struct engine_jit_scan_args *args, uint64_t r)
{
    return args->nulls != NULL && (args->nulls[r / 8] >> (r % 8)) & 1;
}

static bool matches(enum engine_jit_op op, int64_t v, int64_t p)
{
    switch (op) {
    case ENGINE_JIT_EQ:
        return v == p;
    case ENGINE_JIT_NE:
        return v != p;
    case ENGINE_JIT_LT:
        return v < p;
    case ENGINE_JIT_LE:
        return v <= p;
    case ENGINE_JIT_GT:
        return v > p;
    default:
        return v >= p;
    }
}

/* The plain C loop a kernel must equal: SQLite's sum() fails at the first
 * running total outside int64 (sumStep). */
static int reference(const struct engine_jit_scan_spec *spec,
                     struct engine_jit_scan_args *args)
{
    uint64_t count = args->count;
    int64_t sum = args->sum;

    for (uint64_t r = 0; r < args->n; r++) {
        if (is_null(args, r) ||
            !matches(spec->op, args->values[r], args->param)) {
            continue;
        }
        count++;
        if (spec->sum && __builtin_add_overflow(sum, args->values[r], &sum)) {
            return ENGINE_JIT_BAIL_OVERFLOW;
        }
    }
    args->count = count;
    args->sum = sum;
    return ENGINE_JIT_DONE;
}

static const int64_t extremes[] = {INT64_MIN,
                                   INT64_MIN + 1,
                                   -(INT64_C(1) << 62) - 1,
                                   -(INT64_C(1) << 62),
                                   -(INT64_C(1) << 32),
                                   -1,
                                   0,
                                   1,
                                   2,
                                   (INT64_C(1) << 32),
                                   (INT64_C(1) << 62) - 1,
                                   (INT64_C(1) << 62),
                                   INT64_MAX - 1,
                                   INT64_MAX};

static int64_t draw(struct common_test_rng *rng, int mode)
{
    uint64_t x = common_test_rng_next(rng);

    switch (mode == 5 ? (int)(x % 5) : mode) {
    case 0: /* small */
        return (int64_t)(x % 101) - 50;
    case 1: /* anything */
        return (int64_t)x;
    case 2:
        return extremes[x % (sizeof(extremes) / sizeof(extremes[0]))];
    case 3: /* large: sums overflow after a few rows */
        return (int64_t)(x >> 2) * ((x & 1) ? -1 : 1);
    default: /* a bound of 2^20 or so: sums stay exact, proof holds */
        return (int64_t)(x % (1u << 21)) - (1 << 20);
    }
}

struct block {
    int64_t *values;
    uint8_t *nulls;
    uint64_t n;
};

static void make_block(struct common_test_rng *rng, bool nulls, struct block *b)
{
    int mode = (int)common_test_rng_below(rng, 6);
    uint64_t density = common_test_rng_below(rng, 4);

    b->n = common_test_rng_below(rng, 8) == 0 ? common_test_rng_below(rng, 3000)
                                              : common_test_rng_below(rng, 70);
    b->values = test_malloc(b->n * sizeof(int64_t) + 1);
    b->nulls = nulls ? test_calloc(1, (b->n + 7) / 8 + 1) : NULL;
    for (uint64_t r = 0; r < b->n; r++) {
        uint64_t x = common_test_rng_below(rng, 16);

        b->values[r] = draw(rng, mode);
        if (nulls && (density == 3 || (density == 1 && x == 0) ||
                      (density == 2 && x < 8))) {
            b->nulls[r / 8] |= (uint8_t)(1u << (r % 8));
        }
    }
}

/* Counts of outcomes, to show the random blocks reach both. */
struct outcomes {
    unsigned done;
    unsigned bailed;
};

static void check_block(const struct engine_jit_scan_spec *spec,
                        engine_jit_scan_fn fn, struct common_test_rng *rng,
                        const struct block *b, struct outcomes *seen)
{
    static const int64_t sums[] = {0,
                                   1000,
                                   -(INT64_C(1) << 62),
                                   INT64_C(1) << 62,
                                   INT64_MAX - 5,
                                   INT64_MIN + 5};
    struct engine_jit_scan_args want = {
        .values = b->values, .nulls = b->nulls, .n = b->n};
    struct engine_jit_scan_args got;
    int want_rc;
    int got_rc;

    want.param = b->n > 0 && common_test_rng_below(rng, 2) == 0
                     ? b->values[common_test_rng_below(rng, b->n)]
                     : draw(rng, (int)common_test_rng_below(rng, 3));
    want.count = common_test_rng_below(rng, 1u << 30);
    want.sum = sums[common_test_rng_below(rng, 6)];
    got = want;
    want_rc = reference(spec, &want);
    got_rc = fn(&got);
    if (got_rc != want_rc || got.count != want.count || got.sum != want.sum) {
        fail_msg("op %d sum %d nulls %d isa %d n %" PRIu64 " param %" PRId64
                 ": got rc %d count %" PRIu64 " sum %" PRId64
                 ", want rc %d count %" PRIu64 " sum %" PRId64,
                 spec->op, spec->sum, spec->nulls, spec->isa, b->n, want.param,
                 got_rc, got.count, got.sum, want_rc, want.count, want.sum);
    }
    if (want_rc == ENGINE_JIT_DONE) {
        seen->done++;
    } else {
        seen->bailed++;
    }
}

/* Every kernel this machine can run against the reference. */
static void kernels_match_the_reference(void **state)
{
    struct engine_jit_cpu cpu;
    struct common_test_rng rng;
    struct engine_jit_arena *arena;
    struct outcomes seen = {0, 0};
    enum engine_jit_isa best;

    (void)state;
    engine__jit_cpu_detect(&cpu);
    best = engine__jit_cpu_isa(&cpu);
    if (best == ENGINE_JIT_ISA_NONE) {
        skip();
    }
    common_test_rng_seed(&rng, "kernels_match_the_reference");
    assert_int_equal(engine__jit_arena_open(&arena, 1 << 20), 0);
    for (int isa = ENGINE_JIT_ISA_SCALAR; isa <= ENGINE_JIT_ISA_AVX2; isa++) {
        if (isa > (int)best || isa == ENGINE_JIT_ISA_SSE42) {
            continue;
        }
        for (int k = 0; k < 24; k++) {
            struct engine_jit_scan_spec spec = {
                .op = (enum engine_jit_op)(k % 6),
                .sum = (k / 6) % 2,
                .nulls = k / 12,
                .isa = (enum engine_jit_isa)isa};
            struct engine_jit_code code;

            assert_int_equal(engine__jit_scan_compile(arena, &spec, &code), 0);
            for (int round = 0; round < 400; round++) {
                struct block b;

                make_block(&rng, spec.nulls, &b);
                check_block(&spec, engine__jit_scan_entry(&code), &rng, &b,
                            &seen);
                test_free(b.values);
                test_free(b.nulls);
            }
            engine__jit_free(arena, &code);
        }
    }
    printf("kernels: %u blocks done, %u bailed out\n", seen.done, seen.bailed);
    assert_true(seen.done > 1000 && seen.bailed > 100);
    engine__jit_arena_close(arena);
}

/* The two cases where lanes and row order disagree: a running total that
 * overflows though no lane does (must bail), and lanes that overflow
 * though no running total does (must not). */
static void vector_sums_keep_row_order_overflow(void **state)
{
    struct engine_jit_cpu cpu;
    struct engine_jit_arena *arena;
    int64_t values[16] = {INT64_MAX, 1, -1};
    struct engine_jit_scan_spec spec = {
        .op = ENGINE_JIT_GE, .sum = true, .isa = ENGINE_JIT_ISA_AVX2};
    struct engine_jit_scan_args args = {
        .values = values, .n = 16, .param = INT64_MIN, .count = 7};
    struct engine_jit_code code;

    (void)state;
    engine__jit_cpu_detect(&cpu);
    if (engine__jit_cpu_isa(&cpu) < ENGINE_JIT_ISA_AVX2) {
        printf("no AVX2: vector kernel not run\n");
        skip();
    }
    assert_int_equal(engine__jit_arena_open(&arena, 1 << 16), 0);
    assert_int_equal(engine__jit_scan_compile(arena, &spec, &code), 0);
    assert_int_equal(engine__jit_scan_entry(&code)(&args),
                     ENGINE_JIT_BAIL_OVERFLOW);
    assert_int_equal(args.count, 7);
    assert_int_equal(args.sum, 0);
    for (int r = 0; r < 16; r++) {
        values[r] = (r % 2 ? -1 : 1) * ((INT64_C(1) << 62) + r / 2);
    }
    assert_int_equal(engine__jit_scan_entry(&code)(&args), ENGINE_JIT_DONE);
    assert_int_equal(args.count, 7 + 16);
    assert_int_equal(args.sum, 0); /* the pairs cancel */
    engine__jit_free(arena, &code);
    engine__jit_arena_close(arena);
}

/* The vector sum's proof at its edges: c matching values of magnitude
 * near 2^k (the rest NULL), totals on entry near 2^62 and near the ends
 * of int64, against the reference. */
static void vector_sum_proof_edges(void **state)
{
    struct engine_jit_cpu cpu;
    struct engine_jit_arena *arena;
    struct engine_jit_scan_spec spec = {.op = ENGINE_JIT_NE,
                                        .sum = true,
                                        .nulls = true,
                                        .isa = ENGINE_JIT_ISA_AVX2};
    struct engine_jit_code code;
    int64_t values[16];
    uint8_t nulls[2];
    static const int64_t entry[] = {0,
                                    INT64_C(1) << 62,
                                    (INT64_C(1) << 62) + 1,
                                    -(INT64_C(1) << 62),
                                    -(INT64_C(1) << 62) - 1,
                                    INT64_MAX,
                                    INT64_MIN};

    (void)state;
    engine__jit_cpu_detect(&cpu);
    if (engine__jit_cpu_isa(&cpu) < ENGINE_JIT_ISA_AVX2) {
        skip();
    }
    assert_int_equal(engine__jit_arena_open(&arena, 1 << 16), 0);
    assert_int_equal(engine__jit_scan_compile(arena, &spec, &code), 0);
    for (int k = 0; k < 64; k++) {
        for (int form = 0; form < 4; form++) {
            uint64_t p = (uint64_t)1 << k;
            int64_t v = form == 0   ? (int64_t)(p - 1)
                        : form == 1 ? (int64_t)p
                        : form == 2 ? (int64_t)(0 - p)
                                    : (int64_t)(0 - p) - (k < 63);

            for (int c = 1; c <= 16; c++) {
                for (size_t e = 0; e < sizeof(entry) / sizeof(entry[0]); e++) {
                    struct engine_jit_scan_args want = {.values = values,
                                                        .nulls = nulls,
                                                        .n = 16,
                                                        .param = v == 7 ? 8 : 7,
                                                        .sum = entry[e]};
                    struct engine_jit_scan_args got = want;
                    int want_rc;

                    for (int r = 0; r < 16; r++) {
                        values[r] = v;
                    }
                    nulls[0] = (uint8_t)(c >= 8 ? 0 : 0xff << c);
                    nulls[1] =
                        (uint8_t)(c >= 16 ? 0 : 0xff << (c > 8 ? c - 8 : 0));
                    want_rc = reference(&spec, &want);
                    assert_int_equal(engine__jit_scan_entry(&code)(&got),
                                     want_rc);
                    assert_int_equal(got.count, want.count);
                    assert_int_equal(got.sum, want.sum);
                }
            }
        }
    }
    engine__jit_free(arena, &code);
    engine__jit_arena_close(arena);
}

/* Kernels read no byte past the values or the bitmap: both end at an
 * inaccessible page, so an overread faults. */
static void kernels_read_only_their_rows(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct engine_jit_cpu cpu;
    struct engine_jit_arena *arena;

    (void)state;
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + page, page, PROT_NONE), 0);
    assert_int_equal(mprotect(map + 3 * page, page, PROT_NONE), 0);
    engine__jit_cpu_detect(&cpu);
    assert_int_equal(engine__jit_arena_open(&arena, 1 << 20), 0);
    for (int k = 0; k < 48; k++) {
        struct engine_jit_scan_spec spec = {
            .op = (enum engine_jit_op)(k % 6),
            .sum = (k / 6) % 2,
            .nulls = (k / 12) % 2,
            .isa = k < 24 ? ENGINE_JIT_ISA_SCALAR : ENGINE_JIT_ISA_AVX2};
        struct engine_jit_code code;

        if (spec.isa > engine__jit_cpu_isa(&cpu)) {
            continue;
        }
        assert_int_equal(engine__jit_scan_compile(arena, &spec, &code), 0);
        for (uint64_t n = 0; n <= 70; n++) {
            struct engine_jit_scan_args args = {
                .values = (const int64_t *)(void *)(map + page - 8 * n),
                .nulls = spec.nulls ? map + 3 * page - (n + 7) / 8 : NULL,
                .n = n,
                .param = 0};
            struct engine_jit_scan_args want = args;

            memset(map + page - 8 * n, 0x5a, 8 * n);
            memset(map + 3 * page - (n + 7) / 8, 0x33, (n + 7) / 8);
            assert_int_equal(engine__jit_scan_entry(&code)(&args),
                             reference(&spec, &want));
            assert_int_equal(args.count, want.count);
            assert_int_equal(args.sum, want.sum);
        }
        engine__jit_free(arena, &code);
    }
    engine__jit_arena_close(arena);
    munmap(map, 4 * page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_match_the_reference),
        cmocka_unit_test(vector_sums_keep_row_order_overflow),
        cmocka_unit_test(vector_sum_proof_edges),
        cmocka_unit_test(kernels_read_only_their_rows),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
