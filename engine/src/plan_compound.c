/* SPDX-License-Identifier: MIT
 *
 * plan_compound.c: planning a compound SELECT (UNION, UNION ALL,
 * INTERSECT, EXCEPT, any number chained left to right), after SQLite
 * 3.40's resolve.c and select.c:
 *
 * - The terms are planned right to left, as resolveSelectStep() resolves
 *   them, so the rightmost error comes first; after each term but the last,
 *   its column count must equal its right neighbour's ("SELECTs to the left
 *   and right of UNION do not have the same number of result columns").
 * - The result columns are named by the leftmost SELECT. As a FROM
 *   subquery the compound's columns have the leftmost SELECT's affinity and
 *   collation (sqlite3SelectAddColumnTypeAndCollation walks to pPrior); in
 *   an expression (IN, scalar) the rightmost's (the compound's Select is
 *   its last term, whose pEList exprINAffinity and the IN key read).
 * - Duplicates are rows equal under each column's collation as
 *   multiSelectCollSeq() finds it: that of the first term, from the left,
 *   whose expression has one (a column, a COLLATE), else BINARY.
 * - ORDER BY terms (resolveCompoundOrderBy) are a result column number, or
 *   an AS name of any term, or an expression equal to a term's result,
 *   terms tried from the left; else "1st ORDER BY term does not match any
 *   column in the result set".
 * - Without ORDER BY: UNION ALL streams, the other operators keep their
 *   rows in an ordered set (op_compound.c's set). With ORDER BY: every term
 *   is sorted on the merge key and merged (multiSelectOrderBy()), the key
 *   being the ORDER BY plus, for all but UNION ALL, every other column.
 * - A recursive CTE's body (engine__plan_compound_recursive, cte.h): the
 *   same terms and ORDER BY, built into op_recursive.c's queue instead.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cte.h"
#include "plan.h"
#include "window.h"

struct compound_plan {
    struct engine_stmt *stmt;
    const struct ast_select *top;
    size_t arm_count;
    const struct ast_select **arms;  /* the SELECTs, leftmost first */
    enum ast_compound_op *ops;       /* ops[i] joins arms[i-1] and arms[i] */
    struct engine_select_arm *plans; /* planned arms */
    size_t width;                    /* result columns */
    struct engine_sort_key *order;   /* the ORDER BY, resolved */
    size_t order_count;
    struct engine_expr *limit;  /* LIMIT, or NULL */
    struct engine_expr *offset; /* OFFSET, or NULL */
};

static const char *op_name(enum ast_compound_op op)
{
    switch (op) {
    case AST_COMPOUND_UNION_ALL:
        return "UNION ALL";
    case AST_COMPOUND_INTERSECT:
        return "INTERSECT";
    case AST_COMPOUND_EXCEPT:
        return "EXCEPT";
    default:
        return "UNION";
    }
}

