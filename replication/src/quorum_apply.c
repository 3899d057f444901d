/* SPDX-License-Identifier: MIT
 *
 * quorum_apply.c: applying one committed Raft log entry (replication.h,
 * replication_quorum_apply()), the state machine step of Raft §5.3 ("once
 * an entry is committed, the leader applies it to its state machine";
 * followers do the same, in log order).
 *
 * Exactly once: the entry's sets, its index and term, and its sets'
 * transaction ids commit in one engine transaction, and an index at or
 * below the stored applied index is skipped; a transaction id already in
 * sinew_quorum_txn is not applied again (a client retrying after an
 * unknown outcome).
 *
 * Deterministic outcome: every node applies the same sets to the same
 * state, so a set that fails for a reason found in the set and the state
 * (a constraint, malformed bytes, a stale base) fails everywhere alike;
 * it is undone alone (a SAVEPOINT around each set) and the entry goes on.
 * A failure of this node's own (I/O, memory) fails the whole entry: the
 * node must not diverge by skipping it.
 *
 * The records of a set become engine changes again (changeset.h):
 * ALIVE and the SETs of the same row after it are an INSERT; further SETs
 * of one row, each column once, an UPDATE; DEAD a DELETE; SCHEMA the DDL.
 * Columns travel by name and are looked up in the table as it is when the
 * record applies (after the set's earlier DDL).
 */
#include <string.h>
#include <strings.h>

#include "changeset_codec.h"
#include "quorum.h"

/* One entry being applied. */
struct apply {
    struct replication_quorum *q;
    uint64_t index;
    uint64_t term;
    const uint8_t *const *sets;
    const size_t *sizes;
    size_t count;
    int *results;
    struct replication__quorum_state state; /* what the entry leaves */
};

/* One set's records being turned into changes. maps[t] (NULL until
 * needed, dropped after DDL) gives the local column of each of table t's
 * columns; seen marks the columns already in the change being built. */
struct rebuild {
    struct engine_db *db;
    const struct replication__changeset *cs;
    size_t **maps;
    uint8_t *seen;
    size_t seen_size;
    size_t *columns;
    struct engine_change_value *values;
};

bool replication__quorum_is_deterministic(int rc)
{
    switch (rc) {
    case 0:
    case ENGINE_ESQL:
    case ENGINE_ECONSTRAINT:
    case ENGINE_ERANGE:
    case ENGINE_ETOOBIG:
    case ENGINE_EMISMATCH:
    case ENGINE_ENOTFOUND:
    case REPLICATION_EFORMAT:
    case REPLICATION_EVERSION:
    case REPLICATION_ESCHEMA:
    case REPLICATION_ECONFLICT:
    case REPLICATION_EDUPLICATE:
    case COMMON_ETOOBIG:
    case COMMON_ECORRUPT:
        return true;
    default:
        return false;
    }
}

static void maps_drop(struct rebuild *r)
{
    for (size_t t = 0; t < r->cs->table_count; t++) {
        common_free(r->maps[t]);
        r->maps[t] = NULL;
    }
}

/* The local position of each of table t's columns, by name. */
static int map_table(struct rebuild *r, uint32_t t)
{
    const struct replication__table *table = &r->cs->tables[t];
    struct common_buf names;
    size_t count = 0;
    size_t *map;
    int rc;

    map = common_calloc(table->column_count + 1, sizeof(*map));
    if (map == NULL) {
        return COMMON_ENOMEM;
    }
    common_buf_init(&names, SIZE_MAX);
    rc = replication__quorum_table_columns(r->db, table->name, &names, &count);
    for (size_t c = 0; rc == 0 && c < table->column_count; c++) {
        size_t at = 0;
        size_t local = 0;
        while (local < count &&
               strcasecmp((const char *)names.data + at, table->columns[c])) {
            at += strlen((const char *)names.data + at) + 1;
            local++;
        }
        map[c] = local;
        rc = local < count ? 0 : REPLICATION_ESCHEMA;
    }
    common_buf_close(&names);
    if (rc == 0 && count > r->seen_size) {
        rc = REPLICATION_ESCHEMA; /* more columns than the set named */
    }
    if (rc != 0) {
        common_free(map);
        return rc;
    }
    r->maps[t] = map;
    return 0;
}

/* Gathers the SETs of rec's row from records[*at] on, each column once,
 * into r->columns and r->values; returns how many. */
static int gather(struct rebuild *r, const struct replication__record *row,
                  size_t *at, size_t *count)
{
    const struct replication__record *records = r->cs->records;
    int rc = 0;

    *count = 0;
    if (r->maps[row->table] == NULL) {
        rc = map_table(r, row->table);
    }
    while (rc == 0 && *at < r->cs->record_count &&
           records[*at].op == REPLICATION__OP_SET &&
           replication__quorum_same_row(row, &records[*at])) {
        size_t local = r->maps[row->table][records[*at].column];
        if (r->seen[local]) {
            break;
        }
        r->seen[local] = 1;
        r->columns[*count] = local;
        r->values[*count] = records[*at].value;
        (*count)++;
        (*at)++;
    }
    for (size_t i = 0; i < *count; i++) {
        r->seen[r->columns[i]] = 0;
    }
    return rc;
}

