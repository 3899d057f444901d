/* SPDX-License-Identifier: MIT
 *
 * transfer_int.h: the pieces of import and export, for their own files.
 *
 * One copy algorithm (transfer_copy.c) runs in both directions over two
 * "ends": a database reached through its C API, described by a table of
 * functions in the manner of Redis's ConnectionType. transfer_sqlite.c is
 * the libsqlite3 end and transfer_engine.c the sinew engine end; import is
 * a copy from the first to the second and export the reverse
 * (transfer_run.c), so every value goes through the same
 * read-with-its-own-type, bind-with-that-type path both ways.
 * transfer_sql.c writes the statements the copy runs, transfer_progress.c
 * draws the progress bar.
 */
#ifndef SINEW_NODE_TRANSFER_INT_H
#define SINEW_NODE_TRANSFER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "engine.h"
#include "transfer.h"

/* Storage classes, numbered as SQLite's (and the engine's) are. */
#define TRANSFER_INTEGER ENGINE_INTEGER
#define TRANSFER_FLOAT ENGINE_FLOAT
#define TRANSFER_TEXT ENGINE_TEXT
#define TRANSFER_BLOB ENGINE_BLOB
#define TRANSFER_NULL ENGINE_NULL

/* step() results, equal to SQLITE_ROW and SQLITE_DONE. */
#define TRANSFER_ROW ENGINE_ROW
#define TRANSFER_DONE ENGINE_DONE

/* One value of a row. bytes is borrowed from the statement it was read
 * from, valid until that statement steps again; for TEXT and BLOB it is
 * never NULL, also when size is 0 (both libraries bind NULL for a NULL
 * pointer, which would turn an empty blob into NULL). */
struct transfer_value {
    int type; /* TRANSFER_INTEGER ... TRANSFER_NULL */
    int64_t integer;
    double real;
    const void *bytes;
    size_t size;
};

struct transfer_end;

/* What a copy needs of a database. Every call that can fail returns 0 (or
 * TRANSFER_ROW / TRANSFER_DONE) or a negative code, and errmsg() then
 * says why. A statement is a void * owned by the end's library. */
struct transfer_end_ops {
    /* Runs one statement (sql borrowed) that returns no rows. */
    int (*exec)(struct transfer_end *end, const char *sql);
    int (*prepare)(struct transfer_end *end, const char *sql, void **out);
    int (*step)(void *stmt);
    int (*reset)(void *stmt);
    int (*column_count)(void *stmt);
    /* Owned by the statement. */
    const char *(*column_name)(void *stmt, int column);
    /* Reads column (from 0) of the current row into *out. */
    int (*column)(void *stmt, int column, struct transfer_value *out);
    /* Binds *value (borrowed until the statement next steps) to the
     * parameter index (from 1). */
    int (*bind)(void *stmt, int index, const struct transfer_value *value);
    void (*finalize)(void *stmt); /* NULL is ignored */
    /* The message of the end's last failure, rc being its code. */
    const char *(*errmsg)(const struct transfer_end *end, int rc);
    void (*close)(struct transfer_end *end);
};

struct transfer_end {
    const struct transfer_end_ops *ops;
    void *db; /* sqlite3 * or struct engine_db *, owned by the end */
};

/* Opens the SQLite database at path (borrowed): read-only, or read-write
 * on a file that exists (the claimed, empty target). On failure writes a
 * message to error. */
int transfer_sqlite_open(const char *path, bool is_writable,
                         struct transfer_end *out, char *error,
                         size_t error_size);

/* Opens the sinew database at path (borrowed), as transfer_sqlite_open. */
int transfer_engine_open(const char *path, struct transfer_end *out,
                         char *error, size_t error_size);

/* The side files each kind of database may create beside its path
 * (NULL-terminated): the target must have none of them beforehand, and a
 * failed run removes them with it. */
extern const char *const transfer_sqlite_suffixes[];
extern const char *const transfer_engine_suffixes[];

/* One copy in progress. */
struct transfer_copy {
    struct transfer_end *source;            /* borrowed */
    struct transfer_end *target;            /* borrowed */
    const struct transfer_options *options; /* borrowed */
    const char *source_name;                /* its path, for messages */
    const char *verb;                       /* "importing" or "exporting" */
    struct transfer_summary *summary;       /* borrowed, filled */
    char *error;                            /* borrowed, error_size bytes */
    size_t error_size;
};

/* Copies the schema and rows of copy->source into copy->target, which is
 * empty. Returns 0, or a negative code with the message in copy->error. */
