/* SPDX-License-Identifier: MIT
 *
 * ast_util.c: questions the planner asks of parse trees: are two
 * expressions the same (sqlite3ExprCompare: GROUP BY keys and aggregates
 * written twice are matched this way), does one hold an aggregate, and is
 * one constant or made of GROUP BY terms (the HAVING terms that move to
 * the WHERE).
 */
#include <string.h>
#include <strings.h>

#include "func.h"
#include "plan.h"

static bool names_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcasecmp(a, b) == 0;
}

static bool values_equal(const struct engine_value *a,
                         const struct engine_value *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case ENGINE_INTEGER:
        return a->u.i == b->u.i;
    case ENGINE_FLOAT:
        return memcmp(&a->u.r, &b->u.r, sizeof(double)) == 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        return a->u.s.size == b->u.s.size &&
               (a->u.s.size == 0 ||
                memcmp(a->u.s.bytes, b->u.s.bytes, a->u.s.size) == 0);
    default:
        return true;
    }
}

static bool lists_equal(const struct ast_expr_list *a,
                        const struct ast_expr_list *b)
{
    if (a->count != b->count) {
        return false;
    }
    for (size_t i = 0; i < a->count; i++) {
        if (!engine__ast_equal(a->items[i], b->items[i])) {
            return false;
        }
    }
    return true;
}

static bool pair_equal(const struct ast_expr *a1, const struct ast_expr *b1,
                       const struct ast_expr *a2, const struct ast_expr *b2)
{
    return engine__ast_equal(a1, b1) && engine__ast_equal(a2, b2);
}

static bool function_equal(const struct ast_expr *a, const struct ast_expr *b)
{
    return names_equal(a->u.function.name, b->u.function.name) &&
           a->u.function.star == b->u.function.star &&
           a->u.function.distinct == b->u.function.distinct &&
           lists_equal(&a->u.function.args, &b->u.function.args) &&
           engine__ast_equal(a->u.function.filter, b->u.function.filter) &&
           a->u.function.over == b->u.function.over;
}

static bool kind_equal(const struct ast_expr *a, const struct ast_expr *b)
{
    switch (a->kind) {
    case AST_LITERAL:
    case AST_BOOLEAN:
        return values_equal(&a->u.literal, &b->u.literal);
    case AST_PARAMETER:
        return a->u.parameter.index == b->u.parameter.index;
    case AST_COLUMN:
        return names_equal(a->u.column.table, b->u.column.table) &&
               names_equal(a->u.column.name, b->u.column.name);
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return a->u.unary.op == b->u.unary.op &&
               engine__ast_equal(a->u.unary.operand, b->u.unary.operand);
    case AST_BINARY:
        return a->u.binary.op == b->u.binary.op &&
               pair_equal(a->u.binary.left, b->u.binary.left, a->u.binary.right,
                          b->u.binary.right);
    case AST_COLLATE:
        return names_equal(a->u.collate.name, b->u.collate.name) &&
               engine__ast_equal(a->u.collate.operand, b->u.collate.operand);
    case AST_CAST:
        return names_equal(a->u.cast.type_name, b->u.cast.type_name) &&
               engine__ast_equal(a->u.cast.operand, b->u.cast.operand);
    case AST_FUNCTION:
        return function_equal(a, b);
    default:
        /* CASE, BETWEEN, LIKE, IN and subqueries: matched by their text,
         * which is exact for the same expression written the same way. */
        return a->text != NULL && b->text != NULL &&
               strcmp(a->text, b->text) == 0;
    }
}

bool engine__ast_equal(const struct ast_expr *a, const struct ast_expr *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return a->kind == b->kind && kind_equal(a, b);
}

static size_t list_count_aggregates(const struct ast_expr_list *list)
{
    size_t count = 0;

    for (size_t i = 0; i < list->count; i++) {
        count += engine__ast_count_aggregates(list->items[i]);
    }
    return count;
}

static bool function_is_aggregate(const struct ast_expr *ast)
{
    const char *name = ast->u.function.name;
    size_t argc = ast->u.function.args.count;

    if (ast->u.function.over != NULL) {
        return false; /* a window function (plan_window.c) */
    }
    if (ast->u.function.star) {
        return true;
    }
    if ((strcasecmp(name, "min") == 0 || strcasecmp(name, "max") == 0) &&
        argc != 1) {
        return false;
    }
    return engine__aggregate_lookup(name, strlen(name)) != NULL;
}

/* Aggregates in a window's PARTITION BY and ORDER BY make the query an
 * aggregate one, as SQLite's resolver sees them ("rank() OVER (ORDER BY
 * sum(x))"). */
