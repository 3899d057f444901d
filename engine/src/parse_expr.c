/* SPDX-License-Identifier: MIT
 *
 * parse_expr.c: expressions, by precedence climbing over the operator
 * precedences of SQLite's src/parse.y (3.40), loosest first:
 *
 *     %left OR.
 *     %left AND.
 *     %right NOT.
 *     %left IS MATCH LIKE_KW BETWEEN IN ISNULL NOTNULL NE EQ.
 *     %left GT LE LT GE.
 *     %right ESCAPE.
 *     %left BITAND BITOR LSHIFT RSHIFT.
 *     %left PLUS MINUS.
 *     %left STAR SLASH REM.
 *     %left CONCAT PTR.
 *     %left COLLATE.
 *     %right BITNOT.     (also unary - and +)
 *
 * Two rules of the LALR grammar need care: BETWEEN's lower bound takes any
 * expression except an AND at its own top level ("x BETWEEN a OR b AND c"
 * reads "a OR b" as the bound), and prefix NOT parses its operand at NOT's
 * level wherever it appears ("1 + NOT 2 = 3" is "1 + (NOT (2 = 3))").
 *
 * Every node records its position and its source text; a parenthesized
 * expression's text includes the parentheses, as SQLite names a result
 * column "(1+2)". The height of the tree is bounded like SQLite's
 * sqlite3ExprCheckHeight(), the recursion by engine__parse_enter().
 */
#include "parse_int.h"

#include <string.h>

#include "common.h"

enum level {
    LEVEL_OR = 1,
    LEVEL_AND,
    LEVEL_NOT,
    LEVEL_EQ, /* = <> IS IN LIKE BETWEEN ISNULL NOTNULL NOT NULL */
    LEVEL_COMPARE,
    LEVEL_BIT,
    LEVEL_ADD,
    LEVEL_MULTIPLY,
    LEVEL_CONCAT,
    LEVEL_COLLATE,
    LEVEL_UNARY,
};

static int expr_at(struct parser *p, enum level min, bool stop_at_and,
                   struct ast_expr **out);

/* ---- heights ---- */

