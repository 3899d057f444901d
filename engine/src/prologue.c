/* SPDX-License-Identifier: MIT
 *
 * prologue.c: the constant expressions SQLite computes before a statement
 * reads any row.
 *
 * SQLite codes a constant operand once instead of per row
 * (sqlite3ExprCodeTemp, and function arguments with SQLITE_ECEL_FACTOR).
 * If the constant carries EP_HasFunc it runs lazily, under OP_Once, when
 * a row first reaches it; if not, it goes to the statement's prologue
 * (pParse->pConstExpr, sqlite3ExprCodeRunJustOnce), which runs before
 * anything else, even when no row is ever read. EP_HasFunc normally rises
 * from a function call to every node above it, but a COLLATE node does
 * not pass it on (sqlite3ExprAddCollateToken) and BETWEEN takes it from
 * its left operand only (parse.y), so "substr(x, abs(-9223372036854775808)
 * COLLATE NOCASE)" fails with "integer overflow" over an empty table. Only
 * a constant with a function call inside can fail, so those are the
 * prologue here: found over the parse tree by where SQLite factors, they
 * are compiled on their own and evaluated when the statement starts.
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "func.h"
#include "plan.h"

enum position {
    POSITION_NONE, /* coded in place (sqlite3ExprCode) */
    POSITION_TEMP, /* sqlite3ExprCodeTemp: COLLATE skipped, may factor */
    POSITION_ARG,  /* a function argument: may factor */
    POSITION_JUMP, /* a condition (sqlite3ExprIfFalse / IfTrue) */
};

struct prologue {
    struct engine_stmt *stmt;
    const struct ast_expr **found;
    size_t count;
    size_t capacity;
};

static bool is_inline_function(const char *name)
{
    return strcasecmp(name, "coalesce") == 0 ||
           strcasecmp(name, "ifnull") == 0 || strcasecmp(name, "iif") == 0;
}

/* An aggregate call: f(*), or an aggregate's name (min and max only with
 * one argument). */
static bool is_aggregate(const struct ast_expr *ast)
{
    const char *name = ast->u.function.name;

    if (ast->u.function.star) {
        return true;
    }
    if ((strcasecmp(name, "min") == 0 || strcasecmp(name, "max") == 0) &&
        ast->u.function.args.count != 1) {
        return false;
    }
    return engine__aggregate_lookup(name, strlen(name)) != NULL;
}

/* sqlite3ExprIsConstantNotJoin: no column, subquery, aggregate or
 * function that is not deterministic. */
static bool is_variable(const struct ast_expr *ast, const void *unused)
{
    const struct engine_scalar_def *def;
    const char *name;

    (void)unused;
    switch (ast->kind) {
    case AST_COLUMN:
    case AST_IN_SELECT:
    case AST_EXISTS:
    case AST_SUBQUERY:
        return true;
    case AST_FUNCTION:
        name = ast->u.function.name;
        def = engine__scalar_lookup(name, strlen(name));
        return is_aggregate(ast) || def == NULL || !def->deterministic;
    default:
        return false;
    }
}

static bool is_constant(const struct ast_expr *ast)
{
    return !engine__ast_any(ast, is_variable, NULL);
}

static bool has_func(const struct ast_expr *ast);

static bool list_has_func(const struct ast_expr_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        if (has_func(list->items[i])) {
            return true;
        }
    }
    return false;
}

/* EP_HasFunc as SQLite's parser propagates it. */
static bool has_func(const struct ast_expr *ast)
{
    if (ast == NULL) {
        return false;
    }
    switch (ast->kind) {
    case AST_FUNCTION:
    case AST_LIKE:
        return true;
    case AST_COLLATE:
        return false;
    case AST_BETWEEN:
        return has_func(ast->u.between.operand);
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return has_func(ast->u.unary.operand);
    case AST_BINARY:
        return has_func(ast->u.binary.left) || has_func(ast->u.binary.right);
    case AST_CAST:
        return has_func(ast->u.cast.operand);
    case AST_CASE:
        return has_func(ast->u.case_.operand) || has_func(ast->u.case_.else_) ||
               list_has_func(&ast->u.case_.whens) ||
               list_has_func(&ast->u.case_.thens);
    case AST_IN_LIST:
        return has_func(ast->u.in_list.operand) ||
               list_has_func(&ast->u.in_list.items);
    default:
        return false;
    }
}

