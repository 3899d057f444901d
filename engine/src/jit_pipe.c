/* SPDX-License-Identifier: MIT
 *
 * jit_pipe.c: the pipeline kernel generator (jit.h): one loop over a
 * table's slots that tests a whole WHERE tree and feeds count, sum, min
 * and max, fused, the way ../shared/reference/jit.md §4 describes musql's
 * tier 1 (a loop per plan shape, operands read straight from the column
 * arrays, no tagged values, no per-operator batches).
 *
 * Each row is computed without branches but the loop's own (jit.md §2.4
 * (5)): a leaf is CMP then SETcc into a 0/1 register, NULL flags clear it
 * (a NULL is never true in a WHERE, and with NOT pushed into the leaves by
 * the planner an AND/OR tree needs nothing more: SQLite's three-valued
 * logic only keeps rows whose value is TRUE), AND and OR combine the
 * registers, and aggregates take the row through masks: count adds the
 * bit, sum adds the value ANDed with its negation, min and max replace a
 * non-matching row by their identity and CMOV. A deleted slot is the only
 * branch, taken rarely.
 *
 * sum() follows sumStep(), whose running total must stay in int64 in the
 * order SQLite adds (rowid order). The kernel reads slots in their own
 * order, so it proves the order does not matter instead: it adds the
 * positive and the negative values into two checked totals (JO to the
 * bail-out); every running total in any order lies between them.
 *
 * With AVX2, a vector loop (jit_pipe_vec.c) takes the rows four at a
 * time first, and the scalar loop the last one to three.
 *
 * Registers: rdi args, rcx slot, rsi end, rax and rdx scratch; the pool
 * (rbx rbp r8-r15) holds, in order, the aggregates' accumulators, the
 * predicate's 0/1 results (one per level of the tree), then the value
 * pointers of as many columns as remain (the others are read from args).
 */
#include "jit_pipe.h"

#include "common.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const int pool[] = {X64_RBX, X64_RBP, X64_R8,  X64_R9,  X64_R10,
                           X64_R11, X64_R12, X64_R13, X64_R14, X64_R15};
_Static_assert(sizeof(pool) / sizeof(pool[0]) == PIPE_POOL_SIZE, "pool");
static const int saved[] = {X64_RBX, X64_RBP, X64_R12,
                            X64_R13, X64_R14, X64_R15};
#define SAVED_SIZE (sizeof(saved) / sizeof(saved[0]))

static enum engine_x64_cc op_cc(enum engine_jit_op op)
{
    static const enum engine_x64_cc cc[] = {
        [ENGINE_JIT_EQ] = X64_CC_E, [ENGINE_JIT_NE] = X64_CC_NE,
        [ENGINE_JIT_LT] = X64_CC_L, [ENGINE_JIT_LE] = X64_CC_LE,
        [ENGINE_JIT_GT] = X64_CC_G, [ENGINE_JIT_GE] = X64_CC_GE,
    };
    return cc[op];
}

uint32_t engine__jit_pipe_height(const struct engine_jit_pipe_spec *spec,
                                 uint32_t node)
{
    const struct engine_jit_node *n = &spec->nodes[node];
    uint32_t left, right;

    if (n->kind != ENGINE_JIT_NODE_AND && n->kind != ENGINE_JIT_NODE_OR) {
        return 1;
    }
    if (n->left >= node || n->right >= node) {
        return 0;
    }
    left = engine__jit_pipe_height(spec, n->left);
    right = engine__jit_pipe_height(spec, n->right);
    if (left == 0 || right == 0) {
        return 0;
    }
    return left > right + 1 ? left : right + 1;
}

static bool node_valid(const struct engine_jit_pipe_spec *spec,
                       const struct engine_jit_node *n)
{
    if (n->kind == ENGINE_JIT_NODE_AND || n->kind == ENGINE_JIT_NODE_OR) {
        return true;
    }
    if (n->column >= spec->column_count ||
        (n->kind == ENGINE_JIT_NODE_COMPARE_TWO &&
         n->other >= spec->column_count)) {
        return false;
    }
    if (n->kind == ENGINE_JIT_NODE_COMPARE) {
        return n->param < spec->param_count;
    }
    if (n->kind == ENGINE_JIT_NODE_IN) {
        return n->param_count > 0 &&
               (uint32_t)n->param + n->param_count <= spec->param_count;
    }
    return true;
}

