/* SPDX-License-Identifier: MIT
 *
 * serve_config.c: `sinew serve`'s options, from the command line and the
 * configuration file, into struct serve_config (serve_config.h), every
 * value and every combination checked before the node starts, so a
 * mistake costs one line of output instead of a half-started cluster.
 *
 * One table, serve_options[], names every option once: the command line,
 * the file (serve_config_file.c), the usage text and the checks
 * (serve_config_apply.c) all use it, so a flag and its file setting cannot
 * drift apart. The reference
 * for users is docs/operations.md, "Configuration".
 *
 * Order: the command line is split into (option, value) pairs first, so
 * --help and a malformed command line are answered before any file is
 * read; then the --config file is applied, then the command line's pairs
 * on top (the last of a flag given twice wins; the first --peer on the
 * command line drops the file's peers). Defaults that depend on other
 * settings (the key file in the data directory, the advertised address)
 * are filled in last, then the combinations are checked.
 */
#include "serve_config.h"

#include <string.h>

#include "serve_config_internal.h"

const struct serve_option serve_options[SERVE_OPTION_COUNT] = {
    [SERVE_OPTION_CONFIG] = {"config", "FILE",
                             "read settings from FILE first (see below)"},
    [SERVE_OPTION_DATA] = {"data", "DIR",
                           "the node's directory: databases and its key\n"
                           "(default " SERVE_DATA_DEFAULT ")"},
    [SERVE_OPTION_MODE] = {"mode", "MODE",
                           "single, crdt, leader or quorum (default "
                           "single)"},
    [SERVE_OPTION_HTTP] = {"http", "HOST:PORT",
                           "where clients connect: Hrana, health, metrics\n"
                           "(default " SERVE_HTTP_DEFAULT "; port 0: any "
                           "free port)"},
    [SERVE_OPTION_LISTEN] = {"listen", "HOST:PORT",
                             "where peers connect (replicated modes; "
                             "required)"},
    [SERVE_OPTION_ADVERTISE] = {"advertise", "HOST:PORT",
                                "the address other nodes reach this one at\n"
                                "(default: the --listen address)"},
    [SERVE_OPTION_PEER] = {"peer", "ID@HOST:PORT",
                           "a peer to dial: its node id (sinew keygen\n"
                           "prints it) and its --listen address; "
                           "repeatable"},
    [SERVE_OPTION_JOIN] = {"join", "URL",
                           "quorum: ask the node at http://HOST:PORT (its\n"
                           "--http address) to add this node"},
    [SERVE_OPTION_KEY] = {"key", "FILE",
                          "this node's key pair (default DIR/node.key)"},
    [SERVE_OPTION_AUTHORIZED_KEYS] = {"authorized-keys", "FILE",
                                      "node ids admitted as peers, one a "
                                      "line"},
    [SERVE_OPTION_CLUSTER_SECRET_FILE] = {"cluster-secret-file", "FILE",
                                          "admit every node that holds "
                                          "this secret"},
    [SERVE_OPTION_AUTH_TOKEN_FILE] =
        {"auth-token-file", "FILE",
         "clients must send the bearer token held\n"
         "in FILE (default: no client authentication)"},
    [SERVE_OPTION_WRITER] = {"writer", "ID",
                             "leader: the node id of the node that takes "
                             "writes"},
    [SERVE_OPTION_WRITER_EPOCH] = {"writer-epoch", "N",
                                   "leader: raise it when the writer "
                                   "changes\n(default 1)"},
    [SERVE_OPTION_SYNC] = {"sync", "full|normal",
                           "full: every commit synced before it returns;\n"
                           "normal: group commit (default full)"},
    [SERVE_OPTION_MAX_OFFSET_MS] = {"max-offset-ms", "N",
                                    "defer change sets stamped further "
                                    "ahead\nthan N ms (default 500)"},
    [SERVE_OPTION_LOG_LEVEL] = {"log-level", "LEVEL",
                                "debug, info, warn or error (default "
                                "info)"},
    [SERVE_OPTION_LOG_FILE] = {"log-file", "FILE",
                               "append the log to FILE (default: stderr)"},
    [SERVE_OPTION_MAX_BODY_BYTES] = {"max-body-bytes", "SIZE",
                                     "largest HTTP request body, bytes or "
                                     "with\na k, M or G suffix (default "
                                     "16M)"},
    [SERVE_OPTION_HELP] = {"help", NULL, "print this help and exit"},
};

/* One option from the command line; value is borrowed from argv. */
struct serve_argument {
    enum serve_option_id id;
    const char *value;
};

