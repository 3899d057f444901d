/* SPDX-License-Identifier: MIT
 *
 * expr_outer.c: correlated subqueries. A name that a subquery's own FROM
 * lacks is looked up in the enclosing queries, innermost first, as
 * SQLite's lookupName() (resolve.c) walks NameContext.pNext. The subquery
 * keeps such an outer reference compiled against the enclosing query's
 * scope (an argument of the subquery), and the reference itself becomes an
 * ENGINE_EXPR_OUTER node reading a slot of the subquery. For every row of
 * the enclosing query the arguments are computed, copied into the slots,
 * and the subquery runs again from the start: SQLite codes a correlated
 * subquery without OP_Once, so its loop runs for each row.
 *
 * A sub-subquery reading a column two levels up makes the middle subquery
 * correlated too: its reference, compiled in the middle query, is itself
 * an outer reference there.
 */
#include <string.h>

#include "expr_int.h"
#include "plan.h"
#include "semi.h"

void engine__outer_push(struct engine_compile *ctx,
                        struct engine_subquery *subquery,
                        struct engine_outer_frame *frame)
{
    frame->ctx = ctx;
    frame->subquery = subquery;
    frame->parent = ctx->stmt->outer;
    ctx->stmt->outer = frame;
}

void engine__outer_pop(struct engine_compile *ctx,
                       struct engine_outer_frame *frame)
{
    ctx->stmt->outer = frame->parent;
}

/* Room for one more argument of subquery. 0 or COMMON_ENOMEM. */
static int grow(struct engine_stmt *stmt, struct engine_subquery *subquery)
{
    size_t capacity = subquery->outer_capacity * 2 + 4;
    struct engine_expr **args;
    const struct ast_expr **asts;
    struct engine_value **slots;
    size_t n = subquery->outer_count;

    if (n < subquery->outer_capacity) {
        return 0;
    }
    args = engine__plan_alloc(stmt, capacity * sizeof(*args));
    asts = engine__plan_alloc(stmt, capacity * sizeof(*asts));
    slots = engine__plan_alloc(stmt, capacity * sizeof(*slots));
    if (args == NULL || asts == NULL || slots == NULL) {
        return COMMON_ENOMEM;
    }
    if (n > 0) {
        memcpy(args, subquery->outer_args, n * sizeof(*args));
        memcpy(asts, subquery->outer_asts, n * sizeof(*asts));
        memcpy(slots, subquery->outer_slots, n * sizeof(*slots));
    }
    subquery->outer_args = args;
    subquery->outer_asts = asts;
    subquery->outer_slots = slots;
    subquery->outer_capacity = capacity;
    return 0;
}

/* The argument of frame's subquery that computes ast in the enclosing
 * query, added unless the same expression is one already: *index. */
static int find_argument(struct engine_outer_frame *frame,
                         const struct ast_expr *ast, size_t *index)
{
    struct engine_subquery *subquery = frame->subquery;
    struct engine_stmt *stmt = frame->ctx->stmt;
    struct engine_outer_frame *saved = stmt->outer;
    size_t n = subquery->outer_count;
    struct engine_expr *arg = NULL;
    int rc;

    for (*index = 0; *index < n; (*index)++) {
        if (engine__ast_equal(subquery->outer_asts[*index], ast)) {
            return 0;
        }
    }
    /* Compiled where the subquery is written, whose own enclosing queries
     * are frame's parents. */
    stmt->outer = frame->parent;
    rc = engine__compile_expr(frame->ctx, ast, &arg);
    stmt->outer = saved;
    if (rc != 0) {
        return rc;
    }
    if (grow(stmt, subquery) != 0) {
        return COMMON_ENOMEM;
    }
    subquery->outer_slots[n] =
        engine__plan_alloc(stmt, sizeof(*subquery->outer_slots[n]));
    if (subquery->outer_slots[n] == NULL) {
        return COMMON_ENOMEM;
    }
    *subquery->outer_slots[n] = engine__value_null();
    subquery->outer_args[n] = arg;
    subquery->outer_asts[n] = ast;
    subquery->outer_count++;
    return 0;
}

/* A node reading frame's argument index, typed as the argument is. */
static int outer_node(struct engine_outer_frame *frame, size_t index,
                      struct engine_expr **out)
{
    struct engine_stmt *stmt = frame->ctx->stmt;
    const struct engine_expr *arg = frame->subquery->outer_args[index];
    struct engine_expr *e = engine__plan_alloc(stmt, sizeof(*e));

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    e->op = ENGINE_EXPR_OUTER;
    e->u.slot = frame->subquery->outer_slots[index];
    /* A column of the enclosing query keeps its affinity and collation
     * in the subquery (SQLite's TK_COLUMN of an outer cursor). */
    e->affinity = arg->affinity;
    e->has_affinity = arg->has_affinity;
    e->collation = arg->collation;
    e->has_collation = arg->has_collation;
    e->carries_subtype = arg->carries_subtype;
    if (engine__vector_init(&e->result, ENGINE_VECTOR_VALUES) != 0 ||
        engine__stmt_own_expr(stmt, e) != 0) {
        engine__vector_close(&e->result);
        return COMMON_ENOMEM;
    }
    *out = e;
    return 0;
}

