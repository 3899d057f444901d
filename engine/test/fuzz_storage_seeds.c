/* SPDX-License-Identifier: MIT
 *
 * fuzz_storage_seeds.c: writes the seed corpus of fuzz_storage into the
 * directory named by its argument (`make fuzz` runs it into the build
 * directory), so the repository holds the SQL that builds the seeds rather
 * than opaque binaries. Each corpus database of storage_corpus.h becomes
 * inputs in fuzz_storage's format: with checksum repair on (mutations reach
 * the structure behind the checksums), with it off (mutations meet the
 * checksums), and with the WAL cut inside its last record.
 */
#include <stdio.h>
#include <stdlib.h>

#include "storage_corpus.h"

/* One input: flags, main size, main bytes, WAL bytes. */
static int write_seed(const char *dir, const char *name, const char *variant,
                      uint8_t flags, const uint8_t *main_file, size_t main_size,
                      const uint8_t *wal, size_t wal_size)
{
    char path[1024];
    size_t size = 5 + main_size + wal_size;
    uint8_t *input = malloc(size);
    int rc;

    if (input == NULL) {
        return COMMON_ENOMEM;
    }
    input[0] = flags;
    common_put_u32le(input + 1, (uint32_t)main_size);
    if (main_size > 0) {
        memcpy(input + 5, main_file, main_size);
    }
    if (wal_size > 0) {
        memcpy(input + 5 + main_size, wal, wal_size);
    }
    snprintf(path, sizeof(path), "%s/%s-%s", dir, name, variant);
    rc = storage_corpus_write(path, input, size);
    free(input);
    return rc;
}

static int write_seeds(const char *dir, size_t which)
{
    const char *name = storage_corpus_dbs[which].name;
    const char *tmp = getenv("TMPDIR");
    char scratch[512], db[600], wal[620];
    uint8_t *main_file = NULL, *log = NULL;
    size_t main_size = 0, wal_size = 0;
    int rc;

    snprintf(scratch, sizeof(scratch), "%s/sinew-seeds-XXXXXX",
             tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(scratch) == NULL) {
        return -errno;
    }
    snprintf(db, sizeof(db), "%s/seed.sinew", scratch);
    snprintf(wal, sizeof(wal), "%s-wal", db);
    rc = storage_corpus_build(db, which, NULL, NULL);
    rc = rc ? rc : storage_corpus_read(db, &main_file, &main_size);
    rc = rc ? rc : storage_corpus_read(wal, &log, &wal_size);
    rc = rc ? rc
            : write_seed(dir, name, "repaired", 3, main_file, main_size, log,
                         wal_size);
    rc = rc ? rc
            : write_seed(dir, name, "raw", 0, main_file, main_size, log,
                         wal_size);
    if (rc == 0 && wal_size > 40) {
        rc = write_seed(dir, name, "torn", 3, main_file, main_size, log,
                        wal_size - 5);
    }
    free(main_file);
    free(log);
    unlink(wal);
    unlink(db);
    rmdir(scratch);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < STORAGE_CORPUS_DB_COUNT; i++) {
        int rc = write_seeds(argv[1], i);

        if (rc != 0) {
            fprintf(stderr, "%s: %s: %s\n", argv[0], storage_corpus_dbs[i].name,
                    engine_strerror(rc));
            return 1;
        }
    }
    return 0;
}
