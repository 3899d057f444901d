/* SPDX-License-Identifier: MIT
 *
 * arena.h: the engine's bump allocator. A statement's parse tree, a batch's
 * produced strings and a query's plan each live in one arena, freed whole,
 * so nothing on a hot path is freed piece by piece.
 *
 * Blocks come from common_malloc(). An arena never grows past size_max
 * bytes in all (ENGINE__ARENA_SIZE_MAX by default): allocation then fails
 * like an out-of-memory, and the caller reports it. Arenas may also share
 * a budget: a statement's plan arena and those of the trigger programs
 * planned into it (trigger_plan.c) hold at most ENGINE__PLAN_SIZE_MAX
 * bytes together, so planning that runs away fails with "out of memory"
 * long before it takes the machine's memory.
 */
#ifndef SINEW_ENGINE_ARENA_H
#define SINEW_ENGINE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* The most one arena may hold: a query whose scratch data passes this fails
 * with an error instead of taking the machine's memory. */
#define ENGINE__ARENA_SIZE_MAX ((size_t)1 << 32)

/* The most a statement's plan may hold, its nested statements' included
 * (trigger programs'): parse trees and plans, not the rows a query reads,
 * which have arenas of their own. As much as one arena, so a statement
 * alone (a literal of ENGINE_MAX_LENGTH bytes) plans as before. */
#define ENGINE__PLAN_SIZE_MAX ENGINE__ARENA_SIZE_MAX

/* Bytes of the first block; later blocks double, up to 1 MiB each. */
#define ENGINE__ARENA_BLOCK_SIZE 4096

struct engine__arena_block;

/* Bytes held by the arenas sharing it, and the most they may hold. */
struct engine_arena_budget {
    size_t allocated;
    size_t size_max;
};

struct engine_arena {
    struct engine__arena_block *blocks; /* newest first; owned */
    size_t used;                        /* bytes handed out in all blocks */
    size_t allocated;                   /* bytes of all blocks */
    size_t size_max;                    /* limit on allocated */
    struct engine_arena_budget *budget; /* shared limit, or NULL; not owned */
};

void engine__arena_init(struct engine_arena *arena);

/* A budget of size_max bytes, none held. */
void engine__arena_budget_init(struct engine_arena_budget *budget,
                               size_t size_max);

/* Counts arena's blocks (those it holds now and later ones) against
 * budget, which must outlive it; NULL stops counting. */
void engine__arena_share(struct engine_arena *arena,
                         struct engine_arena_budget *budget);

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
