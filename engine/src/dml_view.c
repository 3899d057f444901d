/* SPDX-License-Identifier: MIT
 *
 * dml_view.c: INSERT, UPDATE and DELETE on a view, which only its INSTEAD
 * OF triggers can do (without one for the statement's event the view
 * cannot be written, sqlite3IsReadOnly). No row is stored: each row is
 * handed to the triggers, as SQLite does.
 *
 * The view stands as a table of its columns (names, affinities and
 * collations of "SELECT * FROM v"), without rowid, keys or storage, so
 * the statement plans as one on a table: NEW.x and OLD.x, the SET values
 * and RETURNING read that table's row.
 *
 * INSERT: each source row is NEW (no affinity, no defaults; NEW.rowid the
 * rowid given, or -1), sqlite3Insert's view path. UPDATE and DELETE read
 * the view's rows that pass the WHERE first, all of them, as
 * sqlite3MaterializeView fills an ephemeral table with "SELECT * FROM v
 * WHERE ...": OLD is such a row, its rowid its place (1, 2, ...). An
 * UPDATE's NEW is the SET values over OLD with the view's affinities;
 * a column it does not set is OLD's when a trigger reads NEW.x and NULL
 * otherwise (sqlite3Update's newmask), which RETURNING shows. RETURNING
 * reads NEW (OLD for DELETE). No row counts in changes().
 */
#include <string.h>

#include "dml_int.h"
#include "trigger.h"

/* The view as a table of the columns select gives. */
static int view_table(struct engine_stmt *stmt, const char *name,
                      const struct engine_select_arm *arm,
                      struct engine_table **out)
{
    struct engine_table *table = engine__plan_alloc(stmt, sizeof(*table));
    struct engine_column_def *columns =
        engine__plan_alloc(stmt, (arm->column_count + 1) * sizeof(*columns));

    if (table == NULL || columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t c = 0; c < arm->column_count; c++) {
        const struct engine_expr *e =
            arm->projected != NULL ? arm->projected[c] : NULL;

        columns[c].name = arm->names[c];
        columns[c].affinity = arm->affinities[c];
        columns[c].collation = e != NULL && e->has_collation
                                   ? e->collation
                                   : ENGINE_COLLATION_BINARY;
    }
    table->name = (char *)name;
    table->columns = columns;
    table->column_count = arm->column_count;
    table->rowid_alias = -1;
    *out = table;
    return 0;
}

/* "SELECT * FROM name [WHERE where]", planned. */
static int plan_rows(struct engine_stmt *stmt, const char *name,
                     struct ast_expr *where, struct engine_select_arm *arm)
{
    struct ast_select *select = engine__plan_alloc(stmt, sizeof(*select));
    struct ast_result_column *star = engine__plan_alloc(stmt, sizeof(*star));
    struct ast_from_item *from = engine__plan_alloc(stmt, sizeof(*from));

    if (select == NULL || star == NULL || from == NULL) {
        return COMMON_ENOMEM;
    }
    star->kind = AST_RESULT_STAR;
    from->table = name;
    select->columns = star;
    select->column_count = 1;
    select->from = from;
    select->from_count = 1;
    select->where = where;
    return engine__plan_select_arm(stmt, select, arm);
}

int engine__dml_view_plan(struct engine_stmt *stmt, struct engine_dml *dml,
                          const struct engine_view *view)
{
    struct engine_select_arm arm;
    bool writable = false;
    int rc = plan_rows(stmt, view->name, NULL, &arm);

    rc = rc != 0 ? rc : view_table(stmt, view->name, &arm, &dml->table);
    if (rc != 0) {
        return rc;
    }
    dml->view = true;
    rc = engine__trigger_instead_of(stmt, dml, &writable);
    if (rc == 0 && !writable) {
        rc = engine__db_error(stmt->db, ENGINE_ESQL,
                              "cannot modify %s because it is a view",
                              view->name);
    }
    return rc;
}

int engine__dml_view_matches(struct engine_stmt *stmt, struct engine_dml *dml,
                             struct ast_expr *where)
{
    struct engine_select_arm arm;
    int rc = plan_rows(stmt, dml->table->name, where, &arm);

    if (rc == 0 && arm.column_count != dml->table->column_count) {
        rc =
            engine__db_error(stmt->db, ENGINE_ESQL,
                             "view %s changed while planned", dml->table->name);
    }
    dml->matches = arm.root;
    return rc;
}

/* The rowid an INSERT gives: NULL is -1, others must be integers
 * (OP_MustBeInt). */
static int given_rowid(struct dml_run *run, struct engine_value v,
                       int64_t *rowid)
{
    if (v.type == ENGINE_NULL) {
        *rowid = -1;
        return 0;
    }
    if (engine__value_apply_affinity(&v, ENGINE_AFFINITY_INTEGER,
                                     &run->row_arena) != 0) {
        return engine__error(run->exec, COMMON_ENOMEM, "out of memory");
    }
    if (v.type != ENGINE_INTEGER) {
        return engine__error(run->exec, ENGINE_EMISMATCH, "datatype mismatch");
    }
    *rowid = v.u.i;
    return 0;
}

/* Hands a row's OLD and NEW to the INSTEAD OF triggers, then RETURNING
 * reads shown (NEW, or OLD for DELETE). */
