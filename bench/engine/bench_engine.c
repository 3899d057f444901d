/* SPDX-License-Identifier: MIT
 *
 * bench_engine: sinew's engine against C SQLite and DuckDB (issue 11),
 * one process, one run, the same data: musql's 26 read shapes and 4
 * single-row writes (reference musql.md section 6) plus bulk INSERT,
 * UPDATE and DELETE. Per row count (--rows, a list):
 *
 *   1. load   every arm fills t and b from the same seeded generator, in
 *             files under --dir; sinew is VACUUMed and reopened so it reads
 *             its main file, SQLite checkpointed, DuckDB checkpointed.
 *             sinew runs as two arms, each on its own file (the timed
 *             writes insert the same ids): JIT on, and JIT off (PRAGMA
 *             jit = off), the interpreter alone.
 *   2. check  every shape runs on several bind values (3 s budget / (5 x
 *             one SQLite run), clamped to 5..40, musql's rule) in every
 *             arm; results are rendered with type tags and must equal C
 *             SQLite's. Writes run inside BEGIN ... ROLLBACK: rows changed
 *             per statement, then a checksum of t, must equal SQLite's.
 *             Any mismatch prints both sides and fails the run (exit 1).
 *             After the JIT-on arm's last check run of a shape,
 *             engine_stmt_jit_use() says whether the JIT served it.
 *   3. time   reads: one warm-up run, then iterations = --budget-ms /
 *             warm-up time (floor 40, ceiling 200,000; 3 when one run
 *             takes 200 ms or more); single-row writes likewise, capped at
 *             250, autocommit; bulk writes 5 rounds each. Every run is
 *             timed alone (CLOCK_MONOTONIC); the table shows medians.
 *
 * Outputs: the markdown table (with the JIT-on handle's JIT counters under
 * it) on stdout and, in --out, engine-<rows>.md, .csv (raw numbers) and
 * .svg (ratios, log scale). bench/README.md ("Engine") documents options
 * and method.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_engine.h"

#ifndef BENCH_DUCKDB_DEFAULT
#define BENCH_DUCKDB_DEFAULT NULL
#endif

struct options {
    const char *rows;
    const char *dir;
    const char *out;
    const char *duckdb;
    const char *only;
    const char *sync;
    double budget_ns;
    double check_budget_ns;
    int cache_mib;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_engine [--rows N[,N...]] [--dir DIR] [--out DIR]\n"
            "                    [--duckdb PATH/libduckdb.so] [--only ID,...]\n"
            "                    [--budget-ms MS] [--check-budget-ms MS]\n"
            "                    [--sqlite-cache-mib MIB] [--sync "
            "full|normal|off]\n");
    exit(2);
}

static void parse_options(int argc, char **argv, struct options *options)
{
    int i;

    *options = (struct options){
        .rows = "100000,1000000",
        .dir = "bench-data",
        .out = "bench-results",
        .duckdb =
            getenv("DUCKDB_LIB") ? getenv("DUCKDB_LIB") : BENCH_DUCKDB_DEFAULT,
        .sync = "full",
        .budget_ns = 200e6,
        .check_budget_ns = 3e9,
        .cache_mib = 1024,
    };
    for (i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (value == NULL) {
            usage();
        }
        if (strcmp(argv[i], "--rows") == 0) {
            options->rows = value;
        } else if (strcmp(argv[i], "--dir") == 0) {
            options->dir = value;
        } else if (strcmp(argv[i], "--out") == 0) {
            options->out = value;
        } else if (strcmp(argv[i], "--duckdb") == 0) {
            options->duckdb = value;
        } else if (strcmp(argv[i], "--only") == 0) {
            options->only = value;
        } else if (strcmp(argv[i], "--sync") == 0) {
            options->sync = value;
        } else if (strcmp(argv[i], "--budget-ms") == 0) {
            options->budget_ns = atof(value) * 1e6;
        } else if (strcmp(argv[i], "--check-budget-ms") == 0) {
            options->check_budget_ns = atof(value) * 1e6;
        } else if (strcmp(argv[i], "--sqlite-cache-mib") == 0) {
            options->cache_mib = atoi(value);
        } else {
            usage();
        }
        i++;
    }
    if (strcmp(options->sync, "full") != 0 &&
        strcmp(options->sync, "normal") != 0 &&
        strcmp(options->sync, "off") != 0) {
        usage();
    }
}

static bool selected(const struct options *options,
                     const struct bench_shape *shape)
{
    const char *at = options->only;
    size_t size = strlen(shape->id);

    if (at == NULL) {
        return true;
    }
    while ((at = strstr(at, shape->id)) != NULL) {
        bool starts = at == options->only || at[-1] == ',';
        bool ends = at[size] == '\0' || at[size] == ',';

        if (starts && ends) {
            return true;
        }
        at += size;
    }
    return false;
}

/* "AMD EPYC, 2 CPUs, Linux 6.18" */
static void describe_machine(char *out, size_t size)
{
    char line[256], model[128] = "unknown CPU";
    struct utsname name;
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");

    while (cpuinfo != NULL && fgets(line, sizeof line, cpuinfo) != NULL) {
        char *colon = strchr(line, ':');

        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (cpuinfo != NULL) {
        fclose(cpuinfo);
    }
    if (uname(&name) != 0) {
        snprintf(name.sysname, sizeof name.sysname, "?");
        snprintf(name.release, sizeof name.release, "?");
    }
    snprintf(out, size, "%s, %ld CPUs, %s %s", model,
             sysconf(_SC_NPROCESSORS_ONLN), name.sysname, name.release);
}

/* The file system of --dir: fsync on tmpfs costs nothing, so the write
 * rows mean little there. */
static const char *file_system(const char *dir)
{
    struct statfs fs;

    if (statfs(dir, &fs) != 0) {
        return "unknown file system";
    }
    switch ((unsigned long)fs.f_type) {
    case 0xEF53:
        return "ext4";
    case 0x01021994:
        return "tmpfs";
    case 0x58465342:
        return "xfs";
    case 0x9123683E:
        return "btrfs";
    case 0x794c7630:
        return "overlayfs";
    default:
        return "other file system";
    }
}

static void remove_files(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", ".wal"};
    char name[4096];
    size_t i;

    for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(name, sizeof name, "%.4000s%s", path, suffixes[i]);
        unlink(name);
    }
}

