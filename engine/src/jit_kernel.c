/* SPDX-License-Identifier: MIT
 *
 * jit_kernel.c: the first kernel generator of the JIT (jit.h): count(*)
 * and sum(col) of the rows of an int64 column block where "col op param"
 * is true, a NULL failing the predicate (SQLite's WHERE: NULL is not true).
 *
 * The scalar loop is branch-free per row, as musql's layer-1 kernels and
 * jit.md §2.4 (5) recommend: CMP, SETcc, the NULL bit cleared in, the
 * count added, and for sum a CMOVcc zeroing the value of rows that do not
 * match before a checked ADD. SQLite's sum() fails with "integer
 * overflow" as soon as its running total leaves int64 (sumStep's
 * overflow flag), so the scalar loop adds in row order and leaves at the
 * first JO with ENGINE_JIT_BAIL_OVERFLOW: the interpreter redoes the block
 * and raises the error. The accumulators are written back only on success.
 *
 * The AVX2 loop takes 8 rows per iteration (two ymm of 4 int64 lanes):
 * VPCMPGTQ/VPCMPEQQ against the broadcast parameter, the NULL bitmap's
 * byte for the 8 rows broadcast and tested against the lane bits, the
 * count kept by subtracting the all-ones lane masks. Lanes cannot check
 * overflow in row order, so the sum is kept unchecked beside a proof that
 * no running total could overflow (jit.md §2.4 (4)): the OR of |v| - 1 or
 * v over the matching values gives a bound 2^b on every |v|; when the
 * matching count is below 2^(62 - b) and the incoming total's magnitude
 * is at most 2^62, every prefix of the sum stays below 2^63. Otherwise the
 * kernel starts the block again in the checked scalar loop, so the answer
 * is exactly the scalar one. The rows after the last multiple of 8 go
 * through the scalar loop too.
 *
 * Registers: rdi args, rsi values, rdx nulls, r8 param, r9 count, r10 sum,
 * r11 row, r13 n, r14 zero; rax rbx rcx r12 scratch. rbx r12 r13 r14 are
 * callee-saved and pushed. ymm15 param, ymm14 all ones, ymm13 zero,
 * ymm12/11 the lane bits of a NULL byte, ymm10 count, ymm9 sum, ymm8 the
 * bound; the red zone holds a ymm while it is summed across lanes.
 */
#include "jit.h"

#include "common.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define A_VALUES (int32_t) offsetof(struct engine_jit_scan_args, values)
#define A_NULLS (int32_t) offsetof(struct engine_jit_scan_args, nulls)
#define A_N (int32_t) offsetof(struct engine_jit_scan_args, n)
#define A_PARAM (int32_t) offsetof(struct engine_jit_scan_args, param)
#define A_COUNT (int32_t) offsetof(struct engine_jit_scan_args, count)
#define A_SUM (int32_t) offsetof(struct engine_jit_scan_args, sum)

/* The code reads the struct at these offsets. */
_Static_assert(offsetof(struct engine_jit_scan_args, nulls) == 8, "abi");
_Static_assert(offsetof(struct engine_jit_scan_args, sum) == 40, "abi");

static const int saved[] = {X64_RBX, X64_R12, X64_R13, X64_R14};

/* Labels shared by the emitting functions. */
struct kernel {
    struct engine_x64 *as;
    const struct engine_jit_scan_spec *spec;
    uint32_t scalar;  /* the checked scalar loop's entry (row r11) */
    uint32_t bail;    /* overflow: return BAIL, accumulators untouched */
    uint32_t null_lo; /* constant data: the lane bits of a NULL byte */
    uint32_t null_hi;
};

static struct engine_x64_mem at(int base, int32_t disp)
{
    return engine__x64_at(base, X64_NOREG, 1, disp);
}

static struct engine_x64_mem row(int base, int32_t disp)
{
    return engine__x64_at(base, X64_R11, 8, disp);
}

