/* SPDX-License-Identifier: MIT
 *
 * dml_plan.c: planning INSERT, UPDATE and DELETE at prepare time, so their
 * errors ("no such table", "table t has no column named x", "3 values for
 * 2 columns") come from prepare as in SQLite.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "access.h"
#include "dml.h"
#include "trigger.h"
#include "zone.h"

static int dml_error(struct engine_stmt *stmt, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int dml_error(struct engine_stmt *stmt, const char *format, ...)
{
    char message[ENGINE__ERRMSG_SIZE];
    va_list args;

    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    return engine__db_error(stmt->db, ENGINE_ESQL, "%s", message);
}

/* The table column of name, SIZE_MAX for the rowid, or an error. */
static int resolve_target(struct engine_stmt *stmt, struct engine_dml *dml,
                          const char *name, size_t *out)
{
    ptrdiff_t column = engine__table_column_index(dml->table, name);

    if (column >= 0) {
        *out = (ptrdiff_t)column == dml->table->rowid_alias ? SIZE_MAX
                                                            : (size_t)column;
        return 0;
    }
    if (engine__table_is_rowid_name(name)) {
        *out = SIZE_MAX;
        return 0;
    }
    if (dml->kind == AST_STMT_INSERT) {
        return dml_error(stmt, "table %s has no column named %s",
                         dml->table->name, name);
    }
    return dml_error(stmt, "no such column: %s", name);
}

/* Table columns, the rowid, and (for upserts) "excluded" copies. */
static int dml_scope(struct engine_stmt *stmt, struct engine_dml *dml,
                     const char *alias, bool with_excluded)
{
    struct engine_table *table = dml->table;
    size_t n = table->column_count;
    struct engine_scope_column *columns;
    int rc = engine__scope_of_table(stmt, table, alias, &dml->scope);

    if (rc != 0 || !with_excluded) {
        return rc;
    }
    columns = engine__plan_alloc(stmt, (2 * n + 2) * sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(columns, dml->scope.columns, n * sizeof(*columns));
    for (size_t i = 0; i < n; i++) {
        columns[n + 1 + i] = columns[i];
        columns[n + 1 + i].table = "excluded";
        columns[n + 1 + i].qualified_only = true;
        columns[n + 1 + i].untyped = true;
        columns[n + 1 + i].affinity = ENGINE_AFFINITY_BLOB;
        columns[n + 1 + i].collation = ENGINE_COLLATION_BINARY;
        columns[n + 1 + i].has_collation = false;
    }
    dml->scope.columns = columns;
    dml->scope.column_count = 2 * n + 1;
    return 0;
}

static void compile_context(struct engine_stmt *stmt, struct engine_dml *dml,
                            struct engine_compile *ctx, bool with_scope)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->stmt = stmt;
    ctx->scope = with_scope ? &dml->scope : NULL;
    ctx->clause = "DML";
}

static int compile_defaults_and_checks(struct engine_stmt *stmt,
                                       struct engine_dml *dml)
{
    struct engine_table *table = dml->table;
    struct engine_compile ctx;
    int rc = 0;

    dml->defaults = engine__plan_alloc(stmt, (table->column_count + 1) *
                                                 sizeof(*dml->defaults));
    dml->checks = engine__plan_alloc(stmt, (table->check_count + 1) *
                                               sizeof(*dml->checks));
    dml->check_names = engine__plan_alloc(stmt, (table->check_count + 1) *
                                                    sizeof(*dml->check_names));
    if (!dml->defaults || !dml->checks || !dml->check_names) {
        return COMMON_ENOMEM;
    }
    compile_context(stmt, dml, &ctx, false);
    for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
        if (table->columns[c].default_value != NULL) {
            rc = engine__compile_expr(&ctx, table->columns[c].default_value,
                                      &dml->defaults[c]);
        }
    }
    compile_context(stmt, dml, &ctx, true);
    for (size_t i = 0; rc == 0 && i < table->check_count; i++) {
        rc = engine__compile_expr(&ctx, table->checks[i], &dml->checks[i]);
        if (rc == 0) {
            engine__expr_mark_check(dml->checks[i]);
        }
        dml->check_names[i] = table->checks[i]->text;
    }
    dml->check_count = table->check_count;
    return rc;
}

