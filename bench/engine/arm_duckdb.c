/* SPDX-License-Identifier: MIT
 *
 * arm_duckdb.c: the benchmark's DuckDB arm, through DuckDB's C API in the
 * libduckdb.so its npm package ships, loaded with dlopen() (so the bench
 * builds and runs without it: absent, the arm is skipped and the report
 * says so). One thread (SET threads = 1: the suite compares single cores),
 * a database file, prepared statements, results read chunk by chunk from
 * their vectors. Tables are filled with DuckDB's appender (its fast path;
 * prepared INSERTs would make loading a million rows take minutes), then
 * checkpointed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_engine.h"
#include "duck_min.h"

typedef void *duck_handle;

static struct {
    void *library;
    const char *(*library_version)(void);
    int (*create_config)(duck_handle *config);
    int (*set_config)(duck_handle config, const char *name, const char *value);
    void (*destroy_config)(duck_handle *config);
    int (*open_ext)(const char *path, duck_handle *db, duck_handle config,
                    char **error);
    void (*close)(duck_handle *db);
    int (*connect)(duck_handle db, duck_handle *con);
    void (*disconnect)(duck_handle *con);
    int (*query)(duck_handle con, const char *sql, struct duck_result *out);
    const char *(*result_error)(struct duck_result *result);
    void (*destroy_result)(struct duck_result *result);
    duck_idx (*column_count)(struct duck_result *result);
    int (*column_type)(struct duck_result *result, duck_idx column);
    duck_idx (*rows_changed)(struct duck_result *result);
    duck_handle (*fetch_chunk)(struct duck_result result);
    duck_idx (*chunk_size)(duck_handle chunk);
    duck_handle (*chunk_vector)(duck_handle chunk, duck_idx column);
    void *(*vector_data)(duck_handle vector);
    uint64_t *(*vector_validity)(duck_handle vector);
    void (*destroy_chunk)(duck_handle *chunk);
    int (*prepare)(duck_handle con, const char *sql, duck_handle *out);
    const char *(*prepare_error)(duck_handle stmt);
    int (*bind_int64)(duck_handle stmt, duck_idx index, int64_t value);
    int (*bind_varchar)(duck_handle stmt, duck_idx index, const char *value);
    int (*execute)(duck_handle stmt, struct duck_result *out);
    void (*destroy_prepare)(duck_handle *stmt);
    int (*appender_create)(duck_handle con, const char *schema,
                           const char *table, duck_handle *out);
    const char *(*appender_error)(duck_handle appender);
    int (*append_int64)(duck_handle appender, int64_t value);
    int (*append_varchar)(duck_handle appender, const char *value);
    int (*end_row)(duck_handle appender);
    int (*appender_destroy)(duck_handle *appender);
} duck;

struct duck_arm {
    duck_handle db, con;
};

#define SYMBOL(field, name)                                                    \
    {                                                                          \
        (void **)&duck.field, name                                             \
    }

static int load_library(const char *path, char *error, size_t size)
{
    const struct {
        void **slot;
        const char *name;
    } symbols[] = {
        SYMBOL(library_version, "duckdb_library_version"),
        SYMBOL(create_config, "duckdb_create_config"),
        SYMBOL(set_config, "duckdb_set_config"),
        SYMBOL(destroy_config, "duckdb_destroy_config"),
        SYMBOL(open_ext, "duckdb_open_ext"),
        SYMBOL(close, "duckdb_close"),
        SYMBOL(connect, "duckdb_connect"),
        SYMBOL(disconnect, "duckdb_disconnect"),
        SYMBOL(query, "duckdb_query"),
        SYMBOL(result_error, "duckdb_result_error"),
        SYMBOL(destroy_result, "duckdb_destroy_result"),
        SYMBOL(column_count, "duckdb_column_count"),
        SYMBOL(column_type, "duckdb_column_type"),
        SYMBOL(rows_changed, "duckdb_rows_changed"),
        SYMBOL(fetch_chunk, "duckdb_fetch_chunk"),
        SYMBOL(chunk_size, "duckdb_data_chunk_get_size"),
        SYMBOL(chunk_vector, "duckdb_data_chunk_get_vector"),
        SYMBOL(vector_data, "duckdb_vector_get_data"),
        SYMBOL(vector_validity, "duckdb_vector_get_validity"),
        SYMBOL(destroy_chunk, "duckdb_destroy_data_chunk"),
        SYMBOL(prepare, "duckdb_prepare"),
        SYMBOL(prepare_error, "duckdb_prepare_error"),
        SYMBOL(bind_int64, "duckdb_bind_int64"),
        SYMBOL(bind_varchar, "duckdb_bind_varchar"),
        SYMBOL(execute, "duckdb_execute_prepared"),
        SYMBOL(destroy_prepare, "duckdb_destroy_prepare"),
        SYMBOL(appender_create, "duckdb_appender_create"),
        SYMBOL(appender_error, "duckdb_appender_error"),
        SYMBOL(append_int64, "duckdb_append_int64"),
        SYMBOL(append_varchar, "duckdb_append_varchar"),
        SYMBOL(end_row, "duckdb_appender_end_row"),
        SYMBOL(appender_destroy, "duckdb_appender_destroy"),
    };
    size_t i;

    if (duck.library != NULL) {
        return 0;
    }
    duck.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (duck.library == NULL) {
        snprintf(error, size, "cannot load %s: %s", path, dlerror());
        return 1;
    }
    for (i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(duck.library, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            snprintf(error, size, "%s lacks %s", path, symbols[i].name);
            dlclose(duck.library);
            duck.library = NULL;
            return 1;
        }
    }
    return 0;
}

static int result_fail(struct bench_arm *arm, const char *what,
                       struct duck_result *result)
{
    const char *message = duck.result_error(result);

    snprintf(arm->error, sizeof arm->error, "%s: %s", what,
             message ? message : "failed");
    duck.destroy_result(result);
    return -1;
}

static int duck_exec(struct bench_arm *arm, const char *sql)
{
    struct duck_arm *state = arm->handle;
    struct duck_result result;

    if (duck.query(state->con, sql, &result) != DUCK_SUCCESS) {
        return result_fail(arm, sql, &result);
    }
    duck.destroy_result(&result);
    return 0;
}

static int duck_prepare(struct bench_arm *arm, const char *sql, void **out)
{
    struct duck_arm *state = arm->handle;
    duck_handle stmt = NULL;

    if (duck.prepare(state->con, sql, &stmt) != DUCK_SUCCESS) {
        snprintf(arm->error, sizeof arm->error, "%s: %s", sql,
                 stmt ? duck.prepare_error(stmt) : "prepare failed");
        duck.destroy_prepare(&stmt);
        return -1;
    }
    *out = stmt;
    return 0;
}

/* Integer values of every width, read as int64 (sum() of BIGINT is a
 * HUGEINT in DuckDB: shown as an integer while it fits). */
