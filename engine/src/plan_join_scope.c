/* SPDX-License-Identifier: MIT
 *
 * plan_join_scope.c: the combined scope of a FROM clause of several
 * items (join.h): each item's source, its columns and rowid, and the
 * USING and NATURAL columns.
 *
 * Names. The combined scope holds each item's columns, tagged with the
 * item's name (its alias, else its table's name), then the item's rowid;
 * a name resolves as SQLite's lookupName() does: "t.x" among the columns
 * of items called t, "x" among every item's, "ambiguous column name" when
 * it names columns of two items. USING and NATURAL (sqlite3ProcessJoin)
 * turn each shared column into the term "left.x = right.x"; the right's
 * copy is then reached only as "right.x" and left out of "*". For a RIGHT
 * or FULL join the visible column is coalesce(left.x, right.x), as SQLite
 * 3.39 shows it. A parenthesized join read as a subquery (plan_nested.c)
 * keeps its inner tables' names: lookupName() matches its columns by
 * sqlite3MatchEName() first.
 */
#include <string.h>
#include <strings.h>

#include "join_int.h"
#include "tvf.h"

/* ---- names ---- */

static bool item_named(const struct engine_scope_column *c, const char *table)
{
    return c->table != NULL && strcasecmp(c->table, table) == 0;
}

/* Whether any column carries table as its own tag: a reference made by
 * "*" expansion, which must find its own item even when two items share a
 * name ("FROM t, t"). */
static bool is_own_tag(const struct engine_scope *scope, const char *table)
{
    for (size_t i = 0; i < scope->column_count; i++) {
        if (scope->columns[i].table == table) {
            return true;
        }
    }
    return false;
}

/* Whether c is column name of an inner table of a parenthesized join
 * (sqlite3MatchEName: an unqualified name by its inner name, "t1.a" by its
 * inner table too). */
static bool nested_answers(const struct engine_scope_column *c,
                           const char *table, const char *name)
{
    return c->nested_name != NULL && strcasecmp(c->nested_name, name) == 0 &&
           (table == NULL || (c->nested_table != NULL &&
                              strcasecmp(c->nested_table, table) == 0));
}

static bool column_answers(const struct engine_scope_column *c,
                           const char *table, bool own_tag, const char *name)
{
    if (table == NULL && c->nested_name != NULL) {
        return !c->qualified_only && nested_answers(c, NULL, name);
    }
    if (table != NULL && !own_tag && nested_answers(c, table, name)) {
        return true;
    }
    if (c->name == NULL || strcasecmp(c->name, name) != 0) {
        return false;
    }
    if (table == NULL) {
        return !c->qualified_only;
    }
    return own_tag ? c->table == table : item_named(c, table);
}

ptrdiff_t engine__join_find_column(const struct engine_scope *scope,
                                   const char *table, const char *name)
{
    bool own_tag = table != NULL && is_own_tag(scope, table);
    const char *group_done = NULL; /* a group whose USING column answered */
    ptrdiff_t found = -1;
    size_t count = 0;

    for (size_t i = 0; i < scope->column_count; i++) {
        const struct engine_scope_column *c = &scope->columns[i];

        if ((group_done == NULL || c->table != group_done) &&
            column_answers(c, table, own_tag, name)) {
            found = (ptrdiff_t)i;
            count++;
            /* lookupName() stops at a group's USING column (bUsingTerm);
             * matches before it in the group still count. */
            group_done = table == NULL && c->nested_using ? c->table : NULL;
        }
    }
    /* "rowid" names a rowid only qualified: unqualified, over several
     * items, SQLite finds no such column. */
    for (size_t i = 0; count == 0 && table != NULL && i < scope->column_count;
         i++) {
        const struct engine_scope_column *c = &scope->columns[i];

        if (c->is_rowid && engine__table_is_rowid_name(name) &&
            (own_tag ? c->table == table : item_named(c, table))) {
            found = (ptrdiff_t)i;
            count++;
        }
    }
    return count > 1 ? ENGINE__SCOPE_AMBIGUOUS : found;
}

static struct ast_expr *column_ast(struct engine_stmt *stmt, const char *table,
                                   const char *name)
{
    struct ast_expr *ast = engine__plan_alloc(stmt, sizeof(*ast));

    if (ast != NULL) {
        ast->kind = AST_COLUMN;
        ast->u.column.table = table;
        ast->u.column.name = name;
        ast->text = name;
    }
    return ast;
}

