/* SPDX-License-Identifier: MIT
 *
 * ast.h: the parse tree of one SQL statement, as the parser produces it and
 * the planner consumes it. Everything (nodes, identifier strings, literal
 * bytes) lives in the arena the parse was given; identifiers are already
 * unquoted ("a""b" -> a"b, [x] -> x, `y` -> y) and NUL-terminated.
 *
 * Positions: every node records the byte offset in the SQL text where it
 * starts, for error messages.
 *
 * Lists are arrays with a count (the parser sizes them), never linked.
 */
#ifndef SINEW_ENGINE_AST_H
#define SINEW_ENGINE_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "value.h"

struct ast_select;

enum ast_expr_kind {
    AST_LITERAL,   /* .literal: INTEGER, FLOAT, TEXT, BLOB or NULL */
    AST_BOOLEAN,   /* TRUE / FALSE keywords: .literal is INTEGER 1 / 0 */
    AST_PARAMETER, /* .parameter */
    AST_COLUMN,    /* .column: [table.]name */
    AST_UNARY,     /* .unary */
    AST_BINARY,    /* .binary */
    AST_COLLATE,   /* .collate: operand COLLATE name */
    AST_CAST,      /* .cast */
    AST_CASE,      /* .case_ */
    AST_BETWEEN,   /* .between */
    AST_LIKE,      /* .like: LIKE, GLOB (also MATCH, REGEXP: parsed only) */
    AST_IN_LIST,   /* .in_list */
    AST_IN_SELECT, /* .in_select */
    AST_EXISTS,    /* .subquery */
    AST_SUBQUERY,  /* .subquery: a scalar subquery */
    AST_FUNCTION,  /* .function: also aggregates; resolved by the planner */
    AST_IS_NULL,   /* .unary.operand IS NULL / ISNULL */
    AST_NOT_NULL,  /* .unary.operand IS NOT NULL / NOTNULL / NOT NULL */
    AST_RAISE,     /* .raise: only inside a trigger program */
};

enum ast_unary_op {
    AST_NEGATE, /* -x */
    AST_PLUS,   /* +x: no-op, but strips affinity and collation as SQLite */
    AST_BIT_NOT,
    AST_NOT,
};

/* Binary operators, loosest-binding first (SQLite's precedence:
 * OR < AND < NOT < = == != <> IS ... < < <= > >= < & | << >> < + - <
 * * / % < || and -> ->>). */
enum ast_binary_op {
    AST_OR,
    AST_AND,
    AST_EQ, /* = and == */
    AST_NE, /* != and <> */
    AST_IS,
    AST_IS_NOT, /* IS NOT, also IS DISTINCT FROM */
    AST_LT,
    AST_LE,
    AST_GT,
    AST_GE,
    AST_BIT_AND,
    AST_BIT_OR,
    AST_SHIFT_LEFT,
    AST_SHIFT_RIGHT,
    AST_ADD,
    AST_SUBTRACT,
    AST_MULTIPLY,
    AST_DIVIDE,
    AST_REMAINDER,
    AST_CONCAT,
};

enum ast_like_kind {
    AST_LIKE_LIKE,
    AST_LIKE_GLOB,
    AST_LIKE_MATCH,
    AST_LIKE_REGEXP,
};

struct ast_expr;
struct ast_cte;
struct ast_window;

struct ast_expr_list {
    struct ast_expr **items;
    size_t count;
};

