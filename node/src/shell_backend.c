/* SPDX-License-Identifier: MIT
 *
 * shell_backend.c: the shell's local backend, the engine (engine.h), and
 * shell_backend_open(), which picks a backend from the shell's argument.
 * A piece of SQL runs as the sqlite3 shell runs it: prepare, step every
 * row into the sink, go on at the statement's tail, stop at the first
 * error.
 */
#include "shell_backend.h"

#include <stdio.h>
#include <string.h>

#include "common.h"
#include "engine.h"
#include "remote.h"

STATIC_ASSERT(ENGINE_INTEGER == SHELL_VALUE_INTEGER, "storage classes");
STATIC_ASSERT(ENGINE_FLOAT == SHELL_VALUE_FLOAT, "storage classes");
STATIC_ASSERT(ENGINE_TEXT == SHELL_VALUE_TEXT, "storage classes");
STATIC_ASSERT(ENGINE_BLOB == SHELL_VALUE_BLOB, "storage classes");
STATIC_ASSERT(ENGINE_NULL == SHELL_VALUE_NULL, "storage classes");

static void read_row(struct engine_stmt *stmt, int count,
                     struct shell_value *values)
{
    for (int i = 0; i < count; i++) {
        struct shell_value *value = &values[i];
        value->type = engine_column_type(stmt, i);
        value->real =
            value->type == ENGINE_FLOAT ? engine_column_double(stmt, i) : 0.0;
        value->text = engine_column_text(stmt, i);
        value->size = (size_t)engine_column_bytes(stmt, i);
    }
}

/* Steps stmt to its end into sink; returns 0 or the first error. */
static int local_statement(struct engine_stmt *stmt,
                           const struct shell_sink *sink)
{
    int count = engine_column_count(stmt);
    int rc;
    if (count == 0) {
        while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        }
        return rc == ENGINE_DONE ? 0 : rc;
    }
    const char **names = common_calloc((size_t)count, sizeof(*names));
    struct shell_value *values = common_calloc((size_t)count, sizeof(*values));
    rc = names != NULL && values != NULL ? 0 : COMMON_ENOMEM;
    for (int i = 0; rc == 0 && i < count; i++) {
        names[i] = engine_column_name(stmt, i);
    }
    if (rc == 0) {
        rc = sink->begin(sink->ctx, count, names);
    }
    if (rc == 0) {
        while ((rc = engine_step(stmt)) == ENGINE_ROW) {
            read_row(stmt, count, values);
            int row_rc = sink->row(sink->ctx, values);
            if (row_rc != 0) {
                rc = row_rc;
                break;
            }
        }
        int end_rc = sink->end(sink->ctx);
        rc = rc == ENGINE_DONE ? end_rc : rc;
    }
    common_free(values);
    common_free(names);
    return rc;
}

static bool is_blank(const char *text, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (strchr(" \t\n\r\f\v", text[i]) == NULL || text[i] == '\0') {
            return false;
        }
    }
    return true;
}

/* The local backend's state: the database and a copy of the message of
 * the last failure, taken before the statement is finalized. */
struct shell_local {
    struct engine_db *db;
    char *error; /* owned; NULL until a failure */
};

static void keep_error(struct shell_local *local, int rc)
{
    const char *text = rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST
                           ? engine_errmsg(local->db)
                           : common_strerror(rc);
    size_t size = strlen(text) + 1;
    common_free(local->error);
    local->error = common_malloc(size);
    if (local->error != NULL) {
        memcpy(local->error, text, size);
    }
}

/* Runs the statements of one piece of text (normally one), walking the
 * engine's tail. An error ends the piece. */
static int local_run(void *state, const char *sql, size_t size, const char *arg,
                     const struct shell_sink *sink)
{
    struct shell_local *local = state;
    struct engine_db *db = local->db;
    const char *end = sql + size;
    while (sql < end && !is_blank(sql, (size_t)(end - sql))) {
        struct engine_stmt *stmt = NULL;
        const char *tail = end;
        int rc = engine_prepare(db, sql, (int)(end - sql), &stmt, &tail);
        if (rc == 0 && stmt != NULL && arg != NULL) {
            rc = engine_bind_text(stmt, 1, arg, -1);
        }
        if (rc == 0 && stmt != NULL) {
            rc = local_statement(stmt, sink);
        }
        if (rc != 0) {
            keep_error(local, rc);
        }
        engine_finalize(stmt);
        if (rc != 0) {
            return rc;
        }
        if (tail <= sql || tail > end) {
            return 0;
        }
        sql = tail;
    }
    return 0;
}

static const char *local_error_text(void *state, int rc)
{
    struct shell_local *local = state;
    return local->error != NULL ? local->error : common_strerror(rc);
}

static bool local_is_fatal(void *state, int rc)
{
    (void)state;
    (void)rc;
    return false;
}

static void local_close(void *state)
{
    struct shell_local *local = state;
    engine_close(local->db);
    common_free(local->error);
    common_free(local);
}

static const struct shell_backend_ops local_ops = {
    .run = local_run,
    .error_text = local_error_text,
    .is_fatal = local_is_fatal,
    .close = local_close,
};

static int open_remote(const char *url, const char *token_file,
                       struct shell_backend *backend, char *error,
                       size_t error_size)
{
    char reason[REMOTE_ERROR_SIZE];
    struct remote_url parsed;
    if (remote_url_parse(url, &parsed, reason, sizeof(reason)) != 0) {
        snprintf(error, error_size, "Error: %s", reason);
        return NODE_EINVAL;
    }
    char *token = NULL;
    int rc = remote_auth_token_load(token_file, &token, reason, sizeof(reason));
    if (rc != 0) {
        snprintf(error, error_size, "Error: %s", reason);
        return rc;
    }
    rc = shell_backend_open_remote(url, token, backend, error, error_size);
    common_free(token);
    return rc;
}

int shell_backend_open(const char *target, const char *token_file,
                       struct shell_backend *backend, char *error,
                       size_t error_size)
{
    memset(backend, 0, sizeof(*backend));
    if (target != NULL && remote_is_url(target)) {
        return open_remote(target, token_file, backend, error, error_size);
    }
    struct shell_local *local = common_calloc(1, sizeof(*local));
    if (local == NULL) {
        snprintf(error, error_size, "Error: out of memory");
        return COMMON_ENOMEM;
    }
    int rc = engine_open(target, &local->db);
    if (rc != 0) {
        common_free(local);
        snprintf(error, error_size, "Error: unable to open database \"%s\": %s",
                 target != NULL ? target : ":memory:", engine_strerror(rc));
        return rc;
    }
    backend->ops = &local_ops;
    backend->state = local;
    return 0;
}

void shell_backend_close(struct shell_backend *backend)
{
    if (backend->ops != NULL) {
        backend->ops->close(backend->state);
    }
    memset(backend, 0, sizeof(*backend));
}
