/* SPDX-License-Identifier: MIT
 *
 * Goal: crdt.md §5 #12, #20, #21 over a network: replicas whose schemas
 * differ still agree. Defaults are written explicitly; records naming a
 * table or column a node lacks are kept there (no error, the rest merges)
 * and applied once the schema arrives.
 *
 * Method: scenario.h's simulated cluster, each node's tables made before
 * replication opens on it (its administrator's schema).
 */
#include <string.h>

#include "scenario.h"

/* ---- schemas that differ ---- */

/* n crdt nodes, every pair linked, node i's database made by schemas[i]
 * before replication opens on it (so it does not replicate: each node's
 * administrator made it). */
static void start_cluster_schemas(size_t n, uint64_t seed,
                                  const char *const *schemas)
{
    unsigned i;

    cluster_init(&cl, n, REPLICATION_MODE_CRDT, NULL, seed, false);
    cluster_link_all(&cl);
    for (i = 0; i < n; i++) {
        cl.schema = schemas[i];
        cluster_start(&cl, i);
    }
    cl.schema = NULL;
    cluster_run(&cl, 500);
}

static size_t quarantined(unsigned i)
{
    struct replication_stats stats;
    size_t count;

    stats_of(i, &stats);
    count = stats.quarantined;
    replication_stats_release(&stats);
    return count;
}

/* #12: the nodes' tables differ in column d's DEFAULT. INSERTs that leave
 * d out write their own node's DEFAULT into the change set, so every
 * replica holds it, and an explicit NULL stays NULL everywhere. */
static void scenario_12_defaults_written_explicitly(void **state)
{
    static const char *const schemas[] = {
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, d DEFAULT 'default 0')",
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, d DEFAULT 'default 1')",
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, d DEFAULT 'default 2')",
    };
    unsigned i;

    (void)state;
    start_cluster_schemas(3, 121, schemas);
    cluster_exec(&cl, 0, "INSERT INTO t(id, a) VALUES ('from 0', 0)");
    cluster_exec(&cl, 1, "INSERT INTO t(id, a) VALUES ('from 1', 1)");
    cluster_exec(&cl, 1, "INSERT INTO t VALUES ('explicit', 1, NULL)");
    cluster_exec(&cl, 2, "INSERT INTO t(id) VALUES ('from 2')");
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id, quote(a), quote(d) FROM t ORDER BY id",
                      "explicit|1|NULL\n"
                      "from 0|0|'default 0'\n"
                      "from 1|1|'default 1'\n"
                      "from 2|NULL|'default 2'");
    for (i = 0; i < 3; i++) {
        assert_int_equal(cl.nodes[i].errors + cl.nodes[i].warnings, 0);
    }
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* A rebuild of node i's table with another shape, keeping its rows, as an
 * administrator would do it behind replication's back (the engine has no
 * ALTER TABLE ADD COLUMN yet): sql runs in one transaction the commit hook
 * never sees. The node is ticked at once, as after any schema change. */
static int rebuild_cb(void *ctx, struct engine_db *db)
{
    return engine_exec(db, ctx, NULL, NULL);
}

static void rebuild(unsigned i, const char *sql)
{
    if (engine_apply_transaction(cl.nodes[i].db, 0, rebuild_cb, (void *)sql) !=
        0) {
        fail_msg("node %u: %s: %s", i, sql, engine_errmsg(cl.nodes[i].db));
    }
    cl.nodes[i].next_tick_ms = 0;
}

/* #20: node 0's w has column c (with a DEFAULT), node 1's does not yet.
 * Node 1 keeps node 0's writes of c (no error, nothing dropped) and merges
 * the rest of them, later change sets included; node 1's INSERT reaches
 * node 0 with c = node 0's DEFAULT. Once node 1's w gains c (a table
 * rebuild: the engine has no ALTER TABLE), the kept records apply and
 * both converge. */
