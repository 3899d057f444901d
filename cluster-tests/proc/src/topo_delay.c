/* SPDX-License-Identifier: MIT
 *
 * topo_delay.c: packet delay and loss on the namespace topology, the
 * netem substitute of chaos.md §1.6. In the chosen node's namespace, two
 * iptables rules send its outgoing peer traffic (TCP from or to the peer
 * port, within the test subnet: never the clients' HTTP) to NFQUEUE
 * CHAOS_NFQ_QUEUE, where chaos-nfq (nfq.c), started in the same namespace
 * (queue numbers are per namespace), holds and drops packets.
 *
 * Why iptables and not nft: this kernel lacks nft's queue statement, while
 * the xtables NFQUEUE target works through both iptables backends (§1.6).
 * iptables runs only inside our namespaces: an iptables-legacy call in the
 * root namespace would register its tables there for good (§5).
 *
 * Order matters both ways: the helper binds its queue before the rules
 * exist, and the rules go before the helper is stopped; --queue-bypass
 * covers the gaps (no helper bound: packets pass). The helper runs in its
 * own process group with PR_SET_PDEATHSIG, and deleting the namespace
 * kills it too (topo.c), so no path leaves one behind.
 */
#define _GNU_SOURCE /* prctl(2) */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos_proc.h"

#define DELAY_READY_TIMEOUT_MS 5000
#define DELAY_STOP_TIMEOUT_MS 2000
#define DELAY_TOOL_TIMEOUT_MS 10000

const char *chaos_topology_delay_unavailable(const struct chaos_topology *t)
{
    if (t->kind != CHAOS_TOPOLOGY_NETNS || !t->is_up) {
        return "loopback topology: delay rules need the namespace topology "
               "(run as root); on loopback they would slow the whole machine";
    }
    if (t->iptables[0] == '\0') {
        return "iptables not installed (apt-get install iptables)";
    }
    if (t->nfq[0] == '\0') {
        return "chaos-nfq not built beside chaos-proc (needs "
               "libnetfilter-queue-dev)";
    }
    return NULL;
}

/* iptables -A or -D of the two NFQUEUE rules in node's namespace. */
static int delay_rules(const struct chaos_topology *t, size_t node,
                       const char *action)
{
    char netns[CHAOS_NAME_SIZE], port[16], queue[16];
    chaos_topology_node_netns(t, node, netns, sizeof netns);
    snprintf(port, sizeof port, "%d", CHAOS_NETNS_PEER_PORT);
    snprintf(queue, sizeof queue, "%d", CHAOS_NFQ_QUEUE);
    const char *directions[] = {"--dport", "--sport"};
    int rc = 0;
    for (size_t i = 0; i < 2; i++) {
        const char *argv[] = {t->iptables,
                              "-w",
                              "5",
                              action,
                              "OUTPUT",
                              "-p",
                              "tcp",
                              "-d",
                              CHAOS_SUBNET "0/24",
                              directions[i],
                              port,
                              "-j",
                              "NFQUEUE",
                              "--queue-num",
                              queue,
                              "--queue-bypass",
                              NULL};
        char output[256];
        int status = chaos_exec(netns, argv, NULL, output, sizeof output,
                                DELAY_TOOL_TIMEOUT_MS);
        if (status != 0) {
            fprintf(stderr, "chaos-proc: iptables %s in %s: %s", action, netns,
                    output[0] ? output : "failed\n");
            rc = -EIO;
        }
    }
    return rc;
}

/* The child side of delay_spawn(): never returns. */
static void delay_child(const char *netns, const char *const *argv,
                        pid_t parent, int ready_fd, int log_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent || chaos_netns_enter(netns) != 0) {
        _exit(126);
    }
    int null_fd = open("/dev/null", O_RDONLY);
    if (dup2(null_fd, 0) < 0 || dup2(ready_fd, 1) < 0 || dup2(log_fd, 2) < 0) {
        _exit(126);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Waits for the helper's "ready" line: 0, or -ETIMEDOUT (also when it
 * exited first). */
static int delay_wait_ready(int fd)
{
    char line[16];
    size_t used = 0;
    int64_t deadline =
        chaos_now_ns() + (int64_t)DELAY_READY_TIMEOUT_MS * 1000000;
    while (used < sizeof line - 1) {
        int left_ms = (int)((deadline - chaos_now_ns()) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left_ms <= 0 || poll(&p, 1, left_ms) <= 0) {
            return -ETIMEDOUT;
        }
        ssize_t n = read(fd, line + used, sizeof line - 1 - used);
        if (n <= 0) {
            return -ETIMEDOUT;
        }
        used += (size_t)n;
        line[used] = '\0';
        if (strchr(line, '\n') != NULL) {
            return strncmp(line, "ready\n", 6) == 0 ? 0 : -EIO;
        }
    }
    return -EIO;
}

static void delay_stop_helper(pid_t pid)
{
    kill(pid, SIGTERM);
    int64_t deadline =
        chaos_now_ns() + (int64_t)DELAY_STOP_TIMEOUT_MS * 1000000;
    while (waitpid(pid, NULL, WNOHANG) == 0) {
        if (chaos_now_ns() > deadline) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
            return;
        }
        chaos_sleep_ms(10);
    }
}

/* Starts the helper in node's namespace; its pid, or a negative error. */
static pid_t delay_spawn(const struct chaos_topology *t, size_t node,
                         const struct chaos_nfq_config *config,
                         const char *log_path)
{
    const char *argv[14];
    char storage[5][24], netns[CHAOS_NAME_SIZE];
    argv[0] = t->nfq;
    chaos_nfq_args_format(config, argv + 1, storage);
    chaos_topology_node_netns(t, node, netns, sizeof netns);
    int pipe_fds[2];
    int log_fd =
        open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        return -errno;
    }
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        close(log_fd);
        return -errno;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        delay_child(netns, argv, parent, pipe_fds[1], log_fd);
    }
    close(pipe_fds[1]);
    close(log_fd);
    int rc = pid < 0 ? -errno : 0;
    if (pid > 0) {
        setpgid(pid, pid);
        rc = delay_wait_ready(pipe_fds[0]);
        if (rc != 0) {
            fprintf(stderr, "chaos-proc: chaos-nfq did not start (see %s)\n",
                    log_path);
            delay_stop_helper(pid);
        }
    }
    close(pipe_fds[0]);
    return rc != 0 ? rc : pid;
}

int chaos_topology_delay(struct chaos_topology *t, size_t node,
                         const struct chaos_nfq_config *config,
                         const char *log_path)
{
    if (chaos_topology_delay_unavailable(t) != NULL) {
        return -ENOTSUP;
    }
    chaos_topology_delay_heal(t);
    pid_t pid = delay_spawn(t, node, config, log_path);
    if (pid < 0) {
        return pid;
    }
    t->nfq_pid = pid;
    t->nfq_node = (int)node;
    if (delay_rules(t, node, "-A") != 0) {
        chaos_topology_delay_heal(t);
        return -EIO;
    }
    return 0;
}

void chaos_topology_delay_heal(struct chaos_topology *t)
{
    if (t->nfq_node >= 0 && t->nfq_pid > 0 && t->is_up) {
        (void)delay_rules(t, (size_t)t->nfq_node, "-D");
    }
    if (t->nfq_pid > 0) {
        delay_stop_helper(t->nfq_pid);
    }
    t->nfq_pid = 0;
    t->nfq_node = -1;
}
