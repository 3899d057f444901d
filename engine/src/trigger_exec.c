/* SPDX-License-Identifier: MIT
 *
 * trigger_exec.c: running trigger programs for one changed row, as
 * SQLite's OP_Program runs a trigger's sub-program (vdbe.c): the row's OLD
 * and NEW values bound as the steps' parameters, the WHEN tested first
 * (false or NULL skips the program), then each step in order: a SELECT
 * computed to its end and its rows thrown away, an INSERT, UPDATE or
 * DELETE run whole as a nested statement whose changes belong to the
 * statement that fired it (its abort undoes them) and which fires the
 * triggers of its own table in turn.
 *
 * changes() inside a program is the count of its last step (OP_ResetCount
 * after each); when the program ends, changes() and last_insert_rowid()
 * are what they were before it (sqlite3VdbeFrameRestore). total_changes()
 * counts every step's rows.
 *
 * RAISE(ROLLBACK|ABORT|FAIL, msg) ends the program with a constraint
 * error msg, the firing statement settling it with that conflict mode;
 * RAISE(IGNORE) ends the program and abandons the firing row's change (the
 * rest of its triggers too) without an error: the statement goes on with
 * its next row (OP_Halt with OE_Ignore jumps to OP_Program's P2).
 */
#include <string.h>

#include "trigger.h"

int engine__trigger_eval_raise(struct engine_expr *expr,
                               struct engine_eval *eval,
                               const struct engine_batch *batch)
{
    struct engine_exec *exec = eval->exec;
    struct engine_value message = expr->args[0]->u.constant;

    if (batch->selected == 0) {
        expr->result.kind = ENGINE_VECTOR_VALUES;
        return 0;
    }
    exec->db->trigger_raise = expr->u.raise;
    if (expr->u.raise == AST_CONFLICT_IGNORE) {
        return engine__error(exec, ENGINE_EABORT, "RAISE(IGNORE)");
    }
    return engine__error(exec, ENGINE_ECONSTRAINT, "%.*s",
                         (int)message.u.s.size, message.u.s.bytes);
}

/* The programs run's statement fires now: an upsert's DO UPDATE fires
 * the UPDATE triggers of its SET list. */
static struct engine_trigger_plan *plan_of(const struct dml_run *run)
{
    return run->is_upsert_update ? run->upsert_triggers : run->dml->triggers;
}

bool engine__trigger_has(const struct dml_run *run,
                         enum ast_trigger_timing timing)
{
    const struct engine_trigger_plan *plan = plan_of(run);

    for (size_t p = 0; plan != NULL && p < plan->count; p++) {
        if (plan->programs[p]->trigger->timing == timing) {
            return true;
        }
    }
    return false;
}

/* Runs a nested statement to its end; a SELECT's first value goes to
 * *first (when not NULL; NULL when it has no row). */
static int run_nested(struct engine_stmt *stmt, struct engine_value *first)
{
    struct engine_batch *batch;
    bool seen = false;
    int rc;

    engine__stmt_clear_results(stmt);
    stmt->exec.subqueries = stmt->subqueries;
    stmt->exec.subquery_count = stmt->subquery_count;
    stmt->exec.now_jd_ms = 0;
    rc = engine__prologue_run(stmt);
    if (rc != 0 || stmt->root == NULL) {
        return rc != 0 ? rc : engine__execute_dml(stmt);
    }
    if (first != NULL) {
        *first = engine__value_null();
    }
    rc = stmt->root->ops->open(stmt->root, &stmt->exec);
    while (rc == 0) {
        rc = stmt->root->ops->next(stmt->root, &stmt->exec, &batch);
        if (rc != 0 || batch == NULL) {
            break;
        }
        if (first != NULL && !seen && batch->selected > 0) {
            *first = engine__vector_get(&batch->columns[0],
                                        engine__batch_row(batch, 0));
            seen = true;
            break; /* the WHEN reads one row */
        }
    }
    return rc;
}

static void bind(struct engine_stmt *stmt, const struct engine_value *params,
                 int count)
{
    if (stmt != NULL) {
        memcpy(&stmt->parameters[1], &params[1],
               (size_t)count * sizeof(*params));
    }
}

/* Runs a program for one row. The outer statement's OR clause, which
 * overrides the steps' own, was planned into them (the program's orconf,
 * trigger_plan.c). */
