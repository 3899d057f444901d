/* SPDX-License-Identifier: MIT
 *
 * sync_wire.c: HELLO and SUMMARY to bytes and back (sync_wire.h).
 *
 *   HELLO:   u8 protocol, u8 mode, site[16], u64 epoch          (26 bytes)
 *   SUMMARY: u8 protocol, u64 epoch, u8 flags, u32 head_count,
 *            head_count x (site[16], u64 head), u32 fence_count,
 *            fence_count x (site[16], u64 head), u32 evidence_count,
 *            evidence_count x (site[16], u64 hlc, u64 version)
 */
#include <string.h>

#include "sync_wire.h"

#define HEAD_BYTES (REPLICATION_SITE_ID_BYTES + 8)

int replication__hello_encode(const struct replication__hello *hello,
                              struct common_buf *out)
{
    int rc;

    rc = common_buf_append_byte(out, REPLICATION__SYNC_PROTOCOL);
    if (rc == 0) {
        rc = common_buf_append_byte(out, hello->mode);
    }
    if (rc == 0) {
        rc = common_buf_append(out, hello->site, sizeof(hello->site));
    }
    return rc == 0 ? common_buf_append_u64le(out, hello->epoch) : rc;
}

static int read_protocol(struct common_reader *reader)
{
    uint8_t protocol;

    if (common_reader_byte(reader, &protocol) != 0) {
        return REPLICATION_EFORMAT;
    }
    return protocol == REPLICATION__SYNC_PROTOCOL ? 0 : REPLICATION_EVERSION;
}

int replication__hello_decode(const uint8_t *bytes, size_t size,
                              struct replication__hello *out)
{
    struct common_reader reader;
    const uint8_t *site;
    int rc;

    common_reader_init(&reader, bytes, size);
    rc = read_protocol(&reader);
    if (rc != 0) {
        return rc;
    }
    if (common_reader_byte(&reader, &out->mode) != 0 ||
        common_reader_bytes(&reader, sizeof(out->site), &site) != 0 ||
        common_reader_u64le(&reader, &out->epoch) != 0 ||
        common_reader_remaining(&reader) != 0) {
        return REPLICATION_EFORMAT;
    }
    memcpy(out->site, site, sizeof(out->site));
    return 0;
}

static int heads_encode(const struct replication__head *heads, size_t count,
                        struct common_buf *out)
{
    size_t i;
    int rc;

    ASSERT(count <= UINT32_MAX);
    rc = common_buf_append_u32le(out, (uint32_t)count);
    for (i = 0; rc == 0 && i < count; i++) {
        rc = common_buf_append(out, heads[i].site, sizeof(heads[i].site));
        if (rc == 0) {
            rc = common_buf_append_u64le(out, heads[i].head);
        }
    }
    return rc;
}

static int evidence_encode(const struct replication__evidence *evidence,
                           size_t count, struct common_buf *out)
{
    size_t i;
    int rc;

    ASSERT(count <= UINT32_MAX);
    rc = common_buf_append_u32le(out, (uint32_t)count);
    for (i = 0; rc == 0 && i < count; i++) {
        rc = common_buf_append(out, evidence[i].site, sizeof(evidence[i].site));
        if (rc == 0) {
            rc = common_buf_append_u64le(out, evidence[i].hlc);
        }
        if (rc == 0) {
            rc = common_buf_append_u64le(out, evidence[i].version);
        }
    }
    return rc;
}

int replication__summary_encode(const struct replication__summary *summary,
                                struct common_buf *out)
{
    int rc;

    rc = common_buf_append_byte(out, REPLICATION__SYNC_PROTOCOL);
    if (rc == 0) {
        rc = common_buf_append_u64le(out, summary->epoch);
    }
    if (rc == 0) {
        rc = common_buf_append_byte(out, summary->flags);
    }
    if (rc == 0) {
        rc = heads_encode(summary->heads, summary->head_count, out);
    }
    if (rc == 0) {
        rc = heads_encode(summary->fence, summary->fence_count, out);
    }
    if (rc == 0) {
        rc = evidence_encode(summary->evidence, summary->evidence_count, out);
    }
    return rc;
}

