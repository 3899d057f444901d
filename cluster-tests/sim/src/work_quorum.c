/* SPDX-License-Identifier: MIT
 *
 * work_quorum.c: quorum mode's workload and final checkers
 * (chaos-design.md §7, §8). Tables: reg(k INTEGER PRIMARY KEY, v), rows
 * 0..K-1 = 0, the registers of check.h's model; elems(e INTEGER PRIMARY
 * KEY), a grow-only set; probe, the healed phase's liveness write.
 *
 * A client sends to the member some member's status names leader (asking
 * its last target first, so stale beliefs are exercised too) and runs one
 * operation at a time, every value unique ((client << 32) | n):
 *   read    node_quorum_read(), then SELECT v on that member's database;
 *   write   UPDATE reg SET v = new WHERE k = key;
 *   cas     the same AND v = expected: it succeeded iff the transaction
 *           changed a row at execute (engine_changes() == 1) and committed
 *           (a cas that changed nothing completes after a read barrier);
 *   insert  INSERT INTO elems VALUES (new).
 * Outcomes: refused before anything was proposed (ENOTLEADER, ECONFLICT,
 * any error node_quorum_write returns at once) is "fail" and left out of
 * the checked history; EUNKNOWN, ESHUTDOWN, the member crashing, or no
 * answer within the client timeout (2-5 s) is "unknown" and the client
 * takes a new id (check.h: an unknown operation never completes).
 *
 * Final checks, once nothing is in flight and every member has applied
 * the leader's commit index: the register history plus a final read of
 * every key on every member must be linearizable (check_linearizable;
 * an UNKNOWN verdict fails the seed); every member's elems must hold every
 * acknowledged insert and only issued ones (check_set), no refused insert,
 * and exactly the unknown inserts node_quorum_txn_status() says applied;
 * and, after a clean stop, every member's replication_quorum_snapshot()
 * must be the same bytes at the same applied index (State Machine Safety,
 * Raft §5.4.3, at the data level).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "quorum_int.h"

/* One operation in flight: what its callback needs (owned by the callback
 * from the moment node_quorum accepted it). */
struct call {
    struct sim *sim;
    unsigned client; /* index in sim->clients */
    size_t op;       /* history index */
    unsigned node;   /* the member it went to */
    int64_t changes; /* rows the transaction changed, at execute */
    char sql[128];   /* the transaction (writes) */
};

/* ---- setup ---- */

struct setup_write {
    const char *sql; /* borrowed */
    bool done;
    int status;
};

static int run_setup_sql(void *ctx, struct engine_db *db)
{
    return engine_exec(db, ((struct setup_write *)ctx)->sql, NULL, NULL);
}

static void setup_done(void *ctx, int status, uint64_t index)
{
    struct setup_write *w = ctx;

    (void)index;
    w->done = true;
    w->status = status;
}

static bool setup_is_done(struct sim *sim, void *arg)
{
    (void)sim;
    return ((struct setup_write *)arg)->done;
}

static bool has_leader(struct sim *sim, void *arg)
{
    (void)arg;
    return simq_ready_leader(sim) >= 0;
}

static void draw_txn_id(struct sim *sim, uint8_t *out)
{
    for (size_t b = 0; b < SIM_TXN_ID_BYTES; b++) {
        out[b] = (uint8_t)sim_rng_next(&sim->rng[SIM_RNG_WORKLOAD]);
    }
}

/* Writes sql on the leader, then waits for a read barrier: a write's
 * answer alone proves nothing in the early-ack mutant, a barrier does. */
static int setup_exec(struct sim *sim, struct setup_write *w)
{
    uint8_t txn_id[SIM_TXN_ID_BYTES];
    struct node_quorum *q;
    int leader;
    int rc = simq_run_until(sim, has_leader, NULL, 30000, "setup leader");

    if (rc != 0) {
        return rc;
    }
    leader = simq_ready_leader(sim);
    q = simq_member(sim, (unsigned)leader);
    draw_txn_id(sim, txn_id);
    sim->nodes[leader].tick_now = true;
    rc = node_quorum_write(q, run_setup_sql, w, txn_id, setup_done, w);
    if (rc == 0) {
        rc = simq_run_until(sim, setup_is_done, w, 10000, "setup write");
    }
    if (rc == 0 && w->status == 0) {
        w->done = false;
        rc = node_quorum_read(q, setup_done, w);
        rc = rc != 0 ? rc
                     : simq_run_until(sim, setup_is_done, w, 10000,
                                      "setup barrier");
    }
    if (rc == 0 && w->status != 0) {
        return sim_fail(sim, "setup", -1, "%s: %s", w->sql,
                        simq_strerror(w->status));
    }
    return rc;
}

