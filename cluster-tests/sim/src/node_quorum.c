/* SPDX-License-Identifier: MIT
 *
 * node_quorum.c: quorum mode's members in the simulator (chaos-design.md
 * §3, §4, §5): each is a node_quorum (engine + replication_quorum +
 * consensus, node/src/quorum.h) on the sim's in-memory network, its own
 * monotonic clock (drift, never jumps: quorum mode has no HLC) and the
 * simulated disk, which holds both the database and the Raft directory
 * (dir/raft) and loses unsynced writes on a crash. Also the mode's ops
 * table, the inline invariants (Raft's Election Safety, §5.2: at most one
 * leader per term; a member's applied index never decreases while it is
 * up) and liveness ("settled": a ready leader, every member up and caught
 * up, a wiped member back in the configuration as a voter, and a probe
 * write committed after the heal).
 *
 * A member whose tick answers CONSENSUS_EUNAVAILABLE (a log write or
 * fsync failed, an apply failed: consensus.h says close and reopen) is
 * crashed at the end of the instant and restarted later, as a supervisor
 * would restart the process.
 */
#include <stdio.h>

#include "quorum_int.h"

/* Opening a member retries this often when the disk's injected faults
 * (ENOSPC, EIO) make it fail; damage (ECORRUPT) is never retried. */
#define SIMQ_OPEN_TRIES 8

/* Set only in a binary built with node/src/quorum.c's early-ack mutant. */
extern const char sinew_mutation_early_ack[] __attribute__((weak));

const char *simq_strerror(int rc)
{
    if (rc >= CONSENSUS_ERROR_FIRST && rc <= CONSENSUS_ERROR_LAST) {
        return consensus_strerror(rc);
    }
    if (rc >= REPLICATION_ERROR_FIRST && rc <= REPLICATION_ERROR_LAST) {
        return replication_strerror(rc);
    }
    if (rc >= ENGINE_ERROR_FIRST && rc <= ENGINE_ERROR_LAST) {
        return engine_strerror(rc);
    }
    return transport_strerror(rc);
}

struct simq *simq_get(struct sim *sim)
{
    return sim->mode_state;
}

struct node_quorum *simq_member(struct sim *sim, unsigned i)
{
    const struct sim_node *node = &sim->nodes[i];
    const struct simq_node *qn = &simq_get(sim)->nodes[i];

    if (!node->up || node->paused || node->crash_pending) {
        return NULL;
    }
    return qn->q;
}

int simq_ready_leader(struct sim *sim)
{
    int best = -1;
    uint64_t best_term = 0;

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct node_quorum *q = simq_member(sim, i);
        struct consensus_status s;

        if (q == NULL) {
            continue;
        }
        consensus_status_get(node_quorum_consensus(q), &s);
        if (s.ready && s.term >= best_term) {
            best = (int)i;
            best_term = s.term;
        }
    }
    return best;
}

int simq_index_of(struct sim *sim, uint64_t raft_id)
{
    unsigned index = (unsigned)((raft_id - 1) % SIM_NODES_MAX);

    if (raft_id == 0 || index >= sim->config.nodes ||
        simq_get(sim)->nodes[index].raft_id != raft_id) {
        return -1;
    }
    return (int)index;
}

