/* SPDX-License-Identifier: MIT
 *
 * ddl_alter.c: ALTER TABLE (RENAME TO, RENAME COLUMN, ADD COLUMN, DROP
 * COLUMN) with SQLite 3.40's rules and messages (alter.c:
 * sqlite3AlterRenameTable, sqlite3AlterRenameColumn,
 * sqlite3AlterFinishAddColumn, sqlite3AlterDropColumn).
 *
 * Every form works the same way: the table's CREATE TABLE text (and its
 * indexes' texts) are edited as SQLite edits them (ddl_alter_text.c), a
 * new table is built from the new text, the rows are copied into it (an
 * added column reading its DEFAULT, a dropped one left out) under the same
 * rowids, the new table takes the old one's place in the catalog (same
 * creation number, so sqlite_schema keeps its order), and the indexes are
 * built again from their texts. The old table stays alive in the undo log
 * until COMMIT, so ROLLBACK (or a failing statement) puts it back whole.
 *
 * Durability: the WAL records the ALTER statement's text, like any DDL
 * (redo.c), and replaying it does the same edit; a checkpoint writes the
 * table as it now is. The main file is rewritten whole at each checkpoint
 * (dbfile_write.c), so an added column needs no "absent in old segments"
 * marker: no segment outlives the checkpoint that follows the ALTER.
 *
 * Replication: the statement's text is what the commit hook sees. ADD
 * COLUMN may run where a commit hook is set (a replicated database: merges
 * match columns by name, so a node that lacks the column keeps its cells
 * until it has it); RENAME and DROP COLUMN are refused there, since other
 * nodes keep writing under the old names (docs/replication.md).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ddl_alter.h"
#include "engine_int.h"

/* How the new table's columns come from the old one's. */
struct rebuild {
    const char *sql;         /* the new CREATE TABLE text */
    const ptrdiff_t *source; /* per new column: old column, or -1: fill */
    struct engine_value fill;
    char **index_sql;  /* per old index: its new text, or NULL: unchanged */
    const char *after; /* "add column": sql's parse error is renameTestSchema's
                          "error in table t after add column: ..." */
};

static int oom(struct engine_db *db)
{
    return engine__db_error(db, COMMON_ENOMEM, "out of memory");
}

/* A schema text that would not parse again, or no memory to edit it. */
static int edit_error(struct engine_db *db, int rc)
{
    return rc == COMMON_ENOMEM
               ? oom(db)
               : engine__db_error(db, rc, "%s", engine_strerror(rc));
}

static bool is_reserved_name(const struct engine_db *db, const char *name)
{
    return strncasecmp(name, "sqlite_", 7) == 0 ||
           (engine__system_is_name(name) && !db->change_capture.system);
}

