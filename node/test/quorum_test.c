/* SPDX-License-Identifier: MIT
 *
 * quorum_test.c: node_quorum members on the simulated cluster
 * (quorum_test.h).
 */
#include "quorum_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void member_open(struct rc_node *node,
                        const struct consensus_config *config,
                        struct consensus **out)
{
    struct node_quorum_config qc = {.consensus = *config};
    char path[700];
    struct node_quorum *q;

    snprintf(path, sizeof path, "%s.db", node->dir);
    qc.db_path = path;
    assert_int_equal(node_quorum_open(&qc, &q), 0);
    node->user = q;
    *out = node_quorum_consensus(q);
}

static void member_close(struct rc_node *node)
{
    node_quorum_close(node->user);
    node->user = NULL;
}

static int member_tick(struct rc_node *node, uint64_t *next_ms)
{
    return node_quorum_tick(node->user, next_ms);
}

static const struct rc_member_ops quorum_members = {
    .open = member_open,
    .close = member_close,
    .tick = member_tick,
};

void qt_use_quorum_members(struct rc_cluster *c)
{
    c->ops = &quorum_members;
}

struct node_quorum *qt_member(struct rc_cluster *c, unsigned i)
{
    assert_true(c->nodes[i].up);
    return c->nodes[i].user;
}

static int run_sql(void *ctx, struct engine_db *db)
{
    return engine_exec(db, ctx, NULL, NULL);
}

static void write_done(void *ctx, int status, uint64_t index)
{
    struct qt_write *w = ctx;

    assert_false(w->done);
    w->done = true;
    w->status = status;
    w->index = index;
}

int qt_write_start(struct rc_cluster *c, unsigned i, const char *sql,
                   struct qt_write *w)
{
    memset(w, 0, sizeof *w);
    snprintf(w->sql, sizeof w->sql, "%s", sql);
    for (size_t b = 0; b < sizeof w->txn_id; b++) {
        w->txn_id[b] = (uint8_t)common_test_rng_next(&c->rng);
    }
    c->nodes[i].next_tick_ms = 0;
    return node_quorum_write(qt_member(c, i), run_sql, w->sql, w->txn_id,
                             write_done, w);
}

static bool write_is_done(struct rc_cluster *c, void *arg)
{
    (void)c;
    return ((struct qt_write *)arg)->done;
}

bool qt_wait(struct rc_cluster *c, struct qt_write *w, uint64_t max_ms)
{
    return rc_run_until(c, write_is_done, w, max_ms);
}

void qt_exec(struct rc_cluster *c, const char *sql)
{
    unsigned leader = rc_wait_leader(c, 10000);
    struct qt_write w;
    int rc = qt_write_start(c, leader, sql, &w);

    if (rc != 0) {
        fail_msg("%s: %d", sql, rc);
    }
    assert_true(qt_wait(c, &w, 10000));
    if (w.status != 0) {
        fail_msg("%s: status %d", sql, w.status);
    }
}

static int first_int(void *ctx, int columns, char **values, char **names)
{
    int64_t *out = ctx;

    (void)names;
    if (columns > 0 && values[0] != NULL) {
        *out = strtoll(values[0], NULL, 10);
    }
    return 0;
}

int64_t qt_query_int(struct rc_cluster *c, unsigned i, const char *sql,
                     int64_t fallback)
{
    int64_t value = fallback;

    assert_int_equal(
        engine_exec(node_quorum_db(qt_member(c, i)), sql, first_int, &value),
        0);
    return value;
}
