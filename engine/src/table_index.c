/* SPDX-License-Identifier: MIT
 *
 * table_index.c: the non-unique indexes of a table (CREATE INDEX), kept in
 * memory so that "WHERE a = ?" finds its rows without a scan.
 *
 * Each index is a hash multimap (struct engine_table_index in table.h):
 * open addressing over the distinct keys, each bucket naming the first
 * slot of its key, and the slots of one key chained through per-slot
 * next/prev arrays in the order they were added. Adding and removing a
 * slot cost one probe; finding a key costs one probe plus its rows.
 *
 * Keys compare as the index's columns do (datatype3 §4 and the index's
 * collations, which CREATE INDEX may set with COLLATE), and hash with
 * engine__value_hash(), which hashes equal values alike. A row whose key
 * holds a NULL is not kept: "=" never matches it.
 *
 * SQLite's index holds its entries in key order, then rowid order, so the
 * rows of one key come out in rowid order (where.c reads them in index
 * order); engine__table_index_find() sorts the chain when the slots were
 * not added in rowid order.
 *
 * DROP INDEX (engine__table_drop_last_index, undo.c) frees an index's
 * name and text only; the lookup of an index past table->index_count is
 * freed by engine__table_indexes_sweep() at the table's next change.
 */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BUCKET_EMPTY 0
#define BUCKET_REMOVED SIZE_MAX
#define BUCKETS_INITIAL 64
#define LINK_NONE UINT32_MAX

static void index_free(struct engine_table_index *index)
{
    if (index == NULL) {
        return;
    }
    common_free(index->columns);
    common_free(index->collations);
    common_free(index->buckets);
    common_free(index->next);
    common_free(index->prev);
    common_free(index);
}

void engine__table_indexes_sweep(struct engine_table *table)
{
    for (size_t i = table->index_count; i < table->index_slots; i++) {
        index_free(table->indexes[i].lookup);
        table->indexes[i].lookup = NULL;
    }
}

void engine__table_indexes_free(struct engine_table *table)
{
    for (size_t i = 0; i < table->index_slots; i++) {
        index_free(table->indexes[i].lookup);
        table->indexes[i].lookup = NULL;
    }
}

/* The key of slot, false when it holds a NULL (not indexed). */
static bool key_of_slot(const struct engine_table *table,
                        const struct engine_table_index *index, size_t slot,
                        struct engine_value *values)
{
    for (size_t k = 0; k < index->column_count; k++) {
        values[k] = engine__table_get(table, slot, index->columns[k]);
        if (values[k].type == ENGINE_NULL) {
            return false;
        }
    }
    return true;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 31;
    h *= UINT64_C(0x7fb5d329728ea185);
    return h ^ (h >> 27);
}

static size_t key_hash(const struct engine_table_index *index,
                       const struct engine_value *values)
{
    uint64_t h = 0;

    for (size_t k = 0; k < index->column_count; k++) {
        h = mix(h ^ engine__value_hash(&values[k], index->collations[k]));
    }
    return (size_t)h & (index->bucket_count - 1);
}

static bool key_equal(const struct engine_table *table,
                      const struct engine_table_index *index, size_t slot,
                      const struct engine_value *values)
{
    for (size_t k = 0; k < index->column_count; k++) {
        struct engine_value stored =
            engine__table_get(table, slot, index->columns[k]);

        if (engine__value_compare(&stored, &values[k], index->collations[k]) !=
            0) {
            return false;
        }
    }
    return true;
}

/* The bucket holding values' key, or the empty bucket ending its probe. */
static size_t find_bucket(const struct engine_table *table,
                          const struct engine_table_index *index,
                          const struct engine_value *values)
{
    size_t i = key_hash(index, values);

    while (index->buckets[i] != BUCKET_EMPTY) {
        size_t entry = index->buckets[i];

        if (entry != BUCKET_REMOVED &&
            key_equal(table, index, entry - 1, values)) {
            return i;
        }
        i = (i + 1) & (index->bucket_count - 1);
    }
    return i;
}

