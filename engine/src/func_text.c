/* SPDX-License-Identifier: MIT
 *
 * func_text.c: SQLite's built-in functions over text and blobs: length,
 * substr, upper, lower, trim/ltrim/rtrim, replace, instr, hex, unhex, char,
 * unicode, typeof, like and glob (the matchers are like.c's).
 *
 * Each follows SQLite 3.40's func.c (lang_corefunc.html) to the byte,
 * including its quirks: text functions walk a NUL-terminated copy of the
 * argument (length('a' || char(0) || 'b') is 1), sqlite3_value_int()
 * truncates substr's positions to 32 bits, a zero-length blob has no bytes
 * (substr(x'', 1) is NULL), and replace() with an empty pattern returns
 * its first argument unchanged (a number stays a number, a blob becomes
 * text). unhex() is 3.41's.
 */
#include "func.h"

#include <string.h>

#include "func_int.h"

/* The most bytes of a LIKE or GLOB pattern (SQLITE_MAX_LIKE_PATTERN_LENGTH). */
#define LIKE_PATTERN_SIZE_MAX 50000

ENGINE__FUNC_SCALAR(typeof)
{
    static const char *const names[] = {"",     "integer", "real",
                                        "text", "blob",    "null"};
    const char *name;

    (void)ctx;
    ASSERT(argc == 1);
    ASSERT(argv[0].type >= ENGINE_INTEGER && argv[0].type <= ENGINE_NULL);
    name = names[argv[0].type];
    *out = engine__value_text(name, strlen(name));
    return 0;
}

/* Characters in [p, end) counted as SQLITE_SKIP_UTF8 steps. */
static int64_t utf8_count(const uint8_t *p, const uint8_t *end)
{
    int64_t count = 0;

    while (p < end) {
        p = engine__func_utf8_skip(p, end);
        count++;
    }
    return count;
}

ENGINE__FUNC_SCALAR(length)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;
    int rc;

    ASSERT(argc == 1);
    rc = engine__func_text(ctx, &argv[0], &bytes, &size, &is_null);
    if (rc != 0 || is_null) {
        *out = engine__value_null();
        return rc;
    }
    if (argv[0].type != ENGINE_TEXT) {
        *out = engine__value_int((int64_t)size);
        return 0;
    }
    size = engine__func_cstr_size(bytes, size);
    *out = engine__value_int(utf8_count(bytes, bytes + size));
    return 0;
}

/* substr's positions after SQLite's adjustments: skip *p1, keep *p2. */
static void substr_bounds(int64_t len, int64_t *p1, int64_t *p2, bool neg_p2)
{
    if (*p1 < 0) {
        *p1 += len;
        if (*p1 < 0) {
            *p2 += *p1;
            if (*p2 < 0) {
                *p2 = 0;
            }
            *p1 = 0;
        }
    } else if (*p1 > 0) {
        (*p1)--;
    } else if (*p2 > 0) {
        (*p2)--;
    }
    if (neg_p2) {
        *p1 -= *p2;
        if (*p1 < 0) {
            *p2 += *p1;
            *p1 = 0;
        }
    }
}

/* substr of text: characters p1 .. p1 + p2 of the NUL-terminated text. */
static void substr_text(const uint8_t *z, const uint8_t *end, int64_t p1,
                        int64_t p2, struct engine_value *out)
{
    const uint8_t *z2;

    while (z < end && p1 > 0) {
        z = engine__func_utf8_skip(z, end);
        p1--;
    }
    for (z2 = z; z2 < end && p2 > 0; p2--) {
        z2 = engine__func_utf8_skip(z2, end);
    }
    *out = engine__value_text(z, (size_t)(z2 - z));
}

ENGINE__FUNC_SCALAR(substr)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null, neg_p2 = false;
    int64_t p1, p2 = ENGINE_MAX_LENGTH, len = 0;
    int rc;

    *out = engine__value_null();
    if (argv[1].type == ENGINE_NULL ||
        (argc == 3 && argv[2].type == ENGINE_NULL)) {
        return 0;
    }
    p1 = engine__func_value_int32(&argv[1]);
    rc = engine__func_text(ctx, &argv[0], &bytes, &size, &is_null);
    if (rc != 0 || is_null || (argv[0].type == ENGINE_BLOB && size == 0)) {
        return rc;
    }
    if (argv[0].type == ENGINE_BLOB) {
        len = (int64_t)size;
    } else {
        size = engine__func_cstr_size(bytes, size);
        len = p1 < 0 ? utf8_count(bytes, bytes + size) : 0;
    }
    if (argc == 3) {
        p2 = engine__func_value_int32(&argv[2]);
        if (p2 < 0) {
            p2 = -p2;
            neg_p2 = true;
        }
    }
    substr_bounds(len, &p1, &p2, neg_p2);
    if (argv[0].type != ENGINE_BLOB) {
        substr_text(bytes, bytes + size, p1, p2, out);
        return 0;
    }
    if (p1 + p2 > len) {
        p2 = len - p1 < 0 ? 0 : len - p1;
    }
    *out = engine__value_blob(p2 > 0 ? bytes + p1 : bytes, (size_t)p2);
    return 0;
}

