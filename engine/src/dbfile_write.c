/* SPDX-License-Identifier: MIT
 *
 * dbfile_write.c: writing a checkpoint, the main file (docs/formats.md,
 * "Main file"): the catalog, then each table's live rows in rowid order as
 * columnar segments of up to ENGINE__SEGMENT_ROWS rows.
 *
 * Crash safety is the classic sequence: write the new file aside, fsync
 * it, rename it over the old one, fsync the directory. A crash at any point
 * leaves either the old file (with the WAL that completes it) or the new
 * one (whose newer generation tells recovery the old WAL is folded in).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

static int put_text(struct common_buf *buf, const char *text)
{
    size_t size = strlen(text);
    int rc = common_buf_append_varint(buf, size);

    return rc ? rc : common_buf_append(buf, text, size);
}

static size_t object_count(const struct engine_db *db)
{
    size_t count = db->table_count;

    for (size_t v = 0; v < db->view_count; v++) {
        count += !db->views[v]->temporary;
    }
    for (size_t r = 0; r < db->trigger_count; r++) {
        count += !db->triggers[r]->temporary;
    }
    for (size_t t = 0; t < db->table_count; t++) {
        count += db->tables[t]->index_count;
    }
    return count;
}

/* The schema object after sequence `after` with the least creation
 * number: the catalog is written in creation order. */
static int next_object(const struct engine_db *db, uint64_t after,
                       const char **sql, uint8_t *kind, uint64_t *sequence)
{
    uint64_t best = UINT64_MAX;

    for (size_t t = 0; t < db->table_count; t++) {
        const struct engine_table *table = db->tables[t];

        if (table->sequence > after && table->sequence < best) {
            best = table->sequence;
            *sql = table->sql;
            *kind = ENGINE__DBFILE_TABLE;
        }
        for (size_t i = 0; i < table->index_count; i++) {
            const struct engine_index_def *index = &table->indexes[i];

            if (index->sequence > after && index->sequence < best) {
                best = index->sequence;
                *sql = index->sql;
                *kind = ENGINE__DBFILE_INDEX;
            }
        }
    }
    for (size_t v = 0; v < db->view_count; v++) {
        if (db->views[v]->sequence > after && db->views[v]->sequence < best &&
            !db->views[v]->temporary) {
            best = db->views[v]->sequence;
            *sql = db->views[v]->sql;
            *kind = ENGINE__DBFILE_VIEW;
        }
    }
    for (size_t r = 0; r < db->trigger_count; r++) {
        if (db->triggers[r]->sequence > after &&
            db->triggers[r]->sequence < best && !db->triggers[r]->temporary) {
            best = db->triggers[r]->sequence;
            *sql = db->triggers[r]->sql;
            *kind = ENGINE__DBFILE_TRIGGER;
        }
    }
    *sequence = best;
    return best == UINT64_MAX ? -1 : 0;
}

static int put_catalog(struct common_buf *buf, const struct engine_db *db)
{
    size_t count = object_count(db);
    uint64_t sequence = 0;
    int rc = common_buf_append_varint(buf, count);

    for (size_t i = 0; rc == 0 && i < count; i++) {
        const char *sql = NULL;
        uint8_t kind = 0;

        rc = next_object(db, sequence, &sql, &kind, &sequence);
        ASSERT(rc == 0);
        rc = common_buf_append_byte(buf, kind);
        rc = rc ? rc : put_text(buf, sql);
    }
    return rc;
}

static int put_table(struct common_buf *buf, struct engine_table *table,
                     uint64_t generation, uint32_t *slots)
{
    size_t segments =
        (table->live_count + ENGINE__SEGMENT_ROWS - 1) / ENGINE__SEGMENT_ROWS;
    size_t cursor = 0;
    int rc = put_text(buf, table->name);

    rc = rc ? rc : common_buf_append_varint(buf, table->column_count);
    rc = rc ? rc : common_buf_append_varint(buf, segments);

    for (size_t s = 0; rc == 0 && s < segments; s++) {
        uint32_t count = engine__table_scan(table, &cursor, slots,
                                            ENGINE__SEGMENT_ROWS, false);

        if (count == UINT32_MAX) {
            return COMMON_ENOMEM;
        }
        ASSERT(count > 0);
        rc = engine__segment_put(buf, table, slots, count, generation);
    }
    return rc ? rc : engine__dbfile_put_indexes(buf, table);
}

/* The whole file in memory: header, then body. */
static int encode(struct engine_db *db, const struct engine_wal_position *at,
                  struct common_buf *buf)
{
    uint64_t generation = at->generation;
    uint32_t *slots = common_malloc_array(ENGINE__SEGMENT_ROWS, sizeof(*slots));
    int rc = slots == NULL ? COMMON_ENOMEM : 0;
    uint8_t *header;

    rc = rc ? rc : common_buf_reserve(buf, ENGINE__DBFILE_HEADER_SIZE);
    if (rc == 0) {
        buf->size = ENGINE__DBFILE_HEADER_SIZE;
        rc = put_catalog(buf, db);
    }
    rc = rc ? rc : common_buf_append_varint(buf, db->table_count);
    for (size_t t = 0; rc == 0 && t < db->table_count; t++) {
        rc = put_table(buf, db->tables[t], generation, slots);
    }
    common_free(slots);
    if (rc != 0) {
        return rc;
    }
    header = buf->data;
    memset(header, 0, ENGINE__DBFILE_HEADER_SIZE);
    engine__dbfile_header_encode(header, generation, at->commit_seq,
                                 buf->data + ENGINE__DBFILE_HEADER_SIZE,
                                 buf->size - ENGINE__DBFILE_HEADER_SIZE,
                                 db->user_version);
    return 0;
}

static int write_aside(const char *tmp_path, const struct common_buf *buf)
{
    int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc;

    if (fd < 0) {
        return -errno;
    }
    rc = engine__io_write(fd, buf->data, buf->size, 0);
    rc = rc ? rc : engine__io_sync(fd);
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    return rc;
}

int engine__dbfile_write(struct engine_db *db, struct engine_storage *storage,
                         const struct engine_wal_position *at, size_t *size)
{
    struct common_buf buf;
    int rc;

    common_buf_init(&buf, SIZE_MAX);
    rc = encode(db, at, &buf);
    rc = rc ? rc : write_aside(storage->tmp_path, &buf);
    *size = buf.size;
    common_buf_close(&buf);
    if (rc != 0) {
        unlink(storage->tmp_path);
        return engine__io_error(rc);
    }
    return 0;
}

int engine__dbfile_install(struct engine_storage *storage)
{
    int rc = rename(storage->tmp_path, storage->path) != 0 ? -errno : 0;

    rc = rc ? rc : engine__io_sync_dir(storage->path);
    if (rc != 0) {
        unlink(storage->tmp_path);
        return engine__io_error(rc);
    }
    return 0;
}
