/* SPDX-License-Identifier: MIT
 *
 * func_json_path.c: JSON path lookup and the SQL value of a JSON node,
 * as SQLite 3.40's jsonLookupStep(), jsonLookupAppend() and jsonReturn()
 * (src/json.c; json1.html "PATH arguments").
 *
 * A path is '$' then steps: ".key" (up to the next '.' or '['), ."key"
 * (up to the next '"', no escapes), "[N]", "[#]" (one past the end) and
 * "[#-N]". Keys compare with the label's bytes as written, so an escaped
 * label never matches. Array indexes accumulate in 32 bits as SQLite's
 * u32 does. When json_set() or json_insert() asks to create, a missing
 * object member or the element one past an array's end is appended,
 * with empty containers made for the rest of the path only where the
 * next step is ".key" or "[0]".
 */
#include "func_json.h"

#include <string.h>

#include "common.h"
#include "value.h"

static bool path_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Where a lookup step reports a syntax error: the rest of the path. */
struct lookup {
    struct engine_json_parse *parse;
    bool *create;      /* NULL: do not append */
    const char *error; /* set at the first syntax error */
};

static int64_t lookup_step(struct lookup *l, uint32_t root, const char *path);

/* jsonLabelCompare: the label node against key (size bytes). */
static bool label_is(const struct engine_json_node *label, const char *key,
                     uint32_t size)
{
    if (label->flags & ENGINE_JSON_RAW) {
        return label->n == size && memcmp(label->bytes, key, size) == 0;
    }
    return label->n == size + 2 && memcmp(label->bytes + 1, key, size) == 0;
}

/* Appends what the rest of path needs; the node at its end, or -1. */
static int64_t lookup_append(struct lookup *l, const char *path)
{
    int64_t node;

    *l->create = true;
    if (path[0] == '\0') {
        return engine__json_add(l->parse, ENGINE_JSON_NULL, 0, NULL);
    }
    if (path[0] == '.') {
        node = engine__json_add(l->parse, ENGINE_JSON_OBJECT, 0, NULL);
    } else if (strncmp(path, "[0]", 3) == 0) {
        node = engine__json_add(l->parse, ENGINE_JSON_ARRAY, 0, NULL);
    } else {
        return -1;
    }
    if (node < 0) {
        return -1;
    }
    return lookup_step(l, (uint32_t)node, path);
}

/* Chains a new continuation at start to the container at root when the
 * appended path was made (node >= 0). */
static int64_t chain(struct lookup *l, uint32_t root, int64_t start,
                     int64_t node)
{
    if (node >= 0 && !l->parse->oom) {
        struct engine_json_node *r = &l->parse->nodes[root];
        r->append = (uint32_t)(start - root);
        r->flags |= ENGINE_JSON_APPEND;
    }
    return l->parse->oom ? -1 : node;
}

/* The key of a ".key" step at path (after the '.'): *key, *size and the
 * length of the step; false for a syntax error. A quoted key may be
 * empty, a bare one may not. */
static bool key_scan(const char *path, const char **key, uint32_t *size,
                     uint32_t *step)
{
    uint32_t i;

    if (path[0] == '"') {
        for (i = 1; path[i] != '\0' && path[i] != '"'; i++) {
        }
        if (path[i] == '\0') {
            return false;
        }
        *key = path + 1;
        *size = i - 1;
        *step = i + 1;
        return true;
    } else {
        for (i = 0; path[i] != '\0' && path[i] != '.' && path[i] != '['; i++) {
        }
        *key = path;
        *size = i;
        *step = i;
    }
    return *size > 0;
}

static int64_t lookup_key(struct lookup *l, uint32_t root, const char *path)
{
    const char *key;
    uint32_t size;
    uint32_t step;
    uint32_t j = 1;

    if (l->parse->nodes[root].type != ENGINE_JSON_OBJECT) {
        return -1;
    }
    path++;
    if (!key_scan(path, &key, &size, &step)) {
        l->error = path;
        return -1;
    }
    for (;;) {
        const struct engine_json_node *r = &l->parse->nodes[root];
        while (j < r->n) {
            if (label_is(&r[j], key, size)) {
                return lookup_step(l, root + j + 1, path + step);
            }
            j++;
            j += engine__json_size(&r[j]);
        }
        if ((r->flags & ENGINE_JSON_APPEND) == 0) {
            break;
        }
        root += r->append;
        j = 1;
    }
    if (l->create == NULL) {
        return -1;
    }
    {
        int64_t start = engine__json_add(l->parse, ENGINE_JSON_OBJECT, 2, NULL);
        int64_t label =
            engine__json_add(l->parse, ENGINE_JSON_STRING, size, key);
        int64_t node = label < 0 ? -1 : lookup_append(l, path + step);
        if (node >= 0 && !l->parse->oom) {
            l->parse->nodes[label].flags |= ENGINE_JSON_RAW;
        }
        return chain(l, root, start, node);
    }
}

