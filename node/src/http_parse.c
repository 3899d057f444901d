/* SPDX-License-Identifier: MIT
 *
 * http_parse.c: the HTTP server's http-parser callbacks, which gather one
 * request (URL, the few headers the node reads, body) into bounded
 * buffers, and the exchange built from them for the handler.
 *
 * http-parser (2.9, HTTP_REQUEST mode) checks the syntax and decodes
 * chunked bodies; these callbacks enforce the server's limits. Header
 * bytes (request line and fields, with 4 bytes a field for ": " and CRLF)
 * past max_header_bytes stop the parser with 431 (RFC 6585 §5); a body
 * past max_body_bytes stops it with 413 (RFC 7231 §6.5.11), at once from
 * Content-Length or when a chunk crosses the limit. Header names compare
 * case-insensitively (RFC 7230 §3.2); a repeated Authorization,
 * Content-Type or Expect is refused (400), since neither is a list
 * (§3.2.2) and a proxy and the node might otherwise read different ones.
 *
 * A complete request pauses the parser (http_parser_pause() from
 * on_message_complete), so http_parser_execute() returns where the request
 * ended and the connection keeps the bytes after it for later: one
 * request at a time per connection.
 */
#include "http_server_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const header_names[HTTP_SERVER__HEADER_COUNT] = {
    [HTTP_SERVER__HEADER_AUTHORIZATION] = "Authorization",
    [HTTP_SERVER__HEADER_CONTENT_TYPE] = "Content-Type",
    [HTTP_SERVER__HEADER_EXPECT] = "Expect",
};

static const char continue_response[] = "HTTP/1.1 100 Continue\r\n\r\n";

void http_server__parse_init(struct http_server__parse *parse,
                             const struct http_server_config *config)
{
    ASSERT(parse != NULL);
    ASSERT(config != NULL);
    memset(parse, 0, sizeof(*parse));
    common_buf_init(&parse->url, config->max_header_bytes);
    for (int i = 0; i < HTTP_SERVER__HEADER_COUNT; i++) {
        common_buf_init(&parse->headers[i], config->max_header_bytes);
    }
    common_buf_init(&parse->body, config->max_body_bytes + 1);
}

void http_server__parse_close(struct http_server__parse *parse)
{
    ASSERT(parse != NULL);
    common_buf_close(&parse->url);
    for (int i = 0; i < HTTP_SERVER__HEADER_COUNT; i++) {
        common_buf_close(&parse->headers[i]);
    }
    common_buf_close(&parse->body);
}

int http_server__parse_fail(struct http_server__conn *conn, int status,
                            const char *message)
{
    struct http_server__parse *parse = &conn->parse;

    ASSERT(status >= 400);
    ASSERT(strpbrk(message, "\"\\") == NULL);
    if (parse->error_status == 0) {
        parse->error_status = status;
        snprintf(parse->error_message, sizeof(parse->error_message), "%s",
                 message);
    }
    return -1;
}

/* Appends bytes the limits already allow: a failure is out of memory. */
static int parse_append(struct http_server__conn *conn, struct common_buf *buf,
                        const char *at, size_t size)
{
    if (common_buf_append(buf, at, size) != 0) {
        return http_server__parse_fail(conn, 503, "out of memory");
    }
    return 0;
}

static int header_bytes_add(struct http_server__conn *conn, size_t size)
{
    struct http_server__parse *parse = &conn->parse;
    size_t max = conn->server->config.max_header_bytes;
    char message[96];

    parse->header_bytes += size;
    if (parse->header_bytes > max) {
        snprintf(message, sizeof(message),
                 "request headers larger than %zu bytes", max);
        return http_server__parse_fail(conn, 431, message);
    }
    return 0;
}

static int on_url(http_parser *parser, const char *at, size_t size)
{
    struct http_server__conn *conn = parser->data;
    int rc;

    rc = header_bytes_add(conn, size);
    if (rc != 0) {
        return rc;
    }
    return parse_append(conn, &conn->parse.url, at, size);
}