static const char *ordinal_suffix(size_t n)
{
    if (n % 100 >= 11 && n % 100 <= 13) {
        return "th";
    }
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* Lists the terms of the left-deep tree under top, leftmost first. */
static int collect_arms(struct compound_plan *plan)
{
    const struct ast_select *node = plan->top;
    size_t n = 1;

    for (; node->compound != AST_COMPOUND_NONE; node = node->left) {
        n++;
    }
    plan->arms = engine__plan_alloc(plan->stmt, n * sizeof(*plan->arms));
    plan->ops = engine__plan_alloc(plan->stmt, n * sizeof(*plan->ops));
    plan->plans = engine__plan_alloc(plan->stmt, n * sizeof(*plan->plans));
    if (plan->arms == NULL || plan->ops == NULL || plan->plans == NULL) {
        return COMMON_ENOMEM;
    }
    plan->arm_count = n;
    node = plan->top;
    for (size_t i = n - 1; i > 0; i--) {
        plan->arms[i] = node->right;
        plan->ops[i] = node->compound;
        node = node->left;
    }
    plan->arms[0] = node;
    return 0;
}

/* A VALUES term's result columns are typed by its first row: its
 * expressions are compiled again (they evaluate nowhere) to give the
 * term's affinities and collations. A VALUES of several rows right of an
 * operator is, by parse.y's selectnowith rule, "SELECT * FROM (VALUES
 * ...)": its columns are column references, which have a collation
 * (BINARY if the row gives none: term_collation), and a REAL one reads
 * integers as REAL ("SELECT 1, 1 UNION ALL VALUES (2, 0.0), (3, 4)" gives
 * 4.0). */
static int type_values(struct compound_plan *plan, size_t i)
{
    const struct ast_select *arm = plan->arms[i];
    struct engine_select_arm *planned = &plan->plans[i];
    bool wrapped = i > 0 && arm->value_row_count > 1;
    size_t width = planned->column_count;
    struct engine_expr **first =
        engine__plan_alloc(plan->stmt, (width + 1) * sizeof(*first));
    bool *is_real = engine__plan_alloc(plan->stmt, width + 1);
    bool any = false;
    struct engine_compile ctx;

    if (first == NULL || is_real == NULL) {
        return COMMON_ENOMEM;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.stmt = plan->stmt;
    ctx.clause = "VALUES";
    for (size_t c = 0; c < width; c++) {
        int rc = engine__compile_expr(&ctx, arm->values[c], &first[c]);

        if (rc != 0) {
            return rc;
        }
        planned->affinities[c] = first[c]->affinity;
        is_real[c] = wrapped && first[c]->affinity == ENGINE_AFFINITY_REAL;
        any = any || is_real[c];
    }
    planned->projected = first;
    if (any) {
        planned->root =
            engine__op_real_affinity(plan->stmt, planned->root, is_real);
    }
    return planned->root == NULL ? COMMON_ENOMEM : 0;
}

/* IgnorableDistinct() (select.c): a term whose rows go into the
 * ephemeral index of a UNION, INTERSECT or EXCEPT without ORDER BY drops
 * its own DISTINCT, the index keeping the LAST of equal rows instead of
 * DISTINCT's first. That is every term unless all operators from it up
 * to the top are UNION ALL. A copy of the term without DISTINCT, or the
 * term; NULL when out of memory. */
static const struct ast_select *arm_to_plan(struct compound_plan *plan,
                                            size_t i, bool unordered)
{
    const struct ast_select *arm = plan->arms[i];
    struct ast_select *copy;
    bool all = true;

    for (size_t k = i > 0 ? i : 1; k < plan->arm_count; k++) {
        all = all && plan->ops[k] == AST_COMPOUND_UNION_ALL;
    }
    if (!arm->distinct || !unordered || all) {
        return arm;
    }
    copy = engine__plan_alloc(plan->stmt, sizeof(*copy));
    if (copy != NULL) {
        *copy = *arm;
        copy->distinct = false;
    }
    return copy;
}

/* Term i and its right neighbour have the same width. */
static int check_width(struct compound_plan *plan, size_t i)
{
    if (plan->plans[i].column_count == plan->plans[i + 1].column_count) {
        return 0;
    }
    return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                            "SELECTs to the left and right of %s do not have "
                            "the same number of result columns",
                            op_name(plan->ops[i + 1]));
}

/* Plans term i; its right neighbour, if planned_right, is. */
static int plan_arm(struct compound_plan *plan, size_t i, bool unordered,
                    bool planned_right)
{
    const struct ast_select *arm = arm_to_plan(plan, i, unordered);
    int rc = arm == NULL
                 ? COMMON_ENOMEM
                 : engine__plan_select_arm(plan->stmt, arm, &plan->plans[i]);

    if (rc == 0 && plan->arms[i]->columns == NULL) {
        rc = type_values(plan, i);
    }
    return rc == 0 && planned_right ? check_width(plan, i) : rc;
}

static int plan_arms(struct compound_plan *plan, bool unordered)
{
    for (size_t i = plan->arm_count; i-- > 0;) {
        int rc = plan_arm(plan, i, unordered, i + 1 < plan->arm_count);

        if (rc != 0) {
            return rc;
        }
    }
    plan->width = plan->plans[0].column_count;
    return 0;
}

static bool has_collate(const struct ast_expr *ast);

static bool any_collate(struct ast_expr *const *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (has_collate(items[i])) {
            return true;
        }
    }
    return false;
}

/* SQLite's EP_Collate: a COLLATE in ast, as parse.y propagates the flag
 * to parents (sqlite3ExprAttachSubtrees, exprSetHeight): from pLeft,
 * pRight and an x.pList set before the flags are computed, so not from
 * BETWEEN's bounds (attached after) nor from subqueries. */
