/* SPDX-License-Identifier: MIT
 *
 * expr.c: vectorized evaluation of compiled expressions (expr.h).
 *
 * Each node evaluates its children over the batch, then computes its own
 * rows: typed kernels when the inputs are INT64/DOUBLE vectors and the
 * operation cannot leave the type (integer overflow bails out to the row
 * path), otherwise value.h's rules row by row. AND, OR and CASE evaluate
 * their later operands only on the rows that still need them, as SQLite's
 * short-circuit jumps do, so `0 AND abs(-9223372036854775808)` is 0, not
 * an overflow error.
 */
#include "expr.h"

#include <string.h>

#include "engine_int.h"
#include "expr_int.h"
#include "func_int.h"

static bool is_numeric(enum engine_affinity affinity)
{
    return affinity == ENGINE_AFFINITY_NUMERIC ||
           affinity == ENGINE_AFFINITY_INTEGER ||
           affinity == ENGINE_AFFINITY_REAL;
}

/* The operands of comparison expr as it compares them. */
int engine__expr_compare_prepare(const struct engine_expr *expr,
                                 struct engine_value *a, struct engine_value *b,
                                 struct engine_arena *arena)
{
    enum engine_affinity a_affinity = expr->args[0]->affinity;
    enum engine_affinity b_affinity = expr->args[1]->affinity;

    /* sqlite3CompareAffinity(): when both operands have an affinity of
     * their own (columns, CASTs) and neither is numeric, no conversion
     * is made: a TEXT column equals an untyped column's 1 only if that is
     * the text '1'. The TEXT rule applies only against no affinity. */
    if (expr->args[0]->has_affinity && expr->args[1]->has_affinity &&
        !is_numeric(a_affinity) && !is_numeric(b_affinity)) {
        a_affinity = b_affinity = ENGINE_AFFINITY_BLOB;
    }
    return engine__comparison_prepare(a, a_affinity, b, b_affinity, arena);
}

int engine__expr_compare_values(const struct engine_expr *expr,
                                struct engine_value a, struct engine_value b,
                                struct engine_arena *arena, int *result)
{
    enum engine_compare_op op = expr->u.compare;
    int rc = engine__expr_compare_prepare(expr, &a, &b, arena);
    int c;

    if (rc != 0) {
        return rc;
    }
    if (a.type == ENGINE_NULL || b.type == ENGINE_NULL) {
        bool both = a.type == b.type;

        if (op == ENGINE_COMPARE_IS) {
            *result = both;
        } else if (op == ENGINE_COMPARE_IS_NOT) {
            *result = !both;
        } else {
            *result = -1;
        }
        return 0;
    }
    c = engine__value_compare(&a, &b, expr->collation);
    *result = engine__compare_outcome(op, c);
    return 0;
}

int engine__compare_outcome(enum engine_compare_op op, int c)
{
    switch (op) {
    case ENGINE_COMPARE_EQ:
    case ENGINE_COMPARE_IS:
        return c == 0;
    case ENGINE_COMPARE_NE:
    case ENGINE_COMPARE_IS_NOT:
        return c != 0;
    case ENGINE_COMPARE_LT:
        return c < 0;
    case ENGINE_COMPARE_LE:
        return c <= 0;
    case ENGINE_COMPARE_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}

static void set_bool(struct engine_vector *out, uint32_t row, int truth)
{
    out->nulls[row] = truth < 0;
    out->data.i64[row] = truth > 0;
}

/* Evaluates every argument of expr over batch into vals. */
static int eval_args(struct engine_expr *expr, struct engine_eval *eval,
                     const struct engine_batch *batch,
                     const struct engine_vector **vals)
{
    for (size_t i = 0; i < expr->arg_count; i++) {
        int rc = engine__expr_eval(expr->args[i], eval, batch, &vals[i]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int eval_constant(struct engine_expr *expr, struct engine_value v,
                         const struct engine_batch *batch)
{
    struct engine_vector *out = &expr->result;

    out->kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);

        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
    }
    return 0;
}

static int eval_compare(struct engine_expr *expr, struct engine_eval *eval,
                        const struct engine_batch *batch)
{
    const struct engine_vector *vals[2];
    struct engine_vector *out = &expr->result;
    int rc;

    out->kind = ENGINE_VECTOR_INT64;
    if (expr->is_satisfied) {
        for (uint32_t i = 0; i < batch->selected; i++) {
            set_bool(out, engine__batch_row(batch, i), 1);
        }
        return 0;
    }
    rc = eval_args(expr, eval, batch, vals);
    if (rc != 0) {
        return rc;
    }
    if (engine__compare_kernel(expr, vals[0], vals[1], batch, out)) {
        return 0;
    }
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        int truth = 0;

        rc = engine__expr_compare_values(expr, engine__vector_get(vals[0], row),
                                         engine__vector_get(vals[1], row),
                                         eval->arena, &truth);
        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        set_bool(out, row, truth);
    }
    return 0;
}

static int eval_arith(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_batch *batch)
{
    const struct engine_vector *vals[2];
    struct engine_vector *out = &expr->result;
    int rc = eval_args(expr, eval, batch, vals);

    if (rc != 0) {
        return rc;
    }
    if (engine__arith_kernel(expr->u.arith, vals[0], vals[1], batch, out)) {
        return 0;
    }
    out->kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value a = engine__vector_get(vals[0], row);
        struct engine_value b = engine__vector_get(vals[1], row);
        struct engine_value v;

        engine__value_arith(expr->u.arith, &a, &b, &v);
        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
    }
    return 0;
}