static int on_header_field(http_parser *parser, const char *at, size_t size)
{
    struct http_server__conn *conn = parser->data;
    struct http_server__parse *parse = &conn->parse;
    size_t overhead = 0;
    int rc;

    if (parse->state != HTTP_SERVER__IN_FIELD) {
        parse->state = HTTP_SERVER__IN_FIELD;
        parse->field_size = 0;
        parse->value = NULL;
        overhead = 4;
    }
    rc = header_bytes_add(conn, size + overhead);
    if (rc != 0) {
        return rc;
    }
    if (parse->field_size + size <= sizeof(parse->field)) {
        memcpy(parse->field + parse->field_size, at, size);
        parse->field_size += size;
    } else {
        parse->field_size = sizeof(parse->field) + 1;
    }
    return 0;
}

/* The field's name is whole (its value began): is it one the node reads? */
static int field_resolve(struct http_server__conn *conn)
{
    struct http_server__parse *parse = &conn->parse;
    char message[64];

    for (int i = 0; i < HTTP_SERVER__HEADER_COUNT; i++) {
        const char *name = header_names[i];

        if (strlen(name) != parse->field_size ||
            strncasecmp(name, parse->field, parse->field_size) != 0) {
            continue;
        }
        if ((parse->seen & (1u << i)) != 0) {
            snprintf(message, sizeof(message),
                     "malformed HTTP request: repeated %s header", name);
            return http_server__parse_fail(conn, 400, message);
        }
        parse->seen |= 1u << i;
        parse->value = &parse->headers[i];
    }
    return 0;
}

static int on_header_value(http_parser *parser, const char *at, size_t size)
{
    struct http_server__conn *conn = parser->data;
    struct http_server__parse *parse = &conn->parse;
    int rc;

    if (parse->state == HTTP_SERVER__IN_FIELD) {
        parse->state = HTTP_SERVER__IN_VALUE;
        rc = field_resolve(conn);
        if (rc != 0) {
            return rc;
        }
    }
    rc = header_bytes_add(conn, size);
    if (rc != 0 || parse->value == NULL) {
        return rc;
    }
    return parse_append(conn, parse->value, at, size);
}

/* RFC 7231 §5.1.1: a client that sent "Expect: 100-continue" waits for
 * an interim 100 before the body (curl does, for a second). A write that
 * fails is left alone: the client then sends after its own wait, and the
 * broken socket shows on the next read. */
static void expect_answer(struct http_server__conn *conn, http_parser *parser)
{
    struct common_buf *expect =
        &conn->parse.headers[HTTP_SERVER__HEADER_EXPECT];
    static const char token[] = "100-continue";

    if (expect->size != sizeof(token) - 1 ||
        strncasecmp((const char *)expect->data, token, expect->size) != 0) {
        return;
    }
    if (parser->http_major == 1 && parser->http_minor == 0) {
        return;
    }
    (void)http_server__conn_write(conn, continue_response,
                                  sizeof(continue_response) - 1, false);
}

static int on_headers_complete(http_parser *parser)
{
    struct http_server__conn *conn = parser->data;
    size_t max = conn->server->config.max_body_bytes;
    char message[96];

    if ((parser->flags & F_CHUNKED) == 0 &&
        parser->content_length != ULLONG_MAX && parser->content_length > max) {
        snprintf(message, sizeof(message), "request body larger than %zu bytes",
                 max);
        return http_server__parse_fail(conn, 413, message);
    }
    expect_answer(conn, parser);
    return 0;
}

static int on_body(http_parser *parser, const char *at, size_t size)
{
    struct http_server__conn *conn = parser->data;
    size_t max = conn->server->config.max_body_bytes;
    char message[96];

    if (size > max - conn->parse.body.size) {
        snprintf(message, sizeof(message), "request body larger than %zu bytes",
                 max);
        return http_server__parse_fail(conn, 413, message);
    }
    return parse_append(conn, &conn->parse.body, at, size);
}

static int on_message_complete(http_parser *parser)
{
    struct http_server__conn *conn = parser->data;

    conn->parse.is_complete = true;
    conn->parse.is_keep_alive =
        http_should_keep_alive(parser) != 0 && parser->upgrade == 0;
    http_parser_pause(parser, 1);
    return 0;
}

