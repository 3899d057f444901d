/* SPDX-License-Identifier: MIT
 *
 * disk.c: the simulated disk (chaos-design.md §3): the run's real files
 * plus an undo log, built only on the engine's and consensus's I/O hooks.
 *
 * A hooked pwrite saves the pre-image of the range it overwrites (and the
 * file's old size) in its inode's undo list, then writes for real, so
 * later reads see it as the page cache would. A hooked fsync drops the
 * inode's undo list (never calling the real fsync: the run's files are
 * scratch). A crash replays the undo lists of the node's files backwards:
 * unsynced writes are lost, synced ones kept. With the torn model
 * "prefix" a crash keeps the first k unsynced writes of a file and a
 * 512-byte-aligned prefix of the next one: the "torn tail and nothing
 * after it" that the engine's WAL and the Raft store say they survive.
 *
 * Inodes are keyed by (dev, ino), so reuse of fd numbers never confuses
 * them; the path (from /proc/self/fd) is refreshed at the first unsynced
 * write of each sync cycle, so the revert finds a file renamed while it
 * was synced, and an inode whose path now names another file is skipped. Not
 * hooked, so durable at once (weaker, sound): open, ftruncate, rename, unlink
 * (§10.2).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consensus.h"
#include "engine.h"
#include "sim_int.h"

#define DISK_SECTOR_BYTES 512
#define DISK_PATH_BYTES 512

struct disk_write {
    int64_t offset;
    size_t size;      /* bytes written */
    uint8_t *old;     /* pre-image (old_size bytes of it existed) */
    size_t old_bytes; /* bytes of the range that existed before */
    int64_t old_size; /* the file's size before the write */
};

struct disk_inode {
    dev_t dev;
    ino_t ino;
    int owner; /* node index */
    char path[DISK_PATH_BYTES];
    struct disk_write *writes;
    size_t count;
    size_t capacity;
};

struct sim_disk {
    struct sim *sim;
    struct disk_inode *inodes;
    size_t count;
    size_t capacity;
    bool frozen[SIM_NODES_MAX];
    bool faults;
    uint64_t point_countdown[SIM_NODES_MAX]; /* 0: disarmed */
    /* The hook tables: borrowed by the engine and consensus until reset. */
    struct engine_io_hooks engine_hooks;
    struct consensus_io_hooks consensus_hooks;
};

static struct sim_disk *disk_current; /* the hooks' ctx, for revert */

static int owner_of(const struct sim_disk *disk, const char *path)
{
    for (unsigned i = 0; i < disk->sim->config.nodes; i++) {
        const char *dir = disk->sim->nodes[i].dir;
        size_t n = strlen(dir);

        if (n > 0 && strncmp(path, dir, n) == 0 && path[n] == '/') {
            return (int)i;
        }
    }
    return -1;
}

static void drop_writes(struct disk_inode *inode)
{
    for (size_t i = 0; i < inode->count; i++) {
        common_free(inode->writes[i].old);
    }
    inode->count = 0;
}

/* Refreshes inode's path from /proc/self/fd; false when it cannot. */
static bool path_refresh(struct disk_inode *inode, int fd)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, inode->path, sizeof(inode->path) - 1);
    if (n <= 0) {
        return false;
    }
    inode->path[n] = '\0';
    return true;
}

static struct disk_inode *inode_add(struct sim_disk *disk, int fd,
                                    const struct stat *st)
{
    struct disk_inode probe = {.dev = st->st_dev, .ino = st->st_ino};
    struct disk_inode *inode;

    if (!path_refresh(&probe, fd)) {
        return NULL;
    }
    probe.owner = owner_of(disk, probe.path);
    if (probe.owner < 0) {
        return NULL;
    }
    if (disk->count == disk->capacity) {
        size_t capacity = disk->capacity ? disk->capacity * 2 : 16;
        struct disk_inode *grown =
            common_realloc(disk->inodes, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        disk->inodes = grown;
        disk->capacity = capacity;
    }
    inode = &disk->inodes[disk->count++];
    *inode = probe;
    return inode;
}

/* The inode behind fd (added at its first sight), or NULL when it is not
 * one of the run's files. A write to an inode without unsynced writes
 * refreshes its path (one readlink per sync cycle, not per write): the
 * revert then opens the file by the name it had at its first unsynced
 * write. The engine renames only synced files (write, fsync, rename), and
 * a path that names another inode by then is skipped at the revert. */
static struct disk_inode *inode_find(struct sim_disk *disk, int fd,
                                     bool writing)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        return NULL;
    }
    for (size_t i = 0; i < disk->count; i++) {
        struct disk_inode *inode = &disk->inodes[i];

        if (inode->dev == st.st_dev && inode->ino == st.st_ino) {
            if (writing && inode->count == 0 && !path_refresh(inode, fd)) {
                return NULL;
            }
            return inode;
        }
    }
    return inode_add(disk, fd, &st);
}

