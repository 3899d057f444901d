/* SPDX-License-Identifier: MIT
 *
 * test_parse.c: the trees engine__parse() builds.
 *
 * Goal: each statement form of ast.h comes out with the right kinds,
 * operators, grouping (SQLite's precedence and associativity), literal
 * values, parameter numbers, positions and source texts.
 *
 * Method: parse a statement, then walk the tree; precedence is checked by
 * printing a tree in fully parenthesized form and comparing strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "common_test.h"

static struct engine_arena arena;

static int arena_setup(void **state)
{
    (void)state;
    engine__arena_init(&arena);
    return 0;
}

static int arena_teardown(void **state)
{
    (void)state;
    engine__arena_close(&arena);
    return 0;
}

static struct ast_stmt *parse_ok(const char *sql)
{
    struct ast_stmt *stmt = NULL;
    size_t tail = 0;
    char errmsg[256];
    int rc = engine__parse(&arena, sql, strlen(sql), &stmt, &tail, errmsg,
                           sizeof(errmsg), NULL);

    if (rc != 0) {
        print_error("%s: %s\n", sql, errmsg);
    }
    assert_int_equal(rc, 0);
    assert_non_null(stmt);
    return stmt;
}

static struct ast_expr *first_column(const char *sql)
{
    struct ast_stmt *stmt = parse_ok(sql);

    assert_int_equal(stmt->kind, AST_STMT_SELECT);
    assert_int_equal(stmt->u.select->columns[0].kind, AST_RESULT_EXPR);
    return stmt->u.select->columns[0].expr;
}

static const char *const binary_names[] = {
    "OR", "AND", "=",  "<>", "IS", "IS NOT", "<", "<=", ">", ">=",
    "&",  "|",   "<<", ">>", "+",  "-",      "*", "/",  "%", "||",
};

/* Fully parenthesized rendering: (l op r), leaves as their text. */
static size_t render(const struct ast_expr *e, char *out, size_t size)
{
    size_t n = 0;

    switch (e->kind) {
    case AST_BINARY:
        n += (size_t)snprintf(out, size, "(");
        n += render(e->u.binary.left, out + n, size - n);
        n += (size_t)snprintf(out + n, size - n, " %s ",
                              binary_names[e->u.binary.op]);
        n += render(e->u.binary.right, out + n, size - n);
        n += (size_t)snprintf(out + n, size - n, ")");
        return n;
    case AST_UNARY:
        n += (size_t)snprintf(out, size, "(%s ",
                              e->u.unary.op == AST_NOT      ? "NOT"
                              : e->u.unary.op == AST_NEGATE ? "-"
                              : e->u.unary.op == AST_PLUS   ? "+"
                                                            : "~");
        n += render(e->u.unary.operand, out + n, size - n);
        return n + (size_t)snprintf(out + n, size - n, ")");
    case AST_COLLATE:
        n += (size_t)snprintf(out, size, "(");
        n += render(e->u.collate.operand, out + n, size - n);
        return n + (size_t)snprintf(out + n, size - n, " COLLATE %s)",
                                    e->u.collate.name);
    case AST_IS_NULL:
    case AST_NOT_NULL:
        n += (size_t)snprintf(out, size, "(");
        n += render(e->u.unary.operand, out + n, size - n);
        return n +
               (size_t)snprintf(out + n, size - n, " %s)",
                                e->kind == AST_IS_NULL ? "ISNULL" : "NOTNULL");
    case AST_BETWEEN:
        n += (size_t)snprintf(out, size, "(");
        n += render(e->u.between.operand, out + n, size - n);
        n += (size_t)snprintf(out + n, size - n, " BETWEEN ");
        n += render(e->u.between.low, out + n, size - n);
        n += (size_t)snprintf(out + n, size - n, " AND ");
        n += render(e->u.between.high, out + n, size - n);
        return n + (size_t)snprintf(out + n, size - n, ")");
    default:
        return (size_t)snprintf(out, size, "%s", e->text);
    }
}

