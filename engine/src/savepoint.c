/* SPDX-License-Identifier: MIT
 *
 * savepoint.c: SAVEPOINT, RELEASE and ROLLBACK TO, as SQLite's
 * lang_savepoint.html describes them and its OP_Savepoint runs them.
 *
 * A savepoint is a name and a mark in the undo log (the log's length when
 * it was taken). The stack lives in the database handle, oldest first;
 * names compare case-insensitively and the most recent of a name wins.
 *
 * - SAVEPOINT outside a transaction begins one ("BEGIN DEFERRED"), and
 *   releasing that first savepoint commits it.
 * - RELEASE nm forgets nm and every savepoint taken after it.
 * - ROLLBACK TO nm undoes the log back to nm's mark and forgets the
 *   savepoints after nm; nm itself stays, and so does the transaction.
 * - COMMIT and ROLLBACK empty the stack (ddl.c).
 *
 * Marks stay valid: a failing statement undoes only back to where it
 * started, which is past every savepoint taken before it.
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "storage.h"

/* Frees the names of savepoints [from, count) and drops them. */
static void savepoint_truncate(struct engine_db *db, size_t from)
{
    while (db->savepoint_count > from) {
        common_free(db->savepoints[--db->savepoint_count].name);
    }
}

void engine__savepoint_clear(struct engine_db *db)
{
    savepoint_truncate(db, 0);
    db->savepoint_began = false;
}

void engine__savepoint_close(struct engine_db *db)
{
    engine__savepoint_clear(db);
    common_free(db->savepoints);
    db->savepoints = NULL;
    db->savepoint_capacity = 0;
}

/* The position of the most recent savepoint named name, or -1. */
static ptrdiff_t savepoint_find(const struct engine_db *db, const char *name)
{
    for (size_t i = db->savepoint_count; i > 0; i--) {
        if (strcasecmp(db->savepoints[i - 1].name, name) == 0) {
            return (ptrdiff_t)(i - 1);
        }
    }
    return -1;
}

static int savepoint_push(struct engine_db *db, const char *name)
{
    size_t size = strlen(name) + 1;
    char *copy;

    if (db->savepoint_count == db->savepoint_capacity) {
        size_t capacity =
            db->savepoint_capacity ? db->savepoint_capacity * 2 : 8;
        struct engine_savepoint *grown =
            common_realloc_array(db->savepoints, capacity, sizeof(*grown));

        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        db->savepoints = grown;
        db->savepoint_capacity = capacity;
    }
    copy = common_malloc(size);
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(copy, name, size);
    db->savepoints[db->savepoint_count].name = copy;
    db->savepoints[db->savepoint_count].undo_mark = db->undo_count;
    db->savepoint_count++;
    return 0;
}

static int savepoint_begin(struct engine_db *db, const char *name)
{
    bool begins = !db->in_transaction;

    if (begins) {
        engine__savepoint_clear(db);
    }
    if (savepoint_push(db, name) != 0) {
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    if (begins) {
        db->in_transaction = true;
        db->savepoint_began = true;
    }
    return 0;
}

static int savepoint_release(struct engine_db *db, size_t position)
{
    if (position == 0 && db->savepoint_began) {
        /* The transaction's own savepoint: releasing it is COMMIT. */
        engine__savepoint_clear(db);
        return engine__transaction_commit(db);
    }
    savepoint_truncate(db, position);
    return 0;
}

static void savepoint_rollback(struct engine_db *db, size_t position)
{
    savepoint_truncate(db, position + 1);
    engine__undo_rollback(db, db->savepoints[position].undo_mark);
}

int engine__execute_savepoint(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    const char *name = stmt->ast->u.savepoint.name;
    ptrdiff_t position;

    if (stmt->ast->kind == AST_STMT_SAVEPOINT) {
        return savepoint_begin(db, name);
    }
    /* Outside a transaction the stack is stale (see struct engine_db). */
    position = db->in_transaction ? savepoint_find(db, name) : -1;
    if (position < 0) {
        return engine__db_error(db, ENGINE_ESQL, "no such savepoint: %s", name);
    }
    if (stmt->ast->kind == AST_STMT_RELEASE) {
        return savepoint_release(db, (size_t)position);
    }
    ASSERT(stmt->ast->kind == AST_STMT_ROLLBACK_TO);
    savepoint_rollback(db, (size_t)position);
    return 0;
}
