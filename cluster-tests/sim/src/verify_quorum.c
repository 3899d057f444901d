/* SPDX-License-Identifier: MIT
 *
 * verify_quorum.c: quorum mode's final checkers (chaos-design.md §8),
 * run once the healed phase settled: first the cluster quiesces (no
 * client operation or probe in flight, every member has applied the
 * leader's commit index, which is its last index), then
 *   - registers: the history of reads, writes and cas, plus a final read
 *     of every key on every member, is linearizable (check_linearizable,
 *     initial value 0); an UNKNOWN verdict (a budget ran out) fails too;
 *   - elems: check_set on every member (every acknowledged insert is
 *     there, nothing that was never issued), and stricter: no refused
 *     insert is there, and an unknown insert is there exactly when
 *     node_quorum_txn_status() on the leader says it applied;
 *   - state: every member, stopped cleanly and reopened, yields the same
 *     replication_quorum_snapshot() bytes at the same applied index.
 * The first violation fails the seed (sim_fail) with its checker name:
 * linearizable, lost, phantom, txn_status, snapshot, liveness.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "quorum_int.h"

/* A growable array of int64 (final reads). */
struct vec {
    int64_t *v;
    size_t count;
    size_t capacity;
};

static int vec_push(struct vec *vec, int64_t x)
{
    if (vec->count == vec->capacity) {
        size_t capacity = vec->capacity == 0 ? 64 : vec->capacity * 2;
        int64_t *grown = common_realloc(vec->v, capacity * sizeof *grown);

        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        vec->v = grown;
        vec->capacity = capacity;
    }
    vec->v[vec->count++] = x;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* qsort and bsearch want a non-NULL base even for no elements. */
static void vec_sort(struct vec *vec)
{
    if (vec->count > 0) {
        qsort(vec->v, vec->count, sizeof(int64_t), cmp_i64);
    }
}

static bool vec_has(const struct vec *sorted, int64_t x)
{
    return sorted->count > 0 &&
           bsearch(&x, sorted->v, sorted->count, sizeof x, cmp_i64) != NULL;
}

/* engine_exec callback: every row's first column into the vec. */
static int collect(void *ctx, int columns, char **values, char **names)
{
    (void)names;
    if (columns < 1 || values[0] == NULL) {
        return -1;
    }
    return vec_push(ctx, strtoll(values[0], NULL, 10)) == 0 ? 0 : -1;
}

/* ---- quiescence ---- */

static bool quiescent(struct sim *sim, void *arg)
{
    int leader = simq_ready_leader(sim);
    struct consensus_status ls;

    (void)arg;
    for (unsigned c = 0; c < sim->config.clients; c++) {
        if (sim->clients[c].busy) {
            return false;
        }
    }
    if (leader < 0 || simq_get(sim)->probe_busy) {
        return false;
    }
    consensus_status_get(
        node_quorum_consensus(simq_member(sim, (unsigned)leader)), &ls);
    if (ls.commit_index != ls.last_index) {
        return false;
    }
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct node_quorum *q = simq_member(sim, i);
        struct consensus_status st;

        if (q == NULL) {
            return false;
        }
        consensus_status_get(node_quorum_consensus(q), &st);
        if (st.applied_index != ls.commit_index) {
            return false;
        }
    }
    return true;
}

/* ---- elems ---- */

/* Unknown inserts that the leader applied go to *applied (the others
 * provably never will: consensus.h, replication_quorum_txn_status). */
static int resolve_unknown(struct sim *sim, struct node_quorum *leader,
                           struct vec *applied)
{
    for (size_t i = 0; i < sim->history_count; i++) {
        const struct sim_op *op = &sim->history[i];
        uint64_t index;
        int result;
        int rc;

        if (op->kind != SIM_OP_ELEM_INSERT || op->outcome != SIM_UNKNOWN) {
            continue;
        }
        rc = node_quorum_txn_status(leader, op->txn_id, &index, &result);
        if (rc == 0 && result == 0) {
            rc = vec_push(applied, op->value);
        } else if (rc == REPLICATION_ENOTFOUND || rc == 0) {
            rc = 0;
        }
        if (rc != 0) {
            return sim_fail(sim, "txn_status", -1, "op %zu: %s", i,
                            simq_strerror(rc));
        }
    }
    vec_sort(applied);
    return 0;
}

/* The history's inserts by outcome. */
struct inserts {
    struct vec ok, unknown, failed, applied;
};

