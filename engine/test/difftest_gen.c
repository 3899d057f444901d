/* SPDX-License-Identifier: MIT
 *
 * difftest_gen.c: the differential tester's SQL generator.
 *
 * From a seeded splitmix64 stream it writes random schemas (declared types
 * of every affinity and some odd ones, NOT NULL with DEFAULT, UNIQUE,
 * COLLATE NOCASE/RTRIM, INTEGER PRIMARY KEY, CHECK, composite keys), rows
 * of every storage class with SQLite's edge values, and statements: queries
 * with random expressions, aggregates, GROUP BY/HAVING, ORDER BY, LIMIT,
 * subqueries, compound SELECTs, joins of two or three tables (comma,
 * CROSS, INNER, LEFT, RIGHT, FULL; ON with equalities and other terms;
 * every column qualified by its item's alias), and DML with conflicts
 * and RETURNING.
 *
 * It writes only SQL whose result SQLite defines: LIMIT only after an
 * ORDER BY over every output column, no bare columns in aggregate queries,
 * no random(), and (where the row order of a scan would show, as in
 * group_concat, DML and INSERT ... SELECT) a WHERE clause SQLite cannot
 * answer from an index, so both engines scan in rowid order.
 */
#include "difftest.h"

#include <string.h>

/* Literals, as SQL text, with SQLite's edge cases. */
static const char *const literals[] = {
    "NULL",
    "0",
    "-0.0",
    "0.0",
    "1",
    "-1",
    "2",
    "3",
    "10",
    "-7",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775807",
    "9007199254740993",
    "9007199254740991",
    "9007199254740992.0",
    "1e308",
    "-1e308",
    "1e-308",
    "4.9e-324",
    "1.5",
    "-2.5",
    "0.1",
    "3.0",
    "1e20",
    "123456789012345678901234567890",
    "0.5",
    "100",
    "-100",
    "2.0e0",
    "''",
    "' 12 '",
    "'1e5'",
    "'abc'",
    "'ABC'",
    "'a '",
    "'a'",
    "'A'",
    "'\xc3\xa9'",
    "'\xc3\x89'",
    "x''",
    "x'00ff'",
    "'12'",
    "'-3.5'",
    "'0x10'",
    "'1.0'",
    "' '",
    "'%'",
    "'_'",
    "'a%b'",
    "'\\'",
    "'ab'",
    "'9223372036854775808'",
    "'inf'",
    "x'41'",
    "'12abc'",
    "'3.0e0'",
    "'-0'",
    "'+5'",
    "'  7'",
    "1e-5",
    "'A_B'",
    "'b'",
    "'Ab '",
    "'\xe6\x97\xa5\xe6\x9c\xac'",
    "x'c3a9'",
    "'1'",
    "'0'",
    "'-1'",
    "'9007199254740993'",
    "'1e308'",
    "'abc%'",
    "'x'",
    "'a_c'",
};

#define LITERAL_COUNT (sizeof(literals) / sizeof(literals[0]))

static const char *const declared_types[] = {
    "INTEGER",        "INT",     "TEXT",          "REAL",   "NUMERIC",
    "BLOB",           "",        "VARCHAR(10)",   "DOUBLE", "CHARINT",
    "FLOATING POINT", "BOOLEAN", "DECIMAL(10,5)", "STRING", "CLOB",
    "BIGINT",         "DATE",    "ANY",
};

#define TYPE_COUNT (sizeof(declared_types) / sizeof(declared_types[0]))

static const char *const collations[] = {"", "NOCASE", "RTRIM", "BINARY"};

uint64_t dt_below(struct dt_gen *g, uint64_t bound)
{
    return common_test_rng_below(&g->rng, bound);
}

bool dt_chance(struct dt_gen *g, unsigned percent)
{
    return dt_below(g, 100) < percent;
}

static const char *pick(struct dt_gen *g, const char *const *list, size_t count)
{
    return list[dt_below(g, count)];
}

#define PICK(g, array) pick((g), (array), sizeof(array) / sizeof((array)[0]))

/* A short text made of letters, digits, dots, spaces and 'é'. */
static void gen_random_text(struct dt_gen *g, struct dt_buf *out)
{
    static const char *const parts[] = {"a",        "A", "b", "B", "1",
                                        "2",        ".", "e", " ", "-",
                                        "\xc3\xa9", "_", "%", "0", "z"};
    uint64_t i, n = dt_below(g, 5);

    dt_buf_add(out, "'");
    for (i = 0; i < n; i++) {
        dt_buf_add(out, PICK(g, parts));
    }
    dt_buf_add(out, "'");
}