/* Room in next/prev for every slot the table may hold. */
static int reserve_links(const struct engine_table *table,
                         struct engine_table_index *index)
{
    size_t capacity = table->slot_capacity;
    uint32_t *next, *prev;

    if (index->link_capacity >= capacity) {
        return 0;
    }
    next = common_realloc_array(index->next, capacity, sizeof(*next));
    if (next == NULL) {
        return COMMON_ENOMEM;
    }
    index->next = next;
    prev = common_realloc_array(index->prev, capacity, sizeof(*prev));
    if (prev == NULL) {
        return COMMON_ENOMEM;
    }
    index->prev = prev;
    memset(prev + index->link_capacity, 0xff,
           (capacity - index->link_capacity) * sizeof(*prev));
    index->link_capacity = capacity;
    return 0;
}

/* Links slot at the end of its key's chain (a new bucket if the key is
 * new); the buckets have room. */
static void link_slot(const struct engine_table *table,
                      struct engine_table_index *index, size_t slot,
                      const struct engine_value *values)
{
    size_t i = find_bucket(table, index, values);
    uint32_t s = (uint32_t)slot;
    uint32_t head, tail;

    index->next[s] = LINK_NONE;
    if (index->buckets[i] == BUCKET_EMPTY) {
        /* The key is new: its chain is this slot alone. Probing again for
         * a removed bucket to reuse would cost a second probe; the
         * rebuild reclaims them instead. */
        index->buckets[i] = slot + 1;
        index->prev[s] = s;
        index->used++;
        index->keys++;
        return;
    }
    head = (uint32_t)(index->buckets[i] - 1);
    tail = index->prev[head];
    index->next[tail] = s;
    index->prev[s] = tail;
    index->prev[head] = s;
}

/* Rebuilds the buckets for the keys of every live slot, reclaiming removed
 * buckets; sized for keys distinct keys at least. */
static int rebuild(const struct engine_table *table,
                   struct engine_table_index *index, size_t keys)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    size_t count = BUCKETS_INITIAL;
    size_t *buckets;

    while (count / 2 < keys + 1) {
        count *= 2;
    }
    buckets = common_calloc(count, sizeof(*buckets));
    if (buckets == NULL) {
        return COMMON_ENOMEM;
    }
    common_free(index->buckets);
    index->buckets = buckets;
    index->bucket_count = count;
    index->used = 0;
    index->keys = 0;
    if (index->link_capacity > 0) {
        memset(index->prev, 0xff, index->link_capacity * sizeof(*index->prev));
    }
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (!table->deleted[slot] && key_of_slot(table, index, slot, values)) {
            link_slot(table, index, slot, values);
        }
    }
    return 0;
}

static int index_add(const struct engine_table *table,
                     struct engine_table_index *index, size_t slot)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    int rc = reserve_links(table, index);

    if (rc != 0 || !key_of_slot(table, index, slot, values)) {
        return rc;
    }
    if ((index->used + 1) * 4 > index->bucket_count * 3) {
        /* The rebuild links every live slot, this one included. */
        return rebuild(table, index, index->keys + 1);
    }
    link_slot(table, index, slot, values);
    return 0;
}

static void index_remove(const struct engine_table *table,
                         struct engine_table_index *index, size_t slot)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    uint32_t s = (uint32_t)slot;
    uint32_t next, prev;
    size_t i, head;

    if (slot >= index->link_capacity || index->prev[s] == LINK_NONE ||
        !key_of_slot(table, index, slot, values)) {
        return;
    }
    i = find_bucket(table, index, values);
    if (index->buckets[i] == BUCKET_EMPTY) {
        /* The row is linked but its key has no bucket: the index was read
         * damaged from a file (checksums cannot tell a crafted one). The
         * row stays linked, deleted, which no lookup returns; PRAGMA
         * integrity_check reports the index. */
        return;
    }
    head = index->buckets[i] - 1;
    next = index->next[s];
    prev = index->prev[s];
    if (head == slot && next == LINK_NONE) {
        index->buckets[i] = BUCKET_REMOVED;
        index->keys--;
    } else if (head == slot) {
        index->prev[next] = prev; /* the new first keeps the last */
        index->buckets[i] = (size_t)next + 1;
    } else {
        index->next[prev] = next;
        index->prev[next != LINK_NONE ? next : (uint32_t)head] = prev;
    }
    index->prev[s] = LINK_NONE;
}

