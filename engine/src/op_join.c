/* SPDX-License-Identifier: MIT
 *
 * op_join.c: the join operator (join.h). At the first batch of an
 * execution it reads its right input whole into its own rows (bytes
 * copied) and, when it has equality keys, buckets them by the hash of the
 * key as the comparison sees it. It then streams the left input: for
 * each left row it lists the candidate right rows (its bucket, or every
 * row), gathers the pairs into its output batch, and tests the predicate
 * on all of them at once. An outer join adds, after a left row's last
 * candidate, a row with NULLs for the right (kept when no pair of that
 * row passed), and a RIGHT or FULL join ends with the right rows no pair
 * used, with NULLs for the left. So the rows come out in the order of
 * SQLite's nested loop over the same inputs (where.c, including the
 * "RIGHT JOIN" tail loop of 3.39).
 */
#include <string.h>

#include "expr_int.h"
#include "join.h"

#define NO_ROW SIZE_MAX

struct join_state {
    struct engine_join_spec spec;
    struct engine_op *right;
    /* The right input, materialized. */
    bool built;
    struct engine_value *rows; /* row_count * right_width, row-major */
    size_t row_count;
    size_t row_capacity;
    struct engine_arena rows_arena; /* their bytes */
    uint64_t *hashes;               /* per row: the key's hash */
    size_t *next;                   /* per row: next row of its bucket+1 */
    size_t *buckets;                /* first row of the bucket + 1; 0 none */
    size_t bucket_mask;
    uint8_t *right_matched; /* RIGHT/FULL: a pair of the row passed */
    /* The left input. */
    struct engine_batch *left;
    uint32_t left_pos;     /* live index of the row being joined */
    bool row_started;      /* its candidates are being listed */
    size_t cursor;         /* its next candidate (bucket chain: row+1) */
    uint64_t row_hash;     /* its key's hash */
    uint32_t current_left; /* row of the last pair made; UINT32_MAX */
    bool current_matched;  /* a pair of that row passed */
    bool left_done;        /* the left input ended */
    size_t right_rest;     /* RIGHT/FULL tail: next right row to check */
    uint64_t left_hashes[ENGINE__BATCH_SIZE]; /* per left row */
    uint8_t left_null[ENGINE__BATCH_SIZE];    /* its key has a NULL */
    /* The pairs of the output batch: left row, right row (NO_ROW: the
     * NULL row of an outer join). */
    uint32_t pair_left[ENGINE__BATCH_SIZE];
    size_t pair_right[ENGINE__BATCH_SIZE];
    uint32_t selection[ENGINE__BATCH_SIZE];
    uint32_t scratch[ENGINE__BATCH_SIZE];
    struct engine_arena key_arena; /* key conversions, per batch */
};

static bool keeps_left(const struct join_state *state)
{
    return state->spec.kind == AST_JOIN_LEFT ||
           state->spec.kind == AST_JOIN_FULL;
}

static bool keeps_right(const struct join_state *state)
{
    return state->spec.kind == AST_JOIN_RIGHT ||
           state->spec.kind == AST_JOIN_FULL;
}

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

int engine__join_key_hash(const struct engine_expr *compare, int arg,
                          struct engine_value v, struct engine_arena *arena,
                          uint64_t *hash, bool *null)
{
    struct engine_value other = engine__value_null();
    int rc = arg == 0
                 ? engine__expr_compare_prepare(compare, &v, &other, arena)
                 : engine__expr_compare_prepare(compare, &other, &v, arena);

    if (rc != 0) {
        return rc;
    }
    *null = v.type == ENGINE_NULL;
    if (!*null) {
        *hash = hash_mix(*hash, engine__value_hash(&v, compare->collation));
    }
    return 0;
}

/* The hash of row's key over the key vectors of one side (side 0: the
 * left), each value converted as its comparison converts it; *null when a
 * key is NULL (it equals nothing). */
