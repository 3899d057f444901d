/* SPDX-License-Identifier: MIT
 *
 * main.c: the sim command (chaos-design.md §9).
 *
 *   sim --mode crdt|leader|quorum|all --seed S [--trace] [--keep]
 *       [--history FILE] [--profile ties]
 *   sim --mode M --seeds N [--first S] [--jobs J] [--regressions FILE]
 *   any of them with --check-determinism: each seed runs twice and fails
 *   (checker "determinism") unless both runs end with one trace hash
 *
 * --regressions FILE lists seeds known to fail, one "mode seed # why" a
 * line ('#' starts a comment): a sweep skips them (and says so), so a
 * batch stays green while the finding they show is open; run one with
 * --seed to see it.
 *
 * Every seed runs in a forked child, so an ASSERT or a sanitizer abort
 * still reports its seed; the child sends its struct sim_result back over
 * a pipe. Each failure prints one line ending in the command that replays
 * it; the last line is "N passed, N failed". Exit: 0 all passed, 1 some
 * failed, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_int.h"

#define JOBS_MAX 64
#define SKIPS_MAX 256

struct skip {
    enum sim_mode mode;
    uint64_t seed;
};

/* Seeds the sweep leaves out (--regressions). */
static struct skip skips[SKIPS_MAX];
static size_t skip_count;
static bool check_determinism;

struct job {
    pid_t pid;
    int fd;
    struct sim_options options;
};

static int usage(void)
{
    fprintf(stderr,
            "usage: sim --mode crdt|leader|quorum|all (--seed S | --seeds N "
            "[--first S] [--jobs J] [--regressions FILE]) [--trace] [--keep] "
            "[--history FILE] [--profile ties] [--check-determinism]\n");
    return 2;
}

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;

    errno = 0;
    *out = strtoull(text, &end, 0);
    return errno != 0 || end == text || *end != '\0' ? -1 : 0;
}

/* Loads a regressions file: "mode seed" per line, '#' comments. */
static int load_skips(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], mode[16], seed[64];

    if (f == NULL) {
        fprintf(stderr, "sim: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL && skip_count < SKIPS_MAX) {
        char *hash = strchr(line, '#');

        if (hash != NULL) {
            *hash = '\0';
        }
        if (sscanf(line, "%15s %63s", mode, seed) == 2 &&
            sim_mode_parse(mode, &skips[skip_count].mode) == 0 &&
            parse_u64(seed, &skips[skip_count].seed) == 0) {
            skip_count++;
        }
    }
    fclose(f);
    return 0;
}

static bool skipped(const struct sim_options *options)
{
    for (size_t i = 0; i < skip_count; i++) {
        if (skips[i].mode == options->mode && skips[i].seed == options->seed) {
            return true;
        }
    }
    return false;
}

/* --check-determinism: a second run of the seed must end with the first
 * run's trace hash (both in this child, one after the other). The second
 * run's dir sits in a fresh directory of its own, so its path and the
 * inode numbers the file system hands out differ from the first run's:
 * a run that depends on either (the disk once keyed files by reused inode
 * numbers) fails here rather than only on another machine. */
static void run_again(const struct sim_options *options,
                      struct sim_result *first)
{
    struct sim_options again = *options;
    struct sim_result second;
    const char *tmp = getenv("TMPDIR");
    char parent[256];
    int rc = -1;

    snprintf(parent, sizeof(parent), "%s/sinew-sim-again-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (first->failed || mkdtemp(parent) == NULL) {
        return;
    }
    again.tmp_dir = parent;
    rc = sim_run_seed(&again, &second);
    (void)rmdir(parent);
    if (rc != 0) {
        return;
    }
    if (second.trace_hash != first->trace_hash) {
        first->failed = true;
        snprintf(first->checker, sizeof(first->checker), "determinism");
        snprintf(first->message, sizeof(first->message),
                 "two runs of the seed end with trace hashes %016llx and "
                 "%016llx",
                 (unsigned long long)first->trace_hash,
                 (unsigned long long)second.trace_hash);
    }
}

static void child(const struct sim_options *options, int fd)
{
    struct sim_result result;
    int rc = sim_run_seed(options, &result);

    if (rc == 0 && check_determinism) {
        run_again(options, &result);
    }

    if (rc != 0) {
        memset(&result, 0, sizeof(result));
        result.failed = true;
        snprintf(result.checker, sizeof(result.checker), "%s",
                 rc == SIM_ENOTBUILT ? "not-built" : "setup");
        snprintf(result.message, sizeof(result.message), "%s",
                 rc == SIM_ENOTBUILT ? "mode not built in this binary"
                                     : common_strerror(rc));
    }
    ssize_t n = write(fd, &result, sizeof(result));

    fflush(NULL); /* _exit() skips stdio: --trace output would be cut */
    _exit(n == (ssize_t)sizeof(result) ? 0 : 3);
}

