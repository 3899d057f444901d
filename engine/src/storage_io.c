/* SPDX-License-Identifier: MIT
 *
 * storage_io.c: the system calls of durable storage. Every write and sync
 * goes through engine_io_hooks (engine.h), so a test can fail the Nth write
 * or fsync and a simulator can model a disk that loses unsynced data.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_int.h"
#include "storage_int.h"

static long default_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                           int64_t offset)
{
    (void)ctx;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int default_fsync(void *ctx, int fd)
{
    (void)ctx;
    return fsync(fd);
}

static const struct engine_io_hooks default_hooks = {
    .pwrite = default_pwrite,
    .fsync = default_fsync,
};

static const struct engine_io_hooks *hooks = &default_hooks;

void engine_io_hooks_set(const struct engine_io_hooks *replacement)
{
    hooks = replacement != NULL ? replacement : &default_hooks;
}

int engine__io_write(int fd, const void *bytes, size_t size, uint64_t offset)
{
    const uint8_t *next = bytes;

    while (size > 0) {
        long n = hooks->pwrite(hooks->ctx, fd, next, size, (int64_t)offset);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno ? -errno : -EIO;
        }
        if (n == 0) {
            return -ENOSPC;
        }
        next += n;
        size -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

int engine__io_sync(int fd)
{
    if (hooks->fsync(hooks->ctx, fd) != 0) {
        return errno ? -errno : -EIO;
    }
    return 0;
}

int engine__io_sync_dir(const char *path)
{
    char directory[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t size = slash == NULL ? 1 : (size_t)(slash - path);
    int fd, rc;

    if (size >= sizeof(directory)) {
        return -ENAMETOOLONG;
    }
    if (slash == NULL) {
        directory[0] = '.';
    } else if (size == 0) {
        directory[0] = '/';
        size = 1;
    } else {
        memcpy(directory, path, size);
    }
    directory[size] = '\0';
    fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    rc = engine__io_sync(fd);
    close(fd);
    return rc;
}

static int read_all(int fd, uint8_t *bytes, size_t size)
{
    size_t done = 0;

    while (done < size) {
        ssize_t n = read(fd, bytes + done, size - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EIO;
        }
        done += (size_t)n;
    }
    return 0;
}

int engine__io_read_file(const char *path, uint8_t **out, size_t *size)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc;

    *out = NULL;
    *size = 0;
    if (fd < 0) {
        return -errno;
    }
    rc = fstat(fd, &st) != 0 ? -errno : 0;
    if (rc == 0 && st.st_size > 0) {
        *out = common_malloc((size_t)st.st_size);
        rc = *out == NULL ? COMMON_ENOMEM
                          : read_all(fd, *out, (size_t)st.st_size);
        *size = (size_t)st.st_size;
    }
    close(fd);
    if (rc != 0) {
        common_free(*out);
        *out = NULL;
        *size = 0;
    }
    return rc;
}

int engine__io_error(int rc)
{
    if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG) {
        return ENGINE_EFULL;
    }
    return rc == COMMON_ENOMEM ? rc : ENGINE_EIO;
}
