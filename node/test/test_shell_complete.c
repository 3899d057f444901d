/* SPDX-License-Identifier: MIT
 *
 * test_shell_complete.c: the shell's statement-completeness checker and
 * statement splitter.
 *
 * Method: a table of tricky inputs (';' inside strings, quoted identifiers,
 * brackets, backquotes and comments; unterminated strings and comments;
 * -- comments without a newline; CREATE TRIGGER bodies; white space and
 * comments alone) each with the answer written by hand; the same input is
 * also given to libsqlite3's sqlite3_complete(), which must agree, since
 * the shell must wait for the same continuation lines as sqlite3. The
 * splitter is checked on scripts whose first statement length is known.
 */
#include "common_test.h"

#include <sqlite3.h>
#include <string.h>

#include "shell_complete.h"

static const struct {
    const char *sql;
    bool is_complete;
} complete_cases[] = {
    {"", false},
    {"   \n\t", false},
    {";", true},
    {"SELECT 1;", true},
    {"SELECT 1", false},
    {"SELECT 1;  \n", true},
    {"SELECT 1; SELECT 2", false},
    {"SELECT 1; SELECT 2;", true},
    {"SELECT ';'", false},
    {"SELECT ';';", true},
    {"SELECT 'it''s;'", false},
    {"SELECT 'it''s;';", true},
    {"SELECT 'unterminated;", false},
    {"SELECT \"col;umn\" FROM t", false},
    {"SELECT \"col;umn\" FROM t;", true},
    {"SELECT [a;b] FROM t;", true},
    {"SELECT [a;b FROM t;", false},
    {"SELECT `a;b` FROM t;", true},
    {"SELECT 1 -- comment;", false},
    {"SELECT 1; -- comment", true},
    {"SELECT 1 -- comment;\n;", true},
    {"SELECT 1 /* ; */", false},
    {"SELECT 1 /* ; */;", true},
    {"SELECT 1; /* unterminated", false},
    {"SELECT 1; /* done */", true},
    {"/* only a comment */", false},
    {"-- only a comment", false},
    {"SELECT 1 /* a */ /* b */ ; /**/", true},
    {"SELECT 1/2;", true},
    {"SELECT 5-2;", true},
    {"CREATE TABLE t(a);", true},
    {"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1;", false},
    {"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", false},
    {"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;", true},
    {"create temp trigger tr after insert on t begin select 1; end;", true},
    {"CREATE TEMPORARY TRIGGER x BEGIN SELECT ';'; END ;", true},
    {"EXPLAIN CREATE TRIGGER x BEGIN SELECT 1; END;", true},
    {"SELECT end FROM t;", true},
    {"SELECT 'é日本;';", true},
    {"SELECT \"\";", true},
    {"SELECT x'00ff';", true},
    {"SELECT $a, :b, @c;", true},
};

static void complete_matches_hand_and_sqlite(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(complete_cases) / sizeof(complete_cases[0]);
         i++) {
        const char *sql = complete_cases[i].sql;
        bool got = shell_is_complete(sql, strlen(sql));
        if (got != complete_cases[i].is_complete ||
            got != (sqlite3_complete(sql) != 0)) {
            print_error("case %zu: \"%s\" gave %d, want %d, sqlite3 %d\n", i,
                        sql, got, complete_cases[i].is_complete,
                        sqlite3_complete(sql));
        }
        assert_int_equal(got, complete_cases[i].is_complete);
        assert_int_equal(got, sqlite3_complete(sql) != 0);
    }
}

/* The size argument bounds the scan: a prefix of a complete text is judged
 * on its own bytes. */
static void complete_respects_size(void **state)
{
    (void)state;
    const char *sql = "SELECT 1; SELECT 'x;";
    assert_true(shell_is_complete(sql, 9));
    assert_false(shell_is_complete(sql, 8));
    assert_false(shell_is_complete(sql, strlen(sql)));
    assert_false(shell_is_complete(NULL, 0));
}

static void statement_size_splits_scripts(void **state)
{
    (void)state;
    static const struct {
        const char *sql;
        size_t size;
    } cases[] = {
        {"SELECT 1; SELECT 2;", 9},
        {"SELECT ';'; SELECT 2;", 11},
        {"SELECT 1 -- ;\n; SELECT 2;", 15},
        {"SELECT /* ; */ 1;x", 17},
        {"CREATE TRIGGER t BEGIN SELECT 1; END; SELECT 2;", 37},
        {"SELECT 1", 8},
        {"SELECT 'open;", 13},
        {";;", 1},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *sql = cases[i].sql;
        assert_int_equal(shell_statement_size(sql, strlen(sql)), cases[i].size);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(complete_matches_hand_and_sqlite),
        cmocka_unit_test(complete_respects_size),
        cmocka_unit_test(statement_size_splits_scripts),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
