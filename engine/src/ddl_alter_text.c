/* SPDX-License-Identifier: MIT
 *
 * ddl_alter_text.c: the schema text ALTER TABLE leaves in sqlite_schema,
 * edited as SQLite 3.40's alter.c edits it, so the text is the same:
 *
 *   - RENAME COLUMN and RENAME TO replace the tokens that name the column
 *     (its definition, CHECKs, key lists, index columns and WHERE) or the
 *     table (its CREATE TABLE name, an index's ON, "t.a" qualifiers) and
 *     nothing else, so spacing and comments stay (renameEditSql). The new
 *     name goes in bare when it was written bare and the token it replaces
 *     starts with an identifier character; otherwise quoted "like ""this""".
 *     RENAME TO always quotes (renameTableFunc).
 *   - ADD COLUMN inserts ", <definition as written>" where the column list
 *     ends: before the comma that starts the table constraints, or the
 *     closing parenthesis (sqlite3AlterFinishAddColumn and addColOffset).
 *   - DROP COLUMN cuts from the column's name to the next column's name;
 *     for the last column, from the comma before it to where the column
 *     list ends (sqlite_drop_column's dropColumnFunc).
 *
 * Which tokens name the column is read from the parse tree: every node
 * records where it starts in the text.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddl_alter.h"
#include "engine_int.h"
#include "plan.h"
#include "tokenize.h"

struct site {
    size_t offset;
    size_t size;
};

/* What a search of a statement's tree collects. */
struct search {
    const char *sql;
    size_t size;
    const char *table;
    const char *column; /* NULL: the table's name */
    struct site *sites;
    size_t count;
    size_t capacity;
    bool failed; /* out of memory */
};

/* engine__ast_any() hands its argument on as const: the search it
 * updates hangs off it. */
struct search_arg {
    struct search *search;
};

/* The first token at or after offset that is not space. */
static void token_at(const char *sql, size_t size, size_t offset,
                     struct token *out)
{
    engine__token_scan(sql, size, offset, out);
    while (out->kind == TOKEN_SPACE) {
        engine__token_scan(sql, size, out->offset + out->size, out);
    }
}

static void site_add(struct search *s, size_t offset)
{
    struct token tok;

    token_at(s->sql, s->size, offset, &tok);
    for (size_t i = 0; i < s->count; i++) {
        if (s->sites[i].offset == tok.offset) {
            return;
        }
    }
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? s->capacity * 2 : 8;
        struct site *sites =
            common_realloc_array(s->sites, capacity, sizeof(*sites));

        if (sites == NULL) {
            s->failed = true;
            return;
        }
        s->sites = sites;
        s->capacity = capacity;
    }
    s->sites[s->count].offset = tok.offset;
    s->sites[s->count].size = tok.size;
    s->count++;
}

/* A column reference of the search's table: its qualifier when renaming
 * the table, its name when renaming the column. */
static bool visit(const struct ast_expr *ast, const void *arg)
{
    const struct search_arg *a = arg;
    struct search *s = a->search;
    const char *qualifier;
    struct token tok;

    if (ast->kind != AST_COLUMN) {
        return false;
    }
    qualifier = ast->u.column.table;
    if (qualifier != NULL && strcasecmp(qualifier, s->table) != 0) {
        return false;
    }
    if (s->column == NULL) {
        if (qualifier != NULL) {
            site_add(s, ast->position);
        }
        return false;
    }
    if (strcasecmp(ast->u.column.name, s->column) != 0) {
        return false;
    }
    if (qualifier == NULL) {
        site_add(s, ast->position);
        return false;
    }
    token_at(s->sql, s->size, ast->position, &tok);         /* the qualifier */
    token_at(s->sql, s->size, tok.offset + tok.size, &tok); /* . */
    site_add(s, tok.offset + tok.size);
    return false;
}

static void search_expr(struct search *s, const struct ast_expr *ast)
{
    struct search_arg arg = {.search = s};

    engine__ast_any(ast, visit, &arg);
}

static void search_list(struct search *s, const struct ast_expr_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        search_expr(s, list->items[i]);
    }
}

/* The table constraints: key columns and CHECKs. */
static void search_constraints(struct search *s,
                               const struct ast_create_table *def)
{
    for (size_t i = 0; i < def->constraint_count; i++) {
        const struct ast_table_constraint *c = &def->constraints[i];

        search_expr(s, c->check);
        for (size_t k = 0; k < c->column_count; k++) {
            search_expr(s, c->columns[k].expr);
        }
    }
}

static void search_index(struct search *s, const struct ast_create_index *def)
{
    struct token tok;

    for (size_t k = 0; k < def->column_count; k++) {
        search_expr(s, def->columns[k].expr);
    }
    search_expr(s, def->where);
    if (s->column != NULL) {
        return;
    }
    /* CREATE [UNIQUE] INDEX name ON table: the table's token. */
    token_at(s->sql, s->size, 0, &tok);
    while (tok.kind != TOKEN_ON && tok.kind != TOKEN_EOF) {
        token_at(s->sql, s->size, tok.offset + tok.size, &tok);
    }
    if (tok.kind == TOKEN_ON) {
        site_add(s, tok.offset + tok.size);
    }
}

