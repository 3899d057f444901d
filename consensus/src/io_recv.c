/* SPDX-License-Identifier: MIT
 *
 * io_recv.c: the guards on io.c's receive path against libraft 0.22.1
 * bugs. consensus__io_received() (io.c) authenticates and decodes a
 * message, then asks these whether libraft can take it, because four of
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
 *     peer stalls for good (stale_rejection: dropped);
 *   - a configuration entry behind other new entries of an AppendEntries
 *     is recorded as uncommitted under the first new entry's index, so
 *     committing it never clears it, and as leader the member refuses
 *     every later membership change (consensus__io_recv_change_plan and
 *     _repair: recorded under its own index).
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

/* The position in AppendEntries a of the first entry our log lacks or
 * holds with another term (a->n_entries if it holds them all): where
 * libraft starts appending (replication.c, checkConflictingEntries). */
static unsigned first_new_entry(struct consensus *c,
                                const struct raft_append_entries *a)
{
    unsigned j;

    for (j = 0; j < a->n_entries; j++) {
        if (trail_term_of(&c->raft.trail, a->prev_log_index + 1 + j) !=
            a->entries[j].term) {
            break;
        }
    }
    return j;
}

/* The position of a's last configuration entry at or after first, or
 * first if there is none. */
static unsigned last_change_entry(const struct raft_append_entries *a,
                                  unsigned first)
{
    unsigned last = first;

    for (unsigned j = first; j < a->n_entries; j++) {
        if (a->entries[j].type == RAFT_CHANGE) {
            last = j;
        }
    }
    return last;
}

/* libraft 0.22.1's replicationAppend (replication.c) records each
 * configuration entry among the new ones with
 * membershipUncommittedChange(r, index, entry), index being the first
 * new entry's, not the configuration entry's own (client.c, the
 * leader's path, passes index + i). Raft's rule, "a server always uses
 * the latest configuration in its log, regardless of whether the entry
 * is committed" (Ongaro's thesis §4.1), is kept (the configuration is
 * the entry's), but configuration_uncommitted_index names the wrong
 * entry: when the entry commits, replicationApplyConfigurationChange
 * finds another index and neither clears it nor records the committed
 * configuration. As leader the member then answers every change with
 * RAFT_CANTCHANGE (membershipCanChangeConfiguration), for good, and its
 * snapshots carry the old committed configuration (the chaos
 * simulator's quorum seed 0x8b: a member that lagged was elected after
 * the leader crashed during an add). The repair sets the index right
 * after the step; so that libraft cannot apply the entry within that
 * step (a lagging follower often learns a commit index past the whole
 * run), the message's commit index is lowered below the entry, as an
 * older message from the same leader would have it: the next message
 * carries it again. */
void consensus__io_recv_change_plan(struct consensus *c,
                                    struct raft_message *message,
                                    struct consensus__recv_change *out)
{
    struct raft_append_entries *a = &message->append_entries;
    unsigned first, last;

    ASSERT(c != NULL);
    ASSERT(out != NULL);
    *out = (struct consensus__recv_change){0};
    if (message->type != RAFT_APPEND_ENTRIES ||
        a->term < raft_current_term(&c->raft)) {
        return;
    }
    first = first_new_entry(c, a);
    last = last_change_entry(a, first);
    if (last == first) {
        return; /* none, or the first new entry: libraft's index is right */
    }
    out->first_new = a->prev_log_index + 1 + first;
    out->index = a->prev_log_index + 1 + last;
    out->term = a->entries[last].term;
    if (a->leader_commit >= out->index) {
        a->leader_commit = out->index - 1;
    }
}

void consensus__io_recv_change_repair(struct consensus *c,
                                      const struct consensus__recv_change *plan)
{
    struct raft *r = &c->raft;

    ASSERT(plan != NULL);
    if (plan->first_new == 0 || c->unavailable ||
        raft_state(r) != RAFT_FOLLOWER ||
        r->configuration_uncommitted_index != plan->first_new ||
        trail_term_of(&r->trail, plan->index) != plan->term) {
        return; /* refused, or not appended */
    }
    /* The commit index stayed below the entry (plan), and nothing before
     * the step was committed at or past it (it was new). */
    ASSERT(raft_last_applied(r) < plan->index);
    r->configuration_uncommitted_index = plan->index;
}
