/* SPDX-License-Identifier: MIT
 *
 * plan_access.c: choosing the access path of a single-table read
 * (access.h) as SQLite's planner would for its WHERE.
 *
 * A term of the WHERE's top-level AND can drive a lookup when it is
 * "column op value" (either way round; COLLATE on the column is looked
 * through) with op one of = IS < <= > >=, the column one of the table's
 * (the rowid under any of its names) and value free of the table's
 * columns and of non-deterministic functions (whereexpr.c exprAnalyze,
 * prereqRight). "rowid BETWEEN a AND b" adds "rowid >= a" and "rowid <=
 * b" after every written term, the last BETWEEN's first (exprAnalyze runs
 * over the terms backwards and appends).
 *
 * For a column of an index (not the rowid) SQLite also requires the
 * comparison to agree with the index (whereScanNext): its collation must
 * be the index column's, and its affinity fit the column's
 * (sqlite3IndexAffinityOk): "textcol = 5" compares as text, so a TEXT
 * index serves it; "textcol = CAST(5 AS INTEGER)" compares numerically, so
 * none does.
 *
 * Of the usable paths SQLite's costs pick, in order: the rowid's equality
 * (OP_SeekRowid), every column of a UNIQUE or PRIMARY KEY (one row), every
 * column of a CREATE INDEX (the one with most columns), a rowid range
 * (where.c whereLoopAddBtree; ties keep the loop considered first: the
 * first term written, and the newest index, as SQLite links new indexes
 * first). Terms that make the range start and end: the first lower and the
 * first upper bound.
 */
#include <string.h>
#include <strings.h>

#include "access.h"
#include "plan.h"

#define TERMS_MAX (ENGINE__ACCESS_KEY_MAX / 2)

/* A usable term, as "column op value". */
struct usable {
    size_t column;               /* table column, or SIZE_MAX: the rowid */
    enum engine_compare_op op;   /* EQ, IS, LT, LE, GT or GE */
    struct engine_expr *value;   /* free of the table's columns */
    struct engine_expr *compare; /* the comparison: its collation */
};

struct usables {
    struct usable items[ENGINE__ACCESS_KEY_MAX];
    size_t count;
};

/* A term of the top-level AND, as written and as compiled. */
struct term {
    const struct ast_expr *ast;
    struct engine_expr *expr;
};

/* Where the table's columns are in the scope the terms were compiled
 * over: [first, end), its rowid at rowid_column. A single-table read's
 * scope is the table's own (first 0, end past every column); a join's is
 * the combined row, whose columns of the other items (to the left) are
 * values a lookup may use. */
struct frame {
    size_t first;
    size_t end;
    ptrdiff_t rowid_column;
};

/* The terms of the top-level AND, the AST and the compiled tree walked
 * together; false when they do not match or there are too many. */
static bool split(const struct ast_expr *ast, struct engine_expr *expr,
                  struct term *terms, size_t *count)
{
    if (ast->kind == AST_BINARY && ast->u.binary.op == AST_AND) {
        return expr->op == ENGINE_EXPR_AND && !expr->is_between &&
               split(ast->u.binary.left, expr->args[0], terms, count) &&
               split(ast->u.binary.right, expr->args[1], terms, count);
    }
    if (*count == TERMS_MAX) {
        return false;
    }
    terms[*count].ast = ast;
    terms[(*count)++].expr = expr;
    return true;
}

/* Whether expr reads no column of the table (a subquery is
 * uncorrelated). A non-deterministic function may be in it: SQLite
 * evaluates the value once, for the lookup. */
static bool table_free(const struct engine_expr *expr, const struct frame *f)
{
    if (expr->op == ENGINE_EXPR_COLUMN && expr->u.column >= f->first &&
        expr->u.column < f->end) {
        return false;
    }
    for (size_t i = 0; i < expr->arg_count; i++) {
        if (expr->args[i] != NULL && !table_free(expr->args[i], f)) {
            return false;
        }
    }
    /* A correlated subquery reads what its outer arguments read. */
    if (engine__expr_is_correlated(expr)) {
        for (size_t i = 0; i < expr->u.subquery->outer_count; i++) {
            if (!table_free(expr->u.subquery->outer_args[i], f)) {
                return false;
            }
        }
    }
    return true;
}

/* Whether the operand (as written, and compiled) is a column of the
 * table, possibly under COLLATE: *column is its index, SIZE_MAX for the
 * rowid. "+a" is no column to SQLite (TK_UPLUS), nor here. */
