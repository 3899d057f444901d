/* SPDX-License-Identifier: MIT
 *
 * expr_int.h: what the expression files share: the typed kernels
 * (expr_kernel.c), the planner's expression compiler (expr_compile.c), and
 * small helpers of expr.c.
 */
#ifndef SINEW_ENGINE_EXPR_INT_H
#define SINEW_ENGINE_EXPR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr.h"

/* SQLite's limit on the arguments of one function call. */
#define ENGINE__FUNCTION_ARGS_MAX 127

/* Converts the operands of comparison expr (args[0] against args[1]) as
 * the comparison does before it compares them (sqlite3CompareAffinity).
 * 0 or COMMON_ENOMEM. */
int engine__expr_compare_prepare(const struct engine_expr *expr,
                                 struct engine_value *a, struct engine_value *b,
                                 struct engine_arena *arena);

/* x IN (SELECT ...) for one row (expr_in.c): *truth 1, 0 or -1 (NULL).
 * The subquery has run. 0, or an error recorded on the statement. */
int engine__expr_in_row(struct engine_expr *expr, struct engine_eval *eval,
                        struct engine_value x, int *truth);

/* A correlated subquery expression (SUBQUERY, EXISTS or IN_QUERY whose
 * subquery has outer arguments) over batch: the subquery runs again for
 * every live row (expr_outer.c). 0, or an error recorded on the
 * statement. */
int engine__outer_eval(struct engine_expr *expr, struct engine_eval *eval,
                       const struct engine_batch *batch);

/* 1 or 0: the outcome of op for a three-way comparison result c. */
int engine__compare_outcome(enum engine_compare_op op, int c);

/* SQL's three-valued AND / OR of truths 1, 0, -1 (NULL). */
int engine__logic_combine(bool is_and, int l, int r);

/* The collation of a binary comparison (datatype3 §7): an explicit COLLATE
 * on the left, then on the right, then a column's on the left, then on the
 * right, else BINARY. */
enum engine_collation engine__binary_collation(const struct engine_expr *a,
                                               const struct engine_expr *b);

/* Typed kernels: compute the whole batch into out and return true, or
 * return false (out untouched as far as callers care) when the inputs'
 * kinds or an integer overflow need the row-by-row path. */
bool engine__compare_kernel(const struct engine_expr *expr,
                            const struct engine_vector *a,
                            const struct engine_vector *b,
                            const struct engine_batch *batch,
                            struct engine_vector *out);
bool engine__arith_kernel(enum engine_arith_op op,
                          const struct engine_vector *a,
                          const struct engine_vector *b,
                          const struct engine_batch *batch,
                          struct engine_vector *out);

void engine__func_context_init(struct engine_func_context *ctx,
                               struct engine_eval *eval,
                               enum engine_collation collation, char *errmsg,
                               size_t errmsg_size);

#endif /* SINEW_ENGINE_EXPR_INT_H */
