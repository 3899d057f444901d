/* SPDX-License-Identifier: MIT
 *
 * quorum_capture.c: quorum mode's commit hook. Outside an execute it
 * refuses every commit of user data or schema: in quorum mode the database
 * changes only through apply, in Raft log order, or replicas would differ
 * (Raft §5.3: the state machines execute the same commands in the same
 * order). Inside an execute it turns the transaction's changes into a
 * change set (the change-set codec's records, as crdt mode captures them:
 * replication__crdt_collect()), notes the rows it writes for conflict
 * detection (quorum_flight.c), and vetoes the commit, so nothing becomes
 * visible before the set has been committed by Raft and applied.
 *
 * The set's origin is the transaction id and its version the base index
 * (the applied index the transaction ran on); hlc, epoch and schema hash
 * are 0. Column names are those of the tables as the transaction left
 * them.
 */
#include <string.h>

#include "changeset_codec.h"
#include "quorum.h"

/* The one chunk a quorum set is: large enough for any body the codec
 * accepts. */
#define QUORUM_CHUNK_BYTES                                                     \
    (REPLICATION__CHANGESET_BODY_MAX + REPLICATION__CHUNK_OVERHEAD)

/* Gives table index of b its column names. */
static int name_table(struct engine_db *db, struct replication__crdt_builder *b,
                      uint32_t index)
{
    struct common_buf names;
    const char **columns = NULL;
    size_t count = 0;
    size_t at = 0;
    int rc;

    common_buf_init(&names, SIZE_MAX);
    rc = replication__quorum_table_columns(db, b->tables[index].name, &names,
                                           &count);
    if (rc == 0 && count > 0) {
        columns = common_malloc_array(count, sizeof(*columns));
        rc = columns == NULL ? COMMON_ENOMEM : 0;
    }
    for (size_t i = 0; rc == 0 && i < count; i++) {
        columns[i] = (const char *)names.data + at;
        at += strlen(columns[i]) + 1;
    }
    if (rc == 0) {
        rc = replication__crdt_builder_columns(b, index, columns, count);
    }
    common_free(columns);
    common_buf_close(&names);
    return rc;
}

/* Names the columns of every table the set writes. A table the
 * transaction wrote and then dropped has none left to name. */
static int name_columns(struct engine_db *db,
                        struct replication__crdt_builder *b)
{
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < b->cs.table_count; i++) {
        rc = name_table(db, b, (uint32_t)i);
    }
    for (i = 0; rc == 0 && i < b->cs.record_count; i++) {
        const struct replication__record *rec = &b->records[i];
        if (rec->op == REPLICATION__OP_SET &&
            rec->column >= b->tables[rec->table].column_count) {
            rc = REPLICATION_ESCHEMA;
        }
    }
    return rc;
}

bool replication__quorum_value_equal(const struct engine_change_value *a,
                                     const struct engine_change_value *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case ENGINE_INTEGER:
        return a->integer == b->integer;
    case ENGINE_FLOAT:
        return memcmp(&a->real, &b->real, sizeof(a->real)) == 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        return a->size == b->size &&
               (a->size == 0 || memcmp(a->bytes, b->bytes, a->size) == 0);
    default:
        return true;
    }
}

bool replication__quorum_same_row(const struct replication__record *prev,
                                  const struct replication__record *rec)
{
    if (prev == NULL || prev->op == REPLICATION__OP_SCHEMA ||
        prev->table != rec->table || prev->key_count != rec->key_count) {
        return false;
    }
    for (size_t i = 0; i < rec->key_count; i++) {
        if (!replication__quorum_value_equal(&prev->key[i], &rec->key[i])) {
            return false;
        }
    }
    return true;
}

static int grow_rows(struct replication__quorum_flight *f, size_t *capacity)
{
    uint64_t *grown;
    size_t wanted;

    if (f->row_count < *capacity) {
        return 0;
    }
    wanted = *capacity ? 2 * *capacity : 64;
    grown = common_realloc_array(f->rows, wanted, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    f->rows = grown;
    *capacity = wanted;
    return 0;
}

/* Fills f with the rows the set writes and whether it changes the
 * schema. */
static int note_rows(const struct replication__crdt_builder *b,
                     struct replication__quorum_flight *f)
{
    const struct replication__record *prev = NULL;
    struct common_buf scratch;
    size_t capacity = 0;
    int rc = 0;

    common_buf_init(&scratch, SIZE_MAX);
    for (size_t i = 0; rc == 0 && i < b->cs.record_count; i++) {
        const struct replication__record *rec = &b->records[i];
        if (rec->op == REPLICATION__OP_SCHEMA) {
            f->is_schema = true;
        } else if (!replication__quorum_same_row(prev, rec)) {
            rc = grow_rows(f, &capacity);
            if (rc == 0) {
                f->rows[f->row_count++] = replication__quorum_row_hash(
                    b->tables[rec->table].name, rec->key, rec->key_count,
                    &scratch, &rc);
            }
        }
        prev = rec;
    }
    common_buf_close(&scratch);
    return rc;
}

static int encode(struct replication_quorum *q,
                  struct replication__crdt_builder *b)
{
    struct replication__encoding enc;
    int rc;

    memcpy(b->cs.origin, q->txn_id, sizeof(b->cs.origin));
    b->cs.version = q->state.applied_index;
    rc = replication__changeset_encode(&b->cs, QUORUM_CHUNK_BYTES, &enc);
    if (rc != 0) {
        return rc;
    }
    ASSERT(enc.chunk_count == 1);
    rc = replication__encoding_chunk(&enc, 0, q->change_set);
    replication__encoding_close(&enc);
    return rc;
}

int replication__quorum_hook(void *ctx, struct engine_db *db,
                             struct engine_commit *commit)
{
    struct replication_quorum *q = ctx;
    struct replication__crdt_builder b;
    int rc;

    ASSERT(q != NULL);
    ASSERT(db == q->db);
    if (!q->executing) {
        return engine_commit_veto(commit, REPLICATION_ENOTWRITER,
                                  "writes go through consensus (quorum mode)");
    }
    replication__crdt_builder_init(&b);
    rc = replication__crdt_collect(commit, &b);
    if (rc == 0) {
        rc = name_columns(db, &b);
    }
    if (rc == 0) {
        rc = note_rows(&b, &q->capture);
    }
    if (rc == 0) {
        rc = encode(q, &b);
    }
    replication__crdt_builder_close(&b);
    q->captured = true;
    q->capture_rc = rc;
    /* Never committed here: apply writes it once Raft has committed it. */
    return engine_commit_veto(commit, ENGINE_EABORT,
                              "captured for consensus (quorum mode)");
}
