/* SPDX-License-Identifier: MIT
 *
 * segment_dict.c: dictionary encoding of a text column block: the distinct
 * texts once, then a 1-, 2- or 4-byte code per row. Chosen where it pays:
 * when at most half of a block's rows are distinct texts (status columns,
 * country codes, tags), the common shape of text columns in practice.
 */
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

#define DICT_MIN_ROWS 16

struct dict {
    uint32_t *codes;   /* per row; 0 for NULL rows */
    uint32_t *firsts;  /* row of each distinct text's first occurrence */
    uint32_t count;    /* distinct texts */
    uint32_t *buckets; /* hash: distinct index + 1, 0 empty */
    size_t bucket_mask;
};

static uint32_t lookup(struct dict *dict, const struct engine_value *values,
                       const struct engine_value *v)
{
    uint64_t hash = common_checksum64(v->u.s.bytes, v->u.s.size, 0);

    for (size_t i = hash & dict->bucket_mask;;
         i = (i + 1) & dict->bucket_mask) {
        uint32_t entry = dict->buckets[i];
        const struct engine_value *seen;

        if (entry == 0) {
            dict->firsts[dict->count] = (uint32_t)(v - values);
            dict->buckets[i] = ++dict->count;
            return dict->count - 1;
        }
        seen = &values[dict->firsts[entry - 1]];
        if (seen->u.s.size == v->u.s.size &&
            (v->u.s.size == 0 ||
             memcmp(seen->u.s.bytes, v->u.s.bytes, v->u.s.size) == 0)) {
            return entry - 1;
        }
    }
}

static void dict_free(struct dict *dict)
{
    common_free(dict->codes);
    common_free(dict->firsts);
    common_free(dict->buckets);
}

/* Codes the values; stops (returning 1) once more than max are distinct. */
static int dict_build(struct dict *dict, const struct engine_value *values,
                      uint32_t n, uint32_t max)
{
    size_t buckets = 1;

    memset(dict, 0, sizeof(*dict));
    while (buckets < (size_t)n * 2) {
        buckets *= 2;
    }
    dict->bucket_mask = buckets - 1;
    dict->codes = common_calloc(n, sizeof(*dict->codes));
    dict->firsts = common_malloc_array(n, sizeof(*dict->firsts));
    dict->buckets = common_calloc(buckets, sizeof(*dict->buckets));
    if (dict->codes == NULL || dict->firsts == NULL || dict->buckets == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t r = 0; r < n; r++) {
        if (values[r].type != ENGINE_NULL) {
            dict->codes[r] = lookup(dict, values, &values[r]);
        }
        if (dict->count > max) {
            return 1;
        }
    }
    return 0;
}

bool engine__dict_pays(const struct engine_value *values, uint32_t n)
{
    struct dict dict;
    int rc;

    if (n < DICT_MIN_ROWS) {
        return false;
    }
    rc = dict_build(&dict, values, n, n / 2);
    dict_free(&dict);
    return rc == 0;
}

static int put_entries(struct common_buf *buf, const struct dict *dict,
                       const struct engine_value *values)
{
    uint32_t offset = 0;
    int rc = common_buf_append_varint(buf, dict->count);

    rc = rc ? rc : common_buf_append_u32le(buf, 0);
    for (uint32_t i = 0; rc == 0 && i < dict->count; i++) {
        offset += (uint32_t)values[dict->firsts[i]].u.s.size;
        rc = common_buf_append_u32le(buf, offset);
    }
    for (uint32_t i = 0; rc == 0 && i < dict->count; i++) {
        const struct engine_value *v = &values[dict->firsts[i]];

        rc = common_buf_append(buf, v->u.s.bytes, v->u.s.size);
    }
    return rc;
}

static uint8_t code_width(uint32_t count)
{
    return count <= 0x100 ? 1 : count <= 0x10000 ? 2 : 4;
}

int engine__dict_put(struct common_buf *buf, const struct engine_value *values,
                     uint32_t n)
{
    struct dict dict;
    int rc = dict_build(&dict, values, n, n);
    uint8_t width = code_width(dict.count);

    rc = rc ? COMMON_ENOMEM : put_entries(buf, &dict, values);
    rc = rc ? rc : common_buf_append_byte(buf, width);
    for (uint32_t r = 0; rc == 0 && r < n; r++) {
        uint8_t bytes[4];

        common_put_u32le(bytes, dict.codes[r]);
        rc = common_buf_append(buf, bytes, width);
    }
    dict_free(&dict);
    return rc;
}

static uint32_t get_code(const uint8_t *p, uint8_t width)
{
    uint8_t bytes[4] = {0, 0, 0, 0};

    memcpy(bytes, p, width);
    return common_get_u32le(bytes);
}

int engine__dict_get(struct common_reader *reader, uint32_t n,
                     const uint8_t *null_bitmap, struct engine_value *out)
{
    uint64_t count;
    struct engine_value *entries = NULL;
    const uint8_t *codes;
    uint8_t width;
    int rc = ENGINE_ECORRUPT;

    if (common_reader_varint(reader, &count) != 0 || count > n || count == 0) {
        return ENGINE_ECORRUPT;
    }
    entries = common_malloc_array((size_t)count, sizeof(*entries));
    if (entries == NULL) {
        return COMMON_ENOMEM;
    }
    if (engine__segment_strings(reader, (uint32_t)count, ENGINE_TEXT, NULL,
                                entries) != 0 ||
        common_reader_byte(reader, &width) != 0 ||
        width != code_width((uint32_t)count) ||
        common_reader_bytes(reader, (size_t)n * width, &codes) != 0) {
        goto out;
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t code = get_code(codes + (size_t)r * width, width);
        bool null = (null_bitmap[r / 8] >> (r % 8)) & 1;

        if (code >= count || (null && code != 0)) {
            goto out;
        }
        out[r] = null ? engine__value_null() : entries[code];
    }
    rc = 0;
out:
    common_free(entries);
    return rc;
}
