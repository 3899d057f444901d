/* SPDX-License-Identifier: MIT
 *
 * shell_complete.h: where an SQL statement ends, for `sinew shell`.
 *
 * The shell collects input lines until the text holds a complete statement
 * and splits a script into statements before preparing them, so that an
 * error in one statement does not hide the next. The rule is sqlite3's
 * sqlite3_complete(): a statement ends at a ';' that is outside a '...'
 * string, a "...", `...` or [...] identifier, a -- or C-style comment, and
 * outside the body of a CREATE TRIGGER (which ends with END;).
 */
#ifndef SINEW_NODE_SHELL_COMPLETE_H
#define SINEW_NODE_SHELL_COMPLETE_H

#include <stdbool.h>
#include <stddef.h>

/* True when the size bytes at sql end with a complete statement, as
 * sqlite3_complete() answers for the same text (a NUL byte ends it). Text
 * of only white space and comments is not complete. */
bool shell_is_complete(const char *sql, size_t size);

/* The length of the first statement of sql, through its ending ';', or
 * size when no ';' in sql ends a statement. */
size_t shell_statement_size(const char *sql, size_t size);

#endif /* SINEW_NODE_SHELL_COMPLETE_H */
