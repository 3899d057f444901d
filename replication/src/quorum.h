/* SPDX-License-Identifier: MIT
 *
 * quorum.h: what the quorum files share (quorum.c: open, the commit hook,
 * execute; quorum_flight.c: the in-flight rows; quorum_apply.c: applying
 * committed entries, the transaction table; quorum_snapshot.c and
 * quorum_restore.c: whole-database snapshots). The manual is the quorum
 * section of replication.h.
 *
 * Stored state, in system tables that commit with the data:
 *
 *   sinew_quorum_state(id INTEGER PRIMARY KEY, applied_index, applied_term,
 *                      term_base, txn_seq): one row, id 1.
 *     term_base: the applied index just before the first applied entry of
 *     applied_term. A set applied in an entry of term T was executed on
 *     base b; it is valid when b is the applied index (nothing applied
 *     since it ran) or T == applied_term and b >= term_base: every entry
 *     applied after b then carries T, so it came from the same leader,
 *     whose in-flight tracking already refused any conflict.
 *     txn_seq: the sequence number of the last row of sinew_quorum_txn.
 *   sinew_quorum_txn(seq INTEGER PRIMARY KEY, id BLOB, idx, result), with
 *     the unique index sinew_quorum_txn_id on id: one row per applied
 *     set, the oldest deleted past REPLICATION_QUORUM_TXN_KEEP.
 *
 * A snapshot, integers little-endian unless varint:
 *
 *   offset size field
 *   0      4    magic "SNQS"
 *   4      4    format version (REPLICATION__QUORUM_SNAPSHOT_VERSION)
 *   8      8    applied index
 *   16     8    applied term
 *   24     8    body size n
 *   32     n    body
 *   32+n   8    checksum: XXH3-64 of bytes 0 .. 32+n, seeded with
 *               REPLICATION__QUORUM_SNAPSHOT_SEED
 *
 * The body, all counts and sizes varints:
 *   term_base, txn_seq;
 *   object count, then per object of sqlite_schema that has SQL, in
 *   creation order: type (1 table, 2 index), name (size, bytes), sql
 *   (size, bytes);
 *   per table object, in the same order: column count, row count, then
 *   per row its size and its values (rowid first, then every column) in
 *   crdt_key.c's canonical value bytes (type byte, 8 bytes big-endian
 *   for INTEGER and FLOAT, size and bytes for TEXT and BLOB);
 *   transaction count, then per row of sinew_quorum_txn by seq: seq,
 *   16-byte id, idx, zigzag result.
 */
#ifndef SINEW_REPLICATION_QUORUM_H
#define SINEW_REPLICATION_QUORUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "crdt_int.h"
#include "engine.h"
#include "replication.h"

#define REPLICATION__QUORUM_SNAPSHOT_MAGIC "SNQS"
#define REPLICATION__QUORUM_SNAPSHOT_VERSION 1u
#define REPLICATION__QUORUM_SNAPSHOT_SEED UINT64_C(0x534e5153)
#define REPLICATION__QUORUM_SNAPSHOT_HEADER_SIZE 32
#define REPLICATION__QUORUM_SNAPSHOT_CHECK_SIZE 8

#define REPLICATION__QUORUM_OBJECT_TABLE 1
#define REPLICATION__QUORUM_OBJECT_INDEX 2

/* The applied position, as stored in sinew_quorum_state. */
struct replication__quorum_state {
    uint64_t applied_index;
    uint64_t applied_term;
    uint64_t term_base; /* applied index before applied_term's first entry */
    uint64_t txn_seq;   /* seq of the newest sinew_quorum_txn row */
};

/* One set in flight: its rows are the keys of the row set below. */
struct replication__quorum_flight {
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    uint64_t *rows; /* owned: row hashes (quorum_flight.c), may repeat */
    size_t row_count;
    bool is_schema; /* it changes the schema: conflicts with everything */
};

/* Row hashes in flight, open addressing with linear probing; 0 marks an
 * empty slot (a hash of 0 is stored as 1). */
struct replication__quorum_rowset {
    uint64_t *slots; /* owned; capacity is a power of two or 0 */
    size_t capacity;
    size_t count;
};

/* Invariants: rowset holds exactly the union of flights[i].rows;
 * schema_flights counts the flights with is_schema. While executing, the
 * commit hook captures instead of refusing. */