/* Applies the change that starts at records[*at], advancing *at. */
static int apply_next(struct rebuild *r, size_t *at)
{
    const struct replication__record *rec = &r->cs->records[*at];
    struct engine_change change;
    int rc = 0;

    memset(&change, 0, sizeof(change));
    (*at)++;
    if (rec->op == REPLICATION__OP_SCHEMA) {
        change.kind = ENGINE_CHANGE_SCHEMA;
        change.sql = rec->sql;
        maps_drop(r);
        return engine_apply_change(r->db, &change);
    }
    change.table = r->cs->tables[rec->table].name;
    change.key = rec->key;
    change.key_count = rec->key_count;
    if (rec->op == REPLICATION__OP_DEAD) {
        change.kind = ENGINE_CHANGE_DELETE;
        return engine_apply_change(r->db, &change);
    }
    change.kind = rec->op == REPLICATION__OP_ALIVE ? ENGINE_CHANGE_INSERT
                                                   : ENGINE_CHANGE_UPDATE;
    if (rec->op == REPLICATION__OP_SET) {
        (*at)--; /* the SET is the change's first column */
    }
    rc = gather(r, rec, at, &change.value_count);
    if (rc != 0) {
        return rc;
    }
    change.columns = r->columns;
    change.values = r->values;
    return engine_apply_change(r->db, &change);
}

static size_t widest_table(const struct replication__changeset *cs)
{
    size_t widest = 1;

    for (size_t t = 0; t < cs->table_count; t++) {
        widest = cs->tables[t].column_count > widest
                     ? cs->tables[t].column_count
                     : widest;
    }
    return widest;
}

/* Writes the records of cs in the open transaction. */
static int apply_records(struct engine_db *db,
                         const struct replication__changeset *cs)
{
    struct rebuild r = {.db = db, .cs = cs};
    size_t at = 0;
    int rc = 0;

    r.seen_size = widest_table(cs);
    r.maps = common_calloc(cs->table_count + 1, sizeof(*r.maps));
    r.seen = common_calloc(r.seen_size, 1);
    r.columns = common_calloc(r.seen_size, sizeof(*r.columns));
    r.values = common_calloc(r.seen_size, sizeof(*r.values));
    if (r.maps == NULL || r.seen == NULL || r.columns == NULL ||
        r.values == NULL) {
        rc = COMMON_ENOMEM;
    }
    while (rc == 0 && at < cs->record_count) {
        rc = apply_next(&r, &at);
    }
    if (r.maps != NULL) {
        maps_drop(&r);
    }
    common_free(r.maps);
    common_free(r.seen);
    common_free(r.columns);
    common_free(r.values);
    return rc;
}

/* 0 with *index and *result if id is in sinew_quorum_txn,
 * REPLICATION_ENOTFOUND if not. */
static int txn_lookup(struct engine_db *db, const uint8_t *id, uint64_t *index,
                      int *result)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(db,
                        "SELECT idx, result FROM sinew_quorum_txn"
                        " WHERE id = ?1",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, id, REPLICATION_QUORUM_TXN_ID_BYTES);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        *index = (uint64_t)engine_column_int64(stmt, 0);
        *result = (int)engine_column_int64(stmt, 1);
        rc = 0;
    } else if (rc == ENGINE_DONE) {
        rc = REPLICATION_ENOTFOUND;
    }
    engine_finalize(stmt);
    return rc;
}

static int txn_record(struct apply *a, const uint8_t *id, int result)
{
    struct engine_change_value values[4] = {
        {.type = ENGINE_INTEGER, .integer = (int64_t)++a->state.txn_seq},
        {.type = ENGINE_BLOB,
         .bytes = id,
         .size = REPLICATION_QUORUM_TXN_ID_BYTES},
        {.type = ENGINE_INTEGER, .integer = (int64_t)a->index},
        {.type = ENGINE_INTEGER, .integer = result},
    };

    return replication__quorum_run(a->q->db,
                                   "INSERT INTO sinew_quorum_txn(seq, id, idx,"
                                   " result) VALUES(?1, ?2, ?3, ?4)",
                                   values, 4);
}

/* Whether a set executed on base may apply in this entry (quorum.h,
 * term_base; replication.h on failover). */
static int base_check(const struct apply *a, uint64_t base)
{
    const struct replication__quorum_state *now = &a->q->state;

    if (base > now->applied_index) {
        return REPLICATION_EFORMAT; /* ran on a state no node has had */
    }
    if (base == now->applied_index ||
        (a->term == now->applied_term && base >= now->term_base)) {
        return 0;
    }
    return REPLICATION_ECONFLICT;
}

/* Applies a decoded set inside its own savepoint; a deterministic failure
 * undoes the set alone and is its result. */
