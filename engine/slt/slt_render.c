/* SPDX-License-Identifier: MIT
 *
 * slt_render.c: result values as sqllogictest writes them, their sort
 * orders and their MD5.
 *
 * The expected values in the corpus are what upstream's slt_sqlite.c
 * (sqliteQuery) printed: every value is rendered by the type letter the
 * record declares, not by its storage class (../shared/reference/
 * sqlcorpus-and-protocol.md A2, "Rendering"), then rowsort/valuesort sort
 * the rendered text with strcmp, and a result of more values than the
 * hash threshold is compared by the MD5 of each value followed by "\n".
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slt.h"

/* SQLite 3.47's printf (sqlite3FpDecode, which made the corpus's
 * expected values that differ between versions) takes 17 significant
 * digits of a double and rounds them half up, once, to the precision asked
 * for but to at most 16 significant digits, writing zeros after them. So
 * -9223372036854775808.0 is "-9223372036854776000.000", and 0.0625 is
 * "0.063" where C's printf says "0.062". (3.40 rounded some values whose
 * 17th digit matters differently; the corpus has none.) */
#define SLT_REAL_SOURCE_DIGITS 17
#define SLT_REAL_KEPT_DIGITS 16
#define SLT_REAL_DECIMALS 3

void slt_render_integer(int64_t value, char *out)
{
    /* sqlite3_column_int() keeps the low 32 bits of the 64-bit value. */
    int32_t low = (int32_t)(uint32_t)(uint64_t)value;

    snprintf(out, SLT_NUMBER_TEXT_SIZE, "%d", (int)low);
}

/* The 17 significant digits of |value| (not 0, finite) into digits; returns
 * the decimal exponent: |value| = d.dddd... * 10^exponent. */
static long slt_real_digits(double value, char digits[SLT_REAL_SOURCE_DIGITS])
{
    char scientific[64];
    const char *p = scientific;

    snprintf(scientific, sizeof(scientific), "%.*e", SLT_REAL_SOURCE_DIGITS - 1,
             value < 0 ? -value : value);
    digits[0] = *p++;
    ASSERT(*p == '.');
    p++;
    for (int i = 1; i < SLT_REAL_SOURCE_DIGITS; i++) {
        digits[i] = *p++;
    }
    ASSERT(*p == 'e');
    return strtol(p + 1, NULL, 10);
}

/* The digit of 10^place among the 17 (0 outside them). */
static int slt_digit_at(const char digits[SLT_REAL_SOURCE_DIGITS],
                        long exponent, long place)
{
    long index = exponent - place;

    return index >= 0 && index < SLT_REAL_SOURCE_DIGITS ? digits[index] - '0'
                                                        : 0;
}

/* "%.3f" of a finite value as SQLite's printf writes it. */
static void slt_render_real_fixed(double value, char *out)
{
    char digits[SLT_REAL_SOURCE_DIGITS];
    /* Digits of 10^top down to 10^-3, after a spare one for a carry. */
    char fixed[SLT_NUMBER_TEXT_SIZE];
    size_t count = 0;
    size_t used = 0;

    memset(digits, '0', sizeof(digits));
    long exponent = value == 0.0 ? 0 : slt_real_digits(value, digits);
    long top = exponent > 0 ? exponent : 0;
    /* The last place kept: the third decimal, or the 16th digit. */
    long last = exponent - (SLT_REAL_KEPT_DIGITS - 1);
    if (last < -SLT_REAL_DECIMALS) {
        last = -SLT_REAL_DECIMALS;
    }
    ASSERT(top + SLT_REAL_DECIMALS + 4 < SLT_NUMBER_TEXT_SIZE);
    fixed[count++] = 0;
    for (long place = top; place >= -SLT_REAL_DECIMALS; place--) {
        fixed[count++] =
            place >= last ? (char)slt_digit_at(digits, exponent, place) : 0;
    }
    if (slt_digit_at(digits, exponent, last - 1) >= 5) {
        size_t i = 1 + (size_t)(top - last);
        while (fixed[i] == 9) {
            fixed[i--] = 0;
        }
        fixed[i]++;
    }
    if (value < 0) {
        out[used++] = '-';
    }
    for (size_t i = fixed[0] != 0 ? 0 : 1; i < count; i++) {
        if (i == count - SLT_REAL_DECIMALS) {
            out[used++] = '.';
        }
        out[used++] = (char)('0' + fixed[i]);
    }
    out[used] = '\0';
}

void slt_render_real(double value, char *out)
{
    if (value != value) {
        snprintf(out, SLT_NUMBER_TEXT_SIZE, "NaN");
    } else if (value > DBL_MAX || value < -DBL_MAX) {
        snprintf(out, SLT_NUMBER_TEXT_SIZE, "%s", value < 0 ? "-Inf" : "Inf");
    } else {
        slt_render_real_fixed(value, out);
    }
}

