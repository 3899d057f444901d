/* SPDX-License-Identifier: MIT
 *
 * jit_pipe_vec.c: the AVX2 loop of a pipeline kernel (jit_pipe.h), for
 * blocks with no deleted row and no NULL: four int64 rows per ymm
 * register, the predicate a lane mask (all ones: true), as
 * ../shared/reference/jit.md §2.4 describes the vectorized form of a
 * filter feeding an aggregate.
 *
 * AVX2 compares int64 only for = (VPCMPEQQ) and signed > (VPCMPGTQ): <
 * swaps the operands, and <>, <= and >= are the complement (XOR with all
 * ones). With no NULL in the block, IS NULL is all zeros and IS NOT NULL
 * all ones. Parameters are broadcast from the args at each use (a load
 * the CPU does beside the arithmetic).
 *
 * Aggregates keep four lane totals each: count subtracts the mask (-1 per
 * true lane); min and max blend in the lanes where the row matches and
 * beats the lane's value; sum keeps the lanes' positive values, the ones'
 * complement (~v = -v - 1, never negative) of their negative values and
 * how many those were, each a sum of values in [0, 2^63), so a lane total
 * overflows exactly when its sign bit turns on, which is ORed into a
 * sticky register. After the loop, a set sign bit sends the kernel to its
 * bail-out, and the lanes are added into the scalar totals with checked
 * instructions: the positive total only grows and the negative one only
 * shrinks, so the proof of jit_pipe.c (no running total of any order can
 * leave int64) still holds.
 */
#include "jit_pipe.h"

#include <errno.h>

#define SCRATCH_V 13 /* a column's four values */
#define SCRATCH_W 12 /* the other column, or a broadcast parameter */
#define SCRATCH_T 11 /* a temporary mask */
#define ZERO 14
#define ONES 15

int engine__jit_pipe_vector_allocate(struct pipe *p)
{
    const struct engine_jit_pipe_spec *spec = p->spec;
    uint32_t height = spec->root >= 0
                          ? engine__jit_pipe_height(spec, (uint32_t)spec->root)
                          : 0;
    int next = (int)height;
    bool any_sum = false;

    if (height > PIPE_YMM_POOL) {
        return -ENOTSUP;
    }
    for (uint32_t level = 0; level < height; level++) {
        p->mask_ymm[level] = (int)level;
    }
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        enum engine_jit_aggregate_kind kind = spec->aggregates[a].kind;
        bool sum = kind == ENGINE_JIT_SUM;
        bool value = sum || kind == ENGINE_JIT_MIN || kind == ENGINE_JIT_MAX;

        p->count_ymm[a] = next++;
        p->value_ymm[a] = value ? next++ : -1;
        p->negative_ymm[a] = sum ? next++ : -1;
        p->negatives_ymm[a] = sum ? next++ : -1;
        any_sum |= sum;
    }
    p->overflow_ymm = any_sum ? next++ : -1;
    return next > PIPE_YMM_POOL ? -ENOTSUP : 0;
}

/* ymm = the four values of column c from row rcx. */
static void load_values(struct pipe *p, uint32_t c, int ymm)
{
    struct engine_x64 *as = p->as;
    int base = p->column_reg[c];

    if (base == X64_NOREG) {
        engine__x64_load(as, X64_RDX,
                         pipe_at(X64_RDI, A_VALUES + 8 * (int32_t)c));
        base = X64_RDX;
    }
    engine__x64_vload(as, ymm, engine__x64_at(base, X64_RCX, 8, 0));
}

static void broadcast_param(struct pipe *p, uint32_t param, int ymm)
{
    engine__x64_vpbroadcastq_m(p->as, ymm,
                               pipe_at(X64_RDI, A_PARAMS + 8 * (int32_t)param));
}

/* dst = lanes where v op w. */
static void emit_compare(struct engine_x64 *as, enum engine_jit_op op, int dst,
                         int v, int w)
{
    switch (op) {
    case ENGINE_JIT_EQ:
    case ENGINE_JIT_NE:
        engine__x64_vop(as, X64_PCMPEQQ, dst, v, w);
        break;
    case ENGINE_JIT_GT:
    case ENGINE_JIT_LE:
        engine__x64_vop(as, X64_PCMPGTQ, dst, v, w);
        break;
    default: /* LT, GE */
        engine__x64_vop(as, X64_PCMPGTQ, dst, w, v);
        break;
    }
    if (op == ENGINE_JIT_NE || op == ENGINE_JIT_LE || op == ENGINE_JIT_GE) {
        engine__x64_vop(as, X64_PXOR, dst, dst, ONES);
    }
}

