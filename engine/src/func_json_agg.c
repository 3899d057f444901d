/* SPDX-License-Identifier: MIT
 *
 * func_json_agg.c: the aggregates json_group_array(X) and
 * json_group_object(NAME, X) of SQLite 3.40 (json1.html; src/json.c
 * jsonArrayStep, jsonObjectStep). Each row appends its value as
 * json_array() would (NULL as null, JSON-subtyped text as JSON, a BLOB
 * is an error); a NULL name adds nothing before its ':', as SQLite's
 * string appender does with no text. An empty group gives [] or {}. The
 * result has the JSON subtype.
 */
#include "func_json.h"

#include <string.h>

#include "common.h"

struct json_group_state {
    struct engine_json_out text; /* "[" or "{" and the members so far */
    bool started;                /* the opening bracket was written */
};

static void json_group_init(void *state)
{
    memset(state, 0, sizeof(struct json_group_state));
}

static int json_group_error(struct engine_func_context *ctx,
                            struct json_group_state *s)
{
    if (s->text.error == COMMON_ENOMEM) {
        return engine__func_error_nomem(ctx);
    }
    if (s->text.error == ENGINE_ETOOBIG) {
        return engine__func_error_toobig(ctx);
    }
    return s->text.error;
}

/* Opens the group's text or adds the separator before a next member. */
static void json_group_next(struct json_group_state *s, char open)
{
    if (!s->started) {
        s->started = true;
        engine__json_out_char(&s->text, open);
    } else if (s->text.size > 1) {
        engine__json_out_char(&s->text, ',');
    }
}

static int json_array_step(struct engine_func_context *ctx, void *state,
                           int argc, const struct engine_value *argv)
{
    struct json_group_state *s = state;

    (void)argc;
    json_group_next(s, '[');
    engine__json_out_value(ctx, &s->text, &argv[0]);
    return json_group_error(ctx, s);
}

static int json_object_step(struct engine_func_context *ctx, void *state,
                            int argc, const struct engine_value *argv)
{
    struct json_group_state *s = state;
    const uint8_t *bytes;
    size_t size;
    bool is_null;

    (void)argc;
    json_group_next(s, '{');
    if (engine__func_text(ctx, &argv[0], &bytes, &size, &is_null) != 0) {
        return COMMON_ENOMEM;
    }
    engine__json_out_string(&s->text, (const char *)bytes, size);
    engine__json_out_char(&s->text, ':');
    engine__json_out_value(ctx, &s->text, &argv[1]);
    return json_group_error(ctx, s);
}

static int json_group_final(struct engine_func_context *ctx,
                            struct json_group_state *s, const char *empty,
                            struct engine_value *out)
{
    if (!s->started) {
        *out = engine__value_text(empty, 2);
        out->json_subtype = true;
        return 0;
    }
    engine__json_out_char(&s->text, empty[1]);
    return engine__json_out_result(ctx, &s->text, out);
}

static int json_array_final(struct engine_func_context *ctx, void *state,
                            struct engine_value *out)
{
    return json_group_final(ctx, state, "[]", out);
}

static int json_object_final(struct engine_func_context *ctx, void *state,
                             struct engine_value *out)
{
    return json_group_final(ctx, state, "{}", out);
}

static void json_group_destroy(void *state)
{
    struct json_group_state *s = state;

    engine__json_out_close(&s->text);
}

const struct engine_aggregate_def engine__func_json_aggregates[] = {
    {"json_group_array", 1, 1, sizeof(struct json_group_state), json_group_init,
     json_array_step, json_array_final, json_group_destroy, NULL, NULL, NULL,
     false},
    {"json_group_object", 2, 2, sizeof(struct json_group_state),
     json_group_init, json_object_step, json_object_final, json_group_destroy,
     NULL, NULL, NULL, false},
};

const size_t engine__func_json_aggregate_count =
    sizeof(engine__func_json_aggregates) /
    sizeof(engine__func_json_aggregates[0]);
