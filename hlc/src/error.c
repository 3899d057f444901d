/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for the hlc module's codes, generated from the same
 * X-macro list as the codes themselves (hlc.h).
 */
#include "hlc.h"

const char *hlc_strerror(int rc)
{
    switch (rc) {
        HLC_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return common_strerror(rc);
    }
}
