/* SPDX-License-Identifier: MIT
 *
 * parse.c: engine__parse() (ast.h), the statement dispatch, transaction
 * statements, and the helpers every parser file shares (parse_int.h):
 * token access, SQLite's error messages, arena lists and node texts.
 *
 * SQLite's tokenizer loop (sqlite3RunParser) skips space, stops at the
 * first illegal token with "unrecognized token", and at the end of the
 * input feeds ';' so that a statement cut short reports "incomplete
 * input"; statements before the first are empty ones (";;"). The grammar
 * followed here is src/parse.y of SQLite 3.40 ("cmd ::= BEGIN transtype
 * trans_opt", "cmd ::= COMMIT|END trans_opt", "cmd ::= ROLLBACK trans_opt",
 * "cmd ::= ROLLBACK trans_opt TO savepoint_opt nm", "cmd ::= SAVEPOINT nm",
 * "cmd ::= RELEASE savepoint_opt nm").
 */
#include "parse_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

/* ---- tokens ---- */

static void token_read(const struct parser *p, size_t offset, struct token *out)
{
    engine__token_scan(p->sql, p->size, offset, out);
    while (out->kind == TOKEN_SPACE) {
        engine__token_scan(p->sql, p->size, out->offset + out->size, out);
    }
}

void engine__parse_advance(struct parser *p)
{
    /* Illegal tokens and the end stay put: every rule rejects them. */
    if (p->tok.kind == TOKEN_EOF || p->tok.kind == TOKEN_ILLEGAL) {
        return;
    }
    p->prev_end = p->tok.offset + p->tok.size;
    token_read(p, p->prev_end, &p->tok);
}

bool engine__parse_is(const struct parser *p, enum token_kind kind)
{
    return p->tok.kind == kind;
}

bool engine__parse_accept(struct parser *p, enum token_kind kind)
{
    if (p->tok.kind != kind) {
        return false;
    }
    engine__parse_advance(p);
    return true;
}

int engine__parse_expect(struct parser *p, enum token_kind kind)
{
    if (!engine__parse_accept(p, kind)) {
        return engine__parse_syntax_error(p);
    }
    return 0;
}

enum token_kind engine__parse_peek(const struct parser *p, int n)
{
    struct token t = p->tok;

    for (int i = 0; i < n; i++) {
        if (t.kind == TOKEN_EOF || t.kind == TOKEN_ILLEGAL) {
            return t.kind;
        }
        token_read(p, t.offset + t.size, &t);
    }
    return t.kind;
}

bool engine__parse_is_join_keyword(enum token_kind kind)
{
    return kind == TOKEN_CROSS || kind == TOKEN_FULL || kind == TOKEN_INNER ||
           kind == TOKEN_LEFT || kind == TOKEN_NATURAL || kind == TOKEN_OUTER ||
           kind == TOKEN_RIGHT;
}

bool engine__parse_is_id(const struct parser *p)
{
    return p->tok.kind == TOKEN_ID || p->tok.kind == TOKEN_INDEXED ||
           engine__token_is_fallback_id(p->tok.kind);
}

bool engine__parse_is_ids(const struct parser *p)
{
    return p->tok.kind == TOKEN_ID || p->tok.kind == TOKEN_STRING ||
           engine__token_is_fallback_id(p->tok.kind);
}

bool engine__parse_is_nm(const struct parser *p)
{
    return engine__parse_is_id(p) || p->tok.kind == TOKEN_STRING ||
           engine__parse_is_join_keyword(p->tok.kind);
}

int engine__parse_nm(struct parser *p, const char **out)
{
    const char *name;

    if (!engine__parse_is_nm(p)) {
        return engine__parse_syntax_error(p);
    }
    name = engine__token_unquote(p->arena, p->sql + p->tok.offset, p->tok.size,
                                 NULL);
    if (name == NULL) {
        return COMMON_ENOMEM;
    }
    engine__parse_advance(p);
    *out = name;
    return 0;
}