static size_t window_count_aggregates(const struct ast_window *w)
{
    size_t count = 0;

    if (w == NULL) {
        return 0;
    }
    count = list_count_aggregates(&w->partition_by);
    for (size_t i = 0; i < w->order_by_count; i++) {
        count += engine__ast_count_aggregates(w->order_by[i].expr);
    }
    return count;
}

static size_t count3(const struct ast_expr *a, const struct ast_expr *b,
                     const struct ast_expr *c)
{
    return engine__ast_count_aggregates(a) + engine__ast_count_aggregates(b) +
           engine__ast_count_aggregates(c);
}

size_t engine__ast_count_aggregates(const struct ast_expr *ast)
{
    if (ast == NULL) {
        return 0;
    }
    switch (ast->kind) {
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return engine__ast_count_aggregates(ast->u.unary.operand);
    case AST_BINARY:
        return count3(ast->u.binary.left, ast->u.binary.right, NULL);
    case AST_COLLATE:
        return engine__ast_count_aggregates(ast->u.collate.operand);
    case AST_CAST:
        return engine__ast_count_aggregates(ast->u.cast.operand);
    case AST_CASE:
        return count3(ast->u.case_.operand, ast->u.case_.else_, NULL) +
               list_count_aggregates(&ast->u.case_.whens) +
               list_count_aggregates(&ast->u.case_.thens);
    case AST_BETWEEN:
        return count3(ast->u.between.operand, ast->u.between.low,
                      ast->u.between.high);
    case AST_LIKE:
        return count3(ast->u.like.operand, ast->u.like.pattern,
                      ast->u.like.escape);
    case AST_IN_LIST:
        /* "x IN ()" is the integer 0 to SQLite (children_any below). */
        if (ast->u.in_list.items.count == 0) {
            return 0;
        }
        return engine__ast_count_aggregates(ast->u.in_list.operand) +
               list_count_aggregates(&ast->u.in_list.items);
    case AST_IN_SELECT:
        return engine__ast_count_aggregates(ast->u.in_select.operand);
    case AST_FUNCTION:
        return (function_is_aggregate(ast) ? 1 : 0) +
               list_count_aggregates(&ast->u.function.args) +
               window_count_aggregates(ast->u.function.over);
    default:
        return 0;
    }
}

bool engine__ast_has_aggregate(const struct ast_expr *ast)
{
    return engine__ast_count_aggregates(ast) > 0;
}

static bool list_constant_or_group_by(const struct ast_expr_list *list,
                                      const struct ast_expr_list *group_by,
                                      const bool *binary)
{
    for (size_t i = 0; i < list->count; i++) {
        if (!engine__ast_constant_or_group_by(list->items[i], group_by,
                                              binary)) {
            return false;
        }
    }
    return true;
}

static bool function_constant_or_group_by(const struct ast_expr *ast,
                                          const struct ast_expr_list *group_by,
                                          const bool *binary)
{
    const char *name = ast->u.function.name;
    const struct engine_scalar_def *def;

    if (function_is_aggregate(ast)) {
        return false;
    }
    def = engine__scalar_lookup(name, strlen(name));
    return def != NULL && def->deterministic &&
           list_constant_or_group_by(&ast->u.function.args, group_by, binary);
}

static bool three_constant_or_group_by(const struct ast_expr *a,
                                       const struct ast_expr *b,
                                       const struct ast_expr *c,
                                       const struct ast_expr_list *group_by,
                                       const bool *binary)
{
    return engine__ast_constant_or_group_by(a, group_by, binary) &&
           engine__ast_constant_or_group_by(b, group_by, binary) &&
           engine__ast_constant_or_group_by(c, group_by, binary);
}

/* sqlite3ExprIsConstantOrGroupBy() (expr.c): a subexpression equal to a
 * GROUP BY term whose collation is BINARY counts as constant; otherwise a
 * column, a subquery, an aggregate or a non-deterministic function makes
 * the expression variable. */
