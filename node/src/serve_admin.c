/* SPDX-License-Identifier: MIT
 *
 * serve_admin.c: quorum membership over HTTP, what `sinew cluster add |
 * remove | transfer` sends (docs/operations.md, "Adding and removing
 * nodes"):
 *
 *   POST /v1/cluster/add       {"id": "<node id>", "address": "host:port",
 *                               "role": "voter" | "standby" | "spare"}
 *   POST /v1/cluster/remove    {"id": "<node id>"}
 *   POST /v1/cluster/transfer  {"id": "<node id>"} or {} (any voter)
 *
 * Answered 200 {"ok": true} once the change committed (or, for transfer,
 * the attempt ended), else {"message"} with 400 (bad request), 409 (not
 * the leader: the message names it) or 500. The Raft id of a node is
 * derived from its node id (serve_raft_id), so operators name nodes by
 * the id `sinew keygen` printed.
 */
#include <stdio.h>
#include <string.h>

#include "node.h"
#include "serve_int.h"

struct serve_admin {
    struct serve *s;
    struct http_exchange *exchange;
    char op[16];
    struct consensus_member member;
    char address[256];
    bool has_id;
    int status;
};

static void admin_answer_cb(void *ctx)
{
    struct serve_admin *admin = ctx;
    char message[512];

    if (admin->status == 0) {
        static const char ok[] = "{\"ok\":true}";
        http_respond(admin->exchange, 200, "application/json", ok,
                     sizeof ok - 1, NULL);
    } else {
        struct serve_status st;
        serve_node_status(admin->s->node, &st);
        if (admin->status == CONSENSUS_ENOTLEADER) {
            snprintf(message, sizeof message,
                     "not the leader: ask the leader (node %.16s, peer "
                     "address %s)",
                     st.leader_node[0] ? st.leader_node : "unknown",
                     st.consensus.leader_address);
        } else {
            snprintf(message, sizeof message, "cluster %s failed: %s",
                     admin->op, node_strerror(admin->status));
        }
        serve__respond_message(
            admin->exchange, admin->status == CONSENSUS_ENOTLEADER ? 409 : 500,
            message);
    }
    serve__job_done(admin->s);
    common_free(admin);
}

static void admin_done(void *ctx, int status)
{
    struct serve_admin *admin = ctx;
    int rc;

    admin->status = status;
    rc = serve_mailbox_post(&admin->s->box, admin_answer_cb, admin);
    ASSERT(rc == 0);
}

static void admin_cb(void *ctx)
{
    struct serve_admin *admin = ctx;
    struct node_quorum *q = serve_node_quorum(admin->s->node);
    struct consensus *c = node_quorum_consensus(q);
    int rc;

    if (strcmp(admin->op, "add") == 0) {
        admin->member.address = admin->address;
        rc = consensus_add(c, &admin->member, admin_done, admin);
    } else if (strcmp(admin->op, "remove") == 0) {
        rc = consensus_remove(c, admin->member.id, admin_done, admin);
    } else {
        rc = consensus_transfer(c, admin->has_id ? admin->member.id : 0,
                                admin_done, admin);
    }
    serve_node_kick(admin->s->node);
    if (rc != 0) {
        admin_done(admin, rc);
    }
}

static int parse_role(const char *name, enum consensus_role *out)
{
    if (name == NULL || strcmp(name, "voter") == 0) {
        *out = CONSENSUS_VOTER;
    } else if (strcmp(name, "standby") == 0) {
        *out = CONSENSUS_STANDBY;
    } else if (strcmp(name, "spare") == 0) {
        *out = CONSENSUS_SPARE;
    } else {
        return NODE_EINVAL;
    }
    return 0;
}

/* Fills admin from the body; a message for the client on failure. */
static const char *parse_admin(struct serve_admin *admin,
                               const struct http_request *request)
{
    json_t *body = json_loadb(request->body, request->body_size, 0, NULL);
    const char *id = NULL, *address = NULL, *role = NULL;
    const char *problem = NULL;

    if (body == NULL || json_unpack(body, "{s?s,s?s,s?s}", "id", &id, "address",
                                    &address, "role", &role) != 0) {
        problem = "the body must be a JSON object with string fields id, "
                  "address, role";
    } else if (id != NULL &&
               transport_node_id_parse(id, &admin->member.node) != 0) {
        problem = "id must be a node id: 64 hex digits (sinew keygen prints "
                  "it)";
    } else if (id == NULL && strcmp(admin->op, "transfer") != 0) {
        problem = "id is required";
    } else if (strcmp(admin->op, "add") == 0 &&
               (address == NULL || strlen(address) >= sizeof admin->address ||
                strchr(address, ':') == NULL)) {
        problem = "address (the new node's peer address, host:port) is "
                  "required";
    } else if (parse_role(role, &admin->member.role) != 0) {
        problem = "role must be voter, standby or spare";
    }
    if (problem == NULL && id != NULL) {
        admin->has_id = true;
        admin->member.id = serve_raft_id(&admin->member.node);
    }
    if (problem == NULL && address != NULL) {
        snprintf(admin->address, sizeof admin->address, "%s", address);
    }
    json_decref(body);
    return problem;
}

void serve__admin(struct serve *s, struct http_exchange *exchange,
                  const struct http_request *request, const char *op)
{
    struct serve_admin *admin;
    const char *problem;

    if (s->config.mode != SERVE_MODE_QUORUM) {
        serve__respond_message(exchange, 400,
                               "cluster membership is for --mode quorum; "
                               "crdt and leader nodes are listed with --peer");
        return;
    }
    admin = common_calloc(1, sizeof *admin);
    if (admin == NULL) {
        serve__respond_message(exchange, 500, "out of memory");
        return;
    }
    admin->s = s;
    admin->exchange = exchange;
    snprintf(admin->op, sizeof admin->op, "%s", op);
    problem = parse_admin(admin, request);
    if (problem != NULL) {
        serve__respond_message(exchange, 400, problem);
        common_free(admin);
        return;
    }
    s->jobs++;
    if (serve_node_post(s->node, admin_cb, admin) != 0) {
        admin->status = NODE_EUNAVAILABLE;
        admin_answer_cb(admin);
    }
}