/* ---- errors ---- */

static void error_vset(struct parser *p, size_t offset, const char *format,
                       va_list args) __attribute__((format(printf, 3, 0)));

static void error_vset(struct parser *p, size_t offset, const char *format,
                       va_list args)
{
    if (p->errmsg != NULL && p->errmsg_size > 0) {
        vsnprintf(p->errmsg, p->errmsg_size, format, args);
    }
    p->error_offset = offset;
}

int engine__parse_error(struct parser *p, size_t offset, const char *format,
                        ...)
{
    va_list args;

    va_start(args, format);
    error_vset(p, offset, format, args);
    va_end(args);
    return ENGINE_ESQL;
}

int engine__parse_syntax_error(struct parser *p)
{
    const struct token *t = &p->tok;
    int size = t->size > 1000 ? 1000 : (int)t->size;

    if (t->kind == TOKEN_EOF) {
        return engine__parse_error(p, t->offset, "incomplete input");
    }
    if (t->kind == TOKEN_ILLEGAL) {
        return engine__parse_error(p, t->offset, "unrecognized token: \"%.*s\"",
                                   size, p->sql + t->offset);
    }
    return engine__parse_error(p, t->offset, "near \"%.*s\": syntax error",
                               size, p->sql + t->offset);
}

int engine__parse_unsupported(struct parser *p, const char *feature)
{
    if (p->tok.kind == TOKEN_ILLEGAL) {
        return engine__parse_syntax_error(p);
    }
    return engine__parse_error(p, p->tok.offset, "%s is not supported yet",
                               feature);
}

void engine__parse_defer_error(struct parser *p, size_t offset,
                               const char *format, ...)
{
    va_list args;

    if (p->deferred[0] != '\0') {
        return;
    }
    va_start(args, format);
    vsnprintf(p->deferred, sizeof(p->deferred), format, args);
    va_end(args);
    p->deferred_offset = offset;
}

int engine__parse_enter(struct parser *p)
{
    if (p->depth >= ENGINE_MAX_EXPR_DEPTH) {
        return engine__parse_error(
            p, p->tok.offset, "Expression tree is too large (maximum depth %d)",
            ENGINE_MAX_EXPR_DEPTH);
    }
    p->depth++;
    return 0;
}

void engine__parse_leave(struct parser *p)
{
    ASSERT(p->depth > 0);
    p->depth--;
}

/* ---- memory ---- */

void *engine__parse_alloc(struct parser *p, size_t size)
{
    void *block = engine__arena_alloc(p->arena, size);

    if (block != NULL) {
        memset(block, 0, size);
    }
    return block;
}

int engine__parse_list_push(struct parser *p, struct parse_list *list,
                            const void *item, size_t item_size)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity == 0 ? 4 : list->capacity * 2;
        void *items;

        if (capacity > SIZE_MAX / item_size) {
            return COMMON_ENOMEM;
        }
        items = engine__arena_alloc(p->arena, capacity * item_size);
        if (items == NULL) {
            return COMMON_ENOMEM;
        }
        if (list->count > 0) {
            memcpy(items, list->items, list->count * item_size);
        }
        list->items = items;
        list->capacity = capacity;
    }
    memcpy((char *)list->items + list->count * item_size, item, item_size);
    list->count++;
    return 0;
}

const char *engine__parse_text(struct parser *p, size_t start)
{
    ASSERT(start <= p->prev_end);
    return engine__arena_strndup(p->arena, p->sql + start, p->prev_end - start);
}

struct ast_expr *engine__parse_expr_new(struct parser *p,
                                        enum ast_expr_kind kind, size_t start)
{
    struct ast_expr *e = engine__parse_alloc(p, sizeof(*e));

    if (e != NULL) {
        e->kind = kind;
        e->position = start;
    }
    return e;
}