/* The live elements of the array at root, its continuations included. */
static uint32_t array_count(const struct engine_json_parse *parse,
                            uint32_t root)
{
    uint32_t count = 0;
    uint32_t j = 1;

    for (;;) {
        const struct engine_json_node *r = &parse->nodes[root];
        while (j <= r->n) {
            if ((r[j].flags & ENGINE_JSON_REMOVE) == 0) {
                count++;
            }
            j += engine__json_size(&r[j]);
        }
        if ((r->flags & ENGINE_JSON_APPEND) == 0) {
            return count;
        }
        root += r->append;
        j = 1;
    }
}

/* The index of an "[#...]" step: false when it names no element (a
 * non-array, or #-N before the start); a syntax error sets l->error. */
static bool hash_index(struct lookup *l, uint32_t root, const char *path,
                       uint32_t *index, uint32_t *step)
{
    uint32_t j = 2;
    uint32_t i;

    if (l->parse->nodes[root].type != ENGINE_JSON_ARRAY) {
        return false;
    }
    i = array_count(l->parse, root);
    if (path[2] == '-' && path_digit(path[3])) {
        uint32_t x = 0;
        for (j = 3; path_digit(path[j]); j++) {
            x = x * 10 + (uint32_t)(path[j] - '0');
        }
        if (x > i) {
            return false;
        }
        i -= x;
    }
    if (path[j] != ']') {
        l->error = path;
        return false;
    }
    *index = i;
    *step = j;
    return true;
}

/* The array element (index counting live ones) at or after root, or -1
 * with *end_root the last continuation searched. */
static int64_t array_find(const struct engine_json_parse *parse, uint32_t root,
                          uint32_t *index, uint32_t *end_root)
{
    uint32_t i = *index;
    uint32_t j = 1;

    for (;;) {
        const struct engine_json_node *r = &parse->nodes[root];
        while (j <= r->n && (i > 0 || (r[j].flags & ENGINE_JSON_REMOVE) != 0)) {
            if ((r[j].flags & ENGINE_JSON_REMOVE) == 0) {
                i--;
            }
            j += engine__json_size(&r[j]);
        }
        if ((r->flags & ENGINE_JSON_APPEND) == 0) {
            break;
        }
        root += r->append;
        j = 1;
    }
    *index = i;
    *end_root = root;
    return j <= parse->nodes[root].n ? (int64_t)(root + j) : -1;
}

static int64_t lookup_index(struct lookup *l, uint32_t root, const char *path)
{
    uint32_t i = 0;
    uint32_t j = 1;
    int64_t found;

    while (path_digit(path[j])) {
        i = i * 10 + (uint32_t)(path[j] - '0');
        j++;
    }
    if (j < 2 || path[j] != ']') {
        if (path[1] != '#') {
            l->error = path;
            return -1;
        }
        if (!hash_index(l, root, path, &i, &j)) {
            return -1;
        }
    }
    if (l->parse->nodes[root].type != ENGINE_JSON_ARRAY) {
        return -1;
    }
    path += j + 1;
    found = array_find(l->parse, root, &i, &root);
    if (found >= 0) {
        return lookup_step(l, (uint32_t)found, path);
    }
    if (i == 0 && l->create != NULL) {
        int64_t start = engine__json_add(l->parse, ENGINE_JSON_ARRAY, 1, NULL);
        int64_t node = start < 0 ? -1 : lookup_append(l, path);
        return chain(l, root, start, node);
    }
    return -1;
}

static int64_t lookup_step(struct lookup *l, uint32_t root, const char *path)
{
    if (path[0] == '\0') {
        return root;
    }
    if (l->parse->nodes[root].flags & ENGINE_JSON_REPLACE) {
        return -1;
    }
    if (path[0] == '.') {
        return lookup_key(l, root, path);
    }
    if (path[0] == '[') {
        return lookup_index(l, root, path);
    }
    l->error = path;
    return -1;
}

/* "JSON path error near '%q'": the rest of the path, quotes doubled. */
static int path_error(struct engine_func_context *ctx, const char *rest)
{
    static const char prefix[] = "JSON path error near '";
    size_t size = strlen(rest);
    char *msg = engine__arena_alloc(ctx->arena, sizeof(prefix) + 2 * size + 2);
    size_t n = sizeof(prefix) - 1;

    if (msg == NULL) {
        return engine__func_error_nomem(ctx);
    }
    memcpy(msg, prefix, n);
    for (size_t i = 0; i < size; i++) {
        if (rest[i] == '\'') {
            msg[n++] = '\'';
        }
        msg[n++] = rest[i];
    }
    msg[n++] = '\'';
    msg[n] = '\0';
    return engine__func_error(ctx, ENGINE_ESQL, msg);
}