/* Unary operators and others computed from one value per row. */
static int unary_value(struct engine_expr *expr, struct engine_eval *eval,
                       struct engine_value a, struct engine_value *v)
{
    switch (expr->op) {
    case ENGINE_EXPR_NEGATE:
        engine__value_negate(&a, v);
        return 0;
    case ENGINE_EXPR_BIT_NOT:
        engine__value_bit_not(&a, v);
        return 0;
    case ENGINE_EXPR_NOT: {
        int truth = engine__value_truth(&a);

        *v = truth < 0 ? engine__value_null() : engine__value_int(!truth);
        return 0;
    }
    case ENGINE_EXPR_IS_NULL:
        *v = engine__value_int(a.type == ENGINE_NULL);
        return 0;
    case ENGINE_EXPR_TRUTH: {
        /* SQLite's OP_IsTrue: "x IS TRUE" is 1 when x is true, 0 when it
         * is false or NULL; IS NOT inverts that, so NULL IS NOT TRUE is 1.
         */
        int truth = engine__value_truth(&a);
        bool is_match = truth >= 0 && (truth > 0) == expr->u.truth;

        *v = engine__value_int(is_match != expr->negated);
        return 0;
    }
    case ENGINE_EXPR_NOT_NULL:
        *v = engine__value_int(a.type != ENGINE_NULL);
        return 0;
    default:
        ASSERT(expr->op == ENGINE_EXPR_CAST);
        return engine__value_cast(&a, expr->u.cast_affinity, eval->arena, v);
    }
}

static int eval_unary(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_batch *batch)
{
    const struct engine_vector *vals[1];
    struct engine_vector *out = &expr->result;
    int rc = eval_args(expr, eval, batch, vals);

    if (rc != 0) {
        return rc;
    }
    out->kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value v;

        rc = unary_value(expr, eval, engine__vector_get(vals[0], row), &v);
        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
    }
    return 0;
}

static int eval_concat(struct engine_expr *expr, struct engine_eval *eval,
                       const struct engine_batch *batch)
{
    const struct engine_vector *vals[2];
    struct engine_vector *out = &expr->result;
    int rc = eval_args(expr, eval, batch, vals);

    if (rc != 0) {
        return rc;
    }
    out->kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value a = engine__vector_get(vals[0], row);
        struct engine_value b = engine__vector_get(vals[1], row);
        struct engine_value v;

        rc = engine__value_concat(&a, &b, eval->arena, &v);
        if (rc == ENGINE_ETOOBIG) {
            return engine__error(eval->exec, rc, "string or blob too big");
        }
        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
    }
    return 0;
}

/* The collation a function is called with (SQLITE_FUNC_NEEDCOLL): that of
 * its first argument that has one (sqlite3ExprCodeTarget, TK_FUNCTION). */
static enum engine_collation call_collation(const struct engine_expr *expr)
{
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (expr->args[i]->has_collation) {
            return expr->args[i]->collation;
        }
    }
    return ENGINE_COLLATION_BINARY;
}

static int eval_function(struct engine_expr *expr, struct engine_eval *eval,
                         const struct engine_batch *batch)
{
    const struct engine_vector *vals[ENGINE__FUNCTION_ARGS_MAX];
    struct engine_value argv[ENGINE__FUNCTION_ARGS_MAX];
    struct engine_func_context ctx;
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct engine_vector *out = &expr->result;
    int rc = eval_args(expr, eval, batch, vals);

    if (rc != 0) {
        return rc;
    }
    engine__func_context_init(&ctx, eval, call_collation(expr), errmsg,
                              sizeof(errmsg));
    out->kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value v;

        for (size_t a = 0; a < expr->arg_count; a++) {
            argv[a] = engine__vector_get(vals[a], row);
            argv[a].json_subtype &= expr->args[a]->carries_subtype;
        }
        rc = expr->u.function->fn(&ctx, (int)expr->arg_count, argv, &v);
        if (rc != 0) {
            return engine__error(eval->exec, rc, "%s",
                                 errmsg[0] ? errmsg : engine_strerror(rc));
        }
        out->nulls[row] = v.type == ENGINE_NULL;
        out->data.values[row] = v;
    }
    return 0;
}

void engine__func_context_init(struct engine_func_context *ctx,
                               struct engine_eval *eval,
                               enum engine_collation collation, char *errmsg,
                               size_t errmsg_size)
{
    struct engine_db *db = eval->exec->db;

    ctx->arena = eval->arena;
    ctx->collation = collation;
    ctx->changes = db->changes;
    ctx->total_changes = db->total_changes;
    ctx->last_insert_rowid = db->last_insert_rowid;
    ctx->random_state = &db->random_state;
    ctx->now_jd_ms = &eval->exec->now_jd_ms;
    ctx->errmsg = errmsg;
    ctx->errmsg_size = errmsg_size;
    errmsg[0] = '\0';
}

