/* SPDX-License-Identifier: MIT
 *
 * bench_storage: sinew's durable storage against C SQLite, same machine,
 * same run, same data, same files directory. Workloads (issue 4):
 *
 *   bulk insert    N rows in one transaction, then COMMIT (synced)
 *   autocommit     single-row INSERTs, each its own transaction, under
 *                  PRAGMA synchronous FULL and NORMAL; and NORMAL from 4
 *                  threads, each with its own handle on the file (sinew's
 *                  group commit; SQLite's NORMAL does not sync at commit)
 *   reopen         opening the N-row database and reading one row
 *   rowid lookup   SELECT ... WHERE id = ? (INTEGER PRIMARY KEY), random ids
 *   index lookup   SELECT ... WHERE k = ? through CREATE INDEX t_k ON t(k)
 *
 * SQLite runs in WAL mode (journal_mode=WAL) with the same synchronous
 * setting, prepared statements, default page cache. Every lookup's results
 * are summed on both sides and must agree, or the run fails. Times are the
 * median of --repeat runs (wall clock, CLOCK_MONOTONIC); the ratio is sinew
 * over SQLite, so below 1 is sinew faster.
 *
 * Usage: bench_storage [--rows N] [--commits N] [--lookups N] [--repeat N]
 *                      [--dir DIR]
 */
#define _GNU_SOURCE /* statfs */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

struct options {
    int64_t rows;
    int64_t commits;
    int64_t lookups;
    int repeat;
    const char *dir;
};

/* One engine behind the same five calls. */
struct side {
    const char *name;
    void *db;
    int (*open)(struct side *side, const char *path);
    void (*close)(struct side *side);
    void (*exec)(struct side *side, const char *sql);
    /* Runs sql (one '?' bound to each of values[0..count)) and returns the
     * sum of the first column of every row. */
    int64_t (*run)(struct side *side, const char *sql, const int64_t *values,
                   int64_t count);
    /* Inserts rows [first, first + count) of the data set. */
    void (*insert)(struct side *side, int64_t first, int64_t count);
    /* Makes a write wait up to timeout_ms for another handle's lock. */
    void (*busy_timeout)(struct side *side, int timeout_ms);
};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_storage: %s: %s\n", what, detail);
    exit(1);
}

/* The data set: row i has id i + 1, k a pseudo-random key with about ten
 * rows per value, v a short text. */
static int64_t row_key(int64_t i, int64_t rows)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15u;

    return (int64_t)((x >> 17) % (uint64_t)(rows / 10 + 1));
}

static void row_text(int64_t i, char *out, size_t size)
{
    snprintf(out, size, "value-%" PRId64 "-%s", i, i % 3 ? "north" : "south");
}

/* ---- sinew ---- */

static int sinew_open(struct side *side, const char *path)
{
    return engine_open(path, (struct engine_db **)&side->db);
}

static void sinew_close(struct side *side)
{
    engine_close(side->db);
    side->db = NULL;
}

static void sinew_exec(struct side *side, const char *sql)
{
    if (engine_exec(side->db, sql, NULL, NULL) != 0) {
        die(sql, engine_errmsg(side->db));
    }
}

static struct engine_stmt *sinew_prepare(struct side *side, const char *sql)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(side->db, sql, -1, &stmt, NULL) != 0) {
        die(sql, engine_errmsg(side->db));
    }
    return stmt;
}

static int64_t sinew_run(struct side *side, const char *sql,
                         const int64_t *values, int64_t count)
{
    struct engine_stmt *stmt = sinew_prepare(side, sql);
    int64_t sum = 0;
    int rc;

    for (int64_t i = 0; i < count; i++) {
        engine_bind_int64(stmt, 1, values[i]);
        while ((rc = engine_step(stmt)) == ENGINE_ROW) {
            sum += engine_column_int64(stmt, 0);
        }
        if (rc != ENGINE_DONE) {
            die(sql, engine_errmsg(side->db));
        }
        engine_reset(stmt);
    }
    engine_finalize(stmt);
    return sum;
}

