/* SPDX-License-Identifier: MIT
 *
 * capture_apply.c: the apply path (engine.h, "Change capture"): writing
 * changes that came from elsewhere, in the representation the commit hook
 * reads, in a transaction the hook does not see.
 *
 * engine_apply_transaction() brackets the caller's function between BEGIN
 * and COMMIT (run as SQL, so they do all that SQL's do) with the
 * connection's change capture marked as applying, so
 * engine__capture_commit() skips the hook and stamps the commit with the
 * stamp given; the mark lives only as long as the call, so it cannot leak
 * into a later transaction however this one ends.
 *
 * engine_apply_change() writes one change as one SQL statement (INSERT,
 * UPDATE or DELETE by key, with bound values), so affinity, constraints,
 * indexes, the undo and redo logs and statement atomicity are exactly
 * SQL's. The statements stay prepared in a small cache keyed by their
 * text (direct-mapped: a slot per hash, a collision replaces), so a merge
 * that writes many rows of one table and set of columns prepares once.
 * The text is built from the catalog at every call, so after a schema
 * change a cached statement is only reused when the text is still the
 * same, and the engine plans it again for the new schema.
 */
#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"

/* One statement's text being built, and the table it writes. */
struct apply_sql {
    struct engine_db *db;
    const struct engine_change *change;
    struct engine_table *table;
    const struct engine_unique_key *key; /* NULL: keyed by rowid */
    struct common_buf text;
};

/* Ends the transaction fn ran in: COMMIT, or after an error ROLLBACK (if
 * fn left it open), both as statements, so that everything SQL's own
 * transaction ends do (locks, snapshots) happens. */
static int end_transaction(struct engine_db *db, int rc)
{
    struct engine_capture *capture = &db->change_capture;
    char message[ENGINE__ERRMSG_SIZE];

    if (rc == 0) {
        capture->apply_commit = true;
        rc = engine_exec(db, "COMMIT", NULL, NULL);
        capture->apply_commit = false;
        return rc;
    }
    if (db->in_transaction) {
        /* ROLLBACK clears the error: keep fn's. */
        snprintf(message, sizeof(message), "%s", db->errmsg);
        (void)engine_exec(db, "ROLLBACK", NULL, NULL);
        engine__db_error(db, rc, "%s", message);
    }
    return rc;
}

int engine_apply_transaction(struct engine_db *db, uint64_t stamp,
                             engine_apply_cb fn, void *ctx)
{
    struct engine_capture *capture = &db->change_capture;
    int rc;

    ASSERT(db != NULL);
    ASSERT(fn != NULL);
    if (db->in_transaction || capture->committing || capture->applying) {
        return engine__db_error(db, ENGINE_EMISUSE,
                                "cannot apply changes within a transaction");
    }
    rc = engine_exec(db, "BEGIN", NULL, NULL);
    if (rc != 0) {
        return rc;
    }
    capture->applying = true;
    capture->apply_stamp = stamp;
    rc = fn(ctx, db);
    rc = rc > 0 ? ENGINE_EABORT : rc;
    if (rc == 0 && !db->in_transaction) {
        rc = engine__db_error(db, ENGINE_EMISUSE,
                              "the transaction ended inside "
                              "engine_apply_transaction()");
    } else if (rc != 0 && db->errcode != rc) {
        engine__db_error(db, rc, "apply failed: %s", engine_strerror(rc));
    }
    rc = end_transaction(db, rc);
    capture->applying = false;
    capture->apply_stamp = 0;
    return rc;
}

uint64_t engine_schema_version(const struct engine_db *db)
{
    ASSERT(db != NULL);
    return db->schema_version;
}

struct apply_list {
    const struct engine_change *changes;
    size_t count;
};

