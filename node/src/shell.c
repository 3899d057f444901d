/* SPDX-License-Identifier: MIT
 *
 * shell.c: `sinew shell`. Reads SQL from -c or standard input, collects
 * lines until they hold a complete statement (shell_complete.h), runs each
 * statement through a backend (shell_backend.h: the engine on a local file,
 * or a sinew node over HTTP) and prints its rows with shell_output.h; lines
 * that start with '.' between statements are dot commands (.mode, .headers,
 * .tables, .schema, .timer ...), parsed and answered as sqlite3 3.40
 * answers them. .tables and .schema query sqlite_schema through the same
 * backend, so they work on a node too.
 *
 * Errors: a failed statement prints "Error: <message>" on standard error
 * and the shell goes on with the next statement (sqlite3 prints "Parse
 * error near line N" instead and skips the rest of the line; see
 * docs/shell.md). Any failure makes the exit status 1.
 */
#include "shell.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "common.h"
#include "engine.h"
#include "shell_backend.h"
#include "shell_complete.h"
#include "shell_input.h"
#include "shell_output.h"

#define SHELL_SQL_SIZE_MAX ((size_t)ENGINE_MAX_SQL_SIZE)
#define SHELL_OUTPUT_SIZE_MAX ((size_t)1 << 31) /* one buffered table */
#define SHELL_DOT_ARGS_MAX 8 /* words of one dot command that are kept */

/* The session. The config's strings point at the arrays below. */
struct shell {
    struct shell_backend backend;
    struct shell_output_config config;
    char separator[SHELL_SEPARATOR_SIZE_MAX];
    char row_separator[SHELL_SEPARATOR_SIZE_MAX];
    char null_value[SHELL_NULL_VALUE_SIZE_MAX];
    bool is_timer_on;           /* .timer on: "Run Time:" after each input */
    bool has_failed;            /* a statement or dot command failed: exit 1 */
    bool is_done;               /* .quit or .exit */
    int exit_code;              /* .exit's code */
    struct common_buf out;      /* formatted bytes not yet written */
    struct shell_output output; /* the result set being printed */
};

static void set_text(char *field, size_t size, const char *text)
{
    snprintf(field, size, "%s", text);
}

static void shell_init(struct shell *shell)
{
    memset(shell, 0, sizeof(*shell));
    set_text(shell->separator, sizeof(shell->separator), "|");
    set_text(shell->row_separator, sizeof(shell->row_separator), "\n");
    shell->config.mode = SHELL_MODE_LIST;
    shell->config.separator = shell->separator;
    shell->config.row_separator = shell->row_separator;
    shell->config.null_value = shell->null_value;
    common_buf_init(&shell->out, SHELL_OUTPUT_SIZE_MAX);
}

static void report_error(struct shell *shell, const char *message)
{
    fprintf(stderr, "Error: %s\n", message);
    shell->has_failed = true;
}

