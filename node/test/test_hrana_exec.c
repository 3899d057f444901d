/* SPDX-License-Identifier: MIT
 *
 * test_hrana_exec.c: Hrana pipelines run on an in-memory engine database.
 * Each test posts a body shaped like the ones @libsql/client sends (the
 * protocol notes, part B2) and compares the results, parsed, with the
 * expected JSON: values (integers as strings, JavaScript numbers bound as
 * REAL, blobs in base64), named arguments without their sigil,
 * want_rows, errors and their codes, batches with their conditions,
 * sequences, stored SQL across pipelines, describe, close, READONLY
 * transactions and the node's group-transaction mode.
 */
#include "common_test.h"

#include <string.h>

#include "hrana_int.h"

struct fixture {
    struct hrana_streams *streams;
    struct hrana_stream *stream;
    struct engine_db *db;
    struct hrana_run_options options;
    struct hrana_run_outcome outcome;
};

/* Opened and closed inside each test: cmocka counts what a test function
 * allocated and left (the engine's tables, the stream's SQL) as leaked. */
static struct fixture *fixture_open(void)
{
    struct fixture *f = test_calloc(1, sizeof(*f));

    assert_int_equal(hrana_streams_new(4, &f->streams), 0);
    assert_int_equal(hrana_streams_take(f->streams, NULL, 0, &f->stream), 0);
    assert_int_equal(engine_open(NULL, &f->db), 0);
    return f;
}

static void fixture_close(struct fixture *f)
{
    json_decref(f->outcome.results);
    hrana_streams_free(f->streams);
    engine_close(f->db);
    test_free(f);
}

static void assert_json(const json_t *actual, const char *expected_text)
{
    json_error_t error;
    json_t *expected = json_loads(expected_text, 0, &error);

    if (expected == NULL) {
        fail_msg("bad expected JSON: %s: %s", error.text, expected_text);
    }
    if (!json_equal(actual, expected)) {
        char *text = json_dumps(actual, JSON_COMPACT);
        fprintf(stderr, "expected %s\n     got %s\n", expected_text, text);
        free(text);
        json_decref(expected);
        fail();
    }
    json_decref(expected);
}

/* Runs body on the fixture's stream and checks the results array. */
static void run(struct fixture *f, const char *body, const char *expected)
{
    struct hrana_pipeline pipeline;
    char error[256];

    json_decref(f->outcome.results);
    f->outcome.results = NULL;
    assert_int_equal(hrana_pipeline_parse(body, strlen(body), 2, &pipeline,
                                          error, sizeof(error)),
                     0);
    assert_int_equal(hrana_pipeline_run(f->stream, f->db, &pipeline,
                                        &f->options, &f->outcome),
                     0);
    hrana_pipeline_release(&pipeline);
    if (expected != NULL) {
        assert_json(f->outcome.results, expected);
    }
}

/* One execute of sql (a JSON string's body) with no arguments. */
static void exec_sql(struct fixture *f, const char *sql)
{
    char body[512];

    snprintf(
        body, sizeof(body),
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"%s\"}}]}",
        sql);
    run(f, body, NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(f->outcome.results, 0), "type")),
                        "ok");
}

#define EMPTY_RESULT                                                           \
    "{\"cols\":[],\"rows\":[],\"affected_row_count\":0,"                       \
    "\"last_insert_rowid\":null}"