/* Whether "table.*" shows c: a parenthesized join's column by its inner
 * table only (selectExpander(): the group's own alias names none). */
static bool star_named(const struct engine_scope_column *c, const char *table)
{
    if (c->nested_name != NULL) {
        return c->nested_table != NULL &&
               strcasecmp(c->nested_table, table) == 0;
    }
    return item_named(c, table);
}

/* Whether every column belongs to one FROM item (a parenthesized join
 * alone in its FROM clause). */
static bool single_item(const struct engine_scope *scope)
{
    const char *tag = NULL;

    for (size_t i = 0; i < scope->column_count; i++) {
        const char *own = scope->columns[i].table;

        if (own != NULL && tag != NULL && own != tag) {
            return false;
        }
        tag = own != NULL ? own : tag;
    }
    return true;
}

/* selectExpander() writes each column "*" shows over several FROM items
 * as "schema.item.column" and resolves that (lookupName): another item of
 * the same schema ("*" for subqueries) and name with that column makes it
 * ambiguous ("FROM t, t"), unless that one is USING's copy of it. */
static int star_check(struct engine_stmt *stmt,
                      const struct engine_scope *scope,
                      const struct engine_scope_column *c)
{
    for (size_t i = 0;
         c->table != NULL && c->nested_name == NULL && i < scope->column_count;
         i++) {
        const struct engine_scope_column *d = &scope->columns[i];

        if (d->table != c->table && item_named(d, c->table) &&
            d->in_schema == c->in_schema && d->nested_name == NULL &&
            !d->is_rowid && !d->star_hidden && d->name != NULL &&
            strcasecmp(d->name, c->name) == 0) {
            return engine__db_error(
                stmt->db, ENGINE_ESQL, "ambiguous column name: %s.%s.%s",
                c->in_schema ? "main" : "*", c->table, c->name);
        }
    }
    return 0;
}

int engine__join_star(struct engine_stmt *stmt,
                      const struct engine_scope *scope, const char *table,
                      const struct ast_expr **results, const char **names,
                      size_t *n)
{
    bool single = single_item(scope);
    bool any = false;

    for (size_t i = 0; i < scope->column_count; i++) {
        const struct engine_scope_column *c = &scope->columns[i];
        /* Alone in its FROM, a group's column is named bare, as
         * selectExpander() names it when pTabList->nSrc is 1: its name
         * ("a:1") is then looked up as an inner column's. */
        bool unqualified = (table == NULL && c->star_unqualified) ||
                           (single && c->nested_name != NULL);

        if (c->name == NULL || c->is_rowid || c->hidden ||
            (table == NULL ? c->star_hidden : !star_named(c, table))) {
            continue;
        }
        if (!unqualified && star_check(stmt, scope, c) != 0) {
            return stmt->db->errcode;
        }
        results[*n] = column_ast(stmt, unqualified ? NULL : c->table, c->name);
        if (results[*n] == NULL) {
            return COMMON_ENOMEM;
        }
        names[(*n)++] = c->name;
        any = true;
    }
    if (table != NULL && !any) {
        return engine__db_error(stmt->db, ENGINE_ESQL, "no such table: %s",
                                table);
    }
    return 0;
}

/* ---- the combined scope ---- */

/* Whether item names a schema object: a table, a view or a table-valued
 * function, not a subquery or a WITH table. */
static bool from_schema(const struct ast_from_item *item)
{
    return item->table != NULL && item->cte == NULL && !item->recursive;
}

int engine__join_add_column(struct engine_join_plan *plan,
                            const struct engine_scope_column *column,
                            size_t item, bool merged)
{
    struct engine_scope *scope = plan->scope;

    if (scope->column_count == plan->column_capacity) {
        size_t capacity = plan->column_capacity * 2 + 16;
        struct engine_scope_column *columns =
            engine__plan_alloc(plan->stmt, capacity * sizeof(*columns));
        size_t *items =
            engine__plan_alloc(plan->stmt, capacity * sizeof(*items));
        bool *merges = engine__plan_alloc(plan->stmt, capacity);

        if (columns == NULL || items == NULL || merges == NULL) {
            return COMMON_ENOMEM;
        }
        if (scope->column_count > 0) {
            memcpy(columns, scope->columns,
                   scope->column_count * sizeof(*columns));
            memcpy(items, plan->column_item,
                   scope->column_count * sizeof(*items));
            memcpy(merges, plan->column_merged, scope->column_count);
        }
        scope->columns = columns;
        plan->column_item = items;
        plan->column_merged = merges;
        plan->column_capacity = capacity;
    }
    plan->column_item[scope->column_count] = item;
    plan->column_merged[scope->column_count] = merged;
    scope->columns[scope->column_count] = *column;
    scope->columns[scope->column_count++].in_schema =
        from_schema(plan->items[item].ast);
    return 0;
}