/* The escape character of LIKE ... ESCAPE e: one UTF-8 character. */
static int like_escape(struct engine_eval *eval, struct engine_value e,
                       uint32_t *out)
{
    struct engine_value text;
    const uint8_t *p;
    const uint8_t *end;
    int rc = engine__value_to_text(&e, eval->arena, &text);

    if (rc != 0) {
        return engine__error(eval->exec, rc, "out of memory");
    }
    p = text.u.s.bytes;
    end = p + text.u.s.size;
    if (text.u.s.size > 0) {
        *out = engine__func_utf8_read(&p, end);
    }
    if (text.u.s.size == 0 || p != end) {
        return engine__error(eval->exec, ENGINE_ESQL,
                             "ESCAPE expression must be a single character");
    }
    return 0;
}

static int like_row(struct engine_expr *expr, struct engine_eval *eval,
                    const struct engine_value *args, int *truth)
{
    struct engine_value text;
    struct engine_value pattern;
    uint32_t escape = 0;
    bool match;
    int rc;

    /* likeFunc() checks the escape before it looks at the operands: a NULL
     * escape gives NULL, a bad one an error even when x or the pattern is
     * NULL. */
    if (expr->arg_count > 2 && args[2].type == ENGINE_NULL) {
        *truth = -1;
        return 0;
    }
    if (expr->arg_count > 2 && (rc = like_escape(eval, args[2], &escape))) {
        return rc;
    }
    if (args[0].type == ENGINE_NULL || args[1].type == ENGINE_NULL) {
        *truth = -1;
        return 0;
    }
    if (engine__value_to_text(&args[0], eval->arena, &text) != 0 ||
        engine__value_to_text(&args[1], eval->arena, &pattern) != 0) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    if (expr->u.like == AST_LIKE_GLOB) {
        match = engine__glob_match(pattern.u.s.bytes, pattern.u.s.size,
                                   text.u.s.bytes, text.u.s.size);
    } else {
        match =
            engine__like_match(pattern.u.s.bytes, pattern.u.s.size,
                               text.u.s.bytes, text.u.s.size, escape, false);
    }
    *truth = match != expr->negated;
    return 0;
}

static int eval_like(struct engine_expr *expr, struct engine_eval *eval,
                     const struct engine_batch *batch)
{
    const struct engine_vector *vals[3];
    struct engine_vector *out = &expr->result;
    int rc = eval_args(expr, eval, batch, vals);

    if (rc != 0) {
        return rc;
    }
    out->kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value args[3];
        int truth = 0;

        for (size_t a = 0; a < expr->arg_count; a++) {
            args[a] = engine__vector_get(vals[a], row);
        }
        rc = like_row(expr, eval, args, &truth);
        if (rc != 0) {
            return rc;
        }
        set_bool(out, row, truth);
    }
    return 0;
}

static enum engine_collation in_list_collation(const struct engine_expr *expr)
{
    const struct engine_expr *x = expr->args[0];
    const struct engine_expr *item = expr->args[1];

    if (expr->arg_count == 2 && item->op == ENGINE_EXPR_CONSTANT) {
        return engine__binary_collation(x, item);
    }
    return x->has_collation ? x->collation : ENGINE_COLLATION_BINARY;
}

/* x IN (list): 1 if x equals an item, NULL if not and x or an item is
 * NULL, else 0 (lang_expr.html "The IN and NOT IN operators"). */
static int in_list_row(struct engine_expr *expr, struct engine_eval *eval,
                       const struct engine_vector **vals, uint32_t row,
                       int *truth)
{
    struct engine_value x = engine__vector_get(vals[0], row);
    struct engine_expr probe = *expr;
    struct engine_expr none = {.affinity = ENGINE_AFFINITY_BLOB};
    struct engine_expr *pair[2] = {expr->args[0], &none};
    bool saw_null = false;

    if (expr->arg_count == 1) {
        *truth = expr->negated ? 1 : 0;
        return 0;
    }
    /* "a IN (x, y)" is "a = +x OR a = +y": the items have no affinity,
     * only a's applies, under a's collation (lang_expr.html, "The IN and
     * NOT IN operators"; sqlite3ExprCodeIN). A single constant item is
     * "a = +x" (parse.y), where x's own COLLATE counts as well. */
    probe.u.compare = ENGINE_COMPARE_EQ;
    probe.args = pair;
    probe.collation = in_list_collation(expr);
    for (size_t i = 1; i < expr->arg_count; i++) {
        int equal;
        int rc;

        rc = engine__expr_compare_values(
            &probe, x, engine__vector_get(vals[i], row), eval->arena, &equal);
        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        if (equal > 0) {
            *truth = !expr->negated;
            return 0;
        }
        saw_null = saw_null || equal < 0;
    }
    *truth = saw_null ? -1 : expr->negated;
    return 0;
}

static bool is_constant(const struct engine_expr *expr);
static void sub_batch(const struct engine_batch *batch, uint32_t *selection,
                      uint32_t selected, struct engine_batch *out);