static int read_value(struct bench_out *out, int type, const void *data,
                      duck_idx row)
{
    switch (type) {
    case DUCK_TYPE_BOOLEAN:
        return bench_out_int(out, ((const uint8_t *)data)[row] != 0);
    case DUCK_TYPE_TINYINT:
        return bench_out_int(out, ((const int8_t *)data)[row]);
    case DUCK_TYPE_SMALLINT:
        return bench_out_int(out, ((const int16_t *)data)[row]);
    case DUCK_TYPE_INTEGER:
        return bench_out_int(out, ((const int32_t *)data)[row]);
    case DUCK_TYPE_BIGINT:
        return bench_out_int(out, ((const int64_t *)data)[row]);
    case DUCK_TYPE_UTINYINT:
        return bench_out_int(out, ((const uint8_t *)data)[row]);
    case DUCK_TYPE_USMALLINT:
        return bench_out_int(out, ((const uint16_t *)data)[row]);
    case DUCK_TYPE_UINTEGER:
        return bench_out_int(out, ((const uint32_t *)data)[row]);
    case DUCK_TYPE_UBIGINT:
        return bench_out_int(out, (int64_t)((const uint64_t *)data)[row]);
    case DUCK_TYPE_FLOAT:
        return bench_out_real(out, ((const float *)data)[row]);
    case DUCK_TYPE_DOUBLE:
        return bench_out_real(out, ((const double *)data)[row]);
    case DUCK_TYPE_HUGEINT: {
        const struct duck_hugeint *value =
            &((const struct duck_hugeint *)data)[row];
        bool fits = (value->upper == 0 && value->lower <= INT64_MAX) ||
                    (value->upper == -1 && value->lower > INT64_MAX);

        if (!fits) {
            return bench_out_text(out, "<hugeint out of range>", 22);
        }
        return bench_out_int(out, (int64_t)value->lower);
    }
    case DUCK_TYPE_VARCHAR: {
        const struct duck_string *value =
            &((const struct duck_string *)data)[row];

        return bench_out_text(
            out, value->length <= 12 ? value->inlined : value->rest.ptr,
            value->length);
    }
    default:
        return 1;
    }
}

