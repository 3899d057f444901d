/* SPDX-License-Identifier: MIT
 *
 * op_compound.c: the operators of a compound SELECT (plan_compound.c
 * chains them), each over a left input (the compound so far) and a right
 * one (the next SELECT), reproducing the rows and the order SQLite 3.40's
 * select.c gives:
 *
 * - concat: UNION ALL without ORDER BY streams the left rows, then the
 *   right ones (the right input opens only when the left is done, so a
 *   LIMIT the left satisfies never runs the right).
 * - set: UNION, INTERSECT and EXCEPT without ORDER BY (multiSelect()).
 *   SQLite keeps the rows in an ephemeral index keyed on the whole row:
 *   inserting a row equal to one present (under the column collations,
 *   NULLs equal, 1 = 1.0) overwrites it, so the LAST equal row is the one
 *   kept, and the result comes out in index order: ascending on every
 *   column, NULLs first. Here a hash set (rowset.h, as DISTINCT uses)
 *   finds the equal rows, then the survivors are sorted.
 * - merge: any compound with an ORDER BY (multiSelectOrderBy()). Both
 *   inputs arrive sorted on the merge key; the merge steps through them as
 *   SQLite's does ("A<B", "A==B", "A>B" per operator) and drops an output
 *   row equal to the previous one under the compound's collations. So
 *   UNION keeps the right input's row of an equal pair, INTERSECT and
 *   EXCEPT the left's, and UNION ALL takes the left first on ties.
 *
 * set and merge materialize their inputs (values copied, bytes in the
 * operator's arena), then hand out batches of ENGINE__BATCH_SIZE rows.
 */
#include <string.h>

#include "engine_int.h"
#include "rowset.h"

/* ---- materialized rows ---- */

struct compound_rows {
    struct engine_value *values; /* count * width, row-major */
    size_t count;
    size_t capacity;
    struct engine_arena bytes; /* the text and blob bytes of values */
};

static void rows_reset(struct compound_rows *rows)
{
    common_free(rows->values);
    engine__arena_close(&rows->bytes);
    memset(rows, 0, sizeof(*rows));
    engine__arena_init(&rows->bytes);
}

static int copy_bytes(struct engine_arena *arena, struct engine_value *v)
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

/* Appends a copy of row (width values) to rows. */
static int rows_append(struct compound_rows *rows, size_t width,
                       const struct engine_value *row)
{
    struct engine_value *dest;

    if (rows->count == rows->capacity) {
        size_t capacity = rows->capacity == 0 ? 256 : rows->capacity * 2;
        struct engine_value *values = common_realloc_array(
            rows->values, capacity * width + 1, sizeof(*values));

        if (values == NULL) {
            return COMMON_ENOMEM;
        }
        rows->values = values;
        rows->capacity = capacity;
    }
    dest = &rows->values[rows->count * width];
    for (size_t c = 0; c < width; c++) {
        dest[c] = row[c];
        if (copy_bytes(&rows->bytes, &dest[c]) != 0) {
            return COMMON_ENOMEM;
        }
    }
    rows->count++;
    return 0;
}

/* Calls each_cb on every row of input (opened here), one at a time. */
static int input_each(struct engine_op *input, struct engine_exec *exec,
                      int (*each_cb)(void *ctx, const struct engine_value *row),
                      void *ctx)
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

            for (size_t c = 0; c < input->column_count; c++) {
                row[c] = engine__vector_get(&in->columns[c], r);
            }
            rc = each_cb(ctx, row);
        }
    }
    return rc;
}

/* The rows handed out, in order: pointers into the materialized rows. */
struct compound_output {
    const struct engine_value **rows;
    size_t count;
    size_t capacity;
    size_t emitted;
};

static void output_reset(struct compound_output *output)
{
    common_free(output->rows);
    memset(output, 0, sizeof(*output));
}

static int output_push(struct compound_output *output,
                       const struct engine_value *row)
{
    if (output->count == output->capacity) {
        size_t capacity = output->capacity == 0 ? 256 : output->capacity * 2;
        const struct engine_value **rows =
            common_realloc_array(output->rows, capacity + 1, sizeof(*rows));

        if (rows == NULL) {
            return COMMON_ENOMEM;
        }
        output->rows = rows;
        output->capacity = capacity;
    }
    output->rows[output->count++] = row;
    return 0;
}