static bool name_taken(const struct engine_db *db, const char *name)
{
    if (engine__catalog_find(db, name) != NULL ||
        engine__view_find(db, name) != NULL) {
        return true;
    }
    for (size_t t = 0; t < db->table_count; t++) {
        const struct engine_table *table = db->tables[t];

        for (size_t i = 0; i < table->index_count; i++) {
            if (strcasecmp(table->indexes[i].name, name) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* ---- the rebuild ---- */

static int copy_rows(struct engine_table *from, struct engine_table *to,
                     const struct rebuild *r)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    uint32_t slots[256];
    size_t cursor = 0, slot;
    uint32_t n;
    int rc = 0;

    while (rc == 0 &&
           (n = engine__table_scan(from, &cursor, slots, 256, false)) > 0) {
        if (n == UINT32_MAX) {
            return COMMON_ENOMEM;
        }
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            for (size_t c = 0; c < to->column_count; c++) {
                values[c] = r->source[c] < 0
                                ? r->fill
                                : engine__table_get(from, slots[i],
                                                    (size_t)r->source[c]);
            }
            rc =
                engine__table_insert(to, from->rowids[slots[i]], values, &slot);
        }
    }
    return rc;
}

/* The indexes of old, built on the table now in its place. */
static int rebuild_indexes(struct engine_db *db, const struct engine_table *old,
                           const struct rebuild *r)
{
    for (size_t i = 0; i < old->index_count; i++) {
        const struct engine_index_def *index = &old->indexes[i];
        const char *sql = r->index_sql != NULL && r->index_sql[i] != NULL
                              ? r->index_sql[i]
                              : index->sql;
        int rc = engine__index_create_sql(db, sql, index->sequence);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Replaces old with the table r describes, its rows and indexes. */
static int rebuild(struct engine_db *db, struct engine_table *old,
                   const struct rebuild *r)
{
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct engine_table *table;
    struct engine_undo *undo;
    int rc = engine__table_create(r->sql, strlen(r->sql), &table, errmsg,
                                  sizeof(errmsg));

    if (rc != 0 && rc != COMMON_ENOMEM && r->after != NULL) {
        return engine__db_error(db, rc, "error in table %s after %s: %s",
                                old->name, r->after, errmsg);
    }
    if (rc != 0) {
        return rc == COMMON_ENOMEM ? oom(db)
                                   : engine__db_error(db, rc, "%s", errmsg);
    }
    table->sequence = old->sequence;
    rc = copy_rows(old, table, r);
    if (rc == 0) {
        rc = engine__undo_record(db, ENGINE_UNDO_ALTER_TABLE, table, 0);
    }
    if (rc != 0) {
        engine__table_destroy(table);
        return oom(db);
    }
    undo = &db->undo[db->undo_count - 1];
    undo->replaced = old;
    engine__catalog_replace(db, old, table);
    /* From here the undo record owns the new table: the caller's rollback
     * of the statement puts old back. */
    return rebuild_indexes(db, old, r);
}

/* ---- RENAME TO ---- */

static void free_texts(char **texts, size_t count)
{
    for (size_t i = 0; texts != NULL && i < count; i++) {
        common_free(texts[i]);
    }
    common_free(texts);
}

/* Every index text of table edited as engine__alter_rename_text() says. */
static int rename_indexes(const struct engine_table *table, const char *column,
                          const char *new_name, bool quoted, char ***out)
{
    char **texts = NULL;
    int rc = 0;

    if (table->index_count > 0) {
        texts = common_calloc(table->index_count, sizeof(*texts));
        if (texts == NULL) {
            return COMMON_ENOMEM;
        }
    }
    for (size_t i = 0; rc == 0 && i < table->index_count; i++) {
        rc = engine__alter_rename_text(table->indexes[i].sql, table->name,
                                       column, new_name, quoted, &texts[i]);
    }
    if (rc != 0) {
        free_texts(texts, table->index_count);
        return rc;
    }
    *out = texts;
    return 0;
}

static int identity_rebuild(struct engine_db *db, struct engine_table *table,
                            char *sql, char **index_sql)
{
    ptrdiff_t source[ENGINE_MAX_COLUMNS];
    struct rebuild r = {.sql = sql, .source = source, .index_sql = index_sql};
    int rc;

    for (size_t c = 0; c < table->column_count; c++) {
        source[c] = (ptrdiff_t)c;
    }
    rc = rebuild(db, table, &r);
    free_texts(index_sql, table->index_count);
    common_free(sql);
    return rc;
}

static int rename_table(struct engine_db *db, struct engine_table *table,
                        const struct ast_alter_table *alter)
{
    char *sql = NULL, **index_sql = NULL;
    int rc;

    if (name_taken(db, alter->new_name)) {
        return engine__db_error(db, ENGINE_ESQL,
                                "there is already another table or index "
                                "with this name: %s",
                                alter->new_name);
    }
    if (is_reserved_name(db, alter->new_name)) {
        return engine__db_error(db, ENGINE_ESQL,
                                "object name reserved for internal use: %s",
                                alter->new_name);
    }
    rc = engine__alter_rename_text(table->sql, table->name, NULL,
                                   alter->new_name, true, &sql);
    if (rc == 0) {
        rc = rename_indexes(table, NULL, alter->new_name, true, &index_sql);
    }
    if (rc != 0) {
        common_free(sql);
        return edit_error(db, rc);
    }
    return identity_rebuild(db, table, sql, index_sql);
}

/* ---- RENAME COLUMN ---- */

static int no_such_column(struct engine_db *db,
                          const struct ast_alter_table *alter)
{
    return engine__db_error(db, ENGINE_ESQL, "no such column: \"%s\"",
                            alter->column_text);
}

static int rename_column(struct engine_db *db, struct engine_table *table,
                         const struct ast_alter_table *alter)
{
    ptrdiff_t column = engine__table_column_index(table, alter->column);
    ptrdiff_t clash = engine__table_column_index(table, alter->new_name);
    char *sql = NULL, **index_sql = NULL;
    int rc;

    if (column < 0) {
        return no_such_column(db, alter);
    }
    if (clash >= 0 && clash != column) {
        return engine__db_error(db, ENGINE_ESQL,
                                "error in table %s after rename: duplicate "
                                "column name: %s",
                                table->name, alter->new_name);
    }
    rc = engine__alter_rename_text(table->sql, table->name, alter->column,
                                   alter->new_name, alter->new_name_quoted,
                                   &sql);
    if (rc == 0) {
        rc = rename_indexes(table, alter->column, alter->new_name,
                            alter->new_name_quoted, &index_sql);
    }
    if (rc != 0) {
        common_free(sql);
        return edit_error(db, rc);
    }
    return identity_rebuild(db, table, sql, index_sql);
}

/* ---- ADD COLUMN ---- */

/* sqlite3ValueFromExpr's reading of a DEFAULT: a literal, TRUE or FALSE,
 * signs and CASTs of those. Anything else is not a constant. */
static bool constant_value(const struct ast_expr *ast,
                           struct engine_arena *arena, struct engine_value *out)
{
    struct engine_value v;

    switch (ast->kind) {
    case AST_LITERAL:
    case AST_BOOLEAN:
        *out = ast->u.literal;
        return true;
    case AST_UNARY:
        if (ast->u.unary.op == AST_PLUS) {
            return constant_value(ast->u.unary.operand, arena, out);
        }
        if (ast->u.unary.op != AST_NEGATE ||
            !constant_value(ast->u.unary.operand, arena, &v)) {
            return false;
        }
        engine__value_negate(&v, out);
        return true;
    case AST_CAST: {
        const char *type = ast->u.cast.type_name;

        return constant_value(ast->u.cast.operand, arena, &v) &&
               engine__value_cast(
                   &v, engine__affinity_of_declared_type(type, strlen(type)),
                   arena, out) == 0;
    }
    default:
        return false;
    }
}

static bool is_null_literal(const struct ast_expr *ast)
{
    return ast != NULL && ast->kind == AST_LITERAL &&
           ast->u.literal.type == ENGINE_NULL;
}

/* SQLite's checks of the new column, and the value old rows read. */
static int added_value(struct engine_db *db, const struct ast_column_def *def,
                       struct engine_arena *arena, struct engine_value *out)
{
    const struct ast_expr *dflt = def->default_value;
    const char *type = def->type_name;

    if (def->primary_key) {
        return engine__db_error(db, ENGINE_ESQL,
                                "Cannot add a PRIMARY KEY column");
    }
    if (def->unique) {
        return engine__db_error(db, ENGINE_ESQL, "Cannot add a UNIQUE column");
    }
    if (is_null_literal(dflt)) {
        dflt = NULL;
    }
    if (def->not_null && dflt == NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "Cannot add a NOT NULL column with default "
                                "value NULL");
    }
    *out = engine__value_null();
    if (dflt == NULL) {
        return 0;
    }
    if (!constant_value(dflt, arena, out)) {
        return engine__db_error(db, ENGINE_ESQL,
                                "Cannot add a column with non-constant "
                                "default");
    }
    /* Old rows read the DEFAULT with the column's affinity
     * (sqlite3ColumnDefault). */
    if (engine__value_apply_affinity(
            out,
            engine__affinity_of_declared_type(type, type ? strlen(type) : 0),
            arena) != 0) {
        return oom(db);
    }
    return 0;
}

/* SQLite checks the table's CHECKs over the rows once the column is there
 * (pragma_quick_check in sqlite3AlterFinishAddColumn): only the new
 * column's can fail, the others held already. */
static int check_added(struct engine_db *db, const struct engine_table *table,
                       const struct ast_column_def *def)
{
    char sql[ENGINE__ERRMSG_SIZE];
    struct engine_stmt *stmt = NULL;
    bool replaying = db->replaying;
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < def->checks.count; i++) {
        const char *text = def->checks.items[i]->text;

        if (table->live_count == 0 || text == NULL ||
            strchr(table->name, '"') != NULL) {
            break;
        }
        if ((size_t)snprintf(sql, sizeof(sql),
                             "SELECT 1 FROM \"%s\" WHERE NOT (%s)", table->name,
                             text) >= sizeof(sql)) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "CHECK constraint is too long to verify "
                                    "in ALTER TABLE ADD COLUMN");
        }
        /* A read inside this statement's transaction and lock: as a
         * replayed record runs, it takes no lock and ends nothing. */
        db->replaying = true;
        rc = engine_prepare(db, sql, -1, &stmt, NULL);
        if (rc == 0) {
            rc = engine_step(stmt);
            rc = rc == ENGINE_ROW    ? ENGINE_ECONSTRAINT
                 : rc == ENGINE_DONE ? 0
                                     : rc;
        }
        engine_finalize(stmt);
        db->replaying = replaying;
        stmt = NULL;
    }
    if (rc == ENGINE_ECONSTRAINT) {
        return engine__db_error(db, rc, "CHECK constraint failed");
    }
    return rc;
}

