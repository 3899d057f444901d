/* SPDX-License-Identifier: MIT
 *
 * op_recursive.c: the operators of a recursive common table expression,
 * reproducing SQLite 3.40's generateWithRecursiveQuery() (select.c):
 *
 * - The setup query's rows go into a queue. Then, while the queue has a
 *   row: the first is taken out and becomes the current row; it is
 *   output (unless the OFFSET skips it), and when LIMIT rows are out the
 *   query stops there; else every recursive term runs once, reading the
 *   current row as the CTE's only row, and its rows join the queue.
 * - UNION (SRT_DistFifo): a row equal to one queued before, under the
 *   compound's collations, is dropped (a rowset of every row seen).
 * - ORDER BY (SRT_Queue): the queue gives its smallest row by the ORDER BY
 *   first, rows with equal keys in the order they came (the ephemeral
 *   index's key ends with a sequence number); else it is first in, first
 *   out. Both are one binary heap on (keys, arrival).
 *
 * The current row is output before the terms run on it, and they run only
 * when the next row is asked for, so a LIMIT that the row satisfies never
 * runs them, as in SQLite.
 */
#include <string.h>

#include "cte.h"
#include "rowset.h"

struct engine_recursion {
    size_t width;
    const bool *is_real;
    struct engine_value *current; /* width values */
    bool has_current;
};

struct engine_recursion *engine__recursion_new(struct engine_stmt *stmt,
                                               size_t width,
                                               const bool *is_real)
{
    struct engine_recursion *run = engine__plan_alloc(stmt, sizeof(*run));

    if (run == NULL) {
        return NULL;
    }
    run->current =
        engine__plan_alloc(stmt, (width + 1) * sizeof(*run->current));
    if (run->current == NULL) {
        return NULL;
    }
    run->width = width;
    run->is_real = is_real;
    return run;
}

/* Puts row (op->column_count values) into op's owned batch as its one
 * row, each INTEGER of a REAL column (is_real, or NULL) made REAL. */
static int emit_row(struct engine_op *op, struct engine_exec *exec,
                    const struct engine_value *row, const bool *is_real,
                    struct engine_batch **out)
{
    if (engine__op_reserve(op, 1) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < op->column_count; c++) {
        struct engine_vector *vector = &op->batch.columns[c];
        struct engine_value v = row[c];

        if (is_real != NULL && is_real[c] && v.type == ENGINE_INTEGER) {
            v = engine__value_real((double)v.u.i);
        }
        vector->kind = ENGINE_VECTOR_VALUES;
        vector->nulls[0] = v.type == ENGINE_NULL;
        vector->data.values[0] = v;
    }
    op->batch.count = 1;
    op->batch.selected = 1;
    op->batch.selection = NULL;
    *out = &op->batch;
    return 0;
}

/* ---- the reader: the current row, once per open ---- */

struct read_state {
    struct engine_recursion *run;
    bool done;
};

static int read_open(struct engine_op *op, struct engine_exec *exec)
{
    (void)exec;
    ((struct read_state *)op->state)->done = false;
    return 0;
}

static int read_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct read_state *state = op->state;

    *out = NULL;
    if (state->done || !state->run->has_current) {
        return 0;
    }
    state->done = true;
    return emit_row(op, exec, state->run->current, state->run->is_real, out);
}

