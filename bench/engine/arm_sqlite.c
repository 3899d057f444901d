/* SPDX-License-Identifier: MIT
 *
 * arm_sqlite.c: the benchmark's C SQLite arm (libsqlite3, the oracle of
 * every check) on a database file in WAL mode with a page cache large
 * enough to hold it (--sqlite-cache-mib), so reads run from a warm cache as
 * sinew's do from memory; prepared once, bound, stepped, reset. Also the
 * schema and the generic loader every arm but DuckDB uses.
 */
#include <sqlite3.h>
#include <stdio.h>

#include "bench_engine.h"

static int fail(struct bench_arm *arm, const char *what)
{
    snprintf(arm->error, sizeof arm->error, "%s: %s", what,
             sqlite3_errmsg(arm->handle));
    return -1;
}

static int sqlite_exec(struct bench_arm *arm, const char *sql)
{
    if (sqlite3_exec(arm->handle, sql, NULL, NULL, NULL) != SQLITE_OK) {
        return fail(arm, sql);
    }
    return 0;
}

static int sqlite_prepare(struct bench_arm *arm, const char *sql, void **out)
{
    sqlite3_stmt *stmt = NULL;

    if (sqlite3_prepare_v2(arm->handle, sql, -1, &stmt, NULL) != SQLITE_OK) {
        return fail(arm, sql);
    }
    *out = stmt;
    return 0;
}

static int read_row(sqlite3_stmt *stmt, struct bench_out *out)
{
    int count = sqlite3_column_count(stmt), i, rc = 0;

    for (i = 0; i < count && rc == 0; i++) {
        switch (sqlite3_column_type(stmt, i)) {
        case SQLITE_INTEGER:
            rc = bench_out_int(out, sqlite3_column_int64(stmt, i));
            break;
        case SQLITE_FLOAT:
            rc = bench_out_real(out, sqlite3_column_double(stmt, i));
            break;
        case SQLITE_NULL:
            rc = bench_out_null(out);
            break;
        default: {
            const char *text = (const char *)sqlite3_column_text(stmt, i);

            rc = bench_out_text(out, text,
                                (size_t)sqlite3_column_bytes(stmt, i));
            break;
        }
        }
        if (rc == 0) {
            rc = bench_out_column_end(out, i + 1 == count);
        }
    }
    return rc;
}

static int sqlite_run(struct bench_arm *arm, void *handle,
                      const struct bench_bind *binds, int count, bool write,
                      struct bench_out *out, int64_t *changes)
{
    sqlite3_stmt *stmt = handle;
    int i, rc = SQLITE_OK;

    for (i = 0; i < count && rc == SQLITE_OK; i++) {
        rc = binds[i].text != NULL
                 ? sqlite3_bind_text(stmt, i + 1, binds[i].text, -1,
                                     SQLITE_TRANSIENT)
                 : sqlite3_bind_int64(stmt, i + 1, binds[i].integer);
    }
    if (rc != SQLITE_OK) {
        sqlite3_reset(stmt);
        return fail(arm, sqlite3_sql(stmt));
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (read_row(stmt, out) != 0) {
            sqlite3_reset(stmt);
            snprintf(arm->error, sizeof arm->error, "out of memory");
            return -1;
        }
    }
    if (rc != SQLITE_DONE) {
        fail(arm, sqlite3_sql(stmt));
        sqlite3_reset(stmt);
        return -1;
    }
    if (write) {
        *changes = sqlite3_changes64(arm->handle);
    }
    sqlite3_reset(stmt);
    return 0;
}

static void sqlite_finalize(void *stmt)
{
    sqlite3_finalize(stmt);
}

static void sqlite_close(struct bench_arm *arm)
{
    sqlite3_close(arm->handle);
    arm->handle = NULL;
}

static const struct bench_arm_ops sqlite_ops = {
    .exec = sqlite_exec,
    .prepare = sqlite_prepare,
    .run = sqlite_run,
    .finalize = sqlite_finalize,
    .load = NULL,
    .close = sqlite_close,
};

int bench_sqlite_open(struct bench_arm *arm, const char *path, int cache_mib)
{
    sqlite3 *db = NULL;
    char sql[96];

    arm->name = "SQLite";
    arm->ops = &sqlite_ops;
    snprintf(arm->version, sizeof arm->version, "%s", sqlite3_libversion());
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        snprintf(arm->error, sizeof arm->error, "sqlite3_open %s: %s", path,
                 db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    arm->handle = db;
    snprintf(sql, sizeof sql, "PRAGMA journal_mode=WAL; PRAGMA cache_size=-%d",
             cache_mib * 1024);
    return sqlite_exec(arm, sql);
}

int bench_create_schema(struct bench_arm *arm, bool duckdb)
{
    const char *sql =
        duckdb ? "CREATE TABLE t (id BIGINT PRIMARY KEY, sec BIGINT, "
                 "k BIGINT, v BIGINT, bid BIGINT, payload VARCHAR);"
                 "CREATE TABLE b (id BIGINT PRIMARY KEY, label VARCHAR);"
                 "CREATE INDEX idx_t_sec ON t(sec);"
               : "CREATE TABLE t (id INTEGER PRIMARY KEY, sec INTEGER, "
                 "k INTEGER, v INTEGER, bid INTEGER, payload TEXT);"
                 "CREATE TABLE b (id INTEGER PRIMARY KEY, label TEXT);"
                 "CREATE INDEX idx_t_sec ON t(sec);";

    return arm->ops->exec(arm, sql);
}

/* b first (draws nothing), then t, each in one transaction with one
 * prepared INSERT, as musql's bulkInsert. */
int bench_load_generic(struct bench_arm *arm, int64_t n)
{
    struct bench_out sink = {0};
    struct bench_bind binds[6] = {{0}};
    struct bench_rng rng;
    struct bench_row row;
    void *stmt = NULL;
    char text[48];
    int64_t i, changes;
    int rc = -1;

    bench_rng_seed(&rng, BENCH_SEED);
    if (arm->ops->exec(arm, "BEGIN") != 0 ||
        arm->ops->prepare(arm, "INSERT INTO b(id, label) VALUES(?, ?)",
                          &stmt) != 0) {
        goto cleanup;
    }
    binds[1].text = text;
    for (i = 1; i <= n; i++) {
        binds[0].integer = i;
        snprintf(text, sizeof text, "label-%lld", (long long)i);
        if (arm->ops->run(arm, stmt, binds, 2, true, &sink, &changes) != 0) {
            goto cleanup;
        }
    }
    arm->ops->finalize(stmt);
    stmt = NULL;
    if (arm->ops->prepare(arm,
                          "INSERT INTO t(id, sec, k, v, bid, payload) "
                          "VALUES(?, ?, ?, ?, ?, ?)",
                          &stmt) != 0) {
        goto cleanup;
    }
    binds[1].text = NULL;
    binds[5].text = text;
    for (i = 1; i <= n; i++) {
        bench_gen_row(&rng, n, i, &row);
        binds[0].integer = row.id;
        binds[1].integer = row.sec;
        binds[2].integer = row.k;
        binds[3].integer = row.v;
        binds[4].integer = row.bid;
        snprintf(text, sizeof text, "row-%lld-payload", (long long)i);
        if (arm->ops->run(arm, stmt, binds, 6, true, &sink, &changes) != 0) {
            goto cleanup;
        }
    }
    rc = arm->ops->exec(arm, "COMMIT");
cleanup:
    if (stmt != NULL) {
        arm->ops->finalize(stmt);
    }
    return rc;
}
