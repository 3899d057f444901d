/* SPDX-License-Identifier: MIT
 *
 * test_remote.c: the client of a node's HTTP API (remote.h). Pure parts
 * are tested directly: URLs, response heads, base64 and Hrana values
 * (every type, and malformed ones, which must fail cleanly). The request
 * and session paths run against a fake server: a forked child that
 * accepts one connection per canned response on 127.0.0.1, answers it
 * byte for byte, and hands what it received back through a pipe, so the
 * tests see both the parse of the answer and the request the client sent
 * (its path, bearer token and the baton carried from one request to the
 * next).
 */
#include "common_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote.h"

/* ------------------------------------------------------------------------
 * URLs
 * ------------------------------------------------------------------------ */

static void test_url_parse(void **state)
{
    (void)state;
    struct remote_url url;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(
        remote_url_parse("http://127.0.0.1:8080", &url, error, sizeof(error)),
        0);
    assert_string_equal(url.host, "127.0.0.1");
    assert_string_equal(url.port, "8080");
    assert_string_equal(url.base_path, "/");
    assert_int_equal(remote_url_parse("HTTP://node/db/", &url, error, 512), 0);
    assert_string_equal(url.host, "node");
    assert_string_equal(url.port, "80");
    assert_string_equal(url.base_path, "/db/");
    /* As @libsql/client resolves: a last segment without '/' is dropped. */
    assert_int_equal(remote_url_parse("http://h:1/db", &url, error, 512), 0);
    assert_string_equal(url.base_path, "/");
    assert_int_equal(remote_url_parse("http://[::1]:9/", &url, error, 512), 0);
    assert_string_equal(url.host, "::1");
    assert_true(url.is_ipv6);
    assert_string_equal(url.port, "9");
}

static void test_url_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "http://",         "http://:80/",      "http://h:0/",
        "http://h:65536/", "http://h:8x/",     "http://u@h/",
        "http://[::1/",    "http://h/?q=1",    "ftp://h/",
        "http://h:/",      "http://[::1]x:1/", "http://h:99999999999999999/",
    };
    struct remote_url url;
    char error[REMOTE_ERROR_SIZE];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(remote_url_parse(bad[i], &url, error, sizeof(error)),
                         NODE_EINVAL);
    }
    assert_int_equal(remote_url_parse("https://h/", &url, error, 512),
                     NODE_EINVAL);
    assert_string_equal(error, REMOTE_HTTPS_TEXT);
    assert_true(remote_is_url("https://h/"));
    assert_true(remote_is_url("Http://h"));
    assert_false(remote_is_url("http.sinew"));
}

/* ------------------------------------------------------------------------
 * Response heads
 * ------------------------------------------------------------------------ */

static int parse(const char *text, struct remote_http_head *head,
                 size_t *head_size)
{
    return remote_http_parse_head(text, strlen(text), head, head_size);
}

static void test_head_parse(void **state)
{
    (void)state;
    struct remote_http_head head;
    size_t size = 0;
    const char *text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       "content-length:  12 \r\n\r\n{\"a\":1}";
    assert_int_equal(parse(text, &head, &size), 0);
    assert_int_equal(head.status, 200);
    assert_true(head.has_content_length);
    assert_int_equal(head.content_length, 12);
    assert_false(head.is_chunked);
    assert_int_equal(size, strlen(text) - strlen("{\"a\":1}"));
    assert_int_equal(parse("HTTP/1.0 401\r\n\r\n", &head, &size), 0);
    assert_int_equal(head.status, 401);
    assert_false(head.has_content_length);
    assert_int_equal(
        parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n",
              &head, &size),
        0);
    assert_true(head.is_chunked);
}

static void test_head_incomplete(void **state)
{
    (void)state;
    struct remote_http_head head;
    size_t size = 0;
    const char *text = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
    for (size_t i = 0; i < strlen(text); i++) {
        assert_int_equal(remote_http_parse_head(text, i, &head, &size), 1);
    }
}

