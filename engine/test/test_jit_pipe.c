/* SPDX-License-Identifier: MIT
 *
 * Goal: the pipeline kernel generator (jit_pipe.c) computes exactly what
 * a plain C evaluation of the same spec computes, on every kind of node
 * and aggregate, with NULL and deleted flags or without, and bails out
 * exactly when a positive or a negative partial sum would leave int64;
 * what it emits decodes to the instructions its design names; specs it
 * cannot hold are refused, not miscompiled.
 * Method: random specs (trees of up to 15 nodes over 4 columns, 1 to 4
 * aggregates) and random column blocks with values near the limits are
 * run through the compiled kernel and a C reference; objdump decodes
 * kernels (jit_objdump.h; skipped without binutils).
 */
#define _DEFAULT_SOURCE /* mkstemp, popen */

#include "common_test.h"

#include <errno.h>
#include <string.h>

#include "jit.h"
#include "jit_objdump.h"

#define ROWS 300
#define COLUMNS 4

struct block {
    int64_t values[COLUMNS][ROWS];
    uint8_t nulls[COLUMNS][ROWS];
    uint8_t deleted[ROWS];
};

/* ---- the C reference ---- */

static bool compare(enum engine_jit_op op, int64_t a, int64_t b)
{
    switch (op) {
    case ENGINE_JIT_EQ:
        return a == b;
    case ENGINE_JIT_NE:
        return a != b;
    case ENGINE_JIT_LT:
        return a < b;
    case ENGINE_JIT_LE:
        return a <= b;
    case ENGINE_JIT_GT:
        return a > b;
    default:
        return a >= b;
    }
}

static bool is_null(const struct engine_jit_pipe_spec *spec,
                    const struct block *b, uint32_t c, size_t row)
{
    return spec->checked && spec->nullable[c] && b->nulls[c][row] != 0;
}

static bool eval(const struct engine_jit_pipe_spec *spec,
                 const struct engine_jit_pipe_args *args, const struct block *b,
                 uint32_t node, size_t row)
{
    const struct engine_jit_node *n = &spec->nodes[node];
    int64_t v = b->values[n->column][row];
    bool null = is_null(spec, b, n->column, row);
    bool in = false;

    switch (n->kind) {
    case ENGINE_JIT_NODE_AND:
        return eval(spec, args, b, n->left, row) &&
               eval(spec, args, b, n->right, row);
    case ENGINE_JIT_NODE_OR:
        return eval(spec, args, b, n->left, row) ||
               eval(spec, args, b, n->right, row);
    case ENGINE_JIT_NODE_COMPARE:
        return !null && compare(n->op, v, args->params[n->param]);
    case ENGINE_JIT_NODE_COMPARE_TWO:
        return !null && !is_null(spec, b, n->other, row) &&
               compare(n->op, v, b->values[n->other][row]);
    case ENGINE_JIT_NODE_IS_NULL:
        return null;
    case ENGINE_JIT_NODE_NOT_NULL:
        return !null;
    case ENGINE_JIT_NODE_IN:
        for (uint32_t i = 0; i < n->param_count; i++) {
            in = in || v == args->params[n->param + i];
        }
        return !null && in != n->negated;
    }
    return false;
}

/* The reference's totals; returns ENGINE_JIT_BAIL_OVERFLOW as the kernel
 * must. */
static int reference(const struct engine_jit_pipe_spec *spec,
                     const struct block *b, struct engine_jit_pipe_args *args)
{
    for (size_t row = args->begin; row < args->end; row++) {
        if ((spec->checked && b->deleted[row]) ||
            (spec->root >= 0 &&
             !eval(spec, args, b, (uint32_t)spec->root, row))) {
            continue;
        }
        for (uint32_t a = 0; a < spec->aggregate_count; a++) {
            const struct engine_jit_aggregate *agg = &spec->aggregates[a];
            struct engine_jit_pipe_total *t = &args->totals[a];
            int64_t v = b->values[agg->column][row];

            if (agg->kind != ENGINE_JIT_COUNT_STAR &&
                is_null(spec, b, agg->column, row)) {
                continue;
            }
            t->count++;
            if (agg->kind == ENGINE_JIT_SUM &&
                __builtin_add_overflow(v < 0 ? t->negative : t->value, v,
                                       v < 0 ? &t->negative : &t->value)) {
                return ENGINE_JIT_BAIL_OVERFLOW;
            }
            if ((agg->kind == ENGINE_JIT_MIN && v < t->value) ||
                (agg->kind == ENGINE_JIT_MAX && v > t->value)) {
                t->value = v;
            }
        }
    }
    return ENGINE_JIT_DONE;
}

