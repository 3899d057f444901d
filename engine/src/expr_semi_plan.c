/* SPDX-License-Identifier: MIT
 *
 * expr_semi_plan.c: choosing to decorrelate a correlated EXISTS into a
 * hash semi join (semi.h), at plan time. The subquery has already been
 * planned as a correlated one (expr_outer.c), which stays its plan unless
 * every condition below holds:
 *
 * - its SELECT reads one table, with a WHERE and no GROUP BY, HAVING,
 *   aggregate, window, ORDER BY, LIMIT, OFFSET, WITH or index hint, and no
 *   result alias (which a WHERE name could mean);
 * - each term of the WHERE's top-level AND either reads no enclosing
 *   column, or is "inner = outer" (either way round), inner reading no
 *   enclosing column and outer no column of the table; at least one is;
 * - no term calls a function, LIKE or GLOB or holds a subquery: what is
 *   left can raise no error and gives the same value whenever it is run,
 *   so reading the table once with the terms over it alone, at the first
 *   enclosing row, and testing the equalities per enclosing row, finds
 *   the rows SQLite's loop finds (sqlite3WhereBegin over u for each row),
 *   in whatever order it would test the terms;
 * - the table's rowid or an index serves the WHERE (engine__plan_access):
 *   then the correlated subquery already looks its rows up per row, which
 *   costs less than reading them all once (not taken);
 * - the statement is no trigger program, whose NEW and OLD change between
 *   firings without a new execution.
 */
#include <string.h>

#include "access.h"
#include "semi.h"
#include "table.h"

/* The most terms a decorrelated WHERE may have. */
#define SEMI_TERMS_MAX 64

struct semi_terms {
    const struct ast_expr *asts[SEMI_TERMS_MAX];
    struct engine_expr *exprs[SEMI_TERMS_MAX]; /* over the table's scope */
    size_t count;
};

/* Splits where's top-level AND into terms; false when there are too many. */
static bool split_terms(const struct ast_expr *ast, struct semi_terms *terms)
{
    if (ast->kind == AST_BINARY && ast->u.binary.op == AST_AND &&
        !ast->is_false) {
        return split_terms(ast->u.binary.left, terms) &&
               split_terms(ast->u.binary.right, terms);
    }
    if (terms->count == SEMI_TERMS_MAX) {
        return false;
    }
    terms->asts[terms->count++] = ast;
    return true;
}

/* Anything that may raise an error, differ between runs, or read a query
 * of its own. */
static bool is_unsafe(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    switch (ast->kind) {
    case AST_FUNCTION:
    case AST_LIKE:
    case AST_IN_SELECT:
    case AST_EXISTS:
    case AST_SUBQUERY:
    case AST_RAISE:
        return true;
    default:
        return false;
    }
}

static bool has_alias(const struct ast_select *select)
{
    for (size_t i = 0; i < select->column_count; i++) {
        if (select->columns[i].alias != NULL) {
            return true;
        }
    }
    return false;
}

/* The table select reads, if its shape allows a semi join; else NULL. */
static struct engine_table *semi_table(struct engine_compile *ctx,
                                       const struct ast_select *select)
{
    const struct ast_from_item *item = &select->from[0];

    if (select->compound != AST_COMPOUND_NONE || select->columns == NULL ||
        select->from_count != 1 || select->where == NULL ||
        select->group_by.count > 0 || select->having != NULL ||
        select->window_count > 0 || select->order_by_count > 0 ||
        select->limit != NULL || select->offset != NULL ||
        select->with != NULL || has_alias(select) ||
        ctx->stmt->trigger != NULL ||
        engine__outer_aggregates(ctx->stmt, select) > 0) {
        return NULL;
    }
    for (size_t i = 0; i < select->column_count; i++) {
        if (select->columns[i].kind == AST_RESULT_EXPR &&
            engine__ast_has_aggregate(select->columns[i].expr)) {
            return NULL; /* one row, whatever the WHERE */
        }
    }
    if (item->table == NULL || item->select != NULL || item->function ||
        item->recursive || item->cte != NULL || item->on != NULL ||
        item->hint.indexed_by != NULL || item->hint.not_indexed) {
        return NULL;
    }
    return engine__catalog_find(ctx->stmt->db, item->table);
}

