/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot.c: a snapshot of this node's replicated state, for a node
 * whose missing history is no longer in anyone's change log (crdt.md
 * §6.5 item 6: "if a peer's summary is older than the GC watermark ...
 * switch to snapshot transfer"; §6.7: such a node "restores a snapshot,
 * then re-applies its own unacknowledged local transactions as new
 * transactions"; §5 #25, #26, #27, #36). Also the floors: per origin, the
 * versions no longer in this node's change log (sinew_crdt_floor).
 *
 * A snapshot is read in one read transaction (BEGIN ... COMMIT: the
 * engine's reads see the database as of the transaction's first statement,
 * engine.h "Connections"), so its parts agree with each other: the version
 * vector, the floors, the schema (every CREATE of sqlite_schema in creation
 * order), every user table's rows with their values' types, the registers
 * (sinew_crdt_row, sinew_crdt_cell with their shadows), the column catalog
 * (sinew_crdt_column) and the kept change sets (sinew_crdt_pending, reason
 * 'schema': records of applied versions waiting for a schema, part of the
 * state those versions made). Layout: crdt_snapshot_int.h and
 * docs/formats.md, "Snapshots".
 *
 * Memory: the body is built whole in memory, then compressed whole, so a
 * build holds up to about twice the body (at most
 * REPLICATION__SNAPSHOT_BODY_MAX), and the receiver holds the snapshot and
 * its decompressed body while it checks and installs it. Fine for the
 * databases of today's nodes; a streamed snapshot (table ranges, crdt.md
 * §6.5 item 6) replaces this when they outgrow it.
 *
 * A table the registers cannot describe (a name with a double quote, or no
 * free name for its rowid) is not replicated by any merge either; it is
 * left out of the snapshot with its indexes, and logged.
 */
#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"
#include "crdt_snapshot_int.h"
#include "replication.h"

struct build {
    struct replication__crdt *crdt;
    msgpack_packer pk;
    struct common_buf body;
    int rc;                                  /* the first append error */
    struct replication__crdt_table **tables; /* replicable, schema order */
    size_t table_count;
    struct common_buf skipped; /* names left out, NUL-terminated */
};

static int write_cb(void *data, const char *bytes, size_t size)
{
    struct build *b = data;
    int rc = common_buf_append(&b->body, bytes, size);

    if (rc != 0 && b->rc == 0) {
        b->rc = rc;
    }
    return rc;
}

/* The packer's result: its append error, or -1 as ENOMEM. */
static int packed(struct build *b, int rc)
{
    if (b->rc != 0) {
        return b->rc;
    }
    return rc == 0 ? 0 : COMMON_ENOMEM;
}

/* An array whose count is written when it is known (array 32, patched by
 * array_close: the reader takes any width). */
static int array_open(struct build *b, size_t *at)
{
    static const uint8_t head[5] = {0xdd, 0, 0, 0, 0};

    *at = b->body.size;
    return packed(b, write_cb(b, (const char *)head, sizeof(head)));
}

static void array_close(struct build *b, size_t at, size_t count)
{
    ASSERT(count <= UINT32_MAX); /* each element takes a byte of the body */
    ASSERT(at + 5 <= b->body.size);
    b->body.data[at + 1] = (uint8_t)(count >> 24);
    b->body.data[at + 2] = (uint8_t)(count >> 16);
    b->body.data[at + 3] = (uint8_t)(count >> 8);
    b->body.data[at + 4] = (uint8_t)count;
}

static int pack_value(struct build *b, const struct engine_change_value *v)
{
    msgpack_packer *pk = &b->pk;

    switch (v->type) {
    case ENGINE_INTEGER:
        return packed(b, msgpack_pack_int64(pk, v->integer));
    case ENGINE_FLOAT:
        return packed(b, msgpack_pack_double(pk, v->real));
    case ENGINE_TEXT:
        return packed(b, msgpack_pack_str_with_body(pk, v->bytes, v->size));
    case ENGINE_BLOB:
        return packed(b, msgpack_pack_bin_with_body(pk, v->bytes, v->size));
    default:
        return packed(b, msgpack_pack_nil(pk));
    }
}