static void test_positional_values(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* B2's first body: every JS number is a float, 1 too, and binds REAL. */
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ? AS "
        "a, typeof(?) AS t, ? AS i, ? AS s, ? AS b, ? AS n\",\"args\":["
        "{\"type\":\"float\",\"value\":2.5},{\"type\":\"float\",\"value\":1},"
        "{\"type\":\"integer\",\"value\":\"-9223372036854775808\"},"
        "{\"type\":\"text\",\"value\":\"h\\u00e9\"},"
        "{\"type\":\"blob\",\"base64\":\"AQID\"},{\"type\":\"null\"}],"
        "\"named_args\":[],\"want_rows\":true}},{\"type\":\"close\"}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"a\",\"decltype\":null},{\"name\":\"t\","
        "\"decltype\":null},{\"name\":\"i\",\"decltype\":null},{\"name\":\"s\","
        "\"decltype\":null},{\"name\":\"b\",\"decltype\":null},{\"name\":\"n\","
        "\"decltype\":null}],\"rows\":[[{\"type\":\"float\",\"value\":2.5},"
        "{\"type\":\"text\",\"value\":\"real\"},"
        "{\"type\":\"integer\",\"value\":\"-9223372036854775808\"},"
        "{\"type\":\"text\",\"value\":\"h\\u00e9\"},"
        "{\"type\":\"blob\",\"base64\":\"AQID\"},{\"type\":\"null\"}]],"
        "\"affected_row_count\":0,\"last_insert_rowid\":null}}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"close\"}}]");
    assert_true(f->outcome.closed);
    fixture_close(f);
}

static void test_named_args(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* Names come without their sigil: ':', '@' and '$' are tried; a name
     * with its sigil is taken as is, one the statement lacks is ignored. */
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT :n AS "
        "x, @m AS y, $k AS z, :q AS w\",\"args\":[],\"named_args\":["
        "{\"name\":\"n\",\"value\":{\"type\":\"integer\",\"value\":\"1\"}},"
        "{\"name\":\"m\",\"value\":{\"type\":\"blob\",\"base64\":\"\"}},"
        "{\"name\":\"k\",\"value\":{\"type\":\"text\",\"value\":\"v\"}},"
        "{\"name\":\":q\",\"value\":{\"type\":\"float\",\"value\":-0.5}},"
        "{\"name\":\"absent\",\"value\":{\"type\":\"null\"}}]}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"x\",\"decltype\":null},{\"name\":\"y\","
        "\"decltype\":null},{\"name\":\"z\",\"decltype\":null},{\"name\":\"w\","
        "\"decltype\":null}],\"rows\":[[{\"type\":\"integer\",\"value\":\"1\"},"
        "{\"type\":\"blob\",\"base64\":\"\"},{\"type\":\"text\",\"value\":"
        "\"v\"},{\"type\":\"float\",\"value\":-0.5}]],"
        "\"affected_row_count\":0,\"last_insert_rowid\":null}}}]");
    fixture_close(f);
}

static void test_writes_and_want_rows(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"CREATE TABLE "
        "t(a INTEGER PRIMARY KEY, b NOT NULL)\"}},{\"type\":\"execute\","
        "\"stmt\":{\"sql\":\"INSERT INTO t(b) VALUES (10), (20)\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT b FROM t\","
        "\"want_rows\":false}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[],\"rows\":[],\"affected_row_count\":0,"
        "\"last_insert_rowid\":\"0\"}}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[],\"rows\":[],\"affected_row_count\":2,"
        "\"last_insert_rowid\":\"2\"}}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"b\",\"decltype\":null}],\"rows\":[],"
        "\"affected_row_count\":0,\"last_insert_rowid\":null}}}]");
    assert_true(f->outcome.wrote);
    assert_false(f->outcome.in_transaction);
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":"
        "\"SELECT 1\"}}]}",
        NULL);
    assert_false(f->outcome.wrote);
    /* A schema change changes no row but writes. */
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":"
        "\"CREATE INDEX i ON t(b)\"}}]}",
        NULL);
    assert_true(f->outcome.wrote);
    fixture_close(f);
}