static bool has_collate(const struct ast_expr *ast)
{
    if (ast == NULL) {
        return false;
    }
    switch (ast->kind) {
    case AST_COLLATE:
        return true;
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return has_collate(ast->u.unary.operand);
    case AST_BINARY:
        return has_collate(ast->u.binary.left) ||
               has_collate(ast->u.binary.right);
    case AST_CAST:
        return has_collate(ast->u.cast.operand);
    case AST_BETWEEN:
        return has_collate(ast->u.between.operand);
    case AST_LIKE:
        return has_collate(ast->u.like.pattern) ||
               has_collate(ast->u.like.operand) ||
               has_collate(ast->u.like.escape);
    case AST_IN_LIST:
        return has_collate(ast->u.in_list.operand) ||
               any_collate(ast->u.in_list.items.items,
                           ast->u.in_list.items.count);
    case AST_IN_SELECT:
        return has_collate(ast->u.in_select.operand);
    case AST_CASE:
        return has_collate(ast->u.case_.operand) ||
               any_collate(ast->u.case_.whens.items,
                           ast->u.case_.whens.count) ||
               any_collate(ast->u.case_.thens.items,
                           ast->u.case_.thens.count) ||
               has_collate(ast->u.case_.else_);
    case AST_FUNCTION:
        return any_collate(ast->u.function.args.items,
                           ast->u.function.args.count);
    default:
        return false;
    }
}

/* The first of list's expressions with a COLLATE, or NULL. */
static const struct ast_expr *collate_in(struct ast_expr *const *items,
                                         size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (has_collate(items[i])) {
            return items[i];
        }
    }
    return NULL;
}

/* The step of sqlite3ExprCollSeq() through a node with EP_Collate: its
 * pLeft if that has a COLLATE, else its pRight, or the first expression
 * of its x.pList with one (LIKE is like(pattern, x, escape), CASE's list
 * its WHENs and THENs in turn, then ELSE). */
static const struct ast_expr *collate_child(const struct ast_expr *ast)
{
    switch (ast->kind) {
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return ast->u.unary.operand;
    case AST_BINARY:
        return has_collate(ast->u.binary.left) ? ast->u.binary.left
                                               : ast->u.binary.right;
    case AST_BETWEEN:
        return has_collate(ast->u.between.operand) ? ast->u.between.operand
               : has_collate(ast->u.between.low)   ? ast->u.between.low
                                                   : ast->u.between.high;
    case AST_LIKE:
        return has_collate(ast->u.like.pattern)   ? ast->u.like.pattern
               : has_collate(ast->u.like.operand) ? ast->u.like.operand
                                                  : ast->u.like.escape;
    case AST_IN_LIST:
        return has_collate(ast->u.in_list.operand)
                   ? ast->u.in_list.operand
                   : collate_in(ast->u.in_list.items.items,
                                ast->u.in_list.items.count);
    case AST_IN_SELECT:
        return ast->u.in_select.operand;
    case AST_CASE:
        if (has_collate(ast->u.case_.operand)) {
            return ast->u.case_.operand;
        }
        for (size_t i = 0; i < ast->u.case_.whens.count; i++) {
            if (has_collate(ast->u.case_.whens.items[i])) {
                return ast->u.case_.whens.items[i];
            }
            if (has_collate(ast->u.case_.thens.items[i])) {
                return ast->u.case_.thens.items[i];
            }
        }
        return ast->u.case_.else_;
    case AST_FUNCTION:
        return collate_in(ast->u.function.args.items,
                          ast->u.function.args.count);
    default:
        return NULL;
    }
}

/* sqlite3ExprCollSeq() of a result expression ast, compiled as e: true
 * and *out set when it has a collation (a column has its own, a COLLATE
 * names one; CAST and unary + pass to their operand; any other node only
 * through a COLLATE inside it). The engine's has_collation means more
 * (a comparison's), so the tree is walked here. */
static bool result_collation(const struct ast_expr *ast,
                             const struct engine_expr *e,
                             enum engine_collation *out)
{
    while (ast != NULL) {
        if (ast->kind == AST_COLUMN) {
            *out = e != NULL ? e->collation : ENGINE_COLLATION_BINARY;
            return e != NULL && e->has_collation;
        }
        if (ast->kind == AST_COLLATE) {
            const char *name = ast->u.collate.name;

            return engine__collation_by_name(name, strlen(name), out) == 0;
        }
        if (ast->kind == AST_CAST) {
            ast = ast->u.cast.operand;
            e = e != NULL && e->arg_count > 0 ? e->args[0] : NULL;
            continue;
        }
        if (ast->kind == AST_UNARY && ast->u.unary.op == AST_PLUS) {
            ast = ast->u.unary.operand;
            continue;
        }
        if (!has_collate(ast)) {
            return false;
        }
        ast = collate_child(ast);
        e = NULL;
    }
    return false;
}

