/* SPDX-License-Identifier: MIT
 *
 * fsm.c: our struct raft_fsm, which hands committed entries and snapshots
 * to the caller's state machine (struct consensus_state_machine).
 *
 * A command entry packs the commands of one group proposal:
 *
 *     u8 format (1) | u64 LE term it was proposed in | varint count |
 *     count x (varint size | size bytes)
 *
 * The term travels in the entry because libraft's apply does not say it,
 * and the state machine records it with the index (an entry's term never
 * changes once written: Raft's Log Matching property).
 *
 * libraft calls apply with the entry at raft_last_applied() + 1 (the
 * legacy layer advances last_applied after the call), the index the state
 * machine stores with its data so a replay after a restart is skipped.
 *
 * A snapshot is
 *
 *     u64 LE magic "SNWRAFT1" | u64 LE index | the state machine's bytes
 *
 * so restore knows the index without libraft's help (its restore is given
 * only the bytes).
 *
 * Failures. libraft treats a non-zero return from apply as fatal to the
 * whole process (its legacy layer asserts), so apply returns 0 always: a
 * state machine error marks this member unavailable instead, every later
 * entry is left unapplied (the state machine's stored index stays behind,
 * so a restart replays them), and consensus_tick() reports
 * CONSENSUS_EUNAVAILABLE. A node that cannot apply stops; it never skips.
 */
#include <string.h>

#include "consensus_int.h"

#define ENTRY_FORMAT 1
#define SNAPSHOT_MAGIC 0x3154464152574e53ull /* "SNWRAFT1" little-endian */
#define SNAPSHOT_HEADER_BYTES 16
#define SNAPSHOT_RETRY_MS 1000

static void put_u64le(uint8_t *out, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(v >> (8 * i));
    }
}

int consensus__entry_pack(const struct consensus__proposal *first, size_t count,
                          uint64_t term, struct raft_buffer *out)
{
    const struct consensus__proposal *p = first;
    size_t size = 1 + 8 + COMMON_VARINT_SIZE_MAX;
    uint8_t *bytes;
    size_t at = 0;

    for (size_t i = 0; i < count; i++, p = p->next) {
        size += COMMON_VARINT_SIZE_MAX + p->size;
    }
    bytes = raft_malloc(size);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    bytes[at++] = ENTRY_FORMAT;
    put_u64le(bytes + at, term);
    at += 8;
    at += common_varint_encode(count, bytes + at);
    for (p = first; count-- > 0; p = p->next) {
        at += common_varint_encode(p->size, bytes + at);
        memcpy(bytes + at, p->bytes, p->size);
        at += p->size;
    }
    *out = (struct raft_buffer){.base = bytes, .len = at};
    return 0;
}

/* The commands of a packed entry: *count pointers and sizes, allocated
 * into *commands and *sizes. CONSENSUS_EPROTO for a damaged entry. */
