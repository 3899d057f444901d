/* SPDX-License-Identifier: MIT
 *
 * func_date.h: what the files of the date and time functions share: the
 * broken-down time value they all work on (SQLite's DateTime, date.c), its
 * conversions, and the reading of a function's arguments into one.
 *
 * The specification is SQLite 3.40.1's date.c; lang_datefunc.html is its
 * manual. A time is a julian day number times 86,400,000 (milliseconds
 * since noon UTC on -4713-11-24, proleptic Gregorian calendar), or the
 * parts year..second, or both; each part of the value says whether it is
 * current (has_jd, has_ymd, has_hms), and the compute functions fill in
 * one from the other as date.c's computeJD/computeYMD/computeHMS do. Only
 * 0000-01-01 .. 9999-12-31 (julian day 0 .. 5373484.4999...) is printable;
 * anything outside makes the function's result NULL.
 *
 * Files: func_date.c (parsing and conversions), func_date_modifier.c (the
 * modifiers, local time), func_date_format.c (the SQL functions).
 */
#ifndef SINEW_ENGINE_FUNC_DATE_H
#define SINEW_ENGINE_FUNC_DATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "func.h"

/* The largest valid jd_ms: 9999-12-31 23:59:59.999. */
#define ENGINE_DATE_JD_MS_MAX INT64_C(464269060799999)

/* 1970-01-01 00:00:00 as jd_ms: julian day 2440587.5. */
#define ENGINE_DATE_UNIX_EPOCH_MS INT64_C(210866760000000)

/* date.c's DateTime. Invariant: when is_error is set every other field is
 * zero (engine__date_error). */
struct engine_date_time {
    int64_t jd_ms;  /* julian day number times 86400000 */
    int year;       /* may be negative: -4713 .. 9999 when valid */
    int month;      /* 1..12 once normalized */
    int day;        /* 1..31 (modifiers may leave it past month end) */
    int hour;       /* 0..24 */
    int minute;     /* 0..59 */
    int tz_minutes; /* the [+-]HH:MM suffix, in minutes */
    double second;  /* with fraction; or the raw number (raw_s) */
    bool has_jd;    /* jd_ms is current */
    bool raw_s;     /* second holds a raw number not yet interpreted */
    bool has_ymd;   /* year, month, day are current */
    bool has_hms;   /* hour, minute, second are current */
    bool has_tz;    /* tz_minutes still has to be applied */
    bool tz_set;    /* a time zone was given explicitly */
    bool is_error;  /* out of range: the result is NULL */
};

/* a + b and a - b with two's-complement wrap-around: modifiers may push
 * jd_ms far out of range (the result is then NULL), and SQLite's
 * arithmetic wraps there; ours must not overflow a signed integer. */
static inline int64_t engine__date_add_ms(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t engine__date_sub_ms(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* datetimeError(): clears *t and marks it as an error. */
void engine__date_error(struct engine_date_time *t);

/* validJulianDay(): 0 <= jd_ms <= ENGINE_DATE_JD_MS_MAX. */
bool engine__date_jd_is_valid(int64_t jd_ms);

/* computeJD, computeYMD, computeHMS, and both of the last two. */
void engine__date_compute_jd(struct engine_date_time *t);
void engine__date_compute_ymd(struct engine_date_time *t);
void engine__date_compute_hms(struct engine_date_time *t);
void engine__date_compute_ymd_hms(struct engine_date_time *t);

/* clearYMD_HMS_TZ(): only jd_ms stays current. */
void engine__date_clear_ymd_hms_tz(struct engine_date_time *t);

/* parseHhMmSs(): "HH:MM[:SS[.F...]]" with an optional time zone, the text
 * ending at its first NUL. 0, or 1 when the text is not such a time. */
int engine__date_parse_hms(const char *text, struct engine_date_time *t);

/* The current time as jd_ms: the 'now' of SQLite's unix VFS
 * (unixCurrentTimeInt64: CLOCK_REALTIME in milliseconds). */
int64_t engine__date_now_jd_ms(struct engine_func_context *ctx);

/* parseModifier(): applies one modifier (text ending at its first NUL)
 * to *t; index is the modifier's position (1 for the first one after the
 * time value). 0 on success, 1 when the modifier does not apply (the
 * result is then NULL), or a negative code with ctx->errmsg set. */
int engine__date_apply_modifier(struct engine_func_context *ctx,
                                const char *text, int index,
                                struct engine_date_time *t);

/* isDate(): reads argv[0] as a time value (none: 'now') and applies the
 * modifiers argv[1..argc). Sets *is_null when the result is NULL, else
 * *t holds a valid time with jd_ms current. 0, or a negative code with
 * ctx->errmsg set. argv is borrowed for the call. */
int engine__date_from_args(struct engine_func_context *ctx, int argc,
                           const struct engine_value *argv,
                           struct engine_date_time *t, bool *is_null);

#endif /* SINEW_ENGINE_FUNC_DATE_H */
