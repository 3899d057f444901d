/* SPDX-License-Identifier: MIT
 *
 * arena.c: bump allocation in a chain of blocks (arena.h). Blocks double in
 * size so a large query makes few allocations, and a reset keeps the first
 * block so a statement run many times allocates nothing after the first.
 */
#include "arena.h"

#include <stdalign.h>
#include <string.h>

#include "common.h"

#define BLOCK_SIZE_MAX ((size_t)1 << 20)

struct engine__arena_block {
    struct engine__arena_block *next; /* older block */
    size_t size;                      /* bytes of data[] */
    size_t used;                      /* bytes of data[] handed out */
    alignas(max_align_t) unsigned char data[];
};

void engine__arena_init(struct engine_arena *arena)
{
    ASSERT(arena != NULL);
    arena->blocks = NULL;
    arena->used = 0;
    arena->allocated = 0;
    arena->size_max = ENGINE__ARENA_SIZE_MAX;
    arena->budget = NULL;
}

void engine__arena_budget_init(struct engine_arena_budget *budget,
                               size_t size_max)
{
    ASSERT(budget != NULL);
    budget->allocated = 0;
    budget->size_max = size_max;
}

void engine__arena_share(struct engine_arena *arena,
                         struct engine_arena_budget *budget)
{
    ASSERT(arena != NULL);
    if (arena->budget != NULL) {
        arena->budget->allocated -= arena->allocated;
    }
    arena->budget = budget;
    if (budget != NULL) {
        budget->allocated += arena->allocated;
    }
}

/* Gives size bytes of blocks back to the arena's budget. */
static void unbudget(struct engine_arena *arena, size_t size)
{
    if (arena->budget != NULL) {
        ASSERT(arena->budget->allocated >= size);
        arena->budget->allocated -= size;
    }
}

void engine__arena_close(struct engine_arena *arena)
{
    ASSERT(arena != NULL);
    while (arena->blocks != NULL) {
        struct engine__arena_block *next = arena->blocks->next;

        unbudget(arena, arena->blocks->size);
        common_free(arena->blocks);
        arena->blocks = next;
    }
    arena->used = 0;
    arena->allocated = 0;
}

void engine__arena_reset(struct engine_arena *arena)
{
    struct engine__arena_block *first;

    ASSERT(arena != NULL);
    if (arena->blocks == NULL) {
        return;
    }
    first = arena->blocks;
    while (first->next != NULL) {
        struct engine__arena_block *older = first->next;

        first->next = older->next;
        arena->allocated -= older->size;
        unbudget(arena, older->size);
        /* Keep the newest (largest) block, free the older ones. */
        common_free(older);
    }
    first->used = 0;
    arena->used = 0;
}

static size_t align_up(size_t size)
{
    size_t align = alignof(max_align_t);

    return (size + align - 1) & ~(align - 1);
}

static struct engine__arena_block *new_block(struct engine_arena *arena,
                                             size_t needed)
{
    size_t size = ENGINE__ARENA_BLOCK_SIZE;
    struct engine__arena_block *block;

    if (arena->blocks != NULL) {
        size = arena->blocks->size * 2;
    }
    if (size > BLOCK_SIZE_MAX) {
        size = BLOCK_SIZE_MAX;
    }
    if (size < needed) {
        size = needed;
    }
    if (size > arena->size_max - arena->allocated ||
        arena->allocated > arena->size_max) {
        return NULL;
    }
    if (arena->budget != NULL &&
        (size > arena->budget->size_max - arena->budget->allocated ||
         arena->budget->allocated > arena->budget->size_max)) {
        return NULL;
    }
    block = common_malloc(sizeof(*block) + size);
    if (block == NULL) {
        return NULL;
    }
    if (arena->budget != NULL) {
        arena->budget->allocated += size;
    }
    block->next = arena->blocks;
    block->size = size;
    block->used = 0;
    arena->blocks = block;
    arena->allocated += size;
    return block;
}

void *engine__arena_alloc(struct engine_arena *arena, size_t size)
{
    struct engine__arena_block *block;
    size_t rounded;
    void *p;

    ASSERT(arena != NULL);
    if (size > arena->size_max) {
        return NULL;
    }
    rounded = align_up(size == 0 ? 1 : size);
    block = arena->blocks;
    if (block == NULL || block->size - block->used < rounded) {
        block = new_block(arena, rounded);
        if (block == NULL) {
            return NULL;
        }
    }
    p = block->data + block->used;
    block->used += rounded;
    arena->used += rounded;
    return p;
}

void *engine__arena_memdup(struct engine_arena *arena, const void *bytes,
                           size_t size)
{
    void *copy = engine__arena_alloc(arena, size);

    if (copy != NULL && size > 0) {
        memcpy(copy, bytes, size);
    }
    return copy;
}

char *engine__arena_strndup(struct engine_arena *arena, const char *text,
                            size_t size)
{
    char *copy;

    if (size == SIZE_MAX) {
        return NULL;
    }
    copy = engine__arena_alloc(arena, size + 1);
    if (copy != NULL) {
        if (size > 0) {
            memcpy(copy, text, size);
        }
        copy[size] = '\0';
    }
    return copy;
}
