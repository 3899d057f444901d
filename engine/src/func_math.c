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
 *
 * The math functions are those of SQLITE_ENABLE_MATH_FUNCTIONS (Debian's
 * libsqlite3 3.40.1 has them; lang_mathfunc.html, func.c's math1Func,
 * math2Func, logFunc, ceilingFunc): an argument that is not a number, nor
 * text that is wholly one, makes the result NULL, and so does a NaN
 * result (sqlite3_result_double() stores NaN as NULL). ceil, floor and
 * trunc return an integer argument as it is. log(B, X) is 3.40's: it
 * checks the type of B twice and reads X with sqlite3_value_double(), so
 * log(2, 'abc') is NULL only because 'abc' reads as 0.
 */
#include "func.h"

#include <math.h>

#include "func_int.h"

/* SQLite's M_PI (func.c), which <math.h> under strict C11 lacks. */
#define MATH_PI 3.141592653589793238462643383279502884
#define MATH_LN10 2.302585092994045684017991454684364208
#define MATH_LN2 0.693147180559945309417232121458176568

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

/* A REAL result, NULL for NaN. */
static struct engine_value real_or_null(double r)
{
    return isnan(r) ? engine__value_null() : engine__value_real(r);
}

/* The argument as a number (sqlite3_value_numeric_type()); false if it is
 * none. */
static bool number_get(const struct engine_value *v, double *out)
{
    struct engine_value number;
    int type = engine__func_numeric(v, &number);

    if (type != ENGINE_INTEGER && type != ENGINE_FLOAT) {
        return false;
    }
    *out = engine__value_to_real(&number);
    return true;
}

/* math1Func(): fn of one numeric argument. */
static int unary_apply(const struct engine_value *argv, double (*fn)(double),
                       struct engine_value *out)
{
    double x;

    *out = engine__value_null();
    if (number_get(&argv[0], &x)) {
        *out = real_or_null(fn(x));
    }
    return 0;
}

/* math2Func(): fn of two numeric arguments. */
static int binary_apply(const struct engine_value *argv,
                        double (*fn)(double, double), struct engine_value *out)
{
    double x, y;

    *out = engine__value_null();
    if (number_get(&argv[0], &x) && number_get(&argv[1], &y)) {
        *out = real_or_null(fn(x, y));
    }
    return 0;
}

/* ceilingFunc(): an integer stays as it is; a real goes through fn. */
static int rounding_apply(const struct engine_value *argv, double (*fn)(double),
                          struct engine_value *out)
{
    struct engine_value number;
    int type = engine__func_numeric(&argv[0], &number);

    *out = engine__value_null();
    if (type == ENGINE_INTEGER) {
        *out = number;
    } else if (type == ENGINE_FLOAT) {
        *out = real_or_null(fn(number.u.r));
    }
    return 0;
}

static double degrees_from_radians(double x)
{
    return x * (180.0 / MATH_PI);
}

static double radians_from_degrees(double x)
{
    return x * (MATH_PI / 180.0);
}

#define MATH_UNARY(name, fn)                                                   \
    ENGINE__FUNC_SCALAR(name)                                                  \
    {                                                                          \
        (void)ctx;                                                             \
        ASSERT(argc == 1);                                                     \
        return unary_apply(argv, fn, out);                                     \
    }

MATH_UNARY(acos, acos)
MATH_UNARY(acosh, acosh)
MATH_UNARY(asin, asin)
MATH_UNARY(asinh, asinh)
MATH_UNARY(atan, atan)
MATH_UNARY(atanh, atanh)
MATH_UNARY(cos, cos)
MATH_UNARY(cosh, cosh)
MATH_UNARY(degrees, degrees_from_radians)
MATH_UNARY(exp, exp)
MATH_UNARY(radians, radians_from_degrees)
MATH_UNARY(sin, sin)
MATH_UNARY(sinh, sinh)
MATH_UNARY(sqrt, sqrt)
MATH_UNARY(tan, tan)
MATH_UNARY(tanh, tanh)

ENGINE__FUNC_SCALAR(atan2)
{
    (void)ctx;
    ASSERT(argc == 2);
    return binary_apply(argv, atan2, out);
}

ENGINE__FUNC_SCALAR(mod)
{
    (void)ctx;
    ASSERT(argc == 2);
    return binary_apply(argv, fmod, out);
}

ENGINE__FUNC_SCALAR(pow)
{
    (void)ctx;
    ASSERT(argc == 2);
    return binary_apply(argv, pow, out);
}

ENGINE__FUNC_SCALAR(ceil)
{
    (void)ctx;
    ASSERT(argc == 1);
    return rounding_apply(argv, ceil, out);
}

ENGINE__FUNC_SCALAR(floor)
{
    (void)ctx;
    ASSERT(argc == 1);
    return rounding_apply(argv, floor, out);
}

ENGINE__FUNC_SCALAR(trunc)
{
    (void)ctx;
    ASSERT(argc == 1);
    return rounding_apply(argv, trunc, out);
}

ENGINE__FUNC_SCALAR(pi)
{
    (void)ctx;
    (void)argv;
    ASSERT(argc == 0);
    *out = engine__value_real(MATH_PI);
    return 0;
}

/* log(B, X) as 3.40's logFunc(): see the top of the file. */
static int log_base_apply(const struct engine_value *argv,
                          struct engine_value *out)
{
    double base, x;

    *out = engine__value_null();
    if (!number_get(&argv[0], &base) || base <= 0.0) {
        return 0;
    }
    base = log(base);
    if (base <= 0.0) {
        return 0;
    }
    x = engine__value_to_real(&argv[1]);
    if (x <= 0.0) {
        return 0;
    }
    *out = real_or_null(log(x) / base);
    return 0;
}

/* ln, log10 and log2: NULL for X <= 0 rather than -inf or NaN. logFunc
 * takes the natural logarithm and divides it by ln(10) or ln(2) (not
 * log10() or log2(), which round differently). */
static int log_apply(const struct engine_value *argv, double divisor,
                     struct engine_value *out)
{
    double x;

    *out = engine__value_null();
    if (number_get(&argv[0], &x) && x > 0.0) {
        double ans = log(x);
        if (divisor != 1.0) {
            ans /= divisor;
        }
        *out = real_or_null(ans);
    }
    return 0;
}

ENGINE__FUNC_SCALAR(ln)
{
    (void)ctx;
    ASSERT(argc == 1);
    return log_apply(argv, 1.0, out);
}

/* log(X) is the base-10 logarithm; log(B, X) the base-B one. */
ENGINE__FUNC_SCALAR(log)
{
    (void)ctx;
    ASSERT(argc == 1 || argc == 2);
    return argc == 2 ? log_base_apply(argv, out)
                     : log_apply(argv, MATH_LN10, out);
}

ENGINE__FUNC_SCALAR(log2)
{
    (void)ctx;
    ASSERT(argc == 1);
    return log_apply(argv, MATH_LN2, out);
}
