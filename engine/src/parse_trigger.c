/* SPDX-License-Identifier: MIT
 *
 * parse_trigger.c: CREATE TRIGGER and DROP TRIGGER, following src/parse.y
 * (3.40):
 *
 *   cmd ::= createkw trigger_decl BEGIN trigger_cmd_list END
 *   trigger_decl ::= temp TRIGGER ifnotexists nm dbnm trigger_time
 *                    trigger_event ON fullname foreach_clause when_clause
 *   trigger_time ::= BEFORE | AFTER | INSTEAD OF | .
 *   trigger_event ::= DELETE | INSERT | UPDATE | UPDATE OF idlist
 *   foreach_clause ::= . | FOR EACH ROW
 *   when_clause ::= . | WHEN expr
 *   trigger_cmd_list ::= trigger_cmd SEMI ...
 *   cmd ::= DROP TRIGGER ifexists fullname
 *
 * The steps are parsed by the ordinary INSERT, UPDATE, DELETE and SELECT
 * rules (a SELECT step, or an INSERT's SELECT, may have a WITH; only
 * those); what a trigger step may not have (RETURNING, DEFAULT VALUES, a
 * qualified table) is refused afterwards with SQLite's words where it has
 * its own. A trigger holds no parameters ("trigger cannot use variables",
 * sqlite3BeginTrigger's caller).
 */
#include "parse_int.h"

#include <strings.h>

#include "common.h"

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

/* nm [. nm]: only the main and temp schemas are known here; *schema is
 * the one written, or NULL. */
static int two_part_name(struct parser *p, const char **schema,
                         const char **name, size_t *name_offset)
{
    size_t schema_offset = p->tok.offset;
    int rc;

    *schema = NULL;
    *name_offset = p->tok.offset;
    rc = engine__parse_nm(p, name);
    if (rc == 0 && engine__parse_accept(p, TOKEN_DOT)) {
        *schema = *name;
        *name_offset = p->tok.offset;
        rc = engine__parse_nm(p, name);
        if (rc == 0 && strcasecmp(*schema, "main") != 0 &&
            strcasecmp(*schema, "temp") != 0) {
            return engine__parse_error(p, schema_offset, "unknown database %s",
                                       *schema);
        }
    }
    return rc;
}

/* trigger_time trigger_event */
static int timing_event_parse(struct parser *p, struct ast_create_trigger *ct)
{
    struct parse_list columns = {0};

    if (engine__parse_accept(p, TOKEN_AFTER)) {
        ct->timing = AST_TRIGGER_AFTER;
    } else if (engine__parse_accept(p, TOKEN_INSTEAD)) {
        int rc = engine__parse_expect(p, TOKEN_OF);

        if (rc != 0) {
            return rc;
        }
        ct->timing = AST_TRIGGER_INSTEAD_OF;
    } else {
        engine__parse_accept(p, TOKEN_BEFORE);
        ct->timing = AST_TRIGGER_BEFORE;
    }
    if (engine__parse_accept(p, TOKEN_DELETE)) {
        ct->event = AST_TRIGGER_DELETE;
        return 0;
    }
    if (engine__parse_accept(p, TOKEN_INSERT)) {
        ct->event = AST_TRIGGER_INSERT;
        return 0;
    }
    if (!engine__parse_accept(p, TOKEN_UPDATE)) {
        return engine__parse_syntax_error(p);
    }
    ct->event = AST_TRIGGER_UPDATE;
    if (!engine__parse_accept(p, TOKEN_OF)) {
        return 0;
    }
    do {
        const char *name;
        int rc = engine__parse_nm(p, &name);

        rc = rc != 0
                 ? rc
                 : engine__parse_list_push(p, &columns, &name, sizeof(name));
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    ct->columns = columns.items;
    ct->column_count = columns.count;
    return 0;
}

/* ON fullname [FOR EACH ROW] [WHEN expr] */
static int target_parse(struct parser *p, struct ast_create_trigger *ct)
{
    size_t offset;
    int rc = engine__parse_expect(p, TOKEN_ON);

    rc =
        rc != 0 ? rc : two_part_name(p, &ct->table_schema, &ct->table, &offset);
    if (rc == 0 && engine__parse_accept(p, TOKEN_FOR)) {
        rc = engine__parse_expect(p, TOKEN_EACH);
        rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_ROW);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_WHEN)) {
        rc = engine__parse_expr(p, &ct->when);
    }
    return rc;
}

/* What SQLite's trigger_cmd rules do not have: RETURNING, DEFAULT
 * VALUES, INDEXED BY and NOT INDEXED. */
