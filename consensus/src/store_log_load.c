/* SPDX-License-Identifier: MIT
 *
 * store_log_load.c: reading the Raft store's log back for raft_io->load
 * (store.h). The entries go to raft in the memory layout raft frees: one
 * raft_malloc'd batch per segment holding that segment's payloads (8-byte
 * aligned), each entry's .batch pointing at it, as libraft's own disk
 * backend does (src/uv_segment.c). One batch per segment rather than per
 * entry matters: raft frees a batch when its last entry goes and looks for
 * other users of the batch by scanning its whole log (isBatchReferenced in
 * src/log.c), which is cheap only when the next entry shares the batch.
 *
 * The records were checked at open; they are checked again here because
 * the bytes are read again.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static size_t align8(size_t size)
{
    return (size + 7) & ~(size_t)7;
}

/* Reads bytes [from, to) of segment k into a common_malloc'd buffer. */
static int segment_read(struct consensus__store *s, size_t k, uint64_t from,
                        uint64_t to, uint8_t **out)
{
    char name[32];
    uint8_t *data;
    int fd;
    int rc;

    consensus__store_segment_name(s->segments[k].first_index, name,
                                  sizeof(name));
    data = common_malloc((size_t)(to - from));
    if (data == NULL) {
        return COMMON_ENOMEM;
    }
    fd = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        common_free(data);
        return consensus__store_file_fail(s, errno, "open", name);
    }
    rc = consensus__store_file_read_at(s, fd, name, data, (size_t)(to - from),
                                       from);
    close(fd);
    if (rc != 0) {
        common_free(data);
        return rc;
    }
    *out = data;
    return 0;
}

/* Decodes the records in data (entries first..last) into out[], copying
 * the payloads into batch; returns the batch bytes used in *used. */
static int records_copy(struct consensus__store *s, const uint8_t *data,
                        size_t size, raft_index first, raft_index last,
                        uint8_t *batch, struct raft_entry *out, size_t *used)
{
    struct consensus__store_record record;
    size_t offset = 0;
    size_t batch_offset = 0;

    for (raft_index index = first; index <= last; index++) {
        struct raft_entry *entry = &out[index - first];

        if (!consensus__store_record_decode(data + offset, size - offset,
                                            &record) ||
            record.index != index ||
            record.term != s->entries[index - s->log_start].term ||
            (record.type == RAFT_CHANGE &&
             !consensus__store_conf_is_valid(record.payload,
                                             record.payload_size))) {
            return consensus__store_corrupt(
                s, "load: entry %llu changed since open",
                (unsigned long long)index);
        }
        memcpy(batch + batch_offset, record.payload, record.payload_size);
        entry->term = record.term;
        entry->type = (enum raft_entry_type)record.type;
        entry->buf.base = batch + batch_offset;
        entry->buf.len = record.payload_size;
        entry->batch = batch;
        batch_offset = align8(batch_offset + record.payload_size);
        offset += CONSENSUS__STORE_RECORD_HEADER_SIZE + record.payload_size;
    }
    if (offset != size) {
        return consensus__store_corrupt(s, "load: entry %llu changed size",
                                        (unsigned long long)last);
    }
    *used = batch_offset;
    return 0;
}

/* Gives back the batch's unused tail (the batch was sized by the bytes on
 * disk, headers included), moving the entries' pointers if it moved. */
static void batch_shrink(struct raft_entry *entries, size_t n, size_t used)
{
    uint8_t *old = entries[0].batch;
    uint8_t *batch = raft_realloc(old, used < 8 ? 8 : used);

    if (batch == NULL || batch == old) {
        return; /* the larger block is still valid */
    }
    for (size_t i = 0; i < n; i++) {
        size_t offset = (size_t)((uint8_t *)entries[i].buf.base - old);

        entries[i].buf.base = batch + offset;
        entries[i].batch = batch;
    }
}

/* Loads segment k's entries at or after log_start into out[], one batch. */
static int segment_load(struct consensus__store *s, size_t k,
                        struct raft_entry *out, size_t *filled)
{
    raft_index next = s->log_start + s->entry_count;
    raft_index first = s->segments[k].first_index;
    raft_index last =
        (k + 1 < s->segment_count ? s->segments[k + 1].first_index : next) - 1;
    uint64_t from;
    uint64_t to = s->segments[k].size;
    uint8_t *data = NULL;
    uint8_t *batch;
    size_t used = 0;
    int rc;

    first = first > s->log_start ? first : s->log_start;
    if (first > last) {
        return 0; /* an empty segment */
    }
    from = s->entries[first - s->log_start].offset;
    rc = segment_read(s, k, from, to, &data);
    if (rc != 0) {
        return rc;
    }
    batch = raft_malloc((size_t)(to - from));
    if (batch == NULL) {
        common_free(data);
        return COMMON_ENOMEM;
    }
    rc = records_copy(s, data, (size_t)(to - from), first, last, batch,
                      out + *filled, &used);
    common_free(data);
    if (rc != 0) {
        raft_free(batch);
        return rc;
    }
    batch_shrink(out + *filled, (size_t)(last - first + 1), used);
    *filled += (size_t)(last - first + 1);
    return 0;
}

/* Frees what segment_load() filled, as raft's entryBatchesDestroy would. */
static void entries_free(struct raft_entry *entries, size_t n)
{
    void *batch = NULL;

    for (size_t i = 0; i < n; i++) {
        if (entries[i].batch != batch) {
            batch = entries[i].batch;
            raft_free(batch);
        }
    }
    raft_free(entries);
}

int consensus__store_log_load(struct consensus__store *s,
                              struct raft_entry **entries, size_t *n_entries)
{
    struct raft_entry *out;
    size_t filled = 0;
    int rc = 0;

    if (s->entry_count == 0) {
        *entries = NULL;
        *n_entries = 0;
        return 0;
    }
    if (s->entry_count > SIZE_MAX / sizeof(*out)) {
        return COMMON_ENOMEM;
    }
    out = raft_malloc(s->entry_count * sizeof(*out));
    if (out == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t k = consensus__store_segment_find(s, s->log_start);
         rc == 0 && k < s->segment_count; k++) {
        rc = segment_load(s, k, out, &filled);
    }
    if (rc != 0) {
        entries_free(out, filled);
        return rc;
    }
    ASSERT(filled == s->entry_count);
    *entries = out;
    *n_entries = filled;
    return 0;
}
