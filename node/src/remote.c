/* SPDX-License-Identifier: MIT
 *
 * remote.c: Hrana v2 over HTTP from the client's side (remote.h): value
 * decoding and the session that keeps a stream's baton between requests.
 *
 * The request and response shapes are HRANA_2's "HTTP API" as the node
 * answers them (hrana.h; the protocol notes, B2): a request body is
 * {"baton"?: string, "requests": [...]}, with the baton omitted on a new
 * stream; the response is {"baton": string|null, "results": [...]} with
 * one result per request, {"type":"ok","response":{...}} or
 * {"type":"error","error":{"message":...}}. An SQL error is such a result
 * inside an HTTP 200; a 400 is the stream's failure (a baton the server
 * no longer knows), after which the session starts a new stream.
 *
 * The node closes a stream after HRANA_STREAM_IDLE_TIMEOUT_MS idle and
 * then answers its baton with HTTP 400 and the code STREAM_ERROR
 * (serve_pipeline.c, refuse_stream), having run nothing. So that a user
 * who pauses at the shell's prompt does not see that error, every
 * statement travels as [execute, get_autocommit] (HRANA_3_SPEC,
 * "Autocommit"; the node takes get_autocommit on /v2/pipeline too,
 * docs/http.md) and the session remembers whether its stream was in
 * autocommit mode. A stream lost in autocommit mode held nothing, so the
 * request is sent again, once, on a new stream; a stream lost inside a
 * transaction took the transaction with it (the node rolls it back), and
 * running the statement on a new stream would run it outside the
 * transaction the user opened, so that failure is reported.
 */
#include "remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct remote_session {
    struct remote_url url;
    char *token; /* owned; NULL for none */
    char *baton; /* owned; NULL: the next request opens a stream */
    /* The stream baton names answered get_autocommit with true after its
     * last request; false while unknown (no such answer, or the request
     * failed on the way). Only a stream known to be in autocommit mode may
     * be replaced silently when it expires. */
    bool is_autocommit;
    char error[REMOTE_ERROR_SIZE];
};

/* ------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------ */

