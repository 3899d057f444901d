/* SPDX-License-Identifier: MIT
 *
 * integrity.c: PRAGMA integrity_check. In memory, every live row must be
 * found again through the rowid index and through each of its table's
 * unique keys, and each non-unique index must hold exactly the table's
 * rows (as SQLite's check walks each index against its table); on
 * disk, the main file and the WAL are read back and every checksum and
 * zone map verified.
 */
#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

struct report {
    void (*emit)(void *ctx, const char *message);
    void *ctx;
    size_t left; /* messages still allowed */
};

static void report_emit(void *ctx, const char *message)
{
    struct report *report = ctx;

    if (report->left > 0) {
        report->left--;
        report->emit(report->ctx, message);
    }
}

static void key_name(const struct engine_table *table, size_t k, char *out,
                     size_t size)
{
    const struct engine_unique_key *key = &table->keys[k];

    if (key->index_name != NULL) {
        snprintf(out, size, "%s", key->index_name);
    } else {
        snprintf(out, size, "sqlite_autoindex_%s_%zu", table->name, k + 1);
    }
}

/* Whether the row at slot is found through key k (a key holding a NULL is
 * not indexed for uniqueness, so it is skipped). */
static bool key_finds(const struct engine_table *table, size_t k, size_t slot)
{
    const struct engine_unique_key *key = &table->keys[k];
    struct engine_value values[ENGINE_MAX_COLUMNS];

    for (size_t i = 0; i < key->column_count; i++) {
        values[i] = engine__table_get(table, slot, key->columns[i]);
        if (values[i].type == ENGINE_NULL) {
            return true;
        }
    }
    return engine__table_find_key(table, k, values, -1) == (ptrdiff_t)slot;
}

static void check_table(const struct engine_table *table, struct report *report)
{
    char message[ENGINE__ERRMSG_SIZE], name[256];
    size_t live = 0;

    for (size_t slot = 0; slot < table->slot_count && report->left; slot++) {
        if (table->deleted[slot]) {
            continue;
        }
        live++;
        if (engine__table_find_rowid(table, table->rowids[slot]) !=
            (ptrdiff_t)slot) {
            snprintf(message, sizeof(message),
                     "rowid %lld missing from table %s",
                     (long long)table->rowids[slot], table->name);
            report_emit(report, message);
        }
        for (size_t k = 0; k < table->key_count; k++) {
            if (!key_finds(table, k, slot)) {
                key_name(table, k, name, sizeof(name));
                snprintf(message, sizeof(message),
                         "row %lld missing from index %s",
                         (long long)table->rowids[slot], name);
                report_emit(report, message);
            }
        }
    }
    for (size_t i = 0; i < table->index_count && report->left; i++) {
        if (table->indexes[i].lookup != NULL &&
            !engine__table_index_consistent(table, i)) {
            snprintf(message, sizeof(message),
                     "index %s does not match table %s", table->indexes[i].name,
                     table->name);
            report_emit(report, message);
        }
    }
    if (report->left && live != table->live_count) {
        snprintf(message, sizeof(message),
                 "table %s holds %zu rows but counts %zu", table->name, live,
                 table->live_count);
        report_emit(report, message);
    }
}

/* Both files as of the last visible commit: under the storage's mutex, so
 * a checkpoint cannot replace them halfway (the writer may append past the
 * visible end meanwhile; those bytes are not checked). */
static void check_files(struct engine_storage *storage, struct report *report)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    struct engine_wal_position visible;
    int rc;

    pthread_mutex_lock(&storage->mutex);
    visible = storage->visible;
    rc = engine__io_read_file(storage->path, &bytes, &size);

    if (rc != 0) {
        report_emit(report, "main file: cannot be read");
    } else {
        (void)engine__dbfile_verify(bytes, size, report_emit, report);
    }
    common_free(bytes);
    if (report->left) {
        (void)engine__wal_verify(storage, &visible, report_emit, report);
    }
    pthread_mutex_unlock(&storage->mutex);
}

int engine__storage_integrity_check(struct engine_db *db, size_t max_errors,
                                    void (*emit)(void *ctx,
                                                 const char *message),
                                    void *ctx)
{
    struct report report = {.emit = emit, .ctx = ctx, .left = max_errors};

    for (size_t t = 0; t < db->table_count && report.left; t++) {
        check_table(db->tables[t], &report);
    }
    if (db->storage != NULL && report.left) {
        check_files(db->storage, &report);
    }
    return 0;
}
