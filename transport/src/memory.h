/* SPDX-License-Identifier: MIT
 *
 * memory.h: the in-memory network's state, shared by its files:
 * memory_network.c (the network's lifetime, its faults, pause and reset),
 * memory_event.c (the event queue: a heap by due time, the held list of
 * paused nodes, step), memory_endpoint.c (one endpoint: the transport ops)
 * and memory_connection.c (dialing, backoff, delivery and teardown).
 *
 * Everything happens as an event: a message arriving, a connection coming
 * up or going down at one end, a queue draining, a dial attempt, a close
 * completing. Events are ordered by (due_ms, seq), seq counting up from
 * the network's creation, so two runs given the same clock readings and
 * the same random values run the same callbacks in the same order. Nothing
 * is ever ordered by a pointer.
 *
 * Ownership: the network owns every endpoint, connection and event. An
 * event that runs an endpoint's callback points at that endpoint; closing
 * the endpoint discards them all, so no event outlives its endpoint.
 * Events that connections, dial entries and endpoints need at any time are
 * embedded in them; only messages are allocated one by one, in send().
 * The heap always has room for every event object in existence
 * (event_slots), so step() never allocates and cannot fail.
 *
 * Invariants:
 *  - two open endpoints never share an identity, and two endpoints have at
 *    most one open connection between them;
 *  - a connection's end learns it is up (connected()) before any message
 *    on it arrives there: every event of one direction is due no earlier
 *    than the connected notice of the receiving end;
 *  - messages of one direction that were not picked by the reorder fault
 *    are due in the order they were sent (last_due), and equal due times
 *    are broken by seq, so they arrive in order;
 *  - once close() was called, no callback of the endpoint runs but done.
 */
#ifndef SINEW_TRANSPORT_MEMORY_H
#define SINEW_TRANSPORT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "transport.h"

#define TRANSPORT__MEMORY_CONTAINER_OF(ptr, type, member)                      \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* An intrusive doubly linked list; an empty list points at itself. */
struct transport__memory_list {
    struct transport__memory_list *prev; /* the previous node, or the head */
    struct transport__memory_list *next; /* the next node, or the head */
};

static inline void transport__memory_list_init(struct transport__memory_list *l)
{
    l->prev = l;
    l->next = l;
}

static inline bool
transport__memory_list_is_empty(const struct transport__memory_list *l)
{
    return l->next == l;
}

static inline void
transport__memory_list_append(struct transport__memory_list *head,
                              struct transport__memory_list *node)
{
    node->prev = head->prev;
    node->next = head;
    head->prev->next = node;
    head->prev = node;
}

static inline void
transport__memory_list_remove(struct transport__memory_list *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->prev = node;
    node->next = node;
}

/* ---- events ---- */

enum transport__memory_event_kind {
    TRANSPORT__MEMORY_MESSAGE,      /* a message arrives at one end */
    TRANSPORT__MEMORY_CONNECTED,    /* one end learns its connection is up */
    TRANSPORT__MEMORY_DISCONNECTED, /* one end learns it is down */
    TRANSPORT__MEMORY_WRITABLE,     /* one end's send queue drained */
    TRANSPORT__MEMORY_DIAL,         /* an endpoint tries a kept peer */
    TRANSPORT__MEMORY_CLOSED,       /* an endpoint's close completes */
};

enum transport__memory_event_state {
    TRANSPORT__MEMORY_IDLE,       /* in no queue */
    TRANSPORT__MEMORY_QUEUED,     /* in the heap, at heap_index */
    TRANSPORT__MEMORY_HELD,       /* in the held list: its node is paused */
    TRANSPORT__MEMORY_DISCARDING, /* collected for discarding */
};

struct transport__memory_endpoint;
struct transport__memory_connection;
struct transport__memory_keep;

/* One thing that happens at due_ms. A QUEUED or HELD event's endpoint is
 * open (CLOSED aside) and its connection (when it has one) still exists. */
