/* SPDX-License-Identifier: MIT
 *
 * jit.h: the engine's tier-1 JIT (../shared/reference/jit.md §4): an own
 * x86-64 machine-code emitter, executable memory that is never writable
 * and executable at once, CPU feature detection, and the first kernel
 * generator (count(*) / sum(col) over an int64 column block filtered by
 * "col op param"). Queries do not use it yet: this is the foundation the
 * planner will call into.
 *
 * Layers, each in its own file:
 *   jit_cpu.c     which SIMD forms the CPU and the OS allow (CPUID, XGETBV)
 *   jit_mem.c     the executable arena: pages reserved once, a block of
 *                 pages written while RW then flipped to RX, freed for reuse
 *   jit_x64.c     the instruction encoder, labels and jump patching
 *   jit_x64_vec.c its SSE4.2 and AVX2 (VEX) instructions
 *   jit_kernel.c  the scan kernel generator (scalar and AVX2 loops)
 *
 * Generated code follows the System V AMD64 ABI: one pointer argument
 * (rdi), an int status in eax, callee-saved registers pushed and popped,
 * no call out, nothing written but the args struct and the red zone.
 */
#ifndef SINEW_ENGINE_JIT_H
#define SINEW_ENGINE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- CPU features (jit_cpu.c) ---- */

/* The instruction sets a kernel may use, in increasing order. */
enum engine_jit_isa {
    ENGINE_JIT_ISA_NONE,   /* not x86-64: no code can run */
    ENGINE_JIT_ISA_SCALAR, /* baseline x86-64 */
    ENGINE_JIT_ISA_SSE42,  /* + SSE4.2 (pcmpgtq) and POPCNT */
    ENGINE_JIT_ISA_AVX2,   /* + AVX2 with the OS saving the ymm state */
};

struct engine_jit_cpu {
    bool x86_64;
    bool sse42;
    bool popcnt;
    bool avx;  /* CPUID says AVX and XGETBV says the OS saves ymm */
    bool avx2; /* avx and CPUID.7 says AVX2 */
};

/* What this CPU and OS support. Cheap enough to call once per open. */
void engine__jit_cpu_detect(struct engine_jit_cpu *cpu);

/* The best ISA level cpu allows. */
enum engine_jit_isa engine__jit_cpu_isa(const struct engine_jit_cpu *cpu);

/* ---- executable memory (jit_mem.c) ---- */

/* The most bytes one arena may reserve. */
#define ENGINE__JIT_ARENA_MAX ((size_t)1 << 30)

struct engine_jit_arena;

/* Code installed in an arena: entry is its first byte, executable and
 * read-only until engine__jit_free(). */
struct engine_jit_code {
    void *entry;
    size_t size;    /* bytes of code */
    uint32_t page;  /* first page of the block in the arena */
    uint32_t pages; /* pages of the block; 0 when nothing is installed */
};

/* Reserves cap bytes (rounded up to pages, at most ENGINE__JIT_ARENA_MAX)
 * of address space, inaccessible until code is installed. COMMON_ETOOBIG
 * for a cap of 0 or past the maximum; -errno when mmap fails; COMMON_ENOMEM
 * when the bookkeeping cannot be allocated. */
int engine__jit_arena_open(struct engine_jit_arena **out, size_t cap);

/* Unmaps everything; code installed in it must not run any more. NULL is
 * ignored. */
void engine__jit_arena_close(struct engine_jit_arena *arena);

/* Copies size bytes of code into a free block of whole pages: mapped RW,
 * written, then RX (never both). COMMON_ETOOBIG when no free block is big
 * enough (the arena's cap), -errno when mprotect fails; *code is then
 * left empty. Not thread-safe: the arena's owner serializes calls. */
int engine__jit_install(struct engine_jit_arena *arena, const uint8_t *bytes,
                        size_t size, struct engine_jit_code *code);

/* Makes the block inaccessible again and free for reuse; empties *code.
 * An empty code is ignored. */
void engine__jit_free(struct engine_jit_arena *arena,
                      struct engine_jit_code *code);

/* The reserved range, and the bytes of code blocks in use (whole pages). */
void engine__jit_arena_range(const struct engine_jit_arena *arena,
                             uintptr_t *start, size_t *size);
size_t engine__jit_arena_used(const struct engine_jit_arena *arena);