/* Column c's collation in term i, if it has one. A VALUES term: its
 * first row's; a wrapped one (type_values) always has one; the first
 * term's rows are themselves a UNION ALL chain, so multiSelectCollSeq()
 * (all_rows) goes on to its later rows. */
static bool term_collation(const struct compound_plan *plan, size_t i, size_t c,
                           bool all_rows, enum engine_collation *out)
{
    const struct engine_select_arm *planned = &plan->plans[i];
    const struct ast_select *arm = plan->arms[i];
    size_t rows = i == 0 && all_rows ? arm->value_row_count : 1;

    if (planned->results != NULL) {
        return result_collation(planned->results[c], planned->projected[c],
                                out);
    }
    if (result_collation(arm->values[c], planned->projected[c], out)) {
        return true;
    }
    for (size_t r = 1; r < rows; r++) {
        if (result_collation(arm->values[r * arm->value_column_count + c], NULL,
                             out)) {
            return true;
        }
    }
    *out = ENGINE_COLLATION_BINARY;
    return i > 0 && arm->value_row_count > 1;
}

/* multiSelectCollSeq() over terms 0..last: per column, the collation of
 * the first term whose expression has one, else BINARY. */
static enum engine_collation *chain_collations(struct compound_plan *plan,
                                               size_t last)
{
    enum engine_collation *out =
        engine__plan_alloc(plan->stmt, (plan->width + 1) * sizeof(*out));

    for (size_t c = 0; out != NULL && c < plan->width; c++) {
        for (size_t i = 0; i <= last; i++) {
            if (term_collation(plan, i, c, true, &out[c])) {
                break;
            }
        }
    }
    return out;
}

/* An integer literal, or one negated (sqlite3ExprIsInteger). */
static bool term_integer(const struct ast_expr *ast, int64_t *out)
{
    if (ast->kind == AST_LITERAL && ast->u.literal.type == ENGINE_INTEGER) {
        *out = ast->u.literal.u.i;
        return true;
    }
    if (ast->kind == AST_UNARY && ast->u.unary.op == AST_NEGATE &&
        ast->u.unary.operand->kind == AST_LITERAL &&
        ast->u.unary.operand->u.literal.type == ENGINE_INTEGER &&
        ast->u.unary.operand->u.literal.u.i > INT64_MIN) {
        *out = -ast->u.unary.operand->u.literal.u.i;
        return true;
    }
    return false;
}

/* resolveAsName(): the result column of arm named name by AS, or -1. */
static ptrdiff_t alias_column(const struct ast_select *arm,
                              const struct engine_select_arm *planned,
                              const char *name)
{
    for (size_t j = 0; arm->columns != NULL && j < arm->column_count; j++) {
        const struct ast_result_column *column = &arm->columns[j];

        if (column->kind != AST_RESULT_EXPR || column->alias == NULL ||
            strcasecmp(column->alias, name) != 0) {
            continue;
        }
        for (size_t i = 0; i < planned->column_count; i++) {
            if (planned->results[i] == column->expr) {
                return (ptrdiff_t)i;
            }
        }
    }
    return -1;
}

/* resolveOrderByTermToExprList(): the result column of arm equal to
 * term, or -1. */
static ptrdiff_t equal_column(const struct engine_select_arm *planned,
                              const struct ast_expr *term)
{
    for (size_t i = 0; planned->results != NULL && i < planned->column_count;
         i++) {
        if (engine__ast_equal(planned->results[i], term)) {
            return (ptrdiff_t)i;
        }
    }
    return -1;
}

/* The 0-based result column ORDER BY term number k (1-based) names. */
static int resolve_order_term(struct compound_plan *plan, size_t k,
                              const struct ast_expr *bare, size_t *column)
{
    int64_t number;

    if (term_integer(bare, &number)) {
        if (number < 1 || (uint64_t)number > plan->width) {
            return engine__db_error(
                plan->stmt->db, ENGINE_ESQL,
                "%zu%s ORDER BY term out of range - should be between 1 and "
                "%zu",
                k, ordinal_suffix(k), plan->width);
        }
        *column = (size_t)number - 1;
        return 0;
    }
    for (size_t i = 0; i < plan->arm_count; i++) {
        ptrdiff_t found = -1;

        if (bare->kind == AST_COLUMN && bare->u.column.table == NULL) {
            found = alias_column(plan->arms[i], &plan->plans[i],
                                 bare->u.column.name);
        }
        if (found < 0) {
            found = equal_column(&plan->plans[i], bare);
        }
        if (found >= 0) {
            *column = (size_t)found;
            return 0;
        }
    }
    return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                            "%zu%s ORDER BY term does not match any column in "
                            "the result set",
                            k, ordinal_suffix(k));
}

