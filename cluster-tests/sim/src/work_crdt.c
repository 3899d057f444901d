/* SPDX-License-Identifier: MIT
 *
 * work_crdt.c: crdt mode's clients and checkers (chaos-design.md §7, §8).
 * Clients write on any up node: INSERT (every column), UPDATE of 1-3
 * columns, DELETE, a two-row transaction (one HLC), elem inserts, and tie
 * bursts (one cell updated on 2-3 nodes at the same instant: equal HLCs
 * on equal clocks, so the site tie-break decides). Each acknowledged
 * change is recorded with K = (engine_last_stamp, replication_site_id).
 * Settled = every node's dump equal; then the oracle (check_lww) and the
 * set check (check_set) judge every node's final reads.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "repl.h"

static struct repl *repl_of(struct sim *sim)
{
    return sim->mode_state;
}

/* Records a committed change of client on node. */
static void record(struct sim *sim, struct sim_client *client, unsigned node,
                   struct sim_op *op, enum sim_outcome outcome)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node];
    size_t index;

    op->client = client->id;
    op->node = node;
    op->hlc = engine_last_stamp(rn->db);
    memcpy(op->site, replication_site_id(rn->r), SIM_SITE_BYTES);
    index = sim_history_invoke(sim, op);
    sim_history_complete(sim, index, outcome, 0);
    if (op->hlc > rn->last_hlc) {
        rn->last_hlc = op->hlc;
    }
}

/* The outcome of a statement that returned rc: ok, fail, or unknown when
 * the node's disk froze under it (point crash). */
static enum sim_outcome outcome_of(struct sim *sim, unsigned node, int rc)
{
    if (sim->nodes[node].crash_pending) {
        return SIM_UNKNOWN;
    }
    if (rc == ENGINE_EIO || rc == ENGINE_EFULL) {
        return SIM_UNKNOWN;
    }
    return rc == 0 ? SIM_OK : SIM_FAIL;
}

static void write_one(struct sim *sim, struct sim_client *client, unsigned node,
                      unsigned roll, int64_t key)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node];
    struct sim_op op = {.key = key};
    int64_t args[4], changes = 0;
    int rc;

    if (roll < 3) {
        op.kind = SIM_OP_CELL_INSERT;
        op.columns = 7;
        for (int c = 0; c < 3; c++) {
            op.cells[c] = sim_client_value(client);
        }
        args[0] = key;
        memcpy(&args[1], op.cells, sizeof(op.cells));
        rc = repl_exec(rn->db, "INSERT INTO cells VALUES (?1, ?2, ?3, ?4)",
                       args, 4, &changes);
    } else if (roll < 7) {
        static const char *const sql[] = {
            "",
            "UPDATE cells SET a = ?2 WHERE k = ?1",
            "UPDATE cells SET b = ?3 WHERE k = ?1",
            "UPDATE cells SET a = ?2, b = ?3 WHERE k = ?1",
            "UPDATE cells SET c = ?4 WHERE k = ?1",
            "UPDATE cells SET a = ?2, c = ?4 WHERE k = ?1",
            "UPDATE cells SET b = ?3, c = ?4 WHERE k = ?1",
            "UPDATE cells SET a = ?2, b = ?3, c = ?4 WHERE k = ?1"};

        op.kind = SIM_OP_CELL_UPDATE;
        op.columns = (unsigned)sim_rng_range(&sim->rng[SIM_RNG_WORKLOAD], 1, 7);
        for (int c = 0; c < 3; c++) {
            op.cells[c] = sim_client_value(client);
        }
        args[0] = key;
        memcpy(&args[1], op.cells, sizeof(op.cells));
        rc = repl_exec(rn->db, sql[op.columns], args, 4, &changes);
    } else if (roll < 8) {
        op.kind = SIM_OP_CELL_DELETE;
        args[0] = key;
        rc = repl_exec(rn->db, "DELETE FROM cells WHERE k = ?1", args, 1,
                       &changes);
    } else {
        op.kind = SIM_OP_ELEM_INSERT;
        op.value = sim_client_value(client);
        args[0] = op.value;
        args[1] = node;
        rc = repl_exec(rn->db, "INSERT INTO elems VALUES (?1, ?2)", args, 2,
                       &changes);
    }
    if (rc == 0 && changes == 0 && !sim->nodes[node].crash_pending) {
        return; /* no row matched: no change set, nothing to record */
    }
    record(sim, client, node, &op, outcome_of(sim, node, rc));
}

