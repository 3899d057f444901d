/* SPDX-License-Identifier: MIT
 *
 * transfer_sql.c: the SQL that import and export generate (transfer_int.h):
 * quoted identifiers, a table's columns and the name its rowid answers to,
 * and the SELECT and INSERT that copy its rows.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "transfer_int.h"

/* A NUL-terminated copy of size bytes; NULL when out of memory. */
char *transfer_strndup(const void *bytes, size_t size)
{
    char *copy = common_malloc(size + 1);
    if (copy != NULL) {
        memcpy(copy, size > 0 ? bytes : "", size);
        copy[size] = '\0';
    }
    return copy;
}

static int append_text(struct common_buf *buf, const char *text)
{
    return common_buf_append(buf, text, strlen(text));
}

/* name as a quoted identifier: "a""b". */
static int append_identifier(struct common_buf *buf, const char *name)
{
    int rc = common_buf_append_byte(buf, '"');
    for (const char *p = name; rc == 0 && *p != '\0'; p++) {
        rc = common_buf_append_byte(buf, (uint8_t)*p);
        if (rc == 0 && *p == '"') {
            rc = common_buf_append_byte(buf, '"');
        }
    }
    return rc == 0 ? common_buf_append_byte(buf, '"') : rc;
}

/* "prefix "table" suffix", NUL-terminated in buf. */
int transfer_build_table_sql(struct common_buf *buf, const char *prefix,
                             const char *table, const char *suffix)
{
    common_buf_truncate(buf, 0);
    int rc = append_text(buf, prefix);
    rc = rc == 0 ? append_identifier(buf, table) : rc;
    rc = rc == 0 ? append_text(buf, suffix) : rc;
    return rc == 0 ? common_buf_append_byte(buf, '\0') : rc;
}

void transfer_columns_free(struct transfer_columns *columns)
{
    for (int i = 0; i < columns->count; i++) {
        common_free(columns->names[i]);
    }
    common_free(columns->names);
    memset(columns, 0, sizeof(*columns));
}

static bool has_column(const struct transfer_columns *columns, const char *name)
{
    for (int i = 0; i < columns->count; i++) {
        if (strcasecmp(columns->names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* A column named rowid hides the rowid under that name; SQLite offers
 * three ("ROWIDs and the INTEGER PRIMARY KEY", lang_createtable.html). */
static const char *pick_rowid_name(const struct transfer_columns *columns)
{
    static const char *const names[] = {"rowid", "_rowid_", "oid"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!has_column(columns, names[i])) {
            return names[i];
        }
    }
    return NULL;
}

int transfer_columns_read(struct transfer_end *end, struct common_buf *sql,
                          const char *table, struct transfer_columns *columns)
{
    void *stmt = NULL;
    int rc = transfer_build_table_sql(sql, "SELECT * FROM ", table, "");
    rc = rc == 0 ? end->ops->prepare(end, (const char *)sql->data, &stmt) : rc;
    int count = rc == 0 ? end->ops->column_count(stmt) : 0;
    if (count > 0) {
        columns->names = common_calloc((size_t)count, sizeof(char *));
        rc = columns->names == NULL ? COMMON_ENOMEM : 0;
    }
    for (int i = 0; rc == 0 && i < count; i++) {
        const char *name = end->ops->column_name(stmt, i);
        name = name != NULL ? name : "";
        columns->names[i] = transfer_strndup(name, strlen(name));
        rc = columns->names[i] == NULL ? COMMON_ENOMEM : 0;
        columns->count = i + 1;
    }
    end->ops->finalize(stmt);
    columns->rowid = pick_rowid_name(columns);
    return rc;
}

/* SELECT rowid, "a", "b" FROM "t" ORDER BY rowid (rowid left out when
 * with_rowid is false). */
int transfer_build_select(struct common_buf *buf, const char *table,
                          const struct transfer_columns *columns,
                          bool with_rowid)
{
    common_buf_truncate(buf, 0);
    int rc = append_text(buf, "SELECT ");
    if (rc == 0 && with_rowid) {
        rc = append_text(buf, columns->rowid);
    }
    for (int i = 0; rc == 0 && i < columns->count; i++) {
        if (i > 0 || with_rowid) {
            rc = common_buf_append_byte(buf, ',');
        }
        rc = rc == 0 ? append_identifier(buf, columns->names[i]) : rc;
    }
    rc = rc == 0 ? append_text(buf, " FROM ") : rc;
    rc = rc == 0 ? append_identifier(buf, table) : rc;
    if (rc == 0 && with_rowid) {
        rc = append_text(buf, " ORDER BY ");
        rc = rc == 0 ? append_text(buf, columns->rowid) : rc;
    }
    return rc == 0 ? common_buf_append_byte(buf, '\0') : rc;
}

/* INSERT INTO "t"(rowid,"a","b") VALUES(?1,?2,?3). */
int transfer_build_insert(struct common_buf *buf, const char *table,
                          const struct transfer_columns *columns,
                          bool with_rowid)
{
    common_buf_truncate(buf, 0);
    int rc = append_text(buf, "INSERT INTO ");
    rc = rc == 0 ? append_identifier(buf, table) : rc;
    rc = rc == 0 ? common_buf_append_byte(buf, '(') : rc;
    if (rc == 0 && with_rowid) {
        rc = append_text(buf, columns->rowid);
    }
    for (int i = 0; rc == 0 && i < columns->count; i++) {
        if (i > 0 || with_rowid) {
            rc = common_buf_append_byte(buf, ',');
        }
        rc = rc == 0 ? append_identifier(buf, columns->names[i]) : rc;
    }
    rc = rc == 0 ? append_text(buf, ") VALUES(") : rc;
    int values = columns->count + (with_rowid ? 1 : 0);
    for (int i = 1; rc == 0 && i <= values; i++) {
        char parameter[16];
        snprintf(parameter, sizeof(parameter), "%s?%d", i > 1 ? "," : "", i);
        rc = append_text(buf, parameter);
    }
    rc = rc == 0 ? append_text(buf, ")") : rc;
    return rc == 0 ? common_buf_append_byte(buf, '\0') : rc;
}
