/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot_int.h: what the snapshot files share (crdt_snapshot.c,
 * crdt_snapshot_wire.c, crdt_snapshot_check.c, crdt_snapshot_install.c,
 * crdt_snapshot_join.c): the byte layout of a crdt snapshot, the walk
 * over its body that the checker and the installer both use, and the
 * install's join of this node's registers. The same tables
 * are in docs/formats.md, "Snapshots"; what a snapshot is for is in
 * crdt.h.
 *
 * A snapshot, integers little-endian:
 *
 *   offset size field
 *   0      4    magic "SNSS"
 *   4      1    format version (REPLICATION__SNAPSHOT_VERSION)
 *   5      1    flags: bit 0 payload is lz4 (block format); others zero
 *   6      16   the sender's site id
 *   22     8    payload size: the bytes after the header
 *   30     8    body size (uncompressed; = payload size unless lz4)
 *   38     8    body checksum: XXH3-64 of the uncompressed body, seed 0
 *   46     8    payload checksum: XXH3-64 of the payload, seed
 *               REPLICATION__SNAPSHOT_SEED
 *   54     8    header checksum: XXH3-64 of bytes 0 .. 53, seed
 *               REPLICATION__SNAPSHOT_SEED
 *   62     n    the payload
 *
 * The body is msgpack, an array of 9 parts in this order (integers in any
 * msgpack width; a value is nil, an integer within int64, a float 64, a
 * str (TEXT) or a bin (BLOB), as in change sets):
 *
 *   site     bin 16, = the header's
 *   heads    array of [origin bin 16, head uint >= 1], origins distinct
 *   floors   array of [origin bin 16, floor uint >= 1], floor <= head
 *   schema   array of [type str "table" | "index", name str, sql str],
 *            in creation order, names distinct (ASCII case folded)
 *   tables   array of [name str, columns (array of str, >= 1, distinct),
 *            rowid uint 0 | 1, rows (array of rows)]; one per schema
 *            table; a row is an array of rowid + column count values, the
 *            rowid first (an INTEGER) when rowid is 1
 *   exist    array of [table str, pk bin, alive uint 0 | 1, hlc uint,
 *            site bin 16]: sinew_crdt_row
 *   cells    array of [table str, pk bin, column str, hlc uint, site bin
 *            16, has_shadow uint 0 | 1, shadow value (nil unless
 *            has_shadow)]: sinew_crdt_cell
 *   columns  array of [table str, column str]: sinew_crdt_column
 *   kept     array of bin: the kept change sets (sinew_crdt_pending rows
 *            with reason 'schema'), each one chunk (changeset_wire.h) of
 *            a version its heads cover, (origin, version) distinct
 *
 * Strings are UTF-8 without NUL; pk is crdt_key.c's encoding; hlc <=
 * INT64_MAX (stored as INTEGER).
 */
#ifndef SINEW_REPLICATION_CRDT_SNAPSHOT_INT_H
#define SINEW_REPLICATION_CRDT_SNAPSHOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "changeset.h"
#include "common.h"
#include "crdt_int.h"
#include "engine.h"
#include "sync_wire.h"

#define REPLICATION__SNAPSHOT_MAGIC "SNSS"
#define REPLICATION__SNAPSHOT_VERSION 1
#define REPLICATION__SNAPSHOT_FLAG_LZ4 0x01
#define REPLICATION__SNAPSHOT_SEED UINT64_C(0x53534e53)
/* Bodies this large or more are lz4-compressed when that shrinks them. */
#define REPLICATION__SNAPSHOT_COMPRESS_MIN 1024

#define REPLICATION__SNAPSHOT_AT_VERSION 4
#define REPLICATION__SNAPSHOT_AT_FLAGS 5
#define REPLICATION__SNAPSHOT_AT_SITE 6
#define REPLICATION__SNAPSHOT_AT_PAYLOAD_SIZE 22
#define REPLICATION__SNAPSHOT_AT_BODY_SIZE 30
#define REPLICATION__SNAPSHOT_AT_BODY_CHECK 38
#define REPLICATION__SNAPSHOT_AT_PAYLOAD_CHECK 46
#define REPLICATION__SNAPSHOT_AT_HEADER_CHECK 54
/* = REPLICATION__SNAPSHOT_HEADER_BYTES (crdt.h) */
#define REPLICATION__SNAPSHOT_HEADER_SIZE 62

