/* SPDX-License-Identifier: MIT
 *
 * jit_x64.c: the x86-64 instruction encoder of the JIT (jit.h): general
 * purpose instructions, memory operands, labels and jump patching. The
 * vector instructions are in jit_x64_vec.c.
 *
 * Encodings follow the Intel SDM vol. 2 (chapter 2, "Instruction format"):
 * [prefixes] [REX] opcode ModRM [SIB] [disp] [imm]. The traps a hand
 * encoder falls into are handled here once: RSP and R12 as a base need a
 * SIB byte; RBP and R13 as a base with no displacement need a disp8 of 0
 * (mod 00 with that base means rip-relative); RSP cannot be an index; a
 * byte register 4..7 needs an empty REX to mean SPL..DIL rather than
 * AH..BH. The unit test decodes the output with objdump.
 */
#include "jit.h"

#include "common.h"

#include <errno.h>
#include <string.h>

void engine__x64_init(struct engine_x64 *as)
{
    memset(as, 0, sizeof(*as));
}

void engine__x64_close(struct engine_x64 *as)
{
    common_free(as->code);
    common_free(as->labels);
    common_free(as->fixups);
    memset(as, 0, sizeof(*as));
}

void engine__x64_fail(struct engine_x64 *as, int rc)
{
    if (as->error == 0) {
        as->error = rc;
    }
}

/* Room for more elements in *array of *capacity (doubling), or false
 * with the error recorded. */
static bool grow(struct engine_x64 *as, void **array, uint32_t *capacity,
                 size_t element, size_t need)
{
    size_t want = *capacity == 0 ? 64 : (size_t)*capacity * 2;
    void *bigger;

    if (need <= *capacity) {
        return true;
    }
    while (want < need) {
        want *= 2;
    }
    if (want > UINT32_MAX) {
        engine__x64_fail(as, COMMON_ETOOBIG);
        return false;
    }
    bigger = common_realloc_array(*array, want, element);
    if (bigger == NULL) {
        engine__x64_fail(as, COMMON_ENOMEM);
        return false;
    }
    *array = bigger;
    *capacity = (uint32_t)want;
    return true;
}

void engine__x64_bytes(struct engine_x64 *as, const void *bytes, size_t n)
{
    uint32_t capacity = (uint32_t)as->capacity;

    if (as->error != 0) {
        return;
    }
    if (as->size + n > ENGINE__X64_CODE_MAX) {
        engine__x64_fail(as, COMMON_ETOOBIG);
        return;
    }
    if (!grow(as, (void **)&as->code, &capacity, 1, as->size + n)) {
        return;
    }
    as->capacity = capacity;
    memcpy(as->code + as->size, bytes, n);
    as->size += n;
}

void engine__x64_byte(struct engine_x64 *as, uint8_t byte)
{
    engine__x64_bytes(as, &byte, 1);
}

static void put32(struct engine_x64 *as, int32_t value)
{
    uint8_t le[4];

    for (int i = 0; i < 4; i++) {
        le[i] = (uint8_t)((uint32_t)value >> (8 * i));
    }
    engine__x64_bytes(as, le, 4);
}

void engine__x64_align(struct engine_x64 *as, size_t alignment)
{
    while (as->error == 0 && as->size % alignment != 0) {
        engine__x64_byte(as, 0);
    }
}

/* ---- labels ---- */

uint32_t engine__x64_label(struct engine_x64 *as)
{
    if (!grow(as, (void **)&as->labels, &as->labels_capacity,
              sizeof(*as->labels), (size_t)as->nlabels + 1)) {
        return UINT32_MAX;
    }
    as->labels[as->nlabels] = -1;
    return as->nlabels++;
}

static bool label_ok(struct engine_x64 *as, uint32_t label)
{
    if (label >= as->nlabels) {
        engine__x64_fail(as, as->error != 0 ? as->error : -EINVAL);
        return false;
    }
    return true;
}

void engine__x64_bind(struct engine_x64 *as, uint32_t label)
{
    if (as->error != 0 || !label_ok(as, label)) {
        return;
    }
    if (as->labels[label] >= 0) {
        engine__x64_fail(as, -EINVAL);
        return;
    }
    as->labels[label] = (int32_t)as->size;
}

