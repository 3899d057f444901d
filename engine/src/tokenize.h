/* SPDX-License-Identifier: MIT
 *
 * tokenize.h: SQLite's tokenizer (src/tokenize.c, sqlite3GetToken, and the
 * keyword list of tool/mkkeywordhash.c, as of SQLite 3.40), for the parser.
 *
 * The tokenizer is a pure function of (text, size, offset): it never reads
 * at or past size, and a NUL byte ends the input exactly as the end of the
 * text does, since SQLite reads its SQL as a C string.
 *
 * Every keyword has its own kind. Keywords that SQLite's grammar lets fall
 * back to an identifier (parse.y's "%fallback ID" list, plus FILTER, OVER
 * and WINDOW, which SQLite's tokenizer treats as identifiers unless their
 * neighbours make them keywords) are marked so by
 * engine__token_is_fallback_id().
 */
#ifndef SINEW_ENGINE_TOKENIZE_H
#define SINEW_ENGINE_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "value.h"

enum token_kind {
    TOKEN_EOF,      /* end of input: size reached, or a NUL byte */
    TOKEN_SPACE,    /* white space, a comment, or a UTF-8 byte order mark */
    TOKEN_ILLEGAL,  /* "unrecognized token" */
    TOKEN_ID,       /* bare, "quoted", [bracketed] or `quoted` identifier */
    TOKEN_STRING,   /* 'text' */
    TOKEN_BLOB,     /* x'hex' */
    TOKEN_INTEGER,  /* decimal or 0x hex digits */
    TOKEN_FLOAT,    /* digits with a '.' or an exponent */
    TOKEN_VARIABLE, /* ?, ?NNN, :name, @name, $name, #name */
    TOKEN_LP,
    TOKEN_RP,
    TOKEN_SEMI,
    TOKEN_COMMA,
    TOKEN_DOT,
    TOKEN_PLUS,
    TOKEN_MINUS,
    TOKEN_STAR,
    TOKEN_SLASH,
    TOKEN_REM,
    TOKEN_CONCAT, /* || */
    TOKEN_PTR,    /* -> and ->> */
    TOKEN_EQ,     /* = and == */
    TOKEN_NE,     /* != and <> */
    TOKEN_LT,
    TOKEN_LE,
    TOKEN_GT,
    TOKEN_GE,
    TOKEN_LSHIFT,
    TOKEN_RSHIFT,
    TOKEN_BITAND,
    TOKEN_BITOR,
    TOKEN_BITNOT,
    /* Keywords, in alphabetical order. */
    TOKEN_ABORT,
    TOKEN_ACTION,
    TOKEN_ADD,
    TOKEN_AFTER,
    TOKEN_ALL,
    TOKEN_ALTER,
    TOKEN_ALWAYS,
    TOKEN_ANALYZE,
    TOKEN_AND,
    TOKEN_AS,
    TOKEN_ASC,
    TOKEN_ATTACH,
    TOKEN_AUTOINCREMENT,
    TOKEN_BEFORE,
    TOKEN_BEGIN,
    TOKEN_BETWEEN,
    TOKEN_BY,
    TOKEN_CASCADE,
    TOKEN_CASE,
    TOKEN_CAST,
    TOKEN_CHECK,
    TOKEN_COLLATE,
    TOKEN_COLUMN,
    TOKEN_COMMIT,
    TOKEN_CONFLICT,
    TOKEN_CONSTRAINT,
    TOKEN_CREATE,
    TOKEN_CROSS,
    TOKEN_CURRENT,
    TOKEN_CURRENT_DATE,
    TOKEN_CURRENT_TIME,
    TOKEN_CURRENT_TIMESTAMP,
    TOKEN_DATABASE,
    TOKEN_DEFAULT,
    TOKEN_DEFERRABLE,
    TOKEN_DEFERRED,
    TOKEN_DELETE,
    TOKEN_DESC,
    TOKEN_DETACH,
    TOKEN_DISTINCT,
    TOKEN_DO,
    TOKEN_DROP,
    TOKEN_EACH,
    TOKEN_ELSE,
    TOKEN_END,
    TOKEN_ESCAPE,
    TOKEN_EXCEPT,
    TOKEN_EXCLUDE,
    TOKEN_EXCLUSIVE,
    TOKEN_EXISTS,
    TOKEN_EXPLAIN,
    TOKEN_FAIL,
    TOKEN_FILTER,
    TOKEN_FIRST,
    TOKEN_FOLLOWING,
    TOKEN_FOR,
    TOKEN_FOREIGN,
    TOKEN_FROM,
    TOKEN_FULL,
    TOKEN_GENERATED,
    TOKEN_GLOB,
    TOKEN_GROUP,
    TOKEN_GROUPS,
    TOKEN_HAVING,
    TOKEN_IF,
    TOKEN_IGNORE,
    TOKEN_IMMEDIATE,
    TOKEN_IN,
    TOKEN_INDEX,
    TOKEN_INDEXED,
    TOKEN_INITIALLY,
    TOKEN_INNER,
    TOKEN_INSERT,
    TOKEN_INSTEAD,
    TOKEN_INTERSECT,
    TOKEN_INTO,
    TOKEN_IS,
    TOKEN_ISNULL,
    TOKEN_JOIN,
    TOKEN_KEY,
    TOKEN_LAST,
    TOKEN_LEFT,
    TOKEN_LIKE,
    TOKEN_LIMIT,
    TOKEN_MATCH,
    TOKEN_MATERIALIZED,
    TOKEN_NATURAL,
    TOKEN_NO,
    TOKEN_NOT,
    TOKEN_NOTHING,
    TOKEN_NOTNULL,
    TOKEN_NULL,
    TOKEN_NULLS,
    TOKEN_OF,
    TOKEN_OFFSET,
    TOKEN_ON,
    TOKEN_OR,
    TOKEN_ORDER,
    TOKEN_OTHERS,
    TOKEN_OUTER,
    TOKEN_OVER,
    TOKEN_PARTITION,
    TOKEN_PLAN,
    TOKEN_PRAGMA,
    TOKEN_PRECEDING,
    TOKEN_PRIMARY,
    TOKEN_QUERY,
    TOKEN_RAISE,
    TOKEN_RANGE,
    TOKEN_RECURSIVE,
    TOKEN_REFERENCES,
    TOKEN_REGEXP,
    TOKEN_REINDEX,
    TOKEN_RELEASE,
    TOKEN_RENAME,
    TOKEN_REPLACE,
    TOKEN_RESTRICT,
    TOKEN_RETURNING,
    TOKEN_RIGHT,
    TOKEN_ROLLBACK,
    TOKEN_ROW,
    TOKEN_ROWS,
    TOKEN_SAVEPOINT,
    TOKEN_SELECT,
    TOKEN_SET,
    TOKEN_TABLE,
    TOKEN_TEMP,
    TOKEN_TEMPORARY,
    TOKEN_THEN,
    TOKEN_TIES,
    TOKEN_TO,
    TOKEN_TRANSACTION,
    TOKEN_TRIGGER,
    TOKEN_UNBOUNDED,
    TOKEN_UNION,
    TOKEN_UNIQUE,
    TOKEN_UPDATE,
    TOKEN_USING,
    TOKEN_VACUUM,
    TOKEN_VALUES,
    TOKEN_VIEW,
    TOKEN_VIRTUAL,
    TOKEN_WHEN,
    TOKEN_WHERE,
    TOKEN_WINDOW,
    TOKEN_WITH,
    TOKEN_WITHOUT,
    TOKEN_KIND_COUNT,
};