static void assert_grouping(const char *expr_sql, const char *expected)
{
    char sql[256];
    char got[512];

    snprintf(sql, sizeof(sql), "SELECT %s", expr_sql);
    render(first_column(sql), got, sizeof(got));
    if (strcmp(got, expected) != 0) {
        print_error("%s: got %s, want %s\n", expr_sql, got, expected);
        fail();
    }
}

static void parse_precedence(void **state)
{
    (void)state;
    assert_grouping("1 + 2 * 3", "(1 + (2 * 3))");
    assert_grouping("1 - 2 - 3", "((1 - 2) - 3)");
    assert_grouping("a OR b AND c", "(a OR (b AND c))");
    assert_grouping("NOT a = b", "(NOT (a = b))");
    assert_grouping("NOT a AND b", "((NOT a) AND b)");
    assert_grouping("1 + NOT 2 = 3", "(1 + (NOT (2 = 3)))");
    assert_grouping("a = b < c", "(a = (b < c))");
    assert_grouping("a < b = c", "((a < b) = c)");
    assert_grouping("a & b + c", "(a & (b + c))");
    assert_grouping("a << b | c", "((a << b) | c)");
    assert_grouping("a || b * c", "((a || b) * c)");
    assert_grouping("- a * b", "((- a) * b)");
    assert_grouping("- a COLLATE x", "((- a) COLLATE x)");
    assert_grouping("a || b COLLATE x", "(a || (b COLLATE x))");
    assert_grouping("~ - a", "(~ (- a))");
    assert_grouping("a IS NOT b = c", "((a IS NOT b) = c)");
    assert_grouping("a IS DISTINCT FROM b", "(a IS NOT b)");
    assert_grouping("a IS NOT DISTINCT FROM b", "(a IS b)");
    assert_grouping("a IS NULL", "(a ISNULL)");
    assert_grouping("a IS NOT NULL AND b NOT NULL",
                    "((a NOTNULL) AND (b NOTNULL))");
    assert_grouping("a BETWEEN 1 AND 2 AND 3", "((a BETWEEN 1 AND 2) AND 3)");
    assert_grouping("a BETWEEN 1 + 2 AND 3 * 4 OR 5",
                    "((a BETWEEN (1 + 2) AND (3 * 4)) OR 5)");
    assert_grouping("a BETWEEN b = c AND d + e",
                    "(a BETWEEN (b = c) AND (d + e))");
    assert_grouping("(1 + 2) * 3", "((1 + 2) * 3)");
}

static void parse_texts_and_positions(void **state)
{
    struct ast_stmt *stmt;
    struct ast_expr *e;

    (void)state;
    e = first_column("SELECT a  +  b FROM t");
    assert_string_equal(e->text, "a  +  b");
    assert_int_equal(e->position, 7);
    assert_int_equal(e->u.binary.right->position, 13);
    e = first_column("SELECT (1+2)");
    assert_string_equal(e->text, "(1+2)");
    e = first_column("SELECT count(*) FILTER (WHERE a > 1) FROM t");
    assert_string_equal(e->text, "count(*) FILTER (WHERE a > 1)");
    assert_int_equal(e->kind, AST_FUNCTION);
    assert_true(e->u.function.star);
    assert_int_equal(e->u.function.filter->kind, AST_BINARY);
    stmt = parse_ok("SELECT 1 AS x, t.*, * , y z FROM t");
    assert_int_equal(stmt->u.select->column_count, 4);
    assert_string_equal(stmt->u.select->columns[0].alias, "x");
    assert_int_equal(stmt->u.select->columns[1].kind, AST_RESULT_TABLE_STAR);
    assert_string_equal(stmt->u.select->columns[1].table, "t");
    assert_int_equal(stmt->u.select->columns[2].kind, AST_RESULT_STAR);
    assert_string_equal(stmt->u.select->columns[3].alias, "z");
}

