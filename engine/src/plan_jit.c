/* SPDX-License-Identifier: MIT
 *
 * plan_jit.c: turns a plan's leading scan -> filter -> aggregate into a
 * pipeline kernel spec (jit_plan.h), or says it cannot.
 *
 * The WHERE is taken node by node from its compiled form, so every rule
 * the compiler applied (which side is the column, BETWEEN's two terms,
 * NOT IN's negation) is already settled. Only what the kernel computes
 * exactly like the interpreter is taken:
 *   - "column op value" (=, <>, <, <=, >, >=), "column op column", "column
 *     IS [NOT] NULL", "column [NOT] IN (values)", AND, OR, NOT;
 *   - a value is an INTEGER literal or a parameter (checked to be an
 *     INTEGER at each run: SQLite compares int64 with int64 numerically
 *     whatever the affinities, datatype3 §4.2, and collations do not
 *     apply to numbers);
 *   - a column is the rowid or one whose affinity is INTEGER, NUMERIC or
 *     none: a TEXT column would make SQLite compare a number as text.
 * NOT is pushed to the leaves (De Morgan; NOT (a < b) is a >= b, NOT of IS
 * NULL is IS NOT NULL, NOT of IN is NOT IN): in SQLite's three-valued
 * logic NOT of NULL is NULL, which a WHERE drops like FALSE, so the kernel
 * may read every NULL comparison as FALSE.
 */
#include <string.h>

#include "jit_plan.h"

struct builder {
    struct engine_jit_plan *plan;
    const struct engine_table *table;
    const size_t *scan_columns;
};

/* The spec column an expression reads, or -1. */
static int column_of(struct builder *b, const struct engine_expr *e)
{
    struct engine_jit_pipe_spec *spec = &b->plan->spec;
    size_t column;

    if (e->op != ENGINE_EXPR_COLUMN) {
        return -1;
    }
    column = b->scan_columns[e->u.column];
    if (column != SIZE_MAX && (ptrdiff_t)column == b->table->rowid_alias) {
        column = SIZE_MAX;
    }
    if (column != SIZE_MAX) {
        enum engine_affinity affinity = b->table->columns[column].affinity;

        if (affinity != ENGINE_AFFINITY_INTEGER &&
            affinity != ENGINE_AFFINITY_NUMERIC &&
            affinity != ENGINE_AFFINITY_BLOB) {
            return -1;
        }
    }
    for (uint32_t c = 0; c < spec->column_count; c++) {
        if (b->plan->table_columns[c] == column) {
            return (int)c;
        }
    }
    if (spec->column_count == ENGINE__JIT_PIPE_COLUMNS) {
        return -1;
    }
    b->plan->table_columns[spec->column_count] = column;
    spec->nullable[spec->column_count] = column != SIZE_MAX;
    return (int)spec->column_count++;
}

/* Whether an expression is a value the kernel takes as a parameter. */
static bool is_value(const struct engine_expr *e)
{
    return e->op == ENGINE_EXPR_PARAMETER ||
           (e->op == ENGINE_EXPR_CONSTANT &&
            e->u.constant.type == ENGINE_INTEGER);
}

/* Appends a parameter; its index, or -1. */
static int param_add(struct builder *b, struct engine_expr *e)
{
    struct engine_jit_pipe_spec *spec = &b->plan->spec;

    if (!is_value(e) || spec->param_count == ENGINE__JIT_PIPE_PARAMS) {
        return -1;
    }
    b->plan->params[spec->param_count] = e;
    return (int)spec->param_count++;
}

static int node_add(struct builder *b, const struct engine_jit_node *node)
{
    struct engine_jit_pipe_spec *spec = &b->plan->spec;

    if (spec->node_count == ENGINE__JIT_PIPE_NODES) {
        return -1;
    }
    spec->nodes[spec->node_count] = *node;
    return (int)spec->node_count++;
}

