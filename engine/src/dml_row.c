/* SPDX-License-Identifier: MIT
 *
 * dml_row.c: one row of an INSERT, UPDATE or DELETE: NOT NULL, CHECK and
 * UNIQUE constraints with their conflict resolution (lang_conflict.html:
 * ROLLBACK, ABORT, FAIL, IGNORE, REPLACE; the statement's OR clause
 * overrides the constraint's own), upserts (lang_upsert.html), the change
 * with its undo record, and the RETURNING row.
 */
#include <stdio.h>
#include <string.h>

#include "dml_int.h"
#include "trigger.h"

#define ROW_SKIPPED ENGINE__DML_ROW_SKIPPED

static enum ast_conflict resolve(const struct dml_run *run,
                                 enum ast_conflict own)
{
    /* An upsert's DO UPDATE runs as UPDATE OR ABORT whatever the INSERT's
     * own OR clause (sqlite3UpsertDoUpdate passes OE_Abort). */
    if (run->is_upsert_update) {
        return AST_CONFLICT_ABORT;
    }
    if (run->dml->conflict != AST_CONFLICT_DEFAULT) {
        return run->dml->conflict;
    }
    return own != AST_CONFLICT_DEFAULT ? own : AST_CONFLICT_ABORT;
}

static int constraint_error(struct dml_run *run, enum ast_conflict mode,
                            const char *kind, const char *what)
{
    run->failed = mode;
    return engine__error(run->exec, ENGINE_ECONSTRAINT,
                         "%s constraint failed: %s", kind, what);
}

/* Loads the one-row batch: the row, its rowid, the excluded row. */
static void load_row(struct dml_run *run, const struct engine_value *values,
                     int64_t rowid, const struct engine_value *excluded)
{
    struct engine_dml *dml = run->dml;
    size_t n = dml->table->column_count;

    for (size_t c = 0; c < n; c++) {
        struct engine_value v = (ptrdiff_t)c == dml->table->rowid_alias
                                    ? engine__value_int(rowid)
                                    : values[c];

        engine__vector_set(&dml->row.columns[c], 0, 0, v);
    }
    engine__vector_set(&dml->row.columns[n], 0, 0, engine__value_int(rowid));
    for (size_t c = 0; excluded != NULL && c < n; c++) {
        engine__vector_set(&dml->row.columns[n + 1 + c], 0, 0, excluded[c]);
    }
}

int engine__dml_eval(struct dml_run *run, struct engine_expr *expr,
                     struct engine_value *out)
{
    struct engine_eval eval = {.exec = run->exec, .arena = &run->row_arena};
    const struct engine_vector *result;
    int rc = engine__expr_eval(expr, &eval, &run->dml->row, &result);

    if (rc == 0) {
        *out = engine__vector_get(result, 0);
    }
    return rc;
}

static int check_not_null(struct dml_run *run, struct engine_value *values)
{
    const struct engine_table *table = run->dml->table;
    char name[ENGINE__ERRMSG_SIZE];

    for (size_t c = 0; c < table->column_count; c++) {
        const struct engine_column_def *column = &table->columns[c];
        enum ast_conflict mode;

        if (!column->not_null || values[c].type != ENGINE_NULL ||
            (ptrdiff_t)c == table->rowid_alias) {
            continue;
        }
        mode = resolve(run, column->not_null_conflict);
        if (mode == AST_CONFLICT_IGNORE) {
            return ROW_SKIPPED;
        }
        if (mode == AST_CONFLICT_REPLACE && run->dml->defaults[c] != NULL) {
            /* REPLACE stores the column's DEFAULT instead, under the
             * column's affinity like any stored value (OP_MakeRecord):
             * DEFAULT '12' in a NUMERIC column is stored as 12. */
            int rc = engine__dml_eval(run, run->dml->defaults[c], &values[c]);

            if (rc == 0) {
                rc = engine__value_apply_affinity(&values[c], column->affinity,
                                                  &run->row_arena);
                rc =
                    rc != 0 ? engine__error(run->exec, rc, "out of memory") : 0;
            }
            if (rc != 0) {
                return rc;
            }
            if (values[c].type != ENGINE_NULL) {
                continue;
            }
        }
        snprintf(name, sizeof(name), "%s.%s", table->name, column->name);
        return constraint_error(
            run, mode == AST_CONFLICT_REPLACE ? AST_CONFLICT_ABORT : mode,
            "NOT NULL", name);
    }
    return 0;
}