struct ast_expr {
    enum ast_expr_kind kind;
    size_t position;  /* byte offset of the node's first token */
    const char *text; /* the node's SQL text, exactly as written; for naming
                         result columns ("a+1", "count(*)") */
    bool is_false;    /* an AND the parser folded to the integer 0 because
                         an operand is the literal 0 (see infix_parse) */
    union {
        struct engine_value literal; /* text/blob bytes in the arena */
        struct {
            int index;        /* 1-based parameter number */
            const char *name; /* ":a", "@a", "$a", "?7"; NULL for plain ? */
        } parameter;
        struct {
            const char *table; /* NULL when unqualified */
            const char *name;
        } column;
        struct {
            enum ast_unary_op op;
            struct ast_expr *operand;
        } unary;
        struct {
            enum ast_binary_op op;
            struct ast_expr *left;
            struct ast_expr *right;
        } binary;
        struct {
            struct ast_expr *operand;
            const char *name; /* as written; the planner resolves it */
        } collate;
        struct {
            struct ast_expr *operand;
            const char *type_name; /* as written, e.g. "VARCHAR(10)" */
        } cast;
        struct {
            struct ast_expr *operand;   /* CASE x WHEN ...; NULL if absent */
            struct ast_expr_list whens; /* conditions or values */
            struct ast_expr_list thens; /* same count as whens */
            struct ast_expr *else_;     /* NULL if absent */
        } case_;
        struct {
            bool negated; /* NOT BETWEEN */
            struct ast_expr *operand;
            struct ast_expr *low;
            struct ast_expr *high;
        } between;
        struct {
            enum ast_like_kind like_kind;
            bool negated;
            struct ast_expr *operand; /* the text: x LIKE pattern */
            struct ast_expr *pattern;
            struct ast_expr *escape; /* NULL if absent */
        } like;
        struct {
            bool negated;
            struct ast_expr *operand;
            struct ast_expr_list items; /* may be empty: x IN () */
        } in_list;
        struct {
            bool negated;
            struct ast_expr *operand;
            struct ast_select *select;
        } in_select;
        struct {
            struct ast_select *select; /* EXISTS and scalar subqueries */
        } subquery;
        struct {
            const char *name;          /* as written */
            struct ast_expr_list args; /* empty for f() and count(*) */
            bool star;                 /* count(*) */
            bool distinct;             /* f(DISTINCT x) */
            struct ast_expr *filter;   /* FILTER (WHERE ...); NULL if none */
            struct ast_window *over;   /* OVER ...: a window function call;
                                          NULL for a plain call */
        } function;
        struct {
            int action;          /* enum ast_conflict: IGNORE, ROLLBACK,
                                    ABORT or FAIL */
            const char *message; /* NULL for RAISE(IGNORE) */
        } raise;
    } u;
};

/* ---- SELECT ---- */

struct ast_result_column {
    enum {
        AST_RESULT_EXPR,       /* .expr [AS alias] */
        AST_RESULT_STAR,       /* * */
        AST_RESULT_TABLE_STAR, /* table.* */
    } kind;
    struct ast_expr *expr; /* AST_RESULT_EXPR */
    const char *alias;     /* NULL if none */
    const char *table;     /* AST_RESULT_TABLE_STAR */
    size_t position;
};

/* How a FROM item joins the items before it (sqlite3JoinType): a FROM
 * clause is a left-deep chain, item i joined to items 0..i-1. */
enum ast_join_kind {
    AST_JOIN_FIRST = 0, /* the first item: no join */
    AST_JOIN_INNER,     /* a comma, JOIN, INNER JOIN, CROSS JOIN */
    AST_JOIN_LEFT,      /* LEFT [OUTER] JOIN */
    AST_JOIN_RIGHT,     /* RIGHT [OUTER] JOIN */
    AST_JOIN_FULL,      /* FULL [OUTER] JOIN */
};

/* INDEXED BY name or NOT INDEXED after a table name (indexed_opt in
 * SQLite's parse.y): which indexes a read of the table may use. */
struct ast_index_hint {
    const char *indexed_by; /* only this index; NULL if not written */
    bool not_indexed;       /* no index, only rowid lookups */
};

/* One FROM item and its join to the items before it. */
struct ast_from_item {
    const char *table;         /* a table name; NULL for a subquery */
    struct ast_select *select; /* a subquery in parentheses; else NULL */
    const char *alias;         /* NULL if none */
    size_t position;
    enum ast_join_kind join;    /* AST_JOIN_FIRST for item 0 only */
    bool natural;               /* NATURAL ... JOIN */
    struct ast_expr *on;        /* ON expr; NULL if absent */
    const char **using_columns; /* USING (a, b); NULL if absent */
    size_t using_count;
    struct ast_index_hint hint;
    /* Set by the planner's WITH pass (plan_cte_bind.c) when the name is a
     * common table expression: then select is its body, alias its name
     * unless one is written, and table NULL; or, recursive, the item reads
     * the row of cte's own recursion (select and table NULL). */
    struct ast_cte *cte;
    bool recursive;
    /* A table-valued function call, table(args) (parse.y's "nm dbnm LP
     * exprlist RP"): table is the function's name (func_json_each.c). */
    bool function;
    struct ast_expr_list args;
};

