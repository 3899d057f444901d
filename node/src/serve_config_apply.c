/* SPDX-License-Identifier: MIT
 *
 * serve_config_apply.c: one setting of `sinew serve` into struct
 * serve_config, its value checked (the syntax by serve_config_value.c, the
 * limits here), then the defaults that depend on other settings and the
 * checks across settings (serve_config_internal.h).
 *
 * Messages name the option as the user wrote it ("--mode" on the command
 * line, "mode" in the file, which serve_config_file.c prefixes with the
 * file and line) and say what to write instead. The checks across
 * settings run after every source has applied, so they name flags, which
 * docs/operations.md maps to the file's names.
 */
#include "serve_config_internal.h"

#include <string.h>

#include "node.h"

static const char *const serve_mode_names[] = {
    [SERVE_MODE_SINGLE] = "single",
    [SERVE_MODE_CRDT] = "crdt",
    [SERVE_MODE_LEADER] = "leader",
    [SERVE_MODE_QUORUM] = "quorum",
};

static const char *const serve_sync_names[] = {
    [SERVE_SYNC_FULL] = "full",
    [SERVE_SYNC_NORMAL] = "normal",
};

/* Indexed by enum common_log_level. */
static const char *const serve_log_level_names[] = {
    [COMMON_LOG_DEBUG] = "debug",
    [COMMON_LOG_INFO] = "info",
    [COMMON_LOG_WARN] = "warn",
    [COMMON_LOG_ERROR] = "error",
};

#define SERVE_COUNT(array) (sizeof(array) / sizeof((array)[0]))

const char *serve_mode_name(enum serve_mode mode)
{
    ASSERT((size_t)mode < SERVE_COUNT(serve_mode_names));
    return serve_mode_names[mode];
}

static int out_of_memory(char *error, size_t error_size)
{
    snprintf(error, error_size, "out of memory");
    return COMMON_ENOMEM;
}

/* Replaces *field (owned, or NULL) with a copy of value. */
static int set_string(char **field, const char *value, char *error,
                      size_t error_size)
{
    size_t size = strlen(value) + 1;
    char *copy = common_malloc(size);

    if (copy == NULL) {
        return out_of_memory(error, error_size);
    }
    memcpy(copy, value, size);
    common_free(*field);
    *field = copy;
    return 0;
}

/* Finds value among names; its index in *out. */
static bool parse_choice(const char *value, const char *const *names,
                         size_t count, int *out)
{
    for (size_t i = 0; i < count; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = (int)i;
            return true;
        }
    }
    return false;
}

/* Adds a peer; the first one from the command line drops the file's. */
static int add_peer(struct serve_parse *parse, const struct serve_peer *peer,
                    bool from_file, char *error, size_t error_size)
{
    struct serve_config *config = parse->config;
    struct serve_peer *peers;

    if (!from_file && !parse->peers_from_command_line) {
        parse->peers_from_command_line = true;
        config->peer_count = 0;
    }
    peers = common_realloc_array(config->peers, config->peer_count + 1,
                                 sizeof(*peers));
    if (peers == NULL) {
        return out_of_memory(error, error_size);
    }
    peers[config->peer_count] = *peer;
    config->peers = peers;
    config->peer_count++;
    return 0;
}

/* Sets an option whose value is a choice among names. */
static int apply_choice(const char *dashes, enum serve_option_id id,
                        const char *value, const char *const *names,
                        size_t count, int *out, char *error, size_t error_size)
{
    char shown[SERVE_VALUE_SHOWN_SIZE];
    char list[96] = "";
    size_t used = 0;

    if (parse_choice(value, names, count, out)) {
        return 0;
    }
    for (size_t i = 0; i < count && used < sizeof(list); i++) {
        const char *separator = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int n = snprintf(list + used, sizeof(list) - used, "%s%s", separator,
                         names[i]);

        used += n > 0 ? (size_t)n : 0;
    }
    serve_value_show(value, shown, sizeof(shown));
    snprintf(error, error_size, "%s%s wants %s, not '%s'", dashes,
             serve_options[id].name, list, shown);
    return NODE_EINVAL;
}

