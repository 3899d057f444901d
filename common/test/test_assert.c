/* SPDX-License-Identifier: MIT
 *
 * Goal: ASSERT fires on a false condition in every build type, stays silent
 * on a true one, evaluates its condition once, and by default stops the
 * process with a message naming the condition and its place.
 * Method: cmocka's expect_assert_failure() through the test handler; for the
 * default handler, a forked child whose exit status and stderr are read.
 */
#include "common_test.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int check_positive(int value)
{
    ASSERT(value > 0);
    return value;
}

static void assert_fires_on_false_condition(void **state)
{
    (void)state;
    expect_assert_failure(check_positive(0));
    expect_assert_failure(check_positive(-3));
}

static void assert_is_silent_on_true_condition(void **state)
{
    (void)state;
    assert_int_equal(check_positive(5), 5);
}

static void assert_evaluates_condition_once(void **state)
{
    int evaluations = 0;

    (void)state;
    ASSERT(++evaluations == 1);
    assert_int_equal(evaluations, 1);
}

static void assert_default_handler_aborts_with_message(void **state)
{
    int pipe_fds[2];
    char output[256] = {0};
    int status = 0;
    pid_t child;

    (void)state;
    assert_int_equal(pipe(pipe_fds), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(pipe_fds[1], STDERR_FILENO);
        common_assert_handler_set(NULL);
        signal(SIGABRT, SIG_DFL);
        check_positive(0);
        _exit(0); /* not reached when ASSERT works */
    }
    close(pipe_fds[1]);
    assert_true(read(pipe_fds[0], output, sizeof(output) - 1) > 0);
    close(pipe_fds[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_non_null(strstr(output, "assertion failed: value > 0"));
    assert_non_null(strstr(output, "test_assert.c:"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(assert_fires_on_false_condition),
        cmocka_unit_test(assert_is_silent_on_true_condition),
        cmocka_unit_test(assert_evaluates_condition_once),
        cmocka_unit_test(assert_default_handler_aborts_with_message),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
