/* SPDX-License-Identifier: MIT
 *
 * serve_pipeline.c: how a Hrana pipeline travels through `sinew serve`
 * (serve.c has the threads):
 *
 *   HTTP thread: parse, take the stream its baton names, route:
 *     - the stream has a transaction open: to the handle it is on;
 *     - its statements may write: to the node thread's writing handle
 *       (quorum mode: one Raft proposal for the whole pipeline);
 *     - else a read: a worker thread with a reading handle (quorum mode:
 *       after a read barrier on the leader, so the read is linearizable);
 *   then back on the HTTP thread: put the stream back (a fresh baton) and
 *   answer.
 *
 * A transaction open across requests pins its stream to the handle it is
 * on until it ends; on the writing handle it also holds replication off
 * the handle (serve_node_hold) and queues other writers. The stream's 10 s
 * idle timeout bounds both. Quorum mode runs each pipeline as one
 * transaction (Raft commits whole change sets) and refuses a transaction
 * left open at the end of a pipeline.
 */
#include <stdio.h>
#include <string.h>

#include "node.h"
#include "serve_int.h"

/* How long a read waits for a free reading handle, and a write for
 * another stream's transaction to end on the writing handle. */
#define SERVE_READER_WAIT_MS 5000u
#define SERVE_WRITER_WAIT_MS 5000u

struct serve_job {
    struct serve *s;
    struct serve_job *next; /* the writers' queue or the readers' */
    struct http_exchange *exchange;
    struct hrana_stream *stream;
    struct serve_session *session;
    struct hrana_pipeline pipeline;
    struct hrana_run_outcome outcome;
    bool write;
    /* A failure of the whole pipeline: every result becomes this error. */
    bool failed;
    char message[512];
    const char *code;
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    uint64_t started_ns;
    uv_work_t work;
    struct engine_db *db; /* reads: the reading handle */
    uint64_t queued_ms;   /* reads: when it began waiting for a handle */
};

static void job_fail(struct serve_job *job, const char *code,
                     const char *message)
{
    job->failed = true;
    job->code = code;
    snprintf(job->message, sizeof job->message, "%s", message);
}

static void observe_latency(struct serve_metrics *m, double seconds)
{
    static const double bounds[SERVE_LATENCY_BUCKETS] = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0};

    m->latency_count++;
    m->latency_sum_s += seconds;
    for (int i = 0; i < SERVE_LATENCY_BUCKETS; i++) {
        if (seconds <= bounds[i]) {
            m->latency_buckets[i]++;
        }
    }
}

/* ---- the end: on the HTTP thread ---- */

static void job_free(struct serve_job *job)
{
    hrana_pipeline_release(&job->pipeline);
    json_decref(job->outcome.results);
    common_free(job);
}

static void job_finish(struct serve_job *job)
{
    struct serve *s = job->s;
    const char *baton = NULL;
    json_t *results = job->outcome.results;
    size_t size = 0;
    char *body;

    if (job->failed) {
        json_decref(results);
        results =
            hrana_results_all_failed(&job->pipeline, job->message, job->code);
        job->outcome.results = results;
        s->metrics.pipeline_failures++;
    }
    s->metrics.pipelines++;
    s->metrics.statements += json_array_size(job->pipeline.requests);
    if (job->write) {
        s->metrics.writes++;
        s->metrics.commits += !job->failed && job->outcome.wrote;
    }
    observe_latency(&s->metrics, (double)(uv_hrtime() - job->started_ns) / 1e9);
    /* Stopping: no later request may continue the stream (its handle is
     * about to close), so it goes now, its transaction rolled back. */
    hrana_streams_put_back(s->streams, job->stream,
                           job->outcome.closed || s->stopping, uv_now(s->loop),
                           &baton);
    body =
        results != NULL ? hrana_response_encode(baton, results, &size) : NULL;
    if (body != NULL) {
        http_respond(job->exchange, 200, "application/json", body, size, NULL);
    } else {
        serve__respond_message(job->exchange, 500, "out of memory");
    }
    common_free(body);
    job_free(job);
    serve__job_done(s);
}

static void finish_cb(void *ctx)
{
    job_finish(ctx);
}

/* From the node thread back to the HTTP thread. */
static void post_finish(struct serve_job *job)
{
    int rc = serve_mailbox_post(&job->s->box, finish_cb, job);
    ASSERT(rc == 0); /* the HTTP mailbox outlives the node thread */
}

