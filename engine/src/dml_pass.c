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
#include "dml.h"

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

bool engine__dml_one_pass(const struct engine_stmt *stmt,
                          const struct engine_dml *dml)
{
    if (dml->kind == AST_STMT_INSERT || dml->where == NULL ||
        has_returning(stmt->ast)) {
        return false;
    }
    return dml->kind == AST_STMT_DELETE ||
           (!engine__dml_writes(dml, SIZE_MAX) && !may_replace(dml));
}
