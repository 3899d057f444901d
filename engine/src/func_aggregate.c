/* SPDX-License-Identifier: MIT
 *
 * func_aggregate.c: SQLite's aggregate functions (lang_aggfunc.html):
 * count, sum, total, avg, min, max, group_concat and string_agg.
 *
 * sum/total/avg follow SQLite 3.40's sumStep (func.c), not the
 * Kahan-Babuska-Neumaier summation of 3.43 and later: a plain double sum
 * runs beside an exact int64 sum. Each argument goes through
 * sqlite3_value_numeric_type() first, so numeric text counts as a number;
 * anything else that is not NULL (other text, blobs) adds its numeric
 * prefix and makes the result REAL. The int64 sum stops being kept once a
 * REAL arrives or it overflows; an overflow is reported by sum() as
 * "integer overflow", while total() and avg() use the double sum. A NaN
 * result (Inf + -Inf) is NULL, as sqlite3_result_double() makes it.
 *
 * min and max keep the first of equal values (minmaxStep replaces only on
 * a strict improvement) and own a copy of the kept value's bytes.
 * group_concat puts the separator of the row being added (default ",")
 * before every value but the first, skips NULL values, and adds nothing
 * for a NULL separator. string_agg(x, sep) is group_concat(x, sep).
 */
#include "func.h"

#include <math.h>
#include <string.h>

#include "func_int.h"

/* sqlite3_result_double() makes a NaN NULL (inf - inf in a sum). */
static struct engine_value real_or_null(double r)
{
    return isnan(r) ? engine__value_null() : engine__value_real(r);
}

/* ---- count ---- */

struct count_state {
    int64_t count; /* rows seen (count()) or non-NULL values (count(x)) */
};

static void count_init(void *state)
{
    memset(state, 0, sizeof(struct count_state));
}

static int count_step(struct engine_func_context *ctx, void *state, int argc,
                      const struct engine_value *argv)
{
    struct count_state *s = state;

    (void)ctx;
    if (argc == 0 || argv[0].type != ENGINE_NULL) {
        s->count++;
    }
    return 0;
}

static int count_final(struct engine_func_context *ctx, void *state,
                       struct engine_value *out)
{
    struct count_state *s = state;

    (void)ctx;
    *out = engine__value_int(s->count);
    return 0;
}

/* countInverse() (func.c): the row leaving a window frame. */
static int count_inverse(struct engine_func_context *ctx, void *state, int argc,
                         const struct engine_value *argv)
{
    struct count_state *s = state;

    (void)ctx;
    if (argc == 0 || argv[0].type != ENGINE_NULL) {
        s->count--;
    }
    return 0;
}

/* The row of position i: rows[i], or i itself for a dense batch. */
static inline uint32_t row_at(const uint32_t *rows, uint32_t i)
{
    return rows != NULL ? rows[i] : i;
}

/* Adds the non-NULL rows of a typed column (all rows when nulls is NULL:
 * count(*)). */
static void count_rows(struct count_state *s, const uint8_t *nulls,
                       const uint32_t *rows, uint32_t count)
{
    int64_t n = 0;

    if (nulls == NULL) {
        s->count += count;
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        n += nulls[row_at(rows, i)] == 0;
    }
    s->count += n;
}

static void count_int64s(void *state, const int64_t *values,
                         const uint8_t *nulls, const uint32_t *rows,
                         uint32_t count)
{
    count_rows(state, values == NULL ? NULL : nulls, rows, count);
}

static void count_doubles(void *state, const double *values,
                          const uint8_t *nulls, const uint32_t *rows,
                          uint32_t count)
{
    count_rows(state, values == NULL ? NULL : nulls, rows, count);
}

/* ---- sum, total, avg ---- */

/* The double sum is always kept; the int64 sum only while every input was
 * an INTEGER and no addition overflowed (is_approx false). */
struct sum_state {
    double real_sum;  /* every input, as doubles, in order */
    int64_t int_sum;  /* exact, while !is_approx */
    int64_t count;    /* non-NULL inputs */
    bool is_overflow; /* the int64 sum overflowed */
    bool is_approx;   /* a non-INTEGER input arrived, or overflow */
};

static void sum_init(void *state)
{
    memset(state, 0, sizeof(struct sum_state));
}