static int add(struct prologue *pl, const struct ast_expr *ast)
{
    if (pl->count == pl->capacity) {
        size_t grown = pl->capacity ? pl->capacity * 2 : 4;
        const struct ast_expr **more =
            engine__plan_alloc(pl->stmt, grown * sizeof(*more));

        if (more == NULL) {
            return COMMON_ENOMEM;
        }
        if (pl->count > 0) {
            memcpy(more, pl->found, pl->count * sizeof(*more));
        }
        pl->found = more;
        pl->capacity = grown;
    }
    pl->found[pl->count++] = ast;
    return 0;
}

static int visit(struct prologue *pl, const struct ast_expr *ast,
                 enum position position);
static int visit_select(struct prologue *pl, const struct ast_select *select);

static int visit_list(struct prologue *pl, const struct ast_expr_list *list,
                      enum position position)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < list->count; i++) {
        rc = visit(pl, list->items[i], position);
    }
    return rc;
}

/* a, b and c in the order SQLite codes them. */
static int visit3(struct prologue *pl, const struct ast_expr *a,
                  const struct ast_expr *b, const struct ast_expr *c,
                  enum position position)
{
    int rc = visit(pl, a, position);

    rc = rc != 0 ? rc : visit(pl, b, position);
    return rc != 0 ? rc : visit(pl, c, position);
}

/* A function call: a constant one runs once, under OP_Once with
 * factoring off inside (TK_FUNCTION in sqlite3ExprCodeTarget); an
 * aggregate's arguments are coded in place (updateAccumulator), an inline
 * function's too, iif's condition as a jump; any other function's
 * arguments may factor. */
static int visit_call(struct prologue *pl, const struct ast_expr *ast)
{
    const char *name = ast->u.function.name;
    const struct ast_expr_list *args = &ast->u.function.args;
    bool aggregate = is_aggregate(ast);
    int rc;

    if (is_constant(ast)) {
        return 0;
    }
    if (strcasecmp(name, "iif") == 0 && args->count == 3) {
        rc = visit(pl, args->items[0], POSITION_JUMP);
        return rc != 0 ? rc
                       : visit3(pl, args->items[1], args->items[2], NULL,
                                POSITION_NONE);
    }
    rc = visit_list(pl, args,
                    aggregate || is_inline_function(name) ? POSITION_NONE
                                                          : POSITION_ARG);
    return rc != 0 ? rc : visit(pl, ast->u.function.filter, POSITION_JUMP);
}

static int visit_case(struct prologue *pl, const struct ast_expr *ast)
{
    int rc = visit(pl, ast->u.case_.operand, POSITION_TEMP);

    if (rc == 0) {
        rc = visit_list(pl, &ast->u.case_.whens,
                        ast->u.case_.operand != NULL ? POSITION_TEMP
                                                     : POSITION_JUMP);
    }
    if (rc == 0) {
        rc = visit_list(pl, &ast->u.case_.thens, POSITION_NONE);
    }
    return rc != 0 ? rc : visit(pl, ast->u.case_.else_, POSITION_NONE);
}

/* x IN (list): the list is tested item by item (IN_INDEX_NOOP) when it
 * has at most two items or any that is not constant; otherwise it fills
 * an ephemeral table under OP_Once, where nothing factors. */
static int visit_in_list(struct prologue *pl, const struct ast_expr *ast)
{
    const struct ast_expr_list *items = &ast->u.in_list.items;
    bool item_by_item = items->count <= 2;
    int rc = visit(pl, ast->u.in_list.operand, POSITION_TEMP);

    for (size_t i = 0; !item_by_item && i < items->count; i++) {
        item_by_item = !is_constant(items->items[i]);
    }
    return rc != 0 || !item_by_item ? rc : visit_list(pl, items, POSITION_TEMP);
}

static int visit_in_select(struct prologue *pl, const struct ast_expr *ast)
{
    int rc = visit(pl, ast->u.in_select.operand, POSITION_TEMP);

    return rc != 0 ? rc : visit_select(pl, ast->u.in_select.select);
}

