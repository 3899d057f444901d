/* SPDX-License-Identifier: MIT
 *
 * arena.h: the engine's bump allocator. A statement's parse tree, a batch's
 * produced strings and a query's plan each live in one arena, freed whole,
 * so nothing on a hot path is freed piece by piece.
 *
 * Blocks come from common_malloc(). An arena never grows past size_max
 * bytes in all (ENGINE__ARENA_SIZE_MAX by default): allocation then fails
 * like an out-of-memory, and the caller reports it.
 */
#ifndef SINEW_ENGINE_ARENA_H
#define SINEW_ENGINE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* The most one arena may hold: a query whose scratch data passes this fails
 * with an error instead of taking the machine's memory. */
#define ENGINE__ARENA_SIZE_MAX ((size_t)1 << 32)

/* Bytes of the first block; later blocks double, up to 1 MiB each. */
#define ENGINE__ARENA_BLOCK_SIZE 4096

struct engine__arena_block;

struct engine_arena {
    struct engine__arena_block *blocks; /* newest first; owned */
    size_t used;                        /* bytes handed out in all blocks */
    size_t allocated;                   /* bytes of all blocks */
    size_t size_max;                    /* limit on allocated */
};

void engine__arena_init(struct engine_arena *arena);

/* Frees every block. The arena may be used again. */
void engine__arena_close(struct engine_arena *arena);

/* Frees everything allocated; keeps the first block for reuse. */
void engine__arena_reset(struct engine_arena *arena);

/* size bytes aligned for any type, or NULL when out of memory or past
 * size_max. size may be 0 (returns a unique non-NULL pointer). */
void *engine__arena_alloc(struct engine_arena *arena, size_t size);

/* A copy of size bytes plus a terminating NUL, or NULL. */
char *engine__arena_strndup(struct engine_arena *arena, const char *text,
                            size_t size);

/* A copy of size bytes (no terminator), or NULL. bytes may be NULL when
 * size is 0. */
void *engine__arena_memdup(struct engine_arena *arena, const void *bytes,
                           size_t size);

#endif /* SINEW_ENGINE_ARENA_H */
