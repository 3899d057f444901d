/* SPDX-License-Identifier: MIT
 *
 * func_date_modifier.c: the modifiers of the date and time functions
 * (lang_datefunc.html, "Modifiers"), as SQLite 3.40.1's parseModifier()
 * applies them: "NNN days|hours|minutes|seconds|months|years" (singular
 * too), "[+-]HH:MM[:SS[.F...]]", "start of day|month|year", "weekday N",
 * "unixepoch", "julianday", "auto", "localtime" and "utc". 3.40 has no
 * "subsec" and no "[+-]YYYY-MM-DD" shift; they make the result NULL.
 *
 * Months and years move the calendar date and leave an overflowing day
 * to the julian day arithmetic ("2001-01-31" + 1 month is "2001-03-03"),
 * as date.c does. Local time comes from localtime_r() in the process's
 * time zone (see localtime_apply for dates outside 1970..2038).
 */
#include <string.h>
#include <time.h>

#include "func_date.h"
#include "func_int.h"
#include "text_number.h"

/* aXformType[]: a unit's name, the largest |NNN| it accepts and its size
 * in seconds. SQLite declares both numbers float; their float values are
 * part of the arithmetic. */
struct unit {
    const char *name;
    size_t name_size;
    float limit;
    float seconds;
};

static const struct unit units[] = {
    {"second", 6, 4.6427e+14f, 1.0f},    {"minute", 6, 7.7379e+12f, 60.0f},
    {"hour", 4, 1.2897e+11f, 3600.0f},   {"day", 3, 5373485.0f, 86400.0f},
    {"month", 5, 176546.0f, 2592000.0f}, {"year", 4, 14713.0f, 31536000.0f},
};

enum { UNIT_MONTH = 4, UNIT_YEAR = 5 };

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* sqlite3_strnicmp(a, b, n) == 0 over ASCII: both strings end at NUL. */
static bool prefix_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lower(a[i]) != lower(b[i])) {
            return false;
        }
        if (a[i] == '\0') {
            return true;
        }
    }
    return true;
}

static bool equal(const char *a, const char *b)
{
    return prefix_equal(a, b, strlen(b) + 1);
}

static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* sqlite3AtoF(text, &r, size) > 0: the whole text is a number. */
static bool number_read(const char *text, size_t size, double *r)
{
    *r = 0.0;
    return engine__text_number_atof((const uint8_t *)text, size, r) > 0;
}

/* 1970-01-01 and 2038-01-18 as jd_ms: localtime_r() is trusted between. */
#define LOCALTIME_JD_MS_MIN (INT64_C(2108667600) * 100000)
#define LOCALTIME_JD_MS_MAX (INT64_C(2130141456) * 100000)

/* toLocaltime(): takes *t as UTC and makes it the local time of the
 * process's zone, keeping the milliseconds. Outside 1970..2038 the year is
 * mapped to one of 2000..2003 with the same leap-year position and mapped
 * back afterwards (lang_datefunc.html: "SQLite attempts to map the year
 * into an equivalent year"). 0 or a negative code. */
static int localtime_apply(struct engine_func_context *ctx,
                           struct engine_date_time *t)
{
    struct tm local;
    time_t seconds;
    int year_shift = 0;

    memset(&local, 0, sizeof(local));
    engine__date_compute_jd(t);
    if (t->jd_ms < LOCALTIME_JD_MS_MIN || t->jd_ms > LOCALTIME_JD_MS_MAX) {
        struct engine_date_time x = *t;
        engine__date_compute_ymd_hms(&x);
        year_shift = (2000 + x.year % 4) - x.year;
        x.year += year_shift;
        x.has_jd = false;
        engine__date_compute_jd(&x);
        seconds = (time_t)(x.jd_ms / 1000 - ENGINE_DATE_UNIX_EPOCH_MS / 1000);
    } else {
        seconds = (time_t)(t->jd_ms / 1000 - ENGINE_DATE_UNIX_EPOCH_MS / 1000);
    }
    if (localtime_r(&seconds, &local) == NULL) {
        return engine__func_error(ctx, ENGINE_ESQL, "local time unavailable");
    }
    t->year = local.tm_year + 1900 - year_shift;
    t->month = local.tm_mon + 1;
    t->day = local.tm_mday;
    t->hour = local.tm_hour;
    t->minute = local.tm_min;
    t->second = local.tm_sec + (double)(t->jd_ms % 1000) * 0.001;
    t->has_ymd = true;
    t->has_hms = true;
    t->has_jd = false;
    t->raw_s = false;
    t->has_tz = false;
    t->is_error = false;
    return 0;
}