static void parse_literals(void **state)
{
    struct ast_expr *e;

    (void)state;
    e = first_column("SELECT -9223372036854775808");
    assert_int_equal(e->kind, AST_LITERAL);
    assert_int_equal(e->u.literal.type, ENGINE_INTEGER);
    assert_true(e->u.literal.u.i == INT64_MIN);
    assert_string_equal(e->text, "-9223372036854775808");
    e = first_column("SELECT 9223372036854775808");
    assert_int_equal(e->u.literal.type, ENGINE_FLOAT);
    assert_true(e->u.literal.u.r == 9223372036854775808.0);
    e = first_column("SELECT 0x1F");
    assert_int_equal(e->u.literal.u.i, 31);
    e = first_column("SELECT 1.5e2");
    assert_int_equal(e->u.literal.type, ENGINE_FLOAT);
    assert_true(e->u.literal.u.r == 150.0);
    e = first_column("SELECT 'it''s'");
    assert_int_equal(e->u.literal.type, ENGINE_TEXT);
    assert_int_equal(e->u.literal.u.s.size, 4);
    assert_memory_equal(e->u.literal.u.s.bytes, "it's", 4);
    e = first_column("SELECT x'0a1B'");
    assert_int_equal(e->u.literal.type, ENGINE_BLOB);
    assert_int_equal(e->u.literal.u.s.size, 2);
    e = first_column("SELECT NULL");
    assert_int_equal(e->u.literal.type, ENGINE_NULL);
    e = first_column("SELECT TRUE");
    assert_int_equal(e->kind, AST_BOOLEAN);
    assert_int_equal(e->u.literal.u.i, 1);
    e = first_column("SELECT \"true\"");
    assert_int_equal(e->kind, AST_COLUMN);
    assert_string_equal(e->u.column.name, "true");
    e = first_column("SELECT - 5");
    assert_int_equal(e->kind, AST_UNARY);
    assert_int_equal(e->u.unary.op, AST_NEGATE);
}

static void parse_parameters(void **state)
{
    struct ast_stmt *stmt;
    struct ast_select *s;

    (void)state;
    stmt = parse_ok("SELECT ?, ?5, :a, ?, :a, @b");
    s = stmt->u.select;
    assert_int_equal(s->columns[0].expr->u.parameter.index, 1);
    assert_null(s->columns[0].expr->u.parameter.name);
    assert_int_equal(s->columns[1].expr->u.parameter.index, 5);
    assert_string_equal(s->columns[1].expr->u.parameter.name, "?5");
    assert_int_equal(s->columns[2].expr->u.parameter.index, 6);
    assert_int_equal(s->columns[3].expr->u.parameter.index, 7);
    assert_int_equal(s->columns[4].expr->u.parameter.index, 6);
    assert_int_equal(s->columns[5].expr->u.parameter.index, 8);
    assert_int_equal(stmt->parameter_count, 8);
    assert_string_equal(stmt->parameter_names[6], ":a");
    assert_string_equal(stmt->parameter_names[8], "@b");
    assert_null(stmt->parameter_names[1]);
}

static void parse_select_clauses(void **state)
{
    struct ast_select *s;

    (void)state;
    s = parse_ok("SELECT DISTINCT a FROM t AS x WHERE a > 1 GROUP BY a, b "
                 "HAVING count(*) > 1 ORDER BY a COLLATE nocase DESC NULLS "
                 "FIRST, b LIMIT 5, 10")
            ->u.select;
    assert_true(s->distinct);
    assert_int_equal(s->from_count, 1);
    assert_string_equal(s->from[0].table, "t");
    assert_string_equal(s->from[0].alias, "x");
    assert_int_equal(s->where->kind, AST_BINARY);
    assert_int_equal(s->group_by.count, 2);
    assert_non_null(s->having);
    assert_int_equal(s->order_by_count, 2);
    assert_true(s->order_by[0].descending);
    assert_int_equal(s->order_by[0].nulls, AST_NULLS_FIRST);
    assert_int_equal(s->order_by[0].expr->kind, AST_COLLATE);
    assert_int_equal(s->offset->u.literal.u.i, 5);
    assert_int_equal(s->limit->u.literal.u.i, 10);
    s = parse_ok("SELECT * FROM (SELECT 1) s")->u.select;
    assert_null(s->from[0].table);
    assert_non_null(s->from[0].select);
    assert_string_equal(s->from[0].alias, "s");
    /* A parenthesized join after another item: "SELECT * FROM t1 JOIN t2
     * USING (a)", flagged nested (SF_NestedFrom). */
    s = parse_ok("SELECT * FROM t0 LEFT JOIN (t1 JOIN t2 USING (a)) AS z "
                 "ON 1")
            ->u.select;
    assert_int_equal(s->from_count, 2);
    assert_int_equal(s->from[1].join, AST_JOIN_LEFT);
    assert_string_equal(s->from[1].alias, "z");
    assert_non_null(s->from[1].on);
    assert_true(s->from[1].select->nested);
    assert_int_equal(s->from[1].select->from_count, 2);
    assert_int_equal(s->from[1].select->columns[0].kind, AST_RESULT_STAR);
    assert_int_equal(s->from[1].select->from[1].using_count, 1);
    s = parse_ok("SELECT * FROM (t1 JOIN t2)")->u.select;
    assert_int_equal(s->from_count, 2);
    assert_string_equal(s->from[1].table, "t2");
    s = parse_ok("VALUES (1, 2), (3, 4), (5, 6)")->u.select;
    assert_null(s->columns);
    assert_int_equal(s->value_row_count, 3);
    assert_int_equal(s->value_column_count, 2);
    assert_int_equal(s->values[5]->u.literal.u.i, 6);
}

