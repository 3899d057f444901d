/* SPDX-License-Identifier: MIT
 *
 * propose.c: the write and read paths on the leader: group proposal,
 * coalesced read barriers, and leader readiness.
 *
 * Readiness. A new leader may hold committed entries its state machine
 * has not applied yet (committed by its predecessor, learned late), and a
 * transaction run against that state would read the past. So a leader
 * first commits a barrier of its own term; until that barrier is applied
 * it refuses proposals and reads (CONSENSUS_ENOTLEADER). The barrier also
 * gives single-server membership changes their precondition (an entry of
 * the leader's term committed first: Ongaro's correction to §4.3, the
 * raft-dev post of 2015; raft.md §1.5).
 *
 * Group proposal. consensus_propose() only queues; each tick packs what
 * is queued into log entries of up to max_entry_bytes and hands each to
 * raft_apply() while fewer than max_inflight_entries are in flight, so
 * one disk write and one replication round carry every transaction that
 * arrived meanwhile.
 *
 * Reads. A read needs to know that no other leader has committed anything
 * since: a barrier entry committed in this leader's term proves that, at
 * the cost of one replication round (raft.md §5.4). Reads that arrive
 * while a barrier is in flight wait for the next one, so one barrier
 * serves every read that arrived during the previous one.
 */
#include <string.h>

#include "consensus_int.h"

static bool is_ready_leader(struct consensus *c)
{
    return c->started && !c->closing && !c->unavailable &&
           raft_state(&c->raft) == RAFT_LEADER &&
           c->ready_term == raft_current_term(&c->raft);
}

int consensus__from_raft(int rv)
{
    switch (rv) {
    case 0:
        return 0;
    case RAFT_NOTLEADER:
        return CONSENSUS_ENOTLEADER;
    case RAFT_LEADERSHIPLOST:
        return CONSENSUS_EUNKNOWN;
    case RAFT_SHUTDOWN:
    case RAFT_CANCELED:
        return CONSENSUS_ESHUTDOWN;
    case RAFT_CANTCHANGE:
        return CONSENSUS_EBUSY;
    case RAFT_BADID:
    case RAFT_NOTFOUND:
    case RAFT_BADROLE:
    case RAFT_DUPLICATEID:
    case RAFT_DUPLICATEADDRESS:
        return CONSENSUS_EBADID;
    case RAFT_NOMEM:
        return COMMON_ENOMEM;
    case RAFT_NOSPACE:
        return CONSENSUS_ENOSPACE;
    case RAFT_CANTBOOTSTRAP:
        return CONSENSUS_ECANTBOOTSTRAP;
    case RAFT_CORRUPT:
        return CONSENSUS_ECORRUPT;
    default:
        return CONSENSUS_EIO;
    }
}

/* The overhead one command adds to a packed entry, at most. */
static size_t packed_size(size_t command_size)
{
    return COMMON_VARINT_SIZE_MAX + command_size;
}

int consensus_propose(struct consensus *c, const void *command, size_t size,
                      consensus_done_cb done, void *ctx)
{
    struct consensus__proposal *p;

    if (!is_ready_leader(c)) {
        return c->unavailable ? CONSENSUS_EUNAVAILABLE : CONSENSUS_ENOTLEADER;
    }
    if (packed_size(size) + 32 > c->config.max_entry_bytes) {
        return CONSENSUS_ETOOBIG;
    }
    p = common_calloc(1, sizeof *p);
    if (p == NULL) {
        return COMMON_ENOMEM;
    }
    p->bytes = common_malloc(size + 1);
    if (p->bytes == NULL) {
        common_free(p);
        return COMMON_ENOMEM;
    }
    memcpy(p->bytes, command, size);
    p->size = size;
    p->done = done;
    p->ctx = ctx;
    p->term = raft_current_term(&c->raft);
    *c->queued_tail = p;
    c->queued_tail = &p->next;
    c->queued_count++;
    c->queued_bytes += size;
    return 0;
}

static void proposal_finish(struct consensus__proposal *p, int status,
                            uint64_t index, int result)
{
    if (p->done != NULL) {
        p->done(p->ctx, status, index, result);
    }
    common_free(p->bytes);
    common_free(p);
}