int simq_run_until(struct sim *sim, bool (*pred)(struct sim *, void *),
                   void *arg, uint64_t max_ms, const char *what)
{
    uint64_t end = sim->now_ms + max_ms;

    while (!pred(sim, arg)) {
        int rc;

        if (sim->now_ms >= end) {
            return sim_fail(sim, "liveness", -1, "%s not within %llu ms", what,
                            (unsigned long long)max_ms);
        }
        rc = sim_loop_run(sim, sim->now_ms + 1);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- clock, randomness, log ---- */

static uint64_t member_random(void *ctx)
{
    struct sim_node *node = ctx;

    return sim_rng_next(&node->sim->rng[SIM_RNG_NODE0 + node->index]);
}

static void member_log(void *ctx, int level, const char *file, int line,
                       const char *msg)
{
    struct sim_node *node = ctx;

    (void)file;
    (void)line;
    sim_tracef(node->sim, (int)node->index, "log %s %s",
               common_log_level_name(level), msg);
}

/* ---- lifecycle ---- */

static void member_config(struct sim *sim, struct sim_node *node,
                          struct node_quorum_config *out, char *raft_dir,
                          size_t raft_dir_size)
{
    struct simq_node *qn = node->state;

    snprintf(raft_dir, raft_dir_size, "%s/raft", node->dir);
    qn->log = (struct common_log){
        .ctx = node, .min_level = COMMON_LOG_WARN, .emit = member_log};
    *out = (struct node_quorum_config){
        .db_path = node->db_path,
        .consensus = {
            .id = qn->raft_id,
            .node = node->id,
            .address = node->address,
            .data_dir = raft_dir,
            .transport = node->transport,
            .clock = {.now_ms = sim_clock_mono_cb, .ctx = node},
            .random = {.next = member_random, .ctx = node},
            .election_timeout_ms = sim->config.election_timeout_ms,
            .heartbeat_ms = sim->config.heartbeat_ms,
            .snapshot_threshold = sim->config.snapshot_threshold,
            .snapshot_trailing = sim->config.snapshot_trailing,
            .log = sim->options.trace ? &qn->log : NULL,
        }};
}

/* Every member a voter, the same list on each (consensus_bootstrap). */
static int member_bootstrap(struct sim *sim, struct node_quorum *q)
{
    struct consensus_member members[SIM_NODES_MAX];

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        members[i] =
            (struct consensus_member){.id = simq_get(sim)->nodes[i].raft_id,
                                      .node = sim->nodes[i].id,
                                      .address = sim->nodes[i].address,
                                      .role = CONSENSUS_VOTER};
    }
    return node_quorum_bootstrap(q, members, sim->config.nodes);
}

/* One attempt: open, bootstrap on the first start only (a restart replays
 * its log: chaos-design.md §3), start. */
static int member_try_open(struct sim *sim, struct sim_node *node)
{
    struct simq_node *qn = node->state;
    struct node_quorum_config config;
    char raft_dir[600];
    int rc;

    member_config(sim, node, &config, raft_dir, sizeof raft_dir);
    rc = node_quorum_open(&config, &qn->q);
    if (rc != 0) {
        qn->q = NULL;
        return rc;
    }
    if (!qn->bootstrapped) {
        rc = member_bootstrap(sim, qn->q);
        qn->bootstrapped = rc == 0;
    }
    if (rc == 0) {
        rc = node_quorum_start(qn->q);
    }
    if (rc != 0) {
        node_quorum_close(qn->q);
        qn->q = NULL;
    }
    return rc;
}

static bool is_damage(int rc)
{
    return rc == CONSENSUS_ECORRUPT || rc == REPLICATION_ECORRUPT;
}

static int member_open(struct sim *sim, struct sim_node *node)
{
    struct simq_node *qn = node->state;
    int rc = 0;

    qn->commit_index = 0;
    qn->applied_index = 0;
    for (unsigned t = 0; t < SIMQ_OPEN_TRIES; t++) {
        rc = member_try_open(sim, node);
        if (rc == 0 || is_damage(rc)) {
            break;
        }
        sim_tracef(sim, (int)node->index, "open failed: %s (try %u)",
                   simq_strerror(rc), t);
    }
    if (rc != 0) {
        sim_tracef(sim, (int)node->index, "open failed for good: %s",
                   simq_strerror(rc));
    }
    return rc;
}

/* Crash or clean stop: node.c froze the disk and marked the member's
 * pending client ops unknown first; closing completes every proposal and
 * read (ESHUTDOWN / EUNKNOWN), which releases their clients. */
static void member_close(struct sim *sim, struct sim_node *node, bool crash)
{
    struct simq_node *qn = node->state;

    (void)sim;
    (void)crash;
    node_quorum_close(qn->q);
    qn->q = NULL;
}

static int member_tick(struct sim *sim, struct sim_node *node,
                       uint64_t *next_ms)
{
    struct simq_node *qn = node->state;
    int rc = node_quorum_tick(qn->q, next_ms);

    if (rc == CONSENSUS_EUNAVAILABLE) {
        sim_trace(sim, (int)node->index, "unavailable", 0, 0);
        node->crash_pending = true;
        return 0;
    }
    if (rc == 0 && *next_ms <= sim_clock_mono_ms(sim, node)) {
        /* consensus_tick asks for "now" again while proposals wait behind
         * a full window of max_inflight_entries and nothing can change
         * until a message arrives: a busy loop (a consensus finding, see
         * docs/testing.md). Ask again a millisecond later instead. */
        *next_ms = sim_clock_mono_ms(sim, node) + 1;
    }
    return rc;
}

/* ---- the transport's callbacks ---- */

static void member_received(struct sim_node *node,
                            const struct transport_node_id *peer, uint16_t type,
                            const uint8_t *bytes, size_t size)
{
    struct simq_node *qn = node->state;

    if (type >= CONSENSUS_MESSAGE_FIRST && type <= CONSENSUS_MESSAGE_LAST) {
        consensus_received(node_quorum_consensus(qn->q), peer, type, bytes,
                           size);
    }
}

static void member_connected(struct sim_node *node,
                             const struct transport_node_id *peer)
{
    struct simq_node *qn = node->state;

    consensus_connected(node_quorum_consensus(qn->q), peer);
}

static void member_disconnected(struct sim_node *node,
                                const struct transport_node_id *peer,
                                int reason)
{
    struct simq_node *qn = node->state;

    (void)reason;
    consensus_disconnected(node_quorum_consensus(qn->q), peer);
}

static void member_writable(struct sim_node *node,
                            const struct transport_node_id *peer)
{
    struct simq_node *qn = node->state;

    consensus_writable(node_quorum_consensus(qn->q), peer);
}

/* ---- setup, heal, liveness, invariants ---- */

static void draw_workload(struct sim *sim, struct simq *s)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_WORKLOAD];
    unsigned read = (unsigned)sim_rng_range(rng, 10, 50);
    unsigned write = (unsigned)sim_rng_range(rng, 10, 30);
    unsigned cas = (unsigned)sim_rng_range(rng, 5, 30);

    s->keys = sim->config.keys == 0 ? 1 : sim->config.keys;
    s->keys = s->keys > SIMQ_KEYS_MAX ? SIMQ_KEYS_MAX : s->keys;
    s->mix[0] = read;
    s->mix[1] = read + write;
    s->mix[2] = read + write + cas; /* the rest (>= 10 %): inserts */
    s->timeout_ms = sim_rng_range(rng, 2000, 5000);
}

