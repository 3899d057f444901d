/* SPDX-License-Identifier: MIT
 *
 * test_store.c: the Raft store (consensus/src/store.h).
 *
 * Goal: what raft_io->load returns after a reopen is exactly what was made
 * durable (term, vote, entries' terms, types and bytes, the snapshot and
 * the start index), under every operation raft uses (bootstrap, recover,
 * append + sync, truncate, snapshot_put with and without trailing entries)
 * and across segment rotations; a torn tail is cut and the log goes on; any
 * other damage is refused with CONSENSUS_ECORRUPT, never a crash. Method:
 * each test works in a fresh temporary directory, closes and reopens the
 * store, and damages files by hand. Both heaps (sinew's and raft's) route to
 * cmocka's, so memory returned by load is freed the way raft frees it
 * (entryBatchesDestroy: each distinct batch once, then the array) and any
 * leak fails the test.
 */
#include "common_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

/* ------------------------------------------------------------------------
 * Fixture: a temporary directory and raft's heap on cmocka's.
 * ------------------------------------------------------------------------ */

static void *heap_malloc(void *data, size_t size)
{
    (void)data;
    return test_malloc(size);
}

static void heap_free(void *data, void *ptr)
{
    (void)data;
    test_free(ptr);
}

static void *heap_calloc(void *data, size_t count, size_t size)
{
    (void)data;
    return test_calloc(count, size);
}

static void *heap_realloc(void *data, void *ptr, size_t size)
{
    (void)data;
    return test_realloc(ptr, size);
}

static struct raft_heap raft_test_heap = {
    NULL, heap_malloc, heap_free, heap_calloc, heap_realloc, NULL, NULL,
};

static int group_setup(void **state)
{
    common_test_install();
    raft_heap_set(&raft_test_heap);
    (void)state;
    return 0;
}

static char test_dir[256];

static int dir_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");

    snprintf(test_dir, sizeof(test_dir), "%s/sinew-store-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    return mkdtemp(test_dir) == NULL ? -1 : 0;
}

static int dir_teardown(void **state)
{
    DIR *dir = opendir(test_dir);
    struct dirent *entry;

    (void)state;
    while (dir != NULL && (entry = readdir(dir)) != NULL) {
        char path[1024];

        if (entry->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", test_dir, entry->d_name);
            unlink(path);
        }
    }
    if (dir != NULL) {
        closedir(dir);
    }
    return rmdir(test_dir);
}

static struct consensus__store *store_open(void)
{
    struct consensus__store *s = NULL;

    assert_int_equal(consensus__store_open(test_dir, &s), 0);
    return s;
}

static struct consensus__store *store_reopen(struct consensus__store *s)
{
    consensus__store_close(s);
    return store_open();
}

/* ------------------------------------------------------------------------
 * Entries, configurations, loads.
 * ------------------------------------------------------------------------ */

static uint8_t pattern(raft_index index, size_t i)
{
    return (uint8_t)(index * 31 + i * 7 + (i >> 8));
}

/* An entry at index with size payload bytes (owned: free_entry()). */
static struct raft_entry make_entry(raft_index index, raft_term term,
                                    size_t size)
{
    struct raft_entry e = {0};

    e.term = term;
    e.type = index % 5 == 0 ? RAFT_BARRIER : RAFT_COMMAND;
    e.buf.len = size;
    e.buf.base = test_malloc(size == 0 ? 1 : size);
    for (size_t i = 0; i < size; i++) {
        ((uint8_t *)e.buf.base)[i] = pattern(index, i);
    }
    return e;
}

static size_t size_of(raft_index index)
{
    return (size_t)((index * 37) % 300);
}

static off_t size_off(raft_index index)
{
    return (off_t)size_of(index);
}

/* Appends entries first..last (term: term_of), sized by size_of. */
static void append_range(struct consensus__store *s, raft_index first,
                         raft_index last, raft_term term)
{
    for (raft_index i = first; i <= last; i++) {
        struct raft_entry e = make_entry(i, term, size_of(i));

        assert_int_equal(consensus__store_append(s, &e, 1), 0);
        test_free(e.buf.base);
    }
    assert_int_equal(consensus__store_last_index(s), last);
}

