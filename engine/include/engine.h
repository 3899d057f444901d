/* SPDX-License-Identifier: MIT
 *
 * engine.h: sinew's SQL engine, and its manual.
 *
 * The engine speaks SQLite's SQL dialect with SQLite's semantics (dynamic
 * typing with column affinity, its comparison and sort order across types,
 * NULL rules, integer overflow to REAL, its text rendering of REALs) over
 * columnar tables, executed a batch of values at a time. Its C API follows
 * sqlite3's: a database handle, prepared statements that are bound, stepped
 * and read, and exec() for scripts.
 *
 *     struct engine_db *db;
 *     struct engine_stmt *stmt;
 *     engine_open(NULL, &db);                       in-memory database
 *     engine_exec(db, "CREATE TABLE t(a, b)", NULL, NULL);
 *     engine_prepare(db, "SELECT a FROM t WHERE b > ?", -1, &stmt, NULL);
 *     engine_bind_int64(stmt, 1, 10);
 *     while ((rc = engine_step(stmt)) == ENGINE_ROW)
 *         use(engine_column_int64(stmt, 0));
 *     engine_finalize(stmt);
 *     engine_close(db);
 *
 * Return codes: 0 for success, ENGINE_ROW / ENGINE_DONE from engine_step(),
 * and negative codes for failure (the engine's range is -10200 to -10299;
 * COMMON_ENOMEM for out of memory). After a failure engine_errmsg() holds
 * SQLite's kind of message ("near \"FROM\": syntax error",
 * "no such table: t", "NOT NULL constraint failed: t.a").
 *
 * Threads: a database handle and its statements belong to one thread at a
 * time. Separate handles are independent.
 *
 * Durability: a database opened on a path lives in that file and its
 * write-ahead log, path + "-wal" (formats: docs/formats.md). A commit
 * returns only after its WAL record is written and, as PRAGMA synchronous
 * says, synced: FULL (the default) and NORMAL sync before the commit
 * returns, OFF leaves it to the operating system. Opening replays the WAL
 * and cuts a torn tail at the last whole commit. VACUUM, and the WAL
 * outgrowing ENGINE_CHECKPOINT_WAL_BYTES, fold the WAL into a new main file
 * (written aside, synced, renamed over the old one). One handle at a time
 * may open a database: another open of the same path, in this process or
 * another, fails with ENGINE_EBUSY. A damaged file fails the open with
 * ENGINE_ECORRUPT ("database disk image is malformed") or ENGINE_ENOTADB.
 * A commit that cannot be written (ENGINE_EFULL, ENGINE_EIO) is rolled
 * back and committed data stays intact; after a failed fsync the handle
 * refuses every later write (the state of the log is no longer known) until
 * the database is reopened.
 */
#ifndef SINEW_ENGINE_H
#define SINEW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* Storage classes, numbered as SQLite's SQLITE_INTEGER ... SQLITE_NULL. */
#define ENGINE_INTEGER 1
#define ENGINE_FLOAT 2
#define ENGINE_TEXT 3
#define ENGINE_BLOB 4
#define ENGINE_NULL 5

/* engine_step() results. */
#define ENGINE_ROW 100
#define ENGINE_DONE 101

#define ENGINE_ERROR_MAP(X)                                                    \
    X(ENGINE_ESQL, -10200, "SQL error")                                        \
    X(ENGINE_ECONSTRAINT, -10201, "constraint failed")                         \
    X(ENGINE_ERANGE, -10202, "column or parameter index out of range")         \
    X(ENGINE_EMISUSE, -10203, "API called out of sequence")                    \
    X(ENGINE_ETOOBIG, -10204, "string or blob too big")                        \
    X(ENGINE_ECANTOPEN, -10205, "unable to open database")                     \
    X(ENGINE_EMISMATCH, -10206, "datatype mismatch")                           \
    X(ENGINE_EABORT, -10207, "statement aborted")                              \
    X(ENGINE_ECORRUPT, -10208, "database disk image is malformed")             \
    X(ENGINE_EIO, -10209, "disk I/O error")                                    \
    X(ENGINE_EFULL, -10210, "database or disk is full")                        \
    X(ENGINE_EBUSY, -10211, "database is locked")                              \
    X(ENGINE_ENOTADB, -10212, "file is not a database")

