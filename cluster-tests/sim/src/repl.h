/* SPDX-License-Identifier: MIT
 *
 * repl.h: the crdt and leader modes' shared node state (node_repl.c) and
 * the hooks their workloads (work_crdt.c, work_leader.c) use.
 */
#ifndef SINEW_SIM_REPL_H
#define SINEW_SIM_REPL_H

#include "engine.h"
#include "replication.h"
#include "sim_int.h"

struct repl_node {
    struct engine_db *db;
    struct replication *r;
    uint64_t last_hlc;     /* the largest stamp it issued (across restarts) */
    uint64_t writer_epoch; /* leader: > 0 while it believes it writes */
    /* What the invariants saw at the last instant while it stayed up
     * (invariants_repl.c); seen_valid false after a start. */
    struct replication_origin_stats *seen; /* owned */
    size_t seen_count;
    uint64_t seen_epoch;
    bool seen_diverged;
    bool seen_valid;
};

struct repl {
    struct repl_node nodes[SIM_NODES_MAX];
    int writer;                    /* leader: the operator's writer */
    uint64_t epoch;                /* leader: the operator's current epoch */
    uint64_t txn;                  /* crdt: multi-row transaction ids */
    uint64_t next_settle_check_ms; /* settled() compares dumps this often */
};

/* Runs sql on db with up to 4 int64 parameters (?1..); 0 or the engine's
 * code; *changes: engine_changes() after it. */
int repl_exec(struct engine_db *db, const char *sql, const int64_t *args,
              int count, int64_t *changes);
/* Rows of sql (int64 columns only) into out (common_malloc'd, rows x
 * columns); 0 or the engine's code. */
int repl_query(struct engine_db *db, const char *sql, int columns,
               int64_t **out, size_t *rows);
/* A canonical dump of node (user tables and crdt metadata), malloc'd. */
char *repl_dump(struct engine_db *db);
/* Only its version vector (the cheap first test of convergence). */
char *repl_dump_vv(struct engine_db *db);

/* An up, unpaused node (drawn from the workload stream), or -1. */
int repl_pick_node(struct sim *sim);

int repl_setup(struct sim *sim);
int repl_node_open(struct sim *sim, struct sim_node *node);
void repl_node_close(struct sim *sim, struct sim_node *node, bool crash);
int repl_node_tick(struct sim *sim, struct sim_node *node, uint64_t *next_ms);
void repl_received(struct sim_node *node, const struct transport_node_id *peer,
                   uint16_t type, const uint8_t *bytes, size_t size);
void repl_connected(struct sim_node *node,
                    const struct transport_node_id *peer);
void repl_disconnected(struct sim_node *node,
                       const struct transport_node_id *peer, int reason);
void repl_writable(struct sim_node *node, const struct transport_node_id *peer);
/* The per-instant invariants of crdt and leader mode
 * (invariants_repl.c); 0 or SIM_EFAILED. */
int repl_invariants(struct sim *sim);
/* Forgets what the invariants saw of node i (it stopped). */
void repl_invariants_forget(struct sim *sim, unsigned i);
void repl_teardown(struct sim *sim);

#endif /* SINEW_SIM_REPL_H */
