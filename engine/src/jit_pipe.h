/* SPDX-License-Identifier: MIT
 *
 * jit_pipe.h: what the pipeline kernel's two generator files share:
 * jit_pipe.c (the spec's checks, the registers, the prologue, the scalar
 * loop, the epilogue) and jit_pipe_vec.c (the AVX2 loop that runs first,
 * four rows per iteration, in kernels for blocks without deleted rows or
 * NULLs).
 */
#ifndef SINEW_ENGINE_JIT_PIPE_H
#define SINEW_ENGINE_JIT_PIPE_H

#include <stddef.h>

#include "jit.h"

#define A_VALUES (int32_t) offsetof(struct engine_jit_pipe_args, values)
#define A_NULLS (int32_t) offsetof(struct engine_jit_pipe_args, nulls)
#define A_DELETED (int32_t) offsetof(struct engine_jit_pipe_args, deleted)
#define A_BEGIN (int32_t) offsetof(struct engine_jit_pipe_args, begin)
#define A_END (int32_t) offsetof(struct engine_jit_pipe_args, end)
#define A_PARAMS (int32_t) offsetof(struct engine_jit_pipe_args, params)
#define A_TOTALS (int32_t) offsetof(struct engine_jit_pipe_args, totals)
#define TOTAL_SIZE (int32_t)sizeof(struct engine_jit_pipe_total)
#define T_COUNT (int32_t) offsetof(struct engine_jit_pipe_total, count)
#define T_VALUE (int32_t) offsetof(struct engine_jit_pipe_total, value)
#define T_NEGATIVE (int32_t) offsetof(struct engine_jit_pipe_total, negative)

/* General registers the scalar code hands out (jit_pipe.c). */
#define PIPE_POOL_SIZE 10
/* ymm registers the vector loop hands out: ymm0..ymm10; ymm11-13 are its
 * scratch, ymm14 zero, ymm15 all ones. */
#define PIPE_YMM_POOL 11

struct pipe {
    struct engine_x64 *as;
    const struct engine_jit_pipe_spec *spec;
    /* general registers, X64_NOREG where none */
    int count_reg[ENGINE__JIT_PIPE_AGGREGATES];
    int value_reg[ENGINE__JIT_PIPE_AGGREGATES];    /* SUM: the positives */
    int negative_reg[ENGINE__JIT_PIPE_AGGREGATES]; /* SUM: the negatives */
    int bool_reg[PIPE_POOL_SIZE];                  /* per tree level */
    int column_reg[ENGINE__JIT_PIPE_COLUMNS];      /* value pointers */
    /* ymm registers of the vector loop, -1 where none */
    int mask_ymm[PIPE_YMM_POOL]; /* per tree level */
    int count_ymm[ENGINE__JIT_PIPE_AGGREGATES];
    int value_ymm[ENGINE__JIT_PIPE_AGGREGATES];     /* SUM: positives */
    int negative_ymm[ENGINE__JIT_PIPE_AGGREGATES];  /* SUM: ~v of negatives */
    int negatives_ymm[ENGINE__JIT_PIPE_AGGREGATES]; /* SUM: how many */
    int overflow_ymm; /* SUM: sign bits of every lane total, ORed */
    uint32_t bail;
};

static inline struct engine_x64_mem pipe_at(int base, int32_t disp)
{
    return engine__x64_at(base, X64_NOREG, 1, disp);
}

/* Levels of the tree under node: the registers its evaluation holds at
 * once. 0 when the spec is malformed (a child index out of range or not
 * below its parent, which also rules out cycles). */
uint32_t engine__jit_pipe_height(const struct engine_jit_pipe_spec *spec,
                                 uint32_t node);

/* jit_pipe_vec.c: hands out the ymm registers (-ENOTSUP when they do not
 * fit), then emits the loop over rows rcx.. in fours while four remain,
 * with its totals added to the general registers' (JO to p->bail). */
int engine__jit_pipe_vector_allocate(struct pipe *p);
void engine__jit_pipe_vector_loop(struct pipe *p);

#endif /* SINEW_ENGINE_JIT_PIPE_H */