/* upper() and lower(): every byte through SQLite's ASCII-only mapping. */
static int change_case(struct engine_func_context *ctx,
                       const struct engine_value *arg, bool to_upper,
                       struct engine_value *out)
{
    const uint8_t *bytes;
    uint8_t *copy;
    size_t size, i;
    bool is_null;
    int rc;

    *out = engine__value_null();
    rc = engine__func_text(ctx, arg, &bytes, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    copy = engine__arena_alloc(ctx->arena, size);
    if (copy == NULL) {
        return engine__func_error_nomem(ctx);
    }
    for (i = 0; i < size; i++) {
        uint8_t c = bytes[i];
        if (to_upper && c >= 'a' && c <= 'z') {
            c = (uint8_t)(c - 'a' + 'A');
        } else if (!to_upper && c >= 'A' && c <= 'Z') {
            c = (uint8_t)(c - 'A' + 'a');
        }
        copy[i] = c;
    }
    *out = engine__value_text(copy, size);
    return 0;
}

ENGINE__FUNC_SCALAR(upper)
{
    ASSERT(argc == 1);
    return change_case(ctx, &argv[0], true, out);
}

ENGINE__FUNC_SCALAR(lower)
{
    ASSERT(argc == 1);
    return change_case(ctx, &argv[0], false, out);
}

/* The length of the character of set (set_end) that text[0..size) starts
 * with (at_end false) or ends with (at_end true); 0 if none. */
static size_t trim_match(const uint8_t *set, const uint8_t *set_end,
                         const uint8_t *text, size_t size, bool at_end)
{
    while (set < set_end) {
        const uint8_t *next = engine__func_utf8_skip(set, set_end);
        size_t len = (size_t)(next - set);
        const uint8_t *at = at_end ? text + size - len : text;
        if (len <= size && memcmp(at, set, len) == 0) {
            return len;
        }
        set = next;
    }
    return 0;
}

/* trim, ltrim, rtrim: flags 1 trims the left, 2 the right (func.c's
 * trimFunc). The set is the characters of argv[1] up to its first NUL. */
static int trim_sides(struct engine_func_context *ctx, int argc,
                      const struct engine_value *argv, int flags,
                      struct engine_value *out)
{
    const uint8_t *text, *set = (const uint8_t *)" ";
    size_t size, set_size = 1, len;
    bool is_null;
    int rc;

