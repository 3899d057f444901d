/* SPDX-License-Identifier: MIT
 *
 * crdt_quarantine.c: the records of a change set that name a table or a
 * column this database does not have (yet), kept aside instead of failing
 * the set (crdt.md §6.8 "unknown ids -> quarantine + alarm; apply after
 * migration"; §5 #20, #21).
 *
 * The version vector is a contiguous head per origin, so a set that could
 * not be applied whole would hold back every later set of its origin until
 * the schema arrives. Instead the merge applies what this database has
 * room for, advances the head, and sets the rest aside: the records whose
 * table or column is unknown here, and the SCHEMA records that failed
 * (crdt_ddl.c). They are stored, in the set's transaction, as a change set
 * of their own (same origin, version, stamp and schema hash, only those
 * records, in order) in sinew_crdt_pending with reason 'schema'.
 *
 * Applying them later is correct because every register is
 * last-writer-wins by K = (hlc, origin): a record merged late compares its
 * set's K against whatever the registers hold by then, exactly as if it
 * had arrived late. The one order that K cannot restore is between
 * records of the same set (equal K, the later record wins): a kept record
 * followed by a SCHEMA record of the same set that makes it applicable is
 * merged again right after that SCHEMA record (crdt_merge.c), before the
 * set's later records.
 *
 * When the schema changes (its hash, crdt_schema.c, differs from the one
 * the kept records were last tried under) each kept set is merged again in
 * a transaction of its own (replication__crdt_merge_kept): what now
 * applies is merged, the row is rewritten with what still does not, or
 * removed. Kept sets live on disk only (crdt->kept_count counts them):
 * they are read back when the schema changes, which is rare, and their
 * number is bounded by the disk, not by memory.
 */
#include <inttypes.h>
#include <string.h>

#include "changeset_codec.h"
#include "crdt_int.h"

/* One pending row's bytes: the whole set in one chunk. */
#define KEPT_BYTES_MAX                                                         \
    (REPLICATION__CHANGESET_BODY_MAX + REPLICATION__CHUNK_OVERHEAD)

int replication__crdt_aside_init(struct replication__crdt_aside *aside,
                                 size_t table_count)
{
    memset(aside, 0, sizeof(*aside));
    aside->fills = common_calloc(table_count + 1, sizeof(*aside->fills));
    if (aside->fills == NULL) {
        return COMMON_ENOMEM;
    }
    aside->table_count = table_count;
    return 0;
}

void replication__crdt_aside_close(struct replication__crdt_aside *aside)
{
    common_free(aside->kept);
    common_free(aside->fills);
    replication__arena_close(&aside->arena);
    memset(aside, 0, sizeof(*aside));
}

int replication__crdt_aside_keep(struct replication__crdt_aside *aside,
                                 size_t index)
{
    size_t *grown;
    size_t capacity;

    if (aside->kept_count == aside->kept_capacity) {
        capacity = aside->kept_capacity ? 2 * aside->kept_capacity : 8;
        grown = common_realloc_array(aside->kept, capacity, sizeof(*grown));
        if (grown == NULL) {
            return COMMON_ENOMEM;
        }
        aside->kept = grown;
        aside->kept_capacity = capacity;
    }
    ASSERT(aside->kept_count == 0 ||
           aside->kept[aside->kept_count - 1] < index);
    aside->kept[aside->kept_count++] = index;
    return 0;
}

void replication__crdt_aside_take(struct replication__crdt_aside *aside,
                                  size_t **kept, size_t *count)
{
    *kept = aside->kept;
    *count = aside->kept_count;
    aside->kept = NULL;
    aside->kept_count = 0;
    aside->kept_capacity = 0;
}

void replication__crdt_aside_reshaped(struct replication__crdt_aside *aside)
{
    memset(aside->fills, 0, (aside->table_count + 1) * sizeof(*aside->fills));
}

/* Adds record rec of cs to b, its table (and that table's column names,
 * so SET records keep their column index) first if b lacks it. */
