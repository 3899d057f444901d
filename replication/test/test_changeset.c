/* SPDX-License-Identifier: MIT
 *
 * test_changeset.c: the change-set codec (changeset_codec.h).
 *
 * Goal: whatever a change set holds comes back bit for bit, whole or in
 * chunks delivered in any order and repeated; and no damaged, truncated,
 * inconsistent or hostile input is ever accepted, crashes, or makes the
 * decoder allocate more than the limits allow. Method: seeded random
 * change sets (every value type and its edge values) compared field by
 * field after a round trip; every single-byte corruption and every
 * truncation of encoded sets; hand-made chunks around crafted bodies and
 * headers (a helper writes valid framing around any bytes); the failing
 * heap walked through every allocation.
 */
#include "common_test.h"

#include <math.h>
#include <string.h>

#include "changeset_codec.h"
#include "changeset_wire.h"
#include "replication.h"

#define BIG_CHUNK ((size_t)1 << 30)

/* ------------------------------------------------------------------------
 * Building change sets. The builder owns everything a set points at.
 * ------------------------------------------------------------------------ */

struct builder {
    struct replication__changeset cs;
    struct replication__table *tables;
    struct replication__record *records;
    void **owned; /* every other block, freed with the builder */
    size_t owned_count;
    size_t owned_capacity;
};

static void *builder_alloc(struct builder *b, size_t size)
{
    void *p = test_calloc(1, size == 0 ? 1 : size);

    if (b->owned_count == b->owned_capacity) {
        b->owned_capacity = b->owned_capacity * 2 + 16;
        b->owned = test_realloc(b->owned, b->owned_capacity * sizeof(void *));
    }
    b->owned[b->owned_count++] = p;
    return p;
}

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->owned_count; i++) {
        test_free(b->owned[i]);
    }
    test_free(b->owned);
    memset(b, 0, sizeof(*b));
}

static char *random_name(struct builder *b, struct common_test_rng *rng)
{
    size_t size = (size_t)common_test_rng_below(rng, 40);
    char *name = builder_alloc(b, size + 1);

    for (size_t i = 0; i < size; i++) {
        name[i] = (char)('a' + common_test_rng_below(rng, 26));
    }
    return name;
}

static const double edge_reals[] = {
    0.0,     -0.0,   1.0,      -3.0,      1e300,
    -1e-300, 5e-324, INFINITY, -INFINITY, 1.7976931348623157e308};
static const int64_t edge_ints[] = {
    0,         1,         -1,        127,          128,   -32,
    -33,       255,       256,       65535,        65536, INT32_MAX,
    INT32_MIN, INT64_MAX, INT64_MIN, INT64_MIN + 1};

static void random_bytes(struct builder *b, struct common_test_rng *rng,
                         struct engine_change_value *v, size_t size_max)
{
    size_t size = (size_t)common_test_rng_below(rng, size_max + 1);
    uint8_t *bytes;

    if (common_test_rng_below(rng, 8) == 0) {
        size = 0;
    }
    bytes = builder_alloc(b, size);
    for (size_t i = 0; i < size; i++) {
        /* Blobs get NULs often; text stays printable. */
        bytes[i] = v->type == ENGINE_BLOB
                       ? (uint8_t)common_test_rng_below(rng, 4)
                       : (uint8_t)(' ' + common_test_rng_below(rng, 90));
    }
    v->bytes = size == 0 ? NULL : bytes;
    v->size = size;
}

static void random_value(struct builder *b, struct common_test_rng *rng,
                         struct engine_change_value *v, size_t size_max)
{
    uint64_t pick = common_test_rng_below(rng, 5);
    size_t edges = sizeof(edge_ints) / sizeof(edge_ints[0]);
    size_t reals = sizeof(edge_reals) / sizeof(edge_reals[0]);

    memset(v, 0, sizeof(*v));
    v->type = (int)pick + 1;
    if (v->type == ENGINE_INTEGER) {
        v->integer = common_test_rng_below(rng, 2) == 0
                         ? edge_ints[common_test_rng_below(rng, edges)]
                         : (int64_t)common_test_rng_next(rng);
    } else if (v->type == ENGINE_FLOAT) {
        uint64_t bits = common_test_rng_next(rng);

        memcpy(&v->real, &bits, sizeof(bits));
        if (isnan(v->real) || common_test_rng_below(rng, 2) == 0) {
            v->real = edge_reals[common_test_rng_below(rng, reals)];
        }
    } else if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
        random_bytes(b, rng, v, size_max);
    }
}

static void random_record(struct builder *b, struct common_test_rng *rng,
                          struct replication__record *r, size_t size_max)
{
    const struct replication__changeset *cs = &b->cs;
    struct engine_change_value *key;

