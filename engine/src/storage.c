/* SPDX-License-Identifier: MIT
 *
 * storage.c: a database's files (storage.h): opening (lock, load the main
 * file, replay the WAL), closing, ending a transaction durably, VACUUM, and
 * the settings PRAGMA reads and writes. The handles of one process share
 * the files (storage_share.c).
 *
 * Locking: the WAL file, which is never replaced, carries an exclusive
 * open-file-description lock (F_OFD_SETLK) while the process has the
 * database open. Unlike a classic POSIX lock it is tied to the open file,
 * not the process, so the process's one open keeps it; a second process
 * gets ENGINE_EBUSY.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
    pthread_mutex_destroy(&storage->mutex);
    pthread_cond_destroy(&storage->changed);
    common_free(storage->path);
    common_free(storage->wal_path);
    common_free(storage->tmp_path);
    common_free(storage);
}

static int lock_wal(struct engine_storage *storage)
{
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    struct stat st;

    storage->wal_fd =
        open(storage->wal_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    storage->wal_created = storage->wal_fd >= 0;
    if (storage->wal_fd < 0 && errno == EEXIST) {
        storage->wal_fd = open(storage->wal_path, O_RDWR | O_CLOEXEC);
    }
    if (storage->wal_fd < 0 || fstat(storage->wal_fd, &st) != 0) {
        return ENGINE_ECANTOPEN;
    }
    storage->device = (uint64_t)st.st_dev;
    storage->inode = (uint64_t)st.st_ino;
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
    pthread_mutex_init(&storage->mutex, NULL);
    pthread_cond_init(&storage->changed, NULL);
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

/* Whether the WAL has any bytes. It gets its header only after a new
 * database's main file is renamed into place, and a checkpoint leaves the
 * header beside a main file holding everything, so a main file that is
 * missing or empty is a new database only beside an empty WAL; beside any
 * other it is damage, and creating over it would lose the database: the
 * open fails and loses nothing. */
static bool wal_has_bytes(const struct engine_storage *storage)
{
    struct stat st;

    return fstat(storage->wal_fd, &st) != 0 || st.st_size > 0;
}

/* Loads the main file, or creates it (generation 1, no tables) with an
 * empty WAL when there is none. */
static int load_or_create(struct engine_db *db, struct engine_storage *storage)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    int rc = engine__io_read_file(storage->path, &bytes, &size);

    if ((rc == -ENOENT || (rc == 0 && size == 0)) && wal_has_bytes(storage)) {
        rc = rc == -ENOENT ? ENGINE_ECORRUPT : ENGINE_ENOTADB;
    } else if (rc == -ENOENT || (rc == 0 && size == 0)) {
        db->seen = (struct engine_wal_position){
            .generation = 1, .wal_size = ENGINE__WAL_HEADER_SIZE};
        rc = engine__dbfile_write(db, storage, &db->seen, &size);
        rc = rc ? rc : engine__dbfile_install(storage);
        rc = rc ? rc : engine__wal_reset(storage, 1);
        if (rc == 0 && engine__io_sync_dir(storage->wal_path) != 0) {
            rc = ENGINE_EIO;
        }
    } else if (rc == 0) {
        rc = engine__dbfile_load(db, &db->seen, bytes, size);
    } else {
        rc = rc == COMMON_ENOMEM ? rc : ENGINE_ECANTOPEN;
    }
    storage->main_size = size;
    common_free(bytes);
    return rc;
}

/* The first handle on a database in this process: locks the files against
 * other processes, loads and recovers them. */
static int storage_first_open(struct engine_db *db, const char *path)
{
    struct engine_storage *storage;
    int rc = storage_new(path, &storage);

    if (rc == 0 && unlink(storage->tmp_path) != 0 && errno != ENOENT) {
        rc = ENGINE_ECANTOPEN;
    }
    db->replaying = true;
    rc = rc ? rc : load_or_create(db, storage);
    rc = rc ? rc : engine__wal_recover(db, storage, &db->seen);
    db->replaying = false;
    if (rc != 0) {
        /* A file that is not a database (or cannot be one) is left as it
         * was found: without a WAL this open made. */
        if (storage != NULL && storage->wal_created) {
            unlink(storage->wal_path);
        }
        storage_free(storage);
        return rc;
    }
    storage->appended = storage->visible = db->seen;
    storage->synced_seq = db->seen.commit_seq;
    /* Version 0 is that of a handle that has loaded nothing yet. */
    storage->visible_version = db->seen_version = 1;
    engine__storage_register(storage);
    db->storage = storage;
    return 0;
}

int engine__storage_open(struct engine_db *db, const char *path)
{
    char *wal_path = path_with(path, "-wal");
    struct engine_storage *storage;
    int rc;

    if (wal_path == NULL) {
        return COMMON_ENOMEM;
    }
    engine__storage_registry_lock();
    storage = engine__storage_find(wal_path);
    common_free(wal_path);
    if (storage == NULL) {
        rc = storage_first_open(db, path);
        engine__storage_registry_unlock();
        db->capture = rc == 0;
        return rc;
    }
    engine__storage_registry_unlock();
    db->storage = storage;
    db->capture = true;
    /* Another handle has it open: load what it made visible. */
    rc = engine__storage_refresh(db);
    if (rc != 0) {
        engine__storage_close(db);
    }
    return rc;
}

void engine__storage_close(struct engine_db *db)
{
    bool last;

    if (db->storage == NULL) {
        return;
    }
    engine__storage_write_end(db);
    engine__storage_registry_lock();
    last = engine__storage_release(db->storage);
    engine__storage_registry_unlock();
    if (last) {
        storage_free(db->storage);
    }
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
    int rc = engine__storage_write_begin(db, false);

    if (rc != 0) {
        return rc;
    }
    rc = engine__undo_record(db, ENGINE_UNDO_USER_VERSION, NULL, 0);

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
    if (engine__db_running_statements(db) > 1) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot VACUUM - SQL statements in progress");
    }
    rc = engine__storage_write_begin(db, true);
    if (rc != 0) {
        return rc;
    }
    rc = engine__storage_checkpoint(db);
    engine__storage_write_end(db);
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

int engine__transaction_commit(struct engine_db *db)
{
    uint64_t stamp = 0;
    /* Change capture (capture.c): the commit hook may add rows, give the
     * stamp, or veto (the transaction is then already rolled back). */
    int rc = engine__capture_commit(db, &stamp);
    bool wrote = rc == 0 && db->storage != NULL && db->redo.size > 0;

    if (rc != 0) {
        forget_redo(db);
        engine__storage_write_end(db);
        return rc;
    }
    rc = wrote ? engine__storage_commit_write(db, stamp) : 0;
    if (rc != 0) {
        engine__undo_rollback(db, 0);
        db->in_transaction = false;
        forget_redo(db);
        engine__storage_write_end(db);
        return engine__db_error(db, rc, "%s", engine_strerror(rc));
    }
    forget_redo(db);
    engine__undo_commit(db);
    db->in_transaction = false;
    engine__storage_write_end(db);
    return 0;
}
