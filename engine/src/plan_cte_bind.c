/* SPDX-License-Identifier: MIT
 *
 * plan_cte_bind.c: what the names of FROM items mean under WITH, decided
 * before anything else is planned.
 *
 * A FROM item's name is looked up in the WITH clauses around it, the
 * innermost first, before the catalog (SQLite's searchWith()): a CTE
 * shadows a table or view of the same name. A found item is rewritten in
 * place into a subquery over the CTE's body (ast.h, ast_from_item.cte), so
 * the rest of the planner treats it as any FROM subquery, each reference
 * planned on its own.
 *
 * A body is bound once, at its first reference, in the scope of its own
 * WITH (a CTE may name any CTE of its WITH, later ones too, and itself),
 * as resolveFromTermToCte() (select.c) expands it only when used: a CTE
 * no one reads is never checked. Recursion follows the same function: if
 * the body is a compound of UNION or UNION ALL, its rightmost terms that
 * name the CTE directly in their FROM, up to the first that does not and
 * under the top's operator, are its recursive terms; each may name it
 * once ("multiple references to recursive table"). Any other reference to
 * a CTE while its body is bound is "circular reference", or, inside a
 * recursive term's subqueries, "multiple recursive references".
 */
#include <strings.h>

#include "cte.h"
#include "engine_int.h"
#include "plan.h"

enum {
    CTE_UNBOUND = 0,
    CTE_BINDING,
    CTE_BOUND,
};

/* The WITH clauses around the part of the tree being bound. */
struct frame {
    const struct ast_with *with;
    const struct frame *outer;
};

struct binder {
    struct engine_stmt *stmt;
    int rc;
};

static int bind_select(struct binder *b, struct ast_select *select,
                       const struct frame *frame);

static struct ast_cte *lookup(const struct frame *frame, const char *name,
                              const struct frame **found)
{
    for (; frame != NULL; frame = frame->outer) {
        for (size_t i = 0; i < frame->with->count; i++) {
            if (strcasecmp(frame->with->ctes[i].name, name) == 0) {
                *found = frame;
                return &frame->with->ctes[i];
            }
        }
    }
    return NULL;
}

/* ---- expressions: their subqueries ---- */

struct expr_visit {
    struct binder *b;
    const struct frame *frame;
};

static bool visit_subquery(const struct ast_expr *ast, const void *arg)
{
    const struct expr_visit *v = arg;
    struct ast_select *select = NULL;

    if (ast->kind == AST_IN_SELECT) {
        select = ast->u.in_select.select;
    } else if (ast->kind == AST_EXISTS || ast->kind == AST_SUBQUERY) {
        select = ast->u.subquery.select;
    }
    if (select != NULL) {
        v->b->rc = bind_select(v->b, select, v->frame);
    }
    return v->b->rc != 0;
}

static int bind_expr(struct binder *b, const struct ast_expr *ast,
                     const struct frame *frame)
{
    struct expr_visit v = {.b = b, .frame = frame};

    engine__ast_any(ast, visit_subquery, &v);
    return b->rc;
}

static int bind_list(struct binder *b, struct ast_expr *const *items,
                     size_t count, const struct frame *frame)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < count; i++) {
        rc = bind_expr(b, items[i], frame);
    }
    return rc;
}

static int bind_columns(struct binder *b,
                        const struct ast_result_column *columns, size_t count,
                        const struct frame *frame)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && columns != NULL && i < count; i++) {
        rc = bind_expr(b, columns[i].expr, frame);
    }
    return rc;
}

/* ---- references ---- */

/* item reads cte: a subquery over its body, named by the CTE unless it
 * has an alias. */
static void make_reference(struct ast_from_item *item, struct ast_cte *cte,
                           bool recursive)
{
    item->cte = cte;
    item->recursive = recursive;
    item->select = recursive ? NULL : cte->select;
    if (item->alias == NULL) {
        item->alias = cte->name;
    }
    item->table = NULL;
}

/* Marks the recursive terms of cte's body (see the file comment): their
 * count, or -1 with the error set. */
