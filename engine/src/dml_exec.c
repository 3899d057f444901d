/* SPDX-License-Identifier: MIT
 *
 * dml_exec.c: running INSERT, UPDATE and DELETE. Each statement runs whole
 * at its first step: the rows it reads (the INSERT's source, the UPDATE's
 * or DELETE's matches) are collected first, so it never sees its own
 * changes, then each row goes through dml_row.c's constraint checks.
 *
 * On failure the conflict mode of the failed constraint decides
 * (lang_conflict.html): ABORT undoes this statement's changes, FAIL keeps
 * those made before the failing row, ROLLBACK undoes the transaction.
 */
#include <string.h>

#include "dml_int.h"
#include "storage.h"

static const struct engine_op_ops holder_ops = {
    .destroy = engine__op_destroy_default,
};

int engine__dml_init_row(struct engine_stmt *stmt, struct engine_dml *dml)
{
    /* The table's columns and the rowid, then any excluded columns. */
    size_t width = dml->table->column_count + 1;
    struct engine_op *holder;

    if (dml->scope.column_count > width) {
        width = dml->scope.column_count;
    }
    holder = engine__op_new(stmt, &holder_ops, NULL, 0, width, true);
    if (holder == NULL || engine__op_reserve(holder, 1) != 0) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    dml->row = holder->batch;
    dml->row.count = 1;
    dml->row.selected = 1;
    dml->row.selection = NULL;
    return 0;
}

/* Runs the source (INSERT) or match (UPDATE, DELETE) plan to the end,
 * keeping width values of each row in *rows (bytes in run->scratch). */
int engine__dml_collect(struct dml_run *run, struct engine_op *op, size_t width,
                        struct engine_value **rows, size_t *count)
{
    size_t capacity = 0;
    int rc = op->ops->open(op, run->exec);

    *rows = NULL;
    *count = 0;
    while (rc == 0) {
        struct engine_batch *batch;

        rc = op->ops->next(op, run->exec, &batch);
        if (rc != 0 || batch == NULL) {
            break;
        }
        for (uint32_t i = 0; rc == 0 && i < batch->selected; i++) {
            rc = engine__dml_collect_row(run, batch, i, width, rows, count,
                                         &capacity);
        }
    }
    return rc;
}