static void scenario_20_unknown_column_kept_then_applied(void **state)
{
    static const char *const schemas[] = {
        "CREATE TABLE w(id TEXT PRIMARY KEY, a, c DEFAULT 'c0')",
        "CREATE TABLE w(id TEXT PRIMARY KEY, a)",
    };
    static const char *const add_c =
        "CREATE TABLE w_old(id, a);"
        "INSERT INTO w_old SELECT id, a FROM w;"
        "DROP TABLE w;"
        "CREATE TABLE w(id TEXT PRIMARY KEY, a, c DEFAULT 'c0');"
        "INSERT INTO w(id, a) SELECT id, a FROM w_old;"
        "DROP TABLE w_old;";

    (void)state;
    start_cluster_schemas(2, 201, schemas);
    cluster_exec(&cl, 0, "INSERT INTO w VALUES ('k', 'a0', 'c from 0')");
    cluster_exec(&cl, 1, "INSERT INTO w VALUES ('j', 'a1')");
    cluster_run(&cl, 200);
    cluster_exec(&cl, 0,
                 "UPDATE w SET c = 'c again', a = 'a0 again'"
                 " WHERE id = 'k'");
    cluster_exec(&cl, 0, "UPDATE w SET c = 'c on j' WHERE id = 'j'");
    cluster_run(&cl, 500);
    assert_true(quarantined(1) > 0);
    assert_int_equal(cl.nodes[1].errors, 0);
    cluster_assert_query(&cl, 1, "SELECT id, a FROM w ORDER BY id",
                         "j|a1\nk|a0 again");
    cluster_assert_query(&cl, 0, "SELECT id, a, c FROM w ORDER BY id",
                         "j|a1|c on j\nk|a0 again|c again");

    rebuild(1, add_c);
    cluster_run(&cl, 500);
    assert_int_equal(quarantined(1), 0);
    assert_everywhere("SELECT id, a, c FROM w ORDER BY id",
                      "j|a1|c on j\nk|a0 again|c again");
    cluster_exec(&cl, 1, "UPDATE w SET c = 'c from 1' WHERE id = 'k'");
    cluster_run(&cl, 500);
    assert_everywhere("SELECT c FROM w WHERE id = 'k'", "c from 1");
    assert_int_equal(cl.nodes[0].errors + cl.nodes[1].errors, 0);
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #21: table u exists on node 0 only (made there before replication), and
 * node 0 writes it and t. Nodes 1 and 2 keep u's records (no error) and
 * merge t. Node 1's administrator then creates u: node 1's kept records
 * apply, its CREATE replicates, to node 0 as a no-op (same shape) and to
 * node 2, whose kept records apply too; all converge. */
static void scenario_21_unknown_table_kept_then_applied(void **state)
{
    static const char *const schemas[] = {
        "CREATE TABLE t(id TEXT PRIMARY KEY, a);"
        "CREATE TABLE u(k INTEGER PRIMARY KEY, v)",
        "CREATE TABLE t(id TEXT PRIMARY KEY, a)",
        "CREATE TABLE t(id TEXT PRIMARY KEY, a)",
    };
    unsigned i;

    (void)state;
    start_cluster_schemas(3, 211, schemas);
    cluster_exec(&cl, 0,
                 "BEGIN; INSERT INTO u VALUES (1, 'one');"
                 " INSERT INTO t VALUES ('with u', 1); COMMIT");
    cluster_exec(&cl, 0, "INSERT INTO u VALUES (2, 'two')");
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('after u', 2)");
    cluster_exec(&cl, 2, "INSERT INTO t VALUES ('from 2', 3)");
    cluster_run(&cl, 500);
    for (i = 1; i < 3; i++) {
        assert_true(quarantined(i) > 0);
        assert_int_equal(cl.nodes[i].errors, 0);
        cluster_assert_query(&cl, i,
                             "SELECT count(*) FROM sqlite_schema"
                             " WHERE name = 'u'",
                             "0");
    }
    assert_everywhere("SELECT id FROM t ORDER BY id",
                      "after u\nfrom 2\nwith u");

    cluster_exec(&cl, 1, "CREATE TABLE u(k INTEGER PRIMARY KEY, v)");
    cluster_run(&cl, 500);
    assert_everywhere("SELECT k, v FROM u ORDER BY k", "1|one\n2|two");
    for (i = 0; i < 3; i++) {
        assert_int_equal(quarantined(i), 0);
        assert_int_equal(cl.nodes[i].errors, 0);
    }
    cluster_exec(&cl, 2, "UPDATE u SET v = 'deux' WHERE k = 2");
    cluster_run(&cl, 500);
    assert_everywhere("SELECT v FROM u WHERE k = 2", "deux");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_12_defaults_written_explicitly),
        cmocka_unit_test(scenario_20_unknown_column_kept_then_applied),
        cmocka_unit_test(scenario_21_unknown_table_kept_then_applied),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
