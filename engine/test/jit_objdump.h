/* SPDX-License-Identifier: MIT
 *
 * jit_objdump.h: decoding emitted machine code with objdump (binutils),
 * for the JIT's tests (test_jit.c, test_jit_pipe.c): the bytes go to a
 * temporary file, objdump prints Intel syntax, and each instruction comes
 * back as one line with its whitespace collapsed.
 */
#ifndef SINEW_ENGINE_JIT_OBJDUMP_H
#define SINEW_ENGINE_JIT_OBJDUMP_H

#include "common_test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINES 512

static inline bool have_objdump(void)
{
    if (system("command -v objdump >/dev/null 2>&1") != 0) {
        printf("objdump not found (binutils): decoding tests skipped\n");
        return false;
    }
    return true;
}

/* The instructions objdump decodes in code, one per line, whitespace
 * collapsed; returns how many. */
static inline int disassemble(const uint8_t *code, size_t size,
                              char lines[][128])
{
    char path[] = "/tmp/sinew-jit-XXXXXX";
    char command[256];
    char text[512];
    int fd = mkstemp(path);
    int n = 0;
    FILE *out;

    assert_true(fd >= 0);
    assert_int_equal(write(fd, code, size), (ssize_t)size);
    close(fd);
    snprintf(command, sizeof(command),
             "objdump -D -b binary -mi386:x86-64 -M intel %s", path);
    out = popen(command, "r");
    assert_non_null(out);
    while (fgets(text, sizeof(text), out) != NULL && n < MAX_LINES) {
        char *insn = strchr(text, '\t');
        char *dst = lines[n];
        bool space = false;

        /* "   4:\t72 fa    \tjb     0x0": a third field is an instruction */
        if (insn == NULL || strchr(text, ':') > insn ||
            (insn = strchr(insn + 1, '\t')) == NULL) {
            continue;
        }
        for (char *c = insn + 1; *c != '\0' && dst < lines[n] + 127; c++) {
            if (*c == ' ' || *c == '\t' || *c == '\n') {
                space = dst != lines[n];
                continue;
            }
            if (space) {
                *dst++ = ' ';
                space = false;
            }
            *dst++ = *c;
        }
        *dst = '\0';
        n++;
    }
    pclose(out);
    unlink(path);
    return n;
}

#endif /* SINEW_ENGINE_JIT_OBJDUMP_H */