enum engine_error { ENGINE_ERROR_MAP(COMMON_ERROR_ENUM) };

#define ENGINE_ERROR_FIRST (-10299)
#define ENGINE_ERROR_LAST (-10200)

/* The message for an engine code; common_strerror()'s answer otherwise. */
const char *engine_strerror(int rc);

/* Limits (SQLite's defaults where SQLite has one). */
#define ENGINE_MAX_COLUMNS 2000          /* per table and per result row */
#define ENGINE_MAX_SQL_SIZE 1000000000   /* bytes of one SQL text */
#define ENGINE_MAX_LENGTH 1000000000     /* bytes of one string or blob */
#define ENGINE_MAX_EXPR_DEPTH 1000       /* nesting of one expression */
#define ENGINE_MAX_VARIABLE_NUMBER 32766 /* highest ?NNN */

struct engine_db;
struct engine_stmt;

/* Opens a database. path (borrowed for the call): NULL or ":memory:" for a
 * database in memory, else a file, created if missing. On success *out is
 * a handle the caller closes with engine_close(); on failure *out is NULL
 * and the code says why (ENGINE_ECANTOPEN, ENGINE_EBUSY, ENGINE_ECORRUPT,
 * ENGINE_ENOTADB, COMMON_ENOMEM). */
int engine_open(const char *path, struct engine_db **out);

/* The WAL size past which a commit folds the WAL into the main file. */
#define ENGINE_CHECKPOINT_WAL_BYTES (64u << 20)

/* Every write and sync of a database file goes through these (pwrite(2)
 * and fsync(2) by default), so tests can inject faults and a simulator can
 * model a disk. Each returns as the system call does (-1 and errno on
 * failure). Process-wide configuration: call before any database is open,
 * like common_heap_set(); NULL restores the defaults. The hooks (and ctx)
 * are borrowed until replaced. */
struct engine_io_hooks {
    long (*pwrite)(void *ctx, int fd, const void *bytes, size_t size,
                   int64_t offset);
    int (*fsync)(void *ctx, int fd);
    void *ctx;
};
void engine_io_hooks_set(const struct engine_io_hooks *hooks);

/* Finalizes any statements still open and frees the handle. NULL is
 * ignored. */
void engine_close(struct engine_db *db);

/* The message and code of the last failed call on db (or of its statements):
 * "not an error" and 0 after success. The message is owned by db and valid
 * until the next call on db. */
const char *engine_errmsg(const struct engine_db *db);
int engine_errcode(const struct engine_db *db);

/* Rows changed by the last INSERT, UPDATE or DELETE that completed, and by
 * all since the database was opened. */
int64_t engine_changes(const struct engine_db *db);
int64_t engine_total_changes(const struct engine_db *db);

/* The rowid of the last successful INSERT into a rowid table; 0 if none. */
int64_t engine_last_insert_rowid(const struct engine_db *db);

/* True between BEGIN and COMMIT/ROLLBACK. */
bool engine_in_transaction(const struct engine_db *db);

/* Compiles the first statement of sql (size bytes, or up to its NUL if size
 * is negative; borrowed for the call). On success *out is the statement, or
 * NULL if the text held only white space and comments; *tail (if tail is
 * not NULL) points into sql just past the statement compiled. */
int engine_prepare(struct engine_db *db, const char *sql, int size,
                   struct engine_stmt **out, const char **tail);

/* Runs a statement one step: ENGINE_ROW when a result row is ready,
 * ENGINE_DONE when finished, a negative code on error. A statement that
 * returned ENGINE_DONE or an error must be reset before it runs again. */
int engine_step(struct engine_stmt *stmt);

/* Rewinds a statement to run again; bindings are kept. Returns the error of
 * the last step, if it failed, as sqlite3_reset() does. */
