/* SPDX-License-Identifier: MIT
 *
 * plan.h: what the planner's files share. A query is compiled in three
 * steps: name resolution and expression compilation against a scope (the
 * columns an operator's output offers), the logical shape of a SELECT
 * (source, filter, aggregate, project, distinct, sort, limit), and the
 * operators that execute it (engine_int.h). Keeping the steps apart lets a
 * JIT later take a pipeline of scan, filter and aggregate and compile it.
 */
#ifndef SINEW_ENGINE_PLAN_H
#define SINEW_ENGINE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "ast.h"
#include "engine_int.h"
#include "expr.h"

/* The columns visible to expressions: an operator's output. */
struct engine_scope_column {
    const char *name;  /* NULL: not addressable by name */
    const char *table; /* the table's name or alias, or NULL */
    enum engine_affinity affinity;
    enum engine_collation collation;
    bool has_collation;
    bool qualified_only; /* only as table.name (upsert's excluded) */
    bool untyped;        /* no affinity or collation of its own: SQLite
                            reads excluded.x as a register (resolve.c
                            turns it into TK_REGISTER) */
    bool is_rowid_alias; /* a table's INTEGER PRIMARY KEY: a rowid read
                            of its table is named by it */
    /* A joined scope (plan_join.c): */
    bool is_rowid;         /* the rowid of item .table (.name is NULL) */
    bool star_hidden;      /* left out of "*" (USING's right copy) */
    bool star_unqualified; /* "*" shows it by its bare name (a RIGHT or
                              FULL join's merged USING column) */
    bool in_schema;        /* of a table, view or table-valued function,
                              which "*" names "main.t.x" (subqueries and
                              CTEs: "*.t.x"; selectExpander) */
    bool not_null;         /* never NULL: a NOT NULL column or the rowid of
                              a table not on an outer join's NULL side, for
                              which SQLite's resolver turns "x IS NULL" into
                              a constant (sqlite3ExprCanBeNull) */
    /* A table-valued function's (tvf.h): */
    bool hidden;          /* HIDDEN (json, root): not in "*" nor NATURAL */
    bool carries_subtype; /* its values keep json_subtype (json_each's
                             value, as SQLite's xColumn result keeps it) */
    /* A column of a parenthesized join read as a subquery (plan_nested.c,
     * SQLite's SF_NestedFrom): unqualified, or qualified by its inner
     * table, it answers to nested_name; .name ("a:1") only after the
     * group's own alias. */
    const char *nested_name;  /* NULL: not such a column */
    const char *nested_table; /* its inner table; NULL for a USING column */
    bool nested_using;        /* the group's USING column ("..a" in SQLite):
                                 an unqualified name found here is not
                                 looked for further in the group */
};

struct engine_scope {
    struct engine_scope_column *columns;
    size_t column_count;
    const char *table_name; /* the FROM table's name (for t.* and t.col) */
    const char *alias;      /* its alias, or NULL */
    ptrdiff_t rowid_column; /* input index of the rowid, or -1 */
    bool null_rowid;        /* a FROM subquery: "rowid" reads NULL, as in
                               SQLite 3.40 */
    bool joined;            /* several FROM items: each column names its item in
                               .table, and names resolve by engine__join_find_column */
};

/* The scope column index a column reference resolves to in a joined
 * scope (plan_join.c): -1 for none, ENGINE__SCOPE_AMBIGUOUS when it names
 * columns of several items ("ambiguous column name: x"). */
#define ENGINE__SCOPE_AMBIGUOUS (-2)
ptrdiff_t engine__join_find_column(const struct engine_scope *scope,
                                   const char *table, const char *name);

/* An aggregation being planned: the expressions above it are rewritten to
 * read its output columns. */
struct engine_agg_plan {
    const struct ast_expr_list *group_by; /* resolved group keys (AST) */
    struct engine_expr **keys;
    size_t key_count;
    struct engine_aggregate_spec *aggregates; /* aggregate_capacity slots;
                                                 outputs after the keys */
    const struct ast_expr **aggregate_asts;
    size_t aggregate_count;
    size_t aggregate_capacity; /* the aggregate calls written in the query:
                                  unused slots output NULL */
    struct engine_expr **bare;
    const struct ast_expr **bare_asts;
    size_t bare_count;
    size_t bare_capacity;
};