static enum engine_jit_op compare_op(enum engine_compare_op op, bool negate)
{
    static const enum engine_jit_op ops[] = {
        [ENGINE_COMPARE_EQ] = ENGINE_JIT_EQ,
        [ENGINE_COMPARE_NE] = ENGINE_JIT_NE,
        [ENGINE_COMPARE_LT] = ENGINE_JIT_LT,
        [ENGINE_COMPARE_LE] = ENGINE_JIT_LE,
        [ENGINE_COMPARE_GT] = ENGINE_JIT_GT,
        [ENGINE_COMPARE_GE] = ENGINE_JIT_GE,
    };
    static const enum engine_jit_op negated[] = {
        [ENGINE_JIT_EQ] = ENGINE_JIT_NE, [ENGINE_JIT_NE] = ENGINE_JIT_EQ,
        [ENGINE_JIT_LT] = ENGINE_JIT_GE, [ENGINE_JIT_LE] = ENGINE_JIT_GT,
        [ENGINE_JIT_GT] = ENGINE_JIT_LE, [ENGINE_JIT_GE] = ENGINE_JIT_LT,
    };
    return negate ? negated[ops[op]] : ops[op];
}

static int translate(struct builder *b, struct engine_expr *e, bool negate);

static int translate_logic(struct builder *b, struct engine_expr *e,
                           bool negate)
{
    struct engine_jit_node node = {0};
    int left = translate(b, e->args[0], negate);
    int right = left < 0 ? -1 : translate(b, e->args[1], negate);

    if (right < 0) {
        return -1;
    }
    node.kind = (e->op == ENGINE_EXPR_AND) != negate ? ENGINE_JIT_NODE_AND
                                                     : ENGINE_JIT_NODE_OR;
    node.left = (uint16_t)left;
    node.right = (uint16_t)right;
    return node_add(b, &node);
}

static int translate_compare(struct builder *b, struct engine_expr *e,
                             bool negate)
{
    struct engine_jit_node node = {.kind = ENGINE_JIT_NODE_COMPARE};
    enum engine_compare_op op = e->u.compare;
    struct engine_expr *l = e->args[0], *r = e->args[1];
    int column, other;

    if (op == ENGINE_COMPARE_IS || op == ENGINE_COMPARE_IS_NOT) {
        return -1;
    }
    if (l->op != ENGINE_EXPR_COLUMN) {
        struct engine_expr *swap = l;

        l = r;
        r = swap;
        op = engine__compare_commuted(op);
    }
    column = column_of(b, l);
    if (column < 0) {
        return -1;
    }
    node.column = (uint8_t)column;
    node.op = compare_op(op, negate);
    if (r->op == ENGINE_EXPR_COLUMN) {
        other = column_of(b, r);
        node.kind = ENGINE_JIT_NODE_COMPARE_TWO;
        node.other = (uint8_t)other;
    } else {
        other = param_add(b, r);
        node.param = (uint16_t)other;
    }
    return other < 0 ? -1 : node_add(b, &node);
}

static int translate_in(struct builder *b, struct engine_expr *e, bool negate)
{
    struct engine_jit_node node = {.kind = ENGINE_JIT_NODE_IN};
    int column = column_of(b, e->args[0]);

    if (column < 0 || e->arg_count < 2 || e->arg_count - 1 > UINT16_MAX) {
        return -1;
    }
    node.column = (uint8_t)column;
    node.negated = e->negated != negate;
    node.param = (uint16_t)b->plan->spec.param_count;
    node.param_count = (uint16_t)(e->arg_count - 1);
    for (size_t i = 1; i < e->arg_count; i++) {
        if (param_add(b, e->args[i]) < 0) {
            return -1;
        }
    }
    return node_add(b, &node);
}

