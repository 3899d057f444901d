/* SPDX-License-Identifier: MIT
 *
 * cluster_cli.c: `sinew cluster`, the admin commands over a node's HTTP
 * API (cluster_cli.h). status reads GET /v1/status and prints it as
 * aligned "key value" lines, with one line per peer and per Raft member;
 * add, remove and transfer POST a small JSON body to /v1/cluster/<verb>
 * and report the node's answer. Every field of the status is optional
 * (a single node has no leader, raft or members), so absent and null
 * fields print as "-" or are left out, never trusted to exist.
 */
#include "cluster_cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "remote.h"

/* What the command line asked for. Strings are borrowed from argv. */
struct cluster_args {
    const char *action;   /* status, add, remove, transfer */
    const char *words[2]; /* positional arguments after the action */
    int word_count;
    const char *node;       /* --node URL */
    const char *token_file; /* --auth-token-file */
    const char *role;       /* --role, add only */
    bool wants_help;
};

void cluster_usage(FILE *stream)
{
    fprintf(stream,
            "Usage: sinew cluster status [--node URL]\n"
            "       sinew cluster add ID ADDRESS [--role voter|standby|spare] "
            "[--node URL]\n"
            "       sinew cluster remove ID [--node URL]\n"
            "       sinew cluster transfer [ID] [--node URL]\n"
            "Shows or changes the membership of the cluster of the node at\n"
            "URL (default " CLUSTER_DEFAULT_NODE "). ID is a node id (64 hex\n"
            "digits), ADDRESS the host:port its peers reach it at; transfer\n"
            "hands leadership to ID (or to a voter the leader picks).\n"
            "  --node URL              the node to ask\n"
            "  --auth-token-file FILE  its bearer token (else "
            "$SINEW_AUTH_TOKEN)\n"
            "  --role ROLE             add: voter (default), standby or "
            "spare\n");
}

static int usage_error(const char *message, const char *detail)
{
    fprintf(stderr, "sinew cluster: %s%s\n", message, detail);
    fprintf(stderr, "Try 'sinew cluster --help'.\n");
    return CLUSTER_EXIT_USAGE;
}

/* Takes argv[*i] as an option with a value; false when it is not one. */
static bool take_valued(struct cluster_args *args, int argc, char **argv,
                        int *i)
{
    static const char *const names[] = {"--node", "--auth-token-file",
                                        "--role"};
    const char **fields[] = {&args->node, &args->token_file, &args->role};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        if (strcmp(argv[*i], names[k]) == 0 && *i + 1 < argc) {
            *fields[k] = argv[++*i];
            return true;
        }
    }
    return false;
}

static int parse_args(int argc, char **argv, struct cluster_args *args)
{
    memset(args, 0, sizeof(*args));
    args->node = CLUSTER_DEFAULT_NODE;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            args->wants_help = true;
        } else if (take_valued(args, argc, argv, &i)) {
            continue;
        } else if (arg[0] == '-') {
            return usage_error("unknown option or missing value: ", arg);
        } else if (args->action == NULL) {
            args->action = arg;
        } else if (args->word_count < 2) {
            args->words[args->word_count++] = arg;
        } else {
            return usage_error("too many arguments: ", arg);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Requests
 * ------------------------------------------------------------------------ */

/* Sends one request and returns the parsed JSON of a 200 answer in *out
 * (NULL when the body is not JSON), or prints the failure. */
static int ask(const struct cluster_args *args, const char *method,
               const char *path, const char *body, json_t **out)
{
    char error[REMOTE_ERROR_SIZE];
    struct remote_url url;
    char *token = NULL;
    *out = NULL;
    int rc = remote_url_parse(args->node, &url, error, sizeof(error));
    if (rc == 0) {
        rc = remote_auth_token_load(args->token_file, &token, error,
                                    sizeof(error));
    }
    struct remote_http_response response = {0};
    if (rc == 0) {
        rc = remote_http_request(&url, method, path, token, body,
                                 body != NULL ? strlen(body) : 0, &response,
                                 error, sizeof(error));
    }
    if (rc == 0 && response.status == 401) {
        snprintf(error, sizeof(error), "%s", REMOTE_NOT_AUTHORIZED_TEXT);
        rc = NODE_EAUTH;
    } else if (rc == 0 && response.status != 200) {
        remote_http_error_text(&response, error, sizeof(error));
        rc = NODE_EINVAL;
    } else if (rc == 0 && response.body != NULL) {
        *out = json_loadb(response.body, response.body_size, 0, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "%s%s\n",
                rc == NODE_EAUTH ? "" : "sinew cluster: ", error);
    }
    remote_http_response_release(&response);
    common_free(token);
    return rc;
}

/* POSTs body (stolen) to /v1/cluster/<verb>; prints done on success. */
static int post(const struct cluster_args *args, const char *verb, json_t *body,
                const char *done)
{
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        fprintf(stderr, "sinew cluster: out of memory\n");
        return CLUSTER_EXIT_FAILED;
    }
    char path[64];
    snprintf(path, sizeof(path), "v1/cluster/%s", verb);
    json_t *answer = NULL;
    int rc = ask(args, "POST", path, text, &answer);
    free(text); /* jansson's allocation */
    json_decref(answer);
    if (rc != 0) {
        return CLUSTER_EXIT_FAILED;
    }
    printf("%s\n", done);
    return CLUSTER_EXIT_OK;
}

