/* SPDX-License-Identifier: MIT
 *
 * slt_run.c: runs a parsed sqllogictest file against a fresh in-memory
 * engine database, as upstream's src/sqllogictest.c does in --verify mode
 * with the engine named "sqlite", with three deliberate differences:
 *   - the number of result values must equal the number of expected lines
 *     (upstream's 2008 loop stopped at the shorter of the two; its 2024
 *     version checks the row count too);
 *   - a label's reference hash is that of the expected values of the first
 *     record carrying the label (run or skipped), not of the first result
 *     the engine produced, so one wrong result fails once instead of
 *     failing every later query with its label;
 *   - a "statement error" record passes only if the engine rejects the SQL
 *     for a reason other than "... is not supported yet": an unsupported
 *     feature is not the error the record expects.
 * Statements run through engine_exec(), so a record may hold several (as
 * upstream's sqlite3_exec()); a query runs its first statement only (as
 * upstream's sqlite3_prepare_v2()).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "slt.h"

/* Failure texts are cut here: a verbose report, not a dump. */
#define SLT_FAILURE_TEXT_MAX (64u * 1024u)
/* Values of each side shown in a wrong-result report. */
#define SLT_SHOWN_VALUES_MAX 12

struct slt_run {
    struct engine_db *db;
    long threshold; /* the current hash-threshold */
    struct slt_labels labels;
    struct common_buf failure; /* the current record's failure text */
};

int64_t slt_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Appends formatted text to the failure text; a failure to grow it only
 * shortens the report. */
__attribute__((format(printf, 2, 3))) static void
slt_failf(struct slt_run *run, const char *format, ...)
{
    char chunk[1024];
    va_list args;

    va_start(args, format);
    int length = vsnprintf(chunk, sizeof(chunk), format, args);
    va_end(args);
    if (length > 0) {
        size_t size =
            (size_t)length < sizeof(chunk) ? (size_t)length : sizeof(chunk) - 1;
        (void)common_buf_append(&run->failure, chunk, size);
    }
}

static void slt_fail_values(struct slt_run *run, const char *what,
                            char *const *items, size_t count)
{
    slt_failf(run, "\n  %s (%zu values):", what, count);
    for (size_t i = 0; i < count && i < SLT_SHOWN_VALUES_MAX; i++) {
        slt_failf(run, " %.200s", items[i]);
    }
    if (count > SLT_SHOWN_VALUES_MAX) {
        slt_failf(run, " ...");
    }
}

static void slt_fail_engine(struct slt_run *run)
{
    slt_failf(run, "engine error: %s", engine_errmsg(run->db));
}

static enum slt_outcome slt_run_statement(struct slt_run *run,
                                          const struct slt_record *record)
{
    int rc = engine_exec(run->db, record->sql, NULL, NULL);

    if (!record->expect_error) {
        if (rc == 0) {
            return SLT_OUTCOME_PASSED;
        }
        slt_fail_engine(run);
        return SLT_OUTCOME_FAILED;
    }
    if (rc == 0) {
        slt_failf(run, "statement succeeded, error expected");
        return SLT_OUTCOME_FAILED;
    }
    if (strstr(engine_errmsg(run->db), "not supported yet") != NULL) {
        slt_fail_engine(run);
        return SLT_OUTCOME_FAILED;
    }
    return SLT_OUTCOME_PASSED;
}

/* Renders the current row of stmt into values by the record's types. */
static int slt_render_row(struct engine_stmt *stmt,
                          const struct slt_record *record,
                          struct slt_values *values)
{
    char number[SLT_NUMBER_TEXT_SIZE];
    int rc = 0;

    for (size_t i = 0; i < record->type_count && rc == 0; i++) {
        int column = (int)i;
        if (engine_column_type(stmt, column) == ENGINE_NULL) {
            rc = slt_values_append(values, "NULL");
        } else if (record->types[i] == 'I') {
            slt_render_integer(engine_column_int64(stmt, column), number);
            rc = slt_values_append(values, number);
        } else if (record->types[i] == 'R') {
            slt_render_real(engine_column_double(stmt, column), number);
            rc = slt_values_append(values, number);
        } else {
            const char *text = engine_column_text(stmt, column);
            int bytes = engine_column_bytes(stmt, column);
            rc = slt_values_append_text(values, text,
                                        bytes > 0 ? (size_t)bytes : 0);
        }
    }
    return rc;
}

