/* SPDX-License-Identifier: MIT
 *
 * Goal: replicas whose schemas differ still converge, as
 * ../shared/reference/crdt.md §5 says for #12 (defaults), #20 (a column
 * one side lacks), #21 (a table one side lacks) and #32 (rows from before
 * replication), and as §6.8's schema rules say: a change set that names a
 * table or column the receiver lacks is applied as far as it can be, the
 * rest kept (not an error, not dropped, its origin never held back) and
 * merged once the schema has room for it, also after a reopen; an INSERT
 * from a schema without a column writes the column's DEFAULT; a CREATE
 * TABLE of a table the receiver already has is a no-op, refused with an
 * ERROR when the shapes differ; every change set carries its origin's
 * schema hash.
 *
 * Method: engines in memory (one over a file where a reopen is tested),
 * each with its own crdt state, fake clock, fixed site id and its own
 * schema, made before crdt mode opens (so it does not replicate, as when
 * administrators create tables on each node). Change sets move by hand
 * from each node's change log to the others' replication__crdt_apply().
 * A migration the engine cannot express yet (ALTER TABLE ADD COLUMN) is
 * done as an administrator would, behind replication's back: the table
 * rebuilt with the new column in one engine_apply_transaction(), rows
 * kept. Convergence is a canonical dump of every user table (columns by
 * name) and of the registers, version vector and column catalog, compared
 * across nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "crdt_test.h"

#define NODES_MAX 3

struct fixture {
    struct crdt_test_node nodes[NODES_MAX];
    struct crdt_test_pool pool;
    struct crdt_test_dir dir;
};

static struct fixture fx;

static const char *const base_schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');";

/* Ships what is new on nodes[0..n) and applies it on each: never an error,
 * whatever the schemas. */
static void sync_all(size_t n)
{
    crdt_test_sync_all(fx.nodes, n, &fx.pool, false);
}

/* A rebuild of a table with another shape, keeping its rows, as an
 * administrator would do it behind replication's back (ALTER TABLE ADD
 * COLUMN does not exist in the engine yet): sql runs in one transaction
 * that the commit hook never sees. */
static int rebuild_cb(void *ctx, struct engine_db *db)
{
    return engine_exec(db, ctx, NULL, NULL);
}

static void rebuild(struct crdt_test_node *node, const char *sql)
{
    if (engine_apply_transaction(node->db, 0, rebuild_cb, (void *)sql) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(node->db));
    }
}

/* ---- canonical dumps ---- */

#define NAMES_MAX 64
#define NAME_SIZE 128

/* Names collected by a query, sorted. */
struct names {
    char items[NAMES_MAX][NAME_SIZE];
    size_t count;
    int column; /* the result column that holds the name */
};

static int names_cb(void *ctx, int count, char **values, char **names)
{
    struct names *n = ctx;

    (void)names;
    assert_true(n->column < count);
    assert_true(n->count < NAMES_MAX);
    snprintf(n->items[n->count++], NAME_SIZE, "%s", values[n->column]);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void names_query(struct crdt_test_node *node, const char *sql,
                        int column, struct names *out)
{
    out->count = 0;
    out->column = column;
    assert_int_equal(engine_exec(node->db, sql, names_cb, out), 0);
    qsort(out->items, out->count, NAME_SIZE, name_cmp);
}

/* SELECT 'T table', quote(every column) FROM table ORDER BY them, the
 * columns in name order: the same text whatever the column order of the
 * table. */
static void table_sql(struct crdt_test_node *node, const char *table, char *sql,
                      size_t size)
{
    struct names columns;
    size_t at, i;

    snprintf(sql, size, "PRAGMA table_info(\"%s\")", table);
    names_query(node, sql, 1, &columns);
    at = (size_t)snprintf(sql, size, "SELECT 'T %s'", table);
    for (i = 0; i < columns.count; i++) {
        at += (size_t)snprintf(sql + at, size - at, ", quote(\"%s\")",
                               columns.items[i]);
    }
    at += (size_t)snprintf(sql + at, size - at, " FROM \"%s\" ORDER BY", table);
    for (i = 0; i < columns.count; i++) {
        at += (size_t)snprintf(sql + at, size - at, "%s %zu", i ? "," : "",
                               i + 2);
    }
    assert_true(at < size);
}

static const char *const meta_sql[] = {
    "SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT 'VV', hex(site), head FROM sinew_crdt_vv ORDER BY site",
    "SELECT 'COLUMN', tbl, col FROM sinew_crdt_column ORDER BY tbl, col",
    "SELECT 'INDEX', name FROM sqlite_schema WHERE type = 'index'"
    " AND sql IS NOT NULL ORDER BY name",
};

/* Every user table (columns by name), the registers, the version vector,
 * the column catalog and the indexes. */
static const struct crdt_test_dump_spec dump_spec = {
    table_sql, meta_sql, sizeof(meta_sql) / sizeof(meta_sql[0])};

/* No node keeps or holds a change set, and all dump the same. */
static void assert_converged(size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        assert_int_equal(replication__crdt_kept_count(fx.nodes[i].crdt), 0);
    }
    crdt_test_assert_converged(fx.nodes, n, &dump_spec);
}

