/* SPDX-License-Identifier: MIT
 *
 * crdt_test.h: in-process crdt nodes for the crdt tests (test_crdt*.c),
 * one copy of their setup: an engine (in memory or over a file), a fake
 * physical clock moved by hand, a fixed site id (16 times site_byte),
 * change sets handed from one node's change log to another's
 * replication__crdt_apply() through a pool of deep copies, and canonical
 * text dumps of a node's state for comparing nodes.
 *
 * What a dump holds is the test's choice (struct crdt_test_dump_spec):
 * crdt_test_dump_all is every user table, the schema, the registers, the
 * column catalog and the version vector; a test may list its own queries
 * or build each table's query its own way. Every helper fails the running
 * cmocka test on an error, so callers check nothing.
 */
#ifndef SINEW_REPLICATION_CRDT_TEST_H
#define SINEW_REPLICATION_CRDT_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_test.h"
#include "crdt.h"
#include "replication.h"

#define CRDT_TEST_T0 UINT64_C(1764686000000)
/* The change sets one pool holds (the randomized test of test_crdt.c
 * ships the most). */
#define CRDT_TEST_POOL_MAX 4096
#define CRDT_TEST_DUMP_SIZE ((size_t)1 << 20)

/* Zeroed before the first open; the fields stay across a close, so a
 * node reopened over its file keeps its clock, counters and shipped. */
struct crdt_test_node {
    struct engine_db *db; /* NULL: closed */
    uint64_t now_ms;      /* the fake physical clock (0: CRDT_TEST_T0) */
    struct hlc clock;
    struct replication__crdt *crdt;
    uint8_t site_byte;
    uint64_t shipped;  /* local versions already put in a pool */
    unsigned warnings; /* WARN messages logged by the crdt state */
    unsigned errors;   /* ERROR messages (each also printed) */
};

struct crdt_test_pool {
    struct replication__changeset *items[CRDT_TEST_POOL_MAX]; /* owned */
    size_t count;
};

/* Rows as lines, columns joined by '|', NULL as "NULL". Large: static. */
struct crdt_test_dump {
    char text[CRDT_TEST_DUMP_SIZE];
    size_t size;
};

/* Writes into sql (size bytes) the SELECT that dumps table. */
typedef void crdt_test_table_sql_fn(struct crdt_test_node *node,
                                    const char *table, char *sql, size_t size);

struct crdt_test_dump_spec {
    /* Each table of sqlite_schema, by name, its rows by this query (NULL:
     * none), then the queries of sql. */
    crdt_test_table_sql_fn *table_sql;
    const char *const *sql; /* borrowed: static */
    size_t sql_count;
};

/* Every table, keyed rows without their (local) rowid, the schema, the
 * registers, the column catalog and the version vector. */
extern const struct crdt_test_dump_spec crdt_test_dump_all;

/* A temporary directory and the path of a database file in it. */
struct crdt_test_dir {
    char dir[512];
    char path[600];
};

/* Makes a fresh directory named prefix_XXXXXX in $TMPDIR (else /tmp). */
void crdt_test_dir_make(struct crdt_test_dir *dir, const char *prefix);

/* Removes the database file (and its WAL) and the directory. */
void crdt_test_dir_remove(struct crdt_test_dir *dir);

/* The random_bytes of the crdt config: ctx's site byte, repeated. */
int crdt_test_random(void *ctx, uint8_t *out, size_t size);

void crdt_test_exec(struct crdt_test_node *node, const char *sql);

/* Opens crdt mode on node's open engine with a fresh clock at now_ms. */
void crdt_test_attach(struct crdt_test_node *node);

/* Opens a zeroed node in memory with site id site_byte; schema (NULL:
 * none) runs before crdt mode opens, so it is this node's own and does not
 * replicate. */
void crdt_test_open(struct crdt_test_node *node, uint8_t site_byte,
                    const char *schema);

/* As crdt_test_open(), over path (NULL: in memory), keeping the fields
 * node has: a clock set ahead, the counters, shipped. */
void crdt_test_open_path(struct crdt_test_node *node, uint8_t site_byte,
                         const char *path, const char *schema);

void crdt_test_close(struct crdt_test_node *node);

/* Closes each of nodes[0..n) that is open. */
void crdt_test_close_all(struct crdt_test_node *nodes, size_t n);

/* Moves the clocks of nodes[0..n) ms ahead. */
void crdt_test_tick(struct crdt_test_node *nodes, size_t n, uint64_t ms);

/* Puts the change sets of origin in node's log above version after into
 * the pool. */
void crdt_test_ship(struct crdt_test_node *node, const uint8_t *origin,
                    uint64_t after, struct crdt_test_pool *pool);

/* Puts node's local change sets not shipped before into the pool. */
void crdt_test_ship_new(struct crdt_test_node *node,
                        struct crdt_test_pool *pool);

/* Applies cs on node: 0, or with deferred_ok REPLICATION_EDEFERRED too. */
void crdt_test_apply(struct crdt_test_node *node,
                     const struct replication__changeset *cs, bool deferred_ok);

/* Applies every change set of the pool on node, each with 0. */
void crdt_test_deliver(struct crdt_test_node *node,
                       const struct crdt_test_pool *pool);

void crdt_test_pool_free(struct crdt_test_pool *pool);

/* Everything from's log holds of from's own site above what to has of it,
 * delivered to to. */
void crdt_test_push(struct crdt_test_node *from, struct crdt_test_node *to);

/* Ships what is new on each of nodes[0..n) into pool, then applies the
 * whole pool on each (crdt_test_apply()). */
void crdt_test_sync_all(struct crdt_test_node *nodes, size_t n,
                        struct crdt_test_pool *pool, bool deferred_ok);

/* Appends the rows of sql to d. */
void crdt_test_query_into(struct crdt_test_node *node, const char *sql,
                          struct crdt_test_dump *d);

/* node's state as spec says, into d. */
void crdt_test_dump(struct crdt_test_node *node,
                    const struct crdt_test_dump_spec *spec,
                    struct crdt_test_dump *d);

/* The crdt_test_dump_all dumps of a and b are the same (printed when
 * not). */
void crdt_test_assert_same(struct crdt_test_node *a, struct crdt_test_node *b);

/* None of nodes[0..n) holds a change set, and their dumps are the same
 * (printed when not). */
void crdt_test_assert_converged(struct crdt_test_node *nodes, size_t n,
                                const struct crdt_test_dump_spec *spec);

/* The rows sql returns without the last newline (one value: as text,
 * "NULL"), into out. */
void crdt_test_query(struct crdt_test_node *node, const char *sql, char *out,
                     size_t size);

void crdt_test_assert_query(struct crdt_test_node *node, const char *sql,
                            const char *expected);

#endif /* SINEW_REPLICATION_CRDT_TEST_H */
