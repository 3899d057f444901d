/* SPDX-License-Identifier: MIT
 *
 * serve_int.h: `sinew serve`'s state on the HTTP thread, shared by
 * serve*.c. serve.c explains the threads.
 */
#ifndef SINEW_NODE_SERVE_INT_H
#define SINEW_NODE_SERVE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "hrana.h"
#include "http_server.h"
#include "serve_config.h"
#include "serve_log.h"
#include "serve_mailbox.h"
#include "serve_node.h"
#include "serve_readers.h"
#include "transport.h"

/* Pipeline latency buckets of /metrics, in seconds. */
#define SERVE_LATENCY_BUCKETS 10

struct serve_metrics {
    uint64_t http_requests;
    uint64_t http_unauthorized;
    uint64_t pipelines;
    uint64_t pipeline_failures; /* whole pipelines refused */
    uint64_t statements;        /* requests run in pipelines */
    uint64_t writes;            /* pipelines run on the writing handle */
    uint64_t commits;           /* of those, ones that wrote and committed */
    uint64_t latency_count;
    double latency_sum_s;
    uint64_t latency_buckets[SERVE_LATENCY_BUCKETS]; /* cumulative */
};

/* Where a stream's open transaction lives (struct hrana_stream's owner
 * state). */
enum serve_pin {
    SERVE_PIN_NONE = 0,
    SERVE_PIN_READER = 1,  /* reader: a reading handle, in a transaction */
    SERVE_PIN_PRIMARY = 2, /* the node's writing handle, in a transaction */
};

struct serve_session {
    enum serve_pin pin;
    struct engine_db *reader;
    struct serve *server;
};

/* The writing handle's users, on the node thread: the session whose
 * transaction is open on it, and write jobs waiting for it to end. */
struct serve_job;
struct serve_writer {
    struct serve_session *pinned;
    struct serve_job *queue_head, *queue_tail;
};

struct serve {
    struct serve_config config;
    struct serve_log *log_owner;
    struct common_log log, http_log;
    struct transport_identity identity;
    char node_hex[TRANSPORT_NODE_ID_TEXT_SIZE];
    struct transport_node_id *authorized;
    size_t authorized_count;
    uint8_t cluster_secret[TRANSPORT_CLUSTER_SECRET_BYTES];
    bool has_cluster_secret;
    char *auth_token; /* NULL: no client authentication */
    char db_path[4096];
    char raft_dir[4096];
    char http_address[256];

    uv_loop_t *loop;
    struct serve_mailbox box; /* the node thread posts here */
    bool box_ready;
    struct http_server *http;
    struct hrana_streams *streams;
    struct serve_readers *readers;
    struct serve_node *node;
    struct serve_writer writer; /* node thread only */
    /* Reads waiting for a reading handle, in order (HTTP thread). */
    struct serve_job *read_queue_head, *read_queue_tail;
    /* An empty in-memory handle: pipelines without SQL run on it. */
    struct engine_db *no_db;
    uv_timer_t deadline; /* shutdown's */
    uv_timer_t reaper;
    uv_timer_t join_timer; /* --join's retries */
    bool join_started;
    bool fresh_raft; /* quorum: no Raft log yet when started */
    uv_signal_t sigterm, sigint, sighup;
    unsigned jobs; /* pipelines and releases in flight */
    bool stopping;
    int exit_status;
    struct serve_metrics metrics; /* HTTP thread only */
};

/* The HTTP handler (serve_http.c). */
void serve__handle(void *ctx, struct http_exchange *exchange,
                   const struct http_request *request);

/* POST /v2/pipeline and /v3/pipeline (serve_pipeline.c). */
void serve__pipeline(struct serve *s, struct http_exchange *exchange,
                     const struct http_request *request, int version);

/* Fails reads that waited SERVE_READER_WAIT_MS for a handle, and (on the
 * node thread) writes that waited SERVE_WRITER_WAIT_MS behind another
 * stream's transaction. */
void serve__reads_expire(struct serve *s, uint64_t now_ms);
void serve__writers_expire(struct serve *s);

/* A stream's session goes (hrana_stream_owner's release). */
void serve__session_release(void *ctx, void *state);

/* Answers with a JSON {"message": message} body. */
void serve__respond_message(struct http_exchange *exchange, int status,
                            const char *message);

/* One job (pipeline or release) finished: shutdown may go on. */
void serve__job_done(struct serve *s);

/* The bodies of /v1/status and /metrics (serve_report.c), common_malloc'd
 * NUL-terminated text, or NULL when out of memory. */
char *serve__status_json(struct serve *s, size_t *size);
char *serve__metrics_text(struct serve *s, size_t *size);

/* --join: asks the cluster to add this node, retrying until it does
 * (serve_join.c). 0 or COMMON_ENOMEM. */
int serve__join_start(struct serve *s);

/* POST /v1/cluster/add|remove|transfer (serve_admin.c). */
void serve__admin(struct serve *s, struct http_exchange *exchange,
                  const struct http_request *request, const char *op);

#endif /* SINEW_NODE_SERVE_INT_H */
