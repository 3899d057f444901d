/* SPDX-License-Identifier: MIT
 *
 * zone.h: skipping the blocks of a table that a WHERE cannot match.
 *
 * A table keeps a zone map per block of ENGINE__ZONE_ROWS slots and per
 * column (table.h: NULL count, and the least and greatest number). The
 * planner picks the WHERE's terms a zone can answer (plan_zone.c):
 * "column op value" with op one of = IS < <= > >= (either way round, and
 * the two halves of "column BETWEEN a AND b"), "column IS NULL" and
 * "column IS NOT NULL", the value free of columns and unable to fail. The
 * scan evaluates the values when it first needs rows, converts each as the
 * comparison will (engine__expr_compare_prepare, with SQLite's comparison
 * affinity: "numcol < '5'" compares with 5), and passes over every block
 * where some term is false or NULL on every row (op_zone.c).
 *
 * Why the result stays SQLite's: a WHERE's top-level AND runs its terms
 * left to right and a row leaves at the first one that is not true (a
 * NULL decides too: sqlite3ExprIfFalse with SQLITE_JUMPIFNULL), so the
 * terms after a skipped row's failing term never run on it. The terms
 * before it would, so a term is used only when every term before it is
 * harmless: it cannot fail nor do anything but compute (columns,
 * literals, parameters, comparisons, arithmetic, CAST, CASE, AND, OR,
 * NOT; no function, subquery or LIKE). Skipped rows are thus rows SQLite
 * reads and rejects without any effect. Used only for a full scan (no
 * access path, access.h), which is when SQLite reads every row.
 */
#ifndef SINEW_ENGINE_ZONE_H
#define SINEW_ENGINE_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_int.h"

/* The most terms a scan tests zones with; later terms are not used. */
#define ENGINE__ZONE_TERMS_MAX 64

/* A WHERE term a zone answers: a COMPARE whose args[column_arg] reads
 * column and whose other operand is the value; or an IS_NULL / NOT_NULL
 * of the column. */
struct engine_zone_term {
    struct engine_expr *expr;
    size_t column;     /* table column, not the rowid alias */
    size_t column_arg; /* COMPARE: 0 or 1 */
};

/* The terms of one scan, in the statement's plan arena. */
struct engine_zone_plan {
    struct engine_zone_term *terms;
    size_t term_count;
    struct engine_zone_check *checks; /* per term, made as the scan starts */
};

/* What one execution of the scan knows: which blocks it skips. The scan
 * owns one; engine__zone_close() frees it. */
struct engine_zone_run {
    bool started;          /* checks were made this execution */
    uint8_t *skip;         /* per block: passed over; owned */
    size_t block_count;    /* blocks skip covers */
    size_t skip_capacity;  /* blocks skip has room for */
    uint64_t change_count; /* the table's when skip was computed */
};

/* The zone terms of a full scan of table whose WHERE is where (compiled
 * over the scan's columns: column i is table column i); *out NULL when
 * none. Allocates in the plan arena: 0 or COMMON_ENOMEM. */
int engine__plan_zones(struct engine_stmt *stmt,
                       const struct engine_table *table,
                       struct engine_expr *where,
                       struct engine_zone_plan **out);

/* Makes a scan operator (engine__op_scan) pass over the blocks zones
 * (borrowed: in the plan arena) rule out. */
void engine__op_scan_zones(struct engine_op *op,
                           const struct engine_zone_plan *zones);

/* The blocks of table to skip, current for its rows: on the first call
 * after engine__zone_reset(), the values are evaluated (bytes in arena);
 * skip is computed again whenever the table changed. 0, or an error set
 * on exec. */
int engine__zone_prepare(const struct engine_zone_plan *zones,
                         struct engine_zone_run *run,
                         struct engine_table *table, struct engine_exec *exec,
                         struct engine_arena *arena);

/* Starts run again, for a new execution. */
void engine__zone_reset(struct engine_zone_run *run);

/* Frees what run owns. */
void engine__zone_close(struct engine_zone_run *run);

/* Blocks the scans of db's table name found they could skip, since it
 * was loaded or created: for tests. 0 for an unknown table. */
uint64_t engine__zone_skips(const struct engine_db *db, const char *name);

#endif /* SINEW_ENGINE_ZONE_H */
