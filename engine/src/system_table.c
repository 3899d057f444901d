/* SPDX-License-Identifier: MIT
 *
 * system_table.c: hidden system tables (engine.h, "Change capture"). A
 * table or index whose name starts with "sinew_" belongs to a module that
 * keeps metadata in the database (the replication layer's change log and
 * clocks, the engine's commit stamp): user SQL cannot create, drop or index
 * one, sqlite_schema does not list it (plan_select.c), and the commit hook
 * does not see its changes (capture.c); otherwise it is an ordinary table,
 * read and written by SQL, made durable by the WAL and checkpoints.
 *
 * The rule mirrors SQLite's for "sqlite_" names (sqlite3CheckObjectName,
 * and sqlite3DropTable's "table %s may not be dropped"). An index on a
 * system table must have a system name too, so that a schema change's text
 * alone says whether it is a system one.
 *
 * The commit stamp lives here as well: one row of sinew_engine_stamp,
 * written in the committing transaction, so it is durable exactly when the
 * commit is and survives checkpoints, which keep no WAL record headers.
 */
#include <string.h>
#include <strings.h>

#include "engine_int.h"

#define SYSTEM_PREFIX_SIZE (sizeof(ENGINE_SYSTEM_PREFIX) - 1)
#define STAMP_TABLE "sinew_engine_stamp"
#define STAMP_ROWID 1

bool engine__system_is_name(const char *name)
{
    return strncasecmp(name, ENGINE_SYSTEM_PREFIX, SYSTEM_PREFIX_SIZE) == 0;
}

int engine_exec_system(struct engine_db *db, const char *sql,
                       engine_exec_cb callback, void *ctx)
{
    struct engine_capture *capture = &db->change_capture;
    bool was_system = capture->system;
    int rc;

    ASSERT(db != NULL);
    capture->system = true;
    rc = engine_exec(db, sql, callback, ctx);
    capture->system = was_system;
    return rc;
}

static int reserved(struct engine_db *db, const char *name)
{
    return engine__db_error(db, ENGINE_ESQL,
                            "object name reserved for internal use: %s", name);
}

static int check_create_index(struct engine_db *db,
                              const struct ast_create_index *def)
{
    bool system_table = engine__system_is_name(def->table);
    bool system_index = engine__system_is_name(def->name);

    if (!db->change_capture.system) {
        if (system_table) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "table %s may not be indexed", def->table);
        }
        return system_index ? reserved(db, def->name) : 0;
    }
    if (system_table != system_index) {
        return engine__db_error(db, ENGINE_ESQL,
                                "an index on a system table, and only one, "
                                "has a system name: %s",
                                def->name);
    }
    return 0;
}

/* As sqlite3AlterRenameTable's isAlterableTable() and
 * sqlite3CheckObjectName(): a system table is not altered by user SQL, nor
 * does a table take a system name. */
static int check_alter(struct engine_db *db,
                       const struct ast_alter_table *alter)
{
    if (db->change_capture.system) {
        return 0;
    }
    if (engine__system_is_name(alter->table) &&
        engine__catalog_find(db, alter->table) != NULL) {
        return engine__db_error(db, ENGINE_ESQL, "table %s may not be altered",
                                alter->table);
    }
    return 0;
}

int engine__system_check_ddl(struct engine_db *db, const struct ast_stmt *ast)
{
    const char *name;

    switch (ast->kind) {
    case AST_STMT_CREATE_TABLE:
        name = ast->u.create_table.name;
        return engine__system_is_name(name) && !db->change_capture.system
                   ? reserved(db, name)
                   : 0;
    case AST_STMT_DROP_TABLE:
        name = ast->u.drop.name;
        if (!engine__system_is_name(name) || db->change_capture.system ||
            engine__catalog_find(db, name) == NULL) {
            return 0;
        }
        return engine__db_error(db, ENGINE_ESQL, "table %s may not be dropped",
                                name);
    case AST_STMT_CREATE_INDEX:
        return check_create_index(db, &ast->u.create_index);
    case AST_STMT_DROP_INDEX:
        name = ast->u.drop.name;
        if (!engine__system_is_name(name) || db->change_capture.system) {
            return 0;
        }
        return engine__db_error(db, ENGINE_ESQL, "index %s may not be dropped",
                                name);
    case AST_STMT_ALTER_TABLE:
        return check_alter(db, &ast->u.alter_table);
    default:
        return 0;
    }
}

