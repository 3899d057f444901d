/* SPDX-License-Identifier: MIT
 *
 * test_func_date_fixed.c: hand-written cases of the date and time
 * functions against libsqlite3 3.40, and 'now'.
 *
 * Method: each case (the edges named in lang_datefunc.html: month
 * overflow, leap days, fractional-second rounding, the ends of the valid
 * range, unixepoch/julianday/auto, zones, localtime outside 1970..2038,
 * 3.44-only conversions that must be NULL) is run in SQLite and through
 * our registry, in UTC, New York and Lord Howe (set in this process, so
 * libsqlite3 sees the same zone); value and type must agree. 'now' is
 * compared with SQLite's within two seconds. test_func_date.c has the
 * random comparison.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "func_oracle.h"

#define DATE_TEXT_SIZE 96

static void sql_for(char *sql, size_t size, const char *name, int argc)
{
    int n = snprintf(sql, size, "SELECT %s(", name);

    for (int i = 0; i < argc; i++) {
        n += snprintf(sql + n, size - (size_t)n, "%s?%d", i ? ", " : "", i + 1);
    }
    snprintf(sql + n, size - (size_t)n, ")");
}

/* A fixed call: the function and up to four arguments, each "t:text",
 * "i:integer", "r:real" or "n" (NULL). */
struct fixed_call {
    const char *name;
    int argc;
    const char *args[4];
};

