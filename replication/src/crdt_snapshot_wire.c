/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot_wire.c: a snapshot's envelope (header, lz4, checksums) and
 * the walk over its msgpack body (crdt_snapshot_int.h has the layout,
 * docs/formats.md "Snapshots" the same tables).
 *
 * Input is never trusted: the header is checked on its own first (so a
 * receiver can size its buffer from the first slice, see
 * replication__crdt_snapshot_size()), the payload's checksum before it is
 * decompressed, the body's after, and the walk checks every count against
 * the bytes left (the bounded reader of changeset_msgpack.c) before it
 * allocates anything for it. The walk copies names only; values and byte
 * strings are handed out pointing into the body.
 */
#include "crdt_snapshot_int.h"

#include <lz4.h>
#include <string.h>

#include "changeset_wire.h"
#include "crdt.h"
#include "replication.h"

STATIC_ASSERT(REPLICATION__SNAPSHOT_HEADER_SIZE ==
                  REPLICATION__SNAPSHOT_HEADER_BYTES,
              "the header size is crdt.h's");
STATIC_ASSERT(REPLICATION__SNAPSHOT_BODY_MAX < (size_t)LZ4_MAX_INPUT_SIZE,
              "lz4 takes a body whole");

/* ---- the envelope ---- */

/* The lz4 form of body into *packed (owned), when it is smaller; *packed
 * stays NULL otherwise (also when memory is short: sent uncompressed). */
static void compress(const uint8_t *body, size_t size, uint8_t **packed,
                     size_t *packed_size)
{
    int bound, n;

    *packed = NULL;
    if (size < REPLICATION__SNAPSHOT_COMPRESS_MIN) {
        return;
    }
    bound = LZ4_compressBound((int)size);
    *packed = bound > 0 ? common_malloc((size_t)bound) : NULL;
    if (*packed == NULL) {
        return;
    }
    n = LZ4_compress_default((const char *)body, (char *)*packed, (int)size,
                             bound);
    if (n <= 0 || (size_t)n >= size) {
        common_free(*packed);
        *packed = NULL;
        return;
    }
    *packed_size = (size_t)n;
}

int replication__snapshot_seal(const uint8_t *body, size_t size,
                               const uint8_t *site, struct common_buf *out)
{
    uint8_t header[REPLICATION__SNAPSHOT_HEADER_SIZE];
    const uint8_t *payload = body;
    size_t payload_size = size;
    uint8_t *packed;
    uint64_t check;
    int rc;

    ASSERT(body != NULL);
    ASSERT(size > 0);
    if (size > REPLICATION__SNAPSHOT_BODY_MAX) {
        return COMMON_ETOOBIG;
    }
    compress(body, size, &packed, &payload_size);
    payload = packed != NULL ? packed : body;
    memset(header, 0, sizeof(header));
    memcpy(header, REPLICATION__SNAPSHOT_MAGIC, 4);
    header[REPLICATION__SNAPSHOT_AT_VERSION] = REPLICATION__SNAPSHOT_VERSION;
    header[REPLICATION__SNAPSHOT_AT_FLAGS] =
        packed != NULL ? REPLICATION__SNAPSHOT_FLAG_LZ4 : 0;
    memcpy(header + REPLICATION__SNAPSHOT_AT_SITE, site,
           REPLICATION__SITE_ID_BYTES);
    common_put_u64le(header + REPLICATION__SNAPSHOT_AT_PAYLOAD_SIZE,
                     payload_size);
    common_put_u64le(header + REPLICATION__SNAPSHOT_AT_BODY_SIZE, size);
    common_put_u64le(header + REPLICATION__SNAPSHOT_AT_BODY_CHECK,
                     common_checksum64(body, size, 0));
    common_put_u64le(
        header + REPLICATION__SNAPSHOT_AT_PAYLOAD_CHECK,
        common_checksum64(payload, payload_size, REPLICATION__SNAPSHOT_SEED));
    check = common_checksum64(header, REPLICATION__SNAPSHOT_AT_HEADER_CHECK,
                              REPLICATION__SNAPSHOT_SEED);
    common_put_u64le(header + REPLICATION__SNAPSHOT_AT_HEADER_CHECK, check);
    rc = common_buf_reserve(out, sizeof(header) + payload_size);
    if (rc == 0) {
        (void)common_buf_append(out, header, sizeof(header));
        (void)common_buf_append(out, payload, payload_size);
    }
    common_free(packed);
    return rc;
}