static void sinew_insert(struct side *side, int64_t first, int64_t count)
{
    struct engine_stmt *stmt =
        sinew_prepare(side, "INSERT INTO t(id, k, v) VALUES(?, ?, ?)");
    char text[64];

    for (int64_t i = first; i < first + count; i++) {
        row_text(i, text, sizeof(text));
        engine_bind_int64(stmt, 1, i + 1);
        engine_bind_int64(stmt, 2, row_key(i, first + count));
        engine_bind_text(stmt, 3, text, -1);
        if (engine_step(stmt) != ENGINE_DONE) {
            die("insert", engine_errmsg(side->db));
        }
        engine_reset(stmt);
    }
    engine_finalize(stmt);
}

static void sinew_busy_timeout(struct side *side, int timeout_ms)
{
    engine_busy_timeout(side->db, timeout_ms);
}

/* ---- SQLite ---- */

static int sqlite_open(struct side *side, const char *path)
{
    return sqlite3_open(path, (sqlite3 **)&side->db);
}

static void sqlite_close(struct side *side)
{
    sqlite3_close(side->db);
    side->db = NULL;
}

static void sqlite_exec(struct side *side, const char *sql)
{
    if (sqlite3_exec(side->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        die(sql, sqlite3_errmsg(side->db));
    }
}

static sqlite3_stmt *sqlite_prepare(struct side *side, const char *sql)
{
    sqlite3_stmt *stmt = NULL;

    if (sqlite3_prepare_v2(side->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        die(sql, sqlite3_errmsg(side->db));
    }
    return stmt;
}

static int64_t sqlite_run(struct side *side, const char *sql,
                          const int64_t *values, int64_t count)
{
    sqlite3_stmt *stmt = sqlite_prepare(side, sql);
    int64_t sum = 0;
    int rc;

    for (int64_t i = 0; i < count; i++) {
        sqlite3_bind_int64(stmt, 1, values[i]);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            sum += sqlite3_column_int64(stmt, 0);
        }
        if (rc != SQLITE_DONE) {
            die(sql, sqlite3_errmsg(side->db));
        }
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return sum;
}

static void sqlite_insert(struct side *side, int64_t first, int64_t count)
{
    sqlite3_stmt *stmt =
        sqlite_prepare(side, "INSERT INTO t(id, k, v) VALUES(?, ?, ?)");
    char text[64];

    for (int64_t i = first; i < first + count; i++) {
        row_text(i, text, sizeof(text));
        sqlite3_bind_int64(stmt, 1, i + 1);
        sqlite3_bind_int64(stmt, 2, row_key(i, first + count));
        sqlite3_bind_text(stmt, 3, text, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(stmt) != SQLITE_DONE) {
            die("insert", sqlite3_errmsg(side->db));
        }
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
}

static void sqlite_busy_timeout(struct side *side, int timeout_ms)
{
    sqlite3_busy_timeout(side->db, timeout_ms);
}

/* ---- the workloads ---- */

static void path_for(const struct options *options, const struct side *side,
                     const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s-%s.db", options->dir, side->name, name);
}

static void remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-tmp",
                                           "-journal"};
    char file[4200];

    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(file, sizeof(file), "%s%s", path, suffixes[i]);
        unlink(file);
    }
}

static void open_fresh(struct side *side, const char *path, const char *sync)
{
    char sql[128];

    remove_db(path);
    if (side->open(side, path) != 0) {
        die("open", path);
    }
    snprintf(sql, sizeof(sql),
             "PRAGMA journal_mode = WAL; PRAGMA synchronous "
             "= %s",
             sync);
    side->exec(side, sql);
    side->exec(side, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v "
                     "TEXT)");
}

static double time_bulk(struct side *side, const struct options *options)
{
    char path[4096];
    double start;

    path_for(options, side, "bulk", path, sizeof(path));
    open_fresh(side, path, "FULL");
    start = now_ms();
    side->exec(side, "BEGIN");
    side->insert(side, 0, options->rows);
    side->exec(side, "COMMIT");
    return now_ms() - start;
}

static double time_autocommit(struct side *side, const struct options *options,
                              const char *sync)
{
    char path[4096];
    double start, elapsed;

    path_for(options, side, "autocommit", path, sizeof(path));
    open_fresh(side, path, sync);
    start = now_ms();
    side->insert(side, 0, options->commits);
    elapsed = now_ms() - start;
    side->close(side);
    remove_db(path);
    return elapsed;
}

