/* SPDX-License-Identifier: MIT
 *
 * sim.h: sinew's deterministic simulator (chaos suite, issue 9), and its
 * manual.
 *
 * One seed = one run: whole nodes (engine + replication, or engine +
 * replication_quorum + consensus) in one process and one thread, over the
 * in-memory network, with a simulated clock per node and a simulated disk
 * that loses unsynced writes on crash. The seed picks the run's fault mix
 * (swarm testing), a fault phase runs workload and faults, a healed phase
 * checks liveness, and checkers judge the recorded history. The same seed
 * gives the same run, event for event (its trace hash says so).
 * docs/testing.md, "The chaos suite: the simulator", is the user's manual.
 */
#ifndef SINEW_SIM_H
#define SINEW_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sim_mode {
    SIM_MODE_CRDT = 0,
    SIM_MODE_LEADER = 1,
    SIM_MODE_QUORUM = 2,
    SIM_MODE_ALL = 3, /* sweeps: seed s runs mode s % 3 */
};

/* "crdt", "leader", "quorum", "all". */
const char *sim_mode_name(enum sim_mode mode);
int sim_mode_parse(const char *text, enum sim_mode *out);

/* What one run is told. Overrides: 0 (or -1 for nodes_override) keeps the
 * swarm's draw. */
struct sim_options {
    enum sim_mode mode;
    uint64_t seed;
    bool trace;               /* print the event story to stdout */
    bool keep;                /* keep the run's files */
    const char *history_path; /* write the history (JSON lines); borrowed */
    unsigned nodes_override;  /* 0: swarm */
    int profile;              /* 0: swarm; 1: tie bursts forced (mutants) */
    const char *tmp_dir;      /* the run dir's parent; NULL: $TMPDIR or /tmp */
};

struct sim_result {
    bool failed;
    char checker[32]; /* which checker failed: "convergence", "lww", ... */
    int64_t key;      /* -1: none */
    uint64_t at_ms;   /* sim time of the failure */
    char message[512];
    char config_line[512]; /* the swarm line */
    uint64_t trace_hash;
    uint64_t sim_ms; /* sim time run */
    uint64_t ops_ok, ops_fail, ops_unknown;
    uint64_t crashes, restarts, partitions;
    uint64_t settle_ms;        /* healed phase: time until settled */
    uint64_t lost_by_failover; /* leader: reported, not failed */
    uint64_t inversions;       /* crdt: real-time inversions (reported) */
};

/* Runs one seed in this process; result filled. 0 (passed or failed: see
 * result->failed) or a negative code when the run could not be set up. */
int sim_run_seed(const struct sim_options *options, struct sim_result *result);

/* One line: "ok mode=crdt seed=0x.. hash=.. ..." or
 * "FAIL mode=crdt seed=0x.. checker=.. ... replay: <argv0> --mode .. --seed .."
 */
void sim_result_print(FILE *out, const char *argv0,
                      const struct sim_options *options,
                      const struct sim_result *result);

#endif /* SINEW_SIM_H */