static void parse_expression_forms(void **state)
{
    struct ast_expr *e;

    (void)state;
    e = first_column("SELECT CASE a WHEN 1 THEN 2 WHEN 3 THEN 4 ELSE 5 END");
    assert_int_equal(e->kind, AST_CASE);
    assert_non_null(e->u.case_.operand);
    assert_int_equal(e->u.case_.whens.count, 2);
    assert_non_null(e->u.case_.else_);
    e = first_column("SELECT CAST(a AS VARCHAR(10))");
    assert_int_equal(e->kind, AST_CAST);
    assert_string_equal(e->u.cast.type_name, "VARCHAR(10)");
    e = first_column("SELECT a NOT IN (1, 2)");
    assert_int_equal(e->kind, AST_IN_LIST);
    assert_true(e->u.in_list.negated);
    assert_int_equal(e->u.in_list.items.count, 2);
    e = first_column("SELECT a IN ()");
    assert_int_equal(e->u.in_list.items.count, 0);
    e = first_column("SELECT a IN (SELECT 1)");
    assert_int_equal(e->kind, AST_IN_SELECT);
    e = first_column("SELECT a NOT LIKE 'x' ESCAPE 'y'");
    assert_int_equal(e->kind, AST_LIKE);
    assert_true(e->u.like.negated);
    assert_non_null(e->u.like.escape);
    e = first_column("SELECT a GLOB 'x'");
    assert_int_equal(e->u.like.like_kind, AST_LIKE_GLOB);
    e = first_column("SELECT NOT EXISTS (SELECT 1)");
    assert_int_equal(e->u.unary.operand->kind, AST_EXISTS);
    e = first_column("SELECT (SELECT 1)");
    assert_int_equal(e->kind, AST_SUBQUERY);
    e = first_column("SELECT count(DISTINCT a)");
    assert_true(e->u.function.distinct);
    assert_string_equal(e->u.function.name, "count");
    e = first_column("SELECT t.a");
    assert_string_equal(e->u.column.table, "t");
    assert_string_equal(e->u.column.name, "a");
    e = first_column("SELECT key");
    assert_int_equal(e->kind, AST_COLUMN);
    assert_string_equal(e->u.column.name, "key");
}