static int sum_step(struct engine_func_context *ctx, void *state, int argc,
                    const struct engine_value *argv)
{
    struct sum_state *s = state;
    struct engine_value number;
    int type;

    (void)ctx;
    ASSERT(argc == 1);
    type = engine__func_numeric(&argv[0], &number);
    if (type == ENGINE_NULL) {
        return 0;
    }
    s->count++;
    if (type == ENGINE_INTEGER) {
        int64_t v = number.u.i;
        s->real_sum += (double)v;
        if (!s->is_approx && !s->is_overflow &&
            __builtin_add_overflow(s->int_sum, v, &s->int_sum)) {
            s->is_approx = true;
            s->is_overflow = true;
        }
    } else {
        s->real_sum += engine__value_to_real(&number);
        s->is_approx = true;
    }
    return 0;
}

/* sumInverse() (func.c): the row leaving a window frame is subtracted;
 * is_approx and is_overflow stay set once set, as in SQLite, so a REAL
 * that has left the frame still makes the sum REAL. */
static int sum_inverse(struct engine_func_context *ctx, void *state, int argc,
                       const struct engine_value *argv)
{
    struct sum_state *s = state;
    struct engine_value number;
    int type;

    (void)ctx;
    ASSERT(argc == 1);
    type = engine__func_numeric(&argv[0], &number);
    if (type == ENGINE_NULL) {
        return 0;
    }
    s->count--;
    if (type == ENGINE_INTEGER && !s->is_approx) {
        s->real_sum -= (double)number.u.i;
        s->int_sum -= number.u.i;
    } else {
        s->real_sum -= engine__value_to_real(&number);
    }
    return 0;
}

/* sum_step over INTEGERs: the double sum in order (bit-identical to
 * stepping row by row), the exact sum until its first overflow. */
static void sum_int64s(void *state, const int64_t *values, const uint8_t *nulls,
                       const uint32_t *rows, uint32_t count)
{
    struct sum_state *s = state;
    bool overflow = s->is_overflow || s->is_approx;
    double real_sum = s->real_sum;
    int64_t int_sum = s->int_sum;
    int64_t n = 0;

    for (uint32_t i = 0; i < count; i++) {
        uint32_t row = row_at(rows, i);
        int64_t v = values[row];

        if (nulls[row]) {
            continue;
        }
        n++;
        real_sum += (double)v;
        if (!overflow) {
            overflow = __builtin_add_overflow(int_sum, v, &int_sum);
        }
    }
    s->is_overflow = s->is_overflow || (overflow && !s->is_approx);
    s->is_approx = s->is_approx || overflow;
    s->real_sum = real_sum;
    s->int_sum = int_sum;
    s->count += n;
}

static void sum_doubles(void *state, const double *values, const uint8_t *nulls,
                        const uint32_t *rows, uint32_t count)
{
    struct sum_state *s = state;
    double real_sum = s->real_sum;
    int64_t n = 0;

    for (uint32_t i = 0; i < count; i++) {
        uint32_t row = row_at(rows, i);

        if (!nulls[row]) {
            real_sum += values[row];
            n++;
        }
    }
    s->real_sum = real_sum;
    s->count += n;
    s->is_approx = s->is_approx || n > 0;
}

static int sum_final(struct engine_func_context *ctx, void *state,
                     struct engine_value *out)
{
    struct sum_state *s = state;

    *out = engine__value_null();
    if (s->count == 0) {
        return 0;
    }
    if (s->is_overflow) {
        return engine__func_error(ctx, ENGINE_ESQL, "integer overflow");
    }
    *out = s->is_approx ? real_or_null(s->real_sum)
                        : engine__value_int(s->int_sum);
    return 0;
}

static int total_final(struct engine_func_context *ctx, void *state,
                       struct engine_value *out)
{
    struct sum_state *s = state;

    (void)ctx;
    *out = real_or_null(s->real_sum);
    return 0;
}

static int avg_final(struct engine_func_context *ctx, void *state,
                     struct engine_value *out)
{
    struct sum_state *s = state;

    (void)ctx;
    *out = s->count == 0 ? engine__value_null()
                         : real_or_null(s->real_sum / (double)s->count);
    return 0;
}

/* ---- min, max ---- */

struct min_max_state {
    struct engine_value best; /* NULL until the first non-NULL value */
    uint8_t *owned;           /* best's bytes (TEXT, BLOB); owned, or NULL */
};

static void min_max_init(void *state)
{
    struct min_max_state *s = state;

    memset(s, 0, sizeof(*s));
    s->best = engine__value_null();
}

/* Makes best a copy of v that owns its bytes. */
static int min_max_keep(struct engine_func_context *ctx,
                        struct min_max_state *s, const struct engine_value *v)
{
    uint8_t *copy = NULL;