static const struct fixed_call fixed_calls[] = {
    {"date", 2, {"t:2001-01-31", "t:+1 month"}},
    {"date", 2, {"t:2000-02-29", "t:+1 year"}},
    {"date", 2, {"t:2000-03-31", "t:-1 month"}},
    {"date", 3, {"t:2001-01-31", "t:start of month", "t:+1 month"}},
    {"date", 2, {"t:2024-12-31", "t:+13 months"}},
    {"date", 2, {"t:2024-01-15", "t:-25 months"}},
    {"datetime", 2, {"t:2000-01-01 23:59:59.9999", "t:+0 days"}},
    {"datetime", 1, {"t:2000-01-01 23:59:59.9995"}},
    {"strftime", 2, {"t:%f", "t:2000-01-01 00:00:59.9996"}},
    {"strftime", 2, {"t:%f %S", "t:2000-01-01 00:00:01.0005"}},
    {"date", 1, {"t:-0001-01-01"}},
    {"date", 1, {"t:-4713-11-24 12:00:00"}},
    {"date", 1, {"t:-4713-11-24 11:59:59"}},
    {"date", 1, {"t:-4714-01-01"}},
    {"strftime", 2, {"t:%Y|%j|%W|%w", "t:-4713-11-25"}},
    {"date", 1, {"t:9999-12-31 23:59:59.999"}},
    {"date", 2, {"t:9999-12-31", "t:+1 day"}},
    {"date", 1, {"i:0"}},
    {"datetime", 1, {"r:5373484.4999999"}},
    {"datetime", 1, {"r:5373484.5"}},
    {"datetime", 1, {"i:1700000000"}},
    {"datetime", 2, {"i:1700000000", "t:unixepoch"}},
    {"datetime", 2, {"r:1700000000.123", "t:unixepoch"}},
    {"datetime", 2, {"i:-210866760000", "t:unixepoch"}},
    {"datetime", 2, {"i:253402300799", "t:unixepoch"}},
    {"datetime", 2, {"i:253402300800", "t:unixepoch"}},
    {"datetime", 2, {"i:0", "t:auto"}},
    {"datetime", 2, {"i:5373485", "t:auto"}},
    {"datetime", 2, {"i:-1", "t:auto"}},
    {"datetime", 2, {"i:253402300800", "t:auto"}},
    {"datetime", 3, {"i:1", "t:+1 day", "t:unixepoch"}},
    {"datetime", 3, {"i:1", "t:+1 day", "t:auto"}},
    {"datetime", 2, {"r:2451545.5", "t:julianday"}},
    {"datetime", 2, {"i:1700000000", "t:julianday"}},
    {"datetime", 2, {"t:2000-01-01", "t:unixepoch"}},
    {"datetime", 2, {"t:2000-01-01", "t:subsec"}},
    {"datetime", 2, {"t:2000-01-01", "t:+0001-01-01 00:00:00"}},
    {"julianday", 1, {"t:2000-01-01 12:00"}},
    {"julianday", 1, {"t:12:00"}},
    {"julianday", 1, {"t:24:00"}},
    {"julianday", 1, {"t:2000-01-01 00:00:00.0006"}},
    {"unixepoch", 1, {"t:1970-01-01"}},
    {"unixepoch", 1, {"t:1969-12-31 23:59:59.5"}},
    {"unixepoch", 1, {"t:0000-01-01"}},
    {"datetime", 1, {"t:2000-01-01 12:00+05:30"}},
    {"datetime", 1, {"t:2000-01-01 12:00 -14:59"}},
    {"datetime", 1, {"t:2000-01-01 12:00 -15:00"}},
    {"datetime", 1, {"t:2000-01-01T12:00Z"}},
    {"datetime", 1, {"t:2000-01-01 12:00 z "}},
    {"datetime", 2, {"t:2000-01-01 12:00+05:00", "t:utc"}},
    {"datetime", 2, {"t:2000-01-01 12:00", "t:utc"}},
    {"datetime", 2, {"t:2000-07-01 12:00", "t:localtime"}},
    {"datetime", 3, {"t:2000-07-01 12:00", "t:localtime", "t:utc"}},
    {"datetime", 2, {"t:1960-07-01 12:00", "t:localtime"}},
    {"datetime", 2, {"t:2050-07-01 12:00", "t:localtime"}},
    {"date", 2, {"t:2023-10-05", "t:weekday 0"}},
    {"date", 2, {"t:2023-10-08", "t:weekday 0"}},
    {"date", 2, {"t:2023-10-05", "t:weekday 7"}},
    {"date", 2, {"t:2023-10-05", "t:start of week"}},
    {"datetime", 2, {"t:2023-10-05 12:34:56", "t:+1:30"}},
    {"datetime", 2, {"t:2023-10-05 12:34:56", "t:-01:30:15.5"}},
    {"datetime", 2, {"t:2023-10-05 12:34:56", "t:+36:00"}},
    {"datetime", 2, {"t:2023-10-05", "t:+1.5 days"}},
    {"datetime", 2, {"t:2023-10-05", "t:-0.5 hours"}},
    {"datetime", 2, {"t:2023-10-05", "t:+1e3 seconds"}},
    {"datetime", 2, {"t:2023-10-05", "t:+176545 months"}},
    {"datetime", 2, {"t:2023-10-05", "t:+176546 months"}},
    {"datetime", 2, {"t:0000-01-01", "t:-1 day"}},
    {"strftime", 2, {"t:%e", "t:2023-10-05"}},
    {"strftime", 2, {"t:%F %T", "t:2023-10-05"}},
    {"strftime", 2, {"t:100%", "t:2023-10-05"}},
    {"strftime", 2, {"t:%%Y=%Y %J %s", "t:2023-10-05 01:02:03.456"}},
    {"strftime", 2, {"t:%W %j", "t:2023-01-01"}},
    {"strftime", 2, {"t:%W %j", "t:2024-12-31"}},
    {"strftime", 2, {"i:42", "t:2023-10-05"}},
    {"strftime", 2, {"n", "t:2023-10-05"}},
    {"strftime", 1, {"t:"}},
    {"date", 1, {"t:2023-02-30"}},
    {"date", 1, {"t:2023-02-32"}},
    {"date", 1, {"t:2023-1-05"}},
    {"date", 1, {"t:  2023-01-05"}},
    {"date", 1, {"t:2023-01-05   "}},
    {"time", 1, {"t:12:60"}},
    {"time", 1, {"t:25:00"}},
    {"time", 1, {"t:12:00:00."}},
    {"date", 1, {"r:-0.0"}},
    {"date", 1, {"n"}},
    {"date", 2, {"t:2023-01-05", "n"}},
    {"date",
     4,
     {"t:2023-01-05", "t:+4.6e14 seconds", "t:+4.6e14 seconds",
      "t:+4.6e14 seconds"}},
    {"julianday",
     4,
     {"i:0", "t:-7.7e12 minutes", "t:-7.7e12 minutes", "t:utc"}},
};