static bool is_constant_list(const struct engine_expr *expr)
{
    for (size_t i = 1; i < expr->arg_count; i++) {
        if (!is_constant(expr->args[i])) {
            return false;
        }
    }
    return true;
}

static int eval_in_list_eager(struct engine_expr *expr,
                              struct engine_eval *eval,
                              const struct engine_batch *batch)
{
    const struct engine_vector **vals =
        engine__arena_alloc(eval->arena, expr->arg_count * sizeof(*vals));
    struct engine_vector *out = &expr->result;
    int rc;

    if (vals == NULL) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    rc = eval_args(expr, eval, batch, vals);
    if (rc != 0) {
        return rc;
    }
    out->kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        int truth = 0;

        rc = in_list_row(expr, eval, vals, row, &truth);
        if (rc != 0) {
            return rc;
        }
        set_bool(out, row, truth);
    }
    return 0;
}

/* Item `item` against the rows still undecided (rows[0..*count)): a match
 * decides the row; the others stay, remembering a NULL comparison. */
static int in_list_item(struct engine_expr *expr, struct engine_eval *eval,
                        const struct engine_batch *batch,
                        const struct engine_vector *x, size_t item,
                        uint32_t *rows, uint32_t *count)
{
    struct engine_expr probe = *expr;
    struct engine_expr none = {.affinity = ENGINE_AFFINITY_BLOB};
    struct engine_expr *pair[2] = {expr->args[0], &none};
    const struct engine_vector *vals;
    struct engine_batch part;
    uint32_t kept = 0;
    int rc;

    probe.u.compare = ENGINE_COMPARE_EQ;
    probe.args = pair;
    probe.collation = in_list_collation(expr);
    sub_batch(batch, rows, *count, &part);
    rc = engine__expr_eval(expr->args[item], eval, &part, &vals);
    for (uint32_t i = 0; rc == 0 && i < *count; i++) {
        uint32_t row = rows[i];
        int equal = 0;

        rc = engine__expr_compare_values(&probe, engine__vector_get(x, row),
                                         engine__vector_get(vals, row),
                                         eval->arena, &equal);
        if (rc == 0 && equal > 0) {
            set_bool(&expr->result, row, !expr->negated);
            continue;
        }
        if (equal < 0) {
            expr->result.nulls[row] = 1; /* NULL unless a later item matches */
        }
        rows[kept++] = row;
    }
    *count = kept;
    return rc;
}

/* x IN (a, b, ...) as SQLite's IN_INDEX_NOOP loop (sqlite3ExprCodeIN): the
 * items are evaluated in order, each only on the rows no earlier item
 * matched, so "1 IN (1, abs(-9223372036854775808))" is 1. A list of more
 * than two constants becomes an ephemeral table instead, all of it built
 * the first time the IN is reached (sqlite3FindInIndex). */
static int eval_in_list(struct engine_expr *expr, struct engine_eval *eval,
                        const struct engine_batch *batch)
{
    size_t bytes = batch->selected * sizeof(uint32_t) + 1;
    uint32_t *rows;
    uint32_t count = batch->selected;
    const struct engine_vector *x;
    int rc;

    if (expr->arg_count > 3 && is_constant_list(expr)) {
        return eval_in_list_eager(expr, eval, batch);
    }
    rows = engine__arena_alloc(eval->arena, bytes);
    if (rows == NULL) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    rc = engine__expr_eval(expr->args[0], eval, batch, &x);
    expr->result.kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < count; i++) {
        rows[i] = engine__batch_row(batch, i);
        set_bool(&expr->result, rows[i], expr->negated);
        expr->result.nulls[rows[i]] =
            engine__vector_get(x, rows[i]).type == ENGINE_NULL;
    }
    for (size_t item = 1; rc == 0 && item < expr->arg_count && count > 0;
         item++) {
        rc = in_list_item(expr, eval, batch, x, item, rows, &count);
    }
    return rc;
}

static int run_subquery(struct engine_expr *expr, struct engine_eval *eval)
{
    struct engine_subquery *subquery = expr->u.subquery;

    if (subquery->evaluated &&
        (subquery->live_table == NULL || subquery->live_key != -1 ||
         subquery->live_table->change_count == subquery->live_changes)) {
        return 0;
    }
    return engine__subquery_run(subquery, eval->exec);
}

static int eval_subquery(struct engine_expr *expr, struct engine_eval *eval,
                         const struct engine_batch *batch)
{
    const struct engine_vector *vals[1];
    struct engine_vector *out = &expr->result;
    int rc;

    /* SQLite computes a subquery (OP_Once) the first time a row reaches
     * its expression: on no row (a FILTER or CASE branch that keeps none)
     * it never runs, nor raises its errors. */
    if (batch->selected == 0) {
        out->kind = ENGINE_VECTOR_VALUES;
        return 0;
    }
    if (expr->u.subquery->outer_count > 0) {
        return engine__outer_eval(expr, eval, batch);
    }
    rc = run_subquery(expr, eval);
    if (rc != 0) {
        return rc;
    }
    if (expr->op == ENGINE_EXPR_SUBQUERY) {
        return eval_constant(expr, expr->u.subquery->value, batch);
    }
    if (expr->op == ENGINE_EXPR_EXISTS) {
        return eval_constant(expr, engine__value_int(expr->u.subquery->exists),
                             batch);
    }
    rc = eval_args(expr, eval, batch, vals);
    if (rc != 0) {
        return rc;
    }
    out->kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        int truth = 0;

        rc = engine__expr_in_row(expr, eval, engine__vector_get(vals[0], row),
                                 &truth);
        if (rc != 0) {
            return rc;
        }
        set_bool(out, row, truth);
    }
    return 0;
}

