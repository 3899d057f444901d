/* SPDX-License-Identifier: MIT
 *
 * storage_int.h: what the storage files (storage.c, redo*.c, wal.c,
 * dbfile*.c, storage_io.c, integrity.c) share. Formats: docs/formats.md.
 */
#ifndef SINEW_ENGINE_STORAGE_INT_H
#define SINEW_ENGINE_STORAGE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"
#include "storage.h"
#include "value.h"

/* Entry kinds of a commit payload (docs/formats.md). */
#define ENGINE__REDO_TABLE 'T'        /* the table of the entries after it */
#define ENGINE__REDO_INSERT 'I'       /* rowid, column count, values */
#define ENGINE__REDO_UPDATE 'U'       /* old rowid, new rowid, patches */
#define ENGINE__REDO_DELETE 'D'       /* rowid */
#define ENGINE__REDO_SCHEMA 'S'       /* DDL text */
#define ENGINE__REDO_USER_VERSION 'V' /* PRAGMA user_version value */

/* Sizes of the headers (docs/formats.md). */
#define ENGINE__WAL_HEADER_SIZE 32
#define ENGINE__WAL_RECORD_HEADER_SIZE 32
#define ENGINE__DBFILE_HEADER_SIZE 64

/* One database's files, shared by every handle of this process that has
 * the database open (storage_share.c keeps them in a registry keyed by the
 * WAL file's identity). Each handle holds its own copy of the tables and
 * remembers the position they reflect (db->seen); the fields below the
 * mutex are read and written under it. */
struct engine_storage {
    char *path;       /* the main file, owned */
    char *wal_path;   /* path + "-wal", owned */
    char *tmp_path;   /* path + "-tmp": a checkpoint being written, owned */
    int wal_fd;       /* open, and holding the database's lock */
    bool wal_created; /* this open made the WAL file */
    uint64_t device;  /* the WAL file's identity (st_dev, st_ino) */
    uint64_t inode;
    pid_t pid;                     /* the process that opened it */
    size_t handles;                /* open handles; under the registry lock */
    struct engine_storage *next;   /* in the registry */
    uint64_t checkpoint_wal_bytes; /* checkpoint past this */

    pthread_mutex_t mutex;
    pthread_cond_t changed;   /* the writer left, or a sync ended */
    struct engine_db *writer; /* the handle holding the write lock */
    /* The end of the WAL as the writer appended it, and the part of it a
     * transaction that starts now may read: up to the last commit that is
     * synced as its committer asked (docs/engine.md, "Connections"). */
    struct engine_wal_position appended;
    struct engine_wal_position visible;
    /* Bumped whenever visible moves, so a handle can tell it is current
     * without taking the mutex. */
    _Atomic uint64_t visible_version;
    uint64_t synced_seq; /* the last commit known to be on disk */
    bool syncing;        /* a handle is running the group's fsync */
    uint64_t main_size;  /* bytes of the main file */
    _Atomic bool failed; /* an fsync failed: writes refused */
};

/* ---- I/O (storage_io.c): every write and sync through the hooks ---- */

/* Writes all of bytes at offset: 0, or -errno (a short write that makes no
 * progress is -ENOSPC). */
int engine__io_write(int fd, const void *bytes, size_t size, uint64_t offset);
int engine__io_sync(int fd);
/* Syncs the directory holding path, so a rename or create in it lasts. */
int engine__io_sync_dir(const char *path);
/* Reads a whole file into *out (common_malloc'd; *size its bytes): 0,
 * -ENOENT when it does not exist, or -errno. */
int engine__io_read_file(const char *path, uint8_t **out, size_t *size);
/* The engine code for a failed write or sync: ENGINE_EFULL for a full
 * disk, ENGINE_EIO otherwise. */
int engine__io_error(int rc);

/* ---- values in files ---- */

int engine__storage_put_value(struct common_buf *buf,
                              const struct engine_value *value);
/* A value written by engine__storage_put_value(); text and blob bytes
 * point into the reader's data. ENGINE_ECORRUPT when malformed. */
int engine__storage_get_value(struct common_reader *reader,
                              struct engine_value *out);

/* ---- the WAL (wal.c) ---- */