static int apply_list_cb(void *ctx, struct engine_db *db)
{
    const struct apply_list *list = ctx;

    for (size_t i = 0; i < list->count; i++) {
        int rc = engine_apply_change(db, &list->changes[i]);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int engine_apply(struct engine_db *db, const struct engine_change *changes,
                 size_t count, uint64_t stamp)
{
    struct apply_list list = {.changes = changes, .count = count};

    ASSERT(changes != NULL || count == 0);
    return engine_apply_transaction(db, stamp, apply_list_cb, &list);
}

/* ---- one change as one statement ---- */

static int put(struct apply_sql *sql, const char *text)
{
    return common_buf_append(&sql->text, text, strlen(text));
}

/* An identifier, double-quoted. */
static int put_name(struct apply_sql *sql, const char *name)
{
    int rc = common_buf_append_byte(&sql->text, '"');

    for (const char *p = name; rc == 0 && *p != '\0'; p++) {
        rc = *p == '"' ? common_buf_append_byte(&sql->text, '"') : 0;
        rc = rc ? rc : common_buf_append_byte(&sql->text, (uint8_t)*p);
    }
    return rc ? rc : common_buf_append_byte(&sql->text, '"');
}

static int put_parameter(struct apply_sql *sql, size_t number)
{
    char text[32];

    snprintf(text, sizeof(text), "?%zu", number);
    return put(sql, text);
}

/* The name the rowid goes by in the table: its INTEGER PRIMARY KEY, or the
 * first of SQLite's rowid names no column has taken; NULL if none is
 * left. */
static const char *rowid_name(const struct engine_table *table)
{
    static const char *names[] = {"rowid", "oid", "_rowid_"};

    if (table->rowid_alias >= 0) {
        return table->columns[table->rowid_alias].name;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (engine__table_column_index(table, names[i]) < 0) {
            return names[i];
        }
    }
    return NULL;
}

/* The table column written by values[i]. */
static size_t column_of(const struct engine_change *change, size_t i)
{
    return change->columns != NULL ? change->columns[i] : i;
}

/* Whether values[i] is left out of an INSERT: the rowid alias column of
 * a table keyed by rowid, which the key sets. (An UPDATE names every
 * column it is given and binds every value: leaving one unbound would set
 * it to NULL.) */
static bool skipped(const struct apply_sql *sql, size_t i)
{
    return sql->change->kind == ENGINE_CHANGE_INSERT && sql->key == NULL &&
           (ptrdiff_t)column_of(sql->change, i) == sql->table->rowid_alias;
}

/* "WHERE" and the key's terms, bound to ?1..?key_count. */
static int put_where(struct apply_sql *sql)
{
    int rc = put(sql, " WHERE ");

    if (sql->key == NULL) {
        rc = rc ? rc : put_name(sql, rowid_name(sql->table));
        return rc ? rc : put(sql, "=?1");
    }
    for (size_t i = 0; rc == 0 && i < sql->key->column_count; i++) {
        rc = put(sql, i > 0 ? " AND " : "");
        rc = rc ? rc
                : put_name(sql, sql->table->columns[sql->key->columns[i]].name);
        rc = rc ? rc : put(sql, " IS ");
        rc = rc ? rc : put_parameter(sql, i + 1);
    }
    return rc;
}

/* INSERT INTO "t"(["rowid",] "c", ...) VALUES(?k+1, ...): the key is
 * bound first (?1 for a rowid; a declared key's values are among the
 * columns and its parameters go unused). */
static int put_insert(struct apply_sql *sql)
{
    const struct engine_change *change = sql->change;
    size_t key_count = sql->key != NULL ? sql->key->column_count : 1;
    bool first = sql->key != NULL;
    int rc = put(sql, "INSERT INTO ");

    rc = rc ? rc : put_name(sql, sql->table->name);
    rc = rc ? rc : put(sql, "(");
    if (sql->key == NULL) {
        rc = rc ? rc : put_name(sql, rowid_name(sql->table));
    }
    for (size_t i = 0; rc == 0 && i < change->value_count; i++) {
        if (!skipped(sql, i)) {
            rc = put(sql, first ? "" : ",");
            rc = rc ? rc
                    : put_name(sql,
                               sql->table->columns[column_of(change, i)].name);
            first = false;
        }
    }
    rc = rc ? rc : put(sql, ") VALUES(");
    first = true;
    if (sql->key == NULL) {
        rc = rc ? rc : put(sql, "?1");
        first = false;
    }
    for (size_t i = 0; rc == 0 && i < change->value_count; i++) {
        if (!skipped(sql, i)) {
            rc = put(sql, first ? "" : ",");
            rc = rc ? rc : put_parameter(sql, key_count + i + 1);
            first = false;
        }
    }
    return rc ? rc : put(sql, ")");
}

static int put_update(struct apply_sql *sql)
{
    const struct engine_change *change = sql->change;
    size_t key_count = sql->key != NULL ? sql->key->column_count : 1;
    int rc = put(sql, "UPDATE ");

    rc = rc ? rc : put_name(sql, sql->table->name);
    rc = rc ? rc : put(sql, " SET ");
    for (size_t i = 0; rc == 0 && i < change->value_count; i++) {
        rc = put(sql, i > 0 ? "," : "");
        rc = rc ? rc
                : put_name(sql, sql->table->columns[column_of(change, i)].name);
        rc = rc ? rc : put(sql, "=");
        rc = rc ? rc : put_parameter(sql, key_count + i + 1);
    }
    return rc ? rc : put_where(sql);
}

static int put_delete(struct apply_sql *sql)
{
    int rc = put(sql, "DELETE FROM ");

    rc = rc ? rc : put_name(sql, sql->table->name);
    return rc ? rc : put_where(sql);
}

static int bind_value(struct engine_stmt *stmt, size_t index,
                      const struct engine_change_value *v)
{
    int i = (int)index;

    switch (v->type) {
    case ENGINE_INTEGER:
        return engine_bind_int64(stmt, i, v->integer);
    case ENGINE_FLOAT:
        return engine_bind_double(stmt, i, v->real);
    case ENGINE_TEXT:
        return engine_bind_text(stmt, i, v->size > 0 ? v->bytes : "",
                                (int)v->size);
    case ENGINE_BLOB:
        return engine_bind_blob(stmt, i, v->size > 0 ? v->bytes : "",
                                (int)v->size);
    default:
        return engine_bind_null(stmt, i);
    }
}

/* FNV-1a: the text's slot in the cache. */
static size_t text_slot(const struct common_buf *text)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (size_t i = 0; i < text->size; i++) {
        h = (h ^ text->data[i]) * UINT64_C(0x100000001b3);
    }
    return (size_t)(h % ENGINE__APPLY_STMTS);
}

/* The statement for sql's text (NUL-terminated), reset and unbound: the
 * cached one, or a new one put in its slot. */
static int cached_stmt(struct apply_sql *sql, struct engine_stmt **out)
{
    struct engine_stmt **slot =
        &sql->db->change_capture.apply_stmts[text_slot(&sql->text)];
    const char *text = (const char *)sql->text.data;
    int rc;

    if (*slot != NULL && strcmp(engine_sql(*slot), text) == 0) {
        /* reset returns the last run's error, reported then already. */
        (void)engine_reset(*slot);
        rc = engine_clear_bindings(*slot);
        *out = *slot;
        return rc;
    }
    engine_finalize(*slot);
    *slot = NULL;
    rc = engine_prepare(sql->db, text, (int)sql->text.size, slot, NULL);
    *out = *slot;
    return rc;
}

/* Binds the key to ?1.. and the values after it, runs the statement, and
 * checks that an UPDATE or DELETE found its row. */
static int run(struct apply_sql *sql)
{
    const struct engine_change *change = sql->change;
    struct engine_stmt *stmt = NULL;
    int rc = cached_stmt(sql, &stmt);

    for (size_t i = 0; rc == 0 && i < change->key_count; i++) {
        rc = bind_value(stmt, i + 1, &change->key[i]);
    }
    for (size_t i = 0; rc == 0 && i < change->value_count; i++) {
        if (!skipped(sql, i)) {
            rc =
                bind_value(stmt, change->key_count + i + 1, &change->values[i]);
        }
    }
    rc = rc ? rc : engine_step(stmt);
    rc = rc == ENGINE_DONE ? 0 : rc;
    if (stmt != NULL) {
        /* Not left running (a held snapshot); the bound copies go. */
        (void)engine_reset(stmt);
        (void)engine_clear_bindings(stmt);
    }
    if (rc == 0 && change->kind != ENGINE_CHANGE_INSERT &&
        engine_changes(sql->db) == 0) {
        rc = engine__db_error(sql->db, ENGINE_ENOTFOUND,
                              "no row with that key in %s", sql->table->name);
    }
    return rc;
}

/* The change's table, key and columns fit each other. */
static int check_change(struct apply_sql *sql)
{
    const struct engine_change *change = sql->change;
    size_t key_count = sql->key != NULL ? sql->key->column_count : 1;

    if (change->key_count != key_count ||
        (sql->key == NULL && change->key[0].type != ENGINE_INTEGER) ||
        (sql->key == NULL && rowid_name(sql->table) == NULL)) {
        return engine__db_error(sql->db, ENGINE_ESQL,
                                "the key does not fit table %s",
                                sql->table->name);
    }
    if (change->columns == NULL && change->kind == ENGINE_CHANGE_INSERT &&
        change->value_count != sql->table->column_count) {
        return engine__db_error(sql->db, ENGINE_ESQL,
                                "table %s has %zu columns but %zu values "
                                "were supplied",
                                sql->table->name, sql->table->column_count,
                                change->value_count);
    }
    for (size_t i = 0; i < change->value_count; i++) {
        if (column_of(change, i) >= sql->table->column_count) {
            return engine__db_error(sql->db, ENGINE_ESQL,
                                    "no column %zu in table %s",
                                    column_of(change, i), sql->table->name);
        }
    }
    return 0;
}

static int apply_row(struct apply_sql *sql)
{
    int rc = check_change(sql);

    if (rc != 0) {
        return rc;
    }
    switch (sql->change->kind) {
    case ENGINE_CHANGE_INSERT:
        rc = put_insert(sql);
        break;
    case ENGINE_CHANGE_UPDATE:
        rc = put_update(sql);
        break;
    default:
        rc = put_delete(sql);
        break;
    }
    rc = rc ? rc : common_buf_append_byte(&sql->text, 0);
    if (rc != 0) {
        return engine__db_error(sql->db, COMMON_ENOMEM, "out of memory");
    }
    sql->text.size--; /* the NUL is not part of the statement */
    return run(sql);
}

/* A schema change from elsewhere: exactly one CREATE or DROP of a table,
 * index, view or trigger, or one ALTER TABLE (what the commit hook
 * reports), run as user SQL, so a
 * module's reserved names stay refused; never a second statement, never
 * DML. A view made again with the same text, or dropped where it is not,
 * is nothing to do. */
static int apply_schema(struct engine_db *db, const char *text)
{
    unsigned kinds = 1u << AST_STMT_CREATE_TABLE | 1u << AST_STMT_DROP_TABLE |
                     1u << AST_STMT_CREATE_INDEX | 1u << AST_STMT_DROP_INDEX |
                     1u << AST_STMT_CREATE_VIEW | 1u << AST_STMT_DROP_VIEW |
                     1u << AST_STMT_ALTER_TABLE |
                     1u << AST_STMT_CREATE_TRIGGER |
                     1u << AST_STMT_DROP_TRIGGER;
    int rc = engine__schema_check_one(text, kinds);
    bool noop = false;

    rc = rc == 0 ? engine__view_apply_is_noop(db, text, &noop) : rc;
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(db, rc, "out of memory");
    }
    if (rc != 0) {
        return engine__db_error(db, ENGINE_ESQL,
                                "a schema change must be one CREATE or DROP "
                                "of a table, index, view or trigger, or one "
                                "ALTER TABLE");
    }
    return noop ? 0 : engine_exec(db, text, NULL, NULL);
}

