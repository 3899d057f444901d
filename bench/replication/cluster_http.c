/* SPDX-License-Identifier: MIT
 *
 * cluster_http.c: the smallest HTTP/1.1 client the replication benchmark
 * needs: one blocking keep-alive TCP connection per load client, requests
 * with a Content-Length body, responses with a Content-Length or chunked
 * body. Every system under test (sinew's Hrana, etcd's gateway,
 * dqlite-demo) is reached the same way, so the client's own cost is the
 * same in every column. TCP_NODELAY is set: a request is one small write,
 * and Nagle's delay would otherwise be part of every latency.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cluster_bench.h"

#define BC_IO_TIMEOUT_S 15 /* a dead node fails the request, never hangs */
#define BC_MAX_RESPONSE (64u << 20)

int bc_url_parse(const char *text, struct bc_url *out)
{
    const char *host, *colon;
    size_t host_len;
    char *end;
    long port;

    if (strncmp(text, "http://", 7) != 0) {
        return -EINVAL;
    }
    host = text + 7;
    colon = strchr(host, ':');
    if (colon == NULL) {
        return -EINVAL;
    }
    host_len = (size_t)(colon - host);
    if (host_len == 0 || host_len >= sizeof out->host) {
        return -EINVAL;
    }
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno != 0 || port <= 0 || port > 65535 ||
        (*end != '\0' && strcmp(end, "/") != 0)) {
        return -EINVAL;
    }
    out->port = (int)port;
    return 0;
}

void bc_conn_init(struct bc_conn *conn, const struct bc_url *url)
{
    memset(conn, 0, sizeof *conn);
    conn->url = *url;
    conn->fd = -1;
}

void bc_conn_close(struct bc_conn *conn)
{
    if (conn->fd >= 0) {
        close(conn->fd);
    }
    conn->fd = -1;
    free(conn->buf);
    conn->buf = NULL;
    conn->cap = conn->len = 0;
}

static int conn_connect(struct bc_conn *conn)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    struct timeval timeout = {.tv_sec = BC_IO_TIMEOUT_S};
    int one = 1, fd;

    if (inet_pton(AF_INET, conn->url.host, &addr.sin_addr) != 1) {
        return -EINVAL;
    }
    addr.sin_port = htons((uint16_t)conn->url.port);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int rc = -errno;

        close(fd);
        return rc;
    }
    conn->fd = fd;
    conn->len = 0;
    return 0;
}

