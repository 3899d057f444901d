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
 * Shortcuts that end with the same registers and rows: a SET merged
 * while its row's existence register is alive skips the shadow (the row
 * is visible at the end unless a later DEAD of the set wins, and that
 * drops the cell again), and materializing takes its value from the set
 * (merge_row.won) instead of reading it back; shadows are cleared only
 * when the row had any. A row visible before the set, for which the set
 * has no existence record (an UPDATE at its origin), is direct: it stays
 * visible and, by the invariant above, has no shadows, so materializing
 * it reads nothing. Which rows the set has existence records for is
 * learned first, as a set of row hashes (a collision only sends a row
 * the general way).
 *
 * Touched rows are kept in a list in the order first touched (the order
 * they are materialized in), found again through a hash of (table,
 * encoded key): a change set of a million rows finds each in one probe.
 *
 * Schemas that differ (crdt.md §6.8): a record naming a table or column
 * this database lacks is set aside, not failed, and stored with the set
 * for later (crdt_quarantine.c; merge_kept_cb merges such a kept set
 * again); an ALIVE record writes the DEFAULT of the columns its origin's
 * table lacked (crdt_schema.c); a SCHEMA record runs by crdt_ddl.c's
 * rules, after the rows touched so far are materialized under the schema
 * they were written for, and the set's records set aside before it are
 * merged again right after it, in order.
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
    uint64_t hash;  /* of (table, pk): row_hash() */
    bool was_alive; /* visible before this change set */
    bool direct;    /* was_alive, and no existence record in the set */
    /* Per column of the table's shape, the value of the last SET that won
     * while the row was alive (its register unshadowed), or NULL; in the
     * merge's arena, NULL until one wins. */
    const struct engine_change_value **won;
};

struct merge {
    struct replication__crdt *crdt;
    const struct replication__changeset *cs;
    struct replication__crdt_k k;
    struct replication__crdt_table **shapes; /* per table, borrowed lazily */
    uint64_t shapes_version; /* engine_schema_version() they were got at */
    struct merge_row *rows;  /* touched rows */
    size_t row_count;
    size_t row_capacity;
    /* Open addressing over rows: 1 + an index into rows, 0 for empty;
     * slot_count is 0 or a power of two above twice the rows hashed. */
    size_t *slots;
    size_t slot_count;
    size_t hashed; /* rows entered; above row_count: the list was emptied */
    /* The row hashes of the set's existence records, open addressing (0:
     * empty); exist_slots is 0 or a power of two above twice them. */
    uint64_t *exists;
    size_t exist_slots;
    struct replication__arena arena;
    struct replication__crdt_aside aside; /* kept records, fills */
};

/* One cell of a row as read from the registers: its column index in the
 * table and, when it has one, its shadow value (in the merge's arena). */
struct merge_cell {
    size_t column;
    bool has_shadow;
    struct engine_change_value value;
};

/* The shapes are the crdt state's (crdt_table.c), borrowed until the
 * schema changes: forgetting them drops the borrowed pointers only. */
static void forget_shapes(struct merge *m)
{
    size_t i;

    for (i = 0; i < m->cs->table_count; i++) {
        m->shapes[i] = NULL;
    }
}

static int shape_of(struct merge *m, uint32_t table,
                    struct replication__crdt_table **out)
{
    uint64_t version = engine_schema_version(m->crdt->db);
    int rc;

    if (version != m->shapes_version) {
        forget_shapes(m);
        m->shapes_version = version;
    }
    if (m->shapes[table] == NULL) {
        rc = replication__crdt_shape(m->crdt, m->cs->tables[table].name,
                                     &m->shapes[table]);
        if (rc != 0) {
            return rc == ENGINE_ESQL ? REPLICATION_ESCHEMA : rc;
        }
    }
    *out = m->shapes[table];
    return 0;
}

static uint64_t row_hash(uint32_t table, const struct common_buf *pk)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ table;
    size_t i;

    for (i = 0; i < pk->size; i++) {
        h = (h ^ pk->data[i]) * UINT64_C(0x100000001b3);
    }
    return h ^ (h >> 29);
}

static struct merge_row *find_row(struct merge *m, uint32_t table,
                                  const struct common_buf *pk, uint64_t hash)
{
    size_t mask = m->slot_count - 1, i;
    struct merge_row *r;

    if (m->hashed > m->row_count) {
        /* merge_schema() emptied the list: so is the hash now. */
        memset(m->slots, 0, m->slot_count * sizeof(*m->slots));
        m->hashed = 0;
    }
    for (i = hash & mask; m->slot_count > 0 && m->slots[i] != 0;
         i = (i + 1) & mask) {
        r = &m->rows[m->slots[i] - 1];
        if (r->hash == hash && r->table == table && r->pk_size == pk->size &&
            memcmp(r->pk, pk->data, pk->size) == 0) {
            return r;
        }
    }
    return NULL;
}