static int load_arm(struct bench_run *run, int arm_index, const char *sync)
{
    struct bench_arm *arm = &run->arms[arm_index];
    double t0 = bench_now_ns();
    char sql[64];
    int rc;

    rc = bench_create_schema(arm, arm_index == ARM_DUCKDB);
    if (rc == 0) {
        rc = arm->ops->load ? arm->ops->load(arm, run->n)
                            : bench_load_generic(arm, run->n);
    }
    if (rc == 0 && arm_index == ARM_SQLITE) {
        rc = arm->ops->exec(arm, "PRAGMA wal_checkpoint(TRUNCATE)");
    }
    if (rc == 0 && (arm_index == ARM_SINEW || arm_index == ARM_SINEW_INTERP)) {
        rc = arm->ops->exec(arm, "VACUUM");
    }
    if (rc == 0 && arm_index != ARM_DUCKDB) {
        snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", sync);
        rc = arm->ops->exec(arm, sql);
    }
    if (rc != 0) {
        fprintf(stderr, "bench_engine: loading %s: %s\n", arm->name,
                arm->error);
        return -1;
    }
    printf("loaded %s: %lld rows in t and b in %.2f s\n", arm->name,
           (long long)run->n, (bench_now_ns() - t0) / 1e9);
    return 0;
}

/* Loads one sinew arm's file, closes it after its VACUUM and opens it
 * again, so it starts from its main file as a restarted node would. */
static int open_sinew(struct bench_run *run, int index, const char *path,
                      const char *sync)
{
    struct bench_arm *arm = &run->arms[index];
    bool jit = index == ARM_SINEW;
    char sql[64];

    if (bench_sinew_open(arm, path, jit) != 0 ||
        load_arm(run, index, sync) != 0) {
        goto fail;
    }
    arm->ops->close(arm);
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", sync);
    if (bench_sinew_open(arm, path, jit) != 0 ||
        arm->ops->exec(arm, sql) != 0) {
        goto fail;
    }
    run->present[index] = true;
    return 0;
fail:
    fprintf(stderr, "bench_engine: %s: %s\n", arm->name, arm->error);
    return -1;
}

