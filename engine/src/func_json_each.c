/* SPDX-License-Identifier: MIT
 *
 * func_json_each.c: the rows of json_each() and json_tree() (tvf.h), as
 * SQLite 3.40's json.c makes them (jsonEachFilter, jsonEachNext,
 * jsonEachColumn), over func_json.h's node array, which is SQLite's own
 * layout: so the id column, an index into that array, is SQLite's.
 *
 * json_each walks the children of the root (the document, or the node
 * PATH names); json_tree walks the root and all its descendants, each
 * object member at its label node. json_tree keeps, like SQLite, each
 * node's parent (aUp) and each array's index of the child being visited
 * (JsonNode.u.iKey): an array above the root was never visited and shows
 * index 0 in fullkey and path, which is SQLite's answer too.
 */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"
#include "func_json.h"
#include "tvf.h"

/* Output columns (SQLite's JEACH_*), then the rowid. */
enum {
    COL_KEY,
    COL_VALUE,
    COL_TYPE,
    COL_ATOM,
    COL_ID,
    COL_PARENT,
    COL_FULLKEY,
    COL_PATH,
    COL_JSON,
    COL_ROOT,
    COL_ROWID,
};

static const char *const type_names[] = {
    "null", "true", "false", "integer", "real", "text", "array", "object",
};

/* SQLite's JsonEachCursor. */
struct cursor {
    bool recursive;   /* json_tree */
    const char *json; /* the document text, or NULL: no rows */
    const char *root; /* PATH as given, or NULL */
    struct engine_json_parse parse;
    uint32_t *up;  /* json_tree: each node's parent (aUp) */
    uint32_t *key; /* json_tree: per array node, the child's index */
    uint32_t begin;
    uint32_t i;
    uint32_t end;
    uint8_t type; /* eType */
    int64_t rowid;
};

struct each_state {
    struct cursor cursor;
    struct engine_expr **args;
    size_t arg_count;
    const struct engine_batch *bound; /* the row the arguments read */
    uint32_t bound_row;
    struct engine_arena args_arena; /* the arguments' texts */
};

static void cursor_reset(struct cursor *c)
{
    engine__json_parse_close(&c->parse);
    common_free(c->up);
    common_free(c->key);
    c->up = NULL;
    c->key = NULL;
    c->json = NULL;
    c->root = NULL;
    c->begin = c->i = c->end = 0;
    c->type = 0;
    c->rowid = 0;
}

/* jsonParseFindParents(): up[] for every node, key[] zeroed. */
static int find_parents(struct cursor *c)
{
    const struct engine_json_node *nodes = c->parse.nodes;
    uint32_t count = c->parse.count;

    c->up = common_calloc(count + 1, sizeof(*c->up));
    c->key = common_calloc(count + 1, sizeof(*c->key));
    if (c->up == NULL || c->key == NULL) {
        return COMMON_ENOMEM;
    }
    for (uint32_t i = 0; i < count; i++) {
        const struct engine_json_node *node = &nodes[i];

        if (node->type == ENGINE_JSON_ARRAY) {
            for (uint32_t j = 1; j <= node->n;
                 j += engine__json_size(&nodes[i + j])) {
                c->up[i + j] = i;
            }
        } else if (node->type == ENGINE_JSON_OBJECT) {
            for (uint32_t j = 1; j <= node->n;
                 j += engine__json_size(&nodes[i + j + 1]) + 1) {
                c->up[i + j] = i;
                c->up[i + j + 1] = i;
            }
        }
    }
    return 0;
}

/* jsonEachFilter() after the arguments: the first row's position. */
static int cursor_start(struct engine_func_context *ctx, struct cursor *c)
{
    struct engine_json_node *node = NULL;
    uint32_t at;
    int rc = engine__json_parse(ctx, &c->parse, c->json);

    if (rc == 0 && c->recursive) {
        rc = find_parents(c);
        if (rc != 0) {
            return engine__func_error_nomem(ctx);
        }
    }
    if (rc == 0 && c->root != NULL) {
        rc = engine__json_lookup(ctx, &c->parse, c->root, NULL, &node);
    } else if (rc == 0) {
        node = &c->parse.nodes[0];
    }
    if (rc != 0 || node == NULL) {
        c->i = c->end = 0;
        return rc;
    }
    at = (uint32_t)(node - c->parse.nodes);
    c->begin = c->i = at;
    c->type = node->type;
    if (c->type < ENGINE_JSON_ARRAY) {
        c->end = at + 1;
        return 0;
    }
    c->end = at + node->n + 1;
    if (!c->recursive) {
        c->i++;
        return 0;
    }
    c->key[at] = 0;
    c->type = c->parse.nodes[c->up[at]].type;
    if (at > 0 && (c->parse.nodes[at - 1].flags & ENGINE_JSON_LABEL) != 0) {
        c->i--;
    }
    return 0;
}

