/* SPDX-License-Identifier: MIT
 *
 * changeset_chunks.c: reassembles chunked change sets (changeset_codec.h,
 * "Reassembly").
 *
 * A set in progress is created by its first chunk, which fixes every
 * header field: later chunks of the same (origin, version) must repeat
 * them exactly, or they are refused. Its payload buffer is charged to the
 * reassembler's bytes_max before it is allocated, so a hostile payload
 * size costs nothing; a bitmap records which chunks are in. The set is
 * decoded when the last one arrives: a large transaction is handed out
 * whole or not at all. Few sets are in progress at once, so they sit in a
 * small array searched linearly.
 */
#include "changeset_codec.h"

#include <string.h>

#include "replication.h"

struct pending {
    struct replication__chunk_info info; /* its first chunk's header */
    uint8_t *payload;                    /* owned: payload_size bytes */
    uint8_t *have;                       /* owned: a bit per chunk */
    uint32_t have_count;                 /* chunks in */
};

struct replication__chunks {
    struct replication__chunks_config config;
    struct pending *sets; /* owned: config.sets_max slots */
    size_t set_count;     /* slots in use, at the front */
    size_t bytes;         /* payload bytes held over all sets */
};

int replication__chunks_create(const struct replication__chunks_config *config,
                               struct replication__chunks **out)
{
    struct replication__chunks *r;

    ASSERT(config != NULL);
    ASSERT(config->sets_max >= 1);
    ASSERT(out != NULL);
    r = common_calloc(1, sizeof(*r));
    if (r == NULL) {
        return COMMON_ENOMEM;
    }
    r->sets = common_calloc(config->sets_max, sizeof(*r->sets));
    if (r->sets == NULL) {
        common_free(r);
        return COMMON_ENOMEM;
    }
    r->config = *config;
    *out = r;
    return 0;
}

static void pending_remove(struct replication__chunks *r, size_t i)
{
    struct pending *p = &r->sets[i];

    r->bytes -= (size_t)p->info.payload_size;
    common_free(p->payload);
    common_free(p->have);
    r->sets[i] = r->sets[r->set_count - 1];
    r->set_count--;
}

void replication__chunks_destroy(struct replication__chunks *r)
{
    if (r == NULL) {
        return;
    }
    while (r->set_count > 0) {
        pending_remove(r, r->set_count - 1);
    }
    common_free(r->sets);
    common_free(r);
}

size_t replication__chunks_bytes(const struct replication__chunks *r)
{
    return r->bytes;
}

static struct pending *pending_find(struct replication__chunks *r,
                                    const uint8_t *origin, uint64_t version,
                                    size_t *index)
{
    for (size_t i = 0; i < r->set_count; i++) {
        struct pending *p = &r->sets[i];

        if (p->info.version == version &&
            memcmp(p->info.origin, origin, sizeof(p->info.origin)) == 0) {
            *index = i;
            return p;
        }
    }
    return NULL;
}

void replication__chunks_drop(struct replication__chunks *r,
                              const uint8_t *origin, uint64_t version)
{
    size_t i;

    if (pending_find(r, origin, version, &i) != NULL) {
        pending_remove(r, i);
    }
}

/* Starts a set for the chunk described by *info. */
static int pending_add(struct replication__chunks *r,
                       const struct replication__chunk_info *info,
                       size_t *index)
{
    struct pending *p;

    if (r->set_count == r->config.sets_max ||
        info->payload_size > r->config.bytes_max - r->bytes) {
        return COMMON_ETOOBIG;
    }
    p = &r->sets[r->set_count];
    memset(p, 0, sizeof(*p));
    p->payload = common_malloc((size_t)info->payload_size);
    p->have = common_calloc(((size_t)info->count + 7) / 8, 1);
    if (p->payload == NULL || p->have == NULL) {
        common_free(p->payload);
        common_free(p->have);
        return COMMON_ENOMEM;
    }
    p->info = *info;
    r->bytes += (size_t)info->payload_size;
    *index = r->set_count++;
    return 0;
}

/* Whether a chunk's header agrees with its set's first chunk. */
static bool pending_is_consistent(const struct pending *p,
                                  const struct replication__chunk_info *c)
{
    const struct replication__chunk_info *f = &p->info;

    return f->hlc == c->hlc && f->epoch == c->epoch &&
           f->schema_hash == c->schema_hash && f->count == c->count &&
           f->flags == c->flags && f->payload_size == c->payload_size &&
           f->body_size == c->body_size && f->body_check == c->body_check &&
           f->piece_size == c->piece_size;
}

/* Copies the chunk in; REPLICATION_EFORMAT for a duplicate that differs. */
static int pending_fill(struct pending *p,
                        const struct replication__chunk_info *c)
{
    size_t offset = (size_t)c->index * p->info.piece_size;
    uint8_t bit = (uint8_t)(1u << (c->index % 8));

    if ((p->have[c->index / 8] & bit) != 0) {
        if (memcmp(p->payload + offset, c->piece, c->piece_bytes) != 0) {
            return REPLICATION_EFORMAT;
        }
        return 0;
    }
    memcpy(p->payload + offset, c->piece, c->piece_bytes);
    p->have[c->index / 8] |= bit;
    p->have_count++;
    return 0;
}

int replication__chunks_add(struct replication__chunks *r, const uint8_t *bytes,
                            size_t size, struct replication__decoded **out)
{
    struct replication__chunk_info info;
    struct pending *p;
    size_t i;
    int rc;

    ASSERT(r != NULL);
    ASSERT(out != NULL);
    *out = NULL;
    rc = replication__chunk_peek(bytes, size, &info);
    if (rc != 0) {
        return rc;
    }
    if (info.count == 1) {
        return replication__payload_decode(&info, info.piece, out);
    }
    p = pending_find(r, info.origin, info.version, &i);
    if (p == NULL) {
        rc = pending_add(r, &info, &i);
        if (rc != 0) {
            return rc;
        }
        p = &r->sets[i];
    } else if (!pending_is_consistent(p, &info)) {
        return REPLICATION_EFORMAT;
    }
    rc = pending_fill(p, &info);
    if (rc != 0 || p->have_count < p->info.count) {
        return rc;
    }
    rc = replication__payload_decode(&p->info, p->payload, out);
    pending_remove(r, i);
    return rc;
}
