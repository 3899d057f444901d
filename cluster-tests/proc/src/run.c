/* SPDX-License-Identifier: MIT
 *
 * run.c: one run of the real-process tier, start to verdict:
 *
 *   topology -> keys and nodes -> schema -> clients start -> the seeded
 *   nemesis schedule (fault, heal, ...) -> final heal -> quorum: a few
 *   more seconds of load, then a read of every key through the leader;
 *   crdt: clients stop before the final heal, the reachable nodes' tables
 *   are compared (the divergence the heal must repair), then after the
 *   heal every node's table is polled until all are equal (the
 *   convergence time) -> checks -> SIGTERM (every node must exit 0)
 *   -> namespaces removed -> report.
 *
 * A node that exits on its own fails the run (and is restarted, so the
 * run still yields a history).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chaos_proc.h"
#include "common.h"

#define RUN_START_TIMEOUT_MS 60000
#define RUN_CONVERGE_TIMEOUT_MS 60000
#define RUN_STOP_TIMEOUT_MS 15000

volatile sig_atomic_t chaos_stop_requested = 0;

static struct chaos_cluster *tracked_cluster;
static struct chaos_topology *tracked_topology;

void chaos_cleanup_track(struct chaos_cluster *cluster,
                         struct chaos_topology *topology)
{
    tracked_cluster = cluster;
    tracked_topology = topology;
}

void chaos_cleanup_now(void)
{
    if (tracked_cluster != NULL) {
        chaos_cluster_kill_all(tracked_cluster);
    }
    if (tracked_topology != NULL) {
        chaos_topology_teardown(tracked_topology);
    }
    chaos_cleanup_track(NULL, NULL);
}

const char *chaos_mode_name(enum chaos_mode mode)
{
    return mode == CHAOS_MODE_QUORUM ? "quorum" : "crdt";
}

const char *chaos_topology_name(enum chaos_topology_kind kind)
{
    return kind == CHAOS_TOPOLOGY_NETNS      ? "netns"
           : kind == CHAOS_TOPOLOGY_LOOPBACK ? "loopback"
                                             : "auto";
}

/* Sleeps until at_ns, restarting nodes that died on their own. */
static void wait_until(struct chaos_run_result *r, struct chaos_cluster *c,
                       int64_t at_ns)
{
    while (chaos_now_ns() < at_ns && !chaos_stop_requested) {
        if (chaos_cluster_reap(c) > 0) {
            for (size_t i = 0; i < c->count; i++) {
                if (c->nodes[i].pid == 0 && c->nodes[i].unexpected_exits > 0 &&
                    c->nodes[i].exit_note[0] != '\0') {
                    chaos_result_fail(r, "%s", c->nodes[i].exit_note);
                    r->unexpected_exits++;
                    c->nodes[i].exit_note[0] = '\0';
                    (void)chaos_node_start(c, i);
                }
            }
        }
        chaos_sleep_ms(50);
    }
}

static void run_schedule(struct chaos_run_result *r, struct chaos_cluster *c,
                         struct chaos_topology *t, int64_t start_ns)
{
    struct chaos_rng rng = {r->config.seed ^ 0x6e656d65u};
    r->fault_count = chaos_schedule_plan(r->config.seed, r->config.duration_ms,
                                         c->count, r->faults);
    for (size_t i = 0; i < r->fault_count && !chaos_stop_requested; i++) {
        struct chaos_fault *f = &r->faults[i];
        wait_until(r, c, start_ns + f->start_ms * 1000000);
        if (c->mode == CHAOS_MODE_QUORUM) {
            (void)chaos_cluster_find_leader(c, 1000);
        }
        chaos_fault_apply(f, c, t, &rng);
        printf("  %6lld ms  %s %s%s\n",
               (long long)((chaos_now_ns() - start_ns) / 1000000),
               chaos_fault_kind_name(f->kind), f->is_skipped ? "skipped: " : "",
               f->is_skipped ? f->skip_reason : f->what);
        fflush(stdout);
        wait_until(r, c, start_ns + (f->start_ms + f->length_ms) * 1000000);
        chaos_fault_heal(f, c, t);
    }
    wait_until(r, c, start_ns + r->config.duration_ms * 1000000);
}

