/* SPDX-License-Identifier: MIT
 *
 * shell_output.c: the output modes of `sinew shell`, ported from the
 * behaviour of the sqlite3 3.40 shell (shell.c.in: shell_callback(),
 * output_csv(), output_json_string(), exec_prepared_stmt_columnar(),
 * translateForDisplayAndDup()) so that the bytes are the same:
 *
 *   - list and csv see a value as a C string: text and blobs end at their
 *     first NUL, as sqlite3_column_text() read through "%s" does;
 *   - csv quotes a field that is empty, holds a byte of needCsvQuote[] (a
 *     control byte, space, '"', '\'', DEL or any byte >= 0x80) or holds the
 *     separator, doubling its '"';
 *   - json prints REALs with "%!.20g", blobs as a JSON string of all their
 *     bytes, and escapes only '"', '\\' and bytes below 0x20;
 *   - box and table measure widths in code points (not display columns),
 *     centre the header, left-align every value, split a value at \n, \r\n
 *     or any other control byte but \t (which goes to the next multiple of 8),
 *     and wrap at config.wrap code points.
 *
 * Writes go through emit(), which latches the first buffer error in
 * output->rc, so the formatting code reads straight through.
 */
#include "shell_output.h"

#include <errno.h>
#include <string.h>

#include "engine.h"

#define BOX_VERTICAL "\342\224\202"   /* U+2502 */
#define BOX_HORIZONTAL "\342\224\200" /* U+2500 */
#define BOX_DOWN_RIGHT "\342\224\214" /* U+250c */
#define BOX_DOWN_LEFT "\342\224\220"  /* U+2510 */
#define BOX_UP_RIGHT "\342\224\224"   /* U+2514 */
#define BOX_UP_LEFT "\342\224\230"    /* U+2518 */
#define BOX_DOWN_HORIZ "\342\224\254" /* U+252c */
#define BOX_UP_HORIZ "\342\224\264"   /* U+2534 */
#define BOX_VERT_RIGHT "\342\224\234" /* U+251c */
#define BOX_VERT_LEFT "\342\224\244"  /* U+2524 */
#define BOX_CROSS "\342\224\274"      /* U+253c */
#define SHELL_NO_WRAP 1000000         /* sqlite3's "no limit" width */

static const char *const mode_names[] = {"list", "csv", "json", "box", "table"};

const char *shell_mode_name(int mode)
{
    ASSERT(mode >= SHELL_MODE_LIST);
    ASSERT(mode <= SHELL_MODE_TABLE);
    return mode_names[mode];
}

int shell_mode_parse(const char *name, int *mode)
{
    ASSERT(name != NULL);
    for (int i = SHELL_MODE_LIST; i <= SHELL_MODE_TABLE; i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *mode = i;
            return 0;
        }
    }
    return -EINVAL;
}

static void emit(struct shell_output *output, const void *bytes, size_t size)
{
    if (output->rc == 0) {
        output->rc = common_buf_append(output->out, bytes, size);
    }
}

static void emit_str(struct shell_output *output, const char *text)
{
    emit(output, text, strlen(text));
}

static void emit_spaces(struct shell_output *output, int count)
{
    for (int i = 0; i < count; i++) {
        emit(output, " ", 1);
    }
}

/* Code points in a C string: bytes that do not continue a UTF-8 sequence
 * (sqlite3's strlenChar()). */
static int char_count(const char *text)
{
    int count = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if ((*p & 0xc0) != 0x80) {
            count++;
        }
    }
    return count;
}

static char *copy_string(const char *text, size_t size)
{
    char *copy = common_malloc(size + 1);
    if (copy != NULL) {
        memcpy(copy, text, size);
        copy[size] = '\0';
    }
    return copy;
}

/* REALs for json: SQLite 3.40 prints them with "%!.20g", whose digits come
 * from printf.c's long double loop (1e300 prints as
 * 1.0000000000000000147e+300); the engine renders with the same loop. */