static int sort_inserts(struct sim *sim, struct inserts *in)
{
    int rc = 0;

    for (size_t i = 0; i < sim->history_count && rc == 0; i++) {
        const struct sim_op *op = &sim->history[i];

        if (op->kind != SIM_OP_ELEM_INSERT) {
            continue;
        }
        rc = vec_push(op->outcome == SIM_OK     ? &in->ok
                      : op->outcome == SIM_FAIL ? &in->failed
                                                : &in->unknown,
                      op->value);
    }
    vec_sort(&in->failed);
    vec_sort(&in->unknown);
    return rc;
}

/* Beyond check_set: a refused insert never applies; an unknown one is in
 * the set exactly when txn_status said it applied. */
static int check_strict(struct sim *sim, unsigned node, const struct vec *set,
                        const struct inserts *in)
{
    for (size_t i = 0; i < set->count; i++) {
        if (vec_has(&in->failed, set->v[i])) {
            return sim_fail(sim, "phantom", -1,
                            "node %u holds elem %" PRId64
                            " whose insert was refused",
                            node, set->v[i]);
        }
        if (vec_has(&in->unknown, set->v[i]) &&
            !vec_has(&in->applied, set->v[i])) {
            return sim_fail(sim, "txn_status", -1,
                            "node %u holds elem %" PRId64
                            " that txn_status says never applied",
                            node, set->v[i]);
        }
    }
    for (size_t i = 0; i < in->applied.count; i++) {
        if (!vec_has(set, in->applied.v[i])) {
            return sim_fail(sim, "lost", -1,
                            "node %u lacks elem %" PRId64
                            " that txn_status says applied",
                            node, in->applied.v[i]);
        }
    }
    return 0;
}

static int check_member_elems(struct sim *sim, unsigned node,
                              const struct inserts *in)
{
    struct vec set = {0};
    int64_t lost, phantom;
    int rc = engine_exec(node_quorum_db(simq_member(sim, node)),
                         "SELECT e FROM elems ORDER BY e", collect, &set);

    if (rc != 0) {
        rc = sim_fail(sim, "read", -1, "node %u: elems: %s", node,
                      simq_strerror(rc));
    } else if (check_set(in->ok.v, in->ok.count, in->unknown.v,
                         in->unknown.count, set.v, set.count, &lost,
                         &phantom) != 0) {
        rc = lost != CHECK_ABSENT
                 ? sim_fail(sim, "lost", -1,
                            "node %u lacks acknowledged elem %" PRId64, node,
                            lost)
                 : sim_fail(sim, "phantom", -1,
                            "node %u holds elem %" PRId64 " never issued", node,
                            phantom);
    } else {
        rc = check_strict(sim, node, &set, in);
    }
    common_free(set.v);
    return rc;
}

static int check_elems(struct sim *sim, unsigned leader)
{
    struct inserts in = {0};
    int rc = sort_inserts(sim, &in);

    if (rc == 0) {
        rc = resolve_unknown(sim, simq_member(sim, leader), &in.applied);
    }
    for (unsigned i = 0; i < sim->config.nodes && rc == 0; i++) {
        rc = check_member_elems(sim, i, &in);
    }
    common_free(in.ok.v);
    common_free(in.unknown.v);
    common_free(in.failed.v);
    common_free(in.applied.v);
    return rc;
}

/* ---- registers ---- */

static bool to_check_op(const struct sim_op *op, struct check_op *out)
{
    if ((op->kind != SIM_OP_READ && op->kind != SIM_OP_WRITE &&
         op->kind != SIM_OP_CAS) ||
        op->outcome == SIM_FAIL) {
        return false;
    }
    *out = (struct check_op){
        .client_id = op->client,
        .kind = op->kind == SIM_OP_READ    ? CHECK_READ
                : op->kind == SIM_OP_WRITE ? CHECK_WRITE
                                           : CHECK_CAS,
        .key = op->key,
        .value = op->value,
        .expected = op->expected,
        .invoke_ns = op->invoke_ns,
        .complete_ns =
            op->outcome == SIM_OK ? op->complete_ns : CHECK_TIME_NONE,
        .outcome =
            op->outcome == SIM_OK ? CHECK_OUTCOME_OK : CHECK_OUTCOME_UNKNOWN,
        .cas_succeeded = op->cas_ok};
    return true;
}

/* Every key read on every member, as completed reads after everything. */
static int add_final_reads(struct sim *sim, struct check_op *ops, size_t *count)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct vec values = {0};
        int rc = engine_exec(node_quorum_db(simq_member(sim, i)),
                             "SELECT v FROM reg ORDER BY k", collect, &values);

        for (size_t k = 0;
             k < values.count && k < simq_get(sim)->keys && rc == 0; k++) {
            int64_t at = sim_history_now_ns(sim);

            ops[(*count)++] = (struct check_op){.client_id = -1 - (int64_t)i,
                                                .kind = CHECK_READ,
                                                .key = (int64_t)k,
                                                .value = values.v[k],
                                                .invoke_ns = at,
                                                .complete_ns = at};
        }
        common_free(values.v);
        if (rc != 0) {
            return sim_fail(sim, "read", -1, "node %u: reg: %s", i,
                            simq_strerror(rc));
        }
    }
    return 0;
}