int engine__parse_expr_finish(struct parser *p, struct ast_expr *e,
                              size_t start)
{
    const char *text = engine__parse_text(p, start);

    if (text == NULL) {
        return COMMON_ENOMEM;
    }
    e->position = start;
    e->text = text;
    return 0;
}

/* ---- transactions ---- */

/* trans_opt ::= . | TRANSACTION | TRANSACTION nm */
static int trans_opt_parse(struct parser *p)
{
    const char *name;

    if (!engine__parse_accept(p, TOKEN_TRANSACTION)) {
        return 0;
    }
    if (engine__parse_is_nm(p)) {
        return engine__parse_nm(p, &name);
    }
    return 0;
}

static int begin_parse(struct parser *p, struct ast_stmt *stmt)
{
    stmt->kind = AST_STMT_BEGIN;
    engine__parse_advance(p);
    stmt->u.begin_immediate = engine__parse_is(p, TOKEN_IMMEDIATE) ||
                              engine__parse_is(p, TOKEN_EXCLUSIVE);
    if (stmt->u.begin_immediate || engine__parse_is(p, TOKEN_DEFERRED)) {
        engine__parse_advance(p);
    }
    return trans_opt_parse(p);
}

/* ROLLBACK trans_opt, or ROLLBACK trans_opt TO savepoint_opt nm */
static int rollback_parse(struct parser *p, struct ast_stmt *stmt)
{
    int rc;

    stmt->kind = AST_STMT_ROLLBACK;
    engine__parse_advance(p);
    rc = trans_opt_parse(p);
    if (rc != 0 || !engine__parse_accept(p, TOKEN_TO)) {
        return rc;
    }
    stmt->kind = AST_STMT_ROLLBACK_TO;
    engine__parse_accept(p, TOKEN_SAVEPOINT);
    return engine__parse_nm(p, &stmt->u.savepoint.name);
}

/* SAVEPOINT nm, and RELEASE savepoint_opt nm. SAVEPOINT falls back to an
 * identifier, but after RELEASE SQLite's parser shifts it as the keyword,
 * so "RELEASE savepoint" is incomplete. */
static int savepoint_parse(struct parser *p, struct ast_stmt *stmt)
{
    bool release = engine__parse_is(p, TOKEN_RELEASE);

    stmt->kind = release ? AST_STMT_RELEASE : AST_STMT_SAVEPOINT;
    engine__parse_advance(p);
    if (release) {
        engine__parse_accept(p, TOKEN_SAVEPOINT);
    }
    return engine__parse_nm(p, &stmt->u.savepoint.name);
}

/* ---- statements ---- */

/* Statements SQLite has and ast.h does not, by their first keyword. */
static const char *unsupported_statement(enum token_kind kind)
{
    switch (kind) {
    case TOKEN_EXPLAIN:
        return "EXPLAIN";
    case TOKEN_ANALYZE:
        return "ANALYZE";
    case TOKEN_ATTACH:
        return "ATTACH";
    case TOKEN_DETACH:
        return "DETACH";
    default:
        return NULL;
    }
}

