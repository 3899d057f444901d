/* SPDX-License-Identifier: MIT
 *
 * io_recv.c: the guards on io.c's receive path against libraft 0.22.1
 * bugs. consensus__io_received() (io.c) authenticates and decodes a
 * message, then asks these whether libraft can take it, because three of
 * libraft's receive paths go wrong on messages a correct peer can send:
 *   - an AppendEntries naming, at or below our commit index, an entry of
 *     another term than ours makes replicationAppend fail with
 *     RAFT_SHUTDOWN and the receive path free the entries twice
 *     (append_conflicts_committed: the member stops instead);
 *   - an InstallSnapshot while the member's own snapshot is being stored
 *     is parked and then started through NULL, and one while another is
 *     being stored is ignored without freeing it (install_possible: we
 *     complete our snapshot first, or drop the message as lost);
 *   - a stale AppendEntriesResult rejection (reordered messages) puts the
 *     leader's probe of that peer where it sends only heartbeats and the
 *     peer stalls for good (stale_rejection: dropped).
 * Each function's comment cites where in libraft it goes wrong.
 */
#include "consensus_int.h"
#include "wire.h"

/* Whether libraft 0.22.1 can take InstallSnapshot `message` now; when it
 * cannot, the caller drops it as a lost message, which the leader sends
 * again. Two of its paths go wrong:
 *   - an install that arrives while the member's own snapshot is being
 *     stored is parked (legacy.c, legacyHandleUpdateSnapshot: into
 *     legacy.snapshot_pending), and takeSnapshotCb clears that pointer
 *     before it reads it, then starts the install through NULL: a crash
 *     at the snapshot's completion. Our snapshot_put wrote the snapshot
 *     when asked, only its callback waits, so we run the queued
 *     callbacks first, as the next tick would (they sync the log first),
 *     and libraft is done taking its snapshot before the install;
 *   - an install while another is being stored is ignored without
 *     freeing its data or configuration (recv_install_snapshot.c with
 *     replicationInstallSnapshot's "already installing"): dropped here,
 *     it is ignored just the same, without the leak. */
static bool install_possible(struct consensus *c,
                             const struct raft_message *message)
{
    if (message->type != RAFT_INSTALL_SNAPSHOT) {
        return true;
    }
    if (c->raft.legacy.snapshot_taking) {
        consensus__io_run_completions(c);
    }
    if (c->unavailable || c->raft.legacy.snapshot_taking) {
        return false; /* the sync failed, or callbacks are running */
    }
    return !(c->raft.snapshot.installing &&
             message->install_snapshot.term == raft_current_term(&c->raft));
}

/* The term of entry index in libraft's in-memory log, 0 if it has none
 * there: trail.c's TrailTermOf (not exported) on the layout raft.h
 * publishes (struct raft_trail: a circular buffer of records, each the
 * last index of a run of entries of one term). */
static raft_term trail_term_of(const struct raft_trail *t, raft_index index)
{
    unsigned n =
        t->front <= t->back ? t->back - t->front : t->size - t->front + t->back;
    raft_term term = 0;

    if (n == 0 || index <= t->offset ||
        index > t->records[(t->front + n - 1) % t->size].index) {
        return index == t->snapshot.index ? t->snapshot.term : 0;
    }
    for (unsigned k = n; k-- > 0;) {
        unsigned i = (t->front + k) % t->size;
        if (t->records[i].index < index) {
            break;
        }
        term = t->records[i].term;
    }
    return term;
}

/* Whether AppendEntries a names, at or below our commit index, an entry
 * of another term than ours: libraft 0.22.1's replicationAppend then
 * fails with RAFT_SHUTDOWN ("should never happen", replication.c
 * checkLogMatchingProperty and checkConflictingEntries), and its receive
 * path frees the entries twice (recv_append_entries.c frees the batch on
 * that error, legacy.c recvCb again because the step failed). The checks
 * are libraft's, in its order; a request of an older term is refused
 * before them. */
static bool append_conflicts_committed(struct consensus *c,
                                       const struct raft_append_entries *a)
{
    raft_index commit = raft_commit_index(&c->raft);
    raft_term local;

    if (a->term < raft_current_term(&c->raft) || a->prev_log_index == 0) {
        return false;
    }
    local = trail_term_of(&c->raft.trail, a->prev_log_index);
    if (local != a->prev_log_term) {
        return local != 0 && a->prev_log_index <= commit;
    }
    for (unsigned j = 0; j < a->n_entries; j++) {
        raft_index index = a->prev_log_index + 1 + j;
        local = trail_term_of(&c->raft.trail, index);
        if (local == 0 || local != a->entries[j].term) {
            return local != 0 && index <= commit;
        }
    }
    return false;
}

/* Whether AppendEntriesResult `result` from peer, to us as leader, is a
 * stale rejection: one that rejects an index the peer has since
 * acknowledged in this term, or claims a shorter log than it acknowledged
 * (its log is durable). Only reordering makes one (transport.h keeps a
 * connection's order; the in-memory network's reorder fault breaks it):
 * libraft 0.22.1 ignores it in pipeline mode, but in probe mode
 * (progress.c, progressMaybeDecrement) sets next_index to the peer's last
 * index + 1, at or below match_index, and then sends it only heartbeats
 * (replication.c, sendAppendEntries: (next - match) - 1 entries in flight
 * wraps), which move nothing: the peer stalls for good. */
static bool stale_rejection(struct consensus *c, struct consensus__peer *peer,
                            const struct raft_append_entries_result *result)
{
    raft_term term = raft_current_term(&c->raft);

    if (raft_state(&c->raft) != RAFT_LEADER || result->term != term) {
        return false;
    }
    if (peer->acked_term != term) {
        peer->acked_term = term;
        peer->acked_index = 0;
    }
    if (result->rejected == 0) {
        if (result->last_log_index > peer->acked_index) {
            peer->acked_index = result->last_log_index;
        }
        return false;
    }
    return result->rejected <= peer->acked_index ||
           result->last_log_index < peer->acked_index;
}

bool consensus__io_recv_admit(struct consensus *c, struct raft_message *message)
{
    if (message->type == RAFT_APPEND_ENTRIES &&
        append_conflicts_committed(c, &message->append_entries)) {
        /* Its log or ours lost or changed committed entries: libraft
         * would shut down here. The member stops instead; restarted, it
         * no longer knows its commit index and takes the leader's log. */
        consensus__wire_message_release(message);
        consensus__stop(c, "a leader's entries conflict with committed ones",
                        CONSENSUS_ECORRUPT);
        return false;
    }
    if (!install_possible(c, message)) {
        consensus__wire_message_release(message);
        c->messages_dropped++;
        return false;
    }
    return true;
}

bool consensus__io_recv_stale(struct consensus *c, struct consensus__peer *peer,
                              const struct raft_message *message)
{
    return message->type == RAFT_APPEND_ENTRIES_RESULT &&
           stale_rejection(c, peer, &message->append_entries_result);
}
