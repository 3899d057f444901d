/* SPDX-License-Identifier: MIT
 *
 * hrana_exec.c: running Hrana statements on an engine database
 * (HRANA_3_SPEC, "Statements", "Statement results"; the traps
 * @libsql/client sets are in docs/http.md): the SQL a Stmt names, its
 * arguments (positional, or named without their sigil), its rows as
 * Hrana values, the transaction rules (BEGIN TRANSACTION READONLY, the
 * node's group transaction), and sequences of statements.
 *
 * Functions return 0, NODE_EINVAL when the statement failed (the message
 * and code are in run->failure: the request's error result), or
 * COMMON_ENOMEM when this code could not allocate (the pipeline stops).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hrana_int.h"

int hrana_run_fail(struct hrana_run *run, const char *code, const char *format,
                   ...)
{
    va_list args;

    va_start(args, format);
    vsnprintf(run->failure.message, sizeof(run->failure.message), format, args);
    va_end(args);
    run->failure.code = code;
    return NODE_EINVAL;
}

/* A failure of the engine (rc): its message, and SQL_PARSE_ERROR for what
 * the parser refused at prepare, as sqld tells a statement it cannot parse
 * from one that failed. */
static int fail_engine(struct hrana_run *run, int rc, bool prepare)
{
    const char *message = engine_errcode(run->db) != 0 ? engine_errmsg(run->db)
                                                       : engine_strerror(rc);
    const char *code = hrana_error_code(rc);

    if (prepare && rc == ENGINE_ESQL &&
        (strstr(message, "syntax error") != NULL ||
         strstr(message, "incomplete input") != NULL ||
         strstr(message, "unrecognized token") != NULL)) {
        code = "SQL_PARSE_ERROR";
    }
    return hrana_run_fail(run, code, "%s", message);
}

/* Whether the client is inside a transaction: the handle's, or in group
 * mode the client's own BEGIN (the handle always is, in the node's). */
bool hrana_run_in_transaction(const struct hrana_run *run)
{
    return run->group ? run->stream->group_transaction
                      : engine_in_transaction(run->db);
}

/* ---- SQL text of a request ---- */

/* The text a stmt, sequence or describe names: "sql", or "sql_id" stored
 * on the stream; exactly one of them. */
int hrana_run_resolve_sql(struct hrana_run *run, const json_t *holder,
                          const char **sql, size_t *size)
{
    const json_t *text = json_object_get(holder, "sql");
    const json_t *id = json_object_get(holder, "sql_id");
    int64_t n;

    if (json_is_null(text)) {
        text = NULL;
    }
    if (json_is_null(id)) {
        id = NULL;
    }
    if ((text == NULL) == (id == NULL)) {
        return hrana_run_fail(
            run, "HRANA_PROTO_ERROR",
            "exactly one of \"sql\" and \"sql_id\" must be given");
    }
    if (text != NULL) {
        if (!json_is_string(text)) {
            return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                                  "\"sql\" is not a string");
        }
        *sql = json_string_value(text);
        *size = json_string_length(text);
        return 0;
    }
    if (!hrana_json_integer(id, INT32_MIN, INT32_MAX, &n)) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "\"sql_id\" is not a 32-bit integer");
    }
    const struct hrana_stored_sql *stored =
        hrana_stream_sql_find(run->stream, (int32_t)n);
    if (stored == NULL) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "no SQL text stored as %lld", (long long)n);
    }
    *sql = stored->sql;
    *size = stored->size;
    return 0;
}

/* The offset of the first statement at or after at: past white space,
 * comments and empty statements. */
size_t hrana_sql_first_statement(const char *sql, size_t size, size_t at)
{
    at = hrana_sql_skip_space(sql, size, at);
    while (at < size && sql[at] == ';') {
        at = hrana_sql_skip_space(sql, size, at + 1);
    }
    return at;
}

/* Prepares the statement at sql[at] (kind from the scanner) into *stmt,
 * *tail the offset past it. BEGIN TRANSACTION READONLY is libSQL's, not
 * SQLite's: it runs as BEGIN DEFERRED, and the run refuses writes until
 * the transaction ends. */
int hrana_run_prepare(struct hrana_run *run, const char *sql, size_t size,
                      size_t at, enum hrana_sql_kind kind,
                      struct engine_stmt **stmt, size_t *tail)
{
    const char *end = NULL;
    int rc;