/* What a checked header says. */
struct header {
    uint8_t flags;
    uint64_t payload_size;
    uint64_t body_size;
    uint64_t body_check;
    uint64_t payload_check;
};

/* Checks the REPLICATION__SNAPSHOT_HEADER_SIZE bytes at bytes alone. */
static int header_read(const uint8_t *bytes, struct header *h)
{
    if (memcmp(bytes, REPLICATION__SNAPSHOT_MAGIC, 4) != 0) {
        return REPLICATION_EFORMAT;
    }
    if (bytes[REPLICATION__SNAPSHOT_AT_VERSION] !=
        REPLICATION__SNAPSHOT_VERSION) {
        return REPLICATION_EVERSION;
    }
    if (common_get_u64le(bytes + REPLICATION__SNAPSHOT_AT_HEADER_CHECK) !=
        common_checksum64(bytes, REPLICATION__SNAPSHOT_AT_HEADER_CHECK,
                          REPLICATION__SNAPSHOT_SEED)) {
        return REPLICATION_EFORMAT;
    }
    h->flags = bytes[REPLICATION__SNAPSHOT_AT_FLAGS];
    h->payload_size =
        common_get_u64le(bytes + REPLICATION__SNAPSHOT_AT_PAYLOAD_SIZE);
    h->body_size = common_get_u64le(bytes + REPLICATION__SNAPSHOT_AT_BODY_SIZE);
    h->body_check =
        common_get_u64le(bytes + REPLICATION__SNAPSHOT_AT_BODY_CHECK);
    h->payload_check =
        common_get_u64le(bytes + REPLICATION__SNAPSHOT_AT_PAYLOAD_CHECK);
    if ((h->flags & ~REPLICATION__SNAPSHOT_FLAG_LZ4) != 0 ||
        h->body_size == 0 || h->payload_size == 0) {
        return REPLICATION_EFORMAT;
    }
    if (h->body_size > REPLICATION__SNAPSHOT_BODY_MAX) {
        return COMMON_ETOOBIG;
    }
    if (h->flags == 0 ? h->payload_size != h->body_size
                      : h->payload_size >= h->body_size ||
                            h->payload_size * 255 < h->body_size) {
        return REPLICATION_EFORMAT; /* lz4 expands a byte at most 255-fold */
    }
    return 0;
}

int replication__crdt_snapshot_size(const uint8_t *bytes, size_t size,
                                    size_t *total)
{
    struct header h;
    int rc;

    ASSERT(bytes != NULL || size == 0);
    if (size < REPLICATION__SNAPSHOT_HEADER_SIZE) {
        return REPLICATION_EFORMAT;
    }
    rc = header_read(bytes, &h);
    if (rc == 0) {
        *total = REPLICATION__SNAPSHOT_HEADER_SIZE + (size_t)h.payload_size;
    }
    return rc;
}

int replication__snapshot_open(const uint8_t *bytes, size_t size,
                               struct replication__snapshot_body *out)
{
    const uint8_t *payload;
    uint8_t *owned = NULL;
    struct header h;
    int rc;

    memset(out, 0, sizeof(*out));
    if (size < REPLICATION__SNAPSHOT_HEADER_SIZE) {
        return REPLICATION_EFORMAT;
    }
    rc = header_read(bytes, &h);
    if (rc != 0) {
        return rc;
    }
    payload = bytes + REPLICATION__SNAPSHOT_HEADER_SIZE;
    if (h.payload_size != size - REPLICATION__SNAPSHOT_HEADER_SIZE ||
        h.payload_check != common_checksum64(payload, (size_t)h.payload_size,
                                             REPLICATION__SNAPSHOT_SEED)) {
        return REPLICATION_EFORMAT;
    }
    if (h.flags & REPLICATION__SNAPSHOT_FLAG_LZ4) {
        owned = common_malloc((size_t)h.body_size);
        if (owned == NULL) {
            return COMMON_ENOMEM;
        }
        if (LZ4_decompress_safe((const char *)payload, (char *)owned,
                                (int)h.payload_size,
                                (int)h.body_size) != (int)h.body_size) {
            common_free(owned);
            return REPLICATION_EFORMAT;
        }
        payload = owned;
    }
    if (common_checksum64(payload, (size_t)h.body_size, 0) != h.body_check) {
        common_free(owned);
        return REPLICATION_EFORMAT;
    }
    memcpy(out->site, bytes + REPLICATION__SNAPSHOT_AT_SITE, sizeof(out->site));
    out->data = payload;
    out->size = (size_t)h.body_size;
    out->owned = owned;
    return 0;
}

