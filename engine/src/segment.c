/* SPDX-License-Identifier: MIT
 *
 * segment.c: the columnar segment codec of the main file (docs/formats.md,
 * "Segment"). A segment holds up to 65,536 rows: their rowids, then one
 * block per column, each a typed vector (int64, double, text, dictionary
 * text, blob) with a NULL bitmap and a zone map (NULL count, min, max), or
 * a tagged value per row where a column mixes storage classes, as SQLite
 * lets it. The decoder trusts nothing: every length is bounded by the
 * bytes present, and the zone maps are recomputed and compared, so a
 * damaged segment is ENGINE_ECORRUPT, never a crash.
 */
#include <math.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

#define SEGMENT_MAGIC 0x47455353u /* "SSEG" little-endian */

struct zone {
    uint64_t null_count;
    bool has_range;
    struct engine_value min, max;
};

/* Binary order within one storage class, as a zone map keeps it. */
static int zone_compare(const struct engine_value *a,
                        const struct engine_value *b)
{
    size_t size;
    int c;

    switch (a->type) {
    case ENGINE_INTEGER:
        return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    case ENGINE_FLOAT:
        return (a->u.r > b->u.r) - (a->u.r < b->u.r);
    default:
        size = a->u.s.size < b->u.s.size ? a->u.s.size : b->u.s.size;
        c = size ? memcmp(a->u.s.bytes, b->u.s.bytes, size) : 0;
        return c ? c
                 : (a->u.s.size > b->u.s.size) - (a->u.s.size < b->u.s.size);
    }
}

static void zone_of(const struct engine_value *values, uint32_t n, bool typed,
                    struct zone *zone)
{
    memset(zone, 0, sizeof(*zone));
    for (uint32_t r = 0; r < n; r++) {
        const struct engine_value *v = &values[r];

        if (v->type == ENGINE_NULL) {
            zone->null_count++;
        } else if (typed && !zone->has_range) {
            zone->has_range = true;
            zone->min = zone->max = *v;
        } else if (typed) {
            zone->min = zone_compare(v, &zone->min) < 0 ? *v : zone->min;
            zone->max = zone_compare(v, &zone->max) > 0 ? *v : zone->max;
        }
    }
}

static enum engine_column_encoding classify(const struct engine_value *values,
                                            uint32_t n)
{
    int type = ENGINE_NULL;
    uint64_t bytes = 0;

    for (uint32_t r = 0; r < n; r++) {
        int t = values[r].type;

        if (t == ENGINE_NULL) {
            continue;
        }
        if (type != ENGINE_NULL && t != type) {
            return ENGINE__ENCODING_TAGGED;
        }
        type = t;
        bytes += t == ENGINE_TEXT || t == ENGINE_BLOB ? values[r].u.s.size : 0;
    }
    if (bytes > UINT32_MAX) {
        return ENGINE__ENCODING_TAGGED;
    }
    switch (type) {
    case ENGINE_INTEGER:
        return ENGINE__ENCODING_INT64;
    case ENGINE_FLOAT:
        return ENGINE__ENCODING_DOUBLE;
    case ENGINE_TEXT:
        return ENGINE__ENCODING_TEXT;
    case ENGINE_BLOB:
        return ENGINE__ENCODING_BLOB;
    default:
        return ENGINE__ENCODING_NULL;
    }
}

static int put_bitmap(struct common_buf *buf, const struct engine_value *values,
                      uint32_t n)
{
    int rc = 0;

    for (uint32_t r = 0; rc == 0 && r < n; r += 8) {
        uint8_t byte = 0;

        for (uint32_t b = 0; b < 8 && r + b < n; b++) {
            byte |= (uint8_t)((values[r + b].type == ENGINE_NULL) << b);
        }
        rc = common_buf_append_byte(buf, byte);
    }
    return rc;
}

static int put_zone(struct common_buf *buf, const struct engine_value *values,
                    uint32_t n, bool typed)
{
    struct zone zone;
    int rc;

    zone_of(values, n, typed, &zone);
    rc = common_buf_append_varint(buf, zone.null_count);
    rc = rc ? rc : common_buf_append_byte(buf, zone.has_range);
    if (rc == 0 && zone.has_range) {
        rc = engine__storage_put_value(buf, &zone.min);
        rc = rc ? rc : engine__storage_put_value(buf, &zone.max);
    }
    return rc;
}

