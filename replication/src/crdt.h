/* SPDX-License-Identifier: MIT
 *
 * crdt.h: crdt mode's state on one database, in process: capture of local
 * commits into change sets, the local change log, and the merge of change
 * sets from other sites (../shared/reference/crdt.md §6.1, §6.3, §6.4).
 *
 * A replicated table is a map from primary key to an existence register
 * and one register per column, each last-writer-wins by K = (hlc, site)
 * (hlc first, then the 16-byte site id bytewise). The registers live in
 * hidden system tables next to the data and are written in the same
 * transaction as the rows they describe (crdt.md §6.9 item 4):
 *
 *   sinew_crdt_meta(name, value)      'site' (16 random bytes, made on
 *                                     first open), 'version' (the last
 *                                     local version), 'hlc' (the clock's
 *                                     high-water mark, restored on open)
 *   sinew_crdt_row(tbl, pk, alive, hlc, site)      existence registers
 *   sinew_crdt_cell(tbl, pk, col, hlc, site, has_shadow, shadow)
 *                                     cell registers; the value lives in
 *                                     the user table while the row is
 *                                     visible and in shadow otherwise
 *   sinew_crdt_vv(site, head)         version vector: per origin, the
 *                                     highest version applied (contiguous)
 *   sinew_crdt_log(origin, version, chunk, hlc, bytes)
 *                                     every change set held, local and
 *                                     merged, as the wire codec encodes
 *                                     them (changeset_codec.h), one row per
 *                                     chunk of at most
 *                                     REPLICATION__CRDT_LOG_CHUNK_BYTES
 *   sinew_crdt_pending(origin, version, deferred, bytes)
 *                                     change sets from other sites that
 *                                     wait (for a gap, or deferred: 1), each
 *                                     encoded as one chunk
 *
 * pk is the key values in crdt_key.c's canonical encoding. Tables and
 * columns are named, so replicas whose column order differs still agree.
 *
 * Delivery: a change set whose version is already covered is a no-op; one
 * that leaves a gap after the origin's head waits until the gap is filled
 * (a later version of a gap-free head; gap ranges as in crdt.md §6.3
 * crdt_vv_gap are not done yet); one stamped further ahead of the local
 * physical clock than the clock's maximum offset is deferred
 * (REPLICATION_EDEFERRED) and applied by a later apply or
 * replication__crdt_retry() once the clock has caught up. Waiting change
 * sets are held in memory and in sinew_crdt_pending, written in a small
 * transaction of their own when kept and removed in the transaction that
 * applies them, so they survive a close: open reloads them and the next
 * apply or retry tries them again.
 *
 * Schema: a local commit that changes the schema is refused when a user
 * table has a NOT NULL column without DEFAULT outside its key or a UNIQUE
 * index beyond its key (capture_schema.c, crdt.md §6.8). DDL replicates as
 * SCHEMA records run in order by the receiver.
 *
 * Not yet: rows that existed before the first open have no registers (no
 * bootstrap of existing data, crdt.md §5 #32); change sets naming an
 * unknown table or column fail (REPLICATION_ESCHEMA) rather than being
 * quarantined (§6.8); no gap ranges in the version vector (a waiting
 * change set is kept whole until its predecessors arrive); no log pruning
 * or tombstone collection (§6.7); no schema_version in change sets.
 *
 * Threads: a struct replication__crdt belongs to the thread that owns its
 * engine handle.
 */
#ifndef SINEW_REPLICATION_CRDT_H
#define SINEW_REPLICATION_CRDT_H

#include <stddef.h>
#include <stdint.h>

#include "changeset.h"
#include "common.h"
#include "engine.h"
#include "hlc.h"

/* How many change sets may wait (gap or deferred) at once: past it apply
 * fails with COMMON_ETOOBIG, and the sender retries later. */
#define REPLICATION__CRDT_HELD_MAX 4096

/* The largest chunk of the change log, header included: what one chunk
 * shipped to a peer may weigh. */
#define REPLICATION__CRDT_LOG_CHUNK_BYTES ((size_t)60 << 10)

struct replication__crdt;

