/* SPDX-License-Identifier: MIT
 *
 * report.c: a run's report, report.json for tools and report.md for
 * people, in the run's directory (chaos.md §4.2): identity and the command
 * that repeats the schedule, the topology, the nemesis schedule with its
 * times (relative to the start of the workload), the operation counts,
 * the safety results, recovery, and the verdict with the rules that
 * failed. A fault the machine cannot make is listed as skipped with the
 * reason, never left out. Leader mode adds its failovers: how many, the
 * appends they fenced (allowed to be lost), fence breaches (none
 * allowed) and the diverged nodes rebuilt. A scenario's report adds its
 * expectation and what it observed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "chaos_proc.h"

static int64_t rel_ms(int64_t ns, int64_t start_ns)
{
    return ns == 0 ? -1 : (ns - start_ns) / 1000000;
}

static json_t *faults_json(const struct chaos_run_result *r, int64_t start_ns)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->fault_count; i++) {
        const struct chaos_fault *f = &r->faults[i];
        json_array_append_new(
            list,
            json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:b,s:s,s:I}", "kind",
                      chaos_fault_kind_name(f->kind), "what", f->what,
                      "planned_start_ms", (json_int_t)f->start_ms,
                      "planned_length_ms", (json_int_t)f->length_ms,
                      "applied_ms", (json_int_t)rel_ms(f->applied_ns, start_ns),
                      "healed_ms", (json_int_t)rel_ms(f->healed_ns, start_ns),
                      "skipped", f->is_skipped, "skip_reason", f->skip_reason,
                      "recovery_ms", (json_int_t)f->recovery_ms));
    }
    return list;
}

/* Leader mode's results; counts of rows unless named otherwise. */
static json_t *leader_json(const struct chaos_run_result *r)
{
    json_t *leader = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "lost", (json_int_t)r->lost,
        "phantoms", (json_int_t)r->phantoms, "writer_rows",
        (json_int_t)r->final_rows, "follower_writes_acknowledged",
        (json_int_t)r->follower_writes_acked, "follower_writes_refused",
        (json_int_t)r->follower_writes_refused, "follower_reads",
        (json_int_t)r->follower_reads, "follower_reads_not_prefix",
        (json_int_t)r->reads_not_prefix, "stale_follower_reads",
        (json_int_t)r->stale_reads, "max_staleness_ms",
        (json_int_t)r->max_staleness_ms);
    json_object_set_new(leader, "lag_rows_at_heal",
                        json_integer((json_int_t)r->divergent_at_heal));
    json_object_set_new(leader, "caught_up", json_boolean(r->converged));
    json_object_set_new(leader, "convergence_ms",
                        json_integer(r->convergence_ms));
    json_object_set_new(leader, "lag_rows_at_end",
                        json_integer((json_int_t)r->divergent_at_end));
    json_object_set_new(
        leader, "failover",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "failovers",
                  (json_int_t)r->failovers, "fenced_appends",
                  (json_int_t)(r->fenced_late + r->fenced_unshipped),
                  "fenced_after_deposition", (json_int_t)r->fenced_late,
                  "fenced_unshipped_at_takeover",
                  (json_int_t)r->fenced_unshipped, "fence_breaches",
                  (json_int_t)r->fence_breaches, "diverged_nodes_rebuilt",
                  (json_int_t)r->rebuilt, "reads_of_rebuilt_nodes_not_judged",
                  (json_int_t)r->reads_unjudged));
    json_object_set_new(json_object_get(leader, "failover"),
                        "reads_after_rebuild_not_prefix",
                        json_integer((json_int_t)r->reads_not_prefix_rebuilt));
    return leader;
}