static bool spec_valid(const struct engine_jit_pipe_spec *spec)
{
    if (spec->column_count > ENGINE__JIT_PIPE_COLUMNS ||
        spec->node_count > ENGINE__JIT_PIPE_NODES ||
        spec->aggregate_count == 0 ||
        spec->aggregate_count > ENGINE__JIT_PIPE_AGGREGATES ||
        spec->param_count > ENGINE__JIT_PIPE_PARAMS ||
        spec->root >= (int32_t)spec->node_count) {
        return false;
    }
    for (uint32_t i = 0; i < spec->node_count; i++) {
        if (!node_valid(spec, &spec->nodes[i])) {
            return false;
        }
    }
    for (uint32_t i = 0; i < spec->aggregate_count; i++) {
        if (spec->aggregates[i].kind != ENGINE_JIT_COUNT_STAR &&
            spec->aggregates[i].column >= spec->column_count) {
            return false;
        }
    }
    return true;
}

/* Hands out the pool: accumulators, tree levels, then column pointers.
 * -ENOTSUP when the first two do not fit. */
static int allocate(struct pipe *p)
{
    const struct engine_jit_pipe_spec *spec = p->spec;
    uint32_t next = 0;
    uint32_t height = spec->root >= 0
                          ? engine__jit_pipe_height(spec, (uint32_t)spec->root)
                          : 0;

    if (spec->root >= 0 && height == 0) {
        return -ENOTSUP;
    }
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        enum engine_jit_aggregate_kind kind = spec->aggregates[a].kind;
        bool has_value =
            kind != ENGINE_JIT_COUNT_STAR && kind != ENGINE_JIT_COUNT;
        bool is_sum = kind == ENGINE_JIT_SUM;

        if (next + 1 + has_value + is_sum > PIPE_POOL_SIZE) {
            return -ENOTSUP;
        }
        p->count_reg[a] = pool[next++];
        p->value_reg[a] = has_value ? pool[next++] : X64_NOREG;
        p->negative_reg[a] = is_sum ? pool[next++] : X64_NOREG;
    }
    if (next + height > PIPE_POOL_SIZE) {
        return -ENOTSUP;
    }
    for (uint32_t level = 0; level < height; level++) {
        p->bool_reg[level] = pool[next++];
    }
    for (uint32_t c = 0; c < spec->column_count; c++) {
        p->column_reg[c] = next < PIPE_POOL_SIZE ? pool[next++] : X64_NOREG;
    }
    return 0;
}

/* dst = column c's value at slot rcx. */
static void load_value(struct pipe *p, uint32_t c, int dst)
{
    struct engine_x64 *as = p->as;
    int base = p->column_reg[c];

    if (base == X64_NOREG) {
        engine__x64_load(as, dst, pipe_at(X64_RDI, A_VALUES + 8 * (int32_t)c));
        base = dst;
    }
    engine__x64_load(as, dst, engine__x64_at(base, X64_RCX, 8, 0));
}

/* Whether column c's NULL flags must be read. */
static bool reads_nulls(const struct pipe *p, uint32_t c)
{
    return p->spec->checked && p->spec->nullable[c];
}

/* rdx = 1 when column c is not NULL at slot rcx, else 0. */
static void load_not_null(struct pipe *p, uint32_t c)
{
    struct engine_x64 *as = p->as;

    engine__x64_load(as, X64_RDX, pipe_at(X64_RDI, A_NULLS + 8 * (int32_t)c));
    engine__x64_load_u8(as, X64_RDX, engine__x64_at(X64_RDX, X64_RCX, 1, 0));
    engine__x64_test_rr(as, false, X64_RDX, X64_RDX);
    engine__x64_setcc(as, X64_CC_E, X64_RDX);
}

/* r &= column c is not NULL, when it may be. */
static void clear_if_null(struct pipe *p, uint32_t c, int r)
{
    if (reads_nulls(p, c)) {
        load_not_null(p, c);
        engine__x64_alu_rr(p->as, X64_AND, true, r, X64_RDX);
    }
}