static int quorum_setup(struct sim *sim)
{
    struct simq *s = common_calloc(1, sizeof *s);
    int rc = 0;

    if (s == NULL) {
        return COMMON_ENOMEM;
    }
    sim->mode_state = s;
    draw_workload(sim, s);
    if (sinew_mutation_early_ack != NULL) {
        printf("mutation: %s\n", sinew_mutation_early_ack);
        fflush(stdout);
    }
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        /* consensus dials its members itself (io.c). */
        for (unsigned j = 0; j < SIM_NODES_MAX; j++) {
            sim->nodes[i].links[j] = false;
        }
        sim->nodes[i].state = &s->nodes[i];
        s->nodes[i].raft_id = i + 1;
    }
    for (unsigned i = 0; i < sim->config.nodes && rc == 0; i++) {
        rc = sim_node_start(sim, i);
    }
    return rc != 0 ? rc : simq_schema(sim);
}

static void quorum_teardown(struct sim *sim)
{
    for (unsigned i = 0; i < SIM_NODES_MAX; i++) {
        sim->nodes[i].state = NULL;
    }
    common_free(sim->mode_state);
    sim->mode_state = NULL;
}

/* The member nemeses call "the leader": the highest-term one that
 * believes it leads, ready or not (an isolated old leader counts). */