static int height_check(struct parser *p, int height, size_t offset)
{
    if (height > ENGINE_MAX_EXPR_DEPTH) {
        return engine__parse_error(
            p, offset, "Expression tree is too large (maximum depth %d)",
            ENGINE_MAX_EXPR_DEPTH);
    }
    p->height = height;
    return 0;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* ---- literals and parameters ---- */

static int integer_literal(struct parser *p, struct ast_expr *e)
{
    const char *text = p->sql + p->tok.offset;
    int64_t value = 0;
    double real = 0.0;

    switch (engine__token_integer(text, p->tok.size, &value)) {
    case TOKEN_INTEGER_FITS:
        e->u.literal = engine__value_int(value);
        break;
    case TOKEN_INTEGER_INT64_MIN_MAGNITUDE:
    case TOKEN_INTEGER_TOO_BIG:
        engine__text_to_number((const uint8_t *)text, p->tok.size, NULL, &real);
        e->u.literal = engine__value_real(real);
        break;
    case TOKEN_INTEGER_HEX_TOO_BIG:
        engine__parse_defer_error(p, p->tok.offset, "hex literal too big: %.*s",
                                  (int)p->tok.size, text);
        e->u.literal = engine__value_null();
        break;
    }
    return 0;
}

static int text_literal(struct parser *p, struct ast_expr *e)
{
    const char *text = p->sql + p->tok.offset;
    size_t size = 0;
    char *bytes;
    double real = 0.0;

    switch (p->tok.kind) {
    case TOKEN_FLOAT:
        engine__text_to_number((const uint8_t *)text, p->tok.size, NULL, &real);
        e->u.literal = engine__value_real(real);
        return 0;
    case TOKEN_STRING:
        bytes = engine__token_unquote(p->arena, text, p->tok.size, &size);
        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        e->u.literal = engine__value_text(bytes, size);
        return 0;
    case TOKEN_BLOB:
        return engine__token_blob(p->arena, text, p->tok.size, &e->u.literal);
    default:
        e->u.literal = engine__value_null();
        return 0;
    }
}

int engine__parse_literal(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    struct ast_expr *e = engine__parse_expr_new(p, AST_LITERAL, start);
    int rc;

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    if (p->tok.kind == TOKEN_INTEGER) {
        rc = integer_literal(p, e);
    } else {
        rc = text_literal(p, e);
    }
    if (rc != 0) {
        return rc;
    }
    engine__parse_advance(p);
    p->height = 1;
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

/* The number a parameter name already has, or 0. */
static int parameter_find(const struct parser *p, const char *name)
{
    for (int i = 1; i <= p->parameter_count; i++) {
        size_t index = (size_t)i;

        if (index < p->names_capacity && p->parameter_names[index] != NULL &&
            strcmp(p->parameter_names[index], name) == 0) {
            return i;
        }
    }
    return 0;
}

static int parameter_name_set(struct parser *p, int index, const char *name)
{
    size_t wanted = (size_t)index + 1;

    if (wanted > p->names_capacity) {
        size_t capacity = p->names_capacity == 0 ? 16 : p->names_capacity;
        const char **names;

        while (capacity < wanted) {
            capacity *= 2;
        }
        names = engine__parse_alloc(p, capacity * sizeof(*names));
        if (names == NULL) {
            return COMMON_ENOMEM;
        }
        if (p->names_capacity > 0) {
            memcpy(names, p->parameter_names,
                   p->names_capacity * sizeof(*names));
        }
        p->parameter_names = names;
        p->names_capacity = capacity;
    }
    if (p->parameter_names[index] == NULL) {
        p->parameter_names[index] = name;
    }
    return 0;
}

/* ?NNN: its number, or 0 when out of 1..ENGINE_MAX_VARIABLE_NUMBER. */
static int parameter_number(const char *digits, size_t size)
{
    long number = 0;

    if (size == 0 || size > 6) {
        return 0;
    }
    for (size_t i = 0; i < size; i++) {
        number = number * 10 + (digits[i] - '0');
    }
    if (number < 1 || number > ENGINE_MAX_VARIABLE_NUMBER) {
        return 0;
    }
    return (int)number;
}

/* sqlite3ExprAssignVarNumber(): ? takes the next number, ?NNN its own,
 * a name the number it had before or the next one. */
static int parameter_assign(struct parser *p, const char *name, size_t size,
                            int *index)
{
    if (size == 1) {
        *index = ++p->parameter_count;
    } else if (name[0] == '?') {
        *index = parameter_number(name + 1, size - 1);
        if (*index == 0) {
            return engine__parse_error(
                p, p->tok.offset, "variable number must be between ?1 and ?%d",
                ENGINE_MAX_VARIABLE_NUMBER);
        }
        p->parameter_count = max_int(p->parameter_count, *index);
    } else {
        *index = parameter_find(p, name);
        if (*index == 0) {
            *index = ++p->parameter_count;
        }
    }
    if (*index > ENGINE_MAX_VARIABLE_NUMBER) {
        return engine__parse_error(p, p->tok.offset, "too many SQL variables");
    }
    return size == 1 ? 0 : parameter_name_set(p, *index, name);
}

static int parameter_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    size_t size = p->tok.size;
    const char *text = p->sql + start;
    struct ast_expr *e;
    int rc;

    /* "#1" is only for SQLite's nested parses: a syntax error here. */
    if (text[0] == '#' && size > 1 && text[1] >= '0' && text[1] <= '9') {
        return engine__parse_syntax_error(p);
    }
    e = engine__parse_expr_new(p, AST_PARAMETER, start);
    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    if (size > 1) {
        e->u.parameter.name = engine__arena_strndup(p->arena, text, size);
        if (e->u.parameter.name == NULL) {
            return COMMON_ENOMEM;
        }
    }
    rc = parameter_assign(p, e->u.parameter.name, size, &e->u.parameter.index);
    if (rc != 0) {
        return rc;
    }
    engine__parse_advance(p);
    p->height = 1;
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

/* ---- type names ---- */

/* signed ::= [+|-] INTEGER|FLOAT */
static int signed_number_parse(struct parser *p)
{
    if (!engine__parse_accept(p, TOKEN_PLUS)) {
        engine__parse_accept(p, TOKEN_MINUS);
    }
    if (!engine__parse_accept(p, TOKEN_INTEGER) &&
        !engine__parse_accept(p, TOKEN_FLOAT)) {
        return engine__parse_syntax_error(p);
    }
    return 0;
}

int engine__parse_type_name(struct parser *p, const char **out)
{
    size_t start = p->tok.offset;
    int rc;

    *out = NULL;
    if (!engine__parse_is_ids(p)) {
        return 0;
    }
    /* GENERATED starts a column constraint, so it ends a type name. */
    while (engine__parse_is_ids(p) && !engine__parse_is(p, TOKEN_GENERATED)) {
        engine__parse_advance(p);
    }
    if (engine__parse_accept(p, TOKEN_LP)) {
        rc = signed_number_parse(p);
        if (rc == 0 && engine__parse_accept(p, TOKEN_COMMA)) {
            rc = signed_number_parse(p);
        }
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
        if (rc != 0) {
            return rc;
        }
    }
    *out = engine__parse_text(p, start);
    return *out == NULL ? COMMON_ENOMEM : 0;
}

/* ---- lists ---- */

int engine__parse_expr_list(struct parser *p, struct ast_expr_list *out)
{
    struct parse_list list = {0};
    int height = 0;

    do {
        struct ast_expr *e;
        int rc = engine__parse_expr(p, &e);

        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &e, sizeof(e));
        }
        if (rc != 0) {
            return rc;
        }
        height = max_int(height, p->height);
    } while (engine__parse_accept(p, TOKEN_COMMA));
    out->items = list.items;
    out->count = list.count;
    p->height = height;
    return 0;
}

/* "( select )" after the '(' was seen: the current token is SELECT,
 * VALUES or WITH. */