/* Saves the pre-image of [offset, offset + size) of fd. */
static int save_pre_image(struct disk_inode *inode, int fd, size_t size,
                          int64_t offset)
{
    struct disk_write w = {.offset = offset, .size = size};
    struct stat st;
    ssize_t got;

    if (fstat(fd, &st) != 0) {
        return -1;
    }
    w.old_size = st.st_size;
    w.old = common_malloc(size > 0 ? size : 1);
    ASSERT(w.old != NULL);
    got = offset < st.st_size ? pread(fd, w.old, size, offset) : 0;
    if (got < 0) {
        int rfd = open(inode->path, O_RDONLY | O_CLOEXEC);

        got = rfd >= 0 ? pread(rfd, w.old, size, offset) : -1;
        if (rfd >= 0) {
            close(rfd);
        }
    }
    ASSERT(got >= 0);
    w.old_bytes = (size_t)got;
    if (inode->count == inode->capacity) {
        size_t capacity = inode->capacity ? inode->capacity * 2 : 8;
        struct disk_write *grown =
            common_realloc(inode->writes, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        inode->writes = grown;
        inode->capacity = capacity;
    }
    inode->writes[inode->count++] = w;
    return 0;
}

/* The point-crash countdown of node: true when this I/O is the k-th. */
static bool point_crash_hit(struct sim_disk *disk, int node)
{
    if (disk->point_countdown[node] == 0) {
        return false;
    }
    if (--disk->point_countdown[node] > 0) {
        return false;
    }
    disk->frozen[node] = true;
    disk->sim->nodes[node].crash_pending = true;
    sim_trace(disk->sim, node, "pointcrash", 0, 0);
    return true;
}

static long hook_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                        int64_t offset)
{
    struct sim_disk *disk = ctx;
    struct disk_inode *inode = inode_find(disk, fd, true);

    if (inode == NULL) {
        return (long)pwrite(fd, bytes, size, offset);
    }
    if (disk->frozen[inode->owner]) {
        /* The crashing node's write goes nowhere. It fails, rather than
         * pretend to succeed, so the node does nothing that depends on it
         * (a rename of a file whose writes were lost: renames are not
         * hooked, so they would be durable): as a dead process would. */
        errno = EIO;
        return -1;
    }
    if (disk->faults &&
        sim_rng_chance(&disk->sim->rng[SIM_RNG_DISK],
                       disk->sim->config.write_enospc_probability)) {
        sim_trace(disk->sim, inode->owner, "enospc", (uint64_t)offset, size);
        errno = ENOSPC;
        return -1;
    }
    if (save_pre_image(inode, fd, size, offset) != 0) {
        return -1;
    }
    (void)point_crash_hit(disk, inode->owner);
    return (long)pwrite(fd, bytes, size, offset);
}

static void revert_write(int fd, const struct disk_write *w, size_t keep)
{
    int64_t size = w->old_size;

    if (keep < w->old_bytes) {
        ssize_t n = pwrite(fd, w->old + keep, w->old_bytes - keep,
                           w->offset + (int64_t)keep);

        ASSERT(n == (ssize_t)(w->old_bytes - keep));
    }
    if (w->offset + (int64_t)keep > size) {
        size = w->offset + (int64_t)keep;
    }
    int rc = ftruncate(fd, size);

    ASSERT(rc == 0);
}

/* Reverts inode's unsynced writes: all of them, or (torn) all after the
 * first `kept` and the tail of write kept+1 past keep_bytes. */