static int fixture_setup(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof(fx));
    crdt_test_dir_make(&fx.dir, "sinew_schema");
    return 0;
}

/* Runs at the end of each test (cmocka checks for leaks before its own
 * teardown) and again after a failed one; a second run does nothing. */
static int fixture_teardown(void **state)
{
    (void)state;
    crdt_test_pool_free(&fx.pool);
    crdt_test_close_all(fx.nodes, NODES_MAX);
    crdt_test_dir_remove(&fx.dir);
    return 0;
}

/* ---- the scenarios ---- */

/* §5 #12: an INSERT writes every column, defaults included, so replicas
 * whose DEFAULTs differ still agree on every row. */
static void schema_defaults_written_explicitly(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    crdt_test_open_path(
        a, 0xaa, NULL,
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, d DEFAULT 'a default')");
    crdt_test_open_path(
        b, 0xbb, NULL,
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, d DEFAULT 'b default')");
    crdt_test_exec(a, "INSERT INTO t(id, a) VALUES ('from a', 1)");
    crdt_test_exec(b, "INSERT INTO t(id, a) VALUES ('from b', 2)");
    crdt_test_exec(b, "INSERT INTO t VALUES ('explicit', 3, NULL)");
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(
        a, "SELECT group_concat(d, ',') FROM (SELECT * FROM t ORDER BY id)",
        "a default,b default");
    crdt_test_assert_query(b, "SELECT quote(d) FROM t WHERE id = 'explicit'",
                           "NULL");
    assert_int_equal(a->warnings + b->warnings + a->errors + b->errors, 0);
    (void)fixture_teardown(NULL);
}

static const char *const new_t =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt',"
    " c DEFAULT 'c0');";

/* B's t gains column c, rows kept (what ALTER TABLE ADD COLUMN would do). */
static const char *const add_c =
    "CREATE TABLE t_old(id, a, b);"
    "INSERT INTO t_old SELECT id, a, b FROM t;"
    "DROP TABLE t;"
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt',"
    " c DEFAULT 'c0');"
    "INSERT INTO t(id, a, b) SELECT id, a, b FROM t_old;"
    "DROP TABLE t_old;";

/* §5 #20: A has column c, B does not. B keeps A's c records (no error, no
 * drop) and merges the rest, A's later change sets included; B's INSERTs
 * reach A with c = its DEFAULT, at the INSERT's K, so a write of c older
 * than B's re-INSERT loses on A; once B's t gains c the kept records
 * apply, that same old write loses on B too, and all converge. */