static void flush_output(struct shell *shell)
{
    if (shell->out.size > 0) {
        fwrite(shell->out.data, 1, shell->out.size, stdout);
        common_buf_truncate(&shell->out, 0);
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------------
 * Running statements
 * ------------------------------------------------------------------------ */

/* The sink that prints a backend's result sets (shell_backend.h). list,
 * csv and json rows go out as they come; box and table wait for the end. */
static int sink_begin(void *ctx, int column_count, const char *const *names)
{
    struct shell *shell = ctx;
    return shell_output_begin(&shell->output, &shell->config, column_count,
                              names, &shell->out);
}

static int sink_row(void *ctx, const struct shell_value *values)
{
    struct shell *shell = ctx;
    int rc = shell_output_row(&shell->output, values);
    if (rc == 0 && shell->config.mode != SHELL_MODE_BOX &&
        shell->config.mode != SHELL_MODE_TABLE) {
        flush_output(shell);
    }
    return rc;
}

static int sink_end(void *ctx)
{
    struct shell *shell = ctx;
    int rc = shell_output_end(&shell->output);
    shell_output_close(&shell->output);
    flush_output(shell);
    return rc;
}

/* Reports a failed statement or query: "Error: <message>", or, when the
 * backend says nothing later can succeed, its message alone and the end
 * of the session. */
static void report_run_error(struct shell *shell, int rc)
{
    const struct shell_backend *backend = &shell->backend;
    const char *text = backend->ops->error_text(backend->state, rc);
    if (backend->ops->is_fatal(backend->state, rc)) {
        fprintf(stderr, "%s\n", text);
        shell->has_failed = true;
        shell->is_done = true;
        return;
    }
    report_error(shell, text);
}

static bool is_blank(const char *text, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (strchr(" \t\n\r\f\v", text[i]) == NULL || text[i] == '\0') {
            return false;
        }
    }
    return true;
}

static double seconds_between(struct timeval from, struct timeval to)
{
    return (double)(to.tv_usec - from.tv_usec) * 0.000001 +
           (double)(to.tv_sec - from.tv_sec);
}

/* Runs every statement of sql: split at the ends the completeness rule
 * finds, so an error in one does not stop the next. */
static void run_sql(struct shell *shell, const char *sql, size_t size)
{
    struct rusage usage_before;
    struct rusage usage_after;
    struct timeval wall_before;
    struct timeval wall_after;
    getrusage(RUSAGE_SELF, &usage_before);
    gettimeofday(&wall_before, NULL);
    const struct shell_sink sink = {
        .ctx = shell, .begin = sink_begin, .row = sink_row, .end = sink_end};
    while (size > 0 && !shell->is_done) {
        size_t piece = shell_statement_size(sql, size);
        ASSERT(piece > 0);
        int rc = shell->backend.ops->run(shell->backend.state, sql, piece, NULL,
                                         &sink);
        if (rc != 0) {
            report_run_error(shell, rc);
        }
        sql += piece;
        size -= piece;
    }
    if (shell->is_timer_on) {
        getrusage(RUSAGE_SELF, &usage_after);
        gettimeofday(&wall_after, NULL);
        printf("Run Time: real %.3f user %f sys %f\n",
               seconds_between(wall_before, wall_after),
               seconds_between(usage_before.ru_utime, usage_after.ru_utime),
               seconds_between(usage_before.ru_stime, usage_after.ru_stime));
        fflush(stdout);
    }
}

/* ------------------------------------------------------------------------
 * Dot commands
 * ------------------------------------------------------------------------ */

/* A dot command's words, split in place as sqlite3 splits them: white
 * space separates, '...' and "..." group (in "..." \t, \n, \r, \\ and \"
 * are escapes). */
struct shell_dot {
    char *words[SHELL_DOT_ARGS_MAX];
    int count;
};

static char unescape(char c)
{
    return c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
}

static char *split_quoted(char *p, char **word)
{
    char quote = *p++;
    char *out = p;
    *word = p;
    while (*p != '\0' && *p != quote) {
        if (quote == '"' && *p == '\\' && p[1] != '\0') {
            p++;
            *out++ = unescape(*p++);
        } else {
            *out++ = *p++;
        }
    }
    if (*p != '\0') {
        p++;
    }
    *out = '\0';
    return p;
}

static void dot_split(char *line, struct shell_dot *dot)
{
    char *p = line + 1; /* after the '.' */
    dot->count = 0;
    while (dot->count < SHELL_DOT_ARGS_MAX) {
        p += strspn(p, " \t\r\n\f\v");
        if (*p == '\0') {
            break;
        }
        if (*p == '\'' || *p == '"') {
            p = split_quoted(p, &dot->words[dot->count++]);
            continue;
        }
        dot->words[dot->count++] = p;
        p += strcspn(p, " \t\r\n\f\v");
        if (*p != '\0') {
            *p++ = '\0';
        }
    }
}

/* sqlite3's booleanValue(): on/yes/true, off/no/false, or a number. */
static bool boolean_value(const char *text)
{
    static const char *const yes[] = {"on", "yes", "true"};
    static const char *const no[] = {"off", "no", "false"};
    char *end;
    long number = strtol(text, &end, 10);
    if (end != text && *end == '\0') {
        return number != 0;
    }
    for (size_t i = 0; i < 3; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            return true;
        }
        if (strcasecmp(text, no[i]) == 0) {
            return false;
        }
    }
    fprintf(stderr, "ERROR: Not a boolean value: \"%s\". Assuming \"no\".\n",
            text);
    return false;
}

