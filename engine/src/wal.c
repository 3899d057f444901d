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

int engine__wal_reset(struct engine_storage *storage)
{
    uint8_t header[ENGINE__WAL_HEADER_SIZE];
    int rc = ftruncate(storage->wal_fd, 0) != 0 ? -errno : 0;

    header_encode(header, storage->generation);
    rc = rc ? rc : engine__io_write(storage->wal_fd, header, sizeof(header), 0);
    rc = rc ? rc : engine__io_sync(storage->wal_fd);
    if (rc != 0) {
        return engine__io_error(rc);
    }
    storage->wal_size = ENGINE__WAL_HEADER_SIZE;
    return 0;
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

static int replay(struct engine_db *db, struct engine_storage *storage,
                  const uint8_t *wal, size_t size, size_t *end)
{
    size_t offset = ENGINE__WAL_HEADER_SIZE;

    while (offset < size) {
        size_t length = record_at(wal, size, offset, storage->generation);
        const uint8_t *header = wal + offset;
        int rc;

        if (length == 0) {
            if (!is_torn_tail(wal, size, offset, storage->generation)) {
                return ENGINE_ECORRUPT;
            }
            break;
        }
        if (common_get_u64le(header + 8) != storage->commit_seq + 1) {
            return ENGINE_ECORRUPT;
        }
        rc = engine__redo_apply(db, header + ENGINE__WAL_RECORD_HEADER_SIZE,
                                length - ENGINE__WAL_RECORD_HEADER_SIZE);
        if (rc != 0) {
            return rc;
        }
        storage->commit_seq++;
        offset += length;
    }
    *end = offset;
    return 0;
}

/* Whether the WAL is to be emptied rather than replayed: it holds no
 * header yet (a crash while it was being reset), or it belongs to the
 * checkpoint before the main file's, whose commits that file holds. */
static int check_header(const struct engine_storage *storage,
                        const uint8_t *wal, size_t size, bool *stale)
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
    if (generation > storage->generation) {
        return ENGINE_ECORRUPT;
    }
    *stale = generation < storage->generation;
    return 0;
}

int engine__wal_recover(struct engine_db *db, struct engine_storage *storage)
{
    uint8_t *wal = NULL;
    size_t size = 0, end = 0;
    bool stale;
    int rc = engine__io_read_file(storage->wal_path, &wal, &size);

    rc = rc ? (rc == COMMON_ENOMEM ? rc : ENGINE_EIO)
            : check_header(storage, wal, size, &stale);
    if (rc == 0 && stale) {
        rc = engine__wal_reset(storage);
    } else if (rc == 0) {
        rc = replay(db, storage, wal, size, &end);
        if (rc == 0 && end < size) {
            rc = ftruncate(storage->wal_fd, (off_t)end) != 0
                     ? -errno
                     : engine__io_sync(storage->wal_fd);
            rc = rc ? engine__io_error(rc) : 0;
        }
        storage->wal_size = end;
    }
    common_free(wal);
    return rc;
}

/* After a failed append: the record's bytes are cut off again, so the WAL
 * ends at its last whole commit. */
static void cut_back(struct engine_storage *storage)
{
    if (ftruncate(storage->wal_fd, (off_t)storage->wal_size) != 0 ||
        engine__io_sync(storage->wal_fd) != 0) {
        storage->failed = true;
    }
}

int engine__wal_append(struct engine_storage *storage, const uint8_t *payload,
                       size_t size, uint64_t stamp, int synchronous)
{
    uint8_t header[ENGINE__WAL_RECORD_HEADER_SIZE];
    int rc;

    if (size > UINT32_MAX) {
        return ENGINE_ETOOBIG;
    }
    common_put_u32le(header, RECORD_MAGIC);
    common_put_u32le(header + 4, (uint32_t)size);
    common_put_u64le(header + 8, storage->commit_seq + 1);
    common_put_u64le(header + 16, stamp);
    common_put_u64le(header + 24, record_checksum(header, payload, size,
                                                  storage->generation));
    rc = engine__io_write(storage->wal_fd, header, sizeof(header),
                          storage->wal_size);
    rc = rc ? rc
            : engine__io_write(storage->wal_fd, payload, size,
                               storage->wal_size + sizeof(header));
    if (rc != 0) {
        cut_back(storage);
        return engine__io_error(rc);
    }
    if (synchronous != ENGINE__SYNC_OFF) {
        rc = engine__io_sync(storage->wal_fd);
        if (rc != 0) {
            /* fsync failed: which of the record's pages reached the disk is
             * unknown (and Linux may forget the error), so the record is cut
             * off and this handle writes no more. */
            cut_back(storage);
            storage->failed = true;
            return ENGINE_EIO;
        }
    }
    storage->wal_size += sizeof(header) + size;
    storage->commit_seq++;
    return 0;
}

size_t engine__wal_verify(const struct engine_storage *storage,
                          void (*emit)(void *ctx, const char *message),
                          void *ctx)
{
    uint8_t *wal = NULL;
    size_t size = 0, offset = ENGINE__WAL_HEADER_SIZE;
    char message[128];
    int rc = engine__io_read_file(storage->wal_path, &wal, &size);

    if (rc == 0 && (size < storage->wal_size ||
                    size < ENGINE__WAL_HEADER_SIZE || !header_valid(wal))) {
        rc = ENGINE_ECORRUPT;
    }
    while (rc == 0 && offset < storage->wal_size) {
        size_t length = record_at(wal, size, offset, storage->generation);

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
