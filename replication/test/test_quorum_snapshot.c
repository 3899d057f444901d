/* SPDX-License-Identifier: MIT
 *
 * test_quorum_snapshot.c: quorum mode's snapshots (replication.h,
 * replication_quorum_snapshot() and _restore()): a snapshot restored into
 * another database gives the same answers to every query (schema, rows,
 * rowids, storage classes, transaction outcomes) and the same future
 * (later entries apply alike); an older snapshot never moves state back;
 * damaged bytes are refused with nothing changed.
 *
 * Method: nodes as in test_quorum.c (files under $TMPDIR, SQL through
 * execute and apply), compared by full dumps. Every test runs with PRAGMA
 * synchronous FULL and OFF.
 */
#include "test_quorum_util.h"

/* Tables with every storage class, mixed types in one column, a rowid
 * table with gaps, a text primary key, indexes, odd names. */
static const char *const STATE_SQL[] = {
    "CREATE TABLE t(k INTEGER PRIMARY KEY, v);"
    " CREATE TABLE p(id TEXT PRIMARY KEY, n REAL, b BLOB NOT NULL DEFAULT x'');"
    " CREATE TABLE r(a, b TEXT); CREATE INDEX rb ON r(b);"
    " CREATE TABLE \"we\"\"ird t\"(\"rowid\" TEXT, \"x y\" NUMERIC);"
    " CREATE UNIQUE INDEX pn ON p(n)",
    "INSERT INTO t VALUES(1, 1), (2, 2.5), (3, 'three'), (4, x'0004'),"
    " (5, NULL), (-9223372036854775807, ''), (9223372036854775807, 0.1)",
    "INSERT INTO p VALUES('a', 1, x''), ('b', -0.0, x'ff00'), ('', NULL, 'x')",
    "INSERT INTO r VALUES(1, 'one'), (2, 'two'), (3, 'three');"
    " DELETE FROM r WHERE a = 2; INSERT INTO r VALUES(4, 4)",
    "INSERT INTO \"we\"\"ird t\" VALUES('r', '12'), ('s', 'x1')",
};

#define STATE_COUNT (sizeof(STATE_SQL) / sizeof(STATE_SQL[0]))

static void build_state(struct node *n)
{
    for (size_t i = 0; i < STATE_COUNT; i++) {
        assert_int_equal(node_commit(n, STATE_SQL[i], 100 + (unsigned)i, NULL),
                         0);
    }
}

static void take_snapshot(struct node *n, struct common_buf *out)
{
    common_buf_init(out, SIZE_MAX);
    assert_int_equal(replication_quorum_snapshot(n->q, out), 0);
    assert_true(out->size > 40);
}

static void assert_same(struct node *a, struct node *b)
{
    static char dump_a[DUMP_SIZE], dump_b[DUMP_SIZE];

    dump(a->db, dump_a);
    dump(b->db, dump_b);
    assert_string_equal(dump_a, dump_b);
    assert_int_equal(replication_quorum_applied_index(a->q),
                     replication_quorum_applied_index(b->q));
    assert_int_equal(replication_quorum_applied_term(a->q),
                     replication_quorum_applied_term(b->q));
}

/* A snapshot restored into an empty database: the same dump, the same
 * outcomes, and later entries apply alike (rowids go on the same). */
static void quorum_snapshot_restores_identical_state(void **state)
{
    struct common_buf snapshot, next;
    uint8_t id[16];
    uint64_t index = 0;
    int result = 1;
    struct node a, b;

    (void)state;
    node_make(&a);
    node_make(&b);
    build_state(&a);
    take_snapshot(&a, &snapshot);
    assert_int_equal(
        replication_quorum_restore(b.q, snapshot.data, snapshot.size), 0);
    assert_same(&a, &b);
    txn_id(id, 101);
    assert_int_equal(replication_quorum_txn_status(b.q, id, &index, &result),
                     0);
    assert_int_equal(index, 2);
    assert_int_equal(result, 0);
    /* The transaction table came along: a retry is a duplicate. */
    common_buf_init(&next, SIZE_MAX);
    assert_int_equal(
        node_execute(&a, "INSERT INTO t VALUES(77, 77)", 101, &next), 0);
    node_apply(&b, STATE_COUNT + 1, &next, 1, &result);
    assert_int_equal(result, REPLICATION_EDUPLICATE);
    node_apply(&a, STATE_COUNT + 1, &next, 1, &result);
    common_buf_truncate(&next, 0);
    assert_int_equal(node_execute(&a, "INSERT INTO r(a) VALUES(9)", 200, &next),
                     0);
    node_apply(&a, STATE_COUNT + 2, &next, 1, &result);
    assert_int_equal(result, 0);
    node_apply(&b, STATE_COUNT + 2, &next, 1, &result);
    assert_int_equal(result, 0);
    assert_same(&a, &b);
    node_reopen(&b);
    assert_same(&a, &b);
    common_buf_close(&next);
    common_buf_close(&snapshot);
    node_remove(&a);
    node_remove(&b);
}

