/* SPDX-License-Identifier: MIT
 *
 * test_hrana.c: the parts of Hrana over HTTP that need no database: the
 * stream registry and its batons (fresh for every response, the old one
 * refused, a busy stream refused, idle streams reaped on a fake clock,
 * the owner's state released), body parsing and its messages, the access
 * classification the node routes by, the value codec (base64, integers as
 * strings) and the response encoding. Running pipelines is
 * test_hrana_exec.c's.
 */
#include "common_test.h"

#include <string.h>

#include "hrana_int.h"

/* ---- streams and batons ---- */

struct released {
    int count;
    void *last;
};

static void release_cb(void *ctx, void *state)
{
    struct released *r = ctx;

    r->count++;
    r->last = state;
}

static struct hrana_streams *streams_new(size_t max, struct released *r)
{
    struct hrana_streams *streams;
    const struct hrana_stream_owner owner = {.release = release_cb, .ctx = r};

    assert_int_equal(hrana_streams_new(max, &streams), 0);
    hrana_streams_set_owner(streams, &owner);
    return streams;
}

static void test_baton_fresh_each_response(void **state)
{
    struct released r = {0};
    struct hrana_streams *streams = streams_new(4, &r);
    struct hrana_stream *stream;
    struct hrana_stream *again;
    const char *baton;
    char first[HRANA_BATON_TEXT_SIZE];

    (void)state;
    assert_int_equal(hrana_streams_take(streams, NULL, 1000, &stream), 0);
    hrana_streams_put_back(streams, stream, false, 1000, &baton);
    assert_int_equal(strlen(baton), 32);
    /* base64url without padding */
    assert_int_equal(strspn(baton, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno"
                                   "pqrstuvwxyz0123456789-_"),
                     32);
    memcpy(first, baton, sizeof(first));
    assert_int_equal(hrana_streams_take(streams, first, 2000, &again), 0);
    assert_ptr_equal(again, stream);
    /* While it runs, its baton names a busy stream. */
    assert_int_equal(hrana_streams_take(streams, first, 2000, &again),
                     NODE_EBUSY);
    hrana_streams_put_back(streams, stream, false, 2000, &baton);
    assert_string_not_equal(baton, first);
    /* The old baton is spent. */
    assert_int_equal(hrana_streams_take(streams, first, 2000, &again),
                     NODE_ENOTFOUND);
    assert_int_equal(hrana_streams_take(streams, "nonsense", 2000, &again),
                     NODE_ENOTFOUND);
    assert_int_equal(hrana_streams_open_count(streams), 1);
    hrana_streams_free(streams);
    assert_int_equal(r.count, 0);
}

static void test_close_releases_owner(void **state)
{
    struct released r = {0};
    struct hrana_streams *streams = streams_new(4, &r);
    struct hrana_stream *stream;
    const char *baton = "x";
    int token = 0;

    (void)state;
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &stream), 0);
    assert_null(hrana_stream_owner_state(stream));
    hrana_stream_set_owner_state(stream, &token);
    assert_ptr_equal(hrana_stream_owner_state(stream), &token);
    hrana_streams_put_back(streams, stream, true, 0, &baton);
    assert_null(baton);
    assert_int_equal(r.count, 1);
    assert_ptr_equal(r.last, &token);
    assert_int_equal(hrana_streams_open_count(streams), 0);
    hrana_streams_free(streams);
}

static void test_reap_idle(void **state)
{
    struct released r = {0};
    struct hrana_streams *streams = streams_new(4, &r);
    struct hrana_stream *a;
    struct hrana_stream *b;
    struct hrana_stream *c;
    const char *baton;
    char baton_a[HRANA_BATON_TEXT_SIZE];
    int token_a = 0;
    int token_b = 0;

    (void)state;
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &a), 0);
    hrana_stream_set_owner_state(a, &token_a);
    hrana_streams_put_back(streams, a, false, 0, &baton);
    memcpy(baton_a, baton, sizeof(baton_a));
    assert_int_equal(hrana_streams_take(streams, NULL, 5000, &b), 0);
    hrana_stream_set_owner_state(b, &token_b);
    hrana_streams_put_back(streams, b, false, 5000, &baton);
    assert_int_equal(hrana_streams_take(streams, NULL, 5000, &c), 0);
    /* c stays busy: never reaped, however long it runs. */
    assert_int_equal(hrana_streams_reap(streams, 9999), 0);
    assert_int_equal(hrana_streams_reap(streams, 10000), 1);
    assert_int_equal(r.count, 1);
    assert_ptr_equal(r.last, &token_a);
    assert_int_equal(hrana_streams_take(streams, baton_a, 10000, &a),
                     NODE_ENOTFOUND);
    assert_int_equal(hrana_streams_reap(streams, 60000), 1);
    assert_ptr_equal(r.last, &token_b);
    assert_int_equal(hrana_streams_open_count(streams), 1);
    hrana_streams_put_back(streams, c, false, 60000, &baton);
    hrana_streams_free(streams);
    assert_int_equal(r.count, 2); /* c had no owner state */
}

