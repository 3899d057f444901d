/* SPDX-License-Identifier: MIT
 *
 * tokenize.c: SQLite's tokenizer, rewritten from the rules of its
 * src/tokenize.c (sqlite3GetToken) and tool/mkkeywordhash.c (3.40).
 *
 * The rules quoted from SQLite:
 *   - identifier characters are letters, digits, '_', '$' and every byte
 *     >= 0x80 (IdChar); an identifier made only of letters and '_' may be a
 *     keyword, looked up case-insensitively;
 *   - "x", `x` and [x] are identifiers; 'x' is a string; a doubled quote
 *     inside stands for one; an unterminated one is an illegal token
 *     reaching to the end of the input;
 *   - x'..' is a blob only with an even number of hex digits and a closing
 *     quote, else an illegal token reaching to the next quote;
 *   - a number is digits [. digits] [e[+-]digits] or .digits..., or 0x and
 *     hex digits; identifier characters glued to it make the whole run an
 *     illegal token ("12abc");
 *   - "--" comments run to the end of the line, block comments to the
 *     closing star-slash or to the end of the input; a slash-star at the
 *     very end is a plain '/' followed by '*';
 *   - ?NNN, and :name @name #name $name, where the name may contain "::"
 *     and end with "(...)" (no white space inside the parentheses).
 *
 * The input ends at size or at the first NUL byte, whichever is first.
 */
#include "tokenize.h"

#include <string.h>

#include "common.h"

struct keyword {
    const char *name; /* upper case */
    enum token_kind kind;
    bool fallback_id; /* parse.y %fallback ID, or FILTER/OVER/WINDOW */
};

