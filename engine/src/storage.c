/* SPDX-License-Identifier: MIT
 *
 * storage.c: a database's files (storage.h): opening (lock, load the main
 * file, replay the WAL), the durable commit, checkpoints, and the settings
 * PRAGMA reads and writes.
 *
 * Locking: the WAL file, which is never replaced, carries an exclusive
 * open-file-description lock (F_OFD_SETLK) for as long as a handle has the
 * database open. Unlike a classic POSIX lock it also excludes a second open
 * by the same process, so two handles can never append to one WAL.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine_int.h"
#include "storage_int.h"

/* Redo buffers larger than this are freed after a commit rather than kept
 * for the next transaction. */
#define REDO_KEEP_BYTES (1u << 20)

static char *path_with(const char *path, const char *suffix)
{
    size_t size = strlen(path), extra = strlen(suffix);
    char *out = common_malloc(size + extra + 1);

    if (out != NULL) {
        memcpy(out, path, size);
        memcpy(out + size, suffix, extra + 1);
    }
    return out;
}

static void storage_free(struct engine_storage *storage)
{
    if (storage == NULL) {
        return;
    }
    if (storage->wal_fd >= 0) {
        close(storage->wal_fd);
    }
    common_free(storage->path);
    common_free(storage->wal_path);
    common_free(storage->tmp_path);
    common_free(storage);
}

static int lock_wal(struct engine_storage *storage)
{
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

    storage->wal_fd =
        open(storage->wal_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    storage->wal_created = storage->wal_fd >= 0;
    if (storage->wal_fd < 0 && errno == EEXIST) {
        storage->wal_fd = open(storage->wal_path, O_RDWR | O_CLOEXEC);
    }
    if (storage->wal_fd < 0) {
        return ENGINE_ECANTOPEN;
    }
    if (fcntl(storage->wal_fd, F_OFD_SETLK, &lock) != 0) {
        return errno == EAGAIN || errno == EACCES ? ENGINE_EBUSY
                                                  : ENGINE_ECANTOPEN;
    }
    return 0;
}

static int storage_new(const char *path, struct engine_storage **out)
{
    struct engine_storage *storage = common_calloc(1, sizeof(*storage));

    *out = storage;
    if (storage == NULL) {
        return COMMON_ENOMEM;
    }
    storage->wal_fd = -1;
    storage->checkpoint_wal_bytes = ENGINE_CHECKPOINT_WAL_BYTES;
    storage->path = path_with(path, "");
    storage->wal_path = path_with(path, "-wal");
    storage->tmp_path = path_with(path, "-tmp");
    if (storage->path == NULL || storage->wal_path == NULL ||
        storage->tmp_path == NULL) {
        return COMMON_ENOMEM;
    }
    return lock_wal(storage);
}

/* Loads the main file, or creates it (generation 1, no tables) with an
 * empty WAL when there is none. */
static int load_or_create(struct engine_db *db, struct engine_storage *storage)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    int rc = engine__io_read_file(storage->path, &bytes, &size);

    if (rc == -ENOENT || (rc == 0 && size == 0)) {
        storage->generation = 1;
        rc = engine__dbfile_write(db, storage, 1);
        rc = rc ? rc : engine__wal_reset(storage);
        if (rc == 0 && engine__io_sync_dir(storage->wal_path) != 0) {
            rc = ENGINE_EIO;
        }
    } else if (rc == 0) {
        rc = engine__dbfile_load(db, storage, bytes, size);
        storage->main_size = size;
    } else {
        rc = rc == COMMON_ENOMEM ? rc : ENGINE_ECANTOPEN;
    }
    common_free(bytes);
    return rc;
}

