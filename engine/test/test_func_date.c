/* SPDX-License-Identifier: MIT
 *
 * test_func_date.c: date(), time(), datetime(), julianday(), unixepoch()
 * and strftime() against libsqlite3 3.40.
 *
 * Method: a seeded generator writes time values (dates with and without
 * times, 'T' separators, fractions of a second, time zones, negative and
 * out-of-range years and fields, julian day numbers and unix times as
 * numbers and as text, corrupted strings) and zero to three modifiers
 * (NNN units, HH:MM shifts, start of, weekday, unixepoch, julianday, auto,
 * localtime, utc, 3.44-only ones, huge and malformed ones) and, for
 * strftime, formats of known and unknown conversions. Each tuple is bound
 * to "SELECT f(?1, ...)" in SQLite and passed to our function through the
 * registry; value and type must agree. The random run repeats in four
 * time zones (set in this process, so libsqlite3's localtime_r() sees the
 * same one): UTC, New York, Kolkata (+05:30) and Lord Howe (30-minute
 * DST). Hand-written cases and 'now' are in test_func_date_fixed.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "func_oracle.h"

#define DATE_ROUNDS 2500
#define DATE_ARGS_MAX 5
#define DATE_TEXT_SIZE 96

struct date_gen {
    struct common_test_rng rng;
    char text[DATE_ARGS_MAX][DATE_TEXT_SIZE];
};

static int pick(struct date_gen *g, int low, int high)
{
    return low +
           (int)common_test_rng_below(&g->rng, (uint64_t)(high - low + 1));
}

static bool chance(struct date_gen *g, int percent)
{
    return pick(g, 0, 99) < percent;
}

/* A field of width digits: mostly in [low, high], sometimes just past. */
static int field(struct date_gen *g, int low, int high)
{
    return chance(g, 8) ? pick(g, low > 0 ? low - 1 : 0, high + 2)
                        : pick(g, low, high);
}

static int year_pick(struct date_gen *g)
{
    static const int edges[] = {0,    1,    1582, 1899, 1900, 1969, 1970,
                                1971, 2000, 2037, 2038, 2100, 9999, 4713};

    if (chance(g, 30)) {
        return edges[pick(g, 0, (int)(sizeof(edges) / sizeof(edges[0])) - 1)];
    }
    return chance(g, 60) ? pick(g, 1900, 2100) : pick(g, 0, 9999);
}

/* "HH:MM[:SS[.F...]]" */
static size_t clock_write(struct date_gen *g, char *out, size_t size)
{
    int n = snprintf(out, size, "%02d:%02d", field(g, 0, 23), field(g, 0, 59));

    if (chance(g, 70)) {
        n += snprintf(out + n, size - (size_t)n, ":%02d", field(g, 0, 59));
        if (chance(g, 50)) {
            int digits = pick(g, 1, 7);
            out[n++] = '.';
            while (digits-- > 0) {
                out[n++] = (char)('0' + pick(g, 0, 9));
            }
            out[n] = '\0';
        }
    }
    return (size_t)n;
}

static size_t zone_write(struct date_gen *g, char *out, size_t size)
{
    static const char *const spaces[] = {"", "", " ", "  "};
    const char *before = spaces[pick(g, 0, 3)], *after = spaces[pick(g, 0, 3)];

    switch (pick(g, 0, 5)) {
    case 0:
        return (size_t)snprintf(out, size, "%sZ%s", before, after);
    case 1:
        return (size_t)snprintf(out, size, "%sz", before);
    case 2:
        return (size_t)snprintf(out, size, "%s+%02d:%02d%s", before,
                                field(g, 0, 14), field(g, 0, 59), after);
    case 3:
        return (size_t)snprintf(out, size, "%s-%02d:%02d%s", before,
                                field(g, 0, 14), field(g, 0, 59), after);
    case 4:
        return (size_t)snprintf(out, size, "%s+%02d%02d", before,
                                pick(g, 0, 14), pick(g, 0, 59));
    default:
        return (size_t)snprintf(out, size, "%s", after);
    }
}

