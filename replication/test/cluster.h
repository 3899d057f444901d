/* SPDX-License-Identifier: MIT
 *
 * cluster.h: N sinew replicas in one test process, over the in-memory
 * network (transport.h), for the replication tests.
 *
 * Each node is an engine database (in memory, or a file in the cluster's
 * temporary directory so it can be stopped and started again), a memory
 * transport endpoint, and a struct replication whose events and ticks the
 * cluster drives. Time is simulated: one cluster clock (milliseconds)
 * that cluster_run() advances to the next due event; each node sees it
 * plus its own skew. Node i's site id is 16 bytes of 0x11 * (i + 1), so
 * site order is node order; its network identity is 32 bytes of i + 1.
 * Randomness (the network's faults and backoff) comes from the cluster's
 * seeded generator, so a seed replays a run exactly.
 */
#ifndef SINEW_REPLICATION_TEST_CLUSTER_H
#define SINEW_REPLICATION_TEST_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_test.h"
#include "engine.h"
#include "replication.h"
#include "transport.h"

#define CLUSTER_NODES_MAX 5
#define CLUSTER_T0_MS UINT64_C(1764686000000)

struct cluster;

struct cluster_node {
    struct cluster *cluster;
    unsigned index;
    struct transport_node_id id;
    char address[24];
    char path[512]; /* "" for an in-memory database */
    struct engine_db *db;
    struct transport *transport;
    struct replication *replication;
    int64_t skew_ms;       /* added to the cluster clock */
    uint64_t next_tick_ms; /* on the node's clock */
    bool up;
    bool paused;
    bool links[CLUSTER_NODES_MAX]; /* keeps a connection to node j */
    uint64_t writer_epoch;         /* leader mode: > 0 while the writer */
    uint8_t site_byte;             /* the site id's byte; 0: 0x11 * (i+1) */
    uint64_t last_stamp;           /* cluster_exec's commit stamp (its HLC) */
    int64_t last_changes;          /* and its engine_changes() */
    char last_error[256];          /* and its engine_errmsg() */
    unsigned errors;               /* ERROR lines logged */
    unsigned warnings;             /* WARN lines logged */
};

struct cluster {
    uint64_t now_ms;
    struct common_test_rng rng;
    struct transport_memory_network *net;
    struct cluster_node nodes[CLUSTER_NODES_MAX];
    size_t count;
    enum replication_mode mode;
    const char *schema; /* run on every node's new database */
    bool files;
    char dir[256];
    uint32_t sync_interval_ms;
    size_t batch_bytes;
    uint64_t evict_after_ms; /* 0: the default */
    uint64_t retention_ms;
};

/* Sets up n nodes (none started). files: databases on disk. */
void cluster_init(struct cluster *c, size_t n, enum replication_mode mode,
                  const char *schema, uint64_t seed, bool files);
/* Stops every node, frees the network, removes the files. */
void cluster_free(struct cluster *c);

/* Opens node i's database (running the schema on a new one), its
 * endpoint and its replication, and dials every node it links to. */
void cluster_start(struct cluster *c, unsigned i);
/* Closes node i cleanly (replication, endpoint, database). */
void cluster_stop(struct cluster *c, unsigned i);
void cluster_start_all(struct cluster *c);

/* Node i keeps a connection to node j (and j to i). */
void cluster_link(struct cluster *c, unsigned i, unsigned j);
void cluster_link_all(struct cluster *c);

/* Pauses or resumes node i (SIGSTOP): no ticks, network events held. */
void cluster_pause(struct cluster *c, unsigned i, bool paused);

/* Runs the cluster for ms of simulated time. */
void cluster_run(struct cluster *c, uint64_t ms);

/* Runs sql on node i and ticks it (a commit ships at once); fails the
 * test on error. cluster_exec_rc returns the code instead. Both note the
 * statement's stamp and changes() before the tick (which may merge). */
void cluster_exec(struct cluster *c, unsigned i, const char *sql);
int cluster_exec_rc(struct cluster *c, unsigned i, const char *sql);

/* The rows of sql on node i as text: values joined by '|', rows by '\n'. */
void cluster_query(struct cluster *c, unsigned i, const char *sql, char *out,
                   size_t size);
void cluster_assert_query(struct cluster *c, unsigned i, const char *sql,
                          const char *expected);

/* A canonical dump of node i: every user table by key, then the crdt
 * metadata (registers, version vector). Returns a malloc'd string. */
char *cluster_dump(struct cluster *c, unsigned i);
/* Every started node's dump equals node first's; nothing waits. */
void cluster_assert_converged(struct cluster *c);

#endif /* SINEW_REPLICATION_TEST_CLUSTER_H */
