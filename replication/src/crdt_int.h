/* SPDX-License-Identifier: MIT
 *
 * crdt_int.h: what the crdt files share (crdt.c, crdt_build.c,
 * crdt_store.c, crdt_table.c, crdt_merge.c, crdt_log.c, crdt_pending.c,
 * capture.c, capture_schema.c): the
 * state, the change-set builder, the register primitives over the system
 * tables.
 *
 * Registers are compared by K = (hlc, site) (crdt.md §6.1). A record wins
 * against a register when its K is greater or equal: equal K only happens
 * between records of one transaction (one HLC per transaction, one site),
 * where the later record is the later write.
 */
#ifndef SINEW_REPLICATION_CRDT_INT_H
#define SINEW_REPLICATION_CRDT_INT_H

#include <stdbool.h>

#include "changeset.h"
#include "common.h"
#include "crdt.h"
#include "engine.h"
#include "hlc.h"

/* The prepared statements over the system tables, made on first use in a
 * transaction and finalized at its end (replication__crdt_stmts_close). */
enum replication__crdt_stmt {
    CRDT_ROW_GET,
    CRDT_ROW_PUT,
    CRDT_CELL_GET,
    CRDT_CELL_PUT,
    CRDT_CELL_DROP,
    CRDT_CELL_SHADOWS,
    CRDT_CELL_SHADOW_SET,
    CRDT_CELL_UNSHADOW,
    CRDT_VV_GET,
    CRDT_VV_PUT,
    CRDT_META_GET,
    CRDT_META_PUT,
    CRDT_LOG_PUT,
    CRDT_PENDING_PUT,
    CRDT_PENDING_MARK,
    CRDT_PENDING_DROP,
    CRDT_STMT_COUNT
};

struct replication__crdt {
    struct engine_db *db; /* borrowed */
    struct hlc *clock;    /* borrowed */
    struct common_log log;
    int (*gate)(void *ctx, uint64_t *epoch); /* crdt.h's config */
    void *gate_ctx;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    struct engine_stmt *stmts[CRDT_STMT_COUNT]; /* NULL until used */
    struct replication__changeset **held; /* owned copies, arrival order */
    bool *held_deferred;                  /* per held: clock ahead */
    size_t held_count;
};

/* A register's K. */
struct replication__crdt_k {
    uint64_t hlc;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
};

int replication__crdt_k_cmp(const struct replication__crdt_k *a,
                            const struct replication__crdt_k *b);

/* ---- memory for change sets (crdt_build.c) ---- */

/* Bump allocation in chunks, freed whole. */
struct replication__arena_chunk;
struct replication__arena {
    struct replication__arena_chunk *head;
};

void *replication__arena_alloc(struct replication__arena *arena, size_t size);
void replication__arena_close(struct replication__arena *arena);

/* A change set being put together; its pointers lead into the builder's
 * own memory. */
struct replication__crdt_builder {
    struct replication__changeset cs; /* first: owned copies cast to it */
    struct replication__arena arena;
    struct replication__table *tables;
    size_t table_capacity;
    struct replication__record *records;
    size_t record_capacity;
};

void replication__crdt_builder_init(struct replication__crdt_builder *b);
void replication__crdt_builder_close(struct replication__crdt_builder *b);

/* The index of the table named name (copied), added if new. */
int replication__crdt_builder_table(struct replication__crdt_builder *b,
                                    const char *name, size_t name_size,
                                    uint32_t *index);

/* Sets table index's column names (copied). */
int replication__crdt_builder_columns(struct replication__crdt_builder *b,
                                      uint32_t index,
                                      const char *const *columns, size_t count);

/* Appends rec, deep-copying its key, value and sql. */
int replication__crdt_builder_add(struct replication__crdt_builder *b,
                                  const struct replication__record *rec);

/* Copies a value's bytes into the arena. */
int replication__crdt_value_copy(struct replication__arena *arena,
                                 const struct engine_change_value *in,
                                 struct engine_change_value *out);

/* ---- key encoding (crdt_key.c) ---- */

/* The canonical bytes of a key: per value a type byte, then INTEGER and
 * FLOAT as 8 bytes big-endian, TEXT and BLOB as a varint size and the
 * bytes, NULL as nothing. out is the caller's, initialized. */
int replication__crdt_key_encode(const struct engine_change_value *key,
                                 size_t count, struct common_buf *out);

/* Decodes bytes into values allocated in arena; bytes must outlive them
 * (TEXT and BLOB values point into it). COMMON_ECORRUPT if malformed. */
int replication__crdt_key_decode(const void *bytes, size_t size,
                                 struct replication__arena *arena,
                                 struct engine_change_value **key,
                                 size_t *count);

int replication__crdt_bind_value(struct engine_stmt *stmt, int index,
                                 const struct engine_change_value *value);