static int subquery_parse(struct parser *p, struct ast_select **out)
{
    int rc = engine__parse_expect(p, TOKEN_LP);

    if (rc == 0) {
        rc = engine__parse_select(p, out);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    p->height = 1;
    return rc;
}

static bool is_select_start(const struct parser *p, int n)
{
    enum token_kind kind = engine__parse_peek(p, n);

    return kind == TOKEN_SELECT || kind == TOKEN_VALUES || kind == TOKEN_WITH;
}

/* ---- function calls ---- */

/* FILTER (WHERE expr) and OVER, after a call's ')'. FILTER and OVER are
 * keywords only there (SQLite's analyzeFilterKeyword and
 * analyzeOverKeyword): FILTER before '(', OVER before '(' or a name. */
static int call_suffix_parse(struct parser *p, struct ast_expr *e)
{
    enum token_kind next;
    int rc;

    if (engine__parse_is(p, TOKEN_FILTER) &&
        engine__parse_peek(p, 1) == TOKEN_LP) {
        engine__parse_advance(p);
        engine__parse_advance(p);
        rc = engine__parse_expect(p, TOKEN_WHERE);
        if (rc == 0) {
            rc = engine__parse_expr(p, &e->u.function.filter);
        }
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
        if (rc != 0) {
            return rc;
        }
    }
    next = engine__parse_peek(p, 1);
    if (engine__parse_is(p, TOKEN_OVER) &&
        (next == TOKEN_LP || next == TOKEN_ID ||
         engine__token_is_fallback_id(next))) {
        return engine__parse_over(p, &e->u.function.over);
    }
    return 0;
}

/* id ( [DISTINCT|ALL] [exprlist] ) or id ( * ), the current token being
 * the '('. */
static int call_parse(struct parser *p, struct ast_expr *e)
{
    int height;
    int rc;

    engine__parse_advance(p);
    if (engine__parse_accept(p, TOKEN_STAR)) {
        e->u.function.star = true;
    } else {
        if (engine__parse_accept(p, TOKEN_DISTINCT)) {
            e->u.function.distinct = true;
        } else {
            engine__parse_accept(p, TOKEN_ALL);
        }
        if (!engine__parse_is(p, TOKEN_RP)) {
            rc = engine__parse_expr_list(p, &e->u.function.args);
            if (rc != 0) {
                return rc;
            }
        }
    }
    height = e->u.function.args.count > 0 ? p->height : 0;
    rc = engine__parse_expect(p, TOKEN_RP);
    if (rc == 0) {
        rc = call_suffix_parse(p, e);
    }
    if (rc != 0) {
        return rc;
    }
    if (e->u.function.filter != NULL) {
        height = max_int(height, p->height);
    }
    return height_check(p, height + 1, e->position);
}

/* ---- identifiers: columns, calls, booleans ---- */

static bool is_bare_word(const struct parser *p, const char *word)
{
    size_t size = strlen(word);
    const char *text = p->sql + p->tok.offset;

    if (p->tok.kind != TOKEN_ID || p->tok.size != size) {
        return false;
    }
    for (size_t i = 0; i < size; i++) {
        if ((text[i] | 0x20) != word[i]) {
            return false;
        }
    }
    return true;
}

/* nm . nm [. nm]: a qualified column; the current token is the first nm. */
static int qualified_column_parse(struct parser *p, struct ast_expr *e)
{
    int rc = engine__parse_nm(p, &e->u.column.table);

    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_DOT);
    }
    if (rc == 0) {
        rc = engine__parse_nm(p, &e->u.column.name);
    }
    if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
        return engine__parse_unsupported(p, "a schema qualifier");
    }
    return rc;
}

static int identifier_parse(struct parser *p, struct ast_expr *e)
{
    bool is_id = engine__parse_is_id(p);
    enum token_kind next = engine__parse_peek(p, 1);

    if (next == TOKEN_DOT) {
        e->kind = AST_COLUMN;
        return qualified_column_parse(p, e);
    }
    if (is_id && next == TOKEN_LP) {
        e->kind = AST_FUNCTION;
        e->u.function.name = engine__arena_strndup(
            p->arena, p->sql + p->tok.offset, p->tok.size);
        if (e->u.function.name == NULL) {
            return COMMON_ENOMEM;
        }
        engine__parse_advance(p);
        return call_parse(p, e);
    }
    if (is_bare_word(p, "true") || is_bare_word(p, "false")) {
        e->kind = AST_BOOLEAN;
        e->u.literal = engine__value_int(is_bare_word(p, "true") ? 1 : 0);
        engine__parse_advance(p);
        return 0;
    }
    e->kind = AST_COLUMN;
    return engine__parse_nm(p, &e->u.column.name);
}

/* ---- CASE, CAST, EXISTS, parentheses ---- */

/* WHEN expr THEN expr ..., into the two lists. */
static int case_arms_parse(struct parser *p, struct ast_expr *e, int *height)
{
    struct parse_list whens = {0};
    struct parse_list thens = {0};

    while (engine__parse_accept(p, TOKEN_WHEN)) {
        struct ast_expr *when;
        struct ast_expr *then;
        int rc = engine__parse_expr(p, &when);

        *height = max_int(*height, p->height);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_THEN);
        }
        if (rc == 0) {
            rc = engine__parse_expr(p, &then);
            *height = max_int(*height, p->height);
        }
        if (rc == 0) {
            rc = engine__parse_list_push(p, &whens, &when, sizeof(when));
        }
        if (rc == 0) {
            rc = engine__parse_list_push(p, &thens, &then, sizeof(then));
        }
        if (rc != 0) {
            return rc;
        }
    }
    if (whens.count == 0) {
        return engine__parse_syntax_error(p);
    }
    e->u.case_.whens.items = whens.items;
    e->u.case_.whens.count = whens.count;
    e->u.case_.thens.items = thens.items;
    e->u.case_.thens.count = thens.count;
    return 0;
}

