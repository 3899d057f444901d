/* SPDX-License-Identifier: MIT
 *
 * ddl_alter.h: what ALTER TABLE's two files share: ddl_alter.c runs the
 * statement, ddl_alter_text.c edits the schema text of the table and its
 * indexes as SQLite's alter.c does (renameEditSql, sqlite_drop_column,
 * sqlite3AlterFinishAddColumn), so sqlite_schema shows the same text.
 */
#ifndef SINEW_ENGINE_DDL_ALTER_H
#define SINEW_ENGINE_DDL_ALTER_H

#include <stdbool.h>
#include <stddef.h>

/* The text of sql (a CREATE TABLE or CREATE INDEX) with the references to
 * column of table renamed to new_name, or with column NULL, the table's
 * own name and the qualifiers naming it ("t.a") renamed. quoted: the new
 * name was written quoted, so every edit quotes it (renameEditSql's
 * bQuote). *out is common_malloc'd. 0, COMMON_ENOMEM, or ENGINE_ECORRUPT
 * when sql does not parse. */
int engine__alter_rename_text(const char *sql, const char *table,
                              const char *column, const char *new_name,
                              bool quoted, char **out);

/* Whether the expressions and key columns of sql (CREATE TABLE: its table
 * constraints and CHECKs of columns other than column itself; CREATE
 * INDEX: its columns and WHERE) name column of table: *out. 0,
 * COMMON_ENOMEM or ENGINE_ECORRUPT. */
int engine__alter_refers(const char *sql, const char *table, const char *column,
                         bool *out);

/* The CREATE TABLE text sql with the column definition def[0..size)
 * appended to its columns (before its table constraints). */
int engine__alter_add_text(const char *sql, const char *def, size_t size,
                           char **out);

/* The CREATE TABLE text sql without the definition of its column'th
 * column (not its only one). */
int engine__alter_drop_text(const char *sql, size_t column, char **out);

/* Whether a token of sql (a view's or trigger's text) is name, quoted
 * or not: a conservative "may use the table". */
bool engine__alter_mentions(const char *sql, const char *name);

#endif /* SINEW_ENGINE_DDL_ALTER_H */