/* ---- reads: a reading handle, in a worker thread ----
 *
 * Handles are handed out on the HTTP thread and never waited for in a
 * worker (libuv has few): a read that finds every handle taken waits in
 * the server's queue, served in order as handles come back, and fails
 * after SERVE_READER_WAIT_MS. */

static void read_work(uv_work_t *work)
{
    struct serve_job *job = work->data;
    const struct hrana_run_options options = {.read_handle = true};
    int rc = 0;

    if (job->db == NULL) {
        rc = serve_readers_open(job->s->readers, &job->db);
    }
    if (rc != 0) {
        job_fail(job, "SQLITE_CANTOPEN", node_strerror(rc));
        return;
    }
    rc = hrana_pipeline_run(job->stream, job->db, &job->pipeline, &options,
                            &job->outcome);
    if (rc != 0) {
        job_fail(job, "SQLITE_NOMEM", node_strerror(rc));
    }
    if ((rc != 0 || job->outcome.closed || job->s->stopping) &&
        engine_in_transaction(job->db)) {
        engine_exec(job->db, "ROLLBACK", NULL, NULL);
    }
}

static void dispatch_reads(struct serve *s);

static void read_done(uv_work_t *work, int status)
{
    struct serve_job *job = work->data;
    struct serve_session *session = job->session;

    (void)status;
    if (job->db != NULL && engine_in_transaction(job->db)) {
        session->pin = SERVE_PIN_READER;
        session->reader = job->db;
    } else {
        session->pin = SERVE_PIN_NONE;
        session->reader = NULL;
        if (job->db != NULL) {
            serve_readers_put(job->s->readers, job->db);
        }
    }
    struct serve *s = job->s;
    job_finish(job);
    dispatch_reads(s);
}

static void start_read(struct serve_job *job, struct engine_db *db)
{
    job->db = db;
    job->work.data = job;
    int rc = uv_queue_work(job->s->loop, &job->work, read_work, read_done);
    ASSERT(rc == 0); /* only fails for a NULL callback */
}

/* Starts queued reads while handles are free. */
static void dispatch_reads(struct serve *s)
{
    struct engine_db *db;

    while (s->read_queue_head != NULL &&
           serve_readers_take(s->readers, &db) == 0) {
        struct serve_job *job = s->read_queue_head;
        s->read_queue_head = job->next;
        if (s->read_queue_head == NULL) {
            s->read_queue_tail = NULL;
        }
        start_read(job, db);
    }
}

static void run_read(struct serve_job *job)
{
    struct serve *s = job->s;
    struct engine_db *db = NULL;

    if (job->session->reader != NULL) {
        start_read(job, job->session->reader); /* its transaction's */
        return;
    }
    if (s->read_queue_head == NULL &&
        serve_readers_take(s->readers, &db) == 0) {
        start_read(job, db);
        return;
    }
    job->next = NULL;
    job->queued_ms = uv_now(s->loop);
    if (s->read_queue_tail != NULL) {
        s->read_queue_tail->next = job;
    } else {
        s->read_queue_head = job;
    }
    s->read_queue_tail = job;
}

void serve__reads_expire(struct serve *s, uint64_t now_ms)
{
    while (s->read_queue_head != NULL &&
           now_ms - s->read_queue_head->queued_ms >= SERVE_READER_WAIT_MS) {
        struct serve_job *job = s->read_queue_head;
        s->read_queue_head = job->next;
        if (s->read_queue_head == NULL) {
            s->read_queue_tail = NULL;
        }
        job_fail(job, "SQLITE_BUSY",
                 "every database connection is busy (transactions left "
                 "open hold them): retry");
        job_finish(job);
    }
}

/* A pipeline with no SQL (store_sql, close_sql, get_autocommit, close) on
 * a stream that holds no handle needs none: it runs here, on the HTTP
 * thread, on an empty in-memory handle that stands for "no transaction". */
static void run_without_handle(struct serve_job *job)
{
    const struct hrana_run_options options = {.read_handle = true};
    int rc = hrana_pipeline_run(job->stream, job->s->no_db, &job->pipeline,
                                &options, &job->outcome);

    if (rc != 0) {
        job_fail(job, "SQLITE_NOMEM", node_strerror(rc));
    }
    job_finish(job);
}