    *stmt = NULL;
    if (size - at > (size_t)ENGINE_MAX_SQL_SIZE) {
        return hrana_run_fail(run, "SQLITE_TOOBIG", "SQL text is too long");
    }
    if (kind == HRANA_SQL_BEGIN_READONLY) {
        rc = engine_prepare(run->db, "BEGIN DEFERRED", -1, stmt, NULL);
        *tail = hrana_sql_statement_end(sql, size, at);
    } else {
        rc = engine_prepare(run->db, sql + at, (int)(size - at), stmt, &end);
        *tail = end != NULL ? (size_t)(end - sql) : size;
    }
    if (rc == COMMON_ENOMEM) {
        return rc;
    }
    if (rc != 0) {
        return fail_engine(run, rc, true);
    }
    if (*stmt == NULL) {
        return hrana_run_fail(run, "SQL_NO_STATEMENT",
                              "SQL text holds no statement");
    }
    return 0;
}

/* ---- arguments ---- */

static int bind_positional(struct hrana_run *run, struct engine_stmt *stmt,
                           const json_t *args)
{
    char message[256];
    size_t i;
    json_t *value;

    if (json_array_size(args) > (size_t)engine_bind_parameter_count(stmt)) {
        return hrana_run_fail(
            run, "ARGS_INVALID", "%zu arguments given for %d parameters",
            json_array_size(args), engine_bind_parameter_count(stmt));
    }
    json_array_foreach(args, i, value)
    {
        int rc =
            hrana_value_bind(stmt, (int)i + 1, value, message, sizeof(message));
        if (rc == NODE_EINVAL) {
            return hrana_run_fail(run, "ARGS_INVALID", "argument %zu: %s", i,
                                  message);
        }
        if (rc != 0) {
            return rc == COMMON_ENOMEM ? rc : fail_engine(run, rc, false);
        }
    }
    return 0;
}

/* The parameter index of name: as given when it has its sigil, else with
 * ':', '@' and '$' in turn (the spec: "the server will try to guess the
 * correct prefix"). 0 if the statement has no such parameter. */
static int named_index(struct engine_stmt *stmt, const char *name, size_t size,
                       char *buf)
{
    static const char sigils[] = ":@$";

    if (size > 0 && strchr(":@$?", name[0]) != NULL) {
        return engine_bind_parameter_index(stmt, name);
    }
    memcpy(buf + 1, name, size + 1);
    for (size_t i = 0; i < 3; i++) {
        buf[0] = sigils[i];
        int index = engine_bind_parameter_index(stmt, buf);
        if (index > 0) {
            return index;
        }
    }
    return 0;
}

static int bind_named(struct hrana_run *run, struct engine_stmt *stmt,
                      const json_t *named)
{
    char message[256];
    size_t i;
    json_t *arg;
    int rc = 0;

    json_array_foreach(named, i, arg)
    {
        const json_t *name = json_object_get(arg, "name");
        if (!json_is_string(name) || json_object_get(arg, "value") == NULL) {
            return hrana_run_fail(run, "ARGS_INVALID",
                                  "named argument %zu has no name or value", i);
        }
        size_t size = json_string_length(name);
        char *buf = common_malloc(size + 2);
        if (buf == NULL) {
            return COMMON_ENOMEM;
        }
        int index = named_index(stmt, json_string_value(name), size, buf);
        common_free(buf);
        /* A name the statement lacks is ignored, as sqld ignores it. */
        if (index == 0) {
            continue;
        }
        rc = hrana_value_bind(stmt, index, json_object_get(arg, "value"),
                              message, sizeof(message));
        if (rc == NODE_EINVAL) {
            return hrana_run_fail(run, "ARGS_INVALID", "argument %s: %s",
                                  json_string_value(name), message);
        }
        if (rc != 0) {
            return rc == COMMON_ENOMEM ? rc : fail_engine(run, rc, false);
        }
    }
    return 0;
}

/* ---- one statement ---- */

struct stmt_args {
    const json_t *args;  /* array or NULL */
    const json_t *named; /* array or NULL */
    bool want_rows;
};

static json_t *stmt_result(json_t *cols, json_t *rows, int64_t affected,
                           const char *last_insert_rowid)
{
    /* last_insert_rowid is a string (or null): the client refuses a
     * number. affected_row_count is a number. */
    return json_pack("{s:o,s:o,s:I,s:s?}", "cols", cols, "rows", rows,
                     "affected_row_count", (json_int_t)affected,
                     "last_insert_rowid", last_insert_rowid);
}

/* BEGIN, COMMIT/END and ROLLBACK in group mode: the node's transaction is
 * already open, so they only track the client's. */
