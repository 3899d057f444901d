/* SPDX-License-Identifier: MIT
 *
 * node.c: a sim node's lifecycle, shared by every mode (chaos-design.md
 * §3): its endpoint on the in-memory network (callbacks routed to the
 * mode's ops), start and restart, crash (disk frozen first, the mode's
 * state closed without sends, the endpoint closed, unsynced writes
 * reverted) and pause (SIGSTOP: the network holds its events, the loop
 * runs none of its code), and the loss of a down node's whole data dir
 * (a disk replaced: what the mode makes of it is its own).
 */
#include <string.h>
#include <sys/stat.h>

#include "sim_int.h"

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct sim_node *node = ctx;

    if (!node->up || node->crash_pending) {
        return;
    }
    node->sim->ops->received(node, peer, type, bytes, size);
    node->tick_now = true;
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct sim_node *node = ctx;

    if (node->up && !node->crash_pending) {
        node->sim->ops->connected(node, peer);
        node->tick_now = true;
    }
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct sim_node *node = ctx;

    if (node->up && !node->crash_pending) {
        node->sim->ops->disconnected(node, peer, reason);
        node->tick_now = true;
    }
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct sim_node *node = ctx;

    if (node->up && !node->crash_pending && node->sim->ops->writable) {
        node->sim->ops->writable(node, peer);
        node->tick_now = true;
    }
}

int sim_node_start(struct sim *sim, unsigned index)
{
    struct sim_node *node = &sim->nodes[index];
    const struct transport_callbacks callbacks = {.received = on_received,
                                                  .connected = on_connected,
                                                  .disconnected =
                                                      on_disconnected,
                                                  .writable = on_writable,
                                                  .ctx = node};
    int rc;

    ASSERT(!node->up);
    rc = transport_memory_new(sim->net, &node->id, &callbacks, NULL,
                              &node->transport);
    if (rc != 0) {
        return rc;
    }
    rc = sim->ops->node_open(sim, node);
    if (rc != 0) {
        sim_fail(sim, "restart", -1, "node %u does not open: %s", index,
                 common_strerror(rc));
        return rc;
    }
    rc = transport_listen(node->transport, node->address);
    for (unsigned j = 0; j < sim->config.nodes && rc == 0; j++) {
        if (node->links[j]) {
            rc = transport_connect(node->transport, &sim->nodes[j].id,
                                   sim->nodes[j].address);
        }
    }
    node->up = true;
    node->tick_now = true;
    sim_trace(sim, (int)index, "start", node->restarts, 0);
    return rc;
}

static void closed(void *ctx)
{
    (void)ctx;
}

void sim_node_stop(struct sim *sim, unsigned index, bool crash)
{
    struct sim_node *node = &sim->nodes[index];

    ASSERT(node->up);
    sim_trace(sim, (int)index, crash ? "crash" : "stop", 0, 0);
    if (crash) {
        sim_disk_freeze(sim->disk, index);
        sim_history_unknown_on(sim, index);
    }
    sim->ops->node_close(sim, node, crash);
    transport_close(node->transport, closed, NULL);
    node->transport = NULL;
    node->up = false;
    node->crash_pending = false;
    if (crash) {
        sim_disk_revert(sim->disk, index);
        if (sim->result != NULL) {
            sim->result->crashes++;
        }
    }
}

void sim_node_pause(struct sim *sim, unsigned index, bool paused)
{
    struct sim_node *node = &sim->nodes[index];

    if (node->paused == paused) {
        return;
    }
    node->paused = paused;
    sim_trace(sim, (int)index, paused ? "pause" : "resume", 0, 0);
    if (paused) {
        int rc = transport_memory_network_pause(sim->net, &node->id);

        ASSERT(rc == 0);
    } else {
        transport_memory_network_resume(sim->net, &node->id);
        node->tick_now = true;
    }
}

int sim_node_wipe(struct sim *sim, unsigned index)
{
    struct sim_node *node = &sim->nodes[index];

    ASSERT(!node->up);
    sim_remove_tree(node->dir);
    sim_trace(sim, (int)index, "wipe", node->restarts, 0);
    return mkdir(node->dir, 0700) == 0 ? 0 : SIM_EIO;
}

int64_t sim_client_value(struct sim_client *client)
{
    client->n++;
    return (int64_t)(((uint64_t)client->id << 32) | client->n);
}