void replication__snapshot_body_close(struct replication__snapshot_body *b)
{
    common_free(b->owned);
    memset(b, 0, sizeof(*b));
}

/* ---- the walk ---- */

struct walker {
    struct replication__mp mp;
    const struct replication__snapshot_visit *v;
    const struct replication__snapshot_body *body;
    struct common_buf text; /* the element's names, each NUL-terminated */
};

/* An array of exactly count elements. */
static int fixed_array(struct walker *w, uint32_t count)
{
    uint32_t n;
    int rc = replication__mp_array(&w->mp, &n);

    return rc == 0 && n != count ? REPLICATION_EFORMAT : rc;
}

/* A str copied into the element's names; *at is its offset there. */
static int name_read(struct walker *w, size_t *at)
{
    const uint8_t *bytes;
    uint32_t size;
    int rc = replication__mp_str(&w->mp, &bytes, &size);

    if (rc != 0) {
        return rc;
    }
    if (size > 0 && memchr(bytes, '\0', size) != NULL) {
        return REPLICATION_EFORMAT;
    }
    *at = w->text.size;
    rc = common_buf_append(&w->text, bytes, size);
    return rc == 0 ? common_buf_append_byte(&w->text, '\0') : rc;
}

static const char *name_at(const struct walker *w, size_t at)
{
    return (const char *)w->text.data + at;
}

/* A bin of size bytes (any size when size is 0, then *got says). */
static int bin_read(struct walker *w, size_t size, const uint8_t **bytes,
                    size_t *got)
{
    struct engine_change_value v;
    int rc = replication__mp_value(&w->mp, &v);

    if (rc != 0 || v.type != ENGINE_BLOB || (size > 0 && v.size != size)) {
        return rc != 0 ? rc : REPLICATION_EFORMAT;
    }
    *bytes = v.bytes != NULL ? v.bytes : (const uint8_t *)"";
    if (got != NULL) {
        *got = v.size;
    }
    return 0;
}

static int flag_read(struct walker *w, bool *out)
{
    uint64_t v;
    int rc = replication__mp_uint(&w->mp, 1, &v);

    if (rc == 0) {
        *out = v != 0;
    }
    return rc;
}

static int site_part(struct walker *w)
{
    const uint8_t *site;
    int rc = bin_read(w, REPLICATION__SITE_ID_BYTES, &site, NULL);

    if (rc == 0 && memcmp(site, w->body->site, REPLICATION__SITE_ID_BYTES)) {
        rc = REPLICATION_EFORMAT; /* the body is not the header's */
    }
    return rc;
}

/* heads or floors: [origin, value >= 1] each. */
static int heads_part(struct walker *w, bool floor)
{
    const uint8_t *origin;
    uint64_t value;
    uint32_t n, i;
    int rc = replication__mp_array(&w->mp, &n);

    for (i = 0; rc == 0 && i < n; i++) {
        rc = fixed_array(w, 2);
        rc = rc == 0 ? bin_read(w, REPLICATION__SITE_ID_BYTES, &origin, NULL)
                     : rc;
        rc = rc == 0 ? replication__mp_uint(&w->mp, INT64_MAX, &value) : rc;
        rc = rc == 0 && value == 0 ? REPLICATION_EFORMAT : rc;
        if (rc == 0 && w->v->head != NULL) {
            rc = w->v->head(w->v->ctx, origin, value, floor);
        }
    }
    return rc;
}