/* jsonEachNext(). */
static void cursor_next(struct cursor *c)
{
    const struct engine_json_node *nodes = c->parse.nodes;

    if (c->recursive) {
        if ((nodes[c->i].flags & ENGINE_JSON_LABEL) != 0) {
            c->i++;
        }
        c->i++;
        c->rowid++;
        if (c->i < c->end) {
            uint32_t up = c->up[c->i];

            c->type = nodes[up].type;
            if (c->type == ENGINE_JSON_ARRAY) {
                c->key[up] = up == c->i - 1 ? 0 : c->key[up] + 1;
            }
        }
        return;
    }
    if (c->type == ENGINE_JSON_ARRAY) {
        c->i += engine__json_size(&nodes[c->i]);
        c->rowid++;
    } else if (c->type == ENGINE_JSON_OBJECT) {
        c->i += 1 + engine__json_size(&nodes[c->i + 1]);
        c->rowid++;
    } else {
        c->i = c->end;
    }
}

/* ---- columns (jsonEachColumn) ---- */

static bool ascii_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool ascii_alnum(char ch)
{
    return ascii_alpha(ch) || (ch >= '0' && ch <= '9');
}

/* jsonAppendObjectPathElement(): ".name" when the label is a letter
 * then letters and digits, else ."label" as written. */
static void out_label(struct engine_json_out *out,
                      const struct engine_json_node *label)
{
    const char *z = label->bytes;
    uint32_t n = label->n;
    uint32_t j = 2;

    if (n > 2 && ascii_alpha(z[1])) {
        while (j < n - 1 && ascii_alnum(z[j])) {
            j++;
        }
        if (j == n - 1) {
            z++;
            n -= 2;
        }
    }
    engine__json_out_char(out, '.');
    engine__json_out_raw(out, z, n);
}

static void out_index(struct engine_json_out *out, int64_t index)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "[%d]", (int)index);

    engine__json_out_raw(out, text, (size_t)n);
}

/* jsonEachComputePath(): the path of node i of a json_tree. */
static void out_path(const struct cursor *c, struct engine_json_out *out,
                     uint32_t i)
{
    const struct engine_json_node *node = &c->parse.nodes[i];
    uint32_t up;

    if (i == 0) {
        engine__json_out_char(out, '$');
        return;
    }
    up = c->up[i];
    out_path(c, out, up);
    if (c->parse.nodes[up].type == ENGINE_JSON_ARRAY) {
        out_index(out, c->key[up]);
        return;
    }
    if ((node->flags & ENGINE_JSON_LABEL) == 0) {
        node--;
    }
    out_label(out, node);
}

/* The text out holds as a TEXT value (no JSON subtype) in ctx->arena. */
static int out_text(struct engine_func_context *ctx,
                    struct engine_json_out *out, struct engine_value *v)
{
    char *bytes = NULL;
    int rc = out->error;

    if (rc == 0 && out->size > 0) {
        bytes = engine__arena_memdup(ctx->arena, out->bytes, out->size);
        rc = bytes == NULL ? COMMON_ENOMEM : 0;
    }
    engine__json_out_close(out);
    if (rc != 0) {
        return engine__func_error_nomem(ctx);
    }
    *v = engine__value_text(bytes != NULL ? bytes : "", out->size);
    return 0;
}

static int column_key(struct engine_func_context *ctx, const struct cursor *c,
                      struct engine_value *v)
{
    const struct engine_json_node *node = &c->parse.nodes[c->i];

