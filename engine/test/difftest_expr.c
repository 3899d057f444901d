/* SPDX-License-Identifier: MIT
 *
 * difftest_expr.c: random SQL expressions for the differential tester.
 *
 * An expression is built top-down with a depth budget. Leaves are
 * literals and column references (bare only where SQLite defines them: in
 * a row context, or in an aggregate query only the grouped columns and
 * inside aggregate arguments). Inner nodes are every operator SQLite has
 * (arithmetic, bit, comparison, IS [NOT] [DISTINCT FROM], AND/OR/NOT, ||,
 * COLLATE), CAST, CASE, IN lists and subqueries, BETWEEN, LIKE/GLOB with
 * ESCAPE, EXISTS, scalar subqueries that aggregate (so the answer does not
 * depend on scan order) and the built-in functions of the brief. Arguments
 * that would make SQLite allocate without bound (zeroblob sizes, printf
 * widths) are only small literals.
 */
#include "difftest.h"

#include <string.h>

struct func_shape {
    const char *name;
    int argc_min;
    int argc_max;
};

static const struct func_shape functions[] = {
    {"abs", 1, 1},   {"char", 0, 3},      {"coalesce", 2, 3},
    {"glob", 2, 2},  {"hex", 1, 1},       {"ifnull", 2, 2},
    {"iif", 3, 3},   {"instr", 2, 2},     {"length", 1, 1},
    {"like", 2, 3},  {"lower", 1, 1},     {"ltrim", 1, 2},
    {"max", 2, 3},   {"min", 2, 3},       {"nullif", 2, 2},
    {"quote", 1, 1}, {"replace", 3, 3},   {"round", 1, 2},
    {"rtrim", 1, 2}, {"sign", 1, 1},      {"substr", 2, 3},
    {"trim", 1, 2},  {"typeof", 1, 1},    {"unicode", 1, 1},
    {"upper", 1, 1}, {"substring", 2, 3},
};

static const char *const binary_ops[] = {
    "+",
    "-",
    "*",
    "/",
    "%",
    "||",
    "&",
    "|",
    "<<",
    ">>",
    "=",
    "==",
    "!=",
    "<>",
    "<",
    "<=",
    ">",
    ">=",
    "AND",
    "OR",
    "IS",
    "IS NOT",
    "IS DISTINCT FROM",
    "IS NOT DISTINCT FROM",
    "AND",
    "OR",
    "=",
    "<",
};

static const char *const cast_types[] = {
    "INTEGER", "REAL",       "TEXT",  "BLOB",    "NUMERIC",
    "INT",     "VARCHAR(5)", "FLOAT", "BOOLEAN", "CHARINT",
};

static const char *const printf_formats[] = {
    "'%d'",   "'%s'",    "'%5.2f'",  "'%x'",      "'%q'",   "'%Q'",  "'%e'",
    "'%g'",   "'%c'",    "'%-5s|'",  "'%05d'",    "'%.3s'", "'%i'",  "'%o'",
    "'%%%s'", "'%,d'",   "'%!.15g'", "'%.20f'",   "'%X'",   "'%w'",  "'%10.3e'",
    "'%+d'",  "'%d-%s'", "'%s%s'",   "'%.2g|%d'", "'% d'",  "'%#x'", "'%!g'",
};

