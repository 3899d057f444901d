/* SPDX-License-Identifier: MIT
 *
 * engine_int.h: the structures the engine's files share: the database
 * handle, prepared statements, the running-statement context, the undo log,
 * and the operator interface of the vectorized executor.
 *
 * Plans: a statement is compiled once (prepare) into a tree of operators in
 * the statement's plan arena. Each operator produces batches (vector.h) on
 * demand: next() returns the following batch or NULL at the end; a batch
 * and the bytes its values point at stay valid until the next call to that
 * operator's next(), so an operator that keeps values (sort, aggregate)
 * copies them into its own arena.
 */
#ifndef SINEW_ENGINE_INT_H
#define SINEW_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "capture.h"
#include "common.h"
#include "engine.h"
#include "expr.h"
#include "graveyard.h"
#include "storage.h"
#include "table.h"
#include "vector.h"

struct engine_jit_arena;

#define ENGINE__ERRMSG_SIZE 512

/* ---- undo log: every change inside a transaction, newest last ---- */

enum engine_undo_kind {
    ENGINE_UNDO_INSERT,       /* a row was inserted at .slot */
    ENGINE_UNDO_DELETE,       /* a row (.rowid, .values) was deleted */
    ENGINE_UNDO_UPDATE,       /* .slot held (.rowid, .values) before */
    ENGINE_UNDO_CREATE_TABLE, /* .table was created */
    ENGINE_UNDO_DROP_TABLE,   /* .table was dropped (kept alive here) */
    ENGINE_UNDO_CREATE_INDEX, /* .table gained index .index_name */
    ENGINE_UNDO_DROP_INDEX,   /* .table lost the index whose CREATE INDEX
                                 text is .text (creation number .rowid) */
    ENGINE_UNDO_USER_VERSION, /* PRAGMA user_version was .rowid */
    ENGINE_UNDO_ALTER_TABLE,  /* ALTER TABLE made .table out of .replaced
                                 (kept alive here until COMMIT) */
    ENGINE_UNDO_CREATE_VIEW,  /* .view was created */
    ENGINE_UNDO_DROP_VIEW,    /* .view was dropped (kept alive here) */
    /* .trigger was created; .trigger was dropped (kept alive here): */
    ENGINE_UNDO_CREATE_TRIGGER,
    ENGINE_UNDO_DROP_TRIGGER,
};

/* A view (view.c): its name and CREATE VIEW text as sqlite_schema shows
 * it; its SELECT is parsed again from the text by each statement using
 * it. */
struct engine_view {
    char *name;        /* owned */
    char *sql;         /* owned */
    uint64_t sequence; /* creation order among schema objects */
    bool temporary;    /* CREATE TEMP VIEW: this handle's only */
    int expanding;     /* being planned now: a use inside it is circular */
};

struct engine_undo {
    enum engine_undo_kind kind;
    struct engine_table *table;
    size_t slot;
    int64_t rowid;
    struct engine_value *values;    /* copies in the log's arena */
    const char *text;               /* in the log's arena */
    struct engine_table *replaced;  /* ENGINE_UNDO_ALTER_TABLE */
    struct engine_view *view;       /* CREATE_VIEW and DROP_VIEW */
    struct engine_trigger *trigger; /* CREATE_TRIGGER and DROP_TRIGGER */
    size_t redo_size; /* the redo log's size before this change's entry */
};

/* One SAVEPOINT: ROLLBACK TO it undoes the log back to undo_mark. */
struct engine_savepoint {
    char *name;       /* owned; compared case-insensitively */
    size_t undo_mark; /* db->undo_count when it was taken */
};

