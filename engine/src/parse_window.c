/* SPDX-License-Identifier: MIT
 *
 * parse_window.c: the window grammar of SQLite 3.40's parse.y: a call's
 * "OVER (window)" or "OVER name", and a SELECT's "WINDOW name AS (window),
 * ...". A window is
 *
 *   [base] [PARTITION BY nexprlist] [ORDER BY sortlist] [frame]
 *   frame ::= RANGE|ROWS|GROUPS frame_bound_s [EXCLUDE ...]
 *           | RANGE|ROWS|GROUPS BETWEEN frame_bound_s AND frame_bound_e
 *             [EXCLUDE NO OTHERS | CURRENT ROW | GROUP | TIES]
 *
 * A single bound is the start, the end being CURRENT ROW. As in parse.y,
 * UNBOUNDED FOLLOWING cannot start a frame nor UNBOUNDED PRECEDING end
 * one (a syntax error), and sqlite3WindowAlloc() refuses a start later
 * than the end ("unsupported frame specification"). Everything else
 * (offsets, names, inheritance) is checked by the planner (plan_window.c).
 */
#include <string.h>

#include "common.h"
#include "parse_int.h"

/* A base window name: an nm that is not a keyword starting a window's
 * clauses (Lemon shifts those as keywords, not as fallback names). */
static bool is_base_name(const struct parser *p)
{
    return engine__parse_is_nm(p) && !engine__parse_is(p, TOKEN_PARTITION) &&
           !engine__parse_is(p, TOKEN_ORDER) &&
           !engine__parse_is(p, TOKEN_RANGE) &&
           !engine__parse_is(p, TOKEN_ROWS) &&
           !engine__parse_is(p, TOKEN_GROUPS);
}

/* frame_bound_s (is_start) or frame_bound_e. */
static int bound_parse(struct parser *p, struct ast_frame_bound *bound,
                       bool is_start)
{
    int rc;

    if (engine__parse_is(p, TOKEN_UNBOUNDED) &&
        (engine__parse_peek(p, 1) == TOKEN_PRECEDING ||
         engine__parse_peek(p, 1) == TOKEN_FOLLOWING)) {
        engine__parse_advance(p);
        if (engine__parse_accept(p, is_start ? TOKEN_PRECEDING
                                             : TOKEN_FOLLOWING)) {
            bound->kind = is_start ? AST_BOUND_UNBOUNDED_PRECEDING
                                   : AST_BOUND_UNBOUNDED_FOLLOWING;
            return 0;
        }
        return engine__parse_syntax_error(p);
    }
    if (engine__parse_is(p, TOKEN_CURRENT) &&
        engine__parse_peek(p, 1) == TOKEN_ROW) {
        engine__parse_advance(p);
        engine__parse_advance(p);
        bound->kind = AST_BOUND_CURRENT_ROW;
        return 0;
    }
    rc = engine__parse_expr(p, &bound->offset);
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_PRECEDING)) {
        bound->kind = AST_BOUND_PRECEDING;
    } else if (engine__parse_accept(p, TOKEN_FOLLOWING)) {
        bound->kind = AST_BOUND_FOLLOWING;
    } else {
        return engine__parse_syntax_error(p);
    }
    return 0;
}

static int exclude_parse(struct parser *p, struct ast_window *w)
{
    if (!engine__parse_accept(p, TOKEN_EXCLUDE)) {
        return 0;
    }
    if (engine__parse_accept(p, TOKEN_NO)) {
        w->exclude = AST_EXCLUDE_NO_OTHERS;
        return engine__parse_expect(p, TOKEN_OTHERS);
    }
    if (engine__parse_accept(p, TOKEN_CURRENT)) {
        w->exclude = AST_EXCLUDE_CURRENT_ROW;
        return engine__parse_expect(p, TOKEN_ROW);
    }
    if (engine__parse_accept(p, TOKEN_GROUP)) {
        w->exclude = AST_EXCLUDE_GROUP;
        return 0;
    }
    if (engine__parse_accept(p, TOKEN_TIES)) {
        w->exclude = AST_EXCLUDE_TIES;
        return 0;
    }
    return engine__parse_syntax_error(p);
}

