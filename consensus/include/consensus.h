/* SPDX-License-Identifier: MIT
 *
 * consensus.h: quorum mode's Raft, and its manual.
 *
 * A struct consensus is one node's member of a Raft group (libraft, the
 * canonical/raft API as cowsql maintains it; docs/replication.md, "Quorum
 * mode"). It keeps a replicated log of commands, opaque bytes to this
 * module, and hands every committed command to the caller's state machine
 * in log order, on every node. sinew's node puts the engine's change sets
 * in the commands and applies them with replication_quorum_apply(); the
 * two modules never include each other.
 *
 * What it promises:
 *
 *  - A command proposed on the leader completes (its callback runs with
 *    status 0) only after a majority of the voters has it durably in its
 *    log AND this node's state machine has applied it: while a majority
 *    survives, a completed command is never lost.
 *  - Every node applies the same commands in the same order, each once:
 *    the caller's apply() is given the log index, and must itself skip an
 *    index it already applied (its state is durable, Raft's replay after a
 *    restart is not aware of that; replication_quorum_apply() does it).
 *  - A proposal whose outcome this node cannot know (it lost leadership
 *    after proposing: the next leader may or may not commit it) completes
 *    with CONSENSUS_EUNKNOWN. The caller names each command (the node puts
 *    a transaction id in it) so a client can ask later what happened.
 *  - consensus_read_barrier() completes once everything committed before
 *    it was applied here while this node was still leader: a read run then
 *    is linearizable. Concurrent reads share one barrier (one log entry).
 *  - A node refuses proposals and barriers unless it is the leader AND has
 *    applied an entry of its own term (CONSENSUS_ENOTLEADER): a new leader
 *    never acts on a state machine that lags its own log.
 *
 * Group proposal. Commands proposed between two ticks are packed into one
 * log entry (up to max_entry_bytes), so one disk write and one round of
 * replication carry many transactions; up to max_inflight_entries entries
 * are replicated at once.
 *
 * How it runs. As replication.h: nothing owns a thread or a timer. The
 * caller forwards the transport's callbacks (consensus_connected(),
 * _disconnected(), _writable(), _received() for message types
 * CONSENSUS_MESSAGE_FIRST..LAST) and calls consensus_tick() when the time it
 * asked for has come and after every proposal or received message. Time and
 * randomness come from the caller, so a simulated clock drives it
 * deterministically. Every call on one struct consensus belongs to one thread;
 * the state machine callbacks run inside consensus_tick() (and
 * consensus_start()).
 *
 * Storage. data_dir holds the Raft log: term and vote, log segments and
 * the latest snapshot (docs/formats.md, "Raft log files"). Appends are
 * synced before they count (one fsync per batch); damage is refused at
 * start, never skipped (libraft's auto-recovery, which drops entries, is
 * not used).
 *
 * Identity. Members are named by a Raft id (a positive 64-bit number,
 * chosen once, stable) and reached through the transport by their node id
 * (the ed25519 key the transport authenticates) and address. A message
 * is dropped unless the transport authenticated the node its Raft address
 * names, and the configuration binds its Raft id to that node: a member
 * can only ever speak as itself. One node, one id: a node changes its
 * address by being removed and added again under a new id.
 *
 * Errors are negative codes: common's, or CONSENSUS_* below.
 */
#ifndef SINEW_CONSENSUS_H
#define SINEW_CONSENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "transport.h"

#define CONSENSUS_ERROR_MAP(X)                                                 \
    X(CONSENSUS_EIO, -10400, "Raft log I/O error")                             \
    X(CONSENSUS_ECORRUPT, -10401, "Raft log or snapshot is damaged")           \
    X(CONSENSUS_EPROTO, -10402, "malformed Raft message")                      \
    X(CONSENSUS_ENOTLEADER, -10403, "not the leader")                          \
    X(CONSENSUS_EUNKNOWN, -10404,                                              \
      "leadership lost before commit: outcome unknown")                        \
    X(CONSENSUS_ESHUTDOWN, -10405, "consensus is shutting down")               \
    X(CONSENSUS_ECANTBOOTSTRAP, -10406, "the Raft log is not empty")           \
    X(CONSENSUS_EBUSY, -10407, "a membership change is in progress")           \
    X(CONSENSUS_EBADID, -10408, "no such member")                              \
    X(CONSENSUS_ETOOBIG, -10409, "command too large")                          \
    X(CONSENSUS_ECONFIG, -10410, "bad consensus configuration")                \
    X(CONSENSUS_ENOSPACE, -10411, "no space left for the Raft log")            \
    X(CONSENSUS_EUNAVAILABLE, -10412, "Raft stopped after an error")

