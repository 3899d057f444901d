/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for the replication module's codes, generated from the
 * same X-macro list as the codes themselves (replication.h).
 */
#include "replication.h"

const char *replication_strerror(int rc)
{
    switch (rc) {
        REPLICATION_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return common_strerror(rc);
    }
}
