/* SPDX-License-Identifier: MIT
 *
 * func.c: the registry of built-in functions (name, arity, entry point) and
 * the helpers every function file shares: error messages, an argument's
 * text as sqlite3_value_text() gives it, and SQLite's UTF-8 reader.
 *
 * The names and arities are SQLite 3.40's (func.c, aBuiltinFunc[]), plus
 * unhex() from 3.41 and string_agg() from 3.44. Scalar min() and max() take
 * two or more arguments; with one they are the aggregates. Lookup is a
 * linear scan with ASCII case folding: the tables are small and the planner
 * looks a name up once per statement.
 */
#include "func.h"

#include <string.h>

#include "func_int.h"

static const struct engine_scalar_def scalar_defs[] = {
    {"abs", 1, 1, true, engine__func_abs},
    {"changes", 0, 0, false, engine__func_changes},
    {"char", 0, -1, true, engine__func_char},
    {"coalesce", 2, -1, true, engine__func_coalesce},
    {"format", 0, -1, true, engine__func_printf},
    {"glob", 2, 2, true, engine__func_glob},
    {"hex", 1, 1, true, engine__func_hex},
    {"ifnull", 2, 2, true, engine__func_coalesce},
    {"iif", 3, 3, true, engine__func_iif},
    {"instr", 2, 2, true, engine__func_instr},
    /* JSON (func_json_sql.c); "->" and "->>" are the operators. */
    {"json", 1, 1, true, engine__func_json_remove},
    {"json_array", 0, -1, true, engine__func_json_array},
    {"json_array_length", 1, 2, true, engine__func_json_array_length},
    {"json_extract", 0, -1, true, engine__func_json_extract},
    {"->", 2, 2, true, engine__func_json_ptr},
    {"->>", 2, 2, true, engine__func_json_ptr2},
    {"json_insert", 0, -1, true, engine__func_json_insert},
    {"json_object", 0, -1, true, engine__func_json_object},
    {"json_patch", 2, 2, true, engine__func_json_patch},
    {"json_quote", 1, 1, true, engine__func_json_quote},
    {"json_remove", 0, -1, true, engine__func_json_remove},
    {"json_replace", 0, -1, true, engine__func_json_replace},
    {"json_set", 0, -1, true, engine__func_json_set},
    {"json_type", 1, 2, true, engine__func_json_type},
    {"json_valid", 1, 1, true, engine__func_json_valid},
    {"last_insert_rowid", 0, 0, false, engine__func_last_insert_rowid},
    {"length", 1, 1, true, engine__func_length},
    {"like", 2, 3, true, engine__func_like},
    {"lower", 1, 1, true, engine__func_lower},
    {"ltrim", 1, 2, true, engine__func_ltrim},
    {"max", 2, -1, true, engine__func_max},
    {"min", 2, -1, true, engine__func_min},
    {"nullif", 2, 2, true, engine__func_nullif},
    {"printf", 0, -1, true, engine__func_printf},
    {"quote", 1, 1, true, engine__func_quote},
    {"random", 0, 0, false, engine__func_random},
    {"randomblob", 1, 1, false, engine__func_randomblob},
    {"replace", 3, 3, true, engine__func_replace},
    {"round", 1, 2, true, engine__func_round},
    {"rtrim", 1, 2, true, engine__func_rtrim},
    {"sign", 1, 1, true, engine__func_sign},
    {"substr", 2, 3, true, engine__func_substr},
    {"substring", 2, 3, true, engine__func_substr},
    {"total_changes", 0, 0, false, engine__func_total_changes},
    {"trim", 1, 2, true, engine__func_trim},
    {"typeof", 1, 1, true, engine__func_typeof},
    {"unhex", 1, 2, true, engine__func_unhex},
    {"unicode", 1, 1, true, engine__func_unicode},
    {"upper", 1, 1, true, engine__func_upper},
    {"zeroblob", 1, 1, true, engine__func_zeroblob},
    /* Date and time (func_date_format.c): deterministic, as SQLite's
     * SQLITE_FUNC_SLOCHNG functions, though 'now' reads the clock. */
    {"current_date", 0, 0, true, engine__func_current_date},
    {"current_time", 0, 0, true, engine__func_current_time},
    {"current_timestamp", 0, 0, true, engine__func_current_timestamp},
    {"date", 0, -1, true, engine__func_date},
    {"datetime", 0, -1, true, engine__func_datetime},
    {"julianday", 0, -1, true, engine__func_julianday},
    {"strftime", 0, -1, true, engine__func_strftime},
    {"time", 0, -1, true, engine__func_time},
    {"unixepoch", 0, -1, true, engine__func_unixepoch},
    /* Math (func_math.c), SQLITE_ENABLE_MATH_FUNCTIONS. */
    {"acos", 1, 1, true, engine__func_acos},
    {"acosh", 1, 1, true, engine__func_acosh},
    {"asin", 1, 1, true, engine__func_asin},
    {"asinh", 1, 1, true, engine__func_asinh},
    {"atan", 1, 1, true, engine__func_atan},
    {"atan2", 2, 2, true, engine__func_atan2},
    {"atanh", 1, 1, true, engine__func_atanh},
    {"ceil", 1, 1, true, engine__func_ceil},
    {"ceiling", 1, 1, true, engine__func_ceil},
    {"cos", 1, 1, true, engine__func_cos},
    {"cosh", 1, 1, true, engine__func_cosh},
    {"degrees", 1, 1, true, engine__func_degrees},
    {"exp", 1, 1, true, engine__func_exp},
    {"floor", 1, 1, true, engine__func_floor},
    {"ln", 1, 1, true, engine__func_ln},
    {"log", 1, 2, true, engine__func_log},
    {"log10", 1, 1, true, engine__func_log},
    {"log2", 1, 1, true, engine__func_log2},
    {"mod", 2, 2, true, engine__func_mod},
    {"pi", 0, 0, true, engine__func_pi},
    {"pow", 2, 2, true, engine__func_pow},
    {"power", 2, 2, true, engine__func_pow},
    {"radians", 1, 1, true, engine__func_radians},
    {"sin", 1, 1, true, engine__func_sin},
    {"sinh", 1, 1, true, engine__func_sinh},
    {"sqrt", 1, 1, true, engine__func_sqrt},
    {"tan", 1, 1, true, engine__func_tan},
    {"tanh", 1, 1, true, engine__func_tanh},
    {"trunc", 1, 1, true, engine__func_trunc},
};

