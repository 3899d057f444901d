/* SPDX-License-Identifier: MIT
 *
 * Goal: the JIT's foundation (jit.h) is right before any query uses it:
 * the x86-64 encoder emits the instructions it is asked for, the
 * executable arena keeps every page W^X, honours its cap and reuses freed
 * blocks, failures (out of memory, no address space) are errors and never
 * crashes, and the scan kernel computes exactly what a plain C loop with
 * SQLite's sum() overflow rule computes (test_jit_kernel.c).
 * Method: the encoder's output is decoded by objdump (binutils; the tests
 * that need it skip when it is missing) and compared with the expected
 * Intel-syntax text; whole kernels must decode without a bad byte.
 * /proc/self/maps shows the arena's page protections; fault injection
 * (common_heap_fault) and RLIMIT_AS in a child process make every
 * allocation and the reservation fail.
 */
#define _DEFAULT_SOURCE /* mkstemp, popen */

#include "common_test.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit.h"
#include "jit_objdump.h"

static void expect_decoded(struct engine_x64 *as, const char *const *want,
                           int nwant)
{
    static char lines[MAX_LINES][128];
    int n;

    assert_int_equal(engine__x64_finish(as), 0);
    n = disassemble(as->code, as->size, lines);
    for (int i = 0; i < n && i < nwant; i++) {
        if (strcmp(lines[i], want[i]) != 0) {
            fail_msg("instruction %d: got \"%s\", want \"%s\"", i, lines[i],
                     want[i]);
        }
    }
    assert_int_equal(n, nwant);
}

/* ---- the encoder ---- */

static struct engine_x64_mem mem(int base, int index, int scale, int32_t d)
{
    return engine__x64_at(base, index, scale, d);
}

static void encoder_general_instructions_decode(void **state)
{
    static const char *const want[] = {
        "mov rcx,rax",
        "mov r9d,eax",
        "mov eax,0x1",
        "mov r12,0xfffffffffffffffb",
        "movabs r15,0x123456789abcdef0",
        "mov rax,QWORD PTR [rsi+r11*8]",
        "mov r13,QWORD PTR [r13+0x0]",
        "mov rbx,QWORD PTR [rsp-0x20]",
        "mov QWORD PTR [rdi+0x28],r10",
        "lea rax,[rbp+rcx*4+0x1000]",
        "movzx r12d,BYTE PTR [rdx+r12*1]",
        "mov rax,QWORD PTR [r12+0x8]",
        "add r9,rbx",
        "sub eax,ecx",
        "cmp r11,0x3e8",
        "and r12,0xfffffffffffffff8",
        "or rax,QWORD PTR [rsp-0x18]",
        "test rax,rax",
        "imul r8,r15",
        "shr r12,0x3",
        "sar r12d,cl",
        "setg bl",
        "setl sil",
        "setne r10b",
        "cmove rax,r14",
        "push rbx",
        "push r12",
        "pop r15",
        "popcnt rax,r9",
        "bsr rcx,rax",
        "neg rdx",
        "not r11d",
        "ret",
    };
    struct engine_x64 as;

    (void)state;
    if (!have_objdump()) {
        skip();
    }
    engine__x64_init(&as);
    engine__x64_mov_rr(&as, true, X64_RCX, X64_RAX);
    engine__x64_mov_rr(&as, false, X64_R9, X64_RAX);
    engine__x64_mov_ri(&as, X64_RAX, 1);
    engine__x64_mov_ri(&as, X64_R12, -5);
    engine__x64_mov_ri(&as, X64_R15, INT64_C(0x123456789abcdef0));
    engine__x64_load(&as, X64_RAX, mem(X64_RSI, X64_R11, 8, 0));
    engine__x64_load(&as, X64_R13, mem(X64_R13, X64_NOREG, 1, 0));
    engine__x64_load(&as, X64_RBX, mem(X64_RSP, X64_NOREG, 1, -32));
    engine__x64_store(&as, mem(X64_RDI, X64_NOREG, 1, 40), X64_R10);
    engine__x64_lea(&as, X64_RAX, mem(X64_RBP, X64_RCX, 4, 0x1000));
    engine__x64_load_u8(&as, X64_R12, mem(X64_RDX, X64_R12, 1, 0));
    engine__x64_load(&as, X64_RAX, mem(X64_R12, X64_NOREG, 1, 8));
    engine__x64_alu_rr(&as, X64_ADD, true, X64_R9, X64_RBX);
    engine__x64_alu_rr(&as, X64_SUB, false, X64_RAX, X64_RCX);
    engine__x64_alu_ri(&as, X64_CMP, true, X64_R11, 1000);
    engine__x64_alu_ri(&as, X64_AND, true, X64_R12, -8);
    engine__x64_alu_rm(&as, X64_OR, X64_RAX, mem(X64_RSP, X64_NOREG, 1, -24));
    engine__x64_test_rr(&as, true, X64_RAX, X64_RAX);
    engine__x64_imul_rr(&as, X64_R8, X64_R15);
    engine__x64_shift_ri(&as, X64_SHR, true, X64_R12, 3);
    engine__x64_shift_cl(&as, X64_SAR, false, X64_R12);
    engine__x64_setcc(&as, X64_CC_G, X64_RBX);
    engine__x64_setcc(&as, X64_CC_L, X64_RSI);
    engine__x64_setcc(&as, X64_CC_NE, X64_R10);
    engine__x64_cmovcc(&as, X64_CC_E, X64_RAX, X64_R14);
    engine__x64_push(&as, X64_RBX);
    engine__x64_push(&as, X64_R12);
    engine__x64_pop(&as, X64_R15);
    engine__x64_popcnt(&as, X64_RAX, X64_R9);
    engine__x64_bsr(&as, X64_RCX, X64_RAX);
    engine__x64_unary(&as, X64_NEG, true, X64_RDX);
    engine__x64_unary(&as, X64_NOT, false, X64_R11);
    engine__x64_ret(&as);
    expect_decoded(&as, want, (int)(sizeof(want) / sizeof(want[0])));
    engine__x64_close(&as);
}

