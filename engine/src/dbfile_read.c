/* SPDX-License-Identifier: MIT
 *
 * dbfile_read.c: reading a main file (docs/formats.md, "Main file"): its
 * header, then the catalog, whose CREATE statements run again, then each
 * table's segments, whose rows go into the table as they were. Also the
 * verification PRAGMA integrity_check runs over the file's bytes.
 */
#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "engine_int.h"
#include "storage_int.h"

static const uint8_t dbfile_magic[8] = {'s', 'i', 'n', 'e', 'w', 'D', 'B', 0};
#define DBFILE_VERSION 2

void engine__dbfile_header_encode(uint8_t *out, uint64_t generation,
                                  uint64_t commit_seq, const uint8_t *body,
                                  size_t body_size, int64_t user_version)
{
    memcpy(out, dbfile_magic, sizeof(dbfile_magic));
    common_put_u32le(out + 8, DBFILE_VERSION);
    common_put_u32le(out + 12, ENGINE__DBFILE_HEADER_SIZE);
    common_put_u64le(out + 16, generation);
    common_put_u64le(out + 24, commit_seq);
    common_put_u64le(out + 32, body_size);
    common_put_u64le(out + 40, common_checksum64(body, body_size, generation));
    common_put_u64le(out + 48, (uint64_t)user_version);
    common_put_u64le(out + 56, common_checksum64(out, 56, 0));
}

int engine__dbfile_header_decode(const uint8_t *bytes, size_t size,
                                 struct engine_dbfile_header *out)
{
    const uint8_t *body;

    /* bytes is NULL for an empty file: no pointer is formed before the
     * sizes are checked. */
    if (size < sizeof(dbfile_magic) ||
        memcmp(bytes, dbfile_magic, sizeof(dbfile_magic)) != 0) {
        return ENGINE_ENOTADB;
    }
    if (size < ENGINE__DBFILE_HEADER_SIZE ||
        common_get_u64le(bytes + 56) != common_checksum64(bytes, 56, 0) ||
        common_get_u32le(bytes + 8) != DBFILE_VERSION ||
        common_get_u32le(bytes + 12) != ENGINE__DBFILE_HEADER_SIZE) {
        return ENGINE_ECORRUPT;
    }
    out->generation = common_get_u64le(bytes + 16);
    out->commit_seq = common_get_u64le(bytes + 24);
    out->body_size = common_get_u64le(bytes + 32);
    out->user_version = (int64_t)common_get_u64le(bytes + 48);
    body = bytes + ENGINE__DBFILE_HEADER_SIZE;
    if (out->body_size != size - ENGINE__DBFILE_HEADER_SIZE ||
        common_get_u64le(bytes + 40) !=
            common_checksum64(body, (size_t)out->body_size, out->generation)) {
        return ENGINE_ECORRUPT;
    }
    return 0;
}

/* A length-prefixed text as a NUL-terminated copy in buf. */
static int get_text(struct common_reader *reader, struct common_buf *buf)
{
    uint64_t size;
    const uint8_t *bytes;

    common_buf_truncate(buf, 0);
    if (common_reader_varint(reader, &size) != 0 ||
        common_reader_bytes(reader, (size_t)size, &bytes) != 0 ||
        memchr(bytes, 0, (size_t)size) != NULL) {
        return ENGINE_ECORRUPT;
    }
    if (common_buf_append(buf, bytes, (size_t)size) != 0 ||
        common_buf_append_byte(buf, 0) != 0) {
        return COMMON_ENOMEM;
    }
    return 0;
}

int engine__schema_check_one(const char *sql, unsigned kinds)
{
    struct engine_arena arena;
    struct ast_stmt *stmt = NULL, *extra = NULL;
    size_t size = strlen(sql), tail = 0, rest = 0, error_offset = 0;
    char errmsg[ENGINE__ERRMSG_SIZE];
    int rc;

    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, size, &stmt, &tail, errmsg, sizeof(errmsg),
                       &error_offset);
    if (rc == 0 && (stmt == NULL || !((kinds >> stmt->kind) & 1u))) {
        rc = ENGINE_ECORRUPT;
    }
    if (rc == 0) {
        /* Nothing but space, comments and semicolons may follow. */
        rc = engine__parse(&arena, sql + tail, size - tail, &extra, &rest,
                           errmsg, sizeof(errmsg), &error_offset);
        rc = rc == 0 && extra != NULL ? ENGINE_ECORRUPT : rc;
    }
    engine__arena_close(&arena);
    return rc == 0 || rc == COMMON_ENOMEM ? rc : ENGINE_ECORRUPT;
}

int engine__dbfile_run_schema(struct engine_db *db, const char *sql,
                              unsigned kinds)
{
    /* Parsed before it runs: nothing else may run. */
    int rc = engine__schema_check_one(sql, kinds);

    if (rc == 0) {
        /* System tables (system_table.c) are created like any. */
        rc = engine_exec_system(db, sql, NULL, NULL);
    }
    return rc == 0 || rc == COMMON_ENOMEM ? rc : ENGINE_ECORRUPT;
}

static int load_catalog(struct engine_db *db, struct common_reader *reader,
                        struct common_buf *text)
{
    uint64_t count;
    int rc = common_reader_varint(reader, &count) ? ENGINE_ECORRUPT : 0;