/* True if name (size bytes) equals the lower-case key, ASCII case folded. */
static bool name_is(const char *key, const char *name, size_t size)
{
    size_t i;

    for (i = 0; i < size; i++) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (key[i] == '\0' || key[i] != c) {
            return false;
        }
    }
    return key[size] == '\0';
}

const struct engine_scalar_def *engine__scalar_lookup(const char *name,
                                                      size_t size)
{
    size_t i;

    ASSERT(name != NULL || size == 0);
    for (i = 0; i < sizeof(scalar_defs) / sizeof(scalar_defs[0]); i++) {
        if (name_is(scalar_defs[i].name, name, size)) {
            return &scalar_defs[i];
        }
    }
    return NULL;
}

const struct engine_aggregate_def *engine__aggregate_lookup(const char *name,
                                                            size_t size)
{
    size_t i;

    ASSERT(name != NULL || size == 0);
    for (i = 0; i < engine__func_aggregate_count; i++) {
        if (name_is(engine__func_aggregates[i].name, name, size)) {
            return &engine__func_aggregates[i];
        }
    }
    for (i = 0; i < engine__func_json_aggregate_count; i++) {
        if (name_is(engine__func_json_aggregates[i].name, name, size)) {
            return &engine__func_json_aggregates[i];
        }
    }
    return NULL;
}

bool engine__func_arity_ok(int arg_min, int arg_max, int argc)
{
    ASSERT(arg_min >= 0);
    if (argc < arg_min) {
        return false;
    }
    return arg_max < 0 || argc <= arg_max;
}

int engine__func_error(struct engine_func_context *ctx, int rc, const char *msg)
{
    ASSERT(rc < 0);
    if (ctx->errmsg != NULL && ctx->errmsg_size > 0) {
        size_t size = strlen(msg);
        if (size >= ctx->errmsg_size) {
            size = ctx->errmsg_size - 1;
        }
        memcpy(ctx->errmsg, msg, size);
        ctx->errmsg[size] = '\0';
    }
    return rc;
}

int engine__func_error_nomem(struct engine_func_context *ctx)
{
    return engine__func_error(ctx, COMMON_ENOMEM, "out of memory");
}

int engine__func_error_toobig(struct engine_func_context *ctx)
{
    return engine__func_error(ctx, ENGINE_ETOOBIG, "string or blob too big");
}

