/* SPDX-License-Identifier: MIT
 *
 * parse_ddl.c: CREATE TABLE, CREATE INDEX and DROP, following
 * src/parse.y (3.40):
 *
 *   create_table ::= CREATE temp TABLE ifnotexists nm dbnm
 *   create_table_args ::= LP columnlist conslist_opt RP table_option_set
 *                       | AS select
 *   columnname ::= nm typetoken;  carglist ::= carglist ccons | .
 *   ccons ::= CONSTRAINT nm | DEFAULT ... | NULL onconf | NOT NULL onconf
 *           | PRIMARY KEY sortorder onconf autoinc | UNIQUE onconf
 *           | CHECK LP expr RP | COLLATE ids | REFERENCES ... | AS ...
 *   tcons ::= CONSTRAINT nm | PRIMARY KEY LP sortlist autoinc RP onconf
 *           | UNIQUE LP sortlist RP onconf | CHECK LP expr RP onconf
 *           | FOREIGN KEY ...     (table constraints need no commas)
 *   table_option ::= WITHOUT nm | nm     ("rowid" and "strict" only)
 *   cmd ::= CREATE uniqueflag INDEX ifnotexists nm dbnm
 *           ON nm LP sortlist RP where_opt
 *   cmd ::= DROP TABLE|INDEX ifexists fullname
 *
 * Views are parse_view.c's. Foreign keys, generated columns, triggers and
 * virtual tables are rejected with "... is not supported yet".
 */
#include "parse_int.h"

#include <strings.h>

#include "common.h"

int engine__parse_resolve_type(struct parser *p, enum ast_conflict *out)
{
    switch (p->tok.kind) {
    case TOKEN_ROLLBACK:
        *out = AST_CONFLICT_ROLLBACK;
        break;
    case TOKEN_ABORT:
        *out = AST_CONFLICT_ABORT;
        break;
    case TOKEN_FAIL:
        *out = AST_CONFLICT_FAIL;
        break;
    case TOKEN_IGNORE:
        *out = AST_CONFLICT_IGNORE;
        break;
    case TOKEN_REPLACE:
        *out = AST_CONFLICT_REPLACE;
        break;
    default:
        return engine__parse_syntax_error(p);
    }
    engine__parse_advance(p);
    return 0;
}

/* onconf ::= . | ON CONFLICT resolvetype */
static int onconf_parse(struct parser *p, enum ast_conflict *out)
{
    int rc;

    if (!engine__parse_accept(p, TOKEN_ON)) {
        return 0;
    }
    rc = engine__parse_expect(p, TOKEN_CONFLICT);
    if (rc != 0) {
        return rc;
    }
    return engine__parse_resolve_type(p, out);
}

/* IF NOT EXISTS / IF EXISTS */
static int if_parse(struct parser *p, bool not, bool *out)
{
    int rc;

    if (!engine__parse_accept(p, TOKEN_IF)) {
        return 0;
    }
    rc = not ? engine__parse_expect(p, TOKEN_NOT) : 0;
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_EXISTS);
    }
    *out = rc == 0;
    return rc;
}

/* nm [. nm]: the schema form is not supported. */
static int object_name_parse(struct parser *p, const char **out)
{
    int rc = engine__parse_nm(p, out);

    if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
        return engine__parse_unsupported(p, "a schema qualifier");
    }
    return rc;
}

/* sortlist as indexed columns; NULLS FIRST/LAST are refused as
 * SQLite refuses them there. */
static int indexed_columns_parse(struct parser *p,
                                 struct ast_indexed_column **out, size_t *count)
{
    struct ast_order_item *items;
    struct ast_indexed_column *columns;
    size_t n;
    int rc = engine__parse_order_by(p, &items, &n);

    if (rc != 0) {
        return rc;
    }
    columns = engine__parse_alloc(p, n * sizeof(*columns));
    if (columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (items[i].nulls != AST_NULLS_DEFAULT) {
            engine__parse_defer_error(
                p, items[i].expr->position, "unsupported use of NULLS %s",
                items[i].nulls == AST_NULLS_FIRST ? "FIRST" : "LAST");
        }
        columns[i].expr = items[i].expr;
        columns[i].descending = items[i].descending;
    }
    *out = columns;
    *count = n;
    return 0;
}

/* ---- column definitions ---- */

