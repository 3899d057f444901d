/* SPDX-License-Identifier: MIT
 *
 * bench_replication: the crdt core in one process (issue 6), through its
 * internal API (replication/src/crdt.h, changeset_codec.h). Measurements,
 * each in a table of its own, each result checked before it is printed:
 *
 *   merge     a receiver holding --rows rows (with their registers) merges
 *             change sets from another site that update 4 columns of
 *             existing rows: --sets sets of --set-rows rows, then
 *             --large-sets sets of --large-rows rows. Reported in cells/s
 *             (a cell is one SET record), beside C SQLite applying the same
 *             updates (UPDATE by primary key, one transaction per set).
 *   capture   local commits on an engine database with the crdt state open
 *             (commit hook, registers, change log) against the same
 *             database without it: --commits single-row INSERTs, as many
 *             single-row UPDATEs, --commits / 10 transactions of 100-row
 *             INSERTs; on a file and in memory. Reported as the overhead.
 *   catchup   a node that missed --catchup single-row transactions applies
 *             them all: from decoded change sets (replication__crdt_apply)
 *             and from the change log's encoded chunks through the
 *             reassembler, as the network path receives them.
 *
 * Setup. Every crdt node gets a fixed site id and an HLC over one fake
 * physical clock shared by all nodes (it advances a millisecond every 64
 * reads), so runs are repeatable and no change set is ever stamped ahead of
 * its receiver. Rows and updates come from a seeded generator (--seed): the
 * n-th update of a run writes row 1 + (seed + n) * P mod rows (P prime, so
 * the rows of one set are distinct) with values derived from n. The
 * receiver's rows reach it the way a replica's would: the writer commits
 * them (captured, in transactions of LOAD_BATCH_ROWS rows) and the
 * receiver merges the writer's change log. The writer is also the site
 * that makes the updates; its change sets are read back with
 * replication__crdt_log_since() and deep-copied before the timed apply.
 *
 * Files go to --dir with PRAGMA synchronous=OFF (SQLite too, in WAL mode):
 * these measurements are about the merge's own work, not the disk's sync;
 * bench_storage covers durable commits. The file system is printed.
 *
 * Checks: after every timed step the receiver's table must equal the
 * writer's (count and sums of every column), and SQLite's after the same
 * updates; a catch-up must leave every row and the writer's version in the
 * version vector, with nothing held back. Times are medians of --repeat
 * runs (CLOCK_MONOTONIC).
 *
 * Adding a measurement: a function taking the options and printing its
 * table, one line in measurements[] (its name is what --only selects).
 * The catch-up history (struct history) is built once by history_make()
 * so that another way of catching up (over loopback, once the network
 * sync exists) can replay the same chunks.
 *
 * Usage: bench_replication [--rows N] [--sets N] [--set-rows N]
 *                          [--large-sets N] [--large-rows N] [--commits N]
 *                          [--catchup N] [--repeat N] [--seed N]
 *                          [--dir DIR] [--only merge,capture,catchup]
 *                          [--clock wall|cpu]
 */
#define _GNU_SOURCE /* statfs */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "changeset_codec.h"
#include "crdt.h"
#include "engine.h"
#include "hlc.h"
#include "replication.h"

#define T0_MS UINT64_C(1764686000000)
#define CLOCK_READS_PER_MS 64
#define LOAD_BATCH_ROWS 10000
#define REPEAT_MAX 99
#define ROW_PRIME UINT64_C(2305843009213693951) /* 2^61 - 1 */
#define CRSQLITE_CHANGES_PER_S 50000 /* reported, not measured here */

static const char *const schema =
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c TEXT,"
    " d REAL)";

struct options {
    int64_t rows;
    int64_t sets;
    int64_t set_rows;
    int64_t large_sets;
    int64_t large_rows;
    int64_t commits;
    int64_t catchup;
    int repeat;
    uint64_t seed;
    const char *dir;
    const char *only;
};

/* One node: an engine database, with or without the crdt state. */
struct node {
    struct engine_db *db;
    struct hlc clock;
    struct replication__crdt *crdt; /* NULL: a plain engine database */
    uint8_t site_byte;
    char path[4096]; /* "" in memory */
};

/* A table's fingerprint: what every check compares. */
struct table_sum {
    int64_t count;
    int64_t a;
    int64_t b;
    int64_t c_size;
    double d;
};

/* One row's values: the load's row i, or the n-th update. */
struct row_values {
    int64_t id;
    int64_t a;
    int64_t b;
    char c[48];
    double d;
};

/* Change sets deep-copied out of a log, and the SET records among them. */
struct sets {
    struct replication__changeset **items;
    size_t count;
    size_t capacity;
    int64_t cells;
};

