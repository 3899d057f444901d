/* SPDX-License-Identifier: MIT
 *
 * difftest_gen_more.c: the generator's common table expressions (WITH,
 * WITH RECURSIVE) and window functions (difftest.h).
 *
 * Each statement is written so that SQLite defines its result whatever
 * plan it picks:
 * - A CTE reads a table's columns unchanged (with their types and
 *   collations, which its users inherit), so the expressions over it are
 *   the generator's own, over a table of the same shape.
 * - A recursive CTE counts from a seed by a step with a bound (and maybe
 *   a LIMIT): SQLite runs it as a FIFO queue (select.c
 *   generateWithRecursiveQuery), so its rows have an order, compared
 *   exactly when nothing else reorders them.
 * - A window's ORDER BY ends with the rowid, so every row has a place in
 *   its partition and order-sensitive functions (row_number, lag,
 *   first_value, frames of ROWS) have one answer; the rows are compared
 *   as a multiset, each carrying its rowid. Sums over frames add small
 *   integers ("CAST(x AS INTEGER) % 1000"): SQLite 3.40 adds and removes
 *   values as the frame slides (sumInverse), so a REAL or huge sum
 *   depends on the order of the additions, which another correct
 *   evaluation need not share.
 */
#include <stdio.h>
#include <string.h>

#include "difftest.h"

static const struct dt_table *pick_table(struct dt_gen *g)
{
    return &g->schema.tables[dt_below(g, (uint64_t)g->schema.table_count)];
}

/* t's shape under another name, its columns renamed v0.. when renamed. */
static void cte_shape(const struct dt_table *t, const char *name, bool renamed,
                      struct dt_table *out)
{
    *out = *t;
    snprintf(out->name, sizeof(out->name), "%s", name);
    for (int i = 0; renamed && i < t->column_count; i++) {
        out->columns[i].name[0] = 'v';
        out->columns[i].name[1] = (char)('0' + i); /* i < DT_COLUMNS_MAX */
        out->columns[i].name[2] = '\0';
    }
}

/* "name[(v0, ...)] AS [NOT ][MATERIALIZED ](SELECT * FROM t [WHERE])". */
static void cte_definition(struct dt_gen *g, const struct dt_table *t,
                           const struct dt_table *shape, const char *source,
                           struct dt_buf *out)
{
    static const char *const hints[] = {"", "", "MATERIALIZED ",
                                        "NOT MATERIALIZED "};
    struct dt_expr_ctx ctx = {.table = t, .is_order_visible = t->has_index};

    dt_buf_add(out, shape->name);
    if (shape->columns[0].name[0] == 'v') {
        for (int i = 0; i < shape->column_count; i++) {
            dt_buf_addf(out, "%s%s", i ? ", " : "(", shape->columns[i].name);
        }
        dt_buf_add(out, ")");
    }
    dt_buf_addf(out, " AS %s(SELECT * FROM %s", hints[dt_below(g, 4)], source);
    if (dt_chance(g, 60)) {
        dt_gen_where(g, &ctx, false, out);
    }
    dt_buf_add(out, ")");
}

/* A column of t compared under BINARY, or -1: a join of columns whose
 * collations differ is a SQLite quirk the generator leaves out (see
 * join_term in difftest_gen.c). */
static int binary_column(struct dt_gen *g, const struct dt_table *t)
{
    int start = (int)dt_below(g, (uint64_t)t->column_count);

    for (int k = 0; k < t->column_count; k++) {
        int i = (start + k) % t->column_count;

        if (t->columns[i].collate == 0 || t->columns[i].collate == 3) {
            return i;
        }
    }
    return -1;
}

/* WITH x AS (...) [, y AS (SELECT * FROM x ...)] SELECT ... FROM x or y,
 * sometimes joined with a table, sometimes aggregated. */
static void gen_with_select(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = pick_table(g);
    const struct dt_table *other = pick_table(g);
    struct dt_table x, y;
    const struct dt_table *read = &x;
    struct dt_expr_ctx ctx = {.has_no_rowid = true};

    cte_shape(t, "x", dt_chance(g, 30), &x);
    dt_buf_add(&s->sql, "WITH ");
    cte_definition(g, t, &x, t->name, &s->sql);
    if (dt_chance(g, 30)) {
        cte_shape(&x, "y", false, &y);
        dt_buf_add(&s->sql, ", ");
        cte_definition(g, &x, &y, "x", &s->sql);
        read = &y;
    }
    ctx.table = read;
    dt_buf_add(&s->sql, " SELECT ");
    if (dt_chance(g, 25) && binary_column(g, read) >= 0 &&
        binary_column(g, other) >= 0) {
        dt_buf_addf(&s->sql, "count(*), count(%s.%s) FROM %s JOIN %s ON ",
                    read->name, read->columns[0].name, read->name, other->name);
        dt_buf_addf(&s->sql, "%s.%s = %s.%s", read->name,
                    read->columns[binary_column(g, read)].name, other->name,
                    other->columns[binary_column(g, other)].name);
        return;
    }
    for (int i = 0, n = 1 + (int)dt_below(g, 3); i < n; i++) {
        dt_buf_add(&s->sql, i ? ", " : "");
        dt_gen_expr(g, &ctx, g->depth_max, &s->sql);
    }
    dt_buf_addf(&s->sql, " FROM %s", read->name);
    if (dt_chance(g, 50)) {
        dt_gen_where(g, &ctx, false, &s->sql);
    }
}

