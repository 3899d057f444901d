/* SPDX-License-Identifier: MIT
 *
 * plan_join.c: planning a FROM clause of several items (join.h).
 *
 * Names: plan_join_scope.c.
 *
 * Terms. The WHERE's top-level AND terms, then the ON terms of inner
 * joins (SQLite moves those into the WHERE), are placed by the items they
 * read: a term over one item filters that item's scan (and may give it an
 * index or rowid lookup, access.h); a term over several goes to the inner
 * join that brings the last of them; every other term runs above all
 * joins. A term never moves below a join that may add NULL rows for an
 * item it reads: not under a LEFT join for its right item, nor under any
 * join when a RIGHT or FULL join follows. The ON terms of an outer join
 * stay on it (ON decides which rows match, WHERE which rows stay), except
 * that a LEFT join's ON terms over its right item alone filter that
 * item's scan, which is the same thing.
 *
 * Order. Outer joins keep the written order. When every join is inner
 * (SQLite may then reorder too), the items are joined greedily: first the
 * item expected to yield the fewest rows (its table's rows; a quarter
 * with a filter; one with a rowid or key lookup; 1000 for a subquery),
 * then each time the item best linked to those already joined (by an
 * equality, else by any term, else none), the fewest rows among equals,
 * the written order among ties; a final projection puts the columns back
 * in the written order. Each join's right input is read once per
 * execution and hashed on its equalities with the left (join.h); a join
 * without one is a nested loop over the right's rows. An INNER or LEFT
 * join into a table whose rowid, UNIQUE key or index its equalities
 * cover may look the rows up per left row instead, when that is cheaper
 * (plan_join_index.c). The inner ON terms
 * of a join a RIGHT or FULL join follows stay on it (SQLite's
 * EP_InnerON): as WHERE terms they would drop that join's NULL rows.
 */
#include <string.h>
#include <strings.h>

#include "access.h"
#include "join_int.h"
#include "tvf.h"
#include "zone.h"

/* ---- terms ---- */

/* The items expr reads, and whether it reads a merged column. */
static void expr_items(const struct engine_join_plan *plan,
                       const struct engine_expr *e, uint64_t *items,
                       bool *merged)
{
    if (e->op == ENGINE_EXPR_COLUMN) {
        *items |= (uint64_t)1 << plan->column_item[e->u.column];
        *merged = *merged || plan->column_merged[e->u.column];
    }
    for (size_t i = 0; i < e->arg_count; i++) {
        if (e->args[i] != NULL) {
            expr_items(plan, e->args[i], items, merged);
        }
    }
    /* A correlated subquery reads the columns its outer arguments do. */
    if (engine__expr_is_correlated(e)) {
        for (size_t i = 0; i < e->u.subquery->outer_count; i++) {
            expr_items(plan, e->u.subquery->outer_args[i], items, merged);
        }
    }
}

static int compile_full(struct engine_join_plan *plan,
                        const struct ast_expr *ast, const char *clause,
                        struct join_term *term)
{
    struct engine_compile ctx = {
        .stmt = plan->stmt,
        .scope = plan->scope,
        .select = plan->select,
        .clause = clause,
    };
    int rc = engine__compile_expr(&ctx, ast, &term->expr);

    if (rc != 0) {
        return rc;
    }
    term->ast = ast;
    term->items = 0;
    term->reads_merged = false;
    expr_items(plan, term->expr, &term->items, &term->reads_merged);
    return 0;
}

/* The position of the highest item in items. */
static size_t last_item(uint64_t items)
{
    size_t k = 0;

    while (k < JOIN_ITEMS_MAX - 1 && items >> (k + 1) != 0) {
        k++;
    }
    return k;
}

/* Whether a RIGHT or FULL join comes after item k: it may add rows with
 * NULLs for every item up to k. */
static bool right_join_after(const struct engine_join_plan *plan, size_t k)
{
    for (size_t i = k + 1; i < plan->count; i++) {
        enum ast_join_kind kind = plan->items[i].ast->join;

        if (kind == AST_JOIN_RIGHT || kind == AST_JOIN_FULL) {
            return true;
        }
    }
    return false;
}

static int add_residual(struct engine_join_plan *plan,
                        const struct ast_expr *ast)
{
    if (plan->residual == NULL) {
        plan->residual = ast;
        return 0;
    }
    plan->residual = engine__plan_ast_and(plan->stmt, plan->residual, ast);
    return plan->residual == NULL ? COMMON_ENOMEM : 0;
}

