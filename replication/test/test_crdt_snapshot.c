/* SPDX-License-Identifier: MIT
 *
 * Goal: a snapshot carries a node's whole replicated state to another node
 * (crdt_snapshot*.c, crdt.h "snapshots"; ../shared/reference/crdt.md §6.5
 * item 6, §6.7, §5 #25 #26 #36): installed, it makes the receiver's state
 * the sender's, after which change sets merge as usual; a row deleted and
 * collected elsewhere does not come back; the receiver's own unsynced
 * writes survive and converge; bad bytes change nothing; installing twice
 * changes nothing more; tables the receiver lacks are made.
 *
 * Method: two or three engines in memory in one process (crdt_test.h: fake
 * clocks moved by hand, fixed site ids 0xaa.., 0xbb.., 0xcc..), change
 * sets handed between their logs directly, snapshots built, sliced,
 * corrupted, forged (hand-written msgpack sealed with the real envelope)
 * and installed; nodes are compared by a canonical dump of every user
 * table, the schema, the registers, the column catalog and the version
 * vector.
 */
#include <string.h>

#include "crdt_test.h"

#include "crdt_snapshot_int.h"

#define SITE_A 0xaa
#define SITE_B 0xbb
#define SITE_C 0xcc
#define NODES 3

static const char *const schema =
    "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
    "CREATE TABLE r(x, y);";

static struct crdt_test_node nodes[NODES];
static struct crdt_test_node *const a = &nodes[0];
static struct crdt_test_node *const b = &nodes[1];
static struct crdt_test_node *const c = &nodes[2];

static int setup(void **state)
{
    (void)state;
    memset(nodes, 0, sizeof(nodes));
    return 0;
}

/* Runs after a failed test too; a passing test calls it itself, before
 * cmocka counts the blocks still allocated. */
static int teardown(void **state)
{
    (void)state;
    crdt_test_close_all(nodes, NODES);
    return 0;
}

static void snapshot_of(struct crdt_test_node *node, struct common_buf *out)
{
    common_buf_init(out, SIZE_MAX);
    assert_int_equal(replication__crdt_snapshot_build(node->crdt, out), 0);
}

static void install(struct crdt_test_node *node, const struct common_buf *snap,
                    struct replication__crdt_install *stats)
{
    int rc = replication__crdt_snapshot_install(node->crdt, snap->data,
                                                snap->size, stats);

    if (rc != 0) {
        fail_msg("install: %s: %s", replication_strerror(rc),
                 engine_errmsg(node->db));
    }
}

static uint64_t head_of(struct crdt_test_node *node, uint8_t site_byte)
{
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    uint64_t head;

    memset(site, site_byte, sizeof(site));
    assert_int_equal(replication__crdt_head(node->crdt, site, &head), 0);
    return head;
}

static uint64_t floor_of(struct crdt_test_node *node, uint8_t site_byte)
{
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    uint64_t floor;

    memset(site, site_byte, sizeof(site));
    assert_int_equal(replication__crdt_floor(node->crdt, site, &floor), 0);
    return floor;
}

/* The largest HLC among node's registers. */
static uint64_t register_hlc_max(struct crdt_test_node *node)
{
    static const char *const sql[] = {
        "SELECT max(hlc) FROM sinew_crdt_row",
        "SELECT max(hlc) FROM sinew_crdt_cell",
    };
    struct engine_stmt *stmt;
    uint64_t max = 0, v;
    size_t i;

    for (i = 0; i < 2; i++) {
        assert_int_equal(engine_prepare(node->db, sql[i], -1, &stmt, NULL), 0);
        assert_int_equal(engine_step(stmt), ENGINE_ROW);
        v = (uint64_t)engine_column_int64(stmt, 0);
        max = v > max ? v : max;
        engine_finalize(stmt);
    }
    return max;
}

/* A's state: two origins, every storage class, a deleted row whose newer
 * concurrent update from C stays as a shadow. */
