/* SPDX-License-Identifier: MIT
 *
 * vector.c: allocation and row access of vectors (vector.h). Typed vectors
 * degrade to VALUES vectors the first time a value of another storage class
 * arrives, as SQLite's dynamic typing requires; the fast paths of the
 * executor test the kind and fall back to row access otherwise.
 */
#include "vector.h"

#include <string.h>

#include "common.h"

int engine__vector_init(struct engine_vector *vector,
                        enum engine_vector_kind kind)
{
    STATIC_ASSERT(sizeof(double) == sizeof(int64_t), "same width");
    STATIC_ASSERT(sizeof(struct engine_value) >= sizeof(int64_t),
                  "values are the widest element");
    vector->kind = kind;
    vector->owned = true;
    vector->capacity = 0;
    vector->nulls = NULL;
    vector->data.values = NULL;
    return 0;
}

int engine__vector_reserve(struct engine_vector *vector, uint32_t rows)
{
    uint32_t capacity = vector->capacity == 0 ? 1 : vector->capacity;
    struct engine_value *values;
    uint8_t *nulls;

    ASSERT(vector->owned);
    ASSERT(rows <= ENGINE__BATCH_SIZE);
    if (rows <= vector->capacity) {
        return 0;
    }
    while (capacity < rows) {
        capacity *= 2;
    }
    capacity = capacity > ENGINE__BATCH_SIZE ? ENGINE__BATCH_SIZE : capacity;
    /* Always as wide as a VALUES vector, so a kind change never
     * reallocates (engine__vector_make_values converts in place). */
    values =
        common_realloc_array(vector->data.values, capacity, sizeof(*values));
    if (values == NULL) {
        return COMMON_ENOMEM;
    }
    vector->data.values = values;
    nulls = common_realloc(vector->nulls, capacity);
    if (nulls == NULL) {
        return COMMON_ENOMEM;
    }
    memset(nulls + vector->capacity, 0, capacity - vector->capacity);
    vector->nulls = nulls;
    vector->capacity = capacity;
    return 0;
}

void engine__vector_close(struct engine_vector *vector)
{
    if (vector->owned) {
        common_free(vector->nulls);
        common_free(vector->data.i64);
    }
    vector->nulls = NULL;
    vector->data.i64 = NULL;
    vector->owned = false;
    vector->capacity = 0;
}

struct engine_value engine__vector_get(const struct engine_vector *vector,
                                       uint32_t row)
{
    if (vector->nulls[row]) {
        return engine__value_null();
    }
    switch (vector->kind) {
    case ENGINE_VECTOR_INT64:
        return engine__value_int(vector->data.i64[row]);
    case ENGINE_VECTOR_DOUBLE:
        return engine__value_real(vector->data.f64[row]);
    default:
        return vector->data.values[row];
    }
}

int engine__vector_make_values(struct engine_vector *vector, uint32_t count)
{
    ASSERT(vector->owned);
    if (vector->kind == ENGINE_VECTOR_VALUES) {
        return 0;
    }
    /* In place, from the last row down: values[row] covers the 8-byte
     * slots row * 3 .. row * 3 + 2, all at or after row, so every typed
     * element is read before it is overwritten. */
    for (uint32_t row = count; row-- > 0;) {
        struct engine_value v = engine__vector_get(vector, row);

        vector->data.values[row] = v;
    }
    vector->kind = ENGINE_VECTOR_VALUES;
    return 0;
}

int engine__vector_set(struct engine_vector *vector, uint32_t row,
                       uint32_t count, struct engine_value v)
{
    int rc;

    ASSERT(vector->owned);
    ASSERT(row < ENGINE__BATCH_SIZE);
    rc = engine__vector_reserve(vector, row + 1);
    if (rc != 0) {
        return rc;
    }
    vector->nulls[row] = v.type == ENGINE_NULL;
    if (v.type == ENGINE_NULL) {
        if (vector->kind == ENGINE_VECTOR_VALUES) {
            vector->data.values[row] = v;
        }
        return 0;
    }
    if (vector->kind == ENGINE_VECTOR_INT64 && v.type == ENGINE_INTEGER &&
        !v.has_text) {
        vector->data.i64[row] = v.u.i;
        return 0;
    }
    if (vector->kind == ENGINE_VECTOR_DOUBLE && v.type == ENGINE_FLOAT &&
        !v.has_text) {
        vector->data.f64[row] = v.u.r;
        return 0;
    }
    rc = engine__vector_make_values(vector, count);
    ASSERT(rc == 0);
    vector->data.values[row] = v;
    return 0;
}
