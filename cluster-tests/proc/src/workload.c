/* SPDX-License-Identifier: MIT
 *
 * workload.c: the clients of a run, one thread each, recording every
 * operation with its invocation and completion times (CLOCK_MONOTONIC, one
 * host, so real-time order is exact: chaos.md §3.2).
 *
 * quorum: registers reg(k, v), every key starting at 0. read: SELECT v;
 * write: UPDATE ... SET v = unique; cas: UPDATE ... WHERE k = ? AND v =
 * expected, succeeded when affected_row_count is 1. Requests go to the
 * node the client believes leads; NOT_LEADER names the leader's peer
 * address, which maps to a node, and a node that cannot be reached sends
 * the client to the next one. A refusal (NOT_LEADER, BUSY, a refused
 * connection) is left out of the history, as nothing took effect; a
 * timeout or reset is recorded with an unknown outcome, and the client
 * then counts as a new process (its id changes), as in Jepsen.
 *
 * Scenarios may add a pinned client (quorum): it sends the same mix to
 * the one node the supervisor names (an isolated old leader), following
 * no hint, and idles while none is named.
 *
 * crdt: unique inserts into items(id, node) on every node in turn;
 * judged later by loss, phantoms and convergence (verdict.c).
 *
 * leader: log(seq INTEGER PRIMARY KEY, v), where seq, given by the writer,
 * is the log order on every node (a follower applies the writer's rows
 * with their keys). Of each client's steps, 14 in 16 append a unique v on
 * the writer (like the simulator's leader workload: work_leader.c), 1 in
 * 16 tries to append on a follower (which must refuse: "not the
 * writer"), and 1 in 16 reads a follower's whole log, kept as its length
 * and digest (verdict_leader.c judges it). The writer is the one the
 * supervisor names (chaos_cluster.writer), as an operator's routing
 * follows a failover; while a deposed writer still runs with its old
 * options, 1 step in 16 appends there instead (a stale router: what it
 * acknowledges once the new writer has taken over is beyond the fence and
 * must never reach the final log).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"
#include "common.h"

struct client {
    struct chaos_workload *w;
    size_t index;
};

static struct client clients[CHAOS_CLIENTS_MAX + 1];

/* Client ids of the pinned client and of the supervisor's final reads:
 * far above the ids the workload's clients reach (index + a multiple of
 * CHAOS_CLIENTS_MAX, one step per unknown outcome), so values stay unique. */
#define WORKLOAD_PINNED_CLIENT_ID ((int64_t)1000000)

void chaos_workload_record(struct chaos_workload *w, const struct check_op *op,
                           int node)
{
    pthread_mutex_lock(&w->lock);
    if (w->op_count == w->op_capacity) {
        w->op_capacity = w->op_capacity ? 2 * w->op_capacity : 1024;
        w->ops = common_realloc_array(w->ops, w->op_capacity, sizeof *w->ops);
        w->op_nodes = common_realloc_array(w->op_nodes, w->op_capacity,
                                           sizeof *w->op_nodes);
    }
    w->op_nodes[w->op_count] = node;
    w->ops[w->op_count++] = *op;
    pthread_mutex_unlock(&w->lock);
}

static void record_read(struct chaos_workload *w,
                        const struct chaos_follower_read *read)
{
    pthread_mutex_lock(&w->lock);
    if (w->read_count == w->read_capacity) {
        w->read_capacity = w->read_capacity ? 2 * w->read_capacity : 256;
        w->reads =
            common_realloc_array(w->reads, w->read_capacity, sizeof *w->reads);
    }
    w->reads[w->read_count++] = *read;
    pthread_mutex_unlock(&w->lock);
}

static void record_insert(struct chaos_workload *w,
                          const struct chaos_insert *insert)
{
    pthread_mutex_lock(&w->lock);
    if (w->insert_count == w->insert_capacity) {
        w->insert_capacity = w->insert_capacity ? 2 * w->insert_capacity : 1024;
        w->inserts = common_realloc_array(w->inserts, w->insert_capacity,
                                          sizeof *w->inserts);
    }
    w->inserts[w->insert_count++] = *insert;
    pthread_mutex_unlock(&w->lock);
}

