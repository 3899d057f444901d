/* SPDX-License-Identifier: MIT
 *
 * shell_complete.c: statement boundaries by the state machine of SQLite's
 * complete.c (sqlite3_complete()), so that the shell waits for the same
 * continuation lines sqlite3 waits for.
 *
 * Text is read as tokens: ';', white space (comments count as white
 * space), the keywords EXPLAIN, CREATE, TEMP/TEMPORARY, TRIGGER and END,
 * and anything else. The table below moves between eight states; a ';'
 * that leads to state START ends a statement. Inside CREATE TRIGGER (states
 * TRIGGER, SEMI, END) a ';' only ends the statement after END. An
 * unterminated string, quoted identifier or C-style comment makes the text
 * incomplete; a -- comment runs to the end of its line.
 */
#include "shell_complete.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common.h"

enum complete_token {
    TOKEN_SEMI = 0,
    TOKEN_WS = 1,
    TOKEN_OTHER = 2,
    TOKEN_EXPLAIN = 3,
    TOKEN_CREATE = 4,
    TOKEN_TEMP = 5,
    TOKEN_TRIGGER = 6,
    TOKEN_END = 7,
    TOKEN_UNTERMINATED = 8, /* a string, identifier or comment runs off */
};

enum complete_state {
    STATE_INVALID = 0,
    STATE_START = 1,
};

/* SQLite complete.c, trans[state][token], with triggers. */
static const unsigned char transitions[8][8] = {
    /* SEMI WS OTHER EXPLAIN CREATE TEMP TRIGGER END */
    {1, 0, 2, 3, 4, 2, 2, 2}, /* 0 INVALID */
    {1, 1, 2, 3, 4, 2, 2, 2}, /* 1 START */
    {1, 2, 2, 2, 2, 2, 2, 2}, /* 2 NORMAL */
    {1, 3, 3, 2, 4, 2, 2, 2}, /* 3 EXPLAIN */
    {1, 4, 2, 2, 2, 4, 5, 2}, /* 4 CREATE */
    {6, 5, 5, 5, 5, 5, 5, 5}, /* 5 TRIGGER */
    {6, 6, 5, 5, 5, 5, 5, 7}, /* 6 SEMI */
    {1, 7, 5, 5, 5, 5, 5, 5}, /* 7 END */
};

/* SQLite's IdChar(): letters, digits, '_', '$' and bytes >= 0x80. */
static bool is_id_char(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

static int keyword_token(const char *word, size_t size)
{
    static const struct {
        const char *word;
        int token;
    } keywords[] = {
        {"create", TOKEN_CREATE}, {"trigger", TOKEN_TRIGGER},
        {"temp", TOKEN_TEMP},     {"temporary", TOKEN_TEMP},
        {"end", TOKEN_END},       {"explain", TOKEN_EXPLAIN},
    };
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
        const char *keyword = keywords[i].word;
        if (strlen(keyword) == size && strncasecmp(word, keyword, size) == 0) {
            return keywords[i].token;
        }
    }
    return TOKEN_OTHER;
}

/* Offset of the first close at or after from, or size. */
static size_t find_byte(const char *sql, size_t size, size_t from, char close)
{
    while (from < size && sql[from] != close) {
        from++;
    }
    return from;
}

static size_t find_comment_end(const char *sql, size_t size, size_t from)
{
    while (from + 1 < size && !(sql[from] == '*' && sql[from + 1] == '/')) {
        from++;
    }
    return from + 1 < size ? from + 1 : size;
}

/* Reads the token at *pos, leaving *pos on its last byte. */
static int next_token(const char *sql, size_t size, size_t *pos)
{
    size_t i = *pos;
    char c = sql[i];
    char after = i + 1 < size ? sql[i + 1] : '\0';
    if (c == ';') {
        return TOKEN_SEMI;
    }
    if (c == ' ' || c == '\r' || c == '\t' || c == '\n' || c == '\f') {
        return TOKEN_WS;
    }
    if (c == '/' && after == '*') {
        *pos = find_comment_end(sql, size, i + 2);
        return *pos < size ? TOKEN_WS : TOKEN_UNTERMINATED;
    }
    if (c == '-' && after == '-') {
        *pos = find_byte(sql, size, i, '\n');
        return TOKEN_WS;
    }
    if (c == '[' || c == '`' || c == '"' || c == '\'') {
        *pos = find_byte(sql, size, i + 1, c == '[' ? ']' : c);
        return *pos < size ? TOKEN_OTHER : TOKEN_UNTERMINATED;
    }
    if (!is_id_char((unsigned char)c)) {
        return TOKEN_OTHER;
    }
    size_t end = i + 1;
    while (end < size && is_id_char((unsigned char)sql[end])) {
        end++;
    }
    *pos = end - 1;
    return keyword_token(&sql[i], end - i);
}

/* Runs the machine over sql. Returns the final state, or STATE_INVALID for
 * text that runs off inside a string or comment; with stop_at_end, stops at
 * the first ';' that ends a statement and stores its end in *end. */
static int scan(const char *sql, size_t size, bool stop_at_end, size_t *end)
{
    int state = STATE_INVALID;
    if (size == 0) {
        return state;
    }
    size = strnlen(sql, size); /* as sqlite3_complete(), stop at a NUL */
    for (size_t pos = 0; pos < size; pos++) {
        int token = next_token(sql, size, &pos);
        if (token == TOKEN_UNTERMINATED) {
            return STATE_INVALID;
        }
        if (pos >= size) {
            /* A -- comment ran to the end: sqlite3 answers state==1. */
            return state;
        }
        state = transitions[state][token];
        if (stop_at_end && token == TOKEN_SEMI && state == STATE_START) {
            *end = pos + 1;
            return state;
        }
    }
    return state;
}

bool shell_is_complete(const char *sql, size_t size)
{
    ASSERT(sql != NULL || size == 0);
    return scan(sql, size, false, NULL) == STATE_START;
}

size_t shell_statement_size(const char *sql, size_t size)
{
    ASSERT(sql != NULL || size == 0);
    size_t end = size;
    (void)scan(sql, size, true, &end);
    return end;
}