static int mark_recursive(struct binder *b, struct ast_cte *cte)
{
    struct ast_select *top = cte->select;
    size_t count = 0;

    if (top->compound != AST_COMPOUND_UNION &&
        top->compound != AST_COMPOUND_UNION_ALL) {
        return 0;
    }
    for (struct ast_select *node = top; node->compound == top->compound;
         node = node->left) {
        struct ast_select *term = node->right;
        bool found = false;

        for (size_t i = 0; i < term->from_count; i++) {
            struct ast_from_item *item = &term->from[i];

            if (item->table == NULL || item->cte != NULL ||
                strcasecmp(item->table, cte->name) != 0) {
                continue;
            }
            if (found) {
                b->rc = engine__db_error(
                    b->stmt->db, ENGINE_ESQL,
                    "multiple references to recursive table: %s", cte->name);
                return -1;
            }
            found = true;
            make_reference(item, cte, true);
        }
        if (!found) {
            break;
        }
        count++;
    }
    return (int)count;
}

/* Binds the body of cte, found in frame (whose WITH holds it). */
static int bind_body(struct binder *b, struct ast_cte *cte,
                     const struct frame *frame)
{
    struct ast_select *top = cte->select;
    struct frame own = {.with = top->with, .outer = frame};
    const struct frame *inner = top->with != NULL ? &own : frame;
    struct ast_select *setup = top;
    int recursive;
    int rc = 0;

    cte->bind_state = CTE_BINDING;
    recursive = mark_recursive(b, cte);
    if (recursive < 0) {
        return b->rc;
    }
    cte->recursive_terms = (size_t)recursive;
    for (int i = 0; i < recursive; i++) {
        setup = setup->left;
    }
    cte->bind_error = "circular reference";
    if (recursive == 0) {
        rc = bind_select(b, top, frame);
    } else {
        /* The setup terms, then the recursive ones and the compound's
         * ORDER BY and LIMIT, as SQLite walks pPrior, then the top. */
        struct ast_select *node = top;

        rc = bind_select(b, setup, inner);
        cte->bind_error = "multiple recursive references";
        for (int i = 0; rc == 0 && i < recursive; i++, node = node->left) {
            rc = bind_select(b, node->right, inner);
        }
        for (size_t i = 0; rc == 0 && i < top->order_by_count; i++) {
            rc = bind_expr(b, top->order_by[i].expr, inner);
        }
        rc = rc != 0 ? rc : bind_expr(b, top->limit, inner);
        rc = rc != 0 ? rc : bind_expr(b, top->offset, inner);
    }
    cte->bind_state = CTE_BOUND;
    cte->bind_error = NULL;
    return rc;
}

static int bind_item(struct binder *b, struct ast_from_item *item,
                     const struct frame *frame)
{
    const struct frame *found = NULL;
    struct ast_cte *cte;
    int rc;

    if (item->cte != NULL) {
        return 0; /* bound already: its body in its own scope */
    }
    if (item->select != NULL) {
        return bind_select(b, item->select, frame);
    }
    cte = item->table != NULL ? lookup(frame, item->table, &found) : NULL;
    /* A table-valued function's arguments may hold subqueries; a CTE of
     * its name is no function (sqlite3LocateTableItem finds the CTE). */
    if (item->function && cte != NULL) {
        return engine__db_error(b->stmt->db, ENGINE_ESQL,
                                "'%s' is not a function", item->table);
    }
    if (item->function) {
        return bind_list(b, item->args.items, item->args.count, frame);
    }
    if (cte == NULL) {
        return 0;
    }
    if (item->hint.indexed_by != NULL) {
        /* sqlite3IndexedByLookup(): a CTE has no index */
        return engine__db_error(b->stmt->db, ENGINE_ESQL,
                                "no such index: \"%s\"", item->hint.indexed_by);
    }
    if (cte->bind_state == CTE_BINDING) {
        return engine__db_error(b->stmt->db, ENGINE_ESQL, "%s: %s",
                                cte->bind_error, cte->name);
    }
    if (cte->bind_state == CTE_UNBOUND) {
        rc = bind_body(b, cte, found);
        if (rc != 0) {
            return rc;
        }
    }
    make_reference(item, cte, false);
    return 0;
}

/* ---- SELECT ---- */

