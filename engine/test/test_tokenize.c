/* SPDX-License-Identifier: MIT
 *
 * test_tokenize.c: the tokenizer, token by token.
 *
 * Goal: engine__token_scan() cuts text into the tokens SQLite's
 * sqlite3GetToken() does, with the same kinds and lengths, keywords are
 * recognized case-insensitively with their fallback-to-identifier flag,
 * and literal helpers (unquoting, blobs, integers) decode as SQLite does.
 *
 * Method: tables of input and expected (kind, text) sequences, spaces
 * skipped; the scanner is also run on exact-size heap copies so that the
 * sanitizers catch any read past size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "common_test.h"
#include "tokenize.h"

struct expected_token {
    enum token_kind kind;
    const char *text;
};

#define MAX_TOKENS 8

struct case_ {
    const char *sql;
    struct expected_token tokens[MAX_TOKENS]; /* ends at TOKEN_EOF */
};

static const struct case_ cases[] = {
    {"SELECT a FROM t",
     {{TOKEN_SELECT, "SELECT"},
      {TOKEN_ID, "a"},
      {TOKEN_FROM, "FROM"},
      {TOKEN_ID, "t"}}},
    {"select Key rowid _x x1 $y",
     {{TOKEN_SELECT, "select"},
      {TOKEN_KEY, "Key"},
      {TOKEN_ID, "rowid"},
      {TOKEN_ID, "_x"},
      {TOKEN_ID, "x1"},
      {TOKEN_VARIABLE, "$y"}}},
    {"\"a\"\"b\" [c d] `e` 'it''s'",
     {{TOKEN_ID, "\"a\"\"b\""},
      {TOKEN_ID, "[c d]"},
      {TOKEN_ID, "`e`"},
      {TOKEN_STRING, "'it''s'"}}},
    {"x'0A1b' X'' x'abc' xy",
     {{TOKEN_BLOB, "x'0A1b'"}, {TOKEN_BLOB, "X''"}, {TOKEN_ILLEGAL, "x'abc'"}}},
    {"1 1.5 .5 5. 1e10 1E+3 1e-2 0x1F",
     {{TOKEN_INTEGER, "1"},
      {TOKEN_FLOAT, "1.5"},
      {TOKEN_FLOAT, ".5"},
      {TOKEN_FLOAT, "5."},
      {TOKEN_FLOAT, "1e10"},
      {TOKEN_FLOAT, "1E+3"},
      {TOKEN_FLOAT, "1e-2"},
      {TOKEN_INTEGER, "0x1F"}}},
    {"12abc", {{TOKEN_ILLEGAL, "12abc"}}},
    {"1e+", {{TOKEN_ILLEGAL, "1e"}}},
    {"0x", {{TOKEN_ILLEGAL, "0x"}}},
    {"? ?12 :a @b $c::d(e) #f",
     {{TOKEN_VARIABLE, "?"},
      {TOKEN_VARIABLE, "?12"},
      {TOKEN_VARIABLE, ":a"},
      {TOKEN_VARIABLE, "@b"},
      {TOKEN_VARIABLE, "$c::d(e)"},
      {TOKEN_VARIABLE, "#f"}}},
    {"$a(b c)", {{TOKEN_ILLEGAL, "$a(b"}}},
    {": #", {{TOKEN_ILLEGAL, ":"}}},
    {"|| | -> ->> - == = != <> <= >= << >> < >",
     {{TOKEN_CONCAT, "||"},
      {TOKEN_BITOR, "|"},
      {TOKEN_PTR, "->"},
      {TOKEN_PTR, "->>"},
      {TOKEN_MINUS, "-"},
      {TOKEN_EQ, "=="},
      {TOKEN_EQ, "="},
      {TOKEN_NE, "!="}}},
    {"<> <= >= << >> < > !",
     {{TOKEN_NE, "<>"},
      {TOKEN_LE, "<="},
      {TOKEN_GE, ">="},
      {TOKEN_LSHIFT, "<<"},
      {TOKEN_RSHIFT, ">>"},
      {TOKEN_LT, "<"},
      {TOKEN_GT, ">"},
      {TOKEN_ILLEGAL, "!"}}},
    {"( ) ; , . + * / % & ~",
     {{TOKEN_LP, "("},
      {TOKEN_RP, ")"},
      {TOKEN_SEMI, ";"},
      {TOKEN_COMMA, ","},
      {TOKEN_DOT, "."},
      {TOKEN_PLUS, "+"},
      {TOKEN_STAR, "*"},
      {TOKEN_SLASH, "/"}}},
    {"a -- comment\n b /* c */ d /* open",
     {{TOKEN_ID, "a"}, {TOKEN_ID, "b"}, {TOKEN_ID, "d"}}},
    {"1 /*", {{TOKEN_INTEGER, "1"}, {TOKEN_SLASH, "/"}, {TOKEN_STAR, "*"}}},
    {"'open", {{TOKEN_ILLEGAL, "'open"}}},
    {"[open", {{TOKEN_ILLEGAL, "[open"}}},
    {"\xef\xbb\xbfSELECT \xc3\xa9t\xc3\xa9",
     {{TOKEN_SELECT, "SELECT"}, {TOKEN_ID, "\xc3\xa9t\xc3\xa9"}}},
    {"a\\b", {{TOKEN_ID, "a"}, {TOKEN_ILLEGAL, "\\"}, {TOKEN_ID, "b"}}},
    {"current_timestamp Transaction without",
     {{TOKEN_CURRENT_TIMESTAMP, "current_timestamp"},
      {TOKEN_TRANSACTION, "Transaction"},
      {TOKEN_WITHOUT, "without"}}},
};