static int usage(const char *text)
{
    fprintf(stderr, "Usage: %s\n", text);
    return -EINVAL;
}

static int dot_mode(struct shell *shell, const struct shell_dot *dot)
{
    struct shell_output_config *config = &shell->config;
    if (dot->count < 2) {
        if (config->mode == SHELL_MODE_BOX ||
            config->mode == SHELL_MODE_TABLE) {
            printf("current output mode: %s --wrap %d --wordwrap off "
                   "--noquote\n",
                   shell_mode_name(config->mode), config->wrap);
        } else {
            printf("current output mode: %s\n", shell_mode_name(config->mode));
        }
        return 0;
    }
    int mode;
    if (dot->count > 2 || shell_mode_parse(dot->words[1], &mode) != 0) {
        fprintf(stderr, "Error: mode should be one of: box csv json list "
                        "table\n");
        return -EINVAL;
    }
    config->mode = mode;
    if (mode == SHELL_MODE_LIST || mode == SHELL_MODE_CSV) {
        set_text(shell->separator, sizeof(shell->separator),
                 mode == SHELL_MODE_LIST ? "|" : ",");
        set_text(shell->row_separator, sizeof(shell->row_separator),
                 mode == SHELL_MODE_LIST ? "\n" : "\r\n");
    }
    config->wrap = mode == SHELL_MODE_BOX || mode == SHELL_MODE_TABLE ? 60 : 0;
    return 0;
}

/* Prints names in columns as sqlite3's .tables does: as many columns of
 * width maxlen + 2 as fit in 80, filled top to bottom. */
static void print_in_columns(char **names, int count)
{
    int max_size = 0;
    for (int i = 0; i < count; i++) {
        int size = (int)strlen(names[i]);
        max_size = size > max_size ? size : max_size;
    }
    int columns = 80 / (max_size + 2);
    columns = columns < 1 ? 1 : columns;
    int rows = (count + columns - 1) / columns;
    for (int i = 0; i < rows; i++) {
        for (int j = i; j < count; j += rows) {
            printf("%s%-*s", j < rows ? "" : "  ", max_size, names[j]);
        }
        printf("\n");
    }
}

/* The first column of every row of query, with ?1 bound to pattern when
 * pattern is not NULL, as copies in a NULL-free array the caller frees
 * with free_strings(). */
struct shell_strings {
    char **items;
    int count;
    int capacity;
};

static void free_strings(struct shell_strings *strings)
{
    for (int i = 0; i < strings->count; i++) {
        common_free(strings->items[i]);
    }
    common_free(strings->items);
    memset(strings, 0, sizeof(*strings));
}

static int push_string(struct shell_strings *strings, const char *text)
{
    if (strings->count == strings->capacity) {
        int capacity = strings->capacity * 2 + 16;
        char **items = common_realloc_array(strings->items, (size_t)capacity,
                                            sizeof(*items));
        if (items == NULL) {
            return COMMON_ENOMEM;
        }
        strings->items = items;
        strings->capacity = capacity;
    }
    size_t size = strlen(text);
    char *copy = common_malloc(size + 1);
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(copy, text, size + 1);
    strings->items[strings->count++] = copy;
    return 0;
}

