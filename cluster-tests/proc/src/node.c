/* SPDX-License-Identifier: MIT
 *
 * node.c: the `sinew serve` processes of a run. Each node has a directory
 * under the run's (data, key, log) and, on the namespace topology, runs in
 * its own namespace (entered with setns(2) in the child: exec.c), at
 * 10.77.0.<i>:8080 for clients and :7000 for peers; on loopback, at free
 * 127.0.0.1 ports chosen once, so a restarted node comes back where its
 * peers expect it.
 *
 * crdt, leader: every node lists the others as --peer (leader: --writer
 * and --writer-epoch name the cluster's writer when the node starts: n1
 * at epoch 1, until a failover changes them, nemesis_failover.c; a node
 * restarted later gets the options of that moment, as an operator would
 * give it). quorum: node 1 bootstraps
 * alone and the others --join it (docs/getting-started.md); a restarted
 * node keeps its arguments (a node with a Raft log does not join again).
 *
 * Each node runs in its own process group (SIGSTOP/SIGCONT reach all of
 * it; a terminal's SIGINT does not) with PR_SET_PDEATHSIG, so a supervisor
 * killed outright does not leave nodes behind on loopback either.
 *
 * Every node runs under libfaketime and libfiu when they are installed
 * (preload.c), its clock file holding "+0" until a clock fault writes an
 * offset. While a disk fault is on a node, its exiting with a status (the
 * product refusing to go on after a failed fsync) is expected: it is noted
 * for the fault's report line and the node is restarted at the heal. Its
 * dying of a signal is still unexpected: a crash is a finding.
 */
#define _GNU_SOURCE /* prctl(2) is Linux's */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos_proc.h"
#include "common.h"

#define NODE_ARGS_MAX 40

static int free_ports(int *ports, size_t count)
{
    int fds[2 * CHAOS_NODES_MAX];
    int rc = 0;
    size_t opened = 0;
    for (; opened < count; opened++) {
        struct sockaddr_in addr = {.sin_family = AF_INET,
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t size = sizeof addr;
        fds[opened] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[opened] < 0 ||
            bind(fds[opened], (struct sockaddr *)&addr, sizeof addr) != 0 ||
            getsockname(fds[opened], (struct sockaddr *)&addr, &size) != 0) {
            rc = -errno;
            opened += fds[opened] >= 0;
            break;
        }
        ports[opened] = ntohs(addr.sin_port);
    }
    for (size_t i = 0; i < opened; i++) {
        close(fds[i]);
    }
    return rc;
}

/* sinew keygen ...: the first line it prints into out. */
static int keygen(const struct chaos_cluster *c, const char *flag,
                  const char *file, char *out, size_t out_size)
{
    const char *with_flag[] = {c->binary, "keygen", flag, "--out", file, NULL};
    const char *plain[] = {c->binary, "keygen", "--out", file, NULL};
    char output[512];
    int rc = chaos_exec(NULL, flag != NULL ? with_flag : plain, NULL, output,
                        sizeof output, 10000);
    if (rc != 0) {
        fprintf(stderr, "chaos-proc: sinew keygen: %s\n", output);
        return -EIO;
    }
    size_t size = strcspn(output, "\r\n");
    if (size + 1 > out_size) {
        fprintf(stderr, "chaos-proc: sinew keygen printed '%s'\n", output);
        return -EIO;
    }
    memcpy(out, output, size);
    out[size] = '\0';
    return 0;
}

int chaos_cluster_init(struct chaos_cluster *c, enum chaos_mode mode,
                       const char *binary, const char *dir, size_t count,
                       const struct chaos_topology *t)
{
    memset(c, 0, sizeof *c);
    c->mode = mode;
    c->binary = binary;
    c->count = count;
    c->leader_hint = -1;
    c->writer = CHAOS_LEADER_WRITER;
    c->writer_epoch = 1;
    c->deposed = -1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    chaos_preload_detect(&c->preload);
    int ports[2 * CHAOS_NODES_MAX];
    if (t->kind == CHAOS_TOPOLOGY_LOOPBACK && free_ports(ports, 2 * count)) {
        return -EIO;
    }
    char path[CHAOS_PATH_SIZE + 32], scratch[128];
    snprintf(path, sizeof path, "%s/cluster.secret", dir);
    if (keygen(c, "--secret", path, scratch, sizeof scratch) != 0) {
        return -EIO;
    }
    for (size_t i = 0; i < count; i++) {
        struct chaos_node *n = &c->nodes[i];
        n->index = i;
        chaos_topology_node_netns(t, i, n->netns, sizeof n->netns);
        if (t->kind == CHAOS_TOPOLOGY_NETNS) {
            snprintf(n->host, sizeof n->host, CHAOS_SUBNET "%zu", i + 1);
            n->http_port = CHAOS_NETNS_HTTP_PORT;
            n->peer_port = CHAOS_NETNS_PEER_PORT;
        } else {
            snprintf(n->host, sizeof n->host, "127.0.0.1");
            n->http_port = ports[2 * i];
            n->peer_port = ports[2 * i + 1];
        }
        snprintf(n->dir, sizeof n->dir, "%s/n%zu", dir, i + 1);
        if (mkdir(n->dir, 0700) != 0 && errno != EEXIST) {
            return -errno;
        }
        snprintf(path, sizeof path, "%s/node.key", n->dir);
        if (keygen(c, NULL, path, n->id, sizeof n->id) != 0) {
            return -EIO;
        }
        if (c->preload.faketime[0] != '\0' &&
            chaos_preload_clock_write(n->dir, 0) != 0) {
            return -EIO;
        }
    }
    return 0;
}

