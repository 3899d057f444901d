/* SPDX-License-Identifier: MIT
 *
 * crdt_test.h: in-process crdt nodes for tests (the setup of test_crdt.c,
 * made reusable): an engine in memory, a fake physical clock moved by
 * hand, a fixed site id (16 times site_byte), change sets handed from one
 * node's change log to another's replication__crdt_apply() through a pool
 * of deep copies, and a canonical text dump of a node's whole replicated
 * state (every user table, the schema, the registers, the column catalog,
 * the version vector) for comparing nodes.
 *
 * Static functions in a header: each test executable includes it once.
 */
#ifndef SINEW_REPLICATION_CRDT_TEST_H
#define SINEW_REPLICATION_CRDT_TEST_H

#include <stdio.h>
#include <string.h>

#include "common_test.h"
#include "crdt.h"
#include "replication.h"

#define CRDT_TEST_T0 UINT64_C(1764686000000)
#define CRDT_TEST_POOL_MAX 1024
#define CRDT_TEST_DUMP_SIZE ((size_t)1 << 20)

struct crdt_test_node {
    struct engine_db *db;
    uint64_t now_ms; /* the fake physical clock */
    struct hlc clock;
    struct replication__crdt *crdt;
    uint8_t site_byte;
    unsigned warnings; /* WARN messages logged by the crdt state */
};

struct crdt_test_pool {
    struct replication__changeset *items[CRDT_TEST_POOL_MAX];
    size_t count;
};

static uint64_t crdt_test_now_ms(void *ctx)
{
    return ((struct crdt_test_node *)ctx)->now_ms;
}

static int crdt_test_random(void *ctx, uint8_t *out, size_t size)
{
    memset(out, ((struct crdt_test_node *)ctx)->site_byte, size);
    return 0;
}

static void crdt_test_log(void *ctx, int level, const char *file, int line,
                          const char *msg)
{
    (void)file;
    (void)line;
    (void)msg;
    if (level >= COMMON_LOG_WARN) {
        ((struct crdt_test_node *)ctx)->warnings++;
    }
}

static void crdt_test_exec(struct crdt_test_node *node, const char *sql)
{
    int rc = engine_exec(node->db, sql, NULL, NULL);

    if (rc != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(node->db));
    }
}

/* Opens node with site id site_byte; schema (may be NULL) runs before crdt
 * mode opens, as a database made before replication. */
static void crdt_test_open(struct crdt_test_node *node, uint8_t site_byte,
                           const char *schema)
{
    struct hlc_config hc;
    struct replication__crdt_config config = {0};

    memset(node, 0, sizeof(*node));
    node->now_ms = CRDT_TEST_T0;
    node->site_byte = site_byte;
    hc.clock.ctx = node;
    hc.clock.now_ms = crdt_test_now_ms;
    hc.max_offset_ms = HLC_MAX_OFFSET_MS_DEFAULT;
    hlc_init(&node->clock, &hc);
    assert_int_equal(engine_open(NULL, &node->db), 0);
    if (schema != NULL) {
        crdt_test_exec(node, schema);
    }
    config.db = node->db;
    config.clock = &node->clock;
    config.random_bytes = crdt_test_random;
    config.random_ctx = node;
    config.log = (struct common_log){
        .ctx = node, .min_level = COMMON_LOG_WARN, .emit = crdt_test_log};
    assert_int_equal(replication__crdt_open(&config, &node->crdt), 0);
}

static void crdt_test_close(struct crdt_test_node *node)
{
    replication__crdt_close(node->crdt);
    engine_close(node->db);
    memset(node, 0, sizeof(*node));
}

static int crdt_test_collect_cb(void *ctx,
                                const struct replication__changeset *cs)
{
    struct crdt_test_pool *pool = ctx;

    assert_true(pool->count < CRDT_TEST_POOL_MAX);
    assert_int_equal(
        replication__crdt_changeset_clone(cs, &pool->items[pool->count]), 0);
    pool->count++;
    return 0;
}

/* Puts the change sets of origin in node's log above version after into
 * the pool. */
static void crdt_test_ship(struct crdt_test_node *node, const uint8_t *origin,
                           uint64_t after, struct crdt_test_pool *pool)
{
    assert_int_equal(replication__crdt_log_since(node->crdt, origin, after,
                                                 crdt_test_collect_cb, pool),
                     0);
}

static void crdt_test_deliver(struct crdt_test_node *node,
                              const struct crdt_test_pool *pool)
{
    size_t i;
    int rc;

    for (i = 0; i < pool->count; i++) {
        rc = replication__crdt_apply(node->crdt, pool->items[i]);
        if (rc != 0) {
            fail_msg("apply: %s: %s", replication_strerror(rc),
                     engine_errmsg(node->db));
        }
    }
}

static void crdt_test_pool_free(struct crdt_test_pool *pool)
{
    size_t i;

    for (i = 0; i < pool->count; i++) {
        replication__crdt_changeset_free(pool->items[i]);
    }
    pool->count = 0;
}

/* Everything from's log holds of from's own site above what to has of it,
 * delivered to to. */