static int outer_value(struct engine_outer_frame *frame,
                       const struct ast_expr *ast, struct engine_expr **out)
{
    size_t index = 0;
    int rc = find_argument(frame, ast, &index);

    if (rc == 0) {
        rc = outer_node(frame, index, out);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(frame->ctx->stmt->db, rc, "out of memory");
    }
    return rc;
}

int engine__outer_column(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out)
{
    struct engine_outer_frame *frame = ctx->stmt->outer;

    if (frame == NULL || ctx->local_only) {
        return 1;
    }
    return outer_value(frame, ast, out);
}

/* ---- aggregates of enclosing queries ----
 *
 * SQLite's resolver gives an aggregate call to the innermost query whose
 * FROM its arguments read (resolve.c, the sqlite3ReferencesSrcList() walk
 * up NameContext.pNext): "SELECT (SELECT count(t1.a)) FROM t1" counts in
 * the outer query, which becomes an aggregate query, and the subquery
 * reads the count as it reads an outer column. A query planned before its
 * subqueries showed it such an aggregate is planned again. */

/* An aggregate call a subquery gave to a SELECT, known by its result
 * columns: the copies the planner makes of a SELECT (limit_one(),
 * having_to_where()) share them. */
struct engine_outer_agg {
    const struct ast_result_column *columns;
    const struct ast_expr *call;
    struct engine_outer_agg *next;
};

/* The most constant null tests one aggregate call's walk sets aside. */
#define CONSTANT_TESTS_MAX 32

/* The columns an aggregate call reads, as SQLite's resolver leaves them:
 * "x IS [NOT] NULL" of a column x that is never NULL is a constant to it
 * (resolve.c, TK_NOTNULL and TK_ISNULL), so that x no longer counts. */
struct column_walk {
    const struct engine_compile *ctx;
    const struct ast_expr *skipped[CONSTANT_TESTS_MAX]; /* those x */
    size_t skipped_count;
    bool local_only; /* count only the columns of ctx's own query */
};

static bool note_constant_test(const struct ast_expr *ast, const void *arg)
{
    struct column_walk *walk = (struct column_walk *)arg;
    const struct ast_expr *operand;

    if (ast->kind != AST_IS_NULL && ast->kind != AST_NOT_NULL) {
        return false;
    }
    operand = ast->u.unary.operand;
    if (operand->kind == AST_COLUMN &&
        walk->skipped_count < CONSTANT_TESTS_MAX &&
        engine__compile_column_not_null(walk->ctx, operand)) {
        walk->skipped[walk->skipped_count++] = operand;
    }
    return false;
}

static bool counts_column(const struct ast_expr *ast, const void *arg)
{
    const struct column_walk *walk = arg;

    if (ast->kind != AST_COLUMN) {
        return false;
    }
    for (size_t i = 0; i < walk->skipped_count; i++) {
        if (walk->skipped[i] == ast) {
            return false;
        }
    }
    return !walk->local_only || engine__compile_resolves(walk->ctx, ast);
}

/* Whether aggregate call ast, written in ctx, belongs to an enclosing
 * query: it reads columns, none of ctx's own query. */
static bool is_foreign(const struct engine_compile *ctx,
                       const struct ast_expr *ast)
{
    struct column_walk walk = {.ctx = ctx};

    if (ctx->stmt->outer == NULL || ctx->local_only) {
        return false;
    }
    engine__ast_any(ast, note_constant_test, &walk);
    if (!engine__ast_any(ast, counts_column, &walk)) {
        return false;
    }
    walk.local_only = true;
    return !engine__ast_any(ast, counts_column, &walk);
}

int engine__outer_aggregate(struct engine_compile *ctx,
                            const struct ast_expr *ast,
                            struct engine_expr **out)
{
    struct engine_outer_frame *frame = ctx->stmt->outer;
    const struct ast_expr *saved;
    int rc;

    if (!is_foreign(ctx, ast)) {
        return 1;
    }
    saved = frame->ctx->foreign_aggregate;
    frame->ctx->foreign_aggregate = ast;
    rc = outer_value(frame, ast, out);
    frame->ctx->foreign_aggregate = saved;
    return rc;
}