    r->op = (enum replication__op)(1 + common_test_rng_below(rng, 4));
    if (cs->table_count == 0 || r->op == REPLICATION__OP_SCHEMA) {
        r->op = REPLICATION__OP_SCHEMA;
        r->sql = random_name(b, rng);
        return;
    }
    r->table = (uint32_t)common_test_rng_below(rng, cs->table_count);
    if (r->op == REPLICATION__OP_SET &&
        cs->tables[r->table].column_count == 0) {
        r->op = REPLICATION__OP_ALIVE;
    }
    r->key_count = (size_t)common_test_rng_below(rng, 4);
    key = builder_alloc(b, r->key_count * sizeof(*key));
    for (size_t k = 0; k < r->key_count; k++) {
        random_value(b, rng, &key[k], 16);
    }
    r->key = key;
    if (r->op == REPLICATION__OP_SET) {
        r->column = (uint32_t)common_test_rng_below(
            rng, cs->tables[r->table].column_count);
        random_value(b, rng, &r->value, size_max);
    }
}

/* A random set of up to tables_max tables and records_max records whose
 * text and blob values are up to size_max bytes. */
static void random_set(struct builder *b, struct common_test_rng *rng,
                       size_t tables_max, size_t records_max, size_t size_max)
{
    struct replication__changeset *cs = &b->cs;

    memset(b, 0, sizeof(*b));
    for (size_t i = 0; i < sizeof(cs->origin); i++) {
        cs->origin[i] = (uint8_t)common_test_rng_next(rng);
    }
    cs->version = common_test_rng_next(rng);
    cs->hlc = common_test_rng_next(rng);
    cs->epoch = common_test_rng_next(rng);
    cs->schema_hash = common_test_rng_next(rng);
    cs->table_count = (size_t)common_test_rng_below(rng, tables_max + 1);
    b->tables = builder_alloc(b, cs->table_count * sizeof(*b->tables));
    for (size_t t = 0; t < cs->table_count; t++) {
        size_t n = (size_t)common_test_rng_below(rng, 12);
        const char **columns = builder_alloc(b, n * sizeof(*columns));

        for (size_t c = 0; c < n; c++) {
            columns[c] = random_name(b, rng);
        }
        b->tables[t].name = random_name(b, rng);
        b->tables[t].columns = columns;
        b->tables[t].column_count = n;
    }
    cs->tables = b->tables;
    cs->record_count = (size_t)common_test_rng_below(rng, records_max + 1);
    b->records = builder_alloc(b, cs->record_count * sizeof(*b->records));
    for (size_t i = 0; i < cs->record_count; i++) {
        random_record(b, rng, &b->records[i], size_max);
    }
    cs->records = b->records;
}

/* ------------------------------------------------------------------------
 * Comparing
 * ------------------------------------------------------------------------ */

static void assert_value_equal(const struct engine_change_value *a,
                               const struct engine_change_value *b)
{
    assert_int_equal(a->type, b->type);
    if (a->type == ENGINE_INTEGER) {
        assert_true(a->integer == b->integer);
    } else if (a->type == ENGINE_FLOAT) {
        assert_memory_equal(&a->real, &b->real, sizeof(double));
    } else if (a->type == ENGINE_TEXT || a->type == ENGINE_BLOB) {
        assert_int_equal(a->size, b->size);
        if (a->size > 0) {
            assert_memory_equal(a->bytes, b->bytes, a->size);
        }
    }
}

static void assert_record_equal(const struct replication__record *a,
                                const struct replication__record *b)
{
    assert_int_equal(a->op, b->op);
    if (a->op == REPLICATION__OP_SCHEMA) {
        assert_string_equal(a->sql, b->sql);
        return;
    }
    assert_int_equal(a->table, b->table);
    assert_int_equal(a->key_count, b->key_count);
    for (size_t k = 0; k < a->key_count; k++) {
        assert_value_equal(&a->key[k], &b->key[k]);
    }
    if (a->op == REPLICATION__OP_SET) {
        assert_int_equal(a->column, b->column);
        assert_value_equal(&a->value, &b->value);
    }
}

static void assert_set_equal(const struct replication__changeset *a,
                             const struct replication__changeset *b)
{
    assert_memory_equal(a->origin, b->origin, sizeof(a->origin));
    assert_true(a->version == b->version);
    assert_true(a->hlc == b->hlc);
    assert_true(a->epoch == b->epoch);
    assert_true(a->schema_hash == b->schema_hash);
    assert_int_equal(a->table_count, b->table_count);
    for (size_t t = 0; t < a->table_count; t++) {
        assert_string_equal(a->tables[t].name, b->tables[t].name);
        assert_int_equal(a->tables[t].column_count, b->tables[t].column_count);
        for (size_t c = 0; c < a->tables[t].column_count; c++) {
            assert_string_equal(a->tables[t].columns[c],
                                b->tables[t].columns[c]);
        }
    }
    assert_int_equal(a->record_count, b->record_count);
    for (size_t i = 0; i < a->record_count; i++) {
        assert_record_equal(&a->records[i], &b->records[i]);
    }
}

