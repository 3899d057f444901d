/* SPDX-License-Identifier: MIT
 *
 * store_snapshot.c: the Raft store's snapshot file (store.h has the
 * layout): checked at open, read for load and snapshot_get, replaced
 * atomically by snapshot_put, which then drops the log prefix the snapshot
 * makes unnecessary (the trailing rules of libraft's src/uv_snapshot.c).
 *
 * The data checksum is chained over 1 MiB chunks (each chunk's checksum is
 * the seed of the next), so that a snapshot handed over in several buffers
 * is checksummed without first being copied into one.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char snapshot_magic[8] = {'S', 'I', 'N', 'E', 'W', 'S', 'N', 'P'};

#define SNAPSHOT_NAME "snapshot"
#define CHUNK_SIZE ((size_t)1 << 20)

struct snapshot_header {
    raft_index index;
    raft_term term;
    raft_index configuration_index;
    raft_index log_start;
    uint64_t configuration_size;
    uint64_t data_size;
    uint64_t data_checksum;
};

static uint64_t checksum_contiguous(const uint8_t *data, size_t size)
{
    uint64_t checksum = 0;

    if (size == 0) {
        return common_checksum64(NULL, 0, 0);
    }
    for (size_t offset = 0; offset < size; offset += CHUNK_SIZE) {
        size_t n = size - offset < CHUNK_SIZE ? size - offset : CHUNK_SIZE;

        checksum = common_checksum64(data + offset, n, checksum);
    }
    return checksum;
}

/* The same checksum over the concatenation of bufs; chunks that straddle
 * two buffers are staged in a copy. */
static int checksum_buffers(const struct raft_buffer *bufs, unsigned n,
                            uint64_t *out)
{
    uint8_t *staging = NULL;
    size_t staged = 0;
    uint64_t checksum = 0;
    uint64_t total = 0;

    for (unsigned i = 0; i < n; i++) {
        const uint8_t *p = bufs[i].base;
        size_t left = bufs[i].len;

        total += left;
        while (left > 0) {
            size_t take =
                CHUNK_SIZE - staged < left ? CHUNK_SIZE - staged : left;
            if (staged == 0 && left >= CHUNK_SIZE) {
                checksum = common_checksum64(p, CHUNK_SIZE, checksum);
                p += CHUNK_SIZE;
                left -= CHUNK_SIZE;
                continue;
            }
            if (staging == NULL &&
                (staging = common_malloc(CHUNK_SIZE)) == NULL) {
                return COMMON_ENOMEM;
            }
            memcpy(staging + staged, p, take);
            staged += take;
            p += take;
            left -= take;
            if (staged == CHUNK_SIZE) {
                checksum = common_checksum64(staging, CHUNK_SIZE, checksum);
                staged = 0;
            }
        }
    }
    if (staged > 0) {
        checksum = common_checksum64(staging, staged, checksum);
    }
    common_free(staging);
    *out = total == 0 ? common_checksum64(NULL, 0, 0) : checksum;
    return 0;
}

static void header_encode(const struct snapshot_header *h, const uint8_t *conf,
                          uint8_t *out)
{
    memcpy(out, snapshot_magic, sizeof(snapshot_magic));
    common_put_u64le(out + 8, CONSENSUS__STORE_FORMAT);
    common_put_u64le(out + 16, h->index);
    common_put_u64le(out + 24, h->term);
    common_put_u64le(out + 32, h->configuration_index);
    common_put_u64le(out + 40, h->log_start);
    common_put_u64le(out + 48, h->configuration_size);
    common_put_u64le(out + 56, h->data_size);
    common_put_u64le(out + 64, h->data_checksum);
    common_put_u64le(out + 72,
                     common_checksum64(conf, (size_t)h->configuration_size,
                                       common_checksum64(out, 72, 0)));
}

