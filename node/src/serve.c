/* SPDX-License-Identifier: MIT
 *
 * serve.c: `sinew serve`, a node (docs/getting-started.md,
 * docs/operations.md).
 *
 * Threads. Two libuv loops:
 *  - the HTTP loop (this thread): clients, Hrana streams, routing;
 *    statements that only read run in libuv's worker threads on reading
 *    handles (serve_readers.h), so a long query never stalls other
 *    clients;
 *  - the node loop (serve_node.h): the peers, replication or Raft, and the
 *    one handle every write goes through, whose commits replication
 *    captures. Writes are serialized there as the engine serializes them
 *    anyway; a long write delays replication, never the HTTP side.
 *
 * The data directory holds node.key (the node's identity, made on first
 * start unless --key names one), main.sinew (the database and its -wal),
 * raft/ (quorum mode's log) and mode (the mode it was created in: a
 * directory is never reused in another mode).
 *
 * Shutdown (SIGTERM, SIGINT): stop accepting, answer every request in
 * progress (in-flight commits finish), roll back open transactions, close
 * replication or Raft and the peers, close the databases, exit 0. SIGHUP
 * reopens --log-file.
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "node.h"
#include "serve_int.h"

#define SERVE_READERS 4
#define SERVE_MAX_STREAMS 4096
#define SERVE_REAP_INTERVAL_MS 1000
/* Shutdown waits this long for requests in progress, then exits 1. */
#define SERVE_SHUTDOWN_DEADLINE_MS 30000u

static int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *format, ...)
{
    va_list args;

    fprintf(stderr, "sinew serve: ");
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    return 1;
}

/* ---- the data directory ---- */

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) == 0 || errno == EEXIST) {
        return 0;
    }
    return fail("cannot create the data directory %s: %s", path,
                strerror(errno));
}

static int read_small_file(const char *path, char *out, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0) {
        return -errno;
    }
    n = read(fd, out, size - 1);
    close(fd);
    if (n < 0) {
        return NODE_EIO;
    }
    out[n] = '\0';
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' ||
                     out[n - 1] == ' ' || out[n - 1] == '\t')) {
        out[--n] = '\0';
    }
    return 0;
}

/* The mode a data directory was created in stays its mode. */
static int check_mode(struct serve *s)
{
    char path[4200], stored[32];
    const char *mode = serve_mode_name(s->config.mode);
    int rc;

    snprintf(path, sizeof path, "%s/mode", s->config.data_dir);
    rc = read_small_file(path, stored, sizeof stored);
    if (rc == 0) {
        if (strcmp(stored, mode) != 0) {
            fprintf(stderr,
                    "sinew serve: %s was created in mode %s: start it with "
                    "--mode %s, or use another --data directory\n",
                    s->config.data_dir, stored, stored);
            return 1;
        }
        return 0;
    }
    FILE *file = fopen(path, "w");
    if (file == NULL || fprintf(file, "%s\n", mode) < 0 || fflush(file) != 0 ||
        fsync(fileno(file)) != 0) {
        if (file != NULL) {
            fclose(file);
        }
        return fail("cannot write %s: %s", path, strerror(errno));
    }
    fclose(file);
    return 0;
}

static int load_identity(struct serve *s)
{
    const char *path = s->config.key_path;
    char default_path[4200];
    int rc;

    snprintf(default_path, sizeof default_path, "%s/node.key",
             s->config.data_dir);
    if (access(path, F_OK) != 0 && strcmp(path, default_path) == 0) {
        rc = transport_identity_generate(&s->identity);
        rc = rc == 0 ? transport_identity_save(&s->identity, path) : rc;
        if (rc != 0) {
            return fail("cannot create the node key %s: %s", path,
                        node_strerror(rc));
        }
        transport_node_id_format(&s->identity.id, s->node_hex);
        LOGF(&s->log, COMMON_LOG_INFO, "created node key path=%s id=%s", path,
             s->node_hex);
        return 0;
    }
    rc = transport_identity_load(path, &s->identity);
    if (rc != 0) {
        return fail("cannot load the node key %s: %s (make one with "
                    "'sinew keygen --out FILE')",
                    path, node_strerror(rc));
    }
    transport_node_id_format(&s->identity.id, s->node_hex);
    return 0;
}

