/* SPDX-License-Identifier: MIT
 *
 * Goal: the crdt core converges. Replicas that exchange change sets in any
 * order, with duplicates, end with identical user tables and identical
 * metadata (registers, shadows, version vectors), and each conflict of
 * ../shared/reference/crdt.md §5 that needs no network ends as the table
 * there says.
 *
 * Method: two or three engines in memory in one process, each with its own
 * crdt state, a fake physical clock driven by hand, and a fixed site id
 * (0xaa.., 0xbb.., 0xcc..). Local change sets are read from each node's
 * change log, deep-copied into a pool, and handed to the other nodes'
 * replication__crdt_apply() directly; a canonical text dump of every table
 * (metadata with hex keys and quoted values) is compared across nodes.
 * The randomized test prints its seed (SINEW_TEST_SEED replays it).
 */
#include <string.h>

#include "crdt_test.h"

#define NODES_MAX 3

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
    "CREATE TABLE r(x, y);";

/* The user tables t and r and the registers and version vector. */
static const char *const dump_sql[] = {
    "SELECT 'T', id, quote(a), quote(b) FROM t ORDER BY id",
    "SELECT 'R', rowid, quote(x), quote(y) FROM r ORDER BY rowid",
    "SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT 'VV', hex(site), head FROM sinew_crdt_vv ORDER BY site",
};

static const struct crdt_test_dump_spec dump_spec = {
    NULL, dump_sql, sizeof(dump_sql) / sizeof(dump_sql[0])};

struct fixture {
    struct crdt_test_node nodes[NODES_MAX];
    struct crdt_test_pool pool;
};

static struct fixture fx;

static void open_nodes(size_t n)
{
    static const uint8_t sites[NODES_MAX] = {0xaa, 0xbb, 0xcc};
    size_t i;

    for (i = 0; i < n; i++) {
        crdt_test_open(&fx.nodes[i], sites[i], schema);
    }
}

static int fixture_setup(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof(fx));
    return 0;
}

/* Runs after a failed test too, so no test inherits another's state. */
static int fixture_teardown(void **state)
{
    (void)state;
    crdt_test_pool_free(&fx.pool);
    crdt_test_close_all(fx.nodes, NODES_MAX);
    return 0;
}

/* §5 #4: concurrent updates of different columns both survive. */
static void crdt_different_columns_merge(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "UPDATE t SET a = 'from a' WHERE id = 'k'");
    crdt_test_exec(b, "UPDATE t SET b = 'from b' WHERE id = 'k'");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(a, "SELECT a || ',' || b FROM t", "from a,from b");
    (void)fixture_teardown(NULL);
}

/* §5 #1, #2: the same column: the larger (hlc, site) wins, also when the
 * HLCs are equal (then the larger site). */
static void crdt_same_column_larger_k_wins(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 0, 0)");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    a->now_ms += 20;
    b->now_ms += 10;
    crdt_test_exec(a, "UPDATE t SET a = 'later' WHERE id = 'k'");
    crdt_test_exec(b, "UPDATE t SET a = 'earlier' WHERE id = 'k'");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(b, "SELECT a FROM t", "later");

    /* Equal stamps: both clocks at the same reading, both last stamps
     * below it. */
    a->now_ms = b->now_ms = CRDT_TEST_T0 + 2000;
    crdt_test_exec(a, "UPDATE t SET b = 'site aa' WHERE id = 'k'");
    crdt_test_exec(b, "UPDATE t SET b = 'site bb' WHERE id = 'k'");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(a, "SELECT b FROM t", "site bb");
    crdt_test_assert_query(a,
                           "SELECT count(DISTINCT hlc) FROM sinew_crdt_cell"
                           " WHERE col = 'b'",
                           "1");
    (void)fixture_teardown(NULL);
}

/* §5 #7: update vs delete: deleted, whatever the order. */
static void crdt_update_vs_delete_deleted(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    crdt_test_exec(a, "INSERT INTO t VALUES ('j', 1, 1)");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'k'"); /* delete earlier */
    crdt_test_exec(b, "UPDATE t SET a = 2 WHERE id = 'j'");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(b, "UPDATE t SET a = 2 WHERE id = 'k'"); /* update later */
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'j'");      /* delete later */
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(a, "SELECT count(*) FROM t", "0");
    /* The update newer than the delete stays as an invisible shadow. */
    crdt_test_assert_query(
        a,
        "SELECT quote(shadow) FROM sinew_crdt_cell WHERE col = 'a'"
        " AND has_shadow = 1",
        "2");
    (void)fixture_teardown(NULL);
}