#define THREADS 4

struct writer {
    struct side side; /* a handle of its own */
    const char *path;
    const char *sync;
    int64_t first;
    int64_t count;
};

static void *writer_main(void *arg)
{
    struct writer *writer = arg;
    char sql[64];

    if (writer->side.open(&writer->side, writer->path) != 0) {
        die("open", writer->path);
    }
    writer->side.busy_timeout(&writer->side, 60000);
    snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s", writer->sync);
    writer->side.exec(&writer->side, sql);
    writer->side.insert(&writer->side, writer->first, writer->count);
    writer->side.close(&writer->side);
    return NULL;
}

/* Autocommit inserts from THREADS threads at once, each on its own handle,
 * the rows split between them. */
static double time_threads(struct side *side, const struct options *options,
                           const char *sync)
{
    struct writer writers[THREADS];
    pthread_t threads[THREADS];
    char path[4096];
    int64_t share = options->commits / THREADS;
    double start, elapsed;

    path_for(options, side, "threads", path, sizeof(path));
    open_fresh(side, path, sync);
    start = now_ms();
    for (int i = 0; i < THREADS; i++) {
        writers[i] = (struct writer){*side, path, sync, i * share, share};
        writers[i].side.db = NULL;
        if (pthread_create(&threads[i], NULL, writer_main, &writers[i]) != 0) {
            die("pthread_create", strerror(errno));
        }
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
    }
    elapsed = now_ms() - start;
    if (side->run(side, "SELECT count(*) FROM t WHERE id > ?", &(int64_t){0},
                  1) != share * THREADS) {
        die("threads", "rows are missing");
    }
    side->close(side);
    remove_db(path);
    return elapsed;
}

static double time_reopen(struct side *side, const struct options *options)
{
    char path[4096];
    int64_t one = 1;
    double start;

    side->close(side);
    path_for(options, side, "bulk", path, sizeof(path));
    start = now_ms();
    if (side->open(side, path) != 0) {
        die("reopen", path);
    }
    (void)side->run(side, "SELECT k FROM t WHERE id = ?", &one, 1);
    return now_ms() - start;
}

static double time_lookups(struct side *side, const char *sql,
                           const int64_t *keys, int64_t count, int64_t *sum)
{
    double start = now_ms();

    *sum = side->run(side, sql, keys, count);
    return now_ms() - start;
}

#define WORKLOADS 8

static const char *const workload_names[WORKLOADS] = {
    "bulk insert (one transaction)",
    "autocommit insert, synchronous=FULL",
    "autocommit insert, synchronous=NORMAL",
    "autocommit insert, 4 threads, synchronous=NORMAL",
    "reopen",
    "rowid point lookup",
    "index equality lookup",
    "index build (CREATE INDEX)",
};

/* One full pass of every workload on one side; lookup sums for checking. */
static void run_side(struct side *side, const struct options *options,
                     const int64_t *ids, const int64_t *keys, double *times,
                     int64_t *sums)
{
    double start;

    times[0] = time_bulk(side, options);
    side->close(side);
    times[1] = time_autocommit(side, options, "FULL");
    times[2] = time_autocommit(side, options, "NORMAL");
    times[3] = time_threads(side, options, "NORMAL");
    times[4] = time_reopen(side, options);
    times[5] = time_lookups(side, "SELECT k FROM t WHERE id = ?", ids,
                            options->lookups, &sums[0]);
    start = now_ms();
    side->exec(side, "CREATE INDEX t_k ON t(k)");
    times[7] = now_ms() - start;
    times[6] = time_lookups(side, "SELECT id FROM t WHERE k = ?", keys,
                            options->lookups, &sums[1]);
    side->close(side);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof(*values), compare_doubles);
    return values[count / 2];
}

