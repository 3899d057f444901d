/* SPDX-License-Identifier: MIT
 *
 * memory_network.c: the in-memory network's lifetime, its random draws and
 * its faults: per directed link (drop, delay, duplicate, reorder,
 * partition), per node (pause) and on demand (reset). What each fault
 * does to the interface's promises is in transport.h, "In-memory network".
 *
 * Faults are kept by identity, not by endpoint, so a node that restarts
 * (a new endpoint with the old identity) finds its links as it left them,
 * as a real node would find the network. The tables are small arrays
 * searched linearly: a simulated cluster has a handful of nodes.
 *
 * Every random value comes from the caller's source, and a fault whose
 * probability is 0 or 1 draws nothing, so a run without faults consumes
 * no randomness for its messages.
 */
#include <errno.h>
#include <string.h>

#include "memory.h"

int transport_memory_network_new(const struct transport_clock *clock,
                                 const struct transport_random *random,
                                 struct transport_memory_network **out)
{
    struct transport_memory_network *network;

    ASSERT(clock != NULL);
    ASSERT(clock->now_ms != NULL);
    ASSERT(random != NULL);
    ASSERT(random->next != NULL);
    ASSERT(out != NULL);
    network = common_calloc(1, sizeof(*network));
    if (network == NULL) {
        return COMMON_ENOMEM;
    }
    network->clock = *clock;
    network->random = *random;
    transport__memory_list_init(&network->endpoints);
    transport__memory_list_init(&network->connections);
    transport__memory_list_init(&network->held);
    *out = network;
    return 0;
}

void transport_memory_network_free(struct transport_memory_network *network)
{
    if (network == NULL) {
        return;
    }
    ASSERT(!network->stepping);
    transport__memory_discard_all(network);
    while (!transport__memory_list_is_empty(&network->connections)) {
        struct transport__memory_connection *connection =
            TRANSPORT__MEMORY_CONTAINER_OF(network->connections.next,
                                           struct transport__memory_connection,
                                           all);

        /* Open ones only: discarding every event freed the closed ones. */
        ASSERT(connection->open);
        for (unsigned side = 0; side < 2; side++) {
            transport__memory_list_remove(&connection->links[side]);
        }
        transport__memory_list_remove(&connection->all);
        transport__memory_slots_remove(network, 4);
        common_free(connection);
    }
    while (!transport__memory_list_is_empty(&network->endpoints)) {
        transport__memory_endpoint_free(TRANSPORT__MEMORY_CONTAINER_OF(
            network->endpoints.next, struct transport__memory_endpoint, link));
    }
    ASSERT(network->event_slots == 0);
    common_free(network->heap);
    common_free(network->links);
    common_free(network->paused);
    common_free(network);
}

uint64_t transport__memory_now(struct transport_memory_network *network)
{
    return network->clock.now_ms(network->clock.ctx);
}

uint64_t transport__memory_below(struct transport_memory_network *network,
                                 uint64_t bound)
{
    uint64_t threshold;
    uint64_t value;

    ASSERT(bound > 0);
    /* Rejection sampling: values below 2^64 mod bound would make the low
     * results more likely. */
    threshold = (0 - bound) % bound;
    do {
        value = network->random.next(network->random.ctx);
    } while (value < threshold);
    return value % bound;
}

bool transport__memory_chance(struct transport_memory_network *network,
                              double probability)
{
    uint64_t value;

    if (probability <= 0.0) {
        return false;
    }
    if (probability >= 1.0) {
        return true;
    }
    value = network->random.next(network->random.ctx) >> 11;
    return (double)value * 0x1.0p-53 < probability;
}

static struct transport__memory_link *
link_find(const struct transport_memory_network *network,
          const struct transport_node_id *from,
          const struct transport_node_id *to)
{
    for (size_t i = 0; i < network->link_count; i++) {
        struct transport__memory_link *link = &network->links[i];

        if (transport_node_id_equal(&link->from, from) &&
            transport_node_id_equal(&link->to, to)) {
            return link;
        }
    }
    return NULL;
}

/* The entry for from -> to, added (no faults of its own, not partitioned)
 * if missing; NULL when out of memory. */
static struct transport__memory_link *
link_get(struct transport_memory_network *network,
         const struct transport_node_id *from,
         const struct transport_node_id *to)
{
    struct transport__memory_link *link = link_find(network, from, to);
    struct transport__memory_link *links;

    if (link != NULL) {
        return link;
    }
    links = common_realloc_array(network->links, network->link_count + 1,
                                 sizeof(*links));
    if (links == NULL) {
        return NULL;
    }
    network->links = links;
    link = &links[network->link_count++];
    memset(link, 0, sizeof(*link));
    link->from = *from;
    link->to = *to;
    return link;
}

const struct transport_memory_link_faults *
transport__memory_faults(const struct transport_memory_network *network,
                         const struct transport_node_id *from,
                         const struct transport_node_id *to)
{
    const struct transport__memory_link *link = link_find(network, from, to);

    if (link != NULL && link->has_faults) {
        return &link->faults;
    }
    return &network->default_faults;
}

