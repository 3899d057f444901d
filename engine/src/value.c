/* SPDX-License-Identifier: MIT
 *
 * value.c: SQLite 3.40's conversions between storage classes: the affinity
 * of a declared type, sqlite3_value_int64/double/text, column affinity,
 * CAST, the affinity applied before a comparison, and truth.
 *
 * Each function names the SQLite routine whose rules it repeats (vdbe.c,
 * vdbemem.c, expr.c, util.c); the tests in engine/test/test_value_*.c
 * compare every one of them with libsqlite3 on random and edge values.
 * Values never hold NaN: SQLite stores NaN as NULL, so every producer here
 * (and in value_arith.c) turns a NaN result into NULL.
 */
#include "value.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text_number.h"

/* ---- declared types and collations ---- */

static uint8_t ascii_lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

#define TYPE_TAG(a, b, c, d)                                                   \
    (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) |    \
     (uint32_t)(d))

/* sqlite3AffinityType (build.c): a rolling hash of the last four
 * lowercased bytes is matched against "char", "clob", "text", "blob",
 * "real", "floa", "doub" and, on its last three bytes, "int", which wins
 * at once. The rules of datatype3 §3.1 in order: INT -> INTEGER; CHAR,
 * CLOB, TEXT -> TEXT; BLOB -> BLOB (unless TEXT was seen); REAL, FLOA,
 * DOUB -> REAL (unless seen after TEXT or BLOB); else NUMERIC. The name
 * ends at a NUL byte, as SQLite's C string does. No type at all (NULL or
 * empty) is BLOB affinity (build.c sqlite3AddColumn). */
enum engine_affinity engine__affinity_of_declared_type(const char *decl,
                                                       size_t size)
{
    enum engine_affinity affinity = ENGINE_AFFINITY_NUMERIC;
    uint32_t h = 0;

    if (decl == NULL || size == 0 || decl[0] == '\0') {
        return ENGINE_AFFINITY_BLOB;
    }
    for (size_t i = 0; i < size && decl[i] != '\0'; i++) {
        h = (h << 8) + ascii_lower((uint8_t)decl[i]);
        if ((h & 0x00ffffff) == TYPE_TAG(0, 'i', 'n', 't')) {
            return ENGINE_AFFINITY_INTEGER;
        }
        bool untyped = affinity == ENGINE_AFFINITY_NUMERIC;
        if (h == TYPE_TAG('c', 'h', 'a', 'r') ||
            h == TYPE_TAG('c', 'l', 'o', 'b') ||
            h == TYPE_TAG('t', 'e', 'x', 't')) {
            affinity = ENGINE_AFFINITY_TEXT;
        } else if (h == TYPE_TAG('b', 'l', 'o', 'b') &&
                   (untyped || affinity == ENGINE_AFFINITY_REAL)) {
            affinity = ENGINE_AFFINITY_BLOB;
        } else if (untyped && (h == TYPE_TAG('r', 'e', 'a', 'l') ||
                               h == TYPE_TAG('f', 'l', 'o', 'a') ||
                               h == TYPE_TAG('d', 'o', 'u', 'b'))) {
            affinity = ENGINE_AFFINITY_REAL;
        }
    }
    return affinity;
}

static bool name_equals(const char *name, size_t size, const char *upper)
{
    size_t n = strlen(upper);

    if (size != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (ascii_lower((uint8_t)name[i]) != ascii_lower((uint8_t)upper[i])) {
            return false;
        }
    }
    return true;
}

/* The three collations SQLite builds in (main.c openDatabase), looked up
 * with sqlite3StrICmp (ASCII case folding). */
int engine__collation_by_name(const char *name, size_t size,
                              enum engine_collation *out)
{
    ASSERT(name != NULL || size == 0);
    ASSERT(out != NULL);
    if (name_equals(name, size, "BINARY")) {
        *out = ENGINE_COLLATION_BINARY;
    } else if (name_equals(name, size, "NOCASE")) {
        *out = ENGINE_COLLATION_NOCASE;
    } else if (name_equals(name, size, "RTRIM")) {
        *out = ENGINE_COLLATION_RTRIM;
    } else {
        return ENGINE_ESQL;
    }
    return 0;
}

/* ---- numbers ---- */

