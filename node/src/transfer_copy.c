/* SPDX-License-Identifier: MIT
 *
 * transfer_copy.c: the copy algorithm of import and export, the same in
 * both directions (transfer_int.h).
 *
 * Order matters: tables first, each created with the CREATE TABLE text the
 * source stores and filled at once; then the indexes (building an index
 * once is cheaper than updating it per row, and a UNIQUE one cannot fail
 * on rows the source already holds under it); then views; triggers last,
 * so none fires while the rows are copied. A table or index the target
 * refuses fails the copy; a view or trigger it refuses (one using SQL the
 * engine does not have: docs/engine.md) is named in a warning and
 * skipped.
 *
 * Rows keep their rowids: the INSERT names the rowid explicitly, which
 * SQLite and the engine both accept beside an INTEGER PRIMARY KEY (the
 * two carry the same value). The rows are read in rowid order, the order
 * in which the engine appends cheapest, and written in transactions of
 * TRANSFER_BATCH_ROWS rows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "node.h"
#include "transfer_int.h"

#define TRANSFER_BATCH_ROWS 10000
#define TRANSFER_SQL_SIZE_MAX ((size_t)1 << 20) /* one generated statement */

int transfer_fail(char *error, size_t error_size, int rc, const char *format,
                  ...)
{
    ASSERT(error != NULL && error_size > 0);
    if (error[0] == '\0') {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_size, format, args);
        va_end(args);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * The source's schema
 * ------------------------------------------------------------------------ */

/* One row of sqlite_schema; every string owned. */
struct transfer_object {
    char *type; /* "table", "index", "view", "trigger" */
    char *name;
    char *table; /* tbl_name */
    char *sql;
};

struct transfer_schema {
    struct transfer_object *objects; /* owned */
    size_t count;
    size_t capacity;
};

static void schema_free(struct transfer_schema *schema)
{
    for (size_t i = 0; i < schema->count; i++) {
        struct transfer_object *object = &schema->objects[i];
        common_free(object->type);
        common_free(object->name);
        common_free(object->table);
        common_free(object->sql);
    }
    common_free(schema->objects);
    memset(schema, 0, sizeof(*schema));
}

/* A copy of a text value (anything else reads as ""). */
static char *value_strdup(const struct transfer_value *value)
{
    bool is_text = value->type == TRANSFER_TEXT;
    return transfer_strndup(is_text ? value->bytes : "",
                            is_text ? value->size : 0);
}

static int schema_push(struct transfer_schema *schema, void *stmt,
                       const struct transfer_end_ops *ops)
{
    if (schema->count == schema->capacity) {
        size_t capacity = schema->capacity == 0 ? 16 : 2 * schema->capacity;
        struct transfer_object *objects =
            common_realloc_array(schema->objects, capacity, sizeof(*objects));
        if (objects == NULL) {
            return COMMON_ENOMEM;
        }
        schema->objects = objects;
        schema->capacity = capacity;
    }
    char *fields[4] = {NULL, NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; rc == 0 && i < 4; i++) {
        struct transfer_value value;
        rc = ops->column(stmt, i, &value);
        if (rc == 0 && (fields[i] = value_strdup(&value)) == NULL) {
            rc = COMMON_ENOMEM;
        }
    }
    if (rc != 0) {
        for (int i = 0; i < 4; i++) {
            common_free(fields[i]);
        }
        return rc;
    }
    schema->objects[schema->count++] =
        (struct transfer_object){.type = fields[0],
                                 .name = fields[1],
                                 .table = fields[2],
                                 .sql = fields[3]};
    return 0;
}

/* Reads the source's sqlite_schema in creation order. Automatic indexes
 * (of UNIQUE and PRIMARY KEY constraints) have no SQL: the CREATE TABLE
 * makes them again. */
static int schema_read(struct transfer_copy *copy,
                       struct transfer_schema *schema)
{
    const struct transfer_end_ops *ops = copy->source->ops;
    void *stmt = NULL;
    int rc = ops->prepare(copy->source,
                          "SELECT type, name, tbl_name, sql FROM "
                          "sqlite_schema WHERE sql IS NOT NULL",
                          &stmt);
    while (rc == 0 && (rc = ops->step(stmt)) == TRANSFER_ROW) {
        rc = schema_push(schema, stmt, ops);
    }
    rc = rc == TRANSFER_DONE ? 0 : rc;
    if (rc != 0) {
        transfer_fail(copy->error, copy->error_size, rc, "%s: %s",
                      copy->source_name, ops->errmsg(copy->source, rc));
    }
    ops->finalize(stmt);
    return rc;
}

/* Names SQLite keeps for itself (sqlite_sequence, sqlite_stat1...) and
 * sinew's system tables (engine.h, "System tables"), never copied. */
static bool is_internal_name(const char *name)
{
    return strncasecmp(name, "sqlite_", 7) == 0 ||
           strncasecmp(name, ENGINE_SYSTEM_PREFIX,
                       strlen(ENGINE_SYSTEM_PREFIX)) == 0;
}

/* ------------------------------------------------------------------------
 * Rows
 * ------------------------------------------------------------------------ */

/* The statements of one table's copy. */
struct transfer_rows {
    void *select; /* on the source */
    void *insert; /* on the target */
    int value_count;
    int64_t done;
};

static int source_fail(struct transfer_copy *copy, int rc, const char *what,
                       const char *name)
{
    return transfer_fail(copy->error, copy->error_size, rc, "%s %s: %s", what,
                         name, copy->source->ops->errmsg(copy->source, rc));
}

static int target_fail(struct transfer_copy *copy, int rc, const char *what,
                       const char *name)
{
    return transfer_fail(copy->error, copy->error_size, rc, "%s %s: %s", what,
                         name, copy->target->ops->errmsg(copy->target, rc));
}

/* Rows of the table, for the progress bar (only counted when it shows). */
static int64_t count_rows(struct transfer_copy *copy, struct common_buf *sql,
                          const char *table)
{
    const struct transfer_end_ops *ops = copy->source->ops;
    void *stmt = NULL;
    int64_t count = 0;
    if (transfer_build_table_sql(sql, "SELECT count(*) FROM ", table, "") ==
            0 &&
        ops->prepare(copy->source, (const char *)sql->data, &stmt) == 0 &&
        ops->step(stmt) == TRANSFER_ROW) {
        struct transfer_value value;
        if (ops->column(stmt, 0, &value) == 0 &&
            value.type == TRANSFER_INTEGER) {
            count = value.integer;
        }
    }
    ops->finalize(stmt);
    return count;
}

/* Copies the current source row into the target. */
static int copy_row(struct transfer_copy *copy, struct transfer_rows *rows,
                    const char *table)
{
    const struct transfer_end_ops *in = copy->source->ops;
    const struct transfer_end_ops *out = copy->target->ops;
    for (int i = 0; i < rows->value_count; i++) {
        struct transfer_value value;
        int rc = in->column(rows->select, i, &value);
        if (rc != 0) {
            return source_fail(copy, rc, "reading table", table);
        }
        rc = out->bind(rows->insert, i + 1, &value);
        if (rc != 0) {
            return target_fail(copy, rc, "table", table);
        }
    }
    int rc = out->step(rows->insert);
    if (rc != TRANSFER_DONE) {
        return transfer_fail(
            copy->error, copy->error_size, rc, "table %s, row %lld: %s", table,
            (long long)rows->done + 1, out->errmsg(copy->target, rc));
    }
    rc = out->reset(rows->insert);
    if (rc != 0) {
        return target_fail(copy, rc, "table", table);
    }
    rows->done++;
    return 0;
}

static int target_exec(struct transfer_copy *copy, const char *sql,
                       const char *table)
{
    int rc = copy->target->ops->exec(copy->target, sql);
    return rc == 0 ? 0 : target_fail(copy, rc, "table", table);
}

static bool is_stopped(const struct transfer_copy *copy)
{
    return copy->options->stop != NULL && *copy->options->stop != 0;
}

/* Steps the source to its end, one target transaction per batch. */
static int copy_rows(struct transfer_copy *copy, struct transfer_rows *rows,
                     struct transfer_progress *progress, const char *table)
{
    int rc = target_exec(copy, "BEGIN", table);
    while (rc == 0 &&
           (rc = copy->source->ops->step(rows->select)) == TRANSFER_ROW) {
        if (is_stopped(copy)) {
            return transfer_fail(copy->error, copy->error_size, -EINTR,
                                 "interrupted");
        }
        rc = copy_row(copy, rows, table);
        if (rc == 0 && rows->done % TRANSFER_BATCH_ROWS == 0) {
            rc = target_exec(copy, "COMMIT", table);
            rc = rc == 0 ? target_exec(copy, "BEGIN", table) : rc;
        }
        transfer_progress_update(progress, rows->done);
    }
    if (rc != TRANSFER_DONE) {
        return rc < 0 && copy->error[0] == '\0'
                   ? source_fail(copy, rc, "reading table", table)
                   : rc;
    }
    return target_exec(copy, "COMMIT", table);
}

/* Prepares the select (with the rowid when the table has one: a WITHOUT
 * ROWID table, which the target accepted, has none) and the insert. */
static int prepare_rows(struct transfer_copy *copy, struct common_buf *sql,
                        const char *table,
                        const struct transfer_columns *columns,
                        struct transfer_rows *rows)
{
    struct transfer_end *source = copy->source;
    bool with_rowid = columns->rowid != NULL;
    int rc = transfer_build_select(sql, table, columns, with_rowid);
    rc = rc == 0 ? source->ops->prepare(source, (const char *)sql->data,
                                        &rows->select)
                 : rc;
    if (rc != 0 && with_rowid) {
        with_rowid = false;
        rc = transfer_build_select(sql, table, columns, false);
        rc = rc == 0 ? source->ops->prepare(source, (const char *)sql->data,
                                            &rows->select)
                     : rc;
    }
    if (rc != 0) {
        return source_fail(copy, rc, "reading table", table);
    }
    rows->value_count = columns->count + (with_rowid ? 1 : 0);
    rc = transfer_build_insert(sql, table, columns, with_rowid);
    rc = rc == 0 ? copy->target->ops->prepare(
                       copy->target, (const char *)sql->data, &rows->insert)
                 : rc;
    return rc == 0 ? 0 : target_fail(copy, rc, "table", table);
}

static int copy_table_rows(struct transfer_copy *copy, struct common_buf *sql,
                           const char *table)
{
    struct transfer_columns columns = {0};
    struct transfer_rows rows = {0};
    int rc = transfer_columns_read(copy->source, sql, table, &columns);
    if (rc != 0) {
        source_fail(copy, rc, "reading table", table);
        goto cleanup;
    }
    rc = prepare_rows(copy, sql, table, &columns, &rows);
    if (rc != 0) {
        goto cleanup;
    }
    struct transfer_progress progress;
    FILE *stream = copy->options->progress;
    transfer_progress_begin(&progress, stream, copy->verb, table,
                            stream != NULL ? count_rows(copy, sql, table) : 0);
    rc = copy_rows(copy, &rows, &progress, table);
    transfer_progress_end(&progress, rows.done);
    copy->summary->rows += rows.done;
cleanup:
    copy->target->ops->finalize(rows.insert);
    copy->source->ops->finalize(rows.select);
    transfer_columns_free(&columns);
    return rc;
}

/* ------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------ */

static void warn(const struct transfer_copy *copy, const char *type,
                 const char *name, const char *reason)
{
    if (copy->options->warnings != NULL) {
        fprintf(copy->options->warnings, "warning: skipped %s %s: %s\n", type,
                name, reason);
    }
}

/* Creates one object on the target. A view or trigger the target refuses
 * is skipped with a warning; anything else refused fails the copy. */
static int create_object(struct transfer_copy *copy,
                         const struct transfer_object *object)
{
    int rc = copy->target->ops->exec(copy->target, object->sql);
    bool is_optional = strcmp(object->type, "view") == 0 ||
                       strcmp(object->type, "trigger") == 0;
    if (rc != 0 && is_optional) {
        warn(copy, object->type, object->name,
             copy->target->ops->errmsg(copy->target, rc));
        if (strcmp(object->type, "view") == 0) {
            copy->summary->views_skipped++;
        } else {
            copy->summary->triggers_skipped++;
        }
        return 0;
    }
    if (rc != 0) {
        return target_fail(copy, rc, object->type, object->name);
    }
    if (strcmp(object->type, "table") == 0) {
        copy->summary->tables++;
    } else if (strcmp(object->type, "index") == 0) {
        copy->summary->indexes++;
    } else if (strcmp(object->type, "view") == 0) {
        copy->summary->views++;
    } else {
        copy->summary->triggers++;
    }
    return 0;
}

/* Whether the object is copied: not internal, and (an index or trigger)
 * not on an internal table. Skipped user-visible names are warned of. */
static bool is_copied(const struct transfer_copy *copy,
                      const struct transfer_object *object)
{
    if (strncasecmp(object->name, "sqlite_", 7) == 0 ||
        strncasecmp(object->table, "sqlite_", 7) == 0) {
        return false;
    }
    if (is_internal_name(object->name) || is_internal_name(object->table)) {
        warn(copy, object->type, object->name,
             "the sinew_ prefix is reserved for system tables");
        return false;
    }
    return true;
}

/* Copies user_version, which applications use to number their schema. */
static int copy_user_version(struct transfer_copy *copy)
{
    const struct transfer_end_ops *ops = copy->source->ops;
    void *stmt = NULL;
    struct transfer_value value = {.type = TRANSFER_NULL};
    int rc = ops->prepare(copy->source, "PRAGMA user_version", &stmt);
    rc = rc == 0 ? ops->step(stmt) : rc;
    if (rc == TRANSFER_ROW) {
        rc = ops->column(stmt, 0, &value);
    }
    ops->finalize(stmt);
    rc = rc == TRANSFER_DONE ? 0 : rc;
    if (rc != 0) {
        return source_fail(copy, rc, "reading", "user_version");
    }
    if (value.type != TRANSFER_INTEGER || value.integer == 0) {
        return 0;
    }
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld",
             (long long)value.integer);
    rc = copy->target->ops->exec(copy->target, sql);
    return rc == 0 ? 0 : target_fail(copy, rc, "setting", "user_version");
}

