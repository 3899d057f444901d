/* SPDX-License-Identifier: MIT
 *
 * store_log.c: the Raft store's log segments as open finds them (store.h
 * has the layout): listing the files, checking every record, telling a torn
 * tail (cut) from damage (refused), finishing a snapshot's interrupted
 * prefix deletion, and building the in-memory index (term and record offset
 * per entry; never the payloads, which raft keeps).
 *
 * Why a torn tail can be cut: appends are not durable until
 * consensus__store_sync(), and raft is told an entry is persisted only after
 * that; a crash therefore can only damage records at the end of the last
 * segment, none of them acknowledged. A valid record found after bad bytes
 * proves the bad bytes are not such a tail, so the store refuses to open.
 */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char segment_magic[8] = {'S', 'I', 'N', 'E', 'W', 'L', 'O', 'G'};

/* The largest segment a valid store can hold: a full one plus one maximal
 * record. Bounds the allocation open makes to read one. */
#define SEGMENT_FILE_SIZE_MAX                                                  \
    (CONSENSUS__STORE_SEGMENT_SIZE_TARGET +                                    \
     CONSENSUS__STORE_SEGMENT_HEADER_SIZE +                                    \
     CONSENSUS__STORE_RECORD_HEADER_SIZE + CONSENSUS__STORE_ENTRY_SIZE_MAX)

/* "log-" and 20 decimal digits. */
#define SEGMENT_NAME_DIGITS 20

void consensus__store_segment_name(raft_index first_index, char *name,
                                   size_t size)
{
    snprintf(name, size, "log-%020llu", (unsigned long long)first_index);
}

size_t consensus__store_segment_find(const struct consensus__store *s,
                                     raft_index index)
{
    size_t low = 0;
    size_t high = s->segment_count;

    ASSERT(s->segment_count > 0);
    ASSERT(index >= s->segments[0].first_index);
    /* The last segment whose first_index <= index. */
    while (high - low > 1) {
        size_t mid = low + (high - low) / 2;

        if (s->segments[mid].first_index <= index) {
            low = mid;
        } else {
            high = mid;
        }
    }
    return low;
}

int consensus__store_entries_reserve(struct consensus__store *s, size_t extra)
{
    size_t needed = s->entry_count + extra;
    size_t capacity = s->entry_capacity;
    struct consensus__store_entry *entries;

    if (needed <= capacity) {
        return 0;
    }
    while (capacity < needed) {
        capacity = capacity < 64 ? 64 : capacity * 2;
    }
    entries = common_realloc_array(s->entries, capacity, sizeof(*entries));
    if (entries == NULL) {
        return COMMON_ENOMEM;
    }
    s->entries = entries;
    s->entry_capacity = capacity;
    return 0;
}

int consensus__store_segments_reserve(struct consensus__store *s)
{
    size_t capacity = s->segment_capacity;
    struct consensus__store_segment *segments;

    if (s->segment_count < capacity) {
        return 0;
    }
    capacity = capacity < 8 ? 8 : capacity * 2;
    segments = common_realloc_array(s->segments, capacity, sizeof(*segments));
    if (segments == NULL) {
        return COMMON_ENOMEM;
    }
    s->segments = segments;
    s->segment_capacity = capacity;
    return 0;
}

/* ------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------ */

static bool record_header_is_valid(const uint8_t *data, size_t size)
{
    return size >= CONSENSUS__STORE_RECORD_HEADER_SIZE &&
           common_checksum64(data, 32, 0) == common_get_u64le(data + 32);
}

bool consensus__store_record_decode(const uint8_t *data, size_t size,
                                    struct consensus__store_record *out)
{
    uint32_t payload_size;
    uint32_t type;

    if (!record_header_is_valid(data, size)) {
        return false;
    }
    payload_size = common_get_u32le(data + 20);
    type = common_get_u32le(data + 16);
    if (payload_size > CONSENSUS__STORE_ENTRY_SIZE_MAX ||
        payload_size > size - CONSENSUS__STORE_RECORD_HEADER_SIZE) {
        return false;
    }
    if (common_checksum64(data + CONSENSUS__STORE_RECORD_HEADER_SIZE,
                          payload_size, 0) != common_get_u64le(data + 24)) {
        return false;
    }
    if (type != RAFT_COMMAND && type != RAFT_BARRIER && type != RAFT_CHANGE) {
        return false;
    }
    out->index = common_get_u64le(data);
    out->term = common_get_u64le(data + 8);
    out->type = type;
    out->payload_size = payload_size;
    out->payload = data + CONSENSUS__STORE_RECORD_HEADER_SIZE;
    return true;
}