int engine_reset(struct engine_stmt *stmt);

/* Frees a statement. NULL is ignored. */
void engine_finalize(struct engine_stmt *stmt);

/* The statement's SQL text (owned by the statement). */
const char *engine_sql(const struct engine_stmt *stmt);

/* True for statements that cannot change the database. */
bool engine_stmt_readonly(const struct engine_stmt *stmt);

/* Parameters are numbered from 1. ?NNN takes number NNN; ?, :name, @name and
 * $name take the next number after the largest so far, and a name used twice
 * takes the same number. Text and blobs are copied. Binding clears the
 * statement's results: bind before the first step or after a reset.
 * ENGINE_ERANGE for an index outside 1..engine_bind_parameter_count(). */
int engine_bind_parameter_count(const struct engine_stmt *stmt);

/* The index of the parameter named name (with its prefix: ":a", "@a",
 * "$a"), or 0 if there is none. */
int engine_bind_parameter_index(const struct engine_stmt *stmt,
                                const char *name);

int engine_bind_null(struct engine_stmt *stmt, int index);
int engine_bind_int64(struct engine_stmt *stmt, int index, int64_t value);
int engine_bind_double(struct engine_stmt *stmt, int index, double value);

/* size bytes of UTF-8, or up to the NUL if size is negative. */
int engine_bind_text(struct engine_stmt *stmt, int index, const char *text,
                     int size);
int engine_bind_blob(struct engine_stmt *stmt, int index, const void *bytes,
                     int size);

/* Resets every parameter to NULL. */
int engine_clear_bindings(struct engine_stmt *stmt);

/* Result columns, numbered from 0, valid after engine_prepare(). The name
 * is the alias, the column's name, or the expression's text, as SQLite
 * names them; owned by the statement. */
int engine_column_count(const struct engine_stmt *stmt);
const char *engine_column_name(const struct engine_stmt *stmt, int column);

/* The current row's values, valid after engine_step() returned ENGINE_ROW
 * until the next step, reset or finalize. Conversions follow
 * sqlite3_column_*(): a REAL read as text is rendered as SQLite renders it,
 * text read as a number is converted by SQLite's rules, NULL reads as 0,
 * 0.0 or NULL text. engine_column_text() and _blob() point into memory owned
 * by the statement; engine_column_bytes() is their size in bytes. */
int engine_column_type(struct engine_stmt *stmt, int column);
int64_t engine_column_int64(struct engine_stmt *stmt, int column);
double engine_column_double(struct engine_stmt *stmt, int column);
const char *engine_column_text(struct engine_stmt *stmt, int column);
const void *engine_column_blob(struct engine_stmt *stmt, int column);
int engine_column_bytes(struct engine_stmt *stmt, int column);

/* Called by engine_exec() for each result row: values[i] is column i as
 * text (NULL for SQL NULL), names[i] its name; both borrowed for the call.
 * Returning non-zero stops exec with ENGINE_EABORT. */
typedef int (*engine_exec_cb)(void *ctx, int column_count, char **values,
                              char **names);

/* Runs every statement of sql (NUL-terminated, borrowed) in turn, calling
 * callback (may be NULL) for each row. Stops at the first error. */
int engine_exec(struct engine_db *db, const char *sql, engine_exec_cb callback,
                void *ctx);

/* Renders a double as SQLite renders a REAL as text ("%!.15g" with ".0"
 * added to integral values): 3.0, 0.1, 1.0e+20, -0.0 as "0.0", Inf as
 * "Inf". out has room for ENGINE_REAL_TEXT_SIZE bytes; returns the length. */
#define ENGINE_REAL_TEXT_SIZE 32
size_t engine_real_to_text(double value, char *out);

/* The same rendering with another number of significant digits ("%!.Ng",
 * significant clamped to 1..26): the sqlite3 shell prints JSON numbers
 * with 20. */
size_t engine_real_to_text_digits(double value, int significant, char *out);

#endif /* SINEW_ENGINE_H */
