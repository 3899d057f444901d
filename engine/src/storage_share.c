/* SPDX-License-Identifier: MIT
 *
 * storage_share.c: several handles on one database in one process, from
 * several threads.
 *
 * The files, the write lock and the WAL's end are shared: one struct
 * engine_storage per database, found through a registry keyed by the WAL
 * file's device and inode (the WAL is never replaced; the main file is, by
 * every checkpoint). Each handle keeps its own copy of the tables and the
 * WAL position they reflect (db->seen). The rules are those of SQLite's WAL
 * mode (https://www.sqlite.org/wal.html, "Concurrency", and isolation.html):
 *
 *  - Readers never wait for the writer: a handle reads its own copy, which
 *    moves only when it holds no snapshot (outside a transaction that has
 *    run a statement, and with no other statement of it running): then a
 *    statement's start applies the commits made visible since (or reloads
 *    the files after a checkpoint replaced them).
 *  - One writer at a time: the first write of a transaction takes the lock,
 *    waiting up to the handle's busy timeout; it fails with ENGINE_EBUSY
 *    when another handle keeps the lock, or when this handle's snapshot is
 *    older than the last commit and cannot move (SQLite's
 *    SQLITE_BUSY_SNAPSHOT).
 *  - Group commit (PRAGMA synchronous=NORMAL): a committer appends its
 *    record, releases the lock, then waits until an fsync covers its
 *    record; one committer runs the fsync for all that wait (the leader /
 *    follower scheme of group commit in the literature, e.g. DeWitt et al.,
 *    "Implementation techniques for main memory database systems", 1984).
 *    A commit becomes visible to other handles once synced.
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine_int.h"
#include "storage_int.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine_storage *registry;

void engine__storage_registry_lock(void)
{
    pthread_mutex_lock(&registry_lock);
}

void engine__storage_registry_unlock(void)
{
    pthread_mutex_unlock(&registry_lock);
}

struct engine_storage *engine__storage_find(const char *wal_path)
{
    struct stat st;

    if (stat(wal_path, &st) != 0) {
        return NULL;
    }
    /* A child process inherits the registry but not the right to use the
     * parent's files: it opens its own (and finds them locked). */
    for (struct engine_storage *s = registry; s != NULL; s = s->next) {
        if (s->pid == getpid() && s->device == (uint64_t)st.st_dev &&
            s->inode == (uint64_t)st.st_ino) {
            s->handles++;
            return s;
        }
    }
    return NULL;
}

void engine__storage_register(struct engine_storage *storage)
{
    storage->pid = getpid();
    storage->handles = 1;
    storage->next = registry;
    registry = storage;
}

bool engine__storage_release(struct engine_storage *storage)
{
    struct engine_storage **link = &registry;

    ASSERT(storage->handles > 0);
    if (--storage->handles > 0) {
        return false;
    }
    while (*link != NULL && *link != storage) {
        link = &(*link)->next;
    }
    if (*link != NULL) {
        *link = storage->next;
    }
    return true;
}

/* Applies committed bytes to db's tables as a replay: no undo, no redo, no
 * commit of their own. A transaction begun without having read anything
 * yet (BEGIN, then this first statement) has no changes to protect. */
static int apply_records(struct engine_db *db, const uint8_t *bytes,
                         size_t size)
{
    bool in_transaction = db->in_transaction;
    int rc;

    ASSERT(db->undo_count == 0);
    db->in_transaction = false;
    db->replaying = true;
    rc = engine__wal_catch_up(db, &db->seen, bytes, size);
    db->replaying = false;
    db->in_transaction = in_transaction;
    return rc;
}

/* Replaces db's tables with the main file's, then applies the WAL's
 * records up to wal (its bytes after the header). */
static int reload(struct engine_db *db, const uint8_t *main_bytes,
                  size_t main_size, const uint8_t *wal, size_t wal_size)
{
    bool in_transaction = db->in_transaction, capture = db->capture;
    int rc;

    engine__db_catalog_clear(db);
    db->in_transaction = false;
    db->replaying = true;
    db->capture = false;
    rc = engine__dbfile_load(db, &db->seen, main_bytes, main_size);
    db->seen.wal_size = ENGINE__WAL_HEADER_SIZE;
    db->capture = capture;
    db->replaying = false;
    db->in_transaction = in_transaction;
    rc = rc ? rc : apply_records(db, wal, wal_size);
    if (rc != 0) {
        /* Half loaded: the next statement loads again from scratch. */
        db->seen.generation = 0;
    }
    return rc;
}

/* Brings db's tables to target. Called with the storage's mutex held;
 * returns with it released. */
