/* SPDX-License-Identifier: MIT
 *
 * changeset_msgpack.c: reads the few msgpack types a change-set body uses
 * (changeset_wire.h), straight from the bytes.
 *
 * Why not msgpack_unpack_next(): it allocates a whole object tree sized by
 * the counts the input declares before it has seen the elements, so five
 * hostile bytes can ask for gigabytes. Here each count is checked against
 * the bytes left first, and values are returned in place, without copies.
 */
#include "changeset_wire.h"

#include <math.h>
#include <string.h>

#include "replication.h"

static int mp_take(struct replication__mp *mp, size_t size, const uint8_t **out)
{
    if (mp->size - mp->offset < size) {
        return REPLICATION_EFORMAT;
    }
    *out = mp->data + mp->offset;
    mp->offset += size;
    return 0;
}

static uint64_t mp_be(const uint8_t *p, size_t size)
{
    uint64_t v = 0;

    for (size_t i = 0; i < size; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* Reads a big-endian unsigned integer of size bytes. */
static int mp_be_read(struct replication__mp *mp, size_t size, uint64_t *out)
{
    const uint8_t *p;
    int rc = mp_take(mp, size, &p);

    if (rc == 0) {
        *out = mp_be(p, size);
    }
    return rc;
}

static int mp_byte(struct replication__mp *mp, uint8_t *out)
{
    const uint8_t *p;
    int rc = mp_take(mp, 1, &p);

    if (rc == 0) {
        *out = p[0];
    }
    return rc;
}

int replication__mp_array(struct replication__mp *mp, uint32_t *count)
{
    size_t start = mp->offset;
    uint64_t n;
    uint8_t tag;
    int rc = mp_byte(mp, &tag);

    if (rc != 0) {
        return rc;
    }
    if (tag >= 0x90 && tag <= 0x9f) {
        n = tag & 0x0f;
    } else if (tag == 0xdc || tag == 0xdd) {
        rc = mp_be_read(mp, tag == 0xdc ? 2 : 4, &n);
    } else {
        rc = REPLICATION_EFORMAT;
    }
    if (rc == 0 && n > mp->size - mp->offset) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        mp->offset = start;
        return rc;
    }
    *count = (uint32_t)n;
    return 0;
}

/* Reads any integer as a sign and magnitude: *negative with *magnitude the
 * two's complement bits of the int64, or an unsigned value. */
static int mp_integer(struct replication__mp *mp, uint8_t tag, bool *negative,
                      uint64_t *bits)
{
    static const uint8_t widths[4] = {1, 2, 4, 8};
    int rc = 0;

    *negative = false;
    if (tag <= 0x7f) {
        *bits = tag;
    } else if (tag >= 0xe0) {
        *negative = true;
        *bits = (uint64_t)(int64_t)(int8_t)tag;
    } else if (tag >= 0xcc && tag <= 0xcf) {
        rc = mp_be_read(mp, widths[tag - 0xcc], bits);
    } else if (tag >= 0xd0 && tag <= 0xd3) {
        size_t width = widths[tag - 0xd0];
        uint64_t raw = 0;

        rc = mp_be_read(mp, width, &raw);
        if (rc == 0 && width < 8 && (raw >> (8 * width - 1)) != 0) {
            raw |= UINT64_MAX << (8 * width); /* sign extension */
        }
        *negative = rc == 0 && (raw >> 63) != 0;
        *bits = raw;
    } else {
        rc = REPLICATION_EFORMAT;
    }
    return rc;
}

int replication__mp_uint(struct replication__mp *mp, uint64_t max,
                         uint64_t *out)
{
    size_t start = mp->offset;
    bool negative;
    uint64_t v;
    uint8_t tag;
    int rc = mp_byte(mp, &tag);

    if (rc == 0) {
        rc = mp_integer(mp, tag, &negative, &v);
    }
    if (rc == 0 && (negative || v > max)) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        mp->offset = start;
        return rc;
    }
    *out = v;
    return 0;
}

/* The length of a str (is_text) or bin whose tag was read, or an error
 * when tag is neither. */
static int mp_raw_size(struct replication__mp *mp, uint8_t tag, bool *is_text,
                       uint64_t *size)
{
    *is_text = true;
    if (tag >= 0xa0 && tag <= 0xbf) {
        *size = tag & 0x1f;
        return 0;
    }
    if (tag >= 0xd9 && tag <= 0xdb) {
        return mp_be_read(mp, (size_t)1 << (tag - 0xd9), size);
    }
    *is_text = false;
    if (tag >= 0xc4 && tag <= 0xc6) {
        return mp_be_read(mp, (size_t)1 << (tag - 0xc4), size);
    }
    return REPLICATION_EFORMAT;
}

int replication__mp_str(struct replication__mp *mp, const uint8_t **bytes,
                        uint32_t *size)
{
    size_t start = mp->offset;
    bool is_text;
    uint64_t n;
    uint8_t tag;
    int rc = mp_byte(mp, &tag);

    if (rc == 0) {
        rc = mp_raw_size(mp, tag, &is_text, &n);
    }
    if (rc == 0 && !is_text) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc == 0) {
        rc = mp_take(mp, (size_t)n, bytes);
    }
    if (rc != 0) {
        mp->offset = start;
        return rc;
    }
    *size = (uint32_t)n;
    return 0;
}

static int mp_real(struct replication__mp *mp, struct engine_change_value *out)
{
    uint64_t bits;
    double d;
    int rc = mp_be_read(mp, 8, &bits);

    if (rc != 0) {
        return rc;
    }
    memcpy(&d, &bits, sizeof(d));
    if (isnan(d)) {
        return REPLICATION_EFORMAT;
    }
    out->type = ENGINE_FLOAT;
    out->real = d;
    return 0;
}

static int mp_value_tagged(struct replication__mp *mp, uint8_t tag,
                           struct engine_change_value *out)
{
    bool negative;
    bool is_text;
    uint64_t n;
    const uint8_t *bytes = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (tag == 0xc0) {
        out->type = ENGINE_NULL;
        return 0;
    }
    if (tag == 0xcb) {
        return mp_real(mp, out);
    }
    rc = mp_raw_size(mp, tag, &is_text, &n);
    if (rc == 0) {
        rc = mp_take(mp, (size_t)n, &bytes);
        out->type = is_text ? ENGINE_TEXT : ENGINE_BLOB;
        out->bytes = n == 0 ? NULL : bytes;
        out->size = (size_t)n;
        return rc;
    }
    rc = mp_integer(mp, tag, &negative, &n);
    if (rc == 0 && !negative && n > (uint64_t)INT64_MAX) {
        rc = REPLICATION_EFORMAT;
    }
    out->type = ENGINE_INTEGER;
    out->integer = (int64_t)n;
    return rc;
}

int replication__mp_value(struct replication__mp *mp,
                          struct engine_change_value *out)
{
    size_t start = mp->offset;
    uint8_t tag;
    int rc = mp_byte(mp, &tag);

    if (rc == 0) {
        rc = mp_value_tagged(mp, tag, out);
    }
    if (rc != 0) {
        mp->offset = start;
    }
    return rc;
}
