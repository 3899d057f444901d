/* SPDX-License-Identifier: MIT
 *
 * serve_log.h: the log of `sinew serve`: one key=value line per message,
 *
 *   time=2026-12-03T13:40:01.123Z level=info node=3f2a9c1b module=http
 *   msg="listening" address=127.0.0.1:8080
 *
 * (one line), with the wall time in UTC, the level, the first 8 hex digits
 * of the node's id, and the module. Modules log "words key=value ...":
 * the words become msg="...", the pairs follow as they are. Lines go to
 * standard error or to a file opened for appending, which SIGHUP reopens
 * (serve_log_reopen) so logrotate can move it. Any thread may log: a mutex
 * keeps lines whole.
 */
#ifndef SINEW_NODE_SERVE_LOG_H
#define SINEW_NODE_SERVE_LOG_H

#include "common.h"

struct serve_log;

/* Opens the log: path NULL for standard error, else a file (created,
 * appended to; path copied). min_level: COMMON_LOG_*. 0, NODE_EIO (the
 * file cannot be opened: errno's message in error), COMMON_ENOMEM. */
int serve_log_open(const char *path, int min_level, struct serve_log **out,
                   char *error, size_t error_size);

/* The node's id (64 hex digits; the first 8 are printed), once known. */
void serve_log_set_node(struct serve_log *log, const char *node_hex);

/* Fills *out with a sink whose lines say module=name (a static string).
 * The sink is valid while log is open. At most 16 modules. */
void serve_log_sink(struct serve_log *log, const char *name,
                    struct common_log *out);

/* Reopens the file (SIGHUP); standard error is left alone. */
int serve_log_reopen(struct serve_log *log);

void serve_log_close(struct serve_log *log);

#endif /* SINEW_NODE_SERVE_LOG_H */