static void emit_in(struct pipe *p, const struct engine_jit_node *n, int r)
{
    struct engine_x64 *as = p->as;

    engine__x64_alu_rr(as, X64_XOR, false, r, r);
    load_value(p, n->column, X64_RAX);
    engine__x64_alu_rr(as, X64_XOR, false, X64_RDX, X64_RDX);
    for (uint32_t i = 0; i < n->param_count; i++) {
        int32_t param = (int32_t)(n->param + i);

        engine__x64_alu_rm(as, X64_CMP, X64_RAX,
                           pipe_at(X64_RDI, A_PARAMS + 8 * param));
        engine__x64_setcc(as, X64_CC_E, X64_RDX);
        engine__x64_alu_rr(as, X64_OR, true, r, X64_RDX);
    }
    if (n->negated) {
        engine__x64_alu_ri(as, X64_XOR, true, r, 1);
    }
    clear_if_null(p, n->column, r);
}

/* The 0/1 result of node into the register of its level. */
static void emit_node(struct pipe *p, uint32_t node, uint32_t level)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_node *n = &p->spec->nodes[node];
    int r = p->bool_reg[level];

    switch (n->kind) {
    case ENGINE_JIT_NODE_AND:
    case ENGINE_JIT_NODE_OR:
        emit_node(p, n->left, level);
        emit_node(p, n->right, level + 1);
        engine__x64_alu_rr(as,
                           n->kind == ENGINE_JIT_NODE_AND ? X64_AND : X64_OR,
                           true, r, p->bool_reg[level + 1]);
        return;
    case ENGINE_JIT_NODE_COMPARE:
        engine__x64_alu_rr(as, X64_XOR, false, r, r);
        load_value(p, n->column, X64_RAX);
        engine__x64_alu_rm(as, X64_CMP, X64_RAX,
                           pipe_at(X64_RDI, A_PARAMS + 8 * (int32_t)n->param));
        engine__x64_setcc(as, op_cc(n->op), r);
        clear_if_null(p, n->column, r);
        return;
    case ENGINE_JIT_NODE_COMPARE_TWO:
        engine__x64_alu_rr(as, X64_XOR, false, r, r);
        load_value(p, n->column, X64_RAX);
        load_value(p, n->other, X64_RDX);
        engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, X64_RDX);
        engine__x64_setcc(as, op_cc(n->op), r);
        clear_if_null(p, n->column, r);
        clear_if_null(p, n->other, r);
        return;
    case ENGINE_JIT_NODE_IS_NULL:
    case ENGINE_JIT_NODE_NOT_NULL:
        engine__x64_alu_rr(as, X64_XOR, false, r, r);
        if (reads_nulls(p, n->column)) {
            load_not_null(p, n->column);
            engine__x64_mov_rr(as, false, r, X64_RDX);
        } else {
            engine__x64_alu_ri(as, X64_ADD, false, r, 1);
        }
        if (n->kind == ENGINE_JIT_NODE_IS_NULL) {
            engine__x64_alu_ri(as, X64_XOR, false, r, 1);
        }
        return;
    case ENGINE_JIT_NODE_IN:
        emit_in(p, n, r);
        return;
    }
}

/* rdx = 1 when the row feeds aggregate a (it matched and its column is
 * not NULL), else 0; false when that is always 1 (nothing emitted). */
static bool emit_feeds(struct pipe *p, uint32_t a)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_aggregate *agg = &p->spec->aggregates[a];
    bool nulls =
        agg->kind != ENGINE_JIT_COUNT_STAR && reads_nulls(p, agg->column);

    if (nulls) {
        load_not_null(p, agg->column);
        if (p->spec->root >= 0) {
            engine__x64_alu_rr(as, X64_AND, true, X64_RDX, p->bool_reg[0]);
        }
        return true;
    }
    if (p->spec->root >= 0) {
        engine__x64_mov_rr(as, true, X64_RDX, p->bool_reg[0]);
        return true;
    }
    return false;
}