static int add_filter(struct engine_join_plan *plan, struct join_item *it,
                      const struct ast_expr *ast)
{
    if (it->filter == NULL) {
        it->filter = ast;
        return 0;
    }
    it->filter = engine__plan_ast_and(plan->stmt, it->filter, ast);
    return it->filter == NULL ? COMMON_ENOMEM : 0;
}

static int add_join_term(struct engine_join_plan *plan, struct join_item *it,
                         const struct join_term *term)
{
    struct join_term *terms =
        engine__plan_alloc(plan->stmt, (it->term_count + 1) * sizeof(*terms));

    if (terms == NULL) {
        return COMMON_ENOMEM;
    }
    if (it->term_count > 0) {
        memcpy(terms, it->terms, it->term_count * sizeof(*terms));
    }
    terms[it->term_count++] = *term;
    it->terms = terms;
    return 0;
}

static int add_pending(struct engine_join_plan *plan,
                       const struct join_term *term)
{
    struct join_term *terms = engine__plan_alloc(
        plan->stmt, (plan->pending_count + 1) * sizeof(*terms));

    if (terms == NULL) {
        return COMMON_ENOMEM;
    }
    if (plan->pending_count > 0) {
        memcpy(terms, plan->pending, plan->pending_count * sizeof(*terms));
    }
    terms[plan->pending_count++] = *term;
    plan->pending = terms;
    return 0;
}

/* A WHERE term, or an inner join's ON term: where it can run first. */
static int place_where_term(struct engine_join_plan *plan,
                            const struct join_term *term)
{
    size_t k = last_item(term->items);
    struct join_item *it = &plan->items[k];
    bool inner =
        it->ast->join == AST_JOIN_FIRST || it->ast->join == AST_JOIN_INNER;

    if (term->items == 0 || !inner || right_join_after(plan, k)) {
        return add_residual(plan, term->ast);
    }
    if (term->items == (uint64_t)1 << k && !term->reads_merged) {
        return add_filter(plan, it, term->ast);
    }
    if (plan->reorder) {
        return add_pending(plan, term);
    }
    return k > 0 ? add_join_term(plan, it, term)
                 : add_residual(plan, term->ast);
}

/* An ON term of outer join k (or of an inner join a RIGHT or FULL join
 * follows). */
static int place_on_term(struct engine_join_plan *plan, size_t k,
                         const struct join_term *term)
{
    struct join_item *it = &plan->items[k];

    if (term->items >> k > 1) {
        return engine__db_error(plan->stmt->db, ENGINE_ESQL,
                                "ON clause references tables to its right");
    }
    if ((it->ast->join == AST_JOIN_LEFT || it->ast->join == AST_JOIN_INNER) &&
        term->items == (uint64_t)1 << k && !term->reads_merged) {
        return add_filter(plan, it, term->ast);
    }
    return add_join_term(plan, it, term);
}

/* Splits a top-level AND into terms, calling place on each. */
static int split_where(struct engine_join_plan *plan,
                       const struct ast_expr *ast)
{
    struct join_term term;
    int rc;

    if (ast->kind == AST_BINARY && ast->u.binary.op == AST_AND &&
        !ast->is_false) {
        rc = split_where(plan, ast->u.binary.left);
        return rc == 0 ? split_where(plan, ast->u.binary.right) : rc;
    }
    rc = compile_full(plan, ast, "WHERE", &term);
    return rc == 0 ? place_where_term(plan, &term) : rc;
}

static int split_on(struct engine_join_plan *plan, size_t k,
                    const struct ast_expr *ast)
{
    struct join_term term;
    int rc;

    if (ast->kind == AST_BINARY && ast->u.binary.op == AST_AND &&
        !ast->is_false) {
        rc = split_on(plan, k, ast->u.binary.left);
        return rc == 0 ? split_on(plan, k, ast->u.binary.right) : rc;
    }
    rc = compile_full(plan, ast, "ON", &term);
    if (rc != 0) {
        return rc;
    }
    /* An inner join's ON is a WHERE term, unless a RIGHT or FULL join
     * follows: it would then filter that join's NULL rows too, so it
     * stays on its join (SQLite's EP_InnerON). */
    if (plan->items[k].ast->join == AST_JOIN_INNER &&
        !right_join_after(plan, k)) {
        return place_where_term(plan, &term);
    }
    return place_on_term(plan, k, &term);
}

