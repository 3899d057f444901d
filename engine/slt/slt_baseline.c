/* SPDX-License-Identifier: MIT
 *
 * slt_baseline.c: the checked-in per-file pass counts (baseline.tsv) that
 * `sinew-slt --baseline` compares a run against, so the fast corpus subset
 * in `make test` fails on a regression while the engine still fails many
 * records it will support later (issue 10).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slt.h"

#define SLT_BASELINE_LINE_MAX 4096

void slt_baseline_init(struct slt_baseline *baseline)
{
    memset(baseline, 0, sizeof(*baseline));
}

void slt_baseline_close(struct slt_baseline *baseline)
{
    for (size_t i = 0; i < baseline->count; i++) {
        common_free(baseline->entries[i].file);
    }
    common_free(baseline->entries);
    memset(baseline, 0, sizeof(*baseline));
}

static struct slt_baseline_entry *
slt_baseline_entry(const struct slt_baseline *baseline, const char *file)
{
    for (size_t i = 0; i < baseline->count; i++) {
        if (strcmp(baseline->entries[i].file, file) == 0) {
            return &baseline->entries[i];
        }
    }
    return NULL;
}

const struct slt_baseline_entry *
slt_baseline_find(const struct slt_baseline *baseline, const char *file)
{
    return slt_baseline_entry(baseline, file);
}

int slt_baseline_set(struct slt_baseline *baseline, const char *file,
                     size_t passed, size_t total)
{
    struct slt_baseline_entry *entry = slt_baseline_entry(baseline, file);

    if (entry == NULL) {
        if (baseline->count == baseline->capacity) {
            size_t grown =
                baseline->capacity == 0 ? 64 : baseline->capacity * 2;
            struct slt_baseline_entry *entries = common_realloc_array(
                baseline->entries, grown, sizeof(*entries));
            if (entries == NULL) {
                return COMMON_ENOMEM;
            }
            baseline->entries = entries;
            baseline->capacity = grown;
        }
        size_t size = strlen(file) + 1;
        char *copy = common_malloc(size);
        if (copy == NULL) {
            return COMMON_ENOMEM;
        }
        memcpy(copy, file, size);
        entry = &baseline->entries[baseline->count++];
        entry->file = copy;
    }
    entry->passed = passed;
    entry->total = total;
    return 0;
}

/* A decimal count ending at *end; false for anything else. */
static bool slt_parse_count(const char *text, char **end, size_t *out)
{
    if (*text < '0' || *text > '9') {
        return false;
    }
    errno = 0;
    unsigned long long value = strtoull(text, end, 10);
    if (errno != 0 || value > SIZE_MAX) {
        return false;
    }
    *out = (size_t)value;
    return true;
}

/* One "file\tpassed\ttotal" line (modified in place). */
static bool slt_baseline_parse_line(char *line, char **file, size_t *passed,
                                    size_t *total)
{
    char *tab = strchr(line, '\t');
    char *end = NULL;

    if (tab == NULL || tab == line) {
        return false;
    }
    *tab = '\0';
    *file = line;
    if (!slt_parse_count(tab + 1, &end, passed) || *end != '\t') {
        return false;
    }
    if (!slt_parse_count(end + 1, &end, total) || *end != '\0') {
        return false;
    }
    return *passed <= *total;
}

int slt_baseline_load(struct slt_baseline *baseline, const char *path,
                      char *error, size_t error_size)
{
    char line[SLT_BASELINE_LINE_MAX];
    int number = 0;
    int rc = 0;
    FILE *in = fopen(path, "r");

    if (in == NULL) {
        rc = -errno;
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return rc;
    }
    while (fgets(line, sizeof(line), in) != NULL) {
        char *file = NULL;
        size_t passed = 0;
        size_t total = 0;
        size_t length = strcspn(line, "\r\n");
        number++;
        if (line[length] == '\0' && !feof(in)) {
            snprintf(error, error_size, "%s:%d: line too long", path, number);
            rc = COMMON_ECORRUPT;
            break;
        }
        line[length] = '\0';
        if (length == 0 || line[0] == '#') {
            continue;
        }
        if (!slt_baseline_parse_line(line, &file, &passed, &total)) {
            snprintf(error, error_size,
                     "%s:%d: expected <file> TAB <passed> TAB <total>, "
                     "passed <= total",
                     path, number);
            rc = COMMON_ECORRUPT;
            break;
        }
        rc = slt_baseline_set(baseline, file, passed, total);
        if (rc != 0) {
            snprintf(error, error_size, "%s: out of memory", path);
            break;
        }
    }
    fclose(in);
    return rc;
}

static int slt_entry_compare(const void *a, const void *b)
{
    const struct slt_baseline_entry *left = a;
    const struct slt_baseline_entry *right = b;

    return strcmp(left->file, right->file);
}

int slt_baseline_write(struct slt_baseline *baseline, const char *path)
{
    char temporary[4096];
    int rc = 0;

    if (snprintf(temporary, sizeof(temporary), "%s.tmp", path) >=
        (int)sizeof(temporary)) {
        return -ENAMETOOLONG;
    }
    if (baseline->count > 1) {
        qsort(baseline->entries, baseline->count, sizeof(*baseline->entries),
              slt_entry_compare);
    }
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        return -errno;
    }
    for (size_t i = 0; i < baseline->count; i++) {
        const struct slt_baseline_entry *entry = &baseline->entries[i];
        fprintf(out, "%s\t%zu\t%zu\n", entry->file, entry->passed,
                entry->total);
    }
    if (ferror(out)) {
        rc = -EIO;
    }
    if (fclose(out) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc == 0 && rename(temporary, path) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        remove(temporary);
    }
    return rc;
}