enum consensus_error { CONSENSUS_ERROR_MAP(COMMON_ERROR_ENUM) };

#define CONSENSUS_ERROR_FIRST (-10499)
#define CONSENSUS_ERROR_LAST (-10400)

/* The message for a consensus code; common_strerror()'s answer otherwise. */
const char *consensus_strerror(int rc);

/* ---- members ---- */

/* A member's part in the group (Raft's roles): a voter counts in
 * elections and commit quorums; a standby receives and applies the log
 * without counting; a spare gets nothing (a member being added, or set
 * aside). */
enum consensus_role {
    CONSENSUS_STANDBY = 0,
    CONSENSUS_VOTER = 1,
    CONSENSUS_SPARE = 2,
};

/* One member. address is what the transport dials ("host:port" for TCP,
 * the endpoint's name for the in-memory network). */
struct consensus_member {
    uint64_t id;                   /* > 0, unique in the group */
    struct transport_node_id node; /* its transport identity */
    const char *address;           /* borrowed for the call */
    enum consensus_role role;
};

/* ---- the state machine, the caller's ---- */

struct consensus_state_machine {
    /* Applies the log entry at index (proposed in term): count commands,
     * commands[i] of sizes[i] bytes (borrowed for the call), in order.
     * Writes each command's outcome to results[i] (0, or the caller's
     * code for a command that failed deterministically: every node
     * reaches the same outcome, since they apply the same log to the same
     * state); the proposer's callback receives it. Returns 0, or an error
     * only for a failure that is not deterministic (I/O, memory): this
     * node then stops (CONSENSUS_EUNAVAILABLE) rather than diverge. */
    int (*apply)(void *ctx, uint64_t index, uint64_t term,
                 const uint8_t *const *commands, const size_t *sizes,
                 size_t count, int *results);
    /* The whole state, as of the last applied entry, appended to out.
     * Raft stores it and sends it to members too far behind. */
    int (*snapshot)(void *ctx, struct common_buf *out);
    /* Replaces the state with a snapshot's (bytes borrowed for the call),
     * taken at index: at start with the latest local snapshot, and when
     * the leader installs one. A state machine already at or past index
     * keeps its state. */
    int (*restore)(void *ctx, uint64_t index, const uint8_t *bytes,
                   size_t size);
    void *ctx;
};

/* ---- the disk ---- */

/* Every write and sync of the Raft log's files (metadata, segments,
 * snapshots, their directory) goes through these (pwrite(2), and fsync(2)
 * or, with data_only, fdatasync(2) by default), so tests can inject faults
 * and a simulator can model a disk that loses unsynced writes, as
 * engine_io_hooks does for databases. Each returns as the system call does
 * (-1 and errno on failure). Process-wide: set before any member opens;
 * NULL restores the defaults. hooks (and ctx) are borrowed until replaced. */
struct consensus_io_hooks {
    long (*pwrite)(void *ctx, int fd, const void *bytes, size_t size,
                   int64_t offset);
    int (*fsync)(void *ctx, int fd, bool data_only);
    void *ctx;
};
void consensus_io_hooks_set(const struct consensus_io_hooks *hooks);

/* ---- opening ---- */

struct consensus;

