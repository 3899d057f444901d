/* SPDX-License-Identifier: MIT
 *
 * measure.c: the engine benchmark's check and timing of one shape in every
 * arm (bench_engine.c says the method). Checks compare each arm's rendered
 * results with C SQLite's; writes are checked inside BEGIN ... ROLLBACK so
 * every arm's tables stay equal for the next shape. Timed runs read every
 * value and are timed one by one; the report shows medians.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_engine.h"

#define READ_FLOOR 40
#define READ_CEILING 200000
#define WRITE_CEILING 250
#define SLOW_RUN_NS 200e6
#define WRITE_CHECKS 10

double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- binds ---- */

/* A shape's values for one run. DuckDB's W3 takes the id first (see
 * shapes.c); *next_id counts the ids handed out. */
static int make_binds(const struct bench_shape *shape, int arm,
                      struct bench_rng *rng, int64_t n, int64_t *next_id,
                      struct bench_bind *binds)
{
    int64_t values[BENCH_MAX_BINDS] = {0};
    int count = shape->bind_count, at = 0, i;

    if (shape->binds != NULL) {
        shape->binds(rng, n, values);
    }
    memset(binds, 0, BENCH_MAX_BINDS * sizeof *binds);
    if (arm == ARM_DUCKDB && shape->sql_duckdb != NULL) {
        binds[at++].integer = (*next_id)++;
    }
    for (i = 0; i < count; i++) {
        binds[at++].integer = values[i];
    }
    return at;
}

/* Row i (from 0) of bulk round r: musql's 7a values, ids past any W3. */
static void bulk_row(int64_t n, int round, int64_t i, struct bench_bind *b)
{
    int64_t id = 2 * n + 1 + (int64_t)round * BENCH_BULK_ROWS + i;

    memset(b, 0, BENCH_MAX_BINDS * sizeof *b);
    b[0].integer = id;
    b[1].integer = id % n;
    b[2].integer = i % 10;
    b[3].integer = i;
    b[4].integer = 1;
}

const char *bench_arm_sql(const struct bench_shape *shape, int arm)
{
    return arm == ARM_DUCKDB && shape->sql_duckdb ? shape->sql_duckdb
                                                  : shape->sql;
}

/* ---- one bulk round ---- */

/* Runs round r of a bulk shape on an open statement; *changes sums the
 * rows changed. transaction: BEGIN/COMMIT around an INSERT round. */
static int bulk_round(struct bench_arm *arm, const struct bench_shape *shape,
                      void *stmt, int64_t n, int round, bool transaction,
                      int64_t *changes)
{
    struct bench_out sink = {0};
    struct bench_bind binds[BENCH_MAX_BINDS];
    int64_t i, changed = 0;

    *changes = 0;
    if (shape->kind != BENCH_BULK_INSERT) {
        memset(binds, 0, sizeof binds);
        binds[0].integer = 3 + round;
        if (arm->ops->run(arm, stmt, binds, 1, true, &sink, changes) != 0) {
            return -1;
        }
        return 0;
    }
    if (transaction && arm->ops->exec(arm, "BEGIN") != 0) {
        return -1;
    }
    for (i = 0; i < BENCH_BULK_ROWS; i++) {
        bulk_row(n, round, i, binds);
        if (arm->ops->run(arm, stmt, binds, 5, true, &sink, &changed) != 0) {
            return -1;
        }
        *changes += changed;
    }
    return transaction ? arm->ops->exec(arm, "COMMIT") : 0;
}

/* ---- check ---- */

#define CHECKSUM_SQL                                                           \
    "SELECT count(*), sum(id), sum(sec), sum(k), sum(v), sum(bid), "           \
    "sum(length(payload)), sum(id * (k + 1)), sum((id % 1000) * v) FROM t"

static void print_mismatch(const struct bench_shape *shape, const char *arm,
                           const struct bench_bind *binds, int count,
                           const char *expected, const char *got)
{
    int i;

    fprintf(stderr, "MISMATCH #%s %s: %s\n  binds:", shape->id, shape->name,
            shape->sql);
    for (i = 0; i < count; i++) {
        fprintf(stderr, " %lld", (long long)binds[i].integer);
    }
    fprintf(stderr, "\n  SQLite:\n%.4000s\n  %s:\n%.4000s\n", expected, arm,
            got);
}

static int run_rendered(struct bench_arm *arm, void *stmt,
                        const struct bench_shape *shape,
                        const struct bench_bind *binds, int count,
                        struct bench_out *out)
{
    int64_t changes = 0;

    bench_out_reset(out);
    out->render = true;
    if (arm->ops->run(arm, stmt, binds, count, false, out, &changes) != 0) {
        return -1;
    }
    return shape->unordered ? bench_out_sort_lines(out) : 0;
}