int engine_apply_change(struct engine_db *db,
                        const struct engine_change *change)
{
    struct apply_sql sql = {.db = db, .change = change};
    int rc;

    ASSERT(db != NULL);
    ASSERT(change != NULL);
    if (change->kind == ENGINE_CHANGE_SCHEMA) {
        ASSERT(change->sql != NULL);
        return apply_schema(db, change->sql);
    }
    ASSERT(change->kind == ENGINE_CHANGE_INSERT ||
           change->kind == ENGINE_CHANGE_UPDATE ||
           change->kind == ENGINE_CHANGE_DELETE);
    ASSERT(change->table != NULL);
    /* Changes come from elsewhere: they never touch a module's tables. */
    if (engine__system_is_name(change->table) && !db->change_capture.system) {
        return engine__db_error(db, ENGINE_ESQL,
                                "object name reserved for internal use: %s",
                                change->table);
    }
    sql.table = engine__catalog_find(db, change->table);
    if (sql.table == NULL) {
        return engine__db_error(db, ENGINE_ESQL, "no such table: %s",
                                change->table);
    }
    if (change->kind == ENGINE_CHANGE_UPDATE && change->value_count == 0) {
        return 0;
    }
    sql.key = engine__capture_primary_key(sql.table);
    common_buf_init(&sql.text, ENGINE_MAX_SQL_SIZE);
    rc = apply_row(&sql);
    common_buf_close(&sql.text);
    return rc;
}