static void conf_make(struct raft_configuration *conf, unsigned n)
{
    raft_configuration_init(conf);
    for (unsigned i = 1; i <= n; i++) {
        char address[32];

        snprintf(address, sizeof(address), "10.0.0.%u:7000", i);
        assert_int_equal(raft_configuration_add(conf, i, address, RAFT_VOTER),
                         0);
    }
}

struct loaded {
    raft_term term;
    raft_id voted_for;
    struct raft_snapshot *snapshot;
    raft_index start_index;
    struct raft_entry *entries;
    size_t n;
};

static void snapshot_free(struct raft_snapshot *snapshot)
{
    if (snapshot != NULL) {
        raft_configuration_close(&snapshot->configuration);
        raft_free(snapshot->bufs[0].base);
        raft_free(snapshot->bufs);
        raft_free(snapshot);
    }
}

/* As raft_start and entryBatchesDestroy do. */
static void loaded_free(struct loaded *l)
{
    void *batch = NULL;

    for (size_t i = 0; i < l->n; i++) {
        assert_non_null(l->entries[i].batch);
        if (l->entries[i].batch != batch) {
            batch = l->entries[i].batch;
            raft_free(batch);
        }
    }
    raft_free(l->entries);
    snapshot_free(l->snapshot);
    memset(l, 0, sizeof(*l));
}

static void load(struct consensus__store *s, struct loaded *l)
{
    assert_int_equal(consensus__store_load(s, &l->term, &l->voted_for,
                                           &l->snapshot, &l->start_index,
                                           &l->entries, &l->n),
                     0);
    assert_true(l->n == 0 || l->entries != NULL);
}

/* The loaded entries are exactly first..last as append_range made them. */
static void check_range(const struct loaded *l, raft_index first,
                        raft_index last, raft_term term)
{
    assert_int_equal(l->start_index, first);
    assert_int_equal(l->n, last - first + 1);
    for (raft_index i = first; i <= last; i++) {
        const struct raft_entry *e = &l->entries[i - first];

        assert_int_equal(e->term, term);
        assert_int_equal(e->type, i % 5 == 0 ? RAFT_BARRIER : RAFT_COMMAND);
        assert_int_equal(e->buf.len, size_of(i));
        assert_int_equal((uintptr_t)e->buf.base % 8, 0);
        for (size_t j = 0; j < e->buf.len; j++) {
            assert_int_equal(((uint8_t *)e->buf.base)[j], pattern(i, j));
        }
    }
}

static void check_reload(struct consensus__store *s, raft_index first,
                         raft_index last, raft_term term)
{
    struct loaded l;

    load(s, &l);
    check_range(&l, first, last, term);
    loaded_free(&l);
}

/* ------------------------------------------------------------------------
 * Files by hand.
 * ------------------------------------------------------------------------ */

static void path_of(const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", test_dir, name);
}

/* The name of the n-th segment from the end (0: the last one); returns
 * how many segments there are. */
static unsigned segment_from_end(unsigned n, char *name)
{
    char names[64][32];
    unsigned count = 0;
    DIR *dir = opendir(test_dir);
    struct dirent *entry;

    assert_non_null(dir);
    while ((entry = readdir(dir)) != NULL && count < 64) {
        if (strncmp(entry->d_name, "log-", 4) == 0) {
            strcpy(names[count++], entry->d_name);
        }
    }
    closedir(dir);
    assert_true(count > n);
    qsort(names, count, sizeof(names[0]),
          (int (*)(const void *, const void *))strcmp);
    strcpy(name, names[count - 1 - n]);
    return count;
}

static off_t file_size(const char *name)
{
    char path[1024];
    struct stat st;

    path_of(name, path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void file_truncate(const char *name, off_t size)
{
    char path[1024];

    path_of(name, path, sizeof(path));
    assert_int_equal(truncate(path, size), 0);
}

static void file_flip(const char *name, off_t offset)
{
    char path[1024];
    uint8_t byte;
    int fd;

    path_of(name, path, sizeof(path));
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &byte, 1, offset), 1);
    byte ^= 0x5a;
    assert_int_equal(pwrite(fd, &byte, 1, offset), 1);
    close(fd);
}

