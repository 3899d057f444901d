/* SPDX-License-Identifier: MIT
 *
 * table.h: the in-memory columnar store of one table's rows, and the
 * catalog entry that describes the table.
 *
 * Rows live in slots. Each column is a typed array over all slots (INT64
 * or DOUBLE while every value has that storage class, else an array of
 * struct engine_value whose bytes the store owns); a slot's rowid and
 * deleted flag sit beside them. Scans hand out batches that view these
 * arrays directly, in rowid order as SQLite scans a rowid table.
 *
 * Keys: rowids are unique, and so is every PRIMARY KEY / UNIQUE key, each
 * enforced by a hash index from key values to slot, with SQLite's rules:
 * NULLs never collide, values compare with the column's collation.
 *
 * The next issue replaces this store with persistent segments and a delta;
 * the planner and operators see only the functions below.
 */
#ifndef SINEW_ENGINE_TABLE_H
#define SINEW_ENGINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "vector.h"

struct engine_column_def {
    char *name;                      /* owned */
    char *type_name;                 /* declared type, owned; NULL if none */
    enum engine_affinity affinity;   /* from type_name */
    enum engine_collation collation; /* COLLATE, default BINARY */
    bool not_null;
    enum ast_conflict not_null_conflict;
    const struct ast_expr *default_value; /* in the table's arena; or NULL */
    bool hidden_rowid_alias;              /* INTEGER PRIMARY KEY: reads rowid */
};

/* A PRIMARY KEY or UNIQUE key and its hash index. */
struct engine_unique_key {
    size_t *columns; /* column indexes, owned */
    size_t column_count;
    enum ast_conflict conflict;
    bool primary;
    char *index_name; /* for a CREATE UNIQUE INDEX; NULL otherwise */
    /* Open-addressing hash from key to slot + 1 (0: empty, SIZE_MAX:
     * removed). */
    size_t *buckets;
    size_t bucket_count; /* power of two */
    size_t used;         /* buckets not empty (live or removed) */
};

struct engine_index_def {
    char *name; /* owned */
    char *sql;  /* CREATE INDEX text, owned */
    bool unique;
    uint64_t sequence; /* creation order among schema objects */
};

struct engine_column_store {
    enum engine_vector_kind kind;
    uint8_t *nulls;
    union {
        int64_t *i64;
        double *f64;
        struct engine_value *values; /* text/blob bytes owned by the store */
    } data;
};

struct engine_table {
    char *name;        /* owned */
    char *sql;         /* the CREATE TABLE text as sqlite_schema shows it */
    uint64_t sequence; /* creation order among schema objects */
    struct engine_arena arena; /* the table's parse tree (defaults, CHECKs) */
    struct engine_column_def *columns;
    size_t column_count;
    ptrdiff_t rowid_alias; /* column index of INTEGER PRIMARY KEY, or -1 */
    enum ast_conflict rowid_conflict; /* its ON CONFLICT clause */
    const struct ast_expr **checks;   /* CHECK constraints, in the arena */
    size_t check_count;
    struct engine_unique_key *keys;
    size_t key_count;
    struct engine_index_def *indexes;
    size_t index_count;

    /* storage */
    struct engine_column_store *stores; /* column_count */
    int64_t *rowids;
    uint8_t *deleted;
    size_t slot_count; /* slots in use, deleted ones included */
    size_t slot_capacity;
    size_t live_count;
    uint64_t change_count; /* rows inserted, updated, deleted or restored:
                              a live IN (SELECT) reads again when it moves */
    int64_t rowid_max;     /* the largest live rowid (0 when empty) */
    bool rowid_max_stale;  /* the row holding rowid_max went away */
    bool in_rowid_order;   /* slots sorted by rowid */
    uint32_t *scan_order;  /* slot permutation in rowid order, or NULL */
    size_t *rowid_buckets; /* hash rowid -> slot + 1 */
    size_t rowid_bucket_count;
    size_t rowid_bucket_used;
};

/* Builds a table from the text of one CREATE TABLE statement (copied: the
 * table parses it again into its own arena, so its DEFAULT and CHECK
 * expressions live as long as it does). Errors (duplicate column, two
 * primary keys, unknown collation...) return ENGINE_ESQL with SQLite's
 * message in errmsg. */
