/* SPDX-License-Identifier: MIT
 *
 * Goal: the history text format round-trips exactly, reads what check.h
 * documents (comments, blank lines, tabs, CRLF, nil, the initial line),
 * and rejects every malformed line with COMMON_ECORRUPT (or ETOOBIG) and
 * a message that names the line and the field, without leaking or
 * crashing.
 * Method: write a generated history to memory and read it back field by
 * field; feed hand-written good and bad texts through fmemopen.
 */
#include "check_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads text; returns the reader's code, the history in *out on success
 * and the message in errmsg. */
static int text_read(const char *text, struct check_history *out, char *errmsg,
                     size_t errmsg_size)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    int rc;

    assert_non_null(in);
    rc = check_history_read(in, out, errmsg, errmsg_size);
    fclose(in);
    return rc;
}

static void assert_op_equal(const struct check_op *a, const struct check_op *b)
{
    bool known = a->outcome == CHECK_OUTCOME_OK;

    assert_int_equal(a->client_id, b->client_id);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->invoke_ns, b->invoke_ns);
    assert_int_equal(a->complete_ns, b->complete_ns);
    assert_int_equal(a->outcome, b->outcome);
    if (a->kind != CHECK_READ || known) {
        assert_int_equal(a->value, b->value);
    }
    if (a->kind == CHECK_CAS) {
        assert_int_equal(a->expected, b->expected);
        assert_int_equal(a->cas_succeeded, b->cas_succeeded);
    }
}

static void generated_history_round_trips(void **state)
{
    struct check_test_config config = {
        .ops_count = 2000,
        .clients = 16,
        .keys = 10,
        .read_percent = 40,
        .cas_percent = 30,
        .unknown_percent = 15,
        .duration_max = 1000,
        .gap_max = 100,
    };
    struct check_op *ops = calloc(config.ops_count, sizeof(*ops));
    struct check_history history;
    char *text = NULL;
    size_t size = 0;
    FILE *out;

    (void)state;
    assert_non_null(ops);
    check_test_generate(&config, 12345, ops);
    ops[3].complete_ns = ops[3].invoke_ns + 5;
    ops[3].outcome = CHECK_OUTCOME_UNKNOWN;
    ops[3].cas_succeeded = false;
    ops[7].value = CHECK_ABSENT;
    ops[9].key = INT64_MIN + 1;
    ops[9].client_id = INT64_MAX;
    out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(check_history_write(out, ops, config.ops_count, -7), 0);
    fclose(out);
    assert_int_equal(text_read(text, &history, NULL, 0), 0);
    assert_int_equal(history.count, config.ops_count);
    assert_int_equal(history.initial_value, -7);
    for (size_t i = 0; i < config.ops_count; i++) {
        assert_op_equal(&ops[i], &history.ops[i]);
    }
    check_history_close(&history);
    free(text);
    free(ops);
}

static void documented_example_reads(void **state)
{
    static const char text[] = "# a comment\n"
                               "\n"
                               "initial nil\n"
                               "1 write 7 5 - 100 250 ok ok\r\n"
                               "\t2  read 7 - -\t120 300 ok 5\n"
                               "3 cas 7 9 5 130 - unknown -\n"
                               "4 cas 7 nil 5 140 400 unknown -\n"
                               "5 cas 7 8 nil 150 160 ok fail\n"
                               "6 read 7 - - 170 180 ok nil";
    const struct check_op want[] = {
        check_test_write(1, 7, 5, 100, 250),
        check_test_read(2, 7, 5, 120, 300),
        check_test_unknown(check_test_cas(3, 7, 5, 9, false, 130, 0)),
        check_test_cas(5, 7, CHECK_ABSENT, 8, false, 150, 160),
        check_test_read(6, 7, CHECK_ABSENT, 170, 180),
    };
    struct check_history h;

    (void)state;
    assert_int_equal(text_read(text, &h, NULL, 0), 0);
    assert_int_equal(h.count, 6);
    assert_int_equal(h.initial_value, CHECK_ABSENT);
    assert_op_equal(&h.ops[0], &want[0]);
    assert_op_equal(&h.ops[1], &want[1]);
    assert_op_equal(&h.ops[2], &want[2]);
    /* An unknown outcome may carry the time the client gave up. */
    assert_int_equal(h.ops[3].outcome, CHECK_OUTCOME_UNKNOWN);
    assert_int_equal(h.ops[3].complete_ns, 400);
    assert_int_equal(h.ops[3].value, CHECK_ABSENT);
    assert_int_equal(h.ops[3].expected, 5);
    assert_op_equal(&h.ops[4], &want[3]);
    assert_op_equal(&h.ops[5], &want[4]);
    check_history_close(&h);
}

/* One malformed text and the message it must produce. */
struct text_bad_case {
    const char *text;
    int rc;
    const char *message;
};

