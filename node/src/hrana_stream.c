/* SPDX-License-Identifier: MIT
 *
 * hrana_stream.c: Hrana over HTTP's streams and batons (HRANA_3_SPEC,
 * "Hrana over HTTP"). HTTP has no connection to hang a stream on, so each
 * response carries a baton that alone names the stream for the next
 * request: a new one every time (the spec: "the baton in the response
 * should be different from the baton in the request"), unpredictable (24
 * random bytes from libsodium), so a client can neither guess another's
 * stream nor send two requests on one stream at once. Abandoned streams
 * are closed after HRANA_STREAM_IDLE_TIMEOUT_MS, as sqld and musql do.
 *
 * The registry is a fixed array of max_streams slots scanned linearly:
 * the node keeps max_streams small (hundreds), and a scan per request
 * costs less than the JSON it comes with. Batons are compared in constant
 * time so the comparison leaks nothing about a valid one.
 */
#include <sodium.h>
#include <string.h>

#include "hrana_int.h"

struct hrana_streams {
    struct hrana_stream **slots; /* max_streams of them, NULL when free */
    size_t max_streams;
    size_t open;
    struct hrana_stream_owner owner;
};

int hrana_streams_new(size_t max_streams, struct hrana_streams **out)
{
    struct hrana_streams *streams;

    *out = NULL;
    if (max_streams == 0) {
        return NODE_EINVAL;
    }
    /* sodium_init() seeds randombytes; it is safe to call again. */
    if (sodium_init() < 0) {
        return NODE_EIO;
    }
    streams = common_calloc(1, sizeof(*streams));
    if (streams == NULL) {
        return COMMON_ENOMEM;
    }
    streams->slots = common_calloc(max_streams, sizeof(*streams->slots));
    if (streams->slots == NULL) {
        common_free(streams);
        return COMMON_ENOMEM;
    }
    streams->max_streams = max_streams;
    *out = streams;
    return 0;
}

static void stream_free(struct hrana_stream *stream)
{
    for (size_t i = 0; i < stream->sql_count; i++) {
        common_free(stream->sqls[i].sql);
    }
    common_free(stream->sqls);
    common_free(stream);
}

/* Closes the stream in slot i: the owner's state is released first. */
static void slot_close(struct hrana_streams *streams, size_t i)
{
    struct hrana_stream *stream = streams->slots[i];

    ASSERT(stream != NULL);
    if (stream->owner_state != NULL && streams->owner.release != NULL) {
        streams->owner.release(streams->owner.ctx, stream->owner_state);
    }
    stream_free(stream);
    streams->slots[i] = NULL;
    streams->open--;
}

void hrana_streams_free(struct hrana_streams *streams)
{
    if (streams == NULL) {
        return;
    }
    for (size_t i = 0; i < streams->max_streams; i++) {
        if (streams->slots[i] != NULL) {
            slot_close(streams, i);
        }
    }
    common_free(streams->slots);
    common_free(streams);
}

void hrana_streams_set_owner(struct hrana_streams *streams,
                             const struct hrana_stream_owner *owner)
{
    ASSERT(streams->open == 0);
    streams->owner = *owner;
}

size_t hrana_streams_open_count(const struct hrana_streams *streams)
{
    return streams->open;
}

