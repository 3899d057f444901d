/* SPDX-License-Identifier: MIT
 *
 * step.c: running a prepared statement. A query pulls batches from its
 * root operator and hands out their live rows one at a time; a DML
 * statement runs whole at the first step (its RETURNING rows are kept and
 * handed out by the following steps), and so does a PRAGMA (its result
 * rows kept the same way); DDL and transaction control run at the first
 * step.
 *
 * Atomicity: outside BEGIN ... COMMIT every statement is its own
 * transaction; inside one, a statement that fails undoes just its own
 * changes (ABORT), as SQLite's statement journal does.
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"

void engine__stmt_clear_results(struct engine_stmt *stmt)
{
    for (size_t i = 0; i < stmt->subquery_count; i++) {
        struct engine_subquery *subquery = stmt->subqueries[i];

        subquery->evaluated = false;
        engine__subquery_forget(subquery);
    }
    common_free(stmt->returning);
    stmt->returning = NULL;
    stmt->returning_count = stmt->returning_capacity = 0;
    stmt->returning_next = 0;
    stmt->current = NULL;
    stmt->batch = NULL;
    stmt->batch_index = 0;
    engine__arena_reset(&stmt->result_arena);
    engine__arena_reset(&stmt->column_arena);
}

static int query_next_row(struct engine_stmt *stmt)
{
    for (;;) {
        int rc;

        if (stmt->batch != NULL && stmt->batch_index < stmt->batch->selected) {
            stmt->row = engine__batch_row(stmt->batch, stmt->batch_index++);
            return ENGINE_ROW;
        }
        rc = stmt->root->ops->next(stmt->root, &stmt->exec, &stmt->batch);
        stmt->batch_index = 0;
        if (rc != 0) {
            return rc;
        }
        if (stmt->batch == NULL) {
            return ENGINE_DONE;
        }
    }
}

static int returning_next_row(struct engine_stmt *stmt)
{
    size_t width = (size_t)stmt->column_count;

    if (stmt->returning_next < stmt->returning_count) {
        stmt->current = &stmt->returning[stmt->returning_next++ * width];
        return ENGINE_ROW;
    }
    stmt->current = NULL;
    return ENGINE_DONE;
}

static bool is_dml(const struct engine_stmt *stmt)
{
    enum ast_stmt_kind kind = stmt->ast->kind;

    return kind == AST_STMT_INSERT || kind == AST_STMT_UPDATE ||
           kind == AST_STMT_DELETE;
}

static bool writes(const struct engine_stmt *stmt)
{
    enum ast_stmt_kind kind = stmt->ast->kind;

    /* PRAGMA user_version = N writes; other assignments change only the
     * handle (synchronous) or nothing. */
    return is_dml(stmt) || kind == AST_STMT_CREATE_TABLE ||
           kind == AST_STMT_DROP_TABLE || kind == AST_STMT_CREATE_INDEX ||
           kind == AST_STMT_DROP_INDEX || kind == AST_STMT_ALTER_TABLE ||
           kind == AST_STMT_CREATE_VIEW || kind == AST_STMT_DROP_VIEW ||
           kind == AST_STMT_REINDEX || kind == AST_STMT_CREATE_TRIGGER ||
           kind == AST_STMT_DROP_TRIGGER ||
           (kind == AST_STMT_PRAGMA && stmt->ast->u.pragma.value != NULL &&
            strcasecmp(stmt->ast->u.pragma.name, "user_version") == 0);
}

/* A file database shared with other handles (storage_share.c): a
 * statement that starts while db holds no snapshot reads the latest
 * commits; a writing one takes the write lock first, as SQLite's
 * OP_Transaction does, so its reads and writes see one state. */
static int start_on_storage(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    bool held = engine__storage_holds_snapshot(db, 1);
    int rc = held ? 0 : engine__storage_refresh(db);

    if (db->in_transaction) {
        db->txn_read = true;
    }
    if (rc == 0 && writes(stmt)) {
        rc = engine__storage_write_begin(db, !held);
    }
    return rc;
}

