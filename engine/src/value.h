/* SPDX-License-Identifier: MIT
 *
 * value.h: one SQL value and SQLite's rules for it, the single source of
 * truth for the engine's semantics. Vectorized operators may take faster
 * paths for typed vectors, but every such path must agree with these
 * functions, and the tests check that it does.
 *
 * References (SQLite 3.40, the oracle on our machines):
 *   - "Datatypes In SQLite" (datatype3.html): storage classes, affinity
 *     (§3, §3.1 rules for a declared type), comparison (§4) and the
 *     affinity applied to comparison operands (§4.2), sort order (§4.1);
 *   - "CAST expressions" (lang_expr.html#castexpr);
 *   - vdbe.c OP_Add..OP_Remainder, OP_Concat: arithmetic and overflow to
 *     REAL; sqlite3AtoF / sqlite3Atoi64 (util.c): text to numbers;
 *   - printf.c "%!.15g": REAL to text (see reference/sqlite-numbers.md).
 *
 * Memory: a TEXT or BLOB value points at bytes it does not own. Functions
 * that produce new bytes take an arena and allocate there; the result
 * lives as long as the arena.
 */
#ifndef SINEW_ENGINE_VALUE_H
#define SINEW_ENGINE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "engine.h"

struct engine_value {
    int type;          /* ENGINE_INTEGER, _FLOAT, _TEXT, _BLOB or _NULL */
    bool has_text;     /* INTEGER/FLOAT that also carries its text, as a Mem
                          with MEM_Str set besides MEM_Int/MEM_Real */
    bool json_subtype; /* TEXT that a JSON function produced (SQLite's
                          JSON_SUBTYPE): another JSON function embeds it
                          as JSON, not as a string. Meaningful only on a
                          call's result passed straight to another call
                          (expr.h carries_subtype); ignored elsewhere */
    union {
        int64_t i; /* ENGINE_INTEGER */
        double r;  /* ENGINE_FLOAT */
        struct {
            const uint8_t *bytes; /* borrowed; may be NULL when size is 0 */
            size_t size;          /* bytes; text is UTF-8, not terminated */
        } s;                      /* ENGINE_TEXT and ENGINE_BLOB */
    } u;
};

static inline struct engine_value engine__value_null(void)
{
    struct engine_value v = {.type = ENGINE_NULL};
    return v;
}

static inline struct engine_value engine__value_int(int64_t i)
{
    struct engine_value v = {.type = ENGINE_INTEGER, .u.i = i};
    return v;
}

static inline struct engine_value engine__value_real(double r)
{
    struct engine_value v = {.type = ENGINE_FLOAT, .u.r = r};
    return v;
}

static inline struct engine_value engine__value_text(const void *bytes,
                                                     size_t size)
{
    struct engine_value v = {.type = ENGINE_TEXT};
    v.u.s.bytes = bytes;
    v.u.s.size = size;
    return v;
}

static inline struct engine_value engine__value_blob(const void *bytes,
                                                     size_t size)
{
    struct engine_value v = {.type = ENGINE_BLOB};
    v.u.s.bytes = bytes;
    v.u.s.size = size;
    return v;
}

/* Column affinity (datatype3.html §3). BLOB is SQLite's "BLOB" (formerly
 * "NONE"): no conversion. */
enum engine_affinity {
    ENGINE_AFFINITY_BLOB = 0,
    ENGINE_AFFINITY_TEXT,
    ENGINE_AFFINITY_NUMERIC,
    ENGINE_AFFINITY_INTEGER,
    ENGINE_AFFINITY_REAL,
};

enum engine_collation {
    ENGINE_COLLATION_BINARY = 0,
    ENGINE_COLLATION_NOCASE, /* ASCII letters fold, as SQLite's */
    ENGINE_COLLATION_RTRIM,  /* trailing spaces ignored */
};

/* The affinity of a declared column type (§3.1's five rules, in order: INT,
 * then CHAR/CLOB/TEXT, then BLOB or no type, then REAL/FLOA/DOUB, else
 * NUMERIC). decl may be NULL (no type: BLOB affinity). */
enum engine_affinity engine__affinity_of_declared_type(const char *decl,
                                                       size_t size);

/* The collation named name (case-insensitive): 0 and *out set, or
 * ENGINE_ESQL for an unknown name. */
int engine__collation_by_name(const char *name, size_t size,
                              enum engine_collation *out);

/* ---- text and numbers ---- */

/* SQLite's REAL rendering (engine_real_to_text() in engine.h). */
size_t engine__real_to_text(double value, char *out);

/* How text reads as a number, by sqlite3AtoF's rules: leading and trailing
 * spaces allowed, optional sign, digits, '.', exponent; hex not accepted. */
enum engine_numeric_kind {
    ENGINE_NUMERIC_NONE = 0, /* no numeric prefix at all */
    ENGINE_NUMERIC_PREFIX,   /* a number followed by other text */
    ENGINE_NUMERIC_INTEGER,  /* the whole text is an integer in int64 range */
    ENGINE_NUMERIC_REAL,     /* the whole text is a number, not an int64 */
};

/* Classifies text and converts its numeric prefix: *as_int gets the
 * integer value (saturated like sqlite3Atoi64 when out of range), *as_real
 * the double value by sqlite3AtoF's algorithm (not strtod's). Either
 * pointer may be NULL. */
