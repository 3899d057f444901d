/* SPDX-License-Identifier: MIT
 *
 * difftest.c: the differential tester of sinew's SQL engine against
 * libsqlite3 3.40.
 *
 * Goal: every statement gives the same outcome in both engines: the same
 * success or error message, the same columns and rows, each value of the
 * same storage class and bytes (see difftest_run.c for the comparison).
 *
 * Method: first the fixed regression scripts (difftest_regressions.sql,
 * one case per "-- case:" header, each statement compared as it runs);
 * then SINEW_DIFFTEST_CASES random cases (default DIFFTEST_CASES_DEFAULT).
 * Case i is seeded with SINEW_TEST_SEED + i, so one case replays alone with
 * SINEW_TEST_SEED=<seed + i> SINEW_DIFFTEST_CASES=1. A case creates a
 * random schema, fills it, then runs DIFFTEST_STATEMENTS random statements;
 * after each DML statement the changed table is compared too. A mismatch
 * prints the case's seed, the SQL that built its state, the statement and
 * both results, and the run goes on; the test fails if any occurred.
 */
#include "difftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DIFFTEST_KNOWN
#error "DIFFTEST_KNOWN must name difftest_known.txt"
#endif
#ifndef DIFFTEST_REGRESSIONS
#error "DIFFTEST_REGRESSIONS must name difftest_regressions.sql"
#endif

#define DIFFTEST_CASES_DEFAULT 20000
#define DIFFTEST_STATEMENTS 30

/* One case's pair of databases and the SQL that brought them to their
 * state, which is what a reproduction needs. */
struct dt_session {
    sqlite3 *lite;
    struct engine_db *ours;
    struct dt_buf history; /* every state-changing statement so far */
    struct dt_buf report;  /* scratch for printing */
    uint64_t case_seed;
    long statements; /* statements compared, whole run */
    long mismatches; /* whole run */
    bool is_spoiled; /* SQLite's next rowid is random: stop the case */
};

static void session_open(struct dt_session *s)
{
    assert_int_equal(sqlite3_open(":memory:", &s->lite), SQLITE_OK);
    assert_int_equal(engine_open(NULL, &s->ours), 0);
    dt_buf_clear(&s->history);
    s->is_spoiled = false;
}

static void session_close(struct dt_session *s)
{
    sqlite3_close(s->lite);
    engine_close(s->ours);
}

static void report_mismatch(struct dt_session *s, const char *sql,
                            const char *why, const struct dt_result *lite,
                            const struct dt_result *ours)
{
    s->mismatches++;
    if (s->mismatches > DT_REPORT_MAX) {
        return;
    }
    dt_buf_clear(&s->report);
    dt_buf_addf(&s->report,
                "---- MISMATCH %ld (case seed %" PRIu64 "): %s\n"
                "-- state:\n%s-- statement:\n%s;\n-- sqlite:\n",
                s->mismatches, s->case_seed, why, s->history.data, sql);
    dt_result_print(lite, &s->report);
    dt_buf_add(&s->report, "-- sinew:\n");
    dt_result_print(ours, &s->report);
    fputs(s->report.data, stdout);
    fflush(stdout);
}

/* Runs sql on both sides and compares; returns whether it matched. */
static bool session_compare(struct dt_session *s, const struct dt_stmt *st,
                            const char *sql)
{
    struct dt_result lite, ours;
    char why[256] = "";
    bool is_match;

    dt_run_sqlite(s->lite, sql, &lite);
    dt_run_engine(s->ours, sql, &ours);
    s->statements++;
    is_match = dt_results_match(st, &lite, &ours, why, sizeof(why));
    if (!is_match) {
        report_mismatch(s, sql, why, &lite, &ours);
        /* The states may now differ: later statements would only echo. */
        s->is_spoiled = true;
    }
    dt_result_free(&lite);
    dt_result_free(&ours);
    return is_match;
}

static void session_remember(struct dt_session *s, const char *sql)
{
    dt_buf_addf(&s->history, "%s;\n", sql);
}

/* Compares a table's rows with their rowids, as a multiset. Once SQLite
 * has used rowid INT64_MAX it picks new rowids at random (OP_NewRowid),
 * maybe already in the statement that used it: only the row count is
 * compared then, and the case stops being comparable. */
