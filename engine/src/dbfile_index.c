/* SPDX-License-Identifier: MIT
 *
 * dbfile_index.c: a table's indexes in the main file (docs/formats.md,
 * "Index section"), so opening a database takes them as they were instead
 * of hashing every row again (that rebuild was most of an open's time).
 *
 * An index is kept as its in-memory form: the open-addressing hash of a
 * PRIMARY KEY / UNIQUE key (key -> slot), or of a non-unique index (key ->
 * first slot, with a next link per slot chaining the rest). Loading puts
 * the rows of the file in slots 0, 1, 2 ... in the order written, so the
 * writer renumbers every slot the hash names to that order; bucket
 * positions depend only on the keys (engine__value_hash(), which is
 * therefore part of the format) and stay. The rowid needs nothing: rows
 * are written in rowid order, so its lookup is a search (table_key.c).
 */
#include <stdlib.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

#define ENTRY_EMPTY 0u
#define ENTRY_REMOVED UINT32_MAX
#define LINK_END UINT32_MAX

/* Bucket entry kinds in memory (table_key.c, table_index.c). */
#define BUCKET_EMPTY 0
#define BUCKET_REMOVED SIZE_MAX

/* ---- writing ---- */

/* The slots the file will hold, in written (rowid) order: order[new] is
 * the old slot, new_slot[old] the new one (UINT32_MAX for a slot that is
 * not live). */
struct renumbering {
    uint32_t *order;
    uint32_t *new_slot;
    size_t count;
};

static int renumber(struct engine_table *table, struct renumbering *out)
{
    size_t cursor = 0;
    uint32_t n;

    out->count = 0;
    out->order = common_malloc_array(table->live_count + 1, sizeof(uint32_t));
    out->new_slot =
        common_malloc_array(table->slot_count + 1, sizeof(uint32_t));
    if (out->order == NULL || out->new_slot == NULL) {
        return COMMON_ENOMEM;
    }
    memset(out->new_slot, 0xff, (table->slot_count + 1) * sizeof(uint32_t));
    while ((n = engine__table_scan(
                table, &cursor, out->order + out->count,
                (uint32_t)(table->live_count + 1 - out->count), false)) > 0) {
        if (n == UINT32_MAX) {
            return COMMON_ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
            out->new_slot[out->order[out->count + i]] =
                (uint32_t)(out->count + i);
        }
        out->count += n;
    }
    ASSERT(out->count == table->live_count);
    return 0;
}

