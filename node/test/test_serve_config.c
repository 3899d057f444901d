/* SPDX-License-Identifier: MIT
 *
 * test_serve_config.c: `sinew serve`'s options and configuration file
 * (serve_config.h), against docs/operations.md, "Configuration".
 *
 * Method: argument vectors written out by hand go through
 * serve_config_parse(); a table gives every flag in both spellings
 * ("--name value", "--name=value") and the field it must set; another
 * gives every refused input with the words its message must contain (and
 * each message must be one line). Configuration files are written to
 * $TMPDIR (or /tmp) by mkstemp() and removed at the end of each test;
 * their errors must name the file and the line. The whole parse also runs
 * under a heap that fails its Nth allocation, for every N, and must then
 * fail cleanly and leak nothing (cmocka's allocator checks).
 */
#include "common_test.h"

#include <string.h>
#include <unistd.h>

#include "serve_config.h"

#define ID_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define ID_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define ERROR_SIZE 512
#define ARGS_MAX 32

/* What a replicated mode needs besides its --mode. */
#define CRDT_ARGS                                                              \
    "--mode", "crdt", "--listen", "127.0.0.1:7000", "--cluster-secret-file",   \
        "secret"

/* Parses the NULL-terminated args (borrowed) into *config. */
static int parse_list(const char *const *args, struct serve_config *config,
                      char *error)
{
    char *argv[ARGS_MAX];
    int argc = 0;

    while (args[argc] != NULL) {
        assert_true(argc < ARGS_MAX);
        argv[argc] = (char *)args[argc];
        argc++;
    }
    return serve_config_parse(argc, argv, config, error, ERROR_SIZE);
}

#define PARSE(config, error, ...)                                              \
    parse_list((const char *const[]){__VA_ARGS__, NULL}, (config), (error))

/* Parses args, which must fail with a one-line message holding
 * expected. */
static void expect_failure(const char *expected, const char *const *args)
{
    struct serve_config config;
    char error[ERROR_SIZE];
    int rc = parse_list(args, &config, error);

    if (rc != NODE_EINVAL || strstr(error, expected) == NULL) {
        print_error("args starting '%s': rc=%d error='%s', wanted '%s'\n",
                    args[0] != NULL ? args[0] : "", rc, error, expected);
        fail();
    }
    assert_null(strchr(error, '\n'));
    serve_config_release(&config);
}

#define EXPECT_FAILURE(expected, ...)                                          \
    expect_failure((expected), (const char *const[]){__VA_ARGS__, NULL})

/* A temporary file holding size bytes; its path in path (PATH_SIZE
 * bytes). */
