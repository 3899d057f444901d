/* SPDX-License-Identifier: MIT
 *
 * wire_entries.c: the AppendEntries body (wire.h's layout, type 1), and the
 * check of RAFT_CHANGE payloads.
 *
 * Entry headers come before the payloads so that decode knows the total
 * payload size before it copies anything: it allocates the entries array
 * and ONE batch holding every payload, as raft_uv does (uv_recv.c), which
 * is what libraft's receive path frees (legacy.c recvCb frees the array,
 * recv_append_entries.c and the log free entries[0].batch).
 *
 * A RAFT_CHANGE entry's payload is libraft's own configuration encoding,
 * which the follower decodes with configurationDecode() as soon as it
 * appends the entry (replication.c). That decoder trusts its input: it
 * asserts on an empty buffer, reads ids and roles without bounds checks,
 * and a duplicate id or address makes it fail, which the legacy recvCb
 * turns into an assertion. So such payloads are checked here, against the
 * format configurationEncodeToBuf() writes: u8 format 1, u64le n, n times
 * (u64le id, NUL-terminated address, u8 role), zero padding to 8 bytes.
 */
#include "wire.h"

#include <limits.h>
#include <string.h>

/* The smallest entry header: 1-byte term, type, 1-byte size. */
#define ENTRY_HEADER_SIZE_MIN 3

/* libraft's configuration encoding (configuration.c ENCODING_FORMAT). */
#define CHANGE_FORMAT 1
#define CHANGE_HEADER_SIZE 9 /* format byte, u64le server count */

static bool is_entry_type(uint64_t type)
{
    return type == RAFT_COMMAND || type == RAFT_BARRIER || type == RAFT_CHANGE;
}

/* ------------------------------------------------------------------------
 * RAFT_CHANGE payloads
 * ------------------------------------------------------------------------ */

/* Reads one server at payload[*offset]; stores its id and its address's
 * offset and length, and moves *offset past it. */
static bool change_server_read(const uint8_t *payload, size_t size,
                               size_t *offset, uint64_t *id,
                               size_t *address_size)
{
    const uint8_t *nul;
    size_t at = *offset;

    if (size - at < 8) {
        return false;
    }
    *id = common_get_u64le(payload + at);
    at += 8;
    nul = memchr(payload + at, 0, size - at);
    if (*id == 0 || nul == NULL) {
        return false;
    }
    *address_size = (size_t)(nul - (payload + at));
    at += *address_size + 1;
    if (*address_size > CONSENSUS_WIRE_ADDRESS_SIZE_MAX || at >= size ||
        !consensus__wire_is_role(payload[at])) {
        return false;
    }
    *offset = at + 1;
    return true;
}

/* Whether server i (id, address at addresses[i]) repeats an earlier one. */
static bool change_server_is_duplicate(const uint8_t *payload,
                                       const uint64_t *ids,
                                       const size_t *addresses, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (ids[j] == ids[i] ||
            strcmp((const char *)payload + addresses[j],
                   (const char *)payload + addresses[i]) == 0) {
            return true;
        }
    }
    return false;
}