bool engine__ast_constant_or_group_by(const struct ast_expr *ast,
                                      const struct ast_expr_list *group_by,
                                      const bool *binary)
{
    if (ast == NULL) {
        return true;
    }
    for (size_t i = 0; i < group_by->count; i++) {
        if (binary[i] && engine__ast_equal(ast, group_by->items[i])) {
            return true;
        }
    }
    switch (ast->kind) {
    case AST_LITERAL:
    case AST_BOOLEAN:
    case AST_PARAMETER:
        return true;
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return engine__ast_constant_or_group_by(ast->u.unary.operand, group_by,
                                                binary);
    case AST_BINARY:
        return three_constant_or_group_by(
            ast->u.binary.left, ast->u.binary.right, NULL, group_by, binary);
    case AST_COLLATE:
        return engine__ast_constant_or_group_by(ast->u.collate.operand,
                                                group_by, binary);
    case AST_CAST:
        return engine__ast_constant_or_group_by(ast->u.cast.operand, group_by,
                                                binary);
    case AST_CASE:
        return three_constant_or_group_by(ast->u.case_.operand,
                                          ast->u.case_.else_, NULL, group_by,
                                          binary) &&
               list_constant_or_group_by(&ast->u.case_.whens, group_by,
                                         binary) &&
               list_constant_or_group_by(&ast->u.case_.thens, group_by, binary);
    case AST_BETWEEN:
        return three_constant_or_group_by(
            ast->u.between.operand, ast->u.between.low, ast->u.between.high,
            group_by, binary);
    case AST_LIKE:
        return three_constant_or_group_by(ast->u.like.operand,
                                          ast->u.like.pattern,
                                          ast->u.like.escape, group_by, binary);
    case AST_IN_LIST:
        return engine__ast_constant_or_group_by(ast->u.in_list.operand,
                                                group_by, binary) &&
               list_constant_or_group_by(&ast->u.in_list.items, group_by,
                                         binary);
    case AST_FUNCTION:
        return function_constant_or_group_by(ast, group_by, binary);
    default: /* columns and subqueries */
        return false;
    }
}

static bool list_any(const struct ast_expr_list *list,
                     bool (*test)(const struct ast_expr *, const void *),
                     const void *arg)
{
    for (size_t i = 0; i < list->count; i++) {
        if (engine__ast_any(list->items[i], test, arg)) {
            return true;
        }
    }
    return false;
}

static bool any3(const struct ast_expr *a, const struct ast_expr *b,
                 const struct ast_expr *c,
                 bool (*test)(const struct ast_expr *, const void *),
                 const void *arg)
{
    return engine__ast_any(a, test, arg) || engine__ast_any(b, test, arg) ||
           engine__ast_any(c, test, arg);
}

static bool window_any(const struct ast_window *w,
                       bool (*test)(const struct ast_expr *, const void *),
                       const void *arg)
{
    if (w == NULL) {
        return false;
    }
    for (size_t i = 0; i < w->order_by_count; i++) {
        if (engine__ast_any(w->order_by[i].expr, test, arg)) {
            return true;
        }
    }
    return list_any(&w->partition_by, test, arg);
}

static bool children_any(const struct ast_expr *ast,
                         bool (*test)(const struct ast_expr *, const void *),
                         const void *arg)
{
    switch (ast->kind) {
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return engine__ast_any(ast->u.unary.operand, test, arg);
    case AST_BINARY:
        return any3(ast->u.binary.left, ast->u.binary.right, NULL, test, arg);
    case AST_COLLATE:
        return engine__ast_any(ast->u.collate.operand, test, arg);
    case AST_CAST:
        return engine__ast_any(ast->u.cast.operand, test, arg);
    case AST_CASE:
        return any3(ast->u.case_.operand, ast->u.case_.else_, NULL, test,
                    arg) ||
               list_any(&ast->u.case_.whens, test, arg) ||
               list_any(&ast->u.case_.thens, test, arg);
    case AST_BETWEEN:
        return any3(ast->u.between.operand, ast->u.between.low,
                    ast->u.between.high, test, arg);
    case AST_LIKE:
        return any3(ast->u.like.operand, ast->u.like.pattern,
                    ast->u.like.escape, test, arg);
    case AST_IN_LIST:
        /* SQLite's parser makes "x IN ()" the integer 0 (parse.y), so
         * nothing looks at x: not its columns, not its aggregates. */
        if (ast->u.in_list.items.count == 0) {
            return false;
        }
        return engine__ast_any(ast->u.in_list.operand, test, arg) ||
               list_any(&ast->u.in_list.items, test, arg);
    case AST_IN_SELECT:
        return engine__ast_any(ast->u.in_select.operand, test, arg);
    case AST_FUNCTION:
        return engine__ast_any(ast->u.function.filter, test, arg) ||
               list_any(&ast->u.function.args, test, arg) ||
               window_any(ast->u.function.over, test, arg);
    default:
        return false;
    }
}

bool engine__ast_any(const struct ast_expr *ast,
                     bool (*test)(const struct ast_expr *, const void *),
                     const void *arg)
{
    return ast != NULL && (test(ast, arg) || children_any(ast, test, arg));
}

static bool is_called_function(const struct ast_expr *ast, const void *unused)
{
    const char *name;

    (void)unused;
    if (ast->kind == AST_LIKE) {
        return true;
    }
    if (ast->kind != AST_FUNCTION) {
        return false;
    }
    name = ast->u.function.name;
    return strcasecmp(name, "coalesce") != 0 &&
           strcasecmp(name, "ifnull") != 0 && strcasecmp(name, "iif") != 0;
}

bool engine__ast_calls_function(const struct ast_expr *ast)
{
    return engine__ast_any(ast, is_called_function, NULL);
}
