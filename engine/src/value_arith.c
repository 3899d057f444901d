/* SPDX-License-Identifier: MIT
 *
 * value_arith.c: SQLite 3.40's arithmetic, bitwise and text operators on
 * values, as the VDBE computes them (vdbe.c OP_Add..OP_Remainder,
 * OP_BitAnd..OP_ShiftRight, OP_BitNot, OP_Concat).
 *
 * + - * / %: NULL if either operand is NULL. TEXT and BLOB operands are
 * first typed by computeNumericType(): an integer literal (whole, or the
 * integer prefix of "12abc") is INTEGER, any other number REAL. Two
 * INTEGERs compute in int64 and move to REAL on overflow (and for
 * INT64_MIN / -1); x / 0 and x % 0 are NULL; % on a REAL operand takes
 * both operands' integer values and gives a REAL; a NaN result is NULL.
 * Unary minus is 0 - x (expr.c codes TK_UMINUS of a non-literal so).
 */
#include "value.h"

#include <math.h>
#include <string.h>

#include "text_number.h"

/* A numeric operand: the integer, or the real value used by "fp_math"
 * (sqlite3VdbeRealValue, which for text is sqlite3AtoF's value). */
struct operand {
    bool is_int; /* computeNumericType() said MEM_Int */
    int64_t i;   /* the value when is_int */
    double r;    /* the value as REAL (set in both cases) */
};

/* numericType / computeNumericType (vdbe.c). */
static void operand_of(const struct engine_value *v, struct operand *out)
{
    static const uint8_t empty[1] = {0};
    const uint8_t *text = v->u.s.bytes != NULL ? v->u.s.bytes : empty;
    int64_t i = 0;
    int rc_real, rc_int;

    if (v->type == ENGINE_INTEGER) {
        *out = (struct operand){true, v->u.i, (double)v->u.i};
        return;
    }
    if (v->type == ENGINE_FLOAT) {
        *out = (struct operand){false, 0, v->u.r};
        return;
    }
    rc_real = engine__text_number_atof(text, v->u.s.size, &out->r);
    rc_int = engine__text_number_atoi64(text, v->u.s.size, &i);
    if (rc_real <= ENGINE_ATOF_NONE) {
        out->is_int =
            rc_real == ENGINE_ATOF_NONE && rc_int <= ENGINE_ATOI_EXTRA;
    } else {
        out->is_int = (rc_real & 2) == 0 && rc_int == ENGINE_ATOI_OK;
    }
    out->i = i;
}

/* "int_math": false when the result needs "fp_math" instead; *out is
 * NULL for division by zero. */
static bool int_math(enum engine_arith_op op, int64_t a, int64_t b,
                     struct engine_value *out)
{
    int64_t r;

    switch (op) {
    case ENGINE_ARITH_ADD:
        if (__builtin_add_overflow(a, b, &r)) {
            return false;
        }
        break;
    case ENGINE_ARITH_SUBTRACT:
        if (__builtin_sub_overflow(a, b, &r)) {
            return false;
        }
        break;
    case ENGINE_ARITH_MULTIPLY:
        if (__builtin_mul_overflow(a, b, &r)) {
            return false;
        }
        break;
    case ENGINE_ARITH_DIVIDE:
        if (b == 0) {
            *out = engine__value_null();
            return true;
        }
        if (b == -1 && a == INT64_MIN) {
            return false;
        }
        r = a / b;
        break;
    default:
        /* "if( iA==-1 ) iA = 1": INT64_MIN % -1 would trap. */
        if (b == 0) {
            *out = engine__value_null();
            return true;
        }
        r = a % (b == -1 ? 1 : b);
        break;
    }
    *out = engine__value_int(r);
    return true;
}

/* "fp_math". */
static void real_math(enum engine_arith_op op, const struct engine_value *a,
                      const struct engine_value *b, double ra, double rb,
                      struct engine_value *out)
{
    double r;

    if (op == ENGINE_ARITH_ADD) {
        r = ra + rb;
    } else if (op == ENGINE_ARITH_SUBTRACT) {
        r = ra - rb;
    } else if (op == ENGINE_ARITH_MULTIPLY) {
        r = ra * rb;
    } else if (op == ENGINE_ARITH_DIVIDE) {
        if (rb == 0.0) {
            *out = engine__value_null();
            return;
        }
        r = ra / rb;
    } else {
        int64_t ia = engine__value_to_int(a);
        int64_t ib = engine__value_to_int(b);
        if (ib == 0) {
            *out = engine__value_null();
            return;
        }
        r = (double)(ia % (ib == -1 ? 1 : ib));
    }
    *out = isnan(r) ? engine__value_null() : engine__value_real(r);
}