/* Decodes the fields, checking what can be checked without the rest. */
static int header_decode(struct consensus__store *s, const uint8_t *in,
                         uint64_t file_size, struct snapshot_header *h)
{
    if (memcmp(in, snapshot_magic, sizeof(snapshot_magic)) != 0 ||
        common_get_u64le(in + 8) != CONSENSUS__STORE_FORMAT) {
        return consensus__store_corrupt(s, "snapshot: bad magic or format");
    }
    h->index = common_get_u64le(in + 16);
    h->term = common_get_u64le(in + 24);
    h->configuration_index = common_get_u64le(in + 32);
    h->log_start = common_get_u64le(in + 40);
    h->configuration_size = common_get_u64le(in + 48);
    h->data_size = common_get_u64le(in + 56);
    h->data_checksum = common_get_u64le(in + 64);
    if (h->configuration_size > CONSENSUS__STORE_CONFIGURATION_SIZE_MAX ||
        h->configuration_size >
            file_size - CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE ||
        h->data_size != file_size - CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE -
                            h->configuration_size) {
        return consensus__store_corrupt(s, "snapshot: sizes do not add up");
    }
    if (h->index == 0 || h->term == 0 || h->configuration_index == 0 ||
        h->configuration_index > h->index || h->log_start == 0 ||
        h->log_start > h->index + 1) {
        return consensus__store_corrupt(s, "snapshot: bad index fields");
    }
    return 0;
}

/* Reads and checks the header and the configuration (*conf, common_malloc'd,
 * transferred) of the snapshot open on fd. */
static int meta_read(struct consensus__store *s, int fd,
                     struct snapshot_header *h, uint8_t **conf)
{
    uint8_t header[CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE];
    uint8_t check[CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE];
    struct stat st;
    uint8_t *bytes;
    int rc;

    if (fstat(fd, &st) != 0) {
        return consensus__store_file_fail(s, errno, "stat", SNAPSHOT_NAME);
    }
    if ((uint64_t)st.st_size < sizeof(header)) {
        return consensus__store_corrupt(s, "snapshot: %lld bytes is too short",
                                        (long long)st.st_size);
    }
    rc = consensus__store_file_read_at(s, fd, SNAPSHOT_NAME, header,
                                       sizeof(header), 0);
    if (rc == 0) {
        rc = header_decode(s, header, (uint64_t)st.st_size, h);
    }
    if (rc != 0) {
        return rc;
    }
    bytes = common_malloc((size_t)h->configuration_size + 1);
    if (bytes == NULL) {
        return COMMON_ENOMEM;
    }
    rc = consensus__store_file_read_at(s, fd, SNAPSHOT_NAME, bytes,
                                       (size_t)h->configuration_size,
                                       sizeof(header));
    if (rc == 0) {
        header_encode(h, bytes, check);
        if (memcmp(check + 72, header + 72, 8) != 0 ||
            !consensus__store_conf_is_valid(bytes,
                                            (size_t)h->configuration_size)) {
            rc = consensus__store_corrupt(s, "snapshot: bad header checksum");
        }
    }
    if (rc != 0) {
        common_free(bytes);
        return rc;
    }
    *conf = bytes;
    return 0;
}

static int conf_decode(struct consensus__store *s, uint8_t *bytes,
                       uint64_t size, struct raft_configuration *out)
{
    struct raft_buffer buf = {bytes, (size_t)size};
    int rv = raft_configuration_decode(&buf, out);

    if (rv == RAFT_NOMEM) {
        return COMMON_ENOMEM;
    }
    if (rv != 0) {
        return consensus__store_corrupt(s, "snapshot: bad configuration");
    }
    return 0;
}

static int snapshot_fd_open(struct consensus__store *s, int *fd)
{
    *fd = openat(s->dir_fd, SNAPSHOT_NAME, O_RDONLY | O_CLOEXEC);
    if (*fd < 0 && errno != ENOENT) {
        return consensus__store_file_fail(s, errno, "open", SNAPSHOT_NAME);
    }
    return 0;
}

