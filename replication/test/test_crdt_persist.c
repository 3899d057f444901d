/* SPDX-License-Identifier: MIT
 *
 * Goal: what the crdt state keeps on disk comes back whole. The change log
 * stores each local change set as the wire codec's chunks, and reading it
 * back (decoded, or as the stored chunks) gives what the node produced,
 * before and after a reopen. Change sets that wait (a gap in their
 * origin's versions, or stamped beyond the clock offset) survive a close
 * and are applied once the gap fills or the clock catches up.
 *
 * Method: nodes are engines with their own crdt state and a fake physical
 * clock driven by hand, one over a file in a temporary directory so it can
 * be closed and reopened; change sets move between nodes through
 * replication__crdt_log_since() and replication__crdt_apply(). Change sets
 * are compared field by field, tables and metadata by a text dump.
 */
#include <string.h>
#include <unistd.h>

#include "changeset_codec.h"
#include "common_test.h"
#include "crdt.h"
#include "replication.h"

#define T0 UINT64_C(1764686000000)
#define POOL_MAX 64
#define AHEAD_MS (10 * 60 * 1000)

struct node {
    struct engine_db *db;
    uint64_t now_ms; /* the fake physical clock */
    struct hlc clock;
    struct replication__crdt *crdt;
    uint8_t site_byte;
};

struct pool {
    struct replication__changeset *items[POOL_MAX];
    size_t count;
};

struct fixture {
    char dir[32];
    char path[64];
    struct node nodes[3]; /* nodes[0] over the file */
    struct pool pools[2];
};

static struct fixture fx;

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
    "CREATE TABLE r(x, y);";

static uint64_t node_now_ms(void *ctx)
{
    return ((struct node *)ctx)->now_ms;
}

static int node_random(void *ctx, uint8_t *out, size_t size)
{
    memset(out, ((struct node *)ctx)->site_byte, size);
    return 0;
}

/* Opens the crdt state on node's open engine, with a fresh clock. */
static void node_attach(struct node *node)
{
    struct hlc_config hc = {{node, node_now_ms}, HLC_MAX_OFFSET_MS_DEFAULT};
    struct replication__crdt_config config = {
        node->db, &node->clock, node_random, node, {NULL, 0, NULL}, NULL, NULL};

    hlc_init(&node->clock, &hc);
    assert_int_equal(replication__crdt_open(&config, &node->crdt), 0);
}

/* path NULL: in memory. The schema is made on a new database only. */
static void node_open(struct node *node, const char *path, uint8_t site_byte,
                      bool create)
{
    node->site_byte = site_byte;
    if (node->now_ms == 0) {
        node->now_ms = T0;
    }
    assert_int_equal(engine_open(path, &node->db), 0);
    if (create) {
        assert_int_equal(engine_exec(node->db, schema, NULL, NULL), 0);
    }
    node_attach(node);
}

static void node_close(struct node *node)
{
    replication__crdt_close(node->crdt);
    engine_close(node->db);
    node->crdt = NULL;
    node->db = NULL;
}

static void file_reopen(struct node *node)
{
    node_close(node);
    node_open(node, fx.path, node->site_byte, false);
}

static void exec(struct node *node, const char *sql)
{
    if (engine_exec(node->db, sql, NULL, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(node->db));
    }
}

static int collect_cb(void *ctx, const struct replication__changeset *cs)
{
    struct pool *pool = ctx;

    assert_true(pool->count < POOL_MAX);
    assert_int_equal(
        replication__crdt_changeset_clone(cs, &pool->items[pool->count]), 0);
    pool->count++;
    return 0;
}

static void collect(struct node *node, struct pool *pool)
{
    assert_int_equal(replication__crdt_log_since(
                         node->crdt, replication__crdt_site(node->crdt), 0,
                         collect_cb, pool),
                     0);
}

static void pool_free(struct pool *pool)
{
    size_t i;

    for (i = 0; i < pool->count; i++) {
        replication__crdt_changeset_free(pool->items[i]);
    }
    pool->count = 0;
}

static int fixture_setup(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof(fx));
    snprintf(fx.dir, sizeof(fx.dir), "/tmp/sinew_crdt_XXXXXX");
    assert_non_null(mkdtemp(fx.dir));
    snprintf(fx.path, sizeof(fx.path), "%s/n.sinew", fx.dir);
    return 0;
}

static int fixture_teardown(void **state)
{
    char wal[80];
    size_t i;

    (void)state;
    for (i = 0; i < 2; i++) {
        pool_free(&fx.pools[i]);
    }
    for (i = 0; i < 3; i++) {
        if (fx.nodes[i].db != NULL) {
            node_close(&fx.nodes[i]);
        }
    }
    snprintf(wal, sizeof(wal), "%s-wal", fx.path);
    unlink(wal);
    unlink(fx.path);
    rmdir(fx.dir);
    return 0;
}

