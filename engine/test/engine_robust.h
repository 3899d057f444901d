/* SPDX-License-Identifier: MIT
 *
 * engine_robust.h: what the engine's robustness test and its fuzz target
 * share: a database with a small schema and rows, reset between inputs so
 * every input meets the same state.
 */
#ifndef SINEW_ENGINE_ROBUST_H
#define SINEW_ENGINE_ROBUST_H

#include "engine.h"

static const char engine_robust_schema[] =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c REAL NOT NULL "
    "DEFAULT 0, d, CHECK (c > -1e9));"
    "CREATE TABLE u(x NUMERIC COLLATE NOCASE, y BLOB, PRIMARY KEY (x, y));"
    "CREATE INDEX ti ON t(c);"
    "INSERT INTO t(b, c, d) VALUES ('one', 1.5, 1), ('two', 2, 'x'), "
    "(NULL, 3, x'00'), ('four', -4, NULL);"
    "INSERT INTO u VALUES ('A', 1), ('b', 2.5), (3, 'z');";

/* Opens a database holding the schema; NULL when out of memory. */
static inline struct engine_db *engine_robust_open(void)
{
    struct engine_db *db = NULL;

    if (engine_open(NULL, &db) != 0) {
        return NULL;
    }
    if (engine_exec(db, engine_robust_schema, NULL, NULL) != 0) {
        engine_close(db);
        return NULL;
    }
    return db;
}

/* Runs sql (any bytes, size of them) statement by statement, as exec
 * does; returns how many statements ran to completion. */
static inline int engine_robust_run(struct engine_db *db, const char *sql,
                                    size_t size)
{
    const char *end = sql + size;
    int completed = 0;

    while (sql < end) {
        struct engine_stmt *stmt = NULL;
        const char *tail = NULL;
        int rc = engine_prepare(db, sql, (int)(end - sql), &stmt, &tail);

        if (rc == 0 && stmt != NULL) {
            for (int steps = 0; steps < 10000; steps++) {
                rc = engine_step(stmt);
                completed += rc == ENGINE_DONE;
                if (rc != ENGINE_ROW) {
                    break;
                }
                for (int c = 0; c < engine_column_count(stmt); c++) {
                    (void)engine_column_text(stmt, c);
                }
            }
            engine_finalize(stmt);
        }
        if (rc != 0 && rc != ENGINE_DONE && rc != ENGINE_ROW) {
            (void)engine_errmsg(db);
        }
        if (tail == NULL || tail <= sql) {
            break;
        }
        sql = tail;
    }
    return completed;
}

#endif /* SINEW_ENGINE_ROBUST_H */
