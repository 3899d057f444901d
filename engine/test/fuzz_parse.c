/* SPDX-License-Identifier: MIT
 *
 * fuzz_parse.c: libFuzzer target for engine__parse(). Any bytes must give
 * a tree or a clean error: never a crash, a hang, a leak or a read past
 * size (AddressSanitizer and UndefinedBehaviorSanitizer watch). The input
 * is copied to a buffer of exactly its size so that ASan sees any
 * over-read. Built only with clang (engine/CMakeLists.txt).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL;
    size_t tail = 0;
    size_t error_offset = 0;
    char errmsg[256];
    char *copy = malloc(size == 0 ? 1 : size);
    int rc;

    if (copy == NULL) {
        return 0;
    }
    if (size > 0) {
        memcpy(copy, data, size);
    }
    engine__arena_init(&arena);
    rc = engine__parse(&arena, copy, size, &stmt, &tail, errmsg, sizeof(errmsg),
                       &error_offset);
    if (rc == 0 && tail > size) {
        abort();
    }
    if (rc != 0 && (errmsg[0] == '\0' || error_offset > size)) {
        abort();
    }
    engine__arena_close(&arena);
    free(copy);
    return 0;
}
