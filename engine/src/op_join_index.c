/* SPDX-License-Identifier: MIT
 *
 * op_join_index.c: the index nested loop join (join.h, struct
 * engine_join_lookup). Where the hash join (op_join.c) copies its whole
 * right table at each execution, this one reads only the rows each left
 * row finds through the table's rowid, UNIQUE key or index, as SQLite's
 * inner loop seeks them (where.c): for a small left side and a large
 * table, a few lookups instead of a copy of the table.
 *
 * For each left batch it evaluates the lookup's values (all of them, as
 * codeAllEqualityTerms() does, for the batch at once) and keeps them; for
 * each left row it looks the slots up (engine__access_find(): the
 * conversions and NULL rules of a single-table lookup) and lists the
 * pairs. The pairs' right columns are read from the table, then the right
 * item's own terms and the join's predicate decide which pairs stay,
 * exactly as in the hash join, whose rows for one left row also come in
 * rowid order. A LEFT join adds, after a left row's last candidate, its
 * row with NULLs on the right, kept when no pair of the row passed.
 */
#include <string.h>

#include "access.h"
#include "join.h"
#include "table.h"

/* The right "slot" of an outer join's NULL row. */
#define NULL_ROW UINT32_MAX

struct lookup_state {
    struct engine_join_spec spec;
    struct engine_join_lookup lookup;
    /* The left input. */
    struct engine_batch *left;
    uint32_t left_pos;         /* live index of the row being joined */
    bool row_started;          /* its rows were looked up */
    struct engine_value *keys; /* per left batch row: its lookup values */
    size_t key_capacity;
    struct engine_arena key_arena; /* their bytes, per left batch */
    struct engine_access_run run;  /* the current left row's slots */
    uint32_t current_left;         /* row of the last pair made */
    bool current_matched;          /* a pair of that row passed */
    /* The pairs of the output batch: left row, right slot (NULL_ROW). */
    uint32_t pair_left[ENGINE__BATCH_SIZE];
    uint32_t pair_slot[ENGINE__BATCH_SIZE];
    uint32_t selection[ENGINE__BATCH_SIZE];
    uint32_t scratch[ENGINE__BATCH_SIZE];
};

static bool keeps_left(const struct lookup_state *state)
{
    return state->spec.kind == AST_JOIN_LEFT;
}

/* ---- the left side ---- */

static int grow_keys(struct lookup_state *state, size_t need)
{
    struct engine_value *keys;

    if (need <= state->key_capacity) {
        return 0;
    }
    keys = common_realloc_array(state->keys, need, sizeof(*keys));
    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    state->keys = keys;
    state->key_capacity = need;
    return 0;
}

/* The next left batch, and the lookup values of its rows: evaluated
 * before any pair is tested (the predicate holds the same expressions and
 * evaluates them again over the pairs). */
static int next_left(struct engine_op *op, struct engine_exec *exec)
{
    struct lookup_state *state = op->state;
    const struct engine_access *access = state->lookup.access;
    size_t width = access->value_count;
    struct engine_eval eval = {.exec = exec, .arena = &state->key_arena};
    int rc = op->child->ops->next(op->child, exec, &state->left);

    state->left_pos = 0;
    state->row_started = false;
    state->current_left = UINT32_MAX;
    if (rc != 0 || state->left == NULL) {
        return rc;
    }
    engine__arena_reset(&state->key_arena);
    if (grow_keys(state, (size_t)state->left->count * width) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < width; k++) {
        const struct engine_vector *values;

        rc = engine__expr_eval(access->values[k].expr, &eval, state->left,
                               &values);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t i = 0; i < state->left->selected; i++) {
            uint32_t row = engine__batch_row(state->left, i);

            state->keys[row * width + k] = engine__vector_get(values, row);
        }
    }
    return 0;
}

/* Every live slot, in rowid order: the candidates when the key planned is
 * no longer the table's (a DROP INDEX between two steps). */
static int find_all(struct lookup_state *state)
{
    struct engine_slot_list *found = &state->run.found;
    size_t cursor = 0;

    for (;;) {
        uint32_t n;
        size_t need = found->count + ENGINE__BATCH_SIZE;

        if (need > found->capacity) {
            uint32_t *more =
                common_realloc_array(found->slots, need, sizeof(*more));

            if (more == NULL) {
                return COMMON_ENOMEM;
            }
            found->slots = more;
            found->capacity = need;
        }
        n = engine__table_scan(state->lookup.table, &cursor,
                               found->slots + found->count, ENGINE__BATCH_SIZE,
                               false);
        if (n == UINT32_MAX) {
            return COMMON_ENOMEM;
        }
        if (n == 0) {
            return 0;
        }
        found->count += n;
    }
}

