/* SPDX-License-Identifier: MIT
 *
 * changeset_decode.c: a checked payload back to a change set, in memory the
 * decoded set owns (changeset_codec.h).
 *
 * The payload is decompressed (or copied) into a body buffer the decoded
 * set keeps, so TEXT and BLOB values point into it without another copy;
 * tables, records, keys and the NUL-terminated names live in a small
 * arena of blocks freed whole. Every element count is checked against the
 * bytes left before the array for it is allocated (changeset_msgpack.c),
 * so what a body can make us allocate is a fixed multiple of its size:
 * a declared array of records costs sizeof(struct replication__record)
 * per byte left, its keys sizeof(struct engine_change_value) per byte
 * they take, under 150 bytes per body byte in all.
 */
#include "changeset_codec.h"

#include <lz4.h>
#include <stdalign.h>
#include <string.h>

#include "changeset_wire.h"
#include "replication.h"

#define ARENA_BLOCK_MIN ((size_t)16 << 10)

struct arena_block {
    struct arena_block *next; /* the block allocated before this one */
    size_t size;              /* bytes at data */
    size_t used;              /* bytes handed out */
    alignas(max_align_t) uint8_t data[];
};

struct replication__decoded_mem {
    uint8_t *body;              /* owned: the uncompressed body */
    struct arena_block *blocks; /* owned: newest first */
};

/* size bytes aligned for any type from mem's arena; NULL when out of
 * memory. size 0 gives a valid non-NULL pointer. */
static void *arena_alloc(struct replication__decoded_mem *mem, size_t size)
{
    size_t align = alignof(max_align_t);
    size_t need = (size + align - 1) / align * align;
    struct arena_block *b = mem->blocks;

    if (need < size) {
        return NULL;
    }
    if (b == NULL || b->size - b->used < need) {
        size_t block = need > ARENA_BLOCK_MIN ? need : ARENA_BLOCK_MIN;

        if (block > SIZE_MAX - sizeof(*b)) {
            return NULL;
        }
        b = common_malloc(sizeof(*b) + block);
        if (b == NULL) {
            return NULL;
        }
        b->next = mem->blocks;
        b->size = block;
        b->used = 0;
        mem->blocks = b;
    }
    b->used += need;
    return b->data + b->used - need;
}

void replication__decoded_destroy(struct replication__decoded *decoded)
{
    if (decoded == NULL) {
        return;
    }
    if (decoded->mem != NULL) {
        struct arena_block *b = decoded->mem->blocks;

        while (b != NULL) {
            struct arena_block *next = b->next;

            common_free(b);
            b = next;
        }
        common_free(decoded->mem->body);
        common_free(decoded->mem);
    }
    common_free(decoded);
}

/* A str as a NUL-terminated copy in the arena; one holding a NUL is
 * refused (it would read as a shorter name). */
static int decode_name(struct replication__mp *mp,
                       struct replication__decoded_mem *mem, const char **out)
{
    const uint8_t *bytes;
    uint32_t size;
    char *name;
    int rc = replication__mp_str(mp, &bytes, &size);

    if (rc != 0) {
        return rc;
    }
    if (memchr(bytes, 0, size) != NULL) {
        return REPLICATION_EFORMAT;
    }
    name = arena_alloc(mem, (size_t)size + 1);
    if (name == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(name, bytes, size);
    name[size] = '\0';
    *out = name;
    return 0;
}

static int decode_table(struct replication__mp *mp,
                        struct replication__decoded_mem *mem,
                        struct replication__table *out)
{
    const char **columns;
    uint32_t count;
    int rc = replication__mp_array(mp, &count);

    if (rc == 0 && count != 2) {
        rc = REPLICATION_EFORMAT;
    }
    rc = rc != 0 ? rc : decode_name(mp, mem, &out->name);
    rc = rc != 0 ? rc : replication__mp_array(mp, &count);
    if (rc != 0) {
        return rc;
    }
    columns = arena_alloc(mem, (size_t)count * sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t c = 0; rc == 0 && c < count; c++) {
        rc = decode_name(mp, mem, &columns[c]);
    }
    out->columns = columns;
    out->column_count = count;
    return rc;
}

static int decode_tables(struct replication__mp *mp,
                         struct replication__decoded_mem *mem,
                         struct replication__changeset *set)
{
    struct replication__table *tables;
    uint32_t count;
    int rc = replication__mp_array(mp, &count);

    if (rc != 0) {
        return rc;
    }
    tables = arena_alloc(mem, (size_t)count * sizeof(*tables));
    if (tables == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t t = 0; rc == 0 && t < count; t++) {
        rc = decode_table(mp, mem, &tables[t]);
    }
    set->tables = tables;
    set->table_count = count;
    return rc;
}

static int decode_key(struct replication__mp *mp,
                      struct replication__decoded_mem *mem,
                      struct replication__record *r)
{
    struct engine_change_value *key;
    uint32_t count;
    int rc = replication__mp_array(mp, &count);