static int send_all(int fd, const char *data, size_t size)
{
    while (size > 0) {
        ssize_t n = send(fd, data, size, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EPIPE;
        }
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

/* Reads more bytes into the buffer; -EPIPE at end of stream. */
static int read_more(struct bc_conn *conn)
{
    ssize_t n;

    if (conn->cap - conn->len < 4096) {
        size_t cap = conn->cap == 0 ? 16384 : conn->cap * 2;
        char *buf;

        if (cap > BC_MAX_RESPONSE) {
            return -EMSGSIZE;
        }
        buf = realloc(conn->buf, cap);
        if (buf == NULL) {
            return -ENOMEM;
        }
        conn->buf = buf;
        conn->cap = cap;
    }
    do {
        n = recv(conn->fd, conn->buf + conn->len, conn->cap - conn->len - 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return errno == EAGAIN ? -ETIMEDOUT : -errno;
    }
    if (n == 0) {
        return -EPIPE;
    }
    conn->len += (size_t)n;
    conn->buf[conn->len] = '\0';
    return 0;
}

/* Makes sure `want` bytes from offset `from` are in the buffer. */
static int need(struct bc_conn *conn, size_t from, size_t want)
{
    int rc;

    while (conn->len < from + want) {
        rc = read_more(conn);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Offset just past the line starting at `from` ("\r\n" included). */
static int need_line(struct bc_conn *conn, size_t from, size_t *next)
{
    for (;;) {
        char *eol = conn->buf == NULL
                        ? NULL
                        : memmem(conn->buf + from, conn->len - from, "\r\n", 2);
        int rc;

        if (eol != NULL) {
            *next = (size_t)(eol - conn->buf) + 2;
            return 0;
        }
        rc = read_more(conn);
        if (rc != 0) {
            return rc;
        }
    }
}

/* A chunked body, decoded in place from `at` (RFC 7230 4.1; extensions
 * and trailers skipped). */
static int read_chunked(struct bc_conn *conn, size_t at)
{
    size_t out = at, pos = at, next;
    int rc;

    for (;;) {
        unsigned long size;

        rc = need_line(conn, pos, &next);
        if (rc != 0) {
            return rc;
        }
        size = strtoul(conn->buf + pos, NULL, 16);
        pos = next;
        if (size == 0) {
            /* Trailers until the empty line. */
            for (;;) {
                rc = need_line(conn, pos, &next);
                if (rc != 0) {
                    return rc;
                }
                if (next == pos + 2) {
                    break;
                }
                pos = next;
            }
            conn->body = at;
            conn->body_len = out - at;
            conn->len = next; /* consumed below by the caller */
            return (int)0;
        }
        rc = need(conn, pos, size + 2);
        if (rc != 0) {
            return rc;
        }
        memmove(conn->buf + out, conn->buf + pos, size);
        out += size;
        /* The moved bytes leave a gap: shift the rest down over it. */
        memmove(conn->buf + out, conn->buf + pos + size,
                conn->len - (pos + size));
        conn->len -= pos + size - out;
        pos = out + 2;
    }
}

static int read_response(struct bc_conn *conn, int *status, int *close_after)
{
    size_t pos = 0, next, length = 0;
    int chunked = 0, rc, has_length = 0;

    rc = need_line(conn, 0, &next);
    if (rc != 0) {
        return rc;
    }
    if (sscanf(conn->buf, "HTTP/1.%*d %d", status) != 1) {
        return -EPROTO;
    }
    *close_after = strncmp(conn->buf, "HTTP/1.0", 8) == 0;
    for (pos = next;; pos = next) {
        char *line;

        rc = need_line(conn, pos, &next);
        if (rc != 0) {
            return rc;
        }
        if (next == pos + 2) {
            pos = next;
            break;
        }
        line = conn->buf + pos;
        if (strncasecmp(line, "content-length:", 15) == 0) {
            length = strtoul(line + 15, NULL, 10);
            has_length = 1;
        } else if (strncasecmp(line, "transfer-encoding:", 18) == 0) {
            chunked = memmem(line, next - pos, "chunked", 7) != NULL;
        } else if (strncasecmp(line, "connection:", 11) == 0) {
            *close_after = memmem(line, next - pos, "close", 5) != NULL;
        }
    }
    if (chunked) {
        return read_chunked(conn, pos);
    }
    if (!has_length) {
        return -EPROTO; /* read-until-close bodies are not used here */
    }
    rc = need(conn, pos, length);
    if (rc != 0) {
        return rc;
    }
    conn->body = pos;
    conn->body_len = length;
    conn->len = pos + length;
    return 0;
}

int bc_http(struct bc_conn *conn, const char *method, const char *path,
            const char *body, size_t body_len, int *status)
{
    char head[512];
    int head_len, rc, close_after = 0, attempt;

    head_len = snprintf(head, sizeof head,
                        "%s %s HTTP/1.1\r\nHost: %s:%d\r\n"
                        "Content-Type: application/json\r\n"
                        "Content-Length: %zu\r\n\r\n",
                        method, path, conn->url.host, conn->url.port, body_len);
    if (head_len < 0 || (size_t)head_len >= sizeof head) {
        return -EINVAL;
    }
    /* A kept connection the server closed meanwhile fails at once: one
     * retry on a fresh one (only for a request nothing was read of). */
    for (attempt = 0;; attempt++) {
        int fresh = conn->fd < 0;

        if (fresh) {
            rc = conn_connect(conn);
            if (rc != 0) {
                return rc;
            }
        }
        conn->len = 0;
        rc = send_all(conn->fd, head, (size_t)head_len);
        if (rc == 0) {
            rc = send_all(conn->fd, body, body_len);
        }
        if (rc == 0) {
            rc = read_response(conn, status, &close_after);
        }
        if (rc == 0) {
            break;
        }
        close(conn->fd);
        conn->fd = -1;
        if (fresh || attempt > 0 || (rc != -EPIPE && rc != -ECONNRESET)) {
            return rc;
        }
    }
    conn->buf[conn->body + conn->body_len] = '\0';
    if (close_after) {
        close(conn->fd);
        conn->fd = -1;
    }
    return 0;
}
