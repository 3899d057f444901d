/* SPDX-License-Identifier: MIT
 *
 * dml_pass.c: whether SQLite runs an UPDATE or DELETE in one pass.
 *
 * SQLite either tests every row against the WHERE first and then changes
 * the matches (two passes), or changes each row as soon as its WHERE
 * passes (WHERE_ONEPASS_MULTIROW). The difference shows when a later
 * row's WHERE reads what an earlier change wrote (a live IN, in_live.c),
 * and in which error comes first. DELETE runs in one pass unless it has
 * RETURNING (delete.c: RETURNING is a trigger); UPDATE too, unless the
 * rowid changes or REPLACE may resolve a conflict (update.c: chngKey,
 * bReplace). sinew has neither triggers nor foreign keys, the other
 * reasons for two passes.
 */
#include <strings.h>

#include "access.h"
#include "dml.h"
#include "plan.h"

static bool has_returning(const struct ast_stmt *ast)
{
    return ast->kind == AST_STMT_UPDATE
               ? ast->u.update.returning.columns != NULL
               : ast->u.delete_.returning.columns != NULL;
}

/* bReplace: OR REPLACE, or a key it writes whose own clause is REPLACE. */
static bool may_replace(const struct engine_dml *dml)
{
    const struct engine_table *table = dml->table;

    if (dml->conflict == AST_CONFLICT_REPLACE) {
        return true;
    }
    for (size_t k = 0;
         dml->conflict == AST_CONFLICT_DEFAULT && k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];

        for (size_t i = 0; i < key->column_count; i++) {
            if (key->conflict == AST_CONFLICT_REPLACE &&
                engine__dml_writes(dml, key->columns[i])) {
                return true;
            }
        }
    }
    return false;
}

/* An UPDATE that writes a column of the index its WHERE looks rows up
 * through: SQLite falls back to two passes (update.c, "ONEPASS_OFF if
 * where.c has selected a ONEPASS_MULTI strategy that uses an index for
 * which one or more columns are being updated"). */
static bool writes_lookup_index(const struct engine_dml *dml)
{
    for (size_t c = 0; dml->access != NULL && c < dml->table->column_count;
         c++) {
        if (engine__access_index_has(dml->access, dml->table, c) &&
            engine__dml_writes(dml, c)) {
            return true;
        }
    }
    return false;
}

bool engine__dml_one_pass(const struct engine_stmt *stmt,
                          const struct engine_dml *dml)
{
    if (dml->kind == AST_STMT_INSERT || dml->where == NULL ||
        has_returning(stmt->ast)) {
        return false;
    }
    return dml->kind == AST_STMT_DELETE ||
           (!engine__dml_writes(dml, SIZE_MAX) && !may_replace(dml) &&
            !writes_lookup_index(dml));
}

static bool select_reads(const struct ast_select *select, const char *table);

static bool expr_reads(const struct ast_expr *ast, const void *table)
{
    switch (ast->kind) {
    case AST_IN_SELECT:
        return select_reads(ast->u.in_select.select, table);
    case AST_EXISTS:
    case AST_SUBQUERY:
        return select_reads(ast->u.subquery.select, table);
    default:
        return false;
    }
}

static bool exprs_read(struct ast_expr **items, size_t count, const char *table)
{
    for (size_t i = 0; i < count; i++) {
        if (engine__ast_any(items[i], expr_reads, table)) {
            return true;
        }
    }
    return false;
}

/* readsTable (insert.c), over the parse tree: a FROM item or a subquery
 * anywhere in select names table. */
static bool select_reads(const struct ast_select *select, const char *table)
{
    if (select->compound != AST_COMPOUND_NONE &&
        (select_reads(select->left, table) ||
         select_reads(select->right, table))) {
        return true;
    }
    for (size_t i = 0; i < select->from_count; i++) {
        const struct ast_from_item *item = &select->from[i];

        if ((item->table != NULL && strcasecmp(item->table, table) == 0) ||
            (item->select != NULL && select_reads(item->select, table))) {
            return true;
        }
    }
    for (size_t i = 0; i < select->column_count && select->columns; i++) {
        if (engine__ast_any(select->columns[i].expr, expr_reads, table)) {
            return true;
        }
    }
    for (size_t i = 0; i < select->order_by_count; i++) {
        if (engine__ast_any(select->order_by[i].expr, expr_reads, table)) {
            return true;
        }
    }
    return engine__ast_any(select->where, expr_reads, table) ||
           engine__ast_any(select->having, expr_reads, table) ||
           engine__ast_any(select->limit, expr_reads, table) ||
           engine__ast_any(select->offset, expr_reads, table) ||
           exprs_read(select->group_by.items, select->group_by.count, table) ||
           exprs_read(select->values,
                      select->value_row_count * select->value_column_count,
                      table);
}

bool engine__dml_expr_reads(const struct ast_expr *ast, const char *table)
{
    return engine__ast_any(ast, expr_reads, table);
}

bool engine__dml_source_streams(const struct engine_stmt *stmt,
                                const struct engine_dml *dml)
{
    const struct ast_insert *insert = &stmt->ast->u.insert;

    return dml->kind == AST_STMT_INSERT && insert->select != NULL &&
           insert->returning.columns == NULL &&
           !select_reads(insert->select, insert->table);
}
