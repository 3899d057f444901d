/* SPDX-License-Identifier: MIT
 *
 * serve_log.c: key=value log lines for `sinew serve` (serve_log.h).
 */
#include "serve_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "node.h"

#define SERVE_LOG_MODULES_MAX 16
#define SERVE_LOG_PATH_MAX 4096

struct serve_log_module {
    struct serve_log *log;
    const char *name;
};

struct serve_log {
    pthread_mutex_t lock;
    FILE *file; /* stderr or the opened file */
    char path[SERVE_LOG_PATH_MAX];
    bool to_file;
    int min_level;
    char node[9];
    struct serve_log_module modules[SERVE_LOG_MODULES_MAX];
    size_t module_count;
};

int serve_log_open(const char *path, int min_level, struct serve_log **out,
                   char *error, size_t error_size)
{
    struct serve_log *log = common_calloc(1, sizeof *log);

    *out = NULL;
    if (log == NULL) {
        return COMMON_ENOMEM;
    }
    pthread_mutex_init(&log->lock, NULL);
    log->min_level = min_level;
    snprintf(log->node, sizeof log->node, "-");
    log->file = stderr;
    if (path != NULL) {
        if (strlen(path) >= sizeof log->path) {
            snprintf(error, error_size, "log file path too long");
            goto fail;
        }
        snprintf(log->path, sizeof log->path, "%s", path);
        log->to_file = true;
        log->file = fopen(path, "a");
        if (log->file == NULL) {
            snprintf(error, error_size, "cannot open log file %s: %s", path,
                     strerror(errno));
            goto fail;
        }
    }
    *out = log;
    return 0;
fail:
    pthread_mutex_destroy(&log->lock);
    common_free(log);
    return NODE_EIO;
}

void serve_log_set_node(struct serve_log *log, const char *node_hex)
{
    pthread_mutex_lock(&log->lock);
    snprintf(log->node, sizeof log->node, "%.8s", node_hex);
    pthread_mutex_unlock(&log->lock);
}

/* "words key=value ..." as msg="words" key=value ...: the words are those
 * before the first token holding '='. */
static void write_message(FILE *file, const char *msg)
{
    const char *p = msg, *pairs = NULL;

    while (*p != '\0') {
        const char *word = p;
        while (*p != '\0' && *p != ' ') {
            p++;
        }
        if (memchr(word, '=', (size_t)(p - word)) != NULL) {
            pairs = word;
            break;
        }
        while (*p == ' ') {
            p++;
        }
    }
    size_t words = pairs != NULL ? (size_t)(pairs - msg) : strlen(msg);
    while (words > 0 && msg[words - 1] == ' ') {
        words--;
    }
    fputs(" msg=\"", file);
    for (size_t i = 0; i < words; i++) {
        char c = msg[i];
        fputc(c == '"' ? '\'' : (c == '\n' ? ' ' : c), file);
    }
    fputc('"', file);
    if (pairs != NULL) {
        fputc(' ', file);
        for (; *pairs != '\0'; pairs++) {
            fputc(*pairs == '\n' ? ' ' : *pairs, file);
        }
    }
}

static void emit(void *ctx, int level, const char *file_name, int line,
                 const char *msg)
{
    struct serve_log_module *module = ctx;
    struct serve_log *log = module->log;
    struct timespec now;
    struct tm utc;
    char stamp[32];

    (void)file_name;
    (void)line;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &utc);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    pthread_mutex_lock(&log->lock);
    fprintf(log->file, "time=%s.%03ldZ level=%s node=%s module=%s", stamp,
            now.tv_nsec / 1000000, common_log_level_name(level), log->node,
            module->name);
    write_message(log->file, msg);
    fputc('\n', log->file);
    fflush(log->file);
    pthread_mutex_unlock(&log->lock);
}

void serve_log_sink(struct serve_log *log, const char *name,
                    struct common_log *out)
{
    struct serve_log_module *module = NULL;

    pthread_mutex_lock(&log->lock);
    for (size_t i = 0; i < log->module_count; i++) {
        if (strcmp(log->modules[i].name, name) == 0) {
            module = &log->modules[i];
        }
    }
    if (module == NULL) {
        ASSERT(log->module_count < SERVE_LOG_MODULES_MAX);
        module = &log->modules[log->module_count++];
        module->log = log;
        module->name = name;
    }
    pthread_mutex_unlock(&log->lock);
    *out = (struct common_log){
        .ctx = module, .min_level = log->min_level, .emit = emit};
}

int serve_log_reopen(struct serve_log *log)
{
    int rc = 0;

    if (!log->to_file) {
        return 0;
    }
    pthread_mutex_lock(&log->lock);
    FILE *file = fopen(log->path, "a");
    if (file != NULL) {
        fclose(log->file);
        log->file = file;
    } else {
        rc = NODE_EIO; /* keep writing to the old file */
    }
    pthread_mutex_unlock(&log->lock);
    return rc;
}

void serve_log_close(struct serve_log *log)
{
    if (log == NULL) {
        return;
    }
    if (log->to_file) {
        fclose(log->file);
    }
    pthread_mutex_destroy(&log->lock);
    common_free(log);
}
