/* SPDX-License-Identifier: MIT
 *
 * stmt_data.c: what goes into and comes out of a statement: parameter
 * binding, result columns with sqlite3_column_*()'s conversions, and
 * engine_exec().
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"

/* ---- binding ---- */

int engine_bind_parameter_count(const struct engine_stmt *stmt)
{
    return stmt->parameter_count;
}

int engine_bind_parameter_index(const struct engine_stmt *stmt,
                                const char *name)
{
    for (int i = 1; i <= stmt->parameter_count; i++) {
        const char *own = stmt->ast->parameter_names[i];

        if (own != NULL && strcmp(own, name) == 0) {
            return i;
        }
    }
    return 0;
}

static int bind_value(struct engine_stmt *stmt, int index,
                      struct engine_value v)
{
    struct engine_value *slot;

    if (index < 1 || index > stmt->parameter_count) {
        return engine__db_error(stmt->db, ENGINE_ERANGE,
                                "column index out of range");
    }
    if (stmt->state == ENGINE__STMT_RUNNING) {
        return engine__db_error(stmt->db, ENGINE_EMISUSE,
                                "bad parameter or other API misuse");
    }
    if (v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) {
        void *copy = common_malloc(v.u.s.size + 1);

        if (copy == NULL) {
            return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
        }
        if (v.u.s.size > 0) {
            memcpy(copy, v.u.s.bytes, v.u.s.size);
        }
        v.u.s.bytes = copy;
    }
    slot = &stmt->parameters[index];
    if (slot->type == ENGINE_TEXT || slot->type == ENGINE_BLOB) {
        common_free((void *)slot->u.s.bytes);
    }
    *slot = v;
    return 0;
}

int engine_bind_null(struct engine_stmt *stmt, int index)
{
    return bind_value(stmt, index, engine__value_null());
}

int engine_bind_int64(struct engine_stmt *stmt, int index, int64_t value)
{
    return bind_value(stmt, index, engine__value_int(value));
}

int engine_bind_double(struct engine_stmt *stmt, int index, double value)
{
    /* SQLite stores NaN as NULL. */
    if (value != value) {
        return bind_value(stmt, index, engine__value_null());
    }
    return bind_value(stmt, index, engine__value_real(value));
}

static int bind_bytes(struct engine_stmt *stmt, int index, const void *bytes,
                      int size, int type)
{
    size_t length;

    if (bytes == NULL) {
        return bind_value(stmt, index, engine__value_null());
    }
    length = size < 0 ? strlen(bytes) : (size_t)size;
    if (length > ENGINE_MAX_LENGTH) {
        return engine__db_error(stmt->db, ENGINE_ETOOBIG,
                                "string or blob too big");
    }
    return bind_value(stmt, index,
                      type == ENGINE_TEXT ? engine__value_text(bytes, length)
                                          : engine__value_blob(bytes, length));
}

int engine_bind_text(struct engine_stmt *stmt, int index, const char *text,
                     int size)
{
    return bind_bytes(stmt, index, text, size, ENGINE_TEXT);
}

int engine_bind_blob(struct engine_stmt *stmt, int index, const void *bytes,
                     int size)
{
    return bind_bytes(stmt, index, bytes, size, ENGINE_BLOB);
}

int engine_clear_bindings(struct engine_stmt *stmt)
{
    for (int i = 1; i <= stmt->parameter_count; i++) {
        int rc = engine_bind_null(stmt, i);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- columns ---- */

int engine_column_count(const struct engine_stmt *stmt)
{
    return stmt->column_count;
}

const char *engine_column_name(const struct engine_stmt *stmt, int column)
{
    if (column < 0 || column >= stmt->column_count) {
        return NULL;
    }
    return stmt->column_names[column];
}

struct engine_value engine__stmt_value(const struct engine_stmt *stmt,
                                       int column)
{
    if (column < 0 || column >= stmt->column_count) {
        return engine__value_null();
    }
    if (stmt->current != NULL) {
        return stmt->current[column];
    }
    if (stmt->batch == NULL) {
        return engine__value_null();
    }
    return engine__vector_get(&stmt->batch->columns[column], stmt->row);
}

int engine_column_type(struct engine_stmt *stmt, int column)
{
    return engine__stmt_value(stmt, column).type;
}

int64_t engine_column_int64(struct engine_stmt *stmt, int column)
{
    struct engine_value v = engine__stmt_value(stmt, column);

    return engine__value_to_int(&v);
}

double engine_column_double(struct engine_stmt *stmt, int column)
{
    struct engine_value v = engine__stmt_value(stmt, column);

    return engine__value_to_real(&v);
}

/* The value's text (or blob bytes) with a terminating NUL, in the column
 * arena; NULL for SQL NULL. */
static const char *column_bytes(struct engine_stmt *stmt, int column,
                                size_t *size)
{
    struct engine_value v = engine__stmt_value(stmt, column);
    struct engine_value text = v;

    *size = 0;
    if (v.type == ENGINE_NULL) {
        return NULL;
    }
    if (v.type != ENGINE_BLOB &&
        engine__value_to_text(&v, &stmt->column_arena, &text) != 0) {
        return NULL;
    }
    *size = text.u.s.size;
    return engine__arena_strndup(&stmt->column_arena,
                                 (const char *)text.u.s.bytes, text.u.s.size);
}

const char *engine_column_text(struct engine_stmt *stmt, int column)
{
    size_t size;

    return column_bytes(stmt, column, &size);
}

const void *engine_column_blob(struct engine_stmt *stmt, int column)
{
    size_t size;
    const char *bytes = column_bytes(stmt, column, &size);

    return size == 0 ? NULL : bytes;
}

int engine_column_bytes(struct engine_stmt *stmt, int column)
{
    size_t size;

    column_bytes(stmt, column, &size);
    return (int)size;
}

/* ---- exec ---- */

static int exec_row(struct engine_stmt *stmt, engine_exec_cb callback,
                    void *ctx)
{
    int count = engine_column_count(stmt);
    char **values = engine__arena_alloc(
        &stmt->column_arena, (size_t)(2 * count + 1) * sizeof(char *));
    char **names;

    if (values == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    names = values + count;
    for (int i = 0; i < count; i++) {
        values[i] = (char *)engine_column_text(stmt, i);
        names[i] = (char *)engine_column_name(stmt, i);
    }
    if (callback(ctx, count, values, names) != 0) {
        return engine__db_error(stmt->db, ENGINE_EABORT, "query aborted");
    }
    return 0;
}

static int exec_one(struct engine_stmt *stmt, engine_exec_cb callback,
                    void *ctx)
{
    int rc;

    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        if (callback != NULL && (rc = exec_row(stmt, callback, ctx)) != 0) {
            return rc;
        }
    }
    return rc == ENGINE_DONE ? 0 : rc;
}

int engine_exec(struct engine_db *db, const char *sql, engine_exec_cb callback,
                void *ctx)
{
    const char *rest = sql;

    ASSERT(db != NULL && sql != NULL);
    while (*rest != '\0') {
        struct engine_stmt *stmt;
        const char *tail;
        int rc = engine_prepare(db, rest, -1, &stmt, &tail);

        if (rc != 0) {
            return rc;
        }
        if (stmt != NULL) {
            rc = exec_one(stmt, callback, ctx);
            engine_finalize(stmt);
            if (rc != 0) {
                return rc;
            }
        }
        if (tail == rest) {
            break;
        }
        rest = tail;
    }
    return 0;
}
