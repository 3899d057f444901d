/* SPDX-License-Identifier: MIT
 *
 * expr_compile.c: from AST expressions to executable ones (expr.h): name
 * resolution against a scope, affinity and collation by SQLite's rules
 * (datatype3.html §4.2 and §7), function lookup, and, above a GROUP BY,
 * the rewrite of group keys, aggregate calls and bare columns into reads
 * of the aggregation's output (resolve.c and select.c do the same in
 * SQLite).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"
#include "plan.h"
#include "semi.h"
#include "trigger.h"
#include "window.h"

static int compile(struct engine_compile *ctx, const struct ast_expr *ast,
                   struct engine_expr **out);

static struct engine_expr *new_expr(struct engine_compile *ctx,
                                    enum engine_expr_op op, size_t arg_count)
{
    struct engine_expr *e = engine__plan_alloc(ctx->stmt, sizeof(*e));

    if (e == NULL) {
        return NULL;
    }
    e->op = op;
    e->affinity = ENGINE_AFFINITY_BLOB;
    e->collation = ENGINE_COLLATION_BINARY;
    if (arg_count > 0) {
        e->args = engine__plan_alloc(ctx->stmt, arg_count * sizeof(*e->args));
        if (e->args == NULL) {
            return NULL;
        }
    }
    e->arg_count = arg_count;
    if (op == ENGINE_EXPR_COLUMN) {
        return e;
    }
    /* Every node with a result vector is registered at once, so the
     * statement frees it even when compilation fails half way. */
    if (engine__vector_init(&e->result, ENGINE_VECTOR_VALUES) != 0 ||
        engine__stmt_own_expr(ctx->stmt, e) != 0) {
        engine__vector_close(&e->result);
        engine__db_error(ctx->stmt->db, COMMON_ENOMEM, "out of memory");
        return NULL;
    }
    return e;
}

static int oom(struct engine_compile *ctx)
{
    return engine__db_error(ctx->stmt->db, COMMON_ENOMEM, "out of memory");
}