/* ------------------------------------------------------------------------
 * Encoding helpers
 * ------------------------------------------------------------------------ */

/* Encodes cs as one chunk into *out (initialised here). */
static void encode_one(const struct replication__changeset *cs,
                       struct common_buf *out, uint8_t *flags)
{
    struct replication__encoding enc;

    assert_int_equal(replication__changeset_encode(cs, BIG_CHUNK, &enc), 0);
    assert_int_equal(enc.chunk_count, 1);
    common_buf_init(out, SIZE_MAX);
    assert_int_equal(replication__encoding_chunk(&enc, 0, out), 0);
    if (flags != NULL) {
        *flags = enc.flags;
    }
    replication__encoding_close(&enc);
}

static void assert_round_trip(const struct replication__changeset *cs)
{
    struct replication__decoded *d = NULL;
    struct common_buf buf;

    encode_one(cs, &buf, NULL);
    assert_int_equal(replication__changeset_decode(buf.data, buf.size, &d), 0);
    assert_set_equal(cs, &d->set);
    replication__decoded_destroy(d);
    common_buf_close(&buf);
}

/* Writes valid framing around payload (chunk index of info's count, with
 * info's sizes) into out (initialised here). */
static void craft_chunk(const struct replication__chunk_info *info,
                        const uint8_t *piece, size_t piece_bytes,
                        struct common_buf *out)
{
    uint8_t h[REPLICATION__WIRE_HEADER_SIZE];
    uint64_t check;

    memcpy(h, REPLICATION__WIRE_MAGIC, 4);
    h[REPLICATION__WIRE_AT_VERSION] = REPLICATION__WIRE_VERSION;
    h[REPLICATION__WIRE_AT_FLAGS] = info->flags;
    memcpy(h + REPLICATION__WIRE_AT_ORIGIN, info->origin, 16);
    common_put_u64le(h + REPLICATION__WIRE_AT_SEQ, info->version);
    common_put_u64le(h + REPLICATION__WIRE_AT_HLC, info->hlc);
    common_put_u64le(h + REPLICATION__WIRE_AT_EPOCH, info->epoch);
    common_put_u64le(h + REPLICATION__WIRE_AT_SCHEMA, info->schema_hash);
    common_put_u32le(h + REPLICATION__WIRE_AT_INDEX, info->index);
    common_put_u32le(h + REPLICATION__WIRE_AT_COUNT, info->count);
    common_put_u64le(h + REPLICATION__WIRE_AT_PAYLOAD_SIZE, info->payload_size);
    common_put_u64le(h + REPLICATION__WIRE_AT_BODY_SIZE, info->body_size);
    common_put_u64le(h + REPLICATION__WIRE_AT_BODY_CHECK, info->body_check);
    common_put_u32le(h + REPLICATION__WIRE_AT_PIECE_SIZE, info->piece_size);
    check = common_checksum64(h, sizeof(h), REPLICATION__WIRE_CHECK_SEED);
    check = common_checksum64(piece, piece_bytes, check);
    common_buf_init(out, SIZE_MAX);
    assert_int_equal(common_buf_append(out, h, sizeof(h)), 0);
    assert_int_equal(common_buf_append(out, piece, piece_bytes), 0);
    assert_int_equal(common_buf_append_u64le(out, check), 0);
}

/* Decodes an uncompressed body wrapped in valid framing. */
static int decode_body(const uint8_t *body, size_t size)
{
    struct replication__chunk_info info = {0};
    struct replication__decoded *d = NULL;
    struct common_buf buf;
    int rc;

    info.count = 1;
    info.payload_size = size;
    info.body_size = size;
    info.body_check = common_checksum64(body, size, 0);
    info.piece_size = (uint32_t)size;
    craft_chunk(&info, body, size, &buf);
    rc = replication__changeset_decode(buf.data, buf.size, &d);
    replication__decoded_destroy(d);
    common_buf_close(&buf);
    return rc;
}

/* ------------------------------------------------------------------------
 * Round trips
 * ------------------------------------------------------------------------ */

static void changeset_round_trip_empty(void **state)
{
    struct replication__changeset cs = {.version = 1};

    (void)state;
    assert_round_trip(&cs);
}

