/* SPDX-License-Identifier: MIT
 *
 * quorum.c: quorum mode's object (replication.h, "quorum mode"): opening
 * it on a database (its system tables, its stored applied position, its
 * commit hook), executing a leader's transaction without committing it,
 * and the small SQL helpers the quorum files share.
 *
 * Execute is the leader's half of Raft §5.3's "the leader appends the
 * command to its log": the transaction runs on the applied state, the
 * commit hook (quorum_capture.c) turns its changes into a change set and
 * vetoes the commit, so the database only ever changes through apply, in
 * log order, on every node alike. The set's rows then stay in flight
 * (quorum_flight.c) until apply or abandon releases them.
 */
#include <string.h>

#include "quorum.h"

static const char *const SCHEMA_SQL =
    "CREATE TABLE IF NOT EXISTS sinew_quorum_state("
    " id INTEGER PRIMARY KEY, applied_index INTEGER NOT NULL,"
    " applied_term INTEGER NOT NULL, term_base INTEGER NOT NULL,"
    " txn_seq INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO sinew_quorum_state VALUES(1, 0, 0, 0, 0);"
    "CREATE TABLE IF NOT EXISTS sinew_quorum_txn("
    " seq INTEGER PRIMARY KEY, id BLOB NOT NULL, idx INTEGER NOT NULL,"
    " result INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS sinew_quorum_txn_id"
    " ON sinew_quorum_txn(id)";

int replication__quorum_run(struct engine_db *db, const char *sql,
                            const struct engine_change_value *values,
                            size_t count)
{
    struct engine_stmt *stmt = NULL;
    size_t i;
    int rc;

    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    for (i = 0; rc == 0 && i < count; i++) {
        rc = replication__crdt_bind_value(stmt, (int)i + 1, &values[i]);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
        rc = rc == ENGINE_DONE || rc == ENGINE_ROW ? 0 : rc;
    }
    engine_finalize(stmt);
    return rc;
}

int replication__quorum_quote(struct common_buf *out, const char *name)
{
    const char *p;
    int rc = common_buf_append_byte(out, '"');

    for (p = name; rc == 0 && *p != '\0'; p++) {
        rc = common_buf_append_byte(out, (uint8_t)*p);
        if (rc == 0 && *p == '"') {
            rc = common_buf_append_byte(out, '"'); /* doubled, as SQL's */
        }
    }
    return rc == 0 ? common_buf_append_byte(out, '"') : rc;
}

/* Appends the NUL-terminated column names of table to names. */
int replication__quorum_table_columns(struct engine_db *db, const char *table,
                                      struct common_buf *names, size_t *count)
{
    struct common_buf sql;
    struct engine_stmt *stmt = NULL;
    const char *name;
    int rc;

    common_buf_init(&sql, SIZE_MAX);
    rc = common_buf_append(&sql, "PRAGMA table_info(", 18);
    rc = rc == 0 ? replication__quorum_quote(&sql, table) : rc;
    rc = rc == 0 ? common_buf_append(&sql, ")", 2) : rc;
    rc = rc == 0 ? engine_prepare(db, (const char *)sql.data, -1, &stmt, NULL)
                 : rc;
    *count = 0;
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        name = engine_column_text(stmt, 1);
        rc = name != NULL ? common_buf_append(names, name, strlen(name) + 1)
                          : COMMON_ENOMEM;
        (*count)++;
    }
    engine_finalize(stmt);
    common_buf_close(&sql);
    return rc == ENGINE_DONE ? 0 : rc;
}

int replication__quorum_begin(struct engine_db *db,
                              struct engine_stmt **rollback)
{
    int rc;

    *rollback = NULL;
    rc = engine_prepare(db, "ROLLBACK", -1, rollback, NULL);
    rc = rc == 0 ? engine_exec(db, "BEGIN", NULL, NULL) : rc;
    if (rc != 0) {
        engine_finalize(*rollback);
        *rollback = NULL;
    }
    return rc;
}

void replication__quorum_end(struct engine_db *db, struct engine_stmt *rollback)
{
    if (engine_in_transaction(db)) {
        engine_step(rollback);
    }
    engine_finalize(rollback);
}

int replication__quorum_transaction(struct engine_db *db, engine_apply_cb fn,
                                    void *ctx)
{
    struct engine_stmt *rollback = NULL;
    int rc;

    rc = engine_prepare(db, "ROLLBACK", -1, &rollback, NULL);
    if (rc == 0) {
        rc = engine_apply_transaction(db, 0, fn, ctx);
        replication__quorum_end(db, rollback);
    }
    return rc;
}

static bool is_count(struct engine_stmt *stmt, int column)
{
    return engine_column_type(stmt, column) == ENGINE_INTEGER &&
           engine_column_int64(stmt, column) >= 0;
}

int replication__quorum_state_read(struct engine_db *db,
                                   struct replication__quorum_state *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(db,
                        "SELECT applied_index, applied_term, term_base, "
                        "txn_seq FROM sinew_quorum_state WHERE id = 1",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        rc = 0;
        for (int i = 0; i < 4; i++) {
            rc = is_count(stmt, i) ? rc : REPLICATION_ECORRUPT;
        }
    } else if (rc == ENGINE_DONE) {
        rc = REPLICATION_ECORRUPT;
    }
    if (rc == 0) {
        out->applied_index = (uint64_t)engine_column_int64(stmt, 0);
        out->applied_term = (uint64_t)engine_column_int64(stmt, 1);
        out->term_base = (uint64_t)engine_column_int64(stmt, 2);
        out->txn_seq = (uint64_t)engine_column_int64(stmt, 3);
        rc = out->term_base <= out->applied_index ? 0 : REPLICATION_ECORRUPT;
    }
    engine_finalize(stmt);
    return rc;
}