void serve_config_usage(FILE *stream)
{
    ASSERT(stream != NULL);
    fputs("usage: sinew serve [OPTIONS]\n"
          "\n"
          "Runs a sinew node: SQL for clients over HTTP and, in the "
          "replicated\n"
          "modes, the database kept in step with its peers.\n"
          "\n"
          "Options (\"--name value\" or \"--name=value\"):\n",
          stream);
    for (size_t i = 0; i < SERVE_OPTION_COUNT; i++) {
        const struct serve_option *option = &serve_options[i];
        const char *help = option->help;
        int width =
            fprintf(stream, "  --%s%s%s", option->name,
                    option->value_name != NULL ? " " : "",
                    option->value_name != NULL ? option->value_name : "");
        const char *newline;

        if (width > 27) {
            fprintf(stream, "\n%29s", "");
        } else {
            fprintf(stream, "%*s", 29 - width, "");
        }
        while ((newline = strchr(help, '\n')) != NULL) {
            fprintf(stream, "%.*s\n%29s", (int)(newline - help), help, "");
            help = newline + 1;
        }
        fprintf(stream, "%s\n", help);
    }
    fputs("  -h                         the same as --help\n"
          "\n"
          "The --config file holds the same settings, one \"name = value\" "
          "a line,\n"
          "named as the options without their dashes (\"peer\" repeated "
          "for\n"
          "several); '#' starts a comment. Options given on the command "
          "line\n"
          "override the file. Reference: docs/operations.md, "
          "\"Configuration\".\n",
          stream);
}

/* The option called name (length bytes, not NUL-terminated), or
 * SERVE_OPTION_COUNT. */
static enum serve_option_id find_option(const char *name, size_t length)
{
    for (size_t i = 0; i < SERVE_OPTION_COUNT; i++) {
        if (strlen(serve_options[i].name) == length &&
            memcmp(serve_options[i].name, name, length) == 0) {
            return (enum serve_option_id)i;
        }
    }
    return SERVE_OPTION_COUNT;
}

/* Called by serve_config_file_read() for each line of the file. */
static int apply_file_setting(void *ctx, const char *name, const char *value,
                              unsigned line, char *error, size_t error_size)
{
    struct serve_parse *parse = ctx;
    enum serve_option_id id = find_option(name, strlen(name));
    char shown[SERVE_VALUE_SHOWN_SIZE];

    serve_value_show(name, shown, sizeof(shown));
    if (id == SERVE_OPTION_COUNT) {
        if (strncmp(name, "--", 2) == 0 &&
            find_option(name + 2, strlen(name + 2)) != SERVE_OPTION_COUNT) {
            snprintf(error, error_size,
                     "unknown setting '%s' (write it without the dashes)",
                     shown);
        } else {
            snprintf(error, error_size, "unknown setting '%s'", shown);
        }
        return NODE_EINVAL;
    }
    if (id == SERVE_OPTION_CONFIG || id == SERVE_OPTION_HELP) {
        snprintf(error, error_size, "'%s' belongs on the command line only",
                 shown);
        return NODE_EINVAL;
    }
    if (id != SERVE_OPTION_PEER && parse->file_line[id] != 0) {
        snprintf(error, error_size, "'%s' is set twice (first on line %u)",
                 shown, parse->file_line[id]);
        return NODE_EINVAL;
    }
    parse->file_line[id] = line;
    return serve_config_apply(parse, id, value, true, error, error_size);
}

/* Splits one argument at argv[*index] (advancing *index past a separate
 * value) into *out; sets *help for --help or -h. */
static int split_argument(int argc, char **argv, int *index,
                          struct serve_argument *out, bool *help, char *error,
                          size_t error_size)
{
    const char *arg = argv[*index];
    char shown[SERVE_VALUE_SHOWN_SIZE];
    const char *equals;
    size_t length;

    serve_value_show(arg, shown, sizeof(shown));
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        *help = true;
        return 0;
    }
    if (arg[0] != '-' || strcmp(arg, "--") == 0 || strcmp(arg, "-") == 0) {
        snprintf(error, error_size,
                 "unexpected argument '%s': sinew serve takes options only "
                 "(see sinew serve --help)",
                 shown);
        return NODE_EINVAL;
    }
    equals = strchr(arg, '=');
    length = equals != NULL ? (size_t)(equals - arg) : strlen(arg);
    out->id = SERVE_OPTION_COUNT;
    if (arg[1] == '-') {
        out->id = find_option(arg + 2, length - 2);
    }
    if (out->id == SERVE_OPTION_COUNT) {
        serve_value_show_prefix(arg, length, shown, sizeof(shown));
        snprintf(error, error_size,
                 "unknown option %s (see sinew serve --help)", shown);
        return NODE_EINVAL;
    }
    if (out->id == SERVE_OPTION_HELP) {
        snprintf(error, error_size, "--help takes no value");
        return NODE_EINVAL;
    }
    if (equals != NULL) {
        out->value = equals + 1;
        return 0;
    }
    /* A following "--option" is taken as a forgotten value rather than
     * as a path: "--data --mode crdt" is a mistake far more often than a
     * directory named "--mode" (which --data=--mode still reaches). */
    if (*index + 1 >= argc || strncmp(argv[*index + 1], "--", 2) == 0) {
        snprintf(error, error_size, "--%s needs a value (--%s %s)",
                 serve_options[out->id].name, serve_options[out->id].name,
                 serve_options[out->id].value_name);
        return NODE_EINVAL;
    }
    (*index)++;
    out->value = argv[*index];
    return 0;
}

