/* SPDX-License-Identifier: MIT
 *
 * remote_http.c: the blocking HTTP/1.1 client under `sinew shell http://`
 * and `sinew cluster` (remote.h). One request per TCP connection with
 * "Connection: close" (RFC 9112 section 9.6), so a response ends at its
 * Content-Length or at EOF and no connection state outlives a request.
 * Everything the server sends is input: the head is parsed with explicit
 * limits and every malformed byte is an error, never an assertion.
 */
#include "remote.h"

#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common.h"

/* The head of a request: the method, path and the fixed headers. */
#define REMOTE_REQUEST_HEAD_SIZE_MAX (REMOTE_PATH_SIZE + 8192)

static int set_error(char *error, size_t error_size, int rc, const char *format,
                     ...) __attribute__((format(printf, 4, 5)));

static int set_error(char *error, size_t error_size, int rc, const char *format,
                     ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
    return rc;
}

/* ------------------------------------------------------------------------
 * URLs and tokens
 * ------------------------------------------------------------------------ */

bool remote_is_url(const char *text)
{
    return strncasecmp(text, "http://", 7) == 0 ||
           strncasecmp(text, "https://", 8) == 0;
}

static int parse_port(const char *text, size_t size, struct remote_url *url)
{
    unsigned long port = 0;
    for (size_t i = 0; i < size; i++) {
        if (text[i] < '0' || text[i] > '9' || port > 65535) {
            return NODE_EINVAL;
        }
        port = port * 10 + (unsigned long)(text[i] - '0');
    }
    if (size == 0 || port == 0 || port > 65535) {
        return NODE_EINVAL;
    }
    snprintf(url->port, sizeof(url->port), "%lu", port);
    return 0;
}

/* Splits "host[:port]" or "[v6][:port]" (size bytes at authority). */
static int parse_authority(const char *authority, size_t size,
                           struct remote_url *url)
{
    const char *host = authority;
    size_t host_size = size;
    const char *rest = authority + size;
    if (size > 0 && authority[0] == '[') {
        const char *close = memchr(authority, ']', size);
        if (close == NULL) {
            return NODE_EINVAL;
        }
        host = authority + 1;
        host_size = (size_t)(close - host);
        rest = close + 1;
        url->is_ipv6 = true;
    } else {
        const char *colon = memchr(authority, ':', size);
        if (colon != NULL) {
            host_size = (size_t)(colon - authority);
            rest = colon;
        }
    }
    if (host_size == 0 || host_size >= sizeof(url->host) ||
        memchr(host, '@', host_size) != NULL) {
        return NODE_EINVAL;
    }
    memcpy(url->host, host, host_size);
    url->host[host_size] = '\0';
    size_t rest_size = (size_t)(authority + size - rest);
    if (rest_size == 0) {
        snprintf(url->port, sizeof(url->port), "80");
        return 0;
    }
    if (rest[0] != ':') {
        return NODE_EINVAL;
    }
    return parse_port(rest + 1, rest_size - 1, url);
}

int remote_url_parse(const char *text, struct remote_url *url, char *error,
                     size_t error_size)
{
    memset(url, 0, sizeof(*url));
    if (strncasecmp(text, "https://", 8) == 0) {
        return set_error(error, error_size, NODE_EINVAL, "%s",
                         REMOTE_HTTPS_TEXT);
    }
    if (strncasecmp(text, "http://", 7) != 0) {
        return set_error(error, error_size, NODE_EINVAL,
                         "not an http:// URL: %s", text);
    }
    const char *authority = text + 7;
    size_t authority_size = strcspn(authority, "/?#");
    const char *path = authority + authority_size;
    if (parse_authority(authority, authority_size, url) != 0) {
        return set_error(error, error_size, NODE_EINVAL,
                         "bad host or port in URL: %s", text);
    }
    if (strpbrk(path, "?# \t\r\n") != NULL) {
        return set_error(error, error_size, NODE_EINVAL,
                         "URL may not hold a query, fragment or white "
                         "space: %s",
                         text);
    }
    /* The directory of the path: up to and including its last '/'. */
    const char *slash = strrchr(path, '/');
    size_t base_size = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    if (base_size + 2 > sizeof(url->base_path)) {
        return set_error(error, error_size, NODE_EINVAL, "URL too long: %s",
                         text);
    }
    if (base_size == 0) {
        snprintf(url->base_path, sizeof(url->base_path), "/");
    } else {
        memcpy(url->base_path, path, base_size);
        url->base_path[base_size] = '\0';
    }
    return 0;
}