static int check_read(struct bench_run *run, const struct bench_shape *shape,
                      void *stmts[BENCH_ARMS], int index)
{
    struct bench_out expected = {0}, got = {0};
    struct bench_bind binds[BENCH_MAX_BINDS];
    struct bench_rng rng;
    int64_t next_id = 0;
    int values = 1, v, arm, count, rc = -1;
    double t0, one;

    bench_rng_seed(&rng, BENCH_SEED ^ (0x100u + (unsigned)index));
    if (shape->bind_count > 0) {
        count = make_binds(shape, ARM_SQLITE, &rng, run->n, &next_id, binds);
        t0 = bench_now_ns();
        if (run_rendered(&run->arms[ARM_SQLITE], stmts[ARM_SQLITE], shape,
                         binds, count, &expected) != 0) {
            goto fail;
        }
        one = bench_now_ns() - t0;
        values = (int)(run->check_budget_ns / (5 * one + 1));
        values = values < 5 ? 5 : values > 40 ? 40 : values;
    }
    bench_rng_seed(&rng, BENCH_SEED ^ (0x100u + (unsigned)index));
    for (v = 0; v < values; v++) {
        count = make_binds(shape, ARM_SQLITE, &rng, run->n, &next_id, binds);
        if (run_rendered(&run->arms[ARM_SQLITE], stmts[ARM_SQLITE], shape,
                         binds, count, &expected) != 0) {
            goto fail;
        }
        for (arm = 0; arm < BENCH_ARMS; arm++) {
            if (arm == ARM_SQLITE || !run->present[arm]) {
                continue;
            }
            if (run_rendered(&run->arms[arm], stmts[arm], shape, binds, count,
                             &got) != 0) {
                fprintf(stderr, "MISMATCH #%s: %s failed: %s\n", shape->id,
                        run->arms[arm].name, run->arms[arm].error);
                rc = 1;
                goto cleanup;
            }
            if (strcmp(expected.text ? expected.text : "",
                       got.text ? got.text : "") != 0) {
                print_mismatch(shape, run->arms[arm].name, binds, count,
                               expected.text ? expected.text : "",
                               got.text ? got.text : "");
                rc = 1;
                goto cleanup;
            }
        }
    }
    printf("check #%-3s %-40s %2d bind value%s: same results\n", shape->id,
           shape->name, values, values == 1 ? "" : "s");
    rc = 0;
    goto cleanup;
fail:
    fprintf(stderr, "#%s: SQLite failed: %s\n", shape->id,
            run->arms[ARM_SQLITE].error);
cleanup:
    bench_out_free(&expected);
    bench_out_free(&got);
    return rc;
}

/* One arm's side of a write check, inside BEGIN ... ROLLBACK: the rows
 * changed by each statement, then the table's checksum. */
static int write_side(struct bench_run *run, int arm_index,
                      const struct bench_shape *shape, void *stmt, int index,
                      int64_t *changes, int *runs, struct bench_out *checksum)
{
    struct bench_arm *arm = &run->arms[arm_index];
    struct bench_bind binds[BENCH_MAX_BINDS];
    struct bench_out sink = {0};
    struct bench_rng rng;
    int64_t next_id = run->n + 1;
    void *sum = NULL;
    int i, count, rc = -1;

    if (arm->ops->exec(arm, "BEGIN") != 0) {
        return -1;
    }
    bench_rng_seed(&rng, BENCH_SEED ^ (0x100u + (unsigned)index));
    *runs = shape->kind == BENCH_WRITE ? WRITE_CHECKS : 1;
    for (i = 0; i < *runs; i++) {
        if (shape->kind == BENCH_WRITE) {
            count = make_binds(shape, arm_index, &rng, run->n, &next_id, binds);
            if (arm->ops->run(arm, stmt, binds, count, true, &sink,
                              &changes[i]) != 0) {
                goto cleanup;
            }
        } else if (bulk_round(arm, shape, stmt, run->n, 0, false,
                              &changes[i]) != 0) {
            goto cleanup;
        }
    }
    if (arm->ops->prepare(arm, CHECKSUM_SQL, &sum) != 0 ||
        run_rendered(arm, sum, shape, NULL, 0, checksum) != 0) {
        goto cleanup;
    }
    rc = 0;
cleanup:
    if (sum != NULL) {
        arm->ops->finalize(sum);
    }
    if (arm->ops->exec(arm, "ROLLBACK") != 0) {
        rc = -1;
    }
    return rc;
}