/* Looks up the rows of left row `row`. */
static int start_row(struct lookup_state *state, struct engine_exec *exec,
                     uint32_t row)
{
    const struct engine_access *access = state->lookup.access;
    struct engine_value values[ENGINE__ACCESS_KEY_MAX];
    int rc;

    memcpy(values, &state->keys[(size_t)row * access->value_count],
           access->value_count * sizeof(*values));
    state->lookup.table->join_probes++;
    rc = engine__access_find(access, &state->run, state->lookup.table, values,
                             &state->key_arena);
    if (rc == 0 && state->run.scan_all) {
        rc = find_all(state);
    }
    state->row_started = true;
    return rc == 0 ? 0 : engine__error(exec, rc, "out of memory");
}

/* The current left row's next slot still live (a statement run between
 * two steps of this one may have deleted some), or NULL_ROW. */
static uint32_t next_slot(struct lookup_state *state)
{
    const struct engine_table *table = state->lookup.table;
    struct engine_access_run *run = &state->run;

    while (run->found_next < run->found.count) {
        uint32_t slot = run->found.slots[run->found_next++];

        if (slot < table->slot_count && !table->deleted[slot]) {
            return slot;
        }
    }
    return NULL_ROW;
}

/* Lists pairs of the current left batch, up to cap, into pair_left and
 * pair_slot; a LEFT join's NULL row follows a left row's last pair. When
 * the batch fills, the row's listing goes on at the next call. */
static int make_pairs(struct lookup_state *state, struct engine_exec *exec,
                      uint32_t cap, uint32_t *count)
{
    uint32_t n = 0;
    uint32_t reserve = keeps_left(state) ? 1 : 0;

    *count = 0;
    while (state->left_pos < state->left->selected) {
        uint32_t row = engine__batch_row(state->left, state->left_pos);
        uint32_t slot;
        int rc = state->row_started ? 0 : start_row(state, exec, row);

        if (rc != 0) {
            return rc;
        }
        for (;;) {
            if (n + reserve >= cap) {
                *count = n;
                return 0;
            }
            slot = next_slot(state);
            if (slot == NULL_ROW) {
                break;
            }
            state->pair_left[n] = row;
            state->pair_slot[n++] = slot;
        }
        if (reserve > 0) {
            state->pair_left[n] = row;
            state->pair_slot[n++] = NULL_ROW;
        }
        state->left_pos++;
        state->row_started = false;
    }
    *count = n;
    return 0;
}

/* ---- the pairs ---- */

/* Writes the pairs' values into the output batch: the left row's, then
 * the right row's read from the table (NULLs for NULL_ROW). */
static void gather(struct engine_op *op, uint32_t n)
{
    struct lookup_state *state = op->state;
    const struct engine_table *table = state->lookup.table;
    size_t lw = state->spec.left_width;
    size_t rw = state->spec.right_width;
    struct engine_vector *out = op->batch.columns;

    for (size_t c = 0; c < lw; c++) {
        const struct engine_vector *in = &state->left->columns[c];

        for (uint32_t i = 0; i < n; i++) {
            struct engine_value v = engine__vector_get(in, state->pair_left[i]);

            out[c].data.values[i] = v;
            out[c].nulls[i] = v.type == ENGINE_NULL;
        }
    }
    for (size_t c = 0; c < rw; c++) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t slot = state->pair_slot[i];
            struct engine_value v = slot == NULL_ROW ? engine__value_null()
                                    : c + 1 == rw
                                        ? engine__value_int(table->rowids[slot])
                                        : engine__table_get(table, slot, c);

            out[lw + c].data.values[i] = v;
            out[lw + c].nulls[i] = v.type == ENGINE_NULL;
        }
    }
    op->batch.count = n;
}

/* Keeps, of rows[0..*count), those where e is true over batch. */
static int keep_true(struct engine_expr *e, struct engine_eval *eval,
                     struct engine_batch *batch, uint32_t *rows,
                     uint32_t *count)
{
    const struct engine_vector *truths;
    uint32_t n = 0;
    int rc;

    batch->selection = rows;
    batch->selected = *count;
    rc = engine__expr_eval(e, eval, batch, &truths);
    if (rc != 0) {
        return rc;
    }
    for (uint32_t i = 0; i < *count; i++) {
        struct engine_value v = engine__vector_get(truths, rows[i]);

        if (engine__value_truth(&v) == 1) {
            rows[n++] = rows[i];
        }
    }
    *count = n;
    return 0;
}

/* Tests the right item's own terms (over its columns alone), then the
 * predicate, on the pairs (not the NULL rows): the passing ones end in
 * state->scratch, their count in *passed. */