/* 'utc': a no-op once a zone was given; else the UTC time whose local
 * time is *t, found by up to four guesses (each corrects the previous by
 * its error), as date.c does.
 *
 * Known divergence: when *t is no valid julian day (a raw number no
 * modifier has read yet, a year out of range) or lies within a day of
 * either end of the range, SQLite 3.40.1 returns times here that we could
 * not derive from its inputs (its guesses leave the valid range, where
 * its own arithmetic is undefined); ours then end NULL. test_func_date.c
 * excludes exactly that class from its comparison. */
static int utc_apply(struct engine_func_context *ctx,
                     struct engine_date_time *t)
{
    int64_t original_ms, guess_ms, error_ms = 0;
    int attempts = 0, rc;

    if (t->tz_set) {
        return 0;
    }
    engine__date_compute_jd(t);
    original_ms = guess_ms = t->jd_ms;
    do {
        struct engine_date_time local;
        memset(&local, 0, sizeof(local));
        guess_ms = engine__date_sub_ms(guess_ms, error_ms);
        local.jd_ms = guess_ms;
        local.has_jd = true;
        rc = localtime_apply(ctx, &local);
        if (rc != 0) {
            return rc;
        }
        engine__date_compute_jd(&local);
        error_ms = engine__date_sub_ms(local.jd_ms, original_ms);
    } while (error_ms != 0 && attempts++ < 3);
    memset(t, 0, sizeof(*t));
    t->jd_ms = guess_ms;
    t->has_jd = true;
    t->tz_set = true;
    return 0;
}

/* The raw number read as seconds since 1970, if in range. */
static int unix_seconds_apply(struct engine_date_time *t)
{
    double r = t->second * 1000.0 + (double)ENGINE_DATE_UNIX_EPOCH_MS;

    if (!(r >= 0.0 && r < 464269060800000.0)) {
        return 1;
    }
    engine__date_clear_ymd_hms_tz(t);
    t->jd_ms = (int64_t)(r + 0.5);
    t->has_jd = true;
    t->raw_s = false;
    return 0;
}

/* 'auto': a raw number is a julian day if in 0..5373484.5 (already
 * read so), else seconds since 1970 if that is in range. */
static int auto_apply(struct engine_date_time *t)
{
    if (!t->raw_s || t->has_jd) {
        t->raw_s = false;
        return 0;
    }
    if (t->second >= -210866760000.0 && t->second <= 253402300799.0) {
        return unix_seconds_apply(t);
    }
    return 1;
}

/* 'weekday N': forward to the next day (today included) whose day of the
 * week is N, 0 being Sunday. */
static int weekday_apply(const char *arg, struct engine_date_time *t)
{
    double r;
    int64_t wday;
    int n;

    if (!number_read(arg, strlen(arg), &r) || !(r >= 0.0 && r < 7.0)) {
        return 1;
    }
    n = (int)r;
    if (n != r) {
        return 1;
    }
    engine__date_compute_ymd_hms(t);
    t->has_tz = false;
    t->has_jd = false;
    engine__date_compute_jd(t);
    wday = ((t->jd_ms + 129600000) / 86400000) % 7;
    if (wday > n) {
        wday -= 7;
    }
    t->jd_ms += (n - wday) * 86400000;
    engine__date_clear_ymd_hms_tz(t);
    return 0;
}

/* 'start of day|month|year' (arg: the text after "start of "). */
static int start_of_apply(const char *arg, struct engine_date_time *t)
{
    if (!t->has_jd && !t->has_ymd && !t->has_hms) {
        return 1;
    }
    engine__date_compute_ymd(t);
    t->has_hms = true;
    t->hour = 0;
    t->minute = 0;
    t->second = 0.0;
    t->raw_s = false;
    t->has_tz = false;
    t->has_jd = false;
    if (equal(arg, "month")) {
        t->day = 1;
        return 0;
    }
    if (equal(arg, "year")) {
        t->month = 1;
        t->day = 1;
        return 0;
    }
    return equal(arg, "day") ? 0 : 1;
}

