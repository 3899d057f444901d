/* SPDX-License-Identifier: MIT
 *
 * crdt_build.c: memory for change sets the crdt layer owns: an arena that
 * is freed whole (style guide: "replication one arena per batch"), a
 * builder that assembles a struct replication__changeset in it from
 * borrowed pieces (the commit hook's changes, log rows, a peer's change
 * set), and deep copies built with it.
 *
 * A copy is the builder itself: its first member is the change set, so
 * replication__crdt_changeset_free() finds the builder from the pointer it
 * handed out.
 */
#include <string.h>

#include "crdt_int.h"

#define ARENA_CHUNK_SIZE 8192
#define ARENA_ALIGN 8

struct replication__arena_chunk {
    struct replication__arena_chunk *next;
    size_t used;
    size_t size;
    _Alignas(ARENA_ALIGN) unsigned char bytes[];
};

void *replication__arena_alloc(struct replication__arena *arena, size_t size)
{
    struct replication__arena_chunk *chunk = arena->head;
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    size_t chunk_size;
    void *p;

    if (rounded < size) {
        return NULL;
    }
    if (chunk == NULL || chunk->size - chunk->used < rounded) {
        chunk_size = rounded > ARENA_CHUNK_SIZE ? rounded : ARENA_CHUNK_SIZE;
        chunk = common_malloc(sizeof(*chunk) + chunk_size);
        if (chunk == NULL) {
            return NULL;
        }
        chunk->next = arena->head;
        chunk->used = 0;
        chunk->size = chunk_size;
        arena->head = chunk;
    }
    p = chunk->bytes + chunk->used;
    chunk->used += rounded;
    return p;
}

void replication__arena_close(struct replication__arena *arena)
{
    struct replication__arena_chunk *chunk = arena->head;

    while (chunk != NULL) {
        struct replication__arena_chunk *next = chunk->next;
        common_free(chunk);
        chunk = next;
    }
    arena->head = NULL;
}

static char *arena_strndup(struct replication__arena *arena, const char *s,
                           size_t size)
{
    char *copy = replication__arena_alloc(arena, size + 1);

    if (copy != NULL) {
        memcpy(copy, s, size);
        copy[size] = '\0';
    }
    return copy;
}

void replication__crdt_builder_init(struct replication__crdt_builder *b)
{
    memset(b, 0, sizeof(*b));
}

void replication__crdt_builder_close(struct replication__crdt_builder *b)
{
    replication__arena_close(&b->arena);
    common_free(b->tables);
    common_free(b->records);
    memset(b, 0, sizeof(*b));
}

int replication__crdt_builder_table(struct replication__crdt_builder *b,
                                    const char *name, size_t name_size,
                                    uint32_t *index)
{
    struct replication__table *grown;
    size_t i;
    char *copy;

    for (i = 0; i < b->cs.table_count; i++) {
        if (strlen(b->tables[i].name) == name_size &&
            memcmp(b->tables[i].name, name, name_size) == 0) {
            *index = (uint32_t)i;
            return 0;
        }
    }
    if (b->cs.table_count == b->table_capacity) {
        size_t capacity = b->table_capacity ? 2 * b->table_capacity : 4;
        grown = common_realloc_array(b->tables, capacity, sizeof(*grown));
        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        b->tables = grown;
        b->table_capacity = capacity;
        b->cs.tables = grown;
    }
    copy = arena_strndup(&b->arena, name, name_size);
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    memset(&b->tables[i], 0, sizeof(b->tables[i]));
    b->tables[i].name = copy;
    b->cs.table_count++;
    *index = (uint32_t)i;
    return 0;
}

int replication__crdt_builder_columns(struct replication__crdt_builder *b,
                                      uint32_t index,
                                      const char *const *columns, size_t count)
{
    const char **copy;
    size_t i;

    ASSERT(index < b->cs.table_count);
    if (count > SIZE_MAX / sizeof(*copy)) {
        return COMMON_ENOMEM;
    }
    copy = replication__arena_alloc(&b->arena, count * sizeof(*copy) + 1);
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < count; i++) {
        copy[i] = arena_strndup(&b->arena, columns[i], strlen(columns[i]));
        if (copy[i] == NULL) {
            return COMMON_ENOMEM;
        }
    }
    b->tables[index].columns = copy;
    b->tables[index].column_count = count;
    return 0;
}

