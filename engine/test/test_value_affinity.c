/* SPDX-License-Identifier: MIT
 *
 * test_value_affinity.c: declared types, column affinity, CAST and the
 * sqlite3_value_* conversions agree with SQLite 3.40.
 *
 * Method, all against libsqlite3 in-process:
 *   - declared types: for a type name T, SQLite's affinity shows in
 *     typeof(CAST('1.5' AS T)) and typeof(CAST(1 AS T)) (INTEGER: integer,
 *     integer; NUMERIC: real, integer; REAL: real, real; TEXT: text, text;
 *     BLOB: blob, blob); fixed names from the brief plus 3,000 random
 *     names glued from the fragments the rules look for;
 *   - storage: each value is inserted into t(a INT, b TEXT, c REAL,
 *     d NUMERIC, e BLOB, f) and read back; engine__value_apply_affinity
 *     must give the same class and bits;
 *   - CAST(?1 AS INTEGER / REAL / NUMERIC / TEXT / BLOB) against
 *     engine__value_cast, and sqlite3_column_int64/double/text of ?1
 *     against engine__value_to_int/_to_real/_to_text;
 * each on fixed edge values and 40,000 random values of every class.
 */
#include "test_value_oracle.h"

#define RANDOM_TYPE_COUNT 3000
#define RANDOM_VALUE_COUNT 40000

static const enum engine_affinity column_affinities[] = {
    ENGINE_AFFINITY_INTEGER, ENGINE_AFFINITY_TEXT, ENGINE_AFFINITY_REAL,
    ENGINE_AFFINITY_NUMERIC, ENGINE_AFFINITY_BLOB, ENGINE_AFFINITY_BLOB};
static const enum engine_affinity cast_affinities[] = {
    ENGINE_AFFINITY_INTEGER, ENGINE_AFFINITY_REAL, ENGINE_AFFINITY_NUMERIC,
    ENGINE_AFFINITY_TEXT, ENGINE_AFFINITY_BLOB};

struct fixture {
    sqlite3 *db;
    sqlite3_stmt *insert; /* one value into every column */
    sqlite3_stmt *select; /* read back (RETURNING would show an integer
                             for a REAL column: the REAL step happens in
                             the record) */
    sqlite3_stmt *cast;   /* the five CASTs and ?1 itself */
    struct engine_arena arena;
};

static int fixture_setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));

    f->db = oracle_open();
    oracle_exec(f->db, "CREATE TABLE t(a INT, b TEXT, c REAL, d NUMERIC, "
                       "e BLOB, f)");
    f->insert =
        oracle_prepare(f->db, "INSERT INTO t VALUES(?1,?1,?1,?1,?1,?1)");
    f->select = oracle_prepare(f->db, "SELECT a, b, c, d, e, f FROM t");
    f->cast = oracle_prepare(f->db, "SELECT CAST(?1 AS INTEGER), "
                                    "CAST(?1 AS REAL), CAST(?1 AS NUMERIC), "
                                    "CAST(?1 AS TEXT), CAST(?1 AS BLOB), ?1");
    engine__arena_init(&f->arena);
    *state = f;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *f = *state;

    engine__arena_close(&f->arena);
    sqlite3_finalize(f->insert);
    sqlite3_finalize(f->select);
    sqlite3_finalize(f->cast);
    sqlite3_close(f->db);
    test_free(f);
    return 0;
}

/* SQLite's affinity for a type name, read from two CASTs. */
static enum engine_affinity oracle_affinity(sqlite3 *db, const char *decl)
{
    char sql[256];
    sqlite3_stmt *stmt;
    enum engine_affinity affinity;

    snprintf(sql, sizeof(sql),
             "SELECT typeof(CAST('1.5' AS %s)) || "
             "typeof(CAST(1 AS %s))",
             decl, decl);
    stmt = oracle_prepare(db, sql);
    oracle_step_row(stmt);
    const char *kinds = (const char *)sqlite3_column_text(stmt, 0);
    if (strcmp(kinds, "integerinteger") == 0) {
        affinity = ENGINE_AFFINITY_INTEGER;
    } else if (strcmp(kinds, "realinteger") == 0) {
        affinity = ENGINE_AFFINITY_NUMERIC;
    } else if (strcmp(kinds, "realreal") == 0) {
        affinity = ENGINE_AFFINITY_REAL;
    } else if (strcmp(kinds, "texttext") == 0) {
        affinity = ENGINE_AFFINITY_TEXT;
    } else {
        assert_string_equal(kinds, "blobblob");
        affinity = ENGINE_AFFINITY_BLOB;
    }
    sqlite3_finalize(stmt);
    return affinity;
}

static void check_decl(sqlite3 *db, const char *decl)
{
    enum engine_affinity ours =
        engine__affinity_of_declared_type(decl, strlen(decl));
    enum engine_affinity oracle = oracle_affinity(db, decl);

    if (ours != oracle) {
        fail_msg("type '%s': ours %d, sqlite %d", decl, ours, oracle);
    }
}