int engine__storage_open(struct engine_db *db, const char *path)
{
    struct engine_storage *storage;
    int rc = storage_new(path, &storage);

    if (rc == 0 && unlink(storage->tmp_path) != 0 && errno != ENOENT) {
        rc = ENGINE_ECANTOPEN;
    }
    rc = rc ? rc : load_or_create(db, storage);
    rc = rc ? rc : engine__wal_recover(db, storage);
    if (rc != 0) {
        /* A file that is not a database (or cannot be one) is left as it
         * was found: without a WAL this open made. */
        if (storage != NULL && storage->wal_created) {
            unlink(storage->wal_path);
        }
        storage_free(storage);
        return rc;
    }
    db->storage = storage;
    db->capture = true;
    return 0;
}

void engine__storage_close(struct engine_db *db)
{
    storage_free(db->storage);
    db->storage = NULL;
}

bool engine__storage_is_file(const struct engine_db *db)
{
    return db->storage != NULL;
}

int engine__storage_synchronous(const struct engine_db *db)
{
    return db->synchronous;
}

void engine__storage_set_synchronous(struct engine_db *db, int level)
{
    ASSERT(level >= ENGINE__SYNC_OFF && level <= ENGINE__SYNC_EXTRA);
    db->synchronous = level;
}

int64_t engine__storage_user_version(const struct engine_db *db)
{
    return db->user_version;
}

int engine__storage_set_user_version(struct engine_db *db, int64_t value)
{
    int rc = engine__undo_record(db, ENGINE_UNDO_USER_VERSION, NULL, 0);

    if (rc == 0) {
        db->undo[db->undo_count - 1].rowid = db->user_version;
        rc = engine__redo_user_version(db, value);
    }
    if (rc != 0) {
        engine__undo_rollback(db, db->in_transaction ? db->undo_count : 0);
        return engine__db_error(db, rc, "out of memory");
    }
    db->user_version = value;
    return db->in_transaction ? 0 : engine__transaction_commit(db);
}

/* A new main file holding everything committed, then an empty WAL. After
 * the rename the old WAL no longer matches the main file; if it cannot be
 * emptied, appending to it would write commits that recovery discards, so
 * the handle stops writing. */
static int checkpoint(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;
    uint64_t generation = storage->generation + 1;
    int rc = engine__dbfile_write(db, storage, generation);

    if (rc != 0) {
        return rc;
    }
    storage->generation = generation;
    rc = engine__wal_reset(storage);
    if (rc != 0) {
        storage->failed = true;
    }
    return rc;
}

int engine__storage_vacuum(struct engine_db *db)
{
    int rc;

    if (db->in_transaction) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot VACUUM from within a transaction");
    }
    if (db->storage == NULL) {
        return 0;
    }
    rc = db->storage->failed ? ENGINE_EIO : checkpoint(db);
    return rc ? engine__db_error(db, rc, "%s", engine_strerror(rc)) : 0;
}

static void forget_redo(struct engine_db *db)
{
    if (db->redo.capacity > REDO_KEEP_BYTES) {
        common_buf_close(&db->redo);
        common_buf_init(&db->redo, UINT32_MAX);
    }
    engine__redo_truncate(db, 0);
}

/* Checkpoints once the WAL outgrows both the threshold and the main file,
 * so rewriting the main file costs at most as much again as the log. A
 * failure leaves the WAL as it was; the commit stands. */
static void maybe_checkpoint(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;

    if (storage != NULL && !storage->failed &&
        storage->wal_size > storage->checkpoint_wal_bytes &&
        storage->wal_size > storage->main_size) {
        (void)checkpoint(db);
    }
}

int engine__transaction_commit(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;
    bool wrote = storage != NULL && db->redo.size > 0;
    int rc = 0;

    if (wrote) {
        rc = storage->failed
                 ? ENGINE_EIO
                 : engine__wal_append(storage, db->redo.data, db->redo.size, 0,
                                      db->synchronous);
    }
    if (rc != 0) {
        engine__undo_rollback(db, 0);
        db->in_transaction = false;
        forget_redo(db);
        return engine__db_error(db, rc, "%s", engine_strerror(rc));
    }
    forget_redo(db);
    engine__undo_commit(db);
    db->in_transaction = false;
    if (wrote) {
        maybe_checkpoint(db);
    }
    return 0;
}
