/* SPDX-License-Identifier: MIT
 *
 * Goal: the JSON functions (json, json_array, json_array_length,
 * json_extract, ->, ->>, json_insert, json_replace, json_set, json_remove,
 * json_object, json_patch, json_quote, json_type, json_valid,
 * json_group_array, json_group_object) give SQLite 3.40's results, value
 * by value and type by type, and its error messages, including the JSON
 * subtype rule (a JSON function's result passed to another is embedded as
 * JSON, not quoted).
 * Method: each statement runs in libsqlite3 (the oracle) and in the
 * engine on memory databases (sqlite_pair.h) and the whole outcomes are
 * compared: column names, each value with its storage class, errors.
 * Hand-written cases cover the grammar's edges (escapes, surrogate pairs,
 * the nesting limit, whitespace, numbers, malformed documents, NaN and
 * Infinity rejected), paths ($."a.b", [#-1], malformed paths), duplicate
 * keys, edits and merge patches; then a seeded generator builds random
 * documents (some made malformed) and random paths, and calls every
 * function on them. The seed is printed; SINEW_JSON_SEED replays one.
 */
#include "sqlite_pair.h"

#include <inttypes.h>
#include <stdlib.h>

/* Statements whose expected outcome was an error (the generator's
 * coverage of the error paths, printed with the summary). */
static long expected_errors;

/* Runs sql in both; counts and prints (the first few) mismatches. */
static void check(struct pair *p, const char *sql, long *mismatches)
{
    static char expected[PAIR_OUTCOME_SIZE];
    static char got[PAIR_OUTCOME_SIZE];

    oracle_outcome(p->oracle, sql, expected);
    engine_outcome(p->db, sql, got);
    expected_errors += strstr(expected, "\nerror: ") != NULL;
    if (strcmp(expected, got) != 0) {
        if (*mismatches < 30) {
            printf("MISMATCH %s\n-- sqlite:\n%s\n-- sinew:\n%s\n", sql,
                   expected, got);
        }
        (*mismatches)++;
    }
}

