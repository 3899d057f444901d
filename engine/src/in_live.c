/* SPDX-License-Identifier: MIT
 *
 * in_live.c: which "x IN (SELECT ...)" must see the statement's own writes.
 *
 * SQLite answers "x IN (SELECT c FROM t)" from a b-tree that already
 * exists when it can (sqlite3FindInIndex, expr.c): t itself when c is the
 * rowid, or an index whose first column is c (a UNIQUE key or a CREATE
 * INDEX, which table_index.c keeps), if the subquery is a plain
 * column read (isCandidateForInOpt: no DISTINCT, aggregate, WHERE, LIMIT,
 * one table) and the index's collation and affinity suit the comparison.
 * Otherwise it copies the values once into an ephemeral table. When t is
 * the table the statement writes, the difference shows: an UPDATE's SET,
 * a RETURNING clause or a one-pass DELETE's WHERE evaluated for a later
 * row sees the rows the statement already changed. sinew keeps its copy
 * and makes it again whenever such a table has changed since.
 */
#include <strings.h>

#include "engine_int.h"
#include "plan.h"

static const char *written_table(const struct ast_stmt *ast)
{
    switch (ast->kind) {
    case AST_STMT_INSERT:
        return ast->u.insert.table;
    case AST_STMT_UPDATE:
        return ast->u.update.table;
    case AST_STMT_DELETE:
        return ast->u.delete_.table;
    default:
        return NULL;
    }
}

/* isCandidateForInOpt: the one column of one table, nothing more. */
static const struct ast_expr *plain_column(const struct ast_select *select,
                                           const char *table)
{
    const struct ast_result_column *column = select->columns;

    if (select->distinct || column == NULL || select->column_count != 1 ||
        select->where != NULL || select->group_by.count > 0 ||
        select->having != NULL || select->limit != NULL ||
        select->from_count != 1 || select->from[0].table == NULL ||
        strcasecmp(select->from[0].table, table) != 0 ||
        column->kind != AST_RESULT_EXPR || column->expr->kind != AST_COLUMN) {
        return NULL;
    }
    return column->expr;
}

/* Whether the comparison affinity suits an index on column: not numeric
 * over a TEXT or BLOB column. */
static bool affinity_serves(const struct engine_table *table, size_t column,
                            const struct engine_expr *in)
{
    const struct engine_column_def *def = &table->columns[column];
    const struct engine_expr *lhs = in->args[0];
    bool numeric_lhs =
        lhs->has_affinity && (lhs->affinity == ENGINE_AFFINITY_NUMERIC ||
                              lhs->affinity == ENGINE_AFFINITY_INTEGER ||
                              lhs->affinity == ENGINE_AFFINITY_REAL);

    return !numeric_lhs || (def->affinity != ENGINE_AFFINITY_TEXT &&
                            def->affinity != ENGINE_AFFINITY_BLOB);
}

/* Whether a CREATE INDEX (not partial) on column first serves the
 * comparison: its first column's collation is the comparison's. */
static bool index_serves(const struct engine_table *table, size_t column,
                         const struct engine_expr *in)
{
    for (size_t i = 0; i < table->index_count; i++) {
        const struct engine_table_index *index = table->indexes[i].lookup;

        if (index != NULL && index->columns[0] == column &&
            index->collations[0] == in->u.subquery->collation &&
            affinity_serves(table, column, in)) {
            return true;
        }
    }
    return false;
}

/* The UNIQUE key whose first column serves the comparison, or -1: the
 * comparison's collation is the column's (a key compares with it), and
 * the affinity suits. A one-column key is preferred, as it can be
 * probed. */
static ptrdiff_t key_serves(const struct engine_table *table, size_t column,
                            const struct engine_expr *in)
{
    ptrdiff_t found = -1;

    if (in->u.subquery->collation != table->columns[column].collation ||
        !affinity_serves(table, column, in)) {
        return -1;
    }
    for (size_t k = 0; k < table->key_count; k++) {
        if (table->keys[k].columns[0] == column &&
            (found < 0 || table->keys[k].column_count == 1)) {
            found = (ptrdiff_t)k;
        }
    }
    return found;
}

void engine__in_mark_live(struct engine_compile *ctx,
                          const struct ast_select *select,
                          struct engine_expr *in)
{
    const char *name = written_table(ctx->stmt->ast);
    const struct ast_expr *column =
        name != NULL ? plain_column(select, name) : NULL;
    const struct engine_table *table;
    ptrdiff_t index, key = -2;

    if (column == NULL) {
        return;
    }
    table = engine__catalog_find(ctx->stmt->db, name);
    if (table == NULL) {
        return;
    }
    index = engine__table_column_index(table, column->u.column.name);
    if (index >= 0 && index != table->rowid_alias) {
        key = key_serves(table, (size_t)index, in);
        if (key < 0 && !index_serves(table, (size_t)index, in)) {
            return;
        }
        if (key < 0 || table->keys[key].column_count > 1) {
            key = -1; /* no prefix or multimap probe: run again on change */
        }
    } else if (index < 0 &&
               !engine__table_is_rowid_name(column->u.column.name)) {
        return;
    }
    in->u.subquery->live_table = table;
    in->u.subquery->live_key = key;
    in->u.subquery->live_column = index >= 0 ? (size_t)index : 0;
}
