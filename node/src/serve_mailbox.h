/* SPDX-License-Identifier: MIT
 *
 * serve_mailbox.h: work handed to a libuv loop's thread from any other
 * thread. `sinew serve` runs two loops (the HTTP loop and the node loop,
 * serve.c says why); each has a mailbox the other posts closures to. A
 * closure runs once, on the mailbox's loop, in the order posted.
 */
#ifndef SINEW_NODE_SERVE_MAILBOX_H
#define SINEW_NODE_SERVE_MAILBOX_H

#include <pthread.h>
#include <stdbool.h>
#include <uv.h>

typedef void (*serve_mail_fn)(void *ctx);

struct serve_mail;

struct serve_mailbox {
    uv_async_t async;
    pthread_mutex_t lock;
    struct serve_mail *head, *tail;
    bool closed;
};

/* On loop's thread. 0 or a libuv code. */
int serve_mailbox_init(struct serve_mailbox *box, uv_loop_t *loop);

/* Queues fn(ctx) to run on the box's loop. From any thread. 0, or
 * COMMON_ENOMEM, or NODE_EUNAVAILABLE once the box is closed (fn will not
 * run: the caller still owns ctx). */
int serve_mailbox_post(struct serve_mailbox *box, serve_mail_fn fn, void *ctx);

/* Runs what was posted so far, refuses later posts and closes the async
 * handle (the loop's next iteration releases it). On the box's loop. */
void serve_mailbox_close(struct serve_mailbox *box);

#endif /* SINEW_NODE_SERVE_MAILBOX_H */