/* A rel32 to label, patched by engine__x64_finish(). */
static void rel32(struct engine_x64 *as, uint32_t label)
{
    if (as->error != 0 || !label_ok(as, label) ||
        !grow(as, (void **)&as->fixups, &as->fixups_capacity,
              sizeof(*as->fixups), (size_t)as->nfixups + 1)) {
        return;
    }
    as->fixups[as->nfixups++] =
        (struct engine_x64_fixup){.at = (uint32_t)as->size, .label = label};
    put32(as, 0);
}

int engine__x64_finish(struct engine_x64 *as)
{
    for (uint32_t i = 0; as->error == 0 && i < as->nfixups; i++) {
        const struct engine_x64_fixup *fix = &as->fixups[i];
        int32_t target = as->labels[fix->label];
        uint32_t rel;

        if (target < 0) {
            return -EINVAL;
        }
        rel = (uint32_t)(target - (int32_t)(fix->at + 4));
        for (uint32_t b = 0; b < 4; b++) {
            as->code[fix->at + b] = (uint8_t)(rel >> (8 * b));
        }
    }
    return as->error;
}

/* ---- operands ---- */

struct engine_x64_mem engine__x64_at(int base, int index, int scale,
                                     int32_t disp)
{
    return (struct engine_x64_mem){
        .base = base, .index = index, .scale = scale, .disp = disp};
}

static bool reg_ok(struct engine_x64 *as, int reg)
{
    if (reg < 0 || reg > 15) {
        engine__x64_fail(as, -EINVAL);
        return false;
    }
    return true;
}

static bool mem_ok(struct engine_x64 *as, struct engine_x64_mem mem)
{
    if (mem.base == X64_RIP) {
        return mem.index == X64_NOREG && mem.disp >= 0 &&
               label_ok(as, (uint32_t)mem.disp);
    }
    if (!reg_ok(as, mem.base)) {
        return false;
    }
    if (mem.index != X64_NOREG &&
        (!reg_ok(as, mem.index) || mem.index == X64_RSP ||
         (mem.scale != 1 && mem.scale != 2 && mem.scale != 4 &&
          mem.scale != 8))) {
        engine__x64_fail(as, -EINVAL);
        return false;
    }
    return true;
}

int engine__x64_mem_rex(struct engine_x64 *as, struct engine_x64_mem mem)
{
    if (!mem_ok(as, mem) || mem.base == X64_RIP) {
        return 0;
    }
    return (mem.index != X64_NOREG && mem.index >= 8 ? 2 : 0) |
           (mem.base >= 8 ? 1 : 0);
}

void engine__x64_modrm_mem(struct engine_x64 *as, int reg,
                           struct engine_x64_mem mem)
{
    static const uint8_t scale_bits[9] = {0, 0, 1, 0, 2, 0, 0, 0, 3};
    uint8_t mod;
    bool sib = mem.index != X64_NOREG || (mem.base & 7) == X64_RSP;

    if (!mem_ok(as, mem)) {
        return;
    }
    if (mem.base == X64_RIP) {
        engine__x64_byte(as, (uint8_t)(0x05 | (reg & 7) << 3));
        rel32(as, (uint32_t)mem.disp);
        return;
    }
    if (mem.disp == 0 && (mem.base & 7) != X64_RBP) {
        mod = 0;
    } else if (mem.disp >= -128 && mem.disp <= 127) {
        mod = 1;
    } else {
        mod = 2;
    }
    engine__x64_byte(
        as, (uint8_t)(mod << 6 | (reg & 7) << 3 | (sib ? 4 : (mem.base & 7))));
    if (sib) {
        int index = mem.index == X64_NOREG ? 4 : (mem.index & 7);
        int scale = mem.index == X64_NOREG ? 0 : scale_bits[mem.scale];

        engine__x64_byte(as,
                         (uint8_t)(scale << 6 | index << 3 | (mem.base & 7)));
    }
    if (mod == 1) {
        engine__x64_byte(as, (uint8_t)(int8_t)mem.disp);
    } else if (mod == 2) {
        put32(as, mem.disp);
    }
}

/* REX for a register-register instruction (reg field, rm field); force
 * emits it even when empty (byte registers SPL..DIL). */
static void rex_rr(struct engine_x64 *as, bool wide, int reg, int rm,
                   bool force)
{
    uint8_t rex =
        (uint8_t)(0x40 | (wide ? 8 : 0) | (reg & 8) >> 1 | (rm & 8) >> 3);

    if (rex != 0x40 || force) {
        engine__x64_byte(as, rex);
    }
}