/* ---- the x86-64 encoder (jit_x64.c, jit_x64_vec.c) ---- */

/* General registers in their encoding order; xmm/ymm registers are the
 * numbers 0..15. */
enum engine_x64_reg {
    X64_RAX,
    X64_RCX,
    X64_RDX,
    X64_RBX,
    X64_RSP,
    X64_RBP,
    X64_RSI,
    X64_RDI,
    X64_R8,
    X64_R9,
    X64_R10,
    X64_R11,
    X64_R12,
    X64_R13,
    X64_R14,
    X64_R15,
    X64_NOREG = -1,
    X64_RIP = -2, /* a memory base: disp is a label, the operand rip-relative */
};

/* Condition codes, as in Jcc/SETcc/CMOVcc's low nibble. */
enum engine_x64_cc {
    X64_CC_O,
    X64_CC_NO,
    X64_CC_B,
    X64_CC_AE,
    X64_CC_E,
    X64_CC_NE,
    X64_CC_BE,
    X64_CC_A,
    X64_CC_S,
    X64_CC_NS,
    X64_CC_P,
    X64_CC_NP,
    X64_CC_L,
    X64_CC_GE,
    X64_CC_LE,
    X64_CC_G,
};

/* The group-1 ALU operations, numbered as their /digit. */
enum engine_x64_alu {
    X64_ADD = 0,
    X64_OR = 1,
    X64_AND = 4,
    X64_SUB = 5,
    X64_XOR = 6,
    X64_CMP = 7,
};

/* Shifts, numbered as their /digit. */
enum engine_x64_shift { X64_SHL = 4, X64_SHR = 5, X64_SAR = 7 };

/* Packed integer operations, in SSE4.2 (128-bit) or AVX2 (256-bit) form. */
enum engine_x64_vop {
    X64_PADDQ,
    X64_PSUBQ,
    X64_PAND,
    X64_PANDN,
    X64_POR,
    X64_PXOR,
    X64_PCMPEQQ,
    X64_PCMPGTQ,
};

/* base + index * scale + disp. index X64_NOREG for none (never RSP);
 * scale 1, 2, 4 or 8. With base X64_RIP, disp is a label id. */
struct engine_x64_mem {
    int base;
    int index;
    int scale;
    int32_t disp;
};

/* A rel32 to patch: a jump, or a rip-relative operand (no instruction
 * here has an immediate after its memory operand, so the rel32 is always
 * relative to its own end). */
struct engine_x64_fixup {
    uint32_t at; /* offset of the rel32 */
    uint32_t label;
};

/* A code buffer being written. Errors are sticky: after the first one
 * (out of memory, an operand the encoder does not take) every call does
 * nothing and engine__x64_finish() returns it, so generators check once. */
struct engine_x64 {
    uint8_t *code;
    size_t size;
    size_t capacity;
    int32_t *labels; /* offset of each label, -1 while unbound */
    uint32_t nlabels;
    uint32_t labels_capacity;
    struct engine_x64_fixup *fixups;
    uint32_t nfixups;
    uint32_t fixups_capacity;
    int error;
};

/* The most bytes one buffer may hold. */
#define ENGINE__X64_CODE_MAX ((size_t)1 << 24)

void engine__x64_init(struct engine_x64 *as);
void engine__x64_close(struct engine_x64 *as);

/* Patches every jump and rip-relative operand. 0, or the sticky error, or
 * -EINVAL for a label used but never bound. */
int engine__x64_finish(struct engine_x64 *as);

/* Labels: a new id, bound to the current offset once. Jumps to a bound
 * label in reach take the short (rel8) form, others rel32. */
uint32_t engine__x64_label(struct engine_x64 *as);
void engine__x64_bind(struct engine_x64 *as, uint32_t label);

/* Raw bytes (constant data), and padding with zeros to an alignment. */
void engine__x64_bytes(struct engine_x64 *as, const void *bytes, size_t n);
void engine__x64_align(struct engine_x64 *as, size_t alignment);

struct engine_x64_mem engine__x64_at(int base, int index, int scale,
                                     int32_t disp);

/* wide: 64-bit operands (REX.W), else 32-bit (upper half zeroed). */
void engine__x64_mov_rr(struct engine_x64 *as, bool wide, int dst, int src);
void engine__x64_mov_ri(struct engine_x64 *as, int dst, int64_t imm);
void engine__x64_load(struct engine_x64 *as, int dst,
                      struct engine_x64_mem mem);
