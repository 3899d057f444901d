/* SPDX-License-Identifier: MIT
 *
 * op_window.c: the window operator of one layer (window.h). Its input is
 * sorted by partition then ORDER BY keys; it materializes the rows (values
 * and bytes copied, as SQLite fills its ephemeral table), splits them
 * into partitions and peer groups, has func_window.c compute each call's
 * value for every row of a partition, and hands the rows on with one
 * column per call appended. Frame offsets are checked when it first runs,
 * before any row is read, as sqlite3WindowCodeStep() checks them
 * (windowCheckValue) ahead of its loop.
 */
#include <string.h>

#include "window.h"

struct window_state {
    const struct engine_window_layer *layer;
    struct engine_window_call **calls;
    size_t call_count;
    size_t pass_count;
    size_t width;              /* input columns */
    struct engine_arena store; /* bytes of rows and results */
    bool store_ready;
    struct engine_value *rows; /* row_count * width, row-major */
    size_t row_count;
    size_t row_capacity;
    struct engine_value *results; /* row_count * call_count */
    struct engine_value *offsets; /* per call: start, end */
    size_t *groups;               /* 4 * row_count: see partition */
    bool computed;
    size_t emitted;
};

static int oom(struct engine_exec *exec)
{
    return engine__error(exec, COMMON_ENOMEM, "out of memory");
}

static void state_clear(struct window_state *state)
{
    common_free(state->rows);
    common_free(state->results);
    common_free(state->offsets);
    common_free(state->groups);
    state->rows = NULL;
    state->results = NULL;
    state->offsets = NULL;
    state->groups = NULL;
    state->row_count = 0;
    state->row_capacity = 0;
    state->computed = false;
    state->emitted = 0;
    if (state->store_ready) {
        engine__arena_close(&state->store);
    }
    engine__arena_init(&state->store);
    state->store_ready = true;
}

static int window_open(struct engine_op *op, struct engine_exec *exec)
{
    state_clear(op->state);
    return op->child->ops->open(op->child, exec);
}

static int append_batch(struct window_state *state,
                        const struct engine_batch *in)
{
    if (state->row_count + in->selected > state->row_capacity) {
        size_t capacity = state->row_capacity * 2 + in->selected + 64;
        /* A window over no columns ("SELECT row_number() OVER ()") still
         * counts its rows: keep the allocation non-empty. */
        size_t width = state->width > 0 ? state->width : 1;
        struct engine_value *rows =
            common_realloc(state->rows, capacity * width * sizeof(*rows));

        if (rows == NULL) {
            return COMMON_ENOMEM;
        }
        state->rows = rows;
        state->row_capacity = capacity;
    }
    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);
        struct engine_value *out =
            &state->rows[state->row_count * state->width];

        for (size_t c = 0; c < state->width; c++) {
            out[c] = engine__vector_get(&in->columns[c], row);
            if (engine__value_keep(&state->store, &out[c]) != 0) {
                return COMMON_ENOMEM;
            }
        }
        state->row_count++;
    }
    return 0;
}

static int read_input(struct engine_op *op, struct engine_exec *exec)
{
    struct window_state *state = op->state;

    for (;;) {
        struct engine_batch *in;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0) {
            return rc;
        }
        if (in == NULL) {
            return 0;
        }
        if (append_batch(state, in) != 0) {
            return oom(exec);
        }
    }
}

static bool keys_equal(const struct engine_value *a,
                       const struct engine_value *b, size_t count,
                       const enum engine_collation *collations,
                       const struct engine_sort_key *keys)
{
    for (size_t i = 0; i < count; i++) {
        enum engine_collation collation =
            collations != NULL ? collations[i] : keys[i].collation;

        if (engine__value_compare(&a[i], &b[i], collation) != 0) {
            return false;
        }
    }
    return true;
}

/* Peer groups of rows [begin, end): indexes local to the partition. */
static void find_groups(struct window_state *state, size_t begin, size_t end,
                        struct engine_window_partition *part)
{
    const struct engine_window_layer *layer = state->layer;
    size_t n = end - begin;
    size_t *start = state->groups;
    size_t *last = start + state->row_count;
    size_t *index = last + state->row_count;
    size_t *first = index + state->row_count;
    size_t offset = part->order_offset;
    size_t group = 0;

    for (size_t i = 0; i < n; i++) {
        const struct engine_value *row = &part->rows[i * part->width];

        if (i == 0 ||
            !keys_equal(row + offset, row - part->width + offset,
                        layer->order_count, NULL, layer->order_keys)) {
            first[group++] = i;
        }
        start[i] = first[group - 1];
        index[i] = group - 1;
    }
    for (size_t i = n; i-- > 0;) {
        last[i] = i + 1 == n || index[i + 1] != index[i] ? i : last[i + 1];
    }
    part->group_start = start;
    part->group_end = last;
    part->group_index = index;
    part->group_first = first;
    part->group_count = group;
}

