/* SPDX-License-Identifier: MIT
 *
 * http_server.c: the HTTP server's listener: the address it binds, the
 * connections it accepts or refuses (past max_connections), and its
 * close, which ends once every handle is closed and every exchange
 * answered. The connections themselves are http_conn.c's; the requests'
 * parsing is http_parse.c's.
 *
 * Addresses are numeric ("127.0.0.1:8080", "[::1]:8080"): a name would
 * need resolving, which blocks the loop; the node's configuration can
 * resolve once, up front.
 */
#include "http_server.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "http_server_int.h"

/* The kernel's queue of connections not yet accepted. */
#define HTTP_SERVER_BACKLOG 511

static int port_parse(const char *text, int *out)
{
    int port = 0;

    if (*text == '\0') {
        return NODE_EINVAL;
    }
    for (; *text != '\0'; text++) {
        if (*text < '0' || *text > '9') {
            return NODE_EINVAL;
        }
        port = port * 10 + (*text - '0');
        if (port > 65535) {
            return NODE_EINVAL;
        }
    }
    *out = port;
    return 0;
}

static int address_parse(const char *text, struct sockaddr_storage *out)
{
    char host[HTTP_SERVER__ADDRESS_SIZE];
    const char *colon = strrchr(text, ':');
    size_t host_size;
    int port;
    int rc;

    if (colon == NULL || colon == text) {
        return NODE_EINVAL;
    }
    host_size = (size_t)(colon - text);
    if (host_size >= sizeof(host) || port_parse(colon + 1, &port) != 0) {
        return NODE_EINVAL;
    }
    memset(out, 0, sizeof(*out));
    if (text[0] == '[' && host_size > 2 && text[host_size - 1] == ']') {
        memcpy(host, text + 1, host_size - 2);
        host[host_size - 2] = '\0';
        rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)out);
    } else {
        memcpy(host, text, host_size);
        host[host_size] = '\0';
        rc = uv_ip4_addr(host, port, (struct sockaddr_in *)out);
    }
    return rc == 0 ? 0 : NODE_EINVAL;
}

static void address_format(const struct sockaddr_storage *address, char *out,
                           size_t size)
{
    char host[HTTP_SERVER__ADDRESS_SIZE] = "?";

    if (address->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)address;

        uv_ip6_name(in6, host, sizeof(host));
        snprintf(out, size, "[%s]:%d", host, ntohs(in6->sin6_port));
    } else {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)address;

        uv_ip4_name(in4, host, sizeof(host));
        snprintf(out, size, "%s:%d", host, ntohs(in4->sin_port));
    }
}

/* Frees server once it is closing and nothing of it is left. */
static void server_maybe_free(struct http_server *server)
{
    void (*done)(void *ctx) = server->done;
    void *done_ctx = server->done_ctx;

    if (!server->is_closing || server->handles_open > 0 ||
        server->conns != NULL) {
        return;
    }
    ASSERT(server->conn_count == 0);
    common_free(server);
    if (done != NULL) {
        done(done_ctx);
    }
}

void http_server__conn_released(struct http_server *server)
{
    server_maybe_free(server);
}

static void server_handle_closed_cb(uv_handle_t *handle)
{
    struct http_server *server = handle->data;

    ASSERT(server->handles_open > 0);
    server->handles_open--;
    if (handle != (uv_handle_t *)&server->listener) {
        common_free(handle);
    }
    server_maybe_free(server);
}

/* libuv has accepted the socket already and stops listening until
 * uv_accept() takes it, so a refused connection is accepted into a
 * handle of its own and closed. */
static void server_refuse(struct http_server *server)
{
    uv_tcp_t *tcp = common_malloc(sizeof(*tcp));

    if (tcp == NULL) {
        LOGF(server->config.log, COMMON_LOG_ERROR,
             "http accept paused: out of memory");
        return;
    }
    (void)uv_tcp_init(server->loop, tcp);
    tcp->data = server;
    server->handles_open++;
    (void)uv_accept((uv_stream_t *)&server->listener, (uv_stream_t *)tcp);
    uv_close((uv_handle_t *)tcp, server_handle_closed_cb);
}

static void server_connection_cb(uv_stream_t *listener, int status)
{
    struct http_server *server = listener->data;
    int rc;

    if (status != 0) {
        LOGF(server->config.log, COMMON_LOG_WARN, "http accept failed error=%s",
             uv_strerror(status));
        return;
    }
    if (server->conn_count >= server->config.max_connections) {
        LOGF(server->config.log, COMMON_LOG_DEBUG,
             "http connection refused connections=%u", server->conn_count);
        server_refuse(server);
        return;
    }
    rc = http_server__conn_accept(server);
    if (rc == COMMON_ENOMEM) {
        server_refuse(server);
    } else if (rc != 0) {
        LOGF(server->config.log, COMMON_LOG_WARN, "http accept failed error=%s",
             uv_strerror(rc));
    }
}

