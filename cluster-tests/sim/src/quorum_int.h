/* SPDX-License-Identifier: MIT
 *
 * quorum_int.h: quorum mode in the simulator (chaos-design.md §3, §7,
 * §8), shared by its two files: node_quorum.c (members: node_quorum, i.e.
 * engine + replication_quorum + consensus on one thread, over the sim's
 * network, monotonic clock and disk; the ops table) and work_quorum.c
 * (register and set clients, their history, the final checkers).
 *
 * rejoin_quorum.c adds the wipe fault: a member whose data is lost comes
 * back as a new member (a new Raft id) through the admin API's
 * membership changes.
 *
 * Ownership: struct simq is sim->mode_state (setup allocates it,
 * teardown frees it); node->state points at its nodes[i], which outlive
 * crashes (a member's bootstrap flag and last commit index).
 */
#ifndef SINEW_SIM_QUORUM_INT_H
#define SINEW_SIM_QUORUM_INT_H

#include "consensus.h"
#include "quorum.h"
#include "sim_int.h"

/* Registers the workload uses at most (sim_config.keys is clamped). */
#define SIMQ_KEYS_MAX 64

/* Raft ids: member i starts as i + 1; each wipe adds SIM_NODES_MAX, so
 * (id - 1) % SIM_NODES_MAX is always the sim node's index. */
struct simq_node {
    struct node_quorum *q;  /* while up; NULL while down */
    uint64_t raft_id;       /* its Raft id now (a wipe changes it) */
    bool bootstrapped;      /* its log holds the founding configuration */
    uint64_t commit_index;  /* last seen (traced when it drops) */
    uint64_t applied_index; /* the highest seen since it last started */
    struct common_log log;  /* consensus's sink (--trace only) */
};

struct simq_client {
    uint64_t deadline_ms; /* busy: sim time at which it gives up (unknown) */
};

/* A wiped member's way back (rejoin_quorum.c): on the leader, remove
 * old_id, add the new id, make it a voter; one change at a time, each
 * step chosen afresh from the leader's configuration, so an answer lost
 * with a leader never leaves the member half in. */
struct simq_rejoin {
    bool active;          /* a wiped member is not back yet */
    unsigned node;        /* which */
    uint64_t old_id;      /* its Raft id before the wipe */
    bool busy;            /* a change is in flight */
    uint64_t retry_at_ms; /* sim time of the next attempt */
};

/* The workload's mix (percent, cumulative): read < mix[0] <= write <
 * mix[1] <= cas < mix[2] <= insert < 100. */
struct simq {
    struct simq_node nodes[SIM_NODES_MAX];
    struct simq_client clients[SIM_CLIENTS_MAX];
    unsigned keys;                     /* registers 0..keys-1 */
    unsigned mix[3];                   /* see above */
    uint64_t timeout_ms;               /* client timeout: 2-5 s */
    int64_t last_value[SIMQ_KEYS_MAX]; /* last value seen per key (cas) */
    bool probe_busy;                   /* healed: the probe write in flight */
    bool probe_ok;                     /* healed: a probe write committed */
    struct simq_rejoin rejoin;
};

/* node_quorum.c */
/* The message for any module's code (consensus, replication, engine,
 * transport, common). */
const char *simq_strerror(int rc);
struct simq *simq_get(struct sim *sim);
/* Member i's node_quorum if it is up and runs code (not paused, no crash
 * pending), else NULL. */
struct node_quorum *simq_member(struct sim *sim, unsigned i);
/* The up member that is a ready leader (highest term), or -1. */
int simq_ready_leader(struct sim *sim);
/* The sim node whose Raft id is raft_id now, or -1 (0, a stale id of a
 * wiped member, or none). */
int simq_index_of(struct sim *sim, uint64_t raft_id);
/* Runs the scheduler until pred(sim, arg) holds: 0, or SIM_EFAILED
 * (sim_fail'd as checker "liveness", what says what) after max_ms. */
int simq_run_until(struct sim *sim, bool (*pred)(struct sim *, void *),
                   void *arg, uint64_t max_ms, const char *what);

/* work_quorum.c */
/* Creates the schema and seed rows through Raft (setup phase). */
int simq_schema(struct sim *sim);
int simq_client_step(struct sim *sim, struct sim_client *client);
/* Every instant: clients past their timeout give up (unknown); in the
 * healed phase, the probe write. */
void simq_clients_due(struct sim *sim);
int simq_final_check(struct sim *sim);

/* rejoin_quorum.c */
/* The ops' wipe: crash node, delete its data, give it a new Raft id. */
int simq_wipe(struct sim *sim, unsigned node);
/* Every instant: the next membership change of a rejoin, if one is due. */
void simq_rejoin_step(struct sim *sim);

#endif /* SINEW_SIM_QUORUM_INT_H */
