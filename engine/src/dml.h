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

struct engine_access;

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
    /* the UPDATE triggers its DO UPDATE fires (trigger_plan.c); or NULL */
    struct engine_trigger_plan *triggers;
};

struct engine_dml {
    enum ast_stmt_kind kind;
    struct engine_table *table; /* for a view, its columns (dml_view.c) */
    bool view; /* a view written through its INSTEAD OF triggers */
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
    struct engine_op *scan;    /* the scan under matches: every row, or
                                  those access finds */
    struct engine_access *access; /* the WHERE's lookup (access.h), or NULL */
    struct engine_expr *where; /* the WHERE, also a row expression; or NULL */
    bool where_reads_table;    /* a subquery in it reads the table: in one
                                  pass it runs when a row first reaches it
                                  (OP_Once), after the earlier changes */
    /* SQLite changes the rows in one pass, each as soon as its WHERE passes
     * (dml_pass.c): later rows see the earlier changes, and an earlier
     * row's error comes before a later row's WHERE error. */
    bool one_pass;
    bool source_streams; /* INSERT: engine__dml_source_streams() */
    struct dml_assignment *assignments;
    size_t assignment_count;
    /* RETURNING */
    struct engine_expr **returning;
    bool *returning_realify; /* per column: an INTEGER result becomes REAL */
    size_t returning_count;
    bool may_abort; /* has a statement journal (dml_abort.c) */
    /* the trigger programs it may fire (trigger_plan.c); NULL if none */
    struct engine_trigger_plan *triggers;
    /* the one-row batch row expressions read */
    struct engine_batch row;
};

/* Whether SQLite would give the statement a statement journal
 * (dml_abort.c); planned statements keep it in engine_dml.may_abort. */
bool engine__dml_may_abort(const struct engine_stmt *stmt,
                           const struct engine_dml *dml);

/* Whether the statement writes column (SIZE_MAX: the rowid); an INSERT
 * writes every column, and the rowid when it is given (dml_abort.c). */
bool engine__dml_writes(const struct engine_dml *dml, size_t column);

/* Whether SQLite runs an INSERT's source as a coroutine, inserting each
 * row before it computes the next: unless the source reads the table
 * written (readsTable, insert.c) or the INSERT has a trigger (RETURNING
 * is one), when it fills a temporary table first (dml_pass.c). */
bool engine__dml_source_streams(const struct engine_stmt *stmt,
                                const struct engine_dml *dml);

/* Whether a subquery in ast reads table (dml_pass.c). */
bool engine__dml_expr_reads(const struct ast_expr *ast, const char *table);

/* Whether SQLite runs the UPDATE or DELETE in one pass (dml_pass.c). */
bool engine__dml_one_pass(const struct engine_stmt *stmt,
                          const struct engine_dml *dml);

/* Allocates dml->row, the one-row batch (dml_exec.c). */
int engine__dml_init_row(struct engine_stmt *stmt, struct engine_dml *dml);

#endif /* SINEW_ENGINE_DML_H */
