/* SPDX-License-Identifier: MIT
 *
 * STABLE: quorum helper may code against this (additions only from here on).
 *
 * sim_int.h: the simulator's internal interfaces (chaos-design.md §2-§8).
 *
 * One struct sim runs one seed, single-threaded: seeded random streams,
 * one sim time (ms from SIM_T0_MS) from which every node derives its wall
 * and monotonic clocks, the in-memory network, the simulated disk (on the
 * engine's and consensus's I/O hooks), N nodes, M clients and the history
 * they record. What a replication mode adds (crdt, leader, quorum) comes
 * through one ops table, struct sim_mode_ops: the scheduler (loop.c), the
 * nemesis (nemesis.c) and the node lifecycle (node.c) are shared.
 *
 * Ownership: the sim owns everything reachable from it; a mode owns what
 * it hangs on sim->mode_state, node->state and client->state, and frees it
 * in its own close/teardown calls.
 */
#ifndef SINEW_SIM_INT_H
#define SINEW_SIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "sim.h"
#include "transport.h"

#define SIM_NODES_MAX 5
#define SIM_CLIENTS_MAX 10
#define SIM_T0_MS UINT64_C(1764686000000) /* replication/test/cluster.c's */
#define SIM_SITE_BYTES 16
#define SIM_TXN_ID_BYTES 16

struct sim;
struct sim_node;
struct sim_client;

/* The simulator's own codes (besides common's and the modules'). */
#define SIM_EFAILED (-10900)   /* a checker or invariant failed the seed */
#define SIM_EIO (-10901)       /* the run's own files (temp dir, --history) */
#define SIM_ENOTBUILT (-10902) /* a mode this binary was built without */

/* ---- random streams (rng.c): splitmix64, one per purpose, all split
 * from the seed, so adding draws to one stream never shifts another ---- */

enum sim_stream {
    SIM_RNG_SWARM = 0, /* the configuration (swarm.c) */
    SIM_RNG_NETWORK,   /* the in-memory network's faults and backoff */
    SIM_RNG_NEMESIS,   /* the fault schedule */
    SIM_RNG_WORKLOAD,  /* clients */
    SIM_RNG_DISK,      /* torn writes, I/O errors */
    SIM_RNG_CLOCK,     /* clock bumps and drift */
    SIM_RNG_NODE0,     /* node i: SIM_RNG_NODE0 + i (site ids, Raft) */
    SIM_RNG_COUNT = SIM_RNG_NODE0 + SIM_NODES_MAX
};

struct sim_rng {
    uint64_t state;
};

void sim_rng_split(uint64_t seed, struct sim_rng out[SIM_RNG_COUNT]);
uint64_t sim_rng_next(struct sim_rng *rng);
/* Uniform in [0, n) (n > 0); in [lo, hi] (lo <= hi); in [0, 1). */
uint64_t sim_rng_below(struct sim_rng *rng, uint64_t n);
uint64_t sim_rng_range(struct sim_rng *rng, uint64_t lo, uint64_t hi);
double sim_rng_unit(struct sim_rng *rng);
bool sim_rng_chance(struct sim_rng *rng, double p);

/* ---- the configuration of one seed (swarm.c, §6) ---- */

enum sim_topology {
    SIM_TOPOLOGY_MESH = 0,
    SIM_TOPOLOGY_RING = 1, /* crdt: i links i-1 and i+1 (mod n) */
    SIM_TOPOLOGY_LINE = 2, /* crdt: relay-only line 0-1-...-(n-1) */
};

enum sim_torn {
    SIM_TORN_NONE = 0,   /* a crash reverts every unsynced write */
    SIM_TORN_PREFIX = 1, /* keeps W1..Wk, cuts Wk+1 at 512 bytes */
};

/* Partition shapes the nemesis draws from (a bit set). */
#define SIM_PART_ISOLATE 0x1u
#define SIM_PART_HALVES 0x2u
#define SIM_PART_LEADER 0x4u
#define SIM_PART_ONE_WAY 0x8u
#define SIM_PART_RING 0x10u

