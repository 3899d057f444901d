/* SPDX-License-Identifier: MIT
 *
 * test_quorum.c: quorum mode's state machine (replication.h, "quorum
 * mode"): execute captures without committing, apply commits in log order
 * exactly once (also across reopen), conflicts among in-flight sets,
 * deterministic per-set failures, refused direct writes, the failover
 * guard on stale bases, and transaction status.
 *
 * Method: nodes are engine databases in files under $TMPDIR; SQL goes
 * through execute and apply as consensus would drive them, and replicas
 * are compared by full dumps (schema, rows with rowids and storage
 * classes). Every test runs twice, with PRAGMA synchronous FULL and OFF.
 */
#include "test_quorum_util.h"

#define SCHEMA_SQL "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)"

/* Execute leaves nothing visible, to this handle or another one; apply
 * makes it visible and moves the applied index. */
static void quorum_execute_is_invisible_until_applied(void **state)
{
    struct node n;
    struct engine_db *other;
    struct common_buf set;
    int result = 1;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    assert_int_equal(replication_quorum_applied_index(n.q), 1);
    assert_int_equal(replication_quorum_applied_term(n.q), 1);
    assert_int_equal(engine_open(n.path, &other), 0);
    common_buf_init(&set, SIZE_MAX);
    assert_int_equal(
        node_execute(&n, "INSERT INTO t VALUES(1, 'a'), (2, 'b')", 2, &set), 0);
    assert_true(set.size > 0);
    assert_false(engine_in_transaction(n.db));
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 0);
    assert_int_equal(query_int(other, "SELECT count(*) FROM t"), 0);
    node_apply(&n, 2, &set, 1, &result);
    assert_int_equal(result, 0);
    assert_int_equal(replication_quorum_applied_index(n.q), 2);
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 2);
    assert_int_equal(query_int(other, "SELECT count(*) FROM t"), 2);
    common_buf_close(&set);
    engine_close(other);
    node_remove(&n);
}

/* The same entry twice, also after a reopen, and the same transaction id
 * in a later entry, apply once. */
static void quorum_apply_is_idempotent(void **state)
{
    struct node n;
    struct common_buf set;
    int result = 0;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    assert_int_equal(node_commit(&n, "INSERT INTO t VALUES(1, 'a')", 2, &set),
                     0);
    node_apply(&n, 2, &set, 1, &result);
    assert_int_equal(result, REPLICATION_EDUPLICATE);
    node_reopen(&n);
    assert_int_equal(replication_quorum_applied_index(n.q), 2);
    result = 0;
    node_apply(&n, 2, &set, 1, &result);
    assert_int_equal(result, REPLICATION_EDUPLICATE);
    node_apply(&n, 1, &set, 1, &result);
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 1);
    /* A client's retry of the same transaction in a new entry. */
    result = 0;
    node_apply(&n, 3, &set, 1, &result);
    assert_int_equal(result, REPLICATION_EDUPLICATE);
    assert_int_equal(replication_quorum_applied_index(n.q), 3);
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 1);
    common_buf_close(&set);
    node_remove(&n);
}

/* Rows written by a set in flight are refused to other executes until it
 * is applied or abandoned; other rows are free. */
static void quorum_execute_detects_row_conflicts(void **state)
{
    struct common_buf a, b, c;
    uint8_t id[16];
    struct node n;
    int result = 1;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    assert_int_equal(node_commit(&n, "INSERT INTO t VALUES(1, 'a')", 2, NULL),
                     0);
    common_buf_init(&a, SIZE_MAX);
    common_buf_init(&b, SIZE_MAX);
    common_buf_init(&c, SIZE_MAX);
    assert_int_equal(
        node_execute(&n, "UPDATE t SET v = 'x' WHERE k = 1", 3, &a), 0);
    assert_int_equal(node_execute(&n, "DELETE FROM t WHERE k = 1", 4, &b),
                     REPLICATION_ECONFLICT);
    assert_int_equal(b.size, 0);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(2, 'b')", 5, &b),
                     0);
    /* The same transaction id twice in flight. */
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(9, 'z')", 5, &c),
                     REPLICATION_EDUPLICATE);
    node_apply(&n, 3, &a, 1, &result);
    assert_int_equal(result, 0);
    assert_int_equal(node_execute(&n, "DELETE FROM t WHERE k = 1", 6, &c), 0);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(2, 'y')", 7, &a),
                     REPLICATION_ECONFLICT);
    txn_id(id, 5);
    replication_quorum_abandon(n.q, id);
    common_buf_truncate(&a, 0);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(2, 'c')", 7, &a),
                     0);
    common_buf_close(&a);
    common_buf_close(&b);
    common_buf_close(&c);
    node_remove(&n);
}

