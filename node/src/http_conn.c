/* SPDX-License-Identifier: MIT
 *
 * http_conn.c: one HTTP connection of the server, from accept to close,
 * and http_respond(), which answers its exchange.
 *
 * One request at a time (http_server.h): a complete request stops the
 * reads (uv_read_stop) and the idle timer and goes to the handler; the
 * answer is written; then the bytes read past that request are parsed
 * and the reads resume, or, when the answer said "Connection: close"
 * (the client asked, HTTP/1.0 without keep-alive, an error answer, the
 * server closing), the connection half-closes and lingers.
 *
 * The idle timer runs while the server waits for the client (no request
 * with the handler, no answer being written), restarted by every read:
 * it closes connections kept open for nothing and clients that send a
 * request too slowly.
 *
 * The client going away while the handler holds the request is not
 * noticed (reads are stopped): the answer's write then fails or the next
 * read does, and the connection closes. A connection closed for any
 * reason while its exchange is out stays allocated (the exchange points
 * to it) until http_respond() drops the answer and frees both.
 */
#include "http_server_int.h"

#include <stdio.h>
#include <string.h>

/* One uv_write and its bytes in one allocation. */
struct conn_write {
    uv_write_t req;
    struct http_server__conn *conn;
    bool is_response; /* the answer (else an interim 100 Continue) */
    size_t size;
    char data[];
};

static void conn_maybe_free(struct http_server__conn *conn)
{
    struct http_server *server = conn->server;

    if (conn->handles_open > 0 || conn->exchange != NULL) {
        return;
    }
    if (conn->prev != NULL) {
        conn->prev->next = conn->next;
    } else {
        server->conns = conn->next;
    }
    if (conn->next != NULL) {
        conn->next->prev = conn->prev;
    }
    ASSERT(server->conn_count > 0);
    server->conn_count--;
    http_server__parse_close(&conn->parse);
    common_buf_close(&conn->leftover);
    common_free(conn);
    http_server__conn_released(server);
}

static void conn_closed_cb(uv_handle_t *handle)
{
    struct http_server__conn *conn = handle->data;

    ASSERT(conn->handles_open > 0);
    conn->handles_open--;
    conn_maybe_free(conn);
}

static void conn_close(struct http_server__conn *conn)
{
    if (conn->state == HTTP_SERVER__CONN_CLOSING) {
        return;
    }
    conn->state = HTTP_SERVER__CONN_CLOSING;
    uv_close((uv_handle_t *)&conn->tcp, conn_closed_cb);
    uv_close((uv_handle_t *)&conn->timer, conn_closed_cb);
}

static void conn_timer_cb(uv_timer_t *timer)
{
    struct http_server__conn *conn = timer->data;

    ASSERT(conn->state == HTTP_SERVER__CONN_READING ||
           conn->state == HTTP_SERVER__CONN_LINGERING);
    LOGF(conn->server->config.log, COMMON_LOG_DEBUG,
         "http connection timed out state=%d", (int)conn->state);
    conn_close(conn);
}

static void conn_timer_start(struct http_server__conn *conn, unsigned ms)
{
    (void)uv_timer_start(&conn->timer, conn_timer_cb, ms, 0);
}

static void conn_alloc_cb(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct http_server__conn *conn = handle->data;

    (void)suggested;
    *buf = uv_buf_init(conn->server->read_buffer,
                       (unsigned)sizeof(conn->server->read_buffer));
}

static struct conn_write *write_alloc(struct http_server__conn *conn,
                                      size_t size, bool is_response)
{
    struct conn_write *write = common_malloc(sizeof(*write) + size);

    if (write != NULL) {
        write->conn = conn;
        write->is_response = is_response;
        write->size = size;
    }
    return write;
}

static void conn_read_cb(uv_stream_t *stream, ssize_t nread,
                         const uv_buf_t *buf);

/* The answer is out and the connection stays: parse what the client sent
 * after the request, then read on. */
static void conn_resume(struct http_server__conn *conn)
{
    uint8_t *data;
    size_t size;
    int rc;

    conn->state = HTTP_SERVER__CONN_READING;
    conn->is_close_after = false;
    conn_timer_start(conn, conn->server->config.idle_timeout_ms);
    if (conn->leftover.size > 0) {
        data = common_buf_detach(&conn->leftover, &size);
        conn_read_cb((uv_stream_t *)&conn->tcp, (ssize_t)size,
                     &(uv_buf_t){.base = (char *)data, .len = size});
        common_free(data);
    }
    if (conn->state == HTTP_SERVER__CONN_READING) {
        rc = uv_read_start((uv_stream_t *)&conn->tcp, conn_alloc_cb,
                           conn_read_cb);
        if (rc != 0) {
            conn_close(conn);
        }
    }
}