static int object_read(struct walker *w)
{
    struct replication__snapshot_object o;
    size_t type, name, sql;
    int rc;

    w->text.size = 0;
    rc = fixed_array(w, 3);
    rc = rc == 0 ? name_read(w, &type) : rc;
    rc = rc == 0 ? name_read(w, &name) : rc;
    rc = rc == 0 ? name_read(w, &sql) : rc;
    if (rc != 0) {
        return rc;
    }
    o.is_index = strcmp(name_at(w, type), "index") == 0;
    if (!o.is_index && strcmp(name_at(w, type), "table") != 0) {
        return REPLICATION_EFORMAT;
    }
    o.name = name_at(w, name);
    o.sql = name_at(w, sql);
    if (o.name[0] == '\0' || o.sql[0] == '\0') {
        return REPLICATION_EFORMAT;
    }
    return w->v->object != NULL ? w->v->object(w->v->ctx, &o) : 0;
}

/* One row of t into values (room for count). */
static int row_read(struct walker *w,
                    const struct replication__snapshot_table *t,
                    struct engine_change_value *values, size_t count)
{
    size_t i;
    int rc = fixed_array(w, (uint32_t)count);

    for (i = 0; rc == 0 && i < count; i++) {
        rc = replication__mp_value(&w->mp, &values[i]);
    }
    if (rc == 0 && t->rowid && values[0].type != ENGINE_INTEGER) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc == 0 && w->v->row != NULL) {
        rc = w->v->row(w->v->ctx, t, values, count);
    }
    return rc;
}

/* The column names of a table into w->text, their offsets into *at. */
static int columns_read(struct walker *w, size_t **at, size_t *count)
{
    uint32_t n, i;
    int rc = replication__mp_array(&w->mp, &n);

    if (rc == 0 && (n == 0 || n > ENGINE_MAX_COLUMNS)) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        return rc;
    }
    *at = common_calloc(n, sizeof(**at));
    if (*at == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; rc == 0 && i < n; i++) {
        rc = name_read(w, &(*at)[i]);
    }
    *count = n;
    return rc;
}

/* The rows of t, each handed to the visitor. */
static int rows_read(struct walker *w,
                     const struct replication__snapshot_table *t)
{
    size_t width = t->column_count + (t->rowid ? 1 : 0), i;
    struct engine_change_value *values;
    int rc = 0;

    values = common_calloc(width, sizeof(*values));
    if (values == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; rc == 0 && i < t->row_count; i++) {
        rc = row_read(w, t, values, width);
    }
    common_free(values);
    return rc;
}

static int table_read(struct walker *w)
{
    struct replication__snapshot_table t = {0};
    const char **columns = NULL;
    size_t *at = NULL, name, i;
    uint32_t rows;
    int rc;

    w->text.size = 0;
    rc = fixed_array(w, 4);
    rc = rc == 0 ? name_read(w, &name) : rc;
    rc = rc == 0 ? columns_read(w, &at, &t.column_count) : rc;
    rc = rc == 0 ? flag_read(w, &t.rowid) : rc;
    rc = rc == 0 ? replication__mp_array(&w->mp, &rows) : rc;
    if (rc == 0) {
        columns = common_calloc(t.column_count, sizeof(*columns));
        rc = columns == NULL ? COMMON_ENOMEM : 0;
    }
    for (i = 0; rc == 0 && i < t.column_count; i++) {
        columns[i] = name_at(w, at[i]); /* the names are all in by now */
    }
    if (rc == 0) {
        t.name = name_at(w, name);
        t.columns = columns;
        t.row_count = rows;
        rc = w->v->table != NULL ? w->v->table(w->v->ctx, &t) : 0;
    }
    rc = rc == 0 ? rows_read(w, &t) : rc;
    common_free(columns);
    common_free(at);
    return rc;
}

static int exist_read(struct walker *w)
{
    struct replication__snapshot_exist e;
    size_t table;
    int rc;

    w->text.size = 0;
    rc = fixed_array(w, 5);
    rc = rc == 0 ? name_read(w, &table) : rc;
    rc = rc == 0 ? bin_read(w, 0, &e.pk, &e.pk_size) : rc;
    rc = rc == 0 ? flag_read(w, &e.alive) : rc;
    rc = rc == 0 ? replication__mp_uint(&w->mp, INT64_MAX, &e.hlc) : rc;
    rc = rc == 0 ? bin_read(w, REPLICATION__SITE_ID_BYTES, &e.site, NULL) : rc;
    if (rc != 0) {
        return rc;
    }
    e.table = name_at(w, table);
    return w->v->exist != NULL ? w->v->exist(w->v->ctx, &e) : 0;
}

