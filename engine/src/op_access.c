/* SPDX-License-Identifier: MIT
 *
 * op_access.c: running an access path (access.h) inside a table scan: the
 * values are evaluated when the scan is first asked for rows, as SQLite
 * evaluates them when its loop starts (after the WHERE's constant terms,
 * which the filter above tests first), then the rows are looked up.
 *
 * The conversions are those of SQLite's opcodes, so that the same rows
 * are found:
 *   - rowid = x: OP_SeekRowid applies NUMERIC affinity to x and finds
 *     nothing unless that gives an INTEGER ('5' and 5.0 find rowid 5;
 *     'abc', 5.5 and NULL find nothing);
 *   - key = x: OP_Affinity applies the index column's affinity, then the
 *     index compares with its collation; a NULL x ends the lookup at once
 *     (OP_IsNull, tested once every value is computed), except under IS,
 *     which looks NULL up too (here: every row, the WHERE deciding);
 *   - rowid ranges: the start bound is evaluated and sought first; the end
 *     bound is evaluated only if a row was found there, and ends the scan
 *     at the first row past it (OP_SeekGE ... OP_Gt, where.c case 3).
 */
#include <math.h>
#include <string.h>

#include "access.h"

static void satisfy(const struct engine_access *access, bool satisfied)
{
    for (size_t i = 0; i < access->satisfied_count; i++) {
        access->satisfied[i]->is_satisfied = satisfied;
    }
}

void engine__access_reset(const struct engine_access *access,
                          struct engine_access_run *run)
{
    struct engine_slot_list found = run->found;

    if (access != NULL) {
        satisfy(access, false);
    }
    memset(run, 0, sizeof(*run));
    found.count = 0;
    run->found = found;
}

void engine__access_close(struct engine_access_run *run)
{
    common_free(run->found.slots);
    memset(run, 0, sizeof(*run));
}

static int add_found(struct engine_access_run *run, size_t slot)
{
    struct engine_slot_list *found = &run->found;

    if (found->count == found->capacity) {
        size_t grown = found->capacity ? found->capacity * 2 : 4;
        uint32_t *more =
            common_realloc_array(found->slots, grown, sizeof(*more));

        if (more == NULL) {
            return COMMON_ENOMEM;
        }
        found->slots = more;
        found->capacity = grown;
    }
    found->slots[found->count++] = (uint32_t)slot;
    return 0;
}

/* OP_SeekRowid: the row whose rowid is v under NUMERIC affinity. */
static int find_rowid(struct engine_access_run *run,
                      const struct engine_table *table, struct engine_value v,
                      struct engine_arena *arena)
{
    ptrdiff_t slot;

    if (v.type != ENGINE_INTEGER &&
        engine__value_apply_affinity(&v, ENGINE_AFFINITY_NUMERIC, arena) != 0) {
        return COMMON_ENOMEM;
    }
    if (v.type != ENGINE_INTEGER) {
        return 0;
    }
    slot = engine__table_find_rowid(table, v.u.i);
    return slot >= 0 ? add_found(run, (size_t)slot) : 0;
}

/* The NULL tests and affinities of the key's values, once every value is
 * computed, as codeAllEqualityTerms() codes them. *stop when a NULL under
 * "=" ends the lookup (no row); run->scan_all when one under IS makes
 * every row a candidate. */
static int prepare_key(const struct engine_access *access,
                       struct engine_access_run *run,
                       struct engine_arena *arena, struct engine_value *values,
                       bool *stop)
{
    bool null_is = false;

    *stop = false;
    for (size_t i = 0; i < access->value_count; i++) {
        const struct engine_access_value *value = &access->values[i];

        if (values[i].type == ENGINE_NULL) {
            *stop = *stop || !value->is_is;
            null_is = null_is || value->is_is;
        } else if (engine__value_apply_affinity(&values[i], value->affinity,
                                                arena) != 0) {
            return COMMON_ENOMEM;
        }
    }
    run->scan_all = null_is && !*stop;
    return 0;
}