static void conn_shutdown_cb(uv_shutdown_t *req, int status)
{
    struct http_server__conn *conn = req->handle->data;

    if (status != 0) {
        conn_close(conn);
    }
}

/* RFC 7230 §6.6: half-close, then drain until the client closes too (or
 * the linger time is over), so no unread byte turns our close into RST. */
static void conn_linger(struct http_server__conn *conn)
{
    unsigned linger_ms = HTTP_SERVER__LINGER_MS;
    int rc;

    conn->state = HTTP_SERVER__CONN_LINGERING;
    if (conn->server->config.idle_timeout_ms < linger_ms) {
        linger_ms = conn->server->config.idle_timeout_ms;
    }
    rc = uv_shutdown(&conn->shutdown, (uv_stream_t *)&conn->tcp,
                     conn_shutdown_cb);
    if (rc == 0) {
        rc = uv_read_start((uv_stream_t *)&conn->tcp, conn_alloc_cb,
                           conn_read_cb);
    }
    if (rc != 0) {
        conn_close(conn);
        return;
    }
    conn_timer_start(conn, linger_ms);
}

static void conn_write_cb(uv_write_t *req, int status)
{
    struct conn_write *write = (struct conn_write *)req;
    struct http_server__conn *conn = write->conn;
    bool is_response = write->is_response;

    common_free(write);
    if (conn->state == HTTP_SERVER__CONN_CLOSING) {
        return;
    }
    if (status != 0) {
        LOGF(conn->server->config.log, COMMON_LOG_DEBUG,
             "http write failed error=%s", uv_strerror(status));
        conn_close(conn);
        return;
    }
    if (!is_response) {
        return;
    }
    ASSERT(conn->state == HTTP_SERVER__CONN_WRITING);
    if (conn->is_close_after || conn->server->is_closing) {
        conn_linger(conn);
        return;
    }
    conn_resume(conn);
}

/* Sends write (taken, also on failure). */
static int write_send(struct conn_write *write)
{
    struct http_server__conn *conn = write->conn;
    uv_buf_t buf = uv_buf_init(write->data, (unsigned)write->size);
    int rc;

    ASSERT(write->size <= UINT32_MAX);
    rc = uv_write(&write->req, (uv_stream_t *)&conn->tcp, &buf, 1,
                  conn_write_cb);
    if (rc != 0) {
        common_free(write);
        return rc;
    }
    if (write->is_response) {
        conn->state = HTTP_SERVER__CONN_WRITING;
    }
    return 0;
}

