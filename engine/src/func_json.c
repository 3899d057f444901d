/* SPDX-License-Identifier: MIT
 *
 * func_json.c: the JSON parser, path lookup and node renderer beneath
 * SQLite 3.40's JSON functions (src/json.c; json1.html), on the flat
 * node array described in func_json.h.
 *
 * The grammar is RFC 7159's as SQLite checks it: whitespace is only
 * space, tab, LF and CR; strings reject control characters and accept
 * the escapes \" \\ \/ \b \f \n \r \t \uXXXX (kept as written, decoded
 * only when a string becomes an SQL value); numbers keep their text (so
 * json('1.0') stays 1.0 and big integers are not rounded); literals must
 * not run into a letter or digit; nesting stops at ENGINE_JSON_MAX_DEPTH.
 * Paths are "$" followed by .key, ."quoted key", [N], [#] or [#-N] steps;
 * like SQLite, a step on a value of the wrong type ends the lookup before
 * the rest of the path is checked, so whether a path is "malformed"
 * depends on the document.
 */
#include "func_json.h"

#include <string.h>

#include "common.h"
#include "text_number.h"

/* SQLite's jsonIsSpace[]: the four RFC 7159 whitespace characters. */
static bool json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool json_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool json_alnum(char c)
{
    return json_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool json_xdigit(char c)
{
    return json_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int64_t engine__json_add(struct engine_json_parse *parse, uint8_t type,
                         uint32_t n, const char *bytes)
{
    struct engine_json_node *node;

    if (parse->oom) {
        return -1;
    }
    if (parse->count >= parse->capacity) {
        uint32_t capacity = parse->capacity * 2 + 10;
        struct engine_json_node *grown =
            common_realloc_array(parse->nodes, capacity, sizeof(*parse->nodes));
        if (grown == NULL) {
            parse->oom = true;
            return -1;
        }
        parse->nodes = grown;
        parse->capacity = capacity;
    }
    node = &parse->nodes[parse->count];
    memset(node, 0, sizeof(*node));
    node->type = type;
    node->n = n;
    node->bytes = bytes;
    return parse->count++;
}

/* ---- parsing (jsonParseValue) ---- */

/* parse_value's results besides a position: the end of an object or an
 * array where a value was expected, and a syntax error. */
#define PARSE_ERROR (-1)
#define PARSE_END_OBJECT (-2)
#define PARSE_END_ARRAY (-3)

static int64_t parse_value(struct engine_json_parse *p, uint32_t i);

static uint32_t skip_space(const char *z, uint32_t i)
{
    while (json_space(z[i])) {
        i++;
    }
    return i;
}

/* One member "label": value after '{' or ','; the position after it. */
static int64_t parse_member(struct engine_json_parse *p, uint32_t j,
                            int64_t this_node)
{
    int64_t x;

    if (++p->depth > ENGINE_JSON_MAX_DEPTH) {
        return PARSE_ERROR;
    }
    x = parse_value(p, j);
    if (x < 0) {
        p->depth--;
        if (x == PARSE_END_OBJECT && p->count == (uint32_t)this_node + 1) {
            return PARSE_END_OBJECT;
        }
        return PARSE_ERROR;
    }
    if (p->oom || p->nodes[p->count - 1].type != ENGINE_JSON_STRING) {
        return PARSE_ERROR;
    }
    /* The last node added is the label, as in SQLite, whatever the
     * value before it was. */
    p->nodes[p->count - 1].flags |= ENGINE_JSON_LABEL;
    j = skip_space(p->text, (uint32_t)x);
    if (p->text[j] != ':') {
        return PARSE_ERROR;
    }
    x = parse_value(p, j + 1);
    p->depth--;
    return x;
}

static int64_t parse_object(struct engine_json_parse *p, uint32_t i)
{
    int64_t this_node = engine__json_add(p, ENGINE_JSON_OBJECT, 0, NULL);
    uint32_t j;

    if (this_node < 0) {
        return PARSE_ERROR;
    }
    for (j = i + 1;; j++) {
        int64_t x = parse_member(p, skip_space(p->text, j), this_node);
        if (x == PARSE_END_OBJECT) {
            return skip_space(p->text, j) + 1;
        }
        if (x < 0) {
            return PARSE_ERROR;
        }
        j = skip_space(p->text, (uint32_t)x);
        if (p->text[j] == ',') {
            continue;
        }
        if (p->text[j] != '}') {
            return PARSE_ERROR;
        }
        break;
    }
    p->nodes[this_node].n = p->count - (uint32_t)this_node - 1;
    return j + 1;
}

static int64_t parse_array(struct engine_json_parse *p, uint32_t i)
{
    int64_t this_node = engine__json_add(p, ENGINE_JSON_ARRAY, 0, NULL);
    uint32_t j;

    if (this_node < 0) {
        return PARSE_ERROR;
    }
    for (j = i + 1;; j++) {
        int64_t x;
        j = skip_space(p->text, j);
        if (++p->depth > ENGINE_JSON_MAX_DEPTH) {
            return PARSE_ERROR;
        }
        x = parse_value(p, j);
        p->depth--;
        if (x < 0) {
            if (x == PARSE_END_ARRAY && p->count == (uint32_t)this_node + 1) {
                return j + 1;
            }
            return PARSE_ERROR;
        }
        j = skip_space(p->text, (uint32_t)x);
        if (p->text[j] == ',') {
            continue;
        }
        if (p->text[j] != ']') {
            return PARSE_ERROR;
        }
        break;
    }
    p->nodes[this_node].n = p->count - (uint32_t)this_node - 1;
    return j + 1;
}

/* The escape after a backslash at z[j]: valid or not. */
static bool string_escape_ok(const char *z, uint32_t j)
{
    char c = z[j];

    if (c == 'u') {
        return json_xdigit(z[j + 1]) && json_xdigit(z[j + 2]) &&
               json_xdigit(z[j + 3]) && json_xdigit(z[j + 4]);
    }
    return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' ||
           c == 'n' || c == 'r' || c == 't';
}

static int64_t parse_string(struct engine_json_parse *p, uint32_t i)
{
    const char *z = p->text;
    uint8_t flags = 0;
    uint32_t j = i + 1;
    int64_t node;

    for (;; j++) {
        unsigned char c = (unsigned char)z[j];
        if (c <= 0x1f) {
            return PARSE_ERROR;
        }
        if (c == '\\') {
            if (!string_escape_ok(z, ++j)) {
                return PARSE_ERROR;
            }
            flags = ENGINE_JSON_ESCAPE;
        } else if (c == '"') {
            break;
        }
    }
    node = engine__json_add(p, ENGINE_JSON_STRING, j + 1 - i, z + i);
    if (node >= 0) {
        p->nodes[node].flags = flags;
    }
    return j + 1;
}

/* A number as SQLite's parser accepts it; INT unless it has '.' or an
 * exponent. */
static int64_t parse_number(struct engine_json_parse *p, uint32_t i)
{
    const char *z = p->text;
    bool seen_dp = false;
    bool seen_e = false;
    uint32_t j = z[i] == '-' ? i + 1 : i;

    if (z[j] == '0' && json_digit(z[j + 1])) {
        return PARSE_ERROR;
    }
    for (j = i + 1;; j++) {
        char c = z[j];
        if (json_digit(c)) {
            continue;
        }
        if (c == '.') {
            if (z[j - 1] == '-' || seen_dp) {
                return PARSE_ERROR;
            }
            seen_dp = true;
            continue;
        }
        if (c != 'e' && c != 'E') {
            break;
        }
        if (z[j - 1] < '0' || seen_e) {
            return PARSE_ERROR;
        }
        seen_dp = seen_e = true;
        if (z[j + 1] == '+' || z[j + 1] == '-') {
            j++;
        }
        if (!json_digit(z[j + 1])) {
            return PARSE_ERROR;
        }
    }
    if (z[j - 1] < '0') {
        return PARSE_ERROR;
    }
    engine__json_add(p, seen_dp ? ENGINE_JSON_REAL : ENGINE_JSON_INT, j - i,
                     z + i);
    return j;
}

/* A literal null, true or false at z[i], or PARSE_ERROR. */
static int64_t parse_literal(struct engine_json_parse *p, uint32_t i)
{
    static const char *const words[] = {"null", "true", "false"};
    static const uint8_t types[] = {ENGINE_JSON_NULL, ENGINE_JSON_TRUE,
                                    ENGINE_JSON_FALSE};

    for (size_t w = 0; w < 3; w++) {
        size_t size = strlen(words[w]);
        if (strncmp(p->text + i, words[w], size) == 0 &&
            !json_alnum(p->text[i + size])) {
            engine__json_add(p, types[w], 0, NULL);
            return i + (uint32_t)size;
        }
    }
    return PARSE_ERROR;
}

static int64_t parse_value(struct engine_json_parse *p, uint32_t i)
{
    char c;

    i = skip_space(p->text, i);
    c = p->text[i];
    switch (c) {
    case '{':
        return parse_object(p, i);
    case '[':
        return parse_array(p, i);
    case '"':
        return parse_string(p, i);
    case 'n':
    case 't':
    case 'f':
        return parse_literal(p, i);
    case '}':
        return PARSE_END_OBJECT;
    case ']':
        return PARSE_END_ARRAY;
    case '\0':
        return 0;
    default:
        break;
    }
    if (c == '-' || json_digit(c)) {
        return parse_number(p, i);
    }
    return PARSE_ERROR;
}

int engine__json_parse(struct engine_func_context *ctx,
                       struct engine_json_parse *parse, const char *text)
{
    int64_t i;

    memset(parse, 0, sizeof(*parse));
    parse->text = text;
    i = parse_value(parse, 0);
    if (parse->oom) {
        return engine__func_error_nomem(ctx);
    }
    if (i > 0) {
        i = skip_space(text, (uint32_t)i);
        if (text[i] != '\0') {
            i = PARSE_ERROR;
        }
    }
    if (i <= 0) {
        return engine__func_error(ctx, ENGINE_ESQL, "malformed JSON");
    }
    return 0;
}

void engine__json_parse_close(struct engine_json_parse *parse)
{
    common_free(parse->nodes);
    parse->nodes = NULL;
    parse->count = 0;
    parse->capacity = 0;
}

int engine__json_parse_value(struct engine_func_context *ctx,
                             struct engine_json_parse *parse,
                             const struct engine_value *v, bool *is_null)
{
    const char *text;
    int rc = engine__func_cstr(ctx, v, &text);

    memset(parse, 0, sizeof(*parse));
    *is_null = rc == 0 && text == NULL;
    if (rc != 0 || text == NULL) {
        return rc;
    }
    rc = engine__json_parse(ctx, parse, text);
    if (rc != 0) {
        engine__json_parse_close(parse);
    }
    return rc;
}

/* ---- output ---- */

static bool out_reserve(struct engine_json_out *out, size_t more)
{
    size_t capacity;
    char *grown;

    if (out->error != 0) {
        return false;
    }
    if (out->size + more <= out->capacity) {
        return true;
    }
    if (more > ENGINE_MAX_LENGTH || out->size + more > ENGINE_MAX_LENGTH) {
        out->error = ENGINE_ETOOBIG;
        return false;
    }
    capacity = out->capacity < 100 ? 100 : out->capacity;
    while (capacity < out->size + more) {
        capacity *= 2;
    }
    grown = common_realloc(out->bytes, capacity);
    if (grown == NULL) {
        out->error = COMMON_ENOMEM;
        return false;
    }
    out->bytes = grown;
    out->capacity = capacity;
    return true;
}

void engine__json_out_char(struct engine_json_out *out, char c)
{
    if (out_reserve(out, 1)) {
        out->bytes[out->size++] = c;
    }
}

void engine__json_out_raw(struct engine_json_out *out, const char *bytes,
                          size_t size)
{
    if (size > 0 && out_reserve(out, size)) {
        memcpy(out->bytes + out->size, bytes, size);
        out->size += size;
    }
}

void engine__json_out_separator(struct engine_json_out *out)
{
    char c;

    if (out->size == 0) {
        return;
    }
    c = out->bytes[out->size - 1];
    if (c != '[' && c != '{') {
        engine__json_out_char(out, ',');
    }
}

/* The escape of control character c: "\n" style or "\u00XX". */
static size_t control_escape(unsigned char c, char *esc)
{
    static const char special[32] = {
        ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r'};

    esc[0] = '\\';
    if (special[c] != 0) {
        esc[1] = special[c];
        return 2;
    }
    esc[1] = 'u';
    esc[2] = '0';
    esc[3] = '0';
    esc[4] = (char)('0' + (c >> 4));
    esc[5] = "0123456789abcdef"[c & 0xf];
    return 6;
}

void engine__json_out_string(struct engine_json_out *out, const char *bytes,
                             size_t size)
{
    size_t start = 0;

    if (bytes == NULL) {
        return;
    }
    engine__json_out_char(out, '"');
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)bytes[i];
        char esc[6];
        size_t esc_size;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            esc_size = 2;
        } else if (c <= 0x1f) {
            esc_size = control_escape(c, esc);
        } else {
            continue;
        }
        engine__json_out_raw(out, bytes + start, i - start);
        engine__json_out_raw(out, esc, esc_size);
        start = i + 1;
    }
    engine__json_out_raw(out, bytes + start, size - start);
    engine__json_out_char(out, '"');
}

