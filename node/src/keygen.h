/* SPDX-License-Identifier: MIT
 *
 * keygen.h: `sinew keygen`, which makes a node's identity key file and
 * prints its node id (docs/import-export.md, "Node identities").
 */
#ifndef SINEW_NODE_KEYGEN_H
#define SINEW_NODE_KEYGEN_H

#include <stdio.h>

/* Exit statuses of the subcommand. */
#define KEYGEN_EXIT_OK 0
#define KEYGEN_EXIT_FAILED 1 /* the key could not be made or read */
#define KEYGEN_EXIT_USAGE 2  /* bad arguments */

/* Runs `sinew keygen` with the arguments after "keygen" (borrowed):
 * --out FILE writes a new identity to FILE (mode 0600; an existing file
 * is refused) and --show FILE reads one; either prints the node id, 64
 * lowercase hex digits, alone on a line of standard output, so that
 * ID=$(sinew keygen --out n1.key) works. Errors go to standard error.
 * Returns a KEYGEN_EXIT_* status. */
int keygen_main(int argc, char **argv);

/* Prints the subcommand's usage to stream. */
void keygen_usage(FILE *stream);

#endif /* SINEW_NODE_KEYGEN_H */
