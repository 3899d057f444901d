/* SPDX-License-Identifier: MIT
 *
 * main.c: sinew-slt, the sqllogictest runner (issue 10; docs/testing.md,
 * "sqllogictest"). Runs each file against a fresh in-memory engine
 * database, prints "FILE: N passed, N failed, N skipped" per file and
 * "N passed, N failed" last, and either fails on any failed record or, with
 * --baseline, only on fewer passes than the checked-in baseline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slt.h"

/* The longest accepted --timeout: a day. */
#define SLT_TIMEOUT_SEC_MAX 86400

static const char slt_usage[] =
    "usage: sinew-slt [options] FILE...\n"
    "\n"
    "Runs sqllogictest files (.test, or gzip-compressed .test.gz) against\n"
    "sinew's engine, each on a fresh in-memory database, as SQLite's own\n"
    "runner does for the database named \"sqlite\".\n"
    "\n"
    "A test is a statement or query record the file runs for sqlite: not\n"
    "after 'skipif sqlite', nor after 'onlyif <another database>'. Statements\n"
    "and queries both count. Records after a halt that runs are not run.\n"
    "\n"
    "Options:\n"
    "  --verbose             print each failure: line, SQL, expected and got,\n"
    "                        or the engine's error\n"
    "  --timeout SECONDS     per-file wall-clock limit: tests not finished by\n"
    "                        then count as failed (default: none)\n"
    "  --root DIR            name files by their path below DIR (in output\n"
    "                        and baselines)\n"
    "  --baseline FILE       compare per-file passes with FILE (TSV: file,\n"
    "                        passed, total); exit 1 only on a regression\n"
    "  --write-baseline FILE record this run's per-file results in FILE\n"
    "                        (other files' lines in it are kept)\n"
    "  --timing              add each file's run time to its line\n"
    "  --no-fork             run in this process (default: a child process\n"
    "                        per file, so an engine crash fails only the rest\n"
    "                        of that file)\n"
    "\n"
    "Exit status: 0 when no test failed (with --baseline: no file passed\n"
    "fewer tests than its baseline; with --write-baseline: once written),\n"
    "1 otherwise or when a file could not be read, 2 for bad usage.\n";

struct slt_main {
    struct slt_file_options file_options;
    const char *root;
    const char *baseline_path;
    const char *write_baseline_path;
    bool timing;
    struct slt_baseline baseline;       /* --baseline's contents */
    struct slt_baseline write_baseline; /* what --write-baseline writes */
    size_t passed;
    size_t failed;
    size_t regressions;
    size_t improvements;
    bool file_error;
};

static int slt_usage_error(const char *message, const char *argument)
{
    fprintf(stderr, "sinew-slt: %s%s\n\n%s", message,
            argument != NULL ? argument : "", slt_usage);
    return 2;
}

static bool slt_parse_timeout(const char *text, long *out)
{
    char *end = NULL;

    errno = 0;
    long value = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || errno != 0 || value < 0 ||
        value > SLT_TIMEOUT_SEC_MAX) {
        return false;
    }
    *out = value;
    return true;
}

/* Parses the options; *first_file is the index of the first file. */
static int slt_parse_args(struct slt_main *m, int argc, char **argv,
                          int *first_file)
{
    int i = 1;

    m->file_options.fork = true;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *option = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(option, "--") == 0) {
            i++;
            break;
        } else if (strcmp(option, "--verbose") == 0) {
            m->file_options.verbose = true;
        } else if (strcmp(option, "--no-fork") == 0) {
            m->file_options.fork = false;
        } else if (strcmp(option, "--timing") == 0) {
            m->timing = true;
        } else if (strcmp(option, "--help") == 0) {
            printf("%s", slt_usage);
            exit(0);
        } else if (!has_value) {
            return slt_usage_error("unknown option or missing value: ", option);
        } else if (strcmp(option, "--timeout") == 0) {
            if (!slt_parse_timeout(argv[++i], &m->file_options.timeout_sec)) {
                return slt_usage_error("--timeout wants 0 to 86400 seconds: ",
                                       argv[i]);
            }
        } else if (strcmp(option, "--root") == 0) {
            m->root = argv[++i];
        } else if (strcmp(option, "--baseline") == 0) {
            m->baseline_path = argv[++i];
        } else if (strcmp(option, "--write-baseline") == 0) {
            m->write_baseline_path = argv[++i];
        } else {
            return slt_usage_error("unknown option: ", option);
        }
    }
    if (i >= argc) {
        return slt_usage_error("no files given", NULL);
    }
    *first_file = i;
    return 0;
}

/* A file's name in output and baselines: below --root, without "./" and
 * ".gz" (written to out, out_size bytes). */