#define PATH_SIZE 256
static void write_temp_bytes(const char *bytes, size_t size, char *path)
{
    const char *dir = getenv("TMPDIR");
    FILE *file;
    int fd;

    snprintf(path, PATH_SIZE, "%s/sinew-conf-XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    file = fdopen(fd, "w");
    assert_non_null(file);
    assert_int_equal(fwrite(bytes, 1, size, file), size);
    assert_int_equal(fclose(file), 0);
}

static void write_temp_file(const char *text, char *path)
{
    write_temp_bytes(text, strlen(text), path);
}

static void test_defaults(void **state)
{
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    assert_int_equal(serve_config_parse(0, NULL, &config, error, ERROR_SIZE),
                     0);
    assert_null(config.config_path);
    assert_string_equal(config.data_dir, "./sinew-data");
    assert_int_equal(config.mode, SERVE_MODE_SINGLE);
    assert_string_equal(config.http_address, "127.0.0.1:8080");
    assert_null(config.listen_address);
    assert_null(config.advertise_address);
    assert_int_equal(config.peer_count, 0);
    assert_null(config.join_url);
    assert_string_equal(config.key_path, "./sinew-data/node.key");
    assert_null(config.authorized_keys_path);
    assert_null(config.cluster_secret_path);
    assert_null(config.auth_token_path);
    assert_false(config.has_writer);
    assert_int_equal(config.writer_epoch, 1);
    assert_int_equal(config.sync, SERVE_SYNC_FULL);
    assert_int_equal(config.max_offset_ms, 500);
    assert_int_equal(config.log_level, COMMON_LOG_INFO);
    assert_null(config.log_path);
    assert_int_equal(config.max_body_bytes, 16u << 20);
    serve_config_release(&config);
    assert_null(config.data_dir);
}

/* ---- every flag, both spellings ---- */

static void check_data(const struct serve_config *c)
{
    assert_string_equal(c->data_dir, "/srv/db/");
    /* The key file follows the data directory, without a double '/'. */
    assert_string_equal(c->key_path, "/srv/db/node.key");
}

static void check_mode(const struct serve_config *c)
{
    assert_int_equal(c->mode, SERVE_MODE_QUORUM);
}

static void check_http(const struct serve_config *c)
{
    assert_string_equal(c->http_address, "[::1]:0");
}

static void check_listen(const struct serve_config *c)
{
    assert_string_equal(c->listen_address, "10.0.0.1:7100");
    assert_string_equal(c->advertise_address, "10.0.0.1:7100");
}

static void check_advertise(const struct serve_config *c)
{
    assert_string_equal(c->listen_address, "127.0.0.1:7000");
    assert_string_equal(c->advertise_address, "db1.example:7000");
}

static void check_peer(const struct serve_config *c)
{
    struct transport_node_id id;

    assert_int_equal(c->peer_count, 1);
    assert_int_equal(transport_node_id_parse(ID_A, &id), 0);
    assert_true(transport_node_id_equal(&c->peers[0].id, &id));
    assert_string_equal(c->peers[0].address, "10.0.0.2:7000");
}

static void check_join(const struct serve_config *c)
{
    assert_string_equal(c->join_url, "http://10.0.0.1:8080");
}

static void check_key(const struct serve_config *c)
{
    assert_string_equal(c->key_path, "/etc/sinew/key");
}

static void check_authorized_keys(const struct serve_config *c)
{
    assert_string_equal(c->authorized_keys_path, "/etc/sinew/peers");
}

static void check_cluster_secret(const struct serve_config *c)
{
    assert_string_equal(c->cluster_secret_path, "/etc/sinew/secret");
}

static void check_auth_token(const struct serve_config *c)
{
    assert_string_equal(c->auth_token_path, "/etc/sinew/token");
}

static void check_writer(const struct serve_config *c)
{
    struct transport_node_id id;

    assert_true(c->has_writer);
    assert_int_equal(transport_node_id_parse(ID_B, &id), 0);
    assert_true(transport_node_id_equal(&c->writer, &id));
}

static void check_writer_epoch(const struct serve_config *c)
{
    assert_int_equal(c->writer_epoch, 9223372036854775807ull);
}

static void check_sync(const struct serve_config *c)
{
    assert_int_equal(c->sync, SERVE_SYNC_NORMAL);
}

static void check_max_offset(const struct serve_config *c)
{
    assert_int_equal(c->max_offset_ms, 3600000);
}

static void check_log_level(const struct serve_config *c)
{
    assert_int_equal(c->log_level, COMMON_LOG_WARN);
}

static void check_log_file(const struct serve_config *c)
{
    assert_string_equal(c->log_path, "/var/log/sinew.log");
}

static void check_max_body(const struct serve_config *c)
{
    assert_int_equal(c->max_body_bytes, 3u << 20);
}

static const struct {
    const char *flag;
    const char *value;
    const char *extra[9]; /* other arguments the flag needs, NULL-ended */
    void (*check)(const struct serve_config *config);
} flag_cases[] = {
    {"--data", "/srv/db/", {NULL}, check_data},
    {"--mode",
     "quorum",
     {"--listen", "127.0.0.1:7000", "--authorized-keys", "k", NULL},
     check_mode},
    {"--http", "[::1]:0", {NULL}, check_http},
    {"--listen",
     "10.0.0.1:7100",
     {"--mode", "crdt", "--cluster-secret-file", "s", NULL},
     check_listen},
    {"--advertise", "db1.example:7000", {CRDT_ARGS, NULL}, check_advertise},
    {"--peer", ID_A "@10.0.0.2:7000", {CRDT_ARGS, NULL}, check_peer},
    {"--join",
     "http://10.0.0.1:8080",
     {"--mode", "quorum", "--listen", "10.0.0.9:7000", "--authorized-keys", "k",
      NULL},
     check_join},
    {"--key", "/etc/sinew/key", {NULL}, check_key},
    {"--authorized-keys",
     "/etc/sinew/peers",
     {"--mode", "crdt", "--listen", "127.0.0.1:7000", NULL},
     check_authorized_keys},
    {"--cluster-secret-file",
     "/etc/sinew/secret",
     {"--mode", "crdt", "--listen", "127.0.0.1:7000", NULL},
     check_cluster_secret},
    {"--auth-token-file", "/etc/sinew/token", {NULL}, check_auth_token},
    {"--writer",
     ID_B,
     {"--mode", "leader", "--listen", "127.0.0.1:7000", "--authorized-keys",
      "k", NULL},
     check_writer},
    {"--writer-epoch",
     "9223372036854775807",
     {"--mode", "leader", "--listen", "127.0.0.1:7000", "--authorized-keys",
      "k", "--writer", ID_B, NULL},
     check_writer_epoch},
    {"--sync", "normal", {NULL}, check_sync},
    {"--max-offset-ms", "3600000", {NULL}, check_max_offset},
    {"--log-level", "warn", {NULL}, check_log_level},
    {"--log-file", "/var/log/sinew.log", {NULL}, check_log_file},
    {"--max-body-bytes", "3M", {NULL}, check_max_body},
};

static void run_flag_case(size_t index, bool joined)
{
    char joined_arg[256];
    const char *args[ARGS_MAX];
    struct serve_config config;
    char error[ERROR_SIZE];
    size_t n = 0;
    int rc;

    if (joined) {
        snprintf(joined_arg, sizeof(joined_arg), "%s=%s",
                 flag_cases[index].flag, flag_cases[index].value);
        args[n++] = joined_arg;
    } else {
        args[n++] = flag_cases[index].flag;
        args[n++] = flag_cases[index].value;
    }
    for (size_t i = 0; flag_cases[index].extra[i] != NULL; i++) {
        args[n++] = flag_cases[index].extra[i];
    }
    args[n] = NULL;
    rc = parse_list(args, &config, error);
    if (rc != 0) {
        print_error("%s (%s): %s\n", flag_cases[index].flag,
                    joined ? "joined" : "separate", error);
        fail();
    }
    flag_cases[index].check(&config);
    serve_config_release(&config);
}

static void test_every_flag_both_spellings(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(flag_cases) / sizeof(flag_cases[0]); i++) {
        run_flag_case(i, false);
        run_flag_case(i, true);
    }
}

