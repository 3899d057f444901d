/* SPDX-License-Identifier: MIT
 *
 * pragma.c: PRAGMA statements and VACUUM, after SQLite 3.40's pragma.c
 * (sqlite3Pragma) and vacuum.c.
 *
 * A pragma is looked up by name (any case); an unknown one does nothing
 * and returns no rows, as SQLite does ("No error messages are generated if
 * an unknown pragma is issued"). Planning does what SQLite does while it
 * prepares: it checks the schema name ("unknown database"), the errors
 * SQLite raises at prepare, and names the result columns, which a pragma
 * that sets a value (user_version = 5) does not have. Running computes
 * every result row at the first step.
 *
 * Values are read as SQLite reads them: sqlite3GetInt32() for numbers
 * (0x hex, a leading sign, digits up to the first non-digit, 0 when not a
 * 32-bit integer) and getSafetyLevel() for synchronous.
 */
#include "pragma.h"

#include <string.h>
#include <strings.h>

#include "storage.h"

/* SQLITE_INTEGRITY_CHECK_ERROR_MAX: integrity_check's default limit. */
#define PRAGMA_CHECK_ERRORS_DEFAULT 100

struct pragma_def {
    const char *name;
    const char *const *columns;
    int column_count;
    /* With a value the pragma sets something and has no result columns
     * (SQLite's PragFlg_NoColumns1). */
    bool setter;
    int (*run)(struct engine_stmt *stmt, const struct ast_pragma *pragma);
};

/* ---- reading values ---- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* sqlite3GetInt32's hexadecimal branch: z after "0x". */
static bool get_hex32(const char *z, int32_t *out)
{
    uint32_t u = 0;
    int i;

    while (z[0] == '0') {
        z++;
    }
    for (i = 0; i < 8 && common_hex_value(z[i]) >= 0; i++) {
        u = u * 16 + (uint32_t)common_hex_value(z[i]);
    }
    if ((u & 0x80000000u) != 0 || common_hex_value(z[i]) >= 0) {
        return false;
    }
    *out = (int32_t)u;
    return true;
}

/* sqlite3GetInt32(): true and *out when z starts with a 32-bit integer. */
static bool get_int32(const char *z, int32_t *out)
{
    bool negative = false;
    int64_t v = 0;
    int i;

    if (z[0] == '-') {
        negative = true;
        z++;
    } else if (z[0] == '+') {
        z++;
    } else if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X') &&
               common_hex_value(z[2]) >= 0) {
        return get_hex32(z + 2, out);
    }
    if (!is_digit(z[0])) {
        return false;
    }
    while (z[0] == '0') {
        z++;
    }
    for (i = 0; i < 11 && is_digit(z[i]); i++) {
        v = v * 10 + (z[i] - '0');
    }
    if (i > 10 || v - negative > INT32_MAX) {
        return false;
    }
    *out = (int32_t)(negative ? -v : v);
    return true;
}

/* getSafetyLevel(z, 0, 1): a number, or on/no/off/false/yes/true/extra/
 * full; anything else (normal too) is 1. */
static int safety_level(const char *z)
{
    static const struct {
        const char *word;
        int level;
    } words[] = {{"on", 1},  {"no", 0},   {"off", 0},   {"false", 0},
                 {"yes", 1}, {"true", 1}, {"extra", 3}, {"full", 2}};
    int32_t n = 0;

    if (is_digit(z[0])) {
        get_int32(z, &n);
        return (int)(uint8_t)n;
    }
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcasecmp(z, words[i].word) == 0) {
            return words[i].level;
        }
    }
    return 1;
}

/* ---- result rows ---- */