/* Opening, for the first handle: reads the WAL and applies each whole
 * commit after position's (the main file's) to db, in order, advancing
 * position; cuts a torn tail (a last record that is incomplete or fails its
 * checksum); a damaged record followed by a whole one is ENGINE_ECORRUPT.
 * A WAL left from an older checkpoint is emptied. */
int engine__wal_recover(struct engine_db *db, struct engine_storage *storage,
                        struct engine_wal_position *position);

/* Reads the WAL's bytes [from, to) into *out (common_malloc'd). */
int engine__wal_read(const struct engine_storage *storage, uint64_t from,
                     uint64_t to, uint8_t **out);

/* Applies records (size bytes of whole commits read from the WAL at
 * position->wal_size) to db, advancing position. ENGINE_ECORRUPT unless
 * every one is whole and next in sequence. */
int engine__wal_catch_up(struct engine_db *db,
                         struct engine_wal_position *position,
                         const uint8_t *records, size_t size);

/* Writes one commit record (payload borrowed) at end and advances end; does
 * not sync. 0, or an engine code (the bytes are cut off again). */
int engine__wal_append(struct engine_storage *storage,
                       struct engine_wal_position *end, const uint8_t *payload,
                       size_t size, uint64_t stamp);

/* Cuts the WAL back to size bytes after a failed append (sets
 * storage->failed when even that fails). */
void engine__wal_cut(struct engine_storage *storage, uint64_t size);

/* Verifies the WAL's header and every record's checksum up to upto,
 * calling emit for a problem. Returns problems found. */
size_t engine__wal_verify(const struct engine_storage *storage,
                          const struct engine_wal_position *upto,
                          void (*emit)(void *ctx, const char *message),
                          void *ctx);

/* Empties the WAL for the main file of generation, and syncs it. */
int engine__wal_reset(struct engine_storage *storage, uint64_t generation);

/* ---- the main file (dbfile*.c) ---- */

/* Writes db's whole state, as of position at (its generation and last
 * commit), as a new main file at storage->tmp_path and syncs it; *size its
 * bytes. engine__dbfile_install() then puts it in place. */
int engine__dbfile_write(struct engine_db *db, struct engine_storage *storage,
                         const struct engine_wal_position *at, size_t *size);

/* Renames the file engine__dbfile_write() wrote over storage->path and
 * syncs the directory; on failure removes it. */
int engine__dbfile_install(struct engine_storage *storage);

/* Loads a main file's bytes into db (whose catalog is empty): sets
 * position's generation and commit_seq. ENGINE_ENOTADB when it is not a
 * sinew database, ENGINE_ECORRUPT when damaged. */
int engine__dbfile_load(struct engine_db *db,
                        struct engine_wal_position *position,
                        const uint8_t *bytes, size_t size);

/* Verifies a main file's bytes (every checksum and zone map) without
 * loading them, calling emit for each problem. Returns problems found. */
size_t engine__dbfile_verify(const uint8_t *bytes, size_t size,
                             void (*emit)(void *ctx, const char *message),
                             void *ctx);

/* ---- handles sharing one database (storage_share.c) ---- */

/* Finds the open database whose WAL is at wal_path, or NULL; takes a
 * handle on it. Under the registry lock (engine__storage_registry_lock). */
struct engine_storage *engine__storage_find(const char *wal_path);
void engine__storage_register(struct engine_storage *storage);
/* Drops a handle; true when it was the last (the caller frees storage,
 * which is then out of the registry). */
bool engine__storage_release(struct engine_storage *storage);
void engine__storage_registry_lock(void);
void engine__storage_registry_unlock(void);

/* Appends db's redo log as one commit (stamp stored with it), syncs it as
 * db->synchronous says (NORMAL: with the group, after releasing the write
 * lock), and makes it visible to other handles. db holds the write lock;
 * it does not when this returns. 0, or ENGINE_EIO / ENGINE_EFULL /
 * ENGINE_ETOOBIG (nothing of the commit is visible then). */
int engine__storage_commit_write(struct engine_db *db, uint64_t stamp);

/* Writes a new main file holding db's tables (all of the database: db
 * holds the write lock and has no changes of its own), installs it and
 * empties the WAL. 0, or an engine code (the files are as they were, or
 * the database refuses writes when only emptying the WAL failed). */
int engine__storage_checkpoint(struct engine_db *db);

#endif /* SINEW_ENGINE_STORAGE_INT_H */
