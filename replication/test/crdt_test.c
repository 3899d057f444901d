/* SPDX-License-Identifier: MIT
 *
 * crdt_test.c: the crdt tests' nodes, pools and dumps (crdt_test.h).
 * Nodes share no state; the large dump buffers are static, so the helpers
 * are not reentrant (tests run one at a time).
 */
#include "crdt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void crdt_test_dir_make(struct crdt_test_dir *dir, const char *prefix)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir->dir, sizeof(dir->dir), "%s/%s_XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", prefix);
    assert_non_null(mkdtemp(dir->dir));
    snprintf(dir->path, sizeof(dir->path), "%s/n.sinew", dir->dir);
}

void crdt_test_dir_remove(struct crdt_test_dir *dir)
{
    char wal[sizeof(dir->path) + 8];

    snprintf(wal, sizeof(wal), "%s-wal", dir->path);
    unlink(wal);
    unlink(dir->path);
    rmdir(dir->dir);
}

static uint64_t crdt_test_now_ms(void *ctx)
{
    return ((struct crdt_test_node *)ctx)->now_ms;
}

int crdt_test_random(void *ctx, uint8_t *out, size_t size)
{
    memset(out, ((struct crdt_test_node *)ctx)->site_byte, size);
    return 0;
}

static void crdt_test_log(void *ctx, int level, const char *file, int line,
                          const char *msg)
{
    struct crdt_test_node *node = ctx;

    (void)file;
    (void)line;
    if (level == COMMON_LOG_WARN) {
        node->warnings++;
    } else if (level >= COMMON_LOG_ERROR) {
        node->errors++;
        printf("node %02x error: %s\n", node->site_byte, msg);
    }
}

void crdt_test_exec(struct crdt_test_node *node, const char *sql)
{
    if (engine_exec(node->db, sql, NULL, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(node->db));
    }
}

void crdt_test_attach(struct crdt_test_node *node)
{
    struct hlc_config hc = {{node, crdt_test_now_ms},
                            HLC_MAX_OFFSET_MS_DEFAULT};
    struct replication__crdt_config config = {0};

    hlc_init(&node->clock, &hc);
    config.db = node->db;
    config.clock = &node->clock;
    config.random_bytes = crdt_test_random;
    config.random_ctx = node;
    config.log = (struct common_log){
        .ctx = node, .min_level = COMMON_LOG_WARN, .emit = crdt_test_log};
    assert_int_equal(replication__crdt_open(&config, &node->crdt), 0);
}

void crdt_test_open(struct crdt_test_node *node, uint8_t site_byte,
                    const char *schema)
{
    memset(node, 0, sizeof(*node));
    crdt_test_open_path(node, site_byte, NULL, schema);
}

void crdt_test_open_path(struct crdt_test_node *node, uint8_t site_byte,
                         const char *path, const char *schema)
{
    node->site_byte = site_byte;
    if (node->now_ms == 0) {
        node->now_ms = CRDT_TEST_T0;
    }
    assert_int_equal(engine_open(path, &node->db), 0);
    if (schema != NULL) {
        crdt_test_exec(node, schema);
    }
    crdt_test_attach(node);
}

void crdt_test_close(struct crdt_test_node *node)
{
    replication__crdt_close(node->crdt);
    engine_close(node->db);
    node->crdt = NULL;
    node->db = NULL;
}

void crdt_test_close_all(struct crdt_test_node *nodes, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (nodes[i].db != NULL) {
            crdt_test_close(&nodes[i]);
        }
    }
}

void crdt_test_tick(struct crdt_test_node *nodes, size_t n, uint64_t ms)
{
    size_t i;

    for (i = 0; i < n; i++) {
        nodes[i].now_ms += ms;
    }
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

void crdt_test_ship(struct crdt_test_node *node, const uint8_t *origin,
                    uint64_t after, struct crdt_test_pool *pool)
{
    assert_int_equal(replication__crdt_log_since(node->crdt, origin, after,
                                                 crdt_test_collect_cb, pool),
                     0);
}

void crdt_test_ship_new(struct crdt_test_node *node,
                        struct crdt_test_pool *pool)
{
    crdt_test_ship(node, replication__crdt_site(node->crdt), node->shipped,
                   pool);
    assert_int_equal(
        replication__crdt_local_version(node->crdt, &node->shipped), 0);
}

void crdt_test_apply(struct crdt_test_node *node,
                     const struct replication__changeset *cs, bool deferred_ok)
{
    int rc = replication__crdt_apply(node->crdt, cs);

    if (rc != 0 && !(deferred_ok && rc == REPLICATION_EDEFERRED)) {
        fail_msg("apply: %s: %s", replication_strerror(rc),
                 engine_errmsg(node->db));
    }
}

void crdt_test_deliver(struct crdt_test_node *node,
                       const struct crdt_test_pool *pool)
{
    size_t i;

    for (i = 0; i < pool->count; i++) {
        crdt_test_apply(node, pool->items[i], false);
    }
}

void crdt_test_pool_free(struct crdt_test_pool *pool)
{
    size_t i;

    for (i = 0; i < pool->count; i++) {
        replication__crdt_changeset_free(pool->items[i]);
    }
    pool->count = 0;
}

void crdt_test_push(struct crdt_test_node *from, struct crdt_test_node *to)
{
    struct crdt_test_pool pool = {.count = 0};
    const uint8_t *site = replication__crdt_site(from->crdt);
    uint64_t head;

    assert_int_equal(replication__crdt_head(to->crdt, site, &head), 0);
    crdt_test_ship(from, site, head, &pool);
    crdt_test_deliver(to, &pool);
    crdt_test_pool_free(&pool);
}

void crdt_test_sync_all(struct crdt_test_node *nodes, size_t n,
                        struct crdt_test_pool *pool, bool deferred_ok)
{
    size_t i, j;

    for (i = 0; i < n; i++) {
        crdt_test_ship_new(&nodes[i], pool);
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < pool->count; j++) {
            crdt_test_apply(&nodes[i], pool->items[j], deferred_ok);
        }
    }
}

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