/* Whether a column the expression reads is one the UPDATE assigns;
 * sqlite3ExprReferencesUpdatedColumn (update.c) counts a rowid read when
 * the rowid changes. */
static bool reads_assigned(const struct ast_expr *ast, const void *arg)
{
    const struct engine_dml *dml = arg;
    const struct engine_table *table = dml->table;

    if (ast->kind != AST_COLUMN) {
        return false;
    }
    for (size_t i = 0; i < dml->assignment_count; i++) {
        size_t column = dml->assignments[i].column;
        bool rowid =
            column == SIZE_MAX || (ptrdiff_t)column == table->rowid_alias;

        if (rowid &&
            (engine__table_is_rowid_name(ast->u.column.name) ||
             (table->rowid_alias >= 0 &&
              strcasecmp(ast->u.column.name,
                         table->columns[table->rowid_alias].name) == 0))) {
            return true;
        }
        if (column != SIZE_MAX &&
            strcasecmp(ast->u.column.name, table->columns[column].name) == 0) {
            return true;
        }
    }
    return false;
}

static bool insert_targets(const struct engine_dml *dml, size_t column)
{
    for (size_t i = 0; i < dml->target_count; i++) {
        if (dml->targets[i] == column) {
            return true;
        }
    }
    return false;
}

/* Keeps the CHECKs SQLite codes for the statement: an UPDATE tests only
 * those that read an assigned column (update.c), an INSERT all of them.
 * Whether those, the statement's own expressions, or the DEFAULTs an
 * INSERT is not given call a function decides calls_function. */
static void keep_coded_constraints(struct engine_stmt *stmt,
                                   struct engine_dml *dml)
{
    const struct engine_table *table = dml->table;
    size_t kept = 0;

    for (size_t i = 0; i < dml->check_count; i++) {
        if (dml->kind == AST_STMT_UPDATE &&
            !engine__ast_any(table->checks[i], reads_assigned, dml)) {
            continue;
        }
        stmt->calls_function |= engine__ast_calls_function(table->checks[i]);
        dml->checks[kept] = dml->checks[i];
        dml->check_names[kept++] = dml->check_names[i];
    }
    dml->check_count = kept;
    for (size_t c = 0; dml->kind == AST_STMT_INSERT && c < table->column_count;
         c++) {
        if (!insert_targets(dml, c)) {
            stmt->calls_function |=
                engine__ast_calls_function(table->columns[c].default_value);
        }
    }
}

/* SQLite 3.40's codeReturningTrigger() (trigger.c) applies OP_RealAffinity
 * to each RETURNING value whose sqlite3ExprAffinity() is REAL. A column of
 * the table there is a TK_REGISTER whose resolver (resolve.c lookupName,
 * bReturning) leaves iColumn unset, 0, so every column reference, the
 * rowid too, takes the affinity of the table's first column: when that is
 * REAL, an INTEGER value of any column is returned as REAL. */
static int returning_affinities(struct engine_stmt *stmt,
                                struct engine_dml *dml)
{
    bool first_is_real =
        dml->table->column_count > 0 &&
        dml->table->columns[0].affinity == ENGINE_AFFINITY_REAL;

    dml->returning_realify = engine__plan_alloc(stmt, dml->returning_count + 1);
    if (dml->returning_realify == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < dml->returning_count; i++) {
        const struct engine_expr *e = dml->returning[i];

        dml->returning_realify[i] =
            first_is_real && e->op == ENGINE_EXPR_COLUMN && e->has_affinity;
    }
    return 0;
}

/* A RETURNING column reference is named as its table declares it, and a
 * rowid read (rowid, oid, _rowid_) by the INTEGER PRIMARY KEY, as a
 * SELECT's (generateColumnNames); anything else as written. */
