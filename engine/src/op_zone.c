/* SPDX-License-Identifier: MIT
 *
 * op_zone.c: the blocks a table scan passes over (zone.h).
 *
 * When the scan first needs rows, each zone term becomes a check
 * (table.h, struct engine_zone_check): its value is evaluated once, as
 * SQLite evaluates the constant side of a term, and converted as the
 * comparison converts it against a number of the column
 * (engine__expr_compare_prepare, the comparison's own rule, with an
 * INTEGER standing for the column's value). What the check then lets
 * through:
 *   - a NULL value: nothing (a comparison with NULL is NULL), or only
 *     NULL under IS;
 *   - the column's numbers turned to text (a TEXT comparison affinity):
 *     any value but NULL, the zone knowing no text order;
 *   - TEXT or BLOB: every number sorts before it, so "<" and "<=" let any
 *     value but NULL through, the others only TEXT and BLOB;
 *   - a number: TEXT and BLOB, and the numbers in that relation to it.
 * A block is skipped when one check proves it empty of what it lets
 * through (engine__table_zone_excludes), recomputed for every block
 * whenever the table changed since: a statement run between two steps of
 * this one may have written into a block already judged.
 */
#include "zone.h"

#include <math.h>
#include <string.h>

#include "expr_int.h"

static enum engine_zone_test compare_test(enum engine_compare_op op)
{
    switch (op) {
    case ENGINE_COMPARE_LT:
        return ENGINE_ZONE_LT;
    case ENGINE_COMPARE_LE:
        return ENGINE_ZONE_LE;
    case ENGINE_COMPARE_GT:
        return ENGINE_ZONE_GT;
    case ENGINE_COMPARE_GE:
        return ENGINE_ZONE_GE;
    default:
        return ENGINE_ZONE_EQ;
    }
}

static bool is_number(const struct engine_value *v)
{
    return v->type == ENGINE_INTEGER ||
           (v->type == ENGINE_FLOAT && !isnan(v->u.r));
}

/* The check "column op value" makes, column and value as the comparison
 * converted them (column: a number standing for the column's). */
static void classify(enum engine_compare_op op,
                     const struct engine_value *column,
                     struct engine_value value, struct engine_zone_check *out)
{
    bool is_is = op == ENGINE_COMPARE_IS;

    if (value.type == ENGINE_NULL) {
        out->test = is_is ? ENGINE_ZONE_NULL : ENGINE_ZONE_NOTHING;
    } else if (!is_number(column) ||
               (value.type == ENGINE_FLOAT && isnan(value.u.r))) {
        out->test = ENGINE_ZONE_NOT_NULL;
    } else if (value.type == ENGINE_TEXT || value.type == ENGINE_BLOB) {
        out->test = op == ENGINE_COMPARE_LT || op == ENGINE_COMPARE_LE
                        ? ENGINE_ZONE_NOT_NULL
                        : ENGINE_ZONE_NOT_NUMBER;
    } else {
        out->test = compare_test(op);
        value.has_text = false;
        out->bound = value;
    }
}

static int make_check(const struct engine_zone_term *term,
                      struct engine_exec *exec, struct engine_arena *arena,
                      struct engine_zone_check *out)
{
    const struct engine_expr *expr = term->expr;
    struct engine_value column = engine__value_int(0);
    struct engine_value value;
    enum engine_compare_op op;
    int rc;

    out->column = term->column;
    if (expr->op != ENGINE_EXPR_COMPARE) {
        out->test = expr->op == ENGINE_EXPR_IS_NULL ? ENGINE_ZONE_NULL
                                                    : ENGINE_ZONE_NOT_NULL;
        return 0;
    }
    rc = engine__expr_eval_constant(expr->args[1 - term->column_arg], exec,
                                    arena, &value);
    if (rc != 0) {
        return rc;
    }
    rc = term->column_arg == 0
             ? engine__expr_compare_prepare(expr, &column, &value, arena)
             : engine__expr_compare_prepare(expr, &value, &column, arena);
    if (rc != 0) {
        return engine__error(exec, rc, "out of memory");
    }
    op = term->column_arg == 0 ? expr->u.compare
                               : engine__compare_commuted(expr->u.compare);
    classify(op, &column, value, out);
    return 0;
}

/* skip, for the table's blocks as they are now. */
static int judge(const struct engine_zone_plan *zones,
                 struct engine_zone_run *run, struct engine_table *table)
{
    size_t blocks = engine__table_block_count(table);

    if (blocks > run->skip_capacity) {
        uint8_t *more = common_realloc(run->skip, blocks);

        if (more == NULL) {
            return COMMON_ENOMEM;
        }
        run->skip = more;
        run->skip_capacity = blocks;
    }
    for (size_t b = 0; b < blocks; b++) {
        run->skip[b] = engine__table_zone_excludes(table, b, zones->checks,
                                                   zones->term_count);
        table->zone_skips += run->skip[b];
    }
    run->block_count = blocks;
    run->change_count = table->change_count;
    return 0;
}

int engine__zone_prepare(const struct engine_zone_plan *zones,
                         struct engine_zone_run *run,
                         struct engine_table *table, struct engine_exec *exec,
                         struct engine_arena *arena)
{
    bool fresh = !run->started;

    ASSERT(zones != NULL);
    ASSERT(zones->term_count > 0);
    if (!run->started) {
        run->started = true;
        engine__arena_reset(arena);
        for (size_t i = 0; i < zones->term_count; i++) {
            int rc =
                make_check(&zones->terms[i], exec, arena, &zones->checks[i]);

            if (rc != 0) {
                return rc;
            }
        }
    }
    if (fresh || run->change_count != table->change_count ||
        run->block_count != engine__table_block_count(table)) {
        if (judge(zones, run, table) != 0) {
            return engine__error(exec, COMMON_ENOMEM, "out of memory");
        }
    }
    return 0;
}

void engine__zone_reset(struct engine_zone_run *run)
{
    run->started = false;
    run->block_count = 0;
}

void engine__zone_close(struct engine_zone_run *run)
{
    common_free(run->skip);
    memset(run, 0, sizeof(*run));
}

uint64_t engine__zone_skips(const struct engine_db *db, const char *name)
{
    const struct engine_table *table = engine__catalog_find(db, name);

    return table != NULL ? table->zone_skips : 0;
}