/* PRIMARY KEY [ASC|DESC] onconf [AUTOINCREMENT] */
static int column_primary_key_parse(struct parser *p, struct ast_column_def *c)
{
    int rc;

    engine__parse_advance(p);
    rc = engine__parse_expect(p, TOKEN_KEY);
    if (rc != 0) {
        return rc;
    }
    c->primary_key = true;
    if (engine__parse_accept(p, TOKEN_DESC)) {
        c->primary_key_descending = true;
    } else {
        engine__parse_accept(p, TOKEN_ASC);
    }
    rc = onconf_parse(p, &c->primary_key_conflict);
    if (rc == 0 && engine__parse_accept(p, TOKEN_AUTOINCREMENT)) {
        c->autoincrement = true;
    }
    return rc;
}

/* CHECK ( expr ), appended to checks. */
static int check_parse(struct parser *p, struct parse_list *checks)
{
    struct ast_expr *check;
    int rc;

    engine__parse_advance(p);
    rc = engine__parse_expect(p, TOKEN_LP);
    if (rc == 0) {
        rc = engine__parse_expr(p, &check);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0) {
        rc = engine__parse_list_push(p, checks, &check, sizeof(check));
    }
    return rc;
}

/* The constraints SQLite has and ast.h does not. */
static int column_unsupported(struct parser *p)
{
    switch (p->tok.kind) {
    case TOKEN_REFERENCES:
        return engine__parse_unsupported(p, "FOREIGN KEY");
    case TOKEN_DEFERRABLE:
    case TOKEN_NOT:
        return engine__parse_unsupported(p, "DEFERRABLE");
    default:
        return engine__parse_unsupported(p, "a generated column");
    }
}

/* One ccons; *more is false when the current token starts none. */
static int column_constraint_parse(struct parser *p, struct ast_column_def *c,
                                   struct parse_list *checks, bool *more)
{
    const char *name;
    enum ast_conflict nullable_conflict = AST_CONFLICT_DEFAULT;

    *more = true;
    switch (p->tok.kind) {
    case TOKEN_CONSTRAINT:
        engine__parse_advance(p);
        return engine__parse_nm(p, &name);
    case TOKEN_DEFAULT:
        engine__parse_advance(p);
        return engine__parse_default_value(p, &c->default_value);
    case TOKEN_NULL:
        engine__parse_advance(p);
        return onconf_parse(p, &nullable_conflict);
    case TOKEN_NOT:
        if (engine__parse_peek(p, 1) != TOKEN_NULL) {
            engine__parse_advance(p);
            return engine__parse_is(p, TOKEN_DEFERRABLE)
                       ? column_unsupported(p)
                       : engine__parse_syntax_error(p);
        }
        engine__parse_advance(p);
        engine__parse_advance(p);
        c->not_null = true;
        return onconf_parse(p, &c->not_null_conflict);
    case TOKEN_PRIMARY:
        return column_primary_key_parse(p, c);
    case TOKEN_UNIQUE:
        engine__parse_advance(p);
        c->unique = true;
        return onconf_parse(p, &c->unique_conflict);
    case TOKEN_CHECK:
        return check_parse(p, checks);
    case TOKEN_COLLATE:
        engine__parse_advance(p);
        if (!engine__parse_is_ids(p)) {
            return engine__parse_syntax_error(p);
        }
        return engine__parse_nm(p, &c->collation);
    case TOKEN_REFERENCES:
    case TOKEN_DEFERRABLE:
    case TOKEN_GENERATED:
    case TOKEN_AS:
        return column_unsupported(p);
    default:
        *more = false;
        return 0;
    }
}

static int column_def_parse(struct parser *p, struct ast_column_def *c)
{
    struct parse_list checks = {0};
    bool more = true;
    int rc;

    c->position = p->tok.offset;
    rc = engine__parse_nm(p, &c->name);
    if (rc == 0) {
        rc = engine__parse_type_name(p, &c->type_name);
    }
    while (rc == 0 && more) {
        rc = column_constraint_parse(p, c, &checks, &more);
    }
    c->checks.items = checks.items;
    c->checks.count = checks.count;
    return rc;
}

/* ---- table constraints ---- */

/* PRIMARY KEY ( sortlist [AUTOINCREMENT] ) onconf, UNIQUE ( sortlist )
 * onconf */
static int key_constraint_parse(struct parser *p,
                                struct ast_table_constraint *t)
{
    bool primary = engine__parse_is(p, TOKEN_PRIMARY);
    int rc;

