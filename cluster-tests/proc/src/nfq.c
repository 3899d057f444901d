/* SPDX-License-Identifier: MIT
 *
 * nfq.c: chaos-nfq, the packet delay and loss helper of chaos-proc's
 * packet-delay-loss fault. netem does not exist in this kernel (chaos.md
 * §1.1), so delay is made in user space (§1.6): iptables sends a node's
 * outgoing peer packets to NFQUEUE --queue-num N, and this program, run
 * in that node's network namespace (queue numbers are per namespace),
 * drops a seeded fraction and gives the others their ACCEPT verdict only
 * after a seeded delay (base + jitter), so later packets can overtake
 * earlier ones. Usage (nfq_plan.c parses it):
 *
 *   chaos-nfq --queue N --delay-ms N --jitter-ms N --loss-percent N --seed N
 *
 * It prints "ready" on standard output once the queue is bound (the
 * supervisor adds the iptables rule only then), and on SIGTERM or SIGINT
 * accepts every packet it still holds, prints its counts on standard
 * error and exits 0. The rule carries --queue-bypass, so packets flow
 * unharmed whenever no helper is bound (a crashed helper is no silent
 * partition). At most CHAOS_NFQ_HELD_MAX packets are held; beyond that a
 * packet is accepted at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#include "chaos_proc.h"

#define CHAOS_NFQ_HELD_MAX 8192

struct nfq_held {
    uint32_t id;
    int64_t due_ns;
};

struct nfq_state {
    struct chaos_nfq_config config;
    struct chaos_rng rng;
    struct nfq_q_handle *queue;
    struct nfq_held held[CHAOS_NFQ_HELD_MAX];
    size_t held_count;
    unsigned long seen, dropped, reordered, overflowed;
    int64_t last_due_ns;
};

static volatile sig_atomic_t nfq_stop = 0;

static void on_signal(int signal_number)
{
    (void)signal_number;
    nfq_stop = 1;
}

static int packet_cb(struct nfq_q_handle *queue, struct nfgenmsg *message,
                     struct nfq_data *data, void *ctx)
{
    struct nfq_state *s = ctx;
    (void)message;
    struct nfqnl_msg_packet_hdr *header = nfq_get_msg_packet_hdr(data);
    if (header == NULL) {
        return 0;
    }
    uint32_t id = ntohl(header->packet_id);
    s->seen++;
    int delay_ms = chaos_nfq_packet_delay_ms(&s->config, &s->rng);
    if (delay_ms < 0) {
        s->dropped++;
        return nfq_set_verdict(queue, id, NF_DROP, 0, NULL);
    }
    if (s->held_count == CHAOS_NFQ_HELD_MAX) {
        s->overflowed++;
        return nfq_set_verdict(queue, id, NF_ACCEPT, 0, NULL);
    }
    int64_t due_ns = chaos_now_ns() + (int64_t)delay_ms * 1000000;
    s->reordered += due_ns < s->last_due_ns;
    s->last_due_ns = due_ns;
    s->held[s->held_count++] = (struct nfq_held){.id = id, .due_ns = due_ns};
    return 0;
}

/* Accepts the held packets that are due (all when every is set); returns
 * the milliseconds until the next one is due, at most 1000. */
static int release_due(struct nfq_state *s, bool every)
{
    int64_t now_ns = chaos_now_ns(), next_ns = now_ns + 1000000000;
    for (size_t i = 0; i < s->held_count;) {
        if (every || s->held[i].due_ns <= now_ns) {
            (void)nfq_set_verdict(s->queue, s->held[i].id, NF_ACCEPT, 0, NULL);
            s->held[i] = s->held[--s->held_count];
            continue;
        }
        if (s->held[i].due_ns < next_ns) {
            next_ns = s->held[i].due_ns;
        }
        i++;
    }
    return (int)((next_ns - now_ns + 999999) / 1000000);
}

/* Reads every queued packet message there is, without waiting. */
static void receive_all(struct nfq_handle *handle, int fd)
{
    static char buffer[65536];
    for (;;) {
        ssize_t size = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (size > 0) {
            (void)nfq_handle_packet(handle, buffer, (int)size);
            continue;
        }
        /* ENOBUFS: the socket overran and messages were lost; their
         * packets get no verdict until the queue goes, which TCP sees as
         * loss. Keep reading. */
        if (size < 0 && (errno == EINTR || errno == ENOBUFS)) {
            continue;
        }
        return;
    }
}

static void serve(struct nfq_state *s, struct nfq_handle *handle)
{
    int fd = nfq_fd(handle);
    int wait_ms = 1000;
    while (!nfq_stop) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) > 0) {
            receive_all(handle, fd);
        }
        wait_ms = release_due(s, false);
    }
    (void)release_due(s, true);
}

static void install_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal; /* no SA_RESTART: poll returns */
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
    static struct nfq_state state; /* the held array is large */
    char error[128];
    if (chaos_nfq_args_parse(argc, (const char *const *)argv, &state.config,
                             error, sizeof error) != 0) {
        fprintf(stderr,
                "chaos-nfq: %s\nusage: chaos-nfq --queue N --delay-ms N "
                "--jitter-ms N --loss-percent N --seed N\n",
                error);
        return 2;
    }
    state.rng.state = state.config.seed;
    install_signals();
    int rc = 1;
    struct nfq_handle *handle = nfq_open();
    if (handle == NULL) {
        perror("chaos-nfq: nfq_open");
        return 1;
    }
    state.queue = nfq_create_queue(handle, (uint16_t)state.config.queue,
                                   packet_cb, &state);
    if (state.queue == NULL) {
        perror("chaos-nfq: nfq_create_queue");
        goto err_after_open;
    }
    if (nfq_set_mode(state.queue, NFQNL_COPY_META, 0) != 0) {
        perror("chaos-nfq: nfq_set_mode");
        goto err_after_queue;
    }
    (void)nfq_set_queue_maxlen(state.queue, CHAOS_NFQ_HELD_MAX);
    printf("ready\n");
    fflush(stdout);
    serve(&state, handle);
    fprintf(stderr,
            "chaos-nfq: queue %u delay %d+U[0,%d) ms loss %d%%: seen=%lu "
            "dropped=%lu reordered=%lu overflowed=%lu\n",
            state.config.queue, state.config.delay_ms, state.config.jitter_ms,
            state.config.loss_percent, state.seen, state.dropped,
            state.reordered, state.overflowed);
    rc = 0;
err_after_queue:
    nfq_destroy_queue(state.queue);
err_after_open:
    nfq_close(handle);
    return rc;
}
