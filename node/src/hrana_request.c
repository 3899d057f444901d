/* SPDX-License-Identifier: MIT
 *
 * hrana_request.c: running a pipeline's requests in order (HRANA_3_SPEC,
 * "Hrana over HTTP", "Requests"): execute, batch with its conditions,
 * sequence, describe, store_sql, close_sql, get_autocommit and close.
 * Every request gets a result, also after an earlier one failed ("The
 * server always executes all requests, even if some of them return
 * errors"); a failure is that request's {"type":"error"} result, or in a
 * batch that step's entry in step_errors. Statements themselves run in
 * hrana_exec.c.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hrana_int.h"

/* {"type":"ok","response":{"type":type[, key: value]}}; value is stolen. */
static json_t *ok_response(const char *type, const char *key, json_t *value)
{
    json_t *response = key != NULL
                           ? json_pack("{s:s,s:o}", "type", type, key, value)
                           : json_pack("{s:s}", "type", type);

    return json_pack("{s:s,s:o}", "type", "ok", "response", response);
}

static int run_execute(struct hrana_run *run, const json_t *request,
                       json_t **out)
{
    json_t *result = NULL;
    int rc = hrana_run_stmt(run, json_object_get(request, "stmt"), &result);

    if (rc == 0) {
        *out = ok_response("execute", "result", result);
    }
    return rc;
}

/* ---- batch (HRANA_3_SPEC, "Batches", "Conditions") ---- */

/* Conditions nest; jansson bounds JSON depth, this bounds recursion. */
#define COND_DEPTH_MAX 64

enum step_outcome {
    STEP_SKIPPED = 0, /* neither ok nor error */
    STEP_OK,
    STEP_FAILED,
};

/* A condition of step index may refer only to earlier steps (sqld refuses
 * the batch otherwise). */
static bool cond_valid(const json_t *cond, size_t index, int depth)
{
    const char *type = json_string_value(json_object_get(cond, "type"));
    int64_t step;
    size_t i;
    json_t *sub;

    if (!json_is_object(cond) || type == NULL || depth > COND_DEPTH_MAX) {
        return false;
    }
    if (strcmp(type, "ok") == 0 || strcmp(type, "error") == 0) {
        return hrana_json_integer(json_object_get(cond, "step"), 0,
                                  (int64_t)index - 1, &step);
    }
    if (strcmp(type, "not") == 0) {
        return cond_valid(json_object_get(cond, "cond"), index, depth + 1);
    }
    if (strcmp(type, "and") == 0 || strcmp(type, "or") == 0) {
        const json_t *conds = json_object_get(cond, "conds");
        if (!json_is_array(conds)) {
            return false;
        }
        json_array_foreach(conds, i, sub)
        {
            if (!cond_valid(sub, index, depth + 1)) {
                return false;
            }
        }
        return true;
    }
    return strcmp(type, "is_autocommit") == 0;
}

/* Evaluates a condition cond_valid() accepted. */
static bool cond_eval(const struct hrana_run *run, const json_t *cond,
                      const uint8_t *outcomes)
{
    const char *type = json_string_value(json_object_get(cond, "type"));
    int64_t step = 0;
    size_t i;
    json_t *sub;

    if (strcmp(type, "ok") == 0 || strcmp(type, "error") == 0) {
        hrana_json_integer(json_object_get(cond, "step"), 0, INT64_MAX, &step);
        return outcomes[step] == (type[0] == 'o' ? STEP_OK : STEP_FAILED);
    }
    if (strcmp(type, "not") == 0) {
        return !cond_eval(run, json_object_get(cond, "cond"), outcomes);
    }
    if (strcmp(type, "and") == 0 || strcmp(type, "or") == 0) {
        bool is_and = type[0] == 'a';
        json_array_foreach(json_object_get(cond, "conds"), i, sub)
        {
            if (cond_eval(run, sub, outcomes) != is_and) {
                return !is_and;
            }
        }
        return is_and;
    }
    return !hrana_run_in_transaction(run); /* is_autocommit */
}

