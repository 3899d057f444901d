/* SPDX-License-Identifier: MIT
 *
 * ddl.c: CREATE/DROP TABLE and INDEX, and BEGIN/COMMIT/ROLLBACK (the
 * savepoint statements are savepoint.c's, views view.c's), with SQLite's
 * messages. Schema
 * changes go through the undo log like row changes, so ROLLBACK undoes a
 * CREATE TABLE too.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine_int.h"
#include "plan.h"
#include "storage.h"

static bool is_reserved_name(const char *name)
{
    return strncasecmp(name, "sqlite_", 7) == 0;
}

static struct engine_table *find_index(const struct engine_db *db,
                                       const char *name, size_t *position)
{
    for (size_t t = 0; t < db->table_count; t++) {
        struct engine_table *table = db->tables[t];

        for (size_t i = 0; i < table->index_count; i++) {
            if (strcasecmp(table->indexes[i].name, name) == 0) {
                *position = i;
                return table;
            }
        }
    }
    return NULL;
}

/* SQLite's OP_Destroy (DROP TABLE, DROP INDEX) fails while another
 * statement of the connection is reading (db->nVdbeRead > 1). Here such a
 * statement may still hold the table's rows or the index's entries, which
 * the drop would free under it. Committed records being applied are not
 * refused (no statement of this handle runs then). SQLite lets a running
 * statement that reads no schema object (SELECT 1 UNION ALL SELECT 2) be;
 * this refuses every running statement, as ALTER TABLE does. */
static int refuse_while_reading(struct engine_db *db)
{
    if (!db->replaying && engine__db_running_statements(db) > 1) {
        return engine__db_error(db, ENGINE_EBUSY, "database table is locked");
    }
    return 0;
}

static int create_table(struct engine_stmt *stmt)
{
    const struct ast_create_table *def = &stmt->ast->u.create_table;
    struct engine_db *db = stmt->db;
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct engine_table *table;
    size_t position;
    int rc;

    /* A table is persisted and replicated: a handle-local one (SQLite's
     * temp schema) would need storage of its own. */
    if (def->temporary) {
        return engine__db_error(db, ENGINE_ESQL,
                                "TEMP tables are not supported yet");
    }
    /* A TEMP view of the name is in another schema (sqlite3StartTable). */
    if (engine__catalog_find(db, def->name) != NULL ||
        engine__view_find_main(db, def->name) != NULL) {
        return def->if_not_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL, "%s %s already exists",
                                      engine__view_find_main(db, def->name)
                                          ? "view"
                                          : "table",
                                      def->name);
    }
    if (find_index(db, def->name, &position) != NULL) {
        return engine__db_error(
            db, ENGINE_ESQL, "there is already an index named %s", def->name);
    }
    rc = engine__view_shadow_check(db, def->name, false);
    if (rc != 0) {
        return rc;
    }
    if (is_reserved_name(def->name)) {
        return engine__db_error(db, ENGINE_ESQL,
                                "object name reserved for internal use: %s",
                                def->name);
    }
    rc = engine__table_create(stmt->sql, strlen(stmt->sql), &table, errmsg,
                              sizeof(errmsg));
    if (rc != 0) {
        return engine__db_error(db, rc, "%s",
                                rc == COMMON_ENOMEM ? "out of memory" : errmsg);
    }
    rc = engine__catalog_add(db, table);
    if (rc == 0) {
        rc = engine__undo_record(db, ENGINE_UNDO_CREATE_TABLE, table, 0);
        if (rc != 0) {
            engine__catalog_remove(db, table);
        }
    }
    if (rc == 0 && engine__redo_schema(db, stmt->sql) != 0) {
        /* The undo record owns the table now: the caller's rollback of the
         * statement removes and frees it. */
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    if (rc != 0) {
        engine__table_destroy(table);
        return engine__db_error(db, rc, "out of memory");
    }
    return 0;
}

static int drop_table(struct engine_stmt *stmt)
{
    const struct ast_drop *drop = &stmt->ast->u.drop;
    struct engine_db *db = stmt->db;
    struct engine_table *table = engine__catalog_find(db, drop->name);

    if (table == NULL && engine__view_find(db, drop->name) != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "use DROP VIEW to delete view %s", drop->name);
    }
    if (table == NULL) {
        if (drop->if_exists) {
            return 0;
        }
        return engine__db_error(db, ENGINE_ESQL, "no such table: %s",
                                drop->name);
    }
    if (refuse_while_reading(db) != 0) {
        return db->errcode;
    }
    /* Its triggers go first (sqlite3DropTable drops them before it). */
    if (engine__trigger_drop_for_table(db, table->name) != 0) {
        return db->errcode;
    }
    if (engine__undo_record(db, ENGINE_UNDO_DROP_TABLE, table, 0) != 0) {
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    engine__catalog_remove(db, table);
    return engine__redo_schema(db, stmt->sql) == 0
               ? 0
               : engine__db_error(db, COMMON_ENOMEM, "out of memory");
}

