/* SPDX-License-Identifier: MIT
 *
 * op_aggregate.c: hash aggregation (GROUP BY and aggregate functions).
 *
 * Groups are found by their key values in a rowset (rowset.h: equal under
 * each key's collation, NULLs equal), numbered in first-seen order. Each
 * group holds one state block per aggregate (func.h), a distinct-value set
 * per aggregate(DISTINCT ...), and the values of the "bare" columns (and,
 * with a min() or max(), of the keys) at the row SQLite last loaded them
 * from. SQLite sorts for GROUP BY, so its groups come out in key order:
 * with sort_groups the groups are sorted by key before they are emitted.
 * An aggregate query without GROUP BY returns one row even over no input.
 */
#include <string.h>

#include "engine_int.h"
#include "expr_int.h"
#include "rowset.h"

#define STATE_ALIGN 16

struct aggregate_state {
    struct engine_expr **keys;
    size_t key_count;
    const struct engine_aggregate_spec *specs;
    size_t spec_count;
    struct engine_expr **bare;
    size_t bare_count;
    bool sort_groups;
    const bool *key_descending;        /* per key, or NULL: all ascending */
    enum engine_collation *collations; /* of the keys */
    size_t *offsets;   /* of each spec's state in a group's block */
    size_t block_size; /* bytes of one group's states */
    /* per run */
    struct engine_rowset groups;
    bool groups_ready;
    unsigned char *blocks;            /* group_capacity * block_size */
    struct engine_value *bare_values; /* group_capacity * bare_count */
    struct engine_value *key_values;  /* group_capacity * key_count: the
                                         keys at the loaded row */
    bool *hits; /* group_capacity: SQLite's regHit, "do not load" */
    struct engine_rowset **distinct; /* group_capacity * spec_count */
    size_t group_capacity;
    size_t ready_groups;   /* groups whose states are set up */
    ptrdiff_t minmax_spec; /* the last one-argument min()/max(), or -1 */
    bool filter_sets_hit;  /* a FILTER copies regAcc into regHit */
    bool single_loaded;    /* no GROUP BY: bare columns were loaded */
    struct engine_arena bare_bytes;
    size_t *order;
    size_t emitted;
    bool done;
};

static struct aggregate_state *op_state(const struct engine_op *op)
{
    return op->state;
}

static void *group_state(struct aggregate_state *s, size_t group, size_t spec)
{
    return s->blocks + group * s->block_size + s->offsets[spec];
}

static void release_groups(struct aggregate_state *s)
{
    for (size_t g = 0; s->groups_ready && g < s->ready_groups; g++) {
        for (size_t i = 0; i < s->spec_count; i++) {
            struct engine_rowset *set = s->distinct[g * s->spec_count + i];

            if (s->specs[i].def != NULL && s->specs[i].def->destroy != NULL) {
                s->specs[i].def->destroy(group_state(s, g, i));
            }
            if (set != NULL) {
                engine__rowset_close(set);
                common_free(set);
            }
        }
    }
    if (s->groups_ready) {
        engine__rowset_close(&s->groups);
    }
    common_free(s->blocks);
    common_free(s->bare_values);
    common_free(s->key_values);
    common_free(s->hits);
    common_free(s->distinct);
    common_free(s->order);
    engine__arena_close(&s->bare_bytes);
    s->blocks = NULL;
    s->bare_values = NULL;
    s->key_values = NULL;
    s->hits = NULL;
    s->distinct = NULL;
    s->order = NULL;
    s->group_capacity = 0;
    s->ready_groups = 0;
    s->groups_ready = false;
}

static int aggregate_open(struct engine_op *op, struct engine_exec *exec)
{
    struct aggregate_state *s = op->state;

    release_groups(s);
    engine__rowset_init(&s->groups, s->key_count, s->collations);
    engine__arena_init(&s->bare_bytes);
    s->groups_ready = true;
    s->emitted = 0;
    s->done = false;
    s->single_loaded = false;
    return op->child->ops->open(op->child, exec);
}