static uint64_t clock_reads;

/* What times are read from: CLOCK_MONOTONIC, or with --cpu the process's
 * CPU time (on a machine shared with other work, that one counts only
 * this program's; it leaves out waiting for the disk). */
static clockid_t timer = CLOCK_MONOTONIC;

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(timer, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_replication: %s: %s\n", what, detail);
    exit(1);
}

static void die_rc(const char *what, int rc)
{
    die(what, rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST
                  ? engine_strerror(rc)
                  : replication_strerror(rc));
}

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);

    if (p == NULL) {
        die("calloc", "out of memory");
    }
    return p;
}

/* ---- the data ---- */

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Row i (from 1) as first inserted. */
static void load_values(int64_t i, struct row_values *v)
{
    v->id = i;
    v->a = i;
    v->b = i % 1000;
    snprintf(v->c, sizeof(v->c), "row-%" PRId64, i);
    v->d = (double)i * 0.25;
}

/* The n-th update (from 0) of a run: which row, and its new a, b, c, d.
 * b and d are unique per n, so those columns always change. */
static void update_values(const struct options *o, uint64_t n,
                          struct row_values *v)
{
    uint64_t x = mix(o->seed ^ n);
    uint64_t rows = (uint64_t)o->rows; /* < 2^31: the product fits */
    uint64_t slot = ((o->seed + n) % rows) * (ROW_PRIME % rows) % rows;

    v->id = 1 + (int64_t)slot;
    v->a = (int64_t)(x % 1000000000u);
    v->b = -(int64_t)n - 1;
    snprintf(v->c, sizeof(v->c), "upd-%016" PRIx64, x);
    v->d = (double)n * 0.5 + 0.125;
}

/* ---- the fake clock and the nodes ---- */

static uint64_t fake_now_ms(void *ctx)
{
    (void)ctx;
    return T0_MS + clock_reads++ / CLOCK_READS_PER_MS;
}

static int fixed_site(void *ctx, uint8_t *out, size_t size)
{
    memset(out, ((struct node *)ctx)->site_byte, size);
    return 0;
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

static void exec(struct engine_db *db, const char *sql)
{
    if (engine_exec(db, sql, NULL, NULL) != 0) {
        die(sql, engine_errmsg(db));
    }
}

static struct engine_stmt *prepare(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(db, sql, -1, &stmt, NULL) != 0) {
        die(sql, engine_errmsg(db));
    }
    return stmt;
}

/* A fresh node: a new file in dir named name (NULL: in memory), the
 * schema, and the crdt state when site_byte is not 0. */
static void node_open(struct node *node, const struct options *o,
                      const char *name, uint8_t site_byte)
{
    struct hlc_config hc = {.clock = {.ctx = NULL, .now_ms = fake_now_ms},
                            .max_offset_ms = HLC_MAX_OFFSET_MS_DEFAULT};
    struct replication__crdt_config config;
    int rc;

    memset(node, 0, sizeof(*node));
    node->site_byte = site_byte;
    if (name != NULL) {
        snprintf(node->path, sizeof(node->path), "%s/%s.db", o->dir, name);
        remove_db(node->path);
    }
    if (engine_open(name ? node->path : NULL, &node->db) != 0) {
        die("open", name ? node->path : ":memory:");
    }
    exec(node->db, "PRAGMA synchronous = OFF");
    exec(node->db, schema);
    if (site_byte == 0) {
        return;
    }
    hlc_init(&node->clock, &hc);
    config = (struct replication__crdt_config){.db = node->db,
                                               .clock = &node->clock,
                                               .random_bytes = fixed_site,
                                               .random_ctx = node};
    rc = replication__crdt_open(&config, &node->crdt);
    if (rc != 0) {
        die_rc("replication__crdt_open", rc);
    }
}

static void node_close(struct node *node)
{
    replication__crdt_close(node->crdt);
    engine_close(node->db);
    if (node->path[0] != '\0') {
        remove_db(node->path);
    }
    memset(node, 0, sizeof(*node));
}

static struct table_sum table_sum(struct engine_db *db)
{
    struct engine_stmt *stmt =
        prepare(db, "SELECT count(*), sum(a), sum(b), sum(length(c)), "
                    "total(d) FROM t");
    struct table_sum sum;

    if (engine_step(stmt) != ENGINE_ROW) {
        die("table sum", engine_errmsg(db));
    }
    sum = (struct table_sum){
        engine_column_int64(stmt, 0), engine_column_int64(stmt, 1),
        engine_column_int64(stmt, 2), engine_column_int64(stmt, 3),
        engine_column_double(stmt, 4)};
    engine_finalize(stmt);
    return sum;
}

