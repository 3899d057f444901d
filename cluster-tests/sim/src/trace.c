/* SPDX-License-Identifier: MIT
 *
 * trace.c: the run's story (--trace: one line per event, VOPR style) and
 * its trace hash: every event (sim time, node, kind, two numbers) folds
 * into a 64-bit hash, so two runs of one seed that differ anywhere end
 * with different hashes (the sim_determinism test compares them).
 *
 * A line never carries the run's temp dir: mkdtemp names it at random,
 * and a node's log line that quotes a file's path (a Raft store error,
 * an engine open failure) would make the hash differ from run to run.
 * The dir is written "<run>" instead, in the hash and on stdout.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

static uint64_t fold(uint64_t h, uint64_t v)
{
    h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    h *= UINT64_C(0xff51afd7ed558ccd);
    return h ^ (h >> 33);
}

static uint64_t fold_text(uint64_t h, const char *s)
{
    uint64_t v = UINT64_C(0xcbf29ce484222325);

    for (; *s != '\0'; s++) {
        v = (v ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
    }
    return fold(h, v);
}

void sim_trace(struct sim *sim, int node, const char *kind, uint64_t a,
               uint64_t b)
{
    uint64_t h = sim->trace_hash;

    h = fold(h, sim->now_ms);
    h = fold(h, (uint64_t)(int64_t)node);
    h = fold_text(h, kind);
    h = fold(h, a);
    sim->trace_hash = fold(h, b);
    if (sim->options.trace) {
        printf("%8" PRIu64 " n%-2d %-10s %" PRIu64 " %" PRIu64 "\n",
               sim->now_ms, node, kind, a, b);
    }
}

/* Copies line into out (size bytes), each occurrence of dir written
 * "<run>" (dir empty: a plain copy). */
static void redact_dir(const char *line, const char *dir, char *out,
                       size_t size)
{
    size_t dir_len = strlen(dir), used = 0;
    const char *at;

    while (dir_len > 0 && (at = strstr(line, dir)) != NULL) {
        int n = snprintf(out + used, size - used, "%.*s<run>", (int)(at - line),
                         line);

        if (n < 0 || (size_t)n >= size - used) {
            return; /* full: out holds a cut line */
        }
        used += (size_t)n;
        line = at + dir_len;
    }
    snprintf(out + used, size - used, "%s", line);
}

void sim_tracef(struct sim *sim, int node, const char *format, ...)
{
    char raw[512], line[512];
    va_list ap;

    va_start(ap, format);
    vsnprintf(raw, sizeof(raw), format, ap);
    va_end(ap);
    redact_dir(raw, sim->dir, line, sizeof(line));
    sim->trace_hash = fold_text(fold(sim->trace_hash, sim->now_ms), line);
    if (sim->options.trace) {
        printf("%8" PRIu64 " n%-2d %s\n", sim->now_ms, node, line);
    }
}
