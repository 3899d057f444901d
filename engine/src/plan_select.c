/* SPDX-License-Identifier: MIT
 *
 * plan_select.c: planning a SELECT in two phases. The logical plan
 * (struct select_plan) resolves names and compiles every expression:
 * source, WHERE, GROUP BY keys and aggregates, results, HAVING, ORDER BY
 * keys, LIMIT. The physical plan then chains the operators:
 *
 *   source (table scan, subquery, VALUES, or one empty row)
 *     -> filter (WHERE)
 *     -> aggregate (GROUP BY and aggregate calls) -> filter (HAVING)
 *     -> window functions (window.h: sort, then one column per call)
 *     -> project (result columns, then hidden ORDER BY keys)
 *     -> distinct -> sort -> limit/offset -> project (drop hidden keys)
 *
 * With GROUP BY, HAVING terms free of aggregates move to the WHERE
 * (havingToWhere). An aggregate without GROUP BY or DISTINCT has no sort
 * and takes its LIMIT/OFFSET before the result columns are computed.
 *
 * Names, ordinals and aliases resolve as SQLite's resolve.c does: an ORDER
 * BY or GROUP BY term that is an integer picks a result column, one that
 * names a result alias uses that column's expression.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "access.h"
#include "cte.h"
#include "jit_plan.h"
#include "join.h"
#include "plan.h"
#include "rowset.h"
#include "tvf.h"
#include "window.h"
#include "zone.h"

struct select_plan {
    struct engine_stmt *stmt;
    const struct ast_select *select;
    struct engine_scope scope;       /* the source's columns */
    struct engine_op *op;            /* the plan so far */
    struct engine_agg_plan *agg;     /* NULL without aggregation */
    const struct ast_expr **results; /* result expressions, * expanded */
    const char **names;
    size_t result_count;
    struct engine_expr **projected; /* results then hidden sort keys */
    size_t projected_count;
    struct engine_sort_key *sort_keys;
    size_t sort_key_count;
    struct engine_expr *limit;         /* LIMIT, or NULL */
    struct engine_expr *offset;        /* OFFSET, or NULL */
    struct engine_expr *where;         /* WHERE over the source, or NULL */
    struct engine_expr *having;        /* HAVING over the groups, or NULL */
    struct engine_join_plan *join;     /* several FROM items, or NULL */
    struct engine_window_plan *window; /* its window calls (window.h) */
};

void *engine__plan_alloc(struct engine_stmt *stmt, size_t size)
{
    void *p = engine__arena_alloc(&stmt->plan_arena, size);

    if (p == NULL) {
        engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
        return NULL;
    }
    memset(p, 0, size);
    return p;
}

static int plan_error(struct select_plan *plan, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int plan_error(struct select_plan *plan, const char *format, ...)
{
    char message[ENGINE__ERRMSG_SIZE];
    va_list args;

    va_start(args, format);
    vsnprintf(message, sizeof(message), format, args);
    va_end(args);
    return engine__db_error(plan->stmt->db, ENGINE_ESQL, "%s", message);
}

static int oom(struct select_plan *plan)
{
    return engine__db_error(plan->stmt->db, COMMON_ENOMEM, "out of memory");
}

static void compile_context(struct select_plan *plan,
                            struct engine_compile *ctx, const char *clause,
                            bool above_aggregation)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->stmt = plan->stmt;
    ctx->scope = &plan->scope;
    ctx->select = plan->select;
    ctx->clause = clause;
    ctx->agg = above_aggregation ? plan->agg : NULL;
    ctx->allow_aggregates = above_aggregation && plan->agg != NULL;
    ctx->aggregate_home = above_aggregation ? plan->select : NULL;
    ctx->window = above_aggregation ? plan->window : NULL;
}

int engine__scope_of_table(struct engine_stmt *stmt,
                           const struct engine_table *table, const char *alias,
                           struct engine_scope *scope)
{
    size_t n = table->column_count;

    scope->columns =
        engine__plan_alloc(stmt, (n + 1) * sizeof(*scope->columns));
    if (scope->columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        struct engine_scope_column *column = &scope->columns[i];

        column->name = table->columns[i].name;
        column->table = alias != NULL ? alias : table->name;
        column->affinity = table->columns[i].affinity;
        column->collation = table->columns[i].collation;
        /* An INTEGER PRIMARY KEY reads the rowid (iColumn -1), which has
         * no collation (sqlite3ExprCollSeq). */
        column->has_collation = (ptrdiff_t)i != table->rowid_alias;
        column->not_null =
            table->columns[i].not_null || (ptrdiff_t)i == table->rowid_alias;
        column->is_rowid_alias = (ptrdiff_t)i == table->rowid_alias;
    }
    scope->columns[n] = (struct engine_scope_column){.not_null = true};
    scope->column_count = n;
    scope->table_name = table->name;
    scope->alias = alias;
    scope->rowid_column = (ptrdiff_t)n;
    return 0;
}

static bool is_schema_table(const char *name)
{
    return strcasecmp(name, "sqlite_schema") == 0 ||
           strcasecmp(name, "sqlite_master") == 0;
}

/* One row of sqlite_schema, before ordering. */
struct schema_entry {
    uint64_t sequence; /* creation order */
    size_t sub;        /* 0: the object; 1..: its automatic indexes */
    bool view;         /* a view: rootpage 0 */
    struct engine_value row[5];
};

static size_t schema_entry_count(const struct engine_db *db)
{
    size_t count = db->view_count + db->trigger_count;

    for (size_t t = 0; t < db->table_count; t++) {
        count += 1 + db->tables[t]->index_count + db->tables[t]->key_count;
    }
    return count;
}

static void schema_entry(struct schema_entry *e, uint64_t sequence, size_t sub,
                         const char *type, const char *name, const char *table,
                         const char *sql)
{
    e->sequence = sequence;
    e->sub = sub;
    e->row[0] = engine__value_text(type, strlen(type));
    e->row[1] = engine__value_text(name, strlen(name));
    e->row[2] = engine__value_text(table, strlen(table));
    e->row[4] = sql != NULL ? engine__value_text(sql, strlen(sql))
                            : engine__value_null();
}

/* A table's row, its automatic indexes (SQLite's sqlite_autoindex_T_N for
 * each PRIMARY KEY or UNIQUE constraint, with no SQL) and its indexes. */
static size_t table_entries(struct select_plan *plan,
                            const struct engine_table *table,
                            struct schema_entry *out)
{
    size_t n = 0;
    size_t automatic = 0;