static void file_write(const char *name, const void *data, size_t size)
{
    char path[1024];
    int fd;

    path_of(name, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    close(fd);
}

static void open_fails(int expected)
{
    struct consensus__store *s = NULL;

    assert_int_equal(consensus__store_open(test_dir, &s), expected);
    assert_null(s);
}

/* ------------------------------------------------------------------------
 * Tests: metadata, bootstrap, recover.
 * ------------------------------------------------------------------------ */

static void store_fresh_is_empty(void **state)
{
    struct consensus__store *s = store_open();
    struct loaded l;

    (void)state;
    load(s, &l);
    assert_int_equal(l.term, 0);
    assert_int_equal(l.voted_for, 0);
    assert_null(l.snapshot);
    assert_int_equal(l.start_index, 1);
    assert_null(l.entries);
    assert_int_equal(l.n, 0);
    assert_int_equal(consensus__store_last_index(s), 0);
    consensus__store_close(s);
}

static void store_bootstrap_reloads(void **state)
{
    struct consensus__store *s = store_open();
    struct raft_configuration conf;
    struct raft_configuration decoded;
    struct loaded l;

    (void)state;
    conf_make(&conf, 3);
    assert_int_equal(consensus__store_bootstrap(s, &conf), 0);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.term, 1);
    assert_int_equal(l.start_index, 1);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.entries[0].term, 1);
    assert_int_equal(l.entries[0].type, RAFT_CHANGE);
    assert_int_equal(raft_configuration_decode(&l.entries[0].buf, &decoded), 0);
    assert_int_equal(decoded.n, 3);
    assert_int_equal(decoded.servers[2].id, 3);
    assert_string_equal(decoded.servers[2].address, "10.0.0.3:7000");
    raft_configuration_close(&decoded);
    loaded_free(&l);
    assert_int_equal(consensus__store_bootstrap(s, &conf),
                     CONSENSUS_ECANTBOOTSTRAP);
    s = store_reopen(s);
    assert_int_equal(consensus__store_bootstrap(s, &conf),
                     CONSENSUS_ECANTBOOTSTRAP);
    raft_configuration_close(&conf);
    consensus__store_close(s);
}

static void store_term_and_vote_survive(void **state)
{
    struct consensus__store *s = store_open();
    struct loaded l;

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 7), 0);
    assert_int_equal(consensus__store_set_vote(s, 3), 0);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.term, 7);
    assert_int_equal(l.voted_for, 3);
    loaded_free(&l);
    /* A new term clears the vote, as src/uv.c's uvSetTerm. */
    assert_int_equal(consensus__store_set_term(s, 8), 0);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.term, 8);
    assert_int_equal(l.voted_for, 0);
    loaded_free(&l);
    consensus__store_close(s);
}

static void store_recover_appends_configuration(void **state)
{
    struct consensus__store *s = store_open();
    struct raft_configuration conf;
    struct raft_configuration decoded;
    struct loaded l;

    (void)state;
    conf_make(&conf, 1);
    assert_int_equal(consensus__store_recover(s, &conf), CONSENSUS_ECONFIG);
    assert_int_equal(consensus__store_bootstrap(s, &conf), 0);
    append_range(s, 2, 4, 3);
    raft_configuration_close(&conf);
    conf_make(&conf, 2);
    assert_int_equal(consensus__store_recover(s, &conf), 0);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.entries[4].type, RAFT_CHANGE);
    assert_int_equal(l.entries[4].term, 3);
    assert_int_equal(raft_configuration_decode(&l.entries[4].buf, &decoded), 0);
    assert_int_equal(decoded.n, 2);
    raft_configuration_close(&decoded);
    raft_configuration_close(&conf);
    loaded_free(&l);
    consensus__store_close(s);
}

/* ------------------------------------------------------------------------
 * Tests: append, truncate, rotation.
 * ------------------------------------------------------------------------ */

static void store_append_reloads(void **state)
{
    struct consensus__store *s = store_open();
    struct raft_entry batch[3];

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 2), 0);
    append_range(s, 1, 40, 2);
    for (unsigned i = 0; i < 3; i++) {
        batch[i] = make_entry(41 + i, 2, size_of(41 + i));
    }
    assert_int_equal(consensus__store_append(s, batch, 3), 0);
    for (unsigned i = 0; i < 3; i++) {
        test_free(batch[i].buf.base);
    }
    assert_int_equal(consensus__store_sync(s), 0);
    check_reload(s, 1, 43, 2);
    s = store_reopen(s);
    assert_int_equal(consensus__store_last_index(s), 43);
    check_reload(s, 1, 43, 2);
    consensus__store_close(s);
}