static int move_to(struct engine_db *db, struct engine_wal_position target)
{
    struct engine_storage *storage = db->storage;
    uint8_t *main_bytes = NULL, *wal = NULL;
    size_t main_size = 0;
    int rc;

    if (db->seen.generation == target.generation) {
        if (db->seen.wal_size >= target.wal_size) {
            pthread_mutex_unlock(&storage->mutex);
            return 0;
        }
        rc =
            engine__wal_read(storage, db->seen.wal_size, target.wal_size, &wal);
        pthread_mutex_unlock(&storage->mutex);
        rc = rc ? rc
                : apply_records(db, wal,
                                (size_t)(target.wal_size - db->seen.wal_size));
        common_free(wal);
        return rc;
    }
    /* A checkpoint replaced the files (or db has loaded nothing yet): read
     * both while no checkpoint can replace them again. */
    rc = engine__io_read_file(storage->path, &main_bytes, &main_size);
    rc = rc == 0 || rc == COMMON_ENOMEM ? rc : ENGINE_EIO;
    rc = rc ? rc
            : engine__wal_read(storage, ENGINE__WAL_HEADER_SIZE,
                               target.wal_size, &wal);
    pthread_mutex_unlock(&storage->mutex);
    rc = rc ? rc
            : reload(db, main_bytes, main_size, wal,
                     (size_t)(target.wal_size - ENGINE__WAL_HEADER_SIZE));
    common_free(main_bytes);
    common_free(wal);
    return rc;
}

int engine__storage_refresh(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;
    uint64_t version;
    int rc;

    if (storage == NULL || db->replaying ||
        atomic_load(&storage->visible_version) == db->seen_version) {
        return 0;
    }
    pthread_mutex_lock(&storage->mutex);
    version = storage->visible_version;
    rc = move_to(db, storage->visible);
    if (rc != 0) {
        return engine__db_error(db, rc, "%s", engine_strerror(rc));
    }
    db->seen_version = version;
    return 0;
}

bool engine__storage_holds_snapshot(const struct engine_db *db,
                                    size_t self_running)
{
    return (db->in_transaction && db->txn_read) || db->writing ||
           engine__db_running_statements(db) > self_running;
}