static int read_result(struct bench_arm *arm, struct duck_result *result,
                       struct bench_out *out)
{
    duck_idx columns = duck.column_count(result), column, row, size;
    duck_handle chunk;
    int types[16];

    if (columns > 16) {
        snprintf(arm->error, sizeof arm->error, "too many result columns");
        return -1;
    }
    for (column = 0; column < columns; column++) {
        types[column] = duck.column_type(result, column);
    }
    while ((chunk = duck.fetch_chunk(*result)) != NULL) {
        size = duck.chunk_size(chunk);
        for (row = 0; row < size; row++) {
            for (column = 0; column < columns; column++) {
                duck_handle vector = duck.chunk_vector(chunk, column);
                uint64_t *valid = duck.vector_validity(vector);
                int rc;

                if (valid != NULL && !(valid[row / 64] >> (row % 64) & 1)) {
                    rc = bench_out_null(out);
                } else {
                    rc = read_value(out, types[column],
                                    duck.vector_data(vector), row);
                }
                if (rc == 0) {
                    rc = bench_out_column_end(out, column + 1 == columns);
                }
                if (rc != 0) {
                    snprintf(arm->error, sizeof arm->error,
                             rc > 0 ? "unsupported DuckDB result type %d"
                                    : "out of memory",
                             types[column]);
                    duck.destroy_chunk(&chunk);
                    return -1;
                }
            }
        }
        duck.destroy_chunk(&chunk);
    }
    return 0;
}

static int duck_run(struct bench_arm *arm, void *stmt,
                    const struct bench_bind *binds, int count, bool write,
                    struct bench_out *out, int64_t *changes)
{
    struct duck_result result;
    int i, rc = 0;

    for (i = 0; i < count && rc == DUCK_SUCCESS; i++) {
        rc = binds[i].text != NULL
                 ? duck.bind_varchar(stmt, (duck_idx)i + 1, binds[i].text)
                 : duck.bind_int64(stmt, (duck_idx)i + 1, binds[i].integer);
    }
    if (rc != DUCK_SUCCESS) {
        snprintf(arm->error, sizeof arm->error, "bind failed: %s",
                 duck.prepare_error(stmt));
        return -1;
    }
    if (duck.execute(stmt, &result) != DUCK_SUCCESS) {
        return result_fail(arm, "execute", &result);
    }
    if (write) {
        *changes = (int64_t)duck.rows_changed(&result);
    } else {
        rc = read_result(arm, &result, out);
    }
    duck.destroy_result(&result);
    return rc;
}

static void duck_finalize(void *stmt)
{
    duck_handle handle = stmt;

    duck.destroy_prepare(&handle);
}

static int append_fail(struct bench_arm *arm, duck_handle *appender)
{
    snprintf(arm->error, sizeof arm->error, "appender: %s",
             duck.appender_error(*appender));
    duck.appender_destroy(appender);
    return -1;
}