static void modrm_rr(struct engine_x64 *as, int reg, int rm)
{
    engine__x64_byte(as, (uint8_t)(0xc0 | (reg & 7) << 3 | (rm & 7)));
}

/* [REX] opcode ModRM for two registers; opcode is 1 or 2 bytes. */
static void op_rr(struct engine_x64 *as, bool wide, const uint8_t *opcode,
                  size_t n, int reg, int rm)
{
    if (!reg_ok(as, reg) || !reg_ok(as, rm)) {
        return;
    }
    rex_rr(as, wide, reg, rm, false);
    engine__x64_bytes(as, opcode, n);
    modrm_rr(as, reg, rm);
}

/* [REX] opcode ModRM... for a register and a memory operand. */
static void op_rm(struct engine_x64 *as, bool wide, const uint8_t *opcode,
                  size_t n, int reg, struct engine_x64_mem mem)
{
    uint8_t rex;

    if (!reg_ok(as, reg) || !mem_ok(as, mem)) {
        return;
    }
    rex = (uint8_t)(0x40 | (wide ? 8 : 0) | (reg & 8) >> 1 |
                    engine__x64_mem_rex(as, mem));
    if (rex != 0x40) {
        engine__x64_byte(as, rex);
    }
    engine__x64_bytes(as, opcode, n);
    engine__x64_modrm_mem(as, reg, mem);
}

/* ---- instructions ---- */

void engine__x64_mov_rr(struct engine_x64 *as, bool wide, int dst, int src)
{
    op_rr(as, wide, (const uint8_t[]){0x89}, 1, src, dst);
}

/* The shortest form: mov r32, imm32 zero-extends; mov r/m64, imm32
 * sign-extends; else the 10-byte movabs. */
void engine__x64_mov_ri(struct engine_x64 *as, int dst, int64_t imm)
{
    if (!reg_ok(as, dst)) {
        return;
    }
    if (imm >= 0 && imm <= (int64_t)UINT32_MAX) {
        rex_rr(as, false, 0, dst, false);
        engine__x64_byte(as, (uint8_t)(0xb8 + (dst & 7)));
        put32(as, (int32_t)(uint32_t)imm);
    } else if (imm >= INT32_MIN && imm <= INT32_MAX) {
        rex_rr(as, true, 0, dst, false);
        engine__x64_byte(as, 0xc7);
        modrm_rr(as, 0, dst);
        put32(as, (int32_t)imm);
    } else {
        rex_rr(as, true, 0, dst, false);
        engine__x64_byte(as, (uint8_t)(0xb8 + (dst & 7)));
        put32(as, (int32_t)(uint32_t)imm);
        put32(as, (int32_t)(uint32_t)((uint64_t)imm >> 32));
    }
}

void engine__x64_load(struct engine_x64 *as, int dst, struct engine_x64_mem mem)
{
    op_rm(as, true, (const uint8_t[]){0x8b}, 1, dst, mem);
}

void engine__x64_store(struct engine_x64 *as, struct engine_x64_mem mem,
                       int src)
{
    op_rm(as, true, (const uint8_t[]){0x89}, 1, src, mem);
}

void engine__x64_load_u8(struct engine_x64 *as, int dst,
                         struct engine_x64_mem mem)
{
    op_rm(as, false, (const uint8_t[]){0x0f, 0xb6}, 2, dst, mem);
}

void engine__x64_lea(struct engine_x64 *as, int dst, struct engine_x64_mem mem)
{
    op_rm(as, true, (const uint8_t[]){0x8d}, 1, dst, mem);
}

void engine__x64_alu_rr(struct engine_x64 *as, enum engine_x64_alu op,
                        bool wide, int dst, int src)
{
    op_rr(as, wide, (const uint8_t[]){(uint8_t)(op * 8 + 1)}, 1, src, dst);
}

void engine__x64_alu_ri(struct engine_x64 *as, enum engine_x64_alu op,
                        bool wide, int dst, int32_t imm)
{
    bool short_imm = imm >= -128 && imm <= 127;

    op_rr(as, wide, (const uint8_t[]){short_imm ? 0x83 : 0x81}, 1, (int)op,
          dst);
    if (short_imm) {
        engine__x64_byte(as, (uint8_t)(int8_t)imm);
    } else {
        put32(as, imm);
    }
}