static int cell_read(struct walker *w)
{
    struct replication__snapshot_cell c;
    size_t table, column;
    int rc;

    w->text.size = 0;
    rc = fixed_array(w, 7);
    rc = rc == 0 ? name_read(w, &table) : rc;
    rc = rc == 0 ? bin_read(w, 0, &c.pk, &c.pk_size) : rc;
    rc = rc == 0 ? name_read(w, &column) : rc;
    rc = rc == 0 ? replication__mp_uint(&w->mp, INT64_MAX, &c.hlc) : rc;
    rc = rc == 0 ? bin_read(w, REPLICATION__SITE_ID_BYTES, &c.site, NULL) : rc;
    rc = rc == 0 ? flag_read(w, &c.has_shadow) : rc;
    rc = rc == 0 ? replication__mp_value(&w->mp, &c.shadow) : rc;
    if (rc == 0 && !c.has_shadow && c.shadow.type != ENGINE_NULL) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        return rc;
    }
    c.table = name_at(w, table);
    c.column = name_at(w, column);
    return w->v->cell != NULL ? w->v->cell(w->v->ctx, &c) : 0;
}

static int column_read(struct walker *w)
{
    size_t table, column;
    int rc;

    w->text.size = 0;
    rc = fixed_array(w, 2);
    rc = rc == 0 ? name_read(w, &table) : rc;
    rc = rc == 0 ? name_read(w, &column) : rc;
    if (rc == 0 && w->v->column != NULL) {
        rc = w->v->column(w->v->ctx, name_at(w, table), name_at(w, column));
    }
    return rc;
}

static int kept_read(struct walker *w)
{
    const uint8_t *bytes;
    size_t size;
    int rc = bin_read(w, 0, &bytes, &size);

    if (rc == 0 && w->v->kept != NULL) {
        rc = w->v->kept(w->v->ctx, bytes, size);
    }
    return rc;
}

/* A part that is an array of elements read by one function. */
static int list_part(struct walker *w, int (*read)(struct walker *w))
{
    uint32_t n, i;
    int rc = replication__mp_array(&w->mp, &n);

    for (i = 0; rc == 0 && i < n; i++) {
        rc = read(w);
    }
    return rc;
}

static int part_read(struct walker *w, enum replication__snapshot_part part)
{
    switch (part) {
    case SNAPSHOT_SITE:
        return site_part(w);
    case SNAPSHOT_HEADS:
        return heads_part(w, false);
    case SNAPSHOT_FLOORS:
        return heads_part(w, true);
    case SNAPSHOT_SCHEMA:
        return list_part(w, object_read);
    case SNAPSHOT_TABLES:
        return list_part(w, table_read);
    case SNAPSHOT_EXIST:
        return list_part(w, exist_read);
    case SNAPSHOT_CELLS:
        return list_part(w, cell_read);
    case SNAPSHOT_COLUMNS:
        return list_part(w, column_read);
    default:
        ASSERT(part == SNAPSHOT_KEPT);
        return list_part(w, kept_read);
    }
}

int replication__snapshot_walk(const struct replication__snapshot_body *body,
                               const struct replication__snapshot_visit *v)
{
    struct walker w = {.mp = {body->data, body->size, 0}, .v = v, .body = body};
    int part;
    int rc;

    ASSERT(body != NULL);
    ASSERT(v != NULL);
    common_buf_init(&w.text, REPLICATION__SNAPSHOT_BODY_MAX);
    rc = fixed_array(&w, SNAPSHOT_PART_COUNT);
    for (part = 0; rc == 0 && part < SNAPSHOT_PART_COUNT; part++) {
        rc = part_read(&w, (enum replication__snapshot_part)part);
    }
    if (rc == 0 && w.mp.offset != w.mp.size) {
        rc = REPLICATION_EFORMAT; /* bytes after the body */
    }
    common_buf_close(&w.text);
    return rc;
}
