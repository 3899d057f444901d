/* SPDX-License-Identifier: MIT
 *
 * parts.c: Raft messages larger than one transport message, cut into
 * parts. libraft's legacy API sends a snapshot whole, in one
 * InstallSnapshot, and a database may be far larger than the transport's
 * max_message_bytes; so a message over part_bytes travels as a run of
 * CONSENSUS_MESSAGE_RAFT_PART messages:
 *
 *     u8 flags (bit 0: first, bit 1: last) | u64 LE the whole's size |
 *     the part's bytes
 *
 * The transport keeps each connection's messages whole and in order, so
 * the receiver appends parts per sender and hands the whole on once the
 * last arrives with the size announced; anything else (a part without a
 * first, a size that disagrees, a new first) drops what it had (counted).
 * The sender sends parts until the transport's queue is full and goes on
 * when the peer is writable again (consensus_writable()), so a snapshot
 * bigger than the send queue still gets through; one such message per
 * peer at a time (libraft sends one snapshot at a time per follower; a
 * second big message meanwhile is dropped, as a lost message, and Raft
 * resends it).
 */
#include <string.h>

#include "consensus_int.h"
#include "wire.h"

#define PART_FIRST 1u
#define PART_LAST 2u
#define PART_HEADER_BYTES 9
#define ASSEMBLIES_MAX 32
/* The whole: the wire's payload limit, the envelope and headers. */
#define WHOLE_BYTES_MAX (CONSENSUS_WIRE_PAYLOAD_SIZE_MAX + (1u << 20))

size_t consensus__part_bytes(const struct consensus *c)
{
    return c->config.max_message_bytes - PART_HEADER_BYTES;
}

/* Sends what is left of peer's outgoing message, until done or full. */
static void send_more(struct consensus *c, struct consensus__peer *peer)
{
    size_t part = consensus__part_bytes(c);

    while (peer->out != NULL) {
        size_t left = peer->out_size - peer->out_sent;
        size_t n = left < part ? left : part;
        uint8_t *message = peer->out_message;
        int rc;

        message[0] = (uint8_t)((peer->out_sent == 0 ? PART_FIRST : 0) |
                               (n == left ? PART_LAST : 0));
        for (int b = 0; b < 8; b++) {
            message[1 + b] = (uint8_t)(peer->out_size >> (8 * b));
        }
        memcpy(message + PART_HEADER_BYTES, peer->out + peer->out_sent, n);
        rc = transport_send(c->config.transport, &peer->node,
                            CONSENSUS_MESSAGE_RAFT_PART, message,
                            PART_HEADER_BYTES + n);
        if (rc == TRANSPORT_EFULL) {
            return; /* writable() brings us back */
        }
        if (rc != 0 || n == left) {
            /* Sent whole, or the connection is gone (the receiver drops
             * its part at the disconnect, Raft resends). */
            consensus__parts_forget(peer);
            return;
        }
        peer->out_sent += n;
    }
}

int consensus__parts_send(struct consensus *c, struct consensus__peer *peer,
                          const uint8_t *bytes, size_t size)
{
    if (peer->out != NULL) {
        return TRANSPORT_EFULL; /* one at a time: as lost */
    }
    peer->out = common_malloc(size);
    peer->out_message =
        common_malloc(PART_HEADER_BYTES + consensus__part_bytes(c));
    if (peer->out == NULL || peer->out_message == NULL) {
        consensus__parts_forget(peer);
        return COMMON_ENOMEM;
    }
    memcpy(peer->out, bytes, size);
    peer->out_size = size;
    peer->out_sent = 0;
    send_more(c, peer);
    return 0;
}

void consensus__parts_writable(struct consensus *c,
                               struct consensus__peer *peer)
{
    send_more(c, peer);
}

void consensus__parts_forget(struct consensus__peer *peer)
{
    common_free(peer->out);
    common_free(peer->out_message);
    peer->out = NULL;
    peer->out_message = NULL;
    peer->out_size = 0;
    peer->out_sent = 0;
}

/* ---- receiving ---- */

static struct consensus__assembly *
assembly_of(struct consensus *c, const struct transport_node_id *from,
            bool create)
{
    struct consensus__assembly *free_slot = NULL;

    for (size_t i = 0; i < ASSEMBLIES_MAX && c->assemblies != NULL; i++) {
        struct consensus__assembly *a = &c->assemblies[i];
        if (a->bytes != NULL && transport_node_id_equal(&a->from, from)) {
            return a;
        }
        if (a->bytes == NULL && free_slot == NULL) {
            free_slot = a;
        }
    }
    if (!create) {
        return NULL;
    }
    if (c->assemblies == NULL) {
        c->assemblies = common_calloc(ASSEMBLIES_MAX, sizeof *c->assemblies);
        free_slot = c->assemblies;
    }
    if (free_slot != NULL) {
        free_slot->from = *from;
    }
    return free_slot;
}

static void assembly_drop(struct consensus__assembly *a)
{
    common_free(a->bytes);
    a->bytes = NULL;
    a->size = 0;
    a->total = 0;
}

void consensus__parts_disconnected(struct consensus *c,
                                   const struct transport_node_id *from)
{
    struct consensus__assembly *a = assembly_of(c, from, false);

    if (a != NULL) {
        assembly_drop(a);
    }
}

int consensus__parts_received(struct consensus *c,
                              const struct transport_node_id *from,
                              const uint8_t *bytes, size_t size,
                              uint8_t **whole, size_t *whole_size)
{
    struct consensus__assembly *a;
    uint64_t total = 0;
    uint8_t flags;

    *whole = NULL;
    if (size < PART_HEADER_BYTES) {
        return CONSENSUS_EPROTO;
    }
    flags = bytes[0];
    for (int b = 7; b >= 0; b--) {
        total = (total << 8) | bytes[1 + b];
    }
    bytes += PART_HEADER_BYTES;
    size -= PART_HEADER_BYTES;
    a = assembly_of(c, from, (flags & PART_FIRST) != 0);
    if (a == NULL) {
        return CONSENSUS_EPROTO; /* a part without its first, or no room */
    }
    if ((flags & ~(PART_FIRST | PART_LAST)) != 0 || total > WHOLE_BYTES_MAX) {
        assembly_drop(a);
        return CONSENSUS_EPROTO;
    }
    if ((flags & PART_FIRST) != 0) {
        /* A new message: what an earlier one left unfinished is gone (its
         * sender gave up on it). */
        assembly_drop(a);
        a->bytes = common_malloc(total > 0 ? (size_t)total : 1);
        a->total = (size_t)total;
        if (a->bytes == NULL) {
            return COMMON_ENOMEM;
        }
    }
    if (total != a->total || size > a->total - a->size ||
        ((flags & PART_LAST) != 0) != (a->size + size == a->total)) {
        assembly_drop(a);
        return CONSENSUS_EPROTO;
    }
    memcpy(a->bytes + a->size, bytes, size);
    a->size += size;
    if ((flags & PART_LAST) != 0) {
        *whole = a->bytes;
        *whole_size = a->size;
        a->bytes = NULL; /* the caller's now */
        a->size = 0;
        a->total = 0;
    }
    return 0;
}

void consensus__parts_close(struct consensus *c)
{
    for (size_t i = 0; i < ASSEMBLIES_MAX && c->assemblies != NULL; i++) {
        assembly_drop(&c->assemblies[i]);
    }
    common_free(c->assemblies);
    c->assemblies = NULL;
}