static bool sums_equal(const struct table_sum *x, const struct table_sum *y)
{
    return x->count == y->count && x->a == y->a && x->b == y->b &&
           x->c_size == y->c_size && x->d == y->d;
}

static void check_same(const char *what, struct engine_db *db,
                       struct engine_db *truth)
{
    struct table_sum x = table_sum(db), y = table_sum(truth);

    if (!sums_equal(&x, &y)) {
        fprintf(stderr,
                "bench_replication: %s: %" PRId64 " rows (sums %" PRId64
                ", %" PRId64 ") where %" PRId64 " (%" PRId64 ", %" PRId64
                ") were expected\n",
                what, x.count, x.a, x.b, y.count, y.a, y.b);
        exit(1);
    }
}

static int64_t query_int(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = prepare(db, sql);
    int64_t value;

    if (engine_step(stmt) != ENGINE_ROW) {
        die(sql, engine_errmsg(db));
    }
    value = engine_column_int64(stmt, 0);
    engine_finalize(stmt);
    return value;
}

/* node's version vector entry for the site made of origin_byte. */
static int64_t vv_head(struct node *node, uint8_t origin_byte)
{
    char sql[160];
    int at = snprintf(sql, sizeof(sql),
                      "SELECT coalesce(max(head), 0) FROM sinew_crdt_vv"
                      " WHERE hex(site) = '");

    for (int i = 0; i < 16; i++) {
        at += snprintf(sql + at, sizeof(sql) - (size_t)at, "%02X", origin_byte);
    }
    snprintf(sql + at, sizeof(sql) - (size_t)at, "'");
    return query_int(node->db, sql);
}

static void bind_row(struct engine_stmt *stmt, const struct row_values *v,
                     bool update)
{
    int first = update ? 1 : 2;

    engine_bind_int64(stmt, update ? 5 : 1, v->id);
    engine_bind_int64(stmt, first, v->a);
    engine_bind_int64(stmt, first + 1, v->b);
    engine_bind_text(stmt, first + 2, v->c, -1);
    engine_bind_double(stmt, first + 3, v->d);
}

static void step_done(struct engine_db *db, struct engine_stmt *stmt)
{
    if (engine_step(stmt) != ENGINE_DONE) {
        die(engine_sql(stmt), engine_errmsg(db));
    }
    engine_reset(stmt);
}

/* Inserts the load's rows [first, first + count), one transaction of
 * batch rows at a time (batch 1: autocommit). */
static void insert_rows(struct engine_db *db, int64_t first, int64_t count,
                        int64_t batch)
{
    struct engine_stmt *stmt =
        prepare(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
    struct row_values v;

    for (int64_t i = first; i < first + count; i++) {
        if (batch > 1 && (i - first) % batch == 0) {
            exec(db, "BEGIN");
        }
        load_values(i, &v);
        bind_row(stmt, &v, false);
        step_done(db, stmt);
        if (batch > 1 &&
            ((i - first) % batch == batch - 1 || i == first + count - 1)) {
            exec(db, "COMMIT");
        }
    }
    engine_finalize(stmt);
}

/* The updates [n, n + sets * set_rows), one transaction per set. */
static void update_rows(struct engine_db *db, const struct options *o,
                        uint64_t n, int64_t sets, int64_t set_rows)
{
    struct engine_stmt *stmt =
        prepare(db, "UPDATE t SET a = ?1, b = ?2, c = ?3, d = ?4"
                    " WHERE id = ?5");
    struct row_values v;

    for (int64_t s = 0; s < sets; s++) {
        exec(db, "BEGIN");
        for (int64_t j = 0; j < set_rows; j++, n++) {
            update_values(o, n, &v);
            bind_row(stmt, &v, true);
            step_done(db, stmt);
        }
        exec(db, "COMMIT");
    }
    engine_finalize(stmt);
}

/* ---- change sets out of a log ---- */

static int collect_cb(void *ctx, const struct replication__changeset *cs)
{
    struct sets *sets = ctx;
    int rc;

    if (sets->count == sets->capacity) {
        sets->capacity = sets->capacity ? 2 * sets->capacity : 1024;
        sets->items =
            realloc(sets->items, sets->capacity * sizeof(*sets->items));
        if (sets->items == NULL) {
            die("realloc", "out of memory");
        }
    }
    rc = replication__crdt_changeset_clone(cs, &sets->items[sets->count]);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < cs->record_count; i++) {
        sets->cells += cs->records[i].op == REPLICATION__OP_SET;
    }
    sets->count++;
    return 0;
}