static int place_terms(struct engine_join_plan *plan,
                       const struct ast_expr *where)
{
    int rc = where != NULL ? split_where(plan, where) : 0;

    for (size_t k = 1; rc == 0 && k < plan->count; k++) {
        const struct join_item *it = &plan->items[k];

        for (size_t i = 0; rc == 0 && i < it->on_count; i++) {
            rc = split_on(plan, k, it->on_terms[i]);
        }
    }
    return rc;
}

/* ---- join order ---- */

/* Whether the pending term joins item k to the chosen items: it reads k
 * and chosen items only, at least one of them. *equality: it is "=". */
static bool term_links(const struct join_term *term, uint64_t chosen, size_t k,
                       bool *equality)
{
    uint64_t bit = (uint64_t)1 << k;
    uint64_t others = term->items & ~bit;

    *equality = term->expr->op == ENGINE_EXPR_COMPARE &&
                term->expr->u.compare == ENGINE_COMPARE_EQ;
    return (term->items & bit) != 0 && others != 0 && (others & ~chosen) == 0;
}

/* How well item k follows the chosen items: 2 linked by an equality, 1
 * by another term, 0 not at all. */
static int link_rank(const struct engine_join_plan *plan, uint64_t chosen,
                     size_t k)
{
    int rank = 0;

    for (size_t i = 0; i < plan->pending_count; i++) {
        bool equality;

        if (term_links(&plan->pending[i], chosen, k, &equality)) {
            rank = equality ? 2 : rank > 1 ? rank : 1;
        }
    }
    return rank;
}

/* The join order (a greedy one, documented in the file's head): first
 * the item expected to yield the fewest rows, then, each time, the item
 * best linked to those chosen (an equality, then any term, then none),
 * the fewest rows among equals, the written order among ties. */
static void choose_order(const struct engine_join_plan *plan, size_t *order)
{
    uint64_t chosen = 0;

    for (size_t p = 0; p < plan->count; p++) {
        size_t best = SIZE_MAX;
        int best_rank = -1;

        for (size_t k = 0; k < plan->count; k++) {
            int rank = p == 0 ? 0 : link_rank(plan, chosen, k);

            if ((chosen >> k & 1) != 0) {
                continue;
            }
            if (rank > best_rank ||
                (rank == best_rank &&
                 plan->items[k].rows < plan->items[best].rows)) {
                best = k;
                best_rank = rank;
            }
        }
        order[p] = best;
        chosen |= (uint64_t)1 << best;
    }
}

/* Renumbers the items in the chosen order: a new combined scope in that
 * order (plan->scope points at it from now on), the pending terms
 * compiled over it and given to the join that completes them. */
static int renumber(struct engine_join_plan *plan, const size_t *order)
{
    struct join_item *items =
        engine__plan_alloc(plan->stmt, plan->count * sizeof(*items));
    const struct engine_scope *written = plan->scope;
    size_t total = written->column_count;
    int rc = 0;

    plan->written_column =
        engine__plan_alloc(plan->stmt, (total + 1) * sizeof(size_t));
    if (items == NULL || plan->written_column == NULL) {
        return COMMON_ENOMEM;
    }
    plan->scope = &plan->exec_scope;
    plan->exec_scope.joined = true;
    plan->exec_scope.rowid_column = -1;
    plan->column_capacity = 0;
    for (size_t p = 0; rc == 0 && p < plan->count; p++) {
        const struct join_item *it = &plan->items[order[p]];

        items[p] = *it;
        items[p].first = plan->exec_scope.column_count;
        for (size_t c = 0; rc == 0 && c < it->width; c++) {
            plan->written_column[it->first + c] = items[p].first + c;
            rc = engine__join_add_column(plan, &written->columns[it->first + c],
                                         p, false);
        }
    }
    plan->items = items;
    return rc;
}

static int join_reorder(struct engine_join_plan *plan)
{
    size_t order[JOIN_ITEMS_MAX];
    int rc;

    choose_order(plan, order);
    rc = renumber(plan, order);
    for (size_t i = 0; rc == 0 && i < plan->pending_count; i++) {
        struct join_term term;

        rc = compile_full(plan, plan->pending[i].ast, "WHERE", &term);
        if (rc == 0) {
            rc =
                add_join_term(plan, &plan->items[last_item(term.items)], &term);
        }
    }
    return rc;
}

/* The columns back in the written order, which every expression above
 * the joins was compiled for. */