/* The same rows as bench_load_generic(), through the appender. */
static int duck_load(struct bench_arm *arm, int64_t n)
{
    struct duck_arm *state = arm->handle;
    duck_handle appender = NULL;
    struct bench_rng rng;
    struct bench_row row;
    char text[48];
    int64_t i;

    bench_rng_seed(&rng, BENCH_SEED);
    if (duck.appender_create(state->con, NULL, "b", &appender) !=
        DUCK_SUCCESS) {
        return append_fail(arm, &appender);
    }
    for (i = 1; i <= n; i++) {
        snprintf(text, sizeof text, "label-%lld", (long long)i);
        if (duck.append_int64(appender, i) != DUCK_SUCCESS ||
            duck.append_varchar(appender, text) != DUCK_SUCCESS ||
            duck.end_row(appender) != DUCK_SUCCESS) {
            return append_fail(arm, &appender);
        }
    }
    if (duck.appender_destroy(&appender) != DUCK_SUCCESS ||
        duck.appender_create(state->con, NULL, "t", &appender) !=
            DUCK_SUCCESS) {
        return append_fail(arm, &appender);
    }
    for (i = 1; i <= n; i++) {
        bench_gen_row(&rng, n, i, &row);
        snprintf(text, sizeof text, "row-%lld-payload", (long long)i);
        if (duck.append_int64(appender, row.id) != DUCK_SUCCESS ||
            duck.append_int64(appender, row.sec) != DUCK_SUCCESS ||
            duck.append_int64(appender, row.k) != DUCK_SUCCESS ||
            duck.append_int64(appender, row.v) != DUCK_SUCCESS ||
            duck.append_int64(appender, row.bid) != DUCK_SUCCESS ||
            duck.append_varchar(appender, text) != DUCK_SUCCESS ||
            duck.end_row(appender) != DUCK_SUCCESS) {
            return append_fail(arm, &appender);
        }
    }
    if (duck.appender_destroy(&appender) != DUCK_SUCCESS) {
        return append_fail(arm, &appender);
    }
    return duck_exec(arm, "CHECKPOINT");
}

static void duck_close(struct bench_arm *arm)
{
    struct duck_arm *state = arm->handle;

    if (state == NULL) {
        return;
    }
    duck.disconnect(&state->con);
    duck.close(&state->db);
    free(state);
    arm->handle = NULL;
}

static const struct bench_arm_ops duck_ops = {
    .exec = duck_exec,
    .prepare = duck_prepare,
    .run = duck_run,
    .finalize = duck_finalize,
    .load = duck_load,
    .close = duck_close,
};

int bench_duckdb_open(struct bench_arm *arm, const char *library,
                      const char *path)
{
    struct duck_arm *state;
    duck_handle config = NULL;
    char *error = NULL;
    int rc;

    arm->name = "DuckDB";
    arm->ops = &duck_ops;
    if (library == NULL) {
        snprintf(arm->error, sizeof arm->error, "no libduckdb.so given");
        return 1;
    }
    rc = load_library(library, arm->error, sizeof arm->error);
    if (rc != 0) {
        return rc;
    }
    snprintf(arm->version, sizeof arm->version, "%s", duck.library_version());
    state = calloc(1, sizeof *state);
    if (state == NULL || duck.create_config(&config) != DUCK_SUCCESS ||
        duck.set_config(config, "threads", "1") != DUCK_SUCCESS) {
        snprintf(arm->error, sizeof arm->error, "DuckDB configuration failed");
        goto fail;
    }
    if (duck.open_ext(path, &state->db, config, &error) != DUCK_SUCCESS) {
        snprintf(arm->error, sizeof arm->error, "duckdb_open %s: %s", path,
                 error ? error : "failed");
        goto fail;
    }
    duck.destroy_config(&config);
    if (duck.connect(state->db, &state->con) != DUCK_SUCCESS) {
        snprintf(arm->error, sizeof arm->error, "duckdb_connect failed");
        duck.close(&state->db);
        free(state);
        return -1;
    }
    arm->handle = state;
    return 0;
fail:
    if (config != NULL) {
        duck.destroy_config(&config);
    }
    free(state);
    return -1;
}
