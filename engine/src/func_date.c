/* SPDX-License-Identifier: MIT
 *
 * func_date.c: reading time values and converting between julian day
 * numbers and calendar dates, for the date and time functions
 * (func_date.h).
 *
 * The rules are SQLite 3.40.1's date.c, step for step, because results
 * must match it bit for bit: the accepted text forms are
 * "[-]YYYY-MM-DD", optionally followed by spaces or 'T' and a time;
 * a time alone "HH:MM[:SS[.F...]]"; either with a trailing "[+-]HH:MM" or
 * "Z" zone; "now"; and a number (text or not), which is a julian day when
 * it lies in 0 .. 5373484.5 and otherwise waits, as a raw number, for a
 * 'unixepoch' or 'auto' modifier. The calendar conversions are Meeus's
 * (Astronomical Algorithms, 2nd ed., p. 61 and p. 63) in date.c's integer
 * and floating-point arithmetic; their truncations are part of the result.
 */
#include "func_date.h"

#include <string.h>
#include <time.h>

#include "func_int.h"
#include "text_number.h"

/* sqlite3Isspace: ' ', '\t', '\n', '\v', '\f', '\r'. */
static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* One field of getDigits(): exactly width digits with a value in
 * [min, max], followed by separator (0: anything). On a match, *text moves
 * past the digits and the separator. 0 or 1 (no match). */
static int digits_read(const char **text, int width, int min, int max,
                       char separator, int *out)
{
    const char *p = *text;
    int value = 0;

    for (int i = 0; i < width; i++) {
        if (!is_digit(p[i])) {
            return 1;
        }
        value = value * 10 + (p[i] - '0');
    }
    p += width;
    if (value < min || value > max || (separator != 0 && *p != separator)) {
        return 1;
    }
    *out = value;
    *text = separator != 0 ? p + 1 : p;
    return 0;
}

/* parseTimezone(): an optional "[+-]HH:MM" or "Z", then only spaces. 0 on
 * success (a missing zone is one), 1 on anything else. */
static int zone_parse(const char *text, struct engine_date_time *t)
{
    int sign, hours, minutes;

    while (is_space(*text)) {
        text++;
    }
    t->tz_minutes = 0;
    if (*text == 'Z' || *text == 'z') {
        text++;
    } else if (*text == '-' || *text == '+') {
        sign = *text == '-' ? -1 : 1;
        text++;
        if (digits_read(&text, 2, 0, 14, ':', &hours) != 0 ||
            digits_read(&text, 2, 0, 59, 0, &minutes) != 0) {
            return 1;
        }
        t->tz_minutes = sign * (minutes + hours * 60);
    } else {
        return *text != '\0';
    }
    while (is_space(*text)) {
        text++;
    }
    t->tz_set = true;
    return *text != '\0';
}

/* The ".F..." of a time: any number of digits, as date.c sums them. */
static double fraction_parse(const char **text)
{
    const char *p = *text;
    double fraction = 0.0, scale = 1.0;

    if (p[0] != '.' || !is_digit(p[1])) {
        return 0.0;
    }
    p++;
    while (is_digit(*p)) {
        fraction = fraction * 10.0 + (*p - '0');
        scale *= 10.0;
        p++;
    }
    *text = p;
    return fraction / scale;
}

int engine__date_parse_hms(const char *text, struct engine_date_time *t)
{
    int hours, minutes, seconds = 0;
    double fraction = 0.0;

    ASSERT(text != NULL);
    if (digits_read(&text, 2, 0, 24, ':', &hours) != 0 ||
        digits_read(&text, 2, 0, 59, 0, &minutes) != 0) {
        return 1;
    }
    if (*text == ':') {
        text++;
        if (digits_read(&text, 2, 0, 59, 0, &seconds) != 0) {
            return 1;
        }
        fraction = fraction_parse(&text);
    }
    t->has_jd = false;
    t->raw_s = false;
    t->has_hms = true;
    t->hour = hours;
    t->minute = minutes;
    t->second = seconds + fraction;
    if (zone_parse(text, t) != 0) {
        return 1;
    }
    t->has_tz = t->tz_minutes != 0;
    return 0;
}