/* Sets an address option; port 0 ("any free port") only where binding. */
static int apply_address(const char *dashes, enum serve_option_id id,
                         const char *value, bool port_zero_ok, char **field,
                         char *error, size_t error_size)
{
    char shown[SERVE_VALUE_SHOWN_SIZE];

    if (!serve_value_address_is_valid(value, port_zero_ok)) {
        serve_value_show(value, shown, sizeof(shown));
        snprintf(error, error_size,
                 "%s%s wants HOST:PORT with a port from %d to 65535 "
                 "([::1]:%s for IPv6), not '%s'",
                 dashes, serve_options[id].name, port_zero_ok ? 0 : 1,
                 port_zero_ok ? "0" : "7000", shown);
        return NODE_EINVAL;
    }
    if (id == SERVE_OPTION_ADVERTISE &&
        serve_value_address_is_wildcard(value)) {
        serve_value_show(value, shown, sizeof(shown));
        snprintf(error, error_size,
                 "%sadvertise wants an address other nodes can reach, not "
                 "'%s' (which means every interface)",
                 dashes, shown);
        return NODE_EINVAL;
    }
    return set_string(field, value, error, error_size);
}

/* Sets a whole number option, min..max. */
static int apply_number(const char *dashes, enum serve_option_id id,
                        const char *value, uint64_t min, uint64_t max,
                        uint64_t *out, char *error, size_t error_size)
{
    char shown[SERVE_VALUE_SHOWN_SIZE];

    if (serve_value_parse_uint(value, max, out) && *out >= min) {
        return 0;
    }
    serve_value_show(value, shown, sizeof(shown));
    snprintf(error, error_size,
             "%s%s wants a whole number from %llu to %llu, not '%s'", dashes,
             serve_options[id].name, (unsigned long long)min,
             (unsigned long long)max, shown);
    return NODE_EINVAL;
}

/* The options whose value is free text (paths): only emptiness is
 * refused, by the caller; the node opens the files when it starts. */
static char **path_field(struct serve_config *config, enum serve_option_id id)
{
    switch (id) {
    case SERVE_OPTION_CONFIG:
        return &config->config_path;
    case SERVE_OPTION_DATA:
        return &config->data_dir;
    case SERVE_OPTION_KEY:
        return &config->key_path;
    case SERVE_OPTION_AUTHORIZED_KEYS:
        return &config->authorized_keys_path;
    case SERVE_OPTION_CLUSTER_SECRET_FILE:
        return &config->cluster_secret_path;
    case SERVE_OPTION_AUTH_TOKEN_FILE:
        return &config->auth_token_path;
    case SERVE_OPTION_LOG_FILE:
        return &config->log_path;
    default:
        return NULL;
    }
}

static int apply_identity(const char *dashes, enum serve_option_id id,
                          const char *value, struct serve_parse *parse,
                          bool from_file, char *error, size_t error_size)
{
    struct serve_config *config = parse->config;
    char shown[SERVE_VALUE_SHOWN_SIZE];
    struct serve_peer peer;

    serve_value_show(value, shown, sizeof(shown));
    if (id == SERVE_OPTION_WRITER) {
        if (serve_value_parse_node_id(value, strlen(value), &config->writer)) {
            config->has_writer = true;
            return 0;
        }
        snprintf(error, error_size,
                 "%swriter wants a node id, 64 hex digits (sinew keygen "
                 "prints it), not '%s'",
                 dashes, shown);
        return NODE_EINVAL;
    }
    ASSERT(id == SERVE_OPTION_PEER);
    if (serve_value_parse_peer(value, &peer)) {
        return add_peer(parse, &peer, from_file, error, error_size);
    }
    snprintf(error, error_size,
             "%speer wants ID@HOST:PORT where ID is the peer's node id "
             "(sinew keygen prints it), not '%s'",
             dashes, shown);
    return NODE_EINVAL;
}

/* Checks value and stores it in the option's field. dashes is "--" on
 * the command line and "" in the file, so messages name the option as
 * the user wrote it. */
