/* SPDX-License-Identifier: MIT
 *
 * changeset_wire.h: the byte layout of a change-set chunk, and the bounded
 * msgpack reader the body decoder stands on (changeset_msgpack.c). The
 * same tables are in docs/formats.md, "Change sets".
 *
 * A chunk, integers little-endian:
 *
 *   offset size field
 *   0      4    magic "SNCS"
 *   4      1    format version (REPLICATION__WIRE_VERSION)
 *   5      1    flags: bit 0 payload is lz4 (block format); others zero
 *   6      16   origin site
 *   22     8    version (per origin, gapless)
 *   30     8    hlc
 *   38     8    epoch
 *   46     8    schema hash: the origin's schema when it committed
 *               (crdt_schema.c; 0 when unknown)
 *   54     4    chunk index, < chunk count
 *   58     4    chunk count, = ceil(payload size / piece size)
 *   62     8    payload size (bytes over all chunks)
 *   70     8    body size (uncompressed; = payload size unless lz4)
 *   78     8    body checksum: XXH3-64 of the uncompressed body, seed 0
 *   86     4    piece size: payload bytes in every chunk but the last
 *   90     n    this chunk's payload bytes, from offset index * piece size
 *   90+n   8    chunk checksum: XXH3-64 of the n payload bytes, seeded
 *               with XXH3-64 of bytes 0 .. 90 seeded with 0x53434e53
 *
 * The body is msgpack: [tables, records], tables an array of [name (str),
 * columns (array of str)], records an array of [op, table, key] (ALIVE,
 * DEAD), [op, table, key, column, value] (SET) or [op, sql] (SCHEMA); a
 * key is an array of values; a value is nil, an integer (int64 range), a
 * float 64 (never 32), a str (TEXT) or a bin (BLOB).
 */
#ifndef SINEW_REPLICATION_CHANGESET_WIRE_H
#define SINEW_REPLICATION_CHANGESET_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define REPLICATION__WIRE_MAGIC "SNCS"
#define REPLICATION__WIRE_VERSION 1
#define REPLICATION__WIRE_FLAG_LZ4 0x01
#define REPLICATION__WIRE_CHECK_SEED UINT64_C(0x53434e53)

#define REPLICATION__WIRE_AT_VERSION 4
#define REPLICATION__WIRE_AT_FLAGS 5
#define REPLICATION__WIRE_AT_ORIGIN 6
#define REPLICATION__WIRE_AT_SEQ 22
#define REPLICATION__WIRE_AT_HLC 30
#define REPLICATION__WIRE_AT_EPOCH 38
#define REPLICATION__WIRE_AT_SCHEMA 46
#define REPLICATION__WIRE_AT_INDEX 54
#define REPLICATION__WIRE_AT_COUNT 58
#define REPLICATION__WIRE_AT_PAYLOAD_SIZE 62
#define REPLICATION__WIRE_AT_BODY_SIZE 70
#define REPLICATION__WIRE_AT_BODY_CHECK 78
#define REPLICATION__WIRE_AT_PIECE_SIZE 86
#define REPLICATION__WIRE_HEADER_SIZE 90
#define REPLICATION__WIRE_CHECK_SIZE 8

/* ------------------------------------------------------------------------
 * The msgpack reader: every read checks the bytes it needs are there,
 * advances on success, and fails with REPLICATION_EFORMAT otherwise. A
 * container's element count is checked against the bytes left (every
 * element takes at least one), so it can size an allocation safely.
 * ------------------------------------------------------------------------ */

struct replication__mp {
    const uint8_t *data; /* borrowed */
    size_t size;         /* bytes at data */
    size_t offset;       /* next byte */
};

/* An array header; *count <= the bytes left. */
int replication__mp_array(struct replication__mp *mp, uint32_t *count);

/* An integer in [0, max]. */
int replication__mp_uint(struct replication__mp *mp, uint64_t max,
                         uint64_t *out);

/* A str: *bytes points into mp's data. */
int replication__mp_str(struct replication__mp *mp, const uint8_t **bytes,
                        uint32_t *size);

/* A value as described above; text and blob bytes point into mp's data
 * (bytes is NULL when size is 0). NaN is refused. */
int replication__mp_value(struct replication__mp *mp,
                          struct engine_change_value *out);

#endif /* SINEW_REPLICATION_CHANGESET_WIRE_H */