/* Offsets (u32, n + 1 of them) then the bytes of values[0..n). */
static int put_strings(struct common_buf *buf,
                       const struct engine_value *values, uint32_t n)
{
    uint32_t offset = 0;
    int rc = common_buf_append_u32le(buf, 0);

    for (uint32_t r = 0; rc == 0 && r < n; r++) {
        offset +=
            values[r].type == ENGINE_NULL ? 0 : (uint32_t)values[r].u.s.size;
        rc = common_buf_append_u32le(buf, offset);
    }
    for (uint32_t r = 0; rc == 0 && r < n; r++) {
        if (values[r].type != ENGINE_NULL) {
            rc =
                common_buf_append(buf, values[r].u.s.bytes, values[r].u.s.size);
        }
    }
    return rc;
}

static int put_data(struct common_buf *buf, enum engine_column_encoding enc,
                    const struct engine_value *values, uint32_t n)
{
    int rc = 0;

    for (uint32_t r = 0; rc == 0 && r < n && enc <= ENGINE__ENCODING_DOUBLE;
         r++) {
        uint64_t word = 0;

        if (values[r].type == ENGINE_INTEGER) {
            word = (uint64_t)values[r].u.i;
        } else if (values[r].type == ENGINE_FLOAT) {
            memcpy(&word, &values[r].u.r, sizeof(word));
        }
        rc = enc == ENGINE__ENCODING_NULL ? 0
                                          : common_buf_append_u64le(buf, word);
    }
    if (enc == ENGINE__ENCODING_TEXT || enc == ENGINE__ENCODING_BLOB) {
        rc = put_strings(buf, values, n);
    }
    for (uint32_t r = 0; rc == 0 && r < n && enc == ENGINE__ENCODING_TAGGED;
         r++) {
        rc = engine__storage_put_value(buf, &values[r]);
    }
    return rc;
}

static int put_block(struct common_buf *buf, const struct engine_value *values,
                     uint32_t n)
{
    enum engine_column_encoding enc = classify(values, n);
    bool typed = enc != ENGINE__ENCODING_NULL && enc != ENGINE__ENCODING_TAGGED;
    int rc;

    if (enc == ENGINE__ENCODING_TEXT && engine__dict_pays(values, n)) {
        enc = ENGINE__ENCODING_DICT;
    }
    rc = common_buf_append_byte(buf, (uint8_t)enc);
    rc = rc || !typed ? rc : put_bitmap(buf, values, n);
    rc = rc ? rc : put_zone(buf, values, n, typed);
    if (rc == 0 && enc == ENGINE__ENCODING_DICT) {
        return engine__dict_put(buf, values, n);
    }
    return rc ? rc : put_data(buf, enc, values, n);
}

/* Column c of the rows at slots (the rowid alias column is stored NULL:
 * its value is the rowid). */
static void gather(const struct engine_table *table, const uint32_t *slots,
                   uint32_t n, size_t c, struct engine_value *out)
{
    for (uint32_t r = 0; r < n; r++) {
        out[r] = c == SIZE_MAX ? engine__value_int(table->rowids[slots[r]])
                 : (ptrdiff_t)c == table->rowid_alias
                     ? engine__value_null()
                     : engine__table_get(table, slots[r], c);
    }
}

int engine__segment_put(struct common_buf *buf,
                        const struct engine_table *table, const uint32_t *slots,
                        uint32_t count, uint64_t generation)
{
    size_t start = buf->size;
    struct engine_value *values = common_malloc_array(count, sizeof(*values));
    int rc = values == NULL ? COMMON_ENOMEM : 0;

    rc = rc ? rc : common_buf_append_u32le(buf, SEGMENT_MAGIC);
    rc = rc ? rc : common_buf_append_varint(buf, count);
    for (size_t c = SIZE_MAX;
         rc == 0 && (c == SIZE_MAX || c < table->column_count); c++) {
        gather(table, slots, count, c, values);
        rc = put_block(buf, values, count);
    }
    common_free(values);
    if (rc == 0) {
        rc = common_buf_append_u64le(buf, common_checksum64(buf->data + start,
                                                            buf->size - start,
                                                            generation));
    }
    return rc ? COMMON_ENOMEM : 0;
}

/* ---- decoding ---- */