/* Creates every object of one type in schema order, filling tables. */
static int copy_objects(struct transfer_copy *copy,
                        const struct transfer_schema *schema, const char *type,
                        struct common_buf *sql)
{
    for (size_t i = 0; i < schema->count; i++) {
        const struct transfer_object *object = &schema->objects[i];
        if (strcmp(object->type, type) != 0 || !is_copied(copy, object)) {
            continue;
        }
        int rc = create_object(copy, object);
        if (rc == 0 && strcmp(type, "table") == 0) {
            rc = copy_table_rows(copy, sql, object->name);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int transfer_copy(struct transfer_copy *copy)
{
    static const char *const types[] = {"table", "index", "view", "trigger"};
    struct transfer_schema schema = {0};
    struct common_buf sql;
    common_buf_init(&sql, TRANSFER_SQL_SIZE_MAX);
    memset(copy->summary, 0, sizeof(*copy->summary));

    /* One read transaction: every table is read from the same snapshot. */
    int rc = copy->source->ops->exec(copy->source, "BEGIN");
    if (rc != 0) {
        transfer_fail(copy->error, copy->error_size, rc, "%s: %s",
                      copy->source_name,
                      copy->source->ops->errmsg(copy->source, rc));
        goto cleanup;
    }
    rc = schema_read(copy, &schema);
    rc = rc == 0 ? copy_user_version(copy) : rc;
    for (size_t i = 0; rc == 0 && i < sizeof(types) / sizeof(types[0]); i++) {
        rc = copy_objects(copy, &schema, types[i], &sql);
    }
    copy->source->ops->exec(copy->source, "COMMIT");
cleanup:
    schema_free(&schema);
    common_buf_close(&sql);
    return rc;
}
