/* SPDX-License-Identifier: MIT
 *
 * serve_config_internal.h: what the files of `sinew serve`'s option parser
 * share, and nothing outside them uses (serve_config.h is the interface):
 *   serve_config.c        the option table, the usage, the command line,
 *                         the order in which sources apply;
 *   serve_config_apply.c  one setting's value into struct serve_config,
 *                         the derived defaults, the checks across settings;
 *   serve_config_file.c   the configuration file's lines;
 *   serve_config_value.c  the syntax of single values (addresses, numbers).
 *
 * The file's syntax (docs/operations.md, "Configuration"): one "name =
 * value" a line; white space around the name and the value is dropped; a
 * line whose first non-blank character is '#' is a comment, and so is the
 * rest of a line from a '#' that follows white space ("http = :80 # public"),
 * so a '#' inside a value ("data = /srv/db#2") stays; blank lines are
 * ignored; CR LF line ends and a UTF-8 byte order mark are accepted.
 * Values are taken as written: quotes are refused rather than kept, since a
 * quoted path would otherwise fail later with a puzzling message.
 *
 * Addresses are "HOST:PORT": HOST a name or IPv4 address (letters, digits,
 * '.', '-', '_') or an IPv6 address in brackets ("[::1]:7000", a zone as
 * "[fe80::1%eth0]"), PORT decimal 0..65535; at most 255 bytes in all, so an
 * address fits struct serve_peer's field. Names are not resolved here: the
 * node does that when it binds or dials.
 */
#ifndef SINEW_NODE_SERVE_CONFIG_INTERNAL_H
#define SINEW_NODE_SERVE_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve_config.h"

/* ---- the options ---- */

enum serve_option_id {
    SERVE_OPTION_CONFIG,
    SERVE_OPTION_DATA,
    SERVE_OPTION_MODE,
    SERVE_OPTION_HTTP,
    SERVE_OPTION_LISTEN,
    SERVE_OPTION_ADVERTISE,
    SERVE_OPTION_PEER,
    SERVE_OPTION_JOIN,
    SERVE_OPTION_KEY,
    SERVE_OPTION_AUTHORIZED_KEYS,
    SERVE_OPTION_CLUSTER_SECRET_FILE,
    SERVE_OPTION_AUTH_TOKEN_FILE,
    SERVE_OPTION_WRITER,
    SERVE_OPTION_WRITER_EPOCH,
    SERVE_OPTION_SYNC,
    SERVE_OPTION_MAX_OFFSET_MS,
    SERVE_OPTION_LOG_LEVEL,
    SERVE_OPTION_LOG_FILE,
    SERVE_OPTION_MAX_BODY_BYTES,
    SERVE_OPTION_HELP,
    SERVE_OPTION_COUNT,
};

struct serve_option {
    const char *name;       /* the flag without its dashes = file setting */
    const char *value_name; /* in the usage ("DIR"); NULL: takes no value */
    const char *help;       /* usage lines, '\n' between them */
};

/* The defaults and limits of the numeric settings, with their reasons
 * (the string defaults are in serve_config.h). */
#define SERVE_WRITER_EPOCH_MAX ((uint64_t)INT64_MAX) /* JSON-safe signed */
#define SERVE_MAX_OFFSET_MS_MAX 3600000u             /* an hour */
#define SERVE_MAX_OFFSET_MS_DEFAULT 500u             /* DESIGN.md, HLC */
#define SERVE_MAX_BODY_BYTES_DEFAULT ((size_t)16 << 20)
/* A Hrana request fits in 1 KiB only if it is tiny; over 1 GiB the body
 * could not travel as one change set (TRANSPORT_MESSAGE_MAX_BYTES_LIMIT). */
#define SERVE_MAX_BODY_BYTES_MIN ((uint64_t)1 << 10)
#define SERVE_MAX_BODY_BYTES_MAX ((uint64_t)1 << 30)