/* WITH RECURSIVE c(n) AS (seed UNION [ALL] SELECT step FROM c WHERE bound
 * [LIMIT]) and a use of c: its rows in queue order, joined with a table,
 * or aggregated. */
static void gen_with_recursive(struct dt_gen *g, struct dt_stmt *s)
{
    static const char *const seeds[] = {"1",   "0",    "-3", "2.5",
                                        "'1'", "NULL", "5"};
    static const char *const steps[] = {"n + 1", "n + 2",   "n * 2",
                                        "n - 1", "n + 0.5", "n % 4 + 1"};
    const struct dt_table *t = pick_table(g);
    bool all = dt_chance(g, 60);
    uint64_t use = dt_below(g, 4);

    bool values = dt_chance(g, 50);
    int bound = 2 + (int)dt_below(g, 30);

    dt_buf_addf(&s->sql,
                "WITH RECURSIVE c(n) AS (%s%s%s %s SELECT %s FROM c WHERE n < "
                "%d AND n > -%d",
                values ? "VALUES(" : "SELECT ", seeds[dt_below(g, 7)],
                values ? ")" : "", all ? "UNION ALL" : "UNION",
                steps[dt_below(g, 6)], bound, bound);
    /* Without a LIMIT a UNION ALL of "n % 4 + 1" never ends. */
    if (dt_chance(g, 30) || all) {
        dt_buf_addf(&s->sql, " LIMIT %d", 1 + (int)dt_below(g, 40));
    }
    dt_buf_add(&s->sql, ") ");
    s->order = DT_ORDER_EXACT;
    if (use == 0) {
        dt_buf_addf(&s->sql, "SELECT c.n, %s.%s FROM c JOIN %s ON %s.%s = c.n",
                    t->name, t->columns[0].name, t->name, t->name,
                    t->columns[dt_below(g, (uint64_t)t->column_count)].name);
        s->order = DT_ORDER_SET;
    } else if (use == 1) {
        dt_buf_add(&s->sql, "SELECT count(*), sum(n), max(n), min(n) FROM c");
    } else {
        dt_buf_add(&s->sql, "SELECT n, typeof(n) FROM c");
    }
}

/* DELETE or UPDATE whose WHERE reads a CTE of the same table. */
static void gen_with_dml(struct dt_gen *g, struct dt_stmt *s)
{
    int index = (int)dt_below(g, (uint64_t)g->schema.table_count);
    const struct dt_table *t = &g->schema.tables[index];
    const char *column =
        t->columns[dt_below(g, (uint64_t)t->column_count)].name;
    struct dt_table x;

    s->is_dml = true;
    s->table = index;
    cte_shape(t, "x", false, &x);
    dt_buf_add(&s->sql, "WITH ");
    cte_definition(g, t, &x, t->name, &s->sql);
    if (dt_chance(g, 50)) {
        dt_buf_addf(&s->sql, " DELETE FROM %s WHERE %s IN (SELECT %s FROM x)",
                    t->name, column, column);
    } else {
        dt_buf_addf(&s->sql,
                    " UPDATE %s SET %s = (SELECT count(*) FROM x) WHERE "
                    "rowid IN (SELECT rowid FROM %s ORDER BY rowid LIMIT 2)",
                    t->name, column, t->name);
    }
}

void dt_gen_select_cte(struct dt_gen *g, struct dt_stmt *s)
{
    uint64_t kind = dt_below(g, 10);

    if (kind < 5) {
        gen_with_select(g, s);
    } else if (kind < 9) {
        gen_with_recursive(g, s);
    } else {
        gen_with_dml(g, s);
    }
}

/* ---- window functions ---- */