static void deadline_after(struct timespec *deadline, int timeout_ms)
{
    clock_gettime(CLOCK_REALTIME, deadline);
    deadline->tv_sec += timeout_ms / 1000;
    deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

/* Waits (mutex held) until no handle writes, for up to the busy timeout.
 * False when one still does. */
static bool wait_for_writer(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;
    struct timespec deadline;

    if (storage->writer == NULL) {
        return true;
    }
    if (db->busy_timeout_ms <= 0) {
        return false;
    }
    deadline_after(&deadline, db->busy_timeout_ms);
    while (storage->writer != NULL) {
        if (pthread_cond_timedwait(&storage->changed, &storage->mutex,
                                   &deadline) == ETIMEDOUT) {
            return storage->writer == NULL;
        }
    }
    return true;
}

static bool same_position(const struct engine_wal_position *a,
                          const struct engine_wal_position *b)
{
    return a->generation == b->generation && a->commit_seq == b->commit_seq;
}

/* Checkpoints once the WAL outgrows both the threshold and the main file,
 * so rewriting the main file costs at most as much again as the log. The
 * writer that finds it so does it before its own changes (the tables are
 * then exactly the last commit). A failure leaves the files as they were. */
static void maybe_checkpoint(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;

    if (db->undo_count == 0 && !storage->failed &&
        db->seen.wal_size > storage->checkpoint_wal_bytes &&
        db->seen.wal_size > storage->main_size) {
        (void)engine__storage_checkpoint(db);
    }
}

int engine__storage_write_begin(struct engine_db *db, bool may_move)
{
    struct engine_storage *storage = db->storage;
    int rc;

    if (storage == NULL || db->writing || db->replaying) {
        return 0;
    }
    pthread_mutex_lock(&storage->mutex);
    if (!wait_for_writer(db)) {
        pthread_mutex_unlock(&storage->mutex);
        return engine__db_error(db, ENGINE_EBUSY, "database is locked");
    }
    if (storage->failed) {
        pthread_mutex_unlock(&storage->mutex);
        return engine__db_error(db, ENGINE_EIO, "disk I/O error");
    }
    if (!same_position(&db->seen, &storage->appended) && !may_move) {
        /* This snapshot read rows a later commit changed. */
        pthread_mutex_unlock(&storage->mutex);
        return engine__db_error(db, ENGINE_EBUSY, "database is locked");
    }
    storage->writer = db;
    db->writing = true;
    /* Holding the lock, nobody appends or checkpoints: read the commits
     * not yet applied here, even those still waiting for their sync. */
    rc = move_to(db, storage->appended);
    if (rc != 0) {
        engine__storage_write_end(db);
        return engine__db_error(db, rc, "%s", engine_strerror(rc));
    }
    maybe_checkpoint(db);
    return 0;
}

void engine__storage_write_end(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;

    /* Replaying runs DDL statements, which end their own transactions:
     * not the one holding the lock. */
    if (storage == NULL || !db->writing || db->replaying) {
        return;
    }
    pthread_mutex_lock(&storage->mutex);
    storage->writer = NULL;
    pthread_cond_broadcast(&storage->changed);
    pthread_mutex_unlock(&storage->mutex);
    db->writing = false;
}

/* Makes position visible to new reads (mutex held) unless a newer one
 * already is. */
static void publish(struct engine_storage *storage,
                    const struct engine_wal_position *position)
{
    if (position->commit_seq > storage->visible.commit_seq ||
        position->generation > storage->visible.generation) {
        storage->visible = *position;
        atomic_fetch_add(&storage->visible_version, 1);
    }
}

/* Waits until an fsync covers commit_seq, running it when no other handle
 * is; one fsync covers every record appended before it starts. */
static int group_sync(struct engine_storage *storage, uint64_t commit_seq)
{
    bool synced;

    pthread_mutex_lock(&storage->mutex);
    while (storage->synced_seq < commit_seq && !storage->failed) {
        struct engine_wal_position upto = storage->appended;
        int rc;

        if (storage->syncing) {
            pthread_cond_wait(&storage->changed, &storage->mutex);
            continue;
        }
        storage->syncing = true;
        pthread_mutex_unlock(&storage->mutex);
        rc = engine__io_sync(storage->wal_fd);
        pthread_mutex_lock(&storage->mutex);
        storage->syncing = false;
        if (rc != 0) {
            storage->failed = true;
        } else if (upto.commit_seq > storage->synced_seq) {
            storage->synced_seq = upto.commit_seq;
            publish(storage, &upto);
        }
        pthread_cond_broadcast(&storage->changed);
    }
    synced = storage->synced_seq >= commit_seq;
    pthread_mutex_unlock(&storage->mutex);
    return synced ? 0 : ENGINE_EIO;
}

int engine__storage_commit_write(struct engine_db *db, uint64_t stamp)
{
    struct engine_storage *storage = db->storage;
    struct engine_wal_position end = db->seen;
    int rc;

    ASSERT(db->writing && same_position(&db->seen, &storage->appended));
    if (storage->failed) {
        return ENGINE_EIO;
    }
    rc = engine__wal_append(storage, &end, db->redo.data, db->redo.size, stamp);
    if (rc != 0) {
        return rc;
    }
    if (db->synchronous >= ENGINE__SYNC_FULL &&
        engine__io_sync(storage->wal_fd) != 0) {
        /* Which of the record's pages reached the disk is unknown (and
         * Linux may forget the error), so it is cut off and the database
         * takes no more writes. */
        engine__wal_cut(storage, db->seen.wal_size);
        storage->failed = true;
        return ENGINE_EIO;
    }
    pthread_mutex_lock(&storage->mutex);
    storage->appended = end;
    if (db->synchronous != ENGINE__SYNC_NORMAL) {
        if (db->synchronous >= ENGINE__SYNC_FULL) {
            storage->synced_seq = end.commit_seq;
        }
        publish(storage, &end);
    }
    storage->writer = NULL;
    pthread_cond_broadcast(&storage->changed);
    pthread_mutex_unlock(&storage->mutex);
    db->writing = false;
    db->seen = end;
    if (db->synchronous == ENGINE__SYNC_NORMAL) {
        return group_sync(storage, end.commit_seq);
    }
    return 0;
}

int engine__storage_checkpoint(struct engine_db *db)
{
    struct engine_storage *storage = db->storage;
    struct engine_wal_position at = db->seen;
    size_t size = 0;
    int rc;

    ASSERT(db->writing && db->undo_count == 0);
    at.generation++;
    at.wal_size = ENGINE__WAL_HEADER_SIZE;
    rc = engine__dbfile_write(db, storage, &at, &size);
    if (rc != 0) {
        return rc;
    }
    /* Installing the file and emptying the WAL happen under the mutex, so a
     * handle that loads reads both files of one generation. */
    pthread_mutex_lock(&storage->mutex);
    rc = engine__dbfile_install(storage);
    if (rc == 0) {
        /* The new main file holds (and has synced) every commit: those
         * waiting for a sync are done. */
        storage->main_size = size;
        storage->appended = at;
        storage->synced_seq = at.commit_seq;
        publish(storage, &at);
        db->seen = at;
        /* After the rename the old WAL no longer matches the main file;
         * if it cannot be emptied, appending to it would write commits
         * that recovery discards, so the database stops writing. */
        if (engine__wal_reset(storage, at.generation) != 0) {
            storage->failed = true;
            rc = ENGINE_EIO;
        }
        pthread_cond_broadcast(&storage->changed);
    }
    pthread_mutex_unlock(&storage->mutex);
    return rc;
}