void dt_gen_literal(struct dt_gen *g, struct dt_buf *out)
{
    uint64_t kind = dt_below(g, 10);

    if (kind < 6) {
        dt_buf_add(out, literals[dt_below(g, LITERAL_COUNT)]);
    } else if (kind < 8) {
        dt_buf_addf(out, "%d", (int)dt_below(g, 25) - 5);
    } else if (kind < 9) {
        dt_buf_addf(out, "%d.%d", (int)dt_below(g, 20) - 10,
                    (int)dt_below(g, 100));
    } else {
        gen_random_text(g, out);
    }
}

/* A DEFAULT for a NOT NULL column: any literal but NULL. */
static void gen_default(struct dt_gen *g, struct dt_buf *out)
{
    struct dt_buf literal;

    dt_buf_init(&literal);
    do {
        dt_buf_clear(&literal);
        dt_gen_literal(g, &literal);
    } while (strcmp(literal.data, "NULL") == 0);
    dt_buf_add(out, literal.data);
    dt_buf_free(&literal);
}

static void gen_column_def(struct dt_gen *g, const struct dt_column *c,
                           struct dt_buf *out)
{
    dt_buf_addf(out, "%s", c->name);
    if (c->is_ipk) {
        dt_buf_add(out, " INTEGER PRIMARY KEY");
        return;
    }
    if (c->type[0] != '\0') {
        dt_buf_addf(out, " %s", c->type);
    }
    if (c->is_notnull) {
        dt_buf_add(out, " NOT NULL DEFAULT ");
        gen_default(g, out);
    } else if (dt_chance(g, 15)) {
        dt_buf_add(out, " DEFAULT ");
        dt_gen_literal(g, out);
    }
    if (c->is_unique) {
        dt_buf_add(out, " UNIQUE");
    }
    if (c->collate != 0) {
        dt_buf_addf(out, " COLLATE %s", collations[c->collate]);
    }
    if (dt_chance(g, 5)) {
        dt_buf_addf(out, " CHECK(%s <> 'zzz')", c->name);
    }
}

static void gen_table_shape(struct dt_gen *g, struct dt_table *t, int index)
{
    int i;

    memset(t, 0, sizeof(*t));
    t->name[0] = 't';
    t->name[1] = (char)('1' + index);
    t->column_count = 1 + (int)dt_below(g, DT_COLUMNS_MAX);
    for (i = 0; i < t->column_count; i++) {
        struct dt_column *c = &t->columns[i];

        c->name[0] = (char)('a' + i);
        c->type = declared_types[dt_below(g, TYPE_COUNT)];
        c->is_ipk = i == 0 && dt_chance(g, 25);
        if (c->is_ipk) {
            continue;
        }
        c->collate = dt_chance(g, 30) ? 1 + (int)dt_below(g, 3) : 0;
        c->is_notnull = dt_chance(g, 15);
        c->is_unique = dt_chance(g, 12);
        t->has_index |= c->is_unique;
    }
    if (t->column_count >= 2 && dt_chance(g, 10)) {
        t->has_multi_key = true;
        t->has_index = true;
    }
}

void dt_gen_schema(struct dt_gen *g, struct dt_buf *out)
{
    int ti, i;

    g->schema.table_count = 1 + (int)dt_below(g, DT_TABLES_MAX);
    for (ti = 0; ti < g->schema.table_count; ti++) {
        struct dt_table *t = &g->schema.tables[ti];

        gen_table_shape(g, t, ti);
        dt_buf_addf(out, "CREATE TABLE %s(", t->name);
        for (i = 0; i < t->column_count; i++) {
            dt_buf_add(out, i ? ", " : "");
            gen_column_def(g, &t->columns[i], out);
        }
        if (t->has_multi_key) {
            dt_buf_addf(out, ", %s(%s, %s)",
                        dt_chance(g, 50) ? "UNIQUE" : "PRIMARY KEY",
                        t->columns[t->column_count - 2].name,
                        t->columns[t->column_count - 1].name);
        }
        dt_buf_add(out, ");\n");
    }
}

/* A value for column c of an INSERT: mostly literals; an INTEGER PRIMARY
 * KEY gets small integers or NULL so that no rowid reaches INT64_MAX,
 * after which SQLite picks new rowids at random. */
static void gen_value_for(struct dt_gen *g, const struct dt_column *c,
                          struct dt_buf *out)
{
    if (c->is_ipk) {
        if (dt_chance(g, 85)) {
            dt_buf_addf(out, "%d", (int)dt_below(g, 40) - 3);
        } else {
            dt_buf_add(out, dt_chance(g, 50) ? "NULL" : "'7'");
        }
        return;
    }
    dt_gen_literal(g, out);
}

