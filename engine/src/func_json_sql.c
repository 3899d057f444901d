/* SPDX-License-Identifier: MIT
 *
 * func_json_sql.c: SQLite 3.40's JSON SQL functions (json1.html): json,
 * json_array, json_array_length, json_extract and the -> and ->>
 * operators, json_insert, json_replace, json_set, json_remove,
 * json_object, json_patch (RFC 7396 MergePatch), json_quote, json_type,
 * json_valid, and the aggregates json_group_array and json_group_object.
 *
 * The JSON subtype: a function result that is JSON text carries
 * engine_value.json_subtype (SQLite's JSON_SUBTYPE), and another JSON
 * function embeds such an argument as JSON instead of quoting it as a
 * string: json_array(json('[1]')) is [[1]], json_array('[1]') is
 * ["[1]"]. The executor keeps the flag only on arguments that are calls
 * (expr.h carries_subtype): like SQLite's, it is lost once a value is
 * stored or passes through a subquery.
 *
 * Arity and NULL rules follow SQLite's: json_extract() with fewer than
 * two arguments, json_remove() and json_set() with none are NULL; a NULL
 * document gives NULL (json_valid(NULL) is 0).
 */
#include "func_json.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

/* The JSON document of argument 0, parsed: *is_null when it is NULL. */
static int parse_arg(struct engine_func_context *ctx,
                     struct engine_json_parse *parse,
                     const struct engine_value *v, bool *is_null)
{
    return engine__json_parse_value(ctx, parse, v, is_null);
}

/* Renders node as JSON text with the JSON subtype (jsonReturnJson). */
static int return_json(struct engine_func_context *ctx,
                       const struct engine_json_node *node,
                       const struct engine_value *argv,
                       struct engine_value *out)
{
    struct engine_json_out text = {0};

    engine__json_out_node(ctx, &text, node, argv);
    return engine__json_out_result(ctx, &text, out);
}

ENGINE__FUNC_SCALAR(json_quote)
{
    struct engine_json_out text = {0};

    (void)argc;
    engine__json_out_value(ctx, &text, &argv[0]);
    return engine__json_out_result(ctx, &text, out);
}

ENGINE__FUNC_SCALAR(json_array)
{
    struct engine_json_out text = {0};

    engine__json_out_char(&text, '[');
    for (int i = 0; i < argc; i++) {
        engine__json_out_separator(&text);
        engine__json_out_value(ctx, &text, &argv[i]);
    }
    engine__json_out_char(&text, ']');
    return engine__json_out_result(ctx, &text, out);
}

ENGINE__FUNC_SCALAR(json_object)
{
    struct engine_json_out text = {0};

    if (argc & 1) {
        return engine__func_error(
            ctx, ENGINE_ESQL,
            "json_object() requires an even number of arguments");
    }
    engine__json_out_char(&text, '{');
    for (int i = 0; i < argc; i += 2) {
        if (argv[i].type != ENGINE_TEXT) {
            engine__json_out_close(&text);
            return engine__func_error(ctx, ENGINE_ESQL,
                                      "json_object() labels must be TEXT");
        }
        engine__json_out_separator(&text);
        engine__json_out_string(&text, (const char *)argv[i].u.s.bytes,
                                argv[i].u.s.size);
        engine__json_out_char(&text, ':');
        engine__json_out_value(ctx, &text, &argv[i + 1]);
    }
    engine__json_out_char(&text, '}');
    return engine__json_out_result(ctx, &text, out);
}

ENGINE__FUNC_SCALAR(json_valid)
{
    struct engine_json_parse parse;
    bool is_null;
    int rc;

    (void)argc;
    rc = parse_arg(ctx, &parse, &argv[0], &is_null);
    engine__json_parse_close(&parse);
    if (rc == COMMON_ENOMEM) {
        return rc;
    }
    if (ctx->errmsg != NULL && ctx->errmsg_size > 0) {
        ctx->errmsg[0] = '\0';
    }
    *out = engine__value_int(rc == 0 && !is_null);
    return 0;
}

/* The node of the optional path argument (argc 2) or the root. */
static int optional_path(struct engine_func_context *ctx,
                         struct engine_json_parse *parse, int argc,
                         const struct engine_value *argv,
                         struct engine_json_node **node)
{
    const char *path;
    int rc;

    if (argc < 2) {
        *node = parse->nodes;
        return 0;
    }
    rc = engine__func_cstr(ctx, &argv[1], &path);
    if (rc == 0) {
        rc = engine__json_lookup(ctx, parse, path, NULL, node);
    }
    return rc;
}