void crdt_test_query_into(struct crdt_test_node *node, const char *sql,
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

const struct crdt_test_dump_spec crdt_test_dump_all = {
    crdt_test_table_sql, crdt_test_meta_sql,
    sizeof(crdt_test_meta_sql) / sizeof(crdt_test_meta_sql[0])};

/* Appends the rows of each table, tables by name, as table_sql selects
 * them. */
static void crdt_test_dump_tables(struct crdt_test_node *node,
                                  crdt_test_table_sql_fn *table_sql,
                                  struct crdt_test_dump *d)
{
    static struct crdt_test_dump tables;
    char sql[4096];
    char *name, *next;

    tables.size = 0;
    tables.text[0] = '\0';
    crdt_test_query_into(node,
                         "SELECT name FROM sqlite_schema WHERE type = 'table'"
                         " ORDER BY name",
                         &tables);
    for (name = tables.text; *name != '\0'; name = next + 1) {
        next = strchr(name, '\n');
        *next = '\0';
        table_sql(node, name, sql, sizeof(sql));
        crdt_test_query_into(node, sql, d);
    }
}

void crdt_test_dump(struct crdt_test_node *node,
                    const struct crdt_test_dump_spec *spec,
                    struct crdt_test_dump *d)
{
    size_t i;

    d->size = 0;
    d->text[0] = '\0';
    if (spec->table_sql != NULL) {
        crdt_test_dump_tables(node, spec->table_sql, d);
    }
    for (i = 0; i < spec->sql_count; i++) {
        crdt_test_query_into(node, spec->sql[i], d);
    }
}

void crdt_test_assert_same(struct crdt_test_node *a, struct crdt_test_node *b)
{
    static struct crdt_test_dump da, db;

    crdt_test_dump(a, &crdt_test_dump_all, &da);
    crdt_test_dump(b, &crdt_test_dump_all, &db);
    if (strcmp(da.text, db.text) != 0) {
        printf("node %02x:\n%s\nnode %02x:\n%s", a->site_byte, da.text,
               b->site_byte, db.text);
        fail_msg("nodes %02x and %02x differ", a->site_byte, b->site_byte);
    }
}

void crdt_test_assert_converged(struct crdt_test_node *nodes, size_t n,
                                const struct crdt_test_dump_spec *spec)
{
    static struct crdt_test_dump first, other;
    size_t i;

    for (i = 0; i < n; i++) {
        assert_int_equal(replication__crdt_held_count(nodes[i].crdt), 0);
        crdt_test_dump(&nodes[i], spec, i == 0 ? &first : &other);
        if (i > 0 && strcmp(first.text, other.text) != 0) {
            printf("node 0:\n%s\nnode %zu:\n%s", first.text, i, other.text);
            fail_msg("node %zu differs from node 0", i);
        }
    }
}

void crdt_test_query(struct crdt_test_node *node, const char *sql, char *out,
                     size_t size)
{
    static struct crdt_test_dump d;

    d.size = 0;
    d.text[0] = '\0';
    crdt_test_query_into(node, sql, &d);
    if (d.size > 0 && d.text[d.size - 1] == '\n') {
        d.text[--d.size] = '\0';
    }
    snprintf(out, size, "%s", d.text);
}

void crdt_test_assert_query(struct crdt_test_node *node, const char *sql,
                            const char *expected)
{
    static char got[CRDT_TEST_DUMP_SIZE];

    crdt_test_query(node, sql, got, sizeof(got));
    if (strcmp(got, expected) != 0) {
        fail_msg("%s: got \"%s\", want \"%s\"", sql, got, expected);
    }
}
