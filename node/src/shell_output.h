/* SPDX-License-Identifier: MIT
 *
 * shell_output.h: the output modes of `sinew shell` (list, csv, json, box,
 * table) as pure functions from result rows to bytes, written to be byte for
 * byte what the sqlite3 3.40 command-line shell prints in the same mode.
 *
 * They know nothing of the engine: a row arrives as an array of struct
 * shell_value (storage class, the value as text the way the engine renders
 * it, and the double for REALs), and bytes go to a struct common_buf that
 * the caller drains. So the same code serves the shell and a test that feeds
 * it rows read from libsqlite3.
 *
 * One result set is begin, row..., end. list, csv and json write each row as
 * it comes (the caller may drain the buffer after every row); box and table
 * hold every row until end, because column widths depend on all of them.
 * As in sqlite3, nothing at all is written for a result set without rows
 * (no header line, no "[]", no frame).
 */
#ifndef SINEW_NODE_SHELL_OUTPUT_H
#define SINEW_NODE_SHELL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* Storage classes, numbered as SQLite's (and the engine's) are. */
#define SHELL_VALUE_INTEGER 1
#define SHELL_VALUE_FLOAT 2
#define SHELL_VALUE_TEXT 3
#define SHELL_VALUE_BLOB 4
#define SHELL_VALUE_NULL 5

/* One value of a result row. text holds size bytes followed by a NUL (as
 * sqlite3_column_text() gives them; blobs as their raw bytes); it is NULL
 * for SQL NULL. real is the value of a FLOAT (json prints it with 20
 * significant digits, more than the text has). */
struct shell_value {
    int type;         /* SHELL_VALUE_* */
    const char *text; /* borrowed for the call; NULL only for NULL */
    size_t size;      /* bytes at text, without the NUL */
    double real;      /* the value when type is SHELL_VALUE_FLOAT */
};

enum shell_mode {
    SHELL_MODE_LIST = 0,
    SHELL_MODE_CSV = 1,
    SHELL_MODE_JSON = 2,
    SHELL_MODE_BOX = 3,
    SHELL_MODE_TABLE = 4,
};

/* The mode's name as `.mode` takes and prints it ("list", "box"...). */
const char *shell_mode_name(int mode);

/* Parses a mode name; returns 0 and stores the mode, or -EINVAL. */
int shell_mode_parse(const char *name, int *mode);

/* Upper bounds of the settings, as sqlite3's fixed-size fields. */
#define SHELL_SEPARATOR_SIZE_MAX 20  /* bytes of a separator, with its NUL */
#define SHELL_NULL_VALUE_SIZE_MAX 20 /* bytes of the null value, with NUL */

/* How rows are printed. The strings are borrowed for as long as a result
 * set that uses them is open. */
struct shell_output_config {
    int mode;                  /* SHELL_MODE_* */
    bool show_header;          /* list and csv: a line of column names */
    const char *separator;     /* list and csv: between columns */
    const char *row_separator; /* list and csv: after each row */
    const char *null_value;    /* the text of NULL (not in json) */
    int wrap;                  /* box and table: wrap wider columns at this
                                  many characters; 0 never wraps */
};

/* A result set being printed. Between begin and close it owns copies of
 * the column names and, for box and table, of every row's display lines. */
struct shell_output {
    struct shell_output_config config; /* copied at begin */
    struct common_buf *out;            /* borrowed until close */
    int column_count;                  /* > 0 */
    char **names;                      /* column_count copies */
    uint64_t row_count;                /* rows given so far */
    char **cells;      /* box/table: display lines, column_count per line,
                          the first line being the header */
    size_t cell_count; /* cells in use */
    size_t cell_capacity;
    bool *line_ends_row;    /* per display line after the header: true on a
                               row's last line */
    bool has_multiline_row; /* some row took more than one display line */
    int rc; /* the first error writing to out, latched: later writes are
               skipped and every call returns it */
};

/* Starts a result set of column_count > 0 columns named names[i] (copied).
 * config is copied, its strings borrowed; out is borrowed until close.
 * Returns 0 or COMMON_ENOMEM. */
int shell_output_begin(struct shell_output *output,
                       const struct shell_output_config *config,
                       int column_count, const char *const *names,
                       struct common_buf *out);

/* Formats one row of column_count values (borrowed for the call). Returns
 * 0, COMMON_ENOMEM or COMMON_ETOOBIG (from out). */
int shell_output_row(struct shell_output *output,
                     const struct shell_value *values);

/* Writes what follows the last row: json's "]", box and table's whole
 * table. Returns 0 or an error from out. */
int shell_output_end(struct shell_output *output);

/* Frees what begin and row allocated; output may be begun again. */
void shell_output_close(struct shell_output *output);

/* Renders value as SQLite 3.40's printf("%!.20g") does (its long double
 * digit loop, which json mode uses): out has room for 40 bytes; returns the
 * length. */
#define SHELL_REAL20_SIZE 40
size_t shell_output_real20(double value, char *out);

#endif /* SINEW_NODE_SHELL_OUTPUT_H */