/* Deep copies of node's local change sets above version after. */
static void collect(struct node *node, uint64_t after, struct sets *out)
{
    int rc;

    memset(out, 0, sizeof(*out));
    rc = replication__crdt_log_since(
        node->crdt, replication__crdt_site(node->crdt), after, collect_cb, out);
    if (rc != 0) {
        die_rc("replication__crdt_log_since", rc);
    }
}

static void sets_free(struct sets *sets)
{
    for (size_t i = 0; i < sets->count; i++) {
        replication__crdt_changeset_free(sets->items[i]);
    }
    free(sets->items);
    memset(sets, 0, sizeof(*sets));
}

static void apply(struct node *node, const struct replication__changeset *cs)
{
    int rc = replication__crdt_apply(node->crdt, cs);

    if (rc != 0) {
        fprintf(stderr, "bench_replication: apply version %" PRIu64 ": %s\n",
                cs->version, engine_errmsg(node->db));
        die_rc("replication__crdt_apply", rc);
    }
}

/* Applies every set in order; the milliseconds it took. */
static double apply_all(struct node *node, const struct sets *sets)
{
    double start = now_ms();

    for (size_t i = 0; i < sets->count; i++) {
        apply(node, sets->items[i]);
    }
    return now_ms() - start;
}

static uint64_t last_version(const struct sets *sets, uint64_t otherwise)
{
    return sets->count > 0 ? sets->items[sets->count - 1]->version : otherwise;
}

/* ---- statistics and printing ---- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(const double *values, int count)
{
    double sorted[REPEAT_MAX];

    memcpy(sorted, values, (size_t)count * sizeof(*sorted));
    qsort(sorted, (size_t)count, sizeof(*sorted), compare_doubles);
    return sorted[count / 2];
}

static double per_second(double count, double ms)
{
    return ms > 0 ? count * 1e3 / ms : 0;
}

/* ==== merge: updates from another site into a large table ==== */

struct merge_run {
    const struct options *o;
    struct node writer;   /* site 0xaa: the rows' origin, then the updates */
    struct node receiver; /* site 0xbb */
    sqlite3 *sqlite;
    uint64_t shipped; /* the writer's versions the receiver has */
    uint64_t next;    /* the next update's n */
};

static void sqlite_exec(sqlite3 *db, const char *sql)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        die(sql, sqlite3_errmsg(db));
    }
}

static sqlite3_stmt *sqlite_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        die(sql, sqlite3_errmsg(db));
    }
    return stmt;
}

static void sqlite_bind_row(sqlite3_stmt *stmt, const struct row_values *v,
                            bool update)
{
    int first = update ? 1 : 2;

    sqlite3_bind_int64(stmt, update ? 5 : 1, v->id);
    sqlite3_bind_int64(stmt, first, v->a);
    sqlite3_bind_int64(stmt, first + 1, v->b);
    sqlite3_bind_text(stmt, first + 2, v->c, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(stmt, first + 3, v->d);
}

static void sqlite_step_done(sqlite3 *db, sqlite3_stmt *stmt)
{
    if (sqlite3_step(stmt) != SQLITE_DONE) {
        die("sqlite step", sqlite3_errmsg(db));
    }
    sqlite3_reset(stmt);
}

static sqlite3 *sqlite_load(const struct options *o)
{
    char path[4200];
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt;
    struct row_values v;

    snprintf(path, sizeof(path), "%s/merge-sqlite.db", o->dir);
    remove_db(path);
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        die("sqlite open", path);
    }
    sqlite_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF");
    sqlite_exec(db, schema);
    stmt = sqlite_prepare(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
    sqlite_exec(db, "BEGIN");
    for (int64_t i = 1; i <= o->rows; i++) {
        load_values(i, &v);
        sqlite_bind_row(stmt, &v, false);
        sqlite_step_done(db, stmt);
    }
    sqlite_exec(db, "COMMIT");
    sqlite3_finalize(stmt);
    return db;
}

/* SQLite applies the updates [n, n + sets * set_rows): one transaction per
 * set, UPDATE by primary key. The milliseconds it took. */
static double sqlite_updates(sqlite3 *db, const struct options *o, uint64_t n,
                             int64_t sets, int64_t set_rows)
{
    sqlite3_stmt *stmt = sqlite_prepare(
        db, "UPDATE t SET a = ?1, b = ?2, c = ?3, d = ?4 WHERE id = ?5");
    struct row_values v;
    double start = now_ms();

    for (int64_t s = 0; s < sets; s++) {
        sqlite_exec(db, "BEGIN");
        for (int64_t j = 0; j < set_rows; j++, n++) {
            update_values(o, n, &v);
            sqlite_bind_row(stmt, &v, true);
            sqlite_step_done(db, stmt);
        }
        sqlite_exec(db, "COMMIT");
    }
    start = now_ms() - start;
    sqlite3_finalize(stmt);
    return start;
}

static void check_sqlite(sqlite3 *db, struct engine_db *truth)
{
    sqlite3_stmt *stmt = sqlite_prepare(
        db, "SELECT count(*), sum(a), sum(b), sum(length(c)), total(d) FROM t");
    struct table_sum x, y = table_sum(truth);

    if (sqlite3_step(stmt) != SQLITE_ROW) {
        die("sqlite sum", sqlite3_errmsg(db));
    }
    x = (struct table_sum){
        sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1),
        sqlite3_column_int64(stmt, 2), sqlite3_column_int64(stmt, 3),
        sqlite3_column_double(stmt, 4)};
    sqlite3_finalize(stmt);
    if (!sums_equal(&x, &y)) {
        die("check", "SQLite and the crdt writer disagree after the updates");
    }
}