static int load_secret(struct serve *s)
{
    char text[256];
    const char *path = s->config.cluster_secret_path;
    struct stat st;

    if (stat(path, &st) != 0 || read_small_file(path, text, sizeof text)) {
        return fail("cannot read the cluster secret %s: %s", path,
                    strerror(errno));
    }
    if ((st.st_mode & 077) != 0) {
        return fail("%s is readable by others: chmod 600 it", path);
    }
    if (strlen(text) != 2 * TRANSPORT_CLUSTER_SECRET_BYTES) {
        return fail("%s must hold 64 hex digits (sinew keygen --secret "
                    "--out FILE makes one)",
                    path);
    }
    for (size_t i = 0; i < TRANSPORT_CLUSTER_SECRET_BYTES; i++) {
        int hi = common_hex_value(text[2 * i]),
            lo = common_hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return fail("%s must hold 64 hex digits", path);
        }
        s->cluster_secret[i] = (uint8_t)(hi * 16 + lo);
    }
    s->has_cluster_secret = true;
    return 0;
}

static int load_admission(struct serve *s)
{
    int rc;

    if (s->config.authorized_keys_path != NULL) {
        rc = transport_authorized_keys_load(s->config.authorized_keys_path,
                                            &s->authorized,
                                            &s->authorized_count);
        if (rc != 0) {
            return fail("cannot read the authorized keys %s: %s",
                        s->config.authorized_keys_path, node_strerror(rc));
        }
    }
    if (s->config.cluster_secret_path != NULL) {
        return load_secret(s);
    }
    return 0;
}

static int load_token(struct serve *s)
{
    char text[1024];
    const char *path = s->config.auth_token_path;

    if (path == NULL) {
        return 0;
    }
    if (read_small_file(path, text, sizeof text) != 0) {
        return fail("cannot read the auth token %s: %s", path, strerror(errno));
    }
    if (text[0] == '\0' || strchr(text, '\n') != NULL) {
        return fail("%s must hold one token on one line", path);
    }
    s->auth_token = common_malloc(strlen(text) + 1);
    if (s->auth_token == NULL) {
        return fail("out of memory");
    }
    memcpy(s->auth_token, text, strlen(text) + 1);
    return 0;
}

static int prepare(struct serve *s)
{
    char error[256];
    int rc = serve_log_open(s->config.log_path, s->config.log_level,
                            &s->log_owner, error, sizeof error);

    if (rc != 0) {
        return fail("%s", error);
    }
    serve_log_sink(s->log_owner, "node", &s->log);
    serve_log_sink(s->log_owner, "http", &s->http_log);
    if (make_dir(s->config.data_dir) != 0 || check_mode(s) != 0 ||
        load_identity(s) != 0 || load_admission(s) != 0 || load_token(s) != 0) {
        return 1;
    }
    serve_log_set_node(s->log_owner, s->node_hex);
    snprintf(s->db_path, sizeof s->db_path, "%s/%s.sinew", s->config.data_dir,
             SERVE_DATABASE_DEFAULT);
    snprintf(s->raft_dir, sizeof s->raft_dir, "%s/raft", s->config.data_dir);
    if (s->config.mode == SERVE_MODE_QUORUM && make_dir(s->raft_dir) != 0) {
        return 1;
    }
    return 0;
}

/* ---- running ---- */

static void shutdown_begin(struct serve *s);

static void signal_cb(uv_signal_t *handle, int signum)
{
    struct serve *s = handle->data;

    if (signum == SIGHUP) {
        if (serve_log_reopen(s->log_owner) == 0) {
            LOGF(&s->log, COMMON_LOG_INFO, "log reopened signal=SIGHUP");
        } else {
            LOGF(&s->log, COMMON_LOG_ERROR,
                 "log not reopened: still writing the old file "
                 "signal=SIGHUP");
        }
        return;
    }
    if (s->stopping) {
        /* A second signal: the operator will not wait. Every commit
         * acknowledged so far is durable; in-flight ones are not
         * acknowledged. */
        LOGF(&s->log, COMMON_LOG_WARN, "stopping at once signal=%s",
             signum == SIGTERM ? "SIGTERM" : "SIGINT");
        _exit(1);
    }
    LOGF(&s->log, COMMON_LOG_INFO, "shutting down signal=%s",
         signum == SIGTERM ? "SIGTERM" : "SIGINT");
    shutdown_begin(s);
}

static void reap_cb(uv_timer_t *timer)
{
    struct serve *s = timer->data;

    hrana_streams_reap(s->streams, uv_now(s->loop));
    serve__reads_expire(s, uv_now(s->loop));
    if (s->config.mode != SERVE_MODE_QUORUM) {
        serve__writers_expire(s);
    }
}