static const char *const cases[] = {
    /* json(): minifying, numbers kept as written, whitespace. */
    "SELECT json(' [1, 2 , {\"a\" : [ ]}] '), json('{}'), json('[]')",
    "SELECT json('1.0'), json('1e300'), json('-0.0'), json('-0'), "
    "json('123456789012345678901234567890'), json('1E+2'), json('1e-2')",
    "SELECT json(' \t\n\r5 \r\n'), json('\"x\"'), json('null'), "
    "json('true'), json('false')",
    "SELECT json('\"\\u0041\\n\\/\"'), json('\"\\ud83d\\ude00\"')",
    /* Malformed documents. */
    "SELECT json('')",
    "SELECT json(' ')",
    "SELECT json('[1,]')",
    "SELECT json('{\"a\":1,}')",
    "SELECT json('[1 2]')",
    "SELECT json('01')",
    "SELECT json('-')",
    "SELECT json('1.')",
    "SELECT json('.5')",
    "SELECT json('-.5')",
    "SELECT json('1e')",
    "SELECT json('1e+')",
    "SELECT json('NaN')",
    "SELECT json('Infinity')",
    "SELECT json('-Infinity')",
    "SELECT json('nul')",
    "SELECT json('nulls')",
    "SELECT json('truex')",
    "SELECT json('[true1]')",
    "SELECT json('\"\\x\"')",
    "SELECT json('\"\\u12\"')",
    "SELECT json('\"a\tb\"')",
    "SELECT json('{1:2}')",
    "SELECT json('{\"a\" 1}')",
    "SELECT json('[')",
    "SELECT json('\f1')",
    "SELECT json('0x10')",
    "SELECT json('1 2')",
    "SELECT json_valid('{[\"x\"]:1}')",
    "SELECT json('[1]x')",
    "SELECT json(x'5b315d'), json(5), json(1.5), json(NULL)",
    "SELECT json_valid(NULL), json_valid(''), json_valid('[1]'), "
    "json_valid('[1'), json_valid(x'00'), json_valid(12)",
    /* Values as SQL: types, integers past int64, escapes, \u0000. */
    "SELECT json_extract('[1, 1.5, \"a\", null, true, false, [1], {}]', "
    "'$[0]', '$[1]', '$[2]', '$[3]', '$[4]', '$[5]', '$[6]', '$[7]')",
    "SELECT typeof(json_extract('[1, 1.5, \"a\", null, true, false]', "
    "'$[0]')), typeof(json_extract('[1, 1.5]', '$[1]')), "
    "typeof(json_extract('[\"a\"]', '$[0]')), "
    "typeof(json_extract('[null]', '$[0]')), "
    "typeof(json_extract('[true]', '$[0]')), "
    "typeof(json_extract('[[1]]', '$[0]'))",
    "SELECT json_extract('9223372036854775807', '$'), "
    "json_extract('9223372036854775808', '$'), "
    "json_extract('-9223372036854775808', '$'), "
    "json_extract('-9223372036854775809', '$'), "
    "json_extract('12345678901234567890123', '$'), "
    "json_extract('1e400', '$'), json_extract('-0.0', '$')",
    "SELECT json_extract('\"a\\u0000b\"', '$'), "
    "json_extract('\"\\ud83d\\ude00|\\ud83d|\\u00e9|\\u0800\"', '$'), "
    "json_extract('\"\\b\\f\\n\\r\\t\\\\\\/\\\"\"', '$'), "
    "json_extract('\"\\udc00\\ud800\"', '$')",
    /* Paths. */
    "SELECT json_extract('{\"a.b\":1,\"a\":{\"b\":2}}', '$.\"a.b\"', "
    "'$.a.b', '$.\"a\".b')",
    "SELECT json_extract('[1,2,3]', '$[#-1]'), "
    "json_extract('[1,2,3]', '$[#-3]'), json_extract('[1,2,3]', '$[#-4]'), "
    "json_extract('[1,2,3]', '$[#]'), json_extract('[1,2,3]', '$[#-0]')",
    "SELECT json_extract('{\"a\":1,\"a\":2}', '$.a'), "
    "json_extract('{\"\\u0061\":1}', '$.a'), json_extract('{\"\":1}', "
    "'$.\"\"')",
    "SELECT json_extract('[1]', 'x')",
    "SELECT json_extract('[1]', '$x')",
    "SELECT json_extract('[1]', '$[')",
    "SELECT json_extract('[1]', '$[a]')",
    "SELECT json_extract('{\"a\":1}', '$.')",
    "SELECT json_extract('{\"a\":1}', '$.\"a')",
    "SELECT json_extract('{\"a\":1}', '$.a[')",
    "SELECT json_extract('[1]', '$.a[')",
    "SELECT json_extract('[1]', '$[#+1]')",
    "SELECT json_extract('[1]', '$[0]''x')",
    "SELECT json_extract('[1]', NULL), json_extract(NULL, '$'), "
    "json_extract('[1]'), json_extract()",
    "SELECT json_extract('[5,6]', '$[4294967296]'), "
    "json_extract('[5,6]', '$[4294967297]')",
    "SELECT json_extract('{\"a\":[1,{\"b\":2}]}', '$.a', '$.a[1].b', '$.x')",
    "SELECT json_extract('[1]', '$[0]', 'bad')",
    /* -> and ->>. */
    "SELECT '{\"a\":[1,2]}' -> 'a', '{\"a\":[1,2]}' ->> '$.a[1]', "
    "'[5,6]' -> 1, '[5,6]' -> '$[#-1]', '{\"a\":\"x\"}' -> 'a', "
    "'{\"a\":\"x\"}' ->> 'a'",
    "SELECT '{\"a\":1}' -> '[0]', '[1,[2]]' ->> 1, typeof('[1]' ->> '$'), "
    "'{\"-1\":3}' -> -1, '[5]' -> -1",
    "SELECT '[1,2]' -> 1.5",
    "SELECT '{\"$x\":1}' -> '$x'",
    "SELECT '{\"a\":{\"b\":[7]}}' -> 'a' -> 'b' ->> 0, "
    "'[1]' -> 0 || 'x', 1 + '[2]' ->> 0 * 3",
    "SELECT NULL -> 'a', '[1]' -> NULL, '[1]' ->> NULL",
    /* json_array, json_object, json_quote: SQL values to JSON. */
    "SELECT json_array(1.0, 1e300, -0.0, 1e999, -1e999, "
    "9223372036854775807, 'a\"b\\c', NULL, 0.1, 1e-7, 'x\ny\001')",
    "SELECT json_array(), json_array(json('[1]'), '[1]', json_array(2), "
    "json_object('a', 1), json_quote('q'), json_extract('[[3]]', '$[0]'))",
    "SELECT json_array(x'00')",
    "SELECT json_quote(x'00')",
    "SELECT json_object(), json_object('a', 1, 'b', json('[1]'), "
    "'c', '[1]', 'a', NULL, '', 2.5)",
    "SELECT json_object('a')",
    "SELECT json_object(1, 2)",
    "SELECT json_object(NULL, 2)",
    "SELECT json_object('a', x'01')",
    "SELECT json_quote(json('[1]')), json_quote(1.5), json_quote('x'), "
    "json_quote(NULL), json_quote(-7), json_quote('\"\\')",
    /* json_array_length, json_type. */
    "SELECT json_array_length('[1,[2,3],{}]'), json_array_length('{}'), "
    "json_array_length('5'), json_array_length('[1,[2,3]]', '$[1]'), "
    "json_array_length('[1]', '$[5]'), json_array_length(NULL)",
    "SELECT json_array_length('[1', '$')",
    "SELECT json_array_length('[1]', 'x')",
    "SELECT json_type('1'), json_type('1.5'), json_type('\"a\"'), "
    "json_type('null'), json_type('true'), json_type('false'), "
    "json_type('[]'), json_type('{}'), json_type('{\"a\":[1]}', '$.a'), "
    "json_type('{\"a\":[1]}', '$.b'), json_type(NULL), json_type('-0'), "
    "json_type('1e3')",
    /* Edits. */
    "SELECT json_set('{\"a\":1}', '$.a', 2, '$.b', 3, '$.c.d', 4, "
    "'$.e[0]', 5, '$.f[1]', 6)",
    "SELECT json_insert('{\"a\":1}', '$.a', 2, '$.b', 3), "
    "json_replace('{\"a\":1}', '$.a', 2, '$.b', 3)",
    "SELECT json_set('[1,2]', '$[2]', 3, '$[5]', 4, '$[#]', 5), "
    "json_insert('[1,2]', '$[#]', json('{}'))",
    "SELECT json_set('{}', '$', 5), typeof(json_set('{}', '$', 5)), "
    "json_replace('[1]', '$', 'x'), json_insert('[1]', '$', 2)",
    "SELECT json_set('{\"a\":{\"x\":1}}', '$.a', json('{}'), '$.a.b', 1)",
    "SELECT json_set('{}', '$.a', json('[1]'), '$.b', '[1]', '$.c', "
    "json_array(1, 2))",
    "SELECT json_set('{}', '$.\"a b\"', 1, '$.\"q\\\"', 2)",
    "SELECT json_set('{}', '$.a.', 1)",
    "SELECT json_set('{}', '$.a', 1, '$')",
    "SELECT json_set('{\"a\":1}', '$.a')",
    "SELECT json_insert('[]', 1)",
    "SELECT json_replace('[]', '$', 1, '$')",
    "SELECT json_set('x')",
    "SELECT json_set(), json_insert(), json_replace()",
    "SELECT json_set('[1]', '$[0]', x'01')",
    "SELECT json_set(NULL, '$', 1), json_set('[1]', NULL, 2)",
    "SELECT json_remove('[1,2,3]', '$[0]', '$[0]'), "
    "json_remove('{\"a\":1}', '$'), json_remove('{\"a\":1,\"a\":2}', "
    "'$.a', '$.a'), json_remove('[1,2]'), json_remove('[1,2]', '$[#-1]')",
    "SELECT json_remove('[1]', NULL), json_remove(NULL, '$'), json_remove()",
    "SELECT json_remove('[1]', '$[')",
    /* json_patch (RFC 7396 and SQLite's reading of it). */
    "SELECT json_patch('{\"a\":1,\"b\":2}', '{\"a\":null,\"c\":3}'), "
    "json_patch('{}', '{\"a\":1,\"a\":2}'), json_patch('[1]', '{\"a\":1}'), "
    "json_patch('{\"a\":1}', '[2]'), json_patch('{\"a\":{\"b\":1}}', "
    "'{\"a\":{\"b\":null,\"c\":{\"d\":null,\"e\":[null]}}}')",
    "SELECT json_patch('{\"a\":1,\"a\":2}', '{\"a\":3}'), "
    "json_patch('{\"a\":1}', '{\"a\":null,\"a\":3}'), "
    "json_patch('{\"a\":[1]}', '{\"a\":{\"x\":null,\"y\":1}}')",
    "SELECT json_patch('[', '{}')",
    "SELECT json_patch('{}', '{')",
    "SELECT json_patch(NULL, '{}'), json_patch('{}', NULL)",
    /* Aggregates and the subtype through them. */
    "SELECT json_group_array(v) FROM (SELECT 1 AS v) WHERE v = 2",
    "SELECT json_group_object(v, v) FROM (SELECT 1 AS v) WHERE v = 2",
    "SELECT json_group_object(NULL, 1)",
    "SELECT json_group_array(x'01')",
    /* The subtype survives calls, not storage. */
    "SELECT json_array(max(json('[1]'), 0)), json_array(lower(json('[1]')))",
    "SELECT json_array(v) FROM (SELECT json('[1]') AS v)",
    NULL,
};