int transfer_copy(struct transfer_copy *copy);

/* Writes the message into error unless it already holds one (the first
 * failure is the one worth telling), and returns rc. */
int transfer_fail(char *error, size_t error_size, int rc, const char *format,
                  ...) __attribute__((format(printf, 4, 5)));

/* ---- generated SQL (transfer_sql.c) ---- */

/* A NUL-terminated copy of size bytes (common_malloc'd); NULL when out of
 * memory. */
char *transfer_strndup(const void *bytes, size_t size);

/* Each build function writes one NUL-terminated statement into buf
 * (truncated first); identifiers are quoted ("a""b"). 0 or COMMON_ENOMEM /
 * COMMON_ETOOBIG. */

/* prefix "table" suffix */
int transfer_build_table_sql(struct common_buf *buf, const char *prefix,
                             const char *table, const char *suffix);

/* The columns of a table, as SELECT * names them (PRAGMA table_info would
 * do too, but this asks nothing the engine's SQL lacks). */
struct transfer_columns {
    char **names; /* owned, count of them */
    int count;
    const char *rowid; /* a name for the rowid no column hides, or NULL */
};

/* Reads the columns of table on end (sql is scratch space) and picks the
 * rowid's name. 0, or the end's error code. */
int transfer_columns_read(struct transfer_end *end, struct common_buf *sql,
                          const char *table, struct transfer_columns *columns);
void transfer_columns_free(struct transfer_columns *columns);

/* SELECT rowid,"a","b" FROM "t" ORDER BY rowid (no rowid when with_rowid is
 * false). */
int transfer_build_select(struct common_buf *buf, const char *table,
                          const struct transfer_columns *columns,
                          bool with_rowid);

/* INSERT INTO "t"(rowid,"a","b") VALUES(?1,?2,?3) */
int transfer_build_insert(struct common_buf *buf, const char *table,
                          const struct transfer_columns *columns,
                          bool with_rowid);

/* ---- progress bar (transfer_progress.c) ---- */

#define TRANSFER_PROGRESS_INTERVAL_MS 100 /* at most ~10 redraws a second */
#define TRANSFER_PROGRESS_BAR_WIDTH 20
#define TRANSFER_PROGRESS_LINE_SIZE 160

struct transfer_progress {
    FILE *stream;      /* borrowed; NULL: the bar is off */
    const char *verb;  /* borrowed */
    const char *table; /* borrowed */
    int64_t total;     /* rows the table has */
    struct timespec last_drawn;
};

/* Formats one line of the bar ("importing t1  [#####.....]  52%
 * 120000/230000 rows", no newline) into out (size bytes, at least 1).
 * Pure, for tests. */
void transfer_progress_format(char *out, size_t size, const char *verb,
                              const char *table, int64_t done, int64_t total);

/* Starts the bar of one table (all borrowed until transfer_progress_end);
 * stream NULL makes every call do nothing. */
void transfer_progress_begin(struct transfer_progress *progress, FILE *stream,
                             const char *verb, const char *table,
                             int64_t total);

/* Redraws the bar if the last redraw is TRANSFER_PROGRESS_INTERVAL_MS old. */
void transfer_progress_update(struct transfer_progress *progress, int64_t done);

/* Draws the final state and ends the line. */
void transfer_progress_end(struct transfer_progress *progress, int64_t done);

/* ---- the runs and the subcommands (transfer_run.c) ---- */

enum transfer_kind {
    TRANSFER_KIND_SQLITE = 1,
    TRANSFER_KIND_ENGINE = 2,
};

/* One direction: import is SQLite to engine, export the reverse. */
struct transfer_direction {
    const char *command; /* "import" */
    const char *verb;    /* "importing", for the progress bar */
    const char *done;    /* "imported", for the summary */
    enum transfer_kind source;
    enum transfer_kind target;
    void (*usage)(FILE *stream);
};

extern const struct transfer_direction transfer_import_direction;
extern const struct transfer_direction transfer_export_direction;

/* transfer_import()/transfer_export() for either direction. */
int transfer_run(const struct transfer_direction *direction,
                 const char *source_path, const char *target_path,
                 const struct transfer_options *options,
                 struct transfer_summary *summary, char *error,
                 size_t error_size);

/* import_main()/export_main() for either direction. */
int transfer_main(const struct transfer_direction *direction, int argc,
                  char **argv);

#endif /* SINEW_NODE_TRANSFER_INT_H */