/* A snapshot replaces whatever an older database held, and abandons what
 * it had in flight. */
static void quorum_snapshot_replaces_older_state(void **state)
{
    struct common_buf snapshot, set;
    struct node a, b;

    (void)state;
    node_make(&a);
    node_make(&b);
    build_state(&a);
    assert_int_equal(node_commit(&b, "CREATE TABLE only_b(x)", 1, NULL), 0);
    assert_int_equal(node_commit(&b, "INSERT INTO only_b VALUES(1)", 2, NULL),
                     0);
    common_buf_init(&set, SIZE_MAX);
    assert_int_equal(node_execute(&b, "INSERT INTO only_b VALUES(2)", 3, &set),
                     0);
    take_snapshot(&a, &snapshot);
    assert_int_equal(
        replication_quorum_restore(b.q, snapshot.data, snapshot.size), 0);
    assert_same(&a, &b);
    /* Nothing of b's remains in flight. */
    common_buf_truncate(&set, 0);
    assert_int_equal(node_execute(&b, "CREATE TABLE later(x)", 4, &set), 0);
    common_buf_close(&set);
    common_buf_close(&snapshot);
    node_remove(&a);
    node_remove(&b);
}

/* A snapshot at or below the applied index leaves the database alone. */
static void quorum_snapshot_older_is_kept_out(void **state)
{
    char before[DUMP_SIZE], after[DUMP_SIZE];
    struct common_buf old, current;
    struct node a, b;

    (void)state;
    node_make(&a);
    node_make(&b);
    build_state(&a);
    take_snapshot(&a, &old);
    assert_int_equal(node_commit(&a, "DELETE FROM t", 300, NULL), 0);
    take_snapshot(&a, &current);
    assert_int_equal(
        replication_quorum_restore(b.q, current.data, current.size), 0);
    dump(b.db, before);
    assert_int_equal(replication_quorum_restore(b.q, old.data, old.size), 0);
    assert_int_equal(
        replication_quorum_restore(b.q, current.data, current.size), 0);
    dump(b.db, after);
    assert_string_equal(before, after);
    assert_int_equal(replication_quorum_applied_index(b.q), STATE_COUNT + 1);
    assert_same(&a, &b);
    common_buf_close(&old);
    common_buf_close(&current);
    node_remove(&a);
    node_remove(&b);
}

static void assert_refused(struct node *b, const uint8_t *bytes, size_t size,
                           int expected)
{
    static char before[DUMP_SIZE], after[DUMP_SIZE];
    uint64_t index = replication_quorum_applied_index(b->q);

    dump(b->db, before);
    assert_int_equal(replication_quorum_restore(b->q, bytes, size), expected);
    dump(b->db, after);
    assert_string_equal(before, after);
    assert_int_equal(replication_quorum_applied_index(b->q), index);
}

/* Damaged, truncated, foreign bytes: refused, nothing changed. */
static void quorum_snapshot_damage_is_refused(void **state)
{
    struct common_buf snapshot;
    struct node a, b;
    uint8_t *copy;

    (void)state;
    node_make(&a);
    node_make(&b);
    build_state(&a);
    assert_int_equal(node_commit(&b, "CREATE TABLE mine(x)", 1, NULL), 0);
    take_snapshot(&a, &snapshot);
    copy = test_malloc(snapshot.size);
    for (size_t at = 0; at < snapshot.size; at += snapshot.size / 7 + 1) {
        memcpy(copy, snapshot.data, snapshot.size);
        copy[at] ^= 0x20;
        assert_refused(&b, copy, snapshot.size,
                       at >= 4 && at < 8 ? REPLICATION_EVERSION
                                         : REPLICATION_ECORRUPT);
    }
    assert_refused(&b, snapshot.data, snapshot.size - 1, REPLICATION_ECORRUPT);
    assert_refused(&b, snapshot.data, 20, REPLICATION_ECORRUPT);
    assert_refused(&b, NULL, 0, REPLICATION_ECORRUPT);
    assert_int_equal(
        query_int(b.db, "SELECT count(*) FROM sqlite_schema WHERE name='mine'"),
        1);
    test_free(copy);
    common_buf_close(&snapshot);
    node_remove(&a);
    node_remove(&b);
}

#define SNAPSHOT_TESTS                                                         \
    {                                                                          \
        cmocka_unit_test(quorum_snapshot_restores_identical_state),            \
            cmocka_unit_test(quorum_snapshot_replaces_older_state),            \
            cmocka_unit_test(quorum_snapshot_older_is_kept_out),               \
            cmocka_unit_test(quorum_snapshot_damage_is_refused),               \
    }

int main(void)
{
    const struct CMUnitTest full[] = SNAPSHOT_TESTS;
    const struct CMUnitTest off[] = SNAPSHOT_TESTS;
    int failed;

    failed = cmocka_run_group_tests_name("synchronous_full", full,
                                         synchronous_full, NULL);
    failed += cmocka_run_group_tests_name("synchronous_off", off,
                                          synchronous_off, NULL);
    return failed;
}
