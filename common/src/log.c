/* SPDX-License-Identifier: MIT
 *
 * log.c: formatting for the LOGF macro. Formatting happens only after
 * LOGF has checked the level, into a stack buffer, so logging allocates
 * nothing and a message is handed to the sink whole.
 */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>

const char *common_log_level_name(int level)
{
    switch (level) {
    case COMMON_LOG_DEBUG:
        return "debug";
    case COMMON_LOG_INFO:
        return "info";
    case COMMON_LOG_WARN:
        return "warn";
    case COMMON_LOG_ERROR:
        return "error";
    default:
        return "?";
    }
}

void common__log_emitf(const struct common_log *log, int level,
                       const char *file, int line, const char *format, ...)
{
    char message[COMMON_LOG_MESSAGE_SIZE_MAX];
    va_list args;

    ASSERT(log != NULL);
    ASSERT(log->emit != NULL);
    va_start(args, format);
    /* vsnprintf truncates and always terminates; a negative result (an
     * encoding error) leaves nothing worth sending. */
    if (vsnprintf(message, sizeof(message), format, args) >= 0) {
        log->emit(log->ctx, level, file, line, message);
    }
    va_end(args);
}