struct transport__memory_event {
    uint64_t due_ms;                             /* when it happens */
    uint64_t seq;                                /* tie-break: schedule order */
    enum transport__memory_event_kind kind;      /* what happens */
    enum transport__memory_event_state state;    /* where it is */
    size_t heap_index;                           /* while QUEUED */
    struct transport__memory_list held_link;     /* while HELD */
    struct transport__memory_endpoint *endpoint; /* whose callback runs */
    struct transport__memory_connection *connection; /* or NULL */
    unsigned side;                       /* the endpoint's end of connection */
    struct transport__memory_keep *keep; /* DIAL: the kept peer */
    int reason;                          /* DISCONNECTED: the code */
};

/* A message in flight (allocated by send(), freed on arrival or discard).
 * counted: it is the original, whose bytes the sender's queue counts (a
 * duplicate is the network's copy and counts nowhere). */
struct transport__memory_message {
    struct transport__memory_event event; /* kind MESSAGE */
    uint16_t type;                        /* the caller's type */
    bool counted;                         /* in the sender's queued_bytes */
    size_t size;                          /* bytes that follow */
    uint8_t bytes[];                      /* a copy of the sender's */
};

/* ---- endpoints, dialing, connections ---- */

/* A peer an endpoint keeps a connection to (connect() until forget()).
 * failures counts the dial attempts that failed since the last success and
 * sets the next backoff. */
struct transport__memory_keep {
    struct transport__memory_list link;              /* in endpoint->keeps */
    struct transport_node_id peer;                   /* whom to reach */
    char address[TRANSPORT_MEMORY_ADDRESS_SIZE_MAX]; /* where, NUL-ended */
    uint32_t failures;                               /* dials failed in a row */
    struct transport__memory_event dial;             /* the next attempt */
};

/* One endpoint: a struct transport whose impl points here. */
struct transport__memory_endpoint {
    struct transport transport;               /* handed to the caller */
    struct transport_memory_network *network; /* the owner */
    struct transport__memory_list link;       /* in network->endpoints */
    struct transport_node_id self;            /* its identity */
    struct transport_callbacks callbacks;     /* copied */
    struct transport_limits limits;           /* copied, defaults filled */
    char address[TRANSPORT_MEMORY_ADDRESS_SIZE_MAX]; /* listening; "" none */
    bool closing;                                    /* close() was called */
    struct transport__memory_list keeps; /* struct transport__memory_keep */
    struct transport__memory_list connections; /* ends, by side link */
    struct transport__memory_event closed;     /* close()'s completion */
    void (*done)(void *ctx);                   /* close()'s callback, or NULL */
    void *done_ctx;                            /* its argument */
};

/* A connection between two endpoints. Side 0 dialed, side 1 accepted. While
 * open, ends[] point at both endpoints and links[] sit in their lists;
 * teardown makes it closed, and it is freed once neither end still has a
 * disconnected notice to receive. Arrays are indexed by side: queued_bytes[s]
 * and blocked[s] are about what side s sends, last_due[s] is the latest due
 * time of side s's in-order messages, notice[s] and writable[s] run side s's
 * callbacks. */
struct transport__memory_connection {
    struct transport_memory_network *network;   /* the owner */
    struct transport__memory_list all;          /* in network->connections */
    bool open;                                  /* not torn down yet */
    struct transport__memory_endpoint *ends[2]; /* while open */
    struct transport_node_id ids[2];            /* the ends' identities */
    struct transport__memory_list links[2];     /* in ends[s]->connections */
    bool up[2];                                 /* side s was told connected */
    uint64_t up_due[2];     /* when side s is told connected */
    size_t queued_bytes[2]; /* sent by side s, not arrived */
    bool blocked[2];        /* side s was refused: EFULL */
    uint64_t last_due[2];   /* side s's latest in-order due */
    struct transport__memory_event notice[2];   /* CONNECTED/DISCONNECTED */
    struct transport__memory_event writable[2]; /* WRITABLE */
};

/* ---- the network ---- */

/* A directed link's faults; one entry per link that has any. */
struct transport__memory_link {
    struct transport_node_id from;              /* the sender */
    struct transport_node_id to;                /* the receiver */
    bool has_faults;                            /* faults set for this link */
    struct transport_memory_link_faults faults; /* when has_faults */
    bool partitioned;                           /* nothing from reaches to */
};