/* A schema change conflicts with everything in flight, and everything
 * with a schema change in flight. */
static void quorum_execute_schema_conflicts_with_all(void **state)
{
    struct common_buf a, b;
    struct node n;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    common_buf_init(&a, SIZE_MAX);
    common_buf_init(&b, SIZE_MAX);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(1, 'a')", 2, &a),
                     0);
    assert_int_equal(node_execute(&n, "CREATE TABLE u(x)", 3, &b),
                     REPLICATION_ECONFLICT);
    replication_quorum_abandon_all(n.q);
    assert_int_equal(node_execute(&n, "CREATE TABLE u(x)", 3, &b), 0);
    common_buf_truncate(&a, 0);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(1, 'a')", 2, &a),
                     REPLICATION_ECONFLICT);
    assert_int_equal(node_execute(&n, "SELECT * FROM t", 4, &a), 0);
    assert_int_equal(a.size, 0);
    common_buf_close(&a);
    common_buf_close(&b);
    node_remove(&n);
}

/* A read-only transaction gives an empty set and holds nothing. */
static void quorum_execute_read_only_gives_empty_set(void **state)
{
    struct common_buf set;
    struct node n;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    common_buf_init(&set, SIZE_MAX);
    assert_int_equal(node_execute(&n, "SELECT count(*) FROM t", 2, &set), 0);
    assert_int_equal(set.size, 0);
    assert_int_equal(node_execute(&n, "SELECT * FROM t WHERE k = 1", 2, &set),
                     0);
    assert_int_equal(set.size, 0);
    /* A failing transaction leaves nothing either. */
    assert_int_equal(node_execute(&n, "INSERT INTO nope VALUES(1)", 3, &set),
                     ENGINE_ESQL);
    assert_int_equal(set.size, 0);
    assert_false(engine_in_transaction(n.db));
    common_buf_close(&set);
    node_remove(&n);
}

/* Writes that do not go through execute are refused, rolled back. */
static void quorum_direct_writes_are_refused(void **state)
{
    struct node n;

    (void)state;
    node_make(&n);
    assert_int_equal(engine_exec(n.db, "CREATE TABLE x(a)", NULL, NULL),
                     REPLICATION_ENOTWRITER);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    assert_int_equal(
        engine_exec(n.db, "INSERT INTO t VALUES(1, 'a')", NULL, NULL),
        REPLICATION_ENOTWRITER);
    assert_int_equal(engine_exec(n.db,
                                 "BEGIN; INSERT INTO t VALUES(2, 'b');"
                                 " COMMIT",
                                 NULL, NULL),
                     REPLICATION_ENOTWRITER);
    assert_false(engine_in_transaction(n.db));
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 0);
    assert_int_equal(
        query_int(n.db, "SELECT count(*) FROM sqlite_schema WHERE name = 'x'"),
        0);
    node_remove(&n);
}

/* One entry, three sets: the second breaks a UNIQUE index the first
 * filled. It alone fails, everywhere alike. */
