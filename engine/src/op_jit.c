/* SPDX-License-Identifier: MIT
 *
 * op_jit.c: the JIT's operator (jit_plan.h). At its first next() of an
 * execution it decides whether the compiled kernel can answer: the JIT is
 * on, the table has at least ENGINE__JIT_MIN_ROWS live rows, every column
 * read is still an int64 array (a store turns into tagged values once a
 * non-integer is written), and every parameter is an INTEGER. If so it
 * runs the kernel block by block (ENGINE__ZONE_ROWS slots), passing over
 * the blocks the scan's zone terms rule out (zone.h) as the scan would,
 * with the variant that reads no deleted or NULL flags where the zone
 * maps say the block has neither, and yields the one row. Otherwise, and
 * when a sum overflows, it opens its child, the interpreter's aggregate
 * over the same scan and filter, and passes its rows through: the
 * interpreter then raises the errors SQLite would.
 *
 * count(*) of a whole table is its live row count, with no kernel.
 *
 * Kernels are compiled at most once per statement and variant, into the
 * handle's executable arena (capped at ENGINE__JIT_CODE_CAP bytes; a full
 * arena means the interpreter runs), and freed with the statement.
 */
#include <string.h>
#include <time.h>

#include "jit_plan.h"
#include "table.h"
#include "zone.h"

enum jit_mode {
    MODE_DECIDE,   /* the execution's first next() is to come */
    MODE_DONE,     /* the kernel's row was given */
    MODE_DELEGATE, /* the child runs */
};

struct jit_state {
    const struct engine_jit_plan *plan;
    enum engine_jit_isa isa; /* the best this CPU runs */
    struct engine_db *db;    /* whose arena holds code */
    enum jit_mode mode;
    /* [checked]: the kernel reading deleted and NULL flags, and not */
    struct engine_jit_code code[2];
    bool failed[2];                  /* compiling it failed: not tried again */
    struct engine_zone_run zone_run; /* the blocks plan->zones rule out */
    struct engine_jit_pipe_args args;
};

static int jit_open(struct engine_op *op, struct engine_exec *exec)
{
    struct jit_state *state = op->state;

    (void)exec;
    state->mode = MODE_DECIDE;
    engine__zone_reset(&state->zone_run);
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct engine_jit_arena *arena_of(struct engine_db *db)
{
    if (db->jit_arena == NULL &&
        engine__jit_arena_open(&db->jit_arena, ENGINE__JIT_CODE_CAP) != 0) {
        db->jit_arena = NULL;
    }
    return db->jit_arena;
}

/* Compiles spec with the AVX2 loop when isa allows it and the spec is for
 * clean blocks, falling back to the scalar loop (the vector loop's
 * registers may not suffice). */
static int compile_variant(struct engine_jit_arena *arena,
                           struct engine_jit_pipe_spec *spec,
                           enum engine_jit_isa isa,
                           struct engine_jit_code *code)
{
    if (!spec->checked && isa >= ENGINE_JIT_ISA_AVX2) {
        spec->isa = ENGINE_JIT_ISA_AVX2;
        if (engine__jit_pipe_compile(arena, spec, code) == 0) {
            return 0;
        }
    }
    spec->isa = ENGINE_JIT_ISA_SCALAR;
    return engine__jit_pipe_compile(arena, spec, code);
}

/* The kernel variant, compiled on first use; NULL when it cannot be. */
static engine_jit_pipe_fn kernel_of(struct engine_op *op, struct engine_db *db,
                                    bool checked)
{
    struct jit_state *state = op->state;
    struct engine_jit_code *code = &state->code[checked];
    struct engine_jit_pipe_spec spec;
    struct engine_jit_arena *arena;
    uint64_t start;

    if (code->pages == 0 && !state->failed[checked]) {
        arena = arena_of(db);
        if (arena == NULL) {
            state->failed[checked] = true;
            return NULL;
        }
        spec = state->plan->spec;
        spec.checked = checked;
        start = now_ns();
        if (compile_variant(arena, &spec, state->isa, code) != 0) {
            state->failed[checked] = true;
            return NULL;
        }
        db->jit_stats.compiles++;
        db->jit_stats.compile_ns += now_ns() - start;
        db->jit_stats.code_bytes += code->size;
    }
    return code->pages == 0 ? NULL : engine__jit_pipe_entry(code);
}

/* Points args at the table's arrays; false when a column is not int64. */
static bool bind_columns(const struct engine_jit_plan *plan,
                         struct engine_jit_pipe_args *args)
{
    const struct engine_table *table = plan->table;

    args->deleted = table->deleted;
    for (uint32_t c = 0; c < plan->spec.column_count; c++) {
        size_t column = plan->table_columns[c];
        const struct engine_column_store *store;

        if (column == SIZE_MAX) {
            args->values[c] = table->rowids;
            args->nulls[c] = NULL;
            continue;
        }
        store = &table->stores[column];
        if (store->kind != ENGINE_VECTOR_INT64) {
            return false;
        }
        args->values[c] = store->data.i64;
        args->nulls[c] = store->nulls;
    }
    return true;
}

/* Evaluates the parameters; *ok false when one is not an INTEGER. */
static int bind_params(struct engine_op *op, struct engine_exec *exec, bool *ok)
{
    struct jit_state *state = op->state;
    const struct engine_jit_plan *plan = state->plan;

    *ok = true;
    for (uint32_t p = 0; p < plan->spec.param_count && *ok; p++) {
        struct engine_value v;
        int rc =
            engine__expr_eval_constant(plan->params[p], exec, &op->arena, &v);

        if (rc != 0) {
            return rc;
        }
        *ok = v.type == ENGINE_INTEGER;
        state->args.params[p] = v.u.i;
    }
    return 0;
}

static void reset_totals(const struct engine_jit_pipe_spec *spec,
                         struct engine_jit_pipe_args *args)
{
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        args->totals[a].count = 0;
        args->totals[a].negative = 0;
        args->totals[a].value =
            spec->aggregates[a].kind == ENGINE_JIT_MIN   ? INT64_MAX
            : spec->aggregates[a].kind == ENGINE_JIT_MAX ? INT64_MIN
                                                         : 0;
    }
}