struct transport_memory_network {
    struct transport_clock clock;              /* copied; ctx borrowed */
    struct transport_random random;            /* copied; ctx borrowed */
    struct transport__memory_list endpoints;   /* open and closing */
    struct transport__memory_list connections; /* open and closed */
    struct transport_memory_link_faults default_faults; /* other links */
    struct transport__memory_link *links;               /* common_malloc'd */
    size_t link_count;                                  /* entries in links */
    struct transport_node_id *paused;      /* paused nodes, common_malloc'd */
    size_t paused_count;                   /* entries in paused */
    struct transport__memory_event **heap; /* min-heap by (due_ms, seq) */
    size_t heap_count;                     /* events in heap */
    size_t heap_capacity;                  /* >= event_slots */
    size_t event_slots;                    /* event objects in existence */
    struct transport__memory_list held;    /* HELD events, in due order */
    uint64_t next_seq;                     /* the next event's seq */
    bool stepping; /* inside step: no nested step, no free */
};

/* memory_network.c */
uint64_t transport__memory_now(struct transport_memory_network *network);
uint64_t transport__memory_below(struct transport_memory_network *network,
                                 uint64_t bound);
bool transport__memory_chance(struct transport_memory_network *network,
                              double probability);
const struct transport_memory_link_faults *
transport__memory_faults(const struct transport_memory_network *network,
                         const struct transport_node_id *from,
                         const struct transport_node_id *to);
bool transport__memory_is_partitioned(
    const struct transport_memory_network *network,
    const struct transport_node_id *from, const struct transport_node_id *to);
bool transport__memory_is_paused(const struct transport_memory_network *network,
                                 const struct transport_node_id *node);

/* memory_event.c */
void transport__memory_event_init(struct transport__memory_event *event,
                                  enum transport__memory_event_kind kind,
                                  struct transport__memory_endpoint *endpoint);
int transport__memory_slots_add(struct transport_memory_network *network,
                                size_t count);
void transport__memory_slots_remove(struct transport_memory_network *network,
                                    size_t count);
void transport__memory_schedule(struct transport_memory_network *network,
                                struct transport__memory_event *event,
                                uint64_t due_ms);
void transport__memory_unschedule(struct transport_memory_network *network,
                                  struct transport__memory_event *event);
void transport__memory_discard_connection(
    struct transport_memory_network *network,
    const struct transport__memory_connection *connection);
void transport__memory_discard_endpoint(
    struct transport_memory_network *network,
    const struct transport__memory_endpoint *endpoint);
void transport__memory_discard_all(struct transport_memory_network *network);
void transport__memory_release_held(struct transport_memory_network *network,
                                    const struct transport_node_id *node);

/* memory_endpoint.c */
struct transport__memory_endpoint *
transport__memory_endpoint_find(struct transport_memory_network *network,
                                const struct transport_node_id *id);
struct transport__memory_endpoint *
transport__memory_listener(struct transport_memory_network *network,
                           const char *address);
struct transport__memory_keep *
transport__memory_keep_find(struct transport__memory_endpoint *endpoint,
                            const struct transport_node_id *peer);
void transport__memory_endpoint_closed(struct transport__memory_endpoint *ep);
void transport__memory_endpoint_free(struct transport__memory_endpoint *ep);

/* memory_connection.c */
struct transport__memory_connection *
transport__memory_connection_find(struct transport__memory_endpoint *endpoint,
                                  const struct transport_node_id *peer,
                                  unsigned *side);
void transport__memory_dial(struct transport__memory_keep *keep);
void transport__memory_dial_later(struct transport_memory_network *network,
                                  struct transport__memory_keep *keep);
int transport__memory_connection_send(
    struct transport__memory_connection *connection, unsigned side,
    uint16_t type, const void *bytes, size_t size);
void transport__memory_connection_teardown(
    struct transport__memory_connection *connection, int reason0, int reason1);
void transport__memory_connection_maybe_free(
    struct transport__memory_connection *connection);
void transport__memory_arrive(struct transport__memory_message *message);
void transport__memory_notice(struct transport__memory_event *event);

#endif /* SINEW_TRANSPORT_MEMORY_H */
