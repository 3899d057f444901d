/* SPDX-License-Identifier: MIT
 *
 * serve_node_open.c: starting and stopping the node thread, and opening
 * each mode's pieces on it (serve_node.h).
 */
#include <stdio.h>
#include <string.h>

#include "node.h"
#include "serve_node_int.h"

/* ---- opening, on the node thread ---- */

static int open_transport(struct serve_node *node)
{
    const struct serve_config *config = node->config;
    struct transport_tcp_config tcp = {
        .identity = node->identity,
        .admission = node->admission,
        .log = &node->transport_log,
    };
    const struct transport_callbacks callbacks = {
        .received = serve_node__on_received,
        .connected = serve_node__on_connected,
        .disconnected = serve_node__on_disconnected,
        .writable = serve_node__on_writable,
        .ctx = node,
    };
    int rc = transport_tcp_new(&node->loop, &tcp, &callbacks, &node->transport);

    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot start the peer transport: %s", node_strerror(rc));
        return rc;
    }
    rc = transport_listen(node->transport, config->listen_address);
    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot listen for peers on %s: %s", config->listen_address,
                 node_strerror(rc));
        return rc;
    }
    char *address = node->listen_address;
    if (transport_listen_address(node->transport, address,
                                 sizeof node->listen_address) == 0) {
        LOGF(&node->log, COMMON_LOG_INFO, "listening for peers address=%s",
             address);
    }
    return 0;
}

static int open_db(struct serve_node *node)
{
    const char *sync = node->config->sync == SERVE_SYNC_NORMAL
                           ? "PRAGMA synchronous = NORMAL"
                           : "PRAGMA synchronous = FULL";
    int rc = engine_open(node->db_path, &node->db);

    if (rc == 0) {
        rc = engine_exec(node->db, sync, NULL, NULL);
    }
    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot open the database %.300s: %s", node->db_path,
                 node->db != NULL ? engine_errmsg(node->db)
                                  : node_strerror(rc));
    }
    return rc;
}

static bool is_writer(void *ctx, uint64_t *epoch)
{
    struct serve_node *node = ctx;
    const struct serve_config *config = node->config;

    if (!transport_node_id_equal(&config->writer, &node->identity->id)) {
        return false;
    }
    *epoch = config->writer_epoch;
    return true;
}

static int open_replication(struct serve_node *node)
{
    const struct serve_config *config = node->config;
    struct transport_node_id *members =
        common_calloc(config->peer_count + 1, sizeof *members);
    struct replication_config rc_config = {
        .mode = config->mode == SERVE_MODE_LEADER ? REPLICATION_MODE_LEADER
                                                  : REPLICATION_MODE_CRDT,
        .db = node->db,
        .transport = node->transport,
        .clock = {.now_ms = serve_node__wall_ms},
        .max_offset_ms = config->max_offset_ms,
        .members = members,
        .member_count = config->peer_count,
        .is_writer = is_writer,
        .is_writer_ctx = node,
        .log = node->replication_log,
    };
    int rc;

    if (members == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < config->peer_count; i++) {
        members[i] = config->peers[i].id;
    }
    rc = replication_open(&rc_config, &node->replication);
    common_free(members);
    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot start replication: %s", node_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < config->peer_count && rc == 0; i++) {
        rc = transport_connect(node->transport, &config->peers[i].id,
                               config->peers[i].address);
    }
    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot dial a peer: %s", node_strerror(rc));
    }
    return rc;
}

const char *serve_node__advertised(const struct serve_node *node)
{
    const char *address = node->config->advertise_address;
    size_t length = strlen(address);

    if (length >= 2 && strcmp(address + length - 2, ":0") == 0) {
        return node->listen_address;
    }
    return address;
}

static int bootstrap_quorum(struct serve_node *node)
{
    const struct serve_config *config = node->config;
    size_t count = config->peer_count + 1;
    struct consensus_member *members = common_calloc(count, sizeof *members);
    int rc;

    if (members == NULL) {
        return COMMON_ENOMEM;
    }
    members[0] = (struct consensus_member){
        .id = serve_raft_id(&node->identity->id),
        .node = node->identity->id,
        .address = serve_node__advertised(node),
        .role = CONSENSUS_VOTER,
    };
    for (size_t i = 0; i < config->peer_count; i++) {
        members[i + 1] = (struct consensus_member){
            .id = serve_raft_id(&config->peers[i].id),
            .node = config->peers[i].id,
            .address = config->peers[i].address,
            .role = CONSENSUS_VOTER,
        };
    }
    rc = node_quorum_bootstrap(node->quorum, members, count);
    common_free(members);
    /* Bootstrapped before: the stored configuration stands. */
    return rc == CONSENSUS_ECANTBOOTSTRAP ? 0 : rc;
}

static int open_quorum(struct serve_node *node)
{
    const char *advertise = serve_node__advertised(node);
    struct node_quorum_config q = {
        .db_path = node->db_path,
        .consensus =
            {
                .id = serve_raft_id(&node->identity->id),
                .node = node->identity->id,
                .address = advertise,
                .data_dir = node->raft_dir,
                .transport = node->transport,
                .clock = {.now_ms = serve_node__monotonic_ms},
                .random = {.next = serve_node__random},
                .log = &node->consensus_log,
            },
    };
    int rc = node_quorum_open(&q, &node->quorum);

    if (rc == 0 && node->bootstrap) {
        rc = bootstrap_quorum(node);
    }
    if (rc == 0) {
        rc = node_quorum_start(node->quorum);
    }
    if (rc != 0) {
        snprintf(node->start_error, sizeof node->start_error,
                 "cannot start the Raft member: %s", node_strerror(rc));
    }
    return rc;
}