int engine__system_is_ddl(const char *sql, size_t size, bool *is_system)
{
    struct engine_arena arena;
    struct ast_stmt *ast = NULL;
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t tail, error_offset;
    int rc;

    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, size, &ast, &tail, errmsg, sizeof(errmsg),
                       &error_offset);
    *is_system = false;
    if (rc == 0 && ast != NULL) {
        switch (ast->kind) {
        case AST_STMT_CREATE_TABLE:
            *is_system = engine__system_is_name(ast->u.create_table.name);
            break;
        case AST_STMT_CREATE_INDEX:
            *is_system = engine__system_is_name(ast->u.create_index.name);
            break;
        case AST_STMT_DROP_TABLE:
        case AST_STMT_DROP_INDEX:
            *is_system = engine__system_is_name(ast->u.drop.name);
            break;
        case AST_STMT_ALTER_TABLE:
            *is_system = engine__system_is_name(ast->u.alter_table.table);
            break;
        default:
            break;
        }
    }
    engine__arena_close(&arena);
    return rc == COMMON_ENOMEM ? rc : 0;
}

/* ---- the commit stamp ---- */

static int stamp_table(struct engine_db *db, struct engine_table **out)
{
    int rc = 0;

    *out = engine__catalog_find(db, STAMP_TABLE);
    if (*out == NULL) {
        rc = engine_exec_system(
            db, "CREATE TABLE " STAMP_TABLE "(stamp INTEGER)", NULL, NULL);
        *out = engine__catalog_find(db, STAMP_TABLE);
    }
    return rc;
}

/* The stamp row's first write: undo record, row, redo entry, as
 * dml_row.c's insert_checked orders them. */
static int stamp_insert(struct engine_db *db, struct engine_table *table,
                        const struct engine_value *value)
{
    size_t slot;
    int rc = engine__table_insert(table, STAMP_ROWID, value, &slot);

    if (rc == 0) {
        rc = engine__undo_record(db, ENGINE_UNDO_INSERT, table, slot);
        if (rc != 0) {
            engine__table_delete(table, slot);
            return rc;
        }
        /* On failure the commit's rollback undoes the insert. */
        rc = engine__redo_insert(db, table, slot);
    }
    return rc;
}

static int stamp_update(struct engine_db *db, struct engine_table *table,
                        size_t slot, const struct engine_value *value)
{
    const struct engine_undo *undo;
    int rc = engine__undo_record(db, ENGINE_UNDO_UPDATE, table, slot);

    rc = rc ? rc : engine__table_update(table, slot, STAMP_ROWID, value);
    if (rc == 0) {
        undo = &db->undo[db->undo_count - 1];
        rc = engine__redo_update(db, table, slot, undo->rowid, undo->values);
    }
    return rc;
}

int engine__system_stamp_write(struct engine_db *db, uint64_t stamp)
{
    struct engine_value value = engine__value_int((int64_t)stamp);
    struct engine_table *table;
    ptrdiff_t slot;
    int rc = stamp_table(db, &table);

    if (rc != 0) {
        return rc;
    }
    ASSERT(table != NULL);
    slot = engine__table_find_rowid(table, STAMP_ROWID);
    rc = slot < 0 ? stamp_insert(db, table, &value)
                  : stamp_update(db, table, (size_t)slot, &value);
    return rc ? engine__db_error(db, rc, "out of memory") : 0;
}

uint64_t engine_last_stamp(struct engine_db *db)
{
    const struct engine_table *table = engine__catalog_find(db, STAMP_TABLE);
    ptrdiff_t slot;
    struct engine_value value;

    ASSERT(db != NULL);
    if (table == NULL ||
        (slot = engine__table_find_rowid(table, STAMP_ROWID)) < 0) {
        return 0;
    }
    value = engine__table_get(table, (size_t)slot, 0);
    return value.type == ENGINE_INTEGER ? (uint64_t)value.u.i : 0;
}
