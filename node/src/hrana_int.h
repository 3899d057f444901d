/* SPDX-License-Identifier: MIT
 *
 * hrana_int.h: what the pieces of the Hrana implementation share and no
 * other file of the node sees: the stream's fields (hrana_stream.c owns
 * them; hrana_exec.c reads the stored SQL and keeps the transaction
 * flags), the SQL scanner (hrana_pipeline.c) that classifies statements
 * without a database, and the value codec (hrana_value.c).
 */
#ifndef SINEW_NODE_HRANA_INT_H
#define SINEW_NODE_HRANA_INT_H

#include "hrana.h"

/* ---- streams ---- */

/* A baton: 24 random bytes in base64url without padding (musql's size),
 * 32 characters and a NUL. */
#define HRANA_BATON_BYTES 24
#define HRANA_BATON_TEXT_SIZE 33

/* Limits of one stream's stored SQL (store_sql), so a client cannot grow
 * a stream without bound: texts, and their bytes together. */
#define HRANA_STREAM_SQL_COUNT_MAX 1000u
#define HRANA_STREAM_SQL_BYTES_MAX ((size_t)64 << 20)

struct hrana_stored_sql {
    int32_t id;
    char *sql; /* owned, NUL-terminated */
    size_t size;
};

struct hrana_stream {
    char baton[HRANA_BATON_TEXT_SIZE]; /* the one baton naming it */
    bool busy;                         /* taken, not yet put back */
    uint64_t used_ms;                  /* last take or put back */
    void *owner_state;                 /* the node's, released on close */
    struct hrana_stored_sql *sqls;     /* owned, sql_count of them */
    size_t sql_count;
    size_t sql_capacity;
    size_t sql_bytes;
    /* The client's BEGIN TRANSACTION READONLY is open: statements that
     * may write are refused until it ends. */
    bool readonly_transaction;
    /* in_group_transaction mode: the client's (virtual) BEGIN is open. */
    bool group_transaction;
};

/* The stored text of id, or NULL. */
const struct hrana_stored_sql *
hrana_stream_sql_find(const struct hrana_stream *stream, int32_t id);
/* Stores a copy of sql (size bytes, borrowed) as id. NODE_EINVAL when id
 * is taken, COMMON_ETOOBIG past the limits above, COMMON_ENOMEM. */
int hrana_stream_sql_store(struct hrana_stream *stream, int32_t id,
                           const char *sql, size_t size);
/* Forgets id; closing an unknown id is not an error (as sqld). */
void hrana_stream_sql_close(struct hrana_stream *stream, int32_t id);

/* ---- the SQL scanner ---- */

/* What a statement is, from its first keywords. */
enum hrana_sql_kind {
    HRANA_SQL_EMPTY = 0,      /* white space and comments only */
    HRANA_SQL_READ,           /* SELECT, VALUES, EXPLAIN */
    HRANA_SQL_BEGIN,          /* BEGIN [DEFERRED] [TRANSACTION] */
    HRANA_SQL_BEGIN_READONLY, /* BEGIN [TRANSACTION] READONLY (libSQL) */
    HRANA_SQL_BEGIN_WRITE,    /* BEGIN IMMEDIATE / EXCLUSIVE */
    HRANA_SQL_COMMIT,         /* COMMIT, END */
    HRANA_SQL_ROLLBACK,       /* ROLLBACK [TRANSACTION [name]] */
    HRANA_SQL_SAVEPOINT,      /* SAVEPOINT, RELEASE, ROLLBACK ... TO */
    HRANA_SQL_WRITE,          /* anything else: it may write */
};

/* The offset of the first byte at or after at in sql[0..size) that is not
 * white space or inside a comment (size if none). */
size_t hrana_sql_skip_space(const char *sql, size_t size, size_t at);
/* The offset of the ';' ending the statement that starts at at (outside
 * quotes, identifiers and comments), or size. */
size_t hrana_sql_statement_end(const char *sql, size_t size, size_t at);
/* The kind of the statement starting at sql[at] (only its keywords are
 * read). */
enum hrana_sql_kind hrana_sql_classify(const char *sql, size_t size, size_t at);
/* True when sql[at..size) holds nothing but white space, comments and
 * ';' (what follows the one statement an execute may hold). */
bool hrana_sql_is_blank(const char *sql, size_t size, size_t at);
/* The access of every statement in sql[0..size). */
enum hrana_access hrana_sql_access(const char *sql, size_t size);

/* Calls fn for each parameter token of sql in text order: name is "?" for
 * an anonymous one, else the token ("?3", ":a", "@a", "$a"), name_size its
 * bytes. Tokens inside quotes and comments are skipped. */
typedef void (*hrana_sql_param_cb)(void *ctx, const char *name,
                                   size_t name_size);
void hrana_sql_params(const char *sql, size_t size, hrana_sql_param_cb fn,
                      void *ctx);