static void test_expired_baton_refused_before_reap(void **state)
{
    struct released r = {0};
    struct hrana_streams *streams = streams_new(4, &r);
    struct hrana_stream *stream;
    const char *baton;
    char copy[HRANA_BATON_TEXT_SIZE];
    int token = 0;

    (void)state;
    assert_int_equal(hrana_streams_take(streams, NULL, 100, &stream), 0);
    hrana_stream_set_owner_state(stream, &token);
    hrana_streams_put_back(streams, stream, false, 100, &baton);
    memcpy(copy, baton, sizeof(copy));
    assert_int_equal(hrana_streams_take(streams, copy,
                                        100 + HRANA_STREAM_IDLE_TIMEOUT_MS,
                                        &stream),
                     NODE_ENOTFOUND);
    assert_int_equal(r.count, 1);
    assert_int_equal(hrana_streams_open_count(streams), 0);
    hrana_streams_free(streams);
}

static void test_max_streams(void **state)
{
    struct released r = {0};
    struct hrana_streams *streams = streams_new(2, &r);
    struct hrana_stream *a;
    struct hrana_stream *b;
    struct hrana_stream *c;
    const char *baton;

    (void)state;
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &a), 0);
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &b), 0);
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &c), COMMON_ETOOBIG);
    hrana_streams_put_back(streams, a, false, 0, &baton);
    assert_int_equal(hrana_streams_take(streams, NULL, 1, &c), COMMON_ETOOBIG);
    /* An abandoned stream makes room for a new one. */
    assert_int_equal(
        hrana_streams_take(streams, NULL, HRANA_STREAM_IDLE_TIMEOUT_MS, &c), 0);
    hrana_streams_free(streams);
}

static void test_stored_sql_limits(void **state)
{
    struct hrana_streams *streams;
    struct hrana_stream *stream;

    (void)state;
    assert_int_equal(hrana_streams_new(1, &streams), 0);
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &stream), 0);
    for (int32_t i = 0; i < (int32_t)HRANA_STREAM_SQL_COUNT_MAX; i++) {
        assert_int_equal(hrana_stream_sql_store(stream, i, "SELECT 1", 8), 0);
    }
    assert_int_equal(hrana_stream_sql_store(stream, -1, "SELECT 1", 8),
                     COMMON_ETOOBIG);
    assert_int_equal(hrana_stream_sql_store(stream, 3, "SELECT 1", 8),
                     NODE_EINVAL);
    hrana_stream_sql_close(stream, 3);
    hrana_stream_sql_close(stream, 123456); /* unknown: no error */
    assert_null(hrana_stream_sql_find(stream, 3));
    assert_int_equal(hrana_stream_sql_store(stream, 3, "SELECT 2", 8), 0);
    assert_string_equal(hrana_stream_sql_find(stream, 3)->sql, "SELECT 2");
    assert_string_equal(hrana_stream_sql_find(stream, 999)->sql, "SELECT 1");
    hrana_streams_free(streams);
}

/* ---- parsing ---- */

static void expect_parse_error(const char *body, const char *message)
{
    struct hrana_pipeline pipeline;
    char error[256];

    assert_int_equal(hrana_pipeline_parse(body, strlen(body), 2, &pipeline,
                                          error, sizeof(error)),
                     NODE_EINVAL);
    assert_string_equal(error, message);
    assert_null(pipeline.requests);
}