static void parse_options(int argc, char **argv, struct options *options)
{
    *options = (struct options){.rows = 1000000,
                                .commits = 1000,
                                .lookups = 100000,
                                .repeat = 3,
                                .dir = "bench-data"};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (value == NULL) {
            die("missing value for", argv[i]);
        } else if (strcmp(argv[i], "--rows") == 0) {
            options->rows = strtoll(value, NULL, 10);
        } else if (strcmp(argv[i], "--commits") == 0) {
            options->commits = strtoll(value, NULL, 10);
        } else if (strcmp(argv[i], "--lookups") == 0) {
            options->lookups = strtoll(value, NULL, 10);
        } else if (strcmp(argv[i], "--repeat") == 0) {
            options->repeat = atoi(value);
        } else if (strcmp(argv[i], "--dir") == 0) {
            options->dir = value;
        } else {
            die("unknown option", argv[i]);
        }
        i++;
    }
    if (options->rows < 10 || options->commits < 1 || options->lookups < 1 ||
        options->repeat < 1 || options->repeat > 99) {
        die("options", "--rows >= 10, --commits/--lookups >= 1, "
                       "--repeat 1..99");
    }
}

static const char *filesystem(const char *dir)
{
    struct statfs fs;

    if (statfs(dir, &fs) != 0) {
        return "unknown";
    }
    switch ((unsigned long)fs.f_type) {
    case 0x01021994:
        return "tmpfs (fsync costs nothing: sync numbers are not a disk's)";
    case 0xEF53:
        return "ext4";
    case 0x794c7630:
        return "overlayfs";
    case 0x58465342:
        return "xfs";
    case 0x9123683E:
        return "btrfs";
    default:
        return "other";
    }
}

static void print_table(const struct options *options,
                        double times[2][99][WORKLOADS])
{
    printf("\n| workload | sinew ms | SQLite ms | ratio |\n");
    printf("| --- | ---: | ---: | ---: |\n");
    for (int w = 0; w < WORKLOADS; w++) {
        double medians[2];

        for (int s = 0; s < 2; s++) {
            double values[99];

            for (int r = 0; r < options->repeat; r++) {
                values[r] = times[s][r][w];
            }
            medians[s] = median(values, options->repeat);
        }
        printf("| %s | %.1f | %.1f | %.2f |\n", workload_names[w], medians[0],
               medians[1], medians[0] / medians[1]);
    }
}

int main(int argc, char **argv)
{
    struct options options;
    struct side sides[2] = {
        {"sinew", NULL, sinew_open, sinew_close, sinew_exec, sinew_run,
         sinew_insert, sinew_busy_timeout},
        {"sqlite", NULL, sqlite_open, sqlite_close, sqlite_exec, sqlite_run,
         sqlite_insert, sqlite_busy_timeout},
    };
    static double times[2][99][WORKLOADS];
    int64_t *ids, *keys, sums[2][2];

    parse_options(argc, argv, &options);
    if (mkdir(options.dir, 0755) != 0 && errno != EEXIST) {
        die("mkdir", options.dir);
    }
    ids = malloc((size_t)options.lookups * sizeof(*ids));
    keys = malloc((size_t)options.lookups * sizeof(*keys));
    if (ids == NULL || keys == NULL) {
        die("malloc", "out of memory");
    }
    for (int64_t i = 0; i < options.lookups; i++) {
        ids[i] = row_key(i * 7 + 3, options.rows * 10) % options.rows + 1;
        keys[i] = row_key(i * 5 + 1, options.rows);
    }
    printf("bench_storage: %" PRId64 " rows, %" PRId64 " autocommit inserts, "
           "%" PRId64 " lookups, median of %d; SQLite %s; files in %s (%s)\n",
           options.rows, options.commits, options.lookups, options.repeat,
           sqlite3_libversion(), options.dir, filesystem(options.dir));
    for (int r = 0; r < options.repeat; r++) {
        for (int s = 0; s < 2; s++) {
            run_side(&sides[s], &options, ids, keys, times[s][r], sums[s]);
        }
        if (sums[0][0] != sums[1][0] || sums[0][1] != sums[1][1]) {
            die("results differ", "sinew and SQLite disagree on a lookup");
        }
    }
    print_table(&options, times);
    for (int s = 0; s < 2; s++) {
        char path[4096];

        path_for(&options, &sides[s], "bulk", path, sizeof(path));
        remove_db(path);
    }
    free(ids);
    free(keys);
    return 0;
}