static void test_errors(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    exec_sql(f, "CREATE TABLE t(a INTEGER PRIMARY KEY, b NOT NULL)");
    run(f,
        "{\"requests\":["
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT * FROM nope\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELEC 1\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"INSERT INTO t VALUES "
        "(1, NULL)\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT 1; SELECT 2\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\" -- nothing\\n ; \"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?, :a\",\"args\":"
        "[{\"type\":\"null\"}],\"named_args\":[{\"name\":\"a\",\"value\":"
        "{\"type\":\"null\"}}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"null\"},{\"type\":\"null\"}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT 1;\"}}]}",
        "[{\"type\":\"error\",\"error\":{\"message\":\"no such table: nope\","
        "\"code\":\"SQLITE_ERROR\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"near \\\"SELEC\\\": "
        "syntax error\",\"code\":\"SQL_PARSE_ERROR\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"NOT NULL constraint "
        "failed: t.b\",\"code\":\"SQLITE_CONSTRAINT\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"SQL text holds more "
        "than one statement (use a sequence or a batch)\",\"code\":"
        "\"SQL_MANY_STATEMENTS\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"SQL text holds no "
        "statement\",\"code\":\"SQL_NO_STATEMENT\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"positional and named "
        "arguments cannot be mixed\",\"code\":"
        "\"ARGS_BOTH_POSITIONAL_AND_NAMED\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"2 arguments given for 1 "
        "parameters\",\"code\":\"ARGS_INVALID\"}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"1\",\"decltype\":null}],\"rows\":[[{\"type\":"
        "\"integer\",\"value\":\"1\"}]],\"affected_row_count\":0,"
        "\"last_insert_rowid\":null}}}]");
    fixture_close(f);
}

static void test_bad_values(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":["
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"blob\",\"base64\":\"AQ*D\"}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"integer\",\"value\":\"9223372036854775808\"}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"integer\",\"value\":\"12 \"}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"float\",\"value\":null}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT ?\",\"args\":"
        "[{\"type\":\"date\"}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT 1e999\"}}]}",
        "[{\"type\":\"error\",\"error\":{\"message\":\"argument 0: blob value "
        "is not valid base64\",\"code\":\"ARGS_INVALID\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"argument 0: integer "
        "value is not a 64-bit integer in decimal\",\"code\":"
        "\"ARGS_INVALID\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"argument 0: integer "
        "value is not a 64-bit integer in decimal\",\"code\":"
        "\"ARGS_INVALID\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"argument 0: float value "
        "is not a number\",\"code\":\"ARGS_INVALID\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"argument 0: value has "
        "unknown type \\\"date\\\"\",\"code\":\"ARGS_INVALID\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"column 0 holds a REAL "
        "that is not finite (Inf), which JSON cannot carry; CAST it to "
        "TEXT\",\"code\":\"SQLITE_ERROR\"}}]");
    fixture_close(f);
}

static void test_text_not_utf8(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* SQLite text may hold any bytes; JSON's must be UTF-8. */
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT "
        "CAST(x'41ff42' AS TEXT) AS t\"}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"t\",\"decltype\":null}],\"rows\":[[{\"type\":"
        "\"text\",\"value\":\"A\\ufffdB\"}]],\"affected_row_count\":0,"
        "\"last_insert_rowid\":null}}}]");
    fixture_close(f);
}

/* B2's client.batch([...], "write") body, verbatim. */
static const char batch_write_body[] =
    "{\"requests\":[{\"type\":\"store_sql\",\"sql_id\":0,\"sql\":\"CREATE "
    "TABLE t(a)\"},{\"type\":\"store_sql\",\"sql_id\":1,\"sql\":\"INSERT INTO "
    "t VALUES (?)\"},"
    "{\"type\":\"batch\",\"batch\":{\"steps\":["
    "{\"stmt\":{\"sql\":\"BEGIN IMMEDIATE\",\"args\":[],\"named_args\":[],"
    "\"want_rows\":false}},"
    "{\"condition\":{\"type\":\"ok\",\"step\":0},\"stmt\":{\"sql_id\":0,"
    "\"args\":[],\"named_args\":[],\"want_rows\":true}},"
    "{\"condition\":{\"type\":\"ok\",\"step\":1},\"stmt\":{\"sql_id\":1,"
    "\"args\":[{\"type\":\"text\",\"value\":\"hi\"}],\"named_args\":[],"
    "\"want_rows\":true}},"
    "{\"condition\":{\"type\":\"ok\",\"step\":2},\"stmt\":{\"sql_id\":1,"
    "\"args\":[{\"type\":\"null\"}],\"named_args\":[],\"want_rows\":true}},"
    "{\"condition\":{\"type\":\"ok\",\"step\":3},\"stmt\":{\"sql\":\"COMMIT\","
    "\"args\":[],\"named_args\":[],\"want_rows\":false}},"
    "{\"condition\":{\"type\":\"not\",\"cond\":{\"type\":\"ok\",\"step\":4}},"
    "\"stmt\":{\"sql\":\"ROLLBACK\",\"args\":[],\"named_args\":[],"
    "\"want_rows\":false}}]}},"
    "{\"type\":\"close\"}]}";

