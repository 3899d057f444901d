/* SPDX-License-Identifier: MIT
 *
 * hrana_pipeline.c: the edges of a Hrana pipeline (HRANA_3_SPEC, "Hrana
 * over HTTP", "Execute a pipeline of requests"): parsing the request body,
 * reading its SQL without a database to tell whether it may write (the
 * node sends reads and writes to different database handles), and
 * encoding responses and errors. Running the requests is hrana_exec.c's.
 *
 * The SQL scanner knows SQLite's lexical rules only as far as it must:
 * white space, "--" and C comments, '...' strings and "...", `...`,
 * [...] identifiers (a quote doubled inside stays inside), and the ';'
 * that ends a statement. It reads the first keywords of each statement;
 * anything it does not recognise counts as a write.
 */
#include <stdio.h>
#include <string.h>

#include "hrana_int.h"

/* ---- the SQL scanner ---- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* Letters, digits, '_', '$' and bytes of multi-byte UTF-8: what SQLite's
 * tokenizer lets an identifier continue with. */
static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           (unsigned char)c >= 0x80;
}

size_t hrana_sql_skip_space(const char *sql, size_t size, size_t at)
{
    while (at < size) {
        if (is_space(sql[at])) {
            at++;
        } else if (sql[at] == '-' && at + 1 < size && sql[at + 1] == '-') {
            while (at < size && sql[at] != '\n') {
                at++;
            }
        } else if (sql[at] == '/' && at + 1 < size && sql[at + 1] == '*') {
            at += 2;
            while (at < size &&
                   !(sql[at] == '*' && at + 1 < size && sql[at + 1] == '/')) {
                at++;
            }
            at = at < size ? at + 2 : size;
        } else {
            break;
        }
    }
    return at;
}

/* The offset just past the quoted text (string or identifier) starting at
 * sql[at], or size when it is not closed. */
static size_t skip_quoted(const char *sql, size_t size, size_t at)
{
    char close = sql[at] == '[' ? ']' : sql[at];

    at++;
    while (at < size) {
        if (sql[at] == close) {
            /* A doubled quote is one quote character inside ('it''s');
             * brackets have no escape. */
            if (close != ']' && at + 1 < size && sql[at + 1] == close) {
                at += 2;
                continue;
            }
            return at + 1;
        }
        at++;
    }
    return size;
}

static bool is_quote(char c)
{
    return c == '\'' || c == '"' || c == '`' || c == '[';
}

size_t hrana_sql_statement_end(const char *sql, size_t size, size_t at)
{
    while (at < size) {
        size_t next = hrana_sql_skip_space(sql, size, at);
        if (next != at) {
            at = next;
        } else if (sql[at] == ';') {
            return at;
        } else if (is_quote(sql[at])) {
            at = skip_quoted(sql, size, at);
        } else {
            at++;
        }
    }
    return size;
}

/* The next word after white space and comments, upper-cased into out (a
 * word too long for any keyword is returned as "~"). *at moves past it.
 * False when the next token is not a word. */
#define KEYWORD_SIZE 16

static bool next_word(const char *sql, size_t size, size_t *at,
                      char out[KEYWORD_SIZE])
{
    size_t i = hrana_sql_skip_space(sql, size, *at);
    size_t n = 0;

    while (i < size && is_word(sql[i])) {
        char c = sql[i++];
        if (n < KEYWORD_SIZE - 1) {
            out[n] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
        }
        n++;
    }
    if (n >= KEYWORD_SIZE) {
        n = 1;
        out[0] = '~';
    }
    out[n] = '\0';
    *at = i;
    return n > 0;
}

static enum hrana_sql_kind classify_begin(const char *sql, size_t size,
                                          size_t at)
{
    char word[KEYWORD_SIZE];

    /* BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION [name]], and
     * libSQL's BEGIN [TRANSACTION] READONLY (@libsql/client's "read"
     * transactions). */
    for (int i = 0; i < 3 && next_word(sql, size, &at, word); i++) {
        if (strcmp(word, "IMMEDIATE") == 0 || strcmp(word, "EXCLUSIVE") == 0) {
            return HRANA_SQL_BEGIN_WRITE;
        }
        if (strcmp(word, "READONLY") == 0) {
            return HRANA_SQL_BEGIN_READONLY;
        }
        if (strcmp(word, "DEFERRED") != 0 && strcmp(word, "TRANSACTION") != 0) {
            break;
        }
    }
    return HRANA_SQL_BEGIN;
}

enum hrana_sql_kind hrana_sql_classify(const char *sql, size_t size, size_t at)
{
    char word[KEYWORD_SIZE];

