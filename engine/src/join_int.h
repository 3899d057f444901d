/* SPDX-License-Identifier: MIT
 *
 * join_int.h: what plan_join.c and plan_join_scope.c share: the plan of
 * a FROM clause of several items while it is made.
 */
#ifndef SINEW_ENGINE_JOIN_INT_H
#define SINEW_ENGINE_JOIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "join.h"

/* SQLite's limit: "at most 64 tables in a join" (BMS, a bitmask). */
#define JOIN_ITEMS_MAX 64

struct join_term {
    const struct ast_expr *ast;
    struct engine_expr *expr; /* over the combined scope */
    uint64_t items;           /* the items it reads */
    bool reads_merged;        /* it reads a merged USING column */
};

struct join_item {
    const struct ast_from_item *ast;
    struct engine_table *table; /* NULL: a subquery, or sqlite_schema */
    struct engine_scope scope;  /* its own columns, then its rowid */
    struct engine_op *op;
    const char *name;         /* its alias or table name: a copy of its own */
    size_t first;             /* its first column in the combined row */
    size_t width;             /* its columns and its rowid */
    size_t *merged;           /* RIGHT/FULL USING: pairs of combined columns */
    size_t merged_count;      /* merged columns, after the item's own */
    const char **using_names; /* its USING (or NATURAL) columns, in order */
    size_t using_count;
    const struct ast_expr *filter;    /* terms on its scan, or NULL */
    struct engine_expr *filter_expr;  /* filter over its own scope */
    const struct ast_expr **on_terms; /* its ON (or USING) terms */
    size_t on_count;
    struct join_term *terms; /* the terms of its join */
    size_t term_count;
    double rows; /* the rows its source is expected to yield */
    /* A table-valued function whose arguments read items to its left
     * (tvf.h): its source, which each left row sets going again; NULL
     * for every other item. */
    struct engine_op *lateral;
};

struct engine_join_plan {
    struct engine_stmt *stmt;
    const struct ast_select *select;
    struct join_item *items;
    size_t count;
    struct engine_scope *scope; /* the combined row */
    size_t column_capacity;
    size_t *column_item; /* per combined column: its item */
    bool *column_merged; /* per combined column: a merged USING column */
    const struct ast_expr *residual;
    /* Only inner joins: the items may be joined in another order, and
     * terms over several items wait in pending until it is chosen. */
    bool reorder;
    struct join_term *pending;
    size_t pending_count;
    struct engine_scope exec_scope; /* the combined row in that order */
    size_t *written_column;         /* per written column: where it is in it */
};

/* Appends column (copied) to the plan's current combined scope, as a
 * column of item `item` (merged: a RIGHT/FULL join's USING column). 0 or
 * COMMON_ENOMEM. */
int engine__join_add_column(struct engine_join_plan *plan,
                            const struct engine_scope_column *column,
                            size_t item, bool merged);

/* Whether join k (its spec made) should look its right item's rows up per
 * left row instead of hashing them (plan_join_index.c): *out the lookup,
 * or NULL. *rows, the rows expected from the joins before k, becomes those
 * expected once k is joined. 0 or COMMON_ENOMEM. */
int engine__join_plan_lookup(struct engine_join_plan *plan, size_t k,
                             const struct engine_join_spec *spec, double *rows,
                             struct engine_join_lookup **out);

#endif /* SINEW_ENGINE_JOIN_INT_H */