#define OK_STORE "{\"type\":\"ok\",\"response\":{\"type\":\"store_sql\"}}"
#define OK_CLOSE "{\"type\":\"ok\",\"response\":{\"type\":\"close\"}}"
#define RESULT(affected, rowid)                                                \
    "{\"cols\":[],\"rows\":[],\"affected_row_count\":" #affected               \
    ",\"last_insert_rowid\":" rowid "}"
#define DONE_0_0 RESULT(0, "\"0\"")
#define DONE_0_1 RESULT(0, "\"1\"")
#define DONE_1_1 RESULT(1, "\"1\"")
#define DONE_1_2 RESULT(1, "\"2\"")
#define DONE_0_2 RESULT(0, "\"2\"")

static void test_batch_write(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;
    /* COMMIT changed no row itself: affected_row_count 0. */
    run(f, batch_write_body,
        "[" OK_STORE "," OK_STORE ","
        "{\"type\":\"ok\",\"response\":{\"type\":\"batch\",\"result\":{"
        "\"step_results\":[" DONE_0_0 "," DONE_0_0 "," DONE_1_1 "," DONE_1_2
        "," DONE_0_2 ",null],"
        "\"step_errors\":[null,null,null,null,null,null]}}}," OK_CLOSE "]");
    assert_true(f->outcome.wrote);
    assert_false(f->outcome.in_transaction);
    fixture_close(f);
}

static void test_batch_failure_skips(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* Step 2 fails: COMMIT (ok 2) is skipped, null in both arrays; the
     * ROLLBACK (not ok 3) runs and undoes step 1. */
    exec_sql(f, "CREATE TABLE t(a NOT NULL)");
    run(f,
        "{\"requests\":[{\"type\":\"batch\",\"batch\":{\"steps\":["
        "{\"stmt\":{\"sql\":\"BEGIN\"}},"
        "{\"condition\":{\"type\":\"ok\",\"step\":0},\"stmt\":{\"sql\":"
        "\"INSERT INTO t VALUES (1)\"}},"
        "{\"condition\":{\"type\":\"ok\",\"step\":1},\"stmt\":{\"sql\":"
        "\"INSERT INTO t VALUES (NULL)\"}},"
        "{\"condition\":{\"type\":\"ok\",\"step\":2},\"stmt\":{\"sql\":"
        "\"COMMIT\"}},"
        "{\"condition\":{\"type\":\"not\",\"cond\":{\"type\":\"ok\",\"step\":"
        "3}},\"stmt\":{\"sql\":\"ROLLBACK\"}}]}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT count(*) AS n FROM "
        "t\"}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"batch\",\"result\":{"
        "\"step_results\":[" DONE_0_0 "," DONE_1_1 ",null,null," DONE_0_1 "],"
        "\"step_errors\":[null,"
        "null,{\"message\":\"NOT "
        "NULL constraint "
        "failed: "
        "t.a\",\"code\":\"SQLITE_"
        "CONSTRAINT\"},null,null]"
        "}}},"
        "{\"type\":\"ok\","
        "\"response\":{\"type\":"
        "\"execute\",\"result\":{"
        "\"cols\":[{\"name\":"
        "\"n\",\"decltype\":null}"
        "],\"rows\":[[{\"type\":"
        "\"integer\",\"value\":"
        "\"0\"}]],\"affected_row_"
        "count\":0,"
        "\"last_insert_rowid\":"
        "null}}}]");
    fixture_close(f);
}