static int compute_partition(struct engine_exec *exec,
                             struct window_state *state, size_t begin,
                             size_t end)
{
    struct engine_value *column;
    struct engine_window_partition part = {
        .rows = &state->rows[begin * state->width],
        .count = end - begin,
        .width = state->width,
        .order_offset = state->pass_count + state->layer->partition_count,
        .order_count = state->layer->order_count,
        .order_keys = state->layer->order_keys,
    };

    column = common_calloc(part.count + 1, sizeof(*column));
    if (column == NULL) {
        return oom(exec);
    }
    find_groups(state, begin, end, &part);
    for (size_t k = 0; k < state->call_count; k++) {
        int rc = engine__window_compute(exec, &state->store, state->calls[k],
                                        &part, &state->offsets[2 * k],
                                        &state->offsets[2 * k + 1], column);

        if (rc != 0) {
            common_free(column);
            return rc;
        }
        for (size_t i = 0; i < part.count; i++) {
            state->results[(begin + i) * state->call_count + k] = column[i];
        }
    }
    common_free(column);
    return 0;
}

static int compute(struct engine_op *op, struct engine_exec *exec)
{
    struct window_state *state = op->state;
    const struct engine_window_layer *layer = state->layer;
    size_t calls = state->call_count;
    size_t begin = 0;
    int rc;

    state->offsets = common_calloc(2 * calls + 1, sizeof(*state->offsets));
    if (state->offsets == NULL) {
        return oom(exec);
    }
    for (size_t k = 0; k < calls; k++) {
        rc = engine__window_offsets(exec, &state->store, state->calls[k],
                                    &state->offsets[2 * k],
                                    &state->offsets[2 * k + 1]);
        if (rc != 0) {
            return rc;
        }
    }
    rc = read_input(op, exec);
    if (rc != 0) {
        return rc;
    }
    state->results =
        common_calloc(state->row_count * calls + 1, sizeof(*state->results));
    state->groups = common_calloc(4 * state->row_count + 1, sizeof(size_t));
    if (state->results == NULL || state->groups == NULL) {
        return oom(exec);
    }
    while (begin < state->row_count) {
        const struct engine_value *key =
            &state->rows[begin * state->width + state->pass_count];
        size_t end = begin + 1;

        for (; end < state->row_count; end++) {
            const struct engine_value *other =
                &state->rows[end * state->width + state->pass_count];
            bool same = true;

            for (size_t i = 0; same && i < layer->partition_count; i++) {
                same =
                    engine__value_compare(&key[i], &other[i],
                                          layer->partition[i]->collation) == 0;
            }
            if (!same) {
                break;
            }
        }
        rc = compute_partition(exec, state, begin, end);
        if (rc != 0) {
            return rc;
        }
        begin = end;
    }
    state->computed = true;
    return 0;
}

static void put(struct engine_vector *vector, uint32_t n, struct engine_value v)
{
    vector->kind = ENGINE_VECTOR_VALUES;
    vector->nulls[n] = v.type == ENGINE_NULL;
    vector->data.values[n] = v;
}

static int window_next(struct engine_op *op, struct engine_exec *exec,
                       struct engine_batch **out)
{
    struct window_state *state = op->state;
    size_t left;
    uint32_t n = 0;

    *out = NULL;
    if (!state->computed) {
        int rc = compute(op, exec);

        if (rc != 0) {
            return rc;
        }
    }
    left = state->row_count - state->emitted;
    if (left == 0) {
        return 0;
    }
    if (engine__op_reserve(op, left < ENGINE__BATCH_SIZE
                                   ? (uint32_t)left
                                   : ENGINE__BATCH_SIZE) != 0) {
        return oom(exec);
    }
    for (; state->emitted < state->row_count && n < ENGINE__BATCH_SIZE; n++) {
        size_t row = state->emitted++;
        const struct engine_value *in = &state->rows[row * state->width];
        const struct engine_value *results =
            &state->results[row * state->call_count];

        for (size_t c = 0; c < state->pass_count; c++) {
            put(&op->batch.columns[c], n, in[c]);
        }
        for (size_t k = 0; k < state->call_count; k++) {
            put(&op->batch.columns[state->pass_count + k], n, results[k]);
        }
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    *out = &op->batch;
    return 0;
}

static void window_destroy(struct engine_op *op)
{
    struct window_state *state = op->state;

    state_clear(state);
    engine__arena_close(&state->store);
    state->store_ready = false;
    engine__op_destroy_default(op);
}

static const struct engine_op_ops window_ops = {
    .open = window_open,
    .next = window_next,
    .destroy = window_destroy,
};

struct engine_op *engine__op_window(struct engine_stmt *stmt,
                                    struct engine_op *child,
                                    const struct engine_window_layer *layer,
                                    struct engine_window_call **calls,
                                    size_t call_count, size_t pass_count)
{
    struct engine_op *op =
        engine__op_new(stmt, &window_ops, child, sizeof(struct window_state),
                       pass_count + call_count, true);
    struct window_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->layer = layer;
    state->calls = calls;
    state->call_count = call_count;
    state->pass_count = pass_count;
    state->width = child->column_count;
    return op;
}