static void window_function(struct dt_gen *g, const struct dt_table *t,
                            bool ordered, struct dt_buf *out)
{
    static const char *const ranking[] = {
        "row_number()",   "rank()",      "dense_rank()",
        "percent_rank()", "cume_dist()",
    };
    static const char *const sums[] = {"sum", "total", "avg", "count"};
    const char *any = t->columns[dt_below(g, (uint64_t)t->column_count)].name;
    uint64_t kind = dt_below(g, 10);

    /* Without ORDER BY every row of a partition is a peer of the others:
     * rank() and its kin do not depend on the order the rows come in,
     * row_number() and ntile() do (and SQLite's comes from its plan). */
    if (kind < 3) {
        dt_buf_add(out, ranking[ordered ? dt_below(g, 5) : 1 + dt_below(g, 4)]);
    } else if (kind == 3 && ordered) {
        dt_buf_addf(out, "ntile(%d)", 1 + (int)dt_below(g, 4));
    } else if (kind < 6 && ordered) {
        dt_buf_addf(out, "%s(%s", dt_chance(g, 50) ? "lag" : "lead", any);
        if (dt_chance(g, 50)) {
            dt_buf_addf(out, ", %d", (int)dt_below(g, 3));
            if (dt_chance(g, 50)) {
                dt_buf_add(out, ", ");
                dt_gen_literal(g, out);
            }
        }
        dt_buf_add(out, ")");
    } else if (kind < 8 && ordered) {
        uint64_t which = dt_below(g, 3);

        dt_buf_addf(out, "%s(%s",
                    which == 0   ? "first_value"
                    : which == 1 ? "last_value"
                                 : "nth_value",
                    any);
        dt_buf_addf(out, which == 2 ? ", %d)" : ")", 1 + (int)dt_below(g, 3));
    } else if (kind == 8 && ordered) {
        /* Of equal values (0 and 0.0) min and max keep the one their
         * frame meets first: only where the rows have an order. */
        dt_buf_addf(out, "%s(%s)", dt_chance(g, 50) ? "min" : "max", any);
    } else if (dt_chance(g, 80)) {
        /* Small integers: exact however the frame's sum is kept. */
        dt_buf_addf(out, "%s(CAST(%s AS INTEGER) %% 1000)",
                    sums[dt_below(g, 4)], any);
    } else {
        dt_buf_add(out, "count(*)");
    }
}

static void frame_bound(struct dt_gen *g, bool start, bool offsets,
                        struct dt_buf *out)
{
    uint64_t kind = dt_below(g, offsets ? 4 : 2);

    if (kind == 0) {
        dt_buf_add(out, start ? "UNBOUNDED PRECEDING" : "UNBOUNDED FOLLOWING");
    } else if (kind == 1) {
        dt_buf_add(out, "CURRENT ROW");
    } else {
        dt_buf_addf(out, "%d %s", (int)dt_below(g, 3),
                    kind == 2 ? "PRECEDING" : "FOLLOWING");
    }
}

/* A frame: ROWS or GROUPS with any bounds, RANGE without offsets (an
 * offset needs a single numeric ORDER BY term), maybe EXCLUDE. A start
 * after the end is an empty frame in SQLite, not an error, except for the
 * pairs it rejects by syntax ("CURRENT ROW ... n PRECEDING" parses): left
 * to the comparison, errors included. */
static void window_frame(struct dt_gen *g, struct dt_buf *out)
{
    static const char *const units[] = {" ROWS ", " GROUPS ", " RANGE "};
    static const char *const excludes[] = {" EXCLUDE NO OTHERS",
                                           " EXCLUDE CURRENT ROW",
                                           " EXCLUDE GROUP", " EXCLUDE TIES"};
    uint64_t unit = dt_below(g, 3);

    dt_buf_add(out, units[unit]);
    dt_buf_add(out, "BETWEEN ");
    frame_bound(g, true, unit != 2, out);
    dt_buf_add(out, " AND ");
    frame_bound(g, false, unit != 2, out);
    if (dt_chance(g, 30)) {
        dt_buf_add(out, excludes[dt_below(g, 4)]);
    }
}

/* "(PARTITION BY col ORDER BY col, rowid frame)", parts maybe left out. */
static void window_definition(struct dt_gen *g, const struct dt_table *t,
                              bool ordered, struct dt_buf *out)
{
    dt_buf_add(out, "(");
    if (dt_chance(g, 50)) {
        dt_buf_addf(out, "PARTITION BY %s ",
                    t->columns[dt_below(g, (uint64_t)t->column_count)].name);
    }
    if (ordered) {
        dt_buf_addf(out, "ORDER BY %s%s, rowid",
                    t->columns[dt_below(g, (uint64_t)t->column_count)].name,
                    dt_chance(g, 30) ? " DESC" : "");
        if (dt_chance(g, 50)) {
            window_frame(g, out);
        }
    }
    dt_buf_add(out, ")");
}

/* SELECT rowid, f() OVER (...), ... FROM t [WHERE]: one to three window
 * functions, inline or through a WINDOW clause. */
void dt_gen_select_window(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = pick_table(g);
    bool named = dt_chance(g, 25);
    bool ordered = dt_chance(g, 80);
    struct dt_buf definition;

    dt_buf_init(&definition);
    window_definition(g, t, ordered, &definition);
    dt_buf_add(&s->sql, "SELECT rowid");
    for (int i = 0, n = 1 + (int)dt_below(g, 3); i < n; i++) {
        dt_buf_add(&s->sql, ", ");
        window_function(g, t, ordered, &s->sql);
        if (named) {
            dt_buf_add(&s->sql, " OVER w");
        } else {
            dt_buf_addf(&s->sql, " OVER %s", definition.data);
        }
    }
    dt_buf_addf(&s->sql, " FROM %s", t->name);
    /* Not a random WHERE: SQLite 3.40 filters some rows differently when
     * a window function is present (docs/engine.md, Known differences). */
    if (dt_chance(g, 50)) {
        dt_buf_addf(&s->sql, " WHERE rowid %% %d <> %d",
                    2 + (int)dt_below(g, 3), (int)dt_below(g, 2));
    }
    if (named) {
        dt_buf_addf(&s->sql, " WINDOW w AS %s", definition.data);
    }
    dt_buf_free(&definition);
}