static int key_hash(const struct join_state *state,
                    const struct engine_vector **vectors, uint32_t row,
                    int side, struct engine_arena *arena, uint64_t *hash,
                    bool *null)
{
    uint64_t h = 0;

    *null = false;
    for (size_t k = 0; k < state->spec.key_count; k++) {
        const struct engine_join_key *key = &state->spec.keys[k];
        int arg = key->swapped ? 1 - side : side;
        int rc = engine__join_key_hash(key->compare, arg,
                                       engine__vector_get(vectors[k], row),
                                       arena, &h, null);

        if (rc != 0 || *null) {
            return rc;
        }
    }
    *hash = h;
    return 0;
}

/* Evaluates one side's key expressions over batch into vectors. */
static int eval_keys(const struct join_state *state, int side,
                     struct engine_eval *eval, const struct engine_batch *batch,
                     const struct engine_vector **vectors)
{
    for (size_t k = 0; k < state->spec.key_count; k++) {
        struct engine_expr *e =
            side == 0 ? state->spec.keys[k].left : state->spec.keys[k].right;
        int rc = engine__expr_eval(e, eval, batch, &vectors[k]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int grow_rows(struct join_state *state, size_t more)
{
    size_t width = state->spec.right_width;
    size_t need = state->row_count + more;
    size_t capacity = state->row_capacity > 0 ? state->row_capacity : 64;
    struct engine_value *rows;
    uint64_t *hashes;

    if (need <= state->row_capacity) {
        return 0;
    }
    while (capacity < need) {
        capacity *= 2;
    }
    rows = common_realloc_array(state->rows, capacity * (width + 1),
                                sizeof(*rows));
    if (rows == NULL) {
        return COMMON_ENOMEM;
    }
    state->rows = rows;
    hashes = common_realloc_array(state->hashes, capacity, sizeof(*hashes));
    if (hashes == NULL) {
        return COMMON_ENOMEM;
    }
    state->hashes = hashes;
    state->row_capacity = capacity;
    return 0;
}

/* Appends the live rows of one right batch, with their key hashes. A
 * row keeps one more value after its columns: INTEGER 1 when its key can
 * match, NULL when the key has a NULL (it equals nothing). */
static int keep_batch(struct join_state *state, struct engine_exec *exec,
                      const struct engine_batch *batch)
{
    size_t width = state->spec.right_width;
    struct engine_eval eval = {.exec = exec, .arena = &state->key_arena};
    const struct engine_vector *keys[ENGINE__JOIN_KEY_MAX];
    int rc = grow_rows(state, batch->selected);

    if (rc != 0) {
        return engine__error(exec, rc, "out of memory");
    }
    engine__arena_reset(&state->key_arena);
    rc = eval_keys(state, 1, &eval, batch, keys);
    for (uint32_t i = 0; rc == 0 && i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value *out = &state->rows[state->row_count * (width + 1)];
        bool null = false;

        for (size_t c = 0; rc == 0 && c < width; c++) {
            out[c] = engine__vector_get(&batch->columns[c], row);
            rc = engine__value_keep(&state->rows_arena, &out[c]);
        }
        if (rc == 0 && state->spec.key_count > 0) {
            rc = key_hash(state, keys, row, 1, &state->key_arena,
                          &state->hashes[state->row_count], &null);
        }
        out[width] = null ? engine__value_null() : engine__value_int(1);
        state->row_count++;
    }
    return rc == 0 ? 0 : engine__error(exec, rc, "out of memory");
}

/* Chains the rows of each bucket in row order (built backwards, each row
 * pushed in front). */
static int build_buckets(struct join_state *state)
{
    size_t width = state->spec.right_width;
    size_t count = 16;

    while (count < 2 * state->row_count) {
        count *= 2;
    }
    state->buckets = common_calloc(count, sizeof(*state->buckets));
    state->next = common_calloc(state->row_count + 1, sizeof(*state->next));
    if (state->buckets == NULL || state->next == NULL) {
        return COMMON_ENOMEM;
    }
    state->bucket_mask = count - 1;
    for (size_t r = state->row_count; r-- > 0;) {
        size_t b = (size_t)state->hashes[r] & state->bucket_mask;

        if (state->rows[r * (width + 1) + width].type == ENGINE_NULL) {
            continue;
        }
        state->next[r] = state->buckets[b];
        state->buckets[b] = r + 1;
    }
    return 0;
}

static void forget_right(struct join_state *state)
{
    common_free(state->buckets);
    common_free(state->next);
    common_free(state->right_matched);
    state->buckets = NULL;
    state->next = NULL;
    state->right_matched = NULL;
    state->row_count = 0;
    engine__arena_reset(&state->rows_arena);
    state->built = false;
}

/* Reads the right input whole. */
static int build(struct engine_op *op, struct engine_exec *exec)
{
    struct join_state *state = op->state;
    struct engine_op *right = state->right;
    int rc = right->ops->open(right, exec);

    while (rc == 0) {
        struct engine_batch *batch;

        rc = right->ops->next(right, exec, &batch);
        if (rc != 0 || batch == NULL) {
            break;
        }
        rc = keep_batch(state, exec, batch);
    }
    if (rc != 0) {
        return rc;
    }
    if (state->spec.key_count > 0) {
        rc = build_buckets(state);
    }
    if (rc == 0 && keeps_right(state)) {
        state->right_matched = common_calloc(state->row_count + 1, 1);
        rc = state->right_matched == NULL ? COMMON_ENOMEM : 0;
    }
    if (rc != 0) {
        return engine__error(exec, rc, "out of memory");
    }
    state->built = true;
    return 0;
}

/* ---- the left side ---- */

static int next_left(struct engine_op *op, struct engine_exec *exec)
{
    struct join_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &state->key_arena};
    const struct engine_vector *keys[ENGINE__JOIN_KEY_MAX];
    int rc = op->child->ops->next(op->child, exec, &state->left);

    state->left_pos = 0;
    state->row_started = false;
    state->current_left = UINT32_MAX;
    if (rc != 0 || state->left == NULL || state->spec.key_count == 0) {
        return rc;
    }
    engine__arena_reset(&state->key_arena);
    rc = eval_keys(state, 0, &eval, state->left, keys);
    for (uint32_t i = 0; rc == 0 && i < state->left->selected; i++) {
        uint32_t row = engine__batch_row(state->left, i);
        bool null;

        rc = key_hash(state, keys, row, 0, &state->key_arena,
                      &state->left_hashes[row], &null);
        state->left_null[row] = null;
    }
    return rc == 0 ? 0 : engine__error(exec, rc, "out of memory");
}

/* Starts listing the candidates of left row `row`. */
static void start_row(struct join_state *state, uint32_t row)
{
    state->row_started = true;
    if (state->spec.key_count == 0) {
        state->cursor = 0;
        return;
    }
    state->row_hash = state->left_hashes[row];
    state->cursor =
        state->left_null[row]
            ? 0
            : state->buckets[(size_t)state->row_hash & state->bucket_mask];
}

/* The next candidate right row of the current left row, or NO_ROW. */
static size_t next_candidate(struct join_state *state)
{
    if (state->spec.key_count == 0) {
        return state->cursor < state->row_count ? state->cursor++ : NO_ROW;
    }
    while (state->cursor != 0) {
        size_t r = state->cursor - 1;

        state->cursor = state->next[r];
        if (state->hashes[r] == state->row_hash) {
            return r;
        }
    }
    return NO_ROW;
}

/* Lists pairs of the current left batch, up to cap, into pair_left and
 * pair_right; an outer join's NULL row follows a left row's last pair.
 * When the batch fills, the row's listing goes on at the next call. */
static uint32_t make_pairs(struct join_state *state, uint32_t cap)
{
    uint32_t n = 0;
    uint32_t reserve = keeps_left(state) ? 1 : 0;

    while (state->left_pos < state->left->selected) {
        uint32_t row = engine__batch_row(state->left, state->left_pos);
        size_t r;

        if (!state->row_started) {
            start_row(state, row);
        }
        for (;;) {
            if (n + reserve >= cap) {
                return n;
            }
            r = next_candidate(state);
            if (r == NO_ROW) {
                break;
            }
            state->pair_left[n] = row;
            state->pair_right[n++] = r;
        }
        if (reserve > 0) {
            state->pair_left[n] = row;
            state->pair_right[n++] = NO_ROW;
        }
        state->left_pos++;
        state->row_started = false;
    }
    return n;
}

/* Writes the pairs' values into the output batch: the left row's, the
 * right row's (NULLs for NO_ROW), and the merged USING columns. */
static void gather(struct engine_op *op, uint32_t n)
{
    struct join_state *state = op->state;
    size_t lw = state->spec.left_width;
    size_t rw = state->spec.right_width;
    struct engine_vector *out = op->batch.columns;

    for (size_t c = 0; c < lw; c++) {
        /* The RIGHT/FULL tail runs after the left input ended. */
        const struct engine_vector *in =
            state->left != NULL ? &state->left->columns[c] : NULL;

        for (uint32_t i = 0; i < n; i++) {
            struct engine_value v =
                state->pair_left[i] == UINT32_MAX
                    ? engine__value_null()
                    : engine__vector_get(in, state->pair_left[i]);

            out[c].data.values[i] = v;
            out[c].nulls[i] = v.type == ENGINE_NULL;
        }
    }
    for (size_t c = 0; c < rw; c++) {
        for (uint32_t i = 0; i < n; i++) {
            size_t r = state->pair_right[i];
            struct engine_value v = r == NO_ROW ? engine__value_null()
                                                : state->rows[r * (rw + 1) + c];

            out[lw + c].data.values[i] = v;
            out[lw + c].nulls[i] = v.type == ENGINE_NULL;
        }
    }
    for (size_t m = 0; m < state->spec.merged_count; m++) {
        struct engine_vector *dst = &out[lw + rw + m];
        const struct engine_vector *a = &out[state->spec.merged[2 * m]];
        const struct engine_vector *b = &out[state->spec.merged[2 * m + 1]];

        for (uint32_t i = 0; i < n; i++) {
            dst->data.values[i] =
                a->nulls[i] ? b->data.values[i] : a->data.values[i];
            dst->nulls[i] = a->nulls[i] && b->nulls[i];
        }
    }
    op->batch.count = n;
}

static uint32_t select_true(const struct engine_vector *truths,
                            const uint32_t *rows, uint32_t count, uint32_t *out)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < count; i++) {
        struct engine_value v = engine__vector_get(truths, rows[i]);

        if (engine__value_truth(&v) == 1) {
            out[n++] = rows[i];
        }
    }
    return n;
}

