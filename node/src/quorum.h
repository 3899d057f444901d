/* SPDX-License-Identifier: MIT
 *
 * quorum.h: one quorum-mode member of the node: an engine database kept
 * in step by Raft. It joins the two modules that never include each
 * other (DESIGN.md): consensus (the replicated log) and replication's
 * quorum state machine (the engine side: capture on the leader, apply
 * everywhere), passing the change sets' bytes from one to the other.
 *
 * A write: node_quorum_write() runs the caller's transaction on the
 * leader's database and captures its change set without committing
 * (replication_quorum_execute), proposes it (consensus_propose: group
 * proposal packs concurrent ones into one entry), and completes once the
 * entry is committed by a majority and applied here. A transaction that
 * changed nothing is a read: it completes after a read barrier, so the
 * state it read was current (linearizable). A read: node_quorum_read()
 * runs the caller's function after a read barrier.
 *
 * Outcomes (node_quorum_done_cb's status): 0 committed; a deterministic
 * failure of the set at apply (ENGINE_ECONSTRAINT...: nothing of it was
 * written anywhere); REPLICATION_ECONFLICT (another transaction in flight
 * wrote the same row: retry); CONSENSUS_ENOTLEADER (ask
 * consensus_status_get() who leads; nothing was proposed);
 * CONSENSUS_EUNKNOWN (leadership was lost after proposing: the outcome is
 * unknown here; node_quorum_txn_status() on the new leader, once it has
 * applied its barrier, answers it); CONSENSUS_ESHUTDOWN.
 *
 * Durability: the database runs with PRAGMA synchronous=OFF, since
 * Raft's log is synced before an entry counts: after a crash the database
 * comes back at some earlier applied index and the log (or the latest
 * snapshot) brings it forward. Nothing acknowledged depends on the
 * database's own fsync.
 *
 * Threads: every call, and every use of the database handle, on one
 * thread (the node's loop).
 */
#ifndef SINEW_NODE_QUORUM_H
#define SINEW_NODE_QUORUM_H

#include <stdint.h>

#include "consensus.h"
#include "engine.h"
#include "replication.h"

struct node_quorum;

struct node_quorum_config {
    const char *db_path; /* the engine database file; copied */
    /* consensus settings (copied; their pointers borrowed as consensus.h
     * says); the state machine is this member's own. */
    struct consensus_config consensus;
};

/* Opens the database and the Raft log; nothing runs until
 * node_quorum_start(). */
int node_quorum_open(const struct node_quorum_config *config,
                     struct node_quorum **out);
void node_quorum_close(struct node_quorum *q);

/* consensus_bootstrap() and consensus_start(). */
int node_quorum_bootstrap(struct node_quorum *q,
                          const struct consensus_member *members, size_t count);
int node_quorum_start(struct node_quorum *q);

/* The member's Raft (forward the transport's callbacks to it; status and
 * membership calls) and its database (reads; writes only through
 * node_quorum_write). Owned by q. */
struct consensus *node_quorum_consensus(struct node_quorum *q);
struct engine_db *node_quorum_db(struct node_quorum *q);

/* consensus_tick(), and forgets in-flight transactions when leadership
 * is lost (a later leader's log decides them). */
int node_quorum_tick(struct node_quorum *q, uint64_t *next_ms);

typedef void (*node_quorum_done_cb)(void *ctx, int status, uint64_t index);

/* Runs fn(fn_ctx, db) as a transaction on the leader and commits it
 * through Raft (see the top). txn_id: 16 bytes naming the transaction
 * (copied), unique per transaction: a retry with the same id applies at
 * most once. 0 and done() later (from node_quorum_tick()), or an error
 * now and done() never: CONSENSUS_ENOTLEADER, REPLICATION_ECONFLICT,
 * fn's error, engine codes. */
int node_quorum_write(struct node_quorum *q, engine_apply_cb fn, void *fn_ctx,
                      const uint8_t *txn_id, node_quorum_done_cb done,
                      void *ctx);

/* Calls done(ctx, 0, 0) once a read may run linearizably on the
 * database (or with the barrier's error). */
int node_quorum_read(struct node_quorum *q, node_quorum_done_cb done,
                     void *ctx);

/* The outcome of a transaction this member has applied:
 * replication_quorum_txn_status(). */
int node_quorum_txn_status(struct node_quorum *q, const uint8_t *txn_id,
                           uint64_t *index, int *result);

#endif /* SINEW_NODE_QUORUM_H */
