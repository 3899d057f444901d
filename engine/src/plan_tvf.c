/* SPDX-License-Identifier: MIT
 *
 * plan_tvf.c: planning a table-valued function in FROM (tvf.h).
 *
 * Names. SQLite looks the name up as a table first
 * (sqlite3LocateTableItem): a table, view or CTE of that name is "not a
 * function"; a name that is neither has "no such table". Its columns are
 * those of the eponymous virtual table's declaration (jsonEachConnect),
 * typeless, so they compare as a column without affinity does.
 *
 * Arguments. They are compiled against the items to the left of the call
 * (and the enclosing queries, expr_outer.c). Arguments that read no
 * column of those items make the function a plain source, evaluated when
 * it opens; arguments that do make it lateral: op_lateral.c runs it again
 * for each left row. SQLite may also read items to the right (its planner
 * puts them first); sinew refuses that, and an item reading an item to
 * its left keeps the written join order (plan_join.c does not reorder).
 */
#include <string.h>
#include <strings.h>

#include "tvf.h"

static const char *const column_names[ENGINE__TVF_COLUMNS] = {
    "key",    "value",   "type", "atom", "id",
    "parent", "fullkey", "path", "json", "root",
};

/* 0 json_each, 1 json_tree, -1 another name. */
static int function_index(const char *name)
{
    if (strcasecmp(name, "json_each") == 0) {
        return 0;
    }
    return strcasecmp(name, "json_tree") == 0 ? 1 : -1;
}

int engine__tvf_check(struct engine_stmt *stmt,
                      const struct ast_from_item *item)
{
    struct engine_db *db = stmt->db;

    if (engine__catalog_find(db, item->table) != NULL ||
        engine__view_find(db, item->table) != NULL) {
        return engine__db_error(db, ENGINE_ESQL, "'%s' is not a function",
                                item->table);
    }
    if (function_index(item->table) < 0) {
        return engine__db_error(db, ENGINE_ESQL, "no such table: %s%s",
                                engine__view_inside(db) ? "main." : "",
                                item->table);
    }
    if (item->args.count > 2) {
        return engine__db_error(
            db, ENGINE_ESQL, "too many arguments on %s() - max 2", item->table);
    }
    return 0;
}

/* ---- hidden columns given by WHERE terms ---- */

struct hidden_probe {
    const char *name; /* the item's alias or function name */
    size_t arg_count;
};

/* Whether ast names a hidden column of the item no argument gives. */
static bool names_missing_hidden(const struct ast_expr *ast, const void *arg)
{
    const struct hidden_probe *probe = arg;
    const char *name;

    if (ast->kind != AST_COLUMN ||
        (ast->u.column.table != NULL &&
         strcasecmp(ast->u.column.table, probe->name) != 0)) {
        return false;
    }
    name = ast->u.column.name;
    return (probe->arg_count < 1 && strcasecmp(name, "json") == 0) ||
           (probe->arg_count < 2 && strcasecmp(name, "root") == 0);
}

/* SQLite takes "root = X" (or "json = X") in the WHERE or an ON for the
 * argument the call leaves out (jsonEachBestIndex): a different query
 * from the filter sinew would run, so it is refused. */
static int check_hidden_terms(struct engine_stmt *stmt,
                              const struct ast_select *select,
                              const struct ast_from_item *item)
{
    struct hidden_probe probe = {
        .name = item->alias != NULL ? item->alias : item->table,
        .arg_count = item->args.count,
    };
    bool named = select != NULL &&
                 engine__ast_any(select->where, names_missing_hidden, &probe);

    for (size_t i = 0; select != NULL && !named && i < select->from_count;
         i++) {
        named =
            engine__ast_any(select->from[i].on, names_missing_hidden, &probe);
    }
    if (named) {
        return engine__db_error(
            stmt->db, ENGINE_ESQL,
            "%s() with a WHERE or ON term on its hidden "
            "column %s is not supported yet",
            item->table, item->args.count == 0 ? "json or root" : "root");
    }
    return 0;
}

/* ---- the source ---- */

static int function_scope(struct engine_stmt *stmt,
                          const struct ast_from_item *item,
                          struct engine_scope *scope)
{
    const char *own = item->alias != NULL ? item->alias : item->table;

    memset(scope, 0, sizeof(*scope));
    scope->columns = engine__plan_alloc(stmt, (ENGINE__TVF_COLUMNS + 1) *
                                                  sizeof(*scope->columns));
    if (scope->columns == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ENGINE__TVF_COLUMNS; i++) {
        struct engine_scope_column *c = &scope->columns[i];

        c->name = column_names[i];
        c->table = own;
        c->affinity = ENGINE_AFFINITY_BLOB; /* declared without a type */
        c->collation = ENGINE_COLLATION_BINARY;
        c->has_collation = true;
        c->hidden = i >= 8; /* json HIDDEN, root HIDDEN */
        c->carries_subtype = strcmp(column_names[i], "value") == 0;
    }
    scope->column_count = ENGINE__TVF_COLUMNS;
    scope->table_name = item->table;
    scope->alias = item->alias;
    scope->rowid_column = ENGINE__TVF_COLUMNS;
    return 0;
}

