/* SPDX-License-Identifier: MIT
 *
 * shell_backend_remote.c: the shell's remote backend. Each piece of SQL
 * the shell splits off goes to the node as one Hrana "execute" on the
 * session's stream (remote.h), so BEGIN, INSERT and COMMIT typed as three
 * statements share one transaction on the node. The result's columns and
 * rows become struct shell_value, rendered as the engine renders them
 * locally (integers in decimal, REALs by engine_real_to_text(), blobs as
 * their bytes), so every output mode prints the same bytes as on a file.
 */
#include "shell_backend.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "remote.h"

struct shell_remote {
    struct remote_session *session;
    char error[REMOTE_ERROR_SIZE]; /* the last failure's message */
};

static int remote_fail(struct shell_remote *remote, int rc, const char *text)
{
    snprintf(remote->error, sizeof(remote->error), "%s", text);
    return rc;
}

/* True when sql holds nothing a server could run: white space, ';' and
 * comments (the shell hands over a trailing comment as its own piece; the
 * engine would prepare it to no statement). */
static bool is_empty_sql(const char *sql, size_t size)
{
    size_t i = 0;
    while (i < size) {
        if (strchr(" \t\n\r\f\v;", sql[i]) != NULL && sql[i] != '\0') {
            i++;
        } else if (i + 1 < size && sql[i] == '-' && sql[i + 1] == '-') {
            while (i < size && sql[i] != '\n') {
                i++;
            }
        } else if (i + 1 < size && sql[i] == '/' && sql[i + 1] == '*') {
            i += 2;
            while (i + 1 < size && !(sql[i] == '*' && sql[i + 1] == '/')) {
                i++;
            }
            i = i + 1 < size ? i + 2 : size;
        } else {
            return false;
        }
    }
    return true;
}

/* Decodes one row (a JSON array of count values) and hands it to sink. */
static int deliver_row(struct shell_remote *remote, const json_t *row,
                       int count, struct remote_value *decoded,
                       struct shell_value *values,
                       const struct shell_sink *sink)
{
    if (!json_is_array(row) || json_array_size(row) != (size_t)count) {
        return remote_fail(remote, NODE_EPROTO,
                           "malformed row in the server's answer");
    }
    int rc = 0;
    int done = 0;
    for (; rc == 0 && done < count; done++) {
        rc = remote_value_decode(json_array_get(row, (size_t)done),
                                 &decoded[done], remote->error,
                                 sizeof(remote->error));
        values[done] = decoded[done].value;
    }
    if (rc == 0) {
        rc = sink->row(sink->ctx, values);
        if (rc != 0) {
            remote_fail(remote, rc, common_strerror(rc));
        }
    }
    for (int i = 0; i < done; i++) {
        remote_value_release(&decoded[i]);
    }
    return rc;
}

static int deliver_rows(struct shell_remote *remote, const json_t *rows,
                        int count, const struct shell_sink *sink)
{
    struct remote_value *decoded =
        common_calloc((size_t)count, sizeof(*decoded));
    struct shell_value *values = common_calloc((size_t)count, sizeof(*values));
    int rc = decoded != NULL && values != NULL
                 ? 0
                 : remote_fail(remote, COMMON_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < json_array_size(rows); i++) {
        rc = deliver_row(remote, json_array_get(rows, i), count, decoded,
                         values, sink);
    }
    common_free(values);
    common_free(decoded);
    return rc;
}

/* Hands a StmtResult ({"cols": [...], "rows": [...]}) to sink. */
static int deliver(struct shell_remote *remote, const json_t *result,
                   const struct shell_sink *sink)
{
    const json_t *cols = json_object_get(result, "cols");
    size_t count = json_array_size(cols);
    if (count == 0) {
        return 0;
    }
    if (count > INT32_MAX / 2) {
        return remote_fail(remote, NODE_EPROTO, "too many columns");
    }
    const char **names = common_calloc(count, sizeof(*names));
    if (names == NULL) {
        return remote_fail(remote, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < count; i++) {
        const char *name =
            json_string_value(json_object_get(json_array_get(cols, i), "name"));
        names[i] = name != NULL ? name : "";
    }
    int rc = sink->begin(sink->ctx, (int)count, names);
    if (rc != 0) {
        remote_fail(remote, rc, common_strerror(rc));
    } else {
        rc = deliver_rows(remote, json_object_get(result, "rows"), (int)count,
                          sink);
        int end_rc = sink->end(sink->ctx);
        if (rc == 0 && end_rc != 0) {
            rc = remote_fail(remote, end_rc, common_strerror(end_rc));
        }
    }
    common_free(names);
    return rc;
}

static int remote_run(void *state, const char *sql, size_t size,
                      const char *arg, const struct shell_sink *sink)
{
    struct shell_remote *remote = state;
    if (is_empty_sql(sql, size)) {
        return 0;
    }
    json_t *result = NULL;
    int rc = remote_session_execute(remote->session, sql, size,
                                    arg != NULL ? &arg : NULL,
                                    arg != NULL ? 1 : 0, &result);
    if (rc != 0) {
        remote_fail(remote, rc, remote_session_error(remote->session));
    } else {
        rc = deliver(remote, result, sink);
    }
    json_decref(result);
    return rc;
}

static const char *remote_error_text(void *state, int rc)
{
    struct shell_remote *remote = state;
    (void)rc;
    return remote->error;
}

static bool remote_is_fatal(void *state, int rc)
{
    (void)state;
    return rc == NODE_EAUTH;
}

static void remote_close(void *state)
{
    struct shell_remote *remote = state;
    remote_session_close(remote->session);
    common_free(remote);
}

static const struct shell_backend_ops remote_ops = {
    .run = remote_run,
    .error_text = remote_error_text,
    .is_fatal = remote_is_fatal,
    .close = remote_close,
};

int shell_backend_open_remote(const char *url, const char *token,
                              struct shell_backend *backend, char *error,
                              size_t error_size)
{
    struct shell_remote *remote = common_calloc(1, sizeof(*remote));
    if (remote == NULL) {
        snprintf(error, error_size, "Error: out of memory");
        return COMMON_ENOMEM;
    }
    char reason[REMOTE_ERROR_SIZE];
    int rc = remote_session_open(url, token, &remote->session, reason,
                                 sizeof(reason));
    if (rc == NODE_EAUTH) {
        snprintf(error, error_size, "%s", REMOTE_NOT_AUTHORIZED_TEXT);
    } else if (rc != 0) {
        snprintf(error, error_size, "Error: unable to open database \"%s\": %s",
                 url, reason);
    }
    if (rc != 0) {
        common_free(remote);
        return rc;
    }
    backend->ops = &remote_ops;
    backend->state = remote;
    return 0;
}
