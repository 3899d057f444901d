/* SPDX-License-Identifier: MIT
 *
 * duck_min.h: our own declaration of the few DuckDB C API types the
 * benchmark uses. DuckDB's npm package (@duckdb/node-bindings-linux-x64,
 * pinned in duckdb/package-lock.json) ships libduckdb.so with the C API but
 * no header; the functions are looked up with dlsym() in arm_duckdb.c. The
 * one layout that must match is duckdb_result (48 bytes, passed by value to
 * duckdb_fetch_chunk), and the string and hugeint value layouts read out of
 * result vectors; all handles are one pointer. Written for DuckDB 1.5's
 * stable (v1.0) C API (reference peers.md section 2.2).
 */
#ifndef SINEW_BENCH_DUCK_MIN_H
#define SINEW_BENCH_DUCK_MIN_H

#include <stdint.h>

typedef uint64_t duck_idx;

#define DUCK_SUCCESS 0

/* duckdb_type values of the result columns the shapes produce. */
#define DUCK_TYPE_BOOLEAN 1
#define DUCK_TYPE_TINYINT 2
#define DUCK_TYPE_SMALLINT 3
#define DUCK_TYPE_INTEGER 4
#define DUCK_TYPE_BIGINT 5
#define DUCK_TYPE_UTINYINT 6
#define DUCK_TYPE_USMALLINT 7
#define DUCK_TYPE_UINTEGER 8
#define DUCK_TYPE_UBIGINT 9
#define DUCK_TYPE_FLOAT 10
#define DUCK_TYPE_DOUBLE 11
#define DUCK_TYPE_HUGEINT 16
#define DUCK_TYPE_VARCHAR 17

struct duck_result {
    duck_idx column_count, row_count, rows_changed;
    void *columns;
    char *error_message;
    void *internal_data;
};

struct duck_hugeint {
    uint64_t lower;
    int64_t upper;
};

/* A VARCHAR value (16 bytes): a 4-byte length, then up to 12 bytes
 * inline, else a 4-byte prefix and, at offset 8, a pointer to the bytes. */
struct duck_string {
    uint32_t length;
    char inlined[4];
    union {
        char inlined[8];
        const char *ptr;
    } rest;
};

#endif