static void test_value_syntax(void **state)
{
    static const struct {
        const char *value;
        size_t bytes;
    } sizes[] = {
        {"1024", 1024},           {"1k", 1024},       {"1K", 1024},
        {"16M", 16u << 20},       {"16m", 16u << 20}, {"1G", 1u << 30},
        {"1073741824", 1u << 30},
    };
    static const char *const addresses[] = {
        "localhost:0", "0.0.0.0:65535",       "[::]:80",
        "[::1]:8080",  "[fe80::1%eth0]:7000", "db-1.example_x:1",
    };
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        assert_int_equal(
            PARSE(&config, error, "--max-body-bytes", sizes[i].value), 0);
        assert_int_equal(config.max_body_bytes, sizes[i].bytes);
        serve_config_release(&config);
    }
    for (size_t i = 0; i < sizeof(addresses) / sizeof(addresses[0]); i++) {
        assert_int_equal(PARSE(&config, error, "--http", addresses[i]), 0);
        assert_string_equal(config.http_address, addresses[i]);
        serve_config_release(&config);
    }
    /* The last of a flag given twice wins; a value may start with '-'. */
    assert_int_equal(PARSE(&config, error, "--data", "a", "--data", "-b",
                           "--log-level=debug", "--log-level", "error"),
                     0);
    assert_string_equal(config.data_dir, "-b");
    assert_int_equal(config.log_level, COMMON_LOG_ERROR);
    serve_config_release(&config);
    /* A value that looks like an option reaches it with '='. */
    assert_int_equal(PARSE(&config, error, "--data=--mode"), 0);
    assert_string_equal(config.data_dir, "--mode");
    serve_config_release(&config);
}