/* The argument vector of node i into argv, its strings in storage. */
static void node_args(const struct chaos_cluster *c, size_t i,
                      const char **argv, char storage[][CHAOS_PATH_SIZE + 96])
{
    const struct chaos_node *n = &c->nodes[i];
    size_t a = 0, s = 0;
    argv[a++] = c->binary;
    argv[a++] = "serve";
    argv[a++] = "--mode";
    argv[a++] = chaos_mode_name(c->mode);
    snprintf(storage[s], sizeof storage[s], "--data=%s/data", n->dir);
    argv[a++] = storage[s++];
    snprintf(storage[s], sizeof storage[s], "--key=%s/node.key", n->dir);
    argv[a++] = storage[s++];
    snprintf(storage[s], sizeof storage[s],
             "--cluster-secret-file=%s/"
             "cluster.secret",
             c->dir);
    argv[a++] = storage[s++];
    snprintf(storage[s], sizeof storage[s], "--http=%s:%d", n->host,
             n->http_port);
    argv[a++] = storage[s++];
    snprintf(storage[s], sizeof storage[s], "--listen=%s:%d", n->host,
             n->peer_port);
    argv[a++] = storage[s++];
    snprintf(storage[s], sizeof storage[s], "--log-file=%s/node.log", n->dir);
    argv[a++] = storage[s++];
    if (c->mode == CHAOS_MODE_QUORUM && i > 0) {
        snprintf(storage[s], sizeof storage[s], "--join=http://%s:%d",
                 c->nodes[0].host, c->nodes[0].http_port);
        argv[a++] = storage[s++];
    }
    if (c->mode == CHAOS_MODE_LEADER) {
        snprintf(storage[s], sizeof storage[s], "--writer=%s",
                 c->nodes[c->writer].id);
        argv[a++] = storage[s++];
        snprintf(storage[s], sizeof storage[s], "--writer-epoch=%llu",
                 (unsigned long long)c->writer_epoch);
        argv[a++] = storage[s++];
    }
    for (size_t j = 0; c->mode != CHAOS_MODE_QUORUM && j < c->count; j++) {
        if (j != i) {
            snprintf(storage[s], sizeof storage[s], "--peer=%s@%s:%d",
                     c->nodes[j].id, c->nodes[j].host, c->nodes[j].peer_port);
            argv[a++] = storage[s++];
        }
    }
    argv[a] = NULL;
}

/* The child side of chaos_node_start(): never returns. Only
 * async-signal-safe calls: the supervisor has threads. */
static void node_child(const struct chaos_node *n, const char **argv,
                       char **env, pid_t parent, int out_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent ||
        (n->netns[0] != '\0' && chaos_netns_enter(n->netns) != 0)) {
        _exit(126);
    }
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    execve(argv[0], (char *const *)argv, env);
    _exit(127);
}

int chaos_node_start(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    const char *argv[NODE_ARGS_MAX];
    char storage[NODE_ARGS_MAX][CHAOS_PATH_SIZE + 96];
    char out_path[CHAOS_PATH_SIZE + 16];
    char **env = NULL;
    node_args(c, i, argv, storage);
    snprintf(out_path, sizeof out_path, "%s/stdio.log", n->dir);
    int rc = chaos_preload_env(&c->preload, n->dir, &env);
    if (rc != 0) {
        return rc;
    }
    int out_fd =
        open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out_fd < 0) {
        rc = -errno;
        goto err_after_env;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        node_child(n, argv, env, parent, out_fd);
    }
    rc = pid < 0 ? -errno : 0;
    close(out_fd);
    if (pid > 0) {
        setpgid(pid, pid); /* also here: whichever runs first */
        n->pid = pid;
        n->is_paused = false;
    }
err_after_env:
    common_free(env);
    return rc;
}

