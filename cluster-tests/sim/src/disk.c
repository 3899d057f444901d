/* SPDX-License-Identifier: MIT
 *
 * disk.c: the simulated disk (chaos-design.md §3): the run's real files
 * plus an undo log, built only on the engine's and consensus's I/O hooks.
 *
 * A hooked pwrite saves the pre-image of the range it overwrites (and the
 * file's old size) in its file's undo list, then writes for real, so
 * later reads see it as the page cache would. A hooked fsync drops the
 * file's undo list (never calling the real fsync: the run's files are
 * scratch). A crash replays the undo lists of the node's files backwards:
 * unsynced writes are lost, synced ones kept. With the torn model
 * "prefix" a crash keeps the first k unsynced writes of a file and a
 * 512-byte-aligned prefix of the next one: the "torn tail and nothing
 * after it" that the engine's WAL and the Raft store say they survive.
 *
 * Files are keyed by (dev, ino), so reuse of fd numbers never confuses
 * them, and the disk holds its own open description of every file it
 * knows: a file system gives a freed inode's number to the next new file
 * (ext4 at once, tmpfs seldom), and a record keyed by a number the file
 * system reused would take one node's new file for another node's dead
 * one (its owner, its undo list, its place in the revert's draws), so
 * the run would depend on the file system and on what else ran beside
 * it. A seed must replay anywhere. Files no directory names any more are
 * forgotten when a new file appears and before a crash's revert. Not
 * hooked, so durable at once (weaker, sound): open, ftruncate, rename,
 * unlink (§10.2).
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

/* One file of a node, known since its first hooked write or sync. held is
 * the disk's own open file description of it: while it is open the
 * inode's number cannot be given to another file, so (dev, ino) names
 * this file and no other for as long as the record lives. */
struct disk_file {
    dev_t dev;
    ino_t ino;
    int held;  /* O_RDWR (a directory: O_RDONLY); owned */
    int owner; /* node index */
    struct disk_write *writes;
    size_t count;
    size_t capacity;
};

struct sim_disk {
    struct sim *sim;
    struct disk_file *files; /* in order of first sight */
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

static void drop_writes(struct disk_file *file)
{
    for (size_t i = 0; i < file->count; i++) {
        common_free(file->writes[i].old);
    }
    file->count = 0;
}

static void file_release(struct disk_file *file)
{
    drop_writes(file);
    common_free(file->writes);
    close(file->held);
}

/* Forgets the files no directory names any more (unlinked, or renamed
 * over): what they held can no longer be read after a crash, and
 * closing them lets the file system reuse their numbers. The survivors
 * keep their order, so the revert's draws stay in the same order. */
static void prune_deleted(struct sim_disk *disk)
{
    size_t kept = 0;

    for (size_t i = 0; i < disk->count; i++) {
        struct stat st;

        if (fstat(disk->files[i].held, &st) == 0 && st.st_nlink == 0) {
            file_release(&disk->files[i]);
            continue;
        }
        disk->files[kept++] = disk->files[i];
    }
    disk->count = kept;
}

/* Opens the disk's own description of fd's file (through /proc, so an
 * unlinked file opens too, and never a dup: the engine's F_OFD_SETLK lock
 * belongs to the product's description and must go when it closes). */
static int hold_open(int fd, const struct stat *st)
{
    char link[64];
    int flags = S_ISDIR(st->st_mode) ? O_RDONLY | O_DIRECTORY : O_RDWR;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    return open(link, flags | O_CLOEXEC);
}

static struct disk_file *file_add(struct sim_disk *disk, int fd,
                                  const struct stat *st)
{
    struct disk_file probe = {.dev = st->st_dev, .ino = st->st_ino};
    char link[64], path[DISK_PATH_BYTES];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0) {
        return NULL;
    }
    path[n] = '\0';
    probe.owner = owner_of(disk, path);
    if (probe.owner < 0) {
        return NULL;
    }
    probe.held = hold_open(fd, st);
    ASSERT(probe.held >= 0); /* our own file, open in this process */
    prune_deleted(disk);
    if (disk->count == disk->capacity) {
        size_t capacity = disk->capacity ? disk->capacity * 2 : 16;
        struct disk_file *grown =
            common_realloc(disk->files, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        disk->files = grown;
        disk->capacity = capacity;
    }
    disk->files[disk->count] = probe;
    return &disk->files[disk->count++];
}

/* The record of fd's file (added at its first sight), or NULL when it is
 * not one of the nodes' files. Keyed by (dev, ino): a record's held
 * description keeps the number from being reused (see struct disk_file),
 * so a match is the same file, whatever names it has had since. */
static struct disk_file *file_find(struct sim_disk *disk, int fd)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        return NULL;
    }
    for (size_t i = 0; i < disk->count; i++) {
        struct disk_file *file = &disk->files[i];

        if (file->dev == st.st_dev && file->ino == st.st_ino) {
            return file;
        }
    }
    return file_add(disk, fd, &st);
}

