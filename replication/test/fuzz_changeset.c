/* SPDX-License-Identifier: MIT
 *
 * fuzz_changeset.c: libFuzzer target for the change-set codec
 * (changeset_codec.h). The first input byte picks a mode:
 *
 *   0  the rest is one chunk, given to replication__changeset_decode();
 *   1  the rest is chunks, each prefixed by a 2-byte little-endian length,
 *      fed to a small reassembler (few sets, few bytes);
 *   2  the rest is a body, wrapped here in valid framing: this reaches the
 *      msgpack decoder, which the checksums otherwise hide;
 *   3  bytes 1-2 give a body size, the rest is an lz4 payload wrapped in
 *      valid framing: this reaches the decompressor's checks.
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers); and
 * every set that decodes encodes again and decodes to the same encoding
 * (a second trip is byte-identical).
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "changeset_codec.h"
#include "changeset_wire.h"
#include "replication.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int ok)
{
    if (!ok) {
        abort();
    }
}

/* Encodes d's set as one chunk into out (initialised here). */
static void encode_again(const struct replication__decoded *d,
                         struct common_buf *out)
{
    struct replication__encoding enc;

    common_buf_init(out, SIZE_MAX);
    must(replication__changeset_encode(&d->set, SIZE_MAX, &enc) == 0);
    must(enc.chunk_count == 1);
    must(replication__encoding_chunk(&enc, 0, out) == 0);
    replication__encoding_close(&enc);
}

/* A decoded set survives two more trips unchanged. */
static void check_round_trip(const struct replication__decoded *d)
{
    struct replication__decoded *again = NULL;
    struct common_buf first;
    struct common_buf second;

    encode_again(d, &first);
    must(replication__changeset_decode(first.data, first.size, &again) == 0);
    encode_again(again, &second);
    must(first.size == second.size);
    must(memcmp(first.data, second.data, first.size) == 0);
    replication__decoded_destroy(again);
    common_buf_close(&first);
    common_buf_close(&second);
}

/* The checksum of what payload inflates to, so that mode 3 gets past it
 * whenever lz4 accepts the bytes; 0 when it does not. */
static uint64_t body_check(const uint8_t *payload, size_t size,
                           uint64_t body_size, uint8_t flags)
{
    char *body;
    uint64_t check = 0;

    if (flags == 0) {
        return common_checksum64(payload, size, 0);
    }
    if (body_size == 0 || size > INT32_MAX) {
        return 0;
    }
    body = malloc((size_t)body_size);
    must(body != NULL);
    if (LZ4_decompress_safe((const char *)payload, body, (int)size,
                            (int)body_size) == (int)body_size) {
        check = common_checksum64(body, (size_t)body_size, 0);
    }
    free(body);
    return check;
}

static void wrap_and_decode(const uint8_t *payload, size_t size,
                            uint64_t body_size, uint8_t flags)
{
    struct replication__decoded *d = NULL;
    uint8_t header[REPLICATION__WIRE_HEADER_SIZE];
    struct common_buf buf;
    uint64_t check;

    if (size == 0) {
        return;
    }
    memcpy(header, REPLICATION__WIRE_MAGIC, 4);
    memset(header + 4, 0, sizeof(header) - 4);
    header[REPLICATION__WIRE_AT_VERSION] = REPLICATION__WIRE_VERSION;
    header[REPLICATION__WIRE_AT_FLAGS] = flags;
    common_put_u32le(header + REPLICATION__WIRE_AT_COUNT, 1);
    common_put_u64le(header + REPLICATION__WIRE_AT_PAYLOAD_SIZE, size);
    common_put_u64le(header + REPLICATION__WIRE_AT_BODY_SIZE, body_size);
    common_put_u64le(header + REPLICATION__WIRE_AT_BODY_CHECK,
                     body_check(payload, size, body_size, flags));
    common_put_u32le(header + REPLICATION__WIRE_AT_PIECE_SIZE, (uint32_t)size);
    check =
        common_checksum64(header, sizeof(header), REPLICATION__WIRE_CHECK_SEED);
    check = common_checksum64(payload, size, check);
    common_buf_init(&buf, SIZE_MAX);
    must(common_buf_append(&buf, header, sizeof(header)) == 0);
    must(common_buf_append(&buf, payload, size) == 0);
    must(common_buf_append_u64le(&buf, check) == 0);
    if (replication__changeset_decode(buf.data, buf.size, &d) == 0) {
        check_round_trip(d);
        replication__decoded_destroy(d);
    }
    common_buf_close(&buf);
}

static void feed_chunks(const uint8_t *data, size_t size)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 16,
                                                .sets_max = 3};
    struct replication__chunks *r;

    must(replication__chunks_create(&config, &r) == 0);
    while (size >= 2) {
        size_t n = common_get_u16le(data);
        struct replication__decoded *d = NULL;

        data += 2;
        size -= 2;
        n = n < size ? n : size;
        if (replication__chunks_add(r, data, n, &d) == 0 && d != NULL) {
            check_round_trip(d);
            replication__decoded_destroy(d);
        }
        must(replication__chunks_bytes(r) <= config.bytes_max);
        data += n;
        size -= n;
    }
    replication__chunks_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct replication__decoded *d = NULL;

    if (size < 1) {
        return 0;
    }
    switch (data[0] % 4) {
    case 0:
        if (replication__changeset_decode(data + 1, size - 1, &d) == 0) {
            check_round_trip(d);
            replication__decoded_destroy(d);
        }
        break;
    case 1:
        feed_chunks(data + 1, size - 1);
        break;
    case 2:
        wrap_and_decode(data + 1, size - 1, size - 1, 0);
        break;
    default:
        if (size >= 3) {
            wrap_and_decode(data + 3, size - 3, common_get_u16le(data + 1),
                            REPLICATION__WIRE_FLAG_LZ4);
        }
        break;
    }
    return 0;
}
