/* SPDX-License-Identifier: MIT
 *
 * jit_x64_vec.c: the vector instructions of the x86-64 encoder (jit.h):
 * SSE4.2 forms on xmm registers (66 [REX] 0F [38] op) and AVX2 forms on
 * ymm registers with a VEX prefix (Intel SDM vol. 2 §2.3). Only the
 * packed int64 operations a scan kernel needs: compares, adds, logic,
 * broadcast, loads/stores and mask extraction. Callers choose these only
 * when jit_cpu.c says the CPU and the OS allow them.
 */
#include "jit.h"

#include <errno.h>

enum { MAP_0F = 1, MAP_0F38 = 2, MAP_0F3A = 3 };
enum { PP_NONE = 0, PP_66 = 1, PP_F3 = 2 };

struct vop_code {
    uint8_t map;
    uint8_t opcode;
};

static const struct vop_code vop_codes[] = {
    [X64_PADDQ] = {MAP_0F, 0xd4},     [X64_PSUBQ] = {MAP_0F, 0xfb},
    [X64_PAND] = {MAP_0F, 0xdb},      [X64_PANDN] = {MAP_0F, 0xdf},
    [X64_POR] = {MAP_0F, 0xeb},       [X64_PXOR] = {MAP_0F, 0xef},
    [X64_PCMPEQQ] = {MAP_0F38, 0x29}, [X64_PCMPGTQ] = {MAP_0F38, 0x37},
};

static bool regs_ok(struct engine_x64 *as, int a, int b, int c)
{
    if (a < 0 || a > 15 || b < 0 || b > 15 || c < 0 || c > 15) {
        engine__x64_fail(as, -EINVAL);
        return false;
    }
    return true;
}

/* The VEX prefix: the 2-byte form when nothing needs X, B, W or a map
 * other than 0F, as assemblers choose; xb holds REX.X (2) and REX.B (1). */
static void vex(struct engine_x64 *as, bool l256, int pp, int map, bool w,
                int reg, int vvvv, int xb)
{
    uint8_t tail = (uint8_t)((~vvvv & 15) << 3 | (l256 ? 4 : 0) | pp);
    uint8_t r = (reg & 8) ? 0 : 0x80;

    if (xb == 0 && !w && map == MAP_0F) {
        engine__x64_bytes(as, (const uint8_t[]){0xc5, (uint8_t)(r | tail)}, 2);
        return;
    }
    engine__x64_bytes(as,
                      (const uint8_t[]){0xc4,
                                        (uint8_t)(r | (~xb & 3) << 5 | map),
                                        (uint8_t)((w ? 0x80 : 0) | tail)},
                      3);
}

static void vex_rr(struct engine_x64 *as, bool l256, int pp, int map, bool w,
                   uint8_t opcode, int reg, int vvvv, int rm)
{
    if (!regs_ok(as, reg, vvvv, rm)) {
        return;
    }
    vex(as, l256, pp, map, w, reg, vvvv, (rm & 8) ? 1 : 0);
    engine__x64_byte(as, opcode);
    engine__x64_byte(as, (uint8_t)(0xc0 | (reg & 7) << 3 | (rm & 7)));
}

static void vex_rm(struct engine_x64 *as, bool l256, int pp, int map,
                   uint8_t opcode, int reg, struct engine_x64_mem mem)
{
    int xb;

    if (!regs_ok(as, reg, 0, 0)) {
        return;
    }
    xb = engine__x64_mem_rex(as, mem);
    if (as->error != 0) {
        return;
    }
    vex(as, l256, pp, map, false, reg, 0, xb);
    engine__x64_byte(as, opcode);
    engine__x64_modrm_mem(as, reg, mem);
}

/* 66 [REX] 0F [38] opcode ModRM, for two xmm (or a general) registers. */
static void sse_rr(struct engine_x64 *as, int map, uint8_t opcode, int reg,
                   int rm)
{
    uint8_t rex = (uint8_t)(0x40 | (reg & 8) >> 1 | (rm & 8) >> 3);

    if (!regs_ok(as, reg, rm, 0)) {
        return;
    }
    engine__x64_byte(as, 0x66);
    if (rex != 0x40) {
        engine__x64_byte(as, rex);
    }
    engine__x64_byte(as, 0x0f);
    if (map == MAP_0F38) {
        engine__x64_byte(as, 0x38);
    }
    engine__x64_byte(as, opcode);
    engine__x64_byte(as, (uint8_t)(0xc0 | (reg & 7) << 3 | (rm & 7)));
}

void engine__x64_sse_rr(struct engine_x64 *as, enum engine_x64_vop op, int dst,
                        int src)
{
    sse_rr(as, vop_codes[op].map, vop_codes[op].opcode, dst, src);
}

void engine__x64_movmskpd(struct engine_x64 *as, int dst, int xmm)
{
    sse_rr(as, MAP_0F, 0x50, dst, xmm);
}

void engine__x64_vop(struct engine_x64 *as, enum engine_x64_vop op, int dst,
                     int a, int b)
{
    vex_rr(as, true, PP_66, vop_codes[op].map, false, vop_codes[op].opcode, dst,
           a, b);
}

void engine__x64_vload(struct engine_x64 *as, int ymm,
                       struct engine_x64_mem mem)
{
    vex_rm(as, true, PP_F3, MAP_0F, 0x6f, ymm, mem);
}

void engine__x64_vstore(struct engine_x64 *as, struct engine_x64_mem mem,
                        int ymm)
{
    vex_rm(as, true, PP_F3, MAP_0F, 0x7f, ymm, mem);
}

void engine__x64_vmovq_from(struct engine_x64 *as, int xmm, int reg)
{
    vex_rr(as, false, PP_66, MAP_0F, true, 0x6e, xmm, 0, reg);
}

void engine__x64_vpbroadcastq(struct engine_x64 *as, int ymm, int xmm)
{
    vex_rr(as, true, PP_66, MAP_0F38, false, 0x59, ymm, 0, xmm);
}

void engine__x64_vpbroadcastq_m(struct engine_x64 *as, int ymm,
                                struct engine_x64_mem mem)
{
    vex_rm(as, true, PP_66, MAP_0F38, 0x59, ymm, mem);
}

/* VEX.256.66.0F3A.W0 4C /r /is4: the mask register in imm8[7:4]. */
void engine__x64_vpblendvb(struct engine_x64 *as, int dst, int a, int b,
                           int mask)
{
    if (!regs_ok(as, mask, 0, 0)) {
        return;
    }
    vex_rr(as, true, PP_66, MAP_0F3A, false, 0x4c, dst, a, b);
    engine__x64_byte(as, (uint8_t)(mask << 4));
}

void engine__x64_vmovmskpd(struct engine_x64 *as, int dst, int ymm)
{
    vex_rr(as, true, PP_66, MAP_0F, false, 0x50, dst, 0, ymm);
}

void engine__x64_vpmovmskb(struct engine_x64 *as, int dst, int ymm)
{
    vex_rr(as, true, PP_66, MAP_0F, false, 0xd7, dst, 0, ymm);
}

void engine__x64_vzeroupper(struct engine_x64 *as)
{
    engine__x64_bytes(as, (const uint8_t[]){0xc5, 0xf8, 0x77}, 3);
}