static void gen_row(struct dt_gen *g, const struct dt_table *t,
                    struct dt_buf *out)
{
    int i;

    dt_buf_add(out, "(");
    for (i = 0; i < t->column_count; i++) {
        dt_buf_add(out, i ? ", " : "");
        gen_value_for(g, &t->columns[i], out);
    }
    dt_buf_add(out, ")");
}

void dt_gen_insert_data(struct dt_gen *g, int table, struct dt_buf *out)
{
    const struct dt_table *t = &g->schema.tables[table];
    uint64_t i, n = 1 + dt_below(g, 6);

    dt_buf_addf(out, "INSERT OR IGNORE INTO %s VALUES ", t->name);
    for (i = 0; i < n; i++) {
        dt_buf_add(out, i ? ", " : "");
        gen_row(g, t, out);
    }
}

static const char *const conflicts[] = {
    "",          "",         "",           "OR ROLLBACK ",
    "OR ABORT ", "OR FAIL ", "OR IGNORE ", "OR REPLACE ",
};

static const struct dt_table *random_table(struct dt_gen *g)
{
    return &g->schema.tables[dt_below(g, (uint64_t)g->schema.table_count)];
}

/* ORDER BY over every one of column_count outputs, then maybe LIMIT. */
static void gen_order_by(struct dt_gen *g, int column_count, struct dt_stmt *s)
{
    int i;

    s->order = DT_ORDER_KEYED;
    dt_buf_add(&s->sql, " ORDER BY ");
    for (i = 0; i < column_count; i++) {
        dt_buf_addf(&s->sql, "%s%d", i ? ", " : "", i + 1);
        if (dt_chance(g, 15)) {
            dt_buf_addf(&s->sql, " COLLATE %s", collations[1 + dt_below(g, 3)]);
        }
        dt_buf_add(&s->sql, dt_chance(g, 30) ? " DESC" : "");
        if (dt_chance(g, 15)) {
            dt_buf_add(&s->sql,
                       dt_chance(g, 50) ? " NULLS FIRST" : " NULLS LAST");
        }
    }
    if (dt_chance(g, 30)) {
        s->has_limit = true;
        dt_buf_addf(&s->sql, " LIMIT %d", (int)dt_below(g, 6) - 1);
        if (dt_chance(g, 40)) {
            s->has_offset = true;
            dt_buf_addf(&s->sql, " OFFSET %d", (int)dt_below(g, 4));
        }
    }
}

static int gen_result_list(struct dt_gen *g, const struct dt_expr_ctx *ctx,
                           struct dt_buf *out)
{
    int i, n = 1 + (int)dt_below(g, 4);

    for (i = 0; i < n; i++) {
        dt_buf_add(out, i ? ", " : "");
        dt_gen_expr(g, ctx, g->depth_max, out);
    }
    return n;
}

/* SELECT [DISTINCT] exprs FROM t [WHERE] [ORDER BY [LIMIT]]; the source
 * is sometimes a subquery named as the table. */
static void gen_select_rows(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = random_table(g);
    struct dt_expr_ctx ctx = {.table = t, .is_order_visible = t->has_index};
    bool is_sub = dt_chance(g, 15);
    int n;

    /* DISTINCT keeps the first of rows that compare equal (1 and 1.0, 'a'
     * and 'A' under NOCASE); which is first depends on the scan, so it is
     * used only where no index can change that. */
    dt_buf_add(&s->sql, !t->has_index && dt_chance(g, 15) ? "SELECT DISTINCT "
                                                          : "SELECT ");
    if (is_sub) {
        ctx.has_no_rowid = true;
    }
    n = gen_result_list(g, &ctx, &s->sql);
    if (is_sub) {
        dt_buf_addf(&s->sql, " FROM (SELECT * FROM %s", t->name);
        if (dt_chance(g, 50)) {
            dt_gen_where(g, &ctx, false, &s->sql);
        }
        dt_buf_addf(&s->sql, ") AS %s", t->name);
    } else {
        dt_buf_addf(&s->sql, " FROM %s", t->name);
    }
    if (dt_chance(g, 70)) {
        dt_gen_where(g, &ctx, false, &s->sql);
    }
    if (dt_chance(g, 50)) {
        gen_order_by(g, n, s);
    }
}

static void gen_group_list(const struct dt_table *t, unsigned mask,
                           struct dt_buf *out)
{
    const char *separator = "";
    int i;

    for (i = 0; i < t->column_count; i++) {
        if ((mask >> i) & 1u) {
            dt_buf_addf(out, "%s%s", separator, t->columns[i].name);
            separator = ", ";
        }
    }
}