static void test_batch_conditions(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":[{\"type\":\"batch\",\"batch\":{\"steps\":["
        "{\"stmt\":{\"sql\":\"SELECT nope\",\"want_rows\":false}},"
        "{\"condition\":{\"type\":\"error\",\"step\":0},\"stmt\":{\"sql\":"
        "\"BEGIN\"}},"
        "{\"condition\":{\"type\":\"is_autocommit\"},\"stmt\":{\"sql\":"
        "\"SELECT 1\",\"want_rows\":false}},"
        "{\"condition\":{\"type\":\"and\",\"conds\":[{\"type\":\"ok\",\"step\":"
        "1},{\"type\":\"not\",\"cond\":{\"type\":\"is_autocommit\"}}]},"
        "\"stmt\":{\"sql\":\"COMMIT\"}},"
        "{\"condition\":{\"type\":\"or\",\"conds\":[{\"type\":\"ok\",\"step\":"
        "2},{\"type\":\"error\",\"step\":2}]},\"stmt\":{\"sql\":\"SELECT 2\","
        "\"want_rows\":false}},"
        "{\"condition\":{\"type\":\"and\",\"conds\":[]},\"stmt\":{\"sql\":"
        "\"SELECT 3\",\"want_rows\":false}},"
        "{\"condition\":{\"type\":\"or\",\"conds\":[]},\"stmt\":{\"sql\":"
        "\"SELECT 4\"}}]}},"
        "{\"type\":\"batch\",\"batch\":{\"steps\":[{\"condition\":{\"type\":"
        "\"ok\",\"step\":0},\"stmt\":{\"sql\":\"SELECT 1\"}}]}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"batch\",\"result\":{"
        "\"step_results\":[null," DONE_0_0 ",null," DONE_0_0 ",null,"
        "{\"cols\":[{\"name\":\"3\",\"decltype\":null}],"
        "\"rows\":[],"
        "\"affected_row_count\":0,\"last_insert_rowid\":null},"
        "null],"
        "\"step_errors\":[{\"message\":\"no such column: "
        "nope\",\"code\":"
        "\"SQLITE_ERROR\"},null,null,null,null,null,null]}}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"batch "
        "step 0 has an "
        "invalid condition (it may refer only to earlier "
        "steps)\",\"code\":"
        "\"HRANA_PROTO_ERROR\"}}]");
    fixture_close(f);
}

static void test_sequence(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":[{\"type\":\"sequence\",\"sql\":\"CREATE TABLE u(a); "
        "CREATE TABLE v(b); INSERT INTO u VALUES ('x;y');\"},"
        "{\"type\":\"sequence\",\"sql\":\"INSERT INTO v VALUES (1); INSERT "
        "INTO nope VALUES (2); INSERT INTO v VALUES (3)\"},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT (SELECT count(*) "
        "FROM u) || (SELECT count(*) FROM v) AS c\"}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"sequence\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"no such table: nope\","
        "\"code\":\"SQLITE_ERROR\"}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"c\",\"decltype\":null}],\"rows\":[[{\"type\":"
        "\"text\",\"value\":\"11\"}]],\"affected_row_count\":0,"
        "\"last_insert_rowid\":null}}}]");
    fixture_close(f);
}

static void test_stored_sql_across_pipelines(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":[{\"type\":\"store_sql\",\"sql_id\":7,\"sql\":\"SELECT "
        "? + 1 AS r\"},{\"type\":\"store_sql\",\"sql_id\":7,\"sql\":\"x\"}]}",
        "[" OK_STORE ",{\"type\":\"error\",\"error\":{\"message\":\"SQL text "
        "7 is already stored\",\"code\":\"HRANA_PROTO_ERROR\"}}]");
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql_id\":7,\"args\":"
        "[{\"type\":\"integer\",\"value\":\"41\"}]}},"
        "{\"type\":\"close_sql\",\"sql_id\":7},"
        "{\"type\":\"execute\",\"stmt\":{\"sql_id\":7}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql_id\":7,\"sql\":\"SELECT 1\"}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\",\"result\":{"
        "\"cols\":[{\"name\":\"r\",\"decltype\":null}],\"rows\":[[{\"type\":"
        "\"integer\",\"value\":\"42\"}]],\"affected_row_count\":0,"
        "\"last_insert_rowid\":null}}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"close_sql\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"no SQL text stored as "
        "7\",\"code\":\"HRANA_PROTO_ERROR\"}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"exactly one of "
        "\\\"sql\\\" "
        "and \\\"sql_id\\\" must be given\",\"code\":\"HRANA_PROTO_ERROR\"}}]");
    fixture_close(f);
}