/* Reads a count and that many heads into a new array (*out NULL for 0). */
static int heads_decode(struct common_reader *reader,
                        struct replication__head **out, size_t *count)
{
    struct replication__head *heads;
    const uint8_t *site;
    uint32_t n, i;

    *out = NULL;
    *count = 0;
    if (common_reader_u32le(reader, &n) != 0 ||
        common_reader_remaining(reader) / HEAD_BYTES < n) {
        return REPLICATION_EFORMAT; /* checked before allocating */
    }
    if (n == 0) {
        return 0;
    }
    heads = common_calloc(n, sizeof(*heads));
    if (heads == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        (void)common_reader_bytes(reader, REPLICATION_SITE_ID_BYTES, &site);
        memcpy(heads[i].site, site, REPLICATION_SITE_ID_BYTES);
        (void)common_reader_u64le(reader, &heads[i].head);
    }
    *out = heads;
    *count = n;
    return 0;
}

#define EVIDENCE_BYTES (REPLICATION_SITE_ID_BYTES + 16)

static int evidence_decode(struct common_reader *reader,
                           struct replication__evidence **out, size_t *count)
{
    struct replication__evidence *evidence;
    const uint8_t *site;
    uint32_t n, i;

    *out = NULL;
    *count = 0;
    if (common_reader_u32le(reader, &n) != 0 ||
        common_reader_remaining(reader) / EVIDENCE_BYTES < n) {
        return REPLICATION_EFORMAT; /* checked before allocating */
    }
    if (n == 0) {
        return 0;
    }
    evidence = common_calloc(n, sizeof(*evidence));
    if (evidence == NULL) {
        return COMMON_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        (void)common_reader_bytes(reader, REPLICATION_SITE_ID_BYTES, &site);
        memcpy(evidence[i].site, site, REPLICATION_SITE_ID_BYTES);
        (void)common_reader_u64le(reader, &evidence[i].hlc);
        (void)common_reader_u64le(reader, &evidence[i].version);
    }
    *out = evidence;
    *count = n;
    return 0;
}

int replication__summary_decode(const uint8_t *bytes, size_t size,
                                struct replication__summary *out)
{
    struct common_reader reader;
    struct replication__head *heads = NULL, *fence = NULL;
    struct replication__evidence *evidence = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    common_reader_init(&reader, bytes, size);
    rc = read_protocol(&reader);
    if (rc != 0) {
        return rc;
    }
    if (common_reader_u64le(&reader, &out->epoch) != 0 ||
        common_reader_byte(&reader, &out->flags) != 0 ||
        (out->flags & ~(REPLICATION__SUMMARY_WRITER |
                        REPLICATION__SUMMARY_FENCE_KNOWN)) != 0) {
        return REPLICATION_EFORMAT;
    }
    rc = heads_decode(&reader, &heads, &out->head_count);
    if (rc == 0) {
        rc = heads_decode(&reader, &fence, &out->fence_count);
    }
    if (rc == 0) {
        rc = evidence_decode(&reader, &evidence, &out->evidence_count);
    }
    if (rc == 0 && common_reader_remaining(&reader) != 0) {
        rc = REPLICATION_EFORMAT;
    }
    out->heads = heads;
    out->fence = fence;
    out->evidence = evidence;
    if (rc != 0) {
        replication__summary_release(out);
    }
    return rc;
}

void replication__summary_release(struct replication__summary *summary)
{
    common_free((void *)summary->heads);
    common_free((void *)summary->fence);
    common_free((void *)summary->evidence);
    summary->heads = NULL;
    summary->fence = NULL;
    summary->evidence = NULL;
    summary->head_count = 0;
    summary->fence_count = 0;
    summary->evidence_count = 0;
}