    if (!next_word(sql, size, &at, word)) {
        at = hrana_sql_skip_space(sql, size, at);
        return at == size || sql[at] == ';' ? HRANA_SQL_EMPTY : HRANA_SQL_WRITE;
    }
    if (strcmp(word, "SELECT") == 0 || strcmp(word, "VALUES") == 0 ||
        strcmp(word, "EXPLAIN") == 0) {
        return HRANA_SQL_READ;
    }
    if (strcmp(word, "BEGIN") == 0) {
        return classify_begin(sql, size, at);
    }
    if (strcmp(word, "COMMIT") == 0 || strcmp(word, "END") == 0) {
        return HRANA_SQL_COMMIT;
    }
    if (strcmp(word, "SAVEPOINT") == 0 || strcmp(word, "RELEASE") == 0) {
        return HRANA_SQL_SAVEPOINT;
    }
    if (strcmp(word, "ROLLBACK") == 0) {
        /* ROLLBACK [TRANSACTION] [TO [SAVEPOINT] name] */
        if (next_word(sql, size, &at, word) &&
            strcmp(word, "TRANSACTION") == 0) {
            next_word(sql, size, &at, word);
        }
        return strcmp(word, "TO") == 0 ? HRANA_SQL_SAVEPOINT
                                       : HRANA_SQL_ROLLBACK;
    }
    return HRANA_SQL_WRITE;
}

bool hrana_sql_is_blank(const char *sql, size_t size, size_t at)
{
    for (;;) {
        at = hrana_sql_skip_space(sql, size, at);
        if (at == size) {
            return true;
        }
        if (sql[at] != ';') {
            return false;
        }
        at++;
    }
}

static enum hrana_access kind_access(enum hrana_sql_kind kind)
{
    switch (kind) {
    case HRANA_SQL_EMPTY:
        return HRANA_ACCESS_NONE;
    /* A plain (deferred) BEGIN or a SAVEPOINT opening a transaction may
     * be followed by writes in later pipelines, as in SQLite: such a
     * transaction must live on the writing handle from its start. Only a
     * READONLY one may begin on a reading handle. */
    case HRANA_SQL_READ:
    case HRANA_SQL_BEGIN_READONLY:
    case HRANA_SQL_COMMIT:
    case HRANA_SQL_ROLLBACK:
        return HRANA_ACCESS_READ;
    default:
        return HRANA_ACCESS_WRITE;
    }
}

static enum hrana_access access_max(enum hrana_access a, enum hrana_access b)
{
    return a > b ? a : b;
}

enum hrana_access hrana_sql_access(const char *sql, size_t size)
{
    enum hrana_access access = HRANA_ACCESS_NONE;
    size_t at = 0;

    while (at < size) {
        enum hrana_sql_kind kind = hrana_sql_classify(sql, size, at);
        access = access_max(access, kind_access(kind));
        at = hrana_sql_statement_end(sql, size, at) + 1;
    }
    return access;
}

void hrana_sql_params(const char *sql, size_t size, hrana_sql_param_cb fn,
                      void *ctx)
{
    size_t at = 0;

    while (at < size) {
        size_t next = hrana_sql_skip_space(sql, size, at);
        char c = next < size ? sql[next] : '\0';
        size_t end = next + 1;

        if (next == size) {
            break;
        }
        if (is_quote(c)) {
            end = skip_quoted(sql, size, next);
        } else if (c == '?' || c == ':' || c == '@' || c == '$') {
            while (end < size && is_word(sql[end]) &&
                   (c != '?' || (sql[end] >= '0' && sql[end] <= '9'))) {
                end++;
            }
            if (c == '?' || end > next + 1) {
                fn(ctx, sql + next, end - next);
            }
        } else if (is_word(c)) {
            /* A whole identifier or number, so "a$b" is not a "$b". */
            while (end < size && is_word(sql[end])) {
                end++;
            }
        }
        at = end;
    }
}

/* ---- parsing a body ---- */

static const char *const request_types[] = {
    "execute",   "batch",     "sequence",       "describe",
    "store_sql", "close_sql", "get_autocommit", "close",
};

static bool request_type_known(const char *type)
{
    for (size_t i = 0; i < sizeof(request_types) / sizeof(*request_types);
         i++) {
        if (strcmp(type, request_types[i]) == 0) {
            return true;
        }
    }
    return false;
}

static int parse_requests(json_t *requests, char *error, size_t error_size)
{
    size_t i;
    json_t *request;

    if (!json_is_array(requests)) {
        snprintf(error, error_size, "\"requests\" is missing or not an array");
        return NODE_EINVAL;
    }
    json_array_foreach(requests, i, request)
    {
        const char *type = json_string_value(json_object_get(request, "type"));
        if (!json_is_object(request) || type == NULL) {
            snprintf(error, error_size,
                     "request %zu is not an object with a \"type\"", i);
            return NODE_EINVAL;
        }
        if (!request_type_known(type)) {
            snprintf(error, error_size,
                     "request %zu has unknown type \"%.40s\"", i, type);
            return NODE_EINVAL;
        }
    }
    return 0;
}