struct consensus_config {
    uint64_t id;                   /* this member's Raft id, > 0 */
    struct transport_node_id node; /* this member's transport identity */
    const char *address;           /* where others reach it; copied */
    const char *data_dir;          /* the Raft log's directory; copied */
    struct transport *transport;   /* borrowed while open */
    struct transport_clock clock;  /* monotonic milliseconds */
    struct transport_random random;
    /* Elections: a follower that hears no leader for a random time in
     * [election_timeout_ms, 2 x election_timeout_ms) stands; a leader that
     * hears no majority for election_timeout_ms steps down. Pre-vote is
     * always on. 0: 500 and 100: after a leader crash, the followers
     * stand within 0.5 to 1 s; a follower refuses votes until its own
     * timer ran out (leader stickiness), and a vote that splits costs one
     * more round, so a new leader is ready within 2 s. */
    uint32_t election_timeout_ms;
    uint32_t heartbeat_ms;
    /* Snapshots: one every snapshot_threshold applied entries, keeping
     * snapshot_trailing entries behind it for members that lag a little.
     * Memory: Raft keeps the log since (snapshot - trailing) in memory, so
     * (threshold + trailing) x max_entry_bytes bounds it. 0: 1024, 2048. */
    uint32_t snapshot_threshold;
    uint32_t snapshot_trailing;
    /* Group proposal: the most bytes packed into one log entry (a command
     * bigger than this is refused, CONSENSUS_ETOOBIG), and the most
     * entries being replicated at once. 0: 1 MiB and 8. */
    size_t max_entry_bytes;
    uint32_t max_inflight_entries;
    /* The transport's max_message_bytes (0: its default, 16 MiB): one
     * AppendEntries carries as many entries as fit, and must fit one
     * entry (CONSENSUS_ECONFIG otherwise). A larger message (a snapshot:
     * libraft sends it whole) travels in parts of this size, and is held
     * whole in memory at both ends (up to 1 GiB). */
    size_t max_message_bytes;
    const struct common_log *log; /* NULL: silent */
};

/* Opens the Raft log in config->data_dir (created if missing) and makes a
 * member that does nothing until consensus_start(). machine is copied.
 * CONSENSUS_ECONFIG for a bad config, CONSENSUS_ECORRUPT / _EIO for a log
 * that cannot be read. */
int consensus_open(const struct consensus_config *config,
                   const struct consensus_state_machine *machine,
                   struct consensus **out);

/* Writes the first configuration into an empty log: members[0..count)
 * (borrowed for the call). Either every founding member bootstraps with
 * the same list, or one bootstraps alone and the others join with
 * consensus_add(). CONSENSUS_ECANTBOOTSTRAP if the log is not empty
 * (harmless at every start). Before consensus_start() only. */
int consensus_bootstrap(struct consensus *c,
                        const struct consensus_member *members, size_t count);

/* Loads the log, restores the latest snapshot into the state machine,
 * connects to the members and starts the timers. */
int consensus_start(struct consensus *c);

/* Stops and frees c: queued proposals and waiting reads complete with
 * CONSENSUS_ESHUTDOWN, proposals already in the log with
 * CONSENSUS_EUNKNOWN (another leader may still commit them), connections
 * to members are forgotten. What was synced stays in data_dir for the
 * next open. Never from inside one of c's callbacks. */
void consensus_close(struct consensus *c);

/* ---- driving it ---- */

/* Message types on the transport: CONSENSUS_MESSAGE_FIRST..LAST. */
#define CONSENSUS_MESSAGE_FIRST 0x0200
#define CONSENSUS_MESSAGE_LAST 0x02ff
#define CONSENSUS_MESSAGE_RAFT 0x0201
/* A part of a Raft message larger than one transport message (a snapshot):
 * docs/formats.md, "Raft messages". */
#define CONSENSUS_MESSAGE_RAFT_PART 0x0202

void consensus_connected(struct consensus *c,
                         const struct transport_node_id *peer);
void consensus_disconnected(struct consensus *c,
                            const struct transport_node_id *peer);
/* The transport's writable(): a snapshot being sent in parts goes on. */
void consensus_writable(struct consensus *c,
                        const struct transport_node_id *peer);
/* A message from peer (bytes borrowed for the call). Malformed ones are
 * dropped and counted. */
void consensus_received(struct consensus *c,
                        const struct transport_node_id *peer, uint16_t type,
                        const uint8_t *bytes, size_t size);

/* Runs what is due: timers, completed disk writes (synced first), packing
 * and proposing queued commands, the state machine's applies, callbacks.
 * *next_ms: when to call again at the latest (the clock's time). 0, or
 * CONSENSUS_EUNAVAILABLE once the member stopped after an error it cannot
 * go on from (a disk write or fsync of the log failed, the state machine
 * failed to apply): it then sends nothing and completes nothing more;
 * close it (what is pending completes then) and open it again, which
 * replays the log from what was synced. */
int consensus_tick(struct consensus *c, uint64_t *next_ms);

/* ---- writes and reads ---- */

