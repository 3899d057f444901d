/* SPDX-License-Identifier: MIT
 *
 * test_http_server.c: the node's HTTP/1.1 server (http_server.h) against
 * a client speaking raw bytes over a real socket.
 *
 * Method: each test starts the server on 127.0.0.1 port 0 on a libuv
 * loop in the test's thread, and runs a client script in a second thread
 * (pthread) with blocking POSIX sockets (5 s receive timeout, so a bug
 * fails instead of hanging). The script only records what it read; the
 * test thread asserts after joining it (cmocka's asserts must not run on
 * another thread). When the script ends it wakes the loop (uv_async),
 * which closes the server; the test then checks that the close finished
 * (done called once, uv_loop_close() finds no handle left), and cmocka's
 * heap checks (common_test_install) that nothing leaked.
 *
 * The handler echoes what the server parsed (method, path, query,
 * Authorization, Content-Type, body) as a text/plain answer; a few paths
 * change that: /slow answers from a 50 ms uv_timer, /typed answers 401
 * with its own Content-Type and an extra header, /close-server closes the
 * server from inside the handler and answers 50 ms later. Every status
 * line, header block and body is compared byte for byte.
 */
#include "common_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "http_server.h"

#define RESPONSE_SIZE 4096
#define RESPONSES_MAX 4

struct fixture {
    uv_loop_t loop;
    struct http_server *server;
    uv_async_t client_done;
    uv_timer_t answer_timer;      /* the delayed answer of /slow */
    struct http_exchange *parked; /* the exchange the timer answers */
    char parked_body[RESPONSE_SIZE];
    int port;
    int handled;    /* handler calls */
    int done_count; /* http_server_close() completions */
    bool is_server_closed;
    void (*client)(struct fixture *f);
    /* Written by the client thread, read after it is joined. */
    char responses[RESPONSES_MAX][RESPONSE_SIZE];
    int response_count;
    bool is_eof;            /* the server closed the connection */
    bool is_second_refused; /* a later connect was refused or closed */
};

/* ---- the server side (loop thread) ---- */

static int echo_format(char *out, size_t size,
                       const struct http_request *request)
{
    return snprintf(out, size,
                    "method=%s\npath=%s\nquery=%s\nauthorization=%s\n"
                    "content-type=%s\nbody=%s",
                    request->method, request->path, request->query,
                    request->authorization, request->content_type,
                    request->body);
}

static void answer_timer_cb(uv_timer_t *timer)
{
    struct fixture *f = timer->data;
    struct http_exchange *exchange = f->parked;

    f->parked = NULL;
    http_respond(exchange, 200, "text/plain", f->parked_body,
                 strlen(f->parked_body), NULL);
    uv_close((uv_handle_t *)&f->answer_timer, NULL);
}

static void server_done_cb(void *ctx)
{
    struct fixture *f = ctx;

    f->done_count++;
}

static void park(struct fixture *f, struct http_exchange *exchange,
                 const struct http_request *request)
{
    f->parked = exchange;
    echo_format(f->parked_body, sizeof(f->parked_body), request);
    uv_timer_init(&f->loop, &f->answer_timer);
    f->answer_timer.data = f;
    uv_timer_start(&f->answer_timer, answer_timer_cb, 50, 0);
}

static void handler(void *ctx, struct http_exchange *exchange,
                    const struct http_request *request)
{
    static const char denied[] = "{\"error\":\"denied\"}";
    struct fixture *f = ctx;
    char body[RESPONSE_SIZE];
    int size;

    f->handled++;
    if (strcmp(request->path, "/slow") == 0) {
        park(f, exchange, request);
    } else if (strcmp(request->path, "/close-server") == 0) {
        park(f, exchange, request);
        f->is_server_closed = true;
        http_server_close(f->server, server_done_cb, f);
    } else if (strcmp(request->path, "/typed") == 0) {
        http_respond(exchange, 401, "application/json; charset=UTF-8", denied,
                     sizeof(denied) - 1, "WWW-Authenticate: Bearer\r\n");
    } else {
        size = echo_format(body, sizeof(body), request);
        if ((size_t)size >= sizeof(body)) {
            size = (int)sizeof(body) - 1;
        }
        http_respond(exchange, 200, "text/plain", body, (size_t)size, NULL);
    }
}