static void check_case(const struct case_ *c)
{
    size_t size = strlen(c->sql);
    char *copy = test_malloc(size == 0 ? 1 : size);
    size_t offset = 0;

    memcpy(copy, c->sql, size);
    for (int i = 0; i < MAX_TOKENS; i++) {
        const struct expected_token *want = &c->tokens[i];
        struct token t;

        do {
            engine__token_scan(copy, size, offset, &t);
            offset = t.offset + t.size;
        } while (t.kind == TOKEN_SPACE);
        if (want->text == NULL) {
            break;
        }
        if (t.kind != want->kind || t.size != strlen(want->text) ||
            memcmp(copy + t.offset, want->text, t.size) != 0) {
            print_error("%s: token %d is kind %d \"%.*s\", want %d \"%s\"\n",
                        c->sql, i, (int)t.kind, (int)t.size, copy + t.offset,
                        (int)want->kind, want->text);
            fail();
        }
        if (want->kind == TOKEN_ILLEGAL) {
            break;
        }
    }
    test_free(copy);
}

static void token_scan_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_case(&cases[i]);
    }
}

static void token_scan_stops_at_size_and_nul(void **state)
{
    struct token t;

    (void)state;
    engine__token_scan("SELECTED", 6, 0, &t);
    assert_int_equal(t.kind, TOKEN_SELECT);
    assert_int_equal(t.size, 6);
    engine__token_scan("ab\0cd", 5, 0, &t);
    assert_int_equal(t.kind, TOKEN_ID);
    assert_int_equal(t.size, 2);
    engine__token_scan("ab\0cd", 5, 2, &t);
    assert_int_equal(t.kind, TOKEN_EOF);
    assert_int_equal(t.size, 0);
    engine__token_scan("'ab\0c'", 6, 0, &t);
    assert_int_equal(t.kind, TOKEN_ILLEGAL);
    assert_int_equal(t.size, 3);
    engine__token_scan("", 0, 0, &t);
    assert_int_equal(t.kind, TOKEN_EOF);
}