/* Whether a declared type has BLOB affinity (datatype3 §3.1: no INT,
 * CHAR, CLOB, TEXT, REAL, FLOA or DOUB, and BLOB or nothing). */
static bool is_blob_affinity(const char *type)
{
    return strstr(type, "INT") == NULL && strstr(type, "CHAR") == NULL &&
           strstr(type, "CLOB") == NULL && strstr(type, "TEXT") == NULL &&
           (strstr(type, "BLOB") != NULL || type[0] == '\0');
}

/* Whether a declared type has REAL affinity (REAL, FLOA or DOUB, no INT). */
static bool is_real_affinity(const char *type)
{
    return strstr(type, "INT") == NULL && strstr(type, "CHAR") == NULL &&
           strstr(type, "CLOB") == NULL && strstr(type, "TEXT") == NULL &&
           (strstr(type, "REAL") != NULL || strstr(type, "FLOA") != NULL ||
            strstr(type, "DOUB") != NULL);
}

/* A column whose values that compare equal are also identical: BINARY
 * collation, and an affinity that stores 1 and 1.0 alike. Grouping by
 * any other column makes the group's value depend on which of its rows
 * SQLite reads first, which varies with its plan (an index, a DISTINCT
 * aggregate), so only these are grouped by; as a bit mask, or 0. REAL
 * columns are left out too: SQLite keeps their integral values as
 * integers on disk, and read through GROUP BY's sorter "+b" or
 * ifnull(b, ...) shows 2 where b is 2.0 (the MEM_IntReal quirk). */
static unsigned tie_free_column(struct dt_gen *g, const struct dt_table *t)
{
    int i = (int)dt_below(g, (uint64_t)t->column_count);
    const struct dt_column *c = &t->columns[i];

    if (c->is_ipk) {
        return 1u << i;
    }
    if ((c->collate == 1 || c->collate == 2) || is_blob_affinity(c->type) ||
        is_real_affinity(c->type)) {
        return 0;
    }
    return 1u << i;
}

/* An aggregate query: grouped columns first, then expressions over
 * aggregates and grouped columns; never a bare ungrouped column. */
static void gen_select_aggregate(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = random_table(g);
    struct dt_expr_ctx ctx = {
        .table = t, .is_aggregate = true, .is_order_visible = t->has_index};
    struct dt_expr_ctx row = {.table = t, .is_order_visible = t->has_index};
    int i, n = 0;

    if (dt_chance(g, 60)) {
        ctx.group_mask = tie_free_column(g, t) | tie_free_column(g, t);
    }
    dt_buf_add(&s->sql, "SELECT ");
    for (i = 0; i < t->column_count; i++) {
        if ((ctx.group_mask >> i) & 1u) {
            dt_buf_addf(&s->sql, "%s, ", t->columns[i].name);
            n++;
        }
    }
    n += gen_result_list(g, &ctx, &s->sql);
    dt_buf_addf(&s->sql, " FROM %s", t->name);
    if (dt_chance(g, 50)) {
        dt_gen_where(g, &row, t->has_index, &s->sql);
    }
    if (ctx.group_mask != 0) {
        dt_buf_add(&s->sql, " GROUP BY ");
        gen_group_list(t, ctx.group_mask, &s->sql);
        if (dt_chance(g, 40)) {
            dt_buf_add(&s->sql, " HAVING ");
            dt_gen_expr(g, &ctx, g->depth_max, &s->sql);
        }
    }
    if (dt_chance(g, 60)) {
        gen_order_by(g, n, s);
    }
}

/* SELECT without FROM, or VALUES: one row per VALUES row, in order. */
static void gen_select_constant(struct dt_gen *g, struct dt_stmt *s)
{
    struct dt_expr_ctx ctx = {.table = NULL};
    int i, n, rows;

    s->order = DT_ORDER_EXACT;
    if (dt_chance(g, 75)) {
        dt_buf_add(&s->sql, "SELECT ");
        gen_result_list(g, &ctx, &s->sql);
        return;
    }
    n = 1 + (int)dt_below(g, 3);
    rows = 1 + (int)dt_below(g, 3);
    dt_buf_add(&s->sql, "VALUES ");
    for (i = 0; i < rows; i++) {
        dt_buf_add(&s->sql, i ? ", (" : "(");
        for (int c = 0; c < n; c++) {
            dt_buf_add(&s->sql, c ? ", " : "");
            dt_gen_expr(g, &ctx, g->depth_max, &s->sql);
        }
        dt_buf_add(&s->sql, ")");
    }
}