static int restore_layout(struct engine_join_plan *plan, struct engine_op **op)
{
    size_t total = plan->exec_scope.column_count;
    struct engine_expr **exprs =
        engine__plan_alloc(plan->stmt, (total + 1) * sizeof(*exprs));

    if (exprs == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < total; i++) {
        exprs[i] = engine__plan_alloc(plan->stmt, sizeof(**exprs));
        if (exprs[i] == NULL) {
            return COMMON_ENOMEM;
        }
        exprs[i]->op = ENGINE_EXPR_COLUMN;
        exprs[i]->u.column = plan->written_column[i];
    }
    *op = engine__op_project(plan->stmt, *op, exprs, total);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

/* ---- operators ---- */

/* Item it's scan, filtered by its terms (compiled over its own scope),
 * reading only the rows they let an index or the rowid find. */
static int plan_item_filter(struct engine_join_plan *plan, struct join_item *it)
{
    struct engine_compile ctx = {
        .stmt = plan->stmt,
        .scope = &it->scope,
        .select = plan->select,
        .clause = "WHERE",
    };
    const struct ast_expr *ast = it->filter;
    struct engine_access *access = NULL;
    struct engine_zone_plan *zones = NULL;
    struct engine_expr *e;
    int rc;

    it->rows = it->table != NULL ? (double)it->table->live_count : 1000.0;
    if (ast == NULL) {
        return 0;
    }
    it->rows = it->rows / 4 + 1;
    ast = engine__plan_rowid_terms_first(plan->stmt, ast, it->table);
    if (ast == NULL) {
        return COMMON_ENOMEM;
    }
    rc = engine__compile_expr(&ctx, ast, &e);
    if (rc != 0) {
        return rc;
    }
    engine__expr_mark_condition(e);
    it->filter_expr = e; /* an index join tests it (plan_join_index.c) */
    if (it->table != NULL) {
        rc = engine__plan_access(plan->stmt, it->table, it->scope.rowid_column,
                                 &it->ast->hint, ast, e, &access);
    }
    if (rc == 0 && it->table != NULL && access == NULL) {
        rc = engine__plan_zones(plan->stmt, it->table, e, &zones);
    }
    if (rc != 0) {
        return rc;
    }
    if (access != NULL) {
        engine__op_scan_access(it->op, access);
        it->rows = access->kind == ENGINE_ACCESS_ROWID ||
                           access->kind == ENGINE_ACCESS_KEY
                       ? 1
                       : it->rows / 4 + 1;
    }
    if (zones != NULL) {
        engine__op_scan_zones(it->op, zones);
    }
    it->op = engine__op_filter(plan->stmt, it->op, e);
    return it->op == NULL ? COMMON_ENOMEM : 0;
}

/* Whether the items side reads are all left of k (left) or all k. */
static bool side_is(const struct engine_join_plan *plan, size_t k,
                    const struct engine_expr *side, bool left)
{
    uint64_t items = 0;
    bool merged = false;

    expr_items(plan, side, &items, &merged);
    if (items == 0) {
        return false;
    }
    return left ? items < (uint64_t)1 << k
                : items == (uint64_t)1 << k && !merged;
}

/* Makes e, which reads columns of one item only, read them from that
 * item's own row, which starts at column first of the combined one. */
static void shift_columns(struct engine_expr *e, size_t first)
{
    if (e->op == ENGINE_EXPR_COLUMN) {
        ASSERT(e->u.column >= first);
        e->u.column -= first;
    }
    for (size_t i = 0; i < e->arg_count; i++) {
        if (e->args[i] != NULL) {
            shift_columns(e->args[i], first);
        }
    }
    if (engine__expr_is_correlated(e)) {
        for (size_t i = 0; i < e->u.subquery->outer_count; i++) {
            shift_columns(e->u.subquery->outer_args[i], first);
        }
    }
}

/* Term as a hash key of join k: "l = r", l over the items left of k, r
 * over item k (or the other way round). */
static int term_key(struct engine_join_plan *plan, size_t k,
                    const struct join_term *term, struct engine_join_key *key,
                    bool *is_key)
{
    const struct engine_expr *e = term->expr;
    struct engine_compile left = {.stmt = plan->stmt,
                                  .scope = plan->scope,
                                  .select = plan->select,
                                  .clause = "ON"};
    struct engine_compile right = left;
    const struct ast_expr *l;
    const struct ast_expr *r;
    int rc;

    *is_key = false;
    if (e->op != ENGINE_EXPR_COMPARE || e->u.compare != ENGINE_COMPARE_EQ ||
        e->arg_count != 2 || term->ast->kind != AST_BINARY ||
        term->ast->u.binary.op != AST_EQ) {
        return 0;
    }
    l = term->ast->u.binary.left;
    r = term->ast->u.binary.right;
    if (side_is(plan, k, e->args[0], true) &&
        side_is(plan, k, e->args[1], false)) {
        key->swapped = false;
    } else if (side_is(plan, k, e->args[1], true) &&
               side_is(plan, k, e->args[0], false)) {
        key->swapped = true;
        l = term->ast->u.binary.right;
        r = term->ast->u.binary.left;
    } else {
        return 0;
    }
    key->compare = e;
    rc = engine__compile_expr(&left, l, &key->left);
    if (rc == 0) {
        rc = engine__compile_expr(&right, r, &key->right);
    }
    if (rc == 0) {
        shift_columns(key->right, plan->items[k].first);
    }
    *is_key = rc == 0;
    return rc;
}

/* Join k: a hash join, or an index join when plan_join_index.c finds it
 * cheaper; *rows the rows expected so far (updated). */
static int plan_join_op(struct engine_join_plan *plan, size_t k, double *rows,
                        struct engine_op **op)
{
    struct engine_join_lookup *lookup = NULL;
    struct join_item *it = &plan->items[k];
    struct engine_join_spec *spec =
        engine__plan_alloc(plan->stmt, sizeof(*spec));
    size_t n = it->term_count;
    int rc = 0;

    if (spec == NULL) {
        return COMMON_ENOMEM;
    }
    spec->kind = it->ast->join;
    spec->left_width = it->first;
    spec->right_width = it->width;
    spec->predicate = engine__plan_alloc(plan->stmt, (n + 1) * sizeof(void *));
    spec->keys = engine__plan_alloc(plan->stmt, (n + 1) * sizeof(*spec->keys));
    if (spec->predicate == NULL || spec->keys == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        bool is_key = false;

        spec->predicate[spec->predicate_count++] = it->terms[i].expr;
        if (spec->key_count < ENGINE__JOIN_KEY_MAX) {
            rc = term_key(plan, k, &it->terms[i], &spec->keys[spec->key_count],
                          &is_key);
        }
        spec->key_count += is_key ? 1 : 0;
    }
    spec->merged = it->merged;
    spec->merged_count = it->merged_count;
    if (rc != 0) {
        return rc;
    }
    if (it->lateral != NULL) { /* run again for each left row (tvf.h) */
        *op = engine__op_lateral(plan->stmt, *op, it->op, it->lateral, spec);
        return *op == NULL ? COMMON_ENOMEM : 0;
    }
    rc = engine__join_plan_lookup(plan, k, spec, rows, &lookup);
    if (rc != 0) {
        return rc;
    }
    *op = lookup != NULL ? engine__op_join_index(plan->stmt, *op, lookup, spec)
                         : engine__op_join(plan->stmt, *op, it->op, spec);
    return *op == NULL ? COMMON_ENOMEM : 0;
}

/* Whether every join is inner: SQLite may then join the items in any
 * order, and so may sinew, unless an item reads the items to its left
 * (a lateral table-valued function, tvf.h). */
static bool all_inner(const struct engine_join_plan *plan)
{
    for (size_t k = 1; k < plan->count; k++) {
        if (plan->items[k].ast->join != AST_JOIN_INNER ||
            plan->items[k].lateral != NULL) {
            return false;
        }
    }
    return true;
}

int engine__join_finish(struct engine_join_plan *plan,
                        const struct ast_expr *where, struct engine_op **op,
                        const struct ast_expr **residual)
{
    double rows;
    int rc;

    plan->reorder = all_inner(plan);
    rc = place_terms(plan, where);
    for (size_t k = 0; rc == 0 && k < plan->count; k++) {
        rc = plan_item_filter(plan, &plan->items[k]);
    }
    if (rc == 0 && plan->reorder) {
        rc = join_reorder(plan);
    }
    *op = plan->items[0].op;
    rows = plan->items[0].rows;
    for (size_t k = 1; rc == 0 && k < plan->count; k++) {
        rc = plan_join_op(plan, k, &rows, op);
    }
    if (rc == 0 && plan->reorder) {
        rc = restore_layout(plan, op);
    }
    if (rc == COMMON_ENOMEM) {
        return engine__db_error(plan->stmt->db, rc, "out of memory");
    }
    *residual = plan->residual;
    return rc;
}
