/* SPDX-License-Identifier: MIT
 *
 * raft_cluster.c: the consensus tests' simulated cluster (raft_cluster.h).
 */
#include "raft_cluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the test state machine ---- */

static uint64_t read_u64(const uint8_t *in)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | in[i];
    }
    return v;
}

static void machine_add(struct rc_machine *m, uint64_t index, uint64_t term,
                        uint64_t value)
{
    if (m->count == m->capacity) {
        m->capacity = m->capacity == 0 ? 64 : m->capacity * 2;
        m->applied = realloc(m->applied, m->capacity * sizeof *m->applied);
        assert_non_null(m->applied);
    }
    m->applied[m->count++] = (struct rc_applied){index, term, value};
}

static int machine_apply(void *ctx, uint64_t index, uint64_t term,
                         const uint8_t *const *commands, const size_t *sizes,
                         size_t count, int *results)
{
    struct rc_node *node = ctx;
    struct rc_machine *m = &node->machine;

    if (index <= m->applied_index) {
        return 0; /* applied before a restart: Raft replays it */
    }
    for (size_t i = 0; i < count; i++) {
        if (m->fail_value != 0 && sizes[i] == 8 &&
            read_u64(commands[i]) == m->fail_value) {
            return COMMON_ENOMEM; /* as a state machine out of memory */
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (sizes[i] != 8) {
            results[i] = -1; /* a large test command: counted, not kept */
            continue;
        }
        machine_add(m, index, term, read_u64(commands[i]));
        /* The result tells the proposer where in the entry it landed. */
        results[i] = (int)i + 1;
    }
    m->applied_index = index;
    return 0;
}

static int machine_snapshot(void *ctx, struct common_buf *out)
{
    struct rc_node *node = ctx;
    struct rc_machine *m = &node->machine;
    int rc = common_buf_append_u64le(out, m->applied_index);

    rc = rc ? rc : common_buf_append_u64le(out, m->count);
    for (size_t i = 0; i < m->count && rc == 0; i++) {
        rc = common_buf_append_u64le(out, m->applied[i].index);
        rc = rc ? rc : common_buf_append_u64le(out, m->applied[i].term);
        rc = rc ? rc : common_buf_append_u64le(out, m->applied[i].value);
    }
    for (size_t i = 0; i < m->snapshot_padding && rc == 0; i++) {
        rc = common_buf_append_byte(out, 0);
    }
    m->snapshots++;
    return rc;
}

static int machine_restore(void *ctx, uint64_t index, const uint8_t *bytes,
                           size_t size)
{
    struct rc_node *node = ctx;
    struct rc_machine *m = &node->machine;
    uint64_t count;

    if (m->fail_restore) {
        return COMMON_ENOMEM;
    }
    /* The snapshot names the last command it holds, which may be below
     * Raft's index (barriers and configuration changes after it). */
    assert_true(size >= 16);
    assert_true(read_u64(bytes) <= index);
    if (m->applied_index >= read_u64(bytes)) {
        return 0; /* already there: keep our state */
    }
    index = read_u64(bytes);
    count = read_u64(bytes + 8);
    assert_int_equal(size, 16 + count * 24 + m->snapshot_padding);
    m->count = 0;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *at = bytes + 16 + i * 24;
        machine_add(m, read_u64(at), read_u64(at + 8), read_u64(at + 16));
    }
    m->applied_index = index;
    m->restores++;
    return 0;
}

/* ---- the cluster ---- */

static uint64_t cluster_now(void *ctx)
{
    struct rc_cluster *c = ctx;
    return c->now_ms;
}

static uint64_t cluster_random(void *ctx)
{
    struct rc_cluster *c = ctx;
    return common_test_rng_next(&c->rng);
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct rc_node *node = ctx;

    consensus_received(node->consensus, peer, type, bytes, size);
    node->next_tick_ms = 0;
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct rc_node *node = ctx;
    consensus_connected(node->consensus, peer);
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct rc_node *node = ctx;
    consensus_writable(node->consensus, peer);
    node->next_tick_ms = 0;
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct rc_node *node = ctx;
    (void)reason;
    consensus_disconnected(node->consensus, peer);
}

static void node_log(void *ctx, int level, const char *file, int line,
                     const char *msg)
{
    struct rc_node *node = ctx;
    (void)file;
    (void)line;
    printf("  [node %u t=%" PRIu64 " %s] %s\n", node->index,
           node->cluster->now_ms, common_log_level_name(level), msg);
}

