/* SPDX-License-Identifier: MIT
 *
 * shell_backend.h: where `sinew shell` runs its SQL. Either the engine on a
 * local file (or in memory), or a sinew node over HTTP (a Hrana stream,
 * remote.h). The shell itself reads input, splits it into statements
 * (shell_complete.h), answers dot commands and prints; a backend runs one
 * piece of SQL text and hands each result set to a sink as struct
 * shell_value rows, so every output mode and dot command prints the same
 * bytes whichever backend ran the SQL.
 */
#ifndef SINEW_NODE_SHELL_BACKEND_H
#define SINEW_NODE_SHELL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "shell_output.h"

/* Bytes of the message shell_backend_open() writes, with its NUL. */
#define SHELL_BACKEND_ERROR_SIZE 1024

/* Where a backend puts a result set. Each call returns 0 or an error code
 * (COMMON_E*), which stops the statement and becomes run's result. */
struct shell_sink {
    void *ctx; /* passed back, untouched */
    /* A result set of column_count > 0 columns named names[i] (borrowed
     * for the call) starts. Statements without columns never call it. */
    int (*begin)(void *ctx, int column_count, const char *const *names);
    /* One row of column_count values, borrowed for the call. */
    int (*row)(void *ctx, const struct shell_value *values);
    /* The result set ended; called once after every begin that returned
     * 0, also when the rows ended in an error. */
    int (*end)(void *ctx);
};

struct shell_backend_ops {
    /* Runs the statements in size bytes of sql (borrowed), normally one,
     * stopping at the first error; arg, when not NULL, is text bound to
     * ?1 (borrowed). Returns 0 or an error code for error_text(). */
    int (*run)(void *state, const char *sql, size_t size, const char *arg,
               const struct shell_sink *sink);
    /* The message of run's last failure rc (never NULL), valid until the
     * next run. */
    const char *(*error_text)(void *state, int rc);
    /* True when rc means that no later statement can succeed either (the
     * node refused the token): the shell prints error_text as is and
     * stops. */
    bool (*is_fatal)(void *state, int rc);
    void (*close)(void *state);
};

struct shell_backend {
    const struct shell_backend_ops *ops;
    void *state; /* owned: freed by ops->close */
};

/* Opens target (borrowed): NULL for an in-memory database, an http://
 * URL for a node, anything else a database file. token_file (borrowed,
 * may be NULL) is --auth-token-file; without it a remote backend reads
 * $SINEW_AUTH_TOKEN. On failure returns an error code and writes the
 * whole line to print (without its newline) to error. */
int shell_backend_open(const char *target, const char *token_file,
                       struct shell_backend *backend, char *error,
                       size_t error_size);

/* Closes backend (opened or zeroed). */
void shell_backend_close(struct shell_backend *backend);

/* The remote backend (shell_backend_remote.c), for shell_backend_open():
 * url and token (NULL: none) are borrowed. */
int shell_backend_open_remote(const char *url, const char *token,
                              struct shell_backend *backend, char *error,
                              size_t error_size);

#endif /* SINEW_NODE_SHELL_BACKEND_H */