static int apply_decoded(struct apply *a,
                         const struct replication__changeset *cs, int *result)
{
    struct engine_db *db = a->q->db;
    uint64_t index;
    int rc;

    rc = txn_lookup(db, cs->origin, &index, result);
    if (rc != REPLICATION_ENOTFOUND) {
        *result = REPLICATION_EDUPLICATE;
        return rc; /* recorded already: its first outcome stays */
    }
    rc = 0;
    *result = base_check(a, cs->version);
    if (*result == 0) {
        rc = engine_exec(db, "SAVEPOINT sinew_quorum_set", NULL, NULL);
        if (rc != 0) {
            return rc;
        }
        *result = apply_records(db, cs);
        if (*result != 0 && replication__quorum_is_deterministic(*result)) {
            rc = engine_exec(db, "ROLLBACK TO sinew_quorum_set", NULL, NULL);
        }
        rc = rc == 0 ? engine_exec(db, "RELEASE sinew_quorum_set", NULL, NULL)
                     : rc;
        if (rc == 0 && !replication__quorum_is_deterministic(*result)) {
            rc = *result;
        }
    }
    return rc == 0 ? txn_record(a, cs->origin, *result) : rc;
}

static int apply_set(struct apply *a, size_t i)
{
    struct replication__decoded *decoded = NULL;
    int rc;

    a->results[i] = 0;
    if (a->sizes[i] == 0) {
        return 0; /* an empty set: nothing to do */
    }
    rc = replication__changeset_decode(a->sets[i], a->sizes[i], &decoded);
    if (rc != 0) {
        a->results[i] = rc;
        return replication__quorum_is_deterministic(rc) ? 0 : rc;
    }
    rc = apply_decoded(a, &decoded->set, &a->results[i]);
    replication__decoded_destroy(decoded);
    return rc;
}

static int prune(struct apply *a)
{
    struct engine_change_value floor = {.type = ENGINE_INTEGER};

    if (a->state.txn_seq <= REPLICATION_QUORUM_TXN_KEEP) {
        return 0;
    }
    floor.integer = (int64_t)(a->state.txn_seq - REPLICATION_QUORUM_TXN_KEEP);
    return replication__quorum_run(
        a->q->db, "DELETE FROM sinew_quorum_txn WHERE seq <= ?1", &floor, 1);
}

static int apply_entry_cb(void *ctx, struct engine_db *db)
{
    struct apply *a = ctx;
    int rc = 0;

    (void)db;
    for (size_t i = 0; rc == 0 && i < a->count; i++) {
        rc = apply_set(a, i);
    }
    if (rc == 0) {
        rc = prune(a);
    }
    if (rc == 0) {
        rc = replication__quorum_state_write(a->q->db, &a->state);
    }
    return rc;
}

/* The transaction id a set carries, if its framing is whole. */
static bool set_txn_id(const uint8_t *set, size_t size,
                       uint8_t id[REPLICATION_QUORUM_TXN_ID_BYTES])
{
    struct replication__chunk_info info;

    if (size == 0 || replication__chunk_peek(set, size, &info) != 0) {
        return false;
    }
    memcpy(id, info.origin, REPLICATION_QUORUM_TXN_ID_BYTES);
    return true;
}

static void release_flights(struct apply *a)
{
    uint8_t id[REPLICATION_QUORUM_TXN_ID_BYTES];

    for (size_t i = 0; i < a->count && a->q->flight_count > 0; i++) {
        if (set_txn_id(a->sets[i], a->sizes[i], id)) {
            replication_quorum_abandon(a->q, id);
        }
    }
}

int replication_quorum_apply(struct replication_quorum *q, uint64_t index,
                             uint64_t term, const uint8_t *const *sets,
                             const size_t *sizes, size_t count, int *results)
{
    struct apply a = {q, index, term, sets, sizes, count, results, {0}};
    int rc;

    ASSERT(q != NULL);
    ASSERT(count == 0 || (sets != NULL && sizes != NULL && results != NULL));
    ASSERT(index > 0 && index <= INT64_MAX);
    if (index <= q->state.applied_index) {
        for (size_t i = 0; i < count; i++) {
            results[i] = REPLICATION_EDUPLICATE;
        }
        release_flights(&a);
        return 0;
    }
    ASSERT(term >= q->state.applied_term); /* Raft: terms never go back */
    a.state = q->state;
    a.state.applied_index = index;
    a.state.applied_term = term;
    if (term > q->state.applied_term) {
        a.state.term_base = q->state.applied_index;
    }
    rc = replication__quorum_transaction(q->db, apply_entry_cb, &a);
    if (rc != 0) {
        LOGF(&q->log, COMMON_LOG_ERROR, "quorum apply failed index=%llu rc=%d",
             (unsigned long long)index, rc);
        return rc;
    }
    q->state = a.state;
    release_flights(&a);
    return 0;
}

int replication_quorum_txn_status(struct replication_quorum *q,
                                  const uint8_t *txn_id, uint64_t *index,
                                  int *result)
{
    uint64_t found_index = 0;
    int found_result = 0;
    int rc;

    ASSERT(q != NULL);
    ASSERT(txn_id != NULL);
    ASSERT(index != NULL);
    ASSERT(result != NULL);
    rc = txn_lookup(q->db, txn_id, &found_index, &found_result);
    if (rc == 0) {
        *index = found_index;
        *result = found_result;
    }
    return rc;
}
