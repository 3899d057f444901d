/* SPDX-License-Identifier: MIT
 *
 * http.c: the workload's HTTP client. node_remote's client (remote.h)
 * blocks up to REMOTE_HTTP_TIMEOUT_MS (5 minutes) per send or receive,
 * which a paused node turns into a stuck client; this one bounds the
 * whole request by a deadline and says whether the request may have
 * reached the node, which decides failed versus unknown (check.h: a
 * wrong "not applied" hides lost writes).
 *
 * In the namespace topology sockets are created in the client namespace:
 * the calling thread enters it around socket(2) only (setns(2) is per
 * thread, and a socket stays in the namespace it was made in).
 */
#define _GNU_SOURCE /* setns(2) */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chaos_proc.h"
#include "common.h"

#define HTTP_RESPONSE_SIZE_MAX (64u * 1024u * 1024u)

static int http_netns_fd = -1;

void chaos_http_set_netns(const char *netns)
{
    char path[CHAOS_PATH_SIZE];
    snprintf(path, sizeof path, "/run/netns/%s", netns);
    chaos_http_clear_netns();
    http_netns_fd = open(path, O_RDONLY | O_CLOEXEC);
}

void chaos_http_clear_netns(void)
{
    if (http_netns_fd >= 0) {
        close(http_netns_fd);
        http_netns_fd = -1;
    }
}

/* A non-blocking TCP socket, in the client namespace when there is one. */
static int http_socket(void)
{
    if (http_netns_fd < 0) {
        return socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home < 0 || setns(http_netns_fd, CLONE_NEWNET) != 0) {
        if (home >= 0) {
            close(home);
        }
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int back = setns(home, CLONE_NEWNET);
    ASSERT(back == 0); /* our own namespace, still open: cannot fail */
    close(home);
    return fd;
}

/* Waits for events on fd until deadline; 1 ready, 0 timed out, -1 error. */
static int http_wait(int fd, short events, int64_t deadline_ns)
{
    for (;;) {
        int64_t left_ms = (deadline_ns - chaos_now_ns()) / 1000000;
        if (left_ms <= 0) {
            return 0;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, (int)left_ms);
        if (rc > 0) {
            return 1;
        }
        if (rc < 0 && errno != EINTR) {
            return -1;
        }
    }
}

static int http_connect(const char *host, int port, int64_t deadline_ns)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        return -1;
    }
    int fd = http_socket();
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int error = 0;
        socklen_t size = sizeof error;
        if (errno != EINPROGRESS || http_wait(fd, POLLOUT, deadline_ns) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 ||
            error != 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static bool http_send_all(int fd, const char *data, size_t size,
                          int64_t deadline_ns)
{
    while (size > 0) {
        ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            size -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            return false;
        } else if (http_wait(fd, POLLOUT, deadline_ns) != 1) {
            return false;
        }
    }
    return true;
}

/* Reads to EOF (Connection: close) into *out (owned, NUL-terminated). */
static bool http_read_all(int fd, int64_t deadline_ns, char **out,
                          size_t *out_size)
{
    size_t used = 0, capacity = 4096;
    char *buffer = common_malloc(capacity);
    for (;;) {
        if (used + 1 >= capacity) {
            if (capacity >= HTTP_RESPONSE_SIZE_MAX) {
                break;
            }
            capacity *= 2;
            buffer = common_realloc(buffer, capacity);
        }
        ssize_t n = recv(fd, buffer + used, capacity - 1 - used, 0);
        if (n == 0) {
            buffer[used] = '\0';
            *out = buffer;
            *out_size = used;
            return true;
        }
        if (n > 0) {
            used += (size_t)n;
        } else if ((errno != EAGAIN && errno != EINTR) ||
                   http_wait(fd, POLLIN, deadline_ns) != 1) {
            break;
        }
    }
    common_free(buffer);
    return false;
}

enum chaos_http_outcome chaos_http_request(const char *host, int port,
                                           const char *path, const char *body,
                                           int timeout_ms, int *status,
                                           char **response)
{
    int64_t deadline_ns = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    int fd = http_connect(host, port, deadline_ns);
    if (fd < 0) {
        return CHAOS_HTTP_NOT_SENT;
    }
    size_t body_size = body != NULL ? strlen(body) : 0;
    char head[512];
    int head_size = snprintf(
        head, sizeof head,
        "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
        body != NULL ? "POST" : "GET", path, host, port, body_size);
    enum chaos_http_outcome outcome = CHAOS_HTTP_UNKNOWN;
    char *raw = NULL;
    size_t raw_size = 0;
    if (head_size <= 0 || (size_t)head_size >= sizeof head ||
        !http_send_all(fd, head, (size_t)head_size, deadline_ns) ||
        !http_send_all(fd, body != NULL ? body : "", body_size, deadline_ns) ||
        !http_read_all(fd, deadline_ns, &raw, &raw_size)) {
        goto cleanup;
    }
    const char *end = strstr(raw, "\r\n\r\n");
    int code = 0;
    if (end == NULL || sscanf(raw, "HTTP/1.%*d %d", &code) != 1) {
        goto cleanup;
    }
    size_t skip = (size_t)(end + 4 - raw);
    memmove(raw, raw + skip, raw_size - skip + 1);
    *status = code;
    *response = raw;
    raw = NULL;
    outcome = CHAOS_HTTP_OK;
cleanup:
    common_free(raw);
    close(fd);
    return outcome;
}