/* The config with its zeros replaced by the defaults; NODE_EINVAL for a
 * body limit whose NUL would not fit in a size_t. */
static int config_resolve(const struct http_server_config *config,
                          struct http_server_config *out)
{
    *out = *config;
    if (out->max_body_bytes == 0) {
        out->max_body_bytes = HTTP_SERVER_MAX_BODY_BYTES_DEFAULT;
    }
    if (out->max_header_bytes == 0) {
        out->max_header_bytes = HTTP_SERVER_MAX_HEADER_BYTES_DEFAULT;
    }
    if (out->idle_timeout_ms == 0) {
        out->idle_timeout_ms = HTTP_SERVER_IDLE_TIMEOUT_MS_DEFAULT;
    }
    if (out->max_connections == 0) {
        out->max_connections = HTTP_SERVER_MAX_CONNECTIONS_DEFAULT;
    }
    return out->max_body_bytes < SIZE_MAX / 2 ? 0 : NODE_EINVAL;
}

/* Binds and listens; on failure the caller closes the listener. */
static int server_listen(struct http_server *server,
                         const struct sockaddr_storage *address)
{
    struct sockaddr_storage bound;
    int bound_size = (int)sizeof(bound);
    int rc;

    rc = uv_tcp_bind(&server->listener, (const struct sockaddr *)address, 0);
    if (rc == 0) {
        rc = uv_listen((uv_stream_t *)&server->listener, HTTP_SERVER_BACKLOG,
                       server_connection_cb);
    }
    if (rc == 0) {
        rc = uv_tcp_getsockname(&server->listener, (struct sockaddr *)&bound,
                                &bound_size);
    }
    if (rc != 0) {
        return rc;
    }
    address_format(&bound, server->address, sizeof(server->address));
    return 0;
}

int http_server_start(struct uv_loop_s *loop, const char *address,
                      const struct http_server_config *config,
                      http_handler_cb handler, void *ctx,
                      struct http_server **out)
{
    struct sockaddr_storage storage;
    struct http_server *server;
    int rc;

    ASSERT(loop != NULL);
    ASSERT(address != NULL);
    ASSERT(config != NULL);
    ASSERT(handler != NULL);
    ASSERT(out != NULL);
    if (address_parse(address, &storage) != 0) {
        LOGF(config->log, COMMON_LOG_ERROR, "http bad address address=%s",
             address);
        return NODE_EINVAL;
    }
    server = common_calloc(1, sizeof(*server));
    if (server == NULL) {
        return COMMON_ENOMEM;
    }
    if (config_resolve(config, &server->config) != 0) {
        common_free(server);
        return NODE_EINVAL;
    }
    server->loop = loop;
    server->handler = handler;
    server->ctx = ctx;
    (void)uv_tcp_init(loop, &server->listener);
    server->listener.data = server;
    server->handles_open = 1;
    rc = server_listen(server, &storage);
    if (rc != 0) {
        LOGF(config->log, COMMON_LOG_ERROR,
             "http listen failed address=%s error=%s", address,
             uv_strerror(rc));
        /* The handle must be closed before its memory goes: the loop's
         * next turn frees server. */
        server->is_closing = true;
        uv_close((uv_handle_t *)&server->listener, server_handle_closed_cb);
        return NODE_EIO;
    }
    common_sigpipe_ignore_default();
    LOGF(config->log, COMMON_LOG_INFO, "http listening address=%s",
         server->address);
    *out = server;
    return 0;
}

int http_server_address(const struct http_server *server, char *out,
                        size_t size)
{
    ASSERT(server != NULL);
    ASSERT(out != NULL);
    if (strlen(server->address) >= size) {
        return COMMON_ETOOBIG;
    }
    memcpy(out, server->address, strlen(server->address) + 1);
    return 0;
}

void http_server_close(struct http_server *server, void (*done)(void *ctx),
                       void *ctx)
{
    struct http_server__conn *conn;
    struct http_server__conn *next;

    ASSERT(server != NULL);
    ASSERT(!server->is_closing);
    server->is_closing = true;
    server->done = done;
    server->done_ctx = ctx;
    uv_close((uv_handle_t *)&server->listener, server_handle_closed_cb);
    for (conn = server->conns; conn != NULL; conn = next) {
        next = conn->next;
        http_server__conn_shutdown(conn);
    }
}