static void assert_value_equal(const struct engine_change_value *a,
                               const struct engine_change_value *b)
{
    assert_int_equal(a->type, b->type);
    if (a->type == ENGINE_INTEGER) {
        assert_int_equal(a->integer, b->integer);
    } else if (a->type == ENGINE_FLOAT) {
        assert_memory_equal(&a->real, &b->real, sizeof(a->real));
    } else if (a->type == ENGINE_TEXT || a->type == ENGINE_BLOB) {
        assert_int_equal(a->size, b->size);
        if (a->size > 0) {
            assert_memory_equal(a->bytes, b->bytes, a->size);
        }
    }
}

static void assert_record_equal(const struct replication__changeset *a,
                                const struct replication__record *ra,
                                const struct replication__changeset *b,
                                const struct replication__record *rb)
{
    size_t i;

    assert_int_equal(ra->op, rb->op);
    if (ra->op == REPLICATION__OP_SCHEMA) {
        assert_string_equal(ra->sql, rb->sql);
        return;
    }
    assert_string_equal(a->tables[ra->table].name, b->tables[rb->table].name);
    assert_int_equal(ra->key_count, rb->key_count);
    for (i = 0; i < ra->key_count; i++) {
        assert_value_equal(&ra->key[i], &rb->key[i]);
    }
    if (ra->op == REPLICATION__OP_SET) {
        assert_string_equal(a->tables[ra->table].columns[ra->column],
                            b->tables[rb->table].columns[rb->column]);
        assert_value_equal(&ra->value, &rb->value);
    }
}

static void assert_changeset_equal(const struct replication__changeset *a,
                                   const struct replication__changeset *b)
{
    size_t i;

    assert_memory_equal(a->origin, b->origin, sizeof(a->origin));
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->hlc, b->hlc);
    assert_int_equal(a->epoch, b->epoch);
    assert_int_equal(a->record_count, b->record_count);
    for (i = 0; i < a->record_count; i++) {
        assert_record_equal(a, &a->records[i], b, &b->records[i]);
    }
}

struct chunk_stats {
    size_t count;
    uint64_t last_version;
    uint64_t multi; /* a version stored as more than one chunk */
};

static int chunk_cb(void *ctx, const uint8_t *bytes, size_t size)
{
    struct chunk_stats *s = ctx;
    struct replication__chunk_info info;

    assert_true(size <= REPLICATION__CRDT_LOG_CHUNK_BYTES);
    assert_int_equal(replication__chunk_peek(bytes, size, &info), 0);
    assert_true(info.version >= s->last_version);
    s->last_version = info.version;
    if (info.count > 1) {
        s->multi = info.version;
    }
    s->count++;
    return 0;
}

struct dump {
    char text[8192];
    size_t size;
};

static int dump_cb(void *ctx, int count, char **values, char **names)
{
    struct dump *d = ctx;
    int i;

    (void)names;
    for (i = 0; i < count; i++) {
        d->size += (size_t)snprintf(
            d->text + d->size, sizeof(d->text) - d->size, "%s%s", i ? "|" : "",
            values[i] ? values[i] : "NULL");
        assert_true(d->size < sizeof(d->text) - 1);
    }
    d->text[d->size++] = '\n';
    d->text[d->size] = '\0';
    return 0;
}

/* User tables (big values by length and hash-free prefix) and metadata. */
static void dump(struct node *node, struct dump *d)
{
    static const char *const sql[] = {
        "SELECT id, length(a), hex(substr(a, 1, 8)), quote(b) FROM t"
        " ORDER BY id",
        "SELECT rowid, quote(x), quote(y) FROM r ORDER BY rowid",
        "SELECT tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
        " ORDER BY tbl, pk",
        "SELECT tbl, hex(pk), col, hlc, hex(site), has_shadow,"
        " length(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
        "SELECT hex(site), head FROM sinew_crdt_vv ORDER BY site",
    };
    size_t i;

    d->size = 0;
    d->text[0] = '\0';
    for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        assert_int_equal(engine_exec(node->db, sql[i], dump_cb, d), 0);
    }
}

static void assert_query(struct node *node, const char *sql,
                         const char *expected)
{
    struct dump d = {.size = 0};

    d.text[0] = '\0';
    assert_int_equal(engine_exec(node->db, sql, dump_cb, &d), 0);
    if (d.size > 0) {
        d.text[--d.size] = '\0';
    }
    if (strcmp(d.text, expected) != 0) {
        fail_msg("%s: got \"%s\", want \"%s\"", sql, d.text, expected);
    }
}

/* The first change set is the INSERT: ALIVE then every column. */
static void assert_first_is_insert(const struct replication__changeset *cs)
{
    size_t i;

    assert_int_equal(cs->version, 1);
    assert_int_equal(cs->origin[0], 0xaa);
    assert_int_equal(cs->record_count, 4);
    assert_int_equal(cs->records[0].op, REPLICATION__OP_ALIVE);
    assert_string_equal(cs->tables[cs->records[0].table].name, "t");
    assert_int_equal(cs->records[0].key[0].type, ENGINE_TEXT);
    for (i = 1; i < 4; i++) {
        assert_int_equal(cs->records[i].op, REPLICATION__OP_SET);
    }
}

