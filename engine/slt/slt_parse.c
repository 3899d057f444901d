/* SPDX-License-Identifier: MIT
 *
 * slt_parse.c: a sqllogictest file's bytes to records.
 *
 * The rules are upstream's (src/sqllogictest.c: nextLine, nextIsBlank,
 * findStartOfNextRecord, tokenizeLine; ../shared/reference/
 * sqlcorpus-and-protocol.md A2):
 *   - a trailing "\r" is dropped; a line of only white space is blank;
 *   - a line starting with '#' is a comment and vanishes: it neither
 *     separates records nor counts as a result value;
 *   - records are runs of non-blank lines;
 *   - leading "skipif <db>" / "onlyif <db>" lines are conditions;
 *   - the head line's first four white-space separated tokens say what
 *     the record is; a statement's SQL is every later line, a query's SQL
 *     runs up to a "----" line and its expected values follow it.
 * Unlike upstream, a record it cannot understand does not stop the file:
 * it becomes SLT_RECORD_INVALID and the next record is read.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slt.h"

#define SLT_TOKENS_MAX 4

static bool slt_is_space(char c)
{
    return isspace((unsigned char)c) != 0;
}

/* Splits text (owned by the script, NUL-terminated at text[size]) into
 * lines in place and keeps the non-comment ones in script->lines, blank
 * ones as "". numbers (owned by the caller) gets each kept line's number. */
static int slt_split_lines(struct slt_script *script, size_t size,
                           int **numbers)
{
    size_t capacity = 1;
    char *text = script->text;

    for (size_t i = 0; i < size; i++) {
        capacity += text[i] == '\n';
    }
    if (capacity > INT_MAX) {
        return COMMON_ETOOBIG;
    }
    script->lines = common_malloc_array(capacity, sizeof(*script->lines));
    *numbers = common_malloc_array(capacity, sizeof(**numbers));
    if (script->lines == NULL || *numbers == NULL) {
        return COMMON_ENOMEM;
    }
    int number = 0;
    for (size_t start = 0; start < size;) {
        size_t end = start;
        while (end < size && text[end] != '\n') {
            end++;
        }
        number++;
        text[end] = '\0';
        if (end > start && text[end - 1] == '\r') {
            text[end - 1] = '\0';
        }
        char *line = text + start;
        size_t blank = 0;
        while (line[blank] != '\0' && slt_is_space(line[blank])) {
            blank++;
        }
        if (line[blank] == '\0') {
            line[0] = '\0';
        }
        if (line[0] != '#') {
            (*numbers)[script->line_count] = number;
            script->lines[script->line_count++] = line;
        }
        start = end + 1;
    }
    return 0;
}

/* Cuts line (owned, modified in place) into up to SLT_TOKENS_MAX tokens;
 * missing ones are "". */
