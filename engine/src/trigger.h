/* SPDX-License-Identifier: MIT
 *
 * trigger.h: triggers, shared by their catalog (trigger.c), the planning of
 * their programs into the statements that fire them (trigger_plan.c) and
 * running those programs for each changed row (trigger_exec.c).
 *
 * As in SQLite, a trigger is its CREATE TRIGGER text (sqlite_schema's sql);
 * a top-level INSERT, UPDATE or DELETE that may fire it parses the text
 * again and plans its WHEN and steps as statements of their own, whose
 * NEW.x and OLD.x are parameters bound for each row (SQLite's TK_TRIGGER
 * registers, codeRowTrigger). Each program is planned once per top-level
 * statement and shared by every statement in it that fires the trigger
 * (getRowTrigger's TriggerPrg list on the top-level Parse), so a chain of
 * triggers costs its length, not a power of its width. recursive_triggers
 * is off: a trigger does not fire while its own program runs (OP_Program's
 * check of the frame stack), a check made when the program would run.
 */
#ifndef SINEW_ENGINE_TRIGGER_H
#define SINEW_ENGINE_TRIGGER_H

#include "dml_int.h"
#include "plan.h"

/* What a trigger step's NEW.x and OLD.x read: the parameters 1..n+1 are
 * OLD's columns then its rowid, n+2..2n+2 NEW's. */
struct engine_trigger_scope {
    const struct engine_table *table;
    enum ast_trigger_event event;
    /* The firing statement's conflict mode: when not DEFAULT, it replaces
     * the steps' own (codeTriggerProgram's eOrconf) */
    enum ast_conflict orconf;
    bool *new_used; /* per column: the program reads NEW.x (newmask) */
    struct engine_trigger_cache *cache; /* of the top-level statement */
};

#define ENGINE__TRIGGER_OLD(table, column) ((int)(column) + 1)
#define ENGINE__TRIGGER_NEW(table, column)                                     \
    ((int)(table)->column_count + 2 + (int)(column))

/* The most trigger programs planned inside one another. */
#define ENGINE__TRIGGER_MAX_DEPTH 64

/* One trigger's program for one table and conflict mode (TriggerPrg),
 * planned into the top-level statement, run by each statement in it that
 * fires the trigger. */
struct engine_trigger_program {
    struct engine_trigger *trigger;
    struct engine_trigger_scope scope; /* table and orconf: the cache key */
    struct engine_stmt *when;          /* SELECT of the WHEN; NULL if none */
    struct engine_stmt **steps;
    size_t step_count;
    struct engine_trigger_program *next; /* the cache's list */
};

/* The programs planned for a top-level statement, which owns them (its
 * plan arena; an operator of its own finalizes their statements). */
struct engine_trigger_cache {
    struct engine_stmt *root;
    struct engine_trigger_program *programs; /* newest first */
};

/* The programs a statement may fire, newest trigger first (SQLite links a
 * new trigger at the head of its table's list, sqlite3FinishTrigger). */
struct engine_trigger_plan {
    struct engine_trigger_program **programs; /* the cache's */
    size_t count;
    /* per column of the table: whether a program reads NEW.x; a view's
     * UPDATE leaves the other columns of NEW NULL (sqlite3Update's
     * newmask), which its RETURNING shows */
    const bool *new_used;
};

/* Plans the programs of the triggers dml may fire into dml->triggers
 * (NULL when none), and those of the UPDATE triggers each upsert's DO
 * UPDATE fires into its dml_upsert.triggers, turning off what SQLite does
 * not do for a statement with triggers (one pass, a streaming INSERT
 * source). */
int engine__trigger_plan(struct engine_stmt *stmt, struct engine_dml *dml);

/* Whether an INSTEAD OF trigger on the view dml->table stands for fires
 * for dml's statement: without one, the view cannot be written
 * (sqlite3IsReadOnly). */
int engine__trigger_instead_of(struct engine_stmt *stmt,
                               const struct engine_dml *dml, bool *out);

/* NEW.x / OLD.x in a trigger program: 1 when ast is not one. */
int engine__trigger_compile_ref(struct engine_compile *ctx,
                                const struct ast_expr *ast,
                                struct engine_expr **out);
/* RAISE(...): an error outside a trigger program. */
int engine__trigger_compile_raise(struct engine_compile *ctx,
                                  const struct ast_expr *ast,
                                  struct engine_expr **out);

/* Runs the programs of timing for one row: old (NULL for INSERT) and new
 * (NULL for DELETE) are the table's columns, with their rowids. 0,
 * ENGINE__DML_ROW_SKIPPED when a RAISE(IGNORE) ended a program (the row's
 * change is abandoned), or an error, run->failed set to its conflict
 * mode. */
int engine__trigger_fire(struct dml_run *run, enum ast_trigger_timing timing,
                         const struct engine_value *old, int64_t old_rowid,
                         const struct engine_value *new_values,
                         int64_t new_rowid);

/* Whether run's statement (or the upsert's DO UPDATE running) has
 * programs of timing. */
bool engine__trigger_has(const struct dml_run *run,
                         enum ast_trigger_timing timing);

#endif /* SINEW_ENGINE_TRIGGER_H */
