/* SPDX-License-Identifier: MIT
 *
 * view_info.c: a view's columns as PRAGMA table_info shows them: the names
 * a query reading the view gets (planned as it would be, so the errors are
 * a query's too: "no such column", "view v is circularly defined"), and
 * the declared type of each, which SQLite gives a view's column when its
 * expression is a plain column reference, following it through FROM
 * subqueries and other views to the table column (columnType() in
 * select.c, sqlite3SubqueryColumnTypes), and "" otherwise. A compound's
 * types are its leftmost SELECT's.
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "plan.h"

/* The types of a SELECT's result columns, "*" expanded, in order. */
struct type_list {
    const char **types;
    size_t count;
    size_t capacity;
};

static int select_types(struct engine_stmt *stmt, const struct ast_select *s,
                        int depth, struct type_list *out);

static int push(struct engine_stmt *stmt, struct type_list *list,
                const char *type)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        const char **types =
            engine__plan_alloc(stmt, capacity * sizeof(*types));

        if (types == NULL) {
            return COMMON_ENOMEM;
        }
        if (list->count > 0) {
            memcpy(types, list->types, list->count * sizeof(*types));
        }
        list->types = types;
        list->capacity = capacity;
    }
    list->types[list->count++] = type;
    return 0;
}

/* One FROM item's columns: names and types. A table's are its own; a
 * subquery's or a view's come from its SELECT (names as far as a plain
 * reference can tell: an alias, else the column's own name). */
struct item_columns {
    const struct engine_table *table; /* or NULL */
    const struct ast_select *select;  /* or NULL */
    const char **view_columns;        /* a view's column list, or NULL */
    size_t view_column_count;
    struct type_list types;
};

static const struct ast_select *leftmost(const struct ast_select *s)
{
    while (s->compound != AST_COMPOUND_NONE) {
        s = s->left;
    }
    return s;
}

static int item_open(struct engine_stmt *stmt, const struct ast_from_item *item,
                     int depth, struct item_columns *out)
{
    struct engine_view_use use;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (item->select != NULL) {
        out->select = item->select;
    } else if ((out->table = engine__catalog_find(stmt->db, item->table)) ==
               NULL) {
        rc = engine__view_use(stmt, item, &use);
        engine__db_clear_error(stmt->db);
        if (rc != 0 || use.view == NULL) {
            return 0; /* planning the view reported it already */
        }
        out->select = use.item.select;
        out->view_columns = use.columns;
        out->view_column_count = use.column_count;
    }
    if (out->select != NULL) {
        rc = select_types(stmt, out->select, depth + 1, &out->types);
    }
    return rc;
}

/* The name a result column of s has as a plain reference can see it. */
static const char *result_name(const struct ast_select *s, size_t i)
{
    const struct ast_result_column *c = &s->columns[i];

    if (c->alias != NULL) {
        return c->alias;
    }
    return c->expr != NULL && c->expr->kind == AST_COLUMN
               ? c->expr->u.column.name
               : NULL;
}

/* The type of column name in item, or NULL if it has none there. */
static const char *item_type(const struct item_columns *item, const char *name,
                             bool *found)
{
    const struct ast_select *s;

    *found = false;
    if (item->table != NULL) {
        ptrdiff_t c = engine__table_column_index(item->table, name);

        *found = c >= 0 || engine__table_is_rowid_name(name);
        return c >= 0   ? item->table->columns[c].type_name
               : *found ? "INTEGER"
                        : NULL;
    }
    if (item->select == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < item->view_column_count; i++) {
        if (strcasecmp(item->view_columns[i], name) == 0) {
            *found = true;
            return i < item->types.count ? item->types.types[i] : NULL;
        }
    }
    s = leftmost(item->select);
    for (size_t i = 0; item->view_column_count == 0 && s->columns != NULL &&
                       i < s->column_count && i < item->types.count;
         i++) {
        const char *own = result_name(s, i);

        if (own != NULL && strcasecmp(own, name) == 0) {
            *found = true;
            return item->types.types[i];
        }
    }
    return NULL;
}