static bool table_column(const struct ast_expr *ast,
                         const struct engine_expr *expr,
                         const struct engine_table *table,
                         const struct frame *f, size_t *column)
{
    while (ast->kind == AST_COLLATE) {
        ast = ast->u.collate.operand;
    }
    if (ast->kind != AST_COLUMN || expr->op != ENGINE_EXPR_COLUMN ||
        !expr->has_affinity || expr->u.column < f->first ||
        expr->u.column >= f->end) {
        return false;
    }
    if ((ptrdiff_t)expr->u.column == f->rowid_column ||
        (ptrdiff_t)(expr->u.column - f->first) == table->rowid_alias) {
        *column = SIZE_MAX;
        return true;
    }
    *column = expr->u.column - f->first;
    return *column < table->column_count;
}

static void add(struct usables *u, size_t column, enum engine_compare_op op,
                struct engine_expr *value, struct engine_expr *compare)
{
    u->items[u->count++] = (struct usable){
        .column = column, .op = op, .value = value, .compare = compare};
}

/* A written term "x op y" that is usable. */
static void add_comparison(struct usables *u, const struct term *t,
                           const struct engine_table *table,
                           const struct frame *f)
{
    const struct ast_expr *ast = t->ast;
    struct engine_expr *e = t->expr;
    enum engine_compare_op op;
    size_t column;

    if (ast->kind != AST_BINARY || e->op != ENGINE_EXPR_COMPARE) {
        return;
    }
    op = e->u.compare;
    if (op == ENGINE_COMPARE_NE || op == ENGINE_COMPARE_IS_NOT) {
        return;
    }
    if (table_column(ast->u.binary.left, e->args[0], table, f, &column) &&
        table_free(e->args[1], f)) {
        add(u, column, op, e->args[1], e);
    } else if (table_column(ast->u.binary.right, e->args[1], table, f,
                            &column) &&
               table_free(e->args[0], f)) {
        add(u, column, engine__compare_commuted(op), e->args[0], e);
    }
}

/* The two rowid bounds "rowid BETWEEN low AND high" adds. */
static void add_between(struct usables *u, const struct term *t,
                        const struct engine_table *table, const struct frame *f)
{
    const struct ast_expr *ast = t->ast;
    struct engine_expr *e = t->expr;
    size_t column;

    if (ast->kind != AST_BETWEEN || ast->u.between.negated ||
        e->op != ENGINE_EXPR_AND || !e->is_between ||
        !table_column(ast->u.between.operand, e->args[0]->args[0], table, f,
                      &column) ||
        column != SIZE_MAX) {
        return;
    }
    for (size_t i = 0; i < 2; i++) {
        struct engine_expr *bound = e->args[i];

        if (table_free(bound->args[1], f)) {
            add(u, SIZE_MAX, bound->u.compare, bound->args[1], bound);
        }
    }
}

static bool is_numeric(enum engine_affinity affinity)
{
    return affinity >= ENGINE_AFFINITY_NUMERIC;
}

/* sqlite3IndexAffinityOk() for "column = value" against an index on the
 * column: the affinity the comparison applies (sqlite3CompareAffinity)
 * must be one the index's entries already have. */
static bool affinity_fits(const struct engine_table *table, size_t column,
                          const struct engine_expr *value)
{
    enum engine_affinity own = table->columns[column].affinity;
    enum engine_affinity compared = own;

    if (value->has_affinity) {
        compared = is_numeric(own) || is_numeric(value->affinity)
                       ? ENGINE_AFFINITY_NUMERIC
                       : ENGINE_AFFINITY_BLOB;
    }
    if (compared == ENGINE_AFFINITY_BLOB) {
        return true;
    }
    return compared == ENGINE_AFFINITY_TEXT ? own == ENGINE_AFFINITY_TEXT
                                            : is_numeric(own);
}

/* The first usable equality on column that an index column of collation
 * may serve, or NULL. */
static const struct usable *equality(const struct usables *u,
                                     const struct engine_table *table,
                                     size_t column,
                                     enum engine_collation collation)
{
    for (size_t i = 0; i < u->count; i++) {
        const struct usable *x = &u->items[i];

        if (x->column == column &&
            (x->op == ENGINE_COMPARE_EQ || x->op == ENGINE_COMPARE_IS) &&
            x->compare->collation == collation &&
            affinity_fits(table, column, x->value)) {
            return x;
        }
    }
    return NULL;
}