/* ---- refused command lines ---- */

static void test_command_line_errors(void **state)
{
    (void)state;
    EXPECT_FAILURE("unknown option --foo (see sinew serve --help)", "--foo");
    EXPECT_FAILURE("unknown option --foo (see sinew serve --help)", "--foo=1");
    EXPECT_FAILURE("unknown option -x", "-x");
    EXPECT_FAILURE("unexpected argument 'serve'", "serve");
    EXPECT_FAILURE("unexpected argument '--'", "--");
    EXPECT_FAILURE("--help takes no value", "--help=yes");
    EXPECT_FAILURE("--data needs a value (--data DIR)", "--data");
    EXPECT_FAILURE("--data needs a value", "--data=");
    EXPECT_FAILURE("--data needs a value", "--data", "--mode", "crdt");
    EXPECT_FAILURE("--mode wants single, crdt, leader or quorum, not 'raft'",
                   "--mode", "raft");
    EXPECT_FAILURE("--sync wants full or normal, not 'off'", "--sync=off");
    EXPECT_FAILURE("--log-level wants debug, info, warn or error",
                   "--log-level", "trace");
    EXPECT_FAILURE("--max-offset-ms wants a whole number from 1 to 3600000, "
                   "not 'abc'",
                   "--max-offset-ms", "abc");
    EXPECT_FAILURE("--max-offset-ms wants a whole number", "--max-offset-ms",
                   "0");
    EXPECT_FAILURE("--max-offset-ms wants a whole number", "--max-offset-ms",
                   "3600001");
    EXPECT_FAILURE("--max-offset-ms wants a whole number", "--max-offset-ms",
                   "-5");
    EXPECT_FAILURE("--max-offset-ms wants a whole number", "--max-offset-ms",
                   " 5");
    EXPECT_FAILURE("--writer-epoch wants a whole number from 1",
                   "--writer-epoch", "0");
    EXPECT_FAILURE("--writer-epoch wants a whole number", "--writer-epoch",
                   "18446744073709551616");
    EXPECT_FAILURE("--max-body-bytes wants a size from 1k to 1G",
                   "--max-body-bytes", "1023");
    EXPECT_FAILURE("--max-body-bytes wants a size", "--max-body-bytes", "2G");
    EXPECT_FAILURE("--max-body-bytes wants a size", "--max-body-bytes", "1.5M");
    EXPECT_FAILURE("--max-body-bytes wants a size", "--max-body-bytes", "16MB");
    EXPECT_FAILURE("--max-body-bytes wants a size", "--max-body-bytes", "M");
    EXPECT_FAILURE("--max-body-bytes wants a size", "--max-body-bytes",
                   "99999999999999999999G");
    EXPECT_FAILURE("--writer wants a node id, 64 hex digits (sinew keygen "
                   "prints it)",
                   "--writer", "abc");
}

static void test_address_errors(void **state)
{
    static const char *const bad[] = {
        "localhost",  "localhost:",  ":8080",    "::1:8080",
        "[::1]8080",  "[::1]:",      "[]:80",    "[1.2.3.4]:80",
        "host:65536", "host:-1",     "host:+80", "host:8o",
        "h o:80",     "host:123456", "a/b:80",   "host:80 ",
    };
    char arg[64];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(arg, sizeof(arg), "--http=%s", bad[i]);
        EXPECT_FAILURE("--http wants HOST:PORT with a port from 0 to 65535",
                       arg);
    }
    EXPECT_FAILURE("--advertise wants HOST:PORT with a port from 1 to 65535",
                   CRDT_ARGS, "--advertise", "db1:0");
    EXPECT_FAILURE("--advertise wants an address other nodes can reach",
                   CRDT_ARGS, "--advertise", "0.0.0.0:7000");
    EXPECT_FAILURE("--listen wants HOST:PORT", "--mode", "crdt", "--listen",
                   "7000");
    /* A long value is cut and a control character shown as '?', so the
     * message stays one short line. */
    EXPECT_FAILURE("not 'a?b'", "--http", "a\nb");
    EXPECT_FAILURE("...'", "--http",
                   "a-very-long-host-name-that-goes-on-and-on-and-on-and-on-"
                   "and-on-and-on-and-on-and-on:80800");
}

