/* SPDX-License-Identifier: MIT
 *
 * changeset_codec.h: a change set (changeset.h) to bytes and back.
 *
 * Encoding packs the set's tables and records with msgpack (the body),
 * compresses the body with lz4 when it is large and that shrinks it (the
 * payload), and cuts the payload into chunks of at most max_chunk_bytes,
 * each self-describing (origin, version, stamps, index, count, sizes) and
 * checksummed. A receiver feeds chunks, in any order and with duplicates,
 * to a reassembler, which yields the decoded set only once every chunk is
 * there: a large transaction becomes visible whole or not at all. The
 * byte layout is in changeset_wire.h and docs/formats.md, "Change sets".
 *
 * Input bytes are never trusted: every size is checked against the bytes
 * that carry it and against the limits below before anything is allocated.
 */
#ifndef SINEW_REPLICATION_CHANGESET_CODEC_H
#define SINEW_REPLICATION_CHANGESET_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "changeset.h"

/* The largest body (msgpack, before compression) a change set may have:
 * bounds what a decoder allocates for one set, whatever a chunk claims. */
#define REPLICATION__CHANGESET_BODY_MAX ((size_t)256 << 20)

/* Bodies of at least this many bytes are lz4-compressed when that makes
 * them smaller; below it the saving is not worth the time. */
#define REPLICATION__CHANGESET_COMPRESS_MIN 1024

/* Header and checksum bytes of every chunk (changeset_wire.h); a chunk
 * limit must leave room for at least one payload byte after them. */
#define REPLICATION__CHUNK_OVERHEAD 98

/* ------------------------------------------------------------------------
 * Encoding
 * ------------------------------------------------------------------------ */

/* An encoded change set, ready to be cut into chunks. Set up by
 * replication__changeset_encode(), released by
 * replication__encoding_close(). Fields are read-only for callers. */
struct replication__encoding {
    uint8_t *payload;    /* owned: the body, lz4-compressed if flagged */
    size_t payload_size; /* bytes at payload, >= 1 */
    uint64_t body_size;  /* bytes of the uncompressed body */
    uint64_t body_check; /* common_checksum64 of the uncompressed body */
    uint8_t flags;       /* REPLICATION__WIRE_FLAG_* */
    uint8_t origin[REPLICATION__SITE_ID_BYTES];
    uint64_t version;     /* copied from the change set */
    uint64_t hlc;         /* copied from the change set */
    uint64_t epoch;       /* copied from the change set */
    uint64_t schema_hash; /* copied from the change set */
    uint32_t piece_size;  /* payload bytes in every chunk but the last */
    uint32_t chunk_count; /* >= 1 */
};

/* Encodes *cs (borrowed for the call) for chunks of at most
 * max_chunk_bytes each (> REPLICATION__CHUNK_OVERHEAD). On success *out
 * owns its payload. REPLICATION_EFORMAT when a REAL value is NaN (no
 * replica could agree on it), COMMON_ETOOBIG when the body passes
 * REPLICATION__CHANGESET_BODY_MAX, COMMON_ENOMEM. The table and column
 * indexes of cs's records must be in range (asserted). */
int replication__changeset_encode(const struct replication__changeset *cs,
                                  size_t max_chunk_bytes,
                                  struct replication__encoding *out);

/* Appends chunk index (< enc->chunk_count) of *enc (borrowed) to out
 * (borrowed; unchanged on failure). COMMON_ENOMEM, COMMON_ETOOBIG (out's
 * size_max). */
int replication__encoding_chunk(const struct replication__encoding *enc,
                                uint32_t index, struct common_buf *out);

/* Frees enc's payload; enc may be encoded into again. */
void replication__encoding_close(struct replication__encoding *enc);

/* ------------------------------------------------------------------------
 * Decoding
 * ------------------------------------------------------------------------ */

/* A decoded change set. set's tables, names, records, keys and values all
 * live in memory the decoded set owns, freed whole by
 * replication__decoded_destroy(). Names and SQL are NUL-terminated (they
 * never hold a NUL); TEXT and BLOB values are not. */
struct replication__decoded {
    struct replication__changeset set;
    struct replication__decoded_mem *mem; /* owned: where it all lives */
};

