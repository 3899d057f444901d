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

/* The prepared statements over the system tables, made on first use and
 * kept prepared until the state is destroyed (replication__crdt_stmts_free;
 * the database must still be open then); replication__crdt_stmts_close()
 * resets them at the end of every transaction. */
enum replication__crdt_stmt {
    CRDT_ROW_GET,
    CRDT_ROW_PUT,
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

/* A register's K. */
struct replication__crdt_k {
    uint64_t hlc;
    uint8_t site[REPLICATION__SITE_ID_BYTES];
};

/* The existence register crdt_store.c read or wrote last, remembered for
 * the rest of the transaction: the records of one row come together, and
 * each SET checks the row's tombstone. Forgotten by
 * replication__crdt_stmts_close() (the end of every transaction, and of
 * every merge) and when the schema version moves. Sound while, between
 * two such points, sinew_crdt_row is written only through
 * replication__crdt_merge_exist(): the other writers (a dropped table's
 * cleanup, which is DDL; a snapshot install, which writes before its
 * merges; the collection of tombstones, in a transaction of its own)
 * keep to that. */
struct replication__crdt_exist {
    bool valid;
    uint64_t schema_version; /* engine_schema_version() when remembered */
    char table[64];          /* the row's address: table name, */
    uint8_t pk[64];          /* and encoded key */
    size_t pk_size;
    bool found;
    bool alive;
    struct replication__crdt_k k;
};

struct replication__crdt {
    struct engine_db *db; /* borrowed */
    struct hlc *clock;    /* borrowed */
    struct common_log log;
    int (*gate)(void *ctx, uint64_t *epoch); /* crdt.h's config */
    void *gate_ctx;
    int (*admit)(void *ctx, const struct replication__changeset *cs);
    void *admit_ctx;
    uint64_t fenced; /* held sets dropped because admit refused them */
    uint8_t site[REPLICATION__SITE_ID_BYTES];
    struct engine_stmt *stmts[CRDT_STMT_COUNT]; /* NULL until used */
    /* The user tables' shapes learned so far (crdt_table.c), owned; valid
     * while engine_schema_version() is shapes_version. */
    struct replication__crdt_table **shapes;
    size_t shape_count;
    uint64_t shapes_version;
    struct replication__crdt_exist exist; /* crdt_store.c's */
    struct replication__changeset **held; /* owned copies, arrival order */
    bool *held_deferred;                  /* per held: clock ahead */
    size_t held_count;
    uint64_t schema_hash; /* the user schema as the catalog last saw it */
    /* Change sets with records kept for a schema not here yet
     * (crdt_quarantine.c): rows of sinew_crdt_pending with reason
     * 'schema', and the schema hash they were last tried under. */
    size_t kept_count;
    uint64_t kept_hash;
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

/* Appends every change of the committing transaction to b as records
 * (capture.c; changeset.h: INSERT gives ALIVE and a SET of every column,
 * UPDATE a SET of each changed column, DELETE gives DEAD, DDL gives
 * SCHEMA). The SETs' columns are the engine's positions and b's tables
 * have no column names yet. Shared by crdt and quorum capture. */
int replication__crdt_collect(struct engine_commit *commit,
                              struct replication__crdt_builder *b);

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
/* At the end of a transaction: resets every statement (none stays
 * running), keeping them prepared. */
void replication__crdt_stmts_close(struct replication__crdt *crdt);
/* Finalizes every statement (when the state is destroyed). */
void replication__crdt_stmts_free(struct replication__crdt *crdt);

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

/* replication__crdt_merge_cell() that also says whether the record won:
 * *won true when the register now holds it. */
int replication__crdt_merge_cell_won(
    struct replication__crdt *crdt, const struct replication__crdt_row *row,
    const char *column, const struct engine_change_value *value, bool shadow,
    const struct replication__crdt_k *k, bool *won);

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

/* The bytes pending rows hold: cs (borrowed) encoded as one chunk,
 * appended to out (the caller's, initialized). */
int replication__crdt_pending_encode(const struct replication__changeset *cs,
                                     struct common_buf *out);

/* Calls fn for each stored change set that waits (reason 'wait', not the
 * kept records of crdt_quarantine.c) in the order they were kept; cs is
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

/* The shape of table name (NUL-terminated, borrowed), learned once per
 * schema version and kept in crdt: *out is borrowed until the schema
 * changes (DDL; the next call after it frees it). The errors of
 * replication__crdt_table_load(). */
int replication__crdt_shape(struct replication__crdt *crdt, const char *name,
                            struct replication__crdt_table **out);

/* Frees the shapes kept (when crdt is destroyed). */
void replication__crdt_shapes_free(struct replication__crdt *crdt);

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

/* Writes one local record's registers at k, in the open transaction: an
 * ALIVE or DEAD existence register, or a SET's cell (capture.c; the
 * bootstrap of rows from before replication writes its records alike). */
int replication__crdt_write_record(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs,
                                   const struct replication__record *rec,
                                   const struct replication__crdt_k *k);

/* Whether the NUL-separated list of names (crdt_schema.c) holds name. */
bool replication__crdt_names_have(const struct common_buf *list,
                                  const char *name);

/* The user tables' names, NUL-separated, in name order, appended to names
 * (the caller's, initialized) (capture_schema.c). */
int replication__crdt_table_names(struct engine_db *db,
                                  struct common_buf *names);

/* ---- schema (crdt_schema.c, crdt_ddl.c, crdt_quarantine.c,
 * crdt_bootstrap.c; crdt.md §6.8) ---- */

/* A hash of the user schema: every table and index of sqlite_schema by
 * type, name and SQL text (never 0). Equal on replicas whose schemas were
 * made by the same statements. */
int replication__crdt_schema_hash_of(struct engine_db *db, uint64_t *out);

/* Brings sinew_crdt_column, the columns this database's registers cover,
 * in line with the user tables, in the open transaction: a column gained
 * by a known table gets a register in every alive row, at the row's
 * existence K with the table's DEFAULT as its value (what an INSERT from a
 * schema without it writes, crdt.md §6.8); a vanished table is forgotten
 * (replication__crdt_schema_forget); a vanished column loses its cells.
 * Sets crdt->schema_hash. */
int replication__crdt_schema_sync(struct replication__crdt *crdt);

/* replication__crdt_schema_sync() in a transaction of its own (on open,
 * and when the schema changed behind crdt's back). */
int replication__crdt_schema_resync(struct replication__crdt *crdt);

/* Forgets the registers and catalog rows of table (NUL-terminated,
 * borrowed), dropped, in the open transaction: a table made later under
 * its name starts empty. */
int replication__crdt_schema_forget(struct replication__crdt *crdt,
                                    const char *table);

/* A local SCHEMA record sql (borrowed), met in commit order while the
 * commit's registers are written: when it drops a table, forgets it. */
int replication__crdt_schema_dropped(struct replication__crdt *crdt,
                                     const char *sql);

/* What one merge sets aside (crdt_quarantine.c) and fills in
 * (crdt_schema.c): the indexes of the records kept because they name a
 * table or column this database lacks, in record order, and per table of
 * the set the receiver's columns the origin's table lacks with their
 * DEFAULT values (computed on first use, forgotten when DDL runs). */
struct replication__crdt_fill;
struct replication__crdt_aside {
    size_t *kept; /* indexes into the set's records */
    size_t kept_count;
    size_t kept_capacity;
    struct replication__crdt_fill **fills; /* per set table; NULL: unknown */
    size_t table_count;
    struct replication__arena arena; /* the fills */
    int kept_delta; /* kept sets added (1) or removed (-1) on commit */
};

int replication__crdt_aside_init(struct replication__crdt_aside *aside,
                                 size_t table_count);
void replication__crdt_aside_close(struct replication__crdt_aside *aside);

/* Sets record index aside. */
int replication__crdt_aside_keep(struct replication__crdt_aside *aside,
                                 size_t index);

/* Hands the kept indexes to the caller (common_free them) and empties the
 * list, so they can be merged again once DDL made them applicable. */
void replication__crdt_aside_take(struct replication__crdt_aside *aside,
                                  size_t **kept, size_t *count);

/* Forgets the fills (the schema changed). */
void replication__crdt_aside_reshaped(struct replication__crdt_aside *aside);

/* In the merge's transaction, after its records: stores the kept records
 * of cs (borrowed) as one pending row with reason 'schema' (replacing
 * any), or, when replay (cs is itself a kept set), rewrites or removes
 * that row as fewer or no records stay kept. */
int replication__crdt_aside_save(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs,
                                 struct replication__crdt_aside *aside,
                                 bool replay);

/* After the merge's transaction committed: counts the kept set added or
 * removed, and logs it (WARN for the first kept set: the alarm). */
void replication__crdt_aside_commit(
    struct replication__crdt *crdt, const struct replication__changeset *cs,
    const struct replication__crdt_aside *aside);

/* After an ALIVE record of table index table of cs at k (the row's
 * register written): writes each receiver column the origin's table
 * lacked as its DEFAULT at k into row's registers (shadowed, for the merge
 * to materialize): the INSERT is treated as writing it (crdt.md §6.8). */
int replication__crdt_aside_fill(struct replication__crdt *crdt,
                                 struct replication__crdt_aside *aside,
                                 const struct replication__changeset *cs,
                                 uint32_t table,
                                 const struct replication__crdt_row *row,
                                 const struct replication__crdt_k *k);

/* How a replicated SCHEMA record went (crdt_ddl.c). */
enum replication__ddl_result {
    REPLICATION__DDL_APPLIED, /* it ran; the catalog is synced */
    REPLICATION__DDL_SKIPPED, /* a no-op here (logged): the table exists
                                 (same shape, or refused: another shape),
                                 the index exists, or the dropped object
                                 is already gone */
    REPLICATION__DDL_KEEP,    /* it failed here (a table or column it names
                                 is missing): keep it for later */
};

/* Runs the SCHEMA record sql of cs (both borrowed) in the merge's
 * transaction by crdt.md §6.8's rules; *out says how it went. */
int replication__crdt_ddl_merge(struct replication__crdt *crdt,
                                const struct replication__changeset *cs,
                                const char *sql,
                                enum replication__ddl_result *out);

/* The table a DROP TABLE statement drops, unquoted into name (size bytes):
 * true, or false for any other statement. */
bool replication__crdt_ddl_drops_table(const char *sql, char *name,
                                       size_t size);

/* Merges the records of cs (borrowed), a kept set read back from
 * sinew_crdt_pending, in a transaction of its own: no version, clock or
 * log bookkeeping (its version was applied when it first arrived). */
int replication__crdt_merge_kept(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs);

/* Merges cs (borrowed) as replication__crdt_merge() does, version vector,
 * log and clock bookkeeping included, but in the caller's open
 * transaction: one of a batch (replication__crdt_apply_batch). */
int replication__crdt_merge_batched(struct replication__crdt *crdt,
                                    const struct replication__changeset *cs);

/* Merges the records of cs (borrowed) into the registers and rows in the
 * caller's open transaction, keeping what does not apply as a kept set:
 * no version, clock or log bookkeeping (a snapshot install merging back
 * change sets of its log, crdt_snapshot_install.c). */
int replication__crdt_merge_within(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs);

/* Reads how many kept sets there are (on open). */
int replication__crdt_kept_load(struct replication__crdt *crdt);

/* Merges the kept records that the schema now has room for, when it
 * changed since they were last tried: each kept set in a transaction of
 * its own, in the order they were kept, again while that changes the
 * schema further. A schema changed behind crdt's back (not through the
 * commit hook or a merge) is synced first. */
int replication__crdt_kept_retry(struct replication__crdt *crdt);

/* Gives the rows of the user tables that have no registers (they existed
 * before crdt mode first opened here) an INSERT's registers at
 * K = (0, local site), recorded as local change sets (crdt.md §5 #32):
 * any real write wins over them, and between replicas that held different
 * rows under one key the larger site id's row wins whole. Runs once per
 * database (sinew_crdt_meta 'bootstrap'). */
int replication__crdt_bootstrap(struct replication__crdt *crdt);

#endif /* SINEW_REPLICATION_CRDT_INT_H */