static void hash_insert(struct merge *m, size_t index)
{
    size_t mask = m->slot_count - 1;
    size_t i = m->rows[index].hash & mask;

    while (m->slots[i] != 0) {
        i = (i + 1) & mask;
    }
    m->slots[i] = index + 1;
    m->hashed++;
}

/* Makes room in the hash for one more row. */
static int hash_reserve(struct merge *m)
{
    size_t count = m->slot_count ? m->slot_count : 64, i;
    size_t *slots;

    if (2 * (m->hashed + 1) < m->slot_count) {
        return 0;
    }
    while (2 * (m->hashed + 1) >= count) {
        count *= 2;
    }
    slots = common_calloc(count, sizeof(*slots));
    if (slots == NULL) {
        return COMMON_ENOMEM;
    }
    common_free(m->slots);
    m->slots = slots;
    m->slot_count = count;
    m->hashed = 0;
    for (i = 0; i < m->row_count; i++) {
        hash_insert(m, i);
    }
    return 0;
}

static bool exists_has(const struct merge *m, uint64_t hash)
{
    size_t mask = m->exist_slots - 1, i;

    hash = hash != 0 ? hash : 1;
    for (i = hash & mask; m->exist_slots > 0 && m->exists[i] != 0;
         i = (i + 1) & mask) {
        if (m->exists[i] == hash) {
            return true;
        }
    }
    return false;
}

static void exists_add(struct merge *m, uint64_t hash)
{
    size_t mask = m->exist_slots - 1, i;

    hash = hash != 0 ? hash : 1;
    for (i = hash & mask; m->exists[i] != 0 && m->exists[i] != hash;
         i = (i + 1) & mask) {
    }
    m->exists[i] = hash;
}

/* Learns which rows the set has existence records for. */
static int scan_exists(struct merge *m)
{
    const struct replication__record *rec;
    struct common_buf pk;
    size_t i, count = 0;
    int rc = 0;

    for (i = 0; i < m->cs->record_count; i++) {
        rec = &m->cs->records[i];
        count +=
            rec->op == REPLICATION__OP_ALIVE || rec->op == REPLICATION__OP_DEAD;
    }
    if (count == 0 || m->exists != NULL) {
        return 0;
    }
    for (m->exist_slots = 64; m->exist_slots <= 2 * count;) {
        m->exist_slots *= 2;
    }
    m->exists = common_calloc(m->exist_slots, sizeof(*m->exists));
    if (m->exists == NULL) {
        return COMMON_ENOMEM;
    }
    common_buf_init(&pk, SIZE_MAX);
    for (i = 0; rc == 0 && i < m->cs->record_count; i++) {
        rec = &m->cs->records[i];
        if (rec->op != REPLICATION__OP_ALIVE &&
            rec->op != REPLICATION__OP_DEAD) {
            continue;
        }
        pk.size = 0;
        rc = replication__crdt_key_encode(rec->key, rec->key_count, &pk);
        if (rc == 0) {
            exists_add(m, row_hash(rec->table, &pk));
        }
    }
    common_buf_close(&pk);
    return rc;
}