static int base64_digit(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int remote_base64_decode(const char *text, size_t size, unsigned char *out,
                         size_t *out_size)
{
    /* Padding is optional here (RFC 4648 section 3.2 lets a
     * specification drop it), but where present it must be right. */
    size_t data_size = size;
    while (data_size > 0 && size - data_size < 2 &&
           text[data_size - 1] == '=') {
        data_size--;
    }
    if (data_size % 4 == 1 || (data_size < size && size % 4 != 0)) {
        return NODE_EPROTO;
    }
    uint32_t bits = 0;
    int bit_count = 0;
    size_t count = 0;
    for (size_t i = 0; i < data_size; i++) {
        int digit = base64_digit(text[i]);
        if (digit < 0) {
            return NODE_EPROTO;
        }
        bits = (bits << 6) | (uint32_t)digit;
        bit_count += 6;
        if (bit_count >= 8) {
            bit_count -= 8;
            out[count++] = (unsigned char)(bits >> bit_count);
            bits &= (1u << bit_count) - 1;
        }
    }
    if (bits != 0) {
        return NODE_EPROTO; /* non-canonical: leftover bits set */
    }
    *out_size = count;
    return 0;
}

static int value_error(char *error, size_t error_size, const char *what)
{
    snprintf(error, error_size, "malformed value in the server's answer: %s",
             what);
    return NODE_EPROTO;
}

static int decode_integer(const json_t *field, struct remote_value *out,
                          char *error, size_t error_size)
{
    long long integer;
    if (json_is_integer(field)) {
        integer = (long long)json_integer_value(field);
    } else {
        const char *text = json_string_value(field);
        char *end = NULL;
        errno = 0;
        integer = text != NULL ? strtoll(text, &end, 10) : 0;
        if (text == NULL || end == text || *end != '\0' || errno != 0 ||
            json_string_length(field) != strlen(text)) {
            return value_error(error, error_size, "bad integer");
        }
    }
    int size = snprintf(out->number, sizeof(out->number), "%lld", integer);
    out->value.type = SHELL_VALUE_INTEGER;
    out->value.text = out->number;
    out->value.size = (size_t)size;
    return 0;
}

static int decode_float(const json_t *field, struct remote_value *out,
                        char *error, size_t error_size)
{
    if (!json_is_number(field)) {
        return value_error(error, error_size, "float without a number");
    }
    out->value.type = SHELL_VALUE_FLOAT;
    out->value.real = json_number_value(field);
    out->value.size = engine_real_to_text(out->value.real, out->number);
    out->value.text = out->number;
    return 0;
}

static int decode_blob(const json_t *field, struct remote_value *out,
                       char *error, size_t error_size)
{
    const char *text = json_string_value(field);
    if (text == NULL) {
        return value_error(error, error_size, "blob without base64");
    }
    size_t size = json_string_length(field);
    out->bytes = common_malloc(size / 4 * 3 + 3);
    if (out->bytes == NULL) {
        return COMMON_ENOMEM;
    }
    size_t bytes_size = 0;
    if (remote_base64_decode(text, size, (unsigned char *)out->bytes,
                             &bytes_size) != 0) {
        return value_error(error, error_size, "bad base64");
    }
    out->bytes[bytes_size] = '\0';
    out->value.type = SHELL_VALUE_BLOB;
    out->value.text = out->bytes;
    out->value.size = bytes_size;
    return 0;
}

int remote_value_decode(const json_t *json, struct remote_value *out,
                        char *error, size_t error_size)
{
    memset(out, 0, sizeof(*out));
    const char *type = json_string_value(json_object_get(json, "type"));
    if (type == NULL) {
        return value_error(error, error_size, "no type");
    }
    const json_t *value = json_object_get(json, "value");
    if (strcmp(type, "null") == 0) {
        out->value.type = SHELL_VALUE_NULL;
        return 0;
    }
    if (strcmp(type, "integer") == 0) {
        return decode_integer(value, out, error, error_size);
    }
    if (strcmp(type, "float") == 0) {
        return decode_float(value, out, error, error_size);
    }
    if (strcmp(type, "blob") == 0) {
        return decode_blob(json_object_get(json, "base64"), out, error,
                           error_size);
    }
    if (strcmp(type, "text") == 0 && json_is_string(value)) {
        out->value.type = SHELL_VALUE_TEXT;
        out->value.text = json_string_value(value);
        out->value.size = json_string_length(value);
        return 0;
    }
    return value_error(error, error_size, "unknown type or no text");
}

void remote_value_release(struct remote_value *value)
{
    common_free(value->bytes);
    memset(value, 0, sizeof(*value));
}

/* ------------------------------------------------------------------------
 * Pipelines
 * ------------------------------------------------------------------------ */

static int session_error(struct remote_session *session, int rc,
                         const char *message)
{
    snprintf(session->error, sizeof(session->error), "%s", message);
    return rc;
}

static int set_baton(struct remote_session *session, const json_t *baton)
{
    common_free(session->baton);
    session->baton = NULL;
    const char *text = json_string_value(baton);
    if (text == NULL) {
        return json_is_null(baton) || baton == NULL
                   ? 0
                   : session_error(session, NODE_EPROTO,
                                   "the server's baton is not a string");
    }
    size_t size = strlen(text) + 1;
    session->baton = common_malloc(size);
    if (session->baton == NULL) {
        return session_error(session, COMMON_ENOMEM, "out of memory");
    }
    memcpy(session->baton, text, size);
    return 0;
}

/* True when response is the node's refusal of a stream: HTTP 400 with
 * {"code": "STREAM_ERROR"} (serve_pipeline.c, refuse_stream), which it
 * sends before running any request of the pipeline. */
static bool is_stream_refused(const struct remote_http_response *response)
{
    if (response->status != 400 || response->body == NULL) {
        return false;
    }
    json_t *body =
        json_loadb(response->body, response->body_size, JSON_ALLOW_NUL, NULL);
    const char *code = json_string_value(json_object_get(body, "code"));
    bool is_refused = code != NULL && strcmp(code, "STREAM_ERROR") == 0;
    json_decref(body);
    return is_refused;
}

/* The status of a response that is not 200, as a code and message. A 400
 * on a request that named a stream means the stream is gone. */
static int status_error(struct remote_session *session, bool had_baton,
                        const struct remote_http_response *response)
{
    if (response->status == 401) {
        return session_error(session, NODE_EAUTH, REMOTE_NOT_AUTHORIZED_TEXT);
    }
    char message[REMOTE_ERROR_SIZE];
    remote_http_error_text(response, message, sizeof(message));
    if (response->status == 400 && had_baton) {
        snprintf(session->error, sizeof(session->error),
                 "%.300s (the server closed this session's stream; a "
                 "transaction open on it is gone)",
                 message);
        return NODE_ENOTFOUND;
    }
    return session_error(
        session, response->status == 400 ? NODE_EPROTO : NODE_EIO, message);
}

/* Reads a 200 response's body: the new baton, and the results array
 * (a new reference in *results) holding one result per request. */
static int read_pipeline_response(struct remote_session *session,
                                  const struct remote_http_response *response,
                                  size_t request_count, json_t **results)
{
    json_t *body = NULL;
    if (response->body != NULL) {
        body = json_loadb(response->body, response->body_size, JSON_ALLOW_NUL,
                          NULL);
    }
    json_t *array = json_object_get(body, "results");
    int rc = 0;
    if (!json_is_array(array) || json_array_size(array) != request_count) {
        rc = session_error(session, NODE_EPROTO,
                           "malformed pipeline response from the server");
    }
    if (rc == 0) {
        rc = set_baton(session, json_object_get(body, "baton"));
    }
    if (rc == 0) {
        *results = json_incref(array);
    }
    json_decref(body);
    return rc;
}

/* True when the last of results is get_autocommit's answer saying the
 * stream is in autocommit mode (HRANA_3_SPEC, "Autocommit"). */
static bool results_say_autocommit(const json_t *results)
{
    size_t count = json_array_size(results);
    const json_t *last = count > 0 ? json_array_get(results, count - 1) : NULL;
    const json_t *response = json_object_get(last, "response");
    const char *type = json_string_value(json_object_get(response, "type"));
    return type != NULL && strcmp(type, "get_autocommit") == 0 &&
           json_is_true(json_object_get(response, "is_autocommit"));
}

/* Sends requests (a JSON array; the reference is stolen) on the session's
 * stream; *results as read_pipeline_response() gives it. *stream_refused
 * says whether the node refused the stream the request named, which
 * means it ran none of the requests. */
static int run_pipeline(struct remote_session *session, json_t *requests,
                        json_t **results, bool *stream_refused)
{
    *stream_refused = false;
    size_t request_count = json_array_size(requests);
    json_t *body = json_pack("{s:o}", "requests", requests);
    if (body != NULL && session->baton != NULL &&
        json_object_set_new(body, "baton", json_string(session->baton)) != 0) {
        json_decref(body);
        body = NULL;
    }
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        return session_error(session, COMMON_ENOMEM, "out of memory");
    }
    bool had_baton = session->baton != NULL;
    struct remote_http_response response;
    int rc = remote_http_request(&session->url, "POST", "v2/pipeline",
                                 session->token, text, strlen(text), &response,
                                 session->error, sizeof(session->error));
    free(text); /* jansson's allocation */
    if (rc == 0 && response.status != 200) {
        *stream_refused = had_baton && is_stream_refused(&response);
        rc = status_error(session, had_baton, &response);
        common_free(session->baton);
        session->baton = NULL;
    } else if (rc == 0) {
        rc = read_pipeline_response(session, &response, request_count, results);
    }
    /* A request lost on the way may have begun a transaction: unknown. */
    session->is_autocommit = rc == 0 && results_say_autocommit(*results);
    remote_http_response_release(&response);
    return rc;
}

