/* SPDX-License-Identifier: MIT
 *
 * hrana_value.c: Hrana's value codec (HRANA_3_SPEC, "Values") between JSON
 * and the engine: {"type":"null"}, {"type":"integer","value":"<int64>"}
 * (a string, so JavaScript's doubles do not round it), {"type":"float",
 * "value":<number>}, {"type":"text","value":...} and {"type":"blob",
 * "base64":...}; base64 itself; and JSON text that is valid UTF-8 whatever
 * bytes the engine holds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hrana_int.h"

/* ---- base64 (RFC 4648, section 4: the standard alphabet) ---- */

static const char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t hrana_base64_encoded_size(size_t size)
{
    return (size + 2) / 3 * 4;
}

void hrana_base64_encode(const uint8_t *data, size_t size, char *out)
{
    size_t i = 0;
    size_t o = 0;

    for (; i + 3 <= size; i += 3) {
        uint32_t v =
            (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        out[o++] = base64_alphabet[v >> 18];
        out[o++] = base64_alphabet[(v >> 12) & 63];
        out[o++] = base64_alphabet[(v >> 6) & 63];
        out[o++] = base64_alphabet[v & 63];
    }
    if (size - i == 1) {
        uint32_t v = (uint32_t)data[i] << 16;
        out[o++] = base64_alphabet[v >> 18];
        out[o++] = base64_alphabet[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (size - i == 2) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
        out[o++] = base64_alphabet[v >> 18];
        out[o++] = base64_alphabet[(v >> 12) & 63];
        out[o++] = base64_alphabet[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
}

static int base64_digit(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int hrana_base64_decode(const char *text, size_t size, uint8_t **out,
                        size_t *out_size)
{
    uint8_t *bytes = NULL;
    size_t n = 0;
    uint32_t bits = 0;
    unsigned held = 0;

    *out = NULL;
    *out_size = 0;
    /* Padding, if any, only completes the last quantum. */
    if (size % 4 == 0 && size > 0 && text[size - 1] == '=') {
        size -= text[size - 2] == '=' ? 2 : 1;
    }
    if (size % 4 == 1) {
        return NODE_EINVAL;
    }
    if (size > 0) {
        bytes = common_malloc(size / 4 * 3 + 3);
        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
    }
    for (size_t i = 0; i < size; i++) {
        int digit = base64_digit(text[i]);
        if (digit < 0) {
            common_free(bytes);
            return NODE_EINVAL;
        }
        bits = bits << 6 | (uint32_t)digit;
        held += 6;
        if (held >= 8) {
            held -= 8;
            bytes[n++] = (uint8_t)(bits >> held);
        }
    }
    if (n == 0) {
        common_free(bytes);
        bytes = NULL;
    }
    *out = bytes;
    *out_size = n;
    return 0;
}

/* ---- integers ---- */

bool hrana_int64_parse(const char *text, size_t size, int64_t *out)
{
    bool negative = size > 0 && text[0] == '-';
    size_t i = negative ? 1 : 0;
    /* Accumulate the magnitude as unsigned: INT64_MIN's has no positive
     * int64. */
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;

    if (i == size) {
        return false;
    }
    for (; i < size; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return false;
        }
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (limit - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool hrana_json_integer(const json_t *value, int64_t min, int64_t max,
                        int64_t *out)
{
    if (json_is_integer(value)) {
        json_int_t v = json_integer_value(value);
        if (v < min || v > max) {
            return false;
        }
        *out = (int64_t)v;
        return true;
    }
    if (!json_is_real(value)) {
        return false;
    }
    /* Bodies are parsed with every number as a double (hrana_pipeline.c). */
    double d = json_real_value(value);
    if (!(d >= (double)min && d <= (double)max) || d != floor(d)) {
        return false;
    }
    *out = (int64_t)d;
    return true;
}

/* ---- UTF-8 ---- */

/* The length of the valid UTF-8 sequence at s[0..size), 0 if invalid
 * (overlong forms, surrogates and code points past U+10FFFF are invalid,
 * as jansson judges them). */
static size_t utf8_sequence(const unsigned char *s, size_t size)
{
    uint32_t cp;
    size_t len;

    if (s[0] < 0x80) {
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1fu;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0fu;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > size) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        return 0;
    }
    return len;
}

json_t *hrana_json_text(const char *text, size_t size)
{
    const unsigned char *s = (const unsigned char *)text;
    struct common_buf buf;
    json_t *json = NULL;
    size_t i = 0;

    while (i < size) {
        size_t len = utf8_sequence(s + i, size - i);
        if (len == 0) {
            break;
        }
        i += len;
    }
    if (i == size) {
        return json_stringn(size > 0 ? text : "", size);
    }
    /* Rare: copy, replacing each invalid byte with U+FFFD. */
    common_buf_init(&buf, SIZE_MAX);
    if (common_buf_append(&buf, text, i) != 0) {
        goto out;
    }
    while (i < size) {
        size_t len = utf8_sequence(s + i, size - i);
        int rc = len == 0 ? common_buf_append(&buf, "\xef\xbf\xbd", 3)
                          : common_buf_append(&buf, s + i, len);
        if (rc != 0) {
            goto out;
        }
        i += len == 0 ? 1 : len;
    }
    json = json_stringn((const char *)buf.data, buf.size);
out:
    common_buf_close(&buf);
    return json;
}

/* ---- binding ---- */

static int bind_integer(struct engine_stmt *stmt, int index,
                        const json_t *value, char *error, size_t error_size)
{
    const json_t *v = json_object_get(value, "value");
    int64_t n;

    /* A string per the spec; a JSON number is accepted when it is an
     * exact integer (hand-written clients send them). */
    if (json_is_string(v)) {
        if (!hrana_int64_parse(json_string_value(v), json_string_length(v),
                               &n)) {
            snprintf(error, error_size,
                     "integer value is not a 64-bit integer in decimal");
            return NODE_EINVAL;
        }
    } else if (!hrana_json_integer(v, INT64_MIN, INT64_MAX, &n)) {
        snprintf(error, error_size,
                 "integer value is missing or not a decimal string");
        return NODE_EINVAL;
    }
    return engine_bind_int64(stmt, index, n);
}

static int bind_blob(struct engine_stmt *stmt, int index, const json_t *value,
                     char *error, size_t error_size)
{
    const json_t *v = json_object_get(value, "base64");
    uint8_t *bytes;
    size_t size;
    int rc;

    if (!json_is_string(v)) {
        snprintf(error, error_size, "blob value has no \"base64\" string");
        return NODE_EINVAL;
    }
    rc = hrana_base64_decode(json_string_value(v), json_string_length(v),
                             &bytes, &size);
    if (rc == NODE_EINVAL) {
        snprintf(error, error_size, "blob value is not valid base64");
        return rc;
    }
    if (rc != 0) {
        return rc;
    }
    if (size > ENGINE_MAX_LENGTH) {
        common_free(bytes);
        return ENGINE_ETOOBIG;
    }
    rc = engine_bind_blob(stmt, index, bytes != NULL ? bytes : (void *)"",
                          (int)size);
    common_free(bytes);
    return rc;
}

int hrana_value_bind(struct engine_stmt *stmt, int index, const json_t *value,
                     char *error, size_t error_size)
{
    const char *type = json_string_value(json_object_get(value, "type"));
    const json_t *v = json_object_get(value, "value");

    if (!json_is_object(value) || type == NULL) {
        snprintf(error, error_size, "value is not an object with a type");
        return NODE_EINVAL;
    }
    if (strcmp(type, "null") == 0) {
        return engine_bind_null(stmt, index);
    }
    if (strcmp(type, "integer") == 0) {
        return bind_integer(stmt, index, value, error, error_size);
    }
    if (strcmp(type, "float") == 0) {
        /* Every JavaScript number arrives here, 1 as well as 2.5: it binds
         * as REAL, as sqld binds it. */
        if (!json_is_number(v)) {
            snprintf(error, error_size, "float value is not a number");
            return NODE_EINVAL;
        }
        return engine_bind_double(stmt, index, json_number_value(v));
    }
    if (strcmp(type, "text") == 0) {
        if (!json_is_string(v) || json_string_length(v) > ENGINE_MAX_LENGTH) {
            snprintf(error, error_size, "text value is not a string");
            return NODE_EINVAL;
        }
        return engine_bind_text(stmt, index, json_string_value(v),
                                (int)json_string_length(v));
    }
    if (strcmp(type, "blob") == 0) {
        return bind_blob(stmt, index, value, error, error_size);
    }
    snprintf(error, error_size, "value has unknown type \"%.40s\"", type);
    return NODE_EINVAL;
}

/* ---- columns ---- */

/* Rough bytes of a value's JSON besides its payload. */
#define VALUE_OVERHEAD_BYTES 32u

/* JSON has no Inf (SQLite keeps 1e999 as +Inf, and stores NaN as NULL):
 * the statement fails rather than send a value the client cannot read, or
 * one that is not the stored one. */
static void real_error(double d, int column, char *error, size_t error_size)
{
    snprintf(error, error_size,
             "column %d holds a REAL that is not finite (%s), which JSON "
             "cannot carry; CAST it to TEXT",
             column,
             d > 0   ? "Inf"
             : d < 0 ? "-Inf"
                     : "NaN");
}

static json_t *column_blob(const void *bytes, size_t size)
{
    size_t text_size = hrana_base64_encoded_size(size);
    char *text = common_malloc(text_size + 1);
    json_t *json;

    if (text == NULL) {
        return NULL;
    }
    hrana_base64_encode(bytes, size, text);
    json = json_pack("{s:s,s:s#}", "type", "blob", "base64", text, text_size);
    common_free(text);
    return json;
}

int hrana_value_column(struct engine_stmt *stmt, int column, json_t **out,
                       size_t *bytes, char *error, size_t error_size)
{
    char integer[24];
    json_t *json = NULL;
    size_t size = 0;

    switch (engine_column_type(stmt, column)) {
    case ENGINE_INTEGER:
        snprintf(integer, sizeof(integer), "%lld",
                 (long long)engine_column_int64(stmt, column));
        json = json_pack("{s:s,s:s}", "type", "integer", "value", integer);
        break;
    case ENGINE_FLOAT: {
        double d = engine_column_double(stmt, column);
        if (!isfinite(d)) {
            real_error(d, column, error, error_size);
            return NODE_EINVAL;
        }
        json = json_pack("{s:s,s:f}", "type", "float", "value", d);
        break;
    }
    case ENGINE_TEXT: {
        const char *text = engine_column_text(stmt, column);
        size = (size_t)engine_column_bytes(stmt, column);
        json_t *string = hrana_json_text(text != NULL ? text : "", size);
        json = json_pack("{s:s,s:o}", "type", "text", "value", string);
        break;
    }
    case ENGINE_BLOB:
        size = (size_t)engine_column_bytes(stmt, column);
        json = column_blob(engine_column_blob(stmt, column), size);
        size = size / 3 * 4 + 4;
        break;
    default:
        json = json_pack("{s:s}", "type", "null");
        break;
    }
    if (json == NULL) {
        return COMMON_ENOMEM;
    }
    *bytes += size + VALUE_OVERHEAD_BYTES;
    *out = json;
    return 0;
}