static void emit_in(struct pipe *p, const struct engine_jit_node *n, int dst)
{
    struct engine_x64 *as = p->as;

    load_values(p, n->column, SCRATCH_V);
    engine__x64_vop(as, X64_PXOR, dst, dst, dst);
    for (uint32_t i = 0; i < n->param_count; i++) {
        broadcast_param(p, n->param + i, SCRATCH_W);
        engine__x64_vop(as, X64_PCMPEQQ, SCRATCH_W, SCRATCH_W, SCRATCH_V);
        engine__x64_vop(as, X64_POR, dst, dst, SCRATCH_W);
    }
    if (n->negated) {
        engine__x64_vop(as, X64_PXOR, dst, dst, ONES);
    }
}

static void emit_node(struct pipe *p, uint32_t node, uint32_t level)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_node *n = &p->spec->nodes[node];
    int dst = p->mask_ymm[level];

    switch (n->kind) {
    case ENGINE_JIT_NODE_AND:
    case ENGINE_JIT_NODE_OR:
        emit_node(p, n->left, level);
        emit_node(p, n->right, level + 1);
        engine__x64_vop(as, n->kind == ENGINE_JIT_NODE_AND ? X64_PAND : X64_POR,
                        dst, dst, p->mask_ymm[level + 1]);
        return;
    case ENGINE_JIT_NODE_COMPARE:
        load_values(p, n->column, SCRATCH_V);
        broadcast_param(p, n->param, SCRATCH_W);
        emit_compare(as, n->op, dst, SCRATCH_V, SCRATCH_W);
        return;
    case ENGINE_JIT_NODE_COMPARE_TWO:
        load_values(p, n->column, SCRATCH_V);
        load_values(p, n->other, SCRATCH_W);
        emit_compare(as, n->op, dst, SCRATCH_V, SCRATCH_W);
        return;
    case ENGINE_JIT_NODE_IS_NULL:
        engine__x64_vop(as, X64_PXOR, dst, dst, dst);
        return;
    case ENGINE_JIT_NODE_NOT_NULL:
        engine__x64_vop(as, X64_PCMPEQQ, dst, dst, dst);
        return;
    case ENGINE_JIT_NODE_IN:
        emit_in(p, n, dst);
        return;
    }
}

static void emit_sum(struct pipe *p, uint32_t a, int mask)
{
    struct engine_x64 *as = p->as;

    if (mask != ONES) {
        engine__x64_vop(as, X64_PAND, SCRATCH_V, SCRATCH_V, mask);
    }
    /* T = lanes holding a negative value */
    engine__x64_vop(as, X64_PCMPGTQ, SCRATCH_T, ZERO, SCRATCH_V);
    engine__x64_vop(as, X64_PANDN, SCRATCH_W, SCRATCH_T, SCRATCH_V);
    engine__x64_vop(as, X64_PADDQ, p->value_ymm[a], p->value_ymm[a], SCRATCH_W);
    engine__x64_vop(as, X64_POR, p->overflow_ymm, p->overflow_ymm,
                    p->value_ymm[a]);
    engine__x64_vop(as, X64_PANDN, SCRATCH_W, SCRATCH_V, SCRATCH_T);
    engine__x64_vop(as, X64_PADDQ, p->negative_ymm[a], p->negative_ymm[a],
                    SCRATCH_W);
    engine__x64_vop(as, X64_POR, p->overflow_ymm, p->overflow_ymm,
                    p->negative_ymm[a]);
    engine__x64_vop(as, X64_PSUBQ, p->negatives_ymm[a], p->negatives_ymm[a],
                    SCRATCH_T);
}

static void emit_aggregate(struct pipe *p, uint32_t a)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_aggregate *agg = &p->spec->aggregates[a];
    int mask = p->spec->root >= 0 ? p->mask_ymm[0] : ONES;
    int value = p->value_ymm[a];

    engine__x64_vop(as, X64_PSUBQ, p->count_ymm[a], p->count_ymm[a], mask);
    if (agg->kind == ENGINE_JIT_COUNT_STAR || agg->kind == ENGINE_JIT_COUNT) {
        return;
    }
    load_values(p, agg->column, SCRATCH_V);
    if (agg->kind == ENGINE_JIT_SUM) {
        emit_sum(p, a, mask);
        return;
    }
    /* T = lanes where the row beats the lane's minimum (maximum) */
    if (agg->kind == ENGINE_JIT_MIN) {
        engine__x64_vop(as, X64_PCMPGTQ, SCRATCH_T, value, SCRATCH_V);
    } else {
        engine__x64_vop(as, X64_PCMPGTQ, SCRATCH_T, SCRATCH_V, value);
    }
    if (mask != ONES) {
        engine__x64_vop(as, X64_PAND, SCRATCH_T, SCRATCH_T, mask);
    }
    engine__x64_vpblendvb(as, value, value, SCRATCH_V, SCRATCH_T);
}