    schema_entry(&out[n++], table->sequence, 0, "table", table->name,
                 table->name, table->sql);
    for (size_t k = 0; k < table->key_count; k++) {
        char name[ENGINE__ERRMSG_SIZE];
        char *copy;

        if (table->keys[k].index_name != NULL) {
            continue;
        }
        snprintf(name, sizeof(name), "sqlite_autoindex_%s_%zu", table->name,
                 ++automatic);
        copy =
            engine__arena_strndup(&plan->stmt->plan_arena, name, strlen(name));
        if (copy == NULL) {
            return SIZE_MAX;
        }
        schema_entry(&out[n++], table->sequence, automatic, "index", copy,
                     table->name, NULL);
    }
    for (size_t i = 0; i < table->index_count; i++) {
        const struct engine_index_def *index = &table->indexes[i];

        schema_entry(&out[n++], index->sequence, 0, "index", index->name,
                     table->name, index->sql);
    }
    return n;
}

static int compare_entries(const void *ctx, size_t a, size_t b)
{
    const struct schema_entry *entries = ctx;
    const struct schema_entry *x = &entries[a];
    const struct schema_entry *y = &entries[b];

    if (x->sequence != y->sequence) {
        return x->sequence < y->sequence ? -1 : 1;
    }
    return (x->sub > y->sub) - (x->sub < y->sub);
}

/* sqlite_schema as rows of (type, name, tbl_name, rootpage, sql) in
 * creation order, rootpage counting from 2 as SQLite's would. */
static int schema_rows(struct select_plan *plan, struct engine_value **out,
                       size_t *row_count)
{
    const struct engine_db *db = plan->stmt->db;
    size_t max = schema_entry_count(db);
    struct schema_entry *entries =
        engine__plan_alloc(plan->stmt, (max + 1) * sizeof(*entries));
    size_t *order = engine__plan_alloc(plan->stmt, (max + 1) * sizeof(size_t));
    struct engine_value *rows =
        engine__plan_alloc(plan->stmt, (max * 5 + 1) * sizeof(*rows));
    size_t n = 0;

    if (entries == NULL || order == NULL || rows == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t t = 0; t < db->table_count; t++) {
        size_t added;

        /* System tables (system_table.c) are hidden. */
        if (engine__system_is_name(db->tables[t]->name)) {
            continue;
        }
        added = table_entries(plan, db->tables[t], &entries[n]);

        if (added == SIZE_MAX) {
            return COMMON_ENOMEM;
        }
        n += added;
    }
    for (size_t v = 0; v < db->view_count; v++) {
        const struct engine_view *view = db->views[v];

        if (view->temporary) {
            continue; /* sqlite_temp_schema's */
        }
        schema_entry(&entries[n], view->sequence, 0, "view", view->name,
                     view->name, view->sql);
        entries[n++].view = true;
    }
    for (size_t r = 0; r < db->trigger_count; r++) {
        const struct engine_trigger *trigger = db->triggers[r];

        if (trigger->temporary) {
            continue; /* sqlite_temp_schema's */
        }
        schema_entry(&entries[n], trigger->sequence, 0, "trigger",
                     trigger->name, trigger->table, trigger->sql);
        entries[n++].view = true; /* rootpage 0 too */
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    if (engine__stable_sort(order, n, compare_entries, entries) != 0) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0, page = 2; i < n; i++) {
        memcpy(&rows[5 * i], entries[order[i]].row, sizeof(entries->row));
        rows[5 * i + 3] =
            engine__value_int(entries[order[i]].view ? 0 : (int64_t)page++);
    }
    *out = rows;
    *row_count = n;
    return 0;
}

static int plan_schema_source(struct select_plan *plan, const char *alias)
{
    static const char *names[] = {"type", "name", "tbl_name", "rootpage",
                                  "sql"};
    struct engine_value *rows;
    size_t row_count;
    int rc = schema_rows(plan, &rows, &row_count);

    if (rc != 0) {
        return rc;
    }
    plan->scope.columns =
        engine__plan_alloc(plan->stmt, 5 * sizeof(*plan->scope.columns));
    if (plan->scope.columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < 5; i++) {
        plan->scope.columns[i].name = names[i];
        plan->scope.columns[i].affinity =
            i == 3 ? ENGINE_AFFINITY_INTEGER : ENGINE_AFFINITY_TEXT;
    }
    plan->scope.column_count = 5;
    plan->scope.table_name = "sqlite_schema";
    plan->scope.alias = alias;
    plan->scope.rowid_column = -1;
    plan->op = engine__op_rows(plan->stmt, rows, row_count, 5);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

static int plan_view_source(struct select_plan *plan,
                            const struct engine_view_use *use);

static int plan_table_source(struct select_plan *plan,
                             const struct ast_from_item *item)
{
    struct engine_table *table =
        engine__catalog_find(plan->stmt->db, item->table);
    size_t *columns;
    int rc;

    if (table == NULL && is_schema_table(item->table)) {
        return plan_schema_source(plan, item->alias);
    }
    if (table == NULL) {
        struct engine_view_use use;

        rc = engine__view_use(plan->stmt, item, &use);
        if (rc != 0 || use.view != NULL) {
            return rc != 0 ? rc : plan_view_source(plan, &use);
        }
        /* Inside a view SQLite has qualified them (sqlite3FixSrcList). */
        return plan_error(plan, "no such table: %s%s",
                          engine__view_inside(plan->stmt->db) ? "main." : "",
                          item->table);
    }
    rc = engine__plan_index_hint_check(plan->stmt, table, &item->hint);
    if (rc != 0) {
        return rc;
    }
    rc = engine__scope_of_table(plan->stmt, table, item->alias, &plan->scope);
    if (rc != 0) {
        return oom(plan);
    }
    columns = engine__plan_alloc(plan->stmt,
                                 (table->column_count + 1) * sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < table->column_count; i++) {
        columns[i] = i;
    }
    columns[table->column_count] = SIZE_MAX; /* the rowid */
    plan->op =
        engine__op_scan(plan->stmt, table, columns, table->column_count + 1);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* A FROM subquery's columns keep their expressions' collations: SQLite
 * flattens the subquery into the outer query (or gives its table the
 * collations, sqlite3SubqueryColumnTypes), so "SELECT d FROM (SELECT *
 * FROM t) ORDER BY d" sorts by d's NOCASE. projected is NULL for VALUES,
 * whose columns have none. */
static void subquery_collations(struct select_plan *plan,
                                struct engine_expr *const *projected,
                                size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const struct engine_expr *e = projected != NULL ? projected[i] : NULL;

        plan->scope.columns[i].collation =
            e != NULL ? e->collation : ENGINE_COLLATION_BINARY;
        plan->scope.columns[i].has_collation = e != NULL && e->has_collation;
    }
}

static int plan_select_into(struct engine_stmt *stmt,
                            const struct ast_select *select,
                            struct engine_op **root, char ***names,
                            enum engine_affinity **affinities,
                            struct engine_expr ***projected,
                            size_t *column_count);