void replication__decoded_destroy(struct replication__decoded *decoded);

/* What a chunk's header says (replication__chunk_peek). */
struct replication__chunk_info {
    uint8_t origin[REPLICATION__SITE_ID_BYTES];
    uint64_t version;
    uint64_t hlc;
    uint64_t epoch;
    uint64_t schema_hash;
    uint32_t index; /* < count */
    uint32_t count; /* chunks of the set, >= 1 */
    uint8_t flags;  /* REPLICATION__WIRE_FLAG_* */
    uint64_t payload_size;
    uint64_t body_size;
    uint64_t body_check;
    uint32_t piece_size;
    const uint8_t *piece; /* borrowed from the chunk's bytes */
    size_t piece_bytes;   /* bytes at piece */
};

/* Checks one chunk's framing, checksum and header (size bytes at bytes,
 * borrowed) and describes it in *out, whose piece points into bytes.
 * REPLICATION_EFORMAT (bad magic, truncated, checksum, inconsistent
 * sizes, unknown flags), REPLICATION_EVERSION (another format version). */
int replication__chunk_peek(const uint8_t *bytes, size_t size,
                            struct replication__chunk_info *out);

/* Decodes a change set sent as one chunk (bytes borrowed for the call).
 * On success *out is the caller's, to release with
 * replication__decoded_destroy(). The errors of replication__chunk_peek();
 * REPLICATION_EFORMAT also for a chunk of a larger set (use the
 * reassembler) and for a malformed body; COMMON_ETOOBIG for a body past
 * REPLICATION__CHANGESET_BODY_MAX; COMMON_ENOMEM. */
int replication__changeset_decode(const uint8_t *bytes, size_t size,
                                  struct replication__decoded **out);

/* Decodes a whole payload described by *info (borrowed; its piece fields
 * are ignored): payload_size bytes at payload (borrowed for the call).
 * For the reassembler. */
int replication__payload_decode(const struct replication__chunk_info *info,
                                const uint8_t *payload,
                                struct replication__decoded **out);

/* ------------------------------------------------------------------------
 * Reassembly
 *
 * Chunks of several change sets may arrive interleaved; each set in
 * progress (keyed by origin and version) holds a payload buffer sized from
 * its first chunk, charged against bytes_max before it is allocated, and
 * a map of the chunks it has. A chunk whose header disagrees with its
 * set's first chunk, or a duplicate whose bytes differ, is refused and the
 * set kept. A completed set is decoded, handed out and forgotten, so a
 * late duplicate of it starts a new set: callers drop chunks of versions
 * they already applied (their version vector) before adding them.
 * ------------------------------------------------------------------------ */

struct replication__chunks_config {
    size_t bytes_max; /* payload bytes held over all sets in progress */
    size_t sets_max;  /* sets in progress at once, >= 1 */
};

struct replication__chunks;

/* Creates an empty reassembler with a copy of *config. COMMON_ENOMEM. */
int replication__chunks_create(const struct replication__chunks_config *config,
                               struct replication__chunks **out);

/* Frees r and every set in progress; NULL is ignored. */
void replication__chunks_destroy(struct replication__chunks *r);

/* Adds one chunk (bytes borrowed for the call). 0 with *out NULL while its
 * set is incomplete (and for a duplicate); 0 with *out set, the caller's
 * to destroy, once the set is complete. The errors of
 * replication__chunk_peek() and replication__changeset_decode();
 * REPLICATION_EFORMAT for an inconsistent chunk; COMMON_ETOOBIG when
 * bytes_max or sets_max would be passed. A set whose body turns out
 * malformed is dropped. */
int replication__chunks_add(struct replication__chunks *r, const uint8_t *bytes,
                            size_t size, struct replication__decoded **out);

/* Forgets the set in progress of origin (borrowed, 16 bytes) and version,
 * if any (e.g. when giving up on a peer). */
void replication__chunks_drop(struct replication__chunks *r,
                              const uint8_t *origin, uint64_t version);

/* Payload bytes held by sets in progress. */
size_t replication__chunks_bytes(const struct replication__chunks *r);

#endif /* SINEW_REPLICATION_CHANGESET_CODEC_H */