/* Tests the predicate on the pairs (not the NULL rows): the passing ones
 * end in state->scratch, their count returned in *passed. */
static int test_pairs(struct engine_op *op, struct engine_exec *exec,
                      uint32_t n, uint32_t *passed)
{
    struct join_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    struct engine_batch batch = op->batch;
    uint32_t count = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (state->pair_right[i] != NO_ROW) {
            state->scratch[count++] = i;
        }
    }
    for (size_t t = 0; t < state->spec.predicate_count && count > 0; t++) {
        const struct engine_vector *truths;
        int rc;

        batch.selection = state->scratch;
        batch.selected = count;
        rc =
            engine__expr_eval(state->spec.predicate[t], &eval, &batch, &truths);
        if (rc != 0) {
            return rc;
        }
        count = select_true(truths, state->scratch, count, state->scratch);
    }
    *passed = count;
    return 0;
}

/* The output selection: the pairs that passed, and each NULL row whose
 * left row had no pair pass. */
static uint32_t select_output(struct join_state *state, uint32_t n,
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
            if (state->right_matched != NULL) {
                state->right_matched[state->pair_right[i]] = 1;
            }
        } else if (state->pair_right[i] == NO_ROW && !state->current_matched) {
            state->selection[out++] = i;
        }
    }
    return out;
}