/* rax = the row's value when it feeds (rdx 1), else the identity of
 * kind (0 for SUM; INT64_MAX, INT64_MIN for MIN, MAX); rdx is spent. */
static void emit_masked_value(struct pipe *p, uint32_t a)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_aggregate *agg = &p->spec->aggregates[a];

    load_value(p, agg->column, X64_RAX);
    engine__x64_unary(as, X64_NEG, true, X64_RDX);
    engine__x64_alu_rr(as, X64_AND, true, X64_RAX, X64_RDX);
    if (agg->kind == ENGINE_JIT_SUM) {
        return;
    }
    engine__x64_unary(as, X64_NOT, true, X64_RDX);
    engine__x64_shift_ri(as, agg->kind == ENGINE_JIT_MIN ? X64_SHR : X64_SHL,
                         true, X64_RDX, agg->kind == ENGINE_JIT_MIN ? 1 : 63);
    engine__x64_alu_rr(as, X64_OR, true, X64_RAX, X64_RDX);
}

static void emit_aggregate(struct pipe *p, uint32_t a)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_aggregate *agg = &p->spec->aggregates[a];
    bool masked = emit_feeds(p, a);
    int value = p->value_reg[a];

    if (masked) {
        engine__x64_alu_rr(as, X64_ADD, true, p->count_reg[a], X64_RDX);
    } else {
        engine__x64_alu_ri(as, X64_ADD, true, p->count_reg[a], 1);
    }
    if (agg->kind == ENGINE_JIT_COUNT_STAR || agg->kind == ENGINE_JIT_COUNT) {
        return;
    }
    if (masked) {
        emit_masked_value(p, a);
    } else {
        load_value(p, agg->column, X64_RAX);
    }
    if (agg->kind == ENGINE_JIT_SUM) {
        /* rdx = rax < 0 ? rax : 0; rax -= rdx: the two parts */
        engine__x64_mov_rr(as, true, X64_RDX, X64_RAX);
        engine__x64_shift_ri(as, X64_SAR, true, X64_RDX, 63);
        engine__x64_alu_rr(as, X64_AND, true, X64_RDX, X64_RAX);
        engine__x64_alu_rr(as, X64_SUB, true, X64_RAX, X64_RDX);
        engine__x64_alu_rr(as, X64_ADD, true, value, X64_RAX);
        engine__x64_jcc(as, X64_CC_O, p->bail);
        engine__x64_alu_rr(as, X64_ADD, true, p->negative_reg[a], X64_RDX);
        engine__x64_jcc(as, X64_CC_O, p->bail);
        return;
    }
    engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, value);
    engine__x64_cmovcc(as, agg->kind == ENGINE_JIT_MIN ? X64_CC_L : X64_CC_G,
                       value, X64_RAX);
}

static void emit_prologue(struct pipe *p)
{
    struct engine_x64 *as = p->as;
    const struct engine_jit_pipe_spec *spec = p->spec;

    for (size_t i = 0; i < SAVED_SIZE; i++) {
        engine__x64_push(as, saved[i]);
    }
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        int32_t total = A_TOTALS + TOTAL_SIZE * (int32_t)a;

        engine__x64_load(as, p->count_reg[a],
                         pipe_at(X64_RDI, total + T_COUNT));
        if (p->value_reg[a] != X64_NOREG) {
            engine__x64_load(as, p->value_reg[a],
                             pipe_at(X64_RDI, total + T_VALUE));
        }
        if (p->negative_reg[a] != X64_NOREG) {
            engine__x64_load(as, p->negative_reg[a],
                             pipe_at(X64_RDI, total + T_NEGATIVE));
        }
    }
    for (uint32_t c = 0; c < spec->column_count; c++) {
        if (p->column_reg[c] != X64_NOREG) {
            engine__x64_load(as, p->column_reg[c],
                             pipe_at(X64_RDI, A_VALUES + 8 * (int32_t)c));
        }
    }
    engine__x64_load(as, X64_RCX, pipe_at(X64_RDI, A_BEGIN));
    engine__x64_load(as, X64_RSI, pipe_at(X64_RDI, A_END));
}