static void batch_unlink(struct consensus *c, struct consensus__batch *batch)
{
    struct consensus__batch **at = &c->batches;

    while (*at != NULL && *at != batch) {
        at = &(*at)->next;
    }
    if (*at == batch) {
        *at = batch->next;
        c->batch_count--;
    }
}

static void batch_done(struct raft_apply *req, int status, void *result)
{
    struct consensus__batch *batch = req->data;
    struct consensus *c = batch->c;
    struct consensus__proposal *p = batch->proposals;
    int ours = 0;

    (void)result;
    if (status != 0 || !batch->applied) {
        /* The entry was in the log: committed but not applied here (this
         * member stopped; the entry takes effect when it restarts, or on
         * the others), or failed after libraft had already sent it to
         * followers (leadership lost, a disk error, shutdown), where a
         * later leader may still commit it. Either way the proposer
         * cannot say it failed: only a never-proposed command fails for
         * sure. */
        ours = CONSENSUS_EUNKNOWN;
    }
    batch_unlink(c, batch);
    for (size_t i = 0; p != NULL; i++) {
        struct consensus__proposal *next = p->next;
        proposal_finish(p, ours, req->index, ours == 0 ? batch->results[i] : 0);
        p = next;
    }
    common_free(batch->results);
    common_free(batch);
}

struct consensus__batch *consensus__batch_at(struct consensus *c,
                                             uint64_t index)
{
    for (struct consensus__batch *b = c->batches; b != NULL; b = b->next) {
        if (b->req.index == index) {
            return b;
        }
    }
    return NULL;
}

/* Takes queued proposals that fit one entry off the queue. */
static struct consensus__proposal *take_queued(struct consensus *c,
                                               size_t *count)
{
    struct consensus__proposal *first = c->queued;
    struct consensus__proposal **cut = &c->queued;
    size_t bytes = 32;

    *count = 0;
    while (*cut != NULL && (*count == 0 || bytes + packed_size((*cut)->size) <=
                                               c->config.max_entry_bytes)) {
        bytes += packed_size((*cut)->size);
        c->queued_bytes -= (*cut)->size;
        cut = &(*cut)->next;
        (*count)++;
    }
    c->queued = *cut;
    *cut = NULL;
    if (c->queued == NULL) {
        c->queued_tail = &c->queued;
    }
    c->queued_count -= *count;
    return first;
}

static void fail_list(struct consensus__proposal *p, int status)
{
    while (p != NULL) {
        struct consensus__proposal *next = p->next;
        proposal_finish(p, status, 0, 0);
        p = next;
    }
}

/* Packs one entry and proposes it. */
static void propose_one(struct consensus *c)
{
    struct consensus__batch *batch = common_calloc(1, sizeof *batch);
    struct raft_buffer buf = {0};
    size_t count;
    struct consensus__proposal *first = take_queued(c, &count);
    int rc = COMMON_ENOMEM;

    if (batch == NULL) {
        goto fail;
    }
    batch->results = common_calloc(count, sizeof *batch->results);
    if (batch->results == NULL) {
        goto fail;
    }
    rc = consensus__entry_pack(first, count, raft_current_term(&c->raft), &buf);
    if (rc != 0) {
        goto fail;
    }
    batch->c = c;
    batch->proposals = first;
    batch->count = count;
    batch->req.data = batch;
    rc = raft_apply(&c->raft, &batch->req, &buf, 1, batch_done);
    if (rc != 0) {
        raft_free(buf.base);
        rc = consensus__from_raft(rc);
        goto fail;
    }
    /* Appended: kept in index order, the order they complete in. */
    struct consensus__batch **at = &c->batches;
    while (*at != NULL) {
        at = &(*at)->next;
    }
    *at = batch;
    c->batch_count++;
    return;
fail:
    if (batch != NULL) {
        common_free(batch->results);
        common_free(batch);
    }
    fail_list(first, rc);
}