/* Column i of stmt's row as kind: 'T' text, 'B' blob, 'S' a site id (16
 * bytes), 'U' an integer >= 0, 'F' a flag (0 or 1), 'V' any value. Stored
 * metadata of another type is COMMON_ECORRUPT. */
static int pack_column(struct build *b, struct engine_stmt *stmt, int i,
                       char kind)
{
    struct engine_change_value v;
    int type = engine_column_type(stmt, i);

    replication__crdt_column_value(stmt, i, &v);
    if (kind == 'V') {
        return pack_value(b, &v);
    }
    if ((kind == 'T' && type != ENGINE_TEXT) ||
        ((kind == 'B' || kind == 'S') && type != ENGINE_BLOB) ||
        (kind == 'S' && v.size != REPLICATION__SITE_ID_BYTES) ||
        ((kind == 'U' || kind == 'F') &&
         (type != ENGINE_INTEGER || v.integer < 0))) {
        return COMMON_ECORRUPT;
    }
    if (kind == 'F') {
        return packed(b, msgpack_pack_uint8(&b->pk, v.integer != 0));
    }
    return kind == 'U'
               ? packed(b, msgpack_pack_uint64(&b->pk, (uint64_t)v.integer))
               : pack_value(b, &v);
}

/* Every row of sql as an array of its columns packed by kinds (one kind
 * per column); a single column bare when !wrap. */
static int pack_query(struct build *b, const char *sql, const char *kinds,
                      bool wrap)
{
    struct engine_stmt *stmt = NULL;
    size_t at, count = 0, i, width = strlen(kinds);
    int rc;

    rc = array_open(b, &at);
    rc = rc == 0 ? engine_prepare(b->crdt->db, sql, -1, &stmt, NULL) : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = wrap ? packed(b, msgpack_pack_array(&b->pk, width)) : 0;
        for (i = 0; rc == 0 && i < width; i++) {
            rc = pack_column(b, stmt, (int)i, kinds[i]);
        }
        count++;
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        return rc;
    }
    array_close(b, at, count);
    return 0;
}

/* The engine's choice of the rowid's name: the first of SQLite's rowid
 * names no column has taken. */
const char *
replication__snapshot_rowid_name(const struct replication__crdt_table *t)
{
    static const char *const names[] = {"rowid", "oid", "_rowid_"};
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (replication__crdt_table_column(t, names[i]) < 0) {
            return names[i];
        }
    }
    return NULL;
}

/* Loads the shape of table name, or sets it aside as not replicable. */
static int table_add(struct build *b, const char *name)
{
    struct replication__crdt_table *t = NULL, **grown;
    int rc = replication__crdt_table_load(b->crdt->db, name, &t);

    if (rc == 0 && t->key_count == 0 &&
        replication__snapshot_rowid_name(t) == NULL) {
        replication__crdt_table_free(t);
        rc = REPLICATION_ESCHEMA;
    }
    if (rc == REPLICATION_ESCHEMA) {
        LOGF(&b->crdt->log, COMMON_LOG_WARN,
             "snapshot leaves out a table merges cannot key table=%s", name);
        return common_buf_append(&b->skipped, name, strlen(name) + 1);
    }
    if (rc != 0) {
        return rc;
    }
    grown = common_realloc_array(b->tables, b->table_count + 1, sizeof(*grown));
    if (grown == NULL) {
        replication__crdt_table_free(t);
        return COMMON_ENOMEM;
    }
    b->tables = grown;
    b->tables[b->table_count++] = t;
    return 0;
}