static void test_parse(void **state)
{
    struct hrana_pipeline pipeline;
    char error[256];
    const char body[] = "{\"baton\":\"abc\",\"requests\":[{\"type\":"
                        "\"close\"}]}";
    const char null_baton[] = "{\"baton\":null,\"requests\":[]}";

    (void)state;
    assert_int_equal(hrana_pipeline_parse(body, strlen(body), 3, &pipeline,
                                          error, sizeof(error)),
                     0);
    assert_string_equal(pipeline.baton, "abc");
    assert_int_equal(pipeline.version, 3);
    assert_int_equal(json_array_size(pipeline.requests), 1);
    hrana_pipeline_release(&pipeline);
    assert_int_equal(hrana_pipeline_parse(null_baton, strlen(null_baton), 2,
                                          &pipeline, error, sizeof(error)),
                     0);
    assert_null(pipeline.baton);
    hrana_pipeline_release(&pipeline);

    expect_parse_error("{\"requests\":[", "body is not valid JSON: ']' "
                                          "expected near end of file (line 1)");
    expect_parse_error("[]", "body is not a JSON object");
    expect_parse_error("{\"requests\":{}}",
                       "\"requests\" is missing or not an array");
    expect_parse_error("{}", "\"requests\" is missing or not an array");
    expect_parse_error("{\"baton\":5,\"requests\":[]}",
                       "\"baton\" is not a string or null");
    expect_parse_error("{\"requests\":[{\"type\":\"close\"},3]}",
                       "request 1 is not an object with a \"type\"");
    expect_parse_error("{\"requests\":[{\"type\":\"open_cursor\"}]}",
                       "request 0 has unknown type \"open_cursor\"");
}

/* ---- access ---- */

static enum hrana_access access_of(const char *body)
{
    struct hrana_pipeline pipeline;
    char error[256];
    enum hrana_access access;

    assert_int_equal(hrana_pipeline_parse(body, strlen(body), 2, &pipeline,
                                          error, sizeof(error)),
                     0);
    access = hrana_pipeline_access(NULL, &pipeline);
    hrana_pipeline_release(&pipeline);
    return access;
}

static void test_sql_access(void **state)
{
    static const struct {
        const char *sql;
        enum hrana_access access;
    } cases[] = {
        {"SELECT 1", HRANA_ACCESS_READ},
        {"  select * from t; values (1)", HRANA_ACCESS_READ},
        {"INSERT INTO t VALUES (1)", HRANA_ACCESS_WRITE},
        {"WITH x AS (SELECT 1) SELECT * FROM x", HRANA_ACCESS_WRITE},
        {"PRAGMA table_info(t)", HRANA_ACCESS_WRITE},
        {"BEGIN TRANSACTION READONLY", HRANA_ACCESS_READ},
        {"BEGIN READONLY", HRANA_ACCESS_READ},
        {"BEGIN", HRANA_ACCESS_WRITE},
        {"begin deferred transaction", HRANA_ACCESS_WRITE},
        {"BEGIN IMMEDIATE", HRANA_ACCESS_WRITE},
        {"BEGIN EXCLUSIVE TRANSACTION", HRANA_ACCESS_WRITE},
        {"COMMIT; END; ROLLBACK", HRANA_ACCESS_READ},
        {"SAVEPOINT a", HRANA_ACCESS_WRITE},
        {"ROLLBACK TRANSACTION TO SAVEPOINT a", HRANA_ACCESS_WRITE},
        {"EXPLAIN DELETE FROM t", HRANA_ACCESS_READ},
        {"SELECT ';DELETE FROM t'", HRANA_ACCESS_READ},
        {"SELECT \"a;b\" FROM [x;y] -- ; DROP TABLE t\n", HRANA_ACCESS_READ},
        {"SELECT 1 /* ; DELETE FROM t; */", HRANA_ACCESS_READ},
        {"SELECT 'it''s;'; DELETE FROM t", HRANA_ACCESS_WRITE},
        {"/* c */ -- d\n DELETE FROM t", HRANA_ACCESS_WRITE},
        {"SELECT 1; /* unterminated ; DELETE", HRANA_ACCESS_READ},
        {"SELECT 'unterminated ; DELETE FROM t", HRANA_ACCESS_READ},
        {" ; -- only comments\n ;", HRANA_ACCESS_NONE},
        {"(SELECT 1)", HRANA_ACCESS_WRITE},
        {"SELECTED", HRANA_ACCESS_WRITE},
    };
    char sql[128];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        strcpy(sql, cases[i].sql);
        if (hrana_sql_access(sql, strlen(sql)) != cases[i].access) {
            fail_msg("%s: access %d, expected %d", cases[i].sql,
                     hrana_sql_access(sql, strlen(sql)), cases[i].access);
        }
    }
}

