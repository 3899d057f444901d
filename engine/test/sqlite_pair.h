/* SPDX-License-Identifier: MIT
 *
 * sqlite_pair.h: a libsqlite3 connection and an engine handle side by
 * side, for tests that run the same statements in both (test_pragma.c,
 * test_savepoint.c). A statement's outcome is written as one text: its
 * result column names, each row with every value's storage class, and the
 * error message if it failed (at prepare or at a step). Two outcomes are
 * equal exactly when SQLite and sinew behaved alike. Also: scripts run in
 * both with every difference reported (pair_run_all, as a cmocka state
 * opened by pair_state_open), rows compared as a multiset
 * (pair_sort_rows, pair_run_rows), and a walk that fails each allocation
 * of a script in turn (pair_oom_walk).
 */
#ifndef SINEW_ENGINE_SQLITE_PAIR_H
#define SINEW_ENGINE_SQLITE_PAIR_H

#include "common_test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define PAIR_OUTCOME_SIZE 16384

struct pair {
    sqlite3 *oracle;
    struct engine_db *db;
};

static inline void pair_open(struct pair *p)
{
    assert_int_equal(sqlite3_open(":memory:", &p->oracle), SQLITE_OK);
    assert_int_equal(engine_open(NULL, &p->db), 0);
}

static inline void pair_close(struct pair *p)
{
    sqlite3_close(p->oracle);
    engine_close(p->db);
}

/* Appends to a NUL-terminated outcome, cutting at its size. */
static inline void outcome_add(char *out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static inline void outcome_add(char *out, const char *format, ...)
{
    size_t used = strlen(out);
    va_list args;

    va_start(args, format);
    vsnprintf(out + used, PAIR_OUTCOME_SIZE - used, format, args);
    va_end(args);
}

/* One value as "<type>:<text>"; type is SQLite's (1 INTEGER .. 5 NULL),
 * which engine.h's storage classes equal. */
static inline void outcome_value(char *out, int type, const char *text)
{
    outcome_add(out, " %d:%s", type, text != NULL ? text : "");
}

/* Binds a statement's parameters before it runs; ctx is the caller's. */
typedef void (*pair_bind_fn)(sqlite3_stmt *stmt, const void *ctx);

/* sql's outcome in SQLite, its parameters bound by bind (or none). */
static inline void oracle_outcome_bound(sqlite3 *db, const char *sql,
                                        pair_bind_fn bind, const void *ctx,
                                        char *out)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);

    out[0] = '\0';
    for (int c = 0; rc == SQLITE_OK && c < sqlite3_column_count(stmt); c++) {
        outcome_add(out, "%s%s", c ? "|" : "columns ",
                    sqlite3_column_name(stmt, c));
    }
    if (rc == SQLITE_OK && bind != NULL) {
        bind(stmt, ctx);
    }
    while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        outcome_add(out, "\nrow");
        for (int c = 0; c < sqlite3_column_count(stmt); c++) {
            /* The type first: sqlite3_column_text() converts in place. */
            int type = sqlite3_column_type(stmt, c);

            outcome_value(out, type,
                          (const char *)sqlite3_column_text(stmt, c));
        }
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_OK) {
        outcome_add(out, "\nerror: %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(stmt);
}

static inline void oracle_outcome(sqlite3 *db, const char *sql, char *out)
{
    oracle_outcome_bound(db, sql, NULL, NULL, out);
}

static inline void engine_outcome(struct engine_db *db, const char *sql,
                                  char *out)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_prepare(db, sql, -1, &stmt, NULL);

    out[0] = '\0';
    for (int c = 0; rc == 0 && c < engine_column_count(stmt); c++) {
        outcome_add(out, "%s%s", c ? "|" : "columns ",
                    engine_column_name(stmt, c));
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        outcome_add(out, "\nrow");
        for (int c = 0; c < engine_column_count(stmt); c++) {
            int type = engine_column_type(stmt, c);

            outcome_value(out, type, engine_column_text(stmt, c));
        }
        rc = 0;
    }
    if (rc != ENGINE_DONE && rc != 0) {
        outcome_add(out, "\nerror: %s", engine_errmsg(db));
    }
    engine_finalize(stmt);
}

/* Runs sql in both and fails unless the outcomes are equal; returns
 * whether it failed (in both). */
static inline bool pair_run(struct pair *p, const char *sql)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];

    oracle_outcome(p->oracle, sql, expected);
    engine_outcome(p->db, sql, got);
    if (strcmp(expected, got) != 0) {
        fail_msg("%s\n-- sqlite:\n%s\n-- sinew:\n%s", sql, expected, got);
    }
    if (sqlite3_get_autocommit(p->oracle) == engine_in_transaction(p->db)) {
        fail_msg("%s\nin a transaction: sqlite %s, sinew %s", sql,
                 sqlite3_get_autocommit(p->oracle) ? "no" : "yes",
                 engine_in_transaction(p->db) ? "yes" : "no");
    }
    return strstr(expected, "error: ") != NULL;
}

