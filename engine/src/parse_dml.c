/* SPDX-License-Identifier: MIT
 *
 * parse_dml.c: INSERT, REPLACE, UPDATE and DELETE, following src/parse.y
 * (3.40):
 *
 *   cmd ::= insert_cmd INTO xfullname idlist_opt select upsert
 *   cmd ::= insert_cmd INTO xfullname idlist_opt DEFAULT VALUES returning
 *   insert_cmd ::= INSERT orconf | REPLACE;  orconf ::= . | OR resolvetype
 *   xfullname ::= nm [DOT nm] [AS nm]
 *   upsert ::= . | RETURNING selcollist
 *            | ON CONFLICT LP sortlist RP where_opt DO UPDATE SET setlist
 *              where_opt upsert
 *            | ON CONFLICT LP sortlist RP where_opt DO NOTHING upsert
 *            | ON CONFLICT DO NOTHING returning
 *            | ON CONFLICT DO UPDATE SET setlist where_opt returning
 *   cmd ::= UPDATE orconf xfullname indexed_opt SET setlist from
 *           where_opt_ret
 *   cmd ::= DELETE FROM xfullname indexed_opt where_opt_ret
 *   setlist ::= nm EQ expr | LP idlist RP EQ expr, ...
 *
 * (a, b) = (x, y) becomes the assignments a = x and b = y; (a, b) =
 * (SELECT ...) stays one assignment of two columns (ast.h). SQLite's
 * "2 columns assigned 3 values" is reported for a count mismatch.
 */
#include "parse_int.h"

#include "common.h"

/* nm [. nm] [AS nm]: the schema form is not supported. */
static int xfullname_parse(struct parser *p, const char **table,
                           const char **alias)
{
    int rc = engine__parse_nm(p, table);

    if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
        return engine__parse_unsupported(p, "a schema qualifier");
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_AS)) {
        rc = engine__parse_nm(p, alias);
    }
    return rc;
}

/* idlist ::= nm, nm, ... */
static int idlist_parse(struct parser *p, const char ***out, size_t *count)
{
    struct parse_list list = {0};

    do {
        const char *name;
        int rc = engine__parse_nm(p, &name);

        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &name, sizeof(name));
        }
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    *out = list.items;
    *count = list.count;
    return 0;
}

/* orconf ::= . | OR resolvetype */
static int orconf_parse(struct parser *p, enum ast_conflict *out)
{
    if (!engine__parse_accept(p, TOKEN_OR)) {
        return 0;
    }
    return engine__parse_resolve_type(p, out);
}

static int returning_parse(struct parser *p, struct ast_returning *out)
{
    if (!engine__parse_accept(p, TOKEN_RETURNING)) {
        return 0;
    }
    return engine__parse_result_columns(p, &out->columns, &out->column_count);
}

/* ---- SET lists ---- */

/* The value of (a, b, ...) = ...: a parenthesized list of values, or one
 * expression (a subquery, typically). */
static int row_value_parse(struct parser *p, struct ast_expr_list *out)
{
    size_t start = p->tok.offset;
    enum token_kind next = engine__parse_peek(p, 1);
    struct ast_expr *single;
    int rc;

    if (!engine__parse_is(p, TOKEN_LP) || next == TOKEN_SELECT ||
        next == TOKEN_VALUES || next == TOKEN_WITH) {
        out->items = engine__parse_alloc(p, sizeof(*out->items));
        out->count = 1;
        if (out->items == NULL) {
            return COMMON_ENOMEM;
        }
        return engine__parse_expr(p, &out->items[0]);
    }
    engine__parse_advance(p);
    rc = engine__parse_expr_list(p, out);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc != 0 || out->count > 1) {
        return rc;
    }
    /* "(x) + 1": one parenthesized value, possibly an operand. */
    rc = engine__parse_expr_finish(p, out->items[0], start);
    if (rc == 0) {
        rc = engine__parse_expr_continue(p, out->items[0], &single);
    }
    if (rc == 0) {
        out->items[0] = single;
    }
    return rc;
}