static int start(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    int rc;

    if (db->storage != NULL && !db->replaying) {
        rc = start_on_storage(stmt);
        if (rc != 0) {
            return rc;
        }
    }
    if (stmt->schema_version != db->schema_version) {
        rc = engine__stmt_plan(stmt);
        if (rc != 0) {
            return rc;
        }
    }
    engine__stmt_clear_results(stmt);
    stmt->exec.subqueries = stmt->subqueries;
    stmt->exec.subquery_count = stmt->subquery_count;
    rc = engine__prologue_run(stmt);
    if (rc != 0) {
        return rc;
    }
    if (stmt->root != NULL) {
        return stmt->root->ops->open(stmt->root, &stmt->exec);
    }
    if (is_dml(stmt)) {
        return engine__execute_dml(stmt);
    }
    if (stmt->ast->kind == AST_STMT_PRAGMA ||
        stmt->ast->kind == AST_STMT_VACUUM) {
        return engine__execute_pragma(stmt);
    }
    return engine__execute_ddl(stmt);
}

/* A rollback since the statement started destroyed a table it may be
 * reading (one created, or altered, in the transaction): it stops, as
 * SQLite's ROLLBACK of a schema change trips every cursor
 * (sqlite3RollbackAll, sqlite3BtreeTripAllCursors) with
 * SQLITE_ABORT_ROLLBACK. */
static int abort_after_rollback(struct engine_stmt *stmt)
{
    engine__stmt_clear_results(stmt);
    stmt->state = ENGINE__STMT_DONE;
    stmt->last_rc = ENGINE_EABORT;
    engine__graveyard_settle(stmt->db);
    return engine__db_error(stmt->db, ENGINE_EABORT, "abort due to ROLLBACK");
}

int engine_step(struct engine_stmt *stmt)
{
    int rc;

    ASSERT(stmt != NULL);
    if (stmt->state == ENGINE__STMT_DONE) {
        return engine__db_error(stmt->db, ENGINE_EMISUSE,
                                "statement must be reset before it runs "
                                "again");
    }
    if (stmt->state == ENGINE__STMT_RUNNING &&
        stmt->tables_rolled_back != stmt->db->tables_rolled_back) {
        return abort_after_rollback(stmt);
    }
    engine__arena_reset(&stmt->column_arena);
    stmt->exec.now_jd_ms = 0;
    if (stmt->state == ENGINE__STMT_READY) {
        engine__db_clear_error(stmt->db);
        stmt->state = ENGINE__STMT_RUNNING;
        stmt->jit_use = ENGINE_JIT_UNUSED;
        stmt->tables_rolled_back = stmt->db->tables_rolled_back;
        engine__graveyard_settle(stmt->db);
        rc = start(stmt);
        if (!stmt->db->in_transaction && !stmt->db->replaying) {
            /* The statement was its own transaction, or ended one. */
            stmt->db->txn_read = false;
            engine__storage_write_end(stmt->db);
        }
        if (rc != 0) {
            stmt->state = ENGINE__STMT_DONE;
            stmt->last_rc = rc;
            engine__graveyard_settle(stmt->db);
            return rc;
        }
    }
    rc = stmt->root != NULL ? query_next_row(stmt) : returning_next_row(stmt);
    if (rc != ENGINE_ROW) {
        stmt->state = ENGINE__STMT_DONE;
        stmt->last_rc = rc == ENGINE_DONE ? 0 : rc;
        engine__graveyard_settle(stmt->db);
    }
    return rc;
}

int engine_reset(struct engine_stmt *stmt)
{
    int rc;

    if (stmt == NULL) {
        return 0;
    }
    rc = stmt->last_rc;
    stmt->state = ENGINE__STMT_READY;
    stmt->last_rc = 0;
    engine__stmt_clear_results(stmt);
    engine__graveyard_settle(stmt->db);
    return rc;
}
