/* SPDX-License-Identifier: MIT
 *
 * crdt_merge.c: applying one change set from another site, inside one
 * engine_apply_transaction() (crdt.md §6.4): every record is merged into
 * its register by K = (hlc, origin) (crdt_store.c holds the rules), then
 * each touched row is materialized from its registers, then the version
 * vector and the clock's high-water mark are written and the set's
 * sinew_crdt_pending row, if it waited, removed; all of it commits or
 * none.
 *
 * Where a cell's value lives: in the user table while the row is visible,
 * else in the cell register's shadow (crdt.md §6.1: cells newer than a
 * tombstone are kept as invisible shadows, needed for order independence).
 * A winning SET always lands in the shadow first; materializing then moves
 * it:
 *
 *   visible before and after:  UPDATE the shadowed columns, clear shadows
 *   visible only after:        INSERT the row from the shadows (every cell
 *                              of an invisible row has one), clear them
 *   visible only before:       copy the surviving cells' values (those
 *                              newer than the tombstone) from the row into
 *                              their shadows, then DELETE the row
 *
 * So on every replica a visible row's registers hold no shadows and an
 * invisible row's cells all do, whatever the delivery order: the metadata
 * converges along with the data. Rows are written through
 * engine_apply_change(), which keys them as the commit hook does.
 *
 * Touched rows are kept in a list searched linearly: fine for the small
 * transactions of this first slice, a hash for large ones later.
 */
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"
#include "replication.h"

struct merge_row {
    uint32_t table; /* index into the change set's tables */
    const struct engine_change_value *key; /* borrowed from the change set */
    size_t key_count;
    void *pk; /* encoded key, in the merge's arena */
    size_t pk_size;
    bool was_alive; /* visible before this change set */
};

struct merge {
    struct replication__crdt *crdt;
    const struct replication__changeset *cs;
    struct replication__crdt_k k;
    struct replication__crdt_table **shapes; /* per table, loaded lazily */
    struct merge_row *rows;                  /* touched rows */
    size_t row_count;
    size_t row_capacity;
    struct replication__arena arena;
};

/* One cell of a row as read from the registers: its column index in the
 * table and, when it has one, its shadow value (in the merge's arena). */
struct merge_cell {
    size_t column;
    bool has_shadow;
    struct engine_change_value value;
};

static void forget_shapes(struct merge *m)
{
    size_t i;

    for (i = 0; i < m->cs->table_count; i++) {
        replication__crdt_table_free(m->shapes[i]);
        m->shapes[i] = NULL;
    }
}

static int shape_of(struct merge *m, uint32_t table,
                    struct replication__crdt_table **out)
{
    int rc;

    if (m->shapes[table] == NULL) {
        rc = replication__crdt_table_load(
            m->crdt->db, m->cs->tables[table].name, &m->shapes[table]);
        if (rc != 0) {
            return rc == ENGINE_ESQL ? REPLICATION_ESCHEMA : rc;
        }
    }
    *out = m->shapes[table];
    return 0;
}

static struct merge_row *find_row(struct merge *m, uint32_t table,
                                  const struct common_buf *pk)
{
    size_t i;

    for (i = 0; i < m->row_count; i++) {
        struct merge_row *r = &m->rows[i];
        if (r->table == table && r->pk_size == pk->size &&
            memcmp(r->pk, pk->data, pk->size) == 0) {
            return r;
        }
    }
    return NULL;
}

/* Adds the row a record addresses to the touched list, once. */
static int touch(struct merge *m, const struct replication__record *rec,
                 const struct common_buf *pk, struct merge_row **out)
{
    struct replication__crdt_row row;
    struct replication__crdt_k k;
    struct merge_row *r = find_row(m, rec->table, pk);
    bool found, alive = false;
    int rc;

    if (r != NULL) {
        *out = r;
        return 0;
    }
    if (m->row_count == m->row_capacity) {
        size_t capacity = m->row_capacity ? 2 * m->row_capacity : 16;
        r = common_realloc_array(m->rows, capacity, sizeof(*r));
        if (r == NULL) {
            return COMMON_ENOMEM;
        }
        m->rows = r;
        m->row_capacity = capacity;
    }
    r = &m->rows[m->row_count];
    r->table = rec->table;
    r->key = rec->key;
    r->key_count = rec->key_count;
    r->pk_size = pk->size;
    r->pk = replication__arena_alloc(&m->arena, pk->size + 1);
    if (r->pk == NULL) {
        return COMMON_ENOMEM;
    }
    if (pk->size > 0) {
        memcpy(r->pk, pk->data, pk->size);
    }
    row = (struct replication__crdt_row){m->cs->tables[rec->table].name, r->pk,
                                         r->pk_size};
    rc = replication__crdt_row_get(m->crdt, &row, &found, &alive, &k);
    if (rc != 0) {
        return rc;
    }
    r->was_alive = found && alive;
    m->row_count++;
    *out = r;
    return 0;
}

