/* SPDX-License-Identifier: MIT
 *
 * serve.h: `sinew serve`, the node (serve.c).
 */
#ifndef SINEW_NODE_SERVE_H
#define SINEW_NODE_SERVE_H

/* Runs the node with the arguments after "serve" (borrowed) until
 * SIGTERM or SIGINT. Exit status: 0 after a clean shutdown, 1 when it
 * could not start, 2 for bad options. */
int serve_main(int argc, char **argv);

#endif /* SINEW_NODE_SERVE_H */
