/* SPDX-License-Identifier: MIT
 *
 * parse_int.h: what the parser's files share (parse.c, parse_expr.c,
 * parse_select.c, parse_ddl.c, parse_dml.c, parse_pragma.c): the parser's
 * state, token helpers, arena-backed lists and error reporting.
 *
 * The parser is a recursive-descent reading of SQLite 3.40's LALR grammar
 * (src/parse.y). Its goal is to accept exactly the statements SQLite
 * accepts in the subset ast.h covers, and to fail on the same token with
 * SQLite's words otherwise. SQLite reports a syntax error at the first
 * token that cannot continue any statement; a recursive-descent parser
 * that follows the grammar stops at that same token.
 *
 * Invariants: p->tok is never TOKEN_SPACE; once p->rc is set the parse
 * unwinds without reading more tokens.
 */
#ifndef SINEW_ENGINE_PARSE_INT_H
#define SINEW_ENGINE_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "tokenize.h"

#define PARSE_DEFERRED_SIZE 256

struct parser {
    struct engine_arena *arena; /* borrowed: where the tree goes */
    const char *sql;            /* borrowed for the parse */
    size_t size;                /* bytes up to the first NUL or size */
    struct token tok;           /* the current (lookahead) token */
    size_t prev_end;            /* end of the last consumed token */
    int depth;                  /* recursion depth, <= ENGINE_MAX_EXPR_DEPTH */
    int height;                 /* height of the expression parsed last */
    int parameter_count;        /* highest parameter number so far */
    const char **parameter_names; /* [0..names_capacity), in the arena */
    size_t names_capacity;
    char *errmsg; /* borrowed: the caller's buffer */
    size_t errmsg_size;
    size_t error_offset;
    /* An error SQLite raises only after parsing (code generation, e.g.
     * "hex literal too big"): reported if the parse succeeds. */
    char deferred[PARSE_DEFERRED_SIZE];
    size_t deferred_offset;
};

/* An array that grows in the arena (old copies stay until the arena is
 * freed: the parse tree's arena is freed whole). */
struct parse_list {
    void *items;
    size_t count;
    size_t capacity;
};

/* ---- tokens (parse.c) ---- */

/* Consumes the current token and reads the next non-space one. */
void engine__parse_advance(struct parser *p);

bool engine__parse_is(const struct parser *p, enum token_kind kind);

/* Consumes the current token if it is of kind. */
bool engine__parse_accept(struct parser *p, enum token_kind kind);

/* Consumes a token of kind, or fails with a syntax error. */
int engine__parse_expect(struct parser *p, enum token_kind kind);

/* The kind of the n-th non-space token after the current one (n >= 1). */
enum token_kind engine__parse_peek(const struct parser *p, int n);

/* parse.y's token classes: id (ID, INDEXED, and the fallback keywords),
 * ids (ID or STRING), nm (id, STRING or a join keyword). */
bool engine__parse_is_id(const struct parser *p);
bool engine__parse_is_ids(const struct parser *p);
bool engine__parse_is_nm(const struct parser *p);

/* Consumes an nm and returns it unquoted in the arena. */
int engine__parse_nm(struct parser *p, const char **out);

/* True for CROSS FULL INNER LEFT NATURAL OUTER RIGHT (TK_JOIN_KW). */
bool engine__parse_is_join_keyword(enum token_kind kind);

/* ---- errors (parse.c) ---- */

/* "near \"X\": syntax error" at the current token, "incomplete input" at
 * the end, "unrecognized token: \"X\"" for an illegal token. */
int engine__parse_syntax_error(struct parser *p);

/* A message of our own (printf format) at offset: ENGINE_ESQL. */
int engine__parse_error(struct parser *p, size_t offset, const char *format,
                        ...) __attribute__((format(printf, 3, 4)));

/* "<feature> is not supported yet" at the current token. */
int engine__parse_unsupported(struct parser *p, const char *feature);

