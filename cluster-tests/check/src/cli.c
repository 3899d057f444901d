/* SPDX-License-Identifier: MIT
 *
 * cli.c: check-history, the command-line face of the checker, for the
 * real-process tier's scripts and for people holding a history file:
 *
 *   check-history [-s steps_max] [-t time_ms_max] [-m memory_mib_max] FILE
 *
 * FILE is in check.h's text format ("-" reads standard input). It prints
 * the verdict and its explanation on standard output and exits 0 when the
 * history is linearizable, 1 when it is not, and 2 when it cannot say
 * (a budget ran out) or the file or the arguments are bad: CI must treat
 * 2 as a failure, never as a pass.
 */
#include "check.h"
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLI_EXIT_UNDECIDED 2

/* Room for a reader's error message. */
#define CLI_ERRMSG_SIZE 256

static int cli_usage(void)
{
    fprintf(stderr, "usage: check-history [-s steps_max] [-t time_ms_max] "
                    "[-m memory_mib_max] FILE|-\n");
    return CLI_EXIT_UNDECIDED;
}

/* Parses a positive decimal count; 0 if text is not one. */
static uint64_t cli_count(const char *text)
{
    char *end;
    unsigned long long value;

    errno = 0;
    value = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || text[0] == '-') {
        return 0;
    }
    return (uint64_t)value;
}

static int cli_options(int argc, char **argv, struct check_options *options)
{
    uint64_t mib;
    int c;

    check_options_init(options);
    while ((c = getopt(argc, argv, "s:t:m:")) != -1) {
        switch (c) {
        case 's':
            options->steps_max = cli_count(optarg);
            break;
        case 't':
            options->time_ms_max = cli_count(optarg);
            break;
        case 'm':
            mib = cli_count(optarg);
            options->memory_bytes_max = mib > SIZE_MAX >> 20 ? 0 : mib << 20;
            break;
        default:
            return -EINVAL;
        }
    }
    if (options->steps_max == 0 || options->time_ms_max == 0 ||
        options->memory_bytes_max == 0 || optind + 1 != argc) {
        return -EINVAL;
    }
    return 0;
}

/* Reads the history at path, printing why not on failure. */
static int cli_read(const char *path, struct check_history *history)
{
    char errmsg[CLI_ERRMSG_SIZE] = "";
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    int rc;

    if (in == NULL) {
        rc = -errno;
        fprintf(stderr, "check-history: %s: %s\n", path, strerror(-rc));
        return rc;
    }
    rc = check_history_read(in, history, errmsg, sizeof(errmsg));
    if (in != stdin) {
        fclose(in);
    }
    if (rc != 0) {
        fprintf(stderr, "check-history: %s: %s\n", path, errmsg);
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct check_options options;
    struct check_history history;
    struct check_verdict verdict;
    int rc;

    if (cli_options(argc, argv, &options) != 0) {
        return cli_usage();
    }
    if (cli_read(argv[optind], &history) != 0) {
        return CLI_EXIT_UNDECIDED;
    }
    options.initial_value = history.initial_value;
    rc = check_linearizable(history.ops, history.count, &options, &verdict);
    if (rc != 0) {
        fprintf(stderr, "check-history: check failed: %s\n",
                common_strerror(rc));
        check_history_close(&history);
        return CLI_EXIT_UNDECIDED;
    }
    check_verdict_print(&verdict, history.ops, history.count, stdout);
    rc = (int)verdict.result;
    check_verdict_close(&verdict);
    check_history_close(&history);
    return rc;
}
