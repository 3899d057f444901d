/* SPDX-License-Identifier: MIT
 *
 * replication.h: databases on several nodes that stay in step, and its
 * manual.
 *
 * A struct replication joins one engine database to a transport
 * (transport.h) and keeps it in step with the same database on other
 * nodes, in one of two modes (docs/replication.md has the rules with
 * worked examples):
 *
 *  - crdt: every node writes, also while disconnected. Each committed
 *    transaction becomes a change set (one HLC stamp, the origin's site id,
 *    a gapless per-origin version); replicas merge them per row existence
 *    and per column, last writer wins by (hlc, site). Every replica that
 *    has received the same change sets holds the same data, whatever the
 *    order, the duplicates, or the path they took.
 *  - leader: only the node whose is_writer callback says so may commit;
 *    the others refuse local writes ("not the writer") and apply the
 *    writer's change sets in order. A writer change carries a higher
 *    epoch; change sets of a deposed writer beyond what the new writer
 *    held when it took over are refused everywhere.
 *
 * How it runs. Nothing here owns a thread, a loop or a timer: the caller
 * (sinew's node, a test, the simulator, an embedding program) forwards the
 * transport's callbacks to replication_connected(), _disconnected(),
 * _received() and _writable(), and calls replication_tick() whenever the
 * time it asked for has come, after local commits (a commit is shipped by
 * the next tick, never before it is durable) and after received messages
 * (a peer's summary or a change set to relay is acted on by the next
 * tick; ticking when nothing is due costs little). Time comes from the
 * caller's clock (struct transport_clock: wall-clock milliseconds here,
 * since the HLC is built on it). All calls on one struct replication, and
 * every use of its database handle, belong to one thread.
 *
 * What travels (docs/formats.md, "Replication messages"): on connect, both
 * sides send a HELLO (site id, mode, epoch) and a SUMMARY (their version
 * vector: per origin, the highest version held with nothing missing below
 * it); a SUMMARY also goes out every sync_interval_ms and serves as the
 * acknowledgement. Each side then ships what the other lacks, as the
 * change log's stored chunks, at most batch_bytes per peer per tick:
 * a node's own fresh commits at once (broadcast), other origins' change
 * sets when the peer's summary shows it lacks them (relay), so no node
 * needs contact with every other. Loss, duplicates and reordering are
 * harmless: a receiver applies each origin's versions once, in order
 * (holding early ones), and a sender that sees no progress in a peer's
 * summaries sends again from the peer's head.
 *
 * History (docs/replication.md, "History"): a change set leaves the log
 * once every member has acknowledged it (or past retention_ms); a peer
 * that needs pruned history gets a snapshot of this node's state instead,
 * in SNAPSHOT slices, and installs it; tombstones are collected once
 * causally stable, from the clock evidence summaries carry. A member
 * silent past evict_after_ms is refused when it returns, until rebuilt
 * from an empty database.
 */
#ifndef SINEW_REPLICATION_H
#define SINEW_REPLICATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "engine.h"
#include "transport.h"

#define REPLICATION_ERROR_MAP(X)                                               \
    X(REPLICATION_EFORMAT, -10300, "malformed change set")                     \
    X(REPLICATION_EVERSION, -10301, "unsupported change set format version")   \
    X(REPLICATION_ESCHEMA, -10302,                                             \
      "change set names an unknown table or "                                  \
      "column")                                                                \
    X(REPLICATION_EDEFERRED, -10303, "change set stamped too far ahead")       \
    X(REPLICATION_ENOTWRITER, -10304, "not the writer")                        \
    X(REPLICATION_EFENCED, -10305,                                             \
      "change set of a deposed writer, beyond the new writer's fence")         \
    X(REPLICATION_ECONFIG, -10306, "invalid replication configuration")        \
    X(REPLICATION_EBEHIND, -10307, "snapshot lacks history this node holds")   \
    X(REPLICATION_ECONFLICT, -10308,                                           \
      "transaction conflicts with one not yet applied")                        \
    X(REPLICATION_EDUPLICATE, -10309, "transaction id already applied")        \
    X(REPLICATION_ENOTFOUND, -10310, "unknown transaction id")                 \
    X(REPLICATION_ECORRUPT, -10311, "malformed or damaged snapshot")

enum replication_error { REPLICATION_ERROR_MAP(COMMON_ERROR_ENUM) };

