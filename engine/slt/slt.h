/* SPDX-License-Identifier: MIT
 *
 * slt.h: the sqllogictest runner's internal interface (sinew-slt).
 *
 * sqllogictest is SQLite's corpus of SQL tests with expected results
 * (../shared/sqllogictest; the format: ../shared/reference/
 * sqlcorpus-and-protocol.md part A2, taken from the upstream runner's
 * src/sqllogictest.c and src/slt_sqlite.c). A file is a list of records
 * separated by blank lines: "statement ok|error", "query <types> [<sort>
 * [<label>]]" with its expected values after "----", "hash-threshold N",
 * "halt", each optionally preceded by "skipif <db>" / "onlyif <db>".
 *
 * The pieces: slt_parse.c turns a file's bytes into records; slt_render.c
 * renders values exactly as the upstream runner does for the database
 * named "sqlite", sorts them and hashes them (slt_md5.c, RFC 1321);
 * slt_run.c runs records against a fresh in-memory engine database;
 * slt_input.c reads .test and .test.gz files; main.c is the command line
 * (forking a child per file, per-file time limit, baseline).
 */
#ifndef SINEW_SLT_H
#define SINEW_SLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* The database name the runner answers to in skipif/onlyif (compared
 * case-insensitively, as upstream's stricmp does). */
#define SLT_ENGINE_NAME "sqlite"

/* Upstream's DEFAULT_HASH_THRESHOLD: results of more values than this are
 * compared by MD5; 0 never hashes. */
#define SLT_HASH_THRESHOLD_DEFAULT 8

/* A query whose result grows past this many values fails ("result too
 * large") instead of exhausting memory. */
#define SLT_RESULT_VALUES_MAX (16u * 1024u * 1024u)

/* ---- MD5 (RFC 1321) ---- */

struct slt_md5 {
    uint32_t state[4];
    uint64_t length_bytes;
    uint8_t block[64];
    size_t block_used;
};

#define SLT_MD5_HEX_SIZE 33 /* 32 lowercase hex digits and a NUL */

void slt_md5_init(struct slt_md5 *md5);
/* bytes (borrowed for the call) may be NULL when size is 0. */
void slt_md5_update(struct slt_md5 *md5, const void *bytes, size_t size);
/* Writes the digest as lowercase hex into out (SLT_MD5_HEX_SIZE bytes). */
void slt_md5_final_hex(struct slt_md5 *md5, char *out);

/* ---- Records ---- */

enum slt_record_kind {
    SLT_RECORD_STATEMENT = 1,
    SLT_RECORD_QUERY = 2,
    SLT_RECORD_HASH_THRESHOLD = 3,
    SLT_RECORD_HALT = 4,
    /* A record the runner cannot understand (unknown kind, bad type
     * letters, unknown sort mode, ...): counted as a failure unless its
     * conditions skip it, with invalid_reason as the message. */
    SLT_RECORD_INVALID = 5,
};

enum slt_sort {
    SLT_SORT_NONE = 0,   /* nosort, the default */
    SLT_SORT_ROWS = 1,   /* rowsort: rows by strcmp, column by column */
    SLT_SORT_VALUES = 2, /* valuesort: every value on its own */
};

/* Every pointer points into the owning slt_script's text and lines, or is
 * an allocation of the record; all are freed by slt_script_free(). */
struct slt_record {
    enum slt_record_kind kind;
    int line;     /* 1-based line of the record's first line */
    bool skipped; /* its skipif/onlyif exclude SLT_ENGINE_NAME */
    /* statement */
    bool expect_error; /* "statement error" */
    /* statement and query: the SQL lines joined with "\n" */
    char *sql;
    /* query */
    const char *types; /* one of I, T, R per column */
    size_t type_count;
    enum slt_sort sort;
    const char *label;     /* NULL if none */
    char *const *expected; /* the lines after "----", in lines */
    size_t expected_count;
    /* hash-threshold */
    long threshold;
    /* invalid */
    const char *invalid_reason; /* static text */
};

struct slt_script {
    char *text;   /* owned copy of the file, lines NUL-terminated in place */
    char **lines; /* owned: the non-comment lines, into text */
    size_t line_count;
    struct slt_record *records; /* owned */
    size_t record_count;
};

/* Parses size bytes of text (borrowed for the call; need not be
 * NUL-terminated, may hold any bytes) into *out, which the caller frees
 * with slt_script_free() on success. Never fails on bad input: what it
 * cannot understand becomes SLT_RECORD_INVALID. COMMON_ENOMEM or
 * COMMON_ETOOBIG (more than INT_MAX lines) on failure, with *out empty. */
int slt_parse(const char *text, size_t size, struct slt_script *out);

void slt_script_free(struct slt_script *script);

/* True for the records that count as tests: statements and queries (and
 * invalid records) that the conditions do not skip. */
bool slt_record_is_test(const struct slt_record *record);

/* ---- Values: rendering, sorting, hashing ---- */

/* Render values as upstream's slt_sqlite.c does for each type letter
 * (a NULL of any type is "NULL"):
 *   I: the value read as a 32-bit int (sqlite3_column_int) with "%d";
 *   R: the value read as a double with "%.3f", as SQLite 3.47's printf
 *      writes it (at most 16 significant digits: the corpus's expected
 *      values were made with it; -0.0 as "0.000");
 *   T: the text, "(empty)" when empty, each byte outside 0x20..0x7e as
 *      '@', up to its first NUL byte (upstream handles C strings).
 * out has room for SLT_NUMBER_TEXT_SIZE bytes. */
#define SLT_NUMBER_TEXT_SIZE 400
void slt_render_integer(int64_t value, char *out);
void slt_render_real(double value, char *out);