    t->kind = primary ? AST_CONSTRAINT_PRIMARY_KEY : AST_CONSTRAINT_UNIQUE;
    engine__parse_advance(p);
    rc = primary ? engine__parse_expect(p, TOKEN_KEY) : 0;
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_LP);
    }
    if (rc == 0) {
        rc = indexed_columns_parse(p, &t->columns, &t->column_count);
    }
    if (rc == 0 && primary) {
        engine__parse_accept(p, TOKEN_AUTOINCREMENT);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0) {
        rc = onconf_parse(p, &t->conflict);
    }
    return rc;
}

/* One tcons. CONSTRAINT nm names the constraint that follows it. */
static int table_constraint_parse(struct parser *p, struct parse_list *list,
                                  const char **name)
{
    struct ast_table_constraint t = {0};
    struct parse_list checks = {0};
    int rc;

    switch (p->tok.kind) {
    case TOKEN_CONSTRAINT:
        engine__parse_advance(p);
        return engine__parse_nm(p, name);
    case TOKEN_PRIMARY:
    case TOKEN_UNIQUE:
        rc = key_constraint_parse(p, &t);
        break;
    case TOKEN_CHECK:
        t.kind = AST_CONSTRAINT_CHECK;
        rc = check_parse(p, &checks);
        if (rc == 0) {
            t.check = ((struct ast_expr **)checks.items)[0];
            rc = onconf_parse(p, &t.conflict);
        }
        break;
    case TOKEN_FOREIGN:
        return engine__parse_unsupported(p, "FOREIGN KEY");
    default:
        return engine__parse_syntax_error(p);
    }
    if (rc != 0) {
        return rc;
    }
    t.name = *name;
    *name = NULL;
    return engine__parse_list_push(p, list, &t, sizeof(t));
}

static bool is_table_constraint_start(const struct parser *p)
{
    enum token_kind kind = p->tok.kind;

    return kind == TOKEN_CONSTRAINT || kind == TOKEN_PRIMARY ||
           kind == TOKEN_UNIQUE || kind == TOKEN_CHECK || kind == TOKEN_FOREIGN;
}

/* conslist: constraints with optional commas between them, up to ')'. */
static int table_constraints_parse(struct parser *p,
                                   struct ast_create_table *ct)
{
    struct parse_list list = {0};
    const char *name = NULL;
    int rc = 0;

    do {
        rc = table_constraint_parse(p, &list, &name);
        if (rc == 0 && engine__parse_is(p, TOKEN_COMMA)) {
            engine__parse_advance(p);
            if (!is_table_constraint_start(p)) {
                return engine__parse_syntax_error(p);
            }
        }
    } while (rc == 0 && !engine__parse_is(p, TOKEN_RP));
    ct->constraints = list.items;
    ct->constraint_count = list.count;
    return rc;
}

/* ( columnlist [, conslist] ) */
static int table_elements_parse(struct parser *p, struct ast_create_table *ct)
{
    struct parse_list columns = {0};
    int rc = engine__parse_expect(p, TOKEN_LP);

    while (rc == 0) {
        struct ast_column_def c = {0};

        rc = column_def_parse(p, &c);
        if (rc == 0) {
            rc = engine__parse_list_push(p, &columns, &c, sizeof(c));
        }
        if (rc != 0 || !engine__parse_accept(p, TOKEN_COMMA)) {
            break;
        }
        if (is_table_constraint_start(p)) {
            rc = table_constraints_parse(p, ct);
            break;
        }
    }
    ct->columns = columns.items;
    ct->column_count = columns.count;
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    return rc;
}

/* table_option ::= WITHOUT nm | nm; only ROWID and STRICT are known. */
static int table_option_parse(struct parser *p, struct ast_create_table *ct)
{
    bool without = engine__parse_accept(p, TOKEN_WITHOUT);
    size_t offset = p->tok.offset;
    const char *name;
    int rc = engine__parse_nm(p, &name);

    if (rc != 0) {
        return rc;
    }
    if (without && strcasecmp(name, "rowid") == 0) {
        ct->without_rowid = true;
    } else if (!without && strcasecmp(name, "strict") == 0) {
        ct->strict = true;
    } else {
        engine__parse_defer_error(p, offset, "unknown table option: %s", name);
    }
    return 0;
}