/* The next batch of output rows into op's owned batch; NULL at the end. */
static int output_next(struct engine_op *op, struct engine_exec *exec,
                       struct compound_output *output,
                       struct engine_batch **out)
{
    size_t left = output->count - output->emitted;
    uint32_t n = 0;

    if (engine__op_reserve(op, left < ENGINE__BATCH_SIZE
                                   ? (uint32_t)left
                                   : ENGINE__BATCH_SIZE) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (; output->emitted < output->count && n < ENGINE__BATCH_SIZE; n++) {
        const struct engine_value *row = output->rows[output->emitted++];

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

/* Whether rows a and b are equal under collations (NULLs equal). */
static bool rows_equal(const struct engine_value *a,
                       const struct engine_value *b, size_t width,
                       const enum engine_collation *collations)
{
    for (size_t c = 0; c < width; c++) {
        if (engine__value_compare(&a[c], &b[c], collations[c]) != 0) {
            return false;
        }
    }
    return true;
}

/* ---- concat: UNION ALL, streaming ---- */

struct concat_state {
    struct engine_op *right;
    bool on_right; /* the left input is done */
};

static int concat_open(struct engine_op *op, struct engine_exec *exec)
{
    struct concat_state *state = op->state;

    state->on_right = false;
    return op->child->ops->open(op->child, exec);
}

static int concat_next(struct engine_op *op, struct engine_exec *exec,
                       struct engine_batch **out)
{
    struct concat_state *state = op->state;
    int rc;

    if (!state->on_right) {
        rc = op->child->ops->next(op->child, exec, out);
        if (rc != 0 || *out != NULL) {
            return rc;
        }
        state->on_right = true;
        rc = state->right->ops->open(state->right, exec);
        if (rc != 0) {
            return rc;
        }
    }
    return state->right->ops->next(state->right, exec, out);
}

static void concat_destroy(struct engine_op *op)
{
    engine__arena_close(&op->arena);
}

static const struct engine_op_ops concat_ops = {
    .open = concat_open,
    .next = concat_next,
    .destroy = concat_destroy,
};

struct engine_op *engine__op_concat(struct engine_stmt *stmt,
                                    struct engine_op *left,
                                    struct engine_op *right)
{
    struct engine_op *op = engine__op_new(
        stmt, &concat_ops, left, sizeof(struct concat_state), 0, false);

    ASSERT(left->column_count == right->column_count);
    if (op == NULL) {
        return NULL;
    }
    common_free(op->batch.columns);
    op->batch.columns = NULL;
    op->column_count = left->column_count;
    ((struct concat_state *)op->state)->right = right;
    return op;
}

/* ---- set: UNION, INTERSECT, EXCEPT without ORDER BY ---- */

struct set_state {
    enum ast_compound_op kind;
    struct engine_op *right;
    const enum engine_collation *collations; /* one per column */
    struct engine_sort_key *keys;            /* every column, ascending */
    struct engine_rowset classes;            /* one row per equal class */
    struct compound_rows kept; /* per class: the last row inserted */
    uint8_t *matched;          /* per class: met in the right input */
    size_t matched_size;       /* bytes of matched */
    struct compound_output output;
    bool ready; /* classes initialized */
    bool done;  /* output computed */
    size_t width;
};

static void set_clear(struct set_state *state)
{
    if (state->ready) {
        engine__rowset_close(&state->classes);
    }
    rows_reset(&state->kept);
    common_free(state->matched);
    state->matched = NULL;
    state->matched_size = 0;
    output_reset(&state->output);
    state->ready = false;
    state->done = false;
}

static int set_open(struct engine_op *op, struct engine_exec *exec)
{
    struct set_state *state = op->state;

    (void)exec;
    set_clear(state);
    engine__rowset_init(&state->classes, state->width, state->collations);
    state->ready = true;
    return 0;
}

/* A row of the inserting input: a new class, or the class's row replaced
 * (the ephemeral index's overwrite). */
static int set_insert_cb(void *ctx, const struct engine_value *row)
{
    struct set_state *state = ctx;
    struct engine_value *dest;
    bool inserted;
    size_t index;

    if (engine__rowset_insert(&state->classes, row, &inserted, &index) != 0) {
        return COMMON_ENOMEM;
    }
    if (inserted) {
        ASSERT(index == state->kept.count);
        return rows_append(&state->kept, state->width, row);
    }
    dest = &state->kept.values[index * state->width];
    for (size_t c = 0; c < state->width; c++) {
        dest[c] = row[c];
        if (copy_bytes(&state->kept.bytes, &dest[c]) != 0) {
            return COMMON_ENOMEM;
        }
    }
    return 0;
}

/* A row of the right input of INTERSECT or EXCEPT: marks its class. */
static int set_probe_cb(void *ctx, const struct engine_value *row)
{
    struct set_state *state = ctx;
    size_t index;

    if (engine__rowset_find(&state->classes, row, &index)) {
        state->matched[index] = 1;
    }
    return 0;
}

static int compare_kept(const void *ctx, size_t a, size_t b)
{
    const struct set_state *state = ctx;

    return engine__sort_compare(state->keys, state->width,
                                &state->kept.values[a * state->width],
                                &state->kept.values[b * state->width]);
}

/* The surviving classes' rows, sorted, into the output list. */
static int set_finish(struct set_state *state)
{
    size_t *order = common_malloc_array(state->kept.count + 1, sizeof(*order));
    size_t n = 0;
    int rc;

    if (order == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < state->kept.count; i++) {
        bool matched = state->matched != NULL && state->matched[i] != 0;

        if ((state->kind == AST_COMPOUND_INTERSECT && !matched) ||
            (state->kind == AST_COMPOUND_EXCEPT && matched)) {
            continue;
        }
        order[n++] = i;
    }
    rc = engine__stable_sort(order, n, compare_kept, state);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = output_push(&state->output,
                         &state->kept.values[order[i] * state->width]);
    }
    common_free(order);
    return rc;
}

static int set_compute(struct engine_op *op, struct engine_exec *exec)
{
    struct set_state *state = op->state;
    int rc = input_each(op->child, exec, set_insert_cb, state);

    if (rc == 0 && state->kind == AST_COMPOUND_UNION) {
        rc = input_each(state->right, exec, set_insert_cb, state);
    } else if (rc == 0) {
        state->matched = common_calloc(state->kept.count + 1, 1);
        rc = state->matched == NULL
                 ? COMMON_ENOMEM
                 : input_each(state->right, exec, set_probe_cb, state);
    }
    if (rc == 0) {
        rc = set_finish(state);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__error(exec, rc, "out of memory");
    }
    return rc;
}

static int set_next(struct engine_op *op, struct engine_exec *exec,
                    struct engine_batch **out)
{
    struct set_state *state = op->state;

    if (!state->done) {
        int rc = set_compute(op, exec);

        if (rc != 0) {
            return rc;
        }
        state->done = true;
    }
    return output_next(op, exec, &state->output, out);
}

static void set_destroy(struct engine_op *op)
{
    struct set_state *state = op->state;

    set_clear(state);
    engine__arena_close(&state->kept.bytes);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops set_ops = {
    .open = set_open,
    .next = set_next,
    .destroy = set_destroy,
};

struct engine_op *engine__op_set(struct engine_stmt *stmt,
                                 enum ast_compound_op kind,
                                 struct engine_op *left,
                                 struct engine_op *right,
                                 const enum engine_collation *collations)
{
    size_t width = left->column_count;
    struct engine_op *op = engine__op_new(
        stmt, &set_ops, left, sizeof(struct set_state), width, true);
    struct set_state *state;

    ASSERT(kind != AST_COMPOUND_NONE && kind != AST_COMPOUND_UNION_ALL);
    ASSERT(width == right->column_count);
    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->keys = engine__arena_alloc(&stmt->plan_arena,
                                      (width + 1) * sizeof(*state->keys));
    if (state->keys == NULL) {
        return NULL;
    }
    for (size_t c = 0; c < width; c++) {
        state->keys[c] = (struct engine_sort_key){
            .column = c, .nulls_first = true, .collation = collations[c]};
    }
    state->kind = kind;
    state->right = right;
    state->collations = collations;
    state->width = width;
    engine__arena_init(&state->kept.bytes);
    return op;
}

/* ---- merge: a compound with ORDER BY ---- */

struct merge_state {
    enum ast_compound_op kind;
    struct engine_op *right;
    const struct engine_sort_key *keys; /* the merge key */
    size_t key_count;
    const enum engine_collation *collations; /* duplicate test, per column */
    struct compound_rows a;                  /* left input, sorted */
    struct compound_rows b;                  /* right input, sorted */
    struct compound_output output;
    bool done;
    size_t width;
};

static void merge_clear(struct merge_state *state)
{
    rows_reset(&state->a);
    rows_reset(&state->b);
    output_reset(&state->output);
    state->done = false;
}

static int merge_open(struct engine_op *op, struct engine_exec *exec)
{
    (void)exec;
    merge_clear(op->state);
    return 0;
}

struct merge_fill {
    struct compound_rows *rows;
    size_t width;
};

static int merge_fill_cb(void *ctx, const struct engine_value *row)
{
    struct merge_fill *fill = ctx;

    return rows_append(fill->rows, fill->width, row);
}

/* generateOutputSubroutine(): a row equal to the previous output row is
 * dropped, except under UNION ALL. */
static int merge_out(struct merge_state *state, const struct engine_value *row)
{
    struct compound_output *output = &state->output;

    if (state->kind != AST_COMPOUND_UNION_ALL && output->count > 0 &&
        rows_equal(output->rows[output->count - 1], row, state->width,
                   state->collations)) {
        return 0;
    }
    return output_push(output, row);
}

/* One step of the merge loop on rows a and b: what SQLite's OP_Jump to
 * addrAltB, addrAeqB or addrAgtB does for each operator. Advances *i
 * (left) or *j (right). */
static int merge_step(struct merge_state *state, size_t *i, size_t *j)
{
    const struct engine_value *a = &state->a.values[*i * state->width];
    const struct engine_value *b = &state->b.values[*j * state->width];
    int c = engine__sort_compare(state->keys, state->key_count, a, b);
    enum ast_compound_op kind = state->kind;
    int rc = 0;

    if (c > 0) { /* A>B: UNION and UNION ALL output B; all take next B */
        if (kind == AST_COMPOUND_UNION || kind == AST_COMPOUND_UNION_ALL) {
            rc = merge_out(state, b);
        }
        (*j)++;
        return rc;
    }
    /* A<B: all but INTERSECT output A. A==B: UNION ALL and INTERSECT
     * output A; UNION and EXCEPT skip it. Both take next A. */
    if (c < 0 ? kind != AST_COMPOUND_INTERSECT
              : (kind == AST_COMPOUND_UNION_ALL ||
                 kind == AST_COMPOUND_INTERSECT)) {
        rc = merge_out(state, a);
    }
    (*i)++;
    return rc;
}

static int merge_compute(struct engine_op *op, struct engine_exec *exec)
{
    struct merge_state *state = op->state;
    struct merge_fill fill_a = {.rows = &state->a, .width = state->width};
    struct merge_fill fill_b = {.rows = &state->b, .width = state->width};
    enum ast_compound_op kind = state->kind;
    size_t i = 0;
    size_t j = 0;
    int rc = input_each(op->child, exec, merge_fill_cb, &fill_a);

    /* An empty A ends INTERSECT and EXCEPT before B is ever read
     * (addrEofA_noB is labelEnd): B's errors never show. */
    if (rc == 0 && (state->a.count > 0 || kind == AST_COMPOUND_UNION ||
                    kind == AST_COMPOUND_UNION_ALL)) {
        rc = input_each(state->right, exec, merge_fill_cb, &fill_b);
    }
    while (rc == 0 && i < state->a.count && j < state->b.count) {
        rc = merge_step(state, &i, &j);
    }
    /* The end of one input: UNION and UNION ALL output the rest of B,
     * all but INTERSECT the rest of A. */
    while (rc == 0 && j < state->b.count && i == state->a.count &&
           (kind == AST_COMPOUND_UNION || kind == AST_COMPOUND_UNION_ALL)) {
        rc = merge_out(state, &state->b.values[j++ * state->width]);
    }
    while (rc == 0 && i < state->a.count && j == state->b.count &&
           kind != AST_COMPOUND_INTERSECT) {
        rc = merge_out(state, &state->a.values[i++ * state->width]);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__error(exec, rc, "out of memory");
    }
    return rc;
}

static int merge_next(struct engine_op *op, struct engine_exec *exec,
                      struct engine_batch **out)
{
    struct merge_state *state = op->state;

    if (!state->done) {
        int rc = merge_compute(op, exec);

        if (rc != 0) {
            return rc;
        }
        state->done = true;
    }
    return output_next(op, exec, &state->output, out);
}

static void merge_destroy(struct engine_op *op)
{
    struct merge_state *state = op->state;

    merge_clear(state);
    engine__arena_close(&state->a.bytes);
    engine__arena_close(&state->b.bytes);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops merge_ops = {
    .open = merge_open,
    .next = merge_next,
    .destroy = merge_destroy,
};

struct engine_op *
engine__op_merge(struct engine_stmt *stmt, enum ast_compound_op kind,
                 struct engine_op *left, struct engine_op *right,
                 const struct engine_sort_key *keys, size_t key_count,
                 const enum engine_collation *collations)
{
    size_t width = left->column_count;
    struct engine_op *op = engine__op_new(
        stmt, &merge_ops, left, sizeof(struct merge_state), width, true);
    struct merge_state *state;

    ASSERT(kind != AST_COMPOUND_NONE);
    ASSERT(width == right->column_count);
    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->kind = kind;
    state->right = right;
    state->keys = keys;
    state->key_count = key_count;
    state->collations = collations;
    state->width = width;
    engine__arena_init(&state->a.bytes);
    engine__arena_init(&state->b.bytes);
    return op;
}

/* ---- real affinity: a compound read as a FROM subquery ---- */

struct real_state {
    const bool *is_real; /* per column: REAL affinity */
};

static int real_open(struct engine_op *op, struct engine_exec *exec)
{
    return op->child->ops->open(op->child, exec);
}

/* OP_RealAffinity on each INTEGER of a REAL column: the outer query reads
 * the subquery's columns with their affinity (sqlite3ExprCodeGetColumn),
 * so "SELECT * FROM (SELECT x FROM r UNION SELECT 9)", x REAL, gives
 * 9.0. */
static struct engine_value real_value(struct engine_value v, bool is_real)
{
    if (is_real && v.type == ENGINE_INTEGER) {
        return engine__value_real((double)v.u.i);
    }
    return v;
}

static int real_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct real_state *state = op->state;
    struct engine_batch *in;
    int rc = op->child->ops->next(op->child, exec, &in);

    if (rc != 0 || in == NULL) {
        *out = NULL;
        return rc;
    }
    if (engine__op_reserve(op, in->selected) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);

        for (size_t c = 0; c < op->column_count; c++) {
            struct engine_vector *vector = &op->batch.columns[c];
            struct engine_value v = real_value(
                engine__vector_get(&in->columns[c], row), state->is_real[c]);

            vector->kind = ENGINE_VECTOR_VALUES;
            vector->nulls[i] = v.type == ENGINE_NULL;
            vector->data.values[i] = v;
        }
    }
    op->batch.count = in->selected;
    op->batch.selected = in->selected;
    op->batch.selection = NULL;
    *out = &op->batch;
    return 0;
}

static const struct engine_op_ops real_ops = {
    .open = real_open,
    .next = real_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_real_affinity(struct engine_stmt *stmt,
                                           struct engine_op *child,
                                           const bool *is_real)
{
    struct engine_op *op =
        engine__op_new(stmt, &real_ops, child, sizeof(struct real_state),
                       child->column_count, true);

    if (op == NULL) {
        return NULL;
    }
    ((struct real_state *)op->state)->is_real = is_real;
    return op;
}
