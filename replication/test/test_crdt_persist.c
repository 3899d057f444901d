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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "changeset_codec.h"
#include "crdt_test.h"

#define AHEAD_MS (10 * 60 * 1000)

struct fixture {
    struct crdt_test_dir dir;
    struct crdt_test_node nodes[3]; /* nodes[0] over the file */
    struct crdt_test_pool pools[2];
};

static struct fixture fx;

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
    "CREATE TABLE r(x, y);";

/* User tables (big values by length and hash-free prefix) and metadata. */
static const char *const dump_sql[] = {
    "SELECT id, length(a), hex(substr(a, 1, 8)), quote(b) FROM t"
    " ORDER BY id",
    "SELECT rowid, quote(x), quote(y) FROM r ORDER BY rowid",
    "SELECT tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " length(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT hex(site), head FROM sinew_crdt_vv ORDER BY site",
};

static const struct crdt_test_dump_spec dump_spec = {
    NULL, dump_sql, sizeof(dump_sql) / sizeof(dump_sql[0])};

static void file_reopen(struct crdt_test_node *node)
{
    crdt_test_close(node);
    crdt_test_open_path(node, node->site_byte, fx.dir.path, NULL);
}

/* node's own change sets, all of them, into pool. */
static void collect(struct crdt_test_node *node, struct crdt_test_pool *pool)
{
    crdt_test_ship(node, replication__crdt_site(node->crdt), 0, pool);
}

static int fixture_setup(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof(fx));
    crdt_test_dir_make(&fx.dir, "sinew_crdt");
    return 0;
}

static int fixture_teardown(void **state)
{
    (void)state;
    crdt_test_pool_free(&fx.pools[0]);
    crdt_test_pool_free(&fx.pools[1]);
    crdt_test_close_all(fx.nodes, 3);
    crdt_test_dir_remove(&fx.dir);
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
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    struct chunk_stats stats = {0, 0, 0};
    static struct crdt_test_dump da, db;
    size_t i;

    (void)state;
    crdt_test_open_path(a, 0xaa, fx.dir.path, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, x'00ff')");
    crdt_test_exec(a, "INSERT INTO t VALUES ('f', 2.5, NULL)");
    crdt_test_exec(a, "UPDATE t SET a = 'text' WHERE id = 'k'");
    crdt_test_exec(a, "BEGIN; INSERT INTO r VALUES (1, 2);"
                      " DELETE FROM t WHERE id = 'f'; COMMIT");
    crdt_test_exec(a, "INSERT INTO t VALUES ('big', randomblob(200000), 1)");
    crdt_test_exec(a, "CREATE TABLE u(k PRIMARY KEY, v)");
    crdt_test_exec(a, "INSERT INTO u VALUES (1, 'u')");
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
    crdt_test_open_path(b, 0xbb, NULL, schema);
    for (i = 0; i < fx.pools[1].count; i++) {
        assert_int_equal(replication__crdt_apply(b->crdt, fx.pools[1].items[i]),
                         0);
    }
    crdt_test_dump(a, &dump_spec, &da);
    crdt_test_dump(b, &dump_spec, &db);
    assert_string_equal(da.text, db.text);
}

/* A's version 2 arrives before version 1 (held for the gap), C's change
 * set is stamped beyond the offset (deferred): both survive reopens, and
 * each is applied, and forgotten on disk, once it can be. */
static void crdt_waiting_sets_survive_reopen(void **state)
{
    struct crdt_test_node *b = &fx.nodes[0], *a = &fx.nodes[1],
                          *c = &fx.nodes[2];
    struct crdt_test_pool *from_a = &fx.pools[0], *from_c = &fx.pools[1];

    (void)state;
    crdt_test_open_path(b, 0xbb, fx.dir.path, schema);
    crdt_test_open_path(a, 0xaa, NULL, schema);
    c->now_ms = CRDT_TEST_T0 + AHEAD_MS;
    crdt_test_open_path(c, 0xcc, NULL, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    crdt_test_exec(a, "INSERT INTO t VALUES ('a2', 2, 2)");
    crdt_test_exec(c, "INSERT INTO t VALUES ('c1', 3, 3)");
    collect(a, from_a);
    collect(c, from_c);
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[1]), 0);
    assert_int_equal(replication__crdt_apply(b->crdt, from_c->items[0]),
                     REPLICATION_EDEFERRED);
    crdt_test_assert_query(
        b, "SELECT count(*), sum(deferred) FROM sinew_crdt_pending", "2|1");

    file_reopen(b);
    assert_int_equal(replication__crdt_held_count(b->crdt), 2);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    crdt_test_assert_query(b, "SELECT count(*) FROM t", "0");
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]), 0);
    crdt_test_assert_query(b, "SELECT group_concat(id) FROM t ORDER BY id",
                           "a1,a2");
    assert_int_equal(replication__crdt_held_count(b->crdt), 1);
    crdt_test_assert_query(
        b, "SELECT hex(origin), version FROM sinew_crdt_pending",
        "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC|1");

    file_reopen(b);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_deferred_count(b->crdt), 1);
    b->now_ms += AHEAD_MS;
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    crdt_test_assert_query(b, "SELECT a FROM t WHERE id = 'c1'", "3");

    file_reopen(b);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT count(*) FROM t", "3");
}