int simq_schema(struct sim *sim)
{
    struct simq *s = simq_get(sim);
    char rows[SIMQ_KEYS_MAX * 12 + 32];
    const char *sql[] = {
        "CREATE TABLE reg(k INTEGER PRIMARY KEY, v INTEGER)",
        rows,
        "CREATE TABLE elems(e INTEGER PRIMARY KEY)",
        "CREATE TABLE probe(k INTEGER PRIMARY KEY, v INTEGER)",
        "INSERT INTO probe VALUES (0, 0)",
    };
    size_t used = (size_t)snprintf(rows, sizeof rows, "INSERT INTO reg VALUES");
    int rc = 0;

    for (unsigned k = 0; k < s->keys; k++) {
        used += (size_t)snprintf(rows + used, sizeof rows - used, "%s(%u, 0)",
                                 k == 0 ? " " : ", ", k);
    }
    for (size_t i = 0; i < sizeof sql / sizeof sql[0] && rc == 0; i++) {
        /* Static: a callback may outlive a failed wait. */
        static struct setup_write w;

        w = (struct setup_write){.sql = sql[i]};
        rc = setup_exec(sim, &w);
    }
    return rc;
}

/* ---- clients ---- */

/* The member some up member's status names leader, asking the client's
 * last target first; -1 when none is known or reachable. */
static int pick_target(struct sim *sim, const struct sim_client *client)
{
    unsigned n = sim->config.nodes;

    for (unsigned k = 0; k < n; k++) {
        struct node_quorum *q = simq_member(sim, (client->node + k) % n);
        struct consensus_status st;

        if (q == NULL) {
            continue;
        }
        consensus_status_get(node_quorum_consensus(q), &st);
        int leader = simq_index_of(sim, st.leader_id);

        if (leader >= 0 && simq_member(sim, (unsigned)leader) != NULL) {
            return leader;
        }
    }
    return -1;
}

/* The client is free again (if op is still its operation). */
static void release(struct sim *sim, unsigned c, size_t op)
{
    struct sim_client *client = &sim->clients[c];

    if (!client->busy || client->op != op) {
        return;
    }
    client->busy = false;
    if (sim_history_op(sim, op)->outcome == SIM_UNKNOWN) {
        client->id += SIM_CLIENTS_MAX;
    }
    client->due_ms = sim->now_ms + sim_rng_below(&sim->rng[SIM_RNG_WORKLOAD],
                                                 sim->config.think_ms_max + 1);
}

/* What a completion with status says happened (header comment). A member
 * whose disk froze in this step (point crash) tells its clients nothing. */
static enum sim_outcome outcome_of(struct sim *sim, const struct call *call,
                                   int status)
{
    if (sim->nodes[call->node].crash_pending) {
        return SIM_UNKNOWN;
    }
    if (status == 0) {
        return SIM_OK;
    }
    if (status == CONSENSUS_ENOTLEADER || status == REPLICATION_ECONFLICT) {
        return SIM_FAIL;
    }
    return SIM_UNKNOWN;
}

static void write_done(void *ctx, int status, uint64_t index)
{
    struct call *call = ctx;
    struct sim *sim = call->sim;
    struct sim_op *op = sim_history_op(sim, call->op);

    (void)index;
    if (op->outcome == SIM_PENDING) {
        enum sim_outcome outcome = outcome_of(sim, call, status);

        op->cas_ok =
            outcome == SIM_OK && op->kind == SIM_OP_CAS && call->changes == 1;
        if (outcome == SIM_OK && (op->kind == SIM_OP_WRITE || op->cas_ok)) {
            simq_get(sim)->last_value[op->key] = op->value;
        }
        sim_history_complete(sim, call->op, outcome, 0);
    }
    release(sim, call->client, call->op);
    common_free(call);
}

static int first_int(void *ctx, int columns, char **values, char **names)
{
    (void)names;
    if (columns >= 1 && values[0] != NULL) {
        *(int64_t *)ctx = strtoll(values[0], NULL, 10);
    }
    return 0;
}

/* The barrier passed: the read runs now, on the same member. */
static void read_done(void *ctx, int status, uint64_t index)
{
    struct call *call = ctx;
    struct sim *sim = call->sim;
    struct sim_op *op = sim_history_op(sim, call->op);
    int64_t value = CHECK_ABSENT;
    char sql[64];

    (void)index;
    if (op->outcome == SIM_PENDING && outcome_of(sim, call, status) == SIM_OK) {
        struct node_quorum *q = simq_get(sim)->nodes[call->node].q;
        int rc;

        snprintf(sql, sizeof sql, "SELECT v FROM reg WHERE k = %" PRId64,
                 op->key);
        rc = engine_exec(node_quorum_db(q), sql, first_int, &value);
        if (rc != 0) {
            sim_fail(sim, "read", op->key, "node %u: %s", call->node,
                     simq_strerror(rc));
        } else {
            simq_get(sim)->last_value[op->key] = value;
        }
        sim_history_complete(sim, call->op, rc == 0 ? SIM_OK : SIM_FAIL, value);
    } else if (op->outcome == SIM_PENDING) {
        /* Did not happen, or unknown: a read constrains nothing then. */
        sim_history_complete(sim, call->op, SIM_FAIL, 0);
    }
    release(sim, call->client, call->op);
    common_free(call);
}

static int run_call_sql(void *ctx, struct engine_db *db)
{
    struct call *call = ctx;
    int rc = engine_exec(db, call->sql, NULL, NULL);

    call->changes = engine_changes(db);
    return rc;
}