const http_parser_settings http_server__parse_settings = {
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* A header's value without the trailing whitespace http-parser leaves
 * (RFC 7230 §3.2.4: OWS is not part of the value). */
static size_t value_size(const struct common_buf *buf)
{
    size_t size = buf->size;

    while (size > 0 &&
           (buf->data[size - 1] == ' ' || buf->data[size - 1] == '\t')) {
        size--;
    }
    return size;
}

/* Copies size bytes of text to *cursor with a NUL; returns the copy. */
static const char *strings_put(char **cursor, const void *text, size_t size)
{
    char *copy = *cursor;

    if (size > 0) {
        memcpy(copy, text, size);
    }
    copy[size] = '\0';
    *cursor = copy + size + 1;
    return copy;
}

static void url_part(const struct http_parser_url *url, int field,
                     const char *text, const char **out, size_t *out_size)
{
    *out = "";
    *out_size = 0;
    if ((url->field_set & (1u << field)) != 0) {
        *out = text + url->field_data[field].off;
        *out_size = url->field_data[field].len;
    }
}

/* Moves the body out with a NUL after it (the limit left room for it). */
static int body_take(struct common_buf *body, char **out, size_t *out_size)
{
    size_t size;
    int rc;

    rc = common_buf_append_byte(body, 0);
    if (rc != 0) {
        return rc;
    }
    *out = (char *)common_buf_detach(body, &size);
    *out_size = size - 1;
    return 0;
}

static void parse_reset(struct http_server__conn *conn)
{
    http_server__parse_close(&conn->parse);
    http_server__parse_init(&conn->parse, &conn->server->config);
}

int http_server__exchange_new(struct http_server__conn *conn,
                              struct http_exchange **out)
{
    struct http_server__parse *parse = &conn->parse;
    struct common_buf *headers = parse->headers;
    struct http_exchange *exchange;
    struct http_parser_url url;
    const char *text = (const char *)parse->url.data;
    const char *path;
    const char *query;
    size_t path_size;
    size_t query_size;
    char *cursor;

    ASSERT(parse->is_complete);
    http_parser_url_init(&url);
    if (parse->url.size == 0 ||
        http_parser_parse_url(text, parse->url.size,
                              conn->parser.method == HTTP_CONNECT, &url) != 0) {
        return NODE_EPROTO;
    }
    url_part(&url, UF_PATH, text, &path, &path_size);
    url_part(&url, UF_QUERY, text, &query, &query_size);
    exchange = common_malloc(
        sizeof(*exchange) + path_size + query_size +
        value_size(&headers[HTTP_SERVER__HEADER_AUTHORIZATION]) +
        value_size(&headers[HTTP_SERVER__HEADER_CONTENT_TYPE]) + 4);
    if (exchange == NULL) {
        return COMMON_ENOMEM;
    }
    if (body_take(&parse->body, &exchange->body,
                  &exchange->request.body_size) != 0) {
        common_free(exchange);
        return COMMON_ENOMEM;
    }
    cursor = exchange->strings;
    exchange->request.path = strings_put(&cursor, path, path_size);
    exchange->request.query = strings_put(&cursor, query, query_size);
    exchange->request.authorization =
        strings_put(&cursor, headers[HTTP_SERVER__HEADER_AUTHORIZATION].data,
                    value_size(&headers[HTTP_SERVER__HEADER_AUTHORIZATION]));
    exchange->request.content_type =
        strings_put(&cursor, headers[HTTP_SERVER__HEADER_CONTENT_TYPE].data,
                    value_size(&headers[HTTP_SERVER__HEADER_CONTENT_TYPE]));
    exchange->request.method =
        http_method_str((enum http_method)conn->parser.method);
    exchange->request.body = exchange->body;
    exchange->conn = conn;
    exchange->is_head = conn->parser.method == HTTP_HEAD;
    exchange->is_keep_alive = parse->is_keep_alive;
    exchange->is_http10 =
        conn->parser.http_major == 1 && conn->parser.http_minor == 0;
    parse_reset(conn);
    *out = exchange;
    return 0;
}

void http_server__exchange_free(struct http_exchange *exchange)
{
    ASSERT(exchange != NULL);
    common_free(exchange->body);
    common_free(exchange);
}