static const char *returning_column_name(const struct engine_table *table,
                                         const struct ast_expr *ast)
{
    const char *name = ast->u.column.name;
    ptrdiff_t c = engine__table_column_index(table, name);

    if (c < 0 && engine__table_is_rowid_name(name)) {
        c = table->rowid_alias;
        if (c < 0) {
            return "rowid";
        }
    }
    return c >= 0 ? table->columns[c].name : name;
}

static int plan_returning(struct engine_stmt *stmt, struct engine_dml *dml,
                          const struct ast_returning *returning)
{
    size_t max = returning->column_count * (dml->table->column_count + 1);
    struct engine_compile ctx;
    size_t n = 0;

    if (returning->columns == NULL) {
        return 0;
    }
    dml->returning = engine__plan_alloc(stmt, (max + 1) * sizeof(void *));
    stmt->column_names = engine__plan_alloc(stmt, (max + 1) * sizeof(char *));
    if (dml->returning == NULL || stmt->column_names == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(stmt, dml, &ctx, true);
    for (size_t i = 0; i < returning->column_count; i++) {
        const struct ast_result_column *column = &returning->columns[i];
        int rc;

        if (column->kind != AST_RESULT_EXPR) {
            for (size_t c = 0; c < dml->table->column_count; c++) {
                struct ast_expr *ast = engine__plan_alloc(stmt, sizeof(*ast));

                if (ast == NULL) {
                    return COMMON_ENOMEM;
                }
                ast->kind = AST_COLUMN;
                ast->u.column.name = dml->table->columns[c].name;
                stmt->column_names[n] = dml->table->columns[c].name;
                rc = engine__compile_expr(&ctx, ast, &dml->returning[n++]);
                if (rc != 0) {
                    return rc;
                }
            }
            continue;
        }
        stmt->column_names[n] =
            (char *)(column->alias != NULL ? column->alias
                     : column->expr->kind == AST_COLUMN
                         ? returning_column_name(dml->table, column->expr)
                         : column->expr->text);
        rc = engine__compile_expr(&ctx, column->expr, &dml->returning[n++]);
        if (rc != 0) {
            return rc;
        }
    }
    dml->returning_count = n;
    stmt->column_count = (int)n;
    return returning_affinities(stmt, dml);
}

/* Whether an assignment SQLite codes calls a function: a column assigned
 * twice keeps only its last value (aXRef), the others are never coded. */
static bool calls_coded(const struct dml_assignment *assignments,
                        const bool *calls, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        bool overridden = false;

        for (size_t j = i + 1; j < count && !overridden; j++) {
            overridden = assignments[j].column == assignments[i].column;
        }
        if (calls[i] && !overridden) {
            return true;
        }
    }
    return false;
}

static int plan_assignments(struct engine_stmt *stmt, struct engine_dml *dml,
                            const struct ast_assignment *list, size_t count,
                            struct dml_assignment **out)
{
    struct dml_assignment *assignments =
        engine__plan_alloc(stmt, (count + 1) * sizeof(*assignments));
    bool *calls = engine__plan_alloc(stmt, count + 1);
    bool calls_before = stmt->calls_function;
    struct engine_compile ctx;

    if (assignments == NULL || calls == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(stmt, dml, &ctx, true);
    for (size_t i = 0; i < count; i++) {
        int rc;

        if (list[i].column_count != 1) {
            return dml_error(stmt, "%s is not supported yet",
                             "assigning a subquery to several columns");
        }
        /* sqlite3Update resolves each value, then its column. */
        stmt->calls_function = false;
        rc = engine__compile_expr(&ctx, list[i].value, &assignments[i].value);
        calls[i] = stmt->calls_function;
        if (rc == 0) {
            rc = resolve_target(stmt, dml, list[i].columns[0],
                                &assignments[i].column);
        }
        if (rc != 0) {
            return rc;
        }
    }
    stmt->calls_function =
        calls_before || calls_coded(assignments, calls, count);
    *out = assignments;
    return 0;
}

/* Without a lookup, the scan passes over the blocks zone maps rule out
 * (zone.h). */
static int plan_zones(struct engine_stmt *stmt,
                      const struct engine_table *table,
                      struct engine_expr *predicate, struct engine_op *scan)
{
    struct engine_zone_plan *zones;
    int rc = engine__plan_zones(stmt, table, predicate, &zones);