/* Every id in items on node (sorted by the query), or -1 if unreachable. */
static int fetch_ids(const struct chaos_node *node, int64_t **ids,
                     size_t *count)
{
    struct chaos_sql_result result;
    *ids = NULL;
    *count = 0;
    chaos_sql(node, "SELECT id FROM items ORDER BY id", NULL, 0, 10000,
              &result);
    if (result.outcome != CHAOS_SQL_OK) {
        chaos_sql_result_release(&result);
        return -1;
    }
    size_t n = json_array_size(result.rows);
    *ids = common_malloc_array(n + 1, sizeof **ids);
    for (size_t i = 0; i < n; i++) {
        json_t *cell = json_array_get(json_array_get(result.rows, i), 0);
        const char *text = json_string_value(json_object_get(cell, "value"));
        (*ids)[i] = text != NULL ? (int64_t)strtoll(text, NULL, 10) : 0;
    }
    *count = n;
    chaos_sql_result_release(&result);
    return 0;
}

/* Rows not on every node: |union| - |intersection| of sorted lists. */
static size_t divergence(int64_t **ids, const size_t *counts, size_t nodes)
{
    size_t at[CHAOS_NODES_MAX] = {0}, out = 0;
    for (;;) {
        int64_t low = INT64_MAX;
        for (size_t i = 0; i < nodes; i++) {
            if (at[i] < counts[i] && ids[i][at[i]] < low) {
                low = ids[i][at[i]];
            }
        }
        if (low == INT64_MAX) {
            return out;
        }
        size_t holders = 0;
        for (size_t i = 0; i < nodes; i++) {
            if (at[i] < counts[i] && ids[i][at[i]] == low) {
                holders++;
                at[i]++;
            }
        }
        out += holders != nodes;
    }
}

/* Rows not on every reachable node, before the final heal: the
 * divergence the heal must repair. Killed and paused nodes are left out. */
static void measure_divergence(struct chaos_run_result *r,
                               struct chaos_cluster *c)
{
    int64_t *ids[CHAOS_NODES_MAX] = {NULL};
    size_t counts[CHAOS_NODES_MAX] = {0}, reached = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->nodes[i].pid > 0 && !c->nodes[i].is_paused &&
            fetch_ids(&c->nodes[i], &ids[reached], &counts[reached]) == 0) {
            reached++;
        }
    }
    r->divergent_at_heal = divergence(ids, counts, reached);
    for (size_t i = 0; i < reached; i++) {
        common_free(ids[i]);
    }
}

static void converge(struct chaos_run_result *r, struct chaos_cluster *c,
                     const struct chaos_workload *w, int64_t heal_ns)
{
    int64_t deadline = heal_ns + (int64_t)RUN_CONVERGE_TIMEOUT_MS * 1000000;
    for (;;) {
        int64_t *ids[CHAOS_NODES_MAX] = {NULL};
        size_t counts[CHAOS_NODES_MAX] = {0};
        bool reached = true;
        for (size_t i = 0; i < c->count; i++) {
            reached =
                fetch_ids(&c->nodes[i], &ids[i], &counts[i]) == 0 && reached;
        }
        size_t diverging = reached ? divergence(ids, counts, c->count) : 0;
        bool done = reached && diverging == 0;
        bool out_of_time = chaos_now_ns() > deadline || chaos_stop_requested;
        if (done || out_of_time) {
            r->converged = done;
            r->convergence_ms = (chaos_now_ns() - heal_ns) / 1000000;
            r->divergent_at_end = diverging;
            r->final_rows = counts[0];
            if (reached) {
                chaos_verdict_crdt(r, w, ids[0], counts[0]);
            }
        }
        for (size_t i = 0; i < c->count; i++) {
            common_free(ids[i]);
        }
        if (done || out_of_time) {
            break;
        }
        chaos_sleep_ms(100);
    }
    if (!r->converged) {
        chaos_result_fail(r,
                          "no convergence within %d ms of the final heal "
                          "(%zu rows divergent)",
                          RUN_CONVERGE_TIMEOUT_MS, r->divergent_at_end);
    }
}

/* Ends every fault, resumes every node. */
static void final_heal(struct chaos_run_result *r, struct chaos_cluster *c,
                       struct chaos_topology *t)
{
    for (size_t i = 0; i < r->fault_count; i++) {
        chaos_fault_heal(&r->faults[i], c, t);
    }
    (void)chaos_topology_heal(t);
    for (size_t i = 0; i < c->count; i++) {
        chaos_node_resume(c, i);
    }
}

