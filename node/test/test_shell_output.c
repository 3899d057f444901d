/* SPDX-License-Identifier: MIT
 *
 * test_shell_output.c: the shell's output modes against the real sqlite3
 * command-line shell, byte for byte.
 *
 * Method: each query of the table below runs twice. /usr/bin/sqlite3 runs
 * it as `sqlite3 -<mode> -header|-noheader :memory: "<query>"` through
 * popen() and its standard output is the expected bytes. The same query
 * runs in-process through libsqlite3, and each row, read with
 * sqlite3_column_type() and _text()/_blob()/_double() as the shell reads
 * the engine, goes through shell_output_*() with the settings the
 * command-line flags give (list "|", csv ",", LF rows, empty null value, no
 * wrapping). Every mode (list, csv, json, box, table) with and without
 * -header must match; a mismatch prints the query, the mode and both
 * outputs. The values cover every storage class and the awkward ones:
 * NULL, '', separators and quotes, newlines, CR LF, tabs, control bytes,
 * UTF-8, -0.0, huge and tiny REALs, infinities, INT64 limits, blobs with
 * NUL bytes, long strings, odd column names and empty results.
 * A second group checks the REAL renderer and settings the CLI flags cannot
 * reach (.mode box's 60-column wrap, a custom separator and null value).
 */
#include "common_test.h"

#include <sqlite3.h>
#include <string.h>

#include "shell_output.h"

#define SQLITE3_CLI "/usr/bin/sqlite3"

static const char *const queries[] = {
    "SELECT 1",
    "SELECT 1, 'a', NULL, '', 2.5",
    "SELECT 'a|b' AS pipe, 'comma,quote\"' AS cq",
    "SELECT 'x\ny' AS nl, 'tab\tz' AS tab",
    "SELECT 'é日本' AS u, 'naïve café' AS v",
    "SELECT -0.0, 0.0, 1e300, -1e300, 1e-300",
    "SELECT 0.1, 0.2, 0.3, 1.0/3, 2.0/3, 100.0",
    "SELECT 9223372036854775807, -9223372036854775808, -1, 0",
    "SELECT x'00ff', x'', x'41ff42', x'414243'",
    "SELECT zeroblob(3) AS z, zeroblob(0) AS e",
    "SELECT printf('%.300c', 'x') AS long300",
    "SELECT printf('%.70c', 'y') AS long70, 'short'",
    "SELECT 9e999, -9e999, 1e308*10",
    "SELECT 123456789012345678.0, 1e15, 1e16, 1e17, 1.5e-7",
    "SELECT 2.5e-5, 1e-4, 0.00001, 12345.6789, -12345.6789",
    "SELECT 3.141592653589793, 2.718281828459045, 1.7976931348623157e308",
    "SELECT 4.9406564584124654e-324, 2.2250738585072014e-308",
    "SELECT char(1), char(127), char(31)||'a', 'a'||char(8)||char(12)",
    "SELECT 'a\r\nb' AS crlf, 'c\rd' AS cr, 'line1\n\nline3' AS blank",
    "SELECT 'back\\slash' AS bs, '\"quoted\"' AS dq, 'it''s' AS sq",
    "SELECT ' lead', 'trail ', ' ', 'a b'",
    "SELECT 1 AS \"weird name\", 2 AS \"new\nline\", 3 AS \"é\"",
    "SELECT 1 AS \"quo\"\"te\", 2 AS [brack], 3 AS \"a,b\", 4 AS \"a|b\"",
    "SELECT 1 WHERE 0",
    "SELECT NULL, NULL",
    "VALUES (1, 'one'), (2, 'two'), (3, NULL), (NULL, '')",
    "VALUES (1.5, x'01'), ('text', 42), (NULL, -0.5)",
    "VALUES ('a\nb\nc', 'x'), ('y', 'p\nq'), ('z', 'r')",
    "VALUES ('wide value here', 1), ('w', 1000000)",
    "SELECT typeof(1), typeof(1.0), typeof('1'), typeof(x'01'), "
    "typeof(NULL)",
    "SELECT 7/2, 7.0/2, 7%3, -7/2, 1<<62",
    "SELECT 'a'||2, 1||'', 10 == 10.0, 'abc' < 'abd'",
    "SELECT upper('héllo'), lower('ÀÉ'), length('日本語')",
    "SELECT 'tab\there\tand\tthere', '\t', 'x\t\ty'",
    "SELECT printf('%.1000c', 'z') AS huge",
    "SELECT 'trailing newline\n', '\nleading'",
    "SELECT 1e10, 1e20, 1e21, 1e22, 123e-10",
    "SELECT 0.5, -0.5, 1.25, 1e-5, 99.99",
    "SELECT 1 AS a, 2 AS a, 3 AS A",
    "SELECT cast('12abc' AS INTEGER), cast(3.99 AS INTEGER), cast(1 AS REAL)",
    "SELECT 'emoji 😀 here', '∑ ∫ √', 'ÿ'",
    "SELECT x'C3A9E697A5', cast(x'C3A9' AS TEXT)",
    "SELECT 'a'||char(0)||'b' AS nul_in_text, length('a'||char(0)||'b')",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c "
    "WHERE n<25) SELECT n, n*n*1.5, printf('%.*c', n, '#') FROM c",
    "SELECT 'mixed', 12, 3.5, NULL, x'ff', '' UNION ALL "
    "SELECT NULL, 'twelve', 'x', 1, 2, 3",
    "SELECT json('{\"a\":1}') AS js, '[1,2]' AS arr",
    "SELECT 1.0, 2.0, 1e0, 100000000000000000000.0",
};

