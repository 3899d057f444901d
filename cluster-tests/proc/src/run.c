/* SPDX-License-Identifier: MIT
 *
 * run.c: one run of the real-process tier, start to verdict:
 *
 *   topology -> keys and nodes -> schema -> clients start -> the seeded
 *   nemesis schedule (fault, heal, ...), or a scenario's fixed one with
 *   its hook around each fault -> final heal -> quorum: a few more
 *   seconds of load, then a read of every key through the leader; crdt
 *   and leader: clients stop before the final heal, the reachable nodes'
 *   tables are compared (the divergence, or follower lag, the heal must
 *   repair), then after the heal every node's table is polled until all
 *   are equal (crdt) or equal to the writer's log (leader): the
 *   convergence time -> checks (and the scenario's judge) -> SIGTERM
 *   (every node must exit 0) -> namespaces removed -> report.
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
    return mode == CHAOS_MODE_QUORUM ? "quorum"
           : mode == CHAOS_MODE_CRDT ? "crdt"
                                     : "leader";
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

/* The faults of the run: the seeded plan, or the scenario's schedule. */
static size_t plan(struct chaos_run_result *r, size_t node_count)
{
    const struct chaos_scenario *s = r->config.scenario;
    if (s == NULL) {
        return chaos_schedule_plan(r->config.seed, r->config.duration_ms,
                                   node_count, r->config.mode, r->faults);
    }
    ASSERT(s->fault_count <= CHAOS_SCENARIO_FAULTS_MAX);
    for (size_t i = 0; i < s->fault_count; i++) {
        const struct chaos_scenario_fault *sf = &s->faults[i];
        r->faults[i] =
            (struct chaos_fault){.kind = sf->kind,
                                 .start_ms = sf->start_ms,
                                 .length_ms = sf->length_ms,
                                 .target = sf->target,
                                 .other = (sf->target + 1) % (int)node_count,
                                 .recovery_ms = -1};
    }
    return s->fault_count;
}

/* Applies fault i; a scenario's fault aimed at the leader gets the node
 * that leads now as its target, or is skipped when none does. */
static void apply(struct chaos_run_result *r, struct chaos_cluster *c,
                  struct chaos_topology *t, size_t i, struct chaos_rng *rng)
{
    struct chaos_fault *f = &r->faults[i];
    const struct chaos_scenario *s = r->config.scenario;
    int leader = c->mode == CHAOS_MODE_QUORUM
                     ? chaos_cluster_find_leader(c, s != NULL ? 5000 : 1000)
                     : -1;
    if (s != NULL && s->faults[i].to_leader) {
        if (leader < 0) {
            f->is_skipped = true;
            snprintf(f->skip_reason, sizeof f->skip_reason,
                     "no node led when the fault was due");
            return;
        }
        f->target = leader;
        f->other = (leader + 1) % (int)c->count;
    }
    chaos_fault_apply(f, c, t, rng);
}

static void hook(struct chaos_scenario_run *run, struct chaos_fault *f,
                 enum chaos_scenario_step step)
{
    if (run->scenario != NULL && run->scenario->hook != NULL) {
        run->scenario->hook(run, f, step);
    }
}

static void run_schedule(struct chaos_run_result *r, struct chaos_cluster *c,
                         struct chaos_topology *t, int64_t start_ns,
                         struct chaos_scenario_run *run)
{
    struct chaos_rng rng = {r->config.seed ^ 0x6e656d65u};
    r->fault_count = plan(r, c->count);
    for (size_t i = 0; i < r->fault_count && !chaos_stop_requested; i++) {
        struct chaos_fault *f = &r->faults[i];
        wait_until(r, c, start_ns + f->start_ms * 1000000);
        apply(r, c, t, i, &rng);
        printf("  %6lld ms  %s %s%s\n",
               (long long)((chaos_now_ns() - start_ns) / 1000000),
               chaos_fault_kind_name(f->kind), f->is_skipped ? "skipped: " : "",
               f->is_skipped ? f->skip_reason : f->what);
        fflush(stdout);
        hook(run, f, CHAOS_SCENARIO_APPLIED);
        wait_until(r, c, start_ns + (f->start_ms + f->length_ms) * 1000000);
        hook(run, f, CHAOS_SCENARIO_HEALING);
        chaos_fault_heal(f, c, t);
        hook(run, f, CHAOS_SCENARIO_HEALED);
    }
    wait_until(r, c, start_ns + r->config.duration_ms * 1000000);
}