static void schema_unknown_column_kept_then_applied(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    crdt_test_open_path(a, 0xaa, NULL, new_t);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 'x', 'ca')");
    crdt_test_exec(b, "INSERT INTO t(id, a) VALUES ('j', 2)");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "UPDATE t SET c = 'cb' WHERE id = 'k'");
    sync_all(2);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 2);
    assert_int_equal(b->warnings, 1); /* the alarm, once */
    crdt_test_assert_query(b, "SELECT a || ',' || b FROM t WHERE id = 'k'",
                           "1,x");
    crdt_test_assert_query(a, "SELECT c FROM t WHERE id = 'j'", "c0");

    /* A's later change sets are not held back by the kept records. */
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "UPDATE t SET a = 5 WHERE id = 'k'");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "UPDATE t SET c = 'a wrote' WHERE id = 'j'");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(b, "DELETE FROM t WHERE id = 'j'");
    crdt_test_exec(b, "INSERT INTO t(id, a) VALUES ('j', 3)");
    sync_all(2);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 3);
    crdt_test_assert_query(b, "SELECT a FROM t WHERE id = 'k'", "5");
    crdt_test_assert_query(a, "SELECT a || ',' || c FROM t WHERE id = 'j'",
                           "3,c0");

    rebuild(b, add_c);
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT c FROM t WHERE id = 'k'", "cb");
    crdt_test_assert_query(b, "SELECT c FROM t WHERE id = 'j'", "c0");
    assert_true(replication__crdt_schema_hash(a->crdt) ==
                replication__crdt_schema_hash(b->crdt));
    sync_all(2);
    assert_converged(2);

    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(b, "UPDATE t SET c = 'b wrote' WHERE id = 'k'");
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(a, "SELECT c FROM t WHERE id = 'k'", "b wrote");
    assert_int_equal(a->errors + b->errors, 0);
    (void)fixture_teardown(NULL);
}

/* §5 #21: C writes to table u, which it got from A, and its change sets
 * reach B before A's CREATE TABLE does. B keeps the records of u (and
 * C's CREATE INDEX on u) and merges the rest of C's sets; once A's CREATE
 * arrives they apply and all three converge. */
static void schema_unknown_table_kept_then_applied(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1],
                          *c = &fx.nodes[2];
    struct crdt_test_pool from_a = {.count = 0}, from_c = {.count = 0};
    uint64_t head;

    (void)state;
    crdt_test_open_path(a, 0xaa, NULL, base_schema);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    crdt_test_open_path(c, 0xcc, NULL, base_schema);
    crdt_test_exec(a, "CREATE TABLE u(k INTEGER PRIMARY KEY, v)");
    crdt_test_exec(a, "INSERT INTO u VALUES (1, 'one')");
    crdt_test_ship_new(a, &from_a);
    crdt_test_deliver(c, &from_a);
    crdt_test_tick(fx.nodes, 3, 10);
    crdt_test_exec(c, "BEGIN; UPDATE u SET v = 'uno' WHERE k = 1;"
                      " INSERT INTO u VALUES (2, 'two');"
                      " INSERT INTO t VALUES ('c1', 1, 1); COMMIT");
    crdt_test_exec(c, "CREATE INDEX uv ON u(v)");
    crdt_test_exec(c, "INSERT INTO t VALUES ('c2', 2, 2)");
    crdt_test_ship_new(c, &from_c);
    crdt_test_deliver(b, &from_c);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 2);
    assert_int_equal(
        replication__crdt_head(b->crdt, replication__crdt_site(c->crdt), &head),
        0);
    assert_int_equal(head, 3);
    crdt_test_assert_query(
        b, "SELECT group_concat(id, ',') FROM (SELECT * FROM t ORDER BY id)",
        "c1,c2");
    crdt_test_assert_query(
        b, "SELECT count(*) FROM sqlite_schema WHERE name = 'u'", "0");

    crdt_test_deliver(b, &from_a);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);
    crdt_test_deliver(a, &from_c); /* what relay would bring */
    crdt_test_assert_query(
        b, "SELECT group_concat(v, ',') FROM (SELECT * FROM u ORDER BY k)",
        "uno,two");
    crdt_test_assert_query(
        b, "SELECT count(*) FROM sqlite_schema WHERE name = 'uv'", "1");
    sync_all(3);
    assert_converged(3);
    crdt_test_pool_free(&from_a);
    crdt_test_pool_free(&from_c);
    (void)fixture_teardown(NULL);
}

