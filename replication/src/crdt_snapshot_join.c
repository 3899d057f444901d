/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot_join.c: the part of a snapshot install that makes it a
 * join (crdt.md §6.1: the state is a join-semilattice of last-writer-wins
 * registers) rather than a replacement: this node's registers the
 * snapshot may lack are read before the install drops them and merged over
 * the snapshot's state afterwards, by the change-set merge itself.
 *
 * Why. With log retention a node may have merged versions of an origin
 * that the snapshot's sender lacks and that no log holds any more (pruned
 * here, never received there); two halves of a relay line can each be in
 * that state towards the other. Replacing the state would lose those
 * versions, refusing the snapshot leaves both behind forever. Joining keeps
 * both sides' writes: every register ends as the greater by K = (hlc,
 * site), dead rows drop the cells at or below their K, as when the change
 * sets meet.
 *
 * Which registers. Only those whose K names an origin this node holds
 * more versions of than the snapshot, and whose log lost some of them
 * ("ahead" origins, named by the install; when the log holds them all the
 * install merges those change sets back instead, which is the same join):
 * every write of another origin is already in the snapshot, or beaten
 * there, or collected there as causally stable (a tombstone, the cells of
 * a dead row: crdt.md §5 #26, they must not come back). A register of an
 * ahead origin that the snapshot already has merges as a no-op.
 *
 * How. The registers become change sets, one per K (origin = K's site,
 * hlc = K's HLC, version 0: they carry no version bookkeeping), holding
 * per row its existence record (ALIVE or DEAD) first, then its cells as
 * SET records: a cell's value is its shadow, or, for a visible row, the
 * user table's. They are merged in descending K with
 * replication__crdt_merge_within(): a cell newer than its row's existence
 * lands in a shadow first, so a row that becomes visible is inserted whole
 * from its shadows. A change set's tables list the local table's columns,
 * so an ALIVE record fills the snapshot's columns this node lacked with
 * their DEFAULT at its K, as the INSERT would have on the sender (crdt.md
 * §6.8). Records for a table or column the installed schema lacks (a DDL
 * of another origin neither the snapshot nor this node's log holds) are
 * dropped and logged: schemas are ordered operations, not registers, and
 * have no join.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdt_int.h"
#include "crdt_snapshot_int.h"
#include "replication.h"

/* A row's address: its encoded key and the key values decoded from it,
 * both in the join's arena. */
struct join_row {
    const uint8_t *pk;
    size_t pk_size;
    const struct engine_change_value *key;
    size_t key_count;
};

/* One register of an ahead origin. */
struct join_item {
    uint64_t hlc;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    uint32_t table;  /* index into the join's tables */
    bool set;        /* a cell (SET), else the existence register */
    bool alive;      /* existence: alive, else dead */
    uint32_t column; /* SET: index into the table's local columns */
    const struct join_row *row;
    struct engine_change_value value; /* SET: in the arena */
};

/* Reading one table: the row the last register was of, and the user
 * table's values of the last visible row looked up. */
struct join_read {
    struct replication__snapshot_join *j;
    struct engine_db *db;
    uint32_t table;
    const struct replication__crdt_table *shape;
    const struct join_row *row;
    struct engine_stmt *lookup;                /* the row by its key */
    const struct join_row *looked;             /* row lookup is on */
    const struct engine_change_value *visible; /* its values, or NULL */
};

void replication__snapshot_join_init(struct replication__snapshot_join *j)
{
    memset(j, 0, sizeof(*j));
}

void replication__snapshot_join_close(struct replication__snapshot_join *j)
{
    size_t i;

    for (i = 0; i < j->table_count; i++) {
        replication__crdt_table_free(j->shapes[i]);
    }
    common_free(j->shapes);
    common_free(j->tables);
    common_free(j->items);
    common_free(j->ahead);
    replication__arena_close(&j->arena);
    memset(j, 0, sizeof(*j));
}

int replication__snapshot_join_ahead(struct replication__snapshot_join *j,
                                     const uint8_t *origin)
{
    uint8_t(*grown)[REPLICATION__SITE_ID_BYTES];

    grown = common_realloc_array(j->ahead, j->ahead_count + 1, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    j->ahead = grown;
    memcpy(grown[j->ahead_count++], origin, REPLICATION__SITE_ID_BYTES);
    return 0;
}

static bool is_ahead(const struct replication__snapshot_join *j,
                     const void *site, size_t size)
{
    size_t i;

    if (site == NULL || size != REPLICATION__SITE_ID_BYTES) {
        return false;
    }
    for (i = 0; i < j->ahead_count; i++) {
        if (memcmp(j->ahead[i], site, REPLICATION__SITE_ID_BYTES) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- reading this node's registers (before the install drops them) ---- */

/* Adds the local shape of a table (owned from now on) as the next one. */
static int table_add(struct replication__snapshot_join *j,
                     struct replication__crdt_table *shape)
{
    struct replication__crdt_table **shapes;
    struct replication__table *tables;
    size_t n = j->table_count + 1;

    shapes = common_realloc_array(j->shapes, n, sizeof(*shapes));
    if (shapes != NULL) {
        j->shapes = shapes;
    }
    tables = shapes != NULL
                 ? common_realloc_array(j->tables, n, sizeof(*tables))
                 : NULL;
    if (tables == NULL) {
        replication__crdt_table_free(shape);
        return COMMON_ENOMEM;
    }
    j->tables = tables;
    j->shapes[j->table_count] = shape;
    tables[j->table_count] = (struct replication__table){
        .name = shape->name,
        .columns = (const char *const *)shape->columns,
        .column_count = shape->column_count,
    };
    j->table_count = n;
    return 0;
}

/* The row the statement's column 0 (an encoded key) addresses: the last
 * one again, or a new one, its key decoded. COMMON_ECORRUPT when the key
 * does not decode. */
static int row_at(struct join_read *rd, struct engine_stmt *stmt)
{
    const void *pk = engine_column_blob(stmt, 0);
    size_t size = (size_t)engine_column_bytes(stmt, 0);
    struct engine_change_value *key;
    struct join_row *row;
    size_t count;
    uint8_t *copy;
    int rc;

    if (rd->row != NULL && rd->row->pk_size == size &&
        (size == 0 || memcmp(rd->row->pk, pk, size) == 0)) {
        return 0;
    }
    row = replication__arena_alloc(&rd->j->arena, sizeof(*row));
    copy = replication__arena_alloc(&rd->j->arena, size + 1);
    if (row == NULL || copy == NULL) {
        return COMMON_ENOMEM;
    }
    if (size > 0) {
        memcpy(copy, pk, size);
    }
    rc = replication__crdt_key_decode(copy, size, &rd->j->arena, &key, &count);
    if (rc != 0) {
        return rc;
    }
    *row = (struct join_row){copy, size, key, count};
    rd->row = row;
    return 0;
}

static int item_add(struct replication__snapshot_join *j,
                    const struct join_item *item)
{
    struct join_item *grown;
    size_t n = j->item_capacity ? 2 * j->item_capacity : 64;

    if (j->item_count == j->item_capacity) {
        grown = common_realloc_array(j->items, n, sizeof(*grown));
        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        j->items = grown;
        j->item_capacity = n;
    }
    j->items[j->item_count++] = *item;
    return 0;
}

/* The register's K from columns (hlc, site) of stmt. */
static void item_k(struct engine_stmt *stmt, int column, struct join_item *it)
{
    it->hlc = (uint64_t)engine_column_int64(stmt, column);
    memcpy(it->site, engine_column_blob(stmt, column + 1),
           REPLICATION__SITE_ID_BYTES);
}

static int read_exists(struct join_read *rd, const char *table)
{
    struct engine_stmt *stmt = NULL;
    struct join_item it;
    int rc;

    rc = engine_prepare(rd->db,
                        "SELECT pk, alive, hlc, site FROM sinew_crdt_row"
                        " WHERE tbl = ?1 ORDER BY pk",
                        -1, &stmt, NULL);
    rc = rc == 0 ? engine_bind_text(stmt, 1, table, -1) : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = 0;
        if (!is_ahead(rd->j, engine_column_blob(stmt, 3),
                      (size_t)engine_column_bytes(stmt, 3))) {
            continue;
        }
        memset(&it, 0, sizeof(it));
        item_k(stmt, 2, &it);
        it.table = rd->table;
        it.alive = engine_column_int64(stmt, 1) != 0;
        rc = row_at(rd, stmt);
        it.row = rd->row;
        rc = rc == 0 ? item_add(rd->j, &it) : rc;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* SELECT every column FROM the table WHERE its key = ?1, ?2, ... (the
 * rowid by the name no column took). */
static int lookup_sql(const struct replication__crdt_table *t,
                      struct common_buf *sql)
{
    const char *rowid = replication__snapshot_rowid_name(t);
    char param[32];
    size_t i;
    int rc = common_buf_append(sql, "SELECT ", 7);

    for (i = 0; rc == 0 && i < t->column_count; i++) {
        rc = i > 0 ? common_buf_append(sql, ", ", 2) : 0;
        rc = rc == 0 ? replication__snapshot_quote(sql, t->columns[i]) : rc;
    }
    rc = rc == 0 ? common_buf_append(sql, " FROM ", 6) : rc;
    rc = rc == 0 ? replication__snapshot_quote(sql, t->name) : rc;
    rc = rc == 0 ? common_buf_append(sql, " WHERE ", 7) : rc;
    if (t->key_count == 0) {
        rc = rc == 0 && rowid == NULL ? REPLICATION_ESCHEMA : rc;
        rc = rc == 0 ? replication__snapshot_quote(sql, rowid) : rc;
        rc = rc == 0 ? common_buf_append(sql, " = ?1", 5) : rc;
    }
    for (i = 0; rc == 0 && i < t->key_count; i++) {
        rc = i > 0 ? common_buf_append(sql, " AND ", 5) : 0;
        rc = rc == 0 ? replication__snapshot_quote(
                           sql, t->columns[t->key_columns[i]])
                     : rc;
        snprintf(param, sizeof(param), " = ?%zu", i + 1);
        rc = rc == 0 ? common_buf_append(sql, param, strlen(param)) : rc;
    }
    return rc == 0 ? common_buf_append_byte(sql, '\0') : rc;
}

/* The user table's values of the current row (rd->visible; NULL when the
 * table has no such row), looked up once per row. */
static int lookup(struct join_read *rd)
{
    struct engine_change_value *values = NULL, v;
    const struct join_row *row = rd->row;
    struct common_buf sql;
    size_t i;
    int rc = 0;

    if (rd->looked == row) {
        return 0;
    }
    if (rd->lookup == NULL) {
        common_buf_init(&sql, SIZE_MAX);
        rc = lookup_sql(rd->shape, &sql);
        rc = rc == 0 ? engine_prepare(rd->db, (const char *)sql.data, -1,
                                      &rd->lookup, NULL)
                     : rc;
        common_buf_close(&sql);
    } else {
        (void)engine_reset(rd->lookup);
    }
    for (i = 0; rc == 0 && i < row->key_count; i++) {
        rc = replication__crdt_bind_value(rd->lookup, (int)i + 1, &row->key[i]);
    }
    rc = rc == 0 ? engine_step(rd->lookup) : rc;
    if (rc == ENGINE_ROW) {
        values = replication__arena_alloc(
            &rd->j->arena, (rd->shape->column_count + 1) * sizeof(*values));
        rc = values == NULL ? COMMON_ENOMEM : 0;
    }
    for (i = 0; rc == 0 && i < rd->shape->column_count; i++) {
        replication__crdt_column_value(rd->lookup, (int)i, &v);
        rc = replication__crdt_value_copy(&rd->j->arena, &v, &values[i]);
    }
    rd->looked = row;
    rd->visible = values;
    return rc == ENGINE_DONE ? 0 : rc;
}

/* One cell register of an ahead origin, its value the shadow or, when it
 * has none (the row is visible), the user table's. */
static int read_cell(struct join_read *rd, struct engine_stmt *stmt,
                     long column)
{
    struct engine_change_value v;
    struct join_item it;
    int rc;

    memset(&it, 0, sizeof(it));
    item_k(stmt, 2, &it);
    it.table = rd->table;
    it.set = true;
    it.column = (uint32_t)column;
    rc = row_at(rd, stmt);
    it.row = rd->row;
    if (rc == 0 && engine_column_int64(stmt, 4) != 0) {
        replication__crdt_column_value(stmt, 5, &v);
    } else if (rc == 0) {
        rc = lookup(rd);
        v = rd->visible != NULL
                ? rd->visible[column]
                : (struct engine_change_value){.type = ENGINE_NULL};
    }
    rc = rc == 0 ? replication__crdt_value_copy(&rd->j->arena, &v, &it.value)
                 : rc;
    return rc == 0 ? item_add(rd->j, &it) : rc;
}

static int read_cells(struct join_read *rd, const char *table)
{
    struct engine_stmt *stmt = NULL;
    long column;
    int rc;

    rc = engine_prepare(rd->db,
                        "SELECT pk, col, hlc, site, has_shadow, shadow"
                        " FROM sinew_crdt_cell WHERE tbl = ?1 ORDER BY pk",
                        -1, &stmt, NULL);
    rc = rc == 0 ? engine_bind_text(stmt, 1, table, -1) : rc;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = 0;
        column = replication__crdt_table_column(rd->shape,
                                                engine_column_text(stmt, 1));
        if (column >= 0 && is_ahead(rd->j, engine_column_blob(stmt, 3),
                                    (size_t)engine_column_bytes(stmt, 3))) {
            rc = read_cell(rd, stmt, column);
        }
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

int replication__snapshot_join_read(struct replication__crdt *crdt,
                                    struct replication__snapshot_join *j,
                                    const char *table)
{
    struct join_read rd = {.j = j, .db = crdt->db};
    struct replication__crdt_table *shape = NULL;
    int rc;

    ASSERT(engine_in_transaction(crdt->db));
    if (j->ahead_count == 0) {
        return 0;
    }
    rc = replication__crdt_table_load(crdt->db, table, &shape);
    if (rc == REPLICATION_ESCHEMA) {
        return 0; /* registers of no table: nothing to merge them into */
    }
    rc = rc == 0 ? table_add(j, shape) : rc;
    if (rc != 0) {
        return rc;
    }
    rd.table = (uint32_t)(j->table_count - 1);
    rd.shape = shape;
    rc = read_exists(&rd, table);
    rd.row = NULL;
    rc = rc == 0 ? read_cells(&rd, table) : rc;
    engine_finalize(rd.lookup);
    return rc;
}

/* ---- merging them over the installed snapshot ---- */

/* Descending K; within one K by row (table, key), the existence record
 * first, then the cells by column. */
static int item_cmp(const void *a, const void *b)
{
    const struct join_item *x = a, *y = b;
    size_t n;
    int c;

    if (x->hlc != y->hlc) {
        return x->hlc > y->hlc ? -1 : 1;
    }
    c = memcmp(y->site, x->site, sizeof(x->site));
    if (c != 0) {
        return c;
    }
    if (x->table != y->table) {
        return x->table < y->table ? -1 : 1;
    }
    n = x->row->pk_size < y->row->pk_size ? x->row->pk_size : y->row->pk_size;
    c = n > 0 ? memcmp(x->row->pk, y->row->pk, n) : 0;
    if (c != 0 || x->row->pk_size != y->row->pk_size) {
        return c != 0 ? c : x->row->pk_size < y->row->pk_size ? -1 : 1;
    }
    if (x->set != y->set) {
        return x->set ? 1 : -1;
    }
    return x->column < y->column ? -1 : x->column > y->column;
}

/* Per table of the join, per local column, whether the installed schema
 * has it (all false: it lacks the table), into the arena. */
static int fit_table(struct replication__crdt *crdt,
                     struct replication__snapshot_join *j, size_t table,
                     bool **out)
{
    const struct replication__table *t = &j->tables[table];
    struct replication__crdt_table *shape;
    bool *fits;
    size_t i;
    int rc = replication__crdt_shape(crdt, t->name, &shape);

    fits = replication__arena_alloc(&j->arena,
                                    (t->column_count + 1) * sizeof(*fits));
    if (fits == NULL) {
        return COMMON_ENOMEM;
    }
    fits[t->column_count] = rc == 0; /* the table itself */
    for (i = 0; i < t->column_count; i++) {
        fits[i] = rc == 0 &&
                  replication__crdt_table_column(shape, t->columns[i]) >= 0;
    }
    *out = fits;
    return rc == REPLICATION_ESCHEMA || rc == ENGINE_ESQL ? 0 : rc;
}

/* Drops the items the installed schema has no room for, logged. */
static int items_fit(struct replication__crdt *crdt,
                     struct replication__snapshot_join *j)
{
    bool **fits;
    size_t i, n = 0;
    int rc = 0;

    fits = common_calloc(j->table_count + 1, sizeof(*fits));
    if (fits == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; rc == 0 && i < j->table_count; i++) {
        rc = fit_table(crdt, j, i, &fits[i]);
    }
    for (i = 0; rc == 0 && i < j->item_count; i++) {
        const struct join_item *it = &j->items[i];
        size_t column =
            it->set ? it->column : j->tables[it->table].column_count;
        if (fits[it->table][column]) {
            j->items[n++] = *it;
        }
    }
    common_free(fits);
    if (rc == 0 && n < j->item_count) {
        LOGF(&crdt->log, COMMON_LOG_WARN,
             "snapshot join drops registers of a table or column its schema"
             " lacks lost=%zu",
             j->item_count - n);
        j->item_count = n;
    }
    return rc;
}

static void record_of(const struct join_item *it,
                      struct replication__record *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->op = it->set     ? REPLICATION__OP_SET
              : it->alive ? REPLICATION__OP_ALIVE
                          : REPLICATION__OP_DEAD;
    rec->table = it->table;
    rec->key = it->row->key;
    rec->key_count = it->row->key_count;
    rec->column = it->column;
    rec->value = it->value;
}

/* Merges items[first .. end), one K, as one change set. */
static int merge_group(struct replication__crdt *crdt,
                       struct replication__snapshot_join *j, size_t first,
                       size_t end, struct replication__record *records)
{
    struct replication__changeset cs = {
        .hlc = j->items[first].hlc,
        .tables = j->tables,
        .table_count = j->table_count,
        .records = records,
        .record_count = end - first,
    };
    size_t i;

    memcpy(cs.origin, j->items[first].site, sizeof(cs.origin));
    for (i = first; i < end; i++) {
        record_of(&j->items[i], &records[i - first]);
    }
    return replication__crdt_merge_within(crdt, &cs);
}

int replication__snapshot_join_merge(struct replication__crdt *crdt,
                                     struct replication__snapshot_join *j)
{
    struct replication__record *records;
    size_t first = 0, end;
    int rc;

    ASSERT(engine_in_transaction(crdt->db));
    rc = items_fit(crdt, j);
    if (rc != 0 || j->item_count == 0) {
        return rc;
    }
    records = common_malloc_array(j->item_count, sizeof(*records));
    if (records == NULL) {
        return COMMON_ENOMEM;
    }
    qsort(j->items, j->item_count, sizeof(*j->items), item_cmp);
    while (rc == 0 && first < j->item_count) {
        for (end = first + 1;
             end < j->item_count && j->items[end].hlc == j->items[first].hlc &&
             memcmp(j->items[end].site, j->items[first].site,
                    REPLICATION__SITE_ID_BYTES) == 0;
             end++) {
        }
        rc = merge_group(crdt, j, first, end, records);
        first = end;
    }
    common_free(records);
    j->merged = rc == 0 ? j->item_count : 0;
    return rc;
}