/* Evaluates the key's values, in key order, into values (all of them
 * first), then prepares them. */
static int eval_key(const struct engine_access *access,
                    struct engine_access_run *run, struct engine_exec *exec,
                    struct engine_arena *arena, struct engine_value *values,
                    bool *stop)
{
    for (size_t i = 0; i < access->value_count; i++) {
        int rc = engine__expr_eval_constant(access->values[i].expr, exec, arena,
                                            &values[i]);

        if (rc != 0) {
            return rc;
        }
    }
    return prepare_key(access, run, arena, values, stop);
}

/* Whether the key or index planned is still the table's at target: the
 * plan is made again after a schema change, but a DROP INDEX run between
 * two steps of this statement moves the others. */
static bool key_still_there(const struct engine_access *access,
                            const struct engine_table *table)
{
    const size_t *columns = NULL;
    const enum engine_collation *collations = NULL;
    size_t count = 0;

    if (access->kind == ENGINE_ACCESS_KEY &&
        access->target < table->key_count) {
        columns = table->keys[access->target].columns;
        count = table->keys[access->target].column_count;
    } else if (access->kind == ENGINE_ACCESS_INDEX &&
               access->target < table->index_count &&
               table->indexes[access->target].lookup != NULL) {
        columns = table->indexes[access->target].lookup->columns;
        collations = table->indexes[access->target].lookup->collations;
        count = table->indexes[access->target].lookup->column_count;
    }
    for (size_t k = 0; count == access->value_count && k < count; k++) {
        if (columns[k] != access->values[k].column ||
            (collations != NULL &&
             collations[k] != access->values[k].collation)) {
            return false;
        }
    }
    return count == access->value_count && count > 0;
}

/* The rows whose key equals values (prepared). */
static int lookup_key(const struct engine_access *access,
                      struct engine_access_run *run,
                      const struct engine_table *table,
                      const struct engine_value *values)
{
    ptrdiff_t slot;

    if (access->kind == ENGINE_ACCESS_INDEX) {
        return engine__table_index_find(table, access->target, values,
                                        &run->found);
    }
    slot = engine__table_find_key(table, access->target, values, -1);
    return slot >= 0 ? add_found(run, (size_t)slot) : 0;
}

static int find_key(const struct engine_access *access,
                    struct engine_access_run *run,
                    const struct engine_table *table, struct engine_exec *exec,
                    struct engine_arena *arena)
{
    struct engine_value values[ENGINE__ACCESS_KEY_MAX];
    bool stop;
    int rc;

    if (!key_still_there(access, table)) {
        run->scan_all = true; /* every row, the WHERE deciding */
        return 0;
    }
    rc = eval_key(access, run, exec, arena, values, &stop);

    if (rc != 0 || stop || run->scan_all) {
        return rc;
    }
    return lookup_key(access, run, table, values);
}

int engine__access_find(const struct engine_access *access,
                        struct engine_access_run *run,
                        const struct engine_table *table,
                        struct engine_value *values, struct engine_arena *arena)
{
    bool stop;
    int rc;

    run->found.count = 0;
    run->found_next = 0;
    run->scan_all = false;
    if (access->kind == ENGINE_ACCESS_ROWID) {
        return values[0].type == ENGINE_NULL
                   ? 0
                   : find_rowid(run, table, values[0], arena);
    }
    if (!key_still_there(access, table)) {
        run->scan_all = true;
        return 0;
    }
    rc = prepare_key(access, run, arena, values, &stop);
    if (rc != 0 || stop || run->scan_all) {
        return rc;
    }
    return lookup_key(access, run, table, values);
}

enum bound {
    BOUND_ALL,  /* every rowid passes */
    BOUND_NONE, /* no rowid passes */
    BOUND_AT,   /* rowids from (lower) or up to (upper) *at pass */
};

/* The integer bound "rowid >= (or >) r" is, for a REAL r. */
static enum bound real_lower(double r, bool inclusive, int64_t *at)
{
    int64_t f;

