/* SPDX-License-Identifier: MIT
 *
 * func_date_format.c: the SQL date and time functions of SQLite 3.40.1
 * (date.c; lang_datefunc.html): date(), time(), datetime(), julianday(),
 * unixepoch(), strftime(), and current_date, current_time,
 * current_timestamp (the parser turns the keywords into calls of these
 * names with no arguments).
 *
 * Each reads its arguments with engine__date_from_args() (the time value,
 * then the modifiers) and returns NULL when that fails. strftime() knows
 * 3.40's conversions only: %d %f %H %j %J %m %M %s %S %w %W %Y %%; any
 * other (%e, %F, %T, ... came in 3.44) and a '%' that ends the format make
 * the result NULL. Years before 0 print with a '-' and four digits in
 * date()/datetime() and as printf("%04d") in strftime's %Y.
 */
#include <stdio.h>
#include <string.h>

#include "func_date.h"
#include "func_int.h"

/* The most bytes one conversion of strftime() writes ("%J": 17 digits,
 * a point, a sign and an exponent at most). */
#define STRFTIME_CONVERSION_SIZE_MAX 32

/* Writes "YYYY-MM-DD" (with a leading '-' for negative years) at out;
 * returns the bytes written (10 or 11). */
static size_t date_write(const struct engine_date_time *t, char *out)
{
    int year = t->year < 0 ? -t->year : t->year;
    size_t n = 0;

    if (t->year < 0) {
        out[n++] = '-';
    }
    out[n++] = (char)('0' + (year / 1000) % 10);
    out[n++] = (char)('0' + (year / 100) % 10);
    out[n++] = (char)('0' + (year / 10) % 10);
    out[n++] = (char)('0' + year % 10);
    out[n++] = '-';
    out[n++] = (char)('0' + t->month / 10);
    out[n++] = (char)('0' + t->month % 10);
    out[n++] = '-';
    out[n++] = (char)('0' + t->day / 10);
    out[n++] = (char)('0' + t->day % 10);
    return n;
}

/* Writes "HH:MM:SS" (seconds truncated) at out; returns 8. */
static size_t time_write(const struct engine_date_time *t, char *out)
{
    int seconds = (int)t->second;

    out[0] = (char)('0' + (t->hour / 10) % 10);
    out[1] = (char)('0' + t->hour % 10);
    out[2] = ':';
    out[3] = (char)('0' + (t->minute / 10) % 10);
    out[4] = (char)('0' + t->minute % 10);
    out[5] = ':';
    out[6] = (char)('0' + (seconds / 10) % 10);
    out[7] = (char)('0' + seconds % 10);
    return 8;
}

/* Copies size bytes of text into ctx->arena as the TEXT result. */
static int text_result(struct engine_func_context *ctx, const char *text,
                       size_t size, struct engine_value *out)
{
    void *copy = engine__arena_memdup(ctx->arena, text, size);

    if (copy == NULL) {
        return engine__func_error_nomem(ctx);
    }
    *out = engine__value_text(copy, size);
    return 0;
}

/* Reads the arguments; *is_null (and a NULL result) when they are no
 * valid time. */
static int args_read(struct engine_func_context *ctx, int argc,
                     const struct engine_value *argv,
                     struct engine_date_time *t, bool *is_null,
                     struct engine_value *out)
{
    *out = engine__value_null();
    return engine__date_from_args(ctx, argc, argv, t, is_null);
}

ENGINE__FUNC_SCALAR(date)
{
    struct engine_date_time t;
    char text[16];
    bool is_null;
    int rc = args_read(ctx, argc, argv, &t, &is_null, out);

    if (rc != 0 || is_null) {
        return rc;
    }
    engine__date_compute_ymd(&t);
    return text_result(ctx, text, date_write(&t, text), out);
}

ENGINE__FUNC_SCALAR(time)
{
    struct engine_date_time t;
    char text[16];
    bool is_null;
    int rc = args_read(ctx, argc, argv, &t, &is_null, out);

    if (rc != 0 || is_null) {
        return rc;
    }
    engine__date_compute_hms(&t);
    return text_result(ctx, text, time_write(&t, text), out);
}