/* Tables: stored JSON loses the subtype. */
static const char *const table_cases[] = {
    "CREATE TABLE t(id INTEGER PRIMARY KEY, j TEXT, p TEXT)",
    "INSERT INTO t(j, p) VALUES (json('[1,{\"a\":2}]'), '$[1].a'), "
    "('{\"a\":[1,2,3],\"b\":{\"c\":null}}', '$.a[#-1]'), ('bad', '$'), "
    "(NULL, '$'), ('[]', '$[0]')",
    "SELECT id, json_array(j), json_extract(j, p), j -> p, j ->> p "
    "FROM t WHERE id <> 3",
    "SELECT id, json_valid(j), json_type(j) FROM t WHERE id <> 3",
    "CREATE TABLE g(k, v)",
    "INSERT INTO g VALUES (1, 'x'), ('b', NULL), (2.5, 3), ('c', '[1]'), "
    "('d', '{}')",
    "SELECT json_group_array(v), json_group_object(k, v) FROM g",
    "SELECT json_group_array(json(v)), json_array(json_group_array(v)) "
    "FROM g WHERE k IN ('c', 'd')",
    "SELECT k, json_group_array(v), json_group_object(k, json_quote(v)) "
    "FROM g GROUP BY typeof(k) ORDER BY 1",
    "SELECT json_group_array(j) FROM t",
    "SELECT json_group_array(json_type(j)) FROM t WHERE id <> 3",
    "SELECT id FROM t WHERE id <> 3 AND j ->> '$[0]' = 1",
    "SELECT json_array(coalesce(j, 1)), json_array(iif(1, j, 0)), "
    "json_array(nullif(j, 'x')), json_array(max(j, '')) FROM t WHERE id = 1",
    "SELECT json_array(coalesce(json(j), 1)), json_array(iif(1, json(j), 0)) "
    "FROM t WHERE id = 1",
    "SELECT json_array(CASE WHEN id = 1 THEN json(j) END) FROM t WHERE id = 1",
    "SELECT json_array(j) FROM (SELECT j FROM t WHERE id = 1 ORDER BY id)",
    NULL,
};