/* §5 #8, #9: delete vs a later re-insert: the re-insert wins, with all of
 * its columns and nothing from before. */
static void crdt_reinsert_after_delete_wins(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 'old a', 'old b')");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'k'");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(b, "DELETE FROM t WHERE id = 'k'");
    crdt_test_exec(b, "INSERT INTO t(id, a) VALUES ('k', 'new a')");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(a, "SELECT a || ',' || b FROM t", "new a,dflt");
    (void)fixture_teardown(NULL);
}

/* §5 #10: concurrent inserts of one key: the whole later row. */
static void crdt_insert_insert_whole_row(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    b->now_ms += 5;
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 'a1', 'b1')");
    crdt_test_exec(b, "INSERT INTO t VALUES ('k', 'a2', NULL)");
    crdt_test_exec(a, "INSERT INTO r VALUES ('ra', 1)");
    crdt_test_exec(b, "INSERT INTO r VALUES ('rb', 2)");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_assert_query(a, "SELECT a || ',' || quote(b) FROM t", "a2,NULL");
    crdt_test_assert_query(a, "SELECT x FROM r", "rb");
    (void)fixture_teardown(NULL);
}

/* §5 #16, #17, #22: reversed delivery with duplicates, then a replay of
 * everything, change nothing. */
static void crdt_duplicates_and_reorder_harmless(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    static struct crdt_test_dump before, after;
    uint64_t version;
    size_t i;

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    crdt_test_tick(fx.nodes, 2, 1);
    crdt_test_exec(a, "UPDATE t SET a = 2 WHERE id = 'k'");
    crdt_test_tick(fx.nodes, 2, 1);
    crdt_test_exec(a, "INSERT INTO t VALUES ('j', 1, 1)");
    crdt_test_tick(fx.nodes, 2, 1);
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'k'");
    crdt_test_ship_new(a, &fx.pool);
    for (i = fx.pool.count; i-- > 0;) {
        crdt_test_apply(b, fx.pool.items[i], true);
        crdt_test_apply(b, fx.pool.items[i], true);
    }
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    crdt_test_dump(b, &dump_spec, &before);
    for (i = 0; i < fx.pool.count; i++) {
        crdt_test_apply(b, fx.pool.items[i], true);
    }
    crdt_test_dump(b, &dump_spec, &after);
    assert_string_equal(before.text, after.text);
    assert_int_equal(replication__crdt_local_version(b->crdt, &version), 0);
    assert_int_equal(version, 0);
    (void)fixture_teardown(NULL);
}

/* §5 #13: a change set stamped beyond the maximum offset is deferred
 * (kept, reported, the receiver's clock untouched) and applied once the
 * receiver's clock catches up. */
static void crdt_far_ahead_deferred_until_clock_catches_up(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    uint64_t ahead_ms = 10 * 60 * 1000;

    (void)state;
    open_nodes(2);
    b->now_ms += ahead_ms;
    crdt_test_exec(b, "INSERT INTO t VALUES ('k', 'from the future', 1)");
    crdt_test_ship_new(b, &fx.pool);
    assert_int_equal(replication__crdt_apply(a->crdt, fx.pool.items[0]),
                     REPLICATION_EDEFERRED);
    assert_int_equal(replication__crdt_deferred_count(a->crdt), 1);
    assert_int_equal(a->warnings, 1);
    crdt_test_assert_query(a, "SELECT count(*) FROM t", "0");
    assert_true(hlc_physical_ms(hlc_high_water(&a->clock)) <
                CRDT_TEST_T0 + 1000);
    assert_int_equal(replication__crdt_retry(a->crdt), 0);
    assert_int_equal(replication__crdt_deferred_count(a->crdt), 1);
    a->now_ms += ahead_ms;
    assert_int_equal(replication__crdt_retry(a->crdt), 0);
    assert_int_equal(replication__crdt_held_count(a->crdt), 0);
    crdt_test_assert_query(a, "SELECT a FROM t", "from the future");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 2, &dump_spec);
    (void)fixture_teardown(NULL);
}