/* Sorted by name (strcmp order) for binary search. */
static const struct keyword keywords[] = {
    {"ABORT", TOKEN_ABORT, true},
    {"ACTION", TOKEN_ACTION, true},
    {"ADD", TOKEN_ADD, false},
    {"AFTER", TOKEN_AFTER, true},
    {"ALL", TOKEN_ALL, false},
    {"ALTER", TOKEN_ALTER, false},
    {"ALWAYS", TOKEN_ALWAYS, true},
    {"ANALYZE", TOKEN_ANALYZE, true},
    {"AND", TOKEN_AND, false},
    {"AS", TOKEN_AS, false},
    {"ASC", TOKEN_ASC, true},
    {"ATTACH", TOKEN_ATTACH, true},
    {"AUTOINCREMENT", TOKEN_AUTOINCREMENT, false},
    {"BEFORE", TOKEN_BEFORE, true},
    {"BEGIN", TOKEN_BEGIN, true},
    {"BETWEEN", TOKEN_BETWEEN, false},
    {"BY", TOKEN_BY, true},
    {"CASCADE", TOKEN_CASCADE, true},
    {"CASE", TOKEN_CASE, false},
    {"CAST", TOKEN_CAST, true},
    {"CHECK", TOKEN_CHECK, false},
    {"COLLATE", TOKEN_COLLATE, false},
    {"COLUMN", TOKEN_COLUMN, true},
    {"COMMIT", TOKEN_COMMIT, false},
    {"CONFLICT", TOKEN_CONFLICT, true},
    {"CONSTRAINT", TOKEN_CONSTRAINT, false},
    {"CREATE", TOKEN_CREATE, false},
    {"CROSS", TOKEN_CROSS, false},
    {"CURRENT", TOKEN_CURRENT, true},
    {"CURRENT_DATE", TOKEN_CURRENT_DATE, true},
    {"CURRENT_TIME", TOKEN_CURRENT_TIME, true},
    {"CURRENT_TIMESTAMP", TOKEN_CURRENT_TIMESTAMP, true},
    {"DATABASE", TOKEN_DATABASE, true},
    {"DEFAULT", TOKEN_DEFAULT, false},
    {"DEFERRABLE", TOKEN_DEFERRABLE, false},
    {"DEFERRED", TOKEN_DEFERRED, true},
    {"DELETE", TOKEN_DELETE, false},
    {"DESC", TOKEN_DESC, true},
    {"DETACH", TOKEN_DETACH, true},
    {"DISTINCT", TOKEN_DISTINCT, false},
    {"DO", TOKEN_DO, true},
    {"DROP", TOKEN_DROP, false},
    {"EACH", TOKEN_EACH, true},
    {"ELSE", TOKEN_ELSE, false},
    {"END", TOKEN_END, true},
    {"ESCAPE", TOKEN_ESCAPE, false},
    {"EXCEPT", TOKEN_EXCEPT, false},
    {"EXCLUDE", TOKEN_EXCLUDE, true},
    {"EXCLUSIVE", TOKEN_EXCLUSIVE, true},
    {"EXISTS", TOKEN_EXISTS, false},
    {"EXPLAIN", TOKEN_EXPLAIN, true},
    {"FAIL", TOKEN_FAIL, true},
    {"FILTER", TOKEN_FILTER, true},
    {"FIRST", TOKEN_FIRST, true},
    {"FOLLOWING", TOKEN_FOLLOWING, true},
    {"FOR", TOKEN_FOR, true},
    {"FOREIGN", TOKEN_FOREIGN, false},
    {"FROM", TOKEN_FROM, false},
    {"FULL", TOKEN_FULL, false},
    {"GENERATED", TOKEN_GENERATED, true},
    {"GLOB", TOKEN_GLOB, true},
    {"GROUP", TOKEN_GROUP, false},
    {"GROUPS", TOKEN_GROUPS, true},
    {"HAVING", TOKEN_HAVING, false},
    {"IF", TOKEN_IF, true},
    {"IGNORE", TOKEN_IGNORE, true},
    {"IMMEDIATE", TOKEN_IMMEDIATE, true},
    {"IN", TOKEN_IN, false},
    {"INDEX", TOKEN_INDEX, false},
    {"INDEXED", TOKEN_INDEXED, false},
    {"INITIALLY", TOKEN_INITIALLY, true},
    {"INNER", TOKEN_INNER, false},
    {"INSERT", TOKEN_INSERT, false},
    {"INSTEAD", TOKEN_INSTEAD, true},
    {"INTERSECT", TOKEN_INTERSECT, false},
    {"INTO", TOKEN_INTO, false},
    {"IS", TOKEN_IS, false},
    {"ISNULL", TOKEN_ISNULL, false},
    {"JOIN", TOKEN_JOIN, false},
    {"KEY", TOKEN_KEY, true},
    {"LAST", TOKEN_LAST, true},
    {"LEFT", TOKEN_LEFT, false},
    {"LIKE", TOKEN_LIKE, true},
    {"LIMIT", TOKEN_LIMIT, false},
    {"MATCH", TOKEN_MATCH, true},
    {"MATERIALIZED", TOKEN_MATERIALIZED, true},
    {"NATURAL", TOKEN_NATURAL, false},
    {"NO", TOKEN_NO, true},
    {"NOT", TOKEN_NOT, false},
    {"NOTHING", TOKEN_NOTHING, false},
    {"NOTNULL", TOKEN_NOTNULL, false},
    {"NULL", TOKEN_NULL, false},
    {"NULLS", TOKEN_NULLS, true},
    {"OF", TOKEN_OF, true},
    {"OFFSET", TOKEN_OFFSET, true},
    {"ON", TOKEN_ON, false},
    {"OR", TOKEN_OR, false},
    {"ORDER", TOKEN_ORDER, false},
    {"OTHERS", TOKEN_OTHERS, true},
    {"OUTER", TOKEN_OUTER, false},
    {"OVER", TOKEN_OVER, true},
    {"PARTITION", TOKEN_PARTITION, true},
    {"PLAN", TOKEN_PLAN, true},
    {"PRAGMA", TOKEN_PRAGMA, true},
    {"PRECEDING", TOKEN_PRECEDING, true},
    {"PRIMARY", TOKEN_PRIMARY, false},
    {"QUERY", TOKEN_QUERY, true},
    {"RAISE", TOKEN_RAISE, true},
    {"RANGE", TOKEN_RANGE, true},
    {"RECURSIVE", TOKEN_RECURSIVE, true},
    {"REFERENCES", TOKEN_REFERENCES, false},
    {"REGEXP", TOKEN_REGEXP, true},
    {"REINDEX", TOKEN_REINDEX, true},
    {"RELEASE", TOKEN_RELEASE, true},
    {"RENAME", TOKEN_RENAME, true},
    {"REPLACE", TOKEN_REPLACE, true},
    {"RESTRICT", TOKEN_RESTRICT, true},
    {"RETURNING", TOKEN_RETURNING, false},
    {"RIGHT", TOKEN_RIGHT, false},
    {"ROLLBACK", TOKEN_ROLLBACK, true},
    {"ROW", TOKEN_ROW, true},
    {"ROWS", TOKEN_ROWS, true},
    {"SAVEPOINT", TOKEN_SAVEPOINT, true},
    {"SELECT", TOKEN_SELECT, false},
    {"SET", TOKEN_SET, false},
    {"TABLE", TOKEN_TABLE, false},
    {"TEMP", TOKEN_TEMP, true},
    {"TEMPORARY", TOKEN_TEMPORARY, true},
    {"THEN", TOKEN_THEN, false},
    {"TIES", TOKEN_TIES, true},
    {"TO", TOKEN_TO, false},
    {"TRANSACTION", TOKEN_TRANSACTION, false},
    {"TRIGGER", TOKEN_TRIGGER, true},
    {"UNBOUNDED", TOKEN_UNBOUNDED, true},
    {"UNION", TOKEN_UNION, false},
    {"UNIQUE", TOKEN_UNIQUE, false},
    {"UPDATE", TOKEN_UPDATE, false},
    {"USING", TOKEN_USING, false},
    {"VACUUM", TOKEN_VACUUM, true},
    {"VALUES", TOKEN_VALUES, false},
    {"VIEW", TOKEN_VIEW, true},
    {"VIRTUAL", TOKEN_VIRTUAL, true},
    {"WHEN", TOKEN_WHEN, false},
    {"WHERE", TOKEN_WHERE, false},
    {"WINDOW", TOKEN_WINDOW, true},
    {"WITH", TOKEN_WITH, true},
    {"WITHOUT", TOKEN_WITHOUT, true},
};