/* ---- writes: on the node thread ---- */

static void writer_run_queue(struct serve *s);

/* Runs a write job on the writing handle (single, crdt, leader). */
static void write_on_primary(struct serve_job *job)
{
    struct serve *s = job->s;
    struct serve_writer *writer = &s->writer;
    struct engine_db *db = serve_node_db(s->node);
    const struct hrana_run_options options = {0};
    int rc = hrana_pipeline_run(job->stream, db, &job->pipeline, &options,
                                &job->outcome);

    if (rc != 0) {
        job_fail(job, "SQLITE_NOMEM", node_strerror(rc));
    }
    if ((rc != 0 || job->outcome.closed) && engine_in_transaction(db)) {
        engine_exec(db, "ROLLBACK", NULL, NULL);
    }
    bool open = engine_in_transaction(db);
    if (open && writer->pinned == NULL) {
        writer->pinned = job->session;
        job->session->pin = SERVE_PIN_PRIMARY;
        serve_node_hold(s->node);
    } else if (!open && writer->pinned == job->session) {
        writer->pinned = NULL;
        job->session->pin = SERVE_PIN_NONE;
        serve_node_release(s->node);
    }
    serve_node_kick(s->node);
    post_finish(job);
}

static void writer_enqueue(struct serve_writer *writer, struct serve_job *job)
{
    job->next = NULL;
    job->queued_ms = uv_hrtime() / 1000000u;
    if (writer->queue_tail != NULL) {
        writer->queue_tail->next = job;
    } else {
        writer->queue_head = job;
    }
    writer->queue_tail = job;
}

/* Runs queued writers while the handle is free. */
static void writer_run_queue(struct serve *s)
{
    struct serve_writer *writer = &s->writer;

    while (writer->pinned == NULL && writer->queue_head != NULL) {
        struct serve_job *job = writer->queue_head;
        writer->queue_head = job->next;
        if (writer->queue_head == NULL) {
            writer->queue_tail = NULL;
        }
        write_on_primary(job);
    }
}

/* Fails writers that waited SERVE_WRITER_WAIT_MS for another stream's
 * transaction to end, as SQLite's busy timeout would (node thread). */
static void writers_expire_cb(void *ctx)
{
    struct serve *s = ctx;
    struct serve_writer *writer = &s->writer;
    uint64_t now_ms = uv_hrtime() / 1000000u;
    struct serve_job **link = &writer->queue_head, *last = NULL;

    while (*link != NULL) {
        struct serve_job *job = *link;
        if (now_ms - job->queued_ms < SERVE_WRITER_WAIT_MS) {
            last = job;
            link = &job->next;
            continue;
        }
        *link = job->next;
        job_fail(job, "SQLITE_BUSY",
                 "database is locked: another stream's transaction holds "
                 "the writing connection");
        post_finish(job);
    }
    writer->queue_tail = last;
}

void serve__writers_expire(struct serve *s)
{
    (void)serve_node_post(s->node, writers_expire_cb, s); /* stopping: no */
}

/* quorum mode: the whole pipeline is one transaction through Raft. */
static int quorum_run(void *ctx, struct engine_db *db)
{
    struct serve_job *job = ctx;
    const struct hrana_run_options options = {.in_group_transaction = true};
    int rc = hrana_pipeline_run(job->stream, db, &job->pipeline, &options,
                                &job->outcome);

    if (rc != 0) {
        return rc;
    }
    if (job->outcome.in_transaction) {
        /* The stream's BEGIN stays open in it: close the stream too. */
        job->outcome.closed = true;
        job_fail(job, "TRANSACTION_UNSUPPORTED",
                 "in quorum mode a transaction must begin and end in one "
                 "request: send it as one batch");
        return NODE_EINVAL;
    }
    /* The client rolled back: nothing is proposed, the results stand. */
    return job->outcome.rollback_requested ? ENGINE_EABORT : 0;
}