/* Draws the operation (kind, key, values) into op and its SQL. */
static void draw_op(struct sim *sim, struct sim_client *client,
                    struct sim_op *op, struct call *call)
{
    struct simq *s = simq_get(sim);
    struct sim_rng *rng = &sim->rng[SIM_RNG_WORKLOAD];
    uint64_t roll = sim_rng_below(rng, 100);

    op->key = (int64_t)sim_rng_below(rng, s->keys);
    if (roll < s->mix[0]) {
        op->kind = SIM_OP_READ;
        return;
    }
    op->value = sim_client_value(client);
    if (roll < s->mix[1]) {
        op->kind = SIM_OP_WRITE;
        snprintf(call->sql, sizeof call->sql,
                 "UPDATE reg SET v = %" PRId64 " WHERE k = %" PRId64, op->value,
                 op->key);
    } else if (roll < s->mix[2]) {
        op->kind = SIM_OP_CAS;
        op->expected = sim_rng_chance(rng, 0.8) ? s->last_value[op->key] : 0;
        snprintf(call->sql, sizeof call->sql,
                 "UPDATE reg SET v = %" PRId64 " WHERE k = %" PRId64
                 " AND v = %" PRId64,
                 op->value, op->key, op->expected);
    } else {
        op->kind = SIM_OP_ELEM_INSERT;
        op->key = 0;
        snprintf(call->sql, sizeof call->sql,
                 "INSERT INTO elems(e) VALUES (%" PRId64 ")", op->value);
    }
    draw_txn_id(sim, op->txn_id);
}

int simq_client_step(struct sim *sim, struct sim_client *client)
{
    struct simq *s = simq_get(sim);
    int target = pick_target(sim, client);
    struct sim_op op = {0};
    struct node_quorum *q;
    struct call *call;
    int rc;

    if (target < 0) {
        client->due_ms =
            sim->now_ms + sim_rng_range(&sim->rng[SIM_RNG_WORKLOAD], 10, 100);
        return 0;
    }
    call = common_calloc(1, sizeof *call);
    if (call == NULL) {
        return COMMON_ENOMEM;
    }
    q = simq_member(sim, (unsigned)target);
    *call = (struct call){
        .sim = sim, .client = client->index, .node = (unsigned)target};
    op.client = client->id;
    op.node = (unsigned)target;
    draw_op(sim, client, &op, call);
    call->op = sim_history_invoke(sim, &op);
    /* Busy before the call: the early-ack mutant answers inside it. */
    client->busy = true;
    client->op = call->op;
    client->node = (unsigned)target;
    s->clients[client->index].deadline_ms = sim->now_ms + s->timeout_ms;
    sim->nodes[target].tick_now = true; /* consensus.h: tick after a call */
    if (op.kind == SIM_OP_READ) {
        rc = node_quorum_read(q, read_done, call);
    } else {
        rc = node_quorum_write(q, run_call_sql, call, op.txn_id, write_done,
                               call);
    }
    if (rc != 0) {
        /* Refused before anything was proposed: it did not happen. */
        sim_history_complete(sim, call->op, SIM_FAIL, 0);
        release(sim, call->client, call->op);
        common_free(call);
    }
    return 0;
}

/* ---- every instant: timeouts, the healed phase's probe ---- */

static int run_probe_sql(void *ctx, struct engine_db *db)
{
    (void)ctx;
    return engine_exec(db, "UPDATE probe SET v = v + 1 WHERE k = 0", NULL,
                       NULL);
}

static void probe_done(void *ctx, int status, uint64_t index)
{
    struct simq *s = ctx;

    (void)index;
    s->probe_busy = false;
    s->probe_ok = status == 0;
}

/* Liveness after the heal (chaos-design.md §5): a write commits. */
static void probe_step(struct sim *sim)
{
    struct simq *s = simq_get(sim);
    uint8_t txn_id[SIM_TXN_ID_BYTES];
    int leader;

    if (sim->phase != SIM_PHASE_HEALED || s->probe_ok || s->probe_busy) {
        return;
    }
    leader = simq_ready_leader(sim);
    if (leader < 0) {
        return;
    }
    draw_txn_id(sim, txn_id);
    s->probe_busy = true;
    sim->nodes[leader].tick_now = true;
    if (node_quorum_write(simq_member(sim, (unsigned)leader), run_probe_sql,
                          NULL, txn_id, probe_done, s) != 0) {
        s->probe_busy = false;
    }
}

void simq_clients_due(struct sim *sim)
{
    struct simq *s = simq_get(sim);

    for (unsigned c = 0; c < sim->config.clients; c++) {
        struct sim_client *client = &sim->clients[c];

        if (client->busy && sim->now_ms >= s->clients[c].deadline_ms) {
            /* It gives up; a late answer is ignored (the op stays
             * unknown: the client never learned it). */
            if (sim_history_op(sim, client->op)->outcome == SIM_PENDING) {
                sim_history_complete(sim, client->op, SIM_UNKNOWN, 0);
            }
            release(sim, c, client->op);
        }
    }
    probe_step(sim);
}