int engine__dml_collect_row(struct dml_run *run,
                            const struct engine_batch *batch, uint32_t i,
                            size_t width, struct engine_value **rows,
                            size_t *count, size_t *capacity)
{
    uint32_t row = engine__batch_row(batch, i);
    size_t first = batch->column_count - width;

    if (*count == *capacity) {
        size_t grown = *capacity ? *capacity * 2 : 64;
        struct engine_value *more =
            common_realloc_array(*rows, grown * width + 1, sizeof(**rows));

        if (more == NULL) {
            return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
        *rows = more;
        *capacity = grown;
    }
    for (size_t c = 0; c < width; c++) {
        struct engine_value *v = &(*rows)[*count * width + c];

        *v = engine__vector_get(&batch->columns[first + c], row);
        if (engine__value_keep(&run->scratch, v) != 0) {
            return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    (*count)++;
    return 0;
}

/* The full candidate row of one source row: targeted columns, defaults
 * for the others. */
static int build_insert_row(struct dml_run *run, const struct engine_value *src,
                            struct engine_value *values, bool *has_rowid,
                            int64_t *rowid)
{
    struct engine_dml *dml = run->dml;
    size_t n = dml->table->column_count;
    bool targeted[ENGINE_MAX_COLUMNS] = {false};

    *has_rowid = false;
    for (size_t i = 0; i < dml->target_count; i++) {
        size_t column = dml->targets[i];

        if (column != SIZE_MAX) {
            values[column] = src[i];
            targeted[column] = true;
            continue;
        }
        if (src[i].type != ENGINE_NULL) {
            struct engine_value v = src[i];

            if (engine__value_apply_affinity(&v, ENGINE_AFFINITY_INTEGER,
                                             &run->row_arena) != 0) {
                return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
            }
            if (v.type != ENGINE_INTEGER) {
                run->failed = AST_CONFLICT_DEFAULT;
                return engine__error(run->exec, ENGINE_EMISMATCH,
                                     "datatype mismatch");
            }
            *has_rowid = true;
            *rowid = v.u.i;
        }
    }
    for (size_t c = 0; c < n; c++) {
        int rc = 0;

        if (targeted[c]) {
            continue;
        }
        values[c] = engine__value_null();
        if (dml->defaults[c] != NULL) {
            rc = engine__dml_eval(run, dml->defaults[c], &values[c]);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int insert_rows(struct dml_run *run, const struct engine_value *rows,
                       size_t count)
{
    struct engine_value values[ENGINE_MAX_COLUMNS + 1];
    size_t width = run->dml->target_count;

    for (size_t r = 0; r < count; r++) {
        bool has_rowid;
        int64_t rowid = 0;
        int rc;

        engine__arena_reset(&run->row_arena);
        /* DEFAULT VALUES names no column: rows is NULL then, and no
         * pointer is formed from it. */
        rc = build_insert_row(run, width > 0 ? &rows[r * width] : NULL, values,
                              &has_rowid, &rowid);
        if (rc == 0) {
            rc = engine__dml_insert_row(run, values, has_rowid, rowid);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* How a one-pass statement goes on after op (an INSERT's source, an
 * UPDATE's or DELETE's matches) failed on some row: SQLite changed each
 * earlier row before it computed the next, so those rows, found again one
 * at a time (engine_exec.row_at_a_time), are applied first and their own
 * errors come first; op's error (or 0, when one row at a time no row
 * fails) is returned after them. */
static int
run_before_error(struct dml_run *run, struct engine_op *op, size_t width,
                 int (*apply)(struct dml_run *run,
                              const struct engine_value *rows, size_t count))
{
    struct engine_value *rows = NULL;
    size_t count = 0;
    int op_rc, rc;

    run->exec->row_at_a_time = true;
    op_rc = engine__dml_collect(run, op, width, &rows, &count);
    run->exec->row_at_a_time = false;
    rc = op_rc == COMMON_ENOMEM ? op_rc : apply(run, rows, count);
    common_free(rows);
    return rc != 0 ? rc : op_rc;
}

static int run_insert(struct dml_run *run)
{
    struct engine_value *rows = NULL;
    size_t count = 1;
    int rc = 0;

    if (run->dml->source != NULL) {
        rc = engine__dml_collect(run, run->dml->source, run->dml->target_count,
                                 &rows, &count);
    }
    if (rc != 0 && rc != COMMON_ENOMEM && run->dml->source_streams) {
        common_free(rows);
        return run_before_error(run, run->dml->source, run->dml->target_count,
                                insert_rows);
    }
    if (rc == 0) {
        rc = insert_rows(run, rows, count);
    }
    common_free(rows);
    return rc;
}

/* Changes the live row at slot: deletes or updates it. */
static int change_row(struct dml_run *run, size_t slot)
{
    struct engine_dml *dml = run->dml;
    int rc;

    engine__arena_reset(&run->row_arena);
    if (dml->kind == AST_STMT_DELETE) {
        rc = engine__dml_delete_matched(run, slot);
    } else {
        rc = engine__dml_update_row(run, slot, dml->assignments,
                                    dml->assignment_count, NULL);
    }
    return rc == ENGINE__DML_ROW_SKIPPED ? 0 : rc;
}

/* The rows of rowids[0..count), in order; one an earlier row's REPLACE
 * removed is passed over. */
static int change_rows(struct dml_run *run, const struct engine_value *rowids,
                       size_t count)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < count; i++) {
        ptrdiff_t slot =
            engine__table_find_rowid(run->dml->table, rowids[i].u.i);

        if (slot >= 0) {
            rc = change_row(run, (size_t)slot);
        }
    }
    return rc;
}

/* One pass over a WHERE whose subquery reads the table: each row in rowid
 * order, tested when its turn comes and changed at once, so that a live IN
 * (in_live.c) of a later row, or a subquery a later row runs first, sees
 * the earlier changes. */
static int run_live_one_pass(struct dml_run *run)
{
    struct engine_dml *dml = run->dml;
    struct engine_value *rowids = NULL;
    size_t count = 0;
    struct engine_eval eval = {.exec = run->exec, .arena = &run->row_arena};
    bool never = false;
    int rc = engine__expr_prime(dml->where, &eval, &never);

    if (rc == 0 && !never) {
        rc = engine__dml_collect(run, dml->scan, 1, &rowids, &count);
    }
    for (size_t i = 0; rc == 0 && i < count; i++) {
        ptrdiff_t slot = engine__table_find_rowid(dml->table, rowids[i].u.i);
        bool passes = false;

        if (slot < 0) {
            continue;
        }
        engine__arena_reset(&run->row_arena);
        rc = engine__dml_row_passes(run, (size_t)slot, dml->where, &passes);
        if (rc == 0 && passes) {
            rc = change_row(run, (size_t)slot);
        }
    }
    common_free(rowids);
    return rc;
}

/* UPDATE and DELETE: every matched rowid, then each row in turn. */
static int run_matched(struct dml_run *run)
{
    struct engine_dml *dml = run->dml;
    struct engine_value *rowids = NULL;
    size_t count = 0;
    int rc;

    if (dml->one_pass && dml->where_reads_table) {
        return run_live_one_pass(run);
    }
    rc = engine__dml_collect(run, dml->matches, 1, &rowids, &count);
    if (rc != 0 && rc != COMMON_ENOMEM && dml->one_pass) {
        common_free(rowids);
        return run_before_error(run, dml->matches, 1, change_rows);
    }
    if (rc == 0) {
        rc = change_rows(run, rowids, count);
    }
    common_free(rowids);
    return rc;
}

/* How an error that is no constraint's (a datatype mismatch, a function's
 * error) ends the statement: in autocommit sqlite3VdbeHalt rolls the whole
 * statement back; inside a transaction only a statement with a statement
 * journal is undone (engine_dml.may_abort), and otherwise the rows it
 * changed before the error stay and the transaction goes on. */
static enum ast_conflict runtime_error_mode(const struct dml_run *run)
{
    if (!run->db->in_transaction || run->dml->may_abort) {
        return AST_CONFLICT_ABORT;
    }
    return AST_CONFLICT_FAIL;
}

/* Settles the statement: commit (autocommit), or undo per the failed
 * constraint's conflict mode. Returns rc, or the commit's error. */
static int settle(struct dml_run *run, size_t mark, int rc)
{
    struct engine_db *db = run->db;

    if (run->stmt->trigger != NULL) {
        /* A trigger step (trigger_exec.c): the statement that fired it
         * settles the error; changes() is this step's count. */
        if (rc != 0) {
            db->trigger_failed = (int)run->failed;
            return rc;
        }
        db->changes = run->changes;
        db->total_changes += run->changes;
        return 0;
    }
    if (rc != 0 && run->failed == AST_CONFLICT_DEFAULT) {
        run->failed = runtime_error_mode(run);
    }
    /* A statement whose changes are undone counts none: sqlite3VdbeHalt
     * sets changes() to 0 on a statement rollback, and to the rows kept
     * otherwise (OR FAIL keeps those before its error). */
    if (rc != 0 && run->failed == AST_CONFLICT_ROLLBACK) {
        engine__undo_rollback(db, 0);
        db->in_transaction = false;
        db->changes = 0;
        return rc;
    }
    if (rc != 0 && run->failed != AST_CONFLICT_FAIL) {
        engine__undo_rollback(db, mark);
        db->changes = 0;
        return rc;
    }
    /* Autocommit: the rows an OR FAIL statement kept before its error are
     * committed too, and the statement still reports its error. */
    if (!db->in_transaction && engine__transaction_commit(db) != 0) {
        return db->errcode;
    }
    db->changes = run->changes;
    db->total_changes += run->changes;
    return rc;
}

int engine__execute_dml(struct engine_stmt *stmt)
{
    struct dml_run run = {
        .stmt = stmt,
        .dml = stmt->dml,
        .db = stmt->db,
        .exec = &stmt->exec,
        .failed = AST_CONFLICT_DEFAULT,
    };
    size_t mark = stmt->db->undo_count;
    int rc;

    engine__arena_init(&run.scratch);
    engine__arena_init(&run.row_arena);
    rc = run.dml->view                      ? engine__dml_view_run(&run)
         : run.dml->kind == AST_STMT_INSERT ? run_insert(&run)
                                            : run_matched(&run);
    rc = settle(&run, mark, rc);
    engine__arena_close(&run.scratch);
    engine__arena_close(&run.row_arena);
    return rc;
}