static void quorum_apply_failing_set_is_isolated(void **state)
{
    static const char *const inserts[] = {
        "INSERT INTO t VALUES(1, 'x')",
        "INSERT INTO t VALUES(2, 'x'); INSERT INTO t VALUES(4, 'w')",
        "INSERT INTO t VALUES(3, 'y')",
    };
    struct common_buf schema, sets[4];
    char dump_a[DUMP_SIZE], dump_b[DUMP_SIZE];
    int results[4] = {1, 1, 1, 1};
    struct node a, b;

    (void)state;
    node_make(&a);
    node_make(&b);
    assert_int_equal(node_commit(&a,
                                 "CREATE TABLE t(k INTEGER PRIMARY KEY, v);"
                                 " CREATE UNIQUE INDEX tv ON t(v)",
                                 1, &schema),
                     0);
    node_apply(&b, 1, &schema, 1, results);
    assert_int_equal(results[0], 0);
    for (size_t i = 0; i < 3; i++) {
        common_buf_init(&sets[i], SIZE_MAX);
        assert_int_equal(
            node_execute(&a, inserts[i], 10 + (unsigned)i, &sets[i]), 0);
    }
    /* Bytes that are no change set fail alone too. */
    common_buf_init(&sets[3], SIZE_MAX);
    assert_int_equal(common_buf_append(&sets[3], "garbage", 7), 0);
    node_apply(&a, 2, sets, 4, results);
    assert_int_equal(results[0], 0);
    assert_int_equal(results[1], ENGINE_ECONSTRAINT);
    assert_int_equal(results[2], 0);
    assert_int_equal(results[3], REPLICATION_EFORMAT);
    memset(results, 1, sizeof(results));
    node_apply(&b, 2, sets, 4, results);
    assert_int_equal(results[1], ENGINE_ECONSTRAINT);
    assert_int_equal(query_int(a.db, "SELECT count(*) FROM t"), 2);
    assert_int_equal(query_int(a.db, "SELECT count(*) FROM t WHERE k = 4"), 0);
    dump(a.db, dump_a);
    dump(b.db, dump_b);
    assert_string_equal(dump_a, dump_b);
    for (size_t i = 0; i < 4; i++) {
        common_buf_close(&sets[i]);
    }
    common_buf_close(&schema);
    node_remove(&a);
    node_remove(&b);
}

/* Outcomes are kept, across reopen; unknown ids are not found. */
static void quorum_txn_status_reports_outcomes(void **state)
{
    uint8_t id[16];
    uint64_t index = 0;
    int result = 1;
    struct node n;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n,
                                 "CREATE TABLE t(k INTEGER PRIMARY KEY, v"
                                 " NOT NULL)",
                                 1, NULL),
                     0);
    assert_int_equal(node_commit(&n, "INSERT INTO t VALUES(1, 'a')", 2, NULL),
                     0);
    txn_id(id, 2);
    assert_int_equal(replication_quorum_txn_status(n.q, id, &index, &result),
                     0);
    assert_int_equal(index, 2);
    assert_int_equal(result, 0);
    node_reopen(&n);
    index = 0;
    result = 1;
    assert_int_equal(replication_quorum_txn_status(n.q, id, &index, &result),
                     0);
    assert_int_equal(index, 2);
    assert_int_equal(result, 0);
    txn_id(id, 77);
    index = 5;
    assert_int_equal(replication_quorum_txn_status(n.q, id, &index, &result),
                     REPLICATION_ENOTFOUND);
    assert_int_equal(index, 5);
    node_remove(&n);
}

/* A set executed on a base older than an applied entry of an earlier term
 * (a new leader that executed before its barrier) is refused at apply;
 * pipelined sets of one term apply. */
static void quorum_apply_refuses_stale_base_across_terms(void **state)
{
    struct common_buf old_leader, a, b, stale;
    int result = 1;
    struct node n;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n, SCHEMA_SQL, 1, NULL), 0);
    assert_int_equal(node_commit(&n, "INSERT INTO t VALUES(1, 'a')", 2, NULL),
                     0);
    common_buf_init(&old_leader, SIZE_MAX);
    common_buf_init(&a, SIZE_MAX);
    common_buf_init(&b, SIZE_MAX);
    common_buf_init(&stale, SIZE_MAX);
    /* Term 1's leader: a set at base 2, committed as entry 3. */
    assert_int_equal(
        node_execute(&n, "UPDATE t SET v = 'old' WHERE k = 1", 3, &old_leader),
        0);
    replication_quorum_abandon_all(n.q); /* leadership lost */
    /* Term 2's leader executes on base 2 before applying entry 3. */
    assert_int_equal(
        node_execute(&n, "UPDATE t SET v = 'new' WHERE k = 1", 4, &stale), 0);
    node_apply(&n, 3, &old_leader, 1, &result);
    assert_int_equal(result, 0);
    n.term = 2;
    node_apply(&n, 4, &stale, 1, &result);
    assert_int_equal(result, REPLICATION_ECONFLICT);
    assert_int_equal(query_int(n.db, "SELECT v = 'old' FROM t WHERE k = 1"), 1);
    /* Two sets of term 2 executed on base 4, applied as 5 and 6. */
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(2, 'b')", 5, &a),
                     0);
    assert_int_equal(node_execute(&n, "INSERT INTO t VALUES(3, 'c')", 6, &b),
                     0);
    node_apply(&n, 5, &a, 1, &result);
    assert_int_equal(result, 0);
    node_apply(&n, 6, &b, 1, &result);
    assert_int_equal(result, 0);
    assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 3);
    common_buf_close(&old_leader);
    common_buf_close(&a);
    common_buf_close(&b);
    common_buf_close(&stale);
    node_remove(&n);
}

