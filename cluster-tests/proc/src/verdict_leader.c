/* SPDX-License-Identifier: MIT
 *
 * verdict_leader.c: what a leader-mode run's history says (chaos.md §3.4,
 * "Leader mode": test it against what it claims). sinew claims
 * (docs/replication.md, "Leader mode"): only the writer commits, a
 * follower's commit fails with "not the writer", and followers apply the
 * writer's change sets in order, so a follower holds a prefix of the
 * writer's history (DESIGN.md's table). A commit returns once durable on
 * the writer; "if the writer is lost before shipping it, and another
 * takes over, that commit is gone (fenced)", and a new writer's fence
 * refuses everywhere what a deposed writer committed that it never had.
 *
 * The final writer's final log is the reference; the failovers of the run
 * (nemesis_failover.c) are in a struct chaos_leader_history. Each
 * acknowledged append is classified by its node at its invocation: the
 * writer of that epoch (the first writer until the first new writer was
 * stopped to be promoted, and so on), a deposed writer still running its
 * old options, or a follower. Must be in the log: the final writer's acks
 * in its epoch, and every ack the final writer held when it took over
 * (its log read just before its promotion: a lower bound). Allowed to be
 * missing, counted as fenced: an earlier writer's acks the next writer
 * never held, and a deposed writer's. Must not be in the log: a deposed
 * writer's acks invoked after the new writer's first acknowledged append
 * (it had taken over by then, so they lie beyond its fence). Loss and
 * phantoms: check_set (the must set acknowledged, everything else
 * acknowledged or unknown may be there), plus duplicates (a value twice:
 * applied twice). Without a failover this is the old rule: every append
 * the writer acknowledged is in its log.
 *
 * Prefix: each follower read during the run must be a prefix of the final
 * log, except reads of a node later rebuilt (it diverged: it may have
 * held fenced rows); a read is kept as its length and digest
 * (chaos_log_digest), compared with the digest of the writer's prefix of
 * that length; the final logs are compared whole with check_prefix
 * (run.c). Staleness is measured, not failed (replication is
 * asynchronous): a read that lacks an append acknowledged before the read
 * was invoked is stale, by the time since the oldest such append was
 * acknowledged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"
#include "common.h"

uint64_t chaos_log_digest(uint64_t digest, int64_t value)
{
    /* FNV-1a's offset basis as the start, then a splitmix64 finalizer per
     * value: every bit of every value moves every bit of the digest, and
     * the order of values matters. */
    uint64_t z = (digest ^ (uint64_t)value) + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A value and its position in the writer's log, sorted by value. */
struct position {
    int64_t value;
    size_t at;
};

static int compare_position(const void *a, const void *b)
{
    return compare_i64(&((const struct position *)a)->value,
                       &((const struct position *)b)->value);
}

/* Who acknowledged an append, by what the history says of its node when
 * it was invoked. */
enum ack_kind {
    ACK_FINAL = 0,    /* the final writer, in its epoch: must survive */
    ACK_EARLIER = 1,  /* an earlier writer, in its epoch */
    ACK_DEPOSED = 2,  /* a deposed writer still running its old options */
    ACK_FOLLOWER = 3, /* a follower: must never happen */
};

/* The epoch t falls in, as an index: how many new writers had been
 * stopped (to be restarted as the writer) at t. */
static size_t epoch_index_at(const struct chaos_leader_history *h, int64_t t)
{
    size_t index = 0;
    while (index < h->takeover_count && h->takeovers[index].stop_ns <= t) {
        index++;
    }
    return index;
}

static int writer_of(const struct chaos_leader_history *h, size_t index)
{
    return index == 0 ? CHAOS_LEADER_WRITER : h->takeovers[index - 1].to;
}

/* in's kind; *at gets its epoch index (ACK_FINAL, ACK_EARLIER) or its
 * takeover's index (ACK_DEPOSED). */
static enum ack_kind classify(const struct chaos_leader_history *h,
                              const struct chaos_insert *in, size_t *at)
{
    size_t index = epoch_index_at(h, in->invoke_ns);
    *at = index;
    if (in->node == writer_of(h, index)) {
        return index == h->takeover_count ? ACK_FINAL : ACK_EARLIER;
    }
    for (size_t k = 0; k < h->takeover_count; k++) {
        const struct chaos_takeover *tk = &h->takeovers[k];
        if (tk->from == in->node && tk->stop_ns <= in->invoke_ns &&
            in->invoke_ns < tk->from_demoted_ns) {
            *at = k;
            return ACK_DEPOSED;
        }
    }
    return ACK_FOLLOWER;
}