static int start(struct job *job)
{
    int fds[2];

    if (pipe(fds) != 0) {
        return -1;
    }
    fflush(NULL);
    job->pid = fork();
    if (job->pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (job->pid == 0) {
        close(fds[0]);
        child(&job->options, fds[1]);
    }
    close(fds[1]);
    job->fd = fds[0];
    return 0;
}

/* Collects job; true when it passed. */
static bool finish(struct job *job, const char *argv0, bool quiet_ok)
{
    struct sim_result result;
    ssize_t got = read(job->fd, &result, sizeof(result));
    int status = 0;

    close(job->fd);
    (void)waitpid(job->pid, &status, 0);
    if (got != (ssize_t)sizeof(result)) {
        memset(&result, 0, sizeof(result));
        result.failed = true;
        snprintf(result.checker, sizeof(result.checker), "crash");
        snprintf(result.message, sizeof(result.message), "the run died (%s %d)",
                 WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    if (result.failed || !quiet_ok) {
        sim_result_print(stdout, argv0, &job->options, &result);
    }
    if (result.failed && result.config_line[0] != '\0') {
        printf("     %s\n", result.config_line);
    }
    return !result.failed;
}

static int sweep(const struct sim_options *base, uint64_t first, uint64_t count,
                 unsigned jobs, const char *argv0, bool quiet_ok)
{
    struct job running[JOBS_MAX];
    unsigned active = 0;
    uint64_t next = 0, passed = 0, failed = 0;

    while (next < count || active > 0) {
        while (active < jobs && next < count) {
            struct job *job = &running[active];

            job->options = *base;
            job->options.seed = first + next;
            if (base->mode == SIM_MODE_ALL) {
                job->options.mode = (enum sim_mode)(job->options.seed % 3);
            }
            next++;
            if (quiet_ok && skipped(&job->options)) { /* sweeps only */
                printf("skip mode=%s seed=0x%llx (regressions list)\n",
                       sim_mode_name(job->options.mode),
                       (unsigned long long)job->options.seed);
                continue;
            }
            if (start(job) != 0) {
                perror("sim: fork");
                return 2;
            }
            active++;
        }
        if (active == 0) {
            continue; /* the last seeds were skipped */
        }
        /* Oldest first: output order follows seed order. */
        if (finish(&running[0], argv0, quiet_ok)) {
            passed++;
        } else {
            failed++;
        }
        memmove(&running[0], &running[1], (active - 1) * sizeof(running[0]));
        active--;
    }
    printf("%" PRIu64 " passed, %" PRIu64 " failed\n", passed, failed);
    return failed > 0 ? 1 : 0;
}

/* Defined only by a mutant build's object files (crdt_key.c with
 * SINEW_MUTATION_NO_SITE_TIEBREAK): the sim says which code it runs. */
extern const char replication__mutation_no_site_tiebreak[]
    __attribute__((weak));

int main(int argc, char **argv)
{
    struct sim_options options = {.mode = SIM_MODE_ALL};
    uint64_t seed = 0, seeds = 0, first = 1, jobs = 1;
    bool have_seed = false, have_mode = false;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(arg, "--trace") == 0) {
            options.trace = true;
        } else if (strcmp(arg, "--check-determinism") == 0) {
            check_determinism = true;
        } else if (strcmp(arg, "--keep") == 0) {
            options.keep = true;
        } else if (value == NULL) {
            return usage();
        } else if (strcmp(arg, "--mode") == 0) {
            if (sim_mode_parse(value, &options.mode) != 0) {
                return usage();
            }
            have_mode = true;
            i++;
        } else if (strcmp(arg, "--seed") == 0) {
            if (parse_u64(value, &seed) != 0) {
                return usage();
            }
            have_seed = true;
            i++;
        } else if (strcmp(arg, "--seeds") == 0 || strcmp(arg, "--first") == 0 ||
                   strcmp(arg, "--jobs") == 0) {
            uint64_t *slot = arg[2] == 's'   ? &seeds
                             : arg[2] == 'f' ? &first
                                             : &jobs;

            if (strcmp(arg, "--first") == 0 && strcmp(value, "random") == 0) {
                first = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
            } else if (parse_u64(value, slot) != 0) {
                return usage();
            }
            i++;
        } else if (strcmp(arg, "--regressions") == 0) {
            if (load_skips(value) != 0) {
                return 2;
            }
            i++;
        } else if (strcmp(arg, "--history") == 0) {
            options.history_path = value;
            i++;
        } else if (strcmp(arg, "--profile") == 0 &&
                   strcmp(value, "ties") == 0) {
            options.profile = 1;
            i++;
        } else {
            return usage();
        }
    }
    if (!have_mode || have_seed == (seeds > 0) || jobs == 0 ||
        jobs > JOBS_MAX) {
        return usage();
    }
    if (replication__mutation_no_site_tiebreak != NULL) {
        printf("mutation: %s\n", replication__mutation_no_site_tiebreak);
    }
    if (have_seed) {
        if (options.mode == SIM_MODE_ALL) {
            options.mode = (enum sim_mode)(seed % 3);
        }
        return sweep(&options, seed, 1, 1, argv[0], false);
    }
    return sweep(&options, first, seeds, (unsigned)jobs, argv[0], true);
}
