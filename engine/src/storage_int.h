/* SPDX-License-Identifier: MIT
 *
 * storage_int.h: what the storage files (storage.c, redo*.c, wal.c,
 * dbfile*.c, storage_io.c, integrity.c) share. Formats: docs/formats.md.
 */
#ifndef SINEW_ENGINE_STORAGE_INT_H
#define SINEW_ENGINE_STORAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct engine_storage {
    char *path;          /* the main file, owned */
    char *wal_path;      /* path + "-wal", owned */
    char *tmp_path;      /* path + "-tmp": a checkpoint being written, owned */
    int wal_fd;          /* open, and holding the database's lock */
    bool wal_created;    /* this open made the WAL file */
    uint64_t generation; /* of the main file; the WAL's must match */
    uint64_t commit_seq; /* the last commit's number */
    uint64_t wal_size;   /* bytes of whole records and header */
    uint64_t main_size;  /* bytes of the main file */
    bool failed;         /* an fsync failed: writes refused */
    uint64_t checkpoint_wal_bytes; /* checkpoint past this */
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

/* Reads the WAL at storage->wal_fd and applies each whole commit after
 * the main file's to db, in order; cuts a torn tail (a last record that is
 * incomplete or fails its checksum); a damaged record followed by a whole
 * one is ENGINE_ECORRUPT. Leaves the WAL ready for appends. */
int engine__wal_recover(struct engine_db *db, struct engine_storage *storage);

/* Appends one commit record (payload borrowed) and syncs it per
 * synchronous. 0, or an engine code (the WAL is cut back on a failed
 * write; storage->failed is set on a failed sync). */
int engine__wal_append(struct engine_storage *storage, const uint8_t *payload,
                       size_t size, uint64_t stamp, int synchronous);

/* Verifies the WAL's header and every record's checksum up to
 * storage->wal_size, calling emit for a problem. Returns problems found. */
size_t engine__wal_verify(const struct engine_storage *storage,
                          void (*emit)(void *ctx, const char *message),
                          void *ctx);

/* Empties the WAL for the main file of storage->generation. */
int engine__wal_reset(struct engine_storage *storage);

/* ---- the main file (dbfile*.c) ---- */

/* Writes db's whole state as a new main file at storage->tmp_path, syncs
 * it, renames it over storage->path and syncs the directory. Its header
 * carries generation and storage->commit_seq. */
int engine__dbfile_write(struct engine_db *db, struct engine_storage *storage,
                         uint64_t generation);

/* Loads a main file's bytes into db (whose catalog is empty): sets
 * storage->generation and commit_seq. ENGINE_ENOTADB when it is not a
 * sinew database, ENGINE_ECORRUPT when damaged. */
int engine__dbfile_load(struct engine_db *db, struct engine_storage *storage,
                        const uint8_t *bytes, size_t size);

/* Verifies a main file's bytes (every checksum and zone map) without
 * loading them, calling emit for each problem. Returns problems found. */
size_t engine__dbfile_verify(const uint8_t *bytes, size_t size,
                             void (*emit)(void *ctx, const char *message),
                             void *ctx);

#endif /* SINEW_ENGINE_STORAGE_INT_H */