void slt_values_init(struct slt_values *values)
{
    memset(values, 0, sizeof(*values));
}

void slt_values_close(struct slt_values *values)
{
    for (size_t i = 0; i < values->count; i++) {
        common_free(values->items[i]);
    }
    common_free(values->items);
    memset(values, 0, sizeof(*values));
}

/* Appends item (ownership passes to values, also on failure). */
static int slt_values_push(struct slt_values *values, char *item)
{
    if (values->count == values->capacity) {
        size_t grown = values->capacity == 0 ? 16 : values->capacity * 2;
        char **items =
            common_realloc_array(values->items, grown, sizeof(*items));
        if (items == NULL) {
            common_free(item);
            return COMMON_ENOMEM;
        }
        values->items = items;
        values->capacity = grown;
    }
    values->items[values->count++] = item;
    return 0;
}

int slt_values_append(struct slt_values *values, const char *text)
{
    size_t size = strlen(text) + 1;
    char *item = common_malloc(size);

    if (item == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(item, text, size);
    return slt_values_push(values, item);
}

int slt_values_append_text(struct slt_values *values, const char *text,
                           size_t size)
{
    if (text == NULL) {
        return slt_values_append(values, "NULL");
    }
    const char *nul = memchr(text, '\0', size);
    if (nul != NULL) {
        size = (size_t)(nul - text);
    }
    if (size == 0) {
        return slt_values_append(values, "(empty)");
    }
    char *item = common_malloc(size + 1);
    if (item == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)text[i];
        item[i] = (c < 0x20 || c > 0x7e) ? '@' : (char)c;
    }
    item[size] = '\0';
    return slt_values_push(values, item);
}

/* One row of a rowsort: its values (borrowed from the slt_values). */
struct slt_row {
    char **values;
    size_t column_count;
};

static int slt_row_compare(const void *a, const void *b)
{
    const struct slt_row *left = a;
    const struct slt_row *right = b;

    for (size_t i = 0; i < left->column_count; i++) {
        int c = strcmp(left->values[i], right->values[i]);
        if (c != 0) {
            return c;
        }
    }
    return 0;
}

static int slt_value_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int slt_values_sort_rows(struct slt_values *values, size_t column_count)
{
    size_t row_count = values->count / column_count;

    if (row_count < 2) {
        return 0;
    }
    struct slt_row *rows = common_malloc_array(row_count, sizeof(*rows));
    char **sorted = common_malloc_array(values->capacity, sizeof(*sorted));
    if (rows == NULL || sorted == NULL) {
        common_free(rows);
        common_free(sorted);
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < row_count; i++) {
        rows[i].values = values->items + i * column_count;
        rows[i].column_count = column_count;
    }
    qsort(rows, row_count, sizeof(*rows), slt_row_compare);
    for (size_t i = 0; i < row_count; i++) {
        memcpy(sorted + i * column_count, rows[i].values,
               column_count * sizeof(*sorted));
    }
    for (size_t i = row_count * column_count; i < values->count; i++) {
        sorted[i] = values->items[i];
    }
    common_free(rows);
    common_free(values->items);
    values->items = sorted;
    return 0;
}

int slt_values_sort(struct slt_values *values, enum slt_sort sort,
                    size_t column_count)
{
    ASSERT(column_count >= 1);
    switch (sort) {
    case SLT_SORT_NONE:
        return 0;
    case SLT_SORT_ROWS:
        return slt_values_sort_rows(values, column_count);
    case SLT_SORT_VALUES:
        if (values->count > 1) {
            qsort(values->items, values->count, sizeof(*values->items),
                  slt_value_compare);
        }
        return 0;
    }
    ASSERT(!"unknown sort mode");
    return 0;
}

void slt_values_hash(char *const *items, size_t count, char *out)
{
    struct slt_md5 md5;

    slt_md5_init(&md5);
    for (size_t i = 0; i < count; i++) {
        slt_md5_update(&md5, items[i], strlen(items[i]));
        slt_md5_update(&md5, "\n", 1);
    }
    slt_md5_final_hex(&md5, out);
}

bool slt_parse_hash_line(const char *line, char *out)
{
    static const char middle[] = " values hashing to ";
    const char *p = line;

    if (*p < '0' || *p > '9') {
        return false;
    }
    while (*p >= '0' && *p <= '9') {
        p++;
    }
    if (strncmp(p, middle, sizeof(middle) - 1) != 0) {
        return false;
    }
    p += sizeof(middle) - 1;
    for (int i = 0; i < 32; i++) {
        bool hex = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f');
        if (!hex) {
            return false;
        }
    }
    if (p[32] != '\0') {
        return false;
    }
    memcpy(out, p, 32);
    out[32] = '\0';
    return true;
}
