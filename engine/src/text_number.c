/* SPDX-License-Identifier: MIT
 *
 * text_number.c: text to numbers exactly as SQLite 3.40 reads them.
 *
 * SQLite does not use strtod. sqlite3AtoF (util.c) gathers at most about 18
 * significant decimal digits into an int64 significand s and a decimal
 * exponent e, then computes s * 10^e (or s / 10^-e) with a long double
 * power of ten (sqlite3Pow10), and rounds that to double. The double
 * rounding makes about 0.7% of inputs land one unit in the last place away
 * from strtod's answer (reference/sqlite-numbers.md), and the engine must
 * agree with SQLite, so this file follows sqlite3AtoF step by step. Like
 * SQLite it relies on the platform's long double (x87 80-bit on x86-64,
 * which is what the oracle libsqlite3 uses on our machines).
 *
 * sqlite3Atoi64 reads the integer prefix with u64 arithmetic and decides
 * overflow by comparing 19-digit inputs against "9223372036854775808".
 */
#include "text_number.h"

#include <math.h>
#include <stdbool.h>

/* SQLite's LARGEST_INT64. */
#define INT64_LARGEST INT64_MAX

/* sqlite3Isspace: the C locale's six space characters. */
static bool byte_is_space(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool byte_is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* What sqlite3AtoF has read so far: the value is
 * sign * s * 10^(esign * e + d). */
struct decimal {
    const uint8_t *text; /* borrowed input */
    size_t size;         /* bytes at text */
    size_t pos;          /* next byte to read */
    int sign;            /* +1 or -1 */
    int64_t s;           /* significand, < (INT64_MAX - 9) / 10 * 10 + 9 */
    int d;               /* exponent adjustment from digits kept/dropped */
    int esign;           /* sign of the explicit exponent */
    int e;               /* explicit exponent, capped at 10000 */
    bool e_valid;        /* false after an 'e' without digits */
    int digit_count;     /* significand digits seen (only > 0 matters) */
    int kind;            /* 1 digits, +1 for '.', +1 for 'e' */
};

static bool decimal_at_digit(const struct decimal *p)
{
    return p->pos < p->size && byte_is_digit(p->text[p->pos]);
}

/* Integer part, then fraction: "copy max significant digits to
 * significand"; digits past the int64 budget only move the exponent. */
static void decimal_read_significand(struct decimal *p)
{
    const int64_t budget = (INT64_LARGEST - 9) / 10;

    while (decimal_at_digit(p)) {
        p->s = p->s * 10 + (p->text[p->pos++] - '0');
        p->digit_count++;
        if (p->s >= budget) {
            while (decimal_at_digit(p)) {
                p->pos++;
                p->d++;
            }
        }
    }
    if (p->pos >= p->size || p->text[p->pos] != '.') {
        return;
    }
    p->pos++;
    p->kind++;
    while (decimal_at_digit(p)) {
        if (p->s < budget) {
            p->s = p->s * 10 + (p->text[p->pos] - '0');
            p->d--;
            p->digit_count++;
        }
        p->pos++;
    }
}

/* "if exponent is present": 'e' or 'E', an optional sign, digits (the
 * value saturates at 10000, far past any double). */
static void decimal_read_exponent(struct decimal *p)
{
    if (p->pos >= p->size ||
        (p->text[p->pos] != 'e' && p->text[p->pos] != 'E')) {
        return;
    }
    p->pos++;
    p->e_valid = false;
    p->kind++;
    if (p->pos >= p->size) {
        return;
    }
    if (p->text[p->pos] == '-') {
        p->esign = -1;
        p->pos++;
    } else if (p->text[p->pos] == '+') {
        p->pos++;
    }
    while (decimal_at_digit(p)) {
        p->e = p->e < 10000 ? p->e * 10 + (p->text[p->pos] - '0') : 10000;
        p->pos++;
        p->e_valid = true;
    }
}

/* sqlite3Pow10 (util.c): 10^e in long double by binary powering (the
 * square of 10 kept as it goes, multiplied in for each set bit of e), so
 * the scale carries the rounding of that exact sequence of products. */
static long double pow10_long(int e)
{
    long double x = 10.0;
    long double r = 1.0;

    for (;;) {
        if (e & 1) {
            r *= x;
        }
        e >>= 1;
        if (e == 0) {
            return r;
        }
        x *= x;
    }
}

/* s * 10^e (esign > 0) or s / 10^e (esign < 0), e > 0, by SQLite's
 * scaling: a long double power of ten, rounded once to double; for
 * 307 < e < 342 the last 10^308 is applied in double afterwards; past
 * that the result is 0 or infinite. */
static double decimal_scale(int64_t s, int e, int esign)
{
    long double scale;
    double result;

    if (e >= 342) {
        return esign < 0 ? 0.0 * (double)s : INFINITY * (double)s;
    }
    if (e > 307) {
        scale = pow10_long(e - 308);
        result = (double)(esign < 0 ? (long double)s / scale
                                    : (long double)s * scale);
        return esign < 0 ? result / 1.0e+308 : result * 1.0e+308;
    }
    scale = pow10_long(e);
    return (double)(esign < 0 ? (long double)s / scale
                              : (long double)s * scale);
}

/* "do_atof_calc": fold d into the exponent, move powers of ten into s
 * while that stays exact, then scale. */
static double decimal_value(const struct decimal *p)
{
    int e = p->e * p->esign + p->d;
    int esign = e < 0 ? -1 : 1;
    int64_t s = p->s;

    e = e < 0 ? -e : e;
    if (s == 0) {
        return p->sign < 0 ? -0.0 : 0.0;
    }
    while (e > 0) {
        if (esign > 0 && s >= INT64_LARGEST / 10) {
            break;
        }
        if (esign < 0 && s % 10 != 0) {
            break;
        }
        s = esign > 0 ? s * 10 : s / 10;
        e--;
    }
    s = p->sign < 0 ? -s : s;
    if (e == 0) {
        return (double)s;
    }
    return decimal_scale(s, e, esign);
}

int engine__text_number_atof(const uint8_t *text, size_t size, double *out)
{
    struct decimal p = {.text = text,
                        .size = size,
                        .sign = 1,
                        .esign = 1,
                        .e_valid = true,
                        .kind = 1};

    while (p.pos < size && byte_is_space(text[p.pos])) {
        p.pos++;
    }
    if (p.pos >= size) {
        *out = 0.0;
        return ENGINE_ATOF_NONE;
    }
    if (text[p.pos] == '-' || text[p.pos] == '+') {
        p.sign = text[p.pos] == '-' ? -1 : 1;
        p.pos++;
    }
    decimal_read_significand(&p);
    decimal_read_exponent(&p);
    while (p.pos < size && byte_is_space(text[p.pos])) {
        p.pos++;
    }
    *out = decimal_value(&p);
    /* "return true if number and no extra non-whitespace characters" */
    if (p.pos == size && p.digit_count > 0 && p.e_valid) {
        return p.kind;
    }
    if (p.kind >= 2 && (p.kind == 3 || p.e_valid) && p.digit_count > 0) {
        return ENGINE_ATOF_PREFIX_REAL;
    }
    return ENGINE_ATOF_NONE;
}

/* compare2pow63: digits (at least 19 of them) against 2^63 =
 * 9223372036854775808; <0, 0 or >0. */
static int compare_2pow63(const uint8_t *digits)
{
    static const char pow63[] = "922337203685477580";
    int c = 0;

    for (int i = 0; c == 0 && i < 18; i++) {
        c = (digits[i] - pow63[i]) * 10;
    }
    if (c == 0) {
        c = digits[18] - '8';
    }
    return c;
}

static bool only_spaces(const uint8_t *text, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (!byte_is_space(text[i])) {
            return false;
        }
    }
    return true;
}

