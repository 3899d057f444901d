/* SPDX-License-Identifier: MIT
 *
 * semi.h: correlated EXISTS subqueries decorrelated into hash semi joins.
 *
 * SQLite runs a correlated subquery again for every row of the enclosing
 * query (expr_outer.c does the same); without an index on the inner table
 * that costs outer rows x inner rows. For the common shape
 *
 *   [NOT] EXISTS (SELECT ... FROM u WHERE u.c1 = <outer expr> AND ...
 *                 AND <terms over u only>)
 *
 * the planner (expr_semi_plan.c) instead reads u once per execution with
 * the terms over u only, hashing each row by the inner sides of the
 * equalities as their comparisons see them (engine__join_key_hash), and
 * each enclosing row computes the outer sides, probes, and tests the
 * equalities on the rows of its bucket (expr_semi.c). It does so only when
 * that gives SQLite's answer whatever the order of evaluation: no term can
 * raise an error or differ between runs, and u is read again whenever it
 * has changed since.
 */
#ifndef SINEW_ENGINE_SEMI_H
#define SINEW_ENGINE_SEMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_int.h"
#include "join.h"

/* One correlated equality "inner = outer" (or "outer = inner"). */
struct engine_semi_key {
    const struct engine_expr *compare; /* the "=", compiled in the subquery:
                                          affinities, collation */
    int inner_arg;                     /* compare's args[inner_arg] reads u */
    struct engine_expr *inner;         /* over u's scan */
    struct engine_expr *outer;         /* over the enclosing query's row */
};

struct engine_semi {
    struct engine_table *table; /* u */
    struct engine_op *source;   /* u's rows that pass the terms over u */
    struct engine_semi_key keys[ENGINE__JOIN_KEY_MAX];
    size_t key_count;
    /* Per execution, built at the first enclosing row (owned): */
    bool built;
    uint64_t built_changes;    /* table->change_count then */
    struct engine_value *rows; /* row_count x key_count inner key values */
    size_t row_count;
    size_t row_capacity;
    uint64_t *hashes; /* per row */
    size_t *next;     /* per row: the next row of its bucket + 1 */
    size_t *buckets;  /* the first row of the bucket + 1; 0: none */
    size_t bucket_mask;
    struct engine_arena rows_arena; /* the rows' bytes */
    struct engine_arena key_arena;  /* conversions, per batch */
};

/* EXISTS expression e (its subquery, select, just planned in ctx as a
 * correlated one) gets e->u.subquery->semi when the shape above allows
 * it; otherwise it stays as it is. 0, or an error of planning. */
int engine__semi_plan(struct engine_compile *ctx,
                      const struct ast_select *select, struct engine_expr *e);

/* EXISTS with a semi: its truth for every live row of batch (the
 * enclosing query's), into e->result. 0, or an error recorded on the
 * statement. */
int engine__semi_eval(struct engine_expr *e, struct engine_eval *eval,
                      const struct engine_batch *batch);

/* Frees what an execution built (engine__subquery_forget). */
void engine__semi_forget(struct engine_semi *semi);

/* The hashes decorrelated subqueries built over the table called name
 * (0 without one): tests see that the semi join ran. */
uint64_t engine__semi_builds(const struct engine_db *db, const char *name);

#endif /* SINEW_ENGINE_SEMI_H */