int consensus__store_snapshot_open(struct consensus__store *s,
                                   raft_index *stored_log_start)
{
    struct raft_configuration conf;
    struct snapshot_header h;
    uint8_t *bytes = NULL;
    int fd;
    int rc = snapshot_fd_open(s, &fd);

    if (rc != 0 || fd < 0) {
        *stored_log_start = 1;
        return rc;
    }
    rc = meta_read(s, fd, &h, &bytes);
    close(fd);
    if (rc == 0) {
        rc = conf_decode(s, bytes, h.configuration_size, &conf);
    }
    common_free(bytes);
    if (rc != 0) {
        return rc;
    }
    raft_configuration_close(&conf);
    s->has_snapshot = true;
    s->snapshot_index = h.index;
    s->snapshot_term = h.term;
    *stored_log_start = h.log_start;
    return 0;
}

void consensus__store_snapshot_destroy(struct raft_snapshot *snapshot)
{
    if (snapshot == NULL) {
        return;
    }
    raft_configuration_close(&snapshot->configuration);
    for (unsigned i = 0; i < snapshot->n_bufs; i++) {
        raft_free(snapshot->bufs[i].base);
    }
    raft_free(snapshot->bufs);
    raft_free(snapshot);
}

/* Reads the data that follows the metadata into snapshot->bufs[0]. */
static int data_read(struct consensus__store *s, int fd,
                     const struct snapshot_header *h,
                     struct raft_snapshot *snapshot)
{
    size_t size = (size_t)h->data_size;
    uint8_t *data;
    int rc;

    if (h->data_size > SIZE_MAX - 1) {
        return COMMON_ENOMEM;
    }
    snapshot->bufs = raft_malloc(sizeof(*snapshot->bufs));
    data = raft_malloc(size == 0 ? 1 : size);
    if (snapshot->bufs == NULL || data == NULL) {
        raft_free(data);
        return COMMON_ENOMEM;
    }
    snapshot->bufs[0].base = data;
    snapshot->bufs[0].len = size;
    snapshot->n_bufs = 1;
    rc = consensus__store_file_read_at(s, fd, SNAPSHOT_NAME, data, size,
                                       CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE +
                                           h->configuration_size);
    if (rc == 0 && checksum_contiguous(data, size) != h->data_checksum) {
        rc = consensus__store_corrupt(s, "snapshot: bad data checksum");
    }
    return rc;
}

static int snapshot_read(struct consensus__store *s, int fd,
                         struct raft_snapshot **out)
{
    struct raft_snapshot *snapshot = raft_calloc(1, sizeof(*snapshot));
    struct snapshot_header h;
    uint8_t *bytes = NULL;
    int rc;

    if (snapshot == NULL) {
        return COMMON_ENOMEM;
    }
    raft_configuration_init(&snapshot->configuration);
    rc = meta_read(s, fd, &h, &bytes);
    if (rc == 0) {
        rc = data_read(s, fd, &h, snapshot);
    }
    if (rc == 0) {
        rc = conf_decode(s, bytes, h.configuration_size,
                         &snapshot->configuration);
    }
    common_free(bytes);
    if (rc != 0) {
        consensus__store_snapshot_destroy(snapshot);
        return rc;
    }
    snapshot->index = h.index;
    snapshot->term = h.term;
    snapshot->configuration_index = h.configuration_index;
    *out = snapshot;
    return 0;
}

int consensus__store_snapshot_get(struct consensus__store *s,
                                  struct raft_snapshot **out)
{
    int fd;
    int rc;

    ASSERT(s != NULL);
    ASSERT(out != NULL);
    if (s->failed != 0) {
        return s->failed;
    }
    if (!s->has_snapshot) {
        *out = NULL;
        return 0;
    }
    rc = snapshot_fd_open(s, &fd);
    if (rc == 0 && fd < 0) {
        rc = consensus__store_corrupt(s, "snapshot: vanished");
    }
    if (rc != 0) {
        return rc;
    }
    rc = snapshot_read(s, fd, out);
    close(fd);
    return rc;
}

/* The first log index to keep with a snapshot at index (see store.h). */
static raft_index log_start_after(const struct consensus__store *s,
                                  unsigned trailing, raft_index index)
{
    raft_index keep;

    if (trailing == 0) {
        return index + 1;
    }
    keep = index > trailing ? index - trailing + 1 : 1;
    return keep > s->log_start ? keep : s->log_start;
}

