/* SPDX-License-Identifier: MIT
 *
 * redo.c: the open transaction's redo log, encoded as it will sit in its
 * WAL record (docs/formats.md, "Commit payload"). Each change is appended
 * right after its undo record, so the log is the transaction's changes in
 * the order they happened; a statement or savepoint that is undone cuts the
 * log back to the size its first undo record noted (undo.c). An UPDATE
 * records only the columns whose value changed, as the replication layer
 * wants them (one column patch per changed cell).
 *
 * Keys, for change capture (capture.h): a table whose declared PRIMARY KEY
 * is not its rowid has its key columns named after its table entry, and
 * each UPDATE or DELETE of it is preceded by the row's key values, since
 * the row may be gone by commit time. An UPDATE that changes a row's key
 * (those columns, or the rowid of a table keyed by rowid) is recorded as a
 * DELETE of the old row and an INSERT of the new one, which replay the
 * same way and are what replication must see.
 */
#include <string.h>

#include "engine_int.h"
#include "storage_int.h"

static int put_value(struct common_buf *buf, const struct engine_value *v)
{
    int rc = common_buf_append_byte(buf, (uint8_t)v->type);

    switch (v->type) {
    case ENGINE_INTEGER:
        return rc ? rc
                  : common_buf_append_varint(buf, common_zigzag_encode(v->u.i));
    case ENGINE_FLOAT: {
        uint64_t bits;

        memcpy(&bits, &v->u.r, sizeof(bits));
        return rc ? rc : common_buf_append_u64le(buf, bits);
    }
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        rc = rc ? rc : common_buf_append_varint(buf, v->u.s.size);
        return rc ? rc : common_buf_append(buf, v->u.s.bytes, v->u.s.size);
    default:
        return rc;
    }
}

int engine__storage_put_value(struct common_buf *buf,
                              const struct engine_value *value)
{
    return put_value(buf, value) ? COMMON_ENOMEM : 0;
}

static int put_text(struct common_buf *buf, const char *text)
{
    size_t size = strlen(text);
    int rc = common_buf_append_varint(buf, size);

    return rc ? rc : common_buf_append(buf, text, size);
}

static int put_rowid(struct common_buf *buf, int64_t rowid)
{
    return common_buf_append_varint(buf, common_zigzag_encode(rowid));
}

/* The table entry, and the key columns of a table keyed by a declared
 * PRIMARY KEY. */
static int put_table(struct common_buf *buf, const struct engine_table *table)
{
    const struct engine_unique_key *key = engine__capture_primary_key(table);
    int rc = common_buf_append_byte(buf, ENGINE__REDO_TABLE);

    rc = rc ? rc : put_text(buf, table->name);
    if (key != NULL) {
        rc = rc ? rc : common_buf_append_byte(buf, ENGINE__REDO_PRIMARY_KEY);
        rc = rc ? rc : common_buf_append_varint(buf, key->column_count);
        for (size_t i = 0; rc == 0 && i < key->column_count; i++) {
            rc = common_buf_append_varint(buf, key->columns[i]);
        }
    }
    return rc;
}

/* The entry's kind, after a table switch when the table is not the one the
 * last row entry named. */
static int begin_row_entry(struct engine_db *db,
                           const struct engine_table *table, uint8_t kind)
{
    int rc = 0;

    if (db->redo_table != table) {
        rc = put_table(&db->redo, table);
        db->redo_table = rc ? NULL : table;
    }
    return rc ? rc : common_buf_append_byte(&db->redo, kind);
}

/* The K entry of a row of a table keyed by a declared PRIMARY KEY: the key
 * columns' values taken from values (the row as it was); nothing for a
 * table keyed by rowid. After begin_row_entry's table switch, before the
 * row entry itself. */
static int put_key(struct engine_db *db, const struct engine_table *table,
                   const struct engine_value *values)
{
    const struct engine_unique_key *key = engine__capture_primary_key(table);
    int rc;

    if (key == NULL) {
        return 0;
    }
    rc = common_buf_append_byte(&db->redo, ENGINE__REDO_KEY);
    rc = rc ? rc : common_buf_append_varint(&db->redo, key->column_count);
    for (size_t i = 0; rc == 0 && i < key->column_count; i++) {
        rc = put_value(&db->redo, &values[key->columns[i]]);
    }
    return rc;
}

/* A row entry (U or D) preceded by its key: the table switch comes first,
 * so that the key and its entry stay together. */
static int begin_keyed_entry(struct engine_db *db,
                             const struct engine_table *table,
                             const struct engine_value *old_values,
                             uint8_t kind)
{
    int rc = 0;

    if (db->redo_table != table) {
        rc = put_table(&db->redo, table);
        db->redo_table = rc ? NULL : table;
    }
    rc = rc ? rc : put_key(db, table, old_values);
    return rc ? rc : common_buf_append_byte(&db->redo, kind);
}

static int finish(struct engine_db *db, size_t mark, int rc)
{
    if (rc != 0) {
        engine__redo_truncate(db, mark);
        return COMMON_ENOMEM;
    }
    return 0;
}

static int put_insert(struct engine_db *db, const struct engine_table *table,
                      size_t slot)
{
    int rc = begin_row_entry(db, table, ENGINE__REDO_INSERT);

    rc = rc ? rc : put_rowid(&db->redo, table->rowids[slot]);
    rc = rc ? rc : common_buf_append_varint(&db->redo, table->column_count);
    for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
        struct engine_value v = engine__table_get(table, slot, c);

        rc = put_value(&db->redo, &v);
    }
    return rc;
}