static void json_cases(void **state)
{
    struct pair p;
    long mismatches = 0;

    (void)state;
    pair_open(&p);
    for (size_t i = 0; cases[i] != NULL; i++) {
        check(&p, cases[i], &mismatches);
    }
    for (size_t i = 0; table_cases[i] != NULL; i++) {
        check(&p, table_cases[i], &mismatches);
    }
    pair_close(&p);
    assert_int_equal(mismatches, 0);
}

/* Nesting up to and past SQLite's limit of 2000. */
static void json_depth(void **state)
{
    static char sql[20000];
    struct pair p;
    long mismatches = 0;
    const int depths[] = {1999, 2000, 2001};

    (void)state;
    pair_open(&p);
    for (size_t d = 0; d < 3; d++) {
        for (int object = 0; object < 2; object++) {
            size_t n = 0;
            n += (size_t)sprintf(sql + n, "SELECT json_valid('");
            for (int i = 0; i < depths[d]; i++) {
                n += (size_t)sprintf(sql + n, "%s", object ? "{\"a\":" : "[");
            }
            sql[n++] = '1';
            for (int i = 0; i < depths[d]; i++) {
                sql[n++] = object ? '}' : ']';
            }
            sprintf(sql + n, "')");
            check(&p, sql, &mismatches);
        }
    }
    pair_close(&p);
    assert_int_equal(mismatches, 0);
}