/* The writer commits the rows; the receiver merges its log. */
static void merge_setup(struct merge_run *run)
{
    const struct options *o = run->o;
    struct sets load;
    double start = now_ms(), captured, merged;

    node_open(&run->writer, o, "merge-writer", 0xaa);
    node_open(&run->receiver, o, "merge-receiver", 0xbb);
    insert_rows(run->writer.db, 1, o->rows, LOAD_BATCH_ROWS);
    captured = now_ms() - start;
    collect(&run->writer, 0, &load);
    merged = apply_all(&run->receiver, &load);
    run->shipped = last_version(&load, 0);
    check_same("receiver after the load", run->receiver.db, run->writer.db);
    printf("merge setup: the writer committed %" PRId64
           " rows (transactions of %d, captured) in %.1f s; the receiver "
           "merged its %zu change sets, %" PRId64 " cells, in %.1f s "
           "(%.0f cells/s)\n",
           o->rows, LOAD_BATCH_ROWS, captured / 1e3, load.count, load.cells,
           merged / 1e3, per_second((double)load.cells, merged));
    sets_free(&load);
    start = now_ms();
    run->sqlite = sqlite_load(o);
    printf("merge setup: SQLite loaded the same rows in %.1f s\n",
           (now_ms() - start) / 1e3);
}

/* One timed step: the writer makes sets of set_rows updates, the receiver
 * merges them, SQLite applies the same updates. */
static void merge_step(struct merge_run *run, int64_t sets, int64_t set_rows,
                       double *sinew_ms, double *sqlite_ms, int64_t *cells)
{
    struct sets batch;

    update_rows(run->writer.db, run->o, run->next, sets, set_rows);
    collect(&run->writer, run->shipped, &batch);
    if ((int64_t)batch.count != sets) {
        die("merge", "the writer's log lacks change sets");
    }
    *sinew_ms = apply_all(&run->receiver, &batch);
    *cells = batch.cells;
    run->shipped = last_version(&batch, run->shipped);
    check_same("receiver after the updates", run->receiver.db, run->writer.db);
    if (replication__crdt_held_count(run->receiver.crdt) != 0) {
        die("merge", "change sets were held back");
    }
    sets_free(&batch);
    *sqlite_ms = sqlite_updates(run->sqlite, run->o, run->next, sets, set_rows);
    check_sqlite(run->sqlite, run->writer.db);
    run->next += (uint64_t)(sets * set_rows);
}

static void print_merge_row(const char *what, const double *sinew_ms,
                            const double *sqlite_ms, int64_t cells, int repeat)
{
    double x = median(sinew_ms, repeat), y = median(sqlite_ms, repeat);

    printf("| %s | %" PRId64 " | %.1f | %.0f | %.1f | %.0f | %.2f |\n", what,
           cells, x, per_second((double)cells, x), y,
           per_second((double)cells, y), x / y);
}