static void changeset_round_trip_edge_values(void **state)
{
    static const char *columns[] = {"a", "", "a much longer column name"};
    static const struct replication__table tables[] = {
        {.name = "t", .columns = columns, .column_count = 3},
        {.name = "", .columns = NULL, .column_count = 0},
    };
    enum { N = 32 };
    struct engine_change_value values[N] = {{0}};
    struct replication__record records[N + 3] = {{0}};
    struct replication__changeset cs = {.tables = tables, .table_count = 2};
    size_t huge = (size_t)3 << 20;
    uint8_t *big = test_calloc(1, huge); /* zeros: embedded NULs */
    size_t n = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(edge_ints) / sizeof(edge_ints[0]); i++) {
        values[n++] = (struct engine_change_value){.type = ENGINE_INTEGER,
                                                   .integer = edge_ints[i]};
    }
    for (size_t i = 0; i < sizeof(edge_reals) / sizeof(edge_reals[0]); i++) {
        values[n++] = (struct engine_change_value){.type = ENGINE_FLOAT,
                                                   .real = edge_reals[i]};
    }
    values[n++] = (struct engine_change_value){.type = ENGINE_NULL};
    values[n++] = (struct engine_change_value){.type = ENGINE_TEXT};
    values[n++] = (struct engine_change_value){.type = ENGINE_BLOB};
    values[n++] = (struct engine_change_value){
        .type = ENGINE_BLOB, .bytes = "a\0b", .size = 3};
    values[n++] = (struct engine_change_value){
        .type = ENGINE_BLOB, .bytes = big, .size = huge};
    values[n++] = (struct engine_change_value){
        .type = ENGINE_TEXT, .bytes = big, .size = 70000};
    assert_true(n <= N);
    for (size_t i = 0; i < n; i++) {
        records[i] = (struct replication__record){.op = REPLICATION__OP_SET,
                                                  .table = 0,
                                                  .key = &values[i],
                                                  .key_count = 1,
                                                  .column = (uint32_t)(i % 3),
                                                  .value = values[i]};
    }
    records[n++] = (struct replication__record){.op = REPLICATION__OP_SCHEMA,
                                                .sql = "CREATE TABLE t(a, b)"};
    records[n++] = (struct replication__record){
        .op = REPLICATION__OP_DEAD, .table = 1, .key = values, .key_count = 3};
    records[n++] =
        (struct replication__record){.op = REPLICATION__OP_ALIVE, .table = 1};
    cs.records = records;
    cs.record_count = n;
    assert_round_trip(&cs);
    test_free(big);
}

static void changeset_round_trip_random(void **state)
{
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "changeset_round_trip_random");
    for (int i = 0; i < 300; i++) {
        struct builder b;

        random_set(&b, &rng, 1 + (size_t)(i % 40), (size_t)i * 3,
                   i % 10 == 0 ? 5000 : 40);
        assert_round_trip(&b.cs);
        builder_free(&b);
    }
}

static void changeset_nan_refused(void **state)
{
    struct engine_change_value nan_value = {.type = ENGINE_FLOAT, .real = NAN};
    struct replication__record record = {.op = REPLICATION__OP_DEAD,
                                         .table = 0,
                                         .key = &nan_value,
                                         .key_count = 1};
    struct replication__table table = {.name = "t"};
    struct replication__changeset cs = {.tables = &table,
                                        .table_count = 1,
                                        .records = &record,
                                        .record_count = 1};
    struct replication__encoding enc;

    (void)state;
    assert_int_equal(replication__changeset_encode(&cs, BIG_CHUNK, &enc),
                     REPLICATION_EFORMAT);
}

static const char *repetitive_columns[] = {"value"};
static const struct replication__table repetitive_table = {
    .name = "items", .columns = repetitive_columns, .column_count = 1};

/* n SET records of one short text into *cs; the caller frees *keys and
 * *records with test_free(). */
static void repetitive_set(size_t n, struct replication__changeset *cs,
                           struct engine_change_value **keys,
                           struct replication__record **records)
{
    *keys = test_calloc(n, sizeof(**keys));
    *records = test_calloc(n, sizeof(**records));
    for (size_t i = 0; i < n; i++) {
        (*keys)[i] = (struct engine_change_value){.type = ENGINE_INTEGER,
                                                  .integer = (int64_t)i};
        (*records)[i] = (struct replication__record){
            .op = REPLICATION__OP_SET,
            .key = &(*keys)[i],
            .key_count = 1,
            .value = {.type = ENGINE_TEXT, .bytes = "hello world", .size = 11}};
    }
    *cs = (struct replication__changeset){.tables = &repetitive_table,
                                          .table_count = 1,
                                          .records = *records,
                                          .record_count = n};
}

