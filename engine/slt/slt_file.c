/* SPDX-License-Identifier: MIT
 *
 * slt_file.c: one sqllogictest file, read, parsed and run.
 *
 * By default the records run in a forked child process, so that neither an
 * engine crash (an ASSERT that fires on some corpus query) nor a query
 * that never ends can stop a run over the whole corpus. The parent has
 * parsed the file before the fork; the child runs it and writes one byte
 * per record to a pipe (enum slt_outcome), so the parent knows how far it
 * got. When the child dies, or the parent kills it at the time limit (plus
 * a grace period: the child itself stops starting records at the limit),
 * the record it was running and every later test count as failed.
 * --no-fork runs in the process itself (for a debugger); the time limit is
 * then checked only between records.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "slt.h"

/* How long after the time limit a child that is stuck in one record is
 * killed. */
#define SLT_KILL_GRACE_MS 10000
/* SQL shown with a verbose failure. */
#define SLT_SHOWN_SQL_MAX 2000

struct slt_file_state {
    const struct slt_script *script; /* borrowed */
    const char *name;                /* borrowed */
    const struct slt_file_options *options;
    struct slt_file_counts *counts; /* borrowed */
    int pipe_fd;                    /* the child's end; -1 when inline */
};

static void slt_count(struct slt_file_counts *counts, int outcome)
{
    if (outcome == SLT_OUTCOME_PASSED) {
        counts->passed++;
    } else if (outcome == SLT_OUTCOME_FAILED) {
        counts->failed++;
    } else if (outcome == SLT_OUTCOME_SKIPPED) {
        counts->skipped++;
    }
}

static void slt_print_failure(const char *name, const struct slt_record *record,
                              const char *failure)
{
    printf("%s:%d: failed: %s\n", name, record->line, failure);
    if (record->sql != NULL) {
        printf("  sql: %.*s\n", SLT_SHOWN_SQL_MAX, record->sql);
    }
    fflush(stdout);
}

static void slt_on_outcome(void *ctx, size_t index, enum slt_outcome outcome,
                           const char *failure)
{
    struct slt_file_state *state = ctx;

    if (state->options->verbose && outcome == SLT_OUTCOME_FAILED &&
        failure != NULL) {
        slt_print_failure(state->name, &state->script->records[index], failure);
    }
    if (state->pipe_fd < 0) {
        slt_count(state->counts, outcome);
        return;
    }
    char byte = (char)outcome;
    ssize_t written;
    do {
        written = write(state->pipe_fd, &byte, 1);
    } while (written < 0 && errno == EINTR);
    if (written != 1) {
        _exit(3);
    }
}

/* Counts the records from index first on as lost: tests fail, skipped
 * tests stay skipped, up to a halt that would have run. */
static void slt_count_lost(const struct slt_script *script, size_t first,
                           struct slt_file_counts *counts)
{
    for (size_t i = first; i < script->record_count; i++) {
        const struct slt_record *record = &script->records[i];
        if (record->skipped) {
            counts->skipped += slt_record_is_test(record);
        } else if (record->kind == SLT_RECORD_HALT) {
            return;
        } else {
            counts->failed += slt_record_is_test(record);
        }
    }
}

/* The child: runs the script, reporting through the pipe. Never returns. */
static _Noreturn void slt_child(struct slt_file_state *state,
                                const struct slt_run_options *run_options)
{
    int rc = slt_run_script(state->script, run_options, slt_on_outcome, state);

    if (rc != 0) {
        printf("%s: cannot open a database: %s\n", state->name,
               engine_strerror(rc));
    }
    fflush(stdout);
    _exit(rc == 0 ? 0 : 2);
}

/* Why the child stopped early, for the report. */
static void slt_describe_end(bool killed, int status, char *out, size_t size)
{
    if (killed) {
        snprintf(out, size, "was killed at the per-file time limit");
    } else if (WIFSIGNALED(status)) {
        snprintf(out, size, "died of signal %d", WTERMSIG(status));
    } else if (WIFEXITED(status)) {
        snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(out, size, "stopped");
    }
}

