/* SPDX-License-Identifier: MIT
 *
 * pragma_schema.c: PRAGMA table_info, index_list and index_info, printed
 * exactly as SQLite 3.40 prints them.
 *
 * table_info: a column's type is its declared type as sqlite3AddColumn()
 * keeps it (one of SQLite's standard type names in capitals, else the text
 * as written, unquoted); dflt_value is the DEFAULT expression's text as
 * written (inside its parentheses, trimmed); pk is the column's position
 * in the PRIMARY KEY, from 1.
 *
 * index_list lists a table's indexes in the order of SQLite's pTab->pIndex
 * list, which sqlite3CreateIndex() builds: each new index goes first,
 * except that one whose conflict resolution is REPLACE goes after every
 * index that is not. The automatic indexes of the PRIMARY KEY and UNIQUE
 * constraints come from the CREATE TABLE text (parsed again), in the order
 * written, named sqlite_autoindex_<table>_<n> with n one more than the
 * indexes so far; a constraint over the same columns and collations as an
 * earlier one adds no index (the INTEGER PRIMARY KEY, the rowid, has
 * none). The CREATE INDEX indexes follow in creation order.
 */
#include "pragma.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* One index of a table, as index_list and index_info show it. */
struct pragma_index {
    const char *name;
    const char *origin; /* "c" (CREATE INDEX), "u" (UNIQUE), "pk" */
    bool unique;
    bool partial;
    enum ast_conflict conflict; /* REPLACE orders the list */
    size_t *columns;            /* table column numbers */
    const char **collations;    /* per column; NULL for BINARY */
    size_t column_count;
};

/* A table's indexes in SQLite's order; arrays in the result arena. */
struct index_list {
    struct engine_stmt *stmt;
    const struct engine_table *table;
    struct pragma_index *items;
    size_t count;
};

static int no_memory(struct engine_stmt *stmt)
{
    return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
}

static struct engine_value text_value(const char *text)
{
    return text == NULL ? engine__value_null()
                        : engine__value_text(text, strlen(text));
}

/* ---- table_info ---- */

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_quote(char c)
{
    return c == '"' || c == '\'' || c == '`' || c == '[';
}

/* sqlite3Dequote() of text[0..size) into out (size + 1 bytes). */
static void dequote(const char *text, size_t size, char *out)
{
    char quote = size > 0 ? text[0] : '\0';
    size_t j = 0;

    if (!is_quote(quote)) {
        memcpy(out, text, size);
        out[size] = '\0';
        return;
    }
    quote = quote == '[' ? ']' : quote;
    for (size_t i = 1; i < size; i++) {
        if (text[i] == quote && (i + 1 >= size || text[i + 1] != quote)) {
            break;
        }
        i += text[i] == quote;
        out[j++] = text[i];
    }
    out[j] = '\0';
}

/* sqlite3DequoteToken(): drops the quotes around text[0..size) when
 * there are none inside. */
static void dequote_token(const char **text, size_t *size)
{
    if (*size < 2 || !is_quote((*text)[0])) {
        return;
    }
    for (size_t i = 1; i < *size - 1; i++) {
        if (is_quote((*text)[i])) {
            return;
        }
    }
    (*text)++;
    *size -= 2;
}

/* Drops a trailing "[generated] always" (sqlite3AddColumn: the parser may
 * leave those keywords in a type name), and the spaces before it. */
static size_t type_trim(const char *type, size_t size)
{
    if (size < 16 || strncasecmp(type + size - 6, "always", 6) != 0) {
        return size;
    }
    for (size -= 6; size > 0 && is_space(type[size - 1]); size--) {
    }
    if (size >= 9 && strncasecmp(type + size - 9, "generated", 9) == 0) {
        for (size -= 9; size > 0 && is_space(type[size - 1]); size--) {
        }
    }
    return size;
}

/* The type column: sqlite3AddColumn() then sqlite3ColumnType(). */
static int column_type(struct engine_stmt *stmt, const char *type,
                       struct engine_value *out)
{
    static const char *const standard[] = {"ANY",     "BLOB", "INT",
                                           "INTEGER", "REAL", "TEXT"};
    size_t size = type_trim(type, type != NULL ? strlen(type) : 0);
    char *text;