static json_t *close_requests(void)
{
    return json_pack("[{s:s}]", "type", "close");
}

/* ------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------ */

int remote_session_open(const char *url, const char *token,
                        struct remote_session **out, char *error,
                        size_t error_size)
{
    *out = NULL;
    struct remote_session *session = common_calloc(1, sizeof(*session));
    if (session == NULL) {
        snprintf(error, error_size, "out of memory");
        return COMMON_ENOMEM;
    }
    int rc = remote_url_parse(url, &session->url, error, error_size);
    if (rc == 0 && token != NULL) {
        session->token = common_malloc(strlen(token) + 1);
        rc = session->token != NULL ? 0 : COMMON_ENOMEM;
        if (rc == 0) {
            memcpy(session->token, token, strlen(token) + 1);
        }
    }
    json_t *results = NULL;
    if (rc == 0) {
        json_t *requests = close_requests();
        bool refused = false;
        rc = requests != NULL
                 ? run_pipeline(session, requests, &results, &refused)
                 : COMMON_ENOMEM;
        snprintf(error, error_size, "%s",
                 rc == COMMON_ENOMEM ? "out of memory" : session->error);
    }
    json_decref(results);
    if (rc != 0) {
        remote_session_close(session);
        return rc;
    }
    *out = session;
    return 0;
}

