/* SPDX-License-Identifier: MIT
 *
 * Goal: slt_parse.c reads every record kind and directive of the
 * sqllogictest format as upstream's runner does (src/sqllogictest.c), and
 * never fails or crashes on bad input.
 * Method: hand-written scripts with exact expected records (kinds, line
 * numbers, SQL, types, sort, label, expected lines, conditions); every
 * invalid head; then every prefix of a script and seeded random bytes,
 * which must parse (under ASan in the sanitizer build) into records whose
 * fields are consistent.
 */
#include "common_test.h"

#include <string.h>

#include "slt.h"

static const char script_text[] =
    "# a comment before everything\n"
    "hash-threshold 3\n"
    "\n"
    "statement ok\n"
    "CREATE TABLE t1(a INTEGER,\n"
    "  b TEXT)\n"
    "\n"
    "statement error\n"
    "SELECT * FROM nowhere\n"
    "   \t \n"
    "skipif mysql # comments may follow a condition\n"
    "query ITR rowsort label-1\n"
    "SELECT a, b,\n"
    "# a comment inside a record neither ends it nor is a value\n"
    "  1.5 FROM t1\n"
    "----\n"
    "1\r\n"
    "x\n"
    "1.500\n"
    "\n"
    "\n"
    "onlyif mysql\n"
    "query I valuesort\n"
    "SELECT 1\n"
    "----\n"
    "1\n"
    "\n"
    "skipif SQLite\n"
    "statement ok\n"
    "DROP TABLE t1\n"
    "\n"
    "onlyif sqlite\n"
    "skipif postgresql\n"
    "query T\n"
    "SELECT 'only here'\n"
    "----\n"
    "only here\n"
    "\n"
    "query I nosort\n"
    "SELECT 2\n"
    "\n"
    "skipif sqlite\n"
    "halt\n"
    "\n"
    "halt\n"
    "\n"
    "statement ok\n"
    "SELECT 'after the halt'";

static void test_every_directive(void **state)
{
    struct slt_script script;
    const struct slt_record *r;

    (void)state;
    assert_int_equal(slt_parse(script_text, strlen(script_text), &script), 0);
    assert_int_equal(script.record_count, 11);

    r = &script.records[0];
    assert_int_equal(r->kind, SLT_RECORD_HASH_THRESHOLD);
    assert_int_equal(r->line, 2);
    assert_int_equal(r->threshold, 3);
    assert_false(r->skipped);

    r = &script.records[1];
    assert_int_equal(r->kind, SLT_RECORD_STATEMENT);
    assert_int_equal(r->line, 4);
    assert_false(r->expect_error);
    assert_string_equal(r->sql, "CREATE TABLE t1(a INTEGER,\n  b TEXT)");

    r = &script.records[2];
    assert_int_equal(r->kind, SLT_RECORD_STATEMENT);
    assert_true(r->expect_error);
    assert_string_equal(r->sql, "SELECT * FROM nowhere");

    r = &script.records[3];
    assert_int_equal(r->kind, SLT_RECORD_QUERY);
    assert_int_equal(r->line, 12);
    assert_false(r->skipped);
    assert_string_equal(r->types, "ITR");
    assert_int_equal(r->type_count, 3);
    assert_int_equal(r->sort, SLT_SORT_ROWS);
    assert_string_equal(r->label, "label-1");
    assert_string_equal(r->sql, "SELECT a, b,\n  1.5 FROM t1");
    assert_int_equal(r->expected_count, 3);
    assert_string_equal(r->expected[0], "1");
    assert_string_equal(r->expected[1], "x");
    assert_string_equal(r->expected[2], "1.500");

    r = &script.records[4];
    assert_int_equal(r->kind, SLT_RECORD_QUERY);
    assert_true(r->skipped);
    assert_int_equal(r->sort, SLT_SORT_VALUES);
    assert_null(r->label);

    r = &script.records[5];
    assert_int_equal(r->kind, SLT_RECORD_STATEMENT);
    assert_true(r->skipped); /* names compare case-insensitively */

    r = &script.records[6];
    assert_int_equal(r->kind, SLT_RECORD_QUERY);
    assert_false(r->skipped);
    assert_int_equal(r->sort, SLT_SORT_NONE);
    assert_int_equal(r->line, 34);
    assert_string_equal(r->expected[0], "only here");

    r = &script.records[7];
    assert_int_equal(r->kind, SLT_RECORD_QUERY);
    assert_string_equal(r->sql, "SELECT 2");
    assert_int_equal(r->expected_count, 0);

    assert_int_equal(script.records[8].kind, SLT_RECORD_HALT);
    assert_true(script.records[8].skipped);
    assert_int_equal(script.records[9].kind, SLT_RECORD_HALT);
    assert_false(script.records[9].skipped);
    assert_int_equal(script.records[10].kind, SLT_RECORD_STATEMENT);
    assert_string_equal(script.records[10].sql, "SELECT 'after the halt'");
    slt_script_free(&script);
}

