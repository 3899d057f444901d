/* SPDX-License-Identifier: MIT
 *
 * parse_select.c: SELECT and VALUES, following src/parse.y (3.40):
 *
 *   oneselect ::= SELECT distinct selcollist from where_opt groupby_opt
 *                 having_opt orderby_opt limit_opt
 *   oneselect ::= values        (no ORDER BY or LIMIT of its own)
 *   selcollist ::= sclp expr as | sclp STAR | sclp nm DOT STAR
 *   as ::= AS nm | ids | .
 *   seltablist ::= nm dbnm as ... | LP select RP as ...
 *   sortlist ::= expr sortorder nulls, ...
 *   limit_opt ::= LIMIT expr [OFFSET expr | COMMA expr]
 *
 * Only one FROM item is supported (joins, WITH, compound selects and
 * window definitions are rejected with "... is not supported yet"). As in
 * SQLite, "all VALUES must have the same number of terms" and "a JOIN
 * clause is required before ON" are reported after the syntax is checked.
 */
#include "parse_int.h"

#include "common.h"

/* ---- result columns ---- */

/* as ::= AS nm | ids | . */
static int alias_parse(struct parser *p, const char **alias)
{
    if (engine__parse_accept(p, TOKEN_AS)) {
        return engine__parse_nm(p, alias);
    }
    /* WINDOW name AS starts a window clause (analyzeWindowKeyword). */
    if (engine__parse_is(p, TOKEN_WINDOW) &&
        (engine__parse_peek(p, 1) == TOKEN_ID ||
         engine__token_is_fallback_id(engine__parse_peek(p, 1))) &&
        engine__parse_peek(p, 2) == TOKEN_AS) {
        return 0;
    }
    if (engine__parse_is_ids(p)) {
        return engine__parse_nm(p, alias);
    }
    return 0;
}

static int result_column_parse(struct parser *p, struct ast_result_column *c)
{
    int rc;

    c->position = p->tok.offset;
    if (engine__parse_accept(p, TOKEN_STAR)) {
        c->kind = AST_RESULT_STAR;
        return 0;
    }
    if (engine__parse_is_nm(p) && engine__parse_peek(p, 1) == TOKEN_DOT &&
        engine__parse_peek(p, 2) == TOKEN_STAR) {
        c->kind = AST_RESULT_TABLE_STAR;
        rc = engine__parse_nm(p, &c->table);
        engine__parse_advance(p);
        engine__parse_advance(p);
        return rc;
    }
    c->kind = AST_RESULT_EXPR;
    rc = engine__parse_expr(p, &c->expr);
    if (rc != 0) {
        return rc;
    }
    return alias_parse(p, &c->alias);
}

int engine__parse_result_columns(struct parser *p,
                                 struct ast_result_column **out, size_t *count)
{
    struct parse_list list = {0};

    do {
        struct ast_result_column column = {0};
        int rc = result_column_parse(p, &column);

        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &column, sizeof(column));
        }
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    *out = list.items;
    *count = list.count;
    return 0;
}

/* ---- FROM ---- */

/* What may follow a FROM item: ON, USING, INDEXED BY, NOT INDEXED. */
static int from_item_suffix_parse(struct parser *p)
{
    struct ast_expr *on;
    int rc;

    if (engine__parse_is(p, TOKEN_INDEXED) ||
        (engine__parse_is(p, TOKEN_NOT) &&
         engine__parse_peek(p, 1) == TOKEN_INDEXED)) {
        return engine__parse_unsupported(p, "INDEXED BY");
    }
    if (engine__parse_is(p, TOKEN_USING)) {
        return engine__parse_unsupported(p, "USING");
    }
    if (engine__parse_is(p, TOKEN_ON)) {
        size_t offset = p->tok.offset;

        engine__parse_advance(p);
        rc = engine__parse_expr(p, &on);
        if (rc != 0) {
            return rc;
        }
        engine__parse_defer_error(p, offset,
                                  "a JOIN clause is required before ON");
    }
    return 0;
}