    if (rc == 0 && zones != NULL) {
        engine__op_scan_zones(scan, zones);
    }
    return rc;
}

/* Scan + WHERE over the table: the rows an UPDATE or DELETE touches. */
/* The INDEXED BY or NOT INDEXED of an UPDATE or DELETE; NULL for INSERT. */
static const struct ast_index_hint *dml_hint(const struct ast_stmt *ast)
{
    if (ast->kind == AST_STMT_UPDATE) {
        return &ast->u.update.hint;
    }
    return ast->kind == AST_STMT_DELETE ? &ast->u.delete_.hint : NULL;
}

static int plan_matches(struct engine_stmt *stmt, struct engine_dml *dml,
                        const struct ast_expr *where)
{
    struct engine_table *table = dml->table;
    size_t *columns =
        engine__plan_alloc(stmt, (table->column_count + 1) * sizeof(*columns));
    struct engine_compile ctx;
    struct engine_expr *predicate;
    const struct ast_expr *ordered;
    int rc;

    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < table->column_count; i++) {
        columns[i] = i;
    }
    columns[table->column_count] = SIZE_MAX;
    dml->matches =
        engine__op_scan(stmt, table, columns, table->column_count + 1);
    if (dml->matches == NULL || where == NULL) {
        return dml->matches == NULL ? COMMON_ENOMEM : 0;
    }
    compile_context(stmt, dml, &ctx, true);
    ctx.clause = "WHERE";
    ordered = engine__plan_rowid_terms_first(stmt, where, table);
    if (ordered == NULL) {
        return COMMON_ENOMEM;
    }
    rc = engine__compile_expr(&ctx, ordered, &predicate);
    if (rc != 0) {
        return rc;
    }
    engine__expr_mark_condition(predicate);
    predicate->is_where = true;
    rc = engine__plan_access(stmt, table, dml->scope.rowid_column,
                             dml_hint(stmt->ast), ordered, predicate,
                             &dml->access);
    if (rc != 0) {
        return rc;
    }
    if (dml->access != NULL) {
        engine__op_scan_access(dml->matches, dml->access);
    } else {
        rc = plan_zones(stmt, table, predicate, dml->matches);
        if (rc != 0) {
            return rc;
        }
    }
    dml->scan = dml->matches;
    dml->where = predicate;
    dml->where_reads_table = engine__dml_expr_reads(where, dml->table->name);
    dml->matches = engine__op_filter(stmt, dml->matches, predicate);
    return dml->matches == NULL ? COMMON_ENOMEM : 0;
}

/* The unique key (or -2: the rowid) whose columns are exactly names. */
static int upsert_key(struct engine_stmt *stmt, struct engine_dml *dml,
                      const struct ast_upsert *upsert, ptrdiff_t *out)
{
    const struct engine_table *table = dml->table;
    size_t count = upsert->target_column_count;

    *out = -1;
    if (count == 0) {
        return 0;
    }
    if (count == 1 && table->rowid_alias >= 0 &&
        strcasecmp(upsert->target_columns[0],
                   table->columns[table->rowid_alias].name) == 0) {
        *out = -2;
        return 0;
    }
    for (size_t k = 0; k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];
        size_t matched = 0;

        for (size_t i = 0; key->column_count == count && i < count; i++) {
            ptrdiff_t c =
                engine__table_column_index(table, upsert->target_columns[i]);

            for (size_t j = 0; c >= 0 && j < count; j++) {
                matched += key->columns[j] == (size_t)c;
            }
        }
        if (matched == count && key->column_count == count) {
            *out = (ptrdiff_t)k;
            return 0;
        }
    }
    return dml_error(stmt,
                     "ON CONFLICT clause does not match any PRIMARY KEY or "
                     "UNIQUE constraint%s",
                     "");
}