/* Whether the scan's zone terms rule out block b. */
static bool zone_skips(const struct jit_state *state, size_t b)
{
    return state->plan->zones != NULL && b < state->zone_run.block_count &&
           state->zone_run.skip[b];
}

/* Runs the kernel over every block; false when it could not (a kernel
 * failed to compile, a sum overflowed). */
static bool run_blocks(struct engine_op *op, struct engine_db *db)
{
    struct jit_state *state = op->state;
    const struct engine_jit_plan *plan = state->plan;
    const struct engine_table *table = plan->table;
    size_t nullable[ENGINE__JIT_PIPE_COLUMNS];
    size_t nullable_count = 0;
    size_t blocks = engine__table_block_count(table);

    for (uint32_t c = 0; c < plan->spec.column_count; c++) {
        if (plan->table_columns[c] != SIZE_MAX) {
            nullable[nullable_count++] = plan->table_columns[c];
        }
    }
    reset_totals(&plan->spec, &state->args);
    for (size_t b = 0; b < blocks; b++) {
        engine_jit_pipe_fn kernel;

        if (zone_skips(state, b)) {
            continue;
        }
        kernel = kernel_of(
            op, db,
            !engine__table_block_clean(table, b, nullable, nullable_count));
        if (kernel == NULL) {
            return false;
        }
        state->args.begin = b * ENGINE__ZONE_ROWS;
        state->args.end =
            b + 1 == blocks ? table->slot_count : (b + 1) * ENGINE__ZONE_ROWS;
        if (kernel(&state->args) != ENGINE_JIT_DONE) {
            return false;
        }
    }
    return true;
}

/* The value of output column i from the kernel's totals. */
static struct engine_value output_value(const struct jit_state *state, size_t i)
{
    int32_t a = state->plan->outputs[i];
    const struct engine_jit_pipe_total *total;

    if (a < 0) {
        return engine__value_null();
    }
    total = &state->args.totals[a];
    switch (state->plan->spec.aggregates[a].kind) {
    case ENGINE_JIT_COUNT_STAR:
    case ENGINE_JIT_COUNT:
        return engine__value_int(total->count);
    case ENGINE_JIT_SUM:
        return total->count == 0
                   ? engine__value_null()
                   : engine__value_int(total->value + total->negative);
    default:
        return total->count == 0 ? engine__value_null()
                                 : engine__value_int(total->value);
    }
}

static int emit_row(struct engine_op *op, struct engine_exec *exec)
{
    struct jit_state *state = op->state;

    if (engine__op_reserve(op, 1) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < op->column_count; i++) {
        op->batch.columns[i].kind = ENGINE_VECTOR_VALUES;
        engine__vector_set(&op->batch.columns[i], 0, 0, output_value(state, i));
    }
    op->batch.count = 1;
    op->batch.selected = 1;
    op->batch.selection = NULL;
    return 0;
}