static int build_add(struct replication__crdt_builder *b,
                     const struct replication__changeset *cs,
                     const struct replication__record *rec)
{
    const struct replication__table *t;
    struct replication__record copy = *rec;
    int rc;

    if (rec->op == REPLICATION__OP_SCHEMA) {
        copy.table = 0;
        return replication__crdt_builder_add(b, &copy);
    }
    t = &cs->tables[rec->table];
    rc = replication__crdt_builder_table(b, t->name, strlen(t->name),
                                         &copy.table);
    if (rc == 0 && b->tables[copy.table].columns == NULL) {
        rc = replication__crdt_builder_columns(b, copy.table, t->columns,
                                               t->column_count);
    }
    return rc == 0 ? replication__crdt_builder_add(b, &copy) : rc;
}

/* The kept records of cs as one chunk into bytes. */
static int encode_kept(const struct replication__changeset *cs,
                       const struct replication__crdt_aside *aside,
                       struct common_buf *bytes)
{
    struct replication__crdt_builder b;
    size_t i;
    int rc = 0;

    replication__crdt_builder_init(&b);
    memcpy(b.cs.origin, cs->origin, sizeof(b.cs.origin));
    b.cs.version = cs->version;
    b.cs.hlc = cs->hlc;
    b.cs.epoch = cs->epoch;
    b.cs.schema_hash = cs->schema_hash;
    for (i = 0; rc == 0 && i < aside->kept_count; i++) {
        ASSERT(aside->kept[i] < cs->record_count);
        rc = build_add(&b, cs, &cs->records[aside->kept[i]]);
    }
    if (rc == 0) {
        rc = replication__crdt_pending_encode(&b.cs, bytes);
    }
    replication__crdt_builder_close(&b);
    return rc;
}

/* Runs one statement over the kept row of cs: ?1 origin, ?2 version, ?3
 * bytes when given. */
static int kept_exec(struct replication__crdt *crdt, const char *sql,
                     const struct replication__changeset *cs,
                     const struct common_buf *bytes)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db, sql, -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, cs->origin, sizeof(cs->origin));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)cs->version);
    }
    if (rc == 0 && bytes != NULL) {
        rc = engine_bind_blob(stmt, 3, bytes->data, (int)bytes->size);
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(crdt, stmt);
    }
    engine_finalize(stmt);
    return rc;
}

int replication__crdt_aside_save(struct replication__crdt *crdt,
                                 const struct replication__changeset *cs,
                                 struct replication__crdt_aside *aside,
                                 bool replay)
{
    struct common_buf bytes;
    int rc;

    ASSERT(aside->kept_count <= cs->record_count);
    if (aside->kept_count == (replay ? cs->record_count : 0)) {
        return 0; /* nothing kept, or (replaying) nothing applied */
    }
    if (aside->kept_count == 0) {
        aside->kept_delta = -1;
        return kept_exec(crdt,
                         "DELETE FROM sinew_crdt_pending WHERE origin = ?1"
                         " AND version = ?2 AND reason = 'schema'",
                         cs, NULL);
    }
    common_buf_init(&bytes, KEPT_BYTES_MAX);
    rc = encode_kept(cs, aside, &bytes);
    if (rc == 0 && replay) {
        rc = kept_exec(crdt,
                       "UPDATE sinew_crdt_pending SET bytes = ?3"
                       " WHERE origin = ?1 AND version = ?2"
                       " AND reason = 'schema'",
                       cs, &bytes);
    } else if (rc == 0) {
        aside->kept_delta = 1;
        rc = kept_exec(crdt,
                       "INSERT OR REPLACE INTO sinew_crdt_pending"
                       " VALUES (?1, ?2, 0, ?3, 'schema')",
                       cs, &bytes);
    }
    common_buf_close(&bytes);
    return rc;
}