static void session_compare_table(struct dt_session *s, const char *name)
{
    struct dt_stmt st = {.order = DT_ORDER_SET};
    char sql[64];
    sqlite3_stmt *max = NULL;
    bool is_random;

    snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM %s", name);
    is_random = sqlite3_prepare_v2(s->lite, sql, -1, &max, NULL) == SQLITE_OK &&
                sqlite3_step(max) == SQLITE_ROW &&
                sqlite3_column_int64(max, 0) == INT64_MAX;
    sqlite3_finalize(max);
    snprintf(sql, sizeof(sql), "SELECT %s FROM %s",
             is_random ? "count(*)" : "rowid, *", name);
    session_compare(s, &st, sql);
    s->is_spoiled = s->is_spoiled || is_random;
}

static void session_compare_all_tables(struct dt_session *s,
                                       const struct dt_schema *schema)
{
    int i;

    for (i = 0; i < schema->table_count; i++) {
        session_compare_table(s, schema->tables[i].name);
    }
}

/* Runs a script of statements (one per line) on both sides, as state. */
static void session_setup(struct dt_session *s, char *script)
{
    struct dt_stmt st = {.order = DT_ORDER_SET};
    char *line, *save = NULL;

    for (line = strtok_r(script, "\n", &save); line != NULL && !s->is_spoiled;
         line = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(line);

        if (n > 0 && line[n - 1] == ';') {
            line[n - 1] = '\0';
        }
        st.is_dml = strncmp(line, "INSERT", 6) == 0;
        session_compare(s, &st, line);
        session_remember(s, line);
    }
}

static long env_long(const char *name, long fallback)
{
    const char *text = getenv(name);

    return text != NULL && text[0] != '\0' ? strtol(text, NULL, 0) : fallback;
}

static void run_case(struct dt_session *s, uint64_t seed)
{
    struct dt_gen g;
    struct dt_buf setup;
    struct dt_stmt st;
    int i, n;

    memset(&g, 0, sizeof(g));
    g.rng.state = seed;
    g.depth_limit = (int)env_long("SINEW_DIFFTEST_DEPTH", 4);
    s->case_seed = seed;
    session_open(s);
    dt_buf_init(&setup);
    dt_buf_init(&st.sql);
    dt_gen_schema(&g, &setup);
    for (i = 0; i < g.schema.table_count; i++) {
        for (n = 1 + (int)dt_below(&g, 3); n > 0; n--) {
            dt_gen_insert_data(&g, i, &setup);
            dt_buf_add(&setup, ";\n");
        }
    }
    session_setup(s, setup.data);
    if (!s->is_spoiled) {
        session_compare_all_tables(s, &g.schema);
    }
    for (i = 0; i < DIFFTEST_STATEMENTS && !s->is_spoiled; i++) {
        dt_gen_statement(&g, &st);
        session_compare(s, &st, st.sql.data);
        if (s->is_spoiled) {
            break;
        }
        if (st.is_dml || st.is_transaction) {
            session_remember(s, st.sql.data);
        }
        if (st.is_dml) {
            session_compare_table(s, g.schema.tables[st.table].name);
        } else if (st.is_transaction) {
            session_compare_all_tables(s, &g.schema);
        }
    }
    dt_buf_free(&st.sql);
    dt_buf_free(&setup);
    session_close(s);
}

static void session_init(struct dt_session *s)
{
    memset(s, 0, sizeof(*s));
    dt_buf_init(&s->history);
    dt_buf_init(&s->report);
}

static void session_free(struct dt_session *s)
{
    dt_buf_free(&s->history);
    dt_buf_free(&s->report);
}

/* The case seeds with an open, documented mismatch (difftest_known.txt):
 * bugs found and not fixed yet. A run over them counts their mismatches
 * apart; any other mismatch fails the test, and so does a listed case that
 * no longer mismatches (its seed must then leave the list). */
struct dt_known {
    uint64_t seeds[DT_KNOWN_MAX];
    size_t count;
};

static void known_load(struct dt_known *known)
{
    FILE *file = fopen(DIFFTEST_KNOWN, "r");
    char line[256];

    known->count = 0;
    assert_non_null(file);
    while (fgets(line, sizeof(line), file) != NULL) {
        if (line[0] >= '0' && line[0] <= '9' && known->count < DT_KNOWN_MAX) {
            known->seeds[known->count++] = strtoull(line, NULL, 10);
        }
    }
    fclose(file);
}

static bool known_has(const struct dt_known *known, uint64_t seed)
{
    for (size_t i = 0; i < known->count; i++) {
        if (known->seeds[i] == seed) {
            return true;
        }
    }
    return false;
}