static int entry_unpack(const struct raft_buffer *buf, uint64_t *term,
                        const uint8_t ***commands, size_t **sizes,
                        size_t *count)
{
    struct common_reader reader;
    uint64_t n;
    uint8_t format;

    common_reader_init(&reader, buf->base, buf->len);
    if (common_reader_byte(&reader, &format) != 0 || format != ENTRY_FORMAT ||
        common_reader_u64le(&reader, term) != 0 ||
        common_reader_varint(&reader, &n) != 0 ||
        n > common_reader_remaining(&reader)) {
        return CONSENSUS_EPROTO;
    }
    *commands = common_malloc_array((size_t)n + 1, sizeof **commands);
    *sizes = common_malloc_array((size_t)n + 1, sizeof **sizes);
    if (*commands == NULL || *sizes == NULL) {
        common_free(*commands);
        common_free(*sizes);
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t size;
        if (common_reader_varint(&reader, &size) != 0 ||
            size > common_reader_remaining(&reader) ||
            common_reader_bytes(&reader, (size_t)size, &(*commands)[i]) != 0) {
            common_free(*commands);
            common_free(*sizes);
            return CONSENSUS_EPROTO;
        }
        (*sizes)[i] = (size_t)size;
    }
    if (common_reader_remaining(&reader) != 0) {
        common_free(*commands);
        common_free(*sizes);
        return CONSENSUS_EPROTO;
    }
    *count = (size_t)n;
    return 0;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                     void **result)
{
    struct consensus *c = fsm->data;
    uint64_t index = raft_last_applied(&c->raft) + 1;
    struct consensus__batch *batch = consensus__batch_at(c, index);
    const uint8_t **commands = NULL;
    size_t *sizes = NULL;
    int *results = NULL;
    size_t count = 0;
    uint64_t term = 0;
    int rc;

    *result = NULL;
    if (c->unavailable) {
        return 0;
    }
    rc = entry_unpack(buf, &term, &commands, &sizes, &count);
    if (rc == CONSENSUS_EPROTO) {
        /* Every member holds the same bytes, so every member skips them
         * alike: the proposers hear EPROTO. */
        count = 0;
    } else if (rc != 0) {
        consensus__stop(c, "reading a log entry", rc);
        return 0;
    }
    results = common_calloc(count + 1, sizeof *results);
    if (results == NULL) {
        consensus__stop(c, "applying a log entry", COMMON_ENOMEM);
        goto done;
    }
    if (rc == 0) {
        rc = c->machine.apply(c->machine.ctx, index, term, commands, sizes,
                              count, results);
        if (rc != 0) {
            consensus__stop(c, "the state machine's apply", rc);
            goto done;
        }
    }
    if (batch != NULL) {
        for (size_t i = 0; i < batch->count; i++) {
            batch->results[i] = i < count ? results[i] : CONSENSUS_EPROTO;
        }
        batch->applied = true;
    }
done:
    common_free(results);
    common_free(commands);
    common_free(sizes);
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                        unsigned *n_bufs)
{
    struct consensus *c = fsm->data;
    uint8_t header[SNAPSHOT_HEADER_BYTES];
    struct raft_buffer *buf;
    size_t size;
    int rc;

    if (c->unavailable) {
        return RAFT_BUSY; /* libraft skips this round */
    }
    if (c->snapshot_failed_ms != 0 &&
        consensus__io_now(c) < c->snapshot_failed_ms + SNAPSHOT_RETRY_MS) {
        /* libraft asks again after every event: do not serialise the
         * whole state that often after a failure. */
        return RAFT_BUSY;
    }
    common_buf_init(&c->snapshot_buf, SIZE_MAX);
    put_u64le(header, SNAPSHOT_MAGIC);
    put_u64le(header + 8, raft_last_applied(&c->raft));
    rc = common_buf_append(&c->snapshot_buf, header, sizeof header);
    if (rc == 0) {
        rc = c->machine.snapshot(c->machine.ctx, &c->snapshot_buf);
    }
    buf = common_malloc(sizeof *buf);
    if (rc != 0 || buf == NULL) {
        common_free(buf);
        common_buf_close(&c->snapshot_buf);
        LOGF(c->config.log, COMMON_LOG_WARN, "snapshot skipped error=\"%s\"",
             consensus_strerror(rc));
        c->snapshot_failed_ms = consensus__io_now(c);
        return RAFT_BUSY;
    }
    c->snapshot_failed_ms = 0;
    buf->base = common_buf_detach(&c->snapshot_buf, &size);
    buf->len = size;
    *bufs = buf;
    *n_bufs = 1;
    return 0;
}

/* Version 2: libraft leaves the buffers to us, freed here once the
 * snapshot is stored (or failed). */
static int fsm_snapshot_finalize(struct raft_fsm *fsm,
                                 struct raft_buffer *bufs[], unsigned *n_bufs)
{
    (void)fsm;
    for (unsigned i = 0; i < *n_bufs; i++) {
        common_free((*bufs)[i].base);
    }
    common_free(*bufs);
    *bufs = NULL;
    *n_bufs = 0;
    return 0;
}

static uint64_t get_u64le(const uint8_t *in)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | in[i];
    }
    return v;
}

/* Ownership of buf->base passes to us (raft.h): freed here. */
static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    struct consensus *c = fsm->data;
    const uint8_t *bytes = buf->base;
    int rc = CONSENSUS_ECORRUPT;

    if (buf->len >= SNAPSHOT_HEADER_BYTES &&
        get_u64le(bytes) == SNAPSHOT_MAGIC) {
        rc = c->machine.restore(c->machine.ctx, get_u64le(bytes + 8),
                                bytes + SNAPSHOT_HEADER_BYTES,
                                buf->len - SNAPSHOT_HEADER_BYTES);
    }
    raft_free(buf->base);
    buf->base = NULL; /* at start, raft_start() frees the snapshot again */
    if (rc == 0) {
        return 0;
    }
    if (!c->started) {
        return RAFT_CORRUPT; /* consensus_start() fails with it */
    }
    consensus__stop(c, "restoring a snapshot", rc);
    return 0;
}

void consensus__fsm_init(struct consensus *c)
{
    c->fsm = (struct raft_fsm){
        .version = 2,
        .data = c,
        .apply = fsm_apply,
        .snapshot = fsm_snapshot,
        .restore = fsm_restore,
        .snapshot_finalize = fsm_snapshot_finalize,
    };
}
