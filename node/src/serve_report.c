/* SPDX-License-Identifier: MIT
 *
 * serve_report.c: GET /v1/status (the node as JSON) and GET /metrics
 * (Prometheus text exposition format 0.0.4), both from the node thread's
 * status snapshot and the HTTP thread's counters (docs/operations.md,
 * "Metrics").
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve_int.h"

#ifndef SINEW_VERSION
#error "SINEW_VERSION must come from CMake's PROJECT_VERSION"
#endif

static const char *raft_state_name(enum consensus_state state)
{
    switch (state) {
    case CONSENSUS_FOLLOWER:
        return "follower";
    case CONSENSUS_CANDIDATE:
        return "candidate";
    case CONSENSUS_LEADER:
        return "leader";
    case CONSENSUS_UNAVAILABLE:
        return "unavailable";
    }
    return "unknown";
}

static const char *role_name(enum consensus_role role)
{
    return role == CONSENSUS_VOTER     ? "voter"
           : role == CONSENSUS_STANDBY ? "standby"
                                       : "spare";
}

static char *dump(json_t *object, size_t *size)
{
    char *text = object != NULL ? json_dumps(object, JSON_COMPACT) : NULL;
    char *out = NULL;

    json_decref(object);
    if (text != NULL) {
        *size = strlen(text);
        out = common_malloc(*size + 1);
        if (out != NULL) {
            memcpy(out, text, *size + 1);
        }
    }
    free(text); /* jansson's allocator */
    return out;
}

static json_t *peers_json(const struct serve_status *st)
{
    json_t *peers = json_array();

    for (size_t i = 0; peers != NULL && i < st->peer_count; i++) {
        const struct serve_peer_status *p = &st->peers[i];
        json_array_append_new(
            peers,
            json_pack("{s:s,s:s?,s:b,s:b,s:b,s:I,s:I}", "id", p->id, "address",
                      p->address[0] ? p->address : NULL, "connected",
                      p->connected, "refused", p->refused, "needs_snapshot",
                      p->needs_snapshot, "change_sets_sent",
                      (json_int_t)p->change_sets_sent, "chunks_received",
                      (json_int_t)p->chunks_received));
    }
    return peers;
}

static json_t *members_json(const struct serve_status *st)
{
    json_t *members = json_array();

    for (size_t i = 0; members != NULL && i < st->member_count; i++) {
        const struct serve_member_status *m = &st->members[i];
        json_array_append_new(members, json_pack("{s:I,s:s,s:s,s:s}", "raft_id",
                                                 (json_int_t)m->raft_id, "id",
                                                 m->id, "address", m->address,
                                                 "role", role_name(m->role)));
    }
    return members;
}

static json_t *leader_json(const struct serve *s, const struct serve_status *st)
{
    if (st->has_consensus) {
        if (st->consensus.leader_id == 0) {
            return json_null();
        }
        return json_pack("{s:s?,s:I,s:s}", "id",
                         st->leader_node[0] ? st->leader_node : NULL, "raft_id",
                         (json_int_t)st->consensus.leader_id, "address",
                         st->consensus.leader_address);
    }
    if (s->config.mode == SERVE_MODE_LEADER) {
        char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
        transport_node_id_format(&s->config.writer, hex);
        return json_pack("{s:s}", "id", hex);
    }
    return json_null();
}

static json_t *raft_json(const struct serve_status *st)
{
    const struct consensus_status *c = &st->consensus;

    if (!st->has_consensus) {
        return json_null();
    }
    return json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:I}", "state",
                     raft_state_name(c->state), "ready", c->ready, "term",
                     (json_int_t)c->term, "raft_id", (json_int_t)st->raft_id,
                     "commit_index", (json_int_t)c->commit_index,
                     "applied_index", (json_int_t)c->applied_index,
                     "last_index", (json_int_t)c->last_index);
}