    if (r >= 0x1p63) {
        return BOUND_NONE;
    }
    if (r < -0x1p63) {
        return BOUND_ALL;
    }
    if (inclusive) {
        *at = (int64_t)ceil(r);
        return BOUND_AT;
    }
    f = (int64_t)floor(r);
    if (f == INT64_MAX) {
        return BOUND_NONE;
    }
    *at = f + 1;
    return BOUND_AT;
}

/* The integer bound "rowid <= (or <) r" is, for a REAL r. */
static enum bound real_upper(double r, bool inclusive, int64_t *at)
{
    int64_t c;

    if (r >= 0x1p63) {
        return BOUND_ALL;
    }
    if (r < -0x1p63) {
        return BOUND_NONE;
    }
    if (inclusive) {
        *at = (int64_t)floor(r);
        return BOUND_AT;
    }
    c = (int64_t)ceil(r);
    if (c == INT64_MIN) {
        return BOUND_NONE;
    }
    *at = c - 1;
    return BOUND_AT;
}

/* The bound "rowid op v" sets, comparing as the term does: the rowid has
 * INTEGER affinity, so numeric text becomes a number, and any other text
 * or blob sorts after every number. */
static int range_bound(struct engine_value v, bool lower, bool inclusive,
                       struct engine_arena *arena, int64_t *at,
                       enum bound *bound)
{
    struct engine_value rowid = engine__value_int(0);
    int rc = engine__comparison_prepare(&rowid, ENGINE_AFFINITY_INTEGER, &v,
                                        ENGINE_AFFINITY_BLOB, arena);

    if (rc != 0) {
        return rc;
    }
    if (v.type == ENGINE_NULL) {
        *bound = BOUND_NONE;
    } else if (v.type == ENGINE_TEXT || v.type == ENGINE_BLOB) {
        *bound = lower ? BOUND_NONE : BOUND_ALL;
    } else if (v.type == ENGINE_FLOAT) {
        *bound = lower ? real_lower(v.u.r, inclusive, at)
                       : real_upper(v.u.r, inclusive, at);
    } else if (inclusive) {
        *at = v.u.i;
        *bound = BOUND_AT;
    } else if (v.u.i == (lower ? INT64_MAX : INT64_MIN)) {
        *bound = BOUND_NONE;
    } else {
        *at = lower ? v.u.i + 1 : v.u.i - 1;
        *bound = BOUND_AT;
    }
    return 0;
}

/* Evaluates the bound the scan starts at (the lower one, or the upper one
 * when reverse) and seeks it. */
static int range_start(const struct engine_access *access,
                       struct engine_access_run *run,
                       struct engine_table *table, struct engine_exec *exec,
                       struct engine_arena *arena, bool reverse, size_t *cursor)
{
    struct engine_expr *start = reverse ? access->high : access->low;
    bool inclusive = reverse ? access->high_inclusive : access->low_inclusive;
    enum bound bound = BOUND_ALL;
    struct engine_value v;
    int64_t at = 0;
    int rc;

    *cursor = 0;
    if (start == NULL) {
        return 0;
    }
    rc = engine__expr_eval_constant(start, exec, arena, &v);
    if (rc == 0) {
        rc = range_bound(v, !reverse, inclusive, arena, &at, &bound);
    }
    if (rc != 0 || bound != BOUND_AT) {
        run->done = bound == BOUND_NONE;
        return rc == COMMON_ENOMEM ? engine__error(exec, rc, "out of memory")
                                   : rc;
    }
    *cursor = engine__table_scan_seek(table, at, reverse);
    if (*cursor == SIZE_MAX) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    return 0;
}

/* Evaluates the bound that ends the scan, once a row was found. */
static int range_stop(const struct engine_access *access,
                      struct engine_access_run *run, struct engine_exec *exec,
                      struct engine_arena *arena, bool reverse)
{
    struct engine_expr *end = reverse ? access->low : access->high;
    bool inclusive = reverse ? access->low_inclusive : access->high_inclusive;
    enum bound bound = BOUND_ALL;
    struct engine_value v;
    int rc = 0;