/* Raft's encoding (src/configuration.c): format byte 1, u64 server count,
 * then per server u64 id, NUL-terminated address, role byte; zero padding
 * to a multiple of 8 after. */
bool consensus__store_conf_is_valid(const uint8_t *data, size_t size)
{
    struct common_reader r;
    uint8_t byte;
    uint64_t count;
    uint64_t id;

    common_reader_init(&r, data, size);
    if (common_reader_byte(&r, &byte) != 0 || byte != 1 ||
        common_reader_u64le(&r, &count) != 0 ||
        count > common_reader_remaining(&r) / 10) {
        return false;
    }
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *rest;
        const uint8_t *nul;

        if (common_reader_u64le(&r, &id) != 0) {
            return false;
        }
        rest = r.data + r.offset;
        nul = memchr(rest, 0, common_reader_remaining(&r));
        if (nul == NULL) {
            return false;
        }
        r.offset += (size_t)(nul - rest) + 1;
        if (common_reader_byte(&r, &byte) != 0) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------
 * Scanning segments at open
 * ------------------------------------------------------------------------ */

struct scan {
    raft_index stored_log_start; /* the snapshot's log_start, or 1 */
    raft_index next_index;       /* the index the next record must have */
    raft_term last_term;         /* of the last record seen */
};

/* After bad bytes at offset in the last segment: is there a valid record
 * further on (damage), or only a torn tail? A header that checks out but
 * whose payload runs past the end is the torn record itself: everything
 * after it is its payload. Otherwise look for a valid record of an index
 * still to come at every later byte. */
static bool tail_has_valid_record(const uint8_t *data, size_t size,
                                  size_t offset, raft_index next_index)
{
    size_t from = offset + 1;
    struct consensus__store_record record;

    if (record_header_is_valid(data + offset, size - offset)) {
        uint64_t end = offset + (uint64_t)CONSENSUS__STORE_RECORD_HEADER_SIZE +
                       common_get_u32le(data + offset + 20);
        if (end >= size) {
            return false;
        }
        from = (size_t)end;
    }
    for (size_t q = from; q + CONSENSUS__STORE_RECORD_HEADER_SIZE <= size;
         q++) {
        if (consensus__store_record_decode(data + q, size - q, &record) &&
            record.index >= next_index) {
            return true;
        }
    }
    return false;
}

static int record_check(struct consensus__store *s, const char *name,
                        const struct consensus__store_record *record,
                        struct scan *scan)
{
    if (record->index != scan->next_index) {
        return consensus__store_corrupt(s,
                                        "%s: record %llu where %llu expected",
                                        name, (unsigned long long)record->index,
                                        (unsigned long long)scan->next_index);
    }
    if (record->term == 0 || record->term < scan->last_term) {
        return consensus__store_corrupt(s, "%s: entry %llu has term %llu", name,
                                        (unsigned long long)record->index,
                                        (unsigned long long)record->term);
    }
    if (record->type == RAFT_CHANGE &&
        !consensus__store_conf_is_valid(record->payload,
                                        record->payload_size)) {
        return consensus__store_corrupt(
            s, "%s: entry %llu: malformed configuration", name,
            (unsigned long long)record->index);
    }
    return 0;
}

/* Checks the records of one segment's bytes, indexes those at or above the
 * stored log start, and sets *valid_size to where the valid records end. */
static int records_scan(struct consensus__store *s, const char *name,
                        const uint8_t *data, size_t size, bool is_last,
                        struct scan *scan, size_t *valid_size)
{
    size_t offset = CONSENSUS__STORE_SEGMENT_HEADER_SIZE;
    struct consensus__store_record record;
    int rc;

    while (offset < size) {
        if (!consensus__store_record_decode(data + offset, size - offset,
                                            &record)) {
            if (!is_last ||
                tail_has_valid_record(data, size, offset, scan->next_index)) {
                return consensus__store_corrupt(
                    s, "%s: bad record at offset %zu", name, offset);
            }
            break; /* a torn tail */
        }
        rc = record_check(s, name, &record, scan);
        if (rc != 0) {
            return rc;
        }
        if (record.index >= scan->stored_log_start) {
            rc = consensus__store_entries_reserve(s, 1);
            if (rc != 0) {
                return rc;
            }
            s->entries[s->entry_count].term = record.term;
            s->entries[s->entry_count].offset = offset;
            s->entry_count++;
        }
        scan->next_index++;
        scan->last_term = record.term;
        offset += CONSENSUS__STORE_RECORD_HEADER_SIZE + record.payload_size;
    }
    *valid_size = offset;
    return 0;
}

static int segment_header_check(struct consensus__store *s, const char *name,
                                const uint8_t *data, size_t size,
                                raft_index first_index)
{
    if (size < CONSENSUS__STORE_SEGMENT_HEADER_SIZE ||
        memcmp(data, segment_magic, sizeof(segment_magic)) != 0 ||
        common_get_u64le(data + 24) != common_checksum64(data, 24, 0)) {
        return consensus__store_corrupt(s, "%s: bad segment header", name);
    }
    if (common_get_u64le(data + 8) != CONSENSUS__STORE_FORMAT) {
        return consensus__store_corrupt(
            s, "%s: unknown format %llu", name,
            (unsigned long long)common_get_u64le(data + 8));
    }
    if (common_get_u64le(data + 16) != first_index) {
        return consensus__store_corrupt(
            s, "%s: header says first index %llu", name,
            (unsigned long long)common_get_u64le(data + 16));
    }
    return 0;
}

/* Cuts the last segment's torn tail, durably. */
static int segment_cut(struct consensus__store *s, const char *name,
                       uint64_t size)
{
    int fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
    int rc = 0;

    if (fd < 0) {
        return consensus__store_file_fail(s, errno, "open", name);
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        rc = consensus__store_file_fail(s, errno, "ftruncate", name);
    } else if (consensus__store_file_fsync(fd, false) != 0) {
        rc = consensus__store_file_fail(s, errno, "fsync", name);
    }
    close(fd);
    return rc;
}

static int segment_scan(struct consensus__store *s, size_t k, struct scan *scan)
{
    struct consensus__store_segment *segment = &s->segments[k];
    bool is_last = k + 1 == s->segment_count;
    char name[32];
    uint8_t *data;
    size_t size;
    size_t valid_size = 0;
    bool exists;
    int rc;

    consensus__store_segment_name(segment->first_index, name, sizeof(name));
    rc = consensus__store_file_read_all(s, name, SEGMENT_FILE_SIZE_MAX, &data,
                                        &size, &exists);
    if (rc != 0) {
        return rc;
    }
    rc = exists
             ? segment_header_check(s, name, data, size, segment->first_index)
             : consensus__store_corrupt(s, "%s: vanished", name);
    if (rc == 0 && k > 0 && segment->first_index != scan->next_index) {
        rc = consensus__store_corrupt(s, "%s: log jumps from %llu", name,
                                      (unsigned long long)scan->next_index);
    }
    if (rc == 0) {
        scan->next_index = segment->first_index;
        rc = records_scan(s, name, data, size, is_last, scan, &valid_size);
    }
    if (rc == 0 && valid_size < size) {
        rc = segment_cut(s, name, valid_size);
    }
    common_free(data);
    segment->size = valid_size;
    return rc;
}

/* ------------------------------------------------------------------------
 * Listing
 * ------------------------------------------------------------------------ */

static bool name_has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name);
    size_t m = strlen(suffix);

    return n >= m && strcmp(name + n - m, suffix) == 0;
}