/* One RETURNING term: a column, the rowid, typeof(column) or an
 * expression without columns. SQLite 3.40 gives a column read by
 * RETURNING the affinity of the column before it (CREATE TABLE t(a TEXT,
 * b); INSERT INTO t VALUES ('x', 12) RETURNING b = '12' gives 1, and a
 * REAL column makes the next one's integers REAL), so comparisons and
 * other affinity-dependent expressions over columns are not written
 * there: an accepted difference (docs/testing.md). */
static void gen_returning_term(struct dt_gen *g, const struct dt_table *t,
                               struct dt_buf *out)
{
    struct dt_expr_ctx constant = {.table = NULL, .is_returning = true};
    const char *name = t->columns[dt_below(g, (uint64_t)t->column_count)].name;
    uint64_t kind = dt_below(g, 10);

    if (kind < 5) {
        dt_buf_add(out, name);
    } else if (kind < 6) {
        dt_buf_add(out, "rowid");
    } else if (kind < 8) {
        dt_buf_addf(out, "typeof(%s)", name);
    } else {
        dt_gen_expr(g, &constant, 1, out);
    }
}

static void gen_returning(struct dt_gen *g, const struct dt_table *t,
                          struct dt_stmt *s)
{
    int i, n;

    if (!dt_chance(g, 30)) {
        return;
    }
    s->is_returning = true;
    dt_buf_add(&s->sql, " RETURNING ");
    if (dt_chance(g, 30)) {
        dt_buf_add(&s->sql, "*");
        return;
    }
    n = 1 + (int)dt_below(g, 4);
    for (i = 0; i < n; i++) {
        dt_buf_add(&s->sql, i ? ", " : "");
        gen_returning_term(g, t, &s->sql);
    }
}

/* ON CONFLICT DO NOTHING, or DO UPDATE naming excluded.* (written as an
 * outer table called "excluded"). The target is a UNIQUE column when the
 * table has one. */
static void gen_upsert(struct dt_gen *g, const struct dt_table *t,
                       struct dt_buf *out)
{
    struct dt_table excluded = *t;
    struct dt_expr_ctx ctx = {
        .table = t, .outer = &excluded, .is_order_visible = true};
    int i, target = -1;

    snprintf(excluded.name, sizeof(excluded.name), "%s", "excluded");
    /* The target is a UNIQUE column. An INTEGER PRIMARY KEY is only a DO
     * NOTHING target: when SQLite finds the conflict on the rowid it has
     * not applied the columns' affinities yet (it does so before the
     * index checks, or the CHECKs), so excluded.* holds the raw values,
     * an accepted difference (docs/testing.md). */
    for (i = 0; i < t->column_count; i++) {
        if (t->columns[i].is_unique) {
            target = i;
        }
    }
    if (target < 0 && t->columns[0].is_ipk && dt_chance(g, 50)) {
        dt_buf_add(out, " ON CONFLICT(a) DO NOTHING");
        return;
    }
    if (target < 0 || dt_chance(g, 30)) {
        dt_buf_add(out, " ON CONFLICT DO NOTHING");
        return;
    }
    dt_buf_addf(out, " ON CONFLICT(%s) DO ", t->columns[target].name);
    if (dt_chance(g, 20)) {
        dt_buf_add(out, "NOTHING");
        return;
    }
    i = (int)dt_below(g, (uint64_t)t->column_count);
    dt_buf_addf(out, "UPDATE SET %s = ", t->columns[i].name);
    dt_gen_expr(g, &ctx, g->depth_max - 1, out);
    if (dt_chance(g, 30)) {
        dt_buf_add(out, " WHERE ");
        dt_gen_expr(g, &ctx, g->depth_max - 1, out);
    }
}

/* Writes a column list, all columns or a suffix of them, and returns the
 * first column named. */
static int gen_insert_columns(struct dt_gen *g, const struct dt_table *t,
                              struct dt_buf *out)
{
    int i, first;

    if (dt_chance(g, 50)) {
        return 0;
    }
    first = (int)dt_below(g, (uint64_t)t->column_count);
    dt_buf_add(out, "(");
    for (i = first; i < t->column_count; i++) {
        dt_buf_addf(out, "%s%s", i > first ? ", " : "", t->columns[i].name);
    }
    dt_buf_add(out, ")");
    return first;
}

