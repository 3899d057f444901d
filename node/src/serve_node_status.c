/* SPDX-License-Identifier: MIT
 *
 * serve_node_status.c: the node's status snapshot, refreshed on the node
 * thread and copied by the HTTP side for /v1/status and /metrics
 * (serve_node.h).
 */
#include <stdio.h>
#include <string.h>

#include "serve_node_int.h"

static void peer_address(const struct serve_config *config,
                         const struct transport_node_id *id, char *out,
                         size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < config->peer_count; i++) {
        if (transport_node_id_equal(&config->peers[i].id, id)) {
            snprintf(out, size, "%s", config->peers[i].address);
        }
    }
}

static void replication_status(struct serve_node *node, struct serve_status *s)
{
    struct replication_stats stats;

    if (replication_stats_get(node->replication, &stats) != 0) {
        return;
    }
    s->origin_count = stats.origin_count;
    for (size_t i = 0; i < stats.origin_count; i++) {
        s->versions += stats.origins[i].head;
    }
    for (size_t i = 0;
         i < stats.peer_count && s->peer_count < SERVE_STATUS_PEERS_MAX; i++) {
        const struct replication_peer_stats *p = &stats.peers[i];
        struct serve_peer_status *out = &s->peers[s->peer_count++];
        transport_node_id_format(&p->id, out->id);
        peer_address(node->config, &p->id, out->address, sizeof out->address);
        out->connected = p->connected;
        out->refused = p->refused;
        out->needs_snapshot = p->needs_snapshot;
        out->last_summary_ms = p->last_summary_ms;
        out->change_sets_sent = p->change_sets_sent;
        out->chunks_received = p->chunks_received;
    }
    s->waiting = stats.waiting;
    s->deferred = stats.deferred;
    s->quarantined = stats.quarantined;
    s->applied = stats.applied;
    s->refused = stats.refused;
    s->epoch = stats.epoch;
    s->diverged = stats.diverged;
    replication_stats_release(&stats);
    s->writer =
        node->config->mode == SERVE_MODE_LEADER &&
        transport_node_id_equal(&node->config->writer, &node->identity->id);
}

static void quorum_status(struct serve_node *node, struct serve_status *s)
{
    struct consensus *c = node_quorum_consensus(node->quorum);
    struct consensus_member members[SERVE_STATUS_PEERS_MAX];
    size_t count = 0;

    s->has_consensus = true;
    snprintf(s->advertise, sizeof s->advertise, "%s",
             serve_node__advertised(node));
    s->raft_id = serve_raft_id(&node->identity->id);
    consensus_status_get(c, &s->consensus);
    consensus_members(c, members, SERVE_STATUS_PEERS_MAX, &count);
    if (count > SERVE_STATUS_PEERS_MAX) {
        count = SERVE_STATUS_PEERS_MAX;
    }
    for (size_t i = 0; i < count; i++) {
        struct serve_member_status *out = &s->members[i];
        out->raft_id = members[i].id;
        transport_node_id_format(&members[i].node, out->id);
        snprintf(out->address, sizeof out->address, "%s",
                 members[i].address != NULL ? members[i].address : "");
        out->role = members[i].role;
        if (members[i].id == s->consensus.leader_id) {
            memcpy(s->leader_node, out->id, sizeof s->leader_node);
        }
    }
    s->member_count = count;
}

void serve_node__refresh_status(struct serve_node *node)
{
    static struct serve_status fresh; /* node thread only: big */

    memset(&fresh, 0, sizeof fresh);
    fresh.started = true;
    if (node->replication != NULL && node->holds == 0) {
        replication_status(node, &fresh);
    } else if (node->replication != NULL) {
        serve_node_status(node, &fresh); /* held: keep the last one */
    }
    if (node->quorum != NULL) {
        quorum_status(node, &fresh);
    }
    uv_mutex_lock(&node->status_lock);
    node->status = fresh;
    uv_mutex_unlock(&node->status_lock);
}
