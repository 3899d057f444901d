/* SPDX-License-Identifier: MIT
 *
 * cluster_cli.h: `sinew cluster status|add|remove|transfer`, the admin
 * commands that talk to a running node over its HTTP API (GET /v1/status,
 * POST /v1/cluster/add|remove|transfer; remote.h is the client).
 */
#ifndef SINEW_NODE_CLUSTER_CLI_H
#define SINEW_NODE_CLUSTER_CLI_H

#include <stdio.h>

/* Exit statuses of the subcommand. */
#define CLUSTER_EXIT_OK 0
#define CLUSTER_EXIT_FAILED 1 /* the node refused or could not be reached */
#define CLUSTER_EXIT_USAGE 2  /* bad arguments */

/* The node asked when --node is not given. */
#define CLUSTER_DEFAULT_NODE "http://127.0.0.1:8080"

/* Runs `sinew cluster` with the arguments after "cluster" (argv[0] is the
 * first of them; borrowed). Results go to standard output, errors (the
 * node's message) to standard error. Returns CLUSTER_EXIT_*. */
int cluster_main(int argc, char **argv);

/* Prints the subcommand's usage to stream. */
void cluster_usage(FILE *stream);

#endif /* SINEW_NODE_CLUSTER_CLI_H */
