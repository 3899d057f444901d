/* SPDX-License-Identifier: MIT
 *
 * tvf.h: table-valued functions in FROM, name(args) [AS alias]: SQLite
 * 3.40's json_each(X [, PATH]) and json_tree(X [, PATH]) (json.c's
 * eponymous virtual tables). Planned by plan_tvf.c, their rows made by
 * func_json_each.c, and joined to the items to their left by
 * op_lateral.c when their arguments read those items' columns.
 *
 * Columns: key, value, type, atom, id, parent, fullkey, path, then the
 * HIDDEN json and root (left out of "*" and NATURAL), then the rowid.
 * The arguments are SQLite's constraints "json = X" and "root = PATH";
 * sinew takes them only from the call, and refuses a query whose WHERE or
 * ON names a hidden column no argument gives (SQLite would take its
 * equality as the argument).
 */
#ifndef SINEW_ENGINE_TVF_H
#define SINEW_ENGINE_TVF_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "engine_int.h"
#include "join_int.h"
#include "plan.h"

/* json_each and json_tree's columns before the rowid. */
#define ENGINE__TVF_COLUMNS 10

/* Checks function item (item->function) as SQLite's name lookup does:
 * "'t' is not a function" for a table or view of its name, "no such
 * table: f" for a function sinew does not have. */
int engine__tvf_check(struct engine_stmt *stmt,
                      const struct ast_from_item *item);

/* The source of function item of select and its scope (the arguments not
 * compiled yet). */
int engine__tvf_source(struct engine_stmt *stmt,
                       const struct ast_select *select,
                       const struct ast_from_item *item,
                       struct engine_scope *scope, struct engine_op **op);

/* Compiles item's arguments into its source op against args_scope (the
 * items to its left; NULL for none): *lateral is set when they read a
 * column of it. */
int engine__tvf_arguments(struct engine_stmt *stmt,
                          const struct ast_from_item *item,
                          struct engine_scope *args_scope, struct engine_op *op,
                          bool *lateral);

/* The function items of a join plan: their arguments compiled against the
 * items to their left (reading an item to the right is not supported),
 * each that reads them marked lateral (plan_tvf.c). */
int engine__tvf_join_arguments(struct engine_join_plan *plan);

/* ---- operators ---- */

/* json_each (recursive false) or json_tree over args (compiled; 0 to 2),
 * evaluated when the operator opens: over no row, or over the row bound
 * by engine__op_json_each_bind() (func_json_each.c). */
struct engine_op *engine__op_json_each(struct engine_stmt *stmt,
                                       bool recursive);
void engine__op_json_each_set_args(struct engine_op *op,
                                   struct engine_expr **args, size_t arg_count);
void engine__op_json_each_bind(struct engine_op *op,
                               const struct engine_batch *batch, uint32_t row);

/* The lateral join (op_lateral.c) of left and right, an INNER or LEFT
 * join as spec says (its keys unused): for each left row, source (the
 * json_each operator at the bottom of right) is bound to that row, right
 * opened and read whole, and the pairs passing spec's predicate are
 * output, with a NULL row for a LEFT join's left row none passed. */
struct engine_op *engine__op_lateral(struct engine_stmt *stmt,
                                     struct engine_op *left,
                                     struct engine_op *right,
                                     struct engine_op *source,
                                     const struct engine_join_spec *spec);

#endif /* SINEW_ENGINE_TVF_H */