static void baton_new(struct hrana_stream *stream)
{
    unsigned char bytes[HRANA_BATON_BYTES];

    randombytes_buf(bytes, sizeof(bytes));
    sodium_bin2base64(stream->baton, sizeof(stream->baton), bytes,
                      sizeof(bytes), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    STATIC_ASSERT(
        HRANA_BATON_TEXT_SIZE ==
            sodium_base64_ENCODED_LEN(HRANA_BATON_BYTES,
                                      sodium_base64_VARIANT_URLSAFE_NO_PADDING),
        "a baton's text fits its buffer exactly");
}

static bool idle_expired(const struct hrana_stream *stream, uint64_t now_ms)
{
    return !stream->busy && now_ms >= stream->used_ms &&
           now_ms - stream->used_ms >= HRANA_STREAM_IDLE_TIMEOUT_MS;
}

static int stream_open(struct hrana_streams *streams, uint64_t now_ms,
                       struct hrana_stream **out)
{
    struct hrana_stream *stream;
    size_t i = 0;

    if (streams->open == streams->max_streams) {
        /* Make room from abandoned streams before refusing. */
        if (hrana_streams_reap(streams, now_ms) == 0) {
            return COMMON_ETOOBIG;
        }
    }
    while (streams->slots[i] != NULL) {
        i++;
    }
    stream = common_calloc(1, sizeof(*stream));
    if (stream == NULL) {
        return COMMON_ENOMEM;
    }
    baton_new(stream);
    stream->busy = true;
    stream->used_ms = now_ms;
    streams->slots[i] = stream;
    streams->open++;
    *out = stream;
    return 0;
}

int hrana_streams_take(struct hrana_streams *streams, const char *baton,
                       uint64_t now_ms, struct hrana_stream **out)
{
    size_t size;

    *out = NULL;
    if (baton == NULL) {
        return stream_open(streams, now_ms, out);
    }
    size = strlen(baton);
    if (size != HRANA_BATON_TEXT_SIZE - 1) {
        return NODE_ENOTFOUND;
    }
    for (size_t i = 0; i < streams->max_streams; i++) {
        struct hrana_stream *stream = streams->slots[i];
        if (stream == NULL || sodium_memcmp(stream->baton, baton, size) != 0) {
            continue;
        }
        if (stream->busy) {
            return NODE_EBUSY;
        }
        /* Past its idle time, a stream is gone even if the reaper has not
         * run yet: the client sees the same answer either way. */
        if (idle_expired(stream, now_ms)) {
            slot_close(streams, i);
            return NODE_ENOTFOUND;
        }
        stream->busy = true;
        stream->used_ms = now_ms;
        *out = stream;
        return 0;
    }
    return NODE_ENOTFOUND;
}

void hrana_streams_put_back(struct hrana_streams *streams,
                            struct hrana_stream *stream, bool close,
                            uint64_t now_ms, const char **baton)
{
    size_t i = 0;

    while (i < streams->max_streams && streams->slots[i] != stream) {
        i++;
    }
    ASSERT(i < streams->max_streams);
    ASSERT(stream->busy);
    if (close) {
        slot_close(streams, i);
        *baton = NULL;
        return;
    }
    baton_new(stream);
    stream->busy = false;
    stream->used_ms = now_ms;
    *baton = stream->baton;
}

size_t hrana_streams_reap(struct hrana_streams *streams, uint64_t now_ms)
{
    size_t reaped = 0;

    for (size_t i = 0; i < streams->max_streams; i++) {
        if (streams->slots[i] != NULL &&
            idle_expired(streams->slots[i], now_ms)) {
            slot_close(streams, i);
            reaped++;
        }
    }
    return reaped;
}

void *hrana_stream_owner_state(const struct hrana_stream *stream)
{
    return stream->owner_state;
}

void hrana_stream_set_owner_state(struct hrana_stream *stream, void *state)
{
    stream->owner_state = state;
}

/* ---- stored SQL (store_sql / close_sql), per stream over HTTP ---- */

const struct hrana_stored_sql *
hrana_stream_sql_find(const struct hrana_stream *stream, int32_t id)
{
    for (size_t i = 0; i < stream->sql_count; i++) {
        if (stream->sqls[i].id == id) {
            return &stream->sqls[i];
        }
    }
    return NULL;
}

int hrana_stream_sql_store(struct hrana_stream *stream, int32_t id,
                           const char *sql, size_t size)
{
    char *copy;

    if (hrana_stream_sql_find(stream, id) != NULL) {
        return NODE_EINVAL;
    }
    if (stream->sql_count == HRANA_STREAM_SQL_COUNT_MAX ||
        size > HRANA_STREAM_SQL_BYTES_MAX - stream->sql_bytes) {
        return COMMON_ETOOBIG;
    }
    if (stream->sql_count == stream->sql_capacity) {
        size_t capacity = stream->sql_capacity ? stream->sql_capacity * 2 : 8;
        struct hrana_stored_sql *sqls =
            common_realloc_array(stream->sqls, capacity, sizeof(*sqls));
        if (sqls == NULL) {
            return COMMON_ENOMEM;
        }
        stream->sqls = sqls;
        stream->sql_capacity = capacity;
    }
    copy = common_malloc(size + 1);
    if (copy == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(copy, sql, size);
    copy[size] = '\0';
    stream->sqls[stream->sql_count++] = (struct hrana_stored_sql){
        .id = id,
        .sql = copy,
        .size = size,
    };
    stream->sql_bytes += size;
    return 0;
}

void hrana_stream_sql_close(struct hrana_stream *stream, int32_t id)
{
    for (size_t i = 0; i < stream->sql_count; i++) {
        if (stream->sqls[i].id == id) {
            stream->sql_bytes -= stream->sqls[i].size;
            common_free(stream->sqls[i].sql);
            stream->sqls[i] = stream->sqls[--stream->sql_count];
            return;
        }
    }
}