int engine__table_create(const char *sql, size_t sql_size,
                         struct engine_table **out, char *errmsg,
                         size_t errmsg_size);

void engine__table_destroy(struct engine_table *table);

/* Whether name is one of the rowid's own names: rowid, oid, _rowid_
 * (any case). */
bool engine__table_is_rowid_name(const char *name);

/* The index of the column named name (case-insensitive), or -1. */
ptrdiff_t engine__table_column_index(const struct engine_table *table,
                                     const char *name);

/* The value of column at slot (bytes owned by the table). A rowid alias
 * column reads the rowid. */
struct engine_value engine__table_get(const struct engine_table *table,
                                      size_t slot, size_t column);

/* The slot holding rowid, or -1. */
ptrdiff_t engine__table_find_rowid(const struct engine_table *table,
                                   int64_t rowid);

/* The slot of a live row whose key `key_index` equals values (one per key
 * column, in key order), other than skip_slot (-1 for none); -1 if none. */
ptrdiff_t engine__table_find_key(const struct engine_table *table,
                                 size_t key_index,
                                 const struct engine_value *values,
                                 ptrdiff_t skip_slot);

/* Appends a row: values[column_count] already converted by affinity; the
 * caller has checked constraints. Copies the bytes. */
int engine__table_insert(struct engine_table *table, int64_t rowid,
                         const struct engine_value *values, size_t *slot_out);

/* Replaces the values of a live slot (and its rowid). */
int engine__table_update(struct engine_table *table, size_t slot, int64_t rowid,
                         const struct engine_value *values);

/* Brings a deleted slot back with (rowid, values): the undo of a delete.
 * Slots are never reused, so the slot is still free. */
int engine__table_restore(struct engine_table *table, size_t slot,
                          int64_t rowid, const struct engine_value *values);

/* The rowid SQLite gives a new row when none is given: one more than the
 * largest live rowid, which may be negative or 0 (1 in an empty table).
 * Exhaustion (INT64_MAX in use) returns INT64_MIN, never a next rowid. */
int64_t engine__table_next_rowid(struct engine_table *table);

/* Marks a slot deleted and frees its bytes. */
void engine__table_delete(struct engine_table *table, size_t slot);

/* Slots of live rows in rowid order (descending when reverse): fills
 * out[0..n) starting after *cursor positions, up to max; returns n (0 at
 * the end), or UINT32_MAX when out of memory. */
uint32_t engine__table_scan(struct engine_table *table, size_t *cursor,
                            uint32_t *out, uint32_t max, bool reverse);

/* Makes the batch's vectors view rows of the table: column c of batch row i
 * is column columns[c] of slots[i] (columns[c] == SIZE_MAX: the rowid). */
int engine__table_fill(const struct engine_table *table, const uint32_t *slots,
                       uint32_t count, const size_t *columns,
                       struct engine_batch *batch);

/* Records an index (CREATE INDEX text sql, copied). A UNIQUE index over
 * columns becomes a unique key; ENGINE_ECONSTRAINT if the rows already
 * break it (the caller then undoes the index). */
int engine__table_add_index(struct engine_table *table, const char *name,
                            const char *sql, size_t sql_size, bool unique,
                            const size_t *columns, size_t column_count);

/* Removes the table's last index (and its unique key). */
void engine__table_drop_last_index(struct engine_table *table);

/* prefix + the CREATE statement from the object's name on, as
 * sqlite_schema shows it; common_malloc'd, NULL when out of memory. */
char *engine__schema_text(const char *prefix, const char *sql, size_t size);

/* ---- internal to the table files ---- */

/* A hash of v consistent with engine__value_compare() under collation:
 * values that compare equal hash alike. */
uint64_t engine__value_hash(const struct engine_value *v,
                            enum engine_collation collation);

/* Index maintenance for a slot whose values are in place (table_key.c). */
int engine__table_rowid_add(struct engine_table *table, size_t slot);
void engine__table_rowid_remove(struct engine_table *table, size_t slot);
int engine__table_keys_add(struct engine_table *table, size_t slot);
int engine__table_keys_add_one(struct engine_table *table, size_t key_index,
                               size_t slot);
int engine__table_key_rebuild(struct engine_table *table, size_t key_index);
void engine__table_keys_remove(struct engine_table *table, size_t slot);

#endif /* SINEW_ENGINE_TABLE_H */
