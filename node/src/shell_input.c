/* SPDX-License-Identifier: MIT
 *
 * shell_input.c: the shell's line reader. Terminal input goes through
 * libedit's readline() (which allocates each line with malloc(); the line is
 * copied into memory from common_malloc() and released with free(), as
 * libedit requires) and non-blank lines enter the session's history. Other
 * input is read with getc() into a growing buffer, so a line may hold any
 * byte but '\n'.
 */
#include "shell_input.h"

#include <editline/readline.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

void shell_input_init(struct shell_input *input, FILE *stream)
{
    ASSERT(stream != NULL);
    memset(input, 0, sizeof(*input));
    input->stream = stream;
    input->is_interactive = isatty(fileno(stream)) == 1;
}

static int line_reserve(struct shell_input *input, size_t size)
{
    if (size + 1 <= input->capacity) {
        return 0;
    }
    if (size > SHELL_INPUT_LINE_SIZE_MAX) {
        return COMMON_ETOOBIG;
    }
    size_t capacity = input->capacity < 256 ? 256 : input->capacity * 2;
    capacity = capacity < size + 1 ? size + 1 : capacity;
    char *line = common_realloc(input->line, capacity);
    if (line == NULL) {
        return COMMON_ENOMEM;
    }
    input->line = line;
    input->capacity = capacity;
    return 0;
}

static int read_stream_line(struct shell_input *input)
{
    int c = getc(input->stream);
    if (c == EOF) {
        return ferror(input->stream) ? -EIO : 1;
    }
    input->size = 0;
    for (; c != EOF && c != '\n'; c = getc(input->stream)) {
        int rc = line_reserve(input, input->size + 1);
        if (rc != 0) {
            return rc;
        }
        input->line[input->size++] = (char)c;
    }
    int rc = line_reserve(input, input->size);
    if (rc == 0) {
        input->line[input->size] = '\0';
    }
    return rc;
}

static int read_terminal_line(struct shell_input *input, bool is_continuation)
{
    char *edited =
        readline(is_continuation ? SHELL_PROMPT_CONTINUE : SHELL_PROMPT);
    if (edited == NULL) {
        return 1;
    }
    size_t size = strlen(edited);
    int rc = line_reserve(input, size);
    if (rc == 0) {
        memcpy(input->line, edited, size + 1);
        input->size = size;
        if (edited[strspn(edited, " \t\r\f\v")] != '\0') {
            add_history(edited);
        }
    }
    free(edited);
    return rc;
}

int shell_input_read(struct shell_input *input, bool is_continuation)
{
    ASSERT(input->stream != NULL);
    if (input->is_interactive) {
        return read_terminal_line(input, is_continuation);
    }
    return read_stream_line(input);
}

void shell_input_close(struct shell_input *input)
{
    common_free(input->line);
    memset(input, 0, sizeof(*input));
}