static int grow_groups(struct aggregate_state *s)
{
    size_t capacity = s->group_capacity == 0 ? 64 : s->group_capacity * 2;
    unsigned char *blocks =
        common_realloc_array(s->blocks, capacity, s->block_size + 1);
    struct engine_value *bare;
    struct engine_value *keys;
    bool *hits;
    struct engine_rowset **distinct;

    if (blocks == NULL) {
        return COMMON_ENOMEM;
    }
    s->blocks = blocks;
    bare = common_realloc_array(s->bare_values, capacity * s->bare_count + 1,
                                sizeof(*bare));
    if (bare == NULL) {
        return COMMON_ENOMEM;
    }
    s->bare_values = bare;
    keys = common_realloc_array(s->key_values, capacity * s->key_count + 1,
                                sizeof(*keys));
    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    s->key_values = keys;
    hits = common_realloc_array(s->hits, capacity + 1, sizeof(*hits));
    if (hits == NULL) {
        return COMMON_ENOMEM;
    }
    s->hits = hits;
    distinct = common_realloc_array(s->distinct, capacity * s->spec_count + 1,
                                    sizeof(*distinct));
    if (distinct == NULL) {
        return COMMON_ENOMEM;
    }
    s->distinct = distinct;
    s->group_capacity = capacity;
    return 0;
}

/* Sets up the states of a new group g. */
static int new_group(struct aggregate_state *s, size_t g)
{
    if (g == s->group_capacity && grow_groups(s) != 0) {
        return COMMON_ENOMEM;
    }
    memset(s->blocks + g * s->block_size, 0, s->block_size);
    for (size_t i = 0; i < s->spec_count; i++) {
        s->distinct[g * s->spec_count + i] = NULL;
        if (s->specs[i].def != NULL) {
            s->specs[i].def->init(group_state(s, g, i));
        }
    }
    for (size_t b = 0; b < s->bare_count; b++) {
        s->bare_values[g * s->bare_count + b] = engine__value_null();
    }
    for (size_t k = 0; k < s->key_count; k++) {
        s->key_values[g * s->key_count + k] = engine__value_null();
    }
    s->hits[g] = false;
    s->ready_groups = g + 1;
    return 0;
}

/* Vectors of one input batch: keys, each spec's args and filter, bare. */
struct batch_inputs {
    const struct engine_vector **keys;
    const struct engine_vector ***args; /* per spec */
    const struct engine_vector **filters;
    const struct engine_vector **bare;
};

