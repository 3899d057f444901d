/* SPDX-License-Identifier: MIT
 *
 * buf.c: the growable byte buffer that encoders write into. Growth doubles
 * (from CAPACITY_MIN) and stops at the buffer's own size_max,
 * so no encoder can grow without bound.
 */
#include "common.h"

#include <string.h>

/* The first allocation's size: small enough for a short message, large
 * enough that tiny appends do not reallocate at once. */
#define CAPACITY_MIN 64

void common_buf_init(struct common_buf *buf, size_t size_max)
{
    ASSERT(buf != NULL);
    buf->data = NULL;
    buf->size = 0;
    buf->capacity = 0;
    buf->size_max = size_max;
}

void common_buf_close(struct common_buf *buf)
{
    ASSERT(buf != NULL);
    common_free(buf->data);
    buf->data = NULL;
    buf->size = 0;
    buf->capacity = 0;
}

static size_t grown_capacity(const struct common_buf *buf, size_t needed)
{
    size_t capacity =
        buf->capacity < CAPACITY_MIN ? CAPACITY_MIN : buf->capacity;

    while (capacity < needed && capacity <= buf->size_max / 2) {
        capacity *= 2;
    }
    if (capacity < needed || capacity > buf->size_max) {
        capacity = buf->size_max;
    }
    return capacity;
}

int common_buf_reserve(struct common_buf *buf, size_t additional)
{
    size_t capacity;
    uint8_t *data;

    ASSERT(buf != NULL);
    ASSERT(buf->size <= buf->capacity);
    if (additional <= buf->capacity - buf->size) {
        return 0;
    }
    if (additional > buf->size_max - buf->size) {
        return COMMON_ETOOBIG;
    }
    capacity = grown_capacity(buf, buf->size + additional);
    data = common_realloc(buf->data, capacity);
    if (data == NULL) {
        return COMMON_ENOMEM;
    }
    buf->data = data;
    buf->capacity = capacity;
    return 0;
}

int common_buf_append(struct common_buf *buf, const void *bytes, size_t size)
{
    int rc;

    ASSERT(bytes != NULL || size == 0);
    if (size == 0) {
        return 0;
    }
    rc = common_buf_reserve(buf, size);
    if (rc != 0) {
        return rc;
    }
    memcpy(buf->data + buf->size, bytes, size);
    buf->size += size;
    return 0;
}

int common_buf_append_byte(struct common_buf *buf, uint8_t byte)
{
    return common_buf_append(buf, &byte, 1);
}

int common_buf_append_u32le(struct common_buf *buf, uint32_t v)
{
    uint8_t bytes[4];

    common_put_u32le(bytes, v);
    return common_buf_append(buf, bytes, sizeof(bytes));
}

int common_buf_append_u64le(struct common_buf *buf, uint64_t v)
{
    uint8_t bytes[8];

    common_put_u64le(bytes, v);
    return common_buf_append(buf, bytes, sizeof(bytes));
}

int common_buf_append_varint(struct common_buf *buf, uint64_t v)
{
    uint8_t bytes[COMMON_VARINT_SIZE_MAX];

    return common_buf_append(buf, bytes, common_varint_encode(v, bytes));
}

void common_buf_truncate(struct common_buf *buf, size_t size)
{
    ASSERT(buf != NULL);
    ASSERT(size <= buf->size);
    buf->size = size;
}

uint8_t *common_buf_detach(struct common_buf *buf, size_t *size)
{
    uint8_t *data;

    ASSERT(buf != NULL);
    ASSERT(size != NULL);
    data = buf->data;
    *size = buf->size;
    buf->data = NULL;
    buf->size = 0;
    buf->capacity = 0;
    return data;
}