static void revert_inode(struct disk_inode *inode, size_t kept,
                         size_t keep_bytes)
{
    struct stat st;
    int fd;

    if (inode->count == 0) {
        return;
    }
    fd = open(inode->path, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == inode->dev &&
        st.st_ino == inode->ino) {
        for (size_t i = inode->count; i > kept; i--) {
            revert_write(fd, &inode->writes[i - 1],
                         i - 1 == kept ? keep_bytes : 0);
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    drop_writes(inode);
}

static int hook_fsync_common(struct sim_disk *disk, int fd)
{
    struct disk_inode *inode = inode_find(disk, fd, false);

    if (inode == NULL) {
        return 0; /* not a run file (a directory): nothing to lose */
    }
    if (disk->frozen[inode->owner]) {
        errno = EIO; /* as the frozen disk's writes */
        return -1;
    }
    if (disk->faults &&
        sim_rng_chance(&disk->sim->rng[SIM_RNG_DISK],
                       disk->sim->config.fsync_eio_probability)) {
        /* fsyncgate: the kernel drops the dirty pages and reports once. */
        sim_trace(disk->sim, inode->owner, "fsynceio", inode->count, 0);
        revert_inode(inode, 0, 0);
        errno = EIO;
        return -1;
    }
    drop_writes(inode);
    (void)point_crash_hit(disk, inode->owner);
    return 0;
}

static int hook_engine_fsync(void *ctx, int fd)
{
    return hook_fsync_common(ctx, fd);
}

static int hook_consensus_fsync(void *ctx, int fd, bool data_only)
{
    (void)data_only;
    return hook_fsync_common(ctx, fd);
}

int sim_disk_open(struct sim *sim, struct sim_disk **out)
{
    struct sim_disk *disk = common_calloc(1, sizeof(*disk));

    if (disk == NULL) {
        return COMMON_ENOMEM;
    }
    disk->engine_hooks = (struct engine_io_hooks){
        .pwrite = hook_pwrite, .fsync = hook_engine_fsync, .ctx = disk};
    disk->consensus_hooks = (struct consensus_io_hooks){
        .pwrite = hook_pwrite, .fsync = hook_consensus_fsync, .ctx = disk};
    ASSERT(disk_current == NULL);
    disk->sim = sim;
    disk_current = disk;
    engine_io_hooks_set(&disk->engine_hooks);
    consensus_io_hooks_set(&disk->consensus_hooks);
    *out = disk;
    return 0;
}

void sim_disk_close(struct sim_disk *disk)
{
    if (disk == NULL) {
        return;
    }
    engine_io_hooks_set(NULL);
    consensus_io_hooks_set(NULL);
    for (size_t i = 0; i < disk->count; i++) {
        drop_writes(&disk->inodes[i]);
        common_free(disk->inodes[i].writes);
    }
    common_free(disk->inodes);
    disk_current = NULL;
    common_free(disk);
}

void sim_disk_freeze(struct sim_disk *disk, unsigned node)
{
    disk->frozen[node] = true;
}

void sim_disk_revert(struct sim_disk *disk, unsigned node)
{
    struct sim_rng *rng = &disk->sim->rng[SIM_RNG_DISK];

    for (size_t i = 0; i < disk->count; i++) {
        struct disk_inode *inode = &disk->inodes[i];
        size_t kept = 0, keep_bytes = 0;

        if (inode->owner != (int)node || inode->count == 0) {
            continue;
        }
        if (disk->sim->config.torn == SIM_TORN_PREFIX) {
            kept = (size_t)sim_rng_below(rng, inode->count + 1);
            if (kept < inode->count) {
                keep_bytes =
                    (size_t)sim_rng_below(
                        rng, inode->writes[kept].size / DISK_SECTOR_BYTES + 1) *
                    DISK_SECTOR_BYTES;
                if (keep_bytes >= inode->writes[kept].size) {
                    keep_bytes = 0;
                }
            }
        }
        sim_trace(disk->sim, (int)node, "revert", inode->count - kept,
                  keep_bytes);
        revert_inode(inode, kept, keep_bytes);
    }
    disk->frozen[node] = false;
    disk->point_countdown[node] = 0;
}

void sim_disk_faults(struct sim_disk *disk, bool on)
{
    disk->faults = on;
    if (!on) {
        memset(disk->point_countdown, 0, sizeof(disk->point_countdown));
    }
}

void sim_disk_arm_point_crash(struct sim_disk *disk, unsigned node, uint64_t k)
{
    disk->point_countdown[node] = k;
}

uint64_t sim_disk_unsynced_bytes(const struct sim_disk *disk, unsigned node)
{
    uint64_t bytes = 0;

    for (size_t i = 0; i < disk->count; i++) {
        if (disk->inodes[i].owner != (int)node) {
            continue;
        }
        for (size_t w = 0; w < disk->inodes[i].count; w++) {
            bytes += disk->inodes[i].writes[w].size;
        }
    }
    return bytes;
}