static int eval_list(struct engine_expr **exprs, size_t count,
                     struct engine_eval *eval, const struct engine_batch *in,
                     const struct engine_vector **out)
{
    for (size_t i = 0; i < count; i++) {
        int rc = engine__expr_eval(exprs[i], eval, in, &out[i]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* The rows of in whose FILTER value is true, as a batch over the same
 * columns; NULL on out of memory. */
static struct engine_batch *filtered_batch(struct engine_op *op,
                                           const struct engine_batch *in,
                                           const struct engine_vector *filter)
{
    struct engine_batch *b = engine__arena_alloc(&op->arena, sizeof(*b));
    uint32_t *rows =
        engine__arena_alloc(&op->arena, (in->selected + 1) * sizeof(*rows));
    uint32_t n = 0;

    if (b == NULL || rows == NULL) {
        return NULL;
    }
    for (uint32_t i = 0; i < in->selected; i++) {
        uint32_t row = engine__batch_row(in, i);
        struct engine_value truth = engine__vector_get(filter, row);

        if (engine__value_truth(&truth) == 1) {
            rows[n++] = row;
        }
    }
    *b = *in;
    b->selection = rows;
    b->selected = n;
    return b;
}

/* Evaluates aggregate i's FILTER, then its arguments on the rows the
 * FILTER keeps only: SQLite tests the FILTER first and jumps over the
 * arguments' code (select.c updateAccumulator(), OP_IfNot), so a row
 * filtered out never evaluates them (nor raises their errors). */
static int eval_spec(struct engine_op *op, struct engine_eval *eval,
                     const struct engine_batch *in,
                     const struct engine_aggregate_spec *spec,
                     struct batch_inputs *v, size_t i)
{
    const struct engine_batch *rows = in;
    int rc = 0;

    v->filters[i] = NULL;
    if (spec->filter != NULL) {
        rc = engine__expr_eval(spec->filter, eval, in, &v->filters[i]);
        if (rc != 0) {
            return rc;
        }
        rows = filtered_batch(op, in, v->filters[i]);
        if (rows == NULL) {
            return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    return eval_list(spec->args, spec->arg_count, eval, rows, v->args[i]);
}

static int eval_inputs(struct engine_op *op, struct engine_eval *eval,
                       const struct engine_batch *in, struct batch_inputs *v)
{
    struct aggregate_state *s = op->state;
    struct engine_arena *arena = &op->arena;
    int rc;

    v->keys = engine__arena_alloc(arena, (s->key_count + 1) * sizeof(void *));
    v->args = engine__arena_alloc(arena, (s->spec_count + 1) * sizeof(void *));
    v->filters =
        engine__arena_alloc(arena, (s->spec_count + 1) * sizeof(void *));
    v->bare = engine__arena_alloc(arena, (s->bare_count + 1) * sizeof(void *));
    if (!v->keys || !v->args || !v->filters || !v->bare) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    rc = eval_list(s->keys, s->key_count, eval, in, v->keys);
    for (size_t i = 0; rc == 0 && i < s->spec_count; i++) {
        const struct engine_aggregate_spec *spec = &s->specs[i];

        v->args[i] =
            engine__arena_alloc(arena, (spec->arg_count + 1) * sizeof(void *));
        if (v->args[i] == NULL) {
            return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
        }
        rc = eval_spec(op, eval, in, spec, v, i);
    }
    if (rc == 0) {
        rc = eval_list(s->bare, s->bare_count, eval, in, v->bare);
    }
    return rc;
}

/* Whether a DISTINCT aggregate has seen value in group g; records it. */
static int distinct_seen(struct aggregate_state *s, size_t g, size_t i,
                         const struct engine_value *value, bool *seen)
{
    struct engine_rowset **slot = &s->distinct[g * s->spec_count + i];
    bool inserted;
    size_t index;

    if (*slot == NULL) {
        *slot = common_malloc(sizeof(**slot));
        if (*slot == NULL) {
            return COMMON_ENOMEM;
        }
        engine__rowset_init(*slot, 1, &s->specs[i].collation);
    }
    if (engine__rowset_insert(*slot, value, &inserted, &index) != 0) {
        return COMMON_ENOMEM;
    }
    *seen = !inserted;
    return 0;
}

/* A one-argument min() or max(): SQLITE_FUNC_NEEDCOLL, whose OP_CollSeq
 * carries the regHit register (select.c updateAccumulator()). */
static bool is_minmax(const struct engine_aggregate_spec *spec)
{
    const struct engine_aggregate_def *def = spec->def;

    return def != NULL && spec->arg_count == 1 &&
           (strcmp(def->name, "min") == 0 || strcmp(def->name, "max") == 0);
}

/* How step_spec() went: the FILTER or DISTINCT passed the row over (no
 * OP_CollSeq, no OP_AggStep), or the step ran, or it ran and asked not
 * to load the row (sqlite3SkipAccumulatorLoad: a min() or max() that
 * kept its old value). */
enum step_outcome { STEP_PASSED_OVER, STEP_RAN, STEP_RAN_NO_LOAD };

/* Steps aggregate i of group g with row; *outcome tells how. */
static int step_spec(struct engine_op *op, struct engine_eval *eval,
                     const struct batch_inputs *v, size_t g, size_t i,
                     uint32_t row, enum step_outcome *outcome)
{
    struct aggregate_state *s = op->state;
    const struct engine_aggregate_spec *spec = &s->specs[i];
    struct engine_value argv[ENGINE__FUNCTION_ARGS_MAX];
    struct engine_func_context ctx;
    char errmsg[ENGINE__ERRMSG_SIZE];
    bool seen = false;
    int rc;

    *outcome = STEP_PASSED_OVER;
    if (v->filters[i] != NULL) {
        struct engine_value truth = engine__vector_get(v->filters[i], row);

        if (engine__value_truth(&truth) != 1) {
            return 0;
        }
    }
    for (size_t a = 0; a < spec->arg_count; a++) {
        argv[a] = engine__vector_get(v->args[i][a], row);
        argv[a].json_subtype &= spec->args[a]->carries_subtype;
    }
    if (spec->distinct && distinct_seen(s, g, i, &argv[0], &seen) != 0) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    if (seen) {
        return 0;
    }
    engine__func_context_init(&ctx, eval, spec->collation, errmsg,
                              sizeof(errmsg));
    ctx.skip_accumulator_load = false;
    rc =
        spec->def->step(&ctx, group_state(s, g, i), (int)spec->arg_count, argv);
    *outcome = ctx.skip_accumulator_load ? STEP_RAN_NO_LOAD : STEP_RAN;
    if (rc != 0) {
        return engine__error(eval->exec, rc, "%s",
                             errmsg[0] ? errmsg : engine_strerror(rc));
    }
    return 0;
}

/* Copies row's value of vector into *slot, its bytes into bare_bytes. */
static int keep_value(struct aggregate_state *s, const struct engine_vector *v,
                      uint32_t row, struct engine_value *slot)
{
    struct engine_value value = engine__vector_get(v, row);

    if (value.type == ENGINE_TEXT || value.type == ENGINE_BLOB) {
        void *bytes = engine__arena_memdup(&s->bare_bytes, value.u.s.bytes,
                                           value.u.s.size);

        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        value.u.s.bytes = bytes;
    }
    *slot = value;
    return 0;
}

/* Loads row into group g's accumulator columns (updateAccumulator() in
 * select.c). SQLite reads a GROUP BY term in the result from these too,
 * not from the sorter's key, so with a min() or max() "SELECT d, min(e)
 * ... GROUP BY d" shows d as written in the min() row (1.0, not 1). */
static int keep_bare(struct aggregate_state *s, const struct batch_inputs *v,
                     size_t g, uint32_t row)
{
    for (size_t b = 0; b < s->bare_count; b++) {
        if (keep_value(s, v->bare[b], row,
                       &s->bare_values[g * s->bare_count + b]) != 0) {
            return COMMON_ENOMEM;
        }
    }
    for (size_t k = 0; s->minmax_spec >= 0 && k < s->key_count; k++) {
        if (keep_value(s, v->keys[k], row,
                       &s->key_values[g * s->key_count + k]) != 0) {
            return COMMON_ENOMEM;
        }
    }
    return 0;
}

/* The typed fast path: one tight loop over the batch (func.h's
 * step_int64s / step_doubles) for an aggregate of one plain INT64 or
 * DOUBLE column, or count(*). Returns false when the row path must run. */
static bool fast_step(struct aggregate_state *s, const struct batch_inputs *v,
                      const struct engine_batch *in, size_t i)
{
    const struct engine_aggregate_spec *spec = &s->specs[i];
    const struct engine_aggregate_def *def = spec->def;
    const struct engine_vector *arg;
    void *state = group_state(s, 0, i);

    if (def->step_int64s == NULL || spec->distinct || spec->filter != NULL) {
        return false;
    }
    if (spec->count_star) {
        def->step_int64s(state, NULL, NULL, in->selection, in->selected);
        return true;
    }
    if (spec->arg_count != 1) {
        return false;
    }
    arg = v->args[i][0];
    if (arg->kind == ENGINE_VECTOR_INT64) {
        def->step_int64s(state, arg->data.i64, arg->nulls, in->selection,
                         in->selected);
        return true;
    }
    if (arg->kind == ENGINE_VECTOR_DOUBLE) {
        def->step_doubles(state, arg->data.f64, arg->nulls, in->selection,
                          in->selected);
        return true;
    }
    return false;
}

/* Steps every aggregate of group g with row, then loads the row's bare
 * columns when SQLite would (updateAccumulator() in select.c). Without a
 * min()/max(), only for the group's first row (regAcc). With one, unless
 * the register regHit says not to: each min()/max() that runs clears it
 * (OP_CollSeq) and sets it when it keeps its old value (OP_AggStep); a
 * FILTER first copies regAcc into it (0 on a group's first row, else 1)
 * where regAcc exists; a row a FILTER or DISTINCT passes over leaves it
 * as the previous row of the group left it. */
static int step_all(struct engine_op *op, struct engine_eval *eval,
                    const struct batch_inputs *v, size_t g, uint32_t row,
                    bool first_row)
{
    struct aggregate_state *s = op->state;
    bool *hit = &s->hits[g];

    for (size_t i = 0; i < s->spec_count; i++) {
        enum step_outcome outcome;
        int rc;

        if (s->specs[i].def == NULL) {
            continue;
        }
        if (s->specs[i].filter != NULL && s->filter_sets_hit &&
            is_minmax(&s->specs[i])) {
            *hit = !first_row;
        }
        rc = step_spec(op, eval, v, g, i, row, &outcome);
        if (rc != 0) {
            return rc;
        }
        if (outcome != STEP_PASSED_OVER && is_minmax(&s->specs[i])) {
            *hit = outcome == STEP_RAN_NO_LOAD;
        }
    }
    if ((s->minmax_spec >= 0 ? !*hit : first_row) &&
        keep_bare(s, v, g, row) != 0) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    return 0;
}

/* Without GROUP BY every row goes to group 0. Unless bare columns follow
 * a min()/max() row by row, each aggregate takes the whole batch at once
 * (in a tight loop where the column is typed). */
static int absorb_single_group(struct engine_op *op, struct engine_eval *eval,
                               const struct batch_inputs *v,
                               const struct engine_batch *in)
{
    struct aggregate_state *s = op->state;
    bool inserted;
    size_t g;
    int rc = 0;

    if (engine__rowset_insert(&s->groups, NULL, &inserted, &g) != 0 ||
        (inserted && new_group(s, g) != 0)) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    if (s->bare_count > 0 && s->minmax_spec >= 0) {
        for (uint32_t r = 0; rc == 0 && r < in->selected; r++) {
            rc = step_all(op, eval, v, 0, engine__batch_row(in, r),
                          !s->single_loaded);
            s->single_loaded = true;
        }
        return rc;
    }
    for (size_t i = 0; i < s->spec_count; i++) {
        enum step_outcome outcome;

        if (s->specs[i].def == NULL || fast_step(s, v, in, i)) {
            continue;
        }
        for (uint32_t r = 0; rc == 0 && r < in->selected; r++) {
            rc = step_spec(op, eval, v, 0, i, engine__batch_row(in, r),
                           &outcome);
        }
    }
    if (rc == 0 && !s->single_loaded && in->selected > 0) {
        s->single_loaded = true;
        if (keep_bare(s, v, 0, engine__batch_row(in, 0)) != 0) {
            return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    return rc;
}

static int absorb_row(struct engine_op *op, struct engine_eval *eval,
                      const struct batch_inputs *v, uint32_t row)
{
    struct aggregate_state *s = op->state;
    struct engine_value key[ENGINE_MAX_COLUMNS];
    bool inserted;
    size_t g;

    for (size_t k = 0; k < s->key_count; k++) {
        key[k] = engine__vector_get(v->keys[k], row);
    }
    if (engine__rowset_insert(&s->groups, key, &inserted, &g) != 0 ||
        (inserted && new_group(s, g) != 0)) {
        return engine__error(eval->exec, COMMON_ENOMEM, "out of memory");
    }
    return step_all(op, eval, v, g, row, inserted);
}

static int compare_groups(const void *ctx, size_t x, size_t y)
{
    const struct aggregate_state *s = ctx;
    const struct engine_value *a = engine__rowset_row(&s->groups, x);
    const struct engine_value *b = engine__rowset_row(&s->groups, y);

    for (size_t k = 0; k < s->key_count; k++) {
        int c = engine__value_compare(&a[k], &b[k], s->collations[k]);

        if (c != 0) {
            return s->key_descending != NULL && s->key_descending[k] ? -c : c;
        }
    }
    return 0;
}

static int absorb_all(struct engine_op *op, struct engine_exec *exec)
{
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};

    for (;;) {
        struct batch_inputs inputs;
        struct engine_batch *in;
        int rc = op->child->ops->next(op->child, exec, &in);

        if (rc != 0 || in == NULL) {
            return rc;
        }
        engine__arena_reset(&op->arena);
        rc = eval_inputs(op, &eval, in, &inputs);
        if (rc == 0 && op_state(op)->key_count == 0) {
            rc = absorb_single_group(op, &eval, &inputs, in);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        for (uint32_t i = 0; rc == 0 && i < in->selected; i++) {
            rc = absorb_row(op, &eval, &inputs, engine__batch_row(in, i));
        }
        if (rc != 0) {
            return rc;
        }
    }
}

static int finish_input(struct engine_op *op, struct engine_exec *exec)
{
    struct aggregate_state *s = op->state;
    bool inserted;
    size_t g;
    int rc = absorb_all(op, exec);

    if (rc != 0) {
        return rc;
    }
    if (s->key_count == 0 && s->groups.count == 0) {
        /* An aggregate without GROUP BY yields one row, even over nothing. */
        if (engine__rowset_insert(&s->groups, NULL, &inserted, &g) != 0 ||
            new_group(s, g) != 0) {
            return engine__error(exec, COMMON_ENOMEM, "out of memory");
        }
    }
    s->order = common_malloc_array(s->groups.count + 1, sizeof(*s->order));
    if (s->order == NULL) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->groups.count; i++) {
        s->order[i] = i;
    }
    if (s->sort_groups && engine__stable_sort(s->order, s->groups.count,
                                              compare_groups, s) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    s->done = true;
    return 0;
}

/* Writes group g as output row n. */
static int emit_group(struct engine_op *op, struct engine_exec *exec, size_t g,
                      uint32_t n)
{
    struct aggregate_state *s = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    const struct engine_value *key = engine__rowset_row(&s->groups, g);
    struct engine_vector *columns = op->batch.columns;
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct engine_func_context ctx;

    if (s->minmax_spec >= 0 && s->key_count > 0) {
        key = &s->key_values[g * s->key_count]; /* see keep_bare() */
    }

    for (size_t k = 0; k < s->key_count; k++) {
        engine__vector_set(&columns[k], n, n, key[k]);
    }
    for (size_t i = 0; i < s->spec_count; i++) {
        struct engine_value v = engine__value_null();
        int rc = 0;

        if (s->specs[i].def != NULL) {
            engine__func_context_init(&ctx, &eval, s->specs[i].collation,
                                      errmsg, sizeof(errmsg));
            rc = s->specs[i].def->final(&ctx, group_state(s, g, i), &v);
        }
        if (rc != 0) {
            return engine__error(exec, rc, "%s",
                                 errmsg[0] ? errmsg : engine_strerror(rc));
        }
        engine__vector_set(&columns[s->key_count + i], n, n, v);
    }
    for (size_t b = 0; b < s->bare_count; b++) {
        engine__vector_set(&columns[s->key_count + s->spec_count + b], n, n,
                           s->bare_values[g * s->bare_count + b]);
    }
    return 0;
}

static int aggregate_next(struct engine_op *op, struct engine_exec *exec,
                          struct engine_batch **out)
{
    struct aggregate_state *s = op->state;
    uint32_t n = 0;
    size_t left;
    int rc;

    if (!s->done && (rc = finish_input(op, exec)) != 0) {
        return rc;
    }
    engine__arena_reset(&op->arena);
    left = s->groups.count - s->emitted;
    if (engine__op_reserve(op, left < ENGINE__BATCH_SIZE
                                   ? (uint32_t)left
                                   : ENGINE__BATCH_SIZE) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < op->column_count; c++) {
        op->batch.columns[c].kind = ENGINE_VECTOR_VALUES;
    }
    for (; s->emitted < s->groups.count && n < ENGINE__BATCH_SIZE; n++) {
        rc = emit_group(op, exec, s->order[s->emitted++], n);
        if (rc != 0) {
            return rc;
        }
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    *out = n > 0 ? &op->batch : NULL;
    return 0;
}

static void aggregate_destroy(struct engine_op *op)
{
    release_groups(op->state);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops aggregate_ops = {
    .open = aggregate_open,
    .next = aggregate_next,
    .destroy = aggregate_destroy,
};

/* The last one-argument min() or max() among the aggregates, or -1. */
static ptrdiff_t last_minmax(const struct engine_aggregate_spec *specs,
                             size_t count)
{
    ptrdiff_t last = -1;

    for (size_t i = 0; i < count; i++) {
        if (is_minmax(&specs[i])) {
            last = (ptrdiff_t)i;
        }
    }
    return last;
}

/* Whether updateAccumulator()'s FILTER code copies regAcc into regHit:
 * regAcc exists with a GROUP BY (iUseFlag), and without one only when no
 * min()/max() lacks a FILTER (sqlite3Select(), "regAcc"). */
static bool filter_sets_hit(const struct engine_aggregate_spec *specs,
                            size_t count, size_t key_count)
{
    for (size_t i = 0; key_count == 0 && i < count; i++) {
        if (is_minmax(&specs[i]) && specs[i].filter == NULL) {
            return false;
        }
    }
    return true;
}

static int layout_states(struct engine_stmt *stmt, struct aggregate_state *s)
{
    s->offsets = engine__arena_alloc(&stmt->plan_arena,
                                     (s->spec_count + 1) * sizeof(size_t));
    s->collations = engine__arena_alloc(
        &stmt->plan_arena, (s->key_count + 1) * sizeof(*s->collations));
    if (s->offsets == NULL || s->collations == NULL) {
        return COMMON_ENOMEM;
    }
    s->block_size = 0;
    for (size_t i = 0; i < s->spec_count; i++) {
        size_t size = s->specs[i].def ? s->specs[i].def->state_size : 0;

        s->offsets[i] = s->block_size;
        s->block_size += (size + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
    }
    for (size_t k = 0; k < s->key_count; k++) {
        s->collations[k] = s->keys[k]->collation;
    }
    return 0;
}

struct engine_op *
engine__op_aggregate(struct engine_stmt *stmt, struct engine_op *child,
                     struct engine_expr **keys, size_t key_count,
                     const struct engine_aggregate_spec *aggregates,
                     size_t aggregate_count, struct engine_expr **bare,
                     size_t bare_count, bool sort_groups,
                     const bool *key_descending)
{
    struct engine_op *op = engine__op_new(
        stmt, &aggregate_ops, child, sizeof(struct aggregate_state),
        key_count + aggregate_count + bare_count, true);
    struct aggregate_state *s;

    if (op == NULL) {
        return NULL;
    }
    s = op->state;
    s->keys = keys;
    s->key_count = key_count;
    s->specs = aggregates;
    s->spec_count = aggregate_count;
    s->bare = bare;
    s->bare_count = bare_count;
    s->sort_groups = sort_groups;
    s->key_descending = key_descending;
    s->minmax_spec = last_minmax(aggregates, aggregate_count);
    s->filter_sets_hit =
        filter_sets_hit(aggregates, aggregate_count, key_count);
    engine__arena_init(&s->bare_bytes);
    return layout_states(stmt, s) == 0 ? op : NULL;
}