#define REPLICATION_ERROR_FIRST (-10399)
#define REPLICATION_ERROR_LAST (-10300)

/* The message for a replication code; common_strerror()'s answer
 * otherwise. */
const char *replication_strerror(int rc);

/* The transport message types replication sends and expects, all within
 * [REPLICATION_MESSAGE_FIRST, REPLICATION_MESSAGE_LAST]: a caller sharing
 * a transport with other users (Raft) routes these here. */
#define REPLICATION_MESSAGE_FIRST 0x0100
#define REPLICATION_MESSAGE_LAST 0x01ff

/* A site id: 16 bytes naming a database replica (not the node's transport
 * identity: a cloned database image keeps its site id, and is refused). */
#define REPLICATION_SITE_ID_BYTES 16

enum replication_mode {
    REPLICATION_MODE_CRDT = 1,
    REPLICATION_MODE_LEADER = 2,
};

/* Leader mode: whether this node is the writer now, and if so its epoch
 * (> 0; each new writer must be given a higher one than every writer
 * before it, e.g. by the operator or a consensus term). Called at every
 * local commit and tick. */
typedef bool (*replication_is_writer_cb)(void *ctx, uint64_t *epoch);

#define REPLICATION_SYNC_INTERVAL_MS_DEFAULT 1000u
#define REPLICATION_BATCH_BYTES_DEFAULT ((size_t)1 << 20)
#define REPLICATION_EVICT_AFTER_MS_DEFAULT (UINT64_C(30) * 24 * 3600 * 1000)

struct replication_config {
    enum replication_mode mode;
    struct engine_db *db; /* borrowed until close; no transaction open */
    /* Where messages go out, borrowed until close. Its callbacks are the
     * caller's, who forwards them to the replication_*() calls below. */
    struct transport *transport;
    /* Wall-clock milliseconds (copied; ctx borrowed until close): the
     * HLC's physical clock and every timer. */
    struct transport_clock clock;
    /* How far ahead of this node's clock a change set's stamp may be
     * before it is deferred. 0: HLC_MAX_OFFSET_MS_DEFAULT. */
    uint64_t max_offset_ms;
    /* Summaries to every peer this often. 0: the default above. */
    uint32_t sync_interval_ms;
    /* Change-set bytes shipped per peer per tick. 0: the default. */
    size_t batch_bytes;
    /* History. A change set leaves the change log once every member has
     * acknowledged it; a member is a peer heard from within evict_after_ms
     * (0: REPLICATION_EVICT_AFTER_MS_DEFAULT). With retention_ms > 0 it
     * also leaves once older than that, acknowledged or not (0: keep until
     * acknowledged). A peer that needs pruned history is told so (stats:
     * needs_snapshot) and must bootstrap from a snapshot. */
    uint64_t retention_ms;
    uint64_t evict_after_ms;
    /* The nodes this replica syncs with directly (borrowed for the call:
     * copied), as it dials them. Until each has been heard from (or
     * evict_after_ms has passed since open), nothing is pruned and no
     * tombstone is collected: a member that never connected yet may
     * still need the history. Peers that connect without being listed
     * become members when first heard from. */
    const struct transport_node_id *members;
    size_t member_count;
    /* Fills size bytes with random ones (the site id, made on first open
     * and stored in the database). NULL: getrandom(2). */
    int (*random_bytes)(void *ctx, uint8_t *out, size_t size);
    void *random_ctx;
    /* Leader mode only (required there, ignored in crdt mode). */
    replication_is_writer_cb is_writer;
    void *is_writer_ctx;
    struct common_log log; /* copied; deferrals, refusals at WARN/ERROR */
};

struct replication;

/* Opens replication on config->db: creates the hidden sinew_crdt_ tables
 * if missing, reads (or makes) the site id, restores the clock, reloads
 * change sets that waited, and hooks the database's commits (replacing any
 * other commit hook). 0, REPLICATION_ECONFIG (a mode without what it
 * needs), engine and I/O codes. *out is the caller's, freed by
 * replication_close(). */
int replication_open(const struct replication_config *config,
                     struct replication **out);

/* Unhooks the database and frees r (NULL is ignored). Nothing is sent;
 * the database, the transport and its connections stay the caller's. */
void replication_close(struct replication *r);

/* This replica's site id: REPLICATION_SITE_ID_BYTES bytes owned by r. */
const uint8_t *replication_site_id(const struct replication *r);