static int from_item_parse(struct parser *p, struct ast_from_item *item)
{
    int rc;

    item->position = p->tok.offset;
    if (engine__parse_is(p, TOKEN_LP)) {
        enum token_kind next = engine__parse_peek(p, 1);

        if (next != TOKEN_SELECT && next != TOKEN_VALUES &&
            next != TOKEN_WITH) {
            return engine__parse_unsupported(p, "a parenthesized FROM clause");
        }
        engine__parse_advance(p);
        rc = engine__parse_select(p, &item->select);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
    } else {
        rc = engine__parse_nm(p, &item->table);
        if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
            return engine__parse_unsupported(p, "a schema qualifier");
        }
        if (rc == 0 && engine__parse_is(p, TOKEN_LP)) {
            return engine__parse_unsupported(p, "a table-valued function");
        }
    }
    if (rc == 0) {
        rc = alias_parse(p, &item->alias);
    }
    if (rc == 0) {
        rc = from_item_suffix_parse(p);
    }
    return rc;
}

static int from_parse(struct parser *p, struct ast_select *s)
{
    struct ast_from_item *item = engine__parse_alloc(p, sizeof(*item));
    int rc;

    if (item == NULL) {
        return COMMON_ENOMEM;
    }
    rc = from_item_parse(p, item);
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_is(p, TOKEN_COMMA) || engine__parse_is(p, TOKEN_JOIN) ||
        engine__parse_is_join_keyword(p->tok.kind)) {
        return engine__parse_unsupported(p, "JOIN");
    }
    s->from = item;
    s->from_count = 1;
    return 0;
}

/* ---- ORDER BY and LIMIT ---- */

static int order_item_parse(struct parser *p, struct ast_order_item *item)
{
    int rc = engine__parse_expr(p, &item->expr);

    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_DESC)) {
        item->descending = true;
    } else {
        engine__parse_accept(p, TOKEN_ASC);
    }
    if (engine__parse_accept(p, TOKEN_NULLS)) {
        if (engine__parse_accept(p, TOKEN_FIRST)) {
            item->nulls = AST_NULLS_FIRST;
        } else if (engine__parse_accept(p, TOKEN_LAST)) {
            item->nulls = AST_NULLS_LAST;
        } else {
            return engine__parse_syntax_error(p);
        }
    }
    return 0;
}

int engine__parse_order_by(struct parser *p, struct ast_order_item **out,
                           size_t *count)
{
    struct parse_list list = {0};

    do {
        struct ast_order_item item = {0};
        int rc = order_item_parse(p, &item);

        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &item, sizeof(item));
        }
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    *out = list.items;
    *count = list.count;
    return 0;
}

/* [ORDER BY sortlist] [LIMIT expr [OFFSET expr | , expr]] */
static int order_limit_parse(struct parser *p, struct ast_select *s)
{
    struct ast_expr *first;
    int rc = 0;

    if (engine__parse_accept(p, TOKEN_ORDER)) {
        rc = engine__parse_expect(p, TOKEN_BY);
        if (rc == 0) {
            rc = engine__parse_order_by(p, &s->order_by, &s->order_by_count);
        }
    }
    if (rc != 0 || !engine__parse_accept(p, TOKEN_LIMIT)) {
        return rc;
    }
    rc = engine__parse_expr(p, &first);
    if (rc != 0) {
        return rc;
    }
    s->limit = first;
    if (engine__parse_accept(p, TOKEN_OFFSET)) {
        return engine__parse_expr(p, &s->offset);
    }
    if (engine__parse_accept(p, TOKEN_COMMA)) {
        s->offset = first;
        return engine__parse_expr(p, &s->limit);
    }
    return 0;
}

/* ---- VALUES ---- */

