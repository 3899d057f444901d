/* SPDX-License-Identifier: MIT
 *
 * shell_input.h: where `sinew shell` gets its lines. On a terminal it reads
 * through libedit (line editing, history for the session, the prompts
 * "sinew> " and "   ...> "); otherwise it reads plain lines from the
 * stream, without prompts, so piped output holds only results.
 */
#ifndef SINEW_NODE_SHELL_INPUT_H
#define SINEW_NODE_SHELL_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SHELL_PROMPT "sinew> "
#define SHELL_PROMPT_CONTINUE "   ...> "

/* Bytes of one input line, newline excluded; a longer line is an error. */
#define SHELL_INPUT_LINE_SIZE_MAX (1u << 30)

/* A line source. line is owned by the input and valid until the next read
 * or close. */
struct shell_input {
    FILE *stream;        /* borrowed; read when not interactive */
    bool is_interactive; /* true: libedit with prompts */
    char *line;          /* the last line read, NUL-terminated */
    size_t size;         /* bytes of line, newline excluded */
    size_t capacity;     /* bytes allocated at line */
};

/* Reads from stream (borrowed until close); interactive when it is a
 * terminal. */
void shell_input_init(struct shell_input *input, FILE *stream);

/* Reads the next line, prompting with the continuation prompt when
 * is_continuation. Returns 0 with input->line set, 1 at end of input, or
 * COMMON_ENOMEM / COMMON_ETOOBIG / -errno. */
int shell_input_read(struct shell_input *input, bool is_continuation);

void shell_input_close(struct shell_input *input);

#endif /* SINEW_NODE_SHELL_INPUT_H */
