/* SPDX-License-Identifier: MIT
 *
 * shell.h: `sinew shell`, an interactive SQL shell over the engine that
 * prints what the sqlite3 command-line shell prints (docs/shell.md).
 */
#ifndef SINEW_NODE_SHELL_H
#define SINEW_NODE_SHELL_H

#include <stdio.h>

/* Exit statuses of the subcommand. */
#define SHELL_EXIT_OK 0
#define SHELL_EXIT_FAILED 1 /* a statement or dot command failed */
#define SHELL_EXIT_USAGE 2  /* bad option */

/* Runs `sinew shell` with the arguments after "shell" (argv[0] is the
 * first of them; borrowed). Reads standard input, writes results to
 * standard output and errors to standard error. Returns an exit status,
 * SHELL_EXIT_*. */
int shell_main(int argc, char **argv);

/* Prints the subcommand's usage to stream. */
void shell_usage(FILE *stream);

#endif /* SINEW_NODE_SHELL_H */
