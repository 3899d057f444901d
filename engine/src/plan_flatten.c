/* SPDX-License-Identifier: MIT
 *
 * plan_flatten.c: a FROM subquery merged into its outer query.
 *
 * SQLite flattens "SELECT ... FROM (SELECT * FROM t WHERE w) AS x WHERE v"
 * into "SELECT ... FROM t AS x WHERE w AND v" (flattenSubquery in
 * select.c, the subquery's WHERE first). Its results are the same either
 * way, but not which expressions run: the merged WHERE is one condition,
 * so a constant term of w that is false skips the scan before v runs, and
 * v's terms run only on rows w let through in the same jumps. sinew
 * flattens the one shape whose columns need no substitution: a subquery of
 * "*" over one table with at most a WHERE, which holds no subquery.
 * SQLite's other conditions (restrictions 1 to 28) all hold for it.
 */
#include <strings.h>

#include "engine_int.h"
#include "plan.h"

/* A column reference qualified by anything but name, the new FROM item's
 * name: it would no longer resolve. */
static bool qualified_elsewhere(const struct ast_expr *ast, const void *name)
{
    return ast->kind == AST_COLUMN && ast->u.column.table != NULL &&
           strcasecmp(ast->u.column.table, name) != 0;
}

/* A subquery: its columns qualified by the table's own name ("EXISTS
 * (SELECT 1 FROM u WHERE u.c = t.a)") would no longer resolve once the
 * table takes the outer alias, and SQLite, which resolves names before it
 * flattens, still reads them. */
static bool is_subquery(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    return ast->kind == AST_EXISTS || ast->kind == AST_SUBQUERY ||
           ast->kind == AST_IN_SELECT;
}

static bool names_rowid(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    return ast->kind == AST_COLUMN &&
           engine__table_is_rowid_name(ast->u.column.name);
}

/* Whether the outer query names "rowid", which reads NULL through a
 * subquery but would read the table's rowid once flattened. */
static bool outer_names_rowid(const struct ast_select *outer)
{
    for (size_t i = 0; i < outer->column_count; i++) {
        if (engine__ast_any(outer->columns[i].expr, names_rowid, NULL)) {
            return true;
        }
    }
    for (size_t i = 0; i < outer->group_by.count; i++) {
        if (engine__ast_any(outer->group_by.items[i], names_rowid, NULL)) {
            return true;
        }
    }
    for (size_t i = 0; i < outer->order_by_count; i++) {
        if (engine__ast_any(outer->order_by[i].expr, names_rowid, NULL)) {
            return true;
        }
    }
    return engine__ast_any(outer->where, names_rowid, NULL) ||
           engine__ast_any(outer->having, names_rowid, NULL);
}

static bool can_flatten(const struct ast_select *outer)
{
    const struct ast_select *sub;

    if (outer->columns == NULL || outer->from_count != 1 ||
        outer->from[0].select == NULL || outer->from[0].alias == NULL) {
        return false;
    }
    /* A CTE's column list renames what "*" would name. */
    if (outer->from[0].cte != NULL && outer->from[0].cte->columns != NULL) {
        return false;
    }
    sub = outer->from[0].select;
    return sub->columns != NULL && sub->column_count == 1 &&
           sub->columns[0].kind == AST_RESULT_STAR && !sub->distinct &&
           sub->from_count == 1 && sub->from[0].table != NULL &&
           !sub->from[0].function && sub->group_by.count == 0 &&
           sub->having == NULL && sub->order_by_count == 0 &&
           sub->limit == NULL && sub->offset == NULL &&
           !outer_names_rowid(outer) &&
           !engine__ast_any(sub->where, qualified_elsewhere,
                            outer->from[0].alias) &&
           !engine__ast_any(sub->where, is_subquery, NULL);
}

const struct ast_select *engine__plan_flatten(struct engine_stmt *stmt,
                                              const struct ast_select *select)
{
    const struct ast_select *sub;
    struct ast_select *flat;
    struct ast_from_item *from;

    if (!can_flatten(select)) {
        return select;
    }
    sub = select->from[0].select;
    flat = engine__plan_alloc(stmt, sizeof(*flat));
    from = engine__plan_alloc(stmt, sizeof(*from));
    if (flat == NULL || from == NULL) {
        return NULL;
    }
    *flat = *select;
    *from = sub->from[0];
    from->alias = select->from[0].alias;
    flat->from = from;
    flat->where = sub->where;
    if (sub->where != NULL && select->where != NULL) {
        flat->where = engine__plan_ast_and(stmt, sub->where, select->where);
        if (flat->where == NULL) {
            return NULL;
        }
    } else if (select->where != NULL) {
        flat->where = select->where;
    }
    return flat;
}