static int run_add(const struct cluster_args *args)
{
    const char *role = args->role != NULL ? args->role : "voter";
    if (args->word_count != 2) {
        return usage_error("add needs ID and ADDRESS", "");
    }
    if (strcmp(role, "voter") != 0 && strcmp(role, "standby") != 0 &&
        strcmp(role, "spare") != 0) {
        return usage_error("--role must be voter, standby or spare, not ",
                           role);
    }
    char done[256];
    snprintf(done, sizeof(done), "added %.70s at %.100s as %s", args->words[0],
             args->words[1], role);
    return post(args, "add",
                json_pack("{s:s,s:s,s:s}", "id", args->words[0], "address",
                          args->words[1], "role", role),
                done);
}

static int run_remove(const struct cluster_args *args)
{
    if (args->word_count != 1) {
        return usage_error("remove needs ID", "");
    }
    char done[128];
    snprintf(done, sizeof(done), "removed %.70s", args->words[0]);
    return post(args, "remove", json_pack("{s:s}", "id", args->words[0]), done);
}

static int run_transfer(const struct cluster_args *args)
{
    if (args->word_count > 1) {
        return usage_error("transfer takes at most one ID", "");
    }
    char done[128];
    snprintf(done, sizeof(done), "leadership transfer to %.70s started",
             args->word_count == 1 ? args->words[0] : "another voter");
    json_t *body = args->word_count == 1
                       ? json_pack("{s:s}", "id", args->words[0])
                       : json_object();
    return post(args, "transfer", body, done);
}

/* ------------------------------------------------------------------------
 * status
 * ------------------------------------------------------------------------ */

/* A JSON scalar as text: strings as they are, "-" for absent or null. */
static void print_scalar(const json_t *value)
{
    if (json_is_string(value)) {
        printf("%s", json_string_value(value));
    } else if (json_is_integer(value)) {
        printf("%lld", (long long)json_integer_value(value));
    } else if (json_is_real(value)) {
        printf("%g", json_real_value(value));
    } else if (json_is_boolean(value)) {
        printf("%s", json_is_true(value) ? "true" : "false");
    } else {
        printf("-");
    }
}

static void print_field(const char *label, const json_t *value)
{
    printf("%-10s", label);
    print_scalar(value);
    printf("\n");
}

/* "k=v k=v" for the keys of object that are present. */
static void print_pairs(const json_t *object, const char *const *keys,
                        size_t key_count)
{
    const char *space = "";
    for (size_t i = 0; i < key_count; i++) {
        const json_t *value = json_object_get(object, keys[i]);
        if (value != NULL) {
            printf("%s%s=", space, keys[i]);
            print_scalar(value);
            space = " ";
        }
    }
    printf("\n");
}

static void print_object(const char *label, const json_t *object,
                         const char *const *keys, size_t key_count)
{
    printf("%-10s", label);
    if (json_is_object(object)) {
        print_pairs(object, keys, key_count);
    } else {
        printf("none\n");
    }
}

/* "label count", then one indented line of pairs per element. */
static void print_list(const char *label, const json_t *list,
                       const char *const *keys, size_t key_count)
{
    if (!json_is_array(list)) {
        return;
    }
    printf("%-10s%zu\n", label, json_array_size(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        printf("  ");
        print_pairs(json_array_get(list, i), keys, key_count);
    }
}

static void print_status(const json_t *status)
{
    static const char *const leader_keys[] = {"id", "raft_id", "address"};
    static const char *const raft_keys[] = {"state", "term", "commit_index",
                                            "applied_index"};
    static const char *const peer_keys[] = {"id", "address", "connected"};
    static const char *const member_keys[] = {"raft_id", "id", "address",
                                              "role"};
    print_field("node", json_object_get(status, "node"));
    print_field("mode", json_object_get(status, "mode"));
    print_field("version", json_object_get(status, "version"));
    print_field("http", json_object_get(status, "http"));
    print_field("listen", json_object_get(status, "listen"));
    print_object("leader", json_object_get(status, "leader"), leader_keys, 3);
    if (json_object_get(status, "raft") != NULL) {
        print_object("raft", json_object_get(status, "raft"), raft_keys, 4);
    }
    print_list("peers", json_object_get(status, "peers"), peer_keys, 3);
    print_list("members", json_object_get(status, "members"), member_keys, 4);
}

static int run_status(const struct cluster_args *args)
{
    if (args->word_count != 0) {
        return usage_error("status takes no arguments", "");
    }
    json_t *status = NULL;
    if (ask(args, "GET", "v1/status", NULL, &status) != 0) {
        return CLUSTER_EXIT_FAILED;
    }
    if (!json_is_object(status)) {
        fprintf(stderr, "sinew cluster: the node's status is not a JSON "
                        "object\n");
        json_decref(status);
        return CLUSTER_EXIT_FAILED;
    }
    print_status(status);
    json_decref(status);
    return CLUSTER_EXIT_OK;
}

int cluster_main(int argc, char **argv)
{
    struct cluster_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc != 0) {
        return rc;
    }
    if (args.wants_help) {
        cluster_usage(stdout);
        return CLUSTER_EXIT_OK;
    }
    if (args.action == NULL) {
        cluster_usage(stderr);
        return CLUSTER_EXIT_USAGE;
    }
    if (args.role != NULL && strcmp(args.action, "add") != 0) {
        return usage_error("--role is for add only", "");
    }
    struct remote_url url;
    char error[REMOTE_ERROR_SIZE];
    if (remote_url_parse(args.node, &url, error, sizeof(error)) != 0) {
        return usage_error("--node: ", error);
    }
    static const char *const actions[] = {"status", "add", "remove",
                                          "transfer"};
    static int (*const runs[])(const struct cluster_args *) = {
        run_status, run_add, run_remove, run_transfer};
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        if (strcmp(args.action, actions[i]) == 0) {
            return runs[i](&args);
        }
    }
    return usage_error("unknown action: ", args.action);
}
