/* SPDX-License-Identifier: MIT
 *
 * store_log_write.c: changing the Raft store's log (store.h has the
 * layout): appending records (not synced: consensus__store_sync() groups
 * the fdatasync of a batch of appends), rotating segments, truncating the
 * tail and dropping a prefix after a snapshot.
 *
 * Every deletion keeps what is left contiguous if it is interrupted: a tail
 * is deleted last segment first, a prefix first segment first. Small
 * records of one append call are coalesced in s->scratch and written with
 * one pwrite; large payloads are written directly, never copied.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char segment_magic[8] = {'S', 'I', 'N', 'E', 'W', 'L', 'O', 'G'};

/* Payloads up to this size are copied into the scratch buffer. */
#define COALESCE_PAYLOAD_SIZE_MAX ((size_t)64 << 10)

/* The scratch buffer is written out once it holds this many bytes. */
#define COALESCE_FLUSH_SIZE ((size_t)1 << 20)

static struct consensus__store_segment *last_segment(struct consensus__store *s)
{
    ASSERT(s->segment_count > 0);
    return &s->segments[s->segment_count - 1];
}

static raft_index next_index(const struct consensus__store *s)
{
    return s->log_start + s->entry_count;
}

static int scratch_flush(struct consensus__store *s)
{
    struct consensus__store_segment *segment;
    char name[32];
    int rc;

    if (s->scratch.size == 0) {
        return 0;
    }
    segment = last_segment(s);
    consensus__store_segment_name(segment->first_index, name, sizeof(name));
    rc = consensus__store_file_write_at(s, s->active_fd, name, s->scratch.data,
                                        s->scratch.size,
                                        segment->size - s->scratch.size);
    common_buf_truncate(&s->scratch, 0);
    return rc;
}

/* Creates the segment that starts at first_index (header only, durable, by
 * atomic replacement) and makes it the active one. */
static int segment_create(struct consensus__store *s, raft_index first_index)
{
    uint8_t header[CONSENSUS__STORE_SEGMENT_HEADER_SIZE];
    struct consensus__store_piece piece = {header, sizeof(header)};
    char name[32];
    int rc;

    ASSERT(s->active_fd < 0);
    rc = consensus__store_segments_reserve(s);
    if (rc != 0) {
        return rc;
    }
    memcpy(header, segment_magic, sizeof(segment_magic));
    common_put_u64le(header + 8, CONSENSUS__STORE_FORMAT);
    common_put_u64le(header + 16, first_index);
    common_put_u64le(header + 24, common_checksum64(header, 24, 0));
    consensus__store_segment_name(first_index, name, sizeof(name));
    rc = consensus__store_file_replace(s, name, &piece, 1);
    if (rc != 0) {
        return rc;
    }
    s->active_fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
    if (s->active_fd < 0) {
        return consensus__store_file_fail(s, errno, "open", name);
    }
    s->segments[s->segment_count].first_index = first_index;
    s->segments[s->segment_count].size = sizeof(header);
    s->segment_count++;
    return 0;
}

/* Closes the active segment, durable, and starts the next one. */
static int segment_rotate(struct consensus__store *s)
{
    int rc = scratch_flush(s);

    if (rc == 0 && s->active_fd >= 0) {
        rc = consensus__store_log_sync(s);
        close(s->active_fd);
        s->active_fd = -1;
    }
    if (rc == 0) {
        rc = segment_create(s, next_index(s));
    }
    return rc;
}

static void record_header_encode(const struct raft_entry *entry,
                                 raft_index index, uint8_t *header)
{
    common_put_u64le(header, index);
    common_put_u64le(header + 8, entry->term);
    common_put_u32le(header + 16, (uint32_t)entry->type);
    common_put_u32le(header + 20, (uint32_t)entry->buf.len);
    common_put_u64le(header + 24,
                     common_checksum64(entry->buf.base, entry->buf.len, 0));
    common_put_u64le(header + 32, common_checksum64(header, 32, 0));
}

