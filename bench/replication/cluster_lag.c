/* SPDX-License-Identifier: MIT
 *
 * cluster_lag.c: leader mode's follower lag. One writer inserts rows with
 * increasing ids into the writer node at a steady rate (open loop: row i
 * is due at start + i / rate, so a slow answer does not slow the offered
 * load); one sampler thread per follower polls SELECT max(id) on its own
 * connection. When a poll first shows ids up to m, every id not seen
 * before gets the lag (time the poll's answer arrived - time the writer's
 * insert of that id was acknowledged), 0 when the follower answered before
 * the writer's acknowledgement came back. The poll's round trip and
 * --poll-us bound the resolution. Catch-up: from the last acknowledged
 * write until every follower holds the last id.
 */
#define _GNU_SOURCE /* usleep */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_bench.h"

#define BC_LAG_TIMEOUT_S 60.0

/* Shared by the writer and the samplers. ack_ns[i]: when row i (id
 * id_base + 1 + i) was acknowledged, 0 while not yet, -1 if refused. */
struct lag_run {
    const struct bc_lag *lag;
    int64_t rows;
    _Atomic int64_t *ack_ns;
    atomic_int writer_done;
    atomic_int_fast64_t last_id; /* the last acknowledged id, when done */
    double last_ack;
    int64_t errors;
};

struct sampler {
    struct lag_run *run;
    struct bc_url url;
    pthread_t thread;
    double *lag_ms;
    size_t n;
    double caught_up_at;
    int rc;
};

static int64_t to_ns(double t)
{
    return (int64_t)(t * 1e9);
}

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    struct lag_run *run = s->run;
    int64_t seen = run->lag->id_base;
    struct bc_conn conn;
    double deadline = 0;

    bc_conn_init(&conn, &s->url);
    for (;;) {
        int64_t count, max_id, id;
        double at;
        int done = atomic_load(&run->writer_done);

        if (done && deadline == 0) {
            deadline = bc_now() + BC_LAG_TIMEOUT_S;
        }
        if (done && seen >= atomic_load(&run->last_id)) {
            break;
        }
        if (deadline > 0 && bc_now() > deadline) {
            s->rc = -ETIMEDOUT;
            break;
        }
        if (bc_query_count(&conn, &count, &max_id) != 0) {
            usleep(1000); /* the table may not be there yet */
            continue;
        }
        at = bc_now();
        for (id = seen + 1; id <= max_id && id - run->lag->id_base <= run->rows;
             id++) {
            int64_t ack = atomic_load(&run->ack_ns[id - run->lag->id_base - 1]);
            double lag = ack > 0 ? (double)(to_ns(at) - ack) / 1e6 : 0;

            if (ack >= 0) {
                s->lag_ms[s->n++] = lag > 0 ? lag : 0;
            }
        }
        if (max_id > seen) {
            seen = max_id;
            s->caught_up_at = at;
        }
        if (run->lag->poll_us > 0) {
            usleep((useconds_t)run->lag->poll_us);
        }
    }
    bc_conn_close(&conn);
    return NULL;
}

static void write_rows(struct lag_run *run)
{
    const struct bc_lag *lag = run->lag;
    char err[200];
    struct bc_conn conn;
    double start = bc_now();
    int64_t i;

    bc_conn_init(&conn, &lag->writer);
    for (i = 0; i < run->rows; i++) {
        double due = start + (double)i / lag->rate, now = bc_now();
        int64_t id = lag->id_base + 1 + i;
        int rc;

        if (due > now) {
            usleep((useconds_t)((due - now) * 1e6));
        }
        rc = bc_write_row(&conn, BC_HRANA, id, lag->value_bytes, err,
                          sizeof err);
        if (rc == 1) {
            run->last_ack = bc_now();
            atomic_store(&run->ack_ns[i], to_ns(run->last_ack));
            atomic_store(&run->last_id, id);
        } else {
            atomic_store(&run->ack_ns[i], -1);
            if (run->errors++ == 0) {
                fprintf(stderr, "bench_cluster: a refused write: %s\n", err);
            }
        }
    }
    bc_conn_close(&conn);
    atomic_store(&run->writer_done, 1);
}

int bc_run_lag(const struct bc_lag *lag, struct bc_lag_result *out)
{
    struct sampler samplers[4];
    struct lag_run run = {.lag = lag};
    double *all = NULL;
    size_t total = 0;
    int i, started = 0, rc = 0;

    memset(out, 0, sizeof *out);
    memset(samplers, 0, sizeof samplers);
    run.rows = (int64_t)(lag->rate * lag->seconds);
    if (run.rows < 1 || lag->follower_count < 1 || lag->follower_count > 4) {
        return -EINVAL;
    }
    run.ack_ns = calloc((size_t)run.rows, sizeof *run.ack_ns);
    atomic_init(&run.writer_done, 0);
    atomic_init(&run.last_id, lag->id_base);
    if (run.ack_ns == NULL) {
        return -ENOMEM;
    }
    for (i = 0; i < lag->follower_count; i++) {
        samplers[i].run = &run;
        samplers[i].url = lag->followers[i];
        samplers[i].lag_ms = malloc((size_t)run.rows * sizeof(double));
        if (samplers[i].lag_ms == NULL ||
            pthread_create(&samplers[i].thread, NULL, sampler_main,
                           &samplers[i]) != 0) {
            rc = -ENOMEM;
            break;
        }
        started++;
    }
    if (rc == 0) {
        write_rows(&run);
    } else {
        atomic_store(&run.writer_done, 1);
    }
    for (i = 0; i < started; i++) {
        pthread_join(samplers[i].thread, NULL);
        total += samplers[i].n;
        if (samplers[i].rc != 0 && rc == 0) {
            rc = samplers[i].rc;
        }
    }
    if (rc != 0) {
        goto cleanup;
    }
    all = malloc((total ? total : 1) * sizeof *all);
    if (all == NULL) {
        rc = -ENOMEM;
        goto cleanup;
    }
    total = 0;
    for (i = 0; i < started; i++) {
        double catchup = (samplers[i].caught_up_at - run.last_ack) * 1e3;

        memcpy(all + total, samplers[i].lag_ms, samplers[i].n * sizeof *all);
        total += samplers[i].n;
        if (catchup > out->catchup_ms) {
            out->catchup_ms = catchup;
        }
    }
    qsort(all, total, sizeof *all, bc_compare_double);
    out->rows = run.rows - run.errors;
    out->errors = run.errors;
    out->tput = (double)out->rows / lag->seconds;
    out->lag_p50_ms = bc_percentile(all, total, 50);
    out->lag_p99_ms = bc_percentile(all, total, 99);
    out->lag_max_ms = total ? all[total - 1] : 0;
cleanup:
    for (i = 0; i < lag->follower_count; i++) {
        free(samplers[i].lag_ms);
    }
    free(run.ack_ns);
    free(all);
    return rc;
}