struct engine_compile {
    struct engine_stmt *stmt;
    struct engine_scope *scope;      /* the input of the expression */
    struct engine_agg_plan *agg;     /* compiling above an aggregation */
    const struct ast_select *select; /* for result-column aliases */
    bool allow_aggregates;
    const char *clause; /* "WHERE", "GROUP BY", ... for errors */
    int depth;
    /* The window stage of the SELECT whose results or ORDER BY this
     * compiles (window.h); NULL where window functions are misuse. */
    struct engine_window_plan *window;
    /* The SELECT whose result columns, HAVING or ORDER BY this context
     * compiles, or NULL: an aggregate of a subquery that belongs to it
     * (expr_outer.c) makes it an aggregate query. */
    const struct ast_select *aggregate_home;
    /* The aggregate call a subquery hands to this context's query while it
     * is compiled here (expr_outer.c), or NULL. */
    const struct ast_expr *foreign_aggregate;
    /* An ORDER BY or GROUP BY term as written: the names of enclosing
     * queries are not seen (resolveSelectStep() clears sNC.pNext). */
    bool local_only;
};

/* A subquery being planned inside an expression of an enclosing query
 * (expr_outer.c): names its own FROM lacks are looked up in ctx, then in
 * parent's, as SQLite's lookupName() walks NameContext.pNext. */
struct engine_outer_frame {
    struct engine_compile *ctx;       /* where the subquery is written */
    struct engine_subquery *subquery; /* the subquery being planned */
    struct engine_outer_frame *parent;
};

/* Makes frame the innermost enclosing query while subquery, written in
 * ctx, is planned; engine__outer_pop() ends it. */
void engine__outer_push(struct engine_compile *ctx,
                        struct engine_subquery *subquery,
                        struct engine_outer_frame *frame);
void engine__outer_pop(struct engine_compile *ctx,
                       struct engine_outer_frame *frame);

/* Column ast, which ctx's own scope lacks, resolved in the enclosing
 * queries: *out reads its value on the enclosing row. 1 when there is no
 * enclosing query (the caller reports "no such column"), else 0 or the
 * enclosing query's error. */
int engine__outer_column(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out);

/* Aggregate call ast, written in ctx: 1 when it belongs to ctx's own
 * query, else (its arguments read only columns of enclosing queries, as
 * in SQLite's resolve.c) 0 with *out reading its value from the query it
 * belongs to, or that query's error. */
int engine__outer_aggregate(struct engine_compile *ctx,
                            const struct ast_expr *ast,
                            struct engine_expr **out);

/* Aggregate call ast, handed by a subquery to ctx's query, which is no
 * aggregate query yet: records that ctx->aggregate_home has it and returns
 * ENGINE__PLAN_AGAIN (with "misuse of aggregate" recorded, should nothing
 * plan it again). */
#define ENGINE__PLAN_AGAIN (-10999)
int engine__outer_want(struct engine_compile *ctx, const struct ast_expr *ast);

/* The aggregates subqueries have placed in select (0 for most), which is
 * then an aggregate query. */
size_t engine__outer_aggregates(const struct engine_stmt *stmt,
                                const struct ast_select *select);

/* The aggregate calls in ast (outside subqueries) that belong to an
 * enclosing query of ctx's rather than to ctx's own. */
size_t engine__outer_foreign_aggregates(const struct engine_compile *ctx,
                                        const struct ast_expr *ast);

/* Whether column reference ast names a column (or result alias) of ctx's
 * own query, or several (ambiguous) (expr_compile.c). */
bool engine__compile_resolves(const struct engine_compile *ctx,
                              const struct ast_expr *ast);
/* Whether function call ast is an aggregate call (expr_compile.c). */
bool engine__ast_is_aggregate_call(const struct ast_expr *ast);