/* Saves the pre-image of [offset, offset + size) of file (read through
 * the held description: the product's may be write-only). */
static void save_pre_image(struct disk_file *file, size_t size, int64_t offset)
{
    struct disk_write w = {.offset = offset, .size = size};
    struct stat st;
    ssize_t got;
    int rc = fstat(file->held, &st);

    ASSERT(rc == 0);
    w.old_size = st.st_size;
    w.old = common_malloc(size > 0 ? size : 1);
    ASSERT(w.old != NULL);
    got = offset < st.st_size ? pread(file->held, w.old, size, offset) : 0;
    ASSERT(got >= 0);
    w.old_bytes = (size_t)got;
    if (file->count == file->capacity) {
        size_t capacity = file->capacity ? file->capacity * 2 : 8;
        struct disk_write *grown =
            common_realloc(file->writes, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        file->writes = grown;
        file->capacity = capacity;
    }
    file->writes[file->count++] = w;
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
    struct disk_file *file = file_find(disk, fd);

    if (file == NULL) {
        return (long)pwrite(fd, bytes, size, offset);
    }
    if (disk->frozen[file->owner]) {
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
        sim_trace(disk->sim, file->owner, "enospc", (uint64_t)offset, size);
        errno = ENOSPC;
        return -1;
    }
    save_pre_image(file, size, offset);
    (void)point_crash_hit(disk, file->owner);
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

/* Reverts file's unsynced writes: all of them, or (torn) all after the
 * first `kept` and the tail of write kept+1 past keep_bytes. Through the
 * held description: whatever the file is called now. */
static void revert_file(struct disk_file *file, size_t kept, size_t keep_bytes)
{
    for (size_t i = file->count; i > kept; i--) {
        revert_write(file->held, &file->writes[i - 1],
                     i - 1 == kept ? keep_bytes : 0);
    }
    drop_writes(file);
}

static int hook_fsync_common(struct sim_disk *disk, int fd)
{
    struct disk_file *file = file_find(disk, fd);

    if (file == NULL) {
        return 0; /* not a node's file: nothing to lose */
    }
    if (disk->frozen[file->owner]) {
        errno = EIO; /* as the frozen disk's writes */
        return -1;
    }
    if (disk->faults &&
        sim_rng_chance(&disk->sim->rng[SIM_RNG_DISK],
                       disk->sim->config.fsync_eio_probability)) {
        /* fsyncgate: the kernel drops the dirty pages and reports once. */
        sim_trace(disk->sim, file->owner, "fsynceio", file->count, 0);
        revert_file(file, 0, 0);
        errno = EIO;
        return -1;
    }
    drop_writes(file);
    (void)point_crash_hit(disk, file->owner);
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
        file_release(&disk->files[i]);
    }
    common_free(disk->files);
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

    prune_deleted(disk);
    for (size_t i = 0; i < disk->count; i++) {
        struct disk_file *file = &disk->files[i];
        size_t kept = 0, keep_bytes = 0;

        if (file->owner != (int)node || file->count == 0) {
            continue;
        }
        if (disk->sim->config.torn == SIM_TORN_PREFIX) {
            kept = (size_t)sim_rng_below(rng, file->count + 1);
            if (kept < file->count) {
                keep_bytes =
                    (size_t)sim_rng_below(
                        rng, file->writes[kept].size / DISK_SECTOR_BYTES + 1) *
                    DISK_SECTOR_BYTES;
                if (keep_bytes >= file->writes[kept].size) {
                    keep_bytes = 0;
                }
            }
        }
        sim_trace(disk->sim, (int)node, "revert", file->count - kept,
                  keep_bytes);
        revert_file(file, kept, keep_bytes);
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
        if (disk->files[i].owner != (int)node) {
            continue;
        }
        for (size_t w = 0; w < disk->files[i].count; w++) {
            bytes += disk->files[i].writes[w].size;
        }
    }
    return bytes;
}
