/* SPDX-License-Identifier: MIT
 *
 * storage_test.h: what the storage tests share: a scratch directory per
 * test, SQL helpers, and a dump of a whole database (every table's rows in
 * rowid order, each value with its storage class) that two databases are
 * compared by.
 */
#ifndef SINEW_ENGINE_STORAGE_TEST_H
#define SINEW_ENGINE_STORAGE_TEST_H

#include "common_test.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

struct scratch_dir {
    char path[PATH_MAX / 2];
    char db[PATH_MAX];
    char wal[PATH_MAX];
};

static inline void scratch_dir_make(struct scratch_dir *dir)
{
    const char *base = getenv("TMPDIR");

    snprintf(dir->path, sizeof(dir->path), "%s/sinew-storage-XXXXXX",
             base != NULL ? base : "/tmp");
    assert_non_null(mkdtemp(dir->path));
    snprintf(dir->db, sizeof(dir->db), "%s/app.sinew", dir->path);
    snprintf(dir->wal, sizeof(dir->wal), "%s/app.sinew-wal", dir->path);
}

static inline void scratch_dir_remove(struct scratch_dir *dir)
{
    char tmp[PATH_MAX + 8];

    snprintf(tmp, sizeof(tmp), "%s-tmp", dir->db);
    unlink(dir->db);
    unlink(dir->wal);
    unlink(tmp);
    assert_int_equal(rmdir(dir->path), 0);
}

static inline struct engine_db *storage_open(const char *path)
{
    struct engine_db *db = NULL;
    int rc = engine_open(path, &db);

    if (rc != 0) {
        fail_msg("open %s: %s",
                 path != NULL ? path : ":memory:", engine_strerror(rc));
    }
    return db;
}

static inline void storage_exec(struct engine_db *db, const char *sql)
{
    if (engine_exec(db, sql, NULL, NULL) != 0) {
        fail_msg("%s: %s", sql, engine_errmsg(db));
    }
}

/* PRAGMA integrity_check answers one row, "ok". */
static inline void assert_integrity_ok(struct engine_db *db)
{
    struct engine_stmt *stmt = NULL;

    assert_int_equal(
        engine_prepare(db, "PRAGMA integrity_check", -1, &stmt, NULL), 0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_string_equal(engine_column_text(stmt, 0), "ok");
    assert_int_equal(engine_step(stmt), ENGINE_DONE);
    engine_finalize(stmt);
}

/* Appends the rows of one query, each value as "type:text". */
static inline void dump_query(struct engine_db *db, const char *sql,
                              struct common_buf *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        for (int c = 0; c < engine_column_count(stmt); c++) {
            int type = engine_column_type(stmt, c);
            const void *bytes = type == ENGINE_BLOB
                                    ? engine_column_blob(stmt, c)
                                    : (const void *)engine_column_text(stmt, c);
            int size = engine_column_bytes(stmt, c);

            assert_int_equal(common_buf_append_byte(out, (uint8_t)('0' + type)),
                             0);
            for (int i = 0; i < size; i++) {
                uint8_t byte = ((const uint8_t *)bytes)[i];
                char hex[3];

                /* Blobs in hex, so a dump prints whole. */
                snprintf(hex, sizeof(hex), "%02x", byte);
                assert_int_equal(type == ENGINE_BLOB
                                     ? common_buf_append(out, hex, 2)
                                     : common_buf_append_byte(out, byte),
                                 0);
            }
            assert_int_equal(common_buf_append_byte(out, '|'), 0);
        }
        assert_int_equal(common_buf_append_byte(out, '\n'), 0);
    }
    assert_int_equal(rc, ENGINE_DONE);
    engine_finalize(stmt);
}

/* The schema, then every table's rows. The caller closes the buffer. */
static inline void dump_db(struct engine_db *db, struct common_buf *out)
{
    struct engine_stmt *stmt = NULL;
    char sql[512];

    common_buf_init(out, SIZE_MAX);
    dump_query(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema", out);
    dump_query(db, "PRAGMA user_version", out);
    assert_int_equal(engine_prepare(db,
                                    "SELECT name FROM sqlite_schema WHERE "
                                    "type = 'table' ORDER BY name",
                                    -1, &stmt, NULL),
                     0);
    while (engine_step(stmt) == ENGINE_ROW) {
        snprintf(sql, sizeof(sql), "SELECT rowid, * FROM \"%s\" ORDER BY rowid",
                 engine_column_text(stmt, 0));
        dump_query(db, sql, out);
    }
    engine_finalize(stmt);
    assert_int_equal(common_buf_append_byte(out, 0), 0);
}

static inline void assert_same_db(struct engine_db *a, struct engine_db *b)
{
    struct common_buf left, right;

    dump_db(a, &left);
    dump_db(b, &right);
    if (left.size != right.size ||
        (left.size > 0 && memcmp(left.data, right.data, left.size) != 0)) {
        size_t line = 0, at = 0;

        while (at < left.size && at < right.size &&
               left.data[at] == right.data[at]) {
            line = left.data[at++] == '\n' ? at : line;
        }
        fail_msg("databases differ from byte %zu:\n%.200s\n----\n%.200s", line,
                 (const char *)left.data + line,
                 (const char *)right.data + line);
    }
    common_buf_close(&left);
    common_buf_close(&right);
}

#endif /* SINEW_ENGINE_STORAGE_TEST_H */
