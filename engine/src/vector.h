/* SPDX-License-Identifier: MIT
 *
 * vector.h: the unit of execution. A vector holds one column of a batch of
 * up to ENGINE__BATCH_SIZE rows; a batch is a set of vectors plus a
 * selection: the indexes of the rows still alive after filters, so a filter
 * never moves data.
 *
 * Representation: INT64 and DOUBLE vectors are plain arrays (tight loops
 * the compiler vectorizes run over them); TEXT, BLOB and mixed columns are
 * arrays of struct engine_value (SQLite lets one column hold every storage
 * class). NULLs are flagged per row in `nulls` whatever the kind. A vector
 * either owns its arrays or views someone else's (a table's column, another
 * vector); views are never written.
 */
#ifndef SINEW_ENGINE_VECTOR_H
#define SINEW_ENGINE_VECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value.h"

/* Rows per batch: large enough to amortize per-batch work, small enough that
 * a batch of a few columns stays in L1/L2 cache. */
#define ENGINE__BATCH_SIZE 1024

enum engine_vector_kind {
    ENGINE_VECTOR_INT64,  /* i64[row]; NULL rows flagged in nulls */
    ENGINE_VECTOR_DOUBLE, /* f64[row] */
    ENGINE_VECTOR_VALUES, /* values[row]: any storage class */
};

struct engine_vector {
    enum engine_vector_kind kind;
    uint8_t *nulls; /* nulls[row] != 0: the row is NULL (any kind) */
    union {
        int64_t *i64;
        double *f64;
        struct engine_value *values;
    } data;
    bool owned;        /* arrays allocated for this vector, as wide as
                          struct engine_value whatever the kind, so the kind
                          can change in place */
    uint32_t capacity; /* rows the owned arrays hold (grown on demand: a
                          one-row statement never pays for a full batch) */
};

struct engine_batch {
    uint32_t count;      /* rows present, 0..ENGINE__BATCH_SIZE */
    uint32_t *selection; /* live rows in ascending order, or NULL: all */
    uint32_t selected;   /* number of live rows */
    struct engine_vector *columns; /* column_count vectors */
    size_t column_count;
};

/* Sets up an owned vector of the given kind holding no rows yet (nothing
 * is allocated until engine__vector_reserve()). Always 0. */
int engine__vector_init(struct engine_vector *vector,
                        enum engine_vector_kind kind);

/* Makes an owned vector hold at least rows rows (at most
 * ENGINE__BATCH_SIZE), keeping its contents. 0 or COMMON_ENOMEM. */
int engine__vector_reserve(struct engine_vector *vector, uint32_t rows);

/* Frees what the vector owns. */
void engine__vector_close(struct engine_vector *vector);

/* Changes an owned vector's kind to VALUES, converting rows [0, count) in
 * place. Always 0. */
int engine__vector_make_values(struct engine_vector *vector, uint32_t count);

/* The value at row (views bytes, does not copy). */
struct engine_value engine__vector_get(const struct engine_vector *vector,
                                       uint32_t row);

/* Stores v at row of an owned vector (growing it as needed), turning an
 * INT64/DOUBLE vector into a VALUES one (rows [0, count) converted) when v
 * does not fit its kind. 0 or COMMON_ENOMEM. */
int engine__vector_set(struct engine_vector *vector, uint32_t row,
                       uint32_t count, struct engine_value v);

/* The row index of the i-th live row of batch. */
static inline uint32_t engine__batch_row(const struct engine_batch *batch,
                                         uint32_t i)
{
    return batch->selection != NULL ? batch->selection[i] : i;
}

#endif /* SINEW_ENGINE_VECTOR_H */