static enum engine_x64_cc op_cc(enum engine_jit_op op)
{
    static const enum engine_x64_cc cc[] = {
        [ENGINE_JIT_EQ] = X64_CC_E, [ENGINE_JIT_NE] = X64_CC_NE,
        [ENGINE_JIT_LT] = X64_CC_L, [ENGINE_JIT_LE] = X64_CC_LE,
        [ENGINE_JIT_GT] = X64_CC_G, [ENGINE_JIT_GE] = X64_CC_GE,
    };
    return cc[op];
}

static void emit_prologue(struct kernel *k)
{
    struct engine_x64 *as = k->as;

    for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
        engine__x64_push(as, saved[i]);
    }
    engine__x64_load(as, X64_RSI, at(X64_RDI, A_VALUES));
    if (k->spec->nulls) {
        engine__x64_load(as, X64_RDX, at(X64_RDI, A_NULLS));
    }
    engine__x64_load(as, X64_R13, at(X64_RDI, A_N));
    engine__x64_load(as, X64_R8, at(X64_RDI, A_PARAM));
    engine__x64_load(as, X64_R9, at(X64_RDI, A_COUNT));
    engine__x64_load(as, X64_R10, at(X64_RDI, A_SUM));
    engine__x64_alu_rr(as, X64_XOR, false, X64_R11, X64_R11);
    engine__x64_alu_rr(as, X64_XOR, false, X64_R14, X64_R14);
}

/* ebx = 1 when row r11 matches (rax holds its value), else 0. */
static void emit_scalar_predicate(struct kernel *k)
{
    struct engine_x64 *as = k->as;

    engine__x64_alu_rr(as, X64_XOR, false, X64_RBX, X64_RBX);
    engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, X64_R8);
    engine__x64_setcc(as, op_cc(k->spec->op), X64_RBX);
    if (!k->spec->nulls) {
        return;
    }
    /* ebx &= !(nulls[r11 / 8] >> (r11 % 8) & 1) */
    engine__x64_mov_rr(as, true, X64_R12, X64_R11);
    engine__x64_shift_ri(as, X64_SHR, true, X64_R12, 3);
    engine__x64_load_u8(as, X64_R12, engine__x64_at(X64_RDX, X64_R12, 1, 0));
    engine__x64_mov_rr(as, false, X64_RCX, X64_R11);
    engine__x64_alu_ri(as, X64_AND, false, X64_RCX, 7);
    engine__x64_shift_cl(as, X64_SHR, false, X64_R12);
    engine__x64_alu_ri(as, X64_AND, false, X64_R12, 1);
    engine__x64_alu_ri(as, X64_XOR, false, X64_R12, 1);
    engine__x64_alu_rr(as, X64_AND, false, X64_RBX, X64_R12);
}

/* Rows r11..n-1, then the write-back and the return. */
static void emit_scalar(struct kernel *k)
{
    struct engine_x64 *as = k->as;
    uint32_t loop = engine__x64_label(as);
    uint32_t done = engine__x64_label(as);
    uint32_t out = engine__x64_label(as);

    engine__x64_bind(as, k->scalar);
    engine__x64_alu_rr(as, X64_CMP, true, X64_R11, X64_R13);
    engine__x64_jcc(as, X64_CC_AE, done);
    engine__x64_bind(as, loop);
    engine__x64_load(as, X64_RAX, row(X64_RSI, 0));
    emit_scalar_predicate(k);
    engine__x64_alu_rr(as, X64_ADD, true, X64_R9, X64_RBX);
    if (k->spec->sum) {
        engine__x64_test_rr(as, false, X64_RBX, X64_RBX);
        engine__x64_cmovcc(as, X64_CC_E, X64_RAX, X64_R14);
        engine__x64_alu_rr(as, X64_ADD, true, X64_R10, X64_RAX);
        engine__x64_jcc(as, X64_CC_O, k->bail);
    }
    engine__x64_alu_ri(as, X64_ADD, true, X64_R11, 1);
    engine__x64_alu_rr(as, X64_CMP, true, X64_R11, X64_R13);
    engine__x64_jcc(as, X64_CC_B, loop);
    engine__x64_bind(as, done);
    engine__x64_store(as, at(X64_RDI, A_COUNT), X64_R9);
    engine__x64_store(as, at(X64_RDI, A_SUM), X64_R10);
    engine__x64_alu_rr(as, X64_XOR, false, X64_RAX, X64_RAX);
    engine__x64_jmp(as, out);
    engine__x64_bind(as, k->bail);
    engine__x64_mov_ri(as, X64_RAX, ENGINE_JIT_BAIL_OVERFLOW);
    engine__x64_bind(as, out);
    if (k->spec->isa == ENGINE_JIT_ISA_AVX2) {
        engine__x64_vzeroupper(as);
    }
    for (size_t i = sizeof(saved) / sizeof(saved[0]); i > 0; i--) {
        engine__x64_pop(as, saved[i - 1]);
    }
    engine__x64_ret(as);
}