#define QUERY_COUNT (sizeof(queries) / sizeof(queries[0]))

static const char *const cli_modes[] = {"list", "csv", "json", "box", "table"};

/* Runs `sqlite3 <options> :memory: '<query>'` and returns its standard
 * output. */
static void run_cli(const char *options, const char *query,
                    struct common_buf *out)
{
    struct common_buf command;
    common_buf_init(&command, 1 << 20);
    char head[256];
    snprintf(head, sizeof(head), "%s %s :memory: '", SQLITE3_CLI, options);
    assert_int_equal(common_buf_append(&command, head, strlen(head)), 0);
    for (const char *p = query; *p; p++) {
        const char *piece = *p == '\'' ? "'\\''" : p;
        size_t size = *p == '\'' ? 4 : 1;
        assert_int_equal(common_buf_append(&command, piece, size), 0);
    }
    assert_int_equal(common_buf_append(&command, "'", 2), 0);
    FILE *pipe = popen((const char *)command.data, "r");
    assert_non_null(pipe);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), pipe)) > 0) {
        assert_int_equal(common_buf_append(out, chunk, got), 0);
    }
    assert_int_equal(pclose(pipe), 0);
    common_buf_close(&command);
}

static void read_value(sqlite3_stmt *stmt, int column,
                       struct shell_value *value)
{
    value->type = sqlite3_column_type(stmt, column);
    value->real = 0.0;
    if (value->type == SQLITE_FLOAT) {
        value->real = sqlite3_column_double(stmt, column);
    }
    /* A blob read as text is its bytes and a NUL, as the engine gives it. */
    value->text = (const char *)sqlite3_column_text(stmt, column);
    value->size = (size_t)sqlite3_column_bytes(stmt, column);
}

static int output_rows(sqlite3_stmt *stmt, struct shell_output *output)
{
    int count = sqlite3_column_count(stmt);
    struct shell_value values[16];
    assert_true(count <= 16);
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        for (int i = 0; i < count; i++) {
            read_value(stmt, i, &values[i]);
        }
        assert_int_equal(shell_output_row(output, values), 0);
    }
    assert_int_equal(rc, SQLITE_DONE);
    return shell_output_end(output);
}

/* Formats the query's result in-process, as the shell does. */
static void run_formatter(const struct shell_output_config *config,
                          const char *query, struct common_buf *out)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, query, -1, &stmt, NULL), SQLITE_OK);
    int count = sqlite3_column_count(stmt);
    const char *names[16];
    assert_true(count > 0 && count <= 16);
    for (int i = 0; i < count; i++) {
        names[i] = sqlite3_column_name(stmt, i);
    }
    struct shell_output output;
    assert_int_equal(shell_output_begin(&output, config, count, names, out), 0);
    assert_int_equal(output_rows(stmt, &output), 0);
    shell_output_close(&output);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
}

static void show_mismatch(const char *query, const char *options,
                          const struct common_buf *want,
                          const struct common_buf *got)
{
    print_error("MISMATCH sqlite3 %s: %s\n--- sqlite3 (%zu bytes)\n%.*s\n"
                "--- shell_output (%zu bytes)\n%.*s\n",
                options, query, want->size, (int)want->size,
                (const char *)want->data, got->size, (int)got->size,
                (const char *)got->data);
}

/* True when sqlite3 with options prints for query what the formatter
 * prints with config. */
static bool compare(const struct shell_output_config *config,
                    const char *options, const char *query)
{
    struct common_buf want;
    struct common_buf got;
    common_buf_init(&want, 1 << 24);
    common_buf_init(&got, 1 << 24);
    run_cli(options, query, &want);
    run_formatter(config, query, &got);
    bool same = want.size == got.size &&
                (want.size == 0 || memcmp(want.data, got.data, got.size) == 0);
    if (!same) {
        show_mismatch(query, options, &want, &got);
    }
    common_buf_close(&want);
    common_buf_close(&got);
    return same;
}

