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
 * crdt: unique inserts into items(id, node) on every node in turn;
 * judged later by loss, phantoms and convergence (verdict.c).
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

static struct client clients[CHAOS_CLIENTS_MAX];

static void record_op(struct chaos_workload *w, const struct check_op *op)
{
    pthread_mutex_lock(&w->lock);
    if (w->op_count == w->op_capacity) {
        w->op_capacity = w->op_capacity ? 2 * w->op_capacity : 1024;
        w->ops = common_realloc_array(w->ops, w->op_capacity, sizeof *w->ops);
    }
    w->ops[w->op_count++] = *op;
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

/* The integer in rows[0][0], or CHECK_ABSENT (no row, NULL). */
static int64_t first_integer(const json_t *rows)
{
    json_t *cell = json_array_get(json_array_get(rows, 0), 0);
    const char *text = json_string_value(json_object_get(cell, "value"));
    return text != NULL ? (int64_t)strtoll(text, NULL, 10) : CHECK_ABSENT;
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

static void quorum_step(struct chaos_workload *w, struct chaos_rng *rng,
                        int *node, int64_t *client_id, int64_t *counter,
                        int64_t *seen)
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
        record_op(w, &op);
    } else if (result.outcome == CHAOS_SQL_UNKNOWN) {
        op.outcome = CHECK_OUTCOME_UNKNOWN;
        record_op(w, &op);
        *client_id += CHAOS_CLIENTS_MAX; /* a new process from now on */
        *node = (*node + 1) % (int)c->count;
    } else {
        int hint = strcmp(result.code, "NOT_LEADER") == 0
                       ? leader_from_hint(c, result.message)
                       : -1;
        *node = hint >= 0 ? hint : (*node + 1) % (int)c->count;
        if (hint < 0 && strcmp(result.code, "CONNECT") != 0) {
            chaos_sleep_ms(50); /* no leader yet: do not spin */
        }
    }
    chaos_sql_result_release(&result);
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

static void *client_main(void *arg)
{
    struct client *me = arg;
    struct chaos_workload *w = me->w;
    struct chaos_rng rng = {w->seed ^ (0x51ed27u * (me->index + 1))};
    int node = (int)(me->index % w->cluster->count);
    int64_t client_id = (int64_t)me->index, counter = 0;
    int64_t *seen = common_calloc(w->key_count, sizeof *seen);
    while (!w->stop && !chaos_stop_requested) {
        if (w->mode == CHAOS_MODE_QUORUM) {
            quorum_step(w, &rng, &node, &client_id, &counter, seen);
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

int chaos_workload_prepare(struct chaos_workload *w, int timeout_ms)
{
    struct chaos_cluster *c = w->cluster;
    int64_t deadline = chaos_now_ns() + (int64_t)timeout_ms * 1000000;
    pthread_mutex_init(&w->lock, NULL);
    if (w->mode == CHAOS_MODE_CRDT) {
        if (!sql_until_ok(c, 0,
                          "CREATE TABLE IF NOT EXISTS items(id INTEGER "
                          "PRIMARY KEY, node INTEGER)",
                          deadline)) {
            return -1;
        }
        for (size_t i = 0; i < c->count; i++) {
            if (!sql_until_ok(c, (int)i, "SELECT count(*) FROM items",
                              deadline)) {
                return -1;
            }
        }
        return 0;
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
    for (size_t i = 0; i < w->client_count; i++) {
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
                record_op(w, &op);
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
    common_free(w->inserts);
    w->ops = NULL;
    w->inserts = NULL;
    pthread_mutex_destroy(&w->lock);
}