/* 1 and the first index if name is a segment's, 0 if it is not one. */
static int segment_name_parse(const char *name, raft_index *first_index)
{
    raft_index value = 0;

    if (strncmp(name, "log-", 4) != 0 ||
        strlen(name) != 4 + SEGMENT_NAME_DIGITS) {
        return 0;
    }
    for (size_t i = 4; name[i] != '\0'; i++) {
        if (name[i] < '0' || name[i] > '9' || value > (UINT64_MAX - 9) / 10) {
            return 0;
        }
        value = value * 10 + (raft_index)(name[i] - '0');
    }
    *first_index = value;
    return 1;
}

static int segment_compare(const void *a, const void *b)
{
    const struct consensus__store_segment *x = a;
    const struct consensus__store_segment *y = b;

    return (x->first_index > y->first_index) -
           (x->first_index < y->first_index);
}

static int listing_add(struct consensus__store *s, const char *name,
                       bool *removed)
{
    raft_index first_index;
    int rc;

    if (name_has_suffix(name, ".tmp")) {
        *removed = true;
        return consensus__store_file_remove(s, name);
    }
    if (segment_name_parse(name, &first_index) == 0) {
        return 0;
    }
    if (first_index == 0) {
        return consensus__store_corrupt(s, "%s: no entry has index 0", name);
    }
    rc = consensus__store_segments_reserve(s);
    if (rc != 0) {
        return rc;
    }
    s->segments[s->segment_count].first_index = first_index;
    s->segments[s->segment_count].size = 0;
    s->segment_count++;
    return 0;
}

