/* SPDX-License-Identifier: MIT
 *
 * transfer_sqlite.c: the C SQLite end of import and export
 * (transfer_int.h), over libsqlite3.
 *
 * Values are read with sqlite3_column_type() and the getter of that type,
 * and bound with the binder of their own type, so no value changes its
 * storage class on the way. Two sqlite3 rules shape the code: a NULL
 * pointer binds NULL (an empty blob is bound with sqlite3_bind_zeroblob()
 * instead), and sqlite3_column_bytes() must follow the _text/_blob call
 * ("Result Values From A Query", sqlite.org/c3ref/column_blob.html).
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>

#include "node.h"
#include "transfer_int.h"

/* How long the source waits for another process's write lock (sqlite3's
 * busy handler) before the read fails with "database is locked". */
#define TRANSFER_SQLITE_BUSY_TIMEOUT_MS 5000

const char *const transfer_sqlite_suffixes[] = {"-wal", "-shm", "-journal",
                                                NULL};

/* Every SQLite failure becomes NODE_EIO; its text comes from errmsg(). */
static int sqlite_rc(int rc)
{
    if (rc == SQLITE_ROW) {
        return TRANSFER_ROW;
    }
    if (rc == SQLITE_DONE) {
        return TRANSFER_DONE;
    }
    if (rc == SQLITE_OK) {
        return 0;
    }
    return rc == SQLITE_NOMEM ? COMMON_ENOMEM : NODE_EIO;
}

static int sqlite_exec(struct transfer_end *end, const char *sql)
{
    return sqlite_rc(sqlite3_exec(end->db, sql, NULL, NULL, NULL));
}

static int sqlite_prepare(struct transfer_end *end, const char *sql, void **out)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(end->db, sql, -1, &stmt, NULL);
    *out = stmt;
    return sqlite_rc(rc);
}

static int sqlite_step(void *stmt)
{
    return sqlite_rc(sqlite3_step(stmt));
}

static int sqlite_reset(void *stmt)
{
    return sqlite_rc(sqlite3_reset(stmt));
}

static int sqlite_column_count(void *stmt)
{
    return sqlite3_column_count(stmt);
}

static const char *sqlite_column_name(void *stmt, int column)
{
    return sqlite3_column_name(stmt, column);
}

static int sqlite_column(void *stmt, int column, struct transfer_value *out)
{
    out->type = sqlite3_column_type(stmt, column);
    out->integer = 0;
    out->real = 0.0;
    out->bytes = NULL;
    out->size = 0;
    switch (out->type) {
    case SQLITE_INTEGER:
        out->integer = sqlite3_column_int64(stmt, column);
        return 0;
    case SQLITE_FLOAT:
        out->real = sqlite3_column_double(stmt, column);
        return 0;
    case SQLITE_TEXT:
        out->bytes = sqlite3_column_text(stmt, column);
        break;
    case SQLITE_BLOB:
        out->bytes = sqlite3_column_blob(stmt, column);
        break;
    default:
        out->type = TRANSFER_NULL;
        return 0;
    }
    out->size = (size_t)sqlite3_column_bytes(stmt, column);
    if (out->bytes == NULL && out->size > 0) {
        return COMMON_ENOMEM; /* the getter failed to convert or copy */
    }
    if (out->bytes == NULL) {
        out->bytes = "";
    }
    return 0;
}

static int sqlite_bind(void *stmt, int index, const struct transfer_value *v)
{
    if ((v->type == TRANSFER_TEXT || v->type == TRANSFER_BLOB) &&
        v->size > INT_MAX) {
        return COMMON_ETOOBIG;
    }
    int rc;
    switch (v->type) {
    case TRANSFER_INTEGER:
        rc = sqlite3_bind_int64(stmt, index, v->integer);
        break;
    case TRANSFER_FLOAT:
        rc = sqlite3_bind_double(stmt, index, v->real);
        break;
    case TRANSFER_TEXT:
        /* STATIC: the value outlives the step that reads it. */
        rc = sqlite3_bind_text(stmt, index, v->bytes, (int)v->size,
                               SQLITE_STATIC);
        break;
    case TRANSFER_BLOB:
        rc = v->size == 0 ? sqlite3_bind_zeroblob(stmt, index, 0)
                          : sqlite3_bind_blob(stmt, index, v->bytes,
                                              (int)v->size, SQLITE_STATIC);
        break;
    default:
        rc = sqlite3_bind_null(stmt, index);
        break;
    }
    return sqlite_rc(rc);
}

static void sqlite_finalize(void *stmt)
{
    sqlite3_finalize(stmt);
}

static const char *sqlite_errmsg(const struct transfer_end *end, int rc)
{
    if (rc == NODE_EIO) {
        return sqlite3_errmsg(end->db);
    }
    return common_strerror(rc);
}

static void sqlite_close(struct transfer_end *end)
{
    /* Every statement is finalized by then, so close cannot be refused. */
    sqlite3_close(end->db);
    end->db = NULL;
}

static const struct transfer_end_ops sqlite_ops = {
    .exec = sqlite_exec,
    .prepare = sqlite_prepare,
    .step = sqlite_step,
    .reset = sqlite_reset,
    .column_count = sqlite_column_count,
    .column_name = sqlite_column_name,
    .column = sqlite_column,
    .bind = sqlite_bind,
    .finalize = sqlite_finalize,
    .errmsg = sqlite_errmsg,
    .close = sqlite_close,
};

int transfer_sqlite_open(const char *path, bool is_writable,
                         struct transfer_end *out, char *error,
                         size_t error_size)
{
    sqlite3 *db = NULL;
    int flags = is_writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        transfer_fail(error, error_size, NODE_EIO, "%s: %s", path,
                      db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc == SQLITE_NOMEM ? COMMON_ENOMEM : NODE_EIO;
    }
    sqlite3_busy_timeout(db, TRANSFER_SQLITE_BUSY_TIMEOUT_MS);
    out->ops = &sqlite_ops;
    out->db = db;
    return 0;
}