/* Runs the query's SQL; on success values holds the rendered result.
 * An error from a step ends the result there without failing, as in
 * upstream's sqliteQuery() (its loop runs while sqlite3_step() returns
 * SQLITE_ROW): the corpus's expected values were made that way (e.g.
 * evidence/slt_lang_aggfunc.test expects no rows from a sum() that
 * overflows). The message goes to step_error (step_error_size bytes) for
 * the report if the comparison then fails. */
static enum slt_outcome slt_collect(struct slt_run *run,
                                    const struct slt_record *record,
                                    struct slt_values *values, char *step_error,
                                    size_t step_error_size)
{
    struct engine_stmt *stmt = NULL;
    enum slt_outcome outcome = SLT_OUTCOME_FAILED;
    int rc = engine_prepare(run->db, record->sql, -1, &stmt, NULL);

    if (rc != 0) {
        slt_fail_engine(run);
        goto cleanup;
    }
    if (stmt == NULL) {
        slt_failf(run, "query has no SQL statement");
        goto cleanup;
    }
    int columns = engine_column_count(stmt);
    if (columns < 0 || (size_t)columns != record->type_count) {
        slt_failf(run, "wrong number of result columns: expected %zu, got %d",
                  record->type_count, columns);
        goto cleanup;
    }
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        if (values->count >= SLT_RESULT_VALUES_MAX) {
            slt_failf(run, "result too large (over %u values)",
                      SLT_RESULT_VALUES_MAX);
            goto cleanup;
        }
        if (slt_render_row(stmt, record, values) != 0) {
            slt_failf(run, "runner out of memory");
            goto cleanup;
        }
    }
    if (rc != ENGINE_DONE) {
        snprintf(step_error, step_error_size, "%s", engine_errmsg(run->db));
    }
    outcome = SLT_OUTCOME_PASSED;
cleanup:
    engine_finalize(stmt);
    return outcome;
}

/* The hash of a record's expected values: the one its "N values hashing
 * to H" line names, else the MD5 of its lines. */
static void slt_expected_hash(const struct slt_record *record, char *out)
{
    if (record->expected_count == 1 &&
        slt_parse_hash_line(record->expected[0], out)) {
        return;
    }
    slt_values_hash(record->expected, record->expected_count, out);
}

/* Compares the sorted result with the expected lines (values themselves up
 * to the hash threshold, "N values hashing to H" above it). */
static enum slt_outcome slt_compare(struct slt_run *run,
                                    const struct slt_record *record,
                                    const struct slt_values *values,
                                    const char *hash)
{
    if (run->threshold == 0 || values->count <= (size_t)run->threshold) {
        bool same = values->count == record->expected_count;
        for (size_t i = 0; same && i < values->count; i++) {
            same = strcmp(values->items[i], record->expected[i]) == 0;
        }
        if (same) {
            return SLT_OUTCOME_PASSED;
        }
        slt_failf(run, "wrong result");
    } else {
        char line[96];
        snprintf(line, sizeof(line), "%zu values hashing to %s", values->count,
                 hash);
        if (record->expected_count == 1 &&
            strcmp(record->expected[0], line) == 0) {
            return SLT_OUTCOME_PASSED;
        }
        slt_failf(run, "wrong result hash\n  got: %s", line);
    }
    slt_fail_values(run, "expected", record->expected, record->expected_count);
    slt_fail_values(run, "got", values->items, values->count);
    return SLT_OUTCOME_FAILED;
}

/* The label's reference hash; NULL (with a failure text) on no memory. */
static const char *slt_label_reference(struct slt_run *run,
                                       const struct slt_record *record)
{
    char expected[SLT_MD5_HEX_SIZE];
    const char *reference = NULL;

    slt_expected_hash(record, expected);
    if (slt_labels_reference(&run->labels, record->label, expected,
                             &reference) != 0) {
        slt_failf(run, "runner out of memory");
        return NULL;
    }
    return reference;
}