static void encoder_vector_instructions_decode(void **state)
{
    static const char *const want[] = {
        "pcmpgtq xmm1,xmm9",
        "paddq xmm0,xmm2",
        "pcmpeqq xmm12,xmm3",
        "movmskpd eax,xmm3",
        "vpcmpgtq ymm2,ymm0,ymm15",
        "vpaddq ymm9,ymm9,ymm6",
        "vpandn ymm2,ymm5,ymm2",
        "vpcmpeqq ymm14,ymm14,ymm14",
        "vpsubq ymm10,ymm10,ymm3",
        "vpxor ymm8,ymm8,ymm8",
        "vmovdqu ymm1,YMMWORD PTR [rsi+r11*8+0x20]",
        "vmovdqu YMMWORD PTR [rsp-0x20],ymm10",
        "vmovq xmm15,r8",
        "vpbroadcastq ymm15,xmm15",
        "vpbroadcastq ymm11,QWORD PTR [rdi+0x118]",
        "vpblendvb ymm3,ymm4,ymm9,ymm12",
        "vmovmskpd eax,ymm2",
        "vpmovmskb ecx,ymm8",
        "vzeroupper",
    };
    struct engine_x64 as;

    (void)state;
    if (!have_objdump()) {
        skip();
    }
    engine__x64_init(&as);
    engine__x64_sse_rr(&as, X64_PCMPGTQ, 1, 9);
    engine__x64_sse_rr(&as, X64_PADDQ, 0, 2);
    engine__x64_sse_rr(&as, X64_PCMPEQQ, 12, 3);
    engine__x64_movmskpd(&as, X64_RAX, 3);
    engine__x64_vop(&as, X64_PCMPGTQ, 2, 0, 15);
    engine__x64_vop(&as, X64_PADDQ, 9, 9, 6);
    engine__x64_vop(&as, X64_PANDN, 2, 5, 2);
    engine__x64_vop(&as, X64_PCMPEQQ, 14, 14, 14);
    engine__x64_vop(&as, X64_PSUBQ, 10, 10, 3);
    engine__x64_vop(&as, X64_PXOR, 8, 8, 8);
    engine__x64_vload(&as, 1, mem(X64_RSI, X64_R11, 8, 32));
    engine__x64_vstore(&as, mem(X64_RSP, X64_NOREG, 1, -32), 10);
    engine__x64_vmovq_from(&as, 15, X64_R8);
    engine__x64_vpbroadcastq(&as, 15, 15);
    engine__x64_vpbroadcastq_m(&as, 11, mem(X64_RDI, X64_NOREG, 1, 0x118));
    engine__x64_vpblendvb(&as, 3, 4, 9, 12);
    engine__x64_vmovmskpd(&as, X64_RAX, 2);
    engine__x64_vpmovmskb(&as, X64_RCX, 8);
    engine__x64_vzeroupper(&as);
    expect_decoded(&as, want, (int)(sizeof(want) / sizeof(want[0])));
    engine__x64_close(&as);
}

