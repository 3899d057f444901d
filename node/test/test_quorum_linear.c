/* SPDX-License-Identifier: MIT
 *
 * test_quorum_linear.c: quorum mode's histories are linearizable. Clients
 * on the simulated cluster (quorum members on engine databases) read,
 * write and compare-and-set a few registers (rows of reg) while the
 * leader is partitioned away, killed and restarted, and followers are
 * cut off; every operation's invocation, completion and result is
 * recorded and the history is judged by the chaos suite's checker
 * (cluster-tests/check: Wing-Gong/Lowe search, per key). An operation
 * refused before it was proposed (not the leader, a conflict) is known not
 * to have happened and is left out; one whose outcome the client never
 * learned (leadership lost, the member killed, still pending at the end)
 * is recorded as unknown. Each seed picks its own fault schedule; make
 * test runs seeds 1..5 (SINEW_LINEAR_SEEDS=N runs 1..N), SINEW_TEST_SEED=N
 * runs seed N alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "quorum_test.h"

#define CLIENTS 6
#define KEYS 3
#define OPS_MAX 4000
#define RUN_MS 15000

struct history {
    struct check_op ops[OPS_MAX];
    size_t count;
    int64_t clock; /* a counter ordering every invocation and completion */
};

struct client {
    struct rc_cluster *cluster;
    struct history *history;
    unsigned id;
    unsigned target;    /* the member it sends to */
    bool busy;          /* an operation is in flight */
    size_t op;          /* its index in the history */
    int64_t next_value; /* unique values: id * 1,000,000 + n */
    uint64_t idle_until_ms;
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    char sql[128];
    int64_t changes;  /* rows the transaction changed, at execute */
    int64_t read_key; /* the key a read reads */
};

static struct history history;

static int run_sql(void *ctx, struct engine_db *db)
{
    struct client *cl = ctx;
    int rc = engine_exec(db, cl->sql, NULL, NULL);

    cl->changes = engine_changes(db);
    return rc;
}

static void complete(struct client *cl, int status)
{
    struct check_op *op = &cl->history->ops[cl->op];

    cl->busy = false;
    op->complete_ns = ++cl->history->clock;
    if (status == 0) {
        op->outcome = CHECK_OUTCOME_OK;
        op->cas_succeeded = op->kind == CHECK_CAS && cl->changes == 1;
    } else if (status == CONSENSUS_EUNKNOWN || status == CONSENSUS_ESHUTDOWN) {
        /* Proposed, then the member lost leadership or stopped: the next
         * leader may commit it or not. Reads and refusals never get here
         * (a read that fails is simply left out). */
        op->outcome = CHECK_OUTCOME_UNKNOWN;
    } else {
        /* Known not to have happened: left out of the history. */
        op->kind = CHECK_READ;
        op->key = -1;
    }
}

static void write_done(void *ctx, int status, uint64_t index)
{
    struct client *cl = ctx;

    (void)index;
    complete(cl, status);
}

static int read_value(void *ctx, int columns, char **values, char **names)
{
    int64_t *out = ctx;

    (void)names;
    if (columns == 1 && values[0] != NULL) {
        *out = strtoll(values[0], NULL, 10);
    }
    return 0;
}

static void read_done(void *ctx, int status, uint64_t index)
{
    struct client *cl = ctx;
    struct check_op *op = &cl->history->ops[cl->op];

    (void)index;
    if (status == 0) {
        char sql[64];
        int64_t value = -1;
        struct rc_node *node = &cl->cluster->nodes[cl->target];

        snprintf(sql, sizeof sql, "SELECT v FROM reg WHERE k = %" PRId64,
                 cl->read_key);
        assert_int_equal(
            engine_exec(node_quorum_db(node->user), sql, read_value, &value),
            0);
        op->value = value;
    }
    complete(cl, status == 0 ? 0 : CONSENSUS_ENOTLEADER);
}