static void fixture_start(struct fixture *f,
                          const struct http_server_config *config)
{
    char address[64];
    const char *colon;

    memset(f, 0, sizeof(*f));
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(http_server_start(&f->loop, "127.0.0.1:0", config, handler,
                                       f, &f->server),
                     0);
    assert_int_equal(http_server_address(f->server, address, sizeof(address)),
                     0);
    assert_memory_equal(address, "127.0.0.1:", 10);
    colon = strrchr(address, ':');
    f->port = atoi(colon + 1);
    assert_true(f->port > 0);
}

static void client_done_cb(uv_async_t *async)
{
    struct fixture *f = async->data;

    uv_close((uv_handle_t *)async, NULL);
    if (!f->is_server_closed) {
        f->is_server_closed = true;
        http_server_close(f->server, server_done_cb, f);
    }
}

static void *client_main(void *arg)
{
    struct fixture *f = arg;

    f->client(f);
    uv_async_send(&f->client_done);
    return NULL;
}

/* Runs client on its thread until it ends and the server has closed. */
static void fixture_run(struct fixture *f, void (*client)(struct fixture *f))
{
    pthread_t thread;

    f->client = client;
    assert_int_equal(uv_async_init(&f->loop, &f->client_done, client_done_cb),
                     0);
    f->client_done.data = f;
    assert_int_equal(pthread_create(&thread, NULL, client_main, f), 0);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(f->done_count, 1);
    assert_null(f->parked);
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* Every message is formatted (DEBUG and up), so UBSan and ASan see the
 * server's log lines too; the test thread only counts them. */
static int log_count;

static void log_emit(void *ctx, int level, const char *file, int line,
                     const char *msg)
{
    (void)ctx;
    (void)file;
    (void)line;
    if (level >= COMMON_LOG_DEBUG && msg[0] != '\0') {
        log_count++;
    }
}

static const struct common_log test_log = {
    .ctx = NULL,
    .min_level = COMMON_LOG_DEBUG,
    .emit = log_emit,
};

static const struct http_server_config small_config = {
    .max_body_bytes = 16,
    .max_header_bytes = 256,
    .idle_timeout_ms = 5000,
    .max_connections = 8,
    .log = &test_log,
};

static const struct http_server_config default_config = {0};

/* ---- the client side (its own thread: no cmocka asserts here) ---- */

static int client_connect(int port)
{
    struct sockaddr_in address;
    struct timeval timeout = {.tv_sec = 5};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0) {
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void client_send_bytes(int fd, const char *data, size_t size)
{
    while (size > 0) {
        ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);

        if (sent <= 0) {
            return;
        }
        data += sent;
        size -= (size_t)sent;
    }
}

static void client_send(int fd, const char *text)
{
    client_send_bytes(fd, text, strlen(text));
}

static void sleep_ms(long ms)
{
    struct timespec delay = {.tv_sec = ms / 1000,
                             .tv_nsec = (ms % 1000) * 1000000};

    nanosleep(&delay, NULL);
}

/* Reads one answer (head byte by byte, then Content-Length bytes unless
 * is_head) into the fixture's next slot. */
static void client_response(struct fixture *f, int fd, bool is_head)
{
    char *out = f->responses[f->response_count++];
    size_t size = 0;
    const char *length;
    size_t body_size = 0;

    while (size < RESPONSE_SIZE - 1 &&
           (size < 4 || memcmp(out + size - 4, "\r\n\r\n", 4) != 0)) {
        if (recv(fd, out + size, 1, 0) != 1) {
            out[size] = '\0';
            return;
        }
        size++;
    }
    out[size] = '\0';
    length = strstr(out, "Content-Length: ");
    if (length != NULL && !is_head) {
        body_size = strtoul(length + 16, NULL, 10);
    }
    while (body_size > 0 && size < RESPONSE_SIZE - 1) {
        ssize_t got = recv(fd, out + size, 1, 0);

        if (got != 1) {
            break;
        }
        size++;
        body_size--;
    }
    out[size] = '\0';
}

/* Whether the server closed (EOF or reset) within the receive timeout. */
static bool client_is_closed(int fd)
{
    char byte;
    ssize_t got = recv(fd, &byte, 1, 0);

    return got == 0 || (got < 0 && errno == ECONNRESET);
}

/* The expected echo answer. */
static void echo_expect(char *out, size_t size, const char *connection,
                        const struct http_request *request)
{
    char body[RESPONSE_SIZE / 2];
    int body_size = echo_format(body, sizeof(body), request);

    snprintf(out, size,
             "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
             "Content-Length: %d\r\n%s\r\n%s",
             body_size, connection, body);
}

static void assert_echo(const char *response, const char *connection,
                        const struct http_request *request)
{
    char expected[RESPONSE_SIZE];

    echo_expect(expected, sizeof(expected), connection, request);
    assert_string_equal(response, expected);
}

/* ---- the tests ---- */

static void client_get_query(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "GET /v1/items?limit=10&x=%20y HTTP/1.1\r\n"
                    "Host: localhost\r\nauthorization: Bearer abc  \r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void get_with_query_reaches_handler(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_get_query);
    assert_int_equal(f.handled, 1);
    assert_echo(f.responses[0], "",
                &(struct http_request){.method = "GET",
                                       .path = "/v1/items",
                                       .query = "limit=10&x=%20y",
                                       .authorization = "Bearer abc",
                                       .content_type = "",
                                       .body = ""});
}

static void client_post(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "POST /v2/pipeline HTTP/1.1\r\nHost: x\r\n"
                    "CONTENT-TYPE: application/json\r\n"
                    "Content-Length: 13\r\n\r\n{\"requests\":}");
    client_response(f, fd, false);
    close(fd);
}

