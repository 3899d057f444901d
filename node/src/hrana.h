/* SPDX-License-Identifier: MIT
 *
 * hrana.h: Hrana over HTTP, the client protocol of libSQL/Turso (the
 * HRANA_2/3 specs, "HTTP API"), as `sinew serve` answers POST /v2/pipeline
 * and /v3/pipeline. The subset @libsql/client sends and the traps it sets
 * are in docs/http.md; in short:
 *
 *   request  {"baton"?: string, "requests": [Request...]}
 *   response {"baton": string|null, "base_url": null, "results": [...]}
 *
 * Requests: execute, batch (steps with conditions ok/error/not/and/or/
 * is_autocommit), sequence, describe, store_sql, close_sql,
 * get_autocommit, close. Values: {"type":"null"}, {"type":"integer",
 * "value":"<int64 as a string>"}, {"type":"float","value":<finite
 * number>}, {"type":"text","value":...}, {"type":"blob","base64":...}.
 * JSON numbers bind as REAL (clients send every JS number as float), named
 * arguments come without their sigil (":", "@", "$" are tried in turn).
 * An SQL error is that request's {"type":"error"} result (the pipeline
 * goes on); only a malformed body or stream-level failure is an HTTP 400.
 *
 * This file's pieces, used by the node's HTTP side:
 *  - a stream: the state a baton names (stored SQL), and the registry that
 *    maps batons to streams, makes a fresh unforgeable baton for every
 *    response and reaps idle streams;
 *  - the pipeline: parsing a body, telling whether its statements may
 *    write (the node routes reads and writes to different database
 *    handles), running it on an engine database, encoding the response.
 *
 * Threads: a stream is used by one thread at a time (the registry hands it
 * out busy, and takes it back); the registry itself belongs to the HTTP
 * loop's thread. hrana_pipeline_run() runs on whichever thread owns db.
 */
#ifndef SINEW_NODE_HRANA_H
#define SINEW_NODE_HRANA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "node.h"

/* Streams idle this long are closed (their transaction rolled back by the
 * owner's release callback): sqld and musql use 10 s. */
#define HRANA_STREAM_IDLE_TIMEOUT_MS 10000u

/* ---- streams and batons ---- */

struct hrana_stream;

/* What the node attaches to a stream (the database handle it is pinned
 * to, in a transaction): released when the stream is closed or reaped,
 * on the registry's thread. */
struct hrana_stream_owner {
    void *state;
    void (*release)(void *ctx, void *state);
    void *ctx;
};

struct hrana_streams;

/* A registry of streams. release (copied) is called for each stream's
 * owner state when the stream goes. max_streams bounds open streams (a new
 * one past it is refused). */
int hrana_streams_new(size_t max_streams, struct hrana_streams **out);
/* Closes every stream (calling release for those with owner state). */
void hrana_streams_free(struct hrana_streams *streams);

/* The stream a request names: baton NULL opens a new stream; otherwise
 * the stream the baton was issued for, if it is open and not busy.
 * now_ms: the loop's clock. On success *out is marked busy (no other
 * request gets it until hrana_streams_put_back()). NODE_ENOTFOUND for
 * an unknown, stale or reaped baton; NODE_EBUSY for a stream still
 * running an earlier request; COMMON_ETOOBIG past max_streams. */
int hrana_streams_take(struct hrana_streams *streams, const char *baton,
                       uint64_t now_ms, struct hrana_stream **out);

/* Gives the stream back after its request ran. close: the pipeline ended
 * with a close request, so the stream goes (owner released) and baton is
 * set to NULL; else *baton is a new baton (owned by the stream, valid
 * until the next take) that alone names the stream from now on. */
void hrana_streams_put_back(struct hrana_streams *streams,
                            struct hrana_stream *stream, bool close,
                            uint64_t now_ms, const char **baton);

/* Closes streams idle past HRANA_STREAM_IDLE_TIMEOUT_MS (not busy ones).
 * Returns how many. */
size_t hrana_streams_reap(struct hrana_streams *streams, uint64_t now_ms);

/* Streams open now, busy ones included (for metrics). */
size_t hrana_streams_open_count(const struct hrana_streams *streams);

/* The owner state attached to a stream (NULL at first); set replaces it
 * without releasing the old one. */
void *hrana_stream_owner_state(const struct hrana_stream *stream);
void hrana_stream_set_owner_state(struct hrana_stream *stream, void *state);
/* Set once, before any stream is taken. */
void hrana_streams_set_owner(struct hrana_streams *streams,
                             const struct hrana_stream_owner *owner);

/* ---- pipelines ---- */

struct hrana_pipeline {
    char *baton;      /* NULL when the body had none (a new stream) */
    json_t *requests; /* a JSON array, checked to hold objects */
    int version;      /* 2 or 3: the endpoint's */
};

