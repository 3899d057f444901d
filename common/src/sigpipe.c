/* SPDX-License-Identifier: MIT
 *
 * sigpipe.c: common_sigpipe_ignore_default() (common.h). Every network
 * piece of sinew (the TCP transport, the node's HTTP server) writes to
 * sockets a peer may close; one place decides what SIGPIPE does then.
 */
#include <signal.h>
#include <string.h>

#include "common.h"

void common_sigpipe_ignore_default(void)
{
    struct sigaction current;
    struct sigaction ignore;

    if (sigaction(SIGPIPE, NULL, &current) == 0 &&
        current.sa_handler == SIG_DFL) {
        memset(&ignore, 0, sizeof(ignore));
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        (void)sigaction(SIGPIPE, &ignore, NULL);
    }
}