struct replication__crdt_config {
    struct engine_db *db; /* borrowed until close; no transaction open */
    struct hlc *clock;    /* borrowed until close; initialized */
    /* Fills size bytes with random ones (the site id on first open): 0 or
     * a negative code. NULL: getrandom(2). */
    int (*random_bytes)(void *ctx, uint8_t *out, size_t size);
    void *random_ctx;      /* passed back to random_bytes, borrowed */
    struct common_log log; /* copied; deferrals are logged at WARN */
    /* Asked at every local commit before anything is captured: 0 lets it
     * commit, with *epoch the epoch its change set carries (leader mode;
     * left 0 in crdt mode); an error vetoes the commit with the error's
     * message (REPLICATION_ENOTWRITER). NULL: every commit, epoch 0. */
    int (*gate)(void *ctx, uint64_t *epoch);
    void *gate_ctx;
};

/* Creates the system tables if missing, reads or makes the site id,
 * restores the clock's high-water mark, reloads the waiting change sets
 * and sets the commit hook on db (replacing any other). *out is the caller's,
 * closed with replication__crdt_close(). */
int replication__crdt_open(const struct replication__crdt_config *config,
                           struct replication__crdt **out);

/* Removes the commit hook and frees crdt and the in-memory copies of the
 * held change sets (their stored copies stay). NULL is ignored. The database
 * and the clock stay the caller's. */
void replication__crdt_close(struct replication__crdt *crdt);

/* The local site id, REPLICATION__SITE_ID_BYTES bytes owned by crdt. */
const uint8_t *replication__crdt_site(const struct replication__crdt *crdt);

/* The version vector: one entry per origin with a head above 0, into
 * *heads (common_malloc'd, NULL when empty; *count entries). */
struct replication__head;
int replication__crdt_vv_list(struct replication__crdt *crdt,
                              struct replication__head **heads, size_t *count);

/* The head of origin (REPLICATION__SITE_ID_BYTES, borrowed): versions
 * 1..head are applied; 0 for an unknown origin. */
int replication__crdt_head(struct replication__crdt *crdt,
                           const uint8_t *origin, uint64_t *head);

/* The last local version committed (0 before the first). */
int replication__crdt_local_version(struct replication__crdt *crdt,
                                    uint64_t *out);

/* Calls visit for each change set of origin (REPLICATION__SITE_ID_BYTES
 * bytes, borrowed; replication__crdt_site() for the local ones) with a
 * version above after, in version order, decoded from the log; the change
 * set is borrowed for the call. A non-zero return from visit stops the walk and
 * is returned; COMMON_ECORRUPT and the decoder's errors when the stored bytes
 * do not decode. */
typedef int (*replication__crdt_visit_cb)(
    void *ctx, const struct replication__changeset *cs);
int replication__crdt_log_since(struct replication__crdt *crdt,
                                const uint8_t *origin, uint64_t after,
                                replication__crdt_visit_cb visit, void *ctx);

/* Calls visit for each stored chunk (changeset_codec.h) of origin's
 * change sets with a version above after, in version then chunk order:
 * size bytes at bytes, borrowed for the call, ready to send. A non-zero
 * return from visit stops the walk and is returned. */
typedef int (*replication__crdt_bytes_cb)(void *ctx, const uint8_t *bytes,
                                          size_t size);
int replication__crdt_log_bytes_since(struct replication__crdt *crdt,
                                      const uint8_t *origin, uint64_t after,
                                      replication__crdt_bytes_cb visit,
                                      void *ctx);

/* Merges cs (borrowed for the call; copied and stored when it must wait) into
 * the database in one transaction (crdt.md §6.4). 0: applied, already covered,
 * or waiting for a missing earlier version of its origin;
 * REPLICATION_EDEFERRED: stamped beyond the maximum clock offset, kept;
 * REPLICATION_ESCHEMA: names a table or column this database lacks (not
 * applied, not kept); engine codes from the transaction. A successful
 * apply also applies whatever held change sets have become applicable. */
int replication__crdt_apply(struct replication__crdt *crdt,
                            const struct replication__changeset *cs);

/* Applies the held change sets that have become applicable (the clock
 * caught up, the gap was filled). */
int replication__crdt_retry(struct replication__crdt *crdt);

/* Change sets waiting: deferred ones (clock ahead) and all. */
size_t replication__crdt_deferred_count(const struct replication__crdt *crdt);
size_t replication__crdt_held_count(const struct replication__crdt *crdt);

/* A deep copy of src (borrowed for the call) in memory of its own, freed
 * with replication__crdt_changeset_free(). */
int replication__crdt_changeset_clone(const struct replication__changeset *src,
                                      struct replication__changeset **out);
void replication__crdt_changeset_free(struct replication__changeset *cs);

#endif /* SINEW_REPLICATION_CRDT_H */