static void affinity_declared_fixed(void **state)
{
    static const char *const decls[] = {"INT",
                                        "INTEGER",
                                        "TINYINT",
                                        "BIGINT",
                                        "CHARINT",
                                        "FLOATING POINT",
                                        "STRING",
                                        "VARCHAR(10)",
                                        "NCHAR(5)",
                                        "CLOB",
                                        "TEXT",
                                        "BLOB",
                                        "REAL",
                                        "DOUBLE",
                                        "DOUBLE PRECISION",
                                        "FLOAT",
                                        "NUMERIC",
                                        "DECIMAL(10,5)",
                                        "BOOLEAN",
                                        "DATE",
                                        "DATETIME",
                                        "BLOBTEXT",
                                        "TEXTBLOB",
                                        "REALBLOB",
                                        "BLOBREAL",
                                        "TEXTREAL",
                                        "integer",
                                        "Int8",
                                        "POINT",
                                        "interval",
                                        "ANYTHING",
                                        "DOUBLE TEXT",
                                        "BLOB INT",
                                        "CHARACTER VARYING(255)"};
    struct fixture *f = *state;

    for (size_t i = 0; i < sizeof(decls) / sizeof(decls[0]); i++) {
        check_decl(f->db, decls[i]);
    }
    assert_int_equal(engine__affinity_of_declared_type(NULL, 0),
                     ENGINE_AFFINITY_BLOB);
    assert_int_equal(engine__affinity_of_declared_type("", 0),
                     ENGINE_AFFINITY_BLOB);
    assert_int_equal(engine__affinity_of_declared_type("TEXT\0INT", 8),
                     ENGINE_AFFINITY_TEXT);
}

static void affinity_declared_random(void **state)
{
    static const char *const fragments[] = {
        "char",  "CLOB",   "text", "Blob", "REAL", "floa", "doub", "int", "InG",
        "point", "string", "var",  "x",    "le",   "ger",  "eger", "ble", "b",
        "t",     "r",      "ch",   "ar",   "lo",   "ob",   "te",   "xt",  "re",
        "al",    "fl",     "oa",   "do",   "ub",   "i",    "nt",   " q"};
    struct fixture *f = *state;
    struct common_test_rng rng;
    char decl[128];

    common_test_rng_seed(&rng, "affinity_declared_random");
    for (int i = 0; i < RANDOM_TYPE_COUNT; i++) {
        size_t n = 0;
        /* Every word starts with q, so none is a keyword ("q alter"
         * once was: a syntax error in both engines). */
        decl[n++] = 'q';
        for (uint64_t k = common_test_rng_below(&rng, 6) + 1; k > 0; k--) {
            const char *piece = fragments[common_test_rng_below(
                &rng, sizeof(fragments) / sizeof(fragments[0]))];
            memcpy(decl + n, piece, strlen(piece));
            n += strlen(piece);
        }
        decl[n] = '\0';
        if (decl[n - 1] == ' ') {
            decl[n - 1] = '\0';
        }
        check_decl(f->db, decl);
    }
    printf("affinity_declared_random: %d type names, 0 mismatches\n",
           RANDOM_TYPE_COUNT);
}

static void check_value(struct fixture *f, const struct engine_value *v)
{
    char buf[200];

    oracle_exec(f->db, "DELETE FROM t");
    oracle_bind(f->insert, 1, v);
    assert_int_equal(sqlite3_step(f->insert), SQLITE_DONE);
    oracle_reset(f->insert);
    oracle_step_row(f->select);
    for (int c = 0; c < 6; c++) {
        struct engine_value ours = *v;
        struct engine_value oracle = oracle_column(f->select, c);
        assert_int_equal(engine__value_apply_affinity(
                             &ours, column_affinities[c], &f->arena),
                         0);
        VALUE_ASSERT_EQUAL(&ours, &oracle, "%s stored in column %c\n",
                           value_describe(v, buf, 200), 'a' + c);
    }
    oracle_reset(f->select);

    oracle_bind(f->cast, 1, v);
    oracle_step_row(f->cast);
    for (int c = 0; c < 5; c++) {
        struct engine_value ours;
        struct engine_value oracle = oracle_column(f->cast, c);
        assert_int_equal(
            engine__value_cast(v, cast_affinities[c], &f->arena, &ours), 0);
        VALUE_ASSERT_EQUAL(&ours, &oracle, "CAST(%s AS affinity %d)\n",
                           value_describe(v, buf, 200), cast_affinities[c]);
    }
    /* sqlite3_column_* convert in place; text last, so the number reads
     * see the original class. */
    assert_int_equal(engine__value_to_int(v), sqlite3_column_int64(f->cast, 5));
    double real = engine__value_to_real(v);
    double oracle_real = sqlite3_column_double(f->cast, 5);
    if (memcmp(&real, &oracle_real, sizeof(real)) != 0) {
        fail_msg("value_to_real(%s): ours %a, sqlite %a",
                 value_describe(v, buf, 200), real, oracle_real);
    }
    struct engine_value text, oracle_text;
    assert_int_equal(engine__value_to_text(v, &f->arena, &text), 0);
    const unsigned char *bytes = sqlite3_column_text(f->cast, 5);
    oracle_text = bytes == NULL
                      ? engine__value_null()
                      : engine__value_text(
                            bytes, (size_t)sqlite3_column_bytes(f->cast, 5));
    VALUE_ASSERT_EQUAL(&text, &oracle_text, "value_to_text(%s)\n",
                       value_describe(v, buf, 200));
    oracle_reset(f->cast);
}