static int merge_row_record(struct merge *m,
                            const struct replication__record *rec,
                            const struct merge_row *r)
{
    const struct replication__table *t = &m->cs->tables[rec->table];
    struct replication__crdt_row row = {t->name, r->pk, r->pk_size};
    struct replication__crdt_table *shape;
    int rc;

    if (rec->op != REPLICATION__OP_SET) {
        return replication__crdt_merge_exist(
            m->crdt, &row, rec->op == REPLICATION__OP_ALIVE, &m->k);
    }
    if (rec->column >= t->column_count) {
        return REPLICATION_EFORMAT;
    }
    rc = shape_of(m, rec->table, &shape);
    if (rc == 0 &&
        replication__crdt_table_column(shape, t->columns[rec->column]) < 0) {
        rc = REPLICATION_ESCHEMA;
    }
    if (rc == 0) {
        rc = replication__crdt_merge_cell(
            m->crdt, &row, t->columns[rec->column], &rec->value, true, &m->k);
    }
    return rc;
}

static int merge_record(struct merge *m, const struct replication__record *rec)
{
    struct engine_change schema = {.kind = ENGINE_CHANGE_SCHEMA};
    struct replication__crdt_table *shape;
    struct merge_row *r;
    struct common_buf pk;
    int rc;

    if (rec->op == REPLICATION__OP_SCHEMA) {
        forget_shapes(m);
        schema.sql = rec->sql;
        return rec->sql ? engine_apply_change(m->crdt->db, &schema)
                        : REPLICATION_EFORMAT;
    }
    if (rec->table >= m->cs->table_count) {
        return REPLICATION_EFORMAT;
    }
    rc = shape_of(m, rec->table, &shape);
    if (rc != 0) {
        return rc;
    }
    common_buf_init(&pk, SIZE_MAX);
    rc = replication__crdt_key_encode(rec->key, rec->key_count, &pk);
    if (rc == 0) {
        rc = touch(m, rec, &pk, &r);
    }
    common_buf_close(&pk);
    return rc == 0 ? merge_row_record(m, rec, r) : rc;
}

/* Reads the row's cells (column indices per shape, shadows copied). */
static int read_cells(struct merge *m, const struct merge_row *r,
                      const struct replication__crdt_table *shape,
                      struct merge_cell **out, size_t *count)
{
    struct replication__crdt_row row = {shape->name, r->pk, r->pk_size};
    struct merge_cell *cells;
    struct engine_stmt *stmt;
    struct engine_change_value value;
    size_t n = 0;
    long column;
    int rc;

    cells = replication__arena_alloc(&m->arena, (shape->column_count + 1) *
                                                    sizeof(*cells));
    if (cells == NULL) {
        return COMMON_ENOMEM;
    }
    rc = replication__crdt_stmt(m->crdt, CRDT_CELL_SHADOWS, &stmt);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, row.table, -1);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 2, row.pk, (int)row.pk_size);
    }
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        column =
            replication__crdt_table_column(shape, engine_column_text(stmt, 0));
        if (column < 0 || n == shape->column_count) {
            rc = 0;
            continue;
        }
        cells[n].column = (size_t)column;
        cells[n].has_shadow = engine_column_int64(stmt, 1) != 0;
        replication__crdt_column_value(stmt, 2, &value);
        rc = replication__crdt_value_copy(&m->arena, &value, &cells[n].value);
        n++;
    }
    *out = cells;
    *count = n;
    return rc == ENGINE_DONE ? 0 : rc;
}

static int unshadow(struct merge *m, const struct merge_row *r)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(m->crdt, CRDT_CELL_UNSHADOW, &stmt);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, m->cs->tables[r->table].name, -1);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 2, r->pk, (int)r->pk_size);
    }
    return rc == 0 ? replication__crdt_step_done(m->crdt, stmt) : rc;
}

/* Writes the row from its shadows: an INSERT of every column, or an UPDATE
 * of the shadowed ones. */