static void gen_insert_values(struct dt_gen *g, const struct dt_table *t,
                              int first, struct dt_buf *out)
{
    struct dt_expr_ctx ctx = {.table = NULL};
    int row, rows = 1 + (int)dt_below(g, 3), i;

    dt_buf_add(out, " VALUES ");
    for (row = 0; row < rows; row++) {
        dt_buf_add(out, row ? ", (" : "(");
        for (i = first; i < t->column_count; i++) {
            const struct dt_column *c = &t->columns[i];

            dt_buf_add(out, i > first ? ", " : "");
            if (dt_chance(g, 15) && !c->is_ipk) {
                dt_gen_expr(g, &ctx, 2, out);
            } else {
                gen_value_for(g, c, out);
            }
        }
        dt_buf_add(out, ")");
    }
}

static void gen_insert(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = random_table(g);
    const struct dt_table *from = random_table(g);
    struct dt_expr_ctx ctx = {.table = from, .is_order_visible = true};
    int i, n;

    s->table = (int)(t - g->schema.tables);
    dt_buf_addf(&s->sql, "INSERT %sINTO %s",
                conflicts[dt_below(g, sizeof(conflicts) / sizeof(*conflicts))],
                t->name);
    if (dt_chance(g, 5)) {
        dt_buf_add(&s->sql, " DEFAULT VALUES");
    } else if (dt_chance(g, 75)) {
        gen_insert_values(g, t, gen_insert_columns(g, t, &s->sql), &s->sql);
        if (dt_chance(g, 25)) {
            gen_upsert(g, t, &s->sql);
        }
    } else {
        n = t->column_count - gen_insert_columns(g, t, &s->sql);
        dt_buf_add(&s->sql, " SELECT ");
        for (i = 0; i < n; i++) {
            dt_buf_add(&s->sql, i ? ", " : "");
            dt_gen_expr(g, &ctx, g->depth_max - 1, &s->sql);
        }
        dt_buf_addf(&s->sql, " FROM %s", from->name);
        if (dt_chance(g, 50)) {
            dt_gen_where(g, &ctx, true, &s->sql);
        }
        /* A covering index scan would change which rowid each row gets. */
        dt_buf_add(&s->sql, from->has_index ? " ORDER BY rowid" : "");
    }
    gen_returning(g, t, s);
}

static void gen_update(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = random_table(g);
    struct dt_expr_ctx ctx = {.table = t, .is_order_visible = true};
    int i, n = 1 + (int)dt_below(g, 2);
    int columns[2];

    s->table = (int)(t - g->schema.tables);
    dt_buf_addf(&s->sql, "UPDATE %s%s SET ",
                conflicts[dt_below(g, sizeof(conflicts) / sizeof(*conflicts))],
                t->name);
    for (i = 0; i < n; i++) {
        columns[i] = (int)dt_below(g, (uint64_t)t->column_count);
    }
    for (i = 0; i < n; i++) {
        dt_buf_addf(&s->sql, "%s%s = ", i ? ", " : "",
                    t->columns[columns[i]].name);
        /* SQLite never codes a value a later assignment overrides, so
         * the errors only coding finds (an outer query's aggregate, a
         * subquery of two columns) are not raised for it; sinew raises
         * them (docs/engine.md, Known differences): a literal there. */
        if (i + 1 < n && columns[i + 1] == columns[i]) {
            dt_gen_literal(g, &s->sql);
        } else {
            dt_gen_expr(g, &ctx, g->depth_max - 1, &s->sql);
        }
    }
    if (dt_chance(g, 70)) {
        dt_gen_where(g, &ctx, true, &s->sql);
    }
    gen_returning(g, t, s);
}

static void gen_delete(struct dt_gen *g, struct dt_stmt *s)
{
    const struct dt_table *t = random_table(g);
    struct dt_expr_ctx ctx = {.table = t, .is_order_visible = true};

    s->table = (int)(t - g->schema.tables);
    dt_buf_addf(&s->sql, "DELETE FROM %s", t->name);
    if (dt_chance(g, 85)) {
        dt_gen_where(g, &ctx, true, &s->sql);
    }
    gen_returning(g, t, s);
}

/* One SELECT of a compound: n result expressions over a table (with a
 * WHERE that keeps the rowid order), or without FROM, or VALUES. Sets
 * *has_index when SQLite might read its table through an index. */