static void changeset_compresses_large_bodies(void **state)
{
    struct engine_change_value *keys;
    struct replication__record *records;
    struct replication__changeset cs;
    struct replication__encoding enc;
    uint8_t flags;
    struct common_buf buf;

    (void)state;
    repetitive_set(2000, &cs, &keys, &records);
    assert_int_equal(replication__changeset_encode(&cs, BIG_CHUNK, &enc), 0);
    assert_true((enc.flags & REPLICATION__WIRE_FLAG_LZ4) != 0);
    assert_true(enc.payload_size * 3 < enc.body_size);
    replication__encoding_close(&enc);
    encode_one(&cs, &buf, &flags);
    assert_true((flags & REPLICATION__WIRE_FLAG_LZ4) != 0);
    common_buf_close(&buf);
    assert_round_trip(&cs);
    /* Small bodies stay as they are. */
    cs.record_count = 10;
    assert_int_equal(replication__changeset_encode(&cs, BIG_CHUNK, &enc), 0);
    assert_int_equal(enc.flags, 0);
    replication__encoding_close(&enc);
    test_free(keys);
    test_free(records);
}

/* ------------------------------------------------------------------------
 * Chunks
 * ------------------------------------------------------------------------ */

static void shuffle(uint32_t *order, size_t count, struct common_test_rng *rng)
{
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)common_test_rng_below(rng, i);
        uint32_t t = order[i - 1];

        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Feeds enc's chunks in a random order with random duplicates; the set
 * must appear exactly when its last missing chunk arrives. */
static void feed_chunks(struct replication__chunks *r,
                        const struct replication__encoding *enc,
                        const struct replication__changeset *cs,
                        struct common_test_rng *rng)
{
    size_t count = enc->chunk_count * 2;
    uint32_t *order = test_calloc(count, sizeof(*order));
    bool *seen = test_calloc(enc->chunk_count, sizeof(*seen));
    size_t distinct = 0;
    bool done = false;

    for (size_t i = 0; i < count; i++) {
        order[i] =
            (uint32_t)(i < enc->chunk_count
                           ? i
                           : common_test_rng_below(rng, enc->chunk_count));
    }
    shuffle(order, count, rng);
    for (size_t i = 0; i < count && !done; i++) {
        struct replication__decoded *d = NULL;
        struct common_buf chunk;

        common_buf_init(&chunk, SIZE_MAX);
        assert_int_equal(replication__encoding_chunk(enc, order[i], &chunk), 0);
        assert_true(chunk.size <= 200);
        assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                         0);
        distinct += seen[order[i]] ? 0 : 1;
        seen[order[i]] = true;
        assert_true((d != NULL) == (distinct == enc->chunk_count));
        if (d != NULL) {
            assert_set_equal(cs, &d->set);
            replication__decoded_destroy(d);
            done = true;
        }
        common_buf_close(&chunk);
    }
    assert_true(done);
    test_free(order);
    test_free(seen);
}

static void changeset_chunks_any_order(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 24,
                                                .sets_max = 4};
    struct replication__chunks *r;
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "changeset_chunks_any_order");
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    for (int i = 0; i < 60; i++) {
        struct replication__encoding enc;
        struct builder b;

        random_set(&b, &rng, 6, (size_t)i * 10, i % 7 == 0 ? 3000 : 30);
        assert_int_equal(replication__changeset_encode(&b.cs, 200, &enc), 0);
        feed_chunks(r, &enc, &b.cs, &rng);
        assert_int_equal(replication__chunks_bytes(r), 0);
        replication__encoding_close(&enc);
        builder_free(&b);
    }
    replication__chunks_destroy(r);
}

/* A compressed payload cut into chunks comes back too; one of its chunks
 * alone is not a change set. */