static const struct text_bad_case text_bad_cases[] = {
    {"1 write 7 5 - 100 250 ok\n", COMMON_ECORRUPT, "line 1: 8 fields"},
    {"1 write 7 5 - 100 250 ok ok extra\n", COMMON_ECORRUPT,
     "line 1: 10 fields"},
    {"#\n1 wrte 7 5 - 100 250 ok ok\n", COMMON_ECORRUPT,
     "line 2: field 2 (kind): not read, write or cas: 'wrte'"},
    {"x write 7 5 - 100 250 ok ok\n", COMMON_ECORRUPT,
     "line 1: field 1 (client): not an integer: 'x'"},
    {"\n\n1 write 7 5 - 1x0 250 ok ok\n", COMMON_ECORRUPT,
     "line 3: field 6 (invoke): not an integer: '1x0'"},
    {"1 write 7 5 - 100 99 ok ok\n", COMMON_ECORRUPT,
     "line 1: field 7 (complete): before the invocation: '99'"},
    {"1 write 7 5 - 100 - ok ok\n", COMMON_ECORRUPT,
     "line 1: field 7 (complete): not an integer: '-'"},
    {"1 read 7 5 - 100 200 ok 5\n", COMMON_ECORRUPT,
     "line 1: field 4 (value): must be '-' here: '5'"},
    {"1 write 7 5 6 100 200 ok ok\n", COMMON_ECORRUPT,
     "line 1: field 5 (expected): must be '-' here: '6'"},
    {"1 write 7 5 - 100 200 done ok\n", COMMON_ECORRUPT,
     "line 1: field 8 (outcome): not ok or unknown: 'done'"},
    {"1 write 7 5 - 100 200 ok fail\n", COMMON_ECORRUPT,
     "line 1: field 9 (result): a write's result is ok: 'fail'"},
    {"1 cas 7 5 4 100 200 ok yes\n", COMMON_ECORRUPT,
     "line 1: field 9 (result): a cas's result is ok or fail: 'yes'"},
    {"1 write 7 5 - 100 - unknown ok\n", COMMON_ECORRUPT,
     "line 1: field 9 (result): must be '-' here: 'ok'"},
    {"1 read 7 - - 100 200 ok 99999999999999999999\n", COMMON_ECORRUPT,
     "line 1: field 9 (result): out of range: '99999999999999999999'"},
    {"1 read 7 - - 100 200 ok -9223372036854775808\n", COMMON_ECORRUPT,
     "line 1: field 9 (result): out of range"},
    {"1 write 7 5 - 100 200 ok ok\ninitial 0\n", COMMON_ECORRUPT,
     "line 2: 'initial' must come once, before any operation"},
    {"initial 0 1\n", COMMON_ECORRUPT,
     "line 1: 'initial' takes exactly one value"},
    {"initial zero\n", COMMON_ECORRUPT,
     "line 1: initial value: not an integer or nil: 'zero'"},
};

static void malformed_lines_are_rejected(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(text_bad_cases) / sizeof(text_bad_cases[0]);
         i++) {
        const struct text_bad_case *c = &text_bad_cases[i];
        struct check_history h = {.count = 99};
        char errmsg[256] = "";

        assert_int_equal(text_read(c->text, &h, errmsg, sizeof(errmsg)), c->rc);
        if (strstr(errmsg, c->message) != errmsg) {
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, errmsg,
                     c->message);
        }
        assert_int_equal(h.count, 99);
    }
}

/* NUL bytes and overlong lines are refused; the tiny errmsg buffer is
 * truncated, never overrun. */
static void binary_and_overlong_input_is_rejected(void **state)
{
    static const char nul[] = "1 write 7 5 - 100 200 ok ok\n1 wr\0te\n";
    char *longline = malloc(CHECK_LINE_SIZE_MAX + 10);
    struct check_history h;
    char errmsg[256];
    char tiny[8];
    FILE *in;

    (void)state;
    assert_non_null(longline);
    in = fmemopen((void *)nul, sizeof(nul) - 1, "r");
    assert_non_null(in);
    assert_int_equal(check_history_read(in, &h, errmsg, sizeof(errmsg)),
                     COMMON_ECORRUPT);
    fclose(in);
    assert_string_equal(errmsg, "line 2: NUL byte");
    memset(longline, '#', CHECK_LINE_SIZE_MAX + 9);
    longline[CHECK_LINE_SIZE_MAX + 9] = '\0';
    assert_int_equal(text_read(longline, &h, errmsg, sizeof(errmsg)),
                     COMMON_ETOOBIG);
    assert_string_equal(errmsg, "line 1: longer than 1023 bytes");
    assert_int_equal(text_read("x\n", &h, tiny, sizeof(tiny)), COMMON_ECORRUPT);
    assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
    free(longline);
}

static void writer_refuses_invalid_ops(void **state)
{
    struct check_op op = check_test_write(1, 1, 1, 10, 5);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);

    (void)state;
    assert_non_null(out);
    assert_int_equal(check_history_write(out, &op, 1, 0), -EINVAL);
    fclose(out);
    assert_int_equal(size, 0);
    free(text);
}

static void every_allocation_failure_is_survived(void **state)
{
    static const char text[] = "initial 3\n"
                               "1 write 7 5 - 100 250 ok ok\n"
                               "2 read 7 - - 120 300 ok 5\n";
    struct common_heap saved;

    (void)state;
    common_heap_get(&saved);
    for (uint64_t fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        struct check_history h;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = text_read(text, &h, NULL, 0);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(h.count, 2);
            check_history_close(&h);
            break;
        }
        assert_int_equal(rc, COMMON_ENOMEM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_history_round_trips),
        cmocka_unit_test(documented_example_reads),
        cmocka_unit_test(malformed_lines_are_rejected),
        cmocka_unit_test(binary_and_overlong_input_is_rejected),
        cmocka_unit_test(writer_refuses_invalid_ops),
        cmocka_unit_test(every_allocation_failure_is_survived),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