    *out = engine__value_null();
    rc = engine__func_text(ctx, &argv[0], &text, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    if (argc == 2) {
        rc = engine__func_text(ctx, &argv[1], &set, &set_size, &is_null);
        if (rc != 0 || is_null) {
            return rc;
        }
        set_size = engine__func_cstr_size(set, set_size);
    }
    while ((flags & 1) && size > 0 &&
           (len = trim_match(set, set + set_size, text, size, false)) > 0) {
        text += len;
        size -= len;
    }
    while ((flags & 2) && size > 0 &&
           (len = trim_match(set, set + set_size, text, size, true)) > 0) {
        size -= len;
    }
    *out = engine__value_text(text, size);
    return 0;
}

ENGINE__FUNC_SCALAR(ltrim)
{
    return trim_sides(ctx, argc, argv, 1, out);
}

ENGINE__FUNC_SCALAR(rtrim)
{
    return trim_sides(ctx, argc, argv, 2, out);
}

ENGINE__FUNC_SCALAR(trim)
{
    return trim_sides(ctx, argc, argv, 3, out);
}

/* Occurrences of pattern in text, scanned left to right without overlap
 * (replaceFunc's loop). */
static size_t count_matches(const uint8_t *text, size_t size,
                            const uint8_t *pattern, size_t pattern_size)
{
    size_t count = 0, i = 0;

    while (i + pattern_size <= size) {
        if (memcmp(text + i, pattern, pattern_size) == 0) {
            count++;
            i += pattern_size;
        } else {
            i++;
        }
    }
    return count;
}

static void replace_into(uint8_t *dst, const uint8_t *text, size_t size,
                         const uint8_t *pattern, size_t pattern_size,
                         const uint8_t *rep, size_t rep_size)
{
    size_t i = 0;

    while (i + pattern_size <= size) {
        if (memcmp(text + i, pattern, pattern_size) == 0) {
            if (rep_size > 0) {
                memcpy(dst, rep, rep_size);
            }
            dst += rep_size;
            i += pattern_size;
        } else {
            *dst++ = text[i++];
        }
    }
    if (i < size) {
        memcpy(dst, text + i, size - i);
    }
}

ENGINE__FUNC_SCALAR(replace)
{
    const uint8_t *text, *pattern, *rep;
    size_t size, pattern_size, rep_size, count, result_size;
    bool is_null;
    uint8_t *dst;

    ASSERT(argc == 3);
    *out = engine__value_null();
    if (engine__func_text(ctx, &argv[0], &text, &size, &is_null) != 0 ||
        is_null) {
        return is_null ? 0 : COMMON_ENOMEM;
    }
    if (engine__func_text(ctx, &argv[1], &pattern, &pattern_size, &is_null) !=
            0 ||
        is_null) {
        return is_null ? 0 : COMMON_ENOMEM;
    }
    if (pattern_size == 0 || pattern[0] == 0) {
        /* sqlite3_value_text() made a blob text; numbers stay numbers. */
        *out = argv[0];
        if (out->type == ENGINE_BLOB) {
            out->type = ENGINE_TEXT;
        } else if (out->type == ENGINE_INTEGER || out->type == ENGINE_FLOAT) {
            out->has_text = true; /* sqlite3_value_text() set MEM_Str */
        }
        return 0;
    }
    if (engine__func_text(ctx, &argv[2], &rep, &rep_size, &is_null) != 0 ||
        is_null) {
        return is_null ? 0 : COMMON_ENOMEM;
    }
    count = count_matches(text, size, pattern, pattern_size);
    result_size = size - count * pattern_size;
    if (rep_size > 0 && count > (ENGINE_MAX_LENGTH - result_size) / rep_size) {
        return engine__func_error_toobig(ctx);
    }
    result_size += count * rep_size;
    if (result_size > ENGINE_MAX_LENGTH) {
        return engine__func_error_toobig(ctx);
    }
    dst = engine__arena_alloc(ctx->arena, result_size);
    if (dst == NULL) {
        return engine__func_error_nomem(ctx);
    }
    replace_into(dst, text, size, pattern, pattern_size, rep, rep_size);
    *out = engine__value_text(dst, result_size);
    return 0;
}

/* instr's scan: the 1-based character (or byte, for blobs) position of
 * needle in haystack, 0 if absent. */
static int64_t instr_scan(const uint8_t *hay, size_t hay_size,
                          const uint8_t *needle, size_t needle_size,
                          bool is_text)
{
    int64_t n = 1;

    while (needle_size <= hay_size && memcmp(hay, needle, needle_size) != 0) {
        n++;
        do {
            hay_size--;
            hay++;
        } while (is_text && hay_size > 0 && (hay[0] & 0xc0) == 0x80);
    }
    return needle_size > hay_size ? 0 : n;
}

ENGINE__FUNC_SCALAR(instr)
{
    const uint8_t *hay, *needle;
    size_t hay_size, needle_size;
    bool is_null;
    int rc;

    ASSERT(argc == 2);
    *out = engine__value_null();
    if (argv[0].type == ENGINE_NULL || argv[1].type == ENGINE_NULL) {
        return 0;
    }
    rc = engine__func_text(ctx, &argv[0], &hay, &hay_size, &is_null);
    if (rc == 0) {
        rc = engine__func_text(ctx, &argv[1], &needle, &needle_size, &is_null);
    }
    if (rc != 0) {
        return rc;
    }
    if (needle_size == 0) {
        *out = engine__value_int(1);
        return 0;
    }
    *out = engine__value_int(instr_scan(
        hay, hay_size, needle, needle_size,
        !(argv[0].type == ENGINE_BLOB && argv[1].type == ENGINE_BLOB)));
    return 0;
}

ENGINE__FUNC_SCALAR(unicode)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;
    int rc;