struct engine_db {
    struct engine_table **tables; /* the catalog, in creation order */
    /* The JIT (jit_plan.h): PRAGMA jit = off, the executable arena its
     * code lives in (opened at the first compile), and its counters. */
    bool jit_off;
    struct engine_jit_arena *jit_arena;
    struct engine_jit_stats jit_stats;
    size_t table_count;
    size_t table_capacity;
    char errmsg[ENGINE__ERRMSG_SIZE];
    int errcode;
    int64_t changes;
    int64_t total_changes;
    int64_t last_insert_rowid;
    uint64_t random_state;
    bool in_transaction; /* BEGIN seen, no COMMIT/ROLLBACK yet */
    struct engine_undo *undo;
    size_t undo_count;
    size_t undo_capacity;
    struct engine_arena undo_arena;
    struct engine_view **views; /* view.c, in creation order */
    size_t view_count;
    size_t view_capacity; /* never shrinks: an undone DROP VIEW fits */
    /* Triggers (trigger.c), in creation order; the array never shrinks. */
    struct engine_trigger **triggers;
    size_t trigger_count;
    size_t trigger_capacity;
    /* What a trigger program reports to the statement that fired it
     * (trigger_exec.c): the action of the RAISE that stopped it (an enum
     * ast_conflict, AST_CONFLICT_DEFAULT when none), and the conflict mode
     * its failed step ended with. */
    int trigger_raise;
    int trigger_failed;
    int trigger_depth;        /* trigger programs being planned, nested */
    bool trigger_main;        /* the program being planned is a main (not TEMP)
                                 trigger's: TEMP views are out of its reach */
    uint64_t schema_version;  /* bumped by DDL: prepared plans re-prepare */
    uint64_t object_sequence; /* last creation number given to a table or
                                 index (sqlite_schema lists them in it) */
    struct engine_stmt *open_statements; /* list through next_open */
    /* Table bytes freed while another statement may view them
     * (graveyard.h). */
    struct engine_graveyard graveyard;
    /* Tables a rollback destroyed (undo.c: a CREATE or ALTER TABLE
     * undone): a statement running across one stops (step.c). */
    uint64_t tables_rolled_back;
    /* Durable storage (storage.h): the files, or NULL for ":memory:". */
    struct engine_storage *storage;
    /* The open transaction's changes, encoded as the WAL record's payload
     * (redo.c); kept only while capture is on. */
    struct common_buf redo;
    const struct engine_table *redo_table; /* table of the last row entry */
    bool capture;    /* changes are written to the redo log */
    int synchronous; /* PRAGMA synchronous, ENGINE__SYNC_* */
    /* This handle's view of a shared file database (storage_share.c): the
     * commit its tables reflect, the storage's visible_version then, and
     * whether it holds the write lock. */
    struct engine_wal_position seen;
    uint64_t seen_version;
    bool writing;
    bool txn_read;        /* the open transaction has run a statement: it
                             holds its snapshot until it ends */
    bool replaying;       /* applying committed records: no locks, no log */
    int busy_timeout_ms;  /* engine_busy_timeout() */
    int64_t user_version; /* PRAGMA user_version */
    /* The SAVEPOINT stack (savepoint.c), oldest first. It belongs to the
     * open transaction: BEGIN and a SAVEPOINT that starts a transaction
     * empty it first, so entries left by a transaction that ended another
     * way (an OR ROLLBACK conflict, a failed commit) are never used. */
    struct engine_savepoint *savepoints;
    size_t savepoint_count;
    size_t savepoint_capacity;
    bool savepoint_began; /* SAVEPOINT began the transaction: releasing
                             savepoints[0] commits it */
    /* ---- change capture (capture.h): the commit hook, the apply path,
     * system tables. Kept apart from the rest on purpose: only capture*.c
     * and system_table.c touch it. ---- */
    struct engine_capture change_capture;
};

/* ---- operators ---- */

struct engine_op;
struct engine_outer_frame;
struct engine_trigger_scope;
struct engine_outer_agg;
struct engine_semi;

struct engine_op_ops {
    /* Starts (or restarts) producing from the beginning. */
    int (*open)(struct engine_op *op, struct engine_exec *exec);
    /* Sets *out to the next batch, or NULL when there are no more. */
    int (*next)(struct engine_op *op, struct engine_exec *exec,
                struct engine_batch **out);
    /* Frees what the operator owns (plan arena memory excepted). */
    void (*destroy)(struct engine_op *op);
};

struct engine_op {
    const struct engine_op_ops *ops;
    struct engine_op *child;   /* input, or NULL for sources */
    struct engine_batch batch; /* output batch with owned vectors */
    struct engine_arena arena; /* bytes of the current output batch */
    size_t column_count;       /* output columns */
    void *state;               /* the operator's own data (plan arena) */
};

