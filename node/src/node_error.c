/* SPDX-License-Identifier: MIT
 *
 * node_error.c: node_strerror(), which names every module's codes, so the
 * binary prints one message whichever layer failed.
 */
#include "node.h"

#include "consensus.h"
#include "engine.h"
#include "replication.h"
#include "transport.h"

const char *node_strerror(int rc)
{
    switch (rc) {
        NODE_ERROR_MAP(COMMON_ERROR_CASE)
    default:
        break;
    }
    if (rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST) {
        return engine_strerror(rc);
    }
    if (rc >= TRANSPORT_ERROR_FIRST && rc <= TRANSPORT_ERROR_LAST) {
        return transport_strerror(rc);
    }
    if (rc >= REPLICATION_ERROR_FIRST && rc <= REPLICATION_ERROR_LAST) {
        return replication_strerror(rc);
    }
    if (rc >= CONSENSUS_ERROR_FIRST && rc <= CONSENSUS_ERROR_LAST) {
        return consensus_strerror(rc);
    }
    return common_strerror(rc);
}
