/* SPDX-License-Identifier: MIT
 *
 * cluster_bench.h: the replication benchmark's load client (bench_cluster),
 * shared by its files: a minimal HTTP/1.1 client over one keep-alive TCP
 * connection (cluster_http.c), the three write protocols it speaks (sinew's
 * Hrana pipelines, etcd's JSON gateway, dqlite-demo's key/value PUT) and
 * the loads it runs (cluster_load.c, cluster_lag.c), and the report it writes
 * from the raw result lines (cluster_report.c). cluster_bench.sh starts and
 * stops the clusters; this program only talks to them over loopback.
 */
#ifndef BENCH_CLUSTER_H
#define BENCH_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

/* ---- HTTP (cluster_http.c) ---- */

/* Where a server listens: "http://HOST:PORT" with an optional trailing
 * slash; HOST an IPv4 address (everything here is loopback). */
struct bc_url {
    char host[64];
    int port;
};

/* One keep-alive connection; reopened when the server closed it. The
 * response body stays in buf until the next request. */
struct bc_conn {
    struct bc_url url;
    int fd;
    char *buf;
    size_t cap;
    size_t len;  /* bytes received and not consumed */
    size_t body; /* offset of the last response's body in buf */
    size_t body_len;
};

int bc_url_parse(const char *text, struct bc_url *out);
void bc_conn_init(struct bc_conn *conn, const struct bc_url *url);
void bc_conn_close(struct bc_conn *conn);

/* Sends one request and reads its response: 0 with *status and the body
 * at conn->buf + conn->body (NUL-terminated), or a negative errno. */
int bc_http(struct bc_conn *conn, const char *method, const char *path,
            const char *body, size_t body_len, int *status);

/* ---- Protocols and loads (cluster_load.c) ---- */

enum bc_proto {
    BC_HRANA,  /* sinew: POST /v2/pipeline, INSERT INTO bench */
    BC_ETCD,   /* etcd 3.4: POST /v3/kv/put through its JSON gateway */
    BC_DQLITE, /* dqlite-demo: PUT /KEY, INSERT OR REPLACE in its table */
};

/* A closed-loop write load: `clients` threads, each with its own
 * connection, writing one row (one key) per request as fast as answers
 * come, for warmup_s (not counted) and then seconds. */
struct bc_load {
    enum bc_proto proto;
    struct bc_url url;
    int clients;
    double warmup_s;
    double seconds;
    int64_t id_base; /* sinew ids and peer keys start past it */
    int value_bytes;
};

struct bc_load_result {
    int64_t ops;     /* acknowledged writes in the timed window */
    int64_t errors;  /* refused or failed writes, whole run */
    int64_t retries; /* tries again after "busy", whole run */
    double seconds;  /* the timed window */
    double p50_ms;
    double p99_ms;
    int64_t last_id; /* the highest id written (sinew) */
    double last_ack; /* bc_now() of the last acknowledgement */
};

int bc_run_load(const struct bc_load *load, struct bc_load_result *out);

/* Polls each url with SELECT count(*), max(id) FROM bench until every one
 * holds `count` rows; 0 with the time it took from `since` (a monotonic
 * time in seconds) in *lag_ms, or -ETIMEDOUT after timeout_s. */
int bc_wait_converged(const struct bc_url *urls, int n, int64_t count,
                      double since, double timeout_s, double *lag_ms);

/* Leader mode's follower lag: one writer at `rate` rows a second for
 * `seconds`, a sampler per follower polling max(id). */
struct bc_lag {
    struct bc_url writer;
    struct bc_url followers[4];
    int follower_count;
    double rate;
    double seconds;
    int64_t id_base;
    int value_bytes;
    int poll_us;
};

struct bc_lag_result {
    int64_t rows;
    int64_t errors;
    double tput;
    double lag_p50_ms;
    double lag_p99_ms;
    double lag_max_ms;
    double catchup_ms;
};

int bc_run_lag(const struct bc_lag *lag, struct bc_lag_result *out);

/* One write of row (or key) `id` on conn: 1 acknowledged, 0 refused (the
 * answer, shortened, in err), negative when the connection failed. */
int bc_write_row(struct bc_conn *conn, enum bc_proto proto, int64_t id,
                 int value_bytes, char *err, size_t err_size);

/* SELECT count(*), max(id) FROM bench on one connection. */
int bc_query_count(struct bc_conn *conn, int64_t *count, int64_t *max_id);

/* Runs one SQL text (a single statement) through a pipeline; 0 when the
 * node answered ok, else negative with the node's message on stderr. */
int bc_exec_sql(const struct bc_url *url, const char *sql);

double bc_now(void);
int bc_compare_double(const void *a, const void *b);
double bc_percentile(double *sorted, size_t n, double p);

/* ---- Report (cluster_report.c) ---- */

/* Reads the raw result lines in `raw` and writes replication.md, .csv and
 * .svg into out_dir; the markdown also goes to stdout. */
int bc_report(const char *raw, const char *out_dir);

#endif