char *serve__status_json(struct serve *s, size_t *size)
{
    static struct serve_status st; /* HTTP thread only: big */
    bool replicated = s->config.mode == SERVE_MODE_CRDT ||
                      s->config.mode == SERVE_MODE_LEADER;

    serve_node_status(s->node, &st);
    json_t *object = json_pack(
        "{s:s,s:s,s:s,s:s,s:s?,s:s,s:o,s:o,s:o,s:o,s:o}", "node", s->node_hex,
        "mode", serve_mode_name(s->config.mode), "version", SINEW_VERSION,
        "http", s->http_address, "listen", s->config.listen_address, "data",
        s->config.data_dir, "peers",
        replicated ? peers_json(&st) : json_array(), "leader",
        leader_json(s, &st), "raft", raft_json(&st), "members",
        st.has_consensus ? members_json(&st) : json_null(), "replication",
        replicated
            ? json_pack(
                  "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b}",
                  "version_vector_size", (json_int_t)st.origin_count,
                  "versions", (json_int_t)st.versions, "waiting",
                  (json_int_t)st.waiting, "deferred", (json_int_t)st.deferred,
                  "quarantined", (json_int_t)st.quarantined, "applied",
                  (json_int_t)st.applied, "refused", (json_int_t)st.refused,
                  "diverged", st.diverged, "writer", st.writer)
            : json_null());
    return dump(object, size);
}

/* ---- /metrics ---- */

struct text {
    struct common_buf buf;
    bool failed;
};

static void put(struct text *t, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *format, ...)
{
    char line[512];
    va_list args;

    va_start(args, format);
    int n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n < 0 ||
        common_buf_append(&t->buf, line,
                          (size_t)n < sizeof line ? (size_t)n
                                                  : sizeof line - 1) != 0) {
        t->failed = true;
    }
}

static void metric(struct text *t, const char *name, const char *type,
                   const char *help, double value)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type,
        name, value);
}

static void http_metrics(struct text *t, const struct serve_metrics *m)
{
    static const char *const bounds[SERVE_LATENCY_BUCKETS] = {
        "0.0005", "0.001", "0.0025", "0.005", "0.01",
        "0.025",  "0.05",  "0.1",    "0.5",   "1"};

    metric(t, "sinew_http_requests_total", "counter", "HTTP requests",
           (double)m->http_requests);
    metric(t, "sinew_http_unauthorized_total", "counter",
           "requests refused for a missing or wrong token",
           (double)m->http_unauthorized);
    metric(t, "sinew_pipelines_total", "counter", "Hrana pipelines run",
           (double)m->pipelines);
    metric(t, "sinew_pipeline_failures_total", "counter",
           "pipelines refused whole (not the leader, conflicts, busy)",
           (double)m->pipeline_failures);
    metric(t, "sinew_statements_total", "counter",
           "requests (statements, batches) in pipelines",
           (double)m->statements);
    metric(t, "sinew_write_pipelines_total", "counter",
           "pipelines run on the writing handle", (double)m->writes);
    metric(t, "sinew_commits_total", "counter",
           "write pipelines that changed the database", (double)m->commits);
    put(t, "# HELP sinew_pipeline_duration_seconds pipeline latency\n"
           "# TYPE sinew_pipeline_duration_seconds histogram\n");
    for (int i = 0; i < SERVE_LATENCY_BUCKETS; i++) {
        put(t,
            "sinew_pipeline_duration_seconds_bucket{le=\"%s\"} %" PRIu64 "\n",
            bounds[i], m->latency_buckets[i]);
    }
    put(t,
        "sinew_pipeline_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
        "sinew_pipeline_duration_seconds_sum %.9f\n"
        "sinew_pipeline_duration_seconds_count %" PRIu64 "\n",
        m->latency_count, m->latency_sum_s, m->latency_count);
}

