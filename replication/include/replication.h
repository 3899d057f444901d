/* SPDX-License-Identifier: MIT
 *
 * replication.h: databases on several nodes that stay in step, and its
 * manual. (Being built: issue 6. Today: the codes below; the change-set
 * format and the crdt merge are internal until the embedded API lands.)
 *
 * Modes (../shared/DESIGN.md): crdt, where every node writes and replicas
 * merge per column by hybrid logical clock; leader, where one writer's
 * change log is applied by followers in order.
 */
#ifndef SINEW_REPLICATION_H
#define SINEW_REPLICATION_H

#include "common.h"

#define REPLICATION_ERROR_MAP(X)                                               \
    X(REPLICATION_EFORMAT, -10300, "malformed change set")                     \
    X(REPLICATION_EVERSION, -10301, "unsupported change set format version")   \
    X(REPLICATION_ESCHEMA, -10302,                                             \
      "change set names an unknown table or "                                  \
      "column")                                                                \
    X(REPLICATION_EDEFERRED, -10303, "change set stamped too far ahead")

enum replication_error { REPLICATION_ERROR_MAP(COMMON_ERROR_ENUM) };

#define REPLICATION_ERROR_FIRST (-10399)
#define REPLICATION_ERROR_LAST (-10300)

/* The message for a replication code; common_strerror()'s answer
 * otherwise. */
const char *replication_strerror(int rc);

#endif /* SINEW_REPLICATION_H */
