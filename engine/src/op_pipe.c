/* SPDX-License-Identifier: MIT
 *
 * op_pipe.c: the streaming operators: filter, project and limit. None of
 * them copies data: a filter narrows the batch's selection, a projection
 * points its output vectors at expression results or input columns, a
 * limit trims the selection.
 */
#include <string.h>

#include "engine_int.h"

static int pipe_open(struct engine_op *op, struct engine_exec *exec)
{
    return op->child->ops->open(op->child, exec);
}

/* ---- filter ---- */

struct filter_state {
    struct engine_expr *predicate;
    bool is_primed; /* the predicate's constant parts ran this execution */
    bool is_never;  /* a constant WHERE term is false: no row passes */
    struct engine_batch *pending; /* row by row: the child's batch, or NULL */
    uint32_t next;                /* row by row: pending's next row */
    uint32_t selection[ENGINE__BATCH_SIZE];
};

static uint32_t select_true(const struct engine_vector *truths,
                            const struct engine_batch *in, uint32_t *out)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);
        struct engine_value v = engine__vector_get(truths, row);

        if (engine__value_truth(&v) == 1) {
            out[n++] = row;
        }
    }
    return n;
}

/* The next row of in (from *next on) that the predicate accepts, testing
 * one row at a time; the row goes to state->selection[0]. */
static int filter_one(struct filter_state *state, struct engine_eval *eval,
                      const struct engine_batch *in, uint32_t *next,
                      bool *found)
{
    *found = false;
    for (; *next < in->selected && !*found; (*next)++) {
        uint32_t row = engine__batch_row(in, *next);
        struct engine_batch one = *in;
        const struct engine_vector *truths;
        int rc;

        one.selection = &row;
        one.selected = 1;
        rc = engine__expr_eval(state->predicate, eval, &one, &truths);
        if (rc != 0) {
            return rc;
        }
        *found = select_true(truths, &one, state->selection) == 1;
    }
    return 0;
}

/* Row by row (expr.h, is_row_by_row): one accepted row per call. */
static int filter_rows(struct engine_op *op, struct engine_exec *exec,
                       struct engine_eval *eval, struct engine_batch **out)
{
    struct filter_state *state = op->state;

    for (;;) {
        bool found;
        int rc;

        if (state->pending == NULL) {
            rc = op->child->ops->next(op->child, exec, &state->pending);
            if (rc != 0 || state->pending == NULL) {
                state->pending = NULL;
                *out = NULL;
                return rc;
            }
            state->next = 0;
        }
        engine__arena_reset(&op->arena);
        rc = filter_one(state, eval, state->pending, &state->next, &found);
        if (rc != 0) {
            return rc;
        }
        if (found) {
            op->batch = *state->pending;
            op->batch.selection = state->selection;
            op->batch.selected = 1;
            *out = &op->batch;
            return 0;
        }
        state->pending = NULL;
    }
}

static int filter_next(struct engine_op *op, struct engine_exec *exec,
                       struct engine_batch **out)
{
    struct filter_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};

    if (!state->is_primed) {
        int rc = engine__expr_prime(state->predicate, &eval, &state->is_never);

        state->is_primed = true;
        if (rc != 0) {
            *out = NULL;
            return rc;
        }
    }
    if (state->is_never) {
        *out = NULL;
        return 0;
    }
    if (state->predicate->is_row_by_row) {
        return filter_rows(op, exec, &eval, out);
    }
    for (;;) {
        struct engine_batch *in;
        const struct engine_vector *truths;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0 || in == NULL) {
            *out = NULL;
            return rc;
        }
        engine__arena_reset(&op->arena);
        rc = engine__expr_eval(state->predicate, &eval, in, &truths);
        if (rc != 0) {
            return rc;
        }
        op->batch = *in;
        op->batch.selection = state->selection;
        op->batch.selected = select_true(truths, in, state->selection);
        if (op->batch.selected > 0) {
            *out = &op->batch;
            return 0;
        }
    }
}

static void filter_destroy(struct engine_op *op)
{
    /* The batch viewed the child's columns: nothing of it is owned. */
    engine__arena_close(&op->arena);
}

/* Each execution computes the predicate's constant parts again, before its
 * first row (engine__expr_prime). */
static int filter_open(struct engine_op *op, struct engine_exec *exec)
{
    ((struct filter_state *)op->state)->is_primed = false;
    ((struct filter_state *)op->state)->pending = NULL;
    return pipe_open(op, exec);
}

static const struct engine_op_ops filter_ops = {
    .open = filter_open,
    .next = filter_next,
    .destroy = filter_destroy,
};

struct engine_op *engine__op_filter(struct engine_stmt *stmt,
                                    struct engine_op *child,
                                    struct engine_expr *predicate)
{
    struct engine_op *op = engine__op_new(
        stmt, &filter_ops, child, sizeof(struct filter_state), 0, false);

    if (op == NULL) {
        return NULL;
    }
    common_free(op->batch.columns);
    op->batch.columns = NULL;
    op->column_count = child->column_count;
    ((struct filter_state *)op->state)->predicate = predicate;
    return op;
}

