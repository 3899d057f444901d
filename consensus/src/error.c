/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for the consensus module's codes, generated from the
 * same X-macro list as the codes themselves (consensus.h).
 */
#include "consensus.h"

const char *consensus_strerror(int rc)
{
    switch (rc) {
        CONSENSUS_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return common_strerror(rc);
    }
}