/* Adds the row a record addresses to the touched list, once. */
static int touch(struct merge *m, const struct replication__record *rec,
                 const struct common_buf *pk, struct merge_row **out)
{
    struct replication__crdt_row row;
    struct replication__crdt_k k;
    uint64_t hash = row_hash(rec->table, pk);
    struct merge_row *r = find_row(m, rec->table, pk, hash);
    bool found, alive = false;
    int rc;

    if (r != NULL) {
        *out = r;
        return 0;
    }
    rc = hash_reserve(m);
    if (rc != 0) {
        return rc;
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
    r->hash = hash;
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
    r->direct = r->was_alive && !exists_has(m, hash);
    r->won = NULL;
    hash_insert(m, m->row_count++);
    *out = r;
    return 0;
}

/* Forgets the SETs a winning DEAD dropped with their registers (every
 * cell at or below its K: all of this set's). */
static int after_exist(struct merge *m, const struct replication__crdt_row *row,
                       struct merge_row *r,
                       const struct replication__crdt_table *shape)
{
    struct replication__crdt_k k;
    bool found, alive = false;
    int rc;

    rc = replication__crdt_row_get(m->crdt, row, &found, &alive, &k);
    if (rc == 0 && found && !alive && r->won != NULL) {
        memset(r->won, 0, (shape->column_count + 1) * sizeof(*r->won));
    }
    return rc;
}

/* A SET: shadowed while the row's register is not alive; else written
 * as an unshadowed register, its value noted for materialize() when it
 * wins. */
static int merge_set(struct merge *m, const struct replication__record *rec,
                     struct merge_row *r,
                     const struct replication__crdt_table *shape, size_t column)
{
    const struct replication__table *t = &m->cs->tables[rec->table];
    struct replication__crdt_row row = {t->name, r->pk, r->pk_size};
    struct replication__crdt_k k;
    bool found, alive = false, won;
    int rc;

    rc = replication__crdt_row_get(m->crdt, &row, &found, &alive, &k);
    alive = found && alive;
    if (rc == 0) {
        rc = replication__crdt_merge_cell_won(m->crdt, &row,
                                              t->columns[rec->column],
                                              &rec->value, !alive, &m->k, &won);
    }
    if (rc != 0 || !won || !alive) {
        return rc;
    }
    if (r->won == NULL) {
        r->won = replication__arena_alloc(&m->arena, (shape->column_count + 1) *
                                                         sizeof(*r->won));
        if (r->won == NULL) {
            return COMMON_ENOMEM;
        }
        memset(r->won, 0, (shape->column_count + 1) * sizeof(*r->won));
    }
    r->won[column] = &rec->value;
    return 0;
}

static int merge_row_record(struct merge *m,
                            const struct replication__record *rec,
                            struct merge_row *r)
{
    const struct replication__table *t = &m->cs->tables[rec->table];
    struct replication__crdt_row row = {t->name, r->pk, r->pk_size};
    struct replication__crdt_table *shape;
    long column;
    int rc;

    rc = shape_of(m, rec->table, &shape);
    if (rc == 0 && rec->op != REPLICATION__OP_SET) {
        rc = replication__crdt_merge_exist(
            m->crdt, &row, rec->op == REPLICATION__OP_ALIVE, &m->k);
        /* Columns here its origin's table lacks: an INSERT writes them
         * as their DEFAULT (crdt.md §6.8; crdt_schema.c). */
        if (rc == 0 && rec->op == REPLICATION__OP_ALIVE) {
            rc = replication__crdt_aside_fill(m->crdt, &m->aside, m->cs,
                                              rec->table, &row, &m->k);
        }
        return rc == 0 ? after_exist(m, &row, r, shape) : rc;
    }
    if (rc == 0 && rec->column >= t->column_count) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc != 0) {
        return rc;
    }
    column = replication__crdt_table_column(shape, t->columns[rec->column]);
    if (column < 0) {
        /* A column not here (yet): kept (crdt_quarantine.c). */
        return replication__crdt_aside_keep(&m->aside,
                                            (size_t)(rec - m->cs->records));
    }
    return merge_set(m, rec, r, shape, (size_t)column);
}

static int merge_schema(struct merge *m, const struct replication__record *rec);

