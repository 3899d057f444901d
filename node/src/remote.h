/* SPDX-License-Identifier: MIT
 *
 * remote.h: the client side of a sinew node's HTTP API, for `sinew shell
 * http://...` and `sinew cluster ...`. Two layers:
 *
 *   - remote_http_*: a small blocking HTTP/1.1 client (POSIX sockets, one
 *     TCP connection per request, "Connection: close"). Responses need a
 *     Content-Length or end at EOF; chunked responses are refused (the node
 *     never sends them). Only http:// is spoken: TLS belongs to a proxy.
 *   - remote_session_*: a Hrana v2 stream over POST /v2/pipeline (the
 *     HRANA_2 spec, "HTTP API"; docs/http.md). The session keeps the baton
 *     of the last response so that BEGIN in one request and COMMIT in a
 *     later one run on the same stream; a null baton means the server
 *     closed the stream, and the next request opens a new one. Each
 *     statement asks get_autocommit too, so that a stream the server
 *     closed for idleness (HRANA_STREAM_IDLE_TIMEOUT_MS) is replaced
 *     silently when no transaction was open on it.
 *
 * Errors carry a message for the user in a buffer the caller owns (as
 * anet's char *err), since most failures here are about the network or
 * the server's answer, not about a code the caller can act on. Codes:
 * NODE_EAUTH (HTTP 401), NODE_EPROTO (a malformed answer), NODE_EIO (the
 * network), NODE_EINVAL (a bad URL or token, an SQL error from the server),
 * NODE_ENOTFOUND (the server forgot the stream: a 400 on a request that
 * carried a baton), COMMON_ENOMEM, COMMON_ETOOBIG.
 */
#ifndef SINEW_NODE_REMOTE_H
#define SINEW_NODE_REMOTE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine.h"
#include "node.h"
#include "shell_output.h"

/* Bytes of an error message, with its NUL. */
#define REMOTE_ERROR_SIZE 512

/* The most bytes of a response head (status line and headers) and body
 * accepted; a result set larger than the body limit fails cleanly. */
#define REMOTE_HTTP_HEAD_SIZE_MAX (64u * 1024u)
#define REMOTE_HTTP_BODY_SIZE_MAX ((size_t)1 << 30)

/* How long one send or receive may block before the request fails. */
#define REMOTE_HTTP_TIMEOUT_MS 300000

/* The message printed for HTTP 401 (the shell and cluster commands). */
#define REMOTE_NOT_AUTHORIZED_TEXT                                             \
    "sinew: not authorized (set SINEW_AUTH_TOKEN or --auth-token-file)"

/* What https:// URLs get. */
#define REMOTE_HTTPS_TEXT                                                      \
    "https is not supported; put sinew behind a TLS proxy or use http:// "     \
    "on a trusted network"

/* ------------------------------------------------------------------------
 * URLs and tokens
 * ------------------------------------------------------------------------ */

#define REMOTE_HOST_SIZE 256 /* with NUL; IPv6 without its brackets */
#define REMOTE_PORT_SIZE 6
#define REMOTE_PATH_SIZE 1024

/* http://HOST[:PORT][/PATH]: the endpoints are resolved against the path
 * as a browser resolves a relative URL, so "http://h/db/" serves
 * /db/v2/pipeline and "http://h/db" serves /v2/pipeline (B2 in the
 * protocol notes: @libsql/client does the same). */
struct remote_url {
    char host[REMOTE_HOST_SIZE];
    char port[REMOTE_PORT_SIZE];      /* decimal; "80" when the URL has none */
    char base_path[REMOTE_PATH_SIZE]; /* starts and ends with '/' */
    bool is_ipv6;                     /* host was written in [...] */
};

/* True when text starts with http:// or https:// (case-insensitive): the
 * shell's argument names a node, not a file. */
bool remote_is_url(const char *text);

/* Parses text (borrowed). 0, or NODE_EINVAL with the reason in error. */
int remote_url_parse(const char *text, struct remote_url *url, char *error,
                     size_t error_size);

/* The bearer token: the first line of token_file (trailing white space
 * dropped) when token_file is not NULL, else $SINEW_AUTH_TOKEN, else none.
 * *token is NULL or a copy the caller frees with common_free(). A token
 * that is empty or holds a control byte is refused (it would break the
 * header). 0 or NODE_EINVAL / -errno with the reason in error. */
int remote_auth_token_load(const char *token_file, char **token, char *error,
                           size_t error_size);

/* ------------------------------------------------------------------------
 * HTTP
 * ------------------------------------------------------------------------ */

/* What the head of a response says about its body. */
struct remote_http_head {
    int status;              /* 100..599 */
    bool has_content_length; /* else the body runs to EOF */
    size_t content_length;   /* when has_content_length */
    bool is_chunked;         /* Transfer-Encoding names chunked */
};