static const char *const aggregates[] = {
    "count", "sum", "total", "avg", "min", "max", "group_concat", "count",
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static void gen_column(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                       struct dt_buf *out)
{
    const struct dt_table *t = ctx->table;
    int i;

    bool can_inner = t != NULL && (!ctx->is_aggregate || ctx->group_mask);

    if (ctx->outer != NULL && (!can_inner || dt_chance(g, 25))) {
        i = (int)dt_below(g, (uint64_t)ctx->outer->column_count);
        dt_buf_addf(out, "%s.%s", ctx->outer->name,
                    ctx->outer->columns[i].name);
        return;
    }
    if (ctx->is_aggregate) {
        do {
            i = (int)dt_below(g, (uint64_t)t->column_count);
        } while (((ctx->group_mask >> i) & 1u) == 0);
        dt_buf_add(out, t->columns[i].name);
        return;
    }
    i = (int)dt_below(g, (uint64_t)t->column_count);
    if (dt_chance(g, 10)) {
        dt_buf_addf(out, "%s.", t->name);
    }
    if (!ctx->has_no_rowid && dt_chance(g, 3)) {
        dt_buf_add(out, "rowid");
    } else {
        dt_buf_add(out, t->columns[i].name);
    }
}

static bool has_bare_columns(const struct dt_expr_ctx *ctx)
{
    if (ctx->table == NULL) {
        return ctx->outer != NULL;
    }
    return !ctx->is_aggregate || ctx->group_mask != 0;
}

static void gen_leaf(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                     struct dt_buf *out)
{
    if (has_bare_columns(ctx) && dt_chance(g, 55)) {
        gen_column(g, ctx, out);
    } else {
        dt_gen_literal(g, out);
    }
}

/* The row context of an aggregate's argument: every column is usable. */
static struct dt_expr_ctx row_context(const struct dt_expr_ctx *ctx)
{
    struct dt_expr_ctx row = *ctx;

    row.is_aggregate = false;
    row.group_mask = 0;
    return row;
}

static void gen_aggregate(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                          int depth, struct dt_buf *out)
{
    struct dt_expr_ctx row = row_context(ctx);
    const char *name = aggregates[dt_below(g, COUNT_OF(aggregates))];
    const char *shown;

    /* group_concat's text and the rounding (or integer overflow) of sum,
     * total and avg depend on the order rows arrive in, which an index
     * scan changes: those only where the scan is in rowid order. */
    if (ctx->is_order_visible &&
        (strcmp(name, "group_concat") == 0 || strcmp(name, "sum") == 0 ||
         strcmp(name, "total") == 0 || strcmp(name, "avg") == 0)) {
        name = dt_chance(g, 50) ? "max" : "count";
    }
    /* min and max keep the first of equal values (minmaxStep), so which of
     * 0, 0.0 and -0.0 (or 'a' and 'A' under NOCASE) they give shows the
     * scan order too, and SQLite may scan a covering index instead of the
     * table (whereLoopAddBtree): count there. The draws stay the same. */
    shown = ctx->is_order_visible &&
                    (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
                ? "count"
                : name;
    if (strcmp(name, "count") == 0 && dt_chance(g, 40)) {
        dt_buf_add(out, "count(*)");
    } else {
        bool is_distinct = dt_chance(g, 20);

        dt_buf_addf(out, "%s(%s", shown, is_distinct ? "DISTINCT " : "");
        dt_gen_expr(g, &row, depth - 1, out);
        if (strcmp(name, "group_concat") == 0 && !is_distinct &&
            dt_chance(g, 40)) {
            dt_buf_add(out, ", ");
            dt_gen_literal(g, out);
        }
        dt_buf_add(out, ")");
    }
    if (dt_chance(g, 15)) {
        dt_buf_add(out, " FILTER (WHERE ");
        dt_gen_expr(g, &row, depth - 1, out);
        dt_buf_add(out, ")");
    }
}

static void gen_like_operand(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                             int depth, struct dt_buf *out);

/* An ESCAPE: a single-character literal, rarely an invalid one. When and
 * whether SQLite reports a bad escape depends on where it factors
 * constant expressions out of the loop (sqlite3ExprCodeRunJustOnce),
 * which sinew does not copy; the message itself is pinned by the
 * regression scripts. */
static void gen_escape(struct dt_gen *g, struct dt_buf *out)
{
    static const char *const escapes[] = {"'\\'",       "'%'", "'a'", "'_'",
                                          "'\xc3\xa9'", "'1'", "NULL"};

    dt_buf_add(out, escapes[dt_below(g, sizeof(escapes) / sizeof(*escapes))]);
}

static void gen_args(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                     int argc, struct dt_buf *out)
{
    int i;

    for (i = 0; i < argc; i++) {
        dt_buf_add(out, i ? ", " : "");
        dt_gen_expr(g, ctx, depth - 1, out);
    }
}

static void gen_function(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                         int depth, struct dt_buf *out)
{
    uint64_t kind = dt_below(g, COUNT_OF(functions) + 3);
    const struct func_shape *f;
    int argc;

    if (kind == COUNT_OF(functions)) {
        dt_buf_addf(out, "zeroblob(%d)", (int)dt_below(g, 7) - 1);
        return;
    }
    if (kind > COUNT_OF(functions)) {
        const char *format =
            printf_formats[dt_below(g, COUNT_OF(printf_formats))];
        dt_buf_addf(out, "%s(%s", dt_chance(g, 50) ? "printf" : "format",
                    format);
        argc = (int)dt_below(g, 3);
        dt_buf_add(out, argc ? ", " : "");
        gen_args(g, ctx, depth, argc, out);
        dt_buf_add(out, ")");
        return;
    }
    f = &functions[kind];
    argc = f->argc_min +
           (int)dt_below(g, (uint64_t)(f->argc_max - f->argc_min + 1));
    dt_buf_addf(out, "%s(", f->name);
    if (strcmp(f->name, "like") == 0 || strcmp(f->name, "glob") == 0) {
        for (int i = 0; i < argc; i++) {
            dt_buf_add(out, i ? ", " : "");
            if (i == 2) {
                gen_escape(g, out);
            } else {
                gen_like_operand(g, ctx, depth - 1, out);
            }
        }
    } else {
        gen_args(g, ctx, depth, argc, out);
    }
    dt_buf_add(out, ")");
}

static void gen_case(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                     struct dt_buf *out)
{
    uint64_t i, n = 1 + dt_below(g, 3);

    dt_buf_add(out, "CASE ");
    if (!ctx->is_returning && dt_chance(g, 40)) {
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, " ");
    }
    for (i = 0; i < n; i++) {
        dt_buf_add(out, "WHEN ");
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, " THEN ");
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, " ");
    }
    if (dt_chance(g, 60)) {
        dt_buf_add(out, "ELSE ");
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, " ");
    }
    dt_buf_add(out, "END");
}

