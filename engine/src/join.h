/* SPDX-License-Identifier: MIT
 *
 * join.h: joins of several FROM items, planned by plan_join.c and run by
 * op_join.c.
 *
 * A FROM clause is a left-deep chain: item 0, joined with item 1, that
 * result joined with item 2, and so on: in the written order when a join
 * is outer, else in the order plan_join.c chooses. Each join materializes
 * its right input once per execution and streams its left input, so rows
 * come out in the left's order and, for one left row, in the right's
 * order: the order of SQLite's nested loop over the same inputs. A join
 * into a table through its rowid or an index may instead look the right
 * rows up per left row (engine_join_lookup below): the same rows, in the
 * same order.
 *
 * The combined row of a join is the left's columns then the right's, then
 * the merged USING columns of a RIGHT or FULL join (coalesce(left, right),
 * which is what SQLite shows for them). Because each join's row is a prefix
 * of the next one's, an expression compiled over the whole FROM clause
 * reads the same column indexes at every join that has its columns.
 */
#ifndef SINEW_ENGINE_JOIN_H
#define SINEW_ENGINE_JOIN_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "engine_int.h"
#include "plan.h"

/* One equality "left = right" the join hashes on: the right input is
 * bucketed by its key, each left row looks only at the rows of its
 * bucket. The equality itself stays in the predicate, so the hash only
 * has to agree with it: values the comparison finds equal (after its
 * affinity conversions, under its collation) hash alike. */
/* The most equalities one join hashes on; further ones are only tested. */
#define ENGINE__JOIN_KEY_MAX 16

struct engine_join_key {
    struct engine_expr *left;          /* over the left input */
    struct engine_expr *right;         /* over the right input */
    const struct engine_expr *compare; /* the "=": affinities, collation */
    bool swapped;                      /* compare's args[0] is the right */
};

/* Mixes into *hash the key value v, side arg of equality compare (0: its
 * args[0]), converted as the comparison converts it, so that values it
 * finds equal hash alike; *null (and *hash unchanged) when v is then NULL,
 * which equals nothing. Shared by the hash join and the decorrelated
 * subqueries (expr_semi.c). 0 or COMMON_ENOMEM. */
int engine__join_key_hash(const struct engine_expr *compare, int arg,
                          struct engine_value v, struct engine_arena *arena,
                          uint64_t *hash, bool *null);

struct engine_join_spec {
    enum ast_join_kind kind; /* INNER, LEFT, RIGHT or FULL */
    size_t left_width;       /* columns of the left input */
    size_t right_width;      /* columns of the right input */
    /* Terms over left ++ right, all of which a pair must pass (the ON
     * terms, and WHERE terms of an inner join); tested in order, each on
     * the pairs the ones before let through. */
    struct engine_expr **predicate;
    size_t predicate_count;
    struct engine_join_key *keys; /* hash keys; key_count 0: every pair */
    size_t key_count;
    /* RIGHT/FULL USING: output column left_width + right_width + i is
     * coalesce(merged[2i], merged[2i+1]), both indexes into left ++
     * right. */
    const size_t *merged;
    size_t merged_count;
};

/* The join of left and right (both owned by the statement) as spec says;
 * spec and what it points at are borrowed for the statement's life (plan
 * arena). NULL when out of memory. */
struct engine_op *engine__op_join(struct engine_stmt *stmt,
                                  struct engine_op *left,
                                  struct engine_op *right,
                                  const struct engine_join_spec *spec);

/* The right side of an index nested loop join: instead of reading its
 * table whole, the join looks up, for each left row, the rows access finds
 * for the values it computes over that row, as SQLite's loop seeks the
 * rowid or an index of its inner table (where.c). Then it reads their
 * columns (the table's, then the rowid), keeps those that pass filter (the
 * right item's own terms, compiled over that row; NULL: none) and tests
 * the predicate on each pair, as the hash join does: the same rows come
 * out, for one left row in rowid order. */
struct engine_access;

struct engine_join_lookup {
    struct engine_table *table;
    const struct engine_access *access; /* ROWID, KEY or INDEX; its values
                                           read the left input */
    struct engine_expr *filter;
};

/* An index nested loop join of left (owned by the statement) with
 * lookup's table; spec (INNER or LEFT, no merged columns) and lookup are
 * borrowed for the statement's life. NULL when out of memory. */
struct engine_op *engine__op_join_index(struct engine_stmt *stmt,
                                        struct engine_op *left,
                                        const struct engine_join_lookup *lookup,
                                        const struct engine_join_spec *spec);

/* The lookups index joins made in the table called name (0 without one):
 * tests see that a join took the index path. */
uint64_t engine__join_probes(const struct engine_db *db, const char *name);

/* ---- planning (plan_join.c) ---- */

struct engine_join_plan;

/* Plans the sources of a SELECT with several FROM items: each item's
 * scan or subquery, and the scope of their combined row (every item's
 * columns and rowid, plus merged USING columns) in *scope. The joins
 * themselves are made by engine__join_finish(), once the WHERE is known.
 * Errors (USING of a missing column, NATURAL with ON) are set on the
 * statement's database. */
int engine__join_begin(struct engine_stmt *stmt,
                       const struct ast_select *select,
                       struct engine_scope *scope,
                       struct engine_join_plan **out);

/* Distributes the WHERE and ON terms (WHERE terms over one item filter
 * its scan, equalities between a join's two sides become hash keys, the
 * rest go to the join they need, or above every join), makes the joins,
 * and sets *op to the last one and *residual to the WHERE terms left for
 * the caller to run above it (NULL: none). */
int engine__join_finish(struct engine_join_plan *plan,
                        const struct ast_expr *where, struct engine_op **op,
                        const struct ast_expr **residual);

/* Expands "*" (table NULL) or "table.*" over a joined scope into column
 * references, appended at results[*n] and names[*n]. ENGINE_ESQL "no such
 * table: t" when no item is called table. */
int engine__join_star(struct engine_stmt *stmt,
                      const struct engine_scope *scope, const char *table,
                      const struct ast_expr **results, const char **names,
                      size_t *n);

#endif /* SINEW_ENGINE_JOIN_H */
