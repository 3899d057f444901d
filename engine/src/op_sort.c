/* SPDX-License-Identifier: MIT
 *
 * op_sort.c: DISTINCT and ORDER BY.
 *
 * Distinct streams: a row passes when its values were not seen before
 * (rowset.h), so rows keep their first-seen order as SQLite's DISTINCT
 * does without an ORDER BY.
 *
 * Sort materializes its input (values and bytes copied), then sorts row
 * numbers with a stable merge sort: rows with equal keys keep their input
 * order, as SQLite's sorter keeps them. Under a LIMIT only the first
 * limit + offset rows can matter: whenever the buffer holds twice that
 * many, it is sorted and cut back (top-N), so memory stays bounded. Keys
 * compare with engine__value_compare() under their collation; NULLs go first or
 * last as NULLS FIRST/LAST (default: first ascending, last descending).
 */
#include <string.h>

#include "engine_int.h"
#include "rowset.h"

/* ---- distinct ---- */

struct distinct_state {
    const enum engine_collation *collations;
    size_t key_count;
    struct engine_rowset seen;
    bool seen_ready;
    uint32_t selection[ENGINE__BATCH_SIZE];
};

static int distinct_open(struct engine_op *op, struct engine_exec *exec)
{
    struct distinct_state *state = op->state;

    if (state->seen_ready) {
        engine__rowset_close(&state->seen);
    }
    engine__rowset_init(&state->seen, state->key_count, state->collations);
    state->seen_ready = true;
    return op->child->ops->open(op->child, exec);
}

static int distinct_filter(struct engine_op *op, struct engine_exec *exec,
                           const struct engine_batch *in, uint32_t *n)
{
    struct distinct_state *state = op->state;
    struct engine_value key[ENGINE_MAX_COLUMNS];

    *n = 0;
    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);
        bool inserted;
        size_t index;

        for (size_t c = 0; c < state->key_count; c++) {
            key[c] = engine__vector_get(&in->columns[c], row);
        }
        if (engine__rowset_insert(&state->seen, key, &inserted, &index) != 0) {
            return engine__error(exec, COMMON_ENOMEM, "out of memory");
        }
        if (inserted) {
            state->selection[(*n)++] = row;
        }
    }
    return 0;
}

static int distinct_next(struct engine_op *op, struct engine_exec *exec,
                         struct engine_batch **out)
{
    struct distinct_state *state = op->state;

    for (;;) {
        struct engine_batch *in;
        uint32_t n;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0 || in == NULL) {
            *out = NULL;
            return rc;
        }
        rc = distinct_filter(op, exec, in, &n);
        if (rc != 0) {
            return rc;
        }
        if (n > 0) {
            op->batch = *in;
            op->batch.selection = state->selection;
            op->batch.selected = n;
            *out = &op->batch;
            return 0;
        }
    }
}

static void distinct_destroy(struct engine_op *op)
{
    struct distinct_state *state = op->state;

    if (state->seen_ready) {
        engine__rowset_close(&state->seen);
    }
    engine__arena_close(&op->arena);
}

static const struct engine_op_ops distinct_ops = {
    .open = distinct_open,
    .next = distinct_next,
    .destroy = distinct_destroy,
};

struct engine_op *engine__op_distinct(struct engine_stmt *stmt,
                                      struct engine_op *child,
                                      const enum engine_collation *collations,
                                      size_t key_count)
{
    struct engine_op *op = engine__op_new(
        stmt, &distinct_ops, child, sizeof(struct distinct_state), 0, false);
    struct distinct_state *state;

    if (op == NULL) {
        return NULL;
    }
    common_free(op->batch.columns);
    op->batch.columns = NULL;
    op->column_count = child->column_count;
    state = op->state;
    state->collations = collations;
    state->key_count = key_count;
    return op;
}

/* ---- sort ---- */

struct sort_state {
    const struct engine_sort_key *keys;
    size_t key_count;
    struct engine_expr *limit;  /* top-N: LIMIT, or NULL */
    struct engine_expr *offset; /* with it, OFFSET or NULL */
    size_t keep;                /* rows worth keeping; SIZE_MAX: all */
    bool has_threshold;         /* keep rows are buffered, in order */
    size_t threshold;           /* the row number of the last of them */
    struct engine_value *rows;  /* row_count * column_count */
    size_t row_count;
    size_t row_capacity;
    size_t *order; /* row numbers in sorted order */
    size_t emitted;
    bool sorted;
    struct engine_arena bytes; /* the rows' text and blob bytes */
};

