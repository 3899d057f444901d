/* SPDX-License-Identifier: MIT
 *
 * preload.c: the libraries every node runs under, so that the clock-skew
 * and disk-fault nemeses can reach into a running node without a debug
 * hook in the product:
 *
 * - libfaketimeMT (chaos.md §1.9): CLOCK_REALTIME and time() shifted by
 *   the offset in the node's own timestamp file, read on every call
 *   (FAKETIME_NO_CACHE=1), so rewriting the file steps the clock at once.
 *   FAKETIME_DONT_FAKE_MONOTONIC=1 keeps CLOCK_MONOTONIC true: otherwise
 *   Raft's election timers and libuv's timers would jump too, a different
 *   and unrealistic fault. The file holds "+0" while no fault is on.
 * - libfiu's fiu_run_preload.so and fiu_posix_preload.so (§1.10): the
 *   environment fiu-run(1) sets (FIU_ENABLE empty, FIU_CTRL_FIFO a base
 *   name to which libfiu appends -<pid>.in and -<pid>.out), so failure
 *   points such as posix/io/sync/fsync can be switched on and off while
 *   the node runs, over the same FIFO protocol fiu-ctrl(1) speaks: one
 *   command line in, "0" or "-1" back.
 *
 * Both are optional: a missing library only makes its nemesis skip, with
 * the reason in the report. Both wrap poll/select (faketime to scale
 * timeouts, libfiu to fail them); each calls the next definition
 * (dlsym RTLD_NEXT), so the two chain in either order.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_proc.h"
#include "common.h"

extern char **environ;

#define PRELOAD_VALUE_SIZE (3 * CHAOS_PATH_SIZE + 64)

static const char *const faketime_paths[] = {
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
    "/usr/lib/faketime/libfaketimeMT.so.1",
    "/usr/local/lib/faketime/libfaketimeMT.so.1",
};
static const char *const fiu_dirs[] = {"/usr/lib/fiu", "/usr/local/lib/fiu",
                                       "/usr/lib/x86_64-linux-gnu/fiu"};

static void find_first(const char *const *paths, size_t count,
                       const char *suffix, char *out, size_t out_size)
{
    out[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        int size = snprintf(out, out_size, "%s%s", paths[i], suffix);
        if (size > 0 && (size_t)size < out_size && access(out, R_OK) == 0) {
            return;
        }
    }
    out[0] = '\0';
}

void chaos_preload_detect(struct chaos_preload *p)
{
    memset(p, 0, sizeof *p);
    const char *wanted = getenv("CHAOS_PROC_PRELOAD");
    if (wanted != NULL && strcmp(wanted, "0") == 0) {
        return;
    }
    size_t fiu_count = sizeof fiu_dirs / sizeof fiu_dirs[0];
    find_first(faketime_paths, sizeof faketime_paths / sizeof faketime_paths[0],
               "", p->faketime, sizeof p->faketime);
    find_first(fiu_dirs, fiu_count, "/fiu_run_preload.so", p->fiu_run,
               sizeof p->fiu_run);
    find_first(fiu_dirs, fiu_count, "/fiu_posix_preload.so", p->fiu_posix,
               sizeof p->fiu_posix);
    if (p->fiu_run[0] == '\0' || p->fiu_posix[0] == '\0') {
        p->fiu_run[0] = p->fiu_posix[0] = '\0'; /* one without the other is
                                                   of no use */
    }
}

const char *chaos_preload_faketime_missing(const struct chaos_preload *p)
{
    return p->faketime[0] != '\0'
               ? NULL
               : "libfaketimeMT.so.1 not found (apt-get install faketime) "
                 "or CHAOS_PROC_PRELOAD=0";
}

const char *chaos_preload_fiu_missing(const struct chaos_preload *p)
{
    return p->fiu_run[0] != '\0'
               ? NULL
               : "libfiu's preload libraries not found (apt-get install "
                 "fiu-utils libfiu-dev) or CHAOS_PROC_PRELOAD=0";
}

static bool is_replaced(const char *variable)
{
    static const char *const prefixes[] = {"LD_PRELOAD=", "FAKETIME", "FIU_",
                                           "ASAN_OPTIONS="};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        if (strncmp(variable, prefixes[i], strlen(prefixes[i])) == 0) {
            return true;
        }
    }
    return false;
}

/* The added variables into extra (CHAOS_PRELOAD_ENV_EXTRA slots); their
 * count. */
static size_t preload_variables(const struct chaos_preload *p,
                                const char *node_dir,
                                char extra[][PRELOAD_VALUE_SIZE])
{
    size_t n = 0;
    const char *asan = getenv("ASAN_OPTIONS");
    snprintf(extra[n++], PRELOAD_VALUE_SIZE, "LD_PRELOAD=%s%s%s%s%s",
             p->faketime, p->faketime[0] && p->fiu_run[0] ? ":" : "",
             p->fiu_run, p->fiu_run[0] ? ":" : "", p->fiu_posix);
    snprintf(extra[n++], PRELOAD_VALUE_SIZE,
             "ASAN_OPTIONS=%s%sverify_asan_link_order=0", asan ? asan : "",
             asan && asan[0] ? ":" : "");
    if (p->faketime[0] != '\0') {
        snprintf(extra[n++], PRELOAD_VALUE_SIZE,
                 "FAKETIME_TIMESTAMP_FILE=%s/faketime.rc", node_dir);
        snprintf(extra[n++], PRELOAD_VALUE_SIZE, "FAKETIME_NO_CACHE=1");
        snprintf(extra[n++], PRELOAD_VALUE_SIZE,
                 "FAKETIME_DONT_FAKE_MONOTONIC=1");
    }
    if (p->fiu_run[0] != '\0') {
        snprintf(extra[n++], PRELOAD_VALUE_SIZE, "FIU_CTRL_FIFO=%s/fiu",
                 node_dir);
        snprintf(extra[n++], PRELOAD_VALUE_SIZE, "FIU_ENABLE=");
    }
    return n;
}

