/* SPDX-License-Identifier: MIT
 *
 * http_server_int.h: what the HTTP server's files share (http_server.c:
 * listening, accepting, closing; http_conn.c: one connection's life;
 * http_parse.c: http-parser's callbacks and the request they build).
 * Nothing outside these files includes it.
 *
 * Ownership: the server owns its connections (a list); a connection owns
 * its parse state, its leftover bytes and, while the handler holds it, its
 * exchange. A connection's memory goes only when both of its handles are
 * closed (handles_open == 0) and no exchange refers to it (exchange ==
 * NULL): that is the refcount that keeps an exchange valid after the
 * client went away. The server's memory goes when it is closing, its
 * listener and reject handles are closed and its list is empty.
 */
#ifndef SINEW_NODE_HTTP_SERVER_INT_H
#define SINEW_NODE_HTTP_SERVER_INT_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "http_server.h"

/* Bytes read at once: one shared buffer per server, since libuv hands
 * each read to its callback before the next allocation (one thread). */
#define HTTP_SERVER__READ_BUFFER_SIZE ((size_t)64 << 10)

/* After an answer sent with "Connection: close" the server half-closes
 * and drains what the client still sends for this long (capped by the
 * idle timeout) before closing: closing with unread bytes makes the
 * kernel send RST, which can destroy the answer in flight (RFC 7230
 * §6.6, "lingering close"). */
#define HTTP_SERVER__LINGER_MS 2000u

/* The longest header name the server looks at ("authorization"); longer
 * names are skipped without being stored. */
#define HTTP_SERVER__FIELD_SIZE 32

/* "[ffff:...:ffff]:65535" and a NUL. */
#define HTTP_SERVER__ADDRESS_SIZE 64

/* Headers the parser keeps, one bit each so a repeat is refused. */
enum http_server__header {
    HTTP_SERVER__HEADER_AUTHORIZATION = 0,
    HTTP_SERVER__HEADER_CONTENT_TYPE = 1,
    HTTP_SERVER__HEADER_EXPECT = 2,
    HTTP_SERVER__HEADER_COUNT = 3,
};

/* Where http-parser's header callbacks are (field and value arrive in
 * pieces when a read splits them). */
enum http_server__header_state {
    HTTP_SERVER__IN_NONE = 0,
    HTTP_SERVER__IN_FIELD = 1,
    HTTP_SERVER__IN_VALUE = 2,
};

/* One request being parsed. Every buffer is bounded: url and header
 * values by max_header_bytes, body by max_body_bytes + 1 (its NUL). */
struct http_server__parse {
    struct common_buf url;
    struct common_buf headers[HTTP_SERVER__HEADER_COUNT];
    struct common_buf body;
    char field[HTTP_SERVER__FIELD_SIZE]; /* the current header's name */
    size_t field_size;                   /* bytes in field; past it: skip */
    struct common_buf *value; /* the current value goes here; NULL: dropped */
    unsigned seen;            /* bit per enum http_server__header */
    enum http_server__header_state state;
    size_t header_bytes; /* request line and headers so far */
    bool is_complete;    /* on_message_complete ran (parser paused) */
    bool is_keep_alive;  /* as http_should_keep_alive() said then */
    /* Set by a callback that stopped the parser with an answer of its
     * own (413, 431, 400 for a repeated header); 0: none. */
    int error_status;
    char error_message[128];
};

/* A connection's states; the transitions are in http_conn.c:
 * READING -> PENDING (a request went to the handler) -> WRITING (its
 * answer) -> READING (keep-alive) or LINGERING (close after answer);
 * READING -> WRITING (the server's own error answer) -> LINGERING; any
 * -> CLOSING (uv_close called; terminal). */
enum http_server__conn_state {
    HTTP_SERVER__CONN_READING = 0,
    HTTP_SERVER__CONN_PENDING = 1,
    HTTP_SERVER__CONN_WRITING = 2,
    HTTP_SERVER__CONN_LINGERING = 3,
    HTTP_SERVER__CONN_CLOSING = 4,
};

struct http_server__conn {
    struct http_server *server;
    uv_tcp_t tcp;
    uv_timer_t timer;       /* idle timeout, then the linger timeout */
    uv_shutdown_t shutdown; /* the half-close before lingering */
    http_parser parser;
    struct http_server__parse parse;
    struct common_buf leftover;     /* bytes read past the request handed out */
    struct http_exchange *exchange; /* the handler's, or NULL */
    enum http_server__conn_state state;
    int handles_open;    /* tcp and timer, until their close callbacks */
    bool is_close_after; /* the answer being written ends the connection */
    struct http_server__conn *prev;
    struct http_server__conn *next;
};

/* A request awaiting its answer. strings holds path, query,
 * authorization and content_type, each NUL-terminated; the request's
 * pointers point there and into body. */
struct http_exchange {
    struct http_server__conn *conn; /* kept allocated while this lives */
    struct http_request request;
    bool is_head;       /* HEAD: the answer's headers only */
    bool is_keep_alive; /* the client keeps the connection (RFC 7230 §6.3) */
    bool is_http10;     /* keep-alive must then be said in the answer */
    char *body;         /* owned: body_size bytes and a NUL */
    char strings[];
};

struct http_server {
    uv_loop_t *loop; /* borrowed */
    uv_tcp_t listener;
    struct http_server_config config; /* zeros replaced by the defaults */
    http_handler_cb handler;
    void *ctx;
    char address[HTTP_SERVER__ADDRESS_SIZE]; /* as listened on */
    struct http_server__conn *conns;
    unsigned conn_count; /* conns in the list */
    int handles_open;    /* listener and connections being refused */
    bool is_closing;
    void (*done)(void *ctx);
    void *done_ctx;
    char read_buffer[HTTP_SERVER__READ_BUFFER_SIZE];
};

/* http_parse.c */

/* The parser callbacks; a parser's data is its connection. */
extern const http_parser_settings http_server__parse_settings;

void http_server__parse_init(struct http_server__parse *parse,
                             const struct http_server_config *config);
void http_server__parse_close(struct http_server__parse *parse);

/* The exchange for the request just parsed (its buffers moved into it,
 * parse reset for the next request). 0 or COMMON_ENOMEM; NODE_EPROTO for
 * a URL http_parser_parse_url() refuses. *out is the caller's. */
int http_server__exchange_new(struct http_server__conn *conn,
                              struct http_exchange **out);
void http_server__exchange_free(struct http_exchange *exchange);

/* Stops parsing with the server's own answer; returns -1 for a callback
 * to return. message is copied (at most 127 bytes, no '"' or '\\'). */
int http_server__parse_fail(struct http_server__conn *conn, int status,
                            const char *message);

/* http_conn.c */

/* Accepts a pending connection of server's listener. 0, or a negative
 * code when it could not (the connection was refused). */
int http_server__conn_accept(struct http_server *server);

/* Closes conn now if it is idle, else after its answer (server close). */
void http_server__conn_shutdown(struct http_server__conn *conn);

/* Writes size bytes of data (copied): an interim answer (100 Continue)
 * when is_response is false, else the answer, after which the
 * connection reads on or, with conn->is_close_after, closes. */
int http_server__conn_write(struct http_server__conn *conn, const char *data,
                            size_t size, bool is_response);

/* Writes the server's own JSON error answer and closes afterwards. */
void http_server__conn_fail(struct http_server__conn *conn, int status,
                            const char *message);

/* http_server.c */

/* Called when a connection's memory was freed: may finish a close (and
 * free server). */
void http_server__conn_released(struct http_server *server);

#endif /* SINEW_NODE_HTTP_SERVER_INT_H */
