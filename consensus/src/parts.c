/* SPDX-License-Identifier: MIT
 *
 * parts.c: Raft messages larger than one transport message, cut into
 * parts. libraft's legacy API sends a snapshot whole, in one
 * InstallSnapshot, and a database may be far larger than the transport's
 * max_message_bytes; so a message over that size travels as a run of
 * CONSENSUS_MESSAGE_RAFT_PART messages (docs/formats.md, "Raft
 * messages"):
 *
 *     u8 flags (bit 0: first, bit 1: last) | u64 LE the whole's size |
 *     u64 LE this part's offset in it | u64 LE checksum of the whole |
 *     the part's bytes
 *
 * The transport keeps each connection's messages whole and in order, but
 * the in-memory network's faults (and any transport a user brings) may
 * not, so the receiver checks each part's offset against what it holds and
 * the whole's checksum at the last part; anything else drops what it had
 * (counted). Only members we know may send parts, a few at a time, and the
 * buffer grows with the bytes that arrive (not with the size announced).
 * The sender sends parts until the transport's queue is full and goes on
 * when the peer is writable again (consensus_writable()), so a snapshot
 * bigger than the send queue still gets through; one such message per
 * peer at a time (io.c does not even encode another snapshot for a peer
 * whose last one is still going).
 */
#include <string.h>

#include "consensus_int.h"
#include "wire.h"

#define PART_FIRST 1u
#define PART_LAST 2u
#define PART_HEADER_BYTES 25
#define ASSEMBLIES_MAX 4
/* The whole: the wire's payload limit, the envelope and headers. */
#define WHOLE_BYTES_MAX (CONSENSUS_WIRE_PAYLOAD_SIZE_MAX + (1u << 20))

static void put_u64le(uint8_t *out, uint64_t v)
{
    for (int b = 0; b < 8; b++) {
        out[b] = (uint8_t)(v >> (8 * b));
    }
}

static uint64_t get_u64le(const uint8_t *in)
{
    uint64_t v = 0;

    for (int b = 7; b >= 0; b--) {
        v = (v << 8) | in[b];
    }
    return v;
}

static size_t part_bytes(const struct consensus *c)
{
    return c->config.max_message_bytes - PART_HEADER_BYTES;
}

/* Sends what is left of peer's outgoing message, until done or full. */
static void send_more(struct consensus *c, struct consensus__peer *peer)
{
    size_t part = part_bytes(c);

    while (peer->out != NULL) {
        size_t left = peer->out_size - peer->out_sent;
        size_t n = left < part ? left : part;
        uint8_t *message = peer->out_message;
        int rc;

        message[0] = (uint8_t)((peer->out_sent == 0 ? PART_FIRST : 0) |
                               (n == left ? PART_LAST : 0));
        put_u64le(message + 1, peer->out_size);
        put_u64le(message + 9, peer->out_sent);
        put_u64le(message + 17, peer->out_checksum);
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
                          struct common_buf *whole)
{
    if (peer->out != NULL) {
        return TRANSPORT_EFULL; /* one at a time: as lost */
    }
    peer->out_message = common_malloc(PART_HEADER_BYTES + part_bytes(c));
    if (peer->out_message == NULL) {
        return COMMON_ENOMEM;
    }
    /* The bytes move here: no copy, and the send buffer does not keep a
     * snapshot's capacity. */
    peer->out = common_buf_detach(whole, &peer->out_size);
    peer->out_sent = 0;
    peer->out_checksum = common_checksum64(peer->out, peer->out_size, 0);
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

    if (c->assemblies == NULL) {
        if (!create) {
            return NULL;
        }
        c->assemblies = common_calloc(ASSEMBLIES_MAX, sizeof *c->assemblies);
        if (c->assemblies == NULL) {
            return NULL;
        }
    }
    for (size_t i = 0; i < ASSEMBLIES_MAX; i++) {
        struct consensus__assembly *a = &c->assemblies[i];
        if (a->used && transport_node_id_equal(&a->from, from)) {
            return a;
        }
        if (!a->used && free_slot == NULL) {
            free_slot = a;
        }
    }
    if (!create || free_slot == NULL) {
        return NULL;
    }
    free_slot->used = true;
    free_slot->from = *from;
    return free_slot;
}

static void assembly_drop(struct consensus__assembly *a)
{
    common_buf_close(&a->bytes);
    a->used = false;
    a->total = 0;
    a->checksum = 0;
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
    uint64_t total, offset, checksum;
    uint8_t flags;

    *whole = NULL;
    if (size < PART_HEADER_BYTES || c->unavailable || c->closing ||
        !consensus__io_knows(c, from)) {
        return CONSENSUS_EPROTO;
    }
    flags = bytes[0];
    total = get_u64le(bytes + 1);
    offset = get_u64le(bytes + 9);
    checksum = get_u64le(bytes + 17);
    bytes += PART_HEADER_BYTES;
    size -= PART_HEADER_BYTES;
    a = assembly_of(c, from, (flags & PART_FIRST) != 0);
    if (a == NULL) {
        return CONSENSUS_EPROTO; /* a part without its first, or no room */
    }
    if ((flags & PART_FIRST) != 0) {
        /* A new message: what an earlier one left unfinished is gone (its
         * sender gave up on it). */
        assembly_drop(a);
        a->used = true;
        a->from = *from;
        a->total = (size_t)total;
        a->checksum = checksum;
        common_buf_init(&a->bytes,
                        total <= WHOLE_BYTES_MAX ? (size_t)total : 0);
    }
    if ((flags & ~(PART_FIRST | PART_LAST)) != 0 || total > WHOLE_BYTES_MAX ||
        total != a->total || checksum != a->checksum ||
        offset != a->bytes.size || size > a->total - a->bytes.size ||
        ((flags & PART_LAST) != 0) != (a->bytes.size + size == a->total) ||
        common_buf_append(&a->bytes, bytes, size) != 0) {
        assembly_drop(a);
        return CONSENSUS_EPROTO;
    }
    if ((flags & PART_LAST) == 0) {
        return 0;
    }
    if (common_checksum64(a->bytes.data, a->bytes.size, 0) != a->checksum) {
        assembly_drop(a);
        return CONSENSUS_EPROTO;
    }
    *whole = common_buf_detach(&a->bytes, whole_size);
    assembly_drop(a);
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