static int statement_parse(struct parser *p, struct ast_stmt *stmt)
{
    const char *feature = unsupported_statement(p->tok.kind);

    stmt->position = p->tok.offset;
    switch (p->tok.kind) {
    case TOKEN_SELECT:
    case TOKEN_VALUES:
        stmt->kind = AST_STMT_SELECT;
        return engine__parse_select(p, &stmt->u.select);
    case TOKEN_CREATE:
        return engine__parse_create(p, stmt);
    case TOKEN_DROP:
        return engine__parse_drop(p, stmt);
    case TOKEN_ALTER:
        return engine__parse_alter(p, stmt);
    case TOKEN_WITH:
        return engine__parse_with_statement(p, stmt);
    case TOKEN_INSERT:
    case TOKEN_REPLACE:
        return engine__parse_insert(p, stmt);
    case TOKEN_UPDATE:
        return engine__parse_update(p, stmt);
    case TOKEN_DELETE:
        return engine__parse_delete(p, stmt);
    case TOKEN_BEGIN:
        return begin_parse(p, stmt);
    case TOKEN_COMMIT:
    case TOKEN_END:
        stmt->kind = AST_STMT_COMMIT;
        engine__parse_advance(p);
        return trans_opt_parse(p);
    case TOKEN_ROLLBACK:
        return rollback_parse(p, stmt);
    case TOKEN_SAVEPOINT:
    case TOKEN_RELEASE:
        return savepoint_parse(p, stmt);
    case TOKEN_PRAGMA:
        return engine__parse_pragma(p, stmt);
    case TOKEN_VACUUM:
        return engine__parse_vacuum(p, stmt);
    case TOKEN_REINDEX:
        return engine__parse_reindex(p, stmt);
    default:
        break;
    }
    if (feature != NULL) {
        return engine__parse_unsupported(p, feature);
    }
    return engine__parse_syntax_error(p);
}

/* Copies the parameter names into the statement (index 0 unused). */
static int parameters_finish(struct parser *p, struct ast_stmt *stmt)
{
    size_t count = (size_t)p->parameter_count;
    const char **names = engine__parse_alloc(p, (count + 1) * sizeof(*names));

    if (names == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 1; i <= count && i < p->names_capacity; i++) {
        names[i] = p->parameter_names[i];
    }
    stmt->parameter_count = p->parameter_count;
    stmt->parameter_names = names;
    return 0;
}

/* Parses one statement and what must follow it: ';' or the end. */
static int statement_complete(struct parser *p, struct ast_stmt **out,
                              size_t *tail_offset)
{
    struct ast_stmt *stmt = engine__parse_alloc(p, sizeof(*stmt));
    int rc;

    if (stmt == NULL) {
        return COMMON_ENOMEM;
    }
    rc = statement_parse(p, stmt);
    if (rc != 0) {
        return rc;
    }
    if (!engine__parse_is(p, TOKEN_SEMI) && !engine__parse_is(p, TOKEN_EOF)) {
        return engine__parse_syntax_error(p);
    }
    *tail_offset = p->tok.kind == TOKEN_SEMI ? p->tok.offset + 1 : p->size;
    if (p->deferred[0] != '\0') {
        return engine__parse_error(p, p->deferred_offset, "%s", p->deferred);
    }
    rc = parameters_finish(p, stmt);
    if (rc != 0) {
        return rc;
    }
    *out = stmt;
    return 0;
}

int engine__parse(struct engine_arena *arena, const char *sql, size_t size,
                  struct ast_stmt **out, size_t *tail_offset, char *errmsg,
                  size_t errmsg_size, size_t *error_offset)
{
    struct parser p;
    const char *nul;
    int rc;

    ASSERT(arena != NULL);
    ASSERT(sql != NULL || size == 0);
    ASSERT(out != NULL);
    ASSERT(tail_offset != NULL);
    memset(&p, 0, sizeof(p));
    p.arena = arena;
    p.sql = sql;
    nul = size > 0 ? memchr(sql, '\0', size) : NULL;
    p.size = nul != NULL ? (size_t)(nul - sql) : size;
    p.errmsg = errmsg;
    p.errmsg_size = errmsg_size;
    if (errmsg != NULL && errmsg_size > 0) {
        errmsg[0] = '\0';
    }
    token_read(&p, 0, &p.tok);
    while (engine__parse_accept(&p, TOKEN_SEMI)) {
    }
    if (engine__parse_is(&p, TOKEN_EOF)) {
        *out = NULL;
        *tail_offset = p.size;
        return 0;
    }
    rc = statement_complete(&p, out, tail_offset);
    if (rc == COMMON_ENOMEM) {
        engine__parse_error(&p, p.tok.offset, "out of memory");
    }
    if (rc != 0 && error_offset != NULL) {
        *error_offset = p.error_offset;
    }
    return rc;
}