static void expect_invalid(const char *text, const char *reason_part)
{
    struct slt_script script;

    assert_int_equal(slt_parse(text, strlen(text), &script), 0);
    assert_int_equal(script.record_count, 1);
    assert_int_equal(script.records[0].kind, SLT_RECORD_INVALID);
    assert_non_null(strstr(script.records[0].invalid_reason, reason_part));
    assert_true(slt_record_is_test(&script.records[0]));
    slt_script_free(&script);
}

static void test_invalid_records(void **state)
{
    (void)state;
    expect_invalid("select 1\n", "unknown record type");
    expect_invalid("statement maybe\nSELECT 1\n", "'ok' or 'error'");
    expect_invalid("query\nSELECT 1\n", "type letters");
    expect_invalid("query IX\nSELECT 1\n", "type letters");
    expect_invalid("query I shuffle\nSELECT 1\n", "sort mode");
    expect_invalid("hash-threshold many\n", "number");
    expect_invalid("hash-threshold -1\n", "number");
    expect_invalid("hash-threshold 99999999999999999999999\n", "number");
    expect_invalid("skipif mysql\nonlyif sqlite\n", "without a record");
}

static void test_empty_and_blank(void **state)
{
    struct slt_script script;

    (void)state;
    assert_int_equal(slt_parse("", 0, &script), 0);
    assert_int_equal(script.record_count, 0);
    slt_script_free(&script);
    static const char blank[] = "\n\n  \n# only comments\n\r\n";
    assert_int_equal(slt_parse(blank, strlen(blank), &script), 0);
    assert_int_equal(script.record_count, 0);
    slt_script_free(&script);
}

/* Fields of every parsed record are usable. */
static void check_consistent(const struct slt_script *script)
{
    for (size_t i = 0; i < script->record_count; i++) {
        const struct slt_record *r = &script->records[i];
        assert_true(r->line >= 1);
        if (r->kind == SLT_RECORD_STATEMENT) {
            assert_non_null(r->sql);
        } else if (r->kind == SLT_RECORD_QUERY) {
            assert_non_null(r->sql);
            assert_true(r->type_count >= 1);
            assert_int_equal(strlen(r->types), r->type_count);
            for (size_t j = 0; j < r->expected_count; j++) {
                assert_non_null(r->expected[j]);
            }
        } else if (r->kind == SLT_RECORD_INVALID) {
            assert_non_null(r->invalid_reason);
        }
    }
}

static void test_every_prefix(void **state)
{
    (void)state;
    for (size_t size = 0; size <= strlen(script_text); size++) {
        struct slt_script script;
        assert_int_equal(slt_parse(script_text, size, &script), 0);
        check_consistent(&script);
        slt_script_free(&script);
    }
}

static void test_random_bytes(void **state)
{
    static const char alphabet[] = "query statement ok error ITR rowsort "
                                   "----\n\n\r\t#skipif onlyif sqlite halt "
                                   "hash-threshold 8\0\xff";
    struct common_test_rng rng;
    char bytes[512];

    (void)state;
    common_test_rng_seed(&rng, "test_random_bytes");
    for (int round = 0; round < 2000; round++) {
        size_t size = (size_t)common_test_rng_below(&rng, sizeof(bytes));
        bool raw = common_test_rng_below(&rng, 2) == 0;
        for (size_t i = 0; i < size; i++) {
            bytes[i] = raw ? (char)common_test_rng_below(&rng, 256)
                           : alphabet[common_test_rng_below(
                                 &rng, sizeof(alphabet) - 1)];
        }
        struct slt_script script;
        assert_int_equal(slt_parse(bytes, size, &script), 0);
        check_consistent(&script);
        slt_script_free(&script);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_directive),
        cmocka_unit_test(test_invalid_records),
        cmocka_unit_test(test_empty_and_blank),
        cmocka_unit_test(test_every_prefix),
        cmocka_unit_test(test_random_bytes),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