/* A view of batch restricted to the rows of selection. */
static void sub_batch(const struct engine_batch *batch, uint32_t *selection,
                      uint32_t selected, struct engine_batch *out)
{
    *out = *batch;
    out->selection = selection;
    out->selected = selected;
}

/* AND / OR (lang_expr.html truth tables): the right operand is evaluated
 * only on rows the left one does not decide. */
static int eval_logic(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_batch *batch)
{
    bool is_and = expr->op == ENGINE_EXPR_AND;
    struct engine_vector *out = &expr->result;
    const struct engine_vector *left;
    const struct engine_vector *right;
    struct engine_batch rest;
    uint32_t *selection;
    uint32_t n = 0;
    int rc = engine__expr_eval(expr->args[0], eval, batch, &left);

    selection =
        engine__arena_alloc(eval->arena, batch->selected * sizeof(uint32_t));
    if (rc != 0 || selection == NULL) {
        return rc != 0
                   ? rc
                   : engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    out->kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value v = engine__vector_get(left, row);
        int truth = engine__value_truth(&v);

        set_bool(out, row, truth);
        if (!expr->is_condition || (truth != (is_and ? 0 : 1) &&
                                    (truth >= 0 || !expr->null_decides))) {
            selection[n++] = row;
        }
    }
    sub_batch(batch, selection, n, &rest);
    rc = engine__expr_eval(expr->args[1], eval, &rest, &right);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t row = selection[i];
        struct engine_value v = engine__vector_get(right, row);
        int l = out->nulls[row] ? -1 : (int)out->data.i64[row];
        int r = engine__value_truth(&v);

        set_bool(out, row, engine__logic_combine(is_and, l, r));
    }
    return rc;
}

/* Whether expr has the same value on every row: no column, no subquery,
 * no non-deterministic function (sqlite3ExprIsConstantNotJoin). */
static bool is_constant(const struct engine_expr *expr)
{
    if (expr->op == ENGINE_EXPR_COLUMN || expr->op == ENGINE_EXPR_SUBQUERY ||
        expr->op == ENGINE_EXPR_EXISTS || expr->op == ENGINE_EXPR_IN_QUERY ||
        expr->op == ENGINE_EXPR_OUTER) {
        return false;
    }
    if ((expr->op == ENGINE_EXPR_FUNCTION ||
         expr->op == ENGINE_EXPR_COALESCE) &&
        !expr->u.function->deterministic) {
        return false;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (!is_constant(expr->args[i])) {
            return false;
        }
    }
    return true;
}

/* Whether expr reads no column of its own query: constant but for the
 * values an enclosing query passes in (ENGINE_EXPR_OUTER). SQLite's
 * WHERE analysis gives such a term no prerequisite table (prereqAll 0),
 * so sqlite3WhereBegin codes it before the loop, like a constant. */
static bool is_loop_invariant(const struct engine_expr *expr)
{
    if (expr->op == ENGINE_EXPR_OUTER) {
        return true;
    }
    if (expr->op == ENGINE_EXPR_COLUMN || expr->op == ENGINE_EXPR_SUBQUERY ||
        expr->op == ENGINE_EXPR_EXISTS || expr->op == ENGINE_EXPR_IN_QUERY) {
        return false;
    }
    if ((expr->op == ENGINE_EXPR_FUNCTION ||
         expr->op == ENGINE_EXPR_COALESCE) &&
        !expr->u.function->deterministic) {
        return false;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (!is_loop_invariant(expr->args[i])) {
            return false;
        }
    }
    return true;
}

static bool has_call(const struct engine_expr *expr)
{
    if (expr->op == ENGINE_EXPR_FUNCTION || expr->op == ENGINE_EXPR_COALESCE ||
        expr->op == ENGINE_EXPR_LIKE) {
        return true;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (has_call(expr->args[i])) {
            return true;
        }
    }
    return false;
}

static int prime_constant(struct engine_expr *expr, struct engine_eval *eval)
{
    struct engine_batch one = {.count = 1, .selected = 1};
    const struct engine_vector *ignored;

    return has_call(expr) ? engine__expr_eval(expr, eval, &one, &ignored) : 0;
}

static bool is_term_split(const struct engine_expr *expr)
{
    return expr->op == ENGINE_EXPR_AND && expr->is_condition &&
           !expr->is_between;
}

/* The value of a top-level term of root other than self that is "column =
 * value", the value constant, of no affinity, under BINARY; or NULL. SQLite's
 * propagateConstants (select.c) then puts the value for the column in
 * the other terms, so that a term over that column alone becomes a
 * constant term, computed before the loop. */