/* ---- project ---- */

struct project_state {
    struct engine_expr **exprs;
};

static int project_next(struct engine_op *op, struct engine_exec *exec,
                        struct engine_batch **out)
{
    struct project_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    struct engine_batch *in;
    int rc = op->child->ops->next(op->child, exec, &in);

    if (rc != 0 || in == NULL) {
        *out = NULL;
        return rc;
    }
    engine__arena_reset(&op->arena);
    for (size_t c = 0; c < op->column_count; c++) {
        const struct engine_vector *result;

        rc = engine__expr_eval(state->exprs[c], &eval, in, &result);
        if (rc != 0) {
            return rc;
        }
        op->batch.columns[c] = *result;
        op->batch.columns[c].owned = false;
    }
    op->batch.count = in->count;
    op->batch.selection = in->selection;
    op->batch.selected = in->selected;
    *out = &op->batch;
    return 0;
}

static const struct engine_op_ops project_ops = {
    .open = pipe_open,
    .next = project_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_project(struct engine_stmt *stmt,
                                     struct engine_op *child,
                                     struct engine_expr **exprs, size_t count)
{
    struct engine_op *op = engine__op_new(
        stmt, &project_ops, child, sizeof(struct project_state), count, false);

    if (op == NULL) {
        return NULL;
    }
    ((struct project_state *)op->state)->exprs = exprs;
    return op;
}

/* ---- limit / offset ---- */

struct limit_state {
    struct engine_expr *limit;
    struct engine_expr *offset;
    int64_t remaining; /* rows still to pass; -1: no limit */
    int64_t skip;      /* rows still to skip */
    uint32_t selection[ENGINE__BATCH_SIZE];
};

/* The integer value of a LIMIT or OFFSET expression (OP_MustBeInt: an
 * integer, or a real or text that is exactly one; else "datatype
 * mismatch"). */
int engine__limit_value(struct engine_op *op, struct engine_exec *exec,
                        struct engine_expr *expr, int64_t *out)
{
    struct engine_batch one = {.count = 1, .selected = 1};
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    const struct engine_vector *result;
    struct engine_value v;
    int rc = engine__expr_eval(expr, &eval, &one, &result);

    if (rc != 0) {
        return rc;
    }
    v = engine__vector_get(result, 0);
    rc = engine__value_apply_affinity(&v, ENGINE_AFFINITY_INTEGER, &op->arena);
    if (rc != 0) {
        return engine__error(exec, rc, "out of memory");
    }
    if (v.type != ENGINE_INTEGER) {
        return engine__error(exec, ENGINE_EMISMATCH, "datatype mismatch");
    }
    *out = v.u.i;
    return 0;
}

static int limit_open(struct engine_op *op, struct engine_exec *exec)
{
    struct limit_state *state = op->state;
    int rc;

    engine__arena_reset(&op->arena);
    rc = engine__limit_value(op, exec, state->limit, &state->remaining);
    if (rc == 0 && state->remaining < 0) {
        state->remaining = -1;
    }
    state->skip = 0;
    if (rc == 0 && state->offset != NULL) {
        rc = engine__limit_value(op, exec, state->offset, &state->skip);
        state->skip = state->skip < 0 ? 0 : state->skip;
    }
    if (rc != 0) {
        return rc;
    }
    return op->child->ops->open(op->child, exec);
}

static int limit_next(struct engine_op *op, struct engine_exec *exec,
                      struct engine_batch **out)
{
    struct limit_state *state = op->state;

    while (state->remaining != 0) {
        struct engine_batch *in;
        uint32_t n = 0;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0 || in == NULL) {
            *out = NULL;
            return rc;
        }
        for (uint32_t i = 0; i < in->selected && state->remaining != 0; i++) {
            if (state->skip > 0) {
                state->skip--;
                continue;
            }
            state->selection[n++] = engine__batch_row(in, i);
            state->remaining -= state->remaining > 0 ? 1 : 0;
        }
        if (n > 0) {
            op->batch = *in;
            op->batch.selection = state->selection;
            op->batch.selected = n;
            *out = &op->batch;
            return 0;
        }
    }
    *out = NULL;
    return 0;
}

static const struct engine_op_ops limit_ops = {
    .open = limit_open,
    .next = limit_next,
    .destroy = filter_destroy,
};

struct engine_op *engine__op_limit(struct engine_stmt *stmt,
                                   struct engine_op *child,
                                   struct engine_expr *limit,
                                   struct engine_expr *offset)
{
    struct engine_op *op = engine__op_new(stmt, &limit_ops, child,
                                          sizeof(struct limit_state), 0, false);
    struct limit_state *state;

    if (op == NULL) {
        return NULL;
    }
    common_free(op->batch.columns);
    op->batch.columns = NULL;
    op->column_count = child->column_count;
    state = op->state;
    state->limit = limit;
    state->offset = offset;
    return op;
}
