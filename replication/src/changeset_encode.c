/* SPDX-License-Identifier: MIT
 *
 * changeset_encode.c: a change set to its msgpack body, lz4 when that
 * pays, and the payload's split into chunks (changeset_codec.h; the layout
 * is in changeset_wire.h).
 *
 * msgpack-c's packer writes through a callback into a common_buf, so the
 * body is allocated by sinew's heap and capped at
 * REPLICATION__CHANGESET_BODY_MAX as it grows. REAL values are always
 * written as float 64, even when integral, so a REAL stays a REAL and -0.0
 * keeps its sign; integers take msgpack's shortest form. msgpack-c writes
 * a count or length past 2^32 - 1 truncated, but the elements behind it
 * pass REPLICATION__CHANGESET_BODY_MAX first, so such a body is refused.
 */
#include "changeset_codec.h"

#include <lz4.h>
#include <math.h>
#include <msgpack.h>
#include <string.h>

#include "changeset_wire.h"
#include "replication.h"

struct body_writer {
    struct common_buf buf; /* the body so far */
    int rc;                /* the first append error */
};

static int body_write_cb(void *data, const char *bytes, size_t size)
{
    struct body_writer *w = data;
    int rc = common_buf_append(&w->buf, bytes, size);

    if (rc != 0 && w->rc == 0) {
        w->rc = rc;
    }
    return rc;
}

static int pack_text(msgpack_packer *pk, const char *text)
{
    size_t size = strlen(text);

    if (msgpack_pack_str(pk, size) != 0) {
        return -1;
    }
    return msgpack_pack_str_body(pk, text, size);
}

static int pack_value(msgpack_packer *pk, const struct engine_change_value *v)
{
    switch (v->type) {
    case ENGINE_NULL:
        return msgpack_pack_nil(pk);
    case ENGINE_INTEGER:
        return msgpack_pack_int64(pk, v->integer);
    case ENGINE_FLOAT:
        if (isnan(v->real)) {
            return REPLICATION_EFORMAT;
        }
        return msgpack_pack_double(pk, v->real);
    case ENGINE_TEXT:
        if (msgpack_pack_str(pk, v->size) != 0) {
            return -1;
        }
        return msgpack_pack_str_body(pk, v->bytes, v->size);
    default:
        ASSERT(v->type == ENGINE_BLOB);
        if (msgpack_pack_bin(pk, v->size) != 0) {
            return -1;
        }
        return msgpack_pack_bin_body(pk, v->bytes, v->size);
    }
}

static int pack_tables(msgpack_packer *pk,
                       const struct replication__changeset *cs)
{
    int rc = msgpack_pack_array(pk, cs->table_count);

    for (size_t t = 0; rc == 0 && t < cs->table_count; t++) {
        const struct replication__table *table = &cs->tables[t];

        rc = msgpack_pack_array(pk, 2);
        rc = rc != 0 ? rc : pack_text(pk, table->name);
        rc = rc != 0 ? rc : msgpack_pack_array(pk, table->column_count);
        for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
            rc = pack_text(pk, table->columns[c]);
        }
    }
    return rc;
}

static int pack_record(msgpack_packer *pk,
                       const struct replication__changeset *cs,
                       const struct replication__record *r)
{
    int rc;

    if (r->op == REPLICATION__OP_SCHEMA) {
        rc = msgpack_pack_array(pk, 2);
        rc = rc != 0 ? rc : msgpack_pack_uint32(pk, (uint32_t)r->op);
        return rc != 0 ? rc : pack_text(pk, r->sql);
    }
    ASSERT(r->op == REPLICATION__OP_ALIVE || r->op == REPLICATION__OP_DEAD ||
           r->op == REPLICATION__OP_SET);
    ASSERT(r->table < cs->table_count);
    rc = msgpack_pack_array(pk, r->op == REPLICATION__OP_SET ? 5 : 3);
    rc = rc != 0 ? rc : msgpack_pack_uint32(pk, (uint32_t)r->op);
    rc = rc != 0 ? rc : msgpack_pack_uint32(pk, r->table);
    rc = rc != 0 ? rc : msgpack_pack_array(pk, r->key_count);
    for (size_t k = 0; rc == 0 && k < r->key_count; k++) {
        rc = pack_value(pk, &r->key[k]);
    }
    if (rc == 0 && r->op == REPLICATION__OP_SET) {
        ASSERT(r->column < cs->tables[r->table].column_count);
        rc = msgpack_pack_uint32(pk, r->column);
        rc = rc != 0 ? rc : pack_value(pk, &r->value);
    }
    return rc;
}

/* Writes cs's body into w->buf; the error is w->rc's (an append failure),
 * or REPLICATION_EFORMAT for a NaN. */
static int pack_body(struct body_writer *w,
                     const struct replication__changeset *cs)
{
    msgpack_packer pk;
    int rc;

    msgpack_packer_init(&pk, w, body_write_cb);
    rc = msgpack_pack_array(&pk, 2);
    rc = rc != 0 ? rc : pack_tables(&pk, cs);
    rc = rc != 0 ? rc : msgpack_pack_array(&pk, cs->record_count);
    for (size_t i = 0; rc == 0 && i < cs->record_count; i++) {
        rc = pack_record(&pk, cs, &cs->records[i]);
    }
    if (w->rc != 0) {
        return w->rc;
    }
    return rc;
}