/* Parses a pipeline body (size bytes, borrowed). 0, or NODE_EINVAL
 * with a message for the client in error (bad JSON, not an object, no
 * "requests" array, a request that is not an object with a known "type",
 * a baton that is not a string). *out is released with
 * hrana_pipeline_release(). */
int hrana_pipeline_parse(const char *body, size_t size, int version,
                         struct hrana_pipeline *out, char *error,
                         size_t error_size);
void hrana_pipeline_release(struct hrana_pipeline *pipeline);

/* How a pipeline may touch the database, read from its SQL texts without
 * a database (the stream's stored SQL and the pipeline's own store_sql
 * count). READ: only statements that cannot write and open no
 * transaction that could (SELECT, VALUES, EXPLAIN, BEGIN [TRANSACTION]
 * READONLY, COMMIT, END, ROLLBACK); WRITE: anything else, including a
 * plain or DEFERRED BEGIN and SAVEPOINT (the transaction they open may
 * write later), every PRAGMA, WITH (which may end in a write) and text
 * it cannot classify;
 * NONE: no SQL at all (close, store_sql only); describe is READ.
 * Conservative: a READ answer is never wrong about a write. stream may be
 * NULL (a pipeline that opens a new stream). */
enum hrana_access {
    HRANA_ACCESS_NONE = 0,
    HRANA_ACCESS_READ = 1,
    HRANA_ACCESS_WRITE = 2,
};
enum hrana_access hrana_pipeline_access(const struct hrana_stream *stream,
                                        const struct hrana_pipeline *pipeline);

/* The most bytes of rows one pipeline's results may hold, by default
 * (sqld refuses larger responses the same way): past it, the statement
 * that overflows fails with RESPONSE_TOO_LARGE. */
#define HRANA_RESPONSE_BYTES_MAX_DEFAULT ((size_t)16 << 20)

/* How a pipeline runs. */
struct hrana_run_options {
    /* Quorum mode: the node runs the whole pipeline inside one
     * transaction it opened (replication_quorum_execute); the client's
     * BEGIN..., COMMIT and END then succeed without running, and a client
     * ROLLBACK sets rollback_requested (and succeeds). */
    bool in_group_transaction;
    /* 0: HRANA_RESPONSE_BYTES_MAX_DEFAULT. */
    size_t max_response_bytes;
    /* db is one of the node's reading handles: a statement that can
     * write fails before it runs (SQLITE_BUSY, "begin transactions that
     * write with BEGIN IMMEDIATE"), so a reading handle never takes the
     * write lock. */
    bool read_handle;
};

struct hrana_run_outcome {
    json_t *results; /* one result per request, the caller's */
    bool closed;     /* a close request was run */
    /* In a transaction when the pipeline ended: the database handle's
     * (engine_in_transaction) or, with in_group_transaction, the client's
     * BEGIN not yet matched by COMMIT/END/ROLLBACK. */
    bool in_transaction;
    bool rollback_requested; /* in_group_transaction only */
    bool wrote;              /* some statement changed the database */
};

/* Runs every request of pipeline, in order (each also after an earlier
 * one failed, as the spec says), on db (borrowed; the calling thread's),
 * with the stream's stored SQL. A close request rolls back a transaction
 * db is still in (with in_group_transaction: sets rollback_requested if
 * the client's BEGIN is open). 0 and *out filled, or COMMON_ENOMEM (then
 * out->results is NULL). */
int hrana_pipeline_run(struct hrana_stream *stream, struct engine_db *db,
                       const struct hrana_pipeline *pipeline,
                       const struct hrana_run_options *options,
                       struct hrana_run_outcome *out);

/* A result array in which every request's result is an error with this
 * message and code (e.g. when the quorum commit of a pipeline failed, or
 * the node cannot serve the stream), one per request of pipeline. NULL on
 * allocation failure. */
json_t *hrana_results_all_failed(const struct hrana_pipeline *pipeline,
                                 const char *message, const char *code);

/* The response body {"baton","base_url":null,"results"}: a NUL-terminated
 * string (common_malloc'd, the caller's) of *size bytes, or NULL on
 * allocation failure. results is borrowed. */
char *hrana_response_encode(const char *baton, const json_t *results,
                            size_t *size);

/* The JSON error body of a stream-level failure (HTTP 4xx/5xx):
 * {"message": message, "code": code}; common_malloc'd. */
char *hrana_error_encode(const char *message, const char *code, size_t *size);

/* The Hrana error code for an engine failure: "SQLITE_CONSTRAINT",
 * "SQLITE_BUSY", "SQL_PARSE_ERROR", ... (static strings). */
const char *hrana_error_code(int rc);

#endif /* SINEW_NODE_HRANA_H */