static void crdt_test_push(struct crdt_test_node *from,
                           struct crdt_test_node *to)
{
    struct crdt_test_pool pool = {.count = 0};
    const uint8_t *site = replication__crdt_site(from->crdt);
    uint64_t head;

    assert_int_equal(replication__crdt_head(to->crdt, site, &head), 0);
    crdt_test_ship(from, site, head, &pool);
    crdt_test_deliver(to, &pool);
    crdt_test_pool_free(&pool);
}

struct crdt_test_dump {
    char text[CRDT_TEST_DUMP_SIZE];
    size_t size;
};

static int crdt_test_dump_cb(void *ctx, int count, char **values, char **names)
{
    struct crdt_test_dump *d = ctx;
    int i;

    (void)names;
    for (i = 0; i < count; i++) {
        d->size += (size_t)snprintf(
            d->text + d->size, sizeof(d->text) - d->size, "%s%s", i ? "|" : "",
            values[i] ? values[i] : "NULL");
        assert_true(d->size < sizeof(d->text) - 1);
    }
    d->text[d->size++] = '\n';
    d->text[d->size] = '\0';
    return 0;
}

static void crdt_test_query_into(struct crdt_test_node *node, const char *sql,
                                 struct crdt_test_dump *d)
{
    if (engine_exec(node->db, sql, crdt_test_dump_cb, d) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(node->db));
    }
}

/* SELECT 'T', name, [rowid,] quote(every column) FROM name ORDER BY them:
 * the rowid only for a table keyed by it (elsewhere it is local). */
static void crdt_test_table_sql(struct crdt_test_node *node, const char *table,
                                char *sql, size_t size)
{
    struct engine_stmt *stmt = NULL;
    char columns[2048];
    size_t n = 0, count = 0, i;
    bool keyed = false;

    columns[0] = '\0';
    snprintf(sql, size, "PRAGMA table_info(\"%.200s\")", table);
    assert_int_equal(engine_prepare(node->db, sql, -1, &stmt, NULL), 0);
    while (engine_step(stmt) == ENGINE_ROW) {
        keyed = keyed || engine_column_int64(stmt, 5) != 0;
        n += (size_t)snprintf(columns + n, sizeof(columns) - n,
                              ", quote(\"%s\")", engine_column_text(stmt, 1));
        count++;
    }
    engine_finalize(stmt);
    assert_true(n < sizeof(columns));
    n = (size_t)snprintf(sql, size,
                         "SELECT 'T', '%.200s'%s%s FROM \"%.200s\" ORDER BY 3",
                         table, keyed ? "" : ", rowid", columns, table);
    for (i = 4; i < count + 3 + !keyed; i++) {
        n += (size_t)snprintf(sql + n, size - n, ", %zu", i);
    }
    assert_true(n < size);
}

static const char *const crdt_test_meta_sql[] = {
    "SELECT 'S', type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
    " ORDER BY name",
    "SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT 'COL', tbl, col FROM sinew_crdt_column ORDER BY tbl, col",
    "SELECT 'VV', hex(site), head FROM sinew_crdt_vv ORDER BY site",
};

/* node's replicated state as canonical text into d. */
static void crdt_test_dump(struct crdt_test_node *node,
                           struct crdt_test_dump *d)
{
    static struct crdt_test_dump tables;
    char sql[4096];
    char *name, *next;
    size_t i;

    d->size = 0;
    d->text[0] = '\0';
    tables.size = 0;
    crdt_test_query_into(node,
                         "SELECT name FROM sqlite_schema WHERE type = 'table'"
                         " ORDER BY name",
                         &tables);
    for (name = tables.text; *name != '\0'; name = next + 1) {
        next = strchr(name, '\n');
        *next = '\0';
        crdt_test_table_sql(node, name, sql, sizeof(sql));
        crdt_test_query_into(node, sql, d);
    }
    for (i = 0; i < sizeof(crdt_test_meta_sql) / sizeof(*crdt_test_meta_sql);
         i++) {
        crdt_test_query_into(node, crdt_test_meta_sql[i], d);
    }
}

/* The dumps of a and b are the same (printed when not). */
static void crdt_test_assert_same(struct crdt_test_node *a,
                                  struct crdt_test_node *b)
{
    static struct crdt_test_dump da, db;

    crdt_test_dump(a, &da);
    crdt_test_dump(b, &db);
    if (strcmp(da.text, db.text) != 0) {
        printf("node %02x:\n%s\nnode %02x:\n%s", a->site_byte, da.text,
               b->site_byte, db.text);
        fail_msg("nodes %02x and %02x differ", a->site_byte, b->site_byte);
    }
}

/* The first column of the only row sql returns, as text ("NULL"). */
static void crdt_test_assert_query(struct crdt_test_node *node, const char *sql,
                                   const char *expected)
{
    static struct crdt_test_dump d;

    d.size = 0;
    d.text[0] = '\0';
    crdt_test_query_into(node, sql, &d);
    if (d.size > 0 && d.text[d.size - 1] == '\n') {
        d.text[--d.size] = '\0';
    }
    if (strcmp(d.text, expected) != 0) {
        fail_msg("%s: got \"%s\", want \"%s\"", sql, d.text, expected);
    }
}

#endif /* SINEW_REPLICATION_CRDT_TEST_H */