static void count_outcome(struct chaos_workload *w,
                          enum chaos_sql_outcome outcome)
{
    pthread_mutex_lock(&w->lock);
    w->attempted++;
    w->acknowledged += outcome == CHAOS_SQL_OK;
    w->failed += outcome == CHAOS_SQL_FAILED;
    w->unknown += outcome == CHAOS_SQL_UNKNOWN;
    pthread_mutex_unlock(&w->lock);
}

/* The integer in rows[row][0], or CHECK_ABSENT (no row, NULL). */
static int64_t row_integer(const json_t *rows, size_t row)
{
    json_t *cell = json_array_get(json_array_get(rows, row), 0);
    const char *text = json_string_value(json_object_get(cell, "value"));
    return text != NULL ? (int64_t)strtoll(text, NULL, 10) : CHECK_ABSENT;
}

static int64_t first_integer(const json_t *rows)
{
    return row_integer(rows, 0);
}

int chaos_fetch_integers(const struct chaos_node *node, const char *sql,
                         int64_t **values, size_t *count)
{
    struct chaos_sql_result result;
    *values = NULL;
    *count = 0;
    chaos_sql(node, sql, NULL, 0, 10000, &result);
    if (result.outcome != CHAOS_SQL_OK) {
        chaos_sql_result_release(&result);
        return -1;
    }
    size_t n = json_array_size(result.rows);
    *values = common_malloc_array(n + 1, sizeof **values);
    for (size_t i = 0; i < n; i++) {
        (*values)[i] = row_integer(result.rows, i);
    }
    *count = n;
    chaos_sql_result_release(&result);
    return 0;
}

/* The node whose peer address NOT_LEADER's message names, or -1. */
static int leader_from_hint(const struct chaos_cluster *c, const char *message)
{
    for (size_t i = 0; i < c->count; i++) {
        char address[96];
        snprintf(address, sizeof address, "address %s:%d)", c->nodes[i].host,
                 c->nodes[i].peer_port);
        if (strstr(message, address) != NULL) {
            return (int)i;
        }
    }
    return -1;
}

/* After a refusal: *node becomes the leader NOT_LEADER names, else the
 * next node. */
static void follow_refusal(const struct chaos_cluster *c,
                           const struct chaos_sql_result *result, int *node)
{
    int hint = strcmp(result->code, "NOT_LEADER") == 0
                   ? leader_from_hint(c, result->message)
                   : -1;
    /* A hint naming the node just asked would loop the client (the node
     * no longer gives one; isolated-old-leader checks that): none, then. */
    hint = hint == *node ? -1 : hint;
    *node = hint >= 0 ? hint : (*node + 1) % (int)c->count;
    if (hint < 0 && strcmp(result->code, "CONNECT") != 0) {
        chaos_sleep_ms(50); /* no leader yet: do not spin */
    }
}

/* One quorum operation on *node, which it moves on as NOT_LEADER hints
 * or failures say; returns how it ended, and the answer without its rows
 * in *last unless NULL. */
static enum chaos_sql_outcome quorum_step(struct chaos_workload *w,
                                          struct chaos_rng *rng, int *node,
                                          int64_t *client_id, int64_t *counter,
                                          int64_t *seen,
                                          struct chaos_sql_result *last)
{
    struct chaos_cluster *c = w->cluster;
    struct check_op op = {.client_id = *client_id};
    op.key = (int64_t)chaos_rng_below(rng, w->key_count);
    uint64_t dice = chaos_rng_below(rng, 10);
    int64_t args[3];
    size_t arg_count;
    const char *sql;
    int64_t unique = (int64_t)(1 + *client_id) * 1000000000 + ++*counter;
    if (dice < 4) {
        op.kind = CHECK_READ;
        sql = "SELECT v FROM reg WHERE k = ?";
        args[0] = op.key;
        arg_count = 1;
    } else if (dice < 7) {
        op.kind = CHECK_WRITE;
        op.value = unique;
        sql = "UPDATE reg SET v = ? WHERE k = ?";
        args[0] = op.value;
        args[1] = op.key;
        arg_count = 2;
    } else {
        op.kind = CHECK_CAS;
        op.value = unique;
        op.expected = seen[op.key];
        sql = "UPDATE reg SET v = ? WHERE k = ? AND v = ?";
        args[0] = op.value;
        args[1] = op.key;
        args[2] = op.expected;
        arg_count = 3;
    }
    struct chaos_sql_result result;
    op.invoke_ns = chaos_now_ns();
    chaos_sql(&c->nodes[*node], sql, args, arg_count, w->op_timeout_ms,
              &result);
    op.complete_ns = chaos_now_ns();
    count_outcome(w, result.outcome);
    if (result.outcome == CHAOS_SQL_OK) {
        op.outcome = CHECK_OUTCOME_OK;
        if (op.kind == CHECK_READ) {
            op.value = first_integer(result.rows);
            seen[op.key] = op.value;
        } else {
            op.cas_succeeded = op.kind == CHECK_CAS && result.affected == 1;
            if (op.kind == CHECK_WRITE || op.cas_succeeded) {
                seen[op.key] = op.value;
            }
        }
        chaos_workload_record(w, &op, *node);
    } else if (result.outcome == CHAOS_SQL_UNKNOWN) {
        op.outcome = CHECK_OUTCOME_UNKNOWN;
        chaos_workload_record(w, &op, *node);
        *client_id += CHAOS_CLIENTS_MAX; /* a new process from now on */
        *node = (*node + 1) % (int)c->count;
    } else {
        follow_refusal(c, &result, node);
    }
    if (last != NULL) {
        *last = result;
        last->rows = NULL;
    }
    chaos_sql_result_release(&result);
    return result.outcome;
}

