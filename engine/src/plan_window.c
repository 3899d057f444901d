/* SPDX-License-Identifier: MIT
 *
 * plan_window.c: planning window functions (window.h). A call is checked
 * and resolved as SQLite's resolve.c and sqlite3WindowUpdate() do: the
 * function must be a window function or an aggregate, its named window
 * must exist, a window built on a named one may add only what that one
 * lacks (sqlite3WindowChain), and RANGE with an offset needs exactly one
 * ORDER BY term. The call becomes a read of a column the window stage
 * appends; engine__window_plan_ops() builds the stage once every
 * expression of the SELECT is compiled.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "window.h"

struct window_builtin {
    const char *name;
    int arg_min;
    int arg_max;
    enum engine_window_fn fn;
};

/* The built-in window functions (window.c's aWindowFuncs) other than the
 * aggregates. */
static const struct window_builtin builtins[] = {
    {"row_number", 0, 0, ENGINE_WINDOW_ROW_NUMBER},
    {"rank", 0, 0, ENGINE_WINDOW_RANK},
    {"dense_rank", 0, 0, ENGINE_WINDOW_DENSE_RANK},
    {"percent_rank", 0, 0, ENGINE_WINDOW_PERCENT_RANK},
    {"cume_dist", 0, 0, ENGINE_WINDOW_CUME_DIST},
    {"ntile", 1, 1, ENGINE_WINDOW_NTILE},
    {"lag", 1, 3, ENGINE_WINDOW_LAG},
    {"lead", 1, 3, ENGINE_WINDOW_LEAD},
    {"first_value", 1, 1, ENGINE_WINDOW_FIRST_VALUE},
    {"last_value", 1, 1, ENGINE_WINDOW_LAST_VALUE},
    {"nth_value", 2, 2, ENGINE_WINDOW_NTH_VALUE},
};

static const struct window_builtin *builtin_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        if (strcasecmp(builtins[i].name, name) == 0) {
            return &builtins[i];
        }
    }
    return NULL;
}