/* RIGHT and FULL: the right rows no pair used, with NULLs on the left. */
static uint32_t make_rest(struct join_state *state, uint32_t cap)
{
    uint32_t n = 0;

    while (n < cap && state->right_rest < state->row_count) {
        size_t r = state->right_rest++;

        if (!state->right_matched[r]) {
            state->pair_left[n] = UINT32_MAX;
            state->pair_right[n++] = r;
        }
    }
    return n;
}

static int emit(struct engine_op *op, struct engine_exec *exec, uint32_t n,
                bool rest, struct engine_batch **out)
{
    struct join_state *state = op->state;
    uint32_t passed = 0;
    int rc;

    if (engine__op_reserve(op, n) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    gather(op, n);
    op->batch.selection = state->selection;
    if (rest) {
        for (uint32_t i = 0; i < n; i++) {
            state->selection[i] = i;
        }
        op->batch.selected = n;
    } else {
        rc = test_pairs(op, exec, n, &passed);
        if (rc != 0) {
            return rc;
        }
        op->batch.selected = select_output(state, n, passed);
    }
    *out = op->batch.selected > 0 ? &op->batch : NULL;
    return 0;
}

static int join_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct join_state *state = op->state;
    int rc = state->built ? 0 : build(op, exec);

    *out = NULL;
    while (rc == 0 && *out == NULL) {
        uint32_t n;

        engine__arena_reset(&op->arena);
        if (state->left_done) {
            if (!keeps_right(state) || state->right_rest >= state->row_count) {
                return 0;
            }
            n = make_rest(state, ENGINE__BATCH_SIZE);
            rc = n > 0 ? emit(op, exec, n, true, out) : 0;
            continue;
        }
        if (state->left == NULL || state->left_pos >= state->left->selected) {
            rc = next_left(op, exec);
            state->left_done = rc == 0 && state->left == NULL;
            continue;
        }
        n = make_pairs(state, ENGINE__BATCH_SIZE);
        rc = n > 0 ? emit(op, exec, n, false, out) : 0;
    }
    return rc;
}