static const struct engine_op_ops read_ops = {
    .open = read_open,
    .next = read_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_recursion_read(struct engine_stmt *stmt,
                                            struct engine_recursion *run)
{
    struct engine_op *op = engine__op_new(
        stmt, &read_ops, NULL, sizeof(struct read_state), run->width, true);

    if (op != NULL) {
        ((struct read_state *)op->state)->run = run;
    }
    return op;
}

/* ---- the recursion ---- */

struct recursive_state {
    struct engine_recursion *run;
    struct engine_op *setup;
    struct engine_op **steps;
    size_t step_count;
    const enum engine_collation *collations; /* UNION; NULL for UNION ALL */
    const struct engine_sort_key *keys;
    size_t key_count;
    struct engine_expr *limit;
    struct engine_expr *offset;
    /* One execution's: */
    struct engine_rowset seen; /* UNION: every row queued */
    bool seen_ready;
    struct engine_value *rows; /* queued rows, row_count * width */
    size_t row_count;
    size_t row_capacity;
    size_t *heap; /* indexes into rows, the next row first */
    size_t heap_count;
    struct engine_arena queue_bytes;   /* text and blob bytes of rows */
    struct engine_arena current_bytes; /* those of run->current */
    int64_t limit_left;                /* rows still to output; -1: all */
    int64_t offset_left;               /* rows still to skip */
    bool started;                      /* setup done */
    bool pending;                      /* the terms have yet to run on the
                                          current row */
    bool done;
};

static void state_clear(struct recursive_state *state)
{
    if (state->seen_ready) {
        engine__rowset_close(&state->seen);
        state->seen_ready = false;
    }
    common_free(state->rows);
    common_free(state->heap);
    state->rows = NULL;
    state->heap = NULL;
    state->row_count = state->row_capacity = state->heap_count = 0;
    engine__arena_reset(&state->queue_bytes);
    engine__arena_reset(&state->current_bytes);
    /* NULL when the operator's batch failed to allocate: it was destroyed
     * with its statement before engine__op_recursive filled its state. */
    if (state->run != NULL) {
        state->run->has_current = false;
    }
}

/* Whether queued row a comes out before row b. */
static bool heap_before(const struct recursive_state *state, size_t a, size_t b)
{
    size_t width = state->run->width;
    int order =
        engine__sort_compare(state->keys, state->key_count,
                             &state->rows[a * width], &state->rows[b * width]);

    return order < 0 || (order == 0 && a < b);
}

static void heap_swap(size_t *heap, size_t i, size_t j)
{
    size_t t = heap[i];

    heap[i] = heap[j];
    heap[j] = t;
}

static void heap_up(struct recursive_state *state, size_t i)
{
    while (i > 0 &&
           heap_before(state, state->heap[i], state->heap[(i - 1) / 2])) {
        heap_swap(state->heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(struct recursive_state *state, size_t i)
{
    for (;;) {
        size_t best = i;
        size_t left = 2 * i + 1;

        if (left < state->heap_count &&
            heap_before(state, state->heap[left], state->heap[best])) {
            best = left;
        }
        if (left + 1 < state->heap_count &&
            heap_before(state, state->heap[left + 1], state->heap[best])) {
            best = left + 1;
        }
        if (best == i) {
            return;
        }
        heap_swap(state->heap, i, best);
        i = best;
    }
}

static int grow(struct recursive_state *state)
{
    size_t capacity = state->row_capacity == 0 ? 64 : state->row_capacity * 2;
    struct engine_value *rows = common_realloc_array(
        state->rows, capacity * state->run->width + 1, sizeof(*rows));
    size_t *heap;

    if (rows == NULL) {
        return COMMON_ENOMEM;
    }
    state->rows = rows;
    heap = common_realloc_array(state->heap, capacity, sizeof(*heap));
    if (heap == NULL) {
        return COMMON_ENOMEM;
    }
    state->heap = heap;
    state->row_capacity = capacity;
    return 0;
}

/* Queues a copy of row, unless UNION has seen it. */
static int queue_push(struct recursive_state *state,
                      const struct engine_value *row)
{
    size_t width = state->run->width;
    struct engine_value *dest;

    if (state->collations != NULL) {
        bool inserted;
        size_t index;
        int rc;

        if (!state->seen_ready) {
            engine__rowset_init(&state->seen, width, state->collations);
            state->seen_ready = true;
        }
        rc = engine__rowset_insert(&state->seen, row, &inserted, &index);
        if (rc != 0 || !inserted) {
            return rc;
        }
    }
    if (state->row_count == state->row_capacity && grow(state) != 0) {
        return COMMON_ENOMEM;
    }
    dest = &state->rows[state->row_count * width];
    for (size_t c = 0; c < width; c++) {
        dest[c] = row[c];
        if (row[c].type == ENGINE_TEXT || row[c].type == ENGINE_BLOB) {
            void *bytes = engine__arena_memdup(
                &state->queue_bytes, row[c].u.s.bytes, row[c].u.s.size);

            if (bytes == NULL) {
                return COMMON_ENOMEM;
            }
            dest[c].u.s.bytes = bytes;
        }
    }
    state->heap[state->heap_count++] = state->row_count++;
    heap_up(state, state->heap_count - 1);
    return 0;
}

/* Takes the next row out of the queue into run->current; false when the
 * queue is empty. An emptied queue starts over, its memory reused. */
static int queue_pop(struct recursive_state *state, bool *popped)
{
    struct engine_recursion *run = state->run;
    const struct engine_value *row;

    *popped = state->heap_count > 0;
    if (!*popped) {
        return 0;
    }
    row = &state->rows[state->heap[0] * run->width];
    state->heap[0] = state->heap[--state->heap_count];
    heap_down(state, 0);
    engine__arena_reset(&state->current_bytes);
    for (size_t c = 0; c < run->width; c++) {
        run->current[c] = row[c];
        if (row[c].type == ENGINE_TEXT || row[c].type == ENGINE_BLOB) {
            void *bytes = engine__arena_memdup(
                &state->current_bytes, row[c].u.s.bytes, row[c].u.s.size);

            if (bytes == NULL) {
                return COMMON_ENOMEM;
            }
            run->current[c].u.s.bytes = bytes;
        }
    }
    run->has_current = true;
    if (state->heap_count == 0) {
        state->row_count = 0;
        engine__arena_reset(&state->queue_bytes);
    }
    return 0;
}

/* Runs input (opened here) to its end, queueing each row. */
static int drain(struct recursive_state *state, struct engine_op *input,
                 struct engine_exec *exec)
{
    struct engine_value row[ENGINE_MAX_COLUMNS];
    int rc = input->ops->open(input, exec);

    while (rc == 0) {
        struct engine_batch *in;

        rc = input->ops->next(input, exec, &in);
        if (rc != 0 || in == NULL) {
            break;
        }
        for (uint32_t i = 0; rc == 0 && i < in->selected; i++) {
            uint32_t r = engine__batch_row(in, i);

            for (size_t c = 0; c < state->run->width; c++) {
                row[c] = engine__vector_get(&in->columns[c], r);
            }
            rc = queue_push(state, row);
            if (rc == COMMON_ENOMEM) {
                rc = engine__error(exec, rc, "out of memory");
            }
        }
    }
    return rc;
}

static int recursive_open(struct engine_op *op, struct engine_exec *exec)
{
    struct recursive_state *state = op->state;
    int rc = 0;

    state_clear(state);
    state->started = false;
    state->pending = false;
    state->done = false;
    state->limit_left = -1;
    state->offset_left = 0;
    engine__arena_reset(&op->arena);
    if (state->limit != NULL) {
        rc = engine__limit_value(op, exec, state->limit, &state->limit_left);
        state->limit_left = state->limit_left < 0 ? -1 : state->limit_left;
    }
    if (rc == 0 && state->offset != NULL) {
        rc = engine__limit_value(op, exec, state->offset, &state->offset_left);
        state->offset_left = state->offset_left < 0 ? 0 : state->offset_left;
    }
    state->done = state->limit_left == 0; /* SQLite skips even the setup */
    return rc;
}

static int recursive_next(struct engine_op *op, struct engine_exec *exec,
                          struct engine_batch **out)
{
    struct recursive_state *state = op->state;
    int rc = 0;

    *out = NULL;
    if (!state->started && !state->done) {
        state->started = true;
        rc = drain(state, state->setup, exec);
    }
    while (rc == 0 && !state->done) {
        bool popped;

        if (state->pending) {
            state->pending = false;
            for (size_t i = 0; rc == 0 && i < state->step_count; i++) {
                rc = drain(state, state->steps[i], exec);
            }
            if (rc != 0) {
                break;
            }
        }
        rc = queue_pop(state, &popped);
        if (rc != 0) {
            return engine__error(exec, rc, "out of memory");
        }
        if (!popped) {
            state->done = true;
            break;
        }
        state->pending = true;
        if (state->offset_left > 0) {
            state->offset_left--;
            continue;
        }
        if (state->limit_left > 0 && --state->limit_left == 0) {
            state->done = true;
        }
        return emit_row(op, exec, state->run->current, NULL, out);
    }
    return rc;
}

static void recursive_destroy(struct engine_op *op)
{
    struct recursive_state *state = op->state;

    state_clear(state);
    engine__arena_close(&state->queue_bytes);
    engine__arena_close(&state->current_bytes);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops recursive_ops = {
    .open = recursive_open,
    .next = recursive_next,
    .destroy = recursive_destroy,
};

struct engine_op *
engine__op_recursive(struct engine_stmt *stmt, struct engine_recursion *run,
                     struct engine_op *setup, struct engine_op **steps,
                     size_t step_count, const enum engine_collation *collations,
                     const struct engine_sort_key *keys, size_t key_count,
                     struct engine_expr *limit, struct engine_expr *offset)
{
    struct engine_op *op =
        engine__op_new(stmt, &recursive_ops, setup,
                       sizeof(struct recursive_state), run->width, true);
    struct recursive_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->run = run;
    state->setup = setup;
    state->steps = steps;
    state->step_count = step_count;
    state->collations = collations;
    state->keys = keys;
    state->key_count = key_count;
    state->limit = limit;
    state->offset = offset;
    engine__arena_init(&state->queue_bytes);
    engine__arena_init(&state->current_bytes);
    return op;
}
