/* SPDX-License-Identifier: MIT
 *
 * transfer_progress.c: the progress bar of import and export, one line per
 * table redrawn in place on a terminal:
 *
 *     importing t1  [##########..........]  52%  120000/230000 rows
 *
 * Redrawn at most every TRANSFER_PROGRESS_INTERVAL_MS (a terminal that
 * repaints per row would cost more than the copy), and only when the
 * caller passes a stream: transfer_main() passes standard error only when
 * it is a terminal, so logs and pipes never see carriage returns.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "transfer_int.h"

/* A table name longer than this is cut, so the line fits 80 columns. */
#define TRANSFER_PROGRESS_NAME_MAX 24

void transfer_progress_format(char *out, size_t size, const char *verb,
                              const char *table, int64_t done, int64_t total)
{
    ASSERT(size > 0);
    int64_t percent = 100;
    if (total > 0 && done < total) {
        percent = (int64_t)((double)done * 100.0 / (double)total);
    }
    if (total < done) {
        total = done; /* rows written while we read count too */
    }
    char bar[TRANSFER_PROGRESS_BAR_WIDTH + 1];
    int64_t filled = percent * TRANSFER_PROGRESS_BAR_WIDTH / 100;
    for (int64_t i = 0; i < TRANSFER_PROGRESS_BAR_WIDTH; i++) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[TRANSFER_PROGRESS_BAR_WIDTH] = '\0';
    bool is_long = strlen(table) > TRANSFER_PROGRESS_NAME_MAX;
    snprintf(out, size,
             "%s %.*s%s  [%s]  %3" PRId64 "%%  %" PRId64 "/%" PRId64 " rows",
             verb, TRANSFER_PROGRESS_NAME_MAX - (is_long ? 3 : 0), table,
             is_long ? "..." : "", bar, percent, done, total);
}

static int64_t elapsed_ms(const struct timespec *from,
                          const struct timespec *to)
{
    return (int64_t)(to->tv_sec - from->tv_sec) * 1000 +
           (to->tv_nsec - from->tv_nsec) / 1000000;
}

/* "\r", the line, and "erase to the end of the line" (ECMA-48 EL). */
static void draw(struct transfer_progress *progress, int64_t done)
{
    char line[TRANSFER_PROGRESS_LINE_SIZE];
    transfer_progress_format(line, sizeof(line), progress->verb,
                             progress->table, done, progress->total);
    fprintf(progress->stream, "\r%s\033[K", line);
    fflush(progress->stream);
}

void transfer_progress_begin(struct transfer_progress *progress, FILE *stream,
                             const char *verb, const char *table, int64_t total)
{
    progress->stream = stream;
    progress->verb = verb;
    progress->table = table;
    progress->total = total;
    clock_gettime(CLOCK_MONOTONIC, &progress->last_drawn);
    if (stream != NULL) {
        draw(progress, 0);
    }
}

void transfer_progress_update(struct transfer_progress *progress, int64_t done)
{
    /* Asking the clock only every 256 rows keeps it off the row path. */
    if (progress->stream == NULL || done % 256 != 0) {
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (elapsed_ms(&progress->last_drawn, &now) >=
        TRANSFER_PROGRESS_INTERVAL_MS) {
        progress->last_drawn = now;
        draw(progress, done);
    }
}

void transfer_progress_end(struct transfer_progress *progress, int64_t done)
{
    if (progress->stream == NULL) {
        return;
    }
    draw(progress, done);
    fputc('\n', progress->stream);
    fflush(progress->stream);
}
