/* SPDX-License-Identifier: MIT
 *
 * jit_cpu.c: which instructions the JIT may emit on this machine.
 *
 * CPUID tells what the processor implements, but AVX registers are usable
 * only when the OS saves their upper halves on a context switch: CPUID.1
 * ECX.OSXSAVE must be set and XGETBV(0) must show the SSE (bit 1) and AVX
 * (bit 2) state enabled (Intel SDM vol. 1 §14.3, "Detection of Intel AVX
 * instructions"). A CPU that has AVX2 under an OS that does not save ymm
 * gets the scalar kernels.
 */
#include "jit.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* XCR0, read with XGETBV (only after checking OSXSAVE: it faults
 * otherwise). Spelled as bytes so no -mxsave is needed. */
static uint64_t read_xcr0(void)
{
    uint32_t lo;
    uint32_t hi;

    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

void engine__jit_cpu_detect(struct engine_jit_cpu *cpu)
{
    unsigned int eax = 0;
    unsigned int ebx = 0;
    unsigned int ecx = 0;
    unsigned int edx = 0;
    unsigned int max_leaf = (unsigned int)__get_cpuid_max(0u, NULL);

    memset(cpu, 0, sizeof(*cpu));
    cpu->x86_64 = true;
    if (max_leaf < 1 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return;
    }
    cpu->sse42 = (ecx & bit_SSE4_2) != 0;
    cpu->popcnt = (ecx & bit_POPCNT) != 0;
    if ((ecx & bit_OSXSAVE) != 0 && (ecx & bit_AVX) != 0) {
        cpu->avx = (read_xcr0() & 6) == 6;
    }
    if (cpu->avx && max_leaf >= 7 &&
        __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        cpu->avx2 = (ebx & bit_AVX2) != 0;
    }
}
#else
void engine__jit_cpu_detect(struct engine_jit_cpu *cpu)
{
    memset(cpu, 0, sizeof(*cpu));
}
#endif

enum engine_jit_isa engine__jit_cpu_isa(const struct engine_jit_cpu *cpu)
{
    if (!cpu->x86_64) {
        return ENGINE_JIT_ISA_NONE;
    }
    if (cpu->avx2 && cpu->sse42 && cpu->popcnt) {
        return ENGINE_JIT_ISA_AVX2;
    }
    if (cpu->sse42 && cpu->popcnt) {
        return ENGINE_JIT_ISA_SSE42;
    }
    return ENGINE_JIT_ISA_SCALAR;
}