size_t shell_output_real20(double value, char *out)
{
    return engine_real_to_text_digits(value, 20, out);
}

/* ------------------------------------------------------------------------
 * list, csv and json
 * ------------------------------------------------------------------------ */

/* sqlite3's needCsvQuote[]: control bytes, space, '"', '\'', DEL and every
 * byte >= 0x80. */
static bool csv_byte_needs_quote(unsigned char byte)
{
    return byte <= ' ' || byte == '"' || byte == '\'' || byte >= 0x7f;
}

static void emit_csv_field(struct shell_output *output, const char *text)
{
    if (text == NULL) {
        emit_str(output, output->config.null_value);
        return;
    }
    bool quote = text[0] == '\0' || strstr(text, output->config.separator);
    for (const char *p = text; *p && !quote; p++) {
        quote = csv_byte_needs_quote((unsigned char)*p);
    }
    if (!quote) {
        emit_str(output, text);
        return;
    }
    emit(output, "\"", 1);
    for (const char *p = text; *p; p++) {
        emit(output, p, 1);
        if (*p == '"') {
            emit(output, "\"", 1);
        }
    }
    emit(output, "\"", 1);
}

static void emit_json_string(struct shell_output *output, const char *text,
                             size_t size)
{
    static const char hex[] = "0123456789abcdef";
    emit(output, "\"", 1);
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)text[i];
        const char *escape = c == '\b'   ? "\\b"
                             : c == '\f' ? "\\f"
                             : c == '\n' ? "\\n"
                             : c == '\r' ? "\\r"
                             : c == '\t' ? "\\t"
                             : c == '"'  ? "\\\""
                             : c == '\\' ? "\\\\"
                                         : NULL;
        if (escape != NULL) {
            emit_str(output, escape);
        } else if (c < 0x20) {
            char unicode[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            emit(output, unicode, sizeof(unicode));
        } else {
            emit(output, &text[i], 1);
        }
    }
    emit(output, "\"", 1);
}

static void emit_json_value(struct shell_output *output,
                            const struct shell_value *value)
{
    char real[SHELL_REAL20_SIZE];
    if (value->type == SHELL_VALUE_NULL || value->text == NULL) {
        emit_str(output, "null");
    } else if (value->type == SHELL_VALUE_FLOAT) {
        bool is_inf = value->real > 1.7976931348623157e308 ||
                      value->real < -1.7976931348623157e308;
        const char *inf = value->real > 0 ? "1e999" : "-1e999";
        size_t size = is_inf ? 0 : shell_output_real20(value->real, real);
        emit(output, is_inf ? inf : real, is_inf ? strlen(inf) : size);
    } else if (value->type == SHELL_VALUE_BLOB) {
        emit_json_string(output, value->text, value->size);
    } else if (value->type == SHELL_VALUE_TEXT) {
        emit_json_string(output, value->text, strlen(value->text));
    } else {
        emit_str(output, value->text);
    }
}

static void emit_json_row(struct shell_output *output,
                          const struct shell_value *values)
{
    emit_str(output, output->row_count == 0 ? "[{" : ",\n{");
    for (int i = 0; i < output->column_count; i++) {
        emit_json_string(output, output->names[i], strlen(output->names[i]));
        emit(output, ":", 1);
        emit_json_value(output, &values[i]);
        if (i < output->column_count - 1) {
            emit(output, ",", 1);
        }
    }
    emit(output, "}", 1);
}

/* list and csv: the header before the first row, then the row. */
static void emit_separated_row(struct shell_output *output,
                               const struct shell_value *values)
{
    const struct shell_output_config *config = &output->config;
    bool is_csv = config->mode == SHELL_MODE_CSV;
    int last = output->column_count - 1;
    if (output->row_count == 0 && config->show_header) {
        for (int i = 0; i <= last; i++) {
            if (is_csv) {
                emit_csv_field(output, output->names[i]);
            } else {
                emit_str(output, output->names[i]);
            }
            emit_str(output,
                     i < last ? config->separator : config->row_separator);
        }
    }
    for (int i = 0; i <= last; i++) {
        const char *text = values[i].text;
        if (is_csv) {
            emit_csv_field(output, text);
        } else {
            emit_str(output, text != NULL ? text : config->null_value);
        }
        emit_str(output, i < last ? config->separator : config->row_separator);
    }
}