enum engine_numeric_kind engine__text_to_number(const uint8_t *text,
                                                size_t size, int64_t *as_int,
                                                double *as_real);

/* A double that holds an integer exactly and fits int64 (SQLite's
 * sqlite3VdbeIntegerAffinity test): true and *out set. */
bool engine__real_to_exact_int(double value, int64_t *out);

/* Integer value of v as sqlite3_value_int64() gives it (REAL truncates and
 * saturates, TEXT/BLOB parse their prefix, NULL is 0). */
int64_t engine__value_to_int(const struct engine_value *v);

/* Double value as sqlite3_value_double() gives it. */
double engine__value_to_real(const struct engine_value *v);

/* Text of v as sqlite3_value_text() gives it: numbers rendered, blobs as
 * their bytes, NULL as NULL. *out is a TEXT value (or NULL); new bytes go
 * to arena. 0, or COMMON_ENOMEM. */
int engine__value_to_text(const struct engine_value *v,
                          struct engine_arena *arena, struct engine_value *out);

/* Makes v own its text or blob bytes: copies them into arena, so v
 * outlives the batch or row it was read from. 0, or COMMON_ENOMEM. */
int engine__value_keep(struct engine_arena *arena, struct engine_value *v);

/* ---- affinity and CAST ---- */

/* Applies a column's affinity to a value being stored (datatype3 §3):
 * TEXT renders numbers as text; NUMERIC and INTEGER turn well-formed
 * numeric text into INTEGER or REAL (REAL that is an exact int64 becomes
 * INTEGER); REAL makes integers and numeric text REAL; BLOB changes
 * nothing. New bytes go to arena. 0, or COMMON_ENOMEM. */
int engine__value_apply_affinity(struct engine_value *v,
                                 enum engine_affinity affinity,
                                 struct engine_arena *arena);

/* CAST(v AS type), type given by the affinity of its declared name:
 * INTEGER truncates reals and reads text's integer prefix, REAL likewise,
 * NUMERIC reads text's numeric prefix, TEXT renders, BLOB reinterprets the
 * bytes. NULL stays NULL. 0, or COMMON_ENOMEM. */
int engine__value_cast(const struct engine_value *v,
                       enum engine_affinity affinity,
                       struct engine_arena *arena, struct engine_value *out);

/* ---- comparison ---- */

/* Total order of §4.1: NULL < INTEGER and REAL (compared numerically, an
 * INTEGER and a REAL exactly, without rounding the integer) < TEXT (by
 * collation) < BLOB (memcmp, then length). Returns <0, 0, >0. */
int engine__value_compare(const struct engine_value *a,
                          const struct engine_value *b,
                          enum engine_collation collation);

/* The affinity conversions applied before a comparison operator (§4.2):
 * given the operands' affinities (ENGINE_AFFINITY_BLOB for expressions with
 * none), converts a and b in place (numeric text against a numeric column,
 * and so on). New bytes go to arena. 0, or COMMON_ENOMEM. */
int engine__comparison_prepare(struct engine_value *a,
                               enum engine_affinity a_affinity,
                               struct engine_value *b,
                               enum engine_affinity b_affinity,
                               struct engine_arena *arena);

/* Truth of v in WHERE, AND, OR, NOT, CASE WHEN: 1 true, 0 false, -1 for
 * NULL. Numbers are true when not zero; text and blobs by their numeric
 * prefix (so 'abc' is false, '1x' is true). */
int engine__value_truth(const struct engine_value *v);

/* ---- arithmetic and text operators (vdbe.c) ---- */

enum engine_arith_op {
    ENGINE_ARITH_ADD,
    ENGINE_ARITH_SUBTRACT,
    ENGINE_ARITH_MULTIPLY,
    ENGINE_ARITH_DIVIDE,    /* integer division truncates; by zero: NULL */
    ENGINE_ARITH_REMAINDER, /* by zero: NULL; REAL operands: REAL result */
    ENGINE_ARITH_BIT_AND,
    ENGINE_ARITH_BIT_OR,
    ENGINE_ARITH_SHIFT_LEFT,  /* negative shift shifts the other way */
    ENGINE_ARITH_SHIFT_RIGHT, /* arithmetic; saturates past 63 */
};

/* a op b by SQLite's rules: NULL if either is NULL; text and blobs read as
 * numbers (their prefix); two integers give an integer unless the result
 * overflows int64, in which case it is computed in REAL. */
void engine__value_arith(enum engine_arith_op op, const struct engine_value *a,
                         const struct engine_value *b,
                         struct engine_value *out);

/* -v, +v (unchanged), ~v, NOT v, as SQLite: -(INT64_MIN) becomes REAL;
 * -'3x' is -3. */
void engine__value_negate(const struct engine_value *v,
                          struct engine_value *out);
void engine__value_bit_not(const struct engine_value *v,
                           struct engine_value *out);

/* a || b: NULL if either is NULL, else the text of both. 0, COMMON_ENOMEM,
 * or ENGINE_ETOOBIG past ENGINE_MAX_LENGTH. */
int engine__value_concat(const struct engine_value *a,
                         const struct engine_value *b,
                         struct engine_arena *arena, struct engine_value *out);

#endif /* SINEW_ENGINE_VALUE_H */