static int run_virtual(struct hrana_run *run, enum hrana_sql_kind kind,
                       json_t **result)
{
    struct hrana_stream *stream = run->stream;

    if (kind == HRANA_SQL_COMMIT || kind == HRANA_SQL_ROLLBACK) {
        if (!stream->group_transaction) {
            return hrana_run_fail(
                run, "SQLITE_ERROR", "cannot %s - no transaction is active",
                kind == HRANA_SQL_COMMIT ? "commit" : "rollback");
        }
        stream->group_transaction = false;
        stream->readonly_transaction = false;
        if (kind == HRANA_SQL_ROLLBACK) {
            run->out->rollback_requested = true;
        }
    } else {
        if (stream->group_transaction) {
            return hrana_run_fail(
                run, "SQLITE_ERROR",
                "cannot start a transaction within a transaction");
        }
        stream->group_transaction = true;
        stream->readonly_transaction = kind == HRANA_SQL_BEGIN_READONLY;
    }
    if (result != NULL) {
        *result = stmt_result(json_array(), json_array(), 0, NULL);
        return *result != NULL ? 0 : COMMON_ENOMEM;
    }
    return 0;
}

static bool is_transaction_control(enum hrana_sql_kind kind)
{
    return kind == HRANA_SQL_BEGIN || kind == HRANA_SQL_BEGIN_READONLY ||
           kind == HRANA_SQL_BEGIN_WRITE || kind == HRANA_SQL_COMMIT ||
           kind == HRANA_SQL_ROLLBACK;
}

json_t *hrana_columns(struct engine_stmt *stmt)
{
    json_t *cols = json_array();

    for (int i = 0; cols != NULL && i < engine_column_count(stmt); i++) {
        const char *name = engine_column_name(stmt, i);
        /* The engine has no declared types to report: decltype is null. */
        json_t *col =
            json_pack("{s:o,s:n}", "name", hrana_json_text(name, strlen(name)),
                      "decltype");
        if (json_array_append_new(cols, col) != 0) {
            json_decref(cols);
            cols = NULL;
        }
    }
    return cols;
}

static int read_row(struct hrana_run *run, struct engine_stmt *stmt,
                    json_t *rows)
{
    char message[256];
    json_t *row = json_array();

    if (row == NULL || json_array_append_new(rows, row) != 0) {
        return COMMON_ENOMEM;
    }
    for (int i = 0; i < engine_column_count(stmt); i++) {
        json_t *value;
        int rc = hrana_value_column(stmt, i, &value, &run->response_bytes,
                                    message, sizeof(message));
        if (rc == NODE_EINVAL) {
            return hrana_run_fail(run, "SQLITE_ERROR", "%s", message);
        }
        if (rc != 0 || json_array_append_new(row, value) != 0) {
            return COMMON_ENOMEM;
        }
    }
    if (run->response_bytes > run->response_bytes_max) {
        return hrana_run_fail(run, "RESPONSE_TOO_LARGE",
                              "the response would be larger than %zu bytes",
                              run->response_bytes_max);
    }
    return 0;
}

/* Steps stmt to its end, collecting rows into *result when result is not
 * NULL. */
static int step_all(struct hrana_run *run, struct engine_stmt *stmt,
                    const struct stmt_args *args, json_t **result)
{
    json_t *cols = result != NULL ? hrana_columns(stmt) : NULL;
    json_t *rows = result != NULL ? json_array() : NULL;
    int64_t total = engine_total_changes(run->db);
    uint64_t schema = engine_schema_version(run->db);
    char rowid[24];
    int rc;

    if (result != NULL && (cols == NULL || rows == NULL)) {
        rc = COMMON_ENOMEM;
        goto out;
    }
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        if (rows != NULL && args->want_rows &&
            (rc = read_row(run, stmt, rows)) != 0) {
            goto out;
        }
    }
    if (rc != ENGINE_DONE) {
        rc = fail_engine(run, rc, false);
        goto out;
    }
    rc = 0;
    bool changed = engine_total_changes(run->db) != total;
    if (changed || engine_schema_version(run->db) != schema) {
        run->out->wrote = true;
    }
    if (result != NULL) {
        bool readonly = engine_stmt_readonly(stmt);
        snprintf(rowid, sizeof(rowid), "%lld",
                 (long long)engine_last_insert_rowid(run->db));
        *result = stmt_result(cols, rows, changed ? engine_changes(run->db) : 0,
                              readonly ? NULL : rowid);
        cols = rows = NULL;
        rc = *result != NULL ? 0 : COMMON_ENOMEM;
    }
out:
    json_decref(cols);
    json_decref(rows);
    return rc;
}

static int bind_args(struct hrana_run *run, struct engine_stmt *stmt,
                     const struct stmt_args *args)
{
    if (json_array_size(args->args) > 0) {
        return bind_positional(run, stmt, args->args);
    }
    return bind_named(run, stmt, args->named);
}

