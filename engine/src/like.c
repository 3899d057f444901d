/* SPDX-License-Identifier: MIT
 *
 * like.c: the LIKE and GLOB matchers, SQLite 3.40's patternCompare()
 * (func.c) over sized UTF-8 instead of NUL-terminated strings.
 *
 * LIKE: '%' matches any run of characters, '_' one character, ASCII
 * letters fold unless case-sensitive, and the ESCAPE character makes the
 * next pattern character literal. An ESCAPE of '%' or '_' turns that
 * wildcard off (likeFunc). GLOB: '*', '?', and '[...]' sets with ranges
 * and '^' inversion; a ']' first in a set is literal, as is a '-' first or
 * last. Both see text up to its first NUL, as SQLite's C strings end there.
 *
 * The three-valued result lets a failed match after a '%' stop the whole
 * search at once: once the text ran out under a wildcard, no later start
 * can match either (SQLITE_NOWILDCARDMATCH), which keeps '%a%b%c' linear
 * per start instead of exponential.
 */
#include "func.h"

#include <string.h>

#include "func_int.h"

enum match_result {
    MATCH = 0,
    NO_MATCH = 1,
    NO_WILDCARD_MATCH = 2, /* no match, and none with a later start */
};

struct match_info {
    uint32_t match_all;   /* '%' or '*'; 0 when disabled by the escape */
    uint32_t match_one;   /* '_' or '?'; 0 when disabled by the escape */
    uint32_t match_other; /* the escape (LIKE) or '[' (GLOB); 0 for none */
    bool is_glob;         /* match_other starts a set */
    bool no_case;         /* ASCII letters fold */
};

struct cursor {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last byte */
};

static uint32_t next_char(struct cursor *c)
{
    if (c->p < c->end && *c->p < 0x80) {
        return *c->p++;
    }
    return engine__func_utf8_read(&c->p, c->end);
}

static uint8_t peek_byte(const struct cursor *c)
{
    return c->p < c->end ? *c->p : 0;
}

static uint32_t ascii_lower(uint32_t c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static uint32_t ascii_upper(uint32_t c)
{
    return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

static enum match_result compare(struct cursor pattern, struct cursor text,
                                 const struct match_info *info);

/* "[...]" against the next text character; pattern is just past '['.
 * Returns true when it matched (pattern then past ']'). */
static bool match_set(struct cursor *pattern, struct cursor *text)
{
    uint32_t prior = 0, c, c2;
    bool seen = false, invert = false;

    c = next_char(text);
    if (c == 0) {
        return false;
    }
    c2 = next_char(pattern);
    if (c2 == '^') {
        invert = true;
        c2 = next_char(pattern);
    }
    if (c2 == ']') {
        seen = c == ']';
        c2 = next_char(pattern);
    }
    while (c2 != 0 && c2 != ']') {
        uint8_t ahead = peek_byte(pattern);
        if (c2 == '-' && ahead != ']' && ahead != 0 && prior > 0) {
            c2 = next_char(pattern);
            seen = seen || (c >= prior && c <= c2);
            prior = 0;
        } else {
            seen = seen || c == c2;
            prior = c2;
        }
        c2 = next_char(pattern);
    }
    return c2 != 0 && seen != invert;
}

/* Tries every start in text for the rest of the pattern (the first
 * character c, already read, follows a wildcard). */
static enum match_result search_from(struct cursor pattern, struct cursor text,
                                     uint32_t c, const struct match_info *info)
{
    enum match_result r;

    if (c < 0x80) {
        uint32_t upper = info->no_case ? ascii_upper(c) : c;
        uint32_t lower = info->no_case ? ascii_lower(c) : c;
        while (text.p < text.end) {
            uint8_t b = *text.p++;
            if (b == 0) {
                break;
            }
            if (b != upper && b != lower) {
                continue;
            }
            r = compare(pattern, text, info);
            if (r != NO_MATCH) {
                return r;
            }
        }
        return NO_WILDCARD_MATCH;
    }
    while (text.p < text.end) {
        if (next_char(&text) != c) {
            continue;
        }
        r = compare(pattern, text, info);
        if (r != NO_MATCH) {
            return r;
        }
    }
    return NO_WILDCARD_MATCH;
}

/* The pattern is just past a match_all: skip further wildcards, then
 * search (patternCompare's "*" branch). */
static enum match_result match_wildcard(struct cursor pattern,
                                        struct cursor text,
                                        const struct match_info *info)
{
    uint32_t c;

    while ((c = next_char(&pattern)) == info->match_all ||
           (c == info->match_one && info->match_one != 0)) {
        if (c == info->match_one && next_char(&text) == 0) {
            return NO_WILDCARD_MATCH;
        }
    }
    if (c == 0) {
        return MATCH;
    }
    if (c == info->match_other) {
        if (info->is_glob) {
            struct cursor set = {pattern.p - 1, pattern.end};
            while (text.p < text.end) {
                enum match_result r = compare(set, text, info);
                if (r != NO_MATCH) {
                    return r;
                }
                text.p = engine__func_utf8_skip(text.p, text.end);
            }
            return NO_WILDCARD_MATCH;
        }
        c = next_char(&pattern);
        if (c == 0) {
            return NO_WILDCARD_MATCH;
        }
    }
    return search_from(pattern, text, c, info);
}

static enum match_result compare(struct cursor pattern, struct cursor text,
                                 const struct match_info *info)
{
    const uint8_t *escaped = NULL; /* one past the last escaped char */
    uint32_t c, c2;

    while ((c = next_char(&pattern)) != 0) {
        if (c == info->match_all) {
            return match_wildcard(pattern, text, info);
        }
        if (c == info->match_other) {
            if (info->is_glob) {
                if (!match_set(&pattern, &text)) {
                    return NO_MATCH;
                }
                continue;
            }
            c = next_char(&pattern);
            if (c == 0) {
                return NO_MATCH;
            }
            escaped = pattern.p;
        }
        c2 = next_char(&text);
        if (c == c2) {
            continue;
        }
        if (info->no_case && c < 0x80 && c2 < 0x80 &&
            ascii_lower(c) == ascii_lower(c2)) {
            continue;
        }
        if (c == info->match_one && pattern.p != escaped && c2 != 0) {
            continue;
        }
        return NO_MATCH;
    }
    return text.p >= text.end ? MATCH : NO_MATCH;
}

static struct cursor cursor_of(const uint8_t *bytes, size_t size)
{
    struct cursor c = {bytes, bytes + engine__func_cstr_size(bytes, size)};
    return c;
}

bool engine__like_match(const uint8_t *pattern, size_t pattern_size,
                        const uint8_t *text, size_t text_size, uint32_t escape,
                        bool case_sensitive)
{
    struct match_info info = {'%', '_', escape, false, !case_sensitive};

    ASSERT(pattern != NULL || pattern_size == 0);
    ASSERT(text != NULL || text_size == 0);
    if (escape == '%') {
        info.match_all = 0;
    }
    if (escape == '_') {
        info.match_one = 0;
    }
    return compare(cursor_of(pattern, pattern_size), cursor_of(text, text_size),
                   &info) == MATCH;
}

bool engine__glob_match(const uint8_t *pattern, size_t pattern_size,
                        const uint8_t *text, size_t text_size)
{
    static const struct match_info info = {'*', '?', '[', true, false};

    ASSERT(pattern != NULL || pattern_size == 0);
    ASSERT(text != NULL || text_size == 0);
    return compare(cursor_of(pattern, pattern_size), cursor_of(text, text_size),
                   &info) == MATCH;
}
