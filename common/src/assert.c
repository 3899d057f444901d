/* SPDX-License-Identifier: MIT
 *
 * assert.c: what happens when an ASSERT fails. The default is one line on
 * stderr and abort(), as Redis's serverAssert: a replica with a broken
 * invariant must stop rather than ship its damage to the others. Tests swap
 * the handler for cmocka's mock_assert() to prove that an assertion fires.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

static void default_handler(const char *expression, const char *file, int line)
{
    fprintf(stderr, "sinew: assertion failed: %s (%s:%d)\n", expression, file,
            line);
    fflush(stderr);
}

static common_assert_handler installed_handler = default_handler;

void common_assert_handler_set(common_assert_handler handler)
{
    installed_handler = handler != NULL ? handler : default_handler;
}

_Noreturn void common__assert_fail(const char *expression, const char *file,
                                   int line)
{
    installed_handler(expression, file, line);
    abort();
}