/* CASE [expr] WHEN ... [ELSE expr] END */
static int case_parse(struct parser *p, struct ast_expr *e)
{
    int height = 0;
    int rc = 0;

    e->kind = AST_CASE;
    engine__parse_advance(p);
    if (!engine__parse_is(p, TOKEN_WHEN)) {
        rc = engine__parse_expr(p, &e->u.case_.operand);
        height = p->height;
    }
    if (rc == 0) {
        rc = case_arms_parse(p, e, &height);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_ELSE)) {
        rc = engine__parse_expr(p, &e->u.case_.else_);
        height = max_int(height, p->height);
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_END);
    }
    if (rc != 0) {
        return rc;
    }
    return height_check(p, height + 1, e->position);
}

/* CAST ( expr AS typetoken ) */
static int cast_parse(struct parser *p, struct ast_expr *e)
{
    int rc;
    int height;

    e->kind = AST_CAST;
    engine__parse_advance(p);
    rc = engine__parse_expect(p, TOKEN_LP);
    if (rc == 0) {
        rc = engine__parse_expr(p, &e->u.cast.operand);
    }
    height = p->height;
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_AS);
    }
    if (rc == 0) {
        rc = engine__parse_type_name(p, &e->u.cast.type_name);
    }
    if (rc == 0 && e->u.cast.type_name == NULL) {
        e->u.cast.type_name = "";
    }
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_RP);
    }
    if (rc != 0) {
        return rc;
    }
    return height_check(p, height + 1, e->position);
}

/* ( expr ), ( select ), or a row value (rejected). */
static int paren_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    struct ast_expr *e;
    int rc;

    if (is_select_start(p, 1)) {
        e = engine__parse_expr_new(p, AST_SUBQUERY, start);
        if (e == NULL) {
            return COMMON_ENOMEM;
        }
        rc = subquery_parse(p, &e->u.subquery.select);
    } else {
        engine__parse_advance(p);
        rc = engine__parse_expr(p, &e);
        if (rc == 0 && engine__parse_is(p, TOKEN_COMMA)) {
            return engine__parse_unsupported(p, "a row value");
        }
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
    }
    if (rc != 0) {
        return rc;
    }
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

/* CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP: calls without
 * arguments (parse.y "term ::= CTIME_KW"). */
static int time_keyword_parse(struct parser *p, struct ast_expr *e)
{
    e->kind = AST_FUNCTION;
    e->u.function.name =
        engine__arena_strndup(p->arena, p->sql + p->tok.offset, p->tok.size);
    if (e->u.function.name == NULL) {
        return COMMON_ENOMEM;
    }
    engine__parse_advance(p);
    return 0;
}

/* The kinds of primary expression that are one node over sub-parts. */
static int compound_primary_parse(struct parser *p, struct ast_expr *e)
{
    p->height = 1;
    switch (p->tok.kind) {
    case TOKEN_CASE:
        return case_parse(p, e);
    case TOKEN_CAST:
        return cast_parse(p, e);
    case TOKEN_EXISTS:
        e->kind = AST_EXISTS;
        engine__parse_advance(p);
        if (!engine__parse_is(p, TOKEN_LP)) {
            return engine__parse_syntax_error(p);
        }
        if (!is_select_start(p, 1)) {
            engine__parse_advance(p);
            return engine__parse_syntax_error(p);
        }
        return subquery_parse(p, &e->u.subquery.select);
    case TOKEN_CURRENT_DATE:
    case TOKEN_CURRENT_TIME:
    case TOKEN_CURRENT_TIMESTAMP:
        return time_keyword_parse(p, e);
    default:
        return identifier_parse(p, e);
    }
}

static bool is_identifier_start(const struct parser *p)
{
    return engine__parse_is_id(p) ||
           engine__parse_is_join_keyword(p->tok.kind) ||
           (p->tok.kind == TOKEN_STRING &&
            engine__parse_peek(p, 1) == TOKEN_DOT);
}

/* RAISE ( IGNORE ) | RAISE ( ROLLBACK|ABORT|FAIL , nm ) (parse.y's
 * "expr ::= RAISE LP raisetype COMMA nm RP"); whether it stands inside a
 * trigger program is the planner's question (trigger_plan.c). */
static int raise_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    struct ast_expr *e = engine__parse_expr_new(p, AST_RAISE, start);
    int rc = 0;

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    engine__parse_advance(p);
    engine__parse_advance(p);
    p->height = 1;
    if (engine__parse_accept(p, TOKEN_IGNORE)) {
        e->u.raise.action = AST_CONFLICT_IGNORE;
    } else {
        if (engine__parse_accept(p, TOKEN_ROLLBACK)) {
            e->u.raise.action = AST_CONFLICT_ROLLBACK;
        } else if (engine__parse_accept(p, TOKEN_ABORT)) {
            e->u.raise.action = AST_CONFLICT_ABORT;
        } else if (engine__parse_accept(p, TOKEN_FAIL)) {
            e->u.raise.action = AST_CONFLICT_FAIL;
        } else {
            return engine__parse_syntax_error(p);
        }
        rc = engine__parse_expect(p, TOKEN_COMMA);
        rc = rc != 0 ? rc : engine__parse_nm(p, &e->u.raise.message);
    }
    rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_RP);
    if (rc != 0) {
        return rc;
    }
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