static void run_merge(const struct options *o)
{
    struct merge_run run = {.o = o};
    double ms[4][REPEAT_MAX];
    int64_t cells[2] = {0, 0};
    char what[2][128];
    char path[4200];

    merge_setup(&run);
    for (int r = 0; r < o->repeat; r++) {
        merge_step(&run, o->sets, o->set_rows, &ms[0][r], &ms[1][r], &cells[0]);
        merge_step(&run, o->large_sets, o->large_rows, &ms[2][r], &ms[3][r],
                   &cells[1]);
    }
    snprintf(what[0], sizeof(what[0]),
             "%" PRId64 " sets of %" PRId64 " rows x 4 columns", o->sets,
             o->set_rows);
    snprintf(what[1], sizeof(what[1]),
             "%" PRId64 " sets of %" PRId64 " rows x 4 columns", o->large_sets,
             o->large_rows);
    printf("\nmerge: updates from another site into %" PRId64
           " rows, median of %d (goal: >= 1,000,000 cells/s; cr-sqlite "
           "reportedly merges ~%d changes/s on this machine class, not run "
           "here)\n\n",
           o->rows, o->repeat, CRSQLITE_CHANGES_PER_S);
    printf("| change sets | cells | sinew ms | sinew cells/s | SQLite ms | "
           "SQLite cells/s | ratio (time) |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    print_merge_row(what[0], ms[0], ms[1], cells[0], o->repeat);
    print_merge_row(what[1], ms[2], ms[3], cells[1], o->repeat);
    sqlite3_close(run.sqlite);
    snprintf(path, sizeof(path), "%s/merge-sqlite.db", o->dir);
    remove_db(path);
    node_close(&run.writer);
    node_close(&run.receiver);
}

/* ==== capture: local commits with and without the crdt state ==== */

#define CAPTURE_WORKLOADS 3
#define CAPTURE_BATCH_ROWS 100

static const char *const capture_names[CAPTURE_WORKLOADS] = {
    "single-row INSERT",
    "single-row UPDATE (2 columns)",
    "100-row INSERT transaction",
};

/* Single-row UPDATEs of a and c, autocommit, on rows [1, rows]. */
static void update_singles(struct engine_db *db, const struct options *o,
                           int64_t rows)
{
    struct engine_stmt *stmt =
        prepare(db, "UPDATE t SET a = ?1, c = ?2 WHERE id = ?3");
    struct row_values v;

    for (int64_t n = 0; n < o->commits; n++) {
        update_values(o, (uint64_t)n, &v);
        engine_bind_int64(stmt, 1, v.a);
        engine_bind_text(stmt, 2, v.c, -1);
        engine_bind_int64(stmt, 3,
                          1 + (int64_t)(mix((uint64_t)n) % (uint64_t)rows));
        step_done(db, stmt);
    }
    engine_finalize(stmt);
}

/* The three workloads on a fresh node; times[w] in ms. */
static void capture_side(const struct options *o, bool on_file, bool crdt,
                         double *times)
{
    int64_t batches = o->commits / 10;
    int64_t rows = o->commits + batches * CAPTURE_BATCH_ROWS;
    struct node node;
    double start;

    node_open(&node, o, on_file ? "capture" : NULL, crdt ? 0xcc : 0);
    start = now_ms();
    insert_rows(node.db, 1, o->commits, 1);
    times[0] = now_ms() - start;
    start = now_ms();
    update_singles(node.db, o, o->commits);
    times[1] = now_ms() - start;
    start = now_ms();
    insert_rows(node.db, o->commits + 1, batches * CAPTURE_BATCH_ROWS,
                CAPTURE_BATCH_ROWS);
    times[2] = now_ms() - start;
    if (query_int(node.db, "SELECT count(*) FROM t") != rows) {
        die("capture", "rows are missing");
    }
    if (crdt &&
        (query_int(node.db, "SELECT count(*) FROM sinew_crdt_row") != rows ||
         vv_head(&node, 0xcc) != 2 * o->commits + batches)) {
        die("capture", "the registers or the version lag the commits");
    }
    node_close(&node);
}

static void run_capture(const struct options *o)
{
    static double times[2][2][REPEAT_MAX][CAPTURE_WORKLOADS];
    int64_t counts[CAPTURE_WORKLOADS] = {o->commits, o->commits,
                                         o->commits / 10};

    for (int r = 0; r < o->repeat; r++) {
        for (int f = 0; f < 2; f++) {
            capture_side(o, f == 0, false, times[f][0][r]);
            capture_side(o, f == 0, true, times[f][1][r]);
        }
    }
    printf("\ncapture: local commits with the crdt state open against "
           "without, median of %d (goal: overhead <= 30%%)\n\n",
           o->repeat);
    printf("| workload | storage | commits | plain commits/s | crdt "
           "commits/s | overhead |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (int f = 0; f < 2; f++) {
        for (int w = 0; w < CAPTURE_WORKLOADS; w++) {
            double plain[REPEAT_MAX], crdt[REPEAT_MAX], x, y;

            for (int r = 0; r < o->repeat; r++) {
                plain[r] = times[f][0][r][w];
                crdt[r] = times[f][1][r][w];
            }
            x = median(plain, o->repeat);
            y = median(crdt, o->repeat);
            printf("| %s | %s | %" PRId64 " | %.0f | %.0f | %+.0f%% |\n",
                   capture_names[w],
                   f == 0 ? "file, synchronous=OFF" : "memory", counts[w],
                   per_second((double)counts[w], x),
                   per_second((double)counts[w], y), (y / x - 1) * 100);
        }
    }
}

/* ==== catch-up: a node that missed many small transactions ==== */

/* The encoded chunks of a log, copied. */
struct chunk_list {
    uint8_t **bytes;
    size_t *sizes;
    size_t count;
    size_t capacity;
};

/* What a lagging node must catch up on: the writer (its database and
 * log), its change sets decoded and its log's chunks as stored. */
struct history {
    struct node writer; /* site 0xaa */
    struct sets sets;
    struct chunk_list chunks;
};

static int chunk_cb(void *ctx, const uint8_t *bytes, size_t size)
{
    struct chunk_list *list = ctx;

    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 1024;
        list->bytes =
            realloc(list->bytes, list->capacity * sizeof(*list->bytes));
        list->sizes =
            realloc(list->sizes, list->capacity * sizeof(*list->sizes));
        if (list->bytes == NULL || list->sizes == NULL) {
            die("realloc", "out of memory");
        }
    }
    list->bytes[list->count] = xcalloc(size, 1);
    memcpy(list->bytes[list->count], bytes, size);
    list->sizes[list->count] = size;
    list->count++;
    return 0;
}

