/* SPDX-License-Identifier: MIT
 *
 * func_blob.c: SQLite's built-in functions that make or spell out bytes:
 * hex, unhex, quote, zeroblob, randomblob.
 *
 * hex() spells the bytes of the argument's text (numbers rendered) in upper
 * case; quote() writes an SQL literal (func.c's sqlite3QuoteValue: REALs as
 * "%!.15g", or "%!.20e" when that does not read back to the same double);
 * zeroblob() and randomblob() fail with "string or blob too big" past
 * ENGINE_MAX_LENGTH, as SQLite does past SQLITE_LIMIT_LENGTH. unhex() is
 * SQLite 3.41's (lang_corefunc.html#unhex): pairs of hex digits, other
 * characters allowed only when listed in the second argument.
 */
#include "func.h"

#include <string.h>

#include "func_int.h"

static const char hex_digits[] = "0123456789ABCDEF";

static void hex_into(char *dst, const uint8_t *bytes, size_t size)
{
    size_t i;

    for (i = 0; i < size; i++) {
        dst[2 * i] = hex_digits[bytes[i] >> 4];
        dst[2 * i + 1] = hex_digits[bytes[i] & 0x0f];
    }
}

ENGINE__FUNC_SCALAR(hex)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;
    char *text;
    int rc;

    ASSERT(argc == 1);
    rc = engine__func_text(ctx, &argv[0], &bytes, &size, &is_null);
    if (rc != 0) {
        return rc;
    }
    if (size > ENGINE_MAX_LENGTH / 2) {
        return engine__func_error_toobig(ctx);
    }
    text = engine__arena_alloc(ctx->arena, size * 2);
    if (text == NULL) {
        return engine__func_error_nomem(ctx);
    }
    hex_into(text, bytes, size);
    *out = engine__value_text(text, size * 2);
    return 0;
}

/* True if the character c is one of pass[0..pass_size). */
static bool pass_has(const uint8_t *pass, size_t pass_size, uint32_t c)
{
    const uint8_t *end = pass + pass_size;

    while (pass < end) {
        if (engine__func_utf8_read(&pass, end) == c) {
            return true;
        }
    }
    return false;
}

/* Decodes hex into dst; returns the byte count, or -1 for a NULL result. */
static int64_t unhex_decode(const uint8_t *hex, const uint8_t *end,
                            const uint8_t *pass, size_t pass_size, uint8_t *dst)
{
    int64_t count = 0;

    while (hex < end) {
        int high = common_hex_value(*hex), low;
        if (high < 0) {
            uint32_t c = engine__func_utf8_read(&hex, end);
            if (!pass_has(pass, pass_size, c)) {
                return -1;
            }
            continue;
        }
        hex++;
        low = hex < end ? common_hex_value(*hex) : -1;
        if (low < 0) {
            return -1;
        }
        hex++;
        dst[count++] = (uint8_t)(high << 4 | low);
    }
    return count;
}

ENGINE__FUNC_SCALAR(unhex)
{
    const uint8_t *hex, *pass = (const uint8_t *)"";
    size_t size, pass_size = 0;
    bool is_null, pass_null = false;
    uint8_t *blob;
    int64_t count;
    int rc;

    *out = engine__value_null();
    rc = engine__func_text(ctx, &argv[0], &hex, &size, &is_null);
    if (rc == 0 && argc == 2) {
        rc = engine__func_text(ctx, &argv[1], &pass, &pass_size, &pass_null);
    }
    if (rc != 0 || is_null || pass_null) {
        return rc;
    }
    size = engine__func_cstr_size(hex, size);
    pass_size = engine__func_cstr_size(pass, pass_size);
    blob = engine__arena_alloc(ctx->arena, size / 2);
    if (blob == NULL) {
        return engine__func_error_nomem(ctx);
    }
    count = unhex_decode(hex, hex + size, pass, pass_size, blob);
    if (count >= 0) {
        *out = engine__value_blob(blob, (size_t)count);
    }
    return 0;
}

/* 'text' with each ' doubled, stopping at a NUL as "%Q" does. */
static int quote_text(struct engine_func_context *ctx,
                      const struct engine_value *v, struct engine_value *out)
{
    size_t size = engine__func_cstr_size(v->u.s.bytes, v->u.s.size);
    size_t quotes = 0, i, j = 0;
    uint8_t *dst;

    for (i = 0; i < size; i++) {
        quotes += v->u.s.bytes[i] == '\'';
    }
    dst = engine__arena_alloc(ctx->arena, size + quotes + 2);
    if (dst == NULL) {
        return engine__func_error_nomem(ctx);
    }
    dst[j++] = '\'';
    for (i = 0; i < size; i++) {
        dst[j++] = v->u.s.bytes[i];
        if (v->u.s.bytes[i] == '\'') {
            dst[j++] = '\'';
        }
    }
    dst[j++] = '\'';
    *out = engine__value_text(dst, j);
    return 0;
}