static enum slt_outcome slt_run_query(struct slt_run *run,
                                      const struct slt_record *record)
{
    struct slt_values values;
    char hash[SLT_MD5_HEX_SIZE];
    char step_error[256] = "";
    enum slt_outcome outcome;

    slt_values_init(&values);
    outcome = slt_collect(run, record, &values, step_error, sizeof(step_error));
    if (outcome != SLT_OUTCOME_PASSED) {
        goto cleanup;
    }
    if (slt_values_sort(&values, record->sort, record->type_count) != 0) {
        slt_failf(run, "runner out of memory");
        outcome = SLT_OUTCOME_FAILED;
        goto cleanup;
    }
    slt_values_hash(values.items, values.count, hash);
    if (step_error[0] != '\0') {
        /* Said first, so a failure is grouped by the engine's message. */
        slt_failf(run, "engine error: %s (the result ends there)\n  ",
                  step_error);
    }
    outcome = slt_compare(run, record, &values, hash);
    if (outcome == SLT_OUTCOME_PASSED) {
        common_buf_truncate(&run->failure, 0);
    }
    if (outcome != SLT_OUTCOME_PASSED || record->label == NULL) {
        goto cleanup;
    }
    const char *reference = slt_label_reference(run, record);
    if (reference == NULL || strcmp(reference, hash) != 0) {
        slt_failf(run,
                  "label %s: result differs from the other queries "
                  "with this label",
                  record->label);
        outcome = SLT_OUTCOME_FAILED;
    }
cleanup:
    slt_values_close(&values);
    return outcome;
}

/* One record that is not skipped. */
static enum slt_outcome slt_run_record(struct slt_run *run,
                                       const struct slt_record *record)
{
    switch (record->kind) {
    case SLT_RECORD_STATEMENT:
        return slt_run_statement(run, record);
    case SLT_RECORD_QUERY:
        return slt_run_query(run, record);
    case SLT_RECORD_HASH_THRESHOLD:
        run->threshold = record->threshold;
        return SLT_OUTCOME_DIRECTIVE;
    case SLT_RECORD_HALT:
        return SLT_OUTCOME_HALT;
    case SLT_RECORD_INVALID:
        slt_failf(run, "invalid record: %s", record->invalid_reason);
        return SLT_OUTCOME_FAILED;
    }
    ASSERT(!"unknown record kind");
    return SLT_OUTCOME_FAILED;
}

/* A skipped record: a labelled query still contributes its expected hash
 * to the label (upstream checks it the same way). */
static enum slt_outcome slt_skip_record(struct slt_run *run,
                                        const struct slt_record *record)
{
    if (record->kind == SLT_RECORD_QUERY && record->label != NULL) {
        (void)slt_label_reference(run, record);
    }
    return slt_record_is_test(record) ? SLT_OUTCOME_SKIPPED
                                      : SLT_OUTCOME_DIRECTIVE;
}

/* Reports record i's outcome, with the failure text if it has one. */
static void slt_report(struct slt_run *run, size_t i, enum slt_outcome outcome,
                       slt_outcome_cb cb, void *ctx)
{
    const char *failure = NULL;

    if (outcome == SLT_OUTCOME_FAILED && run->failure.size > 0 &&
        common_buf_append_byte(&run->failure, 0) == 0) {
        failure = (const char *)run->failure.data;
    }
    cb(ctx, i, outcome, failure);
    /* A timeout's text, written before a skipped record, waits for the
     * next failure. */
    if (outcome == SLT_OUTCOME_FAILED) {
        common_buf_truncate(&run->failure, 0);
    }
}

int slt_run_script(const struct slt_script *script,
                   const struct slt_run_options *options, slt_outcome_cb cb,
                   void *ctx)
{
    struct slt_run run = {.threshold = SLT_HASH_THRESHOLD_DEFAULT};
    bool timed_out = false;
    int rc = engine_open(NULL, &run.db);

    if (rc != 0) {
        return rc;
    }
    slt_labels_init(&run.labels);
    common_buf_init(&run.failure, SLT_FAILURE_TEXT_MAX);
    for (size_t i = 0; i < script->record_count; i++) {
        const struct slt_record *record = &script->records[i];
        enum slt_outcome outcome;
        if (!timed_out && options->deadline_ms > 0 &&
            slt_now_ms() >= options->deadline_ms) {
            timed_out = true;
            slt_failf(&run, "timeout: the per-file time limit passed; this "
                            "and every later record count as failed");
        }
        if (record->skipped) {
            outcome = slt_skip_record(&run, record);
        } else if (timed_out) {
            outcome = slt_record_is_test(record) ? SLT_OUTCOME_FAILED
                                                 : SLT_OUTCOME_DIRECTIVE;
        } else {
            outcome = slt_run_record(&run, record);
        }
        slt_report(&run, i, outcome, cb, ctx);
        if (outcome == SLT_OUTCOME_HALT) {
            break;
        }
    }
    common_buf_close(&run.failure);
    slt_labels_close(&run.labels);
    engine_close(run.db);
    return 0;
}