    if ((v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) && v->u.s.size > 0) {
        copy = common_malloc(v->u.s.size);
        if (copy == NULL) {
            return engine__func_error_nomem(ctx);
        }
        memcpy(copy, v->u.s.bytes, v->u.s.size);
    }
    common_free(s->owned);
    s->owned = copy;
    s->best = *v;
    if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
        s->best.u.s.bytes = copy;
    }
    return 0;
}

static int min_max_step(struct engine_func_context *ctx,
                        struct min_max_state *s, const struct engine_value *v,
                        bool is_max)
{
    int cmp;

    /* minmaxStep(): a NULL, or a value that does not beat the best, skips
     * the accumulator load once a best exists. */
    if (v->type == ENGINE_NULL) {
        ctx->skip_accumulator_load = s->best.type != ENGINE_NULL;
        return 0;
    }
    if (s->best.type == ENGINE_NULL) {
        return min_max_keep(ctx, s, v);
    }
    cmp = engine__value_compare(&s->best, v, ctx->collation);
    if (is_max ? cmp < 0 : cmp > 0) {
        return min_max_keep(ctx, s, v);
    }
    ctx->skip_accumulator_load = true;
    return 0;
}

static int min_step(struct engine_func_context *ctx, void *state, int argc,
                    const struct engine_value *argv)
{
    ASSERT(argc == 1);
    return min_max_step(ctx, state, &argv[0], false);
}

static int max_step(struct engine_func_context *ctx, void *state, int argc,
                    const struct engine_value *argv)
{
    ASSERT(argc == 1);
    return min_max_step(ctx, state, &argv[0], true);
}

/* min/max over a typed column: the batch's best by strict comparison (the
 * first of equal values wins, as in min_max_step), then merged into the
 * state with the same rule. Numbers need no collation or bytes. */
static void min_max_merge(struct min_max_state *s, struct engine_value v,
                          bool is_max)
{
    int cmp;

    if (v.type == ENGINE_NULL) {
        return;
    }
    if (s->best.type == ENGINE_NULL) {
        common_free(s->owned);
        s->owned = NULL;
        s->best = v;
        return;
    }
    cmp = engine__value_compare(&s->best, &v, ENGINE_COLLATION_BINARY);
    if (is_max ? cmp < 0 : cmp > 0) {
        common_free(s->owned);
        s->owned = NULL;
        s->best = v;
    }
}

static struct engine_value best_int64(const int64_t *values,
                                      const uint8_t *nulls,
                                      const uint32_t *rows, uint32_t count,
                                      bool is_max)
{
    bool found = false;
    int64_t best = 0;

    for (uint32_t i = 0; i < count; i++) {
        uint32_t row = row_at(rows, i);
        int64_t v = values[row];

        if (!nulls[row] && (!found || (is_max ? v > best : v < best))) {
            best = v;
            found = true;
        }
    }
    return found ? engine__value_int(best) : engine__value_null();
}

static struct engine_value best_double(const double *values,
                                       const uint8_t *nulls,
                                       const uint32_t *rows, uint32_t count,
                                       bool is_max)
{
    bool found = false;
    double best = 0.0;

    for (uint32_t i = 0; i < count; i++) {
        uint32_t row = row_at(rows, i);
        double v = values[row];

        if (!nulls[row] && (!found || (is_max ? v > best : v < best))) {
            best = v;
            found = true;
        }
    }
    return found ? engine__value_real(best) : engine__value_null();
}

static void min_int64s(void *state, const int64_t *values, const uint8_t *nulls,
                       const uint32_t *rows, uint32_t count)
{
    min_max_merge(state, best_int64(values, nulls, rows, count, false), false);
}

static void max_int64s(void *state, const int64_t *values, const uint8_t *nulls,
                       const uint32_t *rows, uint32_t count)
{
    min_max_merge(state, best_int64(values, nulls, rows, count, true), true);
}

static void min_doubles(void *state, const double *values, const uint8_t *nulls,
                        const uint32_t *rows, uint32_t count)
{
    min_max_merge(state, best_double(values, nulls, rows, count, false), false);
}

static void max_doubles(void *state, const double *values, const uint8_t *nulls,
                        const uint32_t *rows, uint32_t count)
{
    min_max_merge(state, best_double(values, nulls, rows, count, true), true);
}

static int min_max_final(struct engine_func_context *ctx, void *state,
                         struct engine_value *out)
{
    struct min_max_state *s = state;
    void *copy;