static void barrier_done(struct raft_barrier *req, int status)
{
    struct consensus__barrier *barrier = req->data;
    struct consensus *c = barrier->c;
    struct consensus__barrier **at = &c->barriers;
    struct consensus__reader *r = barrier->readers;
    int ours = status == 0 ? 0 : CONSENSUS_ENOTLEADER;

    while (*at != barrier) {
        at = &(*at)->next;
    }
    *at = barrier->next;
    if (status == RAFT_SHUTDOWN || status == RAFT_CANCELED) {
        ours = CONSENSUS_ESHUTDOWN;
    }
    if (c->unavailable) {
        /* libraft applies on after the state machine failed an entry
         * before this barrier: the state here lacks it, so no read. */
        ours = CONSENSUS_EUNAVAILABLE;
        status = RAFT_SHUTDOWN;
    }
    if (barrier->readers == NULL) {
        if (c->readying_term == barrier->term) {
            c->readying_term = 0;
        }
        if (status == 0 && raft_current_term(&c->raft) == barrier->term) {
            c->ready_term = barrier->term;
        }
    }
    while (r != NULL) {
        struct consensus__reader *next = r->next;
        r->done(r->ctx, ours);
        common_free(r);
        r = next;
    }
    common_free(barrier);
}

static bool reader_barrier_in_flight(const struct consensus *c)
{
    for (const struct consensus__barrier *b = c->barriers; b != NULL;
         b = b->next) {
        if (b->readers != NULL) {
            return true;
        }
    }
    return false;
}

/* Starts a barrier for readers (NULL: the readiness barrier). */
static int barrier_start(struct consensus *c, struct consensus__reader *readers)
{
    struct consensus__barrier *barrier = common_calloc(1, sizeof *barrier);
    int rc;

    if (barrier == NULL) {
        return COMMON_ENOMEM;
    }
    barrier->c = c;
    barrier->readers = readers;
    barrier->term = raft_current_term(&c->raft);
    barrier->req.data = barrier;
    rc = raft_barrier(&c->raft, &barrier->req, barrier_done);
    if (rc != 0) {
        LOGF(c->config.log, COMMON_LOG_WARN,
             "barrier refused term=%llu error=\"%s\"",
             (unsigned long long)barrier->term, raft_strerror(rc));
        common_free(barrier);
        return consensus__from_raft(rc);
    }
    barrier->next = c->barriers;
    c->barriers = barrier;
    return 0;
}

static void fail_readers(struct consensus__reader *r, int status)
{
    while (r != NULL) {
        struct consensus__reader *next = r->next;
        r->done(r->ctx, status);
        common_free(r);
        r = next;
    }
}

int consensus_read_barrier(struct consensus *c, consensus_barrier_cb done,
                           void *ctx)
{
    struct consensus__reader *reader;

    if (!is_ready_leader(c)) {
        return c->unavailable ? CONSENSUS_EUNAVAILABLE : CONSENSUS_ENOTLEADER;
    }
    reader = common_calloc(1, sizeof *reader);
    if (reader == NULL) {
        return COMMON_ENOMEM;
    }
    reader->done = done;
    reader->ctx = ctx;
    reader->next = c->readers;
    c->readers = reader;
    return 0;
}

void consensus__propose_fail_all(struct consensus *c, int status)
{
    struct consensus__reader *readers = c->readers;
    struct consensus__proposal *queued = c->queued;

    c->readers = NULL;
    c->queued = NULL;
    c->queued_tail = &c->queued;
    c->queued_count = 0;
    c->queued_bytes = 0;
    fail_readers(readers, status);
    fail_list(queued, status);
}

void consensus__propose_tick(struct consensus *c)
{
    uint64_t term = raft_current_term(&c->raft);

    if (c->unavailable || raft_state(&c->raft) != RAFT_LEADER) {
        /* Never proposed, so never committed: safe to refuse. */
        consensus__propose_fail_all(c, c->unavailable ? CONSENSUS_EUNAVAILABLE
                                                      : CONSENSUS_ENOTLEADER);
        return;
    }
    if (c->ready_term != term && c->readying_term != term) {
        if (barrier_start(c, NULL) == 0) {
            c->readying_term = term;
        }
    }
    if (c->queued != NULL && c->queued->term != term) {
        /* Accepted in an earlier term, leadership lost and won again
         * between two ticks: never proposed, so refused. */
        consensus__propose_fail_all(c, CONSENSUS_ENOTLEADER);
        return;
    }
    while (c->queued != NULL &&
           c->batch_count < c->config.max_inflight_entries) {
        propose_one(c);
    }
    if (c->readers != NULL && !reader_barrier_in_flight(c)) {
        struct consensus__reader *readers = c->readers;
        int rc;

        c->readers = NULL;
        rc = barrier_start(c, readers);
        if (rc != 0) {
            fail_readers(readers, rc);
        }
    }
}