/* The table columns of an index's column list (names only). */
static int index_columns(struct engine_db *db, struct engine_table *table,
                         const struct ast_create_index *def, size_t *columns)
{
    for (size_t i = 0; i < def->column_count; i++) {
        const struct ast_expr *expr = def->columns[i].expr;
        ptrdiff_t column;

        if (expr->kind == AST_COLLATE) {
            expr = expr->u.collate.operand;
        }
        if (expr->kind != AST_COLUMN) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "indexes on expressions are not "
                                    "supported yet");
        }
        column = engine__table_column_index(table, expr->u.column.name);
        if (column < 0) {
            return engine__db_error(db, ENGINE_ESQL, "no such column: %s",
                                    expr->u.column.name);
        }
        columns[i] = (size_t)column;
    }
    return 0;
}

/* "t.a, t.b": the columns of a key, as UNIQUE errors name them. */
void engine__key_columns_text(const struct engine_table *table,
                              const size_t *columns, size_t count, char *out,
                              size_t size)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s.%s", i ? ", " : "",
                         table->name, table->columns[columns[i]].name);

        used += n > 0 ? (size_t)n : 0;
    }
}

/* Adds the index def describes (sql: its text) to its table. record: a
 * statement's change, undone by ROLLBACK; otherwise the undo of a DROP
 * INDEX, which must leave the logs alone. */
static int add_index(struct engine_db *db, const struct ast_create_index *def,
                     const char *sql, uint64_t sequence, bool record)
{
    struct engine_table *table = engine__catalog_find(db, def->table);
    size_t columns[ENGINE_MAX_COLUMNS];
    size_t mark = db->undo_count;
    char names[ENGINE__ERRMSG_SIZE];
    int rc;

    if (def->column_count > ENGINE_MAX_COLUMNS) {
        return engine__db_error(db, ENGINE_ESQL, "too many columns in index");
    }
    rc = index_columns(db, table, def, columns);
    if (rc != 0) {
        return rc;
    }
    rc = engine__table_add_index(table, def->name, sql, strlen(sql),
                                 def->unique, columns, def->column_count);
    if (rc == 0 || rc == ENGINE_ECONSTRAINT) {
        table->indexes[table->index_count - 1].sequence = sequence;
        db->schema_version++;
        if (!record) {
            ASSERT(rc == 0);
            return 0;
        }
        if (engine__undo_record(db, ENGINE_UNDO_CREATE_INDEX, table, 0) != 0) {
            return engine__db_error(db, COMMON_ENOMEM, "out of memory");
        }
    }
    if (rc == ENGINE_ECONSTRAINT) {
        engine__undo_rollback(db, mark);
        engine__key_columns_text(table, columns, def->column_count, names,
                                 sizeof(names));
        return engine__db_error(db, rc, "UNIQUE constraint failed: %s", names);
    }
    rc = rc ? rc : engine__redo_schema(db, sql);
    return rc == 0 ? 0 : engine__db_error(db, rc, "out of memory");
}

static bool is_parameter(const struct ast_expr *ast, const void *arg)
{
    (void)arg;
    return ast->kind == AST_PARAMETER;
}

static int create_index(struct engine_stmt *stmt)
{
    const struct ast_create_index *def = &stmt->ast->u.create_index;
    struct engine_db *db = stmt->db;
    size_t position;

    if (engine__view_find(db, def->table) != NULL) {
        return engine__db_error(db, ENGINE_ESQL, "views may not be indexed");
    }
    if (engine__catalog_find(db, def->table) == NULL) {
        return engine__db_error(db, ENGINE_ESQL, "no such table: main.%s",
                                def->table);
    }
    if (find_index(db, def->name, &position) != NULL) {
        return def->if_not_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL,
                                      "index %s already exists", def->name);
    }
    if (engine__catalog_find(db, def->name) != NULL ||
        engine__view_find_main(db, def->name) != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "there is already a table named %s", def->name);
    }
    if (def->where != NULL && engine__ast_any(def->where, is_parameter, NULL)) {
        return engine__db_error(
            db, ENGINE_ESQL,
            "parameters prohibited in partial index WHERE clauses");
    }
    if (def->unique && def->where != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "partial UNIQUE indexes are not supported yet");
    }
    return add_index(db, def, stmt->sql, ++db->object_sequence, true);
}

