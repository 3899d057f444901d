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
 * NULLs never collide, values compare with the column's collation. A
 * non-unique CREATE INDEX keeps a hash multimap from its key to the slots
 * holding it (table_index.c), which the planner uses for lookups.
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

struct engine_graveyard;

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
    char *index_name;       /* for a CREATE UNIQUE INDEX; NULL otherwise */
    bool collation_differs; /* a column was given a COLLATE other than its
                               own, which SQLite's index has and this hash
                               does not: lookups must not use the key */
    /* Open-addressing hash from key to slot + 1 (0: empty, SIZE_MAX:
     * removed). */
    size_t *buckets;
    size_t bucket_count; /* power of two */
    size_t used;         /* buckets not empty (live or removed) */
};

/* The in-memory form of a non-unique CREATE INDEX: a hash multimap from
 * the key (the values of columns, equal under collations) to the live
 * slots holding it. Each distinct key has one bucket naming its first
 * slot; the slots of one key form a chain through next/prev, in the order
 * they were added (prev of the first is the last, so adding at the end
 * costs nothing). Rows with a NULL in the key are not kept: no "=" finds
 * them. */
struct engine_table_index {
    size_t *columns;                   /* table column per key column, owned */
    enum engine_collation *collations; /* per key column, owned */
    size_t column_count;
    size_t *buckets;      /* first slot of a key + 1; 0 empty, SIZE_MAX gone */
    size_t bucket_count;  /* power of two */
    size_t used;          /* buckets not empty (keys or removed) */
    size_t keys;          /* buckets holding a key */
    uint32_t *next;       /* per slot: next slot of its key, or UINT32_MAX */
    uint32_t *prev;       /* per slot: previous (first: the last); UINT32_MAX
                             when the slot is not in the index */
    size_t link_capacity; /* slots next and prev have room for */
};

struct engine_index_def {
    char *name; /* owned */
    char *sql;  /* CREATE INDEX text, owned */
    bool unique;
    uint64_t sequence; /* creation order among schema objects */
    /* Non-unique: the multimap, owned; NULL for a UNIQUE index (its key is
     * in the table's keys) and for one no lookup may use (partial). */
    struct engine_table_index *lookup;
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

/* Zone maps: the table's slots fall into blocks of ENGINE__ZONE_ROWS
 * (block b holds slots [b * ENGINE__ZONE_ROWS, (b + 1) *
 * ENGINE__ZONE_ROWS)), the rows of one segment of the main file when the
 * table was loaded (ENGINE__SEGMENT_ROWS). Each block keeps, per column,
 * what a scan may skip it by (table_zone.c, zone.h). */
#define ENGINE__ZONE_ROWS 65536u

/* One column over one block. null_count is exact over the block's live
 * rows; min and max only widen (a value deleted or overwritten stays in
 * them), so every live number of the block lies between them. A TEXT or
 * BLOB written (or a NaN) sets has_other for good: the bounds then say
 * nothing of those values. The rowid alias column keeps none. */
struct engine_zone {
    struct engine_value min; /* INTEGER or REAL, when has_number */
    struct engine_value max; /* INTEGER or REAL, when has_number */
    uint32_t null_count;     /* live rows whose value is NULL */
    bool has_number;         /* a number was written: min, max are set */
    bool has_other;          /* a TEXT or BLOB was written */
};

/* What a WHERE term lets through, as a scan tests it against a zone
 * (op_zone.c makes these from the terms): a row the term holds on has a
 * value of this kind, so a block with none is skipped. */
enum engine_zone_test {
    ENGINE_ZONE_NOTHING,    /* no row passes */
    ENGINE_ZONE_NULL,       /* a NULL */
    ENGINE_ZONE_NOT_NULL,   /* any value but NULL */
    ENGINE_ZONE_NOT_NUMBER, /* a TEXT or BLOB */
    ENGINE_ZONE_EQ,         /* a TEXT or BLOB, or a number = bound */
    ENGINE_ZONE_LT,         /* ... or a number < bound */
    ENGINE_ZONE_LE,         /* ... or a number <= bound */
    ENGINE_ZONE_GT,         /* ... or a number > bound */
    ENGINE_ZONE_GE,         /* ... or a number >= bound */
};

struct engine_zone_check {
    enum engine_zone_test test;
    size_t column;             /* a table column, not the rowid alias */
    struct engine_value bound; /* EQ..GE: INTEGER or REAL */
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
    /* Entries of indexes ever set up. Dropping an index frees only its
     * name and text (engine__table_drop_last_index), so those past
     * index_count may still own a lookup: engine__table_indexes_sweep()
     * frees it at the table's next change. */
    size_t index_slots;