static int write_visible(struct merge *m, const struct merge_row *r,
                         const struct replication__crdt_table *shape)
{
    struct engine_change change = {
        .table = shape->name, .key = r->key, .key_count = r->key_count};
    struct engine_change_value *values;
    struct merge_cell *cells;
    size_t *columns;
    size_t i, count, n = 0;
    int rc;

    rc = read_cells(m, r, shape, &cells, &count);
    if (rc != 0) {
        return rc;
    }
    values = replication__arena_alloc(&m->arena, (shape->column_count + 1) *
                                                     sizeof(*values));
    columns = replication__arena_alloc(&m->arena, (shape->column_count + 1) *
                                                      sizeof(*columns));
    if (values == NULL || columns == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < shape->column_count; i++) {
        values[i] = (struct engine_change_value){.type = ENGINE_NULL};
    }
    for (i = 0; i < count; i++) {
        if (!cells[i].has_shadow) {
            continue;
        }
        columns[n] = cells[i].column;
        values[r->was_alive ? n : cells[i].column] = cells[i].value;
        n++;
    }
    change.kind = r->was_alive ? ENGINE_CHANGE_UPDATE : ENGINE_CHANGE_INSERT;
    change.columns = r->was_alive ? columns : NULL;
    change.values = values;
    change.value_count = r->was_alive ? n : shape->column_count;
    if (!r->was_alive || n > 0) {
        rc = engine_apply_change(m->crdt->db, &change);
    }
    return rc == 0 ? unshadow(m, r) : rc;
}

static int append_ident(struct common_buf *sql, const char *name)
{
    int rc = common_buf_append_byte(sql, '"');

    for (; rc == 0 && *name != '\0'; name++) {
        if (*name == '"') {
            rc = common_buf_append_byte(sql, '"');
        }
        if (rc == 0) {
            rc = common_buf_append_byte(sql, (uint8_t)*name);
        }
    }
    return rc == 0 ? common_buf_append_byte(sql, '"') : rc;
}

static int append_text(struct common_buf *sql, const char *text)
{
    return common_buf_append(sql, text, strlen(text));
}

/* SELECT every column FROM the table WHERE its key = ?1, ?2, ... */
static int select_row_sql(const struct replication__crdt_table *shape,
                          struct common_buf *sql)
{
    char param[32];
    size_t i;
    int rc = append_text(sql, "SELECT ");

    for (i = 0; rc == 0 && i < shape->column_count; i++) {
        rc = i > 0 ? append_text(sql, ", ") : 0;
        rc = rc == 0 ? append_ident(sql, shape->columns[i]) : rc;
    }
    rc = rc == 0 ? append_text(sql, " FROM ") : rc;
    rc = rc == 0 ? append_ident(sql, shape->name) : rc;
    rc = rc == 0 ? append_text(sql, " WHERE ") : rc;
    if (shape->key_count == 0) {
        rc = rc == 0 ? append_text(sql, "rowid = ?1") : rc;
    }
    for (i = 0; rc == 0 && i < shape->key_count; i++) {
        rc = i > 0 ? append_text(sql, " AND ") : 0;
        rc = rc == 0 ? append_ident(sql, shape->columns[shape->key_columns[i]])
                     : rc;
        snprintf(param, sizeof(param), " = ?%zu", i + 1);
        rc = rc == 0 ? append_text(sql, param) : rc;
    }
    return rc == 0 ? common_buf_append_byte(sql, '\0') : rc;
}

static int set_shadow(struct merge *m, const struct merge_row *r,
                      const char *column,
                      const struct engine_change_value *value)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(m->crdt, CRDT_CELL_SHADOW_SET, &stmt);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, m->cs->tables[r->table].name, -1);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 2, r->pk, (int)r->pk_size);
    }
    if (rc == 0) {
        rc = engine_bind_text(stmt, 3, column, -1);
    }
    if (rc == 0) {
        rc = replication__crdt_bind_value(stmt, 4, value);
    }
    return rc == 0 ? replication__crdt_step_done(m->crdt, stmt) : rc;
}

/* Copies the row's values into the shadows of its surviving cells that
 * have none; stmt is on the row. */
static int shadow_from(struct merge *m, const struct merge_row *r,
                       const struct replication__crdt_table *shape,
                       struct engine_stmt *row)
{
    struct engine_change_value value;
    struct merge_cell *cells;
    size_t i, count;
    int rc;