int engine__table_indexes_add(struct engine_table *table, size_t slot)
{
    engine__table_indexes_sweep(table);
    for (size_t i = 0; i < table->index_count; i++) {
        struct engine_table_index *index = table->indexes[i].lookup;
        int rc = index != NULL ? index_add(table, index, slot) : 0;

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

void engine__table_indexes_remove(struct engine_table *table, size_t slot)
{
    engine__table_indexes_sweep(table);
    for (size_t i = 0; i < table->index_count; i++) {
        if (table->indexes[i].lookup != NULL) {
            index_remove(table, table->indexes[i].lookup, slot);
        }
    }
}

int engine__table_index_build(struct engine_table *table, size_t position,
                              const size_t *columns,
                              const enum engine_collation *collations,
                              size_t column_count)
{
    struct engine_table_index *index = common_calloc(1, sizeof(*index));
    int rc = COMMON_ENOMEM;

    ASSERT(position < table->index_count);
    if (index == NULL) {
        return rc;
    }
    index->columns = common_malloc_array(column_count + 1, sizeof(size_t));
    index->collations =
        common_malloc_array(column_count + 1, sizeof(*index->collations));
    if (index->columns != NULL && index->collations != NULL) {
        memcpy(index->columns, columns, column_count * sizeof(size_t));
        memcpy(index->collations, collations,
               column_count * sizeof(*collations));
        index->column_count = column_count;
        rc = reserve_links(table, index);
    }
    if (rc == 0) {
        rc = rebuild(table, index, table->live_count);
    }
    if (rc != 0) {
        index_free(index);
        return rc;
    }
    table->indexes[position].lookup = index;
    return 0;
}

int engine__table_index_reindex(struct engine_table *table, size_t position)
{
    struct engine_table_index *old = table->indexes[position].lookup;
    int rc;

    if (old == NULL) {
        return 0;
    }
    rc = engine__table_index_build(table, position, old->columns,
                                   old->collations, old->column_count);
    if (rc == 0) {
        index_free(old);
    }
    return rc;
}

/* Appends the chain from head to out[*count..], growing it; sorted says
 * whether the rowids came in ascending order. */
static int collect_chain(const struct engine_table *table,
                         const struct engine_table_index *index, size_t head,
                         struct engine_slot_list *out, bool *sorted)
{
    size_t first = out->count;

    *sorted = true;
    /* No chain is longer than the table: a damaged index (read from a
     * file) may loop, and must not hang a lookup. */
    for (uint32_t s = (uint32_t)head;
         s != LINK_NONE && out->count - first < table->slot_count;
         s = index->next[s]) {
        if (out->count == out->capacity) {
            size_t grown = out->capacity ? out->capacity * 2 : 16;
            uint32_t *more =
                common_realloc_array(out->slots, grown, sizeof(*more));

            if (more == NULL) {
                return COMMON_ENOMEM;
            }
            out->slots = more;
            out->capacity = grown;
        }
        if (out->count > first &&
            table->rowids[out->slots[out->count - 1]] > table->rowids[s]) {
            *sorted = false;
        }
        out->slots[out->count++] = s;
    }
    return 0;
}

int engine__table_index_find(const struct engine_table *table, size_t position,
                             const struct engine_value *values,
                             struct engine_slot_list *out)
{
    const struct engine_table_index *index = table->indexes[position].lookup;
    size_t first = out->count;
    bool sorted;
    size_t i;
    int rc;

    ASSERT(index != NULL);
    for (size_t k = 0; k < index->column_count; k++) {
        if (values[k].type == ENGINE_NULL) {
            return 0;
        }
    }
    i = find_bucket(table, index, values);
    if (index->buckets[i] == BUCKET_EMPTY) {
        return 0;
    }
    rc = collect_chain(table, index, index->buckets[i] - 1, out, &sorted);
    if (rc == 0 && !sorted) {
        engine__table_sort_slots(table, out->slots + first, out->count - first);
    }
    return rc;
}

/* The collation of an index column: its outermost COLLATE, else the
 * column's own. */
static int column_collation(const struct engine_table *table,
                            const struct ast_indexed_column *column,
                            size_t table_column, enum engine_collation *out)
{
    const struct ast_expr *expr = column->expr;

    if (expr->kind != AST_COLLATE) {
        *out = table->columns[table_column].collation;
        return 0;
    }
    return engine__collation_by_name(expr->u.collate.name,
                                     strlen(expr->u.collate.name), out);
}

int engine__table_index_declared(const struct engine_table *table,
                                 const char *sql, size_t size,
                                 const size_t *columns, size_t column_count,
                                 enum engine_collation *collations,
                                 bool *partial)
{
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL;
    const struct ast_create_index *def;
    char errmsg[128];
    size_t tail, error_offset;
    int rc;

    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, size, &stmt, &tail, errmsg, sizeof(errmsg),
                       &error_offset);
    if (rc == 0 && (stmt == NULL || stmt->kind != AST_STMT_CREATE_INDEX ||
                    stmt->u.create_index.column_count != column_count)) {
        rc = ENGINE_ESQL;
    }
    if (rc == 0) {
        def = &stmt->u.create_index;
        *partial = def->where != NULL;
        for (size_t i = 0; rc == 0 && i < column_count; i++) {
            rc = column_collation(table, &def->columns[i], columns[i],
                                  &collations[i]);
        }
    }
    engine__arena_close(&arena);
    return rc;
}

/* Walks one key's chain from head: every slot live, holding the head's
 * key; counts them into *entries. False on the first fault (a cycle shows
 * as more entries than slots). */
static bool chain_consistent(const struct engine_table *table,
                             const struct engine_table_index *index,
                             size_t head, const struct engine_value *key,
                             size_t *entries)
{
    for (uint32_t s = (uint32_t)head; s != LINK_NONE; s = index->next[s]) {
        if (s >= table->slot_count || table->deleted[s] ||
            !key_equal(table, index, s, key) ||
            ++*entries > table->live_count) {
            return false;
        }
    }
    return true;
}

bool engine__table_index_consistent(const struct engine_table *table,
                                    size_t position)
{
    const struct engine_table_index *index = table->indexes[position].lookup;
    struct engine_value key[ENGINE_MAX_COLUMNS];
    size_t expected = 0, entries = 0;

    ASSERT(index != NULL);
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        expected +=
            !table->deleted[slot] && key_of_slot(table, index, slot, key);
    }
    for (size_t i = 0; i < index->bucket_count; i++) {
        size_t entry = index->buckets[i];

        if (entry == BUCKET_EMPTY || entry == BUCKET_REMOVED) {
            continue;
        }
        /* The head names the key, and the key must lead to this bucket. */
        if (entry - 1 >= table->slot_count || table->deleted[entry - 1] ||
            !key_of_slot(table, index, entry - 1, key) ||
            find_bucket(table, index, key) != i ||
            !chain_consistent(table, index, entry - 1, key, &entries)) {
            return false;
        }
    }
    return entries == expected;
}

