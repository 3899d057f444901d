/* SPDX-License-Identifier: MIT
 *
 * Goal: crdt.md §5 #19 over a network: a crash during a merge, or during a
 * local commit, leaves each transaction wholly there with its version
 * vector entry or not at all, and the cluster converges after the restart.
 *
 * Method: scenario.h's simulated cluster on file databases whose writes
 * fail from a chosen one on (the engine's I/O hooks: a torn write, then
 * nothing), then a restart without the fault; a first run counts the
 * writes, then the test crashes at each in turn.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "scenario.h"

/* ---- crashes ---- */

/* #19's disk. Writes to one node's files (its database and WAL) go through
 * until the crash, counted; the write the crash hits lands half (torn) and
 * fails, and every write after it fails too, so the files hold what a
 * crash at that point would leave, however long the node runs on. Other
 * nodes' files are not touched. (The cluster runs with synchronous = OFF:
 * writes, not fsyncs, are what reach the files.) */
struct crash_disk {
    char name[64]; /* "/<the cluster's directory>/n<i>.sinew" */
    long crash_at; /* writes let through before the crash; < 0: never */
    bool once;     /* only that write fails (ENOSPC): no crash */
    long writes;   /* writes to the node's files that went through */
    bool crashed;
};

static struct crash_disk disk;

static bool is_crash_node_file(int fd)
{
    char link[64], target[600];
    ssize_t size;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    size = readlink(link, target, sizeof(target) - 1);
    if (size <= 0) {
        return false;
    }
    target[size] = '\0';
    return strstr(target, disk.name) != NULL; /* the WAL's too */
}

static long crash_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                         int64_t offset)
{
    (void)ctx;
    if (disk.name[0] != '\0' && is_crash_node_file(fd)) {
        if (!disk.crashed && disk.crash_at >= 0 &&
            disk.writes == disk.crash_at) {
            if (size > 1) {
                (void)pwrite(fd, bytes, size / 2, (off_t)offset);
            }
            disk.crash_at = -1;
            disk.crashed = !disk.once;
            errno = disk.once ? ENOSPC : EIO;
            return -1;
        }
        if (disk.crashed) {
            errno = EIO;
            return -1;
        }
        disk.writes++;
    }
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int crash_fsync(void *ctx, int fd)
{
    (void)ctx;
    if (disk.crashed && is_crash_node_file(fd)) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}

/* Node i's files go on crash_disk, which crashes after crash_at writes
 * from now (< 0: counts them, never crashes); once: fails that write
 * only. */
static void crash_disk_arm(unsigned i, long crash_at, bool once)
{
    static const struct engine_io_hooks hooks = {crash_pwrite, crash_fsync,
                                                 NULL};
    const char *dir = strrchr(cl.dir, '/');

    assert_non_null(dir);
    memset(&disk, 0, sizeof(disk));
    snprintf(disk.name, sizeof(disk.name), "%s/n%u.sinew", dir, i);
    disk.crash_at = crash_at;
    disk.once = once;
    engine_io_hooks_set(&hooks);
}

static void crash_disk_disarm(void)
{
    engine_io_hooks_set(NULL);
    memset(&disk, 0, sizeof(disk));
}

/* Node i after a restart: the transaction that wrote rows '<prefix>...'
 * of t, version version of origin site_hex, is there whole with its
 * version-vector entry, or neither is. Returns whether it is there. */
static bool assert_whole_or_nothing(unsigned i, const char *prefix, int rows,
                                    const char *site_hex, uint64_t version)
{
    char sql[256];
    uint64_t count, head;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM t WHERE id LIKE '%s%%'",
             prefix);
    count = query_u64(i, sql);
    snprintf(sql, sizeof(sql),
             "SELECT coalesce((SELECT head FROM sinew_crdt_vv WHERE site ="
             " X'%s'), 0)",
             site_hex);
    head = query_u64(i, sql);
    if (count != 0 && count != (uint64_t)rows) {
        fail_msg("node %u: %" PRIu64 " of %d rows", i, count, rows);
    }
    if ((count != 0) != (head >= version)) {
        fail_msg("node %u: %" PRIu64 " rows, version vector head %" PRIu64, i,
                 count, head);
    }
    return count != 0;
}

/* One transaction of #19: rows rows 'tx<n>' into t, one statement. */
static void tx_sql(char *sql, size_t size, int rows)
{
    size_t used = (size_t)snprintf(sql, size, "INSERT INTO t(id, a) VALUES");
    int n;

    for (n = 0; n < rows; n++) {
        used += (size_t)snprintf(sql + used, size - used, "%s('tx%02d', %d)",
                                 n > 0 ? ", " : "", n, n);
        assert_true(used < size);
    }
}

#define CRASH_ROWS 20
static const char *const site0_hex = "11111111111111111111111111111111";
static const char *const site1_hex = "22222222222222222222222222222222";

