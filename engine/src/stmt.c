/* SPDX-License-Identifier: MIT
 *
 * stmt.c: prepared statements: prepare (parse and plan), re-planning when
 * the schema changed since (as sqlite3_prepare_v2 statements do), and
 * finalize. Running them is step.c; binding and reading columns is
 * stmt_data.c.
 */
#include <string.h>

#include "engine_int.h"
#include "plan.h"

int engine__stmt_own_op(struct engine_stmt *stmt, struct engine_op *op)
{
    if (stmt->op_count == stmt->op_capacity) {
        size_t capacity = stmt->op_capacity ? stmt->op_capacity * 2 : 16;
        struct engine_op **ops =
            common_realloc_array(stmt->ops, capacity, sizeof(*ops));

        if (ops == NULL) {
            return COMMON_ENOMEM;
        }
        stmt->ops = ops;
        stmt->op_capacity = capacity;
    }
    stmt->ops[stmt->op_count++] = op;
    return 0;
}

int engine__stmt_own_expr(struct engine_stmt *stmt, struct engine_expr *e)
{
    if (stmt->expr_count == stmt->expr_capacity) {
        size_t capacity = stmt->expr_capacity ? stmt->expr_capacity * 2 : 32;
        struct engine_expr **exprs =
            common_realloc_array(stmt->exprs, capacity, sizeof(*exprs));

        if (exprs == NULL) {
            return COMMON_ENOMEM;
        }
        stmt->exprs = exprs;
        stmt->expr_capacity = capacity;
    }
    stmt->exprs[stmt->expr_count++] = e;
    return 0;
}

int engine__stmt_own_subquery(struct engine_stmt *stmt,
                              struct engine_subquery *subquery)
{
    struct engine_subquery **list = common_realloc_array(
        stmt->subqueries, stmt->subquery_count + 1, sizeof(*list));

    if (list == NULL) {
        engine__arena_close(&subquery->arena);
        return COMMON_ENOMEM;
    }
    stmt->subqueries = list;
    stmt->subqueries[stmt->subquery_count++] = subquery;
    return 0;
}

/* Frees the plan (operators, expressions, subqueries) but not the SQL. */
static void stmt_drop_plan(struct engine_stmt *stmt)
{
    for (size_t i = 0; i < stmt->op_count; i++) {
        stmt->ops[i]->ops->destroy(stmt->ops[i]);
    }
    for (size_t i = 0; i < stmt->expr_count; i++) {
        engine__expr_close(stmt->exprs[i]);
    }
    for (size_t i = 0; i < stmt->subquery_count; i++) {
        engine__subquery_forget(stmt->subqueries[i]);
        engine__arena_close(&stmt->subqueries[i]->arena);
    }
    common_free(stmt->ops);
    common_free(stmt->exprs);
    common_free(stmt->subqueries);
    stmt->ops = NULL;
    stmt->exprs = NULL;
    stmt->subqueries = NULL;
    stmt->op_count = stmt->op_capacity = 0;
    stmt->expr_count = stmt->expr_capacity = 0;
    stmt->subquery_count = 0;
    stmt->root = NULL;
    stmt->dml = NULL;
    stmt->calls_function = false;
    stmt->prologue = NULL;
    stmt->prologue_count = 0;
    engine__arena_reset(&stmt->plan_arena);
}

/* Parses the first statement of text into the statement's plan arena;
 * *tail is the byte past it. stmt->ast is NULL when there was none. */
static int parse_into(struct engine_stmt *stmt, const char *text, size_t size,
                      size_t *tail)
{
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t error_offset;
    int rc = engine__parse(&stmt->plan_arena, text, size, &stmt->ast, tail,
                           errmsg, sizeof(errmsg), &error_offset);

    if (rc == COMMON_ENOMEM) {
        return engine__db_error(stmt->db, rc, "out of memory");
    }
    if (rc != 0) {
        return engine__db_error(stmt->db, rc, "%s", errmsg);
    }
    return 0;
}

static int plan_parsed(struct engine_stmt *stmt)
{
    int rc;

    stmt->schema_version = stmt->db->schema_version;
    rc = engine__plan(stmt);
    return rc == 0 && stmt->ast != NULL ? engine__prologue_plan(stmt) : rc;
}

/* Parses and plans the statement's own SQL again, against the current
 * schema (a statement prepared before a schema change). */
int engine__stmt_plan(struct engine_stmt *stmt)
{
    size_t tail;
    int rc;

    stmt_drop_plan(stmt);
    rc = parse_into(stmt, stmt->sql, strlen(stmt->sql), &tail);
    return rc == 0 ? plan_parsed(stmt) : rc;
}