/* A date with an optional time and zone, or a time alone. */
static void date_text_write(struct date_gen *g, char *out, size_t size)
{
    static const char *const separators[] = {" ", "T", "  ", "", "TT", "\t"};
    size_t n = 0;

    if (!chance(g, 15)) {
        int year = year_pick(g);
        n = (size_t)snprintf(out, size, "%s%04d-%02d-%02d",
                             chance(g, 5) ? "-" : "", year, field(g, 1, 12),
                             field(g, 1, 28 + pick(g, 0, 3)));
        if (chance(g, 30)) {
            return;
        }
        n += (size_t)snprintf(out + n, size - n, "%s",
                              separators[pick(g, 0, 5)]);
    }
    n += clock_write(g, out + n, size - n);
    if (chance(g, 35)) {
        zone_write(g, out + n, size - n);
    }
}

/* Replaces one character with a likely troublemaker. */
static void corrupt(struct date_gen *g, char *text)
{
    static const char bytes[] = "0123456789-:. TZx+e";
    size_t size = strlen(text);

    if (size > 0) {
        text[pick(g, 0, (int)size - 1)] = bytes[pick(g, 0, sizeof(bytes) - 2)];
    }
}

static const char *const number_texts[] = {
    "2451545",   "2451545.5",   " 2451545.25 ", "0",          "-1",
    "5373484.5", "5373484.49",  "1e9",          "1700000000", "abc",
    "",          "12",          "2e6",          "-0.0",       "1.5e6 ",
    "0x10",      "253402300799"};

/* A random number (julian day, unix time, out of range) as a value. */
static struct engine_value number_value(struct date_gen *g)
{
    static const double edges[] = {0.0,
                                   -0.0,
                                   5373484.4999999,
                                   5373484.5,
                                   -210866760000.0,
                                   -210866760000.5,
                                   253402300799.0,
                                   253402300800.0,
                                   1e18,
                                   -1e18,
                                   2440587.5,
                                   86400.5};

    switch (pick(g, 0, 4)) {
    case 0:
        return engine__value_int(pick(g, 0, 5373484));
    case 1:
        return engine__value_int((int64_t)pick(g, -1000000, 2000000) * 1000 +
                                 pick(g, 0, 999));
    case 2:
        return engine__value_real(pick(g, 0, 5373484) +
                                  pick(g, 0, 999999) / 1e6);
    case 3:
        return engine__value_real(pick(g, -2000000, 2000000) * 1000.0 +
                                  pick(g, 0, 999) / 1e3);
    default:
        return engine__value_real(
            edges[pick(g, 0, (int)(sizeof(edges) / sizeof(edges[0])) - 1)]);
    }
}

/* The first argument of a date function. */
static struct engine_value time_value(struct date_gen *g, char *text)
{
    int kind = pick(g, 0, 99);

    if (kind < 3) {
        return engine__value_null();
    }
    if (kind < 20) {
        return number_value(g);
    }
    if (kind < 27) {
        const char *t = number_texts[pick(
            g, 0, (int)(sizeof(number_texts) / sizeof(number_texts[0])) - 1)];
        snprintf(text, DATE_TEXT_SIZE, "%s", t);
    } else {
        date_text_write(g, text, DATE_TEXT_SIZE);
        if (chance(g, 6)) {
            corrupt(g, text);
        }
    }
    if (chance(g, 2)) {
        return engine__value_blob(text, strlen(text));
    }
    return engine__value_text(text, strlen(text));
}

static const char *const unit_names[] = {
    "day",    "days",    "hour",  "hours",     "minute", "minutes",
    "second", "seconds", "month", "months",    "year",   "years",
    "DAYS",   "Month",   "secs",  "fortnight", "d"};

static const char *const word_modifiers[] = {"unixepoch",
                                             "julianday",
                                             "auto",
                                             "localtime",
                                             "utc",
                                             "UTC",
                                             "Unixepoch",
                                             "subsec",
                                             "now",
                                             "start of day",
                                             "start of month",
                                             "start of year",
                                             "start of week",
                                             "START OF MONTH",
                                             "start of  day",
                                             "weekday 0",
                                             "weekday 1",
                                             "weekday 6",
                                             "weekday 7",
                                             "weekday 1.5",
                                             "weekday -1",
                                             "weekday 3.0",
                                             "",
                                             "+",
                                             "+1",
                                             "+1 d",
                                             "days",
                                             "+1 days ",
                                             " +1 days",
                                             "+1e20 days",
                                             "+176546 months",
                                             "-14713 years",
                                             "+5373484 days",
                                             "+464269060799 seconds",
                                             "+0001-00-00",
                                             "ceiling",
                                             "+1.5 months",
                                             "-1.5 years",
                                             "+12:00",
                                             "-00:30:00.5",
                                             "12:00",
                                             "+25:00",
                                             "+1:00"};