static int batch_check(struct hrana_run *run, const json_t *steps)
{
    size_t i;
    json_t *step;

    if (!json_is_array(steps)) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "batch has no \"steps\" array");
    }
    json_array_foreach(steps, i, step)
    {
        const json_t *cond = json_object_get(step, "condition");
        if (!json_is_object(step) ||
            !json_is_object(json_object_get(step, "stmt"))) {
            return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                                  "batch step %zu has no \"stmt\" object", i);
        }
        if (cond != NULL && !json_is_null(cond) && !cond_valid(cond, i, 0)) {
            return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                                  "batch step %zu has an invalid condition "
                                  "(it may refer only to earlier steps)",
                                  i);
        }
    }
    return 0;
}

/* Runs step i: appends its result and error (one of them null, both for
 * a skipped step). */
static int batch_step(struct hrana_run *run, const json_t *step,
                      uint8_t *outcome, json_t *results, json_t *errors,
                      const uint8_t *outcomes)
{
    const json_t *cond = json_object_get(step, "condition");
    json_t *result = NULL;
    json_t *error = NULL;
    int rc = 0;

    if (cond == NULL || json_is_null(cond) || cond_eval(run, cond, outcomes)) {
        rc = hrana_run_stmt(run, json_object_get(step, "stmt"), &result);
        if (rc == NODE_EINVAL) {
            error = hrana_error_object(run->failure.message, run->failure.code);
            if (error == NULL) {
                return COMMON_ENOMEM;
            }
        } else if (rc != 0) {
            return rc;
        }
        *outcome = rc == 0 ? STEP_OK : STEP_FAILED;
    }
    if (json_array_append_new(results, result != NULL ? result : json_null()) !=
            0 ||
        json_array_append_new(errors, error != NULL ? error : json_null()) !=
            0) {
        return COMMON_ENOMEM;
    }
    return 0;
}

static int run_batch(struct hrana_run *run, const json_t *request, json_t **out)
{
    const json_t *steps =
        json_object_get(json_object_get(request, "batch"), "steps");
    json_t *results = NULL;
    json_t *errors = NULL;
    uint8_t *outcomes = NULL;
    size_t i;
    json_t *step;
    int rc = batch_check(run, steps);

    if (rc != 0) {
        return rc;
    }
    results = json_array();
    errors = json_array();
    outcomes = common_calloc(json_array_size(steps) + 1, 1);
    if (results == NULL || errors == NULL || outcomes == NULL) {
        rc = COMMON_ENOMEM;
        goto out;
    }
    json_array_foreach(steps, i, step)
    {
        rc = batch_step(run, step, &outcomes[i], results, errors, outcomes);
        if (rc != 0) {
            goto out;
        }
    }
    *out = ok_response(
        "batch", "result",
        json_pack("{s:O,s:O}", "step_results", results, "step_errors", errors));
out:
    json_decref(results);
    json_decref(errors);
    common_free(outcomes);
    return rc;
}

/* ---- describe (HRANA_3_SPEC, "Result of describing a statement") ---- */

struct describe_params {
    struct engine_stmt *stmt;
    json_t *params; /* one {"name"} per parameter */
    int last;       /* the highest index so far: a bare '?' takes the next */
};

/* Parameter names, which the engine does not list: the scanner finds each
 * token in text order, the engine says which index a name took. */