struct sim_config {
    enum sim_mode mode;
    unsigned nodes;
    enum sim_topology topology;
    struct transport_memory_link_faults link; /* the default link */
    unsigned partitions;                      /* SIM_PART_* set; 0: none */
    uint64_t partition_hold_ms_max;
    bool resets;
    uint64_t crash_interval_ms; /* mean between crashes; 0: none */
    bool crash_all;             /* sometimes every node at once */
    bool point_crashes;         /* crash at the k-th write/fsync */
    uint64_t pause_ms_max;      /* 0: no pauses */
    int64_t clock_bump_ms_max;  /* 0: no bumps (crdt/leader) */
    int32_t drift_ppm_max;      /* 0: no drift */
    enum sim_torn torn;
    double fsync_eio_probability;
    double write_enospc_probability;
    bool synchronous_full; /* crdt/leader: FULL, else NORMAL */
    /* knobs */
    uint32_t election_timeout_ms;
    uint32_t heartbeat_ms;
    uint32_t snapshot_threshold;
    uint32_t snapshot_trailing;
    uint32_t sync_interval_ms;
    size_t batch_bytes;
    uint64_t retention_ms;
    uint64_t max_offset_ms;
    /* workload */
    unsigned clients;
    unsigned keys;
    uint64_t think_ms_max;
    bool tie_bursts; /* crdt */
    bool failover;   /* leader */
    bool wipes;      /* quorum: a node loses its data and rejoins */
    /* phases (sim ms) */
    uint64_t fault_ms;
    uint64_t healed_ms; /* light workload after heal, before final reads */
    uint64_t liveness_ms;
};

/* Draws the configuration of seed for options (overrides applied). */
void sim_swarm_draw(const struct sim_options *options, struct sim_rng *swarm,
                    struct sim_config *out);
/* One line, "SEED=0x.. mode=crdt nodes=3 drop=.07 ...", into out. */
void sim_swarm_format(uint64_t seed, const struct sim_config *config, char *out,
                      size_t size);

/* ---- history (history.c, §7) ---- */

enum sim_outcome {
    SIM_PENDING = 0,
    SIM_OK = 1,
    SIM_FAIL = 2,    /* provably not applied */
    SIM_UNKNOWN = 3, /* may or may not have been applied */
};

enum sim_op_kind {
    /* quorum registers (check.h's model) */
    SIM_OP_READ = 0,
    SIM_OP_WRITE,
    SIM_OP_CAS,
    /* sets: every mode (elems table) */
    SIM_OP_ELEM_INSERT,
    /* crdt cells */
    SIM_OP_CELL_INSERT, /* all columns */
    SIM_OP_CELL_UPDATE, /* the columns in `columns` */
    SIM_OP_CELL_DELETE,
    /* leader */
    SIM_OP_APPEND,
    SIM_OP_LOG_READ,
};

#define SIM_CELL_COLUMNS 3

struct sim_op {
    size_t index;   /* in the history */
    int64_t client; /* client id (a new one after an unknown) */
    enum sim_op_kind kind;
    unsigned node; /* where it ran */
    int64_t key;
    int64_t value;    /* write/cas new/elem/append; read: what it read */
    int64_t expected; /* cas */
    bool cas_ok;      /* completed cas: succeeded */
    unsigned columns; /* crdt update: bit c = column c written */
    int64_t cells[SIM_CELL_COLUMNS]; /* crdt insert/update values */
    uint64_t txn; /* crdt: ops of one multi-row transaction share it */
    uint64_t hlc; /* crdt: engine_last_stamp() after commit */
    uint8_t site[SIM_SITE_BYTES]; /* crdt: replication_site_id() */
    uint64_t version; /* crdt: ordinal of the site's changing txns */
    uint64_t epoch;   /* leader */
    uint8_t txn_id[SIM_TXN_ID_BYTES]; /* quorum */
    int64_t invoke_ns;                /* sim t * 1e6 + seq */
    int64_t complete_ns;
    enum sim_outcome outcome;
    /* leader reads: the (v, epoch) pairs read, common_malloc'd */
    int64_t *read_values;
    uint64_t *read_epochs;
    size_t read_count;
};

