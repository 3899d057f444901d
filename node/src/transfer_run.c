/* SPDX-License-Identifier: MIT
 *
 * transfer_run.c: what import and export share around the copy
 * (transfer_copy.c): the target file's life and the command line.
 *
 * The target is claimed with open(O_CREAT | O_EXCL), so an existing file
 * is never overwritten, also when it appears between the check and the
 * create; a side file already beside it (a -wal, a -journal) is refused
 * too, since the library would take it for part of the new database and
 * replay it. Both libraries take an empty file for a new database. From
 * the claim on, any failure removes the target and its side files, which
 * were all made by this run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "node.h"
#include "transfer_int.h"

/* ------------------------------------------------------------------------
 * The target file
 * ------------------------------------------------------------------------ */

static const char *const *suffixes_of(enum transfer_kind kind)
{
    return kind == TRANSFER_KIND_SQLITE ? transfer_sqlite_suffixes
                                        : transfer_engine_suffixes;
}

/* path + suffix, common_malloc'd; NULL when out of memory. */
static char *side_path(const char *path, const char *suffix)
{
    size_t size = strlen(path);
    size_t suffix_size = strlen(suffix);
    char *side = common_malloc(size + suffix_size + 1);
    if (side != NULL) {
        memcpy(side, path, size);
        memcpy(side + size, suffix, suffix_size + 1);
    }
    return side;
}

