/* SPDX-License-Identifier: MIT
 *
 * parse_pragma.c: the PRAGMA, VACUUM and REINDEX statements, after
 * SQLite 3.40's src/parse.y:
 *
 *   cmd ::= PRAGMA nm dbnm
 *   cmd ::= PRAGMA nm dbnm EQ nmnum | PRAGMA nm dbnm LP nmnum RP
 *   cmd ::= PRAGMA nm dbnm EQ minus_num | PRAGMA nm dbnm LP minus_num RP
 *   nmnum ::= plus_num | nm | ON | DELETE | DEFAULT
 *   plus_num ::= PLUS number | number      minus_num ::= MINUS number
 *   number ::= INTEGER | FLOAT             dbnm ::= . | DOT nm
 *   cmd ::= VACUUM vinto | VACUUM nm vinto
 *   cmd ::= REINDEX | REINDEX nm dbnm
 *   vinto ::= INTO expr | .
 *
 * A pragma's value is kept as the text sqlite3Pragma() works on, since
 * each pragma reads it its own way (sqlite3GetInt32, getSafetyLevel, a
 * table name): names and strings unquoted, numbers as written with a '-'
 * in front for minus_num.
 */
#include "parse_int.h"

#include <string.h>

#include "common.h"

static bool is_number(const struct parser *p)
{
    return engine__parse_is(p, TOKEN_INTEGER) ||
           engine__parse_is(p, TOKEN_FLOAT);
}

/* The current token's text, after prefix ("" or "-"); consumes it. */
static int token_text(struct parser *p, const char *prefix, const char **out)
{
    size_t prefix_size = strlen(prefix);
    char *text = engine__arena_alloc(p->arena, prefix_size + p->tok.size + 1);

    if (text == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(text, prefix, prefix_size);
    memcpy(text + prefix_size, p->sql + p->tok.offset, p->tok.size);
    text[prefix_size + p->tok.size] = '\0';
    engine__parse_advance(p);
    *out = text;
    return 0;
}

/* An nm, unquoted in *out and as written in *text (SQLite's messages
 * quote a schema name as written: "unknown database %T"). */
static int schema_parse(struct parser *p, const char **out, const char **text)
{
    *text =
        engine__arena_strndup(p->arena, p->sql + p->tok.offset, p->tok.size);
    if (*text == NULL) {
        return COMMON_ENOMEM;
    }
    return engine__parse_nm(p, out);
}

/* nmnum or minus_num. */
static int pragma_value_parse(struct parser *p, const char **out)
{
    if (engine__parse_is(p, TOKEN_PLUS) || engine__parse_is(p, TOKEN_MINUS)) {
        const char *prefix = engine__parse_is(p, TOKEN_MINUS) ? "-" : "";

        engine__parse_advance(p);
        if (!is_number(p)) {
            return engine__parse_syntax_error(p);
        }
        return token_text(p, prefix, out);
    }
    if (is_number(p) || engine__parse_is(p, TOKEN_ON) ||
        engine__parse_is(p, TOKEN_DELETE) ||
        engine__parse_is(p, TOKEN_DEFAULT)) {
        return token_text(p, "", out);
    }
    return engine__parse_nm(p, out);
}

int engine__parse_pragma(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_pragma *pragma = &stmt->u.pragma;
    int rc = 0;

    stmt->kind = AST_STMT_PRAGMA;
    engine__parse_advance(p);
    if (engine__parse_peek(p, 1) == TOKEN_DOT) {
        rc = schema_parse(p, &pragma->schema, &pragma->schema_text);
        if (rc == 0) {
            engine__parse_advance(p);
        }
    }
    rc = rc == 0 ? engine__parse_nm(p, &pragma->name) : rc;
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_EQ)) {
        return pragma_value_parse(p, &pragma->value);
    }
    if (engine__parse_accept(p, TOKEN_LP)) {
        rc = pragma_value_parse(p, &pragma->value);
        return rc == 0 ? engine__parse_expect(p, TOKEN_RP) : rc;
    }
    return 0;
}

/* REINDEX [nm [. nm]] (parse.y's "cmd ::= REINDEX nm dbnm"). */
int engine__parse_reindex(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_reindex *reindex = &stmt->u.reindex;
    int rc;

    stmt->kind = AST_STMT_REINDEX;
    engine__parse_advance(p);
    if (!engine__parse_is_nm(p)) {
        return 0;
    }
    rc = engine__parse_nm(p, &reindex->name);
    if (rc == 0 && engine__parse_accept(p, TOKEN_DOT)) {
        reindex->schema = reindex->name;
        rc = engine__parse_nm(p, &reindex->name);
    }
    return rc;
}

int engine__parse_vacuum(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_expr *into;
    size_t into_offset;
    int rc = 0;

    stmt->kind = AST_STMT_VACUUM;
    engine__parse_advance(p);
    if (engine__parse_is_nm(p)) {
        rc = schema_parse(p, &stmt->u.vacuum.schema,
                          &stmt->u.vacuum.schema_text);
    }
    if (rc != 0 || !engine__parse_is(p, TOKEN_INTO)) {
        return rc;
    }
    /* The whole statement is read first, so that a syntax error after
     * INTO is reported as SQLite reports it. */
    into_offset = p->tok.offset;
    engine__parse_advance(p);
    rc = engine__parse_expr(p, &into);
    if (rc == 0) {
        engine__parse_defer_error(p, into_offset,
                                  "VACUUM INTO is not supported yet");
    }
    return rc;
}
