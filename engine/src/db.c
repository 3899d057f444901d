/* SPDX-License-Identifier: MIT
 *
 * db.c: the database handle: open, close, the error of the last call, and
 * the counters SQLite keeps (changes, last insert rowid).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine_int.h"
#include "jit.h"
#include "storage.h"

int engine_open(const char *path, struct engine_db **out)
{
    struct engine_db *db;
    int rc = 0;

    ASSERT(out != NULL);
    *out = NULL;
    db = common_calloc(1, sizeof(*db));
    if (db == NULL) {
        return COMMON_ENOMEM;
    }
    engine__arena_init(&db->undo_arena);
    common_buf_init(&db->redo, UINT32_MAX);
    db->random_state = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)db;
    db->synchronous = ENGINE__SYNC_FULL;
    snprintf(db->errmsg, sizeof(db->errmsg), "not an error");
    if (path != NULL && strcmp(path, ":memory:") != 0) {
        rc = engine__storage_open(db, path);
    }
    if (rc != 0) {
        engine_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

void engine_close(struct engine_db *db)
{
    if (db == NULL) {
        return;
    }
    while (db->open_statements != NULL) {
        engine_finalize(db->open_statements);
    }
    engine__undo_rollback(db, 0);
    engine__db_catalog_clear(db);
    engine__view_clear(db, true);
    engine__trigger_clear(db, true);
    common_free(db->tables);
    common_free(db->views);
    common_free(db->triggers);
    common_free(db->undo);
    engine__savepoint_close(db);
    common_buf_close(&db->redo);
    engine__graveyard_close(&db->graveyard);
    engine__jit_arena_close(db->jit_arena);
    engine__storage_close(db);
    engine__arena_close(&db->undo_arena);
    common_free(db);
}

void engine__db_catalog_clear(struct engine_db *db)
{
    ASSERT(db->undo_count == 0);
    for (size_t i = 0; i < db->table_count; i++) {
        engine__table_destroy(db->tables[i]);
    }
    db->table_count = 0;
    engine__view_clear(db, false);
    engine__trigger_clear(db, false);
    db->user_version = 0;
    db->schema_version++;
}

size_t engine__db_running_statements(const struct engine_db *db)
{
    size_t running = 0;

    for (const struct engine_stmt *s = db->open_statements; s != NULL;
         s = s->next_open) {
        running += s->state == ENGINE__STMT_RUNNING;
    }
    return running;
}

void engine_busy_timeout(struct engine_db *db, int timeout_ms)
{
    ASSERT(db != NULL);
    db->busy_timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

static int set_error(struct engine_db *db, int rc, const char *format,
                     va_list args) __attribute__((format(printf, 3, 0)));

static int set_error(struct engine_db *db, int rc, const char *format,
                     va_list args)
{
    vsnprintf(db->errmsg, sizeof(db->errmsg), format, args);
    db->errcode = rc;
    return rc;
}

int engine__db_error(struct engine_db *db, int rc, const char *format, ...)
{
    va_list args;

    va_start(args, format);
    set_error(db, rc, format, args);
    va_end(args);
    return rc;
}

int engine__error(struct engine_exec *exec, int rc, const char *format, ...)
{
    va_list args;

    va_start(args, format);
    set_error(exec->db, rc, format, args);
    va_end(args);
    return rc;
}

void engine__db_clear_error(struct engine_db *db)
{
    db->errcode = 0;
    snprintf(db->errmsg, sizeof(db->errmsg), "not an error");
}

const char *engine_errmsg(const struct engine_db *db)
{
    return db != NULL ? db->errmsg : "out of memory";
}

int engine_errcode(const struct engine_db *db)
{
    return db != NULL ? db->errcode : COMMON_ENOMEM;
}

int64_t engine_changes(const struct engine_db *db)
{
    return db->changes;
}

int64_t engine_total_changes(const struct engine_db *db)
{
    return db->total_changes;
}

int64_t engine_last_insert_rowid(const struct engine_db *db)
{
    return db->last_insert_rowid;
}

bool engine_in_transaction(const struct engine_db *db)
{
    return db->in_transaction;
}