/* "[+-]HH:MM[:SS[.F...]]": shifts by that time of day. */
static int clock_shift_apply(const char *text, struct engine_date_time *t)
{
    struct engine_date_time shift;
    int64_t days;

    memset(&shift, 0, sizeof(shift));
    if (engine__date_parse_hms(
            text[0] >= '0' && text[0] <= '9' ? text : text + 1, &shift) != 0) {
        return 1;
    }
    engine__date_compute_jd(&shift);
    shift.jd_ms -= 43200000;
    days = shift.jd_ms / 86400000;
    shift.jd_ms -= days * 86400000;
    if (text[0] == '-') {
        shift.jd_ms = -shift.jd_ms;
    }
    engine__date_compute_jd(t);
    engine__date_clear_ymd_hms_tz(t);
    t->jd_ms = engine__date_add_ms(t->jd_ms, shift.jd_ms);
    return 0;
}

/* Months and years move the calendar fields; what is left of r (its
 * fraction) is added as time below. */
static double calendar_shift(int unit, double r, struct engine_date_time *t)
{
    int whole = (int)r;

    engine__date_compute_ymd_hms(t);
    if (unit == UNIT_MONTH) {
        int years;
        t->month += whole;
        years = t->month > 0 ? (t->month - 1) / 12 : (t->month - 12) / 12;
        t->year += years;
        t->month -= years * 12;
    } else {
        t->year += whole;
    }
    t->has_jd = false;
    return r - whole;
}

/* "NNN unit[s]": unit is the text after the number and its spaces. */
static int unit_shift_apply(double r, const char *unit_text,
                            struct engine_date_time *t)
{
    size_t size = strlen(unit_text);
    double rounder = r < 0 ? -0.5 : 0.5;

    if (size > 10 || size < 3) {
        return 1;
    }
    if (lower(unit_text[size - 1]) == 's') {
        size--;
    }
    engine__date_compute_jd(t);
    for (int i = 0; i < (int)(sizeof(units) / sizeof(units[0])); i++) {
        if (units[i].name_size != size ||
            !prefix_equal(units[i].name, unit_text, size) ||
            !(r > -units[i].limit && r < units[i].limit)) {
            continue;
        }
        if (i == UNIT_MONTH || i == UNIT_YEAR) {
            r = calendar_shift(i, r, t);
        }
        engine__date_compute_jd(t);
        t->jd_ms = engine__date_add_ms(
            t->jd_ms, (int64_t)(r * 1000.0 * units[i].seconds + rounder));
        engine__date_clear_ymd_hms_tz(t);
        return 0;
    }
    engine__date_clear_ymd_hms_tz(t);
    return 1;
}

/* A modifier that starts with a sign or a digit. */
static int number_apply(const char *text, struct engine_date_time *t)
{
    size_t n = 1;
    double r;

    while (text[n] != '\0' && text[n] != ':' && !is_space(text[n])) {
        n++;
    }
    if (!number_read(text, n, &r)) {
        return 1;
    }
    if (text[n] == ':') {
        return clock_shift_apply(text, t);
    }
    text += n;
    while (is_space(*text)) {
        text++;
    }
    return unit_shift_apply(r, text, t);
}

/* 'julianday': the raw number is a julian day (it must be one). */
static int julianday_apply(struct engine_date_time *t)
{
    if (!(t->has_jd && t->raw_s)) {
        return 1;
    }
    t->raw_s = false;
    return 0;
}

/* 'auto', 'julianday' and 'unixepoch' say how to read the raw number, so
 * only the first modifier may be one of them (index 1). */
static int word_apply(struct engine_func_context *ctx, const char *text,
                      int index, struct engine_date_time *t)
{
    if (equal(text, "auto")) {
        return index > 1 ? 1 : auto_apply(t);
    }
    if (equal(text, "julianday")) {
        return index > 1 ? 1 : julianday_apply(t);
    }
    if (equal(text, "unixepoch") && t->raw_s) {
        return index > 1 ? 1 : unix_seconds_apply(t);
    }
    if (equal(text, "utc")) {
        return utc_apply(ctx, t);
    }
    if (equal(text, "localtime")) {
        return localtime_apply(ctx, t);
    }
    return 1;
}

int engine__date_apply_modifier(struct engine_func_context *ctx,
                                const char *text, int index,
                                struct engine_date_time *t)
{
    ASSERT(index >= 1);
    if (prefix_equal(text, "weekday ", 8)) {
        return weekday_apply(text + 8, t);
    }
    if (prefix_equal(text, "start of ", 9)) {
        return start_of_apply(text + 9, t);
    }
    if (text[0] == '+' || text[0] == '-' ||
        (text[0] >= '0' && text[0] <= '9')) {
        return number_apply(text, t);
    }
    return word_apply(ctx, text, index, t);
}
