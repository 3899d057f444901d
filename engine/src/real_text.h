/* SPDX-License-Identifier: MIT
 *
 * real_text.h: the steps of SQLite's REAL-to-decimal conversion (printf.c,
 * sqlite3_str_vappendf), shared by the REAL text rendering (real_text.c)
 * and printf()/format() (func_printf.c), so the digit loop exists once.
 * All arithmetic is long double, as in the oracle (x87 80-bit on x86-64).
 */
#ifndef SINEW_ENGINE_REAL_TEXT_H
#define SINEW_ENGINE_REAL_TEXT_H

#include <stddef.h>

/* Scales value (> 0) into [1, 10) by printf.c's accumulated powers of ten
 * and returns the decimal exponent; above 350 the value is infinite. */
int engine__real_normalize(long double *value);

/* et_getdigit: the leading digit of *value (in [0, 10)), after which
 * *value holds the rest times ten; '0' once *budget significant digits
 * are spent (16, or 26 with the '!' flag). */
char engine__real_digit(long double *value, int *budget);

/* The rounding term added before the digits for a given precision (digits
 * after the first): arRound[precision % 10] times 1e-10 per ten, computed
 * in double steps as printf.c does. */
double engine__real_rounder(int precision);

/* "%!.<significant>g" of value into out (room for ENGINE_REAL_TEXT_SIZE
 * bytes): significant in 1..26. Returns the length. */
size_t engine__real_format(double value, int significant, char *out);

#endif /* SINEW_ENGINE_REAL_TEXT_H */