int engine__func_text(struct engine_func_context *ctx,
                      const struct engine_value *v, const uint8_t **bytes,
                      size_t *size, bool *is_null)
{
    struct engine_value text;

    *is_null = false;
    if (v->type == ENGINE_TEXT || v->type == ENGINE_BLOB) {
        *bytes = v->u.s.bytes;
        *size = v->u.s.size;
        return 0;
    }
    if (v->type == ENGINE_NULL) {
        *is_null = true;
        *bytes = NULL;
        *size = 0;
        return 0;
    }
    if (engine__value_to_text(v, ctx->arena, &text) != 0) {
        return engine__func_error_nomem(ctx);
    }
    *bytes = text.u.s.bytes;
    *size = text.u.s.size;
    return 0;
}

size_t engine__func_cstr_size(const uint8_t *bytes, size_t size)
{
    const uint8_t *nul;

    if (size == 0) {
        return 0;
    }
    nul = memchr(bytes, 0, size);
    return nul == NULL ? size : (size_t)(nul - bytes);
}

int engine__func_cstr(struct engine_func_context *ctx,
                      const struct engine_value *v, const char **out)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;
    char *copy;
    int rc = engine__func_text(ctx, v, &bytes, &size, &is_null);

    *out = NULL;
    if (rc != 0 || is_null) {
        return rc;
    }
    size = engine__func_cstr_size(bytes, size);
    copy = engine__arena_alloc(ctx->arena, size + 1);
    if (copy == NULL) {
        return engine__func_error_nomem(ctx);
    }
    if (size > 0) {
        memcpy(copy, bytes, size);
    }
    copy[size] = '\0';
    *out = copy;
    return 0;
}

int32_t engine__func_value_int32(const struct engine_value *v)
{
    return (int32_t)(uint32_t)(uint64_t)engine__value_to_int(v);
}

int engine__func_numeric(const struct engine_value *v, struct engine_value *out)
{
    enum engine_numeric_kind kind;
    int64_t as_int = 0;
    double as_real = 0.0;

    *out = *v;
    if (v->type != ENGINE_TEXT) {
        return v->type;
    }
    kind = engine__text_to_number(v->u.s.bytes, v->u.s.size, &as_int, &as_real);
    if (kind == ENGINE_NUMERIC_INTEGER) {
        *out = engine__value_int(as_int);
    } else if (kind == ENGINE_NUMERIC_REAL) {
        *out = engine__value_real(as_real);
    }
    return out->type;
}

/* sqlite3Utf8Trans1[]: the payload bits of a lead byte 0xc0..0xff. */
static uint32_t utf8_lead_bits(uint8_t c)
{
    if (c < 0xe0) {
        return c & 0x1fu;
    }
    if (c < 0xf0) {
        return c & 0x0fu;
    }
    if (c < 0xf8) {
        return c & 0x07u;
    }
    if (c < 0xfc) {
        return c & 0x03u;
    }
    return c < 0xfe ? (c & 0x01u) : 0;
}

uint32_t engine__func_utf8_read(const uint8_t **p, const uint8_t *end)
{
    uint32_t c;

    if (*p >= end) {
        return 0;
    }
    c = *(*p)++;
    if (c < 0xc0) {
        return c;
    }
    c = utf8_lead_bits((uint8_t)c);
    while (*p < end && (**p & 0xc0) == 0x80) {
        c = (c << 6) + (0x3fu & *(*p)++);
    }
    if (c < 0x80 || (c & 0xfffff800u) == 0xd800 ||
        (c & 0xfffffffeu) == 0xfffe) {
        c = 0xfffd;
    }
    return c;
}

const uint8_t *engine__func_utf8_skip(const uint8_t *p, const uint8_t *end)
{
    if (p >= end) {
        return p;
    }
    if (*p++ >= 0xc0) {
        while (p < end && (*p & 0xc0) == 0x80) {
            p++;
        }
    }
    return p;
}

size_t engine__func_utf8_write(uint32_t c, uint8_t *out)
{
    if (c < 0x80) {
        out[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (uint8_t)(0xc0 + (c >> 6));
        out[1] = (uint8_t)(0x80 + (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xe0 + (c >> 12));
        out[1] = (uint8_t)(0x80 + ((c >> 6) & 0x3f));
        out[2] = (uint8_t)(0x80 + (c & 0x3f));
        return 3;
    }
    out[0] = (uint8_t)(0xf0 + (c >> 18));
    out[1] = (uint8_t)(0x80 + ((c >> 12) & 0x3f));
    out[2] = (uint8_t)(0x80 + ((c >> 6) & 0x3f));
    out[3] = (uint8_t)(0x80 + (c & 0x3f));
    return 4;
}
