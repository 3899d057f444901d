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
 *   seltablist ::= stl_prefix nm dbnm as on_using | ...
 *   joinop ::= COMMA | JOIN | JOIN_KW JOIN | JOIN_KW nm JOIN
 *            | JOIN_KW nm nm JOIN
 *   on_using ::= ON expr | USING LP idlist RP | .
 *
 * WITH is parse_with.c's. A parenthesized join with its own alias, ON or
 * USING becomes SQLite's SF_NestedFrom subquery; see nested_from_parse. As
 * in SQLite, "all
 * VALUES must have the same number of terms", "a JOIN clause is required
 * before ON" and "unknown join type: ..." are reported after the syntax is
 * checked.
 */
#include <string.h>
#include <strings.h>

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

/* idlist ::= nm, nm, ... (a USING list). */
static int using_parse(struct parser *p, struct ast_from_item *item)
{
    struct parse_list list = {0};
    int rc = engine__parse_expect(p, TOKEN_LP);

    while (rc == 0) {
        const char *name;

        rc = engine__parse_nm(p, &name);
        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &name, sizeof(name));
        }
        if (rc != 0 || !engine__parse_accept(p, TOKEN_COMMA)) {
            break;
        }
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0) {
        item->using_columns = list.items;
        item->using_count = list.count;
    }
    return rc;
}

int engine__parse_index_hint(struct parser *p, struct ast_index_hint *hint)
{
    if (engine__parse_accept(p, TOKEN_INDEXED)) {
        int rc = engine__parse_expect(p, TOKEN_BY);

        return rc != 0 ? rc : engine__parse_nm(p, &hint->indexed_by);
    }
    if (engine__parse_is(p, TOKEN_NOT) &&
        engine__parse_peek(p, 1) == TOKEN_INDEXED) {
        engine__parse_advance(p);
        engine__parse_advance(p);
        hint->not_indexed = true;
    }
    return 0;
}

/* What may follow a FROM item: ON expr or USING (idlist) (on_using in
 * parse.y). The first item may have neither ON nor USING: SQLite says so
 * once the syntax is checked. */
static int from_item_suffix_parse(struct parser *p, struct ast_from_item *item)
{
    size_t offset = p->tok.offset;
    bool first = item->join == AST_JOIN_FIRST;
    int rc = 0;

    if (engine__parse_accept(p, TOKEN_ON)) {
        rc = engine__parse_expr(p, &item->on);
        if (rc == 0 && first) {
            engine__parse_defer_error(p, offset,
                                      "a JOIN clause is required before ON");
        }
    } else if (engine__parse_accept(p, TOKEN_USING)) {
        rc = using_parse(p, item);
        if (rc == 0 && first) {
            engine__parse_defer_error(p, offset,
                                      "a JOIN clause is required before USING");
        }
    }
    return rc;
}

static int from_list_parse(struct parser *p, struct parse_list *list);

/* A table name [AS alias] [INDEXED BY nm | NOT INDEXED], a table-valued
 * function call name(args) [AS alias], or (select) [AS alias], then ON or
 * USING. */
static int from_item_parse(struct parser *p, struct ast_from_item *item)
{
    int rc;

    if (engine__parse_accept(p, TOKEN_LP)) {
        rc = engine__parse_select(p, &item->select);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
    } else {
        rc = engine__parse_nm(p, &item->table);
        if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
            return engine__parse_unsupported(p, "a schema qualifier");
        }
        if (rc == 0 && engine__parse_accept(p, TOKEN_LP)) {
            item->function = true;
            if (!engine__parse_is(p, TOKEN_RP)) {
                rc = engine__parse_expr_list(p, &item->args);
            }
            rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_RP);
        }
    }
    if (rc == 0) {
        rc = alias_parse(p, &item->alias);
    }
    if (rc == 0 && item->table != NULL && !item->function) {
        rc = engine__parse_index_hint(p, &item->hint);
    }
    if (rc == 0) {
        rc = from_item_suffix_parse(p, item);
    }
    return rc;
}

/* Item reads "SELECT * FROM <inner>", flagged nested (parse.y makes it
 * with sqlite3SelectNew(..., SF_NestedFrom, ...)). */
