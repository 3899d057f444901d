/* SPDX-License-Identifier: MIT
 *
 * serve_join.c: --join URL in quorum mode. A node that is not in the
 * cluster's configuration asks the node at URL (the leader: a follower
 * refuses, naming the leader in its answer, which the log shows) to add it, as
 * `sinew cluster add` would, and retries every second until one accepts or
 * the node stops. Only a node with no Raft log yet joins; a restarted
 * member is in the configuration already. It runs in a worker thread: the HTTP
 * client blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote.h"
#include "serve_int.h"

#define SERVE_JOIN_RETRY_MS 1000u

struct serve_join {
    struct serve *s;
    uv_work_t work;
    char url[1024];
    char body[512];
    char token[1024];
    bool has_token;
    int attempts;
    bool joined;
    char error[512];
};

static bool try_join(struct serve_join *join)
{
    struct remote_url url;
    struct remote_http_response response = {0};
    int rc = remote_url_parse(join->url, &url, join->error, sizeof join->error);

    if (rc != 0) {
        return false;
    }
    rc = remote_http_request(&url, "POST", "v1/cluster/add",
                             join->has_token ? join->token : NULL, join->body,
                             strlen(join->body), &response, join->error,
                             sizeof join->error);
    bool ok = rc == 0 && response.status == 200;
    if (rc == 0 && !ok) {
        remote_http_error_text(&response, join->error, sizeof join->error);
    }
    remote_http_response_release(&response);
    return ok;
}

static void join_work(uv_work_t *work)
{
    struct serve_join *join = work->data;

    join->attempts++;
    join->joined = try_join(join);
}

static void join_retry_cb(uv_timer_t *timer);

static void join_done(uv_work_t *work, int status)
{
    struct serve_join *join = work->data;
    struct serve *s = join->s;

    (void)status;
    if (join->joined) {
        LOGF(&s->log, COMMON_LOG_INFO, "joined the cluster via=%s", join->url);
    } else if (join->attempts == 1 || join->attempts % 30 == 0) {
        LOGF(&s->log, COMMON_LOG_WARN,
             "join not accepted yet via=%s error=\"%s\" attempts=%d", join->url,
             join->error, join->attempts);
    }
    if (join->joined || s->stopping) {
        serve__job_done(s);
        common_free(join);
        return;
    }
    uv_timer_start(&s->join_timer, join_retry_cb, SERVE_JOIN_RETRY_MS, 0);
}

static void join_retry_cb(uv_timer_t *timer)
{
    struct serve_join *join = timer->data;

    uv_queue_work(join->s->loop, &join->work, join_work, join_done);
}

int serve__join_start(struct serve *s)
{
    struct serve_join *join = common_calloc(1, sizeof *join);

    if (join == NULL) {
        return COMMON_ENOMEM;
    }
    join->s = s;
    join->work.data = join;
    snprintf(join->url, sizeof join->url, "%s", s->config.join_url);
    struct serve_status *status = common_malloc(sizeof *status);
    json_t *body = NULL;
    char *text = NULL;
    if (status != NULL) {
        serve_node_status(s->node, status);
        body = json_pack("{s:s,s:s,s:s}", "id", s->node_hex, "address",
                         status->advertise, "role", "voter");
        text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    }
    bool fits = text != NULL && strlen(text) < sizeof join->body;
    if (fits) {
        memcpy(join->body, text, strlen(text) + 1);
    }
    free(text); /* jansson's allocator */
    json_decref(body);
    common_free(status);
    if (!fits) {
        common_free(join);
        return COMMON_ENOMEM;
    }
    if (s->auth_token != NULL) {
        snprintf(join->token, sizeof join->token, "%s", s->auth_token);
        join->has_token = true;
    }
    uv_timer_init(s->loop, &s->join_timer);
    s->join_timer.data = join;
    s->join_started = true;
    s->jobs++;
    uv_queue_work(s->loop, &join->work, join_work, join_done);
    return 0;
}
