/* SPDX-License-Identifier: MIT
 *
 * gen.c: the engine benchmark's seeded generator and its result rendering.
 *
 * musql's harness draws from Go's math/rand seeded 0x5eed; a C suite cannot
 * reproduce that stream without porting it, so, as musql.md section 6.1
 * allows, this one draws the same distributions from splitmix64 (same seed)
 * and accepts other concrete values. Results are rendered with a type tag
 * per value (i:, f:, t:, N), so 3 and 3.0 differ, as musql's check does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_engine.h"

void bench_rng_seed(struct bench_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t bench_rng_next(struct bench_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Rejection sampling: draws that fall in the incomplete last block of n
 * values are redrawn, so every value in [0, n) is equally likely. */
int64_t bench_rng_intn(struct bench_rng *rng, int64_t n)
{
    uint64_t range = (uint64_t)n;
    uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t draw;

    do {
        draw = bench_rng_next(rng);
    } while (draw >= limit);
    return (int64_t)(draw % range);
}

void bench_gen_row(struct bench_rng *rng, int64_t n, int64_t id,
                   struct bench_row *out)
{
    out->id = id;
    out->sec = bench_rng_intn(rng, n);
    out->k = bench_rng_intn(rng, 10);
    out->v = bench_rng_intn(rng, 1000000);
    out->bid = 1 + bench_rng_intn(rng, n);
}

/* ---- rendering ---- */

int bench_out_append(struct bench_out *out, const char *bytes, size_t size)
{
    if (out->len + size + 1 > out->cap) {
        size_t cap = out->cap ? out->cap : 256;
        char *text;

        while (cap < out->len + size + 1) {
            cap *= 2;
        }
        text = realloc(out->text, cap);
        if (text == NULL) {
            return -1;
        }
        out->text = text;
        out->cap = cap;
    }
    memcpy(out->text + out->len, bytes, size);
    out->len += size;
    out->text[out->len] = '\0';
    return 0;
}

int bench_out_int(struct bench_out *out, int64_t value)
{
    char buf[32];
    int size;

    if (!out->render) {
        out->sink += (uint64_t)value;
        return 0;
    }
    size = snprintf(buf, sizeof buf, "i:%" PRId64, value);
    return bench_out_append(out, buf, (size_t)size);
}

/* %.17g: enough digits to tell any two doubles apart. */
int bench_out_real(struct bench_out *out, double value)
{
    char buf[40];
    int size;

    if (!out->render) {
        out->sink += (uint64_t)(int64_t)value;
        return 0;
    }
    size = snprintf(buf, sizeof buf, "f:%.17g", value);
    return bench_out_append(out, buf, (size_t)size);
}

int bench_out_text(struct bench_out *out, const char *text, size_t size)
{
    if (!out->render) {
        out->sink += size + (size ? (unsigned char)text[0] : 0);
        return 0;
    }
    if (bench_out_append(out, "t:", 2) != 0) {
        return -1;
    }
    return bench_out_append(out, text, size);
}

int bench_out_null(struct bench_out *out)
{
    if (!out->render) {
        out->sink++;
        return 0;
    }
    return bench_out_append(out, "N", 1);
}

int bench_out_column_end(struct bench_out *out, bool last)
{
    if (!out->render) {
        return 0;
    }
    return bench_out_append(out, last ? "\n" : "|", 1);
}

void bench_out_reset(struct bench_out *out)
{
    out->len = 0;
    if (out->text != NULL) {
        out->text[0] = '\0';
    }
}

void bench_out_free(struct bench_out *out)
{
    free(out->text);
    out->text = NULL;
    out->len = out->cap = 0;
}

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int bench_out_sort_lines(struct bench_out *out)
{
    size_t count = 0, i, at = 0;
    char **lines = NULL, *copy = NULL, *line;
    int rc = -1;

    if (out->len == 0) {
        return 0;
    }
    for (i = 0; i < out->len; i++) {
        count += out->text[i] == '\n';
    }
    copy = malloc(out->len + 1);
    lines = malloc((count + 1) * sizeof *lines);
    if (copy == NULL || lines == NULL) {
        goto cleanup;
    }
    memcpy(copy, out->text, out->len + 1);
    count = 0;
    for (line = strtok(copy, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        lines[count++] = line;
    }
    qsort(lines, count, sizeof *lines, compare_lines);
    for (i = 0; i < count; i++) {
        size_t size = strlen(lines[i]);

        memcpy(out->text + at, lines[i], size);
        at += size;
        out->text[at++] = '\n';
    }
    rc = 0;
cleanup:
    free(lines);
    free(copy);
    return rc;
}
