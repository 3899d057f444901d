/* SPDX-License-Identifier: MIT
 *
 * encoding.c: stamps as bytes (big-endian, so bytes sort like stamps) and as
 * text (ISO 8601 UTC plus the counter, for logs, the shell and operators).
 *
 * Calendar arithmetic uses the proleptic Gregorian algorithms of Howard
 * Hinnant, "chrono-Compatible Low-Level Date Algorithms"
 * (days_from_civil / civil_from_days), restricted to dates from 1970 on,
 * so everything stays unsigned and no time zone or locale is consulted.
 */
#include "hlc.h"

#include <stdio.h>

#define MS_PER_SECOND 1000u
#define SECONDS_PER_DAY 86400u
#define DAYS_PER_ERA 146097u /* 400 Gregorian years */
#define DAYS_0000_03_01_TO_EPOCH 719468u
#define YEAR_MIN 1970u
#define YEAR_MAX 10889u /* the year of HLC_PHYSICAL_MS_MAX */

void hlc_encode(hlc_ts ts, uint8_t out[HLC_ENCODED_SIZE])
{
    ASSERT(out != NULL);
    common_put_u64be(out, ts);
}

hlc_ts hlc_decode(const uint8_t in[HLC_ENCODED_SIZE])
{
    ASSERT(in != NULL);
    return common_get_u64be(in);
}

struct civil {
    uint64_t year;
    unsigned month; /* 1-12 */
    unsigned day;   /* 1-31 */
};

static struct civil civil_from_days(uint64_t days_since_epoch)
{
    uint64_t z = days_since_epoch + DAYS_0000_03_01_TO_EPOCH;
    uint64_t era = z / DAYS_PER_ERA;
    unsigned doe = (unsigned)(z - era * DAYS_PER_ERA);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    struct civil date;

    date.day = doy - (153 * mp + 2) / 5 + 1;
    date.month = mp < 10 ? mp + 3 : mp - 9;
    date.year = yoe + era * 400 + (date.month <= 2 ? 1 : 0);
    return date;
}

static uint64_t days_from_civil(struct civil date)
{
    uint64_t year = date.year - (date.month <= 2 ? 1 : 0);
    uint64_t era = year / 400;
    unsigned yoe = (unsigned)(year - era * 400);
    unsigned mp = date.month > 2 ? date.month - 3 : date.month + 9;
    unsigned doy = (153 * mp + 2) / 5 + date.day - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

    return era * DAYS_PER_ERA + doe - DAYS_0000_03_01_TO_EPOCH;
}

size_t hlc_format(hlc_ts ts, char *out, size_t size)
{
    uint64_t ms = hlc_physical_ms(ts);
    uint64_t seconds = ms / MS_PER_SECOND;
    uint64_t second_of_day = seconds % SECONDS_PER_DAY;
    struct civil date = civil_from_days(seconds / SECONDS_PER_DAY);
    int length;

    ASSERT(out != NULL);
    ASSERT(size >= HLC_FORMAT_SIZE);
    length = snprintf(out, size, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ+%u",
                      (unsigned)date.year, date.month, date.day,
                      (unsigned)(second_of_day / 3600),
                      (unsigned)(second_of_day / 60 % 60),
                      (unsigned)(second_of_day % 60),
                      (unsigned)(ms % MS_PER_SECOND), hlc_counter(ts));
    ASSERT(length > 0 && (size_t)length < HLC_FORMAT_SIZE);
    return (size_t)length;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Counts the digits at p, stopping after limit. Never reads past a NUL. */
static unsigned count_digits(const char *p, unsigned limit)
{
    unsigned count = 0;

    while (count < limit && is_digit(p[count])) {
        count++;
    }
    return count;
}

/* Reads exactly count digits at *p into *value and moves *p past them. */
static int read_digits(const char **p, unsigned count, unsigned *value)
{
    unsigned result = 0;

    for (unsigned i = 0; i < count; i++) {
        char c = (*p)[i];

        if (!is_digit(c)) {
            return HLC_EPARSE;
        }
        result = result * 10 + (unsigned)(c - '0');
    }
    *p += count;
    *value = result;
    return 0;
}

/* Reads one digit field of count digits followed by separator. */
static int read_field(const char **p, unsigned count, char separator,
                      unsigned *value)
{
    int rc = read_digits(p, count, value);

    if (rc != 0 || **p != separator) {
        return HLC_EPARSE;
    }
    (*p)++;
    return 0;
}

static unsigned days_in_month(uint64_t year, unsigned month)
{
    static const unsigned days[] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return month == 2 && leap ? 29 : days[month - 1];
}

/* The year: four digits, or five for years from 10000 on. */
static int read_year(const char **p, unsigned *year)
{
    unsigned count = count_digits(*p, 6);

    if ((count != 4 && count != 5) || (count == 5 && (*p)[0] == '0')) {
        return HLC_EPARSE;
    }
    return read_field(p, count, '-', year);
}

/* "+counter", one to five digits, or nothing. */
static int read_counter(const char *p, unsigned *counter)
{
    unsigned count = 0;

    *counter = 0;
    if (*p == '\0') {
        return 0;
    }
    if (*p++ != '+') {
        return HLC_EPARSE;
    }
    count = count_digits(p, 6);
    if (count == 0 || count > 5 || p[count] != '\0' ||
        read_digits(&p, count, counter) != 0 || *counter > HLC_COUNTER_MAX) {
        return HLC_EPARSE;
    }
    return 0;
}

int hlc_parse(const char *text, hlc_ts *out)
{
    unsigned year, month, day, hour, minute, second, ms, counter;
    const char *p = text;
    uint64_t seconds;
    uint64_t total_ms;

    ASSERT(text != NULL);
    ASSERT(out != NULL);
    if (read_year(&p, &year) != 0 || read_field(&p, 2, '-', &month) != 0 ||
        read_field(&p, 2, 'T', &day) != 0 ||
        read_field(&p, 2, ':', &hour) != 0 ||
        read_field(&p, 2, ':', &minute) != 0 ||
        read_field(&p, 2, '.', &second) != 0 ||
        read_field(&p, 3, 'Z', &ms) != 0 || read_counter(p, &counter) != 0) {
        return HLC_EPARSE;
    }
    if (year < YEAR_MIN || year > YEAR_MAX || month < 1 || month > 12 ||
        day < 1 || day > days_in_month(year, month) || hour > 23 ||
        minute > 59 || second > 59) {
        return HLC_EPARSE;
    }
    seconds =
        days_from_civil((struct civil){year, month, day}) * SECONDS_PER_DAY +
        hour * 3600u + minute * 60u + second;
    total_ms = seconds * MS_PER_SECOND + ms;
    if (total_ms > HLC_PHYSICAL_MS_MAX) {
        return HLC_EPARSE;
    }
    *out = hlc_pack(total_ms, (uint16_t)counter);
    return 0;
}
