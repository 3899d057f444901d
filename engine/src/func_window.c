/* SPDX-License-Identifier: MIT
 *
 * func_window.c: the values of window functions over one partition
 * (window.h), as SQLite 3.40's window.c computes them.
 *
 * Ranking functions (row_number, rank, dense_rank, percent_rank,
 * cume_dist, ntile) read the peer groups; lag and lead the row at an
 * offset, found as SQLite finds it (rowid arithmetic: OP_Add/OP_Subtract
 * then OP_SeekRowid, so a REAL offset that is not a whole number finds no
 * row). first_value, last_value, nth_value and every aggregate read the
 * frame of each row (sqlite3WindowCodeStep's cursors):
 *
 *   - with EXCLUDE, each row's frame is aggregated afresh, skipping the
 *     excluded rows in partition order (SQLite's windowFullScan);
 *   - from UNBOUNDED PRECEDING, one running state takes each row once
 *     and final() gives the value so far (xValue);
 *   - for a sliding frame, rows leaving the frame are removed with the
 *     aggregate's inverse before the new ones are added, as SQLite's
 *     AGGINVERSE then AGGSTEP do, so sums round exactly as SQLite's;
 *   - an aggregate without an inverse (min, max, group_concat, JSON) is
 *     computed afresh for each distinct frame.
 */
#include <string.h>

#include "expr_int.h"
#include "window.h"

static int call_error(struct engine_exec *exec, int rc, const char *errmsg)
{
    return engine__error(exec, rc, "%s",
                         errmsg[0] != '\0' ? errmsg : engine_strerror(rc));
}

/* ---- frame offsets (windowCheckValue) ---- */

/* v as a number, text read whole as sqlite3AtoF does: false if it is not
 * one. */
static bool as_number(const struct engine_value *v, struct engine_value *out)
{
    int64_t i;
    double r;

    if (v->type == ENGINE_INTEGER || v->type == ENGINE_FLOAT) {
        *out = *v;
        return true;
    }
    if (v->type != ENGINE_TEXT) {
        return false;
    }
    switch (engine__text_to_number(v->u.s.bytes, v->u.s.size, &i, &r)) {
    case ENGINE_NUMERIC_INTEGER:
        *out = engine__value_int(i);
        return true;
    case ENGINE_NUMERIC_REAL:
        *out = engine__value_real(r);
        return true;
    default:
        return false;
    }
}

static int check_offset(struct engine_exec *exec, struct engine_arena *arena,
                        const struct engine_window_call *call,
                        const struct engine_window_bound *bound, bool start,
                        struct engine_value *out)
{
    bool range = call->frame.type == AST_FRAME_RANGE;
    struct engine_value v = engine__value_null();
    struct engine_value number;
    int64_t i;
    bool ok;

    *out = engine__value_null();
    if (bound->kind != AST_BOUND_PRECEDING &&
        bound->kind != AST_BOUND_FOLLOWING) {
        return 0;
    }
    if (!bound->null_offset) {
        int rc = engine__expr_eval_constant(bound->offset, exec, arena, &v);

        if (rc != 0) {
            return rc;
        }
    }
    ok = as_number(&v, &number);
    if (ok && number.type == ENGINE_FLOAT && !range) {
        ok = engine__real_to_exact_int(number.u.r, &i);
        number = engine__value_int(i);
    }
    if (ok) {
        ok = number.type == ENGINE_INTEGER ? number.u.i >= 0 : number.u.r >= 0;
    }
    if (!ok) {
        return engine__error(
            exec, ENGINE_ESQL, "frame %s offset must be a non-negative %s",
            start ? "starting" : "ending", range ? "number" : "integer");
    }
    *out = number;
    return 0;
}

int engine__window_offsets(struct engine_exec *exec, struct engine_arena *arena,
                           const struct engine_window_call *call,
                           struct engine_value *start, struct engine_value *end)
{
    int rc;

    if (call->fn != ENGINE_WINDOW_AGGREGATE &&
        call->fn != ENGINE_WINDOW_FIRST_VALUE &&
        call->fn != ENGINE_WINDOW_LAST_VALUE &&
        call->fn != ENGINE_WINDOW_NTH_VALUE) {
        *start = engine__value_null();
        *end = engine__value_null();
        return 0;
    }
    rc = check_offset(exec, arena, call, &call->frame.start, true, start);
    return rc == 0
               ? check_offset(exec, arena, call, &call->frame.end, false, end)
               : rc;
}