/* ---- random specs and blocks ---- */

static uint32_t random_node(struct common_test_rng *rng,
                            struct engine_jit_pipe_spec *spec, int depth)
{
    struct engine_jit_node n = {0};
    uint64_t pick = common_test_rng_below(rng, depth > 0 ? 7 : 5);

    n.column = (uint8_t)common_test_rng_below(rng, COLUMNS);
    n.op = (enum engine_jit_op)common_test_rng_below(rng, 6);
    if (pick >= 5) {
        n.kind = pick == 5 ? ENGINE_JIT_NODE_AND : ENGINE_JIT_NODE_OR;
        n.left = (uint16_t)random_node(rng, spec, depth - 1);
        n.right = (uint16_t)random_node(rng, spec, depth - 1);
    } else if (pick == 4) {
        n.kind = ENGINE_JIT_NODE_IN;
        n.negated = common_test_rng_below(rng, 2);
        n.param = (uint16_t)common_test_rng_below(rng, 4);
        n.param_count = (uint16_t)(1 + common_test_rng_below(rng, 4));
    } else {
        static const enum engine_jit_node_kind leaves[] = {
            ENGINE_JIT_NODE_COMPARE, ENGINE_JIT_NODE_COMPARE_TWO,
            ENGINE_JIT_NODE_IS_NULL, ENGINE_JIT_NODE_NOT_NULL};

        n.kind = leaves[pick];
        n.other = (uint8_t)common_test_rng_below(rng, COLUMNS);
        n.param = (uint16_t)common_test_rng_below(rng, 8);
    }
    spec->nodes[spec->node_count] = n;
    return spec->node_count++;
}

static void random_spec(struct common_test_rng *rng,
                        struct engine_jit_pipe_spec *spec, bool avx2)
{
    memset(spec, 0, sizeof(*spec));
    spec->column_count = COLUMNS;
    spec->param_count = 8;
    spec->checked = common_test_rng_below(rng, 2);
    spec->isa = avx2 && !spec->checked && common_test_rng_below(rng, 4) != 0
                    ? ENGINE_JIT_ISA_AVX2
                    : ENGINE_JIT_ISA_SCALAR;
    for (uint32_t c = 0; c < COLUMNS; c++) {
        spec->nullable[c] = c != 0; /* column 0 plays the rowid */
    }
    spec->root = common_test_rng_below(rng, 6) == 0
                     ? -1
                     : (int32_t)random_node(rng, spec,
                                            (int)common_test_rng_below(rng, 4));
    spec->aggregate_count = 1 + (uint32_t)common_test_rng_below(rng, 4);
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        spec->aggregates[a].kind =
            (enum engine_jit_aggregate_kind)common_test_rng_below(rng, 5);
        spec->aggregates[a].column =
            (uint8_t)common_test_rng_below(rng, COLUMNS);
    }
}

static int64_t random_value(struct common_test_rng *rng, bool extreme)
{
    if (extreme && common_test_rng_below(rng, 3) == 0) {
        int64_t big = INT64_MAX - (int64_t)common_test_rng_below(rng, 3);

        return common_test_rng_below(rng, 2) ? big : -big - 1;
    }
    return (int64_t)common_test_rng_below(rng, 21) - 10;
}