    run->has_stop = true;
    if (end != NULL) {
        rc = engine__expr_eval_constant(end, exec, arena, &v);
    }
    if (rc == 0 && end != NULL) {
        rc = range_bound(v, reverse, inclusive, arena, &run->stop, &bound);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__error(exec, rc, "out of memory");
    }
    run->stop_empty = bound == BOUND_NONE;
    run->has_stop = bound == BOUND_AT;
    return rc;
}

/* The next rows of a range (or of every row, scan_all), cut at the end
 * bound. */
static int range_next(const struct engine_access *access,
                      struct engine_access_run *run, struct engine_table *table,
                      struct engine_exec *exec, struct engine_arena *arena,
                      bool reverse, size_t *cursor, uint32_t *out, uint32_t max,
                      uint32_t *count)
{
    bool first = !run->has_stop && !run->stop_empty;
    uint32_t n = engine__table_scan(table, cursor, out, max, reverse);
    uint32_t kept = 0;
    int rc;

    if (n == UINT32_MAX) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    if (first && n > 0 && !run->scan_all) {
        rc = range_stop(access, run, exec, arena, reverse);
        if (rc != 0) {
            return rc;
        }
    }
    while (
        kept < n && !run->stop_empty &&
        (!run->has_stop || (reverse ? table->rowids[out[kept]] >= run->stop
                                    : table->rowids[out[kept]] <= run->stop))) {
        kept++;
    }
    run->done = n == 0 || kept < n;
    *count = kept;
    return 0;
}

/* The next found slots still live (a statement run between two steps of
 * this one may have deleted some). */
static uint32_t found_next(struct engine_access_run *run,
                           const struct engine_table *table, bool reverse,
                           uint32_t *out, uint32_t max)
{
    uint32_t n = 0;

    while (n < max && run->found_next < run->found.count) {
        size_t at =
            reverse ? run->found.count - 1 - run->found_next : run->found_next;
        uint32_t slot = run->found.slots[at];

        run->found_next++;
        if (slot < table->slot_count && !table->deleted[slot]) {
            out[n++] = slot;
        }
    }
    return n;
}

static int start(const struct engine_access *access,
                 struct engine_access_run *run, struct engine_table *table,
                 struct engine_exec *exec, struct engine_arena *arena,
                 bool reverse, size_t *cursor)
{
    struct engine_value v;
    int rc;

    run->started = true;
    engine__arena_reset(arena);
    switch (access->kind) {
    case ENGINE_ACCESS_RANGE:
        satisfy(access, true);
        return range_start(access, run, table, exec, arena, reverse, cursor);
    case ENGINE_ACCESS_ROWID:
        rc =
            engine__expr_eval_constant(access->values[0].expr, exec, arena, &v);
        if (rc == 0 && v.type != ENGINE_NULL) {
            rc = find_rowid(run, table, v, arena);
        }
        break;
    default:
        rc = find_key(access, run, table, exec, arena);
        *cursor = 0; /* scan_all scans from the first row */
        break;
    }
    if (rc == 0) {
        satisfy(access, !run->scan_all);
    }
    return rc == COMMON_ENOMEM ? engine__error(exec, rc, "out of memory") : rc;
}

int engine__access_next(const struct engine_access *access,
                        struct engine_access_run *run,
                        struct engine_table *table, struct engine_exec *exec,
                        struct engine_arena *arena, bool reverse,
                        size_t *cursor, uint32_t *out, uint32_t max,
                        uint32_t *count)
{
    int rc;

    *count = 0;
    if (!run->started) {
        rc = start(access, run, table, exec, arena, reverse, cursor);
        if (rc != 0) {
            return rc;
        }
    }
    if (run->done) {
        return 0;
    }
    if (access->kind == ENGINE_ACCESS_RANGE || run->scan_all) {
        return range_next(access, run, table, exec, arena, reverse, cursor, out,
                          max, count);
    }
    *count = found_next(run, table, reverse, out, max);
    run->done = *count == 0;
    return 0;
}
