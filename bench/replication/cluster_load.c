/* SPDX-License-Identifier: MIT
 *
 * cluster_load.c: the loads of the replication benchmark. A closed-loop
 * write load (every client thread its own keep-alive connection, one row or
 * one key per request, the next sent when the answer came), the wait for
 * peers to converge after it (crdt mode), and the requests themselves
 * (leader mode's follower lag, in cluster_lag.c, uses them too). The same
 * request shape goes to every system:
 * one replicated write of a fresh key with a value of --value-bytes bytes,
 * acknowledged once the system says it is durable and replicated as it
 * promises (sinew quorum and etcd: a majority; dqlite: a majority through
 * dqlite-demo's SQL statement; sinew crdt and leader: the local commit).
 */
#define _GNU_SOURCE /* usleep */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster_bench.h"

#define BC_BODY_MAX 8192

double bc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bc_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Nearest rank on sorted samples; 0 when there are none. */
double bc_percentile(double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0) {
        return 0;
    }
    rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) {
        rank = 1;
    }
    return sorted[(rank > n ? n : rank) - 1];
}

static void base64(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;

    for (i = 0; i + 2 < n; i += 3) {
        *out++ = digits[in[i] >> 2];
        *out++ = digits[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
        *out++ = digits[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
        *out++ = digits[in[i + 2] & 63];
    }
    if (i < n) {
        *out++ = digits[in[i] >> 2];
        if (i + 1 < n) {
            *out++ = digits[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
            *out++ = digits[(in[i + 1] & 15) << 2];
        } else {
            *out++ = digits[(in[i] & 3) << 4];
            *out++ = '=';
        }
        *out++ = '=';
    }
    *out = '\0';
}

/* The value every system stores: printable, --value-bytes long. */
static void make_value(int64_t id, int bytes, char *out)
{
    int n = snprintf(out, (size_t)bytes + 1, "value-%" PRId64 "-", id);

    for (; n < bytes; n++) {
        out[n] = (char)('a' + n % 26);
    }
    out[bytes] = '\0';
}

int bc_write_row(struct bc_conn *conn, enum bc_proto proto, int64_t id,
                 int value_bytes, char *err, size_t err_size)
{
    char value[1100], body[BC_BODY_MAX], path[64];
    const char *method = "POST", *reply;
    int status, rc, len;

    make_value(id, value_bytes, value);
    switch (proto) {
    case BC_HRANA:
        len = snprintf(body, sizeof body,
                       "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":"
                       "\"INSERT INTO bench(id, v) VALUES (?, ?)\",\"args\":["
                       "{\"type\":\"integer\",\"value\":\"%" PRId64 "\"},"
                       "{\"type\":\"text\",\"value\":\"%s\"}],"
                       "\"want_rows\":false}},{\"type\":\"close\"}]}",
                       id, value);
        snprintf(path, sizeof path, "/v2/pipeline");
        break;
    case BC_ETCD: {
        char key[64], key64[96], value64[1500];

        snprintf(key, sizeof key, "bench/%" PRId64, id);
        base64((const unsigned char *)key, strlen(key), key64);
        base64((const unsigned char *)value, strlen(value), value64);
        len = snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}",
                       key64, value64);
        snprintf(path, sizeof path, "/v3/kv/put");
        break;
    }
    case BC_DQLITE:
    default:
        method = "PUT";
        len = snprintf(body, sizeof body, "%s", value);
        snprintf(path, sizeof path, "/bench-%" PRId64, id);
        break;
    }
    rc = bc_http(conn, method, path, body, (size_t)len, &status);
    if (rc != 0) {
        snprintf(err, err_size, "connection: %s", strerror(-rc));
        return rc;
    }
    reply = conn->buf + conn->body;
    switch (proto) {
    case BC_HRANA:
        rc = status == 200 && strstr(reply, "\"results\":[{\"type\":\"ok\"");
        break;
    case BC_ETCD:
        rc = status == 200 && strstr(reply, "\"header\"") != NULL;
        break;
    case BC_DQLITE:
    default:
        rc = status == 200 && strncmp(reply, "done", 4) == 0;
        break;
    }
    if (!rc) {
        snprintf(err, err_size, "HTTP %d: %.160s", status, reply);
    }
    return rc;
}

/* ---- closed-loop load ---- */

struct client {
    const struct bc_load *load;
    pthread_t thread;
    atomic_int_fast64_t *next_id;
    double count_from, stop_at;
    double *latency;
    size_t n, cap;
    int64_t errors;
    int64_t retries;
    double last_ack;
    int64_t max_id;
    char err[200];
};

/* A write refused because another transaction holds the lock (dqlite's
 * "database is locked", sinew's SQLITE_BUSY) is tried again after 1 ms,
 * as an application would (peers.md §5.3's client does the same); its
 * latency runs from the first try. Anything else is final: 1 written,
 * 0 refused, negative the connection failed, 2 still busy when the run
 * ended. */
static int write_retrying(struct client *c, struct bc_conn *conn, int64_t id)
{
    for (;;) {
        int rc = bc_write_row(conn, c->load->proto, id, c->load->value_bytes,
                              c->err, sizeof c->err);

        if (rc != 0 || (!strstr(c->err, "database is locked") &&
                        !strstr(c->err, "SQLITE_BUSY"))) {
            return rc;
        }
        c->retries++;
        if (bc_now() >= c->stop_at) {
            return 2; /* the run is over: neither acknowledged nor failed */
        }
        usleep(1000);
    }
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct bc_conn conn;

    bc_conn_init(&conn, &c->load->url);
    for (;;) {
        double start = bc_now(), end;
        int64_t id;
        int rc;

        if (start >= c->stop_at) {
            break;
        }
        id = atomic_fetch_add(c->next_id, 1);
        rc = write_retrying(c, &conn, id);
        end = bc_now();
        if (rc == 2) {
            break;
        }
        if (rc <= 0) {
            c->errors++;
            if (rc < 0) {
                usleep(10000); /* a node down: do not spin */
            }
            continue;
        }
        c->last_ack = end;
        c->max_id = id > c->max_id ? id : c->max_id;
        if (end < c->count_from || end > c->stop_at) {
            continue;
        }
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 4096;
            double *latency = realloc(c->latency, cap * sizeof *latency);

            if (latency == NULL) {
                break;
            }
            c->latency = latency;
            c->cap = cap;
        }
        c->latency[c->n++] = (end - start) * 1e3;
    }
    bc_conn_close(&conn);
    return NULL;
}

