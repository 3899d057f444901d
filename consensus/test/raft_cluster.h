/* SPDX-License-Identifier: MIT
 *
 * raft_cluster.h: N consensus members in one test process, over the
 * in-memory network (transport.h), on a simulated clock.
 *
 * Each member has a data directory in the cluster's temporary directory
 * (its Raft log, so it can stop and start again from disk), a memory
 * transport endpoint and a test state machine: the list of the commands
 * it applied, by index, which the safety check compares across members
 * (State Machine Safety, Raft §5.4.3: no two members apply different
 * commands at one index). The machine keeps its state across a restart
 * like a database would, and skips indexes it already applied; a member
 * can also lose it (rc_wipe_machine) to exercise snapshot restore.
 * Randomness (elections, the network's faults) comes from the cluster's
 * seeded generator, so a seed replays a run exactly.
 */
#ifndef SINEW_CONSENSUS_TEST_RAFT_CLUSTER_H
#define SINEW_CONSENSUS_TEST_RAFT_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_test.h"
#include "consensus.h"
#include "transport.h"

#define RC_NODES_MAX 5

/* One applied command. */
struct rc_applied {
    uint64_t index;
    uint64_t term;
    uint64_t value; /* the command: 8 bytes */
};

struct rc_machine {
    struct rc_applied *applied; /* in index order */
    size_t count;
    size_t capacity;
    uint64_t applied_index;  /* the last entry applied (commands or not) */
    unsigned restores;       /* snapshots installed */
    unsigned snapshots;      /* snapshots taken */
    uint64_t fail_value;     /* apply fails on this command (0: never) */
    size_t snapshot_padding; /* zero bytes appended to every snapshot */
    bool fail_restore;       /* restore fails */
};

struct rc_cluster;
struct rc_node;

/* How members are made, for tests of what runs on consensus (the node's
 * quorum members): open makes member node's consensus from config (the
 * cluster's settings; the state machine is the opener's), close ends it,
 * tick drives it. NULL: the test state machine above. */
struct rc_member_ops {
    void (*open)(struct rc_node *node, const struct consensus_config *config,
                 struct consensus **out);
    void (*close)(struct rc_node *node);
    int (*tick)(struct rc_node *node, uint64_t *next_ms);
};

struct rc_node {
    struct rc_cluster *cluster;
    unsigned index;
    uint64_t id; /* Raft id: index + 1 */
    struct transport_node_id node;
    char address[16];
    char dir[600];
    struct transport *transport;
    struct consensus *consensus;
    struct rc_machine machine;
    uint64_t next_tick_ms;
    bool up;
    bool unavailable; /* its tick answered CONSENSUS_EUNAVAILABLE */
    void *user;       /* the member ops' own state */
    struct common_log log;
};

struct rc_cluster {
    uint64_t now_ms;
    struct common_test_rng rng;
    struct transport_memory_network *net;
    struct rc_node nodes[RC_NODES_MAX];
    size_t count;
    char dir[512];
    /* Settings for members started from now on (0: the defaults). */
    uint32_t election_timeout_ms;
    uint32_t heartbeat_ms;
    uint32_t snapshot_threshold;
    uint32_t snapshot_trailing;
    size_t max_entry_bytes;
    /* The transport's limits for members started from now on (0: its
     * defaults); max_message_bytes also goes to consensus. */
    struct transport_limits limits;
    const struct rc_member_ops *ops; /* NULL: the test state machine */
};

/* A proposal's outcome, written by its callback. */
struct rc_op {
    bool done;
    int status;
    uint64_t index;
    int result;
};

void rc_init(struct rc_cluster *c, size_t n, uint64_t seed);
void rc_free(struct rc_cluster *c);

/* Bootstraps members [0, voters) as voters, each with the same list. */
void rc_bootstrap(struct rc_cluster *c, size_t voters);
void rc_start(struct rc_cluster *c, unsigned i);
/* rc_start() that returns consensus_start()'s code (the member stays down
 * when it fails). */
int rc_try_start(struct rc_cluster *c, unsigned i);
void rc_stop(struct rc_cluster *c, unsigned i);
void rc_start_all(struct rc_cluster *c);
/* Forgets member i's state machine (its Raft log stays). */
void rc_wipe_machine(struct rc_cluster *c, unsigned i);

/* Advances the clock by ms, running every event and tick due. */
void rc_run(struct rc_cluster *c, uint64_t ms);
/* Runs until pred(c, arg) holds (checked every millisecond of events) or
 * max_ms passed; returns whether it held. */
bool rc_run_until(struct rc_cluster *c,
                  bool (*pred)(struct rc_cluster *, void *), void *arg,
                  uint64_t max_ms);

/* The member that is a ready leader (the one of the highest term if
 * several think so), or -1. */
int rc_leader(struct rc_cluster *c);
/* Runs until a ready leader exists (fails the test after max_ms). */
unsigned rc_wait_leader(struct rc_cluster *c, uint64_t max_ms);

/* Reads waiting for consensus_read_barrier(): how many completed, and the
 * last error among them (0: none). */
struct rc_reads {
    unsigned done;
    int status;
};

/* A consensus_barrier_cb counting into ctx, a struct rc_reads. */
void rc_read_done(void *ctx, int status);

/* An admin call's outcome (consensus_add(), _remove(), _transfer()...),
 * written by rc_change_done(); rc_change_is_done() is its rc_run_until()
 * predicate. */
struct rc_change {
    bool done;
    int status;
};

void rc_change_done(void *ctx, int status);
bool rc_change_is_done(struct rc_cluster *c, void *arg);

/* Proposes value on member i; op receives the outcome. Returns
 * consensus_propose()'s code. */
int rc_propose(struct rc_cluster *c, unsigned i, uint64_t value,
               struct rc_op *op);
/* Proposes on the leader and runs until it completes: the index. */
uint64_t rc_commit(struct rc_cluster *c, uint64_t value);

/* Cuts both ways between i and j (and their connection), or heals. */
void rc_partition(struct rc_cluster *c, unsigned i, unsigned j);
void rc_heal(struct rc_cluster *c, unsigned i, unsigned j);
/* Cuts i from every other member, or heals it. */
void rc_isolate(struct rc_cluster *c, unsigned i);
void rc_rejoin(struct rc_cluster *c, unsigned i);

/* Fails the test if two members applied different commands at an index. */
void rc_check_safety(struct rc_cluster *c);
/* Whether member i applied a command with value. */
bool rc_has_value(const struct rc_cluster *c, unsigned i, uint64_t value);
/* Whether every up member applied through index. */
bool rc_all_applied(struct rc_cluster *c, uint64_t index);

#endif /* SINEW_CONSENSUS_TEST_RAFT_CLUSTER_H */
