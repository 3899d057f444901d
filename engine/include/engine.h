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
 * time. Separate handles may run in separate threads at once, on one file
 * too (see engine_open(), "Connections").
 *
 * Durability: a database opened on a path lives in that file and its
 * write-ahead log, path + "-wal" (formats: docs/formats.md). A commit
 * returns only after its WAL record is written and, as PRAGMA synchronous
 * says, synced: FULL (the default) syncs each commit under the write lock;
 * NORMAL is group commit: the committer releases the lock, and handles
 * committing meanwhile share one fsync, none returning before its record
 * is synced; OFF leaves syncing to the operating system. Opening replays
 * the WAL and cuts a torn tail at the last whole commit. VACUUM, and the
 * WAL outgrowing ENGINE_CHECKPOINT_WAL_BYTES, fold the WAL into a new main
 * file (written aside, synced, renamed over the old one). The handles of
 * one process share the files; another process's open fails with
 * ENGINE_EBUSY. A damaged file fails the open with
 * ENGINE_ECORRUPT ("database disk image is malformed") or ENGINE_ENOTADB.
 * A commit that cannot be written (ENGINE_EFULL, ENGINE_EIO) is rolled
 * back and committed data stays intact; after a failed fsync the database
 * refuses every later write (the state of the log is no longer known) until
 * every handle has closed it and it is opened again.
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
    X(ENGINE_ENOTADB, -10212, "file is not a database")                        \
    X(ENGINE_ENOTFOUND, -10213, "no such row")

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
 * database in memory (each such handle has its own), else a file, created
 * if missing. On success *out is a handle the caller closes with
 * engine_close(); on failure *out is NULL and the code says why
 * (ENGINE_ECANTOPEN, ENGINE_EBUSY, ENGINE_ECORRUPT, ENGINE_ENOTADB,
 * COMMON_ENOMEM).
 *
 * Connections: a file may be opened by several handles of one process, and
 * each handle may be used by one thread at a time (different handles from
 * different threads at once). Like SQLite in WAL mode: a read transaction
 * (a statement outside BEGIN, or BEGIN ... COMMIT from its first statement
 * after BEGIN) sees the database as of its start and never waits for a
 * writer; one handle writes at a time: the first write of a transaction
 * (or BEGIN IMMEDIATE / EXCLUSIVE) takes the write lock, waiting up to the
 * busy timeout, else fails with ENGINE_EBUSY, which it also does when the
 * transaction read rows a later commit changed (retry the transaction).
 * A commit is visible to other handles once it is durable. Another process
 * opening a file this one has open gets ENGINE_EBUSY. Each handle holds
 * its own copy of the tables in memory. */
int engine_open(const char *path, struct engine_db **out);

/* How long a write waits for another handle's write lock before failing
 * with ENGINE_EBUSY: 0 (the default, as in SQLite) fails at once. */
void engine_busy_timeout(struct engine_db *db, int timeout_ms);

/* The WAL size past which the next writer first folds the WAL into the
 * main file. */
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

/* The JIT (docs/engine.md, "JIT"): a query whose leading operators are a
 * full scan of one table, a WHERE of comparisons, IN lists and NULL tests
 * over integer columns, and count/sum/min/max without GROUP BY runs as
 * compiled x86-64 code when the table is large enough; anything else, and
 * any value the code does not take, runs in the interpreter, with the
 * same results. PRAGMA jit = on|off switches it for the handle (on by
 * default); PRAGMA jit_stats shows the numbers below. */
enum engine_jit_use {
    ENGINE_JIT_UNUSED,    /* the interpreter ran every operator */
    ENGINE_JIT_ROW_COUNT, /* count(*) of a whole table, from its row count */
    ENGINE_JIT_COMPILED,  /* compiled code ran a scan, filter and aggregate */
};

/* How the statement's last (or current) execution used the JIT. */
enum engine_jit_use engine_stmt_jit_use(const struct engine_stmt *stmt);

struct engine_jit_stats {
    uint64_t compiles;         /* kernels compiled */
    uint64_t compile_ns;       /* time spent compiling them */
    uint64_t code_bytes;       /* bytes of code installed now */
    uint64_t runs_compiled;    /* executions the JIT answered */
    uint64_t runs_interpreted; /* executions of a plan the JIT covers that
                                  it left to the interpreter: JIT off, a
                                  small table, a value it does not take, a
                                  sum that overflowed */
};

/* The handle's JIT counters since it was opened. */
void engine_jit_stats(const struct engine_db *db, struct engine_jit_stats *out);

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