static void test_head_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 099 X\r\n\r\n",
        "HTTP/1.1 200OK\r\n\r\n",
        "HTTP/1.1 200 OK\n\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    };
    struct remote_http_head head;
    size_t size = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &head, &size), NODE_EPROTO);
    }
    /* A head that never ends is refused at the limit, not read forever. */
    size_t big = REMOTE_HTTP_HEAD_SIZE_MAX + 100;
    char *text = test_malloc(big + 1);
    memcpy(text, "HTTP/1.1 200 OK\r\n", 17);
    memset(text + 17, 'a', big - 17);
    text[big] = '\0';
    assert_int_equal(parse(text, &head, &size), NODE_EPROTO);
    test_free(text);
}

/* ------------------------------------------------------------------------
 * base64 and values
 * ------------------------------------------------------------------------ */

static void check_base64(const char *text, const char *want, size_t want_size)
{
    unsigned char out[64];
    size_t size = 99;
    assert_int_equal(remote_base64_decode(text, strlen(text), out, &size), 0);
    assert_int_equal(size, want_size);
    assert_memory_equal(out, want, want_size);
}

static void test_base64(void **state)
{
    (void)state;
    /* RFC 4648 section 10's vectors, with and without padding. */
    check_base64("", "", 0);
    check_base64("Zg==", "f", 1);
    check_base64("Zm8=", "fo", 2);
    check_base64("Zm9v", "foo", 3);
    check_base64("Zm9vYmFy", "foobar", 6);
    check_base64("Zm9vYg", "foob", 4);
    check_base64("AP9B", "\x00\xff\x41", 3);
    static const char *const bad[] = {
        "Z", "Zg=", "Zg===", "Z===", "Zm9v!", "Zh==", "Zm9=", "=Zg="};
    unsigned char out[64];
    size_t size = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            remote_base64_decode(bad[i], strlen(bad[i]), out, &size),
            NODE_EPROTO);
    }
}

/* Decodes the JSON text of one value. */
static int decode(const char *json_text, struct remote_value *value,
                  json_t **json)
{
    char error[REMOTE_ERROR_SIZE];
    *json = json_loads(json_text, JSON_ALLOW_NUL, NULL);
    assert_non_null(*json);
    return remote_value_decode(*json, value, error, sizeof(error));
}

static void check_value(const char *json_text, int type, const char *text,
                        size_t size)
{
    struct remote_value value;
    json_t *json;
    assert_int_equal(decode(json_text, &value, &json), 0);
    assert_int_equal(value.value.type, type);
    if (text == NULL) {
        assert_null(value.value.text);
    } else {
        assert_int_equal(value.value.size, size);
        assert_memory_equal(value.value.text, text, size);
        assert_int_equal(value.value.text[size], '\0');
    }
    remote_value_release(&value);
    json_decref(json);
}

static void test_value_decode(void **state)
{
    (void)state;
    check_value("{\"type\":\"null\"}", SHELL_VALUE_NULL, NULL, 0);
    check_value("{\"type\":\"integer\",\"value\":\"123\"}", SHELL_VALUE_INTEGER,
                "123", 3);
    check_value("{\"type\":\"integer\",\"value\":\"-9223372036854775808\"}",
                SHELL_VALUE_INTEGER, "-9223372036854775808", 20);
    check_value("{\"type\":\"integer\",\"value\":7}", SHELL_VALUE_INTEGER, "7",
                1);
    /* REALs print as the engine prints them locally. */
    check_value("{\"type\":\"float\",\"value\":1.5}", SHELL_VALUE_FLOAT, "1.5",
                3);
    check_value("{\"type\":\"float\",\"value\":3}", SHELL_VALUE_FLOAT, "3.0",
                3);
    check_value("{\"type\":\"float\",\"value\":1e300}", SHELL_VALUE_FLOAT,
                "1.0e+300", 8);
    check_value("{\"type\":\"text\",\"value\":\"\\u00e9\\u0000x\"}",
                SHELL_VALUE_TEXT, "\xc3\xa9\0x", 4);
    check_value("{\"type\":\"text\",\"value\":\"\"}", SHELL_VALUE_TEXT, "", 0);
    check_value("{\"type\":\"blob\",\"base64\":\"AP9B\"}", SHELL_VALUE_BLOB,
                "\x00\xff\x41", 3);
    check_value("{\"type\":\"blob\",\"base64\":\"\"}", SHELL_VALUE_BLOB, "", 0);

    struct remote_value value;
    json_t *json;
    assert_int_equal(
        decode("{\"type\":\"float\",\"value\":0.1}", &value, &json), 0);
    assert_true(value.value.real == 0.1);
    remote_value_release(&value);
    json_decref(json);
}