static int put_buckets(struct common_buf *buf, const size_t *buckets,
                       size_t bucket_count, const uint32_t *new_slot)
{
    int rc = common_buf_append_varint(buf, bucket_count);

    for (size_t i = 0; rc == 0 && i < bucket_count; i++) {
        size_t entry = buckets[i];
        uint32_t word = ENTRY_EMPTY;

        if (entry == BUCKET_REMOVED) {
            word = ENTRY_REMOVED;
        } else if (entry != BUCKET_EMPTY) {
            /* A slot that is no longer live keeps its place in the probe
             * sequence as a removed entry. */
            uint32_t slot = new_slot[entry - 1];

            word = slot == UINT32_MAX ? ENTRY_REMOVED : slot + 1;
        }
        rc = common_buf_append_u32le(buf, word);
    }
    return rc;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* One key's chain from old slot head, renumbered and sorted into
 * scratch (room for every row); returns its length. */
static size_t chain_renumbered(const struct engine_table_index *index,
                               uint32_t head, const struct renumbering *map,
                               uint32_t *scratch)
{
    size_t length = 0;

    for (uint32_t s = head; s != LINK_END && length < map->count;
         s = index->next[s]) {
        if (map->new_slot[s] != UINT32_MAX) {
            scratch[length++] = map->new_slot[s];
        }
    }
    qsort(scratch, length, sizeof(*scratch), compare_u32);
    return length;
}

/* A non-unique index: its buckets, each naming the first slot of its key,
 * then a next link per row. Each key's chain is written in ascending slot
 * order (rowid order, the order lookups return), so the reader checks it
 * in one pass: a link always points forward. */
static int put_lookup(struct common_buf *buf,
                      const struct engine_table_index *index,
                      const struct renumbering *map)
{
    uint32_t *next = common_malloc_array(map->count + 1, sizeof(*next));
    uint32_t *chain = common_malloc_array(map->count + 1, sizeof(*chain));
    int rc = next == NULL || chain == NULL ? COMMON_ENOMEM : 0;

    rc = rc ? rc : common_buf_append_varint(buf, index->bucket_count);
    if (rc == 0) {
        memset(next, 0xff, (map->count + 1) * sizeof(*next));
    }
    for (size_t i = 0; rc == 0 && i < index->bucket_count; i++) {
        size_t entry = index->buckets[i], length = 0;
        uint32_t word = entry == BUCKET_EMPTY ? ENTRY_EMPTY : ENTRY_REMOVED;

        if (entry != BUCKET_EMPTY && entry != BUCKET_REMOVED) {
            length = chain_renumbered(index, (uint32_t)(entry - 1), map, chain);
        }
        for (size_t n = 0; n + 1 < length; n++) {
            next[chain[n]] = chain[n + 1];
        }
        if (length > 0) {
            word = chain[0] + 1;
        }
        rc = common_buf_append_u32le(buf, word);
    }
    rc = rc ? rc : common_buf_append_varint(buf, map->count);
    for (size_t n = 0; rc == 0 && n < map->count; n++) {
        rc = common_buf_append_u32le(buf, next[n]);
    }
    common_free(next);
    common_free(chain);
    return rc;
}

static int put_name(struct common_buf *buf, const char *name)
{
    size_t size = strlen(name);
    int rc = common_buf_append_varint(buf, size);

    return rc ? rc : common_buf_append(buf, name, size);
}

/* Which key: a constraint of CREATE TABLE by its ordinal among them (their
 * order is the statement's), a UNIQUE index by its name (an index's place
 * in memory can move: DROP INDEX then ROLLBACK puts it last). */
static int put_key_id(struct common_buf *buf, const struct engine_table *table,
                      size_t k)
{
    const struct engine_unique_key *key = &table->keys[k];
    size_t ordinal = 0;
    int rc;

    if (key->index_name != NULL) {
        rc = common_buf_append_byte(buf, ENGINE__DBFILE_UNIQUE_INDEX);
        return rc ? rc : put_name(buf, key->index_name);
    }
    for (size_t i = 0; i < k; i++) {
        ordinal += table->keys[i].index_name == NULL;
    }
    rc = common_buf_append_byte(buf, ENGINE__DBFILE_CONSTRAINT_KEY);
    return rc ? rc : common_buf_append_varint(buf, ordinal);
}

int engine__dbfile_put_indexes(struct common_buf *buf,
                               struct engine_table *table)
{
    struct renumbering map = {0};
    size_t count = 0;
    int rc = renumber(table, &map);

    for (size_t k = 0; k < table->key_count; k++) {
        count += table->keys[k].bucket_count > 0;
    }
    for (size_t i = 0; i < table->index_count; i++) {
        count += table->indexes[i].lookup != NULL;
    }
    rc = rc ? rc : common_buf_append_varint(buf, count);
    for (size_t k = 0; rc == 0 && k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];

        if (key->bucket_count > 0) {
            rc = put_key_id(buf, table, k);
            rc = rc ? rc
                    : put_buckets(buf, key->buckets, key->bucket_count,
                                  map.new_slot);
        }
    }
    for (size_t i = 0; rc == 0 && i < table->index_count; i++) {
        const struct engine_table_index *index = table->indexes[i].lookup;

        if (index != NULL) {
            rc = common_buf_append_byte(buf, ENGINE__DBFILE_LOOKUP);
            rc = rc ? rc : put_name(buf, table->indexes[i].name);
            rc = rc ? rc : put_lookup(buf, index, &map);
        }
    }
    common_free(map.order);
    common_free(map.new_slot);
    return rc;
}

/* ---- reading ---- */

/* What one entry names: a key or an index position of table, or -1 when
 * there is no such thing (or nothing to check it against: table NULL). */
static int get_target(struct common_reader *reader,
                      const struct engine_table *table, uint8_t kind,
                      ptrdiff_t *target)
{
    uint64_t ordinal, size;
    const uint8_t *name;

    *target = -1;
    if (kind == ENGINE__DBFILE_CONSTRAINT_KEY) {
        if (common_reader_varint(reader, &ordinal) != 0) {
            return ENGINE_ECORRUPT;
        }
        for (size_t k = 0; table != NULL && k < table->key_count; k++) {
            if (table->keys[k].index_name == NULL && ordinal-- == 0) {
                *target = (ptrdiff_t)k;
                break;
            }
        }
        return 0;
    }
    if (common_reader_varint(reader, &size) != 0 ||
        common_reader_bytes(reader, (size_t)size, &name) != 0) {
        return ENGINE_ECORRUPT;
    }
    for (size_t i = 0; table != NULL && kind == ENGINE__DBFILE_UNIQUE_INDEX &&
                       i < table->key_count;
         i++) {
        const char *index_name = table->keys[i].index_name;

        if (index_name != NULL && strlen(index_name) == size &&
            memcmp(index_name, name, (size_t)size) == 0) {
            *target = (ptrdiff_t)i;
        }
    }
    for (size_t i = 0; table != NULL && kind == ENGINE__DBFILE_LOOKUP &&
                       i < table->index_count;
         i++) {
        const char *index_name = table->indexes[i].name;

        if (table->indexes[i].lookup != NULL && strlen(index_name) == size &&
            memcmp(index_name, name, (size_t)size) == 0) {
            *target = (ptrdiff_t)i;
        }
    }
    return 0;
}