/* Compiles ast against ctx into *out (allocated in the plan arena). */
int engine__compile_expr(struct engine_compile *ctx, const struct ast_expr *ast,
                         struct engine_expr **out);

/* Whether column reference ast, as ctx or an enclosing query resolves it,
 * is never NULL (engine_scope_column.not_null). */
bool engine__compile_column_not_null(const struct engine_compile *ctx,
                                     const struct ast_expr *ast);

/* Whether two expressions are the same (SQLite's sqlite3ExprCompare). */
bool engine__ast_equal(const struct ast_expr *a, const struct ast_expr *b);

/* Whether ast contains an aggregate function call, and how many. */
bool engine__ast_has_aggregate(const struct ast_expr *ast);
/* Constant, or built of GROUP BY terms whose binary[i] is set (their
 * collation is BINARY): sqlite3ExprIsConstantOrGroupBy(). */
bool engine__ast_constant_or_group_by(const struct ast_expr *ast,
                                      const struct ast_expr_list *group_by,
                                      const bool *binary);
size_t engine__ast_count_aggregates(const struct ast_expr *ast);

/* Whether test holds for ast or any expression inside it (subqueries are
 * not entered). */
bool engine__ast_any(const struct ast_expr *ast,
                     bool (*test)(const struct ast_expr *, const void *),
                     const void *arg);
/* Whether ast calls a function SQLite codes as a call (OP_Function): any
 * but coalesce, ifnull and iif, which it codes inline; LIKE and GLOB too. */
bool engine__ast_calls_function(const struct ast_expr *ast);

/* Allocates n zeroed bytes in the statement's plan arena, or sets the
 * out-of-memory error and returns NULL. */
void *engine__plan_alloc(struct engine_stmt *stmt, size_t size);

/* Plans a SELECT: *root produces its result rows, names[] gets the result
 * column names and affinities[] their affinities (both may be NULL).
 * Subqueries use the same function. */
int engine__plan_select(struct engine_stmt *stmt,
                        const struct ast_select *select,
                        struct engine_op **root, char ***names,
                        enum engine_affinity **affinities,
                        size_t *column_count);

/* One SELECT of a compound (or any simple SELECT or VALUES), planned:
 * what plan_compound.c needs of each term. All in the plan arena. */
struct engine_select_arm {
    struct engine_op *root;
    char **names;                     /* result column names */
    enum engine_affinity *affinities; /* per result column */
    struct engine_expr **projected;   /* compiled results; NULL for VALUES */
    const struct ast_expr **results;  /* result expressions, * expanded;
                                         NULL for VALUES */
    size_t column_count;
};

/* Plans select, which is not compound, into *out. */
int engine__plan_select_arm(struct engine_stmt *stmt,
                            const struct ast_select *select,
                            struct engine_select_arm *out);

/* Makes the count names of a FROM subquery's columns unique, as
 * sqlite3ColumnsFromExprList() does: a name equal (ignoring case) to an
 * earlier one loses any ":digits" suffix and gets ":1", ":2"... until it
 * is new ("SELECT * FROM (SELECT a, a)" has columns a and a:1). 0 or
 * COMMON_ENOMEM; the new names are in the plan arena. */
int engine__plan_unique_names(struct engine_stmt *stmt, char **names,
                              size_t count);

/* Where a compound SELECT's rows go: they are the statement's result
 * (or an INSERT's source), a FROM subquery's (read with the leftmost
 * SELECT's affinities), or an IN, scalar or EXISTS subquery's (compared
 * with the rightmost SELECT's affinity and collation). */
enum engine_compound_use {
    ENGINE_COMPOUND_RESULT,
    ENGINE_COMPOUND_FROM,
    ENGINE_COMPOUND_EXPR,
};

/* Plans a compound select (plan_compound.c): names from its leftmost
 * SELECT; affinities and projected (each may be NULL) from the rightmost
 * for ENGINE_COMPOUND_EXPR, else from the leftmost. */
int engine__plan_compound(struct engine_stmt *stmt,
                          const struct ast_select *select,
                          enum engine_compound_use use, struct engine_op **root,
                          char ***names, enum engine_affinity **affinities,
                          struct engine_expr ***projected,
                          size_t *column_count);