/* A query's rendered values, row-major. */
struct slt_values {
    char **items; /* owned, each owned */
    size_t count;
    size_t capacity;
};

void slt_values_init(struct slt_values *values);
void slt_values_close(struct slt_values *values);
/* Appends a copy of text (borrowed, NUL-terminated). */
int slt_values_append(struct slt_values *values, const char *text);
/* Appends text (borrowed; size bytes; NULL for SQL NULL) rendered as type
 * letter T says. */
int slt_values_append_text(struct slt_values *values, const char *text,
                           size_t size);

/* Sorts values in place as the sort mode says; column_count >= 1. A count
 * that is not a multiple of column_count leaves the last partial row in
 * place (it cannot come from the engine). */
int slt_values_sort(struct slt_values *values, enum slt_sort sort,
                    size_t column_count);

/* MD5 of every item followed by "\n", as hex into out. */
void slt_values_hash(char *const *items, size_t count, char *out);

/* If line is "<N> values hashing to <32 hex>", copies the hash into out
 * and returns true. */
bool slt_parse_hash_line(const char *line, char *out);

/* ---- Labels ---- */

/* Queries that share a label must give the same result: the table maps
 * each label to the MD5 of the first result seen for it. */
struct slt_labels {
    struct slt_label_slot *slots; /* owned; open addressing */
    size_t capacity;              /* a power of two, or 0 */
    size_t count;
};

void slt_labels_init(struct slt_labels *labels);
void slt_labels_close(struct slt_labels *labels);
/* Points *reference (owned by the table) at the hash recorded for name
 * (borrowed), recording hash (borrowed, SLT_MD5_HEX_SIZE bytes) first if
 * name is new. COMMON_ENOMEM. */
int slt_labels_reference(struct slt_labels *labels, const char *name,
                         const char *hash, const char **reference);

/* ---- Running ---- */

/* What happened to one record. */
enum slt_outcome {
    SLT_OUTCOME_PASSED = 'p',
    SLT_OUTCOME_FAILED = 'f',
    SLT_OUTCOME_SKIPPED = 's',   /* a test the conditions skip */
    SLT_OUTCOME_DIRECTIVE = 'n', /* not a test (hash-threshold, ...) */
    SLT_OUTCOME_HALT = 'h',      /* halt ran: no later record runs */
};

/* Called once per record, in order, until the last or a halt. The failure
 * text (NULL unless failed) is borrowed for the call. */
typedef void (*slt_outcome_cb)(void *ctx, size_t record_index,
                               enum slt_outcome outcome, const char *failure);

struct slt_run_options {
    /* CLOCK_MONOTONIC ms after which records are no longer run but
     * counted failed ("timeout"); 0: no limit. */
    int64_t deadline_ms;
};

/* Runs script (borrowed) against a fresh in-memory engine database,
 * reporting every record through cb. 0, or COMMON_ENOMEM / an engine
 * error when the database cannot be opened. */
int slt_run_script(const struct slt_script *script,
                   const struct slt_run_options *options, slt_outcome_cb cb,
                   void *ctx);

/* The monotonic clock in ms. */
int64_t slt_now_ms(void);

/* ---- Input ---- */

/* Reads a .test or gzip-compressed .test.gz file (path borrowed) whole:
 * on success *out is a common_malloc'ed buffer of *size bytes the caller
 * frees with common_free(). On failure returns an error and writes why
 * into reason (reason_size bytes). */
int slt_read_file(const char *path, char **out, size_t *size, char *reason,
                  size_t reason_size);

/* ---- One file (slt_file.c) ---- */

struct slt_file_options {
    bool verbose;     /* print every failure to stdout */
    bool fork;        /* run in a child process (see slt_file.c) */
    long timeout_sec; /* per-file wall-clock limit; 0: none */
};

struct slt_file_counts {
    size_t passed;
    size_t failed;
    size_t skipped;
};

/* Reads, parses and runs the file at path (borrowed), naming it name
 * (borrowed) in messages, and fills *counts. Failures of records are
 * counts, not errors; an error (with a message on stdout) means the file
 * could not be read or run at all. */
int slt_file_run(const char *path, const char *name,
                 const struct slt_file_options *options,
                 struct slt_file_counts *counts);

/* ---- Baseline ----
 *
 * A TSV file of per-file results, one line per file, sorted by file:
 * "<file>\t<passed>\t<total>", where file is the path relative to the
 * corpus root without ".gz" and total counts the tests that ran (passed
 * plus failed). */

struct slt_baseline_entry {
    char *file; /* owned */
    size_t passed;
    size_t total;
};

struct slt_baseline {
    struct slt_baseline_entry *entries; /* owned */
    size_t count;
    size_t capacity;
};

void slt_baseline_init(struct slt_baseline *baseline);
void slt_baseline_close(struct slt_baseline *baseline);

/* Reads path (borrowed) into baseline, replacing entries of the same file.
 * On failure writes a message into error (error_size bytes) and returns
 * -errno (cannot read) or COMMON_ECORRUPT (a malformed line) or
 * COMMON_ENOMEM. */
int slt_baseline_load(struct slt_baseline *baseline, const char *path,
                      char *error, size_t error_size);

/* The entry for file (borrowed), or NULL. */
const struct slt_baseline_entry *
slt_baseline_find(const struct slt_baseline *baseline, const char *file);

/* Records file's result (file borrowed, copied), replacing any entry. */
int slt_baseline_set(struct slt_baseline *baseline, const char *file,
                     size_t passed, size_t total);

/* Sorts the entries by file and writes them to path (borrowed) through a
 * temporary file renamed over it. 0 or -errno. */
int slt_baseline_write(struct slt_baseline *baseline, const char *path);

#endif /* SINEW_SLT_H */