/* §5 #21 when the table never replicates: A made v before crdt mode
 * opened. B keeps A's rows of v until B's administrator creates v too;
 * B's CREATE TABLE then reaches A, which has v already, with the same
 * shape: a no-op, and all converge. */
static void schema_table_made_on_each_node(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    char schema[256];

    (void)state;
    snprintf(schema, sizeof(schema), "%s CREATE TABLE v(k PRIMARY KEY, w);",
             base_schema);
    crdt_test_open_path(a, 0xaa, NULL, schema);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    crdt_test_exec(a, "INSERT INTO v VALUES (1, 'w1')");
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    sync_all(2);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    crdt_test_assert_query(b, "SELECT count(*) FROM t", "1");

    crdt_test_exec(b, "CREATE TABLE v(k PRIMARY KEY, w)");
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT w FROM v", "w1");
    sync_all(2);
    assert_converged(2);
    assert_int_equal(a->errors + b->errors, 0);
    assert_true(replication__crdt_schema_hash(a->crdt) ==
                replication__crdt_schema_hash(b->crdt));
    (void)fixture_teardown(NULL);
}

/* Both nodes create the same tables on their own (replicated DDL both
 * ways). w and its index have one shape on both: each CREATE is a no-op
 * on the other side. z differs (B's has a column more): the CREATE is refused
 * with an ERROR on each side, not a failure; rows merge by column name, B's
 * extra column is kept on A until A's z gains it, then all converge. */
static void schema_create_table_collision(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    crdt_test_open_path(a, 0xaa, NULL, base_schema);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    crdt_test_exec(a, "CREATE TABLE w(k PRIMARY KEY, v)");
    crdt_test_exec(b, "CREATE TABLE w(k PRIMARY KEY, v)");
    crdt_test_exec(a, "INSERT INTO w VALUES (1, 'a')");
    crdt_test_exec(b, "INSERT INTO w VALUES (2, 'b')");
    crdt_test_exec(a, "CREATE INDEX wv ON w(v)");
    crdt_test_exec(b, "CREATE INDEX wv ON w(v)");
    crdt_test_exec(a, "CREATE TABLE z(k PRIMARY KEY, v)");
    crdt_test_exec(b, "CREATE TABLE z(k PRIMARY KEY, v, extra DEFAULT 0)");
    crdt_test_exec(a, "INSERT INTO z VALUES (1, 'a')");
    crdt_test_exec(b, "INSERT INTO z VALUES (2, 'b', 7)");
    sync_all(2);
    assert_int_equal(a->errors, 1);
    assert_int_equal(b->errors, 1);
    assert_int_equal(a->warnings, 1); /* the kept column's alarm */
    assert_int_equal(b->warnings, 0); /* nor for the index */
    crdt_test_assert_query(
        a, "SELECT group_concat(v, ',') FROM (SELECT * FROM w ORDER BY k)",
        "a,b");
    crdt_test_assert_query(
        b, "SELECT group_concat(v, ',') FROM (SELECT * FROM w ORDER BY k)",
        "a,b");
    crdt_test_assert_query(
        a, "SELECT group_concat(v, ',') FROM (SELECT * FROM z ORDER BY k)",
        "a,b");
    crdt_test_assert_query(b,
                           "SELECT group_concat(k || v || extra, ',') FROM"
                           " (SELECT * FROM z ORDER BY k)",
                           "1a0,2b7");
    assert_int_equal(replication__crdt_kept_count(a->crdt), 1);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);

    rebuild(a, "CREATE TABLE z_old(k, v);"
               "INSERT INTO z_old SELECT k, v FROM z; DROP TABLE z;"
               "CREATE TABLE z(k PRIMARY KEY, v, extra DEFAULT 0);"
               "INSERT INTO z(k, v) SELECT k, v FROM z_old;"
               "DROP TABLE z_old;");
    assert_int_equal(replication__crdt_retry(a->crdt), 0);
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(a,
                           "SELECT group_concat(k || v || extra, ',') FROM"
                           " (SELECT * FROM z ORDER BY k)",
                           "1a0,2b7");
    (void)fixture_teardown(NULL);
}