/* §5 #28: a primary key change on A, a concurrent update of the old key on
 * B: the old key is gone and the new row complete everywhere. */
static void crdt_primary_key_change(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1],
                          *c = &fx.nodes[2];

    (void)state;
    open_nodes(3);
    crdt_test_exec(a, "INSERT INTO t VALUES ('old', 'x', 'y')");
    crdt_test_sync_all(fx.nodes, 3, &fx.pool, true);
    crdt_test_tick(fx.nodes, 3, 10);
    crdt_test_exec(b, "UPDATE t SET a = 'b wrote' WHERE id = 'old'");
    crdt_test_tick(fx.nodes, 3, 10);
    crdt_test_exec(a, "UPDATE t SET id = 'new' WHERE id = 'old'");
    crdt_test_sync_all(fx.nodes, 3, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 3, &dump_spec);
    crdt_test_assert_query(c, "SELECT id || ',' || a || ',' || b FROM t",
                           "new,x,y");
    (void)fixture_teardown(NULL);
}

/* §5 #11: an update that reaches C before the insert it depends on is
 * kept invisibly, and shows on top of the insert once that arrives. */
static void crdt_update_before_insert(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1],
                          *c = &fx.nodes[2];
    struct crdt_test_pool from_a = {.count = 0};

    (void)state;
    open_nodes(3);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    crdt_test_ship_new(a, &from_a);
    crdt_test_apply(b, from_a.items[0], true);
    crdt_test_tick(fx.nodes, 3, 10);
    crdt_test_exec(b, "UPDATE t SET b = 'b wrote' WHERE id = 'k'");
    crdt_test_ship_new(b, &fx.pool);
    crdt_test_apply(c, fx.pool.items[0], true);
    crdt_test_assert_query(c, "SELECT count(*) FROM t", "0");
    crdt_test_apply(c, from_a.items[0], true);
    crdt_test_assert_query(c, "SELECT a || ',' || b FROM t", "1,b wrote");
    crdt_test_sync_all(fx.nodes, 3, &fx.pool, true);
    crdt_test_assert_converged(fx.nodes, 3, &dump_spec);
    crdt_test_pool_free(&from_a);
    (void)fixture_teardown(NULL);
}

/* DDL travels as SCHEMA records, in order with the rows. */
static void crdt_schema_change_replicates(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    open_nodes(2);
    crdt_test_exec(a, "BEGIN; CREATE TABLE u(k PRIMARY KEY, v);"
                      " INSERT INTO u VALUES (1, 'one'); COMMIT");
    crdt_test_sync_all(fx.nodes, 2, &fx.pool, true);
    crdt_test_assert_query(b, "SELECT v FROM u", "one");
    (void)fixture_teardown(NULL);
}

/* crdt.md §6.8: tables that merges could not keep consistent are refused
 * at creation, with a message naming the problem. */
static void crdt_schema_restrictions_refused(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0];

    (void)state;
    open_nodes(1);
    assert_int_equal(engine_exec(a->db,
                                 "CREATE TABLE n(k PRIMARY KEY, v NOT NULL)",
                                 NULL, NULL),
                     ENGINE_ECONSTRAINT);
    assert_string_equal(engine_errmsg(a->db),
                        "crdt table n: column v is NOT NULL without a DEFAULT");
    assert_int_equal(engine_exec(a->db,
                                 "CREATE TABLE u(k PRIMARY KEY, v UNIQUE)",
                                 NULL, NULL),
                     ENGINE_ECONSTRAINT);
    assert_int_equal(
        engine_exec(a->db, "CREATE UNIQUE INDEX ia ON t(a)", NULL, NULL),
        ENGINE_ECONSTRAINT);
    assert_non_null(strstr(engine_errmsg(a->db), "UNIQUE index ia"));
    crdt_test_exec(a, "CREATE TABLE ok(k PRIMARY KEY, v NOT NULL DEFAULT 0)");
    crdt_test_exec(a, "CREATE INDEX ib ON t(b)");
    crdt_test_assert_query(a,
                           "SELECT count(*) FROM sqlite_schema WHERE name IN"
                           " ('n', 'u', 'ia')",
                           "0");
    (void)fixture_teardown(NULL);
}