static int plan_subquery_source(struct select_plan *plan,
                                const struct ast_from_item *item)
{
    struct ast_select sub = *item->select;
    enum engine_affinity *affinities;
    struct engine_expr **projected = NULL;
    char **names;
    size_t count;
    int rc;

    if (item->select->nested) {
        return engine__plan_nested_source(plan->stmt, item, &plan->scope,
                                          &plan->op);
    }
    /* select.c: a FROM subquery's ORDER BY does nothing when the outer
     * query sorts anyway and the subquery has no LIMIT, so SQLite drops it
     * (and with it the order ties would otherwise keep). */
    if (plan->select->order_by_count > 0 && sub.limit == NULL) {
        sub.order_by_count = 0;
    }
    rc = item->cte != NULL
             ? engine__plan_cte_source(plan->stmt, item, &sub, &plan->op,
                                       &names, &affinities, &projected, &count)
             : plan_select_into(plan->stmt, &sub, &plan->op, &names,
                                &affinities, &projected, &count);

    rc = rc != 0 ? rc : engine__plan_unique_names(plan->stmt, names, count);
    if (rc != 0) {
        return rc;
    }
    plan->scope.columns = engine__plan_alloc(
        plan->stmt, (count + 1) * sizeof(*plan->scope.columns));
    if (plan->scope.columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        plan->scope.columns[i].name = names[i];
        plan->scope.columns[i].affinity = affinities[i];
        /* An expression without affinity gives its column SQLite's
         * SQLITE_AFF_NONE, which a comparison treats as none at all
         * (sqlite3CompareAffinity): "t.textcol = sub.n" compares as TEXT. */
        plan->scope.columns[i].untyped = projected != NULL &&
                                         projected[i] != NULL &&
                                         !projected[i]->has_affinity;
    }
    subquery_collations(plan, projected, count);
    plan->scope.column_count = count;
    plan->scope.alias = item->alias;
    plan->scope.rowid_column = -1;
    plan->scope.null_rowid = item->cte == NULL; /* a CTE has no rowid */
    return 0;
}

/* A view: its SELECT as a FROM subquery, planned while the view is marked
 * as being expanded (a use of it inside is circular). */
static int plan_view_source(struct select_plan *plan,
                            const struct engine_view_use *use)
{
    int rc;

    use->view->expanding++;
    rc = plan_subquery_source(plan, &use->item);
    use->view->expanding--;
    return rc != 0 ? rc
                   : engine__view_name_columns(plan->stmt, use, &plan->scope);
}