static void test_value_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[]",
        "{}",
        "{\"type\":7}",
        "{\"type\":\"date\"}",
        "{\"type\":\"integer\"}",
        "{\"type\":\"integer\",\"value\":\"12a\"}",
        "{\"type\":\"integer\",\"value\":\"\"}",
        "{\"type\":\"integer\",\"value\":\"9223372036854775808\"}",
        "{\"type\":\"integer\",\"value\":\"1\\u00002\"}",
        "{\"type\":\"integer\",\"value\":1.5}",
        "{\"type\":\"float\",\"value\":\"1.5\"}",
        "{\"type\":\"text\",\"value\":3}",
        "{\"type\":\"text\"}",
        "{\"type\":\"blob\",\"value\":\"AP9B\"}",
        "{\"type\":\"blob\",\"base64\":\"A\"}",
        "{\"type\":\"blob\",\"base64\":\"AP9B*\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct remote_value value;
        json_t *json;
        assert_int_equal(decode(bad[i], &value, &json), NODE_EPROTO);
        remote_value_release(&value);
        json_decref(json);
    }
}

/* ------------------------------------------------------------------------
 * A fake server
 * ------------------------------------------------------------------------ */

#define FAKE_REQUESTS_SIZE 65536
#define FAKE_SERVER_LIFETIME_S 30

struct fake_server {
    char url[64];
    pid_t pid;
    int pipe_fd;                       /* the child's record of requests */
    char requests[FAKE_REQUESTS_SIZE]; /* what it received, in order */
};

/* Reads one request (head, then Content-Length bytes) from fd into out. */
static void fake_read_request(int fd, int out)
{
    char data[8192];
    size_t size = 0;
    const char *end = NULL;
    long body = 0;
    for (;;) {
        ssize_t got = read(fd, data + size, sizeof(data) - 1 - size);
        if (got <= 0) {
            break;
        }
        size += (size_t)got;
        data[size] = '\0';
        end = strstr(data, "\r\n\r\n");
        const char *length = strstr(data, "Content-Length: ");
        body = length != NULL ? atol(length + 16) : 0;
        if (end != NULL && size >= (size_t)(end - data) + 4 + (size_t)body) {
            break;
        }
    }
    (void)!write(out, data, size);
    (void)!write(out, "\n--\n", 4);
}

/* Serves responses[0..count) to count connections, one each, then
 * exits. */
static void fake_server_start(struct fake_server *server,
                              const char *const *responses, int count)
{
    memset(server, 0, sizeof(*server));
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(listener >= 0);
    struct sockaddr_in address = {0};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    assert_int_equal(
        bind(listener, (struct sockaddr *)&address, sizeof(address)), 0);
    assert_int_equal(listen(listener, 8), 0);
    assert_int_equal(
        getsockname(listener, (struct sockaddr *)&address, &length), 0);
    snprintf(server->url, sizeof(server->url), "http://127.0.0.1:%d/",
             ntohs(address.sin_port));
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    server->pid = fork();
    assert_true(server->pid >= 0);
    if (server->pid == 0) {
        /* A failed test never collects the child: it must not wait for
         * connections (and hold the test's output open) forever. */
        alarm(FAKE_SERVER_LIFETIME_S);
        close(fds[0]);
        for (int i = 0; i < count; i++) {
            int fd = accept(listener, NULL, NULL);
            fake_read_request(fd, fds[1]);
            (void)!write(fd, responses[i], strlen(responses[i]));
            close(fd);
        }
        _exit(0);
    }
    close(fds[1]);
    close(listener);
    server->pipe_fd = fds[0];
}