static json_t *report_json(const struct chaos_run_result *r, int64_t start_ns)
{
    const struct chaos_run_config *c = &r->config;
    json_t *failures = json_array();
    for (size_t i = 0; i < r->failure_count; i++) {
        json_array_append_new(failures, json_string(r->failures[i]));
    }
    json_t *root = json_pack(
        "{s:s,s:s,s:I,s:I,s:s,s:I,s:I,s:{s:s,s:s}}", "tier", "proc", "mode",
        chaos_mode_name(c->mode), "nodes", (json_int_t)c->node_count, "clients",
        (json_int_t)c->client_count, "seed", "", "duration_ms",
        (json_int_t)c->duration_ms, "elapsed_ms", (json_int_t)r->elapsed_ms,
        "topology", "kind", chaos_topology_name(r->topology.kind), "why",
        r->topology.why);
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
    json_object_set_new(root, "seed", json_string(seed));
    json_object_set_new(root, "faults", faults_json(r, start_ns));
    json_object_set_new(
        root, "operations",
        json_pack("{s:I,s:I,s:I,s:I}", "attempted", (json_int_t)r->attempted,
                  "acknowledged", (json_int_t)r->acknowledged, "failed",
                  (json_int_t)r->failed, "unknown", (json_int_t)r->unknown));
    if (c->mode == CHAOS_MODE_QUORUM) {
        json_object_set_new(
            root, "quorum",
            json_pack("{s:s,s:s,s:I}", "linearizable",
                      r->has_linearizable ? check_result_name(r->linearizable)
                                          : "not checked",
                      "checker", r->linearizable_note, "phantom_reads",
                      (json_int_t)r->phantom_reads));
    } else if (c->mode == CHAOS_MODE_LEADER) {
        json_object_set_new(root, "leader", leader_json(r));
    } else {
        json_object_set_new(
            root, "crdt",
            json_pack(
                "{s:I,s:I,s:I,s:I,s:b,s:I,s:I}", "lost", (json_int_t)r->lost,
                "phantoms", (json_int_t)r->phantoms, "divergent_rows_at_heal",
                (json_int_t)r->divergent_at_heal, "divergent_rows_at_end",
                (json_int_t)r->divergent_at_end, "converged", r->converged,
                "convergence_ms", (json_int_t)r->convergence_ms, "final_rows",
                (json_int_t)r->final_rows));
    }
    json_object_set_new(root, "processes",
                        json_pack("{s:i,s:i}", "unexpected_exits",
                                  r->unexpected_exits, "unclean_stops",
                                  r->unclean_stops));
    json_object_set_new(root, "longest_outage_ms",
                        json_integer(r->longest_outage_ms));
    if (r->has_scenario) {
        json_object_set_new(root, "scenario",
                            json_pack("{s:s,s:s,s:s,s:b}", "name",
                                      c->scenario->name, "expectation",
                                      r->expectation, "observed", r->observed,
                                      "skipped", r->is_skipped));
    }
    json_object_set_new(root, "failures", failures);
    json_object_set_new(root, "verdict", json_string(chaos_verdict_name(r)));
    return root;
}

static void report_md_faults(FILE *out, const struct chaos_run_result *r,
                             int64_t start_ns)
{
    fprintf(out, "## Nemesis schedule\n\n"
                 "| # | kind | what | applied (ms) | healed (ms) | "
                 "recovery (ms) |\n|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->fault_count; i++) {
        const struct chaos_fault *f = &r->faults[i];
        if (f->is_skipped) {
            fprintf(out, "| %zu | %s | skipped: %s | | | |\n", i + 1,
                    chaos_fault_kind_name(f->kind), f->skip_reason);
            continue;
        }
        fprintf(out, "| %zu | %s | %s | %lld | %lld | %lld |\n", i + 1,
                chaos_fault_kind_name(f->kind), f->what,
                (long long)rel_ms(f->applied_ns, start_ns),
                (long long)rel_ms(f->healed_ns, start_ns),
                (long long)f->recovery_ms);
    }
    fprintf(out, "\nRecovery: from the heal to the first acknowledged "
                 "operation invoked after it (-1: none).\n");
}

static void report_md_head(FILE *out, const struct chaos_run_result *r)
{
    const struct chaos_run_config *c = &r->config;
    char repeat[CHAOS_NOTE_SIZE];
    if (c->scenario != NULL) {
        fprintf(out, "# chaos-proc scenario %s: %s, %zu nodes\n\n",
                c->scenario->name, chaos_mode_name(c->mode), c->node_count);
        snprintf(repeat, sizeof repeat, "chaos-proc --scenario %s --nodes %zu",
                 c->scenario->name, c->node_count);
    } else {
        fprintf(out, "# chaos-proc run: %s, %zu nodes, seed %llu\n\n",
                chaos_mode_name(c->mode), c->node_count,
                (unsigned long long)c->seed);
        snprintf(repeat, sizeof repeat,
                 "chaos-proc --mode %s --nodes %zu --seconds %lld --seed %llu",
                 chaos_mode_name(c->mode), c->node_count,
                 (long long)(c->duration_ms / 1000),
                 (unsigned long long)c->seed);
    }
    fprintf(out,
            "- topology: %s (%s)\n- workload: %lld ms, %zu clients; "
            "run took %lld ms\n- repeat the schedule: `%s`\n\n",
            chaos_topology_name(r->topology.kind), r->topology.why,
            (long long)c->duration_ms, c->client_count,
            (long long)r->elapsed_ms, repeat);
    if (r->has_scenario) {
        fprintf(out, "## Scenario\n\n- expectation: %s\n- observed: %s\n\n",
                r->expectation, r->observed);
    }
}