int http_server__conn_write(struct http_server__conn *conn, const char *data,
                            size_t size, bool is_response)
{
    struct conn_write *write;

    ASSERT(conn != NULL);
    ASSERT(data != NULL);
    write = write_alloc(conn, size, is_response);
    if (write == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(write->data, data, size);
    return write_send(write);
}

/* What an answer's head and body say. */
struct conn_response {
    int status;
    const char *content_type; /* borrowed for the call */
    const void *body;         /* size bytes, borrowed for the call */
    size_t size;
    const char *extra_headers; /* borrowed; NULL: none */
    bool is_head;              /* headers only (RFC 7231 §4.3.2) */
    bool is_http10;            /* keep-alive must be said (RFC 7230 A.1.2) */
};

static const char *reason_of(int status)
{
    const char *reason = http_status_str((enum http_status)status);

    return strcmp(reason, "<unknown>") == 0 ? "Unknown" : reason;
}

/* The head of an answer into out (size bytes; out NULL, size 0: none),
 * returning its length as snprintf() does. */
static int head_format(char *out, size_t size,
                       const struct conn_response *response, const char *length,
                       const char *connection)
{
    return snprintf(
        out, size, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%s%s\r\n",
        response->status, reason_of(response->status), response->content_type,
        length, connection,
        response->extra_headers != NULL ? response->extra_headers : "");
}

/* Writes the answer; the connection is then WRITING. 204 has neither a
 * Content-Length nor a body (RFC 7230 §3.3.2). */
static int conn_answer(struct http_server__conn *conn,
                       const struct conn_response *response)
{
    bool has_length = response->status != 204;
    size_t body_size = has_length && !response->is_head ? response->size : 0;
    const char *connection = "";
    char length[48] = "";
    struct conn_write *write;
    int head_size;

    if (conn->is_close_after) {
        connection = "Connection: close\r\n";
    } else if (response->is_http10) {
        connection = "Connection: keep-alive\r\n";
    }
    if (has_length) {
        snprintf(length, sizeof(length), "Content-Length: %zu\r\n",
                 response->size);
    }
    head_size = head_format(NULL, 0, response, length, connection);
    ASSERT(head_size > 0);
    write = write_alloc(conn, (size_t)head_size + 1 + body_size, true);
    if (write == NULL) {
        return COMMON_ENOMEM;
    }
    head_format(write->data, (size_t)head_size + 1, response, length,
                connection);
    if (body_size > 0) {
        memcpy(write->data + head_size, response->body, body_size);
    }
    write->size = (size_t)head_size + body_size;
    return write_send(write);
}

void http_server__conn_fail(struct http_server__conn *conn, int status,
                            const char *message)
{
    char body[192];
    int size;

    ASSERT(conn->state == HTTP_SERVER__CONN_READING);
    LOGF(conn->server->config.log, COMMON_LOG_DEBUG,
         "http request refused status=%d message=%s", status, message);
    size = snprintf(body, sizeof(body), "{\"message\":\"%s\"}", message);
    ASSERT(size > 0 && (size_t)size < sizeof(body));
    (void)uv_read_stop((uv_stream_t *)&conn->tcp);
    (void)uv_timer_stop(&conn->timer);
    conn->is_close_after = true;
    if (conn_answer(conn, &(struct conn_response){
                              .status = status,
                              .content_type = "application/json",
                              .body = body,
                              .size = (size_t)size,
                          }) != 0) {
        conn_close(conn);
    }
}

static void conn_dispatch(struct http_server__conn *conn)
{
    struct http_server *server = conn->server;
    struct http_exchange *exchange;
    int rc;

    ASSERT(!server->is_closing);
    rc = http_server__exchange_new(conn, &exchange);
    if (rc == NODE_EPROTO) {
        http_server__conn_fail(conn, 400, "malformed HTTP request: bad URL");
        return;
    }
    if (rc != 0) {
        http_server__conn_fail(conn, 503, "out of memory");
        return;
    }
    (void)uv_read_stop((uv_stream_t *)&conn->tcp);
    (void)uv_timer_stop(&conn->timer);
    conn->state = HTTP_SERVER__CONN_PENDING;
    conn->exchange = exchange;
    server->handler(server->ctx, exchange, &exchange->request);
}

/* http-parser's own errors: its header limit (80 KiB) is a 431 too; a
 * Transfer-Encoding other than chunked is one we do not implement (RFC
 * 7230 §3.3.1: 501); anything else is malformed. */
static void conn_fail_errno(struct http_server__conn *conn,
                            enum http_errno error)
{
    char message[128];

    if (error == HPE_HEADER_OVERFLOW) {
        snprintf(message, sizeof(message),
                 "request headers larger than %zu bytes",
                 conn->server->config.max_header_bytes);
        http_server__conn_fail(conn, 431, message);
    } else if (error == HPE_INVALID_TRANSFER_ENCODING) {
        http_server__conn_fail(conn, 501,
                               "transfer coding not implemented: only "
                               "chunked is taken");
    } else {
        snprintf(message, sizeof(message), "malformed HTTP request: %s",
                 http_errno_description(error));
        http_server__conn_fail(conn, 400, message);
    }
}

static void conn_feed(struct http_server__conn *conn, const char *data,
                      size_t size)
{
    struct http_server__parse *parse = &conn->parse;
    enum http_errno error;
    size_t parsed;

    parsed = http_parser_execute(&conn->parser, &http_server__parse_settings,
                                 data, size);
    if (parse->error_status != 0) {
        http_server__conn_fail(conn, parse->error_status, parse->error_message);
        return;
    }
    if (parse->is_complete) {
        ASSERT(parsed <= size);
        http_parser_pause(&conn->parser, 0);
        /* Bytes that cannot be kept would desynchronize the next
         * request: close after this answer instead. */
        if (common_buf_append(&conn->leftover, data + parsed, size - parsed) !=
            0) {
            conn->is_close_after = true;
        }
        conn_dispatch(conn);
        return;
    }
    error = HTTP_PARSER_ERRNO(&conn->parser);
    if (error != HPE_OK) {
        conn_fail_errno(conn, error);
    }
}

static void conn_read_cb(uv_stream_t *stream, ssize_t nread,
                         const uv_buf_t *buf)
{
    struct http_server__conn *conn = stream->data;

    if (nread == 0) {
        return;
    }
    if (nread < 0) {
        LOGF(conn->server->config.log, COMMON_LOG_DEBUG,
             "http connection ended reason=%s", uv_strerror((int)nread));
        conn_close(conn);
        return;
    }
    if (conn->state == HTTP_SERVER__CONN_LINGERING) {
        return;
    }
    ASSERT(conn->state == HTTP_SERVER__CONN_READING);
    conn_timer_start(conn, conn->server->config.idle_timeout_ms);
    conn_feed(conn, buf->base, (size_t)nread);
}

/* A header text the handler gives must not split the answer. */
static bool header_text_is_valid(const char *text)
{
    return strpbrk(text, "\r\n") == NULL;
}

/* Whole lines, each ending in CRLF, and no empty one (which would end
 * the head early). */
static bool extra_headers_are_valid(const char *extra)
{
    size_t size = extra != NULL ? strlen(extra) : 0;

    if (size == 0) {
        return true;
    }
    return size >= 2 && strcmp(extra + size - 2, "\r\n") == 0 &&
           strstr(extra, "\r\n\r\n") == NULL && extra[0] != '\r';
}

void http_respond(struct http_exchange *exchange, int status,
                  const char *content_type, const void *body, size_t size,
                  const char *extra_headers)
{
    struct http_server__conn *conn;

    ASSERT(exchange != NULL);
    ASSERT(status >= 200 && status <= 599);
    ASSERT(content_type != NULL);
    ASSERT(header_text_is_valid(content_type));
    ASSERT(body != NULL || size == 0);
    ASSERT(extra_headers_are_valid(extra_headers));
    conn = exchange->conn;
    ASSERT(conn->exchange == exchange);
    conn->exchange = NULL;
    if (conn->state == HTTP_SERVER__CONN_PENDING) {
        conn->is_close_after = conn->is_close_after ||
                               !exchange->is_keep_alive ||
                               conn->server->is_closing;
        if (conn_answer(conn, &(struct conn_response){
                                  .status = status,
                                  .content_type = content_type,
                                  .body = body,
                                  .size = size,
                                  .extra_headers = extra_headers,
                                  .is_head = exchange->is_head,
                                  .is_http10 = exchange->is_http10,
                              }) != 0) {
            conn_close(conn);
        }
    }
    http_server__exchange_free(exchange);
    conn_maybe_free(conn);
}

void http_server__conn_shutdown(struct http_server__conn *conn)
{
    switch (conn->state) {
    case HTTP_SERVER__CONN_READING:
        conn_close(conn);
        break;
    case HTTP_SERVER__CONN_PENDING:
    case HTTP_SERVER__CONN_WRITING:
        conn->is_close_after = true;
        break;
    case HTTP_SERVER__CONN_LINGERING:
    case HTTP_SERVER__CONN_CLOSING:
        break;
    }
}

int http_server__conn_accept(struct http_server *server)
{
    struct http_server__conn *conn;
    int rc;

    conn = common_calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return COMMON_ENOMEM;
    }
    conn->server = server;
    rc = uv_tcp_init(server->loop, &conn->tcp);
    if (rc != 0) {
        common_free(conn);
        return rc;
    }
    (void)uv_timer_init(server->loop, &conn->timer);
    conn->tcp.data = conn;
    conn->timer.data = conn;
    conn->handles_open = 2;
    conn->next = server->conns;
    if (conn->next != NULL) {
        conn->next->prev = conn;
    }
    server->conns = conn;
    server->conn_count++;
    http_parser_init(&conn->parser, HTTP_REQUEST);
    conn->parser.data = conn;
    http_server__parse_init(&conn->parse, &server->config);
    common_buf_init(&conn->leftover, HTTP_SERVER__READ_BUFFER_SIZE);
    rc = uv_accept((uv_stream_t *)&server->listener, (uv_stream_t *)&conn->tcp);
    if (rc == 0) {
        (void)uv_tcp_nodelay(&conn->tcp, 1);
        rc = uv_read_start((uv_stream_t *)&conn->tcp, conn_alloc_cb,
                           conn_read_cb);
    }
    if (rc != 0) {
        conn_close(conn);
        return rc;
    }
    conn_timer_start(conn, server->config.idle_timeout_ms);
    return 0;
}
