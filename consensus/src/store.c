/* SPDX-License-Identifier: MIT
 *
 * store.c: the Raft store's entry points (store.h is the manual): opening
 * a directory, the metadata file (term and vote), and the raft_io
 * operations built from the log and snapshot files (store_log*.c,
 * store_snapshot.c): load, bootstrap, recover.
 *
 * The rules come from libraft 0.22.1: src/uv.c (bootstrap sets term 1 and
 * writes entry 1; set_term clears the vote; recover appends a configuration
 * entry with the last term) and src/raft.c's stepStart (term 0 means no
 * persisted state at all, which open enforces).
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char metadata_magic[8] = {'S', 'I', 'N', 'E', 'W', 'M', 'E', 'T'};

#define METADATA_NAME "metadata"

/* Scratch capacity reserved at open, so coalescing appends never allocate:
 * the flush threshold plus one coalesced record (store_log_write.c). */
#define SCRATCH_CAPACITY (((size_t)1 << 20) + ((size_t)64 << 10) + 64)

/* ------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------ */

static int metadata_store(struct consensus__store *s, raft_term term,
                          raft_id voted_for)
{
    uint8_t bytes[CONSENSUS__STORE_METADATA_SIZE];
    struct consensus__store_piece piece = {bytes, sizeof(bytes)};
    int rc;

    memcpy(bytes, metadata_magic, sizeof(metadata_magic));
    common_put_u64le(bytes + 8, CONSENSUS__STORE_FORMAT);
    common_put_u64le(bytes + 16, term);
    common_put_u64le(bytes + 24, voted_for);
    common_put_u64le(bytes + 32, common_checksum64(bytes, 32, 0));
    rc = consensus__store_file_replace(s, METADATA_NAME, &piece, 1);
    if (rc != 0) {
        s->failed = rc;
        return rc;
    }
    s->term = term;
    s->voted_for = voted_for;
    return 0;
}

static int metadata_load(struct consensus__store *s)
{
    uint8_t *bytes;
    size_t size;
    bool exists;
    int rc = consensus__store_file_read_all(s, METADATA_NAME,
                                            CONSENSUS__STORE_METADATA_SIZE,
                                            &bytes, &size, &exists);

    if (rc != 0 || !exists) {
        return rc;
    }
    if (size != CONSENSUS__STORE_METADATA_SIZE ||
        memcmp(bytes, metadata_magic, sizeof(metadata_magic)) != 0 ||
        common_get_u64le(bytes + 8) != CONSENSUS__STORE_FORMAT ||
        common_get_u64le(bytes + 32) != common_checksum64(bytes, 32, 0)) {
        rc = consensus__store_corrupt(s, "metadata: damaged (%zu bytes)", size);
    } else {
        s->term = common_get_u64le(bytes + 16);
        s->voted_for = common_get_u64le(bytes + 24);
    }
    common_free(bytes);
    return rc;
}

/* ------------------------------------------------------------------------
 * Open and close
 * ------------------------------------------------------------------------ */

static int dir_open(struct consensus__store *s, const char *dir)
{
    size_t size = strlen(dir) + 1;

    s->dir = common_malloc(size);
    if (s->dir == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(s->dir, dir, size);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        return consensus__store_file_fail(s, errno, "mkdir", dir);
    }
    s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dir_fd < 0) {
        return consensus__store_file_fail(s, errno, "open", dir);
    }
    return 0;
}

/* raft's stepStart asserts that term 0 comes with no log and no snapshot. */
static int state_check(struct consensus__store *s)
{
    if (s->term == 0 && (s->has_snapshot || s->entry_count > 0)) {
        return consensus__store_corrupt(
            s, "metadata: term 0 (or missing) but a log or snapshot exists");
    }
    return 0;
}

