/* SPDX-License-Identifier: MIT
 *
 * node_repl.c: a crdt or leader node, wired as node/src/serve_node_open.c
 * wires one for `sinew serve` (engine, PRAGMA synchronous FULL or NORMAL,
 * replication on the node's wall clock), minus HTTP, libuv and threads.
 * Site ids are drawn from the node's own stream at the database's first
 * open and kept in it, as in production.
 */
#include <string.h>
#include <unistd.h>

#include "repl.h"

static const char *const schema_crdt =
    "CREATE TABLE cells(k INTEGER PRIMARY KEY, a, b, c);"
    "CREATE TABLE elems(e INTEGER PRIMARY KEY, origin);";
static const char *const schema_leader =
    "CREATE TABLE log(seq INTEGER PRIMARY KEY, v, epoch);";

static struct repl *repl_of(struct sim *sim)
{
    return sim->mode_state;
}

static int random_bytes(void *ctx, uint8_t *out, size_t size)
{
    struct sim_node *node = ctx;
    struct sim_rng *rng = &node->sim->rng[SIM_RNG_NODE0 + node->index];

    for (size_t i = 0; i < size; i++) {
        out[i] = (uint8_t)sim_rng_next(rng);
    }
    return 0;
}

static bool is_writer(void *ctx, uint64_t *epoch)
{
    struct sim_node *node = ctx;
    struct repl_node *rn = &repl_of(node->sim)->nodes[node->index];

    *epoch = rn->writer_epoch;
    return rn->writer_epoch > 0;
}

static void log_emit(void *ctx, int level, const char *file, int line,
                     const char *msg)
{
    struct sim_node *node = ctx;

    (void)level;
    (void)file;
    (void)line;
    sim_tracef(node->sim, (int)node->index, "log %s", msg);
}

int repl_node_open(struct sim *sim, struct sim_node *node)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node->index];
    bool fresh = access(node->db_path, F_OK) != 0;
    struct transport_node_id members[SIM_NODES_MAX];
    struct replication_config config = {0};
    size_t member_count = 0;
    int rc = engine_open(node->db_path, &rn->db);

    if (rc == 0) {
        rc = engine_exec(rn->db,
                         sim->config.synchronous_full
                             ? "PRAGMA synchronous = FULL"
                             : "PRAGMA synchronous = NORMAL",
                         NULL, NULL);
    }
    if (rc == 0 && fresh) {
        rc = engine_exec(rn->db,
                         sim->config.mode == SIM_MODE_LEADER ? schema_leader
                                                             : schema_crdt,
                         NULL, NULL);
    }
    if (rc != 0) {
        sim_tracef(sim, (int)node->index, "open: %s",
                   rn->db != NULL ? engine_errmsg(rn->db) : "no handle");
        engine_close(rn->db);
        rn->db = NULL;
        return rc;
    }
    for (unsigned j = 0; j < sim->config.nodes; j++) {
        if (node->links[j]) {
            members[member_count++] = sim->nodes[j].id;
        }
    }
    config.mode = sim->config.mode == SIM_MODE_LEADER ? REPLICATION_MODE_LEADER
                                                      : REPLICATION_MODE_CRDT;
    config.db = rn->db;
    config.transport = node->transport;
    config.clock =
        (struct transport_clock){.now_ms = sim_clock_wall_cb, .ctx = node};
    config.max_offset_ms = sim->config.max_offset_ms;
    config.sync_interval_ms = sim->config.sync_interval_ms;
    config.batch_bytes = sim->config.batch_bytes;
    config.retention_ms = sim->config.retention_ms;
    config.members = members;
    config.member_count = member_count;
    config.random_bytes = random_bytes;
    config.random_ctx = node;
    config.is_writer = is_writer;
    config.is_writer_ctx = node;
    config.log = (struct common_log){
        .ctx = node, .min_level = COMMON_LOG_WARN, .emit = log_emit};
    rc = replication_open(&config, &rn->r);
    if (rc != 0) {
        engine_close(rn->db);
        rn->db = NULL;
    }
    return rc;
}