static int record_write(struct consensus__store *s, const uint8_t *header,
                        const struct raft_entry *entry, uint64_t offset)
{
    char name[32];
    int rc;

    if (entry->buf.len <= COALESCE_PAYLOAD_SIZE_MAX) {
        /* Capacity was reserved at open: these appends cannot fail. */
        rc = common_buf_append(&s->scratch, header,
                               CONSENSUS__STORE_RECORD_HEADER_SIZE);
        if (rc == 0) {
            rc =
                common_buf_append(&s->scratch, entry->buf.base, entry->buf.len);
        }
        ASSERT(rc == 0);
        return 0;
    }
    rc = scratch_flush(s);
    if (rc != 0) {
        return rc;
    }
    consensus__store_segment_name(last_segment(s)->first_index, name,
                                  sizeof(name));
    rc = consensus__store_file_write_at(s, s->active_fd, name, header,
                                        CONSENSUS__STORE_RECORD_HEADER_SIZE,
                                        offset);
    if (rc == 0) {
        rc = consensus__store_file_write_at(
            s, s->active_fd, name, entry->buf.base, entry->buf.len,
            offset + CONSENSUS__STORE_RECORD_HEADER_SIZE);
    }
    return rc;
}

static int append_one(struct consensus__store *s,
                      const struct raft_entry *entry)
{
    uint8_t header[CONSENSUS__STORE_RECORD_HEADER_SIZE];
    struct consensus__store_segment *segment;
    raft_index index = next_index(s);
    int rc;

    if (s->active_fd < 0 || last_segment(s)->size >= s->segment_size_target) {
        rc = segment_rotate(s);
        if (rc != 0) {
            return rc;
        }
    }
    segment = last_segment(s);
    record_header_encode(entry, index, header);
    rc = record_write(s, header, entry, segment->size);
    if (rc != 0) {
        return rc;
    }
    s->entries[s->entry_count].term = entry->term;
    s->entries[s->entry_count].offset = segment->size;
    s->entry_count++;
    segment->size += CONSENSUS__STORE_RECORD_HEADER_SIZE + entry->buf.len;
    s->is_dirty = true;
    if (s->scratch.size >= COALESCE_FLUSH_SIZE) {
        return scratch_flush(s);
    }
    return 0;
}

/* Preconditions that hold for anything raft hands over, and the one limit
 * that can fail. */
static int append_check(struct consensus__store *s,
                        const struct raft_entry *entries, unsigned n)
{
    raft_term last_term = consensus__store_last_term(s);

    for (unsigned i = 0; i < n; i++) {
        ASSERT(entries[i].type == RAFT_COMMAND ||
               entries[i].type == RAFT_BARRIER ||
               entries[i].type == RAFT_CHANGE);
        ASSERT(entries[i].term >= 1);
        ASSERT(entries[i].term >= last_term);
        ASSERT(entries[i].buf.base != NULL || entries[i].buf.len == 0);
        if (entries[i].buf.len > CONSENSUS__STORE_ENTRY_SIZE_MAX) {
            snprintf(s->errmsg, sizeof(s->errmsg), "append: entry of %zu bytes",
                     entries[i].buf.len);
            return CONSENSUS_ETOOBIG;
        }
        last_term = entries[i].term;
    }
    return 0;
}

int consensus__store_log_append(struct consensus__store *s,
                                const struct raft_entry *entries, unsigned n)
{
    int rc = append_check(s, entries, n);

    if (rc == 0) {
        rc = consensus__store_entries_reserve(s, n);
    }
    if (rc != 0) {
        return rc; /* nothing written: no latch */
    }
    for (unsigned i = 0; i < n && rc == 0; i++) {
        rc = append_one(s, &entries[i]);
    }
    if (rc == 0) {
        rc = scratch_flush(s);
    }
    if (rc != 0) {
        s->failed = rc;
    }
    return rc;
}

int consensus__store_log_sync(struct consensus__store *s)
{
    char name[32];

    ASSERT(s->scratch.size == 0);
    if (!s->is_dirty || s->active_fd < 0) {
        s->is_dirty = false;
        return 0;
    }
    if (consensus__store_file_fsync(s->active_fd, true) != 0) {
        consensus__store_segment_name(last_segment(s)->first_index, name,
                                      sizeof(name));
        return consensus__store_file_fail(s, errno, "fdatasync", name);
    }
    s->is_dirty = false;
    return 0;
}