static int strings_begin(void *ctx, int column_count, const char *const *names)
{
    (void)ctx;
    (void)column_count;
    (void)names;
    return 0;
}

static int strings_row(void *ctx, const struct shell_value *values)
{
    return push_string(ctx, values[0].text != NULL ? values[0].text : "");
}

static int strings_end(void *ctx)
{
    (void)ctx;
    return 0;
}

static int query_strings(struct shell *shell, const char *query,
                         const char *pattern, struct shell_strings *strings)
{
    const struct shell_sink sink = {.ctx = strings,
                                    .begin = strings_begin,
                                    .row = strings_row,
                                    .end = strings_end};
    int rc = shell->backend.ops->run(shell->backend.state, query, strlen(query),
                                     pattern, &sink);
    if (rc != 0) {
        report_run_error(shell, rc);
    }
    return rc;
}

static int dot_tables(struct shell *shell, const struct shell_dot *dot)
{
    struct shell_strings names = {0};
    int rc = query_strings(shell,
                           "SELECT name FROM sqlite_schema WHERE type IN "
                           "('table','view') AND name NOT LIKE 'sqlite_%' "
                           "AND name LIKE ?1 ORDER BY 1",
                           dot->count > 1 ? dot->words[1] : "%", &names);
    if (rc == 0 && names.count > 0) {
        print_in_columns(names.items, names.count);
    }
    free_strings(&names);
    return rc;
}

static int dot_schema(struct shell *shell, const struct shell_dot *dot)
{
    if (dot->count > 2) {
        return usage(".schema ?TABLE?");
    }
    struct shell_strings sql = {0};
    int rc = query_strings(shell,
                           "SELECT sql FROM sqlite_schema WHERE sql IS NOT "
                           "NULL AND tbl_name LIKE ?1",
                           dot->count > 1 ? dot->words[1] : "%", &sql);
    for (int i = 0; rc == 0 && i < sql.count; i++) {
        printf("%s;\n", sql.items[i]);
    }
    free_strings(&sql);
    return rc;
}

static void dot_help(void)
{
    printf(".exit ?CODE?             Exit this program with return-code CODE\n"
           ".headers on|off          Turn display of headers on or off\n"
           ".help                    Show this message\n"
           ".mode ?MODE?             Set output mode: box csv json list "
           "table\n"
           ".nullvalue STRING        Use STRING in place of NULL values\n"
           ".quit                    Exit this program\n"
           ".schema ?TABLE?          Show the CREATE statements\n"
           ".separator COL ?ROW?     Change the column and row separators\n"
           ".tables ?PATTERN?        List names of tables matching a LIKE "
           "pattern\n"
           ".timer on|off            Turn SQL timer on or off\n");
}

static int dot_setting(struct shell *shell, const struct shell_dot *dot)
{
    const char *name = dot->words[0];
    if (strcmp(name, "headers") == 0 || strcmp(name, "header") == 0) {
        if (dot->count != 2) {
            return usage(".headers on|off");
        }
        shell->config.show_header = boolean_value(dot->words[1]);
    } else if (strcmp(name, "timer") == 0) {
        if (dot->count != 2) {
            return usage(".timer on|off");
        }
        shell->is_timer_on = boolean_value(dot->words[1]);
    } else if (strcmp(name, "nullvalue") == 0) {
        if (dot->count != 2) {
            return usage(".nullvalue STRING");
        }
        set_text(shell->null_value, sizeof(shell->null_value), dot->words[1]);
    } else {
        if (dot->count < 2 || dot->count > 3) {
            return usage(".separator COL ?ROW?");
        }
        set_text(shell->separator, sizeof(shell->separator), dot->words[1]);
        if (dot->count == 3) {
            set_text(shell->row_separator, sizeof(shell->row_separator),
                     dot->words[2]);
        }
    }
    return 0;
}