int replication__crdt_value_copy(struct replication__arena *arena,
                                 const struct engine_change_value *in,
                                 struct engine_change_value *out)
{
    void *bytes;

    *out = *in;
    if (in->type != ENGINE_TEXT && in->type != ENGINE_BLOB) {
        out->bytes = NULL;
        out->size = 0;
        return 0;
    }
    if (in->size == 0) {
        out->bytes = NULL;
        return 0;
    }
    bytes = replication__arena_alloc(arena, in->size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(bytes, in->bytes, in->size);
    out->bytes = bytes;
    return 0;
}

static int grow_records(struct replication__crdt_builder *b)
{
    struct replication__record *grown;
    size_t capacity;

    if (b->cs.record_count < b->record_capacity) {
        return 0;
    }
    capacity = b->record_capacity ? 2 * b->record_capacity : 16;
    grown = common_realloc_array(b->records, capacity, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    b->records = grown;
    b->record_capacity = capacity;
    b->cs.records = grown;
    return 0;
}

int replication__crdt_builder_add(struct replication__crdt_builder *b,
                                  const struct replication__record *rec)
{
    struct replication__record *out;
    struct engine_change_value *key = NULL;
    size_t i;
    int rc;

    rc = grow_records(b);
    if (rc != 0) {
        return rc;
    }
    out = &b->records[b->cs.record_count];
    *out = *rec;
    if (rec->key_count > 0) {
        key =
            replication__arena_alloc(&b->arena, rec->key_count * sizeof(*key));
        if (key == NULL) {
            return COMMON_ENOMEM;
        }
    }
    for (i = 0; i < rec->key_count; i++) {
        rc = replication__crdt_value_copy(&b->arena, &rec->key[i], &key[i]);
        if (rc != 0) {
            return rc;
        }
    }
    out->key = key;
    rc = replication__crdt_value_copy(&b->arena, &rec->value, &out->value);
    if (rc != 0) {
        return rc;
    }
    if (rec->sql != NULL) {
        out->sql = arena_strndup(&b->arena, rec->sql, strlen(rec->sql));
        if (out->sql == NULL) {
            return COMMON_ENOMEM;
        }
    }
    b->cs.record_count++;
    return 0;
}

static int clone_into(struct replication__crdt_builder *b,
                      const struct replication__changeset *src)
{
    uint32_t index;
    size_t i;
    int rc;

    for (i = 0; i < src->table_count; i++) {
        const struct replication__table *t = &src->tables[i];
        rc = replication__crdt_builder_table(b, t->name, strlen(t->name),
                                             &index);
        if (rc == 0) {
            rc = replication__crdt_builder_columns(b, index, t->columns,
                                                   t->column_count);
        }
        if (rc != 0) {
            return rc;
        }
    }
    for (i = 0; i < src->record_count; i++) {
        rc = replication__crdt_builder_add(b, &src->records[i]);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int replication__crdt_changeset_clone(const struct replication__changeset *src,
                                      struct replication__changeset **out)
{
    struct replication__crdt_builder *b = common_malloc(sizeof(*b));
    int rc;

    if (b == NULL) {
        return COMMON_ENOMEM;
    }
    replication__crdt_builder_init(b);
    rc = clone_into(b, src);
    if (rc != 0) {
        replication__crdt_builder_close(b);
        common_free(b);
        return rc;
    }
    memcpy(b->cs.origin, src->origin, sizeof(b->cs.origin));
    b->cs.version = src->version;
    b->cs.hlc = src->hlc;
    b->cs.epoch = src->epoch;
    b->cs.schema_hash = src->schema_hash;
    *out = &b->cs;
    return 0;
}

void replication__crdt_changeset_free(struct replication__changeset *cs)
{
    struct replication__crdt_builder *b =
        (struct replication__crdt_builder *)cs;

    if (cs == NULL) {
        return;
    }
    replication__crdt_builder_close(b);
    common_free(b);
}