    if (c->i == 0) {
        return 0;
    }
    if (c->type == ENGINE_JSON_OBJECT) {
        return engine__json_return(ctx, node, v);
    }
    if (c->type == ENGINE_JSON_ARRAY && c->recursive && c->rowid != 0) {
        *v = engine__value_int(c->key[c->up[c->i]]);
    } else if (c->type == ENGINE_JSON_ARRAY && !c->recursive) {
        *v = engine__value_int(c->rowid);
    }
    return 0;
}

static int column_fullkey(struct engine_func_context *ctx,
                          const struct cursor *c, struct engine_value *v)
{
    struct engine_json_out out = {0};
    const struct engine_json_node *node = &c->parse.nodes[c->i];

    if (c->recursive) {
        out_path(c, &out, c->i);
        return out_text(ctx, &out, v);
    }
    if (c->root != NULL) {
        engine__json_out_raw(&out, c->root, strlen(c->root));
    } else {
        engine__json_out_char(&out, '$');
    }
    if (c->type == ENGINE_JSON_ARRAY) {
        out_index(&out, c->rowid);
    } else if (c->type == ENGINE_JSON_OBJECT) {
        out_label(&out, node);
    }
    return out_text(ctx, &out, v);
}

static struct engine_value root_value(const struct cursor *c)
{
    return c->root != NULL ? engine__value_text(c->root, strlen(c->root))
                           : engine__value_text("$", 1);
}

static int column_value(struct engine_func_context *ctx, const struct cursor *c,
                        int column, struct engine_value *v)
{
    const struct engine_json_node *node = &c->parse.nodes[c->i];
    const struct engine_json_node *value =
        (node->flags & ENGINE_JSON_LABEL) != 0 ? node + 1 : node;
    struct engine_json_out out = {0};

    *v = engine__value_null();
    switch (column) {
    case COL_KEY:
        return column_key(ctx, c, v);
    case COL_VALUE:
        return engine__json_return(ctx, value, v);
    case COL_TYPE:
        *v = engine__value_text(type_names[value->type],
                                strlen(type_names[value->type]));
        return 0;
    case COL_ATOM:
        return value->type >= ENGINE_JSON_ARRAY
                   ? 0
                   : engine__json_return(ctx, value, v);
    case COL_ID:
        *v = engine__value_int((int64_t)(value - c->parse.nodes));
        return 0;
    case COL_PARENT:
        if (c->i > c->begin && c->recursive) {
            *v = engine__value_int(c->up[c->i]);
        }
        return 0;
    case COL_FULLKEY:
        return column_fullkey(ctx, c, v);
    case COL_PATH:
        if (c->recursive) {
            out_path(c, &out, c->up[c->i]);
            return out_text(ctx, &out, v);
        }
        *v = root_value(c); /* json_each's path is its root */
        return 0;
    case COL_ROOT:
        *v = root_value(c);
        return 0;
    case COL_JSON:
        *v = engine__value_text(c->json, strlen(c->json));
        return 0;
    default:
        *v = engine__value_int(c->rowid);
        return 0;
    }
}

/* ---- the operator ---- */

/* The arguments' values: over the bound row, or over no row. */
static int eval_args(struct engine_op *op, struct engine_exec *exec,
                     struct engine_value *values)
{
    struct each_state *state = op->state;
    struct engine_eval eval = {.exec = exec, .arena = &state->args_arena};
    struct engine_batch one = {.count = 1, .selected = 1};
    uint32_t row = 0;
    const struct engine_batch *batch = &one;

    if (state->bound != NULL) {
        one = *state->bound;
        row = state->bound_row;
        one.selection = &row;
        one.selected = 1;
    }
    for (size_t a = 0; a < state->arg_count; a++) {
        const struct engine_vector *result;
        int rc = engine__expr_eval(state->args[a], &eval, batch, &result);

        if (rc != 0) {
            return rc;
        }
        values[a] = engine__vector_get(result, row);
    }
    return 0;
}