static int merge_record(struct merge *m, const struct replication__record *rec)
{
    struct replication__crdt_table *shape;
    struct merge_row *r;
    struct common_buf pk;
    int rc;

    if (rec->op == REPLICATION__OP_SCHEMA) {
        return merge_schema(m, rec);
    }
    if (rec->table >= m->cs->table_count) {
        return REPLICATION_EFORMAT;
    }
    rc = shape_of(m, rec->table, &shape);
    if (rc == REPLICATION_ESCHEMA) {
        /* A table not here (yet): kept (crdt_quarantine.c). */
        return replication__crdt_aside_keep(&m->aside,
                                            (size_t)(rec - m->cs->records));
    }
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

/* In debug builds: a direct row is visible and has no shadow left, as
 * the shadow route would leave it. Release builds only name it inside
 * ASSERT_DEBUG's sizeof, hence unused. */
__attribute__((unused)) static bool
direct_holds(struct merge *m, const struct merge_row *r,
             const struct replication__crdt_table *shape)
{
    struct replication__crdt_row row = {shape->name, r->pk, r->pk_size};
    struct replication__crdt_k k;
    struct merge_cell *cells;
    bool found, alive = false;
    size_t i, count;

    if (replication__crdt_row_get(m->crdt, &row, &found, &alive, &k) != 0 ||
        !found || !alive || read_cells(m, r, shape, &cells, &count) != 0) {
        return false;
    }
    for (i = 0; i < count; i++) {
        if (cells[i].has_shadow) {
            return false;
        }
    }
    return true;
}

/* Per column of the shape, the row's value from the registers: the SET of
 * this set that won (written unshadowed), else the cell's shadow (cells
 * is the row's cells, read unless the row is direct), else NULL. */
static int row_values(struct merge *m, const struct merge_row *r,
                      const struct replication__crdt_table *shape,
                      const struct merge_cell *cells, size_t count,
                      const struct engine_change_value ***out)
{
    const struct engine_change_value **values;
    size_t i;

    values = replication__arena_alloc(&m->arena, (shape->column_count + 1) *
                                                     sizeof(*values));
    if (values == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < shape->column_count; i++) {
        values[i] = r->won != NULL ? r->won[i] : NULL;
    }
    for (i = 0; i < count; i++) {
        if (cells[i].has_shadow && values[cells[i].column] == NULL) {
            values[cells[i].column] = &cells[i].value;
        }
    }
    *out = values;
    return 0;
}

/* Writes the visible row: an INSERT of every column (the row was not
 * visible), or an UPDATE of those this set or a shadow changed; then
 * clears the shadows, if it had any. */
static int write_visible(struct merge *m, const struct merge_row *r,
                         const struct replication__crdt_table *shape)
{
    struct engine_change change = {
        .table = shape->name, .key = r->key, .key_count = r->key_count};
    const struct engine_change_value **found;
    struct engine_change_value *values;
    struct merge_cell *cells = NULL;
    size_t *columns;
    size_t i, count = 0, n = 0;
    bool shadowed = false;
    int rc = r->direct ? 0 : read_cells(m, r, shape, &cells, &count);

    ASSERT_DEBUG(!r->direct || direct_holds(m, r, shape));
    for (i = 0; i < count; i++) {
        shadowed = shadowed || cells[i].has_shadow;
    }
    rc = rc == 0 ? row_values(m, r, shape, cells, count, &found) : rc;
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
        if (!r->was_alive) {
            values[i] = found[i] != NULL
                            ? *found[i]
                            : (struct engine_change_value){.type = ENGINE_NULL};
        } else if (found[i] != NULL) {
            columns[n] = i;
            values[n++] = *found[i];
        }
    }
    change.kind = r->was_alive ? ENGINE_CHANGE_UPDATE : ENGINE_CHANGE_INSERT;
    change.columns = r->was_alive ? columns : NULL;
    change.values = values;
    change.value_count = r->was_alive ? n : shape->column_count;
    if (!r->was_alive || n > 0) {
        rc = engine_apply_change(m->crdt->db, &change);
    }
    return rc == 0 && shadowed ? unshadow(m, r) : rc;
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

    if (r->direct) {
        rc = shape_of(m, r->table, &shape);
        return rc == 0 ? write_visible(m, r, shape) : rc;
    }
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

/* The records set aside before a SCHEMA record that made room for them,
 * merged now, before the set's later records (equal K: the later record
 * wins, so order matters). Kept SCHEMA records stay kept. */
static int merge_again(struct merge *m)
{
    size_t *kept, count, i;
    int rc = 0;

    replication__crdt_aside_take(&m->aside, &kept, &count);
    for (i = 0; rc == 0 && i < count; i++) {
        const struct replication__record *rec = &m->cs->records[kept[i]];
        rc = rec->op == REPLICATION__OP_SCHEMA
                 ? replication__crdt_aside_keep(&m->aside, kept[i])
                 : merge_record(m, rec);
    }
    common_free(kept);
    return rc;
}

/* A SCHEMA record (crdt_ddl.c has the rules). The rows touched so far are
 * materialized first, under the schema their records were written for;
 * the record then runs, is skipped, or is kept. */
static int merge_schema(struct merge *m, const struct replication__record *rec)
{
    enum replication__ddl_result result;
    size_t i;
    int rc = rec->sql != NULL ? 0 : REPLICATION_EFORMAT;

    for (i = 0; rc == 0 && i < m->row_count; i++) {
        rc = materialize(m, &m->rows[i]);
    }
    m->row_count = 0;
    forget_shapes(m);
    replication__crdt_aside_reshaped(&m->aside);
    if (rc == 0) {
        rc = replication__crdt_ddl_merge(m->crdt, m->cs, rec->sql, &result);
    }
    if (rc == 0 && result == REPLICATION__DDL_KEEP) {
        rc = replication__crdt_aside_keep(&m->aside,
                                          (size_t)(rec - m->cs->records));
    }
    if (rc == 0 && result == REPLICATION__DDL_APPLIED) {
        rc = merge_again(m);
    }
    return rc;
}

/* The set is applied: it no longer waits (crdt_pending.c), if it did. */
static int drop_pending(struct merge *m)
{
    struct engine_stmt *stmt;
    int rc;

    /* Every waiting set is held in memory too (crdt.c): none held, none
     * stored, and most merges spare the statement. */
    if (m->crdt->held_count == 0) {
        return 0;
    }
    rc = replication__crdt_stmt(m->crdt, CRDT_PENDING_DROP, &stmt);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, m->cs->origin, sizeof(m->cs->origin));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)m->cs->version);
    }
    return rc == 0 ? replication__crdt_step_done(m->crdt, stmt) : rc;
}

