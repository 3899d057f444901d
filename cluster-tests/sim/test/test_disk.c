/* SPDX-License-Identifier: MIT
 *
 * test_disk.c: the simulator's simulated disk (src/disk.c; chaos-design.md
 * §3) on real files in a temp dir, driven the way the engine and consensus
 * drive it: every write and sync goes through their own I/O entry points
 * (engine__io_write/_sync, consensus__store_file_write_at/_fsync), which
 * call the hooks sim_disk_open installed. A crash is what sim_node_stop
 * does to the disk: sim_disk_freeze, then sim_disk_revert.
 *
 * Cases: a synced write survives a crash; unsynced writes are reverted
 * (content and size, a grown file and a new one); the torn "prefix" model
 * keeps W1..Wk and a 512-byte-aligned prefix of Wk+1 (k and the cut come
 * from the seed's disk stream, so each seed's outcome is checked against
 * every state the model allows, and the seeds together must reach a full
 * revert, a full keep and a torn cut); a frozen disk fails writes and syncs
 * with EIO and changes nothing; a crash leaves other nodes' writes alone;
 * a file deleted and a new one made after it (which a file system such as
 * ext4 gives the freed inode number) are two files: the new one belongs
 * to its own node and has only its own writes.
 */
#include "common_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_int.h"
#include "storage_int.h" /* engine__io_write, engine__io_sync */
#include "store.h" /* consensus__store_file_write_at, consensus__store_file_fsync */

#define TEST_NODES 2
#define TEST_SECTOR_BYTES 512

struct fixture {
    struct sim *sim;       /* owned */
    struct sim_disk *disk; /* owned */
};

/* ---- files ---- */

static void remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;

    if (dir == NULL) {
        (void)unlink(path);
        return;
    }
    while ((entry = readdir(dir)) != NULL) {
        char child[PATH_MAX];

        if (strcmp(entry->d_name, ".") == 0 ||
            strcmp(entry->d_name, "..") == 0) {
            continue;
        }
        snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
        remove_tree(child);
    }
    closedir(dir);
    assert_int_equal(rmdir(path), 0);
}

/* path of name in node's dir (node < 0: the run dir, owned by no node). */
static void file_path(const struct fixture *f, int node, const char *name,
                      char *out, size_t size)
{
    const char *dir = node < 0 ? f->sim->dir : f->sim->nodes[node].dir;

    snprintf(out, size, "%s/%s", dir, name);
}

/* Creates path with bytes, outside the hooks (durable, as an unhooked
 * create is in the model), and returns an O_RDWR fd on it. */
static int file_create(const char *path, const uint8_t *bytes, size_t size)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    if (size > 0) {
        assert_int_equal(pwrite(fd, bytes, size, 0), (ssize_t)size);
    }
    return fd;
}

/* Asserts path holds exactly size bytes equal to expected. */
static void file_expect(const char *path, const uint8_t *expected, size_t size)
{
    struct stat st;
    uint8_t *got;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, (off_t)size);
    got = test_malloc(size + 1);
    assert_int_equal(pread(fd, got, size, 0), (ssize_t)size);
    assert_memory_equal(got, expected, size);
    test_free(got);
    close(fd);
}

/* Whether path holds exactly size bytes equal to expected. */
static bool file_equals(const char *path, const uint8_t *expected, size_t size)
{
    struct stat st;
    uint8_t *got;
    bool equal;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    equal = st.st_size == (off_t)size;
    if (equal && size > 0) {
        got = test_malloc(size);
        assert_int_equal(pread(fd, got, size, 0), (ssize_t)size);
        equal = memcmp(got, expected, size) == 0;
        test_free(got);
    }
    close(fd);
    return equal;
}

/* ---- the sim: what sim.c's open_sim and init_nodes set up for the disk */

/* The canonical path of directory path (as /proc/self/fd names it). */
static void canonical(const char *path, char *out, size_t size)
{
    char link[64];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    assert_true(fd >= 0);
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, out, size - 1);
    assert_true(n > 0);
    out[n] = '\0';
    close(fd);
}