/* Updates, deletes, key changes and DDL in one transaction replay alike on
 * another node. */
static void quorum_apply_replays_mixed_transactions(void **state)
{
    char dump_a[DUMP_SIZE], dump_b[DUMP_SIZE];
    struct common_buf sets[3];
    int results[3];
    struct node a, b;

    (void)state;
    node_make(&a);
    node_make(&b);
    assert_int_equal(node_commit(&a,
                                 "CREATE TABLE p(id TEXT PRIMARY KEY, n, r);"
                                 " CREATE TABLE q(x, y);"
                                 " INSERT INTO p VALUES('a', 1, 1.5),"
                                 " ('b', 2, NULL); INSERT INTO q VALUES(1, 2),"
                                 " (3, x'00ff')",
                                 1, &sets[0]),
                     0);
    assert_int_equal(node_commit(&a,
                                 "UPDATE p SET n = n + 10 WHERE id = 'a';"
                                 " UPDATE p SET id = 'c' WHERE id = 'b';"
                                 " DELETE FROM q WHERE x = 1;"
                                 " INSERT INTO q VALUES(5, 'five');"
                                 " UPDATE q SET y = 6 WHERE x = 5;"
                                 " UPDATE q SET y = 7, x = 8 WHERE x = 5",
                                 2, &sets[1]),
                     0);
    assert_int_equal(node_commit(&a,
                                 "CREATE TABLE z(w); INSERT INTO z VALUES(1);"
                                 " DROP TABLE q",
                                 3, &sets[2]),
                     0);
    for (uint64_t i = 0; i < 3; i++) {
        node_apply(&b, i + 1, &sets[i], 1, &results[i]);
        assert_int_equal(results[i], 0);
        common_buf_close(&sets[i]);
    }
    dump(a.db, dump_a);
    dump(b.db, dump_b);
    assert_string_equal(dump_a, dump_b);
    assert_non_null(strstr(dump_a, "t:61 i:11 r:0x1.8p+0"));
    node_remove(&a);
    node_remove(&b);
}

#define QUORUM_TESTS                                                           \
    {                                                                          \
        cmocka_unit_test(quorum_execute_is_invisible_until_applied),           \
            cmocka_unit_test(quorum_apply_is_idempotent),                      \
            cmocka_unit_test(quorum_execute_detects_row_conflicts),            \
            cmocka_unit_test(quorum_execute_schema_conflicts_with_all),        \
            cmocka_unit_test(quorum_execute_read_only_gives_empty_set),        \
            cmocka_unit_test(quorum_direct_writes_are_refused),                \
            cmocka_unit_test(quorum_apply_failing_set_is_isolated),            \
            cmocka_unit_test(quorum_txn_status_reports_outcomes),              \
            cmocka_unit_test(quorum_apply_refuses_stale_base_across_terms),    \
            cmocka_unit_test(quorum_apply_replays_mixed_transactions),         \
    }

int main(void)
{
    const struct CMUnitTest full[] = QUORUM_TESTS;
    const struct CMUnitTest off[] = QUORUM_TESTS;
    int failed;

    failed = cmocka_run_group_tests_name("synchronous_full", full,
                                         synchronous_full, NULL);
    failed += cmocka_run_group_tests_name("synchronous_off", off,
                                          synchronous_off, NULL);
    return failed;
}