void engine__x64_alu_rm(struct engine_x64 *as, enum engine_x64_alu op, int dst,
                        struct engine_x64_mem mem)
{
    op_rm(as, true, (const uint8_t[]){(uint8_t)(op * 8 + 3)}, 1, dst, mem);
}

void engine__x64_test_rr(struct engine_x64 *as, bool wide, int a, int b)
{
    op_rr(as, wide, (const uint8_t[]){0x85}, 1, b, a);
}

void engine__x64_imul_rr(struct engine_x64 *as, int dst, int src)
{
    op_rr(as, true, (const uint8_t[]){0x0f, 0xaf}, 2, dst, src);
}

void engine__x64_shift_ri(struct engine_x64 *as, enum engine_x64_shift op,
                          bool wide, int dst, uint8_t count)
{
    if (count >= (wide ? 64 : 32)) {
        engine__x64_fail(as, -EINVAL);
        return;
    }
    op_rr(as, wide, (const uint8_t[]){0xc1}, 1, (int)op, dst);
    engine__x64_byte(as, count);
}

void engine__x64_shift_cl(struct engine_x64 *as, enum engine_x64_shift op,
                          bool wide, int dst)
{
    op_rr(as, wide, (const uint8_t[]){0xd3}, 1, (int)op, dst);
}

void engine__x64_unary(struct engine_x64 *as, enum engine_x64_unary op,
                       bool wide, int reg)
{
    op_rr(as, wide, (const uint8_t[]){0xf7}, 1, (int)op, reg);
}

void engine__x64_setcc(struct engine_x64 *as, enum engine_x64_cc cc, int dst)
{
    if (!reg_ok(as, dst)) {
        return;
    }
    rex_rr(as, false, 0, dst, dst >= 4);
    engine__x64_bytes(as, (const uint8_t[]){0x0f, (uint8_t)(0x90 + cc)}, 2);
    modrm_rr(as, 0, dst);
}

void engine__x64_cmovcc(struct engine_x64 *as, enum engine_x64_cc cc, int dst,
                        int src)
{
    op_rr(as, true, (const uint8_t[]){0x0f, (uint8_t)(0x40 + cc)}, 2, dst, src);
}

/* A jump: short when the label is bound and in reach, else rel32.
 * short_op is the rel8 opcode, near_op the rel32 one (1 or 2 bytes). */
static void jump(struct engine_x64 *as, uint8_t short_op,
                 const uint8_t *near_op, size_t near_n, uint32_t label)
{
    if (as->error != 0 || !label_ok(as, label)) {
        return;
    }
    if (as->labels[label] >= 0) {
        int64_t rel = (int64_t)as->labels[label] - (int64_t)(as->size + 2);

        if (rel >= -128) {
            engine__x64_bytes(as, (const uint8_t[]){short_op, (uint8_t)rel}, 2);
            return;
        }
    }
    engine__x64_bytes(as, near_op, near_n);
    rel32(as, label);
}

void engine__x64_jcc(struct engine_x64 *as, enum engine_x64_cc cc,
                     uint32_t label)
{
    jump(as, (uint8_t)(0x70 + cc),
         (const uint8_t[]){0x0f, (uint8_t)(0x80 + cc)}, 2, label);
}

void engine__x64_jmp(struct engine_x64 *as, uint32_t label)
{
    jump(as, 0xeb, (const uint8_t[]){0xe9}, 1, label);
}

void engine__x64_push(struct engine_x64 *as, int reg)
{
    if (reg_ok(as, reg)) {
        rex_rr(as, false, 0, reg, false);
        engine__x64_byte(as, (uint8_t)(0x50 + (reg & 7)));
    }
}

void engine__x64_pop(struct engine_x64 *as, int reg)
{
    if (reg_ok(as, reg)) {
        rex_rr(as, false, 0, reg, false);
        engine__x64_byte(as, (uint8_t)(0x58 + (reg & 7)));
    }
}

void engine__x64_ret(struct engine_x64 *as)
{
    engine__x64_byte(as, 0xc3);
}

void engine__x64_popcnt(struct engine_x64 *as, int dst, int src)
{
    engine__x64_byte(as, 0xf3); /* mandatory prefix, before REX */
    op_rr(as, true, (const uint8_t[]){0x0f, 0xb8}, 2, dst, src);
}

void engine__x64_bsr(struct engine_x64 *as, int dst, int src)
{
    op_rr(as, true, (const uint8_t[]){0x0f, 0xbd}, 2, dst, src);
}