static int nested_select_make(struct parser *p, struct parse_list *inner,
                              struct ast_from_item *item)
{
    struct ast_select *s = engine__parse_alloc(p, sizeof(*s));
    struct ast_result_column *star = engine__parse_alloc(p, sizeof(*star));

    if (s == NULL || star == NULL) {
        return COMMON_ENOMEM;
    }
    star->kind = AST_RESULT_STAR;
    star->position = item->position;
    s->columns = star;
    s->column_count = 1;
    s->from = inner->items;
    s->from_count = inner->count;
    s->position = item->position;
    s->nested = true;
    item->select = s;
    return 0;
}

/* "(seltablist) [AS alias] [ON ... | USING (...)]", parse.y's rule for a
 * parenthesized join. First in its list, without alias, ON or USING, its
 * items join the list as if unparenthesized; a single item becomes this
 * one and, as in SQLite, keeps only the outer alias ("FROM t0, (t1 AS x)"
 * names t1, not x). Otherwise it is a subquery whose columns keep their
 * tables' names (SF_NestedFrom). */
static int nested_from_parse(struct parser *p, struct parse_list *list,
                             struct ast_from_item *item)
{
    struct parse_list inner = {0};
    const struct ast_from_item *items;
    int rc = engine__parse_enter(p);

    if (rc == 0) {
        engine__parse_advance(p);
        rc = from_list_parse(p, &inner);
        engine__parse_leave(p);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0) {
        rc = alias_parse(p, &item->alias);
    }
    if (rc == 0) {
        rc = from_item_suffix_parse(p, item);
    }
    if (rc != 0) {
        return rc;
    }
    items = inner.items;
    if (list->count == 0 && item->alias == NULL && item->on == NULL &&
        item->using_columns == NULL) {
        for (size_t i = 0; rc == 0 && i < inner.count; i++) {
            rc = engine__parse_list_push(p, list, &items[i], sizeof(*items));
        }
        return rc;
    }
    if (inner.count == 1) {
        item->table = items[0].table;
        item->select = items[0].select;
    } else {
        rc = nested_select_make(p, &inner, item);
    }
    return rc != 0 ? rc : engine__parse_list_push(p, list, item, sizeof(*item));
}

/* One FROM term pushed onto list: an item, or a parenthesized join's. */
static int from_term_parse(struct parser *p, struct parse_list *list,
                           struct ast_from_item *item)
{
    int rc;

    item->position = p->tok.offset;
    if (engine__parse_is(p, TOKEN_LP)) {
        enum token_kind next = engine__parse_peek(p, 1);

        if (next != TOKEN_SELECT && next != TOKEN_VALUES &&
            next != TOKEN_WITH) {
            return nested_from_parse(p, list, item);
        }
    }
    rc = from_item_parse(p, item);
    return rc != 0 ? rc : engine__parse_list_push(p, list, item, sizeof(*item));
}

/* The bits of sqlite3JoinType() (select.c): each keyword adds its own. */
#define JOIN_NATURAL 0x01
#define JOIN_LEFT 0x02
#define JOIN_RIGHT 0x04
#define JOIN_OUTER 0x08
#define JOIN_INNER 0x10
#define JOIN_ERROR 0x20

static unsigned join_word_bits(const char *word, size_t size)
{
    static const struct {
        const char *name;
        unsigned bits;
    } words[] = {
        {"natural", JOIN_NATURAL},
        {"left", JOIN_LEFT | JOIN_OUTER},
        {"outer", JOIN_OUTER},
        {"right", JOIN_RIGHT | JOIN_OUTER},
        {"full", JOIN_LEFT | JOIN_RIGHT | JOIN_OUTER},
        {"inner", JOIN_INNER},
        {"cross", JOIN_INNER},
    };

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strlen(words[i].name) == size &&
            strncasecmp(words[i].name, word, size) == 0) {
            return words[i].bits;
        }
    }
    return JOIN_ERROR;
}

/* The join an item's bits name, or the "unknown join type" error (which
 * SQLite reports once the syntax is checked, naming the words as
 * written). */
