/* SPDX-License-Identifier: MIT
 *
 * wal.c: the write-ahead log: one checksummed record per commit since the
 * main file's checkpoint (docs/formats.md, "WAL").
 *
 * Recovery follows the rule SQLite's WAL uses for its frames: records are
 * replayed in order while each is whole and its checksum holds; the first
 * that is not ends the log, and the bytes from it on are cut off, since a
 * crash mid-append leaves exactly such a tail. One case is not a torn
 * append and is refused instead: a damaged record with a whole, valid
 * record after it, which only damage to bytes already synced can produce.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_int.h"
#include "storage_int.h"

static const uint8_t wal_magic[8] = {'s', 'i', 'n', 'e', 'w', 'W', 'A', 'L'};
#define WAL_VERSION 1
#define RECORD_MAGIC 0x52574e53u /* "SNWR" little-endian */

static void header_encode(uint8_t *out, uint64_t generation)
{
    memcpy(out, wal_magic, sizeof(wal_magic));
    common_put_u32le(out + 8, WAL_VERSION);
    common_put_u32le(out + 12, ENGINE__WAL_HEADER_SIZE);
    common_put_u64le(out + 16, generation);
    common_put_u64le(out + 24, common_checksum64(out, 24, 0));
}

static bool header_valid(const uint8_t *bytes)
{
    return memcmp(bytes, wal_magic, sizeof(wal_magic)) == 0 &&
           common_get_u32le(bytes + 8) == WAL_VERSION &&
           common_get_u32le(bytes + 12) == ENGINE__WAL_HEADER_SIZE &&
           common_get_u64le(bytes + 24) == common_checksum64(bytes, 24, 0);
}

static uint64_t record_checksum(const uint8_t *header, const uint8_t *payload,
                                size_t size, uint64_t generation)
{
    uint64_t seed = common_checksum64(header, 24, generation);

    return common_checksum64(payload, size, seed);
}

int engine__wal_reset(struct engine_storage *storage, uint64_t generation)
{
    uint8_t header[ENGINE__WAL_HEADER_SIZE];
    int rc = ftruncate(storage->wal_fd, 0) != 0 ? -errno : 0;

    header_encode(header, generation);
    rc = rc ? rc : engine__io_write(storage->wal_fd, header, sizeof(header), 0);
    rc = rc ? rc : engine__io_sync(storage->wal_fd);
    return rc ? engine__io_error(rc) : 0;
}

/* The size of the whole, valid record at offset, or 0 if there is none. */
static size_t record_at(const uint8_t *wal, size_t size, size_t offset,
                        uint64_t generation)
{
    const uint8_t *header = wal + offset;
    uint64_t payload_size;

    if (size - offset < ENGINE__WAL_RECORD_HEADER_SIZE ||
        common_get_u32le(header) != RECORD_MAGIC) {
        return 0;
    }
    payload_size = common_get_u32le(header + 4);
    if (payload_size > size - offset - ENGINE__WAL_RECORD_HEADER_SIZE ||
        record_checksum(header, header + ENGINE__WAL_RECORD_HEADER_SIZE,
                        (size_t)payload_size,
                        generation) != common_get_u64le(header + 24)) {
        return 0;
    }
    return ENGINE__WAL_RECORD_HEADER_SIZE + (size_t)payload_size;
}

/* A bad record at offset: a torn tail unless a whole record follows the
 * extent its header claims. */
static bool is_torn_tail(const uint8_t *wal, size_t size, size_t offset,
                         uint64_t generation)
{
    uint64_t claimed;

    if (size - offset < ENGINE__WAL_RECORD_HEADER_SIZE) {
        return true;
    }
    claimed = ENGINE__WAL_RECORD_HEADER_SIZE +
              (uint64_t)common_get_u32le(wal + offset + 4);
    if (claimed >= size - offset) {
        return true;
    }
    return record_at(wal, size, offset + (size_t)claimed, generation) == 0;
}

/* Applies the whole records of wal[offset, size) after position's, in
 * order, advancing position (wal[0] is the WAL file's byte at base); *end
 * is where they stop. A bad record that is not a torn tail, or a commit
 * out of sequence, is ENGINE_ECORRUPT. */
static int replay(struct engine_db *db, struct engine_wal_position *position,
                  const uint8_t *wal, size_t size, size_t offset, uint64_t base,
                  size_t *end)
{
    while (offset < size) {
        size_t length = record_at(wal, size, offset, position->generation);
        const uint8_t *header = wal + offset;
        int rc;

        if (length == 0) {
            if (!is_torn_tail(wal, size, offset, position->generation)) {
                return ENGINE_ECORRUPT;
            }
            break;
        }
        if (common_get_u64le(header + 8) != position->commit_seq + 1) {
            return ENGINE_ECORRUPT;
        }
        rc = engine__redo_apply(db, header + ENGINE__WAL_RECORD_HEADER_SIZE,
                                length - ENGINE__WAL_RECORD_HEADER_SIZE);
        if (rc != 0) {
            return rc;
        }
        position->commit_seq++;
        offset += length;
        position->wal_size = base + offset;
    }
    *end = offset;
    return 0;
}

/* Whether the WAL is to be emptied rather than replayed: it holds no
 * header yet (a crash while it was being reset), or it belongs to the
 * checkpoint before the main file's, whose commits that file holds. */
