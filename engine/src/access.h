/* SPDX-License-Identifier: MIT
 *
 * access.h: how a single-table SELECT, UPDATE or DELETE reads its table.
 *
 * Without a usable WHERE term a scan reads every row in rowid order. With
 * one, it reads only the rows SQLite's planner would visit
 * (where.c): the row of "rowid = x", the row of a UNIQUE or PRIMARY KEY
 * whose every column is compared with "=", the rows of a CREATE INDEX
 * whose every column is, or the rowids between "rowid > x" and "rowid <
 * y". The values compared with must not read the table (constants,
 * parameters, uncorrelated subqueries). The WHERE still runs on each row
 * read, so the access path only decides which rows it runs on, as SQLite's
 * does: which errors the other terms raise, and which rows they see.
 *
 * The planner chooses (plan_access.c); the scan operator evaluates the
 * values when it first needs a row and looks the rows up (op_access.c).
 */
#ifndef SINEW_ENGINE_ACCESS_H
#define SINEW_ENGINE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_int.h"

/* The most columns a lookup's key may have: each needs a WHERE term of its
 * own, and the planner considers the first 64 terms (two per BETWEEN). */
#define ENGINE__ACCESS_KEY_MAX 128

enum engine_access_kind {
    ENGINE_ACCESS_ROWID, /* rowid = value (OP_SeekRowid) */
    ENGINE_ACCESS_KEY,   /* every column of keys[target] = its value */
    ENGINE_ACCESS_INDEX, /* every column of indexes[target] = its value */
    ENGINE_ACCESS_RANGE, /* rowid > / >= low, < / <= high */
};

/* The value a key column (or the rowid) is compared with. */
struct engine_access_value {
    struct engine_expr *expr; /* reads no column of the table */
    size_t column;            /* KEY, INDEX: the key column's table
                                 column, and its collation: checked
                                 when the path runs (a DROP INDEX
                                 between two steps moves keys) */
    enum engine_collation collation;
    enum engine_affinity affinity; /* applied before the lookup, as
                                      OP_Affinity does to SQLite's key */
    bool is_is;                    /* "IS": a NULL value is looked for
                                      too, not an empty result */
};

struct engine_access {
    enum engine_access_kind kind;
    size_t target; /* KEY: the key's index; INDEX: the index's position */
    struct engine_access_value *values; /* per key column (ROWID: one) */
    size_t value_count;
    /* RANGE: either bound may be NULL (absent) */
    struct engine_expr *low;
    struct engine_expr *high;
    bool low_inclusive;  /* >= rather than > */
    bool high_inclusive; /* <= rather than < */
    /* The WHERE's comparisons the path answers: while it runs they pass
     * without being evaluated again (engine_expr.is_satisfied), as SQLite
     * no longer codes a term its loop uses ("rowid = random()" is
     * evaluated once). */
    struct engine_expr **satisfied;
    size_t satisfied_count;
};

/* The rows an access path yields, as a scan runs it (op_access.c). The
 * scan owns one per execution; engine__access_reset() starts it again. */
struct engine_access_run {
    bool started; /* the values were evaluated this execution */
    bool done;    /* no row is left */
    struct engine_slot_list found; /* EQ: slots found, in rowid order */
    size_t found_next;             /* the next found slot to yield */
    bool scan_all;   /* an IS key was NULL: every row, the WHERE decides */
    bool has_stop;   /* RANGE: the end bound was evaluated */
    int64_t stop;    /* RANGE: rows past this rowid end it */
    bool stop_empty; /* RANGE: the end bound admits no row */
};

/* The access path for a read of table whose WHERE is where_ast, compiled
 * into where over a scope whose column rowid_column is the rowid; *out is
 * NULL when no term of the WHERE's top-level AND can be used (the table is
 * scanned). hint (NULL: none) is the FROM item's INDEXED BY or NOT
 * INDEXED: NOT INDEXED allows only the rowid's paths, INDEXED BY only
 * lookups through its index. Where SQLite would scan the whole index
 * instead, sinew scans the table: the same rows, in rowid order.
 * Allocates in the statement's plan arena: 0 or COMMON_ENOMEM. */
int engine__plan_access(struct engine_stmt *stmt,
                        const struct engine_table *table,
                        ptrdiff_t rowid_column,
                        const struct ast_index_hint *hint,
                        const struct ast_expr *where_ast,
                        struct engine_expr *where, struct engine_access **out);

/* The lookup a join can make into table, its right item, for each left
 * row (op_join_index.c): terms (asts[i] as written, exprs[i] compiled over
 * the join's combined row, in which the table's columns start at first
 * and its rowid follows them) are the join's; an "=" between a column of
 * the table (or its rowid) and a value over the left items only serves
 * under the same rules as a single-table read's, and the same choice is
 * made among the rowid, the UNIQUE keys and the indexes the hint allows.
 * *out NULL when none serves. Plan arena: 0 or COMMON_ENOMEM. */
int engine__plan_access_join(struct engine_stmt *stmt,
                             const struct engine_table *table, size_t first,
                             const struct ast_index_hint *hint,
                             const struct ast_expr *const *asts,
                             struct engine_expr *const *exprs, size_t count,
                             struct engine_access **out);

/* "no such index: x" when hint names an index table does not have
 * (sqlite3IndexedByLookup), else 0. */
int engine__plan_index_hint_check(struct engine_stmt *stmt,
                                  const struct engine_table *table,
                                  const struct ast_index_hint *hint);

/* Whether access looks rows up through a CREATE INDEX that has column:
 * an UPDATE writing it loses SQLite's one pass (dml_pass.c). */
bool engine__access_index_has(const struct engine_access *access,
                              const struct engine_table *table, size_t column);

/* Makes a scan operator (engine__op_scan) read only the rows of access
 * (borrowed: in the plan arena). */
void engine__op_scan_access(struct engine_op *op,
                            const struct engine_access *access);

/* The next slots of the rows access yields, up to max, into out: *count
 * set, 0 at the end. reverse: in descending rowid order. The first call
 * after engine__access_reset() evaluates the values. 0, or an error set on
 * exec. */
int engine__access_next(const struct engine_access *access,
                        struct engine_access_run *run,
                        struct engine_table *table, struct engine_exec *exec,
                        struct engine_arena *arena, bool reverse,
                        size_t *cursor, uint32_t *out, uint32_t max,
                        uint32_t *count);

/* The rows of an equality path (ROWID, KEY or INDEX) for the values
 * given (one per access value, as evaluated; converted in place, bytes in
 * arena): their slots into run->found in rowid order (found_next 0), or
 * run->scan_all when every row must be tried (the key is no longer the
 * table's). A NULL value finds nothing (only "=" paths). 0 or
 * COMMON_ENOMEM. */
int engine__access_find(const struct engine_access *access,
                        struct engine_access_run *run,
                        const struct engine_table *table,
                        struct engine_value *values,
                        struct engine_arena *arena);

/* Starts run again, for a new execution; access (or NULL) no longer
 * answers its terms until it runs. */
void engine__access_reset(const struct engine_access *access,
                          struct engine_access_run *run);

/* Frees what run owns. */
void engine__access_close(struct engine_access_run *run);

#endif /* SINEW_ENGINE_ACCESS_H */
