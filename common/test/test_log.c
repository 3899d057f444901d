/* SPDX-License-Identifier: MIT
 *
 * Goal: LOGF hands formatted messages at or above the sink's level to the
 * sink with their place, drops lower levels without formatting them (their
 * arguments are not even evaluated), tolerates a missing sink, and truncates
 * long messages safely.
 * Method: a capturing sink and an argument with a side effect.
 */
#include "common_test.h"

#include <string.h>

struct capture {
    int calls;
    int level;
    int line;
    char file[64];
    char message[COMMON_LOG_MESSAGE_SIZE_MAX + 16];
};

static void capture_emit(void *ctx, int level, const char *file, int line,
                         const char *msg)
{
    struct capture *capture = ctx;

    capture->calls++;
    capture->level = level;
    capture->line = line;
    snprintf(capture->file, sizeof(capture->file), "%s", file);
    snprintf(capture->message, sizeof(capture->message), "%s", msg);
}

static int evaluations;

static int counted(int value)
{
    evaluations++;
    return value;
}

static void log_emits_at_and_above_min_level(void **state)
{
    struct capture capture = {0};
    struct common_log log = {&capture, COMMON_LOG_WARN, capture_emit};
    int line;

    (void)state;
    LOGF(&log, COMMON_LOG_WARN, "vote granted term=%d from=%d", 7, 3);
    line = __LINE__ - 1;
    assert_int_equal(capture.calls, 1);
    assert_int_equal(capture.level, COMMON_LOG_WARN);
    assert_string_equal(capture.message, "vote granted term=7 from=3");
    assert_int_equal(capture.line, line);
    assert_non_null(strstr(capture.file, "test_log.c"));
    LOGF(&log, COMMON_LOG_ERROR, "disk full free_bytes=%u", 0u);
    assert_int_equal(capture.calls, 2);
    assert_int_equal(capture.level, COMMON_LOG_ERROR);
}

static void log_below_min_level_is_not_formatted(void **state)
{
    struct capture capture = {0};
    struct common_log log = {&capture, COMMON_LOG_INFO, capture_emit};

    (void)state;
    evaluations = 0;
    LOGF(&log, COMMON_LOG_DEBUG, "value=%d", counted(1));
    assert_int_equal(capture.calls, 0);
    assert_int_equal(evaluations, 0);
    LOGF(&log, COMMON_LOG_INFO, "value=%d", counted(2));
    assert_int_equal(capture.calls, 1);
    assert_int_equal(evaluations, 1);
    assert_string_equal(capture.message, "value=2");
}

static void log_without_sink_is_silent(void **state)
{
    struct common_log no_emit = {NULL, COMMON_LOG_DEBUG, NULL};
    const struct common_log *none = NULL;

    (void)state;
    evaluations = 0;
    LOGF(&no_emit, COMMON_LOG_ERROR, "value=%d", counted(1));
    LOGF(none, COMMON_LOG_ERROR, "value=%d", counted(1));
    assert_int_equal(evaluations, 0);
    assert_false(common_log_is_enabled(none, COMMON_LOG_ERROR));
}

static void log_long_message_is_truncated(void **state)
{
    struct capture capture = {0};
    struct common_log log = {&capture, COMMON_LOG_DEBUG, capture_emit};
    char long_text[3 * COMMON_LOG_MESSAGE_SIZE_MAX];

    (void)state;
    memset(long_text, 'x', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    LOGF(&log, COMMON_LOG_INFO, "text=%s", long_text);
    assert_int_equal(capture.calls, 1);
    assert_int_equal(strlen(capture.message), COMMON_LOG_MESSAGE_SIZE_MAX - 1);
    assert_memory_equal(capture.message, "text=xxx", 8);
}

static void log_level_names(void **state)
{
    (void)state;
    assert_string_equal(common_log_level_name(COMMON_LOG_DEBUG), "debug");
    assert_string_equal(common_log_level_name(COMMON_LOG_INFO), "info");
    assert_string_equal(common_log_level_name(COMMON_LOG_WARN), "warn");
    assert_string_equal(common_log_level_name(COMMON_LOG_ERROR), "error");
    assert_string_equal(common_log_level_name(42), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(log_emits_at_and_above_min_level),
        cmocka_unit_test(log_below_min_level_is_not_formatted),
        cmocka_unit_test(log_without_sink_is_silent),
        cmocka_unit_test(log_long_message_is_truncated),
        cmocka_unit_test(log_level_names),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
