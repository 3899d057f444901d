/* SPDX-License-Identifier: MIT
 *
 * quorum.c: a quorum-mode member: consensus's state machine callbacks on
 * replication's quorum state machine, and the write and read paths
 * (quorum.h is the manual).
 */
#include <string.h>

#include "quorum.h"

struct node_quorum {
    struct engine_db *db;
    struct replication_quorum *machine;
    struct consensus *consensus;
    const struct common_log *log;
    bool was_leader;
};

/* One write in flight: its id, to release its rows if it fails.
 * answered: its caller was already told (only the early-ack mutant below
 * does that before the entry is committed). */
struct write {
    struct node_quorum *q;
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    node_quorum_done_cb done;
    void *ctx;
    bool answered;
};

#ifdef SINEW_MUTATION_EARLY_ACK
/* A deliberately broken build for the chaos suite's own tests
 * (docs/testing.md, "Mutants"): it answers a write as committed as soon
 * as it was proposed, before a majority holds it, which breaks "completes
 * only after a majority has it durably" (consensus.h). The simulator's
 * linearizability and lost-write checkers must catch it; the marker tells
 * the simulator which code it linked. Never built into sinew. */
const char sinew_mutation_early_ack[] = "early-ack";

static void acknowledge_proposed(struct write *w)
{
    w->answered = true;
    w->done(w->ctx, 0, 0);
}
#else
/* A write is answered when its entry is committed and applied
 * (write_done), never earlier. */
static void acknowledge_proposed(struct write *w)
{
    (void)w;
}
#endif

static int machine_apply(void *ctx, uint64_t index, uint64_t term,
                         const uint8_t *const *commands, const size_t *sizes,
                         size_t count, int *results)
{
    struct node_quorum *q = ctx;

    return replication_quorum_apply(q->machine, index, term, commands, sizes,
                                    count, results);
}

static int machine_snapshot(void *ctx, struct common_buf *out)
{
    struct node_quorum *q = ctx;

    return replication_quorum_snapshot(q->machine, out);
}

/* The snapshot's own header names the entry it covers, which
 * replication_quorum_restore() compares with the database's. */
static int machine_restore(void *ctx, uint64_t index, const uint8_t *bytes,
                           size_t size)
{
    struct node_quorum *q = ctx;

    (void)index;
    return replication_quorum_restore(q->machine, bytes, size);
}

int node_quorum_open(const struct node_quorum_config *config,
                     struct node_quorum **out)
{
    struct consensus_state_machine machine = {.apply = machine_apply,
                                              .snapshot = machine_snapshot,
                                              .restore = machine_restore};
    struct node_quorum *q = common_calloc(1, sizeof *q);
    int rc;

    if (q == NULL) {
        return COMMON_ENOMEM;
    }
    machine.ctx = q;
    q->log = config->consensus.log;
    rc = engine_open(config->db_path, &q->db);
    if (rc != 0) {
        goto fail;
    }
    rc = engine_exec(q->db, "PRAGMA synchronous = OFF", NULL, NULL);
    if (rc == 0) {
        rc = replication_quorum_open(q->db, config->consensus.log, &q->machine);
    }
    if (rc == 0) {
        rc = consensus_open(&config->consensus, &machine, &q->consensus);
    }
    if (rc != 0) {
        goto fail;
    }
    *out = q;
    return 0;
fail:
    replication_quorum_close(q->machine);
    engine_close(q->db);
    common_free(q);
    return rc;
}

void node_quorum_close(struct node_quorum *q)
{
    if (q == NULL) {
        return;
    }
    consensus_close(q->consensus);
    replication_quorum_close(q->machine);
    engine_close(q->db);
    common_free(q);
}

int node_quorum_bootstrap(struct node_quorum *q,
                          const struct consensus_member *members, size_t count)
{
    return consensus_bootstrap(q->consensus, members, count);
}

int node_quorum_start(struct node_quorum *q)
{
    return consensus_start(q->consensus);
}

struct consensus *node_quorum_consensus(struct node_quorum *q)
{
    return q->consensus;
}

struct engine_db *node_quorum_db(struct node_quorum *q)
{
    return q->db;
}

int node_quorum_tick(struct node_quorum *q, uint64_t *next_ms)
{
    struct consensus_status status;
    int rc = consensus_tick(q->consensus, next_ms);

    consensus_status_get(q->consensus, &status);
    if (q->was_leader && status.state != CONSENSUS_LEADER) {
        /* What we proposed is now the next leader's to commit or drop;
         * their rows stop blocking our (future) transactions. */
        replication_quorum_abandon_all(q->machine);
    }
    q->was_leader = status.state == CONSENSUS_LEADER;
    return rc;
}

static void write_done(void *ctx, int status, uint64_t index, int result)
{
    struct write *w = ctx;

    if (status != 0) {
        replication_quorum_abandon(w->q->machine, w->txn_id);
    }
    if (!w->answered) {
        w->done(w->ctx, status != 0 ? status : result, index);
    }
    common_free(w);
}

static void read_write_done(void *ctx, int status)
{
    struct write *w = ctx;

    w->done(w->ctx, status, 0);
    common_free(w);
}

int node_quorum_write(struct node_quorum *q, engine_apply_cb fn, void *fn_ctx,
                      const uint8_t *txn_id, node_quorum_done_cb done,
                      void *ctx)
{
    struct consensus_status status;
    struct common_buf set;
    struct write *w;
    int rc;

    consensus_status_get(q->consensus, &status);
    if (!status.ready) {
        return CONSENSUS_ENOTLEADER;
    }
    w = common_calloc(1, sizeof *w);
    if (w == NULL) {
        return COMMON_ENOMEM;
    }
    *w = (struct write){.q = q, .done = done, .ctx = ctx};
    memcpy(w->txn_id, txn_id, sizeof w->txn_id);
    common_buf_init(&set, SIZE_MAX);
    rc = replication_quorum_execute(q->machine, fn, fn_ctx, txn_id, &set);
    if (rc == 0 && set.size == 0) {
        /* Changed nothing: what it read must be current when it returns. */
        rc = consensus_read_barrier(q->consensus, read_write_done, w);
    } else if (rc == 0) {
        rc = consensus_propose(q->consensus, set.data, set.size, write_done, w);
        if (rc != 0) {
            replication_quorum_abandon(q->machine, txn_id);
        } else {
            acknowledge_proposed(w);
        }
    }
    common_buf_close(&set);
    if (rc != 0) {
        common_free(w);
    }
    return rc;
}

int node_quorum_read(struct node_quorum *q, node_quorum_done_cb done, void *ctx)
{
    struct write *w = common_calloc(1, sizeof *w);
    int rc;

    if (w == NULL) {
        return COMMON_ENOMEM;
    }
    *w = (struct write){.q = q, .done = done, .ctx = ctx};
    rc = consensus_read_barrier(q->consensus, read_write_done, w);
    if (rc != 0) {
        common_free(w);
    }
    return rc;
}

int node_quorum_txn_status(struct node_quorum *q, const uint8_t *txn_id,
                           uint64_t *index, int *result)
{
    return replication_quorum_txn_status(q->machine, txn_id, index, result);
}