/* Opens and loads every arm, each on its own file. */
static int open_arms(struct bench_run *run, const struct options *options,
                     char *versions, size_t size)
{
    char path[BENCH_ARMS][4096];
    static const char *const names[BENCH_ARMS] = {"sinew", "sqlite", "duckdb",
                                                  "sinew-nojit"};
    int arm, rc;

    for (arm = 0; arm < BENCH_ARMS; arm++) {
        snprintf(path[arm], sizeof path[arm], "%s/engine-%lld.%s", options->dir,
                 (long long)run->n, names[arm]);
        remove_files(path[arm]);
    }
    if (open_sinew(run, ARM_SINEW, path[ARM_SINEW], options->sync) != 0 ||
        open_sinew(run, ARM_SINEW_INTERP, path[ARM_SINEW_INTERP],
                   options->sync) != 0) {
        return -1;
    }
    if (bench_sqlite_open(&run->arms[ARM_SQLITE], path[ARM_SQLITE],
                          options->cache_mib) != 0 ||
        load_arm(run, ARM_SQLITE, options->sync) != 0) {
        fprintf(stderr, "bench_engine: SQLite: %s\n",
                run->arms[ARM_SQLITE].error);
        return -1;
    }
    run->present[ARM_SQLITE] = true;
    rc = bench_duckdb_open(&run->arms[ARM_DUCKDB], options->duckdb,
                           path[ARM_DUCKDB]);
    if (rc == 0 && load_arm(run, ARM_DUCKDB, options->sync) != 0) {
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "bench_engine: DuckDB: %s\n",
                run->arms[ARM_DUCKDB].error);
        return -1;
    }
    run->present[ARM_DUCKDB] = rc == 0;
    if (rc == 0) {
        snprintf(versions, size,
                 "sinew with its JIT on and off (PRAGMA jit = off), a handle "
                 "and file each; C SQLite %s (WAL, cache %d MiB); DuckDB %s "
                 "(1 thread); synchronous=%s; files on %s",
                 run->arms[ARM_SQLITE].version, options->cache_mib,
                 run->arms[ARM_DUCKDB].version, options->sync,
                 file_system(options->dir));
    } else {
        printf("DuckDB absent (%s): its column stays empty; install it with "
               "`make bench-engine` or pass --duckdb\n",
               run->arms[ARM_DUCKDB].error);
        snprintf(versions, size,
                 "sinew with its JIT on and off (PRAGMA jit = off), a handle "
                 "and file each; C SQLite %s (WAL, cache %d MiB); DuckDB "
                 "absent; synchronous=%s; files on %s",
                 run->arms[ARM_SQLITE].version, options->cache_mib,
                 options->sync, file_system(options->dir));
    }
    return 0;
}

static void close_arms(struct bench_run *run)
{
    int arm;

    for (arm = 0; arm < BENCH_ARMS; arm++) {
        if (run->arms[arm].handle != NULL) {
            run->arms[arm].ops->close(&run->arms[arm]);
        }
    }
}

static int prepare_shape(struct bench_run *run, const struct bench_shape *shape,
                         void *stmts[BENCH_ARMS])
{
    int arm;

    /* All cleared first: on a failure the caller finalizes what is set. */
    for (arm = 0; arm < BENCH_ARMS; arm++) {
        stmts[arm] = NULL;
    }
    for (arm = 0; arm < BENCH_ARMS; arm++) {
        if (!run->present[arm]) {
            continue;
        }
        if (run->arms[arm].ops->prepare(
                &run->arms[arm], bench_arm_sql(shape, arm), &stmts[arm]) != 0) {
            fprintf(stderr, "bench_engine: #%s in %s: %s\n", shape->id,
                    run->arms[arm].name, run->arms[arm].error);
            return -1;
        }
    }
    return 0;
}

static void finalize_shape(struct bench_run *run, void *stmts[BENCH_ARMS])
{
    int arm;

    for (arm = 0; arm < BENCH_ARMS; arm++) {
        if (stmts[arm] != NULL) {
            run->arms[arm].ops->finalize(stmts[arm]);
        }
    }
}

/* Checks one shape in every arm and notes whether the JIT served the
 * JIT-on arm's last check run; a shape marked jit_expected that it did
 * not serve gets a warning (the JIT's reach, not a wrong answer). */
static int check_shape(struct bench_run *run, int index,
                       struct bench_result *result)
{
    const struct bench_shape *shape = &bench_shapes[index];
    void *stmts[BENCH_ARMS];
    int rc;

    memset(result, 0, sizeof *result);
    result->shape = shape;
    rc = prepare_shape(run, shape, stmts);
    if (rc == 0) {
        rc = bench_check_shape(run, shape, stmts, index);
    }
    if (rc == 0) {
        result->jit_served = bench_sinew_jit_served(stmts[ARM_SINEW]);
        if (shape->jit_expected && strcmp(result->jit_served, "no") == 0) {
            fprintf(stderr,
                    "bench_engine: warning: #%s %s is expected to run "
                    "through the JIT, but the JIT did not serve it\n",
                    shape->id, shape->name);
        }
    }
    finalize_shape(run, stmts);
    return rc;
}