/* An item without a rowid of its own (a subquery, sqlite_schema) reads
 * NULL for it, as SQLite 3.40 does: its rows get a NULL column. */
static int add_null_rowid(struct engine_join_plan *plan, struct join_item *it)
{
    size_t n = it->scope.column_count;
    struct engine_expr **exprs =
        engine__plan_alloc(plan->stmt, (n + 1) * sizeof(*exprs));
    struct ast_expr *null = engine__plan_alloc(plan->stmt, sizeof(*null));
    struct engine_compile ctx = {.stmt = plan->stmt, .clause = "FROM"};

    if (exprs == NULL || null == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        exprs[i] = engine__plan_alloc(plan->stmt, sizeof(**exprs));
        if (exprs[i] == NULL) {
            return COMMON_ENOMEM;
        }
        exprs[i]->op = ENGINE_EXPR_COLUMN;
        exprs[i]->u.column = i;
    }
    null->kind = AST_LITERAL;
    null->u.literal = engine__value_null();
    null->text = "NULL";
    if (engine__compile_expr(&ctx, null, &exprs[n]) != 0) {
        return COMMON_ENOMEM;
    }
    it->op = engine__op_project(plan->stmt, it->op, exprs, n + 1);
    return it->op == NULL ? COMMON_ENOMEM : 0;
}

/* Whether item k's columns can read NULL whatever their table says: on
 * the right of a LEFT or FULL join, or before a RIGHT or FULL join (the
 * columns SQLite marks EP_CanBeNull). */
static bool item_nullable(const struct engine_join_plan *plan, size_t k)
{
    /* Items after k have no plan yet: their joins are read as written. */
    const struct ast_from_item *from = plan->select->from;
    enum ast_join_kind own = from[k].join;

    if (own == AST_JOIN_LEFT || own == AST_JOIN_FULL) {
        return true;
    }
    for (size_t j = k + 1; j < plan->count; j++) {
        enum ast_join_kind later = from[j].join;

        if (later == AST_JOIN_RIGHT || later == AST_JOIN_FULL) {
            return true;
        }
    }
    return false;
}

/* Plans item k's source and adds its columns to the combined scope. */
static int add_item(struct engine_join_plan *plan, size_t k)
{
    struct join_item *it = &plan->items[k];
    const char *own;
    /* A table-valued function's arguments are compiled once every item
     * is known (engine__tvf_join_arguments). */
    int rc = it->ast->function
                 ? engine__tvf_source(plan->stmt, plan->select, it->ast,
                                      &it->scope, &it->op)
                 : engine__plan_from_item(plan->stmt, plan->select, it->ast,
                                          &it->scope, &it->op);

    if (rc != 0) {
        return rc;
    }
    if (it->ast->table != NULL && it->scope.rowid_column >= 0) {
        it->table = engine__catalog_find(plan->stmt->db, it->ast->table);
    }
    if (it->scope.rowid_column < 0) {
        rc = add_null_rowid(plan, it);
    }
    own = it->ast->alias != NULL ? it->ast->alias : it->ast->table;
    /* A copy of its own, so that "*" can tag its columns uniquely (an
     * unnamed subquery's "" answers to no qualifier one can write). */
    it->name =
        engine__arena_strndup(&plan->stmt->plan_arena, own != NULL ? own : "",
                              own != NULL ? strlen(own) : 0);
    if (rc != 0 || it->name == NULL) {
        return COMMON_ENOMEM;
    }
    it->first = plan->scope->column_count;
    it->width = it->scope.column_count + 1;
    for (size_t i = 0; rc == 0 && i < it->scope.column_count; i++) {
        struct engine_scope_column c = it->scope.columns[i];

        c.table = it->name;
        c.qualified_only = false;
        c.not_null = c.not_null && !item_nullable(plan, k);
        rc = engine__join_add_column(plan, &c, k, false);
    }
    if (rc == 0) {
        struct engine_scope_column rowid = {
            .table = it->name,
            .affinity = ENGINE_AFFINITY_INTEGER,
            .is_rowid = true,
            .untyped = it->table == NULL,
            .not_null = it->table != NULL && !item_nullable(plan, k),
        };

        rc = engine__join_add_column(plan, &rowid, k, false);
    }
    return rc;
}