ENGINE__FUNC_SCALAR(datetime)
{
    struct engine_date_time t;
    char text[32];
    size_t n;
    bool is_null;
    int rc = args_read(ctx, argc, argv, &t, &is_null, out);

    if (rc != 0 || is_null) {
        return rc;
    }
    engine__date_compute_ymd_hms(&t);
    n = date_write(&t, text);
    text[n++] = ' ';
    n += time_write(&t, text + n);
    return text_result(ctx, text, n, out);
}

ENGINE__FUNC_SCALAR(julianday)
{
    struct engine_date_time t;
    bool is_null;
    int rc = args_read(ctx, argc, argv, &t, &is_null, out);

    if (rc != 0 || is_null) {
        return rc;
    }
    *out = engine__value_real((double)t.jd_ms / 86400000.0);
    return 0;
}

/* Seconds since 1970 of a valid time, truncated as date.c does. */
static int64_t unix_seconds(const struct engine_date_time *t)
{
    return t->jd_ms / 1000 - ENGINE_DATE_UNIX_EPOCH_MS / 1000;
}

ENGINE__FUNC_SCALAR(unixepoch)
{
    struct engine_date_time t;
    bool is_null;
    int rc = args_read(ctx, argc, argv, &t, &is_null, out);

    if (rc != 0 || is_null) {
        return rc;
    }
    *out = engine__value_int(unix_seconds(&t));
    return 0;
}

ENGINE__FUNC_SCALAR(current_date)
{
    ASSERT(argc == 0);
    return engine__func_date(ctx, 0, argv, out);
}

ENGINE__FUNC_SCALAR(current_time)
{
    ASSERT(argc == 0);
    return engine__func_time(ctx, 0, argv, out);
}

ENGINE__FUNC_SCALAR(current_timestamp)
{
    ASSERT(argc == 0);
    return engine__func_datetime(ctx, 0, argv, out);
}

/* One SQLite printf conversion of one number (format "%06.3f", "%.16g"),
 * written at out; returns the bytes written or a negative code. */
static int printf_write(struct engine_func_context *ctx, const char *format,
                        double value, char *out)
{
    struct engine_value arg = engine__value_real(value), text;
    int rc = engine__func_format(ctx, (const uint8_t *)format, strlen(format),
                                 1, &arg, &text);

    if (rc != 0) {
        return rc;
    }
    ASSERT(text.type == ENGINE_TEXT);
    ASSERT(text.u.s.size <= STRFTIME_CONVERSION_SIZE_MAX);
    memcpy(out, text.u.s.bytes, text.u.s.size);
    return (int)text.u.s.size;
}

/* %j (day of the year, 1-based) or %W (week of the year, weeks starting
 * on Monday, the days before the first Monday in week 00). */
static int year_day_write(const struct engine_date_time *t, char conversion,
                          char *out)
{
    struct engine_date_time first = *t;
    int days, weekday;

    first.has_jd = false;
    first.month = 1;
    first.day = 1;
    engine__date_compute_jd(&first);
    days = (int)((t->jd_ms - first.jd_ms + 43200000) / 86400000);
    if (conversion == 'W') {
        weekday = (int)(((t->jd_ms + 43200000) / 86400000) % 7);
        return snprintf(out, STRFTIME_CONVERSION_SIZE_MAX, "%02d",
                        (days + 7 - weekday) / 7);
    }
    return snprintf(out, STRFTIME_CONVERSION_SIZE_MAX, "%03d", days + 1);
}

/* Writes one conversion at out; returns the bytes written or a negative
 * code. */