static void emit_setup(struct pipe *p)
{
    struct engine_x64 *as = p->as;

    engine__x64_vop(as, X64_PCMPEQQ, ONES, ONES, ONES);
    engine__x64_vop(as, X64_PXOR, ZERO, ZERO, ZERO);
    for (uint32_t a = 0; a < p->spec->aggregate_count; a++) {
        const int sums[] = {p->count_ymm[a], p->negative_ymm[a],
                            p->negatives_ymm[a]};
        enum engine_jit_aggregate_kind kind = p->spec->aggregates[a].kind;

        for (size_t i = 0; i < 3; i++) {
            if (sums[i] >= 0) {
                engine__x64_vop(as, X64_PXOR, sums[i], sums[i], sums[i]);
            }
        }
        if (kind == ENGINE_JIT_SUM) {
            engine__x64_vop(as, X64_PXOR, p->value_ymm[a], p->value_ymm[a],
                            p->value_ymm[a]);
        } else if (p->value_ymm[a] >= 0) {
            /* the lanes start from the minimum (maximum) so far */
            engine__x64_vmovq_from(as, p->value_ymm[a], p->value_reg[a]);
            engine__x64_vpbroadcastq(as, p->value_ymm[a], p->value_ymm[a]);
        }
    }
    if (p->overflow_ymm >= 0) {
        engine__x64_vop(as, X64_PXOR, p->overflow_ymm, p->overflow_ymm,
                        p->overflow_ymm);
    }
}

/* reg op= each lane of ymm (through the red zone), JO to the bail-out
 * when checked. */
static void fold_lanes(struct pipe *p, enum engine_x64_alu op, int reg, int ymm,
                       bool checked)
{
    struct engine_x64 *as = p->as;

    engine__x64_vstore(as, pipe_at(X64_RSP, -32), ymm);
    for (int32_t lane = 0; lane < 4; lane++) {
        engine__x64_alu_rm(as, op, reg, pipe_at(X64_RSP, -32 + 8 * lane));
        if (checked) {
            engine__x64_jcc(as, X64_CC_O, p->bail);
        }
    }
}

/* reg = the least (greatest) of reg and the lanes of ymm. */
static void fold_extreme(struct pipe *p, int reg, int ymm, bool min)
{
    struct engine_x64 *as = p->as;

    engine__x64_vstore(as, pipe_at(X64_RSP, -32), ymm);
    for (int32_t lane = 0; lane < 4; lane++) {
        engine__x64_load(as, X64_RAX, pipe_at(X64_RSP, -32 + 8 * lane));
        engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, reg);
        engine__x64_cmovcc(as, min ? X64_CC_L : X64_CC_G, reg, X64_RAX);
    }
}

static void emit_fold(struct pipe *p)
{
    struct engine_x64 *as = p->as;

    if (p->overflow_ymm >= 0) {
        engine__x64_vmovmskpd(as, X64_RAX, p->overflow_ymm);
        engine__x64_test_rr(as, false, X64_RAX, X64_RAX);
        engine__x64_jcc(as, X64_CC_NE, p->bail);
    }
    for (uint32_t a = 0; a < p->spec->aggregate_count; a++) {
        enum engine_jit_aggregate_kind kind = p->spec->aggregates[a].kind;

        fold_lanes(p, X64_ADD, p->count_reg[a], p->count_ymm[a], false);
        if (kind == ENGINE_JIT_SUM) {
            fold_lanes(p, X64_ADD, p->value_reg[a], p->value_ymm[a], true);
            fold_lanes(p, X64_SUB, p->negative_reg[a], p->negative_ymm[a],
                       true);
            fold_lanes(p, X64_SUB, p->negative_reg[a], p->negatives_ymm[a],
                       true);
        } else if (kind == ENGINE_JIT_MIN || kind == ENGINE_JIT_MAX) {
            fold_extreme(p, p->value_reg[a], p->value_ymm[a],
                         kind == ENGINE_JIT_MIN);
        }
    }
}

void engine__jit_pipe_vector_loop(struct pipe *p)
{
    struct engine_x64 *as = p->as;
    uint32_t loop = engine__x64_label(as);
    uint32_t done = engine__x64_label(as);

    emit_setup(p);
    engine__x64_bind(as, loop);
    engine__x64_lea(as, X64_RAX, engine__x64_at(X64_RCX, X64_NOREG, 1, 4));
    engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, X64_RSI);
    engine__x64_jcc(as, X64_CC_A, done);
    if (p->spec->root >= 0) {
        emit_node(p, (uint32_t)p->spec->root, 0);
    }
    for (uint32_t a = 0; a < p->spec->aggregate_count; a++) {
        emit_aggregate(p, a);
    }
    engine__x64_mov_rr(as, true, X64_RCX, X64_RAX);
    engine__x64_jmp(as, loop);
    engine__x64_bind(as, done);
    emit_fold(p);
}