int engine__redo_insert(struct engine_db *db, const struct engine_table *table,
                        size_t slot)
{
    size_t mark = db->redo.size;

    if (!db->capture) {
        return 0;
    }
    return finish(db, mark, put_insert(db, table, slot));
}

static bool same_value(const struct engine_value *a,
                       const struct engine_value *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case ENGINE_INTEGER:
        return a->u.i == b->u.i;
    case ENGINE_FLOAT:
        return memcmp(&a->u.r, &b->u.r, sizeof(a->u.r)) == 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        return a->u.s.size == b->u.s.size &&
               (a->u.s.size == 0 ||
                memcmp(a->u.s.bytes, b->u.s.bytes, a->u.s.size) == 0);
    default:
        return true;
    }
}

/* Whether the update of the row at slot from (old_rowid, old_values)
 * changed its key: a declared PRIMARY KEY's columns, else the rowid. */
static bool key_changed(const struct engine_table *table, size_t slot,
                        int64_t old_rowid,
                        const struct engine_value *old_values)
{
    const struct engine_unique_key *key = engine__capture_primary_key(table);

    if (key == NULL) {
        return old_rowid != table->rowids[slot];
    }
    for (size_t i = 0; i < key->column_count; i++) {
        size_t c = key->columns[i];
        struct engine_value v = engine__table_get(table, slot, c);

        if (!same_value(&v, &old_values[c])) {
            return true;
        }
    }
    return false;
}

/* A key change: DELETE of the old row, INSERT of the new one. */
static int put_moved(struct engine_db *db, const struct engine_table *table,
                     size_t slot, int64_t old_rowid,
                     const struct engine_value *old_values)
{
    int rc = begin_keyed_entry(db, table, old_values, ENGINE__REDO_DELETE);

    rc = rc ? rc : put_rowid(&db->redo, old_rowid);
    return rc ? rc : put_insert(db, table, slot);
}

int engine__redo_update(struct engine_db *db, const struct engine_table *table,
                        size_t slot, int64_t old_rowid,
                        const struct engine_value *old_values)
{
    size_t mark = db->redo.size;
    size_t changed = 0;
    int rc;

    if (!db->capture) {
        return 0;
    }
    if (key_changed(table, slot, old_rowid, old_values)) {
        return finish(db, mark,
                      put_moved(db, table, slot, old_rowid, old_values));
    }
    for (size_t c = 0; c < table->column_count; c++) {
        struct engine_value v = engine__table_get(table, slot, c);

        changed += !table->columns[c].hidden_rowid_alias &&
                   !same_value(&v, &old_values[c]);
    }
    if (changed == 0 && old_rowid == table->rowids[slot]) {
        return 0;
    }
    rc = begin_keyed_entry(db, table, old_values, ENGINE__REDO_UPDATE);
    rc = rc ? rc : put_rowid(&db->redo, old_rowid);
    rc = rc ? rc : put_rowid(&db->redo, table->rowids[slot]);
    rc = rc ? rc : common_buf_append_varint(&db->redo, changed);
    for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
        struct engine_value v = engine__table_get(table, slot, c);

        if (!table->columns[c].hidden_rowid_alias &&
            !same_value(&v, &old_values[c])) {
            rc = common_buf_append_varint(&db->redo, c);
            rc = rc ? rc : put_value(&db->redo, &v);
        }
    }
    return finish(db, mark, rc);
}

int engine__redo_delete(struct engine_db *db, const struct engine_table *table,
                        int64_t rowid)
{
    size_t mark = db->redo.size;
    const struct engine_undo *undo;
    int rc;

    if (!db->capture) {
        return 0;
    }
    /* The row is gone: its key values are in its undo record, which comes
     * right before this entry (every change is undo, change, redo). */
    ASSERT(db->undo_count > 0);
    undo = &db->undo[db->undo_count - 1];
    ASSERT(undo->kind == ENGINE_UNDO_DELETE);
    ASSERT(undo->table == table);
    ASSERT(undo->rowid == rowid);
    rc = begin_keyed_entry(db, table, undo->values, ENGINE__REDO_DELETE);
    rc = rc ? rc : put_rowid(&db->redo, rowid);
    return finish(db, mark, rc);
}

int engine__redo_schema(struct engine_db *db, const char *sql)
{
    size_t mark = db->redo.size;
    int rc;

    if (!db->capture) {
        return 0;
    }
    /* A schema change can drop or recreate the table the last row entry
     * named: the next row entry names its table again. */
    db->redo_table = NULL;
    rc = common_buf_append_byte(&db->redo, ENGINE__REDO_SCHEMA);
    rc = rc ? rc : put_text(&db->redo, sql);
    return finish(db, mark, rc);
}

int engine__redo_user_version(struct engine_db *db, int64_t value)
{
    size_t mark = db->redo.size;
    int rc;

    if (!db->capture) {
        return 0;
    }
    rc = common_buf_append_byte(&db->redo, ENGINE__REDO_USER_VERSION);
    rc = rc ? rc : put_rowid(&db->redo, value);
    return finish(db, mark, rc);
}

void engine__redo_truncate(struct engine_db *db, size_t size)
{
    /* The entry naming the current table may be gone: the next row entry
     * names it again. */
    if (size < db->redo.size || size == 0) {
        common_buf_truncate(&db->redo, size);
        db->redo_table = NULL;
    }
}