static void make_history(void)
{
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(c, SITE_C, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k1', 1, 'x');"
                      "INSERT INTO t VALUES ('k2', 2.5, x'00ff');"
                      "INSERT INTO t VALUES ('k3', NULL, -0.0);"
                      "INSERT INTO t VALUES ('k4', 9223372036854775807, '');"
                      "INSERT INTO r VALUES (1, 'one'), (2, NULL);");
    crdt_test_push(a, c);
    a->now_ms += 10;
    c->now_ms += 20;
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'k1'");
    crdt_test_exec(c, "UPDATE t SET a = 'from c' WHERE id = 'k1';"
                      "INSERT INTO t (id, a) VALUES ('c1', -7)");
    crdt_test_push(c, a);
    crdt_test_push(a, c);
    crdt_test_exec(a, "DELETE FROM r WHERE x = 2");
}

/* (a) A's snapshot, sent in 100-byte slices, installed on an empty B:
 * B's state is A's; B then merges A's and C's later change sets as usual. */
static void snapshot_installs_on_empty_node(void **state)
{
    struct replication__crdt_install stats;
    struct common_buf snap, got;
    size_t total = 0, at;

    (void)state;
    make_history();
    crdt_test_open(b, SITE_B, NULL);
    snapshot_of(a, &snap);
    assert_int_equal(replication__crdt_snapshot_size(snap.data, 100, &total),
                     0);
    assert_int_equal(total, snap.size);
    common_buf_init(&got, total);
    for (at = 0; at < snap.size; at += 100) {
        size_t n = snap.size - at < 100 ? snap.size - at : 100;
        assert_int_equal(common_buf_append(&got, snap.data + at, n), 0);
    }
    assert_int_equal(replication__crdt_snapshot_check(got.data, got.size), 0);
    install(b, &got, &stats);
    assert_int_equal(stats.merged, 0);
    crdt_test_assert_same(a, b);
    assert_int_equal(floor_of(b, SITE_A), head_of(a, SITE_A));
    assert_int_equal(floor_of(b, SITE_C), head_of(a, SITE_C));
    assert_true(hlc_high_water(&b->clock) >= register_hlc_max(a));
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_log", "0");
    crdt_test_assert_query(b,
                           "SELECT typeof(b) || quote(b) FROM t"
                           " WHERE id = 'k3'",
                           "real0.0");

    a->now_ms += 10;
    c->now_ms += 10;
    crdt_test_exec(a, "UPDATE t SET b = 'later' WHERE id = 'k2';"
                      "INSERT INTO r VALUES (3, 'three')");
    crdt_test_exec(c, "INSERT INTO t VALUES ('k1', 'back', 'again')");
    crdt_test_push(a, b);
    crdt_test_push(c, b);
    crdt_test_push(c, a);
    crdt_test_assert_same(a, b);
    common_buf_close(&got);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* (b) §5 #26: B held k1 alive; A deleted it and collected the tombstone.
 * After B installs A's snapshot k1 stays gone; B's unsynced insert stays
 * (merged back with its own stamp); its unsynced update, older than A's,
 * still loses, as it would have anyway; shipped to A, both converge. */
static void snapshot_deleted_row_stays_deleted(void **state)
{
    struct replication__crdt_install stats;
    struct common_buf snap;

    (void)state;
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_exec(a, "INSERT INTO t VALUES ('k1', 1, 1);"
                      "INSERT INTO t VALUES ('k2', 2, 2)");
    crdt_test_push(a, b);
    b->now_ms += 10; /* B, offline */
    crdt_test_exec(b, "INSERT INTO t VALUES ('k3', 3, 'b')");
    crdt_test_exec(b, "UPDATE t SET a = 'b offline' WHERE id = 'k2'");
    a->now_ms += 20; /* A, meanwhile, later */
    crdt_test_exec(a, "DELETE FROM t WHERE id = 'k1'");
    crdt_test_exec(a, "UPDATE t SET a = 'a later' WHERE id = 'k2'");
    /* Tombstone collection on A. */
    crdt_test_exec(a, "DELETE FROM sinew_crdt_cell WHERE pk IN"
                      " (SELECT pk FROM sinew_crdt_row WHERE alive = 0)");
    crdt_test_exec(a, "DELETE FROM sinew_crdt_row WHERE alive = 0");
    crdt_test_assert_query(b, "SELECT count(*) FROM t WHERE id = 'k1'", "1");

    snapshot_of(a, &snap);
    install(b, &snap, &stats);
    assert_int_equal(stats.merged, 2);
    crdt_test_assert_query(b, "SELECT count(*) FROM t WHERE id = 'k1'", "0");
    crdt_test_assert_query(b, "SELECT a || b FROM t WHERE id = 'k3'", "3b");
    crdt_test_assert_query(b, "SELECT a FROM t WHERE id = 'k2'", "a later");
    assert_int_equal(head_of(b, SITE_B), 2);

    crdt_test_push(b, a);
    crdt_test_push(a, b);
    crdt_test_assert_same(a, b);
    crdt_test_assert_query(a, "SELECT count(*) FROM t WHERE id = 'k1'", "0");
    crdt_test_assert_query(a, "SELECT a FROM t WHERE id = 'k2'", "a later");
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* ---- (c) bad bytes ---- */

static void mp_raw(struct common_buf *m, const void *bytes, size_t size)
{
    assert_int_equal(common_buf_append(m, bytes, size), 0);
}

static void mp_array(struct common_buf *m, uint8_t count)
{
    uint8_t tag = (uint8_t)(0x90 | count);

    assert_true(count < 16);
    mp_raw(m, &tag, 1);
}

static void mp_uint(struct common_buf *m, uint8_t v)
{
    assert_true(v < 128);
    mp_raw(m, &v, 1);
}

static void mp_str(struct common_buf *m, const char *s)
{
    uint8_t head[2] = {0xd9, (uint8_t)strlen(s)};

    assert_true(strlen(s) < 256);
    mp_raw(m, head, 2);
    mp_raw(m, s, strlen(s));
}

static void mp_site(struct common_buf *m, uint8_t site_byte)
{
    uint8_t bin[2 + REPLICATION__SITE_ID_BYTES] = {0xc4,
                                                   REPLICATION__SITE_ID_BYTES};

    memset(bin + 2, site_byte, REPLICATION__SITE_ID_BYTES);
    mp_raw(m, bin, sizeof(bin));
}

/* The parts of a forged body; NULL parts are empty arrays. */
struct forged {
    uint8_t body_site;
    const char *heads;   /* pairs of site bytes and heads, "aa3cc2" */
    const char *floors;  /* as heads */
    const char *table;   /* a CREATE TABLE of table f, or NULL */
    const char *columns; /* the tables part's columns of f, "ab"; NULL:
                            no entry for f there */
    const char *rows;    /* integer rows of f, one digit per column */
};

static void forged_heads(struct common_buf *m, const char *list)
{
    size_t n = list != NULL ? strlen(list) / 3 : 0, i;

    mp_array(m, (uint8_t)n);
    for (i = 0; i < n; i++) {
        unsigned site, head;
        assert_int_equal(sscanf(list + 3 * i, "%2x%1u", &site, &head), 2);
        mp_array(m, 2);
        mp_site(m, (uint8_t)site);
        mp_uint(m, (uint8_t)head);
    }
}

static void forged_table(struct common_buf *m, const struct forged *f)
{
    size_t width = strlen(f->columns), rows = strlen(f->rows) / width, i, j;
    char name[2] = {0, 0};

    mp_array(m, 1);
    mp_array(m, 4);
    mp_str(m, "f");
    mp_array(m, (uint8_t)width);
    for (i = 0; i < width; i++) {
        name[0] = f->columns[i];
        mp_str(m, name);
    }
    mp_uint(m, 0);
    mp_array(m, (uint8_t)rows);
    for (i = 0; i < rows; i++) {
        mp_array(m, (uint8_t)width);
        for (j = 0; j < width; j++) {
            mp_uint(m, (uint8_t)(f->rows[i * width + j] - '0'));
        }
    }
}

/* A snapshot of f's body from site A, sealed as a real one is. */
static void forge(const struct forged *f, struct common_buf *out)
{
    struct common_buf m;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    int i;

    common_buf_init(&m, SIZE_MAX);
    common_buf_init(out, SIZE_MAX);
    mp_array(&m, SNAPSHOT_PART_COUNT);
    mp_site(&m, f->body_site);
    forged_heads(&m, f->heads);
    forged_heads(&m, f->floors);
    mp_array(&m, f->table != NULL);
    if (f->table != NULL) {
        mp_array(&m, 3);
        mp_str(&m, "table");
        mp_str(&m, "f");
        mp_str(&m, f->table);
    }
    if (f->columns != NULL) {
        forged_table(&m, f);
    } else {
        mp_array(&m, 0);
    }
    for (i = SNAPSHOT_EXIST; i < SNAPSHOT_PART_COUNT; i++) {
        mp_array(&m, 0);
    }
    memset(site, SITE_A, sizeof(site));
    assert_int_equal(replication__snapshot_seal(m.data, m.size, site, out), 0);
    common_buf_close(&m);
}

/* Installing size bytes at bytes fails with rc and leaves B as it was
 * (before); the check fails with rc too when check, else passes (what only
 * the install's transaction finds out). */
static void refused(const uint8_t *bytes, size_t size, int rc, bool check,
                    const struct crdt_test_dump *before)
{
    static struct crdt_test_dump after;

    assert_int_equal(
        replication__crdt_snapshot_install(b->crdt, bytes, size, NULL), rc);
    assert_int_equal(replication__crdt_snapshot_check(bytes, size),
                     check ? rc : 0);
    crdt_test_dump(b, &crdt_test_dump_all, &after);
    assert_string_equal(after.text, before->text);
}

static void refused_forged(const struct forged *f, bool check,
                           const struct crdt_test_dump *before)
{
    struct common_buf snap;

    forge(f, &snap);
    refused(snap.data, snap.size, REPLICATION_EFORMAT, check, before);
    common_buf_close(&snap);
}

/* Every byte of snap flipped in turn (in copy, which holds snap's bytes
 * and one more): refused each time. */
static void flips_refused(const struct common_buf *snap,
                          struct common_buf *copy)
{
    size_t i;
    int rc;

    for (i = 0; i < snap->size; i++) {
        copy->data[i] = snap->data[i] ^ 0x40;
        if (i > 0) {
            copy->data[i - 1] = snap->data[i - 1];
        }
        rc = replication__crdt_snapshot_install(b->crdt, copy->data, snap->size,
                                                NULL);
        assert_true(rc == REPLICATION_EFORMAT ||
                    (i == REPLICATION__SNAPSHOT_AT_VERSION &&
                     rc == REPLICATION_EVERSION));
    }
}

/* (c) Truncated, flipped, trailing and forged snapshots: refused, B
 * untouched, never a crash. */
static void snapshot_bad_bytes_change_nothing(void **state)
{
    static struct crdt_test_dump before, after;
    static const size_t cuts[] = {0, 1, 61, 62, 63, 200};
    struct common_buf snap, copy;
    size_t i;

    (void)state;
    make_history();
    crdt_test_open(b, SITE_B, schema);
    crdt_test_exec(b, "INSERT INTO t VALUES ('b1', 'mine', 1)");
    snapshot_of(a, &snap);
    crdt_test_dump(b, &crdt_test_dump_all, &before);
    for (i = 0; i < sizeof(cuts) / sizeof(*cuts); i++) {
        refused(snap.data, cuts[i], REPLICATION_EFORMAT, true, &before);
    }
    refused(snap.data, snap.size - 1, REPLICATION_EFORMAT, true, &before);
    common_buf_init(&copy, SIZE_MAX);
    assert_int_equal(common_buf_append(&copy, snap.data, snap.size), 0);
    assert_int_equal(common_buf_append_byte(&copy, 0), 0);
    refused(copy.data, copy.size, REPLICATION_EFORMAT, true, &before);
    flips_refused(&snap, &copy);
    crdt_test_dump(b, &crdt_test_dump_all, &after);
    assert_string_equal(after.text, before.text);

    /* Well sealed, wrong inside: caught by the check ... */
    refused_forged(&(struct forged){.body_site = SITE_B}, true, &before);
    refused_forged(&(struct forged){.body_site = SITE_A, .heads = "aa3aa4"},
                   true, &before);
    refused_forged(
        &(struct forged){.body_site = SITE_A, .heads = "aa3", .floors = "aa4"},
        true, &before);
    refused_forged(&(struct forged){.body_site = SITE_A,
                                    .heads = "aa3",
                                    .table = "CREATE TABLE f(x, y)"},
                   true, &before);
    /* ... or inside the install's transaction, rolled back. */
    refused_forged(&(struct forged){.body_site = SITE_A,
                                    .table = "CREATE TABLE f(x, y)",
                                    .columns = "xz",
                                    .rows = "12"},
                   false, &before);
    refused_forged(&(struct forged){.body_site = SITE_A,
                                    .table = "CREATE TABLE g(x, y)",
                                    .columns = "xy",
                                    .rows = ""},
                   false, &before);
    refused_forged(&(struct forged){.body_site = SITE_A,
                                    .table = "CREATE TABLE f(x PRIMARY KEY, y)",
                                    .columns = "xy",
                                    .rows = "1213"},
                   false, &before);
    refused_forged(&(struct forged){.body_site = SITE_A,
                                    .table = "CREATE TABLE sinew_f(x, y)",
                                    .columns = "xy",
                                    .rows = ""},
                   false, &before);
    common_buf_close(&copy);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* (d) The same snapshot installed twice, with unsynced local writes: the
 * second install changes nothing and makes no version. */
static void snapshot_install_twice_harmless(void **state)
{
    static struct crdt_test_dump first, second;
    struct replication__crdt_install stats;
    struct common_buf snap;

    (void)state;
    make_history();
    crdt_test_open(b, SITE_B, schema);
    b->now_ms += 50;
    crdt_test_exec(b, "INSERT INTO t VALUES ('b1', 'mine', 1)");
    crdt_test_exec(b, "UPDATE t SET a = 'b1 again' WHERE id = 'b1'");
    crdt_test_exec(b, "INSERT INTO r VALUES (7, 'seven')");
    snapshot_of(a, &snap);
    install(b, &snap, &stats);
    assert_int_equal(stats.merged, 3);
    crdt_test_dump(b, &crdt_test_dump_all, &first);
    install(b, &snap, &stats);
    crdt_test_dump(b, &crdt_test_dump_all, &second);
    assert_string_equal(first.text, second.text);
    crdt_test_assert_query(b, "SELECT a FROM t WHERE id = 'b1'", "b1 again");

    crdt_test_push(b, a);
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* (e) A table B lacks is made, with its index and rows; a table both have
 * takes A's definition; B's own table A lacks is kept, and once shipped A
 * has it too. */
static void snapshot_creates_missing_tables(void **state)
{
    struct replication__crdt_install stats;
    struct common_buf snap;

    (void)state;
    crdt_test_open(a, SITE_A,
                   "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
                   "CREATE TABLE r(x, y);"
                   "CREATE TABLE extra(k INTEGER PRIMARY KEY, v);"
                   "CREATE INDEX extra_v ON extra(v);");
    crdt_test_open(b, SITE_B,
                   "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'dflt');"
                   "CREATE TABLE r(x, y, z);");
    crdt_test_exec(a, "INSERT INTO extra VALUES (5, 'five'), (6, 'six');"
                      "INSERT INTO r VALUES (1, 2)");
    crdt_test_exec(b, "CREATE TABLE mine(id PRIMARY KEY, v)");
    crdt_test_exec(b, "INSERT INTO mine VALUES ('m', 1)");
    snapshot_of(a, &snap);
    install(b, &snap, &stats);
    crdt_test_assert_query(b, "SELECT group_concat(v) FROM extra", "five,six");
    crdt_test_assert_query(b,
                           "SELECT count(*) FROM sqlite_schema"
                           " WHERE name = 'extra_v'",
                           "1");
    crdt_test_assert_query(b, "SELECT sql FROM sqlite_schema WHERE name = 'r'",
                           "CREATE TABLE r(x, y)");
    crdt_test_assert_query(b, "SELECT v FROM mine WHERE id = 'm'", "1");

    crdt_test_push(b, a);
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* Another origin's change sets B holds beyond A's head of it are kept and
 * merged back; a set B held waiting, now covered, is dropped. */
static void snapshot_keeps_later_history_of_others(void **state)
{
    struct crdt_test_pool pool = {.count = 0};
    struct replication__crdt_install stats;
    struct common_buf snap;
    uint8_t site_c[REPLICATION__SITE_ID_BYTES];

    (void)state;
    memset(site_c, SITE_C, sizeof(site_c));
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_open(c, SITE_C, schema);
    crdt_test_exec(c, "INSERT INTO t VALUES ('c1', 1, 1)");
    crdt_test_push(c, a);
    crdt_test_push(c, b);
    crdt_test_exec(c, "INSERT INTO t VALUES ('c2', 2, 2)");
    crdt_test_push(c, b);
    crdt_test_exec(a, "INSERT INTO t VALUES ('a1', 1, 1)");
    snapshot_of(a, &snap);
    install(b, &snap, &stats);
    assert_int_equal(stats.merged, 1);
    assert_int_equal(head_of(b, SITE_C), 2);
    assert_int_equal(floor_of(b, SITE_C), 1);
    crdt_test_assert_query(
        b, "SELECT group_concat(version) FROM sinew_crdt_log", "2");
    crdt_test_assert_query(b, "SELECT count(*) FROM t WHERE id = 'c2'", "1");
    crdt_test_push(c, a);
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);

    /* C's versions 3 and 4: B gets only 4 (held), A both. */
    crdt_test_exec(c, "INSERT INTO t VALUES ('c3', 3, 3)");
    crdt_test_exec(c, "INSERT INTO t VALUES ('c4', 4, 4)");
    crdt_test_ship(c, site_c, 3, &pool);
    crdt_test_deliver(b, &pool);
    crdt_test_pool_free(&pool);
    assert_int_equal(replication__crdt_held_count(b->crdt), 1);
    crdt_test_push(c, a);
    snapshot_of(a, &snap);
    install(b, &snap, &stats);
    assert_int_equal(replication__crdt_held_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT count(*) FROM sinew_crdt_pending", "0");
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* B's database is an old copy (the cluster has versions of B it lacks):
 * the install raises B's counter, so no version number is used twice. */
static void snapshot_restored_copy_keeps_versions_unique(void **state)
{
    struct common_buf snap;

    (void)state;
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_exec(b, "INSERT INTO t VALUES ('b1', 1, 1)");
    crdt_test_exec(b, "INSERT INTO t VALUES ('b2', 2, 2)");
    crdt_test_push(b, a);
    crdt_test_close(b);
    crdt_test_open(b, SITE_B, schema); /* the old copy: empty */
    snapshot_of(a, &snap);
    install(b, &snap, NULL);
    assert_int_equal(head_of(b, SITE_B), 2);
    crdt_test_exec(b, "INSERT INTO t VALUES ('b3', 3, 3)");
    assert_int_equal(head_of(b, SITE_B), 3);
    crdt_test_push(b, a);
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* A snapshot stamped beyond the maximum clock offset waits (nothing
 * changes) until the local clock catches up (§5 #13). */
static void snapshot_from_clock_far_ahead_deferred(void **state)
{
    static struct crdt_test_dump before, after;
    struct common_buf snap;

    (void)state;
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    a->now_ms += 10 * 60 * 1000;
    crdt_test_exec(a, "INSERT INTO t VALUES ('k', 1, 1)");
    snapshot_of(a, &snap);
    crdt_test_dump(b, &crdt_test_dump_all, &before);
    assert_int_equal(
        replication__crdt_snapshot_install(b->crdt, snap.data, snap.size, NULL),
        REPLICATION_EDEFERRED);
    crdt_test_dump(b, &crdt_test_dump_all, &after);
    assert_string_equal(before.text, after.text);
    b->now_ms = a->now_ms;
    install(b, &snap, NULL);
    crdt_test_assert_same(a, b);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* out's size_max is the hard limit: past it the build fails and out keeps
 * what it had; a header alone is too short to size a snapshot. */
static void snapshot_build_size_limit(void **state)
{
    struct common_buf out;
    size_t total;

    (void)state;
    make_history();
    common_buf_init(&out, 100);
    assert_int_equal(common_buf_append(&out, "x", 1), 0);
    assert_int_equal(replication__crdt_snapshot_build(a->crdt, &out),
                     COMMON_ETOOBIG);
    assert_int_equal(out.size, 1);
    common_buf_close(&out);
    snapshot_of(a, &out);
    assert_int_equal(
        replication__crdt_snapshot_size(
            out.data, REPLICATION__SNAPSHOT_HEADER_BYTES - 1, &total),
        REPLICATION_EFORMAT);
    common_buf_close(&out);
    (void)teardown(NULL);
}

/* A body past REPLICATION__SNAPSHOT_COMPRESS_MIN travels lz4-compressed;
 * a flipped payload byte is caught before anything is installed. */
static void snapshot_large_is_compressed(void **state)
{
    static struct crdt_test_dump before, after;
    struct common_buf snap;
    size_t at;

    (void)state;
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_exec(a, "BEGIN");
    for (at = 0; at < 300; at++) {
        crdt_test_exec(a, "INSERT INTO r VALUES (1, 'the same text again')");
    }
    crdt_test_exec(a, "COMMIT");
    snapshot_of(a, &snap);
    assert_true(snap.data[REPLICATION__SNAPSHOT_AT_FLAGS] &
                REPLICATION__SNAPSHOT_FLAG_LZ4);
    crdt_test_dump(b, &crdt_test_dump_all, &before);
    at = REPLICATION__SNAPSHOT_HEADER_SIZE + 10;
    snap.data[at] ^= 1;
    assert_int_equal(
        replication__crdt_snapshot_install(b->crdt, snap.data, snap.size, NULL),
        REPLICATION_EFORMAT);
    crdt_test_dump(b, &crdt_test_dump_all, &after);
    assert_string_equal(before.text, after.text);
    snap.data[at] ^= 1;
    install(b, &snap, NULL);
    crdt_test_assert_same(a, b);
    crdt_test_assert_query(b, "SELECT count(*) FROM r", "300");
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* Records A keeps for a table it lacks (crdt_quarantine.c) travel with the
 * snapshot, and are merged on B once B has the table. */
static void snapshot_carries_kept_records(void **state)
{
    struct common_buf snap;

    (void)state;
    crdt_test_open(a, SITE_A, schema);
    crdt_test_open(b, SITE_B, schema);
    crdt_test_open(c, SITE_C, "CREATE TABLE late(id PRIMARY KEY, v);");
    crdt_test_exec(c, "INSERT INTO late VALUES ('l', 'kept')");
    crdt_test_push(c, a);
    assert_int_equal(replication__crdt_kept_count(a->crdt), 1);
    snapshot_of(a, &snap);
    install(b, &snap, NULL);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 1);
    crdt_test_assert_same(a, b);
    crdt_test_exec(b, "CREATE TABLE late(id PRIMARY KEY, v)");
    assert_int_equal(replication__crdt_retry(b->crdt), 0);
    assert_int_equal(replication__crdt_kept_count(b->crdt), 0);
    crdt_test_assert_query(b, "SELECT v FROM late", "kept");
    common_buf_close(&snap);
    (void)teardown(NULL);
}

/* Every byte of a real body changed in turn, sealed again as valid: the
 * check and the install refuse it or take it, never crash, never leak
 * (the walk and the install's own checks are what stand between such a
 * body and the database, not the checksums). */
static void snapshot_mutated_bodies_never_crash(void **state)
{
    struct replication__snapshot_body body;
    struct common_buf snap, forged, copy;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    size_t i, accepted = 0;
    uint8_t flip;
    int rc;

    (void)state;
    make_history();
    crdt_test_open(b, SITE_B, schema);
    snapshot_of(a, &snap);
    assert_int_equal(replication__snapshot_open(snap.data, snap.size, &body),
                     0);
    common_buf_init(&copy, SIZE_MAX);
    assert_int_equal(common_buf_append(&copy, body.data, body.size), 0);
    memset(site, SITE_A, sizeof(site));
    for (i = 0; i < copy.size; i++) {
        flip = i % 2 == 0 ? 0x01 : 0x80; /* a low and a high bit */
        copy.data[i] ^= flip;
        common_buf_init(&forged, SIZE_MAX);
        assert_int_equal(
            replication__snapshot_seal(copy.data, copy.size, site, &forged), 0);
        rc = replication__crdt_snapshot_install(b->crdt, forged.data,
                                                forged.size, NULL);
        accepted += rc == 0;
        common_buf_close(&forged);
        copy.data[i] ^= flip;
    }
    assert_true(accepted > 0); /* a changed value is still a snapshot */
    assert_true(accepted < copy.size);
    /* The true snapshot still installs, also over what forged ones left
     * (an install joins: it refuses no snapshot for lacking versions). */
    rc =
        replication__crdt_snapshot_install(b->crdt, snap.data, snap.size, NULL);
    assert_int_equal(rc, 0);
    common_buf_close(&copy);
    replication__snapshot_body_close(&body);
    common_buf_close(&snap);
    (void)teardown(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(snapshot_installs_on_empty_node, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_deleted_row_stays_deleted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_bad_bytes_change_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_install_twice_harmless, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_creates_missing_tables, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_keeps_later_history_of_others,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            snapshot_restored_copy_keeps_versions_unique, setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_from_clock_far_ahead_deferred,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_build_size_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_large_is_compressed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_carries_kept_records, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(snapshot_mutated_bodies_never_crash,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