/* ==== Change capture: the commit hook, stamps, system tables, apply ====
 *
 * The seam the replication layer is built on (docs/engine.md, "Change
 * capture"). Four pieces:
 *
 * 1. The commit hook (engine_commit_hook_set). Every commit of a
 *    transaction that changed a user table or the schema calls it, inside
 *    the transaction: after its last statement, before its WAL record is
 *    written. The hook reads the transaction's changes in the order they
 *    happened (engine_commit_next), may write more rows in the same
 *    transaction by running SQL on db (they commit with it, atomically, and
 *    are not shown to the hook), may give the commit a stamp
 *    (engine_commit_set_stamp), and may veto the commit by returning an
 *    error: the whole transaction is then rolled back, nothing is written,
 *    and COMMIT (or the autocommit statement) fails with the hook's error.
 *
 *        static int hook(void *ctx, struct engine_db *db,
 *                        struct engine_commit *commit)
 *        {
 *            struct engine_change change;
 *            int rc;
 *
 *            while ((rc = engine_commit_next(commit, &change)) == ENGINE_ROW)
 *                record(ctx, &change);          copy what it keeps
 *            if (rc != ENGINE_DONE)
 *                return rc;
 *            engine_commit_set_stamp(commit, hlc_now(ctx));
 *            return engine_exec(db, "INSERT INTO sinew_log ...", NULL, NULL);
 *        }
 *
 * 2. Stamps. A commit can carry an opaque 64-bit stamp (the replication
 *    layer's HLC): the hook sets it, or engine_apply_transaction() is given
 *    it. It is written in the commit's WAL record header and kept in the
 *    hidden table sinew_engine_stamp (one row), so engine_last_stamp()
 *    answers it after a reopen, a checkpoint or VACUUM, and it is part of
 *    the transaction (a rolled-back commit leaves the previous stamp).
 *
 * 3. System tables. Names that start with "sinew_" (any case; SQLite
 *    reserves "sqlite_" the same way) belong to modules that keep metadata
 *    in the database. User SQL cannot create or drop them, nor index them
 *    ("object name reserved for internal use: sinew_x", "table sinew_x may
 *    not be dropped", "table sinew_x may not be indexed"); a module creates
 *    them with engine_exec_system(). They are not listed by sqlite_schema
 *    (nor by the shell's .tables), are read and written by name through
 *    ordinary SQL (writing them is the owning module's business: nothing
 *    stops user SQL from doing it), persist like any table, and their row
 *    and schema changes are never shown to the commit hook. Names that
 *    start with "sinew_engine_" are the engine's own.
 *
 * 4. The apply path. engine_apply() writes changes that came from
 *    elsewhere (the representation the hook reads) in one transaction, all
 *    or nothing, without calling the hook, with a stamp; it is durable when
 *    it returns, as PRAGMA synchronous says. engine_apply_transaction()
 *    runs the caller's own function as such a transaction, for a merge that
 *    reads the current rows and its metadata first and then writes only the
 *    winning columns (engine_apply_change) and its metadata rows (SQL).
 *
 * What a change says. A row change names its table and the row's key: the
 * values of the table's declared PRIMARY KEY columns in key order, or, for
 * a table without one (or whose PRIMARY KEY is its INTEGER PRIMARY KEY
 * rowid), the rowid as one INTEGER. An INSERT carries every column's
 * value; an UPDATE only the columns whose value changed (an UPDATE that
 * changed none is not shown); a DELETE only the key. A statement that
 * changes a row's key (its PRIMARY KEY columns, or the rowid of a table
 * keyed by rowid) is shown as DELETE of the old key then INSERT of the
 * whole new row. A schema change (CREATE/DROP TABLE/INDEX) carries the
 * statement's text. Changes undone by ROLLBACK TO, or by a statement that
 * failed, are not shown; PRAGMA user_version is not a change. Columns are
 * numbered from 0 in table order, as PRAGMA table_info lists them. */

/* What a change does. */
enum engine_change_kind {
    ENGINE_CHANGE_INSERT = 1, /* a row: its key and every column */
    ENGINE_CHANGE_UPDATE = 2, /* a row's changed columns, new values */
    ENGINE_CHANGE_DELETE = 3, /* a row, by key */
    ENGINE_CHANGE_SCHEMA = 4, /* CREATE/DROP TABLE/INDEX: sql */
};

/* One SQL value in a change. */
struct engine_change_value {
    int type;          /* ENGINE_INTEGER ... ENGINE_NULL */
    int64_t integer;   /* ENGINE_INTEGER */
    double real;       /* ENGINE_FLOAT */
    const void *bytes; /* ENGINE_TEXT (UTF-8, not NUL-terminated) and
                          ENGINE_BLOB; may be NULL when size is 0 */
    size_t size;       /* bytes of a text or blob */
};

/* One change. Handed out by engine_commit_next() (every pointer borrowed
 * from the commit, valid until the next engine_commit_next() or
 * engine_commit_rewind() call, or until the hook runs SQL on db), and
 * taken by engine_apply_change() (borrowed for the call). */
struct engine_change {
    enum engine_change_kind kind;
    const char *table; /* NUL-terminated; NULL for ENGINE_CHANGE_SCHEMA */
    const struct engine_change_value *key; /* key_count values */
    size_t key_count;
    /* The columns written: values[i] is column columns[i]'s new value.
     * INSERT: every column (applying one, columns may be NULL: values in
     * table order); UPDATE: the changed ones; DELETE, SCHEMA: none. */
    const size_t *columns;
    const struct engine_change_value *values;
    size_t value_count;
    const char *sql; /* ENGINE_CHANGE_SCHEMA: the statement; else NULL */
};