static int bind_simple(struct binder *b, struct ast_select *select,
                       const struct frame *frame)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < select->from_count; i++) {
        rc = bind_item(b, &select->from[i], frame);
        rc = rc != 0 ? rc : bind_expr(b, select->from[i].on, frame);
    }
    rc = rc != 0
             ? rc
             : bind_columns(b, select->columns, select->column_count, frame);
    rc = rc != 0 ? rc : bind_expr(b, select->where, frame);
    rc = rc != 0 ? rc
                 : bind_list(b, select->group_by.items, select->group_by.count,
                             frame);
    rc = rc != 0 ? rc : bind_expr(b, select->having, frame);
    return rc != 0
               ? rc
               : bind_list(b, select->values,
                           select->value_row_count * select->value_column_count,
                           frame);
}

static int bind_select(struct binder *b, struct ast_select *select,
                       const struct frame *frame)
{
    struct frame own = {.with = select->with, .outer = frame};
    int rc;

    if (select->with != NULL) {
        frame = &own;
    }
    if (select->compound != AST_COMPOUND_NONE) {
        rc = bind_select(b, select->left, frame);
        rc = rc != 0 ? rc : bind_select(b, select->right, frame);
    } else {
        rc = bind_simple(b, select, frame);
    }
    for (size_t i = 0; rc == 0 && i < select->order_by_count; i++) {
        rc = bind_expr(b, select->order_by[i].expr, frame);
    }
    rc = rc != 0 ? rc : bind_expr(b, select->limit, frame);
    return rc != 0 ? rc : bind_expr(b, select->offset, frame);
}

/* ---- statements ---- */

static int bind_assignments(struct binder *b, const struct ast_assignment *list,
                            size_t count, const struct frame *frame)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < count; i++) {
        rc = bind_expr(b, list[i].value, frame);
    }
    return rc;
}

static int bind_insert(struct binder *b, struct ast_insert *insert,
                       const struct frame *frame)
{
    int rc = insert->select != NULL ? bind_select(b, insert->select, frame) : 0;

    for (size_t i = 0; rc == 0 && i < insert->upsert_count; i++) {
        const struct ast_upsert *upsert = &insert->upserts[i];

        rc = bind_expr(b, upsert->target_where, frame);
        rc = rc != 0 ? rc
                     : bind_assignments(b, upsert->assignments,
                                        upsert->assignment_count, frame);
        rc = rc != 0 ? rc : bind_expr(b, upsert->where, frame);
    }
    return rc != 0 ? rc
                   : bind_columns(b, insert->returning.columns,
                                  insert->returning.column_count, frame);
}

static int bind_statement(struct binder *b, struct ast_stmt *ast)
{
    const struct ast_with *with = NULL;
    struct frame own = {0};
    const struct frame *frame = NULL;
    int rc;

    switch (ast->kind) {
    case AST_STMT_SELECT:
        return bind_select(b, ast->u.select, NULL);
    case AST_STMT_CREATE_TABLE:
        return ast->u.create_table.as_select != NULL
                   ? bind_select(b, ast->u.create_table.as_select, NULL)
                   : 0;
    case AST_STMT_INSERT:
        with = ast->u.insert.with;
        break;
    case AST_STMT_UPDATE:
        with = ast->u.update.with;
        break;
    case AST_STMT_DELETE:
        with = ast->u.delete_.with;
        break;
    default:
        return 0;
    }
    if (with != NULL) {
        own.with = with;
        frame = &own;
    }
    if (ast->kind == AST_STMT_INSERT) {
        return bind_insert(b, &ast->u.insert, frame);
    }
    if (ast->kind == AST_STMT_UPDATE) {
        const struct ast_update *up = &ast->u.update;

        rc = bind_assignments(b, up->assignments, up->assignment_count, frame);
        rc = rc != 0 ? rc : bind_expr(b, up->where, frame);
        return rc != 0 ? rc
                       : bind_columns(b, up->returning.columns,
                                      up->returning.column_count, frame);
    }
    rc = bind_expr(b, ast->u.delete_.where, frame);
    return rc != 0 ? rc
                   : bind_columns(b, ast->u.delete_.returning.columns,
                                  ast->u.delete_.returning.column_count, frame);
}

int engine__plan_cte_bind(struct engine_stmt *stmt)
{
    struct binder b = {.stmt = stmt};

    return stmt->ast != NULL ? bind_statement(&b, stmt->ast) : 0;
}

int engine__plan_cte_bind_select(struct engine_stmt *stmt,
                                 struct ast_select *select)
{
    struct binder b = {.stmt = stmt};

    return bind_select(&b, select, NULL);
}