static void random_block(struct common_test_rng *rng, struct block *b,
                         struct engine_jit_pipe_args *args, bool extreme)
{
    for (size_t row = 0; row < ROWS; row++) {
        for (uint32_t c = 0; c < COLUMNS; c++) {
            b->values[c][row] = random_value(rng, extreme);
            b->nulls[c][row] = common_test_rng_below(rng, 8) == 0;
        }
        b->deleted[row] = common_test_rng_below(rng, 10) == 0;
    }
    for (uint32_t c = 0; c < COLUMNS; c++) {
        args->values[c] = b->values[c];
        args->nulls[c] = b->nulls[c];
    }
    args->deleted = b->deleted;
    for (uint32_t p = 0; p < 8; p++) {
        args->params[p] = random_value(rng, false);
    }
}

static void reset_totals(const struct engine_jit_pipe_spec *spec,
                         struct engine_jit_pipe_args *args)
{
    for (uint32_t a = 0; a < spec->aggregate_count; a++) {
        args->totals[a] = (struct engine_jit_pipe_total){
            .value = spec->aggregates[a].kind == ENGINE_JIT_MIN   ? INT64_MAX
                     : spec->aggregates[a].kind == ENGINE_JIT_MAX ? INT64_MIN
                                                                  : 0};
    }
}

static bool have_x86_64(void)
{
    struct engine_jit_cpu cpu;

    engine__jit_cpu_detect(&cpu);
    return cpu.x86_64;
}

/* ---- tests ---- */

static void kernels_match_the_reference(void **state)
{
    static struct block b;
    struct engine_jit_arena *arena = NULL;
    struct common_test_rng rng;
    struct engine_jit_cpu cpu;
    int bails = 0, compiled = 0, vector = 0;
    bool avx2;

    (void)state;
    if (!have_x86_64()) {
        skip();
    }
    engine__jit_cpu_detect(&cpu);
    avx2 = engine__jit_cpu_isa(&cpu) >= ENGINE_JIT_ISA_AVX2;
    common_test_rng_seed(&rng, "kernels_match_the_reference");
    assert_int_equal(engine__jit_arena_open(&arena, 16u << 20), 0);
    for (int round = 0; round < 3000; round++) {
        struct engine_jit_pipe_spec spec;
        struct engine_jit_pipe_args want = {0}, got;
        struct engine_jit_code code = {0};
        int want_rc, got_rc;

        random_spec(&rng, &spec, avx2);
        if (engine__jit_pipe_compile(arena, &spec, &code) != 0) {
            continue; /* more registers than the pool (tested below) */
        }
        compiled++;
        vector += spec.isa == ENGINE_JIT_ISA_AVX2;
        random_block(&rng, &b, &want, round % 3 == 0);
        want.begin = common_test_rng_below(&rng, 20);
        want.end = ROWS - common_test_rng_below(&rng, 20);
        reset_totals(&spec, &want);
        got = want;
        want_rc = reference(&spec, &b, &want);
        got_rc = engine__jit_pipe_entry(&code)(&got);
        assert_int_equal(got_rc, want_rc);
        bails += got_rc != ENGINE_JIT_DONE;
        for (uint32_t a = 0;
             got_rc == ENGINE_JIT_DONE && a < spec.aggregate_count; a++) {
            if (memcmp(&got.totals[a], &want.totals[a],
                       sizeof(want.totals[a]))) {
                fail_msg("round %d aggregate %u: count %lld/%lld value "
                         "%lld/%lld negative %lld/%lld",
                         round, a, (long long)got.totals[a].count,
                         (long long)want.totals[a].count,
                         (long long)got.totals[a].value,
                         (long long)want.totals[a].value,
                         (long long)got.totals[a].negative,
                         (long long)want.totals[a].negative);
            }
        }
        engine__jit_free(arena, &code);
    }
    printf("%d kernels compiled (%d with AVX2), %d bailed out on overflow\n",
           compiled, vector, bails);
    assert_true(compiled > 2000);
    assert_true(!avx2 || vector > 500);
    assert_true(bails > 10);
    engine__jit_arena_close(arena);
}

/* count(*), sum(c1) WHERE c0 > ?0 AND c1 IN (?1, ?2): the checked kernel
 * reads flags (movzx) and the clean one does not; both test with SETcc,
 * split the sum (sar 63) and check it (jo). */