static void slt_tokenize(char *line, const char *tokens[SLT_TOKENS_MAX])
{
    size_t count = 0;
    char *p = line;

    for (size_t i = 0; i < SLT_TOKENS_MAX; i++) {
        tokens[i] = "";
    }
    while (count < SLT_TOKENS_MAX) {
        while (*p != '\0' && slt_is_space(*p)) {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        tokens[count++] = p;
        while (*p != '\0' && !slt_is_space(*p)) {
            p++;
        }
        if (*p != '\0') {
            *p++ = '\0';
        }
    }
}

/* Joins lines[0..count) (borrowed) with "\n" into *out (owned by the
 * caller). */
static int slt_join_sql(char *const *lines, size_t count, char **out)
{
    size_t size = 1;

    for (size_t i = 0; i < count; i++) {
        size += strlen(lines[i]) + 1;
    }
    char *sql = common_malloc(size);
    if (sql == NULL) {
        return COMMON_ENOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        size_t length = strlen(lines[i]);
        if (i > 0) {
            sql[used++] = '\n';
        }
        memcpy(sql + used, lines[i], length);
        used += length;
    }
    sql[used] = '\0';
    *out = sql;
    return 0;
}

static bool slt_types_valid(const char *types)
{
    if (types[0] == '\0') {
        return false;
    }
    for (const char *p = types; *p != '\0'; p++) {
        if (*p != 'I' && *p != 'T' && *p != 'R') {
            return false;
        }
    }
    return true;
}

static int slt_parse_sort(const char *token, enum slt_sort *out)
{
    if (token[0] == '\0' || strcmp(token, "nosort") == 0) {
        *out = SLT_SORT_NONE;
    } else if (strcmp(token, "rowsort") == 0) {
        *out = SLT_SORT_ROWS;
    } else if (strcmp(token, "valuesort") == 0) {
        *out = SLT_SORT_VALUES;
    } else {
        return -1;
    }
    return 0;
}

/* A query record: head tokens, then body[0..count) (borrowed lines). */
static int slt_parse_query(struct slt_record *record,
                           const char *tokens[SLT_TOKENS_MAX], char **body,
                           size_t count)
{
    if (!slt_types_valid(tokens[1])) {
        record->kind = SLT_RECORD_INVALID;
        record->invalid_reason = "query: missing or unknown type letters "
                                 "(one of I, T, R per column)";
        return 0;
    }
    if (slt_parse_sort(tokens[2], &record->sort) != 0) {
        record->kind = SLT_RECORD_INVALID;
        record->invalid_reason =
            "query: unknown sort mode (nosort, rowsort or valuesort)";
        return 0;
    }
    record->types = tokens[1];
    record->type_count = strlen(tokens[1]);
    record->label = tokens[3][0] != '\0' ? tokens[3] : NULL;
    size_t sql_count = 0;
    while (sql_count < count && strcmp(body[sql_count], "----") != 0) {
        sql_count++;
    }
    if (sql_count < count) {
        record->expected = body + sql_count + 1;
        record->expected_count = count - sql_count - 1;
    }
    return slt_join_sql(body, sql_count, &record->sql);
}

static void slt_parse_threshold(struct slt_record *record, const char *token)
{
    char *end = NULL;
    long value;

    errno = 0;
    value = strtol(token, &end, 10);
    if (token[0] == '\0' || *end != '\0' || errno != 0 || value < 0) {
        record->kind = SLT_RECORD_INVALID;
        record->invalid_reason = "hash-threshold: not a non-negative number";
        return;
    }
    record->threshold = value;
}

/* Fills record from its head line and body (lines borrowed from the
 * script; the head is tokenized in place). */
static int slt_parse_head(struct slt_record *record, char *head, char **body,
                          size_t count)
{
    const char *tokens[SLT_TOKENS_MAX];

    slt_tokenize(head, tokens);
    if (strcmp(tokens[0], "statement") == 0) {
        record->kind = SLT_RECORD_STATEMENT;
        if (strcmp(tokens[1], "ok") != 0 && strcmp(tokens[1], "error") != 0) {
            record->kind = SLT_RECORD_INVALID;
            record->invalid_reason =
                "statement argument should be 'ok' or 'error'";
            return 0;
        }
        record->expect_error = strcmp(tokens[1], "error") == 0;
        return slt_join_sql(body, count, &record->sql);
    }
    if (strcmp(tokens[0], "query") == 0) {
        record->kind = SLT_RECORD_QUERY;
        return slt_parse_query(record, tokens, body, count);
    }
    if (strcmp(tokens[0], "hash-threshold") == 0) {
        record->kind = SLT_RECORD_HASH_THRESHOLD;
        slt_parse_threshold(record, tokens[1]);
        return 0;
    }
    if (strcmp(tokens[0], "halt") == 0) {
        record->kind = SLT_RECORD_HALT;
        return 0;
    }
    record->kind = SLT_RECORD_INVALID;
    record->invalid_reason = "unknown record type";
    return 0;
}

/* Reads the conditions at lines[0..count) (tokenized in place) into
 * record->skipped; returns how many lines they took. */
static size_t slt_parse_conditions(struct slt_record *record, char **lines,
                                   size_t count)
{
    size_t used = 0;

    while (used < count) {
        const char *tokens[SLT_TOKENS_MAX];
        bool is_skipif = strncmp(lines[used], "skipif", 6) == 0;
        bool is_onlyif = strncmp(lines[used], "onlyif", 6) == 0;
        if (!is_skipif && !is_onlyif) {
            break;
        }
        if (lines[used][6] != '\0' && !slt_is_space(lines[used][6])) {
            break;
        }
        slt_tokenize(lines[used], tokens);
        bool match = strcasecmp(tokens[1], SLT_ENGINE_NAME) == 0;
        if (is_skipif ? match : !match) {
            record->skipped = true;
        }
        used++;
    }
    return used;
}

/* One record from the lines [first, first + count) of the script. */
static int slt_parse_record(struct slt_script *script, const int *numbers,
                            size_t first, size_t count,
                            struct slt_record *record)
{
    char **lines = script->lines + first;

    memset(record, 0, sizeof(*record));
    size_t used = slt_parse_conditions(record, lines, count);
    if (used == count) {
        record->kind = SLT_RECORD_INVALID;
        record->line = numbers[first + count - 1];
        record->invalid_reason = "skipif/onlyif without a record after it";
        return 0;
    }
    record->line = numbers[first + used];
    return slt_parse_head(record, lines[used], script->lines + first + used + 1,
                          count - used - 1);
}

static int slt_parse_records(struct slt_script *script, const int *numbers)
{
    size_t capacity = 0;

    for (size_t i = 0; i < script->line_count;) {
        if (script->lines[i][0] == '\0') {
            i++;
            continue;
        }
        size_t count = 0;
        while (i + count < script->line_count &&
               script->lines[i + count][0] != '\0') {
            count++;
        }
        if (script->record_count == capacity) {
            size_t grown = capacity == 0 ? 64 : capacity * 2;
            struct slt_record *records =
                common_realloc_array(script->records, grown, sizeof(*records));
            if (records == NULL) {
                return COMMON_ENOMEM;
            }
            script->records = records;
            capacity = grown;
        }
        struct slt_record *record = &script->records[script->record_count];
        int rc = slt_parse_record(script, numbers, i, count, record);
        if (rc != 0) {
            return rc;
        }
        script->record_count++;
        i += count;
    }
    return 0;
}

int slt_parse(const char *text, size_t size, struct slt_script *out)
{
    int *numbers = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (size >= SIZE_MAX - 1) {
        return COMMON_ETOOBIG;
    }
    out->text = common_malloc(size + 1);
    if (out->text == NULL) {
        return COMMON_ENOMEM;
    }
    if (size > 0) {
        memcpy(out->text, text, size);
    }
    out->text[size] = '\0';
    rc = slt_split_lines(out, size, &numbers);
    if (rc == 0) {
        rc = slt_parse_records(out, numbers);
    }
    common_free(numbers);
    if (rc != 0) {
        slt_script_free(out);
    }
    return rc;
}

void slt_script_free(struct slt_script *script)
{
    for (size_t i = 0; i < script->record_count; i++) {
        common_free(script->records[i].sql);
    }
    common_free(script->records);
    common_free(script->lines);
    common_free(script->text);
    memset(script, 0, sizeof(*script));
}

bool slt_record_is_test(const struct slt_record *record)
{
    return record->kind == SLT_RECORD_STATEMENT ||
           record->kind == SLT_RECORD_QUERY ||
           record->kind == SLT_RECORD_INVALID;
}