/* Column column of stmt's current row, borrowed until the next step. */
void replication__crdt_column_value(struct engine_stmt *stmt, int column,
                                    struct engine_change_value *out);

/* ---- system tables (crdt_store.c) ---- */

int replication__crdt_store_create(struct engine_db *db);

/* The statement id, reset and unbound. */
int replication__crdt_stmt(struct replication__crdt *crdt,
                           enum replication__crdt_stmt id,
                           struct engine_stmt **out);
void replication__crdt_stmts_close(struct replication__crdt *crdt);

/* Steps a statement that returns no row. */
int replication__crdt_step_done(struct replication__crdt *crdt,
                                struct engine_stmt *stmt);

/* Meta values as integers: 0 when missing. */
int replication__crdt_meta_get(struct replication__crdt *crdt, const char *name,
                               uint64_t *out);
int replication__crdt_meta_put(struct replication__crdt *crdt, const char *name,
                               uint64_t value);

int replication__crdt_vv_get(struct replication__crdt *crdt,
                             const uint8_t *site, uint64_t *head);
int replication__crdt_vv_put(struct replication__crdt *crdt,
                             const uint8_t *site, uint64_t head);

/* The row key (table name, encoded pk) a register is addressed by. */
struct replication__crdt_row {
    const char *table;
    const void *pk;
    size_t pk_size;
};

/* Merges one existence record at k into the register (drops the row's
 * cells at or below k when it writes dead). *alive is the register after. */
int replication__crdt_merge_exist(struct replication__crdt *crdt,
                                  const struct replication__crdt_row *row,
                                  bool alive,
                                  const struct replication__crdt_k *k);

/* Merges one cell record at k; the value goes to the shadow when shadow is
 * true (the caller materializes), else the register only. */
int replication__crdt_merge_cell(struct replication__crdt *crdt,
                                 const struct replication__crdt_row *row,
                                 const char *column,
                                 const struct engine_change_value *value,
                                 bool shadow,
                                 const struct replication__crdt_k *k);

/* The existence register: *found false when the row has none. */
int replication__crdt_row_get(struct replication__crdt *crdt,
                              const struct replication__crdt_row *row,
                              bool *found, bool *alive,
                              struct replication__crdt_k *k);

/* ---- the local change log (crdt_log.c) ---- */

/* Appends cs (borrowed) to the log, encoded, in the open transaction. */
int replication__crdt_log_append(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs);

/* ---- waiting change sets kept on disk (crdt_pending.c) ---- */

/* Each runs its own transaction (none may be open). put stores cs
 * (borrowed) encoded, as deferred (clock ahead) or waiting for a gap;
 * mark changes that flag; drop forgets it (no error when absent). */
int replication__crdt_pending_put(struct replication__crdt *crdt,
                                  const struct replication__changeset *cs,
                                  bool deferred);
int replication__crdt_pending_mark(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs,
                                   bool deferred);
int replication__crdt_pending_drop(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs);

/* Calls fn for each stored change set in the order they were kept; cs is
 * borrowed for the call. A non-zero return from fn stops and is returned;
 * COMMON_ECORRUPT and the decoder's errors for bytes that do not decode. */
typedef int (*replication__crdt_pending_cb)(
    void *ctx, const struct replication__changeset *cs, bool deferred);
int replication__crdt_pending_load(struct replication__crdt *crdt,
                                   replication__crdt_pending_cb fn, void *ctx);

/* ---- user tables (crdt_table.c) ---- */

/* A user table's shape, from PRAGMA table_info. */
struct replication__crdt_table {
    char *name;
    char **columns;
    size_t column_count;
    size_t *key_columns; /* declared PRIMARY KEY columns, key order */
    size_t key_count;    /* 0: keyed by rowid */
};

/* ENGINE_ESQL (via the engine) or REPLICATION_ESCHEMA when name is not a
 * table. *out is the caller's, freed with replication__crdt_table_free(). */
int replication__crdt_table_load(struct engine_db *db, const char *name,
                                 struct replication__crdt_table **out);
void replication__crdt_table_free(struct replication__crdt_table *table);

/* The index of column name, or -1. */
long replication__crdt_table_column(const struct replication__crdt_table *t,
                                    const char *name);

/* ---- merge and capture ---- */

int replication__crdt_merge(struct replication__crdt *crdt,
                            const struct replication__changeset *cs,
                            uint64_t stamp);

/* Checks every user table against crdt mode's schema rules: 0, or
 * ENGINE_ECONSTRAINT with message (size bytes) saying what breaks them. */
int replication__crdt_schema_check(struct engine_db *db, char *message,
                                   size_t size);

int replication__crdt_capture_hook(void *ctx, struct engine_db *db,
                                   struct engine_commit *commit);

#endif /* SINEW_REPLICATION_CRDT_INT_H */
