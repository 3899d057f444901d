/* SPDX-License-Identifier: MIT
 *
 * real_text.c: a REAL rendered as text exactly as SQLite 3.40 renders it.
 *
 * SQLite turns a REAL into text (sqlite3_value_text, CAST AS TEXT, TEXT
 * affinity, ||) with its own printf: vdbeMemRenderNum() formats
 * "%!.15g" through sqlite3_str_vappendf() (printf.c). That conversion is
 * not libc's: it normalizes the value into [1, 10) with a long double
 * scale, adds a rounding constant of 5e-15 (a double), and peels digits
 * with et_getdigit(), at most 26 significant ones with the '!' flag. The
 * results differ from a correctly rounded "%.15g" on about 0.15% of doubles
 * (reference/sqlite-numbers.md), so this file repeats those steps in the
 * same long double arithmetic (x87 80-bit on x86-64, as the oracle).
 *
 * The '!' flag is what makes integral values print as "3.0" and "1.0e+20":
 * trailing zeros are removed, and a bare '.' gets one '0' back. Values
 * whose decimal exponent is below -4 or above 14 take the exponent form
 * (%g's rule with precision 15). -0.0 prints as "0.0" (printf tests
 * value < 0, which -0.0 is not); infinities print as "Inf" and "-Inf".
 *
 * Other precisions ("%!.20g", the sqlite3 shell's JSON numbers) use the
 * same steps with another digit count (engine__real_format).
 *
 * NaN: SQLite never stores a NaN (sqlite3VdbeMemSetDouble and arithmetic
 * turn it into NULL), and the engine's value layer does the same, so no
 * REAL value renders through here as NaN. Called directly with a NaN, this
 * returns "NaN", which is what SQLite's printf itself prints.
 */
#include "real_text.h"

#include "value.h"

#include <math.h>
#include <string.h>

/* SQLite renders REALs as "%!.15g". */
#define REAL_TEXT_SIGNIFICANT 15
/* et_getdigit's budget with the '!' flag: 16 + 10 significant digits. */
#define REAL_TEXT_DIGITS_MAX 26

STATIC_ASSERT(ENGINE_REAL_TEXT_SIZE >= 24, "longest rendering fits");

char engine__real_digit(long double *value, int *budget)
{
    int digit;

    if (*budget <= 0) {
        return '0';
    }
    (*budget)--;
    digit = (int)*value;
    *value = (*value - (long double)digit) * 10.0;
    return (char)('0' + digit);
}

/* "Normalize realvalue to within 10.0 > realvalue >= 1.0": divide by an
 * accumulated scale while the value is large, multiply while it is small. */
int engine__real_normalize(long double *value)
{
    long double scale = 1.0;
    int exp = 0;

    while (*value >= 1e100 * scale && exp <= 350) {
        scale *= 1e100;
        exp += 100;
    }
    while (*value >= 1e10 * scale && exp <= 350) {
        scale *= 1e10;
        exp += 10;
    }
    while (*value >= 10.0 * scale && exp <= 350) {
        scale *= 10.0;
        exp++;
    }
    *value /= scale;
    while (*value < 1e-8) {
        *value *= 1e8;
        exp -= 8;
    }
    while (*value < 1.0) {
        *value *= 10.0;
        exp--;
    }
    return exp;
}

double engine__real_rounder(int precision)
{
    static const double rounds[] = {5.0e-01, 5.0e-02, 5.0e-03, 5.0e-04,
                                    5.0e-05, 5.0e-06, 5.0e-07, 5.0e-08,
                                    5.0e-09, 5.0e-10};
    int idx = precision & 0xfff;
    double rounder = rounds[idx % 10];

    while (idx >= 10) {
        rounder *= 1.0e-10;
        idx -= 10;
    }
    return rounder;
}

/* The digits of a normalized value: fixed notation when -4 <= exp <= 14
 * (e2 = exp digits before the point), else one digit, the point and the
 * rest for the exponent form. Trailing zeros go, but one stays after the
 * point ("flag_rtz" with "flag_altform2"). Returns the end of the text. */
static char *real_digits(long double value, int exp, int digits_after,
                         bool exp_form, char *p)
{
    int precision = exp_form ? digits_after : digits_after - exp;
    int e2 = exp_form ? 0 : exp;
    int budget = REAL_TEXT_DIGITS_MAX;

    if (e2 < 0) {
        *p++ = '0';
    }
    for (; e2 >= 0; e2--) {
        *p++ = engine__real_digit(&value, &budget);
    }
    *p++ = '.';
    for (e2++; e2 < 0; precision--, e2++) {
        *p++ = '0';
    }
    while (precision-- > 0) {
        *p++ = engine__real_digit(&value, &budget);
    }
    while (p[-1] == '0') {
        p--;
    }
    if (p[-1] == '.') {
        *p++ = '0';
    }
    return p;
}

static char *real_exponent(int exp, char *p)
{
    *p++ = 'e';
    *p++ = exp < 0 ? '-' : '+';
    exp = exp < 0 ? -exp : exp;
    if (exp >= 100) {
        *p++ = (char)('0' + exp / 100);
        exp %= 100;
    }
    *p++ = (char)('0' + exp / 10);
    *p++ = (char)('0' + exp % 10);
    return p;
}

size_t engine__real_format(double value, int significant, char *out)
{
    /* %g spends one digit before the point. */
    int digits_after = significant - 1;
    long double x = value;
    char *p = out;
    int exp = 0;

    ASSERT(out != NULL);
    ASSERT(significant >= 1 && significant <= REAL_TEXT_DIGITS_MAX);
    if (isnan(value)) {
        memcpy(out, "NaN", 4);
        return 3;
    }
    if (x < 0.0) {
        x = -x;
        *p++ = '-';
    }
    if (x > 0.0) {
        exp = engine__real_normalize(&x);
    }
    if (exp > 350) {
        memcpy(p, "Inf", 4);
        return (size_t)(p - out) + 3;
    }
    x += engine__real_rounder(digits_after);
    if (x >= 10.0) {
        x *= 0.1;
        exp++;
    }
    bool exp_form = exp < -4 || exp > digits_after;
    p = real_digits(x, exp, digits_after, exp_form, p);
    if (exp_form) {
        p = real_exponent(exp, p);
    }
    *p = '\0';
    return (size_t)(p - out);
}

size_t engine__real_to_text(double value, char *out)
{
    return engine__real_format(value, REAL_TEXT_SIGNIFICANT, out);
}

size_t engine_real_to_text(double value, char *out)
{
    return engine__real_to_text(value, out);
}

size_t engine_real_to_text_digits(double value, int significant, char *out)
{
    if (significant < 1) {
        significant = 1;
    }
    if (significant > REAL_TEXT_DIGITS_MAX) {
        significant = REAL_TEXT_DIGITS_MAX;
    }
    return engine__real_format(value, significant, out);
}