static int refuse_side_files(const char *path, const char *const *suffixes,
                             char *error, size_t error_size)
{
    for (size_t i = 0; suffixes[i] != NULL; i++) {
        char *side = side_path(path, suffixes[i]);
        if (side == NULL) {
            return transfer_fail(error, error_size, COMMON_ENOMEM, "%s",
                                 common_strerror(COMMON_ENOMEM));
        }
        struct stat st;
        int rc = lstat(side, &st) == 0 ? NODE_EINVAL : 0;
        if (rc != 0) {
            transfer_fail(error, error_size, rc,
                          "%s already exists (left by another database?); "
                          "not overwriting it",
                          side);
        }
        common_free(side);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int claim_target(const char *path, const char *const *suffixes,
                        char *error, size_t error_size)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    int rc = exists ? 0 : refuse_side_files(path, suffixes, error, error_size);
    if (rc != 0) {
        return rc;
    }
    int fd =
        exists ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (exists || (fd < 0 && errno == EEXIST)) {
        return transfer_fail(error, error_size, NODE_EINVAL,
                             "%s already exists; not overwriting it "
                             "(remove it or choose another name)",
                             path);
    }
    if (fd < 0) {
        return transfer_fail(error, error_size, -errno, "cannot create %s: %s",
                             path, strerror(errno));
    }
    close(fd);
    return 0;
}

static void remove_target(const char *path, const char *const *suffixes)
{
    unlink(path);
    for (size_t i = 0; suffixes[i] != NULL; i++) {
        char *side = side_path(path, suffixes[i]);
        if (side != NULL) {
            unlink(side);
        }
        common_free(side);
    }
}

/* The source must exist: engine_open() would create an empty one. */
static int check_source(const char *path, char *error, size_t error_size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int rc = errno == ENOENT ? NODE_ENOTFOUND : -errno;
        return transfer_fail(error, error_size, rc, "%s: %s", path,
                             strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return transfer_fail(error, error_size, NODE_EINVAL,
                             "%s: not a regular file", path);
    }
    return 0;
}

static int open_end(enum transfer_kind kind, const char *path, bool is_target,
                    struct transfer_end *out, char *error, size_t error_size)
{
    if (kind == TRANSFER_KIND_SQLITE) {
        return transfer_sqlite_open(path, is_target, out, error, error_size);
    }
    return transfer_engine_open(path, out, error, error_size);
}

int transfer_run(const struct transfer_direction *direction,
                 const char *source_path, const char *target_path,
                 const struct transfer_options *options,
                 struct transfer_summary *summary, char *error,
                 size_t error_size)
{
    ASSERT(error != NULL && error_size > 0);
    error[0] = '\0';
    memset(summary, 0, sizeof(*summary));
    const char *const *suffixes = suffixes_of(direction->target);
    int rc = check_source(source_path, error, error_size);
    rc = rc == 0 ? claim_target(target_path, suffixes, error, error_size) : rc;
    if (rc != 0) {
        return rc;
    }
    struct transfer_end source = {0};
    struct transfer_end target = {0};
    rc = open_end(direction->source, source_path, false, &source, error,
                  error_size);
    if (rc == 0) {
        rc = open_end(direction->target, target_path, true, &target, error,
                      error_size);
    }
    if (rc == 0) {
        struct transfer_copy copy = {
            .source = &source,
            .target = &target,
            .options = options,
            .source_name = source_path,
            .verb = direction->verb,
            .summary = summary,
            .error = error,
            .error_size = error_size,
        };
        rc = transfer_copy(&copy);
    }
    if (target.db != NULL) {
        target.ops->close(&target);
    }
    if (source.db != NULL) {
        source.ops->close(&source);
    }
    if (rc != 0) {
        remove_target(target_path, suffixes);
        transfer_fail(error, error_size, rc, "%s", engine_strerror(rc));
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * The command line
 * ------------------------------------------------------------------------ */

static volatile sig_atomic_t transfer_stop;

static void on_stop_signal(int signo)
{
    (void)signo;
    transfer_stop = 1;
}

/* "1 table" or "2 tables". */
static const char *noun(int64_t count, const char *one, const char *many)
{
    return count == 1 ? one : many;
}

static void print_summary(const struct transfer_direction *direction,
                          const struct transfer_summary *s, const char *path)
{
    printf("%s %lld %s, %lld %s, ", direction->done, (long long)s->tables,
           noun(s->tables, "table", "tables"), (long long)s->indexes,
           noun(s->indexes, "index", "indexes"));
    if (s->views > 0) {
        printf("%lld %s, ", (long long)s->views,
               noun(s->views, "view", "views"));
    }
    if (s->triggers > 0) {
        printf("%lld %s, ", (long long)s->triggers,
               noun(s->triggers, "trigger", "triggers"));
    }
    printf("%lld %s into %s", (long long)s->rows, noun(s->rows, "row", "rows"),
           path);
    if (s->views_skipped > 0 || s->triggers_skipped > 0) {
        printf(" (skipped ");
        if (s->views_skipped > 0) {
            printf("%lld %s%s", (long long)s->views_skipped,
                   noun(s->views_skipped, "view", "views"),
                   s->triggers_skipped > 0 ? ", " : "");
        }
        if (s->triggers_skipped > 0) {
            printf("%lld %s", (long long)s->triggers_skipped,
                   noun(s->triggers_skipped, "trigger", "triggers"));
        }
        printf(")");
    }
    printf("\n");
}

/* Takes the two paths; -h/--help sets *wants_help. */
static int parse_arguments(const struct transfer_direction *direction, int argc,
                           char **argv, const char **paths, bool *wants_help)
{
    int count = 0;
    bool is_option_end = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!is_option_end && arg[0] == '-' && arg[1] != '\0') {
            if (strcmp(arg, "--") == 0) {
                is_option_end = true;
                continue;
            }
            if (strcmp(arg, "-h") == 0 || strcmp(arg, "-help") == 0 ||
                strcmp(arg, "--help") == 0) {
                *wants_help = true;
                return 0;
            }
            fprintf(stderr, "sinew %s: unknown option: %s\n",
                    direction->command, arg);
            return -EINVAL;
        }
        if (count == 2) {
            fprintf(stderr, "sinew %s: too many arguments: %s\n",
                    direction->command, arg);
            return -EINVAL;
        }
        paths[count++] = arg;
    }
    if (count < 2) {
        fprintf(stderr, "sinew %s: missing %s\n", direction->command,
                count == 0 ? "the source and target files" : "the target file");
        return -EINVAL;
    }
    return 0;
}

int transfer_main(const struct transfer_direction *direction, int argc,
                  char **argv)
{
    const char *paths[2] = {NULL, NULL};
    bool wants_help = false;
    if (parse_arguments(direction, argc, argv, paths, &wants_help) != 0) {
        fprintf(stderr, "Try 'sinew %s --help'.\n", direction->command);
        return TRANSFER_EXIT_USAGE;
    }
    if (wants_help) {
        direction->usage(stdout);
        return TRANSFER_EXIT_OK;
    }
    struct transfer_options options = {
        .progress = isatty(STDERR_FILENO) ? stderr : NULL,
        .warnings = stderr,
        .stop = &transfer_stop,
    };
    struct sigaction action = {.sa_handler = on_stop_signal};
    struct sigaction old_int;
    struct sigaction old_term;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int);
    sigaction(SIGTERM, &action, &old_term);
    struct transfer_summary summary;
    char error[TRANSFER_ERROR_SIZE];
    int rc = transfer_run(direction, paths[0], paths[1], &options, &summary,
                          error, sizeof(error));
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc != 0) {
        fprintf(stderr, "sinew %s: %s\n", direction->command, error);
        return TRANSFER_EXIT_FAILED;
    }
    print_summary(direction, &summary, paths[1]);
    return TRANSFER_EXIT_OK;
}