/* #19 on the receiver: node 1 merges node 0's transaction of 20 rows,
 * then commits a row of its own; it crashes at each of its writes in turn
 * (a first run, without a crash, counts them), and restarts on what its
 * files hold: each transaction is there with its version-vector entry, or
 * neither is, and never the later without the earlier. The cluster then
 * converges with all of node 0's rows. The same with one failed write and
 * no crash: the merge fails cleanly, and is done again later. */
static void scenario_19_crash_during_apply(void **state)
{
    char sql[1024], expected[16];
    long crash_at, writes = 0;
    unsigned merged = 0, lost = 0;
    bool tx, own;

    (void)state;
    tx_sql(sql, sizeof(sql), CRASH_ROWS);
    for (crash_at = -1; crash_at < writes; crash_at++) {
        start_cluster(2, 191, true);
        crash_disk_arm(1, crash_at, false);
        cluster_exec(&cl, 0, sql);
        cluster_run(&cl, 50);
        (void)cluster_exec_rc(&cl, 1, "INSERT INTO t VALUES ('own', 1, 1, 1)");
        cluster_run(&cl, 50);
        cluster_stop(&cl, 1);
        if (crash_at < 0) {
            writes = disk.writes;
        } else {
            assert_true(disk.crashed);
        }
        crash_disk_disarm();
        cluster_start(&cl, 1);
        tx = assert_whole_or_nothing(1, "tx", CRASH_ROWS, site0_hex, 1);
        own = assert_whole_or_nothing(1, "own", 1, site1_hex, 1);
        assert_true(tx || !own);
        merged += tx && !own;
        lost += !tx;
        cluster_run(&cl, 1000);
        snprintf(expected, sizeof(expected), "%d", CRASH_ROWS + own);
        assert_everywhere("SELECT count(*) FROM t", expected);
        cluster_assert_converged(&cl);
        cluster_free(&cl);
    }
    assert_true(merged > 0 && lost > 0); /* crashes after and before */

    start_cluster(2, 192, true);
    crash_disk_arm(1, 0, true);
    cluster_exec(&cl, 0, sql);
    cluster_run(&cl, 50);
    assert_int_equal(disk.crash_at, -1); /* the write failed */
    crash_disk_disarm();
    assert_whole_or_nothing(1, "tx", CRASH_ROWS, site0_hex, 1);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT count(*) FROM t", "20");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

/* #19 on the writer: node 0 commits a transaction of 20 rows, then a row
 * more, and ships them; it crashes at each of its writes in turn, then
 * restarts: each transaction's rows, its local version and its
 * version-vector entry are all there or none, a commit that reported
 * failure is not there, and the cluster converges. With one failed write
 * and no crash, the commit fails cleanly, takes no version, and the next
 * commit replicates as version 1 (no gap for receivers to wait on). */
static void scenario_19_crash_during_local_commit(void **state)
{
    char sql[1024];
    long crash_at, writes = 0;
    int rc_tx, rc_next;
    bool tx, next;

    (void)state;
    tx_sql(sql, sizeof(sql), CRASH_ROWS);
    for (crash_at = -1; crash_at < writes; crash_at++) {
        start_cluster(2, 193, true);
        crash_disk_arm(0, crash_at, false);
        rc_tx = cluster_exec_rc(&cl, 0, sql);
        rc_next = cluster_exec_rc(&cl, 0,
                                  "INSERT INTO t VALUES ('next', 1, 1,"
                                  " 1)");
        cluster_run(&cl, 50);
        cluster_stop(&cl, 0);
        if (crash_at < 0) {
            writes = disk.writes;
            assert_int_equal(rc_tx, 0);
            assert_int_equal(rc_next, 0);
        }
        crash_disk_disarm();
        cluster_start(&cl, 0);
        tx = assert_whole_or_nothing(0, "tx", CRASH_ROWS, site0_hex, 1);
        next = assert_whole_or_nothing(0, "next", 1, site0_hex, 2);
        assert_true(tx || !next);
        assert_true(rc_tx == 0 || !tx);
        assert_true(rc_next == 0 || !next);
        assert_int_equal(local_version(0), (uint64_t)tx + next);
        cluster_run(&cl, 1000);
        assert_everywhere("SELECT count(*) FROM t",
                          tx ? (next ? "21" : "20") : "0");
        cluster_assert_converged(&cl);
        cluster_free(&cl);
    }

    start_cluster(2, 194, true);
    crash_disk_arm(0, 0, true);
    assert_int_not_equal(cluster_exec_rc(&cl, 0, sql), 0);
    crash_disk_disarm();
    assert_whole_or_nothing(0, "tx", CRASH_ROWS, site0_hex, 1);
    assert_int_equal(local_version(0), 0);
    cluster_exec(&cl, 0, "INSERT INTO t VALUES ('next', 1, 1, 1)");
    assert_int_equal(local_version(0), 1);
    cluster_run(&cl, 1000);
    assert_everywhere("SELECT id FROM t", "next");
    assert_everywhere("SELECT hex(site), head FROM sinew_crdt_vv",
                      "11111111111111111111111111111111|1");
    cluster_assert_converged(&cl);
    cluster_free(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_19_crash_during_apply),
        cmocka_unit_test(scenario_19_crash_during_local_commit),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