    ASSERT(argc == 1);
    *out = engine__value_null();
    rc = engine__func_text(ctx, &argv[0], &bytes, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc;
    }
    size = engine__func_cstr_size(bytes, size);
    if (size > 0) {
        *out = engine__value_int(
            (int64_t)engine__func_utf8_read(&bytes, bytes + size));
    }
    return 0;
}

ENGINE__FUNC_SCALAR(char)
{
    uint8_t *text, *p;
    int i;

    text = engine__arena_alloc(ctx->arena, (size_t)argc * 4);
    if (text == NULL) {
        return engine__func_error_nomem(ctx);
    }
    p = text;
    for (i = 0; i < argc; i++) {
        int64_t x = engine__value_to_int(&argv[i]);
        if (x < 0 || x > 0x10ffff) {
            x = 0xfffd;
        }
        p += engine__func_utf8_write((uint32_t)x, p);
    }
    *out = engine__value_text(text, (size_t)(p - text));
    return 0;
}

/* The pattern and text of like() and glob(), with SQLite's checks. Returns
 * 0 to match, 1 when the result is NULL, 2 when it is 0 because an
 * argument is a blob, or an error. The oracle's libsqlite3 (Debian's) is
 * built with SQLITE_LIKE_DOESNT_MATCH_BLOBS, so a blob never matches, and
 * we follow it. */
static int match_args(struct engine_func_context *ctx,
                      const struct engine_value *argv, const uint8_t **pattern,
                      size_t *pattern_size, const uint8_t **text,
                      size_t *text_size)
{
    bool pattern_null, text_null;
    int rc;

    if (argv[0].type == ENGINE_BLOB || argv[1].type == ENGINE_BLOB) {
        return 2;
    }
    rc = engine__func_text(ctx, &argv[0], pattern, pattern_size, &pattern_null);
    if (rc == 0) {
        rc = engine__func_text(ctx, &argv[1], text, text_size, &text_null);
    }
    if (rc != 0) {
        return rc;
    }
    if (*pattern_size > LIKE_PATTERN_SIZE_MAX) {
        return engine__func_error(ctx, ENGINE_ESQL,
                                  "LIKE or GLOB pattern too complex");
    }
    *pattern_size = engine__func_cstr_size(*pattern, *pattern_size);
    *text_size = engine__func_cstr_size(*text, *text_size);
    return pattern_null || text_null ? 1 : 0;
}

/* The ESCAPE character of like(): one character, else an error. Returns 1
 * when the escape is NULL (a NULL result). */
static int like_escape(struct engine_func_context *ctx,
                       const struct engine_value *arg, uint32_t *escape)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;
    int rc;

    rc = engine__func_text(ctx, arg, &bytes, &size, &is_null);
    if (rc != 0 || is_null) {
        return rc != 0 ? rc : 1;
    }
    size = engine__func_cstr_size(bytes, size);
    if (utf8_count(bytes, bytes + size) != 1) {
        return engine__func_error(
            ctx, ENGINE_ESQL, "ESCAPE expression must be a single character");
    }
    *escape = engine__func_utf8_read(&bytes, bytes + size);
    return 0;
}

ENGINE__FUNC_SCALAR(like)
{
    const uint8_t *pattern, *text;
    size_t pattern_size, text_size;
    uint32_t escape = 0;
    int rc, escape_rc = 0;

    *out = engine__value_null();
    rc = match_args(ctx, argv, &pattern, &pattern_size, &text, &text_size);
    if (rc < 0) {
        return rc;
    }
    if (rc == 2) {
        *out = engine__value_int(0);
        return 0;
    }
    if (argc == 3) {
        escape_rc = like_escape(ctx, &argv[2], &escape);
        if (escape_rc < 0) {
            return escape_rc;
        }
    }
    if (rc == 1 || escape_rc == 1) {
        return 0;
    }
    *out = engine__value_int(engine__like_match(pattern, pattern_size, text,
                                                text_size, escape, false));
    return 0;
}

ENGINE__FUNC_SCALAR(glob)
{
    const uint8_t *pattern, *text;
    size_t pattern_size, text_size;
    int rc;

    ASSERT(argc == 2);
    *out = engine__value_null();
    rc = match_args(ctx, argv, &pattern, &pattern_size, &text, &text_size);
    if (rc == 2) {
        *out = engine__value_int(0);
        return 0;
    }
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    *out = engine__value_int(
        engine__glob_match(pattern, pattern_size, text, text_size));
    return 0;
}
