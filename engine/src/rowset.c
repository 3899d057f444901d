/* SPDX-License-Identifier: MIT
 *
 * rowset.c: hash set of rows (rowset.h). Open addressing with linear
 * probing over row indexes; a row's hash combines engine__value_hash() of
 * each value, which agrees with engine__value_compare() under the column's
 * collation.
 */
#include "rowset.h"

#include <string.h>

#include "common.h"
#include "table.h"

#define ROWS_INITIAL 16

void engine__rowset_init(struct engine_rowset *set, size_t width,
                         const enum engine_collation *collations)
{
    memset(set, 0, sizeof(*set));
    set->width = width;
    set->collations = collations;
    engine__arena_init(&set->arena);
}

void engine__rowset_close(struct engine_rowset *set)
{
    common_free(set->rows);
    common_free(set->hashes);
    common_free(set->buckets);
    engine__arena_close(&set->arena);
    set->rows = NULL;
    set->hashes = NULL;
    set->buckets = NULL;
}

static enum engine_collation collation_of(const struct engine_rowset *set,
                                          size_t i)
{
    return set->collations != NULL ? set->collations[i]
                                   : ENGINE_COLLATION_BINARY;
}

static uint64_t row_hash(const struct engine_rowset *set,
                         const struct engine_value *row)
{
    uint64_t h = UINT64_C(0x84222325cbf29ce4);

    for (size_t i = 0; i < set->width; i++) {
        h ^= engine__value_hash(&row[i], collation_of(set, i));
        h *= UINT64_C(0x9e3779b97f4a7c15);
        h ^= h >> 29;
    }
    return h;
}

static bool row_equal(const struct engine_rowset *set, size_t index,
                      const struct engine_value *row)
{
    const struct engine_value *stored = engine__rowset_row(set, index);

    for (size_t i = 0; i < set->width; i++) {
        if (engine__value_compare(&stored[i], &row[i], collation_of(set, i)) !=
            0) {
            return false;
        }
    }
    return true;
}

static void bucket_put(struct engine_rowset *set, size_t index)
{
    size_t i = (size_t)set->hashes[index] & (set->bucket_count - 1);

    while (set->buckets[i] != 0) {
        i = (i + 1) & (set->bucket_count - 1);
    }
    set->buckets[i] = index + 1;
}

static int grow(struct engine_rowset *set)
{
    size_t capacity = set->capacity == 0 ? ROWS_INITIAL : set->capacity * 2;
    struct engine_value *rows = common_realloc_array(
        set->rows, capacity * (set->width + 1), sizeof(*rows));
    uint64_t *hashes;
    size_t *buckets;

    if (rows == NULL) {
        return COMMON_ENOMEM;
    }
    set->rows = rows;
    hashes = common_realloc_array(set->hashes, capacity, sizeof(*hashes));
    if (hashes == NULL) {
        return COMMON_ENOMEM;
    }
    set->hashes = hashes;
    buckets = common_calloc(capacity * 2, sizeof(*buckets));
    if (buckets == NULL) {
        return COMMON_ENOMEM;
    }
    common_free(set->buckets);
    set->buckets = buckets;
    set->bucket_count = capacity * 2;
    set->capacity = capacity;
    for (size_t index = 0; index < set->count; index++) {
        bucket_put(set, index);
    }
    return 0;
}

static int copy_row(struct engine_rowset *set, size_t index,
                    const struct engine_value *row)
{
    struct engine_value *stored = &set->rows[index * set->width];

    for (size_t i = 0; i < set->width; i++) {
        stored[i] = row[i];
        if (row[i].type == ENGINE_TEXT || row[i].type == ENGINE_BLOB) {
            void *bytes = engine__arena_memdup(&set->arena, row[i].u.s.bytes,
                                               row[i].u.s.size);

            if (bytes == NULL) {
                return COMMON_ENOMEM;
            }
            stored[i].u.s.bytes = bytes;
        }
    }
    return 0;
}

bool engine__rowset_find(const struct engine_rowset *set,
                         const struct engine_value *row, size_t *index)
{
    uint64_t hash = row_hash(set, row);
    size_t i;

    if (set->bucket_count == 0) {
        return false;
    }
    i = (size_t)hash & (set->bucket_count - 1);
    while (set->buckets[i] != 0) {
        size_t candidate = set->buckets[i] - 1;

        if (set->hashes[candidate] == hash && row_equal(set, candidate, row)) {
            *index = candidate;
            return true;
        }
        i = (i + 1) & (set->bucket_count - 1);
    }
    return false;
}

int engine__rowset_insert(struct engine_rowset *set,
                          const struct engine_value *row, bool *inserted,
                          size_t *index)
{
    uint64_t hash = row_hash(set, row);
    size_t i;
    int rc;

    if (set->count == set->capacity && (rc = grow(set)) != 0) {
        return rc;
    }
    i = (size_t)hash & (set->bucket_count - 1);
    while (set->buckets[i] != 0) {
        size_t candidate = set->buckets[i] - 1;

        if (set->hashes[candidate] == hash && row_equal(set, candidate, row)) {
            *inserted = false;
            *index = candidate;
            return 0;
        }
        i = (i + 1) & (set->bucket_count - 1);
    }
    rc = copy_row(set, set->count, row);
    if (rc != 0) {
        return rc;
    }
    set->hashes[set->count] = hash;
    set->buckets[i] = set->count + 1;
    *index = set->count++;
    *inserted = true;
    return 0;
}

static void merge_pass(size_t *order, size_t *scratch, size_t n, size_t width,
                       int (*cmp)(const void *ctx, size_t a, size_t b),
                       const void *ctx)
{
    for (size_t lo = 0; lo < n; lo += 2 * width) {
        size_t mid = lo + width < n ? lo + width : n;
        size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
        size_t i = lo;
        size_t j = mid;
        size_t k = lo;

        /* Ties take the left run first: the sort is stable. */
        while (i < mid && j < hi) {
            scratch[k++] =
                cmp(ctx, order[j], order[i]) < 0 ? order[j++] : order[i++];
        }
        while (i < mid) {
            scratch[k++] = order[i++];
        }
        while (j < hi) {
            scratch[k++] = order[j++];
        }
    }
    memcpy(order, scratch, n * sizeof(*order));
}

int engine__stable_sort(size_t *order, size_t n,
                        int (*cmp)(const void *ctx, size_t a, size_t b),
                        const void *ctx)
{
    size_t *scratch = common_malloc_array(n + 1, sizeof(*scratch));

    if (scratch == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t width = 1; width < n; width *= 2) {
        merge_pass(order, scratch, n, width, cmp, ctx);
    }
    common_free(scratch);
    return 0;
}
