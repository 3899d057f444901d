/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for the engine's codes, from the same X-macro list as
 * the codes themselves (engine.h).
 */
#include "engine.h"

const char *engine_strerror(int rc)
{
    switch (rc) {
        ENGINE_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return common_strerror(rc);
    }
}
