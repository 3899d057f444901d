/* SPDX-License-Identifier: MIT
 *
 * bench_engine.h: what the files of the engine benchmark (bench/engine)
 * share: the seeded generator, the shapes (musql's suite, reference
 * musql.md section 6), the arms (sinew with its JIT on and off, C SQLite,
 * DuckDB) behind one set of operations, and the report writers.
 * bench_engine.c runs them.
 */
#ifndef SINEW_BENCH_ENGINE_H
#define SINEW_BENCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- generator (gen.c) ---- */

#define BENCH_SEED 0x5eedULL

/* splitmix64: one 64-bit state; small, fast and well mixed, so every
 * engine's data and bind values come from one seed. */
struct bench_rng {
    uint64_t state;
};

void bench_rng_seed(struct bench_rng *rng, uint64_t seed);
uint64_t bench_rng_next(struct bench_rng *rng);
/* Uniform in [0, n) (n > 0), without modulo bias. */
int64_t bench_rng_intn(struct bench_rng *rng, int64_t n);

/* One row of t, drawn in musql's order: sec, k, v, bid. */
struct bench_row {
    int64_t id, sec, k, v, bid;
};
void bench_gen_row(struct bench_rng *rng, int64_t n, int64_t id,
                   struct bench_row *out);

/* ---- values bound to statements ---- */

#define BENCH_MAX_BINDS 6

struct bench_bind {
    int64_t integer;
    const char *text; /* not NULL: bound as text */
};

/* ---- rendered results (gen.c) ---- */

/* A result rendered type by type ("i:3|f:3.0|t:x|N", one line per row) for
 * the correctness check, or, when render is false, folded into sink so
 * the timed runs read every value without formatting it. */
struct bench_out {
    bool render;
    char *text;
    size_t len, cap;
    uint64_t sink;
};

int bench_out_append(struct bench_out *out, const char *bytes, size_t size);
int bench_out_int(struct bench_out *out, int64_t value);
int bench_out_real(struct bench_out *out, double value);
int bench_out_text(struct bench_out *out, const char *text, size_t size);
int bench_out_null(struct bench_out *out);
int bench_out_column_end(struct bench_out *out, bool last);
void bench_out_reset(struct bench_out *out);
void bench_out_free(struct bench_out *out);
/* Sorts the rendered lines (results whose order SQL leaves open). */
int bench_out_sort_lines(struct bench_out *out);

/* ---- shapes (shapes.c) ---- */

enum bench_kind {
    BENCH_READ,
    BENCH_WRITE,       /* one autocommit statement per run */
    BENCH_BULK_INSERT, /* BENCH_BULK_ROWS inserts in one transaction */
    BENCH_BULK_UPDATE, /* one statement, a tenth of the table */
    BENCH_BULK_DELETE,
};

#define BENCH_BULK_ROWS 20000
#define BENCH_BULK_ROUNDS 5

struct bench_shape {
    const char *id;
    const char *name;
    enum bench_kind kind;
    const char *sql;
    /* DuckDB's text where its dialect differs (NULL: sql). */
    const char *sql_duckdb;
    int bind_count;
    void (*binds)(struct bench_rng *rng, int64_t n, int64_t *out);
    bool unordered; /* rows compared as sorted lines */
    bool jit_expected;
};

extern const struct bench_shape bench_shapes[];
extern const size_t bench_shape_count;

/* ---- arms (arm_sinew.c, arm_sqlite.c, arm_duckdb.c) ---- */

struct bench_arm;

struct bench_arm_ops {
    int (*exec)(struct bench_arm *arm, const char *sql);
    int (*prepare)(struct bench_arm *arm, const char *sql, void **stmt);
    /* Binds, runs the statement to its end reading every value into out,
     * and resets it; *changes gets the rows a write changed. */
    int (*run)(struct bench_arm *arm, void *stmt, const struct bench_bind *b,
               int count, bool write, struct bench_out *out, int64_t *changes);
    void (*finalize)(void *stmt);
    /* Fills t and b with n rows (NULL: generic prepared INSERTs). */
    int (*load)(struct bench_arm *arm, int64_t n);
    void (*close)(struct bench_arm *arm);
};

struct bench_arm {
    const char *name;
    const struct bench_arm_ops *ops;
    void *handle;
    char version[64];
    char error[512];
};

/* jit false: the handle runs PRAGMA jit = off, so every statement runs in
 * the interpreter. */
int bench_sinew_open(struct bench_arm *arm, const char *path, bool jit);
/* How a sinew statement's last execution used the JIT: "compiled", "row
 * count" or "no". */
const char *bench_sinew_jit_served(void *stmt);
/* The handle's JIT counters as one markdown line. */
void bench_sinew_jit_stats(const struct bench_arm *arm, char *out, size_t size);
int bench_sqlite_open(struct bench_arm *arm, const char *path, int cache_mib);
/* 1 when the library is absent or unusable (arm->error says why), 0 when
 * open, negative on failure after it was found. */
int bench_duckdb_open(struct bench_arm *arm, const char *library,
                      const char *path);

/* The schema every arm creates (DuckDB spells its types). */
int bench_create_schema(struct bench_arm *arm, bool duckdb);
/* The generic loader: one transaction, one prepared INSERT per table. */
int bench_load_generic(struct bench_arm *arm, int64_t n);

/* ---- results and reports (report.c) ---- */

#define BENCH_ARMS 4 /* sinew (JIT on), SQLite, DuckDB, sinew (JIT off) */
#define ARM_SINEW 0
#define ARM_SQLITE 1
#define ARM_DUCKDB 2
#define ARM_SINEW_INTERP 3

struct bench_timing {
    bool measured;
    double median_ns;
    double min_ns;
    int iterations;
};

struct bench_result {
    const struct bench_shape *shape;
    struct bench_timing arm[BENCH_ARMS];
    const char *jit_served;
};

struct bench_report {
    int64_t rows;
    const char *machine;
    const char *versions;
    const struct bench_result *results;
    size_t count;
    double wall_s;
    const char *jit_stats; /* a markdown line under the table */
};

/* ---- check and timing (measure.c) ---- */

/* One row count's arms, open on their loaded files. */
struct bench_run {
    int64_t n;
    double budget_ns;       /* timed runs per shape: budget / warm-up */
    double check_budget_ns; /* bind values checked: budget / (5 x run) */
    struct bench_arm arms[BENCH_ARMS];
    bool present[BENCH_ARMS];
};

double bench_now_ns(void);
/* 0 when every arm agrees with SQLite, 1 on a mismatch (printed to
 * stderr), -1 when SQLite itself failed. stmts: the shape prepared in each
 * present arm; index: the shape's position (seeds its bind values). */
int bench_check_shape(struct bench_run *run, const struct bench_shape *shape,
                      void *stmts[BENCH_ARMS], int index);
int bench_time_shape(struct bench_run *run, int arm,
                     const struct bench_shape *shape, void *stmt, int index,
                     struct bench_timing *out);
const char *bench_arm_sql(const struct bench_shape *shape, int arm);

void bench_format_ns(double ns, char *out, size_t size);
int bench_write_markdown(const struct bench_report *report, FILE *to);
int bench_write_csv(const struct bench_report *report, const char *path);
int bench_write_svg(const struct bench_report *report, const char *path);

#endif