/* Parses the head at the start of size bytes (borrowed). Returns 0 with
 * *head and *head_size (bytes through the blank line) set, 1 when the
 * bytes end before the blank line, or NODE_EPROTO for a malformed head
 * (bad status line, header without ':', bad or conflicting
 * Content-Length). */
int remote_http_parse_head(const char *data, size_t size,
                           struct remote_http_head *head, size_t *head_size);

struct remote_http_response {
    int status;
    char *body;       /* owned; NUL-terminated; NULL when empty */
    size_t body_size; /* bytes at body, without the NUL */
};

/* Sends method (borrowed) to url's base path + path (no leading '/', e.g.
 * "v2/pipeline"), with the bearer token when token is not NULL and the
 * JSON body when body is not NULL (borrowed), and reads the whole
 * response into *response (released with remote_http_response_release()
 * even on failure). Any HTTP status is success here; 0, or NODE_EIO /
 * NODE_EPROTO / COMMON_E* with the reason in error. */
int remote_http_request(const struct remote_url *url, const char *method,
                        const char *path, const char *token, const char *body,
                        size_t body_size, struct remote_http_response *response,
                        char *error, size_t error_size);

void remote_http_response_release(struct remote_http_response *response);

/* The message of an error response: its JSON {"message": ...} when it has
 * one, else "HTTP <status>" and the start of the body. Writes to error. */
void remote_http_error_text(const struct remote_http_response *response,
                            char *error, size_t error_size);

/* ------------------------------------------------------------------------
 * Hrana values
 * ------------------------------------------------------------------------ */

/* A Hrana value decoded for the shell's output (shell_output.h). The text
 * of a text value is borrowed from the JSON it came from; integers and
 * floats are rendered into number (as the engine renders them: decimal,
 * engine_real_to_text()), blobs decoded into bytes (owned). So value.text
 * may point into the struct itself: it must not be copied or moved while
 * value is in use. */
struct remote_value {
    struct shell_value value;
    char number[ENGINE_REAL_TEXT_SIZE];
    char *bytes; /* owned blob bytes (NUL-terminated), or NULL */
};

/* Decodes json (borrowed; must outlive out's use when a text value) into
 * *out: {"type":"null"}, {"type":"integer","value":"<int64>"},
 * {"type":"float","value":<number>}, {"type":"text","value":"..."},
 * {"type":"blob","base64":"..."}. 0, or NODE_EPROTO with the reason in
 * error, or COMMON_ENOMEM. *out is released with remote_value_release()
 * in every case. */
int remote_value_decode(const json_t *json, struct remote_value *out,
                        char *error, size_t error_size);

void remote_value_release(struct remote_value *value);

/* Decodes standard base64 with padding (RFC 4648 section 4) from size
 * bytes of text into out (room for size / 4 * 3 bytes); *out_size gets
 * the byte count. 0 or NODE_EPROTO for bad characters or padding. */
int remote_base64_decode(const char *text, size_t size, unsigned char *out,
                         size_t *out_size);

/* ------------------------------------------------------------------------
 * Hrana session
 * ------------------------------------------------------------------------ */

struct remote_session;

/* A session with the node at url (borrowed), authenticated by token
 * (copied; NULL for none). It checks the node at once with a pipeline
 * holding only a close request, so a wrong address or token shows before
 * the first statement. 0 or an error with its message in error; *out is
 * freed with remote_session_close(). */
int remote_session_open(const char *url, const char *token,
                        struct remote_session **out, char *error,
                        size_t error_size);

/* Runs one statement of size bytes (borrowed) on the session's stream,
 * with arg_count text arguments (borrowed) bound to ?1..?N. On success
 * *result is the StmtResult object ({"cols": [...], "rows": [...]},
 * checked to have those arrays), owned by the caller (json_decref).
 * The request is [execute, get_autocommit]; the answer to the second says
 * whether the stream is left in a transaction. When the server refuses
 * the stream (HTTP 400, code STREAM_ERROR: it expired, and nothing ran)
 * and its last answer said autocommit, the statement is sent once more
 * on a new stream; inside a transaction, or when the state is unknown (the
 * last request failed on the way), the failure is NODE_ENOTFOUND, as the
 * transaction is gone. An SQL error returns NODE_EINVAL; every error
 * leaves its message in remote_session_error(). */
int remote_session_execute(struct remote_session *session, const char *sql,
                           size_t size, const char *const *args, int arg_count,
                           json_t **result);

/* The message of the last failure; valid until the next call. */
const char *remote_session_error(const struct remote_session *session);

/* Closes the stream (a close request, when one is open; failures are
 * ignored: the server reaps idle streams) and frees session (NULL is
 * ignored). */
void remote_session_close(struct remote_session *session);

#endif /* SINEW_NODE_REMOTE_H */