static int get_bitmap(struct common_reader *reader, uint32_t n,
                      const uint8_t **bitmap)
{
    return common_reader_bytes(reader, (n + 7) / 8, bitmap) ? ENGINE_ECORRUPT
                                                            : 0;
}

static bool is_null(const uint8_t *bitmap, uint32_t r)
{
    return bitmap != NULL && (bitmap[r / 8] >> (r % 8)) & 1;
}

static int get_zone(struct common_reader *reader, struct zone *zone)
{
    uint8_t has_range;

    memset(zone, 0, sizeof(*zone));
    if (common_reader_varint(reader, &zone->null_count) != 0 ||
        common_reader_byte(reader, &has_range) != 0 || has_range > 1) {
        return ENGINE_ECORRUPT;
    }
    zone->has_range = has_range;
    if (has_range && (engine__storage_get_value(reader, &zone->min) != 0 ||
                      engine__storage_get_value(reader, &zone->max) != 0)) {
        return ENGINE_ECORRUPT;
    }
    return 0;
}

static int get_words(struct common_reader *reader, const uint8_t *bitmap,
                     uint32_t n, int type, struct engine_value *out)
{
    for (uint32_t r = 0; r < n; r++) {
        uint64_t word;

        if (common_reader_u64le(reader, &word) != 0) {
            return ENGINE_ECORRUPT;
        }
        memset(&out[r], 0, sizeof(out[r]));
        out[r].type = is_null(bitmap, r) ? ENGINE_NULL : type;
        if (type == ENGINE_INTEGER) {
            out[r].u.i = (int64_t)word;
        } else {
            memcpy(&out[r].u.r, &word, sizeof(word));
        }
        /* The engine never stores a NaN (it becomes NULL, as in SQLite),
         * and comparing one would be undefined. */
        if (out[r].type == ENGINE_FLOAT && isnan(out[r].u.r)) {
            return ENGINE_ECORRUPT;
        }
    }
    return 0;
}

int engine__segment_strings(struct common_reader *reader, uint32_t n, int type,
                            const uint8_t *bitmap, struct engine_value *out)
{
    const uint8_t *offsets, *bytes;
    uint32_t total;

    if (common_reader_bytes(reader, ((size_t)n + 1) * 4, &offsets) != 0 ||
        common_get_u32le(offsets) != 0) {
        return ENGINE_ECORRUPT;
    }
    total = common_get_u32le(offsets + (size_t)n * 4);
    if (common_reader_bytes(reader, total, &bytes) != 0) {
        return ENGINE_ECORRUPT;
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t from = common_get_u32le(offsets + (size_t)r * 4);
        uint32_t to = common_get_u32le(offsets + (size_t)r * 4 + 4);

        if (to < from || to > total || (is_null(bitmap, r) && to != from)) {
            return ENGINE_ECORRUPT;
        }
        out[r] = is_null(bitmap, r) ? engine__value_null()
                 : type == ENGINE_TEXT
                     ? engine__value_text(bytes + from, to - from)
                     : engine__value_blob(bytes + from, to - from);
    }
    return 0;
}

static int get_data(struct common_reader *reader,
                    enum engine_column_encoding enc, const uint8_t *bitmap,
                    uint32_t n, struct engine_value *out)
{
    switch (enc) {
    case ENGINE__ENCODING_NULL:
        for (uint32_t r = 0; r < n; r++) {
            out[r] = engine__value_null();
        }
        return 0;
    case ENGINE__ENCODING_INT64:
        return get_words(reader, bitmap, n, ENGINE_INTEGER, out);
    case ENGINE__ENCODING_DOUBLE:
        return get_words(reader, bitmap, n, ENGINE_FLOAT, out);
    case ENGINE__ENCODING_TEXT:
        return engine__segment_strings(reader, n, ENGINE_TEXT, bitmap, out);
    case ENGINE__ENCODING_BLOB:
        return engine__segment_strings(reader, n, ENGINE_BLOB, bitmap, out);
    case ENGINE__ENCODING_DICT:
        return engine__dict_get(reader, n, bitmap, out);
    default:
        for (uint32_t r = 0; r < n; r++) {
            if (engine__storage_get_value(reader, &out[r]) != 0) {
                return ENGINE_ECORRUPT;
            }
        }
        return 0;
    }
}