/* A subquery over a random table, correlated to the current table. Its
 * result never depends on scan order: it aggregates, or is used as a set
 * (IN, EXISTS). */
static void gen_subquery(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                         int depth, bool is_scalar, struct dt_buf *out)
{
    const struct dt_table *t =
        &g->schema.tables[dt_below(g, (uint64_t)g->schema.table_count)];
    struct dt_expr_ctx sub = {.table = t, .is_order_visible = t->has_index};

    if (ctx->table != NULL && ctx->table != t && !ctx->is_aggregate) {
        sub.outer = ctx->table;
    }
    dt_buf_add(out, "(SELECT ");
    if (is_scalar) {
        /* An aggregate whose arguments read only the outer query's
         * columns belongs to the outer query (resolve.c), which then
         * aggregates, its other columns taken from whichever row SQLite's
         * plan reads last: the arguments read the subquery's own table
         * (engine_correlated tests the other case). */
        struct dt_expr_ctx own = sub;

        own.outer = NULL;
        own.is_aggregate = true;
        gen_aggregate(g, &own, depth - 1, out);
    } else {
        dt_gen_expr(g, &sub, depth - 1, out);
    }
    dt_buf_addf(out, " FROM %s", t->name);
    if (dt_chance(g, 60)) {
        dt_buf_add(out, " WHERE ");
        dt_gen_expr(g, &sub, depth - 1, out);
    }
    dt_buf_add(out, ")");
}

static void gen_in(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                   struct dt_buf *out)
{
    dt_gen_expr(g, ctx, depth - 1, out);
    dt_buf_add(out, dt_chance(g, 30) ? " NOT IN " : " IN ");
    /* "x IN (SELECT ...)" applies the comparison affinity to x's register
     * in place; in an aggregate query that register is also the output
     * of x (a grouped column, count(*)), which SQLite then returns
     * converted ('5' for count(*)): an accepted quirk, not written. */
    if (!ctx->is_aggregate && dt_chance(g, 30)) {
        gen_subquery(g, ctx, depth, false, out);
        return;
    }
    /* SQLite folds "x IN ()" to a constant before it looks for
     * aggregates, so "count(*) IN ()" would turn an aggregate query into a
     * row query; the empty list is only written where that cannot show. */
    dt_buf_add(out, "(");
    gen_args(g, ctx, depth, (int)dt_below(g, 4) + (ctx->is_aggregate ? 1 : 0),
             out);
    dt_buf_add(out, ")");
}

/* An operand of LIKE or GLOB. The oracle's libsqlite3 (Debian's) is built
 * with SQLITE_LIKE_DOESNT_MATCH_BLOBS, under which a BLOB operand never
 * matches, while SQLite's default build (and sinew) match its bytes as
 * text; operands are cast to TEXT so that only the default's rule shows
 * (docs/testing.md). */
static void gen_like_operand(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                             int depth, struct dt_buf *out)
{
    dt_buf_add(out, "CAST(");
    dt_gen_expr(g, ctx, depth, out);
    dt_buf_add(out, " AS TEXT)");
}