/* Fills s->segments, sorted, and deletes unfinished replacements. */
static int list_segments(struct consensus__store *s)
{
    int fd = openat(s->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool removed = false;
    struct dirent *entry;
    DIR *dir;
    int rc = 0;

    if (fd < 0 || (dir = fdopendir(fd)) == NULL) {
        rc = consensus__store_file_fail(s, errno, "opendir", s->dir);
        if (fd >= 0) {
            close(fd);
        }
        return rc;
    }
    while (rc == 0 && (entry = readdir(dir)) != NULL) {
        rc = listing_add(s, entry->d_name, &removed);
    }
    closedir(dir);
    if (rc == 0 && removed) {
        rc = consensus__store_file_sync_dir(s);
    }
    if (s->segment_count > 0) {
        qsort(s->segments, s->segment_count, sizeof(*s->segments),
              segment_compare);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Open
 * ------------------------------------------------------------------------ */

/* Deletes the leading segments whose every index is below log_start: a
 * snapshot_put interrupted after its snapshot became durable. */
static int remove_obsolete(struct consensus__store *s, raft_index last_index,
                           raft_index stored_log_start)
{
    size_t k = 0;
    char name[32];
    int rc;

    while (k < s->segment_count) {
        raft_index last = k + 1 < s->segment_count
                              ? s->segments[k + 1].first_index - 1
                              : last_index;
        if (last >= stored_log_start) {
            break;
        }
        consensus__store_segment_name(s->segments[k].first_index, name,
                                      sizeof(name));
        rc = consensus__store_file_remove(s, name);
        if (rc != 0) {
            return rc;
        }
        k++;
    }
    if (k == 0) {
        return 0;
    }
    s->segment_count -= k;
    memmove(s->segments, s->segments + k,
            s->segment_count * sizeof(*s->segments));
    return consensus__store_file_sync_dir(s);
}

/* Where the log must start given the snapshot, and where it does. */
static int log_start_check(struct consensus__store *s,
                           raft_index stored_log_start, raft_index last_index)
{
    raft_index first = s->segments[0].first_index;

    if (!s->has_snapshot && first != 1) {
        return consensus__store_corrupt(
            s, "log starts at %llu and there is no snapshot",
            (unsigned long long)first);
    }
    if (s->has_snapshot && first > s->snapshot_index + 1) {
        return consensus__store_corrupt(
            s, "log starts at %llu, after snapshot %llu",
            (unsigned long long)first, (unsigned long long)s->snapshot_index);
    }
    s->log_start = first > stored_log_start ? first : stored_log_start;
    if (s->has_snapshot && s->entry_count > 0 &&
        last_index < s->snapshot_index) {
        return consensus__store_corrupt(
            s, "log ends at %llu, before snapshot %llu",
            (unsigned long long)last_index,
            (unsigned long long)s->snapshot_index);
    }
    return 0;
}

static int open_active(struct consensus__store *s)
{
    char name[32];

    consensus__store_segment_name(s->segments[s->segment_count - 1].first_index,
                                  name, sizeof(name));
    s->active_fd = openat(s->dir_fd, name, O_RDWR | O_CLOEXEC);
    if (s->active_fd < 0) {
        return consensus__store_file_fail(s, errno, "open", name);
    }
    return 0;
}

int consensus__store_log_open(struct consensus__store *s,
                              raft_index stored_log_start)
{
    struct scan scan = {stored_log_start, 1, 0};
    int rc = list_segments(s);

    for (size_t k = 0; rc == 0 && k < s->segment_count; k++) {
        rc = segment_scan(s, k, &scan);
    }
    if (rc == 0) {
        rc = remove_obsolete(s, scan.next_index - 1, stored_log_start);
    }
    if (rc != 0) {
        return rc;
    }
    if (s->segment_count == 0) {
        s->entry_count = 0;
        s->log_start = s->has_snapshot ? s->snapshot_index + 1 : 1;
        return 0;
    }
    rc = log_start_check(s, stored_log_start, scan.next_index - 1);
    if (rc != 0) {
        return rc;
    }
    ASSERT(s->log_start + s->entry_count == scan.next_index);
    return open_active(s);
}

void consensus__store_log_close(struct consensus__store *s)
{
    if (s->active_fd >= 0) {
        close(s->active_fd);
        s->active_fd = -1;
    }
    common_free(s->segments);
    common_free(s->entries);
    s->segments = NULL;
    s->entries = NULL;
    s->segment_count = 0;
    s->entry_count = 0;
}
