/* SPDX-License-Identifier: MIT
 *
 * table.c: a table's definition (from its CREATE TABLE) and its columnar
 * row store (table.h).
 *
 * Definition rules follow SQLite's lang_createtable.html: a column whose
 * declared type is exactly INTEGER and that alone forms the PRIMARY KEY
 * (not written "INTEGER PRIMARY KEY DESC") is an alias of the rowid; any
 * other PRIMARY KEY, and every UNIQUE, is a unique key.
 */
#define _GNU_SOURCE /* qsort_r */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "graveyard.h"
#include "plan.h"
#include "tokenize.h"

static bool is_parameter(const struct ast_expr *ast, const void *arg)
{
    (void)arg;
    return ast->kind == AST_PARAMETER;
}

/* Whether expr (NULL: none) holds a parameter: a CHECK or a DEFAULT has
 * no statement to bind it (SQLite refuses them too). */
static bool has_parameter(const struct ast_expr *expr)
{
    return expr != NULL && engine__ast_any(expr, is_parameter, NULL);
}

#define SLOTS_INITIAL 64

static char *copy_string(const char *text)
{
    size_t size;
    char *copy;

    if (text == NULL) {
        return NULL;
    }
    size = strlen(text);
    copy = common_malloc(size + 1);
    if (copy != NULL) {
        memcpy(copy, text, size + 1);
    }
    return copy;
}

bool engine__table_is_rowid_name(const char *name)
{
    return strcasecmp(name, "rowid") == 0 || strcasecmp(name, "oid") == 0 ||
           strcasecmp(name, "_rowid_") == 0;
}

ptrdiff_t engine__table_column_index(const struct engine_table *table,
                                     const char *name)
{
    for (size_t i = 0; i < table->column_count; i++) {
        if (strcasecmp(table->columns[i].name, name) == 0) {
            return (ptrdiff_t)i;
        }
    }
    return -1;
}

static int define_column(struct engine_table *table, size_t index,
                         const struct ast_column_def *def, char *errmsg,
                         size_t errmsg_size)
{
    struct engine_column_def *column = &table->columns[index];
    size_t type_size = def->type_name ? strlen(def->type_name) : 0;

    for (size_t i = 0; i < index; i++) {
        if (strcasecmp(table->columns[i].name, def->name) == 0) {
            snprintf(errmsg, errmsg_size, "duplicate column name: %s",
                     def->name);
            return ENGINE_ESQL;
        }
    }
    column->name = copy_string(def->name);
    column->type_name = copy_string(def->type_name);
    if (column->name == NULL || (def->type_name && !column->type_name)) {
        return COMMON_ENOMEM;
    }
    column->affinity =
        engine__affinity_of_declared_type(def->type_name, type_size);
    column->collation = ENGINE_COLLATION_BINARY;
    if (def->collation != NULL &&
        engine__collation_by_name(def->collation, strlen(def->collation),
                                  &column->collation) != 0) {
        snprintf(errmsg, errmsg_size, "no such collation sequence: %s",
                 def->collation);
        return ENGINE_ESQL;
    }
    column->not_null = def->not_null;
    column->not_null_conflict = def->not_null_conflict;
    if (has_parameter(def->default_value)) {
        /* A statement's parameters have no value when a default is used
         * (SQLite's message). */
        snprintf(errmsg, errmsg_size,
                 "default value of column [%s] is not constant", def->name);
        return ENGINE_ESQL;
    }
    column->default_value = def->default_value;
    return 0;
}

/* Adds a unique key over columns (resolved by name). */
static int add_key(struct engine_table *table, const char **names, size_t count,
                   bool primary, enum ast_conflict conflict, char *errmsg,
                   size_t errmsg_size)
{
    struct engine_unique_key *key = &table->keys[table->key_count];

    memset(key, 0, sizeof(*key));
    key->columns = common_calloc(count, sizeof(*key->columns));
    if (key->columns == NULL) {
        return COMMON_ENOMEM;
    }
    table->key_count++;
    for (size_t i = 0; i < count; i++) {
        ptrdiff_t column = engine__table_column_index(table, names[i]);

        if (column < 0) {
            snprintf(errmsg, errmsg_size, "no such column: %s", names[i]);
            return ENGINE_ESQL;
        }
        key->columns[i] = (size_t)column;
    }
    key->column_count = count;
    key->primary = primary;
    key->conflict = conflict;
    return 0;
}

static bool is_integer_type(const char *type_name)
{
    return type_name != NULL && strcasecmp(type_name, "INTEGER") == 0;
}

/* The name of an indexed column, or NULL when it is an expression. */
static const char *indexed_name(const struct ast_indexed_column *column)
{
    const struct ast_expr *expr = column->expr;

    if (expr->kind == AST_COLLATE) {
        expr = expr->u.collate.operand;
    }
    return expr->kind == AST_COLUMN && expr->u.column.table == NULL
               ? expr->u.column.name
               : NULL;
}