int engine__json_lookup(struct engine_func_context *ctx,
                        struct engine_json_parse *parse, const char *path,
                        bool *create, struct engine_json_node **out)
{
    struct lookup l = {parse, create, NULL};
    int64_t node = -1;

    *out = NULL;
    if (path == NULL) {
        return 0;
    }
    if (path[0] != '$') {
        l.error = path;
    } else {
        node = lookup_step(&l, 0, path + 1);
    }
    if (parse->oom) {
        return engine__func_error_nomem(ctx);
    }
    if (l.error != NULL) {
        parse->path_error = true;
        return path_error(ctx, l.error);
    }
    *out = node >= 0 ? &parse->nodes[node] : NULL;
    return 0;
}

/* ---- jsonReturn ---- */

/* An INT node's value: SQLite's digit loop, which gives up to REAL past
 * the int64 range (and keeps -9223372036854775808 an integer). */
static struct engine_value return_int(const struct engine_json_node *node)
{
    const char *z = node->bytes;
    bool negative = z[0] == '-';
    int64_t i = 0;
    double r = 0.0;

    for (z += negative ? 1 : 0; path_digit(z[0]); z++) {
        int v = z[0] - '0';
        if (i >= INT64_MAX / 10) {
            if (i > INT64_MAX / 10 || path_digit(z[1]) || v == 9 ||
                (v == 8 && !negative)) {
                engine__text_to_number((const uint8_t *)node->bytes, node->n,
                                       NULL, &r);
                return engine__value_real(r);
            }
            if (v == 8) {
                return engine__value_int(INT64_MIN);
            }
        }
        i = i * 10 + v;
    }
    return engine__value_int(negative ? -i : i);
}

static uint32_t hex4(const char *z)
{
    uint32_t v = 0;

    for (int k = 0; k < 4; k++) {
        char h = z[k];
        uint32_t d =
            h <= '9' ? (uint32_t)(h - '0') : (uint32_t)((h | 0x20) - 'a' + 10);
        v = (v << 4) + d;
    }
    return v;
}

/* The \uXXXX escape at z[i] (i at 'u'), written as UTF-8 at out[*j],
 * joining a surrogate pair; *i ends on its last byte. false for \u0000,
 * which ends the text as in SQLite. */
static bool unescape_u(const char *z, uint32_t n, uint32_t *i, char *out,
                       uint32_t *j)
{
    uint32_t v = hex4(z + *i + 1);
    uint32_t lo;

    *i += 4;
    if (v == 0) {
        return false;
    }
    if ((v & 0xfc00) == 0xd800 && *i < n - 6 && z[*i + 1] == '\\' &&
        z[*i + 2] == 'u' && ((lo = hex4(z + *i + 3)) & 0xfc00) == 0xdc00) {
        v = ((v & 0x3ff) << 10) + (lo & 0x3ff) + 0x10000;
        *i += 6;
    } else if (v > 0x7ff) {
        /* A lone surrogate is written as its 3 bytes, as SQLite does. */
        out[(*j)++] = (char)(0xe0 | (v >> 12));
        out[(*j)++] = (char)(0x80 | ((v >> 6) & 0x3f));
        out[(*j)++] = (char)(0x80 | (v & 0x3f));
        return true;
    }
    *j += (uint32_t)engine__func_utf8_write(v, (uint8_t *)out + *j);
    return true;
}

static char unescape_simple(char c)
{
    switch (c) {
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    default:
        return c;
    }
}

static int return_string(struct engine_func_context *ctx,
                         const struct engine_json_node *node,
                         struct engine_value *result)
{
    const char *z = node->bytes;
    uint32_t n = node->n;
    uint32_t j = 0;
    char *out;

    if ((node->flags & ENGINE_JSON_ESCAPE) == 0) {
        *result = engine__value_text(z + 1, n - 2);
        return 0;
    }
    out = engine__arena_alloc(ctx->arena, n + 1);
    if (out == NULL) {
        return engine__func_error_nomem(ctx);
    }
    for (uint32_t i = 1; i < n - 1; i++) {
        if (z[i] != '\\') {
            out[j++] = z[i];
        } else if (z[++i] != 'u') {
            out[j++] = unescape_simple(z[i]);
        } else if (!unescape_u(z, n, &i, out, &j)) {
            break;
        }
    }
    *result = engine__value_text(out, j);
    return 0;
}

int engine__json_return(struct engine_func_context *ctx,
                        const struct engine_json_node *node,
                        struct engine_value *result)
{
    double r = 0.0;

    switch (node->type) {
    case ENGINE_JSON_NULL:
        *result = engine__value_null();
        return 0;
    case ENGINE_JSON_TRUE:
    case ENGINE_JSON_FALSE:
        *result = engine__value_int(node->type == ENGINE_JSON_TRUE);
        return 0;
    case ENGINE_JSON_INT:
        *result = return_int(node);
        return 0;
    case ENGINE_JSON_REAL:
        engine__text_to_number((const uint8_t *)node->bytes, node->n, NULL, &r);
        *result = engine__value_real(r);
        return 0;
    case ENGINE_JSON_STRING:
        return return_string(ctx, node, result);
    default: {
        struct engine_json_out out = {0};
        engine__json_out_node(ctx, &out, node, NULL);
        return engine__json_out_result(ctx, &out, result);
    }
    }
}
