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
 *                                     (indexed by (tbl, pk) too, for a
 *                                     row's cells)
 *   sinew_crdt_vv(site, head)         version vector: per origin, the
 *                                     highest version applied (contiguous)
 *   sinew_crdt_log(origin, version, chunk, hlc, bytes)
 *                                     every change set held, local and
 *                                     merged, as the wire codec encodes
 *                                     them (changeset_codec.h), one row per
 *                                     chunk of at most
 *                                     REPLICATION__CRDT_LOG_CHUNK_BYTES
 *   sinew_crdt_pending(origin, version, deferred, bytes, reason)
 *                                     change sets from other sites that
 *                                     wait (reason 'wait': for a gap, or
 *                                     deferred: 1), and the kept records of
 *                                     applied ones (reason 'schema'), each
 *                                     encoded as one chunk
 *   sinew_crdt_column(tbl, col)       the columns the registers of each
 *                                     table cover (crdt_schema.c)
 *   sinew_crdt_floor(origin, floor)   versions 1..floor of origin are no
 *                                     longer in the change log (pruned, or
 *                                     covered by an installed snapshot)
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
 * Schema (crdt.md §6.8): a local commit that changes the schema is refused
 * when a user table has a NOT NULL column without DEFAULT outside its key
 * or a UNIQUE index beyond its key (capture_schema.c). DDL replicates as
 * SCHEMA records run in order by the receiver, by crdt_ddl.c's rules (a
 * CREATE TABLE of a table that exists is a no-op, refused with an ERROR
 * when the shapes differ). Every change set carries its origin's schema
 * hash. A change set is applied even when this database lacks a table or
 * column it names: those records are kept (crdt_quarantine.c) and merged
 * once the schema has room for them, so an origin is never held back by
 * a schema. An INSERT from a schema without one of our columns writes that
 * column's DEFAULT at the INSERT's K (crdt_schema.c). Rows in the user
 * tables when crdt mode first opens get registers at K = (0, site), as one
 * local change set (crdt_bootstrap.c, §5 #32).
 *
 * Not yet: no gap ranges in the version vector (a waiting change set is
 * kept whole until its predecessors arrive); no log pruning or tombstone
 * collection (§6.7).
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

/* Rows from before replication recorded per local change set on the first
 * open (crdt_bootstrap.c): a table of any size costs a few versions, and
 * one batch stays small in memory and on the wire. */
#define REPLICATION__CRDT_BOOTSTRAP_ROWS 16384

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
    /* Asked before another node's change set is merged, whether it comes
     * now or was held earlier (leader mode's fence, which a set held
     * before the fence moved must meet too): 0 admits it;
     * REPLICATION_EFENCED refuses it for good (a held set is dropped and
     * counted, see replication__crdt_fenced_count()); REPLICATION_EDEFERRED
     * keeps it waiting (the fence is not known yet). cs is borrowed for the
     * call; the callback changes nothing. NULL: every set admitted. */
    int (*admit)(void *ctx, const struct replication__changeset *cs);
    void *admit_ctx;
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
 * the database in one transaction (crdt.md §6.4). 0: applied (its records
 * that name a table or column this database lacks kept for later, see
 * "Schema" above), already covered, or waiting for a missing earlier
 * version of its origin (or for the fence, see admit); REPLICATION_EDEFERRED:
 * stamped beyond the maximum clock offset, kept; REPLICATION_EFENCED: the
 * admit callback refused it, not kept; engine codes from the transaction.
 * A successful
 * apply also applies whatever held change sets have become applicable,
 * and the kept records the schema now has room for. */
int replication__crdt_apply(struct replication__crdt *crdt,
                            const struct replication__changeset *cs);

/* Merges the change sets sets[0 .. count) (borrowed for the call) as many
 * replication__crdt_apply() calls would, but those next for their origin
 * and within the clock offset together in one transaction: a node
 * catching up pays one commit for many. The others (covered, early, ahead)
 * go through replication__crdt_apply() one by one; so does every set when
 * the batch's transaction fails, so one bad set does not hold back the
 * rest. A set already covered (a duplicate) is skipped. *applied: how many
 * were taken (merged, or kept waiting for an earlier version). on_error
 * (NULL: none) hears
 * of each set that failed alone, with its code. 0, or the errors of
 * reading the version vector and of retrying held sets. */
typedef void (*replication__crdt_batch_error_cb)(
    void *ctx, const struct replication__changeset *cs, int rc);
int replication__crdt_apply_batch(
    struct replication__crdt *crdt,
    const struct replication__changeset *const *sets, size_t count,
    size_t *applied, replication__crdt_batch_error_cb on_error, void *ctx);

/* Applies the held change sets that have become applicable (the clock
 * caught up, the gap was filled), then, when the schema changed since
 * they were last tried (a local or merged DDL, or one made behind crdt's
 * back), the kept records it now has room for. */
int replication__crdt_retry(struct replication__crdt *crdt);

/* Whether the change set of origin (borrowed) and version is held here
 * (waiting or deferred): a copy arriving again needs no decoding. */
bool replication__crdt_is_held(const struct replication__crdt *crdt,
                               const uint8_t *origin, uint64_t version);

/* Change sets waiting: deferred ones (clock ahead) and all. */
size_t replication__crdt_deferred_count(const struct replication__crdt *crdt);
size_t replication__crdt_held_count(const struct replication__crdt *crdt);
/* Held change sets dropped since open because admit refused them. */
uint64_t replication__crdt_fenced_count(const struct replication__crdt *crdt);

/* Applied change sets some of whose records are kept, waiting for a table
 * or column this database lacks (not counted by held_count). */
size_t replication__crdt_kept_count(const struct replication__crdt *crdt);

/* The local schema's hash, as change sets committed here carry it
 * (crdt_schema.c). */
uint64_t replication__crdt_schema_hash(const struct replication__crdt *crdt);

/* A deep copy of src (borrowed for the call) in memory of its own, freed
 * with replication__crdt_changeset_free(). */
int replication__crdt_changeset_clone(const struct replication__changeset *src,
                                      struct replication__changeset **out);
void replication__crdt_changeset_free(struct replication__changeset *cs);

/* ---- snapshots (crdt_snapshot*.c; crdt.md §6.5 item 6, §6.7) ----
 *
 * A node whose missing history is no longer in any peer's change log
 * (pruned: sinew_crdt_floor says how far) cannot catch up change set by
 * change set; it installs a snapshot of a peer's replicated state instead
 * and continues from there. The snapshot is built and checked whole in
 * memory (REPLICATION__SNAPSHOT_BODY_MAX bounds it) and shipped in slices:
 * the sender cuts the bytes of replication__crdt_snapshot_build() at any
 * offsets (its first slice at least REPLICATION__SNAPSHOT_HEADER_BYTES), the
 * receiver learns the total from the first slice
 * (replication__crdt_snapshot_size()), puts each slice at its offset, and
 * checks and installs the whole. Layout: docs/formats.md, "Snapshots". */

/* The largest snapshot body (msgpack, before lz4). A build holds up to
 * about twice it in memory, an install the snapshot and its body. */
#define REPLICATION__SNAPSHOT_BODY_MAX ((size_t)1 << 30)

/* Bytes of a snapshot's fixed header. */
#define REPLICATION__SNAPSHOT_HEADER_BYTES 62

/* The floor of origin (REPLICATION__SITE_ID_BYTES, borrowed): versions
 * 1..floor of it are no longer in this node's change log (pruned, or
 * covered by an installed snapshot); 0 when none is recorded. */
int replication__crdt_floor(struct replication__crdt *crdt,
                            const uint8_t *origin, uint64_t *floor);

/* Appends a snapshot of this node's replicated state to out (the caller's,
 * initialized; its size_max is the hard limit on the snapshot's size), read
 * in one read transaction (none may be open): the site id, the version
 * vector, the floors, the schema, every user table's rows, the registers,
 * the column catalog, the kept change sets. COMMON_ETOOBIG past out's
 * size_max or REPLICATION__SNAPSHOT_BODY_MAX, COMMON_ECORRUPT for system
 * tables holding what they never should, engine codes. */
int replication__crdt_snapshot_build(struct replication__crdt *crdt,
                                     struct common_buf *out);

/* Reads the size of a whole snapshot from its first size bytes at bytes
 * (borrowed for the call; at least REPLICATION__SNAPSHOT_HEADER_BYTES):
 * *total, checked against the header's checksum and the limits before a
 * receiver allocates it. REPLICATION_EFORMAT, REPLICATION_EVERSION,
 * COMMON_ETOOBIG. */
int replication__crdt_snapshot_size(const uint8_t *bytes, size_t size,
                                    size_t *total);

/* Checks a whole snapshot (bytes borrowed for the call): framing,
 * checksums, and everything in it that can be checked without installing
 * it. 0, REPLICATION_EFORMAT, REPLICATION_EVERSION, COMMON_ETOOBIG,
 * COMMON_ENOMEM. */
int replication__crdt_snapshot_check(const uint8_t *bytes, size_t size);

/* What an install did. */
struct replication__crdt_install {
    size_t merged; /* change sets of this node's log merged back over the
                  snapshot (versions above its heads) */
    size_t joined; /* this node's registers merged over the snapshot (of
                  origins whose versions above the snapshot's heads its
                  log no longer holds) */
};

/* Joins the snapshot's replicated state (bytes borrowed for the call; no
 * transaction may be open) with this node's, then carries on from the
 * join: the result holds every write either side had merged, as if each
 * had received the other's change sets (crdt.md §6.1), so two nodes that
 * each pruned history the other lacks converge by swapping snapshots.
 * Checked whole first: bad bytes change nothing (REPLICATION_EFORMAT,
 * REPLICATION_EVERSION, COMMON_ETOOBIG); a snapshot stamped beyond the
 * clock's maximum offset changes nothing either (REPLICATION_EDEFERRED:
 * try again later). Then, in one transaction the commit hook does not
 * see:
 *
 * - the snapshot's tables are made by its statements (a local table or
 *   index under one of its names is dropped first) and hold its rows; a
 *   local table the snapshot lacks is kept, rows and registers;
 * - the registers and the column catalog of every other table are the
 *   snapshot's; so are the kept change sets of versions its heads cover
 *   (this node's kept sets of later versions stay);
 * - per origin, the head is the higher of this node's and the snapshot's;
 *   where this node's is higher, its change sets of that origin above the
 *   snapshot's head that its log holds are merged back; where its log no
 *   longer holds them all (pruned before the sender had them), its
 *   registers whose K names that origin are then merged over the
 *   snapshot's too, by the change-set merge (crdt_snapshot_join.c): the
 *   greater K wins per cell and per row's existence, a dead row drops the
 *   cells at or below its K, as when the change sets meet. Registers of
 *   the other origins are the snapshot's alone: it has every version of
 *   them this node has, so what it lacks of them was collected (a row
 *   deleted and collected elsewhere does not come back, crdt.md §5 #26).
 *   Joined records of a table or column the installed schema lacks (DDL
 *   of another origin neither side still holds) are dropped, logged at
 *   WARN;
 * - another origin's floor is the higher of the snapshot's head and this
 *   node's floor, and its change log keeps what lies above the floor; for
 *   this node's own site the log and floor stay as they were;
 * - held change sets the new heads cover are forgotten;
 * - the clock is raised past every register's HLC, before any local write.
 *
 * Then held change sets that now apply are applied. Merged writes keep
 * their stamps: this node's writes compete by last-writer-wins like
 * anyone's, never rebased (crdt.md §6.7's rebase is for an evicted member,
 * which sync refuses instead: it is rebuilt from an empty database).
 * *stats (NULL: not wanted) says how many change sets were merged back and
 * registers joined. A failure after the install committed (applying held
 * sets) returns its code; the snapshot stays installed. */
int replication__crdt_snapshot_install(struct replication__crdt *crdt,
                                       const uint8_t *bytes, size_t size,
                                       struct replication__crdt_install *stats);

#endif /* SINEW_REPLICATION_CRDT_H */