enum engine_numeric_kind engine__text_to_number(const uint8_t *text,
                                                size_t size, int64_t *as_int,
                                                double *as_real)
{
    enum engine_numeric_kind kind;
    double r;
    int64_t i;
    int rc_real = engine__text_number_atof(text, size, &r);
    int rc_int = engine__text_number_atoi64(text, size, &i);

    if (rc_real >= ENGINE_ATOF_INTEGER) {
        kind = (rc_real == ENGINE_ATOF_INTEGER && rc_int == ENGINE_ATOI_OK)
                   ? ENGINE_NUMERIC_INTEGER
                   : ENGINE_NUMERIC_REAL;
    } else if (rc_real == ENGINE_ATOF_NONE && rc_int == ENGINE_ATOI_NO_DIGITS) {
        kind = ENGINE_NUMERIC_NONE;
    } else {
        kind = ENGINE_NUMERIC_PREFIX;
    }
    if (as_int != NULL) {
        *as_int = i;
    }
    if (as_real != NULL) {
        *as_real = r;
    }
    return kind;
}

/* doubleToInt64 (vdbemem.c): truncation, saturated at both ends. */
static int64_t real_to_int_saturated(double r)
{
    if (r <= -9223372036854775808.0) {
        return INT64_MIN;
    }
    if (r >= 9223372036854775808.0) {
        return INT64_MAX;
    }
    return isnan(r) ? 0 : (int64_t)r;
}

/* sqlite3VdbeIntegerAffinity's test: the round trip real -> int -> real
 * is exact, and the integer is neither INT64_MIN nor INT64_MAX (ticket
 * #3922). */
bool engine__real_to_exact_int(double value, int64_t *out)
{
    int64_t i = real_to_int_saturated(value);

    if (value == (double)i && i > INT64_MIN && i < INT64_MAX) {
        *out = i;
        return true;
    }
    return false;
}

/* sqlite3RealSameAsInt (util.c): r is i, and i is small enough (|i| <
 * 2^51) that the text forms agree; 0.0 and -0.0 are the same as 0. */
static bool real_same_as_int(double r, int64_t i)
{
    double back = (double)i;

    return r == 0.0 || (memcmp(&r, &back, sizeof(r)) == 0 &&
                        i >= -2251799813685248LL && i < 2251799813685248LL);
}

/* sqlite3RealToI64 (util.c): a cast saturated a little inside the range,
 * so that the conversion is always defined. */
static int64_t real_to_i64(double r)
{
    if (r < -9223372036854774784.0) {
        return INT64_MIN;
    }
    if (r > 9223372036854774784.0) {
        return INT64_MAX;
    }
    return (int64_t)r;
}

static const uint8_t *value_bytes(const struct engine_value *v)
{
    static const uint8_t empty[1] = {0};

    return v->u.s.bytes != NULL ? v->u.s.bytes : empty;
}

/* sqlite3VdbeIntValue (vdbemem.c). */
int64_t engine__value_to_int(const struct engine_value *v)
{
    int64_t i = 0;

    ASSERT(v != NULL);
    switch (v->type) {
    case ENGINE_INTEGER:
        return v->u.i;
    case ENGINE_FLOAT:
        return real_to_int_saturated(v->u.r);
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        engine__text_number_atoi64(value_bytes(v), v->u.s.size, &i);
        return i;
    default:
        return 0;
    }
}

/* sqlite3VdbeRealValue (vdbemem.c). */
double engine__value_to_real(const struct engine_value *v)
{
    double r = 0.0;

    ASSERT(v != NULL);
    switch (v->type) {
    case ENGINE_INTEGER:
        return (double)v->u.i;
    case ENGINE_FLOAT:
        return v->u.r;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        engine__text_number_atof(value_bytes(v), v->u.s.size, &r);
        return r;
    default:
        return 0.0;
    }
}

/* sqlite3VdbeMemStringify (vdbemem.c): "%lld" for integers, "%!.15g" for
 * reals (real_text.c), into new arena bytes. */
static int number_to_text(const struct engine_value *v,
                          struct engine_arena *arena, struct engine_value *out)
{
    char buf[ENGINE_REAL_TEXT_SIZE];
    size_t size;
    char *bytes;