static void fixture_open(struct fixture *f, uint64_t seed, enum sim_torn torn)
{
    const char *tmp = getenv("TMPDIR");
    char made[sizeof(f->sim->dir)];
    char real[PATH_MAX];

    f->sim = test_calloc(1, sizeof(*f->sim));
    assert_non_null(f->sim);
    f->sim->config.nodes = TEST_NODES;
    f->sim->config.torn = torn;
    sim_rng_split(seed, f->sim->rng);
    snprintf(made, sizeof(made), "%s/sinew-simdisk-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(made));
    /* The disk names a file's owner by the path /proc/self/fd gives, which
     * is canonical: a TMPDIR through a symlink would own nothing. */
    canonical(made, real, sizeof(real));
    assert_true(strlen(real) < sizeof(f->sim->dir));
    memcpy(f->sim->dir, real, strlen(real) + 1);
    for (unsigned i = 0; i < TEST_NODES; i++) {
        struct sim_node *node = &f->sim->nodes[i];

        node->sim = f->sim;
        node->index = i;
        /* real is shorter than sim->dir (asserted above): the bound only
         * tells gcc the path fits. */
        snprintf(node->dir, sizeof(node->dir), "%.400s/n%u", real, i);
        assert_int_equal(mkdir(node->dir, 0700), 0);
    }
    assert_int_equal(sim_disk_open(f->sim, &f->disk), 0);
}

static void fixture_close(struct fixture *f)
{
    sim_disk_close(f->disk);
    remove_tree(f->sim->dir);
    test_free(f->sim);
    f->sim = NULL;
    f->disk = NULL;
}

/* A crash of node, as sim_node_stop(crash) does it to the disk. */
static void crash(struct fixture *f, unsigned node)
{
    sim_disk_freeze(f->disk, node);
    sim_disk_revert(f->disk, node);
}

static void fill(uint8_t *bytes, size_t size, uint8_t seed)
{
    for (size_t i = 0; i < size; i++) {
        bytes[i] = (uint8_t)(seed + i * 7 + i / 251);
    }
}

/* ---- (1) synced writes survive ---- */

static void test_synced_write_survives_crash(void **state)
{
    struct fixture fixture = {0};
    struct fixture *f = &fixture;
    struct consensus__store store = {0};
    uint8_t image[3000], raft[1000];
    char db[PATH_MAX], segment[PATH_MAX];
    int db_fd, seg_fd;

    (void)state;
    fixture_open(f, 1, SIM_TORN_NONE);
    file_path(f, 0, "db", db, sizeof(db));
    file_path(f, 0, "segment", segment, sizeof(segment));
    fill(image, sizeof(image), 1);
    db_fd = file_create(db, image, 1000);
    seg_fd = file_create(segment, NULL, 0);

    /* engine: overwrite and grow, then fsync */
    fill(image + 500, 2500, 2);
    assert_int_equal(engine__io_write(db_fd, image + 500, 2500, 500), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 2500);
    assert_int_equal(engine__io_sync(db_fd), 0);
    /* consensus: append, then fdatasync */
    fill(raft, sizeof(raft), 3);
    assert_int_equal(consensus__store_file_write_at(&store, seg_fd, "segment",
                                                    raft, sizeof(raft), 0),
                     0);
    assert_int_equal(consensus__store_file_fsync(seg_fd, true), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 0);

    crash(f, 0);
    file_expect(db, image, sizeof(image));
    file_expect(segment, raft, sizeof(raft));
    close(db_fd);
    close(seg_fd);
    fixture_close(f);
}

/* ---- (2) unsynced writes are reverted ---- */

static void test_unsynced_writes_reverted(void **state)
{
    struct fixture fixture = {0};
    struct fixture *f = &fixture;
    struct consensus__store store = {0};
    uint8_t pre[1000], synced[1200], bytes[5000];
    char db[PATH_MAX], fresh[PATH_MAX];
    int db_fd, fresh_fd;

    (void)state;
    fixture_open(f, 1, SIM_TORN_NONE);
    file_path(f, 0, "db", db, sizeof(db));
    file_path(f, 0, "fresh", fresh, sizeof(fresh));
    fill(pre, sizeof(pre), 10);
    db_fd = file_create(db, pre, sizeof(pre));
    fresh_fd = file_create(fresh, NULL, 0);

    /* A synced write first: the revert goes back to it, not further. */
    memcpy(synced, pre, sizeof(pre));
    fill(synced + 900, 300, 11);
    assert_int_equal(engine__io_write(db_fd, synced + 900, 300, 900), 0);
    assert_int_equal(engine__io_sync(db_fd), 0);

    /* Unsynced: an overwrite inside, one that grows the file, one past
     * its end (a hole), and the consensus hook's on a new file. */
    fill(bytes, sizeof(bytes), 12);
    assert_int_equal(engine__io_write(db_fd, bytes, 100, 50), 0);
    assert_int_equal(engine__io_write(db_fd, bytes + 100, 2000, 1000), 0);
    assert_int_equal(engine__io_write(db_fd, bytes + 2100, 700, 6000), 0);
    assert_int_equal(consensus__store_file_write_at(&store, fresh_fd, "fresh",
                                                    bytes, 1500, 0),
                     0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0),
                     100 + 2000 + 700 + 1500);
    assert_false(file_equals(db, synced, sizeof(synced)));

    crash(f, 0);
    file_expect(db, synced, sizeof(synced));
    file_expect(fresh, NULL, 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 0);

    /* The disk is unfrozen after the revert: writes land again. */
    assert_int_equal(engine__io_write(db_fd, bytes, 100, 0), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 100);
    close(db_fd);
    close(fresh_fd);
    fixture_close(f);
}