static void test_pipeline_access(void **state)
{
    struct hrana_streams *streams;
    struct hrana_stream *stream;
    struct hrana_pipeline pipeline;
    char error[256];
    const char by_id[] = "{\"requests\":[{\"type\":\"execute\",\"stmt\":{"
                         "\"sql_id\":4}}]}";

    (void)state;
    assert_int_equal(access_of("{\"requests\":[]}"), HRANA_ACCESS_NONE);
    assert_int_equal(access_of("{\"requests\":[{\"type\":\"store_sql\","
                               "\"sql_id\":0,\"sql\":\"DELETE FROM t\"},"
                               "{\"type\":\"close\"}]}"),
                     HRANA_ACCESS_NONE);
    assert_int_equal(
        access_of("{\"requests\":[{\"type\":\"execute\",\"stmt\":"
                  "{\"sql\":\"SELECT 1\"}},{\"type\":\"close\"}]}"),
        HRANA_ACCESS_READ);
    assert_int_equal(access_of("{\"requests\":[{\"type\":\"describe\","
                               "\"sql\":\"DELETE FROM t\"}]}"),
                     HRANA_ACCESS_READ);
    assert_int_equal(access_of("{\"requests\":[{\"type\":\"sequence\","
                               "\"sql\":\"SELECT 1; CREATE TABLE u(a)\"}]}"),
                     HRANA_ACCESS_WRITE);
    /* A batch step by sql_id: the pipeline's own store_sql counts. */
    assert_int_equal(
        access_of("{\"requests\":[{\"type\":\"store_sql\",\"sql_id\":1,\"sql\":"
                  "\"INSERT INTO t VALUES (?)\"},{\"type\":\"batch\",\"batch\":"
                  "{\"steps\":[{\"stmt\":{\"sql\":\"BEGIN\"}},{\"stmt\":{"
                  "\"sql_id\":1}}]}}]}"),
        HRANA_ACCESS_WRITE);
    /* ... and the stream's stored SQL. */
    assert_int_equal(hrana_streams_new(1, &streams), 0);
    assert_int_equal(hrana_streams_take(streams, NULL, 0, &stream), 0);
    assert_int_equal(
        hrana_stream_sql_store(stream, 4, "UPDATE t SET a = 1", 18), 0);
    assert_int_equal(hrana_pipeline_parse(by_id, strlen(by_id), 2, &pipeline,
                                          error, sizeof(error)),
                     0);
    assert_int_equal(hrana_pipeline_access(stream, &pipeline),
                     HRANA_ACCESS_WRITE);
    hrana_stream_sql_close(stream, 4);
    assert_int_equal(hrana_stream_sql_store(stream, 4, "SELECT 1", 8), 0);
    assert_int_equal(hrana_pipeline_access(stream, &pipeline),
                     HRANA_ACCESS_READ);
    hrana_pipeline_release(&pipeline);
    hrana_streams_free(streams);
}

/* ---- values ---- */

static void test_base64(void **state)
{
    static const char *const bad[] = {"A",     "AQ*D",     "AQ=D", "=AAA",
                                      "AQID=", "AQ==AQ==", "AQ\nD"};
    uint8_t data[256];
    char text[400];
    uint8_t *decoded;
    size_t size;

    (void)state;
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = (uint8_t)(i * 7 + 3);
    }
    for (size_t n = 0; n <= sizeof(data); n++) {
        hrana_base64_encode(data, n, text);
        assert_int_equal(strlen(text), hrana_base64_encoded_size(n));
        assert_int_equal(
            hrana_base64_decode(text, strlen(text), &decoded, &size), 0);
        assert_int_equal(size, n);
        assert_true(n == 0 || memcmp(decoded, data, n) == 0);
        common_free(decoded);
    }
    hrana_base64_encode((const uint8_t *)"\x01\x02\x03\xff", 4, text);
    assert_string_equal(text, "AQID/w==");
    /* Padding is optional on input. */
    assert_int_equal(hrana_base64_decode("AQID/w", 6, &decoded, &size), 0);
    assert_int_equal(size, 4);
    assert_memory_equal(decoded, "\x01\x02\x03\xff", 4);
    common_free(decoded);
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        if (hrana_base64_decode(bad[i], strlen(bad[i]), &decoded, &size) !=
            NODE_EINVAL) {
            fail_msg("\"%s\" was accepted", bad[i]);
        }
    }
}