static void replication_metrics(struct text *t, const struct serve_status *st,
                                uint64_t now_ms)
{
    metric(t, "sinew_replication_version_vector_size", "gauge",
           "origins in the version vector", (double)st->origin_count);
    metric(t, "sinew_replication_versions", "gauge",
           "change sets held, summed over origins", (double)st->versions);
    metric(t, "sinew_replication_deferred_change_sets", "gauge",
           "change sets held: stamped too far ahead", (double)st->deferred);
    metric(t, "sinew_replication_waiting_change_sets", "gauge",
           "change sets held for an earlier version", (double)st->waiting);
    metric(t, "sinew_replication_quarantined_change_sets", "gauge",
           "change sets with records kept for unknown tables",
           (double)st->quarantined);
    metric(t, "sinew_replication_applied_total", "counter",
           "change sets merged from peers", (double)st->applied);
    metric(t, "sinew_replication_refused_total", "counter",
           "change sets refused", (double)st->refused);
    put(t, "# HELP sinew_replication_peer_connected 1 when connected\n"
           "# TYPE sinew_replication_peer_connected gauge\n");
    for (size_t i = 0; i < st->peer_count; i++) {
        put(t, "sinew_replication_peer_connected{peer=\"%.16s\"} %d\n",
            st->peers[i].id, st->peers[i].connected ? 1 : 0);
    }
    put(t, "# HELP sinew_replication_peer_lag_seconds time since the peer's "
           "last summary (its acknowledgement)\n"
           "# TYPE sinew_replication_peer_lag_seconds gauge\n");
    for (size_t i = 0; i < st->peer_count; i++) {
        uint64_t last = st->peers[i].last_summary_ms;
        put(t, "sinew_replication_peer_lag_seconds{peer=\"%.16s\"} %.3f\n",
            st->peers[i].id,
            last == 0 || last > now_ms ? -1.0 : (double)(now_ms - last) / 1e3);
    }
}

static void raft_metrics(struct text *t, const struct serve_status *st)
{
    const struct consensus_status *c = &st->consensus;

    metric(t, "sinew_raft_term", "gauge", "current Raft term", (double)c->term);
    metric(t, "sinew_raft_leader", "gauge", "1 when this member leads",
           c->state == CONSENSUS_LEADER ? 1.0 : 0.0);
    metric(t, "sinew_raft_leader_id", "gauge",
           "the leader's Raft id (0: none known)", (double)c->leader_id);
    metric(t, "sinew_raft_commit_index", "gauge", "commit index",
           (double)c->commit_index);
    metric(t, "sinew_raft_applied_index", "gauge", "applied index",
           (double)c->applied_index);
    metric(t, "sinew_raft_last_index", "gauge", "last log index",
           (double)c->last_index);
    metric(t, "sinew_raft_members", "gauge", "members of the configuration",
           (double)st->member_count);
}

static uint64_t wall_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

char *serve__metrics_text(struct serve *s, size_t *size)
{
    static struct serve_status st; /* HTTP thread only: big */
    struct text t = {.failed = false};

    common_buf_init(&t.buf, (size_t)1 << 24);
    serve_node_status(s->node, &st);
    put(&t,
        "# HELP sinew_info the node\n# TYPE sinew_info gauge\n"
        "sinew_info{version=\"%s\",mode=\"%s\",node=\"%.16s\"} 1\n",
        SINEW_VERSION, serve_mode_name(s->config.mode), s->node_hex);
    http_metrics(&t, &s->metrics);
    if (s->config.mode == SERVE_MODE_CRDT ||
        s->config.mode == SERVE_MODE_LEADER) {
        replication_metrics(&t, &st, wall_now_ms());
    }
    if (st.has_consensus) {
        raft_metrics(&t, &st);
    }
    if (t.failed || common_buf_append_byte(&t.buf, 0) != 0) {
        common_buf_close(&t.buf);
        return NULL;
    }
    char *out = (char *)common_buf_detach(&t.buf, size);
    *size -= 1;
    return out;
}
