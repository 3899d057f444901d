/* SPDX-License-Identifier: MIT
 *
 * plan_nested.c: a parenthesized join with an alias, ON or USING, or after
 * other FROM items ("FROM t0 LEFT JOIN (t1 JOIN t2 ON ...) AS z ON ...").
 * SQLite's parser makes it the subquery "SELECT * FROM t1 JOIN t2 ON ..."
 * flagged SF_NestedFrom (parse.y's seltablist rule), and its "*" then
 * expands differently (selectExpander() in select.c):
 *
 *   - every column of every inner table is a column of the subquery, the
 *     right copy of a USING column too; each keeps its table's name, so
 *     the outer query reads "t1.b" (sqlite3MatchEName in lookupName);
 *   - before the columns of an item followed by a USING join come the
 *     USING columns themselves, read unqualified inside ("..a"); a name
 *     found there is not looked for further in the group;
 *   - the columns of a USING name, of a nested group's hidden ones, are
 *     left out of the outer "*" (COLFLAG_NOEXPAND), not out of "t1.*";
 *   - the subquery's column names are made unique ("a", "a:1"), and that
 *     is how the outer query names a column read from it ("t1.a" shows
 *     "a:1"); after the group's alias ("z.a") those names are looked up.
 *
 * Here the inner items are joined as any FROM clause is (plan_join.c) and
 * the columns above are projected from the combined row; the scope column
 * fields nested_name, nested_table and nested_using let
 * engine__join_find_column() resolve names as lookupName() does.
 */
#include <string.h>
#include <strings.h>

#include "join.h"
#include "join_int.h"
#include "plan.h"

/* The columns being built for the group. */
struct nested_columns {
    struct engine_stmt *stmt;
    struct engine_scope *inner; /* the inner join's combined scope */
    struct engine_expr **exprs;
    struct engine_scope_column *columns;
    char **names;
    size_t count;
};

static bool name_in(const char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++) {
        if (strcasecmp(names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Compiles a reference to table.name (table NULL: unqualified) over the
 * inner join and appends it with its scope column c. */
static int add_column(struct nested_columns *nc, const char *table,
                      const char *name, struct engine_scope_column *c)
{
    struct ast_expr ast = {.kind = AST_COLUMN, .text = name};
    struct engine_compile ctx = {
        .stmt = nc->stmt, .scope = nc->inner, .clause = "FROM"};
    struct engine_expr *e;
    int rc;

    ast.u.column.table = table;
    ast.u.column.name = name;
    rc = engine__compile_expr(&ctx, &ast, &e);
    if (rc != 0) {
        return rc;
    }
    c->affinity = e->affinity;
    c->untyped = !e->has_affinity;
    c->collation = e->collation;
    c->has_collation = e->has_collation;
    nc->exprs[nc->count] = e;
    nc->names[nc->count] = (char *)c->name;
    nc->columns[nc->count++] = *c;
    return 0;
}

/* Item k's columns, after the USING columns of the join that follows it. */
static int add_item_columns(struct nested_columns *nc,
                            const struct engine_join_plan *join, size_t k)
{
    const struct join_item *it = &join->items[k];
    const struct join_item *next =
        k + 1 < join->count ? &join->items[k + 1] : NULL;
    int rc = 0;

    for (size_t u = 0; rc == 0 && next != NULL && u < next->using_count; u++) {
        struct engine_scope_column c = {
            .name = next->using_names[u],
            .nested_name = next->using_names[u],
            .nested_using = true,
        };

        rc = add_column(nc, NULL, c.name, &c);
    }
    for (size_t i = 0; rc == 0 && i < it->scope.column_count; i++) {
        const struct engine_scope_column *own = &it->scope.columns[i];
        bool inner_group = own->nested_name != NULL;
        struct engine_scope_column c = {
            .name = own->name,
            .nested_name = inner_group ? own->nested_name : own->name,
            .nested_table = inner_group ? own->nested_table : it->name,
            .star_hidden =
                own->star_hidden ||
                name_in(it->using_names, it->using_count, own->name) ||
                (next != NULL &&
                 name_in(next->using_names, next->using_count, own->name)),
        };

        if (own->name == NULL || own->hidden) {
            continue;
        }
        rc = add_column(nc, it->name, own->name, &c);
    }
    return rc;
}

/* The join's operator, with the WHERE terms it leaves (none: there is no
 * WHERE) run above it. */
static int join_op(struct engine_stmt *stmt, struct engine_join_plan *join,
                   struct engine_scope *inner, struct engine_op **op)
{
    const struct ast_expr *residual = NULL;
    struct engine_compile ctx = {
        .stmt = stmt, .scope = inner, .clause = "WHERE"};
    struct engine_expr *predicate;
    int rc = engine__join_finish(join, NULL, op, &residual);

    if (rc != 0 || residual == NULL) {
        return rc;
    }
    rc = engine__compile_expr(&ctx, residual, &predicate);
    if (rc != 0) {
        return rc;
    }
    *op = engine__op_filter(stmt, *op, predicate);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

int engine__plan_nested_source(struct engine_stmt *stmt,
                               const struct ast_from_item *item,
                               struct engine_scope *scope,
                               struct engine_op **op)
{
    struct engine_scope inner;
    struct engine_join_plan *join;
    struct nested_columns nc = {.stmt = stmt, .inner = &inner};
    const char *own = item->alias != NULL ? item->alias : "";
    const char *tag;
    size_t max;
    int rc = engine__join_begin(stmt, item->select, &inner, &join);

    if (rc != 0) {
        return rc;
    }
    /* Each column once, and each USING name once per join. */
    max = inner.column_count * 2 + 1;
    nc.exprs = engine__plan_alloc(stmt, max * sizeof(*nc.exprs));
    nc.columns = engine__plan_alloc(stmt, (max + 1) * sizeof(*nc.columns));
    nc.names = engine__plan_alloc(stmt, max * sizeof(*nc.names));
    if (nc.exprs == NULL || nc.columns == NULL || nc.names == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t k = 0; rc == 0 && k < join->count; k++) {
        rc = add_item_columns(&nc, join, k);
    }
    rc = rc != 0 ? rc : join_op(stmt, join, &inner, op);
    rc = rc != 0 ? rc : engine__plan_unique_names(stmt, nc.names, nc.count);
    if (rc != 0) {
        return rc;
    }
    *op = engine__op_project(stmt, *op, nc.exprs, nc.count);
    if (*op == NULL) {
        return COMMON_ENOMEM;
    }
    /* Its own scope (a WHERE term on it alone is compiled there) resolves
     * names as the joined one does: each column tagged with a copy of the
     * group's name, of its own. */
    tag = engine__arena_strndup(&stmt->plan_arena, own, strlen(own));
    if (tag == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nc.count; i++) {
        nc.columns[i].name = nc.names[i];
        nc.columns[i].table = tag;
    }
    memset(scope, 0, sizeof(*scope));
    scope->columns = nc.columns;
    scope->column_count = nc.count;
    scope->alias = item->alias;
    scope->rowid_column = -1;
    scope->null_rowid = true; /* "z.rowid" reads NULL */
    scope->joined = true;
    return 0;
}