static void parse_create_table(void **state)
{
    struct ast_create_table *ct;

    (void)state;
    ct = &parse_ok("CREATE TEMP TABLE IF NOT EXISTS \"t x\"(a INTEGER "
                   "PRIMARY KEY DESC ON CONFLICT REPLACE AUTOINCREMENT, b "
                   "VARCHAR(10) NOT NULL DEFAULT 'x' COLLATE nocase CHECK (b "
                   "<> ''), c UNIQUE, CONSTRAINT k UNIQUE (b, c DESC), "
                   "CHECK (c > 0)) STRICT, WITHOUT ROWID")
              ->u.create_table;
    assert_string_equal(ct->name, "t x");
    assert_true(ct->temporary);
    assert_true(ct->if_not_exists);
    assert_int_equal(ct->column_count, 3);
    assert_true(ct->columns[0].primary_key);
    assert_true(ct->columns[0].primary_key_descending);
    assert_true(ct->columns[0].autoincrement);
    assert_int_equal(ct->columns[0].primary_key_conflict, AST_CONFLICT_REPLACE);
    assert_string_equal(ct->columns[1].type_name, "VARCHAR(10)");
    assert_true(ct->columns[1].not_null);
    assert_string_equal(ct->columns[1].collation, "nocase");
    assert_int_equal(ct->columns[1].checks.count, 1);
    assert_int_equal(ct->columns[1].default_value->u.literal.type, ENGINE_TEXT);
    assert_null(ct->columns[2].type_name);
    assert_true(ct->columns[2].unique);
    assert_int_equal(ct->constraint_count, 2);
    assert_string_equal(ct->constraints[0].name, "k");
    assert_int_equal(ct->constraints[0].column_count, 2);
    assert_true(ct->constraints[0].columns[1].descending);
    assert_int_equal(ct->constraints[1].kind, AST_CONSTRAINT_CHECK);
    assert_true(ct->strict);
    assert_true(ct->without_rowid);
    ct = &parse_ok("CREATE TABLE t AS SELECT 1")->u.create_table;
    assert_non_null(ct->as_select);
}

static void parse_dml_and_transactions(void **state)
{
    struct ast_stmt *stmt;

    (void)state;
    stmt = parse_ok("INSERT OR IGNORE INTO t AS x (a, b) VALUES (1, 2) ON "
                    "CONFLICT (a) DO UPDATE SET b = 3 WHERE b > 0 ON "
                    "CONFLICT DO NOTHING RETURNING a");
    assert_int_equal(stmt->kind, AST_STMT_INSERT);
    assert_int_equal(stmt->u.insert.conflict, AST_CONFLICT_IGNORE);
    assert_string_equal(stmt->u.insert.alias, "x");
    assert_int_equal(stmt->u.insert.column_count, 2);
    assert_int_equal(stmt->u.insert.upsert_count, 2);
    assert_string_equal(stmt->u.insert.upserts[0].target_columns[0], "a");
    assert_false(stmt->u.insert.upserts[0].do_nothing);
    assert_true(stmt->u.insert.upserts[1].do_nothing);
    assert_int_equal(stmt->u.insert.returning.column_count, 1);
    stmt = parse_ok("REPLACE INTO t DEFAULT VALUES");
    assert_int_equal(stmt->u.insert.conflict, AST_CONFLICT_REPLACE);
    assert_null(stmt->u.insert.select);
    stmt = parse_ok("UPDATE t SET (a, b) = (1, 2), c = 3 WHERE d");
    assert_int_equal(stmt->u.update.assignment_count, 3);
    assert_string_equal(stmt->u.update.assignments[1].columns[0], "b");
    stmt = parse_ok("UPDATE t SET (a, b) = (SELECT 1, 2)");
    assert_int_equal(stmt->u.update.assignment_count, 1);
    assert_int_equal(stmt->u.update.assignments[0].column_count, 2);
    stmt = parse_ok("DELETE FROM t WHERE a RETURNING *");
    assert_int_equal(stmt->kind, AST_STMT_DELETE);
    assert_non_null(stmt->u.delete_.where);
    assert_int_equal(parse_ok("BEGIN IMMEDIATE")->kind, AST_STMT_BEGIN);
    assert_int_equal(parse_ok("END TRANSACTION")->kind, AST_STMT_COMMIT);
    assert_int_equal(parse_ok("ROLLBACK")->kind, AST_STMT_ROLLBACK);
    stmt = parse_ok("CREATE UNIQUE INDEX i ON t(a, b DESC) WHERE a > 0");
    assert_true(stmt->u.create_index.unique);
    assert_int_equal(stmt->u.create_index.column_count, 2);
    assert_non_null(stmt->u.create_index.where);
    stmt = parse_ok("DROP INDEX IF EXISTS i");
    assert_int_equal(stmt->kind, AST_STMT_DROP_INDEX);
    assert_true(stmt->u.drop.if_exists);
}