static int check_write(struct bench_run *run, const struct bench_shape *shape,
                       void *stmts[BENCH_ARMS], int index)
{
    struct bench_out expected = {0}, got = {0};
    int64_t want[WRITE_CHECKS], have[WRITE_CHECKS];
    int runs, arm, i, rc = -1;

    if (write_side(run, ARM_SQLITE, shape, stmts[ARM_SQLITE], index, want,
                   &runs, &expected) != 0) {
        fprintf(stderr, "#%s: SQLite failed: %s\n", shape->id,
                run->arms[ARM_SQLITE].error);
        goto cleanup;
    }
    for (arm = 0; arm < BENCH_ARMS; arm++) {
        if (arm == ARM_SQLITE || !run->present[arm]) {
            continue;
        }
        if (write_side(run, arm, shape, stmts[arm], index, have, &runs, &got) !=
            0) {
            fprintf(stderr, "MISMATCH #%s: %s failed: %s\n", shape->id,
                    run->arms[arm].name, run->arms[arm].error);
            rc = 1;
            goto cleanup;
        }
        for (i = 0; i < runs; i++) {
            if (want[i] != have[i]) {
                fprintf(stderr,
                        "MISMATCH #%s %s: %s\n  statement %d changed %lld "
                        "rows in SQLite, %lld in %s\n",
                        shape->id, shape->name, shape->sql, i + 1,
                        (long long)want[i], (long long)have[i],
                        run->arms[arm].name);
                rc = 1;
                goto cleanup;
            }
        }
        if (strcmp(expected.text, got.text) != 0) {
            fprintf(stderr,
                    "MISMATCH #%s %s: table checksum after the writes\n"
                    "  %s\n  SQLite: %s  %s: %s",
                    shape->id, shape->name, CHECKSUM_SQL, expected.text,
                    run->arms[arm].name, got.text);
            rc = 1;
            goto cleanup;
        }
    }
    printf("check #%-3s %-40s %2d statement%s: same changes and checksum\n",
           shape->id, shape->name, runs, runs == 1 ? "" : "s");
    rc = 0;
cleanup:
    bench_out_free(&expected);
    bench_out_free(&got);
    return rc;
}

/* ---- timing ---- */

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void summarize(double *times, int count, struct bench_timing *out)
{
    qsort(times, (size_t)count, sizeof *times, compare_double);
    out->measured = true;
    out->iterations = count;
    out->min_ns = times[0];
    out->median_ns = count % 2 ? times[count / 2]
                               : (times[count / 2 - 1] + times[count / 2]) / 2;
}

int bench_time_shape(struct bench_run *run, int arm_index,
                     const struct bench_shape *shape, void *stmt, int index,
                     struct bench_timing *out)
{
    struct bench_arm *arm = &run->arms[arm_index];
    struct bench_bind binds[BENCH_MAX_BINDS];
    struct bench_out sink = {0};
    struct bench_rng rng;
    int64_t next_id = run->n + 1, changes;
    bool write = shape->kind == BENCH_WRITE;
    int iterations, i, count, rc = -1;
    double *times = NULL, t0, warm;

    if (shape->kind != BENCH_READ && !write) {
        times = calloc(BENCH_BULK_ROUNDS, sizeof *times);
        if (times == NULL) {
            snprintf(arm->error, sizeof arm->error, "out of memory");
            goto cleanup;
        }
        for (i = 0; i < BENCH_BULK_ROUNDS; i++) {
            t0 = bench_now_ns();
            if (bulk_round(arm, shape, stmt, run->n, i, true, &changes) != 0) {
                goto cleanup;
            }
            times[i] = bench_now_ns() - t0;
        }
        summarize(times, BENCH_BULK_ROUNDS, out);
        rc = 0;
        goto cleanup;
    }
    bench_rng_seed(&rng, (BENCH_SEED + 1) ^ (0x100u + (unsigned)index));
    count = make_binds(shape, arm_index, &rng, run->n, &next_id, binds);
    t0 = bench_now_ns();
    if (arm->ops->run(arm, stmt, binds, count, write, &sink, &changes) != 0) {
        goto cleanup;
    }
    warm = bench_now_ns() - t0;
    iterations = (int)(run->budget_ns / (warm + 1));
    iterations = iterations < READ_FLOOR ? READ_FLOOR : iterations;
    iterations = iterations > READ_CEILING ? READ_CEILING : iterations;
    if (write && iterations > WRITE_CEILING) {
        iterations = WRITE_CEILING;
    }
    if (warm >= SLOW_RUN_NS) {
        iterations = 3;
    }
    times = calloc((size_t)iterations, sizeof *times);
    if (times == NULL) {
        snprintf(arm->error, sizeof arm->error, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < iterations; i++) {
        count = make_binds(shape, arm_index, &rng, run->n, &next_id, binds);
        t0 = bench_now_ns();
        if (arm->ops->run(arm, stmt, binds, count, write, &sink, &changes) !=
            0) {
            goto cleanup;
        }
        times[i] = bench_now_ns() - t0;
    }
    summarize(times, iterations, out);
    rc = 0;
cleanup:
    free(times);
    return rc;
}

int bench_check_shape(struct bench_run *run, const struct bench_shape *shape,
                      void *stmts[BENCH_ARMS], int index)
{
    return shape->kind == BENCH_READ ? check_read(run, shape, stmts, index)
                                     : check_write(run, shape, stmts, index);
}