int chaos_node_set_clock(struct chaos_cluster *c, size_t i, int64_t offset_ms)
{
    struct chaos_node *n = &c->nodes[i];
    if (chaos_preload_faketime_missing(&c->preload) != NULL) {
        return -ENOTSUP;
    }
    int rc = chaos_preload_clock_write(n->dir, offset_ms);
    if (rc == 0) {
        n->clock_offset_ms = offset_ms;
    }
    return rc;
}

/* Removes the libfiu FIFOs of a process that is gone (libfiu removes them
 * at a clean exit only). */
static void forget_fifos(const struct chaos_node *n, pid_t pid)
{
    char path[CHAOS_PATH_SIZE + 48];
    snprintf(path, sizeof path, "%s/fiu-%ld.in", n->dir, (long)pid);
    (void)unlink(path);
    snprintf(path, sizeof path, "%s/fiu-%ld.out", n->dir, (long)pid);
    (void)unlink(path);
}

void chaos_node_kill(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    if (n->pid <= 0) {
        return;
    }
    kill(-n->pid, SIGKILL);
    while (waitpid(n->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    forget_fifos(n, n->pid);
    n->pid = 0;
    n->is_paused = false;
}

void chaos_node_pause(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    if (n->pid > 0 && kill(-n->pid, SIGSTOP) == 0) {
        n->is_paused = true;
    }
}

void chaos_node_resume(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    if (n->pid > 0) {
        kill(-n->pid, SIGCONT);
    }
    n->is_paused = false;
}

static void exit_note(struct chaos_node *n, int status)
{
    if (WIFEXITED(status)) {
        snprintf(n->exit_note, sizeof n->exit_note, "n%zu exited with %d",
                 n->index + 1, WEXITSTATUS(status));
    } else {
        snprintf(n->exit_note, sizeof n->exit_note, "n%zu died of signal %d",
                 n->index + 1, WTERMSIG(status));
    }
}

int chaos_node_reap(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    int status = 0;
    if (n->pid <= 0 || waitpid(n->pid, &status, WNOHANG) != n->pid) {
        return 0;
    }
    exit_note(n, status);
    forget_fifos(n, n->pid);
    n->pid = 0;
    if (n->is_disk_faulted && WIFEXITED(status)) {
        /* Refusing to go on after a failed write is the product's right;
         * the fault's heal restarts it. */
        memcpy(n->fault_exit_note, n->exit_note, sizeof n->exit_note);
        n->exit_note[0] = '\0';
        fprintf(stderr, "chaos-proc: during a disk fault: %s\n",
                n->fault_exit_note);
        return 0;
    }
    fprintf(stderr, "chaos-proc: unexpected: %s\n", n->exit_note);
    n->unexpected_exits++;
    return 1;
}

void chaos_node_reap_expected(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (n->pid > 0 && n->is_disk_faulted &&
        waitid(P_PID, (id_t)n->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == n->pid && info.si_code == CLD_EXITED) {
        (void)chaos_node_reap(c, i);
    }
}

int chaos_cluster_reap(struct chaos_cluster *c)
{
    int count = 0;
    for (size_t i = 0; i < c->count; i++) {
        count += chaos_node_reap(c, i);
    }
    return count;
}

int chaos_cluster_stop(struct chaos_cluster *c, int timeout_ms)
{
    int unclean = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->nodes[i].pid > 0) {
            kill(-c->nodes[i].pid, SIGCONT);
            kill(c->nodes[i].pid, SIGTERM);
        }
    }
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    for (size_t i = 0; i < c->count; i++) {
        struct chaos_node *n = &c->nodes[i];
        int status = 0;
        while (n->pid > 0 && chaos_now_ns() < deadline &&
               waitpid(n->pid, &status, WNOHANG) == 0) {
            chaos_sleep_ms(20);
        }
        if (n->pid > 0 && chaos_now_ns() >= deadline) {
            snprintf(n->exit_note, sizeof n->exit_note,
                     "n%zu did not stop within %d ms of SIGTERM", i + 1,
                     timeout_ms);
            chaos_node_kill(c, i);
            unclean++;
        } else if (n->pid > 0 &&
                   (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
            exit_note(n, status);
            unclean++;
        }
        n->pid = 0;
    }
    return unclean;
}

int chaos_node_stop(struct chaos_cluster *c, size_t i, int timeout_ms)
{
    struct chaos_node *n = &c->nodes[i];
    int status = 0;
    if (n->pid <= 0) {
        return 0;
    }
    kill(-n->pid, SIGCONT);
    kill(n->pid, SIGTERM);
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    pid_t done = 0;
    while ((done = waitpid(n->pid, &status, WNOHANG)) == 0 &&
           chaos_now_ns() < deadline) {
        chaos_sleep_ms(20);
    }
    if (done != n->pid) {
        snprintf(n->exit_note, sizeof n->exit_note,
                 "n%zu did not stop within %d ms of SIGTERM", i + 1,
                 timeout_ms);
        chaos_node_kill(c, i);
    } else {
        forget_fifos(n, n->pid);
        n->pid = 0;
        n->is_paused = false;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            return 0;
        }
        exit_note(n, status);
    }
    if (c->unclean_stops++ == 0) {
        memcpy(c->unclean_note, n->exit_note, sizeof c->unclean_note);
    }
    return 1;
}

void chaos_cluster_release(struct chaos_cluster *c)
{
    struct chaos_leader_history *h = &c->history;
    for (size_t i = 0; i < h->takeover_count; i++) {
        common_free(h->takeovers[i].held);
        h->takeovers[i].held = NULL;
    }
    h->takeover_count = 0;
}

void chaos_cluster_kill_all(struct chaos_cluster *c)
{
    for (size_t i = 0; i < c->count; i++) {
        chaos_node_kill(c, i);
    }
}

/* 1 when node i serves /health. */
static bool node_is_healthy(const struct chaos_node *n)
{
    int status = 0;
    char *body = NULL;
    bool ok = chaos_http_request(n->host, n->http_port, "/health", NULL, 1000,
                                 &status, &body) == CHAOS_HTTP_OK &&
              status == 200;
    common_free(body);
    return ok;
}

static size_t voter_count(const struct chaos_cluster *c)
{
    json_t *status = chaos_node_status(&c->nodes[0], 1000);
    size_t voters = 0, i;
    json_t *member;
    json_array_foreach(json_object_get(status, "members"), i, member)
    {
        const char *role = json_string_value(json_object_get(member, "role"));
        voters += role != NULL && strcmp(role, "voter") == 0;
    }
    json_decref(status);
    return voters;
}

static int wait_until_healthy(struct chaos_cluster *c, size_t i,
                              int64_t deadline)
{
    while (!node_is_healthy(&c->nodes[i])) {
        if (chaos_now_ns() > deadline || chaos_stop_requested ||
            chaos_cluster_reap(c) > 0) {
            fprintf(stderr, "chaos-proc: n%zu did not come up (see %s)\n",
                    i + 1, c->nodes[i].dir);
            return -ETIMEDOUT;
        }
        chaos_sleep_ms(50);
    }
    return 0;
}

int chaos_node_wait_healthy(struct chaos_cluster *c, size_t i, int timeout_ms)
{
    /* No reaping here: an exit must reach run.c through its own
     * chaos_cluster_reap() call, which alone reports it. */
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    while (!node_is_healthy(&c->nodes[i])) {
        if (chaos_now_ns() > deadline || chaos_stop_requested) {
            return -ETIMEDOUT;
        }
        chaos_sleep_ms(50);
    }
    return 0;
}

int chaos_cluster_start(struct chaos_cluster *c, int timeout_ms)
{
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    for (size_t i = 0; i < c->count; i++) {
        if (chaos_node_start(c, i) != 0) {
            return -EIO;
        }
        /* quorum: the others join node 1, which must serve first. */
        if ((i == 0 || c->mode == CHAOS_MODE_CRDT) &&
            wait_until_healthy(c, i, deadline) != 0) {
            return -ETIMEDOUT;
        }
    }
    for (size_t i = 1; i < c->count; i++) {
        if (wait_until_healthy(c, i, deadline) != 0) {
            return -ETIMEDOUT;
        }
    }
    while (c->mode == CHAOS_MODE_QUORUM && voter_count(c) < c->count) {
        if (chaos_now_ns() > deadline || chaos_stop_requested) {
            fprintf(stderr, "chaos-proc: quorum: not every node became a "
                            "voter\n");
            return -ETIMEDOUT;
        }
        chaos_sleep_ms(100);
    }
    return 0;
}

int chaos_cluster_find_leader(struct chaos_cluster *c, int timeout_ms)
{
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    do {
        for (size_t i = 0; i < c->count; i++) {
            if (c->nodes[i].pid <= 0 || c->nodes[i].is_paused) {
                continue;
            }
            json_t *status = chaos_node_status(&c->nodes[i], 500);
            json_t *raft = json_object_get(status, "raft");
            const char *state =
                json_string_value(json_object_get(raft, "state"));
            bool leads = state != NULL && strcmp(state, "leader") == 0 &&
                         json_is_true(json_object_get(raft, "ready"));
            json_decref(status);
            if (leads) {
                c->leader_hint = (int)i;
                return (int)i;
            }
        }
        chaos_sleep_ms(100);
    } while (chaos_now_ns() < deadline && !chaos_stop_requested);
    return -1;
}