static int primary_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    enum token_kind kind = p->tok.kind;
    struct ast_expr *e;
    int rc;

    if (kind == TOKEN_LP) {
        return paren_parse(p, out);
    }
    if (kind == TOKEN_VARIABLE) {
        return parameter_parse(p, out);
    }
    if (kind == TOKEN_RAISE && engine__parse_peek(p, 1) == TOKEN_LP) {
        return raise_parse(p, out);
    }
    if (kind == TOKEN_CASE || kind == TOKEN_CAST || kind == TOKEN_EXISTS ||
        kind == TOKEN_CURRENT_DATE || kind == TOKEN_CURRENT_TIME ||
        kind == TOKEN_CURRENT_TIMESTAMP || is_identifier_start(p)) {
        e = engine__parse_expr_new(p, AST_COLUMN, start);
        if (e == NULL) {
            return COMMON_ENOMEM;
        }
        rc = compound_primary_parse(p, e);
        if (rc != 0) {
            return rc;
        }
        *out = e;
        return engine__parse_expr_finish(p, e, start);
    }
    if (kind == TOKEN_INTEGER || kind == TOKEN_FLOAT || kind == TOKEN_STRING ||
        kind == TOKEN_BLOB || kind == TOKEN_NULL) {
        return engine__parse_literal(p, out);
    }
    return engine__parse_syntax_error(p);
}

/* ---- prefix operators ---- */

/* The first token of the literal under any parentheses of e. */
static void literal_token(const struct parser *p, const struct ast_expr *e,
                          struct token *out)
{
    engine__token_scan(p->sql, p->size, e->position, out);
    while (out->kind == TOKEN_SPACE || out->kind == TOKEN_LP) {
        engine__token_scan(p->sql, p->size, out->offset + out->size, out);
    }
}

/* SQLite negates an integer literal while generating code (codeInteger):
 * -9223372036854775808 is INT64_MIN, and a hex literal that is too big
 * is reported with its sign. */
static int negative_literal_fold(struct parser *p, struct ast_expr *e,
                                 struct ast_expr *operand)
{
    struct token t;
    const char *text;
    int64_t value = 0;

    if (operand->kind != AST_LITERAL || operand->is_false) {
        return 0;
    }
    literal_token(p, operand, &t);
    if (t.kind != TOKEN_INTEGER) {
        return 0;
    }
    text = p->sql + t.offset;
    switch (engine__token_integer(text, t.size, &value)) {
    case TOKEN_INTEGER_INT64_MIN_MAGNITUDE:
        e->kind = AST_LITERAL;
        e->u.literal = engine__value_int(INT64_MIN);
        return 0;
    case TOKEN_INTEGER_FITS:
        if (value != INT64_MIN) {
            return 0;
        }
        break;
    case TOKEN_INTEGER_TOO_BIG:
        return 0;
    case TOKEN_INTEGER_HEX_TOO_BIG:
        if (p->deferred_offset != t.offset) {
            return 0;
        }
        p->deferred[0] = '\0';
        break;
    }
    engine__parse_defer_error(p, t.offset, "hex literal too big: -%.*s",
                              (int)t.size, text);
    return 0;
}

static int prefix_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    enum token_kind kind = p->tok.kind;
    struct ast_expr *e;
    int rc;

    if (kind != TOKEN_NOT && kind != TOKEN_MINUS && kind != TOKEN_PLUS &&
        kind != TOKEN_BITNOT) {
        return primary_parse(p, out);
    }
    e = engine__parse_expr_new(p, AST_UNARY, start);
    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    e->u.unary.op = kind == TOKEN_NOT     ? AST_NOT
                    : kind == TOKEN_MINUS ? AST_NEGATE
                    : kind == TOKEN_PLUS  ? AST_PLUS
                                          : AST_BIT_NOT;
    engine__parse_advance(p);
    rc = expr_at(p, kind == TOKEN_NOT ? LEVEL_NOT : LEVEL_UNARY, false,
                 &e->u.unary.operand);
    if (rc == 0 && kind == TOKEN_MINUS) {
        rc = negative_literal_fold(p, e, e->u.unary.operand);
    }
    if (rc == 0) {
        rc = height_check(p, p->height + 1, start);
    }
    if (rc != 0) {
        return rc;
    }
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

/* ---- infix and postfix operators ---- */

static enum level infix_level(const struct parser *p)
{
    switch (p->tok.kind) {
    case TOKEN_OR:
        return LEVEL_OR;
    case TOKEN_AND:
        return LEVEL_AND;
    case TOKEN_EQ:
    case TOKEN_NE:
    case TOKEN_IS:
    case TOKEN_ISNULL:
    case TOKEN_NOTNULL:
    case TOKEN_NOT:
    case TOKEN_IN:
    case TOKEN_LIKE:
    case TOKEN_GLOB:
    case TOKEN_REGEXP:
    case TOKEN_MATCH:
    case TOKEN_BETWEEN:
        return LEVEL_EQ;
    case TOKEN_LT:
    case TOKEN_LE:
    case TOKEN_GT:
    case TOKEN_GE:
        return LEVEL_COMPARE;
    case TOKEN_BITAND:
    case TOKEN_BITOR:
    case TOKEN_LSHIFT:
    case TOKEN_RSHIFT:
        return LEVEL_BIT;
    case TOKEN_PLUS:
    case TOKEN_MINUS:
        return LEVEL_ADD;
    case TOKEN_STAR:
    case TOKEN_SLASH:
    case TOKEN_REM:
        return LEVEL_MULTIPLY;
    case TOKEN_CONCAT:
    case TOKEN_PTR:
        return LEVEL_CONCAT;
    case TOKEN_COLLATE:
        return LEVEL_COLLATE;
    default:
        return 0;
    }
}