void engine__x64_store(struct engine_x64 *as, struct engine_x64_mem mem,
                       int src);
void engine__x64_load_u8(struct engine_x64 *as, int dst,
                         struct engine_x64_mem mem);
void engine__x64_lea(struct engine_x64 *as, int dst, struct engine_x64_mem mem);
void engine__x64_alu_rr(struct engine_x64 *as, enum engine_x64_alu op,
                        bool wide, int dst, int src);
void engine__x64_alu_ri(struct engine_x64 *as, enum engine_x64_alu op,
                        bool wide, int dst, int32_t imm);
void engine__x64_alu_rm(struct engine_x64 *as, enum engine_x64_alu op, int dst,
                        struct engine_x64_mem mem);
void engine__x64_test_rr(struct engine_x64 *as, bool wide, int a, int b);
void engine__x64_imul_rr(struct engine_x64 *as, int dst, int src);
void engine__x64_shift_ri(struct engine_x64 *as, enum engine_x64_shift op,
                          bool wide, int dst, uint8_t count);
void engine__x64_shift_cl(struct engine_x64 *as, enum engine_x64_shift op,
                          bool wide, int dst);
void engine__x64_setcc(struct engine_x64 *as, enum engine_x64_cc cc, int dst);
void engine__x64_cmovcc(struct engine_x64 *as, enum engine_x64_cc cc, int dst,
                        int src);
void engine__x64_jcc(struct engine_x64 *as, enum engine_x64_cc cc,
                     uint32_t label);
void engine__x64_jmp(struct engine_x64 *as, uint32_t label);
void engine__x64_push(struct engine_x64 *as, int reg);
void engine__x64_pop(struct engine_x64 *as, int reg);
void engine__x64_ret(struct engine_x64 *as);
void engine__x64_popcnt(struct engine_x64 *as, int dst, int src);
void engine__x64_bsr(struct engine_x64 *as, int dst, int src);
/* NOT (ones' complement) and NEG (two's complement) of a register. */
enum engine_x64_unary { X64_NOT = 2, X64_NEG = 3 };
void engine__x64_unary(struct engine_x64 *as, enum engine_x64_unary op,
                       bool wide, int reg);

/* jit_x64_vec.c. The SSE forms take xmm registers; the AVX2 forms ymm
 * (three operands, dst = a op b; PANDN is ~a & b). */
void engine__x64_sse_rr(struct engine_x64 *as, enum engine_x64_vop op, int dst,
                        int src);
void engine__x64_movmskpd(struct engine_x64 *as, int dst, int xmm);
void engine__x64_vop(struct engine_x64 *as, enum engine_x64_vop op, int dst,
                     int a, int b);
void engine__x64_vload(struct engine_x64 *as, int ymm,
                       struct engine_x64_mem mem);
void engine__x64_vstore(struct engine_x64 *as, struct engine_x64_mem mem,
                        int ymm);
void engine__x64_vmovq_from(struct engine_x64 *as, int xmm, int reg);
void engine__x64_vpbroadcastq(struct engine_x64 *as, int ymm, int xmm);
void engine__x64_vpbroadcastq_m(struct engine_x64 *as, int ymm,
                                struct engine_x64_mem mem);
/* dst = the bytes of b where mask's byte has its top bit set, else a's. */
void engine__x64_vpblendvb(struct engine_x64 *as, int dst, int a, int b,
                           int mask);
void engine__x64_vmovmskpd(struct engine_x64 *as, int dst, int ymm);
void engine__x64_vpmovmskb(struct engine_x64 *as, int dst, int ymm);
void engine__x64_vzeroupper(struct engine_x64 *as);

/* Shared by the two encoder files: an instruction's ModRM (with SIB and
 * displacement) for reg and a memory operand, the REX bits it needs, and
 * the low-level byte writer. */
void engine__x64_byte(struct engine_x64 *as, uint8_t byte);
void engine__x64_fail(struct engine_x64 *as, int rc);
int engine__x64_mem_rex(struct engine_x64 *as, struct engine_x64_mem mem);
void engine__x64_modrm_mem(struct engine_x64 *as, int reg,
                           struct engine_x64_mem mem);

/* ---- compiling (jit_mem.c) ---- */