void rc_init(struct rc_cluster *c, size_t n, uint64_t seed)
{
    const struct transport_clock clock = {.now_ms = cluster_now, .ctx = c};
    const struct transport_random random = {.next = cluster_random, .ctx = c};
    const char *tmp = getenv("TMPDIR");

    assert_true(n <= RC_NODES_MAX);
    memset(c, 0, sizeof *c);
    c->rng.state = seed;
    c->count = n;
    c->now_ms = 1000;
    assert_int_equal(transport_memory_network_new(&clock, &random, &c->net), 0);
    snprintf(c->dir, sizeof c->dir, "%s/sinew-raft-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(c->dir));
    for (size_t i = 0; i < n; i++) {
        struct rc_node *node = &c->nodes[i];
        node->cluster = c;
        node->index = (unsigned)i;
        node->id = i + 1;
        memset(node->node.key, (int)(i + 1), sizeof node->node.key);
        snprintf(node->address, sizeof node->address, "n%u", (unsigned)i);
        snprintf(node->dir, sizeof node->dir, "%s/n%zu", c->dir, i);
    }
}

static void remove_tree(const char *dir)
{
    char command[700];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    assert_int_equal(system(command), 0);
}

void rc_free(struct rc_cluster *c)
{
    for (size_t i = 0; i < c->count; i++) {
        if (c->nodes[i].up) {
            rc_stop(c, (unsigned)i);
        }
        free(c->nodes[i].machine.applied);
    }
    transport_memory_network_free(c->net);
    remove_tree(c->dir);
}

static void open_member(struct rc_cluster *c, struct rc_node *node)
{
    const struct transport_callbacks callbacks = {.received = on_received,
                                                  .connected = on_connected,
                                                  .disconnected =
                                                      on_disconnected,
                                                  .writable = on_writable,
                                                  .ctx = node};
    const struct consensus_state_machine machine = {.apply = machine_apply,
                                                    .snapshot =
                                                        machine_snapshot,
                                                    .restore = machine_restore,
                                                    .ctx = node};
    struct consensus_config config = {
        .id = node->id,
        .node = node->node,
        .address = node->address,
        .data_dir = node->dir,
        .clock = {.now_ms = cluster_now, .ctx = c},
        .random = {.next = cluster_random, .ctx = c},
        .election_timeout_ms = c->election_timeout_ms,
        .heartbeat_ms = c->heartbeat_ms,
        .snapshot_threshold = c->snapshot_threshold,
        .snapshot_trailing = c->snapshot_trailing,
        .max_entry_bytes = c->max_entry_bytes,
        .max_message_bytes = c->limits.max_message_bytes,
    };

    node->log = (struct common_log){.ctx = node,
                                    .min_level = getenv("SINEW_TEST_VERBOSE")
                                                     ? COMMON_LOG_DEBUG
                                                     : COMMON_LOG_ERROR + 1,
                                    .emit = node_log};
    config.log = &node->log;
    assert_int_equal(transport_memory_new(c->net, &node->node, &callbacks,
                                          &c->limits, &node->transport),
                     0);
    config.transport = node->transport;
    assert_int_equal(transport_listen(node->transport, node->address), 0);
    if (c->ops != NULL) {
        c->ops->open(node, &config, &node->consensus);
        return;
    }
    assert_int_equal(consensus_open(&config, &machine, &node->consensus), 0);
}

void rc_bootstrap(struct rc_cluster *c, size_t voters)
{
    struct consensus_member members[RC_NODES_MAX];

    for (size_t i = 0; i < voters; i++) {
        members[i] = (struct consensus_member){.id = c->nodes[i].id,
                                               .node = c->nodes[i].node,
                                               .address = c->nodes[i].address,
                                               .role = CONSENSUS_VOTER};
    }
    for (size_t i = 0; i < voters; i++) {
        struct rc_node *node = &c->nodes[i];
        open_member(c, node);
        assert_int_equal(consensus_bootstrap(node->consensus, members, voters),
                         0);
        node->up = true;
        rc_stop(c, (unsigned)i);
    }
}

int rc_try_start(struct rc_cluster *c, unsigned i)
{
    struct rc_node *node = &c->nodes[i];
    int rc;

    assert_false(node->up);
    open_member(c, node);
    rc = consensus_start(node->consensus);
    if (rc != 0) {
        node->up = true;
        rc_stop(c, i);
        return rc;
    }
    node->up = true;
    node->unavailable = false;
    node->next_tick_ms = 0;
    return 0;
}

void rc_start(struct rc_cluster *c, unsigned i)
{
    struct rc_node *node = &c->nodes[i];

    assert_false(node->up);
    open_member(c, node);
    assert_int_equal(consensus_start(node->consensus), 0);
    node->up = true;
    node->unavailable = false;
    node->next_tick_ms = 0;
}

static void transport_closed(void *ctx)
{
    (void)ctx;
}

void rc_stop(struct rc_cluster *c, unsigned i)
{
    struct rc_node *node = &c->nodes[i];

    assert_true(node->up);
    if (c->ops != NULL) {
        c->ops->close(node);
    } else {
        consensus_close(node->consensus);
    }
    transport_close(node->transport, transport_closed, NULL);
    node->consensus = NULL;
    node->transport = NULL;
    node->up = false;
}

void rc_start_all(struct rc_cluster *c)
{
    for (size_t i = 0; i < c->count; i++) {
        rc_start(c, (unsigned)i);
    }
}

void rc_wipe_machine(struct rc_cluster *c, unsigned i)
{
    struct rc_machine *m = &c->nodes[i].machine;

    free(m->applied);
    memset(m, 0, sizeof *m);
}

static void tick(struct rc_node *node)
{
    const struct rc_member_ops *ops = node->cluster->ops;
    uint64_t next = 0;
    int rc = ops != NULL ? ops->tick(node, &next)
                         : consensus_tick(node->consensus, &next);

    if (rc == CONSENSUS_EUNAVAILABLE) {
        /* Stopped: the test closes it when it wants. */
        node->unavailable = true;
        node->next_tick_ms = UINT64_MAX;
        return;
    }
    assert_int_equal(rc, 0);
    node->next_tick_ms = next;
}

/* One round: deliver due messages, tick due members; returns the time of
 * the next event. */
static uint64_t step(struct rc_cluster *c, uint64_t end)
{
    uint64_t next = end, due;

    (void)transport_memory_network_step(c->net);
    for (size_t i = 0; i < c->count; i++) {
        struct rc_node *node = &c->nodes[i];
        if (!node->up || node->unavailable) {
            continue;
        }
        if (node->next_tick_ms <= c->now_ms) {
            tick(node);
        }
        next = node->next_tick_ms < next ? node->next_tick_ms : next;
    }
    if (transport_memory_network_next_due(c->net, &due) && due < next) {
        next = due;
    }
    return next;
}

void rc_run(struct rc_cluster *c, uint64_t ms)
{
    uint64_t end = c->now_ms + ms;
    unsigned same_time = 0;

    for (;;) {
        uint64_t next = step(c, end);
        if (c->now_ms >= end && next >= end) {
            return;
        }
        if (next <= c->now_ms) {
            assert_true(++same_time < 100000);
            continue;
        }
        same_time = 0;
        c->now_ms = next;
    }
}

bool rc_run_until(struct rc_cluster *c,
                  bool (*pred)(struct rc_cluster *, void *), void *arg,
                  uint64_t max_ms)
{
    uint64_t end = c->now_ms + max_ms;

    while (!pred(c, arg)) {
        if (c->now_ms >= end) {
            return false;
        }
        rc_run(c, 1);
    }
    return true;
}

int rc_leader(struct rc_cluster *c)
{
    int best = -1;
    uint64_t best_term = 0;

    for (size_t i = 0; i < c->count; i++) {
        struct consensus_status status;
        if (!c->nodes[i].up) {
            continue;
        }
        consensus_status_get(c->nodes[i].consensus, &status);
        if (status.ready && status.term >= best_term) {
            best = (int)i;
            best_term = status.term;
        }
    }
    return best;
}

static bool has_leader(struct rc_cluster *c, void *arg)
{
    (void)arg;
    return rc_leader(c) >= 0;
}

unsigned rc_wait_leader(struct rc_cluster *c, uint64_t max_ms)
{
    if (!rc_run_until(c, has_leader, NULL, max_ms)) {
        for (size_t i = 0; i < c->count; i++) {
            struct consensus_status s;
            if (!c->nodes[i].up) {
                continue;
            }
            consensus_status_get(c->nodes[i].consensus, &s);
            printf("  member %zu: state %d term %" PRIu64 " leader %" PRIu64
                   " commit %" PRIu64 " last %" PRIu64 " dropped %" PRIu64 "\n",
                   i, (int)s.state, s.term, s.leader_id, s.commit_index,
                   s.last_index, s.messages_dropped);
        }
        fail_msg("no leader after %" PRIu64 " ms", max_ms);
    }
    return (unsigned)rc_leader(c);
}

static void op_done(void *ctx, int status, uint64_t index, int result)
{
    struct rc_op *op = ctx;

    assert_false(op->done);
    op->done = true;
    op->status = status;
    op->index = index;
    op->result = result;
}

int rc_propose(struct rc_cluster *c, unsigned i, uint64_t value,
               struct rc_op *op)
{
    uint8_t bytes[8];

    memset(op, 0, sizeof *op);
    for (int b = 0; b < 8; b++) {
        bytes[b] = (uint8_t)(value >> (8 * b));
    }
    c->nodes[i].next_tick_ms = 0;
    return consensus_propose(c->nodes[i].consensus, bytes, sizeof bytes,
                             op_done, op);
}

void rc_change_done(void *ctx, int status)
{
    struct rc_change *ch = ctx;

    ch->done = true;
    ch->status = status;
}

bool rc_change_is_done(struct rc_cluster *c, void *arg)
{
    (void)c;
    return ((struct rc_change *)arg)->done;
}

void rc_read_done(void *ctx, int status)
{
    struct rc_reads *r = ctx;

    r->done++;
    r->status = status != 0 ? status : r->status;
}

static bool op_is_done(struct rc_cluster *c, void *arg)
{
    (void)c;
    return ((struct rc_op *)arg)->done;
}

uint64_t rc_commit(struct rc_cluster *c, uint64_t value)
{
    unsigned leader = rc_wait_leader(c, 10000);
    struct rc_op op;

    assert_int_equal(rc_propose(c, leader, value, &op), 0);
    assert_true(rc_run_until(c, op_is_done, &op, 10000));
    assert_int_equal(op.status, 0);
    return op.index;
}

static void cut(struct rc_cluster *c, unsigned i, unsigned j, bool on)
{
    if (on) {
        assert_int_equal(
            transport_memory_network_partition(c->net, &c->nodes[i].node,
                                               &c->nodes[j].node, true),
            0);
        /* Break the connection too, if there is one (a member that is
         * down has none). */
        int rc = transport_memory_network_reset(c->net, &c->nodes[i].node,
                                                &c->nodes[j].node);
        assert_true(rc == 0 || rc == TRANSPORT_ENOPEER);
    } else {
        assert_int_equal(transport_memory_network_heal(c->net,
                                                       &c->nodes[i].node,
                                                       &c->nodes[j].node, true),
                         0);
    }
}

void rc_partition(struct rc_cluster *c, unsigned i, unsigned j)
{
    cut(c, i, j, true);
}

void rc_heal(struct rc_cluster *c, unsigned i, unsigned j)
{
    cut(c, i, j, false);
}

void rc_isolate(struct rc_cluster *c, unsigned i)
{
    for (unsigned j = 0; j < c->count; j++) {
        if (j != i) {
            cut(c, i, j, true);
        }
    }
}

void rc_rejoin(struct rc_cluster *c, unsigned i)
{
    for (unsigned j = 0; j < c->count; j++) {
        if (j != i) {
            cut(c, i, j, false);
        }
    }
}

void rc_check_safety(struct rc_cluster *c)
{
    for (size_t a = 0; a < c->count; a++) {
        for (size_t b = a + 1; b < c->count; b++) {
            const struct rc_machine *x = &c->nodes[a].machine;
            const struct rc_machine *y = &c->nodes[b].machine;
            size_t n = x->count < y->count ? x->count : y->count;
            for (size_t k = 0; k < n; k++) {
                if (x->applied[k].index != y->applied[k].index ||
                    x->applied[k].value != y->applied[k].value) {
                    fail_msg(
                        "members %zu and %zu differ at applied command %zu: "
                        "index %" PRIu64 " value %" PRIu64 " vs index %" PRIu64
                        " value %" PRIu64,
                        a, b, k, x->applied[k].index, x->applied[k].value,
                        y->applied[k].index, y->applied[k].value);
                }
            }
        }
    }
}

bool rc_has_value(const struct rc_cluster *c, unsigned i, uint64_t value)
{
    const struct rc_machine *m = &c->nodes[i].machine;

    for (size_t k = 0; k < m->count; k++) {
        if (m->applied[k].value == value) {
            return true;
        }
    }
    return false;
}

bool rc_all_applied(struct rc_cluster *c, uint64_t index)
{
    for (size_t i = 0; i < c->count; i++) {
        if (c->nodes[i].up && c->nodes[i].machine.applied_index < index) {
            return false;
        }
    }
    return true;
}