static void post_body_reaches_handler(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &default_config);
    fixture_run(&f, client_post);
    assert_echo(f.responses[0], "",
                &(struct http_request){.method = "POST",
                                       .path = "/v2/pipeline",
                                       .query = "",
                                       .authorization = "",
                                       .content_type = "application/json",
                                       .body = "{\"requests\":}"});
}

static void client_keep_alive(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "GET /one HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    client_send(fd, "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                    "\r\nabc");
    client_response(f, fd, false);
    /* Pipelined: two requests in one write, answered in order. */
    client_send(fd, "GET /three HTTP/1.1\r\nHost: x\r\n\r\n"
                    "GET /four HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    "\r\n");
    client_response(f, fd, false);
    client_response(f, fd, false);
    f->is_eof = client_is_closed(fd);
    close(fd);
}

static void keep_alive_serves_requests_in_order(void **state)
{
    struct fixture f;
    struct http_request request = {.method = "GET",
                                   .path = "/one",
                                   .query = "",
                                   .authorization = "",
                                   .content_type = "",
                                   .body = ""};

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_keep_alive);
    assert_int_equal(f.handled, 4);
    assert_echo(f.responses[0], "", &request);
    request.method = "POST";
    request.path = "/two";
    request.body = "abc";
    assert_echo(f.responses[1], "", &request);
    request.method = "GET";
    request.path = "/three";
    request.body = "";
    assert_echo(f.responses[2], "", &request);
    request.path = "/four";
    assert_echo(f.responses[3], "Connection: close\r\n", &request);
    assert_true(f.is_eof);
}

static void client_http10(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    client_response(f, fd, false);
    client_send(fd, "HEAD /b HTTP/1.0\r\n\r\n");
    client_response(f, fd, true);
    f->is_eof = client_is_closed(fd);
    close(fd);
}

static void http10_closes_without_keep_alive(void **state)
{
    struct fixture f;
    struct http_request request = {.method = "GET",
                                   .path = "/a",
                                   .query = "",
                                   .authorization = "",
                                   .content_type = "",
                                   .body = ""};
    char expected[RESPONSE_SIZE];

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_http10);
    assert_echo(f.responses[0], "Connection: keep-alive\r\n", &request);
    /* HEAD: the GET's headers, no body. */
    request.method = "HEAD";
    request.path = "/b";
    echo_expect(expected, sizeof(expected), "Connection: close\r\n", &request);
    *strstr(expected, "\r\n\r\n") = '\0';
    strcat(expected, "\r\n\r\n");
    assert_string_equal(f.responses[1], expected);
    assert_true(f.is_eof);
}

