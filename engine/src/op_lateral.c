/* SPDX-License-Identifier: MIT
 *
 * op_lateral.c: the lateral join (tvf.h): a table-valued function whose
 * arguments read the items to its left is run again for every left row,
 * as SQLite's nested loop runs its inner virtual table's xFilter with the
 * outer row's values (where.c, the constraints of jsonEachBestIndex).
 *
 * Unlike op_join.c, which reads its right input once per execution, this
 * operator binds the function's source to each left row, opens the right
 * input (the source and any filter on it) and streams it: each right
 * batch becomes an output batch of pairs with the left row, tested
 * against the join's predicate. A LEFT join whose left row had no pair
 * pass outputs that row once with NULLs on the right, after its pairs. So
 * rows come out in the order of the nested loop.
 */
#include <string.h>

#include "tvf.h"

struct lateral_state {
    struct engine_join_spec spec;
    struct engine_op *right;
    struct engine_op *source;
    struct engine_batch *left; /* the current left batch, or NULL */
    uint32_t left_pos;         /* live index of the current left row */
    bool row_open;             /* the right runs for the current left row */
    bool matched;              /* a pair of that row passed */
    uint32_t scratch[ENGINE__BATCH_SIZE];
};

/* Writes n output rows: left row `row` with right's live rows (right
 * NULL: one row of NULLs). */
static int gather(struct engine_op *op, struct engine_exec *exec, uint32_t row,
                  const struct engine_batch *right, uint32_t n)
{
    struct lateral_state *state = op->state;
    size_t lw = state->spec.left_width;
    struct engine_vector *out = op->batch.columns;

    if (engine__op_reserve(op, n) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < op->column_count; c++) {
        out[c].kind = ENGINE_VECTOR_VALUES;
        for (uint32_t i = 0; i < n; i++) {
            struct engine_value v =
                c < lw ? engine__vector_get(&state->left->columns[c], row)
                : right == NULL
                    ? engine__value_null()
                    : engine__vector_get(&right->columns[c - lw],
                                         engine__batch_row(right, i));

            out[c].data.values[i] = v;
            out[c].nulls[i] = v.type == ENGINE_NULL;
        }
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    return 0;
}

/* Keeps the output rows that pass every predicate term, in order. */
static int test_pairs(struct engine_op *op, struct engine_exec *exec)
{
    struct lateral_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    struct engine_batch batch = op->batch;
    uint32_t count = op->batch.count;

    for (uint32_t i = 0; i < count; i++) {
        state->scratch[i] = i;
    }
    for (size_t t = 0; t < state->spec.predicate_count && count > 0; t++) {
        const struct engine_vector *truths;
        uint32_t kept = 0;
        int rc;

        batch.selection = state->scratch;
        batch.selected = count;
        rc =
            engine__expr_eval(state->spec.predicate[t], &eval, &batch, &truths);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t i = 0; i < count; i++) {
            struct engine_value v =
                engine__vector_get(truths, state->scratch[i]);

            if (engine__value_truth(&v) == 1) {
                state->scratch[kept++] = state->scratch[i];
            }
        }
        count = kept;
    }
    op->batch.selection = state->scratch;
    op->batch.selected = count;
    return 0;
}

/* The next batch of the current left row's right rows (*right NULL when
 * they are done), the right opened first for a new row. */
static int next_right(struct engine_op *op, struct engine_exec *exec,
                      uint32_t row, struct engine_batch **right)
{
    struct lateral_state *state = op->state;
    int rc;

    if (!state->row_open) {
        engine__op_json_each_bind(state->source, state->left, row);
        rc = state->right->ops->open(state->right, exec);
        if (rc != 0) {
            return rc;
        }
        state->row_open = true;
        state->matched = false;
    }
    return state->right->ops->next(state->right, exec, right);
}

static int lateral_next(struct engine_op *op, struct engine_exec *exec,
                        struct engine_batch **out)
{
    struct lateral_state *state = op->state;

    *out = NULL;
    for (;;) {
        struct engine_batch *right;
        uint32_t row;
        int rc;

        engine__arena_reset(&op->arena);
        if (state->left == NULL || state->left_pos >= state->left->selected) {
            rc = op->child->ops->next(op->child, exec, &state->left);
            state->left_pos = 0;
            state->row_open = false;
            if (rc != 0 || state->left == NULL) {
                return rc;
            }
            continue;
        }
        row = engine__batch_row(state->left, state->left_pos);
        rc = next_right(op, exec, row, &right);
        if (rc != 0) {
            return rc;
        }
        if (right == NULL) {
            bool keep = state->spec.kind == AST_JOIN_LEFT && !state->matched;

            state->row_open = false;
            state->left_pos++;
            if (keep) {
                rc = gather(op, exec, row, NULL, 1);
                *out = rc == 0 ? &op->batch : NULL;
                return rc;
            }
            continue;
        }
        if (right->selected == 0) {
            continue;
        }
        rc = gather(op, exec, row, right, right->selected);
        rc = rc != 0 ? rc : test_pairs(op, exec);
        if (rc != 0) {
            return rc;
        }
        if (op->batch.selected > 0) {
            state->matched = true;
            *out = &op->batch;
            return 0;
        }
    }
}

static int lateral_open(struct engine_op *op, struct engine_exec *exec)
{
    struct lateral_state *state = op->state;

    state->left = NULL;
    state->left_pos = 0;
    state->row_open = false;
    state->matched = false;
    return op->child->ops->open(op->child, exec);
}

static const struct engine_op_ops lateral_ops = {
    .open = lateral_open,
    .next = lateral_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_lateral(struct engine_stmt *stmt,
                                     struct engine_op *left,
                                     struct engine_op *right,
                                     struct engine_op *source,
                                     const struct engine_join_spec *spec)
{
    size_t width = spec->left_width + spec->right_width;
    struct engine_op *op = engine__op_new(
        stmt, &lateral_ops, left, sizeof(struct lateral_state), width, true);
    struct lateral_state *state;

    if (op == NULL) {
        return NULL;
    }
    ASSERT(spec->kind == AST_JOIN_INNER || spec->kind == AST_JOIN_LEFT);
    ASSERT(spec->merged_count == 0);
    ASSERT(left->column_count == spec->left_width);
    ASSERT(right->column_count == spec->right_width);
    state = op->state;
    state->spec = *spec;
    state->right = right;
    state->source = source;
    return op;
}
