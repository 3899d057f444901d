/* SPDX-License-Identifier: MIT
 *
 * parse_view.c: CREATE VIEW and DROP VIEW, following src/parse.y (3.40):
 *
 *   cmd ::= createkw temp VIEW ifnotexists nm dbnm eidlist_opt AS select
 *   eidlist_opt ::= . | LP eidlist RP
 *   eidlist ::= eidlist COMMA nm collate sortorder | nm collate sortorder
 *   cmd ::= DROP VIEW ifexists fullname
 *
 * The schema qualifier may be main or temp (sqlite3TwoPartName: "unknown
 * database X" otherwise; a TEMP view's may only be temp). A view keeps no
 * parameters (sqlite3CreateView: "parameters are not allowed in views").
 */
#include "parse_int.h"

#include <strings.h>

#include "common.h"

/* [IF EXISTS] / [IF NOT EXISTS] */
static int if_parse(struct parser *p, bool not, bool *out)
{
    int rc;

    if (!engine__parse_accept(p, TOKEN_IF)) {
        return 0;
    }
    rc = not ? engine__parse_expect(p, TOKEN_NOT) : 0;
    rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_EXISTS);
    *out = rc == 0;
    return rc;
}

/* nm [. nm]: *schema is NULL when not written; *name_offset is where the
 * unqualified name starts. */
static int two_part_name(struct parser *p, const char **schema,
                         const char **name, size_t *name_offset)
{
    int rc;

    *schema = NULL;
    *name_offset = p->tok.offset;
    rc = engine__parse_nm(p, name);
    if (rc == 0 && engine__parse_accept(p, TOKEN_DOT)) {
        *schema = *name;
        *name_offset = p->tok.offset;
        rc = engine__parse_nm(p, name);
    }
    return rc;
}

/* eidlist: names only; COLLATE or ASC/DESC after one is SQLite's error
 * (parserAddExprIdListTerm). */
static int column_list_parse(struct parser *p, struct ast_create_view *cv)
{
    struct parse_list list = {0};
    int rc;

    do {
        const char *name;
        size_t at = p->tok.offset, size = p->tok.size;
        bool extra = false;

        rc = engine__parse_nm(p, &name);
        if (rc == 0 && engine__parse_accept(p, TOKEN_COLLATE)) {
            extra = true;
            if (!engine__parse_is_ids(p)) {
                return engine__parse_syntax_error(p);
            }
            engine__parse_advance(p);
        }
        if (rc == 0 && (engine__parse_accept(p, TOKEN_ASC) ||
                        engine__parse_accept(p, TOKEN_DESC))) {
            extra = true;
        }
        if (rc == 0 && extra) {
            engine__parse_defer_error(p, at,
                                      "syntax error after column name "
                                      "\"%.*s\"",
                                      (int)size, p->sql + at);
        }
        rc = rc != 0 ? rc
                     : engine__parse_list_push(p, &list, &name, sizeof(name));
    } while (rc == 0 && engine__parse_accept(p, TOKEN_COMMA));
    cv->columns = list.items;
    cv->column_count = list.count;
    return rc != 0 ? rc : engine__parse_expect(p, TOKEN_RP);
}

static int check_schema(struct parser *p, const char *schema, bool temporary,
                        size_t offset)
{
    if (schema == NULL) {
        return 0;
    }
    if (strcasecmp(schema, "main") != 0 && strcasecmp(schema, "temp") != 0) {
        return engine__parse_error(p, offset, "unknown database %s", schema);
    }
    if (temporary && strcasecmp(schema, "temp") != 0) {
        return engine__parse_error(p, offset,
                                   "temporary table name must be unqualified");
    }
    return 0;
}

int engine__parse_create_view(struct parser *p, struct ast_stmt *stmt,
                              bool temporary)
{
    struct ast_create_view *cv = &stmt->u.create_view;
    const char *schema;
    size_t start;
    int rc;

    stmt->kind = AST_STMT_CREATE_VIEW;
    engine__parse_advance(p); /* VIEW */
    rc = if_parse(p, true, &cv->if_not_exists);
    start = p->tok.offset;
    rc = rc != 0 ? rc : two_part_name(p, &schema, &cv->name, &cv->name_offset);
    rc = rc != 0 ? rc : check_schema(p, schema, temporary, start);
    if (rc != 0) {
        return rc;
    }
    cv->temporary =
        temporary || (schema != NULL && strcasecmp(schema, "temp") == 0);
    if (engine__parse_accept(p, TOKEN_LP)) {
        rc = column_list_parse(p, cv);
    }
    rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_AS);
    rc = rc != 0 ? rc : engine__parse_select(p, &cv->select);
    if (rc == 0 && p->parameter_count > 0) {
        return engine__parse_error(p, start,
                                   "parameters are not allowed in views");
    }
    return rc;
}

int engine__parse_drop_view(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_drop *drop = &stmt->u.drop;
    size_t name_offset;
    int rc;

    stmt->kind = AST_STMT_DROP_VIEW;
    engine__parse_advance(p); /* VIEW */
    rc = if_parse(p, false, &drop->if_exists);
    return rc != 0 ? rc
                   : two_part_name(p, &drop->schema, &drop->name, &name_offset);
}
