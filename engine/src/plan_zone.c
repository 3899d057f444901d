/* SPDX-License-Identifier: MIT
 *
 * plan_zone.c: the WHERE terms a scan may skip blocks by (zone.h).
 *
 * The WHERE's top-level AND is walked in the order its terms run (the
 * AND nodes a NULL left operand decides, as every top-level AND of a
 * WHERE is). Each term of the forms zone.h lists is taken while every
 * term before it is harmless; the first term that is not ends the walk,
 * since a skipped row would then miss an error or an effect of it.
 */
#include "zone.h"

#include <string.h>

#include "expr.h"
#include "plan.h"

/* Whether expr only computes: evaluating it on any row cannot fail (but
 * for memory) nor change anything, so not evaluating it changes nothing.
 * Functions (abs() overflows), LIKE (a bad ESCAPE), || (too long) and
 * subqueries (their own errors, and when they first run) are not. */
static bool is_harmless(const struct engine_expr *expr)
{
    switch (expr->op) {
    case ENGINE_EXPR_CONSTANT:
    case ENGINE_EXPR_PARAMETER:
    case ENGINE_EXPR_COLUMN:
    case ENGINE_EXPR_NEGATE:
    case ENGINE_EXPR_BIT_NOT:
    case ENGINE_EXPR_NOT:
    case ENGINE_EXPR_ARITH:
    case ENGINE_EXPR_COMPARE:
    case ENGINE_EXPR_AND:
    case ENGINE_EXPR_OR:
    case ENGINE_EXPR_IS_NULL:
    case ENGINE_EXPR_NOT_NULL:
    case ENGINE_EXPR_CAST:
    case ENGINE_EXPR_CASE:
    case ENGINE_EXPR_IN_LIST:
    case ENGINE_EXPR_TRUTH:
        break;
    default:
        return false;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (expr->args[i] != NULL && !is_harmless(expr->args[i])) {
            return false;
        }
    }
    return true;
}

static bool reads_column(const struct engine_expr *expr)
{
    if (expr->op == ENGINE_EXPR_COLUMN) {
        return true;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (expr->args[i] != NULL && reads_column(expr->args[i])) {
            return true;
        }
    }
    return false;
}

/* Whether expr reads a column of the table that keeps zones. */
static bool is_zoned_column(const struct engine_expr *expr,
                            const struct engine_table *table)
{
    return expr->op == ENGINE_EXPR_COLUMN &&
           expr->u.column < table->column_count &&
           (ptrdiff_t)expr->u.column != table->rowid_alias;
}

static bool is_value(const struct engine_expr *expr)
{
    return is_harmless(expr) && !reads_column(expr);
}

struct found {
    struct engine_zone_term items[ENGINE__ZONE_TERMS_MAX];
    size_t count;
};

static void add(struct found *found, struct engine_expr *expr, size_t column,
                size_t column_arg)
{
    if (found->count < ENGINE__ZONE_TERMS_MAX) {
        found->items[found->count++] = (struct engine_zone_term){
            .expr = expr, .column = column, .column_arg = column_arg};
    }
}

static void add_comparison(struct found *found, struct engine_expr *expr,
                           const struct engine_table *table)
{
    enum engine_compare_op op = expr->u.compare;

    if (op == ENGINE_COMPARE_NE || op == ENGINE_COMPARE_IS_NOT) {
        return;
    }
    for (size_t side = 0; side < 2; side++) {
        if (is_zoned_column(expr->args[side], table) &&
            is_value(expr->args[1 - side])) {
            add(found, expr, expr->args[side]->u.column, side);
            return;
        }
    }
}

/* The zone terms of one term of the top-level AND. */
static void add_term(struct found *found, struct engine_expr *term,
                     const struct engine_table *table)
{
    switch (term->op) {
    case ENGINE_EXPR_COMPARE:
        add_comparison(found, term, table);
        break;
    case ENGINE_EXPR_IS_NULL:
    case ENGINE_EXPR_NOT_NULL:
        if (is_zoned_column(term->args[0], table)) {
            add(found, term, term->args[0]->u.column, 0);
        }
        break;
    case ENGINE_EXPR_AND:
        /* BETWEEN: true only where both halves are */
        if (term->is_between) {
            add_comparison(found, term->args[0], table);
            add_comparison(found, term->args[1], table);
        }
        break;
    default:
        break;
    }
}

static bool is_top_and(const struct engine_expr *expr)
{
    return expr->op == ENGINE_EXPR_AND && !expr->is_between &&
           expr->is_condition && expr->null_decides;
}

/* Walks the terms in order; false once a term is not harmless (the walk
 * stops there). */
static bool walk(struct engine_expr *expr, const struct engine_table *table,
                 struct found *found)
{
    if (is_top_and(expr)) {
        return walk(expr->args[0], table, found) &&
               walk(expr->args[1], table, found);
    }
    add_term(found, expr, table);
    return is_harmless(expr);
}

int engine__plan_zones(struct engine_stmt *stmt,
                       const struct engine_table *table,
                       struct engine_expr *where, struct engine_zone_plan **out)
{
    struct engine_zone_plan *plan;
    struct found found;

    ASSERT(stmt != NULL);
    *out = NULL;
    if (table == NULL || where == NULL) {
        return 0;
    }
    found.count = 0;
    walk(where, table, &found);
    if (found.count == 0) {
        return 0;
    }
    plan = engine__plan_alloc(stmt, sizeof(*plan));
    if (plan == NULL) {
        return COMMON_ENOMEM;
    }
    plan->terms = engine__plan_alloc(stmt, found.count * sizeof(*plan->terms));
    plan->checks =
        engine__plan_alloc(stmt, found.count * sizeof(*plan->checks));
    if (plan->terms == NULL || plan->checks == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(plan->terms, found.items, found.count * sizeof(*plan->terms));
    plan->term_count = found.count;
    *out = plan;
    return 0;
}