struct replication_quorum {
    struct engine_db *db;                       /* borrowed */
    struct common_log log;                      /* copied */
    struct replication__quorum_state state;     /* as committed */
    struct replication__quorum_flight *flights; /* owned */
    size_t flight_count;
    size_t flight_capacity;
    struct replication__quorum_rowset rowset;
    size_t schema_flights;
    /* Set by execute for its COMMIT, read by the hook. */
    bool executing;
    const uint8_t *txn_id;         /* borrowed for the execute */
    struct common_buf *change_set; /* borrowed for the execute */
    /* Filled by the hook during execute: */
    bool captured;                             /* the hook ran and vetoed */
    int capture_rc;                            /* 0: change_set holds the set */
    struct replication__quorum_flight capture; /* its rows */
};

/* ---- quorum.c ---- */

/* Reads or writes the state row; the write runs in the open transaction.
 * REPLICATION_ECORRUPT for a stored row that makes no sense. */
int replication__quorum_state_read(struct engine_db *db,
                                   struct replication__quorum_state *out);
int replication__quorum_state_write(struct engine_db *db,
                                    const struct replication__quorum_state *s);

/* BEGIN, with its ROLLBACK prepared first (*rollback, the caller's) so
 * that ending the transaction never needs memory; _end() rolls back if the
 * transaction is still open and finalizes *rollback. */
int replication__quorum_begin(struct engine_db *db,
                              struct engine_stmt **rollback);
void replication__quorum_end(struct engine_db *db,
                             struct engine_stmt *rollback);

/* engine_apply_transaction() of fn (stamp 0), sure to end the
 * transaction also when its own ROLLBACK or COMMIT ran out of memory. */
int replication__quorum_transaction(struct engine_db *db, engine_apply_cb fn,
                                    void *ctx);

/* Runs sql with one bound parameter per value (count of them, borrowed)
 * and no result rows wanted. */
int replication__quorum_run(struct engine_db *db, const char *sql,
                            const struct engine_change_value *values,
                            size_t count);

/* Appends "name" quoted as an SQL identifier (quotes doubled) to out. */
int replication__quorum_quote(struct common_buf *out, const char *name);

/* Appends the NUL-terminated column names of table (borrowed) to names
 * (the caller's) and counts them in *count: none if there is no such
 * table. */
int replication__quorum_table_columns(struct engine_db *db, const char *table,
                                      struct common_buf *names, size_t *count);

/* ---- quorum_capture.c ---- */

/* Whether two values are the same value of the same type (REALs by their
 * bits). */
bool replication__quorum_value_equal(const struct engine_change_value *a,
                                     const struct engine_change_value *b);

/* Whether rec (not SCHEMA) names the same row as prev (NULL: none), as an
 * INSERT's ALIVE and SETs do. */
bool replication__quorum_same_row(const struct replication__record *prev,
                                  const struct replication__record *rec);

/* The commit hook (engine_commit_hook_cb; ctx is the quorum). */
int replication__quorum_hook(void *ctx, struct engine_db *db,
                             struct engine_commit *commit);

/* ---- quorum_flight.c ---- */

/* The hash that names row key (count values) of table in flight. */
uint64_t replication__quorum_row_hash(const char *table,
                                      const struct engine_change_value *key,
                                      size_t count, struct common_buf *scratch,
                                      int *rc);

/* Whether *f conflicts with what is in flight: REPLICATION_ECONFLICT,
 * REPLICATION_EDUPLICATE (its id is in flight), COMMON_ETOOBIG, or 0. */
int replication__quorum_flight_check(
    const struct replication_quorum *q,
    const struct replication__quorum_flight *f);

/* Moves *f (its rows) into the in-flight sets, after a check that passed.
 * COMMON_ENOMEM leaves everything as it was and *f the caller's. */
int replication__quorum_flight_add(struct replication_quorum *q,
                                   struct replication__quorum_flight *f);

/* Frees the in-flight state. */
void replication__quorum_flight_close(struct replication_quorum *q);

/* ---- quorum_snapshot.c ---- */

/* The first of rowid, _rowid_, oid that is not one of the count
 * NUL-terminated column names in names: how SQL reaches the rowid
 * (REPLICATION_ESCHEMA when all three are columns). */
int replication__quorum_rowid_name(const struct common_buf *names, size_t count,
                                   const char **out);

/* ---- quorum_apply.c ---- */

/* Whether rc is a failure every node meets on the same set and state
 * (a constraint, malformed bytes), as opposed to this node's trouble (I/O,
 * memory). */
bool replication__quorum_is_deterministic(int rc);

#endif /* SINEW_REPLICATION_QUORUM_H */