static void changeset_chunks_compressed(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 20,
                                                .sets_max = 1};
    struct engine_change_value *keys;
    struct replication__record *records;
    struct replication__decoded *d = NULL;
    struct replication__changeset cs;
    struct replication__encoding enc;
    struct replication__chunks *r;
    struct common_test_rng rng;
    struct common_buf chunk;

    (void)state;
    common_test_rng_seed(&rng, "changeset_chunks_compressed");
    repetitive_set(3000, &cs, &keys, &records);
    assert_int_equal(replication__changeset_encode(&cs, 200, &enc), 0);
    assert_true((enc.flags & REPLICATION__WIRE_FLAG_LZ4) != 0);
    assert_true(enc.chunk_count > 2);
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    feed_chunks(r, &enc, &cs, &rng);
    common_buf_init(&chunk, SIZE_MAX);
    assert_int_equal(replication__encoding_chunk(&enc, 1, &chunk), 0);
    assert_int_equal(replication__changeset_decode(chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    common_buf_close(&chunk);
    replication__chunks_destroy(r);
    replication__encoding_close(&enc);
    test_free(keys);
    test_free(records);
}

/* Two different sets under one (origin, version), cut alike: chunks of
 * the second do not fit the first's. */
static void changeset_chunks_inconsistent(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 20,
                                                .sets_max = 2};
    struct replication__chunks *r;
    struct replication__decoded *d = NULL;
    struct replication__encoding a;
    struct replication__encoding b;
    struct common_test_rng rng = {.state = 7};
    struct builder ba;
    struct builder bb;
    struct common_buf chunk;

    (void)state;
    random_set(&ba, &rng, 3, 50, 30);
    while (ba.cs.record_count < 30) {
        builder_free(&ba);
        random_set(&ba, &rng, 3, 50, 30);
    }
    random_set(&bb, &rng, 3, 50, 30);
    bb.cs.version = ba.cs.version;
    memcpy(bb.cs.origin, ba.cs.origin, sizeof(ba.cs.origin));
    assert_int_equal(replication__changeset_encode(&ba.cs, 150, &a), 0);
    assert_int_equal(replication__changeset_encode(&bb.cs, 150, &b), 0);
    assert_true(a.chunk_count > 2);
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    common_buf_init(&chunk, SIZE_MAX);
    assert_int_equal(replication__encoding_chunk(&a, 0, &chunk), 0);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d), 0);
    common_buf_truncate(&chunk, 0);
    assert_int_equal(replication__encoding_chunk(&b, 1, &chunk), 0);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    assert_null(d);
    /* The set in progress survives: a's own chunks still complete it. */
    for (uint32_t i = 1; i < a.chunk_count; i++) {
        common_buf_truncate(&chunk, 0);
        assert_int_equal(replication__encoding_chunk(&a, i, &chunk), 0);
        assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                         0);
    }
    assert_non_null(d);
    assert_set_equal(&ba.cs, &d->set);
    replication__decoded_destroy(d);
    common_buf_close(&chunk);
    replication__chunks_destroy(r);
    replication__encoding_close(&a);
    replication__encoding_close(&b);
    builder_free(&ba);
    builder_free(&bb);
}

/* A duplicate chunk whose bytes differ from the first copy (framing and
 * checksum valid) is refused. */
static void changeset_chunks_duplicate_differs(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 20,
                                                .sets_max = 1};
    struct replication__chunk_info info = {
        .count = 2, .payload_size = 20, .body_size = 20, .piece_size = 10};
    uint8_t piece[10] = {1, 2, 3};
    struct replication__decoded *d = NULL;
    struct replication__chunks *r;
    struct common_buf chunk;

    (void)state;
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d), 0);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d), 0);
    common_buf_close(&chunk);
    piece[0] = 9;
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    common_buf_close(&chunk);
    /* The second chunk completes the set, whose body is not msgpack. */
    info.index = 1;
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    assert_int_equal(replication__chunks_bytes(r), 0);
    common_buf_close(&chunk);
    replication__chunks_destroy(r);
}

/* The schema hash is part of a set's identity on the wire: it sits at its
 * documented offset, and a chunk whose hash differs from its set's first
 * chunk is refused like any other header field. */
static void changeset_chunks_schema_hash_differs(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 20,
                                                .sets_max = 1};
    struct replication__chunk_info info = {.count = 2,
                                           .payload_size = 20,
                                           .body_size = 20,
                                           .piece_size = 10,
                                           .schema_hash = 0x1122334455667788};
    struct replication__chunk_info peeked;
    uint8_t piece[10] = {1, 2, 3};
    struct replication__decoded *d = NULL;
    struct replication__chunks *r;
    struct common_buf chunk;

    (void)state;
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(common_get_u64le(chunk.data + 46), info.schema_hash);
    assert_int_equal(replication__chunk_peek(chunk.data, chunk.size, &peeked),
                     0);
    assert_int_equal(peeked.schema_hash, info.schema_hash);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d), 0);
    common_buf_close(&chunk);
    info.index = 1;
    info.schema_hash++;
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    assert_null(d);
    assert_int_equal(replication__chunks_bytes(r), 20);
    common_buf_close(&chunk);
    replication__chunks_destroy(r);
}

