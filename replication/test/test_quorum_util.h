/* SPDX-License-Identifier: MIT
 *
 * test_quorum_util.h: what the quorum tests share: a node (an engine
 * database in a file under $TMPDIR with quorum mode open on it), a way to
 * run SQL through execute and apply as consensus would, and a dump of the
 * whole database (schema, every table's rows with rowids and exact
 * storage classes) to compare replicas with.
 *
 * SYNCHRONOUS (a global the test groups set) is the PRAGMA synchronous
 * every node opens with: the state machine must work with either, as
 * replication.h allows synchronous=OFF under Raft's durable log.
 */
#ifndef SINEW_TEST_QUORUM_UTIL_H
#define SINEW_TEST_QUORUM_UTIL_H

#include "common_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replication.h"

#define DUMP_SIZE 65536

static const char *quorum_test_synchronous = "FULL";

struct node {
    char dir[512];
    char path[600];
    struct engine_db *db;
    struct replication_quorum *q;
    uint64_t term; /* the term node_commit() applies in */
};

static inline void node_open(struct node *n)
{
    char pragma[64];

    assert_int_equal(engine_open(n->path, &n->db), 0);
    snprintf(pragma, sizeof(pragma), "PRAGMA synchronous=%s",
             quorum_test_synchronous);
    assert_int_equal(engine_exec(n->db, pragma, NULL, NULL), 0);
    assert_int_equal(replication_quorum_open(n->db, NULL, &n->q), 0);
    if (n->term == 0) {
        n->term = 1;
    }
}

/* A fresh node in a new directory. */
static inline void node_make(struct node *n)
{
    const char *tmp = getenv("TMPDIR");

    memset(n, 0, sizeof(*n));
    snprintf(n->dir, sizeof(n->dir), "%s/quorum_XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(n->dir));
    snprintf(n->path, sizeof(n->path), "%s/n.sinew", n->dir);
    node_open(n);
}

static inline void node_close(struct node *n)
{
    replication_quorum_close(n->q);
    engine_close(n->db);
    n->q = NULL;
    n->db = NULL;
}

static inline void node_reopen(struct node *n)
{
    node_close(n);
    node_open(n);
}

static inline void node_remove(struct node *n)
{
    char wal[sizeof(n->path) + 8];

    if (n->db != NULL) {
        node_close(n);
    }
    snprintf(wal, sizeof(wal), "%s-wal", n->path);
    unlink(wal);
    unlink(n->path);
    rmdir(n->dir);
}

static inline int exec_cb(void *ctx, struct engine_db *db)
{
    return engine_exec(db, ctx, NULL, NULL);
}

static inline void txn_id(uint8_t id[16], unsigned value)
{
    memset(id, 0, 16);
    id[0] = (uint8_t)value;
    id[1] = (uint8_t)(value >> 8);
    id[15] = 0x51;
}

/* Executes sql as transaction id_value into set (appended). */
static inline int node_execute(struct node *n, const char *sql,
                               unsigned id_value, struct common_buf *set)
{
    uint8_t id[16];

    txn_id(id, id_value);
    return replication_quorum_execute(n->q, exec_cb, (void *)sql, id, set);
}

/* Applies count sets (bufs) as the entry index in n->term. */
static inline void node_apply(struct node *n, uint64_t index,
                              const struct common_buf *bufs, size_t count,
                              int *results)
{
    const uint8_t *sets[8];
    size_t sizes[8];

    assert_true(count <= 8);
    for (size_t i = 0; i < count; i++) {
        sets[i] = bufs[i].data;
        sizes[i] = bufs[i].size;
    }
    assert_int_equal(replication_quorum_apply(n->q, index, n->term, sets, sizes,
                                              count, results),
                     0);
}

/* Executes sql and applies it as the next entry; returns its result and
 * leaves the set in *set when set is not NULL (the caller closes it). */
static inline int node_commit(struct node *n, const char *sql,
                              unsigned id_value, struct common_buf *set)
{
    struct common_buf own;
    struct common_buf *buf = set != NULL ? set : &own;
    int result = 1;

    common_buf_init(buf, SIZE_MAX);
    assert_int_equal(node_execute(n, sql, id_value, buf), 0);
    node_apply(n, replication_quorum_applied_index(n->q) + 1, buf, 1, &result);
    if (set == NULL) {
        common_buf_close(&own);
    }
    return result;
}

static inline void dump_append(char *out, const char *text)
{
    size_t used = strlen(out);

    assert_true(used + strlen(text) < DUMP_SIZE);
    memcpy(out + used, text, strlen(text) + 1);
}

static inline void dump_value(struct engine_stmt *stmt, int c, char *out)
{
    char text[128];
    const unsigned char *bytes;
    int type = engine_column_type(stmt, c);

    if (type == ENGINE_INTEGER) {
        snprintf(text, sizeof(text), " i:%lld",
                 (long long)engine_column_int64(stmt, c));
    } else if (type == ENGINE_FLOAT) {
        snprintf(text, sizeof(text), " r:%a", engine_column_double(stmt, c));
    } else if (type == ENGINE_NULL) {
        snprintf(text, sizeof(text), " null");
    } else {
        snprintf(text, sizeof(text), " %c:", type == ENGINE_TEXT ? 't' : 'b');
        dump_append(out, text);
        bytes = type == ENGINE_TEXT
                    ? (const unsigned char *)engine_column_text(stmt, c)
                    : engine_column_blob(stmt, c);
        text[0] = '\0';
        for (int i = 0; i < engine_column_bytes(stmt, c); i++) {
            snprintf(text, sizeof(text), "%02x", bytes[i]);
            dump_append(out, text);
        }
        return;
    }
    dump_append(out, text);
}

/* Appends every row of the query sql. */
static inline void dump_query(struct engine_db *db, const char *sql, char *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        for (int c = 0; c < engine_column_count(stmt); c++) {
            dump_value(stmt, c, out);
        }
        dump_append(out, "\n");
    }
    assert_int_equal(rc, ENGINE_DONE);
    engine_finalize(stmt);
}