/* Column constraints: PRIMARY KEY, UNIQUE, CHECK. */
static int define_column_keys(struct engine_table *table,
                              const struct ast_create_table *def,
                              bool *has_primary, char *errmsg,
                              size_t errmsg_size)
{
    for (size_t i = 0; i < def->column_count; i++) {
        const struct ast_column_def *column = &def->columns[i];
        const char *name = column->name;
        int rc;

        for (size_t c = 0; c < column->checks.count; c++) {
            if (has_parameter(column->checks.items[c])) {
                goto check_parameter;
            }
            table->checks[table->check_count++] = column->checks.items[c];
        }
        if (column->primary_key) {
            if (*has_primary) {
                goto two_primary_keys;
            }
            *has_primary = true;
            if (is_integer_type(column->type_name) &&
                !column->primary_key_descending) {
                table->rowid_alias = (ptrdiff_t)i;
                table->rowid_conflict = column->primary_key_conflict;
                table->columns[i].hidden_rowid_alias = true;
            } else {
                rc = add_key(table, &name, 1, true,
                             column->primary_key_conflict, errmsg, errmsg_size);
                if (rc != 0) {
                    return rc;
                }
            }
        }
        if (column->unique) {
            rc = add_key(table, &name, 1, false, column->unique_conflict,
                         errmsg, errmsg_size);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
two_primary_keys:
    snprintf(errmsg, errmsg_size, "table \"%s\" has more than one primary key",
             def->name);
    return ENGINE_ESQL;
check_parameter:
    snprintf(errmsg, errmsg_size, "parameters prohibited in CHECK constraints");
    return ENGINE_ESQL;
}

/* Whether a PRIMARY KEY or UNIQUE constraint gives a column a COLLATE
 * other than its own ("UNIQUE (a COLLATE NOCASE)"): SQLite's index then
 * compares with it, the key's hash with the column's, so the planner must
 * not look rows up through the key where SQLite would not. */
static bool constraint_collation_differs(const struct engine_table *table,
                                         const struct ast_table_constraint *c)
{
    for (size_t i = 0; i < c->column_count; i++) {
        const struct ast_expr *expr = c->columns[i].expr;
        const char *name = indexed_name(&c->columns[i]);
        enum engine_collation collation;

        if (expr->kind != AST_COLLATE) {
            continue;
        }
        if (engine__collation_by_name(expr->u.collate.name,
                                      strlen(expr->u.collate.name),
                                      &collation) != 0 ||
            collation != table->columns[engine__table_column_index(table, name)]
                             .collation) {
            return true;
        }
    }
    return false;
}

static int define_table_constraint(struct engine_table *table,
                                   const struct ast_table_constraint *c,
                                   bool *has_primary, char *errmsg,
                                   size_t errmsg_size)
{
    const char *names[ENGINE_MAX_COLUMNS];
    bool primary = c->kind == AST_CONSTRAINT_PRIMARY_KEY;
    int rc;

    if (c->kind == AST_CONSTRAINT_CHECK) {
        if (has_parameter(c->check)) {
            snprintf(errmsg, errmsg_size,
                     "parameters prohibited in CHECK constraints");
            return ENGINE_ESQL;
        }
        table->checks[table->check_count++] = c->check;
        return 0;
    }
    if (primary && *has_primary) {
        snprintf(errmsg, errmsg_size,
                 "table \"%s\" has more than one primary key", table->name);
        return ENGINE_ESQL;
    }
    *has_primary = *has_primary || primary;
    for (size_t i = 0; i < c->column_count; i++) {
        names[i] = indexed_name(&c->columns[i]);
        if (names[i] == NULL) {
            snprintf(errmsg, errmsg_size,
                     "expressions prohibited in PRIMARY KEY and UNIQUE "
                     "constraints");
            return ENGINE_ESQL;
        }
    }
    if (primary && c->column_count == 1) {
        ptrdiff_t column = engine__table_column_index(table, names[0]);

        if (column >= 0 && is_integer_type(table->columns[column].type_name)) {
            table->rowid_alias = column;
            table->columns[column].hidden_rowid_alias = true;
            return 0;
        }
    }
    rc = add_key(table, names, c->column_count, primary, c->conflict, errmsg,
                 errmsg_size);
    if (rc == 0) {
        table->keys[table->key_count - 1].collation_differs =
            constraint_collation_differs(table, c);
    }
    return rc;
}

static size_t count_checks(const struct ast_create_table *def)
{
    size_t count = def->constraint_count;

    for (size_t i = 0; i < def->column_count; i++) {
        count += def->columns[i].checks.count;
    }
    return count;
}

/* The next token at or after *offset that is not space or a comment;
 * *offset moves past it. */
static void next_word(const char *sql, size_t size, size_t *offset,
                      struct token *out)
{
    do {
        engine__token_scan(sql, size, *offset, out);
        *offset = out->offset + out->size;
    } while (out->kind == TOKEN_SPACE);
}

/* Where the object's name starts in a CREATE TABLE or CREATE INDEX
 * statement that parsed: after CREATE [TEMP|TEMPORARY|UNIQUE] TABLE|INDEX
 * [IF NOT EXISTS], taken in the grammar's order, so that a table named
 * "temp" is not skipped as TEMP, and with the space and comments between
 * them, whatever characters they use. */
static size_t name_offset(const char *sql, size_t size)
{
    struct token word;
    size_t offset = 0;

    next_word(sql, size, &offset, &word); /* CREATE */
    next_word(sql, size, &offset, &word);
    if (word.kind == TOKEN_TEMP || word.kind == TOKEN_TEMPORARY ||
        word.kind == TOKEN_UNIQUE) {
        next_word(sql, size, &offset, &word);
    }
    next_word(sql, size, &offset, &word); /* after TABLE or INDEX */
    if (word.kind == TOKEN_IF) {
        next_word(sql, size, &offset, &word); /* NOT */
        next_word(sql, size, &offset, &word); /* EXISTS */
        next_word(sql, size, &offset, &word);
    }
    return word.offset;
}

/* prefix followed by the statement from the object's name on, as SQLite
 * stores CREATE statements in sqlite_schema ("CREATE TABLE t(a)" for
 * "create table if not exists t(a);"; sqlite3EndTable() starts the text at
 * the name's token). The text must parse again: the main file's catalog
 * holds it. */
char *engine__schema_text(const char *prefix, const char *sql, size_t size)
{
    size_t prefix_size = strlen(prefix);
    size_t start = name_offset(sql, size);
    char *text;

    while (size > start && strchr(" \t\r\n;", sql[size - 1])) {
        size--;
    }
    text = common_malloc(prefix_size + size - start + 1);
    if (text != NULL) {
        memcpy(text, prefix, prefix_size);
        memcpy(text + prefix_size, sql + start, size - start);
        text[prefix_size + size - start] = '\0';
    }
    return text;
}

static int check_supported(const struct ast_create_table *def, char *errmsg,
                           size_t errmsg_size)
{
    const char *what = NULL;

    if (def->as_select != NULL) {
        what = "CREATE TABLE ... AS SELECT";
    } else if (def->without_rowid) {
        what = "WITHOUT ROWID";
    } else if (def->strict) {
        what = "STRICT";
    }
    if (what != NULL) {
        snprintf(errmsg, errmsg_size, "%s is not supported yet", what);
        return ENGINE_ESQL;
    }
    if (def->column_count > ENGINE_MAX_COLUMNS) {
        snprintf(errmsg, errmsg_size, "too many columns on %s", def->name);
        return ENGINE_ESQL;
    }
    return 0;
}

static int allocate_definition(struct engine_table *table,
                               const struct ast_create_table *def)
{
    size_t key_max = def->constraint_count + def->column_count * 2;

    table->name = copy_string(def->name);
    table->columns = common_calloc(def->column_count, sizeof(*table->columns));
    table->stores = common_calloc(def->column_count, sizeof(*table->stores));
    table->keys = common_calloc(key_max + 1, sizeof(*table->keys));
    table->checks =
        common_calloc(count_checks(def) + 1, sizeof(*table->checks));
    if (table->name == NULL || table->columns == NULL ||
        table->stores == NULL || table->keys == NULL || table->checks == NULL) {
        return COMMON_ENOMEM;
    }
    table->column_count = def->column_count;
    for (size_t i = 0; i < def->column_count; i++) {
        table->stores[i].kind = ENGINE_VECTOR_INT64;
    }
    return 0;
}

static int define(struct engine_table *table,
                  const struct ast_create_table *def, char *errmsg,
                  size_t errmsg_size)
{
    bool has_primary = false;
    int rc = check_supported(def, errmsg, errmsg_size);

    if (rc == 0) {
        rc = allocate_definition(table, def);
    }
    for (size_t i = 0; rc == 0 && i < def->column_count; i++) {
        rc = define_column(table, i, &def->columns[i], errmsg, errmsg_size);
    }
    if (rc == 0) {
        rc = define_column_keys(table, def, &has_primary, errmsg, errmsg_size);
    }
    for (size_t i = 0; rc == 0 && i < def->constraint_count; i++) {
        rc = define_table_constraint(table, &def->constraints[i], &has_primary,
                                     errmsg, errmsg_size);
    }
    return rc;
}

int engine__table_create(const char *sql, size_t sql_size,
                         struct engine_table **out, char *errmsg,
                         size_t errmsg_size)
{
    struct engine_table *table = common_calloc(1, sizeof(*table));
    struct ast_stmt *stmt = NULL;
    size_t tail;
    size_t error_offset;
    int rc;

    if (table == NULL) {
        return COMMON_ENOMEM;
    }
    engine__arena_init(&table->arena);
    table->rowid_alias = -1;
    table->in_rowid_order = true;
    table->rowids_ascending = true;
    rc = engine__parse(&table->arena, sql, sql_size, &stmt, &tail, errmsg,
                       errmsg_size, &error_offset);
    if (rc == 0) {
        ASSERT(stmt != NULL && stmt->kind == AST_STMT_CREATE_TABLE);
        rc = define(table, &stmt->u.create_table, errmsg, errmsg_size);
    }
    if (rc == 0) {
        table->sql = engine__schema_text("CREATE TABLE ", sql, tail);
        rc = table->sql == NULL ? COMMON_ENOMEM : 0;
    }
    if (rc != 0) {
        engine__table_destroy(table);
        return rc;
    }
    *out = table;
    return 0;
}

/* Frees the text and blob bytes of a slot's first count cells (buries
 * them while another statement may view them: graveyard.h). */
static void free_cells(struct engine_table *table, size_t slot, size_t count)
{
    for (size_t c = 0; c < count; c++) {
        struct engine_column_store *store = &table->stores[c];

        if (store->kind == ENGINE_VECTOR_VALUES && !store->nulls[slot] &&
            (store->data.values[slot].type == ENGINE_TEXT ||
             store->data.values[slot].type == ENGINE_BLOB)) {
            engine__graveyard_bury(table->graveyard,
                                   (void *)store->data.values[slot].u.s.bytes);
            store->data.values[slot].type = ENGINE_NULL;
        }
    }
}

static void free_store_bytes(struct engine_table *table, size_t slot)
{
    free_cells(table, slot, table->column_count);
}

void engine__table_destroy(struct engine_table *table)
{
    if (table == NULL) {
        return;
    }
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (!table->deleted[slot]) {
            free_store_bytes(table, slot);
        }
    }
    for (size_t c = 0; c < table->column_count && table->columns; c++) {
        common_free(table->columns[c].name);
        common_free(table->columns[c].type_name);
        common_free(table->stores[c].nulls);
        common_free(table->stores[c].data.i64);
    }
    for (size_t k = 0; k < table->key_count; k++) {
        common_free(table->keys[k].columns);
        common_free(table->keys[k].buckets);
        common_free(table->keys[k].index_name);
    }
    for (size_t i = 0; i < table->index_count; i++) {
        common_free(table->indexes[i].name);
        common_free(table->indexes[i].sql);
    }
    engine__table_indexes_free(table);
    common_free(table->indexes);
    common_free(table->keys);
    common_free(table->checks);
    common_free(table->stores);
    common_free(table->columns);
    common_free(table->rowids);
    common_free(table->deleted);
    common_free(table->scan_order);
    common_free(table->rowid_buckets);
    common_free(table->zones);
    common_free(table->block_live);
    common_free(table->name);
    common_free(table->sql);
    engine__arena_close(&table->arena);
    common_free(table);
}

struct engine_value engine__table_get(const struct engine_table *table,
                                      size_t slot, size_t column)
{
    const struct engine_column_store *store = &table->stores[column];

    ASSERT(slot < table->slot_count);
    if ((ptrdiff_t)column == table->rowid_alias) {
        return engine__value_int(table->rowids[slot]);
    }
    if (store->nulls[slot]) {
        return engine__value_null();
    }
    switch (store->kind) {
    case ENGINE_VECTOR_INT64:
        return engine__value_int(store->data.i64[slot]);
    case ENGINE_VECTOR_DOUBLE:
        return engine__value_real(store->data.f64[slot]);
    default:
        return store->data.values[slot];
    }
}

static size_t store_width(enum engine_vector_kind kind)
{
    return kind == ENGINE_VECTOR_VALUES ? sizeof(struct engine_value)
                                        : sizeof(int64_t);
}

static int grow_slots(struct engine_table *table)
{
    size_t capacity =
        table->slot_capacity == 0 ? SLOTS_INITIAL : table->slot_capacity * 2;
    int64_t *rowids = common_realloc_array(table->rowids, capacity, 8);
    uint8_t *deleted;

    if (rowids == NULL) {
        return COMMON_ENOMEM;
    }
    table->rowids = rowids;
    if (engine__table_zones_reserve(table, capacity) != 0) {
        return COMMON_ENOMEM;
    }
    deleted = common_realloc(table->deleted, capacity);
    if (deleted == NULL) {
        return COMMON_ENOMEM;
    }
    table->deleted = deleted;
    for (size_t c = 0; c < table->column_count; c++) {
        struct engine_column_store *store = &table->stores[c];
        uint8_t *nulls = common_realloc(store->nulls, capacity);
        void *data;

        if (nulls == NULL) {
            return COMMON_ENOMEM;
        }
        store->nulls = nulls;
        data = common_realloc_array(store->data.i64, capacity,
                                    store_width(store->kind));
        if (data == NULL) {
            return COMMON_ENOMEM;
        }
        store->data.i64 = data;
    }
    table->slot_capacity = capacity;
    return 0;
}

/* Turns a typed store into a VALUES store. */
static int store_make_values(struct engine_table *table, size_t column)
{
    struct engine_column_store *store = &table->stores[column];
    struct engine_value *values;

    values = common_malloc_array(table->slot_capacity, sizeof(*values));
    if (values == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        values[slot] = engine__value_null();
        if (!store->nulls[slot] && !table->deleted[slot]) {
            values[slot] = store->kind == ENGINE_VECTOR_INT64
                               ? engine__value_int(store->data.i64[slot])
                               : engine__value_real(store->data.f64[slot]);
        }
    }
    common_free(store->data.i64);
    store->data.values = values;
    store->kind = ENGINE_VECTOR_VALUES;
    return 0;
}

/* Puts v in a cell, leaving its null flag to store_set. */
static int store_put(struct engine_table *table, size_t slot, size_t column,
                     struct engine_value v)
{
    struct engine_column_store *store = &table->stores[column];
    bool empty = table->live_count == 0;
    int rc;

    if (empty && store->kind != ENGINE_VECTOR_VALUES) {
        /* An empty typed store takes the kind of its first value. */
        store->kind =
            v.type == ENGINE_FLOAT ? ENGINE_VECTOR_DOUBLE : ENGINE_VECTOR_INT64;
    }
    if (v.type == ENGINE_INTEGER && store->kind == ENGINE_VECTOR_INT64) {
        store->data.i64[slot] = v.u.i;
        return 0;
    }
    if (v.type == ENGINE_FLOAT && store->kind == ENGINE_VECTOR_DOUBLE) {
        store->data.f64[slot] = v.u.r;
        return 0;
    }
    if (v.type == ENGINE_NULL && store->kind != ENGINE_VECTOR_VALUES) {
        return 0;
    }
    if (store->kind != ENGINE_VECTOR_VALUES) {
        rc = store_make_values(table, column);
        if (rc != 0) {
            return rc;
        }
    }
    if (v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) {
        void *bytes = common_malloc(v.u.s.size + 1);

        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        if (v.u.s.size > 0) {
            memcpy(bytes, v.u.s.bytes, v.u.s.size);
        }
        v.u.s.bytes = bytes;
    }
    store->data.values[slot] = v;
    return 0;
}

/* The cell's null flag is set only once its value is in: a cell whose copy
 * failed keeps its old contents whole. */
static int store_set(struct engine_table *table, size_t slot, size_t column,
                     struct engine_value v)
{
    int rc;

    v.has_text = false; /* a record keeps the number only (OP_MakeRecord) */
    rc = store_put(table, slot, column, v);
    if (rc == 0) {
        table->stores[column].nulls[slot] = v.type == ENGINE_NULL;
    }
    return rc;
}

static void forget_scan_order(struct engine_table *table)
{
    common_free(table->scan_order);
    table->scan_order = NULL;
}

/* Writes a row into a slot that owns no bytes (a new or a deleted one).
 * When memory runs out partway, the cells already written are freed and
 * the rest were never touched: the slot owns no bytes again. */
static int write_row(struct engine_table *table, size_t slot,
                     const struct engine_value *values)
{
    for (size_t c = 0; c < table->column_count; c++) {
        struct engine_value v = values[c];
        int rc;

        if ((ptrdiff_t)c == table->rowid_alias) {
            v = engine__value_null();
        }
        rc = store_set(table, slot, c, v);
        if (rc != 0) {
            free_cells(table, slot, c);
            return rc;
        }
    }
    return 0;
}

/* The bytes a slot's VALUES cells own (NULL where none). */
static void *cell_bytes(const struct engine_table *table, size_t slot,
                        size_t column)
{
    const struct engine_column_store *store = &table->stores[column];
    const struct engine_value *v;

    if (store->kind != ENGINE_VECTOR_VALUES || store->nulls[slot]) {
        return NULL;
    }
    v = &store->data.values[slot];
    return v->type == ENGINE_TEXT || v->type == ENGINE_BLOB
               ? (void *)v->u.s.bytes
               : NULL;
}

/* write_row over a live slot whose old bytes values may still view. Every
 * new value is copied in before any old bytes are freed, since a new value
 * may view another column's old bytes ("UPDATE t SET c = b"). */
static int rewrite_row(struct engine_table *table, size_t slot,
                       const struct engine_value *values)
{
    void *old[ENGINE_MAX_COLUMNS + 1];
    size_t c, written = 0;
    int rc = 0;

    for (c = 0; rc == 0 && c < table->column_count; c++) {
        struct engine_value v = values[c];

        old[c] = cell_bytes(table, slot, c);
        if ((ptrdiff_t)c == table->rowid_alias) {
            v = engine__value_null();
        }
        rc = store_set(table, slot, c, v);
        written = rc == 0 ? c + 1 : written;
    }
    for (c = 0; c < written; c++) {
        engine__graveyard_bury(table->graveyard, old[c]);
    }
    return rc;
}

int engine__table_insert(struct engine_table *table, int64_t rowid,
                         const struct engine_value *values, size_t *slot_out)
{
    size_t slot = table->slot_count;
    int rc;

    if (slot == table->slot_capacity) {
        rc = grow_slots(table);
        if (rc != 0) {
            return rc;
        }
    }
    table->rowids[slot] = rowid;
    table->deleted[slot] = 0;
    rc = write_row(table, slot, values);
    if (rc != 0) {
        return rc;
    }
    table->slot_count++;
    table->live_count++;
    table->change_count++;
    engine__table_zone_add(table, slot);
    rc = engine__table_rowid_add(table, slot);
    /* Loading a file: its keys and indexes come after its rows
     * (dbfile_index.c). */
    if (rc == 0 && !table->bulk_loading) {
        rc = engine__table_keys_add(table, slot);
    }
    if (rc == 0 && !table->bulk_loading) {
        rc = engine__table_indexes_add(table, slot);
    }
    if (rc != 0) {
        engine__table_delete(table, slot);
        return rc;
    }
    if (slot > 0 && rowid < table->rowid_max) {
        table->in_rowid_order = false;
    }
    /* The next rowid is the largest + 1 even when every rowid is
     * negative (OP_NewRowid: -7 is followed by -6), so the first live row
     * sets the maximum outright. */
    if (rowid > table->rowid_max || table->live_count == 1) {
        table->rowid_max = rowid;
    }
    forget_scan_order(table);
    *slot_out = slot;
    return 0;
}

int engine__table_update(struct engine_table *table, size_t slot, int64_t rowid,
                         const struct engine_value *values)
{
    int rc;

    ASSERT(slot < table->slot_count);
    ASSERT(!table->deleted[slot]);
    table->change_count++;
    engine__table_indexes_remove(table, slot);
    engine__table_keys_remove(table, slot);
    engine__table_rowid_remove(table, slot);
    if (table->rowids[slot] == table->rowid_max && rowid != table->rowid_max) {
        table->rowid_max_stale = true;
    }
    table->rowids[slot] = rowid;
    /* values may view this very row's bytes: copy the new row in first,
     * then free the old bytes. The zones count what the slot holds after,
     * even a row half rewritten when memory ran out. */
    engine__table_zone_remove(table, slot);
    rc = rewrite_row(table, slot, values);
    engine__table_zone_add(table, slot);
    if (rc == 0) {
        rc = engine__table_rowid_add(table, slot);
    }
    if (rc == 0) {
        rc = engine__table_keys_add(table, slot);
    }
    if (rc == 0) {
        rc = engine__table_indexes_add(table, slot);
    }
    if (rowid > table->rowid_max) {
        table->rowid_max = rowid;
    }
    table->in_rowid_order = false;
    forget_scan_order(table);
    return rc;
}

int engine__table_restore(struct engine_table *table, size_t slot,
                          int64_t rowid, const struct engine_value *values)
{
    int rc;

    ASSERT(slot < table->slot_count);
    ASSERT(table->deleted[slot]);
    table->change_count++;
    table->rowids[slot] = rowid;
    rc = write_row(table, slot, values);
    if (rc != 0) {
        return rc;
    }
    table->deleted[slot] = 0;
    table->live_count++;
    engine__table_zone_add(table, slot);
    if (rowid > table->rowid_max || table->live_count == 1) {
        table->rowid_max = rowid;
    }
    rc = engine__table_rowid_add(table, slot);
    if (rc == 0) {
        rc = engine__table_keys_add(table, slot);
    }
    if (rc == 0) {
        rc = engine__table_indexes_add(table, slot);
    }
    table->in_rowid_order = false;
    forget_scan_order(table);
    return rc;
}

int64_t engine__table_next_rowid(struct engine_table *table)
{
    if (table->rowid_max_stale) {
        table->rowid_max = INT64_MIN;
        for (size_t slot = 0; slot < table->slot_count; slot++) {
            if (!table->deleted[slot] &&
                table->rowids[slot] > table->rowid_max) {
                table->rowid_max = table->rowids[slot];
            }
        }
        table->rowid_max_stale = false;
    }
    if (table->live_count == 0) {
        return 1;
    }
    return table->rowid_max == INT64_MAX ? INT64_MIN : table->rowid_max + 1;
}

void engine__table_delete(struct engine_table *table, size_t slot)
{
    ASSERT(slot < table->slot_count);
    ASSERT(!table->deleted[slot]);
    if (table->rowids[slot] == table->rowid_max) {
        table->rowid_max_stale = true;
    }
    table->change_count++;
    engine__table_indexes_remove(table, slot);
    engine__table_keys_remove(table, slot);
    engine__table_rowid_remove(table, slot);
    engine__table_zone_remove(table, slot);
    free_store_bytes(table, slot);
    table->deleted[slot] = 1;
    table->live_count--;
    forget_scan_order(table);
}

static int compare_slots_by_rowid(const void *a, const void *b, void *table)
{
    const int64_t *rowids = ((const struct engine_table *)table)->rowids;
    int64_t x = rowids[*(const uint32_t *)a];
    int64_t y = rowids[*(const uint32_t *)b];

    return (x > y) - (x < y);
}

void engine__table_sort_slots(const struct engine_table *table, uint32_t *slots,
                              size_t count)
{
    /* qsort_r: handles in several threads sort at once. Rowids are
     * unique, so an unstable sort is still deterministic. */
    qsort_r(slots, count, sizeof(uint32_t), compare_slots_by_rowid,
            (void *)table);
}

static int build_scan_order(struct engine_table *table)
{
    size_t n = 0;

    table->scan_order =
        common_malloc_array(table->live_count + 1, sizeof(uint32_t));
    if (table->scan_order == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (!table->deleted[slot]) {
            table->scan_order[n++] = (uint32_t)slot;
        }
    }
    engine__table_sort_slots(table, table->scan_order, n);
    return 0;
}

uint32_t engine__table_scan(struct engine_table *table, size_t *cursor,
                            uint32_t *out, uint32_t max, bool reverse)
{
    uint32_t n = 0;

    if (table->in_rowid_order) {
        while (*cursor < table->slot_count && n < max) {
            size_t slot = reverse ? table->slot_count - 1 - *cursor : *cursor;

            if (!table->deleted[slot]) {
                out[n++] = (uint32_t)slot;
            }
            (*cursor)++;
        }
        return n;
    }
    if (table->scan_order == NULL && build_scan_order(table) != 0) {
        return UINT32_MAX;
    }
    while (*cursor < table->live_count && n < max) {
        size_t at = reverse ? table->live_count - 1 - *cursor : *cursor;

        out[n++] = table->scan_order[at];
        (*cursor)++;
    }
    return n;
}

/* The first slot from which a forward scan meets only rows whose rowid
 * is > rowid (>= when inclusive): a binary search over the live slots,
 * which are in rowid order, stepping over deleted ones, whose rowids may
 * be anything (a row deleted, the largest rowid is given again). */
static size_t slots_bound(const struct engine_table *table, int64_t rowid,
                          bool inclusive)
{
    size_t low = 0, high = table->slot_count;

    while (low < high) {
        size_t mid = low + (high - low) / 2;
        size_t live = mid;
        int64_t r;

        while (live < high && table->deleted[live]) {
            live++;
        }
        if (live == high) {
            high = mid;
            continue;
        }
        r = table->rowids[live];
        if (r > rowid || (inclusive && r == rowid)) {
            high = mid;
        } else {
            low = live + 1;
        }
    }
    return low;
}

/* The same over scan_order, the live slots sorted by rowid. */
static size_t order_bound(const struct engine_table *table, int64_t rowid,
                          bool inclusive)
{
    size_t low = 0, high = table->live_count;

    while (low < high) {
        size_t mid = low + (high - low) / 2;
        int64_t r = table->rowids[table->scan_order[mid]];

        if (r > rowid || (inclusive && r == rowid)) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    return low;
}

/* The scan position from which a forward scan yields the rows >= rowid
 * (> rowid when !inclusive); a reverse one, those < rowid (<= rowid when
 * !inclusive), counted from the end. */
static size_t scan_bound(struct engine_table *table, int64_t rowid,
                         bool reverse, bool inclusive)
{
    size_t end, first;

    if (table->in_rowid_order) {
        end = table->slot_count;
        first = slots_bound(table, rowid, inclusive);
    } else {
        if (table->scan_order == NULL && build_scan_order(table) != 0) {
            return SIZE_MAX;
        }
        end = table->live_count;
        first = order_bound(table, rowid, inclusive);
    }
    return reverse ? end - first : first;
}

size_t engine__table_scan_seek(struct engine_table *table, int64_t rowid,
                               bool reverse)
{
    /* reverse: past the last row <= rowid, counted from the end */
    return scan_bound(table, rowid, reverse, !reverse);
}

size_t engine__table_scan_resume(struct engine_table *table, int64_t rowid,
                                 bool reverse)
{
    return scan_bound(table, rowid, reverse, reverse);
}

static int fill_column(const struct engine_table *table, const uint32_t *slots,
                       uint32_t count, size_t column,
                       struct engine_vector *vector)
{
    const struct engine_column_store *store = &table->stores[column];
    bool typed = store->kind != ENGINE_VECTOR_VALUES &&
                 (ptrdiff_t)column != table->rowid_alias;

    if (!typed && vector->kind != ENGINE_VECTOR_VALUES) {
        int rc = engine__vector_make_values(vector, 0);

        if (rc != 0) {
            return rc;
        }
    }
    if (typed) {
        vector->kind = store->kind;
        for (uint32_t i = 0; i < count; i++) {
            vector->nulls[i] = store->nulls[slots[i]];
            vector->data.i64[i] = store->data.i64[slots[i]];
        }
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        struct engine_value v = engine__table_get(table, slots[i], column);

        vector->nulls[i] = v.type == ENGINE_NULL;
        vector->data.values[i] = v;
    }
    return 0;
}

int engine__table_fill(const struct engine_table *table, const uint32_t *slots,
                       uint32_t count, const size_t *columns,
                       struct engine_batch *batch)
{
    for (size_t c = 0; c < batch->column_count; c++) {
        struct engine_vector *vector = &batch->columns[c];
        int rc;

        if (columns[c] == SIZE_MAX) {
            vector->kind = ENGINE_VECTOR_INT64;
            for (uint32_t i = 0; i < count; i++) {
                vector->nulls[i] = 0;
                vector->data.i64[i] = table->rowids[slots[i]];
            }
            continue;
        }
        rc = fill_column(table, slots, count, columns[c], vector);
        if (rc != 0) {
            return rc;
        }
    }
    batch->count = count;
    batch->selection = NULL;
    batch->selected = count;
    return 0;
}

/* Whether the live rows of table already hold two equal keys in key. */
static bool key_has_duplicates(struct engine_table *table, size_t key_index)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    const struct engine_unique_key *key = &table->keys[key_index];

    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (table->deleted[slot]) {
            continue;
        }
        for (size_t k = 0; k < key->column_count; k++) {
            values[k] = engine__table_get(table, slot, key->columns[k]);
        }
        if (engine__table_find_key(table, key_index, values, (ptrdiff_t)slot) >=
            0) {
            return true;
        }
    }
    return false;
}