/* Appends an op (copied from *op, outcome PENDING) stamped with the
 * current history time; returns its index. Aborts (ASSERT) on ENOMEM. */
size_t sim_history_invoke(struct sim *sim, const struct sim_op *op);
/* The op at index, owned by the history: fill result fields through it.
 * Valid until the next invoke. */
struct sim_op *sim_history_op(struct sim *sim, size_t index);
/* Completes op index now with outcome; result: read value (SIM_OP_READ). */
void sim_history_complete(struct sim *sim, size_t index,
                          enum sim_outcome outcome, int64_t result);
/* Marks every PENDING op on node unknown (crash, point crash). */
void sim_history_unknown_on(struct sim *sim, unsigned node);
/* History time: t * 1e6 + (++seq), strictly increasing. */
int64_t sim_history_now_ns(struct sim *sim);
/* Writes the history as JSON lines (every op) to path. */
int sim_history_write(const struct sim *sim, const char *path);

/* ---- clocks (clock.c, §3) ---- */

struct sim_clock {
    int64_t offset_ms;       /* wall only; jumps by nemesis */
    int32_t drift_ppm;       /* both clocks, since drift_since_ms */
    int64_t drift_acc_ms;    /* drift accumulated before drift_since_ms */
    uint64_t drift_since_ms; /* sim time of the last drift change */
};

struct sim_node;
/* wall_i(t) = T0 + t + offset + drift*t; mono_i(t) = T0 + t + drift*t. */
uint64_t sim_clock_wall_ms(const struct sim *sim, const struct sim_node *node);
uint64_t sim_clock_mono_ms(const struct sim *sim, const struct sim_node *node);
/* The smallest sim t with the node's clock (wall or mono) >= at_ms. */
uint64_t sim_clock_due(const struct sim *sim, const struct sim_node *node,
                       bool wall, uint64_t at_ms);
/* Changes node's drift from now on (both clocks stay continuous). */
void sim_clock_set_drift(struct sim *sim, struct sim_node *node, int32_t ppm);
/* transport_clock adapters: ctx is the struct sim_node. */
uint64_t sim_clock_wall_cb(void *ctx);
uint64_t sim_clock_mono_cb(void *ctx);

/* ---- disk (disk.c, §3) ---- */

struct sim_disk;

/* Installs the engine and consensus I/O hooks for sim (process-wide: one
 * sim per process; sim_run_seed runs in a forked child). */
int sim_disk_open(struct sim *sim, struct sim_disk **out);
void sim_disk_close(struct sim_disk *disk); /* restores default hooks */
/* Crash: node's disk freezes (later writes dropped, fsyncs no-ops). */
void sim_disk_freeze(struct sim_disk *disk, unsigned node);
/* Reverts node's unsynced writes (torn model), unfreezes. */
void sim_disk_revert(struct sim_disk *disk, unsigned node);
/* Faults on (fault phase) or off (healed phase). */
void sim_disk_faults(struct sim_disk *disk, bool on);
/* Point crash: the k-th write/fsync of node (from now) freezes its disk
 * and asks the loop to crash it at the end of the step; 0 disarms. */
void sim_disk_arm_point_crash(struct sim_disk *disk, unsigned node, uint64_t k);
/* Bytes of unsynced writes node holds (tests, trace). */
uint64_t sim_disk_unsynced_bytes(const struct sim_disk *disk, unsigned node);

/* ---- nodes (node.c) ---- */