/* Every id in items on node (sorted by the query), or -1 if unreachable. */
static int fetch_ids(const struct chaos_node *node, int64_t **ids,
                     size_t *count)
{
    return chaos_fetch_integers(node, "SELECT id FROM items ORDER BY id", ids,
                                count);
}

/* Every value of node's log, in log order, or -1 if unreachable. */
static int fetch_log(const struct chaos_node *node, int64_t **values,
                     size_t *count)
{
    return chaos_fetch_integers(node, "SELECT v FROM log ORDER BY seq", values,
                                count);
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

/* Leader: rows the furthest-behind reachable node lacks against the
 * longest reachable log, before the final heal: the follower lag the heal
 * must repair. Killed and paused nodes are left out. */
static void measure_lag(struct chaos_run_result *r, struct chaos_cluster *c)
{
    size_t longest = 0, shortest = SIZE_MAX;
    for (size_t i = 0; i < c->count; i++) {
        int64_t *values = NULL;
        size_t count = 0;
        if (c->nodes[i].pid > 0 && !c->nodes[i].is_paused &&
            fetch_log(&c->nodes[i], &values, &count) == 0) {
            longest = count > longest ? count : longest;
            shortest = count < shortest ? count : shortest;
        }
        common_free(values);
    }
    r->divergent_at_heal = shortest == SIZE_MAX ? 0 : longest - shortest;
}

/* Leader: one poll of every log after the final heal. Judges and returns
 * true when it is the last (every follower equal to the writer, one not
 * a prefix of it, or out of time). After a failover every follower that
 * reports diverged is rebuilt (nemesis_failover.c) and polling goes on; a
 * log that is not a prefix but whose node does not say it diverged may
 * not have learned the fence yet, and gets until the deadline. */
static bool poll_logs(struct chaos_run_result *r, struct chaos_cluster *c,
                      const struct chaos_workload *w, bool out_of_time)
{
    int64_t *logs[CHAOS_NODES_MAX] = {NULL};
    size_t counts[CHAOS_NODES_MAX] = {0}, behind = 0;
    bool has_failover = c->history.takeover_count > 0;
    for (size_t i = 0; i < c->count; i++) {
        (void)fetch_log(&c->nodes[i], &logs[i], &counts[i]);
    }
    const int64_t *writer = logs[c->writer];
    size_t writer_count = counts[c->writer];
    bool all_equal = writer != NULL, broken = false;
    r->prefix_note[0] = '\0'; /* this poll's, not an earlier one's */
    for (size_t i = 0; writer != NULL && i < c->count; i++) {
        int order =
            logs[i] == NULL
                ? 1
                : chaos_verdict_follower_log(r, (int)i, writer, writer_count,
                                             logs[i], counts[i]);
        /* A diverged log may look like a prefix (the writer's rows
         * overwrite the fenced ones by seq): the node's word decides. */
        if (has_failover && (int)i != c->writer &&
            chaos_leader_rebuild_if_diverged(c, i) == 1) {
            order = 1; /* empty now: it catches up from the others */
            r->prefix_note[0] = '\0';
        }
        all_equal = all_equal && order == 0;
        broken = broken || order < 0;
        if (order > 0 && counts[i] < writer_count) {
            size_t lack = writer_count - counts[i];
            behind = lack > behind ? lack : behind;
        }
    }
    /* Without a failover a log that is not a prefix never becomes one. */
    bool last = all_equal || (broken && !has_failover) || out_of_time;
    if (last) {
        r->converged = all_equal;
        r->divergent_at_end = behind;
        if (writer != NULL) {
            chaos_verdict_leader(r, w, &c->history, writer, writer_count);
        } else {
            chaos_result_fail(r, "the writer's log could not be read");
        }
    }
    for (size_t i = 0; i < c->count; i++) {
        common_free(logs[i]);
    }
    return last;
}

static void converge_leader(struct chaos_run_result *r, struct chaos_cluster *c,
                            const struct chaos_workload *w, int64_t heal_ns)
{
    int64_t deadline = heal_ns + (int64_t)RUN_CONVERGE_TIMEOUT_MS * 1000000;
    while (!poll_logs(r, c, w,
                      chaos_now_ns() > deadline || chaos_stop_requested)) {
        chaos_sleep_ms(100);
    }
    r->convergence_ms = (chaos_now_ns() - heal_ns) / 1000000;
    if (r->prefix_note[0] != '\0' && c->history.takeover_count > 0) {
        chaos_result_fail(r,
                          "%s, and the node did not report diverged within "
                          "%d ms of the final heal",
                          r->prefix_note, RUN_CONVERGE_TIMEOUT_MS);
    } else if (r->prefix_note[0] != '\0') {
        chaos_result_fail(r, "%s", r->prefix_note);
    } else if (!r->converged) {
        chaos_result_fail(r,
                          "the followers did not catch up with the writer "
                          "within %d ms of the final heal (%zu rows behind)",
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
    } else if (c->mode == CHAOS_MODE_LEADER) {
        chaos_workload_stop(w);
        measure_lag(r, c);
    }
    final_heal(r, c, t);
    int64_t heal_ns = chaos_now_ns();
    if (c->mode == CHAOS_MODE_QUORUM) {
        wait_until(r, c, heal_ns + 3000 * (int64_t)1000000);
        chaos_workload_stop(w);
        chaos_workload_final_reads(w, 30000);
    } else if (c->mode == CHAOS_MODE_CRDT) {
        converge(r, c, w, heal_ns);
    } else {
        converge_leader(r, c, w, heal_ns);
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

/* The scenario's expectation, judged after the mode's verdict. */
static void judge(struct chaos_scenario_run *run)
{
    const struct chaos_scenario *s = run->scenario;
    if (s == NULL) {
        return;
    }
    run->result->has_scenario = true;
    snprintf(run->result->expectation, sizeof run->result->expectation, "%s",
             s->expectation);
    s->judge(run);
}

/* Stops the clients and the nodes (each must exit 0 on SIGTERM), frees
 * the history and removes the namespaces. */
static void wind_down(struct chaos_run_result *r, struct chaos_cluster *c,
                      struct chaos_workload *w, bool has_workload)
{
    if (has_workload) {
        chaos_workload_stop(w);
    }
    if (c->unclean_stops > 0) { /* during the run: failovers, rebuilds */
        chaos_result_fail(r, "%d stops during the run were unclean (first: %s)",
                          c->unclean_stops, c->unclean_note);
    }
    r->unclean_stops = c->unclean_stops;
    r->unclean_stops += chaos_cluster_stop(c, RUN_STOP_TIMEOUT_MS);
    for (size_t i = 0; i < c->count && r->unclean_stops > c->unclean_stops;
         i++) {
        if (c->nodes[i].exit_note[0] != '\0') {
            chaos_result_fail(r, "stop: %s", c->nodes[i].exit_note);
        }
    }
    if (has_workload) {
        chaos_workload_release(w);
    }
    chaos_cluster_release(c);
    chaos_topology_teardown(&r->topology);
}

int chaos_run(const struct chaos_run_config *config, struct chaos_run_result *r)
{
    memset(r, 0, sizeof *r);
    r->config = *config;
    r->is_passed = true;
    int64_t begin_ns = chaos_now_ns(), start_ns = begin_ns;
    struct chaos_cluster cluster;
    const struct chaos_scenario *scenario = config->scenario;
    struct chaos_workload w = {
        .mode = config->mode,
        .cluster = &cluster,
        .client_count = config->client_count,
        .key_count = 5,
        .op_timeout_ms = 2000,
        .seed = config->seed,
        .has_pinned_client = scenario != NULL && scenario->has_pinned_client};
    struct chaos_scenario_run run = {
        .scenario = scenario, .cluster = &cluster, .workload = &w, .result = r};
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
    run_schedule(r, &cluster, &r->topology, start_ns, &run);
    finish(r, &cluster, &w, &r->topology, start_ns);
    judge(&run);
stop:
    wind_down(r, &cluster, &w, has_workload);
    common_free(run.state); /* the scenario's, if its judge left it */
report:
    chaos_cleanup_track(NULL, NULL);
    if (chaos_stop_requested) {
        chaos_result_fail(r, "interrupted by a signal");
    }
    r->elapsed_ms = (chaos_now_ns() - begin_ns) / 1000000;
    (void)chaos_report_write(r, start_ns);
    return rc;
}