int serve_config_apply(struct serve_parse *parse, enum serve_option_id id,
                       const char *value, bool from_file, char *error,
                       size_t error_size)
{
    struct serve_config *config = parse->config;
    const char *dashes = from_file ? "" : "--";
    char **path = path_field(config, id);
    uint64_t number;
    int choice;
    int rc;

    ASSERT(id < SERVE_OPTION_COUNT && id != SERVE_OPTION_HELP);
    parse->given[id] = true;
    if (value[0] == '\0') {
        snprintf(error, error_size, "%s%s needs a value (%s%s %s)", dashes,
                 serve_options[id].name, dashes, serve_options[id].name,
                 serve_options[id].value_name);
        return NODE_EINVAL;
    }
    if (path != NULL) {
        return set_string(path, value, error, error_size);
    }
    switch (id) {
    case SERVE_OPTION_MODE:
        rc = apply_choice(dashes, id, value, serve_mode_names,
                          SERVE_COUNT(serve_mode_names), &choice, error,
                          error_size);
        config->mode = rc == 0 ? (enum serve_mode)choice : config->mode;
        return rc;
    case SERVE_OPTION_SYNC:
        rc = apply_choice(dashes, id, value, serve_sync_names,
                          SERVE_COUNT(serve_sync_names), &choice, error,
                          error_size);
        config->sync = rc == 0 ? (enum serve_sync)choice : config->sync;
        return rc;
    case SERVE_OPTION_LOG_LEVEL:
        return apply_choice(dashes, id, value, serve_log_level_names,
                            SERVE_COUNT(serve_log_level_names),
                            &config->log_level, error, error_size);
    case SERVE_OPTION_HTTP:
        return apply_address(dashes, id, value, true, &config->http_address,
                             error, error_size);
    case SERVE_OPTION_LISTEN:
        return apply_address(dashes, id, value, true, &config->listen_address,
                             error, error_size);
    case SERVE_OPTION_ADVERTISE:
        return apply_address(dashes, id, value, false,
                             &config->advertise_address, error, error_size);
    case SERVE_OPTION_PEER:
    case SERVE_OPTION_WRITER:
        return apply_identity(dashes, id, value, parse, from_file, error,
                              error_size);
    case SERVE_OPTION_JOIN:
        if (serve_value_join_url_is_valid(value)) {
            return set_string(&config->join_url, value, error, error_size);
        }
        snprintf(error, error_size,
                 "%sjoin wants http://HOST:PORT, the --http address of a "
                 "node of the cluster",
                 dashes);
        return NODE_EINVAL;
    case SERVE_OPTION_WRITER_EPOCH:
        return apply_number(dashes, id, value, 1, SERVE_WRITER_EPOCH_MAX,
                            &config->writer_epoch, error, error_size);
    case SERVE_OPTION_MAX_OFFSET_MS:
        return apply_number(dashes, id, value, 1, SERVE_MAX_OFFSET_MS_MAX,
                            &config->max_offset_ms, error, error_size);
    case SERVE_OPTION_MAX_BODY_BYTES:
        if (serve_value_parse_size(value, &number) &&
            number >= SERVE_MAX_BODY_BYTES_MIN &&
            number <= SERVE_MAX_BODY_BYTES_MAX) {
            config->max_body_bytes = (size_t)number;
            return 0;
        }
        snprintf(error, error_size,
                 "%smax-body-bytes wants a size from 1k to 1G (bytes, or "
                 "a number with a k, M or G suffix)",
                 dashes);
        return NODE_EINVAL;
    default:
        ASSERT(false);
        return NODE_EINVAL;
    }
}

/* The defaults that depend on other settings. */
static int fill_defaults(struct serve_config *config, char *error,
                         size_t error_size)
{
    int rc = 0;

    if (config->data_dir == NULL) {
        rc = set_string(&config->data_dir, SERVE_DATA_DEFAULT, error,
                        error_size);
    }
    if (rc == 0 && config->http_address == NULL) {
        rc = set_string(&config->http_address, SERVE_HTTP_DEFAULT, error,
                        error_size);
    }
    if (rc == 0 && config->advertise_address == NULL &&
        config->listen_address != NULL) {
        rc = set_string(&config->advertise_address, config->listen_address,
                        error, error_size);
    }
    if (rc == 0 && config->key_path == NULL) {
        size_t length = strlen(config->data_dir);
        const char *separator =
            length > 0 && config->data_dir[length - 1] == '/' ? "" : "/";
        size_t size = length + strlen(separator) + sizeof("node.key");

        config->key_path = common_malloc(size);
        if (config->key_path == NULL) {
            return out_of_memory(error, error_size);
        }
        snprintf(config->key_path, size, "%s%snode.key", config->data_dir,
                 separator);
    }
    return rc;
}

/* The options that make sense only between nodes. */
static const enum serve_option_id serve_replicated_options[] = {
    SERVE_OPTION_PEER,
    SERVE_OPTION_LISTEN,
    SERVE_OPTION_ADVERTISE,
    SERVE_OPTION_AUTHORIZED_KEYS,
    SERVE_OPTION_CLUSTER_SECRET_FILE,
};