/* One common table expression of a WITH clause (parse.y's wqitem):
 * name [(columns)] AS [[NOT] MATERIALIZED] (select). */
struct ast_cte {
    const char *name;
    const char **columns; /* the column list; NULL if none */
    size_t column_count;
    struct ast_select *select;
    int materialized; /* 1 MATERIALIZED, -1 NOT MATERIALIZED, 0 neither: a
                         hint that changes no deterministic result */
    size_t position;
    /* The planner's (plan_cte_bind.c): whether the body is bound yet, and
     * how many of its rightmost terms read the recursion's row. */
    int bind_state;
    const char *bind_error; /* while its body is bound: the error a
                               reference to it there gives */
    size_t recursive_terms;
    void *planning; /* plan_cte.c's, while it plans the recursion */
};

/* WITH [RECURSIVE] cte, ...: on a statement's or subquery's SELECT (the
 * top node of a compound) and on INSERT, UPDATE and DELETE. */
struct ast_with {
    bool recursive; /* written; SQLite recurses without it too */
    struct ast_cte *ctes;
    size_t count;
};

struct ast_order_item {
    struct ast_expr *expr; /* may be an AST_COLLATE node */
    bool descending;
    enum {
        AST_NULLS_DEFAULT, /* NULLs first ascending, last descending */
        AST_NULLS_FIRST,
        AST_NULLS_LAST,
    } nulls;
};

/* ---- window definitions (SQLite's struct Window, parse.y windowdefn) ---- */

enum ast_frame_type {
    AST_FRAME_RANGE, /* also the default frame */
    AST_FRAME_ROWS,
    AST_FRAME_GROUPS,
};

enum ast_bound_kind {
    AST_BOUND_UNBOUNDED_PRECEDING,
    AST_BOUND_PRECEDING, /* offset PRECEDING */
    AST_BOUND_CURRENT_ROW,
    AST_BOUND_FOLLOWING, /* offset FOLLOWING */
    AST_BOUND_UNBOUNDED_FOLLOWING,
};

enum ast_exclude {
    AST_EXCLUDE_NO_OTHERS = 0, /* also when not written */
    AST_EXCLUDE_CURRENT_ROW,
    AST_EXCLUDE_GROUP,
    AST_EXCLUDE_TIES,
};

struct ast_frame_bound {
    enum ast_bound_kind kind;
    struct ast_expr *offset; /* PRECEDING and FOLLOWING only */
};

/* OVER name (is_reference: only .base is set), OVER ([base] ...) or a
 * WINDOW clause's "name AS ([base] ...)". */
struct ast_window {
    const char *name;  /* WINDOW name AS (...); NULL otherwise */
    const char *base;  /* the window named first inside the parentheses,
                          or after OVER; NULL if none */
    bool is_reference; /* OVER name, without parentheses */
    struct ast_expr_list partition_by;
    struct ast_order_item *order_by;
    size_t order_by_count;
    bool has_frame; /* a frame was written (else the default one) */
    enum ast_frame_type frame_type;
    struct ast_frame_bound start;
    struct ast_frame_bound end;
    enum ast_exclude exclude;
    size_t position;
};

/* The most SELECTs one compound may chain: SQLite's default
 * SQLITE_MAX_COMPOUND_SELECT ("too many terms in compound SELECT"). */
#define ENGINE_MAX_COMPOUND_TERMS 500

/* The operator of a compound SELECT (parse.y's multiselect_op). */
enum ast_compound_op {
    AST_COMPOUND_NONE = 0, /* a simple SELECT or VALUES */
    AST_COMPOUND_UNION,
    AST_COMPOUND_UNION_ALL,
    AST_COMPOUND_INTERSECT,
    AST_COMPOUND_EXCEPT,
};