static bool is_truth_test(const struct ast_expr *ast)
{
    return ast->kind == AST_BINARY &&
           (ast->u.binary.op == AST_IS || ast->u.binary.op == AST_IS_NOT) &&
           ast->u.binary.right->kind == AST_BOOLEAN;
}

static int visit_node(struct prologue *pl, const struct ast_expr *ast,
                      enum position position)
{
    bool jump = position == POSITION_JUMP;

    switch (ast->kind) {
    case AST_UNARY:
        return visit(pl, ast->u.unary.operand,
                     ast->u.unary.op == AST_NOT && jump ? POSITION_JUMP
                     : ast->u.unary.op == AST_PLUS      ? POSITION_NONE
                                                        : POSITION_TEMP);
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return visit(pl, ast->u.unary.operand, POSITION_TEMP);
    case AST_BINARY:
        if (is_truth_test(ast)) {
            return visit(pl, ast->u.binary.left,
                         jump ? POSITION_JUMP : POSITION_TEMP);
        }
        return visit3(
            pl, ast->u.binary.left, ast->u.binary.right, NULL,
            jump && (ast->u.binary.op == AST_AND || ast->u.binary.op == AST_OR)
                ? POSITION_JUMP
                : POSITION_TEMP);
    case AST_COLLATE:
        return visit(pl, ast->u.collate.operand, POSITION_NONE);
    case AST_CAST:
        return visit(pl, ast->u.cast.operand, POSITION_NONE);
    case AST_CASE:
        return visit_case(pl, ast);
    case AST_BETWEEN:
        return visit3(pl, ast->u.between.operand, ast->u.between.low,
                      ast->u.between.high, POSITION_TEMP);
    case AST_LIKE: /* like(pattern, operand, escape), a function call */
        return is_constant(ast)
                   ? 0
                   : visit3(pl, ast->u.like.pattern, ast->u.like.operand,
                            ast->u.like.escape, POSITION_ARG);
    case AST_IN_LIST:
        return visit_in_list(pl, ast);
    case AST_IN_SELECT:
        return visit_in_select(pl, ast);
    case AST_EXISTS:
    case AST_SUBQUERY:
        return visit_select(pl, ast->u.subquery.select);
    case AST_FUNCTION:
        return visit_call(pl, ast);
    default:
        return 0;
    }
}

/* A condition's own node is coded by sqlite3ExprCodeTemp unless it is a
 * logical operator, a comparison or a test the jump codes itself. */
static bool jump_codes_itself(const struct ast_expr *ast)
{
    switch (ast->kind) {
    case AST_UNARY:
        return ast->u.unary.op == AST_NOT;
    case AST_BINARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
    case AST_BETWEEN:
    case AST_IN_LIST:
    case AST_IN_SELECT:
        return true;
    default:
        return false;
    }
}

static int visit(struct prologue *pl, const struct ast_expr *ast,
                 enum position position)
{
    if (ast == NULL) {
        return 0;
    }
    if (position == POSITION_JUMP && !jump_codes_itself(ast)) {
        position = POSITION_TEMP;
    }
    while (position == POSITION_TEMP && ast->kind == AST_COLLATE) {
        ast = ast->u.collate.operand;
    }
    if ((position == POSITION_TEMP || position == POSITION_ARG) &&
        is_constant(ast)) {
        /* Coded once: in the prologue, or under OP_Once with factoring
         * off inside. */
        return !has_func(ast) && engine__ast_calls_function(ast) ? add(pl, ast)
                                                                 : 0;
    }
    return visit_node(pl, ast, position);
}

static int visit_columns(struct prologue *pl,
                         const struct ast_result_column *columns, size_t count)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && columns != NULL && i < count; i++) {
        rc = visit(pl, columns[i].expr, POSITION_NONE);
    }
    return rc;
}

/* A SELECT's clauses in about the order SQLite codes them: the loop's
 * WHERE, the aggregates, the results, HAVING, the sort keys. */