/* Sizes a hostile header claims cost nothing until they pass the limits. */
static void changeset_chunks_bounded(void **state)
{
    struct replication__chunks_config config = {.bytes_max = 1000,
                                                .sets_max = 2};
    struct replication__chunk_info info = {
        .count = 2, .payload_size = 1200, .body_size = 1200, .piece_size = 600};
    uint8_t piece[600] = {0};
    struct replication__decoded *d = NULL;
    struct replication__chunks *r;
    struct common_buf chunk;

    (void)state;
    assert_int_equal(replication__chunks_create(&config, &r), 0);
    craft_chunk(&info, piece, sizeof(piece), &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     COMMON_ETOOBIG);
    common_buf_close(&chunk);
    /* Past the body limit: refused as malformed, whatever the budget. */
    info.payload_size = (uint64_t)1 << 40;
    info.body_size = info.payload_size;
    info.piece_size = UINT32_MAX;
    info.count = 256;
    craft_chunk(&info, piece, 10, &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    common_buf_close(&chunk);
    /* Three sets in progress where two may be. */
    info.payload_size = 20;
    info.body_size = 20;
    info.piece_size = 10;
    info.count = 2;
    for (uint64_t v = 1; v <= 3; v++) {
        info.version = v;
        craft_chunk(&info, piece, 10, &chunk);
        assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                         v <= 2 ? 0 : COMMON_ETOOBIG);
        common_buf_close(&chunk);
    }
    assert_int_equal(replication__chunks_bytes(r), 40);
    replication__chunks_drop(r, info.origin, 1);
    assert_int_equal(replication__chunks_bytes(r), 20);
    /* A tiny lz4 payload claiming a huge body is refused before inflating. */
    info.version = 9;
    info.flags = REPLICATION__WIRE_FLAG_LZ4;
    info.count = 1;
    info.payload_size = 10;
    info.body_size = (uint64_t)100 << 20;
    craft_chunk(&info, piece, 10, &chunk);
    assert_int_equal(replication__chunks_add(r, chunk.data, chunk.size, &d),
                     REPLICATION_EFORMAT);
    common_buf_close(&chunk);
    replication__chunks_destroy(r);
}

/* ------------------------------------------------------------------------
 * Damage
 * ------------------------------------------------------------------------ */

static void assert_every_corruption_refused(const struct common_buf *buf)
{
    uint8_t *copy = test_malloc(buf->size);

    for (size_t i = 0; i < buf->size; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            struct replication__decoded *d = NULL;

            memcpy(copy, buf->data, buf->size);
            copy[i] ^= (uint8_t)(1u << bit);
            assert_true(replication__changeset_decode(copy, buf->size, &d) < 0);
            assert_null(d);
        }
    }
    for (size_t size = 0; size < buf->size; size++) {
        struct replication__decoded *d = NULL;

        memcpy(copy, buf->data, size);
        assert_true(replication__changeset_decode(copy, size, &d) < 0);
    }
    test_free(copy);
}

static void changeset_corruption_refused(void **state)
{
    struct engine_change_value *keys;
    struct replication__record *records;
    struct replication__changeset cs;
    struct common_test_rng rng;
    struct common_buf buf;
    uint8_t flags;

    (void)state;
    common_test_rng_seed(&rng, "changeset_corruption_refused");
    for (int i = 0; i < 4; i++) {
        struct builder b;

        random_set(&b, &rng, 4, 40, 20);
        encode_one(&b.cs, &buf, NULL);
        assert_every_corruption_refused(&buf);
        common_buf_close(&buf);
        builder_free(&b);
    }
    repetitive_set(100, &cs, &keys, &records);
    encode_one(&cs, &buf, &flags);
    assert_true((flags & REPLICATION__WIRE_FLAG_LZ4) != 0);
    assert_every_corruption_refused(&buf);
    common_buf_close(&buf);
    test_free(keys);
    test_free(records);
}

static void changeset_wrong_version_refused(void **state)
{
    struct replication__changeset cs = {.version = 3};
    struct replication__decoded *d = NULL;
    struct replication__chunk_info info;
    struct common_buf buf;

    (void)state;
    encode_one(&cs, &buf, NULL);
    buf.data[REPLICATION__WIRE_AT_VERSION] = 2;
    assert_int_equal(replication__changeset_decode(buf.data, buf.size, &d),
                     REPLICATION_EVERSION);
    assert_int_equal(replication__chunk_peek(buf.data, buf.size, &info),
                     REPLICATION_EVERSION);
    buf.data[0] = 'X';
    assert_int_equal(replication__changeset_decode(buf.data, buf.size, &d),
                     REPLICATION_EFORMAT);
    common_buf_close(&buf);
}