static void test_peer_errors(void **state)
{
    static const char *const bad[] = {
        "10.0.0.2:7000",
        "@10.0.0.2:7000",
        ID_A,
        ID_A "@",
        ID_A "@10.0.0.2",
        ID_A "@10.0.0.2:0",
        ID_A "@0.0.0.0:7000",
        "abc@10.0.0.2:7000",
        ID_A "0@10.0.0.2:7000",
        "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
        "@h:1",
    };
    char arg[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(arg, sizeof(arg), "--peer=%s", bad[i]);
        EXPECT_FAILURE("--peer wants ID@HOST:PORT where ID is the peer's "
                       "node id (sinew keygen prints it)",
                       CRDT_ARGS, arg);
    }
    EXPECT_FAILURE("is given twice", CRDT_ARGS, "--peer", ID_A "@h1:7000",
                   "--peer", ID_B "@h2:7000", "--peer", ID_A "@h3:7000");
}

static void test_mode_errors(void **state)
{
    (void)state;
    EXPECT_FAILURE("--peer needs --mode crdt, leader or quorum", "--peer",
                   ID_A "@h:7000");
    EXPECT_FAILURE("--listen needs --mode crdt, leader or quorum", "--listen",
                   "127.0.0.1:7000");
    EXPECT_FAILURE("--advertise needs --mode crdt, leader or quorum",
                   "--advertise", "db1:7000");
    EXPECT_FAILURE("--authorized-keys needs --mode crdt, leader or quorum",
                   "--authorized-keys", "k");
    EXPECT_FAILURE("--cluster-secret-file needs --mode crdt, leader or "
                   "quorum",
                   "--cluster-secret-file", "s");
    EXPECT_FAILURE("--join is only for --mode quorum", "--join",
                   "http://h:8080");
    EXPECT_FAILURE("--join is only for --mode quorum", CRDT_ARGS, "--join",
                   "http://h:8080");
    EXPECT_FAILURE("--mode crdt needs --listen HOST:PORT (the address peers "
                   "connect to)",
                   "--mode", "crdt", "--cluster-secret-file", "s");
    EXPECT_FAILURE("--mode quorum needs --listen", "--mode", "quorum");
    EXPECT_FAILURE("--mode leader needs --authorized-keys FILE or "
                   "--cluster-secret-file FILE to admit peers",
                   "--mode", "leader", "--listen", "h:7000", "--writer", ID_A);
    EXPECT_FAILURE("--writer is only for --mode leader", CRDT_ARGS, "--writer",
                   ID_A);
    EXPECT_FAILURE("--writer is only for --mode leader", "--writer", ID_A);
    EXPECT_FAILURE("--writer-epoch is only for --mode leader", "--writer-epoch",
                   "2");
    EXPECT_FAILURE("--mode leader needs --writer ID", "--mode", "leader",
                   "--listen", "h:7000", "--authorized-keys", "k");
    EXPECT_FAILURE("--join and --peer exclude each other", "--mode", "quorum",
                   "--listen", "h:7000", "--authorized-keys", "k", "--join",
                   "http://h2:8080", "--peer", ID_A "@h3:7000");
    EXPECT_FAILURE("--join wants http://HOST:PORT", "--mode", "quorum",
                   "--listen", "h:7000", "--authorized-keys", "k", "--join",
                   "https://h2:8080");
    EXPECT_FAILURE("--join wants http://HOST:PORT", "--join", "http://h2");
    EXPECT_FAILURE("--mode quorum needs --advertise HOST:PORT", "--mode",
                   "quorum", "--listen", "0.0.0.0:7000", "--authorized-keys",
                   "k");
}

