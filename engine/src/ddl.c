/* SPDX-License-Identifier: MIT
 *
 * ddl.c: CREATE/DROP TABLE and INDEX, and BEGIN/COMMIT/ROLLBACK, with
 * SQLite's messages. Schema changes go through the undo log like row
 * changes, so ROLLBACK undoes a CREATE TABLE too.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine_int.h"

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

static int create_table(struct engine_stmt *stmt)
{
    const struct ast_create_table *def = &stmt->ast->u.create_table;
    struct engine_db *db = stmt->db;
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct engine_table *table;
    size_t position;
    int rc;

    if (engine__catalog_find(db, def->name) != NULL) {
        return def->if_not_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL,
                                      "table %s already exists", def->name);
    }
    if (find_index(db, def->name, &position) != NULL) {
        return engine__db_error(
            db, ENGINE_ESQL, "there is already an index named %s", def->name);
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

    if (table == NULL) {
        if (drop->if_exists) {
            return 0;
        }
        return engine__db_error(db, ENGINE_ESQL, "no such table: %s",
                                drop->name);
    }
    if (engine__undo_record(db, ENGINE_UNDO_DROP_TABLE, table, 0) != 0) {
        return engine__db_error(db, COMMON_ENOMEM, "out of memory");
    }
    engine__catalog_remove(db, table);
    return 0;
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

static int create_index(struct engine_stmt *stmt)
{
    const struct ast_create_index *def = &stmt->ast->u.create_index;
    struct engine_db *db = stmt->db;
    struct engine_table *table = engine__catalog_find(db, def->table);
    size_t columns[ENGINE_MAX_COLUMNS];
    size_t mark = db->undo_count;
    size_t position;
    char names[ENGINE__ERRMSG_SIZE];
    int rc;

    if (table == NULL) {
        return engine__db_error(db, ENGINE_ESQL, "no such table: main.%s",
                                def->table);
    }
    if (find_index(db, def->name, &position) != NULL) {
        return def->if_not_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL,
                                      "index %s already exists", def->name);
    }
    if (engine__catalog_find(db, def->name) != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "there is already a table named %s", def->name);
    }
    if (def->unique && def->where != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "partial UNIQUE indexes are not supported yet");
    }
    if (def->column_count > ENGINE_MAX_COLUMNS) {
        return engine__db_error(db, ENGINE_ESQL, "too many columns in index");
    }
    rc = index_columns(db, table, def, columns);
    if (rc != 0) {
        return rc;
    }
    rc = engine__table_add_index(table, def->name, stmt->sql, strlen(stmt->sql),
                                 def->unique, columns, def->column_count);
    if (rc == 0 || rc == ENGINE_ECONSTRAINT) {
        table->indexes[table->index_count - 1].sequence = ++db->object_sequence;
        db->schema_version++;
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
    return rc == 0 ? 0 : engine__db_error(db, rc, "out of memory");
}

static int drop_index(struct engine_stmt *stmt)
{
    const struct ast_drop *drop = &stmt->ast->u.drop;
    struct engine_db *db = stmt->db;
    size_t position;
    struct engine_table *table = find_index(db, drop->name, &position);
    struct engine_index_def removed;

    if (table == NULL) {
        return drop->if_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL, "no such index: %s",
                                      drop->name);
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
        db->in_transaction = true;
        return 0;
    case AST_STMT_COMMIT:
        if (!db->in_transaction) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "cannot commit - no transaction is "
                                    "active");
        }
        engine__undo_commit(db);
        db->in_transaction = false;
        return 0;
    default:
        if (!db->in_transaction) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "cannot rollback - no transaction is "
                                    "active");
        }
        engine__undo_rollback(db, 0);
        db->in_transaction = false;
        return 0;
    }
}

int engine__execute_ddl(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    size_t mark = db->undo_count;
    int rc;

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
    default:
        return transaction_control(stmt);
    }
    if (rc != 0) {
        engine__undo_rollback(db, mark);
    } else if (!db->in_transaction) {
        engine__undo_commit(db);
    }
    return rc;
}
