/* SPDX-License-Identifier: MIT
 *
 * verdict_leader.c: what a leader-mode run's history says (chaos.md §3.4,
 * "Leader mode": test it against what it claims). sinew claims
 * (docs/replication.md, "Leader mode"): only the writer commits, a
 * follower's commit fails with "not the writer", and followers apply the
 * writer's change sets in order, so a follower holds a prefix of the
 * writer's history (DESIGN.md's table). A commit returns once durable on
 * the writer, so without a failover (the product has none over its
 * interface: chaos_proc.h, CHAOS_LEADER_WRITER) nothing acknowledged may
 * be lost, also across a SIGKILL of the writer.
 *
 * The writer's final log is the reference. Loss and phantoms: check_set
 * (every append the writer acknowledged is in it; every row in it was an
 * acknowledged or unknown append), plus duplicates (a value twice: applied
 * twice). Prefix: each follower read during the run must be a prefix of
 * it; a read is kept as its length and digest (chaos_log_digest), compared
 * with the digest of the writer's prefix of that length; the final logs
 * are compared whole with check_prefix (run.c). Staleness is measured, not
 * failed (replication is asynchronous): a read that lacks an append
 * acknowledged before the read was invoked is stale, by the time since
 * the oldest such append was acknowledged.
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

/* Lost, phantom and duplicate appends, and appends a follower took. */
static void judge_appends(struct chaos_run_result *r,
                          const struct chaos_workload *w,
                          const int64_t *writer_log, size_t writer_count)
{
    size_t n = w->insert_count + 1, acked_count = 0, unknown_count = 0;
    int64_t *acked = common_malloc_array(n, sizeof *acked);
    int64_t *unknown = common_malloc_array(n, sizeof *unknown);
    ASSERT(acked != NULL && unknown != NULL); /* a harness: no OOM path */
    for (size_t i = 0; i < w->insert_count; i++) {
        const struct chaos_insert *in = &w->inserts[i];
        bool on_writer = in->node == CHAOS_LEADER_WRITER;
        if (in->outcome == CHAOS_SQL_OK && on_writer) {
            acked[acked_count++] = in->id;
        } else if (in->outcome == CHAOS_SQL_UNKNOWN) {
            unknown[unknown_count++] = in->id;
        }
        r->follower_writes_acked += in->outcome == CHAOS_SQL_OK && !on_writer;
        r->follower_writes_refused +=
            in->outcome == CHAOS_SQL_FAILED && !on_writer;
    }
    int64_t first_lost, first_phantom;
    size_t violations =
        check_set(acked, acked_count, unknown, unknown_count, writer_log,
                  writer_count, &first_lost, &first_phantom);
    qsort(acked, acked_count, sizeof *acked, compare_i64);
    int64_t *sorted = common_malloc_array(writer_count + 1, sizeof *sorted);
    ASSERT(sorted != NULL);
    for (size_t i = 0; i < writer_count; i++) {
        sorted[i] = writer_log[i];
    }
    qsort(sorted, writer_count, sizeof *sorted, compare_i64);
    size_t duplicates = 0;
    for (size_t i = 0; i < acked_count; i++) {
        r->lost += bsearch(&acked[i], sorted, writer_count, sizeof *sorted,
                           compare_i64) == NULL;
    }
    for (size_t i = 1; i < writer_count; i++) {
        duplicates += sorted[i] == sorted[i - 1];
    }
    r->phantoms = violations - r->lost;
    r->final_rows = writer_count;
    common_free(sorted);
    common_free(acked);
    common_free(unknown);
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

/* earliest[p]: the earliest completion of an append the writer
 * acknowledged that sits at position p or later in its log (INT64_MAX:
 * none); writer_count + 1 entries, owned by the caller. */
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
            in->outcome == CHAOS_SQL_OK && in->node == CHAOS_LEADER_WRITER
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

/* Every follower read: a prefix of the writer's log, and how stale. */
static void judge_reads(struct chaos_run_result *r,
                        const struct chaos_workload *w,
                        const int64_t *writer_log, size_t writer_count)
{
    uint64_t *digests = common_malloc_array(writer_count + 1, sizeof *digests);
    ASSERT(digests != NULL);
    digests[0] = CHAOS_LOG_DIGEST_INIT;
    for (size_t i = 0; i < writer_count; i++) {
        digests[i + 1] = chaos_log_digest(digests[i], writer_log[i]);
    }
    int64_t *earliest = earliest_after(w, writer_log, writer_count);
    const struct chaos_follower_read *first_bad = NULL;
    r->follower_reads = w->read_count;
    for (size_t i = 0; i < w->read_count; i++) {
        const struct chaos_follower_read *read = &w->reads[i];
        if (read->count > writer_count ||
            read->digest != digests[read->count]) {
            r->reads_not_prefix++;
            first_bad = first_bad != NULL ? first_bad : read;
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
                          r->reads_not_prefix, first_bad->node + 1,
                          first_bad->count);
    }
}

void chaos_verdict_leader(struct chaos_run_result *r,
                          const struct chaos_workload *w,
                          const int64_t *writer_log, size_t writer_count)
{
    ASSERT(writer_log != NULL || writer_count == 0);
    judge_appends(r, w, writer_log, writer_count);
    judge_reads(r, w, writer_log, writer_count);
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