/* ( idlist ) = value: one assignment per value, or one for a subquery. */
static int vector_assignment_parse(struct parser *p, struct parse_list *list)
{
    struct ast_assignment a = {0};
    struct ast_expr_list values;
    size_t offset;
    int rc;

    engine__parse_advance(p);
    rc = idlist_parse(p, &a.columns, &a.column_count);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_EQ);
    }
    offset = p->tok.offset;
    if (rc == 0) {
        rc = row_value_parse(p, &values);
    }
    if (rc != 0) {
        return rc;
    }
    if (values.count == 1 &&
        (a.column_count == 1 || values.items[0]->kind == AST_SUBQUERY)) {
        a.value = values.items[0];
        return engine__parse_list_push(p, list, &a, sizeof(a));
    }
    if (values.count != a.column_count) {
        return engine__parse_error(p, offset, "%zu columns assigned %zu values",
                                   a.column_count, values.count);
    }
    for (size_t i = 0; i < values.count && rc == 0; i++) {
        struct ast_assignment one = {.columns = &a.columns[i],
                                     .column_count = 1,
                                     .value = values.items[i]};

        rc = engine__parse_list_push(p, list, &one, sizeof(one));
    }
    return rc;
}

static int assignment_parse(struct parser *p, struct parse_list *list)
{
    struct ast_assignment a = {0};
    const char **column;
    int rc;

    if (engine__parse_is(p, TOKEN_LP)) {
        return vector_assignment_parse(p, list);
    }
    column = engine__parse_alloc(p, sizeof(*column));
    if (column == NULL) {
        return COMMON_ENOMEM;
    }
    rc = engine__parse_nm(p, column);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_EQ);
    }
    if (rc == 0) {
        rc = engine__parse_expr(p, &a.value);
    }
    if (rc != 0) {
        return rc;
    }
    a.columns = column;
    a.column_count = 1;
    return engine__parse_list_push(p, list, &a, sizeof(a));
}

static int setlist_parse(struct parser *p, struct ast_assignment **out,
                         size_t *count)
{
    struct parse_list list = {0};

    do {
        int rc = assignment_parse(p, &list);

        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    *out = list.items;
    *count = list.count;
    return 0;
}

/* ---- INSERT ---- */

/* ( sortlist ) [WHERE expr] of ON CONFLICT: plain column names only. */
static int upsert_target_parse(struct parser *p, struct ast_upsert *u)
{
    struct ast_order_item *items;
    size_t count;
    int rc;

    engine__parse_advance(p);
    rc = engine__parse_order_by(p, &items, &count);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc != 0) {
        return rc;
    }
    u->target_columns = engine__parse_alloc(p, count * sizeof(const char *));
    if (u->target_columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        const struct ast_expr *e = items[i].expr;

        if (e->kind != AST_COLUMN || e->u.column.table != NULL) {
            return engine__parse_error(
                p, e->position,
                "an ON CONFLICT target expression is not supported yet");
        }
        u->target_columns[i] = e->u.column.name;
    }
    u->target_column_count = count;
    if (engine__parse_accept(p, TOKEN_WHERE)) {
        return engine__parse_expr(p, &u->target_where);
    }
    return 0;
}

/* DO NOTHING | DO UPDATE SET setlist [WHERE expr] */
static int upsert_action_parse(struct parser *p, struct ast_upsert *u)
{
    int rc = engine__parse_expect(p, TOKEN_DO);

    if (rc == 0 && engine__parse_accept(p, TOKEN_NOTHING)) {
        u->do_nothing = true;
        return 0;
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_UPDATE);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_SET);
    }
    if (rc == 0) {
        rc = setlist_parse(p, &u->assignments, &u->assignment_count);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_WHERE)) {
        rc = engine__parse_expr(p, &u->where);
    }
    return rc;
}

/* ON CONFLICT clauses, in order; one without a target must be last. */
static int upserts_parse(struct parser *p, struct ast_insert *ins)
{
    struct parse_list list = {0};
    bool targeted = true;
    int rc = 0;

    while (rc == 0 && targeted && engine__parse_accept(p, TOKEN_ON)) {
        struct ast_upsert u = {0};

        rc = engine__parse_expect(p, TOKEN_CONFLICT);
        targeted = engine__parse_is(p, TOKEN_LP);
        if (rc == 0 && targeted) {
            rc = upsert_target_parse(p, &u);
        }
        if (rc == 0) {
            rc = upsert_action_parse(p, &u);
        }
        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &u, sizeof(u));
        }
    }
    ins->upserts = list.items;
    ins->upsert_count = list.count;
    return rc;
}