int engine__table_index_rebuild(struct engine_table *table, size_t position)
{
    struct engine_table_index *index = table->indexes[position].lookup;
    int rc = reserve_links(table, index);

    return rc ? rc : rebuild(table, index, table->live_count);
}

/* Links read from a file: each key's chain runs forward (next > slot),
 * every slot has at most one predecessor, and a chain starts only at a
 * bucket's head, which has none; then prev is set (a head's to its chain's
 * last slot). One pass each way, without walking a chain. */
static int link_chains(const struct engine_table *table,
                       struct engine_table_index *index)
{
    size_t rows = table->slot_count;
    uint8_t *is_head = common_calloc(rows + 1, 1);
    uint32_t *tail = common_malloc_array(rows + 1, sizeof(*tail));
    int rc = is_head == NULL || tail == NULL ? COMMON_ENOMEM : 0;

    if (index->link_capacity > 0) {
        memset(index->prev, 0xff, index->link_capacity * sizeof(*index->prev));
    }
    index->keys = index->used = 0;
    for (size_t s = 0; rc == 0 && s < rows; s++) {
        uint32_t next = index->next[s];

        if (next != LINK_NONE &&
            (next <= s || next >= rows || index->prev[next] != LINK_NONE)) {
            rc = ENGINE_ECORRUPT;
        } else if (next != LINK_NONE) {
            index->prev[next] = (uint32_t)s;
        }
    }
    for (size_t i = 0; rc == 0 && i < index->bucket_count; i++) {
        size_t entry = index->buckets[i];

        index->used += entry != BUCKET_EMPTY;
        if (entry == BUCKET_EMPTY || entry == BUCKET_REMOVED) {
            continue;
        }
        if (is_head[entry - 1] || index->prev[entry - 1] != LINK_NONE) {
            rc = ENGINE_ECORRUPT;
        }
        is_head[entry - 1] = 1;
        index->keys++;
    }
    for (size_t s = rows; rc == 0 && s-- > 0;) {
        bool starts =
            index->prev[s] == LINK_NONE && index->next[s] != LINK_NONE;

        if (starts && !is_head[s]) {
            rc = ENGINE_ECORRUPT;
        }
        tail[s] =
            index->next[s] == LINK_NONE ? (uint32_t)s : tail[index->next[s]];
    }
    for (size_t s = 0; rc == 0 && s < rows; s++) {
        if (is_head[s]) {
            index->prev[s] = tail[s];
        }
    }
    if (rc == 0 && index->used >= index->bucket_count) {
        rc = ENGINE_ECORRUPT; /* no empty bucket to end a probe */
    }
    common_free(is_head);
    common_free(tail);
    return rc;
}