static int check_checks(struct dml_run *run)
{
    struct engine_dml *dml = run->dml;

    for (size_t i = 0; i < dml->check_count; i++) {
        struct engine_value v;
        enum ast_conflict mode;
        int rc = engine__dml_eval(run, dml->checks[i], &v);

        if (rc != 0) {
            return rc;
        }
        if (engine__value_truth(&v) != 0) {
            continue; /* true or NULL passes */
        }
        mode = resolve(run, AST_CONFLICT_DEFAULT);
        if (mode == AST_CONFLICT_IGNORE) {
            return ROW_SKIPPED;
        }
        return constraint_error(
            run, mode == AST_CONFLICT_REPLACE ? AST_CONFLICT_ABORT : mode,
            "CHECK", dml->check_names[i] ? dml->check_names[i] : "?");
    }
    return 0;
}

/* Applies each column's affinity to values. */
static int apply_affinities(struct dml_run *run, struct engine_value *values)
{
    const struct engine_table *table = run->dml->table;

    for (size_t c = 0; c < table->column_count; c++) {
        int rc = engine__value_apply_affinity(
            &values[c], table->columns[c].affinity, &run->row_arena);

        if (rc != 0) {
            return engine__error(run->exec, rc, "out of memory");
        }
    }
    return 0;
}

/* A rowid given as a value: INTEGER after INTEGER affinity, or an error. */
static int rowid_of(struct dml_run *run, struct engine_value v, int64_t *out)
{
    int rc = engine__value_apply_affinity(&v, ENGINE_AFFINITY_INTEGER,
                                          &run->row_arena);

    if (rc != 0) {
        return engine__error(run->exec, rc, "out of memory");
    }
    if (v.type != ENGINE_INTEGER) {
        run->failed = AST_CONFLICT_DEFAULT;
        return engine__error(run->exec, ENGINE_EMISMATCH, "datatype mismatch");
    }
    *out = v.u.i;
    return 0;
}

/* A row already holding a unique value of the new row. */
struct conflict {
    ptrdiff_t slot;
    ptrdiff_t key; /* the unique key, or -2 for the rowid */
};

static size_t find_conflicts(struct dml_run *run,
                             const struct engine_value *values, int64_t rowid,
                             ptrdiff_t self, struct conflict *out)
{
    const struct engine_table *table = run->dml->table;
    struct engine_value key_values[ENGINE_MAX_COLUMNS];
    ptrdiff_t slot = engine__table_find_rowid(table, rowid);
    size_t n = 0;

    if (slot >= 0 && slot != self) {
        out[n++] = (struct conflict){slot, -2};
    }
    /* SQLite links each new index at the head of the table's list
     * (sqlite3CreateIndex) and checks the list in order
     * (sqlite3GenerateConstraintChecks), so the key created last is
     * checked, and reported, first. */
    for (size_t k = table->key_count; k-- > 0;) {
        const struct engine_unique_key *key = &table->keys[k];

        for (size_t i = 0; i < key->column_count; i++) {
            key_values[i] = values[key->columns[i]];
        }
        slot = engine__table_find_key(table, k, key_values, self);
        if (slot >= 0) {
            out[n++] = (struct conflict){slot, (ptrdiff_t)k};
        }
    }
    return n;
}

/* With ON CONFLICT targets, SQLite checks the targets' constraints
 * before the others ("UPSERT constraint goes first",
 * sqlite3GenerateConstraintChecks), so a row that conflicts on both
 * takes the DO UPDATE or DO NOTHING: the targeted conflicts move to the
 * front, in the order of the ON CONFLICT clauses. */
static void upsert_targets_first(const struct dml_run *run,
                                 struct conflict *conflicts, size_t count)
{
    size_t front = 0;

    for (size_t u = 0; u < run->dml->upsert_count; u++) {
        ptrdiff_t key = run->dml->upserts[u].key;

        for (size_t i = front; key != -1 && i < count; i++) {
            if (conflicts[i].key == key) {
                struct conflict hit = conflicts[i];

                memmove(&conflicts[front + 1], &conflicts[front],
                        (i - front) * sizeof(*conflicts));
                conflicts[front++] = hit;
                break;
            }
        }
    }
}