int hrana_pipeline_parse(const char *body, size_t size, int version,
                         struct hrana_pipeline *out, char *error,
                         size_t error_size)
{
    json_error_t json_error;
    json_t *root;
    json_t *baton;
    int rc = NODE_EINVAL;

    memset(out, 0, sizeof(*out));
    /* Every number as a double: clients send JavaScript numbers, which a
     * 64-bit integer parse would refuse past 2^63 (and integers proper
     * travel as strings). NULs are allowed in strings (text values). */
    root = json_loadb(body, size, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL,
                      &json_error);
    if (root == NULL) {
        snprintf(error, error_size, "body is not valid JSON: %s (line %d)",
                 json_error.text, json_error.line);
        return NODE_EINVAL;
    }
    if (!json_is_object(root)) {
        snprintf(error, error_size, "body is not a JSON object");
        goto out;
    }
    baton = json_object_get(root, "baton");
    if (baton != NULL && !json_is_null(baton) && !json_is_string(baton)) {
        snprintf(error, error_size, "\"baton\" is not a string or null");
        goto out;
    }
    rc = parse_requests(json_object_get(root, "requests"), error, error_size);
    if (rc != 0) {
        goto out;
    }
    if (json_is_string(baton)) {
        out->baton = common_malloc(json_string_length(baton) + 1);
        if (out->baton == NULL) {
            rc = COMMON_ENOMEM;
            goto out;
        }
        memcpy(out->baton, json_string_value(baton),
               json_string_length(baton) + 1);
    }
    out->requests = json_incref(json_object_get(root, "requests"));
    out->version = version;
out:
    json_decref(root);
    return rc;
}

void hrana_pipeline_release(struct hrana_pipeline *pipeline)
{
    common_free(pipeline->baton);
    json_decref(pipeline->requests);
    memset(pipeline, 0, sizeof(*pipeline));
}

/* ---- access ---- */

/* The access of the SQL a request names: its "sql", or every text its
 * "sql_id" may name (stored on the stream, or by a store_sql of this
 * pipeline). An sql_id naming nothing fails when it runs: no access. */
static enum hrana_access sql_ref_access(const struct hrana_stream *stream,
                                        const json_t *requests,
                                        const json_t *holder)
{
    const json_t *sql = json_object_get(holder, "sql");
    enum hrana_access access = HRANA_ACCESS_NONE;
    int64_t id;
    size_t i;
    json_t *request;

    if (json_is_string(sql)) {
        return hrana_sql_access(json_string_value(sql),
                                json_string_length(sql));
    }
    if (!hrana_json_integer(json_object_get(holder, "sql_id"), INT32_MIN,
                            INT32_MAX, &id)) {
        return HRANA_ACCESS_NONE;
    }
    const struct hrana_stored_sql *stored =
        stream != NULL ? hrana_stream_sql_find(stream, (int32_t)id) : NULL;
    if (stored != NULL) {
        access = hrana_sql_access(stored->sql, stored->size);
    }
    json_array_foreach(requests, i, request)
    {
        int64_t stored_id;
        const json_t *text = json_object_get(request, "sql");
        if (strcmp(json_string_value(json_object_get(request, "type")),
                   "store_sql") == 0 &&
            json_is_string(text) &&
            hrana_json_integer(json_object_get(request, "sql_id"), INT32_MIN,
                               INT32_MAX, &stored_id) &&
            stored_id == id) {
            access =
                access_max(access, hrana_sql_access(json_string_value(text),
                                                    json_string_length(text)));
        }
    }
    return access;
}

static enum hrana_access request_access(const struct hrana_stream *stream,
                                        const json_t *requests,
                                        const json_t *request)
{
    const char *type = json_string_value(json_object_get(request, "type"));
    enum hrana_access access = HRANA_ACCESS_NONE;
    const json_t *steps;
    size_t i;
    json_t *step;

    if (strcmp(type, "execute") == 0) {
        return sql_ref_access(stream, requests,
                              json_object_get(request, "stmt"));
    }
    if (strcmp(type, "sequence") == 0) {
        return sql_ref_access(stream, requests, request);
    }
    if (strcmp(type, "describe") == 0) {
        /* Describing prepares: it reads the schema and writes nothing. */
        return HRANA_ACCESS_READ;
    }
    if (strcmp(type, "batch") == 0) {
        steps = json_object_get(json_object_get(request, "batch"), "steps");
        json_array_foreach(steps, i, step)
        {
            access = access_max(access,
                                sql_ref_access(stream, requests,
                                               json_object_get(step, "stmt")));
        }
    }
    return access;
}