/* A site id is made once and kept across reopens. */
static void crdt_site_id_persists(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0];
    struct replication__crdt_config config = {0};

    (void)state;
    open_nodes(1);
    replication__crdt_close(a->crdt);
    a->site_byte = 0x11;
    config.db = a->db;
    config.clock = &a->clock;
    config.random_bytes = crdt_test_random;
    config.random_ctx = a;
    config.log = (struct common_log){.ctx = NULL, .min_level = 0, .emit = NULL};
    assert_int_equal(replication__crdt_open(&config, &a->crdt), 0);
    assert_int_equal(replication__crdt_site(a->crdt)[0], 0xaa);
    (void)fixture_teardown(NULL);
}

/* crdt.md §6.1's invariant, materialized row = f(registers): a row is
 * visible exactly when its existence register is alive; a visible row's
 * cells have no shadow, an invisible row's cells all have one. */
static void assert_registers_match_rows(struct crdt_test_node *node)
{
    char visible[64], shadows[64];

    crdt_test_query(node, "SELECT count(*) FROM t", visible, sizeof(visible));
    crdt_test_assert_query(node,
                           "SELECT count(*) FROM sinew_crdt_row WHERE tbl = 't'"
                           " AND alive = 1",
                           visible);
    crdt_test_assert_query(
        node,
        "SELECT count(*) FROM sinew_crdt_cell WHERE tbl = 't' AND"
        " has_shadow = 1 AND pk IN (SELECT pk FROM sinew_crdt_row"
        " WHERE tbl = 't' AND alive = 1)",
        "0");
    crdt_test_assert_query(
        node,
        "SELECT count(*) FROM sinew_crdt_cell WHERE tbl = 't' AND"
        " has_shadow = 0 AND pk NOT IN (SELECT pk FROM"
        " sinew_crdt_row WHERE tbl = 't' AND alive = 1)",
        "0");
    crdt_test_query(node,
                    "SELECT count(*) FROM sinew_crdt_cell WHERE has_shadow = 1",
                    shadows, sizeof(shadows));
    printf("visible rows=%s shadow cells=%s\n", visible, shadows);
    crdt_test_query(node, "SELECT count(*) FROM r", visible, sizeof(visible));
    printf("rowid-keyed rows=%s\n", visible);
}

/* §5 #15 and the site id: over a file, a reopen keeps the site id, the
 * local version and the clock's high-water mark, so a commit after the
 * wall clock stepped back an hour is still stamped above the last one. */
