/* SPDX-License-Identifier: MIT
 *
 * quorum_member.c: one quorum-mode member as its own process, for the
 * real-process tests and the quorum benchmark (until `sinew serve --mode
 * quorum` exists, issue 8): node_quorum on a libuv loop with the TCP
 * transport, commanded by its parent through stdin and answering on
 * stdout, one line each:
 *
 *   W <tag> <sql>       write through Raft        R <tag> <status> <index>
 *   Q <tag> <sql>       linearizable read of one  R <tag> <status> <value>
 *                       integer (after a barrier)
 *   L <tag> <sql>       local read (no barrier)   R <tag> <status> <value>
 *   S <tag>             status                    R <tag> <state> <leader id>
 *                                                   <term> <applied index>
 *   B <tag> <clients> <count> <first key>
 *                       load: <clients> writers, each inserting its next row
 *                       as soon as its last committed, <count> rows in all
 *                       R <tag> <errors> <count> <elapsed us> <p50 us>
 *                         <p99 us>
 *
 * End of input closes the member cleanly; SIGKILL is the crash the tests
 * want. Arguments: --id N --dir DIR --key FILE --secret HEX64 --listen
 * HOST:PORT --member ID,NODEHEX,HOST:PORT (each member, itself included)
 * [--bootstrap] [--election-timeout-ms N] [--heartbeat-ms N].
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "quorum.h"

#define MEMBERS_MAX 8
#define LINE_MAX_BYTES 4096

struct member {
    uv_loop_t loop;
    uv_timer_t timer;
    uv_pipe_t input;
    struct transport *transport;
    struct node_quorum *quorum;
    struct transport_identity identity;
    uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES];
    char line[LINE_MAX_BYTES];
    size_t line_size;
    uint64_t random_state;
    bool closing;
};

/* A client request waiting for its callback. */
struct request {
    struct member *m;
    char tag[32];
    char sql[LINE_MAX_BYTES];
    uint8_t txn_id[REPLICATION_QUORUM_TXN_ID_BYTES];
    struct load *load;
    uint64_t started_ns;
};

struct load {
    struct member *m;
    char tag[32];
    uint64_t count, issued, finished, errors, first_key;
    uint64_t started_ns;
    uint64_t *latencies_ns;
};

static struct member member;

static void die(const char *what, int rc)
{
    fprintf(stderr, "quorum_member: %s: %d\n", what, rc);
    exit(2);
}

static uint64_t clock_ms(void *ctx)
{
    (void)ctx;
    return uv_hrtime() / 1000000u;
}

