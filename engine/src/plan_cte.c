/* SPDX-License-Identifier: MIT
 *
 * plan_cte.c: planning a FROM item that reads a common table expression
 * (plan_cte_bind.c made it one).
 *
 * A CTE is planned as a FROM subquery over its body at each reference,
 * then its column list, if any, renames the columns ("table c has 1
 * values for 2 columns" when the counts differ, as resolveFromTermToCte()
 * checks against the leftmost SELECT). Unlike a subquery's, its "rowid"
 * is no column at all (SQLite gives the CTE's table no rowid).
 *
 * A recursive CTE's compound is planned by plan_compound.c, which calls
 * back here: once its setup terms are planned, their columns become those
 * the recursive terms read (engine__plan_cte_reader); then the recursion
 * operator (op_recursive.c) is made over the setup and the terms.
 */
#include <stdio.h>
#include <string.h>

#include "cte.h"

struct engine_cte_plan {
    struct engine_stmt *stmt;
    struct ast_cte *cte;
    struct engine_recursion *run; /* once the setup is planned */
    char **names;                 /* the columns the terms read */
    const enum engine_affinity *affinities;
    struct engine_expr *const *projected;
    size_t width;
};

/* The leftmost SELECT's result count when it is known before planning
 * (no "*"), so that a column list that does not fit is reported before
 * any error of the body, as SQLite does; SIZE_MAX otherwise. */
static size_t known_width(const struct ast_select *select)
{
    while (select->compound != AST_COMPOUND_NONE) {
        select = select->left;
    }
    if (select->columns == NULL) {
        return select->value_column_count;
    }
    for (size_t i = 0; i < select->column_count; i++) {
        if (select->columns[i].kind != AST_RESULT_EXPR) {
            return SIZE_MAX;
        }
    }
    return select->column_count;
}

static int check_width(struct engine_stmt *stmt, const struct ast_cte *cte,
                       size_t width)
{
    if (cte->columns == NULL || width == SIZE_MAX ||
        width == cte->column_count) {
        return 0;
    }
    return engine__db_error(stmt->db, ENGINE_ESQL,
                            "table %s has %zu values for %zu columns",
                            cte->name, width, cte->column_count);
}

/* The CTE's column names: its column list, or the body's; a copy. */
static int cte_names(struct engine_stmt *stmt, const struct ast_cte *cte,
                     char *const *names, size_t width, char ***out)
{
    char **copy = engine__plan_alloc(stmt, (width + 1) * sizeof(*copy));
    int rc = check_width(stmt, cte, width);

    if (rc != 0) {
        return rc;
    }
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < width; i++) {
        copy[i] = cte->columns != NULL ? (char *)cte->columns[i] : names[i];
    }
    *out = copy;
    return 0;
}

static int plan_recursive(struct engine_stmt *stmt, struct ast_cte *cte,
                          struct engine_op **root, char ***names,
                          enum engine_affinity **affinities,
                          struct engine_expr ***projected, size_t *count)
{
    struct engine_cte_plan plan = {.stmt = stmt, .cte = cte};
    void *outer = cte->planning;
    int rc;

    cte->planning = &plan;
    rc = engine__plan_compound_recursive(stmt, cte->select,
                                         cte->recursive_terms, &plan, root,
                                         names, affinities, projected, count);
    cte->planning = outer;
    return rc;
}

int engine__plan_cte_source(struct engine_stmt *stmt,
                            const struct ast_from_item *item,
                            const struct ast_select *body,
                            struct engine_op **root, char ***names,
                            enum engine_affinity **affinities,
                            struct engine_expr ***projected, size_t *count)
{
    struct ast_cte *cte = item->cte;
    struct engine_select_arm arm;
    int rc = check_width(stmt, cte, known_width(cte->select));

    if (rc != 0) {
        return rc;
    }
    if (cte->recursive_terms > 0) {
        rc = plan_recursive(stmt, cte, root, names, affinities, projected,
                            count);
    } else if (body->compound != AST_COMPOUND_NONE) {
        rc = engine__plan_compound(stmt, body, ENGINE_COMPOUND_FROM, root,
                                   names, affinities, projected, count);
    } else {
        rc = engine__plan_select_arm(stmt, body, &arm);
        *root = arm.root;
        *names = arm.names;
        *affinities = arm.affinities;
        *projected = arm.projected;
        *count = arm.column_count;
    }
    return rc != 0 ? rc : cte_names(stmt, cte, *names, *count, names);
}

int engine__plan_cte_setup_done(struct engine_cte_plan *plan,
                                char *const *names,
                                const enum engine_affinity *affinities,
                                struct engine_expr *const *projected,
                                size_t width)
{
    bool *is_real = engine__plan_alloc(plan->stmt, width + 1);
    int rc = cte_names(plan->stmt, plan->cte, names, width, &plan->names);

    rc = rc != 0 ? rc
                 : engine__plan_unique_names(plan->stmt, plan->names, width);
    if (rc != 0 || is_real == NULL) {
        return rc != 0 ? rc : COMMON_ENOMEM;
    }
    for (size_t c = 0; c < width; c++) {
        is_real[c] = affinities[c] == ENGINE_AFFINITY_REAL;
    }
    plan->affinities = affinities;
    plan->projected = projected;
    plan->width = width;
    plan->run = engine__recursion_new(plan->stmt, width, is_real);
    return plan->run == NULL ? COMMON_ENOMEM : 0;
}

int engine__plan_cte_reader(struct engine_stmt *stmt,
                            const struct ast_from_item *item,
                            struct engine_scope *scope, struct engine_op **op)
{
    const struct engine_cte_plan *plan = item->cte->planning;

    if (plan == NULL || plan->run == NULL) {
        /* Not reached: the binder lets no other reference through. */
        return engine__db_error(stmt->db, ENGINE_ESQL, "circular reference: %s",
                                item->cte->name);
    }
    scope->columns =
        engine__plan_alloc(stmt, (plan->width + 1) * sizeof(*scope->columns));
    if (scope->columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t c = 0; c < plan->width; c++) {
        const struct engine_expr *e =
            plan->projected != NULL ? plan->projected[c] : NULL;

        scope->columns[c].name = plan->names[c];
        scope->columns[c].affinity = plan->affinities[c];
        scope->columns[c].collation =
            e != NULL ? e->collation : ENGINE_COLLATION_BINARY;
        scope->columns[c].has_collation = e != NULL && e->has_collation;
        scope->columns[c].untyped = e != NULL && !e->has_affinity;
    }
    scope->column_count = plan->width;
    scope->alias = item->alias;
    scope->rowid_column = -1;
    scope->null_rowid = false;
    *op = engine__op_recursion_read(stmt, plan->run);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

int engine__plan_cte_build(struct engine_cte_plan *plan,
                           struct engine_op *setup,
                           const struct engine_select_arm *terms,
                           size_t term_count,
                           const enum engine_collation *collations,
                           const struct engine_sort_key *keys, size_t key_count,
                           struct engine_expr *limit,
                           struct engine_expr *offset, struct engine_op **root)
{
    struct engine_op **steps =
        engine__plan_alloc(plan->stmt, (term_count + 1) * sizeof(*steps));

    if (steps == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < term_count; i++) {
        steps[i] = terms[i].root;
    }
    *root =
        engine__op_recursive(plan->stmt, plan->run, setup, steps, term_count,
                             collations, keys, key_count, limit, offset);
    return *root == NULL ? COMMON_ENOMEM : 0;
}