/* Backward jumps in reach are short, forward ones rel32, patched at
 * finish; a rip-relative operand points at its label. */
static void encoder_labels_patch_jumps(void **state)
{
    static const char *const want[] = {
        "add r11,0x1",
        "jb 0x0",
        "je 0x1a",
        "jmp 0x1a",
        "vmovdqu ymm0,YMMWORD PTR [rip+0x1] # 0x1a",
        "ret",
    };
    struct engine_x64 as;
    uint32_t top;
    uint32_t data;

    (void)state;
    if (!have_objdump()) {
        skip();
    }
    engine__x64_init(&as);
    top = engine__x64_label(&as);
    data = engine__x64_label(&as);
    engine__x64_bind(&as, top);
    engine__x64_alu_ri(&as, X64_ADD, true, X64_R11, 1);
    engine__x64_jcc(&as, X64_CC_B, top);
    engine__x64_jcc(&as, X64_CC_E, data);
    engine__x64_jmp(&as, data);
    engine__x64_vload(&as, 0, mem(X64_RIP, X64_NOREG, 1, (int32_t)data));
    engine__x64_ret(&as);
    assert_int_equal(as.size, 4 + 2 + 6 + 5 + 8 + 1);
    engine__x64_bind(&as, data);
    expect_decoded(&as, want, (int)(sizeof(want) / sizeof(want[0])));
    engine__x64_close(&as);
}

/* An operand the encoder cannot take is an error at finish, not a crash
 * or a wrong instruction. */
static void encoder_rejects_bad_operands(void **state)
{
    struct engine_x64 as;
    uint32_t label;

    (void)state;
    engine__x64_init(&as);
    engine__x64_load(&as, X64_RAX, mem(X64_RBX, X64_RSP, 8, 0));
    assert_int_equal(engine__x64_finish(&as), -EINVAL);
    engine__x64_close(&as);

    engine__x64_init(&as);
    engine__x64_load(&as, X64_RAX, mem(X64_RBX, X64_RCX, 3, 0));
    engine__x64_ret(&as);
    assert_int_equal(engine__x64_finish(&as), -EINVAL);
    assert_int_equal(as.size, 0);
    engine__x64_close(&as);

    engine__x64_init(&as);
    engine__x64_mov_rr(&as, true, 16, X64_RAX);
    engine__x64_shift_ri(&as, X64_SHL, true, X64_RAX, 64);
    assert_int_equal(engine__x64_finish(&as), -EINVAL);
    engine__x64_close(&as);

    engine__x64_init(&as);
    label = engine__x64_label(&as);
    engine__x64_jmp(&as, label);
    assert_int_equal(engine__x64_finish(&as), -EINVAL); /* never bound */
    engine__x64_bind(&as, label);
    engine__x64_bind(&as, label);
    engine__x64_jmp(&as, label + 7);
    assert_int_equal(engine__x64_finish(&as), -EINVAL);
    engine__x64_close(&as);
}

/* The CPU detection agrees with the compiler's (which also asks XGETBV
 * for AVX). */
static void cpu_detection_agrees_with_the_compiler(void **state)
{
    struct engine_jit_cpu cpu;

    (void)state;
    engine__jit_cpu_detect(&cpu);
#if defined(__x86_64__)
    __builtin_cpu_init();
    assert_true(cpu.x86_64);
    assert_int_equal(cpu.sse42, __builtin_cpu_supports("sse4.2") != 0);
    assert_int_equal(cpu.popcnt, __builtin_cpu_supports("popcnt") != 0);
    assert_int_equal(cpu.avx2, __builtin_cpu_supports("avx2") != 0);
    printf("jit isa level %d (avx2 %d)\n", engine__jit_cpu_isa(&cpu), cpu.avx2);
#else
    assert_int_equal(engine__jit_cpu_isa(&cpu), ENGINE_JIT_ISA_NONE);
#endif
}

/* ---- the executable arena ---- */

/* Every mapping inside [start, start + size) in /proc/self/maps: none may
 * be writable and executable; returns the bytes mapped r-x. */