void engine__date_error(struct engine_date_time *t)
{
    memset(t, 0, sizeof(*t));
    t->is_error = true;
}

bool engine__date_jd_is_valid(int64_t jd_ms)
{
    return jd_ms >= 0 && jd_ms <= ENGINE_DATE_JD_MS_MAX;
}

/* computeJD(): Meeus p. 61, with the time of day and the zone applied. */
void engine__date_compute_jd(struct engine_date_time *t)
{
    int y = 2000, m = 1, d = 1, a, b, x1, x2;

    if (t->has_jd) {
        return;
    }
    if (t->has_ymd) {
        y = t->year;
        m = t->month;
        d = t->day;
    }
    if (y < -4713 || y > 9999 || t->raw_s) {
        engine__date_error(t);
        return;
    }
    if (m <= 2) {
        y--;
        m += 12;
    }
    a = y / 100;
    b = 2 - a + (a / 4);
    x1 = 36525 * (y + 4716) / 100;
    x2 = 306001 * (m + 1) / 10000;
    t->jd_ms = (int64_t)((x1 + x2 + d + b - 1524.5) * 86400000);
    t->has_jd = true;
    if (!t->has_hms) {
        return;
    }
    t->jd_ms += t->hour * 3600000 + t->minute * 60000 +
                (int64_t)(t->second * 1000 + 0.5);
    if (t->has_tz) {
        t->jd_ms -= t->tz_minutes * 60000;
        t->has_ymd = false;
        t->has_hms = false;
        t->has_tz = false;
    }
}

/* computeYMD(): Meeus p. 63. */
void engine__date_compute_ymd(struct engine_date_time *t)
{
    int z, a, b, c, d, e, x1;

    if (t->has_ymd) {
        return;
    }
    if (!t->has_jd) {
        t->year = 2000;
        t->month = 1;
        t->day = 1;
    } else if (!engine__date_jd_is_valid(t->jd_ms)) {
        engine__date_error(t);
        return;
    } else {
        z = (int)((t->jd_ms + 43200000) / 86400000);
        a = (int)((z - 1867216.25) / 36524.25);
        a = z + 1 + a - (a / 4);
        b = a + 1524;
        c = (int)((b - 122.1) / 365.25);
        d = (36525 * (c & 32767)) / 100;
        e = (int)((b - d) / 30.6001);
        x1 = (int)(30.6001 * e);
        t->day = b - d - x1;
        t->month = e < 14 ? e - 1 : e - 13;
        t->year = t->month > 2 ? c - 4716 : c - 4715;
    }
    t->has_ymd = true;
}

/* computeHMS(). */
void engine__date_compute_hms(struct engine_date_time *t)
{
    int day_ms, day_minutes;

    if (t->has_hms) {
        return;
    }
    engine__date_compute_jd(t);
    day_ms = (int)((t->jd_ms + 43200000) % 86400000);
    t->second = (day_ms % 60000) / 1000.0;
    day_minutes = day_ms / 60000;
    t->minute = day_minutes % 60;
    t->hour = day_minutes / 60;
    t->raw_s = false;
    t->has_hms = true;
}

void engine__date_compute_ymd_hms(struct engine_date_time *t)
{
    engine__date_compute_ymd(t);
    engine__date_compute_hms(t);
}

void engine__date_clear_ymd_hms_tz(struct engine_date_time *t)
{
    t->has_ymd = false;
    t->has_hms = false;
    t->has_tz = false;
}

/* parseYyyyMmDd(): "[-]YYYY-MM-DD", then spaces or 'T's, then an optional
 * time. 0, or 1 when text is not such a date. */
static int ymd_parse(const char *text, struct engine_date_time *t)
{
    int year, month, day;
    bool is_negative = text[0] == '-';

    if (is_negative) {
        text++;
    }
    if (digits_read(&text, 4, 0, 9999, '-', &year) != 0 ||
        digits_read(&text, 2, 1, 12, '-', &month) != 0 ||
        digits_read(&text, 2, 1, 31, 0, &day) != 0) {
        return 1;
    }
    while (is_space(*text) || *text == 'T') {
        text++;
    }
    if (engine__date_parse_hms(text, t) == 0) {
        /* the date has a time */
    } else if (*text == '\0') {
        t->has_hms = false;
    } else {
        return 1;
    }
    t->has_jd = false;
    t->has_ymd = true;
    t->year = is_negative ? -year : year;
    t->month = month;
    t->day = day;
    if (t->has_tz) {
        engine__date_compute_jd(t);
    }
    return 0;
}

