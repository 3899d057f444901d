/* SPDX-License-Identifier: MIT
 *
 * transfer.h: `sinew import` and `sinew export`, which copy a database
 * between a C SQLite file (through libsqlite3) and a sinew engine file
 * (engine.h), and the library calls behind them (docs/import-export.md).
 *
 * What is copied: every table with its CREATE TABLE text as the source
 * stores it, its rows with their rowids, every value with its own storage
 * class (an INTEGER stays an INTEGER, a BLOB a BLOB, an empty blob is not
 * NULL), the CREATE INDEX statements, PRAGMA user_version, and views and
 * triggers where the target accepts them (else each is named in a warning
 * and skipped). Internal tables (sqlite_sequence, sqlite_stat*) and sinew
 * system tables (sinew_*) are not copied.
 *
 * The target must not exist: it is created, and if anything fails it is
 * removed again (with its -wal and other side files), so a failed run
 * leaves nothing behind. The source is only read, inside one read
 * transaction, so the copy is one consistent snapshot.
 */
#ifndef SINEW_NODE_TRANSFER_H
#define SINEW_NODE_TRANSFER_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of the subcommands. */
#define TRANSFER_EXIT_OK 0
#define TRANSFER_EXIT_FAILED 1 /* nothing was written (target removed) */
#define TRANSFER_EXIT_USAGE 2  /* bad arguments */

/* Room for the message of a failed transfer. */
#define TRANSFER_ERROR_SIZE 512

struct transfer_options {
    FILE *progress; /* a progress bar goes here (a terminal), or NULL */
    FILE *warnings; /* each skipped view or trigger is named here, or NULL */
    /* Polled between rows: non-zero stops the copy as a failure
     * ("interrupted"); NULL never stops. Set by a signal handler. */
    const volatile sig_atomic_t *stop;
};

/* What a transfer copied. */
struct transfer_summary {
    int64_t tables;
    int64_t indexes;
    int64_t views;
    int64_t triggers;
    int64_t views_skipped;    /* views the target refused */
    int64_t triggers_skipped; /* triggers the target refused */
    int64_t rows;
};

/* Copies the SQLite database at sqlite_path (opened read-only) into a new
 * sinew database at sinew_path. Both paths and options are borrowed for
 * the call. Returns 0 with *summary filled, or a negative code with a
 * NUL-terminated message in error (error_size bytes, at least 1; it names
 * the table or index that failed) and no file at sinew_path. */
int transfer_import(const char *sqlite_path, const char *sinew_path,
                    const struct transfer_options *options,
                    struct transfer_summary *summary, char *error,
                    size_t error_size);

/* The reverse: the sinew database at sinew_path into a new SQLite database
 * at sqlite_path, with the same contract. */
int transfer_export(const char *sinew_path, const char *sqlite_path,
                    const struct transfer_options *options,
                    struct transfer_summary *summary, char *error,
                    size_t error_size);

/* The subcommands, with the arguments after their name (borrowed). They
 * print a progress bar on standard error when it is a terminal, the
 * summary line on standard output, and errors on standard error; they
 * return a TRANSFER_EXIT_* status. */
int import_main(int argc, char **argv);
int export_main(int argc, char **argv);

void import_usage(FILE *stream);
void export_usage(FILE *stream);

#endif /* SINEW_NODE_TRANSFER_H */