/* ---- JSON helpers ---- */

/* A JSON string of size bytes of text, invalid UTF-8 replaced by U+FFFD
 * (SQLite text need not be valid UTF-8, JSON's must). NULL on allocation
 * failure. */
json_t *hrana_json_text(const char *text, size_t size);
/* A JSON number that is an integer in [min, max] into *out; false if
 * value is anything else. */
bool hrana_json_integer(const json_t *value, int64_t min, int64_t max,
                        int64_t *out);
/* {"type":"error","error":{"message":...,"code":...}}; NULL on allocation
 * failure. */
json_t *hrana_error_result(const char *message, const char *code);
/* {"message":...,"code":...}. */
json_t *hrana_error_object(const char *message, const char *code);

/* ---- values ---- */

/* Bytes of base64 text (standard alphabet, padded) for size bytes. */
size_t hrana_base64_encoded_size(size_t size);
/* Writes the base64 of data[0..size) and a NUL to out, which has room for
 * hrana_base64_encoded_size(size) + 1 bytes. */
void hrana_base64_encode(const uint8_t *data, size_t size, char *out);
/* Decodes text[0..size) (standard alphabet, padding optional) into a
 * common_malloc'd *out of *out_size bytes (NULL when empty). NODE_EINVAL
 * for a byte outside the alphabet, misplaced padding or a length no
 * base64 text has; COMMON_ENOMEM. */
int hrana_base64_decode(const char *text, size_t size, uint8_t **out,
                        size_t *out_size);

/* Parses a decimal int64 ("-12"), refusing anything else (no spaces, no
 * '+', nothing out of range): true on success. */
bool hrana_int64_parse(const char *text, size_t size, int64_t *out);

/* Binds the Hrana value (borrowed) to parameter index of stmt. 0;
 * NODE_EINVAL with a message in error for a malformed value; COMMON_ENOMEM;
 * another engine code from engine_bind_*(). */
int hrana_value_bind(struct engine_stmt *stmt, int index, const json_t *value,
                     char *error, size_t error_size);

/* The Hrana value of column of stmt's current row into *out. 0;
 * NODE_EINVAL with a message in error for a REAL that is not finite (JSON
 * has no Inf); COMMON_ENOMEM. *bytes grows by an estimate of its encoded
 * size. */
int hrana_value_column(struct engine_stmt *stmt, int column, json_t **out,
                       size_t *bytes, char *error, size_t error_size);

/* ---- running (hrana_exec.c: statements; hrana_request.c: requests) ---- */

#define HRANA_FAILURE_MESSAGE_SIZE 512

/* One hrana_pipeline_run() call. */
struct hrana_run {
    struct hrana_stream *stream; /* borrowed */
    struct engine_db *db;        /* borrowed */
    bool group;                  /* options->in_group_transaction */
    bool read_handle;            /* options->read_handle */
    size_t response_bytes;       /* rows encoded so far, estimated */
    size_t response_bytes_max;
    struct hrana_run_outcome *out; /* borrowed */
    /* The last failure: the failed request's (or step's) error. */
    struct {
        char message[HRANA_FAILURE_MESSAGE_SIZE];
        const char *code; /* static */
    } failure;
};

/* Records a failure; returns NODE_EINVAL. */
int hrana_run_fail(struct hrana_run *run, const char *code, const char *format,
                   ...) __attribute__((format(printf, 3, 4)));

/* Whether the client is inside a transaction: the handle's, or in group
 * mode the client's own (virtual) BEGIN. */
bool hrana_run_in_transaction(const struct hrana_run *run);

/* The SQL text holder names ("sql", or "sql_id" stored on the stream;
 * exactly one), borrowed from holder or the stream. */
int hrana_run_resolve_sql(struct hrana_run *run, const json_t *holder,
                          const char **sql, size_t *size);

/* The offset of the first statement at or after at: past white space,
 * comments and empty statements (size if none). */
size_t hrana_sql_first_statement(const char *sql, size_t size, size_t at);

/* Prepares the statement at sql[at] (kind from hrana_sql_classify()) into
 * *stmt (the caller's), *tail the offset just past it. */
int hrana_run_prepare(struct hrana_run *run, const char *sql, size_t size,
                      size_t at, enum hrana_sql_kind kind,
                      struct engine_stmt **stmt, size_t *tail);

/* [{"name","decltype":null}...] of stmt's columns; NULL on allocation
 * failure. */
json_t *hrana_columns(struct engine_stmt *stmt);

/* Runs a Stmt object (borrowed): one statement; *result is its
 * StmtResult (the caller's). */
int hrana_run_stmt(struct hrana_run *run, const json_t *stmt, json_t **result);

/* Runs a sequence request's statements in order, up to the first that
 * fails. */
int hrana_run_sequence(struct hrana_run *run, const json_t *request);

#endif /* SINEW_NODE_HRANA_INT_H */