static int table_options_parse(struct parser *p, struct ast_create_table *ct)
{
    if (!engine__parse_is(p, TOKEN_WITHOUT) && !engine__parse_is_nm(p)) {
        return 0;
    }
    do {
        int rc = table_option_parse(p, ct);

        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    return 0;
}

/* ---- statements ---- */

/* CREATE [TEMP] TABLE ..., the current token following CREATE [TEMP]. */
static int create_table_parse(struct parser *p, struct ast_stmt *stmt,
                              bool temporary)
{
    struct ast_create_table *ct = &stmt->u.create_table;
    int rc;

    stmt->kind = AST_STMT_CREATE_TABLE;
    ct->temporary = temporary;
    engine__parse_advance(p);
    rc = if_parse(p, true, &ct->if_not_exists);
    if (rc == 0) {
        rc = object_name_parse(p, &ct->name);
    }
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_AS)) {
        return engine__parse_select(p, &ct->as_select);
    }
    rc = table_elements_parse(p, ct);
    if (rc == 0) {
        rc = table_options_parse(p, ct);
    }
    return rc;
}

/* CREATE [UNIQUE] INDEX [IF NOT EXISTS] nm ON nm ( sortlist ) [WHERE] */
static int create_index_parse(struct parser *p, struct ast_stmt *stmt,
                              bool unique)
{
    struct ast_create_index *ci = &stmt->u.create_index;
    int rc;

    stmt->kind = AST_STMT_CREATE_INDEX;
    ci->unique = unique;
    engine__parse_advance(p);
    rc = if_parse(p, true, &ci->if_not_exists);
    if (rc == 0) {
        rc = object_name_parse(p, &ci->name);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_ON);
    }
    if (rc == 0) {
        rc = engine__parse_nm(p, &ci->table);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_LP);
    }
    if (rc == 0) {
        rc = indexed_columns_parse(p, &ci->columns, &ci->column_count);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_WHERE)) {
        rc = engine__parse_expr(p, &ci->where);
    }
    return rc;
}

int engine__parse_create(struct parser *p, struct ast_stmt *stmt)
{
    bool temporary = false;

    engine__parse_advance(p);
    if (engine__parse_is(p, TOKEN_TEMP) ||
        engine__parse_is(p, TOKEN_TEMPORARY)) {
        temporary = true;
        engine__parse_advance(p);
    }
    switch (p->tok.kind) {
    case TOKEN_TABLE:
        return create_table_parse(p, stmt, temporary);
    case TOKEN_VIEW:
        return engine__parse_create_view(p, stmt, temporary);
    case TOKEN_TRIGGER:
        return engine__parse_create_trigger(p, stmt, temporary);
    default:
        break;
    }
    if (!temporary && engine__parse_is(p, TOKEN_VIRTUAL)) {
        return engine__parse_unsupported(p, "CREATE VIRTUAL TABLE");
    }
    if (!temporary && engine__parse_accept(p, TOKEN_UNIQUE)) {
        if (!engine__parse_is(p, TOKEN_INDEX)) {
            return engine__parse_syntax_error(p);
        }
        return create_index_parse(p, stmt, true);
    }
    if (!temporary && engine__parse_is(p, TOKEN_INDEX)) {
        return create_index_parse(p, stmt, false);
    }
    return engine__parse_syntax_error(p);
}

int engine__parse_drop(struct parser *p, struct ast_stmt *stmt)
{
    int rc;

    engine__parse_advance(p);
    if (engine__parse_is(p, TOKEN_VIEW)) {
        return engine__parse_drop_view(p, stmt);
    }
    if (engine__parse_is(p, TOKEN_TRIGGER)) {
        return engine__parse_drop_trigger(p, stmt);
    }
    if (engine__parse_is(p, TOKEN_TABLE)) {
        stmt->kind = AST_STMT_DROP_TABLE;
    } else if (engine__parse_is(p, TOKEN_INDEX)) {
        stmt->kind = AST_STMT_DROP_INDEX;
    } else {
        return engine__parse_syntax_error(p);
    }
    engine__parse_advance(p);
    rc = if_parse(p, false, &stmt->u.drop.if_exists);
    if (rc == 0) {
        rc = object_name_parse(p, &stmt->u.drop.name);
    }
    return rc;
}

int engine__parse_column_def(struct parser *p, struct ast_column_def *c)
{
    return column_def_parse(p, c);
}