struct sim_node {
    struct sim *sim;
    unsigned index;
    struct transport_node_id id; /* 32 bytes of (index + 1) */
    char address[8];             /* "n<i>" */
    char dir[512];               /* <run dir>/n<i> */
    char db_path[600];           /* dir/db */
    struct sim_clock clock;
    bool up;            /* open (not crashed) */
    bool paused;        /* SIGSTOP: no ticks, no new client ops */
    bool crash_pending; /* point crash hit: crash at the end of the step */
    bool tick_now;      /* a callback arrived: tick at this instant */
    uint64_t next_ms;   /* next tick on the node's clock (wall or mono) */
    bool clock_wall;    /* ticks on wall (crdt/leader) or mono (quorum) */
    bool links[SIM_NODES_MAX];   /* keeps a connection to node j */
    struct transport *transport; /* the endpoint while up */
    unsigned restarts;
    uint64_t restart_at_ms; /* down: restart at this sim time (0: never) */
    void *state;            /* the mode's */
};

/* Opens node's endpoint (callbacks routed to the mode ops), then
 * ops->node_open, then listen + connect its links. */
int sim_node_start(struct sim *sim, unsigned index);
/* Crash (freeze disk, mark in-flight unknown, ops->node_close(crash),
 * endpoint closed, disk reverted) or clean stop (crash false). */
void sim_node_stop(struct sim *sim, unsigned index, bool crash);
void sim_node_pause(struct sim *sim, unsigned index, bool paused);
/* Deletes everything in a down node's dir (its data lost: the disk broke
 * and was replaced); 0 or SIM_EIO. */
int sim_node_wipe(struct sim *sim, unsigned index);
/* Deletes path and everything under it (errors ignored: scratch). */
void sim_remove_tree(const char *path);

/* ---- clients ---- */

struct sim_client {
    unsigned index;
    int64_t id;      /* recorded client id; bumped after an unknown */
    uint64_t n;      /* values issued: value = (id << 32) | ++n */
    uint64_t due_ms; /* sim time of the next invoke */
    bool busy;       /* an async op (quorum) is outstanding */
    bool active;     /* runs in this phase (healed: a light subset) */
    size_t op;       /* its history index while busy */
    unsigned node;   /* target */
    void *state;     /* the mode's */
};

/* A fresh unique value for client. */
int64_t sim_client_value(struct sim_client *client);

/* ---- the mode ops (node_repl.c: crdt and leader; node_quorum.c) ---- */

struct sim_result;

struct sim_mode_ops {
    const char *name;
    /* Allocates sim->mode_state; starts every node (sim_node_start),
     * bootstraps, creates the schema and seed rows. */
    int (*setup)(struct sim *sim);
    /* Opens the node's state on node->transport (already created, not
     * yet listening) and its files; restart too. */
    int (*node_open)(struct sim *sim, struct sim_node *node);
    /* Closes the node's state, sending nothing; crash: in-flight client
     * ops become unknown (the sim marks the history already). */
    void (*node_close)(struct sim *sim, struct sim_node *node, bool crash);
    /* Ticks; *next_ms on the node's clock. */
    int (*node_tick)(struct sim *sim, struct sim_node *node, uint64_t *next_ms);
    /* The transport's callbacks for an up node (ctx: the node). */
    void (*received)(struct sim_node *node,
                     const struct transport_node_id *peer, uint16_t type,
                     const uint8_t *bytes, size_t size);
    void (*connected)(struct sim_node *node,
                      const struct transport_node_id *peer);
    void (*disconnected)(struct sim_node *node,
                         const struct transport_node_id *peer, int reason);
    void (*writable)(struct sim_node *node,
                     const struct transport_node_id *peer);
    /* One client step at its due time: invoke (maybe complete) an op and
     * set client->due_ms. */
    int (*client_step)(struct sim *sim, struct sim_client *client);
    /* The node that leads/writes now, or -1 (nemesis "isolate leader"). */
    int (*leader)(struct sim *sim);
    /* Healed phase begins (after the sim healed links, clocks, disks and
     * restarted nodes): mode repairs (rebuild diverged, re-promote). */
    int (*heal)(struct sim *sim);
    /* Liveness reached (digests equal, logs equal, leader ready)? */
    bool (*settled)(struct sim *sim);
    /* Inline invariants at the end of an instant: 0 or sim_fail'd. */
    int (*invariants)(struct sim *sim);
    /* Final reads and checkers: 0 or sim_fail'd. */
    int (*final_check)(struct sim *sim);
    /* Frees sim->mode_state (nodes are stopped by then). */
    void (*teardown)(struct sim *sim);
    /* Leader mode: the operator promotes another node (may be NULL). */
    int (*failover)(struct sim *sim);
    /* Quorum mode: node's data is lost (crash, files deleted) and it
     * comes back as a new member through a membership change (may be
     * NULL). */
    int (*wipe)(struct sim *sim, unsigned node);
};