/* Runs a prepared statement (owned: finalized here). */
static int run_prepared(struct hrana_run *run, struct engine_stmt *stmt,
                        enum hrana_sql_kind kind, const struct stmt_args *args,
                        json_t **result)
{
    int rc;

    if (run->group && is_transaction_control(kind)) {
        engine_finalize(stmt);
        return run_virtual(run, kind, result);
    }
    /* libSQL refuses writes in a READONLY transaction with SQLITE_READONLY;
     * the engine knows no such transaction, so the check is here. */
    if (run->stream->readonly_transaction && hrana_run_in_transaction(run) &&
        !engine_stmt_readonly(stmt) && !is_transaction_control(kind) &&
        kind != HRANA_SQL_SAVEPOINT) {
        engine_finalize(stmt);
        return hrana_run_fail(
            run, "SQLITE_READONLY",
            "attempt to write a readonly database (the transaction "
            "began READONLY)");
    }
    /* The node reads on handles that must never take the write lock: a
     * write there would hold off the writing handle (and, replicated,
     * bypass capture). Only a transaction begun as a read gets here. */
    if (run->read_handle && !engine_stmt_readonly(stmt) &&
        !is_transaction_control(kind) && kind != HRANA_SQL_SAVEPOINT) {
        engine_finalize(stmt);
        return hrana_run_fail(
            run, "SQLITE_BUSY",
            "this transaction began as a read and cannot write: begin "
            "transactions that write with BEGIN IMMEDIATE (or write "
            "first)");
    }
    rc = bind_args(run, stmt, args);
    if (rc == 0) {
        rc = step_all(run, stmt, args, result);
    }
    engine_finalize(stmt);
    if (rc == 0 && kind == HRANA_SQL_BEGIN_READONLY) {
        run->stream->readonly_transaction = true;
    }
    if (!run->group && !engine_in_transaction(run->db)) {
        run->stream->readonly_transaction = false;
    }
    return rc;
}

static int stmt_args_parse(struct hrana_run *run, const json_t *stmt,
                           struct stmt_args *out)
{
    const json_t *want_rows = json_object_get(stmt, "want_rows");

    out->args = json_object_get(stmt, "args");
    out->named = json_object_get(stmt, "named_args");
    out->want_rows = true;
    if (!json_is_object(stmt)) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "\"stmt\" is not an object");
    }
    if ((out->args != NULL && !json_is_null(out->args) &&
         !json_is_array(out->args)) ||
        (out->named != NULL && !json_is_null(out->named) &&
         !json_is_array(out->named))) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "\"args\" or \"named_args\" is not an array");
    }
    if (json_array_size(out->args) > 0 && json_array_size(out->named) > 0) {
        return hrana_run_fail(run, "ARGS_BOTH_POSITIONAL_AND_NAMED",
                              "positional and named arguments cannot be mixed");
    }
    if (want_rows != NULL && !json_is_null(want_rows)) {
        if (!json_is_boolean(want_rows)) {
            return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                                  "\"want_rows\" is not a boolean");
        }
        out->want_rows = json_is_true(want_rows);
    }
    return 0;
}

/* Runs a Stmt (HRANA_3_SPEC, "Statements"): one statement, no more. */
int hrana_run_stmt(struct hrana_run *run, const json_t *stmt_json,
                   json_t **result)
{
    struct stmt_args args;
    struct engine_stmt *stmt;
    const char *sql;
    size_t size;
    size_t at;
    size_t tail;
    int rc;

    if ((rc = stmt_args_parse(run, stmt_json, &args)) != 0 ||
        (rc = hrana_run_resolve_sql(run, stmt_json, &sql, &size)) != 0) {
        return rc;
    }
    at = hrana_sql_first_statement(sql, size, 0);
    if (at == size) {
        return hrana_run_fail(run, "SQL_NO_STATEMENT",
                              "SQL text holds no statement");
    }
    enum hrana_sql_kind kind = hrana_sql_classify(sql, size, at);
    if ((rc = hrana_run_prepare(run, sql, size, at, kind, &stmt, &tail)) != 0) {
        return rc;
    }
    if (!hrana_sql_is_blank(sql, size, tail)) {
        engine_finalize(stmt);
        return hrana_run_fail(
            run, "SQL_MANY_STATEMENTS",
            "SQL text holds more than one statement (use a sequence "
            "or a batch)");
    }
    return run_prepared(run, stmt, kind, &args, result);
}

int hrana_run_sequence(struct hrana_run *run, const json_t *request)
{
    const struct stmt_args args = {NULL, NULL, false};
    struct engine_stmt *stmt;
    const char *sql;
    size_t size;
    size_t at = 0;
    int rc = hrana_run_resolve_sql(run, request, &sql, &size);

    while (rc == 0 && (at = hrana_sql_first_statement(sql, size, at)) < size) {
        enum hrana_sql_kind kind = hrana_sql_classify(sql, size, at);
        rc = hrana_run_prepare(run, sql, size, at, kind, &stmt, &at);
        if (rc == 0) {
            rc = run_prepared(run, stmt, kind, &args, NULL);
        }
    }
    return rc;
}
