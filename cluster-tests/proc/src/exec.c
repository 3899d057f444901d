/* SPDX-License-Identifier: MIT
 *
 * exec.c: running the tools the suite drives (ip, nft, ss, sinew keygen)
 * with a deadline, optionally inside one of its network namespaces, and
 * entering a namespace in a forked child.
 *
 * A child enters a namespace with setns(2) on /run/netns/NAME (what `ip
 * netns exec` does, without its extra mount namespace), so the pid the
 * supervisor holds is the tool's or node's own and signals reach it
 * directly. Between fork and exec the child calls only async-signal-safe
 * functions (open, setns, dup2, execv, _exit): the supervisor has threads.
 */
#define _GNU_SOURCE /* setns(2) */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chaos_proc.h"

int64_t chaos_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void chaos_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        if (chaos_stop_requested) {
            return;
        }
    }
}

static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
           access(path, X_OK) == 0;
}

int chaos_tool_find(const char *name, char *out, size_t out_size)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", path ? path : "/usr/bin");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir != NULL;
         dir = strtok_r(NULL, ":", &save)) {
        int n = snprintf(out, out_size, "%s/%s", dir, name);
        if (n > 0 && (size_t)n < out_size && is_executable(out)) {
            return 0;
        }
    }
    out[0] = '\0';
    return -ENOENT;
}

int chaos_netns_enter(const char *netns)
{
    char path[PATH_MAX];
    const char *prefix = "/run/netns/";
    size_t prefix_size = strlen(prefix), name_size = strlen(netns);
    if (prefix_size + name_size + 1 > sizeof path) {
        return -1;
    }
    memcpy(path, prefix, prefix_size);
    memcpy(path + prefix_size, netns, name_size + 1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int rc = setns(fd, CLONE_NEWNET);
    close(fd);
    return rc;
}

/* The child side of chaos_exec(). Never returns. */
static void exec_child(const char *netns, const char *const argv[], int in_fd,
                       int out_fd)
{
    if (netns != NULL && chaos_netns_enter(netns) != 0) {
        _exit(126);
    }
    int null_fd = open("/dev/null", O_RDWR);
    if (dup2(in_fd >= 0 ? in_fd : null_fd, 0) < 0 ||
        dup2(out_fd >= 0 ? out_fd : null_fd, 1) < 0 ||
        dup2(out_fd >= 0 ? out_fd : null_fd, 2) < 0) {
        _exit(126);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Reads what the child prints until EOF or the deadline; 0 or -ETIMEDOUT. */
static int exec_collect(int fd, char *output, size_t output_size,
                        int64_t deadline_ns)
{
    size_t used = 0;
    char scratch[4096];
    for (;;) {
        int64_t left_ms = (deadline_ns - chaos_now_ns()) / 1000000;
        if (left_ms <= 0) {
            return -ETIMEDOUT;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(left_ms > 1000 ? 1000 : left_ms));
        if (rc < 0 && errno != EINTR) {
            return -errno;
        }
        if (rc <= 0) {
            continue;
        }
        ssize_t n = read(fd, scratch, sizeof scratch);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return 0;
        }
        if (output != NULL && used + 1 < output_size) {
            size_t room = output_size - 1 - used;
            size_t take = (size_t)n < room ? (size_t)n : room;
            memcpy(output + used, scratch, take);
            used += take;
            output[used] = '\0';
        }
    }
}

int chaos_exec(const char *netns, const char *const argv[], const char *input,
               char *output, size_t output_size, int timeout_ms)
{
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    int rc = 0;
    if (output != NULL && output_size > 0) {
        output[0] = '\0';
    }
    if ((input != NULL && pipe2(in_pipe, O_CLOEXEC) != 0) ||
        pipe2(out_pipe, O_CLOEXEC) != 0) {
        rc = -errno;
        goto cleanup;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        goto cleanup;
    }
    if (pid == 0) {
        exec_child(netns, argv, in_pipe[0], out_pipe[1]);
    }
    close(out_pipe[1]);
    out_pipe[1] = -1;
    if (input != NULL) {
        close(in_pipe[0]);
        in_pipe[0] = -1;
        /* The inputs are a few hundred bytes of nft rules: below the pipe
         * buffer, so this write does not wait for the child. */
        size_t size = strlen(input);
        if (write(in_pipe[1], input, size) != (ssize_t)size) {
            rc = -EIO;
        }
        close(in_pipe[1]);
        in_pipe[1] = -1;
    }
    int collect = exec_collect(out_pipe[0], output, output_size,
                               chaos_now_ns() + (int64_t)timeout_ms * 1000000);
    if (collect != 0) {
        kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc == 0) {
        rc = collect != 0        ? collect
             : WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + WTERMSIG(status);
    }
cleanup:
    for (int i = 0; i < 2; i++) {
        if (in_pipe[i] >= 0) {
            close(in_pipe[i]);
        }
        if (out_pipe[i] >= 0) {
            close(out_pipe[i]);
        }
    }
    return rc;
}