enum hrana_access hrana_pipeline_access(const struct hrana_stream *stream,
                                        const struct hrana_pipeline *pipeline)
{
    enum hrana_access access = HRANA_ACCESS_NONE;
    size_t i;
    json_t *request;

    json_array_foreach(pipeline->requests, i, request)
    {
        access = access_max(
            access, request_access(stream, pipeline->requests, request));
    }
    return access;
}

/* ---- encoding ---- */

json_t *hrana_error_object(const char *message, const char *code)
{
    return json_pack("{s:o,s:s?}", "message",
                     hrana_json_text(message, strlen(message)), "code", code);
}

json_t *hrana_error_result(const char *message, const char *code)
{
    return json_pack("{s:s,s:o}", "type", "error", "error",
                     hrana_error_object(message, code));
}

json_t *hrana_results_all_failed(const struct hrana_pipeline *pipeline,
                                 const char *message, const char *code)
{
    json_t *results = json_array();

    for (size_t i = 0;
         results != NULL && i < json_array_size(pipeline->requests); i++) {
        if (json_array_append_new(results, hrana_error_result(message, code)) !=
            0) {
            json_decref(results);
            results = NULL;
        }
    }
    return results;
}

static int dump_to_buf(const char *bytes, size_t size, void *data)
{
    return common_buf_append(data, bytes, size) == 0 ? 0 : -1;
}

/* json as compact text, common_malloc'd and NUL-terminated; json is
 * released. */
static char *dump(json_t *json, size_t *size)
{
    struct common_buf buf;
    char *text = NULL;

    common_buf_init(&buf, SIZE_MAX);
    if (json != NULL &&
        json_dump_callback(json, dump_to_buf, &buf, JSON_COMPACT) == 0 &&
        common_buf_append_byte(&buf, '\0') == 0) {
        text = (char *)common_buf_detach(&buf, size);
        *size -= 1;
    }
    common_buf_close(&buf);
    json_decref(json);
    return text;
}

char *hrana_response_encode(const char *baton, const json_t *results,
                            size_t *size)
{
    /* base_url stays null: requests on a stream come back to this node. */
    return dump(json_pack("{s:s?,s:n,s:O}", "baton", baton, "base_url",
                          "results", (json_t *)results),
                size);
}

char *hrana_error_encode(const char *message, const char *code, size_t *size)
{
    return dump(hrana_error_object(message, code), size);
}

/* ---- error codes ---- */

static const char *engine_code(int rc)
{
    switch (rc) {
    case ENGINE_ECONSTRAINT:
        return "SQLITE_CONSTRAINT";
    case ENGINE_ERANGE:
        return "SQLITE_RANGE";
    case ENGINE_EMISUSE:
        return "SQLITE_MISUSE";
    case ENGINE_ETOOBIG:
        return "SQLITE_TOOBIG";
    case ENGINE_ECANTOPEN:
        return "SQLITE_CANTOPEN";
    case ENGINE_EMISMATCH:
        return "SQLITE_MISMATCH";
    case ENGINE_EABORT:
        return "SQLITE_ABORT";
    case ENGINE_ECORRUPT:
        return "SQLITE_CORRUPT";
    case ENGINE_EIO:
        return "SQLITE_IOERR";
    case ENGINE_EFULL:
        return "SQLITE_FULL";
    case ENGINE_EBUSY:
        return "SQLITE_BUSY";
    case ENGINE_ENOTADB:
        return "SQLITE_NOTADB";
    case ENGINE_ENOTFOUND:
        return "SQLITE_NOTFOUND";
    default:
        return "SQLITE_ERROR";
    }
}

const char *hrana_error_code(int rc)
{
    /* SQLite's primary code names, which @libsql/client hands to the app as
     * LibsqlError.code. Codes from above the engine (a commit hook's veto
     * from replication or consensus) have no SQLite name: SQLITE_ERROR,
     * except the node's own that have one. */
    if (rc <= ENGINE_ERROR_LAST && rc >= ENGINE_ERROR_FIRST) {
        return engine_code(rc);
    }
    switch (rc) {
    case COMMON_ENOMEM:
        return "SQLITE_NOMEM";
    case COMMON_ETOOBIG:
        return "SQLITE_TOOBIG";
    case NODE_EBUSY:
        return "SQLITE_BUSY";
    case NODE_ENOTLEADER:
        return "SQLITE_READONLY";
    case NODE_EAUTH:
        return "SQLITE_AUTH";
    default:
        return "SQLITE_ERROR";
    }
}