    for (uint64_t i = 0; rc == 0 && i < count; i++) {
        uint8_t kind;

        if (common_reader_byte(reader, &kind) != 0 ||
            (kind != ENGINE__DBFILE_TABLE && kind != ENGINE__DBFILE_INDEX &&
             kind != ENGINE__DBFILE_VIEW && kind != ENGINE__DBFILE_TRIGGER)) {
            return ENGINE_ECORRUPT;
        }
        rc = get_text(reader, text);
        if (rc == 0) {
            rc = engine__dbfile_run_schema(
                db, (const char *)text->data,
                kind == ENGINE__DBFILE_TABLE   ? 1u << AST_STMT_CREATE_TABLE
                : kind == ENGINE__DBFILE_INDEX ? 1u << AST_STMT_CREATE_INDEX
                : kind == ENGINE__DBFILE_VIEW  ? 1u << AST_STMT_CREATE_VIEW
                                               : 1u << AST_STMT_CREATE_TRIGGER);
        }
    }
    return rc;
}

static int load_segment(struct engine_table *table,
                        const struct engine_segment *segment,
                        struct engine_value *row)
{
    for (uint32_t r = 0; r < segment->row_count; r++) {
        size_t slot;
        int rc;

        if (engine__table_find_rowid(table, segment->rowids[r]) >= 0) {
            return ENGINE_ECORRUPT;
        }
        for (size_t c = 0; c < table->column_count; c++) {
            row[c] = segment->columns[c][r];
        }
        rc = engine__table_insert(table, segment->rowids[r], row, &slot);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* One table's section: name, column count, segments, index section. table
 * is NULL when only verifying. */
static int read_table(struct engine_db *db, struct common_reader *reader,
                      struct common_buf *text, uint64_t generation)
{
    struct engine_table *table = NULL;
    struct engine_value *row = NULL;
    uint64_t columns, segments;
    size_t rows = 0;
    int rc = get_text(reader, text);

    if (rc == 0 && db != NULL) {
        table = engine__catalog_find(db, (const char *)text->data);
    }
    if (rc != 0 || common_reader_varint(reader, &columns) != 0 ||
        common_reader_varint(reader, &segments) != 0 || columns == 0 ||
        columns > ENGINE_MAX_COLUMNS || (db != NULL && table == NULL) ||
        (table != NULL && table->column_count != columns)) {
        return rc ? rc : ENGINE_ECORRUPT;
    }
    row = common_malloc_array((size_t)columns, sizeof(*row));
    rc = row == NULL ? COMMON_ENOMEM : 0;
    if (table != NULL) {
        table->bulk_loading = true;
    }
    for (uint64_t s = 0; rc == 0 && s < segments; s++) {
        struct engine_segment segment;

        rc = engine__segment_get(reader, (size_t)columns, generation, &segment);
        if (rc == 0 && table != NULL) {
            rc = load_segment(table, &segment, row);
        }
        if (rc == 0) {
            rows += segment.row_count;
            engine__segment_free(&segment);
        }
    }
    rc = rc ? rc : engine__dbfile_get_indexes(reader, table, rows);
    if (table != NULL) {
        table->bulk_loading = false;
    }
    common_free(row);
    return rc;
}

/* The body after the header: catalog (run when db is not NULL, else only
 * parsed), then the tables. */
static int read_body(struct engine_db *db, const uint8_t *bytes, size_t size,
                     uint64_t generation)
{
    struct common_reader reader;
    struct common_buf text;
    uint64_t tables;
    int rc;

    common_buf_init(&text, SIZE_MAX);
    common_reader_init(&reader, bytes + ENGINE__DBFILE_HEADER_SIZE,
                       size - ENGINE__DBFILE_HEADER_SIZE);
    if (db != NULL) {
        rc = load_catalog(db, &reader, &text);
    } else {
        struct engine_db *scratch = NULL;

        rc = engine_open(NULL, &scratch);
        rc = rc ? rc : load_catalog(scratch, &reader, &text);
        engine_close(scratch);
    }
    if (rc == 0 && (common_reader_varint(&reader, &tables) != 0 ||
                    (db != NULL && tables != db->table_count))) {
        rc = ENGINE_ECORRUPT;
    }
    for (uint64_t t = 0; rc == 0 && t < tables; t++) {
        rc = read_table(db, &reader, &text, generation);
    }
    if (rc == 0 && common_reader_remaining(&reader) != 0) {
        rc = ENGINE_ECORRUPT;
    }
    common_buf_close(&text);
    return rc;
}

int engine__dbfile_load(struct engine_db *db,
                        struct engine_wal_position *position,
                        const uint8_t *bytes, size_t size)
{
    struct engine_dbfile_header header;
    int rc = engine__dbfile_header_decode(bytes, size, &header);

    rc = rc ? rc : read_body(db, bytes, size, header.generation);
    if (rc == 0) {
        position->generation = header.generation;
        position->commit_seq = header.commit_seq;
        db->user_version = header.user_version;
    }
    return rc;
}

size_t engine__dbfile_verify(const uint8_t *bytes, size_t size,
                             void (*emit)(void *ctx, const char *message),
                             void *ctx)
{
    struct engine_dbfile_header header;
    int rc = engine__dbfile_header_decode(bytes, size, &header);
    char message[128];

    rc = rc ? rc : read_body(NULL, bytes, size, header.generation);
    if (rc == 0) {
        return 0;
    }
    snprintf(message, sizeof(message), "main file: %s", engine_strerror(rc));
    emit(ctx, message);
    return 1;
}