/* Deletes segments from..last, last first, closing the active one. */
static int remove_from(struct consensus__store *s, size_t from)
{
    char name[32];
    int rc;

    while (s->segment_count > from) {
        if (s->active_fd >= 0) {
            close(s->active_fd);
            s->active_fd = -1;
        }
        consensus__store_segment_name(last_segment(s)->first_index, name,
                                      sizeof(name));
        rc = consensus__store_file_remove(s, name);
        if (rc != 0) {
            return rc;
        }
        s->segment_count--;
    }
    return 0;
}

/* Cuts segment k at offset, durably; it becomes (or stays) the active one. */
static int segment_cut(struct consensus__store *s, size_t k, uint64_t offset)
{
    char name[32];

    ASSERT(k + 1 == s->segment_count);
    consensus__store_segment_name(s->segments[k].first_index, name,
                                  sizeof(name));
    if (s->active_fd < 0) {
        s->active_fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
        if (s->active_fd < 0) {
            return consensus__store_file_fail(s, errno, "open", name);
        }
    }
    if (ftruncate(s->active_fd, (off_t)offset) != 0) {
        return consensus__store_file_fail(s, errno, "ftruncate", name);
    }
    if (consensus__store_file_fsync(s->active_fd, false) != 0) {
        return consensus__store_file_fail(s, errno, "fsync", name);
    }
    s->segments[k].size = offset;
    return 0;
}

static int reopen_active(struct consensus__store *s)
{
    char name[32];

    if (s->active_fd >= 0 || s->segment_count == 0) {
        return 0;
    }
    consensus__store_segment_name(last_segment(s)->first_index, name,
                                  sizeof(name));
    s->active_fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
    if (s->active_fd < 0) {
        return consensus__store_file_fail(s, errno, "open", name);
    }
    return 0;
}

int consensus__store_log_truncate(struct consensus__store *s, raft_index index)
{
    size_t k;
    uint64_t offset;
    int rc;

    ASSERT(index >= s->log_start);
    ASSERT(index < next_index(s));
    ASSERT(s->scratch.size == 0);
    k = consensus__store_segment_find(s, index);
    offset = s->entries[index - s->log_start].offset;
    rc = remove_from(s, k + 1);
    if (rc == 0 && index == s->segments[k].first_index) {
        rc = remove_from(s, k);
    } else if (rc == 0) {
        rc = segment_cut(s, k, offset);
    }
    if (rc == 0) {
        rc = consensus__store_file_sync_dir(s);
    }
    if (rc == 0) {
        rc = reopen_active(s);
    }
    if (rc != 0) {
        s->failed = rc;
        return rc;
    }
    /* What is left was synced: by the cut's fsync, or at rotation. */
    s->entry_count = (size_t)(index - s->log_start);
    s->is_dirty = false;
    return 0;
}

int consensus__store_log_drop_before(struct consensus__store *s,
                                     raft_index log_start)
{
    size_t k = 0;
    size_t drop;
    char name[32];
    int rc = 0;

    ASSERT(log_start >= s->log_start);
    ASSERT(log_start <= next_index(s));
    while (rc == 0 && k + 1 < s->segment_count &&
           s->segments[k + 1].first_index <= log_start) {
        consensus__store_segment_name(s->segments[k].first_index, name,
                                      sizeof(name));
        rc = consensus__store_file_remove(s, name);
        k += rc == 0 ? 1 : 0;
    }
    if (rc == 0 && k > 0) {
        rc = consensus__store_file_sync_dir(s);
    }
    s->segment_count -= k;
    memmove(s->segments, s->segments + k,
            s->segment_count * sizeof(*s->segments));
    drop = (size_t)(log_start - s->log_start);
    s->entry_count -= drop;
    memmove(s->entries, s->entries + drop,
            s->entry_count * sizeof(*s->entries));
    s->log_start = log_start;
    if (rc != 0) {
        s->failed = rc;
    }
    return rc;
}

int consensus__store_log_drop_all(struct consensus__store *s, raft_index next)
{
    int rc = remove_from(s, 0);

    if (rc == 0) {
        rc = consensus__store_file_sync_dir(s);
    }
    s->entry_count = 0;
    s->log_start = next;
    s->is_dirty = false;
    if (rc != 0) {
        s->failed = rc;
    }
    return rc;
}