/* Reads the child's outcome bytes from fd until it closes the pipe or the
 * hard deadline (0: none) passes. Returns the records reported; *halted
 * when one was a halt, *killed when the deadline passed. */
static size_t slt_read_outcomes(struct slt_file_state *state, int fd,
                                int64_t hard_deadline_ms, bool *halted,
                                bool *killed)
{
    char bytes[4096];
    size_t seen = 0;

    for (;;) {
        int wait_ms = -1;
        if (hard_deadline_ms > 0) {
            int64_t left = hard_deadline_ms - slt_now_ms();
            wait_ms = left <= 0 ? 0 : (left > 60000 ? 60000 : (int)left);
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready == 0 && hard_deadline_ms > 0 &&
            slt_now_ms() >= hard_deadline_ms) {
            *killed = true;
            return seen;
        }
        if (ready <= 0) {
            continue;
        }
        ssize_t got = read(fd, bytes, sizeof(bytes));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return seen;
        }
        for (ssize_t i = 0; i < got; i++) {
            slt_count(state->counts, bytes[i]);
            *halted = *halted || bytes[i] == (char)SLT_OUTCOME_HALT;
            seen++;
        }
    }
}

static int slt_run_forked(struct slt_file_state *state,
                          const struct slt_run_options *run_options)
{
    int fds[2];
    bool halted = false;
    bool killed = false;
    int status = 0;

    if (pipe(fds) != 0) {
        printf("%s: cannot run: pipe: %s\n", state->name, strerror(errno));
        return -errno;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int rc = -errno;
        printf("%s: cannot run: fork: %s\n", state->name, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return rc;
    }
    if (pid == 0) {
        close(fds[0]);
        state->pipe_fd = fds[1];
        slt_child(state, run_options);
    }
    close(fds[1]);
    int64_t hard_deadline_ms =
        run_options->deadline_ms > 0
            ? run_options->deadline_ms + SLT_KILL_GRACE_MS
            : 0;
    size_t seen =
        slt_read_outcomes(state, fds[0], hard_deadline_ms, &halted, &killed);
    if (killed) {
        kill(pid, SIGKILL);
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!halted && seen < state->script->record_count) {
        char why[64];
        slt_describe_end(killed, status, why, sizeof(why));
        printf("%s:%d: failed: the runner's child %s while running this "
               "record; it and every later test count as failed\n",
               state->name, state->script->records[seen].line, why);
        slt_count_lost(state->script, seen, state->counts);
    }
    return 0;
}

int slt_file_run(const char *path, const char *name,
                 const struct slt_file_options *options,
                 struct slt_file_counts *counts)
{
    struct slt_script script;
    struct slt_run_options run_options = {0};
    struct slt_file_state state = {.script = &script,
                                   .name = name,
                                   .options = options,
                                   .counts = counts,
                                   .pipe_fd = -1};
    char reason[256];
    char *text = NULL;
    size_t size = 0;

    memset(counts, 0, sizeof(*counts));
    if (options->timeout_sec > 0) {
        run_options.deadline_ms = slt_now_ms() + options->timeout_sec * 1000;
    }
    int rc = slt_read_file(path, &text, &size, reason, sizeof(reason));
    if (rc != 0) {
        printf("%s: cannot read: %s\n", name, reason);
        return rc;
    }
    rc = slt_parse(text, size, &script);
    common_free(text);
    if (rc != 0) {
        printf("%s: cannot parse: %s\n", name, common_strerror(rc));
        return rc;
    }
    if (options->fork) {
        rc = slt_run_forked(&state, &run_options);
    } else {
        rc = slt_run_script(&script, &run_options, slt_on_outcome, &state);
        if (rc != 0) {
            printf("%s: cannot open a database: %s\n", name,
                   engine_strerror(rc));
        }
    }
    slt_script_free(&script);
    return rc;
}