static int add_column(struct engine_stmt *stmt, struct engine_table *table)
{
    const struct ast_alter_table *alter = &stmt->ast->u.alter_table;
    const struct ast_column_def *def = &alter->column_def;
    struct engine_db *db = stmt->db;
    ptrdiff_t source[ENGINE_MAX_COLUMNS];
    struct rebuild r = {.source = source};
    struct engine_arena arena;
    char *sql = NULL;
    int rc;

    if (engine__table_column_index(table, def->name) >= 0) {
        return engine__db_error(db, ENGINE_ESQL, "duplicate column name: %s",
                                def->name);
    }
    if (table->column_count >= ENGINE_MAX_COLUMNS) {
        return engine__db_error(db, ENGINE_ESQL, "too many columns on %s",
                                table->name);
    }
    engine__arena_init(&arena);
    rc = added_value(db, def, &arena, &r.fill);
    if (rc == 0) {
        rc =
            engine__alter_add_text(table->sql, stmt->sql + def->position,
                                   alter->column_def_end - def->position, &sql);
        rc = rc == 0 ? 0 : oom(db);
    }
    if (rc == 0) {
        for (size_t c = 0; c < table->column_count; c++) {
            source[c] = (ptrdiff_t)c;
        }
        source[table->column_count] = -1;
        r.sql = sql;
        r.after = "add column";
        rc = rebuild(db, table, &r);
    }
    if (rc == 0) {
        rc = check_added(db, engine__catalog_find(db, table->name), def);
    }
    common_free(sql);
    engine__arena_close(&arena);
    return rc;
}