/* The equalities serving every column of a key or index (columns and
 * collations), into found; false if one is missing. */
static bool all_equal(const struct usables *u, const struct engine_table *table,
                      const size_t *columns,
                      const enum engine_collation *collations, size_t count,
                      const struct usable **found)
{
    if (count > u->count) {
        return false; /* each column needs a term of its own */
    }
    for (size_t k = 0; k < count; k++) {
        enum engine_collation collation =
            collations != NULL ? collations[k]
                               : table->columns[columns[k]].collation;

        found[k] = equality(u, table, columns[k], collation);
        if (found[k] == NULL) {
            return false;
        }
    }
    return true;
}

static int make_access(struct engine_stmt *stmt, enum engine_access_kind kind,
                       size_t target, const struct usable **found, size_t count,
                       struct engine_access **out)
{
    struct engine_access *access = engine__plan_alloc(stmt, sizeof(*access));

    if (access == NULL) {
        return COMMON_ENOMEM;
    }
    access->values =
        engine__plan_alloc(stmt, (count + 1) * sizeof(*access->values));
    if (access->values == NULL) {
        return COMMON_ENOMEM;
    }
    access->satisfied =
        engine__plan_alloc(stmt, (count + 1) * sizeof(*access->satisfied));
    if (access->satisfied == NULL) {
        return COMMON_ENOMEM;
    }
    access->kind = kind;
    access->target = target;
    access->value_count = count;
    access->satisfied_count = count;
    for (size_t k = 0; k < count; k++) {
        access->satisfied[k] = found[k]->compare;
        access->values[k].expr = found[k]->value;
        access->values[k].is_is = found[k]->op == ENGINE_COMPARE_IS;
        access->values[k].affinity = ENGINE_AFFINITY_BLOB;
    }
    *out = access;
    return 0;
}

/* Whether a hint lets a lookup use the index named name (NULL: a UNIQUE
 * or PRIMARY KEY constraint's, which SQLite keeps as an automatic index):
 * NOT INDEXED allows none, INDEXED BY only its own. */
static bool hint_allows(const struct ast_index_hint *hint, const char *name)
{
    if (hint->not_indexed) {
        return false;
    }
    return hint->indexed_by == NULL ||
           (name != NULL && strcasecmp(name, hint->indexed_by) == 0);
}

/* A UNIQUE or PRIMARY KEY every column of which has an equality: one that
 * resolves conflicts other than by REPLACE first, the newest first (the
 * order of SQLite's index list). */
static ptrdiff_t unique_key(const struct usables *u,
                            const struct engine_table *table,
                            const struct ast_index_hint *hint,
                            const struct usable **found)
{
    for (int replace = 0; replace < 2; replace++) {
        for (size_t k = table->key_count; k-- > 0;) {
            const struct engine_unique_key *key = &table->keys[k];

            if ((key->conflict == AST_CONFLICT_REPLACE) == (replace != 0) &&
                !key->collation_differs && hint_allows(hint, key->index_name) &&
                all_equal(u, table, key->columns, NULL, key->column_count,
                          found)) {
                return (ptrdiff_t)k;
            }
        }
    }
    return -1;
}

/* The CREATE INDEX with most columns, each with an equality; the newest
 * among those. */
static ptrdiff_t secondary_index(const struct usables *u,
                                 const struct engine_table *table,
                                 const struct ast_index_hint *hint,
                                 const struct usable **found)
{
    const struct usable *trial[ENGINE__ACCESS_KEY_MAX];
    ptrdiff_t best = -1;
    size_t best_count = 0;
    uint64_t best_sequence = 0;

    for (size_t i = 0; i < table->index_count; i++) {
        const struct engine_index_def *def = &table->indexes[i];
        const struct engine_table_index *index = def->lookup;

        if (index == NULL || !hint_allows(hint, def->name) ||
            index->column_count < best_count ||
            (index->column_count == best_count &&
             def->sequence < best_sequence) ||
            !all_equal(u, table, index->columns, index->collations,
                       index->column_count, trial)) {
            continue;
        }
        best = (ptrdiff_t)i;
        best_count = index->column_count;
        best_sequence = def->sequence;
        memcpy(found, trial, best_count * sizeof(*trial));
    }
    return best;
}