int chaos_preload_env(const struct chaos_preload *p, const char *node_dir,
                      char ***env)
{
    size_t inherited = 0;
    while (environ[inherited] != NULL) {
        inherited++;
    }
    size_t slots = inherited + CHAOS_PRELOAD_ENV_EXTRA + 1;
    size_t size = slots * sizeof(char *) +
                  CHAOS_PRELOAD_ENV_EXTRA * (size_t)PRELOAD_VALUE_SIZE;
    char **out = common_malloc(size);
    if (out == NULL) {
        return -ENOMEM;
    }
    char(*extra)[PRELOAD_VALUE_SIZE] = (void *)(out + slots);
    size_t n = 0;
    for (size_t i = 0; i < inherited; i++) {
        if (!is_replaced(environ[i])) {
            out[n++] = environ[i];
        }
    }
    size_t added = preload_variables(p, node_dir, extra);
    ASSERT(added <= CHAOS_PRELOAD_ENV_EXTRA);
    for (size_t i = 0; i < added; i++) {
        out[n++] = extra[i];
    }
    out[n] = NULL;
    *env = out;
    return 0;
}

void chaos_preload_clock_format(int64_t offset_ms, char *out, size_t out_size)
{
    if (offset_ms == 0) {
        snprintf(out, out_size, "+0");
        return;
    }
    uint64_t magnitude =
        offset_ms < 0 ? (uint64_t)0 - (uint64_t)offset_ms : (uint64_t)offset_ms;
    snprintf(out, out_size, "%c%llu.%03llus", offset_ms < 0 ? '-' : '+',
             (unsigned long long)(magnitude / 1000),
             (unsigned long long)(magnitude % 1000));
}

int chaos_preload_clock_write(const char *node_dir, int64_t offset_ms)
{
    char path[CHAOS_PATH_SIZE + 32], aside[CHAOS_PATH_SIZE + 32], text[48];
    snprintf(path, sizeof path, "%s/faketime.rc", node_dir);
    snprintf(aside, sizeof aside, "%s/faketime.rc.new", node_dir);
    chaos_preload_clock_format(offset_ms, text, sizeof text);
    size_t size = strlen(text);
    text[size++] = '\n';
    int fd = open(aside, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    int rc = write(fd, text, size) == (ssize_t)size ? 0 : -EIO;
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc == 0 && rename(aside, path) != 0) {
        rc = -errno;
    }
    return rc;
}

/* Opens path with flags, retrying ENXIO (a FIFO whose reader has not
 * come yet) until deadline_ns. */
static int fifo_open(const char *path, int flags, int64_t deadline_ns)
{
    for (;;) {
        int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0 || errno != ENXIO) {
            return fd >= 0 ? fd : -errno;
        }
        if (chaos_now_ns() > deadline_ns) {
            return -ETIMEDOUT;
        }
        chaos_sleep_ms(10);
    }
}

/* Reads libfiu's reply line from fd: 0 for "0", -EIO for another. */
static int fifo_reply(int fd, int64_t deadline_ns)
{
    char reply[32];
    size_t used = 0;
    while (used < sizeof reply - 1) {
        int left_ms = (int)((deadline_ns - chaos_now_ns()) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left_ms <= 0 || poll(&p, 1, left_ms) <= 0) {
            return -ETIMEDOUT;
        }
        ssize_t n = read(fd, reply + used, sizeof reply - 1 - used);
        if (n < 0 && errno == EAGAIN) {
            continue;
        }
        if (n <= 0) {
            return -EIO;
        }
        used += (size_t)n;
        reply[used] = '\0';
        if (strchr(reply, '\n') != NULL) {
            return strncmp(reply, "0\n", 2) == 0 ? 0 : -EIO;
        }
    }
    return -EIO;
}

int chaos_preload_fiu_command(const char *node_dir, pid_t pid,
                              const char *command, int timeout_ms)
{
    char in[CHAOS_PATH_SIZE + 48], out[CHAOS_PATH_SIZE + 48], line[256];
    int64_t deadline_ns = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    snprintf(in, sizeof in, "%s/fiu-%ld.in", node_dir, (long)pid);
    snprintf(out, sizeof out, "%s/fiu-%ld.out", node_dir, (long)pid);
    int size = snprintf(line, sizeof line, "%s\n", command);
    if (size <= 0 || (size_t)size >= sizeof line) {
        return -E2BIG;
    }
    /* libfiu's thread opens .in to read, then .out to write: open .in
     * first (it waits for a writer), then .out, so neither open blocks. */
    int in_fd = fifo_open(in, O_WRONLY, deadline_ns);
    if (in_fd < 0) {
        return in_fd;
    }
    int out_fd = fifo_open(out, O_RDONLY, deadline_ns);
    int rc = out_fd < 0 ? out_fd : 0;
    if (rc == 0 && write(in_fd, line, (size_t)size) != (ssize_t)size) {
        rc = -EIO;
    }
    if (rc == 0) {
        rc = fifo_reply(out_fd, deadline_ns);
    }
    close(in_fd);
    if (out_fd >= 0) {
        close(out_fd);
    }
    return rc;
}
