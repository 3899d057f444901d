/* SPDX-License-Identifier: MIT
 *
 * dml_int.h: the state of one INSERT/UPDATE/DELETE run, shared by
 * dml_exec.c (statement level) and dml_row.c (one row: constraints,
 * conflicts, the change itself, RETURNING).
 */
#ifndef SINEW_ENGINE_DML_INT_H
#define SINEW_ENGINE_DML_INT_H

#include "dml.h"

struct dml_run {
    struct engine_stmt *stmt;
    struct engine_dml *dml;
    struct engine_db *db;
    struct engine_exec *exec;
    struct engine_arena scratch;   /* collected rows' bytes */
    struct engine_arena row_arena; /* one row's evaluation; reset per row */
    enum ast_conflict failed;      /* conflict mode of the failed constraint */
    bool is_upsert_update;         /* in a DO UPDATE: every conflict ABORTs */
    /* the UPDATE triggers of the DO UPDATE running; or NULL */
    struct engine_trigger_plan *upsert_triggers;
    int64_t changes;
};

/* Evaluates a row expression over the one-row batch as last loaded. */
int engine__dml_eval(struct dml_run *run, struct engine_expr *expr,
                     struct engine_value *out);

int engine__dml_collect_row(struct dml_run *run,
                            const struct engine_batch *batch, uint32_t i,
                            size_t width, struct engine_value **rows,
                            size_t *count, size_t *capacity);

/* One candidate row: values of every table column (the rowid alias column
 * ignored) and its rowid, if one was given. */
int engine__dml_insert_row(struct dml_run *run, struct engine_value *values,
                           bool has_rowid, int64_t rowid);

/* Updates the live row at slot; the new values come from assignments
 * evaluated over the old row (and, for an upsert, the excluded row). */
int engine__dml_update_row(struct dml_run *run, size_t slot,
                           const struct dml_assignment *assignments,
                           size_t assignment_count,
                           const struct engine_value *excluded);

/* Deletes slot's row (REPLACE's victims: not counted, no RETURNING). */
int engine__dml_delete_row(struct dml_run *run, size_t slot);

/* Deletes a row a DELETE matched: RETURNING, then counted. */
int engine__dml_delete_matched(struct dml_run *run, size_t slot);

/* Whether the live row at slot passes where (true, not false or NULL). */
int engine__dml_row_passes(struct dml_run *run, size_t slot,
                           struct engine_expr *where, bool *passes);

/* Runs op (an INSERT's source, an UPDATE's or DELETE's matches) to its
 * end, keeping width values of each row in *rows (dml_exec.c). */
int engine__dml_collect(struct dml_run *run, struct engine_op *op, size_t width,
                        struct engine_value **rows, size_t *count);

/* Loads a row and its rowid in the one-row batch (dml_row.c). */
int engine__dml_load(struct dml_run *run, const struct engine_value *values,
                     int64_t rowid);

/* Loads a row, then appends its RETURNING row (dml_row.c). */
int engine__dml_returning(struct dml_run *run,
                          const struct engine_value *values, int64_t rowid);

/* A write to a view (dml_view.c): dml->table becomes the view's columns,
 * or SQLite's error when no INSTEAD OF trigger fires for it. */
int engine__dml_view_plan(struct engine_stmt *stmt, struct engine_dml *dml,
                          const struct engine_view *view);
/* The view's rows an UPDATE or DELETE passes its triggers, in
 * dml->matches. */
int engine__dml_view_matches(struct engine_stmt *stmt, struct engine_dml *dml,
                             struct ast_expr *where);
/* Runs a write to a view: each row to its INSTEAD OF triggers. */
int engine__dml_view_run(struct dml_run *run);

/* dml_row.c's "nothing done, no error" outcome (IGNORE, DO NOTHING). */
#define ENGINE__DML_ROW_SKIPPED 1

#endif /* SINEW_ENGINE_DML_INT_H */