static void store_truncate_then_append(void **state)
{
    struct consensus__store *s = store_open();

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 1), 0);
    consensus__store_set_segment_size(s, 2048);
    append_range(s, 1, 60, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    /* Past the end: nothing to do (raft calls it before every append). */
    assert_int_equal(consensus__store_truncate(s, 61), 0);
    assert_int_equal(consensus__store_truncate(s, 45), 0);
    assert_int_equal(consensus__store_last_index(s), 44);
    s = store_reopen(s);
    check_reload(s, 1, 44, 1);
    consensus__store_set_segment_size(s, 2048);
    append_range(s, 45, 50, 1);
    /* Back into an earlier segment, then on again. */
    assert_int_equal(consensus__store_truncate(s, 10), 0);
    append_range(s, 10, 20, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    check_reload(s, 1, 20, 1);
    assert_int_equal(consensus__store_truncate(s, 1), 0);
    s = store_reopen(s);
    check_reload(s, 1, 0, 1);
    append_range(s, 1, 3, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    check_reload(s, 1, 3, 1);
    consensus__store_close(s);
}

static void store_rotates_segments(void **state)
{
    struct consensus__store *s = store_open();
    char first[32];
    char last[32];

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 4), 0);
    consensus__store_set_segment_size(s, 4096);
    append_range(s, 1, 600, 4);
    assert_int_equal(consensus__store_sync(s), 0);
    segment_from_end(0, last);
    segment_from_end(10, first); /* at least 11 segments */
    assert_true(file_size(first) >= 4096);
    s = store_reopen(s);
    check_reload(s, 1, 600, 4);
    consensus__store_close(s);
}

static void store_large_entries(void **state)
{
    struct consensus__store *s = store_open();
    size_t sizes[3] = {(size_t)24 << 20, 100, (size_t)9 << 20};
    struct loaded l;

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 1), 0);
    for (unsigned i = 0; i < 3; i++) {
        struct raft_entry e = make_entry(i + 1, 1, sizes[i]);

        assert_int_equal(consensus__store_append(s, &e, 1), 0);
        test_free(e.buf.base);
    }
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.n, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(l.entries[i].buf.len, sizes[i]);
        for (size_t j = 0; j < sizes[i]; j += 4099) {
            assert_int_equal(((uint8_t *)l.entries[i].buf.base)[j],
                             pattern(i + 1, j));
        }
    }
    loaded_free(&l);
    consensus__store_close(s);
}

/* ------------------------------------------------------------------------
 * Tests: snapshots.
 * ------------------------------------------------------------------------ */

/* Puts a snapshot at index whose data (size bytes, in two buffers) follows
 * pattern(index, ...). */
static void put_snapshot(struct consensus__store *s, unsigned trailing,
                         raft_index index, raft_term term, size_t size)
{
    struct raft_snapshot snapshot = {0};
    struct raft_buffer bufs[2];
    uint8_t *data = test_malloc(size == 0 ? 1 : size);

    for (size_t i = 0; i < size; i++) {
        data[i] = pattern(index, i);
    }
    bufs[0].base = data;
    bufs[0].len = size / 3;
    bufs[1].base = data + size / 3;
    bufs[1].len = size - size / 3;
    snapshot.index = index;
    snapshot.term = term;
    conf_make(&snapshot.configuration, 2);
    snapshot.configuration_index = 1;
    snapshot.bufs = bufs;
    snapshot.n_bufs = 2;
    assert_int_equal(consensus__store_snapshot_put(s, trailing, &snapshot), 0);
    raft_configuration_close(&snapshot.configuration);
    test_free(data);
}

static void check_snapshot(const struct raft_snapshot *snapshot,
                           raft_index index, raft_term term, size_t size)
{
    assert_non_null(snapshot);
    assert_int_equal(snapshot->index, index);
    assert_int_equal(snapshot->term, term);
    assert_int_equal(snapshot->configuration_index, 1);
    assert_int_equal(snapshot->configuration.n, 2);
    assert_int_equal(snapshot->n_bufs, 1);
    assert_int_equal(snapshot->bufs[0].len, size);
    for (size_t i = 0; i < size; i++) {
        assert_int_equal(((uint8_t *)snapshot->bufs[0].base)[i],
                         pattern(index, i));
    }
}