static void finish(struct chaos_run_result *r, struct chaos_cluster *c,
                   struct chaos_workload *w, struct chaos_topology *t,
                   int64_t start_ns)
{
    if (c->mode == CHAOS_MODE_CRDT) {
        chaos_workload_stop(w);
        measure_divergence(r, c);
    }
    final_heal(r, c, t);
    int64_t heal_ns = chaos_now_ns();
    if (c->mode == CHAOS_MODE_QUORUM) {
        wait_until(r, c, heal_ns + 3000 * (int64_t)1000000);
        chaos_workload_stop(w);
        chaos_workload_final_reads(w, 30000);
    } else {
        converge(r, c, w, heal_ns);
    }
    r->attempted = w->attempted;
    r->acknowledged = w->acknowledged;
    r->failed = w->failed;
    r->unknown = w->unknown;
    if (c->mode == CHAOS_MODE_QUORUM) {
        chaos_verdict_quorum(r, w);
    }
    chaos_verdict_recovery(r, w, start_ns);
    if (r->acknowledged == 0) {
        chaos_result_fail(r, "no operation was acknowledged");
    }
}

int chaos_run(const struct chaos_run_config *config, struct chaos_run_result *r)
{
    memset(r, 0, sizeof *r);
    r->config = *config;
    r->is_passed = true;
    int64_t begin_ns = chaos_now_ns(), start_ns = begin_ns;
    struct chaos_cluster cluster;
    struct chaos_workload w = {.mode = config->mode,
                               .cluster = &cluster,
                               .client_count = config->client_count,
                               .key_count = 5,
                               .op_timeout_ms = 2000,
                               .seed = config->seed};
    bool has_workload = false;
    int rc = 0;
    if (mkdir(config->dir, 0755) != 0 && errno != EEXIST) {
        chaos_result_fail(r, "cannot create %s", config->dir);
        return -errno;
    }
    memset(&cluster, 0, sizeof cluster);
    chaos_cleanup_track(&cluster, &r->topology);
    if (chaos_topology_setup(&r->topology, config->topology, config->node_count,
                             config->run_index) != 0) {
        chaos_result_fail(r, "topology could not be set up");
        rc = -EIO;
        goto report;
    }
    printf("chaos-proc: %s, %zu nodes, seed %llu, topology %s (%s)\n",
           chaos_mode_name(config->mode), config->node_count,
           (unsigned long long)config->seed,
           chaos_topology_name(r->topology.kind), r->topology.why);
    fflush(stdout);
    if (chaos_cluster_init(&cluster, config->mode, config->binary, config->dir,
                           config->node_count, &r->topology) != 0 ||
        chaos_cluster_start(&cluster, RUN_START_TIMEOUT_MS) != 0) {
        chaos_result_fail(r, "the cluster did not start (node logs in %s)",
                          config->dir);
        rc = -EIO;
        goto stop;
    }
    has_workload = true;
    if (chaos_workload_prepare(&w, RUN_START_TIMEOUT_MS) != 0 ||
        chaos_workload_start(&w) != 0) {
        chaos_result_fail(r, "the workload could not start");
        rc = -EIO;
        goto stop;
    }
    start_ns = chaos_now_ns();
    run_schedule(r, &cluster, &r->topology, start_ns);
    finish(r, &cluster, &w, &r->topology, start_ns);
stop:
    if (has_workload) {
        chaos_workload_stop(&w);
    }
    r->unclean_stops = chaos_cluster_stop(&cluster, RUN_STOP_TIMEOUT_MS);
    for (size_t i = 0; i < cluster.count && r->unclean_stops > 0; i++) {
        if (cluster.nodes[i].exit_note[0] != '\0') {
            chaos_result_fail(r, "stop: %s", cluster.nodes[i].exit_note);
        }
    }
    if (has_workload) {
        chaos_workload_release(&w);
    }
    chaos_topology_teardown(&r->topology);
report:
    chaos_cleanup_track(NULL, NULL);
    if (chaos_stop_requested) {
        chaos_result_fail(r, "interrupted by a signal");
    }
    r->elapsed_ms = (chaos_now_ns() - begin_ns) / 1000000;
    (void)chaos_report_write(r, start_ns);
    return rc;
}
