/* SPDX-License-Identifier: MIT
 *
 * memory_event.c: the in-memory network's event queue and its step.
 *
 * Events wait in a binary min-heap ordered by (due_ms, seq); each knows its
 * index in the heap, so one can be taken out from the middle (a reset or a
 * close discards everything of a connection or an endpoint). An event whose
 * node is paused is moved, when it comes due, to the held list, which keeps
 * the order they came due in; resume puts them back with their original
 * keys, so they run first and in the same order as they would have.
 *
 * The heap's capacity is reserved when an event object is created
 * (transport__memory_slots_add), never when it is scheduled, so scheduling
 * cannot fail and step() never allocates.
 */
#include "memory.h"

void transport__memory_event_init(struct transport__memory_event *event,
                                  enum transport__memory_event_kind kind,
                                  struct transport__memory_endpoint *endpoint)
{
    ASSERT(event != NULL);
    ASSERT(endpoint != NULL);
    event->due_ms = 0;
    event->seq = 0;
    event->kind = kind;
    event->state = TRANSPORT__MEMORY_IDLE;
    event->heap_index = 0;
    transport__memory_list_init(&event->held_link);
    event->endpoint = endpoint;
    event->connection = NULL;
    event->side = 0;
    event->keep = NULL;
    event->reason = 0;
}

int transport__memory_slots_add(struct transport_memory_network *network,
                                size_t count)
{
    struct transport__memory_event **heap;
    size_t capacity;

    ASSERT(network->heap_capacity >= network->event_slots);
    if (network->event_slots + count <= network->heap_capacity) {
        network->event_slots += count;
        return 0;
    }
    capacity = network->heap_capacity * 2;
    if (capacity < network->event_slots + count) {
        capacity = network->event_slots + count + 16;
    }
    heap = common_realloc_array(network->heap, capacity, sizeof(*heap));
    if (heap == NULL) {
        return COMMON_ENOMEM;
    }
    network->heap = heap;
    network->heap_capacity = capacity;
    network->event_slots += count;
    return 0;
}

void transport__memory_slots_remove(struct transport_memory_network *network,
                                    size_t count)
{
    ASSERT(network->event_slots >= count);
    network->event_slots -= count;
    ASSERT(network->heap_count <= network->event_slots);
}

static bool event_is_before(const struct transport__memory_event *a,
                            const struct transport__memory_event *b)
{
    if (a->due_ms != b->due_ms) {
        return a->due_ms < b->due_ms;
    }
    return a->seq < b->seq;
}

static void heap_put(struct transport_memory_network *network, size_t index,
                     struct transport__memory_event *event)
{
    network->heap[index] = event;
    event->heap_index = index;
}

static void heap_sift_up(struct transport_memory_network *network, size_t index)
{
    struct transport__memory_event *event = network->heap[index];

    while (index > 0) {
        size_t parent = (index - 1) / 2;

        if (!event_is_before(event, network->heap[parent])) {
            break;
        }
        heap_put(network, index, network->heap[parent]);
        index = parent;
    }
    heap_put(network, index, event);
}

static void heap_sift_down(struct transport_memory_network *network,
                           size_t index)
{
    struct transport__memory_event *event = network->heap[index];
    size_t count = network->heap_count;

    while (2 * index + 1 < count) {
        size_t child = 2 * index + 1;

        if (child + 1 < count &&
            event_is_before(network->heap[child + 1], network->heap[child])) {
            child++;
        }
        if (!event_is_before(network->heap[child], event)) {
            break;
        }
        heap_put(network, index, network->heap[child]);
        index = child;
    }
    heap_put(network, index, event);
}

/* Puts event into the heap with the keys it has. */
static void heap_insert(struct transport_memory_network *network,
                        struct transport__memory_event *event)
{
    ASSERT(event->state == TRANSPORT__MEMORY_IDLE);
    ASSERT(network->heap_count < network->heap_capacity);
    event->state = TRANSPORT__MEMORY_QUEUED;
    heap_put(network, network->heap_count, event);
    network->heap_count++;
    heap_sift_up(network, event->heap_index);
}