static bool reads(const struct engine_expr *e, enum engine_expr_op op)
{
    if (e->op == op) {
        return true;
    }
    for (size_t i = 0; i < e->arg_count; i++) {
        if (reads(e->args[i], op)) {
            return true;
        }
    }
    return false;
}

/* Makes term i a key of semi if it is "inner = outer": true, or false
 * when it reads the enclosing query otherwise. */
static bool add_key(struct engine_semi *semi, const struct semi_terms *terms,
                    size_t i, const struct ast_expr **outer_ast)
{
    struct engine_expr *e = terms->exprs[i];
    const struct ast_expr *ast = terms->asts[i];
    struct engine_semi_key *key = &semi->keys[semi->key_count];

    if (e->op != ENGINE_EXPR_COMPARE || e->u.compare != ENGINE_COMPARE_EQ ||
        e->arg_count != 2 || ast->kind != AST_BINARY ||
        ast->u.binary.op != AST_EQ || semi->key_count == ENGINE__JOIN_KEY_MAX) {
        return false;
    }
    for (int arg = 0; arg < 2; arg++) {
        const struct engine_expr *outer = e->args[1 - arg];

        if (!reads(e->args[arg], ENGINE_EXPR_OUTER) &&
            reads(outer, ENGINE_EXPR_OUTER) &&
            !reads(outer, ENGINE_EXPR_COLUMN)) {
            key->compare = e;
            key->inner_arg = arg;
            key->inner = e->args[arg];
            *outer_ast = arg == 0 ? ast->u.binary.right : ast->u.binary.left;
            semi->key_count++;
            return true;
        }
    }
    return false;
}

