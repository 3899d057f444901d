/* SPDX-License-Identifier: MIT
 *
 * quorum_test.h: quorum-mode members (node_quorum: engine database +
 * replication's quorum state machine + consensus) on the consensus
 * tests' simulated cluster (consensus/test/raft_cluster.h), and helpers
 * to write and read SQL through them, for the node's quorum tests.
 */
#ifndef SINEW_NODE_TEST_QUORUM_TEST_H
#define SINEW_NODE_TEST_QUORUM_TEST_H

#include "quorum.h"
#include "raft_cluster.h"

/* Makes c's members node_quorum members (call before starting any). */
void qt_use_quorum_members(struct rc_cluster *c);

struct node_quorum *qt_member(struct rc_cluster *c, unsigned i);

/* A write's outcome, filled by its callback. */
struct qt_write {
    bool done;
    int status;
    uint64_t index;
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    char sql[256];
};

/* Starts sql as a transaction on member i (a fresh random txn id); the
 * immediate return code of node_quorum_write. */
int qt_write_start(struct rc_cluster *c, unsigned i, const char *sql,
                   struct qt_write *w);
/* Writes sql on the leader and runs until it committed (fails the test
 * otherwise). */
void qt_exec(struct rc_cluster *c, const char *sql);
/* Runs until w completed; false after max_ms. */
bool qt_wait(struct rc_cluster *c, struct qt_write *w, uint64_t max_ms);

/* The single integer sql returns on member i's database, or fallback when
 * it returns no row. */
int64_t qt_query_int(struct rc_cluster *c, unsigned i, const char *sql,
                     int64_t fallback);

#endif /* SINEW_NODE_TEST_QUORUM_TEST_H */