/* status: 0 (committed and applied here; result is the state machine's
 * result for it, index its log entry); CONSENSUS_EUNKNOWN (it reached the
 * log but its outcome is not known here: leadership lost, a disk error,
 * shutdown, or committed while this member stopped before applying it);
 * never proposed, so it never takes effect: CONSENSUS_ENOTLEADER,
 * CONSENSUS_ESHUTDOWN, CONSENSUS_EUNAVAILABLE (still queued when this
 * happened). */
typedef void (*consensus_done_cb)(void *ctx, int status, uint64_t index,
                                  int result);

/* Queues command (size bytes, copied) for the next entry. 0 and done()
 * runs later, from consensus_tick() or consensus_close(); or an error now
 * and done() never runs: CONSENSUS_ENOTLEADER (ask consensus_status_get()
 * who leads), CONSENSUS_ETOOBIG, COMMON_ENOMEM. */
int consensus_propose(struct consensus *c, const void *command, size_t size,
                      consensus_done_cb done, void *ctx);

/* status: 0 (read now: linearizable), or as consensus_done_cb's. */
typedef void (*consensus_barrier_cb)(void *ctx, int status);

/* Asks to read: done() runs once every entry committed before this call
 * has been applied here and this node was leader throughout (a barrier
 * entry committed in its term). Calls made while a barrier is in flight
 * share the next one. Errors now as consensus_propose(). */
int consensus_read_barrier(struct consensus *c, consensus_barrier_cb done,
                           void *ctx);

/* ---- status and membership (the admin API) ---- */

enum consensus_state {
    CONSENSUS_FOLLOWER = 1,
    CONSENSUS_CANDIDATE = 2,
    CONSENSUS_LEADER = 3,
    CONSENSUS_UNAVAILABLE = 4, /* stopped after an error, or not started */
};

struct consensus_status {
    enum consensus_state state;
    bool ready; /* leader with an applied entry of its term */
    uint64_t term;
    uint64_t leader_id;       /* 0: none known */
    char leader_address[256]; /* "" when none known */
    uint64_t commit_index;
    uint64_t applied_index;
    uint64_t last_index;
    uint64_t proposals_queued; /* waiting for the next entry */
    uint64_t entries_inflight; /* proposed, not yet applied */
    uint64_t messages_dropped; /* malformed or from the wrong sender */
};

void consensus_status_get(struct consensus *c, struct consensus_status *out);

/* The current configuration: *count members into out (up to capacity;
 * *count may be larger: call again with more room). Addresses point into
 * c, valid until the next call on c. */
void consensus_members(struct consensus *c, struct consensus_member *out,
                       size_t capacity, size_t *count);

/* status: 0 done, or CONSENSUS_ENOTLEADER / _EBUSY / _EUNKNOWN /
 * _ESHUTDOWN (and for add: CONSENSUS_ECONFIG when the member could not
 * catch up within the catch-up rounds). */
typedef void (*consensus_change_cb)(void *ctx, int status);

/* Adds member (borrowed for the call) on the leader: first as a spare,
 * then a standby that receives the log, then, if member->role is
 * CONSENSUS_VOTER, a voter once it has caught up (libraft's catch-up
 * rounds). One change at a time (CONSENSUS_EBUSY); each starts with a
 * barrier of the leader's term (the precondition of single-server
 * changes). The new member starts with an empty data_dir and no
 * bootstrap. A node already in the configuration is refused
 * (CONSENSUS_EBADID): to change a member's address, remove it, then add
 * it with a new id. */
int consensus_add(struct consensus *c, const struct consensus_member *member,
                  consensus_change_cb done, void *ctx);

/* Changes a member's role (promote a standby, demote a voter). */
int consensus_assign(struct consensus *c, uint64_t id, enum consensus_role role,
                     consensus_change_cb done, void *ctx);

/* Removes a member (the leader itself too: it steps down once the change
 * commits). */
int consensus_remove(struct consensus *c, uint64_t id, consensus_change_cb done,
                     void *ctx);

/* Hands leadership to voter id (0: the most up-to-date voter). done()
 * runs when it took over or the attempt timed out (status 0 either way:
 * check consensus_status_get()). */
int consensus_transfer(struct consensus *c, uint64_t id,
                       consensus_change_cb done, void *ctx);

#endif /* SINEW_CONSENSUS_H */