/* OP_BitAnd, OP_BitOr, OP_ShiftLeft, OP_ShiftRight: integer values of
 * both operands; a negative shift goes the other way; shifting by 64 or
 * more gives 0, or -1 for a right shift of a negative number. */
static int64_t bit_math(enum engine_arith_op op, int64_t a, int64_t b)
{
    uint64_t u;

    if (op == ENGINE_ARITH_BIT_AND) {
        return a & b;
    }
    if (op == ENGINE_ARITH_BIT_OR) {
        return a | b;
    }
    if (b == 0) {
        return a;
    }
    if (b < 0) {
        op = op == ENGINE_ARITH_SHIFT_LEFT ? ENGINE_ARITH_SHIFT_RIGHT
                                           : ENGINE_ARITH_SHIFT_LEFT;
        b = b > -64 ? -b : 64;
    }
    if (b >= 64) {
        return (a >= 0 || op == ENGINE_ARITH_SHIFT_LEFT) ? 0 : -1;
    }
    memcpy(&u, &a, sizeof(u));
    if (op == ENGINE_ARITH_SHIFT_LEFT) {
        u <<= b;
    } else {
        u >>= b;
        if (a < 0) {
            u |= UINT64_MAX << (64 - b);
        }
    }
    memcpy(&a, &u, sizeof(a));
    return a;
}

void engine__value_arith(enum engine_arith_op op, const struct engine_value *a,
                         const struct engine_value *b, struct engine_value *out)
{
    struct operand x, y;

    ASSERT(a != NULL);
    ASSERT(b != NULL);
    ASSERT(out != NULL);
    if (a->type == ENGINE_NULL || b->type == ENGINE_NULL) {
        *out = engine__value_null();
        return;
    }
    if (op >= ENGINE_ARITH_BIT_AND) {
        *out = engine__value_int(
            bit_math(op, engine__value_to_int(a), engine__value_to_int(b)));
        return;
    }
    operand_of(a, &x);
    operand_of(b, &y);
    if (x.is_int && y.is_int && int_math(op, x.i, y.i, out)) {
        return;
    }
    real_math(op, a, b, x.r, y.r, out);
}

void engine__value_negate(const struct engine_value *v,
                          struct engine_value *out)
{
    const struct engine_value zero = engine__value_int(0);

    engine__value_arith(ENGINE_ARITH_SUBTRACT, &zero, v, out);
}

/* OP_BitNot: NULL stays NULL, anything else is ~ its integer value. */
void engine__value_bit_not(const struct engine_value *v,
                           struct engine_value *out)
{
    ASSERT(v != NULL);
    ASSERT(out != NULL);
    if (v->type == ENGINE_NULL) {
        *out = engine__value_null();
        return;
    }
    *out = engine__value_int(~engine__value_to_int(v));
}

/* OP_Concat: numbers are rendered (sqlite3VdbeMemStringify), TEXT and
 * BLOB bytes are joined as they are, and the result is TEXT. Longer than
 * SQLITE_LIMIT_LENGTH (ENGINE_MAX_LENGTH) is "string or blob too big". */
int engine__value_concat(const struct engine_value *a,
                         const struct engine_value *b,
                         struct engine_arena *arena, struct engine_value *out)
{
    struct engine_value x, y;
    uint8_t *bytes;
    int rc;

    ASSERT(a != NULL);
    ASSERT(b != NULL);
    ASSERT(out != NULL);
    if (a->type == ENGINE_NULL || b->type == ENGINE_NULL) {
        *out = engine__value_null();
        return 0;
    }
    rc = engine__value_to_text(a, arena, &x);
    if (rc == 0) {
        rc = engine__value_to_text(b, arena, &y);
    }
    if (rc != 0) {
        return rc;
    }
    if (x.u.s.size > ENGINE_MAX_LENGTH ||
        y.u.s.size > ENGINE_MAX_LENGTH - x.u.s.size) {
        return ENGINE_ETOOBIG;
    }
    bytes = engine__arena_alloc(arena, x.u.s.size + y.u.s.size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    if (x.u.s.size > 0) {
        memcpy(bytes, x.u.s.bytes, x.u.s.size);
    }
    if (y.u.s.size > 0) {
        memcpy(bytes + x.u.s.size, y.u.s.bytes, y.u.s.size);
    }
    *out = engine__value_text(bytes, x.u.s.size + y.u.s.size);
    return 0;
}
