/* SPDX-License-Identifier: MIT
 *
 * fuzz_engine.c: libFuzzer target for the whole engine: each input is run
 * as SQL against a fresh database with a small schema, through prepare,
 * step and column access. Any crash, sanitizer report or leak is a bug.
 * Built only with clang (engine/CMakeLists.txt); `make fuzz` runs it.
 */
#include <stddef.h>
#include <stdint.h>

#include "engine_robust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct engine_db *db = engine_robust_open();

    if (db != NULL && size < (1u << 16)) {
        (void)engine_robust_run(db, (const char *)data, size);
    }
    engine_close(db);
    return 0;
}