/* Indexed by enum serve_option_id (serve_config.c). */
extern const struct serve_option serve_options[SERVE_OPTION_COUNT];

/* What the parse has seen so far: which options were given (from either
 * source), where the file set each, whose peers the list holds. */
struct serve_parse {
    struct serve_config *config; /* borrowed: the caller's */
    bool given[SERVE_OPTION_COUNT];
    unsigned file_line[SERVE_OPTION_COUNT]; /* file line that set it, or 0 */
    bool peers_from_command_line;
};

/* Checks value (text, borrowed) and stores it in option id's field of
 * parse->config. from_file picks how messages name the option: "--data"
 * on the command line, "data" in the file. 0; NODE_EINVAL or
 * COMMON_ENOMEM with a one-line message in error. */
int serve_config_apply(struct serve_parse *parse, enum serve_option_id id,
                       const char *value, bool from_file, char *error,
                       size_t error_size);

/* Fills in the defaults that depend on other settings, then checks the
 * settings together (modes and the options they need or refuse). */
int serve_config_finish(struct serve_parse *parse, char *error,
                        size_t error_size);

/* ---- the configuration file ---- */

/* A file larger than this is refused: a configuration is a few dozen
 * lines, and the whole file is read into memory. */
#define SERVE_CONFIG_FILE_SIZE_MAX (1u << 20)

/* Called once per setting, in file order. name and value are borrowed for
 * the call. Returns 0, or a negative code with a one-line message in
 * error, which the reader prefixes with "FILE:LINE: ". */
typedef int (*serve_config_file_setting_fn)(void *ctx, const char *name,
                                            const char *value, unsigned line,
                                            char *error, size_t error_size);

/* Reads the file at path (borrowed) and calls setting() for each of its
 * settings (ctx passed back untouched). 0; NODE_EINVAL when the file
 * cannot be read or a line is malformed; COMMON_ENOMEM; or the first
 * error setting() returns, which stops the reading. Every message names
 * the file, and the line when there is one ("sinew.conf:7: ..."). */
int serve_config_file_read(const char *path,
                           serve_config_file_setting_fn setting, void *ctx,
                           char *error, size_t error_size);

/* ---- single values ---- */

/* The longest address, without its NUL. */
#define SERVE_VALUE_ADDRESS_LENGTH_MAX 255

/* Room for a value quoted in a message (serve_value_show). */
#define SERVE_VALUE_SHOWN_SIZE 72

/* Copies value (text, borrowed) into out for quoting in a one-line
 * message: bytes that are not printable ASCII become '?', and a long
 * value is cut, ending in "...". */
void serve_value_show(const char *value, char *out, size_t size);

/* The same for the first length bytes of value. */
void serve_value_show_prefix(const char *value, size_t length, char *out,
                             size_t size);

/* Whether text is HOST:PORT as above; port 0 passes only if
 * port_zero_ok. */
bool serve_value_address_is_valid(const char *text, bool port_zero_ok);

/* Whether the valid address text binds every interface (0.0.0.0, [::]),
 * which is no address for another node to dial. */
bool serve_value_address_is_wildcard(const char *text);

/* Decimal digits only (no sign, no blanks), at most max. */
bool serve_value_parse_uint(const char *text, uint64_t max, uint64_t *out);

/* A byte count: decimal digits and an optional binary suffix k, M or G
 * (either case; 1024, 1024^2, 1024^3). */
bool serve_value_parse_size(const char *text, uint64_t *out);

/* A node id: exactly 64 hex digits at text (length bytes). */
bool serve_value_parse_node_id(const char *text, size_t length,
                               struct transport_node_id *out);

/* "ID@HOST:PORT", a port from 1 and a host other nodes can reach. */
bool serve_value_parse_peer(const char *text, struct serve_peer *out);

/* "http://HOST:PORT" with an optional trailing '/', port from 1. */
bool serve_value_join_url_is_valid(const char *text);

#endif /* SINEW_NODE_SERVE_CONFIG_INTERNAL_H */