static void client_chunked(struct fixture *f)
{
    int fd = client_connect(f->port);

    /* In pieces, so the parser resumes mid-chunk and mid-header. */
    client_send(fd, "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Enc");
    sleep_ms(20);
    client_send(fd,
                "oding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhel");
    sleep_ms(20);
    client_send(fd, "lo\r\n6\r\n world\r\n0\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void chunked_body_is_decoded(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_chunked);
    assert_echo(f.responses[0], "",
                &(struct http_request){.method = "POST",
                                       .path = "/c",
                                       .query = "",
                                       .authorization = "",
                                       .content_type = "text/plain",
                                       .body = "hello world"});
}

static void client_slow(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "GET /slow?q=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    /* The connection still serves after an asynchronous answer. */
    client_send(fd, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void async_answer_is_sent(void **state)
{
    struct fixture f;
    struct http_request request = {.method = "GET",
                                   .path = "/slow",
                                   .query = "q=1",
                                   .authorization = "",
                                   .content_type = "",
                                   .body = ""};

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_slow);
    assert_int_equal(f.handled, 2);
    assert_echo(f.responses[0], "", &request);
    request.path = "/after";
    request.query = "";
    assert_echo(f.responses[1], "", &request);
}

static void client_gone(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                    "\r\nhi");
    sleep_ms(10);
    close(fd);
    /* Let the answer come (50 ms) to a closed socket, then a new client
     * is still served. */
    sleep_ms(150);
    fd = client_connect(f->port);
    client_send(fd, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void client_gone_before_async_answer(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_gone);
    assert_int_equal(f.handled, 2);
    assert_echo(f.responses[0], "",
                &(struct http_request){.method = "GET",
                                       .path = "/next",
                                       .query = "",
                                       .authorization = "",
                                       .content_type = "",
                                       .body = ""});
}

static void client_too_big(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n"
                    "\r\n12345678901234567");
    client_response(f, fd, false);
    f->is_eof = client_is_closed(fd);
    close(fd);
    fd = client_connect(f->port);
    client_send(fd, "POST /big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "a\r\n0123456789\r\n7\r\n0123456\r\n0\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void body_over_limit_is_413(void **state)
{
    static const char expected[] =
        "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
        "Content-Length: 47\r\nConnection: close\r\n\r\n"
        "{\"message\":\"request body larger than 16 bytes\"}";
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_too_big);
    assert_int_equal(f.handled, 0);
    assert_true(log_count > 0);
    assert_string_equal(f.responses[0], expected);
    assert_true(f.is_eof);
    assert_string_equal(f.responses[1], expected);
}

static void client_garbage(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "\x01\x02 garbage\r\n\r\n");
    client_response(f, fd, false);
    f->is_eof = client_is_closed(fd);
    close(fd);
    fd = client_connect(f->port);
    client_send(fd, "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
    fd = client_connect(f->port);
    client_send(fd, "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ");
    for (int i = 0; i < 10; i++) {
        client_send(fd, "0123456789012345678901234567890123456789");
    }
    client_send(fd, "\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
    fd = client_connect(f->port);
    client_send(fd, "GET / HTTP/1.1\r\nAuthorization: a\r\n"
                    "Authorization: b\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void malformed_requests_are_refused(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_garbage);
    assert_int_equal(f.handled, 0);
    assert_string_equal(
        f.responses[0],
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
        "Content-Length: 57\r\nConnection: close\r\n\r\n"
        "{\"message\":\"malformed HTTP request: invalid HTTP method\"}");
    assert_true(f.is_eof);
    assert_string_equal(
        f.responses[1],
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
        "Content-Length: 80\r\nConnection: close\r\n\r\n"
        "{\"message\":\"malformed HTTP request: invalid character in "
        "content-length header\"}");
    assert_string_equal(
        f.responses[2],
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "Content-Type: application/json\r\n"
        "Content-Length: 51\r\nConnection: close\r\n\r\n"
        "{\"message\":\"request headers larger than 256 bytes\"}");
    assert_string_equal(
        f.responses[3],
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
        "Content-Length: 67\r\nConnection: close\r\n\r\n"
        "{\"message\":\"malformed HTTP request: repeated Authorization "
        "header\"}");
}

static void client_close_server(struct fixture *f)
{
    int fd = client_connect(f->port);
    int other;

    client_send(fd, "GET /close-server HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    f->is_eof = client_is_closed(fd);
    close(fd);
    other = client_connect(f->port);
    f->is_second_refused = other < 0 || client_is_closed(other);
    if (other >= 0) {
        close(other);
    }
}

static void close_waits_for_pending_exchange(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_close_server);
    assert_int_equal(f.handled, 1);
    assert_echo(f.responses[0], "Connection: close\r\n",
                &(struct http_request){.method = "GET",
                                       .path = "/close-server",
                                       .query = "",
                                       .authorization = "",
                                       .content_type = "",
                                       .body = ""});
    assert_true(f.is_eof);
    assert_true(f.is_second_refused);
}

static void client_typed(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "GET /typed HTTP/1.1\r\nHost: x\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void content_type_and_extra_headers_are_exact(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_typed);
    assert_string_equal(f.responses[0],
                        "HTTP/1.1 401 Unauthorized\r\n"
                        "Content-Type: application/json; charset=UTF-8\r\n"
                        "Content-Length: 18\r\nWWW-Authenticate: Bearer\r\n\r\n"
                        "{\"error\":\"denied\"}");
}

static void client_idle(struct fixture *f)
{
    int fd = client_connect(f->port);
    int other;

    /* max_connections is 1: a second connection is closed at once. */
    other = client_connect(f->port);
    f->is_second_refused = other < 0 || client_is_closed(other);
    if (other >= 0) {
        close(other);
    }
    /* Nothing sent: the idle timeout (100 ms) closes the first. */
    f->is_eof = client_is_closed(fd);
    close(fd);
}

static void idle_and_surplus_connections_are_closed(void **state)
{
    static const struct http_server_config config = {
        .max_body_bytes = 0,
        .max_header_bytes = 0,
        .idle_timeout_ms = 100,
        .max_connections = 1,
        .log = NULL,
    };
    struct fixture f;

    (void)state;
    fixture_start(&f, &config);
    fixture_run(&f, client_idle);
    assert_int_equal(f.handled, 0);
    assert_true(f.is_second_refused);
    assert_true(f.is_eof);
}

static void client_expect(struct fixture *f)
{
    int fd = client_connect(f->port);

    client_send(fd, "PUT /e HTTP/1.1\r\nExpect: 100-continue\r\n"
                    "Content-Length: 4\r\n\r\n");
    client_response(f, fd, false);
    client_send(fd, "body");
    client_response(f, fd, false);
    close(fd);
    fd = client_connect(f->port);
    client_send(fd, "POST /g HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n");
    client_response(f, fd, false);
    close(fd);
}

static void expect_continue_and_transfer_codings(void **state)
{
    struct fixture f;

    (void)state;
    fixture_start(&f, &small_config);
    fixture_run(&f, client_expect);
    assert_string_equal(f.responses[0], "HTTP/1.1 100 Continue\r\n\r\n");
    assert_echo(f.responses[1], "",
                &(struct http_request){.method = "PUT",
                                       .path = "/e",
                                       .query = "",
                                       .authorization = "",
                                       .content_type = "",
                                       .body = "body"});
    assert_string_equal(
        f.responses[2],
        "HTTP/1.1 501 Not Implemented\r\nContent-Type: application/json\r\n"
        "Content-Length: 68\r\nConnection: close\r\n\r\n"
        "{\"message\":\"transfer coding not implemented: only chunked is "
        "taken\"}");
}

/* Valid requests the random test mutates. */
static const char *const templates[] = {
    "GET /a?b=c HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n",
    /* two requests, pipelined */
    "POST /p HTTP/1.1\r\nContent-Type: a/b\r\nContent-Length: 5\r\n\r\nhello"
    "GET /next HTTP/1.1\r\n\r\n",
    "PUT /slow HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
    "0\r\nTrailer: x\r\n\r\n",
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n"
    "Content-Length: 2\r\n\r\nok",
};

#define RANDOM_ROUNDS 150
#define RANDOM_SIZE 512

/* One mutated request: a template with a few bytes flipped, dropped or
 * repeated, cut at random into up to four writes. */
static size_t random_request(struct common_test_rng *rng, char *out)
{
    const char *text = templates[common_test_rng_below(rng, 4)];
    size_t size = strlen(text);
    uint64_t edits = common_test_rng_below(rng, 4);

    memcpy(out, text, size);
    for (uint64_t i = 0; i < edits && size > 1; i++) {
        size_t at = (size_t)common_test_rng_below(rng, size);
        uint64_t kind = common_test_rng_below(rng, 3);

        if (kind == 0) {
            out[at] = (char)common_test_rng_below(rng, 256);
        } else if (kind == 1) {
            memmove(out + at, out + at + 1, size - at - 1);
            size--;
        } else if (size < RANDOM_SIZE - 1) {
            memmove(out + at + 1, out + at, size - at);
            size++;
        }
    }
    return size;
}

struct random_result {
    int ended;       /* connections the server closed after our FIN */
    int well_formed; /* answers that all began with "HTTP/1.1 " */
};

static struct random_result random_result;
static struct common_test_rng random_rng;

static void client_random(struct fixture *f)
{
    char request[RANDOM_SIZE];
    char reply[RESPONSE_SIZE];

    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        size_t size = random_request(&random_rng, request);
        size_t sent = 0;
        size_t got = 0;
        ssize_t n;
        int fd = client_connect(f->port);

        while (sent < size) {
            size_t piece =
                1 + (size_t)common_test_rng_below(&random_rng, size - sent);

            client_send_bytes(fd, request + sent, piece);
            sent += piece;
        }
        shutdown(fd, SHUT_WR);
        while ((n = recv(fd, reply + got, sizeof(reply) - 1 - got, 0)) > 0) {
            got += (size_t)n;
        }
        random_result.ended += n == 0 || errno == ECONNRESET;
        reply[got] = '\0';
        random_result.well_formed +=
            got == 0 || strncmp(reply, "HTTP/1.1 ", 9) == 0;
        close(fd);
    }
}

static void random_requests_never_crash(void **state)
{
    struct fixture f;

    (void)state;
    common_test_rng_seed(&random_rng, "random_requests_never_crash");
    memset(&random_result, 0, sizeof(random_result));
    fixture_start(&f, &small_config);
    fixture_run(&f, client_random);
    assert_int_equal(random_result.ended, RANDOM_ROUNDS);
    assert_int_equal(random_result.well_formed, RANDOM_ROUNDS);
}

static void done_count_cb(void *ctx)
{
    (*(int *)ctx)++;
}

static void addresses_are_parsed(void **state)
{
    static const char *const bad[] = {
        "",
        "8080",
        ":8080",
        "127.0.0.1",
        "127.0.0.1:",
        "127.0.0.1:65536",
        "127.0.0.1:80x",
        "localhost:80",
        "[::1:80",
        "[]:80",
        "1.2.3:80",
    };
    struct http_server *server = NULL;
    struct http_server *other = NULL;
    uv_loop_t loop;
    char address[64];
    int done = 0;
    int rc;

    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(http_server_start(&loop, bad[i], &default_config,
                                           handler, NULL, &server),
                         NODE_EINVAL);
    }
    rc = http_server_start(&loop, "[::1]:0", &default_config, handler, NULL,
                           &server);
    if (rc == 0) {
        assert_int_equal(http_server_address(server, address, 8),
                         COMMON_ETOOBIG);
        assert_int_equal(http_server_address(server, address, sizeof(address)),
                         0);
        assert_memory_equal(address, "[::1]:", 6);
        assert_true(atoi(address + 6) > 0);
        http_server_close(server, done_count_cb, &done);
        assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
        assert_int_equal(done, 1);
    } else {
        /* No IPv6 on this host: the failure is a clean NODE_EIO. */
        assert_int_equal(rc, NODE_EIO);
        assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
        done = 1;
    }
    /* A port in use: NODE_EIO, and the half-made server is freed on the
     * loop's next turn (the leak check sees it). */
    assert_int_equal(http_server_start(&loop, "127.0.0.1:0", &default_config,
                                       handler, NULL, &server),
                     0);
    assert_int_equal(http_server_address(server, address, sizeof(address)), 0);
    assert_int_equal(http_server_start(&loop, address, &default_config, handler,
                                       NULL, &other),
                     NODE_EIO);
    http_server_close(server, done_count_cb, &done);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(done, 2);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_with_query_reaches_handler),
        cmocka_unit_test(post_body_reaches_handler),
        cmocka_unit_test(keep_alive_serves_requests_in_order),
        cmocka_unit_test(http10_closes_without_keep_alive),
        cmocka_unit_test(chunked_body_is_decoded),
        cmocka_unit_test(async_answer_is_sent),
        cmocka_unit_test(client_gone_before_async_answer),
        cmocka_unit_test(body_over_limit_is_413),
        cmocka_unit_test(malformed_requests_are_refused),
        cmocka_unit_test(close_waits_for_pending_exchange),
        cmocka_unit_test(content_type_and_extra_headers_are_exact),
        cmocka_unit_test(idle_and_surplus_connections_are_closed),
        cmocka_unit_test(expect_continue_and_transfer_codings),
        cmocka_unit_test(random_requests_never_crash),
        cmocka_unit_test(addresses_are_parsed),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
