/* SPDX-License-Identifier: MIT
 *
 * work_leader.c: leader mode's clients and checkers (chaos-design.md §7,
 * §8). Writer clients append `INSERT INTO log(v, epoch)` on the node the
 * operator made writer; a failover promotes another node with epoch + 1
 * and, half the time, tells the old writer (else it keeps writing until
 * heal: the split brain the fence must contain). Settled = every
 * non-diverged node's log equals the writer's; then check_prefix on every
 * node and: every append acknowledged in the final epoch is in the log.
 */
#include <string.h>

#include "check.h"
#include "repl.h"

static struct repl *repl_of(struct sim *sim)
{
    return sim->mode_state;
}

static int leader_client_step(struct sim *sim, struct sim_client *client)
{
    struct sim_rng *rng = &sim->rng[SIM_RNG_WORKLOAD];
    struct repl *repl = repl_of(sim);
    int node = repl_pick_node(sim);
    struct sim_op op = {.kind = SIM_OP_APPEND};
    int64_t args[2], changes = 0;
    size_t index;
    int rc;

    client->due_ms =
        sim->now_ms + sim_rng_range(rng, 1, sim->config.think_ms_max);
    if (node < 0) {
        return 0;
    }
    /* Most appends go to the operator's writer, some to whoever. */
    if (sim_rng_chance(rng, 0.8) && sim->nodes[repl->writer].up &&
        !sim->nodes[repl->writer].paused) {
        node = repl->writer;
    }
    op.client = client->id;
    op.node = (unsigned)node;
    op.value = sim_client_value(client);
    op.epoch = repl->nodes[node].writer_epoch;
    args[0] = op.value;
    args[1] = (int64_t)op.epoch;
    index = sim_history_invoke(sim, &op);
    rc = repl_exec(repl->nodes[node].db,
                   "INSERT INTO log(v, epoch) VALUES (?1, ?2)", args, 2,
                   &changes);
    sim_history_complete(sim, index,
                         sim->nodes[node].crash_pending ? SIM_UNKNOWN
                         : rc == 0                      ? SIM_OK
                                                        : SIM_FAIL,
                         0);
    return 0;
}

static int leader_leader(struct sim *sim)
{
    return repl_of(sim)->writer;
}

static int leader_failover(struct sim *sim)
{
    struct repl *repl = repl_of(sim);
    int next = (repl->writer + 1 +
                (int)sim_rng_below(&sim->rng[SIM_RNG_NEMESIS],
                                   sim->config.nodes - 1)) %
               (int)sim->config.nodes;

    if (sim_rng_chance(&sim->rng[SIM_RNG_NEMESIS], 0.5)) {
        repl->nodes[repl->writer].writer_epoch = 0; /* clean handover */
    }
    repl->epoch++;
    repl->writer = next;
    repl->nodes[next].writer_epoch = repl->epoch;
    sim_trace(sim, next, "failover", repl->epoch, 0);
    return 0;
}

static int leader_heal(struct sim *sim)
{
    struct repl *repl = repl_of(sim);

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        if ((int)i != repl->writer) {
            repl->nodes[i].writer_epoch = 0;
        }
    }
    return 0;
}

static bool diverged(struct sim *sim, unsigned i)
{
    struct replication_stats stats;
    bool d = false;

    if (replication_stats_get(repl_of(sim)->nodes[i].r, &stats) == 0) {
        d = stats.diverged;
        replication_stats_release(&stats);
    }
    return d;
}

static int read_log(struct sim *sim, unsigned i, int64_t **values,
                    size_t *count)
{
    return repl_query(repl_of(sim)->nodes[i].db,
                      "SELECT v FROM log ORDER BY seq", 1, values, count);
}

/* The number of rows in node i's log, or -1 when it cannot be read. */
static int64_t log_count(struct sim *sim, unsigned i)
{
    int64_t *count = NULL, n = -1;
    size_t rows = 0;

    if (repl_query(repl_of(sim)->nodes[i].db, "SELECT count(*) FROM log", 1,
                   &count, &rows) == 0 &&
        rows == 1) {
        n = count[0];
    }
    common_free(count);
    return n;
}

/* The cheap first test: every node up, and every non-diverged one holds
 * as many rows as the writer (the full comparison reads whole logs). */
static bool counts_equal(struct sim *sim)
{
    int64_t writer = log_count(sim, (unsigned)repl_of(sim)->writer);

    for (unsigned i = 0; i < sim->config.nodes; i++) {
        if (!sim->nodes[i].up) {
            return false;
        }
        if (!diverged(sim, i) && log_count(sim, i) != writer) {
            return false;
        }
    }
    return writer >= 0;
}

static bool leader_settled(struct sim *sim)
{
    struct repl *repl = repl_of(sim);
    int64_t *w = NULL;
    size_t wn = 0;
    bool equal = true;

    if (sim->now_ms < repl->next_settle_check_ms) {
        return false;
    }
    repl->next_settle_check_ms = sim->now_ms + 100;
    if (!counts_equal(sim) ||
        read_log(sim, (unsigned)repl->writer, &w, &wn) != 0) {
        return false;
    }
    for (unsigned i = 0; i < sim->config.nodes && equal; i++) {
        int64_t *f = NULL;
        size_t fn = 0, at;

        if (!sim->nodes[i].up) {
            equal = false;
        } else if (diverged(sim, i)) {
            continue;
        } else if (read_log(sim, i, &f, &fn) != 0 ||
                   check_prefix(w, wn, f, fn, true, &at) != 0) {
            equal = false;
        }
        common_free(f);
    }
    common_free(w);
    return equal;
}

static int leader_final_check(struct sim *sim)
{
    struct repl *repl = repl_of(sim);
    int64_t *w = NULL, *acked, lost, phantom;
    size_t wn = 0, na = 0;
    int rc = read_log(sim, (unsigned)repl->writer, &w, &wn);

    if (rc != 0) {
        return sim_fail(sim, "final-read", -1, "writer log unreadable");
    }
    acked = common_calloc(sim->history_count + 1, sizeof(*acked));
    ASSERT(acked != NULL);
    for (size_t i = 0; i < sim->history_count; i++) {
        const struct sim_op *op = &sim->history[i];

        if (op->kind == SIM_OP_APPEND && op->outcome == SIM_OK &&
            op->epoch == repl->epoch && op->node == (unsigned)repl->writer) {
            acked[na++] = op->value;
        }
    }
    /* Acknowledged appends of the final epoch are all in the log. */
    if (check_set(acked, na, w, wn, w, wn, &lost, &phantom) > 0 &&
        lost != CHECK_ABSENT) {
        rc = sim_fail(sim, "prefix", lost,
                      "append %lld acknowledged in epoch %llu is not in the "
                      "writer's log",
                      (long long)lost, (unsigned long long)repl->epoch);
    }
    common_free(acked);
    common_free(w);
    return rc;
}

const struct sim_mode_ops sim_leader_ops = {
    .name = "leader",
    .setup = repl_setup,
    .node_open = repl_node_open,
    .node_close = repl_node_close,
    .node_tick = repl_node_tick,
    .received = repl_received,
    .connected = repl_connected,
    .disconnected = repl_disconnected,
    .writable = repl_writable,
    .client_step = leader_client_step,
    .leader = leader_leader,
    .heal = leader_heal,
    .settled = leader_settled,
    .invariants = repl_invariants,
    .final_check = leader_final_check,
    .teardown = repl_teardown,
    .failover = leader_failover,
};