static void slt_file_name(const struct slt_main *m, const char *path, char *out,
                          size_t out_size)
{
    size_t root_length = m->root != NULL ? strlen(m->root) : 0;

    while (root_length > 1 && m->root[root_length - 1] == '/') {
        root_length--;
    }
    if (root_length > 0 && strncmp(path, m->root, root_length) == 0 &&
        path[root_length] == '/') {
        path += root_length + 1;
    }
    while (strncmp(path, "./", 2) == 0) {
        path += 2;
    }
    snprintf(out, out_size, "%s", path);
    size_t length = strlen(out);
    if (length > 3 && strcmp(out + length - 3, ".gz") == 0) {
        out[length - 3] = '\0';
    }
}

/* Compares one file's result with the baseline and says so. */
static void slt_compare_baseline(struct slt_main *m, const char *name,
                                 const struct slt_file_counts *counts)
{
    const struct slt_baseline_entry *entry =
        slt_baseline_find(&m->baseline, name);

    if (entry == NULL) {
        printf("%s: not in the baseline (%zu passed)\n", name, counts->passed);
    } else if (counts->passed < entry->passed) {
        printf("%s: REGRESSION: %zu passed, the baseline has %zu\n", name,
               counts->passed, entry->passed);
        m->regressions++;
    } else if (counts->passed > entry->passed) {
        printf("%s: improved: %zu passed, the baseline has %zu\n", name,
               counts->passed, entry->passed);
        m->improvements++;
    }
}

static void slt_run_one(struct slt_main *m, const char *path)
{
    struct slt_file_counts counts;
    char name[4096];
    int64_t start_ms = slt_now_ms();

    slt_file_name(m, path, name, sizeof(name));
    if (slt_file_run(path, name, &m->file_options, &counts) != 0) {
        m->file_error = true;
        return;
    }
    printf("%s: %zu passed, %zu failed, %zu skipped", name, counts.passed,
           counts.failed, counts.skipped);
    if (m->timing) {
        printf(" (%.1f s)", (double)(slt_now_ms() - start_ms) / 1000.0);
    }
    printf("\n");
    m->passed += counts.passed;
    m->failed += counts.failed;
    if (m->baseline_path != NULL) {
        slt_compare_baseline(m, name, &counts);
    }
    if (m->write_baseline_path != NULL &&
        slt_baseline_set(&m->write_baseline, name, counts.passed,
                         counts.passed + counts.failed) != 0) {
        printf("%s: out of memory for the baseline\n", name);
        m->file_error = true;
    }
    fflush(stdout);
}

/* Loads the baselines the options name; 0 or an exit status. */
static int slt_load_baselines(struct slt_main *m)
{
    char error[512];

    if (m->baseline_path != NULL &&
        slt_baseline_load(&m->baseline, m->baseline_path, error,
                          sizeof(error)) != 0) {
        fprintf(stderr, "sinew-slt: cannot read the baseline: %s\n", error);
        return 2;
    }
    if (m->write_baseline_path != NULL) {
        int rc = slt_baseline_load(&m->write_baseline, m->write_baseline_path,
                                   error, sizeof(error));
        if (rc != 0 && rc != -ENOENT) {
            fprintf(stderr,
                    "sinew-slt: cannot read the baseline to update: "
                    "%s\n",
                    error);
            return 2;
        }
    }
    return 0;
}

/* Prints the totals and writes the baseline; returns the exit status. */
static int slt_finish(struct slt_main *m)
{
    int status = m->failed > 0 || m->file_error ? 1 : 0;

    if (m->baseline_path != NULL) {
        printf("baseline: %zu regressions, %zu improvements\n", m->regressions,
               m->improvements);
        status = m->regressions > 0 || m->file_error ? 1 : 0;
    }
    if (m->write_baseline_path != NULL) {
        int rc = slt_baseline_write(&m->write_baseline, m->write_baseline_path);
        if (rc != 0) {
            fprintf(stderr, "sinew-slt: cannot write %s: %s\n",
                    m->write_baseline_path, common_strerror(rc));
            status = 1;
        } else {
            status = m->file_error ? 1 : 0;
        }
    }
    printf("%zu passed, %zu failed\n", m->passed, m->failed);
    return status;
}

int main(int argc, char **argv)
{
    struct slt_main m;
    int first_file = 0;

    memset(&m, 0, sizeof(m));
    slt_baseline_init(&m.baseline);
    slt_baseline_init(&m.write_baseline);
    int status = slt_parse_args(&m, argc, argv, &first_file);
    if (status == 0) {
        status = slt_load_baselines(&m);
    }
    if (status == 0) {
        for (int i = first_file; i < argc; i++) {
            slt_run_one(&m, argv[i]);
        }
        status = slt_finish(&m);
    }
    slt_baseline_close(&m.baseline);
    slt_baseline_close(&m.write_baseline);
    return status;
}