/* The log round-trips through the codec, before and after a reopen, as
 * decoded change sets and as chunks; a large set takes several chunks. A
 * replica fed the reopened log ends identical to the origin. */
static void crdt_log_round_trips_through_codec(void **state)
{
    struct node *a = &fx.nodes[0], *b = &fx.nodes[1];
    struct chunk_stats stats = {0, 0, 0};
    struct dump da, db;
    size_t i;

    (void)state;
    node_open(a, fx.path, 0xaa, true);
    exec(a, "INSERT INTO t VALUES ('k', 1, x'00ff')");
    exec(a, "INSERT INTO t VALUES ('f', 2.5, NULL)");
    exec(a, "UPDATE t SET a = 'text' WHERE id = 'k'");
    exec(a, "BEGIN; INSERT INTO r VALUES (1, 2);"
            " DELETE FROM t WHERE id = 'f'; COMMIT");
    exec(a, "INSERT INTO t VALUES ('big', randomblob(200000), 1)");
    exec(a, "CREATE TABLE u(k PRIMARY KEY, v)");
    exec(a, "INSERT INTO u VALUES (1, 'u')");
    collect(a, &fx.pools[0]);
    assert_int_equal(fx.pools[0].count, 7);
    assert_first_is_insert(fx.pools[0].items[0]);
    assert_int_equal(fx.pools[0].items[5]->records[0].op,
                     REPLICATION__OP_SCHEMA);
    assert_int_equal(
        replication__crdt_log_bytes_since(
            a->crdt, replication__crdt_site(a->crdt), 0, chunk_cb, &stats),
        0);
    assert_true(stats.count > 7);
    assert_int_equal(stats.multi, 5);
    assert_int_equal(stats.last_version, 7);

    file_reopen(a);
    collect(a, &fx.pools[1]);
    assert_int_equal(fx.pools[1].count, fx.pools[0].count);
    for (i = 0; i < fx.pools[0].count; i++) {
        assert_changeset_equal(fx.pools[0].items[i], fx.pools[1].items[i]);
    }
    node_open(b, NULL, 0xbb, true);
    for (i = 0; i < fx.pools[1].count; i++) {
        assert_int_equal(replication__crdt_apply(b->crdt, fx.pools[1].items[i]),
                         0);
    }
    dump(a, &da);
    dump(b, &db);
    assert_string_equal(da.text, db.text);
}

/* A's version 2 arrives before version 1 (held for the gap), C's change
 * set is stamped beyond the offset (deferred): both survive reopens, and
 * each is applied, and forgotten on disk, once it can be. */
static void crdt_waiting_sets_survive_reopen(void **state)
{
    struct node *b = &fx.nodes[0], *a = &fx.nodes[1], *c = &fx.nodes[2];
    struct pool *from_a = &fx.pools[0], *from_c = &fx.pools[1];

    (void)state;
    node_open(b, fx.path, 0xbb, true);
    node_open(a, NULL, 0xaa, true);
    c->now_ms = T0 + AHEAD_MS;
    node_open(c, NULL, 0xcc, true);
    exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    exec(a, "INSERT INTO t VALUES ('a2', 2, 2)");
    exec(c, "INSERT INTO t VALUES ('c1', 3, 3)");
    collect(a, from_a);
    collect(c, from_c);
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[1]), 0);
    assert_int_equal(replication__crdt_apply(b->crdt, from_c->items[0]),
                     REPLICATION_EDEFERRED);
    assert_query(b, "SELECT count(*), sum(deferred) FROM sinew_crdt_pending",
                 "2|1");

    file_reopen(b);
    assert_int_equal(replication__crdt_held_count(b->crdt), 2);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    assert_query(b, "SELECT count(*) FROM t", "0");
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]), 0);
    assert_query(b, "SELECT group_concat(id) FROM t ORDER BY id", "a1,a2");
    assert_int_equal(replication__crdt_held_count(b->crdt), 1);
    assert_query(b, "SELECT hex(origin), version FROM sinew_crdt_pending",
                 "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC|1");

    file_reopen(b);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    b->now_ms += AHEAD_MS;
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    assert_query(b, "SELECT a FROM t WHERE id = 'c1'", "3");

    file_reopen(b);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    assert_query(b, "SELECT count(*) FROM t", "3");
}

/* A held set that becomes covered (its version applied from another copy)
 * is forgotten on disk too. */
static void crdt_covered_held_set_is_dropped(void **state)
{
    struct node *b = &fx.nodes[0], *a = &fx.nodes[1];
    struct pool *from_a = &fx.pools[0];

    (void)state;
    node_open(b, fx.path, 0xbb, true);
    a->now_ms = T0 + AHEAD_MS;
    node_open(a, NULL, 0xaa, true);
    exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    collect(a, from_a);
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]),
                     REPLICATION_EDEFERRED);
    file_reopen(b);
    b->now_ms += AHEAD_MS;
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]), 0);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    assert_query(b, "SELECT count(*) FROM t", "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(crdt_log_round_trips_through_codec,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_waiting_sets_survive_reopen,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_covered_held_set_is_dropped,
                                        fixture_setup, fixture_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