/* setRawDateNumber(): a julian day if it is one, else a raw number. */
static void raw_number_set(struct engine_date_time *t, double r)
{
    t->second = r;
    t->raw_s = true;
    if (r >= 0.0 && r < 5373484.5) {
        t->jd_ms = (int64_t)(r * 86400000.0 + 0.5);
        t->has_jd = true;
    }
}

/* sqlite3StrICmp(a, "now") == 0: ASCII case folding, whole string. */
static bool is_now(const char *text)
{
    static const char now[] = "now";

    for (size_t i = 0; i < sizeof(now); i++) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (c != now[i]) {
            return false;
        }
    }
    return true;
}

int64_t engine__date_now_jd_ms(struct engine_func_context *ctx)
{
    struct timespec now;
    int64_t jd_ms;

    if (ctx->now_jd_ms != NULL && *ctx->now_jd_ms > 0) {
        return *ctx->now_jd_ms;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    jd_ms = ENGINE_DATE_UNIX_EPOCH_MS + (int64_t)now.tv_sec * 1000 +
            now.tv_nsec / 1000000;
    if (ctx->now_jd_ms != NULL) {
        *ctx->now_jd_ms = jd_ms;
    }
    return jd_ms;
}

/* parseDateOrTime(): 0, or 1 when text is no time value. */
static int time_value_parse(struct engine_func_context *ctx, const char *text,
                            struct engine_date_time *t)
{
    double r = 0.0;

    if (ymd_parse(text, t) == 0 || engine__date_parse_hms(text, t) == 0) {
        return 0;
    }
    if (is_now(text)) {
        t->jd_ms = engine__date_now_jd_ms(ctx);
        t->has_jd = true;
        return 0;
    }
    if (engine__text_number_atof((const uint8_t *)text, strlen(text), &r) > 0) {
        raw_number_set(t, r);
        return 0;
    }
    return 1;
}

/* The time value of isDate()'s first argument; *is_null when none. */
static int first_arg_read(struct engine_func_context *ctx,
                          const struct engine_value *v,
                          struct engine_date_time *t, bool *is_null)
{
    const char *text;
    int rc;

    if (v->type == ENGINE_INTEGER || v->type == ENGINE_FLOAT) {
        raw_number_set(t, engine__value_to_real(v));
        return 0;
    }
    rc = engine__func_cstr(ctx, v, &text);
    if (rc != 0) {
        return rc;
    }
    *is_null = text == NULL || time_value_parse(ctx, text, t) != 0;
    return 0;
}

int engine__date_from_args(struct engine_func_context *ctx, int argc,
                           const struct engine_value *argv,
                           struct engine_date_time *t, bool *is_null)
{
    const char *text;
    int rc;

    ASSERT(argc >= 0);
    ASSERT(argc == 0 || argv != NULL);
    memset(t, 0, sizeof(*t));
    *is_null = false;
    if (argc == 0) {
        t->jd_ms = engine__date_now_jd_ms(ctx);
        t->has_jd = true;
        return 0;
    }
    rc = first_arg_read(ctx, &argv[0], t, is_null);
    if (rc != 0 || *is_null) {
        return rc;
    }
    for (int i = 1; i < argc; i++) {
        rc = engine__func_cstr(ctx, &argv[i], &text);
        if (rc != 0) {
            return rc;
        }
        rc = text == NULL ? 1 : engine__date_apply_modifier(ctx, text, i, t);
        if (rc != 0) {
            *is_null = rc > 0;
            return rc < 0 ? rc : 0;
        }
    }
    engine__date_compute_jd(t);
    *is_null = t->is_error || !engine__date_jd_is_valid(t->jd_ms);
    return 0;
}