/* The first keyword kind: kinds from here to TOKEN_KIND_COUNT are
 * keywords. */
#define TOKEN_FIRST_KEYWORD TOKEN_ABORT

struct token {
    enum token_kind kind;
    size_t offset; /* byte offset of the token's first byte */
    size_t size;   /* bytes; 0 only for TOKEN_EOF */
};

/* Reads the token that starts at offset (<= size) of sql[0..size) into
 * *out. Space and comments are returned as TOKEN_SPACE tokens. */
void engine__token_scan(const char *sql, size_t size, size_t offset,
                        struct token *out);

/* The keyword kind of text[0..size) (ASCII case-insensitive), or TOKEN_ID
 * when it is not one of SQLite's keywords. */
enum token_kind engine__token_keyword(const char *text, size_t size);

/* True for keyword kinds SQLite accepts where an identifier may stand. */
bool engine__token_is_fallback_id(enum token_kind kind);

/* True for every keyword kind. */
bool engine__token_is_keyword(enum token_kind kind);

/* An identifier or string token's text with its quotes removed ("a""b"
 * -> a"b, [x] -> x, 'it''s' -> it's), NUL-terminated in arena; bare
 * identifiers and keywords are copied as they are. *size_out (may be NULL)
 * gets the length. NULL when out of memory. */
char *engine__token_unquote(struct engine_arena *arena, const char *text,
                            size_t size, size_t *size_out);

/* Decodes a TOKEN_BLOB (x'0A1b') into arena: 0 and *out set, or
 * COMMON_ENOMEM. */
int engine__token_blob(struct engine_arena *arena, const char *text,
                       size_t size, struct engine_value *out);

/* How an INTEGER token reads (sqlite3DecOrHexToI64): */
enum token_integer {
    TOKEN_INTEGER_FITS, /* *out is the value (hex wraps to negative) */
    TOKEN_INTEGER_INT64_MIN_MAGNITUDE, /* exactly 9223372036854775808 */
    TOKEN_INTEGER_TOO_BIG,     /* decimal beyond int64: read it as REAL */
    TOKEN_INTEGER_HEX_TOO_BIG, /* hex beyond 64 bits: an error */
};

enum token_integer engine__token_integer(const char *text, size_t size,
                                         int64_t *out);

/* True if an INTEGER token's text is hexadecimal (0x...). */
bool engine__token_is_hex(const char *text, size_t size);

#endif /* SINEW_ENGINE_TOKENIZE_H */