static void token_keywords(void **state)
{
    (void)state;
    assert_int_equal(engine__token_keyword("select", 6), TOKEN_SELECT);
    assert_int_equal(engine__token_keyword("SeLeCt", 6), TOKEN_SELECT);
    assert_int_equal(engine__token_keyword("CURRENT_TIMESTAMP", 17),
                     TOKEN_CURRENT_TIMESTAMP);
    assert_int_equal(engine__token_keyword("rowid", 5), TOKEN_ID);
    assert_int_equal(engine__token_keyword("selects", 7), TOKEN_ID);
    assert_int_equal(engine__token_keyword("a", 1), TOKEN_ID);
    assert_true(engine__token_is_fallback_id(TOKEN_KEY));
    assert_true(engine__token_is_fallback_id(TOKEN_ACTION));
    assert_true(engine__token_is_fallback_id(TOKEN_REPLACE));
    assert_true(engine__token_is_fallback_id(TOKEN_FILTER));
    assert_true(engine__token_is_fallback_id(TOKEN_ROLLBACK));
    assert_false(engine__token_is_fallback_id(TOKEN_SELECT));
    assert_false(engine__token_is_fallback_id(TOKEN_LEFT));
    assert_false(engine__token_is_fallback_id(TOKEN_COMMIT));
    assert_false(engine__token_is_fallback_id(TOKEN_ID));
}

static void token_unquote_and_blob(void **state)
{
    struct engine_arena arena;
    struct engine_value v;
    size_t size = 0;

    (void)state;
    engine__arena_init(&arena);
    assert_string_equal(engine__token_unquote(&arena, "\"a\"\"b\"", 6, &size),
                        "a\"b");
    assert_int_equal(size, 3);
    assert_string_equal(engine__token_unquote(&arena, "[a\"b]", 5, NULL),
                        "a\"b");
    assert_string_equal(engine__token_unquote(&arena, "`x``y`", 6, NULL),
                        "x`y");
    assert_string_equal(engine__token_unquote(&arena, "'it''s'", 7, NULL),
                        "it's");
    assert_string_equal(engine__token_unquote(&arena, "plain", 5, NULL),
                        "plain");
    assert_int_equal(engine__token_blob(&arena, "x'0A1b'", 7, &v), 0);
    assert_int_equal(v.type, ENGINE_BLOB);
    assert_int_equal(v.u.s.size, 2);
    assert_int_equal(v.u.s.bytes[0], 0x0A);
    assert_int_equal(v.u.s.bytes[1], 0x1B);
    assert_int_equal(engine__token_blob(&arena, "X''", 3, &v), 0);
    assert_int_equal(v.u.s.size, 0);
    engine__arena_close(&arena);
}

static void token_integers(void **state)
{
    int64_t v = 0;

    (void)state;
    assert_int_equal(engine__token_integer("0", 1, &v), TOKEN_INTEGER_FITS);
    assert_int_equal(v, 0);
    assert_int_equal(engine__token_integer("9223372036854775807", 19, &v),
                     TOKEN_INTEGER_FITS);
    assert_true(v == INT64_MAX);
    assert_int_equal(engine__token_integer("9223372036854775808", 19, &v),
                     TOKEN_INTEGER_INT64_MIN_MAGNITUDE);
    assert_int_equal(engine__token_integer("9223372036854775809", 19, &v),
                     TOKEN_INTEGER_TOO_BIG);
    assert_int_equal(engine__token_integer("99999999999999999999", 20, &v),
                     TOKEN_INTEGER_TOO_BIG);
    assert_int_equal(engine__token_integer("0x1F", 4, &v), TOKEN_INTEGER_FITS);
    assert_int_equal(v, 31);
    assert_int_equal(engine__token_integer("0xffffffffffffffff", 18, &v),
                     TOKEN_INTEGER_FITS);
    assert_int_equal(v, -1);
    assert_int_equal(engine__token_integer("0x8000000000000000", 18, &v),
                     TOKEN_INTEGER_FITS);
    assert_true(v == INT64_MIN);
    assert_int_equal(engine__token_integer("0x0000000000000000001", 21, &v),
                     TOKEN_INTEGER_FITS);
    assert_int_equal(v, 1);
    assert_int_equal(engine__token_integer("0x10000000000000000", 19, &v),
                     TOKEN_INTEGER_HEX_TOO_BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_scan_cases),
        cmocka_unit_test(token_scan_stops_at_size_and_nul),
        cmocka_unit_test(token_keywords),
        cmocka_unit_test(token_unquote_and_blob),
        cmocka_unit_test(token_integers),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