void engine__json_out_value(struct engine_func_context *ctx,
                            struct engine_json_out *out,
                            const struct engine_value *v)
{
    const uint8_t *bytes;
    size_t size;
    bool is_null;

    if (v->type == ENGINE_NULL) {
        engine__json_out_raw(out, "null", 4);
        return;
    }
    if (v->type == ENGINE_BLOB) {
        if (out->error == 0) {
            out->error = ENGINE_ESQL;
            engine__func_error(ctx, ENGINE_ESQL,
                               "JSON cannot hold BLOB values");
        }
        return;
    }
    if (engine__func_text(ctx, v, &bytes, &size, &is_null) != 0) {
        out->error = COMMON_ENOMEM;
        return;
    }
    if (v->type == ENGINE_TEXT && !v->json_subtype) {
        engine__json_out_string(out, (const char *)bytes, size);
    } else {
        engine__json_out_raw(out, (const char *)bytes, size);
    }
}

static void out_container(struct engine_func_context *ctx,
                          struct engine_json_out *out,
                          const struct engine_json_node *node,
                          const struct engine_value *argv)
{
    bool object = node->type == ENGINE_JSON_OBJECT;
    uint32_t j = 1;

    /* An object's members are pairs, so a member starts before its last
     * node (j < n): this also keeps a document such as {["x"]:1}, which
     * SQLite accepts with its label inside the key, within the parse. */
    engine__json_out_char(out, object ? '{' : '[');
    for (;;) {
        while (object ? j < node->n : j <= node->n) {
            const struct engine_json_node *value = &node[j + (object ? 1 : 0)];
            if ((value->flags & ENGINE_JSON_REMOVE) == 0) {
                engine__json_out_separator(out);
                engine__json_out_node(ctx, out, &node[j], argv);
                if (object) {
                    engine__json_out_char(out, ':');
                    engine__json_out_node(ctx, out, value, argv);
                }
            }
            j += engine__json_size(value) + (object ? 1 : 0);
        }
        if ((node->flags & ENGINE_JSON_APPEND) == 0) {
            break;
        }
        node += node->append;
        j = 1;
    }
    engine__json_out_char(out, object ? '}' : ']');
}