static void leader_hint(struct serve *s, struct serve_job *job)
{
    struct serve_status status;
    char message[512];

    serve_node_status(s->node, &status);
    /* A leader that lost its majority still names itself until it steps
     * down (or its status was taken before): a hint that sends the client
     * back here would loop it, so none is given. */
    if (status.leader_node[0] != '\0' &&
        status.consensus.leader_id != status.raft_id) {
        snprintf(message, sizeof message,
                 "not the leader: the leader is node %.16s (peer address "
                 "%s); send writes and reads to its HTTP address",
                 status.leader_node, status.consensus.leader_address);
    } else {
        snprintf(message, sizeof message,
                 "not the leader, and no leader is known here yet: retry,"
                 " or try another node");
    }
    job_fail(job, "NOT_LEADER", message);
}

static void quorum_outcome(struct serve_job *job, int status)
{
    if (status == 0 || job->failed) {
        return;
    }
    if (status == ENGINE_EABORT && job->outcome.rollback_requested) {
        return;
    }
    if (status == CONSENSUS_ENOTLEADER) {
        leader_hint(job->s, job);
    } else if (status == REPLICATION_ECONFLICT) {
        job_fail(job, "SQLITE_BUSY",
                 "transaction conflicts with another in flight: retry");
    } else if (status == CONSENSUS_EUNKNOWN) {
        job_fail(job, "TRANSACTION_UNKNOWN",
                 "leadership was lost after the transaction was proposed: "
                 "it may or may not have committed");
    } else {
        job_fail(job,
                 status <= ENGINE_ERROR_LAST && status >= ENGINE_ERROR_FIRST
                     ? hrana_error_code(status)
                     : "SQLITE_ERROR",
                 node_strerror(status));
    }
}

static void quorum_done(void *ctx, int status, uint64_t index)
{
    struct serve_job *job = ctx;

    (void)index;
    quorum_outcome(job, status);
    post_finish(job);
}

static void write_quorum(struct serve_job *job)
{
    struct node_quorum *q = serve_node_quorum(job->s->node);
    int rc;

    uv_random(NULL, NULL, job->txn_id, sizeof job->txn_id, 0, NULL);
    rc = node_quorum_write(q, quorum_run, job, job->txn_id, quorum_done, job);
    serve_node_kick(job->s->node);
    if (rc != 0) {
        quorum_outcome(job, rc);
        post_finish(job);
    }
}

static void write_cb(void *ctx)
{
    struct serve_job *job = ctx;
    struct serve *s = job->s;

    if (serve_node_quorum(s->node) != NULL) {
        write_quorum(job);
    } else if (s->writer.pinned != NULL && s->writer.pinned != job->session) {
        writer_enqueue(&s->writer, job);
    } else {
        write_on_primary(job);
        writer_run_queue(s);
    }
}

/* ---- quorum reads: a barrier on the node thread first ---- */

static void barrier_passed_cb(void *ctx)
{
    struct serve_job *job = ctx;

    if (job->failed) {
        job_finish(job);
    } else {
        run_read(job);
    }
}

static void barrier_done(void *ctx, int status, uint64_t index)
{
    struct serve_job *job = ctx;

    (void)index;
    quorum_outcome(job, status);
    int rc = serve_mailbox_post(&job->s->box, barrier_passed_cb, job);
    ASSERT(rc == 0);
}

static void barrier_cb(void *ctx)
{
    struct serve_job *job = ctx;
    int rc =
        node_quorum_read(serve_node_quorum(job->s->node), barrier_done, job);

    serve_node_kick(job->s->node);
    if (rc != 0) {
        barrier_done(job, rc, 0);
    }
}

/* ---- routing: on the HTTP thread ---- */

static void post_to_node(struct serve_job *job, serve_mail_fn fn)
{
    if (serve_node_post(job->s->node, fn, job) != 0) {
        job_fail(job, "SERVER_SHUTTING_DOWN", "the node is shutting down");
        job_finish(job);
    }
}

static void route(struct serve_job *job)
{
    struct serve *s = job->s;
    struct serve_session *session = job->session;
    enum hrana_access access =
        hrana_pipeline_access(job->stream, &job->pipeline);
    bool quorum = s->config.mode == SERVE_MODE_QUORUM;

    if (session->pin == SERVE_PIN_READER) {
        run_read(job);
    } else if (session->pin == SERVE_PIN_PRIMARY ||
               access == HRANA_ACCESS_WRITE) {
        job->write = true;
        post_to_node(job, write_cb);
    } else if (access == HRANA_ACCESS_NONE) {
        run_without_handle(job);
    } else if (quorum) {
        post_to_node(job, barrier_cb);
    } else {
        run_read(job);
    }
}