static void heap_remove(struct transport_memory_network *network,
                        struct transport__memory_event *event)
{
    size_t index = event->heap_index;
    struct transport__memory_event *last;

    ASSERT(event->state == TRANSPORT__MEMORY_QUEUED);
    ASSERT(index < network->heap_count);
    ASSERT(network->heap[index] == event);
    network->heap_count--;
    event->state = TRANSPORT__MEMORY_IDLE;
    if (index == network->heap_count) {
        return;
    }
    last = network->heap[network->heap_count];
    heap_put(network, index, last);
    heap_sift_up(network, index);
    heap_sift_down(network, last->heap_index);
}

void transport__memory_schedule(struct transport_memory_network *network,
                                struct transport__memory_event *event,
                                uint64_t due_ms)
{
    ASSERT(network != NULL);
    ASSERT(event != NULL);
    event->due_ms = due_ms;
    event->seq = network->next_seq++;
    heap_insert(network, event);
}

void transport__memory_unschedule(struct transport_memory_network *network,
                                  struct transport__memory_event *event)
{
    ASSERT(network != NULL);
    ASSERT(event != NULL);
    if (event->state == TRANSPORT__MEMORY_QUEUED) {
        heap_remove(network, event);
    } else if (event->state == TRANSPORT__MEMORY_HELD) {
        transport__memory_list_remove(&event->held_link);
        event->state = TRANSPORT__MEMORY_IDLE;
    }
}

/* Takes an unscheduled event out of existence: a message is freed; an
 * embedded event just stays idle, and a closed connection whose last
 * notice this was is freed. */
static void event_discard(struct transport_memory_network *network,
                          struct transport__memory_event *event)
{
    struct transport__memory_message *message;

    ASSERT(event->state == TRANSPORT__MEMORY_IDLE);
    if (event->kind == TRANSPORT__MEMORY_MESSAGE) {
        message = TRANSPORT__MEMORY_CONTAINER_OF(
            event, struct transport__memory_message, event);
        transport__memory_slots_remove(network, 1);
        common_free(message);
        return;
    }
    if (event->kind == TRANSPORT__MEMORY_DISCONNECTED) {
        transport__memory_connection_maybe_free(event->connection);
    }
}

typedef bool (*event_match_fn)(const struct transport__memory_event *event,
                               const void *arg);

/* Discards every queued or held event that match() accepts. Collects them
 * first (by compacting the heap), marked DISCARDING, then discards them one
 * by one: a closed connection is freed only once both its notices are
 * IDLE, so not while the other one still waits in the collected list. */
static void discard_matching(struct transport_memory_network *network,
                             event_match_fn match, const void *arg)
{
    struct transport__memory_list gone;
    struct transport__memory_list *node;
    struct transport__memory_list *next;
    size_t kept = 0;

    transport__memory_list_init(&gone);
    for (size_t i = 0; i < network->heap_count; i++) {
        struct transport__memory_event *event = network->heap[i];

        if (match(event, arg)) {
            event->state = TRANSPORT__MEMORY_DISCARDING;
            transport__memory_list_append(&gone, &event->held_link);
        } else {
            heap_put(network, kept++, event);
        }
    }
    network->heap_count = kept;
    for (size_t i = kept / 2; i-- > 0;) {
        heap_sift_down(network, i);
    }
    for (node = network->held.next; node != &network->held; node = next) {
        struct transport__memory_event *event = TRANSPORT__MEMORY_CONTAINER_OF(
            node, struct transport__memory_event, held_link);

        next = node->next;
        if (match(event, arg)) {
            transport__memory_list_remove(node);
            event->state = TRANSPORT__MEMORY_DISCARDING;
            transport__memory_list_append(&gone, node);
        }
    }
    while (!transport__memory_list_is_empty(&gone)) {
        struct transport__memory_event *event = TRANSPORT__MEMORY_CONTAINER_OF(
            gone.next, struct transport__memory_event, held_link);

        transport__memory_list_remove(gone.next);
        event->state = TRANSPORT__MEMORY_IDLE;
        event_discard(network, event);
    }
}