static int keep_bytes(struct engine_stmt *stmt, struct engine_value *v)
{
    void *bytes;

    if (v->type != ENGINE_TEXT && v->type != ENGINE_BLOB) {
        return 0;
    }
    bytes =
        engine__arena_memdup(&stmt->result_arena, v->u.s.bytes, v->u.s.size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    v->u.s.bytes = bytes;
    return 0;
}

int engine__pragma_row(struct engine_stmt *stmt,
                       const struct engine_value *values)
{
    size_t width = (size_t)stmt->column_count;
    struct engine_value *row;

    ASSERT(width > 0);
    if (stmt->returning_count == stmt->returning_capacity) {
        size_t grown =
            stmt->returning_capacity ? stmt->returning_capacity * 2 : 16;
        struct engine_value *more =
            common_realloc_array(stmt->returning, grown * width, sizeof(*more));

        if (more == NULL) {
            return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
        }
        stmt->returning = more;
        stmt->returning_capacity = grown;
    }
    row = &stmt->returning[stmt->returning_count * width];
    for (size_t c = 0; c < width; c++) {
        row[c] = values[c];
        if (keep_bytes(stmt, &row[c]) != 0) {
            return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
        }
    }
    stmt->returning_count++;
    return 0;
}

static int text_row(struct engine_stmt *stmt, const char *text)
{
    struct engine_value v = engine__value_text(text, strlen(text));

    return engine__pragma_row(stmt, &v);
}

static int int_row(struct engine_stmt *stmt, int64_t i)
{
    struct engine_value v = engine__value_int(i);

    return engine__pragma_row(stmt, &v);
}

/* ---- the pragmas ---- */

static int run_table_info(struct engine_stmt *stmt,
                          const struct ast_pragma *pragma)
{
    return pragma->value == NULL
               ? 0
               : engine__pragma_table_info(stmt, pragma->value);
}

static int run_index_list(struct engine_stmt *stmt,
                          const struct ast_pragma *pragma)
{
    return pragma->value == NULL
               ? 0
               : engine__pragma_index_list(stmt, pragma->value);
}

static int run_index_info(struct engine_stmt *stmt,
                          const struct ast_pragma *pragma)
{
    return pragma->value == NULL
               ? 0
               : engine__pragma_index_info(stmt, pragma->value);
}

static int run_user_version(struct engine_stmt *stmt,
                            const struct ast_pragma *pragma)
{
    int32_t value = 0;

    if (pragma->value == NULL) {
        return int_row(stmt, engine__storage_user_version(stmt->db));
    }
    /* sqlite3Atoi(): what is not a 32-bit integer sets 0. */
    get_int32(pragma->value, &value);
    return engine__storage_set_user_version(stmt->db, value);
}

static int run_synchronous(struct engine_stmt *stmt,
                           const struct ast_pragma *pragma)
{
    int level;

    if (pragma->value == NULL) {
        return int_row(stmt, engine__storage_synchronous(stmt->db));
    }
    /* SQLite keeps level + 1 in three bits, 0 meaning OFF. Levels past
     * EXTRA sync as FULL does in SQLite's pager, and are kept as FULL. */
    level = (safety_level(pragma->value) + 1) & 7;
    level = level == 0 ? ENGINE__SYNC_OFF : level - 1;
    engine__storage_set_synchronous(
        stmt->db, level > ENGINE__SYNC_EXTRA ? ENGINE__SYNC_FULL : level);
    return 0;
}

/* Setting a mode changes nothing: a file database is always in WAL mode
 * and a memory one in memory mode; either way the row is the mode. */
static int run_journal_mode(struct engine_stmt *stmt,
                            const struct ast_pragma *pragma)
{
    (void)pragma;
    return text_row(stmt, engine__storage_is_file(stmt->db) ? "wal" : "memory");
}

struct check_rows {
    struct engine_stmt *stmt;
    size_t count;
    int rc;
};

static void check_emit(void *ctx, const char *message)
{
    struct check_rows *rows = ctx;

    if (rows->rc == 0) {
        rows->rc = text_row(rows->stmt, message);
        rows->count++;
    }
}

/* integrity_check and quick_check: a number is the most errors to list
 * (<= 0: the default); a table name (checked at prepare) is accepted but
 * the whole database is checked. */
static int run_integrity_check(struct engine_stmt *stmt,
                               const struct ast_pragma *pragma)
{
    struct check_rows rows = {stmt, 0, 0};
    int32_t max = 0;
    int rc;

    if (pragma->value == NULL || !get_int32(pragma->value, &max) || max <= 0) {
        max = PRAGMA_CHECK_ERRORS_DEFAULT;
    }
    rc = engine__storage_integrity_check(stmt->db, (size_t)max, check_emit,
                                         &rows);
    if (rc != 0) {
        return engine__db_error(stmt->db, rc, "out of memory");
    }
    if (rows.rc != 0) {
        return rows.rc;
    }
    return rows.count == 0 ? text_row(stmt, "ok") : 0;
}

static const char *const table_info_columns[] = {
    "cid", "name", "type", "notnull", "dflt_value", "pk"};
static const char *const index_list_columns[] = {"seq", "name", "unique",
                                                 "origin", "partial"};
static const char *const index_info_columns[] = {"seqno", "cid", "name"};
static const char *const integrity_check_column[] = {"integrity_check"};
static const char *const jit_column[] = {"jit"};
static const char *const jit_stats_columns[] = {"compiles", "compile_ns",
                                                "code_bytes", "runs_compiled",
                                                "runs_interpreted"};
static const char *const journal_mode_column[] = {"journal_mode"};
static const char *const quick_check_column[] = {"quick_check"};
static const char *const synchronous_column[] = {"synchronous"};
static const char *const user_version_column[] = {"user_version"};

static const struct pragma_def pragmas[] = {
    {"index_info", index_info_columns, 3, false, run_index_info},
    {"index_list", index_list_columns, 5, false, run_index_list},
    {"integrity_check", integrity_check_column, 1, false, run_integrity_check},
    {"jit", jit_column, 1, true, engine__pragma_jit},
    {"jit_stats", jit_stats_columns, 5, false, engine__pragma_jit_stats},
    {"journal_mode", journal_mode_column, 1, false, run_journal_mode},
    {"quick_check", quick_check_column, 1, false, run_integrity_check},
    {"synchronous", synchronous_column, 1, true, run_synchronous},
    {"table_info", table_info_columns, 6, false, run_table_info},
    {"user_version", user_version_column, 1, true, run_user_version},
};

static const struct pragma_def *pragma_find(const char *name)
{
    for (size_t i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++) {
        if (strcasecmp(pragmas[i].name, name) == 0) {
            return &pragmas[i];
        }
    }
    return NULL;
}

/* ---- planning ---- */

/* sqlite3TwoPartName(): main is the only schema; temp, which SQLite
 * always has, is empty here, so VACUUM temp does nothing and a pragma on
 * it is refused rather than answered wrongly. */
static int schema_check(struct engine_db *db, const char *schema,
                        const char *schema_text, bool temp_ok)
{
    if (schema == NULL || strcasecmp(schema, "main") == 0) {
        return 0;
    }
    if (strcasecmp(schema, "temp") == 0) {
        return temp_ok ? 0
                       : engine__db_error(db, ENGINE_ESQL,
                                          "the temp schema is not supported "
                                          "yet");
    }
    return engine__db_error(db, ENGINE_ESQL, "unknown database %s",
                            schema_text);
}

/* The errors SQLite raises while it prepares these pragmas. */
static int pragma_prepare_errors(struct engine_stmt *stmt,
                                 const struct ast_pragma *pragma,
                                 const struct pragma_def *def)
{
    struct engine_db *db = stmt->db;
    int32_t max;

    if (pragma->value == NULL) {
        return 0;
    }
    if (def->run == run_synchronous && db->in_transaction) {
        return engine__db_error(db, ENGINE_ESQL,
                                "Safety level may not be changed inside a "
                                "transaction");
    }
    if (def->run == run_integrity_check && !get_int32(pragma->value, &max) &&
        engine__catalog_find(db, pragma->value) == NULL &&
        strcasecmp(pragma->value, "sqlite_schema") != 0 &&
        strcasecmp(pragma->value, "sqlite_master") != 0) {
        return pragma->schema != NULL
                   ? engine__db_error(db, ENGINE_ESQL, "no such table: main.%s",
                                      pragma->value)
                   : engine__db_error(db, ENGINE_ESQL, "no such table: %s",
                                      pragma->value);
    }
    if (def->run == run_table_info && engine__view_find(db, pragma->value)) {
        /* sqlite3ViewGetColumnNames, at prepare: the view's errors. */
        const char **types;
        char **names;
        size_t count;

        return engine__view_columns(stmt, pragma->value, &names, &types,
                                    &count);
    }
    return 0;
}

int engine__plan_pragma(struct engine_stmt *stmt)
{
    const struct ast_stmt *ast = stmt->ast;
    const struct ast_pragma *pragma = &ast->u.pragma;
    const struct pragma_def *def;
    int rc;

    if (ast->kind == AST_STMT_VACUUM) {
        return schema_check(stmt->db, ast->u.vacuum.schema,
                            ast->u.vacuum.schema_text, true);
    }
    ASSERT(ast->kind == AST_STMT_PRAGMA);
    rc = schema_check(stmt->db, pragma->schema, pragma->schema_text, false);
    def = rc == 0 ? pragma_find(pragma->name) : NULL;
    if (def == NULL) {
        return rc;
    }
    rc = pragma_prepare_errors(stmt, pragma, def);
    if (rc != 0 || (def->setter && pragma->value != NULL)) {
        return rc;
    }
    stmt->column_names = engine__arena_alloc(
        &stmt->plan_arena, (size_t)def->column_count * sizeof(char *));
    if (stmt->column_names == NULL) {
        return engine__db_error(stmt->db, COMMON_ENOMEM, "out of memory");
    }
    memcpy(stmt->column_names, def->columns,
           (size_t)def->column_count * sizeof(char *));
    stmt->column_count = def->column_count;
    return 0;
}

/* ---- running ---- */

int engine__execute_pragma(struct engine_stmt *stmt)
{
    const struct ast_stmt *ast = stmt->ast;
    const struct pragma_def *def;

    if (ast->kind == AST_STMT_VACUUM) {
        if (ast->u.vacuum.schema != NULL &&
            strcasecmp(ast->u.vacuum.schema, "temp") == 0) {
            return 0;
        }
        return engine__storage_vacuum(stmt->db);
    }
    def = pragma_find(ast->u.pragma.name);
    return def == NULL ? 0 : def->run(stmt, &ast->u.pragma);
}