/* ---- the transport's events, forwarded by the caller ---- */

void replication_connected(struct replication *r,
                           const struct transport_node_id *peer);
void replication_disconnected(struct replication *r,
                              const struct transport_node_id *peer);
/* A message of a type in the replication range (bytes borrowed for the
 * call). Malformed messages are logged and dropped, never trusted. */
void replication_received(struct replication *r,
                          const struct transport_node_id *peer, uint16_t type,
                          const uint8_t *bytes, size_t size);
void replication_writable(struct replication *r,
                          const struct transport_node_id *peer);

/* Does what is due at the clock's now: ships fresh local commits and what
 * peers lack (at most batch_bytes each), sends summaries every
 * sync_interval_ms, applies change sets whose wait is over (the clock
 * caught up) and records kept for a table or column that now exists,
 * prunes the log and collects tombstones every ten sync intervals. *next_ms:
 * when to call again at the latest (the clock's milliseconds; now when a batch
 * was cut short). 0, or an engine error reading the log (logged; the next tick
 * tries again). */
int replication_tick(struct replication *r, uint64_t *next_ms);

/* ---- observing ---- */

struct replication_origin_stats {
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint64_t head; /* versions 1..head applied */
};

struct replication_peer_stats {
    struct transport_node_id id;
    bool connected;
    bool refused; /* its HELLO named our own site id (a cloned image), or
                     another mode */
    uint8_t site[REPLICATION_SITE_ID_BYTES]; /* from its HELLO */
    uint64_t last_summary_ms; /* when its last SUMMARY arrived; 0: never */
    bool needs_snapshot;      /* it lacks versions pruned from our log */
    uint64_t change_sets_sent;
    uint64_t chunks_received;
};

struct replication_stats {
    /* The version vector, one entry per origin known (common_malloc'd). */
    struct replication_origin_stats *origins;
    size_t origin_count;
    struct replication_peer_stats *peers; /* common_malloc'd */
    size_t peer_count;
    size_t waiting;     /* change sets held for an earlier version */
    size_t deferred;    /* change sets held: stamped too far ahead */
    size_t quarantined; /* applied change sets with records kept for a
                           table or column this database lacks yet */
    uint64_t applied;   /* change sets merged from peers */
    uint64_t refused;   /* change sets refused (fenced, failing) */
    uint64_t epoch;     /* leader mode: the highest epoch seen */
    bool diverged;      /* leader mode: holds a deposed writer's change
                           sets the new writer never had */
};

/* Fills *out (its arrays the caller's, freed by
 * replication_stats_release()). 0 or COMMON_ENOMEM, engine codes. */
int replication_stats_get(struct replication *r, struct replication_stats *out);
void replication_stats_release(struct replication_stats *stats);

/* ==== quorum mode: the engine side of the Raft state machine ====
 *
 * In quorum mode (DESIGN.md, "Consensus"; Raft §5.2, §5.5, §5.6) a
 * transaction commits once a Raft quorum holds it. The consensus module
 * carries opaque bytes; struct replication_quorum is what runs on each
 * node around one engine database, and node wires the two:
 *
 *  1. On the leader, replication_quorum_execute() runs the client's
 *     transaction, captures its changes as a change set and rolls it back:
 *     nothing is visible yet. node proposes the bytes to Raft.
 *  2. Once Raft has committed the entry, every node (the leader too) calls
 *     replication_quorum_apply() with it, in log order. The entry's sets
 *     are written in one engine transaction together with the applied
 *     index and term, so each entry takes effect exactly once, also across
 *     crashes and restarts: an index at or below the stored applied index
 *     is skipped.
 *  3. The client's commit returns once its set has been applied (its
 *     result is the set's entry in results[]).
 *
 * Isolation is snapshot isolation, not serializability. A transaction
 * executes on the applied state (its base index) and does not see the
 * change sets still in flight (executed, not yet applied nor abandoned).
 * Conflicts are detected, never merged: an execute that writes a row
 * (table and key) an in-flight set also writes fails with
 * REPLICATION_ECONFLICT (first committer wins; the client retries). Only
 * writes conflict, so write skew is possible (two transactions that each
 * read what the other writes both commit). A schema change conflicts with
 * everything in flight, and everything conflicts with an in-flight schema
 * change. Inserts into a rowid table that leave the rowid to the engine
 * pick the same next rowid while another insert is in flight, and so
 * conflict: give such rows explicit keys for concurrent inserts.
 *
 * In-flight tracking lives in the leader's memory. A new leader must have
 * applied every entry of earlier terms before it executes (libraft's
 * leader commits a barrier at the start of its term: wait for it), so
 * that its base covers every set a previous leader got committed. Apply
 * enforces it: a set whose base precedes an applied entry of an earlier
 * term than its own entry's is refused (results[i] REPLICATION_ECONFLICT),
 * the same way on every node, so no update is ever lost to a failover.
 *
 * Durability: Raft's log is durable before an entry is applied, so the
 * state machine's commits may run with PRAGMA synchronous=OFF (the
 * caller's choice; this module never sets it): after a crash the engine
 * comes back at some earlier applied index and consensus re-applies the
 * lost tail from its log, or installs a snapshot (restore keeps or
 * replaces state by index). Other handles on the same database file must
 * only read: the commit hook guarding writes is per handle.
 *
 * What is stored: the hidden system tables sinew_quorum_state (applied
 * index and term) and sinew_quorum_txn (the last
 * REPLICATION_QUORUM_TXN_KEEP transaction ids: the entry index that
 * carried each and its result), both committed with the data. A change set
 * is the change-set codec's one chunk (changeset_wire.h; docs/formats.md,
 * "Change sets") with the transaction id as its origin and the base index
 * as its version.
 *
 * All calls on one struct replication_quorum and every use of its database
 * handle belong to one thread. */