static struct engine_value fixed_arg(const char *spec, char *buf)
{
    switch (spec[0]) {
    case 't':
        snprintf(buf, DATE_TEXT_SIZE, "%s", spec + 2);
        return engine__value_text(buf, strlen(buf));
    case 'i':
        return engine__value_int(strtoll(spec + 2, NULL, 10));
    case 'r':
        return engine__value_real(strtod(spec + 2, NULL));
    default:
        return engine__value_null();
    }
}

static void run_fixed(void)
{
    struct engine_value argv[4];
    char buf[4][DATE_TEXT_SIZE], sql[128];
    struct oracle o;

    oracle_open(&o);
    for (size_t c = 0; c < sizeof(fixed_calls) / sizeof(fixed_calls[0]); c++) {
        const struct fixed_call *f = &fixed_calls[c];
        sqlite3_stmt *stmt;
        for (int i = 0; i < f->argc; i++) {
            argv[i] = fixed_arg(f->args[i], buf[i]);
        }
        sql_for(sql, sizeof(sql), f->name, f->argc);
        stmt = oracle_prepare(&o, sql);
        oracle_scalar(&o, stmt, f->name, f->argc, argv);
        sqlite3_finalize(stmt);
    }
    oracle_close(&o);
    assert_int_equal(o.mismatches, 0);
}

static void date_fixed_cases_match_sqlite(void **state)
{
    static const char *const zones[] = {"UTC", "America/New_York",
                                        "Australia/Lord_Howe"};

    (void)state;
    for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
        setenv("TZ", zones[z], 1);
        tzset();
        run_fixed();
    }
}

/* Our function's result on one argument text (NULL argv for none). */
static struct engine_value call_one(struct oracle *o, const char *name,
                                    const char *arg)
{
    const struct engine_scalar_def *def =
        engine__scalar_lookup(name, strlen(name));
    struct engine_value v = engine__value_null(), out;

    assert_non_null(def);
    if (arg != NULL) {
        v = engine__value_text(arg, strlen(arg));
    }
    assert_int_equal(def->fn(&o->ctx, arg != NULL, &v, &out), 0);
    return out;
}

/* 'now' is the clock: SQLite's julianday('now') and ours agree within two
 * seconds, and the no-argument forms and the current_* names read it. */
static void now_is_the_current_time(void **state)
{
    struct oracle o;
    sqlite3_stmt *stmt;
    struct engine_value ours, expected;
    char text[32];

    (void)state;
    oracle_open(&o);
    stmt = oracle_prepare(&o, "SELECT julianday('now')");
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    ours = call_one(&o, "julianday", "now");
    assert_int_equal(ours.type, ENGINE_FLOAT);
    assert_true(fabs(ours.u.r - sqlite3_column_double(stmt, 0)) * 86400.0 <
                2.0);
    sqlite3_finalize(stmt);

    /* The no-argument forms and current_* read the same clock: equal
     * unless the second turned between the calls, so try thrice. */
    for (int attempt = 0; attempt < 3; attempt++) {
        ours = call_one(&o, "current_timestamp", NULL);
        expected = call_one(&o, "datetime", "now");
        assert_int_equal(ours.type, ENGINE_TEXT);
        assert_int_equal(ours.u.s.size, 19);
        snprintf(text, sizeof(text), "%.*s", (int)ours.u.s.size,
                 (const char *)ours.u.s.bytes);
        if (oracle_same(&ours, &expected)) {
            break;
        }
        assert_true(attempt < 2);
    }
    expected = call_one(&o, "date", NULL);
    assert_int_equal(expected.type, ENGINE_TEXT);
    assert_memory_equal(expected.u.s.bytes, text, 10);
    ours = call_one(&o, "current_time", NULL);
    assert_int_equal(ours.u.s.size, 8);
    ours = call_one(&o, "current_date", NULL);
    assert_int_equal(ours.u.s.size, 10);
    oracle_close(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(date_fixed_cases_match_sqlite),
        cmocka_unit_test(now_is_the_current_time),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
