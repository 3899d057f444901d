/* SPDX-License-Identifier: MIT
 *
 * value_compare.c: the total order of SQLite values, sqlite3MemCompare
 * (vdbeaux.c), which comparisons, ORDER BY, DISTINCT, GROUP BY and indexes
 * all use.
 *
 * datatype3 §4.1: NULL first; then INTEGER and REAL, numerically; then
 * TEXT, by the collation; then BLOB, by memcmp() and then length. An
 * INTEGER meets a REAL exactly (sqlite3IntFloatCompare), never by rounding
 * the integer to a double: 9223372036854775807 < 9223372036854775808.0.
 */
#include "value.h"

#include <string.h>

static int sign_of(int64_t x)
{
    return (x > 0) - (x < 0);
}

/* sqlite3IntFloatCompare without long double: a double at or beyond
 * +-2^63 is outside every int64; otherwise compare with the truncated
 * double, then the integer's double for the fraction. */
static int int_real_compare(int64_t i, double r)
{
    int64_t truncated;
    double back;

    if (r < -9223372036854775808.0) {
        return 1;
    }
    if (r >= 9223372036854775808.0) {
        return -1;
    }
    truncated = (int64_t)r;
    if (i != truncated) {
        return i < truncated ? -1 : 1;
    }
    back = (double)i;
    return (back > r) - (back < r);
}

static int number_compare(const struct engine_value *a,
                          const struct engine_value *b)
{
    if (a->type == ENGINE_INTEGER && b->type == ENGINE_INTEGER) {
        return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    }
    if (a->type == ENGINE_FLOAT && b->type == ENGINE_FLOAT) {
        return (a->u.r > b->u.r) - (a->u.r < b->u.r);
    }
    if (a->type == ENGINE_INTEGER) {
        return int_real_compare(a->u.i, b->u.r);
    }
    return -int_real_compare(b->u.i, a->u.r);
}

/* binCollFunc (main.c) and sqlite3BlobCompare: memcmp() of the common
 * part, then the shorter first. */
static int bytes_compare(const uint8_t *a, size_t a_size, const uint8_t *b,
                         size_t b_size)
{
    size_t n = a_size < b_size ? a_size : b_size;
    int c = n > 0 ? memcmp(a, b, n) : 0;

    if (c != 0) {
        return c;
    }
    return sign_of((int64_t)a_size - (int64_t)b_size);
}

static int ascii_fold(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* nocaseCollatingFunc (main.c): sqlite3StrNICmp over the common length,
 * which folds ASCII letters only and, being a C-string routine, stops at
 * the first NUL byte of a; then the shorter first. */
static int nocase_compare(const uint8_t *a, size_t a_size, const uint8_t *b,
                          size_t b_size)
{
    size_t n = a_size < b_size ? a_size : b_size;
    size_t i = 0;

    while (i < n && a[i] != 0 && ascii_fold(a[i]) == ascii_fold(b[i])) {
        i++;
    }
    if (i < n) {
        int c = ascii_fold(a[i]) - ascii_fold(b[i]);
        if (c != 0) {
            return c;
        }
    }
    return sign_of((int64_t)a_size - (int64_t)b_size);
}

/* rtrimCollFunc (main.c): trailing spaces (0x20 only) are dropped, then
 * binary. */
static int rtrim_compare(const uint8_t *a, size_t a_size, const uint8_t *b,
                         size_t b_size)
{
    while (a_size > 0 && a[a_size - 1] == ' ') {
        a_size--;
    }
    while (b_size > 0 && b[b_size - 1] == ' ') {
        b_size--;
    }
    return bytes_compare(a, a_size, b, b_size);
}

static int text_compare(const struct engine_value *a,
                        const struct engine_value *b,
                        enum engine_collation collation)
{
    const uint8_t *x = a->u.s.bytes, *y = b->u.s.bytes;

    switch (collation) {
    case ENGINE_COLLATION_NOCASE:
        return nocase_compare(x, a->u.s.size, y, b->u.s.size);
    case ENGINE_COLLATION_RTRIM:
        return rtrim_compare(x, a->u.s.size, y, b->u.s.size);
    default:
        return bytes_compare(x, a->u.s.size, y, b->u.s.size);
    }
}

/* The rank of a storage class in §4.1's order. */
static int class_rank(int type)
{
    switch (type) {
    case ENGINE_NULL:
        return 0;
    case ENGINE_INTEGER:
    case ENGINE_FLOAT:
        return 1;
    case ENGINE_TEXT:
        return 2;
    default:
        return 3;
    }
}

int engine__value_compare(const struct engine_value *a,
                          const struct engine_value *b,
                          enum engine_collation collation)
{
    int a_rank, b_rank;

    ASSERT(a != NULL);
    ASSERT(b != NULL);
    a_rank = class_rank(a->type);
    b_rank = class_rank(b->type);
    if (a_rank != b_rank) {
        return a_rank < b_rank ? -1 : 1;
    }
    switch (a_rank) {
    case 0:
        return 0;
    case 1:
        return number_compare(a, b);
    case 2:
        return text_compare(a, b, collation);
    default:
        return bytes_compare(a->u.s.bytes, a->u.s.size, b->u.s.bytes,
                             b->u.s.size);
    }
}