/* A kernel generator: emits the code for spec into as. */
typedef int (*engine_jit_emit_fn)(struct engine_x64 *as, const void *spec);

/* Emits with emit(as, spec) and installs the code in arena. -ENOTSUP when
 * isa is NONE or more than this CPU and OS allow; else emit's error or
 * engine__jit_install()'s. */
int engine__jit_compile(struct engine_jit_arena *arena, enum engine_jit_isa isa,
                        engine_jit_emit_fn emit, const void *spec,
                        struct engine_jit_code *code);

/* Copies code's entry into *fn, a function pointer of size bytes (ISO C
 * has no cast from a data pointer to a function pointer; POSIX guarantees
 * the bits agree). */
void engine__jit_entry(const struct engine_jit_code *code, void *fn,
                       size_t size);

/* ---- the scan kernel (jit_kernel.c) ---- */

/* The comparison of "col op param". */
enum engine_jit_op {
    ENGINE_JIT_EQ,
    ENGINE_JIT_NE,
    ENGINE_JIT_LT,
    ENGINE_JIT_LE,
    ENGINE_JIT_GT,
    ENGINE_JIT_GE,
};

/* What a kernel computes; a different spec is a different kernel. */
struct engine_jit_scan_spec {
    enum engine_jit_op op;
    bool sum;   /* also sum the matching values (else count only) */
    bool nulls; /* the block has a NULL bitmap (else no NULLs) */
    enum engine_jit_isa isa;
};

/* The one argument of a scan kernel; offsets are fixed (the code reads
 * them), append only. count and sum are accumulated into: a kernel adds
 * the block's matching rows and values to what they hold on entry. */
struct engine_jit_scan_args {
    const int64_t *values; /* 0: n values */
    const uint8_t *nulls;  /* 8: bit r % 8 of byte r / 8 set: row r is
                              NULL (the segment's bitmap); spec.nulls */
    uint64_t n;            /* 16 */
    int64_t param;         /* 24 */
    uint64_t count;        /* 32: in/out */
    int64_t sum;           /* 40: in/out */
};

/* What a kernel returns. On BAIL, count and sum are left as on entry and
 * the interpreter redoes the block (it raises sum()'s "integer overflow"). */
enum engine_jit_status {
    ENGINE_JIT_DONE = 0,
    ENGINE_JIT_BAIL_OVERFLOW = 1,
};

typedef int (*engine_jit_scan_fn)(struct engine_jit_scan_args *args);

/* Emits the kernel for spec into as (which then holds its whole code). */
int engine__jit_scan_emit(struct engine_x64 *as,
                          const struct engine_jit_scan_spec *spec);

/* Emits and installs the kernel: code->entry is then an
 * engine_jit_scan_fn. -ENOTSUP when spec.isa is NONE. */
int engine__jit_scan_compile(struct engine_jit_arena *arena,
                             const struct engine_jit_scan_spec *spec,
                             struct engine_jit_code *code);

/* code's entry as the function it is (ISO C has no cast from a data
 * pointer to a function pointer; POSIX guarantees the bits agree). */
engine_jit_scan_fn engine__jit_scan_entry(const struct engine_jit_code *code);

/* ---- the pipeline kernel (jit_pipe.c) ---- */

/* A fused scan -> filter -> aggregate over the slots [begin, end) of a
 * table whose read columns are all int64 arrays (the rowid, or a column
 * store of kind INT64): for every live slot, the predicate tree is
 * computed branch-free (a NULL makes a comparison false, which is exact
 * for a tree of AND and OR, NOT having been pushed into the leaves), and
 * each aggregate takes the matching rows. Limits below are the planner's
 * to respect; the generator refuses more. */
#define ENGINE__JIT_PIPE_COLUMNS 16
#define ENGINE__JIT_PIPE_PARAMS 64
#define ENGINE__JIT_PIPE_NODES 64
#define ENGINE__JIT_PIPE_AGGREGATES 8

enum engine_jit_node_kind {
    ENGINE_JIT_NODE_AND,         /* left and right */
    ENGINE_JIT_NODE_OR,          /* left or right */
    ENGINE_JIT_NODE_COMPARE,     /* column op params[param] */
    ENGINE_JIT_NODE_COMPARE_TWO, /* column op other (another column) */
    ENGINE_JIT_NODE_IS_NULL,     /* column IS NULL */
    ENGINE_JIT_NODE_NOT_NULL,    /* column IS NOT NULL */
    ENGINE_JIT_NODE_IN,          /* column [NOT] IN params[param ..
                                    param + param_count), none of them NULL */
};