static void store_snapshot_keeps_trailing(void **state)
{
    struct consensus__store *s = store_open();
    char name[32];
    unsigned count;
    struct loaded l;

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 2), 0);
    consensus__store_set_segment_size(s, 2048);
    append_range(s, 1, 300, 2);
    /* Trailing 50 at 200: entries 151..300 stay, exactly. */
    put_snapshot(s, 50, 200, 2, (size_t)3 << 20);
    check_reload(s, 151, 300, 2);
    s = store_reopen(s);
    load(s, &l);
    check_range(&l, 151, 300, 2);
    check_snapshot(l.snapshot, 200, 2, (size_t)3 << 20);
    loaded_free(&l);
    /* Whole segments below 151 are gone; the oldest kept one holds 151. */
    count = segment_from_end(0, name);
    segment_from_end(count - 1, name);
    assert_true(strcmp(name, "log-00000000000000000151") <= 0);
    segment_from_end(count - 2, name);
    assert_true(strcmp(name, "log-00000000000000000151") > 0);
    /* A later snapshot moves the start on; trailing beyond it keeps it. */
    put_snapshot(s, 1000, 250, 2, 10);
    check_reload(s, 151, 300, 2);
    put_snapshot(s, 10, 290, 2, 10);
    append_range(s, 301, 310, 2);
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    check_reload(s, 281, 310, 2);
    consensus__store_close(s);
}

static void store_snapshot_installed_replaces_log(void **state)
{
    struct consensus__store *s = store_open();
    struct raft_snapshot *got = NULL;
    struct loaded l;

    (void)state;
    assert_int_equal(consensus__store_snapshot_get(s, &got), 0);
    assert_null(got);
    assert_int_equal(consensus__store_set_term(s, 3), 0);
    append_range(s, 1, 30, 3);
    /* Behind the leader's snapshot, with conflicting entries. */
    put_snapshot(s, 0, 1000, 5, 777);
    assert_int_equal(consensus__store_last_index(s), 1000);
    assert_int_equal(consensus__store_last_term(s), 5);
    s = store_reopen(s);
    load(s, &l);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.start_index, 1001);
    check_snapshot(l.snapshot, 1000, 5, 777);
    loaded_free(&l);
    assert_int_equal(consensus__store_snapshot_get(s, &got), 0);
    check_snapshot(got, 1000, 5, 777);
    snapshot_free(got);
    append_range(s, 1001, 1010, 5);
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    check_reload(s, 1001, 1010, 5);
    consensus__store_close(s);
}

/* A crash after the snapshot was renamed into place but before the old
 * segments went: open finishes the deletion. Made by putting the old
 * segment file back. */
