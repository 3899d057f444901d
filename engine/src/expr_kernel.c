/* SPDX-License-Identifier: MIT
 *
 * expr_kernel.c: the typed fast paths of expression evaluation. Over INT64
 * and DOUBLE vectors, comparisons and arithmetic are plain loops over
 * arrays (the compiler vectorizes the dense case). They implement exactly
 * vdbe.c's rules for those types: integer + - * that overflows int64 is
 * redone in REAL (here: the kernel declines and the row path does it),
 * division or remainder by zero is NULL, a REAL result that is NaN is NULL.
 */
#include <math.h>

#include "engine_int.h"
#include "expr_int.h"

static bool is_numeric_kind(const struct engine_vector *v)
{
    return v->kind == ENGINE_VECTOR_INT64 || v->kind == ENGINE_VECTOR_DOUBLE;
}

static double as_double(const struct engine_vector *v, uint32_t row)
{
    return v->kind == ENGINE_VECTOR_INT64 ? (double)v->data.i64[row]
                                          : v->data.f64[row];
}

static int compare_int64(int64_t x, int64_t y)
{
    return (x > y) - (x < y);
}

static int compare_double(double x, double y)
{
    return (x > y) - (x < y);
}

bool engine__compare_kernel(const struct engine_expr *expr,
                            const struct engine_vector *a,
                            const struct engine_vector *b,
                            const struct engine_batch *batch,
                            struct engine_vector *out)
{
    enum engine_compare_op op = expr->u.compare;
    bool is_op = op == ENGINE_COMPARE_IS || op == ENGINE_COMPARE_IS_NOT;

    /* Mixed INT64/DOUBLE needs SQLite's exact integer-real comparison, and
     * TEXT affinity would turn numbers into text: both take the row path. */
    if (a->kind != b->kind || !is_numeric_kind(a) ||
        expr->args[0]->affinity == ENGINE_AFFINITY_TEXT ||
        expr->args[1]->affinity == ENGINE_AFFINITY_TEXT) {
        return false;
    }
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        int c;

        if (a->nulls[row] || b->nulls[row]) {
            bool both = a->nulls[row] && b->nulls[row];

            out->nulls[row] = !is_op;
            out->data.i64[row] = op == ENGINE_COMPARE_IS ? both : !both;
            continue;
        }
        c = a->kind == ENGINE_VECTOR_INT64
                ? compare_int64(a->data.i64[row], b->data.i64[row])
                : compare_double(a->data.f64[row], b->data.f64[row]);
        out->nulls[row] = 0;
        out->data.i64[row] = engine__compare_outcome(op, c);
    }
    return true;
}

/* Integer a op b; false when the row path must compute it. */
static bool int_op(enum engine_arith_op op, int64_t x, int64_t y, int64_t *out,
                   bool *is_null)
{
    *is_null = false;
    switch (op) {
    case ENGINE_ARITH_ADD:
        return !__builtin_add_overflow(x, y, out);
    case ENGINE_ARITH_SUBTRACT:
        return !__builtin_sub_overflow(x, y, out);
    case ENGINE_ARITH_MULTIPLY:
        return !__builtin_mul_overflow(x, y, out);
    case ENGINE_ARITH_DIVIDE:
        if (y == 0) {
            *is_null = true;
            return true;
        }
        if (x == INT64_MIN && y == -1) {
            return false;
        }
        *out = x / y;
        return true;
    case ENGINE_ARITH_REMAINDER:
        *is_null = y == 0;
        *out = (y == 0 || y == -1) ? 0 : x % y;
        return true;
    default:
        return false;
    }
}

static bool int64_kernel(enum engine_arith_op op, const struct engine_vector *a,
                         const struct engine_vector *b,
                         const struct engine_batch *batch,
                         struct engine_vector *out)
{
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        bool is_null;

        if (a->nulls[row] || b->nulls[row]) {
            out->nulls[row] = 1;
            continue;
        }
        if (!int_op(op, a->data.i64[row], b->data.i64[row], &out->data.i64[row],
                    &is_null)) {
            return false;
        }
        out->nulls[row] = is_null;
    }
    return true;
}

static bool double_kernel(enum engine_arith_op op,
                          const struct engine_vector *a,
                          const struct engine_vector *b,
                          const struct engine_batch *batch,
                          struct engine_vector *out)
{
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        double x = as_double(a, row);
        double y = as_double(b, row);
        double r;

        if (a->nulls[row] || b->nulls[row] ||
            (op == ENGINE_ARITH_DIVIDE && y == 0.0)) {
            out->nulls[row] = 1;
            continue;
        }
        r = op == ENGINE_ARITH_ADD        ? x + y
            : op == ENGINE_ARITH_SUBTRACT ? x - y
            : op == ENGINE_ARITH_MULTIPLY ? x * y
                                          : x / y;
        out->nulls[row] = (uint8_t)(isnan(r) != 0);
        out->data.f64[row] = r;
    }
    return true;
}

bool engine__arith_kernel(enum engine_arith_op op,
                          const struct engine_vector *a,
                          const struct engine_vector *b,
                          const struct engine_batch *batch,
                          struct engine_vector *out)
{
    if (!is_numeric_kind(a) || !is_numeric_kind(b)) {
        return false;
    }
    if (a->kind == ENGINE_VECTOR_INT64 && b->kind == ENGINE_VECTOR_INT64) {
        out->kind = ENGINE_VECTOR_INT64;
        return int64_kernel(op, a, b, batch, out);
    }
    if (op > ENGINE_ARITH_DIVIDE) {
        return false; /* remainder, bit and shift operators on REALs */
    }
    out->kind = ENGINE_VECTOR_DOUBLE;
    return double_kernel(op, a, b, batch, out);
}