/* sqlite3WindowAlloc(): the start may not come after the end in the
 * order UNBOUNDED PRECEDING, PRECEDING, CURRENT ROW, FOLLOWING. */
static bool frame_supported(const struct ast_window *w)
{
    enum ast_bound_kind s = w->start.kind;
    enum ast_bound_kind e = w->end.kind;

    return !((s == AST_BOUND_CURRENT_ROW && e == AST_BOUND_PRECEDING) ||
             (s == AST_BOUND_FOLLOWING &&
              (e == AST_BOUND_PRECEDING || e == AST_BOUND_CURRENT_ROW)));
}

static int frame_parse(struct parser *p, struct ast_window *w)
{
    size_t offset = p->tok.offset;
    int rc;

    if (engine__parse_accept(p, TOKEN_RANGE)) {
        w->frame_type = AST_FRAME_RANGE;
    } else if (engine__parse_accept(p, TOKEN_ROWS)) {
        w->frame_type = AST_FRAME_ROWS;
    } else if (engine__parse_accept(p, TOKEN_GROUPS)) {
        w->frame_type = AST_FRAME_GROUPS;
    } else {
        return 0;
    }
    w->has_frame = true;
    if (engine__parse_accept(p, TOKEN_BETWEEN)) {
        rc = bound_parse(p, &w->start, true);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_AND);
        }
        if (rc == 0) {
            rc = bound_parse(p, &w->end, false);
        }
    } else {
        rc = bound_parse(p, &w->start, true);
        w->end.kind = AST_BOUND_CURRENT_ROW;
    }
    if (rc == 0) {
        rc = exclude_parse(p, w);
    }
    if (rc == 0 && !frame_supported(w)) {
        rc = engine__parse_error(p, offset, "unsupported frame specification");
    }
    return rc;
}

/* The "window" inside parentheses, up to (not including) the ')'. */
static int window_body_parse(struct parser *p, struct ast_window *w)
{
    int rc = 0;

    w->position = p->tok.offset;
    w->end.kind = AST_BOUND_CURRENT_ROW;
    if (is_base_name(p)) {
        rc = engine__parse_nm(p, &w->base);
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_PARTITION)) {
        rc = engine__parse_expect(p, TOKEN_BY);
        if (rc == 0) {
            rc = engine__parse_expr_list(p, &w->partition_by);
        }
    }
    if (rc == 0 && engine__parse_accept(p, TOKEN_ORDER)) {
        rc = engine__parse_expect(p, TOKEN_BY);
        if (rc == 0) {
            rc = engine__parse_order_by(p, &w->order_by, &w->order_by_count);
        }
    }
    return rc == 0 ? frame_parse(p, w) : rc;
}

int engine__parse_over(struct parser *p, struct ast_window **out)
{
    struct ast_window *w = engine__parse_alloc(p, sizeof(*w));
    int rc;

    if (w == NULL) {
        return COMMON_ENOMEM;
    }
    engine__parse_advance(p); /* OVER */
    if (!engine__parse_accept(p, TOKEN_LP)) {
        w->position = p->tok.offset;
        w->is_reference = true;
        rc = engine__parse_nm(p, &w->base);
    } else {
        rc = window_body_parse(p, w);
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
    }
    *out = w;
    return rc;
}

int engine__parse_window_clause(struct parser *p, struct ast_select *s)
{
    struct parse_list list = {0};

    engine__parse_advance(p); /* WINDOW */
    do {
        struct ast_window w = {0};
        int rc = engine__parse_nm(p, &w.name);

        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_AS);
        }
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_LP);
        }
        if (rc == 0) {
            rc = window_body_parse(p, &w);
        }
        if (rc == 0) {
            rc = engine__parse_expect(p, TOKEN_RP);
        }
        if (rc == 0) {
            rc = engine__parse_list_push(p, &list, &w, sizeof(w));
        }
        if (rc != 0) {
            return rc;
        }
    } while (engine__parse_accept(p, TOKEN_COMMA));
    s->windows = list.items;
    s->window_count = list.count;
    return 0;
}