static int check_header(uint64_t main_generation, const uint8_t *wal,
                        size_t size, bool *stale)
{
    uint64_t generation;

    *stale = size < ENGINE__WAL_HEADER_SIZE;
    if (*stale) {
        return 0;
    }
    if (!header_valid(wal)) {
        *stale = size == ENGINE__WAL_HEADER_SIZE;
        return *stale ? 0 : ENGINE_ECORRUPT;
    }
    generation = common_get_u64le(wal + 16);
    if (generation > main_generation) {
        return ENGINE_ECORRUPT;
    }
    *stale = generation < main_generation;
    return 0;
}

int engine__wal_recover(struct engine_db *db, struct engine_storage *storage,
                        struct engine_wal_position *position)
{
    uint8_t *wal = NULL;
    size_t size = 0, end = 0;
    bool stale;
    int rc = engine__io_read_file(storage->wal_path, &wal, &size);

    rc = rc ? (rc == COMMON_ENOMEM ? rc : ENGINE_EIO)
            : check_header(position->generation, wal, size, &stale);
    position->wal_size = ENGINE__WAL_HEADER_SIZE;
    if (rc == 0 && stale) {
        rc = engine__wal_reset(storage, position->generation);
    } else if (rc == 0) {
        rc = replay(db, position, wal, size, ENGINE__WAL_HEADER_SIZE, 0, &end);
        if (rc == 0 && end < size) {
            rc = ftruncate(storage->wal_fd, (off_t)end) != 0
                     ? -errno
                     : engine__io_sync(storage->wal_fd);
            rc = rc ? engine__io_error(rc) : 0;
        }
    }
    common_free(wal);
    return rc;
}

int engine__wal_read(const struct engine_storage *storage, uint64_t from,
                     uint64_t to, uint8_t **out)
{
    size_t size = (size_t)(to - from), done = 0;
    uint8_t *bytes = common_malloc(size > 0 ? size : 1);

    *out = NULL;
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    while (done < size) {
        ssize_t n = pread(storage->wal_fd, bytes + done, size - done,
                          (off_t)(from + done));

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            common_free(bytes);
            return n < 0 ? ENGINE_EIO : ENGINE_ECORRUPT;
        }
        done += (size_t)n;
    }
    *out = bytes;
    return 0;
}

int engine__wal_catch_up(struct engine_db *db,
                         struct engine_wal_position *position,
                         const uint8_t *records, size_t size)
{
    /* The bytes are whole commits published by their writers, so anything
     * short of applying all of them is damage, not a torn tail. */
    size_t end = 0;
    int rc = replay(db, position, records, size, 0, position->wal_size, &end);

    return rc == 0 && end != size ? ENGINE_ECORRUPT : rc;
}

void engine__wal_cut(struct engine_storage *storage, uint64_t size)
{
    if (ftruncate(storage->wal_fd, (off_t)size) != 0 ||
        engine__io_sync(storage->wal_fd) != 0) {
        storage->failed = true;
    }
}

int engine__wal_append(struct engine_storage *storage,
                       struct engine_wal_position *end, const uint8_t *payload,
                       size_t size, uint64_t stamp)
{
    uint8_t header[ENGINE__WAL_RECORD_HEADER_SIZE];
    int rc;

    if (size > UINT32_MAX) {
        return ENGINE_ETOOBIG;
    }
    common_put_u32le(header, RECORD_MAGIC);
    common_put_u32le(header + 4, (uint32_t)size);
    common_put_u64le(header + 8, end->commit_seq + 1);
    common_put_u64le(header + 16, stamp);
    common_put_u64le(header + 24,
                     record_checksum(header, payload, size, end->generation));
    rc = engine__io_write(storage->wal_fd, header, sizeof(header),
                          end->wal_size);
    rc = rc ? rc
            : engine__io_write(storage->wal_fd, payload, size,
                               end->wal_size + sizeof(header));
    if (rc != 0) {
        engine__wal_cut(storage, end->wal_size);
        return engine__io_error(rc);
    }
    end->wal_size += sizeof(header) + size;
    end->commit_seq++;
    return 0;
}

size_t engine__wal_verify(const struct engine_storage *storage,
                          const struct engine_wal_position *upto,
                          void (*emit)(void *ctx, const char *message),
                          void *ctx)
{
    uint8_t *wal = NULL;
    size_t size = 0, offset = ENGINE__WAL_HEADER_SIZE;
    char message[128];
    int rc = engine__io_read_file(storage->wal_path, &wal, &size);

    if (rc == 0 && (size < upto->wal_size || size < ENGINE__WAL_HEADER_SIZE ||
                    !header_valid(wal))) {
        rc = ENGINE_ECORRUPT;
    }
    while (rc == 0 && offset < upto->wal_size) {
        size_t length = record_at(wal, size, offset, upto->generation);

        if (length == 0) {
            snprintf(message, sizeof(message),
                     "wal: record at offset %zu fails its checksum", offset);
            emit(ctx, message);
            common_free(wal);
            return 1;
        }
        offset += length;
    }
    common_free(wal);
    if (rc == 0) {
        return 0;
    }
    snprintf(message, sizeof(message), "wal: %s", engine_strerror(rc));
    emit(ctx, message);
    return 1;
}
