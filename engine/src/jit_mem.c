/* SPDX-License-Identifier: MIT
 *
 * jit_mem.c: executable memory for generated code, W^X.
 *
 * An arena reserves its whole cap of address space once, PROT_NONE, so
 * installing code costs two mprotect() calls and no mmap() (jit.md §4:
 * the syscalls were the whole of a 6 µs compile). Code gets a block of
 * whole pages: made RW, written, then RX. A page is never writable and
 * executable at once, and a page of live code is never made writable
 * again (another thread may be running it); freeing a block makes it
 * PROT_NONE and drops its memory (MADV_DONTNEED), and the next install
 * may reuse it. The cap bounds what compiled code can hold; past it an
 * install fails and the caller runs the interpreter.
 *
 * Blocks are found first-fit in a byte-per-page map. Arenas hold tens of
 * kernels of a page or two each, so a linear search is cheaper than any
 * structure.
 *
 * engine__jit_compile() is what every kernel generator's compile is:
 * check the ISA against the CPU, emit into a buffer, install.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, madvise */

#include "jit.h"

#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct engine_jit_arena {
    uint8_t *base; /* the reservation */
    size_t page_size;
    uint32_t npages;
    uint32_t used;      /* pages in blocks */
    uint8_t *page_used; /* npages flags */
};

int engine__jit_arena_open(struct engine_jit_arena **out, size_t cap)
{
    struct engine_jit_arena *arena = NULL;
    long page = sysconf(_SC_PAGESIZE);
    size_t page_size = page > 0 ? (size_t)page : 4096;
    size_t npages;
    int rc;

    *out = NULL;
    if (cap == 0 || cap > ENGINE__JIT_ARENA_MAX) {
        return COMMON_ETOOBIG;
    }
    npages = (cap + page_size - 1) / page_size;
    arena = common_calloc(1, sizeof(*arena));
    if (arena == NULL) {
        return COMMON_ENOMEM;
    }
    arena->page_used = common_calloc(npages, 1);
    if (arena->page_used == NULL) {
        rc = COMMON_ENOMEM;
        goto fail;
    }
    arena->base = mmap(NULL, npages * page_size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena->base == MAP_FAILED) {
        arena->base = NULL;
        rc = -errno;
        goto fail;
    }
    arena->page_size = page_size;
    arena->npages = (uint32_t)npages;
    *out = arena;
    return 0;

fail:
    common_free(arena->page_used);
    common_free(arena);
    return rc;
}

void engine__jit_arena_close(struct engine_jit_arena *arena)
{
    if (arena == NULL) {
        return;
    }
    munmap(arena->base, (size_t)arena->npages * arena->page_size);
    common_free(arena->page_used);
    common_free(arena);
}

/* The first run of want free pages, or UINT32_MAX. */
static uint32_t find_block(const struct engine_jit_arena *arena, uint32_t want)
{
    uint32_t run = 0;

    for (uint32_t p = 0; p < arena->npages; p++) {
        run = arena->page_used[p] ? 0 : run + 1;
        if (run == want) {
            return p + 1 - want;
        }
    }
    return UINT32_MAX;
}

static void mark(struct engine_jit_arena *arena, uint32_t page, uint32_t pages,
                 uint8_t used)
{
    memset(arena->page_used + page, used, pages);
    arena->used = used ? arena->used + pages : arena->used - pages;
}

/* Back to PROT_NONE with no memory behind it. Failure would leave the
 * pages RW or RX but unused: harmless, and nothing can be done about it. */
static void drop_pages(struct engine_jit_arena *arena, uint8_t *start,
                       size_t bytes)
{
    (void)arena;
    (void)mprotect(start, bytes, PROT_NONE);
    (void)madvise(start, bytes, MADV_DONTNEED);
}

int engine__jit_install(struct engine_jit_arena *arena, const uint8_t *bytes,
                        size_t size, struct engine_jit_code *code)
{
    uint32_t pages;
    uint32_t page;
    uint8_t *start;
    size_t span;

    memset(code, 0, sizeof(*code));
    if (size == 0 || size > (size_t)arena->npages * arena->page_size) {
        return COMMON_ETOOBIG;
    }
    pages = (uint32_t)((size + arena->page_size - 1) / arena->page_size);
    page = find_block(arena, pages);
    if (page == UINT32_MAX) {
        return COMMON_ETOOBIG;
    }
    start = arena->base + (size_t)page * arena->page_size;
    span = (size_t)pages * arena->page_size;
    if (mprotect(start, span, PROT_READ | PROT_WRITE) != 0) {
        return -errno;
    }
    memcpy(start, bytes, size);
    /* int3 after the code: a stray jump traps instead of running zeros. */
    memset(start + size, 0xcc, span - size);
    if (mprotect(start, span, PROT_READ | PROT_EXEC) != 0) {
        int rc = -errno;

        drop_pages(arena, start, span);
        return rc;
    }
    __builtin___clear_cache((char *)start, (char *)start + size);
    mark(arena, page, pages, 1);
    *code = (struct engine_jit_code){
        .entry = start, .size = size, .page = page, .pages = pages};
    return 0;
}

void engine__jit_free(struct engine_jit_arena *arena,
                      struct engine_jit_code *code)
{
    if (code->pages == 0) {
        return;
    }
    drop_pages(arena, arena->base + (size_t)code->page * arena->page_size,
               (size_t)code->pages * arena->page_size);
    mark(arena, code->page, code->pages, 0);
    memset(code, 0, sizeof(*code));
}

void engine__jit_arena_range(const struct engine_jit_arena *arena,
                             uintptr_t *start, size_t *size)
{
    *start = (uintptr_t)arena->base;
    *size = (size_t)arena->npages * arena->page_size;
}

size_t engine__jit_arena_used(const struct engine_jit_arena *arena)
{
    return (size_t)arena->used * arena->page_size;
}

int engine__jit_compile(struct engine_jit_arena *arena, enum engine_jit_isa isa,
                        engine_jit_emit_fn emit, const void *spec,
                        struct engine_jit_code *code)
{
    struct engine_jit_cpu cpu;
    struct engine_x64 as;
    int rc;

    engine__jit_cpu_detect(&cpu);
    if (isa == ENGINE_JIT_ISA_NONE || isa > engine__jit_cpu_isa(&cpu)) {
        return -ENOTSUP;
    }
    engine__x64_init(&as);
    rc = emit(&as, spec);
    if (rc == 0) {
        rc = engine__jit_install(arena, as.code, as.size, code);
    }
    engine__x64_close(&as);
    return rc;
}

void engine__jit_entry(const struct engine_jit_code *code, void *fn,
                       size_t size)
{
    ASSERT(size == sizeof(code->entry));
    memcpy(fn, &code->entry, size);
}