#define KEYWORD_COUNT (sizeof(keywords) / sizeof(keywords[0]))

/* The longest keyword, CURRENT_TIMESTAMP, has 17 letters. */
#define KEYWORD_SIZE_MAX 17

STATIC_ASSERT(KEYWORD_COUNT == 147, "SQLite 3.40 has 147 keywords");
STATIC_ASSERT(TOKEN_KIND_COUNT - TOKEN_FIRST_KEYWORD == 147,
              "one token kind per keyword");

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_xdigit(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* SQLite's IdChar(): letters, digits, '_', '$' and bytes >= 0x80. */
static bool is_id_char(unsigned char c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c >= 0x80;
}

/* sqlite3Isspace(): space, \t \n \v \f \r. */
static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static unsigned char upper(unsigned char c)
{
    return (c >= 'a' && c <= 'z') ? (unsigned char)(c - 'a' + 'A') : c;
}

/* The input as SQLite sees it: bytes up to size, 0 at and past the end. */
struct cursor {
    const unsigned char *text;
    size_t size;
};

static unsigned char cursor_at(const struct cursor *c, size_t i)
{
    return i < c->size ? c->text[i] : 0;
}

enum token_kind engine__token_keyword(const char *text, size_t size)
{
    char key[KEYWORD_SIZE_MAX + 1];
    size_t low = 0;
    size_t high = KEYWORD_COUNT;

    if (size < 2 || size > KEYWORD_SIZE_MAX) {
        return TOKEN_ID;
    }
    for (size_t i = 0; i < size; i++) {
        key[i] = (char)upper((unsigned char)text[i]);
    }
    key[size] = '\0';
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        int cmp = strcmp(key, keywords[mid].name);

        if (cmp == 0) {
            return keywords[mid].kind;
        }
        if (cmp < 0) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    return TOKEN_ID;
}

bool engine__token_is_keyword(enum token_kind kind)
{
    return kind >= TOKEN_FIRST_KEYWORD && kind < TOKEN_KIND_COUNT;
}

bool engine__token_is_fallback_id(enum token_kind kind)
{
    if (!engine__token_is_keyword(kind)) {
        return false;
    }
    return keywords[kind - TOKEN_FIRST_KEYWORD].fallback_id;
}

/* Space, or a "--" or block comment (the caller saw which). */
static size_t scan_line_comment(const struct cursor *c, size_t i)
{
    i += 2;
    while (cursor_at(c, i) != 0 && cursor_at(c, i) != '\n') {
        i++;
    }
    return i;
}

static size_t scan_block_comment(const struct cursor *c, size_t i)
{
    size_t j = i + 3;
    unsigned char prev = cursor_at(c, i + 2);

    while (!(prev == '*' && cursor_at(c, j) == '/')) {
        prev = cursor_at(c, j);
        if (prev == 0) {
            return j;
        }
        j++;
    }
    return j + 1;
}

static size_t scan_space(const struct cursor *c, size_t i)
{
    while (is_space(cursor_at(c, i))) {
        i++;
    }
    return i;
}

/* 'string', "id", `id`: returns the end and sets *kind. */
static size_t scan_quoted(const struct cursor *c, size_t i,
                          enum token_kind *kind)
{
    unsigned char delim = cursor_at(c, i);
    size_t j = i + 1;

    for (;;) {
        unsigned char ch = cursor_at(c, j);

        if (ch == 0) {
            *kind = TOKEN_ILLEGAL;
            return j;
        }
        if (ch == delim) {
            if (cursor_at(c, j + 1) != delim) {
                break;
            }
            j++;
        }
        j++;
    }
    *kind = delim == '\'' ? TOKEN_STRING : TOKEN_ID;
    return j + 1;
}

static size_t scan_bracket(const struct cursor *c, size_t i,
                           enum token_kind *kind)
{
    size_t j = i + 1;

    while (cursor_at(c, j) != ']' && cursor_at(c, j) != 0) {
        j++;
    }
    if (cursor_at(c, j) == ']') {
        *kind = TOKEN_ID;
        return j + 1;
    }
    *kind = TOKEN_ILLEGAL;
    return j;
}

/* x'hex': the caller checked the quote after the x. */
static size_t scan_blob(const struct cursor *c, size_t i, enum token_kind *kind)
{
    size_t j = i + 2;

    while (is_xdigit(cursor_at(c, j))) {
        j++;
    }
    if (cursor_at(c, j) == '\'' && (j - i) % 2 == 0) {
        *kind = TOKEN_BLOB;
        return j + 1;
    }
    *kind = TOKEN_ILLEGAL;
    while (cursor_at(c, j) != 0 && cursor_at(c, j) != '\'') {
        j++;
    }
    return cursor_at(c, j) == '\'' ? j + 1 : j;
}

static size_t scan_digits(const struct cursor *c, size_t i)
{
    while (is_digit(cursor_at(c, i))) {
        i++;
    }
    return i;
}

/* A number starting with a digit, or with '.' and a digit. */
static size_t scan_number(const struct cursor *c, size_t i,
                          enum token_kind *kind)
{
    size_t j;

    *kind = TOKEN_INTEGER;
    if (cursor_at(c, i) == '0' &&
        (cursor_at(c, i + 1) == 'x' || cursor_at(c, i + 1) == 'X') &&
        is_xdigit(cursor_at(c, i + 2))) {
        j = i + 3;
        while (is_xdigit(cursor_at(c, j))) {
            j++;
        }
        return j;
    }
    j = scan_digits(c, i);
    if (cursor_at(c, j) == '.') {
        j = scan_digits(c, j + 1);
        *kind = TOKEN_FLOAT;
    }
    if ((cursor_at(c, j) == 'e' || cursor_at(c, j) == 'E') &&
        (is_digit(cursor_at(c, j + 1)) ||
         ((cursor_at(c, j + 1) == '+' || cursor_at(c, j + 1) == '-') &&
          is_digit(cursor_at(c, j + 2))))) {
        j = scan_digits(c, j + 2);
        *kind = TOKEN_FLOAT;
    }
    while (is_id_char(cursor_at(c, j))) {
        *kind = TOKEN_ILLEGAL;
        j++;
    }
    return j;
}

/* :name @name #name $name, with "::" inside and a "(...)" suffix. */
static size_t scan_named_variable(const struct cursor *c, size_t i,
                                  enum token_kind *kind)
{
    size_t name_chars = 0;
    size_t j = i + 1;

    *kind = TOKEN_VARIABLE;
    for (;;) {
        unsigned char ch = cursor_at(c, j);

        if (is_id_char(ch)) {
            name_chars++;
        } else if (ch == '(' && name_chars > 0) {
            do {
                j++;
                ch = cursor_at(c, j);
            } while (ch != 0 && !is_space(ch) && ch != ')');
            if (ch == ')') {
                j++;
            } else {
                *kind = TOKEN_ILLEGAL;
            }
            break;
        } else if (ch == ':' && cursor_at(c, j + 1) == ':') {
            j++;
        } else {
            break;
        }
        j++;
    }
    if (name_chars == 0) {
        *kind = TOKEN_ILLEGAL;
    }
    return j;
}

/* An identifier or keyword starting with an identifier character. */
static size_t scan_word(const struct cursor *c, size_t i, enum token_kind *kind)
{
    size_t j = i;
    bool letters_only = true;

    while (is_id_char(cursor_at(c, j))) {
        unsigned char ch = cursor_at(c, j);

        if (!is_alpha(ch) && ch != '_') {
            letters_only = false;
        }
        j++;
    }
    *kind = TOKEN_ID;
    if (letters_only) {
        *kind = engine__token_keyword((const char *)c->text + i, j - i);
    }
    return j;
}

/* Operators made of '<', '>', '=', '!', '|', '-'. */
static size_t scan_compare(const struct cursor *c, size_t i,
                           enum token_kind *kind)
{
    unsigned char ch = cursor_at(c, i);
    unsigned char next = cursor_at(c, i + 1);

    if (ch == '<') {
        *kind = next == '='   ? TOKEN_LE
                : next == '>' ? TOKEN_NE
                : next == '<' ? TOKEN_LSHIFT
                              : TOKEN_LT;
        return i + (*kind == TOKEN_LT ? 1 : 2);
    }
    if (ch == '>') {
        *kind = next == '=' ? TOKEN_GE : next == '>' ? TOKEN_RSHIFT : TOKEN_GT;
        return i + (*kind == TOKEN_GT ? 1 : 2);
    }
    if (ch == '=') {
        *kind = TOKEN_EQ;
        return i + (next == '=' ? 2 : 1);
    }
    if (ch == '!') {
        *kind = next == '=' ? TOKEN_NE : TOKEN_ILLEGAL;
        return i + (next == '=' ? 2 : 1);
    }
    *kind = next == '|' ? TOKEN_CONCAT : TOKEN_BITOR;
    return i + (next == '|' ? 2 : 1);
}

/* Single-byte punctuation; TOKEN_ILLEGAL for anything else. */
static enum token_kind punctuation_kind(unsigned char ch)
{
    switch (ch) {
    case '(':
        return TOKEN_LP;
    case ')':
        return TOKEN_RP;
    case ';':
        return TOKEN_SEMI;
    case ',':
        return TOKEN_COMMA;
    case '.':
        return TOKEN_DOT;
    case '+':
        return TOKEN_PLUS;
    case '*':
        return TOKEN_STAR;
    case '%':
        return TOKEN_REM;
    case '&':
        return TOKEN_BITAND;
    case '~':
        return TOKEN_BITNOT;
    default:
        return TOKEN_ILLEGAL;
    }
}

/* '-', '/', '?' and the byte order mark: tokens whose first byte alone does
 * not decide their kind. Returns 0 when ch is none of them. */
static size_t scan_special(const struct cursor *c, size_t i,
                           enum token_kind *kind)
{
    unsigned char ch = cursor_at(c, i);
    unsigned char next = cursor_at(c, i + 1);

    if (ch == '-') {
        if (next == '-') {
            *kind = TOKEN_SPACE;
            return scan_line_comment(c, i);
        }
        *kind = next == '>' ? TOKEN_PTR : TOKEN_MINUS;
        return i + (next != '>' ? 1 : cursor_at(c, i + 2) == '>' ? 3 : 2);
    }
    if (ch == '/') {
        if (next != '*' || cursor_at(c, i + 2) == 0) {
            *kind = TOKEN_SLASH;
            return i + 1;
        }
        *kind = TOKEN_SPACE;
        return scan_block_comment(c, i);
    }
    if (ch == '?') {
        *kind = TOKEN_VARIABLE;
        return scan_digits(c, i + 1);
    }
    if (ch == 0xEF && next == 0xBB && cursor_at(c, i + 2) == 0xBF) {
        *kind = TOKEN_SPACE;
        return i + 3;
    }
    return 0;
}

static size_t scan_any(const struct cursor *c, size_t i, enum token_kind *kind)
{
    unsigned char ch = cursor_at(c, i);
    size_t end = scan_special(c, i, kind);

    if (end != 0) {
        return end;
    }
    if (is_space(ch)) {
        *kind = TOKEN_SPACE;
        return scan_space(c, i);
    }
    if (ch == '\'' || ch == '"' || ch == '`') {
        return scan_quoted(c, i, kind);
    }
    if (ch == '[') {
        return scan_bracket(c, i, kind);
    }
    if ((ch == 'x' || ch == 'X') && cursor_at(c, i + 1) == '\'') {
        return scan_blob(c, i, kind);
    }
    if (is_digit(ch) || (ch == '.' && is_digit(cursor_at(c, i + 1)))) {
        return scan_number(c, i, kind);
    }
    if (ch == ':' || ch == '@' || ch == '#' || ch == '$') {
        return scan_named_variable(c, i, kind);
    }
    if (is_id_char(ch)) {
        return scan_word(c, i, kind);
    }
    if (strchr("<>=!|", ch) != NULL) {
        return scan_compare(c, i, kind);
    }
    *kind = punctuation_kind(ch);
    return i + 1;
}

void engine__token_scan(const char *sql, size_t size, size_t offset,
                        struct token *out)
{
    struct cursor c = {.text = (const unsigned char *)sql, .size = size};
    enum token_kind kind = TOKEN_EOF;
    size_t end = offset;

    ASSERT(sql != NULL || size == 0);
    ASSERT(offset <= size);
    ASSERT(out != NULL);
    if (cursor_at(&c, offset) != 0) {
        end = scan_any(&c, offset, &kind);
    }
    ASSERT(end <= size);
    out->kind = kind;
    out->offset = offset;
    out->size = end - offset;
}

char *engine__token_unquote(struct engine_arena *arena, const char *text,
                            size_t size, size_t *size_out)
{
    char *copy;
    char close;
    size_t n = 0;

    ASSERT(arena != NULL);
    if (size < 2 || strchr("'\"`[", text[0]) == NULL) {
        copy = engine__arena_strndup(arena, text, size);
        if (copy != NULL && size_out != NULL) {
            *size_out = size;
        }
        return copy;
    }
    close = text[0] == '[' ? ']' : text[0];
    copy = engine__arena_alloc(arena, size);
    if (copy == NULL) {
        return NULL;
    }
    for (size_t i = 1; i + 1 < size; i++) {
        copy[n++] = text[i];
        if (text[i] == close && close != ']') {
            i++; /* a doubled quote stands for one */
        }
    }
    copy[n] = '\0';
    if (size_out != NULL) {
        *size_out = n;
    }
    return copy;
}

int engine__token_blob(struct engine_arena *arena, const char *text,
                       size_t size, struct engine_value *out)
{
    size_t count;
    uint8_t *bytes;

    ASSERT(size >= 3);
    ASSERT(size % 2 == 1);
    count = (size - 3) / 2;
    bytes = engine__arena_alloc(arena, count);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        unsigned char hi = (unsigned char)text[2 + 2 * i];
        unsigned char lo = (unsigned char)text[3 + 2 * i];

        bytes[i] = (uint8_t)(((unsigned)common_hex_value(hi) << 4) |
                             (unsigned)common_hex_value(lo));
    }
    *out = engine__value_blob(bytes, count);
    return 0;
}