/* The body's parts, in order. */
enum replication__snapshot_part {
    SNAPSHOT_SITE,
    SNAPSHOT_HEADS,
    SNAPSHOT_FLOORS,
    SNAPSHOT_SCHEMA,
    SNAPSHOT_TABLES,
    SNAPSHOT_EXIST,
    SNAPSHOT_CELLS,
    SNAPSHOT_COLUMNS,
    SNAPSHOT_KEPT,
    SNAPSHOT_PART_COUNT
};

/* ------------------------------------------------------------------------
 * Sealing and opening the envelope (crdt_snapshot_wire.c)
 * ------------------------------------------------------------------------ */

/* Appends a snapshot of the body (size bytes at body, borrowed) sent by
 * site to out (the caller's; unchanged on failure): lz4 when that pays,
 * the header, the payload. COMMON_ETOOBIG past out's size_max or
 * REPLICATION__SNAPSHOT_BODY_MAX; COMMON_ENOMEM. */
int replication__snapshot_seal(const uint8_t *body, size_t size,
                               const uint8_t *site, struct common_buf *out);

/* A snapshot's body, its envelope checked. */
struct replication__snapshot_body {
    uint8_t site[REPLICATION__SITE_ID_BYTES]; /* the sender's */
    const uint8_t *data; /* the body: into the snapshot's bytes, or owned */
    size_t size;         /* bytes at data */
    uint8_t *owned;      /* the decompressed body when lz4, else NULL */
};

/* Checks the header, the checksums and the sizes of size bytes at bytes
 * (borrowed, and while *out points into them: until its close) and
 * decompresses the payload. REPLICATION_EFORMAT, REPLICATION_EVERSION,
 * COMMON_ETOOBIG, COMMON_ENOMEM. */
int replication__snapshot_open(const uint8_t *bytes, size_t size,
                               struct replication__snapshot_body *out);
void replication__snapshot_body_close(struct replication__snapshot_body *b);

/* ------------------------------------------------------------------------
 * Walking a body (crdt_snapshot_wire.c): every part in order, each element
 * checked for its msgpack shape (types, counts, value ranges, no NUL in a
 * name, no trailing bytes) and handed to the visitor's function for it.
 * What is handed out is borrowed for the call: strings are NUL-terminated
 * copies in the walker's memory, byte strings and values point into the
 * body. A non-zero return from a visitor function stops the walk and is
 * returned; a malformed body is REPLICATION_EFORMAT.
 * ------------------------------------------------------------------------ */

struct replication__snapshot_object {
    bool is_index; /* "index", else "table" */
    const char *name;
    const char *sql;
};

struct replication__snapshot_table {
    const char *name;
    const char *const *columns;
    size_t column_count;
    bool rowid;       /* rows start with their rowid (keyed by rowid) */
    size_t row_count; /* rows that follow */
};

struct replication__snapshot_exist {
    const char *table;
    const uint8_t *pk;
    size_t pk_size;
    bool alive;
    uint64_t hlc;
    const uint8_t *site; /* REPLICATION__SITE_ID_BYTES */
};

struct replication__snapshot_cell {
    const char *table;
    const uint8_t *pk;
    size_t pk_size;
    const char *column;
    uint64_t hlc;
    const uint8_t *site; /* REPLICATION__SITE_ID_BYTES */
    bool has_shadow;
    struct engine_change_value shadow; /* NULL unless has_shadow */
};

/* Any function may be NULL (that part is only checked). */
struct replication__snapshot_visit {
    void *ctx;
    /* A head (floor false) or a floor (floor true) of origin. */
    int (*head)(void *ctx, const uint8_t *origin, uint64_t value, bool floor);
    int (*object)(void *ctx, const struct replication__snapshot_object *o);
    /* A table, then its rows: values[0 .. count), the rowid first when
     * t->rowid. */
    int (*table)(void *ctx, const struct replication__snapshot_table *t);
    int (*row)(void *ctx, const struct replication__snapshot_table *t,
               const struct engine_change_value *values, size_t count);
    int (*exist)(void *ctx, const struct replication__snapshot_exist *e);
    int (*cell)(void *ctx, const struct replication__snapshot_cell *c);
    int (*column)(void *ctx, const char *table, const char *column);
    int (*kept)(void *ctx, const uint8_t *bytes, size_t size);
};

int replication__snapshot_walk(const struct replication__snapshot_body *body,
                               const struct replication__snapshot_visit *v);