struct engine_jit_node {
    enum engine_jit_node_kind kind;
    enum engine_jit_op op; /* COMPARE, COMPARE_TWO */
    bool negated;          /* IN: NOT IN */
    uint8_t column;
    uint8_t other;
    uint16_t param;
    uint16_t param_count;
    uint16_t left; /* AND, OR: node indexes */
    uint16_t right;
};

enum engine_jit_aggregate_kind {
    ENGINE_JIT_COUNT_STAR,
    ENGINE_JIT_COUNT, /* count(column): its non-NULL matching rows */
    ENGINE_JIT_SUM,
    ENGINE_JIT_MIN,
    ENGINE_JIT_MAX,
};

struct engine_jit_aggregate {
    enum engine_jit_aggregate_kind kind;
    uint8_t column;
};

/* What a pipeline kernel computes; equal specs make equal code, so a spec
 * is the normalized shape of a plan: literals and parameters are only
 * named by index and come in the args at run time. */
struct engine_jit_pipe_spec {
    uint32_t column_count;
    bool nullable[ENGINE__JIT_PIPE_COLUMNS]; /* the column has NULL flags
                                                (the rowid has none) */
    struct engine_jit_node nodes[ENGINE__JIT_PIPE_NODES];
    uint32_t node_count;
    int32_t root; /* the predicate's node, or -1: every live row */
    struct engine_jit_aggregate aggregates[ENGINE__JIT_PIPE_AGGREGATES];
    uint32_t aggregate_count;
    uint32_t param_count;
    /* The kernel reads the deleted flags and the NULL flags. Without, it
     * serves only slot ranges known to hold neither (zone maps say so). */
    bool checked;
    enum engine_jit_isa isa;
};

/* One aggregate's running state, in and out: count is the rows it took
 * (for SUM, MIN and MAX, their non-NULL matching rows: none means NULL);
 * value the minimum or maximum so far (start MIN at INT64_MAX, MAX at
 * INT64_MIN), or for SUM the sum of the positive values, negative that of
 * the negative ones (both start at 0; the sum is value + negative). */
struct engine_jit_pipe_total {
    int64_t count;
    int64_t value;
    int64_t negative;
};

/* The one argument of a pipeline kernel. The code reads it at the
 * offsets the compiler gives these fields. */
struct engine_jit_pipe_args {
    const int64_t *values[ENGINE__JIT_PIPE_COLUMNS];
    const uint8_t *nulls[ENGINE__JIT_PIPE_COLUMNS]; /* nulls[c][slot] != 0:
                                                       NULL (checked) */
    const uint8_t *deleted;                         /* checked */
    uint64_t begin;
    uint64_t end;
    int64_t params[ENGINE__JIT_PIPE_PARAMS];
    struct engine_jit_pipe_total totals[ENGINE__JIT_PIPE_AGGREGATES];
};

typedef int (*engine_jit_pipe_fn)(struct engine_jit_pipe_args *args);

/* Emits the kernel for spec. SQLite's sum() fails with "integer
 * overflow" when its running total, in the order it adds (rowid order),
 * leaves int64. A kernel keeps the positive and the negative values'
 * sums apart: while neither overflows, no running total in any order
 * can, so the slot order the kernel reads in gives SQLite's answer. When
 * one would, it returns ENGINE_JIT_BAIL_OVERFLOW (totals then undefined):
 * the caller redoes the query in the interpreter, which adds in rowid
 * order and raises the error exactly when SQLite does. -ENOTSUP
 * when the spec needs more registers than the generator has, or breaks a
 * limit above. */
int engine__jit_pipe_emit(struct engine_x64 *as,
                          const struct engine_jit_pipe_spec *spec);

/* Emits and installs it, as engine__jit_scan_compile(). */
int engine__jit_pipe_compile(struct engine_jit_arena *arena,
                             const struct engine_jit_pipe_spec *spec,
                             struct engine_jit_code *code);

engine_jit_pipe_fn engine__jit_pipe_entry(const struct engine_jit_code *code);

#endif /* SINEW_ENGINE_JIT_H */