/* ---- the random generator ---- */

#define GEN_CASES 6000
#define GEN_SQL_SIZE 4096

struct gen {
    uint64_t state;
    char *out; /* GEN_SQL_SIZE bytes */
    size_t size;
};

static uint64_t gen_next(struct gen *g)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned gen_below(struct gen *g, unsigned n)
{
    return (unsigned)(gen_next(g) % n);
}

static void gen_add(struct gen *g, const char *text)
{
    size_t size = strlen(text);

    if (g->size + size < GEN_SQL_SIZE) {
        memcpy(g->out + g->size, text, size + 1);
        g->size += size;
    }
}

static void gen_space(struct gen *g)
{
    static const char *const spaces[] = {" ", "\n", "  ", "\t", "\r\n"};

    if (gen_below(g, 6) == 0) {
        gen_add(g, spaces[gen_below(g, 5)]);
    }
}

/* Keys are few, so objects get duplicates and paths find them. */
static const char *const gen_keys[] = {
    "\"a\"", "\"b\"", "\"a.b\"", "\"\"", "\"c d\"", "\"\\u0061\"", "\"x[0]\"",
};

static void gen_scalar(struct gen *g)
{
    static const char *const scalars[] = {
        "null",
        "true",
        "false",
        "0",
        "-0",
        "1",
        "-17",
        "42",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901",
        "1.5",
        "-0.0",
        "1e10",
        "1E+2",
        "2.50",
        "1e-5",
        "1e400",
        "\"\"",
        "\"x\"",
        "\"it's\"",
        "\"a\\\"b\"",
        "\"\\n\\t\\\\\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud800\"",
        "\"\\u0000z\"",
        "\"caf\xc3\xa9\"",
        "\"a.b\"",
        "\"[1]\"",
        "\"\\/\"",
    };

    gen_add(g, scalars[gen_below(g, sizeof(scalars) / sizeof(scalars[0]))]);
}

static void gen_json(struct gen *g, int depth)
{
    unsigned kind = depth > 3 ? 0 : gen_below(g, 5);
    unsigned count = gen_below(g, 4);

    gen_space(g);
    if (kind < 2) {
        gen_scalar(g);
    } else if (kind < 4) {
        gen_add(g, "[");
        for (unsigned i = 0; i < count; i++) {
            gen_add(g, i ? "," : "");
            gen_json(g, depth + 1);
        }
        gen_space(g);
        gen_add(g, "]");
    } else {
        gen_add(g, "{");
        for (unsigned i = 0; i < count; i++) {
            gen_add(g, i ? "," : "");
            gen_space(g);
            gen_add(g, gen_keys[gen_below(g, 7)]);
            gen_space(g);
            gen_add(g, ":");
            gen_json(g, depth + 1);
        }
        gen_space(g);
        gen_add(g, "}");
    }
    gen_space(g);
}