static bool has_value(const int64_t *sorted, size_t count, int64_t value)
{
    return bsearch(&value, sorted, count, sizeof *sorted, compare_i64) != NULL;
}

/* A sorted copy of values (owned by the caller), count + 1 slots. */
static int64_t *sorted_copy(const int64_t *values, size_t count)
{
    int64_t *sorted = common_malloc_array(count + 1, sizeof *sorted);
    ASSERT(sorted != NULL); /* a harness: no OOM path */
    for (size_t i = 0; i < count; i++) {
        sorted[i] = values[i];
    }
    qsort(sorted, count, sizeof *sorted, compare_i64);
    return sorted;
}

/* first[k]: when the new writer of takeover k first acknowledged an
 * append (it had taken over by then; INT64_MAX: never). Owned by the
 * caller. */
static int64_t *first_acks(const struct chaos_workload *w,
                           const struct chaos_leader_history *h)
{
    int64_t *first = common_malloc_array(h->takeover_count + 1, sizeof *first);
    ASSERT(first != NULL);
    for (size_t k = 0; k <= h->takeover_count; k++) {
        first[k] = INT64_MAX;
    }
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        size_t at = 0;
        enum ack_kind kind =
            in->outcome == CHAOS_SQL_OK ? classify(h, in, &at) : ACK_FOLLOWER;
        bool is_writer = kind == ACK_FINAL || kind == ACK_EARLIER;
        if (is_writer && at > 0 && in->complete_ns < first[at - 1]) {
            first[at - 1] = in->complete_ns;
        }
    }
    return first;
}

/* The sets check_set judges: must (acknowledged, must be in the log) and
 * maybe (unknown, or allowed to be lost), each insert_count + 1 slots. */
struct append_sets {
    int64_t *must, *maybe;
    size_t must_count, maybe_count;
};

/* Sorts every append of the history into s and counts into r what needs
 * no final log: appends a follower took or refused. */
static void sort_appends(struct chaos_run_result *r,
                         const struct chaos_workload *w,
                         const struct chaos_leader_history *h,
                         struct append_sets *s)
{
    const struct chaos_takeover *last =
        h->takeover_count > 0 ? &h->takeovers[h->takeover_count - 1] : NULL;
    int64_t *held = sorted_copy(last != NULL ? last->held : NULL,
                                last != NULL ? last->held_count : 0);
    size_t held_count = last != NULL ? last->held_count : 0;
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        size_t at = 0;
        enum ack_kind kind = classify(h, in, &at);
        if (in->outcome == CHAOS_SQL_FAILED) {
            r->follower_writes_refused += kind == ACK_FOLLOWER;
        } else if (in->outcome == CHAOS_SQL_UNKNOWN) {
            s->maybe[s->maybe_count++] = in->id;
        } else if (kind == ACK_FINAL || (kind != ACK_FOLLOWER &&
                                         has_value(held, held_count, in->id))) {
            s->must[s->must_count++] = in->id;
        } else {
            s->maybe[s->maybe_count++] = in->id;
            r->follower_writes_acked += kind == ACK_FOLLOWER;
        }
    }
    common_free(held);
}

/* Fenced appends (an earlier or deposed writer's acks missing from the
 * log: allowed) and fence breaches (a deposed writer's acks invoked after
 * the new writer had taken over, present in the log). */
static void judge_fence(struct chaos_run_result *r,
                        const struct chaos_workload *w,
                        const struct chaos_leader_history *h,
                        const int64_t *sorted_log, size_t log_count,
                        const struct append_sets *s)
{
    int64_t *first = first_acks(w, h);
    int64_t *must = sorted_copy(s->must, s->must_count);
    int64_t first_breach = 0;
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        size_t at = 0;
        enum ack_kind kind = classify(h, in, &at);
        if (in->outcome != CHAOS_SQL_OK || kind == ACK_FINAL ||
            kind == ACK_FOLLOWER) {
            continue;
        }
        bool is_in_log = has_value(sorted_log, log_count, in->id);
        if (kind == ACK_DEPOSED && is_in_log && in->invoke_ns > first[at]) {
            first_breach = r->fence_breaches++ == 0 ? in->id : first_breach;
        }
        if (!is_in_log && !has_value(must, s->must_count, in->id)) {
            r->fenced_unshipped += kind == ACK_EARLIER;
            r->fenced_late += kind == ACK_DEPOSED;
        }
    }
    common_free(must);
    common_free(first);
    if (r->fence_breaches > 0) {
        chaos_result_fail(r,
                          "%zu appends a deposed writer acknowledged after "
                          "the new writer had taken over are in the final "
                          "log: the fence did not hold (first: %lld)",
                          r->fence_breaches, (long long)first_breach);
    }
}

