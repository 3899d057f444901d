/* SPDX-License-Identifier: MIT
 *
 * transfer_engine.c: the sinew engine end of import and export
 * (transfer_int.h), over engine.h. The engine's API follows sqlite3's, so
 * this is the twin of transfer_sqlite.c, with the same two rules: a NULL
 * pointer binds NULL (an empty text or blob is bound from ""), and
 * engine_column_blob() is NULL for an empty blob.
 */
#include <limits.h>
#include <stdio.h>

#include "engine.h"
#include "transfer_int.h"

const char *const transfer_engine_suffixes[] = {"-wal", "-tmp", NULL};

static int engine_end_exec(struct transfer_end *end, const char *sql)
{
    return engine_exec(end->db, sql, NULL, NULL);
}

static int engine_end_prepare(struct transfer_end *end, const char *sql,
                              void **out)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_prepare(end->db, sql, -1, &stmt, NULL);
    *out = stmt;
    return rc;
}

static int engine_end_step(void *stmt)
{
    return engine_step(stmt);
}

static int engine_end_reset(void *stmt)
{
    return engine_reset(stmt);
}

static int engine_end_column_count(void *stmt)
{
    return engine_column_count(stmt);
}

static const char *engine_end_column_name(void *stmt, int column)
{
    return engine_column_name(stmt, column);
}

static int engine_end_column(void *stmt, int column, struct transfer_value *out)
{
    out->type = engine_column_type(stmt, column);
    out->integer = 0;
    out->real = 0.0;
    out->bytes = NULL;
    out->size = 0;
    switch (out->type) {
    case ENGINE_INTEGER:
        out->integer = engine_column_int64(stmt, column);
        return 0;
    case ENGINE_FLOAT:
        out->real = engine_column_double(stmt, column);
        return 0;
    case ENGINE_TEXT:
        out->bytes = engine_column_text(stmt, column);
        break;
    case ENGINE_BLOB:
        out->bytes = engine_column_blob(stmt, column);
        break;
    default:
        out->type = TRANSFER_NULL;
        return 0;
    }
    out->size = (size_t)engine_column_bytes(stmt, column);
    if (out->bytes == NULL && out->size > 0) {
        return COMMON_ENOMEM;
    }
    if (out->bytes == NULL) {
        out->bytes = "";
    }
    return 0;
}

static int engine_end_bind(void *stmt, int index,
                           const struct transfer_value *v)
{
    if ((v->type == TRANSFER_TEXT || v->type == TRANSFER_BLOB) &&
        v->size > INT_MAX) {
        return COMMON_ETOOBIG;
    }
    switch (v->type) {
    case TRANSFER_INTEGER:
        return engine_bind_int64(stmt, index, v->integer);
    case TRANSFER_FLOAT:
        return engine_bind_double(stmt, index, v->real);
    case TRANSFER_TEXT:
        return engine_bind_text(stmt, index, v->bytes, (int)v->size);
    case TRANSFER_BLOB:
        return engine_bind_blob(stmt, index, v->bytes, (int)v->size);
    default:
        return engine_bind_null(stmt, index);
    }
}

static void engine_end_finalize(void *stmt)
{
    engine_finalize(stmt);
}

static const char *engine_end_errmsg(const struct transfer_end *end, int rc)
{
    if (rc == engine_errcode(end->db) && rc != 0) {
        return engine_errmsg(end->db);
    }
    return engine_strerror(rc);
}

static void engine_end_close(struct transfer_end *end)
{
    engine_close(end->db);
    end->db = NULL;
}

static const struct transfer_end_ops engine_end_ops = {
    .exec = engine_end_exec,
    .prepare = engine_end_prepare,
    .step = engine_end_step,
    .reset = engine_end_reset,
    .column_count = engine_end_column_count,
    .column_name = engine_end_column_name,
    .column = engine_end_column,
    .bind = engine_end_bind,
    .finalize = engine_end_finalize,
    .errmsg = engine_end_errmsg,
    .close = engine_end_close,
};

int transfer_engine_open(const char *path, struct transfer_end *out,
                         char *error, size_t error_size)
{
    struct engine_db *db = NULL;
    int rc = engine_open(path, &db);
    if (rc != 0) {
        return transfer_fail(error, error_size, rc, "%s: %s", path,
                             engine_strerror(rc));
    }
    out->ops = &engine_end_ops;
    out->db = db;
    return 0;
}