static int quote_blob(struct engine_func_context *ctx,
                      const struct engine_value *v, struct engine_value *out)
{
    size_t size = v->u.s.size;
    char *dst;

    if (size > ENGINE_MAX_LENGTH / 2) {
        return engine__func_error_toobig(ctx);
    }
    dst = engine__arena_alloc(ctx->arena, size * 2 + 3);
    if (dst == NULL) {
        return engine__func_error_nomem(ctx);
    }
    dst[0] = 'X';
    dst[1] = '\'';
    hex_into(dst + 2, v->u.s.bytes, size);
    dst[size * 2 + 2] = '\'';
    *out = engine__value_text(dst, size * 2 + 3);
    return 0;
}

/* "%!.15g", or "%!.20e" when the short form does not read back exactly. */
static int quote_real(struct engine_func_context *ctx, double r,
                      struct engine_value *out)
{
    static const char long_form[] = "%!.20e";
    char text[ENGINE_REAL_TEXT_SIZE];
    size_t size = engine__real_to_text(r, text);
    double back = 0.0;
    char *copy;

    engine__text_to_number((const uint8_t *)text, size, NULL, &back);
    if (back != r) {
        struct engine_value arg = engine__value_real(r);
        return engine__func_format(ctx, (const uint8_t *)long_form,
                                   sizeof(long_form) - 1, 1, &arg, out);
    }
    copy = engine__arena_memdup(ctx->arena, text, size);
    if (copy == NULL) {
        return engine__func_error_nomem(ctx);
    }
    *out = engine__value_text(copy, size);
    return 0;
}

ENGINE__FUNC_SCALAR(quote)
{
    const struct engine_value *v = &argv[0];

    ASSERT(argc == 1);
    switch (v->type) {
    case ENGINE_FLOAT:
        return quote_real(ctx, v->u.r, out);
    case ENGINE_INTEGER:
        return engine__value_to_text(v, ctx->arena, out) == 0
                   ? 0
                   : engine__func_error_nomem(ctx);
    case ENGINE_BLOB:
        return quote_blob(ctx, v, out);
    case ENGINE_TEXT:
        return quote_text(ctx, v, out);
    default:
        *out = engine__value_text("NULL", 4);
        return 0;
    }
}

ENGINE__FUNC_SCALAR(zeroblob)
{
    int64_t size;
    uint8_t *blob;

    ASSERT(argc == 1);
    size = engine__value_to_int(&argv[0]);
    if (size < 0) {
        size = 0;
    }
    if (size > ENGINE_MAX_LENGTH) {
        return engine__func_error_toobig(ctx);
    }
    blob = engine__arena_alloc(ctx->arena, (size_t)size);
    if (blob == NULL) {
        return engine__func_error_nomem(ctx);
    }
    memset(blob, 0, (size_t)size);
    *out = engine__value_blob(blob, (size_t)size);
    return 0;
}

uint64_t engine__random_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

ENGINE__FUNC_SCALAR(randomblob)
{
    int64_t size;
    uint8_t *blob;
    int64_t i;

    ASSERT(argc == 1);
    ASSERT(ctx->random_state != NULL);
    size = engine__value_to_int(&argv[0]);
    if (size < 1) {
        size = 1;
    }
    if (size > ENGINE_MAX_LENGTH) {
        return engine__func_error_toobig(ctx);
    }
    blob = engine__arena_alloc(ctx->arena, (size_t)size);
    if (blob == NULL) {
        return engine__func_error_nomem(ctx);
    }
    for (i = 0; i < size; i += 8) {
        uint64_t r = engine__random_next(ctx->random_state);
        size_t n = size - i < 8 ? (size_t)(size - i) : 8;
        memcpy(blob + i, &r, n);
    }
    *out = engine__value_blob(blob, (size_t)size);
    return 0;
}

ENGINE__FUNC_SCALAR(random)
{
    int64_t r;

    ASSERT(argc == 0);
    ASSERT(ctx->random_state != NULL);
    (void)argv;
    r = (int64_t)engine__random_next(ctx->random_state);
    if (r < 0) {
        /* As SQLite: never INT64_MIN, so abs(random()) cannot overflow. */
        r = -(r & INT64_MAX);
    }
    *out = engine__value_int(r);
    return 0;
}