/* Lost, phantom, duplicate and fenced appends, appends a follower took. */
static void judge_appends(struct chaos_run_result *r,
                          const struct chaos_workload *w,
                          const struct chaos_leader_history *h,
                          const int64_t *writer_log, size_t writer_count)
{
    size_t n = w->insert_count + 1;
    struct append_sets s = {.must = common_malloc_array(n, sizeof *s.must),
                            .maybe = common_malloc_array(n, sizeof *s.maybe)};
    ASSERT(s.must != NULL && s.maybe != NULL);
    sort_appends(r, w, h, &s);
    int64_t first_lost, first_phantom;
    size_t violations =
        check_set(s.must, s.must_count, s.maybe, s.maybe_count, writer_log,
                  writer_count, &first_lost, &first_phantom);
    int64_t *sorted = sorted_copy(writer_log, writer_count);
    size_t duplicates = 0;
    for (size_t i = 0; i < s.must_count; i++) {
        r->lost += !has_value(sorted, writer_count, s.must[i]);
    }
    for (size_t i = 1; i < writer_count; i++) {
        duplicates += sorted[i] == sorted[i - 1];
    }
    r->phantoms = violations - r->lost;
    r->final_rows = writer_count;
    judge_fence(r, w, h, sorted, writer_count, &s);
    common_free(sorted);
    common_free(s.must);
    common_free(s.maybe);
    if (r->lost > 0) {
        chaos_result_fail(r,
                          "%zu acknowledged appends are not in the writer's "
                          "log (first: %lld)",
                          r->lost, (long long)first_lost);
    }
    if (r->phantoms > 0) {
        chaos_result_fail(r,
                          "%zu rows of the writer's log were never appended "
                          "or were refused (first: %lld)",
                          r->phantoms, (long long)first_phantom);
    }
    if (duplicates > 0) {
        chaos_result_fail(r, "%zu values appear twice in the writer's log",
                          duplicates);
    }
    if (r->follower_writes_acked > 0) {
        chaos_result_fail(r, "%zu appends were acknowledged by a follower",
                          r->follower_writes_acked);
    }
}

/* earliest[p]: the earliest completion of an acknowledged append that
 * sits at position p or later in the writer's log (INT64_MAX: none);
 * writer_count + 1 entries, owned by the caller. */
static int64_t *earliest_after(const struct chaos_workload *w,
                               const int64_t *writer_log, size_t writer_count)
{
    struct position *where =
        common_malloc_array(writer_count + 1, sizeof *where);
    int64_t *earliest = common_malloc_array(writer_count + 1, sizeof *earliest);
    ASSERT(where != NULL && earliest != NULL);
    for (size_t i = 0; i < writer_count; i++) {
        where[i] = (struct position){.value = writer_log[i], .at = i};
        earliest[i] = INT64_MAX;
    }
    earliest[writer_count] = INT64_MAX;
    qsort(where, writer_count, sizeof *where, compare_position);
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        struct position key = {.value = in->id};
        const struct position *found =
            in->outcome == CHAOS_SQL_OK
                ? bsearch(&key, where, writer_count, sizeof *where,
                          compare_position)
                : NULL;
        if (found != NULL && in->complete_ns < earliest[found->at]) {
            earliest[found->at] = in->complete_ns;
        }
    }
    for (size_t p = writer_count; p-- > 0;) {
        if (earliest[p + 1] < earliest[p]) {
            earliest[p] = earliest[p + 1];
        }
    }
    common_free(where);
    return earliest;
}

/* Whether node was rebuilt after t: a read of it at t may hold a deposed
 * writer's fenced rows (docs/replication.md: "or a follower that got
 * them first"), and is not judged. */
static bool is_rebuilt_after(const struct chaos_leader_history *h, int node,
                             int64_t t)
{
    for (size_t i = 0; i < h->rebuild_count; i++) {
        if (h->rebuilds[i].node == node && h->rebuilds[i].at_ns > t) {
            return true;
        }
    }
    return false;
}

/* Whether node was rebuilt at or before t: a read of it at t is of a
 * follower that started from an empty database. */