static struct engine_expr *propagated(const struct engine_expr *root,
                                      const struct engine_expr *self,
                                      size_t column)
{
    struct engine_expr *value;

    if (is_term_split(root)) {
        value = propagated(root->args[0], self, column);
        return value != NULL ? value : propagated(root->args[1], self, column);
    }
    if (root == self || root->op != ENGINE_EXPR_COMPARE ||
        root->u.compare != ENGINE_COMPARE_EQ ||
        root->collation != ENGINE_COLLATION_BINARY) {
        return NULL;
    }
    if (root->args[0]->op == ENGINE_EXPR_COLUMN &&
        root->args[0]->u.column == column) {
        value = root->args[1];
    } else if (root->args[1]->op == ENGINE_EXPR_COLUMN &&
               root->args[1]->u.column == column) {
        value = root->args[0];
    } else {
        return NULL;
    }
    return is_constant(value) && !value->has_affinity ? value : NULL;
}

/* A term "column op constant" (either way round) whose column another
 * term fixes (propagated()) is a constant term to SQLite, "value op
 * constant", run before the loop. */
static int prime_constraint(const struct engine_expr *root,
                            struct engine_expr *term, struct engine_eval *eval)
{
    struct engine_expr *left;
    struct engine_expr *right;
    struct engine_expr *value;
    int rc;

    if (term->op != ENGINE_EXPR_COMPARE ||
        term->u.compare == ENGINE_COMPARE_NE ||
        term->u.compare == ENGINE_COMPARE_IS ||
        term->u.compare == ENGINE_COMPARE_IS_NOT) {
        return 0;
    }
    left = term->args[0];
    right = term->args[1];
    if (left->op == ENGINE_EXPR_COLUMN && is_constant(right) &&
        (value = propagated(root, term, left->u.column)) != NULL) {
        rc = prime_constant(value, eval);
        return rc != 0 ? rc : prime_constant(right, eval);
    }
    if (right->op == ENGINE_EXPR_COLUMN && is_constant(left) &&
        (value = propagated(root, term, right->u.column)) != NULL) {
        rc = prime_constant(left, eval);
        return rc != 0 ? rc : prime_constant(value, eval);
    }
    return 0;
}

/* A WHERE's constant term, evaluated: sqlite3WhereBegin codes it before
 * the loop as a jump past the loop when it is false or NULL
 * (sqlite3ExprIfFalse on each term with no table prerequisite), so a
 * later term then runs on no row. */
static int prime_where_constant(struct engine_expr *expr,
                                struct engine_eval *eval, bool *never)
{
    struct engine_batch one = {.count = 1, .selected = 1};
    const struct engine_vector *truth;
    struct engine_value v;
    int rc = engine__expr_eval(expr, eval, &one, &truth);

    if (rc == 0) {
        v = engine__vector_get(truth, 0);
        *never = engine__value_truth(&v) != 1;
    }
    return rc;
}

/* The constant terms of the top-level AND, left to right. */
static int prime_constants(struct engine_expr *expr, struct engine_eval *eval,
                           bool is_where, bool *never)
{
    int rc;

    if (is_term_split(expr)) {
        rc = prime_constants(expr->args[0], eval, is_where, never);
        return rc != 0 || *never
                   ? rc
                   : prime_constants(expr->args[1], eval, is_where, never);
    }
    if (is_where && is_loop_invariant(expr)) {
        return prime_where_constant(expr, eval, never);
    }
    return is_constant(expr) ? prime_constant(expr, eval) : 0;
}

/* The constant side of each term prime_constraint() finds, after every
 * constant term. */
static int prime_constraints(const struct engine_expr *root,
                             struct engine_expr *expr, struct engine_eval *eval)
{
    int rc;

    if (is_term_split(expr)) {
        rc = prime_constraints(root, expr->args[0], eval);
        return rc != 0 ? rc : prime_constraints(root, expr->args[1], eval);
    }
    return is_constant(expr) ? 0 : prime_constraint(root, expr, eval);
}

int engine__expr_prime(struct engine_expr *expr, struct engine_eval *eval,
                       bool *never)
{
    int rc;

    *never = false;
    rc = prime_constants(expr, eval, expr->is_where, never);
    if (rc != 0 || *never || !expr->is_factored) {
        return rc;
    }
    return prime_constraints(expr, expr, eval);
}

/* A condition coded as sqlite3ExprIfTrue (if_true) or sqlite3ExprIfFalse
 * with jumpIfNull = jump_null (expr.c): AND and OR pass the contexts on
 * to their operands as those functions do, and a NULL left operand
 * decides the jump, so the right one is skipped, exactly where the
 * left's jump on NULL leaves the right unevaluated. */