static int check_token(const char *token, char *error, size_t error_size)
{
    if (token[0] == '\0') {
        return set_error(error, error_size, NODE_EINVAL, "%s",
                         "the auth token is empty");
    }
    for (const char *p = token; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            return set_error(error, error_size, NODE_EINVAL, "%s",
                             "the auth token holds a control character");
        }
    }
    return 0;
}

/* The first line of path, trailing white space dropped, into *token. */
static int read_token_file(const char *path, char **token, char *error,
                           size_t error_size)
{
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        int rc = -errno;
        snprintf(error, error_size, "cannot read %s: %s", path, strerror(-rc));
        return rc;
    }
    char line[4096];
    if (fgets(line, sizeof(line), file) == NULL) {
        line[0] = '\0';
    }
    fclose(file);
    size_t size = strlen(line);
    while (size > 0 && strchr(" \t\r\n", line[size - 1]) != NULL) {
        line[--size] = '\0';
    }
    *token = common_malloc(size + 1);
    if (*token == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(*token, line, size + 1);
    return 0;
}

int remote_auth_token_load(const char *token_file, char **token, char *error,
                           size_t error_size)
{
    *token = NULL;
    int rc;
    if (token_file != NULL) {
        rc = read_token_file(token_file, token, error, error_size);
    } else {
        const char *env = getenv("SINEW_AUTH_TOKEN");
        if (env == NULL) {
            return 0;
        }
        *token = common_malloc(strlen(env) + 1);
        rc = *token != NULL ? 0 : COMMON_ENOMEM;
        if (rc == 0) {
            memcpy(*token, env, strlen(env) + 1);
        }
    }
    if (rc == 0) {
        rc = check_token(*token, error, error_size);
    }
    if (rc != 0) {
        common_free(*token);
        *token = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Response heads (RFC 9112 sections 4 and 5)
 * ------------------------------------------------------------------------ */

static int parse_status_line(const char *line, size_t size, int *status)
{
    /* "HTTP/1.x SSS[ reason]" */
    if (size < 12 || memcmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ') {
        return NODE_EPROTO;
    }
    int value = 0;
    for (size_t i = 9; i < 12; i++) {
        if (line[i] < '0' || line[i] > '9') {
            return NODE_EPROTO;
        }
        value = value * 10 + (line[i] - '0');
    }
    if (value < 100 || (size > 12 && line[12] != ' ')) {
        return NODE_EPROTO;
    }
    *status = value;
    return 0;
}

static int parse_content_length(const char *value, size_t size,
                                struct remote_http_head *head)
{
    size_t length = 0;
    if (size == 0) {
        return NODE_EPROTO;
    }
    for (size_t i = 0; i < size; i++) {
        if (value[i] < '0' || value[i] > '9' ||
            length > REMOTE_HTTP_BODY_SIZE_MAX) {
            return NODE_EPROTO;
        }
        length = length * 10 + (size_t)(value[i] - '0');
    }
    if (head->has_content_length && head->content_length != length) {
        return NODE_EPROTO;
    }
    head->has_content_length = true;
    head->content_length = length;
    return 0;
}

static bool contains_word(const char *text, size_t size, const char *word)
{
    size_t word_size = strlen(word);
    for (size_t i = 0; i + word_size <= size; i++) {
        if (strncasecmp(text + i, word, word_size) == 0) {
            return true;
        }
    }
    return false;
}

static int parse_header(const char *line, size_t size,
                        struct remote_http_head *head)
{
    const char *colon = memchr(line, ':', size);
    if (colon == NULL || colon == line) {
        return NODE_EPROTO;
    }
    size_t name_size = (size_t)(colon - line);
    const char *value = colon + 1;
    size_t value_size = size - name_size - 1;
    while (value_size > 0 && (*value == ' ' || *value == '\t')) {
        value++;
        value_size--;
    }
    while (value_size > 0 &&
           (value[value_size - 1] == ' ' || value[value_size - 1] == '\t')) {
        value_size--;
    }
    if (name_size == 14 && strncasecmp(line, "content-length", 14) == 0) {
        return parse_content_length(value, value_size, head);
    }
    if (name_size == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
        head->is_chunked =
            head->is_chunked || contains_word(value, value_size, "chunked");
    }
    return 0;
}

int remote_http_parse_head(const char *data, size_t size,
                           struct remote_http_head *head, size_t *head_size)
{
    memset(head, 0, sizeof(*head));
    size_t offset = 0;
    bool is_first = true;
    for (;;) {
        if (offset == size) {
            return 1;
        }
        const char *end = memchr(data + offset, '\n', size - offset);
        if (end == NULL) {
            return size > REMOTE_HTTP_HEAD_SIZE_MAX ? NODE_EPROTO : 1;
        }
        size_t line_size = (size_t)(end - (data + offset));
        if (line_size == 0 || data[offset + line_size - 1] != '\r') {
            return NODE_EPROTO; /* lines end in CRLF */
        }
        const char *line = data + offset;
        line_size--;
        offset += line_size + 2;
        if (offset > REMOTE_HTTP_HEAD_SIZE_MAX) {
            return NODE_EPROTO;
        }
        int rc;
        if (is_first) {
            rc = parse_status_line(line, line_size, &head->status);
            is_first = false;
        } else if (line_size == 0) {
            *head_size = offset;
            return 0;
        } else {
            rc = parse_header(line, line_size, head);
        }
        if (rc != 0) {
            return rc;
        }
    }
}

/* ------------------------------------------------------------------------
 * Connections
 * ------------------------------------------------------------------------ */

static void set_timeouts(int fd)
{
    struct timeval timeout = {
        .tv_sec = REMOTE_HTTP_TIMEOUT_MS / 1000,
        .tv_usec = (REMOTE_HTTP_TIMEOUT_MS % 1000) * 1000,
    };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

/* Connects to the first address of url that answers; *fd or an error. */
static int connect_url(const struct remote_url *url, int *fd, char *error,
                       size_t error_size)
{
    struct addrinfo hints = {0};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *addresses = NULL;
    int gai = getaddrinfo(url->host, url->port, &hints, &addresses);
    if (gai != 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", url->host,
                 gai_strerror(gai));
        return NODE_EIO;
    }
    int saved = ECONNREFUSED;
    *fd = -1;
    for (struct addrinfo *a = addresses; a != NULL && *fd < 0; a = a->ai_next) {
        int s = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (s < 0) {
            saved = errno;
            continue;
        }
        set_timeouts(s);
        if (connect(s, a->ai_addr, a->ai_addrlen) == 0) {
            *fd = s;
        } else {
            saved = errno;
            close(s);
        }
    }
    freeaddrinfo(addresses);
    if (*fd < 0) {
        snprintf(error, error_size, "cannot connect to %s%s%s:%s: %s",
                 url->is_ipv6 ? "[" : "", url->host, url->is_ipv6 ? "]" : "",
                 url->port, strerror(saved));
        return NODE_EIO;
    }
    return 0;
}

static int send_all(int fd, const char *data, size_t size, char *error,
                    size_t error_size)
{
    while (size > 0) {
        ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent <= 0) {
            return set_error(error, error_size, NODE_EIO, "send failed: %s",
                             strerror(errno));
        }
        data += sent;
        size -= (size_t)sent;
    }
    return 0;
}

/* Appends what one recv() gives to in; *is_eof when it gave nothing. */
static int receive_some(int fd, struct common_buf *in, bool *is_eof,
                        char *error, size_t error_size)
{
    char chunk[16384];
    ssize_t got;
    do {
        got = recv(fd, chunk, sizeof(chunk), 0);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return set_error(error, error_size, NODE_EIO, "receive failed: %s",
                         errno == EAGAIN || errno == EWOULDBLOCK
                             ? "timed out"
                             : strerror(errno));
    }
    *is_eof = got == 0;
    int rc = common_buf_append(in, chunk, (size_t)got);
    if (rc != 0) {
        return set_error(error, error_size, rc, "%s",
                         "the response is too large");
    }
    return 0;
}

static int read_response(int fd, struct remote_http_response *response,
                         char *error, size_t error_size)
{
    struct common_buf in;
    common_buf_init(&in, REMOTE_HTTP_HEAD_SIZE_MAX + REMOTE_HTTP_BODY_SIZE_MAX);
    struct remote_http_head head;
    size_t head_size = 0;
    bool is_eof = false;
    int rc = 1;
    while (rc == 1 && !is_eof) {
        rc = receive_some(fd, &in, &is_eof, error, error_size);
        if (rc == 0) {
            rc = remote_http_parse_head((const char *)in.data, in.size, &head,
                                        &head_size);
        }
    }
    if (rc == 1 || rc == NODE_EPROTO) {
        rc = set_error(error, error_size, NODE_EPROTO, "%s",
                       rc == 1 ? "the server closed the connection before "
                                 "answering"
                               : "malformed HTTP response");
    } else if (rc == 0 && head.is_chunked) {
        rc = set_error(error, error_size, NODE_EPROTO, "%s",
                       "chunked HTTP responses are not supported");
    }
    while (rc == 0 && !is_eof &&
           (!head.has_content_length ||
            in.size - head_size < head.content_length)) {
        rc = receive_some(fd, &in, &is_eof, error, error_size);
    }
    size_t body_size = rc == 0 ? in.size - head_size : 0;
    if (rc == 0 && head.has_content_length) {
        rc = body_size < head.content_length
                 ? set_error(error, error_size, NODE_EPROTO, "%s",
                             "the response body is truncated")
                 : 0;
        body_size = head.content_length;
    }
    if (rc == 0) {
        response->status = head.status;
        rc = common_buf_append_byte(&in, '\0');
    }
    if (rc == 0 && body_size > 0) {
        response->body = common_malloc(body_size + 1);
        rc = response->body != NULL ? 0 : COMMON_ENOMEM;
    }
    if (rc == 0 && body_size > 0) {
        memcpy(response->body, in.data + head_size, body_size);
        response->body[body_size] = '\0';
        response->body_size = body_size;
    }
    common_buf_close(&in);
    return rc;
}

static int format_request_head(const struct remote_url *url, const char *method,
                               const char *path, const char *token,
                               size_t body_size, bool has_body, char *head,
                               size_t head_size)
{
    const char *open = url->is_ipv6 ? "[" : "";
    const char *close = url->is_ipv6 ? "]" : "";
    int size = snprintf(
        head, head_size,
        "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: sinew\r\n"
        "Accept: application/json\r\nConnection: close\r\n"
        "Content-Length: %zu\r\n%s%s%s%s\r\n",
        method, url->base_path, path, open, url->host, close, url->port,
        body_size, has_body ? "Content-Type: application/json\r\n" : "",
        token != NULL ? "Authorization: Bearer " : "",
        token != NULL ? token : "", token != NULL ? "\r\n" : "");
    return size > 0 && (size_t)size < head_size ? size : COMMON_ETOOBIG;
}

int remote_http_request(const struct remote_url *url, const char *method,
                        const char *path, const char *token, const char *body,
                        size_t body_size, struct remote_http_response *response,
                        char *error, size_t error_size)
{
    memset(response, 0, sizeof(*response));
    char *head = common_malloc(REMOTE_REQUEST_HEAD_SIZE_MAX);
    if (head == NULL) {
        return set_error(error, error_size, COMMON_ENOMEM, "%s",
                         "out of memory");
    }
    int fd = -1;
    int size = format_request_head(url, method, path, token,
                                   body != NULL ? body_size : 0, body != NULL,
                                   head, REMOTE_REQUEST_HEAD_SIZE_MAX);
    int rc = size > 0 ? 0
                      : set_error(error, error_size, size, "%s",
                                  "the request head is too long");
    if (rc == 0) {
        rc = connect_url(url, &fd, error, error_size);
    }
    if (rc == 0) {
        rc = send_all(fd, head, (size_t)size, error, error_size);
    }
    if (rc == 0 && body != NULL) {
        rc = send_all(fd, body, body_size, error, error_size);
    }
    if (rc == 0) {
        rc = read_response(fd, response, error, error_size);
    }
    if (fd >= 0) {
        close(fd);
    }
    common_free(head);
    return rc;
}

void remote_http_response_release(struct remote_http_response *response)
{
    common_free(response->body);
    memset(response, 0, sizeof(*response));
}

void remote_http_error_text(const struct remote_http_response *response,
                            char *error, size_t error_size)
{
    json_t *json = NULL;
    if (response->body != NULL) {
        json = json_loadb(response->body, response->body_size, 0, NULL);
    }
    const char *message = json_string_value(json_object_get(json, "message"));
    if (message != NULL) {
        snprintf(error, error_size, "%s", message);
    } else {
        snprintf(error, error_size, "HTTP %d%s%.200s", response->status,
                 response->body != NULL ? ": " : "",
                 response->body != NULL ? response->body : "");
    }
    json_decref(json);
}