/* jsonEachFilter(): the arguments as texts, then the parse. */
static int each_open(struct engine_op *op, struct engine_exec *exec)
{
    struct each_state *state = op->state;
    struct cursor *c = &state->cursor;
    struct engine_value values[2];
    struct engine_eval eval = {.exec = exec, .arena = &state->args_arena};
    struct engine_func_context ctx;
    char errmsg[256] = "";
    int rc;

    cursor_reset(c);
    engine__arena_reset(&state->args_arena);
    if (state->arg_count == 0) {
        return 0; /* no json constraint: no rows (idxNum 0) */
    }
    rc = eval_args(op, exec, values);
    if (rc != 0) {
        return rc;
    }
    engine__func_context_init(&ctx, &eval, ENGINE_COLLATION_BINARY, errmsg,
                              sizeof(errmsg));
    rc = engine__func_cstr(&ctx, &values[0], &c->json);
    if (rc == 0 && state->arg_count > 1 && c->json != NULL) {
        rc = engine__func_cstr(&ctx, &values[1], &c->root);
        if (c->root == NULL) {
            c->json = NULL; /* a NULL PATH: no rows */
        }
    }
    if (rc == 0 && c->json != NULL) {
        rc = cursor_start(&ctx, c);
    }
    if (rc != 0) {
        cursor_reset(c);
        return engine__error(exec, rc, "%s",
                             errmsg[0] ? errmsg : engine_strerror(rc));
    }
    return 0;
}

static int each_row(struct engine_op *op, struct engine_func_context *ctx,
                    uint32_t n)
{
    struct each_state *state = op->state;

    for (int col = 0; col <= COL_ROWID; col++) {
        struct engine_value v;
        int rc = column_value(ctx, &state->cursor, col, &v);

        rc =
            rc != 0 ? rc : engine__vector_set(&op->batch.columns[col], n, n, v);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int each_next(struct engine_op *op, struct engine_exec *exec,
                     struct engine_batch **out)
{
    struct each_state *state = op->state;
    struct cursor *c = &state->cursor;
    uint32_t most = exec->row_at_a_time ? 1 : ENGINE__BATCH_SIZE;
    struct engine_eval eval = {.exec = exec, .arena = &op->arena};
    struct engine_func_context ctx;
    char errmsg[256] = "";
    uint32_t n = 0;

    engine__arena_reset(&op->arena);
    engine__func_context_init(&ctx, &eval, ENGINE_COLLATION_BINARY, errmsg,
                              sizeof(errmsg));
    for (size_t col = 0; col < op->column_count; col++) {
        op->batch.columns[col].kind = ENGINE_VECTOR_VALUES;
    }
    while (c->json != NULL && c->i < c->end && n < most) {
        int rc = each_row(op, &ctx, n);

        if (rc != 0) {
            return engine__error(exec, rc, "%s",
                                 errmsg[0] ? errmsg : engine_strerror(rc));
        }
        cursor_next(c);
        n++;
    }
    op->batch.count = n;
    op->batch.selected = n;
    op->batch.selection = NULL;
    *out = n > 0 ? &op->batch : NULL;
    return 0;
}

static void each_destroy(struct engine_op *op)
{
    struct each_state *state = op->state;

    cursor_reset(&state->cursor);
    engine__arena_close(&state->args_arena);
    engine__op_destroy_default(op);
}

static const struct engine_op_ops each_ops = {
    .open = each_open,
    .next = each_next,
    .destroy = each_destroy,
};

struct engine_op *engine__op_json_each(struct engine_stmt *stmt, bool recursive)
{
    struct engine_op *op =
        engine__op_new(stmt, &each_ops, NULL, sizeof(struct each_state),
                       ENGINE__TVF_COLUMNS + 1, true);
    struct each_state *state;

    if (op == NULL) {
        return NULL;
    }
    state = op->state;
    state->cursor.recursive = recursive;
    engine__arena_init(&state->args_arena);
    return op;
}

void engine__op_json_each_set_args(struct engine_op *op,
                                   struct engine_expr **args, size_t arg_count)
{
    struct each_state *state = op->state;

    ASSERT(op->ops == &each_ops && arg_count <= 2);
    state->args = args;
    state->arg_count = arg_count;
}

void engine__op_json_each_bind(struct engine_op *op,
                               const struct engine_batch *batch, uint32_t row)
{
    struct each_state *state = op->state;

    ASSERT(op->ops == &each_ops);
    state->bound = batch;
    state->bound_row = row;
}
