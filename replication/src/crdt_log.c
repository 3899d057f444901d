/* SPDX-License-Identifier: MIT
 *
 * crdt_log.c: the change log, every change set this database holds by
 * origin and gapless version: the ones this site committed (crdt.md §6.4
 * "Local commit path") and the ones merged from other sites, so a node
 * relays other origins' history to peers that lack it (crdt.md §5 #3,
 * #23, #24) rather than every node needing contact with every other.
 *
 * Storage: each change set as the wire codec encodes it
 * (changeset_codec.h), cut into chunks of at most
 * REPLICATION__CRDT_LOG_CHUNK_BYTES, one row per chunk in
 * sinew_crdt_log(origin, version, chunk, hlc, bytes), written in the
 * transaction that commits (local) or merges (remote) the set. The stored
 * chunks are the bytes a peer receives, so shipping hands them out as they
 * are (replication__crdt_log_bytes_since); replication__crdt_log_since
 * decodes them through a reassembler.
 */
#include <string.h>

#include "changeset_codec.h"
#include "crdt_int.h"

static int put_chunk(struct replication__crdt *crdt,
                     const struct replication__encoding *enc, uint32_t index,
                     struct common_buf *chunk)
{
    struct engine_stmt *stmt;
    int rc;

    chunk->size = 0;
    rc = replication__encoding_chunk(enc, index, chunk);
    if (rc == 0) {
        rc = replication__crdt_stmt(crdt, CRDT_LOG_PUT, &stmt);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, enc->origin, sizeof(enc->origin));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)enc->version);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 3, (int64_t)index);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 4, (int64_t)enc->hlc);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 5, chunk->data, (int)chunk->size);
    }
    return rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
}

int replication__crdt_log_append(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs)
{
    struct replication__encoding enc;
    struct common_buf chunk;
    uint32_t i;
    int rc;

    common_buf_init(&chunk, REPLICATION__CRDT_LOG_CHUNK_BYTES);
    rc = replication__changeset_encode(cs, REPLICATION__CRDT_LOG_CHUNK_BYTES,
                                       &enc);
    if (rc != 0) {
        goto cleanup;
    }
    for (i = 0; rc == 0 && i < enc.chunk_count; i++) {
        rc = put_chunk(crdt, &enc, i, &chunk);
    }
    replication__encoding_close(&enc);
cleanup:
    common_buf_close(&chunk);
    return rc;
}

int replication__crdt_log_bytes_since(struct replication__crdt *crdt,
                                      const uint8_t *origin, uint64_t after,
                                      replication__crdt_bytes_cb visit,
                                      void *ctx)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(origin != NULL);
    ASSERT(visit != NULL);
    rc = engine_prepare(crdt->db,
                        "SELECT bytes FROM sinew_crdt_log WHERE origin = ?1"
                        " AND version > ?2 ORDER BY version, chunk",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, origin, REPLICATION__SITE_ID_BYTES);
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)after);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = visit(ctx, engine_column_blob(stmt, 0),
                   (size_t)engine_column_bytes(stmt, 0));
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Feeds the chunks to a reassembler and visits each completed set. */
struct log_decode {
    struct replication__chunks *chunks;
    replication__crdt_visit_cb visit;
    void *ctx;
};

static int decode_chunk(void *ctx, const uint8_t *bytes, size_t size)
{
    struct log_decode *d = ctx;
    struct replication__decoded *decoded = NULL;
    int rc;

    rc = replication__chunks_add(d->chunks, bytes, size, &decoded);
    if (rc != 0 || decoded == NULL) {
        return rc;
    }
    rc = d->visit(d->ctx, &decoded->set);
    replication__decoded_destroy(decoded);
    return rc;
}

int replication__crdt_log_since(struct replication__crdt *crdt,
                                const uint8_t *origin, uint64_t after,
                                replication__crdt_visit_cb visit, void *ctx)
{
    const struct replication__chunks_config config = {
        .bytes_max = REPLICATION__CHANGESET_BODY_MAX, .sets_max = 1};
    struct log_decode d = {.visit = visit, .ctx = ctx};
    int rc;

    ASSERT(visit != NULL);
    rc = replication__chunks_create(&config, &d.chunks);
    if (rc != 0) {
        return rc;
    }
    rc = replication__crdt_log_bytes_since(crdt, origin, after, decode_chunk,
                                           &d);
    if (rc == 0 && replication__chunks_bytes(d.chunks) > 0) {
        rc = COMMON_ECORRUPT; /* a version whose chunks are not all there */
    }
    replication__chunks_destroy(d.chunks);
    return rc;
}
