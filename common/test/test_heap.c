/* SPDX-License-Identifier: MIT
 *
 * Goal: allocations go through the installed heap; overflowing array sizes
 * fail instead of wrapping; a failed realloc keeps the old block; and the
 * fault heap fails exactly the allocations it was told to and counts them.
 * Method: a counting heap and the fault heap layered over cmocka's heap
 * (which also proves every block here is freed).
 */
#include "common_test.h"

#include <string.h>

struct counting {
    int mallocs;
    int reallocs;
    int frees;
};

static void *counting_malloc(void *ctx, size_t size)
{
    ((struct counting *)ctx)->mallocs++;
    return test_malloc(size);
}

static void *counting_realloc(void *ctx, void *ptr, size_t size)
{
    ((struct counting *)ctx)->reallocs++;
    return test_realloc(ptr, size);
}

static void counting_free(void *ctx, void *ptr)
{
    ((struct counting *)ctx)->frees++;
    test_free(ptr);
}

static void heap_routes_through_installed_heap(void **state)
{
    struct counting counts = {0};
    struct common_heap heap = {&counts, counting_malloc, counting_realloc,
                               counting_free};
    struct common_heap saved;
    char *p;

    (void)state;
    common_heap_get(&saved);
    common_heap_set(&heap);
    p = common_malloc(8);
    assert_non_null(p);
    p = common_realloc(p, 64);
    assert_non_null(p);
    common_free(p);
    common_free(NULL);
    common_heap_set(&saved);
    assert_int_equal(counts.mallocs, 1);
    assert_int_equal(counts.reallocs, 1);
    assert_int_equal(counts.frees, 1);
}

static void heap_array_overflow_fails(void **state)
{
    (void)state;
    assert_null(common_malloc_array(SIZE_MAX / 2, 3));
    assert_null(common_calloc(SIZE_MAX / 4, 8));
    assert_null(common_realloc_array(NULL, SIZE_MAX, 2));
}

static void heap_calloc_zeroes(void **state)
{
    uint32_t *p;

    (void)state;
    p = common_calloc(100, sizeof(*p));
    assert_non_null(p);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(p[i], 0);
    }
    common_free(p);
}

static void heap_fault_fails_the_nth_allocation(void **state)
{
    struct common_heap_fault fault;
    struct common_heap heap;
    struct common_heap saved;
    void *blocks[5];

    (void)state;
    common_heap_get(&saved);
    common_heap_fault_init(&fault, 3, 1);
    heap = common_heap_fault_heap(&fault);
    common_heap_set(&heap);
    for (int i = 0; i < 5; i++) {
        blocks[i] = common_malloc(16);
    }
    common_heap_set(&saved);
    assert_non_null(blocks[0]);
    assert_non_null(blocks[1]);
    assert_null(blocks[2]);
    assert_non_null(blocks[3]);
    assert_non_null(blocks[4]);
    assert_int_equal(fault.allocations, 5);
    assert_int_equal(fault.failures, 1);
    for (int i = 0; i < 5; i++) {
        common_free(blocks[i]);
    }
}

static void heap_fault_fails_a_run_and_realloc_keeps_block(void **state)
{
    struct common_heap_fault fault;
    struct common_heap heap;
    struct common_heap saved;
    char *p;

    (void)state;
    common_heap_get(&saved);
    common_heap_fault_init(&fault, 2, UINT64_MAX);
    heap = common_heap_fault_heap(&fault);
    common_heap_set(&heap);
    p = common_malloc(4);
    assert_non_null(p);
    memcpy(p, "abc", 4);
    assert_null(common_realloc(p, 4096));
    assert_null(common_malloc(1));
    assert_null(common_malloc(1));
    common_heap_set(&saved);
    assert_string_equal(p, "abc");
    assert_int_equal(fault.allocations, 4);
    assert_int_equal(fault.failures, 3);
    common_free(p);
}

static void heap_fault_zero_never_fails(void **state)
{
    struct common_heap_fault fault;
    struct common_heap heap;
    struct common_heap saved;

    (void)state;
    common_heap_get(&saved);
    common_heap_fault_init(&fault, 0, UINT64_MAX);
    heap = common_heap_fault_heap(&fault);
    common_heap_set(&heap);
    for (int i = 0; i < 100; i++) {
        void *p = common_malloc(1);
        assert_non_null(p);
        common_free(p);
    }
    common_heap_set(&saved);
    assert_int_equal(fault.allocations, 100);
    assert_int_equal(fault.failures, 0);
}

static void heap_zero_size_is_a_bug(void **state)
{
    (void)state;
    expect_assert_failure(common_malloc(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heap_routes_through_installed_heap),
        cmocka_unit_test(heap_array_overflow_fails),
        cmocka_unit_test(heap_calloc_zeroes),
        cmocka_unit_test(heap_fault_fails_the_nth_allocation),
        cmocka_unit_test(heap_fault_fails_a_run_and_realloc_keeps_block),
        cmocka_unit_test(heap_fault_zero_never_fails),
        cmocka_unit_test(heap_zero_size_is_a_bug),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
