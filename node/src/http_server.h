/* SPDX-License-Identifier: MIT
 *
 * http_server.h: the node's HTTP/1.1 server on a libuv loop, parsing with
 * http-parser (Debian's libhttp-parser). It serves what `sinew serve`
 * answers (Hrana pipelines, health, metrics, status, cluster admin): small
 * JSON or text requests and responses, no TLS (put a proxy in front for
 * that), keep-alive, one request at a time per connection (HTTP/1.1
 * pipelining: the next request on a connection is read only after the
 * previous one was answered).
 *
 * A request reaches the handler whole (headers and body); the handler
 * answers it with http_respond(), at once or later (from the loop thread),
 * exactly once. Bad requests are answered by the server itself and never
 * reach the handler: malformed HTTP (400), a body past max_body_bytes
 * (413), headers past max_header_bytes (431), a method or transfer coding
 * it does not take (Transfer-Encoding other than chunked: 501). Every error
 * body is JSON {"message": "..."} with Content-Type application/json.
 *
 * Threads: everything runs on the loop's thread.
 */
#ifndef SINEW_NODE_HTTP_SERVER_H
#define SINEW_NODE_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "node.h"

struct uv_loop_s;

#define HTTP_SERVER_MAX_BODY_BYTES_DEFAULT ((size_t)16 << 20)
#define HTTP_SERVER_MAX_HEADER_BYTES_DEFAULT ((size_t)64 << 10)
#define HTTP_SERVER_IDLE_TIMEOUT_MS_DEFAULT 60000u
#define HTTP_SERVER_MAX_CONNECTIONS_DEFAULT 1024u

/* One request, borrowed by the handler until it calls http_respond() (the
 * strings and body stay valid until then, also if the client went away). */
struct http_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* decoded of nothing: the URL's path, no query */
    const char *query;  /* the part after '?', "" when none */
    /* Header values ("" when absent): the ones the node uses. */
    const char *authorization;
    const char *content_type;
    const char *body; /* body_size bytes, NUL-terminated after them */
    size_t body_size;
};

struct http_exchange; /* one request awaiting its answer */

/* Called on the loop thread for each request. */
typedef void (*http_handler_cb)(void *ctx, struct http_exchange *exchange,
                                const struct http_request *request);

struct http_server_config {
    size_t max_body_bytes;   /* 0: the default above */
    size_t max_header_bytes; /* 0: the default */
    /* A connection with no request in progress is closed after this; 0:
     * the default. */
    unsigned idle_timeout_ms;
    unsigned max_connections;     /* more are closed on accept; 0: default */
    const struct common_log *log; /* borrowed while open; NULL: silent */
};

struct http_server;

/* Listens on address ("host:port", IPv4 or [IPv6]; port 0 picks one) on
 * loop (borrowed until closed). config is copied; handler and ctx kept.
 * 0, NODE_EINVAL (bad address), NODE_EIO (bind/listen failed: the
 * message is logged), COMMON_ENOMEM. *out is the caller's, released by
 * http_server_close(). */
int http_server_start(struct uv_loop_s *loop, const char *address,
                      const struct http_server_config *config,
                      http_handler_cb handler, void *ctx,
                      struct http_server **out);

/* The address actually listened on ("127.0.0.1:8080"), into out. */
int http_server_address(const struct http_server *server, char *out,
                        size_t size);

/* Answers exchange (which is then freed): status, a Content-Type (exact,
 * e.g. "application/json": clients compare it), body of size bytes
 * (copied). extra_headers: NULL or more header lines, each ending in
 * "\r\n" (e.g. "WWW-Authenticate: Bearer\r\n"). If the client has gone,
 * the answer is dropped. Loop thread only. */
void http_respond(struct http_exchange *exchange, int status,
                  const char *content_type, const void *body, size_t size,
                  const char *extra_headers);

/* Stops accepting, closes idle connections, lets exchanges in progress be
 * answered (each connection closes after its answer), then calls done(ctx)
 * once everything is released and frees server. No handler call after
 * this returns. */
void http_server_close(struct http_server *server, void (*done)(void *ctx),
                       void *ctx);

#endif /* SINEW_NODE_HTTP_SERVER_H */
