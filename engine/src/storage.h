/* SPDX-License-Identifier: MIT
 *
 * storage.h: what the rest of the engine asks of durable storage. A
 * database opened on a path lives in two files: the main file (a checkpoint:
 * the catalog and every table's rows as columnar segments) and its
 * write-ahead log (one checksummed record per commit since that checkpoint).
 * Formats: docs/formats.md.
 *
 * Tables stay the in-memory columnar store of table.h; storage makes them
 * durable. While a transaction runs, every change is also written to the
 * transaction's redo log (redo.c) next to its undo record; commit appends
 * the redo log to the WAL as one record and syncs it as PRAGMA synchronous
 * says before it returns; opening loads the main file and replays the WAL.
 * A database opened as ":memory:" (or NULL) has no files; it keeps a redo
 * log only while a commit hook wants to read it (capture.c).
 */
#ifndef SINEW_ENGINE_STORAGE_H
#define SINEW_ENGINE_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine_db;
struct engine_stmt;
struct engine_table;

/* A place in a database's history: the main file's generation, the number
 * of the last commit, and the WAL bytes up to and including it. */
struct engine_wal_position {
    uint64_t generation;
    uint64_t commit_seq;
    uint64_t wal_size;
};

/* PRAGMA synchronous levels, as SQLite numbers them. */
#define ENGINE__SYNC_OFF 0
#define ENGINE__SYNC_NORMAL 1
#define ENGINE__SYNC_FULL 2
#define ENGINE__SYNC_EXTRA 3

/* Opens the files of a database at path for db (whose catalog is empty):
 * takes the database's lock, loads the main file (or creates it), replays
 * the WAL. 0, or ENGINE_EBUSY, ENGINE_ECANTOPEN, ENGINE_ECORRUPT,
 * ENGINE_ENOTADB, ENGINE_EIO, COMMON_ENOMEM. */
int engine__storage_open(struct engine_db *db, const char *path);

/* Closes the files and releases the lock (what is committed is durable
 * already). */
void engine__storage_close(struct engine_db *db);

/* Ends the open transaction (BEGIN ... COMMIT, or an autocommit
 * statement's) durably: appends its redo log to the WAL and syncs it as
 * PRAGMA synchronous says, then forgets the undo log. When that fails (disk
 * full, an fsync error) the transaction is rolled back instead and the
 * error is recorded on db; after a failed fsync the database refuses
 * further writes until it is reopened. 0 or the error. */
int engine__transaction_commit(struct engine_db *db);

/* Several handles on one database (storage_share.c; docs/engine.md,
 * "Connections"). A statement's start calls this when db holds no snapshot:
 * db's tables become those of a new read of the database (the commits
 * made visible since are applied, or the files loaded again after a
 * checkpoint replaced them). 0, or an error recorded on db. */
int engine__storage_refresh(struct engine_db *db);

/* Whether db's tables must stay as they are: its transaction has run a
 * statement, it holds the write lock (and with it the last commit), or
 * more than self_running of its statements are running. */
bool engine__storage_holds_snapshot(const struct engine_db *db,
                                    size_t self_running);

/* Takes the database's write lock for db's transaction, waiting up to its
 * busy timeout, and brings db's tables to the last commit when may_move
 * (db holds no snapshot). No-op for ":memory:" and when db holds it.
 * 0, or ENGINE_EBUSY / an error, recorded on db. */
int engine__storage_write_begin(struct engine_db *db, bool may_move);

/* Releases the write lock if db holds it (its transaction ended). */
void engine__storage_write_end(struct engine_db *db);

/* Whether db has files (false for ":memory:"). */
bool engine__storage_is_file(const struct engine_db *db);

/* PRAGMA synchronous: read, and set (level 0..3; not persistent, as in
 * SQLite). */
int engine__storage_synchronous(const struct engine_db *db);
void engine__storage_set_synchronous(struct engine_db *db, int level);

/* PRAGMA user_version: read, and set inside the current transaction (undone
 * by ROLLBACK, made durable by COMMIT), or as its own transaction outside
 * one. 0, or an error recorded on db. */
int64_t engine__storage_user_version(const struct engine_db *db);
int engine__storage_set_user_version(struct engine_db *db, int64_t value);

/* PRAGMA integrity_check: calls emit once per problem found (a message in
 * SQLite's style, borrowed for the call), at most max_errors times; emits
 * nothing when the database is sound. Checks every table's rowid and key
 * indexes against its rows and, for a file database, re-reads both files
 * and verifies every checksum. 0, or COMMON_ENOMEM. */
int engine__storage_integrity_check(struct engine_db *db, size_t max_errors,
                                    void (*emit)(void *ctx,
                                                 const char *message),
                                    void *ctx);

/* VACUUM: outside a transaction, folds the WAL into a new main file
 * (crash-safely) and empties the WAL. A no-op for ":memory:". 0, or an
 * error recorded on db. */
int engine__storage_vacuum(struct engine_db *db);

#endif /* SINEW_ENGINE_STORAGE_H */