/* The entry indexes[index_count] ready to fill: a new one, or a dropped
 * index's (whose lookup the sweep frees). */
static struct engine_index_def *next_index_entry(struct engine_table *table)
{
    struct engine_index_def *indexes;

    engine__table_indexes_sweep(table);
    if (table->index_count == table->index_slots) {
        indexes = common_realloc_array(table->indexes, table->index_slots + 1,
                                       sizeof(*indexes));
        if (indexes == NULL) {
            return NULL;
        }
        table->indexes = indexes;
        table->indexes[table->index_slots++].lookup = NULL;
    }
    return &table->indexes[table->index_count];
}

/* Builds the lookup of the non-unique index just added. Out of memory,
 * the index is taken back off the table. */
static int add_lookup(struct engine_table *table, const size_t *columns,
                      const enum engine_collation *collations,
                      size_t column_count)
{
    struct engine_index_def *index = &table->indexes[table->index_count - 1];
    int rc = engine__table_index_build(table, table->index_count - 1, columns,
                                       collations, column_count);

    if (rc != 0) {
        common_free(index->name);
        common_free(index->sql);
        table->index_count--;
    }
    return rc;
}

/* Whether a UNIQUE index declares a COLLATE other than a column's own: its
 * hash compares with the columns' collations, SQLite's index with the
 * declared ones, so SQLite would not use it where the hash could. */