/* PRAGMA values are the text sqlite3Pragma() receives. */
static void parse_pragma_and_savepoints(void **state)
{
    static const char *const values[][2] = {
        {"PRAGMA x = 5", "5"},           {"PRAGMA x(+5)", "5"},
        {"PRAGMA x = -0x10", "-0x10"},   {"PRAGMA x('a''b')", "a'b"},
        {"PRAGMA x = \"on\"", "on"},     {"PRAGMA x = ON", "ON"},
        {"PRAGMA x = delete", "delete"}, {"PRAGMA x(-1.5e3)", "-1.5e3"},
        {"PRAGMA x = left", "left"},     {"PRAGMA x = DEFAULT", "DEFAULT"},
    };
    struct ast_stmt *stmt;

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        stmt = parse_ok(values[i][0]);
        assert_int_equal(stmt->kind, AST_STMT_PRAGMA);
        assert_string_equal(stmt->u.pragma.value, values[i][1]);
    }
    stmt = parse_ok("PRAGMA \"Main\".[table_info]");
    assert_string_equal(stmt->u.pragma.schema, "Main");
    assert_string_equal(stmt->u.pragma.schema_text, "\"Main\"");
    assert_string_equal(stmt->u.pragma.name, "table_info");
    assert_null(stmt->u.pragma.value);
    stmt = parse_ok("SAVEPOINT 'a b'");
    assert_int_equal(stmt->kind, AST_STMT_SAVEPOINT);
    assert_string_equal(stmt->u.savepoint.name, "a b");
    stmt = parse_ok("RELEASE SAVEPOINT savepoint");
    assert_int_equal(stmt->kind, AST_STMT_RELEASE);
    assert_string_equal(stmt->u.savepoint.name, "savepoint");
    stmt = parse_ok("ROLLBACK TRANSACTION TO x");
    assert_int_equal(stmt->kind, AST_STMT_ROLLBACK_TO);
    assert_string_equal(stmt->u.savepoint.name, "x");
    stmt = parse_ok("VACUUM");
    assert_int_equal(stmt->kind, AST_STMT_VACUUM);
    assert_null(stmt->u.vacuum.schema);
    stmt = parse_ok("VACUUM [main]");
    assert_string_equal(stmt->u.vacuum.schema, "main");
}

/* Our own messages for what SQLite has and we do not. */
static void parse_unsupported_messages(void **state)
{
    static const char *const cases[][2] = {
        {"SELECT * FROM main.t", "a schema qualifier is not supported yet"},
        {"VACUUM INTO 'copy.db'", "VACUUM INTO is not supported yet"},
    };
    char errmsg[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ast_stmt *stmt = NULL;
        size_t tail = 0;

        assert_int_equal(engine__parse(&arena, cases[i][0], strlen(cases[i][0]),
                                       &stmt, &tail, errmsg, sizeof(errmsg),
                                       NULL),
                         ENGINE_ESQL);
        assert_string_equal(errmsg, cases[i][1]);
    }
}

static void parse_empty_and_tail(void **state)
{
    struct ast_stmt *stmt = (struct ast_stmt *)1;
    size_t tail = 0;

    (void)state;
    assert_int_equal(
        engine__parse(&arena, " ;; -- x", 8, &stmt, &tail, NULL, 0, NULL), 0);
    assert_null(stmt);
    assert_int_equal(tail, 8);
    assert_int_equal(engine__parse(&arena, "SELECT 1; SELECT 2", 18, &stmt,
                                   &tail, NULL, 0, NULL),
                     0);
    assert_int_equal(tail, 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(parse_precedence, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_texts_and_positions, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_literals, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_parameters, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_select_clauses, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_expression_forms, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_create_table, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_dml_and_transactions, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_pragma_and_savepoints,
                                        arena_setup, arena_teardown),
        cmocka_unit_test_setup_teardown(parse_unsupported_messages, arena_setup,
                                        arena_teardown),
        cmocka_unit_test_setup_teardown(parse_empty_and_tail, arena_setup,
                                        arena_teardown),
    };

    /* libc's heap here: the arena outlives each test body, which cmocka's
     * leak check would free under it (test_parse_robust checks leaks). */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
