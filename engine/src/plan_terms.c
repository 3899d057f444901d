/* SPDX-License-Identifier: MIT
 *
 * plan_terms.c: the order a WHERE's terms run in.
 *
 * SQLite answers a term "rowid = constant" (or IS, the rowid named as
 * rowid, oid, _rowid_ or the INTEGER PRIMARY KEY) by looking the row up
 * (OP_SeekRowid) instead of scanning: the other terms then run only on
 * that row, in their written order (sqlite3WhereCodeOneLoopStart). The
 * rows that pass are the same either way, but not which terms run on which
 * rows, so not which errors a term raises. sinew, which scans, moves such
 * terms to the front of the WHERE's top-level AND: its AND runs a term
 * only on the rows the earlier ones let through.
 */
#include <strings.h>

#include "engine_int.h"
#include "plan.h"

#define TERMS_MAX 64

static bool is_column(const struct ast_expr *ast, const void *unused)
{
    (void)unused;
    return ast->kind == AST_COLUMN;
}

static bool names_rowid(const struct ast_expr *ast,
                        const struct engine_table *table)
{
    const char *name;

    if (ast->kind != AST_COLUMN) {
        return false;
    }
    name = ast->u.column.name;
    if (engine__table_column_index(table, name) < 0) {
        return engine__table_is_rowid_name(name);
    }
    return engine__table_column_index(table, name) == table->rowid_alias;
}

static bool is_rowid_lookup(const struct ast_expr *term,
                            const struct engine_table *table)
{
    const struct ast_expr *left, *right;

    if (term->kind != AST_BINARY ||
        (term->u.binary.op != AST_EQ && term->u.binary.op != AST_IS)) {
        return false;
    }
    left = term->u.binary.left;
    right = term->u.binary.right;
    return (names_rowid(left, table) &&
            !engine__ast_any(right, is_column, NULL)) ||
           (names_rowid(right, table) &&
            !engine__ast_any(left, is_column, NULL));
}

/* The terms of the top-level AND, in order; false when there are more
 * than TERMS_MAX. */
static bool split(const struct ast_expr *where, const struct ast_expr **terms,
                  size_t *count)
{
    if (where->kind == AST_BINARY && where->u.binary.op == AST_AND) {
        return split(where->u.binary.left, terms, count) &&
               split(where->u.binary.right, terms, count);
    }
    if (*count == TERMS_MAX) {
        return false;
    }
    terms[(*count)++] = where;
    return true;
}

struct ast_expr *engine__plan_ast_and(struct engine_stmt *stmt,
                                      const struct ast_expr *left,
                                      const struct ast_expr *right)
{
    struct ast_expr *both = engine__plan_alloc(stmt, sizeof(*both));

    if (both == NULL) {
        return NULL;
    }
    *both = (struct ast_expr){
        .kind = AST_BINARY, .position = left->position, .text = ""};
    both->u.binary.op = AST_AND;
    both->u.binary.left = (struct ast_expr *)left;
    both->u.binary.right = (struct ast_expr *)right;
    return both;
}

/* A right-nested AND over terms[0..count). */
static const struct ast_expr *join(struct engine_stmt *stmt,
                                   const struct ast_expr **terms, size_t count)
{
    const struct ast_expr *rest;

    if (count == 1) {
        return terms[0];
    }
    rest = join(stmt, terms + 1, count - 1);
    return rest != NULL ? engine__plan_ast_and(stmt, terms[0], rest) : NULL;
}

const struct ast_expr *
engine__plan_rowid_terms_first(struct engine_stmt *stmt,
                               const struct ast_expr *where,
                               const struct engine_table *table)
{
    const struct ast_expr *terms[TERMS_MAX];
    const struct ast_expr *ordered[TERMS_MAX];
    size_t count = 0, n = 0;

    if (where == NULL || table == NULL || !split(where, terms, &count)) {
        return where;
    }
    for (size_t i = 0; i < count; i++) {
        if (is_rowid_lookup(terms[i], table)) {
            ordered[n++] = terms[i];
        }
    }
    if (n == 0 || (n == count) || is_rowid_lookup(terms[0], table)) {
        return where;
    }
    for (size_t i = 0; i < count; i++) {
        if (!is_rowid_lookup(terms[i], table)) {
            ordered[n++] = terms[i];
        }
    }
    return join(stmt, ordered, count);
}
