/* SPDX-License-Identifier: MIT
 *
 * proc_cluster.c: quorum members as processes (proc_cluster.h).
 */
#define _DEFAULT_SOURCE /* usleep */
#include "proc_cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A port nobody listens on now (bound to port 0, then released). */
static int free_port(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t len = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int port = -1;

    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

int pc_init(struct pc_cluster *c, size_t n, const char *binary)
{
    const char *tmp = getenv("TMPDIR");
    uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES];

    memset(c, 0, sizeof *c);
    c->binary = binary;
    c->count = n;
    snprintf(c->dir, sizeof c->dir, "%s/sinew-proc-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (n > PC_MEMBERS_MAX || mkdtemp(c->dir) == NULL) {
        perror("proc_cluster: mkdtemp");
        return -1;
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (size_t b = 0; b < sizeof secret; b++) {
        secret[b] = (uint8_t)rand();
        snprintf(c->secret + 2 * b, 3, "%02x", secret[b]);
    }
    for (size_t i = 0; i < n; i++) {
        struct pc_member *m = &c->members[i];
        snprintf(m->dir, sizeof m->dir, "%s/m%zu", c->dir, i);
        snprintf(m->key, sizeof m->key, "%s/m%zu.key", c->dir, i);
        m->port = free_port();
        if (mkdir(m->dir, 0700) != 0 || m->port < 0 ||
            transport_identity_generate(&m->identity) != 0 ||
            transport_identity_save(&m->identity, m->key) != 0) {
            fprintf(stderr, "proc_cluster: cannot prepare member %zu\n", i);
            return -1;
        }
    }
    return 0;
}

void pc_kill(struct pc_cluster *c, unsigned i)
{
    struct pc_member *m = &c->members[i];

    if (m->pid <= 0) {
        return;
    }
    kill(m->pid, SIGKILL);
    waitpid(m->pid, NULL, 0);
    close(m->to_child);
    close(m->from_child);
    m->pid = 0;
    m->buffered = 0;
}

void pc_free(struct pc_cluster *c)
{
    char command[700];

    for (unsigned i = 0; i < c->count; i++) {
        pc_kill(c, i);
    }
    snprintf(command, sizeof command, "rm -rf '%s'", c->dir);
    if (system(command) != 0) {
        fprintf(stderr, "proc_cluster: could not remove %s\n", c->dir);
    }
}

/* The arguments of member i (argv, NULL-terminated, in storage). */
static void member_args(struct pc_cluster *c, unsigned i, char **argv,
                        char storage[][800])
{
    const struct pc_member *m = &c->members[i];
    size_t a = 0, s = 0;

#define ARG(...)                                                               \
    do {                                                                       \
        snprintf(storage[s], sizeof storage[s], __VA_ARGS__);                  \
        argv[a++] = storage[s++];                                              \
    } while (0)
    ARG("%s", c->binary);
    ARG("--id");
    ARG("%u", i + 1);
    ARG("--dir");
    ARG("%s", m->dir);
    ARG("--key");
    ARG("%s", m->key);
    ARG("--secret");
    ARG("%s", c->secret);
    ARG("--listen");
    ARG("127.0.0.1:%d", m->port);
    ARG("--bootstrap");
    if (c->election_timeout_ms != 0) {
        ARG("--election-timeout-ms");
        ARG("%u", c->election_timeout_ms);
    }
    for (size_t j = 0; j < c->count; j++) {
        char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
        transport_node_id_format(&c->members[j].identity.id, hex);
        ARG("--member");
        ARG("%zu,%s,127.0.0.1:%d", j + 1, hex, c->members[j].port);
    }
#undef ARG
    argv[a] = NULL;
}

int pc_start(struct pc_cluster *c, unsigned i)
{
    static char storage[64][800];
    char *argv[64];
    struct pc_member *m = &c->members[i];
    int to[2], from[2];

    member_args(c, i, argv, storage);
    if (pipe(to) != 0 || pipe(from) != 0) {
        perror("proc_cluster: pipe");
        return -1;
    }
    m->pid = fork();
    if (m->pid < 0) {
        perror("proc_cluster: fork");
        return -1;
    }
    if (m->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        execv(c->binary, argv);
        perror("proc_cluster: execv");
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    m->to_child = to[1];
    m->from_child = from[0];
    m->buffered = 0;
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads one line from member m into line (without '\n'). */
static int read_line(struct pc_member *m, char *line, size_t size,
                     int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;

    for (;;) {
        char *newline = memchr(m->buffer, '\n', m->buffered);
        struct pollfd pfd = {.fd = m->from_child, .events = POLLIN};
        int64_t left = deadline - now_ms();
        ssize_t got;

        if (newline != NULL) {
            size_t len = (size_t)(newline - m->buffer);
            snprintf(line, size, "%.*s", (int)len, m->buffer);
            memmove(m->buffer, newline + 1, m->buffered - len - 1);
            m->buffered -= len + 1;
            return 0;
        }
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
            return -1;
        }
        got = read(m->from_child, m->buffer + m->buffered,
                   sizeof m->buffer - m->buffered);
        if (got <= 0) {
            return -1;
        }
        m->buffered += (size_t)got;
    }
}

int pc_command(struct pc_cluster *c, unsigned i, char kind, const char *args,
               char *reply, size_t size, int timeout_ms)
{
    static unsigned tag;
    struct pc_member *m = &c->members[i];
    char line[8192], prefix[32];
    int len;

    if (m->pid <= 0) {
        return -1;
    }
    tag++;
    len = snprintf(line, sizeof line, "%c t%u %s\n", kind, tag,
                   args != NULL ? args : "");
    if (len <= 0 || write(m->to_child, line, (size_t)len) != len) {
        return -1;
    }
    snprintf(prefix, sizeof prefix, "R t%u ", tag);
    for (;;) {
        if (read_line(m, line, sizeof line, timeout_ms) != 0) {
            return -1;
        }
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            snprintf(reply, size, "%s", line + strlen(prefix));
            return 0;
        }
    }
}

int pc_leader(struct pc_cluster *c, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;

    do {
        for (unsigned i = 0; i < c->count; i++) {
            char reply[128];
            int state;
            if (pc_command(c, i, 'S', "", reply, sizeof reply, 1000) == 0 &&
                sscanf(reply, "%d", &state) == 1 && state == 10) {
                return (int)i;
            }
        }
        usleep(10000);
    } while (now_ms() < deadline);
    return -1;
}