/* The schema, then every table's rows by rowid. */
static inline void dump(struct engine_db *db, char *out)
{
    char names[32][64];
    char sql[256];
    size_t count = 0;
    struct engine_stmt *stmt = NULL;

    out[0] = '\0';
    dump_query(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema", out);
    assert_int_equal(engine_prepare(db,
                                    "SELECT name FROM sqlite_schema WHERE"
                                    " type = 'table' ORDER BY name",
                                    -1, &stmt, NULL),
                     0);
    while (engine_step(stmt) == ENGINE_ROW && count < 32) {
        snprintf(names[count++], sizeof(names[0]), "%s",
                 engine_column_text(stmt, 0));
    }
    engine_finalize(stmt);
    for (size_t i = 0; i < count; i++) {
        char quoted[2 * sizeof(names[0])];
        size_t at = 0;
        for (const char *p = names[i]; *p != '\0'; p++) {
            quoted[at++] = *p;
            if (*p == '"') {
                quoted[at++] = '"';
            }
        }
        quoted[at] = '\0';
        snprintf(sql, sizeof(sql),
                 "SELECT _rowid_, * FROM \"%s\" ORDER BY _rowid_", quoted);
        dump_append(out, names[i]);
        dump_append(out, ":\n");
        dump_query(db, sql, out);
    }
}

/* The single integer sql answers on db. */
static inline int64_t query_int(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;
    int64_t value;

    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    value = engine_column_int64(stmt, 0);
    engine_finalize(stmt);
    return value;
}

/* Group setups: the suites run once with each PRAGMA synchronous the
 * state machine may be given. */
static inline int synchronous_full(void **state)
{
    quorum_test_synchronous = "FULL";
    return common_test_group_setup(state);
}

static inline int synchronous_off(void **state)
{
    quorum_test_synchronous = "OFF";
    return common_test_group_setup(state);
}

#endif /* SINEW_TEST_QUORUM_UTIL_H */