/* Merges the set's records and materializes the rows they touched. */
static int merge_body(struct merge *m)
{
    size_t i;
    int rc = scan_exists(m);

    for (i = 0; rc == 0 && i < m->cs->record_count; i++) {
        rc = merge_record(m, &m->cs->records[i]);
    }
    for (i = 0; rc == 0 && i < m->row_count; i++) {
        rc = materialize(m, &m->rows[i]);
    }
    return rc;
}

static int merge_cb(void *ctx, struct engine_db *db)
{
    struct merge *m = ctx;
    int rc;

    (void)db;
    rc = merge_body(m);
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
    if (rc == 0) {
        rc = replication__crdt_aside_save(m->crdt, m->cs, &m->aside, false);
    }
    replication__crdt_stmts_close(m->crdt);
    return rc;
}

/* A kept set merged again (crdt_quarantine.c): only its records, and the
 * row that keeps what still does not apply. */
static int merge_kept_cb(void *ctx, struct engine_db *db)
{
    struct merge *m = ctx;
    int rc;

    (void)db;
    rc = merge_body(m);
    if (rc == 0) {
        rc = replication__crdt_aside_save(m->crdt, m->cs, &m->aside, true);
    }
    replication__crdt_stmts_close(m->crdt);
    return rc;
}

/* A set merged back in a snapshot install's transaction
 * (crdt_snapshot_install.c): its records and the row keeping what does not
 * apply; its version, log rows and clock are the install's business. */
static int merge_within_cb(void *ctx, struct engine_db *db)
{
    struct merge *m = ctx;
    int rc;

    (void)db;
    rc = merge_body(m);
    if (rc == 0) {
        rc = replication__crdt_aside_save(m->crdt, m->cs, &m->aside, false);
    }
    return rc;
}

/* A set merged as part of a batch, in the batch's transaction (crdt.c):
 * the same work and bookkeeping as merge_cb. */
static int merge_batched_cb(void *ctx, struct engine_db *db)
{
    return merge_cb(ctx, db);
}

static int run_merge(struct replication__crdt *crdt,
                     const struct replication__changeset *cs, uint64_t stamp,
                     engine_apply_cb cb)
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
    rc = replication__crdt_aside_init(&m.aside, cs->table_count);
    if (rc == 0 && (cb == merge_within_cb || cb == merge_batched_cb)) {
        rc = cb(&m, crdt->db); /* in the caller's transaction */
    } else if (rc == 0) {
        rc = engine_apply_transaction(crdt->db, stamp, cb, &m);
    }
    if (rc == 0) {
        replication__crdt_aside_commit(crdt, cs, &m.aside);
    }
    replication__crdt_stmts_close(crdt);
    forget_shapes(&m);
    common_free(m.shapes);
    common_free(m.rows);
    common_free(m.slots);
    common_free(m.exists);
    replication__arena_close(&m.arena);
    replication__crdt_aside_close(&m.aside);
    return rc;
}

int replication__crdt_merge(struct replication__crdt *crdt,
                            const struct replication__changeset *cs,
                            uint64_t stamp)
{
    return run_merge(crdt, cs, stamp, merge_cb);
}

int replication__crdt_merge_kept(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs)
{
    return run_merge(crdt, cs, 0, merge_kept_cb);
}

int replication__crdt_merge_within(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs)
{
    ASSERT(engine_in_transaction(crdt->db));
    return run_merge(crdt, cs, 0, merge_within_cb);
}

int replication__crdt_merge_batched(struct replication__crdt *crdt,
                                    const struct replication__changeset *cs)
{
    ASSERT(engine_in_transaction(crdt->db));
    return run_merge(crdt, cs, 0, merge_batched_cb);
}
