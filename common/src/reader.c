/* SPDX-License-Identifier: MIT
 *
 * reader.c: bounds-checked decoding of untrusted bytes. A short or malformed
 * input is an operating error (COMMON_ECORRUPT), never an assertion, and a
 * failed read leaves the reader where it was so the caller can report the
 * offset of the damage.
 */
#include "common.h"

void common_reader_init(struct common_reader *reader, const void *data,
                        size_t size)
{
    ASSERT(reader != NULL);
    ASSERT(data != NULL || size == 0);
    reader->data = data;
    reader->size = size;
    reader->offset = 0;
}

int common_reader_bytes(struct common_reader *reader, size_t size,
                        const uint8_t **out)
{
    ASSERT(reader != NULL);
    ASSERT(reader->offset <= reader->size);
    if (size > common_reader_remaining(reader)) {
        return COMMON_ECORRUPT;
    }
    /* Pointer arithmetic on the NULL of an empty input is undefined. */
    *out = size == 0 ? reader->data : reader->data + reader->offset;
    reader->offset += size;
    return 0;
}

int common_reader_byte(struct common_reader *reader, uint8_t *out)
{
    const uint8_t *p;
    int rc = common_reader_bytes(reader, 1, &p);

    if (rc == 0) {
        *out = p[0];
    }
    return rc;
}

int common_reader_u32le(struct common_reader *reader, uint32_t *out)
{
    const uint8_t *p;
    int rc = common_reader_bytes(reader, 4, &p);

    if (rc == 0) {
        *out = common_get_u32le(p);
    }
    return rc;
}

int common_reader_u64le(struct common_reader *reader, uint64_t *out)
{
    const uint8_t *p;
    int rc = common_reader_bytes(reader, 8, &p);

    if (rc == 0) {
        *out = common_get_u64le(p);
    }
    return rc;
}

int common_reader_varint(struct common_reader *reader, uint64_t *out)
{
    size_t consumed;
    int rc;

    ASSERT(reader != NULL);
    if (common_reader_remaining(reader) == 0) {
        return COMMON_ECORRUPT;
    }
    rc = common_varint_decode(reader->data + reader->offset,
                              common_reader_remaining(reader), out, &consumed);
    if (rc == 0) {
        reader->offset += consumed;
    }
    return rc;
}