/* Copies the database file at from (and its WAL, if any) over to. */
static void copy_database(const char *from, const char *to)
{
    for (int wal = 0; wal < 2; wal++) {
        char src[700], dst[700], bytes[65536];
        FILE *in, *out;
        size_t n;

        snprintf(src, sizeof(src), "%s%s", from, wal ? "-wal" : "");
        snprintf(dst, sizeof(dst), "%s%s", to, wal ? "-wal" : "");
        unlink(dst);
        in = fopen(src, "rb");
        if (in == NULL) {
            assert_true(wal); /* only the WAL may be missing */
            continue;
        }
        out = fopen(dst, "wb");
        assert_non_null(out);
        while ((n = fread(bytes, 1, sizeof(bytes), in)) > 0) {
            assert_int_equal(fwrite(bytes, 1, n, out), n);
        }
        fclose(in);
        assert_int_equal(fclose(out), 0);
    }
}

/* A node started from an older copy of its own database gets its later
 * change sets back from a peer, and its next write is numbered past them:
 * before, it took a version its log already held and the commit failed
 * ("UNIQUE constraint failed: sinew_crdt_log..."). */
static void crdt_restored_node_numbers_past_returned_sets(void **state)
{
    struct crdt_test_node *a = &fx.nodes[0], *b = &fx.nodes[1];
    char backup[sizeof(fx.dir.path) + 16];
    uint8_t site[REPLICATION__SITE_ID_BYTES];

    (void)state;
    snprintf(backup, sizeof(backup), "%s.old", fx.dir.path);
    crdt_test_open_path(a, 0xaa, fx.dir.path, schema);
    crdt_test_open_path(b, 0xbb, NULL, schema);
    memcpy(site, replication__crdt_site(a->crdt), sizeof(site));
    crdt_test_exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    crdt_test_close(a);
    copy_database(fx.dir.path, backup);
    crdt_test_open_path(a, 0xaa, fx.dir.path, NULL);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a2', 2, 2)");
    crdt_test_exec(a, "INSERT INTO t VALUES ('a3', 3, 3)");
    crdt_test_push(a, b);
    crdt_test_close(a);

    copy_database(backup, fx.dir.path);
    crdt_test_open_path(a, 0xaa, fx.dir.path, NULL);
    crdt_test_assert_query(a, "SELECT group_concat(id) FROM t", "a1");
    crdt_test_ship(b, site, 1, &fx.pools[0]);
    crdt_test_deliver(a, &fx.pools[0]);
    crdt_test_assert_query(a, "SELECT group_concat(id) FROM t ORDER BY id",
                           "a1,a2,a3");
    crdt_test_tick(fx.nodes, 2, 10);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a4', 4, 4)");
    crdt_test_assert_query(
        a,
        "SELECT max(version) FROM sinew_crdt_log WHERE origin = x'"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'",
        "4");
    crdt_test_push(a, b);
    crdt_test_assert_same(a, b);
    unlink(backup);
}

/* A held set that becomes covered (its version applied from another copy)
 * is forgotten on disk too. */
static void crdt_covered_held_set_is_dropped(void **state)
{
    struct crdt_test_node *b = &fx.nodes[0], *a = &fx.nodes[1];
    struct crdt_test_pool *from_a = &fx.pools[0];

    (void)state;
    crdt_test_open_path(b, 0xbb, fx.dir.path, schema);
    a->now_ms = CRDT_TEST_T0 + AHEAD_MS;
    crdt_test_open_path(a, 0xaa, NULL, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    collect(a, from_a);
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]),
                     REPLICATION_EDEFERRED);
    file_reopen(b);
    b->now_ms += AHEAD_MS;
    assert_int_equal(replication__crdt_apply(b->crdt, from_a->items[0]), 0);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    crdt_test_assert_query(b, "SELECT count(*) FROM t", "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(crdt_log_round_trips_through_codec,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_waiting_sets_survive_reopen,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(
            crdt_restored_node_numbers_past_returned_sets, fixture_setup,
            fixture_teardown),
        cmocka_unit_test_setup_teardown(crdt_covered_held_set_is_dropped,
                                        fixture_setup, fixture_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