struct ast_select {
    /* A compound SELECT: compound is not AST_COMPOUND_NONE, left (itself
     * compound or simple: chains are left-associative, as in SQLite) and
     * right (a simple SELECT or VALUES) are its operands; order_by, limit
     * and offset apply to the whole, and every other field is empty
     * (columns NULL, column_count 0, values NULL). */
    enum ast_compound_op compound;
    struct ast_select *left;
    struct ast_select *right;
    bool distinct; /* SELECT DISTINCT (ALL: false) */
    struct ast_result_column *columns;
    size_t column_count;        /* >= 1 */
    struct ast_from_item *from; /* NULL when there is no FROM */
    size_t from_count;
    struct ast_expr *where; /* NULL if absent */
    struct ast_expr_list group_by;
    struct ast_expr *having;    /* NULL if absent */
    struct ast_window *windows; /* WINDOW clause definitions, in order */
    size_t window_count;
    /* VALUES (...), (...) as a statement or subquery: columns is NULL, and
     * values holds value_row_count rows of value_column_count expressions
     * each (row-major). */
    struct ast_expr **values;
    size_t value_row_count;
    size_t value_column_count;
    struct ast_order_item *order_by;
    size_t order_by_count;
    struct ast_expr *limit;  /* NULL if absent */
    struct ast_expr *offset; /* NULL if absent; LIMIT a, b sets
                                offset = a, limit = b */
    struct ast_with *with;   /* NULL if none */
    size_t position;
    /* "SELECT * FROM <items>" made of a parenthesized join with an alias,
     * ON or USING, or after other FROM items (parse.y's SF_NestedFrom):
     * its columns keep their tables' names (plan_nested.c). */
    bool nested;
};

/* ---- CREATE TABLE / INDEX, DROP ---- */

enum ast_conflict {
    AST_CONFLICT_DEFAULT = 0, /* none written: ABORT */
    AST_CONFLICT_ROLLBACK,
    AST_CONFLICT_ABORT,
    AST_CONFLICT_FAIL,
    AST_CONFLICT_IGNORE,
    AST_CONFLICT_REPLACE,
};

struct ast_column_def {
    const char *name;
    const char *type_name; /* declared type as written ("VARCHAR(10)"),
                              NULL when none */
    bool primary_key;
    bool primary_key_descending;
    bool autoincrement;
    enum ast_conflict primary_key_conflict;
    bool not_null;
    enum ast_conflict not_null_conflict;
    bool unique;
    enum ast_conflict unique_conflict;
    struct ast_expr *default_value; /* NULL if none */
    const char *collation;          /* NULL if none */
    struct ast_expr_list checks;    /* CHECK (...) column constraints */
    size_t position;
};

/* A PRIMARY KEY (...) or UNIQUE (...) table constraint, or a CREATE INDEX's
 * column list. */
struct ast_indexed_column {
    struct ast_expr *expr; /* a column name (AST_COLUMN) or, for indexes,
                              any expression; may be AST_COLLATE */
    bool descending;
};

struct ast_table_constraint {
    enum {
        AST_CONSTRAINT_PRIMARY_KEY,
        AST_CONSTRAINT_UNIQUE,
        AST_CONSTRAINT_CHECK,
    } kind;
    const char *name;                   /* CONSTRAINT name; NULL if none */
    struct ast_indexed_column *columns; /* PRIMARY KEY and UNIQUE */
    size_t column_count;
    enum ast_conflict conflict;
    struct ast_expr *check; /* CHECK */
};

struct ast_create_table {
    const char *name;
    bool if_not_exists;
    bool temporary;
    struct ast_column_def *columns;
    size_t column_count;
    struct ast_table_constraint *constraints;
    size_t constraint_count;
    bool without_rowid;
    bool strict;
    struct ast_select *as_select; /* CREATE TABLE t AS SELECT: columns NULL */
};

struct ast_create_index {
    const char *name;
    const char *table;
    bool unique;
    bool if_not_exists;
    struct ast_indexed_column *columns;
    size_t column_count;
    struct ast_expr *where; /* partial index; NULL if none */
};

/* CREATE [TEMP] VIEW [IF NOT EXISTS] [schema.]name [(columns)] AS select. */
struct ast_create_view {
    const char *name;
    bool if_not_exists;
    bool temporary;
    const char **columns; /* the column list; count 0 if none */
    size_t column_count;
    struct ast_select *select;
    size_t name_offset; /* where the unqualified name starts in the text:
                           sqlite_schema's text is "CREATE VIEW " and the
                           statement from there (sqlite3CreateView) */
};