void replication__crdt_aside_commit(struct replication__crdt *crdt,
                                    const struct replication__changeset *cs,
                                    const struct replication__crdt_aside *aside)
{
    const uint8_t *o = cs->origin;
    int level = COMMON_LOG_DEBUG;

    if (aside->kept_delta > 0) {
        /* The first kept set is the alarm (crdt.md §6.8); later ones add
         * to a condition already reported. */
        level = crdt->kept_count == 0 ? COMMON_LOG_WARN : COMMON_LOG_DEBUG;
        crdt->kept_count++;
        LOGF(&crdt->log, level,
             "change set records kept: this schema lacks a table or column"
             " they name origin=%02x%02x%02x%02x version=%" PRIu64
             " kept=%zu records=%zu schema=%016" PRIx64
             " local_schema=%016" PRIx64 " kept_sets=%zu",
             o[0], o[1], o[2], o[3], cs->version, aside->kept_count,
             cs->record_count, cs->schema_hash, crdt->schema_hash,
             crdt->kept_count);
    } else if (aside->kept_delta < 0) {
        ASSERT(crdt->kept_count > 0);
        crdt->kept_count--;
        LOGF(&crdt->log, level,
             "kept records applied origin=%02x%02x%02x%02x version=%" PRIu64
             " kept_sets=%zu",
             o[0], o[1], o[2], o[3], cs->version, crdt->kept_count);
    }
}

int replication__crdt_kept_load(struct replication__crdt *crdt)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db,
                        "SELECT count(*) FROM sinew_crdt_pending"
                        " WHERE reason = 'schema'",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        crdt->kept_count = (size_t)engine_column_int64(stmt, 0);
        rc = 0;
    }
    engine_finalize(stmt);
    return rc;
}

/* The first kept set stored after rowid after: *out NULL when none. */
static int kept_next(struct replication__crdt *crdt, int64_t after,
                     int64_t *rowid, struct replication__decoded **out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    *out = NULL;
    rc = engine_prepare(crdt->db,
                        "SELECT rowid, bytes FROM sinew_crdt_pending"
                        " WHERE reason = 'schema' AND rowid > ?1"
                        " ORDER BY rowid LIMIT 1",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 1, after);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        *rowid = engine_column_int64(stmt, 0);
        rc = replication__changeset_decode(engine_column_blob(stmt, 1),
                                           (size_t)engine_column_bytes(stmt, 1),
                                           out);
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Merges every kept set once, in the order they were kept. (A rewritten
 * row keeps its rowid, so none is visited twice.) A set whose merge fails
 * stays kept, is logged, and does not stop the others: it is tried again
 * at the next schema change. Only running out of memory stops the pass. */
static int kept_pass(struct replication__crdt *crdt)
{
    struct replication__decoded *decoded = NULL;
    int64_t rowid = 0;
    int rc;

    while ((rc = kept_next(crdt, rowid, &rowid, &decoded)) == 0 &&
           decoded != NULL) {
        const uint8_t *o = decoded->set.origin;
        rc = replication__crdt_merge_kept(crdt, &decoded->set);
        if (rc != 0 && rc != COMMON_ENOMEM) {
            LOGF(&crdt->log, COMMON_LOG_ERROR,
                 "kept records not applied origin=%02x%02x%02x%02x"
                 " version=%" PRIu64 ": %s",
                 o[0], o[1], o[2], o[3], decoded->set.version,
                 engine_errmsg(crdt->db));
            rc = 0;
        }
        replication__decoded_destroy(decoded);
        if (rc != 0) {
            return rc;
        }
    }
    return rc;
}

int replication__crdt_kept_retry(struct replication__crdt *crdt)
{
    uint64_t hash;
    int rc;

    ASSERT(crdt != NULL);
    if (crdt->kept_count == 0) {
        return 0;
    }
    rc = replication__crdt_schema_hash_of(crdt->db, &hash);
    while (rc == 0 && crdt->kept_count > 0 && hash != crdt->kept_hash) {
        if (hash != crdt->schema_hash) {
            rc = replication__crdt_schema_resync(crdt);
        }
        if (rc == 0) {
            rc = kept_pass(crdt);
        }
        if (rc == 0) {
            crdt->kept_hash = hash;
            rc = replication__crdt_schema_hash_of(crdt->db, &hash);
        }
    }
    return rc;
}