/* Writes the snapshot file: header, encoded configuration, then the
 * caller's buffers as they are. */
static int snapshot_write(struct consensus__store *s,
                          const struct raft_snapshot *snapshot,
                          struct snapshot_header *h,
                          const struct raft_buffer *conf)
{
    uint8_t header[CONSENSUS__STORE_SNAPSHOT_HEADER_SIZE];
    struct consensus__store_piece *pieces;
    size_t count = (size_t)snapshot->n_bufs + 2;
    int rc;

    h->configuration_size = conf->len;
    h->data_size = 0;
    for (unsigned i = 0; i < snapshot->n_bufs; i++) {
        h->data_size += snapshot->bufs[i].len;
    }
    rc = checksum_buffers(snapshot->bufs, snapshot->n_bufs, &h->data_checksum);
    if (rc != 0) {
        return rc;
    }
    pieces = common_malloc_array(count, sizeof(*pieces));
    if (pieces == NULL) {
        return COMMON_ENOMEM;
    }
    header_encode(h, conf->base, header);
    pieces[0] = (struct consensus__store_piece){header, sizeof(header)};
    pieces[1] = (struct consensus__store_piece){conf->base, conf->len};
    for (unsigned i = 0; i < snapshot->n_bufs; i++) {
        pieces[i + 2] = (struct consensus__store_piece){snapshot->bufs[i].base,
                                                        snapshot->bufs[i].len};
    }
    rc = consensus__store_file_replace(s, SNAPSHOT_NAME, pieces, count);
    common_free(pieces);
    if (rc != 0) {
        s->failed = rc;
    }
    return rc;
}

int consensus__store_snapshot_put(struct consensus__store *s, unsigned trailing,
                                  const struct raft_snapshot *snapshot)
{
    struct snapshot_header h = {0};
    struct raft_buffer conf;
    int rc;

    ASSERT(s != NULL);
    ASSERT(snapshot != NULL);
    ASSERT(snapshot->bufs != NULL || snapshot->n_bufs == 0);
    /* An installed snapshot's fields come from the leader's message. */
    if (snapshot->index == 0 || snapshot->term == 0 ||
        snapshot->configuration_index == 0 ||
        snapshot->configuration_index > snapshot->index) {
        snprintf(s->errmsg, sizeof(s->errmsg),
                 "snapshot_put: bad metadata index=%llu term=%llu "
                 "configuration_index=%llu",
                 (unsigned long long)snapshot->index,
                 (unsigned long long)snapshot->term,
                 (unsigned long long)snapshot->configuration_index);
        return CONSENSUS_EPROTO;
    }
    /* raft takes a snapshot at its commit index, which the io appended
     * (synchronously) before; only an installed one may lie ahead. */
    ASSERT(trailing == 0 || snapshot->index <= consensus__store_last_index(s));
    ASSERT(trailing == 0 || snapshot->index + 1 >= s->log_start);
    if (s->failed != 0) {
        return s->failed;
    }
    if (trailing > 0) {
        rc = consensus__store_log_sync(s);
        if (rc != 0) {
            s->failed = rc;
            return rc;
        }
    }
    if (raft_configuration_encode(&snapshot->configuration, &conf) != 0) {
        return COMMON_ENOMEM; /* its only failure */
    }
    h.index = snapshot->index;
    h.term = snapshot->term;
    h.configuration_index = snapshot->configuration_index;
    h.log_start = log_start_after(s, trailing, snapshot->index);
    rc = snapshot_write(s, snapshot, &h, &conf);
    raft_free(conf.base);
    if (rc != 0) {
        return rc;
    }
    s->has_snapshot = true;
    s->snapshot_index = h.index;
    s->snapshot_term = h.term;
    if (trailing == 0) {
        return consensus__store_log_drop_all(s, h.index + 1);
    }
    return consensus__store_log_drop_before(s, h.log_start);
}