static void join_kind_set(struct parser *p, struct ast_from_item *item,
                          unsigned bits, size_t start, size_t end)
{
    static const enum ast_join_kind kinds[] = {
        [0] = AST_JOIN_INNER,
        [JOIN_LEFT] = AST_JOIN_LEFT,
        [JOIN_RIGHT] = AST_JOIN_RIGHT,
        [JOIN_LEFT | JOIN_RIGHT] = AST_JOIN_FULL,
    };

    item->natural = (bits & JOIN_NATURAL) != 0;
    item->join = kinds[bits & (JOIN_LEFT | JOIN_RIGHT)];
    if ((bits & (JOIN_INNER | JOIN_OUTER)) == (JOIN_INNER | JOIN_OUTER) ||
        (bits & JOIN_ERROR) != 0 ||
        (bits & (JOIN_OUTER | JOIN_LEFT | JOIN_RIGHT)) == JOIN_OUTER) {
        engine__parse_defer_error(p, start, "unknown join type: %.*s",
                                  (int)(end - start), p->sql + start);
        item->join = AST_JOIN_INNER;
    }
}

/* joinop ::= COMMA | JOIN | JOIN_KW [nm [nm]] JOIN */
static int join_op_parse(struct parser *p, struct ast_from_item *item)
{
    size_t start = p->tok.offset;
    size_t end = start;
    unsigned bits = 0;

    if (engine__parse_accept(p, TOKEN_COMMA) ||
        engine__parse_accept(p, TOKEN_JOIN)) {
        item->join = AST_JOIN_INNER;
        return 0;
    }
    for (int words = 0; words < 3 && !engine__parse_is(p, TOKEN_JOIN);
         words++) {
        if (words == 0 ? !engine__parse_is_join_keyword(p->tok.kind)
                       : !engine__parse_is_nm(p)) {
            return engine__parse_syntax_error(p);
        }
        bits |= join_word_bits(p->sql + p->tok.offset, p->tok.size);
        end = p->tok.offset + p->tok.size;
        engine__parse_advance(p);
    }
    join_kind_set(p, item, bits, start, end);
    return engine__parse_expect(p, TOKEN_JOIN);
}

static bool at_join_op(const struct parser *p)
{
    return engine__parse_is(p, TOKEN_COMMA) ||
           engine__parse_is(p, TOKEN_JOIN) ||
           engine__parse_is_join_keyword(p->tok.kind);
}

/* seltablist: FROM items joined left to right. */
static int from_list_parse(struct parser *p, struct parse_list *list)
{
    size_t first = list->count;

    for (;;) {
        struct ast_from_item item = {0};
        int rc = 0;

        if (list->count > first) {
            rc = join_op_parse(p, &item);
        }
        if (rc == 0) {
            rc = from_term_parse(p, list, &item);
        }
        if (rc != 0) {
            return rc;
        }
        if (!at_join_op(p)) {
            return 0;
        }
    }
}