static void store_snapshot_rolls_forward(void **state)
{
    struct consensus__store *s = store_open();
    char path[1024];
    char copy[1024];
    char name[32];

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 1), 0);
    consensus__store_set_segment_size(s, 1024);
    append_range(s, 1, 100, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    segment_from_end(4, name);
    path_of(name, path, sizeof(path));
    snprintf(copy, sizeof(copy), "%s/keep", test_dir);
    assert_int_equal(link(path, copy), 0);
    put_snapshot(s, 0, 100, 1, 5);
    consensus__store_close(s);
    assert_int_equal(rename(copy, path), 0);
    file_write("snapshot.tmp", "x", 1);
    s = store_open();
    check_reload(s, 101, 100, 1);
    consensus__store_close(s);
    assert_int_equal(access(path, F_OK), -1);
    path_of("snapshot.tmp", path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
}

/* ------------------------------------------------------------------------
 * Tests: torn tails and damage.
 * ------------------------------------------------------------------------ */

/* Entries 1..last at term 1, synced, in segments of segment_size. */
static void make_log(raft_index last, uint64_t segment_size)
{
    struct consensus__store *s = store_open();

    assert_int_equal(consensus__store_set_term(s, 1), 0);
    consensus__store_set_segment_size(s, segment_size);
    append_range(s, 1, last, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    consensus__store_close(s);
}

static void store_torn_tail_is_cut(void **state)
{
    struct consensus__store *s;
    char name[32];
    off_t size;

    (void)state;
    make_log(50, 2048);
    segment_from_end(0, name);
    size = file_size(name);
    /* Entry 50 (size_of(50) = 50 bytes of payload) loses its last 10. */
    file_truncate(name, size - 10);
    s = store_open();
    assert_int_equal(file_size(name), size - 90);
    check_reload(s, 1, 49, 1);
    append_range(s, 50, 52, 1);
    assert_int_equal(consensus__store_sync(s), 0);
    s = store_reopen(s);
    check_reload(s, 1, 52, 1);
    consensus__store_close(s);
    /* Only part of a header left (52 may have started a segment). */
    segment_from_end(0, name);
    file_truncate(name, file_size(name) - size_off(52) - 20);
    s = store_open();
    check_reload(s, 1, 51, 1);
    consensus__store_close(s);
}

static void store_flipped_last_record_is_cut(void **state)
{
    struct consensus__store *s;
    char name[32];

    (void)state;
    make_log(50, 1 << 20); /* one segment */
    segment_from_end(0, name);
    file_flip(name, file_size(name) - 3); /* entry 50's payload */
    s = store_open();
    check_reload(s, 1, 49, 1);
    consensus__store_close(s);
    file_flip(name, file_size(name) - size_off(49) - 30); /* 49's header */
    s = store_open();
    check_reload(s, 1, 48, 1);
    consensus__store_close(s);
}

static void store_damage_before_valid_record_fails(void **state)
{
    char name[32];

    (void)state;
    make_log(50, 1 << 20); /* one segment */
    segment_from_end(0, name);
    /* The payload of the second-to-last record: entry 50 follows. */
    file_flip(name, file_size(name) - size_off(50) - 40 - 2);
    open_fails(CONSENSUS_ECORRUPT);
    file_flip(name, file_size(name) - size_off(50) - 40 - 2);
    /* A header (its size field), with entries after it. */
    file_flip(name, file_size(name) - size_off(50) - 40 - size_off(49) - 20);
    open_fails(CONSENSUS_ECORRUPT);
}

static void store_damage_in_older_segment_fails(void **state)
{
    char name[32];

    (void)state;
    make_log(200, 2048);
    segment_from_end(2, name);
    file_flip(name, 20); /* a segment header */
    open_fails(CONSENSUS_ECORRUPT);
    file_flip(name, 20);
    segment_from_end(1, name);
    file_truncate(name, file_size(name) - 1); /* a torn tail, not the last */
    open_fails(CONSENSUS_ECORRUPT);
}

static void store_bad_metadata_fails(void **state)
{
    char bytes[48] = "garbage";
    char path[1024];

    (void)state;
    make_log(3, 2048);
    file_write("metadata", bytes, 10);
    open_fails(CONSENSUS_ECORRUPT);
    file_write("metadata", bytes, 40);
    open_fails(CONSENSUS_ECORRUPT);
    file_write("metadata", bytes, 48);
    open_fails(CONSENSUS_ECORRUPT);
    file_write("metadata", bytes, 0);
    open_fails(CONSENSUS_ECORRUPT);
    /* Missing metadata with a log: term 0 would make raft assert. */
    path_of("metadata", path, sizeof(path));
    assert_int_equal(unlink(path), 0);
    open_fails(CONSENSUS_ECORRUPT);
}

/* The whole file (test_malloc'd) and its size. */
static uint8_t *file_read(const char *name, size_t *size)
{
    char path[1024];
    uint8_t *data;
    int fd;

    *size = (size_t)file_size(name);
    data = test_malloc(*size);
    path_of(name, path, sizeof(path));
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, data, *size), (ssize_t)*size);
    close(fd);
    return data;
}