bool transport__memory_is_partitioned(
    const struct transport_memory_network *network,
    const struct transport_node_id *from, const struct transport_node_id *to)
{
    const struct transport__memory_link *link = link_find(network, from, to);

    return link != NULL && link->partitioned;
}

static bool is_probability(double p)
{
    return p >= 0.0 && p <= 1.0;
}

static bool faults_are_valid(const struct transport_memory_link_faults *faults)
{
    return is_probability(faults->drop_probability) &&
           is_probability(faults->duplicate_probability) &&
           is_probability(faults->reorder_probability);
}

int transport_memory_network_set_link(
    struct transport_memory_network *network,
    const struct transport_node_id *from, const struct transport_node_id *to,
    const struct transport_memory_link_faults *faults)
{
    struct transport__memory_link *link;

    ASSERT(network != NULL);
    ASSERT(from != NULL);
    ASSERT(to != NULL);
    ASSERT(faults != NULL);
    if (!faults_are_valid(faults)) {
        return -EINVAL;
    }
    link = link_get(network, from, to);
    if (link == NULL) {
        return COMMON_ENOMEM;
    }
    link->has_faults = true;
    link->faults = *faults;
    return 0;
}

int transport_memory_network_set_default_link(
    struct transport_memory_network *network,
    const struct transport_memory_link_faults *faults)
{
    ASSERT(network != NULL);
    ASSERT(faults != NULL);
    if (!faults_are_valid(faults)) {
        return -EINVAL;
    }
    network->default_faults = *faults;
    return 0;
}

static int partition_set(struct transport_memory_network *network,
                         const struct transport_node_id *a,
                         const struct transport_node_id *b, bool both_ways,
                         bool partitioned)
{
    struct transport__memory_link *forward;
    struct transport__memory_link *backward = NULL;

    ASSERT(network != NULL);
    ASSERT(a != NULL);
    ASSERT(b != NULL);
    /* Both entries exist before either changes, so a failure changes
     * nothing. */
    forward = link_get(network, a, b);
    if (forward == NULL) {
        return COMMON_ENOMEM;
    }
    if (both_ways) {
        backward = link_get(network, b, a);
        if (backward == NULL) {
            return COMMON_ENOMEM;
        }
        /* link_get may have moved the array. */
        forward = link_find(network, a, b);
        backward->partitioned = partitioned;
    }
    forward->partitioned = partitioned;
    return 0;
}

int transport_memory_network_partition(struct transport_memory_network *network,
                                       const struct transport_node_id *a,
                                       const struct transport_node_id *b,
                                       bool both_ways)
{
    return partition_set(network, a, b, both_ways, true);
}

int transport_memory_network_heal(struct transport_memory_network *network,
                                  const struct transport_node_id *a,
                                  const struct transport_node_id *b,
                                  bool both_ways)
{
    return partition_set(network, a, b, both_ways, false);
}

void transport_memory_network_heal_all(struct transport_memory_network *network)
{
    ASSERT(network != NULL);
    for (size_t i = 0; i < network->link_count; i++) {
        network->links[i].partitioned = false;
    }
}

int transport_memory_network_reset(struct transport_memory_network *network,
                                   const struct transport_node_id *a,
                                   const struct transport_node_id *b)
{
    struct transport__memory_endpoint *endpoint;
    struct transport__memory_connection *connection;
    unsigned side;

    ASSERT(network != NULL);
    ASSERT(a != NULL);
    ASSERT(b != NULL);
    endpoint = transport__memory_endpoint_find(network, a);
    if (endpoint == NULL) {
        return TRANSPORT_ENOPEER;
    }
    connection = transport__memory_connection_find(endpoint, b, &side);
    if (connection == NULL) {
        return TRANSPORT_ENOPEER;
    }
    transport__memory_connection_teardown(connection, TRANSPORT_EIO,
                                          TRANSPORT_EIO);
    return 0;
}

static size_t paused_index(const struct transport_memory_network *network,
                           const struct transport_node_id *node)
{
    size_t i;

    for (i = 0; i < network->paused_count; i++) {
        if (transport_node_id_equal(&network->paused[i], node)) {
            break;
        }
    }
    return i;
}

bool transport__memory_is_paused(const struct transport_memory_network *network,
                                 const struct transport_node_id *node)
{
    return paused_index(network, node) < network->paused_count;
}

int transport_memory_network_pause(struct transport_memory_network *network,
                                   const struct transport_node_id *node)
{
    struct transport_node_id *paused;

    ASSERT(network != NULL);
    ASSERT(node != NULL);
    if (transport__memory_is_paused(network, node)) {
        return 0;
    }
    paused = common_realloc_array(network->paused, network->paused_count + 1,
                                  sizeof(*paused));
    if (paused == NULL) {
        return COMMON_ENOMEM;
    }
    network->paused = paused;
    network->paused[network->paused_count++] = *node;
    return 0;
}

void transport_memory_network_resume(struct transport_memory_network *network,
                                     const struct transport_node_id *node)
{
    size_t index;

    ASSERT(network != NULL);
    ASSERT(node != NULL);
    index = paused_index(network, node);
    if (index == network->paused_count) {
        return;
    }
    network->paused[index] = network->paused[network->paused_count - 1];
    network->paused_count--;
    transport__memory_release_held(network, node);
}
