/* SPDX-License-Identifier: MIT
 *
 * rowset.h: a set of rows of values, for DISTINCT, GROUP BY and
 * aggregate(DISTINCT ...). Rows are equal when every value compares equal
 * under its column's collation (engine__value_compare), so 1 and 1.0 are
 * one row and, under NOCASE, 'a' and 'A' are too; NULLs equal each other
 * here, as DISTINCT and GROUP BY treat them. Inserted rows are copied
 * (bytes included) and numbered from 0 in insertion order.
 */
#ifndef SINEW_ENGINE_ROWSET_H
#define SINEW_ENGINE_ROWSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "value.h"

struct engine_rowset {
    size_t width;                            /* values per row */
    const enum engine_collation *collations; /* width entries; borrowed */
    struct engine_value *rows;               /* count * width values */
    uint64_t *hashes;
    size_t count;
    size_t capacity;
    size_t *buckets; /* row index + 1; 0 empty */
    size_t bucket_count;
    struct engine_arena arena; /* the rows' bytes */
};

void engine__rowset_init(struct engine_rowset *set, size_t width,
                         const enum engine_collation *collations);
void engine__rowset_close(struct engine_rowset *set);

/* Finds row in the set, inserting a copy when absent. *index is its
 * number; *inserted says whether it was new. 0 or COMMON_ENOMEM. */
int engine__rowset_insert(struct engine_rowset *set,
                          const struct engine_value *row, bool *inserted,
                          size_t *index);

/* Whether row is in the set; *index is its number when it is. */
bool engine__rowset_find(const struct engine_rowset *set,
                         const struct engine_value *row, size_t *index);

/* The values of row index (owned by the set). */
static inline const struct engine_value *
engine__rowset_row(const struct engine_rowset *set, size_t index)
{
    return &set->rows[index * set->width];
}

/* Sorts order[0..n) stably (bottom-up merge sort) by cmp(ctx, a, b) < 0
 * meaning a before b. 0 or COMMON_ENOMEM (for the scratch array). */
int engine__stable_sort(size_t *order, size_t n,
                        int (*cmp)(const void *ctx, size_t a, size_t b),
                        const void *ctx);

#endif /* SINEW_ENGINE_ROWSET_H */