static void test_mode_combinations_accepted(void **state)
{
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    /* Both admissions at once; a quorum node alone; a wildcard listen
     * with an advertised address; a join URL with its trailing '/'. */
    assert_int_equal(PARSE(&config, error, CRDT_ARGS, "--authorized-keys", "k"),
                     0);
    serve_config_release(&config);
    assert_int_equal(PARSE(&config, error, "--mode", "quorum", "--listen",
                           "0.0.0.0:7000", "--advertise", "db1:7000",
                           "--authorized-keys", "k"),
                     0);
    assert_string_equal(config.advertise_address, "db1:7000");
    serve_config_release(&config);
    assert_int_equal(PARSE(&config, error, "--mode", "quorum", "--listen",
                           "db2:7000", "--authorized-keys", "k", "--join",
                           "http://db1:8080/"),
                     0);
    assert_string_equal(config.join_url, "http://db1:8080/");
    assert_int_equal(config.peer_count, 0);
    serve_config_release(&config);
}

/* ---- configuration files ---- */

static void test_file_values_and_override(void **state)
{
    char path[PATH_SIZE];
    char config_arg[PATH_SIZE + 16];
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    write_temp_file("\xEF\xBB\xBF# a crdt node\n"
                    "\n"
                    "mode = crdt\r\n"
                    "  listen=10.0.0.1:7000   # peers dial this\n"
                    "data = /srv/sinew#2\n"
                    "cluster-secret-file = /etc/sinew/secret\n"
                    "peer = " ID_A "@10.0.0.2:7000\n"
                    "\t# indented comment\n"
                    "peer = " ID_B "@10.0.0.3:7000\n"
                    "sync = normal\n"
                    "max-body-bytes = 1M\n"
                    "log-level = debug",
                    path);
    snprintf(config_arg, sizeof(config_arg), "--config=%s", path);

    assert_int_equal(PARSE(&config, error, config_arg), 0);
    assert_string_equal(config.config_path, path);
    assert_int_equal(config.mode, SERVE_MODE_CRDT);
    assert_string_equal(config.listen_address, "10.0.0.1:7000");
    assert_string_equal(config.advertise_address, "10.0.0.1:7000");
    assert_string_equal(config.data_dir, "/srv/sinew#2");
    assert_string_equal(config.key_path, "/srv/sinew#2/node.key");
    assert_string_equal(config.cluster_secret_path, "/etc/sinew/secret");
    assert_int_equal(config.peer_count, 2);
    assert_string_equal(config.peers[1].address, "10.0.0.3:7000");
    assert_int_equal(config.sync, SERVE_SYNC_NORMAL);
    assert_int_equal(config.max_body_bytes, 1u << 20);
    assert_int_equal(config.log_level, COMMON_LOG_DEBUG);
    serve_config_release(&config);

    /* The command line wins, wherever --config stands in it, and its
     * --peer list replaces the file's. */
    assert_int_equal(PARSE(&config, error, "--sync", "full", "--peer",
                           ID_B "@10.0.0.9:7000", "--config", path,
                           "--log-level=info", "--peer", ID_A "@10.0.0.8:7000"),
                     0);
    assert_int_equal(config.sync, SERVE_SYNC_FULL);
    assert_int_equal(config.log_level, COMMON_LOG_INFO);
    assert_int_equal(config.mode, SERVE_MODE_CRDT);
    assert_int_equal(config.peer_count, 2);
    assert_string_equal(config.peers[0].address, "10.0.0.9:7000");
    assert_string_equal(config.peers[1].address, "10.0.0.8:7000");
    serve_config_release(&config);

    /* A file's setting can still be refused by the command line's mode. */
    assert_int_equal(PARSE(&config, error, config_arg, "--mode", "single"),
                     NODE_EINVAL);
    assert_non_null(strstr(error, "needs --mode crdt, leader or quorum"));
    serve_config_release(&config);
    assert_int_equal(unlink(path), 0);
}

