/* SPDX-License-Identifier: MIT
 *
 * error.c: messages for the transport module's codes, generated from the
 * same X-macro list as the codes themselves (transport.h).
 */
#include "transport.h"

const char *transport_strerror(int rc)
{
    switch (rc) {
        TRANSPORT_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        return common_strerror(rc);
    }
}
