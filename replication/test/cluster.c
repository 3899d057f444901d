/* SPDX-License-Identifier: MIT
 *
 * cluster.c: the replication tests' simulated cluster (cluster.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"

#define SAME_TIME_STEPS_MAX 100000

static uint64_t network_now(void *ctx)
{
    return ((struct cluster *)ctx)->now_ms;
}

static uint64_t network_random(void *ctx)
{
    return common_test_rng_next(&((struct cluster *)ctx)->rng);
}

static uint64_t node_now(void *ctx)
{
    struct cluster_node *node = ctx;

    return (uint64_t)((int64_t)(CLUSTER_T0_MS + node->cluster->now_ms) +
                      node->skew_ms);
}

static int node_random_bytes(void *ctx, uint8_t *out, size_t size)
{
    struct cluster_node *node = ctx;

    memset(out,
           node->site_byte != 0 ? node->site_byte
                                : (int)(0x11 * (node->index + 1)),
           size);
    return 0;
}

static bool node_is_writer(void *ctx, uint64_t *epoch)
{
    struct cluster_node *node = ctx;

    *epoch = node->writer_epoch;
    return node->writer_epoch > 0;
}

static void node_log(void *ctx, int level, const char *file, int line,
                     const char *msg)
{
    struct cluster_node *node = ctx;

    (void)file;
    (void)line;
    node->errors += level >= COMMON_LOG_ERROR;
    node->warnings += level == COMMON_LOG_WARN;
    if (getenv("SINEW_TEST_VERBOSE") != NULL) {
        printf("  [node %u t=%" PRIu64 "] %s\n", node->index,
               node->cluster->now_ms, msg);
    }
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct cluster_node *node = ctx;

    if (type >= REPLICATION_MESSAGE_FIRST && type <= REPLICATION_MESSAGE_LAST) {
        replication_received(node->replication, peer, type, bytes, size);
        node->next_tick_ms = 0; /* tick after receiving, as the API asks */
    }
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct cluster_node *node = ctx;

    replication_connected(node->replication, peer);
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct cluster_node *node = ctx;

    (void)reason;
    replication_disconnected(node->replication, peer);
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct cluster_node *node = ctx;

    replication_writable(node->replication, peer);
}