int consensus__store_open(const char *dir, struct consensus__store **out)
{
    struct consensus__store *s;
    raft_index stored_log_start = 1;
    int rc;

    ASSERT(dir != NULL);
    ASSERT(out != NULL);
    s = common_calloc(1, sizeof(*s));
    if (s == NULL) {
        return COMMON_ENOMEM;
    }
    s->dir_fd = -1;
    s->active_fd = -1;
    s->log_start = 1;
    s->segment_size_target = CONSENSUS__STORE_SEGMENT_SIZE_TARGET;
    common_buf_init(&s->scratch, SCRATCH_CAPACITY);
    rc = common_buf_reserve(&s->scratch, SCRATCH_CAPACITY);
    if (rc == 0) {
        rc = dir_open(s, dir);
    }
    if (rc == 0) {
        rc = metadata_load(s);
    }
    if (rc == 0) {
        rc = consensus__store_snapshot_open(s, &stored_log_start);
    }
    if (rc == 0) {
        rc = consensus__store_log_open(s, stored_log_start);
    }
    if (rc == 0) {
        rc = state_check(s);
    }
    if (rc != 0) {
        consensus__store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void consensus__store_close(struct consensus__store *s)
{
    if (s == NULL) {
        return;
    }
    consensus__store_log_close(s);
    if (s->dir_fd >= 0) {
        close(s->dir_fd);
    }
    common_buf_close(&s->scratch);
    common_free(s->dir);
    common_free(s);
}

/* ------------------------------------------------------------------------
 * raft_io operations
 * ------------------------------------------------------------------------ */

int consensus__store_load(struct consensus__store *s, raft_term *term,
                          raft_id *voted_for, struct raft_snapshot **snapshot,
                          raft_index *start_index, struct raft_entry **entries,
                          size_t *n_entries)
{
    struct raft_snapshot *loaded = NULL;
    int rc;

    ASSERT(s != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    rc = consensus__store_snapshot_get(s, &loaded);
    if (rc != 0) {
        return rc;
    }
    rc = consensus__store_log_load(s, entries, n_entries);
    if (rc != 0) {
        consensus__store_snapshot_destroy(loaded);
        return rc;
    }
    *term = s->term;
    *voted_for = s->voted_for;
    *snapshot = loaded;
    *start_index = s->log_start;
    return 0;
}

int consensus__store_set_term(struct consensus__store *s, raft_term term)
{
    ASSERT(s != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    return metadata_store(s, term, 0);
}

int consensus__store_set_vote(struct consensus__store *s, raft_id id)
{
    ASSERT(s != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    return metadata_store(s, s->term, id);
}

/* Appends one RAFT_CHANGE entry holding conf at term, and syncs. */
static int append_configuration(struct consensus__store *s,
                                const struct raft_configuration *conf,
                                raft_term term)
{
    struct raft_entry entry = {0};
    int rc;

    if (raft_configuration_encode(conf, &entry.buf) != 0) {
        return COMMON_ENOMEM; /* its only failure */
    }
    entry.term = term;
    entry.type = RAFT_CHANGE;
    entry.batch = entry.buf.base;
    rc = consensus__store_append(s, &entry, 1);
    raft_free(entry.buf.base);
    if (rc == 0) {
        rc = consensus__store_sync(s);
    }
    return rc;
}

int consensus__store_bootstrap(struct consensus__store *s,
                               const struct raft_configuration *conf)
{
    int rc;

    ASSERT(s != NULL);
    ASSERT(conf != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    if (s->term != 0) {
        return CONSENSUS_ECANTBOOTSTRAP;
    }
    /* Term 0 means pristine: open refuses anything else. */
    ASSERT(!s->has_snapshot);
    ASSERT(s->entry_count == 0);
    rc = consensus__store_set_term(s, 1);
    if (rc != 0) {
        return rc;
    }
    return append_configuration(s, conf, 1);
}

int consensus__store_recover(struct consensus__store *s,
                             const struct raft_configuration *conf)
{
    raft_term last_term;

    ASSERT(s != NULL);
    ASSERT(conf != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    last_term = consensus__store_last_term(s);
    if (last_term == 0) {
        return CONSENSUS_ECONFIG;
    }
    return append_configuration(s, conf, last_term);
}

int consensus__store_append(struct consensus__store *s,
                            const struct raft_entry *entries, unsigned n)
{
    ASSERT(s != NULL);
    ASSERT(entries != NULL);
    ASSERT(n >= 1);
    if (s->failed != 0) {
        return s->failed;
    }
    return consensus__store_log_append(s, entries, n);
}

int consensus__store_sync(struct consensus__store *s)
{
    int rc;

    ASSERT(s != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    rc = consensus__store_log_sync(s);
    if (rc != 0) {
        s->failed = rc;
    }
    return rc;
}

int consensus__store_truncate(struct consensus__store *s, raft_index index)
{
    ASSERT(s != NULL);
    ASSERT(index >= 1);
    if (s->failed != 0) {
        return s->failed;
    }
    if (index > consensus__store_last_index(s)) {
        return 0;
    }
    ASSERT(!s->has_snapshot || index > s->snapshot_index);
    return consensus__store_log_truncate(s, index);
}

/* ------------------------------------------------------------------------
 * Accessors
 * ------------------------------------------------------------------------ */

raft_index consensus__store_last_index(const struct consensus__store *s)
{
    ASSERT(s != NULL);
    return s->log_start + s->entry_count - 1;
}

raft_term consensus__store_last_term(const struct consensus__store *s)
{
    ASSERT(s != NULL);
    if (s->entry_count > 0) {
        return s->entries[s->entry_count - 1].term;
    }
    return s->has_snapshot ? s->snapshot_term : 0;
}

raft_index consensus__store_snapshot_index(const struct consensus__store *s)
{
    ASSERT(s != NULL);
    return s->has_snapshot ? s->snapshot_index : 0;
}

const char *consensus__store_errmsg(const struct consensus__store *s)
{
    ASSERT(s != NULL);
    return s->errmsg;
}

void consensus__store_set_segment_size(struct consensus__store *s,
                                       uint64_t segment_size)
{
    ASSERT(s != NULL);
    ASSERT(segment_size > CONSENSUS__STORE_SEGMENT_HEADER_SIZE);
    ASSERT(segment_size <= CONSENSUS__STORE_SEGMENT_SIZE_TARGET);
    s->segment_size_target = segment_size;
}