/* Waits for the child and collects what it received. */
static void fake_server_finish(struct fake_server *server)
{
    size_t size = 0;
    ssize_t got;
    while ((got = read(server->pipe_fd, server->requests + size,
                       sizeof(server->requests) - 1 - size)) > 0) {
        size += (size_t)got;
    }
    server->requests[size] = '\0';
    close(server->pipe_fd);
    int status = 0;
    assert_int_equal(waitpid(server->pid, &status, 0), server->pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void check_request(const char *url, const char *token,
                          const char *response, int want_rc, int want_status,
                          const char *want_body)
{
    struct fake_server server;
    const char *responses[] = {response};
    fake_server_start(&server, responses, 1);
    char full[128];
    snprintf(full, sizeof(full), "%s%s", server.url, url);
    struct remote_url parsed;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(remote_url_parse(full, &parsed, error, sizeof(error)), 0);
    struct remote_http_response answer;
    int rc = remote_http_request(&parsed, "POST", "v2/pipeline", token, "{}", 2,
                                 &answer, error, sizeof(error));
    fake_server_finish(&server);
    assert_int_equal(rc, want_rc);
    if (rc == 0) {
        assert_int_equal(answer.status, want_status);
        assert_string_equal(answer.body != NULL ? answer.body : "", want_body);
    }
    remote_http_response_release(&answer);
    assert_non_null(strstr(server.requests, "POST /"));
    assert_non_null(strstr(server.requests, "\r\n\r\n{}"));
    if (token != NULL) {
        char header[128];
        snprintf(header, sizeof(header), "\r\nAuthorization: Bearer %s\r\n",
                 token);
        assert_non_null(strstr(server.requests, header));
    } else {
        assert_null(strstr(server.requests, "Authorization"));
    }
}

static void test_request(void **state)
{
    (void)state;
    check_request("", "tok",
                  "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, 200,
                  "hello");
    /* Bytes past Content-Length are not the body. */
    check_request("", NULL, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello",
                  0, 200, "he");
    /* Without Content-Length the body runs to EOF. */
    check_request("", NULL, "HTTP/1.1 503 Busy\r\n\r\nlater", 0, 503, "later");
    check_request("", NULL,
                  "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 0,
                  204, "");
    check_request("", NULL, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
                  NODE_EPROTO, 0, "");
    check_request("", NULL,
                  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "5\r\nhello\r\n0\r\n\r\n",
                  NODE_EPROTO, 0, "");
    check_request("", NULL, "garbage\r\n\r\n", NODE_EPROTO, 0, "");
    check_request("", NULL, "", NODE_EPROTO, 0, "");
}

static void test_request_path(void **state)
{
    (void)state;
    struct fake_server server;
    const char *responses[] = {"HTTP/1.1 200 OK\r\n\r\n"};
    fake_server_start(&server, responses, 1);
    char full[128];
    snprintf(full, sizeof(full), "%sdb/", server.url);
    struct remote_url url;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(remote_url_parse(full, &url, error, sizeof(error)), 0);
    struct remote_http_response answer;
    assert_int_equal(remote_http_request(&url, "GET", "v1/status", NULL, NULL,
                                         0, &answer, error, sizeof(error)),
                     0);
    remote_http_response_release(&answer);
    fake_server_finish(&server);
    assert_memory_equal(server.requests, "GET /db/v1/status HTTP/1.1\r\n", 28);
}

static void test_error_text(void **state)
{
    (void)state;
    char error[REMOTE_ERROR_SIZE];
    char json[] = "{\"message\":\"no such node\",\"code\":\"X\"}";
    struct remote_http_response response = {400, json, strlen(json)};
    remote_http_error_text(&response, error, sizeof(error));
    assert_string_equal(error, "no such node");
    char plain[] = "oops";
    struct remote_http_response other = {502, plain, 4};
    remote_http_error_text(&other, error, sizeof(error));
    assert_string_equal(error, "HTTP 502: oops");
}

/* ------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------ */

#define OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"

/* get_autocommit's result, which follows every execute's. */
#define AUTOCOMMIT_RESULT(is)                                                  \
    "{\"type\":\"ok\",\"response\":{\"type\":\"get_autocommit\","              \
    "\"is_autocommit\":" is "}}"

/* A pipeline answer: the baton (JSON), an execute returning one integer
 * row, and get_autocommit's answer (true or false). */
#define ROW_ANSWER(baton, value, is)                                           \
    OK_HEAD "{\"baton\":" baton ",\"results\":[{\"type\":\"ok\",\"response\":" \
            "{\"type\":\"execute\",\"result\":{\"cols\":[{\"name\":\"a\"}],"   \
            "\"rows\":[[{\"type\":\"integer\",\"value\":\"" value              \
            "\"}]]}}}," AUTOCOMMIT_RESULT(is) "]}"

/* The open probe's answer, and the close's. */
#define CLOSED_ANSWER                                                          \
    OK_HEAD "{\"baton\":null,\"results\":[{\"type\":\"ok\","                   \
            "\"response\":{\"type\":\"close\"}}]}"

/* What serve_pipeline.c answers for a baton whose stream expired. */
#define EXPIRED_ANSWER                                                         \
    "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n"       \
    "{\"message\":\"the baton names no open stream (streams close after "      \
    "10 s idle): start a new one\",\"code\":\"STREAM_ERROR\"}"

/* Checks that the requests the fake server received, one by one, hold
 * want[i] (and, for has_baton[i] false, no baton at all). */
static void check_requests(const char *requests, const char *const *want,
                           const bool *has_baton, size_t count)
{
    const char *p = requests;
    for (size_t i = 0; i < count; i++) {
        const char *end = strstr(p, "\n--\n");
        assert_non_null(end);
        const char *found = strstr(p, want[i]);
        assert_true(found != NULL && found < end);
        found = strstr(p, "\"baton\"");
        assert_int_equal(found != NULL && found < end, has_baton[i]);
        p = end + 4;
    }
    assert_null(strstr(p, "\n--\n"));
}

static void test_session_keeps_baton(void **state)
{
    (void)state;
    static const char *const responses[] = {
        OK_HEAD "{\"baton\":null,\"results\":[{\"type\":\"ok\","
                "\"response\":{\"type\":\"close\"}}]}",
        ROW_ANSWER("\"b1\"", "1", "false"),
        OK_HEAD
        "{\"baton\":\"b2\",\"results\":[{\"type\":\"error\",\"error\":"
        "{\"message\":\"no such table: "
        "t\",\"code\":\"SQLITE_ERROR\"}}," AUTOCOMMIT_RESULT("false") "]}",
        "HTTP/1.1 400 Bad Request\r\n\r\n{\"message\":\"unknown baton\"}",
        OK_HEAD "{\"baton\":\"b3\",\"results\":[{\"type\":\"ok\",\"response\":"
                "{\"type\":\"execute\",\"result\":{\"cols\":[],\"rows\":[]}}}"
                "," AUTOCOMMIT_RESULT("true") "]}",
        OK_HEAD "{\"baton\":null,\"results\":[{\"type\":\"ok\"}]}",
    };
    struct fake_server server;
    fake_server_start(&server, responses, 6);
    struct remote_session *session = NULL;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(
        remote_session_open(server.url, "t0k", &session, error, sizeof(error)),
        0);
    json_t *result = NULL;
    const char *args[] = {"%"};
    assert_int_equal(
        remote_session_execute(session, "BEGIN", 5, args, 1, &result), 0);
    assert_int_equal(json_array_size(json_object_get(result, "rows")), 1);
    json_decref(result);
    assert_int_equal(remote_session_execute(session, "SELECT * FROM t", 15,
                                            NULL, 0, &result),
                     NODE_EINVAL);
    assert_string_equal(remote_session_error(session), "no such table: t");
    assert_null(result);
    assert_int_equal(
        remote_session_execute(session, "COMMIT", 6, NULL, 0, &result),
        NODE_ENOTFOUND);
    assert_non_null(strstr(remote_session_error(session), "unknown baton"));
    assert_int_equal(
        remote_session_execute(session, "SELECT 1", 8, NULL, 0, &result), 0);
    json_decref(result);
    remote_session_close(session);
    fake_server_finish(&server);

    /* Request by request: the open probe, then each execute carrying the
     * baton the previous answer gave, a fresh stream after the 400, and a
     * close on the last stream. */
    const char *p = server.requests;
    static const char *const want[] = {
        "{\"requests\":[{\"type\":\"close\"}]}",
        "\"args\":[{\"type\":\"text\",\"value\":\"%\"}]",
        "\"baton\":\"b1\"",
        "\"baton\":\"b2\"",
        "{\"requests\":[{\"type\":\"execute\"",
        "\"baton\":\"b3\"",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *end = strstr(p, "\n--\n");
        assert_non_null(end);
        assert_non_null(strstr(p, "Authorization: Bearer t0k\r\n"));
        char *found = strstr(p, want[i]);
        assert_true(found != NULL && found < end);
        p = end + 4;
    }
}

/* The value of the single cell of result ({"rows": [[value]]}). */
static const char *only_cell(const json_t *result)
{
    const json_t *row = json_array_get(json_object_get(result, "rows"), 0);
    return json_string_value(json_object_get(json_array_get(row, 0), "value"));
}

/* Outside a transaction, an expired stream is replaced: the statement is
 * sent again, without a baton, and its answer is the result. */
static void test_session_expired_retried(void **state)
{
    (void)state;
    static const char *const responses[] = {
        CLOSED_ANSWER,  ROW_ANSWER("\"b1\"", "1", "true"),
        EXPIRED_ANSWER, ROW_ANSWER("\"b2\"", "2", "true"),
        CLOSED_ANSWER,
    };
    struct fake_server server;
    fake_server_start(&server, responses, 5);
    struct remote_session *session = NULL;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(
        remote_session_open(server.url, NULL, &session, error, sizeof(error)),
        0);
    json_t *result = NULL;
    assert_int_equal(
        remote_session_execute(session, "SELECT 1", 8, NULL, 0, &result), 0);
    assert_string_equal(only_cell(result), "1");
    json_decref(result);
    assert_int_equal(
        remote_session_execute(session, "SELECT 2", 8, NULL, 0, &result), 0);
    assert_string_equal(only_cell(result), "2");
    json_decref(result);
    remote_session_close(session);
    fake_server_finish(&server);

    static const char *const want[] = {
        "{\"requests\":[{\"type\":\"close\"}]}",
        "\"sql\":\"SELECT 1\"",
        "\"baton\":\"b1\"",
        "\"sql\":\"SELECT 2\"",
        "\"baton\":\"b2\"",
    };
    static const bool has_baton[] = {false, false, true, false, true};
    check_requests(server.requests, want, has_baton, 5);
    /* Every statement asks for the autocommit state after it. */
    const char *expired = strstr(server.requests, "\"baton\":\"b1\"");
    assert_non_null(strstr(expired, "SELECT 2"));
    assert_non_null(strstr(expired, "{\"type\":\"get_autocommit\"}]"));
}

/* Inside a transaction (or when the state is unknown), an expired stream
 * is an error: the statement is not sent again, so it never runs outside
 * the transaction the user began. The next statement gets a new stream.
 * Each of answers[0..count) answers a "BEGIN" with want_rcs[i]; the
 * first gives the baton "b1", which the INSERT then finds expired. */
static void check_expired_reported(const char *const *answers,
                                   const int *want_rcs, size_t count)
{
    const char *responses[8] = {CLOSED_ANSWER};
    const char *want[8] = {"{\"requests\":[{\"type\":\"close\"}]}"};
    bool has_baton[8] = {false};
    ASSERT(count + 4 <= 8);
    for (size_t i = 0; i < count; i++) {
        responses[1 + i] = answers[i];
        want[1 + i] = "\"sql\":\"BEGIN\"";
        has_baton[1 + i] = i > 0;
    }
    const char *const tail[] = {
        EXPIRED_ANSWER, ROW_ANSWER("\"b2\"", "3", "true"), CLOSED_ANSWER};
    const char *const tail_want[] = {"\"baton\":\"b1\"", "\"sql\":\"SELECT 3\"",
                                     "\"baton\":\"b2\""};
    for (size_t i = 0; i < 3; i++) {
        responses[1 + count + i] = tail[i];
        want[1 + count + i] = tail_want[i];
        has_baton[1 + count + i] = i != 1;
    }
    struct fake_server server;
    fake_server_start(&server, responses, (int)count + 4);
    struct remote_session *session = NULL;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(
        remote_session_open(server.url, NULL, &session, error, sizeof(error)),
        0);
    json_t *result = NULL;
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(
            remote_session_execute(session, "BEGIN", 5, NULL, 0, &result),
            want_rcs[i]);
        json_decref(result);
    }
    assert_int_equal(remote_session_execute(session, "INSERT INTO t VALUES(1)",
                                            23, NULL, 0, &result),
                     NODE_ENOTFOUND);
    assert_null(result);
    assert_non_null(strstr(remote_session_error(session),
                           "a transaction open on it is gone"));
    assert_int_equal(
        remote_session_execute(session, "SELECT 3", 8, NULL, 0, &result), 0);
    assert_string_equal(only_cell(result), "3");
    json_decref(result);
    remote_session_close(session);
    fake_server_finish(&server);
    check_requests(server.requests, want, has_baton, count + 4);
    assert_null(strstr(strstr(server.requests, "SELECT 3"), "INSERT"));
}

static void test_session_expired_in_transaction(void **state)
{
    (void)state;
    const char *const in_transaction[] = {ROW_ANSWER("\"b1\"", "0", "false")};
    const int ok[] = {0, 0};
    check_expired_reported(in_transaction, ok, 1);
    /* An answer without get_autocommit's leaves the state unknown. */
    const char *const no_state[] = {
        OK_HEAD "{\"baton\":\"b1\",\"results\":[{\"type\":\"ok\","
                "\"response\":{\"type\":\"execute\",\"result\":{\"cols\":[],"
                "\"rows\":[]}}},{\"type\":\"error\",\"error\":{\"message\":"
                "\"unknown request\"}}]}"};
    check_expired_reported(no_state, ok, 1);
    /* So does a request lost on the way, even after autocommit: it may
     * have begun a transaction (the baton stays, as before). */
    const char *const lost[] = {
        ROW_ANSWER("\"b1\"", "0", "true"),
        "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{\"baton\":"};
    const int lost_rcs[] = {0, NODE_EPROTO};
    check_expired_reported(lost, lost_rcs, 2);
}

static void test_session_refused(void **state)
{
    (void)state;
    static const char *const unauthorized[] = {
        "HTTP/1.1 401 Unauthorized\r\n\r\n{\"message\":\"bad token\"}"};
    struct fake_server server;
    fake_server_start(&server, unauthorized, 1);
    struct remote_session *session = NULL;
    char error[REMOTE_ERROR_SIZE];
    assert_int_equal(
        remote_session_open(server.url, NULL, &session, error, sizeof(error)),
        NODE_EAUTH);
    assert_string_equal(error, REMOTE_NOT_AUTHORIZED_TEXT);
    assert_null(session);
    fake_server_finish(&server);

    static const char *const malformed[] = {OK_HEAD "{\"results\":3}"};
    fake_server_start(&server, malformed, 1);
    assert_int_equal(
        remote_session_open(server.url, NULL, &session, error, sizeof(error)),
        NODE_EPROTO);
    fake_server_finish(&server);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_parse),
        cmocka_unit_test(test_url_refused),
        cmocka_unit_test(test_head_parse),
        cmocka_unit_test(test_head_incomplete),
        cmocka_unit_test(test_head_malformed),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_value_decode),
        cmocka_unit_test(test_value_malformed),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_request_path),
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_session_keeps_baton),
        cmocka_unit_test(test_session_expired_retried),
        cmocka_unit_test(test_session_expired_in_transaction),
        cmocka_unit_test(test_session_refused),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