static void describe_param(void *ctx, const char *name, size_t size)
{
    struct describe_params *d = ctx;
    char buf[256];
    int64_t n = 0;
    int index;

    if (size >= sizeof(buf)) {
        return;
    }
    memcpy(buf, name, size);
    buf[size] = '\0';
    if (size == 1 && name[0] == '?') {
        index = d->last + 1;
    } else if (name[0] == '?') {
        index =
            hrana_int64_parse(name + 1, size - 1, &n) && n > 0 && n <= INT32_MAX
                ? (int)n
                : 0;
    } else {
        index = engine_bind_parameter_index(d->stmt, buf);
    }
    if (index < 1 || (size_t)index > json_array_size(d->params)) {
        return;
    }
    d->last = index > d->last ? index : d->last;
    if (size > 1) {
        json_object_set_new(json_array_get(d->params, (size_t)index - 1),
                            "name", hrana_json_text(name, size));
    }
}

static json_t *describe_result(struct engine_stmt *stmt, const char *sql,
                               size_t size, size_t at, size_t tail)
{
    struct describe_params d = {.stmt = stmt, .params = json_array()};
    bool is_explain =
        size - at >= 7 && strncasecmp(sql + at, "EXPLAIN", 7) == 0;

    for (int i = 0; d.params != NULL && i < engine_bind_parameter_count(stmt);
         i++) {
        if (json_array_append_new(d.params, json_pack("{s:n}", "name")) != 0) {
            json_decref(d.params);
            d.params = NULL;
        }
    }
    if (d.params != NULL) {
        hrana_sql_params(sql + at, tail - at, describe_param, &d);
    }
    return json_pack("{s:o,s:o,s:b,s:b}", "params", d.params, "cols",
                     hrana_columns(stmt), "is_explain", is_explain,
                     "is_readonly", engine_stmt_readonly(stmt));
}

static int run_describe(struct hrana_run *run, const json_t *request,
                        json_t **out)
{
    struct engine_stmt *stmt;
    const char *sql;
    size_t size;
    size_t at;
    size_t tail;
    int rc = hrana_run_resolve_sql(run, request, &sql, &size);

    if (rc != 0) {
        return rc;
    }
    at = hrana_sql_first_statement(sql, size, 0);
    if (at == size) {
        return hrana_run_fail(run, "SQL_NO_STATEMENT",
                              "SQL text holds no statement");
    }
    rc = hrana_run_prepare(run, sql, size, at,
                           hrana_sql_classify(sql, size, at), &stmt, &tail);
    if (rc != 0) {
        return rc;
    }
    if (!hrana_sql_is_blank(sql, size, tail)) {
        rc = hrana_run_fail(run, "SQL_MANY_STATEMENTS",
                            "SQL text holds more than one statement");
    } else {
        *out = ok_response("describe", "result",
                           describe_result(stmt, sql, size, at, tail));
    }
    engine_finalize(stmt);
    return rc;
}

/* ---- stored SQL, close ---- */

static int run_store_sql(struct hrana_run *run, const json_t *request,
                         json_t **out)
{
    const json_t *sql = json_object_get(request, "sql");
    int64_t id;
    int rc;

    if (!hrana_json_integer(json_object_get(request, "sql_id"), INT32_MIN,
                            INT32_MAX, &id) ||
        !json_is_string(sql)) {
        return hrana_run_fail(
            run, "HRANA_PROTO_ERROR",
            "store_sql needs a 32-bit integer \"sql_id\" and a \"sql\"");
    }
    rc =
        hrana_stream_sql_store(run->stream, (int32_t)id, json_string_value(sql),
                               json_string_length(sql));
    if (rc == NODE_EINVAL) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "SQL text %lld is already stored", (long long)id);
    }
    if (rc == COMMON_ETOOBIG) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "too many stored SQL texts on this stream (at "
                              "most %u texts, %zu bytes)",
                              HRANA_STREAM_SQL_COUNT_MAX,
                              HRANA_STREAM_SQL_BYTES_MAX);
    }
    if (rc == 0) {
        *out = ok_response("store_sql", NULL, NULL);
    }
    return rc;
}