static int dot_dispatch(struct shell *shell, const struct shell_dot *dot)
{
    static const char *const settings[] = {"headers", "header", "timer",
                                           "nullvalue", "separator"};
    const char *name = dot->words[0];
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        if (strcmp(name, settings[i]) == 0) {
            return dot_setting(shell, dot);
        }
    }
    if (strcmp(name, "mode") == 0) {
        return dot_mode(shell, dot);
    }
    if (strcmp(name, "tables") == 0) {
        return dot_tables(shell, dot);
    }
    if (strcmp(name, "schema") == 0) {
        return dot_schema(shell, dot);
    }
    if (strcmp(name, "help") == 0) {
        dot_help();
        return 0;
    }
    if (strcmp(name, "quit") == 0 || strcmp(name, "exit") == 0) {
        shell->is_done = true;
        shell->exit_code = dot->count > 1 ? atoi(dot->words[1]) : 0;
        return 0;
    }
    fprintf(stderr,
            "Error: unknown command or invalid arguments:  \"%s\". Enter "
            "\".help\" for help\n",
            name);
    return -EINVAL;
}

static void run_dot(struct shell *shell, char *line)
{
    struct shell_dot dot;
    dot_split(line, &dot);
    if (dot.count == 0) {
        return;
    }
    if (dot_dispatch(shell, &dot) != 0) {
        shell->has_failed = true;
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------------
 * Input and options
 * ------------------------------------------------------------------------ */

/* Handles one line: a dot command or comment between statements, or SQL
 * appended to sql and run once it holds a complete statement. */
static int take_line(struct shell *shell, struct common_buf *sql, char *line,
                     size_t size)
{
    if (sql->size == 0 && is_blank(line, size)) {
        return 0;
    }
    if (sql->size == 0 && (line[0] == '.' || line[0] == '#')) {
        if (line[0] == '.') {
            run_dot(shell, line);
        }
        return 0;
    }
    int rc = common_buf_append(sql, line, size);
    if (rc == 0) {
        rc = common_buf_append_byte(sql, '\n');
    }
    if (rc == 0 && shell_is_complete((const char *)sql->data, sql->size)) {
        run_sql(shell, (const char *)sql->data, sql->size);
        common_buf_truncate(sql, 0);
    }
    return rc;
}

/* Reads standard input to its end, .quit or .exit. Text left at the end
 * without its ';' still runs, as in sqlite3. */
static int run_input(struct shell *shell)
{
    struct shell_input input;
    struct common_buf sql;
    shell_input_init(&input, stdin);
    common_buf_init(&sql, SHELL_SQL_SIZE_MAX);
    int rc = 0;
    while (rc == 0 && !shell->is_done) {
        rc = shell_input_read(&input, sql.size > 0);
        if (rc == 0) {
            rc = take_line(shell, &sql, input.line, input.size);
        }
    }
    rc = rc == 1 ? 0 : rc;
    if (rc == 0 && !shell->is_done &&
        !is_blank((const char *)sql.data, sql.size)) {
        run_sql(shell, (const char *)sql.data, sql.size);
    }
    if (input.is_interactive && !shell->is_done) {
        printf("\n");
    }
    common_buf_close(&sql);
    shell_input_close(&input);
    return rc;
}

void shell_usage(FILE *stream)
{
    fprintf(stream,
            "Usage: sinew shell [OPTIONS] [FILE | http://HOST:PORT/]\n"
            "Runs SQL from standard input, or from -c, on the database FILE\n"
            "(an in-memory database without FILE) or on the sinew node at\n"
            "the URL (its bearer token from --auth-token-file or\n"
            "$SINEW_AUTH_TOKEN).\n"
            "  -auth-token-file F   send the token in file F to the node\n"
            "  -box                 output mode box\n"
            "  -c SQL               run SQL (one or more statements) and exit\n"
            "  -csv                 output mode csv\n"
            "  -header / -noheader  turn column names on or off\n"
            "  -help                show this message\n"
            "  -json                output mode json\n"
            "  -list                output mode list (the default)\n"
            "  -nullvalue TEXT      print NULL as TEXT\n"
            "  -separator SEP       column separator of list and csv\n"
            "  -table               output mode table\n");
}

/* The values of -c and -auth-token-file, and the database path or URL. */
struct shell_options {
    const char *command;
    const char *path;
    const char *token_file;
    bool wants_help;
};

/* Applies a flag without a value; false when it is not one. */
static bool apply_flag(struct shell *shell, const char *flag,
                       struct shell_options *options)
{
    int mode;
    if (shell_mode_parse(flag, &mode) == 0) {
        shell->config.mode = mode;
        if (mode == SHELL_MODE_CSV) {
            set_text(shell->separator, sizeof(shell->separator), ",");
        }
        return true;
    }
    if (strcmp(flag, "header") == 0 || strcmp(flag, "noheader") == 0) {
        shell->config.show_header = flag[0] == 'h';
        return true;
    }
    if (strcmp(flag, "help") == 0) {
        options->wants_help = true;
        return true;
    }
    return false;
}

/* Applies a flag that takes a value; false when it is not one. */
static bool apply_valued(struct shell *shell, const char *flag,
                         const char *value, struct shell_options *options)
{
    if (strcmp(flag, "separator") == 0) {
        set_text(shell->separator, sizeof(shell->separator), value);
    } else if (strcmp(flag, "nullvalue") == 0) {
        set_text(shell->null_value, sizeof(shell->null_value), value);
    } else if (strcmp(flag, "c") == 0) {
        options->command = value;
    } else if (strcmp(flag, "auth-token-file") == 0) {
        options->token_file = value;
    } else {
        return false;
    }
    return true;
}

static int parse_options(struct shell *shell, int argc, char **argv,
                         struct shell_options *options)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (options->path != NULL) {
                fprintf(stderr, "sinew shell: too many arguments: %s\n", arg);
                return -EINVAL;
            }
            options->path = arg;
            continue;
        }
        const char *flag = arg + (arg[1] == '-' ? 2 : 1);
        if (apply_flag(shell, flag, options)) {
            continue;
        }
        if (i + 1 < argc && apply_valued(shell, flag, argv[i + 1], options)) {
            i++;
            continue;
        }
        fprintf(stderr, "sinew shell: %s: %s\n",
                apply_valued(shell, flag, "", options) ? "missing argument to"
                                                       : "unknown option",
                arg);
        return -EINVAL;
    }
    return 0;
}

