/* SPDX-License-Identifier: MIT
 *
 * lww.c: check_lww() (check.h), the crdt last-writer-wins oracle
 * (crdt.md §6.4; replication/test/test_sync_random.c's, over plain
 * arrays so both tiers of the chaos suite share it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common.h"

static int k_cmp(const struct check_lww_write *a,
                 const struct check_lww_write *b)
{
    if (a->hlc != b->hlc) {
        return a->hlc < b->hlc ? -1 : 1;
    }
    return memcmp(a->site, b->site, CHECK_LWW_SITE_BYTES);
}

static bool sets_column(const struct check_lww_write *w, unsigned c)
{
    return w->kind == CHECK_LWW_INSERT ||
           (w->kind == CHECK_LWW_UPDATE && (w->columns & (1u << c)) != 0);
}

/* The largest-K known write of key that decides existence (column < 0) or
 * sets column; NULL if none. */
static const struct check_lww_write *
winner(const struct check_lww_write *writes, size_t count, int64_t key,
       int column)
{
    const struct check_lww_write *best = NULL;

    for (size_t i = 0; i < count; i++) {
        const struct check_lww_write *w = &writes[i];
        bool relevant = column < 0 ? w->kind != CHECK_LWW_UPDATE
                                   : sets_column(w, (unsigned)column);

        if (w->key == key && !w->unknown && relevant &&
            (best == NULL || k_cmp(w, best) > 0)) {
            best = w;
        }
    }
    return best;
}

/* Whether an unknown write above `above` (NULL: any) could explain
 * existence `alive` (column < 0) or `value` in column. */
static bool unknown_explains(const struct check_lww_write *writes, size_t count,
                             int64_t key, int column,
                             const struct check_lww_write *above, bool alive,
                             int64_t value)
{
    for (size_t i = 0; i < count; i++) {
        const struct check_lww_write *w = &writes[i];

        if (w->key != key || !w->unknown ||
            (above != NULL && k_cmp(w, above) <= 0)) {
            continue;
        }
        if (column < 0 && w->kind != CHECK_LWW_UPDATE &&
            (w->kind == CHECK_LWW_INSERT) == alive) {
            return true;
        }
        if (column >= 0 && sets_column(w, (unsigned)column) &&
            w->values[column] == value) {
            return true;
        }
    }
    return false;
}

static int check_key(const struct check_lww_write *writes, size_t count,
                     int64_t key, const struct check_lww_row *row, char *why,
                     size_t size)
{
    const struct check_lww_write *exist = winner(writes, count, key, -1);
    bool alive = exist != NULL && exist->kind == CHECK_LWW_INSERT;

    if (alive != (row != NULL) &&
        !unknown_explains(writes, count, key, -1, exist, row != NULL, 0)) {
        snprintf(why, size, "key %" PRId64 ": replica %s, oracle %s", key,
                 row != NULL ? "has the row" : "lacks the row",
                 alive ? "has it (an acknowledged insert is lost)"
                       : "does not (resurrection or phantom)");
        return -1;
    }
    for (int c = 0; row != NULL && c < CHECK_LWW_COLUMNS; c++) {
        const struct check_lww_write *cell = winner(writes, count, key, c);

        if (cell != NULL && cell->values[c] == row->values[c]) {
            continue;
        }
        if (unknown_explains(writes, count, key, c, cell, true,
                             row->values[c])) {
            continue;
        }
        snprintf(why, size,
                 "key %" PRId64 " column %d: replica %" PRId64
                 ", oracle %" PRId64 " (hlc %" PRIu64 ", site %02x..)",
                 key, c, row->values[c],
                 cell != NULL ? cell->values[c] : CHECK_ABSENT,
                 cell != NULL ? cell->hlc : 0,
                 cell != NULL ? cell->site[0] : 0);
        return -1;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static const struct check_lww_row *find_row(const struct check_lww_row *rows,
                                            size_t count, int64_t key)
{
    size_t lo = 0, hi = count;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (rows[mid].key == key) {
            return &rows[mid];
        }
        if (rows[mid].key < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

int check_lww(const struct check_lww_write *writes, size_t write_count,
              const struct check_lww_row *rows, size_t row_count,
              int64_t *bad_key, char *why, size_t size)
{
    size_t count = write_count + row_count, i;
    int64_t *keys = common_malloc(count > 0 ? count * sizeof(*keys) : 1);
    int rc = 0;

    ASSERT(keys != NULL);
    for (i = 0; i < write_count; i++) {
        keys[i] = writes[i].key;
    }
    for (i = 0; i < row_count; i++) {
        keys[write_count + i] = rows[i].key;
    }
    qsort(keys, count, sizeof(*keys), cmp_i64);
    for (i = 0; i < count && rc == 0; i++) {
        if (i > 0 && keys[i] == keys[i - 1]) {
            continue;
        }
        rc = check_key(writes, write_count, keys[i],
                       find_row(rows, row_count, keys[i]), why, size);
        if (rc != 0) {
            *bad_key = keys[i];
        }
    }
    common_free(keys);
    return rc;
}