static void test_autocommit_and_close(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    run(f,
        "{\"requests\":[{\"type\":\"get_autocommit\"},{\"type\":\"execute\","
        "\"stmt\":{\"sql\":\"BEGIN\"}},{\"type\":\"get_autocommit\"}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"get_autocommit\","
        "\"is_autocommit\":true}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" DONE_0_0 "}},"
        "{\"type\":\"ok\",\"response\":{"
        "\"type\":\"get_autocommit\","
        "\"is_autocommit\":false}}]");
    assert_true(f->outcome.in_transaction);
    /* close rolls back what the client left open; nothing runs after it. */
    run(f,
        "{\"requests\":[{\"type\":\"close\"},{\"type\":\"get_autocommit\"}]}",
        "[" OK_CLOSE ",{\"type\":\"error\",\"error\":{\"message\":\"the "
        "stream was closed by an earlier request\",\"code\":"
        "\"HRANA_PROTO_ERROR\"}}]");
    assert_true(f->outcome.closed);
    assert_false(f->outcome.in_transaction);
    assert_false(engine_in_transaction(f->db));
    fixture_close(f);
}

static void test_describe(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    exec_sql(f, "CREATE TABLE t(a, b)");
    run(f,
        "{\"requests\":[{\"type\":\"describe\",\"sql\":\"SELECT a AS x, "
        "? , :name, ?5, '?' FROM t WHERE b = @b\"},"
        "{\"type\":\"describe\",\"sql\":\"INSERT INTO t VALUES ($v, ?)\"},"
        "{\"type\":\"describe\",\"sql\":\"SELECT 1; SELECT 2\"}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"describe\",\"result\":{"
        "\"params\":[{\"name\":null},{\"name\":\":name\"},{\"name\":null},"
        "{\"name\":null},{\"name\":\"?5\"},{\"name\":\"@b\"}],"
        "\"cols\":[{\"name\":\"x\",\"decltype\":null},{\"name\":\"?\","
        "\"decltype\":null},{\"name\":\":name\",\"decltype\":null},"
        "{\"name\":\"?5\",\"decltype\":null},{\"name\":\"'?'\",\"decltype\":"
        "null}],\"is_explain\":false,\"is_readonly\":true}}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"describe\",\"result\":{"
        "\"params\":[{\"name\":\"$v\"},{\"name\":null}],\"cols\":[],"
        "\"is_explain\":false,\"is_readonly\":false}}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"SQL text holds more "
        "than one statement\",\"code\":\"SQL_MANY_STATEMENTS\"}}]");
    fixture_close(f);
}

static void test_readonly_transaction(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* B2's transaction("read"): BEGIN TRANSACTION READONLY, then reads;
     * a write inside it is refused, as libSQL refuses it. */
    exec_sql(f, "CREATE TABLE t(a)");
    run(f,
        "{\"requests\":[{\"type\":\"store_sql\",\"sql_id\":0,\"sql\":"
        "\"SELECT count(*) AS n FROM t\"},{\"type\":\"batch\",\"batch\":{"
        "\"steps\":[{\"stmt\":{\"sql\":\"BEGIN TRANSACTION READONLY\","
        "\"args\":[],\"named_args\":[],\"want_rows\":false}},{\"condition\":"
        "{\"type\":\"ok\",\"step\":0},\"stmt\":{\"sql_id\":0,\"args\":[],"
        "\"named_args\":[],\"want_rows\":true}}]}}]}",
        "[" OK_STORE ",{\"type\":\"ok\",\"response\":{\"type\":\"batch\","
        "\"result\":{\"step_results\":[" DONE_0_0 ","
        "{\"cols\":[{\"name\":\"n\",\"decltype\":null}],\"rows\":["
        "[{\"type\":"
        "\"integer\",\"value\":\"0\"}]],\"affected_row_count\":0,"
        "\"last_insert_rowid\":null}],\"step_errors\":[null,null]}"
        "}}]");
    assert_true(f->outcome.in_transaction);
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"INSERT INTO "
        "t VALUES (1)\"}},{\"type\":\"execute\",\"stmt\":{\"sql\":\"COMMIT\","
        "\"want_rows\":false}},{\"type\":\"execute\",\"stmt\":{\"sql\":"
        "\"INSERT INTO t VALUES (1)\"}},{\"type\":\"close\"}]}",
        "[{\"type\":\"error\",\"error\":{\"message\":\"attempt to write a "
        "readonly database (the transaction began READONLY)\",\"code\":"
        "\"SQLITE_READONLY\"}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" DONE_0_0 "}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" DONE_1_1 "}}," OK_CLOSE "]");
    fixture_close(f);
}