/* ---- USING and NATURAL ---- */

/* The column of item k named name, or -1. */
static ptrdiff_t item_column(const struct join_item *it, const char *name)
{
    for (size_t i = 0; i < it->scope.column_count; i++) {
        if (it->scope.columns[i].name != NULL &&
            strcasecmp(it->scope.columns[i].name, name) == 0) {
            return (ptrdiff_t)(it->first + i);
        }
    }
    return -1;
}

/* Whether the FROM clause has a RIGHT or FULL join (SQLite's JT_LTORJ). */
static bool has_right_join(const struct engine_join_plan *plan)
{
    for (size_t k = 1; k < plan->count; k++) {
        if (plan->select->from[k].join == AST_JOIN_RIGHT ||
            plan->select->from[k].join == AST_JOIN_FULL) {
            return true;
        }
    }
    return false;
}

/* The visible column named name left of item k: -1 none, -2 several.
 * Without a RIGHT or FULL join SQLite takes the first item that has it
 * (sqlite3ProcessJoin's tableAndColumnIndex): "ambiguous reference" is
 * only raised with JT_LTORJ. */
static ptrdiff_t left_column(const struct engine_join_plan *plan, size_t k,
                             const char *name)
{
    bool first_wins = !has_right_join(plan);
    ptrdiff_t found = -1;

    for (size_t i = 0; i < plan->items[k].first; i++) {
        const struct engine_scope_column *c = &plan->scope->columns[i];

        if (c->name != NULL && !c->qualified_only && !c->is_rowid &&
            !c->hidden && strcasecmp(c->name, name) == 0) {
            if (found >= 0) {
                return first_wins ? found : -2;
            }
            found = (ptrdiff_t)i;
        }
    }
    return found;
}

static int push_on_term(struct engine_join_plan *plan, struct join_item *it,
                        const struct ast_expr *term)
{
    const struct ast_expr **terms =
        engine__plan_alloc(plan->stmt, (it->on_count + 1) * sizeof(*terms));

    if (terms == NULL) {
        return COMMON_ENOMEM;
    }
    if (it->on_count > 0) {
        memcpy(terms, it->on_terms, it->on_count * sizeof(*terms));
    }
    terms[it->on_count++] = term;
    it->on_terms = terms;
    return 0;
}

/* "left = right" for a USING column, as two column references. */
static int using_term(struct engine_join_plan *plan, struct join_item *it,
                      size_t left, size_t right)
{
    const struct engine_scope_column *l = &plan->scope->columns[left];
    const struct engine_scope_column *r = &plan->scope->columns[right];
    struct ast_expr *eq = engine__plan_alloc(plan->stmt, sizeof(*eq));

    if (eq == NULL) {
        return COMMON_ENOMEM;
    }
    eq->kind = AST_BINARY;
    eq->position = it->ast->position;
    eq->text = "";
    eq->u.binary.op = AST_EQ;
    eq->u.binary.left = column_ast(plan->stmt, l->table, l->name);
    eq->u.binary.right = column_ast(plan->stmt, r->table, r->name);
    if (eq->u.binary.left == NULL || eq->u.binary.right == NULL) {
        return COMMON_ENOMEM;
    }
    return push_on_term(plan, it, eq);
}

/* Records a RIGHT/FULL join's merged column: coalesce(left, right). */
static int add_merged(struct engine_join_plan *plan, size_t k, size_t left,
                      size_t right)
{
    struct join_item *it = &plan->items[k];
    struct engine_scope_column merged = {
        .name = plan->scope->columns[left].name,
        .star_hidden = true,
        .untyped = true,
    };
    size_t *pairs = engine__plan_alloc(plan->stmt, (it->merged_count + 1) * 2 *
                                                       sizeof(*pairs));

    if (pairs == NULL) {
        return COMMON_ENOMEM;
    }
    if (it->merged_count > 0) {
        memcpy(pairs, it->merged, it->merged_count * 2 * sizeof(*pairs));
    }
    pairs[2 * it->merged_count] = left;
    pairs[2 * it->merged_count + 1] = right;
    it->merged = pairs;
    it->merged_count++;
    plan->scope->columns[left].qualified_only = true;
    plan->scope->columns[left].star_unqualified = true;
    return engine__join_add_column(plan, &merged, k, true);
}