static void stmt_free(struct engine_stmt *stmt)
{
    stmt_drop_plan(stmt);
    engine__stmt_clear_results(stmt);
    for (int i = 0; stmt->parameters != NULL && i <= stmt->parameter_count;
         i++) {
        if (stmt->parameters[i].type == ENGINE_TEXT ||
            stmt->parameters[i].type == ENGINE_BLOB) {
            common_free((void *)stmt->parameters[i].u.s.bytes);
        }
    }
    common_free(stmt->parameters);
    common_free(stmt->sql);
    engine__arena_close(&stmt->plan_arena);
    engine__arena_close(&stmt->result_arena);
    engine__arena_close(&stmt->column_arena);
    common_free(stmt);
}

static int stmt_new(struct engine_db *db, struct engine_stmt **out)
{
    struct engine_stmt *stmt = common_calloc(1, sizeof(*stmt));

    if (stmt == NULL) {
        return COMMON_ENOMEM;
    }
    stmt->db = db;
    engine__arena_init(&stmt->plan_arena);
    engine__arena_budget_init(&stmt->plan_budget, ENGINE__PLAN_SIZE_MAX);
    engine__arena_share(&stmt->plan_arena, &stmt->plan_budget);
    engine__arena_init(&stmt->result_arena);
    engine__arena_init(&stmt->column_arena);
    stmt->next_open = db->open_statements;
    db->open_statements = stmt;
    *out = stmt;
    return 0;
}

/* Keeps the statement's text, plans it and makes room for parameters. */
static int stmt_setup(struct engine_stmt *stmt, const char *sql, size_t size)
{
    int rc;

    stmt->sql = common_malloc(size + 1);
    if (stmt->sql == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    memcpy(stmt->sql, sql, size);
    stmt->sql[size] = '\0';
    rc = plan_parsed(stmt);
    if (rc != 0) {
        return rc;
    }
    stmt->parameter_count = stmt->ast->parameter_count;
    stmt->parameters = common_calloc((size_t)stmt->parameter_count + 1,
                                     sizeof(*stmt->parameters));
    if (stmt->parameters == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    for (int i = 0; i <= stmt->parameter_count; i++) {
        stmt->parameters[i] = engine__value_null();
    }
    stmt->exec.db = stmt->db;
    stmt->exec.stmt = stmt;
    stmt->exec.parameters = stmt->parameters;
    stmt->exec.parameter_count = stmt->parameter_count;
    return 0;
}

int engine_prepare(struct engine_db *db, const char *sql, int size,
                   struct engine_stmt **out, const char **tail)
{
    size_t length = size < 0 ? strlen(sql) : (size_t)size;
    struct engine_stmt *stmt;
    size_t end = 0;
    int rc;

    ASSERT(db != NULL && sql != NULL && out != NULL);
    *out = NULL;
    engine__db_clear_error(db);
    if (length > ENGINE_MAX_SQL_SIZE) {
        return engine__db_error(db, ENGINE_ETOOBIG, "string or blob too big");
    }
    /* Names resolve against the latest schema, as a statement's start
     * would see it, unless db holds a snapshot (storage_share.c). */
    if (db->storage != NULL && !engine__storage_holds_snapshot(db, 0) &&
        engine__storage_refresh(db) != 0) {
        return db->errcode;
    }
    rc = stmt_new(db, &stmt);
    if (rc != 0) {
        return engine__db_error(db, rc, "out of memory");
    }
    rc = parse_into(stmt, sql, length, &end);
    if (tail != NULL) {
        *tail = sql + end;
    }
    if (rc == 0 && stmt->ast != NULL) {
        rc = stmt_setup(stmt, sql, end);
    }
    if (rc != 0 || stmt->ast == NULL) {
        /* The error's message stays in db: finalize does not touch it. */
        engine_finalize(stmt);
        return rc;
    }
    *out = stmt;
    return 0;
}

void engine_finalize(struct engine_stmt *stmt)
{
    struct engine_stmt **link;
    struct engine_db *db;
    bool running;

    if (stmt == NULL) {
        return;
    }
    db = stmt->db;
    running = stmt->state == ENGINE__STMT_RUNNING;
    for (link = &db->open_statements; *link != NULL;
         link = &(*link)->next_open) {
        if (*link == stmt) {
            *link = stmt->next_open;
            break;
        }
    }
    stmt_free(stmt);
    if (running) {
        engine__graveyard_settle(db); /* the bytes it viewed may go */
    }
}

const char *engine_sql(const struct engine_stmt *stmt)
{
    return stmt->sql;
}

bool engine_stmt_readonly(const struct engine_stmt *stmt)
{
    return stmt->ast->kind == AST_STMT_SELECT;
}