static void gen_like(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                     struct dt_buf *out)
{
    bool is_glob = dt_chance(g, 30);

    gen_like_operand(g, ctx, depth - 1, out);
    dt_buf_add(out, dt_chance(g, 20) ? " NOT" : "");
    dt_buf_add(out, is_glob ? " GLOB " : " LIKE ");
    if (dt_chance(g, 50)) {
        static const char *const patterns[] = {
            "'a%'",     "'%b'",    "'_'",    "'%'",          "'A_'",
            "'[a-c]*'", "'*1*'",   "'a\\%'", "'%\xc3\xa9%'", "'?b'",
            "'%1%'",    "'[^a]*'", "''",
        };
        dt_buf_add(out, patterns[dt_below(g, COUNT_OF(patterns))]);
    } else {
        gen_like_operand(g, ctx, depth - 1, out);
    }
    if (!is_glob && dt_chance(g, 20)) {
        dt_buf_add(out, " ESCAPE ");
        gen_escape(g, out);
    }
}

static void gen_binary(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                       int depth, struct dt_buf *out)
{
    bool is_paren = dt_chance(g, 85);

    dt_buf_add(out, is_paren ? "(" : "");
    dt_gen_expr(g, ctx, depth - 1, out);
    dt_buf_addf(out, " %s ", binary_ops[dt_below(g, COUNT_OF(binary_ops))]);
    dt_gen_expr(g, ctx, depth - 1, out);
    dt_buf_add(out, is_paren ? ")" : "");
}

static void gen_unary(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                      int depth, struct dt_buf *out)
{
    static const char *const prefixes[] = {"-", "+", "NOT ", "~", "- "};
    static const char *const suffixes[] = {" ISNULL",  " NOTNULL",
                                           " IS NULL", " IS NOT NULL",
                                           " IS TRUE", " IS NOT FALSE"};

    dt_buf_add(out, "(");
    if (dt_chance(g, 70)) {
        dt_buf_add(out, prefixes[dt_below(g, COUNT_OF(prefixes))]);
        dt_gen_expr(g, ctx, depth - 1, out);
    } else {
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, suffixes[dt_below(g, COUNT_OF(suffixes))]);
    }
    dt_buf_add(out, ")");
}

static void gen_special(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                        int depth, uint64_t kind, struct dt_buf *out)
{
    dt_buf_add(out, "(");
    if (kind == 0) {
        dt_buf_add(out, "CAST(");
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_addf(out, " AS %s)",
                    cast_types[dt_below(g, COUNT_OF(cast_types))]);
    } else if (kind == 1) {
        gen_case(g, ctx, depth, out);
    } else if (kind == 2) {
        gen_in(g, ctx, depth, out);
    } else if (kind == 3 && !ctx->is_returning) {
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, dt_chance(g, 25) ? " NOT BETWEEN " : " BETWEEN ");
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_add(out, " AND ");
        dt_gen_expr(g, ctx, depth - 1, out);
    } else if (kind == 3 || kind == 4) {
        gen_like(g, ctx, depth, out);
    } else if (kind == 5) {
        static const char *const names[] = {"NOCASE", "RTRIM", "BINARY"};
        dt_gen_expr(g, ctx, depth - 1, out);
        dt_buf_addf(out, " COLLATE %s", names[dt_below(g, 3)]);
    } else if (kind == 6) {
        dt_buf_add(out, dt_chance(g, 30) ? "NOT EXISTS " : "EXISTS ");
        gen_subquery(g, ctx, depth, false, out);
    } else {
        gen_subquery(g, ctx, depth, true, out);
    }
    dt_buf_add(out, ")");
}

void dt_gen_expr(struct dt_gen *g, const struct dt_expr_ctx *ctx, int depth,
                 struct dt_buf *out)
{
    uint64_t kind = dt_below(g, 100);

    if (depth <= 0 || kind < 25) {
        if (ctx->is_aggregate && dt_chance(g, 60)) {
            gen_aggregate(g, ctx, depth, out);
        } else {
            gen_leaf(g, ctx, out);
        }
    } else if (kind < 45) {
        gen_binary(g, ctx, depth, out);
    } else if (kind < 55) {
        gen_unary(g, ctx, depth, out);
    } else if (kind < 75) {
        gen_function(g, ctx, depth, out);
    } else if (kind < 78 && ctx->is_aggregate) {
        gen_aggregate(g, ctx, depth, out);
    } else {
        gen_special(g, ctx, depth, dt_below(g, depth >= 2 ? 8 : 6), out);
    }
}

void dt_gen_where(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                  bool keep_rowid_order, struct dt_buf *out)
{
    bool is_wrapped = keep_rowid_order && ctx->table->has_index;

    dt_buf_add(out, is_wrapped ? " WHERE CASE WHEN " : " WHERE ");
    dt_gen_expr(g, ctx, g->depth_max, out);
    dt_buf_add(out, is_wrapped ? " THEN 1 ELSE 0 END" : "");
}