static int rowid_range(struct engine_stmt *stmt, const struct usables *u,
                       struct engine_access **out)
{
    const struct usable *low = NULL, *high = NULL;
    struct engine_access *access;

    for (size_t i = 0; i < u->count; i++) {
        const struct usable *x = &u->items[i];
        bool lower = x->op == ENGINE_COMPARE_GT || x->op == ENGINE_COMPARE_GE;
        bool upper = x->op == ENGINE_COMPARE_LT || x->op == ENGINE_COMPARE_LE;

        if (x->column == SIZE_MAX && lower && low == NULL) {
            low = x;
        } else if (x->column == SIZE_MAX && upper && high == NULL) {
            high = x;
        }
    }
    if (low == NULL && high == NULL) {
        return 0;
    }
    access = engine__plan_alloc(stmt, sizeof(*access));
    if (access != NULL) {
        access->satisfied =
            engine__plan_alloc(stmt, 2 * sizeof(*access->satisfied));
    }
    if (access == NULL || access->satisfied == NULL) {
        return COMMON_ENOMEM;
    }
    if (low != NULL) {
        access->satisfied[access->satisfied_count++] = low->compare;
    }
    if (high != NULL) {
        access->satisfied[access->satisfied_count++] = high->compare;
    }
    access->kind = ENGINE_ACCESS_RANGE;
    access->low = low != NULL ? low->value : NULL;
    access->low_inclusive = low != NULL && low->op == ENGINE_COMPARE_GE;
    access->high = high != NULL ? high->value : NULL;
    access->high_inclusive = high != NULL && high->op == ENGINE_COMPARE_LE;
    *out = access;
    return 0;
}

/* The usable terms: the written ones in order, then BETWEEN's bounds. */
static bool collect(const struct ast_expr *where_ast, struct engine_expr *where,
                    const struct engine_table *table, ptrdiff_t rowid_column,
                    struct usables *u)
{
    struct term terms[TERMS_MAX];
    struct frame f = {.end = SIZE_MAX, .rowid_column = rowid_column};
    size_t count = 0;

    if (!split(where_ast, where, terms, &count)) {
        return false;
    }
    u->count = 0;
    for (size_t i = 0; i < count; i++) {
        add_comparison(u, &terms[i], table, &f);
    }
    for (size_t i = count; i-- > 0;) {
        add_between(u, &terms[i], table, &f);
    }
    return true;
}

/* The key's columns and collations (NULL: the columns'), and the
 * affinity OP_Affinity gives each value before the seek: the index
 * column's, where every numeric one acts as NUMERIC (applyAffinity(): an
 * INTEGER stays one, even for a REAL column, whose stored 2^53 does not
 * equal 2^53 + 1; a REAL that is an exact integer becomes one; numeric
 * text becomes a number). */
static void key_columns(const struct engine_table *table, const size_t *columns,
                        const enum engine_collation *collations,
                        struct engine_access *access)
{
    for (size_t k = 0; k < access->value_count; k++) {
        const struct engine_column_def *def = &table->columns[columns[k]];
        struct engine_access_value *value = &access->values[k];

        value->column = columns[k];
        value->collation = collations != NULL ? collations[k] : def->collation;
        value->affinity =
            is_numeric(def->affinity) ? ENGINE_AFFINITY_NUMERIC : def->affinity;
    }
}

/* The equality path SQLite's costs pick among those the hint allows (the
 * rowid's, a UNIQUE key's, a CREATE INDEX's), or none (*out unchanged): a
 * path it rules out is passed over for the next one, as whereLoopAddBtree
 * adds only the loops of the indexes the FROM item may use. */
static int choose_equality(struct engine_stmt *stmt,
                           const struct engine_table *table,
                           const struct usables *u,
                           const struct ast_index_hint *hint,
                           struct engine_access **out)
{
    const struct usable *found[ENGINE__ACCESS_KEY_MAX];
    ptrdiff_t target;
    int rc;