bool consensus__wire_change_is_valid(const uint8_t *payload, size_t size)
{
    uint64_t ids[CONSENSUS_WIRE_SERVERS_MAX];
    size_t addresses[CONSENSUS_WIRE_SERVERS_MAX];
    size_t offset = CHANGE_HEADER_SIZE;
    uint64_t n;

    if (size < CHANGE_HEADER_SIZE || payload[0] != CHANGE_FORMAT) {
        return false;
    }
    n = common_get_u64le(payload + 1);
    if (n == 0 || n > CONSENSUS_WIRE_SERVERS_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        size_t address_size;

        addresses[i] = offset + 8;
        if (!change_server_read(payload, size, &offset, &ids[i],
                                &address_size) ||
            change_server_is_duplicate(payload, ids, addresses, i)) {
            return false;
        }
    }
    if (size - offset >= 8) {
        return false;
    }
    for (; offset < size; offset++) {
        if (payload[offset] != 0) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------
 * Encode
 * ------------------------------------------------------------------------ */

/* Checks the entries against wire.h's rules; stores the encoded size of
 * the headers and the payloads' total. */
static int entries_check(const struct raft_entry *entries, unsigned n,
                         size_t *headers_size, size_t *payload_size)
{
    *headers_size = 0;
    *payload_size = 0;
    for (unsigned i = 0; i < n; i++) {
        const struct raft_entry *e = &entries[i];

        if (e->term == 0 || !is_entry_type(e->type)) {
            return CONSENSUS_EPROTO;
        }
        if (e->buf.len > CONSENSUS_WIRE_PAYLOAD_SIZE_MAX - *payload_size) {
            return COMMON_ETOOBIG;
        }
        if (e->type == RAFT_CHANGE &&
            !consensus__wire_change_is_valid(e->buf.base, e->buf.len)) {
            return CONSENSUS_EPROTO;
        }
        *payload_size += e->buf.len;
        *headers_size +=
            common_varint_size(e->term) + 1 + common_varint_size(e->buf.len);
    }
    return 0;
}

static int entry_headers_encode(const struct raft_entry *entries, unsigned n,
                                struct common_buf *out)
{
    int rc;

    for (unsigned i = 0; i < n; i++) {
        const struct raft_entry *e = &entries[i];

        if ((rc = common_buf_append_varint(out, e->term)) != 0 ||
            (rc = common_buf_append_byte(out, (uint8_t)e->type)) != 0 ||
            (rc = common_buf_append_varint(out, e->buf.len)) != 0) {
            return rc;
        }
    }
    return 0;
}

int consensus__wire_entries_encode(const struct raft_append_entries *args,
                                   struct common_buf *out)
{
    size_t headers_size;
    size_t payload_size;
    int rc;

    ASSERT(args->n_entries == 0 || args->entries != NULL);
    if ((args->prev_log_index == 0) != (args->prev_log_term == 0)) {
        return CONSENSUS_EPROTO;
    }
    rc = entries_check(args->entries, args->n_entries, &headers_size,
                       &payload_size);
    if (rc != 0) {
        return rc;
    }
    /* One growth for the whole message: payloads can be large. */
    rc = common_buf_reserve(out, 4 * COMMON_VARINT_SIZE_MAX +
                                     common_varint_size(args->n_entries) +
                                     headers_size + payload_size);
    if (rc != 0) {
        return rc;
    }
    if ((rc = common_buf_append_varint(out, args->term)) != 0 ||
        (rc = common_buf_append_varint(out, args->prev_log_index)) != 0 ||
        (rc = common_buf_append_varint(out, args->prev_log_term)) != 0 ||
        (rc = common_buf_append_varint(out, args->leader_commit)) != 0 ||
        (rc = common_buf_append_varint(out, args->n_entries)) != 0 ||
        (rc = entry_headers_encode(args->entries, args->n_entries, out)) != 0) {
        return rc;
    }
    for (unsigned i = 0; i < args->n_entries; i++) {
        const struct raft_buffer *buf = &args->entries[i].buf;

        rc = common_buf_append(out, buf->base, buf->len);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Decode
 * ------------------------------------------------------------------------ */

/* Reads n entry headers into entries; stores the payloads' total. */
static int entry_headers_decode(struct common_reader *reader,
                                struct raft_entry *entries, unsigned n,
                                size_t *payload_size)
{
    *payload_size = 0;
    for (unsigned i = 0; i < n; i++) {
        struct raft_entry *e = &entries[i];
        uint64_t size;
        uint8_t type;
        int rc;

        if ((rc = consensus__wire_read_varint(reader, &e->term)) != 0 ||
            (rc = common_reader_byte(reader, &type)) != 0 ||
            (rc = common_reader_varint(reader, &size)) != 0) {
            return rc;
        }
        if (e->term == 0 || !is_entry_type(type) ||
            size > CONSENSUS_WIRE_PAYLOAD_SIZE_MAX - *payload_size) {
            return CONSENSUS_EPROTO;
        }
        e->type = (enum raft_entry_type)type;
        e->buf.len = (size_t)size;
        e->buf.base = NULL;
        e->batch = NULL;
        *payload_size += (size_t)size;
    }
    return 0;
}

/* Checks the RAFT_CHANGE payloads among the size bytes at payloads. */
static int entry_payloads_check(const struct raft_entry *entries, unsigned n,
                                const uint8_t *payloads)
{
    size_t offset = 0;

    for (unsigned i = 0; i < n; i++) {
        if (entries[i].type == RAFT_CHANGE &&
            !consensus__wire_change_is_valid(payloads + offset,
                                             entries[i].buf.len)) {
            return CONSENSUS_EPROTO;
        }
        offset += entries[i].buf.len;
    }
    return 0;
}

/* Copies the payloads into one raft_malloc'd batch (at least 1 byte, so
 * that every entry's batch is non-NULL, as libraft asserts) and points the
 * entries into it. */
static int entry_payloads_copy(struct raft_entry *entries, unsigned n,
                               const uint8_t *payloads, size_t size)
{
    uint8_t *batch;
    size_t offset = 0;

    batch = raft_malloc(size > 0 ? size : 1);
    if (batch == NULL) {
        return COMMON_ENOMEM;
    }
    if (size > 0) {
        memcpy(batch, payloads, size);
    }
    for (unsigned i = 0; i < n; i++) {
        entries[i].batch = batch;
        entries[i].buf.base = entries[i].buf.len > 0 ? batch + offset : NULL;
        offset += entries[i].buf.len;
    }
    ASSERT(offset == size);
    return 0;
}

/* Reads the entry count, refusing one the remaining bytes cannot hold
 * before anything is allocated for it. */
static int entry_count_decode(struct common_reader *reader, unsigned *n)
{
    uint64_t count;
    int rc;

    rc = common_reader_varint(reader, &count);
    if (rc != 0) {
        return rc;
    }
    if (count > UINT_MAX || count > SIZE_MAX / sizeof(struct raft_entry) ||
        count > common_reader_remaining(reader) / ENTRY_HEADER_SIZE_MIN) {
        return CONSENSUS_EPROTO;
    }
    *n = (unsigned)count;
    return 0;
}

static int entries_decode(struct common_reader *reader,
                          struct raft_append_entries *args)
{
    struct raft_entry *entries;
    const uint8_t *payloads;
    size_t payload_size;
    int rc;

    entries = raft_malloc(args->n_entries * sizeof(*entries));
    if (entries == NULL) {
        return COMMON_ENOMEM;
    }
    if ((rc = entry_headers_decode(reader, entries, args->n_entries,
                                   &payload_size)) != 0 ||
        (rc = common_reader_bytes(reader, payload_size, &payloads)) != 0 ||
        (rc = entry_payloads_check(entries, args->n_entries, payloads)) != 0 ||
        (rc = entry_payloads_copy(entries, args->n_entries, payloads,
                                  payload_size)) != 0) {
        raft_free(entries);
        return rc;
    }
    args->entries = entries;
    return 0;
}

int consensus__wire_entries_decode(struct common_reader *reader,
                                   struct raft_append_entries *out)
{
    struct raft_append_entries args = {.version = out->version};
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &args.term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.prev_log_index)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.prev_log_term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.leader_commit)) != 0 ||
        (rc = entry_count_decode(reader, &args.n_entries)) != 0) {
        return rc;
    }
    if ((args.prev_log_index == 0) != (args.prev_log_term == 0)) {
        return CONSENSUS_EPROTO;
    }
    if (args.n_entries > 0) {
        rc = entries_decode(reader, &args);
        if (rc != 0) {
            return rc;
        }
    }
    *out = args;
    return 0;
}
