/* SPDX-License-Identifier: MIT
 *
 * scenario.c: what the scenario tests share (scenario.h): the cluster, its
 * schema, and helpers to start it, cut and heal links, and ask the nodes.
 */
#include <string.h>

#include "scenario.h"

const char *const scenario_schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt', c);"
    "CREATE TABLE v(id PRIMARY KEY, x);"
    "CREATE TABLE parent(id TEXT PRIMARY KEY, name);"
    "CREATE TABLE child(id TEXT PRIMARY KEY, parent_id, name);";

struct cluster cl;

/* ---- helpers ---- */

/* n crdt nodes, every pair linked, started and connected. */
void start_cluster(size_t n, uint64_t seed, bool files)
{
    cluster_init(&cl, n, REPLICATION_MODE_CRDT, scenario_schema, seed, files);
    cluster_link_all(&cl);
    cluster_start_all(&cl);
    cluster_run(&cl, 500);
}

/* The same, plus one member that never starts: the others dial it in
 * vain, and while it has not been heard from they keep their whole history
 * (no log pruning, no tombstone collection), as tests that inspect
 * tombstones and shadows, or need old versions served, require. */
void start_cluster_history_kept(size_t n, uint64_t seed, bool files)
{
    cluster_init(&cl, n + 1, REPLICATION_MODE_CRDT, scenario_schema, seed,
                 files);
    cluster_link_all(&cl);
    for (unsigned i = 0; i < n; i++) {
        cluster_start(&cl, i);
    }
    cluster_run(&cl, 500);
}

/* Every link delays messages by delay_ms: writes made on two nodes less
 * than that apart are concurrent. */
void set_delay(uint32_t delay_ms)
{
    const struct transport_memory_link_faults faults = {.delay_ms = delay_ms};

    assert_int_equal(transport_memory_network_set_default_link(cl.net, &faults),
                     0);
}

/* Nodes i and j lose each other: both ways, the connection reset. */
void cut(unsigned i, unsigned j)
{
    assert_int_equal(transport_memory_network_partition(cl.net, &cl.nodes[i].id,
                                                        &cl.nodes[j].id, true),
                     0);
    (void)transport_memory_network_reset(cl.net, &cl.nodes[i].id,
                                         &cl.nodes[j].id);
}

void heal(unsigned i, unsigned j)
{
    assert_int_equal(transport_memory_network_heal(cl.net, &cl.nodes[i].id,
                                                   &cl.nodes[j].id, true),
                     0);
}

uint64_t query_u64(unsigned i, const char *sql)
{
    char text[64];

    cluster_query(&cl, i, sql, text, sizeof(text));
    return strtoull(text, NULL, 10);
}

/* Node i's last local version (0 before its first commit). */
uint64_t local_version(unsigned i)
{
    return query_u64(i, "SELECT coalesce((SELECT value FROM sinew_crdt_meta"
                        " WHERE name = 'version'), 0)");
}

/* Every started node answers sql with expected. */
void assert_everywhere(const char *sql, const char *expected)
{
    unsigned i;

    for (i = 0; i < cl.count; i++) {
        if (cl.nodes[i].up) {
            cluster_assert_query(&cl, i, sql, expected);
        }
    }
}

/* Whether node i's last commit has the larger K = (hlc, site) than node
 * j's (sites in node order). */
bool later(unsigned i, unsigned j)
{
    uint64_t si = cl.nodes[i].last_stamp, sj = cl.nodes[j].last_stamp;

    return si != sj ? si > sj : i > j;
}

void stats_of(unsigned i, struct replication_stats *out)
{
    assert_int_equal(replication_stats_get(cl.nodes[i].replication, out), 0);
}

/* Node i's stats of its peer node j. */
struct replication_peer_stats *peer_of(struct replication_stats *stats,
                                       unsigned j)
{
    size_t k;

    for (k = 0; k < stats->peer_count; k++) {
        if (transport_node_id_equal(&stats->peers[k].id, &cl.nodes[j].id)) {
            return &stats->peers[k];
        }
    }
    fail_msg("no peer %u", j);
    return NULL;
}

/* Inserts count rows 'prefix<n>' into t on node i in one transaction,
 * each with a random blob of blob_size bytes in a, and ticks (ships). */
void insert_many(unsigned i, const char *prefix, int count, int blob_size)
{
    struct engine_db *db = cl.nodes[i].db;
    struct engine_stmt *stmt = NULL;
    char id[64];
    int n;

    assert_int_equal(engine_exec(db, "BEGIN", NULL, NULL), 0);
    assert_int_equal(engine_prepare(db,
                                    "INSERT INTO t(id, a) VALUES (?1,"
                                    " randomblob(?2))",
                                    -1, &stmt, NULL),
                     0);
    for (n = 0; n < count; n++) {
        snprintf(id, sizeof(id), "%s%06d", prefix, n);
        assert_int_equal(engine_bind_text(stmt, 1, id, -1), 0);
        assert_int_equal(engine_bind_int64(stmt, 2, blob_size), 0);
        assert_int_equal(engine_step(stmt), ENGINE_DONE);
        assert_int_equal(engine_reset(stmt), 0);
    }
    engine_finalize(stmt);
    cluster_exec(&cl, i, "COMMIT");
}