/* ---- (3) the torn "prefix" model ---- */

#define TORN_PRE_BYTES 700
#define TORN_WRITES 3
#define TORN_SEEDS 64

/* The unsynced writes of the torn test: W1 overwrites the tail of the
 * pre-image and grows the file; W2 and W3 append (a WAL's pattern). */
static const struct {
    uint64_t offset;
    size_t size;
} torn_writes[TORN_WRITES] = {{200, 1500}, {1700, 2000}, {3700, 1300}};

/* The file the model allows after keeping W1..Wk and `cut` bytes of
 * Wk+1: into out (5000 bytes), its size returned. */
static size_t torn_expected(const uint8_t *pre, const uint8_t *writes, size_t k,
                            size_t cut, uint8_t *out)
{
    size_t size = TORN_PRE_BYTES;
    size_t source = 0;

    memcpy(out, pre, TORN_PRE_BYTES);
    for (size_t i = 0; i <= k && i < TORN_WRITES; i++) {
        size_t n = i < k ? torn_writes[i].size : cut;
        size_t end = (size_t)torn_writes[i].offset + n;

        memcpy(out + torn_writes[i].offset, writes + source, n);
        if (end > size) {
            size = end;
        }
        source += torn_writes[i].size;
    }
    return size;
}

/* Runs one seed: returns the (k, cut) that the reverted file matches,
 * failing when it matches none the model allows. */
static void torn_one_seed(uint64_t seed, size_t *k_out, size_t *cut_out)
{
    struct fixture f = {0};
    uint8_t pre[TORN_PRE_BYTES], synced[TORN_PRE_BYTES], writes[4800];
    uint8_t expected[5000];
    char wal[PATH_MAX];
    size_t source = 0;
    int fd;

    fixture_open(&f, seed, SIM_TORN_PREFIX);
    file_path(&f, 0, "wal", wal, sizeof(wal));
    fill(pre, sizeof(pre), 20);
    fd = file_create(wal, pre, 600);
    /* A synced write is never torn away. */
    fill(pre + 600, 100, 21);
    assert_int_equal(engine__io_write(fd, pre + 600, 100, 600), 0);
    assert_int_equal(engine__io_sync(fd), 0);
    memcpy(synced, pre, sizeof(synced));
    fill(writes, sizeof(writes), (uint8_t)(22 + seed));
    for (size_t i = 0; i < TORN_WRITES; i++) {
        assert_int_equal(engine__io_write(fd, writes + source,
                                          torn_writes[i].size,
                                          torn_writes[i].offset),
                         0);
        source += torn_writes[i].size;
    }
    crash(&f, 0);

    *k_out = SIZE_MAX;
    for (size_t k = 0; k <= TORN_WRITES && *k_out == SIZE_MAX; k++) {
        size_t cuts = k < TORN_WRITES ? torn_writes[k].size : 1;

        for (size_t cut = 0; cut < cuts; cut += TEST_SECTOR_BYTES) {
            size_t size = torn_expected(synced, writes, k, cut, expected);

            if (file_equals(wal, expected, size)) {
                *k_out = k;
                *cut_out = cut;
                break;
            }
        }
    }
    if (*k_out == SIZE_MAX) {
        fail_msg("seed %" PRIu64 ": the reverted file is no state of the "
                 "torn prefix model",
                 seed);
    }
    assert_int_equal(sim_disk_unsynced_bytes(f.disk, 0), 0);
    close(fd);
    fixture_close(&f);
}