static uint64_t next_random(void *ctx)
{
    struct member *m = ctx;
    uint64_t z = (m->random_state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void reply(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static void reply(const char *format, ...)
{
    va_list args;

    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    fflush(stdout);
}

/* ---- driving node_quorum ---- */

static void timer_cb(uv_timer_t *timer);

static void tick_soon(struct member *m)
{
    if (!m->closing) {
        uv_timer_start(&m->timer, timer_cb, 0, 0);
    }
}

static void timer_cb(uv_timer_t *timer)
{
    struct member *m = timer->data;
    uint64_t next_ms = 0, now = clock_ms(NULL);
    int rc = node_quorum_tick(m->quorum, &next_ms);

    if (rc != 0) {
        die("node_quorum_tick", rc);
    }
    uv_timer_start(&m->timer, timer_cb, next_ms > now ? next_ms - now : 0, 0);
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct member *m = ctx;

    consensus_received(node_quorum_consensus(m->quorum), peer, type, bytes,
                       size);
    tick_soon(m);
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct member *m = ctx;
    consensus_connected(node_quorum_consensus(m->quorum), peer);
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct member *m = ctx;
    (void)reason;
    consensus_disconnected(node_quorum_consensus(m->quorum), peer);
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct member *m = ctx;
    consensus_writable(node_quorum_consensus(m->quorum), peer);
}

/* ---- requests ---- */

static int run_sql(void *ctx, struct engine_db *db)
{
    struct request *r = ctx;
    return engine_exec(db, r->sql, NULL, NULL);
}

static struct request *request_new(struct member *m, const char *tag,
                                   const char *sql)
{
    struct request *r = calloc(1, sizeof *r);

    if (r == NULL) {
        die("calloc", COMMON_ENOMEM);
    }
    r->m = m;
    snprintf(r->tag, sizeof r->tag, "%s", tag);
    snprintf(r->sql, sizeof r->sql, "%s", sql != NULL ? sql : "");
    for (size_t b = 0; b < sizeof r->txn_id; b += 8) {
        uint64_t v = next_random(m);
        memcpy(r->txn_id + b, &v, 8);
    }
    return r;
}

static void write_done(void *ctx, int status, uint64_t index)
{
    struct request *r = ctx;

    reply("R %s %d %" PRIu64 "\n", r->tag, status, index);
    free(r);
}

static void do_write(struct member *m, const char *tag, const char *sql)
{
    struct request *r = request_new(m, tag, sql);
    int rc = node_quorum_write(m->quorum, run_sql, r, r->txn_id, write_done, r);

    if (rc != 0) {
        write_done(r, rc, 0);
    }
    tick_soon(m);
}

static int first_int(void *ctx, int columns, char **values, char **names)
{
    int64_t *out = ctx;

    (void)names;
    if (columns > 0 && values[0] != NULL) {
        *out = strtoll(values[0], NULL, 10);
    }
    return 0;
}

static void read_done(void *ctx, int status, uint64_t index)
{
    struct request *r = ctx;
    int64_t value = -1;

    (void)index;
    if (status == 0) {
        status = engine_exec(node_quorum_db(r->m->quorum), r->sql, first_int,
                             &value);
    }
    reply("R %s %d %" PRId64 "\n", r->tag, status, value);
    free(r);
}

static void do_read(struct member *m, const char *tag, const char *sql)
{
    struct request *r = request_new(m, tag, sql);
    int rc = node_quorum_read(m->quorum, read_done, r);

    if (rc != 0) {
        reply("R %s %d -1\n", tag, rc);
        free(r);
    }
    tick_soon(m);
}

static void do_local_read(struct member *m, const char *tag, const char *sql)
{
    int64_t value = -1;
    int rc = engine_exec(node_quorum_db(m->quorum), sql, first_int, &value);

    reply("R %s %d %" PRId64 "\n", tag, rc, value);
}

static void do_status(struct member *m, const char *tag)
{
    struct consensus_status s;

    consensus_status_get(node_quorum_consensus(m->quorum), &s);
    reply("R %s %d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", tag,
          s.ready ? 10 : (int)s.state, s.leader_id, s.term, s.applied_index);
}

/* ---- the load ---- */

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void load_issue(struct load *load);

static void load_done(void *ctx, int status, uint64_t index)
{
    struct request *r = ctx;
    struct load *load = r->load;

    (void)index;
    if (status == 0) {
        load->latencies_ns[load->finished - load->errors] =
            uv_hrtime() - r->started_ns;
    } else {
        load->errors++;
    }
    load->finished++;
    free(r);
    if (load->issued < load->count) {
        load_issue(load);
    } else if (load->finished == load->count) {
        uint64_t ok = load->count - load->errors;
        uint64_t elapsed_us = (uv_hrtime() - load->started_ns) / 1000;
        qsort(load->latencies_ns, ok, sizeof *load->latencies_ns, compare_u64);
        reply("R %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
              "\n",
              load->tag, load->errors, load->count, elapsed_us,
              ok > 0 ? load->latencies_ns[ok / 2] / 1000 : 0,
              ok > 0 ? load->latencies_ns[ok * 99 / 100] / 1000 : 0);
        free(load->latencies_ns);
        free(load);
    }
}

static void load_issue(struct load *load)
{
    char sql[128];
    struct request *r;
    int rc;

    snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%" PRIu64 ", %" PRIu64 ")",
             load->first_key + load->issued, load->issued);
    load->issued++;
    r = request_new(load->m, load->tag, sql);
    r->load = load;
    r->started_ns = uv_hrtime();
    rc =
        node_quorum_write(load->m->quorum, run_sql, r, r->txn_id, load_done, r);
    if (rc != 0) {
        load_done(r, rc, 0);
    }
    tick_soon(load->m);
}

static void do_load(struct member *m, const char *tag, const char *args)
{
    struct load *load = calloc(1, sizeof *load);
    uint64_t clients = 0;

    if (load == NULL ||
        sscanf(args, "%" SCNu64 " %" SCNu64 " %" SCNu64, &clients, &load->count,
               &load->first_key) != 3 ||
        clients == 0 || load->count == 0) {
        reply("R %s -1 0 0 0 0\n", tag);
        free(load);
        return;
    }
    load->latencies_ns = calloc(load->count, sizeof *load->latencies_ns);
    if (load->latencies_ns == NULL) {
        die("calloc", COMMON_ENOMEM);
    }
    load->m = m;
    snprintf(load->tag, sizeof load->tag, "%s", tag);
    load->started_ns = uv_hrtime();
    for (uint64_t c = 0; c < clients && load->issued < load->count; c++) {
        load_issue(load);
    }
}

/* ---- input ---- */

static void closed(void *ctx)
{
    (void)ctx;
}

static void shut_down(struct member *m)
{
    m->closing = true;
    uv_timer_stop(&m->timer);
    uv_close((uv_handle_t *)&m->timer, NULL);
    uv_close((uv_handle_t *)&m->input, NULL);
    node_quorum_close(m->quorum);
    transport_close(m->transport, closed, NULL);
}

static void command(struct member *m, char *line)
{
    char kind = line[0];
    char *tag = strtok(line + 1, " ");
    char *rest = tag != NULL ? tag + strlen(tag) + 1 : NULL;

    if (tag == NULL) {
        return;
    }
    switch (kind) {
    case 'W':
        do_write(m, tag, rest);
        break;
    case 'Q':
        do_read(m, tag, rest);
        break;
    case 'L':
        do_local_read(m, tag, rest);
        break;
    case 'S':
        do_status(m, tag);
        break;
    case 'B':
        do_load(m, tag, rest);
        break;
    default:
        reply("R %s -1 unknown command\n", tag);
    }
}

static void alloc_cb(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    static char bytes[65536];
    (void)handle;
    (void)suggested;
    *buf = uv_buf_init(bytes, sizeof bytes);
}

static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct member *m = stream->data;

    if (nread < 0) {
        shut_down(m);
        return;
    }
    for (ssize_t i = 0; i < nread; i++) {
        char c = buf->base[i];
        if (c == '\n') {
            m->line[m->line_size] = '\0';
            command(m, m->line);
            m->line_size = 0;
        } else if (m->line_size + 1 < sizeof m->line) {
            m->line[m->line_size++] = c;
        }
    }
}

