/* SPDX-License-Identifier: MIT
 *
 * dbfile.h: the main file's pieces, shared by its writer (dbfile_write.c),
 * its reader (dbfile_read.c) and the segment codec (segment.c). Layout and
 * offsets: docs/formats.md, "Main file".
 */
#ifndef SINEW_ENGINE_DBFILE_H
#define SINEW_ENGINE_DBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "table.h"
#include "value.h"

#define ENGINE__SEGMENT_ROWS 65536u

/* Catalog entry kinds. */
#define ENGINE__DBFILE_TABLE 't'
#define ENGINE__DBFILE_INDEX 'i'
#define ENGINE__DBFILE_VIEW 'v'
#define ENGINE__DBFILE_TRIGGER 'r'

/* Index section entry kinds (dbfile_index.c). */
#define ENGINE__DBFILE_CONSTRAINT_KEY                                          \
    'k'                                 /* PRIMARY KEY / UNIQUE of the table */
#define ENGINE__DBFILE_UNIQUE_INDEX 'u' /* CREATE UNIQUE INDEX, by name */
#define ENGINE__DBFILE_LOOKUP 'l'       /* CREATE INDEX, by name */

/* Column block encodings. */
enum engine_column_encoding {
    ENGINE__ENCODING_NULL = 0,   /* every row NULL; no data */
    ENGINE__ENCODING_INT64 = 1,  /* 8 bytes per row */
    ENGINE__ENCODING_DOUBLE = 2, /* 8 bytes per row */
    ENGINE__ENCODING_TEXT = 3,   /* offsets + bytes */
    ENGINE__ENCODING_DICT = 4,   /* distinct texts + a code per row */
    ENGINE__ENCODING_BLOB = 5,   /* offsets + bytes */
    ENGINE__ENCODING_TAGGED = 6, /* one tagged value per row */
};

struct engine_dbfile_header {
    uint64_t generation;
    uint64_t commit_seq;
    uint64_t body_size;
    int64_t user_version;
};

/* Runs sql, a schema statement read from a file (a catalog entry, a WAL
 * record's schema entry), if it is exactly one statement of a kind in
 * kinds (bit 1 << enum ast_stmt_kind): 0 or COMMON_ENOMEM. Anything else
 * (BEGIN, an INSERT, a second statement) is not what the engine writes, and
 * running it would leave a transaction open or change rows behind the
 * file's back: ENGINE_ECORRUPT, as is a statement that fails. */
int engine__dbfile_run_schema(struct engine_db *db, const char *sql,
                              unsigned kinds);

/* Whether sql is exactly one statement of a kind in kinds (bit
 * 1 << enum ast_stmt_kind), without running it: 0, ENGINE_ECORRUPT, or
 * COMMON_ENOMEM. */
int engine__schema_check_one(const char *sql, unsigned kinds);

/* Fills the 64-byte header at out for a body (checksummed here). */
void engine__dbfile_header_encode(uint8_t *out, uint64_t generation,
                                  uint64_t commit_seq, const uint8_t *body,
                                  size_t body_size, int64_t user_version);

/* Checks the header and the body's checksum: 0, ENGINE_ENOTADB (no sinew
 * magic), or ENGINE_ECORRUPT. */
int engine__dbfile_header_decode(const uint8_t *bytes, size_t size,
                                 struct engine_dbfile_header *out);

/* Appends one segment: the rows at slots[0..count) of table, in that
 * order. */
int engine__segment_put(struct common_buf *buf,
                        const struct engine_table *table, const uint32_t *slots,
                        uint32_t count, uint64_t generation);

/* A decoded segment: rowids[row_count], and columns[c][row] viewing the
 * file's bytes. */
struct engine_segment {
    uint32_t row_count;
    int64_t *rowids;
    struct engine_value **columns;
    size_t column_count;
};

/* Decodes the segment at the reader for a table of column_count columns,
 * checking its checksum, encodings and zone maps: 0, ENGINE_ECORRUPT or
 * COMMON_ENOMEM. The segment is freed with engine__segment_free(). */
/* Dictionary text (segment_dict.c): whether it is smaller than plain text
 * for values[0..n) (texts and NULLs), and its block data. */
bool engine__dict_pays(const struct engine_value *values, uint32_t n);
int engine__dict_put(struct common_buf *buf, const struct engine_value *values,
                     uint32_t n);
int engine__dict_get(struct common_reader *reader, uint32_t n,
                     const uint8_t *null_bitmap, struct engine_value *out);

/* Offsets then bytes: n strings of type (ENGINE_TEXT or _BLOB), NULL where
 * null_bitmap (may be NULL) says so. */
int engine__segment_strings(struct common_reader *reader, uint32_t n, int type,
                            const uint8_t *null_bitmap,
                            struct engine_value *out);

int engine__segment_get(struct common_reader *reader, size_t column_count,
                        uint64_t generation, struct engine_segment *out);
void engine__segment_free(struct engine_segment *segment);

/* A table's index section (dbfile_index.c), after its segments: every
 * key's and index's hash, renumbered to the slots the written rows will
 * have. */
int engine__dbfile_put_indexes(struct common_buf *buf,
                               struct engine_table *table);

/* Reads a table's index section. With table (just loaded: rows slots, all
 * live, its keys and lookups left empty by bulk_loading), each hash is
 * adopted, and whatever the section lacks built again; with NULL, only
 * checked. 0, ENGINE_ECORRUPT or COMMON_ENOMEM. */
int engine__dbfile_get_indexes(struct common_reader *reader,
                               struct engine_table *table, size_t rows);

#endif /* SINEW_ENGINE_DBFILE_H */
