/* SPDX-License-Identifier: MIT
 *
 * window.h: window functions, as SQLite 3.40 has them (window.c).
 *
 * Planning (plan_window.c): a SELECT's window function calls are compiled
 * where they are written (results, ORDER BY) into reads of columns the
 * window stage adds; their arguments, PARTITION BY and ORDER BY terms are
 * compiled against the stage's input (the source, or the aggregation's
 * output when the query aggregates). Calls whose windows have the same
 * PARTITION BY and ORDER BY share one layer: one sort of the rows by
 * partition then order keys. Like sqlite3WindowRewrite(), the stage sits
 * after WHERE, GROUP BY and HAVING and before DISTINCT, ORDER BY and
 * LIMIT.
 *
 * Execution (op_window.c, func_window.c): each layer is project (the input
 * columns, then keys and arguments) -> sort -> window, which reads one
 * partition at a time and appends one column per call.
 */
#ifndef SINEW_ENGINE_WINDOW_H
#define SINEW_ENGINE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

enum engine_window_fn {
    ENGINE_WINDOW_AGGREGATE, /* any aggregate with OVER */
    ENGINE_WINDOW_ROW_NUMBER,
    ENGINE_WINDOW_RANK,
    ENGINE_WINDOW_DENSE_RANK,
    ENGINE_WINDOW_PERCENT_RANK,
    ENGINE_WINDOW_CUME_DIST,
    ENGINE_WINDOW_NTILE,
    ENGINE_WINDOW_LAG,
    ENGINE_WINDOW_LEAD,
    ENGINE_WINDOW_FIRST_VALUE,
    ENGINE_WINDOW_LAST_VALUE,
    ENGINE_WINDOW_NTH_VALUE,
};

/* A frame bound; offset is a constant expression, or NULL for a bound
 * without one, or one SQLite replaces by NULL (sqlite3WindowOffsetExpr:
 * not a constant), which fails the offset check when the stage starts. */
struct engine_window_bound {
    enum ast_bound_kind kind;
    struct engine_expr *offset;
    bool null_offset; /* an offset SQLite reads as NULL */
};

struct engine_window_frame {
    enum ast_frame_type type;
    struct engine_window_bound start;
    struct engine_window_bound end;
    enum ast_exclude exclude;
};

/* One window function call. Its arguments (then its FILTER) are columns
 * first_arg... of the layer's rows. */
struct engine_window_call {
    const struct ast_expr *ast;
    enum engine_window_fn fn;
    const struct engine_aggregate_def *def; /* ENGINE_WINDOW_AGGREGATE */
    struct engine_expr **args;
    size_t arg_count;
    struct engine_expr *filter;      /* or NULL */
    enum engine_collation collation; /* of the first argument (min, max) */
    struct engine_window_frame frame;
    struct engine_expr *ref; /* the column the query reads: set once the
                                stage's input width is known */
    size_t layer;
    size_t first_arg; /* set by the stage */
};

/* Calls sharing PARTITION BY and ORDER BY. */
struct engine_window_layer {
    const struct ast_window *window; /* for comparing with new calls */
    struct engine_expr **partition;
    size_t partition_count;
    struct engine_expr **order;
    struct engine_sort_key *order_keys; /* .column unused */
    size_t order_count;
};

struct engine_window_plan {
    const struct ast_select *select;
    struct ast_window *resolved; /* the WINDOW clause, bases applied */
    struct engine_window_call **calls;
    size_t call_count;
    size_t call_capacity;
    struct engine_window_layer *layers;
    size_t layer_count;
    size_t layer_capacity;
};

/* A new (empty) window plan for select, whose WINDOW clause is checked
 * as SQLite's parser chains it (sqlite3WindowChain). */
int engine__window_begin(struct engine_stmt *stmt,
                         const struct ast_select *select,
                         struct engine_window_plan **out);

/* Whether ast is a call compiled by engine__window_compile_call(): it has
 * an OVER clause, or names a function that exists only as a window
 * function (row_number() alone is "misuse of window function"). */
bool engine__window_is_call(const struct ast_expr *ast);

/* Compiles a window function call into a read of its column of the
 * window stage (ctx->window), or fails as SQLite would. */
int engine__window_compile_call(struct engine_compile *ctx,
                                const struct ast_expr *ast,
                                struct engine_expr **out);

/* Adds the window stage over *op (whose output is the input every call
 * was compiled against), if plan has calls. */
int engine__window_plan_ops(struct engine_stmt *stmt,
                            struct engine_window_plan *plan,
                            struct engine_op **op);

/* The window operator of one layer (op_window.c): child yields rows of
 * pass_count input columns, then the layer's keys, then each call's
 * arguments, sorted by partition and order keys. Output: the pass_count
 * columns, then one per call. */
struct engine_op *engine__op_window(struct engine_stmt *stmt,
                                    struct engine_op *child,
                                    const struct engine_window_layer *layer,
                                    struct engine_window_call **calls,
                                    size_t call_count, size_t pass_count);

/* ---- func_window.c: one partition's values ---- */

/* A partition being computed: count rows of width values, row-major; its
 * ORDER BY values at order_offset; its rows' peer groups (rows equal on
 * every ORDER BY term: all rows without ORDER BY). */
struct engine_window_partition {
    const struct engine_value *rows;
    size_t count;
    size_t width;
    size_t order_offset;
    size_t order_count;
    const struct engine_sort_key *order_keys;
    const size_t *group_start; /* per row: first row of its peer group */
    const size_t *group_end;   /* per row: last row of its peer group */
    const size_t *group_index; /* per row: its peer group's number */
    const size_t *group_first; /* per group number: its first row */
    size_t group_count;
};

/* Computes call over partition into out[0..count), bytes in arena.
 * Frame offsets are the checked values (engine__window_offsets). */
int engine__window_compute(struct engine_exec *exec, struct engine_arena *arena,
                           const struct engine_window_call *call,
                           const struct engine_window_partition *part,
                           const struct engine_value *start_offset,
                           const struct engine_value *end_offset,
                           struct engine_value *out);

/* Evaluates and checks a call's frame offsets (windowCheckValue): ROWS
 * and GROUPS need a non-negative integer, RANGE a non-negative number. */
int engine__window_offsets(struct engine_exec *exec, struct engine_arena *arena,
                           const struct engine_window_call *call,
                           struct engine_value *start,
                           struct engine_value *end);

#endif /* SINEW_ENGINE_WINDOW_H */