/* An uncorrelated subquery: run once per execution, its result cached. */
struct engine_subquery {
    struct engine_op *root;
    bool evaluated;
    bool is_set;               /* IN (SELECT ...): all values kept */
    struct engine_value value; /* scalar: first row's first column */
    bool exists;               /* at least one row */
    struct engine_value *set;  /* IN: distinct values of the first column */
    size_t set_count;
    bool set_has_null;
    enum engine_affinity affinity;   /* applied to values compared with it */
    enum engine_collation collation; /* IN: the comparison's collation (not
                                        the IN node's own, which a COLLATE
                                        around it sets) */
    struct engine_arena arena;       /* bytes of value and set */
    /* IN (SELECT c FROM t) that SQLite answers from t or an index on t.c,
     * t being the table the statement writes: it sees the statement's own
     * changes, so it runs again whenever t has changed since (see
     * mark_live_in in expr_compile.c). NULL otherwise. */
    const struct engine_table *live_table;
    uint64_t live_changes; /* live_table->change_count when last run */
    /* How a live IN probes the table after its first run: -2 by rowid, a
     * one-column UNIQUE key's index, or -1: by running again. */
    ptrdiff_t live_key;
    size_t live_column; /* the column a key probe reads */
    /* IN: the set hashed as its comparison sees the values, built at the
     * first probe of a large set (expr.c); NULL until then. Owned. */
    struct engine_rowset *lookup;
    /* A correlated subquery (expr_outer.c): the values it reads of the
     * enclosing query, each compiled against the enclosing scope
     * (outer_args, whose written form is outer_asts) and copied for every
     * enclosing row into *outer_slots[i], which its ENGINE_EXPR_OUTER
     * nodes read before it runs again. All in the plan arena. */
    struct engine_expr **outer_args;
    const struct ast_expr **outer_asts;
    struct engine_value **outer_slots;
    size_t outer_count;
    size_t outer_capacity;
    /* A correlated EXISTS answered from a hash of its table's rows
     * (expr_semi.c, semi.h), or NULL: it runs again for every row. */
    struct engine_semi *semi;
};

/* A running statement: what expressions and operators read. */
struct engine_exec {
    struct engine_db *db;
    struct engine_stmt *stmt;
    const struct engine_value *parameters; /* [1..parameter_count] */
    int parameter_count;
    struct engine_subquery **subqueries;
    size_t subquery_count;
    /* Sources (table scans, VALUES) hand out one row per batch, so that
     * every expression above them meets the rows one at a time, in SQLite's
     * order (see run_before_error in dml_exec.c). */
    bool row_at_a_time;
    int64_t now_jd_ms; /* 'now' of this step, 0 until read (func.h) */
};

struct engine_stmt {
    struct engine_db *db;
    struct engine_stmt *next_open; /* the db's list of open statements */
    char *sql;                     /* this statement's text, owned */
    struct engine_arena plan_arena;
    /* What plan_arena and its trigger programs' plan arenas may hold
     * together (a top-level statement's; arena.h) */
    struct engine_arena_budget plan_budget;
    struct ast_stmt *ast;    /* in plan_arena */
    uint64_t schema_version; /* of the catalog the plan was made for */
    struct engine_op *root;  /* result rows, or NULL */
    struct engine_op **ops;  /* every operator, for destroy */
    size_t op_count;
    size_t op_capacity;
    struct engine_subquery **subqueries;
    size_t subquery_count;
    /* The enclosing queries of the subquery being planned, innermost
     * first (expr_outer.c); NULL outside a subquery. */
    struct engine_outer_frame *outer;
    /* SELECTs an aggregate of a subquery belongs to (expr_outer.c): they
     * are planned as aggregate queries. */
    struct engine_outer_agg *outer_aggs;
    /* A step or WHEN of a trigger program (trigger_plan.c): NEW.x and
     * OLD.x read its parameters; NULL for every other statement. */
    const struct engine_trigger_scope *trigger;
    struct engine_expr **exprs; /* every expression root, for close */
    size_t expr_count;
    size_t expr_capacity;
    char **column_names; /* in plan_arena */
    int column_count;
    struct engine_value *parameters; /* [0..parameter_count], owned bytes */
    int parameter_count;
    struct engine_exec exec;
    /* execution state */
    int state;                   /* ENGINE__STMT_READY, _RUNNING, _DONE */
    enum engine_jit_use jit_use; /* this execution's (op_jit.c) */
    int last_rc;
    uint64_t tables_rolled_back;      /* db's when it started */
    struct engine_batch *batch;       /* current batch of result rows */
    uint32_t batch_index;             /* live-row position inside batch */
    uint32_t row;                     /* row index of the current result row */
    struct engine_arena result_arena; /* RETURNING and DML result rows */
    struct engine_arena column_arena; /* column_text conversions */
    struct engine_dml *dml;           /* INSERT/UPDATE/DELETE plan */
    /* A function call (not one SQLite codes inline: coalesce, ifnull, iif)
     * or LIKE/GLOB is compiled into the statement. SQLite then keeps a
     * statement journal (sqlite3VdbeAddFunctionCall calls sqlite3MayAbort),
     * so a runtime error undoes the statement even under OR FAIL. */
    bool calls_function;
    /* Constants SQLite computes before the statement reads a row
     * (prologue.c), evaluated when it starts; in plan_arena. */
    struct engine_expr **prologue;
    size_t prologue_count;
    struct engine_value *returning; /* RETURNING rows, row-major */
    size_t returning_count;
    size_t returning_capacity;
    size_t returning_next;              /* next row to hand out */
    const struct engine_value *current; /* current RETURNING row, or NULL */
};