static int plan_upserts(struct engine_stmt *stmt, struct engine_dml *dml,
                        const struct ast_insert *insert)
{
    struct engine_compile ctx;

    if (dml->view && insert->upsert_count > 0) {
        return dml_error(stmt, "cannot UPSERT a view");
    }
    dml->upserts = engine__plan_alloc(stmt, (insert->upsert_count + 1) *
                                                sizeof(*dml->upserts));
    if (dml->upserts == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(stmt, dml, &ctx, true);
    for (size_t i = 0; i < insert->upsert_count; i++) {
        const struct ast_upsert *ast = &insert->upserts[i];
        struct dml_upsert *upsert = &dml->upserts[i];
        int rc = upsert_key(stmt, dml, ast, &upsert->key);

        upsert->do_nothing = ast->do_nothing;
        if (rc == 0 && !ast->do_nothing) {
            rc = plan_assignments(stmt, dml, ast->assignments,
                                  ast->assignment_count, &upsert->assignments);
            upsert->assignment_count = ast->assignment_count;
        }
        if (rc == 0 && ast->where != NULL) {
            rc = engine__compile_expr(&ctx, ast->where, &upsert->where);
        }
        if (rc == 0 && ast->where != NULL) {
            engine__expr_mark_condition(upsert->where);
        }
        if (rc != 0) {
            return rc;
        }
    }
    dml->upsert_count = insert->upsert_count;
    return 0;
}

static int plan_insert_targets(struct engine_stmt *stmt, struct engine_dml *dml,
                               const struct ast_insert *insert)
{
    struct engine_table *table = dml->table;
    size_t count =
        insert->column_count > 0 ? insert->column_count : table->column_count;

    dml->targets = engine__plan_alloc(stmt, (count + 1) * sizeof(size_t));
    if (dml->targets == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        if (insert->column_count == 0) {
            dml->targets[i] = (ptrdiff_t)i == table->rowid_alias ? SIZE_MAX : i;
            continue;
        }
        int rc =
            resolve_target(stmt, dml, insert->columns[i], &dml->targets[i]);

        if (rc != 0) {
            return rc;
        }
    }
    dml->target_count = count;
    return 0;
}

static int plan_insert(struct engine_stmt *stmt, struct engine_dml *dml,
                       const struct ast_insert *insert)
{
    char message[ENGINE__ERRMSG_SIZE];
    size_t source_columns = 0;
    int rc = plan_insert_targets(stmt, dml, insert);

    if (rc == 0 && insert->select != NULL) {
        rc = engine__plan_select(stmt, insert->select, &dml->source, NULL, NULL,
                                 &source_columns);
    }
    if (rc != 0) {
        return rc;
    }
    if (insert->select != NULL && source_columns != dml->target_count) {
        if (insert->column_count > 0) {
            snprintf(message, sizeof(message), "%zu values for %zu columns",
                     source_columns, dml->target_count);
        } else {
            snprintf(message, sizeof(message),
                     "table %s has %zu columns but %zu values were supplied",
                     dml->table->name, dml->target_count, source_columns);
        }
        return dml_error(stmt, "%s", message);
    }
    if (insert->select == NULL) {
        dml->target_count = 0; /* DEFAULT VALUES */
    }
    rc = plan_upserts(stmt, dml, insert);
    return rc == 0 ? plan_returning(stmt, dml, &insert->returning) : rc;
}

static int plan_update(struct engine_stmt *stmt, struct engine_dml *dml,
                       const struct ast_update *update)
{
    int rc = dml->view ? engine__dml_view_matches(stmt, dml, update->where)
                       : plan_matches(stmt, dml, update->where);

    if (rc == 0) {
        rc = plan_assignments(stmt, dml, update->assignments,
                              update->assignment_count, &dml->assignments);
        dml->assignment_count = update->assignment_count;
    }
    return rc == 0 ? plan_returning(stmt, dml, &update->returning) : rc;
}

static int plan_delete(struct engine_stmt *stmt, struct engine_dml *dml,
                       const struct ast_delete *delete_)
{
    int rc = dml->view ? engine__dml_view_matches(stmt, dml, delete_->where)
                       : plan_matches(stmt, dml, delete_->where);

    return rc == 0 ? plan_returning(stmt, dml, &delete_->returning) : rc;
}

/* The target table, its alias, and whether upserts need "excluded". */
static void dml_target(const struct ast_stmt *ast, const char **table,
                       const char **alias, bool *excluded,
                       enum ast_conflict *conflict)
{
    *excluded = false;
    *conflict = AST_CONFLICT_DEFAULT;
    if (ast->kind == AST_STMT_INSERT) {
        *table = ast->u.insert.table;
        *alias = ast->u.insert.alias;
        *excluded = ast->u.insert.upsert_count > 0;
        *conflict = ast->u.insert.conflict;
    } else if (ast->kind == AST_STMT_UPDATE) {
        *table = ast->u.update.table;
        *alias = ast->u.update.alias;
        *conflict = ast->u.update.conflict;
    } else {
        *table = ast->u.delete_.table;
        *alias = ast->u.delete_.alias;
    }
}

static int plan_by_kind(struct engine_stmt *stmt, struct engine_dml *dml)
{
    const struct ast_stmt *ast = stmt->ast;

    if (ast->kind == AST_STMT_INSERT) {
        return plan_insert(stmt, dml, &ast->u.insert);
    }
    if (ast->kind == AST_STMT_UPDATE) {
        return plan_update(stmt, dml, &ast->u.update);
    }
    return plan_delete(stmt, dml, &ast->u.delete_);
}

int engine__plan_dml(struct engine_stmt *stmt)
{
    struct engine_dml *dml = engine__plan_alloc(stmt, sizeof(*dml));
    const char *name;
    const char *alias;
    bool excluded;
    int rc;

    if (dml == NULL) {
        return COMMON_ENOMEM;
    }
    dml->kind = stmt->ast->kind;
    dml_target(stmt->ast, &name, &alias, &excluded, &dml->conflict);
    dml->table = engine__catalog_find(stmt->db, name);
    if (dml->table == NULL) {
        const struct engine_view *view = engine__view_find(stmt->db, name);

        if (strcasecmp(name, "sqlite_schema") == 0 ||
            strcasecmp(name, "sqlite_master") == 0) {
            return dml_error(stmt, "table %s may not be modified",
                             "sqlite_master");
        }
        if (view == NULL) {
            return dml_error(stmt, "no such table: %s", name);
        }
        /* Written through its INSTEAD OF triggers (dml_view.c). */
        rc = engine__dml_view_plan(stmt, dml, view);
        if (rc != 0) {
            return rc == COMMON_ENOMEM
                       ? engine__db_error(stmt->db, rc, "out of memory")
                       : rc;
        }
    }
    rc = dml_hint(stmt->ast) != NULL
             ? engine__plan_index_hint_check(stmt, dml->table,
                                             dml_hint(stmt->ast))
             : 0;
    if (rc == 0) {
        rc = dml_scope(stmt, dml, alias, excluded);
    }
    if (rc == 0) {
        rc = compile_defaults_and_checks(stmt, dml);
        stmt->calls_function = false; /* keep_coded_constraints decides */
    }
    if (rc == 0) {
        rc = plan_by_kind(stmt, dml);
    }
    if (rc == 0) {
        keep_coded_constraints(stmt, dml);
        dml->may_abort = dml->view || engine__dml_may_abort(stmt, dml);
        dml->one_pass = !dml->view && engine__dml_one_pass(stmt, dml);
        dml->source_streams =
            !dml->view && engine__dml_source_streams(stmt, dml);
        rc = engine__trigger_plan(stmt, dml);
    }
    if (rc != 0) {
        return rc == COMMON_ENOMEM
                   ? engine__db_error(stmt->db, rc, "out of memory")
                   : rc;
    }
    stmt->dml = dml;
    return engine__dml_init_row(stmt, dml);
}