/* A DROP TABLE forgets the table's registers on every replica, so a table
 * made again under the name starts empty; registers written before the
 * DROP in its own transaction go with it. A DROP of a table already gone
 * (dropped on both sides at once) is a no-op, logged. */
static void schema_drop_table_forgets_registers(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];

    (void)state;
    crdt_test_open_path(a, 0xaa, NULL, base_schema);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    sync_all(2);
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a,
                   "BEGIN; UPDATE t SET a = 9 WHERE id = 'k'; DROP TABLE t;"
                   " CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
                   " INSERT INTO t VALUES ('k2', 2, 2); COMMIT");
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_row", "1");
    /* Dropped on both sides at once: the other's DROP finds nothing. */
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "DROP TABLE t");
    crdt_test_exec(b, "DROP TABLE t");
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(a, "SELECT count(*) FROM sinew_crdt_cell", "0");
    assert_int_equal(a->warnings, 1);
    assert_int_equal(b->warnings, 1);
    assert_int_equal(a->errors + b->errors, 0);
    (void)fixture_teardown(NULL);
}

/* Every change set carries its origin's schema hash: equal on nodes whose
 * schemas were made by the same statements, changed by DDL. */
static void schema_hash_travels(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    uint64_t before;

    (void)state;
    crdt_test_open_path(a, 0xaa, NULL, base_schema);
    crdt_test_open_path(b, 0xbb, NULL, base_schema);
    before = replication__crdt_schema_hash(a->crdt);
    assert_true(before != 0);
    assert_true(before == replication__crdt_schema_hash(b->crdt));
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    crdt_test_exec(a, "CREATE TABLE u(k PRIMARY KEY, v)");
    crdt_test_ship_new(a, &fx.pool);
    assert_int_equal(fx.pool.count, 2);
    assert_true(fx.pool.items[0]->schema_hash == before);
    assert_true(fx.pool.items[1]->schema_hash ==
                replication__crdt_schema_hash(a->crdt));
    assert_true(fx.pool.items[1]->schema_hash != before);
    crdt_test_deliver(b, &fx.pool);
    assert_true(replication__crdt_schema_hash(b->crdt) ==
                replication__crdt_schema_hash(a->crdt));
    (void)fixture_teardown(NULL);
}

/* §5 #32: A and B held rows before replication, some under the same key
 * with different values. Each records its rows as one local change set at
 * HLC 0; after the exchange the larger site's row wins whole, on both;
 * any real write wins over them; a reopen does not record them again. */