json_t *chaos_node_status(const struct chaos_node *node, int timeout_ms)
{
    int status = 0;
    char *body = NULL;
    if (chaos_http_request(node->host, node->http_port, "/v1/status", NULL,
                           timeout_ms, &status, &body) != CHAOS_HTTP_OK) {
        return NULL;
    }
    json_t *json = status == 200 ? json_loads(body, 0, NULL) : NULL;
    common_free(body);
    return json;
}

/* The Hrana pipeline [execute sql with args, close]. Owned by the caller. */
static char *sql_pipeline(const char *sql, const int64_t *args,
                          size_t arg_count)
{
    json_t *list = json_array();
    for (size_t i = 0; i < arg_count; i++) {
        char text[24];
        snprintf(text, sizeof text, "%lld", (long long)args[i]);
        json_array_append_new(
            list, json_pack("{s:s,s:s}", "type", "integer", "value", text));
    }
    json_t *pipeline =
        json_pack("{s:[{s:s,s:{s:s,s:o}},{s:s}]}", "requests", "type",
                  "execute", "stmt", "sql", sql, "args", list, "type", "close");
    char *text = json_dumps(pipeline, JSON_COMPACT);
    json_decref(pipeline);
    return text;
}

/* Codes after which nothing of the pipeline took effect: the node's
 * refusals of a whole pipeline (docs/http.md, "Codes from the node"; not
 * TRANSACTION_UNKNOWN) and statement errors raised before anything was
 * written (one statement in autocommit). Any other code is unknown: the
 * conservative side (check.h). */
static bool code_is_definite(const char *code)
{
    static const char *const definite[] = {
        "NOT_LEADER",        "SQLITE_BUSY",     "SERVER_SHUTTING_DOWN",
        "SQLITE_ERROR",      "SQL_PARSE_ERROR", "SQLITE_CONSTRAINT",
        "HRANA_PROTO_ERROR", "ARGS_INVALID"};
    for (size_t i = 0; i < sizeof definite / sizeof definite[0]; i++) {
        if (strcmp(code, definite[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void sql_decode(const char *body, struct chaos_sql_result *out)
{
    json_t *json = json_loads(body, 0, NULL);
    json_t *first = json_array_get(json_object_get(json, "results"), 0);
    const char *type = json_string_value(json_object_get(first, "type"));
    if (type != NULL && strcmp(type, "ok") == 0) {
        json_t *result = json_object_get(
            json_object_get(json_object_get(first, "response"), "result"),
            "rows");
        json_t *parent =
            json_object_get(json_object_get(first, "response"), "result");
        out->outcome = CHAOS_SQL_OK;
        out->rows = json_incref(result);
        out->affected = (int64_t)json_number_value(
            json_object_get(parent, "affected_row_count"));
    } else if (type != NULL && strcmp(type, "error") == 0) {
        json_t *error = json_object_get(first, "error");
        const char *code = json_string_value(json_object_get(error, "code"));
        const char *message =
            json_string_value(json_object_get(error, "message"));
        snprintf(out->code, sizeof out->code, "%s", code ? code : "");
        snprintf(out->message, sizeof out->message, "%s",
                 message ? message : "");
        out->outcome =
            code_is_definite(out->code) ? CHAOS_SQL_FAILED : CHAOS_SQL_UNKNOWN;
    } else {
        snprintf(out->message, sizeof out->message, "malformed answer");
    }
    json_decref(json);
}

void chaos_sql(const struct chaos_node *node, const char *sql,
               const int64_t *args, size_t arg_count, int timeout_ms,
               struct chaos_sql_result *out)
{
    memset(out, 0, sizeof *out);
    out->outcome = CHAOS_SQL_UNKNOWN;
    char *pipeline = sql_pipeline(sql, args, arg_count);
    int status = 0;
    char *body = NULL;
    enum chaos_http_outcome sent =
        chaos_http_request(node->host, node->http_port, "/v2/pipeline",
                           pipeline, timeout_ms, &status, &body);
    free(pipeline); /* jansson's allocator */
    if (sent == CHAOS_HTTP_NOT_SENT) {
        out->outcome = CHAOS_SQL_FAILED;
        snprintf(out->code, sizeof out->code, "CONNECT");
        return;
    }
    if (sent == CHAOS_HTTP_UNKNOWN) {
        snprintf(out->code, sizeof out->code, "TIMEOUT");
        return;
    }
    if (status == 200) {
        sql_decode(body, out);
    } else {
        /* 400/401/413/503: the pipeline was refused whole. */
        out->outcome = CHAOS_SQL_FAILED;
        snprintf(out->code, sizeof out->code, "HTTP_%d", status);
    }
    common_free(body);
}

void chaos_sql_result_release(struct chaos_sql_result *result)
{
    json_decref(result->rows);
    result->rows = NULL;
}