/* Whether the database file at path holds any schema object (a table,
 * index, view or trigger). *holds false when there is no file yet; an
 * error opening it is left to the node's own open. */
static void database_holds_schema(const char *path, bool *holds)
{
    struct engine_db *db = NULL;
    struct engine_stmt *stmt = NULL;

    *holds = false;
    if (access(path, F_OK) != 0 || engine_open(path, &db) != 0) {
        engine_close(db);
        return;
    }
    if (engine_prepare(db, "SELECT count(*) FROM sqlite_schema", -1, &stmt,
                       NULL) == 0 &&
        engine_step(stmt) == ENGINE_ROW) {
        *holds = engine_column_int64(stmt, 0) > 0;
    }
    engine_finalize(stmt);
    engine_close(db);
}

static int start_node(struct serve *s)
{
    char error[512], marker[4200];
    bool fresh_raft, holds_schema;

    snprintf(marker, sizeof marker, "%s/metadata", s->raft_dir);
    fresh_raft = access(marker, F_OK) != 0;
    s->fresh_raft = fresh_raft;
    /* A quorum member's database is what its Raft log built. One that
     * holds tables before the log exists (an imported file, a copy) would
     * never reach the members that join: they replay the log, which lacks
     * those rows, and the replicas would differ. */
    if (s->config.mode == SERVE_MODE_QUORUM && fresh_raft) {
        database_holds_schema(s->db_path, &holds_schema);
        if (holds_schema) {
            return fail("quorum mode: %s already holds tables but this node "
                        "has no Raft log yet; a quorum cluster starts from "
                        "an empty database (load data through the leader: "
                        "docs/operations.md, \"Backup and restore\")",
                        s->db_path);
        }
    }
    struct serve_node_config config = {
        .config = &s->config,
        .identity = &s->identity,
        .admission = {.authorized = s->authorized,
                      .authorized_count = s->authorized_count,
                      .cluster_secret =
                          s->has_cluster_secret ? s->cluster_secret : NULL},
        .db_path = s->db_path,
        .raft_dir = s->raft_dir,
        .log = s->log_owner,
        .bootstrap = fresh_raft && s->config.join_url == NULL,
    };
    int rc = serve_node_start(&config, &s->node, error, sizeof error);

    if (rc != 0) {
        return fail("%s", error);
    }
    return 0;
}

static int start_http(struct serve *s)
{
    const struct http_server_config config = {
        .max_body_bytes = s->config.max_body_bytes,
        .log = &s->http_log,
    };
    int rc = http_server_start(s->loop, s->config.http_address, &config,
                               serve__handle, s, &s->http);

    if (rc != 0) {
        return fail("cannot serve HTTP on %s: %s", s->config.http_address,
                    node_strerror(rc));
    }
    http_server_address(s->http, s->http_address, sizeof s->http_address);
    return 0;
}

static int start(struct serve *s)
{
    const struct hrana_stream_owner owner = {.release = serve__session_release,
                                             .ctx = s};
    int rc = serve_mailbox_init(&s->box, s->loop);

    s->box_ready = rc == 0;
    rc = rc == 0 ? hrana_streams_new(SERVE_MAX_STREAMS, &s->streams) : rc;
    rc = rc == 0 ? engine_open(NULL, &s->no_db) : rc;
    rc = rc == 0 ? serve_readers_new(s->db_path, SERVE_READERS,
                                     s->config.mode != SERVE_MODE_SINGLE,
                                     &s->readers)
                 : rc;
    if (rc != 0) {
        return fail("cannot start: %s", node_strerror(rc));
    }
    hrana_streams_set_owner(s->streams, &owner);
    if (start_node(s) != 0 || start_http(s) != 0) {
        return 1;
    }
    uv_timer_init(s->loop, &s->reaper);
    s->reaper.data = s;
    uv_timer_start(&s->reaper, reap_cb, SERVE_REAP_INTERVAL_MS,
                   SERVE_REAP_INTERVAL_MS);
    uv_signal_t *signals[] = {&s->sigterm, &s->sigint, &s->sighup};
    int numbers[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(s->loop, signals[i]);
        signals[i]->data = s;
        uv_signal_start(signals[i], signal_cb, numbers[i]);
    }
    return 0;
}

static void print_banner(const struct serve *s)
{
    printf("sinew: serving http://%s (mode %s, data %s, node %.16s)\n",
           s->http_address, serve_mode_name(s->config.mode), s->config.data_dir,
           s->node_hex);
    printf("sinew: connect with: sinew shell http://%s\n", s->http_address);
    fflush(stdout);
}