    rc = read_cells(m, r, shape, &cells, &count);
    for (i = 0; rc == 0 && i < count; i++) {
        if (cells[i].has_shadow) {
            continue;
        }
        replication__crdt_column_value(row, (int)cells[i].column, &value);
        rc = set_shadow(m, r, shape->columns[cells[i].column], &value);
    }
    return rc;
}

/* The row became invisible: keep what survives, then delete it. */
static int write_invisible(struct merge *m, const struct merge_row *r,
                           const struct replication__crdt_table *shape)
{
    struct engine_change change = {.kind = ENGINE_CHANGE_DELETE,
                                   .table = shape->name,
                                   .key = r->key,
                                   .key_count = r->key_count};
    struct engine_stmt *stmt = NULL;
    struct common_buf sql;
    size_t i;
    int rc;

    common_buf_init(&sql, SIZE_MAX);
    rc = select_row_sql(shape, &sql);
    if (rc == 0) {
        rc = engine_prepare(m->crdt->db, (const char *)sql.data, -1, &stmt,
                            NULL);
    }
    for (i = 0; rc == 0 && i < r->key_count; i++) {
        rc = replication__crdt_bind_value(stmt, (int)i + 1, &r->key[i]);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
        rc = rc == ENGINE_ROW    ? shadow_from(m, r, shape, stmt)
             : rc == ENGINE_DONE ? 0
                                 : rc;
    }
    engine_finalize(stmt);
    common_buf_close(&sql);
    return rc == 0 ? engine_apply_change(m->crdt->db, &change) : rc;
}

static int materialize(struct merge *m, const struct merge_row *r)
{
    struct replication__crdt_row row = {m->cs->tables[r->table].name, r->pk,
                                        r->pk_size};
    struct replication__crdt_table *shape;
    struct replication__crdt_k k;
    bool found, alive = false;
    int rc;

    rc = replication__crdt_row_get(m->crdt, &row, &found, &alive, &k);
    if (rc == 0) {
        rc = shape_of(m, r->table, &shape);
    }
    if (rc != 0) {
        return rc;
    }
    if (found && alive) {
        return write_visible(m, r, shape);
    }
    return r->was_alive ? write_invisible(m, r, shape) : 0;
}

/* The set is applied: it no longer waits (crdt_pending.c), if it did. */
static int drop_pending(struct merge *m)
{
    struct engine_stmt *stmt;
    int rc;

    rc = replication__crdt_stmt(m->crdt, CRDT_PENDING_DROP, &stmt);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, m->cs->origin, sizeof(m->cs->origin));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)m->cs->version);
    }
    return rc == 0 ? replication__crdt_step_done(m->crdt, stmt) : rc;
}

static int merge_cb(void *ctx, struct engine_db *db)
{
    struct merge *m = ctx;
    size_t i;
    int rc = 0;

    (void)db;
    for (i = 0; rc == 0 && i < m->cs->record_count; i++) {
        rc = merge_record(m, &m->cs->records[i]);
    }
    for (i = 0; rc == 0 && i < m->row_count; i++) {
        rc = materialize(m, &m->rows[i]);
    }
    if (rc == 0) {
        rc = replication__crdt_vv_put(m->crdt, m->cs->origin, m->cs->version);
    }
    if (rc == 0) {
        rc = replication__crdt_log_append(m->crdt, m->cs); /* to relay */
    }
    if (rc == 0) {
        rc = replication__crdt_meta_put(m->crdt, "hlc",
                                        hlc_high_water(m->crdt->clock));
    }
    if (rc == 0) {
        rc = drop_pending(m);
    }
    replication__crdt_stmts_close(m->crdt);
    return rc;
}

int replication__crdt_merge(struct replication__crdt *crdt,
                            const struct replication__changeset *cs,
                            uint64_t stamp)
{
    struct merge m = {.crdt = crdt, .cs = cs};
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(cs != NULL);
    m.k.hlc = cs->hlc;
    memcpy(m.k.site, cs->origin, sizeof(m.k.site));
    m.shapes = common_calloc(cs->table_count + 1, sizeof(*m.shapes));
    if (m.shapes == NULL) {
        return COMMON_ENOMEM;
    }
    rc = engine_apply_transaction(crdt->db, stamp, merge_cb, &m);
    replication__crdt_stmts_close(crdt);
    forget_shapes(&m);
    common_free(m.shapes);
    common_free(m.rows);
    replication__arena_close(&m.arena);
    return rc;
}