static void report_md_leader(FILE *out, const struct chaos_run_result *r)
{
    fprintf(out,
            "- lost acknowledged appends (not in the writer's log): %zu\n"
            "- phantom rows in the writer's log: %zu (of %zu rows)\n"
            "- appends acknowledged by a follower: %zu (refused: %zu)\n"
            "- follower log reads: %zu; not a prefix of the writer's log: "
            "%zu; stale (missing an acknowledged append): %zu, at most "
            "%lld ms behind\n"
            "- follower lag just before the final heal: %zu rows\n"
            "- followers caught up: %s in %lld ms after the final heal "
            "(%zu rows behind at the end)\n",
            r->lost, r->phantoms, r->final_rows, r->follower_writes_acked,
            r->follower_writes_refused, r->follower_reads, r->reads_not_prefix,
            r->stale_reads, (long long)r->max_staleness_ms,
            r->divergent_at_heal, r->converged ? "yes" : "NO",
            (long long)r->convergence_ms, r->divergent_at_end);
    fprintf(out,
            "- failovers: %zu; fenced appends (acknowledged by an earlier "
            "writer, not in the final log: allowed): %zu, of them %zu "
            "acknowledged by a deposed writer and %zu not held by the next "
            "writer when it took over\n"
            "- fence breaches (a deposed writer's appends acknowledged "
            "after the takeover, in the final log): %zu\n"
            "- diverged nodes rebuilt from an empty database: %zu; their "
            "reads from before the rebuild, not judged: %zu; reads after "
            "a rebuild not a prefix of the writer's log (of the %zu "
            "above): %zu\n",
            r->failovers, r->fenced_late + r->fenced_unshipped, r->fenced_late,
            r->fenced_unshipped, r->fence_breaches, r->rebuilt,
            r->reads_unjudged, r->reads_not_prefix,
            r->reads_not_prefix_rebuilt);
}

static void report_md(FILE *out, const struct chaos_run_result *r,
                      int64_t start_ns)
{
    const struct chaos_run_config *c = &r->config;
    report_md_head(out, r);
    report_md_faults(out, r, start_ns);
    fprintf(out,
            "\n## Operations\n\n| attempted | acknowledged | failed | "
            "unknown |\n|---|---|---|---|\n| %zu | %zu | %zu | %zu |\n\n"
            "## Safety and liveness\n\n",
            r->attempted, r->acknowledged, r->failed, r->unknown);
    if (c->mode == CHAOS_MODE_QUORUM) {
        fprintf(out, "- linearizability: %s (%s)\n- phantom reads: %zu\n",
                r->has_linearizable ? check_result_name(r->linearizable)
                                    : "not checked",
                r->linearizable_note, r->phantom_reads);
    } else if (c->mode == CHAOS_MODE_LEADER) {
        report_md_leader(out, r);
    } else {
        fprintf(out,
                "- lost acknowledged inserts: %zu\n- phantom rows: %zu\n"
                "- rows not on every reachable node just before the final "
                "heal: %zu\n"
                "- converged: %s in %lld ms after the final heal "
                "(%zu rows; %zu divergent at the end)\n",
                r->lost, r->phantoms, r->divergent_at_heal,
                r->converged ? "yes" : "NO", (long long)r->convergence_ms,
                r->final_rows, r->divergent_at_end);
    }
    fprintf(out,
            "- longest time without an acknowledged operation: %lld ms\n"
            "- unexpected node exits: %d; nodes not stopping cleanly "
            "on SIGTERM: %d\n\n## Verdict: %s\n\n",
            (long long)r->longest_outage_ms, r->unexpected_exits,
            r->unclean_stops, chaos_verdict_name(r));
    for (size_t i = 0; i < r->failure_count; i++) {
        fprintf(out, "- %s\n", r->failures[i]);
    }
}

const char *chaos_verdict_name(const struct chaos_run_result *r)
{
    return !r->is_passed ? "FAIL" : r->is_skipped ? "SKIP" : "PASS";
}

int chaos_report_write(const struct chaos_run_result *r,
                       int64_t workload_start_ns)
{
    char path[CHAOS_PATH_SIZE + 16];
    snprintf(path, sizeof path, "%s/report.json", r->config.dir);
    json_t *root = report_json(r, workload_start_ns);
    int rc = json_dump_file(root, path, JSON_INDENT(2)) == 0 ? 0 : -EIO;
    json_decref(root);
    snprintf(path, sizeof path, "%s/report.md", r->config.dir);
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        return -errno;
    }
    report_md(out, r, workload_start_ns);
    return fclose(out) == 0 ? rc : -EIO;
}
