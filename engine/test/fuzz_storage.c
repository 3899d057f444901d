/* SPDX-License-Identifier: MIT
 *
 * fuzz_storage.c: libFuzzer target for the readers of a database's files:
 * the main file (header, catalog, segments, column blocks) and the WAL
 * (header, records, commit payloads). A damaged file must fail the open
 * with a clear code (ENGINE_ECORRUPT, ENGINE_ENOTADB, ENGINE_EIO,
 * COMMON_ENOMEM) and never crash, leak, hang or hit undefined behaviour;
 * a database that opens must answer queries, take a write, checkpoint, and
 * open again.
 *
 * Input: a flags byte, a u32le main file size, the main file's bytes (as
 * many as follow, up to that size), then the WAL's bytes. Flags: bit 0
 * recomputes the main file's sizes and checksums, bit 1 the WAL's
 * (storage_corpus.h), so mutations get past the checksums to the checks
 * behind them; bit 2 leaves the WAL file out. A main file of 0 bytes is
 * left out. Seeds: fuzz_storage_seeds writes valid databases (`make fuzz`).
 *
 * The files live in a private directory made once per process; fsync is a
 * no-op through engine_io_hooks, since durability is not under test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "storage_corpus.h"

#define FLAG_REPAIR_MAIN 1u
#define FLAG_REPAIR_WAL 2u
#define FLAG_NO_WAL 4u
#define INPUT_HEADER_SIZE 5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_paths {
    char dir[256];
    char db[300];
    char wal[310];
    char tmp[310];
};

static struct fuzz_paths paths;

static long pass_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                        int64_t offset)
{
    (void)ctx;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

static int skip_fsync(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    return 0;
}

static const struct engine_io_hooks fast_hooks = {
    .pwrite = pass_pwrite,
    .fsync = skip_fsync,
};

static void remove_files(void)
{
    unlink(paths.db);
    unlink(paths.wal);
    unlink(paths.tmp);
}

static void remove_dir(void)
{
    remove_files();
    rmdir(paths.dir);
}

static void setup_once(void)
{
    const char *base = getenv("TMPDIR");

    if (paths.dir[0] != '\0') {
        return;
    }
    snprintf(paths.dir, sizeof(paths.dir), "%s/sinew-fuzz-storage-XXXXXX",
             base != NULL ? base : "/tmp");
    if (mkdtemp(paths.dir) == NULL) {
        abort();
    }
    snprintf(paths.db, sizeof(paths.db), "%s/f.sinew", paths.dir);
    snprintf(paths.wal, sizeof(paths.wal), "%s-wal", paths.db);
    snprintf(paths.tmp, sizeof(paths.tmp), "%s-tmp", paths.db);
    engine_io_hooks_set(&fast_hooks);
    atexit(remove_dir);
}

/* Whether rc is a code a damaged file may fail an open with. */
static bool is_damage_code(int rc)
{
    return rc == ENGINE_ECORRUPT || rc == ENGINE_ENOTADB || rc == ENGINE_EIO ||
           rc == COMMON_ENOMEM;
}

/* Writes the input's files: 0, COMMON_ENOMEM or -errno. */
static int write_files(const uint8_t *data, size_t size)
{
    uint8_t flags = data[0];
    size_t main_size = common_get_u32le(data + 1);
    const uint8_t *rest = data + INPUT_HEADER_SIZE;
    size_t rest_size = size - INPUT_HEADER_SIZE;
    uint8_t *copy = malloc(rest_size + 1);
    int rc = copy == NULL ? COMMON_ENOMEM : 0;

    main_size = main_size < rest_size ? main_size : rest_size;
    if (rc == 0) {
        memcpy(copy, rest, rest_size);
        if (flags & FLAG_REPAIR_MAIN) {
            (void)storage_corpus_fix_main(copy, main_size);
        }
        if (flags & FLAG_REPAIR_WAL) {
            storage_corpus_fix_wal(copy + main_size, rest_size - main_size,
                                   storage_corpus_generation(copy, main_size));
        }
    }
    if (rc == 0 && main_size > 0) {
        rc = storage_corpus_write(paths.db, copy, main_size);
    }
    if (rc == 0 && !(flags & FLAG_NO_WAL)) {
        rc = storage_corpus_write(paths.wal, copy + main_size,
                                  rest_size - main_size);
    }
    free(copy);
    return rc;
}

/* Steps a statement to its end, reading every column of every row. */
static void run_query(struct engine_db *db, const char *sql)
{
    struct engine_stmt *stmt = NULL;

    if (engine_prepare(db, sql, -1, &stmt, NULL) != 0 || stmt == NULL) {
        return;
    }
    while (engine_step(stmt) == ENGINE_ROW) {
        for (int c = 0; c < engine_column_count(stmt); c++) {
            (void)engine_column_type(stmt, c);
            (void)engine_column_blob(stmt, c);
            (void)engine_column_text(stmt, c);
            (void)engine_column_bytes(stmt, c);
        }
    }
    engine_finalize(stmt);
}

/* Reads every table whole, then writes: a row into the first table (any
 * error is fine), a table of its own (which must commit), a checkpoint. */
static void exercise(struct engine_db *db)
{
    struct engine_stmt *tables = NULL;
    char sql[512];
    bool first = true;

    if (engine_prepare(db,
                       "SELECT name FROM sqlite_schema WHERE type = 'table'",
                       -1, &tables, NULL) != 0) {
        return;
    }
    while (engine_step(tables) == ENGINE_ROW) {
        const char *name = (const char *)engine_column_text(tables, 0);

        if (name == NULL || strchr(name, '"') != NULL || strlen(name) > 400) {
            continue;
        }
        snprintf(sql, sizeof(sql), "SELECT rowid, * FROM \"%s\"", name);
        run_query(db, sql);
        if (first) {
            snprintf(sql, sizeof(sql),
                     "BEGIN; INSERT INTO \"%s\"(rowid) VALUES(NULL); COMMIT",
                     name);
            if (engine_exec(db, sql, NULL, NULL) != 0) {
                (void)engine_exec(db, "ROLLBACK", NULL, NULL);
            }
            first = false;
        }
    }
    engine_finalize(tables);
    run_query(db, "PRAGMA integrity_check");
    if (engine_exec(db,
                    "CREATE TABLE IF NOT EXISTS fuzz_own(x);"
                    "BEGIN; INSERT INTO fuzz_own VALUES(1), ('two'); COMMIT",
                    NULL, NULL) == ENGINE_ECORRUPT) {
        abort();
    }
    (void)engine_exec(db, "VACUUM", NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct engine_db *db = NULL;
    int rc;

    if (size < INPUT_HEADER_SIZE) {
        return 0;
    }
    setup_once();
    remove_files();
    if (write_files(data, size) != 0) {
        abort();
    }
    rc = engine_open(paths.db, &db);
    if (rc != 0 && !is_damage_code(rc)) {
        fprintf(stderr, "fuzz_storage: open failed with %d (%s)\n", rc,
                engine_strerror(rc));
        abort();
    }
    if (rc == 0) {
        exercise(db);
        engine_close(db);
        /* What the engine wrote itself it must read back. */
        db = NULL;
        rc = engine_open(paths.db, &db);
        if (rc != 0 && rc != COMMON_ENOMEM) {
            fprintf(stderr, "fuzz_storage: reopen failed with %d (%s)\n", rc,
                    engine_strerror(rc));
            abort();
        }
        engine_close(db);
    }
    remove_files();
    return 0;
}
