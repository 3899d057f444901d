/* SPDX-License-Identifier: MIT
 *
 * set.c: check_set() and check_prefix() (check.h): the loss, phantom and
 * prefix checks every mode's final reads go through.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static bool contains(const int64_t *sorted, size_t count, int64_t v)
{
    return count > 0 &&
           bsearch(&v, sorted, count, sizeof(*sorted), cmp_i64) != NULL;
}

static int64_t *sorted_copy(const int64_t *values, size_t count)
{
    int64_t *copy = common_malloc(count > 0 ? count * sizeof(*copy) : 1);

    ASSERT(copy != NULL);
    if (count > 0) {
        memcpy(copy, values, count * sizeof(*copy));
        qsort(copy, count, sizeof(*copy), cmp_i64);
    }
    return copy;
}

size_t check_set(const int64_t *acked, size_t acked_count,
                 const int64_t *unknown, size_t unknown_count,
                 const int64_t *final, size_t final_count, int64_t *first_lost,
                 int64_t *first_phantom)
{
    int64_t *fin = sorted_copy(final, final_count);
    int64_t *ack = sorted_copy(acked, acked_count);
    int64_t *unk = sorted_copy(unknown, unknown_count);
    size_t violations = 0;

    *first_lost = CHECK_ABSENT;
    *first_phantom = CHECK_ABSENT;
    for (size_t i = 0; i < acked_count; i++) {
        if (!contains(fin, final_count, acked[i])) {
            violations++;
            if (*first_lost == CHECK_ABSENT) {
                *first_lost = acked[i];
            }
        }
    }
    for (size_t i = 0; i < final_count; i++) {
        if (!contains(ack, acked_count, final[i]) &&
            !contains(unk, unknown_count, final[i])) {
            violations++;
            if (*first_phantom == CHECK_ABSENT) {
                *first_phantom = final[i];
            }
        }
    }
    common_free(fin);
    common_free(ack);
    common_free(unk);
    return violations;
}

int check_prefix(const int64_t *writer, size_t writer_count,
                 const int64_t *follower, size_t follower_count, bool complete,
                 size_t *at)
{
    size_t i;

    for (i = 0; i < follower_count && i < writer_count; i++) {
        if (writer[i] != follower[i]) {
            *at = i;
            return -1;
        }
    }
    if (follower_count > writer_count ||
        (complete && follower_count != writer_count)) {
        *at = i;
        return -1;
    }
    return 0;
}