static bool collation_differs(const struct engine_table *table,
                              const size_t *columns,
                              const enum engine_collation *collations,
                              size_t column_count)
{
    for (size_t i = 0; i < column_count; i++) {
        if (collations[i] != table->columns[columns[i]].collation) {
            return true;
        }
    }
    return false;
}

static int add_unique_key(struct engine_table *table, const char *name,
                          const size_t *columns, size_t column_count)
{
    struct engine_unique_key *keys =
        common_realloc_array(table->keys, table->key_count + 1, sizeof(*keys));
    struct engine_unique_key *key;

    if (keys == NULL) {
        return COMMON_ENOMEM;
    }
    table->keys = keys;
    key = &keys[table->key_count];
    memset(key, 0, sizeof(*key));
    key->columns = common_malloc_array(column_count + 1, sizeof(size_t));
    key->index_name = copy_string(name);
    if (key->columns == NULL || key->index_name == NULL) {
        common_free(key->columns);
        common_free(key->index_name);
        return COMMON_ENOMEM;
    }
    memcpy(key->columns, columns, column_count * sizeof(size_t));
    key->column_count = column_count;
    table->key_count++;
    if (engine__table_key_rebuild(table, table->key_count - 1) != 0) {
        return COMMON_ENOMEM;
    }
    return key_has_duplicates(table, table->key_count - 1) ? ENGINE_ECONSTRAINT
                                                           : 0;
}