static void test_torn_prefix_model(void **state)
{
    bool all_reverted = false, all_kept = false, cut_inside = false;
    bool kept_some = false;

    (void)state;
    for (uint64_t seed = 1; seed <= TORN_SEEDS; seed++) {
        size_t k, cut;

        torn_one_seed(seed, &k, &cut);
        all_reverted |= k == 0 && cut == 0;
        all_kept |= k == TORN_WRITES;
        kept_some |= k > 0 && k < TORN_WRITES;
        cut_inside |= cut > 0;
    }
    /* The seeds reach every kind of outcome the model has. */
    assert_true(all_reverted);
    assert_true(all_kept);
    assert_true(kept_some);
    assert_true(cut_inside);
}

/* The same seed tears the same way (the run replays). */
static void test_torn_prefix_deterministic(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        size_t k1, cut1, k2, cut2;

        torn_one_seed(seed, &k1, &cut1);
        torn_one_seed(seed, &k2, &cut2);
        assert_int_equal(k1, k2);
        assert_int_equal(cut1, cut2);
    }
}

/* ---- (4) a frozen disk ---- */

static void test_frozen_disk_fails_with_eio(void **state)
{
    struct fixture fixture = {0};
    struct fixture *f = &fixture;
    struct consensus__store store = {0};
    uint8_t pre[800], written[800], bytes[600];
    char db[PATH_MAX], segment[PATH_MAX];
    int db_fd, seg_fd;

    (void)state;
    fixture_open(f, 1, SIM_TORN_NONE);
    file_path(f, 0, "db", db, sizeof(db));
    file_path(f, 0, "segment", segment, sizeof(segment));
    fill(pre, sizeof(pre), 30);
    db_fd = file_create(db, pre, sizeof(pre));
    seg_fd = file_create(segment, pre, sizeof(pre));
    /* One unsynced write before the crash begins. */
    memcpy(written, pre, sizeof(pre));
    fill(written + 100, 200, 31);
    assert_int_equal(engine__io_write(db_fd, written + 100, 200, 100), 0);

    sim_disk_freeze(f->disk, 0);
    fill(bytes, sizeof(bytes), 32);
    assert_int_equal(engine__io_write(db_fd, bytes, sizeof(bytes), 400), -EIO);
    assert_int_equal(engine__io_sync(db_fd), -EIO);
    assert_int_equal(consensus__store_file_write_at(&store, seg_fd, "segment",
                                                    bytes, sizeof(bytes), 700),
                     CONSENSUS_EIO);
    assert_non_null(strstr(store.errmsg, "segment"));
    errno = 0;
    assert_int_equal(consensus__store_file_fsync(seg_fd, false), -1);
    assert_int_equal(errno, EIO);
    /* Nothing changed: the files, and the unsynced write still pending
     * (the failed fsync did not make it durable). */
    file_expect(db, written, sizeof(written));
    file_expect(segment, pre, sizeof(pre));
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 200);

    sim_disk_revert(f->disk, 0);
    file_expect(db, pre, sizeof(pre));
    close(db_fd);
    close(seg_fd);
    fixture_close(f);
}

/* ---- (5) other nodes ---- */