static void mark(struct engine_expr *expr, bool if_true, bool jump_null)
{
    bool is_and = expr->op == ENGINE_EXPR_AND;
    bool is_true_test, is_not;

    switch (expr->op) {
    case ENGINE_EXPR_AND:
    case ENGINE_EXPR_OR:
        expr->is_condition = true;
        expr->null_decides = (is_and == if_true) ? !jump_null : jump_null;
        if (is_and != if_true) {
            mark(expr->args[0], if_true, jump_null);
        } else {
            mark(expr->args[0], !if_true, !jump_null);
        }
        mark(expr->args[1], if_true, jump_null);
        break;
    case ENGINE_EXPR_NOT:
        mark(expr->args[0], !if_true, jump_null);
        break;
    case ENGINE_EXPR_TRUTH:
        /* TK_TRUTH: IS TRUE / IS NOT FALSE test the operand as a jump of
         * the same sense, IS FALSE / IS NOT TRUE of the other, with
         * jumpIfNull fixed by IS NOT. */
        is_not = expr->negated;
        is_true_test = expr->u.truth != is_not;
        mark(expr->args[0], is_true_test ? if_true : !if_true,
             if_true ? is_not : !is_not);
        break;
    default:
        break;
    }
}

void engine__expr_mark_condition(struct engine_expr *expr)
{
    mark(expr, false, true);
}

void engine__expr_mark_check(struct engine_expr *expr)
{
    mark(expr, true, true);
}

int engine__logic_combine(bool is_and, int l, int r)
{
    if (is_and) {
        return (l == 0 || r == 0) ? 0 : (l < 0 || r < 0) ? -1 : 1;
    }
    return (l == 1 || r == 1) ? 1 : (l < 0 || r < 0) ? -1 : 0;
}

/* Evaluates arm (a THEN or ELSE) on rows and copies its results to out. */
static int case_assign(struct engine_expr *arm, struct engine_eval *eval,
                       const struct engine_batch *batch, uint32_t *rows,
                       uint32_t count, struct engine_vector *out)
{
    const struct engine_vector *vals;
    struct engine_batch part;
    int rc;

    if (count == 0) {
        return 0;
    }
    sub_batch(batch, rows, count, &part);
    rc = engine__expr_eval(arm, eval, &part, &vals);
    for (uint32_t i = 0; rc == 0 && i < count; i++) {
        struct engine_value v = engine__vector_get(vals, rows[i]);

        v.json_subtype &= arm->carries_subtype;
        out->nulls[rows[i]] = v.type == ENGINE_NULL;
        out->data.values[rows[i]] = v;
    }
    return rc;
}

/* Whether WHEN arm `when` holds on row (CASE x WHEN v: x = v). */
static int case_when_holds(struct engine_expr *expr, struct engine_eval *eval,
                           const struct engine_vector *operand,
                           const struct engine_vector *when, size_t arm,
                           uint32_t row, bool *holds)
{
    struct engine_value w = engine__vector_get(when, row);
    struct engine_expr probe = *expr;
    struct engine_expr *pair[2] = {expr->args[0], expr->args[arm]};
    int truth = 0;
    int rc;

    if (operand == NULL) {
        *holds = engine__value_truth(&w) == 1;
        return 0;
    }
    probe.u.compare = ENGINE_COMPARE_EQ;
    probe.args = pair;
    probe.collation = engine__binary_collation(expr->args[0], expr->args[arm]);
    rc = engine__expr_compare_values(&probe, engine__vector_get(operand, row),
                                     w, eval->arena, &truth);
    *holds = truth == 1;
    return rc;
}

/* Splits rows into those where arm holds (evaluating its THEN) and the
 * rest, which stay in rows[0..*count). */
static int case_arm(struct engine_expr *expr, struct engine_eval *eval,
                    const struct engine_batch *batch,
                    const struct engine_vector *operand, size_t arm,
                    uint32_t *rows, uint32_t *count, uint32_t *matched)
{
    const struct engine_vector *when;
    struct engine_batch part;
    uint32_t kept = 0;
    uint32_t hits = 0;
    int rc;

    sub_batch(batch, rows, *count, &part);
    rc = engine__expr_eval(expr->args[arm], eval, &part, &when);
    if (rc != 0) {
        return rc; /* the WHEN's own error, already in the statement */
    }
    for (uint32_t i = 0; rc == 0 && i < *count; i++) {
        bool holds;

        rc = case_when_holds(expr, eval, operand, when, arm, rows[i], &holds);
        if (holds) {
            matched[hits++] = rows[i];
        } else {
            rows[kept++] = rows[i];
        }
    }
    if (rc != 0) {
        return engine__error(eval->exec, rc, "out of memory");
    }
    *count = kept;
    return case_assign(expr->args[arm + 1], eval, batch, matched, hits,
                       &expr->result);
}

static int eval_case(struct engine_expr *expr, struct engine_eval *eval,
                     const struct engine_batch *batch)
{
    size_t first = expr->has_case_operand ? 1 : 0;
    size_t arms_end = expr->arg_count - (expr->has_else ? 1 : 0);
    const struct engine_vector *operand = NULL;
    size_t bytes = batch->selected * sizeof(uint32_t) + 1;
    uint32_t *rows = engine__arena_alloc(eval->arena, bytes);
    uint32_t *matched = engine__arena_alloc(eval->arena, bytes);
    uint32_t count = batch->selected;
    int rc = 0;

    if (rows == NULL || matched == NULL) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    expr->result.kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < count; i++) {
        rows[i] = engine__batch_row(batch, i);
        expr->result.nulls[rows[i]] = 1;
        expr->result.data.values[rows[i]] = engine__value_null();
    }
    if (first == 1) {
        rc = engine__expr_eval(expr->args[0], eval, batch, &operand);
    }
    for (size_t arm = first; rc == 0 && arm < arms_end && count > 0; arm += 2) {
        rc = case_arm(expr, eval, batch, operand, arm, rows, &count, matched);
    }
    if (rc == 0 && expr->has_else) {
        rc = case_assign(expr->args[expr->arg_count - 1], eval, batch, rows,
                         count, &expr->result);
    }
    return rc;
}

