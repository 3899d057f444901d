/* SPDX-License-Identifier: MIT
 *
 * sqlite_value.h: moving struct engine_value in and out of libsqlite3, for
 * the tests that hold the engine's layers to the oracle (the value tests'
 * test_value_oracle.h and the function tests' func_oracle.h).
 */
#ifndef SINEW_ENGINE_SQLITE_VALUE_H
#define SINEW_ENGINE_SQLITE_VALUE_H

#include <sqlite3.h>

#include "common_test.h"
#include "value.h"

/* Binds v to parameter index (TEXT and BLOB bytes copied). */
static inline void oracle_bind(sqlite3_stmt *stmt, int index,
                               const struct engine_value *v)
{
    static const char empty[1] = {0};
    const void *bytes =
        v->u.s.bytes != NULL ? (const void *)v->u.s.bytes : (const void *)empty;
    int rc;

    switch (v->type) {
    case ENGINE_INTEGER:
        rc = sqlite3_bind_int64(stmt, index, v->u.i);
        break;
    case ENGINE_FLOAT:
        rc = sqlite3_bind_double(stmt, index, v->u.r);
        break;
    case ENGINE_TEXT:
        rc = sqlite3_bind_text(stmt, index, bytes, (int)v->u.s.size,
                               SQLITE_TRANSIENT);
        break;
    case ENGINE_BLOB:
        rc = sqlite3_bind_blob(stmt, index, bytes, (int)v->u.s.size,
                               SQLITE_TRANSIENT);
        break;
    default:
        rc = sqlite3_bind_null(stmt, index);
        break;
    }
    assert_int_equal(rc, SQLITE_OK);
}

/* Column column of the current row; TEXT and BLOB bytes are borrowed from
 * the statement until its next step or reset. */
static inline struct engine_value oracle_column(sqlite3_stmt *stmt, int column)
{
    switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_INTEGER:
        return engine__value_int(sqlite3_column_int64(stmt, column));
    case SQLITE_FLOAT:
        return engine__value_real(sqlite3_column_double(stmt, column));
    case SQLITE_TEXT: {
        const unsigned char *text = sqlite3_column_text(stmt, column);
        return engine__value_text(text,
                                  (size_t)sqlite3_column_bytes(stmt, column));
    }
    case SQLITE_BLOB: {
        const void *blob = sqlite3_column_blob(stmt, column);
        return engine__value_blob(blob,
                                  (size_t)sqlite3_column_bytes(stmt, column));
    }
    default:
        return engine__value_null();
    }
}

#endif /* SINEW_ENGINE_SQLITE_VALUE_H */