static bool item_named(const struct ast_from_item *item, const char *name)
{
    const char *own = item->alias != NULL ? item->alias : item->table;

    return own != NULL && strcasecmp(own, name) == 0;
}

static int star_types(struct engine_stmt *stmt, struct item_columns *item,
                      struct type_list *out)
{
    int rc = 0;

    if (item->table != NULL) {
        for (size_t c = 0; rc == 0 && c < item->table->column_count; c++) {
            rc = push(stmt, out, item->table->columns[c].type_name);
        }
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < item->types.count; i++) {
        rc = push(stmt, out, item->types.types[i]);
    }
    return rc;
}

static const char *column_type(const struct ast_select *s,
                               struct item_columns *items,
                               const struct ast_expr *e)
{
    bool found;

    if (e == NULL || e->kind != AST_COLUMN) {
        return NULL;
    }
    for (size_t f = 0; f < s->from_count; f++) {
        const char *type;

        if (e->u.column.table != NULL &&
            !item_named(&s->from[f], e->u.column.table)) {
            continue;
        }
        type = item_type(&items[f], e->u.column.name, &found);
        if (found) {
            return type;
        }
    }
    return NULL;
}

static int select_types(struct engine_stmt *stmt, const struct ast_select *s,
                        int depth, struct type_list *out)
{
    struct item_columns *items;
    int rc = 0;

    s = leftmost(s);
    if (depth > ENGINE_MAX_EXPR_DEPTH) {
        return engine__db_error(stmt->db, ENGINE_ESQL,
                                "Expression tree is too large (maximum depth "
                                "%d)",
                                ENGINE_MAX_EXPR_DEPTH);
    }
    if (s->columns == NULL) {
        for (size_t i = 0; rc == 0 && i < s->value_column_count; i++) {
            rc = push(stmt, out, NULL); /* VALUES */
        }
        return rc;
    }
    items = engine__plan_alloc(stmt, (s->from_count + 1) * sizeof(*items));
    for (size_t f = 0; items != NULL && rc == 0 && f < s->from_count; f++) {
        rc = item_open(stmt, &s->from[f], depth, &items[f]);
    }
    if (items == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < s->column_count; i++) {
        const struct ast_result_column *c = &s->columns[i];

        for (size_t f = 0;
             rc == 0 && c->kind != AST_RESULT_EXPR && f < s->from_count; f++) {
            if (c->kind == AST_RESULT_STAR ||
                item_named(&s->from[f], c->table)) {
                rc = star_types(stmt, &items[f], out);
            }
        }
        if (rc == 0 && c->kind == AST_RESULT_EXPR) {
            rc = push(stmt, out, column_type(s, items, c->expr));
        }
    }
    return rc;
}

int engine__view_columns(struct engine_stmt *stmt, const char *name,
                         char ***names, const char ***types, size_t *count)
{
    struct ast_from_item item = {.table = name};
    struct item_columns columns;
    struct type_list list;
    struct engine_scope scope;
    struct engine_op *op;
    struct ast_select outer = {0};
    int rc = engine__plan_from_item(stmt, &outer, &item, &scope, &op);

    if (rc != 0) {
        return rc;
    }
    *names =
        engine__plan_alloc(stmt, (scope.column_count + 1) * sizeof(**names));
    *types =
        engine__plan_alloc(stmt, (scope.column_count + 1) * sizeof(**types));
    if (*names == NULL || *types == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < scope.column_count; i++) {
        (*names)[i] = (char *)scope.columns[i].name;
    }
    *count = scope.column_count;
    /* The types of a view's own SELECT, when they line up with its
     * columns (a USING join's shared column may not). */
    rc = item_open(stmt, &item, 0, &columns);
    list = columns.types;
    for (size_t i = 0; rc == 0 && i < *count; i++) {
        (*types)[i] = list.count == *count ? list.types[i] : NULL;
    }
    return rc;
}