/* ---- DROP COLUMN ---- */

/* sqlite3AlterDropColumn's refusals, then its "after drop column" test of
 * the schema: the table's other constraints, then its indexes, in
 * sqlite_schema's order. */
static int drop_allowed(struct engine_db *db, const struct engine_table *table,
                        const struct ast_alter_table *alter, size_t column)
{
    const char *name = table->columns[column].name;
    uint64_t last = 0;

    for (size_t k = 0; k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];

        for (size_t i = 0; key->index_name == NULL && i < key->column_count;
             i++) {
            if (key->columns[i] == column &&
                (key->primary || key->column_count == 1)) {
                return engine__db_error(
                    db, ENGINE_ESQL, "cannot drop %s column: \"%s\"",
                    key->primary ? "PRIMARY KEY" : "UNIQUE", alter->column);
            }
        }
    }
    if ((ptrdiff_t)column == table->rowid_alias) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot drop PRIMARY KEY column: \"%s\"",
                                alter->column);
    }
    if (table->column_count <= 1) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot drop column \"%s\": no other "
                                "columns exist",
                                alter->column);
    }
    bool refers;
    int rc = engine__alter_refers(table->sql, table->name, name, &refers);

    if (rc != 0) {
        return edit_error(db, rc);
    }
    if (refers) {
        return engine__db_error(db, ENGINE_ESQL,
                                "error in table %s after drop column: no "
                                "such column: %s",
                                table->name, name);
    }
    for (;;) {
        const struct engine_index_def *next = NULL;

        for (size_t i = 0; i < table->index_count; i++) {
            const struct engine_index_def *index = &table->indexes[i];

            if (index->sequence > last &&
                (next == NULL || index->sequence < next->sequence)) {
                next = index;
            }
        }
        if (next == NULL) {
            return 0;
        }
        rc = engine__alter_refers(next->sql, table->name, name, &refers);
        if (rc != 0) {
            return edit_error(db, rc);
        }
        if (refers) {
            return engine__db_error(db, ENGINE_ESQL,
                                    "error in index %s after drop column: "
                                    "no such column: %s",
                                    next->name, name);
        }
        last = next->sequence;
    }
}

