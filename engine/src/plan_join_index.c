/* SPDX-License-Identifier: MIT
 *
 * plan_join_index.c: when a join looks its right table up per left row
 * (an index nested loop, join.h's engine_join_lookup) rather than hashing
 * it whole (op_join.c).
 *
 * The right item must be a table (not a subquery or view) joined INNER or
 * LEFT, and the join's terms must give a lookup into it: "=" between its
 * rowid, or every column of a UNIQUE key or CREATE INDEX, and values over
 * the items to its left, under the rules a single-table read follows
 * (engine__plan_access_join(): the index's collation, an affinity its
 * entries fit, INDEXED BY and NOT INDEXED), which are where.c's.
 *
 * Cost: the hash join reads the right item's rows once per execution;
 * the lookups read, per left row, the rows one key finds (one for the
 * rowid or a UNIQUE key; for an index, SQLite's guess without ANALYZE,
 * ten) after a probe. The lookups win when the left rows expected, times
 * one plus those, are fewer than the right item's rows expected (its
 * table's, a quarter when it has terms of its own: plan_join.c). The rows
 * a join is expected to yield, which the next join weighs, are the left's
 * times the rows one left row finds: one per key found by a UNIQUE key,
 * ten by an index or a hashed equality (capped at the right's rows), all
 * of the right's without an equality.
 */
#include <math.h>

#include "access.h"
#include "join_int.h"

/* SQLite's rows per value of an index column without ANALYZE
 * (sqlite3DefaultRowEst: aiRowLogEst[1] is 10 rows). */
#define INDEX_ROWS 10.0

/* The rows one left row finds in the right item when it is hashed. */
static double hashed_rows(const struct join_item *it,
                          const struct engine_join_spec *spec)
{
    return spec->key_count > 0 ? fmin(it->rows, INDEX_ROWS) : it->rows;
}

/* The lookup join k's terms allow into its table, or NULL. */
static int usable_lookup(struct engine_join_plan *plan, size_t k,
                         struct engine_access **access)
{
    struct join_item *it = &plan->items[k];
    size_t n = it->term_count;
    const struct ast_expr **asts =
        engine__plan_alloc(plan->stmt, (n + 1) * sizeof(*asts));
    struct engine_expr **exprs =
        engine__plan_alloc(plan->stmt, (n + 1) * sizeof(*exprs));

    *access = NULL;
    if (asts == NULL || exprs == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        asts[i] = it->terms[i].ast;
        exprs[i] = it->terms[i].expr;
    }
    return engine__plan_access_join(plan->stmt, it->table, it->first,
                                    &it->ast->hint, asts, exprs, n, access);
}

int engine__join_plan_lookup(struct engine_join_plan *plan, size_t k,
                             const struct engine_join_spec *spec, double *rows,
                             struct engine_join_lookup **out)
{
    struct join_item *it = &plan->items[k];
    struct engine_access *access = NULL;
    double left = *rows;
    double found;
    int rc;

    *out = NULL;
    *rows = fmax(1, left * hashed_rows(it, spec));
    if (it->table == NULL || it->term_count == 0 || spec->merged_count > 0 ||
        (spec->kind != AST_JOIN_INNER && spec->kind != AST_JOIN_LEFT) ||
        spec->right_width != it->table->column_count + 1) {
        return 0;
    }
    rc = usable_lookup(plan, k, &access);
    if (rc != 0 || access == NULL) {
        return rc;
    }
    found = access->kind == ENGINE_ACCESS_INDEX ? INDEX_ROWS : 1;
    if (left * (1 + found) >= it->rows) {
        return 0;
    }
    *out = engine__plan_alloc(plan->stmt, sizeof(**out));
    if (*out == NULL) {
        return COMMON_ENOMEM;
    }
    (*out)->table = it->table;
    (*out)->access = access;
    (*out)->filter = it->filter_expr;
    *rows = fmax(1, left * fmin(found, it->rows));
    return 0;
}