static void search_table(struct search *s, const struct ast_create_table *def)
{
    struct token tok;

    for (size_t i = 0; i < def->column_count; i++) {
        const struct ast_column_def *c = &def->columns[i];

        if (s->column != NULL && strcasecmp(c->name, s->column) == 0) {
            site_add(s, c->position);
        }
        search_list(s, &c->checks);
    }
    search_constraints(s, def);
    if (s->column == NULL) {
        /* CREATE TABLE name: the stored text always starts so. */
        token_at(s->sql, s->size, 0, &tok);
        token_at(s->sql, s->size, tok.offset + tok.size, &tok);
        site_add(s, tok.offset + tok.size);
    }
}

static int parse(struct engine_arena *arena, const char *sql,
                 struct ast_stmt **out)
{
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t tail, error_offset;
    int rc = engine__parse(arena, sql, strlen(sql), out, &tail, errmsg,
                           sizeof(errmsg), &error_offset);

    if (rc == 0 && (*out == NULL || (*out)->kind == AST_STMT_SELECT)) {
        rc = ENGINE_ECORRUPT;
    }
    return rc == 0 || rc == COMMON_ENOMEM ? rc : ENGINE_ECORRUPT;
}

static int compare_sites(const void *a, const void *b)
{
    const struct site *x = a, *y = b;

    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* sqlite3IsIdChar: letters, digits, '_', '$' and bytes of UTF-8. */
static bool is_id_char(char c)
{
    unsigned char u = (unsigned char)c;

    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
           (u >= '0' && u <= '9') || u == '_' || u == '$' || u >= 0x80;
}

static int append_quoted(struct common_buf *out, const char *name)
{
    int rc = common_buf_append_byte(out, '"');

    for (const char *c = name; rc == 0 && *c != '\0'; c++) {
        rc = common_buf_append_byte(out, (uint8_t)*c);
        if (rc == 0 && *c == '"') {
            rc = common_buf_append_byte(out, '"');
        }
    }
    return rc ? rc : common_buf_append_byte(out, '"');
}

/* sql with each site replaced by new_name, as renameEditSql does. */
static int edit(const struct search *s, const char *new_name, bool quoted,
                char **out)
{
    struct common_buf buf;
    size_t at = 0;
    int rc = 0;

    common_buf_init(&buf, SIZE_MAX);
    for (size_t i = 0; rc == 0 && i < s->count; i++) {
        const struct site *site = &s->sites[i];

        rc = common_buf_append(&buf, s->sql + at, site->offset - at);
        if (rc == 0 && !quoted && is_id_char(s->sql[site->offset])) {
            rc = common_buf_append(&buf, new_name, strlen(new_name));
        } else if (rc == 0) {
            rc = append_quoted(&buf, new_name);
            /* "x""y": a quote right after the token stays apart. */
            if (rc == 0 && s->sql[site->offset + site->size] == '"') {
                rc = common_buf_append_byte(&buf, ' ');
            }
        }
        at = site->offset + site->size;
    }
    rc = rc ? rc : common_buf_append(&buf, s->sql + at, s->size - at);
    rc = rc ? rc : common_buf_append_byte(&buf, 0);
    if (rc == 0) {
        *out = common_malloc(buf.size);
        rc = *out == NULL ? COMMON_ENOMEM : 0;
    }
    if (rc == 0) {
        memcpy(*out, buf.data, buf.size);
    }
    common_buf_close(&buf);
    return rc;
}

int engine__alter_rename_text(const char *sql, const char *table,
                              const char *column, const char *new_name,
                              bool quoted, char **out)
{
    struct search s = {
        .sql = sql, .size = strlen(sql), .table = table, .column = column};
    struct engine_arena arena;
    struct ast_stmt *ast;
    int rc;

    engine__arena_init(&arena);
    rc = parse(&arena, sql, &ast);
    if (rc == 0 && ast->kind == AST_STMT_CREATE_TABLE) {
        search_table(&s, &ast->u.create_table);
    } else if (rc == 0 && ast->kind == AST_STMT_CREATE_INDEX) {
        search_index(&s, &ast->u.create_index);
    }
    rc = rc == 0 && s.failed ? COMMON_ENOMEM : rc;
    /* qsort() may not be given NULL, even for no sites (C11 7.22.5). */
    if (rc == 0 && s.count > 0) {
        qsort(s.sites, s.count, sizeof(*s.sites), compare_sites);
    }
    if (rc == 0) {
        rc = edit(&s, new_name, quoted || column == NULL, out);
    }
    common_free(s.sites);
    engine__arena_close(&arena);
    return rc;
}

int engine__alter_refers(const char *sql, const char *table, const char *column,
                         bool *out)
{
    struct search s = {
        .sql = sql, .size = strlen(sql), .table = table, .column = column};
    struct engine_arena arena;
    struct ast_stmt *ast;
    int rc;

    engine__arena_init(&arena);
    rc = parse(&arena, sql, &ast);
    if (rc == 0 && ast->kind == AST_STMT_CREATE_TABLE) {
        const struct ast_create_table *def = &ast->u.create_table;

        for (size_t i = 0; i < def->column_count; i++) {
            if (strcasecmp(def->columns[i].name, column) != 0) {
                search_list(&s, &def->columns[i].checks);
            }
        }
        search_constraints(&s, def);
    } else if (rc == 0 && ast->kind == AST_STMT_CREATE_INDEX) {
        search_index(&s, &ast->u.create_index);
    }
    rc = rc == 0 && s.failed ? COMMON_ENOMEM : rc;
    *out = s.count > 0;
    common_free(s.sites);
    engine__arena_close(&arena);
    return rc;
}

static bool is_constraint_start(enum token_kind kind)
{
    return kind == TOKEN_CONSTRAINT || kind == TOKEN_PRIMARY ||
           kind == TOKEN_UNIQUE || kind == TOKEN_CHECK || kind == TOKEN_FOREIGN;
}

/* SQLite's addColOffset: the comma before the table constraints, or the
 * parenthesis closing the column list. */
static size_t columns_end(const char *sql, size_t size)
{
    struct token tok, next;
    int depth = 0;

    token_at(sql, size, 0, &tok);
    while (tok.kind != TOKEN_EOF) {
        if (tok.kind == TOKEN_LP) {
            depth++;
        } else if (tok.kind == TOKEN_RP && --depth == 0) {
            return tok.offset;
        } else if (tok.kind == TOKEN_COMMA && depth == 1) {
            token_at(sql, size, tok.offset + tok.size, &next);
            if (is_constraint_start(next.kind)) {
                return tok.offset;
            }
        }
        token_at(sql, size, tok.offset + tok.size, &tok);
    }
    return size;
}

static int splice(const char *sql, size_t from, size_t to, const char *insert,
                  size_t insert_size, char **out)
{
    size_t size = strlen(sql);
    char *text = common_malloc(size - (to - from) + insert_size + 1);

    if (text == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(text, sql, from);
    memcpy(text + from, insert, insert_size);
    memcpy(text + from + insert_size, sql + to, size - to);
    text[size - (to - from) + insert_size] = '\0';
    *out = text;
    return 0;
}

int engine__alter_add_text(const char *sql, const char *def, size_t size,
                           char **out)
{
    size_t at = columns_end(sql, strlen(sql));
    char *insert = common_malloc(size + 2);
    int rc;

    if (insert == NULL) {
        return COMMON_ENOMEM;
    }
    insert[0] = ',';
    insert[1] = ' ';
    memcpy(insert + 2, def, size);
    rc = splice(sql, at, at, insert, size + 2, out);
    common_free(insert);
    return rc;
}

int engine__alter_drop_text(const char *sql, size_t column, char **out)
{
    struct engine_arena arena;
    struct ast_stmt *ast;
    const struct ast_create_table *def;
    size_t from, to;
    int rc;

    engine__arena_init(&arena);
    rc = parse(&arena, sql, &ast);
    if (rc == 0 && (ast->kind != AST_STMT_CREATE_TABLE ||
                    ast->u.create_table.column_count <= column)) {
        rc = ENGINE_ECORRUPT;
    }
    if (rc == 0) {
        def = &ast->u.create_table;
        from = def->columns[column].position;
        if (column + 1 < def->column_count) {
            to = def->columns[column + 1].position;
        } else {
            to = columns_end(sql, strlen(sql));
            while (from > 0 && sql[from] != ',') {
                from--;
            }
        }
        rc = splice(sql, from, to, "", 0, out);
    }
    engine__arena_close(&arena);
    return rc;
}

bool engine__alter_mentions(const char *sql, const char *name)
{
    struct engine_arena arena;
    struct token tok;
    size_t size = strlen(sql);
    bool found = false;

    engine__arena_init(&arena);
    token_at(sql, size, 0, &tok);
    while (!found && tok.kind != TOKEN_EOF) {
        if (tok.kind == TOKEN_ID || tok.kind == TOKEN_STRING ||
            engine__token_is_keyword(tok.kind)) {
            const char *word =
                engine__token_unquote(&arena, sql + tok.offset, tok.size, NULL);

            /* Out of memory counts as found: the caller refuses. */
            found = word == NULL || strcasecmp(word, name) == 0;
        }
        token_at(sql, size, tok.offset + tok.size, &tok);
    }
    engine__arena_close(&arena);
    return found;
}
