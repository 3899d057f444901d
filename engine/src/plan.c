/* SPDX-License-Identifier: MIT
 *
 * plan.c: planning by statement kind, and running uncorrelated subqueries
 * (once per execution, their result cached: SQLite's "subquery as a
 * constant" for scalar subqueries, and its ephemeral table for IN).
 */
#include <string.h>

#include "cte.h"
#include "engine_int.h"
#include "plan.h"
#include "rowset.h"
#include "semi.h"

int engine__plan(struct engine_stmt *stmt)
{
    struct ast_stmt *ast = stmt->ast;
    size_t count = 0;
    int rc = 0;

    stmt->root = NULL;
    stmt->column_count = 0;
    rc = engine__plan_cte_bind(stmt); /* FROM names that are CTEs */
    if (rc != 0) {
        return rc;
    }
    switch (ast->kind) {
    case AST_STMT_SELECT:
        rc = engine__plan_check_tables(stmt, ast->u.select);
        rc = rc != 0 ? rc
                     : engine__plan_select(stmt, ast->u.select, &stmt->root,
                                           &stmt->column_names, NULL, &count);
        stmt->column_count = (int)count;
        break;
    case AST_STMT_INSERT:
    case AST_STMT_UPDATE:
    case AST_STMT_DELETE:
        rc = engine__plan_dml(stmt);
        break;
    case AST_STMT_PRAGMA:
    case AST_STMT_VACUUM:
        rc = engine__plan_pragma(stmt);
        break;
    case AST_STMT_REINDEX:
        rc = engine__reindex_plan(stmt);
        break;
    default:
        break;
    }
    return rc;
}

static int keep_value(struct engine_subquery *subquery, struct engine_value *v)
{
    if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
        void *bytes =
            engine__arena_memdup(&subquery->arena, v->u.s.bytes, v->u.s.size);

        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        v->u.s.bytes = bytes;
    }
    return 0;
}

static int add_to_set(struct engine_subquery *subquery, struct engine_value v)
{
    struct engine_value *set;

    if (v.type == ENGINE_NULL) {
        subquery->set_has_null = true;
        return 0;
    }
    set = common_realloc_array(subquery->set, subquery->set_count + 1,
                               sizeof(*set));
    if (set == NULL || keep_value(subquery, &v) != 0) {
        subquery->set = set != NULL ? set : subquery->set;
        return COMMON_ENOMEM;
    }
    subquery->set = set;
    set[subquery->set_count++] = v;
    return 0;
}

/* Takes the rows of one batch: the first value of the first row (scalar),
 * or every first-column value (IN). Returns 1 when no more are needed. */
static int absorb(struct engine_subquery *subquery,
                  const struct engine_batch *batch)
{
    for (uint32_t i = 0; i < batch->selected; i++) {
        struct engine_value v =
            engine__vector_get(&batch->columns[0], engine__batch_row(batch, i));

        if (!subquery->is_set) {
            subquery->exists = true;
            subquery->value = v;
            return keep_value(subquery, &subquery->value) != 0 ? COMMON_ENOMEM
                                                               : 1;
        }
        subquery->exists = true;
        if (add_to_set(subquery, v) != 0) {
            return COMMON_ENOMEM;
        }
    }
    return 0;
}

void engine__subquery_forget(struct engine_subquery *subquery)
{
    common_free(subquery->set);
    subquery->set = NULL;
    subquery->set_count = 0;
    engine__arena_reset(&subquery->arena);
    if (subquery->lookup != NULL) {
        engine__rowset_close(subquery->lookup);
        common_free(subquery->lookup);
        subquery->lookup = NULL;
    }
    if (subquery->semi != NULL) {
        engine__semi_forget(subquery->semi);
    }
}

int engine__subquery_run(struct engine_subquery *subquery,
                         struct engine_exec *exec)
{
    int rc = subquery->root->ops->open(subquery->root, exec);
    /* A live IN reads its table again, but whether to look for a NULL at
     * all is decided once (sqlite3SetHasNullFlag runs under OP_Once): a
     * NULL counts only if there was one at the first run too. */
    bool keep_null = subquery->evaluated && subquery->live_table != NULL;
    bool had_null = subquery->set_has_null;

    engine__subquery_forget(subquery);
    subquery->value = engine__value_null();
    subquery->exists = false;
    subquery->set_has_null = false;
    while (rc == 0) {
        struct engine_batch *batch;

        rc = subquery->root->ops->next(subquery->root, exec, &batch);
        if (rc != 0 || batch == NULL) {
            break;
        }
        if (subquery->root->column_count == 0) {
            subquery->exists = batch->selected > 0;
            break;
        }
        rc = absorb(subquery, batch);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__error(exec, rc, "out of memory");
    }
    if (rc < 0) {
        return rc;
    }
    subquery->evaluated = true;
    if (keep_null) {
        subquery->set_has_null = had_null && subquery->set_has_null;
    }
    if (subquery->live_table != NULL) {
        subquery->live_changes = subquery->live_table->change_count;
    }
    return 0;
}