/* sql succeeds in both, with the same columns and rows. */
static inline void pair_same(struct pair *p, const char *sql)
{
    if (pair_run(p, sql)) {
        fail_msg("%s: failed in both (expected success): %s", sql,
                 engine_errmsg(p->db));
    }
}

/* sql fails in both with the same message. */
static inline void pair_same_error(struct pair *p, const char *sql)
{
    if (!pair_run(p, sql)) {
        fail_msg("%s: succeeded in both (expected an error)", sql);
    }
}

/* Each statement of a list, which ends with NULL, succeeds alike. */
static inline void pair_same_all(struct pair *p, const char *const *sqls)
{
    for (size_t i = 0; sqls[i] != NULL; i++) {
        pair_same(p, sqls[i]);
    }
}

/* A pair for a cmocka group or test state, setup (NULL-terminated, or
 * NULL) run in both first and required to succeed alike. */
static inline int pair_state_open(void **state, const char *const *setup)
{
    struct pair *p = test_malloc(sizeof(*p));

    pair_open(p);
    if (setup != NULL) {
        pair_same_all(p, setup);
    }
    *state = p;
    return 0;
}

/* Closes pair_state_open()'s pair: a cmocka teardown. */
static inline int pair_state_close(void **state)
{
    struct pair *p = *state;

    pair_close(p);
    test_free(p);
    return 0;
}

/* Runs every statement of script (NULL-terminated) in the state's pair,
 * in order, prints each difference, then fails if there was one. */
static inline void pair_run_all(void **state, const char *const *script)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];
    struct pair *p = *state;
    int differences = 0;

    for (size_t i = 0; script[i] != NULL; i++) {
        oracle_outcome(p->oracle, script[i], expected);
        engine_outcome(p->db, script[i], got);
        if (strcmp(expected, got) != 0) {
            print_message("%s\n-- sqlite:\n%s\n-- sinew:\n%s\n\n", script[i],
                          expected, got);
            differences++;
        }
    }
    assert_int_equal(differences, 0);
}

static inline int pair_line_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The outcome with its rows (every line after the first) sorted, for
 * queries whose row order SQLite leaves open. */
static inline void pair_sort_rows(char *outcome)
{
    static char copy[PAIR_OUTCOME_SIZE];
    static char *lines[PAIR_OUTCOME_SIZE / 4];
    size_t n = 0;
    char *save = NULL;

    strcpy(copy, outcome);
    for (char *t = strtok_r(copy, "\n", &save); t != NULL;
         t = strtok_r(NULL, "\n", &save)) {
        lines[n++] = t;
    }
    if (n > 1) {
        qsort(lines + 1, n - 1, sizeof(lines[0]), pair_line_compare);
    }
    outcome[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        outcome_add(outcome, "%s\n", lines[i]);
    }
}

/* Runs every statement of sqls (NULL-terminated) in both of p and fails
 * at the first difference; rows are compared as a multiset unless the
 * statement starts with '!' (then in order, the '!' not sent). */
static inline void pair_run_rows(struct pair *p, const char *const *sqls)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];

    for (size_t i = 0; sqls[i] != NULL; i++) {
        bool ordered = sqls[i][0] == '!';
        const char *sql = ordered ? sqls[i] + 1 : sqls[i];

        oracle_outcome(p->oracle, sql, expected);
        engine_outcome(p->db, sql, got);
        if (!ordered) {
            pair_sort_rows(expected);
            pair_sort_rows(got);
        }
        if (strcmp(expected, got) != 0) {
            fail_msg("%s\n-- sqlite:\n%s\n-- sinew:\n%s", sql, expected, got);
        }
    }
}

static inline int oom_run_script(const char *sql)
{
    struct engine_db *db = NULL;
    int rc = engine_open(NULL, &db);

    if (rc == 0) {
        rc = engine_exec(db, sql, NULL, NULL);
    }
    engine_close(db);
    return rc;
}

/* Fails each allocation of the script (run in sinew alone) in turn: every
 * run must end with an error or success, never a crash, and free
 * everything (cmocka's heap underneath reports any leak). Returns how many
 * allocations the script makes. */
static inline uint64_t pair_oom_walk(const char *script)
{
    struct common_heap saved;
    uint64_t fail_at;

    common_heap_get(&saved);
    for (fail_at = 1;; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = oom_run_script(script);
        common_heap_set(&saved);
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            return fail_at - 1;
        }
        assert_true(rc < 0);
    }
}

#endif /* SINEW_ENGINE_SQLITE_PAIR_H */