/* The ORDER BY's sort keys: the column each term names, its direction,
 * and its collation: its own COLLATE, else the column's. */
static int resolve_order_by(struct compound_plan *plan,
                            const enum engine_collation *collations)
{
    const struct ast_select *top = plan->top;

    plan->order =
        engine__plan_alloc(plan->stmt, (top->order_by_count + plan->width + 1) *
                                           sizeof(*plan->order));
    if (plan->order == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t k = 0; k < top->order_by_count; k++) {
        const struct ast_order_item *item = &top->order_by[k];
        struct engine_sort_key *key = &plan->order[k];
        const struct ast_expr *bare = item->expr;
        int rc;

        while (bare->kind == AST_COLLATE) {
            bare = bare->u.collate.operand;
        }
        rc = resolve_order_term(plan, k + 1, bare, &key->column);
        if (rc != 0) {
            return rc;
        }
        key->collation = collations[key->column];
        if (item->expr->kind == AST_COLLATE) {
            const char *name = item->expr->u.collate.name;

            if (engine__collation_by_name(name, strlen(name),
                                          &key->collation) != 0) {
                return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                        "no such collation sequence: %s", name);
            }
        }
        key->descending = item->descending;
        key->nulls_first =
            item->nulls == AST_NULLS_FIRST ||
            (item->nulls == AST_NULLS_DEFAULT && !item->descending);
    }
    plan->order_count = top->order_by_count;
    return 0;
}

