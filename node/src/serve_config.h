/* SPDX-License-Identifier: MIT
 *
 * serve_config.h: the settings of `sinew serve`, from its command line and
 * an optional configuration file (--config FILE), checked before the node
 * starts (docs/operations.md, "Configuration" lists every one).
 *
 * The file holds the same settings as the flags, one per line, as
 * "name = value" with the flag's name without its dashes ("http =
 * 127.0.0.1:8080", "peer = ID@HOST:PORT" repeated for several); '#'
 * starts a comment; blank lines are ignored. A flag given on the command
 * line overrides the file's value (repeatable ones: the command line's
 * list replaces the file's).
 *
 * Unknown settings, bad values and contradictions fail with a message
 * that says what to do, e.g. "--mode crdt needs --listen (the address
 * peers connect to)" or "--writer is only for --mode leader".
 */
#ifndef SINEW_NODE_SERVE_CONFIG_H
#define SINEW_NODE_SERVE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "node.h"
#include "transport.h"

enum serve_mode {
    SERVE_MODE_SINGLE = 0, /* one node, no network between nodes */
    SERVE_MODE_CRDT = 1,
    SERVE_MODE_LEADER = 2,
    SERVE_MODE_QUORUM = 3,
};

enum serve_sync {
    SERVE_SYNC_FULL = 0,   /* every commit synced before it returns */
    SERVE_SYNC_NORMAL = 1, /* group commit (engine's PRAGMA synchronous) */
};

/* A peer to dial: its node id (the hex of its public key, what `sinew
 * keygen` prints) and its peer address. */
struct serve_peer {
    struct transport_node_id id;
    char address[256]; /* "host:port" */
};

#define SERVE_DATA_DEFAULT "./sinew-data"
#define SERVE_HTTP_DEFAULT "127.0.0.1:8080"
#define SERVE_DATABASE_DEFAULT "main"

struct serve_config {
    char *config_path; /* --config, NULL when none */
    char *data_dir;    /* --data, default SERVE_DATA_DEFAULT */
    enum serve_mode mode;
    char *http_address;   /* --http, default SERVE_HTTP_DEFAULT */
    char *listen_address; /* --listen HOST:PORT for peers; NULL in single */
    /* --advertise HOST:PORT: the peer address others reach this node at
     * (quorum membership); default listen_address. */
    char *advertise_address;
    struct serve_peer *peers; /* --peer ID@HOST:PORT, repeatable */
    size_t peer_count;
    /* --join URL: quorum mode, a node not in the initial configuration
     * asks the node at URL (its HTTP address) to add it. */
    char *join_url;
    char *key_path;                  /* --key FILE; default DATA/node.key */
    char *authorized_keys_path;      /* --authorized-keys FILE */
    char *cluster_secret_path;       /* --cluster-secret-file FILE */
    char *auth_token_path;           /* --auth-token-file FILE */
    bool has_writer;                 /* --writer given (leader mode) */
    struct transport_node_id writer; /* --writer ID */
    uint64_t writer_epoch;           /* --writer-epoch N, default 1 */
    enum serve_sync sync;            /* --sync=full|normal */
    uint64_t max_offset_ms;          /* --max-offset-ms, default 500 */
    int log_level;                   /* --log-level debug|info|warn|error */
    char *log_path;                  /* --log-file FILE; NULL: stderr */
    size_t max_body_bytes;           /* --max-body-bytes, default 16 MiB */
};

/* Parses argv (the arguments after "serve"; borrowed) and, when --config
 * names one, the file, into *out (released by serve_config_release(),
 * also after a failure). 0; 1 when --help was asked (usage printed to
 * stdout); NODE_EINVAL with the message (one line, no trailing newline)
 * in error. Reads no other file: key and token files are read by the
 * node when it starts. */
int serve_config_parse(int argc, char **argv, struct serve_config *out,
                       char *error, size_t error_size);
void serve_config_release(struct serve_config *config);

/* The usage text, every option with its default. */
void serve_config_usage(FILE *stream);

/* "single", "crdt", "leader", "quorum". */
const char *serve_mode_name(enum serve_mode mode);

#endif /* SINEW_NODE_SERVE_CONFIG_H */
