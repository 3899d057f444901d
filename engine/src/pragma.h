/* SPDX-License-Identifier: MIT
 *
 * pragma.h: what the PRAGMA files share: pragma.c (the dispatch, the
 * settings pragmas and VACUUM) and pragma_schema.c (table_info,
 * index_list and index_info). A pragma's result rows go into the
 * statement's RETURNING rows (stmt->returning), which the steps after the
 * first hand out, one row of stmt->column_count values each.
 */
#ifndef SINEW_ENGINE_PRAGMA_H
#define SINEW_ENGINE_PRAGMA_H

#include "engine_int.h"

/* Appends one result row (stmt->column_count values; text and blob bytes
 * copied into the statement's result arena). 0, or COMMON_ENOMEM recorded
 * on the database. */
int engine__pragma_row(struct engine_stmt *stmt,
                       const struct engine_value *values);

/* The rows of PRAGMA table_info(name), index_list(name) and
 * index_info(name): none when there is no such table or index, as in
 * SQLite. 0 or COMMON_ENOMEM (recorded on the database). */
int engine__pragma_table_info(struct engine_stmt *stmt, const char *name);
int engine__pragma_index_list(struct engine_stmt *stmt, const char *name);
int engine__pragma_index_info(struct engine_stmt *stmt, const char *name);

/* PRAGMA jit [= on|off] and PRAGMA jit_stats (pragma_jit.c). */
int engine__pragma_jit(struct engine_stmt *stmt,
                       const struct ast_pragma *pragma);
int engine__pragma_jit_stats(struct engine_stmt *stmt,
                             const struct ast_pragma *pragma);

#endif /* SINEW_ENGINE_PRAGMA_H */