/* Writes the accumulators back, and returns status. */
static void emit_epilogue(struct pipe *p, uint32_t bail)
{
    struct engine_x64 *as = p->as;
    uint32_t out = engine__x64_label(as);

    for (uint32_t a = 0; a < p->spec->aggregate_count; a++) {
        int32_t total = A_TOTALS + TOTAL_SIZE * (int32_t)a;

        engine__x64_store(as, pipe_at(X64_RDI, total + T_COUNT),
                          p->count_reg[a]);
        if (p->value_reg[a] != X64_NOREG) {
            engine__x64_store(as, pipe_at(X64_RDI, total + T_VALUE),
                              p->value_reg[a]);
        }
        if (p->negative_reg[a] != X64_NOREG) {
            engine__x64_store(as, pipe_at(X64_RDI, total + T_NEGATIVE),
                              p->negative_reg[a]);
        }
    }
    engine__x64_alu_rr(as, X64_XOR, false, X64_RAX, X64_RAX);
    engine__x64_jmp(as, out);
    engine__x64_bind(as, bail);
    engine__x64_mov_ri(as, X64_RAX, ENGINE_JIT_BAIL_OVERFLOW);
    engine__x64_bind(as, out);
    if (p->spec->isa == ENGINE_JIT_ISA_AVX2) {
        engine__x64_vzeroupper(as);
    }
    for (size_t i = SAVED_SIZE; i > 0; i--) {
        engine__x64_pop(as, saved[i - 1]);
    }
    engine__x64_ret(as);
}

int engine__jit_pipe_emit(struct engine_x64 *as,
                          const struct engine_jit_pipe_spec *spec)
{
    struct pipe p = {.as = as, .spec = spec};
    uint32_t loop, next, done;
    int rc;

    if (!spec_valid(spec)) {
        return -ENOTSUP;
    }
    rc = allocate(&p);
    if (rc == 0 && spec->isa == ENGINE_JIT_ISA_AVX2) {
        /* the vector loop reads no flags: blocks that have none */
        rc = spec->checked ? -ENOTSUP : engine__jit_pipe_vector_allocate(&p);
    }
    if (rc != 0) {
        return rc;
    }
    loop = engine__x64_label(as);
    next = engine__x64_label(as);
    done = engine__x64_label(as);
    p.bail = engine__x64_label(as);
    emit_prologue(&p);
    if (spec->isa == ENGINE_JIT_ISA_AVX2) {
        engine__jit_pipe_vector_loop(&p);
    }
    engine__x64_bind(as, loop);
    engine__x64_alu_rr(as, X64_CMP, true, X64_RCX, X64_RSI);
    engine__x64_jcc(as, X64_CC_AE, done);
    if (spec->checked) {
        engine__x64_load(as, X64_RDX, pipe_at(X64_RDI, A_DELETED));
        engine__x64_load_u8(as, X64_RDX,
                            engine__x64_at(X64_RDX, X64_RCX, 1, 0));
        engine__x64_test_rr(as, false, X64_RDX, X64_RDX);
        engine__x64_jcc(as, X64_CC_NE, next);
    }
    if (spec->root >= 0) {
        emit_node(&p, (uint32_t)spec->root, 0);
    }
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        emit_aggregate(&p, a);
    }
    engine__x64_bind(as, next);
    engine__x64_alu_ri(as, X64_ADD, true, X64_RCX, 1);
    engine__x64_jmp(as, loop);
    engine__x64_bind(as, done);
    emit_epilogue(&p, p.bail);
    return engine__x64_finish(as);
}

static int emit_pipe(struct engine_x64 *as, const void *spec)
{
    return engine__jit_pipe_emit(as, spec);
}

int engine__jit_pipe_compile(struct engine_jit_arena *arena,
                             const struct engine_jit_pipe_spec *spec,
                             struct engine_jit_code *code)
{
    return engine__jit_compile(arena, spec->isa, emit_pipe, spec, code);
}

engine_jit_pipe_fn engine__jit_pipe_entry(const struct engine_jit_code *code)
{
    engine_jit_pipe_fn fn;

    engine__jit_entry(code, &fn, sizeof(fn));
    return fn;
}