/* ---- start ---- */

static void parse_member(const char *arg, struct consensus_member *out,
                         char *address, size_t address_size)
{
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
    unsigned long long id;

    if (sscanf(arg, "%llu,%64[0-9a-f],%255s", &id, hex, address) != 3 ||
        strlen(address) >= address_size ||
        transport_node_id_parse(hex, &out->node) != 0) {
        die("bad --member", -1);
    }
    out->id = id;
    out->address = address;
    out->role = CONSENSUS_VOTER;
}

static void parse_secret(const char *hex, uint8_t *out)
{
    if (strlen(hex) != 2 * TRANSPORT_CLUSTER_SECRET_BYTES) {
        die("bad --secret", -1);
    }
    for (size_t i = 0; i < TRANSPORT_CLUSTER_SECRET_BYTES; i++) {
        int hi = common_hex_value(hex[2 * i]),
            lo = common_hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            die("bad --secret", -1);
        }
        out[i] = (uint8_t)(hi * 16 + lo);
    }
}

int main(int argc, char **argv)
{
    static char addresses[MEMBERS_MAX][256];
    struct consensus_member members[MEMBERS_MAX];
    size_t member_count = 0;
    struct node_quorum_config config = {0};
    const char *dir = NULL, *key = NULL, *listen = NULL;
    char db_path[4096], raft_dir[4096];
    bool bootstrap = false;
    struct transport_tcp_config tcp = {0};
    const struct transport_callbacks callbacks = {.received = on_received,
                                                  .connected = on_connected,
                                                  .disconnected =
                                                      on_disconnected,
                                                  .writable = on_writable,
                                                  .ctx = &member};
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--bootstrap") == 0) {
            bootstrap = true;
            continue;
        }
        if (strcmp(argv[i], "--id") == 0) {
            config.consensus.id = strtoull(value, NULL, 10);
        } else if (strcmp(argv[i], "--dir") == 0) {
            dir = value;
        } else if (strcmp(argv[i], "--key") == 0) {
            key = value;
        } else if (strcmp(argv[i], "--secret") == 0) {
            parse_secret(value, member.secret);
        } else if (strcmp(argv[i], "--listen") == 0) {
            listen = value;
        } else if (strcmp(argv[i], "--member") == 0 &&
                   member_count < MEMBERS_MAX) {
            parse_member(value, &members[member_count], addresses[member_count],
                         sizeof addresses[0]);
            member_count++;
        } else if (strcmp(argv[i], "--election-timeout-ms") == 0) {
            config.consensus.election_timeout_ms = (uint32_t)atoi(value);
        } else if (strcmp(argv[i], "--heartbeat-ms") == 0) {
            config.consensus.heartbeat_ms = (uint32_t)atoi(value);
        } else {
            die(argv[i], -1);
        }
        i++;
    }
    if (dir == NULL || key == NULL || listen == NULL || member_count == 0 ||
        config.consensus.id == 0) {
        die("usage: see quorum_member.c", -1);
    }
    rc = transport_identity_load(key, &member.identity);
    if (rc != 0) {
        die("transport_identity_load", rc);
    }
    member.random_state = (uint64_t)getpid() ^ uv_hrtime();
    uv_loop_init(&member.loop);
    tcp.identity = &member.identity;
    tcp.admission.cluster_secret = member.secret;
    tcp.reconnect_min_ms = 20;
    tcp.reconnect_max_ms = 200;
    rc = transport_tcp_new(&member.loop, &tcp, &callbacks, &member.transport);
    if (rc != 0) {
        die("transport_tcp_new", rc);
    }
    snprintf(db_path, sizeof db_path, "%s/db.sinew", dir);
    snprintf(raft_dir, sizeof raft_dir, "%s/raft", dir);
    config.db_path = db_path;
    config.consensus.node = member.identity.id;
    config.consensus.address = listen;
    config.consensus.data_dir = raft_dir;
    config.consensus.transport = member.transport;
    config.consensus.clock = (struct transport_clock){.now_ms = clock_ms};
    config.consensus.random =
        (struct transport_random){.next = next_random, .ctx = &member};
    rc = node_quorum_open(&config, &member.quorum);
    if (rc == 0 && bootstrap) {
        rc = node_quorum_bootstrap(member.quorum, members, member_count);
        rc = rc == CONSENSUS_ECANTBOOTSTRAP ? 0 : rc;
    }
    rc = rc == 0 ? transport_listen(member.transport, listen) : rc;
    rc = rc == 0 ? node_quorum_start(member.quorum) : rc;
    if (rc != 0) {
        die("start", rc);
    }
    uv_timer_init(&member.loop, &member.timer);
    member.timer.data = &member;
    uv_pipe_init(&member.loop, &member.input, 0);
    uv_pipe_open(&member.input, 0);
    member.input.data = &member;
    uv_read_start((uv_stream_t *)&member.input, alloc_cb, read_cb);
    tick_soon(&member);
    uv_run(&member.loop, UV_RUN_DEFAULT);
    uv_loop_close(&member.loop);
    return 0;
}