    /* storage */
    struct engine_column_store *stores; /* column_count */
    int64_t *rowids;
    uint8_t *deleted;
    size_t slot_count; /* slots in use, deleted ones included */
    size_t slot_capacity;
    size_t live_count;
    uint64_t change_count; /* rows inserted, updated, deleted or restored:
                              a live IN (SELECT) reads again when it moves */
    int64_t rowid_max;     /* the largest live rowid (0 when empty); when
                              stale, at least that: never below one */
    bool rowid_max_stale;  /* the row holding rowid_max went away */
    bool in_rowid_order;   /* live slots sorted by rowid */
    uint32_t *scan_order;  /* slot permutation in rowid order, or NULL */
    /* The rowid index: while rowids strictly ascend with the slots
     * (deleted ones included), as when rows come in rowid order, lookups
     * search the rowids themselves; once a row breaks the order, a hash
     * from rowid to slot + 1 (table_key.c). */
    bool rowids_ascending;
    bool bulk_loading; /* rows come from a main file: keys and lookups are
                          adopted or built after them (dbfile_index.c) */
    size_t *rowid_buckets;
    size_t rowid_bucket_count;
    size_t rowid_bucket_used;
    /* Zone maps, for blocks [0, zone_block_capacity): the blocks
     * slot_capacity covers, so a row never waits on memory for its zone. */
    struct engine_zone *zones; /* [block * column_count + column], owned */
    uint32_t *block_live;      /* live rows per block, owned */
    size_t zone_block_capacity;
    uint64_t zone_skips;  /* blocks scans found they could skip (tests) */
    uint64_t join_probes; /* lookups index joins made in it (tests) */
    /* Where bytes the table lets go of go (the handle's, set when the
     * table enters its catalog; NULL: freed at once): graveyard.h. */
    struct engine_graveyard *graveyard;
    uint64_t semi_builds; /* hashes decorrelated subqueries built (tests) */
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

/* Sorts slots[0..count) by their rows' rowids. */
void engine__table_sort_slots(const struct engine_table *table, uint32_t *slots,
                              size_t count);

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

/* A growable list of slots (common_malloc'd; the owner frees slots). */
struct engine_slot_list {
    uint32_t *slots;
    size_t count;
    size_t capacity;
};

/* Appends to out the live slots whose key in indexes[position] (which has
 * a lookup) equals values (one per index column, in index order, the
 * columns' affinity already applied), in rowid order; none when a value is
 * NULL. 0, or COMMON_ENOMEM. */
int engine__table_index_find(const struct engine_table *table, size_t position,
                             const struct engine_value *values,
                             struct engine_slot_list *out);

/* PRAGMA integrity_check: whether the lookup of indexes[position] holds
 * exactly the live slots whose key has no NULL, each under its key. */
bool engine__table_index_consistent(const struct engine_table *table,
                                    size_t position);

/* The scan position (engine__table_scan()'s cursor) from which a scan
 * yields the live rows whose rowid is >= rowid (<= rowid when reverse), in
 * order. SIZE_MAX when out of memory. */
size_t engine__table_scan_seek(struct engine_table *table, int64_t rowid,
                               bool reverse);

/* The scan position from which a scan yields the live rows after rowid
 * (before it when reverse), in order: where a scan goes on once the table
 * changed under it, its last row read being rowid (SQLite's cursor seeks
 * its saved key again: btreeRestoreCursorPosition). SIZE_MAX when out of
 * memory. */
size_t engine__table_scan_resume(struct engine_table *table, int64_t rowid,
                                 bool reverse);

/* Zone maps (table_zone.c). */

/* Whether checks[0..count) prove that no live row of block passes: some
 * check that no value of its column in the block is of the kind it lets
 * through, or the block has no live row. */
bool engine__table_zone_excludes(const struct engine_table *table, size_t block,
                                 const struct engine_zone_check *checks,
                                 size_t count);

/* The blocks holding slots [0, slot_count). */
size_t engine__table_block_count(const struct engine_table *table);

/* Whether every slot of block below slot_count is live and holds no NULL
 * in any of columns[0..count) (which are not the rowid alias): the JIT
 * reads such a block without its deleted and NULL flags. */
bool engine__table_block_clean(const struct engine_table *table, size_t block,
                               const size_t *columns, size_t count);

/* engine__table_scan() that passes over every block b < block_count with
 * skip[b] set (borrowed): none of its slots is given out. */
uint32_t engine__table_scan_skipping(struct engine_table *table, size_t *cursor,
                                     uint32_t *out, uint32_t max, bool reverse,
                                     const uint8_t *skip, size_t block_count);

/* ---- internal to the table files ---- */

/* Zone upkeep (table_zone.c): room for the blocks of capacity slots;
 * a live slot's values counted in (after they are written) or out
 * (before they go). */
int engine__table_zones_reserve(struct engine_table *table, size_t capacity);
void engine__table_zone_add(struct engine_table *table, size_t slot);
void engine__table_zone_remove(struct engine_table *table, size_t slot);

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
/* Builds key_index's hash again from the rows, sized for them (REINDEX);
 * the old one stays when that fails (COMMON_ENOMEM). */
int engine__table_key_reindex(struct engine_table *table, size_t key_index);
void engine__table_keys_remove(struct engine_table *table, size_t slot);

/* The same for the lookups of non-unique indexes (table_index.c). */
int engine__table_indexes_add(struct engine_table *table, size_t slot);
void engine__table_indexes_remove(struct engine_table *table, size_t slot);
/* Builds the lookup of indexes[position] over the table's rows. */
int engine__table_index_build(struct engine_table *table, size_t position,
                              const size_t *columns,
                              const enum engine_collation *collations,
                              size_t column_count);
/* Builds the lookup of indexes[position] anew from the table's rows
 * (REINDEX); the old one stays when that fails (COMMON_ENOMEM). */
int engine__table_index_reindex(struct engine_table *table, size_t position);
/* What CREATE INDEX text sql says beyond the columns (resolved by the
 * caller into columns): each column's collation (its COLLATE, else the
 * column's) and whether the index is partial (WHERE). 0, or ENGINE_ESQL
 * when the text does not parse as such an index, COMMON_ENOMEM. */
int engine__table_index_declared(const struct engine_table *table,
                                 const char *sql, size_t size,
                                 const size_t *columns, size_t column_count,
                                 enum engine_collation *collations,
                                 bool *partial);
/* Loading a main file (dbfile_index.c): while table->bulk_loading, inserts
 * leave the keys and lookups alone; then each takes the hash the file
 * kept (adopt: buckets as slot + 1, 0 empty, SIZE_MAX removed; next per
 * slot, UINT32_MAX ending a chain; ownership of buckets passes on success),
 * or is built again over every row. ENGINE_ECORRUPT when what the file
 * kept cannot be the index of these rows' slots. */
int engine__table_key_adopt(struct engine_table *table, size_t key_index,
                            size_t *buckets, size_t bucket_count);
int engine__table_index_adopt(struct engine_table *table, size_t position,
                              size_t *buckets, size_t bucket_count,
                              const uint32_t *next);
int engine__table_index_rebuild(struct engine_table *table, size_t position);

/* Frees the lookups of dropped indexes (past index_count), or of all. */
void engine__table_indexes_sweep(struct engine_table *table);
void engine__table_indexes_free(struct engine_table *table);

#endif /* SINEW_ENGINE_TABLE_H */