static int tables_load(struct build *b)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(b->crdt->db,
                        "SELECT name FROM sqlite_schema WHERE type = 'table'",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = table_add(b, engine_column_text(stmt, 0));
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* [type, name, sql] of every table and index, in creation order, but those
 * of tables left out. */
static int pack_schema(struct build *b)
{
    struct engine_stmt *stmt = NULL;
    size_t at, count = 0;
    int rc;

    rc = array_open(b, &at);
    rc = rc == 0 ? engine_prepare(b->crdt->db,
                                  "SELECT type, name, sql, tbl_name FROM"
                                  " sqlite_schema WHERE sql IS NOT NULL AND"
                                  " type IN ('table', 'index')",
                                  -1, &stmt, NULL)
                 : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        const char *table = engine_column_text(stmt, 3);
        rc = 0;
        if (table != NULL && replication__crdt_names_have(&b->skipped, table)) {
            continue;
        }
        rc = packed(b, msgpack_pack_array(&b->pk, 3));
        rc = rc == 0 ? pack_column(b, stmt, 0, 'T') : rc;
        rc = rc == 0 ? pack_column(b, stmt, 1, 'T') : rc;
        rc = rc == 0 ? pack_column(b, stmt, 2, 'T') : rc;
        count++;
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        return rc;
    }
    array_close(b, at, count);
    return 0;
}

int replication__snapshot_quote(struct common_buf *sql, const char *name)
{
    int rc = common_buf_append_byte(sql, '"');

    for (; rc == 0 && *name != '\0'; name++) {
        rc = *name == '"' ? common_buf_append_byte(sql, '"') : 0;
        rc = rc == 0 ? common_buf_append_byte(sql, (uint8_t)*name) : rc;
    }
    return rc == 0 ? common_buf_append_byte(sql, '"') : rc;
}

/* SELECT [rowid,] every column FROM t. */
static int rows_sql(const struct replication__crdt_table *t,
                    struct common_buf *sql)
{
    size_t i;
    int rc = common_buf_append(sql, "SELECT ", 7);

    if (rc == 0 && t->key_count == 0) {
        rc = replication__snapshot_quote(sql,
                                         replication__snapshot_rowid_name(t));
        rc = rc == 0 ? common_buf_append(sql, ", ", 2) : rc;
    }
    for (i = 0; rc == 0 && i < t->column_count; i++) {
        rc = i > 0 ? common_buf_append(sql, ", ", 2) : 0;
        rc = rc == 0 ? replication__snapshot_quote(sql, t->columns[i]) : rc;
    }
    rc = rc == 0 ? common_buf_append(sql, " FROM ", 6) : rc;
    rc = rc == 0 ? replication__snapshot_quote(sql, t->name) : rc;
    return rc == 0 ? common_buf_append_byte(sql, '\0') : rc;
}

/* [name, columns, rowid, rows] of one table. */
static int pack_table(struct build *b, const struct replication__crdt_table *t)
{
    struct common_buf sql;
    size_t i, width = t->column_count + (t->key_count == 0 ? 1 : 0);
    const char *text;
    int rc;

    rc = packed(b, msgpack_pack_array(&b->pk, 4));
    rc = rc == 0 ? packed(b, msgpack_pack_str_with_body(&b->pk, t->name,
                                                        strlen(t->name)))
                 : rc;
    rc = rc == 0 ? packed(b, msgpack_pack_array(&b->pk, t->column_count)) : rc;
    for (i = 0; rc == 0 && i < t->column_count; i++) {
        text = t->columns[i];
        rc = packed(b, msgpack_pack_str_with_body(&b->pk, text, strlen(text)));
    }
    rc =
        rc == 0 ? packed(b, msgpack_pack_uint8(&b->pk, t->key_count == 0)) : rc;
    if (rc != 0) {
        return rc;
    }
    ASSERT(width <= ENGINE_MAX_COLUMNS + 1); /* the engine's limit */
    common_buf_init(&sql, SIZE_MAX);
    rc = rows_sql(t, &sql);
    if (rc == 0) {
        char kinds[ENGINE_MAX_COLUMNS + 2]; /* the rowid, the columns */
        memset(kinds, 'V', width);
        kinds[width] = '\0';
        rc = pack_query(b, (const char *)sql.data, kinds, true);
    }
    common_buf_close(&sql);
    return rc;
}

static int pack_tables(struct build *b)
{
    size_t i;
    int rc = packed(b, msgpack_pack_array(&b->pk, b->table_count));

    for (i = 0; rc == 0 && i < b->table_count; i++) {
        rc = pack_table(b, b->tables[i]);
    }
    return rc;
}