/* count(*) alone, no WHERE: the table's live rows. */
static bool only_row_count(const struct engine_jit_plan *plan)
{
    for (uint32_t a = 0; a < plan->spec.aggregate_count; a++) {
        if (plan->spec.aggregates[a].kind != ENGINE_JIT_COUNT_STAR) {
            return false;
        }
    }
    return plan->spec.root < 0;
}

/* Whether the JIT answers this execution (*use how), the totals then set;
 * errors only from evaluating a parameter. */
static int try_kernel(struct engine_op *op, struct engine_exec *exec,
                      enum engine_jit_use *use)
{
    struct jit_state *state = op->state;
    const struct engine_jit_plan *plan = state->plan;
    struct engine_db *db = exec->db;
    bool ok;
    int rc;

    *use = ENGINE_JIT_UNUSED;
    if (db->jit_off) {
        return 0;
    }
    if (only_row_count(plan)) {
        reset_totals(&plan->spec, &state->args);
        for (uint32_t a = 0; a < plan->spec.aggregate_count; a++) {
            state->args.totals[a].count = (int64_t)plan->table->live_count;
        }
        *use = ENGINE_JIT_ROW_COUNT;
        return 0;
    }
    if (plan->table->live_count < ENGINE__JIT_MIN_ROWS ||
        !bind_columns(plan, &state->args)) {
        return 0;
    }
    if (plan->zones != NULL) {
        rc = engine__zone_prepare(plan->zones, &state->zone_run, plan->table,
                                  exec, &op->arena);
        if (rc != 0) {
            return rc;
        }
    }
    rc = bind_params(op, exec, &ok);
    if (rc != 0 || !ok) {
        return rc;
    }
    if (run_blocks(op, db)) {
        *use = ENGINE_JIT_COMPILED;
    }
    return 0;
}

static int jit_next(struct engine_op *op, struct engine_exec *exec,
                    struct engine_batch **out)
{
    struct jit_state *state = op->state;
    struct engine_stmt *stmt = exec->stmt;
    enum engine_jit_use use;
    int rc;

    if (state->mode == MODE_DECIDE) {
        engine__arena_reset(&op->arena);
        rc = try_kernel(op, exec, &use);
        if (rc != 0) {
            return rc;
        }
        if (use != ENGINE_JIT_UNUSED) {
            exec->db->jit_stats.runs_compiled++;
            if (stmt != NULL && stmt->jit_use < use) {
                stmt->jit_use = use;
            }
            state->mode = MODE_DONE;
            rc = emit_row(op, exec);
            *out = rc == 0 ? &op->batch : NULL;
            return rc;
        }
        exec->db->jit_stats.runs_interpreted++;
        state->mode = MODE_DELEGATE;
        rc = op->child->ops->open(op->child, exec);
        if (rc != 0) {
            return rc;
        }
    }
    if (state->mode == MODE_DONE) {
        *out = NULL;
        return 0;
    }
    return op->child->ops->next(op->child, exec, out);
}

static void jit_destroy(struct engine_op *op)
{
    struct jit_state *state = op->state;
    struct engine_db *db = state->db;

    for (size_t i = 0; i < 2; i++) {
        if (state->code[i].pages != 0) {
            db->jit_stats.code_bytes -= state->code[i].size;
            engine__jit_free(db->jit_arena, &state->code[i]);
        }
    }
    engine__zone_close(&state->zone_run);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops jit_ops = {
    .open = jit_open,
    .next = jit_next,
    .destroy = jit_destroy,
};

struct engine_op *engine__op_jit(struct engine_stmt *stmt,
                                 struct engine_op *aggregate,
                                 const struct engine_jit_plan *plan)
{
    struct engine_op *op =
        engine__op_new(stmt, &jit_ops, aggregate, sizeof(struct jit_state),
                       aggregate->column_count, true);
    struct engine_jit_cpu cpu;
    struct jit_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->plan = plan;
    state->db = stmt->db;
    engine__jit_cpu_detect(&cpu);
    state->isa = engine__jit_cpu_isa(&cpu);
    return op;
}

enum engine_jit_use engine_stmt_jit_use(const struct engine_stmt *stmt)
{
    return stmt->jit_use;
}

void engine_jit_stats(const struct engine_db *db, struct engine_jit_stats *out)
{
    *out = db->jit_stats;
}