static void affinity_values_fixed(void **state)
{
    static const char *const texts[] = {"3.0",
                                        "1e3",
                                        " 12 ",
                                        "9223372036854775808",
                                        "9223372036854775807",
                                        "-9223372036854775808",
                                        "12abc",
                                        "abc",
                                        "0x10",
                                        "",
                                        "-0",
                                        "-0.0",
                                        "1e400",
                                        "2251799813685248.0",
                                        "2251799813685247.5",
                                        "1e",
                                        "1.5e",
                                        "  -7.25e-1  ",
                                        "4503599627370497",
                                        "1e15",
                                        "1.0e+20"};
    struct fixture *f = *state;

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct engine_value v = engine__value_text(texts[i], strlen(texts[i]));
        check_value(f, &v);
        v.type = ENGINE_BLOB;
        check_value(f, &v);
    }
    const struct engine_value numbers[] = {
        engine__value_real(3.0),
        engine__value_real(-0.0),
        engine__value_real(9223372036854775808.0),
        engine__value_real(-9223372036854775808.0),
        engine__value_real(1e20),
        engine__value_real(0.5),
        engine__value_real(INFINITY),
        engine__value_int(INT64_MIN),
        engine__value_int(INT64_MAX),
        engine__value_null(),
        engine__value_blob("3132", 0),
        engine__value_blob("\x31\x32", 2),
    };
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
        check_value(f, &numbers[i]);
    }
    engine__arena_reset(&f->arena);
}

static void affinity_values_random(void **state)
{
    struct fixture *f = *state;
    struct common_test_rng rng;

    common_test_rng_seed(&rng, "affinity_values_random");
    for (int i = 0; i < RANDOM_VALUE_COUNT; i++) {
        struct engine_value v = gen_value(&rng, &f->arena);
        check_value(f, &v);
        engine__arena_reset(&f->arena);
    }
    printf("affinity_values_random: %d values x (6 columns, 5 casts, 3 "
           "conversions), 0 mismatches\n",
           RANDOM_VALUE_COUNT);
}

static void affinity_exact_int(void **state)
{
    int64_t i = 42;

    (void)state;
    assert_true(engine__real_to_exact_int(3.0, &i));
    assert_int_equal(i, 3);
    assert_true(engine__real_to_exact_int(-0.0, &i));
    assert_int_equal(i, 0);
    i = 42;
    assert_false(engine__real_to_exact_int(0.5, &i));
    assert_false(engine__real_to_exact_int(9223372036854775808.0, &i));
    assert_false(engine__real_to_exact_int(-9223372036854775808.0, &i));
    assert_false(engine__real_to_exact_int(INFINITY, &i));
    assert_int_equal(i, 42);
}

/* The built-in collations by name, as COLLATE accepts them. */
static void affinity_collation_names(void **state)
{
    static const struct {
        const char *name;
        int rc;
        enum engine_collation collation;
    } cases[] = {
        {"BINARY", 0, ENGINE_COLLATION_BINARY},
        {"binary", 0, ENGINE_COLLATION_BINARY},
        {"NoCase", 0, ENGINE_COLLATION_NOCASE},
        {"rtrim", 0, ENGINE_COLLATION_RTRIM},
        {"RTRIMX", ENGINE_ESQL, ENGINE_COLLATION_BINARY},
        {"NOCAS", ENGINE_ESQL, ENGINE_COLLATION_BINARY},
    };
    struct fixture *f = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum engine_collation out = ENGINE_COLLATION_BINARY;
        char sql[64];
        sqlite3_stmt *stmt = NULL;
        int rc = engine__collation_by_name(cases[i].name, strlen(cases[i].name),
                                           &out);
        assert_int_equal(rc, cases[i].rc);
        assert_int_equal(out, cases[i].collation);
        snprintf(sql, sizeof(sql), "SELECT 'a' < 'b' COLLATE \"%s\"",
                 cases[i].name);
        int oracle = sqlite3_prepare_v2(f->db, sql, -1, &stmt, NULL);
        sqlite3_finalize(stmt);
        assert_int_equal(oracle == SQLITE_OK, rc == 0);
    }
    /* COLLATE "" is no name at all: SQLite's parser drops an empty
     * collation token, so that is the parser's case, not a name. */
    enum engine_collation out = ENGINE_COLLATION_NOCASE;
    assert_int_equal(engine__collation_by_name("", 0, &out), ENGINE_ESQL);
    assert_int_equal(out, ENGINE_COLLATION_NOCASE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(affinity_declared_fixed),
        cmocka_unit_test(affinity_declared_random),
        cmocka_unit_test(affinity_values_fixed),
        cmocka_unit_test(affinity_values_random),
        cmocka_unit_test(affinity_exact_int),
        cmocka_unit_test(affinity_collation_names),
    };

    return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
