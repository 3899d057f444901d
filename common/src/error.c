/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for common's error codes and for -errno values. The
 * messages come from the same X-macro list as the codes (common.h).
 */
#include "common.h"

#include <string.h>

/* libuv's convention: errno values stay below 4096 on every platform we
 * build for, so -4095..-1 is reserved for them. */
#define ERRNO_NEGATED_FIRST (-4095)

static const char *common_code_message(int rc)
{
    switch (rc) {
        COMMON_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return "unknown error";
    }
}

const char *common_strerror(int rc)
{
    if (rc == 0) {
        return "success";
    }
    if (rc >= COMMON_ERROR_FIRST && rc <= COMMON_ERROR_LAST) {
        return common_code_message(rc);
    }
    if (rc >= ERRNO_NEGATED_FIRST && rc < 0) {
        /* glibc's strerror() returns static text for every known errno and
         * is thread-safe for them; unknown values get "Unknown error N". */
        return strerror(-rc);
    }
    return "unknown error";
}