bool engine__token_is_hex(const char *text, size_t size)
{
    return size > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

/* Hex digits after "0x": leading zeros skipped, at most 16 significant. */
static enum token_integer hex_integer(const char *text, size_t size,
                                      int64_t *out)
{
    uint64_t u = 0;
    size_t i = 2;

    while (i < size && text[i] == '0') {
        i++;
    }
    if (size - i > 16) {
        return TOKEN_INTEGER_HEX_TOO_BIG;
    }
    for (; i < size; i++) {
        u = (u << 4) | (unsigned)common_hex_value((unsigned char)text[i]);
    }
    /* Two's complement, as SQLite's memcpy of the u64 into an i64. */
    *out = u > (uint64_t)INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u;
    return TOKEN_INTEGER_FITS;
}

enum token_integer engine__token_integer(const char *text, size_t size,
                                         int64_t *out)
{
    uint64_t u = 0;
    const uint64_t limit = (uint64_t)INT64_MAX + 1;

    ASSERT(size > 0);
    if (engine__token_is_hex(text, size)) {
        return hex_integer(text, size, out);
    }
    for (size_t i = 0; i < size; i++) {
        unsigned digit = (unsigned)(text[i] - '0');

        if (u > (limit - digit) / 10) {
            return TOKEN_INTEGER_TOO_BIG;
        }
        u = u * 10 + digit;
    }
    if (u == limit) {
        return TOKEN_INTEGER_INT64_MIN_MAGNITUDE;
    }
    *out = (int64_t)u;
    return TOKEN_INTEGER_FITS;
}