static int quorum_leader(struct sim *sim)
{
    int best = -1;
    uint64_t best_term = 0;

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct simq_node *qn = &simq_get(sim)->nodes[i];
        struct consensus_status s;

        if (!sim->nodes[i].up || qn->q == NULL) {
            continue;
        }
        consensus_status_get(node_quorum_consensus(qn->q), &s);
        if (s.state == CONSENSUS_LEADER && s.term >= best_term) {
            best = (int)i;
            best_term = s.term;
        }
    }
    return best;
}

static int quorum_heal(struct sim *sim)
{
    struct simq *s = simq_get(sim);

    s->probe_ok = false;
    return 0;
}

static bool quorum_settled(struct sim *sim)
{
    struct simq *s = simq_get(sim);
    int leader = simq_ready_leader(sim);
    struct consensus_status ls;

    if (!s->probe_ok || leader < 0 || s->rejoin.active) {
        return false;
    }
    consensus_status_get(
        node_quorum_consensus(simq_member(sim, (unsigned)leader)), &ls);
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct node_quorum *q = simq_member(sim, i);
        struct consensus_status st;

        if (q == NULL) {
            return false;
        }
        consensus_status_get(node_quorum_consensus(q), &st);
        if (st.applied_index < ls.commit_index) {
            return false;
        }
    }
    return true;
}

/* Election Safety (Raft §5.2) among up members, and applied indexes
 * that never go back while a member is up. */
static int quorum_invariants(struct sim *sim)
{
    struct simq *s = simq_get(sim);
    uint64_t leader_term[SIM_NODES_MAX];
    unsigned leaders = 0;

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct consensus_status st;

        if (!sim->nodes[i].up || s->nodes[i].q == NULL) {
            continue;
        }
        consensus_status_get(node_quorum_consensus(s->nodes[i].q), &st);
        if (st.applied_index < s->nodes[i].applied_index) {
            return sim_fail(sim, "applied", -1,
                            "node %u applied index went back %llu -> %llu", i,
                            (unsigned long long)s->nodes[i].applied_index,
                            (unsigned long long)st.applied_index);
        }
        if (st.commit_index < s->nodes[i].commit_index) {
            /* libraft 0.22 takes a reordered, stale AppendEntries'
             * leader_commit as is: a follower's commit index may drop
             * (never below what it applied, checked above). Traced, not
             * failed. */
            sim_trace(sim, (int)i, "commit-back", s->nodes[i].commit_index,
                      st.commit_index);
        }
        s->nodes[i].applied_index = st.applied_index;
        s->nodes[i].commit_index = st.commit_index;
        for (unsigned l = 0; l < leaders && st.state == CONSENSUS_LEADER; l++) {
            if (leader_term[l] == st.term) {
                return sim_fail(sim, "election", -1,
                                "two leaders in term %llu (one is node %u)",
                                (unsigned long long)st.term, i);
            }
        }
        if (st.state == CONSENSUS_LEADER) {
            leader_term[leaders++] = st.term;
        }
    }
    simq_rejoin_step(sim);
    simq_clients_due(sim);
    return sim_failed(sim) ? SIM_EFAILED : 0;
}

const struct sim_mode_ops sim_quorum_ops = {
    .name = "quorum",
    .setup = quorum_setup,
    .node_open = member_open,
    .node_close = member_close,
    .node_tick = member_tick,
    .received = member_received,
    .connected = member_connected,
    .disconnected = member_disconnected,
    .writable = member_writable,
    .client_step = simq_client_step,
    .leader = quorum_leader,
    .heal = quorum_heal,
    .settled = quorum_settled,
    .invariants = quorum_invariants,
    .final_check = simq_final_check,
    .teardown = quorum_teardown,
    .failover = NULL,
    .wipe = simq_wipe,
};