ENGINE__FUNC_SCALAR(json_type)
{
    static const char *const names[] = {"null", "true", "false", "integer",
                                        "real", "text", "array", "object"};
    struct engine_json_parse parse;
    struct engine_json_node *node = NULL;
    bool is_null;
    int rc = parse_arg(ctx, &parse, &argv[0], &is_null);

    *out = engine__value_null();
    if (rc == 0 && !is_null) {
        rc = optional_path(ctx, &parse, argc, argv, &node);
    }
    if (rc == 0 && node != NULL) {
        *out = engine__value_text(names[node->type], strlen(names[node->type]));
    }
    engine__json_parse_close(&parse);
    return rc;
}

ENGINE__FUNC_SCALAR(json_array_length)
{
    struct engine_json_parse parse;
    struct engine_json_node *node = NULL;
    bool is_null;
    int rc = parse_arg(ctx, &parse, &argv[0], &is_null);
    int64_t n = 0;

    *out = engine__value_null();
    if (rc == 0 && !is_null) {
        rc = optional_path(ctx, &parse, argc, argv, &node);
    }
    if (rc == 0 && node != NULL) {
        if (node->type == ENGINE_JSON_ARRAY) {
            for (uint32_t i = 1; i <= node->n; n++) {
                i += engine__json_size(&node[i]);
            }
        }
        *out = engine__value_int(n);
    }
    engine__json_parse_close(&parse);
    return rc;
}

/* The path the -> and ->> operators use for their right operand: a
 * path starting with '$' as it is, else NUMBER as $[NUMBER], [N] as
 * $[N] and LABEL as $.LABEL (json1.html "The -> and ->> operators"). */
static int abbreviated_path(struct engine_func_context *ctx, const char *path,
                            const char **out)
{
    size_t size = strlen(path);
    char *full;

    *out = path;
    if (path[0] == '$') {
        return 0;
    }
    full = engine__arena_alloc(ctx->arena, size + 4);
    if (full == NULL) {
        return engine__func_error_nomem(ctx);
    }
    if (path[0] >= '0' && path[0] <= '9') {
        memcpy(full, "$[", 2);
        memcpy(full + 2, path, size);
        memcpy(full + 2 + size, "]", 2);
    } else {
        size_t prefix = path[0] == '[' ? 1 : 2;
        memcpy(full, "$.", prefix);
        memcpy(full + prefix, path, size + 1);
    }
    *out = full;
    return 0;
}

/* json_extract(J, P): one path; as_json: the -> operator. */
static int extract_one(struct engine_func_context *ctx,
                       struct engine_json_parse *parse,
                       const struct engine_value *path_arg, bool abbreviated,
                       bool as_json, struct engine_value *out)
{
    struct engine_json_node *node;
    const char *path;
    int rc = engine__func_cstr(ctx, path_arg, &path);

    if (rc != 0 || path == NULL) {
        return rc;
    }
    if (abbreviated) {
        rc = abbreviated_path(ctx, path, &path);
    }
    if (rc == 0) {
        rc = engine__json_lookup(ctx, parse, path, NULL, &node);
    }
    if (rc != 0 || node == NULL) {
        return rc;
    }
    if (as_json) {
        return return_json(ctx, node, NULL, out);
    }
    rc = engine__json_return(ctx, node, out);
    if (abbreviated) {
        out->json_subtype = false;
    }
    return rc;
}

/* json_extract(J, P1, P2, ...): a JSON array of what each path selects. */
static int extract_many(struct engine_func_context *ctx,
                        struct engine_json_parse *parse, int argc,
                        const struct engine_value *argv,
                        struct engine_value *out)
{
    struct engine_json_out text = {0};
    int rc = 0;

    engine__json_out_char(&text, '[');
    for (int i = 1; rc == 0 && i < argc; i++) {
        struct engine_json_node *node = NULL;
        const char *path;
        rc = engine__func_cstr(ctx, &argv[i], &path);
        if (rc == 0) {
            rc = engine__json_lookup(ctx, parse, path, NULL, &node);
        }
        if (rc != 0) {
            break;
        }
        engine__json_out_separator(&text);
        if (node != NULL) {
            engine__json_out_node(ctx, &text, node, NULL);
        } else {
            engine__json_out_raw(&text, "null", 4);
        }
    }
    if (rc != 0) {
        engine__json_out_close(&text);
        return rc;
    }
    engine__json_out_char(&text, ']');
    return engine__json_out_result(ctx, &text, out);
}