static size_t check_maps(uintptr_t start, size_t size)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    size_t rx = 0;

    assert_non_null(maps);
    while (fgets(line, sizeof(line), maps) != NULL) {
        unsigned long lo;
        unsigned long hi;
        char perms[8];

        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || hi <= start ||
            lo >= start + size) {
            continue;
        }
        if (perms[1] == 'w' && perms[2] == 'x') {
            fail_msg("writable and executable: %s", line);
        }
        if (perms[0] == 'r' && perms[2] == 'x') {
            rx += (size_t)(hi < start + size ? hi : start + size) -
                  (size_t)(lo > start ? lo : start);
        }
    }
    fclose(maps);
    return rx;
}

static const struct engine_jit_scan_spec count_gt = {
    .op = ENGINE_JIT_GT, .isa = ENGINE_JIT_ISA_SCALAR};

static int64_t run_count_gt(const struct engine_jit_code *code)
{
    int64_t values[5] = {1, 5, 9, -3, 7};
    struct engine_jit_scan_args args = {.values = values, .n = 5, .param = 4};

    assert_int_equal(engine__jit_scan_entry(code)(&args), 0);
    return (int64_t)args.count;
}

/* Kernels run only on x86-64 (no AArch64 encoder yet). */
static void skip_unless_x86_64(void)
{
    struct engine_jit_cpu cpu;

    engine__jit_cpu_detect(&cpu);
    if (!cpu.x86_64) {
        printf("not x86-64: no kernel to install\n");
        skip();
    }
}

static void arena_pages_are_never_writable_and_executable(void **state)
{
    struct engine_jit_arena *arena;
    struct engine_jit_code code[6];
    uintptr_t start;
    size_t size;
    long page = sysconf(_SC_PAGESIZE);

    (void)state;
    skip_unless_x86_64();
    assert_int_equal(engine__jit_arena_open(&arena, 64 * (size_t)page), 0);
    engine__jit_arena_range(arena, &start, &size);
    assert_int_equal(size, 64 * (size_t)page);
    assert_int_equal(check_maps(start, size), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(engine__jit_scan_compile(arena, &count_gt, &code[i]),
                         0);
        assert_int_equal(run_count_gt(&code[i]), 3);
    }
    assert_int_equal(check_maps(start, size), 6 * (size_t)page);
    engine__jit_free(arena, &code[1]);
    engine__jit_free(arena, &code[4]);
    assert_int_equal(check_maps(start, size), 4 * (size_t)page);
    assert_int_equal(engine__jit_arena_used(arena), 4 * (size_t)page);
    for (int i = 0; i < 6; i++) {
        engine__jit_free(arena, &code[i]);
    }
    assert_int_equal(check_maps(start, size), 0);
    engine__jit_arena_close(arena);
}

static void arena_keeps_its_cap_and_reuses_freed_blocks(void **state)
{
    struct engine_jit_arena *arena;
    struct engine_jit_code code[4];
    struct engine_jit_code more;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *big;
    void *second;

    (void)state;
    skip_unless_x86_64();
    big = test_calloc(1, 3 * page);
    assert_int_equal(engine__jit_arena_open(&arena, 0), COMMON_ETOOBIG);
    assert_null(arena);
    assert_int_equal(engine__jit_arena_open(&arena, ENGINE__JIT_ARENA_MAX + 1),
                     COMMON_ETOOBIG);
    assert_int_equal(engine__jit_arena_open(&arena, 4 * page - 100), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(engine__jit_scan_compile(arena, &count_gt, &code[i]),
                         0);
    }
    /* full: an error, and the code left empty */
    assert_int_equal(engine__jit_scan_compile(arena, &count_gt, &more),
                     COMMON_ETOOBIG);
    assert_null(more.entry);
    assert_int_equal(engine__jit_install(arena, big, 5 * page, &more),
                     COMMON_ETOOBIG);
    /* a freed block is reused, and the code there runs */
    second = code[1].entry;
    engine__jit_free(arena, &code[1]);
    engine__jit_free(arena, &code[1]); /* empty: ignored */
    assert_int_equal(engine__jit_scan_compile(arena, &count_gt, &code[1]), 0);
    assert_ptr_equal(code[1].entry, second);
    assert_int_equal(run_count_gt(&code[1]), 3);
    /* two pages need two free pages side by side */
    engine__jit_free(arena, &code[0]);
    engine__jit_free(arena, &code[2]);
    assert_int_equal(engine__jit_install(arena, big, page + 1, &more),
                     COMMON_ETOOBIG);
    engine__jit_free(arena, &code[1]);
    assert_int_equal(engine__jit_install(arena, big, 3 * page, &more), 0);
    assert_int_equal(more.pages, 3);
    assert_int_equal(engine__jit_arena_used(arena), 4 * page);
    engine__jit_free(arena, &more);
    engine__jit_free(arena, &code[3]);
    assert_int_equal(engine__jit_arena_used(arena), 0);
    engine__jit_arena_close(arena);
    engine__jit_arena_close(NULL);
    test_free(big);
}