/* Quotes text[from..] as an SQL string literal in place. */
static void gen_quote(struct gen *g, size_t from)
{
    char copy[GEN_SQL_SIZE];
    size_t n = 0;

    memcpy(copy, g->out + from, g->size - from + 1);
    g->size = from;
    g->out[g->size] = '\0';
    gen_add(g, "'");
    for (size_t i = 0; copy[i] != '\0'; i++) {
        char two[3] = {copy[i], 0, 0};
        if (copy[i] == '\'') {
            two[1] = '\'';
        }
        gen_add(g, two);
        n++;
    }
    gen_add(g, "'");
}

/* A document as an SQL literal; one in eight slightly damaged. */
static void gen_document(struct gen *g)
{
    size_t from = g->size;

    gen_json(g, 0);
    if (gen_below(g, 8) == 0 && g->size > from) {
        size_t at = from + gen_below(g, (unsigned)(g->size - from));
        static const char damage[] = ",]}:\"x0-.{[\\ ";
        if (gen_below(g, 2) == 0) {
            memmove(g->out + at, g->out + at + 1, g->size - at);
            g->size--;
        } else {
            g->out[at] = damage[gen_below(g, sizeof(damage) - 1)];
        }
    }
    gen_quote(g, from);
}

static void gen_path(struct gen *g)
{
    static const char *const steps[] = {
        ".a",  ".b",  ".\"a.b\"", ".\"\"", ".\"c d\"", ".x[0]", "[0]",
        "[1]", "[2]", "[#]",      "[#-1]", "[#-2]",    "[#-9]", ".\"a\"",
    };
    static const char *const bad[] = {
        "$.",       "$[",    "a",     "$[x]",  "$.\"a", "$[#+1]",
        "$a",       "$[1",   "$.a.",  "$..a",  "$[0]x", "$[x']",
        "$.\"it's", "$[01]", "$[#-]", "$[ 1]",
    };
    size_t from = g->size;
    unsigned count = gen_below(g, 4);

    if (gen_below(g, 12) == 0) {
        gen_add(g, bad[gen_below(g, sizeof(bad) / sizeof(bad[0]))]);
    } else {
        gen_add(g, "$");
        for (unsigned i = 0; i < count; i++) {
            gen_add(g, steps[gen_below(g, sizeof(steps) / sizeof(steps[0]))]);
        }
    }
    gen_quote(g, from);
}

/* The right operand of -> and ->>: a path, a key or an index. */
static void gen_ptr_operand(struct gen *g)
{
    static const char *const operands[] = {
        "'a'", "'b'",  "0",    "1",       "-1",    "'[0]'", "'[#-1]'", "'a.b'",
        "'0'", "'1x'", "' a'", "'\"a\"'", "x'61'", "1.0",   "'[#]'",   "''",
    };

    if (gen_below(g, 2) == 0) {
        gen_path(g);
    } else {
        gen_add(g,
                operands[gen_below(g, sizeof(operands) / sizeof(operands[0]))]);
    }
}

static void gen_sql_value(struct gen *g)
{
    static const char *const values[] = {
        "1",
        "2.5",
        "'str'",
        "NULL",
        "json('[1]')",
        "json_array(1, 'x')",
        "json_quote('q')",
        "'[1]'",
        "-0.0",
        "1e300",
        "json('{\"z\":{}}')",
        "1e15",
        "1e16",
        "0.1 + 0.2",
        "123456789.125",
        "-9223372036854775808",
        "x'00'",
        "'line\n\x01'",
        "char(0, 65)",
        "'{\"a\":1}' -> 'a'",
        "'[{\"b\":2}]' -> '$[0]'",
        "json_set('[]', '$[0]', json('{}'))",
    };

    if (gen_below(g, 6) == 0) {
        gen_add(g, "json_patch(");
        gen_document(g);
        gen_add(g, ", ");
        gen_document(g);
        gen_add(g, ")");
        return;
    }
    if (gen_below(g, 5) == 0) {
        gen_add(g, "json(");
        gen_document(g);
        gen_add(g, ")");
        return;
    }
    gen_add(g, values[gen_below(g, sizeof(values) / sizeof(values[0]))]);
}

