/* SPDX-License-Identifier: MIT
 *
 * store_file.c: the file system calls of the Raft store (store.h), with
 * their error handling in one place: every failure becomes a consensus code
 * and a message in the store's errmsg naming the operation and the file.
 *
 * Atomic replacement (metadata, snapshot, a new segment's header) is the
 * classic sequence: write a temporary file, fdatasync it, rename it over the
 * target, fsync the directory so the rename itself is durable.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int consensus__store_file_fail(struct consensus__store *s, int err,
                               const char *what, const char *name)
{
    snprintf(s->errmsg, sizeof(s->errmsg), "%s: %s: %s", what, name,
             strerror(err));
    if (err == ENOSPC || err == EDQUOT) {
        return CONSENSUS_ENOSPACE;
    }
    if (err == ENOMEM) {
        return COMMON_ENOMEM;
    }
    return CONSENSUS_EIO;
}

int consensus__store_corrupt(struct consensus__store *s, const char *format,
                             ...)
{
    va_list args;

    va_start(args, format);
    vsnprintf(s->errmsg, sizeof(s->errmsg), format, args);
    va_end(args);
    return CONSENSUS_ECORRUPT;
}

static long default_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                           int64_t offset)
{
    (void)ctx;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int default_fsync(void *ctx, int fd, bool data_only)
{
    (void)ctx;
    return data_only ? fdatasync(fd) : fsync(fd);
}

static const struct consensus_io_hooks default_hooks = {
    .pwrite = default_pwrite,
    .fsync = default_fsync,
};

static const struct consensus_io_hooks *hooks = &default_hooks;

void consensus_io_hooks_set(const struct consensus_io_hooks *replacement)
{
    hooks = replacement != NULL ? replacement : &default_hooks;
}

int consensus__store_file_fsync(int fd, bool data_only)
{
    return hooks->fsync(hooks->ctx, fd, data_only);
}

int consensus__store_file_sync_dir(struct consensus__store *s)
{
    if (consensus__store_file_fsync(s->dir_fd, false) != 0) {
        return consensus__store_file_fail(s, errno, "fsync", s->dir);
    }
    return 0;
}

int consensus__store_file_write_at(struct consensus__store *s, int fd,
                                   const char *name, const void *data,
                                   size_t size, uint64_t offset)
{
    const uint8_t *p = data;

    while (size > 0) {
        long n = hooks->pwrite(hooks->ctx, fd, p, size, (int64_t)offset);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return consensus__store_file_fail(s, n < 0 ? errno : EIO, "write",
                                              name);
        }
        p += n;
        size -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

int consensus__store_file_read_at(struct consensus__store *s, int fd,
                                  const char *name, void *data, size_t size,
                                  uint64_t offset)
{
    uint8_t *p = data;

    while (size > 0) {
        ssize_t n = pread(fd, p, size, (off_t)offset);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return consensus__store_file_fail(s, errno, "read", name);
        }
        if (n == 0) {
            return consensus__store_corrupt(s, "read: %s: file shrank", name);
        }
        p += n;
        size -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

static int read_all_fd(struct consensus__store *s, int fd, const char *name,
                       uint64_t size_max, uint8_t **data, size_t *size)
{
    struct stat st;
    uint8_t *bytes = NULL;
    int rc;

    if (fstat(fd, &st) != 0) {
        return consensus__store_file_fail(s, errno, "stat", name);
    }
    if ((uint64_t)st.st_size > size_max || (uint64_t)st.st_size > SIZE_MAX) {
        return consensus__store_corrupt(s, "%s: %lld bytes is too large", name,
                                        (long long)st.st_size);
    }
    if (st.st_size > 0) {
        bytes = common_malloc((size_t)st.st_size);
        if (bytes == NULL) {
            return COMMON_ENOMEM;
        }
        rc = consensus__store_file_read_at(s, fd, name, bytes,
                                           (size_t)st.st_size, 0);
        if (rc != 0) {
            common_free(bytes);
            return rc;
        }
    }
    *data = bytes;
    *size = (size_t)st.st_size;
    return 0;
}

int consensus__store_file_read_all(struct consensus__store *s, const char *name,
                                   uint64_t size_max, uint8_t **data,
                                   size_t *size, bool *exists)
{
    int fd = openat(s->dir_fd, name, O_RDONLY | O_CLOEXEC);
    int rc;

    if (fd < 0 && errno == ENOENT) {
        *data = NULL;
        *size = 0;
        *exists = false;
        return 0;
    }
    if (fd < 0) {
        return consensus__store_file_fail(s, errno, "open", name);
    }
    rc = read_all_fd(s, fd, name, size_max, data, size);
    close(fd);
    if (rc == 0) {
        *exists = true;
    }
    return rc;
}

static int write_pieces(struct consensus__store *s, int fd, const char *name,
                        const struct consensus__store_piece *pieces,
                        size_t piece_count)
{
    uint64_t offset = 0;

    for (size_t i = 0; i < piece_count; i++) {
        int rc = consensus__store_file_write_at(s, fd, name, pieces[i].data,
                                                pieces[i].size, offset);
        if (rc != 0) {
            return rc;
        }
        offset += pieces[i].size;
    }
    if (consensus__store_file_fsync(fd, true) != 0) {
        return consensus__store_file_fail(s, errno, "fdatasync", name);
    }
    return 0;
}

int consensus__store_file_replace(struct consensus__store *s, const char *name,
                                  const struct consensus__store_piece *pieces,
                                  size_t piece_count)
{
    char tmp[64];
    int fd;
    int rc;

    ASSERT(strlen(name) + sizeof(".tmp") <= sizeof(tmp));
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return consensus__store_file_fail(s, errno, "create", tmp);
    }
    rc = write_pieces(s, fd, tmp, pieces, piece_count);
    if (close(fd) != 0 && rc == 0) {
        rc = consensus__store_file_fail(s, errno, "close", tmp);
    }
    if (rc != 0) {
        unlinkat(s->dir_fd, tmp, 0);
        return rc;
    }
    if (renameat(s->dir_fd, tmp, s->dir_fd, name) != 0) {
        rc = consensus__store_file_fail(s, errno, "rename", tmp);
        unlinkat(s->dir_fd, tmp, 0);
        return rc;
    }
    return consensus__store_file_sync_dir(s);
}

int consensus__store_file_remove(struct consensus__store *s, const char *name)
{
    if (unlinkat(s->dir_fd, name, 0) != 0 && errno != ENOENT) {
        return consensus__store_file_fail(s, errno, "unlink", name);
    }
    return 0;
}