static bool match_connection(const struct transport__memory_event *event,
                             const void *arg)
{
    return event->connection == arg;
}

static bool match_endpoint(const struct transport__memory_event *event,
                           const void *arg)
{
    return event->endpoint == arg;
}

static bool match_any(const struct transport__memory_event *event,
                      const void *arg)
{
    (void)event;
    (void)arg;
    return true;
}

void transport__memory_discard_connection(
    struct transport_memory_network *network,
    const struct transport__memory_connection *connection)
{
    ASSERT(connection != NULL);
    discard_matching(network, match_connection, connection);
}

void transport__memory_discard_endpoint(
    struct transport_memory_network *network,
    const struct transport__memory_endpoint *endpoint)
{
    ASSERT(endpoint != NULL);
    discard_matching(network, match_endpoint, endpoint);
}

void transport__memory_discard_all(struct transport_memory_network *network)
{
    discard_matching(network, match_any, NULL);
}

void transport__memory_release_held(struct transport_memory_network *network,
                                    const struct transport_node_id *node)
{
    struct transport__memory_list *link;
    struct transport__memory_list *next;

    for (link = network->held.next; link != &network->held; link = next) {
        struct transport__memory_event *event = TRANSPORT__MEMORY_CONTAINER_OF(
            link, struct transport__memory_event, held_link);

        next = link->next;
        if (transport_node_id_equal(&event->endpoint->self, node)) {
            transport__memory_list_remove(link);
            event->state = TRANSPORT__MEMORY_IDLE;
            heap_insert(network, event);
        }
    }
}

/* Runs one event taken off the heap. */
static void event_run(struct transport__memory_event *event)
{
    switch (event->kind) {
    case TRANSPORT__MEMORY_MESSAGE:
        transport__memory_arrive(TRANSPORT__MEMORY_CONTAINER_OF(
            event, struct transport__memory_message, event));
        break;
    case TRANSPORT__MEMORY_CONNECTED:
    case TRANSPORT__MEMORY_DISCONNECTED:
    case TRANSPORT__MEMORY_WRITABLE:
        transport__memory_notice(event);
        break;
    case TRANSPORT__MEMORY_DIAL:
        transport__memory_dial(event->keep);
        break;
    case TRANSPORT__MEMORY_CLOSED:
        transport__memory_endpoint_closed(event->endpoint);
        break;
    }
}

size_t transport_memory_network_step(struct transport_memory_network *network)
{
    uint64_t now_ms;
    uint64_t seq_end;
    size_t ran = 0;

    ASSERT(network != NULL);
    ASSERT(!network->stepping);
    network->stepping = true;
    now_ms = transport__memory_now(network);
    seq_end = network->next_seq;
    while (network->heap_count > 0) {
        struct transport__memory_event *event = network->heap[0];

        if (event->due_ms > now_ms || event->seq >= seq_end) {
            break;
        }
        heap_remove(network, event);
        ran++;
        if (event->kind != TRANSPORT__MEMORY_CLOSED &&
            transport__memory_is_paused(network, &event->endpoint->self)) {
            event->state = TRANSPORT__MEMORY_HELD;
            transport__memory_list_append(&network->held, &event->held_link);
            continue;
        }
        event_run(event);
    }
    network->stepping = false;
    return ran;
}

bool transport_memory_network_next_due(
    const struct transport_memory_network *network, uint64_t *ms)
{
    ASSERT(network != NULL);
    ASSERT(ms != NULL);
    if (network->heap_count == 0) {
        return false;
    }
    *ms = network->heap[0]->due_ms;
    return true;
}