/* ---- frames ---- */

/* The offset as a row or group count: capped, as no frame reaches past
 * the partition. */
static int64_t count_offset(const struct engine_value *v, size_t n)
{
    return v->u.i > (int64_t)n ? (int64_t)n + 1 : v->u.i;
}

static int64_t group_last(const struct engine_window_partition *part, int64_t g)
{
    return (size_t)g + 1 < part->group_count
               ? (int64_t)part->group_first[g + 1] - 1
               : (int64_t)part->count - 1;
}

/* The first row whose ORDER BY value is at or after b (sort order), or
 * with after, the first strictly after it. */
static int64_t range_search(const struct engine_window_partition *part,
                            const struct engine_value *b, bool after)
{
    struct engine_sort_key key = part->order_keys[0];
    size_t lo = 0;
    size_t hi = part->count;

    key.column = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct engine_value *v =
            &part->rows[mid * part->width + part->order_offset];
        int cmp = engine__sort_compare(&key, 1, v, b);

        if (cmp < 0 || (after && cmp == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (int64_t)lo;
}

/* RANGE offset bound of row i: a NULL or non-numeric ORDER BY value
 * bounds the frame at its own peers or itself (windowCodeRangeTest). */
static int64_t range_bound(const struct engine_window_partition *part, size_t i,
                           const struct engine_window_bound *bound,
                           const struct engine_value *offset, bool start)
{
    const struct engine_value *v =
        &part->rows[i * part->width + part->order_offset];
    bool forward = bound->kind == AST_BOUND_FOLLOWING;
    struct engine_value b = *v;

    if (v->type == ENGINE_NULL) {
        return start ? (int64_t)part->group_start[i]
                     : (int64_t)part->group_end[i];
    }
    if (v->type == ENGINE_INTEGER || v->type == ENGINE_FLOAT) {
        bool add = forward != part->order_keys[0].descending;

        engine__value_arith(add ? ENGINE_ARITH_ADD : ENGINE_ARITH_SUBTRACT, v,
                            offset, &b);
    }
    return start ? range_search(part, &b, false)
                 : range_search(part, &b, true) - 1;
}

static int64_t bound_row(const struct engine_window_call *call,
                         const struct engine_window_partition *part, size_t i,
                         const struct engine_window_bound *bound,
                         const struct engine_value *offset, bool start)
{
    int64_t n = (int64_t)part->count;
    int64_t g = (int64_t)part->group_index[i];
    int64_t off = 0;

    switch (bound->kind) {
    case AST_BOUND_UNBOUNDED_PRECEDING:
        return 0;
    case AST_BOUND_UNBOUNDED_FOLLOWING:
        return n - 1;
    case AST_BOUND_CURRENT_ROW:
        if (call->frame.type == AST_FRAME_ROWS) {
            return (int64_t)i;
        }
        return start ? (int64_t)part->group_start[i]
                     : (int64_t)part->group_end[i];
    default:
        break;
    }
    if (call->frame.type == AST_FRAME_RANGE) {
        return range_bound(part, i, bound, offset, start);
    }
    off = count_offset(offset, part->count);
    if (bound->kind == AST_BOUND_PRECEDING) {
        off = -off;
    }
    if (call->frame.type == AST_FRAME_ROWS) {
        return (int64_t)i + off;
    }
    g += off; /* GROUPS */
    if (g < 0) {
        return start ? 0 : -1;
    }
    if (g >= (int64_t)part->group_count) {
        return start ? n : n - 1;
    }
    return start ? (int64_t)part->group_first[g] : group_last(part, g);
}

/* Row i's frame [*s, *e], clamped to the partition; empty when *s > *e. */
static void frame_of(const struct engine_window_call *call,
                     const struct engine_window_partition *part, size_t i,
                     const struct engine_value *start_offset,
                     const struct engine_value *end_offset, int64_t *s,
                     int64_t *e)
{
    *s = bound_row(call, part, i, &call->frame.start, start_offset, true);
    *e = bound_row(call, part, i, &call->frame.end, end_offset, false);
    if (*s < 0) {
        *s = 0;
    }
    if (*e > (int64_t)part->count - 1) {
        *e = (int64_t)part->count - 1;
    }
}

static bool excluded(const struct engine_window_call *call,
                     const struct engine_window_partition *part, size_t i,
                     size_t r)
{
    switch (call->frame.exclude) {
    case AST_EXCLUDE_CURRENT_ROW:
        return r == i;
    case AST_EXCLUDE_GROUP:
        return part->group_index[r] == part->group_index[i];
    case AST_EXCLUDE_TIES:
        return r != i && part->group_index[r] == part->group_index[i];
    default:
        return false;
    }
}

static const struct engine_value *
arg_of(const struct engine_window_call *call,
       const struct engine_window_partition *part, size_t row, size_t a)
{
    return &part->rows[row * part->width + call->first_arg + a];
}

/* ---- ranking and navigation ---- */

/* ntileValueFunc(): the first row's argument splits the partition into
 * that many buckets, the larger ones first. */
static int ntile(struct engine_exec *exec,
                 const struct engine_window_call *call,
                 const struct engine_window_partition *part,
                 struct engine_value *out)
{
    int64_t buckets = engine__value_to_int(arg_of(call, part, 0, 0));
    int64_t n = (int64_t)part->count;
    int64_t size;
    int64_t large;

    if (buckets <= 0) {
        return engine__error(exec, ENGINE_ESQL,
                             "argument of ntile must be a positive integer");
    }
    size = n / buckets;
    large = n - buckets * size;
    for (int64_t i = 0; i < n; i++) {
        int64_t bucket;

        if (size == 0) {
            bucket = i + 1;
        } else if (i < large * (size + 1)) {
            bucket = 1 + i / (size + 1);
        } else {
            bucket = 1 + large + (i - large * (size + 1)) / size;
        }
        out[i] = engine__value_int(bucket);
    }
    return 0;
}

/* lag() and lead(): row (i + 1) - offset (lag) or + offset (lead), as a
 * 1-based rowid; its x, or the default (NULL if none). */
static void lag_lead(const struct engine_window_call *call,
                     const struct engine_window_partition *part,
                     struct engine_value *out)
{
    bool lead = call->fn == ENGINE_WINDOW_LEAD;

    for (size_t i = 0; i < part->count; i++) {
        struct engine_value rowid = engine__value_int((int64_t)i + 1);
        struct engine_value offset = engine__value_int(1);
        struct engine_value target;
        int64_t t = 0;
        bool found;

        if (call->arg_count >= 2) {
            offset = *arg_of(call, part, i, 1);
        }
        engine__value_arith(lead ? ENGINE_ARITH_ADD : ENGINE_ARITH_SUBTRACT,
                            &rowid, &offset, &target);
        if (target.type == ENGINE_INTEGER) {
            t = target.u.i;
            found = true;
        } else {
            found = target.type == ENGINE_FLOAT &&
                    engine__real_to_exact_int(target.u.r, &t);
        }
        found = found && t >= 1 && t <= (int64_t)part->count;
        if (found) {
            out[i] = *arg_of(call, part, (size_t)t - 1, 0);
        } else if (call->arg_count == 3) {
            out[i] = *arg_of(call, part, i, 2);
        } else {
            out[i] = engine__value_null();
        }
    }
}

/* nth_value()'s N (nth_valueStepFunc): a positive whole number. */
static int nth_of(struct engine_exec *exec, const struct engine_value *v,
                  int64_t *out)
{
    struct engine_value number;
    bool ok = as_number(v, &number);

    if (ok && number.type == ENGINE_FLOAT) {
        ok = engine__real_to_exact_int(number.u.r, out);
    } else if (ok) {
        *out = number.u.i;
    }
    if (!ok || *out <= 0) {
        return engine__error(
            exec, ENGINE_ESQL,
            "second argument to nth_value must be a positive integer");
    }
    return 0;
}

/* first_value, last_value, nth_value: the wanted row of each frame, the
 * excluded rows skipped. */
static int frame_value(struct engine_exec *exec,
                       const struct engine_window_call *call,
                       const struct engine_window_partition *part,
                       const struct engine_value *start_offset,
                       const struct engine_value *end_offset,
                       struct engine_value *out)
{
    for (size_t i = 0; i < part->count; i++) {
        int64_t s;
        int64_t e;
        int64_t nth = 1;
        int64_t seen = 0;
        int rc;

        out[i] = engine__value_null();
        if (call->fn == ENGINE_WINDOW_NTH_VALUE &&
            (rc = nth_of(exec, arg_of(call, part, i, 1), &nth)) != 0) {
            return rc;
        }
        frame_of(call, part, i, start_offset, end_offset, &s, &e);
        if (call->fn == ENGINE_WINDOW_LAST_VALUE) {
            for (int64_t r = e; r >= s; r--) {
                if (!excluded(call, part, i, (size_t)r)) {
                    out[i] = *arg_of(call, part, (size_t)r, 0);
                    break;
                }
            }
            continue;
        }
        for (int64_t r = s; r <= e; r++) {
            if (!excluded(call, part, i, (size_t)r) && ++seen == nth) {
                out[i] = *arg_of(call, part, (size_t)r, 0);
                break;
            }
        }
    }
    return 0;
}

/* ---- aggregates ---- */

struct agg_run {
    struct engine_exec *exec;
    const struct engine_window_call *call;
    const struct engine_window_partition *part;
    struct engine_func_context ctx;
    struct engine_eval eval;
    char errmsg[ENGINE__ERRMSG_SIZE];
    void *state;
    bool live; /* state initialized and not destroyed */
};

static void agg_reset(struct agg_run *run)
{
    if (run->live && run->call->def->destroy != NULL) {
        run->call->def->destroy(run->state);
    }
    memset(run->state, 0, run->call->def->state_size);
    run->call->def->init(run->state);
    run->live = true;
}

/* Steps (or with inverse, un-steps) row r, unless its FILTER rejects
 * it. */
static int agg_apply(struct agg_run *run, size_t r, bool inverse)
{
    const struct engine_window_call *call = run->call;
    struct engine_value argv[ENGINE__FUNCTION_ARGS_MAX];
    int rc;

    if (call->filter != NULL) {
        const struct engine_value *truth =
            arg_of(call, run->part, r, call->arg_count);

        if (engine__value_truth(truth) != 1) {
            return 0;
        }
    }
    for (size_t a = 0; a < call->arg_count; a++) {
        argv[a] = *arg_of(call, run->part, r, a);
        argv[a].json_subtype &= call->args[a]->carries_subtype;
    }
    run->errmsg[0] = '\0';
    rc = (inverse ? call->def->inverse : call->def->step)(
        &run->ctx, run->state, (int)call->arg_count, argv);
    return rc != 0 ? call_error(run->exec, rc, run->errmsg) : 0;
}

static int agg_value(struct agg_run *run, struct engine_value *out)
{
    int rc;

    run->errmsg[0] = '\0';
    rc = run->call->def->final(&run->ctx, run->state, out);
    return rc != 0 ? call_error(run->exec, rc, run->errmsg) : 0;
}

/* The aggregate of row i's frame [s, e], computed afresh. With
 * newest_first, rows are stepped last to first: min() and max() over a
 * frame that does not start at UNBOUNDED PRECEDING are read from an
 * index of the frame's values in SQLite (windowAggStep's csrApp), where
 * of values equal under the collation the one added last is found. */
static int agg_fresh(struct agg_run *run, size_t i, int64_t s, int64_t e,
                     bool newest_first, struct engine_value *out)
{
    int rc = 0;

    agg_reset(run);
    for (int64_t k = s; rc == 0 && k <= e; k++) {
        int64_t r = newest_first ? e - (k - s) : k;

        if (!excluded(run->call, run->part, i, (size_t)r)) {
            rc = agg_apply(run, (size_t)r, false);
        }
    }
    return rc == 0 ? agg_value(run, out) : rc;
}

static int agg_rows(struct agg_run *run, const struct engine_value *start_off,
                    const struct engine_value *end_off,
                    struct engine_value *out)
{
    const struct engine_window_call *call = run->call;
    const struct engine_aggregate_def *def = call->def;
    bool running = call->frame.start.kind == AST_BOUND_UNBOUNDED_PRECEDING &&
                   def->final_keeps_state;
    bool sliding = def->inverse != NULL && def->final_keeps_state;
    bool minmax =
        strcmp(def->name, "min") == 0 || strcmp(def->name, "max") == 0;
    int64_t lo = 0; /* rows [lo, hi) are in the state */
    int64_t hi = 0;
    int64_t prev_s = -1;
    int64_t prev_e = -2;
    int rc = 0;

    agg_reset(run);
    for (size_t i = 0; rc == 0 && i < run->part->count; i++) {
        int64_t s;
        int64_t e;

        frame_of(call, run->part, i, start_off, end_off, &s, &e);
        if (e < s - 1) {
            e = s - 1; /* empty */
        }
        if (call->frame.exclude != AST_EXCLUDE_NO_OTHERS) {
            rc = agg_fresh(run, i, s, e, false, &out[i]);
            continue;
        }
        if (s == prev_s && e == prev_e) {
            out[i] = out[i - 1];
            continue;
        }
        prev_s = s;
        prev_e = e;
        if (!running && !sliding) {
            rc = agg_fresh(run, i, s, e, minmax, &out[i]);
            continue;
        }
        for (; rc == 0 && !running && lo < s && lo < hi; lo++) {
            rc = agg_apply(run, (size_t)lo, true);
        }
        if (lo < s) {
            lo = hi = s;
        }
        for (hi = hi < lo ? lo : hi; rc == 0 && hi <= e; hi++) {
            rc = agg_apply(run, (size_t)hi, false);
        }
        if (rc == 0) {
            rc = agg_value(run, &out[i]);
        }
    }
    return rc;
}

static int aggregate(struct engine_exec *exec, struct engine_arena *arena,
                     const struct engine_window_call *call,
                     const struct engine_window_partition *part,
                     const struct engine_value *start_off,
                     const struct engine_value *end_off,
                     struct engine_value *out)
{
    struct agg_run run = {.exec = exec, .call = call, .part = part};
    int rc;

    run.state = common_calloc(1, call->def->state_size + 16);
    if (run.state == NULL) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    run.eval.exec = exec;
    run.eval.arena = arena;
    engine__func_context_init(&run.ctx, &run.eval, call->collation, run.errmsg,
                              sizeof(run.errmsg));
    rc = agg_rows(&run, start_off, end_off, out);
    if (run.live && call->def->destroy != NULL) {
        call->def->destroy(run.state);
    }
    common_free(run.state);
    return rc;
}

int engine__window_compute(struct engine_exec *exec, struct engine_arena *arena,
                           const struct engine_window_call *call,
                           const struct engine_window_partition *part,
                           const struct engine_value *start_offset,
                           const struct engine_value *end_offset,
                           struct engine_value *out)
{
    double n = (double)part->count;

    for (size_t i = 0; i < part->count; i++) {
        switch (call->fn) {
        case ENGINE_WINDOW_ROW_NUMBER:
            out[i] = engine__value_int((int64_t)i + 1);
            break;
        case ENGINE_WINDOW_RANK:
            out[i] = engine__value_int((int64_t)part->group_start[i] + 1);
            break;
        case ENGINE_WINDOW_DENSE_RANK:
            out[i] = engine__value_int((int64_t)part->group_index[i] + 1);
            break;
        case ENGINE_WINDOW_PERCENT_RANK:
            out[i] = engine__value_real(
                part->count > 1 ? (double)part->group_start[i] / (n - 1) : 0.0);
            break;
        case ENGINE_WINDOW_CUME_DIST:
            out[i] = engine__value_real((double)(part->group_end[i] + 1) / n);
            break;
        default:
            break;
        }
    }
    switch (call->fn) {
    case ENGINE_WINDOW_NTILE:
        return ntile(exec, call, part, out);
    case ENGINE_WINDOW_LAG:
    case ENGINE_WINDOW_LEAD:
        lag_lead(call, part, out);
        return 0;
    case ENGINE_WINDOW_FIRST_VALUE:
    case ENGINE_WINDOW_LAST_VALUE:
    case ENGINE_WINDOW_NTH_VALUE:
        return frame_value(exec, call, part, start_offset, end_offset, out);
    case ENGINE_WINDOW_AGGREGATE:
        return aggregate(exec, arena, call, part, start_offset, end_offset,
                         out);
    default:
        return 0;
    }
}
