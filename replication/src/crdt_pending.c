/* SPDX-License-Identifier: MIT
 *
 * crdt_pending.c: the change sets that wait (crdt.c's held list) kept in
 * sinew_crdt_pending(origin, version, deferred, bytes, reason) so they
 * survive a close: bytes is the change set encoded as one chunk
 * (changeset_codec.h), reason is 'wait', deferred says whether it waits
 * for the clock (1) or for a gap (0).
 *
 * The decision to keep a change set is taken outside any transaction, so
 * a row is added, updated or removed in a small transaction of its own
 * (engine_apply_transaction() with no stamp). A merge removes the row of
 * the set it applies in its own transaction (crdt_merge.c), so a set is
 * never both applied and still pending. Rows are reloaded on open in the
 * order they were kept.
 *
 * The same table holds, with reason 'schema', the records of applied sets
 * that named a table or column this database lacks (crdt_quarantine.c);
 * the statements here touch only 'wait' rows.
 */
#include <string.h>

#include "changeset_codec.h"
#include "crdt_int.h"

/* One chunk for the whole set: a payload never passes the body limit. */
#define PENDING_CHUNK_BYTES                                                    \
    (REPLICATION__CHANGESET_BODY_MAX + REPLICATION__CHUNK_OVERHEAD)

struct pending_op {
    struct replication__crdt *crdt;
    const struct replication__changeset *cs;
    enum replication__crdt_stmt id;
    const struct common_buf *bytes; /* PENDING_PUT only */
    bool deferred;
};

static int pending_cb(void *ctx, struct engine_db *db)
{
    struct pending_op *op = ctx;
    struct engine_stmt *stmt;
    int rc;

    (void)db;
    rc = replication__crdt_stmt(op->crdt, op->id, &stmt);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, op->cs->origin, sizeof(op->cs->origin));
    }
    if (rc == 0) {
        rc = engine_bind_int64(stmt, 2, (int64_t)op->cs->version);
    }
    if (rc == 0 && op->id != CRDT_PENDING_DROP) {
        rc = engine_bind_int64(stmt, 3, op->deferred);
    }
    if (rc == 0 && op->id == CRDT_PENDING_PUT) {
        rc = engine_bind_blob(stmt, 4, op->bytes->data, (int)op->bytes->size);
    }
    if (rc == 0) {
        rc = replication__crdt_step_done(op->crdt, stmt);
    }
    replication__crdt_stmts_close(op->crdt);
    return rc;
}

static int run(struct pending_op *op)
{
    return engine_apply_transaction(op->crdt->db, 0, pending_cb, op);
}

int replication__crdt_pending_encode(const struct replication__changeset *cs,
                                     struct common_buf *out)
{
    struct replication__encoding enc;
    int rc;

    rc = replication__changeset_encode(cs, PENDING_CHUNK_BYTES, &enc);
    if (rc != 0) {
        return rc;
    }
    ASSERT(enc.chunk_count == 1);
    rc = replication__encoding_chunk(&enc, 0, out);
    replication__encoding_close(&enc);
    return rc;
}

int replication__crdt_pending_put(struct replication__crdt *crdt,
                                  const struct replication__changeset *cs,
                                  bool deferred)
{
    struct common_buf bytes;
    struct pending_op op = {crdt, cs, CRDT_PENDING_PUT, &bytes, deferred};
    int rc;

    common_buf_init(&bytes, PENDING_CHUNK_BYTES);
    rc = replication__crdt_pending_encode(cs, &bytes);
    if (rc == 0) {
        rc = run(&op);
    }
    common_buf_close(&bytes);
    return rc;
}

int replication__crdt_pending_mark(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs,
                                   bool deferred)
{
    struct pending_op op = {crdt, cs, CRDT_PENDING_MARK, NULL, deferred};

    return run(&op);
}

int replication__crdt_pending_drop(struct replication__crdt *crdt,
                                   const struct replication__changeset *cs)
{
    struct pending_op op = {crdt, cs, CRDT_PENDING_DROP, NULL, false};

    return run(&op);
}

int replication__crdt_pending_load(struct replication__crdt *crdt,
                                   replication__crdt_pending_cb fn, void *ctx)
{
    struct replication__decoded *decoded = NULL;
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db,
                        "SELECT deferred, bytes FROM sinew_crdt_pending"
                        " WHERE reason = 'wait' ORDER BY rowid",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = replication__changeset_decode(engine_column_blob(stmt, 1),
                                           (size_t)engine_column_bytes(stmt, 1),
                                           &decoded);
        if (rc == 0) {
            rc = fn(ctx, &decoded->set, engine_column_int64(stmt, 0) != 0);
            replication__decoded_destroy(decoded);
        }
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}