int bc_run_load(const struct bc_load *load, struct bc_load_result *out)
{
    struct client *clients = calloc((size_t)load->clients, sizeof *clients);
    atomic_int_fast64_t next_id = load->id_base + 1;
    double start, *all = NULL;
    size_t total = 0, i;
    int started = 0, rc = 0;

    memset(out, 0, sizeof *out);
    if (clients == NULL) {
        return -ENOMEM;
    }
    start = bc_now();
    for (i = 0; i < (size_t)load->clients; i++) {
        clients[i].load = load;
        clients[i].next_id = &next_id;
        clients[i].count_from = start + load->warmup_s;
        clients[i].stop_at = start + load->warmup_s + load->seconds;
        if (pthread_create(&clients[i].thread, NULL, client_main,
                           &clients[i]) != 0) {
            rc = -EAGAIN;
            break;
        }
        started++;
    }
    for (i = 0; i < (size_t)started; i++) {
        pthread_join(clients[i].thread, NULL);
        total += clients[i].n;
    }
    if (rc != 0) {
        goto cleanup;
    }
    all = malloc((total ? total : 1) * sizeof *all);
    if (all == NULL) {
        rc = -ENOMEM;
        goto cleanup;
    }
    total = 0;
    for (i = 0; i < (size_t)started; i++) {
        memcpy(all + total, clients[i].latency, clients[i].n * sizeof *all);
        total += clients[i].n;
        out->errors += clients[i].errors;
        out->retries += clients[i].retries;
        if (clients[i].last_ack > out->last_ack) {
            out->last_ack = clients[i].last_ack;
        }
        if (clients[i].max_id > out->last_id) {
            out->last_id = clients[i].max_id;
        }
        if (clients[i].err[0] != '\0' && clients[i].errors > 0 &&
            out->errors == clients[i].errors) {
            fprintf(stderr, "bench_cluster: a refused write: %s\n",
                    clients[i].err);
        }
    }
    qsort(all, total, sizeof *all, bc_compare_double);
    out->ops = (int64_t)total;
    out->seconds = load->seconds;
    out->p50_ms = bc_percentile(all, total, 50);
    out->p99_ms = bc_percentile(all, total, 99);
cleanup:
    for (i = 0; i < (size_t)load->clients; i++) {
        free(clients[i].latency);
    }
    free(clients);
    free(all);
    return rc;
}