static int fire(struct dml_run *run, const struct engine_value *old,
                int64_t old_rowid, const struct engine_value *new_values,
                int64_t new_rowid)
{
    int rc = engine__trigger_fire(run, AST_TRIGGER_INSTEAD_OF, old, old_rowid,
                                  new_values, new_rowid);

    if (rc == ENGINE__DML_ROW_SKIPPED) {
        return 0; /* RAISE(IGNORE): no RETURNING row either */
    }
    if (rc == 0) {
        rc = new_values != NULL
                 ? engine__dml_returning(run, new_values, new_rowid)
                 : engine__dml_returning(run, old, old_rowid);
    }
    return rc;
}

static int insert_rows(struct dml_run *run, const struct engine_value *rows,
                       size_t count)
{
    struct engine_dml *dml = run->dml;
    struct engine_value values[ENGINE_MAX_COLUMNS + 1];
    size_t width = dml->target_count;
    int rc = 0;

    for (size_t r = 0; rc == 0 && r < count; r++) {
        int64_t rowid = -1;

        engine__arena_reset(&run->row_arena);
        for (size_t c = 0; c < dml->table->column_count; c++) {
            values[c] = engine__value_null();
        }
        for (size_t i = 0; rc == 0 && i < width; i++) {
            if (dml->targets[i] == SIZE_MAX) {
                rc = given_rowid(run, rows[r * width + i], &rowid);
            } else {
                values[dml->targets[i]] = rows[r * width + i];
            }
        }
        rc = rc != 0 ? rc : fire(run, NULL, 0, values, rowid);
    }
    return rc;
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

/* The value of assignment i, over the row loaded. */
static int assigned(struct dml_run *run, size_t i, struct engine_value *out)
{
    return engine__dml_eval(run, run->dml->assignments[i].value, out);
}

/* NEW of an UPDATE: the new rowid first (OP_MustBeInt), then the SET
 * values in column order, all over OLD; the view's affinities; a column
 * not set that no trigger reads as NEW.x is NULL (columns past the 32nd
 * are always read). */
static int new_row(struct dml_run *run, const struct engine_value *old,
                   int64_t old_rowid, struct engine_value *values,
                   int64_t *rowid)
{
    const struct engine_dml *dml = run->dml;
    const struct engine_table *table = dml->table;
    const bool *used = dml->triggers ? dml->triggers->new_used : NULL;
    size_t count = dml->assignment_count;
    bool set[ENGINE_MAX_COLUMNS + 1] = {false};
    int rc = 0;

    *rowid = old_rowid;
    rc = engine__dml_load(run, old, old_rowid);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        struct engine_value v;

        if (dml->assignments[i].column == SIZE_MAX &&
            !is_overridden(dml->assignments, count, i)) {
            rc = assigned(run, i, &v);
            if (rc == 0 && v.type == ENGINE_NULL) {
                /* MustBeInt refuses NULL too. */
                rc = engine__error(run->exec, ENGINE_EMISMATCH,
                                   "datatype mismatch");
            }
            rc = rc != 0 ? rc : given_rowid(run, v, rowid);
        }
    }
    for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
        values[c] = old[c];
        for (size_t i = 0; rc == 0 && i < count; i++) {
            if (dml->assignments[i].column == c &&
                !is_overridden(dml->assignments, count, i)) {
                rc = assigned(run, i, &values[c]);
                set[c] = true;
            }
        }
        if (!set[c] && c < 32 && (used == NULL || !used[c])) {
            values[c] = engine__value_null();
        }
        if (rc == 0 &&
            engine__value_apply_affinity(&values[c], table->columns[c].affinity,
                                         &run->row_arena) != 0) {
            rc = engine__error(run->exec, COMMON_ENOMEM, "out of memory");
        }
    }
    return rc;
}

static int change_rows(struct dml_run *run, const struct engine_value *rows,
                       size_t count)
{
    size_t width = run->dml->table->column_count;
    struct engine_value values[ENGINE_MAX_COLUMNS + 1];
    int rc = 0;

    for (size_t r = 0; rc == 0 && r < count; r++) {
        const struct engine_value *old = &rows[r * width];
        int64_t old_rowid = (int64_t)r + 1;
        int64_t rowid;

        engine__arena_reset(&run->row_arena);
        if (run->dml->kind == AST_STMT_DELETE) {
            rc = fire(run, old, old_rowid, NULL, 0);
            continue;
        }
        rc = new_row(run, old, old_rowid, values, &rowid);
        rc = rc != 0 ? rc : fire(run, old, old_rowid, values, rowid);
    }
    return rc;
}

int engine__dml_view_run(struct dml_run *run)
{
    struct engine_dml *dml = run->dml;
    struct engine_value *rows = NULL;
    size_t count = 1;
    int rc = 0;

    if (dml->kind != AST_STMT_INSERT) {
        rc = engine__dml_collect(run, dml->matches, dml->table->column_count,
                                 &rows, &count);
        rc = rc != 0 ? rc : change_rows(run, rows, count);
    } else if (dml->source != NULL) {
        rc = engine__dml_collect(run, dml->source, dml->target_count, &rows,
                                 &count);
        rc = rc != 0 ? rc : insert_rows(run, rows, count);
    } else {
        rc = insert_rows(run, NULL, 1); /* DEFAULT VALUES */
    }
    common_free(rows);
    return rc;
}