static int step_check(struct parser *p, const struct ast_stmt *step)
{
    const struct ast_index_hint *hint = NULL;
    bool returning = false;

    if (step->kind == AST_STMT_INSERT) {
        returning = step->u.insert.returning.columns != NULL;
        if (step->u.insert.select == NULL) {
            return engine__parse_error(p, step->position,
                                       "near \"DEFAULT\": syntax error");
        }
    } else if (step->kind == AST_STMT_UPDATE) {
        returning = step->u.update.returning.columns != NULL;
        hint = &step->u.update.hint;
    } else if (step->kind == AST_STMT_DELETE) {
        returning = step->u.delete_.returning.columns != NULL;
        hint = &step->u.delete_.hint;
    }
    /* An INSERT's RETURNING is parse.y's upsert rule, whose action
     * (sqlite3AddReturning) refuses it inside a trigger; UPDATE's and
     * DELETE's are not in the trigger_cmd rules at all. */
    if (returning && step->kind == AST_STMT_INSERT) {
        return engine__parse_error(p, step->position,
                                   "cannot use RETURNING in a trigger");
    }
    if (returning) {
        return engine__parse_error(p, step->position,
                                   "near \"RETURNING\": syntax error");
    }
    if (hint != NULL && (hint->indexed_by != NULL || hint->not_indexed)) {
        return engine__parse_error(
            p, step->position,
            "the %s clause is not allowed on UPDATE or DELETE statements "
            "within triggers",
            hint->not_indexed ? "NOT INDEXED" : "INDEXED BY");
    }
    return 0;
}

/* One trigger_cmd and its ';'. */
static int step_parse(struct parser *p, struct ast_stmt **out)
{
    struct ast_stmt *step = engine__parse_alloc(p, sizeof(*step));
    int rc;

    if (step == NULL) {
        return COMMON_ENOMEM;
    }
    step->position = p->tok.offset;
    switch (p->tok.kind) {
    case TOKEN_SELECT:
    case TOKEN_VALUES:
    case TOKEN_WITH: /* parse.y's select: a WITH before INSERT, UPDATE or
                        DELETE is a syntax error in a trigger */
        step->kind = AST_STMT_SELECT;
        rc = engine__parse_select(p, &step->u.select);
        break;
    case TOKEN_INSERT:
    case TOKEN_REPLACE:
        rc = engine__parse_insert(p, step);
        break;
    case TOKEN_UPDATE:
        rc = engine__parse_update(p, step);
        break;
    case TOKEN_DELETE:
        rc = engine__parse_delete(p, step);
        break;
    default:
        return engine__parse_syntax_error(p);
    }
    rc = rc != 0 ? rc : step_check(p, step);
    rc = rc != 0 ? rc : engine__parse_expect(p, TOKEN_SEMI);
    *out = step;
    return rc;
}

/* BEGIN trigger_cmd_list END */
static int body_parse(struct parser *p, struct ast_create_trigger *ct)
{
    struct parse_list steps = {0};
    int rc = engine__parse_expect(p, TOKEN_BEGIN);

    while (rc == 0) {
        struct ast_stmt *step = NULL;

        rc = step_parse(p, &step);
        rc = rc != 0 ? rc
                     : engine__parse_list_push(p, &steps, &step, sizeof(step));
        if (rc == 0 && engine__parse_accept(p, TOKEN_END)) {
            ct->text_end = p->prev_end;
            break;
        }
    }
    ct->steps = steps.items;
    ct->step_count = steps.count;
    return rc;
}

int engine__parse_create_trigger(struct parser *p, struct ast_stmt *stmt,
                                 bool temporary)
{
    struct ast_create_trigger *ct = engine__parse_alloc(p, sizeof(*ct));
    int rc;

    if (ct == NULL) {
        return COMMON_ENOMEM;
    }
    stmt->kind = AST_STMT_CREATE_TRIGGER;
    stmt->u.create_trigger = ct;
    ct->temporary = temporary;
    engine__parse_advance(p);
    rc = if_parse(p, true, &ct->if_not_exists);
    rc = rc != 0 ? rc
                 : two_part_name(p, &ct->schema, &ct->name, &ct->name_offset);
    rc = rc != 0 ? rc : timing_event_parse(p, ct);
    rc = rc != 0 ? rc : target_parse(p, ct);
    rc = rc != 0 ? rc : body_parse(p, ct);
    if (rc == 0 && p->parameter_count > 0) {
        return engine__parse_error(p, stmt->position,
                                   "trigger cannot use variables");
    }
    return rc;
}

int engine__parse_drop_trigger(struct parser *p, struct ast_stmt *stmt)
{
    size_t offset;
    int rc;

    stmt->kind = AST_STMT_DROP_TRIGGER;
    engine__parse_advance(p);
    rc = if_parse(p, false, &stmt->u.drop.if_exists);
    return rc != 0 ? rc
                   : two_part_name(p, &stmt->u.drop.schema, &stmt->u.drop.name,
                                   &offset);
}