/* The same cell updated on 2-3 nodes at this instant. */
static void tie_burst(struct sim *sim, struct sim_client *client, int64_t key)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_WORKLOAD];
    unsigned burst = (unsigned)sim_rng_range(rng, 2, 3), done = 0;

    for (unsigned i = 0; i < sim->config.nodes && done < burst; i++) {
        if (sim->nodes[i].up && !sim->nodes[i].paused &&
            !sim->nodes[i].crash_pending) {
            write_one(sim, client, i, 3, key); /* an UPDATE */
            done++;
        }
    }
}

static int crdt_client_step(struct sim *sim, struct sim_client *client)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_WORKLOAD];
    int node = repl_pick_node(sim);
    unsigned roll = (unsigned)sim_rng_below(rng, 10);
    int64_t key = (int64_t)sim_rng_below(rng, sim->config.keys);

    client->due_ms =
        sim->now_ms + sim_rng_range(rng, 1, sim->config.think_ms_max);
    if (node < 0) {
        return 0;
    }
    if (sim->config.tie_bursts && sim_rng_chance(rng, 0.3)) {
        tie_burst(sim, client, key);
    } else {
        write_one(sim, client, (unsigned)node, roll, key);
    }
    return 0;
}

static int crdt_leader(struct sim *sim)
{
    (void)sim;
    return -1;
}

static int crdt_heal(struct sim *sim)
{
    (void)sim;
    return 0;
}

/* Whether every node is up and dump() gives the same text on each. */
static bool dumps_equal(struct sim *sim, char *(*dump_of)(struct engine_db *))
{
    char *first = NULL;
    bool equal = true;

    for (unsigned i = 0; i < sim->config.nodes && equal; i++) {
        struct repl_node *rn = &repl_of(sim)->nodes[i];
        char *dump;

        if (!sim->nodes[i].up) {
            equal = false;
            break;
        }
        dump = dump_of(rn->db);
        if (first == NULL) {
            first = dump;
            continue;
        }
        equal = strcmp(first, dump) == 0;
        common_free(dump);
    }
    common_free(first);
    return equal;
}

/* Settled = byte-identical dumps. Equal version vectors come first: they
 * cost a few rows, and while they differ the dumps cannot be equal. */
static bool crdt_settled(struct sim *sim)
{
    if (sim->now_ms < repl_of(sim)->next_settle_check_ms) {
        return false;
    }
    repl_of(sim)->next_settle_check_ms = sim->now_ms + 100;
    return dumps_equal(sim, repl_dump_vv) && dumps_equal(sim, repl_dump);
}

static int check_node_cells(struct sim *sim, unsigned node,
                            const struct check_lww_write *writes, size_t count)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node];
    int64_t *data = NULL, bad_key = -1;
    size_t rows = 0;
    char why[256];
    int rc = repl_query(rn->db, "SELECT k, a, b, c FROM cells ORDER BY k", 4,
                        &data, &rows);

    if (rc != 0) {
        return sim_fail(sim, "final-read", -1, "node %u: %s", node,
                        engine_errmsg(rn->db));
    }
    struct check_lww_row *lww = common_calloc(rows + 1, sizeof(*lww));

    ASSERT(lww != NULL);
    for (size_t r = 0; r < rows; r++) {
        lww[r].key = data[r * 4];
        memcpy(lww[r].values, &data[r * 4 + 1], 3 * sizeof(int64_t));
    }
    rc = check_lww(writes, count, lww, rows, &bad_key, why, sizeof(why));
    common_free(lww);
    common_free(data);
    if (rc != 0) {
        return sim_fail(sim, "lww", bad_key, "node %u: %s", node, why);
    }
    return 0;
}