    *out = s->best;
    if (s->best.type == ENGINE_TEXT || s->best.type == ENGINE_BLOB) {
        copy = engine__arena_memdup(ctx->arena, s->best.u.s.bytes,
                                    s->best.u.s.size);
        if (copy == NULL) {
            return engine__func_error_nomem(ctx);
        }
        out->u.s.bytes = copy;
    }
    return 0;
}

static void min_max_destroy(void *state)
{
    struct min_max_state *s = state;

    common_free(s->owned);
    s->owned = NULL;
}

/* ---- group_concat, string_agg ---- */

struct concat_state {
    uint8_t *bytes;  /* the text so far; owned */
    size_t size;     /* bytes used */
    size_t capacity; /* bytes allocated */
    bool has_value;  /* a first value was added (it may be empty) */
};

static void concat_init(void *state)
{
    memset(state, 0, sizeof(struct concat_state));
}

static int concat_append(struct engine_func_context *ctx,
                         struct concat_state *s, const uint8_t *bytes,
                         size_t size)
{
    if (size > ENGINE_MAX_LENGTH - s->size) {
        return engine__func_error_toobig(ctx);
    }
    if (s->size + size > s->capacity) {
        size_t capacity = s->capacity < 64 ? 64 : s->capacity;
        uint8_t *grown;
        while (capacity < s->size + size) {
            capacity *= 2;
        }
        grown = common_realloc(s->bytes, capacity);
        if (grown == NULL) {
            return engine__func_error_nomem(ctx);
        }
        s->bytes = grown;
        s->capacity = capacity;
    }
    if (size > 0) {
        memcpy(s->bytes + s->size, bytes, size);
        s->size += size;
    }
    return 0;
}

static int concat_step(struct engine_func_context *ctx, void *state, int argc,
                       const struct engine_value *argv)
{
    struct concat_state *s = state;
    const uint8_t *bytes = (const uint8_t *)",";
    size_t size = 1;
    bool is_null = false;
    int rc;

    if (argv[0].type == ENGINE_NULL) {
        return 0;
    }
    if (s->has_value) {
        if (argc == 2) {
            rc = engine__func_text(ctx, &argv[1], &bytes, &size, &is_null);
            if (rc != 0) {
                return rc;
            }
        }
        if (!is_null && (rc = concat_append(ctx, s, bytes, size)) != 0) {
            return rc;
        }
    }
    s->has_value = true;
    rc = engine__func_text(ctx, &argv[0], &bytes, &size, &is_null);
    if (rc != 0) {
        return rc;
    }
    return concat_append(ctx, s, bytes, size);
}

static int concat_final(struct engine_func_context *ctx, void *state,
                        struct engine_value *out)
{
    struct concat_state *s = state;
    void *copy;

    *out = engine__value_null();
    if (!s->has_value) {
        return 0;
    }
    copy = engine__arena_memdup(ctx->arena, s->bytes, s->size);
    if (copy == NULL) {
        return engine__func_error_nomem(ctx);
    }
    *out = engine__value_text(copy, s->size);
    return 0;
}

static void concat_destroy(void *state)
{
    struct concat_state *s = state;

    common_free(s->bytes);
    s->bytes = NULL;
}

const struct engine_aggregate_def engine__func_aggregates[] = {
    {"count", 0, 1, sizeof(struct count_state), count_init, count_step,
     count_final, NULL, count_int64s, count_doubles, count_inverse, true},
    {"sum", 1, 1, sizeof(struct sum_state), sum_init, sum_step, sum_final, NULL,
     sum_int64s, sum_doubles, sum_inverse, true},
    {"total", 1, 1, sizeof(struct sum_state), sum_init, sum_step, total_final,
     NULL, sum_int64s, sum_doubles, sum_inverse, true},
    {"avg", 1, 1, sizeof(struct sum_state), sum_init, sum_step, avg_final, NULL,
     sum_int64s, sum_doubles, sum_inverse, true},
    {"min", 1, 1, sizeof(struct min_max_state), min_max_init, min_step,
     min_max_final, min_max_destroy, min_int64s, min_doubles, NULL, true},
    {"max", 1, 1, sizeof(struct min_max_state), min_max_init, max_step,
     min_max_final, min_max_destroy, max_int64s, max_doubles, NULL, true},
    {"group_concat", 1, 2, sizeof(struct concat_state), concat_init,
     concat_step, concat_final, concat_destroy, NULL, NULL, NULL, true},
    {"string_agg", 2, 2, sizeof(struct concat_state), concat_init, concat_step,
     concat_final, concat_destroy, NULL, NULL, NULL, true},
};

const size_t engine__func_aggregate_count =
    sizeof(engine__func_aggregates) / sizeof(engine__func_aggregates[0]);