static int run_program(struct engine_trigger_program *program,
                       const struct engine_value *params, int count)
{
    int rc = 0;

    bind(program->when, params, count);
    for (size_t s = 0; s < program->step_count; s++) {
        bind(program->steps[s], params, count);
    }
    if (program->when != NULL) {
        struct engine_value truth;

        rc = run_nested(program->when, &truth);
        if (rc != 0 || engine__value_truth(&truth) != 1) {
            return rc;
        }
    }
    for (size_t s = 0; rc == 0 && s < program->step_count; s++) {
        rc = run_nested(program->steps[s], NULL);
    }
    return rc;
}

/* Copies a row's values (bytes into arena) to params from first. */
static int put_row(struct engine_arena *arena, struct engine_value *params,
                   int first, const struct engine_table *table,
                   const struct engine_value *values, int64_t rowid)
{
    for (size_t c = 0; c < table->column_count; c++) {
        params[first + (int)c] =
            values != NULL ? values[c] : engine__value_null();
        if (engine__value_keep(arena, &params[first + (int)c]) != 0) {
            return COMMON_ENOMEM;
        }
    }
    params[first + (int)table->column_count] =
        values != NULL ? engine__value_int(rowid) : engine__value_null();
    return 0;
}

/* How a failed program ends the row: RAISE(IGNORE) abandons it without
 * error; any other error carries its conflict mode to the statement. */
static int settle(struct dml_run *run, int rc)
{
    struct engine_db *db = run->db;

    if (rc == 0) {
        return 0;
    }
    if (db->trigger_raise == AST_CONFLICT_IGNORE) {
        db->trigger_raise = AST_CONFLICT_DEFAULT;
        engine__db_clear_error(db);
        return ENGINE__DML_ROW_SKIPPED;
    }
    if (db->trigger_raise != AST_CONFLICT_DEFAULT) {
        run->failed = (enum ast_conflict)db->trigger_raise;
        db->trigger_raise = AST_CONFLICT_DEFAULT;
    } else {
        run->failed = (enum ast_conflict)db->trigger_failed;
    }
    return rc;
}

int engine__trigger_fire(struct dml_run *run, enum ast_trigger_timing timing,
                         const struct engine_value *old, int64_t old_rowid,
                         const struct engine_value *new_values,
                         int64_t new_rowid)
{
    struct engine_trigger_plan *plan = plan_of(run);
    const struct engine_table *table = run->dml->table;
    struct engine_db *db = run->db;
    int count = 2 * ((int)table->column_count + 1);
    int64_t changes = db->changes;
    int64_t last_rowid = db->last_insert_rowid;
    struct engine_value *params;
    struct engine_arena arena;
    int rc;

    /* Changes merged from elsewhere (engine_apply_transaction) fired
     * their triggers where they were made: they do not fire here. */
    if (!engine__trigger_has(run, timing) || db->change_capture.applying) {
        return 0;
    }
    engine__arena_init(&arena);
    params = engine__arena_alloc(&arena, ((size_t)count + 1) * sizeof(*params));
    rc = params == NULL ? COMMON_ENOMEM : 0;
    rc = rc ? rc
            : put_row(&arena, params, ENGINE__TRIGGER_OLD(table, 0), table, old,
                      old_rowid);
    rc = rc ? rc
            : put_row(&arena, params, ENGINE__TRIGGER_NEW(table, 0), table,
                      new_values, new_rowid);
    if (rc != 0) {
        engine__arena_close(&arena);
        return engine__error(run->exec, rc, "out of memory");
    }
    db->trigger_raise = AST_CONFLICT_DEFAULT;
    db->trigger_failed = AST_CONFLICT_DEFAULT;
    for (size_t p = 0; rc == 0 && p < plan->count; p++) {
        struct engine_trigger *trigger = plan->programs[p]->trigger;

        /* recursive_triggers off: not inside its own program (OP_Program
         * looks for the trigger in the frame stack). */
        if (trigger->timing == timing && trigger->running == 0) {
            trigger->running++;
            rc = run_program(plan->programs[p], params, count);
            trigger->running--;
        }
    }
    db->changes = changes;
    db->last_insert_rowid = last_rowid;
    engine__arena_close(&arena);
    return settle(run, rc);
}