/* dst = the 4 lanes of ymm combined by op (ADD or OR), via the red zone. */
static void emit_lanes(struct engine_x64 *as, enum engine_x64_alu op, int dst,
                       int ymm)
{
    engine__x64_vstore(as, at(X64_RSP, -32), ymm);
    engine__x64_load(as, dst, at(X64_RSP, -32));
    for (int32_t d = -24; d < 0; d += 8) {
        engine__x64_alu_rm(as, op, dst, at(X64_RSP, d));
    }
}

/* ymm dst = lanes of ymm v that match (all ones) or not (zero); ymm null
 * holds the lanes that are NULL when the block has NULLs. */
static void emit_vector_predicate(struct kernel *k, int dst, int v, int null)
{
    struct engine_x64 *as = k->as;
    enum engine_jit_op op = k->spec->op;
    bool negate =
        op == ENGINE_JIT_NE || op == ENGINE_JIT_LE || op == ENGINE_JIT_GE;

    if (op == ENGINE_JIT_EQ || op == ENGINE_JIT_NE) {
        engine__x64_vop(as, X64_PCMPEQQ, dst, v, 15);
    } else if (op == ENGINE_JIT_GT || op == ENGINE_JIT_LE) {
        engine__x64_vop(as, X64_PCMPGTQ, dst, v, 15);
    } else {
        engine__x64_vop(as, X64_PCMPGTQ, dst, 15, v);
    }
    if (k->spec->nulls && negate) {
        engine__x64_vop(as, X64_POR, dst, dst, null);
        engine__x64_vop(as, X64_PANDN, dst, dst, 14);
    } else if (k->spec->nulls) {
        engine__x64_vop(as, X64_PANDN, dst, null, dst);
    } else if (negate) {
        engine__x64_vop(as, X64_PANDN, dst, dst, 14);
    }
}

/* Accumulates 4 lanes: v the values, m the match mask, t a temporary. */
static void emit_vector_accumulate(struct kernel *k, int v, int m, int t)
{
    struct engine_x64 *as = k->as;

    engine__x64_vop(as, X64_PSUBQ, 10, 10, m);
    if (!k->spec->sum) {
        return;
    }
    engine__x64_vop(as, X64_PAND, t, m, v);
    engine__x64_vop(as, X64_PADDQ, 9, 9, t);
    /* bound |= m & (v ^ (v < 0 ? -1 : 0)) */
    engine__x64_vop(as, X64_PCMPGTQ, t, 13, v);
    engine__x64_vop(as, X64_PXOR, t, t, v);
    engine__x64_vop(as, X64_PAND, t, t, m);
    engine__x64_vop(as, X64_POR, 8, 8, t);
}

