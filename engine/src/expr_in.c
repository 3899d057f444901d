/* SPDX-License-Identifier: MIT
 *
 * expr_in.c: x IN (SELECT ...), one row at a time, against the values its
 * subquery produced (expr.c runs the subquery once, the first time a row
 * reaches it). A small set is compared value by value; a larger one is
 * hashed as the comparison sees its values; a live IN (in_live.c) is
 * looked up in its table as it is now.
 */
#include "engine_int.h"
#include "expr_int.h"
#include "rowset.h"

/* Whether an IN (SELECT) compares with REAL affinity: one side REAL, the
 * other with no affinity (sqlite3CompareAffinity in exprINAffinity). */
static bool in_query_real(const struct engine_expr *lhs,
                          const struct engine_expr *set)
{
    if (lhs->has_affinity && set->has_affinity) {
        return false;
    }
    return (lhs->has_affinity && lhs->affinity == ENGINE_AFFINITY_REAL) ||
           (set->has_affinity && set->affinity == ENGINE_AFFINITY_REAL);
}

/* A value as a REAL-affinity key of SQLite's ephemeral IN table: OP_Affinity
 * and OP_MakeRecord (vdbe.c, 3.40) make text numeric, then keep an integer
 * that fits in 6 bytes as an integer read as REAL and store a wider one as
 * the nearest double, so 9007199254740993 IN (SELECT CAST(... AS REAL))
 * meets 9007199254740992.0. */
static struct engine_value real_key(struct engine_value v,
                                    struct engine_arena *arena)
{
    const int64_t six_byte_max = ((int64_t)1 << 47) - 1;
    struct engine_value unused = engine__value_null();

    if (engine__comparison_prepare(&v, ENGINE_AFFINITY_REAL, &unused,
                                   ENGINE_AFFINITY_REAL, arena) == 0 &&
        v.type == ENGINE_INTEGER &&
        (v.u.i > six_byte_max || v.u.i < -six_byte_max - 1)) {
        return engine__value_real((double)v.u.i);
    }
    return v;
}

/* The comparison an IN (SELECT) makes: its left side against a value of
 * the subquery's column, under the subquery's affinity and collation.
 * Points into itself: initialize in place, do not copy. */
struct in_probe {
    struct engine_expr compare;
    struct engine_expr other;
    struct engine_expr *pair[2];
    bool real_keys; /* REAL affinity keys: real_key() */
};

static void in_probe_init(struct in_probe *probe,
                          const struct engine_expr *expr)
{
    const struct engine_subquery *subquery = expr->u.subquery;

    probe->compare = *expr;
    probe->other = (struct engine_expr){.affinity = subquery->affinity,
                                        .has_affinity = expr->set_has_affinity};
    probe->pair[0] = expr->args[0];
    probe->pair[1] = &probe->other;
    probe->compare.args = probe->pair;
    probe->compare.u.compare = ENGINE_COMPARE_EQ;
    probe->compare.collation = subquery->collation;
    probe->real_keys = in_query_real(expr->args[0], &probe->other);
}

/* v as probe's comparison sees it on side `side` (0: the left): the conversions
 * depend on the two affinities only, so each side can be made alone, and equal
 * values then compare equal under the IN's collation (engine__value_compare),
 * which the hash agrees with. */
static int in_canonical(const struct in_probe *probe, int side,
                        struct engine_value *v, struct engine_arena *arena)
{
    struct engine_value unused = engine__value_null();
    int rc =
        side == 0
            ? engine__expr_compare_prepare(&probe->compare, v, &unused, arena)
            : engine__expr_compare_prepare(&probe->compare, &unused, v, arena);

    if (rc == 0 && probe->real_keys) {
        *v = real_key(*v, arena);
    }
    return rc;
}

/* Whether the value key, as SQLite's index seek would find it, is in the
 * live table: by rowid (live_key -2) or by its UNIQUE key. */
static bool live_has(const struct engine_subquery *subquery,
                     struct engine_value key)
{
    int64_t rowid = 0;

    if (subquery->live_key >= 0) {
        return engine__table_find_key(subquery->live_table,
                                      (size_t)subquery->live_key, &key,
                                      -1) >= 0;
    }
    if (key.type == ENGINE_FLOAT &&
        engine__real_to_exact_int(key.u.r, &rowid)) {
        key = engine__value_int(rowid);
    }
    return key.type == ENGINE_INTEGER &&
           engine__table_find_rowid(subquery->live_table, key.u.i) >= 0;
}

/* Whether the live key's column holds a NULL now. */
static bool live_null(const struct engine_subquery *subquery)
{
    const struct engine_table *table = subquery->live_table;

    for (size_t slot = 0; subquery->live_key >= 0 && slot < table->slot_count;
         slot++) {
        if (!table->deleted[slot] &&
            engine__table_get(table, slot, subquery->live_column).type ==
                ENGINE_NULL) {
            return true;
        }
    }
    return false;
}