/* Transaction ids are 16 bytes, chosen by the client (random, or its
 * session id and counter): the same id proposed twice applies once. */
#define REPLICATION_QUORUM_TXN_ID_BYTES 16

/* Transaction outcomes kept for replication_quorum_txn_status() and for
 * refusing duplicates: the most recently applied ones. */
#define REPLICATION_QUORUM_TXN_KEEP 100000u

/* The most change sets in flight at once, and rows written by them:
 * execute past either fails with COMMON_ETOOBIG (propose and apply
 * first). */
#define REPLICATION_QUORUM_IN_FLIGHT_MAX 65536u
#define REPLICATION_QUORUM_IN_FLIGHT_ROWS_MAX ((size_t)1 << 24)

struct replication_quorum;

/* Opens quorum mode on db (borrowed until close; no transaction open):
 * creates the system tables if missing, reads the applied index and term,
 * and hooks db's commits (replacing any other commit hook): from then on a
 * commit of user data or schema on db outside replication_quorum_execute()
 * is refused with REPLICATION_ENOTWRITER ("writes go through consensus"),
 * rolled back. log is copied (ctx borrowed until close; may be NULL). 0,
 * REPLICATION_ECORRUPT (the state table holds nonsense), engine codes,
 * COMMON_ENOMEM. *out is the caller's, freed by replication_quorum_close(). */
int replication_quorum_open(struct engine_db *db, const struct common_log *log,
                            struct replication_quorum **out);

/* Unhooks the database and frees q (NULL is ignored); in-flight sets are
 * forgotten. The database stays the caller's. */
void replication_quorum_close(struct replication_quorum *q);

/* The index and term of the last applied entry (0 and 0 for none). */
uint64_t replication_quorum_applied_index(const struct replication_quorum *q);
uint64_t replication_quorum_applied_term(const struct replication_quorum *q);

/* Leader side. Runs fn(ctx, db) as one transaction (BEGIN; fn; COMMIT),
 * captures what it wrote and rolls it back, so nothing becomes visible.
 * fn reads and writes db with SQL and must not end the transaction, nor
 * write a sinew_ system table: the engine never shows those writes to the
 * commit hook, so a transaction writing nothing else would commit here
 * alone (node must refuse client SQL that names sinew_ tables).
 * On success appends to change_set (borrowed; unchanged on failure) the
 * encoded set carrying txn_id (16 bytes, copied) and the applied index as
 * its base, and the set's rows are in flight until it is applied, or
 * abandoned; returns 0 with nothing appended when fn changed nothing (a
 * read-only transaction: nothing to propose). Errors: fn's own;
 * REPLICATION_ECONFLICT (see above); REPLICATION_EDUPLICATE when a set of
 * txn_id is in flight already; REPLICATION_ESCHEMA when the transaction
 * wrote a table it then dropped; COMMON_ETOOBIG (a set past the codec's
 * limit, or the in-flight limits); ENGINE_EMISUSE inside a transaction or
 * when fn ended it; engine codes; COMMON_ENOMEM. */