/* The member client cl should try: the leader some member names. */
static unsigned pick_target(struct rc_cluster *c, struct client *cl)
{
    for (unsigned i = 0; i < c->count; i++) {
        struct consensus_status s;
        if (!c->nodes[i].up) {
            continue;
        }
        consensus_status_get(node_quorum_consensus(c->nodes[i].user), &s);
        if (s.leader_id != 0 && c->nodes[s.leader_id - 1].up) {
            return (unsigned)(s.leader_id - 1);
        }
    }
    return (unsigned)common_test_rng_below(&c->rng, c->count) + 0 * cl->id;
}

static void start_op(struct rc_cluster *c, struct client *cl)
{
    struct history *h = cl->history;
    struct check_op *op;
    uint64_t roll = common_test_rng_below(&c->rng, 10);
    int rc;

    if (h->count == OPS_MAX) {
        return;
    }
    cl->target = pick_target(c, cl);
    if (!c->nodes[cl->target].up) {
        return;
    }
    cl->op = h->count++;
    op = &h->ops[cl->op];
    *op =
        (struct check_op){.client_id = cl->id,
                          .key = (int64_t)common_test_rng_below(&c->rng, KEYS),
                          .invoke_ns = ++h->clock};
    for (size_t b = 0; b < sizeof cl->txn_id; b++) {
        cl->txn_id[b] = (uint8_t)common_test_rng_next(&c->rng);
    }
    cl->busy = true;
    cl->changes = 0;
    c->nodes[cl->target].next_tick_ms = 0;
    if (roll < 4) {
        op->kind = CHECK_READ;
        cl->read_key = op->key;
        rc = node_quorum_read(c->nodes[cl->target].user, read_done, cl);
    } else {
        op->value = cl->next_value++;
        if (roll < 7) {
            op->kind = CHECK_WRITE;
            snprintf(cl->sql, sizeof cl->sql,
                     "UPDATE reg SET v = %" PRId64 " WHERE k = %" PRId64,
                     op->value, op->key);
        } else {
            /* Expect a value this client saw or wrote, or the initial 0. */
            op->kind = CHECK_CAS;
            op->expected = roll == 9 ? 0 : op->value - 1;
            snprintf(cl->sql, sizeof cl->sql,
                     "UPDATE reg SET v = %" PRId64 " WHERE k = %" PRId64
                     " AND v = %" PRId64,
                     op->value, op->key, op->expected);
        }
        rc = node_quorum_write(c->nodes[cl->target].user, run_sql, cl,
                               cl->txn_id, write_done, cl);
    }
    if (rc != 0) {
        /* Refused before anything was proposed. */
        complete(cl, CONSENSUS_ENOTLEADER);
        cl->idle_until_ms = c->now_ms + 20;
    }
}

/* One fault, chosen by the seed, or a repair. */
static void nemesis(struct rc_cluster *c, bool *down, bool *isolated)
{
    unsigned i = (unsigned)common_test_rng_below(&c->rng, c->count);
    int leader = rc_leader(c);

    switch (common_test_rng_below(&c->rng, 5)) {
    case 0: /* isolate the leader */
        if (leader >= 0 && !isolated[leader]) {
            rc_isolate(c, (unsigned)leader);
            isolated[leader] = true;
        }
        break;
    case 1: /* kill the leader (a crash: its clients learn nothing) */
        if (leader >= 0 && !down[leader]) {
            rc_stop(c, (unsigned)leader);
            down[leader] = true;
        }
        break;
    case 2: /* cut one member off */
        if (!isolated[i]) {
            rc_isolate(c, i);
            isolated[i] = true;
        }
        break;
    default: /* heal everything, restart the dead */
        for (unsigned j = 0; j < c->count; j++) {
            if (isolated[j]) {
                rc_rejoin(c, j);
                isolated[j] = false;
            }
            if (down[j]) {
                rc_start(c, j);
                down[j] = false;
            }
        }
    }
}