/* A modifier's text. */
static void modifier_write(struct date_gen *g, char *out, size_t size)
{
    const char *unit = unit_names[pick(
        g, 0, (int)(sizeof(unit_names) / sizeof(unit_names[0])) - 1)];
    const char *spaces = chance(g, 80) ? " " : (chance(g, 50) ? "" : "   ");

    switch (pick(g, 0, 5)) {
    case 0:
        snprintf(out, size, "%+d%s%s", pick(g, -400, 400), spaces, unit);
        return;
    case 1:
        snprintf(out, size, "%d%s%s", pick(g, 0, 100000), spaces, unit);
        return;
    case 2:
        snprintf(out, size, "%+.*f%s%s", pick(g, 1, 6),
                 pick(g, -5000000, 5000000) / 1000.0, spaces, unit);
        return;
    case 3: {
        int n = snprintf(out, size, "%s", chance(g, 50) ? "+" : "-");
        clock_write(g, out + n, size - (size_t)n);
        return;
    }
    default:
        snprintf(out, size, "%s",
                 word_modifiers[pick(
                     g, 0,
                     (int)(sizeof(word_modifiers) / sizeof(word_modifiers[0])) -
                         1)]);
        return;
    }
}

static struct engine_value modifier_value(struct date_gen *g, char *text)
{
    int kind = pick(g, 0, 99);

    if (kind < 2) {
        return engine__value_null();
    }
    if (kind < 4) {
        return engine__value_int(pick(g, -5, 5));
    }
    modifier_write(g, text, DATE_TEXT_SIZE);
    return engine__value_text(text, strlen(text));
}

/* A strftime() format: literals and conversions, a few unknown. */
static struct engine_value format_value(struct date_gen *g, char *text)
{
    static const char known[] = "dfHjJmMsSwWY%";
    static const char unknown[] = "eFIkluTpPRGgUVaAbBcx";
    int pieces = pick(g, 0, 6), n = 0;

    for (int i = 0; i < pieces && n < DATE_TEXT_SIZE - 4; i++) {
        int kind = pick(g, 0, 99);
        if (kind < 70) {
            text[n++] = '%';
            text[n++] = known[pick(g, 0, (int)sizeof(known) - 2)];
        } else if (kind < 76) {
            text[n++] = '%';
            text[n++] = unknown[pick(g, 0, (int)sizeof(unknown) - 2)];
        } else {
            text[n++] = " -:T/x"[pick(g, 0, 5)];
        }
    }
    if (chance(g, 3)) {
        text[n++] = '%';
    }
    text[n] = '\0';
    if (chance(g, 2)) {
        return engine__value_null();
    }
    return engine__value_text(text, (size_t)n);
}

static const char *const function_names[] = {
    "date", "time", "datetime", "julianday", "unixepoch", "strftime"};

#define FUNCTION_COUNT (sizeof(function_names) / sizeof(function_names[0]))

static void sql_for(char *sql, size_t size, const char *name, int argc)
{
    int n = snprintf(sql, size, "SELECT %s(", name);

    for (int i = 0; i < argc; i++) {
        n += snprintf(sql + n, size - (size_t)n, "%s?%d", i ? ", " : "", i + 1);
    }
    snprintf(sql + n, size - (size_t)n, ")");
}

/* Whether v is the text 'utc' (any case). */
static bool is_utc(const struct engine_value *v)
{
    return v->type == ENGINE_TEXT && v->u.s.size == 3 &&
           strncasecmp((const char *)v->u.s.bytes, "utc", 3) == 0;
}

