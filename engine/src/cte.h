/* SPDX-License-Identifier: MIT
 *
 * cte.h: common table expressions (WITH): the pass that binds FROM names
 * to them (plan_cte_bind.c), their planning (plan_cte.c, and
 * plan_compound.c for a recursive one's compound), and the operators of
 * a recursive one (op_recursive.c).
 */
#ifndef SINEW_ENGINE_CTE_H
#define SINEW_ENGINE_CTE_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "engine_int.h"
#include "plan.h"

/* Rewrites every FROM item of stmt->ast that names a CTE into a reference
 * to it (ast_from_item.cte), its body bound on first use; SQLite's
 * errors for circular and recursive references. Runs before planning. */
int engine__plan_cte_bind(struct engine_stmt *stmt);
/* The same for a SELECT planned outside the statement's tree (a view's
 * body): its own WITH clauses only. */
int engine__plan_cte_bind_select(struct engine_stmt *stmt,
                                 struct ast_select *select);

/* A FROM item referring to a CTE, its body being body (item->cte->select,
 * or a copy of it without ORDER BY): what plan_subquery_source() needs
 * (plan_select_into()'s outputs), the column list applied. */
int engine__plan_cte_source(struct engine_stmt *stmt,
                            const struct ast_from_item *item,
                            const struct ast_select *body,
                            struct engine_op **root, char ***names,
                            enum engine_affinity **affinities,
                            struct engine_expr ***projected, size_t *count);

/* A recursive term's FROM item that reads the recursion's current row. */
int engine__plan_cte_reader(struct engine_stmt *stmt,
                            const struct ast_from_item *item,
                            struct engine_scope *scope, struct engine_op **op);

/* A recursive CTE being planned (plan_cte.c). */
struct engine_cte_plan;

/* plan_compound.c: the body of a recursive CTE, whose last
 * recursive_terms terms read it, planned with plan's help; outputs as
 * engine__plan_compound() gives them for ENGINE_COMPOUND_FROM. */
int engine__plan_compound_recursive(
    struct engine_stmt *stmt, const struct ast_select *select,
    size_t recursive_terms, struct engine_cte_plan *plan,
    struct engine_op **root, char ***names, enum engine_affinity **affinities,
    struct engine_expr ***projected, size_t *column_count);

/* Called by engine__plan_compound_recursive() once the setup terms are
 * planned: the CTE's columns as its leftmost term gives them (projected:
 * typed as a FROM subquery's), which the recursive terms read. */
int engine__plan_cte_setup_done(struct engine_cte_plan *plan,
                                char *const *names,
                                const enum engine_affinity *affinities,
                                struct engine_expr *const *projected,
                                size_t width);

/* Called last: the recursion over setup's rows and the terms' plans.
 * collations: the UNION's (rows seen once), NULL for UNION ALL; keys:
 * the ORDER BY that orders the queue (key_count 0: first in, first out);
 * limit and offset may be NULL. */
int engine__plan_cte_build(struct engine_cte_plan *plan,
                           struct engine_op *setup,
                           const struct engine_select_arm *terms,
                           size_t term_count,
                           const enum engine_collation *collations,
                           const struct engine_sort_key *keys, size_t key_count,
                           struct engine_expr *limit,
                           struct engine_expr *offset, struct engine_op **root);

/* ---- op_recursive.c ---- */

/* The row a recursion hands its recursive terms, shared by the recursive
 * operator and its readers (in the plan arena). is_real (width entries,
 * borrowed) marks the REAL columns, whose integers read as REAL. */
struct engine_recursion;
struct engine_recursion *engine__recursion_new(struct engine_stmt *stmt,
                                               size_t width,
                                               const bool *is_real);

/* A source of one row: the recursion's current one. */
struct engine_op *engine__op_recursion_read(struct engine_stmt *stmt,
                                            struct engine_recursion *run);

/* The recursive query (SQLite's generateWithRecursiveQuery()): setup's
 * rows go into a queue; each row taken from it is output and then each
 * of steps (step_count plans, reading it through run) adds its rows to
 * the queue, until the queue is empty or LIMIT rows are out. */
struct engine_op *
engine__op_recursive(struct engine_stmt *stmt, struct engine_recursion *run,
                     struct engine_op *setup, struct engine_op **steps,
                     size_t step_count, const enum engine_collation *collations,
                     const struct engine_sort_key *keys, size_t key_count,
                     struct engine_expr *limit, struct engine_expr *offset);

#endif /* SINEW_ENGINE_CTE_H */