static void gen_compound_term(struct dt_gen *g, int n, struct dt_buf *out,
                              bool *has_index)
{
    const struct dt_table *t = random_table(g);
    struct dt_expr_ctx ctx = {.table = t, .is_order_visible = t->has_index};
    uint64_t shape = dt_below(g, 10);

    if (shape == 0) {
        int rows = 1 + (int)dt_below(g, 2);

        ctx.table = NULL;
        dt_buf_add(out, "VALUES ");
        for (int r = 0; r < rows; r++) {
            dt_buf_add(out, r ? ", (" : "(");
            for (int c = 0; c < n; c++) {
                dt_buf_add(out, c ? ", " : "");
                dt_gen_expr(g, &ctx, g->depth_max, out);
            }
            dt_buf_add(out, ")");
        }
        return;
    }
    if (shape == 1) {
        ctx.table = NULL;
    }
    /* DISTINCT keeps the first of equal rows: only where no index can
     * change which is first (as gen_select_rows). */
    dt_buf_add(out, ctx.table != NULL && !t->has_index && dt_chance(g, 10)
                        ? "SELECT DISTINCT "
                        : "SELECT ");
    for (int c = 0; c < n; c++) {
        dt_buf_add(out, c ? ", " : "");
        dt_gen_expr(g, &ctx, g->depth_max, out);
        if (c == 0 && dt_chance(g, 20)) {
            dt_buf_add(out, " AS q");
        }
    }
    if (ctx.table == NULL) {
        return;
    }
    *has_index = *has_index || t->has_index;
    dt_buf_addf(out, " FROM %s", t->name);
    if (dt_chance(g, 60)) {
        dt_gen_where(g, &ctx, true, out);
    }
}

/* A compound SELECT: 2 to 4 terms of 1 to 3 columns joined by UNION ALL,
 * UNION, INTERSECT or EXCEPT, sometimes ORDER BY (every column) and
 * LIMIT, sometimes read as a FROM subquery or through IN. Without ORDER
 * BY SQLite gives UNION, INTERSECT and EXCEPT in ascending order, keeping
 * the last of equal rows read: exact when no term's table has an index
 * SQLite could scan instead (its order would pick another row), else only
 * UNION ALL is written and the rows compare as a multiset. */
static void gen_select_compound(struct dt_gen *g, struct dt_stmt *s)
{
    static const char *const ops[] = {" UNION ALL ", " UNION ", " INTERSECT ",
                                      " EXCEPT "};
    struct dt_buf terms[4];
    struct dt_buf body;
    uint64_t use = dt_below(g, 10);
    int n = use == 1 ? 1 : 1 + (int)dt_below(g, 3);
    int count = 2 + (int)dt_below(g, 3);
    bool has_index = false;
    bool set_op = false;

    dt_buf_init(&body);
    for (int i = 0; i < count; i++) {
        dt_buf_init(&terms[i]);
        gen_compound_term(g, n, &terms[i], &has_index);
    }
    for (int i = 0; i < count; i++) {
        const char *op = has_index ? ops[0] : ops[dt_below(g, 4)];

        set_op = set_op || (i > 0 && op != ops[0]);
        dt_buf_add(&body, i > 0 ? op : "");
        dt_buf_add(&body, terms[i].data);
        dt_buf_free(&terms[i]);
    }
    s->order = set_op ? DT_ORDER_EXACT : DT_ORDER_SET;
    if (use == 0) {
        dt_buf_addf(&s->sql, "SELECT * FROM (%s) AS s", body.data);
        s->order = DT_ORDER_SET;
    } else if (use == 1) {
        struct dt_expr_ctx ctx = {.table = NULL};

        dt_buf_add(&s->sql, "SELECT ");
        dt_gen_expr(g, &ctx, 1, &s->sql);
        dt_buf_addf(&s->sql, " %sIN (%s)", dt_chance(g, 30) ? "NOT " : "",
                    body.data);
        s->order = DT_ORDER_EXACT;
    } else {
        dt_buf_add(&s->sql, body.data);
        if (dt_chance(g, 40)) {
            gen_order_by(g, n, s);
        }
    }
    dt_buf_free(&body);
}

/* ---- joins ---- */

/* A column of FROM item i (aliased j<i>) of a join; its collation. */
static int join_column(struct dt_gen *g, const struct dt_table *const *items,
                       int i, struct dt_buf *out)
{
    const struct dt_table *t = items[i];
    const struct dt_column *c =
        &t->columns[dt_below(g, (uint64_t)t->column_count)];

    dt_buf_addf(out, "j%d.%s", i, c->name);
    return c->collate == 3 ? 0 : c->collate; /* BINARY is the default */
}

/* A term over the items [0, count): mostly "x = y" across two items,
 * else a comparison with another column or a literal, or IS NULL. An
 * equality of two columns whose collations differ is left out: SQLite
 * 3.40 answers it as a join constraint differently from the same
 * expression evaluated ("x = y" under RTRIM matches 'a' and 'a ' as a
 * value, not in its join loop), a quirk sinew does not copy. A NOCASE
 * or RTRIM column is only tested for NULL, for the same reason. */