/* The settings `sqlite3 -<mode> [-header]` runs with. */
static bool compare_flags(const char *query, int mode, bool header)
{
    struct shell_output_config config = {
        .mode = mode,
        .show_header = header,
        .separator = mode == SHELL_MODE_CSV ? "," : "|",
        .row_separator = "\n",
        .null_value = "",
        .wrap = 0,
    };
    char options[64];
    snprintf(options, sizeof(options), "-%s -%s", cli_modes[mode],
             header ? "header" : "noheader");
    return compare(&config, options, query);
}

static void shell_output_matches_sqlite3_cli(void **state)
{
    (void)state;
    int compared = 0;
    int mismatches = 0;
    for (size_t q = 0; q < QUERY_COUNT; q++) {
        for (int mode = SHELL_MODE_LIST; mode <= SHELL_MODE_TABLE; mode++) {
            for (int header = 0; header <= 1; header++) {
                mismatches += !compare_flags(queries[q], mode, header != 0);
                compared++;
            }
        }
    }
    print_message("compared %d outputs of %zu queries: %d mismatches\n",
                  compared, QUERY_COUNT, mismatches);
    assert_true(QUERY_COUNT >= 40);
    assert_int_equal(mismatches, 0);
}

/* .mode box and .mode table wrap at 60 code points; .mode csv ends rows
 * with CR LF; -separator and -nullvalue change list and csv. */
static void shell_output_settings_match_sqlite3_cli(void **state)
{
    (void)state;
    static const char *const wide =
        "VALUES (printf('%.130c', 'w'), 'a\tb'), ('short', "
        "'é' || printf('%.61c', 'e')), (NULL, 'z')";
    struct shell_output_config config = {
        .mode = SHELL_MODE_BOX,
        .show_header = false,
        .separator = "|",
        .row_separator = "\n",
        .null_value = "",
        .wrap = 60,
    };
    assert_true(compare(&config, "-cmd '.mode box'", wide));
    config.mode = SHELL_MODE_TABLE;
    assert_true(compare(&config, "-cmd '.mode table'", wide));
    config.null_value = "NIL";
    assert_true(compare(&config, "-cmd '.mode table' -nullvalue NIL", wide));
    config = (struct shell_output_config){
        .mode = SHELL_MODE_CSV,
        .show_header = true,
        .separator = ",",
        .row_separator = "\r\n",
        .null_value = "",
        .wrap = 0,
    };
    assert_true(compare(&config, "-header -cmd '.mode csv'", queries[1]));
    config.separator = ";";
    config.null_value = "(null)";
    assert_true(compare(&config,
                        "-header -cmd '.mode csv' -separator ';' "
                        "-nullvalue '(null)'",
                        "SELECT 'a;b', NULL, 'c'"));
    config.mode = SHELL_MODE_LIST;
    config.separator = " :: ";
    config.row_separator = "\n";
    assert_true(compare(&config,
                        "-header -separator ' :: ' -nullvalue "
                        "'(null)'",
                        "VALUES (1, NULL), (NULL, 'x')"));
}

/* The json REAL renderer gives what SQLite's own printf("%!.20g") gives
 * (its long double digits, not the exact decimal expansion): checked
 * against sqlite3_mprintf() on chosen values and on random bit patterns. */
static void check_real20(double value)
{
    char text[SHELL_REAL20_SIZE];
    char *want = sqlite3_mprintf("%!.20g", value);
    assert_non_null(want);
    size_t size = shell_output_real20(value, text);
    if (strcmp(text, want) != 0) {
        print_error("%a: got %s, want %s\n", value, text, want);
    }
    assert_string_equal(text, want);
    assert_int_equal(size, strlen(want));
    sqlite3_free(want);
}

static void shell_output_real20_renders_as_sqlite(void **state)
{
    (void)state;
    static const double values[] = {
        0.1,
        1e300,
        -0.0,
        0.0,
        2.5,
        -3.0,
        1e19,
        1e20,
        1e21,
        1e-5,
        1e-4,
        0.5,
        1.0 / 3,
        2.0 / 3,
        1e-300,
        5e-324,
        1e308,
        -1e308,
        123456789.123456789,
        9007199254740993.0,
    };
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        check_real20(values[i]);
    }
    struct common_test_rng rng;
    common_test_rng_seed(&rng, "shell_output_real20_renders_as_sqlite");
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = common_test_rng_next(&rng);
        double value;
        memcpy(&value, &bits, sizeof(value));
        if (value == value && value - value == 0.0) { /* finite */
            check_real20(value);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shell_output_matches_sqlite3_cli),
        cmocka_unit_test(shell_output_settings_match_sqlite3_cli),
        cmocka_unit_test(shell_output_real20_renders_as_sqlite),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