static void crdt_reopen_keeps_site_version_and_clock(void **state)
{
    struct crdt_test_dir dir;
    struct crdt_test_node *a = &fx.nodes[0];
    uint64_t version, first;

    (void)state;
    crdt_test_dir_make(&dir, "sinew_crdt");
    crdt_test_open_path(a, 0xaa, dir.path, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    first = engine_last_stamp(a->db);
    crdt_test_close(a);

    a->now_ms -= 3600 * 1000;
    crdt_test_open_path(a, 0x11, dir.path, NULL);
    assert_int_equal(replication__crdt_site(a->crdt)[0], 0xaa);
    assert_int_equal(replication__crdt_local_version(a->crdt, &version), 0);
    assert_int_equal(version, 1);
    crdt_test_exec(a, "UPDATE t SET a = 2 WHERE id = 'k'");
    assert_true(engine_last_stamp(a->db) > first);
    assert_int_equal(replication__crdt_local_version(a->crdt, &version), 0);
    assert_int_equal(version, 2);
    (void)fixture_teardown(NULL);
    crdt_test_dir_remove(&dir);
}

/* One random local write on node (failures such as a taken key are fine:
 * the statement does nothing). */
static void random_write(struct crdt_test_node *node,
                         struct common_test_rng *rng)
{
    char sql[256];
    unsigned key = (unsigned)common_test_rng_below(rng, 6);
    unsigned other = (unsigned)common_test_rng_below(rng, 6);
    unsigned value = (unsigned)common_test_rng_below(rng, 1000);

    switch (common_test_rng_below(rng, 10)) {
    case 7:
        snprintf(sql, sizeof(sql), "INSERT INTO r VALUES ('x%u', %u)", value,
                 value);
        break;
    case 8:
        snprintf(sql, sizeof(sql), "UPDATE r SET y = %u WHERE rowid = %u",
                 value, key);
        break;
    case 9:
        snprintf(sql, sizeof(sql), "DELETE FROM r WHERE rowid = %u", key);
        break;
    case 0:
    case 1:
        snprintf(sql, sizeof(sql), "INSERT INTO t VALUES ('k%u', %u, 'v%u')",
                 key, value, value);
        break;
    case 2:
        snprintf(sql, sizeof(sql), "UPDATE t SET a = %u WHERE id = 'k%u'",
                 value, key);
        break;
    case 3:
        snprintf(sql, sizeof(sql),
                 "UPDATE t SET b = 'w%u', a = NULL WHERE id = 'k%u'", value,
                 key);
        break;
    case 4:
        snprintf(sql, sizeof(sql), "DELETE FROM t WHERE id = 'k%u'", key);
        break;
    case 5:
        snprintf(sql, sizeof(sql), "UPDATE t SET id = 'k%u' WHERE id = 'k%u'",
                 other, key);
        break;
    default:
        snprintf(sql, sizeof(sql),
                 "BEGIN; INSERT INTO t(id, a) VALUES ('k%u', %u);"
                 " UPDATE t SET a = a + 1 WHERE id = 'k%u'; COMMIT",
                 key, value, other);
        break;
    }
    if (engine_exec(node->db, sql, NULL, NULL) != 0) {
        (void)engine_exec(node->db, "ROLLBACK", NULL, NULL);
    }
}

/* Many random writes on three nodes with skewed clocks (within the
 * maximum offset), random partial deliveries in random order with
 * duplicates, then a full exchange: all converge. */
static void crdt_random_convergence(void **state)
{
    struct common_test_rng rng;
    size_t step, i, n = 3;

    (void)state;
    common_test_rng_seed(&rng, "crdt_random_convergence");
    open_nodes(n);
    for (step = 0; step < 600; step++) {
        struct crdt_test_node *node = &fx.nodes[common_test_rng_below(&rng, n)];
        node->now_ms += common_test_rng_below(&rng, 3);
        random_write(node, &rng);
        if (common_test_rng_below(&rng, 4) == 0) {
            crdt_test_ship_new(node, &fx.pool);
        }
        if (fx.pool.count > 0 && common_test_rng_below(&rng, 2) == 0) {
            crdt_test_apply(
                &fx.nodes[common_test_rng_below(&rng, n)],
                fx.pool.items[common_test_rng_below(&rng, fx.pool.count)],
                true);
        }
    }
    /* Shuffle the pool, then deliver it all, every item twice. */
    for (i = 0; i < n; i++) {
        crdt_test_ship_new(&fx.nodes[i], &fx.pool);
    }
    for (i = fx.pool.count; i > 1; i--) {
        size_t j = (size_t)common_test_rng_below(&rng, i);
        struct replication__changeset *tmp = fx.pool.items[i - 1];
        fx.pool.items[i - 1] = fx.pool.items[j];
        fx.pool.items[j] = tmp;
    }
    for (step = 0; step < 2; step++) {
        for (i = 0; i < fx.pool.count; i++) {
            crdt_test_apply(&fx.nodes[(i + step) % n], fx.pool.items[i], true);
            crdt_test_apply(&fx.nodes[(i + step + 1) % n], fx.pool.items[i],
                            true);
            crdt_test_apply(&fx.nodes[(i + step + 2) % n], fx.pool.items[i],
                            true);
        }
    }
    crdt_test_assert_converged(fx.nodes, n, &dump_spec);
    assert_registers_match_rows(&fx.nodes[0]);
    (void)fixture_teardown(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(crdt_different_columns_merge,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_same_column_larger_k_wins,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_update_vs_delete_deleted,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_reinsert_after_delete_wins,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_insert_insert_whole_row,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_duplicates_and_reorder_harmless,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(
            crdt_far_ahead_deferred_until_clock_catches_up, fixture_setup,
            fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_primary_key_change, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_update_before_insert,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_schema_change_replicates,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_schema_restrictions_refused,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_site_id_persists, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(
            crdt_reopen_keeps_site_version_and_clock, fixture_setup,
            fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_random_convergence, fixture_setup,
                                        fixture_teardown),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