/* The body, part by part (crdt_snapshot_int.h), in the read transaction. */
static int pack_state(struct build *b)
{
    int rc;

    rc = tables_load(b);
    rc = rc == 0 ? packed(b, msgpack_pack_array(&b->pk, SNAPSHOT_PART_COUNT))
                 : rc;
    rc = rc == 0 ? packed(b, msgpack_pack_bin_with_body(&b->pk, b->crdt->site,
                                                        sizeof(b->crdt->site)))
                 : rc;
    rc = rc == 0 ? pack_query(b,
                              "SELECT site, head FROM sinew_crdt_vv"
                              " WHERE head > 0 ORDER BY site",
                              "SU", true)
                 : rc;
    rc = rc == 0 ? pack_query(b,
                              "SELECT origin, floor FROM sinew_crdt_floor"
                              " WHERE floor > 0 ORDER BY origin",
                              "SU", true)
                 : rc;
    rc = rc == 0 ? pack_schema(b) : rc;
    rc = rc == 0 ? pack_tables(b) : rc;
    rc = rc == 0 ? pack_query(b,
                              "SELECT tbl, pk, alive, hlc, site"
                              " FROM sinew_crdt_row",
                              "TBFUS", true)
                 : rc;
    rc = rc == 0 ? pack_query(b,
                              "SELECT tbl, pk, col, hlc, site, has_shadow,"
                              " shadow FROM sinew_crdt_cell",
                              "TBTUSFV", true)
                 : rc;
    rc = rc == 0 ? pack_query(b, "SELECT tbl, col FROM sinew_crdt_column", "TT",
                              true)
                 : rc;
    return rc == 0 ? pack_query(b,
                                "SELECT bytes FROM sinew_crdt_pending"
                                " WHERE reason = 'schema' ORDER BY rowid",
                                "B", false)
                   : rc;
}

int replication__crdt_snapshot_build(struct replication__crdt *crdt,
                                     struct common_buf *out)
{
    struct build b = {.crdt = crdt};
    size_t i;
    int rc, end_rc;

    ASSERT(crdt != NULL);
    ASSERT(out != NULL);
    ASSERT(!engine_in_transaction(crdt->db));
    common_buf_init(&b.body, REPLICATION__SNAPSHOT_BODY_MAX);
    common_buf_init(&b.skipped, SIZE_MAX);
    msgpack_packer_init(&b.pk, &b, write_cb);
    rc = engine_exec(crdt->db, "BEGIN", NULL, NULL);
    if (rc != 0) {
        goto cleanup;
    }
    rc = pack_state(&b);
    /* A read transaction: ending it writes nothing either way. */
    end_rc = engine_exec(crdt->db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL);
    rc = rc != 0 ? rc : end_rc;
    if (rc == 0) {
        rc = replication__snapshot_seal(b.body.data, b.body.size, crdt->site,
                                        out);
    }
cleanup:
    for (i = 0; i < b.table_count; i++) {
        replication__crdt_table_free(b.tables[i]);
    }
    common_free(b.tables);
    common_buf_close(&b.skipped);
    common_buf_close(&b.body);
    return rc;
}

int replication__crdt_floor(struct replication__crdt *crdt,
                            const uint8_t *origin, uint64_t *floor)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(origin != NULL);
    rc = engine_prepare(crdt->db,
                        "SELECT floor FROM sinew_crdt_floor WHERE origin = ?1",
                        -1, &stmt, NULL);
    rc = rc == 0 ? engine_bind_blob(stmt, 1, origin, REPLICATION__SITE_ID_BYTES)
                 : rc;
    rc = rc == 0 ? engine_step(stmt) : rc;
    if (rc == ENGINE_ROW || rc == ENGINE_DONE) {
        *floor = rc == ENGINE_ROW ? (uint64_t)engine_column_int64(stmt, 0) : 0;
        rc = 0;
    }
    engine_finalize(stmt);
    return rc;
}