/* Records an error reported only if the parse otherwise succeeds. */
void engine__parse_defer_error(struct parser *p, size_t offset,
                               const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Enters one level of recursion: ENGINE_ESQL past ENGINE_MAX_EXPR_DEPTH. */
int engine__parse_enter(struct parser *p);
void engine__parse_leave(struct parser *p);

/* ---- memory (parse.c) ---- */

/* size zeroed bytes in the arena, or NULL. */
void *engine__parse_alloc(struct parser *p, size_t size);

/* Appends item_size bytes at item: 0 or COMMON_ENOMEM. */
int engine__parse_list_push(struct parser *p, struct parse_list *list,
                            const void *item, size_t item_size);

/* The source text from start to the end of the last consumed token. */
const char *engine__parse_text(struct parser *p, size_t start);

/* A new expression of kind starting at start; its text is set by
 * engine__parse_expr_finish(). NULL when out of memory. */
struct ast_expr *engine__parse_expr_new(struct parser *p,
                                        enum ast_expr_kind kind, size_t start);

/* Sets e's position and text to [start, end of the last token): 0 or
 * COMMON_ENOMEM. */
int engine__parse_expr_finish(struct parser *p, struct ast_expr *e,
                              size_t start);

/* ---- grammar ---- */

/* parse_expr.c: one expression (SQLite's "expr"), and "nexprlist". */
int engine__parse_expr(struct parser *p, struct ast_expr **out);
int engine__parse_expr_list(struct parser *p, struct ast_expr_list *out);

/* The rest of an expression whose first operand, left, is parsed (its
 * height in p->height): the operators that follow it. */
int engine__parse_expr_continue(struct parser *p, struct ast_expr *left,
                                struct ast_expr **out);

/* "typetoken": zero or more ids, then optionally (n) or (n, m). *out is the
 * text as written, NULL when empty. */
int engine__parse_type_name(struct parser *p, const char **out);

/* A literal "term" (NULL, numbers, strings, blobs) at the current token. */
int engine__parse_literal(struct parser *p, struct ast_expr **out);

/* A column's DEFAULT value, after the DEFAULT keyword: "term",
 * "( expr )", "+ term", "- term", or "id" (read as a string, or TRUE and
 * FALSE). */
int engine__parse_default_value(struct parser *p, struct ast_expr **out);

/* parse_select.c: a select (SELECT or VALUES, with ORDER BY and LIMIT),
 * the current token being SELECT, VALUES or WITH. */
int engine__parse_select(struct parser *p, struct ast_select **out);

/* parse_with.c: a WITH clause, the current token being WITH; and a
 * statement that starts with one (SELECT, VALUES, INSERT, REPLACE, UPDATE
 * or DELETE). */
int engine__parse_with(struct parser *p, struct ast_with **out);
int engine__parse_with_statement(struct parser *p, struct ast_stmt *stmt);

/* "selcollist" (result columns, for SELECT and RETURNING). */
int engine__parse_result_columns(struct parser *p,
                                 struct ast_result_column **out, size_t *count);

/* indexed_opt: [INDEXED BY nm | NOT INDEXED] after a table name. */
int engine__parse_index_hint(struct parser *p, struct ast_index_hint *hint);

/* parse_window.c: "OVER (window)" or "OVER nm" (the current token OVER),
 * and a WINDOW clause (the current token WINDOW) into s. */
int engine__parse_over(struct parser *p, struct ast_window **out);
int engine__parse_window_clause(struct parser *p, struct ast_select *s);

/* "sortlist" for ORDER BY. */
int engine__parse_order_by(struct parser *p, struct ast_order_item **out,
                           size_t *count);

/* parse_ddl.c: CREATE TABLE / INDEX and DROP; the current token is
 * CREATE or DROP. */
int engine__parse_create(struct parser *p, struct ast_stmt *stmt);
int engine__parse_drop(struct parser *p, struct ast_stmt *stmt);
/* columnname carglist: one column definition (ALTER TABLE ADD too). */
int engine__parse_column_def(struct parser *p, struct ast_column_def *c);

/* parse_alter.c: ALTER TABLE; the current token is ALTER. */
int engine__parse_alter(struct parser *p, struct ast_stmt *stmt);

/* parse_view.c: CREATE [TEMP] VIEW (the current token VIEW) and DROP VIEW
 * (the current token VIEW). */
int engine__parse_create_view(struct parser *p, struct ast_stmt *stmt,
                              bool temporary);
int engine__parse_drop_view(struct parser *p, struct ast_stmt *stmt);

/* parse_trigger.c: CREATE [TEMP] TRIGGER (the current token TRIGGER) and
 * DROP TRIGGER (the current token TRIGGER). */
int engine__parse_create_trigger(struct parser *p, struct ast_stmt *stmt,
                                 bool temporary);
int engine__parse_drop_trigger(struct parser *p, struct ast_stmt *stmt);

/* An "onconf" / "orconf" resolution: ROLLBACK ABORT FAIL IGNORE REPLACE. */
int engine__parse_resolve_type(struct parser *p, enum ast_conflict *out);

/* parse_pragma.c: PRAGMA, VACUUM and REINDEX; the current token is
 * PRAGMA, VACUUM or REINDEX. */
int engine__parse_pragma(struct parser *p, struct ast_stmt *stmt);
int engine__parse_vacuum(struct parser *p, struct ast_stmt *stmt);
int engine__parse_reindex(struct parser *p, struct ast_stmt *stmt);

/* parse_dml.c: INSERT, REPLACE, UPDATE and DELETE. */
int engine__parse_insert(struct parser *p, struct ast_stmt *stmt);
int engine__parse_update(struct parser *p, struct ast_stmt *stmt);
int engine__parse_delete(struct parser *p, struct ast_stmt *stmt);

#endif /* SINEW_ENGINE_PARSE_INT_H */