static int extract(struct engine_func_context *ctx, int argc,
                   const struct engine_value *argv, bool abbreviated,
                   bool as_json, struct engine_value *out)
{
    struct engine_json_parse parse;
    bool is_null;
    int rc;

    *out = engine__value_null();
    if (argc < 2) {
        return 0;
    }
    rc = parse_arg(ctx, &parse, &argv[0], &is_null);
    if (rc == 0 && !is_null) {
        rc = argc == 2
                 ? extract_one(ctx, &parse, &argv[1], abbreviated, as_json, out)
                 : extract_many(ctx, &parse, argc, argv, out);
    }
    engine__json_parse_close(&parse);
    return rc;
}

ENGINE__FUNC_SCALAR(json_extract)
{
    return extract(ctx, argc, argv, false, false, out);
}

ENGINE__FUNC_SCALAR(json_ptr)
{
    return extract(ctx, argc, argv, true, true, out);
}

ENGINE__FUNC_SCALAR(json_ptr2)
{
    return extract(ctx, argc, argv, true, false, out);
}

/* json(J) and json_remove(J, P...). */
ENGINE__FUNC_SCALAR(json_remove)
{
    struct engine_json_parse parse;
    bool is_null;
    int rc;

    *out = engine__value_null();
    if (argc < 1) {
        return 0;
    }
    rc = parse_arg(ctx, &parse, &argv[0], &is_null);
    for (int i = 1; rc == 0 && !is_null && i < argc; i++) {
        struct engine_json_node *node;
        const char *path;
        rc = engine__func_cstr(ctx, &argv[i], &path);
        if (rc != 0 || path == NULL) {
            is_null = true;
            break;
        }
        rc = engine__json_lookup(ctx, &parse, path, NULL, &node);
        if (rc == 0 && node != NULL) {
            node->flags |= ENGINE_JSON_REMOVE;
        }
    }
    if (rc == 0 && !is_null &&
        (parse.nodes[0].flags & ENGINE_JSON_REMOVE) == 0) {
        rc = return_json(ctx, parse.nodes, NULL, out);
    }
    engine__json_parse_close(&parse);
    return rc;
}

/* The edits of json_set (create, overwrite), json_insert (create) and
 * json_replace (overwrite). */
static int edit(struct engine_func_context *ctx, int argc,
                const struct engine_value *argv, const char *name, bool create,
                bool overwrite, struct engine_value *out)
{
    struct engine_json_parse parse;
    char msg[64];
    bool is_null;
    int rc;

    *out = engine__value_null();
    if (argc < 1) {
        return 0;
    }
    if ((argc & 1) == 0) {
        snprintf(msg, sizeof(msg), "json_%s() needs an odd number of arguments",
                 name);
        return engine__func_error(ctx, ENGINE_ESQL, msg);
    }
    rc = parse_arg(ctx, &parse, &argv[0], &is_null);
    for (int i = 1; rc == 0 && !is_null && i < argc; i += 2) {
        struct engine_json_node *node;
        const char *path;
        bool appended = false;
        rc = engine__func_cstr(ctx, &argv[i], &path);
        if (rc == 0) {
            rc = engine__json_lookup(ctx, &parse, path,
                                     create ? &appended : NULL, &node);
        }
        if (rc == 0 && node != NULL && (appended || overwrite)) {
            node->flags |= ENGINE_JSON_REPLACE;
            node->replace = (uint32_t)(i + 1);
        }
    }
    if (rc == 0 && !is_null) {
        if (parse.nodes[0].flags & ENGINE_JSON_REPLACE) {
            *out = argv[parse.nodes[0].replace];
        } else {
            rc = return_json(ctx, parse.nodes, argv, out);
        }
    }
    engine__json_parse_close(&parse);
    return rc;
}

ENGINE__FUNC_SCALAR(json_set)
{
    return edit(ctx, argc, argv, "set", true, true, out);
}

ENGINE__FUNC_SCALAR(json_insert)
{
    return edit(ctx, argc, argv, "insert", true, false, out);
}

ENGINE__FUNC_SCALAR(json_replace)
{
    return edit(ctx, argc, argv, "replace", false, true, out);
}

/* ---- json_patch ---- */

/* jsonRemoveAllNulls: flags the null members of an object, recursing
 * into member objects (not arrays). */