static json_t *execute_requests(const char *sql, size_t size,
                                const char *const *args, int arg_count)
{
    json_t *array = json_array();
    for (int i = 0; array != NULL && i < arg_count; i++) {
        if (json_array_append_new(array, json_pack("{s:s,s:s}", "type", "text",
                                                   "value", args[i])) != 0) {
            json_decref(array);
            array = NULL;
        }
    }
    json_t *sql_json = json_stringn(sql, size);
    if (array == NULL || sql_json == NULL) {
        json_decref(array);
        json_decref(sql_json);
        return NULL;
    }
    /* get_autocommit runs after the statement: its answer is the state
     * the statement left the stream in. */
    return json_pack("[{s:s,s:{s:o,s:o,s:b}},{s:s}]", "type", "execute", "stmt",
                     "sql", sql_json, "args", array, "want_rows", 1, "type",
                     "get_autocommit");
}

/* The StmtResult of an execute's result, or its error. */
static int read_execute_result(struct remote_session *session,
                               const json_t *result, json_t **out)
{
    const char *type = json_string_value(json_object_get(result, "type"));
    if (type != NULL && strcmp(type, "error") == 0) {
        const json_t *error = json_object_get(result, "error");
        const char *message =
            json_string_value(json_object_get(error, "message"));
        return session_error(session, NODE_EINVAL,
                             message != NULL ? message : "unknown error");
    }
    json_t *stmt =
        json_object_get(json_object_get(result, "response"), "result");
    if (type == NULL || strcmp(type, "ok") != 0 ||
        !json_is_array(json_object_get(stmt, "cols")) ||
        !json_is_array(json_object_get(stmt, "rows"))) {
        return session_error(session, NODE_EPROTO,
                             "malformed execute result from the server");
    }
    *out = json_incref(stmt);
    return 0;
}

int remote_session_execute(struct remote_session *session, const char *sql,
                           size_t size, const char *const *args, int arg_count,
                           json_t **result)
{
    ASSERT(session != NULL);
    *result = NULL;
    json_t *requests = execute_requests(sql, size, args, arg_count);
    if (requests == NULL) {
        return session_error(session, NODE_EINVAL,
                             "the statement is not valid UTF-8 (or out of "
                             "memory)");
    }
    json_t *results = NULL;
    bool was_autocommit = session->is_autocommit;
    bool refused = false;
    int rc = run_pipeline(session, json_incref(requests), &results, &refused);
    if (rc == NODE_ENOTFOUND && refused && was_autocommit) {
        /* The stream expired with no transaction open: the node ran
         * nothing, so the statement goes, once, on a new stream (the
         * failed request dropped the baton). */
        rc = run_pipeline(session, json_incref(requests), &results, &refused);
    }
    json_decref(requests);
    if (rc == 0) {
        rc = read_execute_result(session, json_array_get(results, 0), result);
    }
    json_decref(results);
    return rc;
}

const char *remote_session_error(const struct remote_session *session)
{
    return session->error;
}

void remote_session_close(struct remote_session *session)
{
    if (session == NULL) {
        return;
    }
    if (session->baton != NULL) {
        json_t *requests = close_requests();
        json_t *results = NULL;
        bool refused = false;
        if (requests != NULL) {
            (void)run_pipeline(session, requests, &results, &refused);
        }
        json_decref(results);
    }
    common_free(session->baton);
    common_free(session->token);
    common_free(session);
}