/* ------------------------------------------------------------------------
 * What a snapshot holds, checked whole (crdt_snapshot_check.c)
 * ------------------------------------------------------------------------ */

struct replication__snapshot_info {
    uint8_t site[REPLICATION__SITE_ID_BYTES]; /* the sender */
    struct replication__head *heads;          /* owned, by origin bytewise */
    size_t head_count;
    struct replication__head *floors; /* owned, by origin bytewise */
    size_t floor_count;
    /* The schema's names, NUL-terminated one after the other, in
     * creation order; is_index per object. */
    struct common_buf names;
    bool *is_index; /* owned, object_count entries */
    size_t object_count;
    uint64_t hlc_max;      /* the largest register hlc; 0 without registers */
    size_t row_count;      /* rows over all tables */
    size_t register_count; /* existence and cell registers */
    size_t kept_count;
};

/* Walks body whole and checks what the walk alone cannot (cross
 * references: floors against heads, tables against the schema, kept sets
 * against heads; keys decode), filling *info (the caller's, closed with
 * replication__snapshot_info_close() also on failure).
 * REPLICATION_EFORMAT, COMMON_ENOMEM. */
int replication__snapshot_check_body(
    const struct replication__snapshot_body *body,
    struct replication__snapshot_info *info);
void replication__snapshot_info_close(struct replication__snapshot_info *info);

/* origin's entry in a list sorted by origin (heads or floors): 0 when
 * absent. */
uint64_t replication__snapshot_head_of(const struct replication__head *list,
                                       size_t count, const uint8_t *origin);

/* Whether two SQL names are the same (ASCII case folded). */
bool replication__snapshot_same_name(const char *a, const char *b);

/* Whether the schema holds a table named name (ASCII case folded, as SQL
 * names compare). */
bool replication__snapshot_has_table(
    const struct replication__snapshot_info *info, const char *name);

/* Appends name (NUL-terminated, borrowed) to sql as a quoted SQL
 * identifier (crdt_snapshot.c). */
int replication__snapshot_quote(struct common_buf *sql, const char *name);

/* The name the rowid of t goes by (the first of SQLite's rowid names no
 * column of t has taken), or NULL (crdt_snapshot.c). */
const char *
replication__snapshot_rowid_name(const struct replication__crdt_table *t);

/* ------------------------------------------------------------------------
 * Joining this node's registers into an installed snapshot
 * (crdt_snapshot_join.c, which says why). Inside the install's
 * transaction: init, name the ahead origins, read each table's registers
 * before the install drops them, merge them once the snapshot's state,
 * its version bookkeeping and the merged-back change sets are in, close.
 * ------------------------------------------------------------------------ */

struct join_item;
struct replication__snapshot_join {
    uint8_t (*ahead)[REPLICATION__SITE_ID_BYTES]; /* owned */
    size_t ahead_count;
    struct replication__crdt_table **shapes; /* owned: the local tables */
    struct replication__table *tables;       /* per shape, pointing into it */
    size_t table_count;
    struct join_item *items; /* owned: the registers read */
    size_t item_count;
    size_t item_capacity;
    struct replication__arena arena; /* keys, values */
    size_t merged;                   /* registers merged */
};

void replication__snapshot_join_init(struct replication__snapshot_join *j);
void replication__snapshot_join_close(struct replication__snapshot_join *j);

/* origin (REPLICATION__SITE_ID_BYTES, copied) is one this node holds more
 * versions of than the snapshot: its registers are joined. */
int replication__snapshot_join_ahead(struct replication__snapshot_join *j,
                                     const uint8_t *origin);

/* Reads table's (NUL-terminated, borrowed) registers of the ahead origins
 * and their values, in the open transaction, before the install drops or
 * replaces the table. A name that is no user table reads nothing;
 * COMMON_ECORRUPT for a key that does not decode; engine codes. */
int replication__snapshot_join_read(struct replication__crdt *crdt,
                                    struct replication__snapshot_join *j,
                                    const char *table);

/* Merges the registers read into the installed state, in the open
 * transaction, as change sets (replication__crdt_merge_within()); those
 * of a table or column the installed schema lacks are dropped, logged. */
int replication__snapshot_join_merge(struct replication__crdt *crdt,
                                     struct replication__snapshot_join *j);

#endif /* SINEW_REPLICATION_CRDT_SNAPSHOT_INT_H */