/* VALUES (...), (...): each row compiled against an empty scope. */
static int plan_values_source(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    size_t count = select->value_row_count * select->value_column_count;
    struct engine_expr **exprs;
    struct engine_compile ctx;

    if (select->value_column_count > ENGINE_MAX_COLUMNS) {
        return plan_error(plan, "too many columns in result set%s", "");
    }
    exprs = engine__plan_alloc(plan->stmt, (count + 1) * sizeof(*exprs));
    if (exprs == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(plan, &ctx, "VALUES", false);
    ctx.select = NULL;
    for (size_t i = 0; i < count; i++) {
        int rc = engine__compile_expr(&ctx, select->values[i], &exprs[i]);

        if (rc != 0) {
            return rc;
        }
    }
    plan->op = engine__op_values(plan->stmt, exprs, select->value_row_count,
                                 select->value_column_count);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* A table-valued function (tvf.h), alone in its FROM: its arguments
 * read only the enclosing queries. */
static int plan_function_source(struct select_plan *plan,
                                const struct ast_from_item *item)
{
    bool lateral;
    int rc = engine__tvf_source(plan->stmt, plan->select, item, &plan->scope,
                                &plan->op);

    return rc != 0 ? rc
                   : engine__tvf_arguments(plan->stmt, item, NULL, plan->op,
                                           &lateral);
}

int engine__plan_from_item(struct engine_stmt *stmt,
                           const struct ast_select *outer,
                           const struct ast_from_item *item,
                           struct engine_scope *scope, struct engine_op **op)
{
    struct select_plan plan = {.stmt = stmt, .select = outer};
    int rc;

    plan.scope.rowid_column = -1;
    rc = item->function         ? plan_function_source(&plan, item)
         : item->select != NULL ? plan_subquery_source(&plan, item)
         : item->recursive
             ? engine__plan_cte_reader(stmt, item, &plan.scope, &plan.op)
             : plan_table_source(&plan, item);
    *scope = plan.scope;
    *op = plan.op;
    return rc;
}

static int plan_source(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;

    plan->scope.rowid_column = -1;
    if (select->from_count == 0) {
        plan->op = engine__op_values(plan->stmt, NULL, 1, 0);
        return plan->op == NULL ? COMMON_ENOMEM : 0;
    }
    if (select->from_count > 1 ||
        (select->from[0].select != NULL && select->from[0].select->nested)) {
        /* The joins are made with the WHERE (compile_where); a
         * parenthesized join alone is one too, for its columns' names. */
        return engine__join_begin(plan->stmt, select, &plan->scope,
                                  &plan->join);
    }
    if (select->from[0].function) {
        return plan_function_source(plan, &select->from[0]);
    }
    if (select->from[0].select != NULL) {
        return plan_subquery_source(plan, &select->from[0]);
    }
    if (select->from[0].recursive) {
        return engine__plan_cte_reader(plan->stmt, &select->from[0],
                                       &plan->scope, &plan->op);
    }
    return plan_table_source(plan, &select->from[0]);
}

/* A column reference AST for scope column i (for * expansion). */
static struct ast_expr *column_ast(struct select_plan *plan, size_t i)
{
    struct ast_expr *ast = engine__plan_alloc(plan->stmt, sizeof(*ast));

    if (ast != NULL) {
        ast->kind = AST_COLUMN;
        ast->u.column.name = plan->scope.columns[i].name;
        ast->u.column.table = NULL;
        ast->text = plan->scope.columns[i].name;
    }
    return ast;
}

static int add_star(struct select_plan *plan, size_t *n)
{
    for (size_t i = 0; i < plan->scope.column_count; i++) {
        struct ast_expr *ast;

        if (plan->scope.columns[i].hidden) {
            continue; /* a table-valued function's HIDDEN column */
        }
        ast = column_ast(plan, i);
        if (ast == NULL) {
            return COMMON_ENOMEM;
        }
        plan->results[*n] = ast;
        plan->names[(*n)++] = plan->scope.columns[i].name;
    }
    return 0;
}

/* The name of a rowid read of the FROM item whose columns are called
 * table (NULL: the one table of an unjoined scope): its INTEGER PRIMARY
 * KEY's name if it has one, as SQLite's generateColumnNames() names the
 * column iColumn (the IPK's, which sqlite3ExprCodeGetColumn reads as the
 * rowid), else "rowid". */
static const char *rowid_name(const struct engine_scope *scope,
                              const char *table)
{
    for (size_t c = 0; c < scope->column_count; c++) {
        const struct engine_scope_column *column = &scope->columns[c];

        if (column->is_rowid_alias &&
            (table == NULL || column->table == table)) {
            return column->name;
        }
    }
    return "rowid";
}

/* The name SQLite gives an unaliased result column: a column reference is
 * named by the column's declared name, anything else by its text. */
static const char *result_name(struct select_plan *plan,
                               const struct ast_expr *ast)
{
    if (ast->kind == AST_COLUMN && plan->scope.joined) {
        ptrdiff_t i = engine__join_find_column(
            &plan->scope, ast->u.column.table, ast->u.column.name);

        if (i >= 0 && plan->scope.columns[i].is_rowid) {
            return plan->scope.columns[i].untyped
                       ? "rowid"
                       : rowid_name(&plan->scope, plan->scope.columns[i].table);
        }
        return i >= 0              ? plan->scope.columns[i].name
               : ast->text != NULL ? ast->text
                                   : "?";
    }
    if (ast->kind == AST_COLUMN) {
        ptrdiff_t i = -1;

        for (size_t c = 0; c < plan->scope.column_count; c++) {
            if (plan->scope.columns[c].name != NULL &&
                strcasecmp(plan->scope.columns[c].name, ast->u.column.name) ==
                    0) {
                i = (ptrdiff_t)c;
                break;
            }
        }
        if (i >= 0) {
            return plan->scope.columns[i].name;
        }
        /* A rowid read (rowid, oid, _rowid_). */
        if (engine__table_is_rowid_name(ast->u.column.name)) {
            return plan->scope.null_rowid || plan->scope.rowid_column < 0
                       ? "rowid"
                       : rowid_name(&plan->scope, NULL);
        }
    }
    return ast->text != NULL ? ast->text : "?";
}

/* Whether the FROM item is called name (its alias, else its table). */
static bool scope_is_named(const struct engine_scope *scope, const char *name)
{
    const char *own = scope->alias != NULL ? scope->alias : scope->table_name;

    return own != NULL && strcasecmp(own, name) == 0;
}

static int expand_results(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    size_t max = select->column_count * (plan->scope.column_count + 1);
    size_t n = 0;

    plan->results = engine__plan_alloc(plan->stmt, (max + 1) * sizeof(void *));
    plan->names = engine__plan_alloc(plan->stmt, (max + 1) * sizeof(void *));
    if (plan->results == NULL || plan->names == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < select->column_count; i++) {
        const struct ast_result_column *column = &select->columns[i];
        int rc;

        if (column->kind == AST_RESULT_EXPR) {
            plan->results[n] = column->expr;
            plan->names[n++] = column->alias != NULL
                                   ? column->alias
                                   : result_name(plan, column->expr);
            continue;
        }
        if (select->from_count == 0) {
            return plan_error(plan, "no tables specified%s", "");
        }
        if (plan->scope.joined) {
            rc = engine__join_star(
                plan->stmt, &plan->scope,
                column->kind == AST_RESULT_TABLE_STAR ? column->table : NULL,
                plan->results, plan->names, &n);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (column->kind == AST_RESULT_TABLE_STAR &&
            !scope_is_named(&plan->scope, column->table)) {
            return plan_error(plan, "no such table: %s", column->table);
        }
        rc = add_star(plan, &n);
        if (rc != 0) {
            return rc;
        }
    }
    /* selectExpander's limit, which also keeps every row within the
     * ENGINE_MAX_COLUMNS values operators copy a row into. */
    if (n > ENGINE_MAX_COLUMNS) {
        return plan_error(plan, "too many columns in result set%s", "");
    }
    plan->result_count = n;
    return 0;
}

/* The rows of the table the WHERE lets a lookup find (access.h): only
 * those are read; without a lookup, the blocks zone maps rule out are
 * passed over (zone.h). */
static int plan_table_access(struct select_plan *plan,
                             const struct engine_table *table,
                             const struct ast_expr *where)
{
    struct engine_access *access;
    struct engine_zone_plan *zones = NULL;
    int rc = engine__plan_access(plan->stmt, table, plan->scope.rowid_column,
                                 &plan->select->from[0].hint, where,
                                 plan->where, &access);

    if (rc == 0 && access == NULL) {
        rc = engine__plan_zones(plan->stmt, table, plan->where, &zones);
    }
    if (rc != 0) {
        return oom(plan);
    }
    if (access != NULL) {
        engine__op_scan_access(plan->op, access);
    }
    if (zones != NULL) {
        engine__op_scan_zones(plan->op, zones);
    }
    return 0;
}

static int compile_where(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    const struct engine_table *table = NULL;
    const struct ast_expr *where = select->where;
    struct engine_compile ctx;
    int rc;

    if (plan->join != NULL) {
        rc = engine__join_finish(plan->join, where, &plan->op, &where);
        if (rc != 0) {
            return rc;
        }
    }
    if (where == NULL) {
        return 0;
    }
    if (select->from_count == 1 && select->from[0].table != NULL) {
        table = engine__catalog_find(plan->stmt->db, select->from[0].table);
    }
    where = engine__plan_rowid_terms_first(plan->stmt, where, table);
    if (where == NULL) {
        return oom(plan);
    }
    compile_context(plan, &ctx, "WHERE", false);
    rc = engine__compile_expr(&ctx, where, &plan->where);
    if (rc == 0) {
        engine__expr_mark_condition(plan->where);
        plan->where->is_factored = true;
        plan->where->is_where = true;
    }
    return rc == 0 && table != NULL ? plan_table_access(plan, table, where)
                                    : rc;
}

/* An integer literal's value, if ast is one. */
static bool ast_integer(const struct ast_expr *ast, int64_t *out)
{
    if (ast->kind == AST_LITERAL && ast->u.literal.type == ENGINE_INTEGER) {
        *out = ast->u.literal.u.i;
        return true;
    }
    return false;
}

/* The result expression an ORDER BY / GROUP BY term stands for: by
 * ordinal (1-based) or by alias; or the term itself. */
static const char *ordinal_suffix(size_t n)
{
    if (n % 100 >= 11 && n % 100 <= 13) {
        return "th";
    }
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* An ordinal or alias written with COLLATE ("ORDER BY 1 COLLATE NOCASE")
 * stands for the result expression under that collation: SQLite looks the
 * term up with its COLLATEs skipped, then resolveAlias() wraps the copy of
 * the result in the outermost COLLATE (resolve.c). */
static int wrap_collate(struct select_plan *plan, const struct ast_expr *term,
                        const struct ast_expr **out, ptrdiff_t *result_index)
{
    struct ast_expr *e;

    if (term->kind != AST_COLLATE) {
        return 0;
    }
    e = engine__plan_alloc(plan->stmt, sizeof(*e));
    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    *e = *term;
    e->u.collate.operand = (struct ast_expr *)*out;
    *out = e;
    *result_index = -1;
    return 0;
}

static int resolve_term(struct select_plan *plan, const struct ast_expr *term,
                        const char *clause, size_t term_number,
                        const struct ast_expr **out, ptrdiff_t *result_index)
{
    const struct ast_expr *bare = term;
    int64_t ordinal;

    while (bare->kind == AST_COLLATE) {
        bare = bare->u.collate.operand;
    }
    *out = term;
    *result_index = -1;
    if (ast_integer(bare, &ordinal)) {
        if (ordinal < 1 || (uint64_t)ordinal > plan->result_count) {
            return engine__db_error(
                plan->stmt->db, ENGINE_ESQL,
                "%zu%s %s term out of range - should be between 1 and %zu",
                term_number, ordinal_suffix(term_number), clause,
                plan->result_count);
        }
        *result_index = (ptrdiff_t)ordinal - 1;
        *out = plan->results[ordinal - 1];
        return wrap_collate(plan, term, out, result_index);
    }
    for (size_t i = 0;
         bare->kind == AST_COLUMN && bare->u.column.table == NULL &&
         i < plan->select->column_count;
         i++) {
        const struct ast_result_column *column = &plan->select->columns[i];

        if (column->kind == AST_RESULT_EXPR && column->alias != NULL &&
            strcasecmp(column->alias, bare->u.column.name) == 0 &&
            !engine__ast_equal(column->expr, bare)) {
            *out = column->expr;
            break;
        }
    }
    for (size_t i = 0; i < plan->result_count; i++) {
        if (engine__ast_equal(plan->results[i], *out)) {
            *result_index = (ptrdiff_t)i;
            break;
        }
    }
    return *out != term ? wrap_collate(plan, term, out, result_index) : 0;
}

/* The aggregate calls of the query: those written in it but the ones that
 * belong to an enclosing query, and those its subqueries gave it
 * (expr_outer.c). */
static size_t count_query_aggregates(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    struct engine_compile ctx;
    size_t count = engine__outer_aggregates(plan->stmt, select);
    size_t foreign;

    compile_context(plan, &ctx, "result", true);
    count += engine__ast_count_aggregates(select->having);
    foreign = engine__outer_foreign_aggregates(&ctx, select->having);
    for (size_t i = 0; i < plan->result_count; i++) {
        count += engine__ast_count_aggregates(plan->results[i]);
        foreign += engine__outer_foreign_aggregates(&ctx, plan->results[i]);
    }
    for (size_t i = 0; i < select->order_by_count; i++) {
        count += engine__ast_count_aggregates(select->order_by[i].expr);
        foreign +=
            engine__outer_foreign_aggregates(&ctx, select->order_by[i].expr);
    }
    return count - foreign;
}

/* Resolves and compiles the GROUP BY keys against the source. */
static int plan_group_keys(struct select_plan *plan)
{
    const struct ast_expr_list *group_by = &plan->select->group_by;
    struct engine_agg_plan *agg = plan->agg;
    struct ast_expr_list *resolved =
        engine__plan_alloc(plan->stmt, sizeof(*resolved));
    struct engine_compile ctx;

    if (resolved == NULL) {
        return COMMON_ENOMEM;
    }
    resolved->items = engine__plan_alloc(
        plan->stmt, (group_by->count + 1) * sizeof(*resolved->items));
    agg->keys = engine__plan_alloc(plan->stmt,
                                   (group_by->count + 1) * sizeof(*agg->keys));
    if (resolved->items == NULL || agg->keys == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(plan, &ctx, "GROUP BY", false);
    for (size_t i = 0; i < group_by->count; i++) {
        const struct ast_expr *term;
        ptrdiff_t result_index;
        int rc = resolve_term(plan, group_by->items[i], "GROUP BY", i + 1,
                              &term, &result_index);

        if (rc == 0 && engine__ast_has_aggregate(term)) {
            rc = plan_error(plan,
                            "aggregate functions are not allowed in "
                            "the GROUP BY clause%s",
                            "");
        }
        if (rc == 0) {
            ctx.local_only = term == group_by->items[i];
            rc = engine__compile_expr(&ctx, term, &agg->keys[i]);
        }
        if (rc != 0) {
            return rc;
        }
        resolved->items[i] = (struct ast_expr *)term;
    }
    resolved->count = group_by->count;
    agg->group_by = resolved;
    agg->key_count = group_by->count;
    return 0;
}

static int begin_aggregation(struct select_plan *plan)
{
    size_t aggregates = count_query_aggregates(plan);
    struct engine_agg_plan *agg;

    if (aggregates == 0 && plan->select->group_by.count == 0) {
        if (plan->select->having != NULL) {
            return plan_error(plan, "HAVING clause on a non-aggregate query%s",
                              "");
        }
        return 0;
    }
    agg = engine__plan_alloc(plan->stmt, sizeof(*agg));
    if (agg == NULL) {
        return COMMON_ENOMEM;
    }
    plan->agg = agg;
    agg->aggregate_capacity = aggregates;
    agg->bare_capacity = ENGINE_MAX_COLUMNS;
    agg->aggregates = engine__plan_alloc(
        plan->stmt, (aggregates + 1) * sizeof(*agg->aggregates));
    agg->aggregate_asts = engine__plan_alloc(
        plan->stmt, (aggregates + 1) * sizeof(*agg->aggregate_asts));
    agg->bare =
        engine__plan_alloc(plan->stmt, agg->bare_capacity * sizeof(*agg->bare));
    agg->bare_asts = engine__plan_alloc(
        plan->stmt, agg->bare_capacity * sizeof(*agg->bare_asts));
    if (agg->aggregates == NULL || agg->aggregate_asts == NULL ||
        agg->bare == NULL || agg->bare_asts == NULL) {
        return COMMON_ENOMEM;
    }
    return plan_group_keys(plan);
}

/* ExprAlwaysFalse() (sqliteInt.h): an integer literal 0 or FALSE. */
static bool ast_always_false(const struct ast_expr *ast)
{
    return (ast->kind == AST_LITERAL || ast->kind == AST_BOOLEAN) &&
           ast->u.literal.type == ENGINE_INTEGER && ast->u.literal.u.i == 0;
}

static struct ast_expr *new_ast(struct select_plan *plan,
                                const struct ast_expr *like)
{
    struct ast_expr *e = engine__plan_alloc(plan->stmt, sizeof(*e));

    if (e != NULL) {
        e->position = like->position;
        e->text = like->text;
    }
    return e;
}

/* One step of havingToWhere() over a HAVING tree: an AND is descended,
 * any other term that is constant or built of BINARY GROUP BY terms (and
 * not always false) is ANDed onto *where and replaced by the literal 1. */
static int move_having_term(struct select_plan *plan, struct ast_expr **term,
                            struct ast_expr **where, const bool *binary)
{
    const struct ast_expr_list *group_by = plan->agg->group_by;
    struct ast_expr *t = *term;
    struct ast_expr *one;
    struct ast_expr *and;
    int rc;

    if (t->kind == AST_BINARY && t->u.binary.op == AST_AND) {
        struct ast_expr *copy = new_ast(plan, t);

        if (copy == NULL) {
            return COMMON_ENOMEM;
        }
        *copy = *t;
        *term = copy;
        rc = move_having_term(plan, &copy->u.binary.left, where, binary);
        return rc == 0 ? move_having_term(plan, &copy->u.binary.right, where,
                                          binary)
                       : rc;
    }
    if (ast_always_false(t) ||
        !engine__ast_constant_or_group_by(t, group_by, binary)) {
        return 0;
    }
    one = new_ast(plan, t);
    if (one == NULL) {
        return COMMON_ENOMEM;
    }
    one->kind = AST_LITERAL;
    one->u.literal.type = ENGINE_INTEGER;
    one->u.literal.u.i = 1;
    one->text = "1";
    *term = one;
    if (*where == NULL) {
        *where = t;
        return 0;
    }
    and = new_ast(plan, *where);
    if (and == NULL) {
        return COMMON_ENOMEM;
    }
    and->kind = AST_BINARY;
    and->u.binary.op = AST_AND;
    and->u.binary.left = *where;
    and->u.binary.right = t;
    *where = and;
    return 0;
}

/* havingToWhere() (select.c): with a GROUP BY, each term of the HAVING
 * that does not depend on the group's aggregates moves to the WHERE, so
 * it filters rows before grouping; rows it rejects are never aggregated
 * (an overflowing sum() over them raises nothing). The select is copied:
 * its WHERE and HAVING are rewritten. */
static int having_to_where(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    struct engine_agg_plan *agg = plan->agg;
    struct ast_select *copy;
    bool *binary;
    int rc;

    if (agg == NULL || select->having == NULL || agg->key_count == 0) {
        return 0;
    }
    copy = engine__plan_alloc(plan->stmt, sizeof(*copy));
    binary = engine__plan_alloc(plan->stmt, agg->key_count);
    if (copy == NULL || binary == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < agg->key_count; i++) {
        binary[i] = agg->keys[i]->collation == ENGINE_COLLATION_BINARY;
    }
    *copy = *select;
    rc = move_having_term(plan, &copy->having, &copy->where, binary);
    plan->select = copy;
    return rc;
}

/* Adds the aggregate operator, once every expression above it has been
 * compiled (they decide which aggregates and bare columns exist). */
static int finish_aggregation(struct select_plan *plan,
                              struct engine_op *source)
{
    struct engine_agg_plan *agg = plan->agg;
    const struct ast_select *select = plan->select;
    bool *descending = NULL;

    if (agg == NULL) {
        return 0;
    }
    /* resetAccumulator() (select.c), once every name is resolved: a
     * DISTINCT aggregate takes one argument, group_concat(DISTINCT x, sep)
     * is refused. */
    for (size_t i = 0; i < agg->aggregate_count; i++) {
        if (agg->aggregates[i].distinct && agg->aggregates[i].arg_count != 1) {
            return plan_error(plan,
                              "DISTINCT aggregates must have exactly one "
                              "argument%s",
                              "");
        }
    }
    /* select.c: when GROUP BY and ORDER BY have as many terms, the GROUP BY
     * sort takes the ORDER BY's ASC/DESC flags position by position ("to
     * maximize the chances of rows being delivered in an order that makes
     * the ORDER BY redundant"), which decides how ORDER BY ties come out. */
    if (agg->key_count > 0 && select->order_by_count == agg->key_count) {
        descending = engine__plan_alloc(plan->stmt, agg->key_count);
        if (descending == NULL) {
            return COMMON_ENOMEM;
        }
        for (size_t i = 0; i < agg->key_count; i++) {
            descending[i] = select->order_by[i].descending;
        }
    }
    plan->op = engine__op_aggregate(
        plan->stmt, plan->op, agg->keys, agg->key_count, agg->aggregates,
        agg->aggregate_capacity, agg->bare, agg->bare_count, agg->key_count > 0,
        descending);
    if (plan->op != NULL && agg->key_count == 0 && agg->bare_count == 0 &&
        plan->join == NULL) {
        plan->op = engine__jit_plan_aggregate(plan->stmt, plan->op, source,
                                              plan->where, agg->aggregates,
                                              agg->aggregate_capacity);
    }
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* Compiles the result columns, HAVING and hidden ORDER BY keys. */
static int compile_results(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    size_t max = plan->result_count + select->order_by_count;
    struct engine_compile ctx;
    int rc = 0;

    plan->projected =
        engine__plan_alloc(plan->stmt, (max + 1) * sizeof(void *));
    if (plan->projected == NULL) {
        return COMMON_ENOMEM;
    }
    compile_context(plan, &ctx, "result", true);
    for (size_t i = 0; rc == 0 && i < plan->result_count; i++) {
        rc = engine__compile_expr(&ctx, plan->results[i], &plan->projected[i]);
    }
    plan->projected_count = plan->result_count;
    if (rc == 0 && select->having != NULL) {
        ctx.clause = "HAVING";
        ctx.window = NULL; /* computed after HAVING: misuse there */
        rc = engine__compile_expr(&ctx, select->having, &plan->having);
    }
    if (rc == 0 && select->having != NULL) {
        engine__expr_mark_condition(plan->having);
    }
    return rc;
}

static int plan_order_term(struct select_plan *plan, size_t i)
{
    const struct ast_order_item *item = &plan->select->order_by[i];
    struct engine_sort_key *key = &plan->sort_keys[i];
    const struct ast_expr *term;
    ptrdiff_t result_index;
    struct engine_compile ctx;
    struct engine_expr *e;
    int rc =
        resolve_term(plan, item->expr, "ORDER BY", i + 1, &term, &result_index);

    if (rc != 0) {
        return rc;
    }
    compile_context(plan, &ctx, "ORDER BY", true);
    ctx.local_only = term == item->expr;
    rc = engine__compile_expr(&ctx, term, &e);
    if (rc != 0) {
        return rc;
    }
    if (result_index >= 0 && !e->explicit_collation) {
        key->column = (size_t)result_index;
        e = plan->projected[result_index];
    } else {
        key->column = plan->projected_count;
        plan->projected[plan->projected_count++] = e;
    }
    key->descending = item->descending;
    key->nulls_first = item->nulls == AST_NULLS_FIRST ||
                       (item->nulls == AST_NULLS_DEFAULT && !item->descending);
    key->collation = e->collation;
    return 0;
}

static int plan_order_by(struct select_plan *plan)
{
    size_t count = plan->select->order_by_count;

    plan->sort_keys =
        engine__plan_alloc(plan->stmt, (count + 1) * sizeof(*plan->sort_keys));
    if (plan->sort_keys == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        int rc = plan_order_term(plan, i);

        if (rc != 0) {
            return rc;
        }
    }
    plan->sort_key_count = count;
    return 0;
}

static int compile_limit(struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    struct engine_compile ctx;
    int rc;

    if (select->limit == NULL) {
        return 0;
    }
    compile_context(plan, &ctx, "LIMIT", false);
    ctx.scope = NULL;
    ctx.select = NULL;
    ctx.local_only = true;
    rc = engine__compile_expr(&ctx, select->limit, &plan->limit);
    if (rc == 0 && select->offset != NULL) {
        rc = engine__compile_expr(&ctx, select->offset, &plan->offset);
    }
    return rc;
}

static int plan_limit(struct select_plan *plan)
{
    if (plan->limit == NULL) {
        return 0;
    }
    plan->op =
        engine__op_limit(plan->stmt, plan->op, plan->limit, plan->offset);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* Projects away the hidden sort keys after the sort. */
static int trim_columns(struct select_plan *plan, size_t visible)
{
    struct engine_expr **refs =
        engine__plan_alloc(plan->stmt, (visible + 1) * sizeof(*refs));

    if (refs == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < visible; i++) {
        refs[i] = engine__plan_alloc(plan->stmt, sizeof(**refs));
        if (refs[i] == NULL) {
            return COMMON_ENOMEM;
        }
        refs[i]->op = ENGINE_EXPR_COLUMN;
        refs[i]->u.column = i;
    }
    plan->op = engine__op_project(plan->stmt, plan->op, refs, visible);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

static int plan_tail(struct select_plan *plan)
{
    struct engine_stmt *stmt = plan->stmt;
    size_t visible = plan->result_count;
    int rc;

    if (plan->select->distinct) {
        enum engine_collation *collations =
            engine__plan_alloc(stmt, (visible + 1) * sizeof(*collations));

        if (collations == NULL) {
            return COMMON_ENOMEM;
        }
        for (size_t i = 0; i < visible; i++) {
            collations[i] = plan->projected[i]->collation;
        }
        plan->op = engine__op_distinct(stmt, plan->op, collations, visible);
        if (plan->op == NULL) {
            return COMMON_ENOMEM;
        }
    }
    if (plan->sort_key_count > 0) {
        plan->op =
            engine__op_sort(stmt, plan->op, plan->sort_keys,
                            plan->sort_key_count, plan->limit, plan->offset);
        if (plan->op == NULL) {
            return COMMON_ENOMEM;
        }
    }
    rc = plan_limit(plan);
    if (rc != 0 || plan->projected_count == visible) {
        return rc;
    }
    return trim_columns(plan, visible);
}

static int plan_values_statement(struct select_plan *plan, char ***names,
                                 enum engine_affinity **affinities,
                                 size_t *column_count)
{
    size_t count = plan->select->value_column_count;
    char **value_names = engine__plan_alloc(plan->stmt, (count + 1) * 8);
    int rc = plan_values_source(plan);

    if (rc != 0 || value_names == NULL) {
        return rc != 0 ? rc : COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        char name[32];

        snprintf(name, sizeof(name), "column%zu", i + 1);
        value_names[i] =
            engine__arena_strndup(&plan->stmt->plan_arena, name, strlen(name));
        if (value_names[i] == NULL) {
            return oom(plan);
        }
    }
    if (names != NULL) {
        *names = value_names;
    }
    if (affinities != NULL) {
        *affinities =
            engine__plan_alloc(plan->stmt, (count + 1) * sizeof(**affinities));
    }
    *column_count = count;
    return 0;
}

/* Adds a filter on predicate (if any) to the pipeline. */
static int add_filter(struct select_plan *plan, struct engine_expr *predicate)
{
    if (predicate == NULL) {
        return 0;
    }
    plan->op = engine__op_filter(plan->stmt, plan->op, predicate);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* The logical plan: names resolved and every expression compiled (WHERE,
 * GROUP BY keys, aggregates, results, HAVING, ORDER BY keys, LIMIT),
 * recorded in plan; no operator but the source leaf exists yet. */
static int plan_logical(struct select_plan *plan)
{
    int rc = engine__window_begin(plan->stmt, plan->select, &plan->window);

    if (rc == 0) {
        rc = plan_source(plan);
    }
    if (rc == 0) {
        rc = expand_results(plan);
    }
    if (rc == 0) {
        rc = begin_aggregation(plan);
    }
    if (rc == 0) {
        rc = having_to_where(plan);
    }
    if (rc == 0) {
        rc = compile_where(plan);
    }
    if (rc == 0) {
        rc = compile_results(plan);
    }
    if (rc == 0) {
        rc = plan_order_by(plan);
    }
    return rc == 0 ? compile_limit(plan) : rc;
}

/* An aggregate query without GROUP BY or DISTINCT yields one row at most:
 * SQLite drops its ORDER BY (select.c, "sSort.pOrderBy = 0" in the
 * no-GROUP-BY branch) and selectInnerLoop() tests the OFFSET and LIMIT
 * before computing the result columns, so a row skipped by OFFSET (or
 * cut by LIMIT 0) never evaluates them, nor the ORDER BY keys. */
static bool single_row_aggregate(const struct select_plan *plan)
{
    return plan->agg != NULL && plan->agg->key_count == 0 &&
           !plan->select->distinct;
}

static int plan_single_row_tail(struct select_plan *plan)
{
    int rc = plan_limit(plan);

    if (rc != 0) {
        return rc;
    }
    plan->op = engine__op_project(plan->stmt, plan->op, plan->projected,
                                  plan->result_count);
    return plan->op == NULL ? COMMON_ENOMEM : 0;
}

/* Whether the ORDER BY asks for an order a scan gives: its first term is
 * the rowid (or the INTEGER PRIMARY KEY), which is unique and never NULL,
 * so SQLite drops the sort and reads the table forwards or backwards
 * (wherePathSatisfiesOrderBy). */
static bool order_is_scan_order(const struct select_plan *plan)
{
    const struct ast_select *select = plan->select;
    const struct engine_table *table;
    const struct engine_expr *first;

    if (plan->sort_key_count == 0 || plan->agg != NULL || select->distinct ||
        select->from_count != 1 || select->from[0].table == NULL ||
        (plan->window != NULL && plan->window->call_count > 0)) {
        return false;
    }
    table = engine__catalog_find(plan->stmt->db, select->from[0].table);
    first = plan->projected[plan->sort_keys[0].column];
    return table != NULL && first->op == ENGINE_EXPR_COLUMN &&
           ((ptrdiff_t)first->u.column == plan->scope.rowid_column ||
            (ptrdiff_t)first->u.column == table->rowid_alias);
}

/* Rows in scan order with a LIMIT: SQLite tests OFFSET and LIMIT before
 * it computes a row's results (selectInnerLoop, codeOffset), so a row
 * skipped or cut never evaluates them. */
static bool limit_before_results(const struct select_plan *plan)
{
    return plan->limit != NULL && plan->agg == NULL &&
           !plan->select->distinct && plan->sort_key_count == 0;
}

/* The physical plan: the operators of the logical plan in execution
 * order. source -> filter -> aggregate -> filter (HAVING) -> project ->
 * distinct -> sort (top-N) -> limit -> project (drop hidden sort keys).
 * A JIT takes the leading scan/filter/aggregate of this chain. */
static int plan_physical(struct select_plan *plan)
{
    struct engine_op *source = plan->op;
    int rc;

    /* SQLite's loop stops at the LIMIT (and EXISTS is LIMIT 1), so a row
     * after the last one needed is never tested: "EXISTS (SELECT 1 FROM t
     * WHERE abs(a))" does not overflow on a later INT64_MIN. Without
     * ORDER BY or aggregation, the WHERE is tested row by row. */
    if (order_is_scan_order(plan)) {
        if (plan->sort_keys[0].descending) {
            engine__op_scan_reverse(plan->op);
        }
        plan->sort_key_count = 0;
    }
    if (plan->where != NULL && plan->select->limit != NULL &&
        plan->agg == NULL && plan->sort_key_count == 0) {
        plan->where->is_row_by_row = true;
    }
    rc = add_filter(plan, plan->where);

    if (rc == 0) {
        rc = finish_aggregation(plan, source);
    }
    if (rc == 0) {
        rc = add_filter(plan, plan->having);
    }
    if (rc == 0) {
        rc = engine__window_plan_ops(plan->stmt, plan->window, &plan->op);
    }
    if (rc == 0 && (single_row_aggregate(plan) || limit_before_results(plan))) {
        return plan_single_row_tail(plan);
    }
    if (rc == 0) {
        plan->op = engine__op_project(plan->stmt, plan->op, plan->projected,
                                      plan->projected_count);
        rc = plan->op == NULL ? COMMON_ENOMEM : 0;
    }
    return rc == 0 ? plan_tail(plan) : rc;
}

static int plan_body(struct select_plan *plan)
{
    int rc = plan_logical(plan);

    return rc == 0 ? plan_physical(plan) : rc;
}

/* plan_body(), again while a subquery gives the query an aggregate call
 * it did not count (expr_outer.c): it is then an aggregate query. */
static int plan_body_counted(struct select_plan *plan)
{
    struct select_plan fresh = *plan;
    size_t given = engine__outer_aggregates(plan->stmt, plan->select);
    int rc = plan_body(plan);

    while (rc == ENGINE__PLAN_AGAIN &&
           engine__outer_aggregates(plan->stmt, plan->select) != given) {
        given = engine__outer_aggregates(plan->stmt, plan->select);
        engine__db_clear_error(plan->stmt->db);
        *plan = fresh;
        rc = plan_body(plan);
    }
    return rc == ENGINE__PLAN_AGAIN && plan->stmt->outer == NULL ? ENGINE_ESQL
                                                                 : rc;
}

int engine__plan_select(struct engine_stmt *stmt,
                        const struct ast_select *select,
                        struct engine_op **root, char ***names,
                        enum engine_affinity **affinities, size_t *column_count)
{
    return plan_select_into(stmt, select, root, names, affinities, NULL,
                            column_count);
}

int engine__plan_select_projected(struct engine_stmt *stmt,
                                  const struct ast_select *select,
                                  struct engine_op **root,
                                  enum engine_affinity **affinities,
                                  struct engine_expr ***projected,
                                  size_t *column_count)
{
    if (select->compound != AST_COMPOUND_NONE) {
        return engine__plan_compound(stmt, select, ENGINE_COMPOUND_EXPR, root,
                                     NULL, affinities, projected, column_count);
    }
    return plan_select_into(stmt, select, root, NULL, affinities, projected,
                            column_count);
}

int engine__plan_select_arm(struct engine_stmt *stmt,
                            const struct ast_select *select,
                            struct engine_select_arm *out)
{
    struct select_plan plan = {.stmt = stmt, .select = select};
    const struct ast_select *flat;
    const struct ast_expr **results;
    int rc;

    ASSERT(select->compound == AST_COMPOUND_NONE);
    memset(out, 0, sizeof(*out));
    if (select->columns == NULL) {
        rc = plan_values_statement(&plan, &out->names, &out->affinities,
                                   &out->column_count);
        out->root = plan.op;
        return rc;
    }
    rc = plan_body_counted(&plan);
    results = plan.results;
    if (rc == 0 && (flat = engine__plan_flatten(stmt, select)) != select) {
        /* Planned first as written, for the errors and names SQLite gives
         * before it flattens; then again flattened. */
        plan = (struct select_plan){.stmt = stmt, .select = flat};
        rc = flat != NULL ? plan_body_counted(&plan) : COMMON_ENOMEM;
    }
    if (rc != 0) {
        return rc;
    }
    out->affinities = engine__plan_alloc(stmt, (plan.result_count + 1) *
                                                   sizeof(*out->affinities));
    if (out->affinities == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < plan.result_count; i++) {
        out->affinities[i] = plan.projected[i]->affinity;
    }
    out->names = (char **)plan.names;
    out->projected = plan.projected;
    out->results = results;
    out->root = plan.op;
    out->column_count = plan.result_count;
    return 0;
}

static int plan_select_into(struct engine_stmt *stmt,
                            const struct ast_select *select,
                            struct engine_op **root, char ***names,
                            enum engine_affinity **affinities,
                            struct engine_expr ***projected,
                            size_t *column_count)
{
    struct engine_select_arm arm;
    int rc;

    /* Only plan_subquery_source() asks for projected here. */
    if (select->compound != AST_COMPOUND_NONE) {
        return engine__plan_compound(
            stmt, select,
            projected != NULL ? ENGINE_COMPOUND_FROM : ENGINE_COMPOUND_RESULT,
            root, names, affinities, projected, column_count);
    }
    rc = engine__plan_select_arm(stmt, select, &arm);
    if (rc != 0) {
        return rc;
    }
    if (names != NULL) {
        *names = arm.names;
    }
    if (affinities != NULL) {
        *affinities = arm.affinities;
    }
    if (projected != NULL) {
        *projected = arm.projected;
    }
    *root = arm.root;
    *column_count = arm.column_count;
    return 0;
}