static void store_bad_snapshot_fails(void **state)
{
    struct consensus__store *s = store_open();
    uint8_t garbage[100] = {1, 2, 3};
    struct raft_snapshot *got = NULL;
    struct loaded l;
    uint8_t *good;
    size_t size;

    (void)state;
    assert_int_equal(consensus__store_set_term(s, 1), 0);
    append_range(s, 1, 10, 1);
    put_snapshot(s, 2, 10, 1, 5000);
    consensus__store_close(s);
    good = file_read("snapshot", &size);
    file_truncate("snapshot", 50);
    open_fails(CONSENSUS_ECORRUPT);
    file_write("snapshot", good, size - 1);
    open_fails(CONSENSUS_ECORRUPT);
    file_write("snapshot", garbage, sizeof(garbage));
    open_fails(CONSENSUS_ECORRUPT);
    file_write("snapshot", good, size);
    file_flip("snapshot", 100); /* the configuration */
    open_fails(CONSENSUS_ECORRUPT);
    file_write("snapshot", good, size);
    file_flip("snapshot", 30); /* the header */
    open_fails(CONSENSUS_ECORRUPT);
    file_write("snapshot", good, size);
    file_flip("snapshot", 3000); /* the data: found when read */
    s = store_open();
    assert_int_equal(consensus__store_load(s, &l.term, &l.voted_for,
                                           &l.snapshot, &l.start_index,
                                           &l.entries, &l.n),
                     CONSENSUS_ECORRUPT);
    assert_int_equal(consensus__store_snapshot_get(s, &got),
                     CONSENSUS_ECORRUPT);
    consensus__store_close(s);
    file_write("snapshot", good, size);
    s = store_open();
    load(s, &l);
    check_range(&l, 9, 10, 1);
    check_snapshot(l.snapshot, 10, 1, 5000);
    loaded_free(&l);
    consensus__store_close(s);
    test_free(good);
}

/* ------------------------------------------------------------------------
 * The disk hooks (consensus_io_hooks_set): every write and sync of the
 * store goes through them, and a failing sync fails the store's sync.
 * ------------------------------------------------------------------------ */

struct io_counts {
    unsigned writes, syncs, data_syncs;
    bool fail_sync;
};

static long counting_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                            int64_t offset)
{
    struct io_counts *counts = ctx;

    counts->writes++;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int counting_fsync(void *ctx, int fd, bool data_only)
{
    struct io_counts *counts = ctx;

    if (counts->fail_sync) {
        errno = EIO;
        return -1;
    }
    if (data_only) {
        counts->data_syncs++;
        return fdatasync(fd);
    }
    counts->syncs++;
    return fsync(fd);
}

static void store_io_goes_through_hooks(void **state)
{
    struct io_counts counts = {0};
    const struct consensus_io_hooks hooks = {
        .pwrite = counting_pwrite, .fsync = counting_fsync, .ctx = &counts};
    struct consensus__store *s;
    struct loaded l;

    (void)state;
    consensus_io_hooks_set(&hooks);
    s = store_open();
    assert_int_equal(consensus__store_set_term(s, 3), 0);
    unsigned metadata_writes = counts.writes;
    assert_true(metadata_writes > 0);
    assert_true(counts.syncs + counts.data_syncs > 0);
    append_range(s, 1, 4, 3);
    unsigned syncs = counts.syncs + counts.data_syncs;
    assert_int_equal(consensus__store_sync(s), 0);
    assert_true(counts.writes > metadata_writes);
    assert_true(counts.syncs + counts.data_syncs > syncs);
    append_range(s, 5, 5, 3);
    counts.fail_sync = true;
    assert_int_equal(consensus__store_sync(s), CONSENSUS_EIO);
    counts.fail_sync = false;
    consensus__store_close(s);
    consensus_io_hooks_set(NULL);
    /* What was synced before the failure is there. */
    s = store_open();
    load(s, &l);
    assert_true(l.n >= 4);
    loaded_free(&l);
    consensus__store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, dir_setup, dir_teardown)
        T(store_fresh_is_empty),
        T(store_bootstrap_reloads),
        T(store_term_and_vote_survive),
        T(store_recover_appends_configuration),
        T(store_append_reloads),
        T(store_truncate_then_append),
        T(store_rotates_segments),
        T(store_large_entries),
        T(store_snapshot_keeps_trailing),
        T(store_snapshot_installed_replaces_log),
        T(store_snapshot_rolls_forward),
        T(store_torn_tail_is_cut),
        T(store_flipped_last_record_is_cut),
        T(store_damage_before_valid_record_fails),
        T(store_damage_in_older_segment_fails),
        T(store_bad_metadata_fails),
        T(store_bad_snapshot_fails),
        T(store_io_goes_through_hooks),
#undef T
    };

    return cmocka_run_group_tests(tests, group_setup, NULL);
}
