/* SPDX-License-Identifier: MIT
 *
 * plan_tables.c: which missing table a SELECT reports first.
 *
 * Before it resolves any column, SQLite looks up every table the SELECT
 * names, subqueries in expressions included (sqlite3SelectPrep, then
 * selectExpander through sqlite3WalkSelect): for each SELECT its FROM
 * items first, then its expressions in the order result columns, WHERE,
 * GROUP BY, HAVING, ORDER BY, LIMIT, each walked depth first. So of a
 * missing table and a missing column, or of two missing tables, the one
 * reported is the first in that walk, whatever order sinew compiles in.
 */
#include <strings.h>

#include "engine_int.h"
#include "plan.h"
#include "tvf.h"

static int check_select(struct engine_stmt *stmt,
                        const struct ast_select *select);

static int check_expr(struct engine_stmt *stmt, const struct ast_expr *ast);

static int check_list(struct engine_stmt *stmt, struct ast_expr *const *items,
                      size_t count)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < count; i++) {
        rc = check_expr(stmt, items[i]);
    }
    return rc;
}

static int check3(struct engine_stmt *stmt, const struct ast_expr *a,
                  const struct ast_expr *b, const struct ast_expr *c)
{
    int rc = check_expr(stmt, a);

    rc = rc != 0 ? rc : check_expr(stmt, b);
    return rc != 0 ? rc : check_expr(stmt, c);
}

/* CASE: the operand, then WHEN and THEN pairs in turn, then ELSE. */
static int check_case(struct engine_stmt *stmt, const struct ast_expr *ast)
{
    int rc = check_expr(stmt, ast->u.case_.operand);

    for (size_t i = 0; rc == 0 && i < ast->u.case_.whens.count; i++) {
        rc = check3(stmt, ast->u.case_.whens.items[i],
                    ast->u.case_.thens.items[i], NULL);
    }
    return rc != 0 ? rc : check_expr(stmt, ast->u.case_.else_);
}

static int check_expr(struct engine_stmt *stmt, const struct ast_expr *ast)
{
    int rc;

    if (ast == NULL) {
        return 0;
    }
    switch (ast->kind) {
    case AST_UNARY:
    case AST_IS_NULL:
    case AST_NOT_NULL:
        return check_expr(stmt, ast->u.unary.operand);
    case AST_BINARY:
        return check3(stmt, ast->u.binary.left, ast->u.binary.right, NULL);
    case AST_COLLATE:
        return check_expr(stmt, ast->u.collate.operand);
    case AST_CAST:
        return check_expr(stmt, ast->u.cast.operand);
    case AST_CASE:
        return check_case(stmt, ast);
    case AST_BETWEEN:
        return check3(stmt, ast->u.between.operand, ast->u.between.low,
                      ast->u.between.high);
    case AST_LIKE: /* like(pattern, operand, escape) */
        return check3(stmt, ast->u.like.pattern, ast->u.like.operand,
                      ast->u.like.escape);
    case AST_IN_LIST:
        if (ast->u.in_list.items.count == 0) {
            return 0; /* "x IN ()": the parser dropped x */
        }
        rc = check_expr(stmt, ast->u.in_list.operand);
        return rc != 0 ? rc
                       : check_list(stmt, ast->u.in_list.items.items,
                                    ast->u.in_list.items.count);
    case AST_IN_SELECT:
        rc = check_expr(stmt, ast->u.in_select.operand);
        return rc != 0 ? rc : check_select(stmt, ast->u.in_select.select);
    case AST_EXISTS:
    case AST_SUBQUERY:
        return check_select(stmt, ast->u.subquery.select);
    case AST_FUNCTION:
        rc = check_list(stmt, ast->u.function.args.items,
                        ast->u.function.args.count);
        return rc != 0 ? rc : check_expr(stmt, ast->u.function.filter);
    default:
        return 0;
    }
}

static bool is_schema_name(const char *name)
{
    return strcasecmp(name, "sqlite_schema") == 0 ||
           strcasecmp(name, "sqlite_master") == 0;
}

/* A name that is no table: a view, whose SELECT selectExpander walks
 * when it meets it (its own missing tables named "main.t"), or missing. */
static int check_view(struct engine_stmt *stmt,
                      const struct ast_from_item *item)
{
    struct engine_view_use use;
    int rc = engine__view_use(stmt, item, &use);

    if (rc != 0 || use.view != NULL) {
        if (rc == 0) {
            use.view->expanding++;
            rc = check_select(stmt, use.item.select);
            use.view->expanding--;
        }
        return rc;
    }
    return engine__db_error(stmt->db, ENGINE_ESQL, "no such table: %s%s",
                            engine__view_inside(stmt->db) ? "main." : "",
                            item->table);
}

static int check_from(struct engine_stmt *stmt, const struct ast_select *select)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < select->from_count; i++) {
        const struct ast_from_item *item = &select->from[i];

        if (item->select != NULL) {
            rc = check_select(stmt, item->select); /* a CTE's body too */
        } else if (item->recursive) {
            continue; /* a recursive CTE's row: no table */
        } else if (item->function) {
            rc = engine__tvf_check(stmt, item);
            rc = rc != 0 ? rc
                         : check_list(stmt, item->args.items, item->args.count);
        } else if (engine__catalog_find(stmt->db, item->table) == NULL &&
                   !is_schema_name(item->table)) {
            rc = check_view(stmt, item);
        }
    }
    return rc;
}

/* A compound: SQLite's walk starts at its last SELECT (which holds the
 * compound's ORDER BY and LIMIT) and goes left through pPrior. */
static int check_compound(struct engine_stmt *stmt,
                          const struct ast_select *select)
{
    int rc = check_select(stmt, select->right);

    for (size_t i = 0; rc == 0 && i < select->order_by_count; i++) {
        rc = check_expr(stmt, select->order_by[i].expr);
    }
    rc = rc != 0 ? rc : check3(stmt, select->limit, select->offset, NULL);
    return rc != 0 ? rc : check_select(stmt, select->left);
}

static int check_select(struct engine_stmt *stmt,
                        const struct ast_select *select)
{
    int rc;

    if (select->compound != AST_COMPOUND_NONE) {
        return check_compound(stmt, select);
    }
    rc = check_from(stmt, select);

    for (size_t i = 0;
         rc == 0 && select->columns != NULL && i < select->column_count; i++) {
        rc = check_expr(stmt, select->columns[i].expr);
    }
    rc = rc != 0 ? rc : check_expr(stmt, select->where);
    rc = rc != 0
             ? rc
             : check_list(stmt, select->group_by.items, select->group_by.count);
    rc = rc != 0 ? rc : check_expr(stmt, select->having);
    for (size_t i = 0; rc == 0 && i < select->order_by_count; i++) {
        rc = check_expr(stmt, select->order_by[i].expr);
    }
    rc = rc != 0 ? rc : check3(stmt, select->limit, select->offset, NULL);
    return rc != 0 ? rc
                   : check_list(stmt, select->values,
                                select->value_row_count *
                                    select->value_column_count);
}

int engine__plan_check_tables(struct engine_stmt *stmt,
                              const struct ast_select *select)
{
    return check_select(stmt, select);
}