int replication_quorum_execute(struct replication_quorum *q, engine_apply_cb fn,
                               void *ctx, const uint8_t *txn_id,
                               struct common_buf *change_set);

/* Releases the in-flight rows of txn_id (16 bytes, borrowed for the call):
 * its proposal failed or will not be applied here. Unknown ids are
 * ignored. */
void replication_quorum_abandon(struct replication_quorum *q,
                                const uint8_t *txn_id);

/* Releases every in-flight set: leadership was lost (a later leader's log
 * decides which of them commit; apply still applies those). */
void replication_quorum_abandon_all(struct replication_quorum *q);

/* Every node: applies the committed log entry index (> 0) of term, which
 * holds count change sets (sets[i], sizes[i] bytes; borrowed for the call;
 * a set of 0 bytes is an empty one, result 0), in one engine transaction
 * with the new applied index and term and the sets' transaction ids.
 * Each set applies whole or not at all; results[i] (count ints, the
 * caller's) gets its outcome:
 *   0                        applied;
 *   REPLICATION_EDUPLICATE   its transaction id was applied before (within
 *                            the last REPLICATION_QUORUM_TXN_KEEP): not
 *                            applied again;
 *   REPLICATION_ECONFLICT    executed on a base older than an applied
 *                            entry of an earlier term (see above);
 *   a deterministic failure  ENGINE_ECONSTRAINT (a UNIQUE index, NOT
 *                            NULL...), ENGINE_ESQL (a table or column that
 *                            does not exist), ENGINE_ENOTFOUND (a row to
 *                            update that is gone), REPLICATION_EFORMAT,
 *                            _EVERSION, _ESCHEMA (malformed bytes), ...:
 *                            every node holds the same state and so
 *                            reaches the same result; the other sets go on.
 * Returns 0 when the entry was applied, also when some sets failed as
 * above. An index at or below the applied index was applied before: 0,
 * nothing written, every results[i] REPLICATION_EDUPLICATE (ask
 * replication_quorum_txn_status() for the outcome). A failure that is not
 * deterministic (engine I/O errors, COMMON_ENOMEM) fails the whole call
 * with nothing applied: the node must stop applying (and the caller stop
 * the node) rather than skip the entry. The in-flight rows of the sets'
 * transactions are released. */
int replication_quorum_apply(struct replication_quorum *q, uint64_t index,
                             uint64_t term, const uint8_t *const *sets,
                             const size_t *sizes, size_t count, int *results);

/* The outcome of an applied transaction (txn_id: 16 bytes, borrowed): 0
 * with *index (the entry that carried it) and *result (its results[i] in
 * apply) set; REPLICATION_ENOTFOUND when this node has not applied it or
 * it is older than the last REPLICATION_QUORUM_TXN_KEEP. On a leader that
 * has applied its term's barrier, not found means never will be unless it
 * is proposed again (Raft §8, client interaction); engine codes. */
int replication_quorum_txn_status(struct replication_quorum *q,
                                  const uint8_t *txn_id, uint64_t *index,
                                  int *result);

/* Appends to out (borrowed; unchanged on failure) the whole database state
 * as bytes: the header (magic "SNQS", format version, applied index and
 * term), the schema (tables and indexes, in creation order), every user
 * table's rows with their rowids and exact types, the quorum metadata
 * (transaction table), and an XXH3-64 checksum of it all (the layout is
 * in replication/src/quorum.h). 0, COMMON_ETOOBIG (out's size_max), engine
 * codes, COMMON_ENOMEM. */
int replication_quorum_snapshot(struct replication_quorum *q,
                                struct common_buf *out);

/* Installs a snapshot (size bytes at bytes, borrowed for the call). The
 * bytes are verified first: REPLICATION_ECORRUPT (damaged, truncated, or
 * not a snapshot) or REPLICATION_EVERSION, nothing changed. If this
 * database is at or beyond the snapshot's index it is kept (0, nothing
 * changed); else the whole database is replaced in one transaction (every
 * user table dropped, the snapshot's schema, rows and metadata written),
 * and every in-flight set is abandoned. A failure leaves the database as
 * it was. Engine codes, COMMON_ENOMEM. */
int replication_quorum_restore(struct replication_quorum *q,
                               const uint8_t *bytes, size_t size);

#endif /* SINEW_REPLICATION_H */