static enum ast_binary_op binary_op(enum token_kind kind)
{
    switch (kind) {
    case TOKEN_OR:
        return AST_OR;
    case TOKEN_AND:
        return AST_AND;
    case TOKEN_EQ:
        return AST_EQ;
    case TOKEN_NE:
        return AST_NE;
    case TOKEN_LT:
        return AST_LT;
    case TOKEN_LE:
        return AST_LE;
    case TOKEN_GT:
        return AST_GT;
    case TOKEN_GE:
        return AST_GE;
    case TOKEN_BITAND:
        return AST_BIT_AND;
    case TOKEN_BITOR:
        return AST_BIT_OR;
    case TOKEN_LSHIFT:
        return AST_SHIFT_LEFT;
    case TOKEN_RSHIFT:
        return AST_SHIFT_RIGHT;
    case TOKEN_PLUS:
        return AST_ADD;
    case TOKEN_MINUS:
        return AST_SUBTRACT;
    case TOKEN_STAR:
        return AST_MULTIPLY;
    case TOKEN_SLASH:
        return AST_DIVIDE;
    case TOKEN_REM:
        return AST_REMAINDER;
    default:
        return AST_CONCAT;
    }
}

/* x [NOT] BETWEEN low AND high, the current token being BETWEEN. */
static int between_parse(struct parser *p, struct ast_expr *e, int *height)
{
    int rc;

    e->kind = AST_BETWEEN;
    engine__parse_advance(p);
    rc = expr_at(p, LEVEL_OR, true, &e->u.between.low);
    *height = max_int(*height, p->height);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_AND);
    }
    if (rc == 0) {
        rc = expr_at(p, LEVEL_COMPARE, false, &e->u.between.high);
        *height = max_int(*height, p->height);
    }
    return rc;
}

/* x [NOT] LIKE|GLOB|REGEXP|MATCH pattern [ESCAPE e] */
static int like_parse(struct parser *p, struct ast_expr *e, int *height)
{
    enum token_kind kind = p->tok.kind;
    int rc;

    e->kind = AST_LIKE;
    e->u.like.like_kind = kind == TOKEN_LIKE     ? AST_LIKE_LIKE
                          : kind == TOKEN_GLOB   ? AST_LIKE_GLOB
                          : kind == TOKEN_REGEXP ? AST_LIKE_REGEXP
                                                 : AST_LIKE_MATCH;
    engine__parse_advance(p);
    rc = expr_at(p, LEVEL_COMPARE, false, &e->u.like.pattern);
    *height = max_int(*height, p->height);
    if (rc == 0 && engine__parse_accept(p, TOKEN_ESCAPE)) {
        rc = expr_at(p, LEVEL_COMPARE, false, &e->u.like.escape);
        *height = max_int(*height, p->height);
    }
    return rc;
}

/* x [NOT] IN table: parse.y makes it x IN (SELECT * FROM table), so a
 * table of other than one column fails as that subquery would ("sub-select
 * returns 2 columns - expected 1"). */
static int in_table_parse(struct parser *p, struct ast_expr *e)
{
    struct ast_select *select = engine__parse_alloc(p, sizeof(*select));
    struct ast_result_column *star = engine__parse_alloc(p, sizeof(*star));
    struct ast_from_item *item = engine__parse_alloc(p, sizeof(*item));
    int rc;

    if (select == NULL || star == NULL || item == NULL) {
        return COMMON_ENOMEM;
    }
    select->position = p->tok.offset;
    item->position = p->tok.offset;
    star->kind = AST_RESULT_STAR;
    star->position = p->tok.offset;
    rc = engine__parse_nm(p, &item->table);
    if (rc == 0 && engine__parse_is(p, TOKEN_DOT)) {
        return engine__parse_unsupported(p, "a schema qualifier");
    }
    if (rc == 0 && engine__parse_is(p, TOKEN_LP)) {
        return engine__parse_unsupported(p, "a table-valued function");
    }
    select->columns = star;
    select->column_count = 1;
    select->from = item;
    select->from_count = 1;
    e->kind = AST_IN_SELECT;
    e->u.in_select.select = select;
    return rc;
}

/* x [NOT] IN ( [list] ), ( select ) or table. The caller set the operand
 * and negation of every form. */
static int in_parse(struct parser *p, struct ast_expr *e, int *height)
{
    int rc;

    engine__parse_advance(p);
    if (!engine__parse_is(p, TOKEN_LP)) {
        if (engine__parse_is_nm(p)) {
            return in_table_parse(p, e);
        }
        return engine__parse_syntax_error(p);
    }
    if (is_select_start(p, 1)) {
        e->kind = AST_IN_SELECT;
        return subquery_parse(p, &e->u.in_select.select);
    }
    e->kind = AST_IN_LIST;
    engine__parse_advance(p);
    if (!engine__parse_is(p, TOKEN_RP)) {
        rc = engine__parse_expr_list(p, &e->u.in_list.items);
        if (rc != 0) {
            return rc;
        }
        *height = max_int(*height, p->height);
    }
    return engine__parse_expect(p, TOKEN_RP);
}