static int sql_error(struct engine_compile *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int sql_error(struct engine_compile *ctx, const char *format, ...)
{
    char message[ENGINE__ERRMSG_SIZE];
    va_list args;

    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    return engine__db_error(ctx->stmt->db, ENGINE_ESQL, "%s", message);
}

enum engine_collation engine__binary_collation(const struct engine_expr *a,
                                               const struct engine_expr *b)
{
    if (a->explicit_collation) {
        return a->collation;
    }
    if (b->explicit_collation) {
        return b->collation;
    }
    if (a->has_collation) {
        return a->collation;
    }
    if (b->has_collation) {
        return b->collation;
    }
    return ENGINE_COLLATION_BINARY;
}

/* Compiles the children of ast given in list into e->args from first. */
static int compile_list(struct engine_compile *ctx,
                        const struct ast_expr_list *list, struct engine_expr *e,
                        size_t first)
{
    for (size_t i = 0; i < list->count; i++) {
        int rc = compile(ctx, list->items[i], &e->args[first + i]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static bool table_matches(const struct engine_scope *scope, const char *name)
{
    if (scope->alias != NULL) {
        return strcasecmp(scope->alias, name) == 0;
    }
    return scope->table_name != NULL &&
           strcasecmp(scope->table_name, name) == 0;
}

/* Whether scope column c answers to table qualifier name. */
static bool column_in_table(const struct engine_scope *scope,
                            const struct engine_scope_column *c,
                            const char *name)
{
    if (c->table != NULL && strcasecmp(c->table, "excluded") == 0) {
        return strcasecmp(name, "excluded") == 0;
    }
    return table_matches(scope, name);
}

/* The scope column named name, or -1. */
static ptrdiff_t find_column(const struct engine_scope *scope,
                             const char *table, const char *name)
{
    if (scope == NULL) {
        return -1;
    }
    if (scope->joined) {
        return engine__join_find_column(scope, table, name);
    }
    for (size_t i = 0; i < scope->column_count; i++) {
        const struct engine_scope_column *c = &scope->columns[i];

        if (c->name == NULL || strcasecmp(c->name, name) != 0) {
            continue;
        }
        if (table == NULL ? !c->qualified_only
                          : column_in_table(scope, c, table)) {
            return (ptrdiff_t)i;
        }
    }
    if (engine__table_is_rowid_name(name) &&
        (table == NULL || table_matches(scope, table))) {
        return scope->rowid_column;
    }
    return -1;
}

static int column_ref(struct engine_compile *ctx, size_t index,
                      struct engine_expr **out)
{
    struct engine_expr *e = new_expr(ctx, ENGINE_EXPR_COLUMN, 0);
    const struct engine_scope_column *column;

    if (e == NULL) {
        return oom(ctx);
    }
    e->u.column = index;
    e->has_affinity = true;
    if ((ptrdiff_t)index != ctx->scope->rowid_column &&
        index < ctx->scope->column_count) {
        column = &ctx->scope->columns[index];
        e->affinity = column->affinity;
        e->collation = column->collation;
        e->has_collation = column->has_collation;
        e->has_affinity = !column->untyped;
        e->carries_subtype = column->carries_subtype;
    } else {
        e->affinity = ENGINE_AFFINITY_INTEGER; /* the rowid */
    }
    *out = e;
    return 0;
}

/* A read of column index of the aggregation's output; like (when not NULL)
 * gives its affinity and collation. */
static int output_ref(struct engine_compile *ctx, size_t index,
                      const struct engine_expr *like, struct engine_expr **out)
{
    struct engine_expr *e = new_expr(ctx, ENGINE_EXPR_COLUMN, 0);

    if (e == NULL) {
        return oom(ctx);
    }
    e->u.column = index;
    if (like != NULL) {
        e->affinity = like->affinity;
        e->has_affinity = like->has_affinity;
        e->collation = like->collation;
        e->has_collation = like->has_collation;
    }
    *out = e;
    return 0;
}

/* A result column's alias named name, or NULL. */
static const struct ast_expr *find_alias(const struct engine_compile *ctx,
                                         const char *name)
{
    const struct ast_select *select = ctx->select;

    for (size_t i = 0; select != NULL && i < select->column_count; i++) {
        const struct ast_result_column *column = &select->columns[i];

        if (column->kind == AST_RESULT_EXPR && column->alias != NULL &&
            strcasecmp(column->alias, name) == 0) {
            return column->expr;
        }
    }
    return NULL;
}

bool engine__compile_resolves(const struct engine_compile *ctx,
                              const struct ast_expr *ast)
{
    const char *table = ast->u.column.table;
    const char *name = ast->u.column.name;

    if (find_column(ctx->scope, table, name) != -1) {
        return true;
    }
    if (ctx->scope != NULL && ctx->scope->null_rowid &&
        engine__table_is_rowid_name(name) &&
        (table == NULL || table_matches(ctx->scope, table))) {
        return true;
    }
    return table == NULL && find_alias(ctx, name) != NULL;
}

/* Whether scope's column named by ast is never NULL; *found says whether
 * scope names it at all. */
static bool scope_not_null(const struct engine_scope *scope,
                           const struct ast_expr *ast, bool *found)
{
    ptrdiff_t i = find_column(scope, ast->u.column.table, ast->u.column.name);

    *found = i != -1;
    return i >= 0 && scope->columns[i].not_null;
}

bool engine__compile_column_not_null(const struct engine_compile *ctx,
                                     const struct ast_expr *ast)
{
    bool found;
    bool not_null = scope_not_null(ctx->scope, ast, &found);

    for (const struct engine_outer_frame *frame = ctx->stmt->outer;
         !found && frame != NULL; frame = frame->parent) {
        not_null = scope_not_null(frame->ctx->scope, ast, &found);
    }
    return not_null;
}

static int compile_column(struct engine_compile *ctx,
                          const struct ast_expr *ast, struct engine_expr **out)
{
    const char *table = ast->u.column.table;
    const char *name = ast->u.column.name;
    ptrdiff_t index = find_column(ctx->scope, table, name);
    const struct ast_expr *alias;
    char full[512];
    int rc;

    if (index >= 0) {
        return column_ref(ctx, (size_t)index, out);
    }
    if (index == ENGINE__SCOPE_AMBIGUOUS) {
        if (table != NULL) {
            snprintf(full, sizeof(full), "%s.%s", table, name);
        }
        return sql_error(ctx, "ambiguous column name: %s",
                         table != NULL ? full : name);
    }
    if (ctx->scope != NULL && ctx->scope->null_rowid &&
        engine__table_is_rowid_name(name) &&
        (table == NULL || table_matches(ctx->scope, table))) {
        *out = new_expr(ctx, ENGINE_EXPR_CONSTANT, 0);
        if (*out == NULL) {
            return oom(ctx);
        }
        (*out)->u.constant = engine__value_null();
        return 0;
    }
    alias = table == NULL ? find_alias(ctx, name) : NULL;
    if (alias != NULL && alias != ast) {
        return compile(ctx, alias, out);
    }
    /* NEW.x or OLD.x of a trigger program (trigger_plan.c). */
    rc = engine__trigger_compile_ref(ctx, ast, out);
    if (rc <= 0) {
        return rc == COMMON_ENOMEM ? oom(ctx) : rc;
    }
    /* Not in this query: an enclosing query's column (expr_outer.c). */
    rc = engine__outer_column(ctx, ast, out);
    if (rc <= 0) {
        return rc;
    }
    if (table != NULL) {
        snprintf(full, sizeof(full), "%s.%s", table, name);
        return sql_error(ctx, "no such column: %s", full);
    }
    return sql_error(ctx, "no such column: %s", name);
}

/* "-" before a real literal negates the literal itself: SQLite's TK_UMINUS
 * over TK_FLOAT is codeReal(..., negate=1), so "-0.0" is -0.0, where any
 * other operand is computed as 0 - x (which turns -0.0 into 0.0). */
static bool is_negated_real_literal(const struct ast_expr *ast)
{
    const struct ast_expr *operand = ast->u.unary.operand;

    return ast->kind == AST_UNARY && ast->u.unary.op == AST_NEGATE &&
           operand->kind == AST_LITERAL &&
           operand->u.literal.type == ENGINE_FLOAT;
}

static int compile_unary(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out)
{
    static const enum engine_expr_op ops[] = {
        [AST_NEGATE] = ENGINE_EXPR_NEGATE,
        [AST_BIT_NOT] = ENGINE_EXPR_BIT_NOT,
        [AST_NOT] = ENGINE_EXPR_NOT,
    };
    struct engine_expr *child;
    struct engine_expr *e;
    int rc = compile(ctx, ast->u.unary.operand, &child);

    if (rc != 0) {
        return rc;
    }
    if (is_negated_real_literal(ast)) {
        child->u.constant.u.r = -child->u.constant.u.r;
        *out = child;
        return 0;
    }
    if (ast->kind == AST_UNARY && ast->u.unary.op == AST_PLUS) {
        /* "+x" keeps x's value and collation but has no affinity
         * (datatype3 §4.2, §7). */
        if (child->op == ENGINE_EXPR_COLUMN) {
            e = new_expr(ctx, ENGINE_EXPR_COLUMN, 0);
            if (e == NULL) {
                return oom(ctx);
            }
            *e = *child;
            child = e;
        }
        child->affinity = ENGINE_AFFINITY_BLOB;
        child->has_affinity = false;
        *out = child;
        return 0;
    }
    e = new_expr(ctx,
                 ast->kind == AST_IS_NULL    ? ENGINE_EXPR_IS_NULL
                 : ast->kind == AST_NOT_NULL ? ENGINE_EXPR_NOT_NULL
                                             : ops[ast->u.unary.op],
                 1);
    if (e == NULL) {
        return oom(ctx);
    }
    e->args[0] = child;
    *out = e;
    return 0;
}

static bool binary_is_compare(enum ast_binary_op op,
                              enum engine_compare_op *out)
{
    static const struct {
        enum ast_binary_op ast;
        enum engine_compare_op op;
    } map[] = {
        {AST_EQ, ENGINE_COMPARE_EQ}, {AST_NE, ENGINE_COMPARE_NE},
        {AST_LT, ENGINE_COMPARE_LT}, {AST_LE, ENGINE_COMPARE_LE},
        {AST_GT, ENGINE_COMPARE_GT}, {AST_GE, ENGINE_COMPARE_GE},
        {AST_IS, ENGINE_COMPARE_IS}, {AST_IS_NOT, ENGINE_COMPARE_IS_NOT},
    };

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (map[i].ast == op) {
            *out = map[i].op;
            return true;
        }
    }
    return false;
}

static enum engine_arith_op arith_of(enum ast_binary_op op)
{
    switch (op) {
    case AST_ADD:
        return ENGINE_ARITH_ADD;
    case AST_SUBTRACT:
        return ENGINE_ARITH_SUBTRACT;
    case AST_MULTIPLY:
        return ENGINE_ARITH_MULTIPLY;
    case AST_DIVIDE:
        return ENGINE_ARITH_DIVIDE;
    case AST_REMAINDER:
        return ENGINE_ARITH_REMAINDER;
    case AST_BIT_AND:
        return ENGINE_ARITH_BIT_AND;
    case AST_BIT_OR:
        return ENGINE_ARITH_BIT_OR;
    case AST_SHIFT_LEFT:
        return ENGINE_ARITH_SHIFT_LEFT;
    default:
        return ENGINE_ARITH_SHIFT_RIGHT;
    }
}

/* A two-argument node of op over already compiled operands. */
static int make_binary(struct engine_compile *ctx, enum engine_expr_op op,
                       struct engine_expr *left, struct engine_expr *right,
                       struct engine_expr **out)
{
    struct engine_expr *e = new_expr(ctx, op, 2);

    if (e == NULL) {
        return oom(ctx);
    }
    e->args[0] = left;
    e->args[1] = right;
    if (op == ENGINE_EXPR_COMPARE) {
        e->collation = engine__binary_collation(left, right);
    }
    *out = e;
    return 0;
}

/* "x IS [NOT] TRUE|FALSE": SQLite's resolver turns IS and IS NOT whose
 * right operand is the TRUE or FALSE keyword into TK_TRUTH, which tests
 * x's truth value ("NULL IS FALSE" is 0, "5 IS TRUE" is 1), not equality
 * with 1 or 0 (expr.c, sqlite3ExprIsTruth / OP_IsTrue). */
static bool truth_keyword(const struct ast_expr *e, bool *value)
{
    while (e->kind == AST_COLLATE) {
        e = e->u.collate.operand;
    }
    if (e->kind == AST_BOOLEAN) {
        *value = e->u.literal.u.i != 0;
        return true;
    }
    /* "x IN ()" is parsed into the keyword FALSE, "x NOT IN ()" TRUE
     * (parse.y: TK_STRING "false" then sqlite3ExprIdToTrueFalse). */
    if (e->kind == AST_IN_LIST && e->u.in_list.items.count == 0) {
        *value = e->u.in_list.negated;
        return true;
    }
    return false;
}

static bool binary_is_truth(const struct ast_expr *ast)
{
    bool value;

    return (ast->u.binary.op == AST_IS || ast->u.binary.op == AST_IS_NOT) &&
           truth_keyword(ast->u.binary.right, &value);
}

static int compile_truth(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out)
{
    struct engine_expr *left;
    struct engine_expr *e;
    int rc = compile(ctx, ast->u.binary.left, &left);

    if (rc != 0) {
        return rc;
    }
    e = new_expr(ctx, ENGINE_EXPR_TRUTH, 1);
    if (e == NULL) {
        return oom(ctx);
    }
    e->args[0] = left;
    e->negated = ast->u.binary.op == AST_IS_NOT;
    truth_keyword(ast->u.binary.right, &e->u.truth);
    *out = e;
    return 0;
}

static int compile_binary(struct engine_compile *ctx,
                          const struct ast_expr *ast, struct engine_expr **out)
{
    enum ast_binary_op op = ast->u.binary.op;
    enum engine_compare_op compare;
    struct engine_expr *left;
    struct engine_expr *right;
    enum engine_expr_op kind;
    int rc;

    if (binary_is_truth(ast)) {
        return compile_truth(ctx, ast, out);
    }
    rc = compile(ctx, ast->u.binary.left, &left);
    if (rc == 0) {
        rc = compile(ctx, ast->u.binary.right, &right);
    }
    if (rc != 0) {
        return rc;
    }
    if (op == AST_AND || op == AST_OR) {
        kind = op == AST_AND ? ENGINE_EXPR_AND : ENGINE_EXPR_OR;
    } else if (op == AST_CONCAT) {
        kind = ENGINE_EXPR_CONCAT;
    } else if (binary_is_compare(op, &compare)) {
        kind = ENGINE_EXPR_COMPARE;
    } else {
        kind = ENGINE_EXPR_ARITH;
    }
    rc = make_binary(ctx, kind, left, right, out);
    if (rc == 0 && kind == ENGINE_EXPR_COMPARE) {
        (*out)->u.compare = compare;
    } else if (rc == 0 && kind == ENGINE_EXPR_ARITH) {
        (*out)->u.arith = arith_of(op);
    }
    return rc;
}

/* A node over comparison *out that passes its value (0, 1 or NULL, which
 * CAST AS INTEGER keeps) and carries collation, with no affinity of its
 * own (sqlite3ExprAffinity skips TK_COLLATE). */
static int wrap_compare(struct engine_compile *ctx,
                        enum engine_collation collation,
                        struct engine_expr **out)
{
    struct engine_expr *e = new_expr(ctx, ENGINE_EXPR_CAST, 1);

    if (e == NULL) {
        return oom(ctx);
    }
    e->args[0] = *out;
    e->u.cast_affinity = ENGINE_AFFINITY_INTEGER;
    e->affinity = (*out)->affinity;
    e->has_affinity = (*out)->has_affinity;
    e->collation = collation;
    e->has_collation = true;
    e->explicit_collation = true;
    *out = e;
    return 0;
}

static int compile_collate(struct engine_compile *ctx,
                           const struct ast_expr *ast, struct engine_expr **out)
{
    const char *name = ast->u.collate.name;
    enum engine_collation collation;
    int rc = compile(ctx, ast->u.collate.operand, out);

    if (rc != 0) {
        return rc;
    }
    if (engine__collation_by_name(name, strlen(name), &collation) != 0) {
        return sql_error(ctx, "no such collation sequence: %s", name);
    }
    if ((*out)->op == ENGINE_EXPR_COMPARE) {
        /* "(x <= y) COLLATE NOCASE" collates the comparison's 0 or 1, not
         * the comparison itself, whose collation stays that of x and y
         * (sqlite3ExprCollSeq follows EP_Collate upwards only). Yet the
         * COLLATE still reaches the nodes above it: "CASE WHEN (x = y)
         * COLLATE NOCASE THEN a END" sorts a under NOCASE. So the name
         * goes on a node of its own over the comparison, as SQLite's
         * TK_COLLATE is. */
        return wrap_compare(ctx, collation, out);
    }
    if ((*out)->op == ENGINE_EXPR_COLUMN) {
        struct engine_expr *copy = new_expr(ctx, ENGINE_EXPR_COLUMN, 0);

        if (copy == NULL) {
            return oom(ctx);
        }
        *copy = **out;
        *out = copy;
    }
    (*out)->collation = collation;
    (*out)->has_collation = true;
    (*out)->explicit_collation = true;
    return 0;
}

static int compile_cast(struct engine_compile *ctx, const struct ast_expr *ast,
                        struct engine_expr **out)
{
    const char *type = ast->u.cast.type_name;
    struct engine_expr *e = new_expr(ctx, ENGINE_EXPR_CAST, 1);
    int rc;

    if (e == NULL) {
        return oom(ctx);
    }
    rc = compile(ctx, ast->u.cast.operand, &e->args[0]);
    if (rc != 0) {
        return rc;
    }
    e->u.cast_affinity =
        engine__affinity_of_declared_type(type, type ? strlen(type) : 0);
    e->affinity = e->u.cast_affinity;
    e->has_affinity = true;
    e->collation = e->args[0]->collation;
    e->has_collation = e->args[0]->has_collation;
    *out = e;
    return 0;
}

static int compile_case(struct engine_compile *ctx, const struct ast_expr *ast,
                        struct engine_expr **out)
{
    bool has_operand = ast->u.case_.operand != NULL;
    bool has_else = ast->u.case_.else_ != NULL;
    size_t arms = ast->u.case_.whens.count;
    size_t first = has_operand ? 1 : 0;
    struct engine_expr *e =
        new_expr(ctx, ENGINE_EXPR_CASE, first + arms * 2 + has_else);
    int rc = 0;

    if (e == NULL) {
        return oom(ctx);
    }
    e->has_case_operand = has_operand;
    e->has_else = has_else;
    e->carries_subtype = true; /* a THEN's JSON result stays JSON */
    if (has_operand) {
        rc = compile(ctx, ast->u.case_.operand, &e->args[0]);
    }
    for (size_t i = 0; rc == 0 && i < arms; i++) {
        rc = compile(ctx, ast->u.case_.whens.items[i], &e->args[first + 2 * i]);
        if (rc == 0 && !has_operand) {
            engine__expr_mark_condition(e->args[first + 2 * i]);
        }
        if (rc == 0) {
            rc = compile(ctx, ast->u.case_.thens.items[i],
                         &e->args[first + 2 * i + 1]);
        }
    }
    if (rc == 0 && has_else) {
        rc = compile(ctx, ast->u.case_.else_, &e->args[e->arg_count - 1]);
    }
    *out = e;
    return rc;
}

/* x BETWEEN a AND b is x >= a AND x <= b; NOT BETWEEN is x < a OR x > b
 * (lang_expr.html "The BETWEEN operator"). */
static int compile_between(struct engine_compile *ctx,
                           const struct ast_expr *ast, struct engine_expr **out)
{
    bool negated = ast->u.between.negated;
    struct engine_expr *x1;
    struct engine_expr *x2;
    struct engine_expr *low;
    struct engine_expr *high;
    struct engine_expr *lower_test;
    struct engine_expr *upper_test;
    int rc = compile(ctx, ast->u.between.operand, &x1);

    if (rc == 0) {
        rc = compile(ctx, ast->u.between.operand, &x2);
    }
    if (rc == 0) {
        rc = compile(ctx, ast->u.between.low, &low);
    }
    if (rc == 0) {
        rc = compile(ctx, ast->u.between.high, &high);
    }
    if (rc == 0) {
        rc = make_binary(ctx, ENGINE_EXPR_COMPARE, x1, low, &lower_test);
    }
    if (rc == 0) {
        rc = make_binary(ctx, ENGINE_EXPR_COMPARE, x2, high, &upper_test);
    }
    if (rc != 0) {
        return rc;
    }
    lower_test->u.compare = negated ? ENGINE_COMPARE_LT : ENGINE_COMPARE_GE;
    upper_test->u.compare = negated ? ENGINE_COMPARE_GT : ENGINE_COMPARE_LE;
    rc = make_binary(ctx, negated ? ENGINE_EXPR_OR : ENGINE_EXPR_AND,
                     lower_test, upper_test, out);
    if (rc == 0) {
        (*out)->is_between = true;
    }
    /* A COLLATE on x reaches what reads "x BETWEEN ..." (EP_Collate comes
     * up from the left operand only: parse.y attaches low and high
     * without sqlite3ExprSetHeightAndFlags). */
    if (rc == 0 && x1->explicit_collation) {
        (*out)->collation = x1->collation;
        (*out)->has_collation = true;
        (*out)->explicit_collation = true;
    }
    return rc;
}

static int compile_like(struct engine_compile *ctx, const struct ast_expr *ast,
                        struct engine_expr **out)
{
    bool has_escape = ast->u.like.escape != NULL;
    struct engine_expr *e;
    int rc;

    if (ast->u.like.like_kind == AST_LIKE_MATCH ||
        ast->u.like.like_kind == AST_LIKE_REGEXP) {
        return sql_error(ctx, "no such function: %s",
                         ast->u.like.like_kind == AST_LIKE_MATCH ? "MATCH"
                                                                 : "REGEXP");
    }
    e = new_expr(ctx, ENGINE_EXPR_LIKE, has_escape ? 3 : 2);
    if (e == NULL) {
        return oom(ctx);
    }
    ctx->stmt->calls_function = true;
    e->u.like = ast->u.like.like_kind;
    e->negated = ast->u.like.negated;
    rc = compile(ctx, ast->u.like.operand, &e->args[0]);
    if (rc == 0) {
        rc = compile(ctx, ast->u.like.pattern, &e->args[1]);
    }
    if (rc == 0 && has_escape) {
        rc = compile(ctx, ast->u.like.escape, &e->args[2]);
    }
    *out = e;
    return rc;
}

static int compile_in_list(struct engine_compile *ctx,
                           const struct ast_expr *ast, struct engine_expr **out)
{
    size_t count = ast->u.in_list.items.count;
    struct engine_expr *e = new_expr(ctx, ENGINE_EXPR_IN_LIST, count + 1);
    int rc;

    if (e == NULL) {
        return oom(ctx);
    }
    if (count == 0) {
        /* "x IN ()" is 0 and "x NOT IN ()" 1: SQLite's parser drops x
         * unresolved and unevaluated (parse.y, "expr in_op LP exprlist
         * RP" with an empty list). */
        e->op = ENGINE_EXPR_CONSTANT;
        e->arg_count = 0;
        e->u.constant = engine__value_int(ast->u.in_list.negated ? 1 : 0);
        *out = e;
        return 0;
    }
    e->negated = ast->u.in_list.negated;
    rc = compile(ctx, ast->u.in_list.operand, &e->args[0]);
    if (rc == 0) {
        rc = compile_list(ctx, &ast->u.in_list.items, e, 1);
    }
    if (rc == 0) {
        e->collation = e->args[0]->collation;
        e->has_collation = e->args[0]->has_collation;
    }
    *out = e;
    return rc;
}

/* Plans a subquery; it must return one column unless it is EXISTS. */
/* Plans a subquery; *first (if first is not NULL) gets its first result
 * expression, or NULL for VALUES. */
static int plan_subquery(struct engine_compile *ctx,
                         const struct ast_select *select, bool one_column,
                         struct engine_subquery **out,
                         const struct engine_expr **first)
{
    struct engine_subquery *subquery =
        engine__plan_alloc(ctx->stmt, sizeof(*subquery));
    struct engine_stmt *stmt = ctx->stmt;
    struct engine_outer_frame frame;
    enum engine_affinity *affinities;
    struct engine_expr **projected = NULL;
    size_t column_count;
    char count_text[32];
    int rc;

    if (subquery == NULL) {
        return oom(ctx);
    }
    engine__outer_push(ctx, subquery, &frame);
    rc = engine__plan_select_projected(stmt, select, &subquery->root,
                                       &affinities, &projected, &column_count);
    engine__outer_pop(ctx, &frame);
    if (rc != 0) {
        return rc;
    }
    if (first != NULL) {
        *first = projected != NULL ? projected[0] : NULL;
    }
    if (one_column && column_count != 1) {
        snprintf(count_text, sizeof(count_text), "%zu", column_count);
        return sql_error(ctx, "sub-select returns %s columns - expected 1",
                         count_text);
    }
    subquery->affinity = affinities[0];
    engine__arena_init(&subquery->arena);
    rc = engine__stmt_own_subquery(stmt, subquery);
    *out = subquery;
    return rc;
}

/* Whether a subquery's first result column has an affinity of its own
 * (sqlite3ExprAffinity of TK_SELECT is that of its first column): a
 * column, "*", or a CAST, under any COLLATE. */
static bool select_has_affinity(const struct ast_select *select)
{
    const struct ast_expr *e;

    /* A compound's Select is its last term (pEList of the rightmost). */
    while (select->compound != AST_COMPOUND_NONE) {
        select = select->right;
    }

    if (select->column_count == 0 ||
        select->columns[0].kind != AST_RESULT_EXPR) {
        return select->column_count > 0;
    }
    e = select->columns[0].expr;
    while (e->kind == AST_COLLATE) {
        e = e->u.collate.operand;
    }
    return e->kind == AST_COLUMN || e->kind == AST_CAST;
}

/* EXISTS never computes its subquery's result columns (selectInnerLoop
 * skips them for SRT_Exists), so "EXISTS (SELECT like(a, b, 'xy') FROM
 * t)" raises no error. When no aggregate, GROUP BY, HAVING or ORDER BY
 * depends on those columns, the subquery is planned as SELECT 1. */
static const struct ast_select *exists_select(struct engine_compile *ctx,
                                              const struct ast_select *select)
{
    struct ast_select *copy;
    struct ast_result_column *one;
    struct ast_expr *literal;

    if (select->columns == NULL || select->group_by.count > 0 ||
        select->having != NULL || select->order_by_count > 0) {
        return select;
    }
    for (size_t i = 0; i < select->column_count; i++) {
        if (select->columns[i].kind == AST_RESULT_EXPR &&
            engine__ast_has_aggregate(select->columns[i].expr)) {
            return select;
        }
    }
    copy = engine__plan_alloc(ctx->stmt, sizeof(*copy));
    one = engine__plan_alloc(ctx->stmt, sizeof(*one));
    literal = engine__plan_alloc(ctx->stmt, sizeof(*literal));
    if (copy == NULL || one == NULL || literal == NULL) {
        return NULL;
    }
    memset(literal, 0, sizeof(*literal));
    literal->kind = AST_LITERAL;
    literal->u.literal = engine__value_int(1);
    memset(one, 0, sizeof(*one));
    one->kind = AST_RESULT_EXPR;
    one->expr = literal;
    *copy = *select;
    copy->columns = one;
    copy->column_count = 1;
    /* sqlite3CodeSubselect gives EXISTS a LIMIT 1: it stops at the first
     * row its WHERE accepts. */
    if (copy->limit == NULL) {
        struct ast_expr *limit = engine__plan_alloc(ctx->stmt, sizeof(*limit));

        if (limit == NULL) {
            return NULL;
        }
        *limit = *literal;
        copy->limit = limit;
    }
    return copy;
}

/* A scalar subquery runs with LIMIT 1 (sqlite3CodeSubselect), so its loop
 * stops at the first row: a copy of select with that limit, or NULL. */
static const struct ast_select *limit_one(struct engine_compile *ctx,
                                          const struct ast_select *select)
{
    struct ast_select *copy = engine__plan_alloc(ctx->stmt, sizeof(*copy));
    struct ast_expr *one = engine__plan_alloc(ctx->stmt, sizeof(*one));

    if (copy == NULL || one == NULL) {
        return NULL;
    }
    memset(one, 0, sizeof(*one));
    one->kind = AST_LITERAL;
    one->u.literal = engine__value_int(1);
    *copy = *select;
    copy->limit = one;
    return copy;
}

static int compile_subquery(struct engine_compile *ctx,
                            const struct ast_expr *ast,
                            struct engine_expr **out)
{
    bool is_in = ast->kind == AST_IN_SELECT;
    enum engine_expr_op op = is_in                     ? ENGINE_EXPR_IN_QUERY
                             : ast->kind == AST_EXISTS ? ENGINE_EXPR_EXISTS
                                                       : ENGINE_EXPR_SUBQUERY;
    struct engine_expr *e = new_expr(ctx, op, is_in ? 1 : 0);
    const struct ast_select *select =
        is_in ? ast->u.in_select.select : ast->u.subquery.select;
    const struct engine_expr *first = NULL;
    int rc;

    if (op == ENGINE_EXPR_SUBQUERY && e != NULL && select->limit == NULL) {
        select = limit_one(ctx, select);
    }
    if (op == ENGINE_EXPR_EXISTS && e != NULL) {
        /* The columns are still resolved, for their errors ("no such
         * table" in a nested subquery), before SELECT 1 replaces them. */
        const struct ast_select *one = exists_select(ctx, select);

        rc = one != select && one != NULL
                 ? plan_subquery(ctx, select, false, &e->u.subquery, NULL)
                 : 0;
        if (rc != 0) {
            *out = e;
            return rc;
        }
        /* A nested subquery may have given it an aggregate ("EXISTS
         * (SELECT (SELECT count(t2.c) FROM t1) FROM t2)" counts t2): then
         * it has one row, as an aggregate query, and stays as written. */
        if (one == NULL || engine__outer_aggregates(ctx->stmt, select) == 0) {
            select = one;
        }
    }
    if (e == NULL || select == NULL) {
        return oom(ctx);
    }
    rc = plan_subquery(ctx, select, op != ENGINE_EXPR_EXISTS, &e->u.subquery,
                       &first);
    if (rc == 0 && is_in) {
        e->negated = ast->u.in_select.negated;
        e->u.subquery->is_set = true;
        rc = compile(ctx, ast->u.in_select.operand, &e->args[0]);
    }
    /* "x IN (SELECT y ...)" compares under sqlite3BinaryCompareCollSeq(x,
     * y) (sqlite3CodeRhsOfIN's key): x's collation, else y's, so a column
     * y's own collation counts when x has none. */
    if (rc == 0 && is_in && first != NULL) {
        e->u.subquery->collation = engine__binary_collation(e->args[0], first);
        /* A correlated IN runs again for every row anyway. */
        if (e->u.subquery->outer_count == 0) {
            engine__in_mark_live(ctx, select, e);
        }
    }
    if (rc == 0 && op == ENGINE_EXPR_EXISTS) {
        /* A correlated EXISTS may become a hash semi join (semi.h). */
        rc = engine__semi_plan(ctx, ast->u.subquery.select, e);
    }
    if (rc == 0 && op == ENGINE_EXPR_SUBQUERY) {
        e->affinity = e->u.subquery->affinity;
    }
    if (rc == 0 && op == ENGINE_EXPR_SUBQUERY) {
        e->has_affinity = select_has_affinity(select);
    } else if (rc == 0 && is_in) {
        e->set_has_affinity = select_has_affinity(select);
    }
    *out = e;
    return rc;
}

static int arity_error(struct engine_compile *ctx, const char *name)
{
    return sql_error(ctx, "wrong number of arguments to function %s()", name);
}

static bool is_aggregate_call(const struct ast_expr *ast);

bool engine__ast_is_aggregate_call(const struct ast_expr *ast)
{
    return is_aggregate_call(ast);
}

static bool is_aggregate_call(const struct ast_expr *ast)
{
    const char *name = ast->u.function.name;
    size_t argc = ast->u.function.args.count;

    if (ast->u.function.star) {
        /* "f(*)" is f called with no argument (parse.y): an aggregate only
         * if f names one. */
        return engine__aggregate_lookup(name, strlen(name)) != NULL;
    }
    if ((strcasecmp(name, "min") == 0 || strcasecmp(name, "max") == 0) &&
        argc != 1) {
        return false; /* the scalar min()/max() */
    }
    return engine__aggregate_lookup(name, strlen(name)) != NULL;
}

/* Registers an aggregate call of the aggregation being planned and
 * returns the index of its output column. */
static int add_aggregate(struct engine_compile *ctx, const struct ast_expr *ast,
                         size_t *column)
{
    struct engine_agg_plan *agg = ctx->agg;
    struct engine_compile inner = *ctx;
    const char *name = ast->u.function.name;
    size_t argc = ast->u.function.args.count;
    struct engine_aggregate_spec *spec;
    int rc = 0;

    for (size_t i = 0; i < agg->aggregate_count; i++) {
        if (engine__ast_equal(agg->aggregate_asts[i], ast)) {
            *column = agg->key_count + i;
            return 0;
        }
    }
    if (agg->aggregate_count == agg->aggregate_capacity) {
        if (ctx->foreign_aggregate == ast && ctx->aggregate_home != NULL) {
            return engine__outer_want(ctx, ast); /* one more slot */
        }
        return sql_error(ctx, "too many aggregates in %s", "query");
    }
    spec = &agg->aggregates[agg->aggregate_count];
    spec->def = engine__aggregate_lookup(name, strlen(name));
    /* Only count() takes no argument, so only count(*) passes: sum(*) is
     * "wrong number of arguments to function sum()". */
    spec->count_star = ast->u.function.star;
    if (!engine__func_arity_ok(spec->def->arg_min, spec->def->arg_max,
                               (int)argc)) {
        return arity_error(ctx, name);
    }
    inner.agg = NULL;
    inner.allow_aggregates = false;
    inner.window = NULL; /* sum(row_number() OVER ()): misuse */
    inner.clause = "aggregate";
    spec->args = engine__plan_alloc(ctx->stmt, (argc + 1) * sizeof(void *));
    if (spec->args == NULL) {
        return oom(ctx);
    }
    for (size_t i = 0; rc == 0 && i < argc; i++) {
        rc = engine__compile_expr(&inner, ast->u.function.args.items[i],
                                  &spec->args[i]);
    }
    if (rc == 0 && ast->u.function.filter != NULL) {
        rc =
            engine__compile_expr(&inner, ast->u.function.filter, &spec->filter);
    }
    if (rc == 0 && ast->u.function.filter != NULL) {
        engine__expr_mark_condition(spec->filter);
    }
    if (rc != 0) {
        return rc;
    }
    spec->arg_count = argc;
    spec->distinct = ast->u.function.distinct;
    spec->collation =
        argc > 0 ? spec->args[0]->collation : ENGINE_COLLATION_BINARY;
    agg->aggregate_asts[agg->aggregate_count] = ast;
    *column = agg->key_count + agg->aggregate_count++;
    return 0;
}

static int compile_scalar_call(struct engine_compile *ctx,
                               const struct ast_expr *ast,
                               struct engine_expr **out)
{
    const char *name = ast->u.function.name;
    size_t argc = ast->u.function.args.count;
    const struct engine_scalar_def *def =
        engine__scalar_lookup(name, strlen(name));
    struct engine_expr *e;
    int rc;

    if (def == NULL) {
        return sql_error(ctx, "no such function: %s", name);
    }
    if (!engine__func_arity_ok(def->arg_min, def->arg_max, (int)argc) ||
        argc > ENGINE__FUNCTION_ARGS_MAX) {
        return arity_error(ctx, name);
    }
    if (ast->u.function.distinct || ast->u.function.filter != NULL) {
        return sql_error(ctx, "DISTINCT or FILTER on non-aggregate %s()", name);
    }
    e = new_expr(ctx, ENGINE_EXPR_FUNCTION, argc);
    if (e == NULL) {
        return oom(ctx);
    }
    e->u.function = def;
    rc = compile_list(ctx, &ast->u.function.args, e, 0);
    /* A call has a collation only through an argument with an explicit
     * COLLATE (sqlite3ExprCollSeq follows EP_Collate into the argument
     * list): lower(c) over a NOCASE column sorts and compares as BINARY.
     * The collation the function itself uses (min, max, instr...) is the
     * first argument's with any collation, found at evaluation. */
    for (size_t i = 0; rc == 0 && i < argc; i++) {
        if (e->args[i]->explicit_collation) {
            e->collation = e->args[i]->collation;
            e->has_collation = true;
            e->explicit_collation = true;
            break;
        }
    }
    *out = e;
    return rc;
}

/* coalesce(), ifnull() and iif() evaluate an argument only when it
 * decides the result: SQLite codes coalesce and ifnull inline, stopping
 * at the first argument that is not NULL (SQLITE_FUNC_COALESCE), and iif
 * as CASE WHEN a THEN b ELSE c END (INLINEFUNC_iif), so that
 * "ifnull(1, abs(-9223372036854775808))" is 1, not an overflow error. */
static int make_lazy(struct engine_stmt *stmt, struct engine_expr *e)
{
    const char *name = e->u.function->name;

    if (strcmp(name, "coalesce") == 0 || strcmp(name, "ifnull") == 0) {
        e->op = ENGINE_EXPR_COALESCE;
    } else if (strcmp(name, "iif") == 0) {
        e->op = ENGINE_EXPR_CASE;
        e->has_case_operand = false;
        e->has_else = true;
        engine__expr_mark_condition(e->args[0]);
    } else {
        stmt->calls_function = true;
    }
    return 0;
}

static int compile_function(struct engine_compile *ctx,
                            const struct ast_expr *ast,
                            struct engine_expr **out)
{
    size_t column = 0;
    int rc;

    if (engine__window_is_call(ast)) {
        return engine__window_compile_call(ctx, ast, out);
    }
    if (!is_aggregate_call(ast)) {
        rc = compile_scalar_call(ctx, ast, out);
        if (rc == 0) {
            (*out)->carries_subtype = true;
        }
        return rc == 0 ? make_lazy(ctx->stmt, *out) : rc;
    }
    /* One that reads only enclosing queries' columns is theirs. */
    rc = engine__outer_aggregate(ctx, ast, out);
    if (rc <= 0) {
        return rc;
    }
    /* It makes the query an aggregate one, but from its ORDER BY only if
     * it is one already (resolveSelectStep() clears NC_AllowAgg first). */
    if (ctx->agg == NULL && ctx->aggregate_home != NULL &&
        ctx->foreign_aggregate == ast && strcmp(ctx->clause, "ORDER BY") != 0) {
        return engine__outer_want(ctx, ast);
    }
    if (ctx->foreign_aggregate == ast && ctx->clause != NULL &&
        strcmp(ctx->clause, "GROUP BY") == 0) {
        return sql_error(ctx, "aggregate functions are not allowed in the "
                              "GROUP BY clause");
    }
    if (ctx->agg == NULL || !ctx->allow_aggregates) {
        return sql_error(ctx, "misuse of aggregate: %s()",
                         ast->u.function.name);
    }
    rc = add_aggregate(ctx, ast, &column);
    if (rc == 0) {
        rc = output_ref(ctx, column, NULL, out);
    }
    if (rc == 0) {
        (*out)->carries_subtype = true;
    }
    return rc;
}

/* A column read below the aggregation, valued at each group's last row. */
static int add_bare(struct engine_compile *ctx, const struct ast_expr *ast,
                    struct engine_expr **out)
{
    struct engine_agg_plan *agg = ctx->agg;
    struct engine_compile inner = *ctx;
    struct engine_expr *e;
    size_t index;
    int rc;

    for (index = 0; index < agg->bare_count; index++) {
        if (engine__ast_equal(agg->bare_asts[index], ast)) {
            break;
        }
    }
    if (index == agg->bare_count) {
        if (agg->bare_count == agg->bare_capacity) {
            return sql_error(ctx, "too many columns in %s", "result set");
        }
        inner.agg = NULL;
        inner.allow_aggregates = false;
        rc = engine__compile_expr(&inner, ast, &agg->bare[index]);
        if (rc != 0) {
            return rc;
        }
        agg->bare_asts[index] = ast;
        agg->bare_count++;
    }
    e = agg->bare[index];
    return output_ref(ctx, agg->key_count + agg->aggregate_capacity + index, e,
                      out);
}

/* Above an aggregation: a group key, an aggregate or a bare column becomes
 * a read of the aggregation's output. Returns 1 when ast was not one. */
static int compile_above_aggregation(struct engine_compile *ctx,
                                     const struct ast_expr *ast,
                                     struct engine_expr **out)
{
    const struct ast_expr_list *keys = ctx->agg->group_by;

    for (size_t i = 0; keys != NULL && i < keys->count; i++) {
        if (engine__ast_equal(keys->items[i], ast)) {
            return output_ref(ctx, i, ctx->agg->keys[i], out);
        }
    }
    if (ast->kind == AST_COLUMN) {
        return add_bare(ctx, ast, out);
    }
    return 1;
}

static int compile_kind(struct engine_compile *ctx, const struct ast_expr *ast,
                        struct engine_expr **out)
{
    switch (ast->kind) {
    case AST_COLUMN:
        return compile_column(ctx, ast, out);
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return compile_unary(ctx, ast, out);
    case AST_BINARY:
        return compile_binary(ctx, ast, out);
    case AST_COLLATE:
        return compile_collate(ctx, ast, out);
    case AST_CAST:
        return compile_cast(ctx, ast, out);
    case AST_CASE:
        return compile_case(ctx, ast, out);
    case AST_BETWEEN:
        return compile_between(ctx, ast, out);
    case AST_LIKE:
        return compile_like(ctx, ast, out);
    case AST_IN_LIST:
        return compile_in_list(ctx, ast, out);
    case AST_IN_SELECT:
    case AST_EXISTS:
    case AST_SUBQUERY:
        return compile_subquery(ctx, ast, out);
    case AST_FUNCTION:
        return compile_function(ctx, ast, out);
    case AST_RAISE:
        return engine__trigger_compile_raise(ctx, ast, out);
    default:
        return sql_error(ctx, "unsupported expression: %s",
                         ast->text ? ast->text : "?");
    }
}

/* An explicit COLLATE reaches the expressions above it: SQLite marks
 * every node over a COLLATE with EP_Collate, and sqlite3ExprCollSeq takes
 * the collation of the first such operand (left, then the argument list,
 * then right), so "(x || b COLLATE RTRIM) = 'a'" compares under RTRIM and
 * "trim(x COLLATE NOCASE)" sorts under NOCASE. A column's own collation
 * does not travel this way. */
static void inherit_collation(struct engine_expr *e)
{
    if (e->explicit_collation || e->op == ENGINE_EXPR_COLUMN ||
        e->op == ENGINE_EXPR_CONSTANT || e->op == ENGINE_EXPR_PARAMETER) {
        return;
    }
    for (size_t i = 0; i < e->arg_count; i++) {
        if (e->args[i] != NULL && e->args[i]->explicit_collation) {
            e->collation = e->args[i]->collation;
            e->has_collation = true;
            e->explicit_collation = true;
            return;
        }
    }
}

static int compile(struct engine_compile *ctx, const struct ast_expr *ast,
                   struct engine_expr **out)
{
    struct engine_expr *e;
    int rc;

    if (++ctx->depth > ENGINE_MAX_EXPR_DEPTH) {
        ctx->depth--;
        return sql_error(ctx,
                         "Expression tree is too large (maximum depth "
                         "%s)",
                         "1000");
    }
    if (ctx->agg != NULL && ctx->allow_aggregates) {
        rc = compile_above_aggregation(ctx, ast, out);
        if (rc <= 0) {
            ctx->depth--;
            return rc;
        }
    }
    if (ast->kind == AST_LITERAL || ast->kind == AST_BOOLEAN ||
        ast->kind == AST_PARAMETER) {
        e = new_expr(ctx,
                     ast->kind == AST_PARAMETER ? ENGINE_EXPR_PARAMETER
                                                : ENGINE_EXPR_CONSTANT,
                     0);
        if (e == NULL) {
            rc = oom(ctx);
        } else if (ast->kind == AST_PARAMETER) {
            e->u.parameter = ast->u.parameter.index;
            rc = 0;
        } else {
            e->u.constant = ast->u.literal;
            rc = 0;
        }
        *out = e;
    } else {
        rc = compile_kind(ctx, ast, out);
        if (rc == 0) {
            inherit_collation(*out);
        }
    }
    ctx->depth--;
    return rc;
}

int engine__compile_expr(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out)
{
    return compile(ctx, ast, out);
}