/* A live IN over a rowid or a one-column UNIQUE key (in_live.c): x, made
 * what the comparison compares, looked up in the table as it is now, as
 * SQLite seeks its index. Not found, it is NULL if the column held a NULL
 * at the first use (sqlite3SetHasNullFlag, under OP_Once) and still does
 * (sqlite3ExprCodeIN then compares with every row). */
static int in_live_row(struct engine_expr *expr, struct engine_eval *eval,
                       struct engine_value x, int *truth)
{
    const struct engine_subquery *subquery = expr->u.subquery;
    struct in_probe probe;
    int rc;

    if (subquery->live_table->live_count == 0) {
        *truth = expr->negated;
        return 0;
    }
    if (x.type == ENGINE_NULL) {
        *truth = -1;
        return 0;
    }
    in_probe_init(&probe, expr);
    rc = in_canonical(&probe, 0, &x, eval->arena);
    if (rc != 0) {
        return engine__error(eval->exec, rc, "out of memory");
    }
    if (live_has(subquery, x)) {
        *truth = !expr->negated;
    } else {
        *truth =
            subquery->set_has_null && live_null(subquery) ? -1 : expr->negated;
    }
    return 0;
}

/* Sets larger than this are probed through a hash (subquery->lookup). */
#define IN_SCAN_MAX 8

static int in_build_lookup(struct engine_subquery *subquery,
                           const struct in_probe *probe,
                           struct engine_arena *arena)
{
    struct engine_rowset *lookup = common_malloc(sizeof(*lookup));
    int rc = lookup == NULL ? COMMON_ENOMEM : 0;

    if (lookup == NULL) {
        return rc;
    }
    engine__rowset_init(lookup, 1, &subquery->collation);
    subquery->lookup = lookup;
    for (size_t i = 0; rc == 0 && i < subquery->set_count; i++) {
        struct engine_value v = subquery->set[i];
        bool inserted;
        size_t index;

        rc = in_canonical(probe, 1, &v, arena);
        if (rc == 0) {
            rc = engine__rowset_insert(lookup, &v, &inserted, &index);
        }
    }
    return rc;
}

/* x IN (SELECT ...) over a large set: x made canonical, then hashed. */
static int in_hashed_row(struct engine_expr *expr, struct engine_eval *eval,
                         struct engine_value x, int *truth)
{
    struct engine_subquery *subquery = expr->u.subquery;
    struct in_probe probe;
    size_t index;
    int rc = 0;

    if (x.type == ENGINE_NULL) {
        *truth = -1;
        return 0;
    }
    in_probe_init(&probe, expr);
    if (subquery->lookup == NULL) {
        rc = in_build_lookup(subquery, &probe, eval->arena);
    }
    if (rc == 0) {
        rc = in_canonical(&probe, 0, &x, eval->arena);
    }
    if (rc != 0) {
        return engine__error(eval->exec, rc, "out of memory");
    }
    if (engine__rowset_find(subquery->lookup, &x, &index)) {
        *truth = !expr->negated;
    } else {
        *truth = subquery->set_has_null ? -1 : expr->negated;
    }
    return 0;
}

/* x IN (SELECT ...) against the subquery's cached distinct values. */
static int in_query_row(struct engine_expr *expr, struct engine_eval *eval,
                        struct engine_value x, int *truth)
{
    const struct engine_subquery *subquery = expr->u.subquery;
    struct in_probe probe;

    if (subquery->set_count == 0 && !subquery->set_has_null) {
        *truth = expr->negated;
        return 0;
    }
    if (subquery->set_count > IN_SCAN_MAX) {
        return in_hashed_row(expr, eval, x, truth);
    }
    in_probe_init(&probe, expr);
    for (size_t i = 0; i < subquery->set_count; i++) {
        int equal;
        int rc = engine__expr_compare_values(
            &probe.compare, probe.real_keys ? real_key(x, eval->arena) : x,
            probe.real_keys ? real_key(subquery->set[i], eval->arena)
                            : subquery->set[i],
            eval->arena, &equal);

        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        if (equal < 0) {
            *truth = -1; /* x is NULL */
            return 0;
        }
        if (equal > 0) {
            *truth = !expr->negated;
            return 0;
        }
    }
    *truth = subquery->set_has_null ? -1 : expr->negated;
    return 0;
}

int engine__expr_in_row(struct engine_expr *expr, struct engine_eval *eval,
                        struct engine_value x, int *truth)
{
    const struct engine_subquery *subquery = expr->u.subquery;

    return subquery->live_table != NULL && subquery->live_key != -1
               ? in_live_row(expr, eval, x, truth)
               : in_query_row(expr, eval, x, truth);
}
