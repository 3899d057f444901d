/* SPDX-License-Identifier: MIT
 *
 * heap.c: the one allocation hook of sinew (as sqlite3_config's
 * SQLITE_CONFIG_MALLOC and raft_heap_set), and a wrapper heap that fails
 * chosen allocations so tests can reach every out-of-memory path (as
 * SQLite's faultsim and raft's test heap).
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size);
}

static void libc_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static const struct common_heap libc_heap = {
    .ctx = NULL,
    .malloc = libc_malloc,
    .realloc = libc_realloc,
    .free = libc_free,
};

static struct common_heap installed_heap = {
    .ctx = NULL,
    .malloc = libc_malloc,
    .realloc = libc_realloc,
    .free = libc_free,
};

void common_heap_set(const struct common_heap *heap)
{
    if (heap == NULL) {
        installed_heap = libc_heap;
        return;
    }
    ASSERT(heap->malloc != NULL);
    ASSERT(heap->realloc != NULL);
    ASSERT(heap->free != NULL);
    installed_heap = *heap;
}

void common_heap_get(struct common_heap *out)
{
    ASSERT(out != NULL);
    *out = installed_heap;
}

void *common_malloc(size_t size)
{
    ASSERT(size > 0);
    return installed_heap.malloc(installed_heap.ctx, size);
}

static bool multiply_overflows(size_t count, size_t size, size_t *product)
{
    return __builtin_mul_overflow(count, size, product);
}

void *common_malloc_array(size_t count, size_t size)
{
    size_t total;

    if (multiply_overflows(count, size, &total)) {
        return NULL;
    }
    return common_malloc(total);
}

void *common_calloc(size_t count, size_t size)
{
    void *ptr = common_malloc_array(count, size);

    if (ptr != NULL) {
        memset(ptr, 0, count * size);
    }
    return ptr;
}

void *common_realloc(void *ptr, size_t size)
{
    ASSERT(size > 0);
    return installed_heap.realloc(installed_heap.ctx, ptr, size);
}

void *common_realloc_array(void *ptr, size_t count, size_t size)
{
    size_t total;

    if (multiply_overflows(count, size, &total)) {
        return NULL;
    }
    return common_realloc(ptr, total);
}

void common_free(void *ptr)
{
    if (ptr != NULL) {
        installed_heap.free(installed_heap.ctx, ptr);
    }
}

/* Counts one allocation attempt and says whether it must fail. */
static bool fault_should_fail(struct common_heap_fault *fault)
{
    uint64_t attempt = ++fault->allocations;

    if (fault->fail_at == 0 || attempt < fault->fail_at) {
        return false;
    }
    if (fault->fail_count != UINT64_MAX &&
        attempt - fault->fail_at >= fault->fail_count) {
        return false;
    }
    fault->failures++;
    return true;
}

static void *fault_malloc(void *ctx, size_t size)
{
    struct common_heap_fault *fault = ctx;

    if (fault_should_fail(fault)) {
        return NULL;
    }
    return fault->inner.malloc(fault->inner.ctx, size);
}

static void *fault_realloc(void *ctx, void *ptr, size_t size)
{
    struct common_heap_fault *fault = ctx;

    if (fault_should_fail(fault)) {
        return NULL;
    }
    return fault->inner.realloc(fault->inner.ctx, ptr, size);
}

static void fault_free(void *ctx, void *ptr)
{
    struct common_heap_fault *fault = ctx;

    fault->inner.free(fault->inner.ctx, ptr);
}

void common_heap_fault_init(struct common_heap_fault *fault, uint64_t fail_at,
                            uint64_t fail_count)
{
    ASSERT(fault != NULL);
    common_heap_get(&fault->inner);
    fault->fail_at = fail_at;
    fault->fail_count = fail_count;
    fault->allocations = 0;
    fault->failures = 0;
}

struct common_heap common_heap_fault_heap(struct common_heap_fault *fault)
{
    struct common_heap heap = {
        .ctx = fault,
        .malloc = fault_malloc,
        .realloc = fault_realloc,
        .free = fault_free,
    };

    ASSERT(fault != NULL);
    return heap;
}