/* After the column list: DEFAULT VALUES, or a select and upserts. */
static int insert_source_parse(struct parser *p, struct ast_insert *ins)
{
    int rc;

    if (engine__parse_accept(p, TOKEN_DEFAULT)) {
        return engine__parse_expect(p, TOKEN_VALUES);
    }
    if (!engine__parse_is(p, TOKEN_SELECT) &&
        !engine__parse_is(p, TOKEN_VALUES) &&
        !engine__parse_is(p, TOKEN_WITH)) {
        return engine__parse_syntax_error(p);
    }
    rc = engine__parse_select(p, &ins->select);
    if (rc == 0) {
        rc = upserts_parse(p, ins);
    }
    return rc;
}

int engine__parse_insert(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_insert *ins = &stmt->u.insert;
    int rc = 0;

    stmt->kind = AST_STMT_INSERT;
    if (engine__parse_accept(p, TOKEN_REPLACE)) {
        ins->conflict = AST_CONFLICT_REPLACE;
    } else {
        engine__parse_advance(p);
        rc = orconf_parse(p, &ins->conflict);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_INTO);
    }
    if (rc == 0) {
        rc = xfullname_parse(p, &ins->table, &ins->alias);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_LP)) {
        rc = idlist_parse(p, &ins->columns, &ins->column_count);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
    }
    if (rc == 0) {
        rc = insert_source_parse(p, ins);
    }
    if (rc == 0) {
        rc = returning_parse(p, &ins->returning);
    }
    return rc;
}

/* ---- UPDATE and DELETE ---- */

/* ORDER BY and LIMIT on UPDATE and DELETE exist in SQLite builds with
 * SQLITE_ENABLE_UPDATE_DELETE_LIMIT (Debian's): ORDER BY alone is an
 * error there, LIMIT is not supported here. */
static int order_limit_refuse(struct parser *p, const char *verb)
{
    struct ast_order_item *items;
    size_t count;
    size_t offset = p->tok.offset;
    int rc;

    if (engine__parse_is(p, TOKEN_LIMIT)) {
        return engine__parse_error(p, offset,
                                   "LIMIT on %s is not supported yet", verb);
    }
    if (!engine__parse_accept(p, TOKEN_ORDER)) {
        return 0;
    }
    rc = engine__parse_expect(p, TOKEN_BY);
    if (rc == 0) {
        rc = engine__parse_order_by(p, &items, &count);
    }
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_is(p, TOKEN_LIMIT)) {
        return engine__parse_error(p, offset,
                                   "LIMIT on %s is not supported yet", verb);
    }
    return engine__parse_error(p, offset, "ORDER BY without LIMIT on %s", verb);
}

/* where_opt_ret ::= [WHERE expr] [RETURNING selcollist] */
static int where_returning_parse(struct parser *p, struct ast_expr **where,
                                 struct ast_returning *returning,
                                 const char *verb)
{
    int rc = 0;

    if (engine__parse_accept(p, TOKEN_WHERE)) {
        rc = engine__parse_expr(p, where);
    }
    if (rc == 0) {
        rc = returning_parse(p, returning);
    }
    if (rc == 0) {
        rc = order_limit_refuse(p, verb);
    }
    return rc;
}

int engine__parse_update(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_update *up = &stmt->u.update;
    int rc;

    stmt->kind = AST_STMT_UPDATE;
    engine__parse_advance(p);
    rc = orconf_parse(p, &up->conflict);
    if (rc == 0) {
        rc = xfullname_parse(p, &up->table, &up->alias);
    }
    if (rc == 0) {
        rc = engine__parse_index_hint(p, &up->hint);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_SET);
    }
    if (rc == 0) {
        rc = setlist_parse(p, &up->assignments, &up->assignment_count);
    }
    if (rc == 0 && engine__parse_is(p, TOKEN_FROM)) {
        return engine__parse_unsupported(p, "UPDATE FROM");
    }
    if (rc == 0) {
        rc = where_returning_parse(p, &up->where, &up->returning, "UPDATE");
    }
    return rc;
}

int engine__parse_delete(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_delete *del = &stmt->u.delete_;
    int rc;

    stmt->kind = AST_STMT_DELETE;
    engine__parse_advance(p);
    rc = engine__parse_expect(p, TOKEN_FROM);
    if (rc == 0) {
        rc = xfullname_parse(p, &del->table, &del->alias);
    }
    if (rc == 0) {
        rc = engine__parse_index_hint(p, &del->hint);
    }
    if (rc == 0) {
        rc = where_returning_parse(p, &del->where, &del->returning, "DELETE");
    }
    return rc;
}