static void history_make(struct history *h, const struct options *o)
{
    double start = now_ms();
    int rc;

    memset(h, 0, sizeof(*h));
    node_open(&h->writer, o, "catchup-writer", 0xaa);
    insert_rows(h->writer.db, 1, o->catchup, 1);
    printf("catchup setup: the writer committed %" PRId64
           " single-row transactions in %.1f s\n",
           o->catchup, (now_ms() - start) / 1e3);
    collect(&h->writer, 0, &h->sets);
    rc = replication__crdt_log_bytes_since(
        h->writer.crdt, replication__crdt_site(h->writer.crdt), 0, chunk_cb,
        &h->chunks);
    if (rc != 0) {
        die_rc("replication__crdt_log_bytes_since", rc);
    }
    if ((int64_t)h->sets.count != o->catchup) {
        die("catchup", "the writer's log lacks change sets");
    }
}

static void history_free(struct history *h)
{
    for (size_t i = 0; i < h->chunks.count; i++) {
        free(h->chunks.bytes[i]);
    }
    free(h->chunks.bytes);
    free(h->chunks.sizes);
    sets_free(&h->sets);
    node_close(&h->writer);
}

/* The lagging node holds everything the writer does, and nothing waits. */
static void check_caught_up(struct node *node, const struct history *h)
{
    check_same("caught-up node", node->db, h->writer.db);
    if (vv_head(node, 0xaa) != (int64_t)h->sets.count ||
        replication__crdt_held_count(node->crdt) != 0) {
        die("catchup", "versions are missing or held back");
    }
}

/* Feeds the chunks to a reassembler and applies each set it completes. */
static double apply_chunks(struct node *node, const struct chunk_list *list)
{
    const struct replication__chunks_config config = {
        .bytes_max = REPLICATION__CHANGESET_BODY_MAX, .sets_max = 16};
    struct replication__chunks *chunks;
    struct replication__decoded *decoded;
    double start = now_ms();
    int rc = replication__chunks_create(&config, &chunks);

    for (size_t i = 0; rc == 0 && i < list->count; i++) {
        decoded = NULL;
        rc = replication__chunks_add(chunks, list->bytes[i], list->sizes[i],
                                     &decoded);
        if (rc == 0 && decoded != NULL) {
            apply(node, &decoded->set);
            replication__decoded_destroy(decoded);
        }
    }
    if (rc != 0) {
        die_rc("replication__chunks_add", rc);
    }
    replication__chunks_destroy(chunks);
    return now_ms() - start;
}

static void print_catchup_row(const char *what, const double *ms, int repeat,
                              int64_t count)
{
    double x = median(ms, repeat);

    printf("| %s | %" PRId64 " | %.0f | %.0f | %s |\n", what, count, x,
           per_second((double)count, x), x < 2000 ? "yes" : "no");
}