static int run_close_sql(struct hrana_run *run, const json_t *request,
                         json_t **out)
{
    int64_t id;

    if (!hrana_json_integer(json_object_get(request, "sql_id"), INT32_MIN,
                            INT32_MAX, &id)) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "close_sql needs a 32-bit integer \"sql_id\"");
    }
    hrana_stream_sql_close(run->stream, (int32_t)id);
    *out = ok_response("close_sql", NULL, NULL);
    return 0;
}

/* close: a transaction the client left open is rolled back, as closing an
 * sqld stream drops its connection; in group mode the node is asked to. */
static int run_close(struct hrana_run *run, json_t **out)
{
    run->out->closed = true;
    if (run->group) {
        if (run->stream->group_transaction) {
            run->stream->group_transaction = false;
            run->out->rollback_requested = true;
        }
    } else if (engine_in_transaction(run->db)) {
        (void)engine_exec(run->db, "ROLLBACK", NULL, NULL);
    }
    run->stream->readonly_transaction = false;
    *out = ok_response("close", NULL, NULL);
    return 0;
}

/* ---- the pipeline ---- */

static int run_request(struct hrana_run *run, const json_t *request,
                       json_t **out)
{
    const char *type = json_string_value(json_object_get(request, "type"));
    int rc;

    *out = NULL;
    if (run->out->closed) {
        return hrana_run_fail(run, "HRANA_PROTO_ERROR",
                              "the stream was closed by an earlier request");
    }
    if (strcmp(type, "execute") == 0) {
        return run_execute(run, request, out);
    }
    if (strcmp(type, "batch") == 0) {
        return run_batch(run, request, out);
    }
    if (strcmp(type, "sequence") == 0) {
        rc = hrana_run_sequence(run, request);
        *out = rc == 0 ? ok_response("sequence", NULL, NULL) : NULL;
        return rc;
    }
    if (strcmp(type, "describe") == 0) {
        return run_describe(run, request, out);
    }
    if (strcmp(type, "store_sql") == 0) {
        return run_store_sql(run, request, out);
    }
    if (strcmp(type, "close_sql") == 0) {
        return run_close_sql(run, request, out);
    }
    if (strcmp(type, "get_autocommit") == 0) {
        *out = ok_response("get_autocommit", "is_autocommit",
                           json_boolean(!hrana_run_in_transaction(run)));
        return 0;
    }
    ASSERT(strcmp(type, "close") == 0); /* hrana_pipeline_parse() checked */
    return run_close(run, out);
}

int hrana_pipeline_run(struct hrana_stream *stream, struct engine_db *db,
                       const struct hrana_pipeline *pipeline,
                       const struct hrana_run_options *options,
                       struct hrana_run_outcome *out)
{
    struct hrana_run run = {
        .stream = stream,
        .db = db,
        .group = options->in_group_transaction,
        .read_handle = options->read_handle,
        .response_bytes_max = options->max_response_bytes != 0
                                  ? options->max_response_bytes
                                  : HRANA_RESPONSE_BYTES_MAX_DEFAULT,
        .out = out,
    };
    size_t i;
    json_t *request;

    memset(out, 0, sizeof(*out));
    out->results = json_array();
    if (out->results == NULL) {
        return COMMON_ENOMEM;
    }
    /* The node may have rolled the handle back since the last pipeline. */
    if (!run.group && !engine_in_transaction(db)) {
        stream->readonly_transaction = false;
    }
    json_array_foreach(pipeline->requests, i, request)
    {
        json_t *result = NULL;
        int rc = run_request(&run, request, &result);
        if (rc == NODE_EINVAL) {
            result = hrana_error_result(run.failure.message, run.failure.code);
        } else if (rc != 0) {
            json_decref(result);
            result = NULL;
        }
        if (result == NULL ||
            json_array_append_new(out->results, result) != 0) {
            json_decref(out->results);
            out->results = NULL;
            return COMMON_ENOMEM;
        }
    }
    out->in_transaction = hrana_run_in_transaction(&run);
    return 0;
}
