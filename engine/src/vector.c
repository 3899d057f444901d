/* SPDX-License-Identifier: MIT
 *
 * vector.c: allocation and row access of vectors (vector.h). Typed vectors
 * degrade to VALUES vectors the first time a value of another storage class
 * arrives, as SQLite's dynamic typing requires; the fast paths of the
 * executor test the kind and fall back to row access otherwise.
 */
#include "vector.h"

#include "common.h"

int engine__vector_init(struct engine_vector *vector,
                        enum engine_vector_kind kind)
{
    STATIC_ASSERT(sizeof(double) == sizeof(int64_t), "same width");
    STATIC_ASSERT(sizeof(struct engine_value) >= sizeof(int64_t),
                  "values are the widest element");
    vector->kind = kind;
    vector->owned = true;
    vector->nulls = common_calloc(ENGINE__BATCH_SIZE, 1);
    /* Always as wide as a VALUES vector, so a kind change never
     * reallocates (engine__vector_make_values converts in place). */
    vector->data.values =
        common_malloc_array(ENGINE__BATCH_SIZE, sizeof(struct engine_value));
    if (vector->nulls == NULL || vector->data.values == NULL) {
        engine__vector_close(vector);
        return COMMON_ENOMEM;
    }
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
    vector->nulls[row] = v.type == ENGINE_NULL;
    if (v.type == ENGINE_NULL) {
        if (vector->kind == ENGINE_VECTOR_VALUES) {
            vector->data.values[row] = v;
        }
        return 0;
    }
    if (vector->kind == ENGINE_VECTOR_INT64 && v.type == ENGINE_INTEGER) {
        vector->data.i64[row] = v.u.i;
        return 0;
    }
    if (vector->kind == ENGINE_VECTOR_DOUBLE && v.type == ENGINE_FLOAT) {
        vector->data.f64[row] = v.u.r;
        return 0;
    }
    rc = engine__vector_make_values(vector, count);
    ASSERT(rc == 0);
    vector->data.values[row] = v;
    return 0;
}