static int judge(struct sim *sim, const struct check_op *ops, size_t count)
{
    struct check_options options;
    struct check_verdict verdict;
    int rc;

    check_options_init(&options);
    options.initial_value = 0;
    rc = check_linearizable(ops, count, &options, &verdict);
    if (rc != 0) {
        return sim_fail(sim, "linearizable", -1, "checker: %s",
                        simq_strerror(rc));
    }
    if (verdict.result != CHECK_LINEARIZABLE) {
        if (sim->options.trace) {
            (void)check_verdict_print(&verdict, ops, count, stdout);
        }
        rc = sim_fail(sim, "linearizable", verdict.key,
                      "%s: key %" PRId64 " (%zu ops; --trace explains)",
                      check_result_name(verdict.result), verdict.key, count);
    }
    check_verdict_close(&verdict);
    return rc;
}

static int check_registers(struct sim *sim)
{
    size_t extra = (size_t)sim->config.nodes * simq_get(sim)->keys;
    struct check_op *ops =
        common_malloc_array(sim->history_count + extra, sizeof *ops);
    size_t count = 0;
    int rc;

    if (ops == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < sim->history_count; i++) {
        count += to_check_op(&sim->history[i], &ops[count]);
    }
    rc = add_final_reads(sim, ops, &count);
    if (rc == 0) {
        rc = judge(sim, ops, count);
    }
    common_free(ops);
    return rc;
}

/* ---- replicated state ---- */

/* Member node's snapshot, read from its database files (the member is
 * stopped: replication_quorum_open hooks the only handle writing). */
static int member_snapshot(struct sim *sim, unsigned node,
                           struct common_buf *out, uint64_t *applied)
{
    struct engine_db *db = NULL;
    struct replication_quorum *rq = NULL;
    int rc = engine_open(sim->nodes[node].db_path, &db);

    if (rc == 0) {
        rc = replication_quorum_open(db, NULL, &rq);
    }
    if (rc == 0) {
        *applied = replication_quorum_applied_index(rq);
        rc = replication_quorum_snapshot(rq, out);
    }
    replication_quorum_close(rq);
    engine_close(db);
    return rc;
}

static int compare_snapshot(struct sim *sim, unsigned node,
                            const struct common_buf *first,
                            uint64_t first_applied)
{
    struct common_buf buf;
    uint64_t applied = 0;
    int rc;

    common_buf_init(&buf, SIZE_MAX);
    rc = member_snapshot(sim, node, &buf, &applied);
    if (rc != 0) {
        rc = sim_fail(sim, "snapshot", -1, "node %u: %s", node,
                      simq_strerror(rc));
    } else if (applied != first_applied || buf.size != first->size ||
               memcmp(buf.data, first->data, buf.size) != 0) {
        rc = sim_fail(sim, "snapshot", -1,
                      "node %u (applied %" PRIu64 ", %zu bytes) differs from "
                      "node 0 (applied %" PRIu64 ", %zu bytes)",
                      node, applied, buf.size, first_applied, first->size);
    }
    common_buf_close(&buf);
    return rc;
}

static int check_snapshots(struct sim *sim)
{
    struct common_buf first;
    uint64_t first_applied = 0;
    int rc;

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        sim_node_stop(sim, i, false);
    }
    common_buf_init(&first, SIZE_MAX);
    rc = member_snapshot(sim, 0, &first, &first_applied);
    if (rc != 0) {
        rc = sim_fail(sim, "snapshot", -1, "node 0: %s", simq_strerror(rc));
    }
    for (unsigned i = 1; i < sim->config.nodes && rc == 0; i++) {
        rc = compare_snapshot(sim, i, &first, first_applied);
    }
    common_buf_close(&first);
    return rc;
}

int simq_final_check(struct sim *sim)
{
    int rc = simq_run_until(sim, quiescent, NULL, 15000,
                            "quiescence (nothing in flight, all applied)");

    if (rc == 0) {
        rc = check_registers(sim);
    }
    if (rc == 0) {
        rc = check_elems(sim, (unsigned)simq_ready_leader(sim));
    }
    if (rc == 0) {
        rc = check_snapshots(sim);
    }
    return rc;
}