static int test_pairs(struct engine_op *op, struct engine_exec *exec,
                      uint32_t n, uint32_t *passed)
{
    struct lookup_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    struct engine_batch batch = op->batch;
    struct engine_batch right = op->batch;
    uint32_t count = 0;
    int rc = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (state->pair_slot[i] != NULL_ROW) {
            state->scratch[count++] = i;
        }
    }
    right.columns = op->batch.columns + state->spec.left_width;
    right.column_count = state->spec.right_width;
    if (state->lookup.filter != NULL && count > 0) {
        rc = keep_true(state->lookup.filter, &eval, &right, state->scratch,
                       &count);
    }
    for (size_t t = 0; rc == 0 && t < state->spec.predicate_count && count > 0;
         t++) {
        rc = keep_true(state->spec.predicate[t], &eval, &batch, state->scratch,
                       &count);
    }
    *passed = count;
    return rc;
}

/* The output selection: the pairs that passed, and each NULL row whose
 * left row had no pair pass. */
static uint32_t select_output(struct lookup_state *state, uint32_t n,
                              uint32_t passed)
{
    uint32_t out = 0;
    uint32_t p = 0;

    for (uint32_t i = 0; i < n; i++) {
        bool pass = p < passed && state->scratch[p] == i;

        if (state->pair_left[i] != state->current_left) {
            state->current_left = state->pair_left[i];
            state->current_matched = false;
        }
        if (pass) {
            p++;
            state->current_matched = true;
            state->selection[out++] = i;
        } else if (state->pair_slot[i] == NULL_ROW && !state->current_matched) {
            state->selection[out++] = i;
        }
    }
    return out;
}

static int emit(struct engine_op *op, struct engine_exec *exec, uint32_t n,
                struct engine_batch **out)
{
    struct lookup_state *state = op->state;
    uint32_t passed = 0;
    int rc;

    if (engine__op_reserve(op, n) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    gather(op, n);
    rc = test_pairs(op, exec, n, &passed);
    if (rc != 0) {
        return rc;
    }
    op->batch.selection = state->selection;
    op->batch.selected = select_output(state, n, passed);
    *out = op->batch.selected > 0 ? &op->batch : NULL;
    return 0;
}

static int lookup_next(struct engine_op *op, struct engine_exec *exec,
                       struct engine_batch **out)
{
    struct lookup_state *state = op->state;
    /* One left row's pairs at a time when the sources give one row at a
     * time (engine_exec.row_at_a_time), as SQLite's loop meets them. */
    uint32_t cap = !exec->row_at_a_time ? ENGINE__BATCH_SIZE
                   : keeps_left(state)  ? 2
                                        : 1;
    int rc = 0;

    *out = NULL;
    while (rc == 0 && *out == NULL) {
        uint32_t n;

        engine__arena_reset(&op->arena);
        if (state->left == NULL || state->left_pos >= state->left->selected) {
            rc = next_left(op, exec);
            if (rc != 0 || state->left == NULL) {
                return rc;
            }
            continue;
        }
        rc = make_pairs(state, exec, cap, &n);
        if (rc == 0 && n > 0) {
            rc = emit(op, exec, n, out);
        }
    }
    return rc;
}

static int lookup_open(struct engine_op *op, struct engine_exec *exec)
{
    struct lookup_state *state = op->state;

    state->left = NULL;
    state->row_started = false;
    state->current_left = UINT32_MAX;
    engine__access_reset(NULL, &state->run);
    return op->child->ops->open(op->child, exec);
}

static void lookup_destroy(struct engine_op *op)
{
    struct lookup_state *state = op->state;

    common_free(state->keys);
    engine__access_close(&state->run);
    engine__arena_close(&state->key_arena);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops lookup_ops = {
    .open = lookup_open,
    .next = lookup_next,
    .destroy = lookup_destroy,
};

struct engine_op *engine__op_join_index(struct engine_stmt *stmt,
                                        struct engine_op *left,
                                        const struct engine_join_lookup *lookup,
                                        const struct engine_join_spec *spec)
{
    size_t width = spec->left_width + spec->right_width;
    struct engine_op *op = engine__op_new(
        stmt, &lookup_ops, left, sizeof(struct lookup_state), width, true);
    struct lookup_state *state;

    if (op == NULL) {
        return NULL;
    }
    ASSERT(spec->kind == AST_JOIN_INNER || spec->kind == AST_JOIN_LEFT);
    ASSERT(spec->merged_count == 0);
    ASSERT(left->column_count == spec->left_width);
    ASSERT(spec->right_width == lookup->table->column_count + 1);
    ASSERT(lookup->access->value_count <= ENGINE__ACCESS_KEY_MAX);
    state = op->state;
    state->spec = *spec;
    state->lookup = *lookup;
    engine__arena_init(&state->key_arena);
    return op;
}

uint64_t engine__join_probes(const struct engine_db *db, const char *name)
{
    const struct engine_table *table = engine__catalog_find(db, name);

    return table != NULL ? table->join_probes : 0;
}