void engine__json_out_node(struct engine_func_context *ctx,
                           struct engine_json_out *out,
                           const struct engine_json_node *node,
                           const struct engine_value *argv)
{
    if (node->flags & ENGINE_JSON_REPLACE) {
        engine__json_out_value(ctx, out, &argv[node->replace]);
        return;
    }
    if (node->flags & ENGINE_JSON_PATCH) {
        node = node->patch;
    }
    switch (node->type) {
    case ENGINE_JSON_NULL:
        engine__json_out_raw(out, "null", 4);
        break;
    case ENGINE_JSON_TRUE:
        engine__json_out_raw(out, "true", 4);
        break;
    case ENGINE_JSON_FALSE:
        engine__json_out_raw(out, "false", 5);
        break;
    case ENGINE_JSON_STRING:
        if (node->flags & ENGINE_JSON_RAW) {
            engine__json_out_string(out, node->bytes, node->n);
        } else {
            engine__json_out_raw(out, node->bytes, node->n);
        }
        break;
    case ENGINE_JSON_INT:
    case ENGINE_JSON_REAL:
        engine__json_out_raw(out, node->bytes, node->n);
        break;
    default:
        out_container(ctx, out, node, argv);
        break;
    }
}

int engine__json_out_result(struct engine_func_context *ctx,
                            struct engine_json_out *out,
                            struct engine_value *result)
{
    void *copy = NULL;
    int rc = out->error;

    if (rc == 0) {
        copy = engine__arena_memdup(ctx->arena, out->bytes, out->size);
        rc = copy == NULL && out->size > 0 ? COMMON_ENOMEM : 0;
    }
    engine__json_out_close(out);
    if (rc == COMMON_ENOMEM) {
        return engine__func_error_nomem(ctx);
    }
    if (rc == ENGINE_ETOOBIG) {
        return engine__func_error_toobig(ctx);
    }
    if (rc != 0) {
        return rc;
    }
    *result = engine__value_text(copy, out->size);
    result->json_subtype = true;
    return 0;
}

void engine__json_out_close(struct engine_json_out *out)
{
    common_free(out->bytes);
    out->bytes = NULL;
    out->capacity = 0;
}