/* Check every selected shape, then time them in order: reads, single-row
 * writes, bulk writes (the writes change the tables, so they come last). */
static int measure(struct bench_run *run, const struct options *options,
                   struct bench_result *results, size_t *count)
{
    void *stmts[BENCH_ARMS];
    size_t i, timed;
    int arm, rc = 0;

    *count = 0;
    for (i = 0; i < bench_shape_count && rc == 0; i++) {
        if (selected(options, &bench_shapes[i])) {
            rc = check_shape(run, (int)i, &results[(*count)++]);
        }
    }
    if (rc != 0) {
        return rc;
    }
    for (timed = 0; timed < *count; timed++) {
        struct bench_result *result = &results[timed];

        i = (size_t)(result->shape - bench_shapes);
        if (prepare_shape(run, result->shape, stmts) != 0) {
            return -1;
        }
        for (arm = 0; arm < BENCH_ARMS; arm++) {
            if (!run->present[arm]) {
                continue;
            }
            if (bench_time_shape(run, arm, result->shape, stmts[arm], (int)i,
                                 &result->arm[arm]) != 0) {
                fprintf(stderr, "bench_engine: timing #%s in %s: %s\n",
                        result->shape->id, run->arms[arm].name,
                        run->arms[arm].error);
                finalize_shape(run, stmts);
                return -1;
            }
        }
        finalize_shape(run, stmts);
        fprintf(stderr, "timed #%s\n", result->shape->id);
    }
    return 0;
}

static int write_outputs(const struct bench_report *report, const char *dir)
{
    char path[4096];
    FILE *md;
    int rc;

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_engine: mkdir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/engine-%lld.md", dir,
             (long long)report->rows);
    md = fopen(path, "w");
    rc = md == NULL ? -1 : bench_write_markdown(report, md);
    if (md != NULL && fclose(md) != 0) {
        rc = -1;
    }
    snprintf(path, sizeof path, "%s/engine-%lld.csv", dir,
             (long long)report->rows);
    if (rc == 0) {
        rc = bench_write_csv(report, path);
    }
    snprintf(path, sizeof path, "%s/engine-%lld.svg", dir,
             (long long)report->rows);
    if (rc == 0) {
        rc = bench_write_svg(report, path);
    }
    if (rc != 0) {
        fprintf(stderr, "bench_engine: writing %s: %s\n", path,
                strerror(errno));
    }
    return rc;
}

static int one_count(const struct options *options, int64_t n,
                     const char *machine)
{
    struct bench_run run = {.n = n,
                            .budget_ns = options->budget_ns,
                            .check_budget_ns = options->check_budget_ns};
    struct bench_result results[64];
    struct bench_report report = {.rows = n, .machine = machine};
    char versions[512], jit_stats[256] = "";
    double t0 = bench_now_ns();
    size_t count = 0;
    int rc;

    printf("== %lld rows ==\n", (long long)n);
    if (mkdir(options->dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_engine: mkdir %s: %s\n", options->dir,
                strerror(errno));
        return -1;
    }
    rc = open_arms(&run, options, versions, sizeof versions);
    if (rc == 0) {
        rc = measure(&run, options, results, &count);
    }
    if (rc == 0) {
        bench_sinew_jit_stats(&run.arms[ARM_SINEW], jit_stats,
                              sizeof jit_stats);
    }
    close_arms(&run);
    if (rc != 0) {
        return rc;
    }
    report.versions = versions;
    report.results = results;
    report.count = count;
    report.jit_stats = jit_stats;
    report.wall_s = (bench_now_ns() - t0) / 1e9;
    printf("\n");
    bench_write_markdown(&report, stdout);
    return write_outputs(&report, options->out);
}

int main(int argc, char **argv)
{
    struct options options;
    char machine[512];
    const char *at;
    int rc = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_options(argc, argv, &options);
    describe_machine(machine, sizeof machine);
    printf("bench_engine: %s\n", machine);
    for (at = options.rows; rc == 0 && *at != '\0';) {
        char *end;
        long long n = strtoll(at, &end, 10);

        if (end == at || n < 1000 || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "bench_engine: --rows wants numbers >= 1000\n");
            return 2;
        }
        rc = one_count(&options, n, machine);
        at = *end == ',' ? end + 1 : end;
    }
    return rc == 0 ? 0 : 1;
}