#define ENGINE__STMT_READY 0
#define ENGINE__STMT_RUNNING 1
#define ENGINE__STMT_DONE 2

/* Whether e is a subquery expression (scalar, EXISTS, IN) that reads
 * columns of the query around it (expr_outer.c): its subquery's
 * outer_args do, and are walked with e's own args. */
static inline bool engine__expr_is_correlated(const struct engine_expr *e)
{
    return (e->op == ENGINE_EXPR_SUBQUERY || e->op == ENGINE_EXPR_EXISTS ||
            e->op == ENGINE_EXPR_IN_QUERY) &&
           e->u.subquery != NULL && e->u.subquery->outer_count > 0;
}

/* Frees a subquery's cached result (set, bytes, lookup) for another run. */
void engine__subquery_forget(struct engine_subquery *subquery);

/* The statement's prologue (prologue.c): found and compiled once its plan
 * is made, evaluated when it starts. 0, or the first error. */
int engine__prologue_plan(struct engine_stmt *stmt);
int engine__prologue_run(struct engine_stmt *stmt);

/* Records an error on the running statement's database. */
int engine__error(struct engine_exec *exec, int rc, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Destroys every table of db's catalog (its undo log is empty): a handle
 * about to load the files again. Prepared statements plan again. */
void engine__db_catalog_clear(struct engine_db *db);

/* Statements of db between their first step and their end (the one
 * stepping included). */
size_t engine__db_running_statements(const struct engine_db *db);

int engine__db_error(struct engine_db *db, int rc, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void engine__db_clear_error(struct engine_db *db);

/* Catalog (catalog.c). */
struct engine_table *engine__catalog_find(const struct engine_db *db,
                                          const char *name);
int engine__catalog_add(struct engine_db *db, struct engine_table *table);
void engine__catalog_remove(struct engine_db *db, struct engine_table *table);
/* Puts table `to` where `from` is in the catalog (same place). */
void engine__catalog_replace(struct engine_db *db, struct engine_table *from,
                             struct engine_table *to);

/* REINDEX (ddl_reindex.c): the name checked when the statement is
 * prepared, as SQLite does, and the indexes built again when it runs
 * (engine__execute_ddl()). */
int engine__reindex_plan(struct engine_stmt *stmt);
int engine__reindex(struct engine_stmt *stmt);

/* Views (view.c). */
/* The main (not TEMP) view called name, or NULL. */
/* An error when a new object (a TEMP view if temporary, else a main table
 * or view) would share its name with one of the other schema. */
int engine__view_shadow_check(struct engine_db *db, const char *name,
                              bool temporary);
struct engine_view *engine__view_find_main(const struct engine_db *db,
                                           const char *name);
struct engine_view *engine__view_find(const struct engine_db *db,
                                      const char *name);
/* CREATE VIEW and DROP VIEW, run by engine__execute_ddl(). */
int engine__view_create(struct engine_stmt *stmt);
int engine__view_drop(struct engine_stmt *stmt);
/* Takes a view out of the catalog (an undone CREATE VIEW frees it, a DROP
 * VIEW keeps it in its undo record) or puts it back (an undone DROP). */
void engine__view_remove(struct engine_db *db, struct engine_view *view);
void engine__view_restore(struct engine_db *db, struct engine_view *view);
void engine__view_destroy(struct engine_view *view);
/* Frees every view, or all but the TEMP ones: the handle closes, or its
 * catalog is loaded again. */
void engine__view_clear(struct engine_db *db, bool temporary_too);
/* A replicated schema change that changes nothing here: CREATE VIEW of a
 * view this database has with the same text, DROP VIEW of a view (or
 * table) it lacks. 0 or COMMON_ENOMEM. */
int engine__view_apply_is_noop(struct engine_db *db, const char *sql,
                               bool *noop);
/* The view's columns for PRAGMA table_info (view_info.c): names and
 * declared types (NULL: none), in stmt's plan arena; a query's errors. */
int engine__view_columns(struct engine_stmt *stmt, const char *name,
                         char ***names, const char ***types, size_t *count);

/* Triggers (trigger.c, trigger.h). CREATE TRIGGER and DROP TRIGGER, run
 * by engine__execute_ddl(); a dropped table's triggers go with it. */
struct engine_trigger {
    char *name;        /* owned */
    char *table;       /* owned: the table as written after ON */
    char *sql;         /* owned: sqlite_schema's text */
    uint64_t sequence; /* creation order among schema objects */
    enum ast_trigger_timing timing;
    enum ast_trigger_event event;
    int running;    /* its program is running: it does not fire inside */
    bool temporary; /* TEMP: the handle's own, neither logged nor written */
};
int engine__trigger_create(struct engine_stmt *stmt);
int engine__trigger_drop(struct engine_stmt *stmt);
int engine__trigger_drop_for_table(struct engine_db *db, const char *table);
/* Takes a trigger out of the catalog or puts it back (the undo log). */
void engine__trigger_remove(struct engine_db *db,
                            struct engine_trigger *trigger);
void engine__trigger_restore(struct engine_db *db,
                             struct engine_trigger *trigger);
void engine__trigger_destroy(struct engine_trigger *trigger);
/* Frees every trigger, or all but the TEMP ones: the handle closes, or
 * the catalog is loaded again. */
void engine__trigger_clear(struct engine_db *db, bool temporary_too);

/* "t.a, t.b": key columns as UNIQUE constraint errors name them. */
void engine__key_columns_text(const struct engine_table *table,
                              const size_t *columns, size_t count, char *out,
                              size_t size);

/* Undo log (undo.c). */
int engine__undo_record(struct engine_db *db, enum engine_undo_kind kind,
                        struct engine_table *table, size_t slot);
void engine__undo_rollback(struct engine_db *db, size_t to_count);
void engine__undo_commit(struct engine_db *db);

/* Redo log (redo.c): each change of the open transaction, recorded right
 * after its undo record, as the WAL will hold it. A no-op unless
 * db->capture. 0 or COMMON_ENOMEM. */
int engine__redo_insert(struct engine_db *db, const struct engine_table *table,
                        size_t slot);
/* A row at slot changed from (old_rowid, old_values): only the columns
 * whose value changed are recorded. */
int engine__redo_update(struct engine_db *db, const struct engine_table *table,
                        size_t slot, int64_t old_rowid,
                        const struct engine_value *old_values);
int engine__redo_delete(struct engine_db *db, const struct engine_table *table,
                        int64_t rowid);
int engine__redo_schema(struct engine_db *db, const char *sql);
int engine__redo_user_version(struct engine_db *db, int64_t value);
/* Forgets entries past size (a statement or savepoint undone). */
void engine__redo_truncate(struct engine_db *db, size_t size);
/* Applies a redo payload (one committed transaction) to db without
 * capturing it: ENGINE_ECORRUPT if it does not decode or does not fit the
 * database. */
int engine__redo_apply(struct engine_db *db, const uint8_t *payload,
                       size_t size);

/* Runs the CREATE INDEX statement sql (parsed again) on db: the undo of a
 * DROP INDEX, and loading a database's catalog. */
int engine__index_create_sql(struct engine_db *db, const char *sql,
                             uint64_t sequence);

/* Planning (plan_*.c): compiles stmt->ast into stmt->root. */
int engine__plan(struct engine_stmt *stmt);

/* Registers an operator or expression with its statement for cleanup. */
int engine__stmt_own_op(struct engine_stmt *stmt, struct engine_op *op);
int engine__stmt_own_expr(struct engine_stmt *stmt, struct engine_expr *e);
int engine__stmt_own_subquery(struct engine_stmt *stmt,
                              struct engine_subquery *subquery);

/* Operator constructors (op_*.c). Each allocates in stmt's plan arena,
 * registers itself, and returns NULL when out of memory. */
struct engine_op *engine__op_values(struct engine_stmt *stmt,
                                    struct engine_expr **exprs,
                                    size_t row_count, size_t column_count);
struct engine_op *engine__op_scan(struct engine_stmt *stmt,
                                  struct engine_table *table,
                                  const size_t *columns, size_t column_count);
/* Makes scan op (from engine__op_scan) read in descending rowid order. */
void engine__op_scan_reverse(struct engine_op *op);
/* The table a scan reads whole (no access path), its output columns'
 * table columns in *columns (SIZE_MAX: the rowid) and the zone terms it
 * skips blocks by in *zones (zone.h; NULL: none); NULL when op is not
 * such a scan. */
struct engine_zone_plan;
struct engine_table *
engine__op_scan_plain(const struct engine_op *op, const size_t **columns,
                      const struct engine_zone_plan **zones);
struct engine_op *engine__op_filter(struct engine_stmt *stmt,
                                    struct engine_op *child,
                                    struct engine_expr *predicate);
struct engine_op *engine__op_project(struct engine_stmt *stmt,
                                     struct engine_op *child,
                                     struct engine_expr **exprs, size_t count);
struct engine_op *engine__op_limit(struct engine_stmt *stmt,
                                   struct engine_op *child,
                                   struct engine_expr *limit,
                                   struct engine_expr *offset);
struct engine_op *engine__op_distinct(struct engine_stmt *stmt,
                                      struct engine_op *child,
                                      const enum engine_collation *collations,
                                      size_t key_count);

struct engine_sort_key {
    size_t column; /* input column */
    bool descending;
    bool nulls_first;
    enum engine_collation collation;
};
/* The order of rows a and b (one value per column) under keys: < 0, 0 or
 * > 0, NULLs placed by each key's nulls_first (op_sort.c). */
int engine__sort_compare(const struct engine_sort_key *keys, size_t key_count,
                         const struct engine_value *a,
                         const struct engine_value *b);
/* ORDER BY. With limit (offset may be NULL) it keeps only the first
 * limit + offset rows as it goes: top-N, in memory bounded by N. */
struct engine_op *engine__op_sort(struct engine_stmt *stmt,
                                  struct engine_op *child,
                                  const struct engine_sort_key *keys,
                                  size_t key_count, struct engine_expr *limit,
                                  struct engine_expr *offset);

/* The value of a LIMIT or OFFSET expression (OP_MustBeInt: "datatype
 * mismatch" unless it is an integer), evaluated in op's arena. */
int engine__limit_value(struct engine_op *op, struct engine_exec *exec,
                        struct engine_expr *expr, int64_t *out);

/* Aggregation: output columns are the group keys, then one column per
 * aggregate spec (a spec whose def is NULL is an unused slot and outputs
 * NULL), then the "bare" expressions, valued at the group's last row. With
 * sort_groups, groups come out in key order (SQLite's GROUP BY sorts),
 * key i descending where key_descending (NULL: none) says so. */
struct engine_aggregate_spec {
    const struct engine_aggregate_def *def;
    struct engine_expr **args; /* over the input */
    size_t arg_count;
    bool distinct;
    bool count_star;
    struct engine_expr *filter; /* or NULL */
    enum engine_collation collation;
};
struct engine_op *
engine__op_aggregate(struct engine_stmt *stmt, struct engine_op *child,
                     struct engine_expr **keys, size_t key_count,
                     const struct engine_aggregate_spec *aggregates,
                     size_t aggregate_count, struct engine_expr **bare,
                     size_t bare_count, bool sort_groups,
                     const bool *key_descending);

/* Compound SELECT (op_compound.c). concat: the rows of left, then those
 * of right (UNION ALL). set: UNION, INTERSECT or EXCEPT of left and right
 * as SQLite's ephemeral index computes them: rows equal under collations
 * (one per column, borrowed from the plan arena) are one, the last one
 * read kept, output ascending on every column. merge: left and right,
 * both sorted on keys, merged as SQLite's multiSelectOrderBy() does, a
 * row equal (under collations) to the previous output row dropped unless
 * kind is UNION ALL. */
struct engine_op *engine__op_concat(struct engine_stmt *stmt,
                                    struct engine_op *left,
                                    struct engine_op *right);
struct engine_op *engine__op_set(struct engine_stmt *stmt,
                                 enum ast_compound_op kind,
                                 struct engine_op *left,
                                 struct engine_op *right,
                                 const enum engine_collation *collations);
struct engine_op *
engine__op_merge(struct engine_stmt *stmt, enum ast_compound_op kind,
                 struct engine_op *left, struct engine_op *right,
                 const struct engine_sort_key *keys, size_t key_count,
                 const enum engine_collation *collations);
/* The rows of child, each INTEGER of a column whose is_real entry is set
 * (borrowed from the plan arena) made REAL: a compound read as a FROM
 * subquery. */
struct engine_op *engine__op_real_affinity(struct engine_stmt *stmt,
                                           struct engine_op *child,
                                           const bool *is_real);

/* Materialized rows: count rows of column_count values (row-major), the
 * values' bytes in the plan arena. */
struct engine_op *engine__op_rows(struct engine_stmt *stmt,
                                  const struct engine_value *values,
                                  size_t row_count, size_t column_count);

/* A new operator in the plan arena, registered with the statement: state
 * gets state_size zeroed bytes; the output batch has column_count vectors,
 * owned (allocated) or views to be pointed elsewhere by the operator. */
struct engine_op *engine__op_new(struct engine_stmt *stmt,
                                 const struct engine_op_ops *ops,
                                 struct engine_op *child, size_t state_size,
                                 size_t column_count, bool owned_columns);

/* Frees the output batch and arena: the destroy of most operators. */
void engine__op_destroy_default(struct engine_op *op);

/* Makes every owned output vector of op hold rows rows. */
int engine__op_reserve(struct engine_op *op, uint32_t rows);

/* Allocates the output batch of op with column_count VALUES vectors. */
int engine__op_init_batch(struct engine_op *op, size_t column_count);

/* Pulls every batch of a subquery's plan and caches its result. */
int engine__subquery_run(struct engine_subquery *subquery,
                         struct engine_exec *exec);

/* DML (dml_*.c): planned at prepare, run whole at the first step; the
 * RETURNING rows are kept in the statement and handed out by later steps. */
struct engine_dml;
int engine__plan_dml(struct engine_stmt *stmt);
int engine__execute_dml(struct engine_stmt *stmt);

/* DDL and transaction control (ddl.c), run at the first step. */
int engine__execute_ddl(struct engine_stmt *stmt);
/* ALTER TABLE (ddl_alter.c), from engine__execute_ddl(). */
int engine__alter_table(struct engine_stmt *stmt);

/* SAVEPOINT, RELEASE and ROLLBACK TO (savepoint.c), run at the first
 * step. */
int engine__execute_savepoint(struct engine_stmt *stmt);
/* Empties the savepoint stack (a transaction begins or ends). */
void engine__savepoint_clear(struct engine_db *db);
/* Frees the stack: at engine_close(). */
void engine__savepoint_close(struct engine_db *db);

/* PRAGMA and VACUUM (pragma.c). Planning names the result columns, and
 * rejects an unknown schema as SQLite's prepare does; running computes
 * the result rows into stmt->returning, handed out by the later steps. */
int engine__plan_pragma(struct engine_stmt *stmt);
int engine__execute_pragma(struct engine_stmt *stmt);

/* Statements (stmt.c, stmt_data.c). */
int engine__stmt_plan(struct engine_stmt *stmt);
void engine__stmt_clear_results(struct engine_stmt *stmt);
struct engine_value engine__stmt_value(const struct engine_stmt *stmt,
                                       int column);

#endif /* SINEW_ENGINE_INT_H */