/* The pinned client: quorum_step on the named node only, whatever the
 * answer says (a refusal waits a little: an isolated node refuses fast). */
static void pinned_step(struct chaos_workload *w, struct chaos_rng *rng,
                        int64_t *client_id, int64_t *counter, int64_t *seen)
{
    int node = w->pinned_node;
    if (node < 0 || (size_t)node >= w->cluster->count) {
        chaos_sleep_ms(20);
        return;
    }
    const int asked = node; /* quorum_step moves node on a refusal */
    struct chaos_sql_result last;
    enum chaos_sql_outcome outcome =
        quorum_step(w, rng, &node, client_id, counter, seen, &last);
    w->pinned_ok += outcome == CHAOS_SQL_OK;
    w->pinned_failed += outcome == CHAOS_SQL_FAILED;
    w->pinned_unknown += outcome == CHAOS_SQL_UNKNOWN;
    if (outcome == CHAOS_SQL_FAILED) {
        w->pinned_self_hints +=
            strcmp(last.code, "NOT_LEADER") == 0 &&
            leader_from_hint(w->cluster, last.message) == asked;
        if (w->pinned_refusal[0] == '\0') {
            snprintf(w->pinned_refusal, sizeof w->pinned_refusal, "%s: %s",
                     last.code, last.message);
        }
        chaos_sleep_ms(20);
    }
}

static void crdt_step(struct chaos_workload *w, size_t index, int *node,
                      int64_t *counter)
{
    struct chaos_cluster *c = w->cluster;
    struct chaos_insert insert = {.node = *node};
    insert.id = (int64_t)(index + 1) * 1000000000 + ++*counter;
    int64_t args[2] = {insert.id, *node + 1};
    struct chaos_sql_result result;
    insert.invoke_ns = chaos_now_ns();
    chaos_sql(&c->nodes[*node], "INSERT INTO items(id, node) VALUES (?, ?)",
              args, 2, w->op_timeout_ms, &result);
    insert.complete_ns = chaos_now_ns();
    insert.outcome = result.outcome;
    count_outcome(w, result.outcome);
    record_insert(w, &insert);
    chaos_sql_result_release(&result);
    /* Spread the writes: change node every few inserts, and at once when
     * this one is down or stalled. */
    if (result.outcome != CHAOS_SQL_OK || *counter % 7 == 0) {
        *node = (*node + 1) % (int)c->count;
    }
}

/* Leader mode: a read of follower node's whole log, kept as its length
 * and digest. A read that fails or times out is left out: it saw nothing. */
static void leader_read(struct chaos_workload *w, int node)
{
    struct chaos_follower_read read = {.node = node,
                                       .digest = CHAOS_LOG_DIGEST_INIT};
    struct chaos_sql_result result;
    read.invoke_ns = chaos_now_ns();
    chaos_sql(&w->cluster->nodes[node], "SELECT v FROM log ORDER BY seq", NULL,
              0, w->op_timeout_ms, &result);
    read.complete_ns = chaos_now_ns();
    if (result.outcome == CHAOS_SQL_OK) {
        read.count = json_array_size(result.rows);
        for (size_t i = 0; i < read.count; i++) {
            read.digest =
                chaos_log_digest(read.digest, row_integer(result.rows, i));
        }
        record_read(w, &read);
    }
    chaos_sql_result_release(&result);
}