/* ---- reading a sinew node ---- */

/* The next Hrana value from *p as an integer; null reads as 0. */
static int next_int_value(const char **p, int64_t *out)
{
    const char *v = strstr(*p, "{\"type\":\"");

    if (v == NULL) {
        return -EPROTO;
    }
    v += 9;
    if (strncmp(v, "null", 4) == 0) {
        *out = 0;
    } else if (strncmp(v, "integer\",\"value\":\"", 18) == 0) {
        *out = strtoll(v + 18, NULL, 10);
    } else {
        return -EPROTO;
    }
    *p = strchr(v, '}') ? strchr(v, '}') : v;
    return 0;
}

int bc_query_count(struct bc_conn *conn, int64_t *count, int64_t *max_id)
{
    static const char body[] =
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":"
        "\"SELECT count(*), max(id) FROM bench\"}},{\"type\":\"close\"}]}";
    const char *p;
    int status, rc;

    rc = bc_http(conn, "POST", "/v2/pipeline", body, sizeof body - 1, &status);
    if (rc != 0) {
        return rc;
    }
    p = strstr(conn->buf + conn->body, "\"rows\":[[");
    if (status != 200 || p == NULL) {
        return -EPROTO; /* e.g. the table has not arrived yet */
    }
    rc = next_int_value(&p, count);
    if (rc == 0) {
        rc = next_int_value(&p, max_id);
    }
    return rc;
}

int bc_exec_sql(const struct bc_url *url, const char *sql)
{
    char body[BC_BODY_MAX];
    struct bc_conn conn;
    const char *reply;
    int status, rc, len;

    len = snprintf(body, sizeof body,
                   "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":"
                   "\"%s\"}},{\"type\":\"close\"}]}",
                   sql);
    if (len < 0 || (size_t)len >= sizeof body || strchr(sql, '"')) {
        return -EINVAL;
    }
    bc_conn_init(&conn, url);
    rc = bc_http(&conn, "POST", "/v2/pipeline", body, (size_t)len, &status);
    if (rc == 0) {
        reply = conn.buf + conn.body;
        if (status != 200 || !strstr(reply, "\"results\":[{\"type\":\"ok\"")) {
            fprintf(stderr, "bench_cluster: %s: HTTP %d: %.300s\n", sql, status,
                    reply);
            rc = -EPROTO;
        }
    } else {
        fprintf(stderr, "bench_cluster: %s:%d: %s\n", url->host, url->port,
                strerror(-rc));
    }
    bc_conn_close(&conn);
    return rc;
}

int bc_wait_converged(const struct bc_url *urls, int n, int64_t count,
                      double since, double timeout_s, double *lag_ms)
{
    struct bc_conn conn[8];
    double done_at[8] = {0}, latest = since;
    int left = n, i, rc = 0;

    if (n > 8) {
        return -EINVAL;
    }
    for (i = 0; i < n; i++) {
        bc_conn_init(&conn[i], &urls[i]);
    }
    while (left > 0) {
        if (bc_now() - since > timeout_s) {
            rc = -ETIMEDOUT;
            break;
        }
        for (i = 0; i < n; i++) {
            int64_t have = 0, max_id = 0;

            if (done_at[i] > 0 || bc_query_count(&conn[i], &have, &max_id)) {
                continue;
            }
            if (have >= count) {
                done_at[i] = bc_now();
                latest = done_at[i] > latest ? done_at[i] : latest;
                left--;
            }
        }
        usleep(1000);
    }
    for (i = 0; i < n; i++) {
        bc_conn_close(&conn[i]);
    }
    *lag_ms = (latest - since) * 1e3;
    return rc;
}