/* The one divergence we keep (see func_date_modifier.c, utc_apply):
 * 'utc' applied to a time that is no valid julian day (a raw number not
 * yet read, a year out of range) or within a day of either end of the
 * range. True if argv (time value first) has such a 'utc': SQLite's
 * julianday() of the arguments before it is NULL, below 1 or above
 * 5373483.5. */
static bool has_utc_on_invalid_time(struct oracle *o, int argc,
                                    const struct engine_value *argv)
{
    char sql[128];
    bool invalid = false;

    for (int i = 1; i < argc && !invalid; i++) {
        sqlite3_stmt *stmt;
        if (!is_utc(&argv[i])) {
            continue;
        }
        sql_for(sql, sizeof(sql), "julianday", i);
        stmt = oracle_prepare(o, sql);
        for (int a = 0; a < i; a++) {
            oracle_bind(stmt, a + 1, &argv[a]);
        }
        invalid = sqlite3_step(stmt) != SQLITE_ROW ||
                  sqlite3_column_type(stmt, 0) == SQLITE_NULL ||
                  sqlite3_column_double(stmt, 0) < 1.0 ||
                  sqlite3_column_double(stmt, 0) > 5373483.5;
        sqlite3_finalize(stmt);
    }
    return invalid;
}

/* One random call of function f with its statement cache stmts[argc].
 * Returns false if the call was skipped as the known divergence. */
static bool random_call(struct oracle *o, struct date_gen *g, size_t f,
                        sqlite3_stmt **stmts)
{
    struct engine_value argv[DATE_ARGS_MAX];
    bool is_strftime = strcmp(function_names[f], "strftime") == 0;
    int argc = 0, modifiers = pick(g, 0, 3);
    char sql[128];

    if (is_strftime) {
        argv[argc] = format_value(g, g->text[argc]);
        argc++;
    }
    argv[argc] = time_value(g, g->text[argc]);
    argc++;
    for (int i = 0; i < modifiers; i++) {
        argv[argc] = modifier_value(g, g->text[argc]);
        argc++;
    }
    if (has_utc_on_invalid_time(o, argc - is_strftime, argv + is_strftime)) {
        return false;
    }
    if (stmts[argc] == NULL) {
        sql_for(sql, sizeof(sql), function_names[f], argc);
        stmts[argc] = oracle_prepare(o, sql);
    }
    oracle_scalar(o, stmts[argc], function_names[f], argc, argv);
    return true;
}

static void run_random_in_zone(const char *zone)
{
    sqlite3_stmt *stmts[FUNCTION_COUNT][DATE_ARGS_MAX + 1];
    struct date_gen g;
    struct oracle o;
    long skipped = 0;

    setenv("TZ", zone, 1);
    tzset();
    printf("TZ=%s\n", zone);
    memset(stmts, 0, sizeof(stmts));
    common_test_rng_seed(&g.rng, "date_functions_match_sqlite");
    oracle_open(&o);
    for (size_t f = 0; f < FUNCTION_COUNT; f++) {
        for (int round = 0; round < DATE_ROUNDS; round++) {
            if (!random_call(&o, &g, f, stmts[f])) {
                skipped++;
            }
        }
        for (int argc = 0; argc <= DATE_ARGS_MAX; argc++) {
            sqlite3_finalize(stmts[f][argc]);
        }
    }
    printf("skipped (utc on an invalid time)=%ld\n", skipped);
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

static void date_functions_match_sqlite_in_utc(void **state)
{
    (void)state;
    run_random_in_zone("UTC");
}

static void date_functions_match_sqlite_in_new_york(void **state)
{
    (void)state;
    run_random_in_zone("America/New_York");
}

static void date_functions_match_sqlite_in_kolkata(void **state)
{
    (void)state;
    run_random_in_zone("Asia/Kolkata");
}

static void date_functions_match_sqlite_in_lord_howe(void **state)
{
    (void)state;
    run_random_in_zone("Australia/Lord_Howe");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(date_functions_match_sqlite_in_utc),
        cmocka_unit_test(date_functions_match_sqlite_in_new_york),
        cmocka_unit_test(date_functions_match_sqlite_in_kolkata),
        cmocka_unit_test(date_functions_match_sqlite_in_lord_howe),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