static void schema_rows_from_before_replication(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    struct replication__crdt_config config;
    uint64_t version;
    char sql[128];
    int i;

    (void)state;
    assert_int_equal(engine_open(NULL, &a->db), 0);
    crdt_test_exec(a, base_schema);
    crdt_test_exec(
        a, "CREATE TABLE r(x, y); CREATE TABLE big(n INTEGER PRIMARY KEY, s)");
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 'a-k', 'a-b'), ('ka', 1, 2)");
    crdt_test_exec(a, "INSERT INTO r VALUES ('from a', 1)");
    crdt_test_exec(a, "BEGIN");
    for (i = 0; i < 1100; i++) {
        snprintf(sql, sizeof(sql), "INSERT INTO big VALUES (%d, 's%d')", i, i);
        crdt_test_exec(a, sql);
    }
    crdt_test_exec(a, "COMMIT");
    a->site_byte = 0xaa;
    a->now_ms = CRDT_TEST_T0;
    crdt_test_attach(a);
    crdt_test_open_path(
        b, 0xbb, NULL,
        "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
        "CREATE TABLE r(x, y); CREATE TABLE big(n INTEGER PRIMARY KEY,"
        " s);"
        "INSERT INTO t VALUES ('k', 'b-k', 'b-b'), ('kb', 3, 4);"
        "INSERT INTO r VALUES ('from b', 2);");
    assert_int_equal(replication__crdt_local_version(a->crdt, &version), 0);
    assert_int_equal(version, 1);
    assert_int_equal(replication__crdt_local_version(b->crdt, &version), 0);
    assert_int_equal(version, 1);
    crdt_test_assert_query(a, "SELECT count(*), max(hlc) FROM sinew_crdt_row",
                           "1103|0");

    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(
        a,
        "SELECT group_concat(id || a || b, ',') FROM (SELECT * FROM t "
        "ORDER BY id)",
        "kb-kb-b,ka12,kb34");
    crdt_test_assert_query(a, "SELECT x FROM r", "from b");
    crdt_test_assert_query(b, "SELECT count(*) FROM big", "1100");

    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "UPDATE t SET a = 'a wins' WHERE id = 'k'");
    sync_all(2);
    assert_converged(2);
    crdt_test_assert_query(b, "SELECT a FROM t WHERE id = 'k'", "a wins");

    replication__crdt_close(a->crdt);
    memset(&config, 0, sizeof(config));
    config.db = a->db;
    config.clock = &a->clock;
    config.random_bytes = crdt_test_random;
    config.random_ctx = a;
    assert_int_equal(replication__crdt_open(&config, &a->crdt), 0);
    assert_int_equal(replication__crdt_local_version(a->crdt, &version), 0);
    assert_int_equal(version, 2);
    (void)fixture_teardown(NULL);
}

/* Kept records are on disk: they survive a close, are not taken for
 * change sets waiting for a gap, and apply once the schema has room, a
 * part at a time (a set naming two missing tables). */
static void schema_kept_sets_survive_reopen(void **state)
{
    struct crdt_test_node *b = &fx.nodes[0], *a = &fx.nodes[1];
    char schema[256];

    (void)state;
    snprintf(schema, sizeof(schema),
             "%s CREATE TABLE u1(k PRIMARY KEY, v);"
             " CREATE TABLE u2(k PRIMARY KEY, v);",
             base_schema);
    crdt_test_open_path(b, 0xbb, fx.dir.path, base_schema);
    crdt_test_open_path(a, 0xaa, NULL, schema);
    crdt_test_exec(a, "BEGIN; INSERT INTO u1 VALUES (1, 'one');"
                      " INSERT INTO u2 VALUES (2, 'two');"
                      " INSERT INTO t VALUES ('k', 1, 1); COMMIT");
    crdt_test_ship_new(a, &fx.pool);
    crdt_test_deliver(b, &fx.pool);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    crdt_test_assert_query(b, "SELECT count(*), reason FROM sinew_crdt_pending",
                           "1|schema");

    crdt_test_close(b);
    crdt_test_open_path(b, 0xbb, fx.dir.path, NULL);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    crdt_test_exec(b, "CREATE TABLE u1(k PRIMARY KEY, v)");
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    crdt_test_assert_query(b, "SELECT v FROM u1", "one");

    crdt_test_close(b);
    crdt_test_open_path(b, 0xbb, fx.dir.path, NULL);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    crdt_test_exec(b, "CREATE TABLE u2(k PRIMARY KEY, v)");
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT v FROM u2", "two");
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    sync_all(2);
    assert_converged(2);
    (void)fixture_teardown(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(schema_defaults_written_explicitly,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_unknown_column_kept_then_applied,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_unknown_table_kept_then_applied,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_table_made_on_each_node,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_create_table_collision,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_drop_table_forgets_registers,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_hash_travels, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_rows_from_before_replication,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(schema_kept_sets_survive_reopen,
                                        fixture_setup, fixture_teardown),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
