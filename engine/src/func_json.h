/* SPDX-License-Identifier: MIT
 *
 * func_json.h: the JSON parse that SQLite 3.40's JSON functions work on
 * (src/json.c), shared by func_json.c (parser, renderer, path lookup) and
 * func_json_sql.c (the SQL functions).
 *
 * A parse is a flat array of nodes in document order: an ARRAY or OBJECT
 * node is followed by its n descendants (an object's members as label,
 * value pairs), so the next sibling of node i is at i + node_size(i).
 * Editing never moves nodes: json_set() and json_patch() append new
 * members as a small ARRAY/OBJECT node at the end of the array, chained
 * from the container by `append` (an offset, SQLite's JNODE_APPEND); a
 * removed node is only flagged (JNODE_REMOVE), a replaced one points at
 * the SQL argument that replaces it (JNODE_REPLACE). Keeping SQLite's
 * representation is what makes its corner cases come out the same: a
 * removed object member is still found by a later path of the same call,
 * duplicate keys resolve to the first, and so on.
 *
 * Texts (the document, the paths) are NUL-terminated copies: the algorithm
 * reads them as C strings, as SQLite reads sqlite3_value_text(), so text
 * after an embedded NUL is ignored exactly as there.
 */
#ifndef SINEW_ENGINE_FUNC_JSON_H
#define SINEW_ENGINE_FUNC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "func_int.h"

/* JSON value types, in the order of SQLite's jsonType[] names. */
enum engine_json_type {
    ENGINE_JSON_NULL = 0,
    ENGINE_JSON_TRUE,
    ENGINE_JSON_FALSE,
    ENGINE_JSON_INT,
    ENGINE_JSON_REAL,
    ENGINE_JSON_STRING,
    ENGINE_JSON_ARRAY,
    ENGINE_JSON_OBJECT,
};

/* Node flags (SQLite's JNODE_*). */
#define ENGINE_JSON_RAW 0x01     /* string content not JSON-encoded */
#define ENGINE_JSON_ESCAPE 0x02  /* string content has backslash escapes */
#define ENGINE_JSON_REMOVE 0x04  /* not output */
#define ENGINE_JSON_REPLACE 0x08 /* output argv[replace] instead */
#define ENGINE_JSON_PATCH 0x10   /* output *patch instead */
#define ENGINE_JSON_APPEND 0x20  /* more members at this + append */
#define ENGINE_JSON_LABEL 0x40   /* an object member's name */

struct engine_json_node {
    uint8_t type;      /* enum engine_json_type */
    uint8_t flags;     /* ENGINE_JSON_* */
    uint32_t n;        /* content bytes, or number of descendant nodes */
    uint32_t append;   /* APPEND: offset of the continuation node */
    uint32_t replace;  /* REPLACE: index of the replacing argument */
    const char *bytes; /* INT, REAL, STRING: content, borrowed */
    const struct engine_json_node *patch; /* PATCH: what to output */
};

/* The nesting limit of SQLite's parser (JSON_MAX_DEPTH). */
#define ENGINE_JSON_MAX_DEPTH 2000

struct engine_json_parse {
    struct engine_json_node *nodes; /* owned */
    uint32_t count;                 /* nodes used */
    uint32_t capacity;              /* nodes allocated */
    const char *text;               /* the document, NUL-terminated */
    uint32_t depth;                 /* nesting while parsing */
    bool oom;                       /* an allocation failed */
    bool path_error;                /* a path was malformed (message set) */
};

/* A growing output text (SQLite's JsonString). */
struct engine_json_out {
    char *bytes;     /* owned */
    size_t size;     /* bytes used */
    size_t capacity; /* bytes allocated */
    int error;       /* first error: COMMON_ENOMEM, ENGINE_ETOOBIG, ... */
};

/* Parses text (NUL-terminated, borrowed for the parse's life). 0, or
 * ENGINE_ESQL with "malformed JSON" in ctx (or COMMON_ENOMEM). */
int engine__json_parse(struct engine_func_context *ctx,
                       struct engine_json_parse *parse, const char *text);
void engine__json_parse_close(struct engine_json_parse *parse);

/* Parses argument v: *is_null set for an SQL NULL (nothing parsed). */
int engine__json_parse_value(struct engine_func_context *ctx,
                             struct engine_json_parse *parse,
                             const struct engine_value *v, bool *is_null);

/* Appends a node; its index, or -1 on allocation failure (parse->oom). */
int64_t engine__json_add(struct engine_json_parse *parse, uint8_t type,
                         uint32_t n, const char *bytes);

static inline uint32_t engine__json_size(const struct engine_json_node *node)
{
    return node->type >= ENGINE_JSON_ARRAY ? node->n + 1 : 1;
}

/* The node path (NUL-terminated) names, or NULL. create non-NULL: missing
 * members are added (json_set), *create set when they were. A malformed
 * path sets parse->path_error and returns ENGINE_ESQL with SQLite's
 * "JSON path error near '...'" in ctx; else 0. */
int engine__json_lookup(struct engine_func_context *ctx,
                        struct engine_json_parse *parse, const char *path,
                        bool *create, struct engine_json_node **out);

/* ---- output ---- */

void engine__json_out_char(struct engine_json_out *out, char c);
void engine__json_out_raw(struct engine_json_out *out, const char *bytes,
                          size_t size);
/* ',' unless the text so far is empty or ends in '[' or '{'. */
void engine__json_out_separator(struct engine_json_out *out);
/* bytes as a JSON string: quoted, escaped (nothing for NULL bytes). */
void engine__json_out_string(struct engine_json_out *out, const char *bytes,
                             size_t size);
/* An SQL value as JSON (jsonAppendValue): a BLOB is an error. */
void engine__json_out_value(struct engine_func_context *ctx,
                            struct engine_json_out *out,
                            const struct engine_value *v);
/* A node and its descendants; argv holds REPLACE arguments. */
void engine__json_out_node(struct engine_func_context *ctx,
                           struct engine_json_out *out,
                           const struct engine_json_node *node,
                           const struct engine_value *argv);
/* Makes the text the result (JSON subtype), frees the buffer. 0 or the
 * buffer's error (with its message in ctx). */
int engine__json_out_result(struct engine_func_context *ctx,
                            struct engine_json_out *out,
                            struct engine_value *result);
void engine__json_out_close(struct engine_json_out *out);

/* The node as an SQL value (jsonReturn): null NULL, true 1, false 0,
 * numbers INTEGER or REAL, strings unescaped TEXT, containers JSON text
 * with the JSON subtype. */
int engine__json_return(struct engine_func_context *ctx,
                        const struct engine_json_node *node,
                        struct engine_value *result);

#endif /* SINEW_ENGINE_FUNC_JSON_H */