void cluster_init(struct cluster *c, size_t n, enum replication_mode mode,
                  const char *schema, uint64_t seed, bool files)
{
    const struct transport_clock clock = {.now_ms = network_now, .ctx = c};
    const struct transport_random random = {.next = network_random, .ctx = c};
    const char *tmp = getenv("TMPDIR");
    size_t i;

    assert_true(n <= CLUSTER_NODES_MAX);
    memset(c, 0, sizeof(*c));
    c->rng.state = seed;
    c->count = n;
    c->mode = mode;
    c->schema = schema;
    c->files = files;
    c->sync_interval_ms = 200;
    assert_int_equal(transport_memory_network_new(&clock, &random, &c->net), 0);
    if (files) {
        snprintf(c->dir, sizeof(c->dir), "%s/sinew-cluster-XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        assert_non_null(mkdtemp(c->dir));
    }
    for (i = 0; i < n; i++) {
        struct cluster_node *node = &c->nodes[i];

        node->cluster = c;
        node->index = (unsigned)i;
        memset(node->id.key, (int)(i + 1), sizeof(node->id.key));
        snprintf(node->address, sizeof(node->address), "n%zu", i);
        if (files) {
            snprintf(node->path, sizeof(node->path), "%s/n%zu.sinew", c->dir,
                     i);
        }
    }
}

static void remove_files(struct cluster *c)
{
    char path[600];
    size_t i;

    for (i = 0; i < c->count; i++) {
        snprintf(path, sizeof(path), "%s", c->nodes[i].path);
        unlink(path);
        snprintf(path, sizeof(path), "%s-wal", c->nodes[i].path);
        unlink(path);
    }
    rmdir(c->dir);
}

void cluster_free(struct cluster *c)
{
    size_t i;

    for (i = 0; i < c->count; i++) {
        if (c->nodes[i].up) {
            cluster_stop(c, (unsigned)i);
        }
    }
    transport_memory_network_free(c->net);
    if (c->files) {
        remove_files(c);
    }
}

static void open_database(struct cluster *c, struct cluster_node *node)
{
    bool fresh = node->path[0] == '\0' || access(node->path, F_OK) != 0;

    assert_int_equal(
        engine_open(node->path[0] != '\0' ? node->path : NULL, &node->db), 0);
    /* A simulated crash is a clean stop here; fsync only costs time. */
    assert_int_equal(
        engine_exec(node->db, "PRAGMA synchronous = OFF", NULL, NULL), 0);
    if (fresh && c->schema != NULL) {
        assert_int_equal(engine_exec(node->db, c->schema, NULL, NULL), 0);
    }
}

void cluster_start(struct cluster *c, unsigned i)
{
    struct cluster_node *node = &c->nodes[i];
    const struct transport_callbacks callbacks = {.received = on_received,
                                                  .connected = on_connected,
                                                  .disconnected =
                                                      on_disconnected,
                                                  .writable = on_writable,
                                                  .ctx = node};
    struct replication_config config = {0};
    struct transport_node_id members[CLUSTER_NODES_MAX];
    size_t member_count = 0;
    unsigned j;

    assert_false(node->up);
    if (getenv("SINEW_TEST_VERBOSE") != NULL) {
        printf("  [node %u t=%" PRIu64 "] start\n", i, c->now_ms);
    }
    open_database(c, node);
    assert_int_equal(transport_memory_new(c->net, &node->id, &callbacks, NULL,
                                          &node->transport),
                     0);
    config.mode = c->mode;
    config.db = node->db;
    config.transport = node->transport;
    config.clock.now_ms = node_now;
    config.clock.ctx = node;
    config.sync_interval_ms = c->sync_interval_ms;
    config.batch_bytes = c->batch_bytes;
    config.evict_after_ms = c->evict_after_ms;
    config.retention_ms = c->retention_ms;
    for (j = 0; j < c->count; j++) {
        if (node->links[j]) {
            members[member_count++] = c->nodes[j].id;
        }
    }
    config.members = members;
    config.member_count = member_count;
    config.random_bytes = node_random_bytes;
    config.random_ctx = node;
    config.is_writer = node_is_writer;
    config.is_writer_ctx = node;
    config.log = (struct common_log){.ctx = node,
                                     .min_level = getenv("SINEW_TEST_VERBOSE")
                                                      ? COMMON_LOG_INFO
                                                      : COMMON_LOG_WARN,
                                     .emit = node_log};
    assert_int_equal(replication_open(&config, &node->replication), 0);
    assert_int_equal(transport_listen(node->transport, node->address), 0);
    node->up = true;
    node->next_tick_ms = 0;
    for (j = 0; j < c->count; j++) {
        if (node->links[j]) {
            assert_int_equal(transport_connect(node->transport, &c->nodes[j].id,
                                               c->nodes[j].address),
                             0);
        }
    }
}

static void closed(void *ctx)
{
    (void)ctx;
}

void cluster_stop(struct cluster *c, unsigned i)
{
    struct cluster_node *node = &c->nodes[i];

    assert_true(node->up);
    if (getenv("SINEW_TEST_VERBOSE") != NULL) {
        printf("  [node %u t=%" PRIu64 "] stop\n", i, c->now_ms);
    }
    replication_close(node->replication);
    transport_close(node->transport, closed, NULL);
    engine_close(node->db);
    node->replication = NULL;
    node->transport = NULL;
    node->db = NULL;
    node->up = false;
}

void cluster_start_all(struct cluster *c)
{
    size_t i;

    for (i = 0; i < c->count; i++) {
        cluster_start(c, (unsigned)i);
    }
}

void cluster_link(struct cluster *c, unsigned i, unsigned j)
{
    c->nodes[i].links[j] = true;
    c->nodes[j].links[i] = true;
    if (c->nodes[i].up) {
        assert_int_equal(transport_connect(c->nodes[i].transport,
                                           &c->nodes[j].id,
                                           c->nodes[j].address),
                         0);
    }
    if (c->nodes[j].up) {
        assert_int_equal(transport_connect(c->nodes[j].transport,
                                           &c->nodes[i].id,
                                           c->nodes[i].address),
                         0);
    }
}

void cluster_link_all(struct cluster *c)
{
    unsigned i, j;

    for (i = 0; i < c->count; i++) {
        for (j = i + 1; j < c->count; j++) {
            cluster_link(c, i, j);
        }
    }
}

void cluster_pause(struct cluster *c, unsigned i, bool paused)
{
    c->nodes[i].paused = paused;
    if (paused) {
        assert_int_equal(
            transport_memory_network_pause(c->net, &c->nodes[i].id), 0);
    } else {
        transport_memory_network_resume(c->net, &c->nodes[i].id);
    }
}

static void tick(struct cluster_node *node)
{
    uint64_t next = 0;

    (void)replication_tick(node->replication, &next);
    node->next_tick_ms = next;
}

/* The cluster time of node's next tick. */
static uint64_t tick_due(const struct cluster_node *node)
{
    int64_t due =
        (int64_t)node->next_tick_ms - node->skew_ms - (int64_t)CLUSTER_T0_MS;

    return due < 0 ? 0 : (uint64_t)due;
}

void cluster_run(struct cluster *c, uint64_t ms)
{
    uint64_t end = c->now_ms + ms, next, due;
    unsigned same_time = 0;
    size_t i;

    for (;;) {
        (void)transport_memory_network_step(c->net);
        next = end;
        for (i = 0; i < c->count; i++) {
            struct cluster_node *node = &c->nodes[i];

            if (!node->up || node->paused) {
                continue;
            }
            if (tick_due(node) <= c->now_ms) {
                tick(node);
            }
            due = tick_due(node);
            next = due < next ? due : next;
        }
        if (transport_memory_network_next_due(c->net, &due) && due < next) {
            next = due;
        }
        if (c->now_ms >= end && next >= end) {
            return;
        }
        if (next <= c->now_ms) {
            assert_true(++same_time < SAME_TIME_STEPS_MAX);
            continue;
        }
        same_time = 0;
        c->now_ms = next;
    }
}

int cluster_exec_rc(struct cluster *c, unsigned i, const char *sql)
{
    struct cluster_node *node = &c->nodes[i];
    int rc;

    assert_true(node->up);
    rc = engine_exec(node->db, sql, NULL, NULL);
    node->last_stamp = engine_last_stamp(node->db);
    node->last_changes = engine_changes(node->db);
    snprintf(node->last_error, sizeof(node->last_error), "%s",
             engine_errmsg(node->db));
    tick(node);
    return rc;
}

void cluster_exec(struct cluster *c, unsigned i, const char *sql)
{
    int rc = cluster_exec_rc(c, i, sql);

    if (rc != 0) {
        fail_msg("node %u: %s: %s", i, sql, engine_errmsg(c->nodes[i].db));
    }
}

struct text {
    char *data;
    size_t size;
    size_t capacity;
};

static void text_append(struct text *t, const char *s)
{
    size_t n = strlen(s);

    if (t->size + n + 1 > t->capacity) {
        t->capacity = (t->size + n + 1) * 2;
        t->data = realloc(t->data, t->capacity);
        assert_non_null(t->data);
    }
    memcpy(t->data + t->size, s, n + 1);
    t->size += n;
}

static int rows_cb(void *ctx, int count, char **values, char **names)
{
    struct text *t = ctx;
    int i;

    (void)names;
    for (i = 0; i < count; i++) {
        text_append(t, i > 0 ? "|" : "");
        text_append(t, values[i] != NULL ? values[i] : "NULL");
    }
    text_append(t, "\n");
    return 0;
}

static void run_rows(struct cluster_node *node, const char *sql,
                     struct text *out)
{
    if (engine_exec(node->db, sql, rows_cb, out) != 0) {
        fail_msg("node %u: %s: %s", node->index, sql, engine_errmsg(node->db));
    }
}

void cluster_query(struct cluster *c, unsigned i, const char *sql, char *out,
                   size_t size)
{
    struct text t = {0};

    text_append(&t, "");
    run_rows(&c->nodes[i], sql, &t);
    if (t.size > 0 && t.data[t.size - 1] == '\n') {
        t.data[--t.size] = '\0';
    }
    snprintf(out, size, "%s", t.data);
    free(t.data);
}

void cluster_assert_query(struct cluster *c, unsigned i, const char *sql,
                          const char *expected)
{
    char got[4096];

    cluster_query(c, i, sql, got, sizeof(got));
    if (strcmp(got, expected) != 0) {
        fail_msg("node %u: %s: got \"%s\", want \"%s\"", i, sql, got, expected);
    }
}

static const char *const metadata_sql[] = {
    "SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT 'VV', hex(site), head FROM sinew_crdt_vv WHERE head > 0"
    " ORDER BY site",
};

/* SELECT 'name', quote(c1), ... FROM name ORDER BY 2, 3, ... */
static void dump_table(struct cluster_node *node, const char *table,
                       struct text *out)
{
    struct text columns = {0}, sql = {0};
    char *line, *save = NULL;
    unsigned n = 0, k;
    char buf[64];

    text_append(&columns, "");
    text_append(&sql, "");
    snprintf(buf, sizeof(buf), "PRAGMA table_info(\"%s\")", table);
    run_rows(node, buf, &columns); /* cid|name|type|notnull|dflt|pk */
    text_append(&sql, "SELECT '");
    text_append(&sql, table);
    text_append(&sql, "'");
    for (line = strtok_r(columns.data, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *name = strchr(line, '|'), *end;

        assert_non_null(name);
        end = strchr(++name, '|');
        assert_non_null(end);
        *end = '\0';
        text_append(&sql, ", quote(\"");
        text_append(&sql, name);
        text_append(&sql, "\")");
        n++;
    }
    text_append(&sql, " FROM \"");
    text_append(&sql, table);
    text_append(&sql, "\" ORDER BY ");
    for (k = 0; k < n; k++) {
        snprintf(buf, sizeof(buf), "%s%u", k > 0 ? ", " : "", k + 2);
        text_append(&sql, buf);
    }
    run_rows(node, sql.data, out);
    free(columns.data);
    free(sql.data);
}

char *cluster_dump(struct cluster *c, unsigned i)
{
    struct cluster_node *node = &c->nodes[i];
    struct text tables = {0}, out = {0};
    char *line, *save = NULL;
    size_t k;

    text_append(&tables, "");
    text_append(&out, "");
    run_rows(node,
             "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY"
             " name",
             &tables);
    for (line = strtok_r(tables.data, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        dump_table(node, line, &out);
    }
    for (k = 0; k < sizeof(metadata_sql) / sizeof(metadata_sql[0]); k++) {
        run_rows(node, metadata_sql[k], &out);
    }
    free(tables.data);
    return out.data;
}

void cluster_assert_converged(struct cluster *c)
{
    struct replication_stats stats;
    char *first = NULL, *other;
    unsigned i, first_index = 0;

    for (i = 0; i < c->count; i++) {
        if (!c->nodes[i].up) {
            continue;
        }
        assert_int_equal(replication_stats_get(c->nodes[i].replication, &stats),
                         0);
        if (stats.waiting != 0 || stats.deferred != 0) {
            fail_msg("node %u still holds %zu waiting, %zu deferred", i,
                     stats.waiting, stats.deferred);
        }
        replication_stats_release(&stats);
        if (first == NULL) {
            first = cluster_dump(c, i);
            first_index = i;
            continue;
        }
        other = cluster_dump(c, i);
        if (strcmp(first, other) != 0) {
            printf("node %u:\n%s\nnode %u:\n%s", first_index, first, i, other);
            free(other);
            free(first);
            fail_msg("node %u differs from node %u", i, first_index);
        }
        free(other);
    }
    free(first);
}
