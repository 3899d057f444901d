/* SPDX-License-Identifier: MIT
 *
 * jit_plan.h: the JIT inside the engine. A query whose leading operators
 * are a full scan of one table, a WHERE of comparisons, IN lists and NULL
 * tests over integer columns, and aggregates count/sum/min/max without
 * GROUP BY, is also given a pipeline kernel spec (plan_jit.c); its
 * operator (op_jit.c) runs the compiled kernel over the table's column
 * arrays and, whenever it cannot (JIT off, a small table, a column
 * holding other than integers, a parameter that is not an integer, a sum
 * that overflows), runs the interpreter's operators for the same query
 * instead, so results never depend on the JIT (docs/engine.md, "JIT").
 */
#ifndef SINEW_ENGINE_JIT_PLAN_H
#define SINEW_ENGINE_JIT_PLAN_H

#include "engine_int.h"
#include "jit.h"

/* Tables with fewer live rows run in the interpreter: compiling a kernel
 * costs about as much as the interpreter spends on this many rows
 * (docs/engine.md, "JIT", gives the measurement). */
#define ENGINE__JIT_MIN_ROWS 2048

/* The most bytes of code one database handle keeps installed. */
#define ENGINE__JIT_CODE_CAP ((size_t)64 << 20)

struct engine_jit_plan {
    struct engine_jit_pipe_spec spec; /* checked and isa set per kernel */
    struct engine_table *table;
    /* The scan's zone terms (zone.h), or NULL: the kernel passes over the
     * blocks they rule out, as the scan would. */
    const struct engine_zone_plan *zones;
    /* The table column each spec column reads; SIZE_MAX for the rowid. */
    size_t table_columns[ENGINE__JIT_PIPE_COLUMNS];
    /* Each spec parameter: a CONSTANT or PARAMETER node, evaluated at the
     * start of each run. */
    struct engine_expr *params[ENGINE__JIT_PIPE_PARAMS];
    /* Per output column of the aggregate operator: its aggregate in spec,
     * or -1 (an unused slot: NULL). */
    int32_t *outputs;
    size_t output_count;
};

/* aggregate (the interpreter's operator over source, filtered by where,
 * which may be NULL) wrapped in the JIT's operator when the shape is one
 * the JIT covers, else aggregate itself; NULL when out of memory. */
struct engine_op *engine__jit_plan_aggregate(
    struct engine_stmt *stmt, struct engine_op *aggregate,
    struct engine_op *source, struct engine_expr *where,
    const struct engine_aggregate_spec *specs, size_t spec_count);

/* The operator: plan's kernel when it can, else aggregate (its child). */
struct engine_op *engine__op_jit(struct engine_stmt *stmt,
                                 struct engine_op *aggregate,
                                 const struct engine_jit_plan *plan);

#endif /* SINEW_ENGINE_JIT_PLAN_H */