/* Bodies a correct encoder never writes, in valid framing. */
static void changeset_malformed_bodies_refused(void **state)
{
    static const struct {
        const char *bytes;
        size_t size;
        int rc;
    } cases[] = {
#define BODY(s, rc) {s, sizeof(s) - 1, rc}
        BODY("\x92\x90\x90", 0),                       /* empty: fine */
        BODY("\x92\x90\x90\x00", REPLICATION_EFORMAT), /* trailing */
        BODY("\x93\x90\x90\xc0", REPLICATION_EFORMAT), /* 3 elements */
        BODY("\x92\x90\x91\x92\x04\xa1x", 0),          /* SCHEMA "x" */
        BODY("\x92\x90\x91\x92\x04\xa2x\x00", REPLICATION_EFORMAT), /* NUL */
        BODY("\x92\x90\x91\x92\x05\xa1x", REPLICATION_EFORMAT),     /* op 5 */
        BODY("\x92\x90\x91\x92\x00\xa1x", REPLICATION_EFORMAT),     /* op 0 */
        BODY("\x92\x90\x91\x93\x01\x00\x90", REPLICATION_EFORMAT),  /* no t */
        /* One table "t" with column "c", then records. */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x93\x01\x00\x90",
             0),
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x93\x01\x01\x90",
             REPLICATION_EFORMAT), /* table 1 of 1 */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xcb"
             "\x7f\xf8\x00\x00\x00\x00\x00\x00",
             REPLICATION_EFORMAT), /* NaN */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xca"
             "\x00\x00\x00\x00",
             REPLICATION_EFORMAT), /* float 32 */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xcf"
             "\x80\x00\x00\x00\x00\x00\x00\x00",
             REPLICATION_EFORMAT), /* 2^63 */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xd3"
             "\x80\x00\x00\x00\x00\x00\x00\x00",
             0), /* INT64_MIN */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x01\xc0",
             REPLICATION_EFORMAT), /* column 1 of 1 */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xc3",
             REPLICATION_EFORMAT), /* true */
        BODY("\x92\x91\x92\xa1t\x91\xa1"
             "c\x91\x95\x03\x00\x90\x00\xc4\x05",
             REPLICATION_EFORMAT), /* bin past the end */
        BODY("\x92\x90\xdd\xff\xff\xff\xff", REPLICATION_EFORMAT), /* 4G */
        BODY("\x92\x90\x91\x93\x01\x00\xdd\x7f\xff\xff\xff",
             REPLICATION_EFORMAT), /* a key of 2^31 values */
#undef BODY
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = decode_body((const uint8_t *)cases[i].bytes, cases[i].size);

        if (rc != cases[i].rc) {
            print_error("case %zu: rc=%d, expected %d\n", i, rc, cases[i].rc);
        }
        assert_int_equal(rc, cases[i].rc);
    }
}

/* ------------------------------------------------------------------------
 * Out of memory: every allocation of encode, decode and reassembly fails
 * in turn; each failure is reported and leaks nothing.
 * ------------------------------------------------------------------------ */

static int run_all(const struct replication__changeset *cs)
{
    struct replication__chunks_config config = {.bytes_max = 1 << 20,
                                                .sets_max = 2};
    struct replication__chunks *r = NULL;
    struct replication__decoded *d = NULL;
    struct replication__encoding enc = {0};
    struct common_buf chunk;
    int rc;

    common_buf_init(&chunk, SIZE_MAX);
    rc = replication__changeset_encode(cs, 300, &enc);
    rc = rc != 0 ? rc : replication__chunks_create(&config, &r);
    for (uint32_t i = 0; rc == 0 && i < enc.chunk_count; i++) {
        common_buf_truncate(&chunk, 0);
        rc = replication__encoding_chunk(&enc, i, &chunk);
        rc = rc != 0 ? rc
                     : replication__chunks_add(r, chunk.data, chunk.size, &d);
    }
    if (rc == 0) {
        assert_non_null(d);
        assert_set_equal(cs, &d->set);
    }
    replication__decoded_destroy(d);
    replication__chunks_destroy(r);
    replication__encoding_close(&enc);
    common_buf_close(&chunk);
    return rc;
}

static void changeset_out_of_memory(void **state)
{
    struct common_test_rng rng = {.state = 11};
    struct builder b;
    int rc = COMMON_ENOMEM;

    (void)state;
    random_set(&b, &rng, 4, 60, 2000);
    for (uint64_t at = 1; rc != 0; at++) {
        struct common_heap_fault fault;
        struct common_heap heap;

        common_heap_fault_init(&fault, at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = run_all(&b.cs);
        common_test_install();
        assert_true(rc == 0 || rc == COMMON_ENOMEM);
        assert_true(at < 10000);
    }
    builder_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(changeset_round_trip_empty),
        cmocka_unit_test(changeset_round_trip_edge_values),
        cmocka_unit_test(changeset_round_trip_random),
        cmocka_unit_test(changeset_nan_refused),
        cmocka_unit_test(changeset_compresses_large_bodies),
        cmocka_unit_test(changeset_chunks_any_order),
        cmocka_unit_test(changeset_chunks_compressed),
        cmocka_unit_test(changeset_chunks_inconsistent),
        cmocka_unit_test(changeset_chunks_duplicate_differs),
        cmocka_unit_test(changeset_chunks_schema_hash_differs),
        cmocka_unit_test(changeset_chunks_bounded),
        cmocka_unit_test(changeset_corruption_refused),
        cmocka_unit_test(changeset_wrong_version_refused),
        cmocka_unit_test(changeset_malformed_bodies_refused),
        cmocka_unit_test(changeset_out_of_memory),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
