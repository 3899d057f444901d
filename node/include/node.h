/* SPDX-License-Identifier: MIT
 *
 * node.h: the node module's codes, shared by the pieces of the `sinew`
 * binary (serve, shell, import/export, cluster). The node wires every
 * other module together (DESIGN.md, "Node"); this header grows into the
 * embedding API (a node in a C program) as that is built.
 */
#ifndef SINEW_NODE_H
#define SINEW_NODE_H

#include "common.h"

#define NODE_ERROR_MAP(X)                                                      \
    X(NODE_EINVAL, -10500, "invalid argument")                                 \
    X(NODE_ENOTFOUND, -10501, "not found")                                     \
    X(NODE_EBUSY, -10502, "busy")                                              \
    X(NODE_EIO, -10503, "input/output error")                                  \
    X(NODE_ENOTLEADER, -10504, "not the leader")                               \
    X(NODE_EPROTO, -10505, "protocol error")                                   \
    X(NODE_EUNAVAILABLE, -10506, "service unavailable")                        \
    X(NODE_EAUTH, -10507, "not authorized")

enum node_error { NODE_ERROR_MAP(COMMON_ERROR_ENUM) };

#define NODE_ERROR_FIRST (-10599)
#define NODE_ERROR_LAST (-10500)

/* The message for a node code; the owning module's for others (engine,
 * transport, replication, consensus, common). */
const char *node_strerror(int rc);

#endif /* SINEW_NODE_H */