static int visit_select(struct prologue *pl, const struct ast_select *select)
{
    size_t values = select->value_row_count * select->value_column_count;
    int rc = 0;

    /* A compound codes its terms left to right, then its ORDER BY. */
    if (select->compound != AST_COMPOUND_NONE) {
        rc = visit_select(pl, select->left);
        rc = rc != 0 ? rc : visit_select(pl, select->right);
    }
    for (size_t i = 0; rc == 0 && i < select->from_count; i++) {
        if (select->from[i].select != NULL) {
            rc = visit_select(pl, select->from[i].select);
        }
    }
    rc = rc != 0 ? rc : visit(pl, select->where, POSITION_JUMP);
    rc = rc != 0 ? rc : visit_list(pl, &select->group_by, POSITION_NONE);
    rc =
        rc != 0 ? rc : visit_columns(pl, select->columns, select->column_count);
    rc = rc != 0 ? rc : visit(pl, select->having, POSITION_JUMP);
    for (size_t i = 0; rc == 0 && i < select->order_by_count; i++) {
        rc = visit(pl, select->order_by[i].expr, POSITION_NONE);
    }
    for (size_t i = 0; rc == 0 && i < values; i++) {
        rc = visit(pl, select->values[i], POSITION_NONE);
    }
    return rc;
}

static int visit_assignments(struct prologue *pl,
                             const struct ast_assignment *list, size_t count)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < count; i++) {
        rc = visit(pl, list[i].value, POSITION_NONE);
    }
    return rc;
}

static int visit_insert(struct prologue *pl, const struct ast_insert *insert)
{
    int rc = insert->select != NULL ? visit_select(pl, insert->select) : 0;

    for (size_t i = 0; rc == 0 && i < insert->upsert_count; i++) {
        const struct ast_upsert *upsert = &insert->upserts[i];

        rc = visit_assignments(pl, upsert->assignments,
                               upsert->assignment_count);
        rc = rc != 0 ? rc : visit(pl, upsert->where, POSITION_JUMP);
    }
    return rc != 0 ? rc
                   : visit_columns(pl, insert->returning.columns,
                                   insert->returning.column_count);
}

static int visit_statement(struct prologue *pl, const struct ast_stmt *ast)
{
    int rc;

    switch (ast->kind) {
    case AST_STMT_SELECT:
        return visit_select(pl, ast->u.select);
    case AST_STMT_INSERT:
        return visit_insert(pl, &ast->u.insert);
    case AST_STMT_UPDATE:
        rc = visit(pl, ast->u.update.where, POSITION_JUMP);
        rc = rc != 0 ? rc
                     : visit_assignments(pl, ast->u.update.assignments,
                                         ast->u.update.assignment_count);
        return rc != 0 ? rc
                       : visit_columns(pl, ast->u.update.returning.columns,
                                       ast->u.update.returning.column_count);
    case AST_STMT_DELETE:
        rc = visit(pl, ast->u.delete_.where, POSITION_JUMP);
        return rc != 0 ? rc
                       : visit_columns(pl, ast->u.delete_.returning.columns,
                                       ast->u.delete_.returning.column_count);
    default:
        return 0;
    }
}

int engine__prologue_plan(struct engine_stmt *stmt)
{
    struct prologue pl = {.stmt = stmt};
    struct engine_compile ctx = {.stmt = stmt, .clause = "prologue"};
    int rc = visit_statement(&pl, stmt->ast);

    if (rc == 0 && pl.count > 0) {
        stmt->prologue =
            engine__plan_alloc(stmt, pl.count * sizeof(*stmt->prologue));
        rc = stmt->prologue == NULL ? COMMON_ENOMEM : 0;
    }
    for (size_t i = 0; rc == 0 && i < pl.count; i++) {
        rc = engine__compile_expr(&ctx, pl.found[i], &stmt->prologue[i]);
    }
    stmt->prologue_count = rc == 0 ? pl.count : 0;
    return rc;
}

int engine__prologue_run(struct engine_stmt *stmt)
{
    struct engine_arena arena;
    struct engine_eval eval = {.exec = &stmt->exec, .arena = &arena};
    struct engine_batch one = {.count = 1, .selected = 1};
    int rc = 0;

    engine__arena_init(&arena);
    for (size_t i = 0; rc == 0 && i < stmt->prologue_count; i++) {
        const struct engine_vector *ignored;

        rc = engine__expr_eval(stmt->prologue[i], &eval, &one, &ignored);
    }
    engine__arena_close(&arena);
    return rc;
}