static void run_seed(uint64_t seed)
{
    static struct client clients[CLIENTS];
    struct rc_cluster c;
    struct check_verdict verdict;
    struct check_options options;
    bool down[3] = {false}, isolated[3] = {false};
    uint64_t end, next_fault;
    size_t unknown = 0, kept = 0;

    rc_init(&c, 3, seed);
    qt_use_quorum_members(&c);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    qt_exec(&c, "CREATE TABLE reg(k INTEGER PRIMARY KEY, v INTEGER)");
    qt_exec(&c, "INSERT INTO reg VALUES (0, 0), (1, 0), (2, 0)");
    memset(&history, 0, sizeof history);
    for (unsigned k = 0; k < CLIENTS; k++) {
        clients[k] = (struct client){.cluster = &c,
                                     .history = &history,
                                     .id = k + 1,
                                     .next_value = (int64_t)(k + 1) * 1000000};
    }
    end = c.now_ms + RUN_MS;
    next_fault = c.now_ms + 500 + common_test_rng_below(&c.rng, 1500);
    while (c.now_ms < end + 5000) {
        if (c.now_ms >= next_fault && c.now_ms < end) {
            nemesis(&c, down, isolated);
            next_fault = c.now_ms + 300 + common_test_rng_below(&c.rng, 2000);
        }
        if (c.now_ms >= end && next_fault != UINT64_MAX) {
            /* The healed phase: everything back, pending work drains. */
            for (unsigned j = 0; j < 3; j++) {
                isolated[j] = isolated[j] ? (rc_rejoin(&c, j), false) : false;
                down[j] = down[j] ? (rc_start(&c, j), false) : false;
            }
            next_fault = UINT64_MAX;
        }
        for (unsigned k = 0; k < CLIENTS && c.now_ms < end; k++) {
            struct client *cl = &clients[k];
            if (cl->busy && !c.nodes[cl->target].up) {
                /* Its member crashed: the client never hears back. */
                cl->busy = false;
                history.ops[cl->op].outcome = CHECK_OUTCOME_UNKNOWN;
            }
            if (!cl->busy && c.now_ms >= cl->idle_until_ms) {
                start_op(&c, cl);
            }
        }
        rc_run(&c, 5);
    }
    for (unsigned k = 0; k < CLIENTS; k++) {
        if (clients[k].busy) {
            history.ops[clients[k].op].outcome = CHECK_OUTCOME_UNKNOWN;
        }
    }
    /* Drop the operations known not to have happened. */
    for (size_t i = 0; i < history.count; i++) {
        if (history.ops[i].key >= 0) {
            unknown += history.ops[i].outcome == CHECK_OUTCOME_UNKNOWN;
            history.ops[kept++] = history.ops[i];
        }
    }
    check_options_init(&options);
    options.initial_value = 0;
    assert_int_equal(check_linearizable(history.ops, kept, &options, &verdict),
                     0);
    if (verdict.result != CHECK_LINEARIZABLE) {
        check_verdict_print(&verdict, history.ops, kept, stdout);
        fail_msg("seed %" PRIu64 ": %s (replay: SINEW_TEST_SEED=%" PRIu64 ")",
                 seed, check_result_name(verdict.result), seed);
    }
    printf("  seed %" PRIu64 ": %zu operations (%zu unknown) linearizable\n",
           seed, kept, unknown);
    assert_true(kept > 200);
    check_verdict_close(&verdict);
    rc_free(&c);
}

static void test_linearizable_under_faults(void **state)
{
    const char *one = getenv("SINEW_TEST_SEED");
    const char *count = getenv("SINEW_LINEAR_SEEDS");
    unsigned seeds = count != NULL ? (unsigned)atoi(count) : 5;

    (void)state;
    if (one != NULL && one[0] != '\0') {
        run_seed(strtoull(one, NULL, 0));
        return;
    }
    /* Fixed seeds, so make test's verdict is reproducible. */
    for (unsigned s = 1; s <= seeds; s++) {
        run_seed(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linearizable_under_faults),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