/* limit + offset, the rows a top-N sort keeps (SIZE_MAX: no limit). */
static int sort_bound(struct engine_op *op, struct engine_exec *exec)
{
    struct sort_state *state = op->state;
    int64_t limit;
    int64_t offset = 0;
    int rc = engine__limit_value(op, exec, state->limit, &limit);

    if (rc == 0 && state->offset != NULL) {
        rc = engine__limit_value(op, exec, state->offset, &offset);
    }
    if (rc != 0 || limit < 0) {
        return rc;
    }
    offset = offset < 0 ? 0 : offset;
    if ((uint64_t)limit + (uint64_t)offset < (uint64_t)SIZE_MAX / 4) {
        state->keep = (size_t)limit + (size_t)offset;
    }
    return 0;
}

static int sort_open(struct engine_op *op, struct engine_exec *exec)
{
    struct sort_state *state = op->state;

    common_free(state->rows);
    common_free(state->order);
    state->rows = NULL;
    state->order = NULL;
    state->row_count = 0;
    state->row_capacity = 0;
    state->emitted = 0;
    state->sorted = false;
    engine__arena_close(&state->bytes);
    engine__arena_init(&state->bytes);
    state->keep = SIZE_MAX;
    state->has_threshold = false;
    state->threshold = 0;
    if (state->limit != NULL) {
        int rc = sort_bound(op, exec);

        if (rc != 0) {
            return rc;
        }
    }
    return op->child->ops->open(op->child, exec);
}

static int copy_value(struct engine_arena *arena, struct engine_value *v)
{
    if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
        void *bytes = engine__arena_memdup(arena, v->u.s.bytes, v->u.s.size);

        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        v->u.s.bytes = bytes;
    }
    return 0;
}

static int sort_grow(struct sort_state *state, size_t width)
{
    size_t capacity = state->row_capacity == 0 ? 256 : state->row_capacity * 2;
    struct engine_value *rows =
        common_realloc_array(state->rows, capacity * width + 1, sizeof(*rows));

    if (rows == NULL) {
        return COMMON_ENOMEM;
    }
    state->rows = rows;
    state->row_capacity = capacity;
    return 0;
}

/* Top-N: once the buffer holds the rows to keep, a row that does not sort
 * strictly before the last of them can never be kept (a tie loses: it
 * comes later in the input), so it is not even copied. */
static bool cannot_place(const struct engine_op *op,
                         const struct engine_value *row)
{
    const struct sort_state *state = op->state;

    return state->has_threshold &&
           engine__sort_compare(
               state->keys, state->key_count, row,
               &state->rows[state->threshold * op->column_count]) >= 0;
}

/* Copies the live rows of in into the sort's buffer. */
static int sort_absorb(struct engine_op *op, const struct engine_batch *in)
{
    struct sort_state *state = op->state;
    size_t width = op->column_count;

    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);
        struct engine_value *dest;

        if (state->row_count == state->row_capacity &&
            sort_grow(state, width) != 0) {
            return COMMON_ENOMEM;
        }
        dest = &state->rows[state->row_count * width];
        for (size_t c = 0; c < width; c++) {
            dest[c] = engine__vector_get(&in->columns[c], row);
        }
        if (cannot_place(op, dest)) {
            continue;
        }
        for (size_t c = 0; c < width; c++) {
            if (copy_value(&state->bytes, &dest[c]) != 0) {
                return COMMON_ENOMEM;
            }
        }
        state->row_count++;
    }
    return 0;
}

int engine__sort_compare(const struct engine_sort_key *keys, size_t key_count,
                         const struct engine_value *a,
                         const struct engine_value *b)
{
    for (size_t k = 0; k < key_count; k++) {
        const struct engine_sort_key *key = &keys[k];
        const struct engine_value *u = &a[key->column];
        const struct engine_value *v = &b[key->column];
        bool u_null = u->type == ENGINE_NULL;
        bool v_null = v->type == ENGINE_NULL;
        int c;

        if (u_null || v_null) {
            if (u_null && v_null) {
                continue;
            }
            return (u_null == key->nulls_first) ? -1 : 1;
        }
        c = engine__value_compare(u, v, key->collation);
        if (c != 0) {
            return key->descending ? -c : c;
        }
    }
    return 0;
}

static int compare_rows(const void *ctx, size_t x, size_t y)
{
    const struct engine_op *op = ctx;
    const struct sort_state *state = op->state;

    return engine__sort_compare(state->keys, state->key_count,
                                &state->rows[x * op->column_count],
                                &state->rows[y * op->column_count]);
}

