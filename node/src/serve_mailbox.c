/* SPDX-License-Identifier: MIT
 *
 * serve_mailbox.c: closures posted across threads to a libuv loop
 * (serve_mailbox.h). uv_async_send() is the only libuv call that is safe
 * from another thread; it coalesces, so the callback drains the queue.
 */
#include "serve_mailbox.h"

#include "node.h"

struct serve_mail {
    struct serve_mail *next;
    serve_mail_fn fn;
    void *ctx;
};

static void drain(struct serve_mailbox *box)
{
    for (;;) {
        pthread_mutex_lock(&box->lock);
        struct serve_mail *mail = box->head;
        if (mail != NULL) {
            box->head = mail->next;
            if (box->head == NULL) {
                box->tail = NULL;
            }
        }
        pthread_mutex_unlock(&box->lock);
        if (mail == NULL) {
            return;
        }
        mail->fn(mail->ctx);
        common_free(mail);
    }
}

static void async_cb(uv_async_t *async)
{
    drain(async->data);
}

int serve_mailbox_init(struct serve_mailbox *box, uv_loop_t *loop)
{
    *box = (struct serve_mailbox){0};
    pthread_mutex_init(&box->lock, NULL);
    box->async.data = box;
    return uv_async_init(loop, &box->async, async_cb);
}

int serve_mailbox_post(struct serve_mailbox *box, serve_mail_fn fn, void *ctx)
{
    struct serve_mail *mail = common_malloc(sizeof *mail);
    int rc = 0;

    if (mail == NULL) {
        return COMMON_ENOMEM;
    }
    *mail = (struct serve_mail){.fn = fn, .ctx = ctx};
    pthread_mutex_lock(&box->lock);
    if (box->closed) {
        rc = NODE_EUNAVAILABLE;
    } else if (box->tail != NULL) {
        box->tail->next = mail;
        box->tail = mail;
    } else {
        box->head = box->tail = mail;
    }
    pthread_mutex_unlock(&box->lock);
    if (rc != 0) {
        common_free(mail);
        return rc;
    }
    uv_async_send(&box->async);
    return 0;
}

static void closed_cb(uv_handle_t *handle)
{
    struct serve_mailbox *box = handle->data;
    pthread_mutex_destroy(&box->lock);
}

void serve_mailbox_close(struct serve_mailbox *box)
{
    drain(box);
    pthread_mutex_lock(&box->lock);
    box->closed = true;
    pthread_mutex_unlock(&box->lock);
    drain(box);
    uv_close((uv_handle_t *)&box->async, closed_cb);
}