/* Writes text to a file, parses it with --config, and expects a failure
 * whose message is "<path>:<line>: <rest>" with rest containing
 * expected. */
static void expect_file_failure_bytes(const char *text, size_t size,
                                      unsigned line, const char *expected)
{
    char path[PATH_SIZE];
    char prefix[PATH_SIZE + 16];
    struct serve_config config;
    char error[ERROR_SIZE];
    int rc;

    write_temp_bytes(text, size, path);
    rc = PARSE(&config, error, "--config", path);
    snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
    if (rc != NODE_EINVAL || strncmp(error, prefix, strlen(prefix)) != 0 ||
        strstr(error, expected) == NULL) {
        print_error("file '%s': rc=%d error='%s', wanted '%s%s'\n", text, rc,
                    error, prefix, expected);
        fail();
    }
    assert_null(strchr(error, '\n'));
    serve_config_release(&config);
    assert_int_equal(unlink(path), 0);
}

static void expect_file_failure(const char *text, unsigned line,
                                const char *expected)
{
    expect_file_failure_bytes(text, strlen(text), line, expected);
}

static void test_file_errors(void **state)
{
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    expect_file_failure("data = x\n\n# c\nmode = crdt\n\n\nfoo = 1\n", 7,
                        "unknown setting 'foo'");
    expect_file_failure("--http = h:80\n", 1,
                        "unknown setting '--http' (write it without the "
                        "dashes)");
    expect_file_failure("data = x\nhttp\n", 2, "expected 'name = value'");
    expect_file_failure("= x\n", 1, "expected 'name = value'");
    expect_file_failure("data =\n", 1, "data needs a value (data DIR)");
    expect_file_failure("mode = crdt\nmax-offset-ms = 0\n", 2,
                        "max-offset-ms wants a whole number from 1 to "
                        "3600000, not '0'");
    expect_file_failure("peer = nope\n", 1,
                        "peer wants ID@HOST:PORT where ID is the peer's "
                        "node id");
    expect_file_failure("http = h:1\nlog-level = info\nhttp = h:2\n", 3,
                        "'http' is set twice (first on line 1)");
    expect_file_failure("config = other.conf\n", 1,
                        "'config' belongs on the command line only");
    expect_file_failure("help = 1\n", 1, "belongs on the command line only");
    expect_file_failure("data = \"/srv/db\"\n", 1,
                        "write the value without quotes");
    expect_file_failure_bytes("data = a\nsync = b\0c\n", 20, 2, "NUL byte");

    assert_int_equal(
        PARSE(&config, error, "--config", "/nonexistent/sinew.conf"),
        NODE_EINVAL);
    assert_string_equal(error, "cannot read /nonexistent/sinew.conf: No such "
                               "file or directory");
    serve_config_release(&config);
    assert_int_equal(PARSE(&config, error, "--config", "/"), NODE_EINVAL);
    assert_string_equal(error, "cannot read /: Is a directory");
    serve_config_release(&config);
}

static void test_file_empty_and_large(void **state)
{
    char path[PATH_SIZE];
    struct serve_config config;
    char error[ERROR_SIZE];
    char *big;

    (void)state;
    write_temp_file("", path);
    assert_int_equal(PARSE(&config, error, "--config", path), 0);
    assert_string_equal(config.data_dir, "./sinew-data");
    serve_config_release(&config);
    assert_int_equal(unlink(path), 0);

    /* One byte over a mebibyte of comments. */
    big = malloc((1u << 20) + 2);
    assert_non_null(big);
    memset(big, '#', (1u << 20) + 1);
    big[(1u << 20) + 1] = '\0';
    write_temp_file(big, path);
    free(big);
    assert_int_equal(PARSE(&config, error, "--config", path), NODE_EINVAL);
    assert_non_null(strstr(error, "is larger than 1048576 bytes"));
    serve_config_release(&config);
    assert_int_equal(unlink(path), 0);
}