    found[0] = NULL;
    /* INDEXED BY leaves out the rowid's own loops (whereLoopAddBtree
     * builds its rowid "index" only without it). */
    for (size_t i = 0;
         found[0] == NULL && hint->indexed_by == NULL && i < u->count; i++) {
        const struct usable *x = &u->items[i];

        if (x->column == SIZE_MAX &&
            (x->op == ENGINE_COMPARE_EQ || x->op == ENGINE_COMPARE_IS)) {
            found[0] = x;
        }
    }
    if (found[0] != NULL) {
        return make_access(stmt, ENGINE_ACCESS_ROWID, 0, found, 1, out);
    }
    if ((target = unique_key(u, table, hint, found)) >= 0) {
        const struct engine_unique_key *key = &table->keys[target];

        rc = make_access(stmt, ENGINE_ACCESS_KEY, (size_t)target, found,
                         key->column_count, out);
        if (rc == 0) {
            key_columns(table, key->columns, NULL, *out);
        }
        return rc;
    }
    if ((target = secondary_index(u, table, hint, found)) >= 0) {
        const struct engine_table_index *index = table->indexes[target].lookup;

        rc = make_access(stmt, ENGINE_ACCESS_INDEX, (size_t)target, found,
                         index->column_count, out);
        if (rc == 0) {
            key_columns(table, index->columns, index->collations, *out);
        }
        return rc;
    }
    return 0;
}

/* The equality path, else a rowid range (not under INDEXED BY). */
static int choose(struct engine_stmt *stmt, const struct engine_table *table,
                  const struct usables *u, const struct ast_index_hint *hint,
                  struct engine_access **out)
{
    int rc = choose_equality(stmt, table, u, hint, out);

    if (rc != 0 || *out != NULL || hint->indexed_by != NULL) {
        return rc;
    }
    return rowid_range(stmt, u, out);
}

int engine__plan_index_hint_check(struct engine_stmt *stmt,
                                  const struct engine_table *table,
                                  const struct ast_index_hint *hint)
{
    const char *name = hint->indexed_by;

    if (name == NULL) {
        return 0;
    }
    for (size_t i = 0; i < table->index_count; i++) {
        if (strcasecmp(table->indexes[i].name, name) == 0) {
            return 0;
        }
    }
    return engine__db_error(stmt->db, ENGINE_ESQL, "no such index: %s", name);
}

int engine__plan_access(struct engine_stmt *stmt,
                        const struct engine_table *table,
                        ptrdiff_t rowid_column,
                        const struct ast_index_hint *hint,
                        const struct ast_expr *where_ast,
                        struct engine_expr *where, struct engine_access **out)
{
    static const struct ast_index_hint no_hint;
    struct usables *u;
    int rc = 0;

    *out = NULL;
    if (table == NULL || where_ast == NULL || where == NULL) {
        return 0;
    }
    u = engine__plan_alloc(stmt, sizeof(*u));
    if (u == NULL) {
        return COMMON_ENOMEM;
    }
    if (collect(where_ast, where, table, rowid_column, u)) {
        rc = choose(stmt, table, u, hint != NULL ? hint : &no_hint, out);
    }
    return rc;
}

bool engine__access_index_has(const struct engine_access *access,
                              const struct engine_table *table, size_t column)
{
    const struct engine_table_index *index;

    if (access == NULL || access->kind != ENGINE_ACCESS_INDEX) {
        return false;
    }
    index = table->indexes[access->target].lookup;
    for (size_t k = 0; k < index->column_count; k++) {
        if (index->columns[k] == column) {
            return true;
        }
    }
    return false;
}

int engine__plan_access_join(struct engine_stmt *stmt,
                             const struct engine_table *table, size_t first,
                             const struct ast_index_hint *hint,
                             const struct ast_expr *const *asts,
                             struct engine_expr *const *exprs, size_t count,
                             struct engine_access **out)
{
    static const struct ast_index_hint no_hint;
    struct frame f = {
        .first = first,
        .end = first + table->column_count + 1,
        .rowid_column = (ptrdiff_t)(first + table->column_count),
    };
    struct usables *u = engine__plan_alloc(stmt, sizeof(*u));

    *out = NULL;
    if (u == NULL) {
        return COMMON_ENOMEM;
    }
    u->count = 0;
    for (size_t i = 0; i < count && u->count < ENGINE__ACCESS_KEY_MAX; i++) {
        struct term t = {.ast = asts[i], .expr = exprs[i]};

        /* Only "=": an IS would have to find the NULL keys too. */
        if (exprs[i]->op == ENGINE_EXPR_COMPARE &&
            exprs[i]->u.compare == ENGINE_COMPARE_EQ) {
            add_comparison(u, &t, table, &f);
        }
    }
    return choose_equality(stmt, table, u, hint != NULL ? hint : &no_hint, out);
}
