/* SPDX-License-Identifier: MIT
 *
 * text_number.h: SQLite 3.40's two readers of numbers in text, kept with
 * their exact return codes because the value layer's rules (arithmetic,
 * NUMERIC affinity, CAST) branch on those codes, not only on the values.
 *
 *   engine__text_number_atof()   sqlite3AtoF (util.c)
 *   engine__text_number_atoi64() sqlite3Atoi64 (util.c)
 *
 * Both read UTF-8 text of a given size (no terminator needed; a NUL byte is
 * an ordinary non-numeric byte). Spaces are SQLite's sqlite3Isspace set:
 * ' ', '\t', '\n', '\v', '\f', '\r'.
 */
#ifndef SINEW_ENGINE_TEXT_NUMBER_H
#define SINEW_ENGINE_TEXT_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* sqlite3AtoF's result codes, named. */
enum engine_atof_rc {
    ENGINE_ATOF_PREFIX_REAL = -1, /* "1.5x", "1e5x": a real-looking prefix */
    ENGINE_ATOF_NONE = 0,         /* no number, or an integer prefix "12x" */
    ENGINE_ATOF_INTEGER = 1,      /* the whole text, digits only */
    ENGINE_ATOF_DECIMAL = 2,      /* the whole text, with '.' or exponent */
    ENGINE_ATOF_DECIMAL_EXP = 3,  /* the whole text, with '.' and exponent */
};

/* Reads the numeric prefix of text as sqlite3AtoF does, including its use
 * of long double scaling (so the result is not always strtod's correctly
 * rounded double). *out gets the prefix's value (0.0 when there is none).
 * Returns an enum engine_atof_rc. */
int engine__text_number_atof(const uint8_t *text, size_t size, double *out);

/* sqlite3Atoi64's result codes, named. */
enum engine_atoi_rc {
    ENGINE_ATOI_NO_DIGITS = -1, /* no digits at all: *out is 0 */
    ENGINE_ATOI_OK = 0,         /* the whole text is an int64 */
    ENGINE_ATOI_EXTRA = 1,      /* an int64 followed by other text */
    ENGINE_ATOI_OVERFLOW = 2,   /* too large: *out saturated */
    ENGINE_ATOI_2POW63 = 3,     /* exactly "9223372036854775808": MAX */
};

/* Reads the integer prefix of text as sqlite3Atoi64 does: spaces, a sign,
 * digits; *out saturates at INT64_MIN / INT64_MAX. Returns an enum
 * engine_atoi_rc. */
int engine__text_number_atoi64(const uint8_t *text, size_t size, int64_t *out);

#endif /* SINEW_ENGINE_TEXT_NUMBER_H */