/* ------------------------------------------------------------------------
 * box and table
 * ------------------------------------------------------------------------ */

/* Counts the bytes of one display line of text and finds where the next
 * begins (sqlite3's translateForDisplayAndDup(), first pass, without word
 * wrap): stops after width code points or at a control byte other than \t;
 * *tail is NULL when no line follows. */
static size_t display_line_measure(const unsigned char *text, int width,
                                   size_t *consumed, const unsigned char **tail)
{
    size_t i = 0;
    size_t out_size = 0;
    int column = 0;
    while (column < width) {
        if (text[i] >= ' ') {
            column++;
            do {
                i++;
                out_size++;
            } while ((text[i] & 0xc0) == 0x80);
        } else if (text[i] == '\t') {
            do {
                column++;
                out_size++;
            } while ((column & 7) != 0 && column < width);
            i++;
        } else {
            break;
        }
    }
    *consumed = i;
    if (column >= width && text[i] >= ' ') {
        *tail = &text[i];
    } else if (text[i] == '\r' && text[i + 1] == '\n') {
        *tail = text[i + 2] ? &text[i + 2] : NULL;
    } else if (text[i] == '\0' || text[i + 1] == '\0') {
        *tail = NULL;
    } else {
        *tail = &text[i + 1];
    }
    return out_size;
}

/* Copies the first display line of text, tabs expanded; NULL when out of
 * memory. */
static char *display_line_dup(const unsigned char *text, int width,
                              const unsigned char **tail)
{
    size_t consumed;
    size_t size = display_line_measure(text, width, &consumed, tail);
    char *line = common_malloc(size + 1);
    if (line == NULL) {
        return NULL;
    }
    size_t j = 0;
    int column = 0;
    for (size_t i = 0; i < consumed; i++) {
        if (text[i] != '\t') {
            column += (text[i] & 0xc0) != 0x80;
            line[j++] = (char)text[i];
            continue;
        }
        do {
            column++;
            line[j++] = ' ';
        } while ((column & 7) != 0 && column < width);
    }
    line[j] = '\0';
    return line;
}

static int cells_reserve(struct shell_output *output, size_t more)
{
    size_t need = output->cell_count + more;
    if (need <= output->cell_capacity) {
        return 0;
    }
    size_t capacity = output->cell_capacity * 2 > need
                          ? output->cell_capacity * 2
                          : need + 16;
    char **cells =
        common_realloc_array(output->cells, capacity, sizeof(*cells));
    if (cells == NULL) {
        return COMMON_ENOMEM;
    }
    output->cells = cells;
    size_t lines = capacity / (size_t)output->column_count + 1;
    bool *ends =
        common_realloc_array(output->line_ends_row, lines, sizeof(*ends));
    if (ends == NULL) {
        return COMMON_ENOMEM;
    }
    output->line_ends_row = ends;
    output->cell_capacity = capacity;
    return 0;
}

static int wrap_width(const struct shell_output *output)
{
    return output->config.wrap > 0 ? output->config.wrap : SHELL_NO_WRAP;
}

/* Appends one display line of the row: from next[i] when continuing,
 * else from the values. Sets *more when some column has text left. */
static int add_display_line(struct shell_output *output,
                            const struct shell_value *values,
                            const unsigned char **next, bool continuing,
                            bool *more)
{
    int rc = cells_reserve(output, (size_t)output->column_count);
    if (rc != 0) {
        return rc;
    }
    *more = false;
    for (int i = 0; i < output->column_count; i++) {
        const char *text =
            values[i].text ? values[i].text : output->config.null_value;
        const unsigned char *source = (const unsigned char *)text;
        if (continuing) {
            source = next[i] ? next[i] : (const unsigned char *)"";
        }
        char *line = display_line_dup(source, wrap_width(output), &next[i]);
        if (line == NULL) {
            return COMMON_ENOMEM;
        }
        output->cells[output->cell_count++] = line;
        *more = *more || next[i] != NULL;
    }
    return 0;
}