/* Compiles the terms over scope, in the subquery (frame pushed). */
static int compile_terms(struct engine_compile *inner, struct semi_terms *terms)
{
    for (size_t i = 0; i < terms->count; i++) {
        int rc = engine__compile_expr(inner, terms->asts[i], &terms->exprs[i]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Whether the rowid or an index serves the WHERE as the correlated
 * subquery is planned. */
static int has_access(struct engine_compile *inner,
                      const struct ast_select *select,
                      const struct engine_table *table, bool *out)
{
    struct engine_access *access = NULL;
    struct engine_expr *where;
    int rc = engine__compile_expr(inner, select->where, &where);

    if (rc == 0) {
        engine__expr_mark_condition(where);
        rc = engine__plan_access(inner->stmt, table, inner->scope->rowid_column,
                                 &select->from[0].hint, select->where, where,
                                 &access);
    }
    *out = access != NULL;
    return rc;
}

/* The table's rows passing the terms that read no enclosing column. */
static int make_source(struct engine_compile *inner, struct engine_semi *semi,
                       const struct semi_terms *terms, const bool *is_key)
{
    struct engine_stmt *stmt = inner->stmt;
    struct engine_table *table = semi->table;
    const struct ast_expr *where = NULL;
    struct engine_expr *filter;
    size_t *columns =
        engine__plan_alloc(stmt, (table->column_count + 1) * sizeof(*columns));
    int rc;

    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < table->column_count; i++) {
        columns[i] = i;
    }
    columns[table->column_count] = SIZE_MAX; /* the rowid */
    semi->source =
        engine__op_scan(stmt, table, columns, table->column_count + 1);
    for (size_t i = 0; semi->source != NULL && i < terms->count; i++) {
        if (!is_key[i]) {
            where = where == NULL
                        ? terms->asts[i]
                        : engine__plan_ast_and(stmt, where, terms->asts[i]);
            if (where == NULL) {
                return COMMON_ENOMEM;
            }
        }
    }
    if (semi->source == NULL || where == NULL) {
        return semi->source == NULL ? COMMON_ENOMEM : 0;
    }
    rc = engine__compile_expr(inner, where, &filter);
    if (rc != 0) {
        return rc;
    }
    engine__expr_mark_condition(filter);
    semi->source = engine__op_filter(stmt, semi->source, filter);
    return semi->source == NULL ? COMMON_ENOMEM : 0;
}

/* Classifies the compiled terms into keys (is_key) and terms over the
 * table; *ok false when a term reads the enclosing query otherwise. */
static void classify(struct engine_semi *semi, const struct semi_terms *terms,
                     bool *is_key, const struct ast_expr **outer_asts, bool *ok)
{
    *ok = true;
    for (size_t i = 0; *ok && i < terms->count; i++) {
        is_key[i] = reads(terms->exprs[i], ENGINE_EXPR_OUTER);
        if (is_key[i]) {
            *ok = add_key(semi, terms, i, &outer_asts[semi->key_count]);
        }
    }
    *ok = *ok && semi->key_count > 0;
}

/* Plans semi over the subquery's table once the shape is known: *ok false
 * when the terms do not allow it. */
static int plan_inner(struct engine_compile *ctx,
                      const struct ast_select *select, struct engine_semi *semi,
                      const struct ast_expr **outer_asts, bool *ok)
{
    struct engine_stmt *stmt = ctx->stmt;
    struct engine_subquery *probe = engine__plan_alloc(stmt, sizeof(*probe));
    struct semi_terms *terms = engine__plan_alloc(stmt, sizeof(*terms));
    bool *is_key = engine__plan_alloc(stmt, SEMI_TERMS_MAX * sizeof(*is_key));
    struct engine_scope *scope = engine__plan_alloc(stmt, sizeof(*scope));
    struct engine_compile inner = {
        .stmt = stmt, .scope = scope, .select = select, .clause = "WHERE"};
    struct engine_outer_frame frame;
    bool indexed = false;
    int rc;

    *ok = false;
    if (probe == NULL || terms == NULL || is_key == NULL || scope == NULL) {
        return COMMON_ENOMEM;
    }
    if (!split_terms(select->where, terms)) {
        return 0;
    }
    for (size_t i = 0; i < terms->count; i++) {
        if (engine__ast_any(terms->asts[i], is_unsafe, NULL)) {
            return 0;
        }
    }
    rc =
        engine__scope_of_table(stmt, semi->table, select->from[0].alias, scope);
    if (rc != 0) {
        return rc;
    }
    /* The enclosing columns the terms read become the arguments of a
     * probe subquery of this one's frame, never run. */
    engine__outer_push(ctx, probe, &frame);
    rc = compile_terms(&inner, terms);
    if (rc == 0) {
        classify(semi, terms, is_key, outer_asts, ok);
    }
    if (rc == 0 && *ok) {
        rc = has_access(&inner, select, semi->table, &indexed);
        *ok = !indexed;
    }
    if (rc == 0 && *ok) {
        rc = make_source(&inner, semi, terms, is_key);
    }
    engine__outer_pop(ctx, &frame);
    return rc;
}

int engine__semi_plan(struct engine_compile *ctx,
                      const struct ast_select *select, struct engine_expr *e)
{
    struct engine_stmt *stmt = ctx->stmt;
    struct engine_table *table = semi_table(ctx, select);
    const struct ast_expr *outer_asts[ENGINE__JOIN_KEY_MAX];
    struct engine_semi *semi;
    bool ok = false;
    int rc;

    if (table == NULL || e->op != ENGINE_EXPR_EXISTS ||
        e->u.subquery->outer_count == 0) {
        return 0;
    }
    semi = engine__plan_alloc(stmt, sizeof(*semi));
    if (semi == NULL) {
        return COMMON_ENOMEM;
    }
    semi->table = table;
    rc = plan_inner(ctx, select, semi, outer_asts, &ok);
    /* The outer sides, compiled where the subquery is written: the same
     * names the subquery's outer references resolve (find_argument in
     * expr_outer.c). */
    for (size_t k = 0; rc == 0 && ok && k < semi->key_count; k++) {
        rc = engine__compile_expr(ctx, outer_asts[k], &semi->keys[k].outer);
    }
    if (rc == 0 && ok) {
        engine__arena_init(&semi->rows_arena);
        engine__arena_init(&semi->key_arena);
        e->u.subquery->semi = semi;
    }
    return rc;
}