/* bucket_count words into buckets (common_malloc'd), each empty, removed
 * or a slot + 1 of rows. */
static int get_buckets(struct common_reader *reader, size_t rows, size_t **out,
                       size_t *bucket_count)
{
    uint64_t count;
    size_t *buckets;

    *out = NULL;
    if (common_reader_varint(reader, &count) != 0 || count == 0 ||
        (count & (count - 1)) != 0 ||
        count > common_reader_remaining(reader) / 4) {
        return ENGINE_ECORRUPT;
    }
    buckets = common_malloc_array((size_t)count, sizeof(*buckets));
    if (buckets == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        uint32_t word;

        (void)common_reader_u32le(reader, &word);
        if (word != ENTRY_EMPTY && word != ENTRY_REMOVED && word > rows) {
            common_free(buckets);
            return ENGINE_ECORRUPT;
        }
        buckets[i] = word == ENTRY_REMOVED ? BUCKET_REMOVED : word;
    }
    *out = buckets;
    *bucket_count = (size_t)count;
    return 0;
}

static int get_links(struct common_reader *reader, size_t rows, uint32_t **out)
{
    uint32_t *links;
    uint64_t count;

    *out = NULL;
    if (common_reader_varint(reader, &count) != 0 || count != rows ||
        rows > common_reader_remaining(reader) / 4) {
        return ENGINE_ECORRUPT;
    }
    links = common_malloc_array(rows + 1, sizeof(*links));
    if (links == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < rows; i++) {
        (void)common_reader_u32le(reader, &links[i]);
    }
    *out = links;
    return 0;
}

/* One entry: read, then adopted by table when it names something not yet
 * taken (done marks what was). */
static int get_entry(struct common_reader *reader, struct engine_table *table,
                     size_t rows, bool *done)
{
    size_t *buckets = NULL, bucket_count = 0;
    uint32_t *links = NULL;
    ptrdiff_t target;
    uint8_t kind;
    int rc = common_reader_byte(reader, &kind) ? ENGINE_ECORRUPT : 0;

    if (rc == 0 && kind != ENGINE__DBFILE_CONSTRAINT_KEY &&
        kind != ENGINE__DBFILE_UNIQUE_INDEX && kind != ENGINE__DBFILE_LOOKUP) {
        rc = ENGINE_ECORRUPT;
    }
    rc = rc ? rc : get_target(reader, table, kind, &target);
    rc = rc ? rc : get_buckets(reader, rows, &buckets, &bucket_count);
    if (rc == 0 && kind == ENGINE__DBFILE_LOOKUP) {
        rc = get_links(reader, rows, &links);
    }
    if (rc == 0 && table != NULL) {
        size_t flag = kind == ENGINE__DBFILE_LOOKUP
                          ? table->key_count + (size_t)target
                          : (size_t)target;

        /* Naming nothing, or naming one thing twice, is not our writing. */
        if (target < 0 || done[flag]) {
            rc = ENGINE_ECORRUPT;
        } else if (kind == ENGINE__DBFILE_LOOKUP) {
            rc = engine__table_index_adopt(table, (size_t)target, buckets,
                                           bucket_count, links);
        } else {
            rc = engine__table_key_adopt(table, (size_t)target, buckets,
                                         bucket_count);
        }
        if (rc == 0) {
            done[flag] = true;
            buckets = NULL; /* the table's now */
        }
    }
    common_free(buckets);
    common_free(links);
    return rc;
}

/* Builds what the file did not keep (a file written before an index, or
 * by a writer that kept none). */
static int build_the_rest(struct engine_table *table, const bool *done)
{
    int rc = 0;

    for (size_t k = 0; rc == 0 && k < table->key_count; k++) {
        if (!done[k]) {
            rc = engine__table_key_rebuild(table, k);
        }
    }
    for (size_t i = 0; rc == 0 && i < table->index_count; i++) {
        if (table->indexes[i].lookup != NULL && !done[table->key_count + i]) {
            rc = engine__table_index_rebuild(table, i);
        }
    }
    return rc;
}

int engine__dbfile_get_indexes(struct common_reader *reader,
                               struct engine_table *table, size_t rows)
{
    bool *done = NULL;
    uint64_t count;
    int rc = common_reader_varint(reader, &count) ? ENGINE_ECORRUPT : 0;

    if (rc == 0 && table != NULL) {
        ASSERT(table->slot_count == rows);
        done = common_calloc(table->key_count + table->index_count + 1,
                             sizeof(*done));
        rc = done == NULL ? COMMON_ENOMEM : 0;
    }
    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        rc = get_entry(reader, table, rows, done);
    }
    if (rc == 0 && table != NULL) {
        rc = build_the_rest(table, done);
    }
    common_free(done);
    return rc;
}