static void remove_all_nulls(struct engine_json_node *object)
{
    for (uint32_t i = 2; i <= object->n;
         i += engine__json_size(&object[i]) + 1) {
        if (object[i].type == ENGINE_JSON_NULL) {
            object[i].flags |= ENGINE_JSON_REMOVE;
        } else if (object[i].type == ENGINE_JSON_OBJECT) {
            remove_all_nulls(&object[i]);
        }
    }
}

static const struct engine_json_node *
merge_patch(struct engine_json_parse *target, uint32_t at,
            struct engine_json_node *patch);

/* Merges patch member i (label at patch[i]) into the target object at
 * `at`: false when an allocation failed. *last is the object that new
 * members are chained to. */
static bool merge_member(struct engine_json_parse *target, uint32_t at,
                         struct engine_json_node *patch, uint32_t i,
                         uint32_t *last)
{
    struct engine_json_node *t = &target->nodes[at];
    uint32_t j;

    for (j = 1; j < t->n; j += engine__json_size(&t[j + 1]) + 1) {
        const struct engine_json_node *found;
        if (t[j].n != patch[i].n ||
            memcmp(t[j].bytes, patch[i].bytes, patch[i].n) != 0) {
            continue;
        }
        if (t[j + 1].flags & (ENGINE_JSON_REMOVE | ENGINE_JSON_PATCH)) {
            return true;
        }
        if (patch[i + 1].type == ENGINE_JSON_NULL) {
            t[j + 1].flags |= ENGINE_JSON_REMOVE;
            return true;
        }
        found = merge_patch(target, at + j + 1, &patch[i + 1]);
        if (found == NULL) {
            return false;
        }
        t = &target->nodes[at];
        if (found != &t[j + 1]) {
            t[j + 1].patch = found;
            t[j + 1].flags |= ENGINE_JSON_PATCH;
        }
        return true;
    }
    if (patch[i + 1].type != ENGINE_JSON_NULL) {
        int64_t start = engine__json_add(target, ENGINE_JSON_OBJECT, 2, NULL);
        int64_t value;
        engine__json_add(target, ENGINE_JSON_STRING, patch[i].n,
                         patch[i].bytes);
        value = engine__json_add(target, ENGINE_JSON_TRUE, 0, NULL);
        if (value < 0) {
            return false;
        }
        remove_all_nulls(patch);
        target->nodes[*last].flags |= ENGINE_JSON_APPEND;
        target->nodes[*last].append = (uint32_t)(start - *last);
        *last = (uint32_t)start;
        target->nodes[value].flags |= ENGINE_JSON_PATCH;
        target->nodes[value].patch = &patch[i + 1];
    }
    return true;
}

/* RFC 7396 MergePatch as SQLite 3.40's jsonMergePatch(): the node to
 * output for the target at `at`, or NULL when an allocation failed. */
static const struct engine_json_node *
merge_patch(struct engine_json_parse *target, uint32_t at,
            struct engine_json_node *patch)
{
    uint32_t last = at;

    if (patch->type != ENGINE_JSON_OBJECT) {
        return patch;
    }
    if (target->nodes[at].type != ENGINE_JSON_OBJECT) {
        remove_all_nulls(patch);
        return patch;
    }
    for (uint32_t i = 1; i < patch->n;
         i += engine__json_size(&patch[i + 1]) + 1) {
        if (!merge_member(target, at, patch, i, &last)) {
            return NULL;
        }
    }
    return &target->nodes[at];
}

ENGINE__FUNC_SCALAR(json_patch)
{
    struct engine_json_parse target;
    struct engine_json_parse patch;
    const struct engine_json_node *result;
    const char *text;
    int rc;

    (void)argc;
    memset(&target, 0, sizeof(target));
    memset(&patch, 0, sizeof(patch));
    *out = engine__value_null();
    /* A NULL document or patch is a NULL result (jsonParse() of a NULL
     * text fails without a message). */
    rc = engine__func_cstr(ctx, &argv[0], &text);
    if (rc == 0 && text != NULL) {
        rc = engine__json_parse(ctx, &target, text);
        if (rc == 0) {
            rc = engine__func_cstr(ctx, &argv[1], &text);
        }
        if (rc == 0 && text != NULL) {
            rc = engine__json_parse(ctx, &patch, text);
        }
    }
    if (rc == 0 && target.nodes != NULL && patch.nodes != NULL) {
        result = merge_patch(&target, 0, patch.nodes);
        rc = result == NULL ? engine__func_error_nomem(ctx)
                            : return_json(ctx, result, NULL, out);
    }
    engine__json_parse_close(&target);
    engine__json_parse_close(&patch);
    return rc;
}