/* A follower for a read or a refused append: neither the writer nor a
 * deposed writer still running (whose log holds fenced rows); -1 when
 * there is none. */
static int pick_follower(const struct chaos_cluster *c, struct chaos_rng *rng,
                         int writer, int deposed)
{
    int start = (int)chaos_rng_below(rng, c->count);
    for (int step = 0; step < (int)c->count; step++) {
        int node = (start + step) % (int)c->count;
        if (node != writer && node != deposed) {
            return node;
        }
    }
    return -1;
}

static void leader_step(struct chaos_workload *w, size_t index,
                        struct chaos_rng *rng, int64_t *counter)
{
    struct chaos_cluster *c = w->cluster;
    /* The operator's routing, as the supervisor last set it. */
    int writer = c->writer, deposed = c->deposed;
    uint64_t dice = chaos_rng_below(rng, 16);
    int follower = pick_follower(c, rng, writer, deposed);
    if (dice == 0 && follower >= 0) {
        leader_read(w, follower);
        return;
    }
    struct chaos_insert append = {.node = writer};
    if (dice == 1 && follower >= 0) {
        append.node = follower;
    } else if (dice == 2 && deposed >= 0) {
        append.node = deposed; /* a stale router: the fence must hold */
    }
    append.id = (int64_t)(index + 1) * 1000000000 + ++*counter;
    struct chaos_sql_result result;
    append.invoke_ns = chaos_now_ns();
    chaos_sql(&c->nodes[append.node], "INSERT INTO log(v) VALUES (?)",
              &append.id, 1, w->op_timeout_ms, &result);
    append.complete_ns = chaos_now_ns();
    append.outcome = result.outcome;
    count_outcome(w, result.outcome);
    record_insert(w, &append);
    chaos_sql_result_release(&result);
    if (append.node == writer && result.outcome == CHAOS_SQL_FAILED) {
        chaos_sleep_ms(50); /* the writer is down: do not spin */
    }
}

static void *client_main(void *arg)
{
    struct client *me = arg;
    struct chaos_workload *w = me->w;
    struct chaos_rng rng = {w->seed ^ (0x51ed27u * (me->index + 1))};
    int node = (int)(me->index % w->cluster->count);
    bool is_pinned = me->index == w->client_count;
    int64_t client_id =
        is_pinned ? WORKLOAD_PINNED_CLIENT_ID : (int64_t)me->index;
    int64_t counter = 0;
    int64_t *seen = common_calloc(w->key_count, sizeof *seen);
    while (!w->stop && !chaos_stop_requested) {
        if (is_pinned) {
            pinned_step(w, &rng, &client_id, &counter, seen);
        } else if (w->mode == CHAOS_MODE_QUORUM) {
            (void)quorum_step(w, &rng, &node, &client_id, &counter, seen, NULL);
        } else if (w->mode == CHAOS_MODE_LEADER) {
            leader_step(w, me->index, &rng, &counter);
        } else {
            crdt_step(w, me->index, &node, &counter);
        }
        chaos_sleep_ms((int64_t)chaos_rng_below(&rng, 4));
    }
    common_free(seen);
    return NULL;
}

static bool sql_until_ok(struct chaos_cluster *c, int node, const char *sql,
                         int64_t deadline)
{
    while (chaos_now_ns() < deadline && !chaos_stop_requested) {
        struct chaos_sql_result result;
        chaos_sql(&c->nodes[node], sql, NULL, 0, 5000, &result);
        bool ok = result.outcome == CHAOS_SQL_OK;
        if (!ok && strcmp(result.code, "NOT_LEADER") == 0) {
            int hint = leader_from_hint(c, result.message);
            node = hint >= 0 ? hint : (node + 1) % (int)c->count;
        }
        chaos_sql_result_release(&result);
        if (ok) {
            return true;
        }
        chaos_sleep_ms(100);
    }
    fprintf(stderr, "chaos-proc: could not run '%s'\n", sql);
    return false;
}

/* crdt and leader: create runs on node, then probe runs on every node
 * until each has the table (the schema replicates). */