/* engine__plan_select() for a subquery in an expression: also gives the
 * compiled result expressions (*projected; NULL for VALUES), whose
 * collations the comparisons against the subquery use. */
int engine__plan_select_projected(struct engine_stmt *stmt,
                                  const struct ast_select *select,
                                  struct engine_op **root,
                                  enum engine_affinity **affinities,
                                  struct engine_expr ***projected,
                                  size_t *column_count);

/* Makes the subquery of in, an IN (SELECT) just compiled, read again after
 * the statement's own writes when SQLite would answer it from the written
 * table or its index (in_live.c). */
void engine__in_mark_live(struct engine_compile *ctx,
                          const struct ast_select *select,
                          struct engine_expr *in);

/* select with its FROM subquery merged into it where SQLite would flatten
 * it and sinew can (plan_flatten.c); select itself otherwise; NULL when
 * out of memory. */
const struct ast_select *engine__plan_flatten(struct engine_stmt *stmt,
                                              const struct ast_select *select);

/* "left AND right", a new node in the plan arena pointing at both (which
 * stay unchanged; ast.h's links are not const); NULL when out of memory
 * (plan_terms.c). */
struct ast_expr *engine__plan_ast_and(struct engine_stmt *stmt,
                                      const struct ast_expr *left,
                                      const struct ast_expr *right);

/* where with its terms "rowid = constant" moved to the front of its
 * top-level AND, as SQLite's rowid lookup runs them first (plan_terms.c);
 * where itself when there is nothing to move or table is NULL; NULL when
 * out of memory. */
const struct ast_expr *
engine__plan_rowid_terms_first(struct engine_stmt *stmt,
                               const struct ast_expr *where,
                               const struct engine_table *table);

/* The first table a SELECT names that does not exist, in the order SQLite
 * looks them up (plan_tables.c): ENGINE_ESQL "no such table: x", or 0. */
int engine__plan_check_tables(struct engine_stmt *stmt,
                              const struct ast_select *select);

/* The source of one FROM item of outer (a table, sqlite_schema or a
 * subquery): its operator and the scope of its columns. */
int engine__plan_from_item(struct engine_stmt *stmt,
                           const struct ast_select *outer,
                           const struct ast_from_item *item,
                           struct engine_scope *scope, struct engine_op **op);

/* A FROM item that is a parenthesized join (ast_select.nested): its
 * inner join, read as SQLite's SF_NestedFrom subquery reads it
 * (plan_nested.c). */
int engine__plan_nested_source(struct engine_stmt *stmt,
                               const struct ast_from_item *item,
                               struct engine_scope *scope,
                               struct engine_op **op);

/* A FROM item that names a view (view.c). engine__view_use() sets
 * use->view NULL when item names none; else item is the view read as a
 * FROM subquery (its SELECT parsed again into stmt's plan arena, called by
 * the view's name unless aliased), or an error: "view v is circularly
 * defined" when v is being planned already. The caller plans item with
 * view->expanding raised, then engine__view_name_columns() gives the
 * columns the view's column list ("expected 2 columns for 'v' but got
 * 3"). engine__view_inside(): a view (not TEMP) is being planned, so a
 * missing table is "main.t", as SQLite names it there. */
struct engine_view_use {
    struct engine_view *view;
    struct ast_from_item item;
    const char **columns; /* the view's column list; count 0 if none */
    size_t column_count;
};
int engine__view_use(struct engine_stmt *stmt, const struct ast_from_item *item,
                     struct engine_view_use *use);
int engine__view_name_columns(struct engine_stmt *stmt,
                              const struct engine_view_use *use,
                              struct engine_scope *scope);
bool engine__view_inside(const struct engine_db *db);

/* A scope over all columns of table, then its rowid. */
int engine__scope_of_table(struct engine_stmt *stmt,
                           const struct engine_table *table, const char *alias,
                           struct engine_scope *scope);

#endif /* SINEW_ENGINE_PLAN_H */