static int check_node_elems(struct sim *sim, unsigned node)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node];
    int64_t *final = NULL, lost, phantom;
    int64_t *acked = common_calloc(sim->history_count + 1, sizeof(int64_t));
    int64_t *unknown = common_calloc(sim->history_count + 1, sizeof(int64_t));
    size_t rows = 0, na = 0, nu = 0, bad;
    int rc;

    ASSERT(acked != NULL && unknown != NULL);
    for (size_t i = 0; i < sim->history_count; i++) {
        const struct sim_op *op = &sim->history[i];

        if (op->kind == SIM_OP_ELEM_INSERT && op->outcome == SIM_OK) {
            acked[na++] = op->value;
        } else if (op->kind == SIM_OP_ELEM_INSERT &&
                   op->outcome == SIM_UNKNOWN) {
            unknown[nu++] = op->value;
        }
    }
    rc = repl_query(rn->db, "SELECT e FROM elems", 1, &final, &rows);
    if (rc == 0) {
        bad = check_set(acked, na, unknown, nu, final, rows, &lost, &phantom);
        if (bad > 0) {
            rc = sim_fail(sim, "set", lost != CHECK_ABSENT ? lost : phantom,
                          "node %u: %zu elems lost or phantom (first lost "
                          "%lld, first phantom %lld)",
                          node, bad, (long long)lost, (long long)phantom);
        }
    }
    common_free(final);
    common_free(acked);
    common_free(unknown);
    return rc;
}

static int crdt_final_check(struct sim *sim)
{
    struct check_lww_write *writes =
        common_calloc(sim->history_count + 1, sizeof(*writes));
    size_t count = 0;
    int rc = 0;

    ASSERT(writes != NULL);
    for (size_t i = 0; i < sim->history_count; i++) {
        const struct sim_op *op = &sim->history[i];
        struct check_lww_write *w = &writes[count];

        if (op->kind < SIM_OP_CELL_INSERT || op->kind > SIM_OP_CELL_DELETE ||
            op->outcome == SIM_FAIL) {
            continue;
        }
        w->kind = op->kind == SIM_OP_CELL_INSERT   ? CHECK_LWW_INSERT
                  : op->kind == SIM_OP_CELL_UPDATE ? CHECK_LWW_UPDATE
                                                   : CHECK_LWW_DELETE;
        w->key = op->key;
        w->columns = op->columns;
        memcpy(w->values, op->cells, sizeof(w->values));
        w->hlc = op->hlc;
        memcpy(w->site, op->site, SIM_SITE_BYTES);
        w->unknown = op->outcome == SIM_UNKNOWN;
        count++;
    }
    for (unsigned i = 0; i < sim->config.nodes && rc == 0; i++) {
        rc = check_node_cells(sim, i, writes, count);
        if (rc == 0) {
            rc = check_node_elems(sim, i);
        }
    }
    common_free(writes);
    return rc;
}

const struct sim_mode_ops sim_crdt_ops = {
    .name = "crdt",
    .setup = repl_setup,
    .node_open = repl_node_open,
    .node_close = repl_node_close,
    .node_tick = repl_node_tick,
    .received = repl_received,
    .connected = repl_connected,
    .disconnected = repl_disconnected,
    .writable = repl_writable,
    .client_step = crdt_client_step,
    .leader = crdt_leader,
    .heal = crdt_heal,
    .settled = crdt_settled,
    .invariants = repl_invariants,
    .final_check = crdt_final_check,
    .teardown = repl_teardown,
};