static int join_open(struct engine_op *op, struct engine_exec *exec)
{
    struct join_state *state = op->state;

    forget_right(state);
    state->left = NULL;
    state->left_done = false;
    state->right_rest = 0;
    state->current_left = UINT32_MAX;
    return op->child->ops->open(op->child, exec);
}

static void join_destroy(struct engine_op *op)
{
    struct join_state *state = op->state;

    forget_right(state);
    common_free(state->rows);
    common_free(state->hashes);
    engine__arena_close(&state->rows_arena);
    engine__arena_close(&state->key_arena);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops join_ops = {
    .open = join_open,
    .next = join_next,
    .destroy = join_destroy,
};

struct engine_op *engine__op_join(struct engine_stmt *stmt,
                                  struct engine_op *left,
                                  struct engine_op *right,
                                  const struct engine_join_spec *spec)
{
    size_t width = spec->left_width + spec->right_width + spec->merged_count;
    struct engine_op *op = engine__op_new(
        stmt, &join_ops, left, sizeof(struct join_state), width, true);
    struct join_state *state;

    if (op == NULL) {
        return NULL;
    }
    ASSERT(spec->key_count <= ENGINE__JOIN_KEY_MAX);
    ASSERT(left->column_count == spec->left_width);
    ASSERT(right->column_count == spec->right_width);
    state = op->state;
    state->spec = *spec;
    state->right = right;
    engine__arena_init(&state->rows_arena);
    engine__arena_init(&state->key_arena);
    return op;
}