static struct serve_session *session_of(struct serve *s,
                                        struct hrana_stream *stream)
{
    struct serve_session *session = hrana_stream_owner_state(stream);

    if (session == NULL) {
        session = common_calloc(1, sizeof *session);
        if (session != NULL) {
            session->server = s;
            hrana_stream_set_owner_state(stream, session);
        }
    }
    return session;
}

static void refuse_stream(struct http_exchange *exchange, int rc)
{
    const char *message =
        rc == NODE_ENOTFOUND
            ? "the baton names no open stream (streams close after 10 s "
              "idle): start a new one"
        : rc == NODE_EBUSY ? "the stream is still running an earlier request"
        : rc == COMMON_ETOOBIG ? "too many open streams: retry later"
                               : node_strerror(rc);
    size_t size = 0;
    char *body = hrana_error_encode(message, "STREAM_ERROR", &size);

    if (body == NULL) {
        serve__respond_message(exchange, 500, "out of memory");
        return;
    }
    http_respond(exchange, rc == COMMON_ETOOBIG ? 503 : 400, "application/json",
                 body, size, NULL);
    common_free(body);
}

void serve__pipeline(struct serve *s, struct http_exchange *exchange,
                     const struct http_request *request, int version)
{
    struct serve_job *job = common_calloc(1, sizeof *job);
    char error[256];
    int rc;

    if (job == NULL) {
        serve__respond_message(exchange, 500, "out of memory");
        return;
    }
    job->s = s;
    job->exchange = exchange;
    job->started_ns = uv_hrtime();
    rc = hrana_pipeline_parse(request->body, request->body_size, version,
                              &job->pipeline, error, sizeof error);
    if (rc != 0) {
        size_t size = 0;
        char *body = hrana_error_encode(error, "HRANA_PROTO_ERROR", &size);
        http_respond(exchange, 400, "application/json", body,
                     body != NULL ? size : 0, NULL);
        common_free(body);
        common_free(job);
        return;
    }
    rc = hrana_streams_take(s->streams, job->pipeline.baton, uv_now(s->loop),
                            &job->stream);
    if (rc != 0) {
        refuse_stream(exchange, rc);
        job_free(job);
        return;
    }
    job->session = session_of(s, job->stream);
    s->jobs++;
    if (job->session == NULL) {
        job_fail(job, "SQLITE_NOMEM", "out of memory");
        job_finish(job);
        return;
    }
    route(job);
}

/* ---- a stream goes: end the transaction it left open ---- */

static void release_reader_work(uv_work_t *work)
{
    struct serve_session *session = work->data;

    engine_exec(session->reader, "ROLLBACK", NULL, NULL);
}

static void release_reader_done(uv_work_t *work, int status)
{
    struct serve_session *session = work->data;
    struct serve *s = session->server;

    (void)status;
    serve_readers_put(s->readers, session->reader);
    common_free(work);
    common_free(session);
    dispatch_reads(s);
    serve__job_done(s);
}

static void release_primary_cb(void *ctx)
{
    struct serve_session *session = ctx;
    struct serve *s = session->server;

    if (s->writer.pinned == session) {
        engine_exec(serve_node_db(s->node), "ROLLBACK", NULL, NULL);
        s->writer.pinned = NULL;
        serve_node_release(s->node);
        writer_run_queue(s);
    }
    common_free(session);
}

void serve__session_release(void *ctx, void *state)
{
    struct serve *s = ctx;
    struct serve_session *session = state;
    uv_work_t *work;

    switch (session->pin) {
    case SERVE_PIN_READER:
        work = common_malloc(sizeof *work);
        if (work != NULL) {
            work->data = session;
            s->jobs++;
            uv_queue_work(s->loop, work, release_reader_work,
                          release_reader_done);
            return;
        }
        /* Out of memory: roll back here, on the HTTP thread: the handle
         * is idle, so no other thread uses it now. */
        release_reader_work(&(uv_work_t){.data = session});
        serve_readers_put(s->readers, session->reader);
        dispatch_reads(s);
        break;
    case SERVE_PIN_PRIMARY:
        if (serve_node_post(s->node, release_primary_cb, session) == 0) {
            return;
        }
        break; /* the node thread has stopped: its handle is closed */
    case SERVE_PIN_NONE:
        break;
    }
    common_free(session);
}