int engine__table_index_adopt(struct engine_table *table, size_t position,
                              size_t *buckets, size_t bucket_count,
                              const uint32_t *next)
{
    struct engine_table_index *index = table->indexes[position].lookup;
    int rc;

    if (bucket_count == 0 || (bucket_count & (bucket_count - 1)) != 0) {
        return ENGINE_ECORRUPT;
    }
    for (size_t i = 0; i < bucket_count; i++) {
        if (buckets[i] != BUCKET_EMPTY && buckets[i] != BUCKET_REMOVED &&
            buckets[i] > table->slot_count) {
            return ENGINE_ECORRUPT;
        }
    }
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (next[slot] != LINK_NONE && next[slot] >= table->slot_count) {
            return ENGINE_ECORRUPT;
        }
    }
    rc = reserve_links(table, index);
    if (rc != 0) {
        return rc;
    }
    if (table->slot_count > 0) { /* an empty table has no links yet */
        memcpy(index->next, next, table->slot_count * sizeof(*next));
    }
    common_free(index->buckets);
    index->buckets = buckets;
    index->bucket_count = bucket_count;
    rc = link_chains(table, index);
    if (rc != 0) {
        /* buckets stay the caller's, which fails the load: the lookup is
         * left empty, never half adopted. */
        index->buckets = NULL;
        index->bucket_count = index->used = index->keys = 0;
    }
    return rc;
}