/* Every allocation of opening an arena and of compiling a kernel may
 * fail: an error, nothing leaked (cmocka's heap checks). */
static void out_of_memory_is_an_error(void **state)
{
    struct engine_jit_arena *arena = NULL;
    const struct engine_jit_scan_spec spec = {.op = ENGINE_JIT_LE,
                                              .sum = true,
                                              .nulls = true,
                                              .isa = ENGINE_JIT_ISA_SCALAR};
    struct common_heap saved;

    (void)state;
    skip_unless_x86_64();
    common_heap_get(&saved);
    for (uint64_t fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        struct engine_jit_code code = {0};
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = engine__jit_arena_open(&arena, 1 << 16);
        if (rc == 0) {
            rc = engine__jit_scan_compile(arena, &spec, &code);
        }
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            assert_non_null(code.entry);
            engine__jit_free(arena, &code);
            engine__jit_arena_close(arena);
            assert_true(fail_at > 3);
            break;
        }
        assert_int_equal(rc, COMMON_ENOMEM);
        assert_null(code.entry);
        engine__jit_arena_close(arena);
        arena = NULL;
    }
}

/* No address space left (RLIMIT_AS, in a child process): -ENOMEM. */
static void no_address_space_is_an_error(void **state)
{
    pid_t pid;
    int status;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct engine_jit_arena *arena;
        unsigned long vm_pages = 0;
        FILE *statm = fopen("/proc/self/statm", "r");
        struct rlimit limit;
        int rc;

        if (statm == NULL || fscanf(statm, "%lu", &vm_pages) != 1) {
            _exit(2);
        }
        fclose(statm);
        limit.rlim_cur = vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1 << 20);
        limit.rlim_max = RLIM_INFINITY;
        if (setrlimit(RLIMIT_AS, &limit) != 0) {
            _exit(3);
        }
        rc = engine__jit_arena_open(&arena, (size_t)64 << 20);
        _exit(rc == -ENOMEM && arena == NULL ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Whole kernels decode: no byte objdump cannot read. */
static void kernels_decode(void **state)
{
    static char lines[MAX_LINES][128];

    (void)state;
    if (!have_objdump()) {
        skip();
    }
    for (int k = 0; k < 8; k++) {
        struct engine_jit_scan_spec spec = {.op = (enum engine_jit_op)(k % 6),
                                            .sum = k % 2,
                                            .nulls = (k / 2) % 2,
                                            .isa = k < 4 ? ENGINE_JIT_ISA_SCALAR
                                                         : ENGINE_JIT_ISA_AVX2};
        struct engine_x64 as;
        int n;
        bool vector = false;

        engine__x64_init(&as);
        assert_int_equal(engine__jit_scan_emit(&as, &spec), 0);
        n = disassemble(as.code, as.size, lines);
        assert_true(n > 20);
        for (int i = 0; i < n; i++) {
            assert_null(strstr(lines[i], "(bad)"));
            vector = vector || strncmp(lines[i], "vpcmp", 5) == 0;
        }
        assert_int_equal(vector, spec.isa == ENGINE_JIT_ISA_AVX2);
        engine__x64_close(&as);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoder_general_instructions_decode),
        cmocka_unit_test(encoder_vector_instructions_decode),
        cmocka_unit_test(encoder_labels_patch_jumps),
        cmocka_unit_test(encoder_rejects_bad_operands),
        cmocka_unit_test(cpu_detection_agrees_with_the_compiler),
        cmocka_unit_test(arena_pages_are_never_writable_and_executable),
        cmocka_unit_test(arena_keeps_its_cap_and_reuses_freed_blocks),
        cmocka_unit_test(out_of_memory_is_an_error),
        cmocka_unit_test(no_address_space_is_an_error),
        cmocka_unit_test(kernels_decode),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
