/* SPDX-License-Identifier: MIT
 *
 * dml_abort.c: whether a statement keeps a statement journal.
 *
 * SQLite opens a statement journal only for a statement that may ABORT
 * (sqlite3MayAbort, called while the statement is coded) and writes more
 * than one row. Without one, an error that is no constraint's (a datatype
 * mismatch, a function's error) inside a transaction leaves the rows the
 * statement changed before it. A statement may ABORT when it calls a
 * function (sqlite3VdbeAddFunctionCall) or checks a constraint whose
 * conflict resolution is ABORT (sqlite3GenerateConstraintChecks): the
 * statement's OR clause, else the constraint's own, else ABORT; REPLACE
 * becomes ABORT for a CHECK, and for NOT NULL (at once without a DEFAULT,
 * on the second pass with one). An UPDATE checks NOT NULL and UNIQUE only
 * over columns it assigns, or every key when the rowid changes.
 */
#include "dml.h"

static enum ast_conflict effective(const struct engine_dml *dml,
                                   enum ast_conflict own)
{
    if (dml->conflict != AST_CONFLICT_DEFAULT) {
        return dml->conflict;
    }
    return own != AST_CONFLICT_DEFAULT ? own : AST_CONFLICT_ABORT;
}

bool engine__dml_writes(const struct engine_dml *dml, size_t column)
{
    ptrdiff_t alias = dml->table->rowid_alias;

    if (dml->kind == AST_STMT_INSERT) {
        for (size_t i = 0; i < dml->target_count; i++) {
            size_t target = dml->targets[i];

            if (target == column ||
                (column == SIZE_MAX && (ptrdiff_t)target == alias)) {
                return true;
            }
        }
        return column != SIZE_MAX;
    }
    for (size_t i = 0; i < dml->assignment_count; i++) {
        size_t target = dml->assignments[i].column;

        if (target == column ||
            (column == SIZE_MAX && (ptrdiff_t)target == alias)) {
            return true;
        }
    }
    return false;
}

static bool not_null_may_abort(const struct engine_dml *dml)
{
    const struct engine_table *table = dml->table;

    for (size_t c = 0; c < table->column_count; c++) {
        const struct engine_column_def *column = &table->columns[c];
        enum ast_conflict mode = effective(dml, column->not_null_conflict);

        if (column->not_null && (ptrdiff_t)c != table->rowid_alias &&
            engine__dml_writes(dml, c) &&
            (mode == AST_CONFLICT_ABORT || mode == AST_CONFLICT_REPLACE)) {
            return true;
        }
    }
    return false;
}

static bool keys_may_abort(const struct engine_dml *dml)
{
    const struct engine_table *table = dml->table;
    bool rowid_changes = engine__dml_writes(dml, SIZE_MAX);

    if (rowid_changes &&
        effective(dml, table->rowid_conflict) == AST_CONFLICT_ABORT) {
        return true;
    }
    for (size_t k = 0; k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];
        bool checked = dml->kind == AST_STMT_INSERT || rowid_changes;

        for (size_t i = 0; !checked && i < key->column_count; i++) {
            checked = engine__dml_writes(dml, key->columns[i]);
        }
        if (checked && effective(dml, key->conflict) == AST_CONFLICT_ABORT) {
            return true;
        }
    }
    return false;
}

bool engine__dml_may_abort(const struct engine_stmt *stmt,
                           const struct engine_dml *dml)
{
    enum ast_conflict check_mode = effective(dml, AST_CONFLICT_DEFAULT);

    if (dml->kind == AST_STMT_DELETE || stmt->calls_function) {
        return true;
    }
    for (size_t i = 0; i < dml->upsert_count; i++) {
        if (!dml->upserts[i].do_nothing) {
            return true; /* DO UPDATE checks as UPDATE OR ABORT */
        }
    }
    if (dml->check_count > 0 && (check_mode == AST_CONFLICT_ABORT ||
                                 check_mode == AST_CONFLICT_REPLACE)) {
        return true;
    }
    return not_null_may_abort(dml) || keys_may_abort(dml);
}
