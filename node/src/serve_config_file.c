/* SPDX-License-Identifier: MIT
 *
 * serve_config_file.c: reads `sinew serve`'s configuration file into
 * "name = value" pairs (syntax in serve_config_internal.h). The meaning of
 * each setting, and every check on its value, belongs to
 * serve_config_apply.c; this file knows only lines.
 *
 * The whole file is read into one buffer and each line is cut in place
 * (NULs written over the '=' and after the value), so no line needs an
 * allocation of its own.
 */
#include "serve_config_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "node.h"

/* The longest message a setting callback may write before the reader puts
 * the file and line in front of it. */
#define SERVE_CONFIG_FILE_MESSAGE_SIZE 512

/* Reads all of path into *buf (NUL-terminated, the NUL not counted in
 * buf->size). */
static int read_whole_file(const char *path, struct common_buf *buf,
                           char *error, size_t error_size)
{
    char chunk[4096];
    FILE *file;
    size_t got;
    int rc = 0;

    file = fopen(path, "rb");
    if (file == NULL) {
        snprintf(error, error_size, "cannot read %s: %s", path,
                 strerror(errno));
        return NODE_EINVAL;
    }
    do {
        got = fread(chunk, 1, sizeof(chunk), file);
        rc = common_buf_append(buf, chunk, got);
    } while (rc == 0 && got == sizeof(chunk));
    if (rc == COMMON_ETOOBIG || buf->size > SERVE_CONFIG_FILE_SIZE_MAX) {
        snprintf(error, error_size,
                 "%s is larger than %u bytes; is it the right file?", path,
                 SERVE_CONFIG_FILE_SIZE_MAX);
        rc = NODE_EINVAL;
    } else if (rc != 0) {
        snprintf(error, error_size, "out of memory");
    } else if (ferror(file)) {
        snprintf(error, error_size, "cannot read %s: %s", path,
                 strerror(errno));
        rc = NODE_EINVAL;
    } else {
        rc = common_buf_append_byte(buf, 0);
        if (rc != 0) {
            snprintf(error, error_size, "out of memory");
        } else {
            buf->size--;
        }
    }
    fclose(file);
    return rc;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Drops a comment: from a '#' that starts the line or follows white
 * space, to the end. */
static size_t strip_comment(const char *line, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if (line[i] == '#' && (i == 0 || is_blank(line[i - 1]))) {
            return i;
        }
    }
    return length;
}

/* Moves *start past leading blanks and *end (exclusive) before trailing
 * ones. */
static void trim(char *text, size_t *start, size_t *end)
{
    while (*start < *end && is_blank(text[*start])) {
        (*start)++;
    }
    while (*end > *start && is_blank(text[*end - 1])) {
        (*end)--;
    }
}

/* Cuts one line (length bytes at line, which may be written to, and has a
 * writable byte after it) into name and value, both pointing into line.
 * A line that holds nothing leaves *name NULL. */
static int split_line(char *line, size_t length, char **name, char **value,
                      char *message, size_t message_size)
{
    size_t name_start = 0;
    size_t name_end;
    size_t value_start;
    size_t value_end;
    char *equals;

    *name = NULL;
    if (memchr(line, '\0', length) != NULL) {
        snprintf(message, message_size, "NUL byte in the line");
        return NODE_EINVAL;
    }
    if (length > 0 && line[length - 1] == '\r') {
        length--;
    }
    length = strip_comment(line, length);
    value_end = length;
    trim(line, &name_start, &value_end);
    if (name_start == value_end) {
        return 0;
    }
    equals = memchr(line + name_start, '=', value_end - name_start);
    if (equals == NULL || equals == line + name_start) {
        snprintf(message, message_size,
                 "expected 'name = value' (see sinew serve --help)");
        return NODE_EINVAL;
    }
    name_end = (size_t)(equals - line);
    value_start = name_end + 1;
    trim(line, &name_start, &name_end);
    trim(line, &value_start, &value_end);
    if (value_start < value_end &&
        (line[value_start] == '"' || line[value_start] == '\'')) {
        snprintf(message, message_size,
                 "write the value without quotes (it is taken as written)");
        return NODE_EINVAL;
    }
    line[name_end] = '\0';
    line[value_end] = '\0';
    *name = line + name_start;
    *value = line + value_start;
    return 0;
}

static int read_lines(const char *path, char *text, size_t size,
                      serve_config_file_setting_fn setting, void *ctx,
                      char *error, size_t error_size)
{
    char message[SERVE_CONFIG_FILE_MESSAGE_SIZE];
    size_t offset = 0;
    unsigned line = 0;

    /* A UTF-8 byte order mark, which some editors write, is not part of
     * the first setting's name. */
    if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        offset = 3;
    }
    while (offset < size) {
        char *start = text + offset;
        char *newline = memchr(start, '\n', size - offset);
        size_t length =
            newline != NULL ? (size_t)(newline - start) : size - offset;
        char *name = NULL;
        char *value = NULL;
        int rc;

        line++;
        offset += length + 1;
        message[0] = '\0';
        rc = split_line(start, length, &name, &value, message, sizeof(message));
        if (rc == 0 && name != NULL) {
            rc = setting(ctx, name, value, line, message, sizeof(message));
        }
        if (rc == COMMON_ENOMEM) {
            snprintf(error, error_size, "%s", message);
            return rc;
        }
        if (rc != 0) {
            snprintf(error, error_size, "%s:%u: %s", path, line, message);
            return rc;
        }
    }
    return 0;
}

int serve_config_file_read(const char *path,
                           serve_config_file_setting_fn setting, void *ctx,
                           char *error, size_t error_size)
{
    struct common_buf buf;
    int rc;

    ASSERT(path != NULL);
    ASSERT(setting != NULL);
    ASSERT(error != NULL && error_size > 0);
    /* One byte over the limit, to tell a file of the limit's size from a
     * longer one, and to have room for the terminating NUL. */
    common_buf_init(&buf, SERVE_CONFIG_FILE_SIZE_MAX + 1);
    rc = read_whole_file(path, &buf, error, error_size);
    if (rc != 0) {
        goto out;
    }
    if (buf.size == 0) {
        goto out;
    }
    rc = read_lines(path, (char *)buf.data, buf.size, setting, ctx, error,
                    error_size);
out:
    common_buf_close(&buf);
    return rc;
}
