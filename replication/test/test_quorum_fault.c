/* SPDX-License-Identifier: MIT
 *
 * test_quorum_fault.c: quorum mode when allocations fail (common.h's fault
 * heap): execute, apply, snapshot and restore each either succeed or fail
 * with an error, leaking nothing (cmocka's heap checks) and leaving the
 * database as it was: an entry applies whole or not at all, and a failed
 * apply (not deterministic) is reported, never turned into a set's result.
 *
 * Method: for n = 1, 2, ... the n-th allocation from the call on fails,
 * until a run needs fewer allocations than n.
 */
#include "test_quorum_util.h"

struct fault {
    struct common_heap_fault heap;
    struct common_heap saved;
};

static void fault_on(struct fault *f, uint64_t fail_at)
{
    struct common_heap heap;

    common_heap_get(&f->saved);
    common_heap_fault_init(&f->heap, fail_at, 1);
    heap = common_heap_fault_heap(&f->heap);
    common_heap_set(&heap);
}

/* Restores the heap; whether the fault was hit. */
static bool fault_off(struct fault *f)
{
    common_heap_set(&f->saved);
    return f->heap.failures > 0;
}

static void quorum_fault_execute_and_apply(void **state)
{
    struct common_buf set;
    struct fault f;
    struct node n;
    bool hit = true;
    int result;
    int rc;

    (void)state;
    node_make(&n);
    assert_int_equal(node_commit(&n,
                                 "CREATE TABLE t(k INTEGER PRIMARY KEY,"
                                 " v); CREATE UNIQUE INDEX tv ON t(v)",
                                 1, NULL),
                     0);
    for (uint64_t at = 1; hit; at++) {
        uint64_t index = replication_quorum_applied_index(n.q);
        const uint8_t *sets[1];
        size_t sizes[1];
        common_buf_init(&set, SIZE_MAX);
        fault_on(&f, at);
        rc = node_execute(&n, "INSERT INTO t VALUES(NULL, 'v')", (unsigned)at,
                          &set);
        if (rc == 0) {
            sets[0] = set.data;
            sizes[0] = set.size;
            result = 1;
            rc = replication_quorum_apply(n.q, index + 1, 1, sets, sizes, 1,
                                          &result);
        }
        hit = fault_off(&f);
        replication_quorum_abandon_all(n.q);
        common_buf_close(&set);
        assert_false(engine_in_transaction(n.db));
        if (rc == 0) {
            /* Applied whole: the row (once), the index, the outcome. */
            assert_int_equal(result, 0);
            assert_int_equal(replication_quorum_applied_index(n.q), index + 1);
            assert_int_equal(node_commit(&n, "DELETE FROM t", 5000, NULL), 0);
        } else {
            assert_int_equal(replication_quorum_applied_index(n.q), index);
        }
        assert_int_equal(query_int(n.db, "SELECT count(*) FROM t"), 0);
    }
    node_remove(&n);
}

static void quorum_fault_snapshot_and_restore(void **state)
{
    char before[DUMP_SIZE], after[DUMP_SIZE];
    struct common_buf snapshot;
    struct fault f;
    struct node a, b;
    bool hit = true;
    int rc;

    (void)state;
    node_make(&a);
    node_make(&b);
    assert_int_equal(node_commit(&a,
                                 "CREATE TABLE t(k INTEGER PRIMARY KEY,"
                                 " v); CREATE INDEX tv ON t(v);"
                                 " INSERT INTO t VALUES(1, 'a'), (2, 2.5)",
                                 1, NULL),
                     0);
    assert_int_equal(node_commit(&a, "INSERT INTO t VALUES(3, x'00')", 2, NULL),
                     0);
    assert_int_equal(node_commit(&b, "CREATE TABLE mine(x)", 1, NULL), 0);
    dump(b.db, before);
    for (uint64_t at = 1; hit; at++) {
        common_buf_init(&snapshot, SIZE_MAX);
        fault_on(&f, at);
        rc = replication_quorum_snapshot(a.q, &snapshot);
        hit = fault_off(&f);
        assert_true(rc == 0 || snapshot.size == 0);
        common_buf_close(&snapshot);
    }
    common_buf_init(&snapshot, SIZE_MAX);
    assert_int_equal(replication_quorum_snapshot(a.q, &snapshot), 0);
    hit = true;
    rc = -1;
    for (uint64_t at = 1; hit && rc != 0; at++) {
        fault_on(&f, at);
        rc = replication_quorum_restore(b.q, snapshot.data, snapshot.size);
        hit = fault_off(&f);
        if (rc != 0) {
            dump(b.db, after);
            assert_string_equal(before, after);
            assert_int_equal(replication_quorum_applied_index(b.q), 1);
        }
    }
    assert_int_equal(rc, 0);
    dump(a.db, before);
    dump(b.db, after);
    assert_string_equal(before, after);
    common_buf_close(&snapshot);
    node_remove(&a);
    node_remove(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quorum_fault_execute_and_apply),
        cmocka_unit_test(quorum_fault_snapshot_and_restore),
    };

    quorum_test_synchronous = "OFF";
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