/* Runs case seed; counts its mismatches as known or new. */
static void run_counted(struct dt_session *s, const struct dt_known *known,
                        uint64_t seed, long *known_mismatches,
                        long *fixed_known)
{
    long before = s->mismatches;
    bool listed = known_has(known, seed);

    run_case(s, seed);
    if (listed && s->mismatches > before) {
        *known_mismatches += s->mismatches - before;
        s->mismatches = before;
    } else if (listed) {
        printf("engine_difftest: known case seed %" PRIu64 " no longer "
               "mismatches: remove it from difftest_known.txt\n",
               seed);
        (*fixed_known)++;
    }
}

static void difftest_random(void **state)
{
    struct common_test_rng seed_rng;
    static struct dt_known known;
    struct dt_session s;
    long i, cases = env_long("SINEW_DIFFTEST_CASES", DIFFTEST_CASES_DEFAULT);
    long known_mismatches = 0;
    long fixed_known = 0;
    uint64_t seed;
    time_t start = time(NULL);

    (void)state;
    known_load(&known);
    common_test_rng_seed(&seed_rng, "engine_difftest");
    seed = seed_rng.state;
    session_init(&s);
    for (i = 0; i < cases; i++) {
        run_counted(&s, &known, seed + (uint64_t)i, &known_mismatches,
                    &fixed_known);
        if (i > 0 && i % 10000 == 0) {
            printf("engine_difftest: %ld cases, %ld statements, %ld "
                   "mismatches, %lds\n",
                   i, s.statements, s.mismatches, (long)(time(NULL) - start));
            fflush(stdout);
        }
    }
    printf("engine_difftest: seeds %" PRIu64 "..%" PRIu64 ": %ld cases, %ld "
           "statements, %ld mismatches (+%ld in known open cases), %lds\n",
           seed, seed + (uint64_t)cases - 1, cases, s.statements, s.mismatches,
           known_mismatches, (long)(time(NULL) - start));
    session_free(&s);
    assert_int_equal(s.mismatches, 0);
    assert_int_equal(fixed_known, 0);
}

/* Classifies a regression statement: rows in order when it sorts, and
 * changes() compared for DML. */
static void classify(const char *sql, struct dt_stmt *st)
{
    while (*sql == ' ' || *sql == '\n') {
        sql++;
    }
    memset(st, 0, sizeof(*st));
    st->order = strstr(sql, "ORDER BY") != NULL ? DT_ORDER_KEYED : DT_ORDER_SET;
    st->is_dml = strncmp(sql, "INSERT", 6) == 0 ||
                 strncmp(sql, "UPDATE", 6) == 0 ||
                 strncmp(sql, "DELETE", 6) == 0;
    st->is_returning = strstr(sql, "RETURNING") != NULL;
    st->has_limit = strstr(sql, "LIMIT") != NULL;
    st->has_offset = strstr(sql, "OFFSET") != NULL;
}

/* Drops the statement's trailing white space and semicolon. */
static void trim_statement(struct dt_buf *sql)
{
    while (sql->size > 0 && strchr(" \t\r\n;", sql->data[sql->size - 1])) {
        sql->data[--sql->size] = '\0';
    }
}

/* Runs the regression file: "-- case: name" starts a case (fresh
 * databases); each complete statement is compared as it is read. */
static void run_regressions(struct dt_session *s, FILE *file)
{
    struct dt_buf sql;
    struct dt_stmt st;
    char line[4096];
    long cases = 0;

    dt_buf_init(&sql);
    session_open(s);
    while (fgets(line, sizeof(line), file) != NULL) {
        if (strncmp(line, "-- case:", 8) == 0) {
            session_close(s);
            session_open(s);
            dt_buf_clear(&sql);
            dt_buf_clear(&s->history);
            cases++;
            continue;
        }
        dt_buf_add(&sql, line);
        if (!sqlite3_complete(sql.data)) {
            continue;
        }
        trim_statement(&sql);
        classify(sql.data, &st);
        session_compare(s, &st, sql.data);
        if (st.is_dml || strncmp(sql.data, "CREATE", 6) == 0) {
            session_remember(s, sql.data);
        }
        dt_buf_clear(&sql);
    }
    session_close(s);
    dt_buf_free(&sql);
    printf("engine_difftest: %ld regression cases, %ld statements, %ld "
           "mismatches\n",
           cases, s->statements, s->mismatches);
}

static void difftest_regressions(void **state)
{
    struct dt_session s;
    FILE *file = fopen(DIFFTEST_REGRESSIONS, "r");

    (void)state;
    assert_non_null(file);
    session_init(&s);
    run_regressions(&s, file);
    fclose(file);
    session_free(&s);
    assert_int_equal(s.mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(difftest_regressions),
        cmocka_unit_test(difftest_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
