/* SPDX-License-Identifier: MIT
 *
 * dml.h: the plan of an INSERT, UPDATE or DELETE, shared by its planner
 * (dml_plan.c) and its executor (dml_exec.c, dml_row.c).
 *
 * Row expressions (SET values, CHECK constraints, RETURNING, upsert) are
 * evaluated one row at a time over a one-row batch whose columns are the
 * table's columns, then the rowid, then (for upserts) the "excluded" row.
 */
#ifndef SINEW_ENGINE_DML_H
#define SINEW_ENGINE_DML_H

#include "engine_int.h"
#include "plan.h"

struct dml_assignment {
    size_t column; /* table column, or SIZE_MAX for the rowid */
    struct engine_expr *value;
};

struct dml_upsert {
    ptrdiff_t key; /* the unique key its target names; -1: any; -2: rowid */
    bool do_nothing;
    struct dml_assignment *assignments;
    size_t assignment_count;
    struct engine_expr *where; /* or NULL */
};

struct engine_dml {
    enum ast_stmt_kind kind;
    struct engine_table *table;
    struct engine_scope scope;     /* columns, rowid, excluded columns */
    enum ast_conflict conflict;    /* INSERT OR ... / UPDATE OR ... */
    struct engine_expr **defaults; /* per column, compiled; NULL if none */
    struct engine_expr **checks;
    const char **check_names;
    size_t check_count;
    /* INSERT */
    size_t *targets; /* table column per source column; SIZE_MAX: rowid */
    size_t target_count;
    struct engine_op *source; /* NULL for DEFAULT VALUES */
    struct dml_upsert *upserts;
    size_t upsert_count;
    /* UPDATE and DELETE */
    struct engine_op *matches; /* scan + WHERE; the rowid is the last column */
    /* A DELETE without RETURNING whose WHERE holds a live IN (in_live.c):
     * SQLite deletes in one pass, each row as soon as its WHERE passes, so
     * later rows see the earlier deletions. The scan of every row and the
     * WHERE as a row expression; both NULL otherwise. */
    struct engine_op *one_pass_scan;
    struct engine_expr *one_pass_where;
    struct dml_assignment *assignments;
    size_t assignment_count;
    /* RETURNING */
    struct engine_expr **returning;
    bool *returning_realify; /* per column: an INTEGER result becomes REAL */
    size_t returning_count;
    bool may_abort; /* has a statement journal (dml_abort.c) */
    /* the one-row batch row expressions read */
    struct engine_batch row;
};

/* Whether SQLite would give the statement a statement journal
 * (dml_abort.c); planned statements keep it in engine_dml.may_abort. */
bool engine__dml_may_abort(const struct engine_stmt *stmt,
                           const struct engine_dml *dml);

/* Allocates dml->row, the one-row batch (dml_exec.c). */
int engine__dml_init_row(struct engine_stmt *stmt, struct engine_dml *dml);

#endif /* SINEW_ENGINE_DML_H */