static int add_columnar_row(struct shell_output *output,
                            const struct shell_value *values)
{
    const unsigned char **next =
        common_calloc((size_t)output->column_count, sizeof(*next));
    if (next == NULL) {
        return COMMON_ENOMEM;
    }
    bool more = false;
    bool continuing = false;
    int rc = 0;
    do {
        rc = add_display_line(output, values, next, continuing, &more);
        size_t line = output->cell_count / (size_t)output->column_count - 2;
        if (rc == 0) {
            output->line_ends_row[line] = !more;
            output->has_multiline_row = output->has_multiline_row || more;
        }
        continuing = true;
    } while (rc == 0 && more);
    common_free(next);
    return rc;
}

/* A horizontal rule: left, then per column width + 2 fills, joined by
 * middle, then right and a newline. */
static void emit_rule(struct shell_output *output, const int *widths,
                      const char *const parts[4])
{
    emit_str(output, parts[0]);
    for (int i = 0; i < output->column_count; i++) {
        if (i > 0) {
            emit_str(output, parts[1]);
        }
        for (int j = 0; j < widths[i] + 2; j++) {
            emit_str(output, parts[3]);
        }
    }
    emit_str(output, parts[2]);
    emit(output, "\n", 1);
}

static void emit_header(struct shell_output *output, const int *widths)
{
    bool is_box = output->config.mode == SHELL_MODE_BOX;
    const char *bar = is_box ? BOX_VERTICAL : "|";
    emit_str(output, bar);
    emit(output, " ", 1);
    for (int i = 0; i < output->column_count; i++) {
        int pad = widths[i] - char_count(output->cells[i]);
        emit_spaces(output, pad / 2);
        emit_str(output, output->cells[i]);
        emit_spaces(output, (pad + 1) / 2);
        emit(output, " ", 1);
        emit_str(output, bar);
        emit(output, i == output->column_count - 1 ? "\n" : " ", 1);
    }
}

static void emit_body(struct shell_output *output, const int *widths,
                      const char *const middle_rule[4])
{
    bool is_box = output->config.mode == SHELL_MODE_BOX;
    const char *bar = is_box ? BOX_VERTICAL : "|";
    size_t count = (size_t)output->column_count;
    size_t lines = output->cell_count / count - 1;
    for (size_t line = 0; line < lines; line++) {
        char *const *cells = &output->cells[(line + 1) * count];
        for (size_t i = 0; i < count; i++) {
            emit_str(output, i == 0 ? bar : "");
            emit(output, " ", 1);
            emit_str(output, cells[i]);
            emit_spaces(output, widths[i] - char_count(cells[i]));
            emit(output, " ", 1);
            emit_str(output, i == count - 1 ? bar : "");
            emit_str(output, i == count - 1 ? "\n" : bar);
        }
        if (output->has_multiline_row && output->line_ends_row[line] &&
            line + 1 < lines) {
            emit_rule(output, widths, middle_rule);
        }
    }
}

