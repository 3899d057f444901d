/* SPDX-License-Identifier: MIT
 *
 * changeset_chunk.c: reads and checks one chunk's framing (changeset_wire.h)
 * and decodes a change set sent whole in one chunk.
 *
 * Every header field is checked against the others before anyone sizes an
 * allocation from it: the body size against REPLICATION__CHANGESET_BODY_MAX,
 * the payload size against the body size (equal, or smaller but at least
 * 1/256 of it when compressed), the chunk count against the payload and
 * piece sizes, and this chunk's length against what its index implies.
 */
#include "changeset_codec.h"

#include <lz4.h>
#include <string.h>

#include "changeset_wire.h"
#include "replication.h"

STATIC_ASSERT(REPLICATION__CHUNK_OVERHEAD ==
                  REPLICATION__WIRE_HEADER_SIZE + REPLICATION__WIRE_CHECK_SIZE,
              "the overhead callers plan with is the framing's size");
STATIC_ASSERT(REPLICATION__CHANGESET_BODY_MAX < INT32_MAX,
              "lz4 sizes are ints");

static void peek_fields(const uint8_t *b, struct replication__chunk_info *out)
{
    out->flags = b[REPLICATION__WIRE_AT_FLAGS];
    memcpy(out->origin, b + REPLICATION__WIRE_AT_ORIGIN, sizeof(out->origin));
    out->version = common_get_u64le(b + REPLICATION__WIRE_AT_SEQ);
    out->hlc = common_get_u64le(b + REPLICATION__WIRE_AT_HLC);
    out->epoch = common_get_u64le(b + REPLICATION__WIRE_AT_EPOCH);
    out->schema_hash = common_get_u64le(b + REPLICATION__WIRE_AT_SCHEMA);
    out->index = common_get_u32le(b + REPLICATION__WIRE_AT_INDEX);
    out->count = common_get_u32le(b + REPLICATION__WIRE_AT_COUNT);
    out->payload_size = common_get_u64le(b + REPLICATION__WIRE_AT_PAYLOAD_SIZE);
    out->body_size = common_get_u64le(b + REPLICATION__WIRE_AT_BODY_SIZE);
    out->body_check = common_get_u64le(b + REPLICATION__WIRE_AT_BODY_CHECK);
    out->piece_size = common_get_u32le(b + REPLICATION__WIRE_AT_PIECE_SIZE);
}

/* Whether the sizes in *info agree with each other and the limits. */
static bool peek_sizes_are_valid(const struct replication__chunk_info *info)
{
    uint64_t count;

    if ((info->flags & ~REPLICATION__WIRE_FLAG_LZ4) != 0 ||
        info->body_size == 0 ||
        info->body_size > REPLICATION__CHANGESET_BODY_MAX ||
        info->payload_size == 0 || info->piece_size == 0) {
        return false;
    }
    if ((info->flags & REPLICATION__WIRE_FLAG_LZ4) == 0) {
        if (info->payload_size != info->body_size) {
            return false;
        }
    } else if (info->payload_size >= info->body_size ||
               info->body_size / 256 > info->payload_size) {
        /* lz4 never expands a byte into more than 255 (a match length
         * byte); this keeps a tiny payload from claiming a huge body. */
        return false;
    }
    count = (info->payload_size + info->piece_size - 1) / info->piece_size;
    return info->count == count && info->index < info->count;
}

int replication__chunk_peek(const uint8_t *bytes, size_t size,
                            struct replication__chunk_info *out)
{
    struct replication__chunk_info info;
    uint64_t check;
    uint64_t offset;
    uint64_t piece;

    ASSERT(bytes != NULL || size == 0);
    ASSERT(out != NULL);
    if (size < REPLICATION__WIRE_AT_VERSION + 1 ||
        memcmp(bytes, REPLICATION__WIRE_MAGIC, 4) != 0) {
        return REPLICATION_EFORMAT;
    }
    if (bytes[REPLICATION__WIRE_AT_VERSION] != REPLICATION__WIRE_VERSION) {
        return REPLICATION_EVERSION;
    }
    if (size < REPLICATION__CHUNK_OVERHEAD) {
        return REPLICATION_EFORMAT;
    }
    check = common_checksum64(bytes, REPLICATION__WIRE_HEADER_SIZE,
                              REPLICATION__WIRE_CHECK_SEED);
    check = common_checksum64(bytes + REPLICATION__WIRE_HEADER_SIZE,
                              size - REPLICATION__CHUNK_OVERHEAD, check);
    if (check != common_get_u64le(bytes + size - 8)) {
        return REPLICATION_EFORMAT;
    }
    peek_fields(bytes, &info);
    if (!peek_sizes_are_valid(&info)) {
        return REPLICATION_EFORMAT;
    }
    offset = (uint64_t)info.index * info.piece_size;
    piece = info.payload_size - offset;
    if (piece > info.piece_size) {
        piece = info.piece_size;
    }
    if (size - REPLICATION__CHUNK_OVERHEAD != piece) {
        return REPLICATION_EFORMAT;
    }
    info.piece = bytes + REPLICATION__WIRE_HEADER_SIZE;
    info.piece_bytes = (size_t)piece;
    *out = info;
    return 0;
}

int replication__changeset_decode(const uint8_t *bytes, size_t size,
                                  struct replication__decoded **out)
{
    struct replication__chunk_info info;
    int rc;

    ASSERT(out != NULL);
    rc = replication__chunk_peek(bytes, size, &info);
    if (rc != 0) {
        return rc;
    }
    if (info.count != 1) {
        return REPLICATION_EFORMAT;
    }
    return replication__payload_decode(&info, info.piece, out);
}