static void run_catchup(const struct options *o)
{
    struct history h;
    struct node node;
    double ms[2][REPEAT_MAX];

    history_make(&h, o);
    for (int r = 0; r < o->repeat; r++) {
        node_open(&node, o, "catchup-lagging", 0xbb);
        ms[0][r] = apply_all(&node, &h.sets);
        check_caught_up(&node, &h);
        node_close(&node);
        node_open(&node, o, "catchup-lagging", 0xbb);
        ms[1][r] = apply_chunks(&node, &h.chunks);
        check_caught_up(&node, &h);
        node_close(&node);
    }
    printf("\ncatchup: a node that missed %" PRId64
           " single-row transactions applies them, in process, median of %d "
           "(goal: < 2 s)\n\n",
           o->catchup, o->repeat);
    printf("| path | transactions | ms | transactions/s | under 2 s |\n");
    printf("| --- | ---: | ---: | ---: | --- |\n");
    print_catchup_row("decoded change sets, replication__crdt_apply", ms[0],
                      o->repeat, o->catchup);
    print_catchup_row("encoded chunks, reassembler + apply", ms[1], o->repeat,
                      o->catchup);
    history_free(&h);
}

/* ==== main ==== */

struct measurement {
    const char *name; /* as --only names it */
    void (*run)(const struct options *o);
};

static const struct measurement measurements[] = {
    {"merge", run_merge},
    {"capture", run_capture},
    {"catchup", run_catchup},
};

static bool selected(const struct options *o, const char *name)
{
    size_t size = strlen(name);
    const char *p = o->only;

    if (p == NULL) {
        return true;
    }
    for (; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (strncmp(p, name, size) == 0 && (p[size] == ',' || !p[size])) {
            return true;
        }
    }
    return false;
}

static int64_t parse_count(const char *option, const char *value)
{
    char *end;
    long long n = strtoll(value, &end, 10);

    if (*value == '\0' || *end != '\0' || n < 0) {
        die(option, "expects a count");
    }
    return (int64_t)n;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    static const char *const names[] = {
        "--rows",       "--sets",    "--set-rows", "--large-sets",
        "--large-rows", "--commits", "--catchup"};
    int64_t *counts[] = {&o->rows,       &o->sets,       &o->set_rows,
                         &o->large_sets, &o->large_rows, &o->commits,
                         &o->catchup};
    size_t k;

    *o = (struct options){1000000,     1000,         100,    4,
                          100000,      10000,        100000, 3,
                          UINT64_C(1), "bench-data", NULL};
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (value == NULL) {
            die("missing value for", argv[i]);
        }
        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            if (strcmp(argv[i], names[k]) == 0) {
                *counts[k] = parse_count(argv[i], value);
                break;
            }
        }
        if (k < sizeof(names) / sizeof(names[0])) {
            continue;
        } else if (strcmp(argv[i], "--repeat") == 0) {
            o->repeat = (int)parse_count(argv[i], value);
        } else if (strcmp(argv[i], "--seed") == 0) {
            o->seed = (uint64_t)parse_count(argv[i], value);
        } else if (strcmp(argv[i], "--dir") == 0) {
            o->dir = value;
        } else if (strcmp(argv[i], "--only") == 0) {
            o->only = value;
        } else if (strcmp(argv[i], "--clock") == 0 &&
                   (strcmp(value, "wall") == 0 || strcmp(value, "cpu") == 0)) {
            timer =
                value[0] == 'c' ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
        } else {
            die("unknown option", argv[i]);
        }
    }
    if (o->rows < 1 || o->rows > INT32_MAX || o->set_rows > o->rows ||
        o->large_rows > o->rows || o->sets < 1 || o->set_rows < 1 ||
        o->large_sets < 1 || o->large_rows < 1 || o->commits < 10 ||
        o->catchup < 1 || o->repeat < 1 || o->repeat > REPEAT_MAX) {
        die("options",
            "counts >= 1 (--commits >= 10), --rows < 2^31, set rows <= "
            "--rows, "
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
        return "tmpfs";
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

int main(int argc, char **argv)
{
    struct options o;

    parse_options(argc, argv, &o);
    if (mkdir(o.dir, 0755) != 0 && errno != EEXIST) {
        die("mkdir", o.dir);
    }
    printf("bench_replication: rows=%" PRId64 " sets=%" PRId64 "x%" PRId64
           " large=%" PRId64 "x%" PRId64 " commits=%" PRId64 " catchup=%" PRId64
           " repeat=%d seed=%" PRIu64
           "; files in %s (%s), synchronous=OFF; SQLite %s; %s\n",
           o.rows, o.sets, o.set_rows, o.large_sets, o.large_rows, o.commits,
           o.catchup, o.repeat, o.seed, o.dir, filesystem(o.dir),
           sqlite3_libversion(),
           timer == CLOCK_MONOTONIC ? "wall-clock times" : "process CPU times");
    fflush(stdout);
    for (size_t i = 0; i < sizeof(measurements) / sizeof(measurements[0]);
         i++) {
        if (selected(&o, measurements[i].name)) {
            measurements[i].run(&o);
            fflush(stdout);
        }
    }
    return 0;
}