/* x IS [NOT] [DISTINCT FROM] y; IS [NOT] NULL becomes a NULL test. */
static int is_parse(struct parser *p, struct ast_expr *e, struct ast_expr *left,
                    int *height)
{
    bool not = false;
    struct ast_expr *right;
    int rc;

    engine__parse_advance(p);
    if (engine__parse_accept(p, TOKEN_NOT)) {
        not = true;
    }
    if (engine__parse_accept(p, TOKEN_DISTINCT)) {
        rc = engine__parse_expect(p, TOKEN_FROM);
        if (rc != 0) {
            return rc;
        }
        not = !not ;
    }
    rc = expr_at(p, LEVEL_COMPARE, false, &right);
    if (rc != 0) {
        return rc;
    }
    *height = max_int(*height, p->height);
    if (right->kind == AST_LITERAL && right->u.literal.type == ENGINE_NULL) {
        e->kind = not ? AST_NOT_NULL : AST_IS_NULL;
        e->u.unary.operand = left;
        return 0;
    }
    e->kind = AST_BINARY;
    e->u.binary.op = not ? AST_IS_NOT : AST_IS;
    e->u.binary.left = left;
    e->u.binary.right = right;
    return 0;
}

/* The operators of the equality level that are not plain binary ones. */
static int equality_parse(struct parser *p, struct ast_expr *e,
                          struct ast_expr *left, int *height)
{
    enum token_kind kind = p->tok.kind;
    bool negated = false;

    e->u.unary.operand = left;
    if (kind == TOKEN_ISNULL || kind == TOKEN_NOTNULL) {
        e->kind = kind == TOKEN_ISNULL ? AST_IS_NULL : AST_NOT_NULL;
        engine__parse_advance(p);
        return 0;
    }
    if (kind == TOKEN_IS) {
        return is_parse(p, e, left, height);
    }
    if (kind == TOKEN_NOT) {
        engine__parse_advance(p);
        kind = p->tok.kind;
        negated = true;
        if (engine__parse_accept(p, TOKEN_NULL)) {
            e->kind = AST_NOT_NULL;
            return 0;
        }
    }
    switch (kind) {
    case TOKEN_BETWEEN:
        e->u.between.negated = negated;
        e->u.between.operand = left;
        return between_parse(p, e, height);
    case TOKEN_IN:
        e->u.in_list.negated = negated;
        e->u.in_list.operand = left;
        e->u.in_select.negated = negated;
        e->u.in_select.operand = left;
        return in_parse(p, e, height);
    case TOKEN_LIKE:
    case TOKEN_GLOB:
    case TOKEN_REGEXP:
    case TOKEN_MATCH:
        e->u.like.negated = negated;
        e->u.like.operand = left;
        return like_parse(p, e, height);
    default:
        return engine__parse_syntax_error(p);
    }
}

/* left COLLATE ids */
static int collate_parse(struct parser *p, struct ast_expr *e,
                         struct ast_expr *left)
{
    e->kind = AST_COLLATE;
    e->u.collate.operand = left;
    engine__parse_advance(p);
    if (!engine__parse_is_ids(p)) {
        return engine__parse_syntax_error(p);
    }
    return engine__parse_nm(p, &e->u.collate.name);
}

/* SQLite's EP_IsFalse: an integer literal token 0 ("0", "00", "0x0"),
 * "x IN ()" (parse.y makes it the keyword FALSE), or an AND already folded
 * to 0. */
static bool always_false(const struct parser *p, const struct ast_expr *e)
{
    struct token t;

    if (e->is_false ||
        (e->kind == AST_IN_LIST && e->u.in_list.items.count == 0 &&
         !e->u.in_list.negated)) {
        return true;
    }
    if (e->kind != AST_LITERAL || e->u.literal.type != ENGINE_INTEGER ||
        e->u.literal.u.i != 0) {
        return false;
    }
    literal_token(p, e, &t);
    return t.kind == TOKEN_INTEGER;
}

/* sqlite3ExprAnd (expr.c) builds "x AND 0" and "0 AND x" as the integer 0
 * while parsing: x is dropped unresolved and unevaluated, so an aggregate
 * in it no longer makes the query an aggregate, and its errors vanish. */
static void and_fold(const struct parser *p, struct ast_expr *e)
{
    if (e->kind == AST_BINARY && e->u.binary.op == AST_AND &&
        (always_false(p, e->u.binary.left) ||
         always_false(p, e->u.binary.right))) {
        e->kind = AST_LITERAL;
        e->u.literal = engine__value_int(0);
        e->is_false = true;
    }
}

/* left -> right and left ->> right: SQLite's parse.y makes them calls of
 * the functions named "->" and "->>" (expr ::= expr PTR expr), at the
 * level of ||. */
static int ptr_parse(struct parser *p, struct ast_expr *e,
                     struct ast_expr *left, int *height)
{
    struct ast_expr **args = engine__arena_alloc(p->arena, 2 * sizeof(*args));
    int rc;