static void test_group_transaction(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    /* The node's quorum mode: it opened the transaction; the client's
     * BEGIN/COMMIT only track the client's, ROLLBACK asks the node. */
    exec_sql(f, "CREATE TABLE t(a)");
    exec_sql(f, "BEGIN");
    f->options.in_group_transaction = true;
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"COMMIT\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"BEGIN IMMEDIATE\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"BEGIN\"}},"
        "{\"type\":\"get_autocommit\"},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"INSERT INTO t VALUES "
        "(1)\"}}]}",
        "[{\"type\":\"error\",\"error\":{\"message\":\"cannot commit - no "
        "transaction is active\",\"code\":\"SQLITE_ERROR\"}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" EMPTY_RESULT "}},"
        "{\"type\":\"error\",\"error\":{\"message\":\"cannot start a "
        "transaction within a transaction\",\"code\":\"SQLITE_ERROR\"}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"get_autocommit\","
        "\"is_autocommit\":false}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" DONE_1_1 "}}]");
    assert_true(f->outcome.in_transaction);
    assert_true(f->outcome.wrote);
    assert_false(f->outcome.rollback_requested);
    assert_true(engine_in_transaction(f->db));
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"END\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"BEGIN\"}},"
        "{\"type\":\"execute\",\"stmt\":{\"sql\":\"ROLLBACK\"}}]}",
        "[{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" EMPTY_RESULT "}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" EMPTY_RESULT "}},"
        "{\"type\":\"ok\",\"response\":{\"type\":\"execute\","
        "\"result\":" EMPTY_RESULT "}}]");
    assert_true(f->outcome.rollback_requested);
    assert_false(f->outcome.in_transaction);
    assert_false(f->outcome.wrote);
    /* The handle's transaction is the node's: still open. */
    assert_true(engine_in_transaction(f->db));
    fixture_close(f);
}

static void test_response_too_large(void **state)
{
    struct fixture *f = fixture_open();

    (void)state;

    f->options.max_response_bytes = 200;
    run(f,
        "{\"requests\":[{\"type\":\"execute\",\"stmt\":{\"sql\":\"SELECT "
        "printf('%.300c', 'x')\"}},{\"type\":\"execute\",\"stmt\":{\"sql\":"
        "\"SELECT printf('%.300c', 'x')\",\"want_rows\":false}}]}",
        NULL);
    assert_json(json_array_get(f->outcome.results, 0),
                "{\"type\":\"error\",\"error\":{\"message\":\"the response "
                "would be larger than 200 bytes\",\"code\":"
                "\"RESPONSE_TOO_LARGE\"}}");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(f->outcome.results, 1), "type")),
                        "ok");
    fixture_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positional_values),
        cmocka_unit_test(test_named_args),
        cmocka_unit_test(test_writes_and_want_rows),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_text_not_utf8),
        cmocka_unit_test(test_batch_write),
        cmocka_unit_test(test_batch_failure_skips),
        cmocka_unit_test(test_batch_conditions),
        cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_stored_sql_across_pipelines),
        cmocka_unit_test(test_autocommit_and_close),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_readonly_transaction),
        cmocka_unit_test(test_group_transaction),
        cmocka_unit_test(test_response_too_large),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