static void test_int64_parse(void **state)
{
    int64_t v = 0;

    (void)state;
    assert_true(hrana_int64_parse("9223372036854775807", 19, &v));
    assert_true(v == INT64_MAX);
    assert_true(hrana_int64_parse("-9223372036854775808", 20, &v));
    assert_true(v == INT64_MIN);
    assert_true(hrana_int64_parse("-0", 2, &v));
    assert_true(v == 0);
    assert_false(hrana_int64_parse("9223372036854775808", 19, &v));
    assert_false(hrana_int64_parse("-9223372036854775809", 20, &v));
    assert_false(hrana_int64_parse("99999999999999999999", 20, &v));
    assert_false(hrana_int64_parse("", 0, &v));
    assert_false(hrana_int64_parse("-", 1, &v));
    assert_false(hrana_int64_parse("+1", 2, &v));
    assert_false(hrana_int64_parse("1.0", 3, &v));
    assert_false(hrana_int64_parse(" 1", 2, &v));
}

/* ---- encoding ---- */

static void test_encode(void **state)
{
    json_t *results = json_pack("[{s:s}]", "type", "x");
    struct hrana_pipeline pipeline;
    char error[256];
    const char body[] = "{\"requests\":[{\"type\":\"close\"},{\"type\":"
                        "\"get_autocommit\"}]}";
    size_t size;
    char *text;

    (void)state;
    text = hrana_response_encode("b4t", results, &size);
    assert_string_equal(text, "{\"baton\":\"b4t\",\"base_url\":null,"
                              "\"results\":[{\"type\":\"x\"}]}");
    assert_int_equal(size, strlen(text));
    common_free(text);
    text = hrana_response_encode(NULL, results, &size);
    assert_string_equal(text, "{\"baton\":null,\"base_url\":null,"
                              "\"results\":[{\"type\":\"x\"}]}");
    common_free(text);
    json_decref(results);

    text = hrana_error_encode("unknown baton", "HRANA_PROTO_ERROR", &size);
    assert_string_equal(text, "{\"message\":\"unknown baton\",\"code\":"
                              "\"HRANA_PROTO_ERROR\"}");
    common_free(text);

    assert_int_equal(hrana_pipeline_parse(body, strlen(body), 2, &pipeline,
                                          error, sizeof(error)),
                     0);
    results = hrana_results_all_failed(&pipeline, "quorum lost", "SQLITE_BUSY");
    text = hrana_response_encode(NULL, results, &size);
    assert_string_equal(
        text, "{\"baton\":null,\"base_url\":null,\"results\":["
              "{\"type\":\"error\",\"error\":{\"message\":\"quorum lost\","
              "\"code\":\"SQLITE_BUSY\"}},{\"type\":\"error\",\"error\":{"
              "\"message\":\"quorum lost\",\"code\":\"SQLITE_BUSY\"}}]}");
    common_free(text);
    json_decref(results);
    hrana_pipeline_release(&pipeline);
}

static void test_error_codes(void **state)
{
    (void)state;
    assert_string_equal(hrana_error_code(ENGINE_ECONSTRAINT),
                        "SQLITE_CONSTRAINT");
    assert_string_equal(hrana_error_code(ENGINE_EBUSY), "SQLITE_BUSY");
    assert_string_equal(hrana_error_code(ENGINE_ESQL), "SQLITE_ERROR");
    assert_string_equal(hrana_error_code(ENGINE_EIO), "SQLITE_IOERR");
    assert_string_equal(hrana_error_code(COMMON_ENOMEM), "SQLITE_NOMEM");
    assert_string_equal(hrana_error_code(NODE_ENOTLEADER), "SQLITE_READONLY");
    assert_string_equal(hrana_error_code(-10300), "SQLITE_ERROR");
    assert_string_equal(hrana_error_code(-10400), "SQLITE_ERROR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baton_fresh_each_response),
        cmocka_unit_test(test_close_releases_owner),
        cmocka_unit_test(test_reap_idle),
        cmocka_unit_test(test_expired_baton_refused_before_reap),
        cmocka_unit_test(test_max_streams),
        cmocka_unit_test(test_stored_sql_limits),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_sql_access),
        cmocka_unit_test(test_pipeline_access),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_int64_parse),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_error_codes),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