    if (size >= 3) {
        dequote_token(&type, &size);
    }
    for (size_t i = 0; size >= 3 && i < 6; i++) {
        if (strlen(standard[i]) == size &&
            strncasecmp(type, standard[i], size) == 0) {
            *out = text_value(standard[i]);
            return 0;
        }
    }
    text = engine__arena_alloc(&stmt->result_arena, size + 1);
    if (text == NULL) {
        return no_memory(stmt);
    }
    dequote(type != NULL ? type : "", size, text);
    *out = text_value(text);
    return 0;
}

/* dflt_value: the text of the DEFAULT term as written; of a parenthesized
 * expression, what is inside the parentheses, trimmed
 * (sqlite3DbSpanDup). */
static int default_text(struct engine_stmt *stmt, const struct ast_expr *e,
                        struct engine_value *out)
{
    const char *text = e != NULL ? e->text : NULL;
    size_t size = text != NULL ? strlen(text) : 0;

    if (text == NULL || text[0] != '(') {
        *out = text_value(text);
        return 0;
    }
    for (text++, size -= 2; size > 0 && is_space(text[0]); size--) {
        text++;
    }
    while (size > 0 && is_space(text[size - 1])) {
        size--;
    }
    text = engine__arena_strndup(&stmt->result_arena, text, size);
    if (text == NULL) {
        return no_memory(stmt);
    }
    *out = text_value(text);
    return 0;
}

/* pk: 1 for the rowid alias, else the position in the PRIMARY KEY. */
static int64_t column_pk(const struct engine_table *table, size_t column)
{
    if (table->rowid_alias == (ptrdiff_t)column) {
        return 1;
    }
    for (size_t k = 0; k < table->key_count; k++) {
        const struct engine_unique_key *key = &table->keys[k];

        for (size_t i = 0; key->primary && i < key->column_count; i++) {
            if (key->columns[i] == column) {
                return (int64_t)i + 1;
            }
        }
    }
    return 0;
}

static bool is_schema_table(const char *name)
{
    return strcasecmp(name, "sqlite_schema") == 0 ||
           strcasecmp(name, "sqlite_master") == 0;
}