/* The committing transaction, as the commit hook sees it. */
struct engine_commit;

/* The commit hook: 0 lets the commit go on; an error vetoes it (a positive
 * value is taken as ENGINE_EABORT). It may run SQL on db (but not BEGIN,
 * COMMIT, ROLLBACK or a RELEASE that ends the transaction: that fails the
 * commit and rolls everything back), and must not call
 * engine_commit_hook_set() or engine_apply*(). */
typedef int (*engine_commit_hook_cb)(void *ctx, struct engine_db *db,
                                     struct engine_commit *commit);

/* Registers hook (NULL: none) with ctx (borrowed until replaced) on db,
 * replacing any other. While a hook is set, the changes of every
 * transaction are recorded as it runs, also on a ":memory:" database.
 * ENGINE_EMISUSE inside a transaction. */
int engine_commit_hook_set(struct engine_db *db, engine_commit_hook_cb hook,
                           void *ctx);

/* The next change of the committing transaction, in order: ENGINE_ROW with
 * *out filled, ENGINE_DONE after the last, or an error (COMMON_ENOMEM).
 * Changes the hook itself writes are never shown. */
int engine_commit_next(struct engine_commit *commit, struct engine_change *out);

/* Starts engine_commit_next() over from the first change. */
void engine_commit_rewind(struct engine_commit *commit);

/* Gives the commit a stamp (0: none), written with its WAL record and
 * answered by engine_last_stamp() once it has committed. */
void engine_commit_set_stamp(struct engine_commit *commit, uint64_t stamp);

/* Records the message COMMIT fails with when the hook returns rc (an
 * error), and returns rc: return engine_commit_veto(commit, rc, "not the
 * writer"). A hook that returns an error without it fails the commit with
 * "commit hook failed: " and the error's message. */
int engine_commit_veto(struct engine_commit *commit, int rc, const char *format,
                       ...) __attribute__((format(printf, 3, 4)));

/* The stamp of the last committed transaction that carried one, as this
 * handle sees the database (0 if none ever did). */
uint64_t engine_last_stamp(struct engine_db *db);

/* A number that changes whenever the schema this handle sees changes: its
 * own DDL, DDL undone by a rollback, another handle's DDL once this handle
 * has caught up with it. A module that caches what it learned about the
 * tables (their columns, their keys) keeps the number with it and learns
 * again when it differs. */
uint64_t engine_schema_version(const struct engine_db *db);

/* The prefix of system table names. */
#define ENGINE_SYSTEM_PREFIX "sinew_"

/* engine_exec() that may also create, drop and index system tables (an
 * index on a system table must have a system name too). For modules only;
 * user SQL goes through engine_exec(). */
int engine_exec_system(struct engine_db *db, const char *sql,
                       engine_exec_cb callback, void *ctx);

/* Runs fn(ctx, db) as one transaction whose changes came from elsewhere:
 * BEGIN, fn, then COMMIT if fn returned 0 (the commit hook is not called,
 * and the WAL record carries stamp, 0 for none), else ROLLBACK and fn's
 * error. fn reads and writes with SQL and engine_apply_change() on db;
 * it must not end the transaction itself (the call then fails with
 * ENGINE_EMISUSE, rolled back). Durable when it returns 0, as PRAGMA
 * synchronous says. ENGINE_EMISUSE inside a transaction or a hook. */
typedef int (*engine_apply_cb)(void *ctx, struct engine_db *db);
int engine_apply_transaction(struct engine_db *db, uint64_t stamp,
                             engine_apply_cb fn, void *ctx);

/* Writes one change (borrowed for the call) in the open transaction, as
 * one statement (it fails whole, undoing only itself): INSERT adds the row
 * (its key must be free: ENGINE_ECONSTRAINT otherwise); UPDATE sets the
 * given columns of the row with that key and DELETE removes it
 * (ENGINE_ENOTFOUND when there is none); SCHEMA runs the statement, which
 * must be exactly one CREATE or DROP of a table or index. Values get the
 * columns' affinity, and constraints are checked, as SQL's. Inside
 * engine_apply_transaction() the hook never sees it; elsewhere it is an
 * ordinary write of the transaction. ENGINE_ESQL for an unknown table or
 * column, a key that does not fit the table, a system table (changes from
 * elsewhere never touch a module's tables), or a SCHEMA text that is not
 * one such statement. */
int engine_apply_change(struct engine_db *db,
                        const struct engine_change *change);

/* engine_apply_transaction() of changes[0..count) (borrowed for the call),
 * in order: all of them commit, or (at the first that fails) none. */
int engine_apply(struct engine_db *db, const struct engine_change *changes,
                 size_t count, uint64_t stamp);

#endif /* SINEW_ENGINE_H */