static int open_mode(struct serve_node *node)
{
    int rc = 0;

    switch (node->config->mode) {
    case SERVE_MODE_SINGLE:
        return open_db(node);
    case SERVE_MODE_CRDT:
    case SERVE_MODE_LEADER:
        rc = open_db(node);
        rc = rc == 0 ? open_transport(node) : rc;
        return rc == 0 ? open_replication(node) : rc;
    case SERVE_MODE_QUORUM:
        rc = open_transport(node);
        return rc == 0 ? open_quorum(node) : rc;
    }
    return NODE_EINVAL;
}

/* ---- closing, on the node thread ---- */

static void transport_closed(void *ctx)
{
    (void)ctx;
}

static void close_all(struct serve_node *node)
{
    node->stopping = true;
    uv_timer_stop(&node->tick_timer);
    uv_timer_stop(&node->status_timer);
    if (!uv_is_closing((uv_handle_t *)&node->tick_timer)) {
        uv_close((uv_handle_t *)&node->tick_timer, NULL);
        uv_close((uv_handle_t *)&node->status_timer, NULL);
    }
    replication_close(node->replication);
    node->replication = NULL;
    node_quorum_close(node->quorum);
    node->quorum = NULL;
    if (node->transport != NULL) {
        transport_close(node->transport, transport_closed, node);
        node->transport = NULL;
    }
    engine_close(node->db);
    node->db = NULL;
    while (node->held_head != NULL) {
        struct serve_event *event = node->held_head;
        node->held_head = event->next;
        common_free(event);
    }
    node->held_tail = NULL;
    serve_mailbox_close(&node->box);
}

static void stop_cb(void *ctx)
{
    close_all(ctx);
}

static void status_cb(uv_timer_t *timer)
{
    serve_node__refresh_status(timer->data);
}

/* ---- the thread ---- */

static void signal_started(struct serve_node *node, int rc)
{
    uv_mutex_lock(&node->start_lock);
    node->start_rc = rc;
    node->start_done = true;
    uv_cond_signal(&node->start_cond);
    uv_mutex_unlock(&node->start_lock);
}

static void thread_main(void *arg)
{
    struct serve_node *node = arg;
    int rc = serve_mailbox_init(&node->box, &node->loop);

    uv_timer_init(&node->loop, &node->tick_timer);
    uv_timer_init(&node->loop, &node->status_timer);
    node->tick_timer.data = node;
    node->status_timer.data = node;
    if (rc == 0) {
        rc = open_mode(node);
    }
    if (rc == 0) {
        serve_node__refresh_status(node);
        uv_timer_start(&node->status_timer, status_cb, SERVE_STATUS_INTERVAL_MS,
                       SERVE_STATUS_INTERVAL_MS);
        serve_node_kick(node);
    } else {
        close_all(node);
    }
    signal_started(node, rc);
    uv_run(&node->loop, UV_RUN_DEFAULT);
}

static void free_node(struct serve_node *node)
{
    uv_loop_close(&node->loop);
    uv_mutex_destroy(&node->status_lock);
    uv_mutex_destroy(&node->start_lock);
    uv_cond_destroy(&node->start_cond);
    common_free(node);
}

static void node_logs(struct serve_node *node, struct serve_log *log)
{
    serve_log_sink(log, "node", &node->log);
    serve_log_sink(log, "transport", &node->transport_log);
    serve_log_sink(log, "replication", &node->replication_log);
    serve_log_sink(log, "consensus", &node->consensus_log);
}

int serve_node_start(const struct serve_node_config *config,
                     struct serve_node **out, char *error, size_t error_size)
{
    struct serve_node *node = common_calloc(1, sizeof *node);
    int rc;

    *out = NULL;
    if (node == NULL) {
        return COMMON_ENOMEM;
    }
    node->config = config->config;
    node->identity = config->identity;
    node->admission = config->admission;
    node->bootstrap = config->bootstrap;
    snprintf(node->db_path, sizeof node->db_path, "%s", config->db_path);
    snprintf(node->raft_dir, sizeof node->raft_dir, "%s",
             config->raft_dir != NULL ? config->raft_dir : "");
    node_logs(node, config->log);
    uv_mutex_init(&node->status_lock);
    uv_mutex_init(&node->start_lock);
    uv_cond_init(&node->start_cond);
    rc = uv_loop_init(&node->loop);
    if (rc == 0) {
        rc = uv_thread_create(&node->thread, thread_main, node);
    }
    if (rc != 0) {
        snprintf(error, error_size, "cannot start the node thread: %s",
                 uv_strerror(rc));
        free_node(node);
        return NODE_EIO;
    }
    uv_mutex_lock(&node->start_lock);
    while (!node->start_done) {
        uv_cond_wait(&node->start_cond, &node->start_lock);
    }
    uv_mutex_unlock(&node->start_lock);
    if (node->start_rc != 0) {
        rc = node->start_rc;
        snprintf(error, error_size, "%s",
                 node->start_error[0] != '\0' ? node->start_error
                                              : node_strerror(rc));
        uv_thread_join(&node->thread);
        free_node(node);
        return rc;
    }
    *out = node;
    return 0;
}

void serve_node_stop(struct serve_node *node)
{
    if (node == NULL) {
        return;
    }
    if (serve_node_post(node, stop_cb, node) != 0) {
        ASSERT(node->stopping); /* only a closed mailbox refuses */
    }
    uv_thread_join(&node->thread);
    free_node(node);
}
