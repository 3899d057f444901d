/* SPDX-License-Identifier: MIT
 *
 * arm_sinew.c: the benchmark's sinew arm, through the public API
 * (engine/include/engine.h) on a database file: prepared statements bound,
 * stepped to the end with every value read, and reset, as an application
 * would run them. The bench opens it twice, on two files with the same
 * rows: once as it ships (JIT on) and once with PRAGMA jit = off, so the
 * JIT's gain is measured in the same run.
 */
#include <stdio.h>

#include "bench_engine.h"
#include "engine.h"

static int fail(struct bench_arm *arm, const char *what)
{
    snprintf(arm->error, sizeof arm->error, "%s: %s", what,
             engine_errmsg(arm->handle));
    return -1;
}

static int sinew_exec(struct bench_arm *arm, const char *sql)
{
    if (engine_exec(arm->handle, sql, NULL, NULL) != 0) {
        return fail(arm, sql);
    }
    return 0;
}

static int sinew_prepare(struct bench_arm *arm, const char *sql, void **out)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(arm->handle, sql, -1, &stmt, NULL) != 0) {
        return fail(arm, sql);
    }
    *out = stmt;
    return 0;
}

static int read_row(struct engine_stmt *stmt, struct bench_out *out)
{
    int count = engine_column_count(stmt), i, rc = 0;

    for (i = 0; i < count && rc == 0; i++) {
        switch (engine_column_type(stmt, i)) {
        case ENGINE_INTEGER:
            rc = bench_out_int(out, engine_column_int64(stmt, i));
            break;
        case ENGINE_FLOAT:
            rc = bench_out_real(out, engine_column_double(stmt, i));
            break;
        case ENGINE_NULL:
            rc = bench_out_null(out);
            break;
        default: {
            const char *text = engine_column_text(stmt, i);

            rc =
                bench_out_text(out, text, (size_t)engine_column_bytes(stmt, i));
            break;
        }
        }
        if (rc == 0) {
            rc = bench_out_column_end(out, i + 1 == count);
        }
    }
    return rc;
}

static int sinew_run(struct bench_arm *arm, void *handle,
                     const struct bench_bind *binds, int count, bool write,
                     struct bench_out *out, int64_t *changes)
{
    struct engine_stmt *stmt = handle;
    int i, rc = 0;

    for (i = 0; i < count && rc == 0; i++) {
        rc = binds[i].text != NULL
                 ? engine_bind_text(stmt, i + 1, binds[i].text, -1)
                 : engine_bind_int64(stmt, i + 1, binds[i].integer);
    }
    if (rc != 0) {
        engine_reset(stmt);
        return fail(arm, engine_sql(stmt));
    }
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        if (read_row(stmt, out) != 0) {
            engine_reset(stmt);
            snprintf(arm->error, sizeof arm->error, "out of memory");
            return -1;
        }
    }
    if (rc != ENGINE_DONE) {
        fail(arm, engine_sql(stmt));
        engine_reset(stmt);
        return -1;
    }
    if (write) {
        *changes = engine_changes(arm->handle);
    }
    engine_reset(stmt);
    return 0;
}

static void sinew_finalize(void *stmt)
{
    engine_finalize(stmt);
}

static void sinew_close(struct bench_arm *arm)
{
    engine_close(arm->handle);
    arm->handle = NULL;
}

static const struct bench_arm_ops sinew_ops = {
    .exec = sinew_exec,
    .prepare = sinew_prepare,
    .run = sinew_run,
    .finalize = sinew_finalize,
    .load = NULL,
    .close = sinew_close,
};

int bench_sinew_open(struct bench_arm *arm, const char *path, bool jit)
{
    struct engine_db *db = NULL;
    int rc;

    arm->name = jit ? "sinew (JIT on)" : "sinew (JIT off)";
    arm->ops = &sinew_ops;
    snprintf(arm->version, sizeof arm->version, "%s",
             jit ? "JIT on" : "JIT off");
    rc = engine_open(path, &db);
    if (rc != 0) {
        snprintf(arm->error, sizeof arm->error, "engine_open %s: %s", path,
                 engine_strerror(rc));
        return -1;
    }
    arm->handle = db;
    if (!jit && sinew_exec(arm, "PRAGMA jit = off") != 0) {
        sinew_close(arm);
        return -1;
    }
    return 0;
}

const char *bench_sinew_jit_served(void *stmt)
{
    switch (engine_stmt_jit_use(stmt)) {
    case ENGINE_JIT_COMPILED:
        return "compiled";
    case ENGINE_JIT_ROW_COUNT:
        return "row count";
    default:
        return "no";
    }
}

void bench_sinew_jit_stats(const struct bench_arm *arm, char *out, size_t size)
{
    struct engine_jit_stats stats;

    engine_jit_stats(arm->handle, &stats);
    snprintf(out, size,
             "%s handle, whole run: %llu kernel%s compiled in %.3f ms in "
             "all, %llu execution%s answered by the JIT, %llu left to the "
             "interpreter.",
             arm->name, (unsigned long long)stats.compiles,
             stats.compiles == 1 ? "" : "s", (double)stats.compile_ns / 1e6,
             (unsigned long long)stats.runs_compiled,
             stats.runs_compiled == 1 ? "" : "s",
             (unsigned long long)stats.runs_interpreted);
}