/* sqlite_schema's own columns, as SQLite declares them. */
static int schema_table_info(struct engine_stmt *stmt)
{
    static const char *const names[] = {"type", "name", "tbl_name", "rootpage",
                                        "sql"};

    for (size_t c = 0; c < 5; c++) {
        struct engine_value row[6] = {engine__value_int((int64_t)c),
                                      text_value(names[c]),
                                      text_value(c == 3 ? "INT" : "TEXT"),
                                      engine__value_int(0),
                                      engine__value_null(),
                                      engine__value_int(0)};
        int rc = engine__pragma_row(stmt, row);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* A view's columns: no NOT NULL, default or key (sqlite3ViewGetColumnNames
 * gives it only names and types). */
static int view_table_info(struct engine_stmt *stmt, const char *name)
{
    const char **types;
    char **names;
    size_t count;
    int rc = engine__view_columns(stmt, name, &names, &types, &count);

    for (size_t c = 0; rc == 0 && c < count; c++) {
        struct engine_value row[6] = {
            engine__value_int((int64_t)c), text_value(names[c]),
            engine__value_null(),          engine__value_int(0),
            engine__value_null(),          engine__value_int(0)};

        rc = column_type(stmt, types[c], &row[2]);
        rc = rc != 0 ? rc : engine__pragma_row(stmt, row);
    }
    return rc;
}

int engine__pragma_table_info(struct engine_stmt *stmt, const char *name)
{
    const struct engine_table *table = engine__catalog_find(stmt->db, name);

    if (table == NULL && engine__view_find(stmt->db, name) != NULL) {
        return view_table_info(stmt, name);
    }
    if (table == NULL) {
        return is_schema_table(name) ? schema_table_info(stmt) : 0;
    }
    for (size_t c = 0; c < table->column_count; c++) {
        const struct engine_column_def *column = &table->columns[c];
        struct engine_value row[6];
        int rc;

        row[0] = engine__value_int((int64_t)c);
        row[1] = text_value(column->name);
        row[3] = engine__value_int(column->not_null ? 1 : 0);
        row[5] = engine__value_int(column_pk(table, c));
        rc = column_type(stmt, column->type_name, &row[2]);
        if (rc == 0) {
            rc = default_text(stmt, column->default_value, &row[4]);
        }
        if (rc == 0) {
            rc = engine__pragma_row(stmt, row);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- the index list ---- */

static bool same_collation(const char *a, const char *b)
{
    return strcasecmp(a != NULL ? a : "BINARY", b != NULL ? b : "BINARY") == 0;
}

/* The automatic index already made for the same key, or NULL. */
static struct pragma_index *list_find_key(const struct index_list *list,
                                          const struct pragma_index *index)
{
    for (size_t i = 0; i < list->count; i++) {
        struct pragma_index *other = &list->items[i];
        size_t c = 0;

        if (other->column_count != index->column_count) {
            continue;
        }
        while (c < index->column_count &&
               other->columns[c] == index->columns[c] &&
               same_collation(other->collations[c], index->collations[c])) {
            c++;
        }
        if (c == index->column_count) {
            return other;
        }
    }
    return NULL;
}

/* Puts index first, or, if it is REPLACE, after the indexes that are not
 * (the items array has room). */
static void list_insert(struct index_list *list,
                        const struct pragma_index *index)
{
    size_t at = 0;

    if (index->conflict == AST_CONFLICT_REPLACE && list->count > 0 &&
        list->items[0].conflict != AST_CONFLICT_REPLACE) {
        at = 1;
        while (at < list->count &&
               list->items[at].conflict != AST_CONFLICT_REPLACE) {
            at++;
        }
    }
    memmove(&list->items[at + 1], &list->items[at],
            (list->count - at) * sizeof(*list->items));
    list->items[at] = *index;
    list->count++;
}

/* Moves the first REPLACE index after the indexes that follow it and are
 * not REPLACE: sqlite3CreateIndex() does so each time it ends, since a
 * duplicate constraint can make an index REPLACE after it was placed. */
static void list_sink_replace(struct index_list *list)
{
    size_t i = 0;

    while (i < list->count && list->items[i].conflict != AST_CONFLICT_REPLACE) {
        i++;
    }
    for (; i + 1 < list->count &&
           list->items[i + 1].conflict != AST_CONFLICT_REPLACE;
         i++) {
        struct pragma_index index = list->items[i];

        list->items[i] = list->items[i + 1];
        list->items[i + 1] = index;
    }
}

/* A PRIMARY KEY or UNIQUE constraint's index, unless an earlier one has
 * the same key: then that one takes the constraint's kind and conflict
 * clause (sqlite3CreateIndex). */
static int list_add_key(struct index_list *list, struct pragma_index *index,
                        bool primary)
{
    struct pragma_index *same = list_find_key(list, index);
    /* "sqlite_autoindex_" and "_<n>" take at most 17 + 21 bytes. */
    size_t size = strlen(list->table->name) + 40;
    char *name;

    if (same != NULL) {
        same->origin = primary ? "pk" : same->origin;
        if (same->conflict == AST_CONFLICT_DEFAULT) {
            same->conflict = index->conflict;
        }
        list_sink_replace(list);
        return 0;
    }
    name = engine__arena_alloc(&list->stmt->result_arena, size);
    if (name == NULL) {
        return no_memory(list->stmt);
    }
    snprintf(name, size, "sqlite_autoindex_%s_%zu", list->table->name,
             list->count + 1);
    index->name = name;
    index->origin = primary ? "pk" : "u";
    index->unique = true;
    list_insert(list, index);
    list_sink_replace(list);
    return 0;
}

/* Room for count columns of a new index. */
static int index_columns_alloc(struct engine_stmt *stmt,
                               struct pragma_index *index, size_t count)
{
    memset(index, 0, sizeof(*index));
    index->columns =
        engine__arena_alloc(&stmt->result_arena, (count + 1) * sizeof(size_t));
    index->collations =
        engine__arena_alloc(&stmt->result_arena, (count + 1) * sizeof(char *));
    index->column_count = count;
    return index->columns == NULL || index->collations == NULL ? no_memory(stmt)
                                                               : 0;
}

/* The table column an index or constraint column names, with the
 * collation the index uses for it: its COLLATE, else the column's. */
static ptrdiff_t key_column(const struct engine_table *table,
                            const struct ast_create_table *def,
                            const struct ast_expr *expr, const char **collation)
{
    ptrdiff_t column;

    *collation = NULL;
    if (expr->kind == AST_COLLATE) {
        *collation = expr->u.collate.name;
        expr = expr->u.collate.operand;
    }
    if (expr->kind != AST_COLUMN) {
        return -1;
    }
    column = engine__table_column_index(table, expr->u.column.name);
    if (column >= 0 && *collation == NULL && def != NULL) {
        *collation = def->columns[column].collation;
    }
    return column;
}

/* A column's PRIMARY KEY and UNIQUE constraints (within one column their
 * order cannot matter: the second has the first's key). */
static int column_keys(struct index_list *list,
                       const struct ast_create_table *def, size_t column)
{
    const struct ast_column_def *c = &def->columns[column];
    bool primary =
        c->primary_key && list->table->rowid_alias != (ptrdiff_t)column;
    struct pragma_index index;
    int rc = 0;

    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        if (pass == 0 ? !primary : !c->unique) {
            continue;
        }
        rc = index_columns_alloc(list->stmt, &index, 1);
        if (rc == 0) {
            index.columns[0] = column;
            index.collations[0] = c->collation;
            index.conflict =
                pass == 0 ? c->primary_key_conflict : c->unique_conflict;
            rc = list_add_key(list, &index, pass == 0);
        }
    }
    return rc;
}

/* A PRIMARY KEY (...) or UNIQUE (...) table constraint. */
static int constraint_key(struct index_list *list,
                          const struct ast_create_table *def,
                          const struct ast_table_constraint *constraint)
{
    bool primary = constraint->kind == AST_CONSTRAINT_PRIMARY_KEY;
    struct pragma_index index;
    int rc;

    if (constraint->kind == AST_CONSTRAINT_CHECK) {
        return 0;
    }
    rc = index_columns_alloc(list->stmt, &index, constraint->column_count);
    for (size_t i = 0; rc == 0 && i < constraint->column_count; i++) {
        ptrdiff_t column =
            key_column(list->table, def, constraint->columns[i].expr,
                       &index.collations[i]);

        if (column < 0) {
            return 0; /* the table could not have been made */
        }
        index.columns[i] = (size_t)column;
    }
    if (rc != 0 || (primary && constraint->column_count == 1 &&
                    list->table->rowid_alias == (ptrdiff_t)index.columns[0])) {
        return rc; /* INTEGER PRIMARY KEY: the rowid is the key */
    }
    index.conflict = constraint->conflict;
    return list_add_key(list, &index, primary);
}

/* Parses a CREATE statement kept in the catalog again. */
static int parse_again(struct engine_stmt *stmt, const char *sql,
                       struct ast_stmt **out)
{
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t tail;
    int rc = engine__parse(&stmt->result_arena, sql, strlen(sql), out, &tail,
                           errmsg, sizeof(errmsg), NULL);

    if (rc == COMMON_ENOMEM) {
        return no_memory(stmt);
    }
    /* The catalog keeps only statements that parsed. */
    ASSERT(rc == 0);
    ASSERT(*out != NULL);
    return 0;
}

/* A CREATE INDEX index of the table. */
static int explicit_index(struct index_list *list,
                          const struct engine_index_def *def)
{
    const struct ast_create_index *create;
    struct pragma_index index;
    struct ast_stmt *ast;
    int rc = parse_again(list->stmt, def->sql, &ast);

    if (rc != 0) {
        return rc;
    }
    create = &ast->u.create_index;
    rc = index_columns_alloc(list->stmt, &index, create->column_count);
    for (size_t i = 0; rc == 0 && i < create->column_count; i++) {
        ptrdiff_t column = key_column(
            list->table, NULL, create->columns[i].expr, &index.collations[i]);

        index.columns[i] = column < 0 ? 0 : (size_t)column;
    }
    if (rc != 0) {
        return rc;
    }
    index.name = def->name;
    index.origin = "c";
    index.unique = def->unique;
    index.partial = create->where != NULL;
    index.conflict = def->unique ? AST_CONFLICT_ABORT : AST_CONFLICT_DEFAULT;
    list_insert(list, &index);
    list_sink_replace(list);
    return 0;
}

/* The CREATE INDEX indexes in creation order (DROP INDEX reorders the
 * table's array). */
static int explicit_indexes(struct index_list *list)
{
    const struct engine_table *table = list->table;
    uint64_t last = 0;

    for (size_t n = 0; n < table->index_count; n++) {
        const struct engine_index_def *next = NULL;
        int rc;

        for (size_t i = 0; i < table->index_count; i++) {
            const struct engine_index_def *index = &table->indexes[i];

            if (index->sequence > last &&
                (next == NULL || index->sequence < next->sequence)) {
                next = index;
            }
        }
        ASSERT(next != NULL);
        last = next->sequence;
        rc = explicit_index(list, next);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int index_list_build(struct engine_stmt *stmt,
                            const struct engine_table *table,
                            struct index_list *list)
{
    const struct ast_create_table *def;
    struct ast_stmt *ast;
    size_t max;
    int rc = parse_again(stmt, table->sql, &ast);

    if (rc != 0) {
        return rc;
    }
    def = &ast->u.create_table;
    max = 2 * def->column_count + def->constraint_count + table->index_count;
    list->stmt = stmt;
    list->table = table;
    list->count = 0;
    list->items = engine__arena_alloc(&stmt->result_arena,
                                      (max + 1) * sizeof(*list->items));
    if (list->items == NULL) {
        return no_memory(stmt);
    }
    for (size_t c = 0; rc == 0 && c < def->column_count; c++) {
        rc = column_keys(list, def, c);
    }
    for (size_t k = 0; rc == 0 && k < def->constraint_count; k++) {
        rc = constraint_key(list, def, &def->constraints[k]);
    }
    return rc == 0 ? explicit_indexes(list) : rc;
}

int engine__pragma_index_list(struct engine_stmt *stmt, const char *name)
{
    const struct engine_table *table = engine__catalog_find(stmt->db, name);
    struct index_list list;
    int rc;

    if (table == NULL) {
        return 0;
    }
    rc = index_list_build(stmt, table, &list);
    for (size_t i = 0; rc == 0 && i < list.count; i++) {
        const struct pragma_index *index = &list.items[i];
        struct engine_value row[5] = {
            engine__value_int((int64_t)i), text_value(index->name),
            engine__value_int(index->unique ? 1 : 0), text_value(index->origin),
            engine__value_int(index->partial ? 1 : 0)};

        rc = engine__pragma_row(stmt, row);
    }
    return rc;
}

static int index_info_rows(struct engine_stmt *stmt,
                           const struct engine_table *table,
                           const struct pragma_index *index)
{
    for (size_t i = 0; i < index->column_count; i++) {
        size_t column = index->columns[i];
        struct engine_value row[3] = {engine__value_int((int64_t)i),
                                      engine__value_int((int64_t)column),
                                      text_value(table->columns[column].name)};
        int rc = engine__pragma_row(stmt, row);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int engine__pragma_index_info(struct engine_stmt *stmt, const char *name)
{
    const struct engine_db *db = stmt->db;

    for (size_t t = 0; t < db->table_count; t++) {
        struct index_list list;
        int rc = index_list_build(stmt, db->tables[t], &list);

        for (size_t i = 0; rc == 0 && i < list.count; i++) {
            if (strcasecmp(list.items[i].name, name) == 0) {
                return index_info_rows(stmt, db->tables[t], &list.items[i]);
            }
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