int engine__table_add_index(struct engine_table *table, const char *name,
                            const char *sql, size_t sql_size, bool unique,
                            const size_t *columns, size_t column_count)
{
    enum engine_collation collations[ENGINE_MAX_COLUMNS];
    bool partial = false;
    /* What the text declares beyond the columns: an index it does not
     * describe (it does not parse) serves no lookup. */
    int declared = engine__table_index_declared(
        table, sql, sql_size, columns, column_count, collations, &partial);
    struct engine_index_def *index;
    int rc;

    if (declared == COMMON_ENOMEM ||
        (index = next_index_entry(table)) == NULL) {
        return COMMON_ENOMEM;
    }
    index->name = copy_string(name);
    index->sql = engine__schema_text(
        unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ", sql, sql_size);
    index->unique = unique;
    if (index->name == NULL || index->sql == NULL) {
        common_free(index->name);
        common_free(index->sql);
        return COMMON_ENOMEM;
    }
    table->index_count++;
    if (!unique) {
        /* A partial index holds only some rows: no lookup may use it. */
        return declared == 0 && !partial
                   ? add_lookup(table, columns, collations, column_count)
                   : 0;
    }
    rc = add_unique_key(table, name, columns, column_count);
    if (rc != COMMON_ENOMEM) {
        table->keys[table->key_count - 1].collation_differs =
            declared != 0 ||
            collation_differs(table, columns, collations, column_count);
    }
    return rc;
}