/* ---- help, usage, names ---- */

static void test_help(void **state)
{
    struct serve_config config;
    char error[ERROR_SIZE];

    (void)state;
    assert_int_equal(PARSE(&config, error, "--help"), 1);
    serve_config_release(&config);
    assert_int_equal(PARSE(&config, error, "--data", "d", "-h", "--bogus"), 1);
    serve_config_release(&config);
    /* Arguments before the --help are still read, and may fail. */
    assert_int_equal(PARSE(&config, error, "--bogus", "--help"), NODE_EINVAL);
    serve_config_release(&config);
}

static void test_usage(void **state)
{
    static const char *const names[] = {
        "--config FILE",
        "--data DIR",
        "--mode MODE",
        "--http HOST:PORT",
        "--listen HOST:PORT",
        "--advertise HOST:PORT",
        "--peer ID@HOST:PORT",
        "--join URL",
        "--key FILE",
        "--authorized-keys FILE",
        "--cluster-secret-file FILE",
        "--auth-token-file FILE",
        "--writer ID",
        "--writer-epoch N",
        "--sync full|normal",
        "--max-offset-ms N",
        "--log-level LEVEL",
        "--log-file FILE",
        "--max-body-bytes SIZE",
        "--help",
        "-h",
        "(default ./sinew-data)",
        "(default 127.0.0.1:8080",
        "(default 500)",
        "(default 16M)",
        "\"name = value\"",
    };
    char text[8192];
    char line[256];
    FILE *stream = tmpfile();
    size_t size;

    (void)state;
    assert_non_null(stream);
    serve_config_usage(stream);
    rewind(stream);
    while (fgets(line, sizeof(line), stream) != NULL) {
        assert_true(strlen(line) <= 81); /* 80 columns and the newline */
    }
    rewind(stream);
    size = fread(text, 1, sizeof(text) - 1, stream);
    text[size] = '\0';
    fclose(stream);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strstr(text, names[i]) == NULL) {
            print_error("usage lacks '%s'\n", names[i]);
            fail();
        }
    }
}

static void test_mode_names(void **state)
{
    (void)state;
    assert_string_equal(serve_mode_name(SERVE_MODE_SINGLE), "single");
    assert_string_equal(serve_mode_name(SERVE_MODE_CRDT), "crdt");
    assert_string_equal(serve_mode_name(SERVE_MODE_LEADER), "leader");
    assert_string_equal(serve_mode_name(SERVE_MODE_QUORUM), "quorum");
}

/* ---- out of memory at every allocation ---- */

static void test_out_of_memory(void **state)
{
    char path[PATH_SIZE];
    struct common_heap_fault fault;
    struct common_heap heap;
    struct serve_config config;
    char error[ERROR_SIZE];
    uint64_t fail_at;
    int rc;

    (void)state;
    write_temp_file("mode = crdt\nlisten = h:7000\nauthorized-keys = k\n"
                    "peer = " ID_A "@h2:7000\n",
                    path);
    for (fail_at = 1;; fail_at++) {
        common_test_install();
        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = PARSE(&config, error, "--config", path, "--data", "/d", "--peer",
                   ID_B "@h3:7000", "--peer", ID_A "@h4:7000", "--log-file",
                   "l");
        serve_config_release(&config);
        common_test_install();
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, COMMON_ENOMEM);
        assert_string_equal(error, "out of memory");
    }
    /* Every allocation of the parse failed once. */
    assert_true(fail_at > 10);
    assert_int_equal(unlink(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_flag_both_spellings),
        cmocka_unit_test(test_value_syntax),
        cmocka_unit_test(test_command_line_errors),
        cmocka_unit_test(test_address_errors),
        cmocka_unit_test(test_peer_errors),
        cmocka_unit_test(test_mode_errors),
        cmocka_unit_test(test_mode_combinations_accepted),
        cmocka_unit_test(test_file_values_and_override),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_file_empty_and_large),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_mode_names),
        cmocka_unit_test(test_out_of_memory),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