    if (rc != 0) {
        return rc;
    }
    key = arena_alloc(mem, (size_t)count * sizeof(*key));
    if (key == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t k = 0; rc == 0 && k < count; k++) {
        rc = replication__mp_value(mp, &key[k]);
    }
    r->key = key;
    r->key_count = count;
    return rc;
}

/* The fields after op of a row record (ALIVE, DEAD, SET) with fields
 * elements in all. */
static int decode_row(struct replication__mp *mp,
                      struct replication__decoded_mem *mem,
                      const struct replication__changeset *set, uint32_t fields,
                      struct replication__record *r)
{
    uint64_t v = 0;
    int rc;

    if (fields != (r->op == REPLICATION__OP_SET ? 5u : 3u) ||
        set->table_count == 0) {
        return REPLICATION_EFORMAT;
    }
    rc = replication__mp_uint(mp, set->table_count - 1, &v);
    r->table = (uint32_t)v;
    rc = rc != 0 ? rc : decode_key(mp, mem, r);
    if (rc != 0 || r->op != REPLICATION__OP_SET) {
        return rc;
    }
    if (set->tables[r->table].column_count == 0) {
        return REPLICATION_EFORMAT;
    }
    rc = replication__mp_uint(mp, set->tables[r->table].column_count - 1, &v);
    r->column = (uint32_t)v;
    return rc != 0 ? rc : replication__mp_value(mp, &r->value);
}

static int decode_record(struct replication__mp *mp,
                         struct replication__decoded_mem *mem,
                         const struct replication__changeset *set,
                         struct replication__record *r)
{
    uint32_t fields;
    uint64_t op;
    int rc = replication__mp_array(mp, &fields);

    rc = rc != 0 ? rc : replication__mp_uint(mp, REPLICATION__OP_SCHEMA, &op);
    if (rc != 0 || op == 0) {
        return rc != 0 ? rc : REPLICATION_EFORMAT;
    }
    memset(r, 0, sizeof(*r));
    r->op = (enum replication__op)op;
    r->value.type = ENGINE_NULL;
    if (r->op != REPLICATION__OP_SCHEMA) {
        return decode_row(mp, mem, set, fields, r);
    }
    if (fields != 2) {
        return REPLICATION_EFORMAT;
    }
    return decode_name(mp, mem, &r->sql);
}

static int decode_body(struct replication__mp *mp,
                       struct replication__decoded_mem *mem,
                       struct replication__changeset *set)
{
    struct replication__record *records;
    uint32_t count;
    int rc = replication__mp_array(mp, &count);

    if (rc == 0 && count != 2) {
        rc = REPLICATION_EFORMAT;
    }
    rc = rc != 0 ? rc : decode_tables(mp, mem, set);
    rc = rc != 0 ? rc : replication__mp_array(mp, &count);
    if (rc != 0) {
        return rc;
    }
    records = arena_alloc(mem, (size_t)count * sizeof(*records));
    if (records == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        rc = decode_record(mp, mem, set, &records[i]);
    }
    set->records = records;
    set->record_count = count;
    if (rc == 0 && mp->offset != mp->size) {
        rc = REPLICATION_EFORMAT; /* trailing bytes */
    }
    return rc;
}

/* Fills mem->body with the uncompressed body, checked against its sum. */
static int inflate_body(const struct replication__chunk_info *info,
                        const uint8_t *payload,
                        struct replication__decoded_mem *mem)
{
    size_t size = (size_t)info->body_size;

    mem->body = common_malloc(size);
    if (mem->body == NULL) {
        return COMMON_ENOMEM;
    }
    if ((info->flags & REPLICATION__WIRE_FLAG_LZ4) == 0) {
        memcpy(mem->body, payload, size);
    } else if (LZ4_decompress_safe((const char *)payload, (char *)mem->body,
                                   (int)info->payload_size,
                                   (int)size) != (int)size) {
        return REPLICATION_EFORMAT;
    }
    if (common_checksum64(mem->body, size, 0) != info->body_check) {
        return REPLICATION_EFORMAT;
    }
    return 0;
}

int replication__payload_decode(const struct replication__chunk_info *info,
                                const uint8_t *payload,
                                struct replication__decoded **out)
{
    struct replication__decoded *d;
    struct replication__mp mp;
    int rc = COMMON_ENOMEM;

    ASSERT(info != NULL);
    ASSERT(payload != NULL);
    ASSERT(out != NULL);
    ASSERT(info->body_size <= REPLICATION__CHANGESET_BODY_MAX);
    d = common_calloc(1, sizeof(*d));
    if (d == NULL) {
        return COMMON_ENOMEM;
    }
    d->mem = common_calloc(1, sizeof(*d->mem));
    if (d->mem == NULL) {
        goto err_after_decoded;
    }
    rc = inflate_body(info, payload, d->mem);
    if (rc != 0) {
        goto err_after_decoded;
    }
    mp.data = d->mem->body;
    mp.size = (size_t)info->body_size;
    mp.offset = 0;
    rc = decode_body(&mp, d->mem, &d->set);
    if (rc != 0) {
        goto err_after_decoded;
    }
    memcpy(d->set.origin, info->origin, sizeof(d->set.origin));
    d->set.version = info->version;
    d->set.hlc = info->hlc;
    d->set.epoch = info->epoch;
    d->set.schema_hash = info->schema_hash;
    *out = d;
    return 0;

err_after_decoded:
    replication__decoded_destroy(d);
    return rc;
}