static int compile_limit(struct compound_plan *plan)
{
    struct engine_compile ctx;
    int rc;

    if (plan->top->limit == NULL) {
        return 0;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.stmt = plan->stmt;
    ctx.clause = "LIMIT";
    rc = engine__compile_expr(&ctx, plan->top->limit, &plan->limit);
    if (rc == 0 && plan->top->offset != NULL) {
        rc = engine__compile_expr(&ctx, plan->top->offset, &plan->offset);
    }
    return rc;
}

/* Without ORDER BY: UNION ALL concatenates, the others use the set
 * operator with the whole compound's collations (multiSelect() gives every
 * ephemeral table of the chain the same KeyInfo). */
static int build_unordered(struct compound_plan *plan, struct engine_op **out)
{
    const enum engine_collation *collations =
        chain_collations(plan, plan->arm_count - 1);
    struct engine_op *op = plan->plans[0].root;

    if (collations == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 1; op != NULL && i < plan->arm_count; i++) {
        struct engine_op *right = plan->plans[i].root;

        op = plan->ops[i] == AST_COMPOUND_UNION_ALL
                 ? engine__op_concat(plan->stmt, op, right)
                 : engine__op_set(plan->stmt, plan->ops[i], op, right,
                                  collations);
    }
    *out = op;
    return op == NULL ? COMMON_ENOMEM : 0;
}

/* The merge key of node i (the operator joining arms[i]): its parent's
 * (the ORDER BY at the top) plus, unless the operator is UNION ALL, every
 * column not yet in it, ascending, under collations (multiSelectOrderBy
 * appends them; the parent's terms already carry their collations). */
static int extend_key(struct compound_plan *plan, enum ast_compound_op op,
                      const struct engine_sort_key *parent, size_t count,
                      const enum engine_collation *collations,
                      struct engine_sort_key **keys, size_t *key_count)
{
    struct engine_sort_key *out = engine__plan_alloc(
        plan->stmt, (count + plan->width + 1) * sizeof(*out));

    if (out == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(out, parent, count * sizeof(*out));
    for (size_t c = 0; op != AST_COMPOUND_UNION_ALL && c < plan->width; c++) {
        bool present = false;

        for (size_t k = 0; k < count; k++) {
            present = present || parent[k].column == c;
        }
        if (!present) {
            out[count++] = (struct engine_sort_key){
                .column = c, .nulls_first = true, .collation = collations[c]};
        }
    }
    *keys = out;
    *key_count = count;
    return 0;
}

static struct engine_op *sorted_arm(struct compound_plan *plan, size_t i,
                                    const struct engine_sort_key *keys,
                                    size_t key_count)
{
    return engine__op_sort(plan->stmt, plan->plans[i].root, keys, key_count,
                           NULL, NULL);
}

/* Node i and everything to its left, merged on keys derived from the
 * parent's (parent, count). */
static int build_merge(struct compound_plan *plan, size_t i,
                       const struct engine_sort_key *parent, size_t count,
                       struct engine_op **out)
{
    const enum engine_collation *collations = chain_collations(plan, i);
    struct engine_sort_key *keys;
    struct engine_op *left;
    struct engine_op *right;
    size_t key_count;
    int rc;

    if (collations == NULL) {
        return COMMON_ENOMEM;
    }
    rc = extend_key(plan, plan->ops[i], parent, count, collations, &keys,
                    &key_count);
    if (rc != 0) {
        return rc;
    }
    if (i == 1) {
        left = sorted_arm(plan, 0, keys, key_count);
    } else {
        rc = build_merge(plan, i - 1, keys, key_count, &left);
        if (rc != 0) {
            return rc;
        }
    }
    right = sorted_arm(plan, i, keys, key_count);
    *out = left != NULL && right != NULL
               ? engine__op_merge(plan->stmt, plan->ops[i], left, right, keys,
                                  key_count, collations)
               : NULL;
    return *out == NULL ? COMMON_ENOMEM : 0;
}

/* The column collations of the leftmost SELECT: those of the compound
 * as a FROM subquery. */
static enum engine_collation *leftmost_collations(struct compound_plan *plan)
{
    enum engine_collation *out =
        engine__plan_alloc(plan->stmt, (plan->width + 1) * sizeof(*out));

    for (size_t c = 0; out != NULL && c < plan->width; c++) {
        term_collation(plan, 0, c, false, &out[c]);
    }
    return out;
}

/* Term i's compiled results as the compound's user sees them: shallow
 * copies (never evaluated: only their affinity and collation are read)
 * whose collation is SQLite's (term_collation). */
static struct engine_expr **typed_projected(struct compound_plan *plan,
                                            size_t i)
{
    struct engine_expr **out =
        engine__plan_alloc(plan->stmt, (plan->width + 1) * sizeof(*out));

    for (size_t c = 0; out != NULL && c < plan->width; c++) {
        out[c] = engine__plan_alloc(plan->stmt, sizeof(*out[c]));
        if (out[c] == NULL) {
            return NULL;
        }
        *out[c] = *plan->plans[i].projected[c];
        out[c]->has_collation =
            term_collation(plan, i, c, false, &out[c]->collation);
    }
    return out;
}

static int build(struct compound_plan *plan, bool converted,
                 struct engine_op **out)
{
    int rc;

    if (plan->order_count == 0 || converted) {
        rc = build_unordered(plan, out);
        /* convertCompoundSelectToSubquery() leaves the last term's flags
         * on the outer query: a DISTINCT there makes it "SELECT DISTINCT
         * * FROM (compound)". */
        if (rc == 0 && converted && plan->arms[plan->arm_count - 1]->distinct) {
            const enum engine_collation *collations = leftmost_collations(plan);

            *out = collations != NULL
                       ? engine__op_distinct(plan->stmt, *out, collations,
                                             plan->width)
                       : NULL;
            rc = *out == NULL ? COMMON_ENOMEM : 0;
        }
        if (rc == 0 && plan->order_count > 0) {
            *out =
                engine__op_sort(plan->stmt, *out, plan->order,
                                plan->order_count, plan->limit, plan->offset);
            rc = *out == NULL ? COMMON_ENOMEM : 0;
        }
    } else {
        rc = build_merge(plan, plan->arm_count - 1, plan->order,
                         plan->order_count, out);
    }
    if (rc == 0 && plan->limit != NULL) {
        *out = engine__op_limit(plan->stmt, *out, plan->limit, plan->offset);
        rc = *out == NULL ? COMMON_ENOMEM : 0;
    }
    return rc;
}

/* convertCompoundSelectToSubquery() (select.c): a compound with an
 * operator other than UNION ALL and an ORDER BY term with a COLLATE runs
 * as "SELECT * FROM (compound) ORDER BY ... LIMIT ...": the compound
 * keeps its rows as it would without ORDER BY, then they are sorted
 * (stably) on the terms, resolved by the compound's rules as 3.40 does;
 * a term without COLLATE sorts under its column's collation as a FROM
 * subquery has it (the leftmost SELECT's). The result's types are the
 * outer query's: the leftmost SELECT's. */
static bool needs_subquery(const struct ast_select *select)
{
    bool all = true;
    bool collate = false;

    for (const struct ast_select *n = select; n->compound != AST_COMPOUND_NONE;
         n = n->left) {
        all = all && n->compound == AST_COMPOUND_UNION_ALL;
    }
    for (size_t k = 0; k < select->order_by_count; k++) {
        collate = collate || has_collate(select->order_by[k].expr);
    }
    return !all && collate;
}

/* A FROM subquery's REAL columns read its integers as REAL. */
static int add_real_affinity(struct compound_plan *plan,
                             const enum engine_affinity *affinities,
                             struct engine_op **root)
{
    bool *is_real = engine__plan_alloc(plan->stmt, plan->width + 1);
    bool any = false;

    if (is_real == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t c = 0; c < plan->width; c++) {
        is_real[c] = affinities[c] == ENGINE_AFFINITY_REAL;
        any = any || is_real[c];
    }
    if (any) {
        *root = engine__op_real_affinity(plan->stmt, *root, is_real);
    }
    return *root == NULL ? COMMON_ENOMEM : 0;
}

int engine__plan_compound(struct engine_stmt *stmt,
                          const struct ast_select *select,
                          enum engine_compound_use use, struct engine_op **root,
                          char ***names, enum engine_affinity **affinities,
                          struct engine_expr ***projected, size_t *column_count)
{
    struct compound_plan plan = {.stmt = stmt, .top = select};
    bool converted = needs_subquery(select);
    const struct engine_select_arm *typed;
    int rc;

    ASSERT(select->compound != AST_COMPOUND_NONE);
    rc = collect_arms(&plan);
    rc = rc != 0 ? rc
                 : plan_arms(&plan, select->order_by_count == 0 || converted);
    if (rc == 0 && select->order_by_count > 0) {
        const enum engine_collation *collations =
            converted ? leftmost_collations(&plan)
                      : chain_collations(&plan, plan.arm_count - 1);

        rc = collations != NULL ? resolve_order_by(&plan, collations)
                                : COMMON_ENOMEM;
    }
    rc = rc != 0 ? rc : compile_limit(&plan);
    rc = rc != 0 ? rc : build(&plan, converted, root);
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(stmt->db, rc, "out of memory");
    }
    if (rc != 0) {
        return rc;
    }
    typed = &plan.plans[use == ENGINE_COMPOUND_EXPR && !converted
                            ? plan.arm_count - 1
                            : 0];
    /* Converted, the compound is a FROM subquery of the outer query. */
    if (use == ENGINE_COMPOUND_FROM || converted) {
        rc = add_real_affinity(&plan, plan.plans[0].affinities, root);
        if (rc != 0) {
            return rc;
        }
    }
    /* Converted, the names are the outer "SELECT *"'s: made unique. */
    if (converted) {
        rc = engine__plan_unique_names(stmt, plan.plans[0].names, plan.width);
        if (rc != 0) {
            return rc;
        }
    }
    if (names != NULL) {
        *names = plan.plans[0].names;
    }
    if (affinities != NULL) {
        *affinities = typed->affinities;
    }
    if (projected != NULL) {
        *projected = typed_projected(&plan, (size_t)(typed - plan.plans));
        if (*projected == NULL) {
            return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
        }
    }
    *column_count = plan.width;
    return 0;
}

/* SF_Aggregate on a recursive term (generateWithRecursiveQuery). */
static bool aggregates(const struct ast_select *arm)
{
    bool any =
        arm->group_by.count > 0 || engine__ast_has_aggregate(arm->having);

    for (size_t i = 0; !any && arm->columns != NULL && i < arm->column_count;
         i++) {
        any = engine__ast_has_aggregate(arm->columns[i].expr);
    }
    for (size_t i = 0; !any && i < arm->order_by_count; i++) {
        any = engine__ast_has_aggregate(arm->order_by[i].expr);
    }
    return any;
}

static bool is_window_call(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    return engine__window_is_call(ast);
}

/* p->pWin: the term's own window calls (result columns, HAVING, ORDER
 * BY; not those of its subqueries). */
static bool windows(const struct ast_select *arm)
{
    bool any = engine__ast_any(arm->having, is_window_call, NULL);

    for (size_t i = 0; !any && arm->columns != NULL && i < arm->column_count;
         i++) {
        any = engine__ast_any(arm->columns[i].expr, is_window_call, NULL);
    }
    for (size_t i = 0; !any && i < arm->order_by_count; i++) {
        any = engine__ast_any(arm->order_by[i].expr, is_window_call, NULL);
    }
    return any;
}

/* The recursive terms, right to left, each after the same checks as any
 * term, then SQLite's "cannot use window functions in recursive queries"
 * (generateWithRecursiveQuery looks only at the last term: one further
 * left may use them) and "recursive aggregate queries not supported". */
static int plan_recursive_terms(struct compound_plan *plan, size_t first)
{
    int rc = 0;

    for (size_t i = plan->arm_count; rc == 0 && i-- > first;) {
        rc = plan_arm(plan, i, true, i + 1 < plan->arm_count);
    }
    if (rc == 0 && windows(plan->arms[plan->arm_count - 1])) {
        rc = engine__db_error(
            plan->stmt->db, ENGINE_ESQL,
            "cannot use window functions in recursive queries");
    }
    for (size_t i = first; rc == 0 && i < plan->arm_count; i++) {
        if (aggregates(plan->arms[i])) {
            rc = engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                  "recursive aggregate queries not supported");
        }
    }
    return rc;
}