static void pipe_kernel_decodes(void **state)
{
    static char lines[MAX_LINES][128];
    struct engine_jit_pipe_spec spec = {
        .column_count = 2,
        .nullable = {true, true},
        .nodes = {{.kind = ENGINE_JIT_NODE_COMPARE, .op = ENGINE_JIT_GT},
                  {.kind = ENGINE_JIT_NODE_IN,
                   .column = 1,
                   .param = 1,
                   .param_count = 2},
                  {.kind = ENGINE_JIT_NODE_AND, .left = 0, .right = 1}},
        .node_count = 3,
        .root = 2,
        .aggregates = {{.kind = ENGINE_JIT_COUNT_STAR},
                       {.kind = ENGINE_JIT_SUM, .column = 1}},
        .aggregate_count = 2,
        .param_count = 3,
        .isa = ENGINE_JIT_ISA_SCALAR,
    };

    (void)state;
    if (!have_objdump()) {
        skip();
    }
    for (int checked = 0; checked < 2; checked++) {
        struct engine_x64 as;
        int n, movzx = 0, setg = 0, sete = 0, jo = 0, sar = 0;

        spec.checked = checked;
        engine__x64_init(&as);
        assert_int_equal(engine__jit_pipe_emit(&as, &spec), 0);
        n = disassemble(as.code, as.size, lines);
        for (int i = 0; i < n; i++) {
            assert_null(strstr(lines[i], "(bad)"));
            movzx += strncmp(lines[i], "movzx", 5) == 0;
            setg += strncmp(lines[i], "setg ", 5) == 0;
            sete += strncmp(lines[i], "sete ", 5) == 0;
            jo += strncmp(lines[i], "jo ", 3) == 0;
            sar += strcmp(lines[i], "sar rdx,0x3f") == 0;
        }
        /* deleted + c0's and c1's NULL flags in the predicate + c1's for
         * the sum */
        assert_int_equal(movzx, checked ? 4 : 0);
        assert_int_equal(setg, 1);
        assert_int_equal(sete, 2 + (checked ? 3 : 0));
        assert_int_equal(jo, 2);
        assert_int_equal(sar, 1);
        engine__x64_close(&as);
    }
}

static void bad_specs_are_refused(void **state)
{
    struct engine_jit_pipe_spec spec = {
        .column_count = 1,
        .root = -1,
        .aggregate_count = 4,
        .isa = ENGINE_JIT_ISA_SCALAR,
    };
    struct engine_x64 as;

    (void)state;
    /* four sums need twelve registers; the pool has ten */
    for (uint32_t a = 0; a < 4; a++) {
        spec.aggregates[a].kind = ENGINE_JIT_SUM;
    }
    engine__x64_init(&as);
    assert_int_equal(engine__jit_pipe_emit(&as, &spec), -ENOTSUP);
    engine__x64_close(&as);
    /* a child not below its parent (a cycle) */
    spec.aggregate_count = 1;
    spec.nodes[0] = (struct engine_jit_node){.kind = ENGINE_JIT_NODE_AND};
    spec.node_count = 1;
    spec.root = 0;
    engine__x64_init(&as);
    assert_int_equal(engine__jit_pipe_emit(&as, &spec), -ENOTSUP);
    engine__x64_close(&as);
    /* a parameter past param_count, a column past column_count */
    spec.nodes[0] =
        (struct engine_jit_node){.kind = ENGINE_JIT_NODE_COMPARE, .param = 3};
    engine__x64_init(&as);
    assert_int_equal(engine__jit_pipe_emit(&as, &spec), -ENOTSUP);
    engine__x64_close(&as);
    spec.param_count = 4;
    spec.nodes[0].column = 1;
    engine__x64_init(&as);
    assert_int_equal(engine__jit_pipe_emit(&as, &spec), -ENOTSUP);
    engine__x64_close(&as);
    spec.nodes[0].column = 0;
    engine__x64_init(&as);
    assert_int_equal(engine__jit_pipe_emit(&as, &spec), 0);
    engine__x64_close(&as);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_match_the_reference),
        cmocka_unit_test(pipe_kernel_decodes),
        cmocka_unit_test(bad_specs_are_refused),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