static int emit_columnar(struct shell_output *output)
{
    static const char *const box[3][4] = {
        {BOX_DOWN_RIGHT, BOX_DOWN_HORIZ, BOX_DOWN_LEFT, BOX_HORIZONTAL},
        {BOX_VERT_RIGHT, BOX_CROSS, BOX_VERT_LEFT, BOX_HORIZONTAL},
        {BOX_UP_RIGHT, BOX_UP_HORIZ, BOX_UP_LEFT, BOX_HORIZONTAL},
    };
    static const char *const table[4] = {"+", "+", "+", "-"};
    bool is_box = output->config.mode == SHELL_MODE_BOX;
    int *widths = common_calloc((size_t)output->column_count, sizeof(*widths));
    if (widths == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < output->cell_count; i++) {
        size_t column = i % (size_t)output->column_count;
        int count = char_count(output->cells[i]);
        widths[column] = count > widths[column] ? count : widths[column];
    }
    emit_rule(output, widths, is_box ? box[0] : table);
    emit_header(output, widths);
    emit_rule(output, widths, is_box ? box[1] : table);
    emit_body(output, widths, is_box ? box[1] : table);
    emit_rule(output, widths, is_box ? box[2] : table);
    common_free(widths);
    return output->rc;
}

/* ------------------------------------------------------------------------
 * The result set
 * ------------------------------------------------------------------------ */

static bool is_columnar(int mode)
{
    return mode == SHELL_MODE_BOX || mode == SHELL_MODE_TABLE;
}

/* box and table keep the first display line of each name as line 0. */
static int add_header_line(struct shell_output *output)
{
    int rc = cells_reserve(output, (size_t)output->column_count);
    for (int i = 0; rc == 0 && i < output->column_count; i++) {
        const unsigned char *unused;
        char *line = display_line_dup((const unsigned char *)output->names[i],
                                      wrap_width(output), &unused);
        if (line == NULL) {
            rc = COMMON_ENOMEM;
            break;
        }
        output->cells[output->cell_count++] = line;
    }
    return rc;
}

int shell_output_begin(struct shell_output *output,
                       const struct shell_output_config *config,
                       int column_count, const char *const *names,
                       struct common_buf *out)
{
    ASSERT(config->mode >= SHELL_MODE_LIST);
    ASSERT(config->mode <= SHELL_MODE_TABLE);
    ASSERT(column_count > 0);
    ASSERT(out != NULL);
    memset(output, 0, sizeof(*output));
    output->config = *config;
    output->out = out;
    output->names = common_calloc((size_t)column_count, sizeof(char *));
    if (output->names == NULL) {
        return COMMON_ENOMEM;
    }
    output->column_count = column_count;
    for (int i = 0; i < column_count; i++) {
        const char *name = names[i] != NULL ? names[i] : "";
        output->names[i] = copy_string(name, strlen(name));
        if (output->names[i] == NULL) {
            shell_output_close(output);
            return COMMON_ENOMEM;
        }
    }
    int rc = is_columnar(config->mode) ? add_header_line(output) : 0;
    if (rc != 0) {
        shell_output_close(output);
    }
    return rc;
}

int shell_output_row(struct shell_output *output,
                     const struct shell_value *values)
{
    ASSERT(output->names != NULL);
    ASSERT(values != NULL);
    if (output->rc != 0) {
        return output->rc;
    }
    int rc = 0;
    if (is_columnar(output->config.mode)) {
        rc = add_columnar_row(output, values);
    } else if (output->config.mode == SHELL_MODE_JSON) {
        emit_json_row(output, values);
    } else {
        emit_separated_row(output, values);
    }
    output->row_count++;
    if (rc != 0 && output->rc == 0) {
        output->rc = rc;
    }
    return output->rc;
}

int shell_output_end(struct shell_output *output)
{
    ASSERT(output->names != NULL);
    if (output->rc != 0 || output->row_count == 0) {
        return output->rc;
    }
    if (is_columnar(output->config.mode)) {
        return emit_columnar(output);
    }
    if (output->config.mode == SHELL_MODE_JSON) {
        emit_str(output, "]\n");
    }
    return output->rc;
}

void shell_output_close(struct shell_output *output)
{
    for (int i = 0; output->names != NULL && i < output->column_count; i++) {
        common_free(output->names[i]);
    }
    for (size_t i = 0; i < output->cell_count; i++) {
        common_free(output->cells[i]);
    }
    common_free(output->names);
    common_free(output->cells);
    common_free(output->line_ends_row);
    memset(output, 0, sizeof(*output));
}