void repl_node_close(struct sim *sim, struct sim_node *node, bool crash)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node->index];

    (void)crash;
    repl_invariants_forget(sim, node->index);
    replication_close(rn->r);
    engine_close(rn->db);
    rn->r = NULL;
    rn->db = NULL;
}

int repl_node_tick(struct sim *sim, struct sim_node *node, uint64_t *next_ms)
{
    struct repl_node *rn = &repl_of(sim)->nodes[node->index];

    return replication_tick(rn->r, next_ms);
}

static struct repl_node *rn_of(struct sim_node *node)
{
    return &repl_of(node->sim)->nodes[node->index];
}

void repl_received(struct sim_node *node, const struct transport_node_id *peer,
                   uint16_t type, const uint8_t *bytes, size_t size)
{
    if (type >= REPLICATION_MESSAGE_FIRST && type <= REPLICATION_MESSAGE_LAST) {
        replication_received(rn_of(node)->r, peer, type, bytes, size);
    }
}

void repl_connected(struct sim_node *node, const struct transport_node_id *peer)
{
    replication_connected(rn_of(node)->r, peer);
}

void repl_disconnected(struct sim_node *node,
                       const struct transport_node_id *peer, int reason)
{
    (void)reason;
    replication_disconnected(rn_of(node)->r, peer);
}

void repl_writable(struct sim_node *node, const struct transport_node_id *peer)
{
    replication_writable(rn_of(node)->r, peer);
}

int repl_setup(struct sim *sim)
{
    struct repl *repl = common_calloc(1, sizeof(*repl));

    if (repl == NULL) {
        return COMMON_ENOMEM;
    }
    sim->mode_state = repl;
    repl->writer = 0;
    repl->epoch = 1;
    if (sim->config.mode == SIM_MODE_LEADER) {
        repl->nodes[0].writer_epoch = 1;
    }
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        int rc = sim_node_start(sim, i);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

void repl_teardown(struct sim *sim)
{
    for (unsigned i = 0; i < SIM_NODES_MAX; i++) {
        repl_invariants_forget(sim, i);
    }
    common_free(sim->mode_state);
    sim->mode_state = NULL;
}

int repl_pick_node(struct sim *sim)
{
    unsigned start =
        (unsigned)sim_rng_below(&sim->rng[SIM_RNG_WORKLOAD], sim->config.nodes);

    for (unsigned k = 0; k < sim->config.nodes; k++) {
        unsigned i = (start + k) % sim->config.nodes;

        if (sim->nodes[i].up && !sim->nodes[i].paused &&
            !sim->nodes[i].crash_pending) {
            return (int)i;
        }
    }
    return -1;
}

int repl_exec(struct engine_db *db, const char *sql, const int64_t *args,
              int count, int64_t *changes)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_prepare(db, sql, -1, &stmt, NULL);

    for (int i = 0; rc == 0 && i < count; i++) {
        rc = engine_bind_int64(stmt, i + 1, args[i]);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
        rc = rc == ENGINE_DONE || rc == ENGINE_ROW ? 0 : rc;
    }
    engine_finalize(stmt);
    if (changes != NULL) {
        *changes = engine_changes(db);
    }
    return rc;
}

int repl_query(struct engine_db *db, const char *sql, int columns,
               int64_t **out, size_t *rows)
{
    struct engine_stmt *stmt = NULL;
    size_t count = 0, capacity = 0;
    int64_t *data = NULL;
    int rc = engine_prepare(db, sql, -1, &stmt, NULL);

    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            int64_t *grown = common_realloc(data, capacity * (size_t)columns *
                                                      sizeof(*data));

            ASSERT(grown != NULL);
            data = grown;
        }
        for (int c = 0; c < columns; c++) {
            data[count * (size_t)columns + (size_t)c] =
                engine_column_int64(stmt, c);
        }
        count++;
        rc = 0;
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        common_free(data);
        return rc;
    }
    *out = data;
    *rows = count;
    return 0;
}