/* ( nexprlist ), appended to rows. */
static int values_row_parse(struct parser *p, struct ast_select *s,
                            struct parse_list *rows)
{
    struct ast_expr_list row;
    int rc = engine__parse_expect(p, TOKEN_LP);

    if (rc == 0) {
        rc = engine__parse_expr_list(p, &row);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc != 0) {
        return rc;
    }
    if (rows->count == 0) {
        s->value_column_count = row.count;
    } else if (row.count != s->value_column_count) {
        engine__parse_defer_error(
            p, s->position, "all VALUES must have the same number of terms");
        return 0;
    }
    for (size_t i = 0; i < row.count; i++) {
        rc = engine__parse_list_push(p, rows, &row.items[i],
                                     sizeof(row.items[i]));
        if (rc != 0) {
            return rc;
        }
    }
    s->value_row_count++;
    return 0;
}

static int values_parse(struct parser *p, struct ast_select *s)
{
    struct parse_list rows = {0};

    engine__parse_advance(p);
    do {
        int rc = values_row_parse(p, s, &rows);

        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    s->values = rows.items;
    return 0;
}

/* ---- SELECT ---- */

/* WHERE, GROUP BY, HAVING and a WINDOW clause (rejected). */
static int select_filters_parse(struct parser *p, struct ast_select *s)
{
    int rc = 0;

    if (engine__parse_accept(p, TOKEN_WHERE)) {
        rc = engine__parse_expr(p, &s->where);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_GROUP)) {
        rc = engine__parse_expect(p, TOKEN_BY);
        if (rc == 0) {
            rc = engine__parse_expr_list(p, &s->group_by);
        }
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_HAVING)) {
        rc = engine__parse_expr(p, &s->having);
    }
    if (rc == 0 && engine__parse_is(p, TOKEN_WINDOW) &&
        engine__parse_peek(p, 2) == TOKEN_AS) {
        return engine__parse_unsupported(p, "WINDOW");
    }
    return rc;
}

static int select_core_parse(struct parser *p, struct ast_select *s)
{
    int rc;

    engine__parse_advance(p);
    if (engine__parse_accept(p, TOKEN_DISTINCT)) {
        s->distinct = true;
    } else {
        engine__parse_accept(p, TOKEN_ALL);
    }
    rc = engine__parse_result_columns(p, &s->columns, &s->column_count);
    if (rc == 0 && engine__parse_accept(p, TOKEN_FROM)) {
        rc = from_parse(p, s);
    }
    if (rc == 0) {
        rc = select_filters_parse(p, s);
    }
    return rc;
}

static int select_body_parse(struct parser *p, struct ast_select *s)
{
    int rc;

    if (engine__parse_is(p, TOKEN_WITH)) {
        return engine__parse_unsupported(p, "WITH");
    }
    if (engine__parse_is(p, TOKEN_VALUES)) {
        rc = values_parse(p, s);
    } else if (engine__parse_is(p, TOKEN_SELECT)) {
        rc = select_core_parse(p, s);
    } else {
        return engine__parse_syntax_error(p);
    }
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_is(p, TOKEN_UNION) ||
        engine__parse_is(p, TOKEN_INTERSECT) ||
        engine__parse_is(p, TOKEN_EXCEPT)) {
        return engine__parse_unsupported(p, "compound SELECT");
    }
    if (s->columns == NULL) {
        return 0; /* VALUES has no ORDER BY or LIMIT of its own */
    }
    return order_limit_parse(p, s);
}

int engine__parse_select(struct parser *p, struct ast_select **out)
{
    struct ast_select *s;
    int rc = engine__parse_enter(p);

    if (rc != 0) {
        return rc;
    }
    s = engine__parse_alloc(p, sizeof(*s));
    if (s == NULL) {
        return COMMON_ENOMEM;
    }
    s->position = p->tok.offset;
    rc = select_body_parse(p, s);
    engine__parse_leave(p);
    if (rc == 0) {
        *out = s;
    }
    return rc;
}