static void join_term(struct dt_gen *g, const struct dt_table *const *items,
                      int count, int last, struct dt_buf *out)
{
    static const char *const ops[] = {" = ", " < ", " >= ", " <> ", " IS "};
    int other = (int)dt_below(g, (uint64_t)count);
    uint64_t kind = dt_below(g, 10);
    struct dt_buf right;
    int collate;

    dt_buf_init(&right);
    collate = join_column(g, items, last, out);
    if (collate != 0) {
        kind = 9; /* NOCASE, RTRIM: only tested for NULL */
    }
    if (kind < 6 &&
        join_column(g, items, other == last && count > 1 ? 0 : other, &right) ==
            collate) {
        dt_buf_addf(out, " = %s", right.data);
    } else if (kind < 8) {
        dt_buf_add(out, ops[dt_below(g, 5)]);
        dt_gen_literal(g, out);
    } else {
        dt_buf_add(out, dt_chance(g, 50) ? " IS NULL" : " IS NOT NULL");
    }
    dt_buf_free(&right);
}

static void join_condition(struct dt_gen *g,
                           const struct dt_table *const *items, int count,
                           int last, struct dt_buf *out)
{
    join_term(g, items, count, last, out);
    if (dt_chance(g, 35)) {
        dt_buf_add(out, dt_chance(g, 80) ? " AND " : " OR ");
        join_term(g, items, count, last, out);
    }
}

/* SELECT over two or three items joined in random ways; compared as a
 * multiset (the row order of a join is unspecified). */
static void gen_select_join(struct dt_gen *g, struct dt_stmt *s)
{
    static const char *const joins[] = {
        ", ",          " CROSS JOIN ",      " JOIN ",       " INNER JOIN ",
        " LEFT JOIN ", " LEFT OUTER JOIN ", " RIGHT JOIN ", " FULL JOIN ",
    };
    const struct dt_table *items[3];
    int count = 2 + (int)dt_below(g, 2);
    int n = 1 + (int)dt_below(g, 4);
    bool aggregate = dt_chance(g, 15);
    int i;

    for (i = 0; i < count; i++) {
        items[i] = random_table(g);
    }
    dt_buf_add(&s->sql, aggregate ? "SELECT count(*), " : "SELECT ");
    for (i = 0; i < n; i++) {
        dt_buf_add(&s->sql, i ? ", " : "");
        dt_buf_add(&s->sql, aggregate ? "count(" : "");
        join_column(g, items, (int)dt_below(g, (uint64_t)count), &s->sql);
        dt_buf_add(&s->sql, aggregate ? ")" : "");
    }
    dt_buf_addf(&s->sql, " FROM %s AS j0", items[0]->name);
    for (i = 1; i < count; i++) {
        const char *join = joins[dt_below(g, 8)];

        dt_buf_addf(&s->sql, "%s%s AS j%d", join, items[i]->name, i);
        if (join[1] != 'C' && join[0] != ',' && dt_chance(g, 85)) {
            dt_buf_add(&s->sql, " ON ");
            join_condition(g, items, i + 1, i, &s->sql);
        }
    }
    if (dt_chance(g, 50)) {
        dt_buf_add(&s->sql, " WHERE ");
        join_condition(g, items, count, (int)dt_below(g, (uint64_t)count),
                       &s->sql);
    }
}

void dt_gen_statement(struct dt_gen *g, struct dt_stmt *s)
{
    uint64_t kind = dt_below(g, 100);

    dt_buf_clear(&s->sql);
    s->order = DT_ORDER_SET;
    s->has_limit = s->has_offset = s->is_dml = s->is_returning = false;
    s->is_transaction = false;
    s->table = -1;
    g->depth_max = 1 + (int)dt_below(g, (uint64_t)g->depth_limit);
    if (kind < 18) {
        gen_select_rows(g, s);
    } else if (kind < 26) {
        gen_select_join(g, s);
    } else if (kind < 34) {
        gen_select_compound(g, s);
    } else if (kind < 40) {
        dt_gen_select_cte(g, s);
    } else if (kind < 46) {
        dt_gen_select_window(g, s);
    } else if (kind < 62) {
        gen_select_aggregate(g, s);
    } else if (kind < 68) {
        gen_select_constant(g, s);
    } else if (kind < 98) {
        s->is_dml = true;
        if (kind < 81) {
            gen_insert(g, s);
        } else if (kind < 91) {
            gen_update(g, s);
        } else {
            gen_delete(g, s);
        }
    } else {
        static const char *const txn[] = {"BEGIN", "COMMIT", "ROLLBACK",
                                          "BEGIN", "END"};
        s->is_transaction = true;
        dt_buf_add(&s->sql, txn[dt_below(g, 5)]);
    }
}