extern const struct sim_mode_ops sim_crdt_ops;
extern const struct sim_mode_ops sim_leader_ops;
/* node_quorum.c + work_quorum.c (quorum helper); absent builds say so. */
extern const struct sim_mode_ops sim_quorum_ops;

/* ---- the sim ---- */

enum sim_phase {
    SIM_PHASE_SETUP = 0,
    SIM_PHASE_FAULT = 1,
    SIM_PHASE_HEALED = 2,
    SIM_PHASE_FINAL = 3,
};

struct sim_nemesis; /* nemesis.c */
struct sim_trace;   /* trace.c */

struct sim {
    struct sim_options options;
    struct sim_config config;
    const struct sim_mode_ops *ops;
    struct sim_rng rng[SIM_RNG_COUNT];
    uint64_t now_ms; /* sim time, from 0 */
    uint64_t seq;    /* history ns tiebreak within an instant */
    enum sim_phase phase;
    uint64_t phase_end_ms;
    char dir[256]; /* the run's temp dir */
    struct transport_memory_network *net;
    struct sim_disk *disk;
    struct sim_nemesis *nemesis;
    struct sim_node nodes[SIM_NODES_MAX];
    struct sim_client clients[SIM_CLIENTS_MAX];
    struct sim_op *history;
    size_t history_count;
    size_t history_capacity;
    uint64_t trace_hash;
    struct sim_result *result; /* where sim_fail writes */
    void *mode_state;
    uint64_t healed_at_ms;   /* when the healed phase began */
    uint64_t settled_at_ms;  /* when settled() first held; 0: not yet */
    uint64_t skew_beyond_ms; /* sim ms with skew > max_offset (crdt) */
};

/* Records the first failure (checker name, key or -1, message) into the
 * result and returns COMMON_EINVAL (the failed-seed code). */
int sim_fail(struct sim *sim, const char *checker, int64_t key,
             const char *format, ...) __attribute__((format(printf, 4, 5)));
bool sim_failed(const struct sim *sim);

/* Trace (trace.c): folds an event into the trace hash; prints it with
 * --trace. kind: short word ("tick", "crash", "op"...). */
void sim_trace(struct sim *sim, int node, const char *kind, uint64_t a,
               uint64_t b);
void sim_tracef(struct sim *sim, int node, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs the scheduler until sim time end_ms (loop.c); 0 or the failure. */
int sim_loop_run(struct sim *sim, uint64_t end_ms);
/* Runs until ops->settled() holds or end_ms: 0, or a liveness failure. */
int sim_loop_until_settled(struct sim *sim, uint64_t end_ms);

/* Nemesis (nemesis.c): draws the schedule for the fault phase; runs due
 * actions; heals everything. */
int sim_nemesis_plan(struct sim *sim);
void sim_nemesis_free(struct sim *sim);
int sim_nemesis_due(struct sim *sim, uint64_t *next_ms);
int sim_nemesis_heal(struct sim *sim);

#endif /* SINEW_SIM_INT_H */