/* Replaces *body (owned) by its lz4 form when that is smaller. A failed
 * allocation just keeps the body as it is. */
static void compress_body(uint8_t **payload, size_t *payload_size,
                          uint8_t *flags)
{
    int bound = LZ4_compressBound((int)*payload_size);
    uint8_t *packed;
    int packed_size;

    if (*payload_size < REPLICATION__CHANGESET_COMPRESS_MIN || bound <= 0) {
        return;
    }
    packed = common_malloc((size_t)bound);
    if (packed == NULL) {
        return;
    }
    packed_size = LZ4_compress_default((const char *)*payload, (char *)packed,
                                       (int)*payload_size, bound);
    if (packed_size <= 0 || (size_t)packed_size >= *payload_size) {
        common_free(packed);
        return;
    }
    common_free(*payload);
    *payload = packed;
    *payload_size = (size_t)packed_size;
    *flags |= REPLICATION__WIRE_FLAG_LZ4;
}

int replication__changeset_encode(const struct replication__changeset *cs,
                                  size_t max_chunk_bytes,
                                  struct replication__encoding *out)
{
    struct replication__encoding enc = {0};
    struct body_writer w = {.rc = 0};
    size_t piece;
    int rc;

    ASSERT(cs != NULL);
    ASSERT(out != NULL);
    ASSERT(max_chunk_bytes > REPLICATION__CHUNK_OVERHEAD);
    common_buf_init(&w.buf, REPLICATION__CHANGESET_BODY_MAX);
    rc = pack_body(&w, cs);
    if (rc != 0) {
        common_buf_close(&w.buf);
        return rc;
    }
    enc.body_size = w.buf.size;
    enc.body_check = common_checksum64(w.buf.data, w.buf.size, 0);
    enc.payload = common_buf_detach(&w.buf, &enc.payload_size);
    ASSERT(enc.payload != NULL); /* a body is never empty */
    compress_body(&enc.payload, &enc.payload_size, &enc.flags);
    memcpy(enc.origin, cs->origin, sizeof(enc.origin));
    enc.version = cs->version;
    enc.hlc = cs->hlc;
    enc.epoch = cs->epoch;
    enc.schema_hash = cs->schema_hash;
    piece = max_chunk_bytes - REPLICATION__CHUNK_OVERHEAD;
    if (piece > enc.payload_size) {
        piece = enc.payload_size;
    }
    if (piece > UINT32_MAX) {
        piece = UINT32_MAX;
    }
    enc.piece_size = (uint32_t)piece;
    enc.chunk_count = (uint32_t)((enc.payload_size + piece - 1) / piece);
    *out = enc;
    return 0;
}

int replication__encoding_chunk(const struct replication__encoding *enc,
                                uint32_t index, struct common_buf *out)
{
    uint8_t header[REPLICATION__WIRE_HEADER_SIZE];
    size_t offset = (size_t)index * enc->piece_size;
    size_t piece = enc->payload_size - offset;
    size_t start = out->size;
    uint64_t check;
    int rc;

    ASSERT(index < enc->chunk_count);
    if (piece > enc->piece_size) {
        piece = enc->piece_size;
    }
    memcpy(header, REPLICATION__WIRE_MAGIC, 4);
    header[REPLICATION__WIRE_AT_VERSION] = REPLICATION__WIRE_VERSION;
    header[REPLICATION__WIRE_AT_FLAGS] = enc->flags;
    memcpy(header + REPLICATION__WIRE_AT_ORIGIN, enc->origin, 16);
    common_put_u64le(header + REPLICATION__WIRE_AT_SEQ, enc->version);
    common_put_u64le(header + REPLICATION__WIRE_AT_HLC, enc->hlc);
    common_put_u64le(header + REPLICATION__WIRE_AT_EPOCH, enc->epoch);
    common_put_u64le(header + REPLICATION__WIRE_AT_SCHEMA, enc->schema_hash);
    common_put_u32le(header + REPLICATION__WIRE_AT_INDEX, index);
    common_put_u32le(header + REPLICATION__WIRE_AT_COUNT, enc->chunk_count);
    common_put_u64le(header + REPLICATION__WIRE_AT_PAYLOAD_SIZE,
                     enc->payload_size);
    common_put_u64le(header + REPLICATION__WIRE_AT_BODY_SIZE, enc->body_size);
    common_put_u64le(header + REPLICATION__WIRE_AT_BODY_CHECK, enc->body_check);
    common_put_u32le(header + REPLICATION__WIRE_AT_PIECE_SIZE, enc->piece_size);
    rc = common_buf_reserve(out, sizeof(header) + piece + 8);
    if (rc != 0) {
        return rc;
    }
    check =
        common_checksum64(header, sizeof(header), REPLICATION__WIRE_CHECK_SEED);
    check = common_checksum64(enc->payload + offset, piece, check);
    (void)common_buf_append(out, header, sizeof(header));
    (void)common_buf_append(out, enc->payload + offset, piece);
    (void)common_buf_append_u64le(out, check);
    ASSERT(out->size == start + sizeof(header) + piece + 8);
    return 0;
}

void replication__encoding_close(struct replication__encoding *enc)
{
    common_free(enc->payload);
    memset(enc, 0, sizeof(*enc));
}