/* The NULL lane masks of rows r11..r11+7 into ymm5 (first 4) and ymm4. */
static void emit_vector_nulls(struct kernel *k)
{
    struct engine_x64 *as = k->as;

    engine__x64_mov_rr(as, true, X64_RAX, X64_R11);
    engine__x64_shift_ri(as, X64_SHR, true, X64_RAX, 3);
    engine__x64_load_u8(as, X64_RAX, engine__x64_at(X64_RDX, X64_RAX, 1, 0));
    engine__x64_vmovq_from(as, 4, X64_RAX);
    engine__x64_vpbroadcastq(as, 4, 4);
    engine__x64_vop(as, X64_PAND, 5, 4, 12);
    engine__x64_vop(as, X64_PCMPEQQ, 5, 5, 12);
    engine__x64_vop(as, X64_PAND, 4, 4, 11);
    engine__x64_vop(as, X64_PCMPEQQ, 4, 4, 11);
}

/* Proves the vector sum exact (see the header comment) and adds it, or
 * restarts the block in the scalar loop. rbx holds the block's count. */
static void emit_sum_proof(struct kernel *k)
{
    struct engine_x64 *as = k->as;
    uint32_t fallback = engine__x64_label(as);
    uint32_t have_b = engine__x64_label(as);
    uint32_t ok = engine__x64_label(as);

    emit_lanes(as, X64_ADD, X64_R12, 9);
    emit_lanes(as, X64_OR, X64_RAX, 8);
    engine__x64_mov_rr(as, true, X64_RCX, X64_RAX);
    engine__x64_shift_ri(as, X64_SHR, true, X64_RCX, 62);
    engine__x64_test_rr(as, true, X64_RCX, X64_RCX);
    engine__x64_jcc(as, X64_CC_NE, fallback);
    /* ecx = b, the bit length of the bound (|v| <= 2^b) */
    engine__x64_test_rr(as, true, X64_RAX, X64_RAX);
    engine__x64_jcc(as, X64_CC_E, have_b);
    engine__x64_bsr(as, X64_RCX, X64_RAX);
    engine__x64_alu_ri(as, X64_ADD, false, X64_RCX, 1);
    engine__x64_bind(as, have_b);
    /* count >> (62 - b) must be 0 */
    engine__x64_mov_ri(as, X64_RAX, 62);
    engine__x64_alu_rr(as, X64_SUB, false, X64_RAX, X64_RCX);
    engine__x64_mov_rr(as, false, X64_RCX, X64_RAX);
    engine__x64_mov_rr(as, true, X64_RAX, X64_RBX);
    engine__x64_shift_cl(as, X64_SHR, true, X64_RAX);
    engine__x64_test_rr(as, true, X64_RAX, X64_RAX);
    engine__x64_jcc(as, X64_CC_NE, fallback);
    /* |sum on entry| <= 2^62: sum + 2^62 <= 2^63 unsigned */
    engine__x64_mov_rr(as, true, X64_RAX, X64_R10);
    engine__x64_mov_ri(as, X64_RCX, INT64_C(1) << 62);
    engine__x64_alu_rr(as, X64_ADD, true, X64_RAX, X64_RCX);
    engine__x64_mov_ri(as, X64_RCX, INT64_MIN);
    engine__x64_alu_rr(as, X64_CMP, true, X64_RAX, X64_RCX);
    engine__x64_jcc(as, X64_CC_BE, ok);
    engine__x64_bind(as, fallback);
    engine__x64_alu_rr(as, X64_XOR, false, X64_R11, X64_R11);
    engine__x64_jmp(as, k->scalar);
    engine__x64_bind(as, ok);
    engine__x64_alu_rr(as, X64_ADD, true, X64_R10, X64_R12);
    engine__x64_alu_rr(as, X64_ADD, true, X64_R9, X64_RBX);
}