static bool is_rebuilt_before(const struct chaos_leader_history *h, int node,
                              int64_t t)
{
    for (size_t i = 0; i < h->rebuild_count; i++) {
        if (h->rebuilds[i].node == node && h->rebuilds[i].at_ns <= t) {
            return true;
        }
    }
    return false;
}

/* Every follower read: a prefix of the writer's log, and how stale. */
static void judge_reads(struct chaos_run_result *r,
                        const struct chaos_workload *w,
                        const struct chaos_leader_history *h,
                        const int64_t *writer_log, size_t writer_count)
{
    uint64_t *digests = common_malloc_array(writer_count + 1, sizeof *digests);
    ASSERT(digests != NULL);
    digests[0] = CHAOS_LOG_DIGEST_INIT;
    for (size_t i = 0; i < writer_count; i++) {
        digests[i + 1] = chaos_log_digest(digests[i], writer_log[i]);
    }
    int64_t *earliest = earliest_after(w, writer_log, writer_count);
    const struct chaos_follower_read *first_bad = NULL, *first_rebuilt = NULL;
    r->follower_reads = w->read_count;
    for (size_t i = 0; i < w->read_count; i++) {
        const struct chaos_follower_read *read = &w->reads[i];
        if (is_rebuilt_after(h, read->node, read->invoke_ns)) {
            r->reads_unjudged++;
            continue;
        }
        if (read->count > writer_count ||
            read->digest != digests[read->count]) {
            r->reads_not_prefix++;
            if (is_rebuilt_before(h, read->node, read->invoke_ns)) {
                r->reads_not_prefix_rebuilt++;
                first_rebuilt = first_rebuilt != NULL ? first_rebuilt : read;
            } else {
                first_bad = first_bad != NULL ? first_bad : read;
            }
            continue;
        }
        if (earliest[read->count] < read->invoke_ns) {
            int64_t age_ms =
                (read->invoke_ns - earliest[read->count]) / 1000000;
            r->stale_reads++;
            r->max_staleness_ms =
                age_ms > r->max_staleness_ms ? age_ms : r->max_staleness_ms;
        }
    }
    common_free(earliest);
    common_free(digests);
    if (first_bad != NULL) {
        chaos_result_fail(r,
                          "%zu follower reads were not a prefix of the "
                          "writer's log (first: n%d, %zu rows)",
                          r->reads_not_prefix - r->reads_not_prefix_rebuilt,
                          first_bad->node + 1, first_bad->count);
    }
    /* Counted apart: a rebuilt follower catches up from every writer's
     * origin at once, and one seen to hold a later epoch's rows without
     * an earlier one's is not a prefix of the history either (DESIGN.md:
     * "a follower: a prefix of the writer's history"). */
    if (first_rebuilt != NULL) {
        chaos_result_fail(r,
                          "%zu reads of a rebuilt follower catching up were "
                          "not a prefix of the writer's log (first: n%d, "
                          "%zu rows)",
                          r->reads_not_prefix_rebuilt, first_rebuilt->node + 1,
                          first_rebuilt->count);
    }
}

void chaos_verdict_leader(struct chaos_run_result *r,
                          const struct chaos_workload *w,
                          const struct chaos_leader_history *h,
                          const int64_t *writer_log, size_t writer_count)
{
    ASSERT(writer_log != NULL || writer_count == 0);
    ASSERT(h != NULL);
    r->failovers = h->takeover_count;
    r->rebuilt = h->rebuild_count + h->rebuilds_unrecorded;
    judge_appends(r, w, h, writer_log, writer_count);
    judge_reads(r, w, h, writer_log, writer_count);
}

int chaos_verdict_follower_log(struct chaos_run_result *r, int node,
                               const int64_t *writer_log, size_t writer_count,
                               const int64_t *log, size_t count)
{
    size_t at = 0;
    if (check_prefix(writer_log, writer_count, log, count, true, &at) == 0) {
        return 0;
    }
    if (check_prefix(writer_log, writer_count, log, count, false, &at) == 0) {
        return 1;
    }
    if (r->prefix_note[0] == '\0') {
        snprintf(r->prefix_note, sizeof r->prefix_note,
                 "n%d's log is not a prefix of the writer's: row %zu is "
                 "%lld, the writer's %s",
                 node + 1, at + 1, at < count ? (long long)log[at] : 0LL,
                 at < writer_count ? "differs" : "log is shorter");
    }
    return -1;
}