/* CREATE [TEMP] TRIGGER [IF NOT EXISTS] [schema.]name [BEFORE|AFTER|
 * INSTEAD OF] DELETE|INSERT|UPDATE [OF columns] ON table [FOR EACH ROW]
 * [WHEN expr] BEGIN step; ... END (trigger.c). */
enum ast_trigger_timing {
    AST_TRIGGER_BEFORE, /* also when no timing is written */
    AST_TRIGGER_AFTER,
    AST_TRIGGER_INSTEAD_OF,
};

struct ast_stmt;

struct ast_create_trigger {
    const char *name;
    bool if_not_exists;
    bool temporary;
    enum ast_trigger_timing timing;
    enum ast_trigger_event {
        AST_TRIGGER_DELETE,
        AST_TRIGGER_INSERT,
        AST_TRIGGER_UPDATE,
    } event;
    const char **columns; /* UPDATE OF columns; count 0 if none */
    size_t column_count;
    const char *table;
    const char *schema;       /* "main" or "temp" before the name; or NULL */
    const char *table_schema; /* the same before the table */
    struct ast_expr *when;    /* NULL if absent */
    struct ast_stmt **steps;  /* INSERT, UPDATE, DELETE or SELECT */
    size_t step_count;
    size_t name_offset; /* where the unqualified name starts in the text:
                           sqlite_schema's text is "CREATE TRIGGER " and the
                           statement from there to END (sqlite3FinishTrigger) */
    size_t text_end;    /* just past END */
};

struct ast_drop {
    const char *name;
    bool if_exists;
    const char *schema; /* DROP VIEW schema.name; NULL if not written */
};

/* ALTER TABLE [schema.]table ... (SQLite's four forms). */
enum ast_alter_kind {
    AST_ALTER_RENAME_TABLE,  /* RENAME TO new_name */
    AST_ALTER_RENAME_COLUMN, /* RENAME [COLUMN] column TO new_name */
    AST_ALTER_ADD_COLUMN,    /* ADD [COLUMN] column_def */
    AST_ALTER_DROP_COLUMN,   /* DROP [COLUMN] column */
};

struct ast_alter_table {
    enum ast_alter_kind kind;
    const char *schema; /* NULL when not written */
    const char *table;
    const char *column;               /* RENAME COLUMN, DROP COLUMN */
    const char *column_text;          /* that column as written, for messages */
    const char *new_name;             /* RENAME */
    bool new_name_quoted;             /* written quoted ("x", [x], `x`, 'x') */
    struct ast_column_def column_def; /* ADD COLUMN */
    size_t column_def_end; /* ADD COLUMN: just past its text, comments in */
};

/* ---- INSERT / UPDATE / DELETE ---- */

struct ast_assignment {
    const char **columns; /* one name, or several for (a, b) = (...) */
    size_t column_count;
    struct ast_expr *value;
};

struct ast_upsert {
    const char **target_columns; /* ON CONFLICT (a, b); count 0 if none */
    size_t target_column_count;
    struct ast_expr *target_where;
    bool do_nothing; /* DO NOTHING; else DO UPDATE */
    struct ast_assignment *assignments;
    size_t assignment_count;
    struct ast_expr *where; /* DO UPDATE ... WHERE; NULL if none */
};

struct ast_returning {
    struct ast_result_column *columns; /* NULL when there is no RETURNING */
    size_t column_count;
};

struct ast_insert {
    enum ast_conflict conflict; /* INSERT OR ... / REPLACE INTO */
    const char *table;
    const char *alias;    /* INSERT INTO t AS x; NULL if none */
    const char **columns; /* column list; count 0 if none */
    size_t column_count;
    struct ast_select *select;  /* VALUES rows or a SELECT; NULL for
                                   DEFAULT VALUES */
    struct ast_upsert *upserts; /* ON CONFLICT clauses, in order */
    size_t upsert_count;
    struct ast_returning returning;
    struct ast_with *with; /* WITH before INSERT; NULL if none */
};

struct ast_update {
    enum ast_conflict conflict;
    const char *table;
    const char *alias;
    struct ast_index_hint hint;
    struct ast_assignment *assignments;
    size_t assignment_count;
    struct ast_expr *where;
    struct ast_returning returning;
    struct ast_with *with; /* WITH before UPDATE; NULL if none */
};

