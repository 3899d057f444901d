/* SPDX-License-Identifier: MIT
 *
 * difftest.h: what the parts of the differential tester share.
 *
 * The tester (difftest.c) runs the same SQL against libsqlite3 3.40, the
 * oracle, and against sinew's engine through its public API, and compares
 * every outcome: success or error (and the message), the columns, the rows,
 * and each value's storage class and bytes. difftest_gen.c writes the SQL
 * (random schemas, data and statements from a seeded generator) and
 * difftest_run.c executes and compares it.
 *
 * Determinism rule: a generated statement is compared row for row only
 * where SQLite defines the order (ORDER BY over every output column, with
 * ties between rows that compare equal treated as a set); otherwise the
 * rows are compared as a multiset. Statements whose result would depend on
 * SQLite's choice of index (group_concat order, UPDATE OR IGNORE order)
 * are written so that no index can be used.
 */
#ifndef SINEW_ENGINE_TEST_DIFFTEST_H
#define SINEW_ENGINE_TEST_DIFFTEST_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_test.h"
#include "engine.h"

#define DT_TABLES_MAX 3
#define DT_COLUMNS_MAX 6
#define DT_REPORT_MAX 3000 /* mismatches printed in full per run */
#define DT_KNOWN_MAX 256   /* open known cases difftest_known.txt may list */

/* A growable NUL-terminated string. */
struct dt_buf {
    char *data;  /* heap block, NUL-terminated */
    size_t size; /* bytes used, without the NUL */
    size_t cap;  /* bytes allocated */
};

void dt_buf_init(struct dt_buf *b);
void dt_buf_free(struct dt_buf *b);
void dt_buf_clear(struct dt_buf *b);
void dt_buf_add(struct dt_buf *b, const char *text);
void dt_buf_addf(struct dt_buf *b, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

struct dt_column {
    char name[4];     /* "a" .. "f" */
    const char *type; /* declared type, "" for none */
    int collate;      /* 0 none, 1 NOCASE, 2 RTRIM, 3 BINARY */
    bool is_ipk;      /* INTEGER PRIMARY KEY */
    bool is_unique;   /* column UNIQUE constraint */
    bool is_notnull;  /* NOT NULL (always with a DEFAULT) */
};

struct dt_table {
    char name[12];      /* "t1" .. "t3", or "excluded" */
    int column_count;   /* 1 .. DT_COLUMNS_MAX */
    bool has_multi_key; /* a composite UNIQUE or PRIMARY KEY */
    bool has_index;     /* any index SQLite could scan */
    struct dt_column columns[DT_COLUMNS_MAX];
};

struct dt_schema {
    int table_count;
    struct dt_table tables[DT_TABLES_MAX];
};

/* How a statement's rows are compared. */
enum dt_order {
    DT_ORDER_SET,   /* as a multiset */
    DT_ORDER_KEYED, /* in order, ties (equal under any collation) as sets */
    DT_ORDER_EXACT, /* row for row */
};

/* One generated statement and how to compare it. */
struct dt_stmt {
    struct dt_buf sql;
    enum dt_order order;
    bool has_limit;      /* LIMIT present: the last tie run is partial */
    bool has_offset;     /* OFFSET present: the first tie run is partial */
    bool is_dml;         /* compare the table afterwards */
    bool is_returning;   /* DML ... RETURNING (SQLite's IntReal quirk) */
    bool is_transaction; /* BEGIN, COMMIT, ROLLBACK */
    int table;           /* the table a DML statement changes */
};

struct dt_gen {
    struct common_test_rng rng;
    struct dt_schema schema;
    int depth_max;   /* of the statement being written */
    int depth_limit; /* of any statement: 1 .. depth_limit */
};

uint64_t dt_below(struct dt_gen *g, uint64_t bound);
bool dt_chance(struct dt_gen *g, unsigned percent);

/* Where an expression is written: which columns it may name. */
struct dt_expr_ctx {
    const struct dt_table *table; /* columns in scope, or NULL */
    const struct dt_table *outer; /* an outer query's table, or NULL */
    bool is_aggregate;            /* an aggregate query's result or HAVING */
    unsigned group_mask;   /* is_aggregate: columns grouped by (bare use) */
    bool is_order_visible; /* group_concat order would show an index */
    bool has_no_rowid;     /* the source is a subquery: no rowid */
    bool is_returning;     /* RETURNING: no BETWEEN, no CASE operand */
};

/* Statements with common table expressions (WITH, WITH RECURSIVE; also
 * before DELETE and UPDATE) and with window functions
 * (difftest_gen_more.c). */
void dt_gen_select_cte(struct dt_gen *g, struct dt_stmt *s);
void dt_gen_select_window(struct dt_gen *g, struct dt_stmt *s);

/* Writes one literal (any storage class, edge values included). */
void dt_gen_literal(struct dt_gen *g, struct dt_buf *out);

/* Writes a random expression of at most depth levels. */
void dt_gen_expr(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                 struct dt_buf *out);

/* Writes a WHERE condition; wrapped in CASE when the table has an index
 * SQLite might scan instead of the table (see is_order_visible). */
void dt_gen_where(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                  bool keep_rowid_order, struct dt_buf *out);

/* Writes CREATE TABLE statements for a fresh random schema into out, one
 * statement per line, and records the schema in g. */
void dt_gen_schema(struct dt_gen *g, struct dt_buf *out);

/* Writes one INSERT of random rows into table into out. */
void dt_gen_insert_data(struct dt_gen *g, int table, struct dt_buf *out);

/* Writes one random statement (a query or DML) into s. */
void dt_gen_statement(struct dt_gen *g, struct dt_stmt *s);

/* One value of a result row, as either engine returned it. */
struct dt_value {
    int type;    /* ENGINE_INTEGER .. ENGINE_NULL (same as SQLITE_*) */
    int64_t i;   /* ENGINE_INTEGER */
    double r;    /* ENGINE_FLOAT */
    char *bytes; /* ENGINE_TEXT, ENGINE_BLOB: heap copy */
    int size;    /* bytes */
};

struct dt_result {
    bool is_error;
    char errmsg[256];
    int column_count;
    int row_count;
    int row_cap;
    struct dt_value *values; /* row_count * column_count */
    int64_t changes;         /* rows changed by a DML statement */
};

void dt_result_free(struct dt_result *r);
void dt_run_sqlite(sqlite3 *db, const char *sql, struct dt_result *out);
void dt_run_engine(struct engine_db *db, const char *sql,
                   struct dt_result *out);

/* Compares two results of statement s; on a difference writes why into
 * why and returns false. */
bool dt_results_match(const struct dt_stmt *s, struct dt_result *lite,
                      struct dt_result *ours, char *why, size_t why_size);

/* Appends a readable rendering of r to out. */
void dt_result_print(const struct dt_result *r, struct dt_buf *out);

#endif /* SINEW_ENGINE_TEST_DIFFTEST_H */
