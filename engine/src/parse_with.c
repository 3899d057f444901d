/* SPDX-License-Identifier: MIT
 *
 * parse_with.c: the WITH clause (common table expressions), following
 * src/parse.y (3.40):
 *
 *   with ::= WITH wqlist | WITH RECURSIVE wqlist
 *   wqlist ::= wqitem | wqlist COMMA wqitem
 *   wqitem ::= nm eidlist_opt wqas LP select RP
 *   wqas ::= AS | AS MATERIALIZED | AS NOT MATERIALIZED
 *   cmd ::= with insert_cmd INTO ... | with UPDATE ... | with DELETE ...
 *   select ::= WITH wqlist selectnowith
 *
 * As in SQLite, the column list takes bare names ("syntax error after
 * column name" for a COLLATE or ASC/DESC, which eidlist parses and
 * parserAddExprIdListTerm() rejects), and a name used twice in one WITH is
 * "duplicate WITH table name" (sqlite3WithAdd). What the names refer to is
 * the planner's business (plan_cte_bind.c).
 */
#include <strings.h>

#include "parse_int.h"

#include "common.h"

/* eidlist_opt ::= . | LP eidlist RP, each term a bare nm. */
static int columns_parse(struct parser *p, struct ast_cte *cte)
{
    struct parse_list list = {0};

    if (!engine__parse_accept(p, TOKEN_LP)) {
        return 0;
    }
    do {
        const char *name;
        const char *collation;
        size_t start = p->tok.offset;
        int rc = engine__parse_nm(p, &name);
        bool extra = false;

        if (rc == 0 && engine__parse_accept(p, TOKEN_COLLATE)) {
            rc = engine__parse_nm(p, &collation);
            extra = true;
        }
        if (rc == 0 && (engine__parse_accept(p, TOKEN_ASC) ||
                        engine__parse_accept(p, TOKEN_DESC))) {
            extra = true;
        }
        if (rc == 0 && extra) {
            return engine__parse_error(
                p, start, "syntax error after column name \"%s\"", name);
        }
        rc = rc != 0 ? rc
                     : engine__parse_list_push(p, &list, &name, sizeof(name));
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    cte->columns = list.items;
    cte->column_count = list.count;
    return engine__parse_expect(p, TOKEN_RP);
}

/* wqas: AS, then MATERIALIZED or NOT MATERIALIZED. */
static int as_parse(struct parser *p, struct ast_cte *cte)
{
    int rc = engine__parse_expect(p, TOKEN_AS);

    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_MATERIALIZED)) {
        cte->materialized = 1;
    } else if (engine__parse_accept(p, TOKEN_NOT)) {
        cte->materialized = -1;
        rc = engine__parse_expect(p, TOKEN_MATERIALIZED);
    }
    return rc;
}

static int item_parse(struct parser *p, struct ast_cte *cte)
{
    int rc;

    cte->position = p->tok.offset;
    rc = engine__parse_nm(p, &cte->name);
    rc = rc != 0 ? rc : columns_parse(p, cte);
    rc = rc != 0 ? rc : as_parse(p, cte);
    rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_LP);
    if (rc == 0 && !engine__parse_is(p, TOKEN_SELECT) &&
        !engine__parse_is(p, TOKEN_VALUES) &&
        !engine__parse_is(p, TOKEN_WITH)) {
        rc = engine__parse_syntax_error(p);
    }
    rc = rc != 0 ? rc : engine__parse_select(p, &cte->select);
    return rc != 0 ? rc : engine__parse_expect(p, TOKEN_RP);
}

int engine__parse_with(struct parser *p, struct ast_with **out)
{
    struct ast_with *with = engine__parse_alloc(p, sizeof(*with));
    struct parse_list list = {0};

    if (with == NULL) {
        return COMMON_ENOMEM;
    }
    engine__parse_advance(p); /* WITH */
    with->recursive = engine__parse_accept(p, TOKEN_RECURSIVE);
    do {
        struct ast_cte cte = {0};
        const struct ast_cte *done;
        int rc = item_parse(p, &cte);

        if (rc != 0) {
            return rc;
        }
        done = list.items;
        for (size_t i = 0; i < list.count; i++) {
            if (strcasecmp(done[i].name, cte.name) == 0) {
                return engine__parse_error(
                    p, cte.position, "duplicate WITH table name: %s", cte.name);
            }
        }
        rc = engine__parse_list_push(p, &list, &cte, sizeof(cte));
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    with->ctes = list.items;
    with->count = list.count;
    *out = with;
    return 0;
}

/* A statement starting with WITH: the clause, then the SELECT, VALUES,
 * INSERT, REPLACE, UPDATE or DELETE it belongs to. */
int engine__parse_with_statement(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_with *with;
    int rc = engine__parse_with(p, &with);

    if (rc != 0) {
        return rc;
    }
    switch (p->tok.kind) {
    case TOKEN_SELECT:
    case TOKEN_VALUES:
        stmt->kind = AST_STMT_SELECT;
        rc = engine__parse_select(p, &stmt->u.select);
        if (rc == 0) {
            stmt->u.select->with = with;
        }
        return rc;
    case TOKEN_INSERT:
    case TOKEN_REPLACE:
        rc = engine__parse_insert(p, stmt);
        stmt->u.insert.with = with;
        return rc;
    case TOKEN_UPDATE:
        rc = engine__parse_update(p, stmt);
        stmt->u.update.with = with;
        return rc;
    case TOKEN_DELETE:
        rc = engine__parse_delete(p, stmt);
        stmt->u.delete_.with = with;
        return rc;
    default:
        return engine__parse_syntax_error(p);
    }
}
