/* SPDX-License-Identifier: MIT
 *
 * op_source.c: the operators that produce rows: a table scan (every row
 * in rowid order, or only those its access path finds: access.h, passing
 * over the blocks zone maps rule out: zone.h), rows of
 * expressions (VALUES, and the single empty row of a SELECT without FROM),
 * and materialized rows (sqlite_schema). Also the helpers every operator
 * uses to own its output batch.
 */
#include <string.h>

#include "access.h"
#include "engine_int.h"
#include "zone.h"

int engine__op_reserve(struct engine_op *op, uint32_t rows)
{
    for (size_t c = 0; c < op->batch.column_count; c++) {
        int rc = engine__vector_reserve(&op->batch.columns[c], rows);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int engine__op_init_batch(struct engine_op *op, size_t column_count)
{
    struct engine_batch *batch = &op->batch;

    batch->columns = common_calloc(column_count + 1, sizeof(*batch->columns));
    if (batch->columns == NULL) {
        return COMMON_ENOMEM;
    }
    batch->column_count = column_count;
    op->column_count = column_count;
    for (size_t i = 0; i < column_count; i++) {
        int rc = engine__vector_init(&batch->columns[i], ENGINE_VECTOR_VALUES);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static void op_destroy_batch(struct engine_op *op)
{
    for (size_t i = 0; op->batch.columns && i < op->batch.column_count; i++) {
        engine__vector_close(&op->batch.columns[i]);
    }
    common_free(op->batch.columns);
    op->batch.columns = NULL;
    engine__arena_close(&op->arena);
}

/* A new operator in the statement's plan arena, registered for destroy. */
static struct engine_op *op_new(struct engine_stmt *stmt,
                                const struct engine_op_ops *ops,
                                struct engine_op *child, size_t state_size)
{
    struct engine_op *op = engine__arena_alloc(&stmt->plan_arena, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    memset(op, 0, sizeof(*op));
    op->ops = ops;
    op->child = child;
    engine__arena_init(&op->arena);
    if (state_size > 0) {
        op->state = engine__arena_alloc(&stmt->plan_arena, state_size);
        if (op->state == NULL) {
            return NULL;
        }
        memset(op->state, 0, state_size);
    }
    if (engine__stmt_own_op(stmt, op) != 0) {
        return NULL;
    }
    return op;
}

struct engine_op *engine__op_new(struct engine_stmt *stmt,
                                 const struct engine_op_ops *ops,
                                 struct engine_op *child, size_t state_size,
                                 size_t column_count, bool owned_columns)
{
    struct engine_op *op = op_new(stmt, ops, child, state_size);

    if (op == NULL) {
        return NULL;
    }
    if (owned_columns) {
        if (engine__op_init_batch(op, column_count) != 0) {
            return NULL;
        }
        return op;
    }
    op->batch.columns =
        common_calloc(column_count + 1, sizeof(*op->batch.columns));
    if (op->batch.columns == NULL) {
        return NULL;
    }
    op->batch.column_count = column_count;
    op->column_count = column_count;
    return op;
}

void engine__op_destroy_default(struct engine_op *op)
{
    op_destroy_batch(op);
}

/* ---- scan ---- */

struct scan_state {
    struct engine_table *table;
    const size_t *columns;
    size_t cursor;
    bool reverse;                         /* rowid order descending */
    const struct engine_access *access;   /* the rows to read; NULL: all */
    struct engine_access_run run;         /* access's state this execution */
    const struct engine_zone_plan *zones; /* without access: or NULL */
    struct engine_zone_run zone_run;      /* zones' state this execution */
    /* The last row given out this execution (when read_some), and the
     * table's change_count then: another statement of the handle may
     * change the table between two batches (see scan_resume). */
    bool read_some;
    int64_t last_rowid;
    uint64_t changes;
    uint32_t slots[ENGINE__BATCH_SIZE];
};

static int scan_open(struct engine_op *op, struct engine_exec *exec)
{
    struct scan_state *state = op->state;

    (void)exec;
    state->cursor = 0;
    state->read_some = false;
    engine__access_reset(state->access, &state->run);
    engine__zone_reset(&state->zone_run);
    return 0;
}

/* The next rows of a scan that zones prune. */
static uint32_t scan_zoned(struct scan_state *state, uint32_t max)
{
    return engine__table_scan_skipping(
        state->table, &state->cursor, state->slots, max, state->reverse,
        state->zone_run.skip, state->zone_run.block_count);
}

/* Whether the scan reads by position (cursor), which a change to the
 * table may move: every row, a rowid range, or every row for a key
 * lookup that cannot be made; not the slots a lookup found. */
static bool scan_by_position(const struct scan_state *state)
{
    const struct engine_access *access = state->access;

    return access == NULL ||
           (state->run.started && !state->run.done &&
            (access->kind == ENGINE_ACCESS_RANGE || state->run.scan_all));
}

/* A statement of the handle changed the table since the last batch (this
 * statement runs whole before it changes anything itself: dml_exec.c):
 * the scan's position may no longer mean the same row (a delete shifts
 * the rowid-sorted order; an update or an insert out of order makes one;
 * a reverse scan counts from a moving end), so it goes on after the
 * rowid it read last, as SQLite's b-tree cursor restores its position
 * by key (btreeRestoreCursorPosition). */
static int scan_resume(struct scan_state *state, struct engine_exec *exec)
{
    size_t cursor;

    if (!state->read_some || state->changes == state->table->change_count ||
        !scan_by_position(state)) {
        return 0;
    }
    cursor = engine__table_scan_resume(state->table, state->last_rowid,
                                       state->reverse);
    if (cursor == SIZE_MAX) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    state->cursor = cursor;
    state->changes = state->table->change_count;
    return 0;
}

/* The slots of the next rows: every row in rowid order (but the blocks
 * zones skip), or access's. */
static int scan_slots(struct engine_op *op, struct engine_exec *exec,
                      uint32_t *count)
{
    struct scan_state *state = op->state;
    uint32_t max = exec->row_at_a_time ? 1 : ENGINE__BATCH_SIZE;
    int rc = scan_resume(state, exec);

    if (rc != 0) {
        return rc;
    }
    if (state->access != NULL) {
        return engine__access_next(state->access, &state->run, state->table,
                                   exec, &op->arena, state->reverse,
                                   &state->cursor, state->slots, max, count);
    }
    if (state->zones != NULL) {
        rc = engine__zone_prepare(state->zones, &state->zone_run, state->table,
                                  exec, &op->arena);
        if (rc != 0) {
            return rc;
        }
    }
    *count = state->zones != NULL
                 ? scan_zoned(state, max)
                 : engine__table_scan(state->table, &state->cursor,
                                      state->slots, max, state->reverse);
    if (*count == UINT32_MAX) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    return 0;
}

static int scan_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct scan_state *state = op->state;
    uint32_t n;
    int rc = scan_slots(op, exec, &n);

    if (rc != 0) {
        return rc;
    }
    if (n == 0) {
        *out = NULL;
        return 0;
    }
    if (engine__op_reserve(op, n) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    engine__table_fill(state->table, state->slots, n, state->columns,
                       &op->batch);
    state->read_some = true;
    state->last_rowid = state->table->rowids[state->slots[n - 1]];
    state->changes = state->table->change_count;
    *out = &op->batch;
    return 0;
}

static void scan_destroy(struct engine_op *op)
{
    engine__access_close(&((struct scan_state *)op->state)->run);
    engine__zone_close(&((struct scan_state *)op->state)->zone_run);
    op_destroy_batch(op);
}

static const struct engine_op_ops scan_ops = {
    .open = scan_open,
    .next = scan_next,
    .destroy = scan_destroy,
};

struct engine_op *engine__op_scan(struct engine_stmt *stmt,
                                  struct engine_table *table,
                                  const size_t *columns, size_t column_count)
{
    struct engine_op *op = engine__op_new(
        stmt, &scan_ops, NULL, sizeof(struct scan_state), column_count, true);
    struct scan_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->table = table;
    state->columns = columns;
    return op;
}

struct engine_table *
engine__op_scan_plain(const struct engine_op *op, const size_t **columns,
                      const struct engine_zone_plan **zones)
{
    const struct scan_state *state = op->state;

    if (op->ops != &scan_ops || state->access != NULL) {
        return NULL;
    }
    *columns = state->columns;
    *zones = state->zones;
    return state->table;
}

void engine__op_scan_reverse(struct engine_op *op)
{
    ASSERT(op->ops == &scan_ops);
    ((struct scan_state *)op->state)->reverse = true;
}

void engine__op_scan_access(struct engine_op *op,
                            const struct engine_access *access)
{
    ASSERT(op->ops == &scan_ops);
    ((struct scan_state *)op->state)->access = access;
}

void engine__op_scan_zones(struct engine_op *op,
                           const struct engine_zone_plan *zones)
{
    ASSERT(op->ops == &scan_ops);
    ((struct scan_state *)op->state)->zones = zones;
}

/* ---- rows of expressions (VALUES) ---- */

struct values_state {
    struct engine_expr **exprs; /* row_count * column_count */
    size_t row_count;
    size_t row; /* next row to produce */
};

static int values_open(struct engine_op *op, struct engine_exec *exec)
{
    struct values_state *state = op->state;

    (void)exec;
    state->row = 0;
    return 0;
}

/* Evaluates one VALUES row into row position out_row of the output. */
static int values_row(struct engine_op *op, struct engine_exec *exec,
                      size_t row, uint32_t out_row)
{
    struct values_state *state = op->state;
    struct engine_batch one = {.count = 1, .selected = 1};
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};

    for (size_t c = 0; c < op->column_count; c++) {
        struct engine_expr *expr = state->exprs[row * op->column_count + c];
        const struct engine_vector *result;
        int rc = engine__expr_eval(expr, &eval, &one, &result);

        if (rc != 0) {
            return rc;
        }
        rc = engine__vector_set(&op->batch.columns[c], out_row, out_row,
                                engine__vector_get(result, 0));
        if (rc != 0) {
            return engine__error(exec, rc, "out of memory");
        }
    }
    return 0;
}

static int values_next(struct engine_op *op, struct engine_exec *exec,
                       struct engine_batch **out)
{
    struct values_state *state = op->state;
    uint32_t most = exec->row_at_a_time ? 1 : ENGINE__BATCH_SIZE;
    uint32_t n = 0;

    engine__arena_reset(&op->arena);
    for (size_t c = 0; c < op->column_count; c++) {
        op->batch.columns[c].kind = ENGINE_VECTOR_VALUES;
    }
    while (state->row < state->row_count && n < most) {
        int rc = values_row(op, exec, state->row++, n);

        if (rc != 0) {
            return rc;
        }
        n++;
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    *out = n > 0 ? &op->batch : NULL;
    return 0;
}

static const struct engine_op_ops values_ops = {
    .open = values_open,
    .next = values_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_values(struct engine_stmt *stmt,
                                    struct engine_expr **exprs,
                                    size_t row_count, size_t column_count)
{
    struct engine_op *op =
        engine__op_new(stmt, &values_ops, NULL, sizeof(struct values_state),
                       column_count, true);
    struct values_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->exprs = exprs;
    state->row_count = row_count;
    return op;
}

/* ---- materialized rows ---- */

struct rows_state {
    const struct engine_value *values;
    size_t row_count;
    size_t row;
};

static int rows_open(struct engine_op *op, struct engine_exec *exec)
{
    (void)exec;
    ((struct rows_state *)op->state)->row = 0;
    return 0;
}

static int rows_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct rows_state *state = op->state;
    size_t left = state->row_count - state->row;
    uint32_t n = 0;

    if (engine__op_reserve(op, left < ENGINE__BATCH_SIZE
                                   ? (uint32_t)left
                                   : ENGINE__BATCH_SIZE) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (; state->row < state->row_count && n < ENGINE__BATCH_SIZE; n++) {
        const struct engine_value *row =
            &state->values[state->row++ * op->column_count];

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

static const struct engine_op_ops rows_ops = {
    .open = rows_open,
    .next = rows_next,
    .destroy = engine__op_destroy_default,
};

struct engine_op *engine__op_rows(struct engine_stmt *stmt,
                                  const struct engine_value *values,
                                  size_t row_count, size_t column_count)
{
    struct engine_op *op = engine__op_new(
        stmt, &rows_ops, NULL, sizeof(struct rows_state), column_count, true);
    struct rows_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->values = values;
    state->row_count = row_count;
    return op;
}