static int unique_error(struct dml_run *run, enum ast_conflict mode,
                        const struct conflict *conflict)
{
    const struct engine_table *table = run->dml->table;
    char names[ENGINE__ERRMSG_SIZE];

    if (conflict->key == -2) {
        snprintf(names, sizeof(names), "%s.%s", table->name,
                 table->rowid_alias >= 0
                     ? table->columns[table->rowid_alias].name
                     : "rowid");
    } else {
        const struct engine_unique_key *key = &table->keys[conflict->key];

        engine__key_columns_text(table, key->columns, key->column_count, names,
                                 sizeof(names));
    }
    return constraint_error(run, mode, "UNIQUE", names);
}

static enum ast_conflict conflict_mode(struct dml_run *run,
                                       const struct conflict *conflict)
{
    const struct engine_table *table = run->dml->table;

    return resolve(run, conflict->key >= 0 ? table->keys[conflict->key].conflict
                                           : table->rowid_conflict);
}

/* REPLACE: deletes every conflicting row; else the resolution's outcome. */
static int resolve_conflicts(struct dml_run *run,
                             const struct conflict *conflicts, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        enum ast_conflict mode = conflict_mode(run, &conflicts[i]);

        if (mode == AST_CONFLICT_IGNORE) {
            return ROW_SKIPPED;
        }
        if (mode != AST_CONFLICT_REPLACE) {
            return unique_error(run, mode, &conflicts[i]);
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (!run->dml->table->deleted[conflicts[i].slot]) {
            int rc = engine__dml_delete_row(run, (size_t)conflicts[i].slot);

            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* The upsert that handles the first conflict, or NULL. */
static const struct dml_upsert *find_upsert(const struct dml_run *run,
                                            const struct conflict *first)
{
    for (size_t i = 0; i < run->dml->upsert_count; i++) {
        const struct dml_upsert *upsert = &run->dml->upserts[i];

        if (upsert->key == -1 || upsert->key == first->key) {
            return upsert;
        }
    }
    return NULL;
}

static int run_upsert(struct dml_run *run, const struct dml_upsert *upsert,
                      size_t slot, const struct engine_value *excluded)
{
    struct engine_value keep;
    int rc;

    if (upsert->do_nothing) {
        return ROW_SKIPPED;
    }
    if (upsert->where != NULL) {
        struct engine_value old[ENGINE_MAX_COLUMNS];
        const struct engine_table *table = run->dml->table;

        for (size_t c = 0; c < table->column_count; c++) {
            old[c] = engine__table_get(table, slot, c);
        }
        load_row(run, old, table->rowids[slot], excluded);
        rc = engine__dml_eval(run, upsert->where, &keep);
        if (rc != 0 || engine__value_truth(&keep) != 1) {
            return rc != 0 ? rc : ROW_SKIPPED;
        }
    }
    run->is_upsert_update = true;
    run->upsert_triggers = upsert->triggers;
    rc = engine__dml_update_row(run, slot, upsert->assignments,
                                upsert->assignment_count, excluded);
    run->is_upsert_update = false;
    run->upsert_triggers = NULL;
    return rc == 0 ? ROW_SKIPPED : rc;
}

/* Appends the RETURNING row of the row loaded in the one-row batch. */
static int add_returning(struct dml_run *run)
{
    struct engine_stmt *stmt = run->stmt;
    size_t width = run->dml->returning_count;
    struct engine_value *row;

    if (width == 0) {
        return 0;
    }
    if (stmt->returning_count == stmt->returning_capacity) {
        size_t grown =
            stmt->returning_capacity ? stmt->returning_capacity * 2 : 16;
        struct engine_value *more = common_realloc_array(
            stmt->returning, grown * width + 1, sizeof(*more));

        if (more == NULL) {
            return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
        stmt->returning = more;
        stmt->returning_capacity = grown;
    }
    row = &stmt->returning[stmt->returning_count * width];
    for (size_t c = 0; c < width; c++) {
        int rc = engine__dml_eval(run, run->dml->returning[c], &row[c]);

        if (rc == 0 && run->dml->returning_realify[c] &&
            row[c].type == ENGINE_INTEGER) {
            row[c] = engine__value_real((double)row[c].u.i);
        }

        if (rc == 0 && engine__value_keep(&stmt->result_arena, &row[c]) != 0) {
            rc = engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
        if (rc != 0) {
            return rc;
        }
    }
    stmt->returning_count++;
    return 0;
}

int engine__dml_load(struct dml_run *run, const struct engine_value *values,
                     int64_t rowid)
{
    load_row(run, values, rowid, NULL);
    return 0;
}

int engine__dml_returning(struct dml_run *run,
                          const struct engine_value *values, int64_t rowid)
{
    load_row(run, values, rowid, NULL);
    return add_returning(run);
}

/* The checks every new row version passes, loaded in the one-row batch. */
static int check_row(struct dml_run *run, struct engine_value *values,
                     int64_t rowid)
{
    int rc = check_not_null(run, values);

    if (rc == 0) {
        load_row(run, values, rowid, NULL);
        rc = check_checks(run);
    }
    return rc;
}

static int insert_checked(struct dml_run *run, struct engine_value *values,
                          int64_t rowid)
{
    struct engine_table *table = run->dml->table;
    size_t slot;
    int rc = engine__table_insert(table, rowid, values, &slot);

    if (rc == 0) {
        rc = engine__undo_record(run->db, ENGINE_UNDO_INSERT, table, slot);
        if (rc != 0) {
            engine__table_delete(table, slot);
        } else {
            /* On failure the statement's rollback undoes the insert. */
            rc = engine__redo_insert(run->db, table, slot);
        }
    }
    if (rc != 0) {
        return engine__error(run->exec, rc, "out of memory");
    }
    run->db->last_insert_rowid = rowid;
    run->changes++;
    load_row(run, values, rowid, NULL);
    return add_returning(run);
}

/* OP_NewRowid (vdbe.c): the largest rowid + 1; once the largest is
 * 9223372036854775807, up to 100 random positive rowids not in use, then
 * SQLITE_FULL. */
static int new_rowid(struct dml_run *run, int64_t *rowid)
{
    const struct engine_table *table = run->dml->table;

    *rowid = engine__table_next_rowid(run->dml->table);
    for (int attempt = 0; *rowid == INT64_MIN && attempt < 100; attempt++) {
        int64_t candidate =
            (int64_t)(engine__random_next(&run->db->random_state) &
                      (uint64_t)(INT64_MAX >> 1)) +
            1;

        if (engine__table_find_rowid(table, candidate) < 0) {
            *rowid = candidate;
        }
    }
    if (*rowid == INT64_MIN) {
        return engine__error(run->exec, ENGINE_ECONSTRAINT,
                             "database or disk is full");
    }
    return 0;
}

int engine__dml_insert_row(struct dml_run *run, struct engine_value *values,
                           bool has_rowid, int64_t rowid)
{
    struct engine_table *table = run->dml->table;
    struct conflict conflicts[ENGINE_MAX_COLUMNS + 1];
    const struct dml_upsert *upsert;
    size_t count;
    int rc = apply_affinities(run, values);

    /* BEFORE triggers see NEW with the affinities applied and, before the
     * rowid is chosen, NEW.rowid -1 (sqlite3Insert). */
    if (rc == 0) {
        rc = engine__trigger_fire(run, AST_TRIGGER_BEFORE, NULL, 0, values,
                                  has_rowid ? rowid : -1);
    }
    if (rc == 0 && !has_rowid) {
        rc = new_rowid(run, &rowid);
    }
    if (rc == 0 && table->rowid_alias >= 0) {
        values[table->rowid_alias] = engine__value_int(rowid);
    }
    if (rc == 0) {
        rc = check_row(run, values, rowid);
    }
    if (rc != 0) {
        return rc;
    }
    count = find_conflicts(run, values, rowid, -1, conflicts);
    upsert_targets_first(run, conflicts, count);
    upsert = count > 0 ? find_upsert(run, &conflicts[0]) : NULL;
    if (upsert != NULL) {
        return run_upsert(run, upsert, (size_t)conflicts[0].slot, values);
    }
    rc = count > 0 ? resolve_conflicts(run, conflicts, count) : 0;
    rc = rc == 0 ? insert_checked(run, values, rowid) : rc;
    return rc == 0 ? engine__trigger_fire(run, AST_TRIGGER_AFTER, NULL, 0,
                                          values, rowid)
                   : rc;
}

static bool is_overridden(const struct dml_assignment *assignments,
                          size_t count, size_t i)
{
    for (size_t j = i + 1; j < count; j++) {
        if (assignments[j].column == assignments[i].column) {
            return true;
        }
    }
    return false;
}

/* New values of slot's row: the old ones with the assignments applied. */
static int assign(struct dml_run *run, size_t slot,
                  const struct dml_assignment *assignments, size_t count,
                  const struct engine_value *excluded,
                  struct engine_value *values, int64_t *rowid)
{
    const struct engine_table *table = run->dml->table;
    struct engine_value computed[ENGINE_MAX_COLUMNS + 1];

    for (size_t c = 0; c < table->column_count; c++) {
        values[c] = engine__table_get(table, slot, c);
    }
    *rowid = table->rowids[slot];
    load_row(run, values, *rowid, excluded);
    /* sqlite3Update: the new rowid is computed and OP_MustBeInt-checked
     * first, then the other SET values in table column order (aXRef, the
     * last assignment of a column wins), all from the old row. */
    for (size_t i = 0; i < count; i++) {
        if (assignments[i].column == SIZE_MAX &&
            !is_overridden(assignments, count, i)) {
            int rc = engine__dml_eval(run, assignments[i].value, &computed[i]);

            if (rc == 0) {
                rc = rowid_of(run, computed[i], rowid);
            }
            if (rc != 0) {
                return rc;
            }
        }
    }
    for (size_t c = 0; c < table->column_count; c++) {
        for (size_t i = 0; i < count; i++) {
            int rc;

            if (assignments[i].column != c ||
                is_overridden(assignments, count, i)) {
                continue;
            }
            rc = engine__dml_eval(run, assignments[i].value, &computed[i]);
            if (rc != 0) {
                return rc;
            }
        }
    }
    for (size_t i = 0; i < count; i++) {
        size_t column = assignments[i].column;

        if (column != SIZE_MAX && !is_overridden(assignments, count, i)) {
            values[column] = computed[i];
        }
    }
    return apply_affinities(run, values);
}

/* A copy of slot's row (bytes in the row arena): OLD for its triggers. */
static int keep_old(struct dml_run *run, size_t slot, struct engine_value *old)
{
    const struct engine_table *table = run->dml->table;

    for (size_t c = 0; c < table->column_count; c++) {
        old[c] = engine__table_get(table, slot, c);
        if (engine__value_keep(&run->row_arena, &old[c]) != 0) {
            return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static bool is_assigned(const struct dml_assignment *assignments, size_t count,
                        size_t column)
{
    for (size_t i = 0; i < count; i++) {
        if (assignments[i].column == column) {
            return true;
        }
    }
    return false;
}

/* After the BEFORE triggers (sqlite3Update): a row they deleted or moved
 * is left alone; the columns the UPDATE does not set are read again, as
 * the triggers may have changed them. */
static int reload_after_before(struct dml_run *run, size_t slot,
                               int64_t old_rowid,
                               const struct dml_assignment *assignments,
                               size_t count, struct engine_value *values)
{
    const struct engine_table *table = run->dml->table;

    if (table->deleted[slot] || table->rowids[slot] != old_rowid) {
        return ROW_SKIPPED;
    }
    for (size_t c = 0; c < table->column_count; c++) {
        if ((ptrdiff_t)c != table->rowid_alias &&
            !is_assigned(assignments, count, c)) {
            values[c] = engine__table_get(table, slot, c);
            if (engine__value_keep(&run->row_arena, &values[c]) != 0) {
                return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
            }
        }
    }
    return 0;
}

int engine__dml_update_row(struct dml_run *run, size_t slot,
                           const struct dml_assignment *assignments,
                           size_t assignment_count,
                           const struct engine_value *excluded)
{
    struct engine_table *table = run->dml->table;
    struct engine_value values[ENGINE_MAX_COLUMNS + 1];
    struct conflict conflicts[ENGINE_MAX_COLUMNS + 1];
    size_t count;
    struct engine_value old[ENGINE_MAX_COLUMNS + 1];
    /* An upsert's DO UPDATE fires the UPDATE triggers of its SET list. */
    bool triggers = excluded != NULL ? run->upsert_triggers != NULL
                                     : run->dml->triggers != NULL &&
                                           run->dml->kind == AST_STMT_UPDATE;
    int64_t old_rowid = table->rowids[slot];
    int64_t rowid;
    int rc = triggers ? keep_old(run, slot, old) : 0;

    rc = rc ? rc
            : assign(run, slot, assignments, assignment_count, excluded, values,
                     &rowid);
    if (rc == 0 && table->rowid_alias >= 0) {
        values[table->rowid_alias] = engine__value_int(rowid);
    }
    if (rc == 0 && triggers) {
        rc = engine__trigger_fire(run, AST_TRIGGER_BEFORE, old, old_rowid,
                                  values, rowid);
        rc = rc ? rc
                : reload_after_before(run, slot, old_rowid, assignments,
                                      assignment_count, values);
    }
    if (rc == 0) {
        rc = check_row(run, values, rowid);
    }
    if (rc != 0) {
        return rc;
    }
    count = find_conflicts(run, values, rowid, (ptrdiff_t)slot, conflicts);
    rc = count > 0 ? resolve_conflicts(run, conflicts, count) : 0;
    if (rc != 0) {
        return rc;
    }
    rc = engine__undo_record(run->db, ENGINE_UNDO_UPDATE, table, slot);
    if (rc == 0) {
        rc = engine__table_update(table, slot, rowid, values);
    }
    if (rc == 0) {
        const struct engine_undo *undo =
            &run->db->undo[run->db->undo_count - 1];

        rc = engine__redo_update(run->db, table, slot, undo->rowid,
                                 undo->values);
    }
    if (rc != 0) {
        return engine__error(run->exec, rc, "out of memory");
    }
    run->changes++;
    /* values may still view the old row's bytes, which the update freed
     * ("SET a = a"): RETURNING reads the row as it is now stored. */
    for (size_t c = 0; c < table->column_count; c++) {
        values[c] = engine__table_get(table, slot, c);
    }
    load_row(run, values, rowid, NULL);
    rc = add_returning(run);
    return rc == 0 && triggers
               ? engine__trigger_fire(run, AST_TRIGGER_AFTER, old, old_rowid,
                                      values, rowid)
               : rc;
}

int engine__dml_delete_row(struct dml_run *run, size_t slot)
{
    struct engine_table *table = run->dml->table;
    int64_t rowid = table->rowids[slot];
    int rc = engine__undo_record(run->db, ENGINE_UNDO_DELETE, table, slot);

    if (rc != 0) {
        return engine__error(run->exec, rc, "out of memory");
    }
    engine__table_delete(table, slot);
    rc = engine__redo_delete(run->db, table, rowid);
    return rc ? engine__error(run->exec, rc, "out of memory") : 0;
}

/* Loads the row at slot; with keep, its bytes are copied to the row arena
 * so that the row may go while the batch is still read. */
static int load_slot(struct dml_run *run, size_t slot, bool keep)
{
    const struct engine_table *table = run->dml->table;
    struct engine_value values[ENGINE_MAX_COLUMNS + 1];

    for (size_t c = 0; c < table->column_count; c++) {
        values[c] = engine__table_get(table, slot, c);
        if (keep && engine__value_keep(&run->row_arena, &values[c]) != 0) {
            return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    load_row(run, values, table->rowids[slot], NULL);
    return 0;
}

int engine__dml_row_passes(struct dml_run *run, size_t slot,
                           struct engine_expr *where, bool *passes)
{
    struct engine_value v;
    int rc;

    rc = load_slot(run, slot, false);
    if (rc == 0) {
        rc = engine__dml_eval(run, where, &v);
    }
    *passes = rc == 0 && engine__value_truth(&v) == 1;
    return rc;
}

/* DELETE of one matched row. RETURNING reads the row as it was, once it
 * is gone (SQLite codes RETURNING as an AFTER trigger, codeReturningTrigger
 * in trigger.c): an IN over the table no longer finds it. */
int engine__dml_delete_matched(struct dml_run *run, size_t slot)
{
    const struct engine_table *table = run->dml->table;
    struct engine_value old[ENGINE_MAX_COLUMNS + 1];
    bool triggers = run->dml->triggers != NULL;
    int64_t rowid = table->rowids[slot];
    int rc = triggers ? keep_old(run, slot, old) : 0;

    if (rc == 0 && triggers) {
        /* A BEFORE trigger may delete or move the row: it is then left
         * alone (sqlite3GenerateRowDelete seeks it again). */
        rc = engine__trigger_fire(run, AST_TRIGGER_BEFORE, old, rowid, NULL, 0);
        if (rc == 0 && (table->deleted[slot] || table->rowids[slot] != rowid)) {
            rc = ROW_SKIPPED;
        }
    }
    if (rc == 0) {
        rc = load_slot(run, slot, true);
    }
    if (rc == 0) {
        rc = engine__dml_delete_row(run, slot);
    }
    if (rc == 0) {
        rc = add_returning(run);
    }
    if (rc == 0) {
        run->changes++;
        rc = engine__trigger_fire(run, AST_TRIGGER_AFTER, old, rowid, NULL, 0);
    }
    return rc;
}