int engine__outer_want(struct engine_compile *ctx, const struct ast_expr *ast)
{
    struct engine_stmt *stmt = ctx->stmt;
    struct engine_outer_agg *want;

    for (want = stmt->outer_aggs; want != NULL; want = want->next) {
        if (want->columns == ctx->aggregate_home->columns &&
            engine__ast_equal(want->call, ast)) {
            break;
        }
    }
    if (want == NULL) {
        want = engine__plan_alloc(stmt, sizeof(*want));
        if (want == NULL) {
            return COMMON_ENOMEM;
        }
        want->columns = ctx->aggregate_home->columns;
        want->call = ast;
        want->next = stmt->outer_aggs;
        stmt->outer_aggs = want;
    }
    engine__db_error(stmt->db, ENGINE_ESQL, "misuse of aggregate: %s()",
                     ast->u.function.name);
    return ENGINE__PLAN_AGAIN;
}

size_t engine__outer_aggregates(const struct engine_stmt *stmt,
                                const struct ast_select *select)
{
    size_t count = 0;

    for (const struct engine_outer_agg *want = stmt->outer_aggs; want != NULL;
         want = want->next) {
        count += select->columns != NULL && want->columns == select->columns;
    }
    return count;
}

struct foreign_count {
    const struct engine_compile *ctx;
    size_t count;
};

/* Counts the foreign aggregate calls (engine__ast_any() goes on while
 * this returns false). */
static bool count_foreign(const struct ast_expr *ast, const void *arg)
{
    struct foreign_count *found = (struct foreign_count *)arg;

    if (ast->kind == AST_FUNCTION && engine__ast_is_aggregate_call(ast) &&
        is_foreign(found->ctx, ast)) {
        found->count++;
    }
    return false;
}

size_t engine__outer_foreign_aggregates(const struct engine_compile *ctx,
                                        const struct ast_expr *ast)
{
    struct foreign_count found = {.ctx = ctx};

    if (ast != NULL && ctx->stmt->outer != NULL) {
        engine__ast_any(ast, count_foreign, &found);
    }
    return found.count;
}

/* ---- evaluation ---- */

static void set_truth(struct engine_vector *out, uint32_t row, int truth)
{
    out->nulls[row] = truth < 0;
    out->data.i64[row] = truth > 0;
}

/* The result of expr for one enclosing row, its subquery just run. */
static int row_result(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_vector *x, uint32_t row)
{
    struct engine_subquery *subquery = expr->u.subquery;
    struct engine_vector *out = &expr->result;
    struct engine_value v = subquery->value;
    int truth = 0;
    int rc;

    switch (expr->op) {
    case ENGINE_EXPR_SUBQUERY:
        /* The subquery's bytes last until its next run. */
        if ((v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) &&
            v.u.s.size > 0) {
            v.u.s.bytes =
                engine__arena_memdup(eval->arena, v.u.s.bytes, v.u.s.size);
            if (v.u.s.bytes == NULL) {
                return engine__error(eval->exec, COMMON_ENOMEM,
                                     "out of memory");
            }
        }
        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
        return 0;
    case ENGINE_EXPR_EXISTS:
        set_truth(out, row, subquery->exists);
        return 0;
    default:
        rc =
            engine__expr_in_row(expr, eval, engine__vector_get(x, row), &truth);
        if (rc == 0) {
            set_truth(out, row, truth);
        }
        return rc;
    }
}

int engine__outer_eval(struct engine_expr *expr, struct engine_eval *eval,
                       const struct engine_batch *batch)
{
    struct engine_subquery *subquery = expr->u.subquery;
    size_t n = subquery->outer_count;
    const struct engine_vector **args =
        engine__arena_alloc(eval->arena, (n + 1) * sizeof(*args));
    const struct engine_vector *x = NULL;
    int rc = 0;

    if (subquery->semi != NULL) {
        return engine__semi_eval(expr, eval, batch); /* expr_semi.c */
    }
    if (args == NULL) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = engine__expr_eval(subquery->outer_args[i], eval, batch, &args[i]);
    }
    if (rc == 0 && expr->op == ENGINE_EXPR_IN_QUERY) {
        rc = engine__expr_eval(expr->args[0], eval, batch, &x);
    }
    expr->result.kind = expr->op == ENGINE_EXPR_SUBQUERY ? ENGINE_VECTOR_VALUES
                                                         : ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; rc == 0 && i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);

        for (size_t a = 0; a < n; a++) {
            *subquery->outer_slots[a] = engine__vector_get(args[a], row);
        }
        rc = engine__subquery_run(subquery, eval->exec);
        if (rc == 0) {
            rc = row_result(expr, eval, x, row);
        }
    }
    return rc;
}