/* Rows 0..n&~7 in vectors; leaves r11 at the first row left. */
static void emit_avx2(struct kernel *k)
{
    struct engine_x64 *as = k->as;
    uint32_t loop = engine__x64_label(as);
    uint32_t done = engine__x64_label(as);

    engine__x64_vmovq_from(as, 15, X64_R8);
    engine__x64_vpbroadcastq(as, 15, 15);
    engine__x64_vop(as, X64_PCMPEQQ, 14, 14, 14);
    for (int y = 8; y <= 13; y++) {
        engine__x64_vop(as, X64_PXOR, y, y, y);
    }
    if (k->spec->nulls) {
        engine__x64_vload(
            as, 12, engine__x64_at(X64_RIP, X64_NOREG, 1, (int32_t)k->null_lo));
        engine__x64_vload(
            as, 11, engine__x64_at(X64_RIP, X64_NOREG, 1, (int32_t)k->null_hi));
    }
    engine__x64_mov_rr(as, true, X64_R12, X64_R13);
    engine__x64_alu_ri(as, X64_AND, true, X64_R12, -8);
    engine__x64_jcc(as, X64_CC_E, done);
    engine__x64_bind(as, loop);
    engine__x64_vload(as, 0, row(X64_RSI, 0));
    engine__x64_vload(as, 1, row(X64_RSI, 32));
    if (k->spec->nulls) {
        emit_vector_nulls(k);
    }
    emit_vector_predicate(k, 2, 0, 5);
    emit_vector_predicate(k, 3, 1, 4);
    emit_vector_accumulate(k, 0, 2, 6);
    emit_vector_accumulate(k, 1, 3, 7);
    engine__x64_alu_ri(as, X64_ADD, true, X64_R11, 8);
    engine__x64_alu_rr(as, X64_CMP, true, X64_R11, X64_R12);
    engine__x64_jcc(as, X64_CC_B, loop);
    engine__x64_bind(as, done);
    if (k->spec->sum) {
        emit_lanes(as, X64_ADD, X64_RBX, 10);
        emit_sum_proof(k);
    } else {
        emit_lanes(as, X64_ADD, X64_RAX, 10);
        engine__x64_alu_rr(as, X64_ADD, true, X64_R9, X64_RAX);
    }
}

/* The lane bits of a NULL byte: rows 0-3 and 4-7 of 8. */
static void emit_constants(struct kernel *k)
{
    static const int64_t lo[4] = {1, 2, 4, 8};
    static const int64_t hi[4] = {16, 32, 64, 128};

    engine__x64_align(k->as, 32);
    engine__x64_bind(k->as, k->null_lo);
    engine__x64_bytes(k->as, lo, sizeof(lo));
    engine__x64_bind(k->as, k->null_hi);
    engine__x64_bytes(k->as, hi, sizeof(hi));
}

int engine__jit_scan_emit(struct engine_x64 *as,
                          const struct engine_jit_scan_spec *spec)
{
    struct kernel k = {.as = as, .spec = spec};
    bool avx2 = spec->isa == ENGINE_JIT_ISA_AVX2;

    if (spec->isa == ENGINE_JIT_ISA_NONE ||
        (unsigned)spec->op > ENGINE_JIT_GE) {
        return -ENOTSUP;
    }
    k.scalar = engine__x64_label(as);
    k.bail = engine__x64_label(as);
    k.null_lo = engine__x64_label(as);
    k.null_hi = engine__x64_label(as);
    emit_prologue(&k);
    if (avx2) {
        emit_avx2(&k);
    }
    emit_scalar(&k);
    if (avx2 && spec->nulls) {
        emit_constants(&k);
    }
    return engine__x64_finish(as);
}

static int emit_scan(struct engine_x64 *as, const void *spec)
{
    return engine__jit_scan_emit(as, spec);
}

int engine__jit_scan_compile(struct engine_jit_arena *arena,
                             const struct engine_jit_scan_spec *spec,
                             struct engine_jit_code *code)
{
    return engine__jit_compile(arena, spec->isa, emit_scan, spec, code);
}

engine_jit_scan_fn engine__jit_scan_entry(const struct engine_jit_code *code)
{
    engine_jit_scan_fn fn;

    engine__jit_entry(code, &fn, sizeof(fn));
    return fn;
}