/* Splits argv into (*arguments)[0..*count), common_malloc'd (NULL when
 * argc is 0), stopping at --help. */
static int split_arguments(int argc, char **argv,
                           struct serve_argument **arguments, size_t *count,
                           bool *help, char *error, size_t error_size)
{
    *arguments = NULL;
    *count = 0;
    *help = false;
    if (argc == 0) {
        return 0;
    }
    *arguments = common_malloc_array((size_t)argc, sizeof(**arguments));
    if (*arguments == NULL) {
        snprintf(error, error_size, "out of memory");
        return COMMON_ENOMEM;
    }
    for (int i = 0; i < argc && !*help; i++) {
        int rc = split_argument(argc, argv, &i, &(*arguments)[*count], help,
                                error, error_size);

        if (rc != 0) {
            return rc;
        }
        *count += *help ? 0 : 1;
    }
    return 0;
}

/* Applies the --config file (the last --config given), then the command
 * line's other options over it. */
static int apply_all(struct serve_parse *parse,
                     const struct serve_argument *arguments, size_t count,
                     char *error, size_t error_size)
{
    int rc = 0;

    for (size_t i = 0; i < count && rc == 0; i++) {
        if (arguments[i].id == SERVE_OPTION_CONFIG) {
            rc = serve_config_apply(parse, SERVE_OPTION_CONFIG,
                                    arguments[i].value, false, error,
                                    error_size);
        }
    }
    if (rc == 0 && parse->config->config_path != NULL) {
        rc = serve_config_file_read(parse->config->config_path,
                                    apply_file_setting, parse, error,
                                    error_size);
    }
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (arguments[i].id != SERVE_OPTION_CONFIG) {
            rc = serve_config_apply(parse, arguments[i].id, arguments[i].value,
                                    false, error, error_size);
        }
    }
    return rc;
}

int serve_config_parse(int argc, char **argv, struct serve_config *out,
                       char *error, size_t error_size)
{
    struct serve_parse parse;
    struct serve_argument *arguments = NULL;
    size_t count;
    bool help;
    int rc;

    ASSERT(argc >= 0 && (argc == 0 || argv != NULL));
    ASSERT(out != NULL);
    ASSERT(error != NULL && error_size > 0);
    memset(out, 0, sizeof(*out));
    out->mode = SERVE_MODE_SINGLE;
    out->writer_epoch = 1;
    out->sync = SERVE_SYNC_FULL;
    out->max_offset_ms = SERVE_MAX_OFFSET_MS_DEFAULT;
    out->log_level = COMMON_LOG_INFO;
    out->max_body_bytes = SERVE_MAX_BODY_BYTES_DEFAULT;
    memset(&parse, 0, sizeof(parse));
    parse.config = out;
    error[0] = '\0';

    rc = split_arguments(argc, argv, &arguments, &count, &help, error,
                         error_size);
    if (rc != 0) {
        goto out;
    }
    if (help) {
        serve_config_usage(stdout);
        rc = 1;
        goto out;
    }
    rc = apply_all(&parse, arguments, count, error, error_size);
    if (rc == 0) {
        rc = serve_config_finish(&parse, error, error_size);
    }
out:
    common_free(arguments);
    return rc;
}

void serve_config_release(struct serve_config *config)
{
    ASSERT(config != NULL);
    common_free(config->config_path);
    common_free(config->data_dir);
    common_free(config->http_address);
    common_free(config->listen_address);
    common_free(config->advertise_address);
    common_free(config->peers);
    common_free(config->join_url);
    common_free(config->key_path);
    common_free(config->authorized_keys_path);
    common_free(config->cluster_secret_path);
    common_free(config->auth_token_path);
    common_free(config->log_path);
    memset(config, 0, sizeof(*config));
}