int engine__index_create_sql(struct engine_db *db, const char *sql,
                             uint64_t sequence)
{
    struct engine_arena arena;
    struct ast_stmt *ast = NULL;
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t tail, error_offset;
    int rc;

    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, strlen(sql), &ast, &tail, errmsg,
                       sizeof(errmsg), &error_offset);
    if (rc == 0) {
        ASSERT(ast != NULL && ast->kind == AST_STMT_CREATE_INDEX);
        rc = add_index(db, &ast->u.create_index, sql, sequence, false);
    }
    engine__arena_close(&arena);
    return rc;
}

static int drop_index(struct engine_stmt *stmt)
{
    const struct ast_drop *drop = &stmt->ast->u.drop;
    struct engine_db *db = stmt->db;
    size_t position;
    struct engine_table *table = find_index(db, drop->name, &position);
    struct engine_index_def removed;
    struct engine_undo *undo;
    const char *text;

    if (table == NULL) {
        return drop->if_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL, "no such index: %s",
                                      drop->name);
    }
    if (refuse_while_reading(db) != 0) {
        return db->errcode;
    }
    /* ROLLBACK builds the index again from its CREATE INDEX text. */
    text = engine__arena_memdup(&db->undo_arena, table->indexes[position].sql,
                                strlen(table->indexes[position].sql) + 1);
    if (text == NULL ||
        engine__undo_record(db, ENGINE_UNDO_DROP_INDEX, table, 0) != 0) {
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    undo = &db->undo[db->undo_count - 1];
    undo->rowid = (int64_t)table->indexes[position].sequence;
    undo->text = text;
    if (engine__redo_schema(db, stmt->sql) != 0) {
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    /* Move it last, where the undo of CREATE INDEX expects its index. */
    removed = table->indexes[position];
    table->indexes[position] = table->indexes[table->index_count - 1];
    table->indexes[table->index_count - 1] = removed;
    engine__table_drop_last_index(table);
    db->schema_version++;
    return 0;
}

static int transaction_control(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;

    switch (stmt->ast->kind) {
    case AST_STMT_BEGIN:
        if (db->in_transaction) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "cannot start a transaction within a "
                                    "transaction");
        }
        engine__savepoint_clear(db);
        if (stmt->ast->u.begin_immediate) {
            /* SQLite: IMMEDIATE takes the write lock now, and EXCLUSIVE in
             * WAL mode is the same. */
            int rc = engine__storage_write_begin(db, true);

            if (rc != 0) {
                return rc;
            }
        }
        db->in_transaction = true;
        return 0;
    case AST_STMT_COMMIT:
        if (!db->in_transaction) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "cannot commit - no transaction is "
                                    "active");
        }
        engine__savepoint_clear(db);
        return engine__transaction_commit(db);
    case AST_STMT_SAVEPOINT:
    case AST_STMT_RELEASE:
    case AST_STMT_ROLLBACK_TO:
        return engine__execute_savepoint(stmt);
    default:
        if (!db->in_transaction) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "cannot rollback - no transaction is "
                                    "active");
        }
        engine__savepoint_clear(db);
        engine__undo_rollback(db, 0);
        db->in_transaction = false;
        engine__storage_write_end(db);
        return 0;
    }
}

int engine__execute_ddl(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    size_t mark = db->undo_count;
    int rc = engine__system_check_ddl(db, stmt->ast);

    if (rc != 0) {
        return rc;
    }
    switch (stmt->ast->kind) {
    case AST_STMT_CREATE_TABLE:
        rc = create_table(stmt);
        break;
    case AST_STMT_DROP_TABLE:
        rc = drop_table(stmt);
        break;
    case AST_STMT_CREATE_INDEX:
        rc = create_index(stmt);
        break;
    case AST_STMT_DROP_INDEX:
        rc = drop_index(stmt);
        break;
    case AST_STMT_ALTER_TABLE:
        rc = engine__alter_table(stmt);
        break;
    case AST_STMT_CREATE_VIEW:
        rc = engine__view_create(stmt);
        break;
    case AST_STMT_DROP_VIEW:
        rc = engine__view_drop(stmt);
        break;
    case AST_STMT_CREATE_TRIGGER:
        rc = engine__trigger_create(stmt);
        break;
    case AST_STMT_DROP_TRIGGER:
        rc = engine__trigger_drop(stmt);
        break;
    case AST_STMT_REINDEX:
        rc = engine__reindex(stmt);
        break;
    default:
        return transaction_control(stmt);
    }
    if (rc != 0) {
        engine__undo_rollback(db, mark);
    } else if (!db->in_transaction) {
        rc = engine__transaction_commit(db);
    }
    return rc;
}