    if (v->type == ENGINE_INTEGER) {
        size = (size_t)snprintf(buf, sizeof(buf), "%" PRId64, v->u.i);
    } else {
        size = engine__real_to_text(v->u.r, buf);
    }
    bytes = engine__arena_strndup(arena, buf, size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    *out = engine__value_text(bytes, size);
    return 0;
}

int engine__value_to_text(const struct engine_value *v,
                          struct engine_arena *arena, struct engine_value *out)
{
    ASSERT(v != NULL);
    ASSERT(out != NULL);
    switch (v->type) {
    case ENGINE_INTEGER:
    case ENGINE_FLOAT:
        ASSERT(arena != NULL);
        return number_to_text(v, arena, out);
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        *out = engine__value_text(v->u.s.bytes, v->u.s.size);
        return 0;
    default:
        *out = engine__value_null();
        return 0;
    }
}

/* ---- affinity ---- */

/* sqlite3VdbeIntegerAffinity: a REAL that is an exact integer becomes
 * INTEGER. */
static void real_try_int(struct engine_value *v)
{
    int64_t i;

    if (engine__real_to_exact_int(v->u.r, &i)) {
        *v = engine__value_int(i);
    }
}

/* applyNumericAffinity (vdbe.c) on TEXT: only text that is a number as a
 * whole (sqlite3AtoF > 0) converts. An integer literal in range stays
 * exact ("alsoAnInt"); anything else becomes REAL, and with try_int a REAL
 * that is an exact integer becomes INTEGER ('3.0' -> 3, '1e3' -> 1000). */
static void text_numeric_affinity(struct engine_value *v, bool try_int)
{
    const uint8_t *text = value_bytes(v);
    double r;
    int64_t i;
    int rc = engine__text_number_atof(text, v->u.s.size, &r);

    if (rc <= ENGINE_ATOF_NONE) {
        return;
    }
    if (rc == ENGINE_ATOF_INTEGER) {
        i = real_to_i64(r);
        if (real_same_as_int(r, i)) {
            *v = engine__value_int(i);
            return;
        }
        if (engine__text_number_atoi64(text, v->u.s.size, &i) ==
            ENGINE_ATOI_OK) {
            *v = engine__value_int(i);
            return;
        }
    }
    *v = engine__value_real(r);
    if (try_int) {
        real_try_int(v);
    }
}

/* applyAffinity (vdbe.c) as OP_MakeRecord uses it to store a value, plus
 * OP_MakeRecord's REAL column rule: an integer stored in a REAL column
 * reads back as REAL. */
int engine__value_keep(struct engine_arena *arena, struct engine_value *v)
{
    void *bytes;

    if (v->type != ENGINE_TEXT && v->type != ENGINE_BLOB) {
        return 0;
    }
    bytes = engine__arena_memdup(arena, v->u.s.bytes, v->u.s.size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    v->u.s.bytes = bytes;
    return 0;
}

int engine__value_apply_affinity(struct engine_value *v,
                                 enum engine_affinity affinity,
                                 struct engine_arena *arena)
{
    ASSERT(v != NULL);
    if (affinity == ENGINE_AFFINITY_TEXT) {
        if (v->type == ENGINE_INTEGER || v->type == ENGINE_FLOAT) {
            return engine__value_to_text(v, arena, v);
        }
        return 0;
    }
    if (affinity == ENGINE_AFFINITY_BLOB) {
        return 0;
    }
    if (v->type == ENGINE_FLOAT) {
        real_try_int(v);
    } else if (v->type == ENGINE_TEXT) {
        text_numeric_affinity(v, true);
    }
    if (affinity == ENGINE_AFFINITY_REAL && v->type == ENGINE_INTEGER) {
        *v = engine__value_real((double)v->u.i);
    }
    return 0;
}

/* sqlite3VdbeMemNumerify (vdbemem.c), CAST(text AS NUMERIC): an integer
 * prefix ("12abc") gives INTEGER, as does a REAL that is a small exact
 * integer; otherwise the REAL value of the numeric prefix. */
static struct engine_value bytes_numerify(const struct engine_value *v)
{
    const uint8_t *text = value_bytes(v);
    double r;
    int64_t i = 0;
    int rc = engine__text_number_atof(text, v->u.s.size, &r);

    if ((rc == ENGINE_ATOF_NONE || rc == ENGINE_ATOF_INTEGER) &&
        engine__text_number_atoi64(text, v->u.s.size, &i) <=
            ENGINE_ATOI_EXTRA) {
        return engine__value_int(i);
    }
    i = real_to_i64(r);
    if (real_same_as_int(r, i)) {
        return engine__value_int(i);
    }
    return engine__value_real(r);
}

/* sqlite3VdbeMemCast (vdbemem.c) for OP_Cast. */
int engine__value_cast(const struct engine_value *v,
                       enum engine_affinity affinity,
                       struct engine_arena *arena, struct engine_value *out)
{
    struct engine_value result = *v;
    int rc;

    ASSERT(v != NULL);
    ASSERT(out != NULL);
    if (v->type == ENGINE_NULL) {
        *out = result;
        return 0;
    }
    switch (affinity) {
    case ENGINE_AFFINITY_BLOB:
    case ENGINE_AFFINITY_TEXT:
        rc = engine__value_to_text(v, arena, &result);
        if (rc != 0) {
            return rc;
        }
        result.type =
            affinity == ENGINE_AFFINITY_BLOB ? ENGINE_BLOB : ENGINE_TEXT;
        break;
    case ENGINE_AFFINITY_NUMERIC:
        if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
            result = bytes_numerify(v);
        }
        break;
    case ENGINE_AFFINITY_INTEGER:
        result = engine__value_int(engine__value_to_int(v));
        break;
    default:
        result = engine__value_real(engine__value_to_real(v));
        break;
    }
    *out = result;
    return 0;
}

/* ---- comparison affinity ---- */

static bool affinity_is_numeric(enum engine_affinity affinity)
{
    return affinity >= ENGINE_AFFINITY_NUMERIC;
}

/* sqlite3CompareAffinity (expr.c) and OP_Lt..OP_Ge (vdbe.c), as
 * datatype3 §4.2 states them: "If one operand has INTEGER, REAL or NUMERIC
 * affinity and the other operand has TEXT or BLOB or no affinity then
 * NUMERIC affinity is applied to other operand" (OP_Lt applies it to every
 * TEXT operand, without the REAL -> INTEGER step); "If one operand has
 * TEXT affinity and the other has no affinity, then TEXT affinity is
 * applied to the other operand" (numbers are rendered as text). BLOB
 * stands for "no affinity" here, as value.h documents. */
int engine__comparison_prepare(struct engine_value *a,
                               enum engine_affinity a_affinity,
                               struct engine_value *b,
                               enum engine_affinity b_affinity,
                               struct engine_arena *arena)
{
    ASSERT(a != NULL);
    ASSERT(b != NULL);
    if (affinity_is_numeric(a_affinity) || affinity_is_numeric(b_affinity)) {
        if (a->type == ENGINE_TEXT) {
            text_numeric_affinity(a, false);
        }
        if (b->type == ENGINE_TEXT) {
            text_numeric_affinity(b, false);
        }
        return 0;
    }
    if (a_affinity != ENGINE_AFFINITY_TEXT &&
        b_affinity != ENGINE_AFFINITY_TEXT) {
        return 0;
    }
    struct engine_value a_text = *a, b_text = *b;
    /* OP_Lt stringifies only an operand without MEM_Str. */
    int rc = a->has_text ? 0
                         : engine__value_apply_affinity(
                               &a_text, ENGINE_AFFINITY_TEXT, arena);
    if (rc == 0 && !b->has_text) {
        rc = engine__value_apply_affinity(&b_text, ENGINE_AFFINITY_TEXT, arena);
    }
    if (rc != 0) {
        return rc;
    }
    *a = a_text;
    *b = b_text;
    return 0;
}

/* sqlite3VdbeBooleanValue (vdbemem.c): integers against 0, NULL is
 * unknown, everything else by its REAL value ('abc' -> 0.0 -> false). */
int engine__value_truth(const struct engine_value *v)
{
    ASSERT(v != NULL);
    if (v->type == ENGINE_INTEGER) {
        return v->u.i != 0;
    }
    if (v->type == ENGINE_NULL) {
        return -1;
    }
    return engine__value_to_real(v) != 0.0;
}