static void test_crash_leaves_other_nodes_alone(void **state)
{
    struct fixture fixture = {0};
    struct fixture *f = &fixture;
    uint8_t pre[1000], written[1500], outside[300];
    char db0[PATH_MAX], db1[PATH_MAX], run[PATH_MAX];
    int fd0, fd1, run_fd;

    (void)state;
    fixture_open(f, 1, SIM_TORN_NONE);
    file_path(f, 0, "db", db0, sizeof(db0));
    file_path(f, 1, "db", db1, sizeof(db1));
    file_path(f, -1, "history", run, sizeof(run));
    fill(pre, sizeof(pre), 40);
    fd0 = file_create(db0, pre, sizeof(pre));
    fd1 = file_create(db1, pre, sizeof(pre));
    run_fd = file_create(run, NULL, 0);
    memcpy(written, pre, sizeof(pre));
    fill(written + 700, 800, 41);
    assert_int_equal(engine__io_write(fd0, written + 700, 800, 700), 0);
    assert_int_equal(engine__io_write(fd1, written + 700, 800, 700), 0);
    /* A file in no node's dir goes straight to disk, owned by none. */
    fill(outside, sizeof(outside), 42);
    assert_int_equal(engine__io_write(run_fd, outside, sizeof(outside), 0), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 1), 800);

    crash(f, 0);
    file_expect(db0, pre, sizeof(pre));
    file_expect(db1, written, sizeof(written));
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 1), 800);
    /* Node 1's write was unsynced all along: its own crash reverts it. */
    crash(f, 1);
    file_expect(db1, pre, sizeof(pre));
    file_expect(run, outside, sizeof(outside));
    close(fd0);
    close(fd1);
    close(run_fd);
    fixture_close(f);
}

/* ---- (6) a deleted file and the next new one ---- */

/* Node 0 writes a file (synced, then more unsynced) and deletes it; new
 * files then appear in node 1's dir and node 0's. Whatever inode numbers
 * the file system hands out, each new file is its own: a crash of node 0
 * leaves node 1's file alone, node 0's new file loses exactly its own
 * unsynced write, and the deleted file's writes count nowhere. */
static void test_deleted_file_never_confused_with_new(void **state)
{
    struct fixture fixture = {0};
    struct fixture *f = &fixture;
    uint8_t pre[600], bytes[900];
    char old[PATH_MAX], other[PATH_MAX], fresh[PATH_MAX];
    int old_fd, other_fd, fresh_fd;

    (void)state;
    fixture_open(f, 1, SIM_TORN_NONE);
    file_path(f, 0, "metadata.tmp", old, sizeof(old));
    file_path(f, 1, "metadata.tmp", other, sizeof(other));
    file_path(f, 0, "db-wal", fresh, sizeof(fresh));
    fill(pre, sizeof(pre), 50);
    fill(bytes, sizeof(bytes), 51);
    old_fd = file_create(old, NULL, 0);
    assert_int_equal(engine__io_write(old_fd, bytes, 300, 0), 0);
    assert_int_equal(engine__io_sync(old_fd), 0);
    assert_int_equal(engine__io_write(old_fd, bytes, 400, 300), 0);
    close(old_fd);
    assert_int_equal(unlink(old), 0);

    other_fd = file_create(other, pre, sizeof(pre));
    assert_int_equal(engine__io_write(other_fd, bytes, 200, 100), 0);
    fresh_fd = file_create(fresh, pre, sizeof(pre));
    assert_int_equal(engine__io_write(fresh_fd, bytes, 500, 400), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 500);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 1), 200);

    crash(f, 0);
    file_expect(fresh, pre, sizeof(pre));
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 0), 0);
    assert_int_equal(sim_disk_unsynced_bytes(f->disk, 1), 200);
    crash(f, 1);
    file_expect(other, pre, sizeof(pre));
    close(other_fd);
    close(fresh_fd);
    fixture_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synced_write_survives_crash),
        cmocka_unit_test(test_unsynced_writes_reverted),
        cmocka_unit_test(test_torn_prefix_model),
        cmocka_unit_test(test_torn_prefix_deterministic),
        cmocka_unit_test(test_frozen_disk_fails_with_eio),
        cmocka_unit_test(test_crash_leaves_other_nodes_alone),
        cmocka_unit_test(test_deleted_file_never_confused_with_new),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
