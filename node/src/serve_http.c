/* SPDX-License-Identifier: MIT
 *
 * serve_http.c: the routes of `sinew serve` and its client
 * authentication (docs/http.md):
 *
 *   POST /v2/pipeline, /v3/pipeline   Hrana (serve_pipeline.c)
 *   GET  /v2, /v3                     version probes
 *   GET  /health                      liveness, never authenticated
 *   GET  /metrics                     Prometheus text
 *   GET  /v1/status                   the node as JSON
 *   POST /v1/cluster/add|remove|transfer   quorum membership
 *
 * With a token configured, every route but /health wants
 * "Authorization: Bearer <token>", compared in constant time.
 */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "serve_int.h"

void serve__respond_message(struct http_exchange *exchange, int status,
                            const char *message)
{
    json_t *object = json_pack("{s:s}", "message", message);
    char *body = object != NULL ? json_dumps(object, JSON_COMPACT) : NULL;

    if (body != NULL) {
        http_respond(exchange, status, "application/json", body, strlen(body),
                     NULL);
    } else {
        static const char fallback[] = "{\"message\":\"out of memory\"}";
        http_respond(exchange, 500, "application/json", fallback,
                     sizeof fallback - 1, NULL);
    }
    free(body); /* jansson's allocator: malloc */
    json_decref(object);
}

static bool authorized(const struct serve *s, const struct http_request *r)
{
    static const char prefix[] = "Bearer ";
    const char *given = r->authorization;
    size_t token_size, given_size;

    if (s->auth_token == NULL) {
        return true;
    }
    if (strncmp(given, prefix, sizeof prefix - 1) != 0) {
        return false;
    }
    given += sizeof prefix - 1;
    token_size = strlen(s->auth_token);
    given_size = strlen(given);
    return given_size == token_size &&
           sodium_memcmp(given, s->auth_token, token_size) == 0;
}

static void respond_text(struct http_exchange *exchange, int status,
                         const char *content_type, char *body, size_t size)
{
    if (body == NULL) {
        serve__respond_message(exchange, 500, "out of memory");
        return;
    }
    http_respond(exchange, status, content_type, body, size, NULL);
    common_free(body);
}

static bool is(const struct http_request *r, const char *method,
               const char *path)
{
    return strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0;
}

static bool known_path(const char *path)
{
    static const char *const paths[] = {"/",
                                        "/health",
                                        "/v2",
                                        "/v3",
                                        "/v2/pipeline",
                                        "/v3/pipeline",
                                        "/metrics",
                                        "/v1/status",
                                        "/v1/cluster/add",
                                        "/v1/cluster/remove",
                                        "/v1/cluster/transfer"};

    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (strcmp(path, paths[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void route(struct serve *s, struct http_exchange *exchange,
                  const struct http_request *r)
{
    size_t size = 0;

    if (is(r, "POST", "/v2/pipeline")) {
        serve__pipeline(s, exchange, r, 2);
    } else if (is(r, "POST", "/v3/pipeline")) {
        serve__pipeline(s, exchange, r, 3);
    } else if (is(r, "GET", "/v2") || is(r, "GET", "/v3") ||
               is(r, "GET", "/")) {
        http_respond(exchange, 200, "text/plain", "sinew\n", 6, NULL);
    } else if (is(r, "GET", "/v1/status")) {
        char *body = serve__status_json(s, &size);
        respond_text(exchange, 200, "application/json", body, size);
    } else if (is(r, "GET", "/metrics")) {
        char *body = serve__metrics_text(s, &size);
        respond_text(exchange, 200, "text/plain; version=0.0.4", body, size);
    } else if (is(r, "POST", "/v1/cluster/add")) {
        serve__admin(s, exchange, r, "add");
    } else if (is(r, "POST", "/v1/cluster/remove")) {
        serve__admin(s, exchange, r, "remove");
    } else if (is(r, "POST", "/v1/cluster/transfer")) {
        serve__admin(s, exchange, r, "transfer");
    } else {
        char message[512];
        snprintf(message, sizeof message, "%s %.400s: %s", r->method, r->path,
                 known_path(r->path) ? "method not allowed"
                                     : "no such endpoint");
        serve__respond_message(exchange, known_path(r->path) ? 405 : 404,
                               message);
    }
}

void serve__handle(void *ctx, struct http_exchange *exchange,
                   const struct http_request *request)
{
    struct serve *s = ctx;

    s->metrics.http_requests++;
    if (s->stopping) {
        serve__respond_message(exchange, 503, "the node is shutting down");
        return;
    }
    if (is(request, "GET", "/health")) {
        static const char ok[] = "{\"status\":\"ok\"}";
        http_respond(exchange, 200, "application/json", ok, sizeof ok - 1,
                     NULL);
        return;
    }
    if (!authorized(s, request)) {
        static const char body[] =
            "{\"message\":\"unauthorized (HTTP 401): missing or wrong "
            "bearer token (send Authorization: Bearer <token>)\","
            "\"code\":\"UNAUTHORIZED\"}";
        s->metrics.http_unauthorized++;
        http_respond(exchange, 401, "application/json", body, sizeof body - 1,
                     "WWW-Authenticate: Bearer\r\n");
        return;
    }
    route(s, exchange, request);
}