/* doc, path, value... as "D, P, V, P, V" for the edit functions. */
static void gen_edit_args(struct gen *g)
{
    unsigned pairs = 1 + gen_below(g, 3);

    gen_document(g);
    for (unsigned i = 0; i < pairs; i++) {
        gen_add(g, ", ");
        gen_path(g);
        gen_add(g, ", ");
        gen_sql_value(g);
    }
    gen_add(g, ")");
}

static void gen_call_paths(struct gen *g, const char *name, unsigned max)
{
    unsigned count = gen_below(g, max + 1);

    gen_add(g, name);
    gen_document(g);
    for (unsigned i = 0; i < count; i++) {
        gen_add(g, ", ");
        gen_path(g);
    }
    gen_add(g, ")");
}

static void gen_call(struct gen *g)
{
    switch (gen_below(g, 14)) {
    case 0:
        gen_call_paths(g, "json(", 0);
        break;
    case 1:
        gen_call_paths(g, "json_valid(", 0);
        break;
    case 2:
        gen_call_paths(g, "json_type(", 1);
        break;
    case 3:
        gen_call_paths(g, "json_array_length(", 1);
        break;
    case 4:
        gen_call_paths(g, "json_extract(", 3);
        break;
    case 5:
        gen_call_paths(g, "json_remove(", 3);
        break;
    case 6:
        gen_document(g);
        gen_add(g, gen_below(g, 2) ? " -> " : " ->> ");
        gen_ptr_operand(g);
        break;
    case 7:
        gen_add(g, "json_set(");
        gen_edit_args(g);
        break;
    case 8:
        gen_add(g, "json_insert(");
        gen_edit_args(g);
        break;
    case 9:
        gen_add(g, "json_replace(");
        gen_edit_args(g);
        break;
    case 10:
        gen_add(g, "json_patch(");
        gen_document(g);
        gen_add(g, ", ");
        gen_document(g);
        gen_add(g, ")");
        break;
    case 11:
        gen_add(g, "json_array(");
        gen_sql_value(g);
        gen_add(g, ", json_extract(");
        gen_document(g);
        gen_add(g, ", ");
        gen_path(g);
        gen_add(g, "))");
        break;
    case 12:
        gen_add(g, "json_object('k', ");
        gen_sql_value(g);
        gen_add(g, ", 'j', ");
        gen_document(g);
        gen_add(g, " -> ");
        gen_ptr_operand(g);
        gen_add(g, ")");
        break;
    default:
        gen_add(g, "json_quote(");
        gen_document(g);
        gen_add(g, " ->> ");
        gen_ptr_operand(g);
        gen_add(g, ")");
        break;
    }
}

static void json_random(void **state)
{
    static char sql[GEN_SQL_SIZE];
    const char *env = getenv("SINEW_JSON_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0) : 20261203;
    struct gen g = {seed, sql, 0};
    struct pair p;
    long mismatches = 0;

    (void)state;
    expected_errors = 0;
    printf("json_random seed=%" PRIu64 " cases=%d\n", seed, GEN_CASES);
    pair_open(&p);
    for (int i = 0; i < GEN_CASES; i++) {
        g.size = 0;
        sql[0] = '\0';
        gen_add(&g, "SELECT ");
        gen_call(&g);
        check(&p, sql, &mismatches);
    }
    pair_close(&p);
    printf("json_random mismatches=%ld expected_errors=%ld\n", mismatches,
           expected_errors);
    assert_int_equal(mismatches, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_cases),
        cmocka_unit_test(json_depth),
        cmocka_unit_test(json_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