/* Options given for a mode they do not belong to. */
static int check_mode_options(const struct serve_parse *parse, char *error,
                              size_t error_size)
{
    const struct serve_config *config = parse->config;

    if (config->mode != SERVE_MODE_LEADER) {
        if (parse->given[SERVE_OPTION_WRITER] ||
            parse->given[SERVE_OPTION_WRITER_EPOCH]) {
            snprintf(error, error_size, "--%s is only for --mode leader",
                     parse->given[SERVE_OPTION_WRITER] ? "writer"
                                                       : "writer-epoch");
            return NODE_EINVAL;
        }
    }
    if (config->mode != SERVE_MODE_QUORUM && parse->given[SERVE_OPTION_JOIN]) {
        snprintf(error, error_size,
                 "--join is only for --mode quorum (it asks a quorum "
                 "cluster to add this node)");
        return NODE_EINVAL;
    }
    if (config->mode != SERVE_MODE_SINGLE) {
        return 0;
    }
    for (size_t i = 0; i < SERVE_COUNT(serve_replicated_options); i++) {
        enum serve_option_id id = serve_replicated_options[i];

        if (parse->given[id]) {
            snprintf(error, error_size,
                     "--%s needs --mode crdt, leader or quorum",
                     serve_options[id].name);
            return NODE_EINVAL;
        }
    }
    return 0;
}

/* What a replicated mode cannot start without. */
static int check_replicated(const struct serve_parse *parse, char *error,
                            size_t error_size)
{
    const struct serve_config *config = parse->config;
    const char *mode = serve_mode_name(config->mode);

    if (config->listen_address == NULL) {
        snprintf(error, error_size,
                 "--mode %s needs --listen HOST:PORT (the address peers "
                 "connect to)",
                 mode);
        return NODE_EINVAL;
    }
    if (config->authorized_keys_path == NULL &&
        config->cluster_secret_path == NULL) {
        snprintf(error, error_size,
                 "--mode %s needs --authorized-keys FILE or "
                 "--cluster-secret-file FILE to admit peers",
                 mode);
        return NODE_EINVAL;
    }
    if (config->mode == SERVE_MODE_LEADER && !config->has_writer) {
        snprintf(error, error_size,
                 "--mode leader needs --writer ID (the node id of the one "
                 "node that takes writes)");
        return NODE_EINVAL;
    }
    if (config->join_url != NULL && config->peer_count > 0) {
        snprintf(error, error_size,
                 "--join and --peer exclude each other: a joining node is "
                 "added by the cluster and learns its peers from it");
        return NODE_EINVAL;
    }
    /* Quorum members tell each other their addresses (membership), so
     * the one derived from --listen must be reachable. */
    if (config->mode == SERVE_MODE_QUORUM &&
        !parse->given[SERVE_OPTION_ADVERTISE] &&
        serve_value_address_is_wildcard(config->listen_address)) {
        snprintf(error, error_size,
                 "--mode quorum needs --advertise HOST:PORT when --listen "
                 "is a wildcard address: other nodes cannot reach %s",
                 config->listen_address);
        return NODE_EINVAL;
    }
    return 0;
}

static int check_peers(const struct serve_config *config, char *error,
                       size_t error_size)
{
    for (size_t i = 0; i < config->peer_count; i++) {
        for (size_t j = 0; j < i; j++) {
            char id[TRANSPORT_NODE_ID_TEXT_SIZE];

            if (!transport_node_id_equal(&config->peers[i].id,
                                         &config->peers[j].id)) {
                continue;
            }
            transport_node_id_format(&config->peers[i].id, id);
            snprintf(error, error_size,
                     "--peer %s is given twice (%s and %s); each peer once", id,
                     config->peers[j].address, config->peers[i].address);
            return NODE_EINVAL;
        }
    }
    return 0;
}

int serve_config_finish(struct serve_parse *parse, char *error,
                        size_t error_size)
{
    int rc = fill_defaults(parse->config, error, error_size);

    if (rc == 0) {
        rc = check_mode_options(parse, error, error_size);
    }

    if (rc == 0 && parse->config->mode != SERVE_MODE_SINGLE) {
        rc = check_replicated(parse, error, error_size);
    }
    if (rc == 0) {
        rc = check_peers(parse->config, error, error_size);
    }
    return rc;
}