/* Keeps the rows of rows[0..count) whose result is still NULL. */
static uint32_t rows_still_null(const struct engine_vector *result,
                                uint32_t *rows, uint32_t count)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < count; i++) {
        if (result->nulls[rows[i]]) {
            rows[n++] = rows[i];
        }
    }
    return n;
}

/* coalesce(a, b, ...): each argument is evaluated only on the rows where
 * every earlier one was NULL (sqlite3ExprCodeTarget, SQLITE_FUNC_COALESCE:
 * OP_NotNull jumps past the rest). */
static int eval_coalesce(struct engine_expr *expr, struct engine_eval *eval,
                         const struct engine_batch *batch)
{
    size_t bytes = batch->selected * sizeof(uint32_t) + 1;
    uint32_t *rows = engine__arena_alloc(eval->arena, bytes);
    uint32_t count = batch->selected;
    int rc = 0;

    if (rows == NULL) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    expr->result.kind = ENGINE_VECTOR_VALUES;
    for (uint32_t i = 0; i < count; i++) {
        rows[i] = engine__batch_row(batch, i);
    }
    for (size_t a = 0; rc == 0 && a < expr->arg_count && count > 0; a++) {
        rc =
            case_assign(expr->args[a], eval, batch, rows, count, &expr->result);
        count = rows_still_null(&expr->result, rows, count);
    }
    return rc;
}

int engine__expr_eval(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_batch *batch,
                      const struct engine_vector **out)
{
    int rc;

    if (expr->op == ENGINE_EXPR_COLUMN) {
        *out = &batch->columns[expr->u.column];
        return 0;
    }
    if (engine__vector_reserve(&expr->result, batch->count) != 0) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    switch (expr->op) {
    case ENGINE_EXPR_CONSTANT:
        rc = eval_constant(expr, expr->u.constant, batch);
        break;
    case ENGINE_EXPR_PARAMETER:
        rc = eval_constant(expr, eval->exec->parameters[expr->u.parameter],
                           batch);
        break;
    case ENGINE_EXPR_OUTER:
        rc = eval_constant(expr, *expr->u.slot, batch);
        break;
    case ENGINE_EXPR_COMPARE:
        rc = eval_compare(expr, eval, batch);
        break;
    case ENGINE_EXPR_ARITH:
        rc = eval_arith(expr, eval, batch);
        break;
    case ENGINE_EXPR_CONCAT:
        rc = eval_concat(expr, eval, batch);
        break;
    case ENGINE_EXPR_AND:
    case ENGINE_EXPR_OR:
        rc = eval_logic(expr, eval, batch);
        break;
    case ENGINE_EXPR_CASE:
        rc = eval_case(expr, eval, batch);
        break;
    case ENGINE_EXPR_LIKE:
        rc = eval_like(expr, eval, batch);
        break;
    case ENGINE_EXPR_IN_LIST:
        rc = eval_in_list(expr, eval, batch);
        break;
    case ENGINE_EXPR_IN_QUERY:
    case ENGINE_EXPR_SUBQUERY:
    case ENGINE_EXPR_EXISTS:
        rc = eval_subquery(expr, eval, batch);
        break;
    case ENGINE_EXPR_FUNCTION:
        rc = eval_function(expr, eval, batch);
        break;
    case ENGINE_EXPR_COALESCE:
        rc = eval_coalesce(expr, eval, batch);
        break;
    case ENGINE_EXPR_RAISE:
        rc = engine__trigger_eval_raise(expr, eval, batch);
        break;
    default:
        rc = eval_unary(expr, eval, batch);
        break;
    }
    *out = &expr->result;
    return rc;
}

int engine__expr_eval_constant(struct engine_expr *expr,
                               struct engine_exec *exec,
                               struct engine_arena *arena,
                               struct engine_value *out)
{
    struct engine_batch one = {.count = 1, .selected = 1};
    struct engine_eval eval = {.exec = exec, .arena = arena};
    const struct engine_vector *result;
    int rc = engine__expr_eval(expr, &eval, &one, &result);

    if (rc == 0) {
        *out = engine__vector_get(result, 0);
    }
    return rc;
}

enum engine_compare_op engine__compare_commuted(enum engine_compare_op op)
{
    switch (op) {
    case ENGINE_COMPARE_LT:
        return ENGINE_COMPARE_GT;
    case ENGINE_COMPARE_LE:
        return ENGINE_COMPARE_GE;
    case ENGINE_COMPARE_GT:
        return ENGINE_COMPARE_LT;
    case ENGINE_COMPARE_GE:
        return ENGINE_COMPARE_LE;
    default:
        return op;
    }
}

void engine__expr_close(struct engine_expr *expr)
{
    engine__vector_close(&expr->result);
}