static bool zone_matches(const struct zone *stored,
                         const struct engine_value *values, uint32_t n,
                         bool typed)
{
    struct zone actual;

    zone_of(values, n, typed, &actual);
    if (stored->null_count != actual.null_count ||
        stored->has_range != actual.has_range) {
        return false;
    }
    return !actual.has_range || (stored->min.type == actual.min.type &&
                                 stored->max.type == actual.max.type &&
                                 zone_compare(&stored->min, &actual.min) == 0 &&
                                 zone_compare(&stored->max, &actual.max) == 0);
}

static int get_block(struct common_reader *reader, uint32_t n,
                     struct engine_value *out)
{
    uint8_t enc;
    const uint8_t *bitmap = NULL;
    struct zone zone;
    bool typed;
    int rc;

    if (common_reader_byte(reader, &enc) != 0 ||
        enc > ENGINE__ENCODING_TAGGED) {
        return ENGINE_ECORRUPT;
    }
    typed = enc != ENGINE__ENCODING_NULL && enc != ENGINE__ENCODING_TAGGED;
    rc = typed ? get_bitmap(reader, n, &bitmap) : 0;
    rc = rc ? rc : get_zone(reader, &zone);
    rc =
        rc ? rc
           : get_data(reader, (enum engine_column_encoding)enc, bitmap, n, out);
    if (rc == 0 && !zone_matches(&zone, out, n, typed)) {
        rc = ENGINE_ECORRUPT;
    }
    return rc;
}

void engine__segment_free(struct engine_segment *segment)
{
    for (size_t c = 0; segment->columns != NULL && c < segment->column_count;
         c++) {
        common_free(segment->columns[c]);
    }
    common_free(segment->columns);
    common_free(segment->rowids);
    memset(segment, 0, sizeof(*segment));
}

static int get_rowids(struct common_reader *reader, struct engine_segment *out,
                      struct engine_value *scratch)
{
    int rc = get_block(reader, out->row_count, scratch);

    for (uint32_t r = 0; rc == 0 && r < out->row_count; r++) {
        /* Rows are stored in rowid order: strictly increasing rowids. */
        if (scratch[r].type != ENGINE_INTEGER ||
            (r > 0 && scratch[r].u.i <= scratch[r - 1].u.i)) {
            return ENGINE_ECORRUPT;
        }
        out->rowids[r] = scratch[r].u.i;
    }
    return rc;
}

static int get_columns(struct common_reader *reader, struct engine_segment *out)
{
    uint32_t n = out->row_count;
    /* Column 0's vector holds the rowid block until column 0 is read. */
    int rc = get_rowids(reader, out, out->columns[0]);

    for (size_t c = 0; rc == 0 && c < out->column_count; c++) {
        rc = get_block(reader, n, out->columns[c]);
    }
    return rc;
}

static int allocate(struct engine_segment *out)
{
    out->rowids = common_malloc_array(out->row_count, sizeof(*out->rowids));
    out->columns = common_calloc(out->column_count, sizeof(*out->columns));
    if (out->rowids == NULL || out->columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t c = 0; c < out->column_count; c++) {
        out->columns[c] =
            common_malloc_array(out->row_count, sizeof(*out->columns[c]));
        if (out->columns[c] == NULL) {
            return COMMON_ENOMEM;
        }
    }
    return 0;
}

int engine__segment_get(struct common_reader *reader, size_t column_count,
                        uint64_t generation, struct engine_segment *out)
{
    size_t start = reader->offset;
    uint32_t magic;
    uint64_t rows, checksum;
    int rc;

    ASSERT(column_count > 0);
    memset(out, 0, sizeof(*out));
    if (common_reader_u32le(reader, &magic) != 0 || magic != SEGMENT_MAGIC ||
        common_reader_varint(reader, &rows) != 0 || rows == 0 ||
        rows > ENGINE__SEGMENT_ROWS) {
        return ENGINE_ECORRUPT;
    }
    out->row_count = (uint32_t)rows;
    out->column_count = column_count;
    rc = allocate(out);
    rc = rc ? rc : get_columns(reader, out);
    if (rc == 0) {
        uint64_t actual = common_checksum64(reader->data + start,
                                            reader->offset - start, generation);

        rc = common_reader_u64le(reader, &checksum) != 0 || checksum != actual
                 ? ENGINE_ECORRUPT
                 : 0;
    }
    if (rc != 0) {
        engine__segment_free(out);
    }
    return rc;
}