static int drop_column(struct engine_db *db, struct engine_table *table,
                       const struct ast_alter_table *alter)
{
    ptrdiff_t column = engine__table_column_index(table, alter->column);
    ptrdiff_t source[ENGINE_MAX_COLUMNS];
    struct rebuild r = {.source = source};
    char *sql = NULL;
    int rc;

    if (column < 0) {
        return no_such_column(db, alter);
    }
    rc = drop_allowed(db, table, alter, (size_t)column);
    if (rc != 0) {
        return rc;
    }
    rc = engine__alter_drop_text(table->sql, (size_t)column, &sql);
    if (rc != 0) {
        return edit_error(db, rc);
    }
    for (size_t c = 0, n = 0; c < table->column_count; c++) {
        if (c != (size_t)column) {
            source[n++] = (ptrdiff_t)c;
        }
    }
    r.sql = sql;
    rc = rebuild(db, table, &r);
    common_free(sql);
    return rc;
}

/* ---- the statement ---- */

static int find_table(struct engine_db *db, const struct ast_alter_table *alter,
                      struct engine_table **out)
{
    *out = NULL;
    if (alter->schema == NULL || strcasecmp(alter->schema, "main") == 0) {
        *out = engine__catalog_find(db, alter->table);
    }
    if (*out != NULL) {
        return 0;
    }
    if (alter->schema != NULL) {
        return engine__db_error(db, ENGINE_ESQL, "no such table: %s.%s",
                                alter->schema, alter->table);
    }
    return engine__db_error(db, ENGINE_ESQL, "no such table: %s", alter->table);
}

/* RENAME and DROP COLUMN where a commit hook replicates the changes. */
static int replicated_refusal(struct engine_db *db,
                              const struct ast_alter_table *alter)
{
    static const char *const forms[] = {
        [AST_ALTER_RENAME_TABLE] = "RENAME TO",
        [AST_ALTER_RENAME_COLUMN] = "RENAME COLUMN",
        [AST_ALTER_ADD_COLUMN] = "ADD COLUMN",
        [AST_ALTER_DROP_COLUMN] = "DROP COLUMN",
    };

    if (alter->kind == AST_ALTER_ADD_COLUMN ||
        db->change_capture.hook == NULL || db->change_capture.system ||
        db->replaying) {
        return 0;
    }
    return engine__db_error(db, ENGINE_ESQL,
                            "ALTER TABLE %s is not supported in a "
                            "replicated database",
                            forms[alter->kind]);
}

/* SQLite edits the views and triggers that use the table too
 * (renameEditSql over the whole schema); this does not yet, so RENAME and
 * DROP COLUMN refuse a table one of them may use. */
static int used_by_view_or_trigger(struct engine_db *db,
                                   const struct engine_table *table,
                                   const struct ast_alter_table *alter)
{
    const char *user = NULL;

    if (alter->kind == AST_ALTER_ADD_COLUMN) {
        return 0;
    }
    for (size_t i = 0; user == NULL && i < db->view_count; i++) {
        if (engine__alter_mentions(db->views[i]->sql, table->name)) {
            user = db->views[i]->name;
        }
    }
    for (size_t i = 0; user == NULL && i < db->trigger_count; i++) {
        if (engine__alter_mentions(db->triggers[i]->sql, table->name)) {
            user = db->triggers[i]->name;
        }
    }
    if (user == NULL) {
        return 0;
    }
    return engine__db_error(db, ENGINE_ESQL,
                            "ALTER TABLE of a table that view or trigger %s "
                            "uses is not supported yet",
                            user);
}

int engine__alter_table(struct engine_stmt *stmt)
{
    const struct ast_alter_table *alter = &stmt->ast->u.alter_table;
    struct engine_db *db = stmt->db;
    struct engine_table *table;
    int rc = find_table(db, alter, &table);

    if (rc != 0) {
        return rc;
    }
    rc = replicated_refusal(db, alter);
    if (rc == 0) {
        rc = used_by_view_or_trigger(db, table, alter);
    }
    if (rc != 0) {
        return rc;
    }
    /* A running statement may be reading the table this replaces. */
    if (!db->replaying && engine__db_running_statements(db) > 1) {
        return engine__db_error(db, ENGINE_EBUSY, "database table is locked");
    }
    switch (alter->kind) {
    case AST_ALTER_RENAME_TABLE:
        rc = rename_table(db, table, alter);
        break;
    case AST_ALTER_RENAME_COLUMN:
        rc = rename_column(db, table, alter);
        break;
    case AST_ALTER_ADD_COLUMN:
        rc = add_column(stmt, table);
        break;
    case AST_ALTER_DROP_COLUMN:
        rc = drop_column(db, table, alter);
        break;
    }
    if (rc == 0 && engine__redo_schema(db, stmt->sql) != 0) {
        rc = oom(db);
    }
    return rc;
}