int shell_main(int argc, char **argv)
{
    struct shell shell;
    struct shell_options options = {0};
    shell_init(&shell);
    if (parse_options(&shell, argc, argv, &options) != 0) {
        fprintf(stderr, "Try 'sinew shell -help'.\n");
        common_buf_close(&shell.out);
        return SHELL_EXIT_USAGE;
    }
    if (options.wants_help) {
        shell_usage(stdout);
        common_buf_close(&shell.out);
        return SHELL_EXIT_OK;
    }
    char error[SHELL_BACKEND_ERROR_SIZE];
    int rc = shell_backend_open(options.path, options.token_file,
                                &shell.backend, error, sizeof(error));
    if (rc != 0) {
        fprintf(stderr, "%s\n", error);
        common_buf_close(&shell.out);
        return SHELL_EXIT_FAILED;
    }
    if (options.command != NULL) {
        run_sql(&shell, options.command, strlen(options.command));
    } else if ((rc = run_input(&shell)) != 0) {
        report_error(&shell, common_strerror(rc));
    }
    shell_backend_close(&shell.backend);
    common_buf_close(&shell.out);
    if (shell.is_done && shell.exit_code != 0) {
        return shell.exit_code;
    }
    return shell.has_failed ? SHELL_EXIT_FAILED : SHELL_EXIT_OK;
}