int engine__tvf_source(struct engine_stmt *stmt,
                       const struct ast_select *select,
                       const struct ast_from_item *item,
                       struct engine_scope *scope, struct engine_op **op)
{
    int rc = engine__tvf_check(stmt, item);

    rc = rc != 0 ? rc : check_hidden_terms(stmt, select, item);
    rc = rc != 0 ? rc : function_scope(stmt, item, scope);
    if (rc != 0) {
        return rc;
    }
    *op = engine__op_json_each(stmt, function_index(item->table) == 1);
    if (*op == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    return 0;
}

/* ---- the arguments ---- */

/* Whether e reads a column of its input (a correlated subquery: through
 * the values it takes from it). */
static bool reads_columns(const struct engine_expr *e)
{
    if (e->op == ENGINE_EXPR_COLUMN) {
        return true;
    }
    for (size_t i = 0; i < e->arg_count; i++) {
        if (e->args[i] != NULL && reads_columns(e->args[i])) {
            return true;
        }
    }
    if (engine__expr_is_correlated(e)) {
        for (size_t i = 0; i < e->u.subquery->outer_count; i++) {
            if (reads_columns(e->u.subquery->outer_args[i])) {
                return true;
            }
        }
    }
    return false;
}

/* Records the first aggregate call engine__ast_any() meets in *arg. */
static bool is_aggregate_call(const struct ast_expr *ast, const void *arg)
{
    const struct ast_expr **found = *(const struct ast_expr **const *)arg;

    if (ast->kind != AST_FUNCTION || ast->u.function.over != NULL ||
        !engine__ast_is_aggregate_call(ast)) {
        return false;
    }
    *found = ast;
    return true;
}

/* An aggregate in an argument: resolve.c's message for a call where the
 * name context allows none. */
static int check_aggregates(struct engine_stmt *stmt,
                            const struct ast_expr *ast)
{
    const struct ast_expr *call = NULL;
    const struct ast_expr **found = &call;

    if (!engine__ast_any(ast, is_aggregate_call, &found)) {
        return 0;
    }
    return engine__db_error(stmt->db, ENGINE_ESQL,
                            "misuse of aggregate function %s()",
                            call->u.function.name);
}

int engine__tvf_arguments(struct engine_stmt *stmt,
                          const struct ast_from_item *item,
                          struct engine_scope *args_scope, struct engine_op *op,
                          bool *lateral)
{
    struct engine_scope empty = {.rowid_column = -1};
    struct engine_compile ctx = {
        .stmt = stmt,
        .scope = args_scope != NULL ? args_scope : &empty,
        .clause = "FROM",
    };
    size_t n = item->args.count;
    struct engine_expr **args =
        engine__plan_alloc(stmt, (n + 1) * sizeof(*args));

    *lateral = false;
    if (args == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = check_aggregates(stmt, item->args.items[i]);

        rc = rc != 0
                 ? rc
                 : engine__compile_expr(&ctx, item->args.items[i], &args[i]);

        if (rc != 0) {
            return rc;
        }
        *lateral = *lateral || reads_columns(args[i]);
    }
    engine__op_json_each_set_args(op, args, n);
    return 0;
}

/* ---- in a join ---- */

struct right_probe {
    const struct engine_join_plan *plan;
    size_t k;
};

/* Whether ast names a column of item k or of an item right of it. */
static bool names_right_item(const struct ast_expr *ast, const void *arg)
{
    const struct right_probe *probe = arg;
    ptrdiff_t i;

    if (ast->kind != AST_COLUMN) {
        return false;
    }
    i = engine__join_find_column(probe->plan->scope, ast->u.column.table,
                                 ast->u.column.name);
    return i >= 0 && probe->plan->column_item[i] >= probe->k;
}

static int item_arguments(struct engine_join_plan *plan, size_t k)
{
    struct join_item *it = &plan->items[k];
    struct right_probe probe = {plan, k};
    struct engine_scope left = *plan->scope;
    bool lateral = false;
    int rc;

    for (size_t i = 0; i < it->ast->args.count; i++) {
        if (engine__ast_any(it->ast->args.items[i], names_right_item, &probe)) {
            return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                    "an argument of %s() reading a FROM "
                                    "item not to its left is not supported "
                                    "yet",
                                    it->ast->table);
        }
    }
    left.column_count = it->first;
    rc = engine__tvf_arguments(plan->stmt, it->ast, &left, it->op, &lateral);
    if (rc != 0 || !lateral) {
        return rc;
    }
    if (it->ast->join == AST_JOIN_RIGHT || it->ast->join == AST_JOIN_FULL) {
        return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                "a RIGHT or FULL JOIN of %s() reading the "
                                "items to its left is not supported yet",
                                it->ast->table);
    }
    it->lateral = it->op;
    return 0;
}

int engine__tvf_join_arguments(struct engine_join_plan *plan)
{
    int rc = 0;

    for (size_t k = 0; rc == 0 && k < plan->count; k++) {
        if (plan->items[k].ast->function) {
            rc = item_arguments(plan, k);
        }
    }
    return rc;
}