struct ast_delete {
    const char *table;
    const char *alias;
    struct ast_index_hint hint;
    struct ast_expr *where;
    struct ast_returning returning;
    struct ast_with *with; /* WITH before DELETE; NULL if none */
};

/* ---- statements ---- */

enum ast_stmt_kind {
    AST_STMT_SELECT,
    AST_STMT_CREATE_TABLE,
    AST_STMT_DROP_TABLE,
    AST_STMT_CREATE_INDEX,
    AST_STMT_DROP_INDEX,
    AST_STMT_INSERT,
    AST_STMT_UPDATE,
    AST_STMT_DELETE,
    AST_STMT_BEGIN,
    AST_STMT_COMMIT, /* COMMIT and END */
    AST_STMT_ROLLBACK,
    AST_STMT_SAVEPOINT,      /* .savepoint */
    AST_STMT_RELEASE,        /* .savepoint: RELEASE [SAVEPOINT] nm */
    AST_STMT_ROLLBACK_TO,    /* .savepoint: ROLLBACK [TRANSACTION] TO ... */
    AST_STMT_PRAGMA,         /* .pragma */
    AST_STMT_VACUUM,         /* .vacuum */
    AST_STMT_REINDEX,        /* .reindex */
    AST_STMT_ALTER_TABLE,    /* .alter_table */
    AST_STMT_CREATE_VIEW,    /* .create_view */
    AST_STMT_DROP_VIEW,      /* .drop */
    AST_STMT_CREATE_TRIGGER, /* .create_trigger */
    AST_STMT_DROP_TRIGGER,   /* .drop */
};

/* PRAGMA [schema.]name [= value | (value)]. The value is the text SQLite's
 * sqlite3Pragma() receives: a name or string unquoted, a number as written
 * (a leading '+' dropped, a '-' kept), ON, DELETE or DEFAULT as written. */
struct ast_pragma {
    const char *schema;      /* NULL when not written */
    const char *schema_text; /* the schema as written, for messages */
    const char *name;
    const char *value; /* NULL when none */
};

struct ast_savepoint {
    const char *name; /* unquoted */
};

struct ast_vacuum {
    const char *schema;      /* VACUUM nm; NULL when not written */
    const char *schema_text; /* the schema as written, for messages */
};

/* REINDEX [[schema.]name]: every index, those of a collation or table,
 * or one index. */
struct ast_reindex {
    const char *schema; /* NULL when not written */
    const char *name;   /* NULL: every index */
};

struct ast_stmt {
    enum ast_stmt_kind kind;
    size_t position;
    union {
        struct ast_select *select;
        struct ast_create_table create_table;
        struct ast_drop drop; /* DROP TABLE, DROP INDEX and DROP VIEW */
        struct ast_create_view create_view;
        struct ast_create_index create_index;
        struct ast_insert insert;
        struct ast_update update;
        struct ast_delete delete_;
        struct ast_pragma pragma;
        struct ast_savepoint savepoint;
        struct ast_vacuum vacuum;
        struct ast_reindex reindex;
        struct ast_create_trigger *create_trigger;
        struct ast_alter_table alter_table;
        bool begin_immediate; /* BEGIN IMMEDIATE or EXCLUSIVE */
    } u;
    /* Parameters: the highest number used, and the name of each (index 1
     * to parameter_count; NULL for unnamed). */
    int parameter_count;
    const char **parameter_names; /* parameter_count + 1 entries */
};

/* Parses the first statement of sql[0..size). On success returns 0, sets
 * *out (NULL if the text held only white space, comments and semicolons)
 * and *tail_offset to the byte just past the statement and its
 * terminating ';' if any. On failure returns ENGINE_ESQL with SQLite's
 * message in errmsg ("near \"FROM\": syntax error", "incomplete input",
 * "unrecognized token: \"#\"") and its byte offset in *error_offset, or
 * COMMON_ENOMEM. Never reads past size bytes; any bytes at all are safe
 * input. Recursion is bounded by ENGINE_MAX_EXPR_DEPTH ("Expression tree is
 * too large (maximum depth 1000)"). */
int engine__parse(struct engine_arena *arena, const char *sql, size_t size,
                  struct ast_stmt **out, size_t *tail_offset, char *errmsg,
                  size_t errmsg_size, size_t *error_offset);

#endif /* SINEW_ENGINE_AST_H */