/* Records name in item it's USING list (plan_nested.c reads it). */
static int using_name_add(struct engine_join_plan *plan, struct join_item *it,
                          const char *name)
{
    const char **names =
        engine__plan_alloc(plan->stmt, (it->using_count + 1) * sizeof(*names));

    if (names == NULL) {
        return COMMON_ENOMEM;
    }
    if (it->using_count > 0) {
        memcpy(names, it->using_names, it->using_count * sizeof(*names));
    }
    names[it->using_count++] = name;
    it->using_names = names;
    return 0;
}

/* One USING column of item k (k >= 1). */
static int use_column(struct engine_join_plan *plan, size_t k, const char *name)
{
    struct join_item *it = &plan->items[k];
    ptrdiff_t right = item_column(it, name);
    ptrdiff_t left = right >= 0 ? left_column(plan, k, name) : -1;
    int rc;

    if (left == -2) {
        return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                "ambiguous reference to %s in USING()", name);
    }
    if (left < 0 || right < 0) {
        return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                "cannot join using column %s - column not "
                                "present in both tables",
                                name);
    }
    rc = using_term(plan, it, (size_t)left, (size_t)right);
    plan->scope->columns[right].qualified_only = true;
    plan->scope->columns[right].star_hidden = true;
    /* A parenthesized join's inner columns of that name are the USING
     * column too: lookupName() passes them over unqualified. */
    for (size_t i = it->first; i < it->first + it->scope.column_count; i++) {
        struct engine_scope_column *c = &plan->scope->columns[i];

        if (c->nested_name != NULL && strcasecmp(c->nested_name, name) == 0) {
            c->qualified_only = true;
        }
    }
    rc = rc != 0 ? rc : using_name_add(plan, it, name);
    if (rc == 0 &&
        (it->ast->join == AST_JOIN_RIGHT || it->ast->join == AST_JOIN_FULL)) {
        rc = add_merged(plan, k, (size_t)left, (size_t)right);
    }
    return rc;
}

/* sqlite3ProcessJoin(): NATURAL's shared columns, or the USING list. */
static int process_join(struct engine_join_plan *plan, size_t k)
{
    struct join_item *it = &plan->items[k];
    const struct ast_from_item *ast = it->ast;
    int rc = 0;

    if (ast->natural && (ast->on != NULL || ast->using_columns != NULL)) {
        return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                "a NATURAL join may not have an ON or "
                                "USING clause");
    }
    for (size_t i = 0; rc == 0 && ast->natural && i < it->scope.column_count;
         i++) {
        const char *name = it->scope.columns[i].name;

        if (name != NULL && !it->scope.columns[i].hidden &&
            left_column(plan, k, name) != -1) {
            rc = use_column(plan, k, name);
        }
    }
    for (size_t i = 0; rc == 0 && i < ast->using_count; i++) {
        rc = use_column(plan, k, ast->using_columns[i]);
    }
    if (rc == 0 && ast->on != NULL) {
        rc = push_on_term(plan, it, ast->on);
    }
    return rc;
}

int engine__join_begin(struct engine_stmt *stmt,
                       const struct ast_select *select,
                       struct engine_scope *scope,
                       struct engine_join_plan **out)
{
    struct engine_join_plan *plan = engine__plan_alloc(stmt, sizeof(*plan));
    int rc = 0;

    if (plan == NULL) {
        return COMMON_ENOMEM;
    }
    if (select->from_count > JOIN_ITEMS_MAX) {
        return engine__db_error(stmt->db, ENGINE_ESQL,
                                "at most %d tables in a join", JOIN_ITEMS_MAX);
    }
    plan->stmt = stmt;
    plan->select = select;
    plan->scope = scope;
    plan->count = select->from_count;
    plan->items = engine__plan_alloc(stmt, plan->count * sizeof(*plan->items));
    if (plan->items == NULL) {
        return COMMON_ENOMEM;
    }
    memset(scope, 0, sizeof(*scope));
    scope->joined = true;
    scope->rowid_column = -1;
    for (size_t k = 0; rc == 0 && k < plan->count; k++) {
        plan->items[k].ast = &select->from[k];
        rc = add_item(plan, k);
        if (rc == 0 && k > 0) {
            rc = process_join(plan, k);
        }
    }
    if (rc == 0) {
        rc = engine__tvf_join_arguments(plan);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(stmt->db, rc, "out of memory");
    }
    *out = plan;
    return rc;
}