int engine__text_number_atoi64(const uint8_t *text, size_t size, int64_t *out)
{
    size_t pos = 0, start, digits = 0;
    bool negative = false;
    uint64_t u = 0;
    int rc = ENGINE_ATOI_OK;

    while (pos < size && byte_is_space(text[pos])) {
        pos++;
    }
    if (pos < size && (text[pos] == '-' || text[pos] == '+')) {
        negative = text[pos] == '-';
        pos++;
    }
    start = pos;
    while (pos < size && text[pos] == '0') {
        pos++;
    }
    for (; pos + digits < size && byte_is_digit(text[pos + digits]); digits++) {
        u = u * 10 + (uint64_t)(text[pos + digits] - '0');
    }
    if (u > (uint64_t)INT64_MAX) {
        *out = negative ? INT64_MIN : INT64_MAX;
    } else {
        *out = negative ? -(int64_t)u : (int64_t)u;
    }
    if (digits == 0 && start == pos) {
        rc = ENGINE_ATOI_NO_DIGITS;
    } else if (!only_spaces(text + pos + digits, size - pos - digits)) {
        rc = ENGINE_ATOI_EXTRA;
    }
    if (digits < 19) {
        return rc;
    }
    int c = digits > 19 ? 1 : compare_2pow63(text + pos);
    if (c < 0) {
        return rc;
    }
    *out = negative ? INT64_MIN : INT64_MAX;
    if (c > 0) {
        return ENGINE_ATOI_OVERFLOW;
    }
    return negative ? rc : ENGINE_ATOI_2POW63;
}