static int from_parse(struct parser *p, struct ast_select *s)
{
    struct parse_list list = {0};
    int rc = from_list_parse(p, &list);

    s->from = list.items;
    s->from_count = list.count;
    return rc;
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

/* WHERE, GROUP BY, HAVING and a WINDOW clause. */
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
        return engine__parse_window_clause(p, s);
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

/* oneselect: a SELECT with its own ORDER BY and LIMIT, or VALUES. */
static int oneselect_parse(struct parser *p, struct ast_select *s)
{
    int rc;

    s->position = p->tok.offset;
    if (engine__parse_is(p, TOKEN_VALUES)) {
        return values_parse(p, s); /* no ORDER BY or LIMIT of its own */
    }
    if (!engine__parse_is(p, TOKEN_SELECT)) {
        return engine__parse_syntax_error(p);
    }
    rc = select_core_parse(p, s);
    return rc == 0 ? order_limit_parse(p, s) : rc;
}

/* multiselect_op ::= UNION | UNION ALL | EXCEPT | INTERSECT; false when
 * the current token starts none. */
static bool compound_op_parse(struct parser *p, enum ast_compound_op *op)
{
    if (engine__parse_accept(p, TOKEN_UNION)) {
        *op = engine__parse_accept(p, TOKEN_ALL) ? AST_COMPOUND_UNION_ALL
                                                 : AST_COMPOUND_UNION;
    } else if (engine__parse_accept(p, TOKEN_INTERSECT)) {
        *op = AST_COMPOUND_INTERSECT;
    } else if (engine__parse_accept(p, TOKEN_EXCEPT)) {
        *op = AST_COMPOUND_EXCEPT;
    } else {
        return false;
    }
    return true;
}

static const char *compound_op_name(enum ast_compound_op op)
{
    switch (op) {
    case AST_COMPOUND_UNION_ALL:
        return "UNION ALL";
    case AST_COMPOUND_INTERSECT:
        return "INTERSECT";
    case AST_COMPOUND_EXCEPT:
        return "EXCEPT";
    default:
        return "UNION";
    }
}

/* parserDoubleLinkSelect() (parse.y): only the last SELECT of a compound
 * may have ORDER BY or LIMIT (the grammar gave them to it, they belong to
 * the compound), and a compound has at most ENGINE_MAX_COMPOUND_TERMS
 * terms. Checked from the right, as SQLite does, when the compound ends. */
static int compound_check(struct parser *p, const struct ast_select *top,
                          size_t term_count)
{
    for (const struct ast_select *n = top; n->compound != AST_COMPOUND_NONE;
         n = n->left) {
        const struct ast_select *arm =
            n->left->compound != AST_COMPOUND_NONE ? n->left->right : n->left;

        if (arm->order_by_count > 0 || arm->limit != NULL) {
            return engine__parse_error(
                p, top->position, "%s clause should come after %s not before",
                arm->order_by_count > 0 ? "ORDER BY" : "LIMIT",
                compound_op_name(n->compound));
        }
    }
    if (term_count > ENGINE_MAX_COMPOUND_TERMS) {
        return engine__parse_error(p, top->position,
                                   "too many terms in compound SELECT");
    }
    return 0;
}

/* select ::= oneselect (multiselect_op oneselect)*, left-associative: each
 * operator makes a node over the compound so far and the next SELECT. The
 * last SELECT's ORDER BY and LIMIT move to the top node. */
static int compound_parse(struct parser *p, struct ast_select *s)
{
    struct ast_select *top = engine__parse_alloc(p, sizeof(*top));
    struct ast_select *last = NULL;
    enum ast_compound_op op;
    size_t term_count = 1;

    if (top == NULL) {
        return COMMON_ENOMEM;
    }
    *top = *s;
    while (compound_op_parse(p, &op)) {
        struct ast_select *node = engine__parse_alloc(p, sizeof(*node));
        int rc;

        last = engine__parse_alloc(p, sizeof(*last));
        if (node == NULL || last == NULL) {
            return COMMON_ENOMEM;
        }
        rc = oneselect_parse(p, last);
        if (rc != 0) {
            return rc;
        }
        node->compound = op;
        node->left = top;
        node->right = last;
        node->position = s->position;
        top = node;
        term_count++;
    }
    top->order_by = last->order_by;
    top->order_by_count = last->order_by_count;
    top->limit = last->limit;
    top->offset = last->offset;
    last->order_by = NULL;
    last->order_by_count = 0;
    last->limit = NULL;
    last->offset = NULL;
    *s = *top;
    return compound_check(p, s, term_count);
}

/* [WITH ...] select: the WITH (parse_with.c) goes on the top node, set
 * once compound_parse() has made it. */
static int select_body_parse(struct parser *p, struct ast_select *s)
{
    struct ast_with *with = NULL;
    int rc = 0;

    if (engine__parse_is(p, TOKEN_WITH)) {
        rc = engine__parse_with(p, &with);
        s->position = p->tok.offset;
    }
    rc = rc != 0 ? rc : oneselect_parse(p, s);
    if (rc == 0 && (engine__parse_is(p, TOKEN_UNION) ||
                    engine__parse_is(p, TOKEN_INTERSECT) ||
                    engine__parse_is(p, TOKEN_EXCEPT))) {
        rc = compound_parse(p, s);
    }
    s->with = with;
    return rc;
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
