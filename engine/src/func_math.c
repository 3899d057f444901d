/* SPDX-License-Identifier: MIT
 *
 * func_math.c: SQLite's built-in functions over numbers and over whole
 * values: abs, round, sign, scalar min and max, coalesce/ifnull, iif,
 * nullif, printf/format, and the connection counters changes(),
 * total_changes(), last_insert_rowid().
 *
 * Rules from SQLite 3.40's func.c: abs() of INT64_MIN is "integer
 * overflow", of anything not an integer a REAL; round() leaves values past
 * 2^52 alone, rounds half away from zero through int64 when the precision
 * is 0 (or negative), and otherwise reads back printf("%.*f"); min() keeps
 * the last of equal values and max() the first (minmaxFunc's compare ^
 * mask), each by the arguments' collation.
 */
#include "func.h"

#include "func_int.h"

ENGINE__FUNC_SCALAR(abs)
{
    ASSERT(argc == 1);
    if (argv[0].type == ENGINE_INTEGER) {
        int64_t i = argv[0].u.i;
        if (i == INT64_MIN) {
            return engine__func_error(ctx, ENGINE_ESQL, "integer overflow");
        }
        *out = engine__value_int(i < 0 ? -i : i);
    } else if (argv[0].type == ENGINE_NULL) {
        *out = engine__value_null();
    } else {
        double r = engine__value_to_real(&argv[0]);
        *out = engine__value_real(r < 0 ? -r : r);
    }
    return 0;
}

/* 2^52: doubles at least this large have no fractional part. */
#define ROUND_INTEGRAL_MIN 4503599627370496.0

ENGINE__FUNC_SCALAR(round)
{
    static const char format[] = "%.*f";
    struct engine_value args[2], text;
    int32_t n = 0;
    double r;
    int rc;

    *out = engine__value_null();
    if (argc == 2) {
        if (argv[1].type == ENGINE_NULL) {
            return 0;
        }
        n = engine__func_value_int32(&argv[1]);
        n = n > 30 ? 30 : (n < 0 ? 0 : n);
    }
    if (argv[0].type == ENGINE_NULL) {
        return 0;
    }
    r = engine__value_to_real(&argv[0]);
    if (r < -ROUND_INTEGRAL_MIN || r > ROUND_INTEGRAL_MIN) {
        *out = engine__value_real(r);
        return 0;
    }
    if (n == 0) {
        *out = engine__value_real((double)(int64_t)(r + (r < 0 ? -0.5 : 0.5)));
        return 0;
    }
    args[0] = engine__value_int(n);
    args[1] = engine__value_real(r);
    rc = engine__func_format(ctx, (const uint8_t *)format, sizeof(format) - 1,
                             2, args, &text);
    if (rc != 0) {
        return rc;
    }
    engine__text_to_number(text.u.s.bytes, text.u.s.size, NULL, &r);
    *out = engine__value_real(r);
    return 0;
}

ENGINE__FUNC_SCALAR(sign)
{
    struct engine_value number;
    int type;
    double x;

    ASSERT(argc == 1);
    (void)ctx;
    *out = engine__value_null();
    type = engine__func_numeric(&argv[0], &number);
    if (type != ENGINE_INTEGER && type != ENGINE_FLOAT) {
        return 0;
    }
    x = engine__value_to_real(&number);
    *out = engine__value_int(x < 0.0 ? -1 : (x > 0.0 ? 1 : 0));
    return 0;
}

/* Scalar min (is_max false) and max: NULL if any argument is NULL. */
static void min_max(struct engine_func_context *ctx, int argc,
                    const struct engine_value *argv, bool is_max,
                    struct engine_value *out)
{
    int best = 0, i;

    *out = engine__value_null();
    if (argv[0].type == ENGINE_NULL) {
        return;
    }
    for (i = 1; i < argc; i++) {
        int cmp;
        if (argv[i].type == ENGINE_NULL) {
            return;
        }
        cmp = engine__value_compare(&argv[best], &argv[i], ctx->collation);
        if (is_max ? cmp < 0 : cmp >= 0) {
            best = i;
        }
    }
    *out = argv[best];
}

ENGINE__FUNC_SCALAR(min)
{
    ASSERT(argc >= 2);
    min_max(ctx, argc, argv, false, out);
    return 0;
}

ENGINE__FUNC_SCALAR(max)
{
    ASSERT(argc >= 2);
    min_max(ctx, argc, argv, true, out);
    return 0;
}

ENGINE__FUNC_SCALAR(coalesce)
{
    int i;

    (void)ctx;
    ASSERT(argc >= 2);
    *out = engine__value_null();
    for (i = 0; i < argc; i++) {
        if (argv[i].type != ENGINE_NULL) {
            *out = argv[i];
            break;
        }
    }
    return 0;
}

ENGINE__FUNC_SCALAR(iif)
{
    (void)ctx;
    ASSERT(argc == 3);
    *out = engine__value_truth(&argv[0]) == 1 ? argv[1] : argv[2];
    return 0;
}

ENGINE__FUNC_SCALAR(nullif)
{
    ASSERT(argc == 2);
    if (engine__value_compare(&argv[0], &argv[1], ctx->collation) != 0) {
        *out = argv[0];
    } else {
        *out = engine__value_null();
    }
    return 0;
}

ENGINE__FUNC_SCALAR(printf)
{
    const uint8_t *format;
    size_t size;
    bool is_null;
    int rc;

    *out = engine__value_null();
    if (argc < 1) {
        return 0;
    }
    rc = engine__func_text(ctx, &argv[0], &format, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    size = engine__func_cstr_size(format, size);
    return engine__func_format(ctx, format, size, argc - 1, argv + 1, out);
}

ENGINE__FUNC_SCALAR(changes)
{
    (void)argc;
    (void)argv;
    *out = engine__value_int(ctx->changes);
    return 0;
}

ENGINE__FUNC_SCALAR(total_changes)
{
    (void)argc;
    (void)argv;
    *out = engine__value_int(ctx->total_changes);
    return 0;
}

ENGINE__FUNC_SCALAR(last_insert_rowid)
{
    (void)argc;
    (void)argv;
    *out = engine__value_int(ctx->last_insert_rowid);
    return 0;
}