static int prepare_replicated(struct chaos_cluster *c, int node,
                              const char *create, const char *probe,
                              int64_t deadline)
{
    if (!sql_until_ok(c, node, create, deadline)) {
        return -1;
    }
    for (size_t i = 0; i < c->count; i++) {
        if (!sql_until_ok(c, (int)i, probe, deadline)) {
            return -1;
        }
    }
    return 0;
}

int chaos_workload_prepare(struct chaos_workload *w, int timeout_ms)
{
    struct chaos_cluster *c = w->cluster;
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    pthread_mutex_init(&w->lock, NULL);
    w->pinned_node = -1;
    if (w->mode == CHAOS_MODE_CRDT) {
        return prepare_replicated(c, 0,
                                  "CREATE TABLE IF NOT EXISTS items(id "
                                  "INTEGER PRIMARY KEY, node INTEGER)",
                                  "SELECT count(*) FROM items", deadline);
    }
    if (w->mode == CHAOS_MODE_LEADER) {
        return prepare_replicated(c, CHAOS_LEADER_WRITER,
                                  "CREATE TABLE IF NOT EXISTS log(seq "
                                  "INTEGER PRIMARY KEY, v INTEGER)",
                                  "SELECT count(*) FROM log", deadline);
    }
    char sql[4096];
    size_t used = (size_t)snprintf(sql, sizeof sql,
                                   "INSERT OR IGNORE INTO reg(k, v) VALUES ");
    for (size_t k = 0; k < w->key_count && used < sizeof sql; k++) {
        used += (size_t)snprintf(sql + used, sizeof sql - used, "%s(%zu, 0)",
                                 k ? ", " : "", k);
    }
    int leader = chaos_cluster_find_leader(c, timeout_ms);
    return leader >= 0 &&
                   sql_until_ok(c, leader,
                                "CREATE TABLE IF NOT EXISTS reg(k INTEGER "
                                "PRIMARY KEY, v INTEGER)",
                                deadline) &&
                   sql_until_ok(c, leader, sql, deadline)
               ? 0
               : -1;
}

int chaos_workload_start(struct chaos_workload *w)
{
    size_t count = w->client_count +
                   (w->has_pinned_client && w->mode == CHAOS_MODE_QUORUM);
    ASSERT(w->client_count <= CHAOS_CLIENTS_MAX);
    for (size_t i = 0; i < count; i++) {
        clients[i] = (struct client){.w = w, .index = i};
        if (pthread_create(&w->threads[i], NULL, client_main, &clients[i])) {
            return -1;
        }
        w->threads_started++;
    }
    return 0;
}

void chaos_workload_stop(struct chaos_workload *w)
{
    w->stop = 1;
    for (size_t i = 0; i < w->threads_started; i++) {
        pthread_join(w->threads[i], NULL);
    }
    w->threads_started = 0;
}

void chaos_workload_final_reads(struct chaos_workload *w, int timeout_ms)
{
    struct chaos_cluster *c = w->cluster;
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    for (size_t k = 0; k < w->key_count; k++) {
        int64_t args[1] = {(int64_t)k};
        while (chaos_now_ns() < deadline && !chaos_stop_requested) {
            int leader = chaos_cluster_find_leader(c, 2000);
            if (leader < 0) {
                continue;
            }
            struct check_op op = {
                .client_id = 999, .kind = CHECK_READ, .key = (int64_t)k};
            struct chaos_sql_result result;
            op.invoke_ns = chaos_now_ns();
            chaos_sql(&c->nodes[leader], "SELECT v FROM reg WHERE k = ?", args,
                      1, w->op_timeout_ms, &result);
            op.complete_ns = chaos_now_ns();
            bool ok = result.outcome == CHAOS_SQL_OK;
            if (ok) {
                op.value = first_integer(result.rows);
                chaos_workload_record(w, &op, leader);
            }
            chaos_sql_result_release(&result);
            if (ok) {
                break;
            }
        }
    }
}

void chaos_workload_release(struct chaos_workload *w)
{
    common_free(w->ops);
    common_free(w->op_nodes);
    common_free(w->inserts);
    common_free(w->reads);
    w->ops = NULL;
    w->op_nodes = NULL;
    w->inserts = NULL;
    w->reads = NULL;
    pthread_mutex_destroy(&w->lock);
}