/* The node computing e (negated when negate), or -1. */
static int translate(struct builder *b, struct engine_expr *e, bool negate)
{
    struct engine_jit_node node = {0};
    int column;

    switch (e->op) {
    case ENGINE_EXPR_NOT:
        return translate(b, e->args[0], !negate);
    case ENGINE_EXPR_AND:
    case ENGINE_EXPR_OR:
        return translate_logic(b, e, negate);
    case ENGINE_EXPR_COMPARE:
        return translate_compare(b, e, negate);
    case ENGINE_EXPR_IN_LIST:
        return translate_in(b, e, negate);
    case ENGINE_EXPR_IS_NULL:
    case ENGINE_EXPR_NOT_NULL:
        column = column_of(b, e->args[0]);
        if (column < 0) {
            return -1;
        }
        node.kind = (e->op == ENGINE_EXPR_IS_NULL) != negate
                        ? ENGINE_JIT_NODE_IS_NULL
                        : ENGINE_JIT_NODE_NOT_NULL;
        node.column = (uint8_t)column;
        return node_add(b, &node);
    default:
        return -1;
    }
}

/* The kernel's aggregate for spec, or false. */
static bool aggregate_of(struct builder *b,
                         const struct engine_aggregate_spec *spec,
                         struct engine_jit_aggregate *out)
{
    static const struct {
        const char *name;
        enum engine_jit_aggregate_kind kind;
    } kinds[] = {{"count", ENGINE_JIT_COUNT},
                 {"sum", ENGINE_JIT_SUM},
                 {"min", ENGINE_JIT_MIN},
                 {"max", ENGINE_JIT_MAX}};
    int column;

    if (spec->distinct || spec->filter != NULL) {
        return false;
    }
    if (spec->count_star) {
        out->kind = ENGINE_JIT_COUNT_STAR;
        out->column = 0;
        return true;
    }
    if (spec->arg_count != 1 || (column = column_of(b, spec->args[0])) < 0) {
        return false;
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(spec->def->name, kinds[i].name) == 0) {
            out->kind = kinds[i].kind;
            out->column = (uint8_t)column;
            return true;
        }
    }
    return false;
}

static bool aggregates_of(struct builder *b,
                          const struct engine_aggregate_spec *specs,
                          size_t spec_count)
{
    struct engine_jit_pipe_spec *spec = &b->plan->spec;

    for (size_t i = 0; i < spec_count; i++) {
        b->plan->outputs[i] = -1;
        if (specs[i].def == NULL) {
            continue;
        }
        if (spec->aggregate_count == ENGINE__JIT_PIPE_AGGREGATES ||
            !aggregate_of(b, &specs[i],
                          &spec->aggregates[spec->aggregate_count])) {
            return false;
        }
        b->plan->outputs[i] = (int32_t)spec->aggregate_count++;
    }
    return spec->aggregate_count > 0;
}

struct engine_op *engine__jit_plan_aggregate(
    struct engine_stmt *stmt, struct engine_op *aggregate,
    struct engine_op *source, struct engine_expr *where,
    const struct engine_aggregate_spec *specs, size_t spec_count)
{
    struct builder b = {0};
    const struct engine_zone_plan *zones;
    struct engine_table *table =
        engine__op_scan_plain(source, &b.scan_columns, &zones);
    int root = -1;

    if (table == NULL) {
        return aggregate;
    }
    b.table = table;
    b.plan = engine__arena_alloc(&stmt->plan_arena, sizeof(*b.plan));
    if (b.plan == NULL) {
        return NULL;
    }
    memset(b.plan, 0, sizeof(*b.plan));
    b.plan->table = table;
    b.plan->zones = zones;
    b.plan->output_count = spec_count;
    b.plan->outputs = engine__arena_alloc(
        &stmt->plan_arena, (spec_count + 1) * sizeof(*b.plan->outputs));
    if (b.plan->outputs == NULL) {
        return NULL;
    }
    if (where != NULL) {
        root = translate(&b, where, false);
        if (root < 0) {
            return aggregate;
        }
    }
    b.plan->spec.root = root;
    if (!aggregates_of(&b, specs, spec_count)) {
        return aggregate;
    }
    return engine__op_jit(stmt, aggregate, b.plan);
}