static int sql_error(struct engine_stmt *stmt, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int sql_error(struct engine_stmt *stmt, const char *format, ...)
{
    char message[ENGINE__ERRMSG_SIZE];
    va_list args;

    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    return engine__db_error(stmt->db, ENGINE_ESQL, "%s", message);
}

bool engine__window_is_call(const struct ast_expr *ast)
{
    return ast->kind == AST_FUNCTION &&
           (ast->u.function.over != NULL ||
            builtin_lookup(ast->u.function.name) != NULL);
}

/* The latest of resolved[0..count) named name (SQLite's windowFind walks
 * its list newest first), or NULL. */
static const struct ast_window *find_window(const struct ast_window *resolved,
                                            size_t count, const char *name)
{
    for (size_t i = count; i-- > 0;) {
        if (strcasecmp(resolved[i].name, name) == 0) {
            return &resolved[i];
        }
    }
    return NULL;
}

/* sqlite3WindowChain(): w built on base, into *out. */
static int chain(struct engine_stmt *stmt, const struct ast_window *w,
                 const struct ast_window *base, struct ast_window *out)
{
    const char *what = NULL;

    if (w->partition_by.count > 0) {
        what = "PARTITION clause";
    } else if (base->order_by_count > 0 && w->order_by_count > 0) {
        what = "ORDER BY clause";
    } else if (base->has_frame) {
        what = "frame specification";
    }
    if (what != NULL) {
        return sql_error(stmt, "cannot override %s of window: %s", what,
                         w->base);
    }
    *out = *w;
    out->partition_by = base->partition_by;
    if (w->order_by_count == 0) {
        out->order_by = base->order_by;
        out->order_by_count = base->order_by_count;
    }
    return 0;
}

int engine__window_begin(struct engine_stmt *stmt,
                         const struct ast_select *select,
                         struct engine_window_plan **out)
{
    struct engine_window_plan *plan = engine__plan_alloc(stmt, sizeof(*plan));
    size_t count = select->window_count;

    if (plan == NULL) {
        return COMMON_ENOMEM;
    }
    plan->select = select;
    plan->resolved =
        engine__plan_alloc(stmt, (count + 1) * sizeof(*plan->resolved));
    if (plan->resolved == NULL) {
        return COMMON_ENOMEM;
    }
    /* parse.y chains each definition to those before it; the first one's
     * base is never looked at. */
    for (size_t i = 0; i < count; i++) {
        const struct ast_window *w = &select->windows[i];
        const struct ast_window *base;
        int rc;

        plan->resolved[i] = *w;
        if (i == 0 || w->base == NULL) {
            continue;
        }
        base = find_window(plan->resolved, i, w->base);
        if (base == NULL) {
            return sql_error(stmt, "no such window: %s", w->base);
        }
        rc = chain(stmt, w, base, &plan->resolved[i]);
        if (rc != 0) {
            return rc;
        }
    }
    *out = plan;
    return 0;
}

/* The window a call's OVER names or writes, bases applied. */
static int effective_window(struct engine_compile *ctx,
                            const struct ast_window *over,
                            struct ast_window *out)
{
    struct engine_window_plan *plan = ctx->window;
    const struct ast_window *base;

    if (over->base == NULL) {
        *out = *over;
        return 0;
    }
    base = find_window(plan->resolved, plan->select->window_count, over->base);
    if (base == NULL) {
        return sql_error(ctx->stmt, "no such window: %s", over->base);
    }
    if (over->is_reference) {
        *out = *base;
        return 0;
    }
    return chain(ctx->stmt, over, base, out);
}

static bool is_offset(enum ast_bound_kind kind)
{
    return kind == AST_BOUND_PRECEDING || kind == AST_BOUND_FOLLOWING;
}

static bool not_constant(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    return ast->kind == AST_COLUMN || ast->kind == AST_FUNCTION ||
           ast->kind == AST_SUBQUERY || ast->kind == AST_EXISTS ||
           ast->kind == AST_IN_SELECT;
}

/* sqlite3WindowOffsetExpr(): an offset that is not constant is NULL. */
static int compile_bound(struct engine_compile *ctx,
                         const struct ast_frame_bound *ast,
                         struct engine_window_bound *out)
{
    struct engine_compile inner = *ctx;

    out->kind = ast->kind;
    if (!is_offset(ast->kind)) {
        return 0;
    }
    if (engine__ast_any(ast->offset, not_constant, NULL)) {
        out->null_offset = true;
        return 0;
    }
    inner.scope = NULL;
    inner.select = NULL;
    inner.agg = NULL;
    inner.allow_aggregates = false;
    inner.window = NULL;
    return engine__compile_expr(&inner, ast->offset, &out->offset);
}

static int compile_frame(struct engine_compile *ctx, const struct ast_window *w,
                         struct engine_window_frame *frame)
{
    int rc;

    if (!w->has_frame) {
        /* The default: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
         * (all peers of the current row; the partition without ORDER
         * BY). */
        frame->type = AST_FRAME_RANGE;
        frame->start.kind = AST_BOUND_UNBOUNDED_PRECEDING;
        frame->end.kind = AST_BOUND_CURRENT_ROW;
        return 0;
    }
    frame->type = w->frame_type;
    frame->exclude = w->exclude;
    rc = compile_bound(ctx, &w->start, &frame->start);
    return rc == 0 ? compile_bound(ctx, &w->end, &frame->end) : rc;
}

static bool same_order(const struct ast_window *a, const struct ast_window *b)
{
    if (a->partition_by.count != b->partition_by.count ||
        a->order_by_count != b->order_by_count) {
        return false;
    }
    for (size_t i = 0; i < a->partition_by.count; i++) {
        if (!engine__ast_equal(a->partition_by.items[i],
                               b->partition_by.items[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < a->order_by_count; i++) {
        const struct ast_order_item *x = &a->order_by[i];
        const struct ast_order_item *y = &b->order_by[i];

        if (!engine__ast_equal(x->expr, y->expr) ||
            x->descending != y->descending || x->nulls != y->nulls) {
            return false;
        }
    }
    return true;
}

static int compile_layer(struct engine_compile *inner,
                         const struct ast_window *w,
                         struct engine_window_layer *layer)
{
    struct engine_stmt *stmt = inner->stmt;
    size_t p = w->partition_by.count;
    size_t o = w->order_by_count;
    int rc = 0;

    layer->partition = engine__plan_alloc(stmt, (p + 1) * sizeof(void *));
    layer->order = engine__plan_alloc(stmt, (o + 1) * sizeof(void *));
    layer->order_keys =
        engine__plan_alloc(stmt, (o + 1) * sizeof(*layer->order_keys));
    if (layer->partition == NULL || layer->order == NULL ||
        layer->order_keys == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < p; i++) {
        rc = engine__compile_expr(inner, w->partition_by.items[i],
                                  &layer->partition[i]);
    }
    for (size_t i = 0; rc == 0 && i < o; i++) {
        const struct ast_order_item *item = &w->order_by[i];
        struct engine_sort_key *key = &layer->order_keys[i];

        rc = engine__compile_expr(inner, item->expr, &layer->order[i]);
        if (rc == 0) {
            key->descending = item->descending;
            key->nulls_first =
                item->nulls == AST_NULLS_FIRST ||
                (item->nulls == AST_NULLS_DEFAULT && !item->descending);
            key->collation = layer->order[i]->collation;
        }
    }
    layer->window = w;
    layer->partition_count = p;
    layer->order_count = o;
    return rc;
}

/* The layer of w's PARTITION BY and ORDER BY, made if new. */
static int find_layer(struct engine_compile *inner,
                      struct engine_window_plan *plan,
                      const struct ast_window *w, size_t *out)
{
    struct engine_window_layer *layers;
    struct ast_window *copy;

    for (size_t i = 0; i < plan->layer_count; i++) {
        if (same_order(plan->layers[i].window, w)) {
            *out = i;
            return 0;
        }
    }
    if (plan->layer_count == plan->layer_capacity) {
        size_t capacity = plan->layer_capacity * 2 + 4;

        layers = engine__plan_alloc(inner->stmt, capacity * sizeof(*layers));
        if (layers == NULL) {
            return COMMON_ENOMEM;
        }
        if (plan->layer_count > 0) {
            memcpy(layers, plan->layers, plan->layer_count * sizeof(*layers));
        }
        plan->layers = layers;
        plan->layer_capacity = capacity;
    }
    copy = engine__plan_alloc(inner->stmt, sizeof(*copy));
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    *copy = *w;
    *out = plan->layer_count;
    plan->layer_count++;
    return compile_layer(inner, copy, &plan->layers[*out]);
}

static int add_call(struct engine_stmt *stmt, struct engine_window_plan *plan,
                    struct engine_window_call *call)
{
    if (plan->call_count == plan->call_capacity) {
        size_t capacity = plan->call_capacity * 2 + 8;
        struct engine_window_call **calls =
            engine__plan_alloc(stmt, capacity * sizeof(*calls));

        if (calls == NULL) {
            return COMMON_ENOMEM;
        }
        if (plan->call_count > 0) {
            memcpy(calls, plan->calls, plan->call_count * sizeof(*calls));
        }
        plan->calls = calls;
        plan->call_capacity = capacity;
    }
    plan->calls[plan->call_count++] = call;
    return 0;
}

/* Which function ast calls: a built-in window function, else an
 * aggregate (min and max with one argument only), else an error. */
static int resolve_function(struct engine_compile *ctx,
                            const struct ast_expr *ast,
                            struct engine_window_call *call)
{
    const char *name = ast->u.function.name;
    int argc = (int)ast->u.function.args.count;
    const struct window_builtin *builtin = builtin_lookup(name);
    bool minmax = strcasecmp(name, "min") == 0 || strcasecmp(name, "max") == 0;

    if (builtin != NULL) {
        call->fn = builtin->fn;
        if (ast->u.function.star ||
            !engine__func_arity_ok(builtin->arg_min, builtin->arg_max, argc)) {
            return sql_error(
                ctx->stmt, "wrong number of arguments to function %s()", name);
        }
        return 0;
    }
    call->fn = ENGINE_WINDOW_AGGREGATE;
    call->def = engine__aggregate_lookup(name, strlen(name));
    if (call->def != NULL && (!minmax || argc == 1)) {
        if (!engine__func_arity_ok(call->def->arg_min, call->def->arg_max,
                                   argc)) {
            return sql_error(
                ctx->stmt, "wrong number of arguments to function %s()", name);
        }
        return 0;
    }
    if (engine__scalar_lookup(name, strlen(name)) != NULL) {
        return sql_error(ctx->stmt, "%s() may not be used as a window function",
                         name);
    }
    return sql_error(ctx->stmt, "no such function: %s", name);
}

static int compile_arguments(struct engine_compile *inner,
                             const struct ast_expr *ast,
                             struct engine_window_call *call)
{
    size_t argc = ast->u.function.args.count;
    int rc = 0;

    call->args = engine__plan_alloc(inner->stmt, (argc + 1) * sizeof(void *));
    if (call->args == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < argc; i++) {
        rc = engine__compile_expr(inner, ast->u.function.args.items[i],
                                  &call->args[i]);
    }
    call->arg_count = argc;
    if (rc == 0 && ast->u.function.filter != NULL) {
        rc = engine__compile_expr(inner, ast->u.function.filter, &call->filter);
        if (rc == 0) {
            engine__expr_mark_condition(call->filter);
        }
    }
    if (rc == 0 && argc > 0) {
        call->collation = call->args[0]->collation;
    }
    return rc;
}

static int make_ref(struct engine_stmt *stmt, struct engine_window_call *call)
{
    struct engine_expr *e = engine__plan_alloc(stmt, sizeof(*e));

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    e->op = ENGINE_EXPR_COLUMN;
    e->affinity = ENGINE_AFFINITY_BLOB;
    e->collation = ENGINE_COLLATION_BINARY;
    e->carries_subtype = true;
    call->ref = e;
    return 0;
}

int engine__window_compile_call(struct engine_compile *ctx,
                                const struct ast_expr *ast,
                                struct engine_expr **out)
{
    struct engine_window_plan *plan = ctx->window;
    const char *name = ast->u.function.name;
    struct engine_compile inner = *ctx;
    struct engine_window_call *call;
    struct ast_window w;
    int rc;

    for (size_t i = 0; plan != NULL && i < plan->call_count; i++) {
        if (plan->calls[i]->ast == ast) {
            *out = plan->calls[i]->ref;
            return 0;
        }
    }
    call = engine__plan_alloc(ctx->stmt, sizeof(*call));
    if (call == NULL) {
        return COMMON_ENOMEM;
    }
    rc = resolve_function(ctx, ast, call);
    if (rc != 0) {
        return rc;
    }
    if (ast->u.function.over == NULL || plan == NULL) {
        return sql_error(ctx->stmt, "misuse of window function %s()", name);
    }
    if (ast->u.function.distinct) {
        return sql_error(ctx->stmt, "DISTINCT is not supported for window %s",
                         "functions");
    }
    if (ast->u.function.filter != NULL && call->fn != ENGINE_WINDOW_AGGREGATE) {
        return sql_error(ctx->stmt,
                         "FILTER clause may only be used with aggregate "
                         "window %s",
                         "functions");
    }
    rc = effective_window(ctx, ast->u.function.over, &w);
    if (rc != 0) {
        return rc;
    }
    if (w.has_frame && w.frame_type == AST_FRAME_RANGE &&
        (is_offset(w.start.kind) || is_offset(w.end.kind)) &&
        w.order_by_count != 1) {
        return sql_error(ctx->stmt,
                         "RANGE with offset PRECEDING/FOLLOWING requires one "
                         "ORDER BY %s",
                         "expression");
    }
    inner.window = NULL;
    call->ast = ast;
    rc = compile_arguments(&inner, ast, call);
    if (rc == 0) {
        rc = find_layer(&inner, plan, &w, &call->layer);
    }
    if (rc == 0) {
        rc = compile_frame(ctx, &w, &call->frame);
    }
    if (rc == 0) {
        rc = make_ref(ctx->stmt, call);
    }
    if (rc == 0) {
        rc = add_call(ctx->stmt, plan, call);
    }
    *out = call->ref;
    return rc;
}

static struct engine_expr *column_ref(struct engine_stmt *stmt, size_t column)
{
    struct engine_expr *e = engine__plan_alloc(stmt, sizeof(*e));

    if (e != NULL) {
        e->op = ENGINE_EXPR_COLUMN;
        e->affinity = ENGINE_AFFINITY_BLOB;
        e->collation = ENGINE_COLLATION_BINARY;
        e->u.column = column;
    }
    return e;
}

/* The rows one layer's window operator reads: the n input columns, the
 * keys, then each call's arguments and FILTER. */
static int layer_inputs(struct engine_stmt *stmt,
                        const struct engine_window_layer *layer,
                        struct engine_window_call **calls, size_t call_count,
                        size_t n, struct engine_expr ***out, size_t *width)
{
    size_t keys = layer->partition_count + layer->order_count;
    size_t count = n + keys;
    struct engine_expr **exprs;
    size_t at;

    for (size_t i = 0; i < call_count; i++) {
        count += calls[i]->arg_count + (calls[i]->filter != NULL ? 1 : 0);
    }
    exprs = engine__plan_alloc(stmt, (count + 1) * sizeof(*exprs));
    if (exprs == NULL) {
        return COMMON_ENOMEM;
    }
    for (at = 0; at < n; at++) {
        exprs[at] = column_ref(stmt, at);
        if (exprs[at] == NULL) {
            return COMMON_ENOMEM;
        }
    }
    for (size_t i = 0; i < layer->partition_count; i++) {
        exprs[at++] = layer->partition[i];
    }
    for (size_t i = 0; i < layer->order_count; i++) {
        exprs[at++] = layer->order[i];
    }
    for (size_t i = 0; i < call_count; i++) {
        calls[i]->first_arg = at;
        for (size_t a = 0; a < calls[i]->arg_count; a++) {
            exprs[at++] = calls[i]->args[a];
        }
        if (calls[i]->filter != NULL) {
            exprs[at++] = calls[i]->filter;
        }
    }
    *out = exprs;
    *width = count;
    return 0;
}

/* Sorts the layer's rows by its partition keys (ascending, NULLs first)
 * then its ORDER BY; no sort without either. */
static int layer_sort(struct engine_stmt *stmt,
                      const struct engine_window_layer *layer, size_t n,
                      struct engine_op **op)
{
    size_t count = layer->partition_count + layer->order_count;
    struct engine_sort_key *keys;

    if (count == 0) {
        return 0;
    }
    keys = engine__plan_alloc(stmt, count * sizeof(*keys));
    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < layer->partition_count; i++) {
        keys[i].column = n + i;
        keys[i].nulls_first = true;
        keys[i].collation = layer->partition[i]->collation;
    }
    for (size_t i = 0; i < layer->order_count; i++) {
        keys[layer->partition_count + i] = layer->order_keys[i];
        keys[layer->partition_count + i].column =
            n + layer->partition_count + i;
    }
    *op = engine__op_sort(stmt, *op, keys, count, NULL, NULL);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

static int plan_layer(struct engine_stmt *stmt, struct engine_window_plan *plan,
                      size_t index, struct engine_op **op)
{
    const struct engine_window_layer *layer = &plan->layers[index];
    size_t n = (*op)->column_count;
    struct engine_window_call **calls =
        engine__plan_alloc(stmt, (plan->call_count + 1) * sizeof(*calls));
    struct engine_expr **exprs;
    size_t count = 0;
    size_t width;
    int rc;

    if (calls == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < plan->call_count; i++) {
        if (plan->calls[i]->layer == index) {
            plan->calls[i]->ref->u.column = n + count;
            calls[count++] = plan->calls[i];
        }
    }
    rc = layer_inputs(stmt, layer, calls, count, n, &exprs, &width);
    if (rc != 0) {
        return rc;
    }
    *op = engine__op_project(stmt, *op, exprs, width);
    if (*op == NULL) {
        return COMMON_ENOMEM;
    }
    rc = layer_sort(stmt, layer, n, op);
    if (rc != 0) {
        return rc;
    }
    *op = engine__op_window(stmt, *op, layer, calls, count, n);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

int engine__window_plan_ops(struct engine_stmt *stmt,
                            struct engine_window_plan *plan,
                            struct engine_op **op)
{
    /* SQLite links each window at the head of the SELECT's list, so the
     * first one written is computed last and its sort gives the order of
     * rows without an ORDER BY (and of ties between earlier layers'). */
    for (size_t i = plan != NULL ? plan->layer_count : 0; i-- > 0;) {
        int rc = plan_layer(stmt, plan, i, op);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