static int conversion_write(struct engine_func_context *ctx,
                            const struct engine_date_time *t, char conversion,
                            char *out)
{
    const size_t size = STRFTIME_CONVERSION_SIZE_MAX;

    switch (conversion) {
    case 'd':
        return snprintf(out, size, "%02d", t->day);
    case 'f':
        return printf_write(ctx, "%06.3f",
                            t->second > 59.999 ? 59.999 : t->second, out);
    case 'H':
        return snprintf(out, size, "%02d", t->hour);
    case 'j':
    case 'W':
        return year_day_write(t, conversion, out);
    case 'J':
        return printf_write(ctx, "%.16g", (double)t->jd_ms / 86400000.0, out);
    case 'm':
        return snprintf(out, size, "%02d", t->month);
    case 'M':
        return snprintf(out, size, "%02d", t->minute);
    case 's':
        return snprintf(out, size, "%lld", (long long)unix_seconds(t));
    case 'S':
        return snprintf(out, size, "%02d", (int)t->second);
    case 'w':
        out[0] = (char)('0' + (int)(((t->jd_ms + 129600000) / 86400000) % 7));
        return 1;
    case 'Y':
        return snprintf(out, size, "%04d", t->year);
    default:
        ASSERT(conversion == '%');
        out[0] = '%';
        return 1;
    }
}

/* 3.40's conversions; any other makes strftime() NULL. */
static bool conversion_is_known(char conversion)
{
    return conversion != '\0' && strchr("dfHjWJmMsSwY%", conversion) != NULL;
}

/* The text of strftime(format, time): written into out, which has room
 * for every conversion at its largest. *size gets the bytes written, and
 * *is_null is set when the format has an unknown conversion. */
static int strftime_write(struct engine_func_context *ctx, const char *format,
                          const struct engine_date_time *t, char *out,
                          size_t *size, bool *is_null)
{
    size_t n = 0;

    *is_null = false;
    for (size_t i = 0; format[i] != '\0'; i++) {
        int written;
        if (format[i] != '%') {
            out[n++] = format[i];
            continue;
        }
        i++;
        if (!conversion_is_known(format[i])) {
            *is_null = true;
            return 0;
        }
        written = conversion_write(ctx, t, format[i], out + n);
        if (written < 0) {
            return written;
        }
        n += (size_t)written;
    }
    *size = n;
    return 0;
}

/* The format as a NUL-terminated string in ctx->arena, and room for the
 * result (*room, in ctx->arena). *format NULL for a NULL format. */
static int strftime_prepare(struct engine_func_context *ctx,
                            const struct engine_value *v, const char **format,
                            char **room)
{
    const uint8_t *bytes;
    size_t size, percents = 0, room_size;
    bool is_null;
    char *copy;
    int rc = engine__func_text(ctx, v, &bytes, &size, &is_null);

    *format = NULL;
    if (rc != 0 || is_null) {
        return rc;
    }
    size = engine__func_cstr_size(bytes, size);
    for (size_t i = 0; i < size; i++) {
        percents += bytes[i] == '%';
    }
    room_size = size + percents * STRFTIME_CONVERSION_SIZE_MAX + 1;
    copy = engine__arena_alloc(ctx->arena, size + 1);
    *room = engine__arena_alloc(ctx->arena, room_size);
    if (copy == NULL || *room == NULL) {
        return engine__func_error_nomem(ctx);
    }
    if (size > 0) {
        memcpy(copy, bytes, size);
    }
    copy[size] = '\0';
    *format = copy;
    return 0;
}

ENGINE__FUNC_SCALAR(strftime)
{
    struct engine_date_time t;
    const char *format = NULL;
    char *room = NULL;
    size_t size = 0;
    bool is_null;
    int rc;

    *out = engine__value_null();
    if (argc == 0) {
        return 0;
    }
    rc = strftime_prepare(ctx, &argv[0], &format, &room);
    if (rc != 0 || format == NULL) {
        return rc;
    }
    rc = engine__date_from_args(ctx, argc - 1, argv + 1, &t, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    engine__date_compute_jd(&t);
    engine__date_compute_ymd_hms(&t);
    rc = strftime_write(ctx, format, &t, room, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    if (size > ENGINE_MAX_LENGTH) {
        return engine__func_error_toobig(ctx);
    }
    *out = engine__value_text(room, size);
    return 0;
}