    if (args == NULL) {
        return COMMON_ENOMEM;
    }
    e->kind = AST_FUNCTION;
    e->u.function.name = p->tok.size == 2 ? "->" : "->>";
    e->u.function.args.items = args;
    e->u.function.args.count = 2;
    args[0] = left;
    engine__parse_advance(p);
    rc = expr_at(p, LEVEL_CONCAT + 1, false, &args[1]);
    *height = max_int(*height, p->height);
    return rc;
}

/* One infix or postfix operator applied to *left (replaced by the new
 * node), the current token being the operator at level. */
static int infix_parse(struct parser *p, enum level level,
                       struct ast_expr **left)
{
    enum token_kind kind = p->tok.kind;
    struct ast_expr *e =
        engine__parse_expr_new(p, AST_BINARY, (*left)->position);
    int height = p->height;
    int rc;

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    if (kind == TOKEN_PTR) {
        rc = ptr_parse(p, e, *left, &height);
    } else if (kind == TOKEN_COLLATE) {
        rc = collate_parse(p, e, *left);
    } else if (level == LEVEL_EQ && kind != TOKEN_EQ && kind != TOKEN_NE) {
        rc = equality_parse(p, e, *left, &height);
    } else {
        e->u.binary.op = binary_op(kind);
        e->u.binary.left = *left;
        engine__parse_advance(p);
        /* All binary operators are left-associative. */
        rc = expr_at(p, level + 1, false, &e->u.binary.right);
        height = max_int(height, p->height);
    }
    if (rc == 0) {
        rc = height_check(p, height + 1, e->position);
    }
    if (rc != 0) {
        return rc;
    }
    and_fold(p, e);
    *left = e;
    return engine__parse_expr_finish(p, e, e->position);
}

/* Applies the operators of at least level min that follow *left. */
static int infix_loop(struct parser *p, enum level min, bool stop_at_and,
                      struct ast_expr **left)
{
    int rc = 0;

    while (rc == 0) {
        enum level level = infix_level(p);

        if (level == 0 || level < min ||
            (stop_at_and && p->tok.kind == TOKEN_AND)) {
            break;
        }
        rc = infix_parse(p, level, left);
    }
    return rc;
}

static int expr_at(struct parser *p, enum level min, bool stop_at_and,
                   struct ast_expr **out)
{
    struct ast_expr *left = NULL;
    int rc = engine__parse_enter(p);

    if (rc != 0) {
        return rc;
    }
    rc = prefix_parse(p, &left);
    if (rc == 0) {
        rc = infix_loop(p, min, stop_at_and, &left);
    }
    engine__parse_leave(p);
    if (rc == 0) {
        *out = left;
    }
    return rc;
}

int engine__parse_expr_continue(struct parser *p, struct ast_expr *left,
                                struct ast_expr **out)
{
    int rc = engine__parse_enter(p);

    if (rc != 0) {
        return rc;
    }
    rc = infix_loop(p, LEVEL_OR, false, &left);
    engine__parse_leave(p);
    if (rc == 0) {
        *out = left;
    }
    return rc;
}

int engine__parse_expr(struct parser *p, struct ast_expr **out)
{
    return expr_at(p, LEVEL_OR, false, out);
}

static bool is_term_start(enum token_kind kind)
{
    return kind == TOKEN_NULL || kind == TOKEN_INTEGER || kind == TOKEN_FLOAT ||
           kind == TOKEN_STRING || kind == TOKEN_BLOB ||
           kind == TOKEN_CURRENT_DATE || kind == TOKEN_CURRENT_TIME ||
           kind == TOKEN_CURRENT_TIMESTAMP;
}

/* DEFAULT id: the name as a string (parse.y "ccons ::= DEFAULT scantok
 * id", then sqlite3ExprIdToTrueFalse()). */
static int default_id_parse(struct parser *p, struct ast_expr **out)
{
    size_t start = p->tok.offset;
    struct ast_expr *e = engine__parse_expr_new(p, AST_LITERAL, start);
    size_t size = 0;
    char *text;

    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    if (is_bare_word(p, "true") || is_bare_word(p, "false")) {
        e->kind = AST_BOOLEAN;
        e->u.literal = engine__value_int(is_bare_word(p, "true") ? 1 : 0);
    } else {
        text =
            engine__token_unquote(p->arena, p->sql + start, p->tok.size, &size);
        if (text == NULL) {
            return COMMON_ENOMEM;
        }
        e->u.literal = engine__value_text(text, size);
    }
    engine__parse_advance(p);
    *out = e;
    return engine__parse_expr_finish(p, e, start);
}

int engine__parse_default_value(struct parser *p, struct ast_expr **out)
{
    enum token_kind kind = p->tok.kind;

    p->height = 1;
    if (kind == TOKEN_LP) {
        return paren_parse(p, out);
    }
    if (kind == TOKEN_PLUS || kind == TOKEN_MINUS) {
        if (!is_term_start(engine__parse_peek(p, 1))) {
            engine__parse_advance(p);
            return engine__parse_syntax_error(p);
        }
        return prefix_parse(p, out);
    }
    if (is_term_start(kind)) {
        return primary_parse(p, out);
    }
    if (engine__parse_is_id(p)) {
        return default_id_parse(p, out);
    }
    return engine__parse_syntax_error(p);
}