/* A recursive CTE's compound (cte.h): its setup terms, left of first,
 * planned (right to left) before the recursive ones can read their
 * columns; the setup's rows made as a compound of their own; the ORDER
 * BY resolved, and the rows compared, under the whole chain's collations
 * (multiSelectOrderByKeyInfo, multiSelectCollSeq). */
int engine__plan_compound_recursive(
    struct engine_stmt *stmt, const struct ast_select *select,
    size_t recursive_terms, struct engine_cte_plan *cte,
    struct engine_op **root, char ***names, enum engine_affinity **affinities,
    struct engine_expr ***projected, size_t *column_count)
{
    struct compound_plan plan = {.stmt = stmt, .top = select};
    const enum engine_collation *collations = NULL;
    struct engine_expr **typed = NULL;
    struct engine_op *setup = NULL;
    size_t first = 0;
    int rc = collect_arms(&plan);

    if (rc == 0) {
        first = plan.arm_count - recursive_terms;
        for (size_t i = first; rc == 0 && i-- > 0;) {
            rc = plan_arm(&plan, i, true, i + 1 < first);
        }
        plan.width = plan.plans[0].column_count;
    }
    if (rc == 0) {
        typed = typed_projected(&plan, 0);
        rc = typed == NULL
                 ? COMMON_ENOMEM
                 : engine__plan_cte_setup_done(cte, plan.plans[0].names,
                                               plan.plans[0].affinities, typed,
                                               plan.width);
    }
    rc = rc != 0 ? rc : plan_recursive_terms(&plan, first);
    rc = rc != 0 ? rc : check_width(&plan, first - 1);
    if (rc == 0) {
        collations = chain_collations(&plan, plan.arm_count - 1);
        rc = collations == NULL ? COMMON_ENOMEM : 0;
    }
    if (rc == 0 && select->order_by_count > 0) {
        rc = resolve_order_by(&plan, collations);
    }
    rc = rc != 0 ? rc : compile_limit(&plan);
    if (rc == 0) {
        size_t arm_count = plan.arm_count;

        plan.arm_count = first;
        rc = build_unordered(&plan, &setup);
        plan.arm_count = arm_count;
    }
    rc = rc != 0
             ? rc
             : engine__plan_cte_build(
                   cte, setup, &plan.plans[first], recursive_terms,
                   select->compound == AST_COMPOUND_UNION ? collations : NULL,
                   plan.order, plan.order_count, plan.limit, plan.offset, root);
    rc =
        rc != 0 ? rc : add_real_affinity(&plan, plan.plans[0].affinities, root);
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(stmt->db, rc, "out of memory");
    }
    if (rc == 0) {
        *names = plan.plans[0].names;
        *affinities = plan.plans[0].affinities;
        *projected = typed;
        *column_count = plan.width;
    }
    return rc;
}

static bool name_taken(char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        if (names[i] != NULL && strcasecmp(names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

int engine__plan_unique_names(struct engine_stmt *stmt, char **names,
                              size_t count)
{
    for (size_t i = 1; i < count; i++) {
        unsigned suffix = 0;

        while (names[i] != NULL && name_taken(names, i, names[i])) {
            size_t size = strlen(names[i]);
            size_t j = size;
            char text[64];
            char *name;

            while (j > 1 && names[i][j - 1] >= '0' && names[i][j - 1] <= '9') {
                j--;
            }
            if (j > 0 && j < size && names[i][j - 1] == ':') {
                size = j - 1;
            }
            snprintf(text, sizeof(text), ":%u", ++suffix);
            name = engine__plan_alloc(stmt, size + strlen(text) + 1);
            if (name == NULL) {
                return COMMON_ENOMEM;
            }
            memcpy(name, names[i], size);
            memcpy(name + size, text, strlen(text) + 1);
            names[i] = name;
        }
    }
    return 0;
}