/* ---- stopping ---- */

static void finish_shutdown(struct serve *s)
{
    serve_node_stop(s->node);
    s->node = NULL;
    serve_mailbox_close(&s->box);
    uv_close((uv_handle_t *)&s->reaper, NULL);
    uv_close((uv_handle_t *)&s->deadline, NULL);
    if (s->join_started) {
        uv_close((uv_handle_t *)&s->join_timer, NULL);
    }
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sighup, NULL);
}

void serve__job_done(struct serve *s)
{
    ASSERT(s->jobs > 0);
    s->jobs--;
    if (s->stopping && s->http == NULL && s->jobs == 0) {
        if (s->streams != NULL) {
            /* Releases sessions: their rollbacks are jobs too. */
            hrana_streams_free(s->streams);
            s->streams = NULL;
            if (s->jobs > 0) {
                return;
            }
        }
        finish_shutdown(s);
    }
}

static void http_closed(void *ctx)
{
    struct serve *s = ctx;

    s->http = NULL;
    s->jobs++; /* so that job_done runs the next step */
    serve__job_done(s);
}

static void deadline_cb(uv_timer_t *timer)
{
    struct serve *s = timer->data;

    LOGF(&s->log, COMMON_LOG_ERROR,
         "shutdown took longer than %u s (a commit waiting for a quorum "
         "that is gone?): stopping at once",
         SERVE_SHUTDOWN_DEADLINE_MS / 1000u);
    _exit(1);
}

static void shutdown_begin(struct serve *s)
{
    if (s->stopping) {
        return;
    }
    s->stopping = true;
    uv_timer_stop(&s->reaper);
    uv_timer_init(s->loop, &s->deadline);
    s->deadline.data = s;
    uv_timer_start(&s->deadline, deadline_cb, SERVE_SHUTDOWN_DEADLINE_MS, 0);
    uv_unref((uv_handle_t *)&s->deadline);
    /* No client can continue an idle stream now (new requests get 503,
     * idle connections close): end their transactions, so that writers
     * queued behind one and reads waiting for a handle go on. */
    hrana_streams_reap(s->streams, UINT64_MAX);
    if (s->join_started && uv_is_active((uv_handle_t *)&s->join_timer)) {
        /* A retry was due: end the join job instead. */
        uv_timer_stop(&s->join_timer);
        common_free(s->join_timer.data);
        s->jobs--;
    }
    http_server_close(s->http, http_closed, s);
}

static void cleanup(struct serve *s)
{
    engine_close(s->no_db);
    serve_readers_free(s->readers);
    common_free(s->authorized);
    common_free(s->auth_token);
    sodium_memzero(&s->identity, sizeof s->identity);
    sodium_memzero(s->cluster_secret, sizeof s->cluster_secret);
    serve_log_close(s->log_owner);
    serve_config_release(&s->config);
}

int serve_main(int argc, char **argv)
{
    static struct serve s; /* one node per process */
    char error[512];
    int rc = serve_config_parse(argc, argv, &s.config, error, sizeof error);

    if (rc != 0) {
        if (rc == 1) {
            serve_config_release(&s.config);
            return 0; /* --help */
        }
        fprintf(stderr, "sinew serve: %s\n", error);
        serve_config_release(&s.config);
        return 2;
    }
    s.loop = uv_default_loop();
    if (prepare(&s) != 0 || start(&s) != 0) {
        /* Nothing accepted work yet (HTTP starts last): stop what
         * started and leave. */
        serve_node_stop(s.node);
        s.node = NULL;
        if (s.box_ready) {
            serve_mailbox_close(&s.box);
        }
        uv_run(s.loop, UV_RUN_DEFAULT);
        if (s.streams != NULL) {
            hrana_streams_free(s.streams);
        }
        cleanup(&s);
        return 1;
    }
    LOGF(&s.log, COMMON_LOG_INFO, "started mode=%s data=%s http=%s",
         serve_mode_name(s.config.mode), s.config.data_dir, s.http_address);
    if (s.config.mode == SERVE_MODE_QUORUM && s.config.join_url != NULL &&
        s.fresh_raft && serve__join_start(&s) != 0) {
        LOGF(&s.log, COMMON_LOG_ERROR, "cannot join error=\"out of memory\"");
    }
    print_banner(&s);
    uv_run(s.loop, UV_RUN_DEFAULT);
    LOGF(&s.log, COMMON_LOG_INFO, "stopped");
    cleanup(&s);
    uv_loop_close(s.loop);
    return 0;
}