/* Sorts the buffered rows into state->order. */
static int order_rows(struct engine_op *op)
{
    struct sort_state *state = op->state;

    common_free(state->order);
    state->order = common_malloc_array(state->row_count + 1, sizeof(size_t));
    if (state->order == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < state->row_count; i++) {
        state->order[i] = i;
    }
    return engine__stable_sort(state->order, state->row_count, compare_rows,
                               op);
}

/* Top-N: keeps the first state->keep rows in sorted order (their bytes
 * moved to a fresh arena) and drops the rest. Kept rows precede later
 * input, so ties still resolve in input order. */
static int prune(struct engine_op *op)
{
    struct sort_state *state = op->state;
    size_t width = op->column_count;
    size_t kept =
        state->keep < state->row_count ? state->keep : state->row_count;
    struct engine_value *rows =
        common_malloc_array(state->row_capacity * width + 1, sizeof(*rows));
    struct engine_arena bytes;
    int rc = rows == NULL ? COMMON_ENOMEM : order_rows(op);

    engine__arena_init(&bytes);
    for (size_t i = 0; rc == 0 && i < kept; i++) {
        const struct engine_value *from = &state->rows[state->order[i] * width];

        for (size_t c = 0; rc == 0 && c < width; c++) {
            rows[i * width + c] = from[c];
            rc = copy_value(&bytes, &rows[i * width + c]);
        }
    }
    if (rc != 0) {
        common_free(rows);
        engine__arena_close(&bytes);
        return rc;
    }
    common_free(state->rows);
    engine__arena_close(&state->bytes);
    state->rows = rows;
    state->bytes = bytes;
    state->row_count = kept;
    state->has_threshold = kept > 0 && kept == state->keep;
    state->threshold = kept > 0 ? kept - 1 : 0;
    return 0;
}

static int sort_all(struct engine_op *op, struct engine_exec *exec)
{
    struct sort_state *state = op->state;

    for (;;) {
        struct engine_batch *in;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0) {
            return rc;
        }
        if (in == NULL) {
            break;
        }
        rc = sort_absorb(op, in);
        if (rc == 0 && state->keep != SIZE_MAX &&
            state->row_count >= 2 * state->keep + ENGINE__BATCH_SIZE) {
            rc = prune(op);
        }
        if (rc != 0) {
            return engine__error(exec, COMMON_ENOMEM, "out of memory");
        }
    }
    if (order_rows(op) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    state->sorted = true;
    return 0;
}

static int sort_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct sort_state *state = op->state;
    uint32_t n = 0;

    if (!state->sorted) {
        int rc = sort_all(op, exec);

        if (rc != 0) {
            return rc;
        }
    }
    if (engine__op_reserve(
            op, state->row_count - state->emitted < ENGINE__BATCH_SIZE
                    ? (uint32_t)(state->row_count - state->emitted)
                    : ENGINE__BATCH_SIZE) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (; state->emitted < state->row_count && n < ENGINE__BATCH_SIZE; n++) {
        const struct engine_value *row =
            &state->rows[state->order[state->emitted++] * op->column_count];

        for (size_t c = 0; c < op->column_count; c++) {
            struct engine_vector *vector = &op->batch.columns[c];

            vector->kind = ENGINE_VECTOR_VALUES;
            vector->nulls[n] = row[c].type == ENGINE_NULL;
            vector->data.values[n] = row[c];
        }
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    *out = n > 0 ? &op->batch : NULL;
    return 0;
}

static void sort_destroy(struct engine_op *op)
{
    struct sort_state *state = op->state;

    common_free(state->rows);
    common_free(state->order);
    engine__arena_close(&state->bytes);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops sort_ops = {
    .open = sort_open,
    .next = sort_next,
    .destroy = sort_destroy,
};

struct engine_op *engine__op_sort(struct engine_stmt *stmt,
                                  struct engine_op *child,
                                  const struct engine_sort_key *keys,
                                  size_t key_count, struct engine_expr *limit,
                                  struct engine_expr *offset)
{
    struct engine_op *op =
        engine__op_new(stmt, &sort_ops, child, sizeof(struct sort_state),
                       child->column_count, true);
    struct sort_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->keys = keys;
    state->key_count = key_count;
    state->limit = limit;
    state->offset = offset;
    state->keep = SIZE_MAX;
    engine__arena_init(&state->bytes);
    return op;
}