static struct engine_change_value int_value(uint64_t v)
{
    struct engine_change_value value = {.type = ENGINE_INTEGER};

    value.integer = (int64_t)v;
    return value;
}

int replication__quorum_state_write(struct engine_db *db,
                                    const struct replication__quorum_state *s)
{
    struct engine_change_value values[4];

    ASSERT(s->applied_index <= INT64_MAX);
    ASSERT(s->term_base <= s->applied_index);
    values[0] = int_value(s->applied_index);
    values[1] = int_value(s->applied_term);
    values[2] = int_value(s->term_base);
    values[3] = int_value(s->txn_seq);
    return replication__quorum_run(
        db,
        "UPDATE sinew_quorum_state SET applied_index = ?1, applied_term = ?2,"
        " term_base = ?3, txn_seq = ?4 WHERE id = 1",
        values, 4);
}

int replication_quorum_open(struct engine_db *db, const struct common_log *log,
                            struct replication_quorum **out)
{
    struct engine_stmt *rollback = NULL;
    struct replication_quorum *q;
    int rc;

    ASSERT(db != NULL);
    ASSERT(out != NULL);
    if (engine_in_transaction(db)) {
        return ENGINE_EMISUSE;
    }
    q = common_calloc(1, sizeof(*q));
    if (q == NULL) {
        return COMMON_ENOMEM;
    }
    q->db = db;
    if (log != NULL) {
        q->log = *log;
    }
    rc = replication__quorum_begin(db, &rollback);
    rc = rc == 0 ? engine_exec_system(db, SCHEMA_SQL, NULL, NULL) : rc;
    rc = rc == 0 ? engine_exec(db, "COMMIT", NULL, NULL) : rc;
    replication__quorum_end(db, rollback);
    if (rc == 0) {
        rc = replication__quorum_state_read(db, &q->state);
    }
    if (rc == 0) {
        rc = engine_commit_hook_set(db, replication__quorum_hook, q);
    }
    if (rc != 0) {
        common_free(q);
        return rc;
    }
    LOGF(&q->log, COMMON_LOG_INFO, "quorum open applied_index=%llu term=%llu",
         (unsigned long long)q->state.applied_index,
         (unsigned long long)q->state.applied_term);
    *out = q;
    return 0;
}

void replication_quorum_close(struct replication_quorum *q)
{
    if (q == NULL) {
        return;
    }
    ASSERT(!q->executing);
    engine_commit_hook_set(q->db, NULL, NULL);
    replication__quorum_flight_close(q);
    common_free(q);
}

uint64_t replication_quorum_applied_index(const struct replication_quorum *q)
{
    ASSERT(q != NULL);
    return q->state.applied_index;
}

uint64_t replication_quorum_applied_term(const struct replication_quorum *q)
{
    ASSERT(q != NULL);
    return q->state.applied_term;
}

/* BEGIN; fn; COMMIT with the hook capturing. Returns fn's error or the
 * outcome of the commit; the hook's own verdict is in q->capture_rc. The
 * ROLLBACK is prepared first, so the transaction ends even when memory
 * runs out. */
static int run_captured(struct replication_quorum *q, engine_apply_cb fn,
                        void *ctx)
{
    struct engine_stmt *rollback = NULL;
    int rc;

    rc = replication__quorum_begin(q->db, &rollback);
    if (rc != 0) {
        return rc;
    }
    rc = fn(ctx, q->db);
    if (rc == 0 && !engine_in_transaction(q->db)) {
        rc = ENGINE_EMISUSE; /* fn ended the transaction itself */
        q->captured = false;
    }
    if (rc == 0) {
        q->executing = true;
        rc = engine_exec(q->db, "COMMIT", NULL, NULL);
        q->executing = false;
        /* The hook vetoed (COMMIT failed) after capturing: that is
         * success. A transaction that changed nothing commits without the
         * hook. */
        rc = q->captured ? q->capture_rc : rc;
    }
    replication__quorum_end(q->db, rollback);
    return rc;
}

static void capture_reset(struct replication_quorum *q)
{
    common_free(q->capture.rows);
    memset(&q->capture, 0, sizeof(q->capture));
    q->captured = false;
    q->capture_rc = 0;
}

int replication_quorum_execute(struct replication_quorum *q, engine_apply_cb fn,
                               void *ctx, const uint8_t *txn_id,
                               struct common_buf *change_set)
{
    size_t size_before;
    int rc;

    ASSERT(q != NULL);
    ASSERT(fn != NULL);
    ASSERT(txn_id != NULL);
    ASSERT(change_set != NULL);
    ASSERT(!q->executing);
    if (engine_in_transaction(q->db)) {
        return ENGINE_EMISUSE;
    }
    size_before = change_set->size;
    capture_reset(q);
    memcpy(q->capture.txn_id, txn_id, sizeof(q->capture.txn_id));
    q->txn_id = txn_id;
    q->change_set = change_set;
    rc = run_captured(q, fn, ctx);
    if (rc == 0 && q->captured) {
        rc = replication__quorum_flight_check(q, &q->capture);
    }
    if (rc == 0 && q->captured) {
        rc = replication__quorum_flight_add(q, &q->capture);
    }
    if (rc != 0) {
        common_buf_truncate(change_set, size_before);
        LOGF(&q->log, COMMON_LOG_DEBUG, "quorum execute refused rc=%d", rc);
    }
    q->txn_id = NULL;
    q->change_set = NULL;
    capture_reset(q);
    return rc;
}
